//! `[run]`: how long the run lasts, its seed, and whether it ends with the workloads.

use super::check::{opt, Cx, Res, Table};
use super::values::{choice, positive_time, u64_min};
use crate::scenario::RunParams;

const RUN_KEYS: &[&str] = &["duration", "seed", "end"];

pub(super) fn run(cx: &Cx<'_>, t: &Table<'_>) -> Res<RunParams> {
    t.check_keys(cx, RUN_KEYS, "[run]")?;
    let duration = match opt(t, "duration") {
        Some(item) => positive_time(cx, &item, "the run duration")?,
        None => 60_000_000_000,
    };
    let seed = match opt(t, "seed") {
        Some(item) => u64_min(cx, &item, 0, "a seed, an integer >= 0")?,
        None => 1,
    };
    let end_when_done = match opt(t, "end") {
        Some(item) => choice(cx, &item, &["duration", "workloads"])? == "workloads",
        None => false,
    };
    Ok(RunParams {
        duration,
        seed,
        end_when_done,
    })
}
