//! The block layer: request queues, merging, elevators, device service times and the
//! `/proc/diskstats` / `iostat -x` figures, as Linux 3.x has them
//! (`kernel-writeback.md` §9, §7.1; `kernel-reclaim.md` §4.8; `mmtests.md` §4).
//!
//! Everything here is a plain data structure driven by the caller with explicit `now`
//! arguments. Nothing sleeps, spawns or reads a clock: the simulator's device task decides
//! when to submit, dispatch and complete, and puts submitters to sleep when a queue answers
//! [`Submit::Full`]. There is no hash-map iteration and no randomness, so the same calls give
//! the same answers.
//!
//! # Life of a bio
//!
//! 1. [`RequestQueue::submit_bio`] first tries to merge the [`Bio`] into a request that is
//!    still queued (back merge: the bio starts where the request ends; front merge: it ends
//!    where the request starts), same direction, result at most `max_sectors`. A merge that
//!    makes two queued requests adjacent merges them too (`attempt_back_merge`,
//!    `attempt_front_merge`), freeing one request.
//! 2. Otherwise a request is allocated from the per-class pool (`count[sync]`, reads and sync
//!    writes in the sync pool, writeback in the async pool). At `nr_requests - nr_requests/8
//!    + 1` (113 of 128) requests the class becomes congested; at `nr_requests` the pool is
//!    marked full and later submitters get [`Submit::Full`] unless they are batchers
//!    ([`BatchState`], `BLK_BATCH_REQ` = 32 requests or `BLK_BATCH_TIME` = 20 ms); the hard
//!    cap is `1.5 × nr_requests`.
//! 3. The elevator ([`ElevatorKind`]: cfq, deadline or noop) picks the next request when
//!    the caller calls [`RequestQueue::dispatch`], as long as fewer than `depth` requests are
//!    at the device. CFQ may hold requests back (idling for a sync queue's next request,
//!    no async IO while sync IO is in flight); [`RequestQueue::next_timer`] then says when
//!    to ask again.
//! 4. The caller asks a [`Device`] for the service time, waits for it, and hands the request
//!    back with [`RequestQueue::complete`], which returns the tags of every merged bio and
//!    says whether congestion cleared (and whether `congestion_wait` sleepers must be
//!    woken) and whether a pool slot freed (wake one `Full` sleeper of that class).
//! 5. [`DiskStats`] follow the kernel's `drive_stat_acct` / `blk_account_io_done` rules;
//!    [`iostat_x`] turns two snapshots into the `iostat -x` columns, and [`IostatSampler`]
//!    takes one sample every 10 simulated seconds and gives the MMTests Mean/Max rows.
//!
//! ```
//! use mmsim::block::{Bio, Device, Dir, Hdd, RequestQueue, Submit};
//! use mmsim::engine::MSEC;
//!
//! let mut disk = Hdd::desktop_7200("sda").expect("valid parameters");
//! let mut q = RequestQueue::new("sda", disk.queue_config());
//! // One writepages call: 16 dirty pages in a row become one 64 KiB request.
//! for i in 0..16 {
//!     let bio = Bio { dir: Dir::Write, sync: false, sector: 8 * i, nr_sectors: 8, tag: i };
//!     assert_ne!(q.submit_bio(bio, 0), Submit::Full);
//! }
//! let rq = q.dispatch(0).expect("a request is queued");
//! let done_at = disk.service_time(&rq.io(), 0);
//! let c = q.complete(rq, done_at);
//! assert_eq!(c.tags.len(), 16);
//! assert!(done_at < MSEC); // sequential from the head's position: transfer only
//! ```
//!
//! # Defaults and their sources
//!
//! | Value | Default | Source |
//! |---|---|---|
//! | `nr_requests` | 128 per class | `BLKDEV_MAX_RQ`, `include/linux/blkdev.h` |
//! | congestion on / off | 113 / 103 of 128 | `queue_congestion_{on,off}_threshold`, `block/blk.h` |
//! | batcher allowance | 32 requests or 20 ms, hard cap 1.5 × `nr_requests` | `BLK_BATCH_REQ`, `BLK_BATCH_TIME`, `__get_request`, `block/blk-core.c` |
//! | `max_sectors` | 1024 (512 KiB); usb-storage 240 (120 KiB) | `BLK_DEF_MAX_SECTORS`, `drivers/usb/storage/scsiglue.c` |
//! | deadline `read_expire` / `write_expire` | 500 ms / 5 s | `block/deadline-iosched.c` |
//! | deadline `fifo_batch` / `writes_starved` / `front_merges` | 16 / 2 / on | `block/deadline-iosched.c` |
//! | cfq tunables (slices, idling, fifo expiry, quantum) | see [`CfqTunables`] | `block/cfq-iosched.c`, `kernel-cfq.md` §3.5 |
//! | device figures | see [`device`] | `kernel-writeback.md` §9.3 (vendor specs, reviews) |
//! | iostat interval | 10 s | MMTests `MONITOR_UPDATE_FREQUENCY`, `mmtests.md` §4 |
//!
//! The device constants (`HDD_*`, `SSD_*`, `USB_*`, `RAID0_*`, `NFS_*` in [`device`]) are
//! physical figures and should move to `calibration.rs` when the block layer is wired in;
//! the kernel constants (`BLKDEV_MAX_RQ`, deadline tunables, ...) stay with their code.
//!
//! # Not modelled (simplifications)
//!
//! * **Plugging.** Requests enter the elevator at once. The caller gets the effect of the
//!   2.6.39+ on-stack plug by submitting all the bios of one `writepages` call before it
//!   calls `dispatch`.
//! * **CFQ** ([`cfq_iosched`]) leaves out priority classes, groups, close cooperators and
//!   IOPS mode; its module doc lists what it models and what it does not.
//! * **NCQ / device reordering** beyond the elevator: a device serves what it is given in
//!   dispatch order (see [`Device`]); `depth` only lets requests queue at the device.
//! * Merge lookup uses the LBA-neighbour index for every elevator (the kernel's noop finds
//!   merge candidates through the hash, `last_merge` and list neighbours). The 128-segment
//!   limit is not checked separately: with 4 KiB pages it equals 512 KiB, i.e. `max_sectors`.
//!   Under deadline and noop a bio merges whatever its sync flag, as in the kernel; CFQ
//!   allows a merge only into a request of the bio's own CFQ queue (`cfq_allow_merge`).
//! * Discard, flush/FUA, barriers, partitions, request `starved` accounting after a failed
//!   memory allocation, and jiffy rounding of the diskstats times (kept in ns here).
//! * md RAID0 is bio-based in the kernel (each member has its own queue, elevator and pool);
//!   here one queue fronts the array (chunk-sized requests, depth N, N × 128 requests,
//!   congested when that pool is, not when any one member's is) and [`Raid0`] splits each
//!   request by chunk across member models, which serve in parallel. Member diskstats are
//!   not produced; [`DiskStats::md_view`] zeroes the times as md's own diskstats do.
//! * NFS: only the timing of WRITE/READ RPCs and COMMIT ([`Nfs`]) and the congestion
//!   thresholds ([`NfsCongestion`]); unstable-page bookkeeping belongs to the filesystem layer.

pub mod cfq_iosched;
pub mod device;
pub mod diskstats;
pub mod elevator;
pub mod request_queue;

pub use cfq_iosched::CfqTunables;
pub use device::{Device, DeviceError, Hdd, Nfs, NfsCongestion, Raid0, Ssd, UsbStick};
pub use diskstats::{iostat_x, DiskStats, IostatSample, IostatSampler, IostatSummary};
pub use elevator::{DeadlineTunables, ElevatorKind};
pub use request_queue::{
    BatchState, Completion, QueueConfig, Release, RequestQueue, Submit, BLKDEV_MAX_RQ,
    BLK_BATCH_REQ, BLK_BATCH_TIME, BLK_DEF_MAX_SECTORS,
};

use crate::engine::Nanos;

/// Bytes per sector: the block layer counts in 512-byte sectors whatever the device.
pub const SECTOR_SIZE: u64 = 512;

/// Data direction, as `rq_data_dir` (READ = 0, WRITE = 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dir {
    Read,
    Write,
}

impl Dir {
    /// 0 for reads, 1 for writes, the kernel's array index.
    pub fn index(self) -> usize {
        match self {
            Dir::Read => 0,
            Dir::Write => 1,
        }
    }
}

/// Request-pool class, as `rw_is_sync`: `BLK_RW_ASYNC` = 0 (buffered writeback),
/// `BLK_RW_SYNC` = 1 (reads, O_SYNC/fsync/WB_SYNC_ALL writes). Congestion is per class;
/// `bdi_write_congested` is the async bit, `bdi_read_congested` the sync bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    Async,
    Sync,
}

impl Class {
    /// 0 for async, 1 for sync, as `BLK_RW_ASYNC`/`BLK_RW_SYNC`.
    pub fn index(self) -> usize {
        match self {
            Class::Async => 0,
            Class::Sync => 1,
        }
    }
}

/// One bio: a contiguous run of sectors in one direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bio {
    pub dir: Dir,
    /// REQ_SYNC. Reads are always sync whatever this says.
    pub sync: bool,
    /// First sector (512 bytes each).
    pub sector: u64,
    /// Length in sectors; must be at least 1.
    pub nr_sectors: u32,
    /// Opaque caller id (e.g. a page-list handle) handed back at completion.
    pub tag: u64,
}

impl Bio {
    /// The request-pool class this bio allocates from.
    pub fn class(&self) -> Class {
        if self.dir == Dir::Read || self.sync {
            Class::Sync
        } else {
            Class::Async
        }
    }

    /// First sector after the bio.
    pub fn end(&self) -> u64 {
        self.sector + u64::from(self.nr_sectors)
    }
}

/// What a device is asked to do: direction and sector range of one request (or one part of
/// one, for RAID members).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Io {
    pub dir: Dir,
    pub sector: u64,
    pub nr_sectors: u32,
}

impl Io {
    /// Size in bytes.
    pub fn bytes(&self) -> u64 {
        u64::from(self.nr_sectors) * SECTOR_SIZE
    }

    /// First sector after the IO.
    pub fn end(&self) -> u64 {
        self.sector + u64::from(self.nr_sectors)
    }
}

/// Identifies a request for the life of its queue.
pub type ReqId = u64;

/// A map from request ids, for maps that are only looked up, never iterated (so their
/// order, which a hash map does not keep, never shows): a request lookup per bio costs
/// less than a B-tree walk.
pub type ReqMap<V> =
    std::collections::HashMap<ReqId, V, std::hash::BuildHasherDefault<ReqIdHasher>>;

/// The hasher of [`ReqMap`]: request ids are consecutive, so a multiply spreads them over
/// the hash bits (Fibonacci hashing); fixed, so a run does not depend on a random seed.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReqIdHasher(u64);

impl std::hash::Hasher for ReqIdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(self.0 ^ u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// The submitting task's io context (`current->io_context`): the simulator's task id. 3.9
/// creates one per task at its first bio (`create_io_context` in
/// `generic_make_request_checks`), so every thread has its own batching state and CFQ sync
/// queue (`kernel-cfq.md` §2.2, §3.2).
pub type IoContext = u32;

/// A request: one or more merged bios, contiguous, one direction. Created by
/// [`RequestQueue::submit_bio`], handed out by [`RequestQueue::dispatch`] and returned with
/// [`RequestQueue::complete`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub(crate) id: ReqId,
    pub(crate) dir: Dir,
    pub(crate) class: Class,
    /// The io context of the task that allocated it.
    pub(crate) ioc: IoContext,
    pub(crate) sector: u64,
    pub(crate) nr_sectors: u32,
    pub(crate) tags: Vec<u64>,
    pub(crate) start_time: Nanos,
    pub(crate) dispatch_time: Option<Nanos>,
}

impl Request {
    pub fn id(&self) -> ReqId {
        self.id
    }
    pub fn dir(&self) -> Dir {
        self.dir
    }
    /// The pool the request was allocated from.
    pub fn class(&self) -> Class {
        self.class
    }
    /// The io context of the task that allocated it.
    pub fn ioc(&self) -> IoContext {
        self.ioc
    }
    pub fn sector(&self) -> u64 {
        self.sector
    }
    pub fn nr_sectors(&self) -> u32 {
        self.nr_sectors
    }
    /// First sector after the request.
    pub fn end(&self) -> u64 {
        self.sector + u64::from(self.nr_sectors)
    }
    /// Tags of the merged bios, in LBA order.
    pub fn tags(&self) -> &[u64] {
        &self.tags
    }
    /// When the request was created (`rq->start_time`; the earlier one after a request merge).
    pub fn start_time(&self) -> Nanos {
        self.start_time
    }
    /// When the elevator handed it to the driver.
    pub fn dispatch_time(&self) -> Option<Nanos> {
        self.dispatch_time
    }
    /// What the device has to do.
    pub fn io(&self) -> Io {
        Io {
            dir: self.dir,
            sector: self.sector,
            nr_sectors: self.nr_sectors,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{MSEC, SEC};

    /// Submits all `bios` at time 0 (one big plug), then runs the queue against the device
    /// until everything completes. Returns the finish time and the dispatched request sizes.
    fn drive(dev: &mut dyn Device, bios: impl IntoIterator<Item = Bio>) -> (Nanos, Vec<u32>) {
        let mut q = RequestQueue::new(dev.name(), dev.queue_config());
        for bio in bios {
            assert_ne!(q.submit_bio(bio, 0), Submit::Full);
        }
        let (mut now, mut at_device, mut sizes) = (0, Vec::<(Nanos, Request)>::new(), Vec::new());
        loop {
            while let Some(rq) = q.dispatch(now) {
                sizes.push(rq.nr_sectors());
                let done = now + dev.service_time(&rq.io(), now);
                at_device.push((done, rq));
            }
            let Some(i) = (0..at_device.len()).min_by_key(|&i| (at_device[i].0, i)) else {
                return (now, sizes);
            };
            let (done, rq) = at_device.swap_remove(i);
            now = done;
            q.complete(rq, now);
        }
    }

    fn stream(pages: u64) -> impl Iterator<Item = Bio> {
        (0..pages).map(|i| Bio {
            dir: Dir::Write,
            sync: false,
            sector: 8 * i,
            nr_sectors: 8,
            tag: i,
        })
    }

    #[test]
    fn sequential_stream_through_the_raid0_queue_runs_about_4x_one_disk() {
        let pages = 8192; // 32 MiB in 4 KiB pages
        let mut one = Hdd::desktop_7200("sdb").unwrap();
        let (t1, sizes1) = drive(&mut one, stream(pages));
        let mut md = Raid0::of_hdds("md0", 4).unwrap();
        let (t4, sizes4) = drive(&mut md, stream(pages));
        assert!(sizes1.iter().all(|&s| s == BLK_DEF_MAX_SECTORS));
        assert!(sizes4.iter().all(|&s| s == device::RAID0_CHUNK_SECTORS));
        let speedup = t1 as f64 / t4 as f64;
        assert!((3.5..=4.05).contains(&speedup), "speed-up {speedup:.2}");
        // 32 MiB at 138 MB/s on one disk.
        assert!((240 * MSEC..250 * MSEC).contains(&t1), "{t1}");
    }

    #[test]
    fn a_usb_stick_gets_120_kib_requests_at_about_its_write_bandwidth() {
        let mut usb = UsbStick::usb2_2009("sdc").unwrap();
        let (t, sizes) = drive(&mut usb, stream(2560)); // 10 MiB
        assert!(sizes[..sizes.len() - 1].iter().all(|&s| s == 240));
        let mb_s = 10.0 * 1.048_576 / (t as f64 / SEC as f64);
        assert!((8.0..10.0).contains(&mb_s), "{mb_s:.2} MB/s");
    }

    #[test]
    fn nfs_queue_takes_wsize_requests_with_many_rpcs_in_flight() {
        let mut nfs = Nfs::gige("server:/export").unwrap();
        let (t, sizes) = drive(&mut nfs, stream(25_600)); // 100 MiB
        assert!(sizes.iter().all(|&s| s == device::NFS_WSIZE_SECTORS));
        let mb_s = 104.857_6 / (t as f64 / SEC as f64);
        // Pipelined RPCs keep the link busy: close to the 117 MB/s payload rate.
        assert!((112.0..117.0).contains(&mb_s), "{mb_s:.1} MB/s");
    }
}
