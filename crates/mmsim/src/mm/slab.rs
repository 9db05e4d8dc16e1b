//! The reclaimable slab caches (`mm/slub.c`) and `shrink_slab` (`mm/vmscan.c`,
//! `kernel-reclaim.md` §6).
//!
//! Three caches, all `SLAB_RECLAIM_ACCOUNT` as in 3.9, so their pages count in
//! `nr_slab_reclaimable`:
//! - `dentry` (`fs/dcache.c`), 192-byte objects;
//! - `inode`, the filesystems' inodes (`ext4_inode_cache`, `nfs_inode_cache`, ... in the
//!   kernel; mmsim keeps one cache for all, `[slab] inode_size` bytes an object);
//! - `buffer_head` (`fs/buffer.c`), 104-byte objects, one per page of a filesystem with
//!   buffer heads (4 KiB blocks). No shrinker scans it: buffer heads go with their page
//!   (`try_to_free_buffers`).
//!
//! Slab pages come from the buddy allocator one page at a time and go back to it when their
//! last object is freed, so fragmentation is modelled at page granularity: a page holding a
//! single live object stays allocated. A new object goes into the partially used page with
//! the lowest index (SLUB takes the CPU's slab, then the node's partial list: mmsim has
//! neither), and an empty page is freed at once (SLUB may keep up to `min_partial`, 5 to
//! 10, empty slabs per cache: mmsim keeps none). The kernel's order-3 slabs of large
//! objects are order-0 pages here, which holds the same number of objects per page.
//!
//! The shrinkers are the superblocks' (`mm::super_block::prune_super`), one per mounted
//! filesystem and one for the system's root filesystem, each with its own deferred count.

use super::page::{Pfn, NIL, PG_SLAB};
use super::page_alloc::{self, alloc_flags, AllocError};
use super::vmstat::{VmEvent, ZoneStat};
use super::{super_block, Gfp, Kernel, World};
use crate::calibration::PAGE_SIZE;
use crate::engine::Nanos;
use std::collections::BTreeSet;

/// `DEFAULT_SEEKS`.
pub const DEFAULT_SEEKS: u64 = 2;
/// The superblock shrinker's batch (`sb->s_shrink.batch`).
pub const SB_SHRINK_BATCH: u64 = 1024;
/// `sizeof(struct dentry)` on x86-64 3.x: `DNAME_INLINE_LEN` is chosen for 192 bytes
/// (`include/linux/dcache.h`).
pub const DENTRY_SIZE: u64 = 192;
/// `sizeof(struct buffer_head)` on x86-64 3.x: twelve fields of 8 bytes (a list head is
/// two) and a 4-byte count, aligned to 8 (`include/linux/buffer_head.h`).
pub const BUFFER_HEAD_SIZE: u64 = 104;

/// The caches mmsim keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheId {
    /// `dentry`.
    Dentry = 0,
    /// The filesystems' inodes.
    Inode = 1,
    /// `buffer_head`.
    BufferHead = 2,
}

impl CacheId {
    /// Every cache, in `/proc/slabinfo`'s order of creation here.
    pub const ALL: [CacheId; 3] = [CacheId::Dentry, CacheId::Inode, CacheId::BufferHead];
}

/// One slab page of a cache.
#[derive(Clone, Copy, Debug)]
struct SlabPage {
    /// Its frame; `NIL` while the entry is unused.
    pfn: Pfn,
    /// Objects allocated in it.
    inuse: u32,
}

/// One slab cache (`struct kmem_cache`).
#[derive(Clone, Debug)]
pub struct KmemCache {
    /// Its name in `/proc/slabinfo`.
    pub name: &'static str,
    /// Bytes per object.
    pub object_size: u64,
    /// Objects one page holds.
    pub objects_per_slab: u32,
    /// Slab pages, by index; an object records the index of its page.
    slabs: Vec<SlabPage>,
    /// Unused entries of `slabs`, reused first.
    unused: Vec<u32>,
    /// Pages with room for another object.
    partial: BTreeSet<u32>,
    /// Live objects (`active_objs`).
    pub active_objs: u64,
    /// Slab pages held (`num_slabs`).
    pub num_slabs: u64,
}

impl KmemCache {
    /// An empty cache of `object_size`-byte objects.
    pub fn new(name: &'static str, object_size: u64) -> KmemCache {
        KmemCache {
            name,
            object_size,
            objects_per_slab: (PAGE_SIZE / object_size.clamp(1, PAGE_SIZE)) as u32,
            slabs: Vec::new(),
            unused: Vec::new(),
            partial: BTreeSet::new(),
            active_objs: 0,
            num_slabs: 0,
        }
    }

    /// Whether an object can be allocated without a new page.
    pub fn has_free_object(&self) -> bool {
        !self.partial.is_empty()
    }

    /// Take an object from the lowest partially used page; its page index.
    fn take(&mut self) -> Option<u32> {
        let s = *self.partial.first()?;
        let page = &mut self.slabs[s as usize];
        page.inuse += 1;
        if page.inuse == self.objects_per_slab {
            self.partial.remove(&s);
        }
        self.active_objs += 1;
        Some(s)
    }

    /// A new, empty slab page at `pfn`; its index.
    fn add_page(&mut self, pfn: Pfn) -> u32 {
        let page = SlabPage { pfn, inuse: 0 };
        let s = match self.unused.pop() {
            Some(s) => {
                self.slabs[s as usize] = page;
                s
            }
            None => {
                self.slabs.push(page);
                self.slabs.len() as u32 - 1
            }
        };
        self.partial.insert(s);
        self.num_slabs += 1;
        s
    }

    /// Free an object of page `s`; the page's frame if that was its last object.
    fn put(&mut self, s: u32) -> Option<Pfn> {
        let page = &mut self.slabs[s as usize];
        assert!(
            page.pfn != NIL && page.inuse > 0,
            "{}: object freed from slab page {s}, which holds none",
            self.name
        );
        page.inuse -= 1;
        self.active_objs -= 1;
        if page.inuse > 0 {
            self.partial.insert(s);
            return None;
        }
        let pfn = std::mem::replace(&mut page.pfn, NIL);
        self.partial.remove(&s);
        self.unused.push(s);
        self.num_slabs -= 1;
        Some(pfn)
    }

    /// The frames of the slab pages held.
    pub fn pages(&self) -> impl Iterator<Item = Pfn> + '_ {
        self.slabs.iter().filter(|p| p.pfn != NIL).map(|p| p.pfn)
    }

    /// Objects in use in page `s`, if it is a page held (for checks).
    pub fn inuse(&self, s: u32) -> Option<u32> {
        self.slabs
            .get(s as usize)
            .filter(|p| p.pfn != NIL)
            .map(|p| p.inuse)
    }

    /// Objects in use summed over the pages held (for checks).
    pub fn inuse_total(&self) -> u64 {
        self.slabs
            .iter()
            .filter(|p| p.pfn != NIL)
            .map(|p| p.inuse as u64)
            .sum()
    }
}

/// The slab caches.
#[derive(Clone, Debug)]
pub struct Slab {
    /// Indexed by [`CacheId`].
    pub caches: [KmemCache; 3],
    /// Slab pages freed so far (reclaim adds its share to `reclaim_state->reclaimed_slab`).
    pub pages_freed: u64,
}

impl Slab {
    /// Empty caches, inodes of `inode_size` bytes.
    pub fn new(inode_size: u64) -> Slab {
        Slab {
            caches: [
                KmemCache::new("dentry", DENTRY_SIZE),
                KmemCache::new("inode_cache", inode_size),
                KmemCache::new("buffer_head", BUFFER_HEAD_SIZE),
            ],
            pages_freed: 0,
        }
    }

    /// The cache `id`.
    #[inline]
    pub fn cache(&self, id: CacheId) -> &KmemCache {
        &self.caches[id as usize]
    }

    /// Slab pages held by all caches.
    pub fn nr_pages(&self) -> u64 {
        self.caches.iter().map(|c| c.num_slabs).sum()
    }
}

impl Default for Slab {
    fn default() -> Self {
        Slab::new(1024)
    }
}

/// Put a new object in a table of objects by id (dentries, inodes): into a freed entry if
/// there is one, with its LRU links cleared. Returns its id.
pub fn insert_object<T>(
    items: &mut Vec<T>,
    links: &mut Vec<[u32; 2]>,
    free: &mut Vec<u32>,
    item: T,
) -> u32 {
    match free.pop() {
        Some(id) => {
            items[id as usize] = item;
            links[id as usize] = [NIL; 2];
            id
        }
        None => {
            items.push(item);
            links.push([NIL; 2]);
            items.len() as u32 - 1
        }
    }
}

/// The flags SLUB's `allocate_slab` adds for a page of a `SLAB_RECLAIM_ACCOUNT` cache
/// (3.9): `__GFP_NOTRACK` and `__GFP_RECLAIMABLE`.
fn slab_gfp(gfp: Gfp) -> Gfp {
    Gfp(gfp.0 | Gfp::RECLAIMABLE | Gfp::NOTRACK)
}

/// A frame becomes a slab page of cache `id` (`allocate_slab`).
fn add_slab_page(k: &mut Kernel, id: CacheId, pfn: Pfn) {
    k.pages.set(pfn, PG_SLAB);
    let zi = k.page_zone(pfn);
    k.zones[zi].mod_stat(ZoneStat::nr_slab_reclaimable, 1);
    k.slab.caches[id as usize].add_page(pfn);
}

/// `kmem_cache_alloc` where the caller cannot sleep: an object of cache `id`, its page
/// taken from the free lists at the watermark `flags` allow (boot uses
/// `NO_WATERMARKS`) if no page has room. Returns the object's slab page index, or `None`
/// if no page could be had.
pub fn kmem_cache_alloc_now(k: &mut Kernel, id: CacheId, gfp: Gfp, flags: u32) -> Option<u32> {
    if let Some(s) = k.slab.caches[id as usize].take() {
        return Some(s);
    }
    let pfn = page_alloc::get_page_from_freelist(k, slab_gfp(gfp), 0, flags)?;
    add_slab_page(k, id, pfn);
    k.slab.caches[id as usize].take()
}

/// A buffer head for a page where mmsim cannot sleep (`alloc_buffer_head` with
/// `GFP_NOFS`): the min watermark first, then, as the kernel's `alloc_page_buffers`
/// retries until it gets one, below it. `write()` reserves its buffer heads beforehand
/// with [`kmem_cache_reserve`], so only pages dirtied without `write()` come here.
pub fn alloc_buffer_head_now(k: &mut Kernel) -> u32 {
    kmem_cache_alloc_now(k, CacheId::BufferHead, Gfp::NOFS, alloc_flags::WMARK_MIN)
        .or_else(|| {
            kmem_cache_alloc_now(
                k,
                CacheId::BufferHead,
                Gfp::NOFS,
                alloc_flags::NO_WATERMARKS,
            )
        })
        .unwrap_or_else(|| {
            k.fail("no free page at all for a buffer head's slab".into());
            NIL
        })
}

/// Make sure cache `id` has room for one more object, allocating a slab page with `gfp`
/// (which may reclaim) if it has none: the sleeping half of `kmem_cache_alloc` for callers
/// whose object is taken later without sleeping.
pub async fn kmem_cache_reserve(w: &World, id: CacheId, gfp: Gfp) -> Result<(), AllocError> {
    if w.borrow().slab.caches[id as usize].has_free_object() {
        return Ok(());
    }
    let pfn = page_alloc::alloc_pages(w, slab_gfp(gfp), 0).await?;
    let mut k = w.borrow_mut();
    if k.slab.caches[id as usize].has_free_object() {
        // Another task made room while this one slept.
        page_alloc::free_page(&mut k, pfn);
    } else {
        add_slab_page(&mut k, id, pfn);
    }
    Ok(())
}

/// `kmem_cache_alloc(cache, gfp)`: an object of cache `id`; its slab page index.
pub async fn kmem_cache_alloc(w: &World, id: CacheId, gfp: Gfp) -> Result<u32, AllocError> {
    loop {
        kmem_cache_reserve(w, id, gfp).await?;
        if let Some(s) = w.borrow_mut().slab.caches[id as usize].take() {
            return Ok(s);
        }
    }
}

/// `kmem_cache_free`: free an object of cache `id` in slab page `s`. A page left empty goes
/// back to the buddy allocator.
pub fn kmem_cache_free(k: &mut Kernel, id: CacheId, s: u32) {
    let Some(pfn) = k.slab.caches[id as usize].put(s) else {
        return;
    };
    let zi = k.page_zone(pfn);
    k.zones[zi].mod_stat(ZoneStat::nr_slab_reclaimable, -1);
    k.pages.clear(pfn, PG_SLAB);
    page_alloc::free_page(k, pfn);
    k.slab.pages_freed += 1;
}

/// What one `shrink_slab` call did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shrunk {
    /// Its return value: how far the shrinkers' counts fell, summed (the callers' `nr_slab`).
    pub ret: u64,
    /// Pages it freed: slab pages and the page cache of pruned inodes (`reclaimed_slab`).
    pub reclaimed_slab: u64,
    /// CPU time it used.
    pub cpu: Nanos,
}

/// `shrink_slab` (`kernel-reclaim.md` §6): each shrinker, a superblock's, scans its objects
/// in proportion to `nr_scanned / lru_pages`, in batches, carrying what is left to its next
/// call. `gfp` is the reclaimer's mask (`sc->gfp_mask`); `kswapd` says who reclaims
/// (`current_is_kswapd()`, for the inode-steal counters).
pub fn shrink_slab(
    k: &mut Kernel,
    gfp: Gfp,
    kswapd: bool,
    nr_scanned: u64,
    lru_pages: u64,
) -> Shrunk {
    let nr_scanned = if nr_scanned == 0 {
        super::vmscan::SWAP_CLUSTER_MAX
    } else {
        nr_scanned
    };
    let freed_before = k.slab.pages_freed;
    let mut out = Shrunk::default();
    let mut cx = super_block::PruneCx {
        gfp,
        kswapd,
        cpu: 0,
        reap: 0,
    };
    for sb in 0..k.super_blocks.len() {
        let max_pass = super_block::prune_super(k, sb, 0, &mut cx);
        if max_pass <= 0 {
            continue;
        }
        let max_pass = max_pass as u64;
        let carry = std::mem::take(&mut k.super_blocks[sb].nr_deferred);
        let delta = (4 * nr_scanned / DEFAULT_SEEKS) * max_pass / (lru_pages + 1);
        let mut total = carry + delta;
        if delta < max_pass / 4 {
            total = total.min(max_pass / 2);
        }
        total = total.min(2 * max_pass);
        super::trace::mm_shrink_slab_start(
            k, sb, gfp, carry, nr_scanned, lru_pages, max_pass, delta, total,
        );
        // The shrinker's last answer to a scan (0 if it was not asked to scan).
        let mut shrink_ret = 0;
        while total >= SB_SHRINK_BATCH {
            let nr_before = super_block::prune_super(k, sb, 0, &mut cx);
            shrink_ret = super_block::prune_super(k, sb, SB_SHRINK_BATCH, &mut cx);
            if shrink_ret == -1 {
                break;
            }
            if shrink_ret < nr_before {
                out.ret += (nr_before - shrink_ret) as u64;
            }
            k.count(VmEvent::slabs_scanned, SB_SHRINK_BATCH);
            total -= SB_SHRINK_BATCH;
        }
        k.super_blocks[sb].nr_deferred += total;
        if super::trace::enabled(k) {
            let new_nr = k.super_blocks[sb].nr_deferred;
            super::trace::mm_shrink_slab_end(k, sb, shrink_ret, carry, new_nr);
        }
    }
    out.reclaimed_slab = cx.reap + (k.slab.pages_freed - freed_before);
    out.cpu = cx.cpu;
    out
}

#[cfg(test)]
mod tests;
