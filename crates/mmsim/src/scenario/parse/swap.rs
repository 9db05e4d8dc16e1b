//! `[swap]`: the swap device, a simple service-time model or a partition on a
//! `[[device]]`.

use super::check::{nearest, opt, with_suggestion, Cx, Res, Table};
use super::values::{size, string, time, SizeKind};
use super::{MIB, PAGE};
use crate::fs::Filesystem;
use crate::mm::swapfile::{SwapConfig, SwapPlacement};
use crate::scenario::BlockDevice;

const MAX_SWAP: u64 = 64 << 40;
const SWAP_KEYS: &[&str] = &[
    "size",
    "read_latency",
    "write_latency",
    "bandwidth",
    "device",
    "placement",
    "gap",
];

pub(super) fn swap(cx: &Cx<'_>, t: &Table<'_>, devices: &[BlockDevice]) -> Res<SwapConfig> {
    t.check_keys(cx, SWAP_KEYS, "[swap]")?;
    let item = t.required(
        cx,
        "size",
        "the swap device's size such as \"8G\" (omit [swap] for no swap)",
    )?;
    let size_b = size(cx, &item, SizeKind::Size, None)?;
    if size_b == 0 {
        return Err(item.fail(
            cx,
            "swap size must be greater than 0 (omit [swap] for no swap device)",
        ));
    }
    if size_b % PAGE != 0 {
        return Err(item.fail(
            cx,
            format!("swap size must be a whole number of 4096-byte pages, found {size_b} bytes"),
        ));
    }
    if size_b > MAX_SWAP {
        return Err(item.fail(
            cx,
            format!("swap size too large: at most 64T, found {size_b} bytes"),
        ));
    }
    let read_latency = match opt(t, "read_latency") {
        Some(item) => time(cx, &item)?,
        None => 5_000_000,
    };
    let write_latency = match opt(t, "write_latency") {
        Some(item) => time(cx, &item)?,
        None => 5_000_000,
    };
    let bandwidth = match opt(t, "bandwidth") {
        Some(item) => {
            let b = size(cx, &item, SizeKind::Rate, None)?;
            if b == 0 {
                return Err(item.fail(cx, "bandwidth must be greater than 0 bytes per second"));
            }
            b
        }
        None => 100 * MIB,
    };
    let device = match opt(t, "device") {
        Some(item) => {
            let name = string(
                cx,
                &item,
                "the name of a [[device]] (a raw disk, or a disk with a filesystem whose end holds the swap partition)",
            )?;
            let Some(dev) = devices.iter().find(|d| d.name == name) else {
                let names: Vec<&str> = devices.iter().map(|d| d.name.as_str()).collect();
                let e = item.fail(
                    cx,
                    format!("no [[device]] named \"{name}\" to hold the swap area"),
                );
                return Err(with_suggestion(e, nearest(name, &names)));
            };
            if size_b > dev.size / 2 && dev.filesystem != Filesystem::Raw {
                return Err(item.fail(cx, format!("the swap area ({size_b} bytes) would take more than half of device \"{name}\" ({} bytes), which also holds a filesystem", dev.size)));
            }
            if size_b > dev.size {
                return Err(item.fail(cx, format!("the swap area ({size_b} bytes) is larger than device \"{name}\" ({} bytes)", dev.size)));
            }
            for key in ["read_latency", "write_latency", "bandwidth"] {
                if let Some(other) = opt(t, key) {
                    return Err(other.fail(cx, format!("key '{key}' describes the simple swap model; with device = \"{name}\" the device's model applies")));
                }
            }
            Some(name.to_owned())
        }
        None => None,
    };
    let shared = device
        .as_deref()
        .and_then(|name| devices.iter().find(|d| d.name == name))
        .filter(|d| d.filesystem != Filesystem::Raw);
    for key in ["placement", "gap"] {
        if let (Some(item), None) = (opt(t, key), shared) {
            return Err(item.fail(cx, format!("key '{key}' places a swap partition on a [[device]] that also holds a filesystem; this [swap] has none (set device to such a disk)")));
        }
    }
    let start = match opt(t, "placement") {
        Some(item) => match string(cx, &item, "\"end\" or \"start\"")? {
            "end" => false,
            "start" => true,
            other => {
                let e = item.fail(
                    cx,
                    format!("placement must be \"end\" (the disk's last `size` bytes) or \"start\" (its first), found \"{other}\""),
                );
                return Err(with_suggestion(e, nearest(other, &["end", "start"])));
            }
        },
        None => false,
    };
    let placement = match (start, opt(t, "gap")) {
        (false, Some(item)) => {
            return Err(item.fail(
                cx,
                "key 'gap' is the disk between a swap partition at the start and the filesystem; set placement = \"start\" with it",
            ))
        }
        (false, None) => SwapPlacement::End,
        (true, gap_item) => {
            let gap = match gap_item {
                Some(item) => {
                    let g = size(cx, &item, SizeKind::Size, None)?;
                    let disk = shared.map_or(0, |d| d.size);
                    if g % PAGE != 0 || g + size_b > disk / 2 {
                        return Err(item.fail(cx, format!("gap must be whole 4096-byte pages and, with the swap area, at most half of the disk ({disk} bytes), found {g} bytes")));
                    }
                    g
                }
                None => 0,
            };
            SwapPlacement::Start { gap }
        }
    };
    Ok(SwapConfig {
        size: size_b,
        read_latency,
        write_latency,
        bandwidth,
        device,
        placement,
    })
}
