//! `type = "kbuild"`: `make -jN` of a kernel tree on a device.

use super::super::check::{opt, Cx, Res, Table};
use super::super::values::{boolean, positive_time, u32_in};
use super::files::fs_device;
use crate::scenario::{BlockDevice, KbuildParams, WorkloadKind};

pub(super) const KEYS: &[&str] = &["device", "jobs", "units", "repeat", "compile_cpu"];

/// A kbuild workload's keys.
pub(super) fn kbuild(cx: &Cx<'_>, t: &Table<'_>, devices: &[BlockDevice]) -> Res<WorkloadKind> {
    let dev = fs_device(cx, t, devices, "the tree is on")?;
    let (jobs, units) = jobs_and_units(cx, t)?;
    let repeat = boolean(cx, t, "repeat")?.unwrap_or(true);
    Ok(WorkloadKind::Kbuild(KbuildParams {
        device: dev.name.clone(),
        jobs,
        units,
        repeat,
        compile_cpu: match opt(t, "compile_cpu") {
            Some(item) => positive_time(cx, &item, "the median CPU time of one compile")?,
            None => crate::calibration::KBUILD_COMPILE_NS,
        },
    }))
}

/// A build's `jobs` (make -jN, default 1) and `units` (default a defconfig's), shared with
/// `stress-highalloc`.
pub(super) fn jobs_and_units(cx: &Cx<'_>, t: &Table<'_>) -> Res<(u32, u32)> {
    let jobs = match opt(t, "jobs") {
        Some(item) => u32_in(cx, &item, 1, 1024, "a job count (make -jN), 1 to 1024")?,
        None => 1,
    };
    let units = match opt(t, "units") {
        Some(item) => u32_in(
            cx,
            &item,
            1,
            100_000,
            "compile units per build, 1 to 100000",
        )?,
        None => KbuildParams::DEFCONFIG_UNITS,
    };
    Ok((jobs, units))
}
