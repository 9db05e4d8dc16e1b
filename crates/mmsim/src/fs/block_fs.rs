//! The filesystems on a block device (ext2, ext3, ext4, xfs, btrfs) and the raw device
//! itself (`def_blk_aops`), as their 3.x address-space operations answer the memory
//! manager. Four things set them apart here, so one implementation serves them all, each a
//! table of its own:
//! - buffer heads: ext2, ext3 and the raw device attach them (`fs::buffer`); their
//!   `writepage` is `block_write_full_page`, which writes only dirty buffers, and their
//!   `is_dirty_writeback` hook is `buffer_check_dirty_writeback` (LD patch 7);
//! - a journal: ext3's (`fs::jbd`, data=ordered) files each `write()`'s data buffer on the
//!   running transaction and writes it at the commit;
//! - block allocation: every filesystem allocates 32 MiB extents at writeback (ext4, xfs
//!   and btrfs delay it; for ext2 and ext3, which allocate at `write()`, the placement is
//!   the same), and packs files smaller than [`SMALL_FILE_PAGES`] one after another; the
//!   raw device maps pages one to one;
//! - how `writepage` answers reclaim ([`ReclaimWritepage`]).

use super::buffer::{self, BlockWrite};
use super::fs_writeback::__set_page_dirty_nobuffers;
use super::jbd;
use crate::block::{Bio, Dir};
use crate::mm::backing_dev::PAGE_SECTORS;
use crate::mm::fs_ops::{
    AddressSpaceOps, FsFuture, PageioData, Release, WritePage, WritebackControl,
};
use crate::mm::migrate::{self, MigrateError, MigrateMode};
use crate::mm::page::{Pfn, PG_BH_DIRTY, PG_PRIVATE};
use crate::mm::page_writeback::{redirty_page_for_writepage, test_set_page_writeback, DirtyTask};
use crate::mm::{page_io, Gfp, Kernel, World};
use crate::presets::Switch;

/// Block allocation granularity for a streaming file (ext4's mballoc preallocation), pages.
pub const EXT4_EXTENT_PAGES: u64 = 8192;

/// A file smaller than this many pages gets just the blocks it needs, next to the small
/// file allocated before it: ext4's mballoc serves requests below `mb_stream_req` (16
/// blocks) from the CPU's locality-group preallocation, and ext3 and xfs put a
/// directory's files near its inode. A tree of small files written by `cp -r` or a build
/// therefore lies packed on the disk, not one file per streaming extent. Simplification:
/// one packing point per device, where ext3's Orlov allocator would give separate trees'
/// top directories block groups of their own.
pub const SMALL_FILE_PAGES: u64 = 16;

/// How a filesystem's `writepage` answers reclaim (3.x).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReclaimWritepage {
    /// It writes (`block_write_full_page`, `ext3_ordered_writepage`, `blkdev_writepage`).
    Write,
    /// `ext4_writepage` will not allocate blocks from reclaim: a page still under delayed
    /// allocation is redirtied; one with its blocks is written.
    IfAllocated,
    /// `xfs_vm_writepage` refuses direct reclaim (`PF_MEMALLOC` without `PF_KSWAPD`) and
    /// writes for kswapd, allocating blocks if needed.
    KswapdOnly,
    /// `btrfs_writepage` refuses every reclaimer (`PF_MEMALLOC`).
    Never,
}

impl ReclaimWritepage {
    /// Whether `writepage` writes a page reclaim hands it, from kswapd or direct reclaim,
    /// with its blocks `allocated` or not; otherwise it redirties the page
    /// (`redirty_page_for_writepage`) and starts no IO.
    pub fn writes(self, kswapd: bool, allocated: bool) -> bool {
        match self {
            ReclaimWritepage::Write => true,
            ReclaimWritepage::IfAllocated => allocated,
            ReclaimWritepage::KswapdOnly => kswapd,
            ReclaimWritepage::Never => false,
        }
    }
}

/// One filesystem on a block device, or the raw device.
#[derive(Debug)]
pub struct BlockFs {
    /// Its name in messages.
    name: &'static str,
    /// Pages carry buffer heads.
    buffer_heads: bool,
    /// A jbd journal in data=ordered mode writes the data buffers a transaction dirtied.
    journal: bool,
    /// It allocates blocks for file pages (the raw device maps them one to one).
    allocates_blocks: bool,
    /// How `writepage` answers reclaim.
    reclaim: ReclaimWritepage,
    /// A write cleans the page's dirty bit and sets it again, accounting a new dirtying
    /// (btrfs 2.6.37–3.1: `prepare_pages` clears it, `btrfs_dirty_pages` sets it).
    redirty_on_write: bool,
    /// btrfs's write path: `write()` dirties pages in batches, one throttle hook each, and
    /// writeback hands bios to submit workers (`fs::btrfs`).
    btrfs_io: bool,
    /// Pages end writeback an ioend at a time, when all of it has completed (xfs,
    /// `fs::xfs`); the others, a request at a time.
    ioends: bool,
    /// `->migratepage` is `buffer_migrate_page` (ext2/3/4, xfs); the others have none and
    /// migrate through `fallback_migrate_page` (btrfs's data pages until 2019; the block
    /// device's `def_blk_aops`).
    buffer_migrate: bool,
}

/// ext2: buffer heads, no journal, and a `writepage` that writes for everyone.
pub static EXT2: BlockFs = BlockFs {
    name: "Ext2",
    buffer_heads: true,
    journal: false,
    allocates_blocks: true,
    reclaim: ReclaimWritepage::Write,
    redirty_on_write: false,
    btrfs_io: false,
    ioends: false,
    buffer_migrate: true,
};

/// ext3 in data=ordered mode.
pub static EXT3: BlockFs = BlockFs {
    name: "Ext3",
    buffer_heads: true,
    journal: true,
    allocates_blocks: true,
    reclaim: ReclaimWritepage::Write,
    redirty_on_write: false,
    btrfs_io: false,
    ioends: false,
    buffer_migrate: true,
};

/// ext4 with delayed allocation (`ext4_da_aops`; mmsim keeps no ext4 buffer heads).
pub static EXT4: BlockFs = BlockFs {
    name: "Ext4",
    buffer_heads: false,
    journal: false,
    allocates_blocks: true,
    reclaim: ReclaimWritepage::IfAllocated,
    redirty_on_write: false,
    btrfs_io: false,
    ioends: false,
    buffer_migrate: true,
};

/// xfs (delayed allocation).
pub static XFS: BlockFs = BlockFs {
    name: "Xfs",
    buffer_heads: false,
    journal: false,
    allocates_blocks: true,
    reclaim: ReclaimWritepage::KswapdOnly,
    redirty_on_write: false,
    btrfs_io: false,
    ioends: true,
    buffer_migrate: true,
};

/// btrfs.
pub static BTRFS: BlockFs = BlockFs {
    name: "Btrfs",
    buffer_heads: false,
    journal: false,
    allocates_blocks: true,
    reclaim: ReclaimWritepage::Never,
    redirty_on_write: true,
    btrfs_io: true,
    ioends: false,
    buffer_migrate: false,
};

/// The raw block device (`def_blk_aops`): buffer heads, pages mapped one to one.
pub static BLOCKDEV: BlockFs = BlockFs {
    name: "Raw",
    buffer_heads: true,
    journal: false,
    allocates_blocks: false,
    reclaim: ReclaimWritepage::Write,
    redirty_on_write: false,
    btrfs_io: false,
    ioends: false,
    buffer_migrate: false,
};

impl BlockFs {
    /// Whether a mount has a journal (and kjournald).
    pub fn has_journal(&self) -> bool {
        self.journal
    }

    /// How `writepage` answers reclaim.
    pub fn reclaim(&self) -> ReclaimWritepage {
        self.reclaim
    }

    /// Whether a mount has btrfs's submit worker.
    pub fn has_submit_worker(&self) -> bool {
        self.btrfs_io
    }

    /// Whether a mount completes writeback in ioends (xfs).
    pub fn has_ioends(&self) -> bool {
        self.ioends
    }

    /// The sector of page `index` of file `ino`, allocating an extent if the page has none
    /// (`get_block`; at writeback for delayed allocation, at `write()` for ext2 and ext3,
    /// which for placement is the same). The raw device maps pages one to one.
    pub fn map_block(&self, k: &mut Kernel, ino: usize, index: u64) -> u64 {
        if !self.allocates_blocks {
            return index * PAGE_SECTORS as u64;
        }
        k.inodes[ino].fill_hole(index);
        if let Some(s) = k.inodes[ino].sector_of(index) {
            return s;
        }
        let bdi = k.inodes[ino].bdi;
        let size = k.inodes[ino].size_pages.max(index + 1);
        let (first, len) = if size < SMALL_FILE_PAGES {
            (index, size - index)
        } else {
            // A file that has grown past a small file's blocks streams on from their end.
            let end = k.inodes[ino].extents_end();
            let rounded = index / EXT4_EXTENT_PAGES * EXT4_EXTENT_PAGES;
            let first = if end <= index {
                rounded.max(end)
            } else {
                rounded
            };
            (first, EXT4_EXTENT_PAGES)
        };
        let sector = k.bdis[bdi].next_free_sector;
        k.bdis[bdi].next_free_sector += len * PAGE_SECTORS as u64;
        k.inodes[ino].add_extent(first, sector, len);
        sector + (index - first) * PAGE_SECTORS as u64
    }

    /// The sector of page `index` of `ino` if its block is known, without allocating.
    fn mapped_sector(&self, k: &Kernel, ino: usize, index: u64) -> Option<u64> {
        if self.allocates_blocks {
            k.inodes[ino].sector_of(index)
        } else {
            Some(index * PAGE_SECTORS as u64)
        }
    }

    /// Whether `writepage` as `wbc` calls it writes page `pfn` rather than redirtying it.
    fn writes(&self, k: &Kernel, pfn: Pfn, wbc: &WritebackControl) -> bool {
        if !wbc.for_reclaim {
            // Outside reclaim only ext4's ->writepage declines: delayed buffers (mmsim:
            // past the allocated and written part of the file).
            return !(wbc.writepage_only && self.reclaim == ReclaimWritepage::IfAllocated) || {
                let (ino, index) = file_index(k, pfn);
                index < k.inodes[ino].disksize_pages && k.inodes[ino].sector_of(index).is_some()
            };
        }
        let allocated = self.reclaim == ReclaimWritepage::IfAllocated && {
            let (ino, index) = file_index(k, pfn);
            k.inodes[ino].sector_of(index).is_some()
        };
        self.reclaim.writes(wbc.kswapd, allocated)
    }
}

/// The file and page index of page-cache page `pfn`.
fn file_index(k: &Kernel, pfn: Pfn) -> (usize, u64) {
    (
        k.pages.mapping[pfn as usize] as usize,
        k.pages.index[pfn as usize] as u64,
    )
}

impl AddressSpaceOps for BlockFs {
    fn name(&self) -> &'static str {
        self.name
    }

    fn buffer_heads(&self) -> bool {
        self.buffer_heads
    }

    fn has_migratepage(&self) -> bool {
        self.buffer_migrate
    }

    /// xfs warns at every page (it refuses direct reclaim), ext4 at a page whose blocks are
    /// not allocated yet (the one it cannot write from reclaim).
    fn direct_reclaim_warning(&self, k: &Kernel, pfn: Pfn) -> Option<&'static str> {
        match self.reclaim {
            ReclaimWritepage::KswapdOnly => Some("xfs_vm_writepage: called from direct reclaim"),
            ReclaimWritepage::IfAllocated => {
                let (ino, index) = file_index(k, pfn);
                k.inodes[ino]
                    .sector_of(index)
                    .is_none()
                    .then_some("ext4_writepage: delayed page from direct reclaim")
            }
            ReclaimWritepage::Write | ReclaimWritepage::Never => None,
        }
    }

    fn migratepage(&self, k: &Kernel, pfn: Pfn, mode: MigrateMode) -> Result<(), MigrateError> {
        if self.buffer_migrate {
            migrate::buffer_migrate_page(k, pfn, mode)
        } else {
            migrate::fallback_migrate_page(k, pfn, mode, self.buffer_heads)
        }
    }

    /// `__set_page_dirty_buffers` (dirtying a page dirties all its buffers) or
    /// `__set_page_dirty_nobuffers`.
    fn set_page_dirty(&self, k: &mut Kernel, pfn: Pfn, task: &mut DirtyTask) -> bool {
        if self.buffer_heads {
            buffer::__set_page_dirty_buffers(k, pfn, task)
        } else {
            __set_page_dirty_nobuffers(k, pfn, task)
        }
    }

    /// `write_begin` gives the page buffers (`create_empty_buffers`) and `write_end` dirties
    /// them with the page (`mark_buffer_dirty`); on ext3 the write runs in the journal's
    /// running transaction, which files a newly dirtied buffer (`journal_dirty_data`).
    fn write_end(&self, k: &mut Kernel, ino: usize, index: u64, pfn: Pfn, task: &mut DirtyTask) {
        if self.redirty_on_write {
            // The dirtying below counts again (the letter's duplicate dirty accounting).
            crate::mm::page_writeback::clear_page_dirty_for_io(k, pfn);
        }
        let newly_dirty_buffers = self.buffer_heads && {
            if !k.pages.test(pfn, PG_PRIVATE) {
                buffer::create_empty_buffers(k, pfn);
            }
            !k.pages.test(pfn, PG_BH_DIRTY)
        };
        self.set_page_dirty(k, pfn, task);
        if self.journal {
            let bdi = k.inodes[ino].bdi;
            jbd::journal_dirty_data(k, bdi, ino, index, newly_dirty_buffers);
        }
    }

    /// btrfs with its patch 36 of the IO-less series v3 throttles only after dirtying a clean
    /// page (`btrfs_file_aio_write` passes the pages it newly dirtied); the others write
    /// through `generic_perform_write`.
    fn throttle_after_write(&self, k: &Kernel, was_dirty: bool) -> bool {
        if !self.redirty_on_write {
            return crate::mm::fs_ops::generic_throttle_after_write(k, was_dirty);
        }
        !(was_dirty && k.sw.on(crate::presets::Switch::BtrfsNoBalanceOnDirtyPages))
    }

    /// btrfs: `nrptrs` pages a batch ([`super::btrfs::nrptrs`]); the others, a page.
    fn write_batch(&self, k: &Kernel, task: &DirtyTask, write_pages: u64) -> u64 {
        if self.btrfs_io {
            super::btrfs::nrptrs(k, task, write_pages)
        } else {
            1
        }
    }

    /// xfs clusters the pages after reclaim's page into its ioend (`xfs_cluster_write`).
    fn reclaim_write_clusters(&self) -> bool {
        self.ioends
    }

    /// btrfs builds a bio across the pages of a walk, xfs an ioend.
    fn writepages_start(&self, k: &mut Kernel, ino: usize, _wbc: &WritebackControl) -> PageioData {
        if self.btrfs_io {
            super::btrfs::writepages_start()
        } else if self.ioends {
            super::xfs::writepages_start(k.inodes[ino].bdi)
        } else {
            None
        }
    }

    /// btrfs queues the bio the walk was building; xfs submits its open ioend.
    fn writepages_end(&self, k: &mut Kernel, data: PageioData) -> Option<usize> {
        if self.btrfs_io {
            super::btrfs::writepages_end(k, data)
        } else {
            if self.ioends {
                super::xfs::writepages_end(k, data);
            }
            None
        }
    }

    /// xfs: a page of an ioend drops its reference on it (`xfs_end_bio`); only xfs tags
    /// bios with an ioend.
    fn end_writeback_bio(&self, k: &mut Kernel, bdi: usize, tag: u64) {
        if super::xfs::in_ioend(tag) {
            super::xfs::end_bio(k, bdi, tag);
        } else {
            crate::mm::page_io::end_buffer_async_write(k, tag as Pfn);
        }
    }

    /// btrfs's wait on too many pending bios (patch 38 of v3).
    fn async_submit_wait<'a>(&'a self, w: &'a World, bdi: usize) -> FsFuture<'a> {
        Box::pin(super::btrfs::wait_for_async_bios(w, bdi))
    }

    /// Map the page's block, then `block_write_full_page` (buffer heads) or start writeback,
    /// and hand back the one-page bio; btrfs adds it to the walk's bio for its submit
    /// worker. A reclaimer the filesystem refuses gets the page redirtied.
    fn writepage(
        &self,
        k: &mut Kernel,
        pfn: Pfn,
        wbc: &WritebackControl,
        data: &mut PageioData,
    ) -> WritePage {
        if !self.writes(k, pfn, wbc) {
            redirty_page_for_writepage(k, pfn);
            return WritePage::Redirtied;
        }
        let (ino, index) = file_index(k, pfn);
        let sector = self.map_block(k, ino, index);
        if !wbc.for_reclaim
            && !wbc.writepage_only
            && !self.buffer_heads
            && index >= k.inodes[ino].disksize_pages
        {
            // ->writepages mapping a delayed page: the allocation grows i_disksize, and on
            // ext4 data=ordered files the inode on the running transaction
            // (`ext4_jbd2_file_inode`; a rewrite of mapped blocks files nothing).
            k.inodes[ino].disksize_pages = index + 1;
            crate::fs::jbd2::ext4_jbd2_file_inode(k, ino);
        }
        if self.buffer_heads {
            match buffer::block_write_full_page(k, pfn) {
                BlockWrite::Io => {}
                BlockWrite::Clean => return WritePage::Clean,
                BlockWrite::Redirtied => return WritePage::Redirtied,
            }
        } else {
            test_set_page_writeback(k, pfn);
        }
        let bdi = k.inodes[ino].bdi;
        let tag = if self.ioends {
            super::xfs::add_to_ioend(k, data, bdi, pfn, index, sector)
        } else {
            pfn as u64
        };
        let bio = Bio {
            dir: Dir::Write,
            sync: wbc.sync_all,
            sector,
            nr_sectors: PAGE_SECTORS,
            tag,
        };
        if self.btrfs_io {
            let queued = super::btrfs::add_page(k, data, bdi, bio);
            return WritePage::Async { bdi, queued };
        }
        WritePage::Submit { bdi, bio }
    }

    /// Declined when this writer does not write the page (ext4's delayed allocation for
    /// reclaim, xfs's for direct reclaim).
    fn writepage_declines(&self, k: &Kernel, pfn: Pfn, wbc: &WritebackControl) -> bool {
        !self.writes(k, pfn, wbc)
    }

    /// One read bio at the page's block (a block never written reads where a raw device
    /// would have it).
    fn readpage(&self, k: &mut Kernel, pfn: Pfn, _data: &mut PageioData) -> Option<Bio> {
        let (ino, index) = file_index(k, pfn);
        let sector = match self.mapped_sector(k, ino, index) {
            Some(s) if !k.inodes[ino].is_hole(index) => Some(s),
            _ => None,
        };
        let Some(sector) = sector else {
            // A hole (a sparse file's): no block to read; the page is zeroed
            // (`mpage_readpage` of unmapped buffers).
            page_io::end_page_read(k, pfn);
            return None;
        };
        Some(Bio {
            dir: Dir::Read,
            sync: true,
            sector,
            nr_sectors: PAGE_SECTORS,
            tag: pfn as u64,
        })
    }

    /// `buffer_check_dirty_writeback` (LD patch 7, for ext3 and block devices) on a page
    /// with buffers.
    fn is_dirty_writeback(
        &self,
        k: &Kernel,
        pfn: Pfn,
        dirty: bool,
        writeback: bool,
    ) -> (bool, bool) {
        if self.buffer_heads
            && k.pages.test(pfn, PG_PRIVATE)
            && k.sw.on(Switch::BufferDirtyWritebackHook)
        {
            return buffer::buffer_check_dirty_writeback(k, pfn);
        }
        (dirty, writeback)
    }

    /// `try_to_free_buffers` (ext3's `journal_try_to_free_buffers`, `blkdev_releasepage`).
    fn releasepage(&self, k: &mut Kernel, pfn: Pfn, _gfp: Gfp, _kswapd: bool) -> Release {
        if !self.buffer_heads || buffer::try_to_release_page(k, pfn) {
            Release::Released
        } else {
            Release::Busy
        }
    }

    /// `block_invalidatepage`.
    fn invalidatepage(&self, k: &mut Kernel, pfn: Pfn) {
        if self.buffer_heads {
            buffer::block_invalidatepage(k, pfn);
        }
    }

    /// Only buffer heads, and by their rules.
    fn check_private(&self, k: &Kernel, pfn: Pfn) -> Result<(), String> {
        if !self.buffer_heads {
            return Err(format!("has private data on {}", self.name));
        }
        buffer::check_buffers(k, pfn)
    }

    /// btrfs's pending bios, xfs's ioends.
    fn check_mount(&self, k: &Kernel, bdi: usize) -> Result<(), String> {
        if self.btrfs_io {
            super::btrfs::check_mount(k, bdi)
        } else if self.ioends {
            super::xfs::check_mount(k, bdi)
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn with_patches_06_and_36_writes_throttle_only_after_dirtying_a_clean_page() {
        let w = crate::sim::boot_for_test(64, 0, "ioless-v3");
        let k = w.borrow();
        assert!(BTRFS.throttle_after_write(&k, false));
        assert!(!BTRFS.throttle_after_write(&k, true));
        // generic_perform_write with patch 06: only after dirtying a clean page.
        assert!(EXT4.throttle_after_write(&k, false));
        assert!(!EXT4.throttle_after_write(&k, true));
        drop(k);
        let w = crate::sim::boot_for_test(64, 0, "2.6.37-rc5");
        assert!(
            EXT4.throttle_after_write(&w.borrow(), true),
            "generic_perform_write always does"
        );
        assert!(
            BTRFS.throttle_after_write(&w.borrow(), true),
            "without the patch"
        );
    }

    use super::*;

    /// Issue 3: each filesystem's answer to reclaim's `writepage` (3.x sources:
    /// `ext4_writepage`, `xfs_vm_writepage`, `btrfs_writepage`, `ext3_ordered_writepage`,
    /// ext2's `block_write_full_page`, `blkdev_writepage`).
    #[test]
    fn each_filesystem_answers_reclaims_writepage_as_its_3x_code_does() {
        // (fs, from kswapd, blocks allocated) -> writes
        let cases: [(&BlockFs, bool, bool, bool); 13] = [
            (&EXT4, true, false, false),
            (&EXT4, true, true, true),
            (&EXT4, false, true, true),
            (&EXT4, false, false, false),
            (&XFS, true, false, true),
            (&XFS, false, true, false),
            (&BTRFS, true, true, false),
            (&BTRFS, false, false, false),
            (&EXT3, false, true, true),
            (&EXT3, true, true, true),
            (&EXT2, false, false, true),
            (&EXT2, true, true, true),
            (&BLOCKDEV, true, true, true),
        ];
        for (fs, kswapd, allocated, writes) in cases {
            assert_eq!(
                fs.reclaim().writes(kswapd, allocated),
                writes,
                "{} kswapd={kswapd} allocated={allocated}",
                fs.name
            );
        }
        // Buffer heads: ext2, ext3 and block devices; a journal: ext3 only; blocks
        // allocated by every filesystem, not by the raw device.
        for fs in [&EXT4, &XFS, &BTRFS, &EXT3, &EXT2, &BLOCKDEV] {
            let name = fs.name;
            assert_eq!(
                fs.buffer_heads,
                matches!(name, "Ext3" | "Ext2" | "Raw"),
                "{name}"
            );
            assert_eq!(fs.journal, name == "Ext3", "{name}");
            assert_eq!(fs.btrfs_io, name == "Btrfs", "{name}");
            assert_eq!(fs.ioends, name == "Xfs", "{name}");
            assert_eq!(fs.allocates_blocks, name != "Raw", "{name}");
        }
    }

    /// Small files lie packed, each on just the blocks it needs, in the order writeback
    /// maps them; a file of `SMALL_FILE_PAGES` or more gets a streaming extent of its own.
    #[test]
    fn small_files_are_packed_and_larger_ones_get_a_streaming_extent() {
        use crate::fs::buffer::testing::{machine, new_file};
        use crate::fs::Filesystem;
        let w = machine("3.9", Filesystem::Ext4);
        let mut k = w.borrow_mut();
        let file = |k: &mut Kernel, pages: u64| {
            let ino = new_file(k);
            k.inodes[ino].size_pages = pages;
            ino
        };
        let (a, b, c, d) = (
            file(&mut k, 3),
            file(&mut k, 15),
            file(&mut k, 16),
            file(&mut k, 2),
        );
        let s = PAGE_SECTORS as u64;
        let base = EXT4.map_block(&mut k, a, 0);
        assert_eq!(EXT4.map_block(&mut k, a, 2), base + 2 * s);
        assert_eq!(
            EXT4.map_block(&mut k, b, 0),
            base + 3 * s,
            "right after a's 3 pages"
        );
        assert_eq!(EXT4.map_block(&mut k, b, 14), base + 17 * s);
        assert_eq!(
            EXT4.map_block(&mut k, c, 1),
            base + 19 * s,
            "c's extent starts at page 0"
        );
        assert_eq!(
            EXT4.map_block(&mut k, d, 0),
            base + (18 + EXT4_EXTENT_PAGES) * s,
            "after c's whole extent"
        );
        // Mapped blocks stay where they were put.
        assert_eq!(EXT4.map_block(&mut k, a, 1), base + s);
        assert_eq!(EXT4.map_block(&mut k, c, 15), base + 33 * s);
        // a grows to 40 pages: its new extent starts where its small one ended, so its
        // first pages keep their blocks.
        k.inodes[a].size_pages = 40;
        let d_end = base + (20 + EXT4_EXTENT_PAGES) * s;
        assert_eq!(EXT4.map_block(&mut k, a, 10), d_end + 7 * s);
        assert_eq!(EXT4.map_block(&mut k, a, 3), d_end);
        assert_eq!(EXT4.map_block(&mut k, a, 2), base + 2 * s);
        // A page past the recorded size (not yet grown) still gets its block.
        let (e, f) = (file(&mut k, 0), file(&mut k, 1));
        let e0 = EXT4.map_block(&mut k, e, 0);
        assert_eq!(EXT4.map_block(&mut k, e, 0), e0);
        assert_eq!(EXT4.map_block(&mut k, f, 0), e0 + s);
        // A small file first mapped part-way gets the pages from there to its end.
        let (g, h) = (file(&mut k, 5), file(&mut k, 1));
        let g2 = EXT4.map_block(&mut k, g, 2);
        assert_eq!(EXT4.map_block(&mut k, h, 0), g2 + 3 * s);
        // A streaming extent is aligned to its size in the file.
        let big = file(&mut k, 3 * EXT4_EXTENT_PAGES);
        let at = EXT4.map_block(&mut k, big, EXT4_EXTENT_PAGES + 8);
        assert_eq!(
            at,
            g2 + 4 * s + 8 * s,
            "8 pages into an extent right after h's page"
        );
        assert_eq!(EXT4.map_block(&mut k, big, EXT4_EXTENT_PAGES), at - 8 * s);
        assert_eq!(
            EXT4.map_block(&mut k, big, 2 * EXT4_EXTENT_PAGES - 1),
            at + (EXT4_EXTENT_PAGES - 9) * s
        );
    }

    /// ext2's `writepage` from reclaim (`block_write_full_page`): kswapd and direct reclaim
    /// alike get the page written, its block allocated if it had none: buffers locked, the
    /// page under writeback, a one-page async write at the block's sector. ext4 redirties
    /// the same page, whose block is still delayed.
    #[test]
    fn ext2_writepage_writes_the_page_for_every_reclaimer() {
        use crate::fs::buffer::testing::{machine, new_file, written_page};
        use crate::fs::Filesystem;
        use crate::mm::page::{PG_BH_LOCKED, PG_DIRTY, PG_WRITEBACK};
        use crate::mm::page_writeback::clear_page_dirty_for_io;
        use crate::mm::vmstat::ZoneStat;
        for kswapd in [true, false] {
            let wbc = WritebackControl::for_reclaim(kswapd);
            let w = machine("3.9", Filesystem::Ext2);
            let mut k = w.borrow_mut();
            let ino = new_file(&mut k);
            let pfn = written_page(&mut k, ino, 3);
            assert!(k.pages.test(pfn, PG_PRIVATE) && k.pages.test(pfn, PG_BH_DIRTY));
            assert!(
                !EXT2.writepage_declines(&k, pfn, &wbc),
                "a write, its block not allocated yet"
            );
            assert!(clear_page_dirty_for_io(&mut k, pfn));
            let sector = match EXT2.writepage(&mut k, pfn, &wbc, &mut None) {
                WritePage::Submit { bdi: 0, bio } => {
                    assert_eq!(
                        (bio.dir, bio.sync, bio.nr_sectors, bio.tag),
                        (Dir::Write, false, PAGE_SECTORS, pfn as u64)
                    );
                    bio.sector
                }
                other => panic!("kswapd={kswapd}: {other:?}"),
            };
            assert_eq!(k.inodes[ino].sector_of(3), Some(sector), "block allocated");
            let f = k.pages.flags[pfn as usize];
            assert_eq!(
                f & (PG_DIRTY | PG_WRITEBACK | PG_BH_DIRTY | PG_BH_LOCKED),
                PG_WRITEBACK | PG_BH_LOCKED,
                "kswapd={kswapd}"
            );
            assert_eq!(k.global_stat(ZoneStat::nr_writeback), 1);
            crate::mm::invariants::check(&k).expect("invariants");

            // ext4's page of the same write: redirtied, no IO, no block.
            let w = machine("3.9", Filesystem::Ext4);
            let mut k = w.borrow_mut();
            let ino = new_file(&mut k);
            let pfn = written_page(&mut k, ino, 3);
            assert!(EXT4.writepage_declines(&k, pfn, &wbc));
            assert!(clear_page_dirty_for_io(&mut k, pfn));
            assert_eq!(
                EXT4.writepage(&mut k, pfn, &wbc, &mut None),
                WritePage::Redirtied
            );
            assert!(k.pages.test(pfn, PG_DIRTY) && !k.pages.test(pfn, PG_WRITEBACK));
            assert_eq!(k.inodes[ino].sector_of(3), None);
        }
    }

    /// kswapd reclaiming a dirty ext2 page from an LRU tail flagged ZONE_TAIL_LRU_DIRTY:
    /// `pageout` hands it to ext2's `writepage`, the write reaches the disk, and the page,
    /// PG_reclaim, is kept until its IO completes; then it is clean, its buffers unlocked.
    #[test]
    fn kswapd_writes_a_dirty_ext2_page_through_its_writepage() {
        use crate::fs::buffer::testing::{machine, new_file, written_page};
        use crate::fs::Filesystem;
        use crate::mm::mmzone::zone_flags::ZONE_TAIL_LRU_DIRTY;
        use crate::mm::page::{PG_BH_LOCKED, PG_DIRTY, PG_RECLAIM, PG_REFERENCED, PG_WRITEBACK};
        use crate::mm::vmscan::testing::{isolate_all, putback, sc_at, Z};
        use crate::mm::vmscan::{shrink_page_list, PageListStats, DEF_PRIORITY};
        use crate::mm::vmstat::ZoneStat;
        let w = machine("lessdisrupt-v7r10", Filesystem::Ext2);
        let (pfn, mut list) = {
            let mut k = w.borrow_mut();
            let ino = new_file(&mut k);
            let pfn = written_page(&mut k, ino, 0);
            k.pages.clear(pfn, PG_REFERENCED);
            k.zones[Z].set_flag(ZONE_TAIL_LRU_DIRTY);
            let list = isolate_all(&mut k, &[pfn]);
            k.zones[Z].mod_stat(ZoneStat::nr_isolated_file, 1);
            (pfn, list)
        };
        let w2 = w.clone();
        crate::sim::run_task(&w, crate::engine::SEC, async move {
            let mut sc = sc_at(DEF_PRIORITY, true);
            let mut st = PageListStats::default();
            let freed = shrink_page_list(&w2, Z, &mut sc, &mut list, &mut st).await;
            let mut k = w2.borrow_mut();
            assert_eq!(freed, 0, "kept while its write is in flight");
            assert!(k.pages.test(pfn, PG_WRITEBACK | PG_BH_LOCKED | PG_RECLAIM));
            assert!(!k.pages.test(pfn, PG_DIRTY | PG_BH_DIRTY));
            assert_eq!(k.global_stat(ZoneStat::nr_vmscan_write), 1);
            assert_eq!(k.bdis[0].queue.in_flight(), 1, "one request on the disk");
            putback(&mut k, Z, &list);
            k.zones[Z].mod_stat(ZoneStat::nr_isolated_file, -(list.len() as i64));
        });
        let k = w.borrow();
        assert!(!k.pages.test(pfn, PG_WRITEBACK | PG_BH_LOCKED | PG_DIRTY));
        assert_eq!(k.bdis[0].queue.stats().sectors_written, PAGE_SECTORS as u64);
        crate::mm::invariants::check(&k).expect("invariants after the write");
    }
}
