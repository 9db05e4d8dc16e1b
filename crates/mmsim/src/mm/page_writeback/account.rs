//! Dirty and writeback page accounting (`set_page_dirty`, `clear_page_dirty_for_io`,
//! `test_set_page_writeback` and friends): the page flags and the zone, bdi and task
//! counters the dirty limits read.

use super::*;

/// The bdi a file page belongs to.
#[inline]
pub fn page_bdi(k: &crate::mm::Kernel, pfn: crate::mm::page::Pfn) -> usize {
    k.inodes[k.pages.mapping[pfn as usize] as usize].bdi
}

/// `global_dirtyable_memory` from the machine's counters.
pub fn global_dirtyable(k: &crate::mm::Kernel) -> u64 {
    use crate::mm::vmstat::ZoneStat as S;
    let g = |s| k.global_stat(s);
    // Called for every page a writer dirties: no allocation.
    let reserve = k.zones.each_ref().map(ZoneReserve::of);
    // dirty_balance_reserve came with 3.3 ("mm: try to distribute dirty pages fairly").
    let reserve = if k.writeback_2_6_37() {
        0
    } else {
        dirty_balance_reserve(&reserve)
    };
    let d = Dirtyable {
        free_pages: g(S::nr_free_pages),
        file_lru: g(S::nr_active_file) + g(S::nr_inactive_file),
        anon_lru: g(S::nr_active_anon) + g(S::nr_inactive_anon),
        nr_swap_pages: k.swap.nr_free(),
        dirty_balance_reserve: reserve,
        highmem_dirtyable: 0,
    };
    global_dirtyable_memory(&d)
}

/// `global_dirty_limits` from the machine's counters: (background, dirty) thresholds.
/// With patch 12 of the IO-less series v3 the background limit is at most 3/4 of the dirty
/// one ([`bg_gap_v3`]).
pub fn dirty_limits(k: &crate::mm::Kernel) -> (u64, u64) {
    let dirtyable = global_dirtyable(k);
    if v3_has(k, crate::presets::Switch::IolessDirtyBgGap) {
        return global_dirty_limits_by(dirtyable, &k.vm.dirty, false, bg_gap_v3);
    }
    global_dirty_limits(dirtyable, &k.vm.dirty, false)
}

/// [`dirty_limits`] where the kernel calls `global_dirty_limits`, which emits
/// `global_dirty_state`.
pub fn global_dirty_limits_traced(k: &mut crate::mm::Kernel) -> (u64, u64) {
    let (bg, thresh) = dirty_limits(k);
    crate::mm::trace::global_dirty_state(k, bg, thresh);
    (bg, thresh)
}

/// `account_page_dirtied`: a clean file page became dirty.
pub fn account_page_dirtied(
    k: &mut crate::mm::Kernel,
    pfn: crate::mm::page::Pfn,
    task: &mut DirtyTask,
) {
    use crate::mm::vmstat::ZoneStat as S;
    let zi = k.page_zone(pfn);
    k.zones[zi].mod_stat(S::nr_dirty, 1);
    k.zones[zi].mod_stat(S::nr_dirtied, 1);
    let bdi = page_bdi(k, pfn);
    k.bdis[bdi].reclaimable += 1;
    k.bdis[bdi].dirtied += 1;
    task_dirtied(task, &mut k.cpu_dirty);
    if k.writeback_2_6_37() {
        k.old_wb.task_dirty_inc(task);
    }
}

/// `set_page_dirty()`: dirty a page from a page table (write faults, unmapping a dirty PTE,
/// `page_mkclean`) through its mapping's `->set_page_dirty`. Since 2.6.39 it clears
/// PG_reclaim: a page reclaim marked for immediate reclaim is in use again. (`write(2)`
/// dirties through the filesystem's `write_end`, which leaves PG_reclaim alone.) Returns
/// whether it was clean before.
pub fn set_page_dirty(
    k: &mut crate::mm::Kernel,
    pfn: crate::mm::page::Pfn,
    task: &mut DirtyTask,
) -> bool {
    k.pages.clear(pfn, crate::mm::page::PG_RECLAIM);
    crate::mm::fs_ops::page_aops(k, pfn).set_page_dirty(k, pfn, task)
}

/// `clear_page_dirty_for_io`: writeback takes a dirty page. Returns whether it was dirty.
/// First `page_mkclean` moves the dirty bits of the PTEs mapping it to the page and
/// write-protects them, so a write through a mapping after writeback starts faults and
/// dirties the page again.
pub fn clear_page_dirty_for_io(k: &mut crate::mm::Kernel, pfn: crate::mm::page::Pfn) -> bool {
    use crate::mm::vmstat::ZoneStat as S;
    if crate::mm::rmap::page_mkclean(k, pfn) {
        // The dirtying is the writeback thread's; it never throttles on it.
        set_page_dirty(k, pfn, &mut DirtyTask::default());
    }
    // PG_reclaim stays: a page reclaim left to the flusher is rotated to the LRU tail when
    // this write completes (since 2.6.39 only set_page_dirty() clears it).
    if !k.pages.test_and_clear(pfn, crate::mm::page::PG_DIRTY) {
        return false;
    }
    crate::mm::inode::untag_page_dirty(k, pfn);
    let zi = k.page_zone(pfn);
    k.zones[zi].mod_stat(S::nr_dirty, -1);
    let bdi = page_bdi(k, pfn);
    k.bdis[bdi].reclaimable -= 1;
    true
}

/// `redirty_page_for_writepage`: a filesystem declined to write a page it was given.
pub fn redirty_page_for_writepage(k: &mut crate::mm::Kernel, pfn: crate::mm::page::Pfn) {
    use crate::mm::vmstat::ZoneStat as S;
    k.pages.set(pfn, crate::mm::page::PG_DIRTY);
    crate::mm::inode::tag_page_dirty(k, pfn);
    let zi = k.page_zone(pfn);
    k.zones[zi].mod_stat(S::nr_dirty, 1);
    let bdi = page_bdi(k, pfn);
    k.bdis[bdi].reclaimable += 1;
    account_redirty(k, pfn);
}

/// The dirtying a redirty counts. Before 3.3 `redirty_page_for_writepage` set the page dirty
/// through `__set_page_dirty_nobuffers`, which accounts a new dirtying (`NR_DIRTIED`, the
/// bdi's count, the current task's share of dirtyings); 3.3's `account_page_redirty`
/// (2f800fbd777b, "writeback: fix dirtied pages accounting on redirty") takes it back.
/// The redirtying task is a kernel thread that never throttles, so its own share is not
/// kept; the global count of dirtyings, against which every dirtier's share is taken,
/// grows.
pub fn account_redirty(k: &mut crate::mm::Kernel, pfn: crate::mm::page::Pfn) {
    use crate::mm::vmstat::ZoneStat as S;
    if !k.writeback_2_6_37() {
        return;
    }
    let zi = k.page_zone(pfn);
    k.zones[zi].mod_stat(S::nr_dirtied, 1);
    let bdi = page_bdi(k, pfn);
    k.bdis[bdi].dirtied += 1;
    k.old_wb.task_dirty_inc(&mut DirtyTask::default());
}

/// `test_set_page_writeback` of a file page.
pub fn test_set_page_writeback(k: &mut crate::mm::Kernel, pfn: crate::mm::page::Pfn) {
    use crate::mm::vmstat::ZoneStat as S;
    debug_assert!(!k.pages.test(pfn, crate::mm::page::PG_WRITEBACK));
    k.pages.set(pfn, crate::mm::page::PG_WRITEBACK);
    let zi = k.page_zone(pfn);
    k.zones[zi].mod_stat(S::nr_writeback, 1);
    let bdi = page_bdi(k, pfn);
    k.bdis[bdi].writeback += 1;
}

/// `test_clear_page_writeback` of a file page: counts the completion for the bdi's share.
pub fn test_clear_page_writeback(k: &mut crate::mm::Kernel, pfn: crate::mm::page::Pfn) {
    use crate::mm::vmstat::ZoneStat as S;
    k.pages.clear(pfn, crate::mm::page::PG_WRITEBACK);
    let zi = k.page_zone(pfn);
    k.zones[zi].mod_stat(S::nr_writeback, -1);
    k.zones[zi].mod_stat(S::nr_written, 1);
    let bdi = page_bdi(k, pfn);
    k.bdis[bdi].writeback -= 1;
    k.bdis[bdi].written += 1;
    if k.writeback_2_6_37() {
        k.old_wb.writeout_inc(bdi);
    } else {
        let now = k.sched.now();
        k.bdi_props.writeout_inc(bdi, now);
    }
}
