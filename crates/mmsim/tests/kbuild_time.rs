//! Whole runs of what seed 001 measures: `/usr/bin/time` figures of builds pinned with
//! `cpus`, a build's compiles re-reading their heaps (major faults once reclaim swapped
//! them), and a run that ends with its foreground workload.

use mmsim::presets;
use mmsim::report::RunResult;
use mmsim::scenario;
use mmsim::sim::{self, RunOptions, RunOutputs};

const MACHINE: &str = "[machine]\nram = \"1G\"\ncpus = 4\n\
    [[device]]\nname = \"sda\"\ntype = \"hdd\"\nfilesystem = \"ext4\"\n\
    [swap]\nsize = \"1G\"\ndevice = \"sda\"\n\
    [run]\nend = \"workloads\"\nduration = \"3000s\"\n";

fn run(text: &str) -> (RunResult, mmsim::report::timeseries::TimeSeries) {
    let s = scenario::load_str(text, "<test>", "test").unwrap();
    let k = presets::resolve("mmotm-2013-07-18", &[]).unwrap();
    let outputs = RunOutputs {
        sample_interval: Some(mmsim::engine::SEC),
        keep_series: true,
        ..Default::default()
    };
    let (r, series) = sim::run_with(&s, &k, 1, RunOptions::default(), outputs).unwrap();
    (r, series.unwrap())
}

fn kbuild(cpus: &str, extra: &str) -> String {
    format!(
        "{MACHINE}{extra}[[workload]]\nname = \"make\"\ntype = \"kbuild\"\ndevice = \"sda\"\n\
         jobs = 4\nunits = 24\nrepeat = false\ncompile_cpu = \"2s\"\n{cpus}"
    )
}

fn m(r: &RunResult, w: &str, metric: &str) -> f64 {
    r.metric(w, metric)
        .unwrap_or_else(|| panic!("{w} {metric}"))
}

#[test]
fn a_build_pinned_to_one_cpu_takes_its_whole_cpu_time_and_four_cpus_share_it() {
    let (one, _) = run(&kbuild("cpus = \"2\"\n", ""));
    let (all, _) = run(&kbuild("", ""));
    for r in [&one, &all] {
        assert_eq!(m(r, "make", "builds"), 1.0);
        assert!(m(r, "make", "user_seconds") > 1.0);
    }
    let cpu = |r: &RunResult| m(r, "make", "user_seconds") + m(r, "make", "system_seconds");
    // On one CPU the jobs take turns: the build lasts at least its CPU time.
    assert!(m(&one, "make", "elapsed_seconds") >= cpu(&one));
    // On four they compute at once (reading the cold tree takes as long either way).
    let (e1, e4) = (
        m(&one, "make", "elapsed_seconds"),
        m(&all, "make", "elapsed_seconds"),
    );
    assert!(
        e4 < e1 - 0.5 * cpu(&one),
        "elapsed {e4} unpinned, {e1} pinned"
    );
    // The work is the same, the order of events aside.
    assert!((cpu(&one) / cpu(&all) - 1.0).abs() < 0.2);
}

#[test]
fn compiles_swapped_out_by_limit_reclaim_fault_their_heaps_back_in() {
    // Four compiles' heaps (tens of MB each) do not fit in 48M: limit reclaim swaps
    // them while they compute, and the next slice's re-read faults them back.
    let group = "[[cgroup]]\nname = \"A\"\nmemory.limit_in_bytes = \"48M\"\n";
    let (r, series) = run(&kbuild("cgroup = \"A\"\n", group));
    assert_eq!(m(&r, "make", "builds"), 1.0);
    assert!(m(&r, "make", "major_faults") > 100.0);
    let peak = series.column("swap_used").fold(0.0, f64::max);
    assert!(peak > 1000.0, "swap used peaked at {peak} pages");
    // Without the limit, nothing is swapped and nothing faults from swap.
    let (free, series) = run(&kbuild("", ""));
    assert_eq!(series.column("swap_used").fold(0.0, f64::max), 0.0);
    assert!(m(&free, "make", "major_faults") < m(&r, "make", "major_faults") / 10.0);
}

#[test]
fn the_run_ends_with_dd_not_with_its_background_eater() {
    let text = format!(
        "{MACHINE}[[workload]]\nname = \"dd\"\ntype = \"dd\"\ndevice = \"sda\"\nsize = \"64M\"\n\
         [[workload]]\nname = \"eater\"\ntype = \"mem_eater\"\nsize = \"64M\"\nbackground = true\n"
    );
    let (r, _) = run(&text);
    // dd's /usr/bin/time figures; the eater, still holding, has CPU times and no elapsed.
    let elapsed = m(&r, "dd", "elapsed_seconds");
    assert!(elapsed > 0.0 && m(&r, "dd", "system_seconds") > 0.0);
    assert!(
        (r.simulated_seconds - elapsed).abs() < 1.0,
        "{}",
        r.simulated_seconds
    );
    assert!(m(&r, "eater", "user_seconds") > 0.0);
    assert_eq!(r.metric("eater", "elapsed_seconds"), None);
    // Without `background`, the run waits for the eater, which never ends.
    let (r, _) = run(&text.replace("background = true\n", ""));
    assert_eq!(r.simulated_seconds, 3000.0);
}
