//! Library-level runs of the bench scenarios (`mmsim::bench`) under criterion: boot (machine
//! construction) and run timed apart, on the system allocator with no CLI around them.
//!
//! ```text
//! cargo bench -p mmsim                          # the quick scenarios (under a second a run)
//! MMSIM_BENCH_FULL=1 cargo bench -p mmsim       # the full ones, as `mmsim bench` runs them
//! cargo bench -p mmsim -- file/run              # one benchmark
//! ```
//!
//! `mmsim bench` stays the user-facing benchmark: it also counts what the runs did and
//! measures memory.

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode};
use mmsim::bench::{self, Kind, Size, Stage};
use std::time::{Duration, Instant};

fn scenarios(c: &mut Criterion) {
    let size = if std::env::var_os("MMSIM_BENCH_FULL").is_some() {
        Size::Full
    } else {
        Size::Quick
    };
    let kernel = mmsim::presets::resolve(bench::KERNEL, &[]).expect("preset");
    let mut g = c.benchmark_group("scenarios");
    // Each run takes a large fraction of a second: one run a sample, ten samples.
    g.sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(10));
    for kind in Kind::ALL {
        let s = kind.scenario(size);
        g.bench_function(format!("{}/boot", kind.name()), |b| {
            b.iter_with_large_drop(|| mmsim::sim::boot(&s, &kernel, s.run.seed).expect("boots"))
        });
        g.bench_function(format!("{}/run", kind.name()), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let mut t = Instant::now();
                    bench::run(&s, |stage| match stage {
                        Stage::Booted => t = Instant::now(),
                        Stage::Ran => total += t.elapsed(),
                        Stage::Start => {}
                    })
                    .expect("the bench scenario runs");
                }
                total
            })
        });
    }
    g.finish();
}

criterion_group!(benches, scenarios);
criterion_main!(benches);
