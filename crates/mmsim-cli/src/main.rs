//! The `mmsim` command line: a thin layer over the `mmsim` library.
//!
//! Exit status: 0 on success, 2 for bad input (scenario, preset or switch), 1 when a run
//! stopped on a broken invariant or output could not be written.

use anyhow::Context;
use clap::{Parser, Subcommand};
use mmsim::presets::{self, KernelConfig, PRESETS, SWITCHES};
use mmsim::report::{json, terminal, RunResult};
use mmsim::scenario::{self, Scenario};
use mmsim::sim::{self, RunOptions, RunOutputs};
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Parser, Debug)]
#[command(
    name = "mmsim",
    version,
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
        #[arg(long = "set", value_name = "SWITCH=VALUE")]
        set: Vec<String>,
        /// Seed of the run's RNG (default: the scenario's [run] seed).
        #[arg(long)]
        seed: Option<u64>,
        /// Write the results as JSON to FILE.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// Check page-state invariants after every reclaim batch (slow).
        #[arg(long)]
        check: bool,
        /// Write mm_vmscan_* tracepoint events in ftrace's text format to FILE (with several
        /// kernels, one file each: the kernel label goes before the extension).
        #[arg(long, value_name = "FILE")]
        trace: Option<PathBuf>,
        /// Write a CSV time series of free pages per zone, dirty/writeback/anon/file pages and
        /// reclaim counters to FILE (one file per kernel, as with --trace).
        #[arg(long, value_name = "FILE")]
        timeseries: Option<PathBuf>,
        /// Time between time-series samples.
        #[arg(long, value_name = "TIME", default_value = "1s")]
        sample_interval: String,
    },
    /// Re-run a published experiment and print its tables, published beside simulated, with
    /// the authors' claims judged on the simulated figures. Experiments: parallelio (seed 000).
    Reproduce {
        /// The experiment.
        experiment: String,
        /// A short procedure for tests: a smaller machine, 60 s runs, 2 iterations.
        #[arg(long)]
        fast: bool,
        /// Run the whole procedure on one machine per kernel, as MMTests does, so each
        /// iteration starts with what the last left in memory (default: each iteration on a
        /// fresh machine with its own seed).
        #[arg(long)]
        sequential: bool,
        /// Runs at once (default: the number of CPUs). Results do not depend on it.
        #[arg(long)]
        jobs: Option<usize>,
        /// Write the tables and verdicts as JSON to FILE.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
    },
    /// List kernel presets and behaviour switches, with what each models.
    Kernels,
    /// Benchmark: simulated page events per second and resident bytes per simulated page,
    /// on examples/anon-pressure.toml under 3.9 (single-threaded).
    Bench,
    /// Check a scenario file without running it.
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    match dispatch(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mmsim: {e:#}");
            if e.downcast_ref::<BadInput>().is_some() {
                ExitCode::from(2)
            } else {
                ExitCode::from(1)
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
            trace,
            timeseries,
            sample_interval,
        } => {
            let s = load(&scenario)?;
            let configs = resolve_kernels(&s, &kernels, &set)?;
            let seed = seed.unwrap_or(s.run.seed);
            let interval = scenario::parse_duration(&sample_interval)
                .ok()
                .filter(|&t| t > 0)
                .ok_or_else(|| {
                    BadInput(format!(
                        "--sample-interval {sample_interval}: expected a time such as 1s or 500ms"
                    ))
                })?;
            let files = RunFiles {
                traces: per_kernel_paths(trace.as_deref(), &configs),
                series: per_kernel_paths(timeseries.as_deref(), &configs),
                interval,
            };
            let opts = RunOptions {
                check_every_batch: check,
            };
            let runs = run_all(&s, &configs, seed, opts, &files)?;
            print!("{}", terminal::summary(&runs));
            if let Some(path) = json_path {
                let text = serde_json::to_string_pretty(&json::runs_to_json(&runs))? + "\n";
                std::fs::write(&path, text)
                    .with_context(|| format!("writing {}", path.display()))?;
            }
            Ok(())
        }
        Command::Bench => bench(),
        Command::Reproduce {
            experiment,
            fast,
            sequential,
            jobs,
            json: json_path,
        } => reproduce(&experiment, fast, sequential, jobs, json_path),
        Command::Kernels => {
            print!("{}", kernels_text());
            Ok(())
        }
        Command::Validate { scenario } => {
            let s = load(&scenario)?;
            resolve_kernels(&s, &[], &[])?;
            println!(
                "{}: ok ({} MiB RAM, {} CPUs, {} workloads, {} s)",
                scenario.display(),
                s.machine.ram >> 20,
                s.machine.cpus,
                s.workloads.len(),
                s.run.duration / mmsim::engine::SEC
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
        let on = match value {
            "true" | "1" | "on" => true,
            "false" | "0" | "off" => false,
            _ => {
                return Err(
                    BadInput(format!("--set {item}: the value must be true or false")).into(),
                )
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
    names
        .iter()
        .map(|p| presets::resolve(p, &overrides).map_err(|e| BadInput(e.to_string()).into()))
        .collect()
}

/// Per-kernel output files of `run`.
struct RunFiles {
    traces: Vec<Option<PathBuf>>,
    series: Vec<Option<PathBuf>>,
    interval: u64,
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

/// Run every kernel, each on its own thread; results come back in the order given.
fn run_all(
    s: &Scenario,
    configs: &[KernelConfig],
    seed: u64,
    opts: RunOptions,
    files: &RunFiles,
) -> anyhow::Result<Vec<RunResult>> {
    let mut outputs = Vec::new();
    for (trace, series) in files.traces.iter().zip(&files.series) {
        let trace = match trace {
            Some(p) => {
                let f = std::fs::File::create(p)
                    .with_context(|| format!("creating {}", p.display()))?;
                Some(Box::new(std::io::BufWriter::new(f)) as Box<dyn std::io::Write + Send>)
            }
            None => None,
        };
        outputs.push(RunOutputs {
            trace,
            sample_interval: series.as_ref().map(|_| files.interval),
            progress: None,
        });
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
    let mut runs = Vec::new();
    for ((r, k), series_path) in results.into_iter().zip(configs).zip(&files.series) {
        match r {
            Ok((r, series)) => {
                if let (Some(path), Some(series)) = (series_path, series) {
                    std::fs::write(path, series.to_csv())
                        .with_context(|| format!("writing {}", path.display()))?;
                }
                runs.push(r)
            }
            Err(sim::SimError::Config(m)) => {
                return Err(BadInput(format!("{}: {m}", s.name)).into())
            }
            Err(e) => return Err(anyhow::anyhow!("kernel {}: {e}", k.label())),
        }
    }
    Ok(runs)
}

/// `mmsim reproduce`: each (kernel, run) of the procedure is an independent simulation;
/// simulations go to worker threads and come back into fixed slots, so the output does not
/// depend on `jobs`.
fn reproduce(
    experiment: &str,
    fast: bool,
    sequential: bool,
    jobs: Option<usize>,
    json_path: Option<PathBuf>,
) -> anyhow::Result<()> {
    use mmsim::reproduce::{parallelio, SEED000_KERNELS};
    use std::sync::atomic::{AtomicU64, AtomicUsize as Next};
    use std::sync::{Arc, Mutex};
    if experiment != "parallelio" {
        return Err(BadInput(format!(
            "unknown experiment '{experiment}': expected parallelio"
        ))
        .into());
    }
    let mut p = if fast {
        parallelio::Procedure::fast()
    } else {
        parallelio::Procedure::published()
    };
    p.sequential = sequential;
    let order = p.runs();
    let jobs_list: Vec<(usize, parallelio::Run)> = (0..3)
        .flat_map(|k| order.iter().map(move |&r| (k, r)))
        .collect();
    let threads = jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    // Progress in simulated seconds; a run takes at least its memcachetest phases.
    let floor: Vec<u64> = jobs_list.iter().map(|&(_, r)| p.min_seconds(r)).collect();
    let bar = indicatif::ProgressBar::new(floor.iter().sum());
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:40} {pos}/{len} simulated s {elapsed_precise}",
        )
        .expect("a valid template"),
    );
    let done: Arc<Vec<AtomicU64>> = Arc::new(jobs_list.iter().map(|_| AtomicU64::new(0)).collect());
    let slots: Mutex<Vec<Option<Result<mmsim::report::RunResult, sim::SimError>>>> =
        Mutex::new((0..jobs_list.len()).map(|_| None).collect());
    let next = Next::new(0);
    let show = |done: &[AtomicU64]| done.iter().map(|d| d.load(Ordering::Relaxed)).sum::<u64>();
    std::thread::scope(|scope| {
        for _ in 0..threads.min(jobs_list.len()) {
            scope.spawn(|| loop {
                let j = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(k, run)) = jobs_list.get(j) else {
                    break;
                };
                let (bar2, done2, cap) = (bar.clone(), done.clone(), floor[j]);
                let progress = Box::new(move |now: u64| {
                    done2[j].store((now / 1_000_000_000).min(cap), Ordering::Relaxed);
                    bar2.set_position(show(&done2));
                });
                let r = parallelio::run_one(&p, SEED000_KERNELS[k], run, Some(progress));
                done[j].store(floor[j], Ordering::Relaxed);
                bar.set_position(show(&done));
                slots.lock().expect("no worker panicked")[j] = Some(r);
            });
        }
    });
    bar.finish_and_clear();
    let mut per_kernel: [Vec<mmsim::report::RunResult>; 3] = Default::default();
    for ((k, _), r) in jobs_list
        .iter()
        .zip(slots.into_inner().expect("no worker panicked"))
    {
        per_kernel[*k].push(r.expect("every run finished")?);
    }
    let simulated = parallelio::tables(&p, &per_kernel);
    let published = parallelio::Tables::published();
    print!("{}", parallelio::report(&published, &simulated));
    if let Some(path) = json_path {
        let text =
            serde_json::to_string_pretty(&parallelio::to_json(&published, &simulated))? + "\n";
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// Counts live and peak heap bytes, for the benchmark's bytes-per-page figure.
struct CountingAlloc;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

/// `mmsim bench`: wall-clock timing lives here, never in the simulator.
fn bench() -> anyhow::Result<()> {
    let s = mmsim::bench::scenario();
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let t = std::time::Instant::now();
    let mut wall = 0.0;
    let mut peak = 0;
    let c = mmsim::bench::run(&s, || {
        wall = t.elapsed().as_secs_f64();
        peak = PEAK.load(Ordering::Relaxed) - base;
    })?;
    println!(
        "scenario:   examples/anon-pressure.toml, kernel 3.9, seed {}",
        s.run.seed
    );
    println!(
        "simulated:  {:.1} s on {} page frames",
        c.simulated_seconds, c.frames
    );
    println!(
        "events:     {} page events ({} touched, {} scanned, {} swap IO)",
        c.events(),
        c.touched,
        c.scanned,
        c.io
    );
    println!("wall:       {wall:.3} s");
    println!(
        "speed:      {:.1} million page events per second",
        c.events() as f64 / wall / 1e6
    );
    println!(
        "memory:     {:.1} bytes per simulated page (peak heap {:.1} MiB)",
        peak as f64 / c.frames as f64,
        peak as f64 / (1 << 20) as f64
    );
    Ok(())
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
            "  {:<20} switches on: {}\n",
            "",
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
