//! The page cache (`mm/filemap.c`): finding, adding and removing file pages, and the
//! use-once detection of `mark_page_accessed` (`kernel-reclaim.md` §3.8).

use super::page::{
    Lru, Pfn, PG_ACTIVE, PG_BH_DIRTY, PG_LRU, PG_PRIVATE, PG_REFERENCED, PG_UNEVICTABLE,
    PG_UPTODATE,
};
use super::page_alloc::{alloc_pages, AllocError};
use super::page_writeback::{set_page_dirty, DirtyTask};
use super::vmstat::{VmEvent, ZoneStat};
use super::{swap, Gfp, Kernel, World};
use crate::calibration::COPY_PAGE_NS;
use crate::engine::Nanos;
use crate::fs::{buffer, jbd};

/// `find_get_page`.
#[inline]
pub fn find_get_page(k: &Kernel, ino: usize, index: u64) -> Option<Pfn> {
    k.inodes[ino].find_page(index)
}

/// `add_to_page_cache_lru`: a freshly allocated page joins file `ino` at `index` and the
/// inactive file list (page-cache pages start inactive).
pub fn add_to_page_cache_lru(k: &mut Kernel, pfn: Pfn, ino: usize, index: u64) {
    debug_assert!(
        index < u32::MAX as u64,
        "file offset beyond the modelled range"
    );
    k.pages.mapping[pfn as usize] = ino as u32;
    k.pages.index[pfn as usize] = index as u32;
    k.inodes[ino].insert_page(index, pfn);
    let zi = k.page_zone(pfn);
    k.zones[zi].mod_stat(ZoneStat::nr_file_pages, 1);
    swap::lru_cache_add_lru(k, pfn, Lru::InactiveFile);
}

/// `__delete_from_page_cache`: the page leaves its file's index. The caller frees it.
pub fn delete_from_page_cache(k: &mut Kernel, pfn: Pfn) {
    let ino = k.pages.mapping[pfn as usize] as usize;
    let index = k.pages.index[pfn as usize] as u64;
    k.inodes[ino].remove_page(index, pfn);
    let zi = k.page_zone(pfn);
    k.zones[zi].mod_stat(ZoneStat::nr_file_pages, -1);
    k.pages.clear(pfn, PG_UPTODATE);
}

/// `mark_page_accessed`: the first access sets PG_referenced; a second one while the page is
/// on an inactive list activates it (`pgactivate`).
pub fn mark_page_accessed(k: &mut Kernel, pfn: Pfn) {
    let f = k.pages.flags[pfn as usize];
    if f & (PG_ACTIVE | PG_UNEVICTABLE) == 0 && f & PG_REFERENCED != 0 && f & PG_LRU != 0 {
        // activate_page
        let lru = k.pages.lru(pfn);
        swap::del_page_from_lru_list(k, pfn);
        k.pages.set(pfn, PG_ACTIVE);
        k.pages.clear(pfn, PG_REFERENCED);
        let active = Lru::of(lru.is_file(), true);
        swap::add_page_to_lru_list(k, pfn, active);
        let zi = k.page_zone(pfn);
        k.zones[zi].lruvec.recent_rotated[lru.is_file() as usize] += 1;
        k.count(VmEvent::pgactivate, 1);
    } else if f & PG_REFERENCED == 0 {
        k.pages.set(pfn, PG_REFERENCED);
    }
}

/// One page of `generic_perform_write`: find or allocate the page-cache page at `index`
/// (`grab_cache_page_write_begin`), copy a whole page into it and [`write_end`]. Returns
/// the CPU time used; the caller then calls `balance_dirty_pages_ratelimited`.
pub async fn write_page(
    w: &World,
    ino: usize,
    index: u64,
    task: &mut DirtyTask,
) -> Result<Nanos, AllocError> {
    let pfn = loop {
        if let Some(p) = find_get_page(&w.borrow(), ino, index) {
            break p;
        }
        let p = alloc_pages(w, Gfp(Gfp::HIGHUSER_MOVABLE.0 | Gfp::WRITE), 0).await?;
        let mut k = w.borrow_mut();
        if find_get_page(&k, ino, index).is_some() {
            super::page_alloc::free_page(&mut k, p);
            continue;
        }
        k.pages.flags[p as usize] = PG_UPTODATE;
        add_to_page_cache_lru(&mut k, p, ino, index);
        break p;
    };
    write_end(&mut w.borrow_mut(), ino, index, pfn, task);
    Ok(COPY_PAGE_NS)
}

/// `write_begin`'s buffers and `write_end` of a whole-page write to page `index` of `ino`:
/// on a buffer-head filesystem the page gets buffers and they are dirtied with it; on ext3
/// the write runs in the journal's running transaction, which files the dirtied buffer.
/// Then dirty and account the page (`set_page_dirty`) and `mark_page_accessed`.
pub fn write_end(k: &mut Kernel, ino: usize, index: u64, pfn: Pfn, task: &mut DirtyTask) {
    let bdi = k.inodes[ino].bdi;
    let fs = k.bdis[bdi].fs;
    let newly_dirty_buffers = fs.uses_buffer_heads() && {
        if !k.pages.test(pfn, PG_PRIVATE) {
            buffer::create_empty_buffers(k, pfn);
        }
        !k.pages.test(pfn, PG_BH_DIRTY)
    };
    set_page_dirty(k, pfn, task);
    if fs.ordered_data_journal() {
        jbd::journal_dirty_data(k, bdi, ino, index, newly_dirty_buffers);
    }
    mark_page_accessed(k, pfn);
    let inode = &mut k.inodes[ino];
    inode.size_pages = inode.size_pages.max(index + 1);
}

/// `wait_on_page_bit`: sleep until page flag `flag` is clear (PG_writeback, or mmsim's
/// PG_BH_LOCKED for `wait_on_buffer`).
pub async fn wait_on_page_bit(w: &World, pfn: Pfn, flag: u32) {
    loop {
        let (set, q) = {
            let k = w.borrow();
            (k.pages.test(pfn, flag), k.wq.page(pfn))
        };
        if !set {
            return;
        }
        crate::engine::wait_event(w, q, None, false).await;
    }
}

/// `cancel_dirty_page`: a dirty page leaves its file without being written.
fn cancel_dirty_page(k: &mut Kernel, pfn: super::page::Pfn) {
    use super::page::PG_DIRTY;
    if k.pages.test_and_clear(pfn, PG_DIRTY) {
        let zi = k.page_zone(pfn);
        k.zones[zi].mod_stat(ZoneStat::nr_dirty, -1);
        let bdi = super::page_writeback::page_bdi(k, pfn);
        k.bdis[bdi].reclaimable -= 1;
    }
}

/// `truncate_inode_pages` (to size 0) and the unlink that follows: wait for reads,
/// writeback and buffer IO in flight, drop every page and its buffers (dirty ones without
/// writing them), take the inode off its device's writeback lists. A page a reclaimer
/// holds isolated leaves the page cache now and is freed by the reclaimer.
pub async fn truncate_inode_pages(w: &World, ino: usize) {
    use super::page::{PG_BH_LOCKED, PG_ISOLATED, PG_LOCKED, PG_TRUNCATED, PG_WRITEBACK};
    // Pages before `cursor` are gone: each lookup starts there, so the walk is linear.
    let mut cursor = 0;
    loop {
        let next = w.borrow().inodes[ino].cached_from(cursor).next();
        let Some((index, pfn)) = next else { break };
        cursor = index;
        let (busy, q) = {
            let k = w.borrow();
            (
                k.pages.test(pfn, PG_LOCKED | PG_WRITEBACK | PG_BH_LOCKED),
                k.wq.page(pfn),
            )
        };
        if busy {
            crate::engine::wait_event(w, q, None, false).await;
            continue;
        }
        let mut k = w.borrow_mut();
        cancel_dirty_page(&mut k, pfn);
        buffer::block_invalidatepage(&mut k, pfn);
        delete_from_page_cache(&mut k, pfn);
        if k.pages.test(pfn, PG_LRU) {
            swap::del_page_from_lru_list(&mut k, pfn);
            k.pages.flags[pfn as usize] = 0;
            super::page_alloc::free_page(&mut k, pfn);
        } else {
            debug_assert!(k.pages.test(pfn, PG_ISOLATED));
            k.pages.set(pfn, PG_TRUNCATED);
        }
    }
    let mut k = w.borrow_mut();
    let bdi = k.inodes[ino].bdi;
    let b = &mut k.bdis[bdi];
    b.b_dirty.retain(|&i| i != ino);
    b.b_io.retain(|&i| i != ino);
    b.b_more_io.retain(|&i| i != ino);
    let inode = &mut k.inodes[ino];
    inode.state = 0;
    inode.size_pages = 0;
    inode.free_blocks();
}
