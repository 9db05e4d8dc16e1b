//! `[[device]]`: block devices and NFS mounts, their queues, filesystems and the
//! parameters of their timing models.

use super::check::{array_of_tables, opt, Cx, Item, Res, Table};
use super::values::{choice, size, string, time, u32_in, SizeKind};
use super::{MIB, PAGE};
use crate::fs::Filesystem;
use crate::scenario::{BlockDevice, DataMode, DeviceKind, DeviceParams, Scheduler};

const DEVICE_KEYS: &[&str] = &[
    "name",
    "type",
    "size",
    "filesystem",
    "data",
    "members",
    "nr_requests",
    "scheduler",
    "bandwidth",
    "read_bandwidth",
    "rpm",
    "seek",
    "latency",
    "server_bandwidth",
    "wsize",
];
const DEVICE_TYPES: &[&str] = &["hdd", "ssd", "usb", "raid0", "nfs"];
/// The device-model keys, and the types each applies to.
const DEVICE_PARAM_KEYS: &[(&str, &[&str])] = &[
    ("bandwidth", &["hdd", "ssd", "usb", "raid0", "nfs"]),
    ("read_bandwidth", &["ssd", "usb"]),
    ("rpm", &["hdd", "raid0"]),
    ("seek", &["hdd", "raid0"]),
    ("latency", &["nfs"]),
    ("server_bandwidth", &["nfs"]),
    ("wsize", &["nfs"]),
];
/// Largest NFS `wsize`: 1 MiB (`NFS_MAX_FILE_IO_SIZE`).
const MAX_WSIZE: u64 = MIB;
const SCHEDULERS: &[&str] = &["cfq", "deadline", "noop"];

/// The `[[device]]` tables.
pub(super) fn devices(cx: &Cx<'_>, item: &Item<'_>) -> Res<Vec<BlockDevice>> {
    let mut out: Vec<BlockDevice> = Vec::new();
    for t in array_of_tables(cx, item, "device")? {
        let dev = device(cx, &t?, &out)?;
        out.push(dev);
    }
    Ok(out)
}

/// One `[[device]]`; `before` are the devices above it.
fn device(cx: &Cx<'_>, t: &Table<'_>, before: &[BlockDevice]) -> Res<BlockDevice> {
    t.check_keys(cx, DEVICE_KEYS, "a [[device]]")?;
    let name_item = t.required(cx, "name", "the device name, e.g. \"sda\"")?;
    let name = string(cx, &name_item, "a device name as a string, e.g. \"sda\"")?;
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(name_item.fail(
            cx,
            format!("expected a device name of letters, digits, '-' or '_', found \"{name}\""),
        ));
    }
    if before.iter().any(|d| d.name == name) {
        return Err(name_item.fail(cx, format!("duplicate device name \"{name}\"")));
    }
    let ty_item = t.required(
        cx,
        "type",
        "the device type: \"hdd\", \"ssd\", \"usb\" or \"raid0\"",
    )?;
    let ty = choice(cx, &ty_item, DEVICE_TYPES)?;
    let kind = match ty {
        "hdd" => DeviceKind::Hdd,
        "ssd" => DeviceKind::Ssd,
        "usb" => DeviceKind::Usb,
        "nfs" => DeviceKind::Nfs,
        _ => {
            let members = match opt(t, "members") {
                Some(m) => u32_in(cx, &m, 2, 64, "members, an integer from 2 to 64")?,
                None => 4,
            };
            DeviceKind::Raid0 { members }
        }
    };
    if !matches!(kind, DeviceKind::Raid0 { .. }) {
        if let Some(m) = opt(t, "members") {
            return Err(m.fail(cx, "key 'members' is only for type = \"raid0\""));
        }
    }
    let default_size: u64 = match kind {
        DeviceKind::Hdd | DeviceKind::Nfs => 2 << 40,
        DeviceKind::Ssd => 256 << 30,
        DeviceKind::Usb => 32 << 30,
        DeviceKind::Raid0 { members } => u64::from(members) * (2 << 40),
    };
    let size_b = match opt(t, "size") {
        Some(s) => {
            let b = size(cx, &s, SizeKind::Size, None)?;
            if b < 64 * MIB || b % 4096 != 0 {
                return Err(s.fail(cx, format!("expected a device size of at least 64M in whole 4 KiB pages, found {b} bytes")));
            }
            b
        }
        None => default_size,
    };
    let nfs = kind == DeviceKind::Nfs;
    let filesystem = match opt(t, "filesystem") {
        Some(f) => {
            let names = Filesystem::ALL.map(Filesystem::name);
            let fs = Filesystem::from_name(choice(cx, &f, &names)?)
                .expect("choice gives one of the names");
            if nfs && fs != Filesystem::Nfs {
                return Err(f.fail(
                    cx,
                    format!("device \"{name}\" is an NFS mount: its filesystem is \"nfs\""),
                ));
            }
            if !nfs && fs == Filesystem::Nfs {
                return Err(f.fail(
                    cx,
                    format!(
                        "filesystem = \"nfs\" needs an NFS mount: type = \"nfs\", not \"{ty}\""
                    ),
                ));
            }
            fs
        }
        None if nfs => Filesystem::Nfs,
        None => Filesystem::Ext4,
    };
    if nfs {
        for key in ["nr_requests", "scheduler"] {
            if let Some(item) = opt(t, key) {
                return Err(item.fail(
                    cx,
                    format!("key '{key}' is for block devices; an NFS mount has no request queue"),
                ));
            }
        }
    }
    let nr_requests = match opt(t, "nr_requests") {
        Some(r) => u32_in(cx, &r, 4, 65536, "nr_requests, an integer from 4 to 65536")?,
        None => 128,
    };
    let scheduler = match opt(t, "scheduler") {
        Some(s) => match choice(cx, &s, SCHEDULERS)? {
            "noop" => Scheduler::Noop,
            "cfq" => Scheduler::Cfq,
            _ => Scheduler::Deadline,
        },
        None => Scheduler::default_for(kind),
    };
    let data = match opt(t, "data") {
        Some(d) => {
            if filesystem != Filesystem::Ext4 {
                return Err(d.fail(
                    cx,
                    format!(
                        "key 'data' is ext4's mount option; device \"{name}\" holds {}",
                        filesystem.name()
                    ),
                ));
            }
            match choice(cx, &d, &["ordered", "writeback"])? {
                "writeback" => DataMode::Writeback,
                _ => DataMode::Ordered,
            }
        }
        None => DataMode::Ordered,
    };
    let dev = BlockDevice {
        name: name.to_owned(),
        kind,
        size: size_b,
        filesystem,
        nr_requests,
        scheduler,
        data,
        params: DeviceParams::default(),
    };
    device_params(cx, t, ty, dev, &ty_item)
}

/// The device-model keys of a `[[device]]`. Each is applied in file order and the model
/// rebuilt through its own checks (`block::DeviceError`), so an impossible value is reported
/// at the key that made it so.
fn device_params(
    cx: &Cx<'_>,
    t: &Table<'_>,
    ty: &str,
    mut dev: BlockDevice,
    ty_item: &Item<'_>,
) -> Res<BlockDevice> {
    let name = dev.name.clone();
    let bad =
        |item: &Item<'_>, problem: &str| item.fail(cx, format!("device \"{name}\": {problem}"));
    for (key, item) in t.items() {
        let Some(&(_, types)) = DEVICE_PARAM_KEYS.iter().find(|(k, _)| *k == key) else {
            continue;
        };
        if !types.contains(&ty) {
            let quoted: Vec<String> = types.iter().map(|t| format!("\"{t}\"")).collect();
            return Err(item.fail(
                cx,
                format!("key '{key}' is only for type = {}", quoted.join(" or ")),
            ));
        }
        let p = &mut dev.params;
        match key {
            "bandwidth" => p.bandwidth = Some(size(cx, &item, SizeKind::Rate, None)?),
            "read_bandwidth" => p.read_bandwidth = Some(size(cx, &item, SizeKind::Rate, None)?),
            "server_bandwidth" => p.server_bandwidth = Some(size(cx, &item, SizeKind::Rate, None)?),
            "rpm" => {
                p.rpm = Some(u32_in(
                    cx,
                    &item,
                    0,
                    1_000_000,
                    "a spindle speed in rpm, e.g. 7200",
                )?)
            }
            "seek" => {
                let v = time(cx, &item)?;
                if v == 0 {
                    return Err(bad(
                        &item,
                        "seek must be greater than 0: a disk's head always has to move",
                    ));
                }
                p.seek = Some(v);
            }
            "latency" => p.latency = Some(time(cx, &item)?),
            _ => {
                let v = size(cx, &item, SizeKind::Size, None)?;
                if !(PAGE..=MAX_WSIZE).contains(&v) || !v.is_power_of_two() {
                    return Err(bad(&item, &format!("wsize must be a power of two from 4K to 1M (the client rounds it so), found {v} bytes")));
                }
                p.wsize = Some(v);
            }
        }
        if let Err(e) = dev.model() {
            return Err(bad(&item, &e.problem));
        }
    }
    // The kind's defaults always build; checked anyway so no device reaches the simulator
    // unvalidated.
    if let Err(e) = dev.model() {
        return Err(bad(ty_item, &e.problem));
    }
    Ok(dev)
}
