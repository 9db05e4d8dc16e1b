//! The flusher (`fs/fs-writeback.c`, 3.2-3.12; `kernel-writeback.md` §6): one thread per
//! backing device, background writeback above the background threshold, periodic (kupdate)
//! writeback of expired inodes, the b_dirty / b_io / b_more_io round robin with per-inode
//! chunks of half a second of bandwidth, and the page walk of `write_cache_pages` that
//! turns contiguous dirty pages into contiguous bios.
//!
//! Work items (§6.2): `wakeup_flusher_threads` (direct reclaim) queues one per dirty bdi,
//! served before the periodic and background checks. `sync(2)` is [`sys_sync`]; `fsync`
//! and `fdatasync` write in the caller's context as the kernel does, through
//! [`vfs_fsync_range`].

use super::buffer::{self, BlockWrite};
use super::inode::{I_DIRTY, I_DIRTY_DATASYNC, I_DIRTY_PAGES, I_SYNC};
use super::nfs;
use crate::block::{Bio, Dir};
use crate::engine::{self, Nanos, SEC};
use crate::mm::backing_dev::{submit_bio, PAGE_SECTORS};
use crate::mm::page::{Pfn, PG_BH_LOCKED, PG_DIRTY, PG_WRITEBACK};
use crate::mm::page_writeback::{
    bdi_dirty_limit, clear_page_dirty_for_io, dirty_limits, over_bground_thresh,
    test_set_page_writeback,
};
use crate::mm::vmstat::ZoneStat;
use crate::mm::{Kernel, World};
use std::ops::Range;

/// A queued writeback request (`struct wb_writeback_work`, §6.2): WB_SYNC_NONE, no age
/// cut-off, whole-file ranges (`range_cyclic = 0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WbWork {
    /// Pages to write.
    pub nr_pages: i64,
}

/// What a `wb_writeback` pass is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pass {
    /// `wb_check_background_flush`.
    Background,
    /// `wb_check_old_data_flush` (kupdate).
    Periodic,
    /// A queued [`WbWork`].
    Work,
}

/// `wakeup_flusher_threads(nr_pages)`: queue a work item of `nr_pages` (0: every dirty and
/// unstable page) on every bdi with dirty inodes and wake its flusher. Direct reclaim calls
/// it when a pass scanned more than 1.5 times its target.
pub fn wakeup_flusher_threads(k: &mut Kernel, nr_pages: u64) {
    let nr = if nr_pages == 0 {
        k.global_stat(ZoneStat::nr_dirty) + k.global_stat(ZoneStat::nr_unstable)
    } else {
        nr_pages
    };
    for bdi in 0..k.bdis.len() {
        let b = &mut k.bdis[bdi];
        if b.b_dirty.is_empty() && b.b_io.is_empty() && b.b_more_io.is_empty() {
            continue;
        }
        b.work_list.push_back(WbWork {
            nr_pages: nr as i64,
        });
        let q = b.flusher_wq;
        k.sched.wake_all(q);
    }
}

/// `MIN_WRITEBACK_PAGES`: 4 MiB.
pub const MIN_WRITEBACK_PAGES: u64 = 1024;
/// ext4 block allocation granularity for a streaming file (mballoc preallocation), pages.
pub const EXT4_EXTENT_PAGES: u64 = 8192;

/// `__mark_inode_dirty(I_DIRTY_PAGES)`.
pub fn mark_inode_dirty(k: &mut Kernel, ino: usize) {
    __mark_inode_dirty(k, ino, I_DIRTY_PAGES);
}

/// `__mark_inode_dirty`: set `flags`. The first dirtying of a clean inode puts it at the
/// head of b_dirty with `dirtied_when = now` and wakes the flusher if the device had
/// nothing dirty; an inode already dirty stays where it is.
pub fn __mark_inode_dirty(k: &mut Kernel, ino: usize, flags: u32) {
    let inode = &mut k.inodes[ino];
    if inode.state & flags == flags {
        return;
    }
    let was_dirty = inode.state & I_DIRTY != 0;
    inode.state |= flags;
    if was_dirty {
        return;
    }
    inode.dirtied_when = k.sched.now();
    if inode.state & I_SYNC != 0 {
        // Being written: writeback re-files it.
        return;
    }
    let bdi = inode.bdi;
    let b = &mut k.bdis[bdi];
    let was_clean = b.b_dirty.is_empty() && b.b_io.is_empty() && b.b_more_io.is_empty();
    b.b_dirty.push_front(ino);
    if was_clean {
        let q = b.flusher_wq;
        k.sched.wake_all(q);
    }
}

/// `bdi_start_background_writeback`: wake the flusher.
pub fn bdi_start_background_writeback(k: &mut Kernel, bdi: usize) {
    let q = k.bdis[bdi].flusher_wq;
    k.sched.wake_all(q);
}

/// `over_bground_thresh` for `bdi` (3.2+: global or the bdi's share of the background limit).
fn bdi_over_bground_thresh(k: &mut Kernel, bdi: usize) -> bool {
    let (bg, _) = dirty_limits(k);
    let now = k.sched.now();
    let (num, den) = k.bdi_props.fraction(bdi, now);
    let nr = k.global_stat(ZoneStat::nr_dirty) + k.global_stat(ZoneStat::nr_unstable);
    over_bground_thresh(
        nr,
        bg,
        k.bdis[bdi].reclaimable,
        bdi_dirty_limit(bg, num, den, 0, 100, 0),
    )
}

/// `writeback_chunk_size` (3.1+, §6.5): half a second of bandwidth, at most an eighth of
/// the dirty limit, rounded to 4 MiB units.
pub fn writeback_chunk_size(avg_write_bw: u64, global_dirty_limit: u64, nr_pages: u64) -> u64 {
    let chunk = (avg_write_bw / 2).min(global_dirty_limit / 8).min(nr_pages);
    (chunk + MIN_WRITEBACK_PAGES) / MIN_WRITEBACK_PAGES * MIN_WRITEBACK_PAGES
}

/// `queue_io`: b_more_io to the head of b_io, then inodes dirtied before `older_than` from
/// the tail of b_dirty, oldest first.
fn queue_io(k: &mut Kernel, bdi: usize, older_than: Nanos) {
    let Kernel { bdis, inodes, .. } = k;
    let b = &mut bdis[bdi];
    while let Some(ino) = b.b_more_io.pop_back() {
        b.b_io.push_front(ino);
    }
    while let Some(&ino) = b.b_dirty.back() {
        if inodes[ino].dirtied_when > older_than {
            break;
        }
        b.b_dirty.pop_back();
        b.b_io.push_front(ino);
    }
}

/// Whether an inode still has dirty pages.
fn inode_has_dirty_pages(k: &Kernel, ino: usize) -> bool {
    k.inodes[ino].state & I_DIRTY_PAGES != 0
}

/// `redirty_tail`: back to the head of b_dirty, refreshing `dirtied_when` if it would
/// otherwise break the list's age order.
fn redirty_tail(k: &mut Kernel, bdi: usize, ino: usize) {
    let now = k.sched.now();
    if let Some(&newest) = k.bdis[bdi].b_dirty.front() {
        if k.inodes[ino].dirtied_when < k.inodes[newest].dirtied_when {
            k.inodes[ino].dirtied_when = now;
        }
    }
    k.bdis[bdi].b_dirty.push_front(ino);
}

/// The next dirty page of `ino` at or after `from` (the DIRTY tag lookup).
fn next_dirty_page(k: &Kernel, ino: usize, from: u64) -> Option<(u64, Pfn)> {
    k.inodes[ino]
        .cached_from(from)
        .find(|&(_, pfn)| k.pages.test(pfn, PG_DIRTY))
}

/// The sector of page `index` of a file if it has one already: on a raw device every page
/// has, on a filesystem once writeback has allocated its block.
pub fn mapped_sector(k: &Kernel, ino: usize, index: u64) -> Option<u64> {
    if !k.bdis[k.inodes[ino].bdi].fs.allocates_blocks() {
        return Some(index * PAGE_SECTORS as u64);
    }
    k.inodes[ino].sector_of(index)
}

/// The sector of page `index` of a file, allocating an extent if the page has none (at
/// writeback for delayed-allocation filesystems; for ext3 the allocation happened at
/// `write()`, which for placement is the same). Raw devices map pages one to one; NFS
/// allocates nothing (its pages never reach a block queue).
pub fn map_block(k: &mut Kernel, ino: usize, index: u64) -> u64 {
    if let Some(s) = mapped_sector(k, ino, index) {
        return s;
    }
    let bdi = k.inodes[ino].bdi;
    let first = index / EXT4_EXTENT_PAGES * EXT4_EXTENT_PAGES;
    let sector = k.bdis[bdi].next_free_sector;
    k.bdis[bdi].next_free_sector += EXT4_EXTENT_PAGES * PAGE_SECTORS as u64;
    k.inodes[ino].add_extent(first, sector, EXT4_EXTENT_PAGES);
    sector + (index - first) * PAGE_SECTORS as u64
}

/// Start writeback of one dirty, unlocked file page: the filesystem maps it and a bio goes
/// to the queue (`writepage` / `mpage_submit`). The caller has cleared its dirty bit. On a
/// buffer-head filesystem `block_write_full_page` may find nothing to write, or redirty the
/// page; returns whether it was redirtied (`wbc.pages_skipped`).
async fn writepage(w: &World, ino: usize, index: u64, pfn: Pfn, sync: bool) -> bool {
    let (bdi, sector) = {
        let mut k = w.borrow_mut();
        let sector = map_block(&mut k, ino, index);
        let bdi = k.inodes[ino].bdi;
        if k.bdis[bdi].fs.uses_buffer_heads() {
            match buffer::block_write_full_page(&mut k, pfn) {
                BlockWrite::Io => {}
                BlockWrite::Clean => return false,
                BlockWrite::Redirtied => return true,
            }
        } else {
            test_set_page_writeback(&mut k, pfn);
        }
        (bdi, sector)
    };
    let bio = Bio {
        dir: Dir::Write,
        sync,
        sector,
        nr_sectors: PAGE_SECTORS,
        tag: pfn as u64,
    };
    submit_bio(w, bdi, bio).await;
    false
}

/// What one `write_cache_pages` call did (counters of `struct writeback_control`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// Pages handed to `writepage` (`nr_to_write` consumed), whether or not IO started.
    pub pages: u64,
    /// Of those, pages the filesystem redirtied (`pages_skipped`: locked buffers).
    pub skipped: u64,
}

/// `write_cache_pages`: write up to `nr_to_write` dirty pages. `sync` is `None` for
/// `WB_SYNC_NONE`, or the page range of a `WB_SYNC_ALL` pass, which waits for writeback in
/// flight on a dirty page before writing it again. A `WB_SYNC_NONE` walk is range_cyclic
/// (from `writeback_index`, wrapping once) or, for a queued work item, the whole file
/// from its start. On NFS (`nfs_writepages`) the pages are coalesced into WRITE RPCs by a
/// page-IO descriptor, sent at the end of the call at the latest.
pub async fn write_cache_pages(
    w: &World,
    ino: usize,
    nr_to_write: u64,
    sync: Option<Range<u64>>,
    range_cyclic: bool,
) -> Written {
    let mut nfs_desc = {
        let mut k = w.borrow_mut();
        // Background and kupdate writeback send low-priority RPCs (`FLUSH_LOWPRI`).
        let priority = if sync.is_some() {
            nfs::RpcPriority::Normal
        } else {
            nfs::RpcPriority::Low
        };
        nfs::is_nfs_inode(&k, ino)
            .then(|| nfs::nfs_pageio_init(&mut k, ino, nfs::WriteHow::CondStable, priority))
    };
    let sync_all = sync.is_some();
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
            buffer::wait_on_buffer(w, pfn).await;
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
                wait_on_page_writeback(w, pfn).await;
                index = i;
            }
            continue;
        }
        match nfs_desc.as_mut() {
            Some(d) => nfs::nfs_pageio_add(&mut w.borrow_mut(), d, i, pfn),
            None => {
                if writepage(w, ino, i, pfn, sync_all).await {
                    skipped += 1;
                }
            }
        }
        written += 1;
    }
    let mut k = w.borrow_mut();
    if let Some(d) = nfs_desc {
        nfs::nfs_pageio_complete(&mut k, d);
    }
    // range_cyclic and whole-file passes remember where they stopped.
    if sync.is_none_or(|r| r.start == 0 && r.end == u64::MAX) {
        k.inodes[ino].writeback_index = index;
    }
    if next_dirty_page(&k, ino, 0).is_none() {
        k.inodes[ino].state &= !I_DIRTY_PAGES;
    }
    Written {
        pages: written,
        skipped,
    }
}

/// `wait_on_page_writeback`.
pub async fn wait_on_page_writeback(w: &World, pfn: Pfn) {
    crate::mm::filemap::wait_on_page_bit(w, pfn, PG_WRITEBACK).await;
}

/// `filemap_write_and_wait_range`: write every dirty page of the file in `range` in the
/// caller's context and wait for all writeback of the range to end.
pub async fn filemap_write_and_wait_range(w: &World, ino: usize, range: Range<u64>) {
    write_cache_pages(w, ino, u64::MAX, Some(range.clone()), false).await;
    let pages: Vec<Pfn> = w.borrow().inodes[ino]
        .cached_from(range.start)
        .take_while(|&(i, _)| i < range.end)
        .map(|(_, p)| p)
        .collect();
    for pfn in pages {
        wait_on_page_writeback(w, pfn).await;
    }
}

/// `vfs_fsync_range` → the filesystem's `fsync` (`fsync(2)`, `fdatasync(2)` with `datasync`,
/// and `msync(MS_SYNC)`): write the file's dirty pages in `range` and wait for them; on NFS
/// (`nfs_file_fsync`) then a COMMIT of every unstable page, waited for. mmsim keeps no
/// inode metadata or journal, so the commit that `fsync` adds and `fdatasync` may skip has
/// nothing to write: both cost the same here.
pub async fn vfs_fsync_range(w: &World, ino: usize, range: Range<u64>, datasync: bool) {
    let _ = datasync;
    filemap_write_and_wait_range(w, ino, range).await;
    let on_nfs = nfs::is_nfs_inode(&w.borrow(), ino);
    if on_nfs {
        nfs::nfs_commit_inode(w, ino).await;
    }
}

/// `sync(2)` (3.x, `kernel-writeback.md` §6.6): wake every flusher for all dirty pages
/// (`wakeup_flusher_threads(0)`), then for each device write every dirty inode with
/// WB_SYNC_ALL and wait for it (`sync_inodes_sb`; on NFS with its COMMIT). mmsim keeps no
/// metadata, so `->sync_fs` and the block-device flush have nothing to do.
pub async fn sys_sync(w: &World) {
    wakeup_flusher_threads(&mut w.borrow_mut(), 0);
    // Every inode: dirty ones are written, and writeback in flight is waited for.
    let inodes = w.borrow().inodes.len();
    for ino in 0..inodes {
        vfs_fsync_range(w, ino, 0..u64::MAX, false).await;
    }
}

/// `write_inode` of `__writeback_single_inode` for `WB_SYNC_NONE`: if the inode was
/// `I_DIRTY_DATASYNC` (only NFS sets it), clear it and call the filesystem's `write_inode`.
/// Returns the pages that counts as written (NFS: pages committed).
fn write_inode(k: &mut Kernel, ino: usize, nr_to_write: u64) -> u64 {
    let inode = &mut k.inodes[ino];
    if inode.state & I_DIRTY_DATASYNC == 0 {
        return 0;
    }
    inode.state &= !I_DIRTY_DATASYNC;
    if nfs::is_nfs_inode(k, ino) {
        nfs::nfs_write_inode(k, ino, nr_to_write)
    } else {
        0
    }
}

/// `writeback_sb_inodes` over b_io for one work pass; returns pages written.
async fn writeback_inodes(w: &World, bdi: usize, nr_pages: &mut i64, range_cyclic: bool) -> u64 {
    let start = w.borrow().sched.now();
    let mut wrote = 0;
    loop {
        let ino = {
            let mut k = w.borrow_mut();
            match k.bdis[bdi].b_io.pop_back() {
                Some(ino) => ino,
                None => break,
            }
        };
        let chunk = {
            let mut k = w.borrow_mut();
            let (_, thresh) = dirty_limits(&k);
            let gdl = k.global_dirty_limit.hard_dirty_limit(thresh);
            k.inodes[ino].state |= I_SYNC;
            writeback_chunk_size(
                k.bdis[bdi].bw.avg_write_bandwidth,
                gdl,
                (*nr_pages).max(0) as u64,
            )
        };
        let wc = write_cache_pages(w, ino, chunk, None, range_cyclic).await;
        let n = wc.pages + write_inode(&mut w.borrow_mut(), ino, chunk.saturating_sub(wc.pages));
        crate::mm::trace::writeback_single_inode(&mut w.borrow_mut(), ino, chunk, n);
        *nr_pages -= n as i64;
        // mmsim deviation: pages redirtied because their buffers were locked are no
        // progress here. The kernel counts them and may spin on them, burning CPU, until the
        // buffers unlock; mmsim charges the flusher no CPU, so it backs off instead.
        wrote += n - wc.skipped;
        {
            // requeue_inode
            let mut k = w.borrow_mut();
            k.inodes[ino].state &= !I_SYNC;
            if inode_has_dirty_pages(&k, ino) {
                if wc.skipped > 0 {
                    // Not making progress because of locked buffers: skip it for now.
                    redirty_tail(&mut k, bdi, ino);
                } else if n >= chunk {
                    k.bdis[bdi].b_more_io.push_front(ino);
                } else {
                    redirty_tail(&mut k, bdi, ino);
                }
            } else if k.inodes[ino].state & I_DIRTY != 0 {
                // Dirtied during writeback (NFS: pages await COMMIT).
                redirty_tail(&mut k, bdi, ino);
            }
        }
        let now = w.borrow().sched.now();
        if wrote > 0 && (now - start > 100 * engine::MSEC || *nr_pages <= 0) {
            break;
        }
    }
    wrote
}

/// `wb_writeback` (§6.3).
async fn wb_writeback(w: &World, bdi: usize, pass: Pass, mut nr_pages: i64) -> u64 {
    let work_start = w.borrow().sched.now();
    let mut total = 0;
    loop {
        if nr_pages <= 0 {
            break;
        }
        {
            let mut k = w.borrow_mut();
            // Background and periodic passes give way to queued work.
            if pass != Pass::Work && !k.bdis[bdi].work_list.is_empty() {
                break;
            }
            if pass == Pass::Background && !bdi_over_bground_thresh(&mut k, bdi) {
                break;
            }
            let now = k.sched.now();
            let older_than = match pass {
                Pass::Periodic => now.saturating_sub(k.vm.dirty.dirty_expire()),
                Pass::Background => now,
                Pass::Work => Nanos::MAX,
            };
            if k.bdis[bdi].b_io.is_empty() {
                queue_io(&mut k, bdi, older_than);
            }
        }
        let progress = writeback_inodes(w, bdi, &mut nr_pages, pass != Pass::Work).await;
        total += progress;
        {
            let mut k = w.borrow_mut();
            let now = k.sched.now();
            let (written, dirtied) = (k.bdis[bdi].written, k.bdis[bdi].dirtied);
            k.bdis[bdi]
                .bw
                .wb_update_bandwidth(now, written, dirtied, work_start);
        }
        if progress > 0 {
            continue;
        }
        if w.borrow().bdis[bdi].b_more_io.is_empty() {
            break;
        }
        // Wait for the inode that has IO in flight to make progress.
        let q = w.borrow().wq.congestion_async;
        engine::wait_event(w, q, Some(100 * engine::MSEC), false).await;
    }
    total
}

/// The flusher thread of `bdi` (`bdi_writeback_thread` + `wb_do_writeback`).
pub async fn flusher(w: World, bdi: usize) {
    loop {
        w.borrow_mut().bdis[bdi].writeback_running = true;
        // Queued work first, in order.
        loop {
            let work = w.borrow_mut().bdis[bdi].work_list.pop_front();
            let Some(work) = work else { break };
            wb_writeback(&w, bdi, Pass::Work, work.nr_pages).await;
        }
        // wb_check_old_data_flush: periodic writeback of expired inodes.
        let kupdate = {
            let k = w.borrow();
            let interval = k.vm.dirty.dirty_writeback_interval();
            let now = k.sched.now();
            interval
                .map(|i| now >= k.bdis[bdi].last_old_flush + i)
                .unwrap_or(false)
        };
        if kupdate {
            let nr = {
                let mut k = w.borrow_mut();
                let now = k.sched.now();
                k.bdis[bdi].last_old_flush = now;
                (k.global_stat(ZoneStat::nr_dirty) + k.global_stat(ZoneStat::nr_unstable)) as i64
            };
            if nr > 0 {
                wb_writeback(&w, bdi, Pass::Periodic, nr).await;
            }
        }
        // wb_check_background_flush.
        let background = bdi_over_bground_thresh(&mut w.borrow_mut(), bdi);
        if background {
            wb_writeback(&w, bdi, Pass::Background, i64::MAX).await;
        }
        let (q, timeout) = {
            let mut k = w.borrow_mut();
            k.bdis[bdi].writeback_running = false;
            let b = &k.bdis[bdi];
            let dirty = !(b.b_dirty.is_empty() && b.b_io.is_empty() && b.b_more_io.is_empty());
            let interval = k.vm.dirty.dirty_writeback_interval();
            (b.flusher_wq, if dirty { interval } else { None })
        };
        // Work queued while this pass ran: run again at once.
        if !w.borrow().bdis[bdi].work_list.is_empty() {
            continue;
        }
        engine::wait_event(
            &w,
            q,
            timeout.or(if background { Some(SEC / 10) } else { None }),
            false,
        )
        .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_is_half_a_second_of_bandwidth_in_4_mib_units() {
        // kernel-writeback.md §6.5: thresh 183 500 pages; 100 MB/s → 13 312 pages.
        assert_eq!(writeback_chunk_size(25_600, 183_500, u64::MAX), 13_312);
        // 400 MB/s SSD: capped by limit/8 → 23 552 pages.
        assert_eq!(writeback_chunk_size(102_400, 183_500, u64::MAX), 23_552);
        // 5 MB/s USB stick: 1024 pages.
        assert_eq!(writeback_chunk_size(1_280, 183_500, u64::MAX), 1_024);
    }

    fn machine_with_disk() -> crate::mm::World {
        let w = crate::sim::boot_for_test(128, 0, "3.9");
        crate::sim::add_block_device(&w, &crate::scenario::BlockDevice::ext4_hdd("sda")).unwrap();
        w
    }

    #[test]
    fn a_raw_device_maps_pages_one_to_one_and_a_filesystem_only_once_allocated() {
        let w = machine_with_disk();
        let mut raw = crate::scenario::BlockDevice::ext4_hdd("sdb");
        raw.filesystem = crate::scenario::Filesystem::Raw;
        crate::sim::add_block_device(&w, &raw).unwrap();
        let mut k = w.borrow_mut();
        k.inodes.push(super::super::inode::Inode::new("sdb", 1));
        k.inodes.push(super::super::inode::Inode::new("file", 0));
        let (dev, file) = (k.inodes.len() - 2, k.inodes.len() - 1);
        assert_eq!(mapped_sector(&k, dev, 5), Some(5 * PAGE_SECTORS as u64));
        assert_eq!(
            mapped_sector(&k, file, 5),
            None,
            "no block before writeback"
        );
        let sector = map_block(&mut k, file, 5);
        assert_eq!(mapped_sector(&k, file, 5), Some(sector));
    }

    fn dirty_inode(k: &mut Kernel, name: &str, dirtied_when: Nanos) -> usize {
        k.inodes.push(super::super::inode::Inode::new(name, 0));
        let ino = k.inodes.len() - 1;
        k.inodes[ino].state |= I_DIRTY_PAGES;
        k.inodes[ino].dirtied_when = dirtied_when;
        k.bdis[0].b_dirty.push_front(ino);
        ino
    }

    /// §6.4: queue_io moves b_more_io to the head of b_io, then the inodes dirtied before the
    /// cut-off from the tail (oldest end) of b_dirty; b_io is consumed from its tail, so the
    /// previous round's leftovers go first, then the oldest expired inodes.
    #[test]
    fn queue_io_takes_expired_inodes_oldest_first_after_the_leftovers() {
        let w = machine_with_disk();
        let mut k = w.borrow_mut();
        let old = dirty_inode(&mut k, "old", SEC);
        let mid = dirty_inode(&mut k, "mid", 2 * SEC);
        let new = dirty_inode(&mut k, "new", 10 * SEC);
        k.bdis[0].b_more_io.push_front(new + 1000);
        queue_io(&mut k, 0, 5 * SEC);
        let order: Vec<usize> = k.bdis[0].b_io.iter().rev().copied().collect();
        assert_eq!(
            order,
            vec![new + 1000, old, mid],
            "leftovers, then oldest first"
        );
        assert_eq!(
            k.bdis[0].b_dirty.iter().copied().collect::<Vec<_>>(),
            vec![new],
            "not yet expired"
        );
        assert!(k.bdis[0].b_more_io.is_empty());
    }

    /// §6.4 redirty_tail: an inode put back at the head of b_dirty gets a fresh
    /// `dirtied_when` if it is older than the newest inode there, so the list stays ordered.
    #[test]
    fn redirty_tail_keeps_b_dirty_in_age_order() {
        let w = machine_with_disk();
        let mut k = w.borrow_mut();
        let newest = dirty_inode(&mut k, "newest", 3 * SEC);
        k.inodes.push(super::super::inode::Inode::new("back", 0));
        let back = k.inodes.len() - 1;
        k.inodes[back].dirtied_when = SEC;
        redirty_tail(&mut k, 0, back);
        assert_eq!(k.bdis[0].b_dirty.front(), Some(&back));
        let now = k.sched.now();
        assert_eq!(
            k.inodes[back].dirtied_when, now,
            "older than the newest: refreshed to now"
        );
        assert_ne!(now, SEC);
        // An inode newer than the newest keeps its time.
        k.inodes.push(super::super::inode::Inode::new("newer", 0));
        let newer = k.inodes.len() - 1;
        k.inodes[newer].dirtied_when = 5 * SEC;
        k.inodes[newest].dirtied_when = 3 * SEC;
        k.bdis[0].b_dirty.push_front(newest);
        redirty_tail(&mut k, 0, newer);
        assert_eq!(k.inodes[newer].dirtied_when, 5 * SEC);
        assert_eq!(k.bdis[0].b_dirty.front(), Some(&newer));
    }

    /// §6.1/§6.2: direct reclaim's `wakeup_flusher_threads(n)` queues a work item of n pages
    /// on every bdi with dirty inodes, and none on a clean one; n = 0 means every dirty page.
    #[test]
    fn wakeup_flusher_threads_queues_work_on_dirty_bdis_only() {
        let w = machine_with_disk();
        crate::sim::add_block_device(&w, &crate::scenario::BlockDevice::ext4_hdd("sdb")).unwrap();
        let mut k = w.borrow_mut();
        dirty_inode(&mut k, "f", SEC);
        wakeup_flusher_threads(&mut k, 4096);
        assert_eq!(
            k.bdis[0].work_list.iter().copied().collect::<Vec<_>>(),
            vec![WbWork { nr_pages: 4096 }]
        );
        assert!(k.bdis[1].work_list.is_empty(), "sdb has nothing dirty");
        let zi = 1;
        k.zones[zi].mod_stat(ZoneStat::nr_dirty, 300);
        wakeup_flusher_threads(&mut k, 0);
        assert_eq!(k.bdis[0].work_list.back(), Some(&WbWork { nr_pages: 300 }));
        k.zones[zi].mod_stat(ZoneStat::nr_dirty, -300);
    }

    /// §3.2: the first dirtying puts the inode at the head of b_dirty with the current
    /// time; a second one changes nothing.
    #[test]
    fn an_inode_is_filed_once_when_first_dirtied() {
        let w = machine_with_disk();
        let mut k = w.borrow_mut();
        k.inodes.push(super::super::inode::Inode::new("f", 0));
        let ino = k.inodes.len() - 1;
        mark_inode_dirty(&mut k, ino);
        mark_inode_dirty(&mut k, ino);
        assert_eq!(
            k.bdis[0].b_dirty.iter().copied().collect::<Vec<_>>(),
            vec![ino]
        );
        assert_ne!(k.inodes[ino].state & I_DIRTY_PAGES, 0);
    }
}
