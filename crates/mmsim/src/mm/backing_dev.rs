//! Backing devices (`mm/backing-dev.c`, `include/linux/backing-dev.h`): one per block
//! device, holding its request queue and device model, the writeback statistics the dirty
//! throttle reads, the flusher's inode lists and work queue, and congestion state
//! (`kernel-writeback.md` §1, §7.1; `kernel-reclaim.md` §4.8).
//!
//! The device task here is the driver: it takes requests from the queue as the device can
//! accept them, holds each for its service time, and completes its pages.
//!
//! Work for the flushers is queued here too: `wakeup_flusher_threads` and
//! `bdi_start_background_writeback` are `fs/fs-writeback.c`'s, but they only file work on
//! the bdis and wake their flushers (`fs::fs_writeback`), so reclaim and the dirty throttle
//! call them without reaching into `fs`.

use super::fs_ops::AddressSpaceOps;
use super::page::Pfn;
use super::page_writeback::BdiBandwidth;
use super::vmstat::{VmEvent, ZoneStat};
use super::{page_io, Kernel, World};
use crate::block::{
    BatchState, Bio, Class, Device, Dir, IostatSampler, Release, RequestQueue, Submit,
};
use crate::engine::{self, Nanos, WaitQueueId};
use std::any::Any;
use std::collections::VecDeque;

/// Sectors per page.
pub const PAGE_SECTORS: u32 = 8;

/// Bio tag bit of a buffer's own write (`submit_bh` with `end_buffer_write_sync`, outside
/// page writeback: ext3's journal writing data buffers). Its completion unlocks the buffer
/// and leaves the page's writeback alone. The low 32 bits of a tag are the page frame.
pub const BH_SYNC_WRITE: u64 = 1 << 32;

/// A queued writeback request (`struct wb_writeback_work`, §6.2): WB_SYNC_NONE, no age
/// cut-off, whole-file ranges (`range_cyclic = 0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WbWork {
    /// Pages to write.
    pub nr_pages: i64,
}

/// One backing device.
#[derive(Debug)]
pub struct Bdi {
    /// Device name, e.g. `sda`.
    pub name: String,
    /// The request queue.
    pub queue: RequestQueue,
    /// The device's service-time model. For a network filesystem's mount, the server and
    /// network; its queue then stays empty, the filesystem sending its own requests.
    pub device: Box<dyn Device>,
    /// The operations of the filesystem mounted on it, which its inodes take.
    pub a_ops: &'static dyn AddressSpaceOps,
    /// The superblock of its filesystem (`NIL`: none, a raw device).
    pub sb: u32,
    /// The mounted filesystem's own state (`sb->s_fs_info`: ext3's journal, an NFS
    /// client), opaque to mm.
    pub fs_info: Option<Box<dyn Any>>,
    /// A mount with no request queue of its own: a network filesystem's (its superblock is
    /// an anonymous device, `0:N`). Its IO never reaches `queue`, it keeps `congested`
    /// itself (`set_bdi_congested`), and it has no `/proc/diskstats` entry.
    pub queueless: bool,
    /// `BDI_RECLAIMABLE`: dirty (+ unstable) pages of this device.
    pub reclaimable: u64,
    /// `BDI_WRITEBACK`: pages under writeback.
    pub writeback: u64,
    /// `BDI_DIRTIED`: pages dirtied, cumulative.
    pub dirtied: u64,
    /// `BDI_WRITTEN`: pages written, cumulative.
    pub written: u64,
    /// Pages written by dirtiers in `balance_dirty_pages` (2.6.37's throttle), cumulative.
    pub written_by_dirtiers: u64,
    /// Bandwidth estimate and dirty rate limit.
    pub bw: BdiBandwidth,
    /// The limits the dirty throttle last computed for this bdi, for graphs.
    pub throttle_view: ThrottleView,
    /// Dirty inodes, newest at the front (`b_dirty`; the kernel's list head).
    pub b_dirty: VecDeque<usize>,
    /// Inodes queued for this writeback round; taken from the back (`b_io`).
    pub b_io: VecDeque<usize>,
    /// Inodes that used their whole slice (`b_more_io`).
    pub b_more_io: VecDeque<usize>,
    /// Queued writeback requests, served first-in first-out (`bdi->work_list`).
    pub work_list: VecDeque<WbWork>,
    /// The flusher is in a writeback pass (`writeback_in_progress`).
    pub writeback_running: bool,
    /// When periodic (kupdate) writeback last ran.
    pub last_old_flush: Nanos,
    /// The flusher sleeps here.
    pub flusher_wq: WaitQueueId,
    /// Submitters waiting for a free request sleep here, per direction (`rl->wait[sync]`,
    /// indexed by [`Class::index`]); a freed request wakes one of them.
    pub request_wq: [WaitQueueId; 2],
    /// The device task waits here for requests.
    pub device_wq: WaitQueueId,
    /// Whether the queue counted as write-congested last time we looked.
    pub congested: bool,
    /// Next free sector for block allocation.
    pub next_free_sector: u64,
    /// iostat -x samples every 10 s (MMTests' monitor interval).
    pub iostat: IostatSampler,
}

/// What `balance_dirty_pages` last computed for a bdi, as its trace point would show it
/// (Wu drew his dirty-pages and dirty-bandwidth graphs from those traces). Pages and pages
/// per second; 0 until a dirtier is throttled, and 0 for a figure the kernel does not have.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThrottleView {
    /// The bdi's share of the dirty limit (`bdi_thresh`).
    pub bdi_thresh: u64,
    /// Where the throttle steers the bdi's dirty pages: 3.x's `bdi_setpoint`, or the last
    /// throttled task's own limit (2.6.37 and IO-less v3, whose `task_limit` it is).
    pub target: u64,
    /// The last throttled task's rate limit (3.x `task_ratelimit`, v3 `task_bw`); 2.6.37's
    /// throttle has none.
    pub task_rate: u64,
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

/// `bdi_start_background_writeback`: wake the flusher.
pub fn bdi_start_background_writeback(k: &mut Kernel, bdi: usize) {
    let q = k.bdis[bdi].flusher_wq;
    k.sched.wake_all(q);
}

/// `submit_bio`'s accounting: pgpgin/pgpgout, in KiB as /proc/vmstat shows them.
fn count_bio(k: &mut Kernel, bio: &Bio) {
    let kib = bio.nr_sectors as u64 / 2;
    match bio.dir {
        Dir::Write => k.count(VmEvent::pgpgout, kib),
        Dir::Read => k.count(VmEvent::pgpgin, kib),
    }
}

/// The current task's io context and a copy of its batching state.
fn current_ioc(k: &mut Kernel) -> (u32, BatchState) {
    let ioc = k.sched.current().0;
    let i = ioc as usize;
    if k.io_batch.len() <= i {
        k.io_batch.resize(i + 1, BatchState::default());
    }
    (ioc, k.io_batch[i])
}

/// `get_request` for the current task: allocate with its batching state, and keep the state.
fn queue_bio(k: &mut Kernel, bdi: usize, bio: Bio) -> Submit {
    let now = k.sched.now();
    let (ioc, mut batch) = current_ioc(k);
    let r = k.bdis[bdi]
        .queue
        .submit_bio_from(bio, ioc, Some(&mut batch), now);
    k.io_batch[ioc as usize] = batch;
    r
}

/// Queue a bio, sleeping while the request pool of its direction is full (`get_request` →
/// `io_schedule`, an exclusive wait). A task woken there becomes a batcher
/// (`ioc_set_batching`): it may take 32 requests, or allocate for 20 ms, past the limit.
pub async fn submit_bio(w: &World, bdi: usize, bio: Bio) {
    count_bio(&mut w.borrow_mut(), &bio);
    let mut woken = false;
    loop {
        let q = {
            let mut k = w.borrow_mut();
            let r = queue_bio(&mut k, bdi, bio);
            match r {
                Submit::Full => k.bdis[bdi].request_wq[bio.class().index()],
                Submit::Merged { freed } => {
                    if let Some(rel) = freed {
                        release(&mut k, bdi, &rel);
                    }
                    update_congestion(&mut k, bdi);
                    if woken {
                        // Woken for a request it then did not need.
                        pass_on_request_wakeup(&mut k, bdi, bio.class());
                    }
                    return;
                }
                Submit::Queued => {
                    update_congestion(&mut k, bdi);
                    let dq = k.bdis[bdi].device_wq;
                    k.sched.wake_all(dq);
                    return;
                }
            }
        };
        engine::wait_event(w, q, None, false).await;
        woken_for_request(&mut w.borrow_mut());
        woken = true;
    }
}

/// Queue a bio from a context that may not sleep (reclaim's `pageout`). Returns false if the
/// pool is full: the caller keeps the page.
pub fn try_submit_bio(k: &mut Kernel, bdi: usize, bio: Bio) -> bool {
    match queue_bio(k, bdi, bio) {
        Submit::Full => false,
        Submit::Merged { freed } => {
            count_bio(k, &bio);
            if let Some(rel) = freed {
                release(k, bdi, &rel);
            }
            update_congestion(k, bdi);
            true
        }
        Submit::Queued => {
            count_bio(k, &bio);
            update_congestion(k, bdi);
            let dq = k.bdis[bdi].device_wq;
            k.sched.wake_all(dq);
            true
        }
    }
}

/// Keep `nr_bdi_congested` in step with the queue's write congestion.
fn update_congestion(k: &mut Kernel, bdi: usize) {
    let now = k.bdis[bdi].queue.write_congested();
    if now != k.bdis[bdi].congested {
        k.bdis[bdi].congested = now;
        if now {
            k.nr_bdi_congested_async += 1;
        } else {
            k.nr_bdi_congested_async -= 1;
        }
    }
}

/// A request was freed: wake congestion waiters and one pool waiter as the kernel does.
fn release(k: &mut Kernel, bdi: usize, rel: &Release) {
    update_congestion(k, bdi);
    if rel.congestion_wake {
        let q = k.wq.congestion_async;
        k.sched.wake_all(q);
    }
    if rel.slots_freed {
        // __freed_request: wake one exclusive sleeper of this direction.
        let q = k.bdis[bdi].request_wq[rel.class.index()];
        k.sched.wake_one(q);
    }
}

/// A writer woken from the request pool's wait whose bio then merged passes the wake-up on
/// while a request is free: `__freed_request` wakes one exclusive waiter per freed request,
/// and in the kernel that waiter always takes one (`blk_queue_bio` tries the merge before
/// `get_request` sleeps, and not again after; mmsim's `submit_bio` tries it again).
pub fn pass_on_request_wakeup(k: &mut Kernel, bdi: usize, class: Class) {
    let q = k.bdis[bdi].request_wq[class.index()];
    let now = k.sched.now();
    if k.sched.queue_has_waiters(q) && k.bdis[bdi].queue.would_allocate(class, None, now) {
        k.sched.wake_one(q);
    }
}

/// After a sleep for a request: the woken task becomes a batcher (`ioc_set_batching`).
pub fn woken_for_request(k: &mut Kernel) {
    let now = k.sched.now();
    let (ioc, _) = current_ioc(k);
    k.io_batch[ioc as usize].start(now);
}

/// `bdi_write_congested`: the queue's async congestion, or for a mount with no queue the
/// congestion its filesystem keeps (NFS: pages in WRITE RPCs above `NfsCongestion::on`).
#[inline]
pub fn bdi_write_congested(k: &Kernel, bdi: usize) -> bool {
    let b = &k.bdis[bdi];
    if b.queueless {
        b.congested
    } else {
        b.queue.write_congested()
    }
}

/// Longest time a device model may take for one request before the run is stopped: an
/// hour. A model bound, not a physical constant: no device of the era comes near it, so a
/// model that answers more was given impossible parameters (a bandwidth of a few bytes per
/// second, say) and the run would only appear to hang.
pub const MAX_SERVICE_TIME: Nanos = 3600 * crate::engine::SEC;

/// Stop the run, naming the device, if its model answered `t` for an IO of `bytes` (`what`:
/// "write", "COMMIT", ...). Returns whether the run can go on.
pub fn check_service_time(k: &mut Kernel, bdi: usize, t: Nanos, what: &str, bytes: u64) -> bool {
    if t <= MAX_SERVICE_TIME {
        return true;
    }
    let msg = format!(
        "device \"{}\": its model takes {:.1} s for a {what} of {bytes} bytes (more than {} s): \
         its parameters are impossible",
        k.bdis[bdi].name,
        t as f64 / crate::engine::SEC as f64,
        MAX_SERVICE_TIME / crate::engine::SEC
    );
    k.fail(msg);
    false
}

/// The device: dispatch, serve, complete, one request at a time. When the elevator has
/// nothing to give (an empty queue, or CFQ idling or holding back async IO) the task sleeps
/// until a submission or completion wakes it, or until the elevator's timer.
pub async fn device_task(w: World, bdi: usize) {
    loop {
        let (rq, q, timeout) = {
            let mut k = w.borrow_mut();
            let now = k.sched.now();
            let b = &mut k.bdis[bdi];
            let rq = b.queue.dispatch(now);
            let timeout = b.queue.next_timer().map(|t| t.saturating_sub(now).max(1));
            (rq, b.device_wq, timeout)
        };
        let Some(rq) = rq else {
            engine::wait_event(&w, q, timeout, false).await;
            continue;
        };
        let t = {
            let mut k = w.borrow_mut();
            let now = k.sched.now();
            let io = rq.io();
            let t = k.bdis[bdi].device.service_time(&io, now);
            let what = match io.dir {
                Dir::Read => "read",
                Dir::Write => "write",
            };
            if !check_service_time(&mut k, bdi, t, what, io.bytes()) {
                return;
            }
            t
        };
        engine::sleep(&w, t).await;
        let mut k = w.borrow_mut();
        let now = k.sched.now();
        let c = k.bdis[bdi].queue.complete(rq, now);
        for &tag in &c.tags {
            let pfn = tag as Pfn;
            match c.dir {
                Dir::Write if tag & BH_SYNC_WRITE != 0 => {
                    page_io::end_buffer_write_sync(&mut k, pfn)
                }
                Dir::Write => {
                    let a_ops = k.bdis[bdi].a_ops;
                    a_ops.end_writeback_bio(&mut k, bdi, tag)
                }
                Dir::Read => page_io::end_page_read(&mut k, pfn),
            }
        }
        release(&mut k, bdi, &c.release);
        if c.kick {
            // cfq_schedule_dispatch: other driver tasks may have gone idle on a gate.
            let dq = k.bdis[bdi].device_wq;
            k.sched.wake_all(dq);
        }
        k.bdis[bdi].queue.recycle_tags(c.tags);
    }
}

/// The iostat monitor of every device: a sample every 10 s.
pub async fn iostat_task(w: World) {
    loop {
        let next = {
            let mut k = w.borrow_mut();
            let now = k.sched.now();
            let mut next = u64::MAX;
            for b in k.bdis.iter_mut() {
                let stats = b.queue.stats_at(now);
                b.iostat.sample(now, &stats);
                next = next.min(b.iostat.next_due());
            }
            next
        };
        if next == u64::MAX {
            return;
        }
        engine::sleep_until(&w, next).await;
    }
}
