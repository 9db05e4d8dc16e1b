//! Nothing grows without bound over a long run: wait-queue entries and timers die with
//! their waits, however many times a throttled writer pauses.

mod common;

use mmsim::engine::{Executor, SEC};
use mmsim::mm::Kernel;
use mmsim::presets;
use mmsim::sim;

#[test]
fn a_long_dirty_throttled_dd_holds_a_bounded_number_of_waits_and_timers() {
    // 3 GiB through a 512 MiB machine: balance_dirty_pages pauses the writer tens of
    // thousands of times, each a wait with a timeout on a queue that is rarely woken.
    let s = common::single_dd(512, 3072, 120);
    let k = presets::resolve("3.9", &[]).unwrap();
    let w = sim::boot(&s, &k, 1).unwrap();
    let mut most = (0, 0);
    Executor::new(w.clone()).run_until(120 * SEC, |k: &mut Kernel| {
        let (waiters, timers) = k.sched.footprint();
        most = (most.0.max(waiters), most.1.max(timers));
        false
    });
    let written = w.borrow().bdis[0].written;
    assert!(
        written > 3072 * 256 / 2,
        "the dd made progress: {written} pages"
    );
    assert!(most.0 <= 256, "{} wait-queue entries at once", most.0);
    assert!(most.1 <= 256, "{} timers at once", most.1);
}

/// 128 MiB, one CPU, 64 MiB of swap and an eater of 120 MiB with swappiness 0: once swap
/// is full, direct reclaim finds nothing to scan but reports progress until kswapd marks
/// the zones all_unreclaimable, so the allocation retries. Each fruitless pass must cost
/// CPU time (`SHRINK_LRUVEC_NS`, `SHRINKER_CALL_NS`), or the retries run at one simulated
/// instant forever and kswapd never gets the chance (then this test hangs inside one task
/// step; `direct_reclaim_that_finds_nothing_to_scan_still_takes_cpu_time` in vmscan's unit
/// tests fails instead).
const FULL_SWAP: &str = r#"
[machine]
ram = "128M"
cpus = 1

[swap]
size = "64M"

[slab]
files = 1000

[vm]
swappiness = 0

[run]
duration = "1s"

[[workload]]
type = "mem_eater"
size = "120M"
"#;

#[test]
fn a_full_swap_ends_in_an_oom_kill_not_in_reclaim_retries_at_one_instant() {
    let s = mmsim::scenario::load_str(FULL_SWAP, "full-swap.toml", "full-swap").unwrap();
    let k = presets::resolve("3.9", &[]).unwrap();
    let w = sim::boot(&s, &k, 1).unwrap();
    let end = Executor::new(w.clone()).run_until(SEC, |_: &mut Kernel| false);
    assert_eq!(end, SEC);
    let k = w.borrow();
    assert_eq!(k.oom_kills.len(), 1, "{:?}", k.oom_kills);
    assert_eq!(k.oom_kills[0].victim, "mem_eater");
}
