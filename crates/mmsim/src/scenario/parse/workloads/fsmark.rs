//! `type = "fsmark"` (fs_mark as seed 002 ran it) and `type = "micro"` (MMTests' usemem
//! micro tests of mapped writes).

use super::super::check::{nearest, opt, with_suggestion, Cx, Item, Res, Table};
use super::super::tree::Val;
use super::super::values::{size, string, u32_in, u64_min, SizeKind};
use super::super::PAGE;
use super::files::fs_device;
use super::MemSource;
use crate::scenario::{BlockDevice, FsmarkParams, MicroParams, MicroTest, WorkloadKind};

pub(super) const FSMARK_KEYS: &[&str] = &[
    "device",
    "threads",
    "threads_per_cpu",
    "files",
    "file_size",
    "write_size",
    "iterations",
    "dirs",
    "files_per_dir",
];

pub(super) const MICRO_KEYS: &[&str] = &[
    "device",
    "tests",
    "threads",
    "file_mmap_size",
    "mixed_size",
    "mixed_anon_percent",
    "mixed_iter",
];

const MICRO_TESTS: [MicroTest; 2] = [MicroTest::FileMmapWrite, MicroTest::MixedMmapWrite];

/// MemTotal of a machine booted with `ram` bytes, in bytes.
fn mem_total(ram: u64) -> u64 {
    crate::mm::page_alloc::mem_total_pages(ram / PAGE) * PAGE
}

/// A size in whole pages, at least one.
fn pages_size(cx: &Cx<'_>, t: &Table<'_>, key: &str, default: u64) -> Res<u64> {
    let Some(item) = opt(t, key) else {
        return Ok(default);
    };
    let b = size(cx, &item, SizeKind::Size, None)?;
    if b < PAGE || b % PAGE != 0 {
        return Err(item.fail(
            cx,
            format!("expected a size of whole 4 KiB pages, at least one, found {b} bytes"),
        ));
    }
    Ok(b)
}

fn count(cx: &Cx<'_>, t: &Table<'_>, key: &str, lo: u32, hi: u32, what: &str) -> Res<Option<u32>> {
    opt(t, key)
        .map(|item| u32_in(cx, &item, lo, hi, what))
        .transpose()
}

/// A fsmark workload's keys.
pub(super) fn fsmark(
    cx: &Cx<'_>,
    t: &Table<'_>,
    ram: u64,
    devices: &[BlockDevice],
) -> Res<WorkloadKind> {
    let dev = fs_device(cx, t, devices, "fs_mark writes to")?;
    let threads = count(cx, t, "threads", 1, 4096, "a thread count, 1 to 4096")?;
    if let (Some(_), Some(item)) = (threads, opt(t, "threads_per_cpu")) {
        return Err(item.fail(cx, "give either threads or threads_per_cpu, not both"));
    }
    let threads_per_cpu = count(
        cx,
        t,
        "threads_per_cpu",
        1,
        1024,
        "threads per CPU, 1 to 1024",
    )?
    .unwrap_or(1);
    let file_size = pages_size(cx, t, "file_size", FsmarkParams::FILE_SIZE)?;
    let write_size = pages_size(cx, t, "write_size", FsmarkParams::WRITE_SIZE)?;
    let files = match opt(t, "files") {
        Some(item) => u64_min(cx, &item, 1, "files per iteration, at least 1")?,
        // The letter: "the files created was about 3xRAM" per iteration.
        None => (3 * mem_total(ram) / file_size).max(1),
    };
    let iterations = count(cx, t, "iterations", 1, 10_000, "iterations, 1 to 10000")?
        .unwrap_or(FsmarkParams::ITERATIONS);
    let dirs = match opt(t, "dirs") {
        Some(item) => u64_min(cx, &item, 1, "subdirectories, at least 1")?,
        None => FsmarkParams::DIRS,
    };
    let files_per_dir = match opt(t, "files_per_dir") {
        Some(item) => u64_min(cx, &item, 1, "files per subdirectory, at least 1")?,
        None => FsmarkParams::FILES_PER_DIR,
    };
    Ok(WorkloadKind::Fsmark(FsmarkParams {
        device: dev.name.clone(),
        threads,
        threads_per_cpu,
        files,
        file_size,
        write_size,
        iterations,
        dirs,
        files_per_dir,
    }))
}

/// A micro workload's keys.
pub(super) fn micro<'a>(
    cx: &Cx<'_>,
    t: &Table<'a>,
    ram: u64,
    devices: &[BlockDevice],
) -> Res<(WorkloadKind, MemSource<'a>, u64)> {
    let dev = fs_device(cx, t, devices, "the sparse files are on")?;
    let names: Vec<&str> = MICRO_TESTS.iter().map(|m| m.name()).collect();
    let tests = match opt(t, "tests") {
        Some(item) => {
            let expected = format!("an array of micro tests, from {}", names.join(", "));
            let Val::Array(elems) = &item.node.val else {
                return Err(item.expected(cx, &expected));
            };
            let mut tests = Vec::new();
            for (i, n) in elems.iter().enumerate() {
                let elem = Item {
                    node: n,
                    path: format!("{}[{i}]", item.path),
                    key_span: item.key_span,
                };
                let name = string(cx, &elem, &expected)?;
                let Some(test) = MICRO_TESTS.iter().find(|m| m.name() == name) else {
                    let e = elem.fail(
                        cx,
                        format!(
                            "unknown micro test \"{name}\": expected {}",
                            names.join(" or ")
                        ),
                    );
                    return Err(with_suggestion(e, nearest(name, &names)));
                };
                tests.push(*test);
            }
            if tests.is_empty() {
                return Err(item.expected(cx, &expected));
            }
            tests
        }
        None => MICRO_TESTS.to_vec(),
    };
    let threads = count(cx, t, "threads", 1, 4096, "a writer count, 1 to 4096")?;
    let total = mem_total(ram);
    let file_mmap_size = pages_size(cx, t, "file_mmap_size", 10 * total)?;
    let mixed_size = pages_size(cx, t, "mixed_size", 3 * total)?;
    let mixed_anon_percent = count(
        cx,
        t,
        "mixed_anon_percent",
        0,
        100,
        "a percentage, 0 to 100",
    )?
    .unwrap_or(30);
    let mixed_iter = count(cx, t, "mixed_iter", 1, 1000, "passes, 1 to 1000")?.unwrap_or(5);
    // What the anonymous writers hold at once counts against RAM + swap.
    let anon = if tests.contains(&MicroTest::MixedMmapWrite) {
        mixed_size * u64::from(mixed_anon_percent) / 100
    } else {
        0
    };
    let src = opt(t, "mixed_size").map(|i| (i.span(), i.path.to_owned()));
    Ok((
        WorkloadKind::Micro(MicroParams {
            device: dev.name.clone(),
            tests,
            threads,
            file_mmap_size,
            mixed_size,
            mixed_anon_percent,
            mixed_iter,
        }),
        src,
        anon,
    ))
}
