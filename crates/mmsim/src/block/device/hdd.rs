//! A rotating disk: seek by distance, rotational position from simulated time, zoned
//! transfer rate (`kernel-writeback.md` §9.3).

use super::*;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::device::testutil::*;

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
}
