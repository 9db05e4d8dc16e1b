//! Buffer heads (`fs/buffer.c`, 3.x) kept as page flags.
//!
//! Pages of a buffer-head filesystem (ext2, ext3, raw block devices) get buffers at their
//! first `write()` (`__block_write_begin` → `create_empty_buffers`). mmsim keeps three
//! aggregates of a page's buffers in its flags: `PG_PRIVATE` (buffers attached,
//! `page_has_buffers`), `PG_BH_DIRTY` (some buffer `BH_Dirty`) and `PG_BH_LOCKED` (some
//! buffer `BH_Lock`, i.e. under IO). With 4 KiB blocks a page has one buffer, so the
//! aggregates are exact. The buffer head itself is an object of the `buffer_head` slab
//! cache (`mm::slab`), allocated with the buffers and freed with them; `page->private`
//! holds the index of its slab page. No shrinker scans that cache: buffer heads go when
//! reclaim or truncation frees their page's buffers (`try_to_free_buffers`).
//!
//! Who changes them:
//! - `write()` and `set_page_dirty` dirty the buffers with the page (`mark_buffer_dirty`,
//!   `__set_page_dirty_buffers`);
//! - `writepage` ([`block_write_full_page`]) moves dirty buffers to locked under
//!   PG_writeback, or finds them clean and starts no IO;
//! - ext3's journal (`fs::jbd`) writes dirty data buffers itself with `submit_bh`: the
//!   buffer is cleaned and locked, the page stays PG_dirty and never gets PG_writeback;
//! - IO completion unlocks them (`mm::page_io::end_buffer_async_write`,
//!   `end_buffer_write_sync`: the device task completes bios);
//! - reclaim ([`try_to_release_page`]) and truncation ([`block_invalidatepage`]) drop them.
//!
//! The filesystems with buffer heads (`fs::block_fs`) call these for their operations.

use super::fs_writeback::__set_page_dirty_nobuffers;
use crate::mm::page::{Pfn, PG_BH_DIRTY, PG_BH_LOCKED, PG_DIRTY, PG_PRIVATE, PG_WRITEBACK};
use crate::mm::page_writeback::DirtyTask;
use crate::mm::{page_io, page_writeback, slab, Kernel, World};

/// `page_has_buffers`: PagePrivate, on a page of a buffer-head filesystem (others may use
/// PG_PRIVATE for their own private data).
#[inline]
pub fn page_has_buffers(k: &Kernel, pfn: Pfn) -> bool {
    k.pages.test(pfn, PG_PRIVATE)
}

/// `__set_page_dirty_buffers`: dirtying a page with buffers dirties them all, then the page
/// is dirtied and accounted as any other. Returns whether it was clean.
pub fn __set_page_dirty_buffers(k: &mut Kernel, pfn: Pfn, task: &mut DirtyTask) -> bool {
    if page_has_buffers(k, pfn) {
        k.pages.set(pfn, PG_BH_DIRTY);
    }
    __set_page_dirty_nobuffers(k, pfn, task)
}

/// `create_empty_buffers`: attach clean, unlocked buffers to a page that has none, their
/// buffer head allocated (`alloc_page_buffers`; `write()` has reserved it beforehand).
pub fn create_empty_buffers(k: &mut Kernel, pfn: Pfn) {
    debug_assert!(!k.pages.test(pfn, PG_PRIVATE));
    k.pages.private[pfn as usize] = slab::alloc_buffer_head_now(k);
    k.pages.set(pfn, PG_PRIVATE);
}

/// `free_buffer_head` of the page's buffers, which the caller detaches.
fn free_buffers(k: &mut Kernel, pfn: Pfn) {
    let s = std::mem::take(&mut k.pages.private[pfn as usize]);
    slab::kmem_cache_free(k, slab::CacheId::BufferHead, s);
}

/// `buffer_check_dirty_writeback` (LD patch 7): the page is dirty if a buffer is dirty,
/// and under writeback if PG_writeback is set or a buffer is locked. A page without
/// buffers reports neither.
pub fn buffer_check_dirty_writeback(k: &Kernel, pfn: Pfn) -> (bool, bool) {
    let f = k.pages.flags[pfn as usize];
    if f & PG_PRIVATE == 0 {
        return (false, false);
    }
    (f & PG_BH_DIRTY != 0, f & (PG_WRITEBACK | PG_BH_LOCKED) != 0)
}

/// What [`block_write_full_page`] did with a page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockWrite {
    /// The buffers were dirty: they are locked, the page is under writeback, and the caller
    /// submits the bio.
    Io,
    /// The buffers were clean (written earlier with `submit_bh`): writeback started and
    /// ended at once with no IO (`nr_underway == 0`). The page counts as written.
    Clean,
    /// A buffer was locked (`trylock_buffer` failed under WB_SYNC_NONE): the page was
    /// redirtied (`pages_skipped`), and went through an empty writeback as above.
    Redirtied,
}

/// Whether `writepage` of this page would start IO: it has no buffers yet (they are
/// created dirty) or they are dirty and unlocked.
#[inline]
pub fn block_write_needs_io(k: &Kernel, pfn: Pfn) -> bool {
    let f = k.pages.flags[pfn as usize];
    f & PG_PRIVATE == 0 || f & (PG_BH_DIRTY | PG_BH_LOCKED) == PG_BH_DIRTY
}

/// `__block_write_full_page` with WB_SYNC_NONE, for a page whose dirty bit the caller has
/// just cleared (`clear_page_dirty_for_io`) and which is not under writeback. A WB_SYNC_ALL
/// caller waits for locked buffers first ([`wait_on_buffer`]).
pub fn block_write_full_page(k: &mut Kernel, pfn: Pfn) -> BlockWrite {
    debug_assert!(!k.pages.test(pfn, PG_WRITEBACK));
    if !k.pages.test(pfn, PG_PRIVATE) {
        // A page dirtied without buffers (not through write()) gets them dirty.
        create_empty_buffers(k, pfn);
        k.pages.set(pfn, PG_BH_DIRTY);
    }
    let f = k.pages.flags[pfn as usize];
    let r = if f & PG_BH_LOCKED != 0 {
        page_writeback::redirty_page_for_writepage(k, pfn);
        BlockWrite::Redirtied
    } else if f & PG_BH_DIRTY != 0 {
        k.pages.clear(pfn, PG_BH_DIRTY);
        k.pages.set(pfn, PG_BH_LOCKED);
        BlockWrite::Io
    } else {
        BlockWrite::Clean
    };
    page_writeback::test_set_page_writeback(k, pfn);
    if r != BlockWrite::Io {
        page_io::end_page_writeback(k, pfn);
    }
    r
}

/// `try_to_release_page` → `try_to_free_buffers` (ext3's `journal_try_to_free_buffers`,
/// `blkdev_releasepage`): buffers that are dirty or locked cannot be dropped. Returns
/// whether the page is now free of buffers.
pub fn try_to_release_page(k: &mut Kernel, pfn: Pfn) -> bool {
    if k.pages.test(pfn, PG_BH_DIRTY | PG_BH_LOCKED) {
        return false;
    }
    if k.pages.test(pfn, PG_PRIVATE) {
        free_buffers(k, pfn);
        k.pages.clear(pfn, PG_PRIVATE);
    }
    true
}

/// `block_invalidatepage` on truncation: the caller has waited for the buffers to unlock;
/// dirty buffers are discarded unwritten.
pub fn block_invalidatepage(k: &mut Kernel, pfn: Pfn) {
    debug_assert!(!k.pages.test(pfn, PG_BH_LOCKED));
    if k.pages.test(pfn, PG_PRIVATE) {
        free_buffers(k, pfn);
    }
    k.pages.clear(pfn, PG_PRIVATE | PG_BH_DIRTY);
}

/// The invariants' rules for a page with buffers (PG_private set): dirty buffers only on a
/// dirty page, and a page under writeback has its buffers locked. The rule broken, if any.
pub fn check_buffers(k: &Kernel, pfn: Pfn) -> Result<(), String> {
    let f = k.pages.flags[pfn as usize];
    if f & PG_BH_DIRTY != 0 && f & PG_DIRTY == 0 {
        return Err("has dirty buffers but is clean".into());
    }
    if f & PG_WRITEBACK != 0 && f & PG_BH_LOCKED == 0 {
        return Err("is under writeback with unlocked buffers".into());
    }
    Ok(())
}

/// `wait_on_buffer`: sleep until the page's buffers are unlocked.
pub async fn wait_on_buffer(w: &World, pfn: Pfn) {
    crate::mm::filemap::wait_on_page_bit(w, pfn, PG_BH_LOCKED).await;
}

/// Machines and files for the unit tests of buffers, the journal and reclaim's hook.
#[cfg(test)]
pub(crate) mod testing {
    use crate::fs::Filesystem;
    use crate::mm::page::{Pfn, PG_UPTODATE};
    use crate::mm::page_alloc::{alloc_flags, get_page_from_freelist};
    use crate::mm::page_writeback::DirtyTask;
    use crate::mm::{filemap, Gfp, Kernel, World};
    use crate::scenario::BlockDevice;

    /// A 128 MiB machine without swap under `preset`, with one 7200 rpm disk `sda` holding
    /// `fs` as device 0. The disk already has all the recent writeback completions, so a few
    /// dirty pages stay below its background threshold and the flusher leaves them alone
    /// for the first seconds.
    pub fn machine(preset: &str, fs: Filesystem) -> World {
        let w = crate::sim::boot_for_test(128, 0, preset);
        let dev = BlockDevice {
            filesystem: fs,
            ..BlockDevice::ext4_hdd("sda")
        };
        crate::sim::add_block_device(&w, &dev).expect("the disk is built");
        for _ in 0..1024 {
            w.borrow_mut().bdi_props.writeout_inc(0, 0);
        }
        w
    }

    /// A new empty file on device 0.
    pub fn new_file(k: &mut Kernel) -> usize {
        crate::mm::inode::new_inode(k, "test-file", 0)
    }

    /// Page `index` of `ino`, freshly allocated and written whole by `write()`.
    pub fn written_page(k: &mut Kernel, ino: usize, index: u64) -> Pfn {
        let pfn = get_page_from_freelist(k, Gfp::HIGHUSER_MOVABLE, 0, alloc_flags::NO_WATERMARKS)
            .expect("a free page");
        k.pages.flags[pfn as usize] = PG_UPTODATE;
        filemap::add_to_page_cache_lru(k, pfn, ino, index);
        filemap::write_end(k, ino, index, pfn, &mut DirtyTask::default());
        pfn
    }
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;
    use crate::engine::SEC;
    use crate::fs::Filesystem;
    use crate::mm::invariants;
    use crate::mm::mmzone::zone_flags::ZONE_TAIL_LRU_DIRTY;
    use crate::mm::page::PG_DIRTY;
    use crate::mm::page::{Lru, PG_REFERENCED, PG_SWAPBACKED};
    use crate::mm::page_writeback::clear_page_dirty_for_io;
    use crate::mm::vmscan::testing::{isolate_all, putback, sc_at, take_page, Z};
    use crate::mm::vmscan::{
        page_check_dirty_writeback, shrink_page_list, PageListStats, DEF_PRIORITY,
    };
    use crate::mm::vmstat::ZoneStat;
    use crate::presets::{self, Switch};
    use crate::sim::run_task;

    /// `write()` gives an ext3 page dirty buffers and files them on the running transaction;
    /// an ext4 page gets no buffers.
    #[test]
    fn write_attaches_buffers_and_dirties_them_with_the_page() {
        let w = machine("3.9", Filesystem::Ext3);
        let mut k = w.borrow_mut();
        let ino = new_file(&mut k);
        let pfn = written_page(&mut k, ino, 0);
        assert!(k.pages.test(pfn, PG_DIRTY | PG_PRIVATE | PG_BH_DIRTY));
        assert!(page_has_buffers(&k, pfn));
        let j = crate::fs::jbd::journal_of(&k, 0).expect("ext3 has a journal");
        assert_eq!((j.running_since, j.running_data_buffers()), (Some(0), 1));
        invariants::check(&k).expect("invariants");

        let w = machine("3.9", Filesystem::Ext4);
        let mut k = w.borrow_mut();
        let ino = new_file(&mut k);
        let pfn = written_page(&mut k, ino, 0);
        assert!(k.pages.test(pfn, PG_DIRTY));
        assert!(!k.pages.test(pfn, PG_PRIVATE | PG_BH_DIRTY));
        assert!(crate::fs::jbd::journal_of(&k, 0).is_none());
    }

    /// `__block_write_full_page` (WB_SYNC_NONE), for a page whose dirty bit writeback has just
    /// cleared: dirty buffers → IO under PG_writeback with the buffers locked; clean buffers
    /// → an empty writeback, counted as written; a locked buffer → redirtied, with the same
    /// empty writeback.
    #[test]
    fn writepage_of_a_buffer_page_answers_by_its_buffers() {
        let w = machine("3.9", Filesystem::Ext3);
        let mut k = w.borrow_mut();
        let ino = new_file(&mut k);
        let [dirty, clean, locked] = [0, 1, 2].map(|i| written_page(&mut k, ino, i));
        k.pages.clear(clean, PG_BH_DIRTY);
        k.pages.clear(locked, PG_BH_DIRTY);
        k.pages.set(locked, PG_BH_LOCKED);
        let stat = |k: &Kernel, s| k.global_stat(s);
        assert_eq!(stat(&k, ZoneStat::nr_dirty), 3);
        assert!(block_write_needs_io(&k, dirty));
        assert!(!block_write_needs_io(&k, clean) && !block_write_needs_io(&k, locked));

        assert!(clear_page_dirty_for_io(&mut k, dirty));
        assert_eq!(block_write_full_page(&mut k, dirty), BlockWrite::Io);
        let f = k.pages.flags[dirty as usize];
        assert_eq!(
            f & (PG_DIRTY | PG_WRITEBACK | PG_BH_DIRTY | PG_BH_LOCKED),
            PG_WRITEBACK | PG_BH_LOCKED
        );
        assert_eq!(stat(&k, ZoneStat::nr_writeback), 1);

        assert!(clear_page_dirty_for_io(&mut k, clean));
        assert_eq!(block_write_full_page(&mut k, clean), BlockWrite::Clean);
        assert!(!k.pages.test(clean, PG_DIRTY | PG_WRITEBACK | PG_BH_LOCKED));
        assert_eq!(stat(&k, ZoneStat::nr_written), 1, "counted as written");

        assert!(clear_page_dirty_for_io(&mut k, locked));
        assert_eq!(block_write_full_page(&mut k, locked), BlockWrite::Redirtied);
        assert!(k.pages.test(locked, PG_DIRTY) && !k.pages.test(locked, PG_WRITEBACK));
        assert_eq!(stat(&k, ZoneStat::nr_written), 2);
        assert_eq!(stat(&k, ZoneStat::nr_dirty), 1, "only the redirtied page");
        assert_eq!(k.bdis[0].reclaimable, 1);
        assert_eq!(k.bdis[0].queue.in_flight() + k.bdis[0].queue.queued(), 0);
        invariants::check(&k).expect("invariants");

        // The IO of the dirty page completes: buffers unlock with the page's writeback.
        page_io::end_buffer_async_write(&mut k, dirty);
        assert!(!k.pages.test(dirty, PG_WRITEBACK | PG_BH_LOCKED));
        assert_eq!(stat(&k, ZoneStat::nr_writeback), 0);
    }

    /// `try_to_free_buffers`: dirty or locked buffers stay; clean ones are dropped.
    #[test]
    fn buffers_are_released_only_when_clean_and_unlocked() {
        let w = machine("3.9", Filesystem::Ext3);
        let mut k = w.borrow_mut();
        let ino = new_file(&mut k);
        let pfn = written_page(&mut k, ino, 0);
        assert!(!try_to_release_page(&mut k, pfn), "dirty buffers");
        k.pages.clear(pfn, PG_BH_DIRTY);
        k.pages.set(pfn, PG_BH_LOCKED);
        assert!(!try_to_release_page(&mut k, pfn), "locked buffers");
        page_io::end_buffer_write_sync(&mut k, pfn);
        assert!(try_to_release_page(&mut k, pfn));
        assert!(!k.pages.test(pfn, PG_PRIVATE));
    }

    /// Invariant 6 names each broken buffer rule.
    #[test]
    fn the_invariant_checker_catches_broken_buffer_state() {
        let cases: [(Filesystem, u32, u32, &str); 4] = [
            (
                Filesystem::Ext3,
                PG_PRIVATE,
                PG_BH_LOCKED,
                "buffer state without buffers",
            ),
            (Filesystem::Ext4, 0, PG_PRIVATE, "private data on Ext4"),
            (Filesystem::Ext3, PG_DIRTY, 0, "dirty buffers but is clean"),
            (
                Filesystem::Ext3,
                PG_BH_DIRTY,
                PG_WRITEBACK,
                "writeback with unlocked buffers",
            ),
        ];
        for (fs, clear, set, message) in cases {
            let w = machine("3.9", fs);
            let mut k = w.borrow_mut();
            let ino = new_file(&mut k);
            let pfn = written_page(&mut k, ino, 0);
            invariants::check(&k).expect("consistent before");
            k.pages.clear(pfn, clear);
            k.pages.set(pfn, set);
            let e = invariants::check(&k).unwrap_err();
            assert!(
                e.contains(message) && e.contains(&format!("pfn {pfn} ")),
                "{fs:?}: {e}"
            );
        }
        // A free page with buffers.
        let w = machine("3.9", Filesystem::Ext3);
        let mut k = w.borrow_mut();
        let free = k.zones[1]
            .free_area
            .iter()
            .flat_map(|a| a.free_list.iter())
            .find(|l| !l.is_empty())
            .expect("free memory")
            .head;
        k.pages.set(free, PG_BH_LOCKED);
        let e = invariants::check(&k).unwrap_err();
        assert!(e.contains("no page freed with buffers"), "{e}");
    }

    // ---------------------------------------------------------------------------------------
    // Buffer heads in reclaim (LD patch 7, §4.2; `fs/buffer.c`)

    /// `page_check_dirty_writeback` with the buffer-head hook: for a page with buffers, dirty =
    /// a buffer is dirty and writeback = PG_writeback or a buffer locked, but only with the
    /// switch on; otherwise, and for pages without buffers, the page flags; anonymous pages
    /// never count.
    #[test]
    fn page_check_dirty_writeback_consults_buffers_only_with_the_hook() {
        let w = machine("lessdisrupt-v7r10", Filesystem::Ext3);
        let mut k = w.borrow_mut();
        let ino = new_file(&mut k);
        let pfn = written_page(&mut k, ino, 0);
        let saved = k.pages.flags[pfn as usize];
        let bits = [PG_DIRTY, PG_WRITEBACK, PG_BH_DIRTY, PG_BH_LOCKED];
        for hook in [false, true] {
            k.sw.set(Switch::BufferDirtyWritebackHook, hook);
            for combo in 0..16u32 {
                let state: u32 = (0..4)
                    .filter(|i| combo & (1 << i) != 0)
                    .map(|i| bits[i])
                    .sum();
                for buffers in [false, true] {
                    let base = saved
                        & !(PG_DIRTY | PG_WRITEBACK | PG_BH_DIRTY | PG_BH_LOCKED | PG_PRIVATE);
                    k.pages.flags[pfn as usize] =
                        base | state | if buffers { PG_PRIVATE } else { 0 };
                    let has = |f| state & f != 0;
                    let expected = if hook && buffers {
                        (has(PG_BH_DIRTY), has(PG_WRITEBACK) || has(PG_BH_LOCKED))
                    } else {
                        (has(PG_DIRTY), has(PG_WRITEBACK))
                    };
                    assert_eq!(
                        page_check_dirty_writeback(&k, pfn),
                        expected,
                        "hook {hook}, buffers {buffers}, state {state:#x}"
                    );
                }
            }
        }
        k.pages.flags[pfn as usize] = saved;
        // An anonymous page never counts, whatever its flags.
        let anon = take_page(&mut k);
        k.pages.flags[anon as usize] = PG_SWAPBACKED | PG_DIRTY | PG_WRITEBACK;
        assert_eq!(page_check_dirty_writeback(&k, anon), (false, false));
        k.pages.flags[anon as usize] = 0;
        crate::mm::page_alloc::free_page(&mut k, anon);
    }

    /// kswapd writing from an LRU tail flagged ZONE_TAIL_LRU_DIRTY, on ext3: a PG_dirty page
    /// whose buffers the journal has written is "written" without IO and freed at once; one
    /// whose buffers are under the journal's IO is redirtied and kept; a clean page with locked
    /// buffers cannot release them and is activated. Only the stall accounting depends on the
    /// hook: with it, the first page is clean and the other two under writeback; without it,
    /// the first two are unqueued dirty and the third clean.
    #[test]
    fn kswapd_frees_ext3_pages_with_clean_buffers_without_io() {
        for hook in [true, false] {
            let sw = [("buffer_is_dirty_writeback".to_string(), hook)];
            let preset = presets::resolve("lessdisrupt-v7r10", &sw).unwrap();
            let w = machine("lessdisrupt-v7r10", Filesystem::Ext3);
            w.borrow_mut().sw = preset.switches;
            let (pages, mut list) = {
                let mut k = w.borrow_mut();
                let ino = new_file(&mut k);
                let pages: Vec<Pfn> = (0..3).map(|i| written_page(&mut k, ino, i)).collect();
                let [written, in_io, clean_locked] = [pages[0], pages[1], pages[2]];
                for &p in &pages {
                    k.pages.clear(p, PG_REFERENCED | PG_BH_DIRTY);
                }
                k.pages.set(in_io, PG_BH_LOCKED);
                assert!(crate::mm::page_writeback::clear_page_dirty_for_io(
                    &mut k,
                    clean_locked
                ));
                k.pages.set(clean_locked, PG_BH_LOCKED);
                assert!(k.pages.test(written, PG_DIRTY) && k.page_zone(written) == Z);
                k.zones[Z].set_flag(ZONE_TAIL_LRU_DIRTY);
                let list = isolate_all(&mut k, &pages);
                k.zones[Z].mod_stat(ZoneStat::nr_isolated_file, 3);
                (pages, list)
            };
            let w2 = w.clone();
            run_task(&w, SEC, async move {
                let mut sc = sc_at(DEF_PRIORITY, true);
                let mut st = PageListStats::default();
                let freed = shrink_page_list(&w2, Z, &mut sc, &mut list, &mut st).await;
                assert_eq!(freed, 1, "hook {hook}");
                let expected = if hook {
                    // Clean buffers: not dirty. Locked buffers: under writeback (both).
                    PageListStats {
                        nr_dirty: 2,
                        ..Default::default()
                    }
                } else {
                    PageListStats {
                        nr_dirty: 2,
                        nr_unqueued_dirty: 2,
                        ..Default::default()
                    }
                };
                assert_eq!(st, expected, "hook {hook}");
                let mut k = w2.borrow_mut();
                putback(&mut k, Z, &list);
                k.zones[Z].mod_stat(ZoneStat::nr_isolated_file, -(list.len() as i64));
            });
            let k = w.borrow();
            let [written, in_io, clean_locked] = [pages[0], pages[1], pages[2]];
            assert!(k.pages.is_free(written));
            assert!(
                k.pages.test(in_io, PG_DIRTY | PG_BH_LOCKED) && !k.pages.test(in_io, PG_WRITEBACK)
            );
            assert_eq!(k.pages.lru(in_io), Lru::InactiveFile);
            assert_eq!(k.pages.lru(clean_locked), Lru::ActiveFile);
            assert!(k.pages.test(clean_locked, PG_PRIVATE | PG_BH_LOCKED));
            assert_eq!(
                k.global_stat(ZoneStat::nr_vmscan_write),
                2,
                "both dirty pages"
            );
            assert_eq!(
                k.global_stat(ZoneStat::nr_written),
                2,
                "two empty writebacks"
            );
            let q = &k.bdis[0].queue;
            assert_eq!(
                (q.in_flight() + q.queued(), q.stats().sectors_written),
                (0, 0),
                "no IO"
            );
            invariants::check(&k).expect("invariants after reclaim");
        }
    }
}
