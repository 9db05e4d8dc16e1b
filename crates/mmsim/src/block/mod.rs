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
//! 3. The elevator ([`ElevatorKind`]: deadline or noop) picks the next request when the
//!    caller calls [`RequestQueue::dispatch`], as long as fewer than `depth` requests are at
//!    the device.
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
//! * **CFQ.** Only deadline and noop exist. Not modelled from CFQ: per-process sync queues
//!   and the shared per-priority async queues, time slices (sync 100 ms, async 40 ms,
//!   `slice_async_rq`), idling (8 ms) after a sync queue empties, the 300 ms target latency,
//!   its FIFO expiries (125/250 ms), `quantum`, holding back async dispatch while sync IO is
//!   in flight, the ×2 penalty of short backward seeks, and cgroup/group scheduling. So the
//!   "concurrent readers sharply reduce async write bandwidth" effect of CFQ is absent.
//! * **NCQ / device reordering** beyond the elevator: a device serves what it is given in
//!   dispatch order (see [`Device`]); `depth` only lets requests queue at the device.
//! * Merge lookup uses the LBA-neighbour index for every elevator (the kernel's noop finds
//!   merge candidates through the hash, `last_merge` and list neighbours). The 128-segment
//!   limit is not checked separately: with 4 KiB pages it equals 512 KiB, i.e. `max_sectors`.
//!   Merging ignores the sync flag, as deadline does (CFQ does not).
//! * Discard, flush/FUA, barriers, partitions, request `starved` accounting after a failed
//!   memory allocation, and jiffy rounding of the diskstats times (kept in ns here).
//! * md RAID0 is bio-based in the kernel (each member has its own queue, elevator and pool);
//!   here one queue fronts the array and [`Raid0`] splits each request by chunk across
//!   member models. [`DiskStats::md_view`] zeroes the times as md's own diskstats do.
//! * NFS: only the timing of WRITE/READ RPCs and COMMIT ([`Nfs`]) and the congestion
//!   thresholds ([`NfsCongestion`]); unstable-page bookkeeping belongs to the filesystem layer.

pub mod device;
pub mod diskstats;
pub mod elevator;
pub mod request_queue;

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

/// A request: one or more merged bios, contiguous, one direction. Created by
/// [`RequestQueue::submit_bio`], handed out by [`RequestQueue::dispatch`] and returned with
/// [`RequestQueue::complete`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub(crate) id: ReqId,
    pub(crate) dir: Dir,
    pub(crate) class: Class,
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
