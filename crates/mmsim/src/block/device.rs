//! Device service-time models (`kernel-writeback.md` §9.3).
//!
//! A [`Device`] answers one question: if this request is handed to the device at `now`, when
//! is it done? Devices serve requests in the order they are given (no NCQ reordering): a
//! request given while an earlier one is still in service waits for it, so with a dispatch
//! depth above 1 the answer includes that wait. Everything is deterministic; the HDD's
//! rotational position follows from simulated time.
//!
//! Every default below names its source; "estimate" marks figures no source gives. These
//! constants belong in `calibration.rs` once the block layer is wired into the simulator.

use std::fmt;

use super::elevator::ElevatorKind;
use super::request_queue::{QueueConfig, BLKDEV_MAX_RQ, BLK_DEF_MAX_SECTORS};
use super::{Dir, Io, SECTOR_SIZE};
use crate::engine::{Nanos, MSEC, SEC, USEC};

/// A parameter with which a device could never complete an IO (or that makes no sense).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceError {
    /// The device's name, e.g. `sda`.
    pub device: String,
    /// What is wrong, e.g. "write bandwidth is zero".
    pub problem: String,
}

impl fmt::Display for DeviceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "device '{}': {}", self.device, self.problem)
    }
}

impl std::error::Error for DeviceError {}

fn check(name: &str, ok: bool, problem: impl FnOnce() -> String) -> Result<(), DeviceError> {
    if ok {
        Ok(())
    } else {
        Err(DeviceError {
            device: name.to_string(),
            problem: problem(),
        })
    }
}

fn check_bw(name: &str, what: &str, bytes_per_sec: u64) -> Result<(), DeviceError> {
    check(name, bytes_per_sec > 0, || {
        format!("{what} bandwidth is zero: no IO could ever complete")
    })
}

/// Time to move `bytes` at `bytes_per_sec`, rounded up to a whole nanosecond.
fn transfer(bytes: u64, bytes_per_sec: u64) -> Nanos {
    let ns = u128::from(bytes) * u128::from(SEC);
    ns.div_ceil(u128::from(bytes_per_sec)) as Nanos
}

/// A block device's timing.
pub trait Device: fmt::Debug + Send {
    /// The device name (`sda`, `md0`, `server:/export`).
    fn name(&self) -> &str;

    /// Time from `now` until `io`, handed to the device at `now`, completes. Updates the
    /// device's state (head position, busy time, open erase blocks, ...).
    fn service_time(&mut self, io: &Io, now: Nanos) -> Nanos;

    /// Largest request the device takes, in sectors (the queue's `max_sectors`).
    fn max_sectors(&self) -> u32 {
        BLK_DEF_MAX_SECTORS
    }

    /// How many requests to hand it at once.
    fn queue_depth(&self) -> u32 {
        1
    }

    /// `queue/rotational`: whether seeks cost (CFQ's seek and idling rules use it).
    fn rotational(&self) -> bool {
        true
    }

    /// A deadline request queue shaped for this device.
    fn queue_config(&self) -> QueueConfig {
        QueueConfig {
            max_sectors: self.max_sectors(),
            depth: self.queue_depth(),
            rotational: self.rotational(),
            ..QueueConfig::default()
        }
    }

    /// The NFS model, if this is an NFS mount: its WRITE, COMMIT and READ RPCs are timed
    /// directly (`fs::nfs`), not as block requests.
    fn as_nfs(&mut self) -> Option<&mut Nfs> {
        None
    }
}

// ---------------------------------------------------------------------------------------
// Rotating disk

/// 7200 rpm desktop disk: spindle speed (IBM/HGST spec tables: 7200 rpm → 4.17 ms average
/// rotational latency).
pub const HDD_7200_RPM: u32 = 7200;
/// Average seek, 8.5 ms (Seagate Barracuda 7200.14 preview).
pub const HDD_7200_AVG_SEEK: Nanos = 8_500 * USEC;
/// Track-to-track seek, ≈ 1 ms (`kernel-writeback.md` §9.3 table).
pub const HDD_7200_TRACK_TO_TRACK: Nanos = MSEC;
/// Full-stroke seek, ≈ 20 ms (`kernel-writeback.md` §9.3 table).
pub const HDD_7200_FULL_STROKE: Nanos = 20 * MSEC;
/// Capacity, 2 TB = 3 907 029 168 sectors (Seagate Barracuda XT 2 TB).
pub const HDD_7200_SECTORS: u64 = 3_907_029_168;
/// Sustained transfer rate on the outer tracks, 138 MB/s (Seagate Barracuda XT spec, OD).
pub const HDD_7200_RATE_OUTER: u64 = 138_000_000;
/// Inner tracks, about half of the outer rate (`kernel-writeback.md` §9.3: "~half that on
/// inner tracks").
pub const HDD_7200_RATE_INNER: u64 = 69_000_000;

/// 5400 rpm laptop disk (`kernel-writeback.md` §9.3: seek ≈ 12 ms, latency 5.5 ms,
/// 60-100 MB/s).
pub const HDD_5400_RPM: u32 = 5400;
pub const HDD_5400_AVG_SEEK: Nanos = 12 * MSEC;
/// Estimate.
pub const HDD_5400_TRACK_TO_TRACK: Nanos = 1_500 * USEC;
/// Estimate.
pub const HDD_5400_FULL_STROKE: Nanos = 25 * MSEC;
/// 500 GB (estimate: a typical 2012 laptop disk).
pub const HDD_5400_SECTORS: u64 = 976_773_168;
pub const HDD_5400_RATE_OUTER: u64 = 100_000_000;
pub const HDD_5400_RATE_INNER: u64 = 60_000_000;

/// What an HDD is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HddParams {
    pub rpm: u32,
    /// Mean seek over uniformly random start and end positions.
    pub avg_seek: Nanos,
    pub track_to_track: Nanos,
    pub full_stroke: Nanos,
    /// Capacity in sectors.
    pub sectors: u64,
    /// Bytes per second at LBA 0 (outer edge) and at the last LBA (inner edge).
    pub transfer_rate_outer: u64,
    pub transfer_rate_inner: u64,
}

impl HddParams {
    /// The 7200 rpm 3.5" SATA disk of a 2012 desktop.
    pub fn desktop_7200() -> Self {
        HddParams {
            rpm: HDD_7200_RPM,
            avg_seek: HDD_7200_AVG_SEEK,
            track_to_track: HDD_7200_TRACK_TO_TRACK,
            full_stroke: HDD_7200_FULL_STROKE,
            sectors: HDD_7200_SECTORS,
            transfer_rate_outer: HDD_7200_RATE_OUTER,
            transfer_rate_inner: HDD_7200_RATE_INNER,
        }
    }

    /// The 5400 rpm 2.5" laptop disk.
    pub fn laptop_5400() -> Self {
        HddParams {
            rpm: HDD_5400_RPM,
            avg_seek: HDD_5400_AVG_SEEK,
            track_to_track: HDD_5400_TRACK_TO_TRACK,
            full_stroke: HDD_5400_FULL_STROKE,
            sectors: HDD_5400_SECTORS,
            transfer_rate_outer: HDD_5400_RATE_OUTER,
            transfer_rate_inner: HDD_5400_RATE_INNER,
        }
    }
}

/// A rotating disk without NCQ.
///
/// * **Position** is the LBA as a fraction of the capacity (LBA order is taken as radial
///   order; zoning is only in the transfer rate).
/// * **Seek** over a distance `d` (fraction of the stroke) is
///   `track_to_track + a·√d + b·d`, with `a + b = full_stroke − track_to_track` and `a`, `b`
///   chosen so the mean over uniformly random start and end points (E√d = 8/15, Ed = 1/3)
///   is `avg_seek`. A move within one track costs no seek. Writes seek like reads.
/// * **Rotation**: the platter angle is `now mod revolution`; a sector's angle is its
///   offset within a track of the local size (`rate × revolution / 512` sectors). After the
///   seek the head waits until the target sector comes round: half a revolution on average
///   for scattered requests, little for short forward skips.
/// * **Transfer** at the zone's rate, linear in LBA from outer to inner.
/// * A request that starts where the previous one ended costs transfer only, whatever time
///   passed in between (the drive's track buffer and write cache absorb the gap).
/// * The head starts at sector 0. Sectors beyond the capacity are treated as the last one.
/// * Not modelled: NCQ reordering, the drive's cache as such, write seeks being slightly
///   longer than reads, head switches, track skew, spin-up and power management.
#[derive(Clone, Debug)]
pub struct Hdd {
    name: String,
    p: HddParams,
    rev: Nanos,
    a: f64,
    b: f64,
    head: u64,
    busy_until: Nanos,
}

impl Hdd {
    /// Validates the parameters: non-zero rpm, capacity and rates; inner rate ≤ outer;
    /// `track_to_track < full_stroke`; an average seek the curve can reach
    /// (`t2t + F/3 ≤ avg ≤ t2t + 8F/15`, F = full − t2t).
    pub fn new(name: &str, p: HddParams) -> Result<Self, DeviceError> {
        check(name, p.rpm > 0, || {
            "rpm is zero: the platter never turns, no IO could ever complete".into()
        })?;
        check(name, p.sectors > 0, || "capacity is zero sectors".into())?;
        check_bw(name, "outer-track transfer", p.transfer_rate_outer)?;
        check_bw(name, "inner-track transfer", p.transfer_rate_inner)?;
        check(name, p.transfer_rate_inner <= p.transfer_rate_outer, || {
            "inner-track transfer rate exceeds the outer-track rate".into()
        })?;
        check(name, p.track_to_track < p.full_stroke, || {
            "track-to-track seek must be shorter than the full-stroke seek".into()
        })?;
        let f = (p.full_stroke - p.track_to_track) as f64;
        let avg = p.avg_seek as f64 - p.track_to_track as f64;
        check(name, avg >= f / 3.0 && avg <= 8.0 * f / 15.0, || {
            format!(
                "average seek {:.2} ms is outside [{:.2}, {:.2}] ms, what a seek curve between \
                 track-to-track and full stroke can average",
                p.avg_seek as f64 / MSEC as f64,
                (p.track_to_track as f64 + f / 3.0) / MSEC as f64,
                (p.track_to_track as f64 + 8.0 * f / 15.0) / MSEC as f64
            )
        })?;
        // a·8/15 + b/3 = avg, a + b = f.
        let a = 5.0 * (avg - f / 3.0);
        let b = f - a;
        Ok(Hdd {
            name: name.to_string(),
            rev: 60 * SEC / Nanos::from(p.rpm),
            p,
            a,
            b,
            head: 0,
            busy_until: 0,
        })
    }

    /// [`HddParams::desktop_7200`].
    pub fn desktop_7200(name: &str) -> Result<Self, DeviceError> {
        Hdd::new(name, HddParams::desktop_7200())
    }

    pub fn params(&self) -> &HddParams {
        &self.p
    }

    /// One revolution.
    pub fn revolution(&self) -> Nanos {
        self.rev
    }

    fn frac(&self, sector: u64) -> f64 {
        (sector.min(self.p.sectors) as f64) / self.p.sectors as f64
    }

    /// Transfer rate (bytes/s) at `sector`.
    pub fn rate_at(&self, sector: u64) -> u64 {
        let (o, i) = (
            self.p.transfer_rate_outer as f64,
            self.p.transfer_rate_inner as f64,
        );
        ((o - (o - i) * self.frac(sector)) as u64).max(1)
    }

    fn sectors_per_track(&self, sector: u64) -> u64 {
        (u128::from(self.rate_at(sector)) * u128::from(self.rev)
            / u128::from(SEC)
            / u128::from(SECTOR_SIZE))
        .max(1) as u64
    }

    /// Seek time from the head at `from` to `to`.
    pub fn seek_time(&self, from: u64, to: u64) -> Nanos {
        if from.abs_diff(to) < self.sectors_per_track(from) {
            return 0;
        }
        let d = (self.frac(from) - self.frac(to)).abs();
        (self.p.track_to_track as f64 + self.a * d.sqrt() + self.b * d).round() as Nanos
    }

    /// Wait at `t` until `sector` passes under the head.
    fn rotational_wait(&self, sector: u64, t: Nanos) -> Nanos {
        let spt = self.sectors_per_track(sector);
        let target = (sector % spt) as f64 / spt as f64;
        let angle = (t % self.rev) as f64 / self.rev as f64;
        let turn = (target - angle).rem_euclid(1.0);
        (turn * self.rev as f64) as Nanos
    }

    /// Service time of `io` started at `start` with the head where it is; moves the head.
    fn serve(&mut self, io: &Io, start: Nanos) -> Nanos {
        let position = if io.sector == self.head {
            0
        } else {
            let seek = self.seek_time(self.head, io.sector);
            seek + self.rotational_wait(io.sector, start + seek)
        };
        self.head = io.end();
        position + transfer(io.bytes(), self.rate_at(io.sector))
    }
}

impl Device for Hdd {
    fn name(&self) -> &str {
        &self.name
    }

    fn service_time(&mut self, io: &Io, now: Nanos) -> Nanos {
        let start = now.max(self.busy_until);
        let done = start + self.serve(io, start);
        self.busy_until = done;
        done - now
    }
}

// ---------------------------------------------------------------------------------------
// SSD

/// Per-request cost of a 2012-13 SATA SSD: "< 0.1 ms access" (`kernel-writeback.md` §9.3);
/// the bound is taken.
pub const SSD_OVERHEAD: Nanos = 100 * USEC;
/// Sequential read, 520 MB/s (AnandTech Samsung 830 review).
pub const SSD_READ_BW: u64 = 520_000_000;
/// Sequential write, 400 MB/s (Samsung 830/840 class, `kernel-writeback.md` §9.3).
pub const SSD_WRITE_BW: u64 = 400_000_000;

/// An SSD: `overhead + size / bw`, requests served one after another (internal parallelism
/// and write amplification are not modelled).
#[derive(Clone, Debug)]
pub struct Ssd {
    name: String,
    overhead: Nanos,
    read_bw: u64,
    write_bw: u64,
    busy_until: Nanos,
}

impl Ssd {
    pub fn new(
        name: &str,
        overhead: Nanos,
        read_bw: u64,
        write_bw: u64,
    ) -> Result<Self, DeviceError> {
        check_bw(name, "read", read_bw)?;
        check_bw(name, "write", write_bw)?;
        Ok(Ssd {
            name: name.to_string(),
            overhead,
            read_bw,
            write_bw,
            busy_until: 0,
        })
    }

    /// A Samsung 830 class SATA SSD.
    pub fn sata_2012(name: &str) -> Result<Self, DeviceError> {
        Ssd::new(name, SSD_OVERHEAD, SSD_READ_BW, SSD_WRITE_BW)
    }
}

impl Device for Ssd {
    fn name(&self) -> &str {
        &self.name
    }

    fn rotational(&self) -> bool {
        false
    }

    fn service_time(&mut self, io: &Io, now: Nanos) -> Nanos {
        let bw = match io.dir {
            Dir::Read => self.read_bw,
            Dir::Write => self.write_bw,
        };
        let start = now.max(self.busy_until);
        self.busy_until = start + self.overhead + transfer(io.bytes(), bw);
        self.busy_until - now
    }
}

// ---------------------------------------------------------------------------------------
// USB flash stick

/// usb-storage's request limit: 240 sectors = 120 KiB (`drivers/usb/storage/scsiglue.c`).
pub const USB_MAX_SECTORS: u32 = 240;
/// Sequential write, 10 MB/s (Coding Horror 2009 survey: 10-22 MB/s; low end taken).
pub const USB_WRITE_BW: u64 = 10_000_000;
/// Sequential read, 20 MB/s (same survey, estimate within its range).
pub const USB_READ_BW: u64 = 20_000_000;
/// Erase block (allocation unit), 4 MiB (Linaro flashbench results: 4-8 MiB).
pub const USB_ERASE_BLOCK: u64 = 4 << 20;
/// Erase blocks the controller keeps open at once. Estimate (flashbench finds 1-5 on
/// cheap sticks).
pub const USB_OPEN_UNITS: usize = 2;
/// Internal copy rate when an erase block written out of order is closed (garbage
/// collection). Estimate, chosen so scattered 4 KiB writes land below 100 KB/s as the
/// reference reports ("pathological, sub-100 KB/s").
pub const USB_COPY_BW: u64 = 20_000_000;
/// Per-command cost of USB mass storage (command, data and status phases). Estimate.
pub const USB_OVERHEAD: Nanos = 500 * USEC;

#[derive(Clone, Copy, Debug)]
struct OpenUnit {
    unit: u64,
    /// Bytes written in order from the start of the unit.
    linear_end: u64,
    /// Written out of order: closing it copies the whole unit.
    scattered: bool,
}

/// A USB 2.0 flash stick: queue depth 1, 120 KiB requests, and an erase-block model.
///
/// The controller keeps `open_units` erase blocks open (least recently used first out).
/// Writing in order from the start of a unit costs only `size / write_bw`. A unit written
/// out of order, or left partly written, is garbage-collected when it is closed: the
/// write that forces the close pays for copying the unit's remaining (or whole) contents at
/// `copy_bw`. Sequential streams thus run at `write_bw`; scattered small writes pay one
/// erase-block copy each.
#[derive(Clone, Debug)]
pub struct UsbStick {
    name: String,
    read_bw: u64,
    write_bw: u64,
    copy_bw: u64,
    overhead: Nanos,
    erase_block: u64,
    open_units: usize,
    open: Vec<OpenUnit>,
    busy_until: Nanos,
}

impl UsbStick {
    pub fn new(
        name: &str,
        read_bw: u64,
        write_bw: u64,
        copy_bw: u64,
        overhead: Nanos,
        erase_block: u64,
        open_units: usize,
    ) -> Result<Self, DeviceError> {
        check_bw(name, "read", read_bw)?;
        check_bw(name, "write", write_bw)?;
        check_bw(name, "erase-block copy", copy_bw)?;
        check(
            name,
            erase_block >= SECTOR_SIZE && erase_block.is_multiple_of(SECTOR_SIZE),
            || "erase block must be a positive multiple of 512 bytes".into(),
        )?;
        check(name, open_units >= 1, || {
            "at least one erase block must be open".into()
        })?;
        Ok(UsbStick {
            name: name.to_string(),
            read_bw,
            write_bw,
            copy_bw,
            overhead,
            erase_block,
            open_units,
            open: Vec::new(),
            busy_until: 0,
        })
    }

    /// A 2009-era USB 2.0 stick with the defaults above.
    pub fn usb2_2009(name: &str) -> Result<Self, DeviceError> {
        UsbStick::new(
            name,
            USB_READ_BW,
            USB_WRITE_BW,
            USB_COPY_BW,
            USB_OVERHEAD,
            USB_ERASE_BLOCK,
            USB_OPEN_UNITS,
        )
    }

    /// Cost of closing a unit (garbage collection).
    fn close_cost(&self, u: &OpenUnit) -> Nanos {
        let copy = if u.scattered {
            self.erase_block
        } else {
            self.erase_block - u.linear_end
        };
        if copy == 0 {
            0
        } else {
            transfer(copy, self.copy_bw)
        }
    }

    /// Write `len` bytes at byte `offset` of `unit`; returns the extra cost (closing).
    fn write_piece(&mut self, unit: u64, offset: u64, len: u64) -> Nanos {
        if let Some(pos) = self.open.iter().position(|u| u.unit == unit) {
            let mut u = self.open.remove(pos);
            if offset == u.linear_end && !u.scattered {
                u.linear_end += len;
            } else {
                u.scattered = true;
            }
            self.open.push(u);
            return 0;
        }
        let mut cost = 0;
        if self.open.len() >= self.open_units {
            let lru = self.open.remove(0);
            cost = self.close_cost(&lru);
        }
        self.open.push(OpenUnit {
            unit,
            linear_end: if offset == 0 { len } else { 0 },
            scattered: offset != 0,
        });
        cost
    }
}

impl Device for UsbStick {
    fn name(&self) -> &str {
        &self.name
    }

    fn max_sectors(&self) -> u32 {
        USB_MAX_SECTORS
    }

    fn service_time(&mut self, io: &Io, now: Nanos) -> Nanos {
        let mut t = self.overhead;
        match io.dir {
            Dir::Read => t += transfer(io.bytes(), self.read_bw),
            Dir::Write => {
                let (mut pos, end) = (io.sector * SECTOR_SIZE, io.end() * SECTOR_SIZE);
                while pos < end {
                    let unit = pos / self.erase_block;
                    let offset = pos % self.erase_block;
                    let len = (self.erase_block - offset).min(end - pos);
                    t += self.write_piece(unit, offset, len);
                    pos += len;
                }
                t += transfer(io.bytes(), self.write_bw);
            }
        }
        let start = now.max(self.busy_until);
        self.busy_until = start + t;
        self.busy_until - now
    }
}

// ---------------------------------------------------------------------------------------
// md RAID0

/// md RAID0 chunk, 512 KiB (mdadm ≥ 3.1 default; 64 KiB before).
pub const RAID0_CHUNK_SECTORS: u32 = 1024;

/// md RAID0 over N members with equal-sized members (one strip zone).
///
/// Sector `s` lives in chunk `c = s / chunk` on member `c mod N` at member sector
/// `(c / N)·chunk + s mod chunk`. A request is split at chunk boundaries, each part goes to
/// its member at `now` (members serve their parts in order, in parallel with each other),
/// and the request completes when the last part does. Simplification: in the kernel md is
/// bio-based and each member has its own queue, elevator and request pool; here one queue
/// fronts the array (suggested `max_sectors` one full stripe, depth N).
#[derive(Debug)]
pub struct Raid0 {
    name: String,
    members: Vec<Box<dyn Device>>,
    chunk_sectors: u32,
}

impl Raid0 {
    pub fn new(
        name: &str,
        members: Vec<Box<dyn Device>>,
        chunk_sectors: u32,
    ) -> Result<Self, DeviceError> {
        check(name, !members.is_empty(), || {
            "RAID0 with 0 members: no IO could ever complete".into()
        })?;
        check(name, chunk_sectors >= 1, || "chunk size is zero".into())?;
        Ok(Raid0 {
            name: name.to_string(),
            members,
            chunk_sectors,
        })
    }

    /// N default 7200 rpm disks (`sdb`, `sdc`, ...) with a 512 KiB chunk.
    pub fn of_hdds(name: &str, n: usize) -> Result<Self, DeviceError> {
        let members = (0..n)
            .map(|i| {
                let member = format!("sd{}", (b'b' + (i % 25) as u8) as char);
                Hdd::desktop_7200(&member).map(|d| Box::new(d) as Box<dyn Device>)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Raid0::new(name, members, RAID0_CHUNK_SECTORS)
    }

    pub fn members(&self) -> &[Box<dyn Device>] {
        &self.members
    }

    /// The member IOs of `io`, in order: (member index, member IO).
    pub fn split(&self, io: &Io) -> Vec<(usize, Io)> {
        let n = self.members.len() as u64;
        let cs = u64::from(self.chunk_sectors);
        let mut parts = Vec::new();
        let (mut s, end) = (io.sector, io.end());
        while s < end {
            let chunk = s / cs;
            let off = s % cs;
            let len = (cs - off).min(end - s);
            parts.push((
                (chunk % n) as usize,
                Io {
                    dir: io.dir,
                    sector: (chunk / n) * cs + off,
                    nr_sectors: len as u32,
                },
            ));
            s += len;
        }
        parts
    }
}

impl Device for Raid0 {
    fn name(&self) -> &str {
        &self.name
    }

    fn service_time(&mut self, io: &Io, now: Nanos) -> Nanos {
        let mut longest = 0;
        for (m, part) in self.split(io) {
            longest = longest.max(self.members[m].service_time(&part, now));
        }
        longest
    }

    /// One chunk: md raid0 sets `max_hw_sectors` to the chunk size, so each request lives
    /// on one member (larger IOs given to [`Device::service_time`] are split anyway).
    fn max_sectors(&self) -> u32 {
        self.chunk_sectors
    }

    /// One request per member at a time.
    fn queue_depth(&self) -> u32 {
        self.members.len() as u32
    }

    /// Deadline, chunk-sized requests, depth N and `nr_requests` = N × 128: the array's
    /// pool stands for the N member pools, so it fills (and congests) when the members'
    /// pools would, for IO spread evenly over the members. (md's own congestion test is
    /// "any member congested"; uneven IO congests a member earlier than this.)
    fn queue_config(&self) -> QueueConfig {
        let n = self.members.len() as u32;
        QueueConfig {
            nr_requests: BLKDEV_MAX_RQ.saturating_mul(n),
            max_sectors: self.max_sectors(),
            depth: n,
            ..QueueConfig::default()
        }
    }
}

// ---------------------------------------------------------------------------------------
// NFS

// The NFS defaults (`NFS_NET_BW`, `NFS_RTT`, `NFS_SERVER_DISK_BW`, `NFS_COMMIT_COST`,
// `NFS_WSIZE_SECTORS`) are physical estimates: they live in `calibration.rs`.
pub use crate::calibration::{
    NFS_COMMIT_COST, NFS_NET_BW, NFS_RTT, NFS_SERVER_DISK_BW, NFS_WSIZE_SECTORS,
};

/// The device-like part of an NFS mount: WRITE/READ RPCs over one network link and COMMIT.
///
/// * The link carries one RPC's payload at a time (`bytes / net_bw`), then the reply comes
///   back after `rtt`; RPCs pipeline, so a stream runs at `net_bw`.
/// * UNSTABLE WRITEs land in the server's page cache, which drains to its disk at
///   `server_disk_bw` in the background. A COMMIT (or a FILE_SYNC WRITE) waits for that
///   backlog to drain, plus `commit_cost`.
/// * READs are served at the slower of the link and the server disk.
///
/// The unstable-page bookkeeping (which pages await COMMIT, when the client sends it) is the
/// filesystem layer's job; [`NfsCongestion`] gives the mount's congestion thresholds.
#[derive(Clone, Debug)]
pub struct Nfs {
    name: String,
    net_bw: u64,
    rtt: Nanos,
    server_disk_bw: u64,
    commit_cost: Nanos,
    wsize_sectors: u32,
    link_free: Nanos,
    /// Server dirty bytes at `backlog_at`; the server disk drains them from `backlog_at`
    /// on (a flush in progress pushes `backlog_at` to its end).
    backlog: u64,
    backlog_at: Nanos,
    /// When the last scheduled flush starts (it ends at `backlog_at`).
    flush_start: Nanos,
}

impl Nfs {
    pub fn new(
        name: &str,
        net_bw: u64,
        rtt: Nanos,
        server_disk_bw: u64,
        commit_cost: Nanos,
        wsize_sectors: u32,
    ) -> Result<Self, DeviceError> {
        check_bw(name, "network", net_bw)?;
        check_bw(name, "server disk", server_disk_bw)?;
        check(name, wsize_sectors >= 1, || "wsize is zero".into())?;
        Ok(Nfs {
            name: name.to_string(),
            net_bw,
            rtt,
            server_disk_bw,
            commit_cost,
            wsize_sectors,
            link_free: 0,
            backlog: 0,
            backlog_at: 0,
            flush_start: 0,
        })
    }

    /// A gigabit-Ethernet mount of a server with one 7200 rpm disk.
    pub fn gige(name: &str) -> Result<Self, DeviceError> {
        Nfs::new(
            name,
            NFS_NET_BW,
            NFS_RTT,
            NFS_SERVER_DISK_BW,
            NFS_COMMIT_COST,
            NFS_WSIZE_SECTORS,
        )
    }

    /// Server dirty bytes left at `t` (drained at `server_disk_bw` since the last change).
    fn drain(&mut self, t: Nanos) {
        if t > self.backlog_at {
            let drained =
                u128::from(t - self.backlog_at) * u128::from(self.server_disk_bw) / u128::from(SEC);
            self.backlog = self
                .backlog
                .saturating_sub(drained.min(u128::from(u64::MAX)) as u64);
            self.backlog_at = t;
        }
    }

    /// Server bytes not yet on its disk at `now`.
    pub fn server_backlog(&mut self, now: Nanos) -> u64 {
        self.drain(now);
        self.backlog
    }

    /// Send `bytes` over the link starting no earlier than `now`; returns when it arrived.
    fn send(&mut self, bytes: u64, now: Nanos) -> Nanos {
        let start = now.max(self.link_free);
        self.link_free = start + transfer(bytes, self.net_bw);
        self.link_free
    }

    /// A WRITE RPC of `bytes` sent at `now`: time until the reply. `stable` = FILE_SYNC.
    pub fn write_rpc(&mut self, bytes: u64, stable: bool, now: Nanos) -> Nanos {
        let arrived = self.send(bytes, now) + self.rtt / 2;
        self.drain(arrived);
        self.backlog += bytes;
        let answered = if stable {
            self.flush_server(arrived)
        } else {
            arrived
        };
        answered + (self.rtt - self.rtt / 2) - now
    }

    /// The server writes its whole backlog and commits, starting at `at` or when its disk
    /// is free; returns when that is done.
    ///
    /// Concurrent stable requests share commits: knfsd's threads serve them in parallel and
    /// the server filesystem's journal batches their fsyncs (a jbd/jbd2 commit in progress
    /// makes later fsyncs wait for it, then one commit takes them all). So a request that
    /// arrives while a flush is queued behind a running one joins the queued flush: it adds
    /// its data, not another commit. mmsim simplification: the nfsd thread count (8 by
    /// default) never limits this.
    fn flush_server(&mut self, at: Nanos) -> Nanos {
        let data = transfer(self.backlog, self.server_disk_bw);
        self.backlog = 0;
        if self.flush_start > at {
            self.backlog_at += data;
            return self.backlog_at;
        }
        let start = at.max(self.backlog_at);
        self.flush_start = start;
        self.backlog_at = start + self.commit_cost + data;
        self.backlog_at
    }

    /// A COMMIT sent at `now`: time until the reply (the server's backlog is on disk then).
    pub fn commit(&mut self, now: Nanos) -> Nanos {
        let arrived = now + self.rtt / 2;
        self.drain(arrived);
        self.flush_server(arrived) + (self.rtt - self.rtt / 2) - now
    }

    /// A READ RPC of `bytes` sent at `now`: time until the data is back.
    pub fn read_rpc(&mut self, bytes: u64, now: Nanos) -> Nanos {
        let net_done = self.send(bytes, now);
        let disk = transfer(bytes, self.server_disk_bw);
        (net_done.max(now + disk) + self.rtt) - now
    }
}

impl Device for Nfs {
    fn name(&self) -> &str {
        &self.name
    }

    /// Reads are READ RPCs, writes UNSTABLE WRITE RPCs.
    fn service_time(&mut self, io: &Io, now: Nanos) -> Nanos {
        match io.dir {
            Dir::Read => self.read_rpc(io.bytes(), now),
            Dir::Write => self.write_rpc(io.bytes(), false, now),
        }
    }

    fn max_sectors(&self) -> u32 {
        self.wsize_sectors
    }

    fn as_nfs(&mut self) -> Option<&mut Nfs> {
        Some(self)
    }

    /// RPCs in flight at once: the sunrpc slot table default, 16 (`RPC_DEF_SLOT_TABLE`;
    /// 3.1+ grows TCP slot tables dynamically, so this is an estimate).
    fn queue_depth(&self) -> u32 {
        NFS_RPC_SLOTS
    }

    /// NFS has no request queue or request pool: a noop queue with an effectively unlimited
    /// pool, `wsize` requests and one slot per RPC. Its `write_congested` means nothing;
    /// the mount's congestion is [`NfsCongestion`].
    fn queue_config(&self) -> QueueConfig {
        QueueConfig {
            nr_requests: NFS_UNLIMITED_REQUESTS,
            max_sectors: self.wsize_sectors,
            depth: NFS_RPC_SLOTS,
            elevator: ElevatorKind::Noop,
            rotational: false,
        }
    }
}

/// RPC slots per transport, `RPC_DEF_SLOT_TABLE` (`include/linux/sunrpc/xprt.h`).
pub const NFS_RPC_SLOTS: u32 = 16;
/// Pool size standing for "no pool" in an NFS mount's queue.
pub const NFS_UNLIMITED_REQUESTS: u32 = 1 << 24;

/// Ceiling of the NFS congestion threshold: 256 MiB (`nfs_init_writepagecache`).
pub const NFS_CONGESTION_MAX_KB: u64 = 256 * 1024;

/// An NFS mount's own write congestion (`fs/nfs/write.c`, `kernel-writeback.md` §8):
/// counted on pages under WRITE-RPC writeback (`nfss->writeback`); congested when the count
/// goes above ON = `min(16·√(RAM pages), 256 MiB)` pages, cleared when it drops below
/// OFF = ON − ON/4.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NfsCongestion {
    pub on: u64,
    pub off: u64,
    writeback: u64,
    congested: bool,
}

impl NfsCongestion {
    /// Thresholds for a machine with `total_ram_pages` 4 KiB pages.
    pub fn new(total_ram_pages: u64) -> Self {
        let kb = (16 * total_ram_pages.isqrt() * 4).min(NFS_CONGESTION_MAX_KB);
        let on = kb / 4;
        NfsCongestion {
            on,
            off: on - on / 4,
            writeback: 0,
            congested: false,
        }
    }

    /// `pages` entered writeback; true if this made the mount congested.
    pub fn start_writeback(&mut self, pages: u64) -> bool {
        self.writeback += pages;
        let became = !self.congested && self.writeback > self.on;
        self.congested |= became;
        became
    }

    /// `pages` left writeback; true if this cleared the congestion.
    pub fn end_writeback(&mut self, pages: u64) -> bool {
        self.writeback = self.writeback.saturating_sub(pages);
        let cleared = self.congested && self.writeback < self.off;
        self.congested &= !cleared;
        cleared
    }

    pub fn congested(&self) -> bool {
        self.congested
    }

    pub fn writeback_pages(&self) -> u64 {
        self.writeback
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(sector: u64, nr: u32) -> Io {
        Io {
            dir: Dir::Write,
            sector,
            nr_sectors: nr,
        }
    }

    /// Runs `ios` back to back (each handed over when the previous completes); total time.
    fn run(dev: &mut dyn Device, ios: impl IntoIterator<Item = Io>) -> Nanos {
        let mut now = 0;
        for io in ios {
            now += dev.service_time(&io, now);
        }
        now
    }

    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            self.0 >> 2 // 62 bits: enough to cover a 2 TB disk uniformly
        }
    }

    #[test]
    fn sequential_hdd_requests_cost_only_transfer() {
        let mut d = Hdd::desktop_7200("sda").unwrap();
        d.service_time(&w(0, 1024), 0);
        // Later, after idle time, the next contiguous request: no seek, no rotation.
        let t = d.service_time(&w(1024, 1024), 50 * MSEC);
        assert_eq!(t, transfer(512 * 1024, d.rate_at(1024)));
        assert!((3_700 * USEC..3_900 * USEC).contains(&t), "{t}"); // 512 KiB at 138 MB/s
    }

    #[test]
    fn a_far_seek_costs_more_than_a_near_one_and_full_stroke_is_the_maximum() {
        let d = Hdd::desktop_7200("sda").unwrap();
        let cap = HDD_7200_SECTORS;
        let near = d.seek_time(0, cap / 100);
        let mid = d.seek_time(0, cap / 3);
        let far = d.seek_time(0, cap - 1);
        assert!(HDD_7200_TRACK_TO_TRACK < near && near < mid && mid < far);
        assert!(far.abs_diff(HDD_7200_FULL_STROKE) < 10 * USEC, "{far}");
        assert_eq!(d.seek_time(1000, 1008), 0, "same track");
    }

    #[test]
    fn random_4k_on_7200rpm_disk_averages_avg_seek_plus_half_a_revolution() {
        let mut d = Hdd::desktop_7200("sda").unwrap();
        let mut rng = Lcg(42);
        let n = 20_000u64;
        let ios: Vec<Io> = (0..n)
            .map(|_| Io {
                dir: Dir::Read,
                sector: rng.next() % (HDD_7200_SECTORS - 8),
                nr_sectors: 8,
            })
            .collect();
        let avg_ms = run(&mut d, ios) as f64 / n as f64 / MSEC as f64;
        // 8.5 ms seek + 4.17 ms rotation + ~0.04 ms transfer.
        assert!((avg_ms - 12.7).abs() < 0.4, "average {avg_ms:.2} ms");
    }

    #[test]
    fn hdd_requests_handed_over_while_busy_wait_for_the_previous_one() {
        let mut d = Hdd::desktop_7200("sda").unwrap();
        let a = d.service_time(&w(0, 1024), 0);
        let b = d.service_time(&w(1024, 1024), 0);
        assert!(b > a && b - a == transfer(512 * 1024, d.rate_at(1024)));
    }

    #[test]
    fn ssd_costs_overhead_plus_size_over_bandwidth() {
        let mut d = Ssd::sata_2012("sdb").unwrap();
        let t = d.service_time(&w(0, 1024), 0);
        assert_eq!(t, SSD_OVERHEAD + transfer(512 * 1024, SSD_WRITE_BW)); // ≈ 1.41 ms
        let r = Io {
            dir: Dir::Read,
            ..w(5_000_000, 8)
        };
        assert_eq!(
            d.service_time(&r, SEC),
            SSD_OVERHEAD + transfer(4096, SSD_READ_BW)
        );
    }

    #[test]
    fn large_sequential_request_on_raid0_of_4_is_about_4x_faster_than_one_disk() {
        let mut single = Hdd::desktop_7200("sdb").unwrap();
        let mut raid = Raid0::of_hdds("md0", 4).unwrap();
        assert_eq!(raid.max_sectors(), RAID0_CHUNK_SECTORS);
        let cfg = raid.queue_config();
        assert_eq!((cfg.nr_requests, cfg.depth), (512, 4));
        let ios = |_| (0..50u64).map(|i| w(i * 4096, 4096)); // 50 × 2 MiB
        let t1 = run(&mut single, ios(())) as f64;
        let t4 = run(&mut raid, ios(())) as f64;
        let speedup = t1 / t4;
        assert!((3.8..=4.05).contains(&speedup), "speed-up {speedup:.2}");
    }

    #[test]
    fn raid0_maps_chunks_round_robin_over_members() {
        let raid = Raid0::of_hdds("md0", 3).unwrap();
        let parts = raid.split(&w(1000, 3100));
        let got: Vec<(usize, u64, u32)> = parts
            .iter()
            .map(|(m, io)| (*m, io.sector, io.nr_sectors))
            .collect();
        // chunks 0..3 of 1024 sectors: 1000-1023 on m0, 1024-2047 m1, 2048-3071 m2,
        // 3072-4095 → chunk 3 → m0 at member sector 1024.
        assert_eq!(
            got,
            vec![
                (0, 1000, 24),
                (1, 0, 1024),
                (2, 0, 1024),
                (0, 1024, 1024),
                (1, 1024, 4)
            ]
        );
    }

    #[test]
    fn usb_small_scattered_writes_are_much_slower_than_sequential() {
        let mut seq = UsbStick::usb2_2009("sdc").unwrap();
        assert_eq!(seq.max_sectors(), 240);
        let n = 200u64;
        let t_seq = run(&mut seq, (0..n).map(|i| w(i * 240, 240)));
        let seq_bps = (n * 240 * 512) as f64 / (t_seq as f64 / SEC as f64);
        let mut rnd = UsbStick::usb2_2009("sdc").unwrap();
        let mut rng = Lcg(7);
        let t_rnd = run(
            &mut rnd,
            (0..n).map(|_| w(rng.next() % 60_000_000 / 8 * 8, 8)),
        );
        let rnd_bps = (n * 4096) as f64 / (t_rnd as f64 / SEC as f64);
        assert!(seq_bps > 8e6, "sequential {seq_bps:.0} B/s");
        assert!(rnd_bps < 100e3, "scattered 4 KiB {rnd_bps:.0} B/s");
        assert!(seq_bps > 100.0 * rnd_bps);
    }

    #[test]
    fn nfs_commit_waits_for_the_server_backlog() {
        let mut d = Nfs::gige("server:/export").unwrap();
        let mb = 1_000_000;
        // 100 MB of UNSTABLE writes stream at the network rate.
        let mut now = 0;
        for _ in 0..200 {
            now += d.write_rpc(mb / 2, false, now);
        }
        // One RPC at a time: 0.5 MB / (4.27 ms on the wire + 0.2 ms round trip) ≈ 112 MB/s.
        let mb_s = 100.0 / (now as f64 / SEC as f64);
        assert!((105.0..117.0).contains(&mb_s), "{mb_s:.1} MB/s");
        // The server disk (138 MB/s) keeps up with 117 MB/s, so little backlog is left...
        let backlog = d.server_backlog(now);
        assert!(backlog < 2 * mb, "{backlog}");
        let c = d.commit(now);
        assert!(c >= NFS_COMMIT_COST + NFS_RTT);
        // ...but a slow server disk makes COMMIT pay for it.
        let mut slow = Nfs::new(
            "slow:/x",
            NFS_NET_BW,
            NFS_RTT,
            20 * mb,
            NFS_COMMIT_COST,
            1024,
        )
        .unwrap();
        let mut now = 0;
        for _ in 0..100 {
            now += slow.write_rpc(mb / 2, false, now);
        }
        let c = slow.commit(now);
        assert!(c > SEC, "commit {c}");
        // A second COMMIT right away finds nothing to flush but waits for the disk.
        let c2 = slow.commit(now);
        assert!(c2 >= c + NFS_COMMIT_COST, "second commit {c2} after {c}");
    }

    #[test]
    fn concurrent_stable_writes_share_journal_commits() {
        // Sixteen one-page FILE_SYNC WRITEs sent at once (one per RPC slot): the first
        // starts a commit, the other fifteen arrive while it runs and all join the next
        // one, as knfsd's threads and the journal's batched fsyncs serve them. Sent one
        // after another, each would pay a commit of its own.
        let mut d = Nfs::gige("server:/export").unwrap();
        let replies: Vec<Nanos> = (0..16).map(|_| d.write_rpc(4096, true, 0)).collect();
        let last = *replies.iter().max().unwrap();
        assert!(last < 3 * NFS_COMMIT_COST, "{last}");
        assert!(last >= 2 * NFS_COMMIT_COST, "two commits: {last}");
        // One batch: the joiners' replies differ only by their pages' wire and disk time.
        let first_joiner = *replies[1..].iter().min().unwrap();
        assert!(last - first_joiner < MSEC, "{first_joiner} .. {last}");
        let mut serial = Nfs::gige("server:/export").unwrap();
        let mut now = 0;
        for _ in 0..16 {
            now += serial.write_rpc(4096, true, now);
        }
        assert!(now >= 16 * NFS_COMMIT_COST, "{now}");
    }

    #[test]
    fn nfs_congestion_thresholds_for_4_gib_are_16384_and_12288_pages() {
        let mut c = NfsCongestion::new(1 << 20);
        assert_eq!((c.on, c.off), (16_384, 12_288));
        assert!(!c.start_writeback(16_384));
        assert!(c.start_writeback(1));
        assert!(!c.end_writeback(16_385 - 12_288));
        assert!(c.end_writeback(1));
        assert!(!c.congested());
        // Capped at 256 MiB = 65 536 pages.
        assert_eq!(NfsCongestion::new(1 << 30).on, 65_536);
    }

    #[test]
    fn every_preset_device_is_valid() {
        assert!(Hdd::new("sda", HddParams::laptop_5400()).is_ok());
        assert!(Hdd::desktop_7200("sda").is_ok());
        assert!(Ssd::sata_2012("sdb").is_ok());
        assert!(UsbStick::usb2_2009("sdc").is_ok());
        assert!(Raid0::of_hdds("md0", 4).is_ok());
        assert!(Nfs::gige("server:/export").is_ok());
        let hdd = Hdd::desktop_7200("sda").unwrap();
        assert_eq!(hdd.revolution(), 8_333_333); // 4.17 ms average latency
    }

    #[test]
    fn zero_bandwidth_is_a_constructor_error_naming_the_device() {
        let e = Ssd::new("sdb", SSD_OVERHEAD, SSD_READ_BW, 0).unwrap_err();
        assert_eq!(e.device, "sdb");
        assert_eq!(
            e.to_string(),
            "device 'sdb': write bandwidth is zero: no IO could ever complete"
        );
        let e = Hdd::new(
            "sda",
            HddParams {
                rpm: 0,
                ..HddParams::desktop_7200()
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("'sda'") && e.to_string().contains("rpm"));
        assert!(Raid0::new("md0", Vec::new(), 1024)
            .unwrap_err()
            .to_string()
            .contains("md0"));
        assert!(Nfs::new("srv:/x", 0, NFS_RTT, 1, 0, 1024).is_err());
        assert!(UsbStick::new("sdc", 1, 0, 1, 0, 4096, 1).is_err());
        let e = Hdd::new(
            "sdd",
            HddParams {
                avg_seek: 2 * MSEC,
                ..HddParams::desktop_7200()
            },
        )
        .unwrap_err();
        assert!(e.problem.contains("average seek"), "{e}");
    }
}
