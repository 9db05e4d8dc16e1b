//! `write_cache_pages`: the page walk of writeback over one file's dirty pages.

use super::*;

/// The next dirty page of `ino` at or after `from` (the DIRTY tag lookup).
pub fn next_dirty_page(k: &Kernel, ino: usize, from: u64) -> Option<(u64, Pfn)> {
    k.inodes[ino].next_dirty(from, |pfn| k.pages.test(pfn, PG_DIRTY))
}

/// What one `write_cache_pages` call did (counters of `struct writeback_control`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// Pages handed to `writepage` (`nr_to_write` consumed), whether or not IO started.
    pub pages: u64,
    /// Of those, pages the filesystem redirtied (`pages_skipped`: locked buffers).
    pub skipped: u64,
}

/// `do_writepages` → `write_cache_pages` (`mm/page-writeback.c`): write up to `nr_to_write`
/// dirty pages of `ino` through its filesystem's `writepage`, submitting the bios it asks
/// for. `sync` is `None` for `WB_SYNC_NONE`, or the page range of a `WB_SYNC_ALL` pass,
/// which waits for writeback in flight on a dirty page before writing it again. A
/// `WB_SYNC_NONE` walk is range_cyclic (from `writeback_index`, wrapping once) or, for a
/// queued work item, the whole file from its start. A filesystem with its own
/// `->writepages` (NFS coalesces pages into WRITE RPCs) keeps its state of the walk from
/// `writepages_start` to `writepages_end`.
pub async fn write_cache_pages(
    w: &World,
    ino: usize,
    nr_to_write: u64,
    sync: Option<Range<u64>>,
    range_cyclic: bool,
) -> Written {
    let wbc = WritebackControl {
        sync_all: sync.is_some(),
        ..Default::default()
    };
    walk(w, ino, nr_to_write, sync, range_cyclic, wbc).await
}

/// `generic_writepages` over pages `range` of `ino` with `WB_SYNC_ALL`, as jbd2 flushes an
/// ordered-data inode: [`write_cache_pages`] through the filesystem's `->writepage`.
pub async fn generic_writepages(w: &World, ino: usize, range: Range<u64>) -> Written {
    let wbc = WritebackControl {
        sync_all: true,
        writepage_only: true,
        ..Default::default()
    };
    walk(w, ino, u64::MAX, Some(range), false, wbc).await
}

async fn walk(
    w: &World,
    ino: usize,
    nr_to_write: u64,
    sync: Option<Range<u64>>,
    range_cyclic: bool,
    wbc: WritebackControl,
) -> Written {
    let sync_all = wbc.sync_all;
    let (a_ops, mut data) = {
        let mut k = w.borrow_mut();
        let a_ops = k.inodes[ino].a_ops;
        let data = a_ops.writepages_start(&mut k, ino, &wbc);
        (a_ops, data)
    };
    let (start, end) = match &sync {
        Some(r) => (r.start, r.end),
        None if range_cyclic => (w.borrow().inodes[ino].writeback_index, u64::MAX),
        None => (0, u64::MAX),
    };
    let mut index = start;
    let mut wrapped = sync_all || start == 0;
    let mut written = 0;
    let mut skipped = 0;
    while written < nr_to_write {
        let next = next_dirty_page(&w.borrow(), ino, index).filter(|&(i, _)| i < end);
        let Some((i, pfn)) = next else {
            if wrapped {
                index = 0;
                break;
            }
            wrapped = true;
            index = 0;
            continue;
        };
        if !sync_all && wrapped && start > 0 && i >= start {
            break;
        }
        index = i + 1;
        if sync_all && w.borrow().pages.test(pfn, PG_BH_LOCKED) {
            // WB_SYNC_ALL: block_write_full_page waits for the buffer (lock_buffer). mmsim
            // waits before clearing the page's dirty bit, so a buffer is never dirty on a
            // clean page.
            crate::mm::filemap::wait_on_page_bit(w, pfn, PG_BH_LOCKED).await;
            index = i;
            continue;
        }
        let take = {
            let mut k = w.borrow_mut();
            if k.pages.test(pfn, PG_WRITEBACK) {
                // WB_SYNC_NONE skips it; WB_SYNC_ALL waits below and retries.
                false
            } else {
                clear_page_dirty_for_io(&mut k, pfn)
            }
        };
        if !take {
            if sync_all && w.borrow().pages.test(pfn, PG_WRITEBACK) {
                crate::mm::filemap::wait_on_page_writeback(w, pfn).await;
                index = i;
            }
            continue;
        }
        let done = a_ops.writepage(&mut w.borrow_mut(), pfn, &wbc, &mut data);
        match done {
            WritePage::Submit { bdi, bio } => crate::mm::backing_dev::submit_bio(w, bdi, bio).await,
            WritePage::Redirtied => skipped += 1,
            WritePage::Async { bdi, queued: true } => a_ops.async_submit_wait(w, bdi).await,
            WritePage::Async { queued: false, .. } => {}
            WritePage::Congested { bdi } => a_ops.writeback_congestion_wait(w, bdi, sync_all).await,
            WritePage::Started | WritePage::Clean => {}
        }
        written += 1;
    }
    let queued_at_end = {
        let mut k = w.borrow_mut();
        let queued = a_ops.writepages_end(&mut k, data);
        // range_cyclic and whole-file passes remember where they stopped.
        if sync.is_none_or(|r| r.start == 0 && r.end == u64::MAX) {
            k.inodes[ino].writeback_index = index;
        }
        if next_dirty_page(&k, ino, 0).is_none() {
            k.inodes[ino].state &= !I_DIRTY_PAGES;
        }
        queued
    };
    if let Some(bdi) = queued_at_end {
        a_ops.async_submit_wait(w, bdi).await;
    }
    Written {
        pages: written,
        skipped,
    }
}
