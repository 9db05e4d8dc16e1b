//! The `mmsim` command line: a thin layer over the `mmsim` library. The binary's `main`
//! is [`main_with_args`]; the allocator that `bench` reads peaks from is
//! [`CountingAlloc`], installed by the binary.
//!
//! Exit status: 0 on success; 2 for bad input (scenario, preset, switch, option, an output
//! path that cannot be written, a machine too big for this host), found before any run
//! starts; 1 when a run stopped on a broken invariant or an output failed while being
//! written.

use anyhow::Context;
use clap::{Parser, Subcommand};
use mmsim::engine::{Nanos, SEC};
use mmsim::presets::{self, KernelConfig, PRESETS, SWITCHES};
use mmsim::report::timeseries::TimeSeries;
use mmsim::report::{html, json, terminal, RunResult};
use mmsim::scenario::{self, Scenario};
use mmsim::sim::{self, RunOptions, RunOutputs};
use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// `--version`: the release and the hash of the model's source it was built from.
static VERSION: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "{} (model {})",
        env!("CARGO_PKG_VERSION"),
        mmsim::MODEL_HASH
    )
});

#[derive(Parser, Debug)]
#[command(
    name = "mmsim",
    version = VERSION.as_str(),
    about = "Deterministic simulator of the Linux 3.x memory-management subsystem"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a scenario under one or more kernels and print the results side by side.
    Run {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// Kernel preset; repeat to compare kernels (default: the scenario's, else 3.9).
        #[arg(long = "kernel", value_name = "PRESET")]
        kernels: Vec<String>,
        /// Set a behaviour switch: NAME=true|false (repeatable; applies to every kernel).
        #[arg(long = "set", value_name = "SWITCH=true|false")]
        set: Vec<String>,
        /// Seed of the run's RNG, 0 to 2^64-1 (default: the scenario's [run] seed).
        #[arg(long, allow_hyphen_values = true, value_parser = parse_seed)]
        seed: Option<u64>,
        /// Write the results as JSON to FILE.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// Check the page-state invariants after reclaim batches, at most once per
        /// --check-interval of simulated time (they are always checked at the end).
        #[arg(long)]
        check: bool,
        /// With --check: the least simulated time between two checks; 0s checks after every
        /// reclaim batch (slowest).
        #[arg(long, value_name = "TIME", requires = "check")]
        check_interval: Option<String>,
        /// Write vmscan, kmem (page allocator) and writeback tracepoint events as a 3.9
        /// trace_pipe prints them to FILE (docs/traces.md; with several kernels, one file
        /// each: the kernel label goes before the extension).
        #[arg(long, value_name = "FILE")]
        trace: Option<PathBuf>,
        /// Write a CSV time series of free pages per zone, dirty/writeback/anon/file pages and
        /// reclaim counters to FILE (one file per kernel, as with --trace).
        #[arg(long, value_name = "FILE")]
        timeseries: Option<PathBuf>,
        /// Time between time-series samples (default 1s; at least 1ms). Needs
        /// --timeseries or --html.
        #[arg(long, value_name = "TIME")]
        sample_interval: Option<String>,
        /// Write an HTML report to the directory DIR: the summary tables and graphs of the
        /// time series, kernels side by side. It opens from disk (DIR/index.html).
        #[arg(long, value_name = "DIR")]
        html: Option<PathBuf>,
        /// Run even if the machine is predicted not to fit in this host's memory.
        #[arg(long)]
        force: bool,
        /// Also print /proc/buddyinfo and /proc/pagetypeinfo as they were at the end of
        /// each kernel's run.
        #[arg(long)]
        buddyinfo: bool,
    },
    /// Re-run a published experiment and print its tables, published beside simulated, with
    /// the authors' claims judged on the simulated figures. Experiments: parallelio (seed
    /// 000), memcg-softlimit (seed 001), nowriteback (seed 002), dirty-throttling (seed
    /// 003), stress-highalloc (seed 004).
    Reproduce {
        /// The experiment.
        experiment: String,
        /// dirty-throttling: run every case of the suite, not the default subset.
        #[arg(long)]
        full: bool,
        /// dirty-throttling: run one case, by name (e.g. xfs-100dd-1M-8p-2946M).
        #[arg(long, value_name = "NAME")]
        case: Option<String>,
        /// stress-highalloc: also run the other versions of the series that
        /// kernel-compaction.md §9.3 tabulates and the switches express.
        #[arg(long)]
        versions: bool,
        /// stress-highalloc: the tree copies lie on the disk at boot instead of being made
        /// by cp -r of a whole tree before each build (MMTests' way, the default).
        #[arg(long)]
        trees_at_boot: bool,
        /// memcg-softlimit: boots per configuration and kernel (default 3, the letter's
        /// "3 runs after fresh boot"; each TEST 1 boot times two builds).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        boots: Option<u32>,
        /// A short procedure for tests: a quarter of the memory and 60 s runs.
        #[arg(long)]
        fast: bool,
        /// Run every iteration on a fresh machine with its own seed, in parallel, and sum
        /// the runs' counters (default: the whole procedure on one machine per kernel, as
        /// MMTests does).
        #[arg(long)]
        fresh: bool,
        /// parallelio: iterations per IO step (default 1, what the published tables imply;
        /// MMTests' public config says 5). nowriteback: simple-wb's runs of each CPU factor
        /// (SIMPLE_WRITEBACK_ITERATIONS; default 4, the only value MMTests' configs give it).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100))]
        iterations: Option<u32>,
        /// Where swap lives: test-disk (a partition at the end of sda, the default),
        /// test-disk-start (a partition at the start of sda, the test filesystem
        /// --swap-gap after it) or own-disk (sdb).
        #[arg(long, value_name = "LAYOUT", value_parser = ["test-disk", "test-disk-start", "own-disk"])]
        swap_on: Option<String>,
        /// parallelio with --swap-on test-disk-start: the disk between the swap partition
        /// and the test filesystem (the system's partitions), e.g. 200G (default 0).
        #[arg(long, value_name = "SIZE", value_parser = parse_swap_gap, requires = "swap_on")]
        swap_gap: Option<u64>,
        /// Print a sensitivity table instead of the report: the claims and key rows with
        /// each estimated CPU cost of reclaim (per page and per pass) halved and doubled.
        #[arg(long)]
        sensitivity: bool,
        /// Base seed of the runs (default 1, the seed of the committed outputs); every
        /// kernel runs on the same seeds. The report says when it is not the default.
        #[arg(long)]
        seed: Option<u64>,
        /// parallelio: RAM under the MMIO hole below 4 GiB, e.g. 1G: DMA32 then ends at
        /// 4 GiB minus this (default 856M, what the published machine's 8 GiB board lacks;
        /// 0: DMA32 to 4 GiB; docs/seed-000-procedure.md §4).
        #[arg(long, value_name = "SIZE", value_parser = parse_pci_hole)]
        pci_hole: Option<u64>,
        /// parallelio: the page cache the system's boot left, e.g. 100M (the default; 0:
        /// none), a quarter of it active, allocated as boot allocates, Normal first
        /// (docs/seed-000-procedure.md §7).
        #[arg(long, value_name = "SIZE", value_parser = parse_page_cache)]
        page_cache: Option<u64>,
        /// parallelio: no daemons run the active part of that page cache as their program
        /// text; it stays unmapped (docs/seed-000-procedure.md §7).
        #[arg(long)]
        no_daemons: bool,
        /// transparent_hugepage/enabled: always (the default, what the published THP counts
        /// imply), madvise or never (docs/seed-000-procedure.md §6, docs/seed-004.md).
        #[arg(long, value_name = "MODE", value_parser = ["always", "madvise", "never"])]
        thp: Option<String>,
        /// Runs at once, at least 1 (default: the number of CPUs). Results do not depend on
        /// it.
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        jobs: Option<u64>,
        /// Write the tables and verdicts as JSON to FILE.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// Write an HTML report to the directory DIR: the tables and verdicts, and graphs of
        /// each kernel's run sampled every 10 simulated seconds. It opens from disk.
        #[arg(long, value_name = "DIR", conflicts_with = "sensitivity")]
        html: Option<PathBuf>,
    },
    /// Run a scenario at every point of a sweep (its axes: scenario keys, kernels, seeds) in
    /// parallel, and write one row per run to a Parquet or CSV table (docs/sweeps.md).
    /// Finished points are kept beside the table, so an interrupted sweep resumes.
    Sweep {
        /// The sweep file (TOML).
        sweep: PathBuf,
        /// The table to write (default: the sweep's `output`, else SWEEP-STEM.parquet in
        /// the current directory).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// parquet or csv (default: from the output's extension, .csv for CSV).
        #[arg(long, value_name = "FORMAT", value_parser = ["parquet", "csv"])]
        format: Option<String>,
        /// Where finished points are kept, one file each (default: the output's path with
        /// the extension .points).
        #[arg(long, value_name = "DIR")]
        points_dir: Option<PathBuf>,
        /// Runs at once, at least 1 (default: the number of CPUs). Results do not depend on
        /// it.
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        jobs: Option<u64>,
        /// Run even if the points are predicted not to fit in this host's memory.
        #[arg(long)]
        force: bool,
        /// Print the points (number, kernel, seed, axis values, key) and whether each has
        /// finished, without running any.
        #[arg(long)]
        list: bool,
        /// Run the points on the Dask scheduler at ADDRESS (tcp://host:8786), one task
        /// each, through the Python package (`python3 -m mmsim`, or $MMSIM_PYTHON); the
        /// table is the same as a local sweep's.
        #[arg(long, value_name = "ADDRESS", conflicts_with_all = ["jobs", "list", "force"])]
        dask: Option<String>,
    },
    /// List kernel presets and behaviour switches, with what each models.
    Kernels,
    /// Benchmark: simulated seconds per wall second and what the simulator did in them, on
    /// an anonymous-memory scenario and a file-path one under 3.9 (single-threaded); each
    /// figure is the median of several runs after a warm-up, with its spread.
    Bench {
        /// Measured runs of each scenario, after one warm-up run that is not counted.
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=100))]
        runs: u32,
        /// Which scenario: anon (examples/anon-pressure.toml), file (a parallelio step:
        /// dd, the flusher, the block queue, reclaim of file pages) or all.
        #[arg(long, value_name = "NAME", default_value = "all", value_parser = ["anon", "file", "all"])]
        scenario: String,
        /// Short versions of the scenarios, for tests (their figures do not compare with
        /// the full ones).
        #[arg(long)]
        quick: bool,
    },
    /// Check a scenario file without running it, and predict the host memory a run needs.
    Validate {
        /// The scenario file (TOML).
        scenario: PathBuf,
    },
}

/// An error that is the user's input, reported with exit status 2.
#[derive(Debug)]
struct BadInput(String);

impl std::fmt::Display for BadInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadInput {}

/// Run the command line on `args` (the program name first) and return its exit status:
/// the `mmsim` binary's `main`, and the Python package's way to the same commands.
pub fn main_with_args<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version print and succeed; a usage error prints and exits 2.
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    match dispatch(cli) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("mmsim: {e:#}");
            if e.downcast_ref::<BadInput>().is_some() {
                2
            } else {
                1
            }
        }
    }
}

fn dispatch(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Run {
            scenario,
            kernels,
            set,
            seed,
            json: json_path,
            check,
            check_interval,
            trace,
            timeseries,
            sample_interval,
            html,
            force,
            buddyinfo,
        } => {
            if sample_interval.is_some() && timeseries.is_none() && html.is_none() {
                return Err(BadInput(
                    "--sample-interval needs --timeseries FILE or --html DIR".into(),
                )
                .into());
            }
            let s = load(&scenario)?;
            let configs = resolve_kernels(&s, &kernels, &set)?;
            let seed = seed.unwrap_or(s.run.seed);
            let interval = match &sample_interval {
                Some(t) => parse_time("--sample-interval", t, MIN_SAMPLE_INTERVAL)?,
                None => SEC,
            };
            let check_interval = match &check_interval {
                Some(t) => parse_time("--check-interval", t, 0)?,
                None => DEFAULT_CHECK_INTERVAL,
            };
            check_host_memory(&s, configs.len(), force)?;
            // Every output is opened before the run: a bad path costs no simulation.
            let json_out = json_path
                .as_deref()
                .map(|p| create_output("--json", p))
                .transpose()?;
            if let Some(dir) = &html {
                create_html_dir(dir)?;
            }
            let mut outputs = Vec::new();
            let traces = per_kernel_paths(trace.as_deref(), &configs);
            let series = per_kernel_paths(timeseries.as_deref(), &configs);
            for (t, ts) in traces.iter().zip(&series) {
                let trace = t
                    .as_deref()
                    .map(|p| create_output("--trace", p).map(|f| warn_past(f, p, TRACE_WARN_BYTES)))
                    .transpose()?;
                let series_out = match ts.as_deref() {
                    Some(p) => {
                        warn_series_size(&s, interval, p);
                        Some(warn_past(create_output("--timeseries", p)?, p, u64::MAX))
                    }
                    None => None,
                };
                let sampled = series_out.is_some() || html.is_some();
                outputs.push(RunOutputs {
                    trace,
                    sample_interval: sampled.then_some(interval),
                    series_out,
                    keep_series: html.is_some(),
                    progress: None,
                });
            }
            let opts = RunOptions {
                check_every_batch: check,
                check_interval,
            };
            let runs = match run_all(&s, &configs, seed, opts, outputs) {
                Ok(runs) => runs,
                Err(e) => {
                    if let Some(p) = &json_path {
                        let _ = std::fs::remove_file(p);
                    }
                    return Err(e);
                }
            };
            let (runs, series): (Vec<RunResult>, Vec<_>) = runs.into_iter().unzip();
            let summary = terminal::summary(&runs);
            print!("{summary}");
            if buddyinfo {
                for r in &runs {
                    println!("\n{} /proc/buddyinfo:\n{}", r.kernel, r.buddyinfo);
                    println!("{} /proc/pagetypeinfo:\n{}", r.kernel, r.pagetypeinfo);
                }
            }
            if let Some(dir) = &html {
                let series: Vec<_> = series
                    .into_iter()
                    .map(|t| t.expect("--html keeps the samples"))
                    .collect();
                let runs: Vec<_> = runs
                    .iter()
                    .zip(&series)
                    .map(|(r, series)| html::KernelRun {
                        kernel: &r.kernel,
                        series,
                        devices: &r.devices,
                        pauses: &r.dirty_throttle.pauses,
                    })
                    .collect();
                let report = html::Report {
                    title: format!("mmsim run {}", s.name),
                    sections: vec![html::Section::Table {
                        heading: "Summary".into(),
                        text: summary,
                    }],
                    cases: vec![html::Case {
                        id: "run".into(),
                        title: format!("{} (seed {seed})", s.name),
                        runs,
                    }],
                };
                write_html(dir, &report)?;
            }
            write_json(json_out, json_path.as_deref(), &json::runs_to_json(&runs))?;
            Ok(())
        }
        Command::Sweep {
            sweep,
            out,
            format,
            points_dir,
            jobs,
            force,
            list,
            dask,
        } => match dask {
            Some(address) => dask_sweep(&sweep, &address, out, format, points_dir),
            None => run_sweep(&sweep, out, format, points_dir, jobs, force, list),
        },
        Command::Bench {
            runs,
            scenario,
            quick,
        } => {
            use mmsim::bench::{Kind, Size};
            let kinds = match Kind::from_name(&scenario) {
                Some(k) => vec![k],
                None => Kind::ALL.to_vec(),
            };
            let size = if quick { Size::Quick } else { Size::Full };
            bench(&kinds, size, runs)
        }
        Command::Reproduce {
            experiment,
            full,
            case,
            versions,
            trees_at_boot,
            boots,
            fast,
            fresh,
            iterations,
            swap_on,
            swap_gap,
            sensitivity,
            seed,
            pci_hole,
            page_cache,
            no_daemons,
            thp,
            jobs,
            json: json_path,
            html,
        } => {
            // The flags that belong to some experiments only: (given, name).
            let given = [
                (full, "--full"),
                (case.is_some(), "--case"),
                (versions, "--versions"),
                (trees_at_boot, "--trees-at-boot"),
                (boots.is_some(), "--boots"),
                (fast, "--fast"),
                (fresh, "--fresh"),
                (iterations.is_some(), "--iterations"),
                (swap_on.is_some(), "--swap-on"),
                (swap_gap.is_some(), "--swap-gap"),
                (sensitivity, "--sensitivity"),
                (seed.is_some(), "--seed"),
                (pci_hole.is_some(), "--pci-hole"),
                (page_cache.is_some(), "--page-cache"),
                (no_daemons, "--no-daemons"),
                (thp.is_some(), "--thp"),
                (html.is_some(), "--html"),
            ];
            let refused = |allowed: &[&str]| {
                given
                    .iter()
                    .find(|(set, flag)| *set && !allowed.contains(flag))
                    .map(|&(_, flag)| flag)
            };
            if experiment == "memcg-softlimit" || experiment == "nowriteback" {
                let own: &[&str] = if experiment == "nowriteback" {
                    &["--fast", "--seed", "--html", "--iterations"]
                } else {
                    &["--fast", "--seed", "--html", "--boots"]
                };
                if let Some(flag) = refused(own) {
                    return Err(BadInput(format!("{flag} does not apply to {experiment}")).into());
                }
                let jobs = jobs.map(|j| j as usize);
                if experiment == "nowriteback" {
                    use mmsim::reproduce::nowriteback::Procedure;
                    let mut p = if fast {
                        Procedure::fast()
                    } else {
                        Procedure::published()
                    };
                    p.seed = seed.unwrap_or(p.seed);
                    p.simple_wb_iterations = iterations.unwrap_or(p.simple_wb_iterations);
                    return reproduce_nowriteback(p, jobs, json_path, html);
                }
                use mmsim::reproduce::memcg_softlimit::Procedure;
                let mut p = Procedure::published();
                if fast {
                    p = Procedure::fast();
                }
                p.seed = seed.unwrap_or(p.seed);
                p.boots = boots.unwrap_or(p.boots);
                return reproduce_memcg_softlimit(p, jobs, json_path, html);
            }
            if experiment == "stress-highalloc" {
                let own = ["--versions", "--trees-at-boot", "--fast", "--seed", "--thp"];
                if let Some(flag) = refused(&own) {
                    return Err(
                        BadInput(format!("{flag} does not apply to stress-highalloc")).into(),
                    );
                }
                use mmsim::reproduce::stress_highalloc::Procedure;
                let mut p = if fast {
                    Procedure::fast()
                } else {
                    Procedure::published()
                };
                p.seed = seed.unwrap_or(p.seed);
                p.copy = !trees_at_boot;
                use mmsim::mm::huge_memory::ThpEnabled;
                p.thp = match thp.as_deref() {
                    Some("always") => ThpEnabled::Always,
                    Some("madvise") => ThpEnabled::Madvise,
                    Some(_) => ThpEnabled::Never,
                    None => p.thp,
                };
                return reproduce_stress_highalloc(
                    &p,
                    versions,
                    jobs.map(|j| j as usize),
                    json_path,
                );
            }
            if versions || trees_at_boot {
                let flag = if versions {
                    "--versions"
                } else {
                    "--trees-at-boot"
                };
                return Err(BadInput(format!("{flag} applies to stress-highalloc only")).into());
            }
            if boots.is_some() {
                return Err(BadInput("--boots applies to memcg-softlimit only".into()).into());
            }
            if experiment == "dirty-throttling" {
                if let Some(flag) = refused(&["--full", "--case", "--html"]) {
                    return Err(BadInput(format!(
                        "{flag} applies to parallelio only, not to dirty-throttling"
                    ))
                    .into());
                }
                return reproduce_dirty_throttling(
                    full,
                    case,
                    jobs.map(|j| j as usize),
                    json_path,
                    html,
                );
            }
            if full || case.is_some() {
                return Err(
                    BadInput("--full and --case apply to dirty-throttling only".into()).into(),
                );
            }
            if swap_gap.is_some() && swap_on.as_deref() != Some("test-disk-start") {
                return Err(BadInput(
                    "--swap-gap applies to --swap-on test-disk-start only".into(),
                )
                .into());
            }
            use mmsim::mm::swapfile::SwapPlacement;
            use mmsim::reproduce::parallelio::{Procedure, SwapOn};
            let mut p = if fast {
                Procedure::fast()
            } else {
                Procedure::published()
            };
            p.sequential = !fresh;
            p.iterations = iterations.unwrap_or(p.iterations);
            p.swap_on = match swap_on.as_deref() {
                Some("own-disk") => SwapOn::OwnDisk,
                Some("test-disk-start") => SwapOn::TestDisk(SwapPlacement::Start {
                    gap: swap_gap.unwrap_or(0),
                }),
                Some(_) => SwapOn::TestDisk(SwapPlacement::End),
                None => p.swap_on,
            };
            p.seed = seed.unwrap_or(p.seed);
            p.pci_hole = pci_hole.unwrap_or(p.pci_hole);
            p.page_cache = page_cache.unwrap_or(p.page_cache);
            p.daemons = !no_daemons;
            use mmsim::mm::huge_memory::ThpEnabled;
            p.thp = match thp.as_deref() {
                Some("always") => ThpEnabled::Always,
                Some("madvise") => ThpEnabled::Madvise,
                Some(_) => ThpEnabled::Never,
                None => p.thp,
            };
            reproduce(
                &experiment,
                p,
                sensitivity,
                jobs.map(|j| j as usize),
                json_path,
                html,
            )
        }
        Command::Kernels => {
            print!("{}", kernels_text());
            Ok(())
        }
        Command::Validate { scenario } => {
            let s = load(&scenario)?;
            resolve_kernels(&s, &[], &[])?;
            println!(
                "{}: ok ({} MiB RAM, {} CPUs, {} workload{}, {} s; a run needs about {} \
                 MiB of host memory)",
                scenario.display(),
                s.machine.ram >> 20,
                s.machine.cpus,
                s.workloads.len(),
                if s.workloads.len() == 1 { "" } else { "s" },
                s.run.duration / SEC,
                sim::host_memory_estimate(&s).div_ceil(1 << 20)
            );
            Ok(())
        }
    }
}

fn load(path: &Path) -> anyhow::Result<Scenario> {
    scenario::load(path).map_err(|e| BadInput(e.to_string()).into())
}

/// The kernels of a run: each preset with the scenario's switches, then `--set` on top.
fn resolve_kernels(
    s: &Scenario,
    kernels: &[String],
    set: &[String],
) -> anyhow::Result<Vec<KernelConfig>> {
    let mut overrides = s.kernel.switches.clone();
    for item in set {
        let (name, value) = item.split_once('=').ok_or_else(|| {
            BadInput(format!(
                "--set {item}: expected SWITCH=true or SWITCH=false"
            ))
        })?;
        // The switch first: a misspelt name matters more than its value.
        if presets::find_switch(name).is_none() {
            let e = presets::resolve(PRESETS[0].name, &[(name.to_string(), true)])
                .expect_err("the switch is unknown");
            return Err(BadInput(format!("--set {item}: {e}")).into());
        }
        let on = match value {
            "true" => true,
            "false" => false,
            _ => {
                return Err(BadInput(format!(
                    "--set {item}: the value must be true or false, not '{value}'"
                ))
                .into())
            }
        };
        overrides.push((name.to_string(), on));
    }
    let names: Vec<String> = if kernels.is_empty() {
        vec![s
            .kernel
            .preset
            .clone()
            .unwrap_or_else(|| PRESETS[0].name.to_string())]
    } else {
        kernels.to_vec()
    };
    let configs: Vec<KernelConfig> = names
        .iter()
        .map(|p| presets::resolve(p, &overrides).map_err(|e| BadInput(e.to_string())))
        .collect::<Result<_, _>>()?;
    for (i, k) in configs.iter().enumerate() {
        if configs[..i].iter().any(|o| o.label() == k.label()) {
            return Err(BadInput(format!(
                "--kernel {}: given twice; a run is a pure function of scenario, kernel and \
                 seed, so the second run would repeat the first",
                k.label()
            ))
            .into());
        }
    }
    Ok(configs)
}

/// `--seed`: a whole number that fits in 64 bits, with a message that says so.
fn parse_seed(text: &str) -> Result<u64, String> {
    text.parse::<u64>()
        .map_err(|_| format!("expected a whole number from 0 to {}", u64::MAX))
}

/// Time-series samples closer than this are refused: a sample per simulated millisecond is
/// already 1,000 rows per simulated second.
const MIN_SAMPLE_INTERVAL: Nanos = 1_000_000;

/// `--check` without `--check-interval`: at most one full check per simulated second.
const DEFAULT_CHECK_INTERVAL: Nanos = SEC;

/// A trace past this size gets a warning on stderr (once).
const TRACE_WARN_BYTES: u64 = 256 << 20;

/// A time-series file predicted to pass this size gets a warning before the run.
const SERIES_WARN_BYTES: u64 = 256 << 20;

/// A time option: `TIME` with a unit, at least `min` (and positive when `min` is 0 only if
/// the option allows 0).
fn parse_time(option: &str, text: &str, min: Nanos) -> anyhow::Result<Nanos> {
    let t =
        scenario::parse_duration(text).map_err(|e| BadInput(format!("{option} {text}: {e}")))?;
    if min > 0 && t == 0 {
        return Err(BadInput(format!("{option} {text}: the time must be positive")).into());
    }
    if t < min {
        return Err(BadInput(format!(
            "{option} {text}: at least {}ms (a shorter interval gives more samples than \
             anyone can read; sample a shorter run instead)",
            min / 1_000_000
        ))
        .into());
    }
    Ok(t)
}

/// Refuse a machine predicted not to fit in the host's available memory, unless forced.
fn check_host_memory(s: &Scenario, runs: usize, force: bool) -> anyhow::Result<()> {
    let need = sim::host_memory_estimate(s) * runs as u64;
    let Some(available) = host_available_memory() else {
        return Ok(());
    };
    if need <= available || force {
        return Ok(());
    }
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    Err(BadInput(format!(
        "{}: machine.ram = {} MiB needs about {:.1} GiB of host memory for {runs} run(s) at \
         once, and this host has {:.1} GiB available; use a smaller machine, fewer --kernel \
         runs, or --force to try anyway",
        s.name,
        s.machine.ram >> 20,
        gib(need),
        gib(available)
    ))
    .into())
}

/// `MemAvailable` of this host (Linux), if it can be read.
fn host_available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Create an output file before the run; a path that cannot be written is bad input.
/// Write `value` as pretty JSON to `out`, the file [`create_output`] opened for `path`.
fn write_json(
    out: Option<std::fs::File>,
    path: Option<&Path>,
    value: &serde_json::Value,
) -> anyhow::Result<()> {
    if let (Some(mut f), Some(path)) = (out, path) {
        let text = serde_json::to_string_pretty(value)? + "\n";
        f.write_all(text.as_bytes())
            .and_then(|()| f.flush())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

fn create_output(option: &str, path: &Path) -> anyhow::Result<std::fs::File> {
    if path.is_dir() {
        return Err(BadInput(format!(
            "{option} {}: is a directory; give a file name",
            path.display()
        ))
        .into());
    }
    std::fs::File::create(path).map_err(|e| {
        BadInput(format!(
            "{option} {}: cannot create the file: {e}",
            path.display()
        ))
        .into()
    })
}

/// Create the `--html` directory before the run, and its index: a path that cannot be
/// written is bad input.
/// A reproduction's `--json` file, created, and its `--html` directory, made, before any
/// run: a bad path fails at once.
fn open_outputs(
    json_path: Option<&Path>,
    html_dir: Option<&Path>,
) -> anyhow::Result<Option<std::fs::File>> {
    let json_out = json_path.map(|p| create_output("--json", p)).transpose()?;
    if let Some(dir) = html_dir {
        create_html_dir(dir)?;
    }
    Ok(json_out)
}

fn create_html_dir(dir: &Path) -> anyhow::Result<()> {
    let bad = |e: std::io::Error| {
        BadInput(format!(
            "--html {}: cannot write the report there: {e}",
            dir.display()
        ))
    };
    std::fs::create_dir_all(dir).map_err(bad)?;
    std::fs::File::create(dir.join("index.html")).map_err(bad)?;
    Ok(())
}

/// Write the HTML report's files and say where its index is.
fn write_html(dir: &Path, report: &html::Report) -> anyhow::Result<()> {
    html::write(dir, &html::site(report))
        .with_context(|| format!("writing the HTML report to {}", dir.display()))?;
    eprintln!("mmsim: HTML report in {}", dir.join("index.html").display());
    Ok(())
}

/// Warn before the run when a time-series file is predicted to be large.
fn warn_series_size(s: &Scenario, interval: Nanos, path: &Path) {
    let rows = s.run.duration / interval + 1;
    let columns = mmsim::report::timeseries::COLUMNS.len() + 2 * s.machine.devices.len();
    let bytes = rows * mmsim::report::timeseries::max_line_bytes(columns);
    if bytes > SERIES_WARN_BYTES {
        eprintln!(
            "mmsim: warning: {} will hold {rows} samples, up to {} MiB; a longer \
             --sample-interval makes it smaller",
            path.display(),
            bytes >> 20
        );
    }
}

/// A buffered output file that warns on stderr, once, when it passes `limit` bytes.
fn warn_past(f: std::fs::File, path: &Path, limit: u64) -> Box<dyn Write + Send> {
    Box::new(std::io::BufWriter::new(WarnPast {
        f,
        path: path.to_path_buf(),
        written: 0,
        limit,
    }))
}

struct WarnPast {
    f: std::fs::File,
    path: PathBuf,
    written: u64,
    limit: u64,
}

impl Write for WarnPast {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.f.write(buf)?;
        let before = self.written;
        self.written += n as u64;
        if before <= self.limit && self.written > self.limit {
            eprintln!(
                "mmsim: warning: {} has passed {} MiB and is still growing",
                self.path.display(),
                self.limit >> 20
            );
        }
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.f.flush()
    }
}

/// The output file of each kernel: FILE itself for one kernel, else FILE with the kernel's
/// label before the extension (`trace.txt` → `trace.3.9.txt`).
fn per_kernel_paths(file: Option<&Path>, configs: &[KernelConfig]) -> Vec<Option<PathBuf>> {
    configs
        .iter()
        .map(|k| {
            let file = file?;
            if configs.len() == 1 {
                return Some(file.to_path_buf());
            }
            let stem = file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let name = match file.extension() {
                Some(ext) => format!("{stem}.{}.{}", k.label(), ext.to_string_lossy()),
                None => format!("{stem}.{}", k.label()),
            };
            Some(file.with_file_name(name))
        })
        .collect()
}

/// Run every kernel, each on its own thread; results come back in the order given. On a
/// terminal each run shows a progress bar in simulated seconds.
fn run_all(
    s: &Scenario,
    configs: &[KernelConfig],
    seed: u64,
    opts: RunOptions,
    mut outputs: Vec<RunOutputs>,
) -> anyhow::Result<Vec<Sampled>> {
    let bars = indicatif::MultiProgress::new();
    let total = s.run.duration / SEC;
    let style = indicatif::ProgressStyle::with_template(
        "{prefix:>20} {bar:40} {pos}/{len} simulated s {elapsed_precise}",
    )
    .expect("a valid template");
    for (k, out) in configs.iter().zip(&mut outputs) {
        let bar = bars.add(indicatif::ProgressBar::new(total));
        bar.set_style(style.clone());
        bar.set_prefix(k.label());
        out.progress = Some(Box::new(move |now: Nanos| bar.set_position(now / SEC)));
    }
    let results: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = configs
            .iter()
            .zip(outputs)
            .map(|(k, out)| scope.spawn(move || sim::run_with(s, k, seed, opts, out)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a run thread panicked"))
            .collect()
    });
    bars.clear().ok();
    let mut runs = Vec::new();
    for (r, k) in results.into_iter().zip(configs) {
        match r {
            Ok(run) => runs.push(run),
            Err(sim::SimError::Config(m)) => {
                return Err(BadInput(format!("{}: {m}", s.name)).into())
            }
            Err(e) => return Err(anyhow::anyhow!("kernel {}: {e}", k.label())),
        }
    }
    Ok(runs)
}

/// `mmsim sweep --dask`: the Python package runs the sweep on the cluster (Dask's client is
/// Python's), with the same output and points directory.
fn dask_sweep(
    path: &Path,
    address: &str,
    out: Option<PathBuf>,
    format: Option<String>,
    points_dir: Option<PathBuf>,
) -> anyhow::Result<()> {
    use std::process::Command;
    // The sweep is checked here first: its errors read as every other command's.
    mmsim::sweep::load(path).map_err(|e| BadInput(e.to_string()))?;
    let python = std::env::var_os("MMSIM_PYTHON").unwrap_or_else(|| "python3".into());
    let shown = python.to_string_lossy().into_owned();
    let ready = Command::new(&python)
        .args(["-c", "import mmsim, dask.distributed"])
        .output()
        .map_err(|e| BadInput(format!("--dask: cannot start {shown}: {e}")))?;
    if !ready.status.success() {
        return Err(BadInput(format!(
            "--dask needs mmsim's Python package and Dask in {shown} (pip install \
             './python[dask]'; $MMSIM_PYTHON names another interpreter): {}",
            String::from_utf8_lossy(&ready.stderr)
                .lines()
                .last()
                .unwrap_or("")
        ))
        .into());
    }
    let mut cmd = Command::new(&python);
    cmd.args(["-m", "mmsim", "sweep"])
        .arg(path)
        .arg("--dask")
        .arg(address);
    if let Some(o) = &out {
        cmd.arg("--out").arg(o);
    }
    if let Some(f) = &format {
        cmd.arg("--format").arg(f);
    }
    if let Some(d) = &points_dir {
        cmd.arg("--points-dir").arg(d);
    }
    let status = cmd.status()?;
    match status.code() {
        Some(0) => Ok(()),
        Some(2) => Err(BadInput("the Dask sweep stopped on bad input (above)".into()).into()),
        _ => Err(anyhow::anyhow!("the Dask sweep failed ({status})")),
    }
}

/// `mmsim sweep`: the points not finished earlier run in parallel, each kept as it
/// finishes; then the whole table is written and its rows shown.
fn run_sweep(
    path: &Path,
    out: Option<PathBuf>,
    format: Option<String>,
    points_dir: Option<PathBuf>,
    jobs: Option<u64>,
    force: bool,
    list: bool,
) -> anyhow::Result<()> {
    use mmsim::sweep::{self, store::Store, Record, Table};
    let sw = sweep::load(path).map_err(|e| BadInput(e.to_string()))?;
    let out = out.or_else(|| sw.output.clone()).unwrap_or_else(|| {
        let stem = path.file_stem().unwrap_or_default().to_string_lossy();
        PathBuf::from(format!("{stem}.parquet"))
    });
    let csv = match format.as_deref() {
        Some(f) => f == "csv",
        None => out
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("csv")),
    };
    let dir = points_dir.unwrap_or_else(|| out.with_extension("points"));
    if list {
        let mut names: Vec<&str> = vec!["point", "kernel", "seed"];
        names.extend(sw.axes.iter().map(String::as_str));
        names.extend(["key", "finished"]);
        let finished = |key: &str| dir.join(format!("{key}.json")).is_file();
        let rows: Vec<Vec<String>> = sw
            .points
            .iter()
            .map(|p| {
                let mut r = vec![p.index.to_string(), p.kernel.clone(), p.seed.to_string()];
                r.extend(
                    p.axes
                        .iter()
                        .map(|a| a.as_ref().map_or(String::new(), |v| v.cell().text())),
                );
                r.push(p.key.clone());
                r.push(if finished(&p.key) { "yes" } else { "no" }.to_string());
                r
            })
            .collect();
        print!("{}", text_table(&names, &rows));
        return Ok(());
    }
    let store = Store::open(&dir).map_err(|e| {
        BadInput(format!(
            "--points-dir {}: cannot make the directory: {e}",
            dir.display()
        ))
    })?;
    // The output is opened first: a bad path costs no simulation.
    let file = create_output("--out", &out)?;

    // A key given by several points runs once.
    let mut records: std::collections::BTreeMap<String, Record> = Default::default();
    let mut todo: Vec<&sweep::Point> = Vec::new();
    let mut seen: std::collections::BTreeSet<&str> = Default::default();
    for p in &sw.points {
        // A set, not a scan of `todo`: a sweep may have a million points.
        if !seen.insert(&p.key) {
            continue;
        }
        match store.get(&p.key) {
            Some(r) => {
                records.insert(p.key.clone(), r);
            }
            None => todo.push(p),
        }
    }
    let threads = jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        |j| j as usize,
    );
    let need = todo
        .iter()
        .filter_map(|p| sweep::point_scenario(p).ok())
        .map(|s| sim::host_memory_estimate(&s))
        .max()
        .unwrap_or(0);
    let threads = match host_available_memory() {
        Some(avail) if !force && need > 0 => {
            let fit = (avail / need) as usize;
            if fit == 0 {
                return Err(BadInput(format!(
                    "a point needs about {} MiB of host memory and {} MiB is available;                      --force runs anyway",
                    need >> 20,
                    avail >> 20
                ))
                .into());
            }
            threads.min(fit)
        }
        _ => threads,
    };
    eprintln!(
        "sweep {}: {} points, {} finished earlier ({}), {} to run on {} threads",
        path.display(),
        sw.points.len(),
        records.len(),
        dir.display(),
        todo.len(),
        threads.min(todo.len()).max(1)
    );
    let store_error: std::sync::Mutex<Option<String>> = Default::default();
    let ran = parallel_runs(&todo, Some(threads), |p| {
        let r = sweep::run_point(p);
        if let Err(e) = store.put(&p.key, &r) {
            store_error
                .lock()
                .expect("no worker panicked")
                .get_or_insert(format!("{}: {e}", store.dir.display()));
        }
        (r, format!("point {}", p.index))
    });
    if let Some(e) = store_error.into_inner().expect("no worker panicked") {
        return Err(anyhow::anyhow!("cannot keep finished points in {e}"));
    }
    for (p, r) in todo.iter().zip(ran) {
        records.insert(p.key.clone(), r);
    }
    let rows: Vec<Record> = sw.points.iter().map(|p| records[&p.key].clone()).collect();
    let table = Table::build(&sw, &rows);
    print!("{}", sweep_text(&sw, &table));
    if rows.iter().any(|r| r.error.is_none()) {
        for name in sw.show.iter().filter(|n| table.column(n).is_none()) {
            let hint = table
                .nearest_column(name)
                .map(|n| format!(" (did you mean '{n}'?)"))
                .unwrap_or_default();
            eprintln!("{}: show: the table has no column '{name}'{hint}", sw.file);
        }
    }
    let mut file = std::io::BufWriter::new(file);
    if csv {
        file.write_all(table.to_csv().as_bytes())?;
    } else {
        sweep::parquet::write(&table, &mut file).map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    file.flush()?;
    let failed = rows.iter().filter(|r| r.error.is_some()).count();
    println!(
        "\nwrote {} ({} rows, {} columns){}",
        out.display(),
        table.rows(),
        table.columns.len(),
        if failed > 0 {
            format!("; {failed} points failed (their `error` column says why)")
        } else {
            String::new()
        }
    );
    Ok(())
}

/// The rows as a text table: point, kernel, seed, the axes, the `show` columns, error.
fn sweep_text(sw: &mmsim::sweep::Sweep, table: &mmsim::sweep::Table) -> String {
    let mut names: Vec<&str> = vec!["point", "kernel", "seed"];
    names.extend(sw.axes.iter().map(String::as_str));
    names.extend(sw.show.iter().map(String::as_str));
    names.push("error");
    let rows: Vec<Vec<String>> = (0..table.rows())
        .map(|r| {
            names
                .iter()
                .map(|n| table.column(n).map_or(String::new(), |c| c.cells[r].text()))
                .collect()
        })
        .collect();
    text_table(&names, &rows)
}

/// Columns left-aligned under their names, two spaces apart.
fn text_table(names: &[&str], rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            rows.iter()
                .map(|r| r[i].len())
                .max()
                .unwrap_or(0)
                .max(n.len())
        })
        .collect();
    let line = |cells: &mut dyn Iterator<Item = &str>| -> String {
        let mut l: String = cells
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect::<Vec<_>>()
            .join("  ");
        l.truncate(l.trim_end().len());
        l + "\n"
    };
    let mut s = line(&mut names.iter().copied());
    for r in rows {
        s.push_str(&line(&mut r.iter().map(String::as_str)));
    }
    s
}

/// `mmsim reproduce`: the experiment's report, or with `sensitivity` its sensitivity table.
fn reproduce(
    experiment: &str,
    p: mmsim::reproduce::parallelio::Procedure,
    sensitivity: bool,
    jobs: Option<usize>,
    json_path: Option<PathBuf>,
    html_dir: Option<PathBuf>,
) -> anyhow::Result<()> {
    use mmsim::reproduce::parallelio;
    if experiment != "parallelio" {
        return Err(BadInput(format!(
            "unknown experiment '{experiment}': expected parallelio, dirty-throttling, stress-highalloc or nowriteback"
        ))
        .into());
    }
    let json_out = open_outputs(json_path.as_deref(), html_dir.as_deref())?;
    let published = parallelio::Tables::published();
    let (text, json) = if sensitivity {
        let variants = parallelio::sensitivity_variants(&p);
        let procedures: Vec<_> = variants.iter().map(|(_, v)| v.clone()).collect();
        let tables = simulate(&procedures, jobs, None)?;
        let rows: Vec<_> = variants
            .iter()
            .map(|(name, _)| name.clone())
            .zip(tables.into_iter().map(|s| s.tables))
            .collect();
        (
            parallelio::sensitivity_report(&p, &published, &rows),
            parallelio::sensitivity_json(&published, &rows),
        )
    } else {
        // MMTests' monitors sampled every 10 s (mmtests.md §7).
        let sample = html_dir.as_ref().map(|_| 10 * SEC);
        let simulated = simulate(std::slice::from_ref(&p), jobs, sample)?.remove(0);
        if let Some(dir) = &html_dir {
            let cases = p
                .runs()
                .iter()
                .enumerate()
                .map(|(i, run)| {
                    let (id, title) = run.case(&p);
                    let runs = simulated
                        .runs
                        .iter()
                        .map(|kruns| {
                            let (r, series) = &kruns[i];
                            html::KernelRun {
                                kernel: &r.kernel,
                                series: series.as_ref().expect("sampled for --html"),
                                devices: &r.devices,
                                pauses: &r.dirty_throttle.pauses,
                            }
                        })
                        .collect();
                    html::Case { id, title, runs }
                })
                .collect();
            let report = html::Report {
                title: "mmsim reproduce parallelio".into(),
                sections: parallelio::report_sections(&p, &published, &simulated.tables),
                cases,
            };
            write_html(dir, &report)?;
        }
        let mut json = parallelio::to_json(&published, &simulated.tables);
        json["procedure"] = p.to_json();
        (parallelio::report(&p, &published, &simulated.tables), json)
    };
    print!("{text}");
    write_json(json_out, json_path.as_deref(), &json)?;
    Ok(())
}

/// `mmsim reproduce stress-highalloc`: each kernel's run of the procedure, in parallel
/// into fixed slots, with a progress bar over their simulated time.
fn reproduce_stress_highalloc(
    p: &mmsim::reproduce::stress_highalloc::Procedure,
    versions: bool,
    jobs: Option<usize>,
    json_path: Option<PathBuf>,
) -> anyhow::Result<()> {
    use mmsim::reproduce::stress_highalloc as sh;
    let json_out = json_path
        .as_deref()
        .map(|p| create_output("--json", p))
        .transpose()?;
    let columns = sh::columns(versions);
    let threads = jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    // The bar counts simulated seconds; a run takes at least the procedure's minimum.
    let per_run = sh::min_seconds(p);
    let bar = indicatif::ProgressBar::new(per_run * columns.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:40} {pos}/{len} simulated s {elapsed_precise} {msg}",
        )
        .expect("a valid template"),
    );
    let done: Vec<std::sync::Arc<AtomicU64>> = columns
        .iter()
        .map(|_| std::sync::Arc::new(AtomicU64::new(0)))
        .collect();
    let slots: std::sync::Mutex<Vec<Option<Result<sh::Outcome, sim::SimError>>>> =
        std::sync::Mutex::new(columns.iter().map(|_| None).collect());
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..threads.min(columns.len()) {
            scope.spawn(|| loop {
                let j = next.fetch_add(1, Ordering::Relaxed);
                let Some(col) = columns.get(j) else { break };
                let (mine, all, b) = (done[j].clone(), done.clone(), bar.clone());
                let progress = Box::new(move |now: mmsim::engine::Nanos| {
                    mine.store((now / SEC).min(per_run), Ordering::Relaxed);
                    b.set_position(all.iter().map(|d| d.load(Ordering::Relaxed)).sum());
                });
                let r = sh::run_column(p, col, Some(progress));
                done[j].store(per_run, Ordering::Relaxed);
                slots.lock().expect("no worker panicked")[j] = Some(r);
                bar.set_message(format!("{} done", col.label));
            });
        }
    });
    bar.finish_and_clear();
    let mut runs = Vec::new();
    for (col, r) in columns
        .iter()
        .zip(slots.into_inner().expect("no worker panicked"))
    {
        runs.push((*col, r.expect("every run finished")?));
    }
    print!("{}", sh::report(p, &runs));
    write_json(json_out, json_path.as_deref(), &sh::to_json(p, &runs))?;
    Ok(())
}

/// Run `f` on every item of `work` on `jobs` threads (default: one per CPU), with a
/// progress bar of runs done whose message is what `f` says; the results in `work`'s order,
/// whatever the order they finish in.
fn parallel_runs<W: Sync, R: Send>(
    work: &[W],
    jobs: Option<usize>,
    f: impl Fn(&W) -> (R, String) + Sync,
) -> Vec<R> {
    let threads = jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let bar = indicatif::ProgressBar::new(work.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:40} {pos}/{len} runs {elapsed_precise} {msg}",
        )
        .expect("a valid template"),
    );
    let slots: std::sync::Mutex<Vec<Option<R>>> =
        std::sync::Mutex::new((0..work.len()).map(|_| None).collect());
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..threads.min(work.len()) {
            scope.spawn(|| loop {
                let j = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = work.get(j) else { break };
                let (r, msg) = f(item);
                slots.lock().expect("no worker panicked")[j] = Some(r);
                bar.inc(1);
                bar.set_message(msg);
            });
        }
    });
    bar.finish_and_clear();
    slots
        .into_inner()
        .expect("no worker panicked")
        .into_iter()
        .map(|r| r.expect("every run finished"))
        .collect()
}

/// `mmsim reproduce nowriteback`: seed 002's 32 runs in parallel into fixed slots; with
/// `html_dir`, each sampled every simulated second and drawn, the kernels side by side.
fn reproduce_nowriteback(
    p: mmsim::reproduce::nowriteback::Procedure,
    jobs: Option<usize>,
    json_path: Option<PathBuf>,
    html_dir: Option<PathBuf>,
) -> anyhow::Result<()> {
    use mmsim::reproduce::nowriteback as nw;
    let json_out = open_outputs(json_path.as_deref(), html_dir.as_deref())?;
    let sample = html_dir.as_ref().map(|_| SEC);
    let work = nw::runs();
    let slots = parallel_runs(&work, jobs, |&(c, test, k)| {
        let done = format!(
            "{} {} {} done",
            nw::CONFIGS[c].label,
            test.name(),
            nw::KERNELS[k]
        );
        (nw::run_one(&p, (c, test, k), sample), done)
    });
    let mut done = Vec::new();
    let mut sampled = Vec::new();
    for (run, r) in work.iter().zip(slots) {
        let (outcome, series) = r?;
        done.push((*run, outcome));
        sampled.push(series);
    }
    let res = nw::Results::new(p, done);
    let text = nw::report(&res);
    print!("{text}");
    if let Some(dir) = &html_dir {
        let verdicts = nw::claims(&nw::simulated_table(&res), Some(&nw::extra(&res)));
        // work is in pairs: each run under 3.0, then under the series.
        let cases = work
            .chunks(2)
            .zip(sampled.chunks(2))
            .map(|(pair, runs)| {
                let (c, test, _) = pair[0];
                html::Case {
                    id: nw::case_id(c, test),
                    title: format!(
                        "{} {} under {} and {}",
                        nw::CONFIGS[c].label,
                        test.name(),
                        nw::KERNELS[0],
                        nw::KERNELS[1]
                    ),
                    runs: runs
                        .iter()
                        .map(|r| {
                            let (result, series) = r.as_ref().expect("--html samples every run");
                            html::KernelRun {
                                kernel: &result.kernel,
                                series,
                                devices: &result.devices,
                                pauses: &result.dirty_throttle.pauses,
                            }
                        })
                        .collect(),
                }
            })
            .collect();
        let report = report_with_claims(
            "mmsim reproduce nowriteback",
            "The letter's table, MMTests' vmstat tables and the fidelity",
            text,
            verdicts,
            cases,
        );
        write_html(dir, &report)?;
    }
    write_json(json_out, json_path.as_deref(), &nw::to_json(&res))?;
    Ok(())
}

/// A reproduction's HTML report: its tables under `heading`, its claims, and its cases.
fn report_with_claims<'a>(
    title: &str,
    heading: &str,
    text: String,
    verdicts: Vec<mmsim::reproduce::Verdict>,
    cases: Vec<html::Case<'a>>,
) -> html::Report<'a> {
    let summary = mmsim::reproduce::verdict_summary(&verdicts);
    html::Report {
        title: title.into(),
        sections: vec![
            html::Section::Table {
                heading: heading.into(),
                text,
            },
            html::Section::Claims { verdicts, summary },
        ],
        cases,
    }
}

/// `mmsim reproduce memcg-softlimit`: seed 001's runs in parallel into fixed slots, each
/// sampled every simulated second; with `html_dir`, each configuration's first boot drawn
/// under both kernels side by side.
fn reproduce_memcg_softlimit(
    p: mmsim::reproduce::memcg_softlimit::Procedure,
    jobs: Option<usize>,
    json_path: Option<PathBuf>,
    html_dir: Option<PathBuf>,
) -> anyhow::Result<()> {
    use mmsim::reproduce::memcg_softlimit as ms;
    let json_out = open_outputs(json_path.as_deref(), html_dir.as_deref())?;
    let work = ms::runs(&p);
    let slots = parallel_runs(&work, jobs, |&(c, k, b)| {
        let done = format!("{} {} boot {} done", c.id(), ms::KERNELS[k], b + 1);
        (ms::run_one(&p, (c, k, b)), done)
    });
    let mut done = Vec::new();
    let mut sampled = Vec::new();
    for (run, r) in work.iter().zip(slots) {
        let (outcome, series) = r?;
        done.push((*run, outcome));
        sampled.push(series);
    }
    let res = ms::Results { procedure: p, done };
    let text = ms::report(&res);
    print!("{text}");
    if let Some(dir) = &html_dir {
        let verdicts = ms::claims(&res.table(), Some(&res.extra()));
        // The first boot of each configuration, under both kernels.
        let cases = ms::Config::ALL
            .iter()
            .map(|&c| {
                let runs = (0..ms::KERNELS.len())
                    .map(|k| {
                        let i = work
                            .iter()
                            .position(|&w| w == (c, k, 0))
                            .expect("every configuration has a first boot");
                        let (result, series) = &sampled[i];
                        html::KernelRun {
                            kernel: &result.kernel,
                            series,
                            devices: &result.devices,
                            pauses: &result.dirty_throttle.pauses,
                        }
                    })
                    .collect();
                html::Case {
                    id: c.id().into(),
                    title: format!(
                        "{}, first boot, under {} and {}",
                        c.title(),
                        ms::KERNELS[0],
                        ms::KERNELS[1]
                    ),
                    runs,
                }
            })
            .collect();
        let report = report_with_claims(
            "mmsim reproduce memcg-softlimit",
            "The letter's rows, published beside simulated, and the fidelity",
            text,
            verdicts,
            cases,
        );
        write_html(dir, &report)?;
    }
    write_json(json_out, json_path.as_deref(), &ms::to_json(&res))?;
    Ok(())
}

/// `mmsim reproduce dirty-throttling`: the default subset of Wu's suite, every case with
/// `full`, or one; each case under both kernels, runs in parallel into fixed slots.
fn reproduce_dirty_throttling(
    full: bool,
    case: Option<String>,
    jobs: Option<usize>,
    json_path: Option<PathBuf>,
    html_dir: Option<PathBuf>,
) -> anyhow::Result<()> {
    use mmsim::reproduce::dirty_throttling as dt;
    let cases = match case {
        Some(name) => vec![dt::find_case(&name).ok_or_else(|| {
            let near = dt::nearest_case(&name)
                .map(|n| format!(" (did you mean '{n}'?)"))
                .unwrap_or_default();
            BadInput(format!(
                "unknown case '{name}'{near}; cases are named <fs>-<N>dd-1M-<cpus>p-<MemTotal>M, e.g. {}",
                dt::default_cases()[0].name()
            ))
        })?],
        None if full => dt::full_cases(),
        None => dt::default_cases(),
    };
    let json_out = open_outputs(json_path.as_deref(), html_dir.as_deref())?;
    let work: Vec<(usize, usize)> = (0..cases.len())
        .flat_map(|c| (0..dt::KERNELS.len()).map(move |k| (c, k)))
        .collect();
    let slots = parallel_runs(&work, jobs, |&(c, k)| {
        (dt::run_case(&cases[c], dt::KERNELS[k]), String::new())
    });
    let mut results: dt::Results = Vec::new();
    let mut runs: Vec<[dt::CaseRun; 2]> = Vec::new();
    let mut done = slots.into_iter();
    for c in &cases {
        let old = done.next().expect("every run finished")?;
        let new = done.next().expect("every run finished")?;
        results.push((*c, [old.summary.clone(), new.summary.clone()]));
        runs.push([old, new]);
    }
    let text = dt::report(&results);
    print!("{text}");
    if let Some(dir) = &html_dir {
        let report = html::Report {
            title: "mmsim reproduce dirty-throttling".into(),
            sections: vec![html::Section::Table {
                heading: "Cases and claims".into(),
                text,
            }],
            cases: cases
                .iter()
                .zip(&runs)
                .map(|(c, pair)| html::Case {
                    id: c.name(),
                    title: format!(
                        "{} under {} and {}",
                        c.name(),
                        dt::KERNELS[0],
                        dt::KERNELS[1]
                    ),
                    runs: pair
                        .iter()
                        .map(|r| html::KernelRun {
                            kernel: &r.result.kernel,
                            series: &r.series,
                            devices: &r.result.devices,
                            pauses: &r.result.dirty_throttle.pauses,
                        })
                        .collect(),
                })
                .collect(),
        };
        write_html(dir, &report)?;
    }
    write_json(json_out, json_path.as_deref(), &dt::to_json(&results))?;
    Ok(())
}

/// A run and its time series, if sampled.
type Sampled = (RunResult, Option<TimeSeries>);

/// What [`simulate`] gives for one procedure.
struct Simulated {
    tables: mmsim::reproduce::parallelio::Tables,
    /// Per kernel, its runs in `Procedure::runs` order.
    runs: [Vec<Sampled>; 3],
}

/// The simulated tables of each procedure. Each (procedure, kernel, run) is an independent
/// simulation; simulations go to worker threads and come back into fixed slots, so the
/// result does not depend on `jobs`. With `sample`, every run's time series is sampled that
/// often.
fn simulate(
    procedures: &[mmsim::reproduce::parallelio::Procedure],
    jobs: Option<usize>,
    sample: Option<Nanos>,
) -> anyhow::Result<Vec<Simulated>> {
    use mmsim::reproduce::{parallelio, SEED000_KERNELS};
    use std::sync::atomic::AtomicUsize as Next;
    use std::sync::{Arc, Mutex};
    let jobs_list: Vec<(usize, usize, parallelio::Run)> = procedures
        .iter()
        .enumerate()
        .flat_map(|(v, p)| {
            let order = p.runs();
            (0..3).flat_map(move |k| order.clone().into_iter().map(move |r| (v, k, r)))
        })
        .collect();
    let threads = jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    // Progress in simulated seconds; a run takes at least its memcachetest phases.
    let floor: Vec<u64> = jobs_list
        .iter()
        .map(|&(v, _, r)| procedures[v].min_seconds(r))
        .collect();
    let bar = indicatif::ProgressBar::new(floor.iter().sum());
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:40} {pos}/{len} simulated s {elapsed_precise}",
        )
        .expect("a valid template"),
    );
    let done: Arc<Vec<AtomicU64>> = Arc::new(jobs_list.iter().map(|_| AtomicU64::new(0)).collect());
    type Slot = Option<Result<Sampled, sim::SimError>>;
    let slots: Mutex<Vec<Slot>> = Mutex::new((0..jobs_list.len()).map(|_| None).collect());
    let next = Next::new(0);
    let show = |done: &[AtomicU64]| done.iter().map(|d| d.load(Ordering::Relaxed)).sum::<u64>();
    std::thread::scope(|scope| {
        for _ in 0..threads.min(jobs_list.len()) {
            scope.spawn(|| loop {
                let j = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(v, k, run)) = jobs_list.get(j) else {
                    break;
                };
                let (bar2, done2, cap) = (bar.clone(), done.clone(), floor[j]);
                let progress = Box::new(move |now: u64| {
                    done2[j].store((now / 1_000_000_000).min(cap), Ordering::Relaxed);
                    bar2.set_position(show(&done2));
                });
                let p = &procedures[v];
                let r = parallelio::run_one(p, SEED000_KERNELS[k], run, Some(progress), sample);
                done[j].store(floor[j], Ordering::Relaxed);
                bar.set_position(show(&done));
                slots.lock().expect("no worker panicked")[j] = Some(r);
            });
        }
    });
    bar.finish_and_clear();
    let mut per_kernel: Vec<[Vec<Sampled>; 3]> =
        procedures.iter().map(|_| Default::default()).collect();
    for ((v, k, _), r) in jobs_list
        .iter()
        .zip(slots.into_inner().expect("no worker panicked"))
    {
        per_kernel[*v][*k].push(r.expect("every run finished")?);
    }
    Ok(procedures
        .iter()
        .zip(per_kernel)
        .map(|(p, runs)| {
            let results = runs
                .each_ref()
                .map(|kruns| kruns.iter().map(|(r, _)| r.clone()).collect());
            Simulated {
                tables: parallelio::tables(p, &results),
                runs,
            }
        })
        .collect())
}

/// Counts live and peak heap bytes, for the benchmark's bytes-per-page figure.
pub struct CountingAlloc;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// Blocks from this size on are the model's big tables (page state, page tables, the swap
/// map): read at random, one or two cache lines a page, so with 4 KiB host pages nearly
/// every access also misses the TLB. They get whole 2 MiB pages of their own.
const HUGE_TABLE: usize = 4 << 20;

/// Big tables straight from the host kernel, 2 MiB-aligned and advised as transparent huge
/// pages (`MADV_HUGEPAGE`: this machine's THP is `madvise` only). Fresh anonymous memory
/// reads as zeroes, as `calloc`'s does, and is resident only where touched (in 2 MiB
/// steps). Nothing computed depends on the advice; a kernel that refuses it leaves 4 KiB
/// pages.
#[cfg(target_os = "linux")]
mod huge {
    const HUGE: usize = 2 << 20;
    const PROT_READ: i32 = 1;
    const PROT_WRITE: i32 = 2;
    const MAP_PRIVATE: i32 = 2;
    const MAP_ANONYMOUS: i32 = 0x20;
    const MADV_HUGEPAGE: i32 = 14;
    extern "C" {
        fn mmap(addr: *mut u8, len: usize, prot: i32, flags: i32, fd: i32, off: i64) -> *mut u8;
        fn munmap(addr: *mut u8, len: usize) -> i32;
        fn madvise(addr: *mut u8, len: usize, advice: i32) -> i32;
    }

    /// A zeroed block of `size` bytes, or null.
    pub fn alloc(size: usize) -> *mut u8 {
        let len = size.next_multiple_of(HUGE);
        // Over-map by one huge page, then trim to an aligned start.
        // SAFETY: a fresh private anonymous mapping; the trimmed parts are ours to unmap.
        unsafe {
            let p = mmap(
                std::ptr::null_mut(),
                len + HUGE,
                PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS,
                -1,
                0,
            );
            if p as isize == -1 {
                return std::ptr::null_mut();
            }
            let start = (p as usize).next_multiple_of(HUGE);
            let head = start - p as usize;
            if head > 0 {
                munmap(p, head);
            }
            if HUGE - head > 0 {
                munmap((start + len) as *mut u8, HUGE - head);
            }
            madvise(start as *mut u8, len, MADV_HUGEPAGE);
            start as *mut u8
        }
    }

    /// Give back a block from [`alloc`] of `size` bytes.
    pub fn free(p: *mut u8, size: usize) {
        // SAFETY: `p` and the rounded size are what `alloc` mapped.
        unsafe { munmap(p, size.next_multiple_of(HUGE)) };
    }
}

/// A block from the system allocator, or a big table from [`huge`].
fn is_huge(layout: Layout) -> bool {
    cfg!(target_os = "linux") && layout.size() >= HUGE_TABLE && layout.align() <= 4096
}

impl CountingAlloc {
    fn counted(p: *mut u8, size: usize) -> *mut u8 {
        if !p.is_null() {
            let live = LIVE.fetch_add(size, Ordering::Relaxed) + size;
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        p
    }
}

unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        #[cfg(target_os = "linux")]
        if is_huge(layout) {
            return Self::counted(huge::alloc(layout.size()), layout.size());
        }
        Self::counted(unsafe { System.alloc(layout) }, layout.size())
    }
    /// The system's own: `calloc`, whose fresh pages come zeroed from the kernel, so a
    /// large zeroed vector (page state, page tables, the swap map) costs nothing until it
    /// is touched. The trait's default would write every byte at once.
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        #[cfg(target_os = "linux")]
        if is_huge(layout) {
            return Self::counted(huge::alloc(layout.size()), layout.size());
        }
        Self::counted(unsafe { System.alloc_zeroed(layout) }, layout.size())
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        #[cfg(target_os = "linux")]
        if is_huge(layout) {
            huge::free(ptr, layout.size());
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            return;
        }
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    /// The system's own, which may grow a block in place; the trait's default always
    /// copies. Counted as the default's copy would be: the new block allocated before the
    /// old one is freed. A big table moves by copy between the two kinds of block.
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new = Layout::from_size_align(new_size, layout.align()).expect("a valid layout");
        if is_huge(layout) || is_huge(new) {
            // SAFETY: the GlobalAlloc contract: a fresh block, a copy of what both hold,
            // the old block freed.
            unsafe {
                let p = self.alloc(new);
                if !p.is_null() {
                    std::ptr::copy_nonoverlapping(ptr, p, layout.size().min(new_size));
                    self.dealloc(ptr, layout);
                }
                return p;
            }
        }
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            let live = LIVE.fetch_add(new_size, Ordering::Relaxed) + new_size;
            PEAK.fetch_max(live, Ordering::Relaxed);
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }
}

/// `mmsim bench`: wall-clock timing and host memory are measured here, never in the
/// simulator. Each scenario runs once to warm up (caches, the allocator's arenas), then
/// `runs` times; every figure is the median over those runs with its spread.
fn bench(kinds: &[mmsim::bench::Kind], size: mmsim::bench::Size, runs: u32) -> anyhow::Result<()> {
    println!(
        "mmsim bench: {runs} run{} of each scenario after one warm-up run, one thread; \
         times are medians, ±median absolute deviation [min–max] over the runs",
        if runs == 1 { "" } else { "s" }
    );
    for &kind in kinds {
        let s = kind.scenario(size);
        let name = kind.name();
        let run = || measure(&s).map_err(|e| anyhow::anyhow!("bench {name}: {e}"));
        let warm_up = run()?;
        let mut measured = Vec::new();
        for i in 1..=runs {
            let m = run()?;
            anyhow::ensure!(
                m.counts == warm_up.counts,
                "bench {name}: run {i} counted differently from the warm-up run; the \
                 simulation is not deterministic"
            );
            measured.push(m);
        }
        print!("\n{}", bench_report(kind, size, &measured));
    }
    Ok(())
}

/// What one benchmark run measured.
struct Measured {
    counts: mmsim::bench::BenchCounts,
    /// Wall seconds building the machine.
    boot: f64,
    /// Wall seconds running it.
    run: f64,
    /// Peak live heap bytes from boot to the end of the run, above what was live before.
    heap: u64,
    /// VmHWM at the end of the run, reset before it if the host allows.
    rss: Option<u64>,
    /// Whether VmHWM was reset before the run (else it is the process's peak so far).
    rss_reset: bool,
}

fn measure(s: &Scenario) -> Result<Measured, sim::SimError> {
    let rss_reset = reset_peak_rss();
    let (mut t, mut boot, mut run) = (std::time::Instant::now(), 0.0, 0.0);
    let (mut base, mut heap, mut rss) = (0, 0, None);
    let counts = mmsim::bench::run(s, |stage| match stage {
        mmsim::bench::Stage::Start => {
            base = LIVE.load(Ordering::Relaxed);
            PEAK.store(base, Ordering::Relaxed);
            t = std::time::Instant::now();
        }
        mmsim::bench::Stage::Booted => {
            boot = t.elapsed().as_secs_f64();
            t = std::time::Instant::now();
        }
        mmsim::bench::Stage::Ran => {
            run = t.elapsed().as_secs_f64();
            heap = PEAK.load(Ordering::Relaxed) - base;
            rss = peak_rss();
        }
    })?;
    Ok(Measured {
        counts,
        boot,
        run,
        heap: heap as u64,
        rss,
        rss_reset,
    })
}

/// Reset the process's peak resident set (`VmHWM`) to its current size (Linux 4.0 on).
fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// The process's peak resident set in bytes (`VmHWM` of /proc/self/status).
fn peak_rss() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// One scenario's figures: counts (the same in every run), and per wall second of run
/// time their medians and spreads.
fn bench_report(kind: mmsim::bench::Kind, size: mmsim::bench::Size, ms: &[Measured]) -> String {
    use mmsim::bench::Spread;
    let spread = |f: &dyn Fn(&Measured) -> f64| {
        Spread::of(&ms.iter().map(f).collect::<Vec<_>>()).expect("at least one run, no NaN")
    };
    let c = &ms[0].counts;
    let mut out = format!("{}: {}\n", kind.name(), kind.describe(size));
    out.push_str(&format!(
        "  {:<17} {:.1} s on {} page frames\n",
        "simulated", c.simulated_seconds, c.frames
    ));
    let speed = spread(&|m| c.simulated_seconds / m.run);
    out.push_str(&format!(
        "  {:<17} {} simulated s per wall s\n",
        "speed",
        show_spread(&speed, 1.0, "", 1)
    ));
    out.push_str(&format!(
        "  {:<17} {} s\n",
        "boot",
        show_spread(&spread(&|m| m.boot), 1.0, "", 3)
    ));
    out.push_str(&format!(
        "  {:<17} {} s\n",
        "run",
        show_spread(&spread(&|m| m.run), 1.0, "", 3)
    ));
    out.push_str(&format!(
        "  {:<17} {:>12}   per wall s of run\n",
        "", "count"
    ));
    for (name, n) in c.figures() {
        let rate = spread(&|m| n as f64 / m.run);
        let (f, unit) = si_unit(rate.median);
        // Three significant figures in the median.
        let decimals = match rate.median * f {
            x if x >= 100.0 => 0,
            x if x >= 10.0 => 1,
            _ => 2,
        };
        out.push_str(&format!(
            "  {:<17} {:>12}   {}\n",
            name,
            n,
            show_spread(&rate, f, unit, decimals)
        ));
    }
    let a = c.accesses;
    out.push_str(&format!(
        "  accesses, each counted once: {} = {} page-table hits + {} that faulted (the kernel \
         counted {} faults)\n",
        a.total(),
        a.hits,
        a.faulted,
        c.pgfault
    ));
    let mib = |b: f64| b / (1u64 << 20) as f64;
    let heap = spread(&|m| m.heap as f64);
    out.push_str(&format!(
        "  {:<17} {:.1} bytes per frame ({} MiB; live heap above what was live before boot)\n",
        "peak heap",
        heap.median / c.frames as f64,
        show_spread(&heap, mib(1.0), "", 1)
    ));
    if ms.iter().all(|m| m.rss.is_some()) {
        let rss = spread(&|m| m.rss.unwrap_or(0) as f64);
        let how = if ms.iter().all(|m| m.rss_reset) {
            "VmHWM of the process, reset before each run"
        } else {
            "VmHWM of the process, which could not be reset between runs"
        };
        out.push_str(&format!(
            "  {:<17} {:.1} bytes per frame ({} MiB; {how})\n",
            "peak RSS",
            rss.median / c.frames as f64,
            show_spread(&rss, mib(1.0), "", 1)
        ));
    } else {
        out.push_str(&format!(
            "  {:<17} not available on this host\n",
            "peak RSS"
        ));
    }
    out
}

/// A rate's unit: millions, thousands or ones, chosen by its median.
fn si_unit(x: f64) -> (f64, &'static str) {
    if x >= 1e6 {
        (1e-6, " M")
    } else if x >= 1e3 {
        (1e-3, " k")
    } else {
        (1.0, "")
    }
}

/// `median ±mad [min–max]`, each scaled by `f`, with `decimals` decimals and `unit` after
/// the median; just the median when every run gave the same figure.
fn show_spread(s: &mmsim::bench::Spread, f: f64, unit: &str, decimals: usize) -> String {
    let s = s.scaled(f);
    let d = decimals;
    if s.min == s.max {
        return format!("{:.d$}{unit}", s.median);
    }
    format!(
        "{:.d$}{unit} ±{:.d$} [{:.d$}–{:.d$}]",
        s.median, s.mad, s.min, s.max
    )
}

/// `mmsim kernels`: generated from the registry.
fn kernels_text() -> String {
    let mut out = String::from("Presets:\n");
    for p in PRESETS {
        let k = presets::resolve(p.name, &[]).expect("registry preset");
        let on: Vec<&str> = SWITCHES
            .iter()
            .filter(|d| k.switches.on(d.switch))
            .map(|d| d.name)
            .collect();
        out.push_str(&format!("  {:<20} {}\n", p.name, p.summary));
        out.push_str(&format!(
            "  {:<20} base: {}; switches on: {}\n",
            "",
            p.base.name(),
            if on.is_empty() {
                "none".into()
            } else {
                on.len().to_string()
            }
        ));
    }
    out.push_str(
        "\nSwitches (scenario: [kernel.switches] NAME = true; command line: --set NAME=true):\n",
    );
    for d in SWITCHES {
        out.push_str(&format!(
            "\n  {}\n    patch:  {}\n    series: {}\n    {}\n",
            d.name, d.patch, d.series, d.doc
        ));
    }
    out
}

/// `--page-cache`: a size in whole pages, at most 1 GiB (files of 32 KiB among the
/// 50,000 cached at boot take at most 1,562 MiB).
fn parse_page_cache(s: &str) -> Result<u64, String> {
    let b = mmsim::scenario::parse_size(s)?;
    if b % 4096 != 0 || b > 1 << 30 {
        return Err(format!("expected whole pages up to 1G, found {b} bytes"));
    }
    Ok(b)
}

/// `--swap-gap`: a size in whole pages, at most 1 TiB (the 2 TB test disk keeps room for
/// the swap area and the test filesystem).
fn parse_swap_gap(s: &str) -> Result<u64, String> {
    let b = mmsim::scenario::parse_size(s)?;
    if b % 4096 != 0 || b > 1 << 40 {
        return Err(format!("expected whole pages up to 1T, found {b} bytes"));
    }
    Ok(b)
}

/// `--pci-hole`: a size in whole pages that leaves DMA's 16 MiB below it.
fn parse_pci_hole(s: &str) -> Result<u64, String> {
    let b = mmsim::scenario::parse_size(s)?;
    if b % 4096 != 0 || b > (4 << 30) - (16 << 20) {
        return Err(format!(
            "expected whole pages up to 4080M (DMA's 16M stay below the hole), found {b} bytes"
        ));
    }
    Ok(b)
}
