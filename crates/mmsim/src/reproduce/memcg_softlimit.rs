//! Seed 001 (Michal Hocko, "memcg, vmscan: integrate soft reclaim tighter with zone
//! shrinking code", v5.1, July 2013): the old priority-0 soft-limit reclaim of
//! mmotm-2013-07-18 against the rework, on the letter's two tests, with `/usr/bin/time -v`
//! figures per workload, the letter's rows published beside simulated, and its conclusions
//! (M1-M7) judged.
//!
//! - TEST 1: a 32-CPU machine booted with 1 GB; two `make -j8` builds of a distribution
//!   config, each in a group of its own without a hard limit, both pinned to node 0's CPUs
//!   (0-7); without soft limits, then with soft limit 0 on both groups. Each boot gives two
//!   builds: the letter's "runs: 6" are 3 boots of 2 builds (`docs/seed-001.md`).
//! - TEST 2: a 16 GB machine, one node. A: `dd if=/dev/zero of=local.file bs=1024` of
//!   2 x MemTotal with soft limit 0; B: a mem_eater of MemTotal - 1 GB in 100 chunks with a
//!   1 s nap after each, no limits. The run ends with dd; swap used is sampled every second.

use super::parallelio::{Compared, Fidelity};
use super::Verdict;
use crate::engine::{MSEC, SEC};
use crate::presets;
use crate::report::timeseries::TimeSeries;
use crate::report::RunResult;
use crate::sim::{self, RunOptions, SimError};

/// The letter's base and the series, in its column order.
pub const KERNELS: [&str; 2] = ["mmotm-2013-07-18", "softlimit-rework-v5.1"];
/// The letter's labels of the two kernels.
pub const LABELS: [&str; 2] = ["base", "rework"];

/// The letter's `/usr/bin/time -v` rows, in its order.
pub const METRICS: [&str; 5] = ["User", "System", "Elapsed", "Minor", "Major"];

pub use crate::calibration::{
    KBUILD_DISTRO_COMPILE_NS as DISTRO_COMPILE_CPU, KBUILD_DISTRO_UNITS as DISTRO_UNITS,
};

/// The three configurations, in the letter's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Config {
    /// TEST 1 without soft limits.
    NoLimit,
    /// TEST 1 with soft limit 0 on both groups.
    ZeroLimit,
    /// TEST 2.
    Stream,
}

impl Config {
    pub const ALL: [Config; 3] = [Config::NoLimit, Config::ZeroLimit, Config::Stream];

    /// The heading the report gives it.
    pub fn title(self) -> &'static str {
        match self {
            Config::NoLimit => "TEST 1, no soft limit",
            Config::ZeroLimit => "TEST 1, soft limit 0 on both groups",
            Config::Stream => "TEST 2, stream IO (A, soft limit 0) against mem_eater (B)",
        }
    }

    /// Lower case, for file names and JSON keys.
    pub fn id(self) -> &'static str {
        match self {
            Config::NoLimit => "test1-no-limit",
            Config::ZeroLimit => "test1-0-limit",
            Config::Stream => "test2",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// The procedure.
#[derive(Clone, Debug, PartialEq)]
pub struct Procedure {
    /// Compile units of each build (the letter's distribution config: [`DISTRO_UNITS`]).
    pub units: u32,
    /// TEST 2's RAM, MiB (the letter: 16 GB).
    pub test2_ram_mb: u64,
    /// Boots per configuration and kernel (the letter: 3).
    pub boots: u32,
    /// Seed of the first boot; boot `b` runs on `seed + b` under both kernels.
    pub seed: u64,
}

impl Procedure {
    /// The letter's procedure.
    pub fn published() -> Procedure {
        Procedure {
            units: DISTRO_UNITS,
            test2_ram_mb: 16384,
            boots: 3,
            seed: 1,
        }
    }

    /// A short version for tests: builds of an eighth of the units (TEST 1's machine is
    /// kept: a compile's heap does not shrink with the build), TEST 2 on 8 GB (dd then
    /// still outlasts mem_eater's 100 naps), one boot.
    pub fn fast() -> Procedure {
        Procedure {
            units: DISTRO_UNITS / 8,
            test2_ram_mb: 8192,
            boots: 1,
            ..Procedure::published()
        }
    }

    fn is_published(&self) -> bool {
        *self
            == Procedure {
                seed: self.seed,
                ..Procedure::published()
            }
    }

    /// What the report says of the procedure.
    pub fn describe(&self) -> String {
        let mut out = format!(
            "Seed 001 (Hocko, soft-limit reclaim rework v5.1): base {} against rework {}\n\
             Procedure (docs/seed-001.md): one disk (sda, ext4) holding the trees, the file \
             and a 2 GiB swap partition; /usr/bin/time -v of each build (TEST 1) and of dd \
             (TEST 2); swap used (SwapTotal - SwapFree) sampled every second. {} boots per \
             configuration and kernel, seeds {} to {}; statistics over the samples \
             (population std, as MMTests).\n\
             TEST 1: 1024 MiB, 32 CPUs; two make -j8 of {} units, groups A and B, pinned to \
             CPUs 0-7.\nTEST 2: {} MiB, 8 CPUs; dd bs=1024 of 2 x MemTotal in A (soft limit \
             0); mem_eater of MemTotal - 1 GiB in 100 chunks with 1 s naps in B.\n",
            KERNELS[0],
            KERNELS[1],
            self.boots,
            self.seed,
            self.seed + self.boots as u64 - 1,
            self.units,
            self.test2_ram_mb,
        );
        if !self.is_published() {
            out.push_str(
                "Caveat: this is not the published procedure: the published figures are shown \
                 for direction only.\n",
            );
        }
        out
    }

    /// The scenario of `config`, as TOML.
    pub fn scenario_toml(&self, config: Config) -> String {
        let disk = "[[device]]\nname = \"sda\"\ntype = \"hdd\"\nfilesystem = \"ext4\"\n\n\
                    [swap]\nsize = \"2G\"\ndevice = \"sda\"\n\n";
        match config {
            Config::NoLimit | Config::ZeroLimit => {
                let soft = if config == Config::ZeroLimit {
                    "memory.soft_limit_in_bytes = 0\n"
                } else {
                    ""
                };
                let build = |g: &str| {
                    format!(
                        "[[workload]]\nname = \"kbuild-{g}\"\ntype = \"kbuild\"\ncgroup = \"{g}\"\n\
                         cpus = \"0-7\"\ndevice = \"sda\"\njobs = 8\nunits = {}\nrepeat = false\n\
                         compile_cpu = \"{}ms\"\n\n",
                        self.units,
                        DISTRO_COMPILE_CPU / MSEC
                    )
                };
                format!(
                    "# Seed 001, {}.\n[machine]\nram = \"{}M\"\ncpus = 32\n\n{disk}\
                     [run]\nend = \"workloads\"\nduration = \"20000s\"\n\n\
                     [[cgroup]]\nname = \"A\"\n{soft}\n[[cgroup]]\nname = \"B\"\n{soft}\n{}{}",
                    config.title(),
                    1024,
                    build("A"),
                    build("B"),
                )
            }
            Config::Stream => {
                let ram_mb = self.test2_ram_mb;
                let eater_mb = ram_mb - 1024;
                format!(
                    "# Seed 001, {}.\n[machine]\nram = \"{ram_mb}M\"\ncpus = 8\n\n{disk}\
                     [run]\nend = \"workloads\"\nduration = \"20000s\"\n\n\
                     [[cgroup]]\nname = \"A\"\nmemory.soft_limit_in_bytes = 0\n\n\
                     [[cgroup]]\nname = \"B\"\n\n\
                     [[workload]]\nname = \"dd\"\ntype = \"dd\"\ncgroup = \"A\"\ndevice = \"sda\"\n\
                     file = \"local.file\"\nsize = \"{}M\"\nbs = 1024\n\n\
                     [[workload]]\nname = \"mem_eater\"\ntype = \"mem_eater\"\ncgroup = \"B\"\n\
                     background = true\nsize = \"{eater_mb}M\"\nchunk = \"{}K\"\npause = \"1s\"\n",
                    config.title(),
                    2 * ram_mb,
                    eater_mb * 1024 / 100 / 4 * 4,
                )
            }
        }
    }
}

/// The runs a reproduction makes: (configuration, kernel index, boot), each boot under
/// both kernels in turn.
pub fn runs(p: &Procedure) -> Vec<(Config, usize, u32)> {
    let mut out = Vec::new();
    for c in Config::ALL {
        for b in 0..p.boots {
            for k in 0..KERNELS.len() {
                out.push((c, k, b));
            }
        }
    }
    out
}

/// One `/usr/bin/time -v`: user, system and elapsed seconds, minor and major faults, in
/// [`METRICS`] order.
pub type Sample = [f64; 5];

/// What one run gave.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// TEST 1: each build's figures (A, then B); TEST 2: dd's.
    pub samples: Vec<Sample>,
    /// Swap used, KiB: the largest and the mean of the per-second samples.
    pub swap_max_kb: f64,
    pub swap_avg_kb: f64,
    /// TEST 2: when mem_eater had touched all of its memory, seconds after its start.
    pub fill_seconds: Option<f64>,
    /// TEST 2: times A's usage_in_bytes fell below half its median, once it had reached it.
    pub drops: u32,
}

/// A run's result and its per-second series.
pub type Sampled = (RunResult, TimeSeries);

/// Run one of [`runs`]; the run is sampled every simulated second.
pub fn run_one(
    p: &Procedure,
    (config, k, boot): (Config, usize, u32),
) -> Result<(Outcome, Sampled), SimError> {
    let text = p.scenario_toml(config);
    let s = crate::scenario::load_str(&text, "<memcg-softlimit>", config.id())
        .expect("the reproduction's scenarios are valid");
    let kernel = presets::resolve(KERNELS[k], &[]).expect("seed 001's kernels exist");
    let outputs = sim::RunOutputs {
        sample_interval: Some(SEC),
        keep_series: true,
        ..Default::default()
    };
    let seed = p.seed + boot as u64;
    let (r, series) = sim::run_with(&s, &kernel, seed, RunOptions::default(), outputs)?;
    let series = series.expect("the run was sampled");
    Ok((Outcome::of(&r, &series, config), (r, series)))
}

impl Outcome {
    /// The outcome of run `r` of `config`, with its series.
    pub fn of(r: &RunResult, series: &TimeSeries, config: Config) -> Outcome {
        let time_v = |w: &str| -> Sample {
            [
                "user_seconds",
                "system_seconds",
                "elapsed_seconds",
                "minor_faults",
                "major_faults",
            ]
            .map(|m| r.metric(w, m).unwrap_or(f64::NAN))
        };
        let samples = match config {
            Config::Stream => vec![time_v("dd")],
            _ => vec![time_v("kbuild-A"), time_v("kbuild-B")],
        };
        let swap: Vec<f64> = series
            .column("swap_used")
            .map(|pages| pages * (crate::calibration::PAGE_SIZE / 1024) as f64)
            .collect();
        let swap_max_kb = swap.iter().copied().fold(0.0, f64::max);
        let swap_avg_kb = swap.iter().sum::<f64>() / swap.len().max(1) as f64;
        let (fill_seconds, drops) = match config {
            Config::Stream => (
                r.metric("mem_eater", "fill_seconds"),
                drops(&series.column("usage_in_bytes_A").collect::<Vec<_>>()),
            ),
            _ => (None, 0),
        };
        Outcome {
            samples,
            swap_max_kb,
            swap_avg_kb,
            fill_seconds,
            drops,
        }
    }
}

/// How often a series falls below half its median once it has first reached the median:
/// the "drops really low" of the letter's graph of A's usage_in_bytes.
pub fn drops(usage: &[f64]) -> u32 {
    let mut sorted: Vec<f64> = usage.to_vec();
    sorted.sort_by(f64::total_cmp);
    let Some(&median) = sorted.get(sorted.len() / 2) else {
        return 0;
    };
    let Some(first) = usage.iter().position(|&u| u >= median) else {
        return 0;
    };
    let mut low = false;
    let mut n = 0;
    for &u in &usage[first..] {
        let now_low = u < median / 2.0;
        if now_low && !low {
            n += 1;
        }
        low = now_low;
    }
    n
}

/// min, max, mean and population standard deviation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    pub min: f64,
    pub max: f64,
    pub avg: f64,
    pub std: f64,
}

impl Stats {
    /// No figure (a row the letter does not give).
    pub const NONE: Stats = Stats {
        min: f64::NAN,
        max: f64::NAN,
        avg: f64::NAN,
        std: f64::NAN,
    };

    /// The statistics of `xs` (NaN if empty).
    pub fn of(xs: &[f64]) -> Stats {
        if xs.is_empty() {
            return Stats::NONE;
        }
        let n = xs.len() as f64;
        let avg = xs.iter().sum::<f64>() / n;
        Stats {
            min: xs.iter().copied().fold(f64::INFINITY, f64::min),
            max: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            avg,
            std: (xs.iter().map(|x| (x - avg).powi(2)).sum::<f64>() / n).sqrt(),
        }
    }

    /// The four figures, in the letter's order.
    pub fn cells(&self) -> [f64; 4] {
        [self.min, self.max, self.avg, self.std]
    }
}

/// The letter's tables, or the simulated ones in their shape.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// `[configuration][kernel][metric]`.
    pub rows: [[[Stats; 5]; 2]; 3],
    /// TEST 2's swap used, KiB: `[kernel]` (max, avg).
    pub swap: [(f64, f64); 2],
}

const N: Stats = Stats::NONE;
const fn s(min: f64, max: f64, avg: f64, std: f64) -> Stats {
    Stats { min, max, avg, std }
}

/// The letter's figures.
pub const PUBLISHED: Table = Table {
    rows: [
        [
            [
                s(651.92, 672.65, 664.33, 8.01),
                s(69.33, 71.39, 70.32, 0.79),
                s(398.27, 422.36, 408.85, 7.74),
                N,
                N,
            ],
            [
                s(657.34, 668.39, 663.13, 3.61),
                s(69.12, 71.05, 70.04, 0.59),
                s(386.36, 438.40, 416.34, 18.85),
                N,
                N,
            ],
        ],
        [
            [
                s(573.76, 605.63, 585.73, 12.21),
                s(69.57, 71.13, 70.29, 0.54),
                s(1306.14, 1550.17, 1430.35, 90.86),
                s(37180461.0, 37319986.0, 37247470.0, 54772.71),
                s(170604.0, 221141.0, 196081.83, 18217.01),
            ],
            [
                s(645.77, 666.25, 656.97, 7.77),
                s(68.68, 71.40, 69.91, 0.87),
                s(404.06, 465.94, 434.81, 22.68),
                s(36751685.0, 36805379.0, 36774506.33, 17109.03),
                s(2864.0, 10029.0, 5627.33, 2252.71),
            ],
        ],
        [
            [
                s(2.68, 2.89, 2.76, 0.09),
                s(86.26, 88.29, 87.28, 0.83),
                s(317.28, 332.39, 325.84, 6.33),
                N,
                N,
            ],
            [
                s(3.27, 3.74, 3.44, 0.21),
                s(81.05, 84.96, 83.14, 1.61),
                s(281.53, 298.16, 290.99, 6.98),
                N,
                N,
            ],
        ],
    ],
    swap: [(123900.0, 56388.29), (300.0, 128.68)],
};

/// Whether a cell is set by a calibrated constant: TEST 1's no-limit User (by
/// [`DISTRO_COMPILE_CPU`]) and its 0-limit Minor (by [`DISTRO_UNITS`]).
pub fn calibrated(config: Config, metric: usize) -> bool {
    matches!(
        (config, metric),
        (Config::NoLimit, 0) | (Config::ZeroLimit, 3)
    )
}

/// Every run's outcome, in [`runs`] order.
#[derive(Clone, Debug, PartialEq)]
pub struct Results {
    pub procedure: Procedure,
    pub done: Vec<((Config, usize, u32), Outcome)>,
}

impl Results {
    /// The outcomes of `config` under kernel `k`, boot by boot.
    pub fn outcomes(&self, config: Config, k: usize) -> impl Iterator<Item = &Outcome> {
        self.done
            .iter()
            .filter(move |((c, k2, _), _)| *c == config && *k2 == k)
            .map(|(_, o)| o)
    }

    /// The simulated tables.
    pub fn table(&self) -> Table {
        let rows = Config::ALL.map(|c| {
            std::array::from_fn(|k| {
                std::array::from_fn(|m| {
                    let xs: Vec<f64> = self
                        .outcomes(c, k)
                        .flat_map(|o| o.samples.iter().map(move |s| s[m]))
                        .filter(|x| x.is_finite())
                        .collect();
                    // TEST 2's letter gives no fault rows.
                    if c == Config::Stream && m >= 3 {
                        Stats::NONE
                    } else {
                        Stats::of(&xs)
                    }
                })
            })
        });
        let swap = std::array::from_fn(|k| {
            let os: Vec<&Outcome> = self.outcomes(Config::Stream, k).collect();
            let n = os.len().max(1) as f64;
            (
                os.iter().map(|o| o.swap_max_kb).fold(0.0, f64::max),
                os.iter().map(|o| o.swap_avg_kb).sum::<f64>() / n,
            )
        });
        Table { rows, swap }
    }

    /// TEST 2's figures the letter shows only as graphs.
    pub fn extra(&self) -> Extra {
        let per_kernel = |f: &dyn Fn(&Outcome) -> f64| -> [f64; 2] {
            std::array::from_fn(|k| {
                let xs: Vec<f64> = self.outcomes(Config::Stream, k).map(f).collect();
                xs.iter().sum::<f64>() / xs.len().max(1) as f64
            })
        };
        Extra {
            // A mem_eater still filling when dd ended (the run's end) is not full yet: it
            // filled later than any that did.
            fill_seconds: per_kernel(&|o| o.fill_seconds.unwrap_or(f64::INFINITY)),
            drops: per_kernel(&|o| f64::from(o.drops)),
        }
    }
}

/// TEST 2's graph figures, per kernel, averaged over the boots: when mem_eater reached its
/// full size (infinite if in some boot it had not by the end of the run), and how often A's
/// usage dropped below half its median.
#[derive(Clone, Debug, PartialEq)]
pub struct Extra {
    pub fill_seconds: [f64; 2],
    pub drops: [f64; 2],
}

/// Every published cell beside its simulated one (min, max, avg and std of each row, and
/// TEST 2's swap figures).
pub fn compared(sim: &Table) -> Vec<Compared> {
    const STATS: [&str; 4] = ["min", "max", "avg", "std"];
    let mut out = Vec::new();
    for c in Config::ALL {
        for k in 0..2 {
            for (m, metric) in METRICS.iter().enumerate() {
                let (p, s) = (PUBLISHED.rows[c.index()][k][m], sim.rows[c.index()][k][m]);
                for (i, (pv, sv)) in p.cells().into_iter().zip(s.cells()).enumerate() {
                    if pv.is_nan() {
                        continue;
                    }
                    out.push(Compared {
                        label: format!("{} {metric} {}", c.id(), STATS[i]),
                        kernel: k,
                        published: pv,
                        simulated: if sv.is_nan() { 0.0 } else { sv },
                        calibrated: calibrated(c, m),
                    });
                }
            }
        }
    }
    for k in 0..2 {
        for (what, pv, sv) in [
            ("max", PUBLISHED.swap[k].0, sim.swap[k].0),
            ("avg", PUBLISHED.swap[k].1, sim.swap[k].1),
        ] {
            out.push(Compared {
                label: format!("test2 swap used {what}"),
                kernel: k,
                published: pv,
                simulated: sv,
                calibrated: false,
            });
        }
    }
    out
}

/// The claims M1-M7, judged on `t` (and `extra` for M7; `None`: the published table, whose
/// M7 figures are graphs, so M7 is not judged).
pub fn claims(t: &Table, extra: Option<&Extra>) -> Vec<Verdict> {
    let avg = |c: Config, k: usize, m: usize| t.rows[c.index()][k][m].avg;
    let v = |id, claim: String, holds: bool, values: Vec<(String, f64)>| Verdict {
        id,
        claim,
        holds,
        judged: true,
        values,
    };
    let mut out = Vec::new();

    // M1: no regression without soft limits.
    let r: Vec<f64> = (0..3)
        .map(|m| avg(Config::NoLimit, 1, m) / avg(Config::NoLimit, 0, m))
        .collect();
    out.push(v(
        "M1",
        "TEST 1 no limit: the rework's mean User, System and Elapsed are within ±5% of base's"
            .into(),
        r.iter().all(|x| (0.95..=1.05).contains(x)),
        vec![
            ("User rework/base".into(), r[0]),
            ("System rework/base".into(), r[1]),
            ("Elapsed rework/base".into(), r[2]),
        ],
    ));

    // M2: the rework's elapsed with soft limit 0 at most half base's.
    let e = avg(Config::ZeroLimit, 1, 2) / avg(Config::ZeroLimit, 0, 2);
    out.push(v(
        "M2",
        "TEST 1 soft limit 0: the rework's mean Elapsed is at most 0.5 x base's (published 30.4%)"
            .into(),
        e <= 0.5,
        vec![("Elapsed rework/base".into(), e)],
    ));

    // M3: major faults collapse, minor faults do not move.
    let (maj0, maj1) = (avg(Config::ZeroLimit, 0, 4), avg(Config::ZeroLimit, 1, 4));
    let minor = avg(Config::ZeroLimit, 1, 3) / avg(Config::ZeroLimit, 0, 3);
    let m3 = Verdict {
        judged: maj0 > 0.0,
        ..v(
            "M3",
            "TEST 1 soft limit 0: the rework's mean Major faults are at most 10% of base's \
             (published 2.9%), its mean Minor faults within ±5%"
                .into(),
            maj1 <= 0.1 * maj0 && (0.95..=1.05).contains(&minor),
            vec![
                ("Major base".into(), maj0),
                ("Major rework".into(), maj1),
                ("Minor rework/base".into(), minor),
            ],
        )
    };
    out.push(m3);

    // M4: soft limit 0 more than doubles base's elapsed, not the rework's.
    let b = avg(Config::ZeroLimit, 0, 2) / avg(Config::NoLimit, 0, 2);
    let r = avg(Config::ZeroLimit, 1, 2) / avg(Config::NoLimit, 1, 2);
    out.push(v(
        "M4",
        "TEST 1: base's mean Elapsed with soft limit 0 is at least 2 x its no-limit one \
         (published 3.50); the rework's is within 15% of its own"
            .into(),
        b >= 2.0 && (0.85..=1.15).contains(&r),
        vec![
            ("base 0-limit/no-limit".into(), b),
            ("rework 0-limit/no-limit".into(), r),
        ],
    ));

    // M5: TEST 2's dd is faster, and spends no more system time.
    let e = avg(Config::Stream, 1, 2) / avg(Config::Stream, 0, 2);
    let (s0, s1) = (avg(Config::Stream, 0, 1), avg(Config::Stream, 1, 1));
    out.push(v(
        "M5",
        "TEST 2: the rework's mean Elapsed is at most 0.95 x base's (published 89.3%), its \
         System not higher"
            .into(),
        e <= 0.95 && s1 <= s0,
        vec![
            ("Elapsed rework/base".into(), e),
            ("System base".into(), s0),
            ("System rework".into(), s1),
        ],
    ));

    // M6: almost no swapping under the rework.
    let (w0, w1) = (t.swap[0].0, t.swap[1].0);
    out.push(Verdict {
        judged: w0 > 0.0,
        ..v(
            "M6",
            "TEST 2: the rework's max swap used is at most 10% of base's (published 300 KB \
             against 123,900 KB)"
                .into(),
            w1 <= 0.1 * w0,
            vec![("max KB base".into(), w0), ("max KB rework".into(), w1)],
        )
    });

    // M7: mem_eater fills sooner; A's usage drops only under base.
    let claim = "TEST 2: mem_eater reaches its full size sooner under the rework; A's \
                 usage_in_bytes repeatedly (2+ times a run) drops below half its median \
                 under base, never under the rework";
    out.push(match extra {
        None => Verdict {
            id: "M7",
            claim: format!("{claim} (the letter's graphs: not judged on the published table)"),
            holds: false,
            judged: false,
            values: Vec::new(),
        },
        Some(x) => v(
            "M7",
            claim.into(),
            x.fill_seconds[1] < x.fill_seconds[0] && x.drops[0] >= 2.0 && x.drops[1] == 0.0,
            vec![
                ("fill s base".into(), x.fill_seconds[0]),
                ("fill s rework".into(), x.fill_seconds[1]),
                ("drops base".into(), x.drops[0]),
                ("drops rework".into(), x.drops[1]),
            ],
        ),
    });
    out
}

/// A figure as the table prints it: 2 decimals below 10,000, whole numbers above.
/// A mean fill time: seconds, or never when some boot ended before the mem_eater was full.
fn fill(x: f64) -> String {
    if x == f64::INFINITY {
        "never (still filling when a run ended)".into()
    } else {
        format!("{} s", fig(x))
    }
}

fn fig(x: f64) -> String {
    if x.is_nan() {
        "-".into()
    } else if x.abs() >= 10_000.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

/// `figure [pct%]` against base's, as the letter prints the rework's.
fn fig_pct(x: f64, base: f64) -> String {
    if x.is_nan() || base.is_nan() || base == 0.0 {
        fig(x)
    } else {
        format!("{} [{:.1}%]", fig(x), x * 100.0 / base)
    }
}

/// The letter's rows of one configuration: per metric, min, max, avg and std, published
/// and simulated for each kernel; the rework's with its percentage of base's. A `*` marks a
/// calibrated (input) row.
pub fn config_table(c: Config, sim: &Table) -> String {
    let mut out = format!(
        "{}\n{:<14}{:>24}{:>24}{:>26}{:>26}\n",
        c.title(),
        "",
        "base published",
        "base simulated",
        "rework published",
        "rework simulated"
    );
    for (m, metric) in METRICS.iter().enumerate() {
        let p = PUBLISHED.rows[c.index()];
        let s = sim.rows[c.index()];
        if p[0][m].avg.is_nan() && s[0][m].avg.is_nan() {
            continue;
        }
        let star = if calibrated(c, m) { " *" } else { "" };
        out.push_str(&format!("{metric}{star}\n"));
        for (i, stat) in ["min", "max", "avg", "std"].iter().enumerate() {
            let (pb, sb, pr, sr) = (
                p[0][m].cells()[i],
                s[0][m].cells()[i],
                p[1][m].cells()[i],
                s[1][m].cells()[i],
            );
            let pct = |x: f64, b: f64| if i == 3 { fig(x) } else { fig_pct(x, b) };
            out.push_str(&format!(
                "  {:<12}{:>24}{:>24}{:>26}{:>26}\n",
                stat,
                fig(pb),
                fig(sb),
                pct(pr, pb),
                pct(sr, sb)
            ));
        }
    }
    if c == Config::Stream {
        out.push_str("Swap used (KB)\n");
        for (i, stat) in ["max", "avg"].iter().enumerate() {
            let get = |t: &Table, k: usize| if i == 0 { t.swap[k].0 } else { t.swap[k].1 };
            out.push_str(&format!(
                "  {:<12}{:>24}{:>24}{:>26}{:>26}\n",
                stat,
                fig(get(&PUBLISHED, 0)),
                fig(get(sim, 0)),
                fig(get(&PUBLISHED, 1)),
                fig(get(sim, 1))
            ));
        }
    }
    out
}

/// The report `mmsim reproduce memcg-softlimit` prints.
pub fn report(res: &Results) -> String {
    let sim = res.table();
    let extra = res.extra();
    let mut out = res.procedure.describe();
    out.push_str(
        "Published beside simulated; the rework's figures with their percentage of base's. \
         * marks rows set by a calibrated constant (inputs, not results).\n\n",
    );
    for c in Config::ALL {
        out.push_str(&config_table(c, &sim));
        out.push('\n');
    }
    out.push_str(&format!(
        "TEST 2 graphs, mean over the boots (base, rework): mem_eater full after {}, {}; \
         A's usage_in_bytes below half its median {} times, {} times a run\n",
        fill(extra.fill_seconds[0]),
        fill(extra.fill_seconds[1]),
        fig(extra.drops[0]),
        fig(extra.drops[1])
    ));
    out.push_str(&format!("\n{}\n", Fidelity::of(&compared(&sim)).summary()));
    out.push_str("\nClaims (judged on the simulated tables)\n");
    out.push_str(&super::verdicts_text(&claims(&sim, Some(&extra))));
    out
}

/// The reproduction as JSON.
pub fn to_json(res: &Results) -> serde_json::Value {
    use serde_json::json;
    let sim = res.table();
    let extra = res.extra();
    let stats = |s: &Stats| {
        let f = |x: f64| if x.is_nan() { json!(null) } else { json!(x) };
        json!({"min": f(s.min), "max": f(s.max), "avg": f(s.avg), "std": f(s.std)})
    };
    let configs: serde_json::Map<String, serde_json::Value> = Config::ALL
        .iter()
        .map(|&c| {
            let kernels: serde_json::Map<String, serde_json::Value> = (0..2)
                .map(|k| {
                    let rows: serde_json::Map<String, serde_json::Value> = METRICS
                        .iter()
                        .enumerate()
                        .map(|(m, name)| {
                            (
                                name.to_string(),
                                json!({
                                    "published": stats(&PUBLISHED.rows[c.index()][k][m]),
                                    "simulated": stats(&sim.rows[c.index()][k][m]),
                                    "calibrated": calibrated(c, m),
                                }),
                            )
                        })
                        .collect();
                    (KERNELS[k].to_string(), json!(rows))
                })
                .collect();
            (c.id().to_string(), json!(kernels))
        })
        .collect();
    let verdicts_json = |vs: Vec<Verdict>| -> Vec<serde_json::Value> {
        vs.iter()
            .map(|v| {
                json!({
                    "id": v.id,
                    "claim": v.claim,
                    "outcome": v.outcome(),
                    "values": v.values.iter().map(|(w, x)| json!([w, x])).collect::<Vec<_>>(),
                })
            })
            .collect()
    };
    let f = Fidelity::of(&compared(&sim));
    json!({
        "experiment": "memcg-softlimit",
        "kernels": KERNELS,
        "procedure": {
            "boots": res.procedure.boots,
            "seed": res.procedure.seed,
            "units": res.procedure.units,
            "test2_ram_mb": res.procedure.test2_ram_mb,
        },
        "configurations": configs,
        "swap_used_kb": {
            "published": PUBLISHED.swap.iter().map(|(m, a)| json!({"max": m, "avg": a})).collect::<Vec<_>>(),
            "simulated": sim.swap.iter().map(|(m, a)| json!({"max": m, "avg": a})).collect::<Vec<_>>(),
        },
        "test2_graphs": {
            "mem_eater_fill_seconds": extra.fill_seconds,
            "usage_drops_per_run": extra.drops,
        },
        "fidelity": {
            "cells": f.cells,
            "within_2x": f.within_2x,
            "simulated_zero": f.simulated_zero,
            "mean_abs_ln": f.mean_abs_ln,
        },
        "claims": verdicts_json(claims(&sim, Some(&extra))),
        "claims_on_published": verdicts_json(claims(&PUBLISHED, None)),
    })
}

#[cfg(test)]
mod tests;
