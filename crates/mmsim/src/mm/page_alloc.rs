//! The buddy allocator, its per-cpu lists, watermarks and the allocation slow path
//! (`mm/page_alloc.c`, 3.9; `kernel-reclaim.md` §2.1-§2.4, `kernel-compaction.md` §2.2).
//!
//! Order-0 pages are freed to and allocated from the current CPU's lists (`pageset`);
//! `free_pcppages_bulk` and `rmqueue_bulk` move `batch` pages at a time between those and
//! the buddy lists, so a freed page neither counts as free nor merges until its CPU's
//! lists overflow or are drained (after a failed direct reclaim on every CPU, after direct
//! compaction on the compacting one).

use super::compaction::{self, CompactResult};
use super::migrate::MigrateMode;
use super::mmzone::{
    PerCpuPages, Zone, MAX_NR_ZONES, MAX_ORDER, MIGRATE_MOVABLE, MIGRATE_PCPTYPES,
    MIGRATE_RECLAIMABLE, MIGRATE_RESERVE, MIGRATE_UNMOVABLE, PAGEBLOCK_NR_PAGES, PAGEBLOCK_ORDER,
    WMARK_HIGH, WMARK_LOW, WMARK_MIN, ZONE_DMA32, ZONE_NORMAL,
};
use super::page::{Pages, Pfn, LRU_MASK, PG_BUDDY, PG_PCP, PG_RESERVED};
use super::vmstat::{VmEvent, ZoneStat};
use super::{oom_kill, vmscan, Gfp, Kernel, World};
use crate::calibration::{KERNEL_RESERVED_BYTES, PAGE_SIZE, STRUCT_PAGE_BYTES};
use crate::engine::{self, HZ_50};
use crate::presets::Switch;

/// Frames below 16 MiB are ZONE_DMA.
pub const DMA_END_PFN: u64 = (16 << 20) / PAGE_SIZE;
/// Frames below 4 GiB are ZONE_DMA32 (or DMA).
pub const DMA32_END_PFN: u64 = (4u64 << 30) / PAGE_SIZE;

/// `PAGE_ALLOC_COSTLY_ORDER`: requests above it may fail rather than retry for ever.
pub const PAGE_ALLOC_COSTLY_ORDER: u32 = 3;

/// Allocation flags (`ALLOC_*`), internal to the allocator.
pub mod alloc_flags {
    pub const WMARK_MIN: u32 = 0;
    pub const WMARK_LOW: u32 = 1;
    pub const WMARK_HIGH: u32 = 2;
    pub const NO_WATERMARKS: u32 = 4;
    pub const WMARK_MASK: u32 = 3;
    pub const HARDER: u32 = 0x10;
    pub const HIGH: u32 = 0x20;
}
use alloc_flags as af;

/// Lay out the zones of a machine with `ram_pages` frames, `hole_pages` of which the MMIO
/// hole pushes above 4 GiB: spans, then managed pages after taking out each zone's share of
/// the memmap and the kernel's boot reservation (taken from the lowest zones above DMA
/// first, as early boot allocations are). Frames are numbered without the hole.
pub fn build_zones(ram_pages: u64, hole_pages: u64) -> [Zone; MAX_NR_ZONES] {
    let dma_end = ram_pages.min(DMA_END_PFN);
    let dma32_end = ram_pages.min(DMA32_END_PFN.saturating_sub(hole_pages).max(dma_end));
    let mut zones = [
        Zone::new(0, 0, dma_end as Pfn),
        Zone::new(1, dma_end as Pfn, dma32_end as Pfn),
        Zone::new(2, dma32_end as Pfn, ram_pages as Pfn),
    ];
    let mut kernel_pages = KERNEL_RESERVED_BYTES / PAGE_SIZE;
    for z in zones.iter_mut() {
        let memmap = (z.present_pages * STRUCT_PAGE_BYTES).div_ceil(PAGE_SIZE);
        let mut managed = z.present_pages.saturating_sub(memmap);
        if z.idx == 0 {
            // The first frame is never handed out (BIOS data).
            managed = managed.saturating_sub(1);
        } else {
            let k = kernel_pages.min(managed / 2);
            managed -= k;
            kernel_pages -= k;
        }
        z.managed_pages = managed;
    }
    zones
}

/// MemTotal of a machine with `ram_pages` frames, in pages. Where the MMIO hole puts the
/// DMA32/Normal boundary does not change it: the memmap and the boot reservation are the
/// same frames in total.
pub fn mem_total_pages(ram_pages: u64) -> u64 {
    build_zones(ram_pages, 0)
        .iter()
        .map(|z| z.managed_pages)
        .sum()
}

/// Integer square root (`int_sqrt`).
pub fn int_sqrt(x: u64) -> u64 {
    if x == 0 {
        return 0;
    }
    let mut r = (x as f64).sqrt() as u64;
    while r * r > x {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= x {
        r += 1;
    }
    r
}

/// The boot-time `min_free_kbytes` (`init_per_zone_wmark_min`): sqrt(16 x lowmem KiB),
/// clamped to 128..65536. At boot the high watermarks are still 0, so "lowmem" is every
/// managed page of the zones up to Normal.
pub fn calculate_min_free_kbytes(zones: &[Zone]) -> u64 {
    let lowmem_kbytes: u64 = zones.iter().map(|z| z.managed_pages).sum::<u64>() * (PAGE_SIZE >> 10);
    int_sqrt(lowmem_kbytes * 16).clamp(128, 65536)
}

/// `__setup_per_zone_wmarks`: split `min_free_kbytes` between zones in proportion to their
/// managed pages; low = min + min/4, high = min + min/2 (of each zone's share).
pub fn setup_per_zone_wmarks(zones: &mut [Zone], min_free_kbytes: u64) {
    let pages_min = min_free_kbytes >> (PAGE_SIZE.trailing_zeros() - 10);
    let lowmem_pages: u64 = zones.iter().map(|z| z.managed_pages).sum();
    for z in zones.iter_mut() {
        let tmp = (pages_min * z.managed_pages)
            .checked_div(lowmem_pages)
            .unwrap_or(0);
        z.watermark[WMARK_MIN] = tmp;
        z.watermark[WMARK_LOW] = tmp + tmp / 4;
        z.watermark[WMARK_HIGH] = tmp + tmp / 2;
    }
}

/// A write to `/proc/sys/vm/min_free_kbytes` (`min_free_kbytes_sysctl_handler`): new
/// watermarks, and the MIGRATE_RESERVE pageblocks follow the new min watermark.
pub fn set_min_free_kbytes(k: &mut Kernel, min_free_kbytes: u64) {
    k.min_free_kbytes = min_free_kbytes;
    setup_per_zone_wmarks(&mut k.zones, min_free_kbytes);
    let Kernel { pages, zones, .. } = k;
    for z in zones.iter_mut().filter(|z| z.populated()) {
        setup_zone_migrate_reserve(pages, z);
    }
}

/// `setup_per_zone_lowmem_reserve`: `zone[i].lowmem_reserve[j]` = managed pages of zones
/// i+1..=j divided by `ratio[i]`.
pub fn setup_per_zone_lowmem_reserve(zones: &mut [Zone], ratio: &[u32; 3]) {
    for j in 0..zones.len() {
        zones[j].lowmem_reserve[j] = 0;
        let mut pages = zones[j].managed_pages;
        for i in (0..j).rev() {
            let r = ratio[i].max(1) as u64;
            zones[i].lowmem_reserve[j] = pages / r;
            pages += zones[i].managed_pages;
        }
    }
}

/// `calculate_zone_inactive_ratio`: isqrt(10 x GiB), at least 1.
pub fn setup_inactive_ratio(zones: &mut [Zone]) {
    for z in zones.iter_mut() {
        let gb = (z.managed_pages * PAGE_SIZE) >> 30;
        z.inactive_ratio = if gb > 0 { int_sqrt(10 * gb) } else { 1 };
    }
}

/// Hand every managed frame of every zone to the buddy allocator; frames beyond `managed`
/// at the start of each zone stay reserved (memmap and boot allocations). Every pageblock
/// is MOVABLE at boot, so the blocks go on the MOVABLE lists.
pub fn free_boot_memory(pages: &mut Pages, zones: &mut [Zone]) {
    for z in zones.iter_mut() {
        let reserved = z.present_pages - z.managed_pages;
        let mut pfn = z.start_pfn as u64 + reserved;
        let end = z.end_pfn as u64;
        while pfn < end {
            let mut order = 0;
            while order + 1 < MAX_ORDER
                && pfn.is_multiple_of(1 << (order + 1))
                && pfn + (1 << (order + 1)) <= end
            {
                order += 1;
            }
            for p in pfn..pfn + (1 << order) {
                pages.flags[p as usize] = 0;
            }
            let mt = z.pageblock_migratetype(pfn as Pfn);
            free_block(pages, z, pfn as Pfn, order, mt);
            pfn += 1 << order;
        }
    }
}

/// `allocflags_to_migratetype`: `__GFP_MOVABLE` and `__GFP_RECLAIMABLE` as the migrate
/// type's two bits (page cache and anonymous memory are movable, the slab's dentries,
/// inodes and buffer heads reclaimable, page tables and the rest unmovable).
#[inline]
pub fn gfp_migratetype(gfp: Gfp) -> usize {
    (usize::from(gfp.has(Gfp::MOVABLE)) << 1) + usize::from(gfp.has(Gfp::RECLAIMABLE))
}

/// Whether `pfn` heads a free block of `order` in zone `z` (`page_is_buddy`).
#[inline]
fn page_is_buddy(pages: &Pages, z: &Zone, pfn: u64, order: usize) -> bool {
    pfn >= z.start_pfn as u64
        && pfn + (1 << order) <= z.end_pfn as u64
        && pages.flags[pfn as usize] & PG_BUDDY != 0
        && pages.mapping[pfn as usize] == order as u32
}

/// The free list a free block's head is on: mmsim keeps its migrate type in the bits that
/// hold the LRU list of a page in use (`set_freepage_migratetype` keeps it in `index`).
#[inline]
pub fn freepage_migratetype(pages: &Pages, pfn: Pfn) -> usize {
    (pages.flags[pfn as usize] & LRU_MASK) as usize
}

/// Put free block `pfn` of `order` on `free_list[mt]` (`set_page_order`,
/// `set_freepage_migratetype`).
#[inline]
fn add_to_free_list(
    pages: &mut Pages,
    z: &mut Zone,
    pfn: Pfn,
    order: usize,
    mt: usize,
    tail: bool,
) {
    pages.flags[pfn as usize] = PG_BUDDY + mt as u32;
    pages.mapping[pfn as usize] = order as u32;
    let area = &mut z.free_area[order];
    if tail {
        area.free_list[mt].add_tail(pages, pfn);
    } else {
        area.free_list[mt].add(pages, pfn);
    }
    area.nr_free += 1;
}

/// Take free block `pfn` of `order` off the free list it is on.
#[inline]
fn del_from_free_list(pages: &mut Pages, z: &mut Zone, pfn: Pfn, order: usize) {
    let mt = freepage_migratetype(pages, pfn);
    let area = &mut z.free_area[order];
    area.free_list[mt].del(pages, pfn);
    area.nr_free -= 1;
    pages.flags[pfn as usize] = 0;
}

/// `__free_one_page`: put a block on `free_list[mt]`, merging with its buddies whatever
/// list they are on. The merged block goes to the tail when the buddy of the next larger
/// block is free too (it is likely to merge again soon, 2.6.35+), else to the head.
fn free_block(pages: &mut Pages, z: &mut Zone, pfn: Pfn, order: usize, mt: usize) {
    let mut pfn = pfn as u64;
    let mut order = order;
    z.mod_stat(ZoneStat::nr_free_pages, 1 << order);
    while order < MAX_ORDER - 1 {
        let buddy = pfn ^ (1 << order);
        if !page_is_buddy(pages, z, buddy, order) {
            break;
        }
        del_from_free_list(pages, z, buddy as Pfn, order);
        pfn &= !(1 << order);
        order += 1;
    }
    let tail = order < MAX_ORDER - 2 && {
        let combined = pfn & !(1 << order);
        let higher_buddy = combined ^ (1 << (order + 1));
        page_is_buddy(pages, z, higher_buddy, order + 1)
    };
    add_to_free_list(pages, z, pfn as Pfn, order, mt, tail);
}

/// `expand`: split block `pfn` of order `high` down to `low`, the upper halves going to the
/// head of `free_list[mt]` at each order.
#[inline]
fn expand(pages: &mut Pages, z: &mut Zone, pfn: Pfn, low: usize, high: usize, mt: usize) {
    let mut size = high;
    while size > low {
        size -= 1;
        add_to_free_list(pages, z, pfn + (1 << size), size, mt, false);
    }
}

/// Take free block `pfn` of `order` off its free list whole, out of the free count
/// (`split_free_page`'s unlinking; the caller owns its frames).
pub fn take_free_block(pages: &mut Pages, z: &mut Zone, pfn: Pfn, order: usize) {
    del_from_free_list(pages, z, pfn, order);
    z.mod_stat(ZoneStat::nr_free_pages, -(1i64 << order));
}

/// `capture_free_page` (seed 004's patch 3): take free block `pfn` of order `o` off its
/// list for an allocation of `order`, the rest going back on `free_list[mt]` (`expand`).
pub fn capture_free_block(
    pages: &mut Pages,
    z: &mut Zone,
    pfn: Pfn,
    o: usize,
    order: usize,
    mt: usize,
) {
    del_from_free_list(pages, z, pfn, o);
    expand(pages, z, pfn, order, o, mt);
    z.mod_stat(ZoneStat::nr_free_pages, -(1i64 << order));
}

/// `__rmqueue_smallest`: the first block of `free_list[mt]` at the smallest order that has
/// one, split down to `order`.
fn rmqueue_smallest(pages: &mut Pages, z: &mut Zone, order: usize, mt: usize) -> Option<Pfn> {
    for current in order..MAX_ORDER {
        let head = z.free_area[current].free_list[mt].head;
        if head == super::page::NIL {
            continue;
        }
        del_from_free_list(pages, z, head, current);
        expand(pages, z, head, order, current, mt);
        return Some(head);
    }
    None
}

/// `fallbacks[]`: the lists each type may steal from, in order of preference.
const FALLBACKS: [[usize; 2]; 3] = [
    [MIGRATE_RECLAIMABLE, MIGRATE_MOVABLE],
    [MIGRATE_UNMOVABLE, MIGRATE_MOVABLE],
    [MIGRATE_RECLAIMABLE, MIGRATE_UNMOVABLE],
];

/// `move_freepages_block`: move every free block inside `pfn`'s pageblock to
/// `free_list[mt]`. Returns the pages moved; 0 if the pageblock is not wholly in the zone.
pub fn move_freepages_block(pages: &mut Pages, z: &mut Zone, pfn: Pfn, mt: usize) -> u64 {
    let start = pfn as u64 & !(PAGEBLOCK_NR_PAGES - 1);
    let end = start + PAGEBLOCK_NR_PAGES;
    if start < z.start_pfn as u64 || end > z.end_pfn as u64 {
        return 0;
    }
    let mut moved = 0;
    let mut p = start;
    while p < end {
        if pages.flags[p as usize] & PG_BUDDY == 0 {
            p += 1;
            continue;
        }
        let order = pages.mapping[p as usize] as usize;
        let from = freepage_migratetype(pages, p as Pfn);
        let area = &mut z.free_area[order];
        area.free_list[from].del(pages, p as Pfn);
        area.free_list[mt].add(pages, p as Pfn);
        pages.flags[p as usize] = PG_BUDDY + mt as u32;
        moved += 1 << order;
        p += 1 << order;
    }
    moved
}

/// `__rmqueue_fallback`: steal the largest free block of another type. A large block
/// (order ≥ pageblock_order / 2), or any block for a RECLAIMABLE request, brings the rest
/// of its pageblock's free pages along, and the pageblock changes type when they are at
/// least half of it; a block of a whole pageblock or more changes type outright. A small
/// block for a request that is not reclaimable is split onto the list it came from.
fn rmqueue_fallback(pages: &mut Pages, z: &mut Zone, order: usize, start_mt: usize) -> Option<Pfn> {
    for current in (order..MAX_ORDER).rev() {
        for &mt in &FALLBACKS[start_mt] {
            let head = z.free_area[current].free_list[mt].head;
            if head == super::page::NIL {
                continue;
            }
            // A small block taken for a request that is not reclaimable leaves its buddies
            // on the other type's list, so the next request steals again, maybe elsewhere.
            let mut split_mt = mt;
            if current >= PAGEBLOCK_ORDER / 2 || start_mt == MIGRATE_RECLAIMABLE {
                let moved = move_freepages_block(pages, z, head, start_mt);
                if moved >= 1 << (PAGEBLOCK_ORDER - 1) {
                    z.set_pageblock_migratetype(head, start_mt);
                }
                split_mt = start_mt;
            }
            del_from_free_list(pages, z, head, current);
            if current >= PAGEBLOCK_ORDER {
                for b in 0..1u32 << (current - PAGEBLOCK_ORDER) {
                    z.set_pageblock_migratetype(head + (b << PAGEBLOCK_ORDER), start_mt);
                }
            }
            expand(pages, z, head, order, current, split_mt);
            return Some(head);
        }
    }
    None
}

/// `__rmqueue`: a block of `order` for migrate type `mt`: its own lists, then another type's
/// (`__rmqueue_fallback`), then the reserve.
fn rmqueue(pages: &mut Pages, z: &mut Zone, order: usize, mt: usize) -> Option<Pfn> {
    let pfn = rmqueue_smallest(pages, z, order, mt)
        .or_else(|| rmqueue_fallback(pages, z, order, mt))
        .or_else(|| rmqueue_smallest(pages, z, order, MIGRATE_RESERVE))?;
    z.mod_stat(ZoneStat::nr_free_pages, -(1i64 << order));
    Some(pfn)
}

/// `zone_batchsize` (3.9): about a thousandth of the zone, at most 512 KiB, quartered and
/// rounded down to `2^n - 1` (which was found to alias less in the CPU caches).
pub fn zone_batchsize(z: &Zone) -> u32 {
    let mut batch = (z.present_pages / 1024).min((512 << 10) / PAGE_SIZE);
    batch = (batch / 4).max(1);
    let b = batch + batch / 2;
    (1u64 << (63 - b.leading_zeros())) as u32 - 1
}

/// `setup_per_cpu_pageset`: every populated zone gets a pageset per CPU with `high = 6 x
/// batch` and `batch` at least 1 (a zone too small for lists, DMA's, has `high` 0, so each
/// free goes through to the buddy lists at once).
pub fn setup_zone_pageset(zones: &mut [Zone], cpus: u32) {
    for z in zones.iter_mut().filter(|z| z.populated()) {
        let batch = zone_batchsize(z);
        z.pcp_high = 6 * batch;
        z.pcp_batch = batch.max(1);
        // Room for a list at `high` plus a refill, so no list grows while the run goes on.
        // (Each CPU's is made apart: a cloned VecDeque keeps its length, not its capacity.)
        let cap = (z.pcp_high + z.pcp_batch + 1) as usize;
        z.pageset = (0..cpus.max(1))
            .map(|_| PerCpuPages {
                count: 0,
                lists: std::array::from_fn(|_| std::collections::VecDeque::with_capacity(cap)),
            })
            .collect();
    }
}

/// `setup_zone_migrate_reserve`: make the first `min(2, min watermark in pageblocks)`
/// MOVABLE pageblocks of the zone that hold no reserved frame MIGRATE_RESERVE, and give
/// back any reserve beyond that.
pub fn setup_zone_migrate_reserve(pages: &mut Pages, z: &mut Zone) {
    let mut reserve = z.min_wmark().div_ceil(PAGEBLOCK_NR_PAGES).min(2);
    let mut pfn = (z.start_pfn as u64).next_multiple_of(PAGEBLOCK_NR_PAGES);
    while pfn < z.end_pfn as u64 {
        let block = pfn as Pfn;
        let frames = pfn..(pfn + PAGEBLOCK_NR_PAGES).min(z.end_pfn as u64);
        pfn += PAGEBLOCK_NR_PAGES;
        let mt = z.pageblock_migratetype(block);
        if reserve > 0 && mt == MIGRATE_RESERVE {
            reserve -= 1;
            continue;
        }
        // Blocks with reserved frames never come free.
        if frames
            .into_iter()
            .any(|p| pages.flags[p as usize] & PG_RESERVED != 0)
        {
            continue;
        }
        if reserve > 0 && mt == MIGRATE_MOVABLE {
            z.set_pageblock_migratetype(block, MIGRATE_RESERVE);
            move_freepages_block(pages, z, block, MIGRATE_RESERVE);
            reserve -= 1;
        } else if mt == MIGRATE_RESERVE {
            z.set_pageblock_migratetype(block, MIGRATE_MOVABLE);
            move_freepages_block(pages, z, block, MIGRATE_MOVABLE);
        }
    }
}

/// `__zone_watermark_ok` (`kernel-reclaim.md` §2.2).
pub fn zone_watermark_ok(z: &Zone, order: u32, mark: u64, classzone: usize, flags: u32) -> bool {
    zone_watermark_ok_free(z, order, mark, classzone, flags, z.free_pages() as i64)
}

fn zone_watermark_ok_free(
    z: &Zone,
    order: u32,
    mark: u64,
    classzone: usize,
    flags: u32,
    free: i64,
) -> bool {
    let mut free = free - ((1i64 << order) - 1);
    let mut min = mark as i64;
    if flags & af::HIGH != 0 {
        min -= min / 2;
    }
    if flags & af::HARDER != 0 {
        min -= min / 4;
    }
    if free <= min + z.lowmem_reserve[classzone] as i64 {
        return false;
    }
    for o in 0..order as usize {
        free -= (z.free_area[o].nr_free as i64) << o;
        min >>= 1;
        if free <= min {
            return false;
        }
    }
    true
}

/// The zones an allocation with `gfp` may use, in zonelist order (highest first), and its
/// class zone (the preferred zone's index).
pub fn zonelist(k: &Kernel, _gfp: Gfp) -> (usize, [usize; MAX_NR_ZONES], usize) {
    // x86-64 has no highmem: every mask the model uses may take zones up to Normal.
    let high = ZONE_NORMAL;
    let mut list = [0; MAX_NR_ZONES];
    let mut n = 0;
    for i in (0..=high).rev() {
        if k.zones[i].populated() {
            list[n] = i;
            n += 1;
        }
    }
    let classzone = if n > 0 { list[0] } else { ZONE_DMA32 };
    (classzone, list, n)
}

/// `get_page_from_freelist`: the first zone in zonelist order that passes the watermark
/// named by `flags`.
pub fn get_page_from_freelist(k: &mut Kernel, gfp: Gfp, order: u32, flags: u32) -> Option<Pfn> {
    // The zonelist's zones, walked in place (building the list as an array and copying it
    // out cost a store-forwarding stall on every allocation).
    let classzone = (0..=ZONE_NORMAL)
        .rev()
        .find(|&zi| k.zones[zi].populated())
        .unwrap_or(ZONE_DMA32);
    for zi in (0..=ZONE_NORMAL).rev() {
        if !k.zones[zi].populated() {
            continue;
        }
        // 3.3+ (a756cf59): on the fast path, a page-cache page for writing skips a zone
        // already holding its share of the dirty limit, so dirty pages spread over zones in
        // proportion. The 2.6.37 base (3.0's presets too) fills zones in zonelist order.
        if flags & af::WMARK_MASK == af::WMARK_LOW
            && gfp.has(Gfp::WRITE)
            && !k.writeback_2_6_37()
            && !zone_dirty_ok(k, zi)
        {
            continue;
        }
        let z = &k.zones[zi];
        if flags & af::NO_WATERMARKS == 0 {
            let mark = z.watermark[(flags & af::WMARK_MASK) as usize];
            if !zone_watermark_ok(z, order, mark, classzone, flags) {
                continue;
            }
        }
        if let Some(pfn) = buffered_rmqueue(k, zi, order, gfp) {
            k.count(VmEvent::pgalloc_dma.zone(zi), 1 << order);
            return Some(pfn);
        }
    }
    None
}

/// `buffered_rmqueue`: an order-0 page from the head (hot) or tail (`__GFP_COLD`) of this
/// CPU's list of its migrate type, refilled by `rmqueue_bulk` when empty; a larger block
/// from the buddy lists.
fn buffered_rmqueue(k: &mut Kernel, zi: usize, order: u32, gfp: Gfp) -> Option<Pfn> {
    let mt = gfp_migratetype(gfp);
    let cpu = k.sched.this_cpu() as usize;
    if order > 0 || cpu >= k.zones[zi].pageset.len() {
        let Kernel { pages, zones, .. } = k;
        let pfn = rmqueue(pages, &mut zones[zi], order as usize, mt)?;
        super::trace::mm_page_alloc_zone_locked(k, pfn, order, mt);
        return Some(pfn);
    }
    let cold = gfp.has(Gfp::COLD);
    if k.zones[zi].pageset[cpu].lists[mt].is_empty() {
        rmqueue_bulk(k, zi, cpu, mt, cold);
    }
    let pcp = &mut k.zones[zi].pageset[cpu];
    let list = &mut pcp.lists[mt];
    let (pfn, _) = if cold {
        list.pop_back()
    } else {
        list.pop_front()
    }?;
    pcp.count -= 1;
    k.pages.flags[pfn as usize] = 0;
    Some(pfn)
}

/// `rmqueue_bulk`: `batch` order-0 pages of `mt` (or its fallbacks) from the buddy lists
/// onto this CPU's empty list, in the order they were taken, so the next allocation, hot or
/// cold, gets the first.
fn rmqueue_bulk(k: &mut Kernel, zi: usize, cpu: usize, mt: usize, cold: bool) {
    for _ in 0..k.zones[zi].pcp_batch {
        let Kernel { pages, zones, .. } = k;
        let z = &mut zones[zi];
        let Some(pfn) = rmqueue(pages, z, 0, mt) else {
            break;
        };
        pages.flags[pfn as usize] = PG_PCP;
        // Each page after the one before: a cold batch is laid from the tail inwards.
        z.pageset[cpu].add(mt, pfn, mt, !cold);
        super::trace::mm_page_alloc_zone_locked(k, pfn, 0, mt);
    }
}

/// `free_pcppages_bulk`: `count` pages of CPU `cpu`'s lists back to the buddy lists, from
/// the tails, visiting the lists round-robin and taking more from a list the more empty
/// ones were passed on the way to it. A zone that gets pages back is reclaimable again.
fn free_pcppages_bulk(k: &mut Kernel, zi: usize, cpu: usize, count: u32) {
    let count = count.min(k.zones[zi].pageset[cpu].count);
    let (mut mt, mut batch_free, mut to_free) = (0usize, 0u32, count);
    {
        let z = &mut k.zones[zi];
        z.all_unreclaimable = false;
        z.pages_scanned = 0;
    }
    while to_free > 0 {
        loop {
            batch_free += 1;
            mt = (mt + 1) % MIGRATE_PCPTYPES;
            if !k.zones[zi].pageset[cpu].lists[mt].is_empty() {
                break;
            }
        }
        // The only list with pages: free them all.
        if batch_free == MIGRATE_PCPTYPES as u32 {
            batch_free = to_free;
        }
        loop {
            let Kernel { pages, zones, .. } = k;
            let z = &mut zones[zi];
            let (pfn, page_mt) = z.pageset[cpu].lists[mt]
                .pop_back()
                .expect("a list with pages");
            z.pageset[cpu].count -= 1;
            pages.flags[pfn as usize] = 0;
            free_block(pages, z, pfn, 0, page_mt as usize);
            super::trace::mm_page_pcpu_drain(k, pfn, page_mt as usize);
            to_free -= 1;
            batch_free -= 1;
            if to_free == 0 || batch_free == 0 || k.zones[zi].pageset[cpu].lists[mt].is_empty() {
                break;
            }
        }
    }
}

/// `drain_pages`: every zone's lists of one CPU back to the buddy lists.
pub fn drain_pages(k: &mut Kernel, cpu: usize) {
    for zi in 0..MAX_NR_ZONES {
        let count = k.zones[zi].pageset.get(cpu).map_or(0, |p| p.count);
        if count > 0 {
            free_pcppages_bulk(k, zi, cpu, count);
        }
    }
}

/// `drain_all_pages`: [`drain_pages`] on every CPU.
pub fn drain_all_pages(k: &mut Kernel) {
    for cpu in 0..k.sched.cpus() as usize {
        drain_pages(k, cpu);
    }
}

/// `zone_dirtyable_memory` (3.3-3.13): free plus reclaimable pages, less the zone's
/// `dirty_balance_reserve` (high watermark + largest lowmem reserve).
pub fn zone_dirtyable_memory(k: &Kernel, zi: usize) -> u64 {
    let z = &k.zones[zi];
    let reserve = super::page_writeback::ZoneReserve::of(z).pages();
    let pages = z.free_pages() + vmscan::zone_reclaimable_pages(k, zi);
    pages - pages.min(reserve)
}

/// `zone_dirty_limit`: the zone's share of the dirty limit (`kernel-writeback.md` §2.1).
pub fn zone_dirty_limit(k: &Kernel, zi: usize) -> u64 {
    let zone_memory = zone_dirtyable_memory(k, zi);
    let d = &k.vm.dirty;
    if d.dirty_bytes > 0 {
        let global = super::page_writeback::global_dirtyable(k).max(1);
        (d.dirty_bytes.div_ceil(PAGE_SIZE) as u128 * zone_memory as u128 / global as u128) as u64
    } else {
        d.dirty_ratio as u64 * zone_memory / 100
    }
}

/// `zone_dirty_ok`: dirty, unstable and writeback pages within the zone's limit.
pub fn zone_dirty_ok(k: &Kernel, zi: usize) -> bool {
    let z = &k.zones[zi];
    let dirty =
        z.stat(ZoneStat::nr_dirty) + z.stat(ZoneStat::nr_unstable) + z.stat(ZoneStat::nr_writeback);
    dirty <= zone_dirty_limit(k, zi)
}

/// Free one order-0 page (`free_hot_cold_page`) to the head of this CPU's list. The caller
/// has taken it off every list and cleared its state.
pub fn free_page(k: &mut Kernel, pfn: Pfn) {
    free_hot_cold_page(k, pfn, false);
}

/// `free_hot_cold_page`: an order-0 page to the head (hot) or tail (cold) of this CPU's
/// list for its pageblock's type (RESERVE pages on the movable list), trimming the lists
/// by a batch when they reach `high`.
fn free_hot_cold_page(k: &mut Kernel, pfn: Pfn, cold: bool) {
    debug_assert!(
        k.pages.flags[pfn as usize] & !super::page::PG_UPTODATE == 0,
        "freeing pfn {pfn} with flags {:#x}",
        k.pages.flags[pfn as usize]
    );
    super::trace::mm_page_free(k, pfn, 0);
    super::memcontrol::uncharge_page(k, pfn);
    k.pages.flags[pfn as usize] = 0;
    k.pages.mapping[pfn as usize] = 0;
    k.pages.private[pfn as usize] = 0;
    let zi = k.page_zone(pfn);
    super::huge_memory::free_huge_page_frame(k, zi, pfn);
    let cpu = k.sched.this_cpu() as usize;
    if cpu >= k.zones[zi].pageset.len() {
        return free_one_page(k, pfn, 0);
    }
    k.count(VmEvent::pgfree, 1);
    let z = &mut k.zones[zi];
    let mt = z.pageblock_migratetype(pfn);
    let list = if mt >= MIGRATE_PCPTYPES {
        MIGRATE_MOVABLE
    } else {
        mt
    };
    k.pages.flags[pfn as usize] = PG_PCP;
    let pcp = &mut z.pageset[cpu];
    pcp.add(list, pfn, mt, cold);
    if pcp.count >= z.pcp_high {
        let batch = z.pcp_batch;
        free_pcppages_bulk(k, zi, cpu, batch);
    }
}

/// `free_one_page`: a block back on the free list of its pageblock's type; a free resets
/// the zone's reclaim failure state.
#[inline]
fn free_one_page(k: &mut Kernel, pfn: Pfn, order: u32) {
    let zi = k.page_zone(pfn);
    let Kernel { pages, zones, .. } = k;
    let z = &mut zones[zi];
    z.all_unreclaimable = false;
    z.pages_scanned = 0;
    let mt = z.pageblock_migratetype(pfn);
    free_block(pages, z, pfn, order as usize, mt);
    k.count(VmEvent::pgfree, 1 << order);
}

/// A block kernel code held (`Kernel::held_blocks`) goes back to the buddy allocator.
pub fn free_held_block(k: &mut Kernel, pfn: Pfn, order: u32) {
    let at = k
        .held_blocks
        .iter()
        .position(|&b| b == (pfn, order))
        .expect("the block is held");
    k.held_blocks.swap_remove(at);
    free_pages(k, pfn, order);
}

/// Free a block of `2^order` pages the caller held outside the LRU (`__free_pages`); its
/// frames carry no state.
pub fn free_pages(k: &mut Kernel, pfn: Pfn, order: u32) {
    if order == 0 {
        return free_page(k, pfn);
    }
    super::trace::mm_page_free(k, pfn, order);
    for p in pfn..pfn + (1 << order) {
        debug_assert!(k.pages.flags[p as usize] == 0, "freeing pfn {p} with state");
        k.pages.mapping[p as usize] = 0;
        k.pages.private[p as usize] = 0;
    }
    free_one_page(k, pfn, order);
}

/// Free one order-0 page of a list (`free_hot_cold_page_list`): as [`free_page`], traced
/// as batched (reclaim's list is `cold`, `release_pages`' is not).
pub fn free_page_batched(k: &mut Kernel, pfn: Pfn, cold: bool) {
    super::trace::mm_page_free_batched(k, pfn, cold);
    free_hot_cold_page(k, pfn, cold);
}

/// Why an allocation gave up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllocError {
    /// The task was killed (chosen by the OOM killer, or sent SIGKILL); it must exit.
    Killed,
    /// The allocation may not wait and nothing was free (`!__GFP_WAIT`).
    NoMemory,
}

/// `wakeup_kswapd` for every zone of the zonelist (`kernel-reclaim.md` §2.4).
pub fn wake_all_kswapd(k: &mut Kernel, order: u32, classzone: usize, list: &[usize]) {
    for &zi in list {
        if !k.zones[zi].populated() {
            continue;
        }
        if k.pgdat.kswapd_max_order < order {
            k.pgdat.kswapd_max_order = order;
            k.pgdat.classzone_idx = k.pgdat.classzone_idx.min(classzone);
        }
        if !k.pgdat.kswapd_sleeping {
            continue;
        }
        let z = &k.zones[zi];
        if zone_watermark_ok(z, order, z.low_wmark(), 0, 0) {
            continue;
        }
        super::trace::mm_vmscan_wakeup_kswapd(k, zi, order);
        let q = k.wq.kswapd_wait;
        k.sched.wake_all(q);
    }
}

/// [`alloc_pages`]' fast path alone, for a caller that cannot wait: the page
/// `get_page_from_freelist` gives at the low watermark, traced as `alloc_pages` traces it.
/// `None`, with nothing changed, when that finds none: then `alloc_pages` must run.
pub fn alloc_pages_now(k: &mut Kernel, gfp: Gfp, order: u32) -> Option<Pfn> {
    let pfn = get_page_from_freelist(k, gfp, order, af::WMARK_LOW)?;
    super::trace::mm_page_alloc(k, Some(pfn), order, gfp);
    Some(pfn)
}

/// `__alloc_pages_nodemask` and `__alloc_pages_slowpath` (3.3-3.9, `kernel-compaction.md`
/// §3.2): fast path; wake kswapd; min watermark; async compaction; direct reclaim; retry
/// (orders 0..3 always); else one sync-light compaction and fail.
pub async fn alloc_pages(w: &World, gfp: Gfp, order: u32) -> Result<Pfn, AllocError> {
    let r = alloc_pages_slowpath(w, gfp, order).await;
    super::trace::mm_page_alloc(&mut w.borrow_mut(), r.ok(), order, gfp);
    r
}

/// `__alloc_pages_direct_compact` (§3.3): compact for `order` unless the preferred zone
/// defers it, then try the freelists. Returns the page, whether compaction was deferred, and
/// whether it backed out on contention.
async fn alloc_pages_direct_compact(
    w: &World,
    gfp: Gfp,
    order: u32,
    flags: u32,
    preferred: usize,
    mode: MigrateMode,
) -> (Option<Pfn>, bool, bool) {
    if order == 0 {
        return (None, false, false);
    }
    if compaction::compaction_deferred(&mut w.borrow_mut(), preferred, order) {
        return (None, true, false);
    }
    let dc = compaction::try_to_compact_pages(w, gfp, order, mode).await;
    if dc.result == CompactResult::Skipped {
        return (None, false, dc.contended);
    }
    let mut k = w.borrow_mut();
    let page = match dc.captured {
        // A captured block skips the freelists and their watermark.
        Some(pfn) => Some(pfn),
        None => get_page_after_compaction(&mut k, gfp, order, flags),
    };
    if let Some(pfn) = page {
        compaction::compaction_succeeded(&mut k.zones[preferred], order);
        k.count(VmEvent::compact_success, 1);
        return (Some(pfn), false, dc.contended);
    }
    k.count(VmEvent::compact_fail, 1);
    // Only sync compaction failing defers: async gives up too easily to say much.
    if mode != MigrateMode::Async {
        compaction::defer_compaction(&mut k.zones[preferred], order);
    }
    (None, false, dc.contended)
}

/// `__alloc_pages_direct_compact`'s attempt: migration freed the old pages to this CPU's
/// lists, so they are drained (only this CPU's) to merge before the freelists are tried.
fn get_page_after_compaction(k: &mut Kernel, gfp: Gfp, order: u32, flags: u32) -> Option<Pfn> {
    let cpu = k.sched.this_cpu() as usize;
    drain_pages(k, cpu);
    get_page_from_freelist(k, gfp, order, flags & !af::NO_WATERMARKS)
}

/// `__alloc_pages_direct_reclaim`'s attempt after progress: the reclaimed pages may sit on
/// the CPUs' lists, so a failure drains every CPU's and tries once more.
fn get_page_after_reclaim(k: &mut Kernel, gfp: Gfp, order: u32, flags: u32) -> Option<Pfn> {
    get_page_from_freelist(k, gfp, order, flags).or_else(|| {
        drain_all_pages(k);
        get_page_from_freelist(k, gfp, order, flags)
    })
}

/// `should_alloc_retry`: small orders retry for ever; larger ones only with `__GFP_REPEAT`
/// until they have reclaimed as many pages as they ask for.
fn should_alloc_retry(gfp: Gfp, order: u32, pages_reclaimed: u64) -> bool {
    if gfp.has(Gfp::NORETRY) {
        return false;
    }
    if order <= PAGE_ALLOC_COSTLY_ORDER {
        return true;
    }
    gfp.has(Gfp::REPEAT) && pages_reclaimed < 1 << order
}

/// Whether an allocation whose compaction was deferred or contended fails instead of
/// reclaiming: one "that does not heavily disrupt the system", `__GFP_NO_KSWAPD` (THP's)
/// in releases, a movable one without `__GFP_REPEAT` under c6543459.
fn gives_up_before_reclaim(k: &Kernel, gfp: Gfp) -> bool {
    if k.sw.on(Switch::RemoveGfpNoKswapd) {
        gfp.0 & (Gfp::MOVABLE | Gfp::REPEAT) == Gfp::MOVABLE
    } else {
        gfp.has(Gfp::NO_KSWAPD)
    }
}

async fn alloc_pages_slowpath(w: &World, gfp: Gfp, order: u32) -> Result<Pfn, AllocError> {
    let preferred;
    {
        let mut k = w.borrow_mut();
        if let Some(pfn) = get_page_from_freelist(&mut k, gfp, order, af::WMARK_LOW) {
            return Ok(pfn);
        }
        preferred = zonelist(&k, gfp).0;
    }
    let mut migration = MigrateMode::Async;
    let mut pages_reclaimed = 0;
    'restart: loop {
        let mut flags = af::WMARK_MIN;
        {
            let mut k = w.borrow_mut();
            let (classzone, list, n) = zonelist(&k, gfp);
            if !gfp.has(Gfp::NO_KSWAPD) {
                wake_all_kswapd(&mut k, order, classzone, &list[..n]);
            }
            if gfp.has(Gfp::HIGH) {
                flags |= af::HIGH;
            }
            if !gfp.has(Gfp::WAIT) && !gfp.has(Gfp::NOMEMALLOC) {
                flags |= af::HARDER;
            }
        }
        loop {
            // rebalance:
            {
                let mut k = w.borrow_mut();
                if let Some(pfn) = get_page_from_freelist(&mut k, gfp, order, flags) {
                    return Ok(pfn);
                }
                if !gfp.has(Gfp::WAIT) {
                    return Err(AllocError::NoMemory);
                }
                let me = k.sched.current();
                if k.sched.is_killed(me) {
                    return Err(AllocError::Killed);
                }
            }
            let (page, deferred, contended) =
                alloc_pages_direct_compact(w, gfp, order, flags, preferred, migration).await;
            if let Some(pfn) = page {
                return Ok(pfn);
            }
            migration = MigrateMode::SyncLight;
            // A THP fault does not reclaim for a zone whose compaction is deferred, or
            // (c67fe375) when compaction backed out on contention; under c6543459 no
            // movable allocation does, but hugetlbfs's (__GFP_REPEAT).
            if (deferred || contended) && gives_up_before_reclaim(&w.borrow(), gfp) {
                return Err(AllocError::NoMemory);
            }
            // __alloc_pages_direct_reclaim
            let progress = vmscan::try_to_free_pages(w, gfp, order).await;
            let oom = {
                let mut k = w.borrow_mut();
                if progress > 0 {
                    if let Some(pfn) = get_page_after_reclaim(&mut k, gfp, order, flags) {
                        return Ok(pfn);
                    }
                    None
                } else if gfp.has(Gfp::FS) && !gfp.has(Gfp::NORETRY) {
                    // __alloc_pages_may_oom: one last try at the high watermark first; the
                    // OOM killer is for small orders only.
                    if let Some(pfn) = get_page_from_freelist(&mut k, gfp, order, af::WMARK_HIGH) {
                        return Ok(pfn);
                    }
                    if order > PAGE_ALLOC_COSTLY_ORDER {
                        return Err(AllocError::NoMemory);
                    }
                    Some(oom_kill::out_of_memory(&mut k, preferred))
                } else {
                    None
                }
            };
            if let Some(killed_someone) = oom {
                if !killed_someone {
                    // A victim is still exiting: give it a jiffy.
                    engine::sleep(w, engine::JIFFY).await;
                }
                continue 'restart;
            }
            pages_reclaimed += progress;
            if should_alloc_retry(gfp, order, pages_reclaimed) {
                vmscan::wait_iff_congested(w, preferred, HZ_50).await;
                continue;
            }
            // Reclaim then compact: one last sync compaction.
            let (page, _, _) =
                alloc_pages_direct_compact(w, gfp, order, flags, preferred, migration).await;
            return page.ok_or(AllocError::NoMemory);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibration::PAGE_SIZE;

    fn zones_for(gib: u64) -> [Zone; MAX_NR_ZONES] {
        let mut z = build_zones((gib << 30) / PAGE_SIZE, 0);
        let mfk = calculate_min_free_kbytes(&z);
        setup_per_zone_wmarks(&mut z, mfk);
        setup_per_zone_lowmem_reserve(&mut z, &[256, 256, 32]);
        z
    }

    /// c6543459: which allocations fail without direct reclaim once compaction is deferred
    /// or contended, and that THP's mask then wakes kswapd.
    #[test]
    fn removing_gfp_no_kswapd_makes_every_movable_allocation_but_hugetlbfs_give_up() {
        let thp = Gfp::TRANSHUGE;
        let plain = Gfp(Gfp::HIGHUSER_MOVABLE.0 | Gfp::NOWARN);
        let hugetlb = Gfp(Gfp::HIGHUSER_MOVABLE.0 | Gfp::COMP | Gfp::REPEAT);
        for (preset, removed) in [("3.9", false), ("3.6-rc1-akpm", true)] {
            let w = crate::sim::boot_for_test(64, 0, preset);
            let k = w.borrow();
            assert!(gives_up_before_reclaim(&k, thp), "{preset}: THP always");
            assert_eq!(gives_up_before_reclaim(&k, plain), removed, "{preset}");
            assert!(
                !gives_up_before_reclaim(&k, hugetlb),
                "{preset}: __GFP_REPEAT"
            );
            assert!(
                !gives_up_before_reclaim(&k, Gfp::KERNEL),
                "{preset}: unmovable"
            );
            let mask = crate::mm::huge_memory::thp_gfp(&k);
            assert_eq!(mask.has(Gfp::NO_KSWAPD), !removed, "{preset}");
            assert_eq!(
                mask.0 | Gfp::NO_KSWAPD,
                thp.0,
                "{preset}: nothing else changes"
            );
        }
    }

    #[test]
    fn the_mmio_hole_moves_the_dma32_end_down_and_keeps_memtotal() {
        let ram = (7336u64 << 20) / PAGE_SIZE;
        let gib = (1u64 << 30) / PAGE_SIZE;
        let flat = build_zones(ram, 0);
        let holed = build_zones(ram, gib);
        assert_eq!(flat[ZONE_DMA32].end_pfn as u64, DMA32_END_PFN);
        assert_eq!(holed[ZONE_DMA32].end_pfn as u64, DMA32_END_PFN - gib);
        assert_eq!(holed[ZONE_NORMAL].end_pfn as u64, ram, "the rest is Normal");
        for hole in [0, gib / 2, gib, 2 * gib] {
            let managed: u64 = build_zones(ram, hole).iter().map(|z| z.managed_pages).sum();
            assert_eq!(managed, mem_total_pages(ram), "hole of {hole} pages");
        }
        // A machine below the hole has no Normal zone whatever the hole.
        let small = build_zones(gib, gib);
        assert_eq!(small[ZONE_NORMAL].present_pages, 0);
    }

    /// The kernel's table in `init_per_zone_wmark_min`: 1 GiB → 4096k, 4 GiB → 8192k,
    /// 16 GiB → 16384k of lowmem. Managed memory is less than the nominal size (memmap 1.6%
    /// and the 64 MiB boot reservation: 92% of 1 GiB), so the result is up to 4% under the
    /// table value (the square root of 0.92).
    #[test]
    fn min_free_kbytes_follows_the_kernel_formula_for_1_4_and_16_gib() {
        for (gib, table) in [(1u64, 4096u64), (4, 8192), (16, 16384)] {
            let z = build_zones((gib << 30) / PAGE_SIZE, 0);
            let managed: u64 = z.iter().map(|z| z.managed_pages).sum();
            let expected = int_sqrt(managed * 4 * 16).clamp(128, 65536);
            let got = calculate_min_free_kbytes(&z);
            assert_eq!(got, expected, "{gib} GiB");
            assert!(
                got <= table && got * 100 >= table * 95,
                "{gib} GiB: {got} vs table {table}"
            );
        }
    }

    #[test]
    fn watermarks_split_min_by_managed_pages_with_low_and_high_at_five_and_six_quarters() {
        for gib in [1u64, 4, 16] {
            let z = zones_for(gib);
            let mfk = calculate_min_free_kbytes(&z);
            let pages_min = mfk / 4;
            let lowmem: u64 = z.iter().map(|z| z.managed_pages).sum();
            let mut sum_min = 0;
            for zone in z.iter() {
                let tmp = pages_min * zone.managed_pages / lowmem;
                assert_eq!(zone.min_wmark(), tmp);
                assert_eq!(zone.low_wmark(), tmp + tmp / 4);
                assert_eq!(zone.high_wmark(), tmp + tmp / 2);
                sum_min += zone.min_wmark();
            }
            // Rounding down loses at most one page per zone.
            assert!(pages_min - sum_min <= 3, "{gib} GiB");
        }
    }

    #[test]
    fn a_1_gib_machine_has_no_normal_zone_and_16_gib_has_a_12_gib_one() {
        let z = zones_for(1);
        assert!(!z[ZONE_NORMAL].populated());
        assert_eq!(z[0].present_pages, 4096);
        let z = zones_for(16);
        assert_eq!(z[ZONE_NORMAL].present_pages, (12u64 << 30) / PAGE_SIZE);
    }

    #[test]
    fn lowmem_reserve_protects_lower_zones_by_the_ratio() {
        let z = zones_for(16);
        let normal = z[ZONE_NORMAL].managed_pages;
        let dma32 = z[ZONE_DMA32].managed_pages;
        assert_eq!(z[ZONE_DMA32].lowmem_reserve[ZONE_NORMAL], normal / 256);
        assert_eq!(z[0].lowmem_reserve[ZONE_NORMAL], (normal + dma32) / 256);
        assert_eq!(z[0].lowmem_reserve[ZONE_DMA32], dma32 / 256);
        assert_eq!(z[ZONE_NORMAL].lowmem_reserve, [0, 0, 0]);
    }

    /// A write to `min_free_kbytes` sets new watermarks (min split by managed pages) and
    /// the MIGRATE_RESERVE pageblocks follow the new min watermark.
    #[test]
    fn writing_min_free_kbytes_moves_the_watermarks_and_the_reserve() {
        let w = crate::sim::boot_for_test(1024, 0, "3.9");
        let mut k = w.borrow_mut();
        let reserve = |k: &Kernel| -> Vec<usize> {
            k.zones
                .iter()
                .map(|z| {
                    let blocks =
                        (z.start_pfn as u64..z.end_pfn as u64).step_by(PAGEBLOCK_NR_PAGES as usize);
                    blocks
                        .filter(|&p| z.pageblock_migratetype(p as Pfn) == MIGRATE_RESERVE)
                        .count()
                })
                .collect()
        };
        let boot = k.min_free_kbytes;
        assert_eq!(reserve(&k)[ZONE_DMA32], 2, "{boot} KiB: two blocks");
        set_min_free_kbytes(&mut k, 1024);
        assert_eq!(k.min_free_kbytes, 1024);
        let mins: u64 = k.zones.iter().map(|z| z.min_wmark()).sum();
        assert!((250..=256).contains(&mins), "1024 KiB is 256 pages: {mins}");
        let z = &k.zones[ZONE_DMA32];
        assert_eq!(z.low_wmark(), z.min_wmark() + z.min_wmark() / 4);
        assert_eq!(reserve(&k)[ZONE_DMA32], 1, "one block holds a 1 MiB min");
        set_min_free_kbytes(&mut k, boot);
        assert_eq!(reserve(&k)[ZONE_DMA32], 2);
        crate::mm::invariants::check(&k).unwrap();
    }

    #[test]
    fn watermark_check_honours_the_reserve_and_high_order_free_lists() {
        let mut z = Zone::new(1, 0, 1024);
        z.managed_pages = 1024;
        z.vm_stat[ZoneStat::nr_free_pages as usize] = 100;
        z.lowmem_reserve = [0, 0, 50];
        z.free_area[0].nr_free = 100;
        assert!(zone_watermark_ok(&z, 0, 40, 1, 0));
        assert!(
            !zone_watermark_ok(&z, 0, 50, 2, 0),
            "reserve for a Normal class zone"
        );
        // All 100 free pages are order-0: an order-1 request sees none usable.
        assert!(!zone_watermark_ok(&z, 1, 10, 1, 0));
        // __GFP_HIGH halves the mark.
        assert!(zone_watermark_ok(&z, 0, 150, 1, af::HIGH));
    }

    /// A DMA32 zone with `free` free pages, no lowmem reserve, and `lens[o]` blocks on the
    /// order-`o` free lists (the counter and the lists need not agree for the test).
    fn zone_with_free_lists(free: i64, lens: &[u64]) -> Zone {
        let mut z = Zone::new(1, 0, 1024);
        z.managed_pages = 1024;
        z.vm_stat[ZoneStat::nr_free_pages as usize] = free;
        for (o, &len) in lens.iter().enumerate() {
            z.free_area[o].nr_free = len;
        }
        z
    }

    /// `kernel-reclaim.md` §2.2: `__GFP_HIGH` halves the mark, ALLOC_HARDER then takes a
    /// quarter off what is left, and the test is strict (`free <= need` fails).
    #[test]
    fn watermark_check_lowers_the_mark_by_half_for_high_and_a_quarter_for_harder() {
        let z = zone_with_free_lists(100, &[100]);
        // Plain: 100 free pages pass a mark of 99, not one of 100.
        assert!(zone_watermark_ok(&z, 0, 99, 1, 0));
        assert!(!zone_watermark_ok(&z, 0, 100, 1, 0));
        // HIGH: 198 - 99 = 99 passes; 199 - 99 = 100 does not.
        assert!(zone_watermark_ok(&z, 0, 198, 1, af::HIGH));
        assert!(!zone_watermark_ok(&z, 0, 199, 1, af::HIGH));
        assert!(!zone_watermark_ok(&z, 0, 200, 1, af::HIGH));
        // HARDER: 132 - 33 = 99 passes; 133 - 33 = 100 does not.
        assert!(zone_watermark_ok(&z, 0, 132, 1, af::HARDER));
        assert!(!zone_watermark_ok(&z, 0, 133, 1, af::HARDER));
        assert!(!zone_watermark_ok(&z, 0, 160, 1, af::HARDER));
        // Without HARDER the same marks fail.
        assert!(!zone_watermark_ok(&z, 0, 132, 1, 0));
        // Both: 264 -> 132 -> 99 passes; 266 -> 133 -> 100 does not (halve first, then a
        // quarter of the half).
        assert!(zone_watermark_ok(&z, 0, 264, 1, af::HIGH | af::HARDER));
        assert!(!zone_watermark_ok(&z, 0, 266, 1, af::HIGH | af::HARDER));
        // The reduced mark still stacks with the class zone's lowmem reserve.
        let mut r = z.clone();
        r.lowmem_reserve = [0, 0, 10];
        assert!(zone_watermark_ok(&r, 0, 120, 1, af::HARDER));
        assert!(
            !zone_watermark_ok(&r, 0, 120, 2, af::HARDER),
            "90 + 10 = 100"
        );
        assert!(
            zone_watermark_ok(&r, 0, 118, 2, af::HARDER),
            "89 + 10 < 100"
        );
    }

    /// `kernel-reclaim.md` §2.2: for an order-3 request the blocks of orders 0, 1 and 2 are
    /// taken out of the free count one order at a time (an order-o block is 2^o pages),
    /// while the mark halves at each order; each step is strict.
    #[test]
    fn watermark_check_discounts_each_lower_order_by_its_block_size() {
        // 8 order-0, 8 order-1 (16 pages), 4 order-2 (16 pages) blocks; mark 32.
        // free - 7 > 32; then - 8 > 16; then - 16 > 8; then - 16 > 4.
        let lens = [8, 8, 4, 2];
        let passes = |free: i64| zone_watermark_ok(&zone_with_free_lists(free, &lens), 3, 32, 1, 0);
        // 52: 45, 37, 21, 5 > 4.
        assert!(passes(52));
        // 51: 44, 36, 20, then exactly 4: not enough.
        assert!(!passes(51));
        assert!(!passes(48));
        // The same zone serves order 2 (mark 32: 49, 41, 25 > 8) and order 1.
        let z = zone_with_free_lists(52, &lens);
        assert!(zone_watermark_ok(&z, 2, 32, 1, 0));
        assert!(zone_watermark_ok(&z, 1, 32, 1, 0));
        // Order 2 fails when the order-1 blocks eat the margin: 12 blocks = 24 pages.
        // 45 - 3 = 42 > 32; 42 - 8 = 34 > 16; 34 - 24 = 10 > 8 passes, one more block fails.
        let z = zone_with_free_lists(45, &[8, 12, 1]);
        assert!(zone_watermark_ok(&z, 2, 32, 1, 0));
        let z = zone_with_free_lists(45, &[8, 13, 1]);
        assert!(!zone_watermark_ok(&z, 2, 32, 1, 0));
    }

    #[test]
    fn buddy_merges_freed_halves_back_into_one_block() {
        let mut pages = Pages::new(16);
        let mut z = Zone::new(0, 0, 16);
        z.managed_pages = 16;
        for p in 0..16 {
            pages.flags[p] = 0;
        }
        free_block(&mut pages, &mut z, 0, 4, MIGRATE_MOVABLE);
        assert_eq!(z.free_area[4].nr_free, 1);
        let a = rmqueue(&mut pages, &mut z, 0, MIGRATE_MOVABLE).unwrap();
        assert_eq!(z.free_pages(), 15);
        assert_eq!(
            (
                z.free_area[0].nr_free,
                z.free_area[1].nr_free,
                z.free_area[3].nr_free
            ),
            (1, 1, 1)
        );
        free_block(&mut pages, &mut z, a, 0, MIGRATE_MOVABLE);
        assert_eq!(z.free_area[4].nr_free, 1);
        assert_eq!(z.free_pages(), 16);
    }

    /// A zone of `blocks` free pageblocks (all MOVABLE, as at boot), one order-10 block per
    /// two pageblocks.
    fn free_zone(blocks: u32) -> (Pages, Zone) {
        let n = blocks * PAGEBLOCK_NR_PAGES as u32;
        let mut pages = Pages::new(n as usize);
        let mut z = Zone::new(1, 0, n);
        z.managed_pages = n as u64;
        free_boot_memory(&mut pages, std::slice::from_mut(&mut z));
        (pages, z)
    }

    /// The blocks on `free_list[mt]` at each order.
    fn lists(z: &Zone, mt: usize) -> Vec<u64> {
        z.free_area.iter().map(|a| a.free_list[mt].len).collect()
    }

    #[test]
    fn the_gfp_mask_names_the_migrate_type() {
        assert_eq!(gfp_migratetype(Gfp::HIGHUSER_MOVABLE), MIGRATE_MOVABLE);
        assert_eq!(gfp_migratetype(Gfp::KERNEL), MIGRATE_UNMOVABLE);
        let reclaimable = Gfp(Gfp::KERNEL.0 | Gfp::RECLAIMABLE);
        assert_eq!(gfp_migratetype(reclaimable), MIGRATE_RECLAIMABLE);
    }

    /// `kernel-compaction.md` §2.3: an unmovable request with no unmovable block free
    /// steals the largest movable block; its pageblock's free pages come along and, being
    /// more than half of it, make the pageblock unmovable. The split remainders go on the
    /// unmovable lists. A second request is served from them, stealing nothing.
    #[test]
    fn an_unmovable_request_steals_the_largest_movable_block_and_its_pageblock() {
        let (mut pages, mut z) = free_zone(4);
        assert_eq!(lists(&z, MIGRATE_MOVABLE)[10], 2);
        let pfn = rmqueue(&mut pages, &mut z, 0, MIGRATE_UNMOVABLE).unwrap();
        // An order-10 block covers two pageblocks: both change type.
        assert_eq!(z.pageblock_migratetype(pfn), MIGRATE_UNMOVABLE);
        assert_eq!(z.pageblock_migratetype(pfn + 512), MIGRATE_UNMOVABLE);
        assert_eq!(z.pageblock_migratetype(pfn ^ 1024), MIGRATE_MOVABLE);
        assert_eq!(
            lists(&z, MIGRATE_UNMOVABLE),
            [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0]
        );
        assert_eq!(lists(&z, MIGRATE_MOVABLE)[10], 1);
        let next = rmqueue(&mut pages, &mut z, 0, MIGRATE_UNMOVABLE).unwrap();
        assert_eq!(next, pfn + 1, "the buddy of the first");
        assert_eq!(lists(&z, MIGRATE_MOVABLE)[10], 1, "nothing more stolen");
        assert_eq!(z.free_pages(), 4 * 512 - 2);
    }

    /// A small block (order below pageblock_order / 2) is taken alone for an unmovable
    /// request: the rest of its pageblock stays movable, and so do the block's own
    /// remainders (`expand` onto the list it came from). A reclaimable request moves the
    /// pageblock's free pages even then, and with more than half of it free, its type.
    #[test]
    fn small_steals_leave_the_pageblock_unless_the_request_is_reclaimable() {
        for (mt, moves) in [(MIGRATE_UNMOVABLE, false), (MIGRATE_RECLAIMABLE, true)] {
            let (mut pages, mut z) = free_zone(2);
            // Break the movable memory into order-3 blocks: allocate every page, then free
            // every one but the first of each 8-page run.
            let all: Vec<Pfn> = (0..1024)
                .map(|_| rmqueue(&mut pages, &mut z, 0, MIGRATE_MOVABLE).unwrap())
                .collect();
            for &p in all.iter().filter(|&&p| p % 16 != 0) {
                free_block(&mut pages, &mut z, p, 0, MIGRATE_MOVABLE);
            }
            assert_eq!(lists(&z, MIGRATE_MOVABLE)[3], 64, "{mt}");
            assert_eq!(lists(&z, MIGRATE_MOVABLE)[4], 0, "{mt}");
            let pfn = rmqueue(&mut pages, &mut z, 0, mt).unwrap();
            let block = z.pageblock_migratetype(pfn);
            let moved = lists(&z, mt).iter().sum::<u64>();
            if moves {
                assert_eq!(block, mt, "480 free pages of 512 move the pageblock");
                assert!(
                    moved > 30,
                    "the pageblock's free blocks came along: {moved}"
                );
            } else {
                assert_eq!(block, MIGRATE_MOVABLE);
                assert_eq!(moved, 0, "the remainders stay movable");
                assert_eq!(
                    &lists(&z, MIGRATE_MOVABLE)[..4],
                    [65, 65, 65, 63],
                    "an order-3 block split, its buddies on the movable lists"
                );
                // So the next unmovable request steals again: another order-3 block.
                rmqueue(&mut pages, &mut z, 0, mt).unwrap();
                assert_eq!(lists(&z, MIGRATE_MOVABLE)[3], 62);
            }
        }
    }

    /// `setup_zone_migrate_reserve`: min(2, the min watermark in pageblocks) pageblocks
    /// become MIGRATE_RESERVE, skipping blocks with reserved frames; the reserve is used
    /// only when every other list is empty.
    #[test]
    fn the_reserve_pageblocks_are_the_last_resort() {
        let types =
            |z: &Zone| -> Vec<usize> { (0..4).map(|b| z.pageblock_migratetype(b * 512)).collect() };
        let (mut pages, mut z) = free_zone(4);
        z.watermark = [600, 750, 900];
        setup_zone_migrate_reserve(&mut pages, &mut z);
        use MIGRATE_MOVABLE as M;
        use MIGRATE_RESERVE as R;
        assert_eq!(types(&z), [R, R, M, M]);
        assert_eq!(lists(&z, R)[10], 1, "the free block of the first two");
        // Every other page goes first; then the reserve is used.
        for _ in 0..1024 {
            let p = rmqueue(&mut pages, &mut z, 0, M).unwrap();
            assert!(p >= 1024, "{p} from the reserve too early");
        }
        let p = rmqueue(&mut pages, &mut z, 0, M).unwrap();
        assert_eq!(z.pageblock_migratetype(p), R);
        // A smaller min watermark keeps one reserve block and gives the other back with its
        // free pages.
        z.watermark = [100, 125, 150];
        setup_zone_migrate_reserve(&mut pages, &mut z);
        assert_eq!(types(&z), [R, M, M, M]);
        assert_eq!(lists(&z, M)[9], 1, "pageblock 1's free half");

        // A pageblock holding reserved frames (here the zone's first ten) is skipped.
        let mut pages = Pages::new(2048);
        let mut z = Zone::new(1, 0, 2048);
        z.managed_pages = 2038;
        free_boot_memory(&mut pages, std::slice::from_mut(&mut z));
        z.watermark = [600, 750, 900];
        setup_zone_migrate_reserve(&mut pages, &mut z);
        assert_eq!(types(&z), [M, R, R, M]);
    }

    /// A freed page goes on its pageblock's list, and a merged block goes to the tail when
    /// the buddy of the next larger block is free (it will likely merge again).
    #[test]
    fn frees_follow_the_pageblock_type_and_likely_mergers_go_to_the_tail() {
        let (mut pages, mut z) = free_zone(2);
        let a = rmqueue(&mut pages, &mut z, 0, MIGRATE_MOVABLE).unwrap();
        z.set_pageblock_migratetype(a, MIGRATE_UNMOVABLE);
        let b = rmqueue(&mut pages, &mut z, 0, MIGRATE_MOVABLE).unwrap();
        assert_eq!(b, a + 1);
        // a's order-0 buddy b is allocated: a stays order 0, and the order-1 block beside
        // it is free, so a goes to the tail of the (empty) unmovable list.
        let mt = z.pageblock_migratetype(a);
        free_block(&mut pages, &mut z, a, 0, mt);
        assert_eq!(lists(&z, MIGRATE_UNMOVABLE)[0], 1);
        assert_eq!(freepage_migratetype(&pages, a), MIGRATE_UNMOVABLE);
        // A second free order-0 page of another pageblock lands at the movable head.
        let c = rmqueue(&mut pages, &mut z, 0, MIGRATE_MOVABLE).unwrap();
        let d = rmqueue(&mut pages, &mut z, 0, MIGRATE_MOVABLE).unwrap();
        free_block(&mut pages, &mut z, d, 0, MIGRATE_MOVABLE);
        assert_eq!(z.free_area[0].free_list[MIGRATE_MOVABLE].head, d);
        // b and a merge (a comes off the unmovable list) into an order-1 block on b's list;
        // its order-1 buddy c..d is in use, but the order-2 block after it is free, so it
        // goes to the tail, behind the block already there.
        assert_eq!((c, d), (a + 2, a + 3));
        let before = z.free_area[1].free_list[MIGRATE_MOVABLE].len;
        free_block(&mut pages, &mut z, b, 0, MIGRATE_MOVABLE);
        assert_eq!(lists(&z, MIGRATE_UNMOVABLE)[0], 0);
        let order1 = &z.free_area[1].free_list[MIGRATE_MOVABLE];
        assert_eq!((order1.len, order1.tail), (before + 1, a));
    }

    /// `__free_one_page`'s placement: a freed page whose buddy is in use goes to the head
    /// of its list, unless the block its pair would form has a free buddy one order up,
    /// in which case it goes to the tail, where allocations come last.
    #[test]
    fn a_free_block_likely_to_merge_again_goes_to_the_tail() {
        let (mut pages, mut z) = free_zone(2);
        let got: Vec<Pfn> = (0..6)
            .map(|_| rmqueue(&mut pages, &mut z, 0, MIGRATE_MOVABLE).unwrap())
            .collect();
        assert_eq!(got, [0, 1, 2, 3, 4, 5]);
        assert_eq!(
            z.free_area[1].free_list[MIGRATE_MOVABLE].head, 6,
            "6..7 free"
        );
        let list = |z: &Zone| {
            let l = z.free_area[0].free_list[MIGRATE_MOVABLE];
            (l.head, l.tail, l.len)
        };
        // 0's buddy 1 is in use and 2..3 is not a free order-1 block: the head.
        free_block(&mut pages, &mut z, 0, 0, MIGRATE_MOVABLE);
        // 4's buddy 5 is in use, but 6..7 is free: 4..5 would merge again. The tail.
        free_block(&mut pages, &mut z, 4, 0, MIGRATE_MOVABLE);
        assert_eq!(list(&z), (0, 4, 2));
        // 2's buddy 3 is in use and 0 is free only at order 0: the head.
        free_block(&mut pages, &mut z, 2, 0, MIGRATE_MOVABLE);
        assert_eq!(list(&z), (2, 4, 3));
    }

    /// The tail test looks one order up from the block a merge would form, and only below
    /// order 9: an order-9 block goes to the head even beside a free order-10 block.
    #[test]
    fn the_tail_test_uses_the_pair_one_order_up_and_stops_below_order_nine() {
        // Every frame in use; the test frees blocks by hand.
        let mut pages = Pages::new(3072);
        pages.flags.fill(0);
        let mut z = Zone::new(1, 0, 3072);
        z.managed_pages = 3072;
        let head = |z: &Zone, order: usize| z.free_area[order].free_list[MIGRATE_MOVABLE].head;
        free_block(&mut pages, &mut z, 1024, 10, MIGRATE_MOVABLE);
        free_block(&mut pages, &mut z, 2048, 9, MIGRATE_MOVABLE);
        free_block(&mut pages, &mut z, 0, 9, MIGRATE_MOVABLE);
        assert_eq!(head(&z, 9), 0, "order 9 always goes to the head");
        // An order-1 block at 10 (its buddy 8..9 in use) beside a free order-2 block
        // 12..15: the pair 8..11 would merge with it, so the tail, behind 16.
        free_block(&mut pages, &mut z, 12, 2, MIGRATE_MOVABLE);
        free_block(&mut pages, &mut z, 16, 1, MIGRATE_MOVABLE);
        free_block(&mut pages, &mut z, 10, 1, MIGRATE_MOVABLE);
        assert_eq!(head(&z, 1), 16);
        // Page 6 (7 in use) beside the free order-1 block 4..5: the pair 6..7's buddy is
        // 4..5, below it.
        free_block(&mut pages, &mut z, 4, 1, MIGRATE_MOVABLE);
        free_block(&mut pages, &mut z, 20, 0, MIGRATE_MOVABLE);
        free_block(&mut pages, &mut z, 6, 0, MIGRATE_MOVABLE);
        assert_eq!(head(&z, 0), 20, "6 went to the tail");
    }

    /// A pageblock that is not wholly inside the zone moves no free pages.
    #[test]
    fn move_freepages_block_leaves_a_pageblock_the_zone_only_partly_spans() {
        let mut pages = Pages::new(1280);
        let mut z = Zone::new(1, 256, 1280);
        z.managed_pages = 1024;
        free_boot_memory(&mut pages, std::slice::from_mut(&mut z));
        assert_eq!(
            move_freepages_block(&mut pages, &mut z, 300, MIGRATE_UNMOVABLE),
            0
        );
        assert_eq!(
            move_freepages_block(&mut pages, &mut z, 1100, MIGRATE_UNMOVABLE),
            0
        );
        assert_eq!(lists(&z, MIGRATE_UNMOVABLE).iter().sum::<u64>(), 0);
        assert_eq!(
            move_freepages_block(&mut pages, &mut z, 600, MIGRATE_UNMOVABLE),
            512
        );
        assert_eq!(lists(&z, MIGRATE_UNMOVABLE)[9], 1);
    }

    /// `kernel-writeback.md` §2.1: a zone's dirty limit is dirty_ratio of its free plus
    /// reclaimable pages less its reserve; a `__GFP_WRITE` allocation on the fast path skips
    /// a zone over it, and the slow path (min watermark) does not.
    #[test]
    fn write_allocations_skip_a_zone_over_its_share_of_the_dirty_limit() {
        use crate::mm::vmstat::ZoneStat;
        let w = crate::sim::boot_for_test(128, 0, "3.9");
        let mut k = w.borrow_mut();
        let zi = ZONE_DMA32;
        let z = &k.zones[zi];
        let reserve =
            (z.high_wmark() + z.lowmem_reserve.iter().copied().max().unwrap()).min(z.managed_pages);
        let dirtyable = z.free_pages() - reserve;
        assert_eq!(
            zone_dirtyable_memory(&k, zi),
            dirtyable,
            "no LRU pages yet: free less reserve"
        );
        assert_eq!(zone_dirty_limit(&k, zi), 20 * dirtyable / 100);
        assert!(zone_dirty_ok(&k, zi));
        let write = Gfp(Gfp::HIGHUSER_MOVABLE.0 | Gfp::WRITE);
        let p = get_page_from_freelist(&mut k, write, 0, af::WMARK_LOW).unwrap();
        assert_eq!(
            k.page_zone(p),
            zi,
            "DMA32 is the first zone of this machine"
        );
        // Over its limit: the fast path moves on to DMA; a plain allocation does not.
        let over = zone_dirty_limit(&k, zi) as i64 + 1;
        k.zones[zi].mod_stat(ZoneStat::nr_dirty, over);
        assert!(!zone_dirty_ok(&k, zi));
        let p = get_page_from_freelist(&mut k, write, 0, af::WMARK_LOW).unwrap();
        assert_eq!(k.page_zone(p), 0, "the write allocation skipped DMA32");
        let p = get_page_from_freelist(&mut k, Gfp::HIGHUSER_MOVABLE, 0, af::WMARK_LOW).unwrap();
        assert_eq!(k.page_zone(p), zi);
        let p = get_page_from_freelist(&mut k, write, 0, af::WMARK_MIN).unwrap();
        assert_eq!(
            k.page_zone(p),
            zi,
            "the slow path may exceed the zone's dirty limit"
        );
    }

    /// a756cf59 came with 3.3: the 2.6.37 base (3.0's presets too) has no per-zone dirty
    /// limit, and a write allocation takes the first zone with room however dirty it is.
    #[test]
    fn before_3_3_write_allocations_ignore_the_zones_dirty_pages() {
        use crate::mm::vmstat::ZoneStat;
        for preset in ["3.0", "2.6.37-rc5"] {
            let w = crate::sim::boot_for_test(128, 0, preset);
            let mut k = w.borrow_mut();
            let zi = ZONE_DMA32;
            let over = zone_dirty_limit(&k, zi) as i64 + 1;
            k.zones[zi].mod_stat(ZoneStat::nr_dirty, over);
            assert!(!zone_dirty_ok(&k, zi));
            let write = Gfp(Gfp::HIGHUSER_MOVABLE.0 | Gfp::WRITE);
            let p = get_page_from_freelist(&mut k, write, 0, af::WMARK_LOW).unwrap();
            assert_eq!(k.page_zone(p), zi, "{preset}");
        }
    }
}

/// For tests: free pages of every zone, on the buddy lists or a CPU's.
#[cfg(test)]
pub(crate) fn free_or_on_cpu_lists(k: &Kernel) -> u64 {
    k.zones.iter().map(|z| z.free_pages() + z.pcp_pages()).sum()
}

/// The per-cpu lists (`kernel-compaction.md` §2.2).
#[cfg(test)]
mod pcp_tests {
    use super::*;
    use crate::mm::invariants;

    /// A 256 MiB test machine with every CPU's lists drained; DMA32 is the zone order-0
    /// allocations come from, and code outside a task runs on CPU 0.
    fn machine() -> World {
        let w = crate::sim::boot_for_test(256, 0, "3.9");
        drain_all_pages(&mut w.borrow_mut());
        w
    }

    const Z: usize = ZONE_DMA32;

    /// Allocate an order-0 page as `gfp` asks; it carries no state.
    fn alloc(k: &mut Kernel, gfp: Gfp) -> Pfn {
        let p = get_page_from_freelist(k, gfp, 0, af::WMARK_MIN).expect("a free page");
        assert_eq!(k.page_zone(p), Z);
        assert_eq!(k.pages.flags[p as usize], 0);
        p
    }

    fn list(k: &Kernel, cpu: usize, mt: usize) -> Vec<Pfn> {
        k.zones[Z].pageset[cpu].lists[mt]
            .iter()
            .map(|&(p, _)| p)
            .collect()
    }

    #[test]
    fn every_cpus_lists_have_room_for_high_and_a_refill_from_boot() {
        let mut z = [Zone::new(1, 0, 1 << 20)];
        z[0].managed_pages = 1 << 20;
        setup_zone_pageset(&mut z, 4);
        for pcp in &z[0].pageset {
            for list in &pcp.lists {
                assert!(list.capacity() > (186 + 31) as usize, "{}", list.capacity());
            }
        }
    }

    #[test]
    fn the_batch_is_a_thousandth_of_the_zone_quartered_to_two_to_the_n_minus_one() {
        let sized = |pages: u32| {
            let mut z = [Zone::new(1, 0, pages)];
            z[0].managed_pages = pages as u64;
            setup_zone_pageset(&mut z, 4);
            (
                zone_batchsize(&z[0]),
                z[0].pcp_batch,
                z[0].pcp_high,
                z[0].pageset.len(),
            )
        };
        // 4 GiB: capped at 512 KiB = 128 pages, quartered: 32 -> 48 -> 31.
        assert_eq!(sized(1 << 20), (31, 31, 186, 4));
        // 256 MiB: 64 -> 16 -> 24 -> 15.
        assert_eq!(sized(1 << 16), (15, 15, 90, 4));
        // 128 MiB: 32 -> 8 -> 12 -> 7.
        assert_eq!(sized(1 << 15), (7, 7, 42, 4));
        // 16 MiB (DMA): 4 -> 1 -> 1 -> 0: no lists to speak of, every free goes through.
        assert_eq!(sized(4096), (0, 1, 0, 4));
        // An empty zone gets no pageset.
        let mut z = [Zone::new(2, 0, 0)];
        setup_zone_pageset(&mut z, 4);
        assert!(z[0].pageset.is_empty());
    }

    #[test]
    fn an_empty_list_is_refilled_by_a_batch_and_the_first_taken_is_allocated() {
        let w = machine();
        let mut k = w.borrow_mut();
        let batch = k.zones[Z].pcp_batch as u64;
        assert!(batch > 1);
        let free = k.zones[Z].free_pages();
        let p = alloc(&mut k, Gfp::HIGHUSER_MOVABLE);
        assert_eq!(
            k.zones[Z].free_pages(),
            free - batch,
            "a batch left the buddy lists"
        );
        assert_eq!(k.zones[Z].pageset[0].count as u64, batch - 1);
        let rest = list(&k, 0, MIGRATE_MOVABLE);
        assert!(rest.iter().all(|&q| k.pages.flags[q as usize] == PG_PCP));
        // Hot allocations go on down the batch in the order it was taken; a cold one takes
        // the tail, the batch's last.
        let cold = Gfp(Gfp::HIGHUSER_MOVABLE.0 | Gfp::COLD);
        assert_eq!(alloc(&mut k, Gfp::HIGHUSER_MOVABLE), rest[0]);
        assert_eq!(alloc(&mut k, cold), *rest.last().unwrap());
        // A cold refill lays the batch the other way round: the first taken is still the
        // one allocated, the second is next at the tail. (Drained, the same pages merge
        // back and are taken again.)
        for q in [p, rest[0], *rest.last().unwrap()] {
            free_page(&mut k, q);
        }
        drain_all_pages(&mut k);
        assert_eq!(alloc(&mut k, cold), p);
        let mut again = list(&k, 0, MIGRATE_MOVABLE);
        again.reverse();
        assert_eq!(again, rest);
        // Other migrate types have lists of their own.
        let u = alloc(&mut k, Gfp::KERNEL);
        assert!(!rest.contains(&u));
        assert_eq!(list(&k, 0, MIGRATE_UNMOVABLE).len() as u64, batch - 1);
    }

    #[test]
    fn a_freed_page_waits_on_the_list_hot_at_the_head_cold_at_the_tail() {
        let w = machine();
        let mut k = w.borrow_mut();
        let p = alloc(&mut k, Gfp::HIGHUSER_MOVABLE);
        let free = k.zones[Z].free_pages();
        let events = k.events.get(VmEvent::pgfree);
        free_page(&mut k, p);
        assert_eq!(k.pages.flags[p as usize], PG_PCP);
        assert_eq!(k.zones[Z].free_pages(), free, "not counted free");
        assert_eq!(
            k.events.get(VmEvent::pgfree),
            events + 1,
            "but counted freed"
        );
        assert_eq!(list(&k, 0, MIGRATE_MOVABLE)[0], p);
        assert_eq!(
            alloc(&mut k, Gfp::HIGHUSER_MOVABLE),
            p,
            "hot: the head, LIFO"
        );
        // Reclaim frees cold: to the tail, where a cold allocation looks.
        free_page_batched(&mut k, p, true);
        assert_eq!(*list(&k, 0, MIGRATE_MOVABLE).last().unwrap(), p);
        assert_ne!(alloc(&mut k, Gfp::HIGHUSER_MOVABLE), p);
        assert_eq!(alloc(&mut k, Gfp(Gfp::HIGHUSER_MOVABLE.0 | Gfp::COLD)), p);
    }

    #[test]
    fn freed_buddies_merge_only_once_their_cpu_is_drained() {
        let w = machine();
        let mut k = w.borrow_mut();
        // A batch is split off one block: its first two pages are an aligned pair.
        let mut a = alloc(&mut k, Gfp::HIGHUSER_MOVABLE);
        let mut b = alloc(&mut k, Gfp::HIGHUSER_MOVABLE);
        if a > b {
            std::mem::swap(&mut a, &mut b);
        }
        assert_eq!((a % 2, b), (0, a + 1), "test setup: buddies");
        free_page(&mut k, a);
        free_page(&mut k, b);
        assert!(!k.pages.test(a, PG_BUDDY) && !k.pages.test(b, PG_BUDDY));
        invariants::check(&k).unwrap();
        // Another CPU's drain leaves them.
        drain_pages(&mut k, 1);
        assert_eq!(k.pages.flags[a as usize], PG_PCP);
        let free = k.zones[Z].free_pages();
        let count = k.zones[Z].pageset[0].count as u64;
        drain_pages(&mut k, 0);
        assert_eq!(k.zones[Z].pageset[0].count, 0);
        assert_eq!(k.zones[Z].free_pages(), free + count);
        assert!(k.pages.test(a, PG_BUDDY), "merged: {a} heads a block");
        assert!(k.pages.mapping[a as usize] >= 1, "of order 1 or more");
        assert_eq!(k.pages.flags[b as usize], 0, "inside it");
        invariants::check(&k).unwrap();
    }

    #[test]
    fn reaching_high_frees_a_batch_from_the_tails_round_robin() {
        let w = machine();
        let mut k = w.borrow_mut();
        let (high, batch) = (k.zones[Z].pcp_high as usize, k.zones[Z].pcp_batch as usize);
        // Pages for each list: two unmovable, one reclaimable, the rest movable.
        let m = high - 1 - 2 - 1;
        let movable: Vec<Pfn> = (0..=m)
            .map(|_| alloc(&mut k, Gfp::HIGHUSER_MOVABLE))
            .collect();
        drain_all_pages(&mut k);
        let unmovable: Vec<Pfn> = (0..2).map(|_| alloc(&mut k, Gfp::KERNEL)).collect();
        let reclaimable: Vec<Pfn> = (0..1)
            .map(|_| alloc(&mut k, Gfp(Gfp::KERNEL.0 | Gfp::RECLAIMABLE)))
            .collect();
        drain_all_pages(&mut k);
        // Put them on CPU 0's lists as frees would, one short of high, movable first.
        let put = |k: &mut Kernel, p: Pfn, mt: usize| {
            k.pages.flags[p as usize] = PG_PCP;
            k.zones[Z].pageset[0].add(mt, p, mt, false);
        };
        for &p in &movable[..m] {
            put(&mut k, p, MIGRATE_MOVABLE);
        }
        for &p in &unmovable {
            put(&mut k, p, MIGRATE_UNMOVABLE);
        }
        for &p in &reclaimable {
            put(&mut k, p, MIGRATE_RECLAIMABLE);
        }
        let z = &mut k.zones[Z];
        z.all_unreclaimable = true;
        z.pages_scanned = 1000;
        // The free that reaches high: reclaimable 1, movable 1, unmovable 1; then each list
        // gives one more than the empty ones passed on the way to it: (reclaimable empty)
        // movable 2, unmovable 1, (reclaimable empty) movable 2; then movable is the only
        // list left and gives the rest of the batch.
        let last = movable[m];
        drop(k);
        let trace = crate::mm::trace::testing::capture(&w);
        let mut k = w.borrow_mut();
        free_page(&mut k, last);
        let drained: Vec<String> = trace
            .lines_with("mm_page_pcpu_drain")
            .iter()
            .map(|l| {
                l.split("pfn=")
                    .nth(1)
                    .unwrap()
                    .split(' ')
                    .next()
                    .unwrap()
                    .to_string()
            })
            .collect();
        let tail = |i: usize| movable[i].to_string();
        let mut want = vec![
            reclaimable[0].to_string(),
            tail(0),
            unmovable[0].to_string(),
            tail(1),
            tail(2),
            unmovable[1].to_string(),
        ];
        want.extend((3..batch - 3).map(tail));
        assert_eq!(drained, want);
        let z = &k.zones[Z];
        assert_eq!(z.pageset[0].count as usize, high - batch);
        assert_eq!(list(&k, 0, MIGRATE_MOVABLE)[0], last);
        assert!(
            !z.all_unreclaimable && z.pages_scanned == 0,
            "the zone got pages back"
        );
        invariants::check(&k).unwrap();
    }

    #[test]
    fn a_reserve_page_waits_on_the_movable_list_and_goes_back_as_reserve() {
        let w = machine();
        let mut k = w.borrow_mut();
        let p = alloc(&mut k, Gfp::HIGHUSER_MOVABLE);
        drain_all_pages(&mut k);
        k.zones[Z].set_pageblock_migratetype(p, MIGRATE_RESERVE);
        let reserve_before: u64 = k.zones[Z]
            .free_area
            .iter()
            .map(|a| a.free_list[MIGRATE_RESERVE].len)
            .sum();
        free_page(&mut k, p);
        assert_eq!(
            k.zones[Z].pageset[0].lists[MIGRATE_MOVABLE][0],
            (p, MIGRATE_RESERVE as u8)
        );
        drain_pages(&mut k, 0);
        let reserve_after: u64 = k.zones[Z]
            .free_area
            .iter()
            .map(|a| a.free_list[MIGRATE_RESERVE].len)
            .sum();
        assert_eq!(reserve_after, reserve_before + 1);
    }

    /// Every free page taken, then `min - 1` given back to zone Z's buddy lists and ten to
    /// each of CPU 0's and CPU 1's lists: an order-0 allocation at the min watermark fails
    /// unless CPU lists are drained.
    fn below_min_with_pages_on_two_cpus(k: &mut Kernel) {
        let mut held = Vec::new();
        loop {
            while let Some(p) =
                get_page_from_freelist(k, Gfp::HIGHUSER_MOVABLE, 0, af::NO_WATERMARKS)
            {
                held.push(p);
            }
            drain_all_pages(k);
            if k.zones.iter().all(|z| z.free_pages() == 0) {
                break;
            }
        }
        held.retain(|&p| k.page_zone(p) == Z);
        let min = k.zones[Z].min_wmark() as usize;
        for p in held.drain(..min - 1) {
            free_page(k, p);
        }
        drain_all_pages(k);
        assert_eq!(k.zones[Z].free_pages() as usize, min - 1);
        for cpu in [0, 1] {
            for p in held.drain(..10) {
                k.pages.flags[p as usize] = PG_PCP;
                k.zones[Z].pageset[cpu].add(MIGRATE_MOVABLE, p, MIGRATE_MOVABLE, false);
            }
        }
        assert_eq!(
            get_page_from_freelist(k, Gfp::HIGHUSER_MOVABLE, 0, af::WMARK_MIN),
            None
        );
    }

    #[test]
    fn after_direct_reclaim_a_failed_attempt_drains_every_cpu_and_tries_again() {
        let w = machine();
        let mut k = w.borrow_mut();
        below_min_with_pages_on_two_cpus(&mut k);
        let p = get_page_after_reclaim(&mut k, Gfp::HIGHUSER_MOVABLE, 0, af::WMARK_MIN);
        assert!(p.is_some());
        assert_eq!(k.zones[Z].pageset[1].count, 0, "CPU 1 drained too");
        // CPU 0's list holds what is left of the batch the allocation refilled it with.
        assert_eq!(k.zones[Z].pageset[0].count, k.zones[Z].pcp_batch - 1);
    }

    #[test]
    fn after_direct_compaction_only_the_compacting_cpu_is_drained() {
        let w = machine();
        let mut k = w.borrow_mut();
        below_min_with_pages_on_two_cpus(&mut k);
        let p = get_page_after_compaction(&mut k, Gfp::HIGHUSER_MOVABLE, 0, af::WMARK_MIN);
        assert!(p.is_some(), "CPU 0's ten pages lift the zone over min");
        assert_eq!(k.zones[Z].pageset[1].count, 10, "CPU 1's stay");
    }

    #[test]
    fn the_invariants_name_a_cpu_list_page_with_state_or_a_wrong_count() {
        let w = machine();
        let mut k = w.borrow_mut();
        let p = alloc(&mut k, Gfp::HIGHUSER_MOVABLE);
        free_page(&mut k, p);
        invariants::check(&k).unwrap();
        k.pages.flags[p as usize] |= crate::mm::page::PG_DIRTY;
        let e = invariants::check(&k).unwrap_err();
        assert!(
            e.contains("'free page state'") && e.contains("CPU 0's list"),
            "{e}"
        );
        k.pages.flags[p as usize] = PG_PCP;
        k.zones[Z].pageset[0].count += 1;
        let e = invariants::check(&k).unwrap_err();
        assert!(
            e.contains("'free lists'") && e.contains("count says"),
            "{e}"
        );
        k.zones[Z].pageset[0].count -= 1;
        k.zones[Z].pageset[0].lists[MIGRATE_MOVABLE].pop_front();
        k.zones[Z].pageset[0].count -= 1;
        let e = invariants::check(&k).unwrap_err();
        assert!(e.contains("in no place"), "{e}");
    }
}
