//! Filesystems: inodes and their page-cache index (`fs/inode.c`, `include/linux/fs.h`),
//! the flusher (`fs/fs-writeback.c`), buffer heads (`fs/buffer.c`), ext3's journal
//! (`fs/jbd/`) and the NFS client's write path (`fs/nfs/`).

pub mod buffer;
pub mod fs_writeback;
pub mod inode;
pub mod jbd;
pub mod nfs;

/// The filesystems a `[[device]]` may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Filesystem {
    /// ext4 with delayed allocation: blocks are allocated at writeback; reclaim's
    /// `writepage` redirties pages whose blocks are not allocated yet.
    Ext4,
    /// ext3 (data=ordered): blocks are allocated at `write()`; pages carry buffer heads, and
    /// the journal writes a transaction's dirty data buffers every commit interval (5 s)
    /// without PG_writeback (`fs::jbd`). `writepage` writes only dirty buffers.
    Ext3,
    /// xfs (delayed allocation): `xfs_vm_writepage` refuses direct reclaim and writes for
    /// kswapd, allocating blocks if needed.
    Xfs,
    /// btrfs: `btrfs_writepage` refuses every reclaimer (`PF_MEMALLOC`).
    Btrfs,
    /// No filesystem (a raw block device or a swap partition).
    Raw,
    /// An NFS mount (`type = "nfs"` only): no block allocation; pages go to the server in
    /// WRITE RPCs and stay "unstable" until a COMMIT; reclaim's `writepage` writes
    /// FILE_SYNC.
    Nfs,
}

/// What a filesystem's `->writepage` does with a page reclaim hands it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReclaimWrite {
    /// Start IO on the page.
    Write,
    /// `redirty_page_for_writepage`: keep it dirty, start no IO.
    Redirty,
}

/// What reclaim's `writepage` and block placement depend on, per filesystem.
impl Filesystem {
    /// Whether blocks are allocated at writeback rather than at `write()`.
    pub fn delayed_allocation(self) -> bool {
        matches!(self, Filesystem::Ext4 | Filesystem::Xfs | Filesystem::Btrfs)
    }

    /// Whether file pages carry buffer heads (`fs/buffer.c`): ext3 and block devices
    /// (`def_blk_aops`). Their `writepage` is `block_write_full_page` and their
    /// `is_dirty_writeback` hook is `buffer_check_dirty_writeback` (LD patch 7).
    pub fn uses_buffer_heads(self) -> bool {
        matches!(self, Filesystem::Ext3 | Filesystem::Raw)
    }

    /// Whether the filesystem has a jbd journal in data=ordered mode (ext3's default): data
    /// buffers dirtied in a transaction are written by the journal before it commits.
    pub fn ordered_data_journal(self) -> bool {
        matches!(self, Filesystem::Ext3)
    }

    /// Whether the filesystem allocates blocks of its device for file pages (a raw device
    /// maps pages one to one; NFS leaves placement to the server).
    pub fn allocates_blocks(self) -> bool {
        !matches!(self, Filesystem::Raw | Filesystem::Nfs)
    }

    /// The filesystem's answer to `writepage` from reclaim (3.x), for a page whose blocks are
    /// (`mapped`) or are not yet allocated, from kswapd or direct reclaim. `nfs_writepage`
    /// writes for every reclaimer, asking FILE_SYNC (`fs::nfs::nfs_writepage`).
    pub fn writepage_for_reclaim(self, kswapd: bool, mapped: bool) -> ReclaimWrite {
        match self {
            Filesystem::Raw | Filesystem::Ext3 | Filesystem::Nfs => ReclaimWrite::Write,
            Filesystem::Ext4 if mapped => ReclaimWrite::Write,
            Filesystem::Ext4 => ReclaimWrite::Redirty,
            Filesystem::Xfs if kswapd => ReclaimWrite::Write,
            Filesystem::Xfs | Filesystem::Btrfs => ReclaimWrite::Redirty,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 3: each filesystem's answer to reclaim's `writepage` (3.x sources:
    /// `ext4_writepage`, `xfs_vm_writepage`, `btrfs_writepage`, `ext3_ordered_writepage`).
    #[test]
    fn each_filesystem_answers_reclaims_writepage_as_its_3x_code_does() {
        use Filesystem::*;
        use ReclaimWrite::*;
        // (fs, from kswapd, blocks allocated) -> answer
        let cases = [
            (Ext4, true, false, Redirty),
            (Ext4, true, true, Write),
            (Ext4, false, true, Write),
            (Xfs, true, false, Write),
            (Xfs, false, true, Redirty),
            (Btrfs, true, true, Redirty),
            (Btrfs, false, false, Redirty),
            (Ext3, false, true, Write),
            (Ext3, true, true, Write),
            (Raw, true, true, Write),
        ];
        for (fs, kswapd, mapped, answer) in cases {
            assert_eq!(
                fs.writepage_for_reclaim(kswapd, mapped),
                answer,
                "{fs:?} kswapd={kswapd} mapped={mapped}"
            );
        }
        assert!(
            Ext4.delayed_allocation() && Xfs.delayed_allocation() && Btrfs.delayed_allocation()
        );
        assert!(!Ext3.delayed_allocation() && !Raw.delayed_allocation());
        // Buffer heads: ext3 and block devices (def_blk_aops); a journal: ext3 only.
        for fs in [Ext4, Xfs, Btrfs, Ext3, Raw] {
            assert_eq!(fs.uses_buffer_heads(), matches!(fs, Ext3 | Raw), "{fs:?}");
            assert_eq!(fs.ordered_data_journal(), fs == Ext3, "{fs:?}");
        }
    }
}
