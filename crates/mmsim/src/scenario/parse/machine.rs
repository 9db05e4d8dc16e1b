//! `[machine]`: RAM, CPUs, the MMIO hole below 4 GiB, and the CPU's per-page costs of
//! reclaim.

use super::check::{opt, sub_table, Cx, Res, Table};
use super::values::{positive_time, size, u32_in, SizeKind};
use super::{MIB, PAGE};
use crate::calibration::ReclaimCosts;

const MIN_RAM: u64 = 64 * MIB;
const MAX_RAM: u64 = 4 << 40;
const MAX_CPUS: i64 = 4096;
const MACHINE_KEYS: &[&str] = &["ram", "cpus", "pci_hole", "reclaim_costs"];
const COST_KEYS: &[&str] = &[
    "isolate_page",
    "shrink_page",
    "rmap_walk",
    "pageout",
    "deactivate_page",
    "shrink_lruvec",
    "shrinker_call",
];
/// The hole leaves at least DMA's 16 MiB below it.
const MAX_PCI_HOLE: u64 = (4 << 30) - 16 * MIB;

pub(super) fn machine(cx: &Cx<'_>, t: &Table<'_>) -> Res<(u64, u32, u64, ReclaimCosts)> {
    t.check_keys(cx, MACHINE_KEYS, "[machine]")?;
    let item = t.required(cx, "ram", "the machine's RAM as a size such as \"4G\"")?;
    let ram = size(cx, &item, SizeKind::Size, None)?;
    if ram < MIN_RAM {
        return Err(item.fail(
            cx,
            format!(
                "RAM too small for the zones and watermarks: need at least 64M, found {ram} bytes"
            ),
        ));
    }
    if ram > MAX_RAM {
        return Err(item.fail(cx, format!("RAM too large: at most 4T, found {ram} bytes")));
    }
    if ram % PAGE != 0 {
        return Err(item.fail(
            cx,
            format!("RAM must be a whole number of 4096-byte pages, found {ram} bytes"),
        ));
    }
    let cpus = match opt(t, "cpus") {
        Some(item) => u32_in(
            cx,
            &item,
            1,
            MAX_CPUS as u32,
            "a CPU count, an integer from 1 to 4096",
        )?,
        None => 4,
    };
    let pci_hole = match opt(t, "pci_hole") {
        Some(item) => {
            let hole = size(cx, &item, SizeKind::Size, None)?;
            if hole > MAX_PCI_HOLE || hole % PAGE != 0 {
                return Err(item.fail(
                    cx,
                    format!(
                        "the MMIO hole below 4 GiB must be whole pages and leave DMA's 16M \
                         below it (at most 4080M), found {hole} bytes"
                    ),
                ));
            }
            hole
        }
        None => 0,
    };
    let mut costs = ReclaimCosts::default();
    if let Some(item) = opt(t, "reclaim_costs") {
        let ct = sub_table(cx, &item, "a table [machine.reclaim_costs]")?;
        ct.check_keys(cx, COST_KEYS, "[machine.reclaim_costs]")?;
        for (key, item) in ct.items() {
            const PER_PAGE: &str = "a CPU time per page, such as \"300ns\"";
            const PER_CALL: &str = "a CPU time per call, such as \"500ns\"";
            let (cost, what) = match key {
                "isolate_page" => (&mut costs.isolate_page, PER_PAGE),
                "shrink_page" => (&mut costs.shrink_page, PER_PAGE),
                "rmap_walk" => (&mut costs.rmap_walk, PER_PAGE),
                "pageout" => (&mut costs.pageout, PER_PAGE),
                "deactivate_page" => (&mut costs.deactivate_page, PER_PAGE),
                "shrink_lruvec" => (&mut costs.shrink_lruvec, PER_CALL),
                _ => (&mut costs.shrinker_call, PER_CALL),
            };
            *cost = positive_time(cx, &item, what)?;
        }
    }
    Ok((ram, cpus, pci_hole, costs))
}
