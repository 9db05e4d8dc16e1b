//! `[transparent_hugepage]`: the knobs of `/sys/kernel/mm/transparent_hugepage/`.

use super::check::{opt, Cx, Res, Table};
use super::values::choice;
use crate::mm::huge_memory::ThpEnabled;

const THP_KEYS: &[&str] = &["enabled"];

pub(super) fn thp(cx: &Cx<'_>, t: &Table<'_>) -> Res<ThpEnabled> {
    t.check_keys(cx, THP_KEYS, "[transparent_hugepage]")?;
    Ok(match opt(t, "enabled") {
        Some(item) => match choice(cx, &item, &["always", "madvise", "never"])? {
            "always" => ThpEnabled::Always,
            "madvise" => ThpEnabled::Madvise,
            _ => ThpEnabled::Never,
        },
        None => ThpEnabled::default(),
    })
}
