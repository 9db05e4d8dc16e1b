//! `[vm]`: the sysctls of `/proc/sys/vm`, under their own names.

use super::check::{opt, Cx, Item, Res, Table};
use super::tree::Val;
use super::values::{size, u32_in, u64_min, SizeKind};
use crate::mm::page_writeback::SysctlError;
use crate::mm::VmSysctls;

const VM_KEYS: &[&str] = &[
    "min_free_kbytes",
    "swappiness",
    "lowmem_reserve_ratio",
    "page-cluster",
    "vfs_cache_pressure",
    "laptop_mode",
    "dirty_ratio",
    "dirty_background_ratio",
    "dirty_bytes",
    "dirty_background_bytes",
    "dirty_expire_centisecs",
    "dirty_writeback_centisecs",
    "extfrag_threshold",
];

pub(super) fn vm(cx: &Cx<'_>, t: &Table<'_>, ram: u64) -> Res<VmSysctls> {
    t.check_keys(cx, VM_KEYS, "[vm]")?;
    let mut vm = VmSysctls::default();
    if let Some(item) = opt(t, "min_free_kbytes") {
        let kb = u64_min(cx, &item, 0, "min_free_kbytes, an integer >= 0 (KiB)")?;
        if kb.saturating_mul(1024) >= ram {
            return Err(item.fail(
                cx,
                format!(
                    "min_free_kbytes = {kb} reserves all of RAM ({} KiB); expected less than RAM",
                    ram / 1024
                ),
            ));
        }
        vm.min_free_kbytes = Some(kb);
    }
    if let Some(item) = opt(t, "swappiness") {
        vm.swappiness = u32_in(cx, &item, 0, 100, "swappiness, an integer from 0 to 100")?;
    }
    if let Some(item) = opt(t, "lowmem_reserve_ratio") {
        vm.lowmem_reserve_ratio = lowmem_reserve_ratio(cx, &item)?;
    }
    if let Some(item) = opt(t, "extfrag_threshold") {
        vm.extfrag_threshold = u32_in(
            cx,
            &item,
            0,
            1000,
            "extfrag_threshold, an integer from 0 to 1000",
        )?;
    }
    if let Some(item) = opt(t, "page-cluster") {
        vm.page_cluster = u32_in(cx, &item, 0, 10, "page-cluster, an integer from 0 to 10")?;
    }
    if let Some(item) = opt(t, "vfs_cache_pressure") {
        vm.vfs_cache_pressure = u32_in(
            cx,
            &item,
            0,
            u32::MAX,
            "vfs_cache_pressure, an integer >= 0 (percent)",
        )?;
    }
    if let Some(item) = opt(t, "laptop_mode") {
        vm.laptop_mode = u32_in(
            cx,
            &item,
            0,
            u32::MAX,
            "laptop_mode, an integer >= 0 (0 = off)",
        )? != 0;
    }
    // The dirty_* integers: their upper bound and how the range reads.
    const PERCENT: (u32, &str) = (100, "from 0 to 100 (percent)");
    const CENTISECS: (u32, &str) = (u32::MAX, ">= 0 (hundredths of a second)");
    let d = &mut vm.dirty;
    for (key, field, (hi, range)) in [
        ("dirty_ratio", &mut d.dirty_ratio, PERCENT),
        (
            "dirty_background_ratio",
            &mut d.dirty_background_ratio,
            PERCENT,
        ),
        (
            "dirty_expire_centisecs",
            &mut d.dirty_expire_centisecs,
            CENTISECS,
        ),
        (
            "dirty_writeback_centisecs",
            &mut d.dirty_writeback_centisecs,
            CENTISECS,
        ),
    ] {
        if let Some(item) = opt(t, key) {
            *field = u32_in(cx, &item, 0, hi, &format!("{key}, an integer {range}"))?;
        }
    }
    for (key, field) in [
        ("dirty_bytes", &mut d.dirty_bytes),
        ("dirty_background_bytes", &mut d.dirty_background_bytes),
    ] {
        if let Some(item) = opt(t, key) {
            *field = size(cx, &item, SizeKind::Size, None)?;
        }
    }
    if let Err(e) = vm.dirty.validate() {
        let key = match e {
            SysctlError::RatioOutOfRange { name, .. } => name,
            SysctlError::DirtyBytesTooSmall { .. } => "dirty_bytes",
        };
        return Err(match opt(t, key) {
            Some(item) => item.fail(cx, e.to_string()),
            None => Box::new(cx.error(None, &format!("vm.{key}"), e.to_string())),
        });
    }
    Ok(vm)
}

fn lowmem_reserve_ratio(cx: &Cx<'_>, item: &Item<'_>) -> Res<[u32; 3]> {
    const WHAT: &str =
        "an array of exactly 3 integers >= 1 (DMA, DMA32, Normal), e.g. [256, 256, 32]";
    let Val::Array(items) = &item.node.val else {
        return Err(item.expected(cx, WHAT));
    };
    if items.len() != 3 {
        return Err(item.fail(
            cx,
            format!(
                "expected {WHAT}, found an array of {} elements",
                items.len()
            ),
        ));
    }
    let mut out = [0u32; 3];
    for (i, n) in items.iter().enumerate() {
        let elem = Item {
            path: format!("{}[{i}]", item.path),
            node: n,
            key_span: item.span(),
        };
        out[i] = u32_in(cx, &elem, 1, u32::MAX, "a positive integer (a ratio >= 1)")?;
    }
    Ok(out)
}
