//! `type = "highalloc"`: one pass of MMTests' stress-highalloc allocation loop.

use super::super::check::{opt, Cx, Res, Table};
use super::super::values::u32_in;
use crate::scenario::{HighallocParams, WorkloadKind};

pub(super) const KEYS: &[&str] = &["order", "mb_per_sec", "percent"];

/// A highalloc workload's keys (it holds kernel memory, not a process's).
pub(super) fn highalloc(cx: &Cx<'_>, t: &Table<'_>) -> Res<WorkloadKind> {
    Ok(WorkloadKind::Highalloc(alloc_params(cx, t)?))
}

/// The allocation loop's keys, shared with `stress-highalloc`.
pub(super) fn alloc_params(cx: &Cx<'_>, t: &Table<'_>) -> Res<HighallocParams> {
    let mut p = HighallocParams::default();
    if let Some(item) = opt(t, "order") {
        p.order = u32_in(cx, &item, 1, 10, "an allocation order from 1 to 10")?;
    }
    if let Some(item) = opt(t, "mb_per_sec") {
        p.mb_per_sec = u32_in(cx, &item, 1, 1 << 20, "an allocation rate in MB/s")?;
    }
    if let Some(item) = opt(t, "percent") {
        p.percent = u32_in(cx, &item, 1, 100, "a share of memory in percent")?;
    }
    Ok(p)
}
