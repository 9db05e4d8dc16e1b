//! `balance_dirty_pages` of 2.6.36 – 3.0 (`kernel-writeback.md` §4), the throttle of a
//! 2.6.37 kernel: a dirtier over its bdi's limit writes a chunk of the bdi's dirty inodes
//! itself, in its own context, and sleeps 1, 2, 4 … 100 ms between tries until the dirty
//! pages are back under the limits. Limits are shared out by event-clocked proportions:
//! a bdi's by its recent writeback completions, a task's by its recent dirtyings
//! ([`super::proportions`]).

use super::proportions::{calc_period_shift, PropGlobal, PropLocal};
use super::*;

/// 2.6.37's dirty-throttling state of the machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OldWriteback {
    /// `vm_completions`: page writeback completions, shared by bdi.
    pub completions: PropGlobal,
    /// Each bdi's completions (`bdi->completions`), by bdi index.
    pub bdi_completions: Vec<PropLocal>,
    /// `vm_dirties`: page dirtyings, shared by task (the task's count is its
    /// [`DirtyTask::dirties`]).
    pub dirties: PropGlobal,
    /// `bdp_ratelimits`: pages written on each CPU since its last throttle check.
    pub cpu_ratelimits: Vec<u64>,
    /// `ratelimit_pages`.
    pub ratelimit_pages: u64,
    /// Each bdi's state under the IO-less series v3, by bdi index.
    pub v3_bdis: Vec<super::BdiV3>,
}

impl OldWriteback {
    /// `page_writeback_init`: both proportions get the period of `dirty_total` pages (the
    /// dirty limit at boot), and the rate limit follows the machine's pages and CPUs.
    pub fn new(dirty_total: u64, vm_total_pages: u64, cpus: u32) -> Self {
        let shift = calc_period_shift(dirty_total);
        OldWriteback {
            completions: PropGlobal::new(shift),
            bdi_completions: Vec::new(),
            dirties: PropGlobal::new(shift),
            cpu_ratelimits: vec![0; cpus.max(1) as usize],
            ratelimit_pages: ratelimit_pages_old(vm_total_pages, cpus),
            v3_bdis: Vec::new(),
        }
    }

    /// Patch 11 of the IO-less series v3 ("reduce per-bdi dirty threshold ramp up time"):
    /// both proportions get a period of `ilog2(dirty_total − 1) − 1`, 8 times shorter.
    pub fn fast_ramp_up(&mut self, dirty_total: u64) {
        let shift = calc_period_shift(dirty_total).saturating_sub(3).max(1);
        self.completions = PropGlobal::new(shift);
        self.dirties = PropGlobal::new(shift);
    }

    /// `bdi_writeout_inc`: one page writeback completed on `bdi`.
    pub fn writeout_inc(&mut self, bdi: usize) {
        if self.bdi_completions.len() <= bdi {
            self.bdi_completions.resize(bdi + 1, PropLocal::default());
        }
        self.completions.inc(&mut self.bdi_completions[bdi]);
    }

    /// `bdi_writeout_fraction`: `(numerator, denominator)` of `bdi`'s share.
    pub fn bdi_fraction(&mut self, bdi: usize) -> (u64, u64) {
        if self.bdi_completions.len() <= bdi {
            self.bdi_completions.resize(bdi + 1, PropLocal::default());
        }
        self.completions.fraction(&mut self.bdi_completions[bdi])
    }

    /// `task_dirty_inc`: `task` dirtied a page.
    pub fn task_dirty_inc(&mut self, task: &mut DirtyTask) {
        self.dirties.inc(&mut task.dirties);
    }

    /// `balance_dirty_pages_ratelimited_nr(mapping, nr)` on `cpu`: `Some(write_chunk)` when
    /// the CPU's count reaches the rate limit (8 pages while the bdi is over its limit);
    /// whoever crosses it is throttled.
    pub fn ratelimit(&mut self, cpu: usize, bdi_dirty_exceeded: bool, nr: u64) -> Option<u64> {
        self.ratelimit_count(cpu, bdi_dirty_exceeded, nr)
            .map(|dirtied| sync_writeback_pages(dirtied, self.ratelimit_pages))
    }

    /// [`Self::ratelimit`] as patch 03 of the IO-less series v3 left it: the CPU's count
    /// itself when it reaches the limit.
    pub fn ratelimit_count(
        &mut self,
        cpu: usize,
        bdi_dirty_exceeded: bool,
        nr: u64,
    ) -> Option<u64> {
        let limit = if bdi_dirty_exceeded {
            8
        } else {
            self.ratelimit_pages
        };
        let n = self.cpu_ratelimits.len();
        let p = &mut self.cpu_ratelimits[cpu % n];
        *p += nr;
        (*p >= limit).then(|| std::mem::take(p))
    }
}

/// 2.6.37's `writeback_set_ratelimit`: `vm_total_pages / (cpus × 32)`, at least 16 pages
/// and at most 4 MiB.
pub fn ratelimit_pages_old(vm_total_pages: u64, cpus: u32) -> u64 {
    (vm_total_pages / (u64::from(cpus.max(1)) * 32)).clamp(16, 4096 * 1024 / PAGE_SIZE)
}

/// `sync_writeback_pages`: a throttled task's chunk, half as much again as it dirtied (at
/// least the rate limit).
pub fn sync_writeback_pages(dirtied: u64, ratelimit_pages: u64) -> u64 {
    let d = dirtied.max(ratelimit_pages);
    d + d / 2
}

/// `task_dirty_limit`: the bdi's limit less up to an eighth of it, by the task's share of
/// recent dirtyings, and never below half (§2.5).
pub fn task_dirty_limit(bdi_dirty: u64, numerator: u64, denominator: u64) -> u64 {
    let inv = u128::from(bdi_dirty >> 3) * u128::from(numerator) / u128::from(denominator.max(1));
    bdi_dirty.saturating_sub(inv as u64).max(bdi_dirty / 2)
}

/// What one pass of the loop reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OldBdpInput {
    /// `NR_FILE_DIRTY + NR_UNSTABLE_NFS`.
    pub nr_reclaimable: u64,
    /// `NR_WRITEBACK`.
    pub nr_writeback: u64,
    /// `background_thresh`.
    pub bg_thresh: u64,
    /// `dirty_thresh`.
    pub thresh: u64,
    /// The bdi's limit for this task ([`task_dirty_limit`] of `bdi_dirty_limit`).
    pub bdi_thresh: u64,
    /// `BDI_RECLAIMABLE`.
    pub bdi_reclaimable: u64,
    /// `BDI_WRITEBACK`.
    pub bdi_writeback: u64,
}

/// What the loop does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OldStep {
    /// Leave the loop.
    Done,
    /// Over the limits, and the bdi has more dirty pages than its limit: write a chunk
    /// of its inodes (`writeback_inodes_wb`), then [`OldBalance::wrote`].
    Writeback,
    /// Over the limits with the bdi's dirty pages already under writeback: sleep.
    Pause,
}

/// One call of `balance_dirty_pages` (2.6.36 – 3.0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OldBalance {
    /// `write_chunk`: the pages this call should write.
    pub write_chunk: u64,
    /// `pages_written` so far.
    pub pages_written: u64,
    /// The next sleep, in jiffies: 1, then doubled up to `HZ/10`.
    pause_j: u64,
    /// `dirty_exceeded` as last computed.
    pub dirty_exceeded: bool,
    /// The last pass's `nr_reclaimable` and `background_thresh` (for the background start).
    last: Option<(u64, u64)>,
}

impl OldBalance {
    /// A call that should write `write_chunk` pages.
    pub fn new(write_chunk: u64) -> Self {
        OldBalance {
            write_chunk,
            pages_written: 0,
            pause_j: 1,
            dirty_exceeded: false,
            last: None,
        }
    }

    /// One pass of the loop on fresh counters (§4.2).
    pub fn step(&mut self, i: &OldBdpInput) -> OldStep {
        self.last = Some((i.nr_reclaimable, i.bg_thresh));
        let dirty = i.nr_reclaimable + i.nr_writeback;
        // Below the midpoint of the background and dirty limits background writeback can
        // catch up: no throttling (`dirty_exceeded` keeps its last value).
        if dirty <= (i.bg_thresh + i.thresh) / 2 {
            return OldStep::Done;
        }
        self.dirty_exceeded =
            i.bdi_reclaimable + i.bdi_writeback > i.bdi_thresh || dirty > i.thresh;
        if !self.dirty_exceeded {
            return OldStep::Done;
        }
        if i.bdi_reclaimable > i.bdi_thresh {
            OldStep::Writeback
        } else {
            OldStep::Pause
        }
    }

    /// After [`OldStep::Writeback`] wrote `n` pages: whether this call has done its share.
    pub fn wrote(&mut self, n: u64) -> bool {
        self.pages_written += n;
        self.pages_written >= self.write_chunk
    }

    /// The sleep before the next pass (`io_schedule_timeout(pause)`); each is twice the
    /// last, up to 100 ms.
    pub fn next_pause(&mut self) -> Nanos {
        let p = self.pause_j;
        self.pause_j = (2 * p).min(HZ / 10);
        p * JIFFY
    }

    /// After the loop: whether to start background writeback (the flusher is not running;
    /// in laptop mode once this call wrote, otherwise above the background threshold).
    pub fn start_background(&self, writeback_in_progress: bool, laptop_mode: bool) -> bool {
        if writeback_in_progress {
            return false;
        }
        let (nr_reclaimable, bg_thresh) = self.last.unwrap_or((0, u64::MAX));
        if laptop_mode {
            self.pages_written > 0
        } else {
            nr_reclaimable > bg_thresh
        }
    }
}

/// The loop's inputs for `bdi` and `task`, now.
fn old_input(k: &mut crate::mm::Kernel, bdi: usize, task: &mut DirtyTask) -> OldBdpInput {
    use crate::mm::vmstat::ZoneStat as S;
    let (bg_thresh, thresh) = dirty_limits(k);
    let (num, den) = k.old_wb.bdi_fraction(bdi);
    let bdi_thresh = bdi_dirty_limit(thresh, num, den, 0, 100, 0);
    let (tn, td) = k.old_wb.dirties.fraction(&mut task.dirties);
    let task_thresh = task_dirty_limit(bdi_thresh, tn, td);
    k.bdis[bdi].throttle_view = crate::mm::backing_dev::ThrottleView {
        bdi_thresh,
        target: task_thresh,
        task_rate: 0,
    };
    let b = &k.bdis[bdi];
    OldBdpInput {
        nr_reclaimable: k.global_stat(S::nr_dirty) + k.global_stat(S::nr_unstable),
        nr_writeback: k.global_stat(S::nr_writeback),
        bg_thresh,
        thresh,
        bdi_thresh: task_thresh,
        bdi_reclaimable: b.reclaimable,
        bdi_writeback: b.writeback,
    }
}

/// `balance_dirty_pages_ratelimited_nr` of 2.6.37: called after a task wrote `nr` pages
/// (`generic_perform_write`: every page; btrfs: a batch).
pub async fn balance_dirty_pages_ratelimited_old(
    w: &crate::mm::World,
    bdi: usize,
    task: &mut DirtyTask,
    nr: u64,
) {
    let chunk = {
        let mut k = w.borrow_mut();
        let cpu = k.sched.task_cpu(k.sched.current()).unwrap_or(0) as usize;
        let exceeded = k.bdis[bdi].bw.dirty_exceeded;
        k.old_wb.ratelimit(cpu, exceeded, nr)
    };
    if let Some(write_chunk) = chunk {
        balance_dirty_pages_old(w, bdi, task, write_chunk).await;
    }
}

/// `balance_dirty_pages` of 2.6.36 – 3.0 (§4.2).
pub async fn balance_dirty_pages_old(
    w: &crate::mm::World,
    bdi: usize,
    task: &mut DirtyTask,
    write_chunk: u64,
) {
    let start = w.borrow().sched.now();
    let mut b = OldBalance::new(write_chunk);
    let mut throttled = false;
    loop {
        let step = {
            let mut k = w.borrow_mut();
            let input = old_input(&mut k, bdi, task);
            let step = b.step(&input);
            if step != OldStep::Done {
                k.bdis[bdi].bw.dirty_exceeded = true;
            }
            step
        };
        match step {
            OldStep::Done => break,
            OldStep::Writeback => {
                throttled = true;
                let n = crate::fs::fs_writeback::writeback_inodes_wb(w, bdi, write_chunk).await;
                w.borrow_mut().bdis[bdi].written_by_dirtiers += n;
                if b.wrote(n) {
                    break;
                }
            }
            OldStep::Pause => {}
        }
        throttled = true;
        let pause = b.next_pause();
        let q = w.borrow().wq.timer;
        w.borrow_mut().throttle.pauses.record(pause);
        if crate::engine::sleep_killable(w, q, pause).await {
            break;
        }
    }
    let mut k = w.borrow_mut();
    if throttled {
        let now = k.sched.now();
        k.throttle.calls.record(now - start);
    }
    if !b.dirty_exceeded {
        k.bdis[bdi].bw.dirty_exceeded = false;
    }
    let running = k.bdis[bdi].writeback_running;
    if b.start_background(running, k.vm.laptop_mode) {
        crate::mm::backing_dev::bdi_start_background_writeback(&mut k, bdi);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input() -> OldBdpInput {
        // 100 000 dirtyable pages at 10 % / 20 %: bg 10 000, thresh 20 000.
        OldBdpInput {
            nr_reclaimable: 0,
            nr_writeback: 0,
            bg_thresh: 10_000,
            thresh: 20_000,
            bdi_thresh: 12_000,
            bdi_reclaimable: 0,
            bdi_writeback: 0,
        }
    }

    #[test]
    fn the_rate_limit_and_chunk_follow_2_6_37() {
        // 4 GiB, 4 CPUs: 1 048 576 / 128 = 8192, capped at 4 MiB = 1024 pages.
        assert_eq!(ratelimit_pages_old(1 << 20, 4), 1024);
        // 256 MiB, 2 CPUs: 65 536 / 64 = 1024; 64 MiB: 256.
        assert_eq!(ratelimit_pages_old(1 << 16, 2), 1024);
        assert_eq!(ratelimit_pages_old(1 << 14, 2), 256);
        assert_eq!(ratelimit_pages_old(100, 4), 16);
        // The chunk is 1.5 times what was dirtied, at least 1.5 times the rate limit.
        assert_eq!(sync_writeback_pages(1024, 1024), 1536);
        assert_eq!(sync_writeback_pages(8, 1024), 1536);
        assert_eq!(sync_writeback_pages(2000, 1024), 3000);
    }

    #[test]
    fn whoever_crosses_the_cpu_count_is_throttled_and_dirty_exceeded_lowers_it_to_8() {
        let mut o = OldWriteback::new(20_000, 1 << 14, 2);
        assert_eq!(o.ratelimit_pages, 256);
        for _ in 0..255 {
            assert_eq!(o.ratelimit(0, false, 1), None);
        }
        assert_eq!(o.ratelimit(0, false, 1), Some(384));
        // Counts are per CPU.
        assert_eq!(o.ratelimit(1, false, 1), None);
        assert_eq!(o.cpu_ratelimits, vec![0, 1]);
        for _ in 0..7 {
            assert_eq!(o.ratelimit(0, true, 1), None);
        }
        assert_eq!(
            o.ratelimit(0, true, 1),
            Some(384),
            "at least 1.5 × ratelimit_pages"
        );
    }

    /// btrfs's `balance_dirty_pages_ratelimited_nr(mapping, 256)` after a 1 MiB batch: the
    /// count jumps by the batch, and the chunk to write is half as much again as the count.
    #[test]
    fn a_batch_counts_all_its_pages_at_once() {
        let mut o = OldWriteback::new(20_000, 1 << 14, 2);
        assert_eq!(o.ratelimit(0, false, 200), None);
        assert_eq!(o.cpu_ratelimits, vec![200, 0]);
        assert_eq!(o.ratelimit(0, false, 256), Some(684), "456 + 228");
        // Over the limit a batch of 16 is throttled at once: a chunk of 1.5 × 256.
        assert_eq!(o.ratelimit(1, true, 16), Some(384));
        assert_eq!(o.cpu_ratelimits, vec![0, 0]);
    }

    #[test]
    fn a_completion_on_a_device_never_seen_counts_for_it() {
        let mut o = OldWriteback::new(16, 1 << 14, 2);
        o.writeout_inc(2);
        assert_eq!(o.bdi_fraction(2), (1, 17));
        assert_eq!(o.bdi_completions.len(), 3);
    }

    #[test]
    fn device_shares_follow_completions_and_task_shares_follow_dirtyings() {
        // A dirty limit of 16 pages: half-periods of 16 events.
        let mut o = OldWriteback::new(16, 1 << 14, 2);
        assert_eq!(o.bdi_fraction(3), (0, 16), "a bdi never seen has no share");
        for _ in 0..12 {
            o.writeout_inc(1);
        }
        for _ in 0..4 {
            o.writeout_inc(0);
        }
        // One half-period of 16 events has passed: both counts are halved once.
        assert_eq!(o.bdi_fraction(1), (6, 16));
        assert_eq!(o.bdi_fraction(0), (2, 16));
        o.writeout_inc(0);
        assert_eq!(o.bdi_fraction(0), (3, 17));
        let (mut heavy, mut light) = (DirtyTask::default(), DirtyTask::default());
        for _ in 0..10 {
            o.task_dirty_inc(&mut heavy);
        }
        o.task_dirty_inc(&mut light);
        assert_eq!(o.dirties.fraction(&mut heavy.dirties), (10, 16 + 11));
        assert_eq!(o.dirties.fraction(&mut light.dirties), (1, 16 + 11));
        assert_eq!(
            o.bdi_fraction(1),
            (6, 17),
            "dirtyings are a clock of their own"
        );
    }

    #[test]
    fn a_heavy_dirtier_gets_up_to_an_eighth_less_never_below_half() {
        assert_eq!(task_dirty_limit(8000, 0, 100), 8000);
        assert_eq!(task_dirty_limit(8000, 100, 100), 7000);
        assert_eq!(task_dirty_limit(8000, 50, 100), 7500);
        assert_eq!(task_dirty_limit(10, 1, 1), 9);
    }

    #[test]
    fn below_the_midpoint_of_the_limits_nobody_is_throttled() {
        let mut b = OldBalance::new(1536);
        let i = OldBdpInput {
            nr_reclaimable: 14_000,
            nr_writeback: 1_000,
            bdi_reclaimable: 14_000,
            ..input()
        };
        assert_eq!(b.step(&i), OldStep::Done);
        assert!(!b.dirty_exceeded);
        let i = OldBdpInput {
            nr_reclaimable: 14_001,
            ..i
        };
        assert_eq!(b.step(&i), OldStep::Writeback, "bdi over its 12 000");
        assert!(b.dirty_exceeded);
    }

    #[test]
    fn over_the_limit_the_dirtier_writes_until_it_did_its_share() {
        let mut b = OldBalance::new(1536);
        let i = OldBdpInput {
            nr_reclaimable: 13_000,
            nr_writeback: 4_000,
            bdi_reclaimable: 13_000,
            bdi_writeback: 4_000,
            ..input()
        };
        assert_eq!(b.step(&i), OldStep::Writeback);
        assert!(!b.wrote(1000));
        assert_eq!(b.next_pause(), JIFFY);
        assert_eq!(b.step(&i), OldStep::Writeback);
        assert!(b.wrote(536), "1536 pages written: done");
    }

    #[test]
    fn with_the_bdis_pages_under_writeback_it_sleeps_1_2_4_up_to_100_ms() {
        let mut b = OldBalance::new(1536);
        let i = OldBdpInput {
            nr_reclaimable: 5_000,
            nr_writeback: 12_000,
            bdi_reclaimable: 5_000,
            bdi_writeback: 12_000,
            ..input()
        };
        assert_eq!(
            b.step(&i),
            OldStep::Pause,
            "over bdi_thresh, but mostly writeback"
        );
        let pauses: Vec<Nanos> = (0..7).map(|_| b.next_pause()).collect();
        let j = |n: u64| n * JIFFY;
        assert_eq!(pauses, vec![j(1), j(2), j(4), j(8), j(16), j(25), j(25)]);
        assert_eq!(HZ / 10 * JIFFY, 100 * crate::engine::MSEC);
    }

    #[test]
    fn under_the_global_limit_a_bdi_under_its_own_is_not_throttled() {
        let mut b = OldBalance::new(1536);
        let i = OldBdpInput {
            nr_reclaimable: 16_000,
            nr_writeback: 0,
            bdi_reclaimable: 11_000,
            ..input()
        };
        assert_eq!(b.step(&i), OldStep::Done);
        // Over the global limit it is, even with the bdi under its own.
        let i = OldBdpInput {
            nr_reclaimable: 20_001,
            ..i
        };
        assert_eq!(b.step(&i), OldStep::Pause);
    }

    #[test]
    fn exactly_at_a_limit_is_not_over_it() {
        let mut b = OldBalance::new(1536);
        // The device's pages exactly at its limit, the global count at the limit.
        let at = OldBdpInput {
            nr_reclaimable: 12_000,
            nr_writeback: 8_000,
            bdi_reclaimable: 8_000,
            bdi_writeback: 4_000,
            ..input()
        };
        assert_eq!(b.step(&at), OldStep::Done);
        assert!(!b.dirty_exceeded);
        // One page more on the device: over. Its dirty pages alone are not over its limit
        // until they pass it.
        let over = OldBdpInput {
            bdi_writeback: 4_001,
            ..at
        };
        assert_eq!(b.step(&over), OldStep::Pause);
        let full = OldBdpInput {
            bdi_reclaimable: 12_000,
            bdi_writeback: 1,
            ..at
        };
        assert_eq!(
            b.step(&full),
            OldStep::Pause,
            "dirty pages at the limit, not over"
        );
        let full = OldBdpInput {
            bdi_reclaimable: 12_001,
            ..full
        };
        assert_eq!(b.step(&full), OldStep::Writeback);
        // The global count one over the limit, the device under its own.
        let global = OldBdpInput {
            nr_reclaimable: 12_001,
            bdi_reclaimable: 1_000,
            bdi_writeback: 0,
            ..at
        };
        assert_eq!(b.step(&global), OldStep::Pause);
    }

    #[test]
    fn background_writeback_starts_after_the_loop_above_the_background_limit() {
        let mut b = OldBalance::new(1536);
        let i = OldBdpInput {
            nr_reclaimable: 10_001,
            ..input()
        };
        assert_eq!(b.step(&i), OldStep::Done);
        assert!(b.start_background(false, false));
        assert!(
            !b.start_background(true, false),
            "the flusher is already at it"
        );
        assert!(
            !b.start_background(false, true),
            "laptop mode: only once it wrote"
        );
        b.wrote(1);
        assert!(
            b.start_background(false, true),
            "laptop mode, after writing"
        );
        let i = OldBdpInput {
            nr_reclaimable: 10_000,
            ..input()
        };
        assert_eq!(b.step(&i), OldStep::Done);
        assert!(!b.start_background(false, false));
    }
}
