//! LRU insertion, activation and rotation (`mm/swap.c`).
//!
//! mmsim deviation: no per-cpu pagevecs; pages reach their list at once (the kernel's
//! `lru_add_drain` before every scan makes the difference small).

use super::mmzone::Zone;
use super::page::{Lru, Pfn, PG_ACTIVE, PG_DIRTY, PG_LOCKED, PG_LRU, PG_UNEVICTABLE, PG_WRITEBACK};
use super::vmstat::VmEvent;
use super::Kernel;

/// `add_page_to_lru_list`: put a page at the head of `lru`.
#[inline]
pub fn add_page_to_lru_list(k: &mut Kernel, pfn: Pfn, lru: Lru) {
    add_to_lru(k, pfn, lru, false);
}

/// `add_page_to_lru_list_tail`: put a page where reclaim takes the next one.
#[inline]
pub fn add_page_to_lru_list_tail(k: &mut Kernel, pfn: Pfn, lru: Lru) {
    add_to_lru(k, pfn, lru, true);
}

#[inline]
fn add_to_lru(k: &mut Kernel, pfn: Pfn, lru: Lru, tail: bool) {
    let zi = k.page_zone(pfn);
    let f = &mut k.pages.flags[pfn as usize];
    *f = (*f & !super::page::LRU_MASK) | PG_LRU | lru as u32;
    let mc = k.memcg.page_lruvec_memcg(pfn);
    let z = &mut k.zones[zi];
    let list = &mut z.mem_cgroup_lruvec_mut(mc).lists[lru as usize];
    if tail {
        list.add_tail(&mut k.pages, pfn);
    } else {
        list.add(&mut k.pages, pfn);
    }
    z.mod_stat(Zone::lru_stat(lru), 1);
}

/// `del_page_from_lru_list`: take a page off its list (clears PG_lru).
#[inline]
pub fn del_page_from_lru_list(k: &mut Kernel, pfn: Pfn) {
    let zi = k.page_zone(pfn);
    let lru = k.pages.lru(pfn);
    k.pages.clear(pfn, PG_LRU);
    let mc = k.memcg.page_lruvec_memcg(pfn);
    let z = &mut k.zones[zi];
    z.mem_cgroup_lruvec_mut(mc).lists[lru as usize].del(&mut k.pages, pfn);
    z.mod_stat(Zone::lru_stat(lru), -1);
}

/// `lru_cache_add_lru` (via `__pagevec_lru_add_fn`): a new page joins `lru` and counts as
/// scanned, and as rotated if it goes onto an active list (`update_page_reclaim_stat`).
pub fn lru_cache_add_lru(k: &mut Kernel, pfn: Pfn, lru: Lru) {
    if lru.is_active() {
        k.pages.set(pfn, PG_ACTIVE);
    }
    add_page_to_lru_list(k, pfn, lru);
    let zi = k.page_zone(pfn);
    let file = lru.is_file() as usize;
    let mc = k.memcg.page_lruvec_memcg(pfn);
    let stat = k.zones[zi].mem_cgroup_lruvec_mut(mc);
    stat.recent_scanned[file] += 1;
    if lru.is_active() {
        stat.recent_rotated[file] += 1;
    }
}

/// `rotate_reclaimable_page`: at the end of writeback of a PG_reclaim page, move it to the
/// tail of its inactive list so reclaim takes it next (`kernel-reclaim.md` §4.7).
pub fn rotate_reclaimable_page(k: &mut Kernel, pfn: Pfn) {
    let f = k.pages.flags[pfn as usize];
    if f & PG_LRU == 0
        || f & (PG_LOCKED | PG_DIRTY | PG_UNEVICTABLE | PG_WRITEBACK) != 0
        || f & PG_ACTIVE != 0
    {
        return;
    }
    let lru = k.pages.lru(pfn);
    del_page_from_lru_list(k, pfn);
    add_page_to_lru_list_tail(k, pfn, lru);
    k.count(VmEvent::pgrotated, 1);
}

/// `deactivate_page` (`lru_deactivate_fn`; mmsim applies it at once, without the per-cpu
/// pagevec): a page `invalidate_mapping_pages` could not drop goes to its inactive list,
/// unreferenced: at the head with PG_reclaim if dirty or under writeback (reclaim takes it
/// when its IO ends), else at the tail (`pgrotated`). Mapped and unevictable pages, and
/// pages off the LRU, stay as they are.
pub fn deactivate_page(k: &mut Kernel, pfn: Pfn) {
    let f = k.pages.flags[pfn as usize];
    if f & PG_LRU == 0 || f & PG_UNEVICTABLE != 0 || k.pages.mapped(pfn) {
        return;
    }
    let lru = k.pages.lru(pfn);
    let inactive = Lru::of(lru.is_file(), false);
    del_page_from_lru_list(k, pfn);
    k.pages.clear(pfn, PG_ACTIVE | super::page::PG_REFERENCED);
    if f & (PG_WRITEBACK | PG_DIRTY) != 0 {
        add_page_to_lru_list(k, pfn, inactive);
        k.pages.set(pfn, super::page::PG_RECLAIM);
    } else {
        add_page_to_lru_list_tail(k, pfn, inactive);
        k.count(VmEvent::pgrotated, 1);
    }
    if f & PG_ACTIVE != 0 {
        k.count(VmEvent::pgdeactivate, 1);
    }
    let zi = k.page_zone(pfn);
    let mc = k.memcg.page_lruvec_memcg(pfn);
    k.zones[zi].mem_cgroup_lruvec_mut(mc).recent_scanned[lru.is_file() as usize] += 1;
}
