//! Page migration (`mm/migrate.c`, 3.3-3.9; `kernel-compaction.md` §6.7): move an LRU page's
//! contents and identity to another frame, for compaction.
//!
//! mmsim moves a page in one step: there are no migration PTEs in between and no page
//! references to freeze, so a page that passes the checks always moves. The checks are the
//! kernel's, in its order; what they cannot see in mmsim (a reference held by someone else,
//! an anon_vma being torn down) does not exist here: every holder of a page in mmsim locks it,
//! isolates it or has it under writeback.

use super::fs_ops::page_aops;
use super::page::{
    Pfn, PG_ANON, PG_BH_DIRTY, PG_BH_LOCKED, PG_DIRTY, PG_ISOLATED, PG_LOCKED, PG_PRIVATE,
    PG_SWAPBACKED, PG_SWAPCACHE, PG_WRITEBACK,
};
use super::vmstat::ZoneStat;
use super::{page_alloc, rmap, swap, Kernel};

/// `enum migrate_mode` (3.3+).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MigrateMode {
    /// Never blocks: async compaction.
    Async,
    /// May block on some locks but never on writeback: sync compaction (3.3+).
    SyncLight,
    /// May wait for writeback and write dirty pages out (memory hot-remove; not compaction).
    Sync,
}

/// Why one page did not move (`unmap_and_move`'s error codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MigrateError {
    /// `-EAGAIN`: busy for now (locked, buffers locked, references in flux); retried on the
    /// next pass.
    Again,
    /// `-EBUSY`: cannot move in this mode (under writeback, dirty without `migratepage`,
    /// private data the filesystem cannot move): a permanent failure.
    Busy,
    /// `-ENOMEM`: no target page (compaction's free scanner ran dry).
    NoMem,
}

/// `migrate_pages` passes: 10, the last 7 with `force` (which only lets a caller that may
/// sleep wait for the page lock; compaction runs with PF_MEMALLOC and never does).
pub const MIGRATE_PASSES: usize = 10;

/// What [`migrate_pages`] did with a list.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MigrateResult {
    /// Pages moved.
    pub succeeded: u32,
    /// Permanent failures: back on the LRU.
    pub failed: u32,
    /// Still `-EAGAIN` after the last pass, or not reached after `-ENOMEM`: left on the list
    /// for the caller to put back.
    pub remaining: u32,
    /// The target allocator ran dry.
    pub nomem: bool,
}

/// `__unmap_and_move`'s checks and `move_to_new_page`'s `->migratepage` choice, for one
/// isolated page: Ok if it may move now.
pub fn migrate_check(k: &Kernel, pfn: Pfn, mode: MigrateMode) -> Result<(), MigrateError> {
    let f = k.pages.flags[pfn as usize];
    // trylock_page failed: compaction never sleeps on a page lock (PF_MEMALLOC).
    if f & PG_LOCKED != 0 {
        return Err(MigrateError::Again);
    }
    if f & PG_WRITEBACK != 0 {
        // Only MIGRATE_SYNC waits for writeback; mmsim's callers cannot wait here.
        return Err(if mode == MigrateMode::Sync {
            MigrateError::Again
        } else {
            MigrateError::Busy
        });
    }
    if f & PG_SWAPBACKED != 0 {
        // An anonymous page neither mapped nor in the swap cache is on its way out (its
        // anon_vma is gone): try again later.
        if f & PG_SWAPCACHE == 0 && !k.pages.mapped(pfn) {
            return Err(MigrateError::Again);
        }
        // Anonymous and swap-cache pages: migrate_page, which never refuses.
        return Ok(());
    }
    page_aops(k, pfn).migratepage(k, pfn, mode)
}

/// `buffer_migrate_page`: buffers move with the page; in async mode every buffer must be
/// trylocked. mmsim cannot sleep on a buffer lock here, so a locked buffer is `-EAGAIN` in
/// every mode.
pub fn buffer_migrate_page(k: &Kernel, pfn: Pfn, _mode: MigrateMode) -> Result<(), MigrateError> {
    if k.pages.test(pfn, PG_BH_LOCKED) {
        return Err(MigrateError::Again);
    }
    Ok(())
}

/// `fallback_migrate_page`, for a mapping without `->migratepage`: a dirty page would have to
/// be written first (`MIGRATE_SYNC` only), and private data must be released first
/// (`try_to_release_page`). Where the private data are buffer heads (the block device's
/// `def_blk_aops`), clean and unlocked ones are freed before the move (in
/// [`migrate_pages`]) and a dirty or locked one makes the page `-EAGAIN`; other private
/// data (btrfs's) exist in mmsim only while the page is dirty or under IO, so a clean page
/// that has them is one whose IO just ended: `-EAGAIN`.
pub fn fallback_migrate_page(
    k: &Kernel,
    pfn: Pfn,
    mode: MigrateMode,
    buffers: bool,
) -> Result<(), MigrateError> {
    if k.pages.test(pfn, PG_DIRTY) {
        return Err(if mode == MigrateMode::Sync {
            MigrateError::Again
        } else {
            MigrateError::Busy
        });
    }
    if k.pages.test(pfn, PG_PRIVATE) && (!buffers || k.pages.test(pfn, PG_BH_DIRTY | PG_BH_LOCKED))
    {
        return Err(MigrateError::Again);
    }
    Ok(())
}

/// Whether moving page `pfn` releases its buffers first (`fallback_migrate_page`'s
/// `try_to_release_page`) rather than moving them with it (`buffer_migrate_page`).
fn releases_buffers(k: &Kernel, pfn: Pfn) -> bool {
    if !k.pages.is_file_cache(pfn) || !k.pages.test(pfn, PG_PRIVATE) {
        return false;
    }
    let a_ops = page_aops(k, pfn);
    a_ops.buffer_heads() && !a_ops.has_migratepage()
}

/// Move isolated page `old` to free frame `new` of the same zone: contents, flags, owner,
/// page-cache or swap-cache slot and PTEs (`move_to_new_page`, `migrate_page_copy`,
/// `remove_migration_ptes`). `new` stays isolated, `old` is left with no state for the caller
/// to free.
pub fn move_to_new_page(k: &mut Kernel, old: Pfn, new: Pfn) {
    debug_assert_eq!(k.page_zone(old), k.page_zone(new), "migration across zones");
    debug_assert!(k.pages.test(old, PG_ISOLATED));
    let (o, n) = (old as usize, new as usize);
    let p = &mut k.pages;
    p.flags[n] = p.flags[o];
    p.mapping[n] = p.mapping[o];
    p.index[n] = p.index[o];
    p.private[n] = p.private[o];
    let f = p.flags[o];
    if f & PG_SWAPCACHE != 0 {
        let slot = p.private[o];
        k.swap.replace_cache_page(slot, old, new);
    } else if f & (PG_SWAPBACKED | PG_ANON) == 0 {
        let ino = k.pages.mapping[n] as usize;
        let index = k.pages.index[n] as u64;
        k.inodes[ino].replace_page(index, old, new);
    }
    rmap::remap_migrated_page(k, old, new);
    // mem_cgroup_end_migration: the charge moves with the contents.
    if let Some(pc) = k.memcg.pc.get_mut(o) {
        let c = std::mem::take(pc);
        k.memcg.pc[n] = c;
    }
    let p = &mut k.pages;
    p.flags[o] = 0;
    p.mapping[o] = 0;
    p.index[o] = 0;
    p.private[o] = 0;
}

/// Which isolated-pages counter a page is in (`NR_ISOLATED_ANON + page_is_file_cache`).
#[inline]
pub fn isolated_stat(k: &Kernel, pfn: Pfn) -> ZoneStat {
    if k.pages.is_file_cache(pfn) {
        ZoneStat::nr_isolated_file
    } else {
        ZoneStat::nr_isolated_anon
    }
}

/// `putback_lru_page` of a page a migration caller isolated: back to the head of the list
/// its flags name, out of the isolated count.
pub fn putback_lru_page(k: &mut Kernel, pfn: Pfn) {
    let zi = k.page_zone(pfn);
    let stat = isolated_stat(k, pfn);
    k.zones[zi].mod_stat(stat, -1);
    k.pages.clear(pfn, PG_ISOLATED);
    let lru = k.pages.page_lru(pfn);
    swap::add_page_to_lru_list(k, pfn, lru);
}

/// `migrate_pages`: up to [`MIGRATE_PASSES`] passes over `list`. For each page,
/// `get_new_page` gives a target frame first (`unmap_and_move`); a page that moves goes
/// back to the LRU in its new frame and the old one is freed; a page that cannot move
/// gives its target back to the allocator (`putback_lru_page(newpage)` frees it). Permanent
/// failures go back to the LRU; pages still `-EAGAIN` after the last pass, or not reached
/// when `get_new_page` ran dry, stay in `list` for the caller.
pub fn migrate_pages(
    k: &mut Kernel,
    list: &mut Vec<Pfn>,
    mut get_new_page: impl FnMut(&mut Kernel) -> Option<Pfn>,
    mode: MigrateMode,
) -> MigrateResult {
    let mut r = MigrateResult::default();
    for _pass in 0..MIGRATE_PASSES {
        let mut retry = 0;
        let mut i = 0;
        while i < list.len() {
            let pfn = list[i];
            let Some(new) = get_new_page(k) else {
                r.nomem = true;
                r.remaining = list.len() as u32;
                return r;
            };
            match migrate_check(k, pfn, mode) {
                Ok(()) => {
                    if releases_buffers(k, pfn) {
                        let released = crate::fs::buffer::try_to_release_page(k, pfn);
                        debug_assert!(released, "migrate_check allowed only clean buffers");
                    }
                    move_to_new_page(k, pfn, new);
                    list.remove(i);
                    putback_lru_page(k, new);
                    page_alloc::free_page(k, pfn);
                    r.succeeded += 1;
                }
                Err(e) => {
                    page_alloc::free_page(k, new);
                    if e == MigrateError::Again {
                        retry += 1;
                        i += 1;
                    } else {
                        list.remove(i);
                        putback_lru_page(k, pfn);
                        r.failed += 1;
                    }
                }
            }
        }
        if retry == 0 {
            break;
        }
    }
    r.remaining = list.len() as u32;
    r
}
