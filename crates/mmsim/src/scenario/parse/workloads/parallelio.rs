//! `type = "parallelio"`: MMTests' parallelio driver, memcachetest runs beside dd writes
//! of growing size.

use super::super::check::{nearest, opt, with_suggestion, Cx, Item, Res, Table};
use super::super::tree::Val;
use super::super::values::{boolean, positive_time, size, string, u32_in, SizeKind};
use super::super::PAGE;
use super::{memcachetest, MemSource};
use crate::fs::Filesystem;
use crate::scenario::{BlockDevice, MemcachetestParams, ParallelioParams, WorkloadKind};

pub(super) const KEYS: &[&str] = &[
    "device",
    "pool",
    "value_size",
    "threads",
    "duration",
    "iterations",
    "increments",
    "steps",
    "warmup",
];

/// A parallelio workload's keys (MMTests' config-global-dhp__parallelio-memcachetest).
pub(super) fn parallelio<'a>(
    cx: &Cx<'_>,
    t: &Table<'a>,
    ram: u64,
    devices: &[BlockDevice],
) -> Res<(WorkloadKind, MemSource<'a>, u64)> {
    let dev_item = t.required(
        cx,
        "device",
        "the name of the [[device]] dd writes largefile to",
    )?;
    let dev_name = string(cx, &dev_item, "a device name as a string")?;
    let Some(dev) = devices.iter().find(|d| d.name == dev_name) else {
        let names: Vec<&str> = devices.iter().map(|d| d.name.as_str()).collect();
        let e = dev_item.fail(cx, format!("no [[device]] named \"{dev_name}\""));
        return Err(with_suggestion(e, nearest(dev_name, &names)));
    };
    if dev.filesystem == Filesystem::Raw {
        return Err(dev_item.fail(
            cx,
            format!("device \"{dev_name}\" has no filesystem to hold a file"),
        ));
    }
    let mem_total = crate::mm::page_alloc::mem_total_pages(ram / PAGE) * PAGE;
    // memcachetest's keys, with its defaults; the pool defaults to MEMCACHED_MEMPOOL,
    // 4/5 of MemTotal.
    let (mc, src, pool) = memcachetest::memcachetest(cx, t, ram)?;
    let pool = if opt(t, "pool").is_some() {
        pool
    } else {
        mem_total / 5 * 4 / PAGE * PAGE
    };
    let WorkloadKind::Memcachetest(MemcachetestParams {
        value_size,
        threads,
        ..
    }) = mc
    else {
        unreachable!("memcachetest() builds a memcachetest")
    };
    let duration = match opt(t, "duration") {
        Some(item) => positive_time(cx, &item, "memcachetest's run time")?,
        None => 200 * 1_000_000_000,
    };
    let iterations = match opt(t, "iterations") {
        Some(item) => u32_in(cx, &item, 1, 1000, "an iteration count from 1 to 1000")?,
        None => 5,
    };
    let steps = match opt(t, "steps") {
        Some(item) => {
            if opt(t, "increments").is_some() {
                return Err(item.fail(cx, "give either steps or increments, not both"));
            }
            let Val::Array(elems) = &item.node.val else {
                return Err(item.expected(cx, "an array of dd sizes, e.g. [0, \"1G\", \"2G\"]"));
            };
            let mut steps = Vec::new();
            for (i, n) in elems.iter().enumerate() {
                let elem = Item {
                    node: n,
                    path: format!("{}[{i}]", item.path),
                    key_span: item.key_span,
                };
                let b = size(cx, &elem, SizeKind::Size, None)?;
                if b % (1 << 20) != 0 || b > dev.size {
                    return Err(elem.fail(
                        cx,
                        format!("expected a dd size of whole MiB that fits on \"{dev_name}\" ({} bytes), found {b} bytes", dev.size),
                    ));
                }
                steps.push(b);
            }
            steps
        }
        None => {
            let increments = match opt(t, "increments") {
                Some(item) => u32_in(cx, &item, 1, 100, "an IO step count from 1 to 100")?,
                None => 3,
            };
            let steps = ParallelioParams::mmtests_steps(mem_total, pool, increments);
            let largest = steps.iter().copied().max().unwrap_or(0);
            if largest > dev.size {
                return Err(dev_item.fail(cx, format!("the largest IO step ({largest} bytes) is larger than the filesystem on \"{dev_name}\" ({} bytes)", dev.size)));
            }
            steps
        }
    };
    let warmup = boolean(cx, t, "warmup")?.unwrap_or(true);
    let kind = WorkloadKind::Parallelio(ParallelioParams {
        device: dev_name.to_owned(),
        pool,
        value_size,
        threads,
        duration,
        iterations,
        steps,
        warmup,
    });
    Ok((kind, src, pool))
}
