//! Filesystems, behind the operations `mm` calls (`mm::fs_ops::AddressSpaceOps`): the
//! filesystems on block devices and the raw device (`block_fs`: ext2, ext3, ext4, xfs,
//! btrfs, `def_blk_aops`), buffer heads (`fs/buffer.c`), ext3's journal (`fs/jbd/`) and
//! ext4's (`fs/jbd2/`), xfs's ioends (`fs/xfs/`), the
//! NFS client (`fs/nfs/`), and the flusher (`fs/fs-writeback.c`). `fs` uses `mm`; `mm`
//! never names a filesystem.

pub mod block_fs;
pub mod btrfs;
pub mod buffer;
pub mod fs_writeback;
pub mod jbd;
pub mod jbd2;
pub mod nfs;
pub mod xfs;

use crate::mm::fs_ops::AddressSpaceOps;
use block_fs::BlockFs;

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
    /// ext2: buffer heads and no journal; `writepage` (`block_write_full_page`) writes for
    /// every caller, reclaim included.
    Ext2,
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

impl Filesystem {
    /// Every filesystem, in the order the scenario format lists them.
    pub const ALL: [Filesystem; 7] = [
        Filesystem::Ext4,
        Filesystem::Ext3,
        Filesystem::Ext2,
        Filesystem::Xfs,
        Filesystem::Btrfs,
        Filesystem::Raw,
        Filesystem::Nfs,
    ];

    /// Its name in a scenario (`filesystem = "ext4"`).
    pub fn name(self) -> &'static str {
        match self {
            Filesystem::Ext4 => "ext4",
            Filesystem::Ext3 => "ext3",
            Filesystem::Ext2 => "ext2",
            Filesystem::Xfs => "xfs",
            Filesystem::Btrfs => "btrfs",
            Filesystem::Raw => "raw",
            Filesystem::Nfs => "nfs",
        }
    }

    /// The filesystem called `name` in a scenario.
    pub fn from_name(name: &str) -> Option<Filesystem> {
        Filesystem::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The local filesystem's (or raw device's) table; `None` for a network filesystem.
    fn block_fs(self) -> Option<&'static BlockFs> {
        match self {
            Filesystem::Ext4 => Some(&block_fs::EXT4),
            Filesystem::Ext3 => Some(&block_fs::EXT3),
            Filesystem::Ext2 => Some(&block_fs::EXT2),
            Filesystem::Xfs => Some(&block_fs::XFS),
            Filesystem::Btrfs => Some(&block_fs::BTRFS),
            Filesystem::Raw => Some(&block_fs::BLOCKDEV),
            Filesystem::Nfs => None,
        }
    }

    /// Its operations, which its mounts and their inodes take (`mapping->a_ops`).
    pub fn aops(self) -> &'static dyn AddressSpaceOps {
        match self.block_fs() {
            Some(b) => b,
            None => &nfs::NFS_AOPS,
        }
    }

    /// Whether a mount of it has a jbd journal and its thread, kjournald (ext3).
    pub fn has_journal(self) -> bool {
        self.block_fs().is_some_and(BlockFs::has_journal)
    }

    /// Whether a mount of it ends writeback in ioends (xfs, `fs::xfs`).
    pub fn has_ioends(self) -> bool {
        self.block_fs().is_some_and(BlockFs::has_ioends)
    }

    /// Whether a mount of it has a bio submit worker (btrfs, `fs::btrfs`).
    pub fn has_submit_worker(self) -> bool {
        self.block_fs().is_some_and(BlockFs::has_submit_worker)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_filesystem_is_found_by_its_name_and_has_its_own_operations() {
        for fs in Filesystem::ALL {
            assert_eq!(Filesystem::from_name(fs.name()), Some(fs));
            assert_eq!(
                fs.aops().name().to_lowercase(),
                fs.name(),
                "{fs:?}'s messages name it"
            );
            assert_eq!(fs.has_journal(), fs == Filesystem::Ext3, "{fs:?}");
        }
        assert_eq!(Filesystem::from_name("ext5"), None);
    }
}
