//! Filesystems: inodes and their page-cache index (`fs/inode.c`, `include/linux/fs.h`),
//! the flusher (`fs/fs-writeback.c`), buffer heads (`fs/buffer.c`), ext3's journal
//! (`fs/jbd/`) and the NFS client's write path (`fs/nfs/`).

pub mod buffer;
pub mod fs_writeback;
pub mod inode;
pub mod jbd;
pub mod nfs;
