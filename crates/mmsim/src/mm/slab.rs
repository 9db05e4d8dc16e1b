//! The reclaimable slab: dentries and inodes, shrunk by the superblock shrinker in
//! proportion to LRU scanning (`shrink_slab`, `kernel-reclaim.md` §6).
//!
//! mmsim deviation: objects are packed densely, so freeing objects frees slab pages in
//! proportion (real slabs fragment). No object has page cache yet, so inode steals stay 0
//! until the page cache is modelled.

use super::page::{Pfn, PG_SLAB};
use super::vmstat::{VmEvent, ZoneStat};
use super::Kernel;
use crate::calibration::PAGE_SIZE;

/// `DEFAULT_SEEKS`.
pub const DEFAULT_SEEKS: u64 = 2;
/// The superblock shrinker's batch (`sb->s_shrink.batch`).
pub const SB_SHRINK_BATCH: u64 = 1024;

/// The dentry/inode cache.
#[derive(Clone, Debug, Default)]
pub struct Slab {
    /// Live objects.
    pub objects: u64,
    /// Bytes per object.
    pub object_size: u64,
    /// Slab pages held.
    pub pages: Vec<Pfn>,
    /// Scan work carried over between calls (`shrinker->nr_in_batch`).
    pub nr_deferred: u64,
}

impl Slab {
    /// Pages the live objects need.
    pub fn pages_needed(&self) -> usize {
        let per_page = (PAGE_SIZE / self.object_size.max(1)).max(1);
        self.objects.div_ceil(per_page) as usize
    }
}

/// `shrink_slab`: scan the cache in proportion to `nr_scanned / lru_pages`; returns objects
/// freed. Pages released are added to `reclaimed_slab`. `gfp` is the reclaimer's mask
/// (`sc->gfp_mask`), only traced.
pub fn shrink_slab(
    k: &mut Kernel,
    gfp: super::Gfp,
    nr_scanned: u64,
    lru_pages: u64,
    reclaimed_slab: &mut u64,
) -> u64 {
    let nr_scanned = if nr_scanned == 0 { 32 } else { nr_scanned };
    let max_pass = k.slab.objects * k.vm.vfs_cache_pressure as u64 / 100;
    if max_pass == 0 {
        return 0;
    }
    let carry = std::mem::take(&mut k.slab.nr_deferred);
    let delta = (4 * nr_scanned / DEFAULT_SEEKS) * max_pass / (lru_pages + 1);
    let mut total = carry + delta;
    if delta < max_pass / 4 {
        total = total.min(max_pass / 2);
    }
    total = total.min(2 * max_pass);
    super::trace::mm_shrink_slab_start(
        k, gfp, carry, nr_scanned, lru_pages, max_pass, delta, total,
    );
    let mut freed = 0;
    // The shrinker's last answer: what is left after its last batch (0 if never called).
    let mut shrink_ret = 0;
    while total >= SB_SHRINK_BATCH {
        let n = SB_SHRINK_BATCH.min(k.slab.objects);
        if n == 0 {
            break;
        }
        // prune_dcache_sb / prune_icache_sb: unused objects are freed.
        k.slab.objects -= n;
        freed += n;
        shrink_ret = k.slab.objects * k.vm.vfs_cache_pressure as u64 / 100;
        k.count(VmEvent::slabs_scanned, SB_SHRINK_BATCH);
        total -= SB_SHRINK_BATCH;
    }
    k.slab.nr_deferred = total;
    if super::trace::enabled(k) {
        super::trace::mm_shrink_slab_end(k, shrink_ret as i64, carry, total);
    }
    while k.slab.pages.len() > k.slab.pages_needed() {
        let pfn = k.slab.pages.pop().expect("non-empty");
        let zi = k.page_zone(pfn);
        k.zones[zi].mod_stat(ZoneStat::nr_slab_reclaimable, -1);
        k.pages.clear(pfn, PG_SLAB);
        super::page_alloc::free_page(k, pfn);
        *reclaimed_slab += 1;
    }
    freed
}
