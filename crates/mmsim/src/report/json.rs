//! The `--json` output: one object per run.
//!
//! # Schema
//!
//! [`runs_to_json`] writes a single object when there is one run and an array of such
//! objects (in run order) otherwise. Each object has these fields:
//!
//! | field | type | meaning |
//! |---|---|---|
//! | `scenario` | string | scenario name (file stem) |
//! | `kernel` | string | kernel label: preset name, with `+switch`/`-switch` overrides |
//! | `switches` | object: string → bool | every switch and its value in this run |
//! | `seed` | integer | seed of the run's RNG |
//! | `simulated_seconds` | number | simulated seconds from start to end (MMTests' elapsed time) |
//! | `vmstat` | object: string → integer | `/proc/vmstat` at the end of the run |
//! | `mmtests_vmstat` | object: string → number | the MMTests "vmstat" summary rows (see below) |
//! | `workloads` | object: string → (object: string → number) | per workload, its metrics; a metric of a phase the workload did not complete is absent, never null |
//! | `workload_states` | object: workload → `{state, note}` | where each workload was at the end: `state` is `not started`, `waiting`, `populating`, `running`, `filling`, `holding`, `retouching`, `finished` or `oom-killed`; `note` (string or null) says which metrics are missing or partial and how far the workload got |
//! | `devices` | object: device → `{iostat: {row → number}, diskstats: {field → integer}, writeback: {bdi_written, written_by_dirtiers}}` | per `[[device]]`: the MMTests iostat rows ("Mean sda-await", ...) over the 10 s samples, `/proc/diskstats` at the end (times in ms), and the pages whose writeback completed with the share dirtiers wrote themselves (2.6.37's throttle) |
//! | `nfs` | object: mount → operation → `{ops, bytes_sent, bytes_received, queue_ms, rtt_ms, execute_ms, avg_rtt_ms, avg_exe_ms}` | per NFS mount, the per-operation RPC statistics of `/proc/self/mountstats` (`READ`, `WRITE`, `COMMIT`): cumulative times in ms, and nfsiostat's averages per operation |
//! | `threads` | array of `{name, system_seconds, user_seconds}` | CPU time per simulated thread, in run order |
//! | `cgroups` | object: group → (object: file → integer) | only with `[[cgroup]]`s: per memory cgroup (`/` is the root, then `/A`...), `memory.usage_in_bytes`, `memory.max_usage_in_bytes`, `memory.limit_in_bytes`, `memory.soft_limit_in_bytes`, `memory.failcnt`, `memory.memsw.usage_in_bytes` and `memory.stat`'s `cache`, `rss`, `swap` (bytes), `pgpgin`, `pgpgout` (pages) at the end of the run |
//! | `oom_kills` | array of `{at_seconds, rss_pages, victim}` | OOM kills in order: time (s), resident pages of the victim, victim workload |
//! | `warnings` | object: site → integer | kernel warnings (`WARN_ON_ONCE` sites) and how often each was reached: xfs's and ext4's `writepage` called from direct reclaim (seed 002's patches 3 and 4) |
//! | `dirty_throttle` | object: `pauses`, `calls` → `{count, mean_ms, p50_ms, p99_ms, max_ms}` | every sleep in `balance_dirty_pages`, and every call that slept or wrote, from entry to return; quantiles to the millisecond below |
//!
//! `mmtests_vmstat` is keyed by the row label exactly as MMTests prints it (`"Kswapd
//! efficiency"`, `"Zone dma32 velocity"`, …; see
//! [`vmstat_summary`](super::mmtests::vmstat_summary)), computed with `simulated_seconds` as
//! the elapsed time. Rows MMTests prints with `%d` (counts, truncated efficiencies and
//! percentages without the `%`, costs) are JSON integers; velocities are the unrounded
//! pages-per-second value and "Page writes by reclaim" is a float, as MMTests prints it with
//! decimals.
//!
//! **Key order.** Objects are `serde_json::Map`s without the `preserve_order` feature, i.e.
//! B-tree maps: keys of every object, including `vmstat`, `mmtests_vmstat` and
//! `switches`, come out sorted bytewise, not in kernel or display order. The output is
//! deterministic. Arrays (`threads`, `oom_kills`, the list of runs) keep their order.
//!
//! **Numbers.** A float that is NaN or infinite is written as `null`.
//!
//! # Example
//!
//! ```json
//! {
//!   "kernel": "3.9",
//!   "mmtests_vmstat": {"Kswapd efficiency": 88, "Kswapd velocity": 2500.0, "Minor Faults": 4999700, "…": 0},
//!   "oom_kills": [{"at_seconds": 12.5, "rss_pages": 262144, "victim": "memcachetest"}],
//!   "scenario": "kswapd-stalls",
//!   "seed": 42,
//!   "simulated_seconds": 1000.0,
//!   "switches": {"kswapd_block_on_writeback": true},
//!   "threads": [{"name": "kswapd0", "system_seconds": 3.2, "user_seconds": 0.0}],
//!   "vmstat": {"nr_free_pages": 1024, "pgfault": 5000000},
//!   "workloads": {"memcachetest": {"ops_per_sec": 23117.0}}
//! }
//! ```

use serde_json::{Map, Value};

use super::mmtests::{vmstat_summary, Cell};
use super::RunResult;

/// A JSON number for `v`, or `null` when it is not finite.
fn float(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

/// A summary row's value: an integer for the `%d` rows, a float otherwise.
fn cell_value(cell: &Cell) -> Value {
    match *cell {
        Cell::Int(v) | Cell::Percent(v) => Value::from(v),
        Cell::Velocity(_) | Cell::Float3(_) | Cell::Float2(_) | Cell::Ratio(_) | Cell::Input => {
            float(super::mmtests::json_value(cell))
        }
    }
}

/// One run as a JSON object (schema in the module doc).
pub fn run_to_json(r: &RunResult) -> Value {
    let mut o = Map::new();
    o.insert("scenario".into(), Value::from(r.scenario.as_str()));
    o.insert("kernel".into(), Value::from(r.kernel.as_str()));
    o.insert(
        "switches".into(),
        Value::Object(
            r.switches
                .iter()
                .map(|(n, on)| (n.clone(), Value::Bool(*on)))
                .collect(),
        ),
    );
    o.insert("seed".into(), Value::from(r.seed));
    o.insert("simulated_seconds".into(), float(r.simulated_seconds));
    o.insert(
        "vmstat".into(),
        Value::Object(
            r.vmstat
                .iter()
                .map(|(n, v)| (n.clone(), Value::from(*v)))
                .collect(),
        ),
    );
    let rows = vmstat_summary(&|name| r.vmstat(name), r.simulated_seconds, true);
    o.insert(
        "mmtests_vmstat".into(),
        Value::Object(
            rows.iter()
                .map(|(label, cell)| (label.to_string(), cell_value(cell)))
                .collect(),
        ),
    );
    o.insert(
        "workloads".into(),
        Value::Object(
            r.workloads
                .iter()
                .map(|(w, metrics)| {
                    let m = metrics
                        .iter()
                        .map(|(n, v)| (n.clone(), float(*v)))
                        .collect();
                    (w.clone(), Value::Object(m))
                })
                .collect(),
        ),
    );
    o.insert(
        "workload_states".into(),
        Value::Object(
            r.workload_states
                .iter()
                .map(|s| {
                    let mut m = Map::new();
                    m.insert("state".into(), Value::from(s.state.as_str()));
                    m.insert(
                        "note".into(),
                        s.note.as_deref().map_or(Value::Null, Value::from),
                    );
                    (s.workload.clone(), Value::Object(m))
                })
                .collect(),
        ),
    );
    o.insert(
        "devices".into(),
        Value::Object(
            r.devices
                .iter()
                .map(|d| {
                    let mut m = Map::new();
                    let rows = crate::report::mmtests::iostat_rows(
                        &d.name,
                        &d.summary().unwrap_or_default(),
                    );
                    m.insert(
                        "iostat".into(),
                        Value::Object(rows.iter().map(|(l, v)| (l.clone(), float(*v))).collect()),
                    );
                    let st = &d.diskstats;
                    let ms = |ns: u64| Value::from(ns / 1_000_000);
                    let fields = [
                        ("reads_completed", Value::from(st.reads_completed)),
                        ("reads_merged", Value::from(st.reads_merged)),
                        ("sectors_read", Value::from(st.sectors_read)),
                        ("read_ms", ms(st.read_ns)),
                        ("writes_completed", Value::from(st.writes_completed)),
                        ("writes_merged", Value::from(st.writes_merged)),
                        ("sectors_written", Value::from(st.sectors_written)),
                        ("write_ms", ms(st.write_ns)),
                        ("in_flight", Value::from(st.in_flight)),
                        ("io_ms", ms(st.io_ticks_ns)),
                        ("weighted_io_ms", ms(st.time_in_queue_ns)),
                    ];
                    m.insert(
                        "diskstats".into(),
                        Value::Object(
                            fields
                                .into_iter()
                                .map(|(k, v)| (k.to_string(), v))
                                .collect(),
                        ),
                    );
                    m.insert(
                        "writeback".into(),
                        serde_json::json!({
                            "bdi_written": d.bdi_written,
                            "written_by_dirtiers": d.written_by_dirtiers,
                        }),
                    );
                    (d.name.clone(), Value::Object(m))
                })
                .collect(),
        ),
    );
    o.insert(
        "nfs".into(),
        Value::Object(
            r.nfs
                .iter()
                .map(|n| {
                    let ops = n
                        .stats
                        .ops()
                        .iter()
                        .map(|(name, op)| {
                            let ms = |ns: u64| float(ns as f64 / 1e6);
                            let mut m = Map::new();
                            m.insert("ops".into(), Value::from(op.ops));
                            m.insert("bytes_sent".into(), Value::from(op.bytes_sent));
                            m.insert("bytes_received".into(), Value::from(op.bytes_received));
                            m.insert("queue_ms".into(), ms(op.queue_ns));
                            m.insert("rtt_ms".into(), ms(op.rtt_ns));
                            m.insert("execute_ms".into(), ms(op.execute_ns));
                            m.insert("avg_rtt_ms".into(), float(op.avg_rtt_ms()));
                            m.insert("avg_exe_ms".into(), float(op.avg_exe_ms()));
                            (name.to_string(), Value::Object(m))
                        })
                        .collect();
                    (n.mount.clone(), Value::Object(ops))
                })
                .collect(),
        ),
    );
    o.insert(
        "threads".into(),
        Value::Array(
            r.threads
                .iter()
                .map(|t| {
                    let mut m = Map::new();
                    m.insert("name".into(), Value::from(t.name.as_str()));
                    m.insert("user_seconds".into(), float(t.user_seconds));
                    m.insert("system_seconds".into(), float(t.system_seconds));
                    Value::Object(m)
                })
                .collect(),
        ),
    );
    o.insert(
        "warnings".into(),
        Value::Object(
            r.warnings
                .iter()
                .map(|(site, n)| (site.clone(), Value::from(*n)))
                .collect(),
        ),
    );
    o.insert(
        "oom_kills".into(),
        Value::Array(
            r.oom_kills
                .iter()
                .map(|k| {
                    let mut m = Map::new();
                    m.insert("at_seconds".into(), float(k.at_seconds));
                    m.insert("victim".into(), Value::from(k.victim.as_str()));
                    m.insert("rss_pages".into(), Value::from(k.rss_pages));
                    Value::Object(m)
                })
                .collect(),
        ),
    );
    if !r.cgroups.is_empty() {
        o.insert(
            "cgroups".into(),
            Value::Object(
                r.cgroups
                    .iter()
                    .map(|c| {
                        let files: Map<String, Value> = c
                            .files
                            .iter()
                            .map(|(f, v)| (f.to_string(), Value::from(*v)))
                            .collect();
                        (c.name.clone(), Value::Object(files))
                    })
                    .collect(),
            ),
        );
    }
    let durations = |d: &crate::mm::page_writeback::Durations| {
        let ms = |ns: u64| float(ns as f64 / 1e6);
        serde_json::json!({
            "count": d.count(),
            "mean_ms": ms(d.mean()),
            "p50_ms": ms(d.quantile(0.5)),
            "p99_ms": ms(d.quantile(0.99)),
            "max_ms": ms(d.max()),
        })
    };
    o.insert(
        "dirty_throttle".into(),
        serde_json::json!({
            "pauses": durations(&r.dirty_throttle.pauses),
            "calls": durations(&r.dirty_throttle.calls),
        }),
    );
    Value::Object(o)
}

/// Several runs: the object of [`run_to_json`] when there is exactly one run, otherwise an
/// array of those objects in run order (empty for no runs).
pub fn runs_to_json(runs: &[RunResult]) -> Value {
    match runs {
        [one] => run_to_json(one),
        _ => Value::Array(runs.iter().map(run_to_json).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{OomKill, ThreadTimes};

    fn run() -> RunResult {
        RunResult {
            buddyinfo: String::new(),
            pagetypeinfo: String::new(),
            warnings: vec![("xfs_vm_writepage: called from direct reclaim".into(), 3)],
            cgroups: vec![crate::report::CgroupReport {
                name: "/A".into(),
                files: vec![("memory.usage_in_bytes", 8192), ("rss", 4096)],
            }],
            scenario: "s".into(),
            kernel: "3.9".into(),
            switches: vec![("b".into(), true), ("a".into(), false)],
            seed: 7,
            simulated_seconds: 10.0,
            vmstat: vec![("pgscan_kswapd_normal".into(), 25), ("pgfault".into(), 3)],
            workloads: vec![("w".into(), vec![("nan".into(), f64::NAN)])],
            workload_states: vec![crate::report::WorkloadState {
                workload: "w".into(),
                state: "populating".into(),
                note: Some("population not finished".into()),
            }],
            threads: vec![ThreadTimes {
                name: "kswapd0".into(),
                user_seconds: 0.0,
                system_seconds: f64::INFINITY,
            }],
            devices: Vec::new(),
            nfs: Vec::new(),
            dirty_throttle: Default::default(),
            bdi_writeback: Vec::new(),
            oom_kills: vec![OomKill {
                at_seconds: 1.5,
                victim: "w".into(),
                rss_pages: 9,
            }],
        }
    }

    #[test]
    fn cgroups_are_keyed_by_path_and_file() {
        let v = run_to_json(&run());
        assert_eq!(v["cgroups"]["/A"]["memory.usage_in_bytes"], 8192);
        assert_eq!(v["cgroups"]["/A"]["rss"], 4096);
        let mut off = run();
        off.cgroups.clear();
        assert!(
            run_to_json(&off).get("cgroups").is_none(),
            "absent with memcg off"
        );
    }

    #[test]
    fn non_finite_floats_become_null() {
        let v = run_to_json(&run());
        assert_eq!(v["workloads"]["w"]["nan"], Value::Null);
        assert_eq!(v["threads"][0]["system_seconds"], Value::Null);
    }

    #[test]
    fn workload_states_carry_state_and_note() {
        let v = run_to_json(&run());
        assert_eq!(
            v["workload_states"]["w"]["state"],
            Value::from("populating")
        );
        assert_eq!(
            v["workload_states"]["w"]["note"],
            Value::from("population not finished")
        );
    }

    #[test]
    fn mmtests_rows_use_integers_and_unrounded_velocities() {
        let v = run_to_json(&run());
        assert_eq!(v["mmtests_vmstat"]["Kswapd efficiency"], Value::from(0));
        assert_eq!(v["mmtests_vmstat"]["Kswapd velocity"], Value::from(2.5));
        assert_eq!(v["mmtests_vmstat"]["Minor Faults"], Value::from(3));
    }

    #[test]
    fn one_run_is_an_object_several_are_an_array() {
        assert!(runs_to_json(&[run()]).is_object());
        assert_eq!(runs_to_json(&[run(), run()]).as_array().unwrap().len(), 2);
        assert_eq!(runs_to_json(&[]), Value::Array(vec![]));
    }
}
