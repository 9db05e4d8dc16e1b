//! The page cache (`mm/filemap.c`): finding, adding and removing file pages, the use-once
//! detection of `mark_page_accessed` (`kernel-reclaim.md` §3.8), the fault handler of file
//! mappings (`filemap_fault`), and truncation (`mm/truncate.c`).

use super::page::{
    Lru, Pfn, PG_ACTIVE, PG_LOCKED, PG_LRU, PG_PRIVATE, PG_REFERENCED, PG_UNEVICTABLE, PG_UPTODATE,
    PG_WRITEBACK,
};
use super::page_alloc::{alloc_pages, AllocError};
use super::page_writeback::{write_cache_pages, DirtyTask};
use super::readahead::{self, RaState};
use super::vmstat::{VmEvent, ZoneStat};
use super::{memory, swap, Gfp, Kernel, World};
use crate::calibration::COPY_PAGE_NS;
use crate::engine::Nanos;
use std::ops::Range;

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
    // mem_cgroup_cache_charge: the page cache is the reading or writing task's.
    let mc = super::memcontrol::current_memcg(k);
    super::memcontrol::commit_charge(k, pfn, mc, false);
    swap::lru_cache_add_lru(k, pfn, Lru::InactiveFile);
}

/// `__delete_from_page_cache`: the page leaves its file's index. The caller frees it.
pub fn delete_from_page_cache(k: &mut Kernel, pfn: Pfn) {
    debug_assert!(
        !k.pages.mapped(pfn),
        "pfn {pfn} leaves the page cache mapped"
    );
    let ino = k.pages.mapping[pfn as usize] as usize;
    if k.pages.test(pfn, PG_PRIVATE) {
        let msg = format!(
            "invariant 'no page freed with private data' violated: pfn {pfn} of {} leaves the page cache with private data of {} (buffers, or a request awaiting COMMIT)",
            k.inodes[ino].name,
            k.inodes[ino].a_ops.name()
        );
        k.fail(msg);
    }
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
        let mc = k.memcg.page_lruvec_memcg(pfn);
        k.zones[zi].mem_cgroup_lruvec_mut(mc).recent_rotated[lru.is_file() as usize] += 1;
        k.count(VmEvent::pgactivate, 1);
    } else if f & PG_REFERENCED == 0 {
        k.pages.set(pfn, PG_REFERENCED);
    }
}

/// One page of `generic_perform_write`: find or allocate the page-cache page at `index`
/// (`grab_cache_page_write_begin`), copy a whole page into it and [`write_end`]. Returns
/// the CPU time used and whether the caller should now call
/// `balance_dirty_pages_ratelimited` (the filesystem's `throttle_after_write`).
pub async fn write_page(
    w: &World,
    ino: usize,
    index: u64,
    task: &mut DirtyTask,
) -> Result<(Nanos, bool), AllocError> {
    if w.borrow().inodes[ino].a_ops.buffer_heads() {
        // write_begin's buffer head (`alloc_buffer_head`, GFP_NOFS) may sleep: make room
        // for it before the page is taken.
        super::slab::kmem_cache_reserve(w, super::slab::CacheId::BufferHead, Gfp::NOFS).await?;
    }
    let pfn = loop {
        if let Some(p) = find_get_page(&w.borrow(), ino, index) {
            break p;
        }
        let mc = super::memcontrol::current_memcg(&w.borrow());
        super::memcontrol::try_charge(w, mc, 1).await?;
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
    let mut k = w.borrow_mut();
    let was_dirty = k.pages.test(pfn, super::page::PG_DIRTY);
    write_end(&mut k, ino, index, pfn, task);
    let throttle = k.inodes[ino].a_ops.throttle_after_write(&k, was_dirty);
    Ok((COPY_PAGE_NS, throttle))
}

/// The end of a whole-page write to page `index` of `ino`: the filesystem's `write_begin`
/// and `write_end` prepare and dirty the page (buffers, a journal's transaction), then
/// `mark_page_accessed` and the file's size.
pub fn write_end(k: &mut Kernel, ino: usize, index: u64, pfn: Pfn, task: &mut DirtyTask) {
    let a_ops = k.inodes[ino].a_ops;
    a_ops.write_end(k, ino, index, pfn, task);
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

/// `wait_on_page_writeback`.
pub async fn wait_on_page_writeback(w: &World, pfn: Pfn) {
    wait_on_page_bit(w, pfn, PG_WRITEBACK).await;
}

/// `filemap_write_and_wait_range`: write every dirty page of the file in `range` in the
/// caller's context and wait for all writeback of the range to end.
pub async fn filemap_write_and_wait_range(w: &World, ino: usize, range: Range<u64>) {
    write_cache_pages(w, ino, u64::MAX, Some(range.clone()), false).await;
    filemap_fdatawait_range(w, ino, range).await;
}

/// `PAGEVEC_SIZE`: the pages a pagevec holds.
pub const PAGEVEC_SIZE: usize = 14;

/// `filemap_fdatawait_range`: wait for the writeback of every page in `range` of the file,
/// taking a pagevec of pages under writeback at a time (`pagevec_lookup_tag` of
/// `PAGECACHE_TAG_WRITEBACK`), so the wait holds one pagevec, not a list of the range.
pub async fn filemap_fdatawait_range(w: &World, ino: usize, range: Range<u64>) {
    let mut pvec = [(0u64, 0 as Pfn); PAGEVEC_SIZE];
    let mut index = range.start;
    loop {
        let n = {
            let k = w.borrow();
            let under_writeback = k.inodes[ino]
                .cached_from(index)
                .take_while(|&(i, _)| i < range.end)
                .filter(|&(_, p)| k.pages.test(p, PG_WRITEBACK));
            let mut n = 0;
            for (slot, found) in pvec.iter_mut().zip(under_writeback) {
                *slot = found;
                n += 1;
            }
            n
        };
        let Some(&(last, _)) = pvec[..n].last() else {
            return;
        };
        for &(i, pfn) in &pvec[..n] {
            // The pagevec's reference keeps the page this file's while we wait on others.
            if find_get_page(&w.borrow(), ino, i) == Some(pfn) {
                wait_on_page_writeback(w, pfn).await;
            }
        }
        index = last + 1;
    }
}

/// `filemap_fault`: the page at `index` of `ino` for a fault on a file mapping, uptodate and
/// unlocked. A page already cached makes a minor fault, and may start the next asynchronous
/// readahead window; a missing one is read with mmap read-around and makes a major fault
/// (`pgmajfault`, counted here as the kernel does), whether or not the fault then has to wait.
/// `None` past the end of the file (SIGBUS).
pub async fn filemap_fault(
    w: &World,
    ino: usize,
    index: u64,
    ra: &mut RaState,
) -> Result<Option<(Pfn, bool)>, AllocError> {
    if index >= w.borrow().inodes[ino].size_pages {
        return Ok(None);
    }
    let found = find_get_page(&w.borrow(), ino, index);
    let major = match found {
        Some(pfn) => {
            readahead::do_async_mmap_readahead(w, ino, ra, pfn, index).await?;
            false
        }
        None => {
            readahead::do_sync_mmap_readahead(w, ino, ra, index).await?;
            w.borrow_mut().count(VmEvent::pgmajfault, 1);
            true
        }
    };
    loop {
        let (found, q) = {
            let k = w.borrow();
            if index >= k.inodes[ino].size_pages {
                // Truncated while we slept.
                return Ok(None);
            }
            let found = find_get_page(&k, ino, index);
            (
                found,
                found.map(|p| (k.pages.test(p, PG_LOCKED), k.wq.page(p))),
            )
        };
        match (found, q) {
            // no_cached_page: not read ahead, or reclaimed before we got here.
            (None, _) => readahead::page_cache_read(w, ino, index).await?,
            // lock_page: wait for the read.
            (Some(_), Some((true, q))) => {
                crate::engine::wait_event(w, q, None, false).await;
            }
            (Some(pfn), _) => {
                debug_assert!(w.borrow().pages.test(pfn, PG_UPTODATE));
                return Ok(Some((pfn, major)));
            }
        }
    }
}

/// `cancel_dirty_page`: a dirty page leaves its file without being written (its dirty tag
/// leaves with it, in `delete_from_page_cache`).
fn cancel_dirty_page(k: &mut Kernel, pfn: Pfn) {
    use super::page::PG_DIRTY;
    if k.pages.test_and_clear(pfn, PG_DIRTY) {
        let zi = k.page_zone(pfn);
        k.zones[zi].mod_stat(ZoneStat::nr_dirty, -1);
        let bdi = super::page_writeback::page_bdi(k, pfn);
        k.bdis[bdi].reclaimable -= 1;
    }
}

/// `truncate_inode_pages_range` from page `from` to the end of the file: wait for reads and
/// writeback in flight, unmap a page still mapped (`truncate_inode_page`), and drop every page
/// (dirty ones without writing them: `cancel_dirty_page`). A page a reclaimer holds isolated
/// leaves the page cache now and is freed by the reclaimer. Partial pages are not zeroed:
/// mmsim's files are whole pages.
pub async fn truncate_inode_pages_range(w: &World, ino: usize, from: u64) {
    use super::page::{PG_BH_LOCKED, PG_ISOLATED, PG_TRUNCATED};
    // Pages before `cursor` are gone: each lookup starts there, so the walk is linear.
    let mut cursor = from;
    loop {
        let next = w.borrow().inodes[ino].cached_from(cursor).next();
        let Some((index, pfn)) = next else { break };
        cursor = index;
        let (busy, q) = {
            let k = w.borrow();
            match k.inodes[ino].a_ops.invalidatepage_wait(&k, pfn) {
                // The filesystem holds the page (NFS: its request until a COMMIT answers).
                Some(q) => (true, q),
                None => (
                    k.pages.test(pfn, PG_LOCKED | PG_WRITEBACK | PG_BH_LOCKED),
                    k.wq.page(pfn),
                ),
            }
        };
        if busy {
            crate::engine::wait_event(w, q, None, false).await;
            continue;
        }
        let mut k = w.borrow_mut();
        if k.pages.mapped(pfn) {
            let mut task = DirtyTask::default();
            memory::unmap_mapping_range(&mut k, ino, index, index + 1, &mut task);
        }
        let a_ops = k.inodes[ino].a_ops;
        a_ops.invalidatepage(&mut k, pfn);
        cancel_dirty_page(&mut k, pfn);
        delete_from_page_cache(&mut k, pfn);
        if k.pages.test(pfn, PG_LRU) {
            swap::del_page_from_lru_list(&mut k, pfn);
            k.pages.flags[pfn as usize] = 0;
            // truncate_inode_pages: pagevec_release.
            super::page_alloc::free_page_batched(&mut k, pfn, false);
        } else {
            debug_assert!(k.pages.test(pfn, PG_ISOLATED));
            k.pages.set(pfn, PG_TRUNCATED);
        }
    }
}

/// `truncate_setsize` + `truncate_pagecache` (`ftruncate(2)` to `size_pages` pages): the new
/// size first, so faults past it fail; then the mappings of the pages past it are zapped, the
/// pages dropped, and the mappings zapped again for pages faulted in meanwhile. Growing a file
/// sets its size and leaves holes, pages that read as zeroes until written. Truncation to 0
/// frees the file's blocks (a rewrite allocates anew); otherwise the blocks past the new end
/// stay allocated.
pub async fn truncate_setsize(w: &World, ino: usize, size_pages: u64) {
    let old = std::mem::replace(&mut w.borrow_mut().inodes[ino].size_pages, size_pages);
    if size_pages >= old {
        // The pages past the old end have no blocks: holes.
        w.borrow_mut().inodes[ino].make_holes(old..size_pages);
        return;
    }
    // The dirtying of zapped PTEs is the truncating task's; the pages are dropped anyway.
    let mut task = DirtyTask::default();
    memory::unmap_mapping_range(&mut w.borrow_mut(), ino, size_pages, u64::MAX, &mut task);
    truncate_inode_pages_range(w, ino, size_pages).await;
    let mut k = w.borrow_mut();
    memory::unmap_mapping_range(&mut k, ino, size_pages, u64::MAX, &mut task);
    k.inodes[ino].disksize_pages = k.inodes[ino].disksize_pages.min(size_pages);
    if size_pages == 0 {
        k.inodes[ino].free_blocks();
    }
}

/// `invalidate_mapping_pages` of the whole file (`mm/truncate.c`): drop every clean page
/// nobody uses without waiting for anything. A page that is locked is passed over; one that
/// is dirty, under writeback, mapped, held by a reclaimer, or whose private data its
/// filesystem will not release (`try_to_release_page` with no allocation flags) is kept and
/// deactivated (`deactivate_page`). Returns the pages dropped. `cx` is charged a visit per
/// page looked at.
pub fn invalidate_mapping_pages(
    k: &mut Kernel,
    ino: usize,
    cx: &mut super::super_block::PruneCx,
) -> u64 {
    use super::fs_ops::Release;
    use super::page::{PG_DIRTY, PG_ISOLATED};
    let pages: Vec<Pfn> = k.inodes[ino].cached().map(|(_, p)| p).collect();
    let mut count = 0;
    for pfn in pages {
        cx.visit();
        if k.pages.test(pfn, PG_LOCKED) {
            continue;
        }
        let f = k.pages.flags[pfn as usize];
        let mut ok = f & (PG_DIRTY | PG_WRITEBACK | PG_ISOLATED) == 0 && !k.pages.mapped(pfn);
        if ok && f & PG_PRIVATE != 0 {
            let a_ops = k.inodes[ino].a_ops;
            ok = a_ops.releasepage(k, pfn, Gfp(0), cx.kswapd) == Release::Released;
        }
        if !ok {
            swap::deactivate_page(k, pfn);
            continue;
        }
        // remove_mapping, then the pagevec's release frees it.
        if k.pages.test(pfn, PG_LRU) {
            swap::del_page_from_lru_list(k, pfn);
        }
        delete_from_page_cache(k, pfn);
        k.pages.flags[pfn as usize] = 0;
        super::page_alloc::free_page_batched(k, pfn, false);
        count += 1;
    }
    count
}

/// Unlink of a file nobody has open: truncate it to size 0 (`truncate_inode_pages`) and take
/// the inode off its device's writeback lists (`evict`).
pub async fn truncate_inode_pages(w: &World, ino: usize) {
    truncate_setsize(w, ino, 0).await;
    let mut k = w.borrow_mut();
    let bdi = k.inodes[ino].bdi;
    let b = &mut k.bdis[bdi];
    b.b_dirty.retain(|&i| i != ino);
    b.b_io.retain(|&i| i != ino);
    b.b_more_io.retain(|&i| i != ino);
    k.inodes[ino].state = 0;
}

#[cfg(test)]
mod tests;
