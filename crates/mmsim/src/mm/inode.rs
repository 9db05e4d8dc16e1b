//! Inodes (`struct inode` + `struct address_space`, `include/linux/fs.h`; `fs/inode.c`).
//!
//! [`Inode`] is a file: its page-cache index, the state writeback needs, its blocks and the
//! operations of its filesystem (`mapping->a_ops`). Its id is its `page->mapping` value for
//! file pages, and it outlives its time in memory: a file on a device exists before it is
//! first opened and after the shrinker has evicted its in-memory inode.
//!
//! [`VfsInode`] is the in-memory inode of the inode cache (`fs/inode.c`): its reference
//! count, its place on its superblock's unused-inode LRU, and the VFS state bits. The
//! system's cached files have one without an [`Inode`] (no page cache); a file's page cache
//! exists only while its in-memory inode does. `prune_icache_sb` frees unused inodes,
//! dropping the clean page cache of those that have any first (inode steals,
//! `kernel-reclaim.md` §6).

use super::fs_ops::AddressSpaceOps;
use super::page::{Pfn, NIL};
use super::radix_tree::PageTree;
use super::slab::{self, CacheId};
use super::super_block::PruneCx;
use super::vmstat::VmEvent;
use super::{filemap, Gfp, Kernel};
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
    /// Delayed allocation's `i_disksize`, in pages: the end of what writeback has allocated
    /// and written. A page past it still has delayed buffers (ext4's `writepage` will not
    /// allocate them).
    pub disksize_pages: u64,
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
    /// Its in-memory inode ([`VfsInode`] id), `NIL` while it is not in memory.
    pub vfs: u32,
    /// Removed (unlinked): its in-memory inode is being evicted or gone. The entry stays, so
    /// that no page's mapping is reused.
    pub unlinked: bool,
    /// A bit per page that reads as zeroes without IO: the holes `ftruncate` leaves when it
    /// grows a file (a sparse file), until writeback gives the page a block. Empty for a
    /// file never grown that way.
    holes: Vec<u64>,
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
            disksize_pages: 0,
            extents: Vec::new(),
            extents_unordered: false,
            last_extent: Cell::new(0),
            i_mmap: Vec::new(),
            a_ops,
            vfs: NIL,
            unlinked: false,
            holes: Vec::new(),
        }
    }

    /// Pages `range` become holes (`ftruncate` grew the file over them).
    pub fn make_holes(&mut self, range: std::ops::Range<u64>) {
        let words = range.end.div_ceil(64) as usize;
        if self.holes.len() < words {
            self.holes.resize(words, 0);
        }
        for i in range {
            self.holes[(i / 64) as usize] |= 1 << (i % 64);
        }
    }

    /// Whether page `index` is a hole.
    pub fn is_hole(&self, index: u64) -> bool {
        self.holes
            .get((index / 64) as usize)
            .is_some_and(|w| w & (1 << (index % 64)) != 0)
    }

    /// Page `index` has data on disk now (writeback gave it its block).
    pub fn fill_hole(&mut self, index: u64) {
        if let Some(w) = self.holes.get_mut((index / 64) as usize) {
            *w &= !(1 << (index % 64));
        }
    }

    /// `find_get_page`: the cached page at `index`.
    #[inline]
    pub fn find_page(&self, index: u64) -> Option<Pfn> {
        self.pages.get(index)
    }

    /// Put `new` at `index` in place of `old`, keeping its dirty tag (page migration).
    pub fn replace_page(&mut self, index: u64, old: Pfn, new: Pfn) {
        self.pages.replace(index, old, new);
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

    /// The page after the last extent allocated (0 for a file without blocks).
    pub fn extents_end(&self) -> u64 {
        self.extents
            .last()
            .map_or(0, |&(first, _, len)| first + len)
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
        self.disksize_pages = 0;
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

/// A new empty file on device `bdi` with the operations of the device's filesystem (no
/// device: a file on no filesystem, on the system's superblock), not in memory. Returns its
/// id.
pub fn new_file(k: &mut Kernel, name: &str, bdi: usize) -> usize {
    let a_ops = k
        .bdis
        .get(bdi)
        .map_or(&super::fs_ops::EMPTY_AOPS as &dyn AddressSpaceOps, |b| {
            b.a_ops
        });
    k.inodes.push(Inode::new(name, bdi, a_ops));
    let ino = k.inodes.len() - 1;
    // The first live file of a name is the one a lookup finds.
    k.file_index
        .entry(bdi)
        .or_default()
        .entry(name.to_string())
        .or_default()
        .push(ino);
    ino
}

/// An unlinked file leaves the name index; another live file of the name, if any, takes
/// its place.
pub fn unindex_file(k: &mut Kernel, ino: usize) {
    let bdi = k.inodes[ino].bdi;
    let Some(names) = k.file_index.get_mut(&bdi) else {
        return;
    };
    let name = k.inodes[ino].name.as_str();
    if let Some(live) = names.get_mut(name) {
        live.retain(|&i| i != ino);
        if live.is_empty() {
            names.remove(name);
        }
    }
}

/// The superblock of device `bdi`'s filesystem; the system's (0) for none.
pub fn sb_of(k: &Kernel, bdi: usize) -> u32 {
    k.bdis
        .get(bdi)
        .map_or(0, |b| if b.sb == NIL { 0 } else { b.sb })
}

/// `new_inode` for tests and tools: a new empty file on device `bdi` (see [`new_file`]) with
/// its in-memory inode, held by its caller for good. Objects come from the free lists
/// without waiting. Returns its id.
pub fn new_inode(k: &mut Kernel, name: &str, bdi: usize) -> usize {
    let ino = new_file(k, name, bdi);
    let sb = sb_of(k, bdi);
    iget_boot(k, sb, ino as u32);
    ino
}

/// `I_REFERENCED`: used since the shrinker last passed; it gets another pass.
pub const I_REFERENCED: u8 = 1 << 0;
/// `I_FREEING`: being evicted.
pub const I_FREEING: u8 = 1 << 1;
/// mmsim: on its superblock's inode LRU (the kernel's `!list_empty(&inode->i_lru)`).
pub const I_LRU: u8 = 1 << 2;

/// One in-memory inode.
#[derive(Clone, Copy, Debug)]
pub struct VfsInode {
    /// Its superblock.
    pub sb: u32,
    /// `i_count`.
    pub i_count: u32,
    /// `i_nlink`.
    pub nlink: u32,
    /// `I_REFERENCED`, `I_FREEING`, `I_LRU`. The dirty and sync bits of `i_state` are its
    /// file's ([`Inode::state`]).
    pub state: u8,
    /// Its file ([`Inode`] id), `NIL` for one of the system's cached files.
    pub file: u32,
    /// Its page in the inode cache; `NIL` once freed.
    pub slab: u32,
}

impl VfsInode {
    /// Whether the entry holds a live inode.
    #[inline]
    pub fn live(&self) -> bool {
        self.slab != NIL
    }
}

/// The inode cache: every in-memory inode, with the LRU links (`i_lru`).
#[derive(Clone, Debug, Default)]
pub struct Icache {
    /// Indexed by inode id; freed entries are reused.
    pub inodes: Vec<VfsInode>,
    /// `i_lru` links, by inode id.
    pub links: Vec<[u32; 2]>,
    /// Freed ids.
    free: Vec<u32>,
    /// Live inodes (`nr_inodes`).
    pub nr_inodes: u64,
}

impl Icache {
    /// Room for `n` more inodes at once (see [`super::dcache::Dcache::reserve`]).
    pub fn reserve(&mut self, n: usize) {
        self.inodes.reserve_exact(n);
        self.links.reserve_exact(n);
    }
}

/// `iget` of a file not in memory, its object already allocated in slab page `slab`: a new
/// in-memory inode of superblock `sb` for file `file` (`NIL`: none), held once.
pub fn iget(k: &mut Kernel, sb: u32, file: u32, slab: u32) -> u32 {
    let ic = &mut k.icache;
    let vi = VfsInode {
        sb,
        i_count: 1,
        nlink: 1,
        state: 0,
        file,
        slab,
    };
    let i = slab::insert_object(&mut ic.inodes, &mut ic.links, &mut ic.free, vi);
    ic.nr_inodes += 1;
    if file != NIL {
        debug_assert_eq!(k.inodes[file as usize].vfs, NIL);
        k.inodes[file as usize].vfs = i;
    }
    i
}

/// [`iget`] taking its object from the free lists without waiting (boot, tests).
pub fn iget_boot(k: &mut Kernel, sb: u32, file: u32) -> u32 {
    let slab = slab::kmem_cache_alloc_now(
        k,
        CacheId::Inode,
        Gfp::KERNEL,
        super::page_alloc::alloc_flags::NO_WATERMARKS,
    )
    .expect("a free page for the inode cache");
    iget(k, sb, file, slab)
}

/// `__iget`: one more reference to a cached inode. One on the LRU stays there (the shrinker
/// takes it off when it finds it in use).
pub fn ihold(k: &mut Kernel, i: u32) {
    k.icache.inodes[i as usize].i_count += 1;
}

/// `i_state & ~I_REFERENCED`: dirty, under writeback or being freed, so not reclaimable.
fn busy(k: &Kernel, i: u32) -> bool {
    let vi = &k.icache.inodes[i as usize];
    vi.state & I_FREEING != 0
        || (vi.file != NIL && k.inodes[vi.file as usize].state & (I_DIRTY | I_SYNC) != 0)
}

/// `inode_add_lru`: an unused clean inode goes onto the head of its superblock's LRU.
pub fn inode_add_lru(k: &mut Kernel, i: u32) {
    let vi = &k.icache.inodes[i as usize];
    if vi.i_count == 0 && vi.state & I_LRU == 0 && !busy(k, i) {
        let sb = vi.sb as usize;
        k.icache.inodes[i as usize].state |= I_LRU;
        k.super_blocks[sb].inode_lru.add(&mut k.icache.links, i);
    }
}

/// `inode_lru_list_del`: off its superblock's LRU, if on it.
fn inode_lru_list_del(k: &mut Kernel, i: u32) {
    let vi = &mut k.icache.inodes[i as usize];
    if vi.state & I_LRU != 0 {
        vi.state &= !I_LRU;
        let sb = vi.sb as usize;
        k.super_blocks[sb].inode_lru.del(&mut k.icache.links, i);
    }
}

/// `inode_sync_complete`: writeback of file `ino` is over (`I_SYNC` cleared); its inode
/// joins the LRU if it is clean and unused.
pub fn inode_sync_complete(k: &mut Kernel, ino: usize) {
    let i = k.inodes[ino].vfs;
    if i != NIL {
        inode_add_lru(k, i);
    }
}

/// `iput`: drop a reference. The last one of a linked file leaves the inode cached, marked
/// referenced, on the LRU if clean (`iput_final`). An unlinked file's last reference is
/// dropped by `namei::unlink`, which evicts it.
pub fn iput(k: &mut Kernel, i: u32) {
    let vi = &mut k.icache.inodes[i as usize];
    assert!(vi.i_count > 0, "iput of inode {i}, which nobody holds");
    vi.i_count -= 1;
    if vi.i_count > 0 {
        return;
    }
    if vi.nlink == 0 {
        k.fail(format!(
            "invariant 'slab objects' violated: inode {i} was unlinked while in use"
        ));
        return;
    }
    vi.state |= I_REFERENCED;
    inode_add_lru(k, i);
}

/// `evict` + `destroy_inode` of an inode with no page cache: its file (if any) leaves
/// memory, and the object is freed.
pub fn evict(k: &mut Kernel, i: u32) {
    inode_lru_list_del(k, i);
    let vi = k.icache.inodes[i as usize];
    if vi.file != NIL {
        let ino = vi.file as usize;
        debug_assert_eq!(k.inodes[ino].nrpages, 0, "evicting a file with page cache");
        let bdi = k.inodes[ino].bdi;
        if let Some(b) = k.bdis.get_mut(bdi) {
            b.b_dirty.retain(|&x| x != ino);
            b.b_io.retain(|&x| x != ino);
            b.b_more_io.retain(|&x| x != ino);
        }
        let f = &mut k.inodes[ino];
        f.vfs = NIL;
        f.state = 0;
        f.writeback_index = 0;
        f.dirtied_when = 0;
    }
    slab::kmem_cache_free(k, CacheId::Inode, vi.slab);
    let ic = &mut k.icache;
    ic.inodes[i as usize].slab = NIL;
    ic.inodes[i as usize].file = NIL;
    ic.free.push(i);
    ic.nr_inodes -= 1;
}

/// `can_unuse`: whether an inode whose page cache was just dropped can be freed now.
fn can_unuse(k: &Kernel, i: u32) -> bool {
    let vi = &k.icache.inodes[i as usize];
    !busy(k, i) && vi.i_count == 0 && (vi.file == NIL || k.inodes[vi.file as usize].nrpages == 0)
}

/// `prune_icache_sb` (3.9, `kernel-reclaim.md` §6): look at `nr_to_scan + 1` inodes from
/// the tail of superblock `sb`'s LRU. One in use, dirty or under writeback leaves the LRU;
/// a referenced one loses the mark and goes to the head. One with page cache has its clean
/// pages dropped (`invalidate_mapping_pages`: inode steals, counted `kswapd_inodesteal` or
/// `pginodesteal` and added to `reclaimed_slab`); dropping the reference taken for that
/// marks it referenced again, and it is freed at once only if it heads the LRU (the
/// kernel's check compares with the list's first entry) and `can_unuse`; otherwise it stays
/// for a later pass. The others are freed, last taken first.
pub fn prune_icache_sb(k: &mut Kernel, sb: usize, nr_to_scan: u64, cx: &mut PruneCx) {
    let mut freeable = Vec::new();
    let mut reap = 0;
    let mut nr_scanned = nr_to_scan as i64;
    while nr_scanned >= 0 {
        nr_scanned -= 1;
        let i = k.super_blocks[sb].inode_lru.tail;
        if i == NIL {
            break;
        }
        cx.visit();
        if k.icache.inodes[i as usize].i_count > 0 || busy(k, i) {
            inode_lru_list_del(k, i);
            continue;
        }
        let vi = &mut k.icache.inodes[i as usize];
        if vi.state & I_REFERENCED != 0 {
            vi.state &= !I_REFERENCED;
            let lru = &mut k.super_blocks[sb].inode_lru;
            lru.del(&mut k.icache.links, i);
            lru.add(&mut k.icache.links, i);
            continue;
        }
        let file = vi.file;
        if file != NIL && k.inodes[file as usize].nrpages > 0 {
            reap += filemap::invalidate_mapping_pages(k, file as usize, cx);
            // iput of the reference taken for it: iput_final marks it referenced again.
            k.icache.inodes[i as usize].state |= I_REFERENCED;
            if k.super_blocks[sb].inode_lru.head != i || !can_unuse(k, i) {
                continue;
            }
        }
        k.icache.inodes[i as usize].state |= I_FREEING;
        inode_lru_list_del(k, i);
        freeable.push(i);
    }
    let steal = if cx.kswapd {
        VmEvent::kswapd_inodesteal
    } else {
        VmEvent::pginodesteal
    };
    k.count(steal, reap);
    cx.reap += reap;
    for &i in freeable.iter().rev() {
        evict(k, i);
    }
}

/// The in-memory inodes against the inode cache's pages, their files and the references
/// dentries hold (`held`, by inode), for the invariants.
pub fn check(k: &Kernel, held: &[u32]) -> Result<(), String> {
    let fail = |what: String| Err(format!("invariant 'slab objects' violated: {what}"));
    let cache = k.slab.cache(CacheId::Inode);
    let mut live = 0;
    for (i, vi) in k.icache.inodes.iter().enumerate() {
        if !vi.live() {
            continue;
        }
        live += 1;
        if cache.inuse(vi.slab).is_none_or(|n| n == 0) {
            return fail(format!(
                "inode {i} is in inode page {}, which holds none",
                vi.slab
            ));
        }
        if vi.i_count < held[i] {
            return fail(format!(
                "inode {i} has i_count {} but {} dentries hold it",
                vi.i_count, held[i]
            ));
        }
        if vi.file != NIL
            && k.inodes
                .get(vi.file as usize)
                .is_none_or(|f| f.vfs != i as u32)
        {
            return fail(format!(
                "inode {i} names file {}, which does not name it back",
                vi.file
            ));
        }
    }
    if live != k.icache.nr_inodes || live != cache.active_objs {
        return fail(format!(
            "{live} live inodes, nr_inodes {}, inode cache objects {}",
            k.icache.nr_inodes, cache.active_objs
        ));
    }
    for (ino, f) in k.inodes.iter().enumerate() {
        if f.vfs == NIL && (f.nrpages > 0 || !f.i_mmap.is_empty()) {
            return fail(format!(
                "file {ino} ({}) has page cache or mappings but no inode in memory",
                f.name
            ));
        }
        let freeing = |i: u32| {
            k.icache
                .inodes
                .get(i as usize)
                .is_some_and(|v| v.state & I_FREEING != 0)
        };
        if f.unlinked && f.vfs != NIL && !freeing(f.vfs) {
            return fail(format!(
                "file {ino} ({}) is unlinked but in memory, not being evicted",
                f.name
            ));
        }
        if f.vfs != NIL
            && k.icache
                .inodes
                .get(f.vfs as usize)
                .is_none_or(|v| !v.live() || v.file != ino as u32)
        {
            return fail(format!(
                "file {ino} ({}) names inode {}, which does not name it back",
                f.name, f.vfs
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holes_are_the_pages_a_truncate_grew_over_until_written() {
        let mut i = Inode::new("sparse", 0, &crate::mm::fs_ops::EMPTY_AOPS);
        assert!(!i.is_hole(0), "a file never grown has no holes");
        i.make_holes(3..130);
        assert!(!i.is_hole(2) && i.is_hole(3) && i.is_hole(64) && i.is_hole(129));
        assert!(!i.is_hole(130) && !i.is_hole(10_000));
        i.fill_hole(64);
        assert!(!i.is_hole(64) && i.is_hole(63) && i.is_hole(65));
        i.fill_hole(70);
        assert!(!i.is_hole(70) && i.is_hole(69) && i.is_hole(71));
        // Past the map: nothing to fill.
        i.fill_hole(1 << 20);
    }

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
