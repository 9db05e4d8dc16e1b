//! `type = "stress-highalloc"`: MMTests' stress-highalloc driver, builds and passes.

use super::super::check::{opt, Cx, Res, Table};
use super::super::values::{boolean, time, u32_in};
use super::files::fs_device;
use super::highalloc::alloc_params;
use super::kbuild::jobs_and_units;
use crate::scenario::{BlockDevice, StressHighallocParams, WorkloadKind};

pub(super) const KEYS: &[&str] = &[
    "device",
    "trees",
    "copy",
    "jobs",
    "units",
    "warmup",
    "order",
    "mb_per_sec",
    "percent",
    "rested",
    "rest",
];

/// A stress-highalloc workload's keys.
pub(super) fn stress_highalloc(
    cx: &Cx<'_>,
    t: &Table<'_>,
    devices: &[BlockDevice],
) -> Res<WorkloadKind> {
    let dev = fs_device(cx, t, devices, "the trees are on")?;
    let trees = match opt(t, "trees") {
        Some(item) => Some(u32_in(
            cx,
            &item,
            0,
            64,
            "a number of tree copies, 0 to 64",
        )?),
        None => None,
    };
    let (jobs, units) = jobs_and_units(cx, t)?;
    let warmup = match opt(t, "warmup") {
        Some(item) => time(cx, &item)?,
        None => StressHighallocParams::WARMUP,
    };
    let rest = match opt(t, "rest") {
        Some(item) => time(cx, &item)?,
        None => StressHighallocParams::REST,
    };
    Ok(WorkloadKind::StressHighalloc(StressHighallocParams {
        device: dev.name.clone(),
        trees,
        copy: boolean(cx, t, "copy")?.unwrap_or(true),
        jobs,
        units,
        warmup,
        alloc: alloc_params(cx, t)?,
        rested: boolean(cx, t, "rested")?.unwrap_or(true),
        rest,
    }))
}
