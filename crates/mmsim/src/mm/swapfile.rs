//! Swap slots and the swap cache (`mm/swapfile.c`, `mm/swap_state.c`).
//!
//! `swap_map[slot]` holds the number of PTEs referring to the slot, plus `SWAP_HAS_CACHE`
//! while a page for it is in the swap cache; a slot is free when it reads 0. Slot 0 is the
//! swap header and never handed out.

use super::page::{Pfn, PG_DIRTY, PG_SWAPCACHE, PG_WRITEBACK};
use super::radix_tree::PageTree;
use super::Kernel;
use crate::engine::Nanos;

/// What `swapon` is given (the scenario's `[swap]`): the size of the swap area, where it
/// is, and the simple device model used when it is on no `[[device]]` (issue 2; the block
/// layer replaces it).
#[derive(Clone, Debug, PartialEq)]
pub struct SwapConfig {
    /// Bytes of swap space; a whole number of pages.
    pub size: u64,
    /// Time to read one page-cluster of pages that are not contiguous with the previous IO.
    pub read_latency: Nanos,
    /// Time a single page write is in flight.
    pub write_latency: Nanos,
    /// Sequential transfer rate in bytes per second.
    pub bandwidth: u64,
    /// A raw `[[device]]` holding the swap area: swap IO then goes through its request queue
    /// and disk model, and the three fields above are unused.
    pub device: Option<String>,
    /// Where the swap partition lies on a `device` that also holds a filesystem.
    pub placement: SwapPlacement,
}

/// Where a swap partition lies on a disk it shares with a filesystem. The distance between
/// the two is the seek every switch between swap IO and file IO pays.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SwapPlacement {
    /// The disk's last `size` bytes, the filesystem from the disk's start.
    #[default]
    End,
    /// The disk's first `size` bytes (where installers put swap), the filesystem `gap`
    /// bytes after it (the partitions between them).
    Start {
        /// Bytes between the swap partition's end and the filesystem's start.
        gap: u64,
    },
}

impl SwapPlacement {
    /// The first sectors of the swap area and of the filesystem on a disk of
    /// `disk_bytes` holding `swap_bytes` of swap.
    pub fn sectors(self, disk_bytes: u64, swap_bytes: u64) -> (u64, u64) {
        match self {
            SwapPlacement::End => ((disk_bytes - swap_bytes) / 512, 0),
            SwapPlacement::Start { gap } => (0, (swap_bytes + gap) / 512),
        }
    }
}

/// The slot has a page in the swap cache.
pub const SWAP_HAS_CACHE: u8 = 0x40;
/// Mask of the reference count.
pub const SWAP_COUNT_MASK: u8 = 0x3f;

/// Slots one chunk of a [`SwapMap`] covers.
const MAP_CHUNK: usize = 1024;

/// `swap_map`: a byte a slot. The kernel allocates it whole at `swapon`; here it is kept in
/// chunks, each made when one of its slots is first used and dropped when all of them are
/// free again, so a run's heap grows with the swap it uses rather than the area's size.
#[derive(Clone, Debug, Default)]
pub struct SwapMap {
    chunks: Vec<Option<Box<[u8; MAP_CHUNK]>>>,
    /// Slots in use in each chunk.
    used: Vec<u16>,
    len: u32,
}

impl SwapMap {
    /// A map of `len` free slots.
    pub fn new(len: u32) -> SwapMap {
        let n = (len as usize).div_ceil(MAP_CHUNK);
        SwapMap {
            chunks: vec![None; n],
            used: vec![0; n],
            len,
        }
    }

    /// Slot `slot`'s count and cache flag; 0 for a free slot.
    #[inline]
    pub fn get(&self, slot: u32) -> u8 {
        let s = slot as usize;
        match &self.chunks[s / MAP_CHUNK] {
            Some(c) => c[s % MAP_CHUNK],
            None => 0,
        }
    }

    /// Set slot `slot` to `v`.
    pub fn set(&mut self, slot: u32, v: u8) {
        let s = slot as usize;
        let (ci, i) = (s / MAP_CHUNK, s % MAP_CHUNK);
        let chunk = &mut self.chunks[ci];
        if chunk.is_none() && v == 0 {
            return;
        }
        let c = chunk.get_or_insert_with(|| Box::new([0; MAP_CHUNK]));
        let was = c[i];
        c[i] = v;
        match (was != 0, v != 0) {
            (false, true) => self.used[ci] += 1,
            (true, false) => {
                self.used[ci] -= 1;
                if self.used[ci] == 0 {
                    *chunk = None;
                }
            }
            _ => {}
        }
    }

    /// Chunks allocated.
    pub fn chunks(&self) -> usize {
        self.chunks.iter().filter(|c| c.is_some()).count()
    }

    /// Every slot's value, in slot order.
    pub fn iter(&self) -> impl Iterator<Item = u8> + '_ {
        (0..self.len).map(|s| self.get(s))
    }
}

/// One swap area (`struct swap_info_struct`).
#[derive(Clone, Debug, Default)]
pub struct SwapInfo {
    /// Slots, including the header slot 0.
    pub max: u32,
    /// Per-slot reference count and cache flag.
    pub swap_map: SwapMap,
    /// Slots in use.
    pub inuse_pages: u32,
    /// Where the next allocation search starts (the kernel's `cluster_next`).
    pub cluster_next: u32,
    /// The swap cache: slot -> page (`swapper_space`'s radix tree).
    cache: PageTree,
}

impl SwapInfo {
    /// A swap area of `pages` pages (0 = no swap).
    pub fn new(pages: u32) -> SwapInfo {
        SwapInfo {
            max: pages,
            swap_map: SwapMap::new(pages),
            inuse_pages: 0,
            cluster_next: 1,
            cache: PageTree::default(),
        }
    }

    /// `total_swap_pages`.
    #[inline]
    pub fn total(&self) -> u64 {
        self.max.saturating_sub(1) as u64
    }

    /// `nr_swap_pages` (free slots; `get_nr_swap_pages`).
    #[inline]
    pub fn nr_free(&self) -> u64 {
        self.total() - self.inuse_pages as u64
    }

    /// `vm_swap_full`: less than half of swap is free.
    #[inline]
    pub fn vm_swap_full(&self) -> bool {
        self.nr_free() * 2 < self.total()
    }

    /// `lookup_swap_cache`.
    #[inline]
    pub fn lookup_swap_cache(&self, slot: u32) -> Option<Pfn> {
        self.cache.get(slot as u64)
    }

    /// Put `new` in the swap cache in place of `old` (page migration).
    pub fn replace_cache_page(&mut self, slot: u32, old: Pfn, new: Pfn) {
        self.cache.replace(slot as u64, old, new);
    }

    /// Pages in the swap cache.
    pub fn cache_len(&self) -> usize {
        self.cache.len()
    }

    /// `scan_swap_map`: next-fit from `cluster_next`, so pages reclaimed together get
    /// adjacent slots and their writes merge.
    fn scan_swap_map(&mut self) -> Option<u32> {
        if self.nr_free() == 0 {
            return None;
        }
        let n = self.max;
        let mut s = self.cluster_next.max(1);
        for _ in 0..n {
            if s >= n {
                s = 1;
            }
            if self.swap_map.get(s) == 0 {
                self.cluster_next = s + 1;
                return Some(s);
            }
            s += 1;
        }
        None
    }
}

/// `add_to_swap`: give an anonymous page a slot and put it in the swap cache, dirty.
/// Returns false when swap is full.
pub fn add_to_swap(k: &mut Kernel, pfn: Pfn) -> bool {
    let Some(slot) = k.swap.scan_swap_map() else {
        return false;
    };
    k.swap.swap_map.set(slot, SWAP_HAS_CACHE);
    k.swap.inuse_pages += 1;
    add_to_swap_cache(k, pfn, slot);
    k.pages.set(pfn, PG_DIRTY);
    true
}

/// `__add_to_swap_cache`.
pub fn add_to_swap_cache(k: &mut Kernel, pfn: Pfn, slot: u32) {
    // Swap-cache pages count as file pages in the kernel's NR_FILE_PAGES.
    let zi = k.page_zone(pfn);
    k.zones[zi].mod_stat(super::vmstat::ZoneStat::nr_file_pages, 1);
    k.pages.set(pfn, PG_SWAPCACHE);
    k.pages.private[pfn as usize] = slot;
    k.swap.cache.insert(slot as u64, pfn);
}

/// `swapcache_prepare`: claim the cache flag of a slot still referenced by PTEs, for a read.
/// Fails if the slot is free or already has a cache page.
pub fn swapcache_prepare(k: &mut Kernel, slot: u32) -> bool {
    let m = k.swap.swap_map.get(slot);
    if m & SWAP_COUNT_MASK == 0 || m & SWAP_HAS_CACHE != 0 {
        return false;
    }
    k.swap.swap_map.set(slot, m | SWAP_HAS_CACHE);
    true
}

/// `delete_from_swap_cache`: drop a clean page from the swap cache and release the cache's
/// hold on its slot.
pub fn delete_from_swap_cache(k: &mut Kernel, pfn: Pfn) {
    debug_assert!(k.pages.test(pfn, PG_SWAPCACHE));
    let slot = k.pages.private[pfn as usize];
    k.swap.cache.remove(slot as u64, pfn);
    let zi = k.page_zone(pfn);
    k.zones[zi].mod_stat(super::vmstat::ZoneStat::nr_file_pages, -1);
    k.pages.clear(pfn, PG_SWAPCACHE);
    k.pages.private[pfn as usize] = 0;
    swapcache_free(k, slot);
}

/// `swapcache_free`: clear the cache flag; free the slot if nothing refers to it.
pub fn swapcache_free(k: &mut Kernel, slot: u32) {
    let m = k.swap.swap_map.get(slot) & !SWAP_HAS_CACHE;
    k.swap.swap_map.set(slot, m);
    if m == 0 {
        k.swap.inuse_pages -= 1;
        super::memcontrol::uncharge_swap(k, slot);
    }
}

/// `swap_duplicate`: one more PTE refers to the slot.
pub fn swap_duplicate(k: &mut Kernel, slot: u32) {
    let m = k.swap.swap_map.get(slot);
    debug_assert!(m & SWAP_COUNT_MASK < SWAP_COUNT_MASK);
    k.swap.swap_map.set(slot, m + 1);
}

/// `swap_free`: one PTE fewer refers to the slot; free it if nothing refers to it.
pub fn swap_free(k: &mut Kernel, slot: u32) {
    let m = k.swap.swap_map.get(slot);
    debug_assert!(m & SWAP_COUNT_MASK > 0, "swap_free of unused slot {slot}");
    k.swap.swap_map.set(slot, m - 1);
    if m == 1 {
        k.swap.inuse_pages -= 1;
        super::memcontrol::uncharge_swap(k, slot);
    }
}

/// `page_swapcount`: PTEs referring to the page's slot.
pub fn page_swapcount(k: &Kernel, pfn: Pfn) -> u8 {
    let slot = k.pages.private[pfn as usize];
    k.swap.swap_map.get(slot) & SWAP_COUNT_MASK
}

/// `try_to_free_swap`: drop the swap copy of a page nothing else needs (the page becomes
/// the only copy, so it is dirtied).
pub fn try_to_free_swap(k: &mut Kernel, pfn: Pfn) -> bool {
    if !k.pages.test(pfn, PG_SWAPCACHE)
        || k.pages.test(pfn, PG_WRITEBACK)
        || page_swapcount(k, pfn) != 0
    {
        return false;
    }
    delete_from_swap_cache(k, pfn);
    k.pages.set(pfn, PG_DIRTY);
    true
}

/// `reuse_swap_page` on a write fault: if this mapping is the only user, free the swap copy.
pub fn reuse_swap_page(k: &mut Kernel, pfn: Pfn) -> bool {
    if k.pages.mapcount(pfn) > 1 {
        return false;
    }
    try_to_free_swap(k, pfn)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_handed_out_next_fit_and_skip_the_header() {
        let mut s = SwapInfo::new(8);
        assert_eq!(s.total(), 7);
        let a = s.scan_swap_map().unwrap();
        s.swap_map.set(a, 1);
        s.inuse_pages += 1;
        let b = s.scan_swap_map().unwrap();
        assert_eq!((a, b), (1, 2));
    }

    #[test]
    fn the_swap_map_holds_chunks_only_for_slots_in_use() {
        let mut m = SwapMap::new(3 * MAP_CHUNK as u32 + 5);
        assert_eq!(m.chunks(), 0);
        m.set(1, 0);
        assert_eq!(
            m.chunks(),
            0,
            "writing a free slot as free allocates nothing"
        );
        m.set(1, SWAP_HAS_CACHE);
        m.set(2, 1);
        m.set(3 * MAP_CHUNK as u32 + 4, 2);
        assert_eq!(m.chunks(), 2);
        assert_eq!((m.get(1), m.get(2), m.get(3)), (SWAP_HAS_CACHE, 1, 0));
        assert_eq!(m.get(3 * MAP_CHUNK as u32 + 4), 2);
        assert_eq!(
            m.get(MAP_CHUNK as u32),
            0,
            "a slot of a chunk never made is free"
        );
        m.set(1, 1);
        m.set(1, 0);
        assert_eq!(m.chunks(), 2, "slot 2 still holds the first chunk");
        m.set(2, 0);
        assert_eq!(
            m.chunks(),
            1,
            "the first chunk goes with its last slot in use"
        );
        assert_eq!(m.get(2), 0);
        assert_eq!(m.iter().count(), 3 * MAP_CHUNK + 5);
        assert_eq!(m.iter().filter(|&v| v != 0).count(), 1);
    }

    #[test]
    fn swap_is_full_below_half_free() {
        let mut s = SwapInfo::new(11);
        s.inuse_pages = 5;
        assert!(!s.vm_swap_full());
        s.inuse_pages = 6;
        assert!(s.vm_swap_full());
    }
}
