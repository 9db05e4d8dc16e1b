//! MMTests' parallelio driver (`mmtests.md` §6.1): how much does a background streaming
//! write hurt a memory-resident foreground load? One warm-up memcachetest, then for each IO
//! step and iteration: start memcached and, 10 s later, the memcachetest client
//! (`shellpack-install-memcached`), wait until "used" memory reaches 80% of its pool
//! (polling every 2 s) and 5 s more, run `dd of=largefile bs=1M count=N conv=fdatasync`
//! in the foreground, wait for memcachetest and for memcached's shutdown (a `ps` poll
//! each second), take the /proc/vmstat deltas, and remove
//! largefile (`rm -rf $SHELLPACK_TEMP/*`, which also follows the warm-up). Everything runs
//! on one machine, so each iteration starts with what the last one left in memory.

use super::{dd, finished, memcachetest, new_task, wait_for};
use crate::engine::{self, Nanos, SEC};
use crate::mm::vmstat::VmEvent;
use crate::mm::World;
use crate::scenario::{DdConv, DdParams, ParallelioParams};

/// dd's output file in `$SHELLPACK_TEMP`.
const LARGEFILE: &str = "largefile";

/// memcachetest's default share of sets (the client's `setprc`; MMTests does not pass `-P`).
const SET_PERCENT: u32 = 33;

/// One iteration of one IO step.
#[derive(Clone, Debug, PartialEq)]
pub struct Iteration {
    /// dd size of the step (0: no IO).
    pub size: u64,
    /// Iteration number within the step, from 0.
    pub iteration: u32,
    /// memcachetest's operations per second.
    pub ops_per_sec: f64,
    /// dd's wall time, `fdatasync` included, in seconds.
    pub io_seconds: Option<f64>,
    /// /proc/vmstat deltas over the iteration.
    pub pswpin: u64,
    pub pswpout: u64,
    pub pgfault: u64,
    pub pgmajfault: u64,
}

/// The counters an iteration reports, now.
fn snapshot(w: &World) -> [u64; 4] {
    let k = w.borrow();
    [
        VmEvent::pswpin,
        VmEvent::pswpout,
        VmEvent::pgfault,
        VmEvent::pgmajfault,
    ]
    .map(|e| k.events.get(e))
}

/// `shellpack-install-memcached` sleeps this long after starting memcached, before the
/// memcachetest client starts.
const MEMCACHED_START_SLEEP: Nanos = 10 * SEC;

/// `shutdown_pid` polls `ps` for memcached every second after its `kill`; the first poll
/// comes straight after the signal, before the server is gone.
const SHUTDOWN_POLL: Nanos = SEC;

/// Start memcached and, after MMTests' start-up sleep, the memcachetest client; returns
/// the task slot.
async fn memcachetest_run(w: &World, name: &str, p: &ParallelioParams) -> usize {
    let mc = new_task(&mut w.borrow_mut(), name);
    let cfg = memcachetest::Config {
        pool: p.pool,
        value_size: p.value_size,
        set_percent: SET_PERCENT,
        threads: p.threads,
        duration: Some(p.duration),
        // MMTests does not pass -S.
        populate: true,
    };
    memcachetest::spawn(w, mc, name, cfg, MEMCACHED_START_SLEEP);
    mc
}

/// Wait for a memcachetest run to end, and for MMTests to see memcached gone.
async fn memcachetest_wait(w: &World, mc: usize) {
    wait_for(w, mc).await;
    engine::sleep(w, SHUTDOWN_POLL).await;
}

/// `rm -rf $SHELLPACK_TEMP/*`: largefile is unlinked, its pages and inode freed; its
/// dentry stays cached, negative, for the next dd to take.
async fn rm_largefile(w: &World, bdi: usize) {
    // rm's allocations may fail only for a task the OOM killer chose; the driver goes on.
    let _ = crate::mm::namei::unlink(w, bdi, LARGEFILE).await;
}

/// The driver task (slot `idx`), writing `largefile` on device `bdi`.
pub async fn run(w: World, idx: usize, bdi: usize, p: ParallelioParams) {
    let iterations = p.steps.len() as u64 * u64::from(p.iterations);
    super::enter(&mut w.borrow_mut(), idx, super::Phase::Running, iterations);
    if p.warmup {
        let mc = memcachetest_run(&w, "memcachetest", &p).await;
        memcachetest_wait(&w, mc).await;
    }
    for &size in &p.steps {
        for iteration in 0..p.iterations {
            let before = snapshot(&w);
            let mc = memcachetest_run(&w, "memcachetest", &p).await;
            let mut io_seconds = None;
            if size > 0 {
                dd::wait_for_used_memory(&w, p.pool / 5 * 4).await;
                let d = new_task(&mut w.borrow_mut(), "dd");
                let params = DdParams {
                    device: p.device.clone(),
                    size,
                    bs: 1 << 20,
                    two_buffers: false,
                    conv: DdConv::Fdatasync,
                    truncate_to: None,
                    unlink: false,
                    start_when_used: None,
                    file: Some(LARGEFILE.into()),
                };
                let w2 = w.clone();
                let t = w.borrow_mut().sched.spawn("dd", async move {
                    super::delay_start(&w2, d, 0).await;
                    dd::run(w2, d, d, bdi, params).await;
                });
                w.borrow_mut().mms[d].task = Some(t);
                wait_for(&w, d).await;
                let k = w.borrow();
                let st = super::stats_of(&k, d);
                io_seconds = st
                    .io_done_at
                    .map(|t| super::secs(t.saturating_sub(st.started_at)));
            }
            memcachetest_wait(&w, mc).await;
            let after = snapshot(&w);
            rm_largefile(&w, bdi).await;
            let ops_per_sec = {
                let k = w.borrow();
                let st = super::stats_of(&k, mc);
                let ran = st.finished_at.unwrap_or(st.started_at) - st.started_at;
                st.ops as f64 / super::secs(ran.max(1))
            };
            let d = |i: usize| after[i] - before[i];
            super::stats(&mut w.borrow_mut(), idx)
                .parallelio
                .push(Iteration {
                    size,
                    iteration,
                    ops_per_sec,
                    io_seconds,
                    pswpin: d(0),
                    pswpout: d(1),
                    pgfault: d(2),
                    pgmajfault: d(3),
                });
            super::stats(&mut w.borrow_mut(), idx).progress += 1;
        }
    }
    finished(&mut w.borrow_mut(), idx);
}

/// ExtractParallelio: per IO step, the worst iteration by memcachetest ops/sec gives every
/// row of the step: `memcachetest-<L>`, `io-duration-<L>` (whole seconds), `swaptotal-<L>`,
/// `swapin-<L>`, `minorfaults-<L>` and `majorfaults-<L>`, grouped by row kind as MMTests
/// prints them. Steps are in first-run order.
pub fn extract(iterations: &[Iteration]) -> Vec<(String, f64)> {
    let mut steps: Vec<u64> = Vec::new();
    for it in iterations {
        if !steps.contains(&it.size) {
            steps.push(it.size);
        }
    }
    let worst: Vec<(String, &Iteration)> = steps
        .iter()
        .filter_map(|&s| {
            let w = iterations
                .iter()
                .filter(|i| i.size == s)
                .min_by(|a, b| a.ops_per_sec.total_cmp(&b.ops_per_sec))?;
            Some((ParallelioParams::label(s), w))
        })
        .collect();
    type Row = fn(&Iteration) -> f64;
    let rows: [(&str, Row); 6] = [
        ("memcachetest", |i| (i.ops_per_sec * 100.0).round() / 100.0),
        ("io-duration", |i| i.io_seconds.map_or(0.0, f64::trunc)),
        ("swaptotal", |i| (i.pswpin + i.pswpout) as f64),
        ("swapin", |i| i.pswpin as f64),
        ("minorfaults", |i| (i.pgfault - i.pgmajfault) as f64),
        ("majorfaults", |i| i.pgmajfault as f64),
    ];
    let mut out = Vec::new();
    for (row, f) in rows {
        for (label, it) in &worst {
            out.push((format!("{row}-{label}"), f(it)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn it(size: u64, iteration: u32, ops: f64, swap: u64) -> Iteration {
        Iteration {
            size,
            iteration,
            ops_per_sec: ops,
            io_seconds: if size > 0 { Some(12.7) } else { None },
            pswpin: swap,
            pswpout: 2 * swap,
            pgfault: 1000 + swap,
            pgmajfault: swap,
        }
    }

    #[test]
    fn the_worst_iteration_by_ops_gives_every_row_of_its_step() {
        let its = [
            it(0, 0, 100.0, 0),
            it(0, 1, 90.0, 1),
            it(715 << 20, 0, 50.0, 7),
            it(715 << 20, 1, 60.0, 3),
        ];
        let rows = extract(&its);
        let get = |n: &str| rows.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
        assert_eq!(get("memcachetest-0M"), Some(90.0));
        assert_eq!(get("swaptotal-0M"), Some(3.0));
        assert_eq!(get("memcachetest-715M"), Some(50.0));
        assert_eq!(get("io-duration-715M"), Some(12.0));
        assert_eq!(get("io-duration-0M"), Some(0.0));
        assert_eq!(get("swapin-715M"), Some(7.0));
        assert_eq!(get("minorfaults-715M"), Some(1000.0));
        assert_eq!(get("majorfaults-715M"), Some(7.0));
        // Grouped by row kind, steps in order.
        let names: Vec<&str> = rows.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            &names[..4],
            [
                "memcachetest-0M",
                "memcachetest-715M",
                "io-duration-0M",
                "io-duration-715M"
            ]
        );
    }

    #[test]
    fn mmtests_steps_are_a_tenth_to_about_point_57_of_memtotal() {
        // MemTotal 7157 MiB with the 80% pool gives the seed's labels.
        let total = 7157u64 << 20;
        let steps = ParallelioParams::mmtests_steps(total, total / 5 * 4, 3);
        let labels: Vec<String> = steps.iter().map(|&s| ParallelioParams::label(s)).collect();
        assert_eq!(labels, ["0M", "715M", "2385M", "4055M"]);
    }
}
