//! Zones, lruvecs and the node (`include/linux/mmzone.h`). One node, x86-64 zones DMA
//! (first 16 MiB), DMA32 (to 4 GiB) and Normal (the rest); `kernel-reclaim.md` §1.

use super::page::{ListHead, Lru, Pfn};
use super::vmstat::ZoneStat;
use std::collections::VecDeque;

/// Largest buddy order + 1 (`MAX_ORDER`).
pub const MAX_ORDER: usize = 11;

/// `pageblock_order` (= `HUGETLB_PAGE_ORDER` on x86-64): a pageblock is 2 MiB.
pub const PAGEBLOCK_ORDER: usize = 9;
/// `pageblock_nr_pages`.
pub const PAGEBLOCK_NR_PAGES: u64 = 1 << PAGEBLOCK_ORDER;

/// Migrate types (`MIGRATE_*`, no CMA). `MIGRATE_ISOLATE` is not modelled: nothing
/// isolates pageblocks (memory hot-remove, CMA).
pub const MIGRATE_UNMOVABLE: usize = 0;
pub const MIGRATE_RECLAIMABLE: usize = 1;
pub const MIGRATE_MOVABLE: usize = 2;
pub const MIGRATE_RESERVE: usize = 3;
/// Free lists per order (`MIGRATE_TYPES` less ISOLATE).
pub const MIGRATE_TYPES: usize = 4;
/// `MIGRATE_PCPTYPES`: the per-cpu lists are unmovable, reclaimable and movable; a
/// RESERVE page is freed onto the movable one.
pub const MIGRATE_PCPTYPES: usize = 3;
/// `migratetype_names`.
pub const MIGRATETYPE_NAMES: [&str; MIGRATE_TYPES] =
    ["Unmovable", "Reclaimable", "Movable", "Reserve"];

/// `struct free_area`: one buddy free list per migrate type, and the blocks on all of them.
#[derive(Clone, Debug, Default)]
pub struct FreeArea {
    pub free_list: [ListHead; MIGRATE_TYPES],
    /// `nr_free`.
    pub nr_free: u64,
}

/// Zone indices (`enum zone_type`, x86-64 without MOVABLE in use).
pub const ZONE_DMA: usize = 0;
pub const ZONE_DMA32: usize = 1;
pub const ZONE_NORMAL: usize = 2;
/// Number of zones modelled.
pub const MAX_NR_ZONES: usize = 3;
/// Zone names as `/proc/zoneinfo` prints them.
pub const ZONE_NAMES: [&str; MAX_NR_ZONES] = ["DMA", "DMA32", "Normal"];

/// Watermark indices (`enum zone_watermarks`).
pub const WMARK_MIN: usize = 0;
pub const WMARK_LOW: usize = 1;
pub const WMARK_HIGH: usize = 2;

/// Zone flags (`zone_flags_t`).
pub mod zone_flags {
    /// Reclaim found every dirty page it met backed by a congested BDI.
    pub const ZONE_CONGESTED: u8 = 1 << 0;
    /// The tail of the LRU is full of dirty pages not queued for IO: kswapd should write
    /// them (KS patch 6).
    pub const ZONE_TAIL_LRU_DIRTY: u8 = 1 << 1;
    /// Reclaim found the isolated pages under writeback: kswapd should stall on PG_reclaim
    /// pages (KS patch 7).
    pub const ZONE_WRITEBACK: u8 = 1 << 2;
}

/// A zone's LRU lists and their scan statistics (`struct lruvec`, `struct zone_reclaim_stat`).
#[derive(Clone, Debug, Default)]
pub struct Lruvec {
    /// The five lists, indexed by [`Lru`].
    pub lists: [ListHead; 5],
    /// `recent_scanned[anon, file]`.
    pub recent_scanned: [u64; 2],
    /// `recent_rotated[anon, file]`.
    pub recent_rotated: [u64; 2],
}

impl Lruvec {
    /// Pages on `lru`.
    #[inline]
    pub fn size(&self, lru: Lru) -> u64 {
        self.lists[lru as usize].len
    }
}

/// One CPU's free order-0 pages of one zone (`struct per_cpu_pages`, `kernel-compaction.md`
/// §2.2): taken and given back without the zone lock, and neither counted free nor able to
/// merge until drained to the buddy lists.
#[derive(Clone, Debug, Default)]
pub struct PerCpuPages {
    /// `count`: pages on the three lists.
    pub count: u32,
    /// `lists[MIGRATE_PCPTYPES]`, head (hot end) at the front. Each page carries the
    /// migrate type it goes back to the buddy lists as (`set_freepage_migratetype`).
    pub lists: [VecDeque<(Pfn, u8)>; MIGRATE_PCPTYPES],
}

impl PerCpuPages {
    /// `list_add` (head) or `list_add_tail` of a page going back to the buddy lists as `mt`.
    #[inline]
    pub fn add(&mut self, list: usize, pfn: Pfn, mt: usize, tail: bool) {
        let entry = (pfn, mt as u8);
        if tail {
            self.lists[list].push_back(entry);
        } else {
            self.lists[list].push_front(entry);
        }
        self.count += 1;
    }
}

/// A zone.
#[derive(Clone, Debug)]
pub struct Zone {
    /// Index: ZONE_DMA, ZONE_DMA32 or ZONE_NORMAL.
    pub idx: usize,
    /// First frame.
    pub start_pfn: Pfn,
    /// One past the last frame.
    pub end_pfn: Pfn,
    /// Frames present (the span; no holes are modelled).
    pub present_pages: u64,
    /// Frames handed to the buddy allocator (present less memmap and boot reservations).
    pub managed_pages: u64,
    /// min, low, high.
    pub watermark: [u64; 3],
    /// `lowmem_reserve[classzone]`.
    pub lowmem_reserve: [u64; MAX_NR_ZONES],
    /// Buddy free lists by order.
    pub free_area: [FreeArea; MAX_ORDER],
    /// `pageblock_flags`: the migrate type of each pageblock the zone spans, from the
    /// pageblock holding `start_pfn`.
    pub pageblock_mt: Vec<u8>,
    /// Per pageblock: its frames are one transparent huge page, mapped by a PMD. On x86-64
    /// a THP is exactly one pageblock (`HPAGE_PMD_ORDER` = `pageblock_order`).
    pub pageblock_thp: Vec<bool>,
    /// Per pageblock: `PB_migrate_skip` (3.7, bb13ffeb), a scanner found nothing to isolate
    /// there.
    pub pageblock_skip: Vec<bool>,
    /// The LRU lists: the zone's (memcg off), or the root group's
    /// (`mem_cgroup_zone_lruvec(zone, root_mem_cgroup)`).
    pub lruvec: Lruvec,
    /// The other groups' lruvecs in this zone, group `i` at `i - 1`.
    pub memcg_lruvecs: Vec<Lruvec>,
    /// Zone page counts.
    pub vm_stat: [i64; ZoneStat::COUNT],
    /// Pages scanned by global reclaim since a page was last freed here.
    pub pages_scanned: u64,
    /// Set by kswapd when a zone is scanned 6x over without progress (3.0-3.11).
    pub all_unreclaimable: bool,
    /// [`zone_flags`] bits.
    pub flags: u8,
    /// Target active:inactive anon ratio.
    pub inactive_ratio: u64,
    /// `compact_considered`: calls of `compaction_deferred` since the last failure.
    pub compact_considered: u32,
    /// `compact_defer_shift`: compaction is skipped for `1 << shift` calls after a failure.
    pub compact_defer_shift: u32,
    /// `compact_order_failed` (3.4+): the lowest order sync compaction failed for.
    pub compact_order_failed: u32,
    /// `compact_cached_free_pfn` (3.6, 7db8889a): where the next order > 0 run starts its
    /// free scanner.
    pub compact_cached_free_pfn: u64,
    /// `compact_cached_migrate_pfn` (3.7): where the next run starts its migrate scanner.
    pub compact_cached_migrate_pfn: u64,
    /// `compact_blockskip_flush` (3.7): a direct or proc run reached COMPLETE, so kswapd
    /// resets the skip bits when it goes to sleep.
    pub compact_blockskip_flush: bool,
    /// `pageset`: each CPU's [`PerCpuPages`]; empty until `setup_zone_pageset` (the boot
    /// pageset, through which every free goes straight to the buddy lists).
    pub pageset: Vec<PerCpuPages>,
    /// `pcp->high`: a CPU's lists are trimmed by `pcp_batch` pages when they reach it.
    pub pcp_high: u32,
    /// `pcp->batch`: pages moved between the buddy and a CPU's lists at a time.
    pub pcp_batch: u32,
}

impl Zone {
    /// `mem_cgroup_zone_lruvec`: memory cgroup `memcg`'s lists in this zone.
    #[inline]
    pub fn mem_cgroup_lruvec(&self, memcg: usize) -> &Lruvec {
        if memcg == 0 {
            &self.lruvec
        } else {
            &self.memcg_lruvecs[memcg - 1]
        }
    }

    /// [`Zone::mem_cgroup_lruvec`], mutably.
    #[inline]
    pub fn mem_cgroup_lruvec_mut(&mut self, memcg: usize) -> &mut Lruvec {
        if memcg == 0 {
            &mut self.lruvec
        } else {
            &mut self.memcg_lruvecs[memcg - 1]
        }
    }

    /// An empty zone spanning `[start, end)`.
    pub fn new(idx: usize, start_pfn: Pfn, end_pfn: Pfn) -> Zone {
        let pageblocks = ((end_pfn as u64).div_ceil(PAGEBLOCK_NR_PAGES)
            - (start_pfn as u64 >> PAGEBLOCK_ORDER)) as usize;
        Zone {
            idx,
            start_pfn,
            end_pfn,
            present_pages: (end_pfn - start_pfn) as u64,
            managed_pages: 0,
            watermark: [0; 3],
            lowmem_reserve: [0; MAX_NR_ZONES],
            free_area: Default::default(),
            // memmap_init_zone: every pageblock starts MOVABLE.
            pageblock_mt: vec![MIGRATE_MOVABLE as u8; pageblocks],
            pageblock_thp: vec![false; pageblocks],
            pageblock_skip: vec![false; pageblocks],
            lruvec: Lruvec::default(),
            memcg_lruvecs: Vec::new(),
            vm_stat: [0; ZoneStat::COUNT],
            pages_scanned: 0,
            all_unreclaimable: false,
            flags: 0,
            inactive_ratio: 1,
            compact_considered: 0,
            compact_defer_shift: 0,
            compact_order_failed: 0,
            compact_cached_free_pfn: (end_pfn as u64) & !(PAGEBLOCK_NR_PAGES - 1),
            compact_cached_migrate_pfn: start_pfn as u64,
            compact_blockskip_flush: false,
            pageset: Vec::new(),
            pcp_high: 0,
            pcp_batch: 1,
        }
    }

    /// `get_pageblock_migratetype` of a frame of the zone.
    #[inline]
    pub fn pageblock_migratetype(&self, pfn: Pfn) -> usize {
        self.pageblock_mt[self.pageblock_index(pfn)] as usize
    }

    /// `set_pageblock_migratetype` of the pageblock holding `pfn`.
    #[inline]
    pub fn set_pageblock_migratetype(&mut self, pfn: Pfn, mt: usize) {
        let i = self.pageblock_index(pfn);
        self.pageblock_mt[i] = mt as u8;
    }

    /// `PageTransHuge`: the frame is part of a transparent huge page.
    #[inline]
    pub fn in_thp(&self, pfn: Pfn) -> bool {
        self.pageblock_thp[self.pageblock_index(pfn)]
    }

    /// Mark the pageblock holding `pfn` as a transparent huge page, or no longer one.
    #[inline]
    pub fn set_thp(&mut self, pfn: Pfn, thp: bool) {
        let i = self.pageblock_index(pfn);
        self.pageblock_thp[i] = thp;
    }

    /// `get_pageblock_skip` of the pageblock holding `pfn`.
    #[inline]
    pub fn pageblock_skip(&self, pfn: Pfn) -> bool {
        self.pageblock_skip[self.pageblock_index(pfn)]
    }

    /// `set_pageblock_skip` of the pageblock holding `pfn`.
    #[inline]
    pub fn set_pageblock_skip(&mut self, pfn: Pfn) {
        let i = self.pageblock_index(pfn);
        self.pageblock_skip[i] = true;
    }

    #[inline]
    fn pageblock_index(&self, pfn: Pfn) -> usize {
        ((pfn >> PAGEBLOCK_ORDER) - (self.start_pfn >> PAGEBLOCK_ORDER)) as usize
    }

    /// The zone name.
    pub fn name(&self) -> &'static str {
        ZONE_NAMES[self.idx]
    }

    /// `populated_zone`.
    #[inline]
    pub fn populated(&self) -> bool {
        self.managed_pages > 0
    }

    /// A zone counter.
    #[inline]
    pub fn stat(&self, item: ZoneStat) -> u64 {
        self.vm_stat[item as usize].max(0) as u64
    }

    /// Add to a zone counter.
    #[inline]
    pub fn mod_stat(&mut self, item: ZoneStat, delta: i64) {
        self.vm_stat[item as usize] += delta;
    }

    /// Free pages.
    #[inline]
    pub fn free_pages(&self) -> u64 {
        self.stat(ZoneStat::nr_free_pages)
    }

    /// Pages on every CPU's lists: free, but not in `nr_free_pages`.
    #[cfg(test)]
    pub fn pcp_pages(&self) -> u64 {
        self.pageset.iter().map(|p| p.count as u64).sum()
    }

    /// `low_wmark_pages` and friends.
    #[inline]
    pub fn min_wmark(&self) -> u64 {
        self.watermark[WMARK_MIN]
    }
    #[inline]
    pub fn low_wmark(&self) -> u64 {
        self.watermark[WMARK_LOW]
    }
    #[inline]
    pub fn high_wmark(&self) -> u64 {
        self.watermark[WMARK_HIGH]
    }

    /// Whether a flag is set.
    #[inline]
    pub fn test_flag(&self, f: u8) -> bool {
        self.flags & f != 0
    }
    /// `zone_set_flag`.
    #[inline]
    pub fn set_flag(&mut self, f: u8) {
        self.flags |= f;
    }
    /// `zone_clear_flag`.
    #[inline]
    pub fn clear_flag(&mut self, f: u8) {
        self.flags &= !f;
    }

    /// The counter that mirrors the length of `lru`.
    pub fn lru_stat(lru: Lru) -> ZoneStat {
        match lru {
            Lru::InactiveAnon => ZoneStat::nr_inactive_anon,
            Lru::ActiveAnon => ZoneStat::nr_active_anon,
            Lru::InactiveFile => ZoneStat::nr_inactive_file,
            Lru::ActiveFile => ZoneStat::nr_active_file,
            Lru::Unevictable => ZoneStat::nr_unevictable,
        }
    }
}

/// Per-node kswapd state (`pg_data_t`).
#[derive(Clone, Debug, Default)]
pub struct Pgdat {
    /// The order of the pending kswapd request.
    pub kswapd_max_order: u32,
    /// The class zone of the pending request.
    pub classzone_idx: usize,
    /// Whether kswapd is asleep (waiting to be woken).
    pub kswapd_sleeping: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `kernel-reclaim.md` §1: the x86-64 zones in index order, named as `/proc/zoneinfo`
    /// and `/proc/vmstat` name them.
    #[test]
    fn zones_are_named_as_zoneinfo_names_them() {
        let names: Vec<&str> = [ZONE_DMA, ZONE_DMA32, ZONE_NORMAL]
            .iter()
            .map(|&i| Zone::new(i, 0, 1).name())
            .collect();
        assert_eq!(names, ["DMA", "DMA32", "Normal"]);
    }
}
