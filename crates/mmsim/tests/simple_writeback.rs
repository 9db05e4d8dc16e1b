//! Whole runs of `type = "simple-writeback"` on the machine of `examples/simple-writeback.toml`
//! (seed 002's), shrunk: every factor's phase runs and reports, the writers' files are
//! removed, the run is deterministic, and the series' direct reclaim never hands xfs a
//! page.

use mmsim::presets;
use mmsim::scenario::load_str;
use mmsim::sim::{self, RunOptions};

/// The example with 1 GiB written at factors 1 and 2, and a 256M machine.
fn scenario() -> mmsim::scenario::Scenario {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/simple-writeback.toml"
    ))
    .expect("the example exists");
    let text = text.replace("ram = \"512M\"", "ram = \"256M\"").replace(
        "device = \"md0\"\n",
        "device = \"md0\"\nsize = \"1G\"\nmax_factor = 2\n",
    );
    load_str(&text, "simple-writeback.toml", "simple-writeback").expect("the shrunk example parses")
}

fn run(preset: &str) -> mmsim::report::RunResult {
    let k = presets::resolve(preset, &[]).unwrap();
    // The invariants every 5 simulated seconds, and at the end.
    let opts = RunOptions {
        check_every_batch: true,
        check_interval: 5_000_000_000,
    };
    sim::run(&scenario(), &k, 1, opts).expect("the run ends cleanly")
}

fn metric(r: &mmsim::report::RunResult, name: &str) -> f64 {
    r.workloads[0]
        .1
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("{name} reported"))
        .1
}

#[test]
fn every_factor_runs_its_writers_and_the_files_are_removed() {
    let r = run("3.0");
    // 4 CPUs: 4 then 8 writers, each writing 1G / jobs.
    for jobs in [4, 8] {
        let e = metric(&r, &format!("elapsed-{jobs}"));
        assert!(e > 0.0, "elapsed-{jobs} = {e}");
        assert!(metric(&r, &format!("elapsed-spread-{jobs}")) >= 0.0);
        assert!(
            metric(&r, &format!("pgscan_kswapd-{jobs}")) > 0.0,
            "1G through 256M reclaims"
        );
    }
    assert!(!r.workloads[0].1.iter().any(|(n, _)| n == "elapsed-16"));
    let vm = |name: &str| r.vmstat.iter().find(|(n, _)| n == name).unwrap().1;
    // Everything written was removed: what is left of the page cache is far below 1G.
    assert!(
        vm("nr_file_pages") < (64 << 20) / 4096,
        "{}",
        vm("nr_file_pages")
    );
    assert_eq!(vm("nr_dirty") + vm("nr_writeback"), 0);
}

/// `iterations` (SIMPLE_WRITEBACK_ITERATIONS) runs each factor's writers that many times
/// before the next factor: the test takes about that many times as long, each factor's
/// scans add up over its iterations, and the driver's `sleep 1` after each factor stays.
#[test]
fn iterations_repeat_each_factors_writers() {
    let k = presets::resolve("3.0", &[]).unwrap();
    let at = |iterations: u32| {
        let mut s = scenario();
        let mmsim::scenario::WorkloadKind::SimpleWriteback(p) = &mut s.workloads[0].kind else {
            panic!("not a simple-writeback");
        };
        p.iterations = iterations;
        sim::run(&s, &k, 1, RunOptions::default()).expect("the run ends cleanly")
    };
    let (once, thrice) = (at(1), at(3));
    let ratio = thrice.simulated_seconds / once.simulated_seconds;
    assert!((2.4..3.6).contains(&ratio), "3 iterations take {ratio} x 1");
    // Two factors, a second's sleep after each.
    assert!(once.simulated_seconds > 2.0, "{}", once.simulated_seconds);
    for jobs in [4, 8] {
        let scans = |r: &mmsim::report::RunResult| metric(r, &format!("pgscan_kswapd-{jobs}"));
        assert!(
            scans(&thrice) > 2.0 * scans(&once),
            "{jobs} writers: {} against {}",
            scans(&thrice),
            scans(&once)
        );
    }
    // Each factor's counts are deltas over its own iterations: together they are no more
    // than the run's. A writer's elapsed time is its own run, so the two factors' means
    // take most of what the run spent outside its two seconds of sleep.
    for r in [&once, &thrice] {
        let iterations = if std::ptr::eq(r, &thrice) { 3.0 } else { 1.0 };
        let writing = iterations * (metric(r, "elapsed-4") + metric(r, "elapsed-8"));
        let awake = r.simulated_seconds - 2.0;
        assert!(
            writing <= awake && writing > 0.5 * awake,
            "{writing} s of {awake}"
        );
        for (phase, total) in [
            ("pgscan_kswapd", "pgscan_kswapd_"),
            ("pgscan_direct", "pgscan_direct_"),
        ] {
            let run: f64 = r
                .vmstat
                .iter()
                .filter(|(n, _)| n.starts_with(total))
                .map(|(_, v)| *v as f64)
                .sum();
            let phases = metric(r, &format!("{phase}-4")) + metric(r, &format!("{phase}-8"));
            assert!(phases <= run, "{phase}: {phases} of {run}");
            if phase == "pgscan_kswapd" {
                assert!(phases > 0.0);
            }
        }
        let written = metric(r, "nr_vmscan_write-4") + metric(r, "nr_vmscan_write-8");
        let vm = r.vmstat.iter().find(|(n, _)| n == "nr_vmscan_write");
        assert!(written <= vm.map_or(0, |v| v.1) as f64, "{written}");
    }
}

#[test]
fn a_run_is_a_function_of_its_inputs() {
    let (a, b) = (run("nowriteback-v3"), run("nowriteback-v3"));
    assert_eq!(a, b);
}

#[test]
fn the_series_never_hands_xfs_a_page_from_direct_reclaim() {
    let series = run("nowriteback-v3");
    let direct: u64 = series
        .vmstat
        .iter()
        .filter(|(n, _)| n.starts_with("pgscan_direct_"))
        .map(|(_, v)| v)
        .sum();
    assert!(direct > 0, "direct reclaim ran");
    assert!(series.warnings.is_empty(), "{:?}", series.warnings);
    // 3.0 may (the unit tests of vmscan show when); any warning it gives is xfs's.
    let old = run("3.0");
    assert!(
        old.warnings
            .iter()
            .all(|(s, _)| s.starts_with("xfs_vm_writepage")),
        "{:?}",
        old.warnings
    );
}

/// The whole example: at factor 64, 256 writers each hold two 1 MiB buffers (MMTests'
/// `ibs=1M obs=1M`), 512 MiB of anonymous memory on a 512 MiB machine, so reclaim swaps;
/// every phase still ends. (Before reclaim's woken waiters passed on a wake-up they did
/// not use, the swap disk's request pool went idle with 36 tasks asleep on it and this run
/// reached its duration in the 128-writer phase.)
#[test]
fn the_writers_buffers_fill_memory_and_every_phase_still_ends() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/simple-writeback.toml"
    ))
    .expect("the example exists");
    let s = load_str(&text, "simple-writeback.toml", "simple-writeback").unwrap();
    let k = presets::resolve("3.0", &[]).unwrap();
    let r = sim::run(&s, &k, 1, RunOptions::default()).expect("the run ends cleanly");
    assert!(
        r.simulated_seconds < 600.0,
        "ended after {} s",
        r.simulated_seconds
    );
    for jobs in [4, 8, 16, 32, 64, 128, 256] {
        assert!(
            metric(&r, &format!("elapsed-{jobs}")) > 0.0,
            "{jobs} writers"
        );
    }
    let vm = |name: &str| r.vmstat.iter().find(|(n, _)| n == name).unwrap().1;
    assert!(vm("pswpout") > 10_000, "pswpout {}", vm("pswpout"));
    assert_eq!(vm("nr_anon_pages"), 0, "every writer freed its buffers");
}
