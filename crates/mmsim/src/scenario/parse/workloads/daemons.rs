//! `type = "daemons"`: the system's long-running programs, run from the boot's page cache.

use super::super::check::{opt, Cx, Res, Table};
use super::super::values::{size, time, SizeKind};
use super::super::PAGE;
use crate::scenario::{DaemonsParams, WorkloadKind};

pub(super) const KEYS: &[&str] = &["text", "interval"];

/// A daemons workload's keys; `active` is `[slab] page_cache_active`, the page cache its
/// text is taken from.
pub(super) fn daemons(cx: &Cx<'_>, t: &Table<'_>, active: u64) -> Res<WorkloadKind> {
    let text = match opt(t, "text") {
        Some(item) => {
            let b = size(cx, &item, SizeKind::Size, None)? / PAGE * PAGE;
            if b == 0 || b > active {
                return Err(item.fail(
                    cx,
                    format!(
                        "expected program text of at least a page and at most [slab] \
                         page_cache_active ({active} bytes), the page cache the programs run \
                         from, found {b} bytes"
                    ),
                ));
            }
            b
        }
        None if active == 0 => {
            return Err(cx.fail(
                t.span,
                &t.key_path("type"),
                "the daemons run from the page cache boot left: set [slab] page_cache and \
                 page_cache_active (e.g. \"100M\" and \"25M\")",
            ))
        }
        None => active,
    };
    let interval = match opt(t, "interval") {
        Some(item) => {
            let d = time(cx, &item)?;
            if d == 0 {
                return Err(item.fail(cx, "expected an interval greater than 0, found 0"));
            }
            d
        }
        None => DaemonsParams::INTERVAL,
    };
    Ok(WorkloadKind::Daemons(DaemonsParams { text, interval }))
}
