//! MMTests' simple-writeback ("simple-wb", `mmtests.md` §6.4; the 2011 shellpack, as
//! `docs/seed-002.md` quotes it): for each CPU factor, `iterations` times, NUMCPUS x factor
//! `dd if=/dev/zero ibs=1M obs=1M` writers (two 1 MiB buffers each, `dd::Buffers`) start
//! together, each writing its share of the total to a file of its own, and the driver waits
//! for each in turn and removes its file; then it takes the deltas of `nr_vmscan_write` and
//! the direct and kswapd scan counters over the factor's iterations, and sleeps a second
//! (`sleep 1`) before the next factor. Each writer's elapsed time is `/usr/bin/time`'s: from
//! its start to its exit, without a sync (dd's default, as MMTests runs it).

use super::{dd, finished, new_task, secs, stats, stats_of, wait_for};
use crate::mm::vmstat::{VmEvent, ZoneStat};
use crate::mm::World;
use crate::scenario::{DdConv, DdParams, SimpleWritebackParams};

/// The driver's `sleep 1` after each factor.
const SLEEP_AFTER_FACTOR: crate::engine::Nanos = crate::engine::SEC;

/// One factor's phase.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Phase {
    /// dd writers: NUMCPUS x factor.
    pub jobs: u32,
    /// Each writer's elapsed seconds, in job order, iteration after iteration.
    pub elapsed: Vec<f64>,
    /// `nr_vmscan_write` over the phase (all its iterations).
    pub nr_vmscan_write: u64,
    /// Σ `pgscan_direct_*` over the phase.
    pub pgscan_direct: u64,
    /// Σ `pgscan_kswapd_*` over the phase.
    pub pgscan_kswapd: u64,
}

impl Phase {
    /// The mean elapsed seconds, and the population standard deviation as a percentage of
    /// it (MMTests' "+/-" row).
    pub fn elapsed_mean_and_spread(&self) -> (f64, f64) {
        let n = self.elapsed.len().max(1) as f64;
        let mean = self.elapsed.iter().sum::<f64>() / n;
        let var = self.elapsed.iter().map(|e| (e - mean).powi(2)).sum::<f64>() / n;
        let pct = if mean > 0.0 {
            var.sqrt() * 100.0 / mean
        } else {
            0.0
        };
        (mean, pct)
    }
}

/// The counters a phase reports, now.
fn snapshot(w: &World) -> [u64; 3] {
    let k = w.borrow();
    let sum = |base: VmEvent| (0..4).map(|z| k.events.get(base.zone(z))).sum::<u64>();
    [
        k.global_stat(ZoneStat::nr_vmscan_write),
        sum(VmEvent::pgscan_direct_dma),
        sum(VmEvent::pgscan_kswapd_dma),
    ]
}

/// The writer `job`'s file.
fn file_name(job: u32) -> String {
    format!("simple-writeback-{job}")
}

/// The driver task (slot `idx`), writing on device `bdi`.
pub async fn run(w: World, idx: usize, bdi: usize, p: SimpleWritebackParams) {
    let factors = p.factors();
    super::enter(
        &mut w.borrow_mut(),
        idx,
        super::Phase::Running,
        factors.len() as u64,
    );
    let cpus = w.borrow().sched.cpus();
    for factor in factors {
        let jobs = cpus.saturating_mul(factor);
        let before = snapshot(&w);
        let mut elapsed = Vec::new();
        for _ in 0..p.iterations {
            elapsed.extend(run_writers(&w, bdi, &p, jobs).await);
        }
        let after = snapshot(&w);
        {
            let mut k = w.borrow_mut();
            let st = stats(&mut k, idx);
            st.simple_writeback.push(Phase {
                jobs,
                elapsed,
                nr_vmscan_write: after[0] - before[0],
                pgscan_direct: after[1] - before[1],
                pgscan_kswapd: after[2] - before[2],
            });
            st.progress += 1;
        }
        crate::engine::sleep(&w, SLEEP_AFTER_FACTOR).await;
    }
    finished(&mut w.borrow_mut(), idx);
}

/// One iteration of a factor: `jobs` writers start together; each is waited for in job
/// order and its file removed. Returns their elapsed seconds, in job order.
async fn run_writers(w: &World, bdi: usize, p: &SimpleWritebackParams, jobs: u32) -> Vec<f64> {
    // dd bs=1M count=size/jobs/1M: whole MiB each.
    let each = (p.size / u64::from(jobs)) >> 20 << 20;
    let writers: Vec<usize> = (0..jobs)
        .map(|job| {
            let d = new_task(&mut w.borrow_mut(), "dd");
            let params = DdParams {
                device: p.device.clone(),
                size: each,
                bs: 1 << 20,
                two_buffers: true,
                conv: DdConv::None,
                truncate_to: None,
                unlink: false,
                start_when_used: None,
                file: Some(file_name(job)),
            };
            let w2 = w.clone();
            let t = w.borrow_mut().sched.spawn("dd", async move {
                super::delay_start(&w2, d, 0).await;
                dd::run(w2, d, d, bdi, params).await;
            });
            w.borrow_mut().mms[d].task = Some(t);
            d
        })
        .collect();
    // `wait $JOBPID; rm file-$JOB`, in job order: a file goes once its writer is done, while
    // later writers may still run.
    for (job, &d) in (0u32..).zip(&writers) {
        wait_for(w, d).await;
        // rm's allocations may fail only for a task the OOM killer chose; go on.
        let _ = crate::mm::namei::unlink(w, bdi, &file_name(job)).await;
    }
    let k = w.borrow();
    writers
        .iter()
        .map(|&d| {
            let st = stats_of(&k, d);
            secs(st.finished_at.unwrap_or(st.started_at) - st.started_at)
        })
        .collect()
}

/// The metrics of each phase, by job count: `elapsed-<jobs>` (mean seconds),
/// `elapsed-spread-<jobs>` (stddev, % of the mean), `nr_vmscan_write-<jobs>`,
/// `pgscan_direct-<jobs>` and `pgscan_kswapd-<jobs>`.
pub fn extract(phases: &[Phase]) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    for ph in phases {
        let (mean, spread) = ph.elapsed_mean_and_spread();
        let j = ph.jobs;
        out.push((format!("elapsed-{j}"), mean));
        out.push((format!("elapsed-spread-{j}"), spread));
        out.push((format!("nr_vmscan_write-{j}"), ph.nr_vmscan_write as f64));
        out.push((format!("pgscan_direct-{j}"), ph.pgscan_direct as f64));
        out.push((format!("pgscan_kswapd-{j}"), ph.pgscan_kswapd as f64));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spread_is_the_population_stddev_as_a_percentage_of_the_mean() {
        let ph = Phase {
            jobs: 4,
            elapsed: vec![8.0, 10.0, 12.0, 10.0],
            ..Default::default()
        };
        // mean 10; deviations 2, 0, 2, 0: variance 8 / 4 = 2.
        let (mean, spread) = ph.elapsed_mean_and_spread();
        assert_eq!(mean, 10.0);
        assert!((spread - 2f64.sqrt() * 10.0).abs() < 1e-9, "{spread}");
        // Writers that took no time: no spread, not NaN.
        let idle = Phase {
            jobs: 2,
            elapsed: vec![0.0, 0.0],
            ..Default::default()
        };
        assert_eq!(idle.elapsed_mean_and_spread(), (0.0, 0.0));
        let m = extract(&[ph]);
        let names: Vec<&str> = m.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "elapsed-4",
                "elapsed-spread-4",
                "nr_vmscan_write-4",
                "pgscan_direct-4",
                "pgscan_kswapd-4"
            ]
        );
    }

    #[test]
    fn factors_double_from_min_to_max() {
        let p = |min, max| SimpleWritebackParams {
            device: "sda".into(),
            size: 1 << 30,
            min_factor: min,
            max_factor: max,
            iterations: 1,
        };
        assert_eq!(p(1, 64).factors(), [1, 2, 4, 8, 16, 32, 64]);
        assert_eq!(p(4, 4).factors(), [4]);
        assert_eq!(p(3, 20).factors(), [3, 6, 12]);
    }
}
