//! `/proc/diskstats` counters and the `iostat -x` figures derived from them
//! (`Documentation/iostats.txt`, `block/blk-core.c` accounting, sysstat's `iostat`;
//! `kernel-writeback.md` §9.4, `mmtests.md` §4).

use super::{Dir, Request};
use crate::engine::{Nanos, MSEC, SEC};

/// The `iostat` interval MMTests used in 2011-2013 (`MONITOR_UPDATE_FREQUENCY=10`).
pub const MMTESTS_IOSTAT_INTERVAL: Nanos = 10 * SEC;

/// One device's `/proc/diskstats` counters. Times are kept in nanoseconds (the kernel
/// keeps jiffies and prints milliseconds); [`DiskStats::proc_line`] prints milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskStats {
    /// Field 1: reads completed.
    pub reads_completed: u64,
    /// Field 2: read bios merged into an existing request.
    pub reads_merged: u64,
    /// Field 3: sectors read (counted at completion).
    pub sectors_read: u64,
    /// Field 4: time from creation to completion summed over read requests.
    pub read_ns: Nanos,
    /// Field 5: writes completed.
    pub writes_completed: u64,
    /// Field 6: write bios merged.
    pub writes_merged: u64,
    /// Field 7: sectors written.
    pub sectors_written: u64,
    /// Field 8: time spent by write requests.
    pub write_ns: Nanos,
    /// Field 9: requests created and not yet completed (in the elevator or at the device;
    /// bios waiting for a free request do not count).
    pub in_flight: u64,
    /// Field 10: time with at least one request in flight.
    pub io_ticks_ns: Nanos,
    /// Field 11: integral of `in_flight` over time (weighted time).
    pub time_in_queue_ns: Nanos,
    /// `part->stamp`: when the two integrals were last brought up to date.
    pub stamp: Nanos,
}

impl DiskStats {
    /// `part_round_stats`: accrue `io_ticks` and `time_in_queue` up to `now`.
    pub(crate) fn round(&mut self, now: Nanos) {
        let dt = now.saturating_sub(self.stamp);
        if self.in_flight > 0 {
            self.io_ticks_ns += dt;
            self.time_in_queue_ns += self.in_flight * dt;
        }
        self.stamp = self.stamp.max(now);
    }

    /// A copy brought up to date at `now`, as `diskstats_show` prints it.
    pub fn snapshot(&self, now: Nanos) -> DiskStats {
        let mut s = *self;
        s.round(now);
        s
    }

    /// A bio merged into an existing request (`drive_stat_acct(rq, 0)`).
    pub(crate) fn account_merge(&mut self, dir: Dir) {
        match dir {
            Dir::Read => self.reads_merged += 1,
            Dir::Write => self.writes_merged += 1,
        }
    }

    /// A new request was created (`drive_stat_acct(rq, 1)`).
    pub(crate) fn account_new_request(&mut self, now: Nanos) {
        self.round(now);
        self.in_flight += 1;
    }

    /// Two queued requests merged into one (`blk_account_io_merge`).
    pub(crate) fn account_request_merge(&mut self, now: Nanos) {
        self.round(now);
        self.in_flight -= 1;
    }

    /// A request completed (`blk_account_io_completion` + `blk_account_io_done`).
    pub(crate) fn account_done(&mut self, rq: &Request, now: Nanos) {
        let duration = now.saturating_sub(rq.start_time);
        let sectors = u64::from(rq.nr_sectors);
        match rq.dir {
            Dir::Read => {
                self.reads_completed += 1;
                self.sectors_read += sectors;
                self.read_ns += duration;
            }
            Dir::Write => {
                self.writes_completed += 1;
                self.sectors_written += sectors;
                self.write_ns += duration;
            }
        }
        self.round(now);
        self.in_flight -= 1;
    }

    /// What an md device's own line shows in this era: requests and sectors only; merges,
    /// times and `in_flight` read as zero (`md_make_request` accounting).
    pub fn md_view(&self) -> DiskStats {
        DiskStats {
            reads_completed: self.reads_completed,
            sectors_read: self.sectors_read,
            writes_completed: self.writes_completed,
            sectors_written: self.sectors_written,
            ..DiskStats::default()
        }
    }

    /// The `/proc/diskstats` line (`diskstats_show` format), times in milliseconds.
    pub fn proc_line(&self, major: u32, minor: u32, name: &str) -> String {
        format!(
            "{:4} {:7} {} {} {} {} {} {} {} {} {} {} {} {}",
            major,
            minor,
            name,
            self.reads_completed,
            self.reads_merged,
            self.sectors_read,
            self.read_ns / MSEC,
            self.writes_completed,
            self.writes_merged,
            self.sectors_written,
            self.write_ns / MSEC,
            self.in_flight,
            self.io_ticks_ns / MSEC,
            self.time_in_queue_ns / MSEC,
        )
    }
}

/// One `iostat -x` report line for one device (sysstat "format 1" columns).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct IostatSample {
    pub rrqm_s: f64,
    pub wrqm_s: f64,
    pub r_s: f64,
    pub w_s: f64,
    pub rkb_s: f64,
    pub wkb_s: f64,
    /// Mean request size in sectors.
    pub avgrq_sz: f64,
    /// Time-average number of requests in flight.
    pub avgqu_sz: f64,
    /// Mean residence time of a request (creation to completion), milliseconds.
    pub await_ms: f64,
    pub r_await_ms: f64,
    pub w_await_ms: f64,
    /// `%util × Δt / ios`, milliseconds: derived, not a real service time.
    pub svctm_ms: f64,
    /// Percent of the interval with a request in flight.
    pub util: f64,
}

fn per(num: f64, den: u64) -> f64 {
    if den == 0 {
        0.0
    } else {
        num / den as f64
    }
}

fn ms(ns: Nanos) -> f64 {
    ns as f64 / MSEC as f64
}

/// The `iostat -x` figures for the interval between two snapshots `dt` apart
/// (`kernel-writeback.md` §9.4). A zero `dt` gives all zeros.
pub fn iostat_x(prev: &DiskStats, cur: &DiskStats, dt: Nanos) -> IostatSample {
    if dt == 0 {
        return IostatSample::default();
    }
    let secs = dt as f64 / SEC as f64;
    let dt_ms = ms(dt);
    let dr = cur.reads_completed - prev.reads_completed;
    let dw = cur.writes_completed - prev.writes_completed;
    let ios = dr + dw;
    let dsr = (cur.sectors_read - prev.sectors_read) as f64;
    let dsw = (cur.sectors_written - prev.sectors_written) as f64;
    let rt = ms(cur.read_ns - prev.read_ns);
    let wt = ms(cur.write_ns - prev.write_ns);
    let ticks = ms(cur.io_ticks_ns - prev.io_ticks_ns);
    IostatSample {
        rrqm_s: (cur.reads_merged - prev.reads_merged) as f64 / secs,
        wrqm_s: (cur.writes_merged - prev.writes_merged) as f64 / secs,
        r_s: dr as f64 / secs,
        w_s: dw as f64 / secs,
        rkb_s: dsr / 2.0 / secs,
        wkb_s: dsw / 2.0 / secs,
        avgrq_sz: per(dsr + dsw, ios),
        avgqu_sz: ms(cur.time_in_queue_ns - prev.time_in_queue_ns) / dt_ms,
        await_ms: per(rt + wt, ios),
        r_await_ms: per(rt, dr),
        w_await_ms: per(wt, dw),
        svctm_ms: per(ticks, ios),
        util: (100.0 * ticks / dt_ms).min(100.0),
    }
}

/// `iostat -x <interval>` for one device: one sample per call of [`IostatSampler::sample`],
/// which the caller makes every `interval` (see [`IostatSampler::next_due`]).
#[derive(Clone, Debug)]
pub struct IostatSampler {
    interval: Nanos,
    last: Option<(Nanos, DiskStats)>,
    samples: Vec<(Nanos, IostatSample)>,
}

impl IostatSampler {
    /// Sample every `interval` (must be > 0).
    pub fn new(interval: Nanos) -> Self {
        assert!(interval > 0, "iostat interval must be positive");
        IostatSampler {
            interval,
            last: None,
            samples: Vec::new(),
        }
    }

    /// Every 10 s, as MMTests' monitor in 2011-2013.
    pub fn mmtests() -> Self {
        IostatSampler::new(MMTESTS_IOSTAT_INTERVAL)
    }

    /// When the next sample is due: at once before the first one.
    pub fn next_due(&self) -> Nanos {
        self.last.map_or(0, |(t, _)| t + self.interval)
    }

    /// Take a sample at `now` from the device's counters. The first call gives iostat's
    /// since-boot report (counters over the uptime; nothing at `now == 0`), which MMTests
    /// 2013 keeps; each later call reports the interval since the previous call.
    pub fn sample(&mut self, now: Nanos, stats: &DiskStats) -> Option<&IostatSample> {
        let snap = stats.snapshot(now);
        let pushed = match self.last {
            None if now > 0 => {
                let boot = DiskStats::default();
                self.samples.push((now, iostat_x(&boot, &snap, now)));
                true
            }
            Some((t, prev)) if now > t => {
                self.samples.push((now, iostat_x(&prev, &snap, now - t)));
                true
            }
            _ => false,
        };
        self.last = Some((now, snap));
        if pushed {
            self.samples.last().map(|(_, s)| s)
        } else {
            None
        }
    }

    /// Every sample with its time.
    pub fn samples(&self) -> &[(Nanos, IostatSample)] {
        &self.samples
    }

    /// The MMTests Mean/Max rows for this device.
    pub fn summary(&self) -> Option<IostatSummary> {
        let s: Vec<IostatSample> = self.samples.iter().map(|(_, s)| *s).collect();
        IostatSummary::from_samples(&s)
    }
}

/// The MMTests iostat rows for one device: Mean and Max of avgqu-sz, await, r_await and
/// w_await over the kept samples (`MonitorIostat.pm` @ a2802bbb, `mmtests.md` §4).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct IostatSummary {
    pub samples_kept: usize,
    pub mean_avgqz: f64,
    pub mean_await: f64,
    pub mean_r_await: f64,
    pub mean_w_await: f64,
    pub max_avgqz: f64,
    pub max_await: f64,
    pub max_r_await: f64,
    pub max_w_await: f64,
}

/// iostat prints two decimals and MMTests parses the printed text.
fn printed(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

impl IostatSummary {
    /// Applies MMTests' rules on the values as iostat prints them (two decimals): a sample
    /// is discarded if avgqu-sz > 7200 or await > 7200, or if avgqu-sz, await and r_await
    /// are all 0. `None` when no sample is kept or the mean avgqu-sz is below 0.01 (the
    /// device is left out of the table).
    pub fn from_samples(samples: &[IostatSample]) -> Option<IostatSummary> {
        let kept: Vec<[f64; 4]> = samples
            .iter()
            .map(|s| {
                [
                    printed(s.avgqu_sz),
                    printed(s.await_ms),
                    printed(s.r_await_ms),
                    printed(s.w_await_ms),
                ]
            })
            .filter(|[q, a, r, _]| {
                !(*q > 7200.0 || *a > 7200.0 || (*q == 0.0 && *a == 0.0 && *r == 0.0))
            })
            .collect();
        if kept.is_empty() {
            return None;
        }
        let n = kept.len() as f64;
        let mean = |i: usize| kept.iter().map(|k| k[i]).sum::<f64>() / n;
        let max = |i: usize| kept.iter().map(|k| k[i]).fold(f64::MIN, f64::max);
        let summary = IostatSummary {
            samples_kept: kept.len(),
            mean_avgqz: mean(0),
            mean_await: mean(1),
            mean_r_await: mean(2),
            mean_w_await: mean(3),
            max_avgqz: max(0),
            max_await: max(1),
            max_r_await: max(2),
            max_w_await: max(3),
        };
        (summary.mean_avgqz >= 0.01).then_some(summary)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::device::{Device, Hdd};
    use crate::block::request_queue::{QueueConfig, RequestQueue, Submit};
    use crate::block::Bio;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn ten_writes_of_8_sectors_each_taking_20ms_over_10s() {
        let mut q = RequestQueue::new("sda", QueueConfig::default());
        for i in 0..10u64 {
            let t = i * SEC;
            let bio = Bio {
                dir: Dir::Write,
                sync: false,
                sector: i * 1000,
                nr_sectors: 8,
                tag: i,
            };
            assert_eq!(q.submit_bio(bio, t), Submit::Queued);
            let rq = q.dispatch(t).unwrap();
            q.complete(rq, t + 20 * MSEC);
        }
        let s = iostat_x(&DiskStats::default(), &q.stats_at(10 * SEC), 10 * SEC);
        assert!(close(s.w_s, 1.0, 1e-9));
        assert!(close(s.r_s, 0.0, 1e-9));
        assert!(close(s.wkb_s, 4.0, 1e-9)); // 80 sectors = 40 KiB over 10 s
        assert!(close(s.avgrq_sz, 8.0, 1e-9));
        assert!(close(s.await_ms, 20.0, 1e-9));
        assert!(close(s.w_await_ms, 20.0, 1e-9));
        assert!(close(s.r_await_ms, 0.0, 1e-9));
        assert!(close(s.avgqu_sz, 0.02, 1e-9)); // 200 ms of one request over 10 000 ms
        assert!(close(s.util, 2.0, 1e-9));
        assert!(close(s.svctm_ms, 20.0, 1e-9));
        assert_eq!(
            q.stats_at(10 * SEC).proc_line(8, 0, "sda"),
            "   8       0 sda 0 0 0 0 10 0 80 200 0 200 200"
        );
    }

    #[test]
    fn merges_are_counted_per_direction_per_second() {
        let mut q = RequestQueue::new("sda", QueueConfig::default());
        for i in 0..5u64 {
            let bio = Bio {
                dir: Dir::Read,
                sync: true,
                sector: i * 8,
                nr_sectors: 8,
                tag: i,
            };
            q.submit_bio(bio, 0);
        }
        let rq = q.dispatch(0).unwrap();
        q.complete(rq, 10 * MSEC);
        let s = iostat_x(&DiskStats::default(), &q.stats_at(SEC), SEC);
        assert!(close(s.rrqm_s, 4.0, 1e-9));
        assert!(close(s.r_s, 1.0, 1e-9));
        assert!(close(s.rkb_s, 20.0, 1e-9));
        assert!(close(s.avgrq_sz, 40.0, 1e-9));
    }

    /// A random 4 KiB write load (one every 11 ms, ~99 % utilisation) on the default HDD,
    /// sampled every 10 s: each sample obeys Little's law (avgqu-sz = w/s × w_await) up to
    /// the requests straddling the sample edges.
    #[test]
    fn avgqu_sz_follows_littles_law_in_every_10s_sample() {
        let mut q = RequestQueue::new("sda", QueueConfig::default());
        let mut dev = Hdd::desktop_7200("sda").unwrap();
        let mut sampler = IostatSampler::mmtests();
        let mut busy: Option<(Nanos, crate::block::Request)> = None;
        let (mut next_arrival, mut lcg, mut tag) = (0u64, 12345u64, 0u64);
        let end = 60 * SEC;
        loop {
            let t_done = busy.as_ref().map_or(u64::MAX, |b| b.0);
            let t_sample = sampler.next_due();
            let now = next_arrival.min(t_done).min(t_sample);
            if now > end {
                break;
            }
            if now == t_sample {
                sampler.sample(now, q.stats());
            } else if now == t_done {
                let (_, rq) = busy.take().unwrap();
                q.complete(rq, now);
            } else {
                lcg = lcg
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let sector = (lcg >> 2) % 3_000_000_000 / 8 * 8;
                let bio = Bio {
                    dir: Dir::Write,
                    sync: false,
                    sector,
                    nr_sectors: 8,
                    tag,
                };
                tag += 1;
                assert_ne!(q.submit_bio(bio, now), Submit::Full);
                next_arrival += 11 * MSEC;
            }
            if busy.is_none() {
                if let Some(rq) = q.dispatch(now) {
                    let st = dev.service_time(&rq.io(), now);
                    busy = Some((now + st, rq));
                }
            }
        }
        let samples = sampler.samples();
        assert_eq!(samples.len(), 6); // t = 10 .. 60 s; nothing at t = 0
        for (t, s) in samples {
            let little = s.w_s * s.w_await_ms / 1000.0;
            assert!(
                s.avgqu_sz > 1.0,
                "t={t}: a queue should build up, got {s:?}"
            );
            assert!(
                (s.avgqu_sz - little).abs() / s.avgqu_sz < 0.1,
                "t={t}: avgqu-sz {} vs w/s × w_await {}",
                s.avgqu_sz,
                little
            );
        }
        let sum = sampler.summary().unwrap();
        assert_eq!(sum.samples_kept, 6);
        assert!(sum.max_w_await >= sum.mean_w_await);
    }

    #[test]
    fn mmtests_summary_discards_idle_and_absurd_samples() {
        let busy = IostatSample {
            avgqu_sz: 10.0,
            await_ms: 100.0,
            w_await_ms: 120.0,
            ..IostatSample::default()
        };
        let idle = IostatSample {
            avgqu_sz: 0.004, // prints as 0.00
            w_await_ms: 3.0,
            ..IostatSample::default()
        };
        let absurd = IostatSample {
            avgqu_sz: 8000.0,
            await_ms: 5.0,
            ..IostatSample::default()
        };
        let half = IostatSample {
            avgqu_sz: 4.0,
            await_ms: 50.0,
            r_await_ms: 10.0,
            w_await_ms: 60.0,
            ..IostatSample::default()
        };
        let s = IostatSummary::from_samples(&[busy, idle, absurd, half]).unwrap();
        assert_eq!(s.samples_kept, 2);
        assert!(close(s.mean_avgqz, 7.0, 1e-9));
        assert!(close(s.mean_await, 75.0, 1e-9));
        assert!(close(s.mean_r_await, 5.0, 1e-9));
        assert!(close(s.max_w_await, 120.0, 1e-9));
        // A device whose mean avgqz is below 0.01 is left out.
        let quiet = IostatSample {
            avgqu_sz: 0.0,
            await_ms: 1.0,
            ..IostatSample::default()
        };
        assert_eq!(IostatSummary::from_samples(&[quiet]), None);
    }

    #[test]
    fn first_sample_after_boot_reports_the_since_boot_average() {
        let st = DiskStats {
            writes_completed: 20,
            write_ns: 20 * 10 * MSEC,
            ..DiskStats::default()
        };
        let mut sampler = IostatSampler::mmtests();
        let s = *sampler.sample(20 * SEC, &st).unwrap();
        assert!(close(s.w_s, 1.0, 1e-9));
        assert!(close(s.w_await_ms, 10.0, 1e-9));
        assert_eq!(sampler.next_due(), 30 * SEC);
        assert!(sampler.sample(30 * SEC, &st).is_some());
        assert_eq!(sampler.samples()[1].1.w_s, 0.0);
    }

    #[test]
    fn md_view_keeps_only_requests_and_sectors() {
        let st = DiskStats {
            writes_completed: 3,
            sectors_written: 24,
            writes_merged: 2,
            write_ns: 5,
            io_ticks_ns: 9,
            ..DiskStats::default()
        };
        let md = st.md_view();
        assert_eq!((md.writes_completed, md.sectors_written), (3, 24));
        assert_eq!((md.writes_merged, md.write_ns, md.io_ticks_ns), (0, 0, 0));
    }
}
