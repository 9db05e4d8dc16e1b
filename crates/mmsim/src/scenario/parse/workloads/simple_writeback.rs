//! `type = "simple-writeback"`: MMTests' simple-writeback, NUMCPUS x factor dd writers.

use super::super::check::{opt, Cx, Res, Table};
use super::super::values::{size, u32_in, SizeKind};
use super::super::PAGE;
use super::files::fs_device;
use crate::scenario::{BlockDevice, SimpleWritebackParams, WorkloadKind};

pub(super) const KEYS: &[&str] = &["device", "size", "min_factor", "max_factor", "iterations"];

/// A simple-writeback workload's keys.
pub(super) fn simple_writeback(
    cx: &Cx<'_>,
    t: &Table<'_>,
    ram: u64,
    devices: &[BlockDevice],
) -> Res<WorkloadKind> {
    let dev = fs_device(cx, t, devices, "the dd writers write to")?;
    let size = match opt(t, "size") {
        Some(item) => {
            let b = size(cx, &item, SizeKind::Size, Some(ram))?;
            if b < PAGE || b % PAGE != 0 {
                return Err(item.fail(
                    cx,
                    format!("expected a size of whole 4 KiB pages, at least one, found {b} bytes"),
                ));
            }
            b
        }
        // SIMPLE_WRITEBACK_FILESIZE: 4 x MemTotal.
        None => crate::mm::page_alloc::mem_total_pages(ram / PAGE) * PAGE * 4,
    };
    let factor = |key: &str, default: u32| -> Res<u32> {
        match opt(t, key) {
            Some(item) => u32_in(cx, &item, 1, 1024, "a CPU factor, 1 to 1024"),
            None => Ok(default),
        }
    };
    let min_factor = factor("min_factor", SimpleWritebackParams::MIN_FACTOR)?;
    let max_factor = factor(
        "max_factor",
        SimpleWritebackParams::MAX_FACTOR.max(min_factor),
    )?;
    if max_factor < min_factor {
        let item = opt(t, "max_factor").expect("only an explicit max_factor can be lower");
        return Err(item.fail(
            cx,
            format!("expected max_factor at least min_factor ({min_factor}), found {max_factor}"),
        ));
    }
    let iterations = match opt(t, "iterations") {
        Some(item) => u32_in(cx, &item, 1, 1000, "an iteration count, 1 to 1000")?,
        None => SimpleWritebackParams::ITERATIONS,
    };
    Ok(WorkloadKind::SimpleWriteback(SimpleWritebackParams {
        device: dev.name.clone(),
        size,
        min_factor,
        max_factor,
        iterations,
    }))
}
