//! Golden outputs of real runs: the terminal summary of `examples/kswapd-balance.toml`
//! under each preset, byte for byte. A change to the model that moves any figure shows up
//! here; rewrite with `MMSIM_BLESS=1 cargo test --release -p mmsim --test golden_runs` after
//! checking the difference is intended.

mod common;

use mmsim::presets::{self, PRESETS};
use mmsim::report::{json, terminal};
use mmsim::scenario;
use mmsim::sim::{self, RunOptions};

#[test]
fn kswapd_balance_example_under_every_preset() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/kswapd-balance.toml"
    );
    let s = scenario::load(std::path::Path::new(path)).unwrap();
    let runs: Vec<_> = PRESETS
        .iter()
        .map(|p| {
            let k = presets::resolve(p.name, &[]).unwrap();
            sim::run(&s, &k, s.run.seed, RunOptions::default()).unwrap()
        })
        .collect();
    common::check_golden("run_kswapd_balance.txt", &terminal::summary(&runs));
    let text = serde_json::to_string_pretty(&json::runs_to_json(&runs[..1])).unwrap() + "\n";
    common::check_golden("run_kswapd_balance__3.9.json", &text);
}
