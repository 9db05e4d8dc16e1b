//! Filesystems: inodes and their page-cache index (`fs/inode.c`, `include/linux/fs.h`).
//! Writeback lists, filesystem personalities and the flusher join here with issue 3; `nfs`
//! is the NFS client's write path.

pub mod fs_writeback;
pub mod inode;
pub mod nfs;
