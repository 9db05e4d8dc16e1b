//! `[slab]`: the system's dentries and inodes cached at boot, and the page cache of those
//! files that boot left.

use super::check::{opt, Cx, Res, Table};
use super::values::{size, u64_min, SizeKind};
use super::PAGE;
use crate::scenario::SlabParams;

const SLAB_KEYS: &[&str] = &["files", "inode_size", "page_cache", "page_cache_active"];

/// `[slab]` of a machine of `ram` bytes; `disk` names the first `[[device]]` with a
/// filesystem, where the system's files live, if there is one.
pub(super) fn slab(cx: &Cx<'_>, t: &Table<'_>, ram: u64, disk: Option<&str>) -> Res<SlabParams> {
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
    if let Some(item) = opt(t, "page_cache") {
        let b = size(cx, &item, SizeKind::Size, Some(ram))? / PAGE * PAGE;
        if b > 0 && disk.is_none() {
            return Err(item.fail(
                cx,
                "the system's page cache needs a disk its files were read from: add a \
                 [[device]] with a filesystem (the first holds the root filesystem's files)",
            ));
        }
        // A file per BOOT_FILE_PAGES pages, each with its dentry and inode.
        let files = b.div_ceil(PAGE * crate::mm::super_block::BOOT_FILE_PAGES);
        if files > s.files {
            return Err(item.fail(
                cx,
                format!(
                    "{b} bytes of page cache take {files} files of {} KiB, more than the \
                     {} cached files of `files`",
                    crate::mm::super_block::BOOT_FILE_PAGES * PAGE / 1024,
                    s.files
                ),
            ));
        }
        if b > ram / 2 {
            return Err(item.fail(
                cx,
                format!(
                    "expected at most half of RAM ({} bytes) of page cache at boot, found {b} bytes",
                    ram / 2
                ),
            ));
        }
        s.page_cache = b;
    }
    if let Some(item) = opt(t, "page_cache_active") {
        let b = size(cx, &item, SizeKind::Size, None)? / PAGE * PAGE;
        if b > s.page_cache {
            return Err(item.fail(
                cx,
                format!(
                    "expected at most `page_cache` ({} bytes) on the active list, found {b} bytes",
                    s.page_cache
                ),
            ));
        }
        s.page_cache_active = b;
    }
    Ok(s)
}
