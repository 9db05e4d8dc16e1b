//! The page cache (`mm/filemap.c`): finding, adding and removing file pages, and the
//! use-once detection of `mark_page_accessed` (`kernel-reclaim.md` §3.8).

use super::page::{Lru, Pfn, PG_ACTIVE, PG_LRU, PG_REFERENCED, PG_UNEVICTABLE, PG_UPTODATE};
use super::page_alloc::{alloc_pages, AllocError};
use super::page_writeback::{set_page_dirty, DirtyTask};
use super::vmstat::{VmEvent, ZoneStat};
use super::{swap, Gfp, Kernel, World};
use crate::calibration::COPY_PAGE_NS;
use crate::engine::Nanos;

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
    if k.pages.test(pfn, super::page::PG_PRIVATE) && crate::fs::nfs::is_nfs_inode(k, ino) {
        let msg = format!(
            "invariant 'no NFS page freed while unstable' violated: pfn {pfn} of {} awaits COMMIT",
            k.inodes[ino].name
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
        k.zones[zi].lruvec.recent_rotated[lru.is_file() as usize] += 1;
        k.count(VmEvent::pgactivate, 1);
    } else if f & PG_REFERENCED == 0 {
        k.pages.set(pfn, PG_REFERENCED);
    }
}

/// One page of `generic_perform_write`: find or allocate the page-cache page at `index`
/// (`grab_cache_page_write_begin`), copy a whole page into it, dirty and account it
/// (`write_end` → `set_page_dirty`), `mark_page_accessed`. Returns the CPU time used; the
/// caller then calls `balance_dirty_pages_ratelimited`.
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
    let mut k = w.borrow_mut();
    set_page_dirty(&mut k, pfn, task);
    mark_page_accessed(&mut k, pfn);
    let inode = &mut k.inodes[ino];
    inode.size_pages = inode.size_pages.max(index + 1);
    Ok(COPY_PAGE_NS)
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

/// `truncate_inode_pages` (to size 0) and the unlink that follows: wait for reads and
/// writeback in flight, drop every page (dirty ones without writing them), take the inode off
/// its device's writeback lists. A page a reclaimer holds isolated leaves the page cache now
/// and is freed by the reclaimer.
pub async fn truncate_inode_pages(w: &World, ino: usize) {
    use super::page::{PG_ISOLATED, PG_LOCKED, PG_LRU, PG_TRUNCATED, PG_WRITEBACK};
    loop {
        let next = w.borrow().inodes[ino].cached().next();
        let Some((_, pfn)) = next else { break };
        let (busy, q) = {
            let k = w.borrow();
            match crate::fs::nfs::nfs_page_in_commit(&k, pfn) {
                // Its request is locked until the COMMIT is answered.
                Some(q) => (true, q),
                None => (k.pages.test(pfn, PG_LOCKED | PG_WRITEBACK), k.wq.page(pfn)),
            }
        };
        if busy {
            crate::engine::wait_event(w, q, None, false).await;
            continue;
        }
        let mut k = w.borrow_mut();
        if crate::fs::nfs::is_nfs_inode(&k, ino) {
            crate::fs::nfs::nfs_invalidate_page(&mut k, pfn);
        }
        cancel_dirty_page(&mut k, pfn);
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
}
