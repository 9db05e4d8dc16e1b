//! Seed 000's parallelio experiment (MMTests parallelio + memcachetest on ext4, `mmtests.md`
//! §6.1): the result tables and the claims P1-P12 of issue 3.
//!
//! Tables are indexed by kernel (the columns of [`SEED000_KERNELS`]) and, for the parallelio
//! table, by IO step 0..=3 rather than by label: a simulated machine's MemTotal gives labels
//! such as "2384M" where the published one gave "2385M".

use super::{seed000, verdict_number, verdict_summary, Verdict, SEED000_KERNELS};
use crate::calibration::PAGE_SIZE;
use crate::engine::{Nanos, SEC};
use crate::presets;
use crate::report::RunResult;
use crate::scenario::{
    BlockDevice, Filesystem, Machine, ParallelioParams, RunParams, Scenario, SwapDevice, Workload,
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
    let mut add = |id, claim: String, holds, values: Vec<(String, f64)>| {
        let judged = values.iter().any(|(_, x)| *x != 0.0);
        out.push(Verdict {
            id,
            claim,
            holds: holds && judged,
            judged,
            values,
        })
    };
    let step = |s: usize| t.steps[s].clone();
    let heavy = format!("{} and {}", step(HEAVY[0]), step(HEAVY[1]));

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
        format!(
            "3.9: memcachetest at {heavy} is below 35% of its {} figure",
            step(0)
        ),
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
    add(
        "P2",
        format!(
            "mmotm-20130522 and lessdisrupt-v7r10: memcachetest at every IO step is at least \
             90% of their own {} (the {} figure is a calibration input)",
            step(0),
            step(0)
        ),
        holds,
        v,
    );

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
        format!("swaptotal at {heavy}: 3.9 is at least 100 x max(1, lessdisrupt-v7r10)"),
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
        format!("majorfaults at {heavy}: lessdisrupt-v7r10 at most 5% of 3.9"),
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
        format!("io-duration at {heavy}: both patched kernels at most 50% of 3.9"),
        holds,
        v,
    );

    let e = t.vm("Kswapd efficiency");
    add(
        "P6",
        "Kswapd efficiency: lessdisrupt-v7r10 at least twice that of 3.9 and of mmotm-20130522"
            .into(),
        e[LD] >= 2.0 * e[V39] && e[LD] >= 2.0 * e[MMOTM],
        per_kernel("Kswapd efficiency", e),
    );

    let w = t.vm("Page writes by reclaim");
    add(
        "P7",
        "Page writes by reclaim: mmotm-20130522 > 3.9 > lessdisrupt-v7r10, the last at most 10% of 3.9".into(),
        w[MMOTM] > w[V39] && w[V39] > w[LD] && w[LD] <= 0.1 * w[V39],
        per_kernel("Page writes by reclaim", w),
    );

    let kv = t.vm("Kswapd velocity");
    add(
        "P8",
        "Kswapd velocity: lessdisrupt-v7r10 at most half of 3.9 and of mmotm-20130522".into(),
        kv[LD] <= 0.5 * kv[V39] && kv[LD] <= 0.5 * kv[MMOTM],
        per_kernel("Kswapd velocity", kv),
    );

    let (r0, r2) = (zone_ratio(t, V39), zone_ratio(t, LD));
    add(
        "P9",
        "Zone velocity ratio Normal/DMA32: 3.9's ratio at least 5 x lessdisrupt-v7r10's".into(),
        r0 >= 5.0 * r2 && r0 > 0.0,
        vec![
            (format!("{} Normal/DMA32", kname(V39)), r0),
            (format!("{} Normal/DMA32", kname(LD)), r2),
        ],
    );

    let sr = t.vm("Sector Reads");
    add(
        "P10",
        "Sector Reads: both patched kernels at most 25% of 3.9".into(),
        sr[MMOTM] <= 0.25 * sr[V39] && sr[LD] <= 0.25 * sr[V39],
        per_kernel("Sector Reads", sr),
    );

    let wa = t.io("Max sda-w_await");
    add(
        "P11",
        "Max w_await of the test disk: both patched kernels at most 25% of 3.9".into(),
        wa[MMOTM] <= 0.25 * wa[V39] && wa[LD] <= 0.25 * wa[V39] && wa[V39] > 0.0,
        per_kernel("Max sda-w_await", wa),
    );

    let so = t.vm("Swap Outs");
    add(
        "P12",
        "Swap Outs: both patched kernels at most 1% of 3.9".into(),
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
    /// Base seed, the same for every kernel so that kernels are compared on the same random
    /// keys: iteration `i` of step `s` runs with `seed * 1000 + s * 10 + i`, the warm-up with
    /// `seed * 1000 + 999`; a sequential run uses `seed`.
    pub seed: u64,
    /// Run everything on one machine per kernel, as MMTests does, so that each iteration
    /// starts with what the last one left in memory. Otherwise (the default) every
    /// iteration is its own machine with its own seed, and runs go in parallel.
    pub sequential: bool,
}

/// One simulation of the experiment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Run {
    /// The warm-up memcachetest alone.
    Warmup,
    /// Iteration `.1` of IO step `.0`, on a fresh machine.
    Iteration(usize, u32),
    /// The whole procedure on one machine.
    Sequential,
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
            sequential: false,
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

    /// What the report says of the procedure before its tables: the machine and the runs,
    /// and, when they are not the published ones, that the published figures do not compare
    /// cell by cell.
    pub fn describe(&self) -> String {
        let published = Procedure {
            sequential: self.sequential,
            seed: self.seed,
            ..Procedure::published()
        };
        let mut out = format!(
            "Seed 000 (\"Reduce system disruption due to kswapd followup\" V3): MMTests \
             parallelio, published figures beside simulated ones\n\
             Procedure: {} MiB RAM, {} CPUs, {} GiB of swap on its own 7200 rpm disk (sdb), \
             largefile on ext4 on a 7200 rpm disk (sda); {} s memcachetest runs, {} \
             iterations per IO step, {}.\n",
            self.ram >> 20,
            self.cpus,
            self.swap >> 30,
            self.duration / SEC,
            self.iterations,
            if self.sequential {
                "all on one machine per kernel, in MMTests' order"
            } else {
                "each iteration on a fresh machine with its own seed"
            }
        );
        if *self != published {
            out.push_str(&format!(
                "Caveat: this is not the published procedure ({} MiB RAM, {} s runs, {} \
                 iterations): the published figures are shown for direction only and do not \
                 compare cell by cell.\n",
                published.ram >> 20,
                published.duration / SEC,
                published.iterations
            ));
        }
        out
    }

    /// MemTotal: the managed pages of the machine, in bytes.
    pub fn mem_total(&self) -> u64 {
        let zones = crate::mm::page_alloc::build_zones(self.ram / PAGE_SIZE);
        zones.iter().map(|z| z.managed_pages).sum::<u64>() * PAGE_SIZE
    }

    /// memcached's pool: 4/5 of MemTotal, in whole pages (MEMCACHED_MEMPOOL).
    pub fn pool(&self) -> u64 {
        self.mem_total() / 5 * 4 / PAGE_SIZE * PAGE_SIZE
    }

    /// The dd size of each IO step (MMTests' three increments, see
    /// [`ParallelioParams::mmtests_steps`]).
    pub fn step_sizes(&self) -> [u64; 4] {
        let s = ParallelioParams::mmtests_steps(self.mem_total(), self.pool(), 3);
        [s[0], s[1], s[2], s[3]]
    }

    /// Step labels as MMTests prints them: bytes / 2^20, truncated, with "M".
    pub fn step_labels(&self) -> [String; 4] {
        self.step_sizes().map(ParallelioParams::label)
    }

    /// The simulations of the experiment, in the order their results are read.
    pub fn runs(&self) -> Vec<Run> {
        if self.sequential {
            return vec![Run::Sequential];
        }
        let mut v = vec![Run::Warmup];
        for step in 0..4 {
            v.extend((0..self.iterations).map(|i| Run::Iteration(step, i)));
        }
        v
    }

    /// Simulated seconds `run` takes at least (every phase is one memcachetest run).
    pub fn min_seconds(&self, run: Run) -> u64 {
        let phases = match run {
            Run::Sequential => 1 + 4 * self.iterations as u64,
            _ => 1,
        };
        phases * (self.duration / SEC)
    }

    /// The seed of `run`.
    pub fn seed_of(&self, run: Run) -> u64 {
        match run {
            Run::Warmup => self.seed * 1000 + 999,
            Run::Iteration(step, i) => self.seed * 1000 + step as u64 * 10 + i as u64,
            Run::Sequential => self.seed,
        }
    }

    /// One simulation: MMTests' parallelio driver writing to ext4 on `sda`, swap on its
    /// own 7200 rpm disk `sdb` as on the seed's test machine. The run ends when the driver
    /// does.
    pub fn scenario(&self, run: Run) -> Scenario {
        let mut swap_disk = BlockDevice::ext4_hdd("sdb");
        swap_disk.filesystem = Filesystem::Raw;
        let sizes = self.step_sizes();
        let (steps, iterations, warmup) = match run {
            Run::Warmup => (vec![0], 1, false),
            Run::Iteration(step, _) => (vec![sizes[step]], 1, false),
            Run::Sequential => (sizes.to_vec(), self.iterations, true),
        };
        let phases = (steps.len() as u64) * iterations as u64 + warmup as u64;
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
                // An upper bound only: every phase takes memcachetest's duration, or dd's
                // time if that is longer.
                duration: phases * (self.duration + 3600 * SEC),
                seed: self.seed_of(run),
                end_when_done: true,
            },
            kernel: Default::default(),
            slab: Default::default(),
            workloads: vec![Workload {
                name: "parallelio".into(),
                start: 0,
                kind: WorkloadKind::Parallelio(ParallelioParams {
                    device: "sda".into(),
                    pool: self.pool(),
                    value_size: 16384,
                    threads: 1,
                    duration: self.duration,
                    iterations,
                    steps,
                    warmup,
                }),
            }],
        }
    }
}

/// One simulation of the experiment under one kernel. `progress` hears the simulated time
/// now and then.
pub fn run_one(
    p: &Procedure,
    kernel: &str,
    run: Run,
    progress: Option<Box<dyn FnMut(Nanos) + Send>>,
) -> Result<RunResult, SimError> {
    let k = presets::resolve(kernel, &[]).expect("seed 000's presets exist");
    let s = p.scenario(run);
    let outputs = sim::RunOutputs {
        progress,
        ..Default::default()
    };
    sim::run_with(&s, &k, p.seed_of(run), RunOptions::default(), outputs).map(|(r, _)| r)
}

/// The tables of the experiment from each kernel's runs (`runs[k]` holds kernel k's runs
/// in [`Procedure::runs`] order). Per IO step, the worst iteration by memcachetest ops/sec
/// over all runs gives every row of the step (ExtractParallelio); the vmstat and iostat
/// tables cover the whole test: counters summed over the runs, velocities over their
/// simulated time.
pub fn tables(p: &Procedure, runs: &[Vec<RunResult>; 3]) -> Tables {
    let labels = p.step_labels();
    let mut parallelio = [[[0.0; 3]; 4]; 6];
    for (k, kruns) in runs.iter().enumerate() {
        for (step, label) in labels.iter().enumerate() {
            let row = |r: &RunResult, m: &str| r.metric("parallelio", &format!("{m}-{label}"));
            let worst = kruns
                .iter()
                .filter(|r| row(r, "memcachetest").is_some())
                .min_by(|a, b| {
                    let ops = |r: &RunResult| row(r, "memcachetest").unwrap_or(0.0);
                    ops(a).total_cmp(&ops(b))
                });
            for (m, metric) in METRICS.iter().enumerate() {
                parallelio[m][step][k] = worst.and_then(|r| row(r, metric)).unwrap_or(0.0);
            }
        }
    }
    let mut vmstat: Vec<(String, [f64; 3])> = Vec::new();
    let mut iostat_rows: Vec<(String, [f64; 3])> = Vec::new();
    for (k, kruns) in runs.iter().enumerate() {
        let lookup = |name: &str| kruns.iter().map(|r| r.vmstat(name)).sum::<u64>();
        let elapsed: f64 = kruns.iter().map(|r| r.simulated_seconds).sum();
        let rows = crate::report::mmtests::vmstat_summary(&lookup, elapsed, true);
        for (i, (label, cell)) in rows.iter().enumerate() {
            if k == 0 {
                vmstat.push((label.to_string(), [0.0; 3]));
            }
            vmstat[i].1[k] = crate::report::mmtests::json_value(cell);
        }
        let samples: Vec<_> = kruns
            .iter()
            .flat_map(|r| r.devices.iter().filter(|d| d.name == "sda"))
            .flat_map(|d| d.iostat.iter().cloned())
            .collect();
        let summary = crate::block::IostatSummary::from_samples(&samples).unwrap_or_default();
        for (i, (label, v)) in crate::report::mmtests::iostat_rows("sda", &summary)
            .into_iter()
            .enumerate()
        {
            if k == 0 {
                iostat_rows.push((label, [0.0; 3]));
            }
            iostat_rows[i].1[k] = v;
        }
    }
    Tables {
        steps: labels,
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
    let verdicts = claims(simulated);
    let judged: Vec<Value> = verdicts
        .iter()
        .map(|v| {
            let values: Map<String, Value> = v
                .values
                .iter()
                .map(|(n, x)| (n.clone(), json!(x)))
                .collect();
            json!({
                "id": v.id,
                "claim": v.claim,
                "verdict": v.outcome(),
                "holds": v.holds,
                "judged": v.judged,
                "values": values,
            })
        })
        .collect();
    json!({
        "experiment": "parallelio",
        "summary": verdict_summary(&verdicts),
        "published": table(published),
        "simulated": table(simulated),
        "claims": judged,
    })
}

/// The report `mmsim reproduce parallelio` prints: the three tables in MMTests'
/// compare-kernels layout with each kernel's published figure beside its simulated one,
/// then every claim with its verdict on the simulated tables and the numbers it was judged
/// on. Row labels carry the simulated machine's IO step sizes.
pub fn report(p: &Procedure, published: &Tables, simulated: &Tables) -> String {
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
    let mut out = p.describe();
    out.push_str("\nparallelio\n");
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
    let verdicts = claims(simulated);
    for v in &verdicts {
        let values: Vec<String> = v
            .values
            .iter()
            .map(|(what, x)| format!("{what} = {}", verdict_number(*x)))
            .collect();
        out.push_str(&format!(
            "{:<4} {:<10} {}\n     {}\n",
            v.id,
            v.outcome(),
            v.claim,
            values.join(", ")
        ));
    }
    out.push_str(&format!("\n{}\n", verdict_summary(&verdicts)));
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
        let text = report(&Procedure::published(), &p, &sim);
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
        let verdicts = text
            .lines()
            .filter(|l| l.starts_with('P') && l.as_bytes()[1].is_ascii_digit());
        assert_eq!(verdicts.count(), 12, "{text}");
        assert!(text.ends_with("\n12 of 12 claims hold\n"), "{text}");
        assert!(!text.contains("Caveat"), "{text}");
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
