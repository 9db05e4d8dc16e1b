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
