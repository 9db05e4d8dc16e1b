//! On-demand readahead (`mm/readahead.c`, 3.x): a sequential reader gets a window that
//! starts small and doubles up to `read_ahead_kb` (128 KiB = 32 pages by default); the page
//! `async_size` pages before the window's end carries PG_readahead, and reaching it starts
//! the next window without waiting.
//!
//! Faults on file mappings read around the faulting page instead (`do_sync_mmap_readahead`,
//! `mm/filemap.c`): a window of `ra_pages` centred on it, with its last quarter asynchronous,
//! until the file has missed far more than it hit (`mmap_miss`).
//!
//! mmsim deviations: only the sequential patterns are modelled (a read that is neither the
//! start of a file nor a hit on the marker starts a fresh initial window); no thrashing or
//! interleaved-stream detection.

use super::page::{Pfn, PG_LOCKED, PG_READAHEAD, PG_UPTODATE, PG_WRITEBACK};
use super::page_alloc::{alloc_pages, AllocError};
use super::{filemap, Gfp, World};
use crate::mm::backing_dev::submit_bio;

/// `VM_MAX_READAHEAD`: 128 KiB, in pages.
pub const MAX_READAHEAD_PAGES: u64 = 32;
/// `MMAP_LOTSAMISS`: past this many more misses than hits, faults stop reading around.
pub const MMAP_LOTSAMISS: u32 = 100;

/// A file's readahead state (`struct file_ra_state`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RaState {
    /// First page of the current window.
    pub start: u64,
    /// Pages in the window.
    pub size: u64,
    /// Pages before the window's end where PG_readahead sits.
    pub async_size: u64,
    /// `mmap_miss`: faults that missed the page cache, less those that hit.
    pub mmap_miss: u32,
}

/// `get_init_ra_size`: the first window for a read of `req` pages.
pub fn get_init_ra_size(req: u64, max: u64) -> u64 {
    let size = req.max(1).next_power_of_two();
    if size <= max / 32 {
        size * 4
    } else if size <= max / 4 {
        size * 2
    } else {
        max
    }
}

/// `get_next_ra_size`: each following window.
pub fn get_next_ra_size(cur: u64, max: u64) -> u64 {
    if cur < max / 16 { 4 * cur } else { 2 * cur }.min(max)
}

/// Read the missing pages of `[start, start + nr)` of `ino`: allocate them, put them in the
/// page cache locked, mark the one at `mark` PG_readahead, and read each through the
/// filesystem's `readpage`, submitting the bio it asks for (`__do_page_cache_readahead`).
/// Pages past the end of the file are not read. A filesystem with its own `->readpages`
/// (NFS: READ RPCs of up to `rsize`) keeps its state of the call from `readpages_start` to
/// `readpages_end`.
async fn do_page_cache_readahead(
    w: &World,
    ino: usize,
    start: u64,
    nr: u64,
    mark: u64,
) -> Result<(), AllocError> {
    let end = (start + nr).min(w.borrow().inodes[ino].size_pages);
    let (a_ops, mut data) = {
        let mut k = w.borrow_mut();
        let a_ops = k.inodes[ino].a_ops;
        let data = a_ops.readpages_start(&mut k, ino);
        (a_ops, data)
    };
    for index in start..end {
        if filemap::find_get_page(&w.borrow(), ino, index).is_some() {
            continue;
        }
        let mc = super::memcontrol::current_memcg(&w.borrow());
        let pfn = match super::memcontrol::try_charge(w, mc, 1).await {
            // page_cache_alloc_readahead's __GFP_COLD (its NORETRY and NOWARN are not
            // modelled: a failed readahead allocation is an error, not a shorter window).
            Ok(()) => alloc_pages(w, Gfp(Gfp::HIGHUSER_MOVABLE.0 | Gfp::COLD), 0).await,
            Err(e) => Err(e),
        };
        let pfn = match pfn {
            Ok(pfn) => pfn,
            Err(e) => {
                a_ops.readpages_end(&mut w.borrow_mut(), data);
                return Err(e);
            }
        };
        let read = {
            let mut k = w.borrow_mut();
            if filemap::find_get_page(&k, ino, index).is_some() {
                super::page_alloc::free_page(&mut k, pfn);
                continue;
            }
            k.pages.flags[pfn as usize] = PG_LOCKED | if index == mark { PG_READAHEAD } else { 0 };
            filemap::add_to_page_cache_lru(&mut k, pfn, ino, index);
            a_ops
                .readpage(&mut k, pfn, &mut data)
                .map(|bio| (k.inodes[ino].bdi, bio))
        };
        if let Some((bdi, bio)) = read {
            submit_bio(w, bdi, bio).await;
        }
    }
    a_ops.readpages_end(&mut w.borrow_mut(), data);
    Ok(())
}

/// `ondemand_readahead` for a read of `req` pages at `index`; `hit_marker` when the reader
/// reached a PG_readahead page (asynchronous readahead).
pub async fn ondemand_readahead(
    w: &World,
    ino: usize,
    ra: &mut RaState,
    index: u64,
    req: u64,
    hit_marker: bool,
) -> Result<(), AllocError> {
    let max = MAX_READAHEAD_PAGES;
    if hit_marker && index == ra.start + ra.size - ra.async_size {
        // The expected sequential marker: push the window forward.
        ra.start += ra.size;
        ra.size = get_next_ra_size(ra.size, max);
        ra.async_size = ra.size;
    } else {
        // Start of file, or a fresh sequential read: an initial window.
        ra.start = index;
        ra.size = get_init_ra_size(req, max);
        ra.async_size = if ra.size > req {
            ra.size - req
        } else {
            ra.size
        };
    }
    let mark = ra.start + ra.size - ra.async_size;
    do_page_cache_readahead(w, ino, ra.start, ra.size, mark).await
}

/// `page_cache_read`: read the one page at `index` (a fault with no readahead).
pub async fn page_cache_read(w: &World, ino: usize, index: u64) -> Result<(), AllocError> {
    do_page_cache_readahead(w, ino, index, 1, u64::MAX).await
}

/// `do_sync_mmap_readahead`: a fault found no page at `index`. mmap read-around: a window of
/// `ra_pages` centred on the fault, its last quarter asynchronous (`ra_submit`). Nothing is
/// read ahead once the file's faults miss far more than they hit.
pub async fn do_sync_mmap_readahead(
    w: &World,
    ino: usize,
    ra: &mut RaState,
    index: u64,
) -> Result<(), AllocError> {
    if ra.mmap_miss < MMAP_LOTSAMISS * 10 {
        ra.mmap_miss += 1;
    }
    if ra.mmap_miss > MMAP_LOTSAMISS {
        return Ok(());
    }
    let ra_pages = MAX_READAHEAD_PAGES;
    ra.start = index.saturating_sub(ra_pages / 2);
    ra.size = ra_pages;
    ra.async_size = ra_pages / 4;
    let mark = ra.start + ra.size - ra.async_size;
    do_page_cache_readahead(w, ino, ra.start, ra.size, mark).await
}

/// `do_async_mmap_readahead`: a fault found `pfn` cached at `index`: a hit, and if the page
/// carries PG_readahead (and is not under writeback), the next window starts
/// (`page_cache_async_readahead`).
pub async fn do_async_mmap_readahead(
    w: &World,
    ino: usize,
    ra: &mut RaState,
    pfn: Pfn,
    index: u64,
) -> Result<(), AllocError> {
    ra.mmap_miss = ra.mmap_miss.saturating_sub(1);
    let marker = {
        let mut k = w.borrow_mut();
        !k.pages.test(pfn, PG_WRITEBACK) && k.pages.test_and_clear(pfn, PG_READAHEAD)
    };
    if marker {
        ondemand_readahead(w, ino, ra, index, MAX_READAHEAD_PAGES, true).await?;
    }
    Ok(())
}

/// One page of `do_generic_file_read`: find or read the page at `index` (with readahead),
/// wait until it is uptodate, `mark_page_accessed`. The wait is `lock_page_killable`'s: a
/// killed task gives up with [`AllocError::Killed`]. A page that left the page cache while
/// the reader slept (reclaimed once read: mmsim's reader holds no reference to pin it) is
/// looked up again, as the kernel does with a page whose `mapping` truncation cleared;
/// waiting on its frame would wait for whatever the frame became.
pub async fn read_page(
    w: &World,
    ino: usize,
    ra: &mut RaState,
    index: u64,
    req: u64,
) -> Result<Pfn, AllocError> {
    'lookup: loop {
        {
            // A cached, up-to-date page without the readahead marker: nothing to wait for.
            let mut k = w.borrow_mut();
            if let Some(pfn) = filemap::find_get_page(&k, ino, index) {
                if k.pages.test(pfn, PG_UPTODATE) && !k.pages.test(pfn, PG_READAHEAD) {
                    filemap::mark_page_accessed(&mut k, pfn);
                    return Ok(pfn);
                }
            }
        }
        if filemap::find_get_page(&w.borrow(), ino, index).is_none() {
            // page_cache_sync_readahead
            ondemand_readahead(w, ino, ra, index, req, false).await?;
        }
        let pfn = loop {
            let found = filemap::find_get_page(&w.borrow(), ino, index);
            match found {
                Some(p) => break p,
                // Reclaimed between readahead and now: read it again.
                None => ondemand_readahead(w, ino, ra, index, req, false).await?,
            }
        };
        let marker = w.borrow_mut().pages.test_and_clear(pfn, PG_READAHEAD);
        if marker {
            // page_cache_async_readahead
            ondemand_readahead(w, ino, ra, index, req, true).await?;
        }
        loop {
            let (cached, uptodate, q) = {
                let k = w.borrow();
                (
                    filemap::find_get_page(&k, ino, index) == Some(pfn),
                    k.pages.test(pfn, PG_UPTODATE),
                    k.wq.page(pfn),
                )
            };
            if !cached {
                continue 'lookup;
            }
            if uptodate {
                break;
            }
            if crate::engine::wait_event(w, q, None, true).await
                == crate::engine::WakeReason::Killed
            {
                return Err(AllocError::Killed);
            }
        }
        let mut k = w.borrow_mut();
        filemap::mark_page_accessed(&mut k, pfn);
        return Ok(pfn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `read_page` of a page not cached reads it, waiting for the disk, and leaves a
    /// readahead marker in the window it read; reading the marker page starts the next
    /// window (more pages cached, the marker gone); a cached page is returned at once and
    /// marked accessed.
    #[test]
    fn read_page_waits_for_its_read_follows_the_marker_and_marks_cached_pages_accessed() {
        use crate::calibration::PAGE_SIZE;
        use crate::mm::page::{PG_ACTIVE, PG_REFERENCED};
        use std::cell::RefCell;
        use std::rc::Rc;
        let w = crate::sim::boot_for_test(128, 0, "3.9");
        crate::sim::add_test_disk(&w, "sda", "ext4");
        let ino = crate::workload::cat::create_file(&w, "f", 0, 256 * PAGE_SIZE);
        {
            let mut k = w.borrow_mut();
            let sb = crate::mm::inode::sb_of(&k, 0);
            crate::mm::inode::iget_boot(&mut k, sb, ino as u32);
        }
        fn cached(k: &crate::mm::Kernel, ino: usize) -> Vec<u64> {
            (0..256)
                .filter(|&i| filemap::find_get_page(k, ino, i).is_some())
                .collect()
        }
        let seen = Rc::new(RefCell::new(Vec::new()));
        let (w2, s) = (w.clone(), seen.clone());
        crate::sim::run_task(&w, 60 * crate::engine::SEC, async move {
            let mut ra = RaState::default();
            let now = |w: &World| w.borrow().sched.now();
            let t0 = now(&w2);
            let p0 = read_page(&w2, ino, &mut ra, 0, 1).await.unwrap();
            let t1 = now(&w2);
            let (first, marker) = {
                let k = w2.borrow();
                let marker = cached(&k, ino).into_iter().find(|&i| {
                    let pfn = filemap::find_get_page(&k, ino, i).unwrap();
                    k.pages.test(pfn, PG_READAHEAD)
                });
                assert_eq!(filemap::find_get_page(&k, ino, 0), Some(p0));
                (
                    cached(&k, ino).len(),
                    marker.expect("the window has a marker"),
                )
            };
            // Every read of the window done.
            crate::engine::sleep(&w2, crate::engine::SEC).await;
            read_page(&w2, ino, &mut ra, marker, 64 - marker)
                .await
                .unwrap();
            let (after_marker, still_marked) = {
                let k = w2.borrow();
                let pfn = filemap::find_get_page(&k, ino, marker).unwrap();
                (cached(&k, ino).len(), k.pages.test(pfn, PG_READAHEAD))
            };
            let p1 = filemap::find_get_page(&w2.borrow(), ino, 1).unwrap();
            let state = |w: &World| {
                let k = w.borrow();
                (k.pages.test(p1, PG_REFERENCED), k.pages.test(p1, PG_ACTIVE))
            };
            let before = state(&w2);
            let t2 = now(&w2);
            let got = read_page(&w2, ino, &mut ra, 1, 1).await.unwrap();
            let t3 = now(&w2);
            let accessed = state(&w2) != before;
            s.borrow_mut().push((
                t1 > t0,
                first,
                after_marker,
                still_marked,
                got == p1,
                t3 == t2,
                accessed,
            ));
        });
        let seen = seen.take();
        assert_eq!(seen.len(), 1, "the task ran to its end");
        let (waited, first, after, marked, same, at_once, accessed) = seen[0];
        assert!(waited, "the first read waited for the disk");
        assert!(
            after > first,
            "the marker started the next window: {first} -> {after}"
        );
        assert!(!marked, "the marker is cleared");
        assert!(same && at_once, "a cached page, at once: {:?}", seen[0]);
        assert!(
            accessed,
            "mark_page_accessed moved it on (referenced, then active)"
        );
    }

    #[test]
    fn windows_start_at_four_pages_and_double_to_the_maximum() {
        // mm/readahead.c with read_ahead_kb = 128: a one-page read starts a 4-page window.
        assert_eq!(get_init_ra_size(1, 32), 4);
        assert_eq!(get_init_ra_size(4, 32), 8);
        assert_eq!(get_init_ra_size(16, 32), 32);
        assert_eq!(get_next_ra_size(4, 32), 8);
        assert_eq!(get_next_ra_size(8, 32), 16);
        assert_eq!(get_next_ra_size(16, 32), 32);
        assert_eq!(get_next_ra_size(32, 32), 32);
    }

    /// A file of `pages` pages on a fresh 128 MiB machine's disk, its inode held.
    fn machine_with_file(pages: u64) -> (World, usize) {
        let w = crate::sim::boot_for_test(128, 0, "3.9");
        crate::sim::add_test_disk(&w, "sda", "ext4");
        let ino =
            crate::workload::cat::create_file(&w, "f", 0, pages * crate::calibration::PAGE_SIZE);
        let mut k = w.borrow_mut();
        let sb = crate::mm::inode::sb_of(&k, 0);
        crate::mm::inode::iget_boot(&mut k, sb, ino as u32);
        drop(k);
        (w, ino)
    }

    /// A reader waiting for a page that leaves the page cache once read (another waiter,
    /// woken first, drops it) looks it up again and reads it anew, where waiting on the
    /// freed frame would wait for ever.
    #[test]
    fn read_page_reads_again_a_page_that_left_the_cache_while_it_waited() {
        use crate::mm::vmstat::VmEvent;
        use std::cell::Cell;
        use std::rc::Rc;
        let (w, ino) = machine_with_file(64);
        let dropped = Rc::new(Cell::new(0));
        let (w1, d) = (w.clone(), dropped.clone());
        // Spawned first: it starts the read and waits ahead of the reader.
        w.borrow_mut().sched.spawn("dropper", async move {
            page_cache_read(&w1, ino, 0).await.unwrap();
            loop {
                let (pfn, q) = {
                    let k = w1.borrow();
                    let pfn = filemap::find_get_page(&k, ino, 0).unwrap();
                    (pfn, k.wq.page(pfn))
                };
                if w1.borrow().pages.test(pfn, PG_UPTODATE) {
                    break;
                }
                crate::engine::wait_event(&w1, q, None, false).await;
            }
            let mut cx = crate::mm::super_block::PruneCx {
                gfp: Gfp(0),
                kswapd: false,
                cpu: 0,
                reap: 0,
            };
            d.set(filemap::invalidate_mapping_pages(
                &mut w1.borrow_mut(),
                ino,
                &mut cx,
            ));
        });
        let got = Rc::new(Cell::new(None));
        let (w2, g) = (w.clone(), got.clone());
        crate::sim::run_task(&w, 10 * crate::engine::SEC, async move {
            crate::engine::sleep(&w2, 1_000).await;
            let mut ra = RaState::default();
            let pfn = read_page(&w2, ino, &mut ra, 0, 1).await.unwrap();
            let k = w2.borrow();
            g.set(Some((
                filemap::find_get_page(&k, ino, 0) == Some(pfn),
                k.pages.test(pfn, PG_UPTODATE),
            )));
        });
        assert_eq!(dropped.get(), 1, "the page was dropped once read");
        assert_eq!(
            got.get(),
            Some((true, true)),
            "the reader has it, read anew"
        );
        let read_kib = w.borrow().events.get(VmEvent::pgpgin);
        assert!(read_kib >= 8, "page 0 was read twice: {read_kib} KiB read");
    }

    /// The wait for a read is `lock_page_killable`'s: a reader killed while its page is
    /// being read gives up at once with `Killed`.
    #[test]
    fn a_killed_reader_gives_up_its_wait() {
        use std::cell::Cell;
        use std::rc::Rc;
        let (w, ino) = machine_with_file(64);
        let out = Rc::new(Cell::new(None));
        let (w1, o) = (w.clone(), out.clone());
        let reader = w.borrow_mut().sched.spawn("reader", async move {
            let mut ra = RaState::default();
            let r = read_page(&w1, ino, &mut ra, 0, 1).await;
            o.set(Some((
                r.is_err_and(|e| e == AllocError::Killed),
                w1.borrow().sched.now(),
            )));
        });
        let w2 = w.clone();
        crate::sim::run_task(&w, 10 * crate::engine::SEC, async move {
            crate::engine::sleep(&w2, 1_000).await;
            w2.borrow_mut().sched.kill(reader);
        });
        assert_eq!(
            out.get(),
            Some((true, 1_000)),
            "killed 1 µs in, before the disk answered"
        );
    }
}
