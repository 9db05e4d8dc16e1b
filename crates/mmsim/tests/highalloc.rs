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

#[test]
fn skip_bits_spare_the_scanners_blocks_they_found_nothing_in() {
    // 3.7's PB_migrate_skip and cached pfns (kernel-compaction.md §6.9): the same pass with
    // them scans fewer frames than 3.3-3.6's restart from the zone's ends.
    let s = load_str(SCENARIO, "t.toml", "t").unwrap();
    let scanned = |skip: bool| {
        let kernel =
            presets::resolve("3.9", &[("compaction_skip_bits".to_string(), skip)]).unwrap();
        let r = sim::run(&s, &kernel, 1, Default::default()).unwrap();
        assert!(vmstat(&r, "compact_stall") > 0);
        (
            vmstat(&r, "compact_migrate_scanned"),
            vmstat(&r, "compact_free_scanned"),
        )
    };
    let (with, without) = (scanned(true), scanned(false));
    assert!(
        with.0 < without.0 && with.1 < without.1,
        "migrate and free scanned: {with:?} with skip bits, {without:?} without"
    );
}

const KBUILD: &str = r#"
[machine]
ram = "1G"
cpus = 2

[[device]]
name = "sda"
type = "hdd"
filesystem = "ext4"

[run]
duration = "300s"
seed = 3

[[workload]]
type = "kbuild"
device = "sda"
jobs = 2
units = 60
"#;

#[test]
fn a_kernel_build_compiles_links_and_builds_again_after_make_clean() {
    let s = load_str(KBUILD, "t.toml", "t").unwrap();
    let kernel = presets::resolve("3.9", &[]).unwrap();
    let r = sim::run(&s, &kernel, 3, Default::default()).unwrap();
    let builds = metric(&r, "kbuild", "builds");
    assert!(builds >= 2.0, "{builds} builds in 300 s");
    let elapsed = metric(&r, "kbuild", "elapsed_seconds");
    let user = metric(&r, "kbuild", "user_seconds");
    // Two job slots: user time up to twice the elapsed time, most of it compiling
    // (~0.4 s a unit on average, log-normal).
    assert!(
        user < 2.0 * elapsed && user > 60.0 * 0.2,
        "user {user} elapsed {elapsed}"
    );
    assert!(metric(&r, "kbuild", "system_seconds") < user / 5.0);
    // Every compile faults its heap and the compiler's text: thousands of minor faults.
    assert!(metric(&r, "kbuild", "minor_faults") > builds * 60.0 * 1000.0);
    // Objects were written and, between builds, deleted and written again.
    assert!(vmstat(&r, "nr_dirtied") > 0);
}
