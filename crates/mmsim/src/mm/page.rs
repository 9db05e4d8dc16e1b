//! Page frames: `struct page` as a struct of arrays indexed by frame number, with the page
//! flags of `include/linux/page-flags.h` and intrusive list links (the kernel's `page->lru`).
//!
//! Every frame is in exactly one place at any await point: the buddy free lists
//! (`PG_buddy`), an LRU list (`PG_lru`), isolated by a reclaimer (`PG_isolated`, mmsim's name
//! for "off the LRU in a reclaimer's private list"), the slab (`PG_slab`) or reserved
//! (`PG_reserved`), or free on a CPU's list ([`PG_PCP`]).

/// A page frame number.
pub type Pfn = u32;

/// "No page": the end of a list.
pub const NIL: u32 = u32::MAX;
/// Index of the previous page in [`Pages::links`].
const PREV: usize = 0;
/// Index of the next page in [`Pages::links`].
const NEXT: usize = 1;

/// Low 3 bits: which LRU list the page is on when `PG_LRU` is set (`enum lru_list`).
pub const LRU_MASK: u32 = 0x7;
/// mmsim: free on a CPU's per-cpu list (the kernel's `page_count` 0 without `PageBuddy`):
/// the LRU bits set to a list number that does not exist, alone.
pub const PG_PCP: u32 = LRU_MASK;
pub const PG_LOCKED: u32 = 1 << 3;
pub const PG_REFERENCED: u32 = 1 << 4;
pub const PG_DIRTY: u32 = 1 << 5;
pub const PG_LRU: u32 = 1 << 6;
pub const PG_ACTIVE: u32 = 1 << 7;
pub const PG_SWAPBACKED: u32 = 1 << 8;
pub const PG_SWAPCACHE: u32 = 1 << 9;
pub const PG_WRITEBACK: u32 = 1 << 10;
pub const PG_RECLAIM: u32 = 1 << 11;
pub const PG_UNEVICTABLE: u32 = 1 << 12;
pub const PG_BUDDY: u32 = 1 << 13;
/// `page->mapping` is an anonymous address space (`PAGE_MAPPING_ANON`).
pub const PG_ANON: u32 = 1 << 14;
pub const PG_SLAB: u32 = 1 << 15;
pub const PG_RESERVED: u32 = 1 << 16;
/// mmsim: isolated from its LRU list by a reclaimer.
pub const PG_ISOLATED: u32 = 1 << 17;
pub const PG_UPTODATE: u32 = 1 << 18;
/// Buffers or other private data of the page's filesystem attached (`PagePrivate`;
/// `page_has_buffers` on a buffer-head filesystem).
pub const PG_PRIVATE: u32 = 1 << 19;
/// The page that triggers the next asynchronous readahead (`PG_readahead`).
pub const PG_READAHEAD: u32 = 1 << 20;
/// mmsim: truncated from its file while a reclaimer held it isolated; the reclaimer frees
/// it (the kernel's last `put_page`).
pub const PG_TRUNCATED: u32 = 1 << 21;
/// mmsim: some buffer head of the page is `BH_Dirty` (meaningful with `PG_PRIVATE` on a
/// buffer-head filesystem). A page can be PG_dirty with clean buffers: ext3's journal wrote
/// them without touching the page flags.
pub const PG_BH_DIRTY: u32 = 1 << 22;
/// mmsim: some buffer head of the page is `BH_Lock`, i.e. under IO. The journal's data writes
/// lock buffers without setting PG_writeback.
pub const PG_BH_LOCKED: u32 = 1 << 23;
/// Bits 24..31: `page_mapcount` (number of PTEs mapping the page).
pub const MAPCOUNT_SHIFT: u32 = 24;
/// The most PTEs that may map one page (8 bits of `flags`).
pub const MAPCOUNT_MAX: u32 = 255;

/// A mapcount that would leave `0..=MAPCOUNT_MAX`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MapcountOverflow {
    pub pfn: Pfn,
    /// The count it would have had.
    pub mapcount: i32,
}

impl std::fmt::Display for MapcountOverflow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "invariant 'mapcounts' violated: pfn {} would be mapped by {} PTEs; mmsim keeps \
             0 to {MAPCOUNT_MAX}",
            self.pfn, self.mapcount
        )
    }
}

/// The five LRU lists (`enum lru_list`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Lru {
    InactiveAnon = 0,
    ActiveAnon = 1,
    InactiveFile = 2,
    ActiveFile = 3,
    Unevictable = 4,
}

impl Lru {
    /// The evictable lists, in the order `shrink_lruvec` walks them.
    pub const EVICTABLE: [Lru; 4] = [
        Lru::InactiveAnon,
        Lru::ActiveAnon,
        Lru::InactiveFile,
        Lru::ActiveFile,
    ];

    /// From the low flag bits.
    #[inline]
    pub fn from_bits(b: u32) -> Lru {
        match b & LRU_MASK {
            0 => Lru::InactiveAnon,
            1 => Lru::ActiveAnon,
            2 => Lru::InactiveFile,
            3 => Lru::ActiveFile,
            _ => Lru::Unevictable,
        }
    }

    /// Whether this is a file list.
    #[inline]
    pub fn is_file(self) -> bool {
        matches!(self, Lru::InactiveFile | Lru::ActiveFile)
    }

    /// Whether this is an active list.
    #[inline]
    pub fn is_active(self) -> bool {
        matches!(self, Lru::ActiveAnon | Lru::ActiveFile)
    }

    /// The inactive or active list of a type (`file` = 0 or 1).
    #[inline]
    pub fn of(file: bool, active: bool) -> Lru {
        match (file, active) {
            (false, false) => Lru::InactiveAnon,
            (false, true) => Lru::ActiveAnon,
            (true, false) => Lru::InactiveFile,
            (true, true) => Lru::ActiveFile,
        }
    }
}

/// The state of every page frame, one entry per frame in each array.
#[derive(Clone, Debug, Default)]
pub struct Pages {
    /// `page->flags`, plus the LRU id and the mapcount.
    pub flags: Vec<u32>,
    /// Intrusive list links (`page->lru`): LRU lists and buddy free lists, `[prev, next]`
    /// side by side, so that a list operation touches one cache line per page.
    pub links: Vec<[u32; 2]>,
    /// `page->mapping`: the owning address space (an mm id for anon pages). For free pages,
    /// the buddy order.
    pub mapping: Vec<u32>,
    /// `page->index`: the page's offset in its owner (a virtual page number for anon pages).
    pub index: Vec<u32>,
    /// `page->private`: the swap slot of a swap-cache page.
    pub private: Vec<u32>,
}

impl Pages {
    /// `n` frames, all reserved until the zones hand them to the buddy allocator.
    pub fn new(n: usize) -> Pages {
        Pages {
            flags: vec![PG_RESERVED; n],
            links: vec![[NIL; 2]; n],
            mapping: vec![0; n],
            index: vec![0; n],
            private: vec![0; n],
        }
    }

    /// Number of frames.
    pub fn len(&self) -> usize {
        self.flags.len()
    }

    /// Whether there are no frames.
    pub fn is_empty(&self) -> bool {
        self.flags.is_empty()
    }

    /// `prefetchw_prev_lru_page`: ask the host CPU for the flags and list links of the page
    /// before `pfn` on its list, which a walk from the tail takes next.
    #[inline]
    pub fn prefetch_prev_lru(&self, pfn: Pfn) {
        let prev = self.links[pfn as usize][PREV];
        if prev != NIL {
            crate::mm::memory::prefetch(&self.flags[prev as usize]);
            crate::mm::memory::prefetch(&self.links[prev as usize]);
        }
    }

    /// Ask the host CPU for the mapping and index of `pfn`, which reclaim reads next.
    #[inline]
    pub fn prefetch_owner(&self, pfn: Pfn) {
        crate::mm::memory::prefetch(&self.mapping[pfn as usize]);
        crate::mm::memory::prefetch(&self.index[pfn as usize]);
    }

    /// For tests: a frame with no state, or a buddy block's head, or on a CPU's list.
    #[cfg(test)]
    pub fn is_free(&self, pfn: Pfn) -> bool {
        let f = self.flags[pfn as usize];
        f == 0 || f & PG_BUDDY != 0 || f == PG_PCP
    }

    /// Test flag bits.
    #[inline]
    pub fn test(&self, pfn: Pfn, f: u32) -> bool {
        self.flags[pfn as usize] & f != 0
    }

    /// Set flag bits.
    #[inline]
    pub fn set(&mut self, pfn: Pfn, f: u32) {
        self.flags[pfn as usize] |= f;
    }

    /// Clear flag bits.
    #[inline]
    pub fn clear(&mut self, pfn: Pfn, f: u32) {
        self.flags[pfn as usize] &= !f;
    }

    /// Clear flag bits, returning whether any was set.
    #[inline]
    pub fn test_and_clear(&mut self, pfn: Pfn, f: u32) -> bool {
        let was = self.flags[pfn as usize] & f != 0;
        self.flags[pfn as usize] &= !f;
        was
    }

    /// `page_mapcount`.
    #[inline]
    pub fn mapcount(&self, pfn: Pfn) -> u32 {
        self.flags[pfn as usize] >> MAPCOUNT_SHIFT
    }

    /// `page_mapped`.
    #[inline]
    pub fn mapped(&self, pfn: Pfn) -> bool {
        self.mapcount(pfn) != 0
    }

    /// Add `delta` (±1) to the mapcount. The count has 8 bits: it never wraps, it stays at
    /// its limit and the caller is told, so that the run can stop on it.
    #[inline]
    pub fn mapcount_add(&mut self, pfn: Pfn, delta: i32) -> Result<(), MapcountOverflow> {
        let f = &mut self.flags[pfn as usize];
        let mc = (*f >> MAPCOUNT_SHIFT) as i32 + delta;
        if !(0..=MAPCOUNT_MAX as i32).contains(&mc) {
            return Err(MapcountOverflow { pfn, mapcount: mc });
        }
        *f = (*f & ((1 << MAPCOUNT_SHIFT) - 1)) | ((mc as u32) << MAPCOUNT_SHIFT);
        Ok(())
    }

    /// The LRU list the page is on (meaningful with `PG_LRU`).
    #[inline]
    pub fn lru(&self, pfn: Pfn) -> Lru {
        Lru::from_bits(self.flags[pfn as usize])
    }

    /// `page_lru`: the list the page belongs on given its flags.
    #[inline]
    pub fn page_lru(&self, pfn: Pfn) -> Lru {
        let f = self.flags[pfn as usize];
        if f & PG_UNEVICTABLE != 0 {
            Lru::Unevictable
        } else {
            Lru::of(f & PG_SWAPBACKED == 0, f & PG_ACTIVE != 0)
        }
    }

    /// `page_is_file_cache`: not swap-backed.
    #[inline]
    pub fn is_file_cache(&self, pfn: Pfn) -> bool {
        !self.test(pfn, PG_SWAPBACKED)
    }
}

/// What an intrusive list is threaded through: `[prev, next]` links, one per element
/// ([`Pages::links`] for page lists; the dentry and inode tables for their LRUs).
pub trait Links {
    /// The links, indexed by element.
    fn links(&self) -> &[[u32; 2]];
    /// The links, mutably.
    fn links_mut(&mut self) -> &mut [[u32; 2]];
}

impl Links for Pages {
    #[inline]
    fn links(&self) -> &[[u32; 2]] {
        &self.links
    }
    #[inline]
    fn links_mut(&mut self) -> &mut [[u32; 2]] {
        &mut self.links
    }
}

impl Links for Vec<[u32; 2]> {
    #[inline]
    fn links(&self) -> &[[u32; 2]] {
        self
    }
    #[inline]
    fn links_mut(&mut self) -> &mut [[u32; 2]] {
        self
    }
}

/// The head of an intrusive list threaded through [`Links`] ([`Pages::links`] for pages).
/// The head end is where new elements go; the tail end is where reclaim takes them from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListHead {
    pub head: u32,
    pub tail: u32,
    pub len: u64,
}

impl Default for ListHead {
    fn default() -> Self {
        ListHead {
            head: NIL,
            tail: NIL,
            len: 0,
        }
    }
}

impl ListHead {
    /// Whether the list is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head == NIL
    }

    /// `list_add`: insert at the head.
    #[inline]
    pub fn add(&mut self, pages: &mut impl Links, pfn: Pfn) {
        let p = pfn as usize;
        let links = pages.links_mut();
        links[p] = [NIL, self.head];
        if self.head != NIL {
            links[self.head as usize][PREV] = pfn;
        } else {
            self.tail = pfn;
        }
        self.head = pfn;
        self.len += 1;
    }

    /// `list_add_tail`: insert at the tail.
    #[inline]
    pub fn add_tail(&mut self, pages: &mut impl Links, pfn: Pfn) {
        let p = pfn as usize;
        let links = pages.links_mut();
        links[p] = [self.tail, NIL];
        if self.tail != NIL {
            links[self.tail as usize][NEXT] = pfn;
        } else {
            self.head = pfn;
        }
        self.tail = pfn;
        self.len += 1;
    }

    /// `list_del`: unlink a page that is on this list.
    #[inline]
    pub fn del(&mut self, pages: &mut impl Links, pfn: Pfn) {
        let p = pfn as usize;
        let links = pages.links_mut();
        let [prev, next] = links[p];
        if prev != NIL {
            links[prev as usize][NEXT] = next;
        } else {
            debug_assert_eq!(self.head, pfn);
            self.head = next;
        }
        if next != NIL {
            links[next as usize][PREV] = prev;
        } else {
            debug_assert_eq!(self.tail, pfn);
            self.tail = prev;
        }
        links[p] = [NIL; 2];
        self.len -= 1;
    }

    /// Iterate from head to tail (for checks and dumps; not for hot paths).
    pub fn iter<'a>(&self, pages: &'a impl Links) -> impl Iterator<Item = Pfn> + 'a {
        let mut cur = self.head;
        let links = pages.links();
        std::iter::from_fn(move || {
            if cur == NIL {
                None
            } else {
                let p = cur;
                cur = links[p as usize][NEXT];
                Some(p)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_adds_at_head_and_tail_and_unlinks_from_the_middle() {
        let mut pages = Pages::new(8);
        let mut l = ListHead::default();
        l.add(&mut pages, 1);
        l.add(&mut pages, 2);
        l.add_tail(&mut pages, 3);
        assert_eq!(l.iter(&pages).collect::<Vec<_>>(), vec![2, 1, 3]);
        l.del(&mut pages, 1);
        assert_eq!(l.iter(&pages).collect::<Vec<_>>(), vec![2, 3]);
        assert_eq!((l.head, l.tail, l.len), (2, 3, 2));
        l.del(&mut pages, 2);
        l.del(&mut pages, 3);
        assert!(l.is_empty());
        assert_eq!(l.tail, NIL);
    }

    #[test]
    fn a_mapcount_past_its_bits_is_refused_not_wrapped() {
        let mut pages = Pages::new(1);
        for _ in 0..MAPCOUNT_MAX {
            pages.mapcount_add(0, 1).unwrap();
        }
        let e = pages.mapcount_add(0, 1).unwrap_err();
        assert_eq!(e.mapcount, 256);
        assert!(
            e.to_string()
                .contains("invariant 'mapcounts' violated: pfn 0"),
            "{e}"
        );
        assert_eq!(
            pages.mapcount(0),
            MAPCOUNT_MAX,
            "kept at its limit, not wrapped to 0"
        );
        let mut empty = Pages::new(1);
        assert!(empty.mapcount_add(0, -1).is_err());
        assert!(!empty.mapped(0));
    }

    #[test]
    fn mapcount_lives_beside_the_flags() {
        let mut pages = Pages::new(1);
        pages.set(0, PG_DIRTY | PG_SWAPBACKED);
        pages.mapcount_add(0, 1).unwrap();
        pages.mapcount_add(0, 1).unwrap();
        assert_eq!(pages.mapcount(0), 2);
        assert!(pages.test(0, PG_DIRTY));
        pages.mapcount_add(0, -2).unwrap();
        assert!(!pages.mapped(0));
        assert_eq!(pages.page_lru(0), Lru::InactiveAnon);
    }
}
