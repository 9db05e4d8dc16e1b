//! `type = "mem_eater"`: anonymous memory touched in chunks, then held or re-touched.

use super::super::check::{nearest, opt, with_suggestion, Cx, Res, Table};
use super::super::values::{positive_time, size, size_up_to, string, time, SizeKind};
use super::super::MIB;
use super::MemSource;
use crate::scenario::{MemEaterThen, WorkloadKind};

pub(super) const KEYS: &[&str] = &["size", "chunk", "pause", "then", "retouch_interval"];
const THEN_VALUES: &[&str] = &["hold", "retouch"];

/// A mem_eater workload's keys; also its size, as the memory it takes, and where it is
/// given.
pub(super) fn mem_eater<'a>(
    cx: &Cx<'_>,
    t: &Table<'a>,
    ram: u64,
) -> Res<(WorkloadKind, MemSource<'a>, u64)> {
    let item = t.required(
        cx,
        "size",
        "how much memory the mem_eater touches, e.g. \"2G\" or \"50%\"",
    )?;
    let size_b = size(cx, &item, SizeKind::Size, Some(ram))?;
    if size_b == 0 {
        return Err(item.fail(cx, "a mem_eater's size must be greater than 0 bytes"));
    }
    let src = Some((item.span(), item.path.to_owned()));
    let chunk = match opt(t, "chunk") {
        Some(item) => size_up_to(cx, &item, size_b, "a chunk", "the mem_eater's size")?,
        None => (64 * MIB).min(size_b),
    };
    let pause = match opt(t, "pause") {
        Some(item) => time(cx, &item)?,
        None => 0,
    };
    let then_item = opt(t, "then");
    let retouch = match then_item {
        Some(item) => {
            let s = string(cx, &item, "\"hold\" or \"retouch\"")?;
            match s {
                "hold" => false,
                "retouch" => true,
                _ => {
                    let e = item.fail(
                        cx,
                        format!("expected \"hold\" or \"retouch\", found \"{s}\""),
                    );
                    return Err(with_suggestion(e, nearest(s, THEN_VALUES)));
                }
            }
        }
        None => false,
    };
    let interval = match opt(t, "retouch_interval") {
        Some(item) if !retouch => {
            return Err(item.fail(
                cx,
                "retouch_interval only applies with then = \"retouch\"; this mem_eater holds its memory",
            ));
        }
        Some(item) => positive_time(cx, &item, "retouch_interval")?,
        None => 10_000_000_000,
    };
    let then = if retouch {
        MemEaterThen::Retouch { interval }
    } else {
        MemEaterThen::Hold
    };
    let kind = WorkloadKind::MemEater {
        size: size_b,
        chunk,
        pause,
        then,
    };
    Ok((kind, src, size_b))
}
