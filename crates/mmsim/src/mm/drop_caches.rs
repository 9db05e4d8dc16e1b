//! `/proc/sys/vm/drop_caches` (`fs/drop_caches.c`): 1 drops the clean, unused page cache,
//! 2 the reclaimable slab, 3 both.

use super::super_block::PruneCx;
use super::{filemap, slab, Gfp, Kernel};

/// `drop_pagecache_sb` over every file: `invalidate_mapping_pages` of the whole file. Dirty,
/// mapped, locked and under-writeback pages stay. Returns the pages dropped.
pub fn drop_pagecache(k: &mut Kernel) -> u64 {
    let mut cx = PruneCx {
        gfp: Gfp::KERNEL,
        kswapd: false,
        cpu: 0,
        reap: 0,
    };
    (0..k.inodes.len())
        .map(|ino| filemap::invalidate_mapping_pages(k, ino, &mut cx))
        .sum()
}

/// `drop_slab`: `shrink_slab(1000, 1000)` until a call frees 10 objects or fewer. A
/// superblock with fewer objects than a shrinker batch (1,024) is never scanned, as in
/// the 3.x kernels.
pub fn drop_slab(k: &mut Kernel) {
    while slab::shrink_slab(k, Gfp::KERNEL, false, 1000, 1000).ret > 10 {}
}

/// A write of `mode` to `drop_caches`.
pub fn drop_caches_sysctl(k: &mut Kernel, mode: u32) {
    if mode & 1 != 0 {
        drop_pagecache(k);
    }
    if mode & 2 != 0 {
        drop_slab(k);
    }
}
