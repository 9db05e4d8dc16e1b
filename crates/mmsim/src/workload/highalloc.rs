//! `highalloc`: one pass of MMTests' stress-highalloc kernel module (`highalloc.stp`;
//! `mmtests.md` §6.3, `kernel-compaction.md` §9.2). It runs in the kernel: no address
//! space, only allocations of `2^order` pages at a steady rate, each kept until the pass
//! ends, then all freed. `% Success` is successes × 100 / attempts, attempts being
//! `percent`% of MemTotal in blocks of the order.

use super::{enter, Phase};
use crate::calibration::PAGE_SIZE;
use crate::engine::{self, Nanos, MSEC, SEC};
use crate::mm::page::Pfn;
use crate::mm::{page_alloc, Gfp, World};
use crate::scenario::HighallocParams;

/// What one pass did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HighallocPass {
    /// Attempts the pass makes (fixed at its start).
    pub attempts: u64,
    /// Each attempt made: whether it got a block, and how long the call took.
    pub results: Vec<(bool, Nanos)>,
    /// The pass ended early: one call took longer than the script allows.
    pub aborted: bool,
}

impl HighallocPass {
    /// Successful attempts.
    pub fn successes(&self) -> u64 {
        self.results.iter().filter(|r| r.0).count() as u64
    }

    /// The pass's metrics, each name after `prefix`: attempts, successes, `% Success`, and
    /// the mean and largest latency of an attempt.
    pub fn metrics(&self, prefix: &str) -> Vec<(String, f64)> {
        let ms = |t: Nanos| t as f64 / MSEC as f64;
        let n = self.results.len().max(1) as f64;
        let mut m = vec![
            (format!("{prefix}attempts"), self.attempts as f64),
            (format!("{prefix}successes"), self.successes() as f64),
            (
                format!("{prefix}success_percent"),
                self.success_percent() as f64,
            ),
            (
                format!("{prefix}latency_mean_ms"),
                self.results.iter().map(|r| ms(r.1)).sum::<f64>() / n,
            ),
        ];
        if let Some(max) = self.results.iter().map(|r| ms(r.1)).reduce(f64::max) {
            m.push((format!("{prefix}latency_max_ms"), max));
        }
        m
    }

    /// `% Success` as the report computes it: integer successes × 100 / attempts.
    pub fn success_percent(&self) -> u64 {
        (self.successes() * 100)
            .checked_div(self.attempts)
            .unwrap_or(0)
    }
}

/// A single call that succeeded after this long ends the pass (the script's abort).
const ABORT_SUCCESS: Nanos = 600 * SEC;
/// A single call that failed after this long ends the pass.
const ABORT_FAILURE: Nanos = 1200 * SEC;

/// The attempts and the spacing of a pass on a machine of `mem_total` pages: `ms_delay =
/// (PAGE_SIZE << order) / (mb_per_sec · 1048576 / 1000)` in whole milliseconds.
pub fn plan(p: &HighallocParams, mem_total: u64) -> (u64, Nanos) {
    let block = PAGE_SIZE << p.order;
    let attempts = mem_total * PAGE_SIZE / block * p.percent as u64 / 100;
    let bytes_per_ms = p.mb_per_sec as u64 * 1_048_576 / 1000;
    (attempts, block / bytes_per_ms.max(1) * MSEC)
}

/// The workload: one pass.
pub async fn run(w: World, idx: usize, p: HighallocParams) {
    let pass = pass(&w, idx, p).await;
    let mut k = w.borrow_mut();
    super::stats(&mut k, idx).highalloc = Some(pass);
    super::finished(&mut k, idx);
}

/// One pass of the loop, its progress counted on task slot `idx`.
pub async fn pass(w: &World, idx: usize, p: HighallocParams) -> HighallocPass {
    let w = w.clone();
    let mem_total = w.borrow().zones.iter().map(|z| z.managed_pages).sum();
    let (attempts, delay) = plan(&p, mem_total);
    enter(&mut w.borrow_mut(), idx, Phase::Running, attempts);
    let gfp = Gfp(Gfp::HIGHUSER_MOVABLE.0 | Gfp::NOWARN);
    let start = w.borrow().sched.now();
    let mut held: Vec<Pfn> = Vec::with_capacity(attempts as usize);
    let mut pass = HighallocPass {
        attempts,
        ..Default::default()
    };
    for i in 0..attempts {
        let due = start + i * delay;
        let now = w.borrow().sched.now();
        if due > now {
            engine::sleep(&w, due - now).await;
        }
        let t0 = w.borrow().sched.now();
        let r = page_alloc::alloc_pages(&w, gfp, p.order).await;
        let mut k = w.borrow_mut();
        let took = k.sched.now() - t0;
        if let Ok(pfn) = r {
            held.push(pfn);
            k.held_blocks.push((pfn, p.order));
        }
        pass.results.push((r.is_ok(), took));
        super::stats(&mut k, idx).progress = i + 1;
        if took
            > if r.is_ok() {
                ABORT_SUCCESS
            } else {
                ABORT_FAILURE
            }
        {
            pass.aborted = true;
            break;
        }
        if k.stopping() {
            break;
        }
    }
    let mut k = w.borrow_mut();
    for pfn in held {
        page_alloc::free_held_block(&mut k, pfn, p.order);
    }
    pass
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_is_the_scripts_arithmetic() {
        let p = HighallocParams::default();
        // 4 GiB: 2048 huge pages, 95% of them; 2 MiB at 16 MB/s is 125 ms (integer ms).
        let (n, delay) = plan(&p, (4u64 << 30) / PAGE_SIZE);
        assert_eq!(n, 2048 * 95 / 100);
        assert_eq!(delay, 125 * MSEC);
        let p4 = HighallocParams {
            order: 4,
            mb_per_sec: 1,
            percent: 50,
        };
        let (n, delay) = plan(&p4, 1 << 20);
        assert_eq!(n, (1u64 << 20) / 16 / 2);
        assert_eq!(delay, 65536 / 1048 * MSEC);
    }

    #[test]
    fn success_percent_truncates_like_the_report() {
        let mut pass = HighallocPass {
            attempts: 3,
            ..Default::default()
        };
        pass.results = vec![(true, 0), (false, 0), (true, 0)];
        assert_eq!(pass.successes(), 2);
        assert_eq!(pass.success_percent(), 66);
    }
}
