//! The flusher (`fs/fs-writeback.c`, 3.2-3.12; `kernel-writeback.md` §6): one thread per
//! backing device, background writeback above the background threshold, periodic (kupdate)
//! writeback of expired inodes, and the b_dirty / b_io / b_more_io round robin with
//! per-inode chunks of half a second of bandwidth, each written by the page walk of
//! `write_cache_pages` (`mm::page_writeback`) through the filesystem's operations.
//!
//! Work items (§6.2): `wakeup_flusher_threads` (direct reclaim, `mm::backing_dev`) queues
//! one per dirty bdi, served before the periodic and background checks. `sync(2)` is
//! [`sys_sync`]; `fsync` and `fdatasync` write in the caller's context as the kernel does,
//! through [`vfs_fsync_range`].

use crate::engine::{self, Nanos, SEC};
use crate::mm::backing_dev::wakeup_flusher_threads;
use crate::mm::inode::{I_DIRTY, I_DIRTY_DATASYNC, I_DIRTY_PAGES, I_SYNC};
use crate::mm::page::{Pfn, PG_DIRTY};
use crate::mm::page_writeback::{
    account_page_dirtied, bdi_dirty_limit, dirty_limits, global_dirty_limits_traced,
    over_bground_thresh, write_cache_pages, DirtyTask,
};
use crate::mm::vmstat::ZoneStat;
use crate::mm::{Kernel, World};
use std::ops::Range;

/// What a `wb_writeback` pass is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pass {
    /// `wb_check_background_flush`.
    Background,
    /// `wb_check_old_data_flush` (kupdate).
    Periodic,
    /// A queued work item (`mm::backing_dev::WbWork`).
    Work,
}

/// `MIN_WRITEBACK_PAGES`: 4 MiB.
pub const MIN_WRITEBACK_PAGES: u64 = 1024;

/// `MAX_WRITEBACK_PAGES` (2.6.37): the flusher's slice of 4 MiB per `writeback_inodes_wb`.
pub const MAX_WRITEBACK_PAGES: u64 = 1024;

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

/// `__set_page_dirty_nobuffers` (`mm/page-writeback.c`; here beside `__mark_inode_dirty`,
/// which it calls): dirty a file page, account it and mark its inode dirty. Returns whether
/// it was clean.
pub fn __set_page_dirty_nobuffers(k: &mut Kernel, pfn: Pfn, task: &mut DirtyTask) -> bool {
    if k.pages.test(pfn, PG_DIRTY) {
        return false;
    }
    k.pages.set(pfn, PG_DIRTY);
    crate::mm::inode::tag_page_dirty(k, pfn);
    account_page_dirtied(k, pfn, task);
    let ino = k.pages.mapping[pfn as usize] as usize;
    mark_inode_dirty(k, ino);
    true
}

/// `over_bground_thresh` for `bdi` (3.2+: global or the bdi's share of the background limit;
/// 2.6.37: global only).
fn bdi_over_bground_thresh(k: &mut Kernel, bdi: usize) -> bool {
    let (bg, _) = global_dirty_limits_traced(k);
    if k.writeback_2_6_37() {
        return k.global_stat(ZoneStat::nr_dirty) + k.global_stat(ZoneStat::nr_unstable) > bg;
    }
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

/// `vfs_fsync_range` → the filesystem's `->fsync` (`fsync(2)`, `fdatasync(2)` with
/// `datasync`, and `msync(MS_SYNC)`): write the file's dirty pages in `range` and wait for
/// them, and whatever else the filesystem does (NFS: commit). mmsim keeps no inode metadata
/// or journal, so the commit that `fsync` adds and `fdatasync` may skip has nothing to write:
/// both cost the same here.
pub async fn vfs_fsync_range(w: &World, ino: usize, range: Range<u64>, datasync: bool) {
    let _ = datasync;
    let a_ops = w.borrow().inodes[ino].a_ops;
    a_ops.fsync(w, ino, range).await;
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

/// `write_inode` of `__writeback_single_inode` for `WB_SYNC_NONE`, in a turn of `chunk`
/// pages: if the inode was `I_DIRTY_DATASYNC` (only NFS sets it), clear it and call the
/// filesystem's `->write_inode`. Returns the pages that counts as written (NFS: pages
/// committed).
async fn write_inode(w: &World, ino: usize, nr_to_write: u64, chunk: u64) -> u64 {
    let a_ops = {
        let mut k = w.borrow_mut();
        let inode = &mut k.inodes[ino];
        if inode.state & I_DIRTY_DATASYNC == 0 {
            return 0;
        }
        inode.state &= !I_DIRTY_DATASYNC;
        inode.a_ops
    };
    a_ops.write_inode(w, ino, nr_to_write, chunk).await
}

/// `writeback_single_inode` with `WB_SYNC_NONE`: write up to `chunk` pages of `ino` under
/// `I_SYNC`, then requeue it (`requeue_inode`): a slice used up goes to b_more_io for its
/// next turn, anything else still dirty back to b_dirty. Returns the pages written and how
/// many of them count as progress.
async fn writeback_single_inode(
    w: &World,
    bdi: usize,
    ino: usize,
    chunk: u64,
    range_cyclic: bool,
) -> (u64, u64) {
    w.borrow_mut().inodes[ino].state |= I_SYNC;
    let wc = write_cache_pages(w, ino, chunk, None, range_cyclic).await;
    let left = chunk.saturating_sub(wc.pages);
    let n = wc.pages + write_inode(w, ino, left, chunk).await;
    crate::mm::trace::writeback_single_inode(&mut w.borrow_mut(), ino, chunk, n);
    let mut k = w.borrow_mut();
    k.inodes[ino].state &= !I_SYNC;
    if inode_has_dirty_pages(&k, ino) {
        if wc.skipped == 0 && n >= chunk {
            k.bdis[bdi].b_more_io.push_front(ino);
        } else {
            // Short of its slice, or not making progress because of locked buffers: it
            // waits its turn on b_dirty.
            redirty_tail(&mut k, bdi, ino);
        }
    } else if k.inodes[ino].state & I_DIRTY != 0 {
        // Dirtied during writeback (NFS: pages await COMMIT).
        redirty_tail(&mut k, bdi, ino);
    }
    crate::mm::inode::inode_sync_complete(&mut k, ino);
    crate::mm::trace::writeback_single_inode_v3(&mut k, ino, chunk, n);
    // mmsim deviation: pages redirtied because their buffers were locked are no progress.
    // The kernel counts them and may spin on them, burning CPU, until the buffers unlock;
    // mmsim charges the flusher no CPU, so it backs off instead.
    (n, n - wc.skipped)
}

/// The early return of `writeback_single_inode` for an inode someone else is writing
/// (`I_SYNC` held, `WB_SYNC_NONE`): to b_more_io for a later turn, nothing written out of
/// `to_write`.
fn requeue_busy_inode(k: &mut Kernel, bdi: usize, ino: usize, to_write: u64) {
    k.bdis[bdi].b_more_io.push_front(ino);
    crate::mm::trace::writeback_single_inode_v3(k, ino, to_write, 0);
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
            let k = w.borrow();
            if k.writeback_2_6_37() {
                crate::mm::page_writeback::v3_writeback_chunk(&k, bdi)
            } else {
                let (_, thresh) = dirty_limits(&k);
                let gdl = k.global_dirty_limit.hard_dirty_limit(thresh);
                writeback_chunk_size(
                    k.bdis[bdi].bw.avg_write_bandwidth,
                    gdl,
                    (*nr_pages).max(0) as u64,
                )
            }
        };
        if w.borrow().inodes[ino].state & I_SYNC != 0 {
            // A dirtier is writing it (2.6.37's throttle): on to the next turn.
            requeue_busy_inode(&mut w.borrow_mut(), bdi, ino, chunk);
            continue;
        }
        let (n, progress) = writeback_single_inode(w, bdi, ino, chunk, range_cyclic).await;
        *nr_pages -= n as i64;
        wrote += progress;
        let now = w.borrow().sched.now();
        if wrote > 0 && (now - start > 100 * engine::MSEC || *nr_pages <= 0) {
            break;
        }
    }
    wrote
}

/// `writeback_inodes_wb` as a throttled dirtier calls it in 2.6.36 – 3.0 (§4.2): every dirty
/// inode of the bdi goes to b_io, and they are written from its tail until `nr_to_write`
/// pages are gone, skipping inodes being written by someone else and stopping at one
/// dirtied after the call began. Returns the pages written.
pub async fn writeback_inodes_wb(w: &World, bdi: usize, nr_to_write: u64) -> u64 {
    let start = {
        let mut k = w.borrow_mut();
        queue_io(&mut k, bdi, Nanos::MAX);
        k.sched.now()
    };
    let mut left = nr_to_write as i64;
    let mut wrote = 0;
    while left > 0 {
        let ino = {
            let mut k = w.borrow_mut();
            let Some(&ino) = k.bdis[bdi].b_io.back() else {
                break;
            };
            if k.inodes[ino].dirtied_when > start {
                break;
            }
            k.bdis[bdi].b_io.pop_back();
            if k.inodes[ino].state & I_SYNC != 0 {
                requeue_busy_inode(&mut k, bdi, ino, left as u64);
                continue;
            }
            ino
        };
        let (n, progress) = writeback_single_inode(w, bdi, ino, left as u64, true).await;
        left -= n as i64;
        wrote += progress;
    }
    wrote
}

/// `wb_writeback` (§6.3).
async fn wb_writeback(w: &World, bdi: usize, pass: Pass, mut nr_pages: i64) -> u64 {
    let work_start = w.borrow().sched.now();
    crate::mm::page_writeback::v3_flusher_update_bandwidth(&mut w.borrow_mut(), bdi, work_start);
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
            crate::mm::page_writeback::v3_flusher_update_bandwidth(&mut k, bdi, work_start);
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
    use crate::mm::backing_dev::WbWork;
    use crate::mm::inode::new_inode;

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

    fn dirty_inode(k: &mut Kernel, name: &str, dirtied_when: Nanos) -> usize {
        let ino = new_inode(k, name, 0);
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
        let back = new_inode(&mut k, "back", 0);
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
        let newer = new_inode(&mut k, "newer", 0);
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
        let ino = new_inode(&mut k, "f", 0);
        mark_inode_dirty(&mut k, ino);
        mark_inode_dirty(&mut k, ino);
        assert_eq!(
            k.bdis[0].b_dirty.iter().copied().collect::<Vec<_>>(),
            vec![ino]
        );
        assert_ne!(k.inodes[ino].state & I_DIRTY_PAGES, 0);
    }

    /// v3's `writeback_single_inode` trace (patch 34) also marks the early return for an
    /// inode someone else is writing: requeued to b_more_io, nothing written out of the
    /// slice it would have had (patch 35's at the initial 100 MB/s: 16384 pages).
    #[test]
    fn ioless_v3_traces_the_requeue_of_an_inode_under_i_sync() {
        let w = crate::sim::boot_for_test(128, 0, "ioless-v3");
        crate::sim::add_block_device(&w, &crate::scenario::BlockDevice::ext4_hdd("sda")).unwrap();
        let cap = crate::mm::trace::testing::capture(&w);
        let ino = {
            let mut k = w.borrow_mut();
            let ino = new_inode(&mut k, "busy", 0);
            k.inodes[ino].state |= I_DIRTY_PAGES | I_SYNC;
            k.bdis[0].b_io.push_front(ino);
            ino
        };
        let w2 = w.clone();
        crate::sim::run_task(&w, SEC, async move {
            let mut nr_pages = 1 << 20;
            assert_eq!(writeback_inodes(&w2, 0, &mut nr_pages, true).await, 0);
        });
        assert_eq!(
            w.borrow().bdis[0]
                .b_more_io
                .iter()
                .copied()
                .collect::<Vec<_>>(),
            vec![ino]
        );
        let lines = cap.lines_with("writeback_single_inode");
        assert_eq!(lines.len(), 1, "{lines:?}");
        let want = format!(
            "writeback_single_inode: bdi 8:0: ino={} state=I_DIRTY_PAGES|I_SYNC age=0 wrote=0 to_write=16384",
            ino + 12
        );
        assert!(lines[0].ends_with(&want), "{}", lines[0]);
    }
}
