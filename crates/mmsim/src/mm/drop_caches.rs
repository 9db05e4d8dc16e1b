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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::page::PG_LOCKED;
    use crate::mm::{inode, invariants, World};

    /// A 256 MiB machine whose root filesystem holds `files` cached, unused system files.
    fn machine(files: u64) -> World {
        let mut s = crate::sim::scenario_for_test(256, 0);
        s.slab.files = files;
        let kernel = crate::presets::resolve("3.9", &[]).expect("3.9");
        crate::sim::boot(&s, &kernel, 1).expect("boots")
    }

    /// File `name`, held in memory, with `pages` clean cached pages.
    fn cached(k: &mut Kernel, name: &str, pages: u64) -> (usize, Vec<crate::mm::page::Pfn>) {
        let ino = inode::new_inode(k, name, 0);
        let pfns = crate::mm::vmscan::testing::cache_clean_pages(k, ino, pages);
        (ino, pfns)
    }

    #[test]
    fn mode_1_drops_clean_page_cache_and_passes_over_a_locked_page() {
        let w = machine(20_000);
        let mut k = w.borrow_mut();
        let (ino, pfns) = cached(&mut k, "f", 64);
        k.pages.set(pfns[7], PG_LOCKED);
        let free = crate::mm::page_alloc::free_or_on_cpu_lists(&k);
        let slab = k.slab.nr_pages();
        drop_caches_sysctl(&mut k, 1);
        assert_eq!(k.inodes[ino].cached().count(), 1, "the locked page stays");
        assert_eq!(crate::mm::page_alloc::free_or_on_cpu_lists(&k), free + 63);
        assert_eq!(k.slab.nr_pages(), slab, "mode 1 leaves the slab alone");
        k.pages.clear(pfns[7], PG_LOCKED);
        invariants::check(&k).unwrap();
    }

    #[test]
    fn mode_2_prunes_unused_dentries_and_inodes_of_a_large_cache_only() {
        let w = machine(20_000);
        let mut k = w.borrow_mut();
        let (ino, _) = cached(&mut k, "f", 16);
        let (dentries, slab) = (k.dcache.nr_dentry, k.slab.nr_pages());
        assert!(dentries >= 20_000, "{dentries}");
        drop_caches_sysctl(&mut k, 2);
        assert!(
            k.dcache.nr_dentry < dentries / 10 && k.icache.nr_inodes < dentries / 10,
            "{} dentries, {} inodes left",
            k.dcache.nr_dentry,
            k.icache.nr_inodes
        );
        assert!(
            k.slab.nr_pages() < slab / 5,
            "{} of {slab}",
            k.slab.nr_pages()
        );
        assert_eq!(
            k.inodes[ino].cached().count(),
            16,
            "mode 2 leaves the page cache"
        );
        invariants::check(&k).unwrap();
        // Under a shrinker batch of objects, 3.x's drop_slab scans nothing.
        let w = machine(400);
        let mut k = w.borrow_mut();
        let dentries = k.dcache.nr_dentry;
        drop_caches_sysctl(&mut k, 2);
        assert_eq!(k.dcache.nr_dentry, dentries);
    }
}
