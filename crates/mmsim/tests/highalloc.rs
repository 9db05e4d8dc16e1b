//! Whole runs of the highalloc workload: order-9 allocations against a machine whose
//! memory is page cache and anonymous memory, through compaction and reclaim.

use mmsim::presets;
use mmsim::scenario::load_str;
use mmsim::sim;

const SCENARIO: &str = r#"
[machine]
ram = "1G"
cpus = 2

[[device]]
name = "sda"
type = "hdd"
filesystem = "ext3"

[swap]
size = "512M"

[run]
duration = "150s"
seed = 1

[[workload]]
type = "dd"
device = "sda"
size = "1500M"

[[workload]]
type = "mem_eater"
size = "30%"
chunk = "4M"
pause = "20ms"
then = "hold"

[[workload]]
type = "highalloc"
start = "40s"
"#;

fn metric(r: &mmsim::report::RunResult, workload: &str, name: &str) -> f64 {
    r.workloads
        .iter()
        .find(|(w, _)| w == workload)
        .and_then(|(_, m)| m.iter().find(|(n, _)| n == name))
        .map(|(_, v)| *v)
        .unwrap_or_else(|| panic!("{workload} {name}"))
}

fn vmstat(r: &mmsim::report::RunResult, name: &str) -> u64 {
    r.vmstat
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| *v)
        .unwrap_or_else(|| panic!("{name}"))
}

#[test]
fn a_highalloc_pass_compacts_counts_and_gives_its_blocks_back() {
    let s = load_str(SCENARIO, "t.toml", "t").unwrap();
    let kernel = presets::resolve("3.9", &[]).unwrap();
    // Invariants after reclaim batches (at most one check per 100 ms simulated), while
    // compaction moves pages.
    let checked = sim::RunOptions {
        check_every_batch: true,
        check_interval: 100_000_000,
    };
    let r = sim::run(&s, &kernel, 1, checked).unwrap();
    let attempts = metric(&r, "highalloc", "attempts");
    let successes = metric(&r, "highalloc", "successes");
    // 95% of MemTotal (a little under 1 GiB) in 2 MiB blocks.
    assert!((440.0..=486.0).contains(&attempts), "{attempts}");
    assert!(
        successes > 0.0 && successes < attempts,
        "{successes} of {attempts}"
    );
    assert_eq!(
        metric(&r, "highalloc", "success_percent"),
        (successes * 100.0 / attempts).floor()
    );
    assert!(vmstat(&r, "compact_stall") > 0);
    assert!(vmstat(&r, "compact_success") > 0);
    assert!(vmstat(&r, "pgmigrate_success") > 0);
    // The pass ended and freed every block: the end-of-run invariants (run() checks them)
    // found no held block, and the highalloc finished.
    let st = r
        .workload_states
        .iter()
        .find(|s| s.workload == "highalloc")
        .unwrap();
    assert_eq!(st.state, "finished");
    // Deterministic, and checking changes nothing: the same run unchecked gives the same
    // figures.
    let again = sim::run(&s, &kernel, 1, Default::default()).unwrap();
    assert_eq!(r.vmstat, again.vmstat);
}
