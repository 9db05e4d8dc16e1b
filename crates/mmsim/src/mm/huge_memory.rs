//! Transparent hugepages (`mm/huge_memory.c`, 3.x): huge-page faults, khugepaged's
//! collapses, splitting under reclaim, and the boot-time raise of the watermarks.
//!
//! A transparent huge page is 512 frames of one pageblock, allocated at order 9 and mapped
//! by one PMD. mmsim keeps its frames as 512 ordinary anonymous pages on the LRU, each with
//! its own PTE young bit, and marks the pageblock ([`Zone::in_thp`]): what the allocator,
//! compaction (which cannot move a THP in 3.x) and the `thp_*` counters see is the kernel's;
//! reclaim scans the 512 pages one by one where the kernel takes the compound page as one
//! unit and tests the PMD's young bit once. Reclaim splits a THP where the kernel does, when
//! it adds one of its pages to swap (`add_to_swap` → `split_huge_page`), and from then on
//! the pages are ordinary in the kernel too.
//!
//! - A first-touch fault tries a huge page (`do_huge_pmd_anonymous_page`) when the mapping
//!   may hold one (`enabled`), the aligned 2 MiB range around the address lies within what
//!   the mapping covers now, and nothing is mapped in it yet (its PMD is none). The
//!   allocation is `GFP_TRANSHUGE` (no kswapd, no retry; direct compaction while `defrag`
//!   is `always`, the 3.x default); when it fails, or the memcg charge does, the fault falls
//!   back to a small page (`thp_fault_fallback`).
//! - khugepaged wakes every `scan_sleep_millisecs` (10 s) and scans `pages_to_scan` (4,096)
//!   pages' worth of PMDs of the mms on its list, in the order they entered it, resuming
//!   where it stopped. A range whose PTEs are all present anonymous pages mapped once (not
//!   in the swap cache, not locked, on the LRU) or none, at most `max_ptes_none` (511) of
//!   them none, with at least one page referenced, is collapsed: a new huge page is
//!   allocated (`thp_collapse_alloc`; on failure `thp_collapse_alloc_failed` and a sleep of
//!   `alloc_sleep_millisecs`, 60 s), the pages are copied into it and freed, and the none
//!   PTEs become zeroed pages of it.
//!
//! When khugepaged runs (`enabled` is `always` or `madvise`) on a machine of 512 MiB or
//! more, `hugepage_init` → `set_recommended_min_free_kbytes` raises `min_free_kbytes` so that
//! two pageblocks per zone can stay free for MIGRATE_RESERVE and, per zone, three pageblocks
//! of each of the three other types for fallbacks, capped at 5% of lowmem. On a 4 GiB+
//! machine with three zones that is 16,896 pages (67,584 KiB), several times the default.

use super::memory::{
    self, FaultCost, Vma, BRK_TOP_PAD_PAGES, PTE_PFN_MASK, PTE_PRESENT, PTE_YOUNG, VM_BRK,
    VM_HUGEPAGE,
};
use super::mmzone::{Zone, MIGRATE_TYPES, PAGEBLOCK_NR_PAGES};
use super::page::{
    Pfn, PG_ANON, PG_ISOLATED, PG_LOCKED, PG_LRU, PG_REFERENCED, PG_SWAPCACHE, PG_WRITEBACK,
};
use super::page_alloc::{alloc_pages, free_pages, AllocError};
use super::vmstat::{VmEvent, ZoneStat};
use super::{memcontrol, Gfp, Kernel, World};
use crate::calibration::{COPY_PAGE_NS, MINOR_FAULT_NS, PAGE_SIZE, TOUCH_PAGE_NS};
use crate::engine::{self, CpuMode, Nanos, SEC};
use crate::presets::Switch;

/// `/sys/kernel/mm/transparent_hugepage/enabled`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ThpEnabled {
    Always,
    Madvise,
    /// mmsim's default, so that a scenario asks for huge pages (the era's distribution
    /// kernels mostly shipped `always`).
    #[default]
    Never,
}

impl ThpEnabled {
    /// Its name in sysfs and in a scenario.
    pub fn name(self) -> &'static str {
        match self {
            ThpEnabled::Always => "always",
            ThpEnabled::Madvise => "madvise",
            ThpEnabled::Never => "never",
        }
    }

    /// `khugepaged_enabled()`: khugepaged runs for `always` and `madvise`.
    pub fn khugepaged_enabled(self) -> bool {
        self != ThpEnabled::Never
    }
}

/// `HPAGE_PMD_ORDER`: a huge page is a pageblock on x86-64.
pub const HPAGE_PMD_ORDER: u32 = 9;
/// `HPAGE_PMD_NR`.
pub const HPAGE_PMD_NR: u32 = 1 << HPAGE_PMD_ORDER;
/// `khugepaged/pages_to_scan`'s default: eight PMDs a wake-up.
pub const KHUGEPAGED_PAGES_TO_SCAN: u32 = HPAGE_PMD_NR * 8;
/// `khugepaged/scan_sleep_millisecs`'s default.
pub const KHUGEPAGED_SCAN_SLEEP: Nanos = 10 * SEC;
/// `khugepaged/alloc_sleep_millisecs`'s default: the nap after a failed allocation.
pub const KHUGEPAGED_ALLOC_SLEEP: Nanos = 60 * SEC;
/// `khugepaged/max_ptes_none`'s default: a range with a single page present collapses.
pub const KHUGEPAGED_MAX_PTES_NONE: u32 = HPAGE_PMD_NR - 1;

/// khugepaged's scan list and cursor (`khugepaged_scan`, its `mm_slot`s).
#[derive(Clone, Debug, Default)]
pub struct Khugepaged {
    /// The mms on the list, in the order they entered it (`khugepaged_enter`).
    pub mm_slots: Vec<usize>,
    /// The slot being scanned.
    pub slot: usize,
    /// The next virtual page of that mm to scan from (`khugepaged_scan.address`).
    pub vpn: u32,
}

/// `alloc_hugepage_gfpmask` with `defrag` at its 3.x default (`always`; khugepaged's own
/// `defrag` at `yes`): `GFP_TRANSHUGE`, which may compact and reclaim directly, without
/// `__GFP_NO_KSWAPD` under c6543459.
pub fn thp_gfp(k: &Kernel) -> Gfp {
    if k.sw.on(Switch::RemoveGfpNoKswapd) {
        Gfp(Gfp::TRANSHUGE.0 & !Gfp::NO_KSWAPD)
    } else {
        Gfp::TRANSHUGE
    }
}

/// Whether a mapping may hold transparent huge pages (`transparent_hugepage_enabled`): an
/// anonymous one, under `always`, or under `madvise` with `MADV_HUGEPAGE`.
fn vma_thp_ok(enabled: ThpEnabled, v: &Vma) -> bool {
    v.file.is_none()
        && match enabled {
            ThpEnabled::Always => true,
            ThpEnabled::Madvise => v.flags & VM_HUGEPAGE != 0,
            ThpEnabled::Never => false,
        }
}

/// The first page of the 2 MiB range around `vpn` if a fault there may try a huge page:
/// the range lies within what its mapping covers now and its PMD is none (no page table,
/// so nothing mapped in it).
pub fn thp_fault_range(k: &Kernel, mm: usize, vpn: u32) -> Option<u32> {
    let m = &k.mms[mm];
    let (v, _) = m.find_vma(vpn)?;
    let vma = &m.vmas[v];
    if !vma_thp_ok(k.thp, vma) {
        return None;
    }
    let r = vpn & !(HPAGE_PMD_NR - 1);
    if r < vma.start || r + HPAGE_PMD_NR > vma.end_now() || m.pgtables.present(vpn) {
        return None;
    }
    Some(r)
}

/// What a first-touch anonymous fault at `vpn` does before anything else when THP is on:
/// a [`VM_BRK`] heap has grown over the page (`malloc` grew it before the program wrote
/// there), and the mm enters khugepaged's list once it has a mapping that may hold huge
/// pages. Returns whether the fault tries a huge page.
pub fn anon_fault_prepare(k: &mut Kernel, mm: usize, vpn: u32) -> bool {
    if k.thp == ThpEnabled::Never {
        return false;
    }
    let enabled = k.thp;
    let m = &mut k.mms[mm];
    let Some((v, i)) = m.find_vma(vpn) else {
        return false;
    };
    let vma = &mut m.vmas[v];
    if vma.flags & VM_BRK != 0 {
        let grown = (i as u32 + 1 + BRK_TOP_PAD_PAGES).min(vma.ptes.len() as u32);
        vma.brk = vma.brk.max(grown);
    }
    if !vma_thp_ok(enabled, vma) {
        return false;
    }
    if !m.khugepaged {
        m.khugepaged = true;
        k.khugepaged.mm_slots.push(mm);
    }
    thp_fault_range(k, mm, vpn).is_some()
}

/// Whether every PTE of the range from `r` is none.
fn range_none(k: &Kernel, mm: usize, r: u32) -> bool {
    let m = &k.mms[mm];
    let Some((v, i)) = m.find_vma(r) else {
        return false;
    };
    m.vmas[v].ptes[i..i + HPAGE_PMD_NR as usize]
        .iter()
        .all(|&p| p == 0)
}

/// Map the 512 frames from `page` at the range from `r`: `page_add_new_anon_rmap` of a huge
/// page, its pageblock marked.
fn map_huge_page(k: &mut Kernel, mm: usize, r: u32, page: Pfn, mc: usize) {
    for i in 0..HPAGE_PMD_NR {
        memory::map_new_anon_page(k, mm, r + i, page + i, mc);
    }
    let zi = k.page_zone(page);
    k.zones[zi].set_thp(page, true);
    k.zones[zi].mod_stat(ZoneStat::nr_anon_transparent_hugepages, 1);
}

/// `do_huge_pmd_anonymous_page`: a huge page for a first-touch fault, if the fault may try
/// one and gets one. `Ok(None)`: it falls back to a small page.
pub async fn do_huge_pmd_anonymous_page(
    w: &World,
    mm: usize,
    vpn: u32,
) -> Result<Option<FaultCost>, AllocError> {
    let Some(r) = ({
        let mut k = w.borrow_mut();
        anon_fault_prepare(&mut k, mm, vpn).then_some(vpn & !(HPAGE_PMD_NR - 1))
    }) else {
        return Ok(None);
    };
    let gfp = thp_gfp(&w.borrow());
    let page = match alloc_pages(w, gfp, HPAGE_PMD_ORDER).await {
        Ok(page) => page,
        Err(AllocError::Killed) => return Err(AllocError::Killed),
        Err(_) => {
            w.borrow_mut().count(VmEvent::thp_fault_fallback, 1);
            return Ok(None);
        }
    };
    w.borrow_mut().count(VmEvent::thp_fault_alloc, 1);
    let mc = memcontrol::mm_memcg(&w.borrow(), mm);
    let charged = memcontrol::try_charge_thp(w, mc, HPAGE_PMD_NR as u64).await;
    // The page table deposited with the huge PMD (`pgtable_trans_huge_deposit`), used when
    // the huge page is split.
    let table = match charged {
        Ok(()) => memory::pgtable_alloc(w, mm, vpn).await,
        Err(_) => Err(AllocError::NoMemory),
    };
    let mut k = w.borrow_mut();
    if table.is_err() || k.mms[mm].dead || !range_none(&k, mm, r) {
        // No charge, no table, or the range was faulted meanwhile: back to a small page.
        if charged.is_ok() {
            memcontrol::cancel_charge(&mut k, mc, HPAGE_PMD_NR as u64);
        }
        free_pages(&mut k, page, HPAGE_PMD_ORDER);
        drop(k);
        if let Err(AllocError::Killed) = table {
            return Err(AllocError::Killed);
        }
        return Ok(None);
    }
    map_huge_page(&mut k, mm, r, page, mc);
    k.count(VmEvent::pgfault, 1);
    k.mms[mm].min_flt += 1;
    Ok(Some(FaultCost {
        major: false,
        // clear_huge_page: 512 pages zeroed.
        cpu: MINOR_FAULT_NS + HPAGE_PMD_NR as Nanos * TOUCH_PAGE_NS,
    }))
}

/// `split_huge_page` of the huge page holding `pfn`, if it is one: the PMD mapping ends and
/// its 512 pages go on as small pages (`thp_split`).
pub fn split_huge_page(k: &mut Kernel, pfn: Pfn) {
    let zi = k.page_zone(pfn);
    if !k.zones[zi].in_thp(pfn) {
        return;
    }
    k.zones[zi].set_thp(pfn, false);
    k.zones[zi].mod_stat(ZoneStat::nr_anon_transparent_hugepages, -1);
    k.count(VmEvent::thp_split, 1);
}

/// Frame `pfn` of zone `zi` is freed: if it was part of a huge page (the process exited,
/// or unmapped the range), the kernel frees the compound page whole, so the pageblock is
/// no longer a huge page.
#[inline]
pub fn free_huge_page_frame(k: &mut Kernel, zi: usize, pfn: Pfn) {
    let z = &mut k.zones[zi];
    if z.in_thp(pfn) {
        z.set_thp(pfn, false);
        z.mod_stat(ZoneStat::nr_anon_transparent_hugepages, -1);
    }
}

/// khugepaged: scan, collapse, sleep, for the whole run.
pub async fn khugepaged(w: World) {
    loop {
        let nap = khugepaged_do_scan(&w).await;
        engine::sleep(&w, nap).await;
    }
}

/// One wake-up's scan (`khugepaged_do_scan`): up to `pages_to_scan` pages' worth of PMDs.
/// Returns how long to sleep.
async fn khugepaged_do_scan(w: &World) -> Nanos {
    let mut progress = 0;
    while progress < KHUGEPAGED_PAGES_TO_SCAN {
        let (next, cost) = next_scan_range(&mut w.borrow_mut());
        progress += cost;
        let Some((mm, r)) = next else {
            if w.borrow().khugepaged.mm_slots.is_empty() {
                break;
            }
            continue;
        };
        if !khugepaged_scan_pmd(&w.borrow(), mm, r) {
            continue;
        }
        if !collapse_huge_page(w, mm, r).await {
            return KHUGEPAGED_ALLOC_SLEEP;
        }
    }
    KHUGEPAGED_SCAN_SLEEP
}

/// The next range khugepaged's cursor reaches (`khugepaged_scan_mm_slot`'s walk), with the
/// progress it counts: a PMD's pages for a range, one for a mapping or mm passed over. An
/// exited mm leaves the list (`collect_mm_slot`).
fn next_scan_range(k: &mut Kernel) -> (Option<(usize, u32)>, u32) {
    let enabled = k.thp;
    let kh = &mut k.khugepaged;
    if kh.mm_slots.is_empty() {
        return (None, 0);
    }
    if kh.slot >= kh.mm_slots.len() {
        kh.slot = 0;
        kh.vpn = 0;
    }
    let mm = kh.mm_slots[kh.slot];
    let m = &k.mms[mm];
    if m.dead {
        kh.mm_slots.remove(kh.slot);
        k.mms[mm].khugepaged = false;
        kh.vpn = 0;
        return (None, 1);
    }
    let mut passed = 0;
    for vma in &m.vmas {
        let hstart = vma.start.next_multiple_of(HPAGE_PMD_NR).max(kh.vpn);
        let hend = vma.end_now() & !(HPAGE_PMD_NR - 1);
        if !vma_thp_ok(enabled, vma) || hstart >= hend {
            if vma.end_now() > kh.vpn {
                passed += 1;
            }
            continue;
        }
        kh.vpn = hstart + HPAGE_PMD_NR;
        return (Some((mm, hstart)), passed + HPAGE_PMD_NR);
    }
    // Done with this mm: on to the next.
    kh.slot += 1;
    kh.vpn = 0;
    (None, passed + 1)
}

/// `khugepaged_scan_pmd`: whether the range from `r` may collapse. Its PMD must map a page
/// table (not none, not huge already); every PTE is none (at most `max_ptes_none`) or a
/// present anonymous page that only this PTE holds (not in the swap cache, not locked or
/// under writeback, on the LRU); at least one page is referenced.
fn khugepaged_scan_pmd(k: &Kernel, mm: usize, r: u32) -> bool {
    let m = &k.mms[mm];
    if m.dead || !m.pgtables.present(r) {
        return false;
    }
    let Some((v, i)) = m.find_vma(r) else {
        return false;
    };
    let mut none = 0;
    let mut referenced = false;
    for &pte in &m.vmas[v].ptes[i..i + HPAGE_PMD_NR as usize] {
        if pte == 0 {
            none += 1;
            if none > KHUGEPAGED_MAX_PTES_NONE {
                return false;
            }
            continue;
        }
        if pte & PTE_PRESENT == 0 {
            return false;
        }
        let pfn = pte & PTE_PFN_MASK;
        if k.zones[k.page_zone(pfn)].in_thp(pfn) {
            return false;
        }
        let f = k.pages.flags[pfn as usize];
        if f & PG_ANON == 0
            || f & PG_LRU == 0
            || f & (PG_LOCKED | PG_ISOLATED | PG_WRITEBACK | PG_SWAPCACHE) != 0
            || k.pages.mapcount(pfn) != 1
        {
            return false;
        }
        referenced |= pte & PTE_YOUNG != 0 || f & PG_REFERENCED != 0;
    }
    referenced
}

/// `collapse_huge_page`: allocate a huge page, copy the range's pages into it, free them,
/// map it. Returns false only when the allocation failed (khugepaged then naps).
async fn collapse_huge_page(w: &World, mm: usize, r: u32) -> bool {
    let gfp = thp_gfp(&w.borrow());
    let page = match alloc_pages(w, gfp, HPAGE_PMD_ORDER).await {
        Ok(page) => page,
        Err(_) => {
            w.borrow_mut().count(VmEvent::thp_collapse_alloc_failed, 1);
            return false;
        }
    };
    w.borrow_mut().count(VmEvent::thp_collapse_alloc, 1);
    let mc = memcontrol::mm_memcg(&w.borrow(), mm);
    let charged = memcontrol::try_charge_thp(w, mc, HPAGE_PMD_NR as u64).await;
    // __collapse_huge_page_copy: each present page copied, each none PTE zeroed.
    engine::run_cpu(w, HPAGE_PMD_NR as Nanos * COPY_PAGE_NS, CpuMode::System).await;
    let mut k = w.borrow_mut();
    // Under mmap_sem for writing, the range is looked at again
    // (__collapse_huge_page_isolate).
    if charged.is_err() || !khugepaged_scan_pmd(&k, mm, r) {
        if charged.is_ok() {
            memcontrol::cancel_charge(&mut k, mc, HPAGE_PMD_NR as u64);
        }
        free_pages(&mut k, page, HPAGE_PMD_ORDER);
        return true;
    }
    for vpn in r..r + HPAGE_PMD_NR {
        let pte = std::mem::take(k.mms[mm].pte_mut(vpn));
        if pte != 0 {
            let old = pte & PTE_PFN_MASK;
            super::rmap::page_remove_rmap(&mut k, old);
            k.mms[mm].rss -= 1;
            memory::release_unmapped_anon(&mut k, old);
        }
    }
    map_huge_page(&mut k, mm, r, page, mc);
    true
}

/// `hugepage_init` turns THP off on machines with less memory than this, in pages.
pub const THP_MIN_TOTALRAM_PAGES: u64 = (512 << 20) / PAGE_SIZE;

/// `MIGRATE_PCPTYPES`: the types with per-cpu lists (unmovable, reclaimable, movable).
const MIGRATE_PCPTYPES: u64 = MIGRATE_TYPES as u64 - 1;

/// `set_recommended_min_free_kbytes`: the `min_free_kbytes` khugepaged asks for, given the
/// zones with their current watermarks (the 5% cap is of `nr_free_buffer_pages`, the
/// lowmem pages above the high watermarks).
pub fn recommended_min_free_kbytes(zones: &[Zone]) -> u64 {
    let nr_zones = zones.iter().filter(|z| z.populated()).count() as u64;
    let mut pages = PAGEBLOCK_NR_PAGES * nr_zones * 2;
    pages += PAGEBLOCK_NR_PAGES * nr_zones * MIGRATE_PCPTYPES * MIGRATE_PCPTYPES;
    let free_buffer: u64 = zones
        .iter()
        .map(|z| z.managed_pages.saturating_sub(z.high_wmark()))
        .sum();
    pages.min(free_buffer / 20) * (PAGE_SIZE / 1024)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::invariants;
    use crate::mm::memory::{handle_mm_fault, handle_mm_fault_now, Mm, PTE_DIRTY};
    use crate::mm::page_alloc::{build_zones, calculate_min_free_kbytes, setup_per_zone_wmarks};
    use crate::sim::run_task;

    /// A machine of `ram_mib` MiB with `enabled` THP and `swap_mib` MiB of swap, and an
    /// empty mm.
    fn boot(ram_mib: u64, swap_mib: u64, enabled: ThpEnabled) -> (World, usize) {
        let mut s = crate::sim::scenario_for_test(ram_mib, swap_mib);
        s.transparent_hugepage = enabled;
        let kernel = crate::presets::resolve("3.9", &[]).expect("3.9");
        let w = crate::sim::boot(&s, &kernel, 1).expect("boots");
        let mm = {
            let mut k = w.borrow_mut();
            // Mappings start off a 2 MiB boundary, as they mostly do.
            k.mms.push(Mm {
                next_vpn: 100,
                ..Mm::default()
            });
            k.mms.len() - 1
        };
        (w, mm)
    }

    /// The first page of the first 2 MiB range inside a mapping from `start`.
    fn first_range(start: u32) -> u32 {
        start.next_multiple_of(HPAGE_PMD_NR)
    }

    fn huge_pages(k: &Kernel) -> u64 {
        k.global_stat(ZoneStat::nr_anon_transparent_hugepages)
    }

    #[test]
    fn a_first_touch_inside_a_large_mapping_maps_a_huge_page() {
        let (w, mm) = boot(1024, 0, ThpEnabled::Always);
        let start = w.borrow_mut().mms[mm].mmap_anon(4 * HPAGE_PMD_NR, 0);
        let r = first_range(start);
        let w2 = w.clone();
        run_task(&w, SEC, async move {
            assert_eq!(handle_mm_fault_now(&mut w2.borrow_mut(), mm, r + 7), None);
            let cost = handle_mm_fault(&w2, mm, r + 7, true).await.expect("a page");
            // A fault, and 512 pages zeroed.
            assert_eq!(cost.cpu, MINOR_FAULT_NS + 512 * TOUCH_PAGE_NS);
        });
        let k = w.borrow();
        let head = k.mms[mm].pte(r) & PTE_PFN_MASK;
        assert_eq!(head % HPAGE_PMD_NR, 0, "an order-9 block");
        for i in 0..HPAGE_PMD_NR {
            let pte = k.mms[mm].pte(r + i);
            assert_eq!(pte & PTE_PFN_MASK, head + i);
            assert!(pte & PTE_PRESENT != 0 && pte & PTE_DIRTY != 0);
        }
        assert_eq!(k.mms[mm].pte(r - 1), 0);
        assert_eq!(k.mms[mm].pte(r + HPAGE_PMD_NR), 0);
        assert!(k.zones[k.page_zone(head)].in_thp(head));
        assert_eq!((k.mms[mm].rss, k.mms[mm].min_flt), (512, 1));
        assert_eq!(k.events.get(VmEvent::thp_fault_alloc), 1);
        assert_eq!(k.events.get(VmEvent::pgfault), 1);
        assert_eq!(huge_pages(&k), 1);
        assert_eq!(k.khugepaged.mm_slots, vec![mm]);
        invariants::check(&k).unwrap();
    }

    #[test]
    fn no_huge_page_without_thp_or_where_the_range_leaves_the_mapping() {
        let (w, mm) = boot(1024, 0, ThpEnabled::Never);
        let mut k = w.borrow_mut();
        let start = k.mms[mm].mmap_anon(4 * HPAGE_PMD_NR, 0);
        assert!(!anon_fault_prepare(&mut k, mm, first_range(start)));
        handle_mm_fault_now(&mut k, mm, first_range(start)).expect("a small page");
        assert_eq!(k.mms[mm].rss, 1);
        assert!(k.khugepaged.mm_slots.is_empty());
        drop(k);
        let (w, mm) = boot(1024, 0, ThpEnabled::Always);
        let mut k = w.borrow_mut();
        // A mapping of 1.5 ranges from an aligned start: the second range leaves it.
        let start = first_range(k.mms[mm].next_vpn);
        k.mms[mm].next_vpn = start;
        k.mms[mm].mmap_anon(HPAGE_PMD_NR * 3 / 2, 0);
        assert_eq!(thp_fault_range(&k, mm, start + 3), Some(start));
        assert_eq!(thp_fault_range(&k, mm, start + HPAGE_PMD_NR + 3), None);
        assert!(range_none(&k, mm, start));
        // A mapping that ends where its range ends holds it.
        let s3 = first_range(k.mms[mm].next_vpn);
        k.mms[mm].next_vpn = s3;
        k.mms[mm].mmap_anon(HPAGE_PMD_NR, 0);
        assert_eq!(thp_fault_range(&k, mm, s3 + HPAGE_PMD_NR - 1), Some(s3));
        assert!(range_none(&k, mm, s3));
        k.thp = ThpEnabled::Never;
        handle_mm_fault_now(&mut k, mm, start + 1).expect("a small page");
        k.thp = ThpEnabled::Always;
        assert!(!range_none(&k, mm, start), "a page mapped in it");
        assert_eq!(
            thp_fault_range(&k, mm, start + 3),
            None,
            "its PMD is not none"
        );
        // Madvise wants MADV_HUGEPAGE.
        k.thp = ThpEnabled::Madvise;
        assert_eq!(thp_fault_range(&k, mm, start + 3), None);
        let s2 = k.mms[mm].mmap_anon(4 * HPAGE_PMD_NR, VM_HUGEPAGE);
        assert!(thp_fault_range(&k, mm, first_range(s2)).is_some());
    }

    #[test]
    fn a_growing_heap_takes_small_pages_and_khugepaged_collapses_them() {
        let (w, mm) = boot(1024, 0, ThpEnabled::Always);
        let start = w.borrow_mut().mms[mm].mmap_anon(4 * HPAGE_PMD_NR, VM_BRK);
        let r = first_range(start);
        let touched = r + HPAGE_PMD_NR + 100 - start;
        {
            let mut k = w.borrow_mut();
            for vpn in start..start + touched {
                assert!(thp_fault_range(&k, mm, vpn).is_none());
                handle_mm_fault_now(&mut k, mm, vpn).expect("a small page");
            }
            let brk = k.mms[mm].vmas[0].brk;
            assert_eq!(brk, touched + BRK_TOP_PAD_PAGES);
            assert_eq!(k.events.get(VmEvent::thp_fault_alloc), 0);
            assert_eq!(k.mms[mm].rss, touched as u64);
            // Unreferenced since: the second range is not collapsed.
            for vpn in r + HPAGE_PMD_NR..start + touched {
                *k.mms[mm].pte_mut(vpn) &= !PTE_YOUNG;
            }
        }
        let w2 = w.clone();
        run_task(&w, 25 * SEC, async move {
            engine::sleep(&w2, 21 * SEC).await;
        });
        let k = w.borrow();
        // The first whole range in the heap collapsed; the one the heap has not grown over,
        // and the one holding only old pages, did not.
        assert_eq!(k.events.get(VmEvent::thp_collapse_alloc), 1);
        // khugepaged copied 512 pages.
        let kh = (0..k.sched.nr_tasks())
            .map(|t| crate::engine::TaskId(t as u32))
            .find(|&t| k.sched.task_name(t) == "khugepaged")
            .expect("khugepaged runs");
        let (_, sys) = k.sched.task_times(kh);
        assert!(
            (512 * COPY_PAGE_NS..520 * COPY_PAGE_NS).contains(&sys),
            "{sys}"
        );
        let head = k.mms[mm].pte(r) & PTE_PFN_MASK;
        assert!(k.zones[k.page_zone(head)].in_thp(head));
        for i in 0..HPAGE_PMD_NR {
            assert_eq!(k.mms[mm].pte(r + i) & PTE_PFN_MASK, head + i);
        }
        let next = k.mms[mm].pte(r + HPAGE_PMD_NR) & PTE_PFN_MASK;
        assert!(!k.zones[k.page_zone(next)].in_thp(next));
        assert_eq!(k.mms[mm].rss, touched as u64);
        assert_eq!(huge_pages(&k), 1);
        invariants::check(&k).unwrap();
    }

    #[test]
    fn khugepaged_walks_its_list_range_by_range_and_drops_exited_mms() {
        let (w, a) = boot(1024, 0, ThpEnabled::Madvise);
        let mut k = w.borrow_mut();
        // mm a: a mapping without MADV_HUGEPAGE, then one with three whole ranges and 100
        // pages of a fourth; mm b: two ranges from vpn 0; mm c: exited.
        k.mms[a].mmap_anon(1000, 0);
        let v2 = k.mms[a].mmap_anon(4 * HPAGE_PMD_NR + 8, VM_HUGEPAGE);
        assert_eq!(
            (v2, first_range(v2), v2 + 4 * HPAGE_PMD_NR + 8),
            (1116, 1536, 3172)
        );
        k.mms.push(Mm::default());
        let b = k.mms.len() - 1;
        k.mms[b].mmap_anon(2 * HPAGE_PMD_NR, VM_HUGEPAGE);
        k.mms.push(Mm {
            dead: true,
            khugepaged: true,
            ..Mm::default()
        });
        let c = k.mms.len() - 1;
        k.khugepaged.mm_slots = vec![a, b, c];
        let mut walk = Vec::new();
        for _ in 0..9 {
            walk.push(next_scan_range(&mut k));
        }
        assert_eq!(
            walk,
            vec![
                (Some((a, 1536)), 1 + HPAGE_PMD_NR),
                (Some((a, 2048)), HPAGE_PMD_NR),
                (Some((a, 2560)), HPAGE_PMD_NR),
                (None, 2),
                (Some((b, 0)), HPAGE_PMD_NR),
                (Some((b, 512)), HPAGE_PMD_NR),
                (None, 1),
                (None, 1),
                (Some((a, 1536)), 1 + HPAGE_PMD_NR),
            ]
        );
        assert_eq!(k.khugepaged.mm_slots, vec![a, b]);
        assert!(!k.mms[c].khugepaged);
        k.khugepaged.mm_slots.clear();
        assert_eq!(next_scan_range(&mut k), (None, 0));
    }

    #[test]
    fn khugepaged_collapses_eight_ranges_a_wake_up() {
        let (w, mm) = boot(1024, 0, ThpEnabled::Always);
        {
            let mut k = w.borrow_mut();
            let start = k.mms[mm].mmap_anon(21 * HPAGE_PMD_NR, VM_BRK);
            for vpn in start..start + 20 * HPAGE_PMD_NR {
                handle_mm_fault_now(&mut k, mm, vpn).expect("a small page");
            }
        }
        let w2 = w.clone();
        run_task(&w, 20 * SEC, async move {
            // Its first scan, at boot, finds the heap on its list.
            engine::sleep(&w2, 5 * SEC).await;
            assert_eq!(w2.borrow().events.get(VmEvent::thp_collapse_alloc), 8);
            engine::sleep(&w2, 10 * SEC).await;
            assert_eq!(w2.borrow().events.get(VmEvent::thp_collapse_alloc), 16);
        });
        assert_eq!(huge_pages(&w.borrow()), 16);
    }

    #[test]
    fn khugepaged_leaves_a_range_with_a_swapped_or_shared_page() {
        let (w, mm) = boot(1024, 64, ThpEnabled::Always);
        let mut k = w.borrow_mut();
        let start = k.mms[mm].mmap_anon(4 * HPAGE_PMD_NR, VM_BRK);
        let r = first_range(start);
        for vpn in start..r + HPAGE_PMD_NR {
            handle_mm_fault_now(&mut k, mm, vpn).expect("a small page");
        }
        assert!(khugepaged_scan_pmd(&k, mm, r));
        let pfn = k.mms[mm].pte(r + 9) & PTE_PFN_MASK;
        // A page someone holds, or not on the LRU, or a second mapping: no collapse.
        for flag in [PG_LOCKED, PG_ISOLATED, PG_WRITEBACK] {
            k.pages.set(pfn, flag);
            assert!(!khugepaged_scan_pmd(&k, mm, r), "{flag:#x}");
            k.pages.clear(pfn, flag);
        }
        k.pages.clear(pfn, PG_LRU);
        assert!(!khugepaged_scan_pmd(&k, mm, r), "off the LRU");
        k.pages.set(pfn, PG_LRU);
        k.mapcount_add(pfn, 1);
        assert!(!khugepaged_scan_pmd(&k, mm, r), "mapped twice");
        k.mapcount_add(pfn, -1);
        // A swap entry in the range.
        let pte = k.mms[mm].pte(r + 9);
        *k.mms[mm].pte_mut(r + 9) = 5;
        assert!(!khugepaged_scan_pmd(&k, mm, r), "a swap entry");
        *k.mms[mm].pte_mut(r + 9) = pte;
        // Referenced by the page flag alone.
        for vpn in r..r + HPAGE_PMD_NR {
            *k.mms[mm].pte_mut(vpn) &= !PTE_YOUNG;
        }
        assert!(!khugepaged_scan_pmd(&k, mm, r), "nothing referenced");
        k.pages.set(pfn, PG_REFERENCED);
        assert!(khugepaged_scan_pmd(&k, mm, r), "PG_referenced");
        assert!(super::super::swapfile::add_to_swap(&mut k, pfn));
        assert!(!khugepaged_scan_pmd(&k, mm, r), "a page in the swap cache");
        // One page only, not referenced: nothing to gain.
        let s2 = k.mms[mm].mmap_anon(4 * HPAGE_PMD_NR, 0);
        let r2 = first_range(s2);
        k.thp = ThpEnabled::Never;
        handle_mm_fault_now(&mut k, mm, r2 + 4).expect("a small page");
        k.thp = ThpEnabled::Always;
        assert!(khugepaged_scan_pmd(&k, mm, r2), "511 PTEs none");
        *k.mms[mm].pte_mut(r2 + 4) &= !PTE_YOUNG;
        assert!(!khugepaged_scan_pmd(&k, mm, r2), "not referenced");
        // A range with no page table, and a huge page, are not scanned.
        assert!(!khugepaged_scan_pmd(&k, mm, r2 + HPAGE_PMD_NR));
    }

    #[test]
    fn reclaim_splits_a_huge_page_and_exit_frees_one() {
        let (w, mm) = boot(1024, 0, ThpEnabled::Always);
        let start = w.borrow_mut().mms[mm].mmap_anon(4 * HPAGE_PMD_NR, 0);
        let (r, r2) = (first_range(start), first_range(start) + HPAGE_PMD_NR);
        let w2 = w.clone();
        run_task(&w, SEC, async move {
            handle_mm_fault(&w2, mm, r, true).await.expect("a page");
            handle_mm_fault(&w2, mm, r2, true).await.expect("a page");
        });
        let mut k = w.borrow_mut();
        assert_eq!(huge_pages(&k), 2);
        let head = k.mms[mm].pte(r) & PTE_PFN_MASK;
        split_huge_page(&mut k, head + 17);
        assert!(!k.zones[k.page_zone(head)].in_thp(head));
        assert_eq!(k.events.get(VmEvent::thp_split), 1);
        split_huge_page(&mut k, head);
        assert_eq!(k.events.get(VmEvent::thp_split), 1, "split once");
        assert_eq!(huge_pages(&k), 1);
        invariants::check(&k).unwrap();
        let head2 = k.mms[mm].pte(r2) & PTE_PFN_MASK;
        memory::exit_mmap(&mut k, mm);
        assert!(!k.zones[k.page_zone(head2)].in_thp(head2));
        assert_eq!(huge_pages(&k), 0);
        assert_eq!(
            k.events.get(VmEvent::thp_split),
            1,
            "exit frees, not splits"
        );
        invariants::check(&k).unwrap();
        // Invariant 12: a marked pageblock of free frames, or a count that does not match.
        let zi = k.page_zone(head2);
        k.zones[zi].set_thp(head2, true);
        let e = invariants::check(&k).unwrap_err();
        assert!(e.contains("'transparent huge pages'") && e.contains("not an anonymous page"));
        k.zones[zi].set_thp(head2, false);
        k.zones[zi].mod_stat(ZoneStat::nr_anon_transparent_hugepages, 1);
        let e = invariants::check(&k).unwrap_err();
        assert!(e.contains("counts 1 huge pages, 0 pageblocks"), "{e}");
    }

    #[test]
    fn a_fault_falls_back_to_a_small_page_when_no_huge_page_can_be_had() {
        let (w, mm) = boot(1024, 0, ThpEnabled::Always);
        let start = w.borrow_mut().mms[mm].mmap_anon(4 * HPAGE_PMD_NR, 0);
        let r = first_range(start);
        // Every free block of order 9 or more taken, and half of each given back in single
        // pages: plenty free, nothing contiguous, and nothing compaction could move.
        {
            use crate::mm::page_alloc::{alloc_flags, free_page, get_page_from_freelist};
            let mut k = w.borrow_mut();
            let flags = alloc_flags::NO_WATERMARKS;
            let mut held = Vec::new();
            while let Some(p) = get_page_from_freelist(&mut k, Gfp::KERNEL, 9, flags) {
                held.push(p);
            }
            assert!(!held.is_empty());
            for p in held {
                for i in (1..HPAGE_PMD_NR).step_by(2) {
                    free_page(&mut k, p + i);
                }
            }
        }
        let w2 = w.clone();
        run_task(&w, SEC, async move {
            handle_mm_fault(&w2, mm, r, true).await.expect("a page");
        });
        let k = w.borrow();
        assert_eq!(k.events.get(VmEvent::thp_fault_alloc), 0);
        assert_eq!(k.events.get(VmEvent::thp_fault_fallback), 1);
        assert_eq!(k.mms[mm].rss, 1);
    }

    #[test]
    fn a_group_without_room_for_512_pages_gets_small_pages_and_no_collapse() {
        use crate::mm::memcontrol::{GroupConfig, MemCgroups};
        // No swap: the charge's one reclaim cannot take the range's pages away.
        let (w, _) = boot(1024, 0, ThpEnabled::Always);
        {
            let mut k = w.borrow_mut();
            let group = GroupConfig {
                name: "A".into(),
                parent: 0,
                limit_pages: Some(300),
                soft_limit_pages: None,
                use_hierarchy: false,
                swappiness: None,
            };
            let (frames, slots) = (k.pages.len(), k.swap.max as usize);
            k.memcg = MemCgroups::new(&[group], frames, slots, 60);
            for z in k.zones.iter_mut() {
                z.memcg_lruvecs = vec![Default::default(); 1];
            }
            k.sched.set_spawn_cgroup(Some(1));
        }
        let w2 = w.clone();
        run_task(&w, 25 * SEC, async move {
            let w = w2;
            let (mm, r) = {
                let mut k = w.borrow_mut();
                let task = k.sched.current();
                k.mms.push(Mm {
                    task: Some(task),
                    next_vpn: 100,
                    ..Mm::default()
                });
                let mm = k.mms.len() - 1;
                (mm, first_range(k.mms[mm].mmap_anon(4 * HPAGE_PMD_NR, 0)))
            };
            for vpn in r..r + 200 {
                handle_mm_fault(&w, mm, vpn, true).await.expect("a page");
            }
            {
                let k = w.borrow();
                // The huge page was allocated, its charge failed: small pages.
                assert_eq!(k.events.get(VmEvent::thp_fault_alloc), 1);
                assert_eq!(k.mms[mm].rss, 200);
                let head = k.mms[mm].pte(r) & PTE_PFN_MASK;
                assert!(!k.zones[k.page_zone(head)].in_thp(head));
            }
            // khugepaged finds the range and allocates, but cannot charge it either.
            engine::sleep(&w, 21 * SEC).await;
            let k = w.borrow();
            assert!(k.events.get(VmEvent::thp_collapse_alloc) >= 1);
            assert_eq!(k.mms[mm].rss, 200);
            let head = k.mms[mm].pte(r) & PTE_PFN_MASK;
            assert!(!k.zones[k.page_zone(head)].in_thp(head));
            assert!(k.memcg.groups[1].res.usage <= 300);
            invariants::check(&k).unwrap();
        });
    }

    /// Three populated zones ask for 11 pageblocks each: 67,584 KiB, against the default's
    /// ~11 MiB on a 7 GiB machine; a 256 MiB machine with two zones would be capped at 5%.
    #[test]
    fn khugepaged_asks_for_eleven_pageblocks_per_zone_at_most_five_percent_of_lowmem() {
        let mut zones = build_zones((7336u64 << 20) / PAGE_SIZE, 0);
        let base = calculate_min_free_kbytes(&zones);
        setup_per_zone_wmarks(&mut zones, base);
        assert!(base < 12_000, "{base}");
        assert_eq!(recommended_min_free_kbytes(&zones), 67_584);
        let mut small = build_zones((256u64 << 20) / PAGE_SIZE, 0);
        let base = calculate_min_free_kbytes(&small);
        setup_per_zone_wmarks(&mut small, base);
        let r = recommended_min_free_kbytes(&small);
        assert!(r < 2 * 11 * 2048, "capped: {r}");
        let five_percent: u64 = small
            .iter()
            .map(|z| z.managed_pages - z.high_wmark())
            .sum::<u64>()
            / 20
            * 4;
        assert_eq!(r, five_percent);
        assert!(ThpEnabled::Madvise.khugepaged_enabled());
        assert!(!ThpEnabled::Never.khugepaged_enabled());
    }
}
