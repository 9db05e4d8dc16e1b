//! The benchmark: simulated page events per second on a fixed scenario.
//!
//! Page events are pages touched by workloads (every access, hit or fault), pages scanned by
//! reclaim (inactive and active lists) and pages moved by IO (swap-in and swap-out). The
//! scenario is `examples/anon-pressure.toml` under 3.9, seed 1.

use crate::mm::vmstat::VmEvent;
use crate::presets;
use crate::scenario::{self, Scenario};
use crate::sim::{self, SimError};

/// The fixed benchmark scenario.
pub const SCENARIO: &str = include_str!("../../../examples/anon-pressure.toml");

/// What one benchmark run counted.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchCounts {
    /// Simulated seconds.
    pub simulated_seconds: f64,
    /// Page frames of the machine.
    pub frames: u64,
    /// Accesses by workloads.
    pub touched: u64,
    /// Pages scanned by reclaim.
    pub scanned: u64,
    /// Pages read or written by swap IO.
    pub io: u64,
}

impl BenchCounts {
    /// All page events.
    pub fn events(&self) -> u64 {
        self.touched + self.scanned + self.io
    }
}

/// The benchmark scenario, parsed.
pub fn scenario() -> Scenario {
    scenario::load_str(SCENARIO, "examples/anon-pressure.toml", "anon-pressure")
        .expect("the bench scenario is valid")
}

/// Run the benchmark scenario once (timing is the caller's business). `after_run` is called
/// when the simulation has finished, before the final invariant check allocates its own
/// working arrays (so a heap measurement there sees only the simulation's state).
pub fn run(s: &Scenario, after_run: impl FnOnce()) -> Result<BenchCounts, SimError> {
    let k = presets::resolve("3.9", &[]).expect("preset");
    let w = sim::boot(s, &k, s.run.seed)?;
    let end = sim::advance(&w, s.run.duration)?;
    after_run();
    crate::mm::invariants::check(&w.borrow()).map_err(SimError::Invariant)?;
    let k = w.borrow();
    let ev = |e: VmEvent| -> u64 { (0..4).map(|z| k.events.get(e.zone(z))).sum() };
    let scanned =
        ev(VmEvent::pgscan_kswapd_dma) + ev(VmEvent::pgscan_direct_dma) + ev(VmEvent::pgrefill_dma);
    Ok(BenchCounts {
        simulated_seconds: end as f64 / crate::engine::SEC as f64,
        frames: k.pages.len() as u64,
        touched: k.pages_touched,
        scanned,
        io: k.events.get(VmEvent::pswpin) + k.events.get(VmEvent::pswpout),
    })
}
