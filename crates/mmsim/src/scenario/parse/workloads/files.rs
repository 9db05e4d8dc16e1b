//! The workloads on one file of a `[[device]]` with a filesystem: `type = "cat"` reads
//! it, `type = "dd"` writes it, `type = "mmap"` maps it.

use super::super::check::{nearest, opt, with_suggestion, Cx, Item, Res, Table};
use super::super::values::{boolean, choice, size, string, u32_in, u64_min, SizeKind};
use super::super::MIB;
use crate::fs::Filesystem;
use crate::scenario::{
    AccessPattern, BlockDevice, DdConv, DdParams, MmapAccess, MmapParams, WorkloadKind,
};

pub(super) const DD_KEYS: &[&str] = &[
    "device",
    "size",
    "bs",
    "ibs",
    "obs",
    "conv",
    "truncate_to",
    "unlink",
    "file",
];
pub(super) const CAT_KEYS: &[&str] = &["device", "size", "files"];
pub(super) const MMAP_KEYS: &[&str] = &["device", "size", "access", "pattern", "passes", "msync"];
const MAX_PASSES: u32 = 1_000_000;

/// The `device` key of a workload on files: a `[[device]]` with a filesystem.
pub(super) fn fs_device<'d>(
    cx: &Cx<'_>,
    t: &Table<'_>,
    devices: &'d [BlockDevice],
    what: &str,
) -> Res<&'d BlockDevice> {
    let dev_item = t.required(cx, "device", &format!("the name of the [[device]] {what}"))?;
    let dev_name = string(cx, &dev_item, "a device name as a string")?;
    let Some(dev) = devices.iter().find(|d| d.name == dev_name) else {
        let names: Vec<&str> = devices.iter().map(|d| d.name.as_str()).collect();
        let e = dev_item.fail(
            cx,
            if names.is_empty() {
                format!("no [[device]] named \"{dev_name}\": the file declares no devices")
            } else {
                format!(
                    "no [[device]] named \"{dev_name}\"; expected one of: {}",
                    names.join(", ")
                )
            },
        );
        return Err(with_suggestion(e, nearest(dev_name, &names)));
    };
    if dev.filesystem == Filesystem::Raw {
        return Err(dev_item.fail(
            cx,
            format!("device \"{dev_name}\" has no filesystem to hold a file"),
        ));
    }
    Ok(dev)
}

/// The `device` and `size` keys of a file workload: a `[[device]]` with a filesystem and a
/// file size in whole pages that fits on it.
fn file_on_device<'d>(
    cx: &Cx<'_>,
    t: &Table<'_>,
    devices: &'d [BlockDevice],
    what: &str,
) -> Res<(&'d BlockDevice, u64)> {
    let dev = fs_device(cx, t, devices, what)?;
    let dev_name = dev.name.as_str();
    let size_item = t.required(cx, "size", "the file size, e.g. \"4G\"")?;
    let size_b = size(cx, &size_item, SizeKind::Size, None)?;
    if size_b == 0 || size_b % 4096 != 0 {
        return Err(size_item.fail(
            cx,
            format!(
                "expected a file size of whole 4 KiB pages greater than 0, found {size_b} bytes"
            ),
        ));
    }
    if size_b > dev.size {
        return Err(size_item.fail(cx, format!("a file of {size_b} bytes is larger than the filesystem on \"{dev_name}\" ({} bytes)", dev.size)));
    }
    Ok((dev, size_b))
}

/// A cat workload's keys.
pub(super) fn cat(cx: &Cx<'_>, t: &Table<'_>, devices: &[BlockDevice]) -> Res<WorkloadKind> {
    let (dev, size) = file_on_device(cx, t, devices, "the file is on")?;
    let files = match opt(t, "files") {
        Some(item) => {
            let n = u64_min(cx, &item, 1, "a file count, an integer >= 1")?;
            if n > size / 4096 {
                return Err(item.fail(
                    cx,
                    format!(
                        "{n} files cannot share {size} bytes: each needs a 4 KiB page at least"
                    ),
                ));
            }
            n
        }
        None => 1,
    };
    Ok(WorkloadKind::Cat {
        device: dev.name.clone(),
        size,
        files,
    })
}

/// A dd block size: whole pages, or a power of two from 512 bytes that divides a page.
fn block_size(cx: &Cx<'_>, b: &Item<'_>) -> Res<u64> {
    let v = size(cx, b, SizeKind::Size, None)?;
    let sub_page = (512..4096).contains(&v) && v.is_power_of_two();
    if !sub_page && (v == 0 || v % 4096 != 0) {
        return Err(b.fail(
            cx,
            format!(
                "expected a block size of whole 4 KiB pages, or 512, 1K or 2K, found {v} bytes"
            ),
        ));
    }
    Ok(v)
}

/// A dd workload's keys.
pub(super) fn dd(cx: &Cx<'_>, t: &Table<'_>, devices: &[BlockDevice]) -> Res<WorkloadKind> {
    let (dev, size_b) = file_on_device(cx, t, devices, "dd writes to")?;
    let dev_name = dev.name.as_str();
    // bs= (one buffer), or ibs= and obs= of the same size (two buffers, C_TWOBUFS).
    let (ibs, obs) = (opt(t, "ibs"), opt(t, "obs"));
    let two_buffers = ibs.is_some() || obs.is_some();
    let bs = match (opt(t, "bs"), ibs, obs) {
        (Some(_), Some(b), _) | (Some(_), None, Some(b)) => {
            return Err(b.fail(cx, "expected bs, or ibs and obs, not both"));
        }
        (Some(b), None, None) => block_size(cx, &b)?,
        (None, Some(i), Some(o)) => {
            let (iv, ov) = (block_size(cx, &i)?, block_size(cx, &o)?);
            if iv != ov {
                return Err(o.fail(
                    cx,
                    format!("expected obs equal to ibs ({iv} bytes; mmsim writes whole blocks), found {ov} bytes"),
                ));
            }
            ov
        }
        (None, Some(b), None) | (None, None, Some(b)) => {
            return Err(b.fail(cx, "expected ibs and obs together"));
        }
        (None, None, None) => MIB,
    };
    let conv = match opt(t, "conv") {
        Some(c) => match choice(cx, &c, &["fdatasync", "fsync", "none"])? {
            "fdatasync" => DdConv::Fdatasync,
            "fsync" => DdConv::Fsync,
            _ => DdConv::None,
        },
        None => DdConv::None,
    };
    let truncate_to = match opt(t, "truncate_to") {
        Some(item) => {
            let v = size(cx, &item, SizeKind::Size, None)?;
            if v % 4096 != 0 || v > size_b {
                return Err(item.fail(
                    cx,
                    format!("expected a size of whole 4 KiB pages up to the file size ({size_b} bytes), found {v} bytes"),
                ));
            }
            Some(v)
        }
        None => None,
    };
    Ok(WorkloadKind::Dd(DdParams {
        device: dev_name.to_owned(),
        size: size_b,
        bs,
        two_buffers,
        conv,
        truncate_to,
        unlink: boolean(cx, t, "unlink")?.unwrap_or(false),
        start_when_used: None,
        file: match opt(t, "file") {
            Some(item) => Some(file_name(cx, &item)?),
            None => None,
        },
    }))
}

/// An mmap workload's keys.
pub(super) fn mmap(cx: &Cx<'_>, t: &Table<'_>, devices: &[BlockDevice]) -> Res<WorkloadKind> {
    let (dev, size) = file_on_device(cx, t, devices, "the file is on")?;
    if size / 4096 > u64::from(u32::MAX / 2) {
        let item = opt(t, "size").expect("file_on_device read it");
        return Err(item.fail(
            cx,
            format!("a mapping of {size} bytes is larger than mmsim's address spaces"),
        ));
    }
    let access = match opt(t, "access") {
        Some(item) => match choice(cx, &item, &["read", "write"])? {
            "write" => MmapAccess::Write,
            _ => MmapAccess::Read,
        },
        None => MmapAccess::Read,
    };
    let pattern = match opt(t, "pattern") {
        Some(item) => match choice(cx, &item, &["seq", "random"])? {
            "random" => AccessPattern::Random,
            _ => AccessPattern::Sequential,
        },
        None => AccessPattern::Sequential,
    };
    let passes = match opt(t, "passes") {
        Some(item) => u32_in(
            cx,
            &item,
            1,
            MAX_PASSES,
            "a number of passes, an integer from 1 to 1000000",
        )?,
        None => 1,
    };
    Ok(WorkloadKind::Mmap(MmapParams {
        device: dev.name.clone(),
        size,
        access,
        pattern,
        passes,
        msync: boolean(cx, t, "msync")?.unwrap_or(false),
    }))
}

/// A file name: non-empty, no '/', no control characters.
fn file_name(cx: &Cx<'_>, item: &Item<'_>) -> Res<String> {
    let s = string(cx, item, "a file name as a string")?;
    if s.is_empty() || s.contains('/') || s.chars().any(char::is_control) {
        return Err(item.fail(
            cx,
            format!("expected a file name without '/' or control characters, found \"{s}\""),
        ));
    }
    Ok(s.to_owned())
}
