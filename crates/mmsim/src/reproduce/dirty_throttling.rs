//! Seed 003 (Wu Fengguang, "IO-less dirty throttling" v3, December 2010): his concurrent-dd
//! test suite, each case under 2.6.37-rc5 and under the series, with the figures his graphs
//! show summed up per case, and the claims about them judged.
//!
//! A case is a filesystem, a machine and a number of `dd bs=1M` writers started together,
//! named as his result directories were (`xfs-100dd-1M-8p-2952M`: filesystem, dd count,
//! block size, CPUs, MemTotal). The machines: 256 MiB, 512 MiB and 3 GiB of RAM with 8 CPUs
//! on one 7200 rpm disk, and 16 GiB with 24 CPUs on a 12-disk md RAID0 (`docs/seed-003.md`).

use super::Verdict;
use crate::engine::{Nanos, SEC};
use crate::fs::Filesystem;
use crate::report::timeseries::{TimeSeries, COLUMNS};
use crate::report::RunResult;
use crate::scenario::{
    BlockDevice, DdConv, DdParams, DeviceKind, Machine, RunParams, Scenario, Workload, WorkloadKind,
};

/// The two kernels, in column order.
pub const KERNELS: [&str; 2] = ["2.6.37-rc5", "ioless-v3"];

/// How long each case runs: long enough for 100 dd to settle on the 16 GiB array.
pub const DURATION: Nanos = 60 * SEC;

/// Figures over time leave out the first seconds, while the dirty pages ramp up to the
/// limits and the bandwidth estimate settles.
pub const RAMP_UP: Nanos = 20 * SEC;

/// Time between the samples the dirty-page figures are taken from.
pub const SAMPLE_INTERVAL: Nanos = SEC / 5;

/// The filesystems of the suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fs {
    Ext2,
    Ext3,
    /// ext4 mounted data=ordered, the default.
    Ext4,
    /// ext4 mounted data=writeback (his `ext4_wb`).
    Ext4Wb,
    Xfs,
    Btrfs,
    Nfs,
}

impl Fs {
    /// Every filesystem, in the order his index lists them.
    pub const ALL: [Fs; 7] = [
        Fs::Ext2,
        Fs::Ext3,
        Fs::Ext4,
        Fs::Ext4Wb,
        Fs::Xfs,
        Fs::Btrfs,
        Fs::Nfs,
    ];

    /// The name in case names.
    pub fn label(self) -> &'static str {
        match self {
            Fs::Ext2 => "ext2",
            Fs::Ext3 => "ext3",
            Fs::Ext4 => "ext4",
            Fs::Ext4Wb => "ext4_wb",
            Fs::Xfs => "xfs",
            Fs::Btrfs => "btrfs",
            Fs::Nfs => "nfs",
        }
    }

    fn filesystem(self) -> Filesystem {
        match self {
            Fs::Ext2 => Filesystem::Ext2,
            Fs::Ext3 => Filesystem::Ext3,
            Fs::Ext4 | Fs::Ext4Wb => Filesystem::Ext4,
            Fs::Xfs => Filesystem::Xfs,
            Fs::Btrfs => Filesystem::Btrfs,
            Fs::Nfs => Filesystem::Nfs,
        }
    }
}

/// The machines of the suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestBox {
    /// 256 MiB, 8 CPUs, one disk.
    M256,
    /// 512 MiB, 8 CPUs, one disk.
    M512,
    /// 3 GiB, 8 CPUs, one disk.
    G3,
    /// 16 GiB, 24 CPUs, 12-disk md RAID0.
    G16,
}

impl TestBox {
    /// Every machine, smallest first.
    pub const ALL: [TestBox; 4] = [TestBox::M256, TestBox::M512, TestBox::G3, TestBox::G16];

    /// RAM, bytes.
    pub fn ram(self) -> u64 {
        match self {
            TestBox::M256 => 256 << 20,
            TestBox::M512 => 512 << 20,
            TestBox::G3 => 3 << 30,
            TestBox::G16 => 16 << 30,
        }
    }

    /// CPUs.
    pub fn cpus(self) -> u32 {
        if self == TestBox::G16 {
            24
        } else {
            8
        }
    }

    fn device(self, fs: Fs) -> BlockDevice {
        let mut d = if fs == Fs::Nfs {
            BlockDevice::nfs_mount("nfs0")
        } else {
            BlockDevice::ext4_hdd("sda")
        };
        if fs == Fs::Ext4Wb {
            d.data = crate::scenario::DataMode::Writeback;
        }
        if fs != Fs::Nfs {
            d.filesystem = fs.filesystem();
            if self == TestBox::G16 {
                d.name = "md0".into();
                d.kind = DeviceKind::Raid0 { members: 12 };
            }
        }
        d
    }
}

/// One case of the suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Case {
    pub fs: Fs,
    pub dd: u32,
    pub machine: TestBox,
    /// dd's block size, bytes: 1 MiB, or the letter's 4 KiB and 1 KiB writes.
    pub bs: u64,
}

impl Case {
    /// The case's name, as his result directories were named: filesystem, dd count, block
    /// size, CPUs and MemTotal in MiB.
    pub fn name(&self) -> String {
        let page = crate::calibration::PAGE_SIZE;
        let mem_total =
            (crate::mm::page_alloc::mem_total_pages(self.machine.ram() / page) * page) >> 20;
        let bs = match self.bs {
            b if b >= 1 << 20 => format!("{}M", b >> 20),
            b => format!("{}K", b >> 10),
        };
        format!(
            "{}-{}dd-{bs}-{}p-{}M",
            self.fs.label(),
            self.dd,
            self.machine.cpus(),
            mem_total
        )
    }

    /// The case as a scenario: the machine, its device, and `dd` writers started at once,
    /// each with more to write than the run lasts.
    pub fn scenario(&self) -> Scenario {
        let dev = self.machine.device(self.fs);
        let name = dev.name.clone();
        let workloads = (0..self.dd)
            .map(|i| Workload {
                name: format!("dd{i}"),
                start: 0,
                kind: WorkloadKind::Dd(DdParams {
                    device: name.clone(),
                    size: 1 << 40,
                    bs: self.bs,
                    two_buffers: false,
                    conv: DdConv::None,
                    truncate_to: None,
                    unlink: false,
                    start_when_used: None,
                    file: None,
                }),
                cgroup: None,
                cpus: Vec::new(),
                background: false,
            })
            .collect();
        Scenario {
            name: self.name(),
            machine: Machine {
                ram: self.machine.ram(),
                cpus: self.machine.cpus(),
                pci_hole: 0,
                swap: None,
                devices: vec![dev],
                reclaim_costs: Default::default(),
            },
            vm: Default::default(),
            // THP came in 2.6.38.
            transparent_hugepage: Default::default(),
            run: RunParams {
                duration: DURATION,
                seed: 1,
                end_when_done: false,
            },
            kernel: Default::default(),
            slab: Default::default(),
            workloads,
            cgroups: Vec::new(),
        }
    }
}

/// The cases `reproduce dirty-throttling` runs by default: every filesystem, machine and dd
/// count at least once, and the cases the claims read.
pub fn default_cases() -> Vec<Case> {
    use Fs::*;
    use TestBox::*;
    let c = |fs, dd, machine| Case {
        fs,
        dd,
        machine,
        bs: 1 << 20,
    };
    let small = |fs, bs| Case {
        fs,
        dd: 1,
        machine: G3,
        bs,
    };
    vec![
        c(Ext4, 1, G3),
        c(Ext4Wb, 1, G3),
        c(Ext4, 10, G3),
        c(Ext4, 100, G3),
        c(Xfs, 1, G3),
        c(Xfs, 2, G3),
        c(Xfs, 10, G3),
        c(Xfs, 100, G3),
        c(Btrfs, 1, G3),
        c(Btrfs, 100, G3),
        c(Ext3, 1, G3),
        c(Ext2, 10, G3),
        c(Nfs, 1, G3),
        c(Ext4, 1, M256),
        c(Xfs, 10, M512),
        c(Xfs, 100, G16),
        c(Btrfs, 1000, G16),
        small(Btrfs, 1 << 10),
        small(Nfs, 4 << 10),
    ]
}

/// Every case: each filesystem on each machine with 1, 2, 10, 100 and 1000 dd writing
/// 1 MiB blocks, and one dd writing 4 KiB and 1 KiB blocks.
pub fn full_cases() -> Vec<Case> {
    let mut v = Vec::new();
    for machine in TestBox::ALL {
        for fs in Fs::ALL {
            for dd in [1, 2, 10, 100, 1000] {
                v.push(Case {
                    fs,
                    dd,
                    machine,
                    bs: 1 << 20,
                });
            }
            for bs in [4 << 10, 1 << 10] {
                v.push(Case {
                    fs,
                    dd: 1,
                    machine,
                    bs,
                });
            }
        }
    }
    v
}

/// What one case did under one kernel (issue 11's summary figures).
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Aggregate write throughput after ramp-up, MB/s (pages whose writeback completed).
    pub write_mbps: f64,
    /// Disk utilisation over the whole run, % (`io_ticks`); `None` for NFS.
    pub util: Option<f64>,
    /// Global dirty pages (dirty + writeback + unstable) after ramp-up: mean and standard
    /// deviation over the samples, as fractions of the setpoint, and the mean as a fraction
    /// of the limit.
    pub dirty_mean_setpoint: f64,
    pub dirty_sd_setpoint: f64,
    pub dirty_mean_limit: f64,
    /// Sleeps in `balance_dirty_pages`: p50, p99 and the longest, ms.
    pub pause_ms: [f64; 3],
    /// The longest throttled call, ms.
    pub call_max_ms: f64,
    /// Throttled calls that lasted 1 s or more.
    pub calls_over_1s: u64,
    /// Jain's fairness index over the dd tasks' pages written.
    pub jain: f64,
    /// Share of the written pages that dirtiers wrote themselves, %.
    pub dirtier_share: f64,
}

/// Jain's fairness index of `x`: 1 when all are equal, 1/n when one has everything.
pub fn jain(x: &[f64]) -> f64 {
    let sum: f64 = x.iter().sum();
    let sq: f64 = x.iter().map(|v| v * v).sum();
    if sq == 0.0 {
        return 1.0;
    }
    sum * sum / (x.len() as f64 * sq)
}

fn column(series: &TimeSeries, name: &str) -> Vec<f64> {
    let i = COLUMNS
        .iter()
        .position(|c| *c == name)
        .or_else(|| {
            series
                .device_columns
                .iter()
                .position(|c| c == name)
                .map(|j| COLUMNS.len() + j)
        })
        .expect("a known column");
    series.rows.iter().map(|r| r[i]).collect()
}

/// The figures of one run, from its result and its time series.
pub fn summarize(r: &RunResult, series: &TimeSeries) -> Summary {
    let dev = &r.devices.first();
    let t = column(series, "time_s");
    let after: Vec<usize> = (0..t.len())
        .filter(|&i| t[i] >= RAMP_UP as f64 / SEC as f64)
        .collect();
    let col = |name: &str| column(series, name);
    let (dirty, wb, unstable) = (col("nr_dirty"), col("nr_writeback"), col("nr_unstable"));
    let (bg, thresh) = (col("dirty_background_thresh"), col("dirty_thresh"));
    let mut rel_set = Vec::new();
    let mut rel_limit = Vec::new();
    for &i in &after {
        let d = dirty[i] + wb[i] + unstable[i];
        // kernel-writeback.md §2.3: freerun midway between the background and dirty
        // limits, the setpoint midway between freerun and the limit.
        let freerun = (bg[i] + thresh[i]) / 2.0;
        let setpoint = (freerun + thresh[i]) / 2.0;
        rel_set.push(d / setpoint);
        rel_limit.push(d / thresh[i]);
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let m = mean(&rel_set);
    let sd = (rel_set.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / rel_set.len().max(1) as f64)
        .sqrt();
    let (dev_name, bdi_written, by_dirtiers) = r.bdi_writeback[0].clone();
    let written = col(&format!("written_{dev_name}"));
    let write_mbps = match (after.first(), after.last()) {
        (Some(&a), Some(&b)) if b > a => (written[b] - written[a]) * 4096.0 / 1e6 / (t[b] - t[a]),
        _ => 0.0,
    };
    let util =
        dev.map(|d| 100.0 * d.diskstats.io_ticks_ns as f64 / (r.simulated_seconds * SEC as f64));
    let per_dd: Vec<f64> = r
        .workloads
        .iter()
        .filter_map(|(_, m)| {
            m.iter()
                .find(|(k, _)| k == "pages_written")
                .map(|(_, v)| *v)
        })
        .collect();
    let ms = |ns: Nanos| ns as f64 / 1e6;
    let th = &r.dirty_throttle;
    Summary {
        write_mbps,
        util,
        dirty_mean_setpoint: m,
        dirty_sd_setpoint: sd,
        dirty_mean_limit: mean(&rel_limit),
        pause_ms: [
            ms(th.pauses.quantile(0.5)),
            ms(th.pauses.quantile(0.99)),
            ms(th.pauses.max()),
        ],
        call_max_ms: ms(th.calls.max()),
        calls_over_1s: th.calls.at_least(SEC),
        jain: jain(&per_dd),
        dirtier_share: if bdi_written == 0 {
            0.0
        } else {
            100.0 * by_dirtiers as f64 / bdi_written as f64
        },
    }
}

/// One case run under one kernel: its figures, and the run with its time series (for
/// graphs).
#[derive(Clone, Debug)]
pub struct CaseRun {
    pub summary: Summary,
    pub result: RunResult,
    pub series: TimeSeries,
}

/// Run `case` under `kernel` and sum it up.
pub fn run_case(case: &Case, kernel: &str) -> Result<CaseRun, crate::sim::SimError> {
    let k = crate::presets::resolve(kernel, &[]).expect("seed 003's presets exist");
    let s = case.scenario();
    let outputs = crate::sim::RunOutputs {
        sample_interval: Some(SAMPLE_INTERVAL),
        ..Default::default()
    };
    let (result, series) = crate::sim::run_with(
        &s,
        &k,
        s.run.seed,
        crate::sim::RunOptions::default(),
        outputs,
    )?;
    let series = series.expect("the run was sampled");
    Ok(CaseRun {
        summary: summarize(&result, &series),
        result,
        series,
    })
}

/// Look a case up by its name among every case.
pub fn find_case(name: &str) -> Option<Case> {
    full_cases().into_iter().find(|c| c.name() == name)
}

/// The case name nearest a misspelt one.
pub fn nearest_case(name: &str) -> Option<String> {
    full_cases()
        .iter()
        .map(|c| c.name())
        .map(|n| (strsim::jaro_winkler(name, &n), n))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, n)| n)
}

/// Every case's summary under each kernel, in case order.
pub type Results = Vec<(Case, [Summary; 2])>;

fn find(res: &Results, fs: Fs, dd: u32, machine: TestBox) -> Option<&[Summary; 2]> {
    res.iter()
        .find(|(c, _)| c.fs == fs && c.dd == dd && c.machine == machine && c.bs == 1 << 20)
        .map(|(_, s)| s)
}

/// The claims of the issue about Wu's letter (T1–T5), judged on whichever cases ran;
/// a claim whose cases did not run is not judged.
pub fn claims(res: &Results) -> Vec<Verdict> {
    let mut out = Vec::new();
    // T1: who writes.
    {
        let many: Vec<&(Case, [Summary; 2])> = res.iter().filter(|(c, _)| c.dd >= 10).collect();
        let values: Vec<(String, f64)> = many
            .iter()
            .flat_map(|(c, s)| {
                (0..2).map(move |k| {
                    (
                        format!("{} {} dirtier share %", KERNELS[k], c.name()),
                        s[k].dirtier_share,
                    )
                })
            })
            .collect();
        let holds = many
            .iter()
            .all(|(_, s)| s[0].dirtier_share >= 30.0 && s[1].dirtier_share == 0.0);
        out.push(Verdict {
            id: "T1",
            claim: "With 10+ dd, dirtiers write at least 30% of the pages under 2.6.37-rc5 and none under ioless-v3".into(),
            holds,
            judged: !many.is_empty(),
            values,
        });
    }
    // T2: bounded pauses.
    {
        let max_new = res
            .iter()
            .map(|(_, s)| s[1].pause_ms[2])
            .fold(0.0, f64::max);
        let hundred: Vec<&(Case, [Summary; 2])> = res.iter().filter(|(c, _)| c.dd == 100).collect();
        let mut values = vec![("ioless-v3 longest pause ms".to_string(), max_new)];
        values.extend(hundred.iter().map(|(c, s)| {
            (
                format!("2.6.37-rc5 {} calls of 1 s or more", c.name()),
                s[0].calls_over_1s as f64,
            )
        }));
        out.push(Verdict {
            id: "T2",
            claim: "No pause under ioless-v3 is longer than 200 ms; under 2.6.37-rc5 the 100-dd cases stall 1 s or more in a throttle call".into(),
            holds: max_new <= 200.0 && hundred.iter().all(|(_, s)| s[0].calls_over_1s > 0),
            judged: !res.is_empty() && !hundred.is_empty(),
            values,
        });
    }
    // T3: control.
    {
        let cases: Vec<&[Summary; 2]> = [Fs::Xfs, Fs::Ext4Wb]
            .iter()
            .filter_map(|&fs| find(res, fs, 1, TestBox::G3))
            .collect();
        let mut values = Vec::new();
        for (fs, s) in ["xfs", "ext4_wb"].iter().zip(&cases) {
            values.push((
                format!("ioless-v3 {fs} 1dd mean dirty / setpoint"),
                s[1].dirty_mean_setpoint,
            ));
            values.push((
                format!("ioless-v3 {fs} 1dd sd dirty / setpoint"),
                s[1].dirty_sd_setpoint,
            ));
            values.push((
                format!("2.6.37-rc5 {fs} 1dd mean dirty / limit"),
                s[0].dirty_mean_limit,
            ));
        }
        // "Just under the limit": within the top fifth below it (a heavy dirtier's own
        // limit is its device's less an eighth, §2.5).
        let holds = cases.iter().all(|s| {
            (s[1].dirty_mean_setpoint - 1.0).abs() <= 0.10
                && s[1].dirty_sd_setpoint <= 0.10
                && (0.8..=1.0).contains(&s[0].dirty_mean_limit)
        });
        out.push(Verdict {
            id: "T3",
            claim: "1 dd on xfs and ext4 data=writeback, 3G: under ioless-v3 mean dirty pages within ±10% of the setpoint with sd ≤ 10% of it; under 2.6.37-rc5 just under the limit (80-100% of it)".into(),
            holds,
            judged: cases.len() == 2,
            values,
        });
    }
    // T4: fairness.
    {
        let cases: Vec<(u32, &[Summary; 2])> = [10, 100]
            .iter()
            .filter_map(|&dd| find(res, Fs::Xfs, dd, TestBox::G3).map(|s| (dd, s)))
            .collect();
        let mut values = Vec::new();
        for (dd, s) in &cases {
            values.push((format!("2.6.37-rc5 xfs {dd}dd Jain"), s[0].jain));
            values.push((format!("ioless-v3 xfs {dd}dd Jain"), s[1].jain));
        }
        out.push(Verdict {
            id: "T4",
            claim: "10 and 100 dd on xfs, 3G: Jain's index at least 0.95 under ioless-v3 and lower under 2.6.37-rc5".into(),
            holds: cases.iter().all(|(_, s)| s[1].jain >= 0.95 && s[0].jain < s[1].jain),
            judged: cases.len() == 2,
            values,
        });
    }
    // T5: fewer seeks.
    {
        let cases: Vec<(&str, &[Summary; 2])> = [(Fs::Xfs, "xfs"), (Fs::Ext4, "ext4")]
            .iter()
            .filter_map(|&(fs, n)| find(res, fs, 100, TestBox::G3).map(|s| (n, s)))
            .collect();
        let mut values = Vec::new();
        for (n, s) in &cases {
            values.push((format!("2.6.37-rc5 {n} 100dd MB/s"), s[0].write_mbps));
            values.push((format!("ioless-v3 {n} 100dd MB/s"), s[1].write_mbps));
        }
        out.push(Verdict {
            id: "T5",
            claim: "100 dd on xfs and ext4, 3G: aggregate throughput under ioless-v3 at least 2.6.37-rc5's".into(),
            holds: cases.iter().all(|(_, s)| s[1].write_mbps >= s[0].write_mbps),
            judged: cases.len() == 2,
            values,
        });
    }
    out
}

/// The terminal report: one row per case and kernel, then the claims.
pub fn report(res: &Results) -> String {
    let mut out = String::from(
        "Seed 003 (\"IO-less dirty throttling\" v3): Wu's concurrent-dd suite under 2.6.37-rc5 and ioless-v3\n",
    );
    out.push_str(&format!(
        "Each case runs {} s; figures over time leave out the first {} s. dirty: (dirty + writeback + unstable) / setpoint, mean ± sd, and mean / limit.\n\n",
        DURATION / SEC,
        RAMP_UP / SEC
    ));
    let width = res
        .iter()
        .map(|(c, _)| c.name().len())
        .max()
        .unwrap_or(4)
        .max(4);
    out.push_str(&format!(
        "{:<width$} {:<10} {:>8} {:>6} {:>13} {:>7} {:>17} {:>9} {:>6} {:>6} {:>8}\n",
        "case",
        "kernel",
        "MB/s",
        "util%",
        "dirty/setpt",
        "/limit",
        "pause p50/p99/max",
        "call max",
        ">=1s",
        "Jain",
        "dirtier%"
    ));
    for (c, s) in res {
        for (k, s) in s.iter().enumerate() {
            out.push_str(&format!(
                "{:<width$} {:<10} {:>8.1} {:>6} {:>6.2} ±{:>5.2} {:>7.2} {:>5.0}/{:>5.0}/{:>5.0} {:>9.0} {:>6} {:>6.3} {:>8.1}\n",
                c.name(),
                KERNELS[k],
                s.write_mbps,
                s.util.map_or("-".to_string(), |u| format!("{u:.0}")),
                s.dirty_mean_setpoint,
                s.dirty_sd_setpoint,
                s.dirty_mean_limit,
                s.pause_ms[0],
                s.pause_ms[1],
                s.pause_ms[2],
                s.call_max_ms,
                s.calls_over_1s,
                s.jain,
                s.dirtier_share,
            ));
        }
    }
    out.push_str("\nClaims (judged on the simulated cases)\n");
    let verdicts = claims(res);
    for v in &verdicts {
        out.push_str(&format!("{:<4} {:<10} {}\n", v.id, v.outcome(), v.claim));
        let vals: Vec<String> = v
            .values
            .iter()
            .map(|(w, x)| format!("{w} = {}", super::verdict_number(*x)))
            .collect();
        if !vals.is_empty() {
            out.push_str(&format!("     {}\n", vals.join(", ")));
        }
    }
    out.push_str(&format!("\n{}\n", super::verdict_summary(&verdicts)));
    out
}

/// The same as JSON.
pub fn to_json(res: &Results) -> serde_json::Value {
    use serde_json::json;
    let cases: Vec<_> = res
        .iter()
        .map(|(c, s)| {
            let kernels: serde_json::Map<String, serde_json::Value> = s
                .iter()
                .enumerate()
                .map(|(k, s)| {
                    (
                        KERNELS[k].to_string(),
                        json!({
                            "write_mbps": s.write_mbps,
                            "util_percent": s.util,
                            "dirty_mean_over_setpoint": s.dirty_mean_setpoint,
                            "dirty_sd_over_setpoint": s.dirty_sd_setpoint,
                            "dirty_mean_over_limit": s.dirty_mean_limit,
                            "pause_p50_ms": s.pause_ms[0],
                            "pause_p99_ms": s.pause_ms[1],
                            "pause_max_ms": s.pause_ms[2],
                            "call_max_ms": s.call_max_ms,
                            "calls_over_1s": s.calls_over_1s,
                            "jain": s.jain,
                            "dirtier_share_percent": s.dirtier_share,
                        }),
                    )
                })
                .collect();
            json!({"case": c.name(), "kernels": kernels})
        })
        .collect();
    let verdicts: Vec<_> = claims(res)
        .iter()
        .map(|v| json!({"id": v.id, "claim": v.claim, "outcome": v.outcome(), "values": v.values}))
        .collect();
    json!({"experiment": "dirty-throttling", "cases": cases, "claims": verdicts})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_are_named_as_wus_result_directories() {
        let c = Case {
            fs: Fs::Xfs,
            dd: 100,
            machine: TestBox::G3,
            bs: 1 << 20,
        };
        assert!(c.name().starts_with("xfs-100dd-1M-8p-"), "{}", c.name());
        assert!(c.name().ends_with('M'));
        let c = Case {
            fs: Fs::Btrfs,
            dd: 1000,
            machine: TestBox::G16,
            bs: 1 << 20,
        };
        assert!(c.name().starts_with("btrfs-1000dd-1M-24p-"));
        assert_eq!(
            c.scenario().machine.devices[0].kind,
            DeviceKind::Raid0 { members: 12 }
        );
        assert_eq!(c.scenario().workloads.len(), 1000);
    }

    #[test]
    fn the_default_subset_covers_every_axis() {
        let d = default_cases();
        for fs in Fs::ALL {
            assert!(d.iter().any(|c| c.fs == fs), "{fs:?}");
        }
        for m in TestBox::ALL {
            assert!(d.iter().any(|c| c.machine == m), "{m:?}");
        }
        for dd in [1, 2, 10, 100, 1000] {
            assert!(d.iter().any(|c| c.dd == dd), "{dd}");
        }
        assert_eq!(full_cases().len(), 4 * 7 * (5 + 2));
        assert!(d.iter().any(|c| c.bs == 1 << 10) && d.iter().any(|c| c.bs == 4 << 10));
    }

    #[test]
    fn jains_index_is_1_for_equal_shares_and_1_over_n_for_one_taker() {
        assert_eq!(jain(&[5.0, 5.0, 5.0]), 1.0);
        assert!((jain(&[9.0, 0.0, 0.0]) - 1.0 / 3.0).abs() < 1e-12);
        assert!((jain(&[3.0, 1.0]) - 0.8).abs() < 1e-12);
    }

    /// A case that says nothing in particular.
    fn summary() -> Summary {
        Summary {
            write_mbps: 100.0,
            util: Some(90.0),
            dirty_mean_setpoint: 1.0,
            dirty_sd_setpoint: 0.0,
            dirty_mean_limit: 0.9,
            pause_ms: [10.0, 100.0, 100.0],
            call_max_ms: 100.0,
            calls_over_1s: 0,
            jain: 1.0,
            dirtier_share: 0.0,
        }
    }

    /// Tables on which every claim holds: the letter's picture.
    fn letter() -> Results {
        let old = |dd: u32| Summary {
            dirtier_share: if dd >= 10 { 40.0 } else { 5.0 },
            calls_over_1s: if dd == 100 { 20 } else { 0 },
            jain: 0.8,
            dirty_mean_setpoint: 1.3,
            dirty_sd_setpoint: 0.05,
            dirty_mean_limit: 0.95,
            ..summary()
        };
        let new = || Summary {
            pause_ms: [10.0, 100.0, 180.0],
            call_max_ms: 180.0,
            jain: 0.99,
            write_mbps: 110.0,
            dirty_mean_setpoint: 1.02,
            dirty_sd_setpoint: 0.04,
            dirty_mean_limit: 0.8,
            ..summary()
        };
        let mut v = Vec::new();
        for fs in [Fs::Xfs, Fs::Ext4] {
            for dd in [1, 10, 100] {
                v.push((
                    Case {
                        fs,
                        dd,
                        machine: TestBox::G3,
                        bs: 1 << 20,
                    },
                    [old(dd), new()],
                ));
            }
        }
        // T3's ext4 is data=writeback, the letter's workaround for data=ordered.
        v.push((
            Case {
                fs: Fs::Ext4Wb,
                dd: 1,
                machine: TestBox::G3,
                bs: 1 << 20,
            },
            [old(1), new()],
        ));
        v
    }

    #[test]
    fn every_claim_holds_on_the_letters_picture() {
        let v = claims(&letter());
        assert!(v.iter().all(|v| v.judged && v.holds), "{v:?}");
    }

    #[test]
    fn each_claim_fails_alone_when_its_own_figures_are_perturbed() {
        let failing = |r: &Results| -> Vec<&'static str> {
            claims(r)
                .into_iter()
                .filter(|v| v.judged && !v.holds)
                .map(|v| v.id)
                .collect()
        };
        let perturb = |f: &dyn Fn(&mut Results)| {
            let mut r = letter();
            f(&mut r);
            failing(&r)
        };
        assert_eq!(perturb(&|r| r[1].1[0].dirtier_share = 20.0), vec!["T1"]);
        assert_eq!(perturb(&|r| r[1].1[1].dirtier_share = 1.0), vec!["T1"]);
        assert_eq!(perturb(&|r| r[0].1[1].pause_ms[2] = 250.0), vec!["T2"]);
        assert_eq!(perturb(&|r| r[2].1[0].calls_over_1s = 0), vec!["T2"]);
        assert_eq!(
            perturb(&|r| r[0].1[1].dirty_mean_setpoint = 1.15),
            vec!["T3"]
        );
        assert_eq!(perturb(&|r| r[6].1[1].dirty_sd_setpoint = 0.2), vec!["T3"]);
        assert_eq!(perturb(&|r| r[6].1[0].dirty_mean_limit = 1.05), vec!["T3"]);
        assert!(
            perturb(&|r| r[3].1[1].dirty_sd_setpoint = 0.2).is_empty(),
            "data=ordered ext4 is not T3's"
        );
        assert_eq!(perturb(&|r| r[0].1[0].dirty_mean_limit = 0.75), vec!["T3"]);
        assert_eq!(perturb(&|r| r[1].1[1].jain = 0.9), vec!["T4"]);
        assert_eq!(perturb(&|r| r[2].1[0].jain = 0.995), vec!["T4"]);
        assert_eq!(perturb(&|r| r[5].1[1].write_mbps = 90.0), vec!["T5"]);
    }

    #[test]
    fn a_claim_whose_cases_did_not_run_is_not_judged() {
        let only_ext2: Results = vec![(
            Case {
                fs: Fs::Ext2,
                dd: 1,
                machine: TestBox::G3,
                bs: 1 << 20,
            },
            [summary(), summary()],
        )];
        let v = claims(&only_ext2);
        assert!(v.iter().all(|v| !v.judged), "{v:?}");
    }
}
