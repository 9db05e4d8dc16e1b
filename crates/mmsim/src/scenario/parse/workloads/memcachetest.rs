//! `type = "memcachetest"`: a memcached server's item pool and memcachetest's clients.

use super::super::check::{opt, Cx, Res, Table};
use super::super::values::{boolean, positive_time, size, size_up_to, u32_in, SizeKind};
use super::super::PAGE;
use super::MemSource;
use crate::scenario::{MemcachetestParams, WorkloadKind};

const MAX_THREADS: i64 = 4096;
pub(super) const KEYS: &[&str] = &[
    "pool",
    "value_size",
    "set_percent",
    "threads",
    "duration",
    "populate",
];

/// A memcachetest workload's keys; also its pool, as the memory it takes, and where the
/// pool is given.
pub(super) fn memcachetest<'a>(
    cx: &Cx<'_>,
    t: &Table<'a>,
    ram: u64,
) -> Res<(WorkloadKind, MemSource<'a>, u64)> {
    let (pool, src) = match opt(t, "pool") {
        Some(item) => {
            let b = size(cx, &item, SizeKind::Size, Some(ram))?;
            if b == 0 {
                return Err(item.fail(cx, "the item pool must be greater than 0 bytes"));
            }
            (b, Some((item.span(), item.path.to_owned())))
        }
        // MMTests' default: 80% of RAM, in whole pages.
        None => (ram / 5 * 4 / PAGE * PAGE, None),
    };
    let value_size = match opt(t, "value_size") {
        Some(item) => size_up_to(cx, &item, pool, "a value size", "the pool size")?,
        None => (16 * 1024).min(pool),
    };
    let set_percent = match opt(t, "set_percent") {
        Some(item) => u32_in(
            cx,
            &item,
            0,
            100,
            "a percentage of sets, an integer from 0 to 100",
        )?,
        None => 33,
    };
    let threads = match opt(t, "threads") {
        Some(item) => u32_in(
            cx,
            &item,
            1,
            MAX_THREADS as u32,
            "a thread count, an integer from 1 to 4096",
        )?,
        None => 1,
    };
    let duration = match opt(t, "duration") {
        Some(item) => Some(positive_time(cx, &item, "memcachetest's run time")?),
        None => None,
    };
    let populate = boolean(cx, t, "populate")?.unwrap_or(true);
    let kind = WorkloadKind::Memcachetest(MemcachetestParams {
        pool,
        value_size,
        set_percent,
        threads,
        duration,
        populate,
    });
    Ok((kind, src, pool))
}
