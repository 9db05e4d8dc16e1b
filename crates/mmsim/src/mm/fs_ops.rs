//! The boundary between the memory manager and the filesystems: the kernel's `struct
//! address_space_operations` (`include/linux/fs.h`, 3.x).
//!
//! `mm` defines the operations and calls them; it names no filesystem. `fs` implements them,
//! one table per filesystem (`fs::Filesystem::aops`), chosen when a device is mounted and
//! kept by its backing device and each of its inodes (`mapping->a_ops`). The swap cache has
//! its own table, `swap_aops` (`mm::page_io`), and a file on no filesystem (a unit test's
//! stand-in) has [`EMPTY_AOPS`]. Each call is one dispatch through a `&'static dyn` table.
//!
//! Besides the kernel's address-space operations the table carries the few other
//! per-filesystem entry points of writeback (`->fsync` of `file_operations`, `->write_inode`
//! of `super_operations`: a mount has one filesystem, so one table serves) and two of
//! mmsim's own: [`AddressSpaceOps::writepage_declines`], which tells reclaim that a
//! `writepage` would only redirty a page, so that `pageout` can leave it as the pair would,
//! and the checks of a filesystem's private page state that the page-state invariants run.
//!
//! A method with a default body is one the kernel may leave NULL; the default does what the
//! kernel does then.

use super::filemap::filemap_write_and_wait_range;
use super::migrate::{MigrateError, MigrateMode};
use super::mmzone::MAX_NR_ZONES;
use super::page::{Pfn, PG_DIRTY, PG_SWAPCACHE};
use super::page_writeback::DirtyTask;
use super::{page_io, Gfp, Kernel, World};
use crate::block::Bio;
use crate::engine::WaitQueueId;
use std::any::Any;
use std::fmt;
use std::future::Future;
use std::ops::Range;
use std::pin::Pin;

/// An operation that may sleep: a task's future, boxed so that the table can be a trait
/// object.
pub type FsFuture<'a> = Pin<Box<dyn Future<Output = ()> + 'a>>;

/// A filesystem operation that may sleep and returns a count.
pub type FsCountFuture<'a> = Pin<Box<dyn Future<Output = u64> + 'a>>;

/// A filesystem's state across the pages of one `write_cache_pages` or readahead call (the
/// `data` the kernel passes to `write_cache_pages`' callback, NFS's
/// `nfs_pageio_descriptor`): opaque to mm, `None` for a filesystem that needs none.
pub type PageioData = Option<Box<dyn Any>>;

/// `struct writeback_control`: who writes a page, and how.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WritebackControl {
    /// `WB_SYNC_ALL` (fsync, sync(2)): data integrity, the writer waits; otherwise
    /// `WB_SYNC_NONE` (the flusher, reclaim).
    pub sync_all: bool,
    /// `for_reclaim`: reclaim's `pageout`.
    pub for_reclaim: bool,
    /// With `for_reclaim`: the reclaimer is kswapd (`current_is_kswapd()`), not a task in
    /// direct reclaim (`PF_MEMALLOC` without `PF_KSWAPD`).
    pub kswapd: bool,
    /// `generic_writepages` (jbd2 flushing ordered data): each page goes to the
    /// filesystem's `->writepage`, not its `->writepages`, so ext4 allocates no blocks and
    /// redirties a page whose blocks are delayed.
    pub writepage_only: bool,
}

impl WritebackControl {
    /// Reclaim's `pageout`, by kswapd or by direct reclaim.
    pub fn for_reclaim(kswapd: bool) -> WritebackControl {
        WritebackControl {
            sync_all: false,
            for_reclaim: true,
            kswapd,
            writepage_only: false,
        }
    }
}

/// What a `writepage` did with the page it was given (the caller had cleared its dirty bit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WritePage {
    /// The page is under writeback; the caller submits `bio` to device `bdi`.
    Submit { bdi: usize, bio: Bio },
    /// The page is under writeback and the filesystem sends it itself (a network
    /// filesystem's RPC, the simple swap device's queue).
    Started,
    /// Nothing needed writing (clean buffers): writeback started and ended at once, and the
    /// page counts as written.
    Clean,
    /// The filesystem declined and redirtied the page (`redirty_page_for_writepage`:
    /// `wbc->pages_skipped`).
    Redirtied,
    /// The page is under writeback and its bio is the filesystem's, to be submitted by its
    /// own worker threads (btrfs). `queued`: this call queued a finished bio to them, after
    /// which the writer runs [`AddressSpaceOps::async_submit_wait`] for device `bdi`.
    Async { bdi: usize, queued: bool },
    /// As [`WritePage::Started`], but the filesystem's writeback is congested for this
    /// writer: it runs [`AddressSpaceOps::writeback_congestion_wait`] for device `bdi`
    /// (NFS with patch 40 of IO-less v3).
    Congested { bdi: usize },
}

/// What `releasepage` (`try_to_release_page`) left of a page's private data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Release {
    /// Released: the page can be freed.
    Released,
    /// Still held (dirty or locked buffers, an unstable page): reclaim activates the page.
    Busy,
    /// The filesystem must sleep to release it (`releasepage` of a direct reclaimer): reclaim
    /// calls [`AddressSpaceOps::releasepage_wait`] for the page's inode, then looks again.
    Wait,
}

/// Whether `generic_perform_write` runs the dirty-throttle hook after copying into a page
/// that was dirty (`was_dirty`) or clean: always, or with patch 06 of the IO-less series v3
/// ("prevent duplicate balance_dirty_pages_ratelimited() calls") only for a clean one.
pub fn generic_throttle_after_write(k: &Kernel, was_dirty: bool) -> bool {
    !(was_dirty && k.sw.on(crate::presets::Switch::IolessNoDuplicateBalance))
}

/// The operations of a filesystem (or of the swap cache) on its pages.
pub trait AddressSpaceOps: fmt::Debug {
    /// The filesystem's name in messages (`Ext4`, `Nfs`, ...).
    fn name(&self) -> &'static str;

    /// `->set_page_dirty`: dirty page `pfn`, account it and mark its inode dirty. Returns
    /// whether it was clean. PG_reclaim is the caller's (`page_writeback::set_page_dirty`).
    fn set_page_dirty(&self, k: &mut Kernel, pfn: Pfn, task: &mut DirtyTask) -> bool;

    /// `->write_begin` + `->write_end` of a whole-page `write()` to page `index` of `ino`,
    /// which is in the page cache: prepare the page and dirty it. The write path dirties
    /// through `write_end` (`mark_buffer_dirty`), never through `->set_page_dirty`, but the
    /// effect on the page is the same when the filesystem adds nothing.
    fn write_end(&self, k: &mut Kernel, ino: usize, index: u64, pfn: Pfn, task: &mut DirtyTask) {
        let _ = (ino, index);
        self.set_page_dirty(k, pfn, task);
    }

    /// Whether a `write(2)` that copied into a page which was already dirty (`was_dirty`)
    /// counts the page towards the dirty-throttle hook after it. `generic_perform_write`
    /// always does, except with patch 06 of the IO-less series v3.
    fn throttle_after_write(&self, k: &Kernel, was_dirty: bool) -> bool {
        generic_throttle_after_write(k, was_dirty)
    }

    /// The pages a `write(2)` of `write_pages` whole pages by `task` copies and dirties
    /// between two runs of the dirty-throttle hook, which is then told how many of them
    /// count ([`throttle_after_write`]). `generic_perform_write` runs it after every page.
    ///
    /// [`throttle_after_write`]: AddressSpaceOps::throttle_after_write
    fn write_batch(&self, k: &Kernel, task: &DirtyTask, write_pages: u64) -> u64 {
        let _ = (k, task, write_pages);
        1
    }

    /// `->writepage` of a locked page whose dirty bit the caller has just cleared
    /// (`clear_page_dirty_for_io`) and which is not under writeback. `data` is the
    /// filesystem's state of the `write_cache_pages` call ([`writepages_start`]), or `None`
    /// for a page on its own (reclaim's `pageout`).
    ///
    /// [`writepages_start`]: AddressSpaceOps::writepages_start
    fn writepage(
        &self,
        k: &mut Kernel,
        pfn: Pfn,
        wbc: &WritebackControl,
        data: &mut PageioData,
    ) -> WritePage;

    /// mmsim: whether `writepage(pfn, wbc)` would decline the page
    /// (`redirty_page_for_writepage`) and do nothing else. `pageout` then runs neither it
    /// nor `clear_page_dirty_for_io`, since the pair leaves the page as it was. The default
    /// is a `writepage` that never declines.
    fn writepage_declines(&self, k: &Kernel, pfn: Pfn, wbc: &WritebackControl) -> bool {
        let _ = (k, pfn, wbc);
        false
    }

    /// Whether `->writepage` called by reclaim's `pageout` also writes the dirty pages that
    /// follow the page in the file (xfs's `xfs_cluster_write`, up to the `nr_to_write` of
    /// `SWAP_CLUSTER_MAX` pages `pageout` gives it). `pageout` then runs the walk
    /// ([`writepages_start`]). The default writes the one page.
    ///
    /// [`writepages_start`]: AddressSpaceOps::writepages_start
    fn reclaim_write_clusters(&self) -> bool {
        false
    }

    /// The start of a `->writepages` walk (`write_cache_pages`) of file `ino`: the
    /// filesystem's state across its pages, handed to each `writepage`.
    fn writepages_start(&self, k: &mut Kernel, ino: usize, wbc: &WritebackControl) -> PageioData {
        let _ = (k, ino, wbc);
        None
    }

    /// The end of a `->writepages` walk: send what the walk gathered. Returns the device a
    /// bio went to its worker threads on, if one did ([`WritePage::Async`]).
    fn writepages_end(&self, k: &mut Kernel, data: PageioData) -> Option<usize> {
        let _ = (k, data);
        None
    }

    /// A page-writeback write of device `bdi` completed for the page in `tag`'s low 32 bits
    /// (the bio's `bi_end_io`). The default is `end_buffer_async_write`: unlock the page's
    /// buffers, if any, and end its writeback.
    fn end_writeback_bio(&self, k: &mut Kernel, bdi: usize, tag: u64) {
        let _ = bdi;
        page_io::end_buffer_async_write(k, tag as Pfn);
    }

    /// The wait of a writer that queued a bio to the filesystem's submit workers of device
    /// `bdi` ([`WritePage::Async`]). None without such workers.
    fn async_submit_wait<'a>(&'a self, w: &'a World, bdi: usize) -> FsFuture<'a> {
        let _ = (w, bdi);
        Box::pin(async {})
    }

    /// The wait of a writer whose page went under writeback while the filesystem's own
    /// writeback of device `bdi` is congested for its class (`sync`: WB_SYNC_ALL)
    /// ([`WritePage::Congested`]).
    fn writeback_congestion_wait<'a>(
        &'a self,
        w: &'a World,
        bdi: usize,
        sync: bool,
    ) -> FsFuture<'a> {
        let _ = (w, bdi, sync);
        Box::pin(async {})
    }

    /// The start of a readahead (`->readpages`) of file `ino`: the filesystem's state
    /// across its pages, handed to each `readpage`.
    fn readpages_start(&self, k: &mut Kernel, ino: usize) -> PageioData {
        let _ = (k, ino);
        None
    }

    /// `->readpage` of a locked page just added to the page cache: the read bio for the
    /// caller to submit to the file's device, or `None` if the filesystem reads it itself.
    /// The default is a mapping with no backing store (`simple_readpage`): the page reads
    /// as zeroes at once.
    fn readpage(&self, k: &mut Kernel, pfn: Pfn, data: &mut PageioData) -> Option<Bio> {
        let _ = data;
        page_io::end_page_read(k, pfn);
        None
    }

    /// The end of a readahead: send what it gathered.
    fn readpages_end(&self, k: &mut Kernel, data: PageioData) {
        let _ = (k, data);
    }

    /// `->is_dirty_writeback` (LD patch 2's hook, filled in by patches 7 and 8): whether
    /// reclaim should count a file page as dirty and as under writeback, given its flags.
    /// Without the hook the flags stand.
    fn is_dirty_writeback(
        &self,
        k: &Kernel,
        pfn: Pfn,
        dirty: bool,
        writeback: bool,
    ) -> (bool, bool) {
        let _ = (k, pfn);
        (dirty, writeback)
    }

    /// `->releasepage` (`try_to_release_page` of reclaim) of a page with private data.
    /// Without one the page has none to release.
    fn releasepage(&self, k: &mut Kernel, pfn: Pfn, gfp: Gfp, kswapd: bool) -> Release {
        let _ = (k, pfn, gfp, kswapd);
        Release::Released
    }

    /// The sleep of a `releasepage` that answered [`Release::Wait`], for a page of `ino`.
    fn releasepage_wait<'a>(&'a self, w: &'a World, ino: usize) -> FsFuture<'a> {
        let _ = (w, ino);
        Box::pin(async {})
    }

    /// Truncation: a queue to sleep on before page `pfn` can be invalidated, beyond its page
    /// lock, writeback and buffer locks (a network filesystem's request in flight).
    fn invalidatepage_wait(&self, k: &Kernel, pfn: Pfn) -> Option<WaitQueueId> {
        let _ = (k, pfn);
        None
    }

    /// `->invalidatepage` on truncation: drop the page's private data. Its dirty bit is
    /// still set; the caller cancels it afterwards (`cancel_dirty_page`).
    fn invalidatepage(&self, k: &mut Kernel, pfn: Pfn) {
        let _ = (k, pfn);
    }

    /// `->fsync` (`file_operations`; `fsync(2)`, `fdatasync(2)`, `msync(MS_SYNC)`): write
    /// the file's dirty pages in `range` and wait for them (`filemap_write_and_wait_range`).
    fn fsync<'a>(&'a self, w: &'a World, ino: usize, range: Range<u64>) -> FsFuture<'a> {
        Box::pin(filemap_write_and_wait_range(w, ino, range))
    }

    /// `->write_inode` (`super_operations`) of the flusher (`WB_SYNC_NONE`) for an inode that
    /// was `I_DIRTY_DATASYNC`, in the inode's turn of `chunk` pages of which `nr_to_write`
    /// are left. Returns the pages that counts as written, at most `nr_to_write`.
    fn write_inode<'a>(
        &'a self,
        w: &'a World,
        ino: usize,
        nr_to_write: u64,
        chunk: u64,
    ) -> FsCountFuture<'a> {
        let _ = (w, ino, nr_to_write, chunk);
        Box::pin(async { 0 })
    }

    /// Whether the mapping has a `->migratepage` (async compaction leaves dirty pages of one
    /// without it alone: moving them would need a write).
    fn has_migratepage(&self) -> bool {
        true
    }

    /// The warning `->writepage` gives when direct reclaim hands it page `pfn` (seed 002's
    /// patches 3 and 4: xfs and ext4 `WARN_ON_ONCE`), if it gives one.
    fn direct_reclaim_warning(&self, _k: &Kernel, _pfn: Pfn) -> Option<&'static str> {
        None
    }

    /// `->migratepage`: whether page `pfn`, isolated, clean or dirty but not under writeback,
    /// may move now. The default is `migrate_page`, which cannot move private data
    /// (`nfs_migrate_page` refuses a page with a request: `-EBUSY`).
    fn migratepage(&self, k: &Kernel, pfn: Pfn, _mode: MigrateMode) -> Result<(), MigrateError> {
        if k.pages.test(pfn, super::page::PG_PRIVATE) {
            return Err(MigrateError::Busy);
        }
        Ok(())
    }

    /// Whether a page of this filesystem with PG_private carries one buffer head, an object
    /// of the `buffer_head` slab cache whose page index is in `page->private`.
    fn buffer_heads(&self) -> bool {
        false
    }

    /// Invariants: whether page `pfn`, a page-cache page of this filesystem with PG_private,
    /// carries private data this filesystem attaches; the rule it breaks if not.
    fn check_private(&self, k: &Kernel, pfn: Pfn) -> Result<(), String> {
        let _ = (k, pfn);
        Err(format!("has private data on {}", self.name()))
    }

    /// Invariants: the filesystem's own state of file `ino` against its pages. Adds the
    /// file's unstable pages (`NR_UNSTABLE_NFS`) to `unstable`, per zone.
    fn check_mapping(
        &self,
        k: &Kernel,
        ino: usize,
        unstable: &mut [u64; MAX_NR_ZONES],
    ) -> Result<(), String> {
        let _ = (k, ino, unstable);
        Ok(())
    }

    /// Invariants: the mount's own counters against its backing device `bdi`.
    fn check_mount(&self, k: &Kernel, bdi: usize) -> Result<(), String> {
        let _ = (k, bdi);
        Ok(())
    }
}

/// `page_mapping(page)->a_ops` of a page-cache or swap-cache page.
#[inline]
pub fn page_aops(k: &Kernel, pfn: Pfn) -> &'static dyn AddressSpaceOps {
    if k.pages.test(pfn, PG_SWAPCACHE) {
        return &page_io::SWAP_AOPS;
    }
    k.inodes[k.pages.mapping[pfn as usize] as usize].a_ops
}

/// `__set_page_dirty_no_writeback`: set PG_dirty with no accounting (a mapping that is not
/// written back by the flusher). Returns whether the page was clean.
pub fn set_page_dirty_no_writeback(k: &mut Kernel, pfn: Pfn) -> bool {
    let was_dirty = k.pages.test(pfn, PG_DIRTY);
    k.pages.set(pfn, PG_DIRTY);
    !was_dirty
}

/// The operations of a file on no filesystem (the kernel's `empty_aops`, with ramfs'
/// `__set_page_dirty_no_writeback`): unit tests' stand-in files. Its pages are dirtied
/// without accounting, read as zeroes, and never written (`writepage` keeps them dirty).
#[derive(Debug)]
pub struct EmptyAops;

/// The one [`EmptyAops`] table.
pub static EMPTY_AOPS: EmptyAops = EmptyAops;

impl AddressSpaceOps for EmptyAops {
    fn name(&self) -> &'static str {
        "none"
    }

    fn set_page_dirty(&self, k: &mut Kernel, pfn: Pfn, _task: &mut DirtyTask) -> bool {
        super::inode::tag_page_dirty(k, pfn);
        set_page_dirty_no_writeback(k, pfn)
    }

    fn writepage(
        &self,
        k: &mut Kernel,
        pfn: Pfn,
        _wbc: &WritebackControl,
        _data: &mut PageioData,
    ) -> WritePage {
        k.pages.set(pfn, PG_DIRTY);
        super::inode::tag_page_dirty(k, pfn);
        WritePage::Redirtied
    }
}
