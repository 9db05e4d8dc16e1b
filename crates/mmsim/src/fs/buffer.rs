//! Buffer heads (`fs/buffer.c`, 3.x) kept as page flags.
//!
//! Pages of a buffer-head filesystem (ext3, raw block devices) get buffers at their first
//! `write()` (`__block_write_begin` → `create_empty_buffers`). mmsim keeps three aggregates
//! of a page's buffers in its flags: `PG_PRIVATE` (buffers attached, `page_has_buffers`),
//! `PG_BH_DIRTY` (some buffer `BH_Dirty`) and `PG_BH_LOCKED` (some buffer `BH_Lock`, i.e.
//! under IO). With 4 KiB blocks a page has one buffer, so the aggregates are exact.
//!
//! Who changes them:
//! - `write()` and `set_page_dirty` dirty the buffers with the page (`mark_buffer_dirty`,
//!   `__set_page_dirty_buffers`);
//! - `writepage` ([`block_write_full_page`]) moves dirty buffers to locked under
//!   PG_writeback, or finds them clean and starts no IO;
//! - ext3's journal (`fs::jbd`) writes dirty data buffers itself with `submit_bh`: the
//!   buffer is cleaned and locked, the page stays PG_dirty and never gets PG_writeback;
//! - IO completion unlocks them ([`end_buffer_async_write`], [`end_buffer_write_sync`]);
//! - reclaim ([`try_to_release_page`]) and truncation ([`block_invalidatepage`]) drop them.

use crate::mm::page::{Pfn, PG_BH_DIRTY, PG_BH_LOCKED, PG_PRIVATE, PG_WRITEBACK};
use crate::mm::{page_io, page_writeback, Kernel, World};

/// Bio tag bit of buffer IO submitted with `submit_bh` outside page writeback (the
/// journal's data writes). The low 32 bits are the page frame.
pub const BH_SYNC_WRITE: u64 = 1 << 32;

/// `page_has_buffers`: PagePrivate on a page of a buffer-head filesystem. Other filesystems
/// may use PG_PRIVATE for their own private data.
#[inline]
pub fn page_has_buffers(k: &Kernel, pfn: Pfn) -> bool {
    k.pages.test(pfn, PG_PRIVATE)
        && k.bdis[page_writeback::page_bdi(k, pfn)]
            .fs
            .uses_buffer_heads()
}

/// `create_empty_buffers`: attach clean, unlocked buffers to a page that has none.
#[inline]
pub fn create_empty_buffers(k: &mut Kernel, pfn: Pfn) {
    k.pages.set(pfn, PG_PRIVATE);
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
        k.pages.set(pfn, PG_PRIVATE | PG_BH_DIRTY);
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

/// A write bio completed for page writeback (`end_buffer_async_write`): unlock the page's
/// buffers, if it has any (swap pages have none), and end its writeback.
pub fn end_buffer_async_write(k: &mut Kernel, pfn: Pfn) {
    k.pages.clear(pfn, PG_BH_LOCKED);
    page_io::end_page_writeback(k, pfn);
}

/// A `submit_bh` write completed (`end_buffer_write_sync`): unlock the buffer and wake its
/// waiters. The page flags are not touched.
pub fn end_buffer_write_sync(k: &mut Kernel, pfn: Pfn) {
    debug_assert!(k.pages.test(pfn, PG_BH_LOCKED));
    k.pages.clear(pfn, PG_BH_LOCKED);
    let q = k.wq.page(pfn);
    k.sched.wake_all(q);
}

/// `try_to_release_page` → `try_to_free_buffers` (ext3's `journal_try_to_free_buffers`,
/// `blkdev_releasepage`): buffers that are dirty or locked cannot be dropped. Returns
/// whether the page is now free of buffers.
pub fn try_to_release_page(k: &mut Kernel, pfn: Pfn) -> bool {
    if k.pages.test(pfn, PG_BH_DIRTY | PG_BH_LOCKED) {
        return false;
    }
    k.pages.clear(pfn, PG_PRIVATE);
    true
}

/// `block_invalidatepage` on truncation: the caller has waited for the buffers to unlock;
/// dirty buffers are discarded unwritten.
pub fn block_invalidatepage(k: &mut Kernel, pfn: Pfn) {
    debug_assert!(!k.pages.test(pfn, PG_BH_LOCKED));
    k.pages.clear(pfn, PG_PRIVATE | PG_BH_DIRTY);
}

/// `wait_on_buffer`: sleep until the page's buffers are unlocked.
pub async fn wait_on_buffer(w: &World, pfn: Pfn) {
    crate::mm::filemap::wait_on_page_bit(w, pfn, PG_BH_LOCKED).await;
}

/// Machines and files for the unit tests of buffers, the journal and reclaim's hook.
#[cfg(test)]
pub(crate) mod testing {
    use crate::mm::page::{Pfn, PG_UPTODATE};
    use crate::mm::page_alloc::{alloc_flags, get_page_from_freelist};
    use crate::mm::page_writeback::DirtyTask;
    use crate::mm::{filemap, Gfp, Kernel, World};
    use crate::fs::Filesystem;
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
        k.inodes.push(crate::fs::inode::Inode::new("test-file", 0));
        k.inodes.len() - 1
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
    use crate::mm::invariants;
    use crate::mm::page::PG_DIRTY;
    use crate::mm::page_writeback::clear_page_dirty_for_io;
    use crate::mm::vmstat::ZoneStat;
    use crate::fs::Filesystem;

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
        let j = k.bdis[0].journal.as_ref().expect("ext3 has a journal");
        assert_eq!((j.running_since, j.running_data_buffers()), (Some(0), 1));
        invariants::check(&k).expect("invariants");

        let w = machine("3.9", Filesystem::Ext4);
        let mut k = w.borrow_mut();
        let ino = new_file(&mut k);
        let pfn = written_page(&mut k, ino, 0);
        assert!(k.pages.test(pfn, PG_DIRTY));
        assert!(!k.pages.test(pfn, PG_PRIVATE | PG_BH_DIRTY));
        assert!(k.bdis[0].journal.is_none());
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
        end_buffer_async_write(&mut k, dirty);
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
        end_buffer_write_sync(&mut k, pfn);
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
            .find(|l| !l.is_empty())
            .expect("free memory")
            .head;
        k.pages.set(free, PG_BH_LOCKED);
        let e = invariants::check(&k).unwrap_err();
        assert!(e.contains("no page freed with buffers"), "{e}");
    }
}
