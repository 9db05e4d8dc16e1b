//! Whole runs with memory cgroups: limits hold, charges balance (the invariants run after
//! every reclaim batch), limit reclaim stays out of the global counters, runs repeat.

use mmsim::presets;
use mmsim::report::RunResult;
use mmsim::scenario;
use mmsim::sim::{self, RunOptions};

const MIB: u64 = 1 << 20;

fn example() -> scenario::Scenario {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/memcg-limits.toml"
    );
    let mut s = scenario::load(std::path::Path::new(path)).unwrap();
    s.run.duration = 30 * mmsim::engine::SEC;
    s
}

fn run(s: &scenario::Scenario, check: bool) -> RunResult {
    let k = presets::resolve("3.9", &[]).unwrap();
    sim::run(
        s,
        &k,
        1,
        RunOptions {
            check_every_batch: check,
            // Every reclaim batch would be a check per 32 pages of a 1G machine.
            check_interval: 50 * mmsim::engine::MSEC,
        },
    )
    .unwrap()
}

fn file(r: &RunResult, group: &str, f: &str) -> u64 {
    r.cgroups
        .iter()
        .find(|c| c.name == group)
        .and_then(|c| c.get(f))
        .unwrap_or_else(|| panic!("{group} {f}"))
}

#[test]
fn hard_limits_hold_and_the_groups_reclaim_their_own_pages() {
    let r = run(&example(), true);
    for (g, limit) in [("/A", 256 * MIB), ("/B", 128 * MIB)] {
        assert_eq!(file(&r, g, "memory.limit_in_bytes"), limit);
        let max = file(&r, g, "memory.max_usage_in_bytes");
        assert!(max <= limit, "{g}: max usage {max} over its limit {limit}");
        assert!(max > limit - MIB, "{g} reached its limit: {max}");
        assert!(file(&r, g, "memory.failcnt") > 0, "{g} hit its limit");
    }
    // A's 384M of anonymous memory does not fit in 256M: the rest went to swap.
    let swap = file(&r, "/A", "swap");
    assert!(swap >= 100 * MIB, "A swapped {swap} bytes");
    assert_eq!(file(&r, "/A", "cache"), 0);
    // B's dd keeps its page cache within 128M, and writes the rest back and drops it.
    assert!(file(&r, "/B", "pgpgout") > 50_000);
    assert_eq!(file(&r, "/B", "swap"), 0, "B has no anonymous memory");
    // memsw = memory + swap.
    assert_eq!(
        file(&r, "/A", "memory.memsw.usage_in_bytes"),
        file(&r, "/A", "memory.usage_in_bytes") + swap
    );
    // The machine has room: no global reclaim, and limit reclaim is hidden from pgscan
    // and pgsteal (global_reclaim()).
    for c in [
        "pgscan_kswapd_dma32",
        "pgscan_kswapd_normal",
        "pgscan_direct_dma32",
        "pgsteal_kswapd_dma32",
        "pgsteal_direct_dma32",
        "allocstall",
    ] {
        assert_eq!(r.vmstat(c), 0, "{c}");
    }
    assert!(r.vmstat("pswpout") > 0, "but pages were swapped out");
    assert!(r.oom_kills.is_empty());
}

#[test]
fn without_groups_nothing_swaps() {
    let mut s = example();
    s.cgroups.clear();
    for w in &mut s.workloads {
        w.cgroup = None;
    }
    let r = run(&s, false);
    assert!(r.cgroups.is_empty(), "the controller is off");
    assert_eq!(r.vmstat("pswpout"), 0, "384M + the dd's cache fit in 1G");
}

#[test]
fn a_group_too_small_for_its_task_kills_it() {
    let mut s = example();
    s.cgroups[0].limit_in_bytes = Some(64 * MIB);
    s.machine.swap = None;
    let r = run(&s, true);
    assert_eq!(r.oom_kills.len(), 1, "{:?}", r.oom_kills);
    assert_eq!(r.oom_kills[0].victim, "mem_eater");
    assert!(file(&r, "/A", "memory.max_usage_in_bytes") <= 64 * MIB);
    assert_eq!(
        file(&r, "/A", "memory.usage_in_bytes"),
        0,
        "its memory went with it"
    );
}

#[test]
fn runs_repeat_byte_for_byte() {
    let s = example();
    let a = mmsim::report::json::run_to_json(&run(&s, false)).to_string();
    let b = mmsim::report::json::run_to_json(&run(&s, false)).to_string();
    assert_eq!(a, b);
}

fn soft_example() -> scenario::Scenario {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/memcg-soft-limit.toml"
    );
    let mut s = scenario::load(std::path::Path::new(path)).unwrap();
    s.run.duration = 30 * mmsim::engine::SEC;
    s
}

/// The old soft-limit reclaim: under global pressure, the group over its soft limit gives
/// up the pages; without the soft limit both groups do.
#[test]
fn global_pressure_reclaims_the_group_over_its_soft_limit() {
    let r = run(&soft_example(), true);
    let (a, b) = (file(&r, "/A", "pgpgout"), file(&r, "/B", "pgpgout"));
    assert!(a > 10_000, "A over its soft limit was reclaimed: {a}");
    assert!(b * 20 < a, "B much less: {b} against {a}");
    assert!(file(&r, "/A", "swap") > file(&r, "/B", "swap"));
    let mut s = soft_example();
    s.cgroups[0].soft_limit_in_bytes = None;
    let r = run(&s, false);
    let (a, b) = (file(&r, "/A", "pgpgout"), file(&r, "/B", "pgpgout"));
    assert!(b * 3 > a && a * 3 > b, "shared: A {a}, B {b}");
}

fn run_preset(s: &scenario::Scenario, preset: &str) -> RunResult {
    let k = presets::resolve(preset, &[]).unwrap();
    let opts = RunOptions {
        check_every_batch: true,
        check_interval: 50 * mmsim::engine::MSEC,
    };
    sim::run(s, &k, 1, opts).unwrap()
}

/// Seed 001's contrast: the old design reclaims the soft-limited group as limit reclaim,
/// hidden from pgscan; the rework reclaims it in shrink_zone's first pass, counted, and
/// leaves the group under its soft limit alone.
#[test]
fn the_rework_reclaims_soft_limited_groups_in_the_open() {
    let s = soft_example();
    let old = run_preset(&s, "mmotm-2013-07-18");
    let new = run_preset(&s, "softlimit-rework-v5.1");
    let scanned = |r: &RunResult| {
        ["pgscan_kswapd_dma32", "pgscan_direct_dma32"]
            .iter()
            .map(|c| r.vmstat(c))
            .sum::<u64>()
    };
    assert!(file(&old, "/A", "pgpgout") > 10_000 && file(&new, "/A", "pgpgout") > 10_000);
    assert!(
        scanned(&new) > 10 * scanned(&old).max(1),
        "rework {} against old {}",
        scanned(&new),
        scanned(&old)
    );
    assert_eq!(
        file(&new, "/B", "pgpgout"),
        0,
        "B, under its soft limit, is not touched"
    );
    assert_eq!(file(&new, "/B", "swap"), 0);
}
