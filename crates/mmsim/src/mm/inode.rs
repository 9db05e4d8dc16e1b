//! Inodes (`struct inode` + `struct address_space`, `include/linux/fs.h`): the page-cache
//! index of a file, the state writeback needs, and the operations of its filesystem
//! (`mapping->a_ops`). An inode's id is its `page->mapping` value for file pages.

use super::fs_ops::AddressSpaceOps;
use super::page::Pfn;
use super::radix_tree::PageTree;
use super::Kernel;
use std::cell::Cell;

/// `I_DIRTY_PAGES`: the inode has dirty pages.
pub const I_DIRTY_PAGES: u32 = 1 << 0;
/// `I_SYNC`: writeback of the inode is in progress.
pub const I_SYNC: u32 = 1 << 1;
/// `I_DIRTY_DATASYNC`: metadata needed to reach the data is dirty; on NFS, pages await a
/// COMMIT, so the flusher calls `write_inode` (`nfs_write_inode`).
pub const I_DIRTY_DATASYNC: u32 = 1 << 2;
/// `I_DIRTY`: any of the dirty bits (`I_DIRTY_SYNC` is not modelled).
pub const I_DIRTY: u32 = I_DIRTY_PAGES | I_DIRTY_DATASYNC;

/// One shared mapping of a file (an entry of `mapping->i_mmap`): the mm, the first virtual
/// page of the mapping, and the file pages it covers. The rmap of a file page walks these and
/// computes the virtual page from the page index, so file pages need no per-page rmap state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IMmap {
    /// The mm (index into the machine's address spaces).
    pub mm: u32,
    /// First virtual page number of the mapping.
    pub start: u32,
    /// File page mapped at `start` (`vm_pgoff`).
    pub pgoff: u64,
    /// Pages mapped.
    pub pages: u64,
}

impl IMmap {
    /// The virtual page that maps file page `index`, if this mapping covers it
    /// (`vma_address`).
    #[inline]
    pub fn vpn_of(&self, index: u64) -> Option<u32> {
        (index >= self.pgoff && index < self.pgoff + self.pages)
            .then(|| self.start + (index - self.pgoff) as u32)
    }
}

/// One file.
#[derive(Clone, Debug)]
pub struct Inode {
    /// File name, for traces and errors.
    pub name: String,
    /// The backing device the file lives on (index into the machine's devices).
    pub bdi: usize,
    /// The page-cache index with its dirty tags (the radix tree of `struct address_space`).
    pages: PageTree,
    /// `mapping->nrpages`.
    pub nrpages: u64,
    /// File size in pages.
    pub size_pages: u64,
    /// `i_state` bits.
    pub state: u32,
    /// When the inode was first dirtied since it was last clean (simulated ns).
    pub dirtied_when: u64,
    /// `mapping->writeback_index`: where the last cyclic writeback stopped.
    pub writeback_index: u64,
    /// Allocated blocks: (first page index, first sector, pages), by first index.
    extents: Vec<(u64, u64, u64)>,
    /// Some extent starts before the end of the one added before it: the extents are then
    /// not known to be sorted and disjoint, and a lookup scans them.
    extents_unordered: bool,
    /// The extent the last sorted lookup found (a hint: checked before it is used).
    last_extent: Cell<u32>,
    /// The shared mappings of the file (`i_mmap`).
    pub i_mmap: Vec<IMmap>,
    /// Its filesystem's operations (`mapping->a_ops`).
    pub a_ops: &'static dyn AddressSpaceOps,
}

impl Inode {
    /// A new empty file on device `bdi` whose filesystem has `a_ops`.
    pub fn new(name: &str, bdi: usize, a_ops: &'static dyn AddressSpaceOps) -> Inode {
        Inode {
            name: name.to_string(),
            bdi,
            pages: PageTree::default(),
            nrpages: 0,
            size_pages: 0,
            state: 0,
            dirtied_when: 0,
            writeback_index: 0,
            extents: Vec::new(),
            extents_unordered: false,
            last_extent: Cell::new(0),
            i_mmap: Vec::new(),
            a_ops,
        }
    }

    /// `find_get_page`: the cached page at `index`.
    #[inline]
    pub fn find_page(&self, index: u64) -> Option<Pfn> {
        self.pages.get(index)
    }

    /// Insert `pfn` at `index` (the slot must be empty).
    pub fn insert_page(&mut self, index: u64, pfn: Pfn) {
        self.pages.insert(index, pfn);
        self.nrpages += 1;
    }

    /// Remove the page at `index` (which must be `pfn`).
    pub fn remove_page(&mut self, index: u64, pfn: Pfn) {
        self.pages.remove(index, pfn);
        self.nrpages -= 1;
    }

    /// Whether the page at `index` is tagged dirty.
    pub fn tagged_dirty(&self, index: u64) -> bool {
        self.pages.tagged_dirty(index)
    }

    /// The first page at or after `from` tagged dirty for which `dirty` holds (the
    /// `PAGECACHE_TAG_DIRTY` lookup; the tags may name pages since cleaned).
    pub fn next_dirty(&self, from: u64, dirty: impl Fn(Pfn) -> bool) -> Option<(u64, Pfn)> {
        self.pages.next_dirty(from, dirty)
    }

    /// The sector of page `index`, if its blocks are allocated.
    pub fn sector_of(&self, index: u64) -> Option<u64> {
        let holds = |&(first, _, len): &(u64, u64, u64)| index >= first && index < first + len;
        let e = if self.extents_unordered {
            // The newest extent that holds the page.
            self.extents.iter().rev().find(|e| holds(e))
        } else {
            // Sorted and disjoint: at most one extent holds the page. Reclaim and writeback
            // ask page by page in file order, so mostly the one that held the last.
            let last = self.last_extent.get() as usize;
            let hinted = self.extents.get(last).filter(|e| holds(e));
            hinted.or_else(|| {
                // None past the last extent (delayed allocation's unwritten tail).
                let &(first, _, len) = self.extents.last()?;
                if index >= first + len {
                    return None;
                }
                // Only the last extent starting at or before the page can hold it (a long
                // file has thousands of extents).
                let i = self
                    .extents
                    .partition_point(|&(first, _, _)| first <= index)
                    .checked_sub(1)?;
                self.last_extent.set(i as u32);
                Some(&self.extents[i]).filter(|e| holds(e))
            })
        };
        e.map(|&(first, sector, _)| sector + (index - first) * 8)
    }

    /// Record an allocated extent of `len` pages from page `first` at `sector`.
    pub fn add_extent(&mut self, first: u64, sector: u64, len: u64) {
        if let Some(&(f, _, l)) = self.extents.last() {
            self.extents_unordered |= first < f + l;
        }
        self.extents.push((first, sector, len));
    }

    /// Free every block of the file (truncation to 0).
    pub fn free_blocks(&mut self) {
        self.extents_unordered = false;
        self.extents.clear();
        self.writeback_index = 0;
    }

    /// Cached (index, pfn) from page `from` on, in index order.
    pub fn cached_from(&self, from: u64) -> impl Iterator<Item = (u64, Pfn)> + '_ {
        self.pages.iter_from(from)
    }

    /// Every cached (index, pfn), in index order (for checks and truncation).
    pub fn cached(&self) -> impl Iterator<Item = (u64, Pfn)> + '_ {
        self.pages.iter_from(0)
    }
}

/// Tag file page `pfn` dirty in its file's index (`radix_tree_tag_set` of
/// `PAGECACHE_TAG_DIRTY`): every place that sets PG_dirty on a page-cache page calls it.
#[inline]
pub fn tag_page_dirty(k: &mut Kernel, pfn: Pfn) {
    let (ino, index) = (k.pages.mapping[pfn as usize], k.pages.index[pfn as usize]);
    k.inodes[ino as usize].pages.tag_dirty(index as u64);
}

/// Clear the dirty tag of file page `pfn`, which has just been cleaned.
#[inline]
pub fn untag_page_dirty(k: &mut Kernel, pfn: Pfn) {
    let (ino, index) = (k.pages.mapping[pfn as usize], k.pages.index[pfn as usize]);
    k.inodes[ino as usize].pages.untag_dirty(index as u64, pfn);
}

/// `new_inode` on device `bdi`: a new empty file with the operations of the device's
/// filesystem. Returns its id.
pub fn new_inode(k: &mut Kernel, name: &str, bdi: usize) -> usize {
    let a_ops = k.bdis[bdi].a_ops;
    k.inodes.push(Inode::new(name, bdi, a_ops));
    k.inodes.len() - 1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page's sector is that of the newest extent holding it, whether the extents were
    /// added in order (searched) or not (scanned).
    #[test]
    fn sector_of_finds_the_newest_extent_holding_the_page() {
        let newest = |ext: &[(u64, u64, u64)], index: u64| {
            ext.iter()
                .rev()
                .find(|&&(f, _, l)| index >= f && index < f + l)
                .map(|&(f, s, _)| s + (index - f) * 8)
        };
        let mut next = crate::test_numbers(99);
        for ordered in [true, false] {
            let mut ino = Inode::new("f", 0, &crate::mm::fs_ops::EMPTY_AOPS);
            let mut ext = Vec::new();
            let mut end = 0;
            for _ in 0..200 {
                let first = if ordered { end + next(3) } else { next(400) };
                let (sector, len) = (next(1 << 20) * 8, next(5));
                ino.add_extent(first, sector, len);
                ext.push((first, sector, len));
                end = first + len;
                for _ in 0..5 {
                    // A page and its neighbour, as writeback and reclaim ask.
                    let index = next(end + 5);
                    for index in [index, index + 1] {
                        assert_eq!(ino.sector_of(index), newest(&ext, index), "page {index}");
                    }
                }
            }
            assert_eq!(ino.extents_unordered, !ordered);
            ino.free_blocks();
            assert_eq!(ino.sector_of(0), None);
        }
    }

    /// A lookup remembers the extent that held the page; a page past the last extent
    /// leaves the hint alone.
    #[test]
    fn sector_of_remembers_the_extent_that_held_the_last_page() {
        let mut ino = Inode::new("f", 0, &crate::mm::fs_ops::EMPTY_AOPS);
        for (i, first) in [0, 100, 200].into_iter().enumerate() {
            ino.add_extent(first, 1000 * i as u64, 50);
        }
        assert_eq!(ino.sector_of(120), Some(1000 + 20 * 8));
        assert_eq!(ino.last_extent.get(), 1);
        assert_eq!(ino.sector_of(121), Some(1000 + 21 * 8));
        assert_eq!(ino.sector_of(260), None, "past the last extent");
        assert_eq!(ino.last_extent.get(), 1);
        assert_eq!(ino.sector_of(75), None, "between extents");
        assert_eq!(ino.sector_of(10), Some(80));
        assert_eq!(ino.last_extent.get(), 0);
    }

    #[test]
    fn the_index_grows_with_the_file_and_counts_its_pages() {
        let mut i = Inode::new("f", 0, &super::super::fs_ops::EMPTY_AOPS);
        assert_eq!(i.find_page(5), None);
        i.insert_page(1000, 7);
        i.insert_page(3, 9);
        assert_eq!(
            (i.find_page(1000), i.find_page(3), i.nrpages),
            (Some(7), Some(9), 2)
        );
        i.remove_page(1000, 7);
        assert_eq!(i.find_page(1000), None);
        assert_eq!(i.cached().collect::<Vec<_>>(), vec![(3, 9)]);
    }
}
