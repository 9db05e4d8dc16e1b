//! `[kernel]`: the kernel preset and `[kernel.switches]`, the behaviour switches it
//! overrides.

use super::check::{opt, sub_table, Cx, Res, Table};
use super::values::{bool_value, string};
use crate::scenario::KernelSelection;

const KERNEL_KEYS: &[&str] = &["preset", "switches"];

pub(super) fn kernel(cx: &Cx<'_>, t: &Table<'_>) -> Res<KernelSelection> {
    t.check_keys(cx, KERNEL_KEYS, "[kernel]")?;
    let mut sel = KernelSelection::default();
    if let Some(item) = opt(t, "preset") {
        sel.preset = Some(string(cx, &item, "a preset name as a string, e.g. \"3.9\"")?.to_owned());
    }
    if let Some(item) = opt(t, "switches") {
        let sw = sub_table(cx, &item, "a table [kernel.switches] of name = true|false")?;
        for (name, item) in sw.items() {
            sel.switches.push((name.to_owned(), bool_value(cx, &item)?));
        }
    }
    Ok(sel)
}
