//! `[slab]`: the reclaimable dentry and inode objects present at boot.

use super::check::{opt, Cx, Res, Table};
use super::values::{size, u64_min, SizeKind};
use super::PAGE;
use crate::scenario::SlabParams;

const SLAB_KEYS: &[&str] = &["objects", "object_size"];

pub(super) fn slab(cx: &Cx<'_>, t: &Table<'_>) -> Res<SlabParams> {
    t.check_keys(cx, SLAB_KEYS, "[slab]")?;
    let mut s = SlabParams::default();
    if let Some(item) = opt(t, "objects") {
        s.objects = u64_min(cx, &item, 0, "an object count, an integer >= 0")?;
    }
    if let Some(item) = opt(t, "object_size") {
        let b = size(cx, &item, SizeKind::Size, None)?;
        if !(1..=PAGE).contains(&b) {
            return Err(item.fail(
                cx,
                format!("expected an object size from 1 to 4096 bytes, found {b} bytes"),
            ));
        }
        s.object_size = b;
    }
    Ok(s)
}
