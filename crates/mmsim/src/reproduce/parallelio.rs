//! Seed 000's parallelio experiment (MMTests parallelio + memcachetest on ext4, `mmtests.md`
//! §6.1): the result tables and the claims P1-P12 of issue 3.
//!
//! Tables are indexed by kernel (the columns of [`SEED000_KERNELS`]) and, for the parallelio
//! table, by IO step 0..=3 rather than by label: a simulated machine's MemTotal gives labels
//! such as "2384M" where the published one gave "2385M".

use super::{seed000, Verdict, SEED000_KERNELS};
use crate::calibration::PAGE_SIZE;
use crate::engine::{Nanos, SEC};
use crate::presets;
use crate::report::RunResult;
use crate::scenario::{
    BlockDevice, DdConv, DdParams, Filesystem, Machine, RunParams, Scenario, SwapDevice, Workload,
    WorkloadKind,
};
use crate::sim::{self, RunOptions, SimError};

/// The parallelio metrics, in the order MMTests prints their rows.
pub const METRICS: [&str; 6] = [
    "memcachetest",
    "io-duration",
    "swaptotal",
    "swapin",
    "minorfaults",
    "majorfaults",
];

/// The results of the three kernels.
#[derive(Clone, Debug, PartialEq)]
pub struct Tables {
    /// The four IO step labels, e.g. "0M", "715M", "2385M", "4055M".
    pub steps: [String; 4],
    /// parallelio[metric][step] = per-kernel values; metrics in [`METRICS`] order.
    pub parallelio: [[[f64; 3]; 4]; 6],
    /// The vmstat rows: (label, per-kernel values).
    pub vmstat: Vec<(String, [f64; 3])>,
    /// The iostat rows of the test disk: (label, per-kernel values).
    pub iostat: Vec<(String, [f64; 3])>,
}

impl Tables {
    /// The published tables of seed 000.
    pub fn published() -> Tables {
        let mut steps: [String; 4] = Default::default();
        let mut parallelio = [[[0.0; 3]; 4]; 6];
        for (m, metric) in METRICS.iter().enumerate() {
            let rows: Vec<_> = seed000::PARALLELIO
                .iter()
                .filter(|(label, _)| label.rsplit_once('-').map(|(name, _)| name) == Some(metric))
                .collect();
            assert_eq!(rows.len(), 4, "four steps of {metric} in seed 000");
            for (s, (label, values)) in rows.iter().enumerate() {
                steps[s] = label.rsplit_once('-').expect("step label").1.to_string();
                parallelio[m][s] = *values;
            }
        }
        let own =
            |rows: &[(&str, [f64; 3])]| rows.iter().map(|(l, v)| (l.to_string(), *v)).collect();
        Tables {
            steps,
            parallelio,
            vmstat: own(seed000::VMSTAT),
            iostat: own(seed000::IOSTAT),
        }
    }

    /// parallelio values of `metric` at `step`.
    pub fn pio(&self, metric: &str, step: usize) -> [f64; 3] {
        let m = METRICS
            .iter()
            .position(|x| *x == metric)
            .expect("a parallelio metric");
        self.parallelio[m][step]
    }

    /// A vmstat row (zeros if absent, as MMTests reads a missing counter).
    pub fn vm(&self, label: &str) -> [f64; 3] {
        row(&self.vmstat, label)
    }

    /// An iostat row (zeros if absent).
    pub fn io(&self, label: &str) -> [f64; 3] {
        row(&self.iostat, label)
    }
}

fn row(rows: &[(String, [f64; 3])], label: &str) -> [f64; 3] {
    rows.iter()
        .find(|(l, _)| l == label)
        .map(|(_, v)| *v)
        .unwrap_or([0.0; 3])
}

/// Column indexes.
const V39: usize = 0;
const MMOTM: usize = 1;
const LD: usize = 2;
/// The steps the claims call "2385M" and "4055M".
const HEAVY: [usize; 2] = [2, 3];

fn kname(k: usize) -> &'static str {
    SEED000_KERNELS[k]
}

/// Normal/DMA32 scanning ratio; infinite when only Normal was scanned.
fn zone_ratio(t: &Tables, k: usize) -> f64 {
    let normal = t.vm("Zone normal velocity")[k];
    let dma32 = t.vm("Zone dma32 velocity")[k];
    if dma32 > 0.0 {
        normal / dma32
    } else if normal > 0.0 {
        f64::INFINITY
    } else {
        0.0
    }
}

/// Judge the claims of issue 3 (P1-P12) on `t`.
pub fn claims(t: &Tables) -> Vec<Verdict> {
    let mut out = Vec::new();
    let mut add = |id, claim, holds, values: Vec<(String, f64)>| {
        out.push(Verdict {
            id,
            claim,
            holds,
            values,
        })
    };
    let step = |s: usize| t.steps[s].clone();

    let base = t.pio("memcachetest", 0)[V39];
    let mut v = vec![(format!("{} memcachetest-{}", kname(V39), step(0)), base)];
    let mut holds = true;
    for s in HEAVY {
        let x = t.pio("memcachetest", s)[V39];
        holds &= x < 0.35 * base;
        v.push((format!("{} memcachetest-{}", kname(V39), step(s)), x));
    }
    add(
        "P1",
        "3.9: memcachetest at 2385M and 4055M is below 35% of its 0M figure",
        holds,
        v,
    );

    let mut v = Vec::new();
    let mut holds = true;
    for k in [MMOTM, LD] {
        let base = t.pio("memcachetest", 0)[k];
        for s in 0..4 {
            let x = t.pio("memcachetest", s)[k];
            holds &= x >= 0.9 * base;
            v.push((format!("{} memcachetest-{}", kname(k), step(s)), x));
        }
    }
    add("P2", "mmotm-20130522 and lessdisrupt-v7r10: memcachetest at every IO step is at least 90% of their own 0M", holds, v);

    let mut v = Vec::new();
    let mut holds = true;
    for s in HEAVY {
        let (a, b) = (t.pio("swaptotal", s)[V39], t.pio("swaptotal", s)[LD]);
        holds &= a >= 100.0 * b.max(1.0);
        v.push((format!("{} swaptotal-{}", kname(V39), step(s)), a));
        v.push((format!("{} swaptotal-{}", kname(LD), step(s)), b));
    }
    add(
        "P3",
        "swaptotal at 2385M and 4055M: 3.9 is at least 100 x max(1, lessdisrupt-v7r10)",
        holds,
        v,
    );

    let mut v = Vec::new();
    let mut holds = true;
    for s in HEAVY {
        let (a, b) = (t.pio("majorfaults", s)[V39], t.pio("majorfaults", s)[LD]);
        holds &= b <= 0.05 * a;
        v.push((format!("{} majorfaults-{}", kname(V39), step(s)), a));
        v.push((format!("{} majorfaults-{}", kname(LD), step(s)), b));
    }
    add(
        "P4",
        "majorfaults at 2385M and 4055M: lessdisrupt-v7r10 at most 5% of 3.9",
        holds,
        v,
    );

    let mut v = Vec::new();
    let mut holds = true;
    for s in HEAVY {
        let io = t.pio("io-duration", s);
        v.push((format!("{} io-duration-{}", kname(V39), step(s)), io[V39]));
        for k in [MMOTM, LD] {
            holds &= io[k] <= 0.5 * io[V39];
            v.push((format!("{} io-duration-{}", kname(k), step(s)), io[k]));
        }
    }
    add(
        "P5",
        "io-duration at 2385M and 4055M: both patched kernels at most 50% of 3.9",
        holds,
        v,
    );

    let e = t.vm("Kswapd efficiency");
    add(
        "P6",
        "Kswapd efficiency: lessdisrupt-v7r10 at least twice that of 3.9 and of mmotm-20130522",
        e[LD] >= 2.0 * e[V39] && e[LD] >= 2.0 * e[MMOTM],
        per_kernel("Kswapd efficiency", e),
    );

    let w = t.vm("Page writes by reclaim");
    add(
        "P7",
        "Page writes by reclaim: mmotm-20130522 > 3.9 > lessdisrupt-v7r10, the last at most 10% of 3.9",
        w[MMOTM] > w[V39] && w[V39] > w[LD] && w[LD] <= 0.1 * w[V39],
        per_kernel("Page writes by reclaim", w),
    );

    let kv = t.vm("Kswapd velocity");
    add(
        "P8",
        "Kswapd velocity: lessdisrupt-v7r10 at most half of 3.9 and of mmotm-20130522",
        kv[LD] <= 0.5 * kv[V39] && kv[LD] <= 0.5 * kv[MMOTM],
        per_kernel("Kswapd velocity", kv),
    );

    let (r0, r2) = (zone_ratio(t, V39), zone_ratio(t, LD));
    add(
        "P9",
        "Zone velocity ratio Normal/DMA32: 3.9's ratio at least 5 x lessdisrupt-v7r10's",
        r0 >= 5.0 * r2 && r0 > 0.0,
        vec![
            (format!("{} Normal/DMA32", kname(V39)), r0),
            (format!("{} Normal/DMA32", kname(LD)), r2),
        ],
    );

    let sr = t.vm("Sector Reads");
    add(
        "P10",
        "Sector Reads: both patched kernels at most 25% of 3.9",
        sr[MMOTM] <= 0.25 * sr[V39] && sr[LD] <= 0.25 * sr[V39],
        per_kernel("Sector Reads", sr),
    );

    let wa = t.io("Max sda-w_await");
    add(
        "P11",
        "Max w_await of the test disk: both patched kernels at most 25% of 3.9",
        wa[MMOTM] <= 0.25 * wa[V39] && wa[LD] <= 0.25 * wa[V39] && wa[V39] > 0.0,
        per_kernel("Max sda-w_await", wa),
    );

    let so = t.vm("Swap Outs");
    add(
        "P12",
        "Swap Outs: both patched kernels at most 1% of 3.9",
        so[MMOTM] <= 0.01 * so[V39] && so[LD] <= 0.01 * so[V39],
        per_kernel("Swap Outs", so),
    );
    out
}

fn per_kernel(row: &str, v: [f64; 3]) -> Vec<(String, f64)> {
    (0..3)
        .map(|k| (format!("{} {row}", kname(k)), v[k]))
        .collect()
}

/// The experiment's procedure (`mmtests.md` §6.1) and the machine it runs on.
#[derive(Clone, Debug, PartialEq)]
pub struct Procedure {
    /// RAM of the machine. Seed 000's step labels (715M, 2385M, 4055M) put its MemTotal near
    /// 7157 MiB; this RAM gives a MemTotal within a few MiB of that.
    pub ram: u64,
    /// CPUs (the cover letter does not say; 4 is an assumption).
    pub cpus: u32,
    /// Swap size, on its own disk (`sdb`).
    pub swap: u64,
    /// memcachetest's run per iteration (`MEMCACHETEST_DURATION`, 200 s).
    pub duration: Nanos,
    /// Iterations per IO step (`PARALLELIO_ITERATIONS`, 5).
    pub iterations: u32,
    /// Base seed; iteration `i` of step `s` runs with `seed * 1000 + s * 10 + i`, the same
    /// for every kernel so that kernels are compared on the same random keys.
    pub seed: u64,
}

impl Procedure {
    /// The published procedure.
    pub fn published() -> Procedure {
        Procedure {
            ram: 7336 << 20,
            cpus: 4,
            swap: 8 << 30,
            duration: 200 * SEC,
            iterations: 5,
            seed: 1,
        }
    }

    /// A short version for tests (`--fast`): a quarter of the memory, 60 s, 2 iterations.
    pub fn fast() -> Procedure {
        Procedure {
            ram: 1834 << 20,
            duration: 60 * SEC,
            iterations: 2,
            swap: 2 << 30,
            ..Procedure::published()
        }
    }

    /// MemTotal: the managed pages of the machine, in bytes.
    pub fn mem_total(&self) -> u64 {
        let zones = crate::mm::page_alloc::build_zones(self.ram / PAGE_SIZE);
        zones.iter().map(|z| z.managed_pages).sum::<u64>() * PAGE_SIZE
    }

    /// The dd size of each IO step: 0, then MIN + (k-1)·⌊(MAX-MIN)/3⌋ with MIN = MemTotal/10
    /// and MAX = 0.8·MemTotal, in whole MiB as `dd bs=1M count=N` writes it.
    pub fn step_sizes(&self) -> [u64; 4] {
        let total = self.mem_total();
        let pool = total / 5 * 4;
        let min = (total - pool) / 2;
        let max = (total - pool) * 4;
        let inc = (max - min) / 3;
        let mib = |b: u64| b >> 20 << 20;
        [0, mib(min), mib(min + inc), mib(min + 2 * inc)]
    }

    /// Step labels as MMTests prints them: bytes / 2^20, truncated, with "M".
    pub fn step_labels(&self) -> [String; 4] {
        self.step_sizes().map(|b| format!("{}M", b >> 20))
    }

    /// The scenario of one iteration of one step (`step` 0 is memcachetest alone).
    pub fn scenario(&self, step: usize) -> Scenario {
        let total = self.mem_total();
        let pool = total / 5 * 4;
        let mut workloads = vec![Workload {
            name: "memcachetest".into(),
            start: 0,
            kind: WorkloadKind::Memcachetest {
                pool: pool / PAGE_SIZE * PAGE_SIZE,
                value_size: 16384,
                set_percent: 33,
                threads: 1,
            },
        }];
        let size = self.step_sizes()[step];
        if size > 0 {
            workloads.push(Workload {
                name: "dd".into(),
                start: 0,
                kind: WorkloadKind::Dd(DdParams {
                    device: "sda".into(),
                    size,
                    bs: 1 << 20,
                    conv: DdConv::Fdatasync,
                    truncate_to: None,
                    unlink: false,
                    start_when_used: Some(pool / 5 * 4),
                }),
            });
        }
        // Swap on its own 7200 rpm disk, as on the seed's test machine.
        let mut swap_disk = BlockDevice::ext4_hdd("sdb");
        swap_disk.filesystem = Filesystem::Raw;
        Scenario {
            name: "parallelio".into(),
            machine: Machine {
                ram: self.ram,
                cpus: self.cpus,
                swap: Some(SwapDevice {
                    size: self.swap,
                    read_latency: 0,
                    write_latency: 0,
                    bandwidth: 1,
                    device: Some("sdb".into()),
                }),
                devices: vec![BlockDevice::ext4_hdd("sda"), swap_disk],
            },
            vm: Default::default(),
            run: RunParams {
                duration: self.duration,
                seed: self.seed,
            },
            kernel: Default::default(),
            slab: Default::default(),
            workloads,
        }
    }

    /// The seed of iteration `iteration` of step `step`.
    pub fn seed_of(&self, step: usize, iteration: u32) -> u64 {
        self.seed * 1000 + step as u64 * 10 + iteration as u64
    }

    /// Every run of one kernel, in order: a warm-up memcachetest run (whose counters go into
    /// the vmstat table, as MMTests' whole-test snapshots include it), then each step's
    /// iterations. (step, iteration); the warm-up is (0, u32::MAX).
    pub fn runs(&self) -> Vec<(usize, u32)> {
        let mut v = vec![(0, u32::MAX)];
        for step in 0..4 {
            for i in 0..self.iterations {
                v.push((step, i));
            }
        }
        v
    }
}

/// Run one (kernel, step, iteration) of the experiment.
pub fn run_one(
    p: &Procedure,
    kernel: &str,
    step: usize,
    iteration: u32,
) -> Result<RunResult, SimError> {
    let k = presets::resolve(kernel, &[]).expect("seed 000's presets exist");
    let s = p.scenario(step);
    let seed = if iteration == u32::MAX {
        p.seed * 1000 + 999
    } else {
        p.seed_of(step, iteration)
    };
    sim::run(&s, &k, seed, RunOptions::default())
}

/// The tables of the experiment from its runs: `runs[k]` holds kernel k's runs in
/// [`Procedure::runs`] order.
// `step` selects both the runs and the table cells, so a range loop reads best here.
#[allow(clippy::needless_range_loop)]
pub fn tables(p: &Procedure, runs: &[Vec<RunResult>; 3]) -> Tables {
    let order = p.runs();
    let mut parallelio = [[[0.0; 3]; 4]; 6];
    let mut vm_sum: Vec<Vec<(String, u64)>> = Vec::new();
    let mut iostat = Vec::new();
    for (k, kruns) in runs.iter().enumerate() {
        for step in 0..4 {
            // The worst iteration by memcachetest ops/sec gives every row of the step.
            let worst = order
                .iter()
                .zip(kruns)
                .filter(|((s, i), _)| *s == step && *i != u32::MAX)
                .map(|(_, r)| r)
                .min_by(|a, b| {
                    let x = a.metric("memcachetest", "ops_per_sec").unwrap_or(0.0);
                    let y = b.metric("memcachetest", "ops_per_sec").unwrap_or(0.0);
                    x.total_cmp(&y)
                })
                .expect("every step has iterations");
            let v = |n: &str| worst.vmstat(n) as f64;
            let row = [
                worst.metric("memcachetest", "ops_per_sec").unwrap_or(0.0),
                worst
                    .metric("dd", "io_seconds")
                    .map(f64::trunc)
                    .unwrap_or(0.0),
                v("pswpin") + v("pswpout"),
                v("pswpin"),
                v("pgfault") - v("pgmajfault"),
                v("pgmajfault"),
            ];
            for (m, x) in row.into_iter().enumerate() {
                parallelio[m][step][k] = x;
            }
        }
        // The whole test: counters summed over every run, velocity over all its time.
        let mut sum: Vec<(String, u64)> = kruns[0].vmstat.clone();
        for r in &kruns[1..] {
            for ((_, total), (_, x)) in sum.iter_mut().zip(&r.vmstat) {
                *total += x;
            }
        }
        vm_sum.push(sum);
        let elapsed: f64 = kruns.iter().map(|r| r.simulated_seconds).sum();
        let lookup = |name: &str| {
            vm_sum[k]
                .iter()
                .find(|(n, _)| n == name)
                .map_or(0, |(_, v)| *v)
        };
        let rows = crate::report::mmtests::vmstat_summary(&lookup, elapsed, true);
        iostat.push((rows, {
            let samples: Vec<_> = kruns
                .iter()
                .flat_map(|r| {
                    r.devices
                        .iter()
                        .filter(|d| d.name == "sda")
                        .flat_map(|d| d.iostat.iter().cloned())
                })
                .collect();
            crate::block::IostatSummary::from_samples(&samples)
        }));
    }
    let mut vmstat: Vec<(String, [f64; 3])> = Vec::new();
    for (i, (label, _)) in iostat[0].0.iter().enumerate() {
        let vals = [0, 1, 2].map(|k| crate::report::mmtests::json_value(&iostat[k].0[i].1));
        vmstat.push((label.to_string(), vals));
    }
    let per_kernel: Vec<[(String, f64); 8]> = iostat
        .iter()
        .map(|(_, s)| crate::report::mmtests::iostat_rows("sda", &s.unwrap_or_default()))
        .collect();
    let iostat_rows: Vec<(String, [f64; 3])> = (0..8)
        .map(|i| {
            (
                per_kernel[0][i].0.clone(),
                [0, 1, 2].map(|k| per_kernel[k][i].1),
            )
        })
        .collect();
    Tables {
        steps: p.step_labels(),
        parallelio,
        vmstat,
        iostat: iostat_rows,
    }
}

/// The `--json` object of the experiment: both tables per kernel, rows by their MMTests
/// labels, and every claim with its verdict.
pub fn to_json(published: &Tables, simulated: &Tables) -> serde_json::Value {
    use serde_json::{json, Map, Value};
    let table = |t: &Tables| -> Value {
        let mut kernels = Map::new();
        for (k, name) in SEED000_KERNELS.iter().enumerate() {
            let mut rows = Map::new();
            for (m, metric) in METRICS.iter().enumerate() {
                for step in 0..4 {
                    rows.insert(
                        format!("Ops {metric}-{}", t.steps[step]),
                        json!(t.parallelio[m][step][k]),
                    );
                }
            }
            for (label, v) in t.vmstat.iter().chain(&t.iostat) {
                rows.insert(label.clone(), json!(v[k]));
            }
            kernels.insert(name.to_string(), Value::Object(rows));
        }
        Value::Object(kernels)
    };
    let claims: Vec<Value> = claims(simulated)
        .into_iter()
        .map(|v| {
            let values: Map<String, Value> =
                v.values.into_iter().map(|(n, x)| (n, json!(x))).collect();
            json!({"id": v.id, "claim": v.claim, "holds": v.holds, "values": values})
        })
        .collect();
    json!({
        "experiment": "parallelio",
        "published": table(published),
        "simulated": table(simulated),
        "claims": claims,
    })
}

/// The report `mmsim reproduce parallelio` prints: the three tables in MMTests'
/// compare-kernels layout with each kernel's published figure beside its simulated one,
/// then every claim with its verdict on the simulated tables and the numbers it was judged
/// on. Row labels carry the simulated machine's IO step sizes.
pub fn report(published: &Tables, simulated: &Tables) -> String {
    use crate::report::mmtests::{
        format_iostat_table, format_monitor_table, format_paired_compare_table, vmstat_cell,
        Direction,
    };
    let sources = ["published", "simulated"];
    let pair =
        |p: [f64; 3], s: [f64; 3]| -> Vec<[f64; 2]> { (0..3).map(|k| [p[k], s[k]]).collect() };
    let mut rows = Vec::new();
    for metric in METRICS {
        let direction = if metric == "memcachetest" {
            Direction::Higher
        } else {
            Direction::Lower
        };
        for step in 0..4 {
            let label = format!("Ops {metric}-{}", simulated.steps[step]);
            rows.push((
                label,
                pair(published.pio(metric, step), simulated.pio(metric, step)),
                direction,
            ));
        }
    }
    let mut out = String::from("parallelio\n");
    out.push_str(&format_paired_compare_table(
        &SEED000_KERNELS,
        sources,
        &rows,
        18,
    ));
    let columns: Vec<String> = SEED000_KERNELS
        .iter()
        .flat_map(|k| sources.iter().map(move |s| format!("{s}-{k}")))
        .collect();
    let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
    let vm_rows: Vec<_> = published
        .vmstat
        .iter()
        .map(|(label, p)| {
            let s = simulated.vm(label);
            let cells = (0..3)
                .flat_map(|k| [vmstat_cell(label, p[k]), vmstat_cell(label, s[k])])
                .collect();
            (label.clone(), cells)
        })
        .collect();
    out.push('\n');
    out.push_str(&format_monitor_table(&columns, &vm_rows));
    let io_rows: Vec<_> = published
        .iostat
        .iter()
        .map(|(label, p)| {
            let s = simulated.io(label);
            (label.clone(), (0..3).flat_map(|k| [p[k], s[k]]).collect())
        })
        .collect();
    out.push('\n');
    out.push_str(&format_iostat_table(&columns, &io_rows));
    out.push_str("\nClaims (judged on the simulated tables)\n");
    for v in claims(simulated) {
        let values: Vec<String> = v
            .values
            .iter()
            .map(|(what, x)| format!("{what} = {x}"))
            .collect();
        out.push_str(&format!(
            "{:<4} {:<6} {}\n     {}\n",
            v.id,
            if v.holds { "holds" } else { "FAILS" },
            v.claim,
            values.join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_published_tables_have_every_row_the_claims_read() {
        let t = Tables::published();
        assert_eq!(t.steps, ["0M", "715M", "2385M", "4055M"].map(String::from));
        assert_eq!(t.pio("memcachetest", 2), [4208.0, 24154.0, 23765.0]);
        assert_eq!(t.pio("majorfaults", 3), [21357.0, 147.0, 134.0]);
        for label in [
            "Kswapd efficiency",
            "Page writes by reclaim",
            "Kswapd velocity",
            "Zone normal velocity",
            "Zone dma32 velocity",
            "Sector Reads",
            "Swap Outs",
        ] {
            assert_ne!(t.vm(label), [0.0; 3], "{label}");
        }
        assert_eq!(t.io("Max sda-w_await"), [28458.94, 3977.29, 3148.61]);
    }

    #[test]
    fn every_claim_holds_on_the_published_tables() {
        let verdicts = claims(&Tables::published());
        assert_eq!(verdicts.len(), 12);
        for v in &verdicts {
            assert!(
                v.holds,
                "{} does not hold on the published data: {:?}",
                v.id, v.values
            );
            assert!(!v.values.is_empty());
        }
    }

    #[test]
    fn a_claim_fails_when_its_numbers_say_so() {
        let mut t = Tables::published();
        // Make lessdisrupt swap as much as 3.9: P3 and P12 must fail, the others not.
        let so = t.vmstat.iter_mut().find(|(l, _)| l == "Swap Outs").unwrap();
        so.1[2] = so.1[0];
        let m = METRICS.iter().position(|x| *x == "swaptotal").unwrap();
        t.parallelio[m][2][2] = t.parallelio[m][2][0];
        let failed: Vec<_> = claims(&t)
            .into_iter()
            .filter(|v| !v.holds)
            .map(|v| v.id)
            .collect();
        assert_eq!(failed, vec!["P3", "P12"]);
    }

    #[test]
    fn report_puts_each_published_figure_beside_the_simulated_one() {
        let p = Tables::published();
        let mut sim = Tables::published();
        sim.steps[2] = "2384M".into();
        let m = METRICS.iter().position(|x| *x == "memcachetest").unwrap();
        sim.parallelio[m][2] = [4000.0, 24000.0, 23000.0];
        let text = report(&p, &sim);
        let line = text
            .lines()
            .find(|l| l.starts_with("Ops memcachetest-2384M"))
            .unwrap();
        // value, percentage, value, percentage... for 3.9 published, 3.9 simulated,
        // mmotm published, mmotm simulated, lessdisrupt published, lessdisrupt simulated.
        let nums: Vec<f64> = line["Ops memcachetest-2384M".len()..]
            .split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == '%')
            .filter_map(|t| t.parse().ok())
            .collect();
        assert_eq!(nums.len(), 12, "{line}");
        assert_eq!(
            (nums[0], nums[2], nums[4], nums[6]),
            (4208.0, 4000.0, 24154.0, 24000.0)
        );
        // Each percentage is against the same source's 3.9: 24000 vs 4000 is +500%.
        assert_eq!(nums[5], 474.0);
        assert_eq!(nums[7], 500.0);
        assert!(text.contains("Kswapd efficiency"));
        assert!(text.contains("Max  sda-w_await") || text.contains("Max sda-w_await"));
        assert_eq!(text.matches("holds").count(), 12, "{text}");
    }

    #[test]
    fn zone_ratio_is_infinite_when_only_normal_is_scanned() {
        let mut t = Tables::published();
        for (l, v) in t.vmstat.iter_mut() {
            if l == "Zone dma32 velocity" {
                v[0] = 0.0;
            }
        }
        assert_eq!(zone_ratio(&t, 0), f64::INFINITY);
        assert!(claims(&t).iter().find(|v| v.id == "P9").unwrap().holds);
    }
}
