//! The benchmark: two fixed scenarios, what the simulator did in each, and statistics over
//! repeated runs.
//!
//! The scenarios, both under 3.9:
//! - `anon`: `examples/anon-pressure.toml`: memcachetest holding 80% of RAM while a
//!   mem_eater maps 30% more; anonymous memory, swap, reclaim of anonymous pages.
//! - `file`: one step of seed 000's parallelio ([`crate::reproduce::parallelio`]):
//!   memcachetest holding 80% of memory while dd writes a file of 2385 MiB to ext4 on a
//!   7200 rpm disk with `conv=fdatasync`, swap on the same disk; the write path, the flusher,
//!   the block queue (CFQ) and the disk, and reclaim of file pages.
//!
//! What a run did is counted once per thing, from the kernel's own counters where 3.9 has
//! them (`/proc/vmstat`); page-table hits ([`crate::workload::AccessCounts`]) and pages
//! isolated ([`crate::mm::Kernel::pages_isolated`]) have none and are counted by mmsim.
//! Wall-clock time and host memory are the caller's business (`mmsim bench`, the criterion
//! harness in `benches/`): [`run`] only marks where each stage starts and ends.

use crate::calibration::PAGE_SIZE;
use crate::engine::{Nanos, SEC};
use crate::mm::vmstat::VmEvent;
use crate::presets;
use crate::reproduce::parallelio::{Procedure, Run};
use crate::scenario::{self, Scenario};
use crate::sim::{self, SimError};

/// The kernel both scenarios run under.
pub const KERNEL: &str = "3.9";

/// The anonymous-memory scenario's file.
pub const ANON_SCENARIO: &str = include_str!("../../../examples/anon-pressure.toml");

/// The file-path scenario's IO step: the third of parallelio's four (0, then three dd sizes).
const FILE_STEP: usize = 2;

/// A benchmark scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Anonymous memory under pressure: `examples/anon-pressure.toml`.
    Anon,
    /// The file path: one parallelio step (dd, flusher, block queue, reclaim of file pages).
    File,
}

/// How big a run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    /// The benchmark proper: a few wall seconds each.
    Full,
    /// A short version for tests, under a wall second each: the anon scenario with 1 GiB
    /// of RAM (its workloads' sizes are shares of RAM), the file step on a quarter of the
    /// memory with a 60 s memcachetest run ([`Procedure::fast`]).
    Quick,
}

impl Kind {
    /// Both scenarios, in the order `mmsim bench --scenario all` runs them.
    pub const ALL: [Kind; 2] = [Kind::Anon, Kind::File];

    /// The name `--scenario` takes.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Anon => "anon",
            Kind::File => "file",
        }
    }

    /// The scenario of `--scenario NAME`.
    pub fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The scenario, parsed or built.
    pub fn scenario(self, size: Size) -> Scenario {
        match self {
            Kind::Anon => {
                let text = match size {
                    Size::Full => ANON_SCENARIO.to_string(),
                    // Sizes in percent of RAM follow it.
                    Size::Quick => {
                        let quick = ANON_SCENARIO.replace("ram = \"6G\"", "ram = \"1G\"");
                        assert_ne!(quick, ANON_SCENARIO, "the anon scenario sets ram = \"6G\"");
                        quick
                    }
                };
                scenario::load_str(&text, "examples/anon-pressure.toml", "anon-pressure")
                    .expect("the bench scenario is valid")
            }
            Kind::File => {
                let p = file_procedure(size);
                p.scenario(Run::Iteration(FILE_STEP, 0))
            }
        }
    }

    /// One line on what the scenario is.
    pub fn describe(self, size: Size) -> String {
        let s = self.scenario(size);
        let what = match self {
            Kind::Anon => "examples/anon-pressure.toml: memcachetest at 80% of RAM, a \
                           mem_eater of 30% from 60 s"
                .to_string(),
            Kind::File => {
                let p = file_procedure(size);
                format!(
                    "the {} step of seed 000's parallelio: memcachetest at 80% of memory, dd \
                     to ext4 on a 7200 rpm disk, swap on the same disk",
                    p.step_labels()[FILE_STEP]
                )
            }
        };
        format!(
            "{what}; {} MiB RAM, {} CPUs, kernel {KERNEL}, seed {}{}",
            s.machine.ram >> 20,
            s.machine.cpus,
            s.run.seed,
            if size == Size::Quick { " (quick)" } else { "" }
        )
    }
}

/// The parallelio procedure the file scenario takes its step from.
fn file_procedure(size: Size) -> Procedure {
    let p = match size {
        Size::Full => Procedure::published(),
        Size::Quick => Procedure::fast(),
    };
    Procedure {
        sequential: false,
        // The machine the benchmark has always run, so that figures compare across
        // versions (the reproduction's default gained the MMIO hole in session 34).
        pci_hole: 0,
        ..p
    }
}

/// What one benchmark run did. Every field is a pure function of the scenario: repeated
/// runs give the same counts.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchCounts {
    /// Simulated seconds.
    pub simulated_seconds: f64,
    /// Page frames of the machine.
    pub frames: u64,
    /// Workload accesses to memory, each counted once.
    pub accesses: crate::workload::AccessCounts,
    /// Faults the kernel handled (`pgfault`).
    pub pgfault: u64,
    /// Of which major (`pgmajfault`): they waited for a read.
    pub pgmajfault: u64,
    /// Pages scanned by reclaim: inactive lists (`pgscan_kswapd_*`, `pgscan_direct_*`) and
    /// active lists (`pgrefill_*`).
    pub scanned: u64,
    /// Pages isolated from the LRU lists for reclaim (active and inactive).
    pub isolated: u64,
    /// Pages reclaimed (`pgsteal_kswapd_*`, `pgsteal_direct_*`).
    pub reclaimed: u64,
    /// Pages read at the block layer (`pgpgin`, which counts KiB), swap-ins included.
    pub io_read: u64,
    /// Pages written at the block layer (`pgpgout`), swap-outs included.
    pub io_written: u64,
    /// Of the pages read, swap-ins (`pswpin`).
    pub swap_in: u64,
    /// Of the pages written, swap-outs (`pswpout`).
    pub swap_out: u64,
}

impl BenchCounts {
    /// The counted figures, named as `mmsim bench` prints them.
    pub fn figures(&self) -> [(&'static str, u64); 10] {
        [
            ("page-table hits", self.accesses.hits),
            ("minor faults", self.pgfault - self.pgmajfault),
            ("major faults", self.pgmajfault),
            ("pages scanned", self.scanned),
            ("pages isolated", self.isolated),
            ("pages reclaimed", self.reclaimed),
            ("IO pages read", self.io_read),
            ("  of which swap", self.swap_in),
            ("IO pages written", self.io_written),
            ("  of which swap", self.swap_out),
        ]
    }
}

/// Where a run is, for the caller's clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// About to boot: the machine is built from here (zones, frames, devices, workloads).
    Start,
    /// Booted; the simulation runs from here.
    Booted,
    /// The simulation has finished. The final invariant check comes after, with working
    /// arrays of its own, so a memory measurement here sees only the simulation's state.
    Ran,
}

/// Run a benchmark scenario once under [`KERNEL`], calling `mark` at each [`Stage`].
pub fn run(s: &Scenario, mut mark: impl FnMut(Stage)) -> Result<BenchCounts, SimError> {
    let k = presets::resolve(KERNEL, &[]).expect("preset");
    mark(Stage::Start);
    let w = sim::boot(s, &k, s.run.seed)?;
    mark(Stage::Booted);
    let end = sim::advance(&w, s.run.duration)?;
    mark(Stage::Ran);
    crate::mm::invariants::check(&w.borrow()).map_err(SimError::Invariant)?;
    let k = w.borrow();
    Ok(counts(&k, end))
}

/// The counts of a finished run.
fn counts(k: &crate::mm::Kernel, end: Nanos) -> BenchCounts {
    let ev = |e: VmEvent| k.events.get(e);
    let zones = |e: VmEvent| -> u64 { (0..4).map(|z| ev(e.zone(z))).sum() };
    let pages = |kib: u64| kib / (PAGE_SIZE / 1024);
    BenchCounts {
        simulated_seconds: end as f64 / SEC as f64,
        frames: k.pages.len() as u64,
        accesses: k.accesses,
        pgfault: ev(VmEvent::pgfault),
        pgmajfault: ev(VmEvent::pgmajfault),
        scanned: zones(VmEvent::pgscan_kswapd_dma)
            + zones(VmEvent::pgscan_direct_dma)
            + zones(VmEvent::pgrefill_dma),
        isolated: k.pages_isolated,
        reclaimed: zones(VmEvent::pgsteal_kswapd_dma) + zones(VmEvent::pgsteal_direct_dma),
        io_read: pages(ev(VmEvent::pgpgin)),
        io_written: pages(ev(VmEvent::pgpgout)),
        swap_in: ev(VmEvent::pswpin),
        swap_out: ev(VmEvent::pswpout),
    }
}

/// The middle and the spread of repeated measurements.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    /// The median (the mean of the two middle values for an even count).
    pub median: f64,
    /// The smallest.
    pub min: f64,
    /// The largest.
    pub max: f64,
    /// The median absolute deviation from the median.
    pub mad: f64,
}

impl Spread {
    /// The spread of `xs`; `None` if there are none or one is NaN.
    pub fn of(xs: &[f64]) -> Option<Spread> {
        if xs.is_empty() || xs.iter().any(|x| x.is_nan()) {
            return None;
        }
        let mid = median(xs.to_vec());
        let deviations = xs.iter().map(|x| (x - mid).abs()).collect();
        Some(Spread {
            median: mid,
            min: xs.iter().copied().fold(f64::INFINITY, f64::min),
            max: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            mad: median(deviations),
        })
    }

    /// Every figure scaled by `f` (a unit change; `f` must be positive).
    pub fn scaled(&self, f: f64) -> Spread {
        Spread {
            median: self.median * f,
            min: self.min * f,
            max: self.max * f,
            mad: self.mad * f,
        }
    }
}

/// The median of values with no NaN.
fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_of_an_odd_count_takes_the_middle_value() {
        let s = Spread::of(&[5.0, 1.0, 3.0, 100.0, 4.0]).unwrap();
        assert_eq!(s.median, 4.0);
        assert_eq!((s.min, s.max), (1.0, 100.0));
        // Deviations 1, 3, 1, 96, 0: sorted 0 1 1 3 96.
        assert_eq!(s.mad, 1.0);
    }

    #[test]
    fn spread_of_an_even_count_averages_the_two_middle_values() {
        let s = Spread::of(&[2.0, 8.0, 4.0, 6.0]).unwrap();
        assert_eq!(s.median, 5.0);
        assert_eq!((s.min, s.max), (2.0, 8.0));
        // Deviations 3, 3, 1, 1.
        assert_eq!(s.mad, 2.0);
    }

    #[test]
    fn spread_of_one_value_has_no_spread() {
        let s = Spread::of(&[1.5]).unwrap();
        assert_eq!(
            s,
            Spread {
                median: 1.5,
                min: 1.5,
                max: 1.5,
                mad: 0.0
            }
        );
        assert_eq!(s.scaled(2.0).median, 3.0);
    }

    #[test]
    fn spread_of_nothing_or_nan_is_none() {
        assert_eq!(Spread::of(&[]), None);
        assert_eq!(Spread::of(&[1.0, f64::NAN]), None);
    }

    #[test]
    fn scenarios_are_named_and_found_by_name() {
        for k in Kind::ALL {
            assert_eq!(Kind::from_name(k.name()), Some(k));
        }
        assert_eq!(Kind::from_name("swap"), None);
        assert!(Kind::File.describe(Size::Full).contains("2385M"));
    }

    /// The file scenario is the machine it always was: the reproduction's 7336 MiB, one
    /// iteration of the 2385M step, but without the MMIO hole the reproduction gained, so
    /// that benchmark figures compare across versions.
    #[test]
    fn the_file_scenario_keeps_its_machine_without_the_hole() {
        let s = Kind::File.scenario(Size::Full);
        assert_eq!((s.machine.ram, s.machine.pci_hole), (7336 << 20, 0));
        assert_eq!(s.run.seed, 1020);
        assert_ne!(Procedure::published().pci_hole, 0);
    }
}
