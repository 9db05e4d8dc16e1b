//! `[[workload]]`: what runs on the machine. This module reads the list and the keys
//! every workload has (`type`, `name`, `start`) and hands the rest to the module of the
//! workload's type; it also checks the workloads' memory together against RAM + swap and
//! gives unnamed ones their default names.

mod daemons;
mod files;
mod fsmark;
mod highalloc;
mod kbuild;
mod mem_eater;
mod memcachetest;
mod parallelio;
mod simple_writeback;
mod stress_highalloc;

use std::ops::Range;

use super::check::{
    array_of_tables, describe, nearest, opt, quoted_list, unknown_key, with_suggestion, Cx, Item,
    Res, Table,
};
use super::values::{boolean, string, time};
use crate::scenario::{BlockDevice, CgroupSpec, Workload, WorkloadKind};

const WORKLOAD_TYPES: &[&str] = &[
    "memcachetest",
    "mem_eater",
    "dd",
    "cat",
    "mmap",
    "parallelio",
    "highalloc",
    "kbuild",
    "stress-highalloc",
    "simple-writeback",
    "fsmark",
    "micro",
    "sync",
    "daemons",
];
const COMMON_WORKLOAD_KEYS: &[&str] = &["type", "name", "start", "cgroup", "cpus", "background"];

/// What the workloads run on: the rest of the scenario, parsed before them.
pub(super) struct Host<'a> {
    /// RAM in bytes.
    pub ram: u64,
    /// Swap in bytes.
    pub swap: u64,
    /// CPUs.
    pub ncpus: u32,
    /// The `[[device]]`s.
    pub devices: &'a [BlockDevice],
    /// The `[[cgroup]]`s.
    pub cgroups: &'a [CgroupSpec],
    /// `[slab] page_cache_active`: the boot's page cache that programs run from.
    pub page_cache_active: u64,
}

/// The `[[workload]]` tables, checked together against RAM + swap and for unique names.
pub(super) fn workloads(cx: &Cx<'_>, item: &Item<'_>, host: &Host<'_>) -> Res<Vec<Workload>> {
    let limit = u128::from(host.ram) + u128::from(host.swap);
    let mut total: u128 = 0;
    let mut out: Vec<Workload> = Vec::new();
    // The explicit name of each workload, if it has one.
    let mut explicit: Vec<Option<String>> = Vec::new();
    for t in array_of_tables(cx, item, "workload")? {
        let t = t?;
        let (w, mem_item, mem, name) = workload(cx, &t, host)?;
        total += u128::from(mem);
        if total > limit {
            let (span, key) = match mem_item {
                Some((span, key)) => (span, key),
                None => (t.span, t.key_path("pool")),
            };
            return Err(cx.fail(
                span,
                &key,
                format!(
                    "more memory asked than can exist: the workloads up to {} need {total} bytes, but RAM + swap is {limit} bytes",
                    t.path
                ),
            ));
        }
        out.push(w);
        let name = match name {
            Some((n, span)) => {
                if let Some(j) = explicit
                    .iter()
                    .position(|e| e.as_deref() == Some(n.as_str()))
                {
                    return Err(cx.fail(
                        span,
                        &t.key_path("name"),
                        format!("duplicate workload name \"{n}\": workload[{j}] already has it; names must be unique"),
                    ));
                }
                Some(n)
            }
            None => None,
        };
        explicit.push(name);
    }
    assign_names(&mut out, &explicit);
    Ok(out)
}

/// Unnamed workloads get their type name, then `-2`, `-3`... skipping names already taken.
fn assign_names(out: &mut [Workload], explicit: &[Option<String>]) {
    let mut used: Vec<String> = explicit.iter().flatten().cloned().collect();
    let mut next: Vec<(&'static str, u64)> = Vec::new();
    for (w, name) in out.iter_mut().zip(explicit) {
        if name.is_some() {
            continue;
        }
        let ty = match w.kind {
            WorkloadKind::MemEater { .. } => "mem_eater",
            WorkloadKind::Memcachetest(_) => "memcachetest",
            WorkloadKind::Dd(_) => "dd",
            WorkloadKind::Cat { .. } => "cat",
            WorkloadKind::Parallelio(_) => "parallelio",
            WorkloadKind::Sync => "sync",
            WorkloadKind::Mmap(_) => "mmap",
            WorkloadKind::Highalloc(_) => "highalloc",
            WorkloadKind::Kbuild(_) => "kbuild",
            WorkloadKind::StressHighalloc(_) => "stress-highalloc",
            WorkloadKind::SimpleWriteback(_) => "simple-writeback",
            WorkloadKind::Fsmark(_) => "fsmark",
            WorkloadKind::Micro(_) => "micro",
            WorkloadKind::Daemons(_) => "daemons",
        };
        let idx = match next.iter().position(|(t, _)| *t == ty) {
            Some(i) => i,
            None => {
                next.push((ty, 1));
                next.len() - 1
            }
        };
        loop {
            let n = next[idx].1;
            next[idx].1 += 1;
            let candidate = if n == 1 {
                ty.to_string()
            } else {
                format!("{ty}-{n}")
            };
            if !used.contains(&candidate) {
                used.push(candidate.clone());
                w.name = candidate;
                break;
            }
        }
    }
}

/// A CPU list as `taskset -c` and cpusets take it ("0-7", "0,2,8-11"): the CPUs,
/// ascending and each once, every one below the machine's `ncpus`.
fn cpu_list(cx: &Cx<'_>, item: &Item<'_>, ncpus: u32) -> Res<Vec<u32>> {
    let what = "a CPU list such as \"0-7\" or \"0,2,4-6\"";
    let s = string(cx, item, what)?;
    let bad = |why: String| item.fail(cx, why);
    let mut cpus = Vec::new();
    for part in s.split(',').map(str::trim) {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let (Ok(lo), Ok(hi)) = (lo.trim().parse::<u32>(), hi.trim().parse::<u32>()) else {
            return Err(bad(format!("expected {what}, found \"{s}\"")));
        };
        if lo > hi {
            return Err(bad(format!("CPU range \"{part}\" runs backwards")));
        }
        if hi >= ncpus {
            return Err(bad(format!(
                "CPU {hi} does not exist: the machine has {ncpus} CPUs (0-{})",
                ncpus - 1
            )));
        }
        cpus.extend(lo..=hi);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// Where a workload's memory figure came from: the value's span and its key path.
pub(super) type MemSource<'a> = Option<(Option<&'a Range<usize>>, String)>;

/// An explicit workload name and where it is.
type NameSource<'a> = Option<(String, Option<&'a Range<usize>>)>;

/// One workload; also returns where its memory figure is, the memory, and its explicit name.
fn workload<'a>(
    cx: &Cx<'_>,
    t: &Table<'a>,
    host: &Host<'_>,
) -> Res<(Workload, MemSource<'a>, u64, NameSource<'a>)> {
    let Host {
        ram,
        ncpus,
        devices,
        cgroups,
        ..
    } = *host;
    let ty_item = t.required(
        cx,
        "type",
        &format!("the workload type, {}", quoted_list(WORKLOAD_TYPES)),
    )?;
    let ty = string(
        cx,
        &ty_item,
        &format!(
            "the workload type as a string, {}",
            quoted_list(WORKLOAD_TYPES)
        ),
    )?;
    const TYPES: [(&str, &[&str]); 14] = [
        ("memcachetest", memcachetest::KEYS),
        ("mem_eater", mem_eater::KEYS),
        ("dd", files::DD_KEYS),
        ("cat", files::CAT_KEYS),
        ("mmap", files::MMAP_KEYS),
        ("parallelio", parallelio::KEYS),
        ("highalloc", highalloc::KEYS),
        ("kbuild", kbuild::KEYS),
        ("stress-highalloc", stress_highalloc::KEYS),
        ("simple-writeback", simple_writeback::KEYS),
        ("fsmark", fsmark::FSMARK_KEYS),
        ("micro", fsmark::MICRO_KEYS),
        ("sync", &[]),
        ("daemons", daemons::KEYS),
    ];
    let Some(&(_, own)) = TYPES.iter().find(|(name, _)| *name == ty) else {
        let e = ty_item.fail(
            cx,
            format!(
                "unknown workload type \"{ty}\": expected {}",
                quoted_list(WORKLOAD_TYPES)
            ),
        );
        return Err(with_suggestion(e, nearest(ty, WORKLOAD_TYPES)));
    };
    // A key of another type (that this type does not share) gets a message naming its type.
    let other_type = |key: &str| -> Option<&str> {
        TYPES
            .iter()
            .find(|(name, keys)| *name != ty && keys.contains(&key) && !own.contains(&key))
            .map(|(name, _)| *name)
    };
    let allowed: Vec<&str> = COMMON_WORKLOAD_KEYS.iter().chain(own).copied().collect();
    for e in t.entries {
        if allowed.contains(&e.key.as_str()) {
            continue;
        }
        if let Some(other_name) = other_type(&e.key) {
            return Err(cx.fail(
                e.key_span.as_ref().or(e.node.span.as_ref()),
                &t.key_path(&e.key),
                format!(
                    "key '{}' belongs to {other_name} workloads, but this workload has type = \"{ty}\"; expected one of: {}",
                    e.key,
                    allowed.join(", ")
                ),
            ));
        }
        return Err(unknown_key(cx, t, e, &allowed, &format!("a {ty} workload")));
    }

    let name = match opt(t, "name") {
        Some(item) => {
            let s = string(cx, &item, "a workload name as a string")?;
            if s.trim().is_empty() || s.chars().any(char::is_control) {
                return Err(item.fail(
                    cx,
                    format!(
                        "expected a non-empty workload name without control characters, found {}",
                        describe(&item.node.val)
                    ),
                ));
            }
            Some((s.to_owned(), item.span()))
        }
        None => None,
    };
    let start = match opt(t, "start") {
        Some(item) => time(cx, &item)?,
        None => 0,
    };
    let cgroup = match opt(t, "cgroup") {
        Some(item) => {
            let g = string(cx, &item, "the name of a [[cgroup]], such as \"A\"")?;
            let g = g.strip_prefix('/').unwrap_or(g);
            if g.is_empty() {
                None
            } else {
                let Some(i) = cgroups.iter().position(|c| c.name == g) else {
                    let names: Vec<&str> = cgroups.iter().map(|c| c.name.as_str()).collect();
                    let e = item.fail(
                        cx,
                        format!("no [[cgroup]] named \"{g}\" (\"/\" is the root group)"),
                    );
                    return Err(with_suggestion(e, nearest(g, &names)));
                };
                Some(i)
            }
        }
        None => None,
    };

    let (kind, mem_src, mem) = match ty {
        "memcachetest" => memcachetest::memcachetest(cx, t, ram)?,
        "mem_eater" => mem_eater::mem_eater(cx, t, ram)?,
        "cat" => (files::cat(cx, t, devices)?, None, 0),
        "mmap" => (files::mmap(cx, t, devices)?, None, 0),
        "parallelio" => parallelio::parallelio(cx, t, ram, devices)?,
        "sync" => (WorkloadKind::Sync, None, 0),
        "highalloc" => (highalloc::highalloc(cx, t)?, None, 0),
        "kbuild" => (kbuild::kbuild(cx, t, devices)?, None, 0),
        "stress-highalloc" => (stress_highalloc::stress_highalloc(cx, t, devices)?, None, 0),
        "simple-writeback" => (
            simple_writeback::simple_writeback(cx, t, ram, devices)?,
            None,
            0,
        ),
        "fsmark" => (fsmark::fsmark(cx, t, ram, devices)?, None, 0),
        "micro" => fsmark::micro(cx, t, ram, devices)?,
        "daemons" => (daemons::daemons(cx, t, host.page_cache_active)?, None, 0),
        _ => (files::dd(cx, t, devices)?, None, 0),
    };
    let cpus = match opt(t, "cpus") {
        Some(item) => cpu_list(cx, &item, ncpus)?,
        None => Vec::new(),
    };
    // The daemons never finish: a run that waits for the workloads does not wait for them.
    let background = match kind {
        WorkloadKind::Daemons(_) => {
            if let Some(item) = opt(t, "background") {
                if boolean(cx, t, "background")? == Some(false) {
                    return Err(item.fail(
                        cx,
                        "the daemons never finish, so they always run in the background; \
                         leave `background` out",
                    ));
                }
            }
            true
        }
        _ => boolean(cx, t, "background")?.unwrap_or(false),
    };
    let w = Workload {
        name: name.as_ref().map_or_else(String::new, |(n, _)| n.clone()),
        start,
        kind,
        cgroup,
        cpus,
        background,
    };
    Ok((w, mem_src, mem, name))
}
