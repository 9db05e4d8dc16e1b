//! The summary printed after `mmsim run`.
//!
//! For one or several runs of the same scenario (one column per kernel, the first run is
//! the baseline):
//!
//! 1. a heading line: scenario, seed and simulated seconds;
//! 2. the workload metrics as an MMTests benchmark table
//!    ([`format_compare_table`]; direction from [`metric_direction`]; `-` for a metric a
//!    run did not produce), then a note for each workload that ended short of its
//!    measured figures (still populating, filling, writing...);
//! 3. the MMTests vmstat table ([`format_monitor_table`]);
//! 4. the iostat table of block devices and, for NFS mounts, nfsiostat's figures per
//!    operation (ops, kB per op, average RTT and execution time in ms);
//! 5. the OOM kills, if any.
//!
//! Sections are separated by a blank line.

use super::mmtests::{format_compare_table, format_monitor_table, vmstat_summary, Direction};
use super::RunResult;

/// MMTests' value width for most benchmark tables (§5.3); widened when a value needs more.
const VALUE_WIDTH: usize = 12;

/// Which way is better for a workload metric: names containing `ops` or `per_sec` are
/// throughputs (higher is better, `pdiff`); everything else (durations, latencies, fault
/// and swap counts) is a cost (lower is better, `pndiff`).
pub fn metric_direction(metric: &str) -> Direction {
    if metric.contains("ops") || metric.contains("per_sec") {
        Direction::Higher
    } else {
        Direction::Lower
    }
}

/// The text if every run gives the same text, else the texts joined by `/` in run order.
fn joined(runs: &[RunResult], f: impl Fn(&RunResult) -> String) -> String {
    let mut all: Vec<String> = runs.iter().map(f).collect();
    if all.windows(2).all(|w| w[0] == w[1]) {
        all.truncate(1);
    }
    all.join("/")
}

/// The summary of `runs` (see the module doc). Empty for no runs.
pub fn summary(runs: &[RunResult]) -> String {
    if runs.is_empty() {
        return String::new();
    }
    let kernels: Vec<&str> = runs.iter().map(|r| r.kernel.as_str()).collect();
    let mut out = format!(
        "{}: seed {}, {} simulated seconds\n",
        joined(runs, |r| r.scenario.clone()),
        joined(runs, |r| r.seed.to_string()),
        joined(runs, |r| format!("{:.2}", r.simulated_seconds)),
    );

    // Workload metrics, in the order they first appear; a metric a run lacks reads NaN
    // and prints as `-`.
    let mut keys: Vec<(&str, &str)> = Vec::new();
    for r in runs {
        for (w, metrics) in &r.workloads {
            for (m, _) in metrics {
                if !keys.contains(&(w.as_str(), m.as_str())) {
                    keys.push((w, m));
                }
            }
        }
    }
    if !keys.is_empty() {
        let rows: Vec<(String, Vec<f64>, Direction)> = keys
            .iter()
            .map(|&(w, m)| {
                let values = runs
                    .iter()
                    .map(|r| r.metric(w, m).unwrap_or(f64::NAN))
                    .collect();
                (format!("{w} {m}"), values, metric_direction(m))
            })
            .collect();
        let widest = rows
            .iter()
            .flat_map(|(_, v, _)| {
                v.iter()
                    .filter(|x| !x.is_nan())
                    .map(|x| format!("{x:.2}").len() + 1)
            })
            .max()
            .unwrap_or(0);
        out.push('\n');
        out.push_str(&format_compare_table(
            &kernels,
            &rows,
            VALUE_WIDTH.max(widest),
        ));
    }
    for r in runs {
        for st in &r.workload_states {
            if let Some(note) = &st.note {
                out.push_str(&format!(
                    "note: {} ({}) {}: {note}\n",
                    st.workload, r.kernel, st.state
                ));
            }
        }
    }

    let summaries: Vec<_> = runs
        .iter()
        .map(|r| vmstat_summary(&|n| r.vmstat(n), r.simulated_seconds, true))
        .collect();
    let rows: Vec<_> = summaries[0]
        .iter()
        .enumerate()
        .map(|(i, (label, _))| {
            (
                label.to_string(),
                summaries.iter().map(|s| s[i].1).collect(),
            )
        })
        .collect();
    out.push('\n');
    out.push_str(&format_monitor_table(&kernels, &rows));

    // The iostat table: devices in sorted order, Mean rows then Max rows; a device whose
    // mean queue size is below 0.01 in the first run is left out, as MMTests does.
    let mut names: Vec<&str> = runs[0].devices.iter().map(|d| d.name.as_str()).collect();
    names.sort_unstable();
    let mut mean_rows = Vec::new();
    let mut max_rows = Vec::new();
    for name in names {
        let per_run: Vec<[(String, f64); 8]> = runs
            .iter()
            .map(|r| {
                let s = r
                    .devices
                    .iter()
                    .find(|d| d.name == name)
                    .and_then(|d| d.summary())
                    .unwrap_or_default();
                crate::report::mmtests::iostat_rows(name, &s)
            })
            .collect();
        if per_run[0][0].1 < 0.01 {
            continue;
        }
        for i in 0..8 {
            let row = (
                per_run[0][i].0.clone(),
                per_run.iter().map(|r| r[i].1).collect::<Vec<f64>>(),
            );
            if i < 4 {
                mean_rows.push(row);
            } else {
                max_rows.push(row);
            }
        }
    }
    if !mean_rows.is_empty() {
        mean_rows.extend(max_rows);
        out.push('\n');
        out.push_str(&crate::report::mmtests::format_iostat_table(
            &kernels, &mean_rows,
        ));
    }

    // NFS mounts: nfsiostat's per-operation figures, for operations any run sent.
    let mut nfs_rows: Vec<(String, Vec<f64>)> = Vec::new();
    for (i, mount) in runs[0].nfs.iter().enumerate() {
        let per_run: Vec<_> = runs.iter().map(|r| r.nfs[i].stats.ops()).collect();
        for (o, (op, _)) in per_run[0].iter().enumerate() {
            if per_run.iter().all(|ops| ops[o].1.ops == 0) {
                continue;
            }
            let row = |what: &str, f: &dyn Fn(&crate::fs::nfs::OpStats) -> f64| {
                let values = per_run.iter().map(|ops| f(&ops[o].1)).collect();
                (format!("{what} {}-{op}", mount.mount), values)
            };
            nfs_rows.push(row("Ops", &|s| s.ops as f64));
            nfs_rows.push(row("kB/op", &|s| {
                (s.bytes_sent + s.bytes_received) as f64 / 1024.0 / s.ops.max(1) as f64
            }));
            nfs_rows.push(row("RTT-ms", &|s| s.avg_rtt_ms()));
            nfs_rows.push(row("exe-ms", &|s| s.avg_exe_ms()));
        }
    }
    if !nfs_rows.is_empty() {
        out.push('\n');
        out.push_str(&crate::report::mmtests::format_iostat_table(
            &kernels, &nfs_rows,
        ));
    }

    if runs.iter().any(|r| !r.warnings.is_empty()) {
        out.push_str("\nKernel warnings\n");
        for r in runs {
            for (site, n) in &r.warnings {
                out.push_str(&format!("{}: {site} ({n} times)\n", r.kernel));
            }
        }
    }

    if runs.iter().any(|r| !r.cgroups.is_empty()) {
        out.push_str(&cgroups_table(runs));
    }

    if runs.iter().any(|r| !r.oom_kills.is_empty()) {
        out.push_str("\nOOM kills\n");
        for r in runs {
            for k in &r.oom_kills {
                out.push_str(&format!(
                    "{}: at {:.2}s killed {} ({} pages resident)\n",
                    r.kernel, k.at_seconds, k.victim, k.rss_pages
                ));
            }
        }
    }
    out
}

/// Each run's memory cgroups: a row per group, its files in MiB (counts as they are).
fn cgroups_table(runs: &[RunResult]) -> String {
    const COLS: [(&str, &str); 8] = [
        ("memory.usage_in_bytes", "usage"),
        ("memory.max_usage_in_bytes", "max_usage"),
        ("memory.limit_in_bytes", "limit"),
        ("memory.failcnt", "failcnt"),
        ("cache", "cache"),
        ("rss", "rss"),
        ("swap", "swap"),
        ("pgpgout", "pgpgout"),
    ];
    let mut out = String::from("\nMemory cgroups (MiB; failcnt and pgpgout are counts)\n");
    let kw = runs
        .iter()
        .map(|r| r.kernel.len())
        .max()
        .unwrap_or(0)
        .max(6);
    let gw = runs
        .iter()
        .flat_map(|r| r.cgroups.iter().map(|c| c.name.len()))
        .max()
        .unwrap_or(0)
        .max(5);
    out.push_str(&format!("{:<kw$} {:<gw$}", "kernel", "group"));
    for (_, h) in COLS {
        out.push_str(&format!(" {h:>10}"));
    }
    out.push('\n');
    for r in runs {
        for c in &r.cgroups {
            out.push_str(&format!("{:<kw$} {:<gw$}", r.kernel, c.name));
            for (f, _) in COLS {
                let v = c.get(f).unwrap_or(0);
                let cell = match f {
                    "memory.failcnt" | "pgpgout" => v.to_string(),
                    _ if v == i64::MAX as u64 => "unlimited".to_string(),
                    _ => format!("{:.1}", v as f64 / (1u64 << 20) as f64),
                };
                out.push_str(&format!(" {cell:>10}"));
            }
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cgroups_table_gives_mib_counts_and_unlimited_in_aligned_columns() {
        let group = |name: &str, limit: u64| crate::report::CgroupReport {
            name: name.into(),
            files: vec![
                ("memory.usage_in_bytes", 3 << 20),
                ("memory.limit_in_bytes", limit),
                ("memory.failcnt", 7),
                ("pgpgout", 1024),
            ],
        };
        let run = |kernel: &str| RunResult {
            scenario: "s".into(),
            kernel: kernel.into(),
            switches: Vec::new(),
            seed: 1,
            simulated_seconds: 1.0,
            vmstat: Vec::new(),
            workloads: Vec::new(),
            workload_states: Vec::new(),
            threads: Vec::new(),
            oom_kills: Vec::new(),
            devices: Vec::new(),
            nfs: Vec::new(),
            dirty_throttle: Default::default(),
            bdi_writeback: Vec::new(),
            buddyinfo: String::new(),
            pagetypeinfo: String::new(),
            warnings: Vec::new(),
            cgroups: vec![group("/", i64::MAX as u64), group("/A/B", 4 << 20)],
        };
        let t = cgroups_table(&[run("3.9"), run("softlimit-rework-v5.1")]);
        let lines: Vec<&str> = t.lines().skip(2).collect();
        assert!(
            lines[0].starts_with("kernel                group      usage"),
            "{t}"
        );
        assert!(
            lines[1].starts_with("3.9                   /            3.0"),
            "{t}"
        );
        assert!(lines[1].contains("unlimited          7"), "{t}");
        assert!(
            lines[4].starts_with("softlimit-rework-v5.1 /A/B         3.0"),
            "{t}"
        );
        assert!(lines[4].contains("4.0          7"), "{t}");
        assert!(lines[4].ends_with(" 1024"), "{t}");
        let widths: Vec<usize> = lines.iter().map(|l| l.len()).collect();
        assert!(widths.iter().all(|&w| w == widths[0]), "{t}");
    }

    #[test]
    fn throughput_metrics_are_higher_is_better() {
        assert_eq!(metric_direction("ops_per_sec"), Direction::Higher);
        assert_eq!(metric_direction("bytes_per_sec"), Direction::Higher);
        assert_eq!(metric_direction("io_duration"), Direction::Lower);
        assert_eq!(metric_direction("swapin"), Direction::Lower);
    }

    #[test]
    fn no_runs_print_nothing() {
        assert_eq!(summary(&[]), "");
    }
}
