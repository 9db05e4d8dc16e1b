//! fs_mark as seed 002's letter ran it (`fs_mark -d DIR [-d DIR...] -D 100 -N 150 -n 150
//! -L 25 -t 1 -S0 -s 10485760`; `docs/seed-002.md`). Each of the `-L` iterations forks
//! the threads anew; each thread creates its `-n` files one after another (`open(O_CREAT|
//! O_TRUNC)`, `-s` bytes in write(2) calls of `-w` bytes, `close`) with no sync (`-S0`),
//! and reports its files/s: its files over the time from its first create to its last
//! close. The iteration's files/s is the sum over its threads (`aggregate_thread_stats`).
//! `-L` keeps the files (fs_mark sets `keep_files` with it), so the filesystem fills
//! iteration by iteration. Directories are not modelled: `-D` and `-N` only spread the
//! names.

use super::{dd, finished, new_task, secs, stats, stats_of, wait_for, CpuDebt};
use crate::calibration::PAGE_SIZE;
use crate::mm::page_writeback::DirtyTask;
use crate::mm::{namei, World};
use crate::scenario::FsmarkParams;

/// One iteration (one line of fs_mark's table after `FSUse%`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Iteration {
    /// Files created so far, every thread's (fs_mark's `Count`).
    pub count: u64,
    /// Σ over threads of files / seconds (fs_mark's `Files/sec`).
    pub files_per_sec: f64,
}

/// MMTests' summary of a column: (min, mean, population stddev, max).
pub fn summary(x: &[f64]) -> (f64, f64, f64, f64) {
    if x.is_empty() {
        return (0.0, 0.0, 0.0, 0.0);
    }
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let sd = (x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt();
    let min = x.iter().copied().fold(f64::INFINITY, f64::min);
    let max = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (min, mean, sd, max)
}

/// One thread of iteration `iter`: create and write `files` files, then exit. Its files/s
/// is left in its slot's `ops` (files) and `io_done_at` (the end of its last close).
async fn thread(
    w: World,
    t: usize,
    bdi: usize,
    iter: u32,
    thread: u32,
    files: u64,
    p: FsmarkParams,
) {
    let start = w.borrow().sched.now();
    stats(&mut w.borrow_mut(), t).started_at = start;
    let pages = p.file_size / PAGE_SIZE;
    let mut task = DirtyTask::default();
    let mut debt = CpuDebt::default();
    for f in 0..files {
        // -D/-N: `-N` files to a subdirectory, round robin over `-D` of them.
        let dir = (u64::from(iter) * files + f) / p.files_per_dir.max(1) % p.dirs.max(1);
        let name = format!("fsmark-{thread}/{dir:02x}/{iter}-{f}");
        let Ok(file) = dd::open_trunc(&w, bdi, &name).await else {
            return super::exit(&w, t, t);
        };
        let ok = dd::write_file(
            &w,
            t,
            file.ino,
            pages,
            p.write_size,
            None,
            &mut task,
            &mut debt,
        )
        .await;
        debt.flush(&w).await;
        namei::close(&mut w.borrow_mut(), file);
        if !ok {
            return super::exit(&w, t, t);
        }
        stats(&mut w.borrow_mut(), t).ops += 1;
    }
    let mut k = w.borrow_mut();
    let now = k.sched.now();
    stats(&mut k, t).io_done_at = Some(now);
    finished(&mut k, t);
}

/// The fs_mark process (slot `idx`), writing on device `bdi`.
pub async fn run(w: World, idx: usize, bdi: usize, p: FsmarkParams) {
    let threads = p.threads_on(w.borrow().sched.cpus());
    let per_thread = (p.files / u64::from(threads)).max(1);
    super::enter(
        &mut w.borrow_mut(),
        idx,
        super::Phase::Running,
        u64::from(p.iterations) * u64::from(threads) * per_thread * (p.file_size / PAGE_SIZE),
    );
    let mut count = 0;
    for iter in 0..p.iterations {
        let kids: Vec<usize> = (0..threads)
            .map(|th| {
                let t = new_task(&mut w.borrow_mut(), "fs_mark");
                let w2 = w.clone();
                let p2 = p.clone();
                let task = w.borrow_mut().sched.spawn("fs_mark", async move {
                    thread(w2, t, bdi, iter, th, per_thread, p2).await;
                });
                w.borrow_mut().mms[t].task = Some(task);
                t
            })
            .collect();
        let mut files_per_sec = 0.0;
        for &t in &kids {
            wait_for(&w, t).await;
            let k = w.borrow();
            let st = stats_of(&k, t);
            if st.killed {
                continue;
            }
            let took = secs(st.io_done_at.unwrap_or(st.started_at) - st.started_at);
            count += st.ops;
            if took > 0.0 {
                files_per_sec += st.ops as f64 / took;
            }
        }
        // Progress counts pages; the threads counted theirs in their own slots.
        let mut k = w.borrow_mut();
        let st = stats(&mut k, idx);
        st.progress =
            u64::from(iter + 1) * u64::from(threads) * per_thread * (p.file_size / PAGE_SIZE);
        st.fsmark.push(Iteration {
            count,
            files_per_sec,
        });
    }
    finished(&mut w.borrow_mut(), idx);
}

/// The metrics: `files_per_sec-<n>` per iteration, MMTests' `files_per_sec_min`, `_mean`,
/// `_stddev` and `_max` over the iterations, and `elapsed` (the whole fs_mark run, seconds).
pub fn extract(its: &[Iteration], elapsed: Option<f64>) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = its
        .iter()
        .enumerate()
        .map(|(i, it)| (format!("files_per_sec-{}", i + 1), it.files_per_sec))
        .collect();
    if !its.is_empty() {
        let rates: Vec<f64> = its.iter().map(|it| it.files_per_sec).collect();
        let (min, mean, sd, max) = summary(&rates);
        out.push(("files_per_sec_min".into(), min));
        out.push(("files_per_sec_mean".into(), mean));
        out.push(("files_per_sec_stddev".into(), sd));
        out.push(("files_per_sec_max".into(), max));
    }
    if let Some(e) = elapsed {
        out.push(("elapsed".into(), e));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_is_min_mean_population_stddev_and_max() {
        assert_eq!(summary(&[]), (0.0, 0.0, 0.0, 0.0));
        let (min, mean, sd, max) = summary(&[30.0, 34.0, 32.0, 36.0]);
        assert_eq!((min, mean, max), (30.0, 33.0, 36.0));
        // Deviations 3, 1, 1, 3: variance 20 / 4.
        assert!((sd - 5f64.sqrt()).abs() < 1e-12, "{sd}");
        let m = extract(
            &[
                Iteration {
                    count: 10,
                    files_per_sec: 30.0,
                },
                Iteration {
                    count: 20,
                    files_per_sec: 36.0,
                },
            ],
            Some(12.5),
        );
        let names: Vec<&str> = m.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "files_per_sec-1",
                "files_per_sec-2",
                "files_per_sec_min",
                "files_per_sec_mean",
                "files_per_sec_stddev",
                "files_per_sec_max",
                "elapsed"
            ]
        );
        assert_eq!(m[3].1, 33.0);
        assert_eq!(m[6].1, 12.5);
    }
}
