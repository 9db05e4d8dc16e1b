//! `balance_dirty_pages` of "IO-less dirty throttling" v3 (Wu Fengguang, 2010-12-13, seed
//! 003) on 2.6.37: a dirtier never writes pages; it sleeps for a time set by how close its
//! bdi's dirty pages are to its limits, and the flusher alone writes. The rules are the
//! series' own, as posted (`docs/kernels.md` lists the sources), patch by patch behind the
//! `ioless_*` switches; the merged 3.2+ design is in [`super::balance`].
//!
//! Jiffies are mmsim's (HZ = 250). Limits come from 2.6.37's event-clocked proportions
//! ([`super::proportions`]).

use super::balance_old::OldWriteback;
use super::*;
use crate::presets::{Switch, Switches};

/// `BDI_SOFT_DIRTY_LIMIT`: the bdi ramp spans `bdi_limit / 8`.
pub const BDI_SOFT_DIRTY_LIMIT: u64 = 8;
/// `TASK_SOFT_DIRTY_LIMIT`: a task's limit is up to `bdi_limit / 16` below the bdi's, and the
/// task ramp spans `bdi_limit / 16`.
pub const TASK_SOFT_DIRTY_LIMIT: u64 = 2 * BDI_SOFT_DIRTY_LIMIT;
/// 100 MB/s in pages: patch 03's fixed rate and the estimators' starting value.
pub const V3_INIT_BW: u64 = (100 << 20) / PAGE_SIZE;
/// `MIN_WRITEBACK_PAGES` (patch 35): 4 MiB.
pub const V3_MIN_WRITEBACK_PAGES: u64 = 4096 * 1024 / PAGE_SIZE;

/// `MAX_PAUSE` in jiffies: 100 ms (patch 03), 200 ms with patch 24.
pub fn v3_max_pause_j(sw: Switches) -> u64 {
    if sw.on(Switch::IolessMaxPause200ms) {
        (HZ / 5).max(1)
    } else {
        (HZ / 10).max(1)
    }
}

/// A bdi's state under v3: its write-bandwidth estimate (patch 23), base throttle rate (28)
/// and smoothed dirty count (29), in pages and pages per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BdiV3 {
    /// `write_bandwidth`.
    pub write_bandwidth: u64,
    /// `throttle_bandwidth`.
    pub throttle_bandwidth: u64,
    /// `avg_dirty`.
    pub avg_dirty: u64,
    /// `old_dirty`.
    pub old_dirty: u64,
    /// `bw_time_stamp`, in jiffies; None before the first update (the kernel's 0, which
    /// is always long ago).
    pub bw_time_stamp: Option<u64>,
    /// `written_stamp`: BDI_WRITTEN at the stamp.
    pub written_stamp: u64,
}

impl Default for BdiV3 {
    fn default() -> Self {
        BdiV3 {
            write_bandwidth: V3_INIT_BW,
            throttle_bandwidth: V3_INIT_BW,
            avg_dirty: 0,
            old_dirty: 0,
            bw_time_stamp: None,
            written_stamp: 0,
        }
    }
}

/// A task's state under v3 (patches 05 and 27): its own `task_struct` fields, apart from
/// the 3.x ones.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TaskV3 {
    /// `nr_dirtied`: throttle-hook pages since the last call.
    pub nr_dirtied: u64,
    /// `nr_dirtied_pause`: 0 until the first hook sets it.
    pub nr_dirtied_pause: u64,
    /// `paused_when`, in jiffies: the end of the last paid-for period; None = never (the
    /// kernel's 0, more than 10 s ago).
    pub paused_when: Option<u64>,
}

/// `bdi_dirty_limit` of v3 for a bdi with share `num / den` of `thresh`, with `dirty`
/// pages dirty or under writeback machine-wide: patch 02's stat-error margin, patch 01's
/// 1/128 margin and gate, then 2.6.37's share (`min_ratio` 0, `max_ratio` 100).
pub fn bdi_dirty_limit_v3(
    sw: Switches,
    thresh: u64,
    num: u64,
    den: u64,
    dirty: u64,
    stat_error: u64,
) -> u64 {
    let mut x = thresh;
    if sw.on(Switch::IolessBdiStatMargin) {
        if x <= stat_error {
            return 0;
        }
        x -= stat_error;
    }
    let gate = sw.on(Switch::IolessBdiLimitGate);
    if gate {
        x -= (x / 128).min(32768 * 1024 / PAGE_SIZE);
    }
    let mut b = bdi_dirty_limit(x, num, den, 0, 100, 0);
    if gate && x > dirty && b < (x - dirty) / 2 {
        b = (x - dirty) / 2;
    }
    b.min(x)
}

/// `task_dirty_limit` of v3 (patch 03): the bdi's limit less up to a sixteenth of it by the
/// task's share `num / den` of recent dirtyings (2.6.37's floor of half the bdi's limit
/// stays in the code but can no longer bind).
pub fn task_dirty_limit_v3(bdi_thresh: u64, num: u64, den: u64) -> u64 {
    let inv =
        u128::from(bdi_thresh / TASK_SOFT_DIRTY_LIMIT) * u128::from(num) / u128::from(den.max(1));
    bdi_thresh - inv as u64
}

/// Patch 12's rule in `global_dirty_limits`: a background limit at most the dirty limit
/// less two eighths of it (it was halved only when at or above the dirty limit).
pub fn bg_gap_v3(bg: u64, thresh: u64) -> u64 {
    bg.min(thresh - thresh * 2 / BDI_SOFT_DIRTY_LIMIT)
}

/// `ratelimit_pages(bdi)` (patch 05): about the square root of the headroom, below the
/// machine's midpoint or else below the bdi's limit; 1 at or over it.
pub fn ratelimit_pages_v3(
    bg: u64,
    thresh: u64,
    dirty: u64,
    bdi_thresh: u64,
    bdi_dirty: u64,
) -> u64 {
    if dirty <= (thresh + bg) / 2 {
        return 1 + thresh.saturating_sub(dirty).isqrt();
    }
    if bdi_dirty < bdi_thresh {
        return 1 + (bdi_thresh - bdi_dirty).isqrt();
    }
    1
}

/// `max_pause(bdi_thresh)` (patch 30): 1 ms per 4 MiB of the bdi's limit plus 2 jiffies,
/// at most `max_pause`; without the patch, `max_pause`.
pub fn v3_pause_max_j(sw: Switches, bdi_thresh: u64) -> u64 {
    let cap = v3_max_pause_j(sw);
    if !sw.on(Switch::IolessMaxPauseByMemory) {
        return cap;
    }
    let shift = 32 - PAGE_SIZE.ilog2() - pow2up(HZ).ilog2();
    ((bdi_thresh >> shift) + 2).min(cap)
}

/// `min_pause(bdi, max)` (patch 31): 10 ms per halving of the base rate below the write
/// bandwidth, in [1, max/2]; without the patch, 1 jiffy.
pub fn v3_min_pause_j(sw: Switches, bdi: &BdiV3, pause_max: u64) -> u64 {
    if !sw.on(Switch::IolessMinPauseConcurrent) {
        return 1;
    }
    let hi = ilog2(bdi.write_bandwidth);
    let lo = ilog2(bdi.throttle_bandwidth);
    if lo >= hi {
        return 1;
    }
    let t = (hi - lo) as u64 * (10 * HZ) / 1024;
    t.clamp(1, (pause_max / 2).max(1))
}

/// `writeback_chunk_size` (patch 35): a second of write bandwidth rounded down to a power of
/// two, at least 4 MiB.
pub fn writeback_chunk_size_v3(write_bandwidth: u64) -> u64 {
    if write_bandwidth < V3_MIN_WRITEBACK_PAGES {
        V3_MIN_WRITEBACK_PAGES
    } else {
        1 << write_bandwidth.ilog2()
    }
}

impl BdiV3 {
    /// `bdi_update_bandwidth(bdi, start_time, bdi_dirty, bdi_thresh)` (patch 23, with 28 and
    /// 29) at jiffy `now`, with `written` pages written by the bdi so far. The flusher passes
    /// 0 for the dirty count and limit.
    pub fn update(
        &mut self,
        sw: Switches,
        now: u64,
        start: u64,
        written: u64,
        bdi_dirty: u64,
        bdi_thresh: u64,
    ) {
        if let Some(stamp) = self.bw_time_stamp {
            let elapsed = now - stamp;
            // An update at most every 100 ms; after a quiet spell only a new stamp.
            if elapsed <= HZ / 10 {
                return;
            }
            if !(elapsed > HZ / 2 && elapsed > now - start) {
                if sw.on(Switch::IolessSmoothedBdiDirty) {
                    self.update_dirty_smooth(bdi_dirty, bdi_thresh);
                }
                self.update_write_bandwidth(elapsed, written);
                if sw.on(Switch::IolessBaseThrottleBandwidth) {
                    let dirty = if sw.on(Switch::IolessSmoothedBdiDirty) {
                        self.avg_dirty
                    } else {
                        bdi_dirty
                    };
                    self.update_throttle_bandwidth(dirty, bdi_thresh);
                }
            }
        }
        self.written_stamp = written;
        self.bw_time_stamp = Some(now);
    }

    /// `__bdi_update_write_bandwidth`: a moving average over `pow2up(HZ)` jiffies, the new
    /// sample weighing at most a half.
    fn update_write_bandwidth(&mut self, elapsed: u64, written: u64) {
        let period = pow2up(HZ);
        let mut elapsed = elapsed;
        let mut x = (written - self.written_stamp) * HZ;
        if elapsed > period / 2 {
            x = x / elapsed * (period / 2);
            elapsed = period / 2;
        }
        self.write_bandwidth = (x + self.write_bandwidth * (period - elapsed)) >> period.ilog2();
    }

    /// `__bdi_update_dirty_smooth` (patch 29): a 1/16 moving average that holds while the
    /// count stays between it and the last sample, and jumps down to a count above it
    /// after the limit fell below it. Not from the flusher (`thresh` 0).
    fn update_dirty_smooth(&mut self, dirty: u64, thresh: u64) {
        if thresh == 0 {
            return;
        }
        let (avg, old) = (self.avg_dirty, self.old_dirty);
        if avg > thresh {
            self.avg_dirty = dirty;
        } else if !(avg.min(old) <= dirty && dirty <= avg.max(old)) {
            self.avg_dirty = (avg * 15 + dirty) / 16;
        }
        self.old_dirty = dirty;
    }

    /// `__bdi_update_throttle_bandwidth` (patch 28), in the kernel's unsigned arithmetic: a
    /// flusher call (`thresh` 0) wraps, so it raises a never-throttled bdi's base rate.
    fn update_throttle_bandwidth(&mut self, dirty: u64, thresh: u64) {
        let gap = thresh / TASK_SOFT_DIRTY_LIMIT + 1;
        let bw = self.throttle_bandwidth;
        let wb = self.write_bandwidth;
        if dirty > thresh {
            return;
        }
        let below = thresh - dirty;
        if dirty > thresh.wrapping_sub(gap) {
            self.throttle_bandwidth = bw - (bw >> (3 + 4 * below / gap));
            return;
        }
        if dirty > thresh.wrapping_sub(2 * gap).wrapping_add(gap / 4) && bw > wb + wb / 2 {
            self.throttle_bandwidth = bw - (bw >> (3 + 4 * (below - gap) / gap).min(63));
            return;
        }
        if dirty <= thresh.wrapping_sub(2 * gap).wrapping_sub(gap / 2) && bw < wb - wb / 2 {
            self.throttle_bandwidth = bw + (bw >> 4) + 1;
        }
    }
}

/// Whether the kernel is 2.6.37 with the IO-less series v3 and `patch` of it.
pub fn v3_has(k: &crate::mm::Kernel, patch: Switch) -> bool {
    k.ioless_v3() && k.sw.on(patch)
}

/// The flusher's `bdi_update_write_bandwidth(bdi, work_start)` under v3 (patch 23): the
/// update with no dirty count or limit, at the start of `wb_writeback` and after each slice.
pub fn v3_flusher_update_bandwidth(k: &mut crate::mm::Kernel, bdi: usize, work_start: Nanos) {
    if !v3_has(k, Switch::IolessBandwidthEstimation) {
        return;
    }
    let (sw, now, written) = (k.sw, jiffies(k.sched.now()), k.bdis[bdi].written);
    k.old_wb
        .v3_bdi(bdi)
        .update(sw, now, jiffies(work_start), written, 0, 0);
}

/// The flusher's slice of bdi `bdi` under v3: patch 35's size, or 2.6.37's 4 MiB.
pub fn v3_writeback_chunk(k: &crate::mm::Kernel, bdi: usize) -> u64 {
    if !v3_has(k, Switch::IolessChunkByBandwidth) {
        return crate::fs::fs_writeback::MAX_WRITEBACK_PAGES;
    }
    let bw = k
        .old_wb
        .v3_bdis
        .get(bdi)
        .map_or(V3_INIT_BW, |b| b.write_bandwidth);
    writeback_chunk_size_v3(bw)
}

impl OldWriteback {
    /// Bdi `bdi`'s v3 state.
    pub fn v3_bdi(&mut self, bdi: usize) -> &mut BdiV3 {
        if self.v3_bdis.len() <= bdi {
            self.v3_bdis.resize(bdi + 1, BdiV3::default());
        }
        &mut self.v3_bdis[bdi]
    }
}

/// What one iteration decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum V3Step {
    /// Leave the loop without sleeping.
    Break,
    /// Sleep this many jiffies, then loop if `again`.
    Sleep { pause: u64, again: bool },
}

/// The locals of one call that live across iterations.
#[derive(Clone, Copy, Debug)]
struct V3Call {
    /// The file whose page was dirtied (the mapping's host, for patch 33's trace).
    ino: usize,
    start: u64,
    pages_dirtied: u64,
    /// The last pause in jiffies: 0 for none, 1 after think time.
    pause: u64,
    pause_max: u64,
    bdi_prev_dirty: u64,
    dirty_exceeded: bool,
    /// The last iteration's `nr_dirty`, `nr_reclaimable` and background limit.
    nr_dirty: u64,
    nr_reclaimable: u64,
    bg: u64,
}

/// The throttle-hook allowance of v3 for the current task (patch 05) after it wrote `nr`
/// pages: `Some(pages)` when it must call [`balance_dirty_pages_v3`].
fn ratelimit_v3(
    k: &mut crate::mm::Kernel,
    bdi: usize,
    task: &mut DirtyTask,
    nr: u64,
) -> Option<u64> {
    let exceeded = k.bdis[bdi].bw.dirty_exceeded;
    if !k.sw.on(Switch::IolessPerTaskRatelimit) {
        // Patch 03 alone: 2.6.37's per-CPU count, passed on as it is.
        let cpu = k.sched.task_cpu(k.sched.current()).unwrap_or(0) as usize;
        return k.old_wb.ratelimit_count(cpu, exceeded, nr);
    }
    let t = &mut task.v3;
    t.nr_dirtied += nr;
    if t.nr_dirtied_pause == 0 {
        t.nr_dirtied_pause = bdi_ratelimit_pages(k, bdi);
    }
    let t = &mut task.v3;
    if t.nr_dirtied >= t.nr_dirtied_pause || exceeded {
        return Some(std::mem::take(&mut t.nr_dirtied));
    }
    None
}

/// Bdi `bdi`'s limit ([`bdi_dirty_limit_v3`]) on its share now, with `dirty` pages dirty
/// or under writeback machine-wide.
fn bdi_thresh_v3(k: &mut crate::mm::Kernel, bdi: usize, thresh: u64, dirty: u64) -> u64 {
    let (num, den) = k.old_wb.bdi_fraction(bdi);
    let stat_error = bdi_stat_error(k.sched.cpus() as u64);
    bdi_dirty_limit_v3(k.sw, thresh, num, den, dirty, stat_error)
}

/// `ratelimit_pages(bdi)` on the machine's counters now.
fn bdi_ratelimit_pages(k: &mut crate::mm::Kernel, bdi: usize) -> u64 {
    use crate::mm::vmstat::ZoneStat as S;
    let (bg, thresh) = dirty_limits(k);
    let dirty =
        k.global_stat(S::nr_dirty) + k.global_stat(S::nr_unstable) + k.global_stat(S::nr_writeback);
    let bdi_thresh = bdi_thresh_v3(k, bdi, thresh, dirty);
    let b = &k.bdis[bdi];
    ratelimit_pages_v3(bg, thresh, dirty, bdi_thresh, b.reclaimable + b.writeback)
}

/// `balance_dirty_pages_ratelimited_nr` of 2.6.37 with the IO-less series v3, after `nr`
/// pages of file `ino` were dirtied.
pub async fn balance_dirty_pages_ratelimited_v3(
    w: &crate::mm::World,
    ino: usize,
    task: &mut DirtyTask,
    nr: u64,
) {
    let bdi = w.borrow().inodes[ino].bdi;
    let pages = ratelimit_v3(&mut w.borrow_mut(), bdi, task, nr);
    if let Some(pages) = pages {
        balance_dirty_pages_v3(w, ino, task, pages).await;
    }
}

/// The fields of v3's `balance_dirty_pages` trace point (patch 32): pages, pages per second
/// and jiffies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct V3Trace {
    pub bdi_dirty: u64,
    pub avg_dirty: u64,
    pub bdi_limit: u64,
    pub task_limit: u64,
    pub dirtied: u64,
    pub bdi_bw: u64,
    pub base_bw: u64,
    pub task_bw: u64,
    pub period: u64,
    /// Jiffies since `paused_when` (0 if never paused).
    pub think: i64,
    /// The pause; 0 or below on the think-time path.
    pub pause: i64,
}

/// A throttled iteration's figures: kept for graphs and traced.
fn decided(k: &mut crate::mm::Kernel, bdi: usize, t: &V3Trace) {
    k.bdis[bdi].throttle_view = crate::mm::backing_dev::ThrottleView {
        bdi_thresh: t.bdi_limit,
        target: t.task_limit,
        task_rate: t.task_bw,
    };
    crate::mm::trace::balance_dirty_pages_v3(k, bdi, t);
}

/// One iteration of v3's loop (the series' order: freerun test, limits, quit test, flusher
/// kick, bandwidth update, then the pause).
fn iterate(k: &mut crate::mm::Kernel, bdi: usize, task: &mut DirtyTask, c: &mut V3Call) -> V3Step {
    use crate::mm::vmstat::ZoneStat as S;
    let sw = k.sw;
    let now = jiffies(k.sched.now());
    let nr_reclaimable = k.global_stat(S::nr_dirty) + k.global_stat(S::nr_unstable);
    let nr_dirty = nr_reclaimable + k.global_stat(S::nr_writeback);
    let (bg, thresh) = dirty_limits(k);
    let poll_thresh = task.v3.nr_dirtied_pause;
    crate::mm::trace::balance_dirty_state(k, bdi, c.ino, bg, thresh, poll_thresh);
    (c.nr_dirty, c.nr_reclaimable, c.bg) = (nr_dirty, nr_reclaimable, bg);
    if nr_dirty <= (bg + thresh) / 2 {
        return V3Step::Break;
    }
    let mut bdi_thresh = bdi_thresh_v3(k, bdi, thresh, nr_dirty);
    let (tn, td) = k.old_wb.dirties.fraction(&mut task.dirties);
    let task_thresh = task_dirty_limit_v3(bdi_thresh, tn, td);
    if !sw.on(Switch::IolessTaskThreshSplit) {
        // Before patch 13 the task's limit stood for the bdi's everywhere.
        bdi_thresh = task_thresh;
    }
    let b = &k.bdis[bdi];
    let bdi_dirty = b.reclaimable + b.writeback;
    let (written, running) = (b.written, b.writeback_running);
    if sw.on(Switch::IolessQuitOnBdiDrop) {
        let bw = k.old_wb.v3_bdi(bdi).write_bandwidth;
        if nr_dirty <= thresh && c.bdi_prev_dirty.saturating_sub(bdi_dirty) > bw / 8 {
            return V3Step::Break;
        }
        c.bdi_prev_dirty = bdi_dirty;
    }
    if sw.on(Switch::IolessEarlyBackgroundWriteback) && !running {
        crate::mm::backing_dev::bdi_start_background_writeback(k, bdi);
    }
    if sw.on(Switch::IolessBandwidthEstimation) {
        k.old_wb
            .v3_bdi(bdi)
            .update(sw, now, c.start, written, bdi_dirty, bdi_thresh);
    }
    let st = *k.old_wb.v3_bdi(bdi);
    let mut avg_dirty = bdi_dirty;
    if sw.on(Switch::IolessSmoothedBdiDirty)
        && !(st.avg_dirty < bdi_dirty || st.avg_dirty > task_thresh)
    {
        avg_dirty = st.avg_dirty;
    }
    c.pause_max = v3_pause_max_j(sw, bdi_thresh);
    let think_time = sw.on(Switch::IolessThinkTime);
    let mut t = V3Trace {
        bdi_dirty,
        avg_dirty,
        bdi_limit: bdi_thresh,
        task_limit: task_thresh,
        dirtied: c.pages_dirtied,
        bdi_bw: st.write_bandwidth,
        base_bw: st.throttle_bandwidth,
        task_bw: 0,
        period: 0,
        think: task
            .v3
            .paused_when
            .map_or(0, |when| now as i64 - when as i64),
        pause: 0,
    };
    let hard = avg_dirty >= task_thresh || (think_time && nr_dirty > thresh);
    let pause = if hard {
        c.pause_max
    } else {
        let base = if sw.on(Switch::IolessBaseThrottleBandwidth) {
            st.throttle_bandwidth
        } else {
            st.write_bandwidth
        };
        t.task_bw = if sw.on(Switch::IolessTaskThreshSplit) {
            let bw = u128::from(base) * u128::from(bdi_thresh - avg_dirty)
                / u128::from(bdi_thresh / BDI_SOFT_DIRTY_LIMIT + 1);
            bw * u128::from(task_thresh - avg_dirty)
                / u128::from(bdi_thresh / TASK_SOFT_DIRTY_LIMIT + 1)
        } else {
            u128::from(base) * u128::from(task_thresh - avg_dirty)
                / u128::from(task_thresh / TASK_SOFT_DIRTY_LIMIT + 1)
        } as u64;
        let raw = HZ * c.pages_dirtied / (t.task_bw + 1);
        if !think_time {
            raw.clamp(1, c.pause_max)
        } else {
            t.period = raw + 1;
            match task.v3.paused_when.map(|when| when + t.period) {
                Some(due) if due > now => (due - now).clamp(1, c.pause_max),
                Some(due) if now - due < 10 * HZ => {
                    // The task thought for its period: no sleep; up to 100 ms late it
                    // carries the debt.
                    let late = now - due;
                    t.pause = -(late as i64);
                    decided(k, bdi, &t);
                    task.v3.paused_when = Some(if late <= HZ / 10 { due } else { now });
                    c.pause = 1;
                    return V3Step::Break;
                }
                // More than 10 s late, or never paused: the kernel's unsigned pause is huge.
                _ => c.pause_max,
            }
        }
    };
    c.pause = pause;
    t.pause = pause as i64;
    decided(k, bdi, &t);
    // Decided on the numbers read before the sleep.
    c.dirty_exceeded = bdi_dirty > bdi_thresh || nr_dirty > thresh;
    V3Step::Sleep {
        pause,
        again: c.dirty_exceeded,
    }
}

/// `balance_dirty_pages` of 2.6.37 with the IO-less series v3 for a page of file `ino`:
/// sleep as [`iterate`] says until the bdi and the machine were within their limits before
/// the sleep, then adapt the task's allowance and start background writeback if the
/// flusher is idle.
pub async fn balance_dirty_pages_v3(
    w: &crate::mm::World,
    ino: usize,
    task: &mut DirtyTask,
    pages_dirtied: u64,
) {
    let (start, bdi) = {
        let k = w.borrow();
        (k.sched.now(), k.inodes[ino].bdi)
    };
    let mut c = V3Call {
        ino,
        start: jiffies(start),
        pages_dirtied,
        pause: 0,
        pause_max: v3_max_pause_j(w.borrow().sw),
        bdi_prev_dirty: 0,
        dirty_exceeded: false,
        nr_dirty: 0,
        nr_reclaimable: 0,
        bg: 0,
    };
    let mut throttled = false;
    loop {
        let step = iterate(&mut w.borrow_mut(), bdi, task, &mut c);
        let V3Step::Sleep { pause, again } = step else {
            break;
        };
        throttled = true;
        let pause_ns = pause * JIFFY;
        let q = {
            let mut k = w.borrow_mut();
            k.throttle.pauses.record(pause_ns);
            if k.sw.on(Switch::IolessThinkTime) {
                task.v3.paused_when = Some(jiffies(k.sched.now()));
            }
            k.wq.timer
        };
        let killed = crate::engine::sleep_killable(w, q, pause_ns).await;
        if let Some(when) = task.v3.paused_when.as_mut() {
            // The ideal wake time, however long the sleep took.
            *when += pause;
        }
        if killed || !again {
            break;
        }
        w.borrow_mut().bdis[bdi].bw.dirty_exceeded = true;
    }
    let mut k = w.borrow_mut();
    let k = &mut *k;
    if throttled {
        let end = k.sched.now();
        k.throttle.calls.record(end - start);
    }
    if !c.dirty_exceeded {
        k.bdis[bdi].bw.dirty_exceeded = false;
    }
    if k.sw.on(Switch::IolessPerTaskRatelimit) {
        let min_pause = v3_min_pause_j(k.sw, k.old_wb.v3_bdi(bdi), c.pause_max);
        let t = &mut task.v3;
        if c.pause == 0 && c.nr_dirty < c.bg {
            t.nr_dirtied_pause = bdi_ratelimit_pages(k, bdi);
        } else if c.pause <= min_pause {
            t.nr_dirtied_pause += t.nr_dirtied_pause / 32 + 1;
        } else if c.pause >= c.pause_max {
            t.nr_dirtied_pause -= (t.nr_dirtied_pause + 2) >> 2;
        }
    }
    if k.bdis[bdi].writeback_running {
        return;
    }
    let start_bg = if k.vm.laptop_mode {
        c.dirty_exceeded
    } else {
        c.nr_reclaimable > c.bg
    };
    if start_bg {
        crate::mm::backing_dev::bdi_start_background_writeback(k, bdi);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Switches {
        crate::presets::resolve("ioless-v3", &[]).unwrap().switches
    }

    /// A rule of the series applies under the IO-less v3 kernel with its switch on, and
    /// never under 2.6.37-rc5 or 3.9, whatever their switches say: the flusher's slice, say.
    #[test]
    fn v3_rules_apply_only_under_ioless_v3_with_their_switch() {
        let s = Switch::IolessChunkByBandwidth;
        let has = |preset: &str, on: bool| {
            let w = crate::sim::boot_for_test(128, 0, preset);
            let mut k = w.borrow_mut();
            k.sw.set(s, on);
            k.old_wb.v3_bdi(0).write_bandwidth = 1 << 20;
            (v3_has(&k, s), v3_writeback_chunk(&k, 0))
        };
        let fixed = crate::fs::fs_writeback::MAX_WRITEBACK_PAGES;
        assert_eq!(has("ioless-v3", true), (true, 1 << 20));
        assert_eq!(has("ioless-v3", false), (false, fixed));
        assert_eq!(has("2.6.37-rc5", true), (false, fixed));
        assert_eq!(has("3.9", true), (false, fixed));
    }

    fn without(s: Switch) -> Switches {
        let mut sw = all();
        sw.set(s, false);
        sw
    }

    #[test]
    fn the_bdi_limit_keeps_its_margins_and_gives_a_light_bdi_half_the_headroom() {
        let sw = all();
        // thresh 100 000, stat error 48: x = 99 952, less 1/128 (780) = 99 172.
        let x = 99_952 - 99_952 / 128;
        // A bdi with all the completions gets all of it.
        assert_eq!(bdi_dirty_limit_v3(sw, 100_000, 1, 1, 50_000, 48), x);
        // One with none gets half of the headroom left: (x - 50 000) / 2; one whose share
        // is more keeps its share.
        assert_eq!(
            bdi_dirty_limit_v3(sw, 100_000, 0, 1, 50_000, 48),
            (x - 50_000) / 2
        );
        assert_eq!(bdi_dirty_limit_v3(sw, 100_000, 1, 4, 50_000, 48), x / 4);
        // Over the limit there is no headroom to share.
        assert_eq!(bdi_dirty_limit_v3(sw, 100_000, 0, 1, 120_000, 48), 0);
        // The 1/128 margin is at most 32 MiB.
        assert_eq!(
            bdi_dirty_limit_v3(sw, 4_000_000, 1, 1, 0, 0),
            4_000_000 - 8192
        );
        // A limit below the stat error is 0.
        assert_eq!(bdi_dirty_limit_v3(sw, 40, 1, 1, 0, 48), 0);
        // Without patches 01 and 02: 2.6.37's plain share.
        let mut plain = without(Switch::IolessBdiLimitGate);
        plain.set(Switch::IolessBdiStatMargin, false);
        assert_eq!(bdi_dirty_limit_v3(plain, 100_000, 1, 4, 50_000, 48), 25_000);
        assert_eq!(bdi_dirty_limit_v3(plain, 100_000, 0, 1, 50_000, 48), 0);
    }

    #[test]
    fn the_background_limit_is_at_most_three_quarters_of_the_dirty_limit() {
        assert_eq!(bg_gap_v3(50_000, 100_000), 50_000);
        assert_eq!(bg_gap_v3(90_000, 100_000), 75_000);
        assert_eq!(bg_gap_v3(75_000, 100_000), 75_000);
        // At or above the dirty limit: 3/4 of it, where 2.6.37 halves it.
        assert_eq!(bg_gap_v3(100_000, 100_000), 75_000);
        let s = DirtySysctls {
            dirty_background_ratio: 30,
            dirty_ratio: 20,
            ..DirtySysctls::default()
        };
        assert_eq!(global_dirty_limits(100_000, &s, false), (10_000, 20_000));
        assert_eq!(
            global_dirty_limits_by(100_000, &s, false, bg_gap_v3),
            (15_000, 20_000)
        );
        assert_eq!(bg_gap_v3(10, 3), 3, "3 - 6/8");
    }

    #[test]
    fn a_task_limit_is_at_most_a_sixteenth_below_the_bdi_limit() {
        assert_eq!(task_dirty_limit_v3(16_000, 1, 1), 15_000);
        assert_eq!(task_dirty_limit_v3(16_000, 1, 2), 15_500);
        assert_eq!(task_dirty_limit_v3(16_000, 0, 1), 16_000);
        assert_eq!(task_dirty_limit_v3(0, 1, 1), 0);
    }

    #[test]
    fn the_allowance_is_one_more_than_the_square_root_of_the_headroom() {
        // Below the midpoint of bg 50 000 and thresh 100 000: the machine's headroom.
        assert_eq!(ratelimit_pages_v3(50_000, 100_000, 50_000, 0, 0), 224);
        assert_eq!(ratelimit_pages_v3(50_000, 100_000, 75_000, 0, 0), 159);
        // Above it: the bdi's.
        assert_eq!(
            ratelimit_pages_v3(50_000, 100_000, 80_000, 40_000, 39_900),
            11
        );
        assert_eq!(
            ratelimit_pages_v3(50_000, 100_000, 80_000, 40_000, 40_000),
            1
        );
    }

    #[test]
    fn the_longest_pause_follows_the_bdi_limit_up_to_max_pause() {
        let sw = all();
        // HZ 250: 1 jiffy per 4096 pages (16 MiB, 4 ms), plus 2.
        assert_eq!(v3_pause_max_j(sw, 0), 2);
        assert_eq!(v3_pause_max_j(sw, 40_960), 12);
        assert_eq!(v3_pause_max_j(sw, 1 << 30), 50, "200 ms");
        assert_eq!(
            v3_pause_max_j(without(Switch::IolessMaxPauseByMemory), 0),
            50
        );
        let mut p03 = without(Switch::IolessMaxPauseByMemory);
        p03.set(Switch::IolessMaxPause200ms, false);
        assert_eq!(v3_pause_max_j(p03, 0), 25, "patch 03's 100 ms");
    }

    #[test]
    fn the_minimum_pause_grows_as_the_base_rate_halves() {
        let sw = all();
        let mut b = BdiV3::default();
        assert_eq!(v3_min_pause_j(sw, &b, 50), 1);
        // Three halvings: 3 x 2500 / 1024 = 7 jiffies.
        b.throttle_bandwidth = b.write_bandwidth / 8;
        assert_eq!(v3_min_pause_j(sw, &b, 50), 7);
        assert_eq!(v3_min_pause_j(sw, &b, 10), 5, "at most half the longest");
        assert_eq!(
            v3_min_pause_j(without(Switch::IolessMinPauseConcurrent), &b, 50),
            1
        );
    }

    #[test]
    fn the_flusher_slice_is_a_second_of_bandwidth_rounded_down() {
        assert_eq!(writeback_chunk_size_v3(25_600), 16_384);
        assert_eq!(writeback_chunk_size_v3(1_024), 1_024);
        assert_eq!(writeback_chunk_size_v3(500), 1_024);
    }

    #[test]
    fn the_bandwidth_estimate_is_a_moving_average_updated_at_most_every_100_ms() {
        let sw = all();
        let mut b = BdiV3::default();
        // The first call only stamps.
        b.update(sw, 1000, 1000, 7, 0, 0);
        assert_eq!(
            (b.write_bandwidth, b.bw_time_stamp),
            (V3_INIT_BW, Some(1000))
        );
        // Within 100 ms: nothing, not even a stamp.
        b.update(sw, 1025, 1000, 500, 0, 0);
        assert_eq!(
            (b.write_bandwidth, b.bw_time_stamp),
            (V3_INIT_BW, Some(1000))
        );
        // 200 ms (50 jiffies) with nothing written: weight 50/256 on 0.
        b.update(sw, 1050, 1000, 7, 0, 0);
        assert_eq!(b.write_bandwidth, V3_INIT_BW * 206 / 256);
        // 200 ms at 12 800 pages/s: 2 560 pages.
        let before = b.write_bandwidth;
        b.update(sw, 1100, 1000, 7 + 2_560, 0, 0);
        assert_eq!(b.write_bandwidth, (2_560 * HZ + before * 206) >> 8);
        // Half a second after the stamp, from a call that began since: an update (a quiet
        // spell is longer than half a second and began before the call).
        let mut fresh = BdiV3 {
            bw_time_stamp: Some(1000),
            ..BdiV3::default()
        };
        fresh.update(sw, 1125, 1100, 0, 0, 0);
        assert_eq!(fresh.write_bandwidth, V3_INIT_BW * (256 - 125) / 256);
        // 800 ms from a call that began at the stamp (the flusher's long pass): the sample
        // weighs at most a half, at its rate (5 120 pages in 200 jiffies: 6 400 pages/s).
        let mut long = BdiV3 {
            bw_time_stamp: Some(1000),
            ..BdiV3::default()
        };
        long.update(sw, 1200, 1000, 5_120, 0, 0);
        assert_eq!(long.write_bandwidth, (6_400 * 128 + V3_INIT_BW * 128) >> 8);
        // After a quiet second, begun since the stamp: a new stamp only.
        let before = b.write_bandwidth;
        b.update(sw, 1400, 1390, 7 + 2_560, 0, 0);
        assert_eq!((b.write_bandwidth, b.bw_time_stamp), (before, Some(1400)));
    }

    #[test]
    fn the_base_rate_falls_near_the_limit_and_rises_far_below_it() {
        let sw = all();
        let updated = |avg: u64, base: u64, bdi_dirty: u64, thresh: u64| {
            let mut b = BdiV3 {
                throttle_bandwidth: base,
                avg_dirty: avg,
                old_dirty: avg,
                bw_time_stamp: Some(0),
                written_stamp: 0,
                ..BdiV3::default()
            };
            // 200 ms at exactly the estimate: write_bandwidth stays.
            b.update(sw, 50, 0, V3_INIT_BW / 5, bdi_dirty, thresh);
            b
        };
        // thresh 16 000: gap 1 001. In the top gap the base falls by 1/8 to 1/64.
        let b = updated(15_990, 25_600, 15_990, 16_000);
        assert_eq!(b.throttle_bandwidth, 25_600 - (25_600 >> 3));
        let b = updated(15_100, 25_600, 15_100, 16_000);
        assert_eq!(b.throttle_bandwidth, 25_600 - (25_600 >> 6));
        // Far below, under half the write bandwidth: up by 1/16 + 1.
        let b = updated(10_000, 1_000, 10_000, 16_000);
        assert_eq!(b.throttle_bandwidth, 1_000 + 62 + 1);
        // Between: no change.
        let b = updated(13_800, 25_600, 13_800, 16_000);
        assert_eq!(b.throttle_bandwidth, 25_600);
        // At the limit itself: the top gap's largest cut; just inside the gap, its smallest.
        let b = updated(16_000, 25_600, 16_000, 16_000);
        assert_eq!(b.throttle_bandwidth, 25_600 - (25_600 >> 3));
        let b = updated(15_000, 25_600, 15_000, 16_000);
        assert_eq!(b.throttle_bandwidth, 25_600 - (25_600 >> 6));
        // A whole gap below the limit is outside the top gap.
        let b = updated(14_999, 25_600, 14_999, 16_000);
        assert_eq!(b.throttle_bandwidth, 25_600);
        // The second gap (above thresh - 2 gaps + gap/4 = 14 248) cuts only a base above
        // 1.5 x the write bandwidth (38 400), by 1/16 to 1/32.
        let b = updated(14_500, 40_000, 14_500, 16_000);
        assert_eq!(b.throttle_bandwidth, 40_000 - (40_000 >> 4));
        let b = updated(14_249, 40_000, 14_249, 16_000);
        assert_eq!(b.throttle_bandwidth, 40_000 - (40_000 >> 5));
        let b = updated(14_248, 40_000, 14_248, 16_000);
        assert_eq!(b.throttle_bandwidth, 40_000);
        let b = updated(14_500, 38_400, 14_500, 16_000);
        assert_eq!(b.throttle_bandwidth, 38_400);
        // The rise needs both: at most thresh - 2.5 gaps (13 498), and under half the write
        // bandwidth (12 800).
        let b = updated(13_498, 12_799, 13_498, 16_000);
        assert_eq!(b.throttle_bandwidth, 12_799 + (12_799 >> 4) + 1);
        let b = updated(13_499, 12_799, 13_499, 16_000);
        assert_eq!(b.throttle_bandwidth, 12_799);
        let b = updated(10_000, 12_800, 10_000, 16_000);
        assert_eq!(b.throttle_bandwidth, 12_800);
        // The flusher's call (0, 0) on a bdi never throttled wraps into a rise.
        let b = updated(0, 1_000, 0, 0);
        assert_eq!(b.throttle_bandwidth, 1_063);
    }

    #[test]
    fn the_smoothed_dirty_count_holds_between_its_last_samples() {
        let mut b = BdiV3 {
            avg_dirty: 1_000,
            old_dirty: 1_200,
            ..BdiV3::default()
        };
        b.update_dirty_smooth(1_100, 10_000);
        assert_eq!((b.avg_dirty, b.old_dirty), (1_000, 1_100), "held");
        b.update_dirty_smooth(2_600, 10_000);
        assert_eq!(b.avg_dirty, (1_000 * 15 + 2_600) / 16);
        // At the limit the average still averages.
        let mut at = BdiV3 {
            avg_dirty: 900,
            old_dirty: 900,
            ..BdiV3::default()
        };
        at.update_dirty_smooth(500, 900);
        assert_eq!(at.avg_dirty, (900 * 15 + 500) / 16);
        // A limit that fell below the average resets it.
        b.update_dirty_smooth(500, 900);
        assert_eq!(b.avg_dirty, 500);
        // The flusher's call changes nothing.
        b.update_dirty_smooth(9_000, 0);
        assert_eq!((b.avg_dirty, b.old_dirty), (500, 500));
    }
}
