//! `[slab]`: the system's dentries and inodes cached at boot.

use super::check::{opt, Cx, Res, Table};
use super::values::{size, u64_min, SizeKind};
use super::PAGE;
use crate::scenario::SlabParams;

const SLAB_KEYS: &[&str] = &["files", "inode_size"];

pub(super) fn slab(cx: &Cx<'_>, t: &Table<'_>) -> Res<SlabParams> {
    t.check_keys(cx, SLAB_KEYS, "[slab]")?;
    let mut s = SlabParams::default();
    if let Some(item) = opt(t, "files") {
        s.files = u64_min(cx, &item, 0, "a file count, an integer >= 0")?;
    }
    if let Some(item) = opt(t, "inode_size") {
        let b = size(cx, &item, SizeKind::Size, None)?;
        if !(1..=PAGE).contains(&b) {
            return Err(item.fail(
                cx,
                format!("expected an inode size from 1 to 4096 bytes, found {b} bytes"),
            ));
        }
        s.inode_size = b;
    }
    Ok(s)
}
