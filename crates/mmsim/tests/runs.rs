//! Whole runs: invariants, determinism, direction of effects.

mod common;

use mmsim::presets::{self, PRESETS};
use mmsim::sim::{self, RunOptions};

#[test]
fn smoke() {
    let s = common::anon_pressure(256, 60);
    for p in PRESETS {
        let k = presets::resolve(p.name, &[]).unwrap();
        let t = std::time::Instant::now();
        let r = sim::run(&s, &k, 1, RunOptions::default()).unwrap();
        eprintln!("{} {:?} wall {:?}", p.name, r.workloads, t.elapsed());
        for n in ["pgactivate", "pgdeactivate", "pgrotated", "pgrefill_dma32", "nr_inactive_anon", "nr_active_anon", "nr_free_pages", "pswpout", "pswpin", "pgscan_kswapd_normal", "pgscan_kswapd_dma32", "pgsteal_kswapd_dma32", "pgscan_direct_dma32", "allocstall", "pgmajfault", "slabs_scanned", "kswapd_high_wmark_hit_quickly", "pageoutrun"] {
            eprintln!("  {n} = {}", r.vmstat(n));
        }
    }
}
