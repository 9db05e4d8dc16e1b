//! Address spaces, page tables and faults (`mm/memory.c`, `do_anonymous_page`,
//! `do_swap_page`; `kernel-reclaim.md` §4.10), and shared file mappings (`mmap(MAP_SHARED)`:
//! `do_linear_fault`, `do_wp_page`, `zap_pte_range`, `unmap_mapping_range`).
//!
//! A PTE is a `u32`: 0 is none; bit 31 set means present, with the young and dirty bits and
//! the frame number below; otherwise the value is a swap slot plus one.
//!
//! A shared file mapping tracks dirtying as the kernel does (`vma_wants_writenotify`): its PTEs
//! are write-protected while clean, so the first write to a page faults into `page_mkwrite`,
//! which dirties the page. mmsim keeps no separate write bit: a shared file PTE is writable
//! exactly while it is dirty, since the kernel makes it writable and dirty together (write
//! fault) and write-protects and cleans it together (`page_mkclean`). Private file mappings
//! (copy-on-write) are not modelled.

use super::page::{
    Lru, Pfn, NIL, PG_ANON, PG_DIRTY, PG_LOCKED, PG_SWAPBACKED, PG_SWAPCACHE, PG_UPTODATE,
    PG_WRITEBACK,
};
use super::page_alloc::{alloc_pages, AllocError};
use super::page_writeback::{balance_dirty_pages_ratelimited, set_page_dirty, DirtyTask};
use super::readahead::RaState;
use super::vmstat::{VmEvent, ZoneStat};
use super::{filemap, page_io, rmap, swap, swapfile, Gfp, Kernel, World};
use crate::calibration::{MAJOR_FAULT_NS, MINOR_FAULT_NS};
use crate::engine::{self, Nanos, TaskId};

/// PTE present bit.
pub const PTE_PRESENT: u32 = 1 << 31;
/// PTE accessed ("young") bit, set by the MMU on every access.
pub const PTE_YOUNG: u32 = 1 << 30;
/// PTE dirty bit, set by the MMU on every write.
pub const PTE_DIRTY: u32 = 1 << 29;
/// Frame number bits of a present PTE.
pub const PTE_PFN_MASK: u32 = (1 << 29) - 1;

/// `VM_EXEC`.
pub const VM_EXEC: u32 = 1 << 0;
/// `VM_LOCKED`.
pub const VM_LOCKED: u32 = 1 << 1;
/// `VM_SHARED`: a shared file mapping, whose writes go to the page cache.
pub const VM_SHARED: u32 = 1 << 2;
/// `VM_HUGEPAGE`: `madvise(MADV_HUGEPAGE)`, for `transparent_hugepage/enabled = madvise`.
pub const VM_HUGEPAGE: u32 = 1 << 3;
/// A heap that grows as its program allocates (`brk`, or small mmaps that merge with the
/// one before): only the part grown into so far ([`Vma::brk`]) is mapped, which is what
/// decides whether a 2 MiB range can take a transparent huge page. mmsim's flag, not the
/// kernel's: the kernel sees the mapping itself grow. Only THP reads the extent, so it is
/// kept only while THP is on.
pub const VM_BRK: u32 = 1 << 4;
/// glibc's `M_TOP_PAD` (128 KiB): what `malloc` grows a heap by beyond the request.
pub const BRK_TOP_PAD_PAGES: u32 = 32;

/// A mapping: a run of virtual pages and their PTEs.
#[derive(Clone, Debug)]
pub struct Vma {
    /// First virtual page number.
    pub start: u32,
    /// `VM_*` flags.
    pub flags: u32,
    /// One PTE per page.
    pub ptes: Vec<u32>,
    /// The file a file mapping maps; `None` for anonymous memory.
    pub file: Option<VmFile>,
    /// Pages from `start` the mapping covers so far: all of it, or for a [`VM_BRK`] heap
    /// what it has grown into.
    pub brk: u32,
}

impl Vma {
    /// The first page past what the mapping covers now.
    #[inline]
    pub fn end_now(&self) -> u32 {
        self.start + self.brk
    }
}

/// The file behind a file mapping (`vm_file`, `vm_pgoff`).
#[derive(Clone, Copy, Debug)]
pub struct VmFile {
    /// The inode.
    pub ino: usize,
    /// File page mapped at the first virtual page.
    pub pgoff: u64,
    /// The open file's readahead state (`file->f_ra`).
    pub ra: RaState,
}

/// An address space (`struct mm_struct`) and the task that owns it.
#[derive(Clone, Debug, Default)]
pub struct Mm {
    /// Owner name (the workload).
    pub name: String,
    /// The owning task, for the OOM killer.
    pub task: Option<TaskId>,
    /// Mappings, sorted by start.
    pub vmas: Vec<Vma>,
    /// Next free virtual page number.
    pub next_vpn: u32,
    /// Resident anonymous pages (`MM_ANONPAGES`).
    pub rss: u64,
    /// Resident pages of file mappings (`MM_FILEPAGES`).
    pub file_rss: u64,
    /// Swap entries in the page tables (`MM_SWAPENTS`).
    pub swapents: u64,
    /// Faults that needed no IO.
    pub min_flt: u64,
    /// Faults that waited for a read.
    pub maj_flt: u64,
    /// Torn down after an OOM kill.
    pub dead: bool,
    /// The owning task's dirty-throttling state, for pages it dirties through a mapping
    /// (`current->nr_dirtied` and friends).
    pub dirty: DirtyTask,
    /// The frames of its page tables.
    pub pgtables: PageTables,
    /// On khugepaged's scan list (`khugepaged_enter`).
    pub khugepaged: bool,
}

/// Levels below the PGD, x86-64's four-level layout: PUD, PMD, PTE.
pub const PGTABLE_LEVELS: usize = 3;
/// Virtual-page-number shift of the span one table of each level maps: a PUD page maps
/// 512 GiB, a PMD page 1 GiB, a PTE page 2 MiB (512 entries each).
pub const PGTABLE_SHIFT: [u32; PGTABLE_LEVELS] = [27, 18, 9];

/// The frames of an mm's page tables (`mm->pgd` and the tables below it). The PTE values
/// themselves live in the mappings ([`Vma::ptes`]); these are the pages that hold them,
/// allocated as the kernel allocates them, which is what matters to the allocator: each is
/// an unmovable page that lives as long as something is mapped in its span.
#[derive(Clone, Debug, Default)]
pub struct PageTables {
    /// The PGD page, `None` until the first fault (the kernel makes it at fork, when
    /// nothing is mapped yet).
    pub pgd: Option<Pfn>,
    /// Per level (PUD, PMD, PTE), the table of each span, by `vpn >> PGTABLE_SHIFT`; NIL
    /// where there is none.
    pub tables: [Vec<Pfn>; PGTABLE_LEVELS],
}

impl PageTables {
    /// The table of `level` that maps `vpn`, if there is one.
    #[inline]
    pub fn table(&self, level: usize, vpn: u32) -> Option<Pfn> {
        let t = *self.tables[level].get((vpn >> PGTABLE_SHIFT[level]) as usize)?;
        (t != NIL).then_some(t)
    }

    /// Whether every table a PTE for `vpn` needs is there.
    #[inline]
    pub fn present(&self, vpn: u32) -> bool {
        self.table(PGTABLE_LEVELS - 1, vpn).is_some()
    }

    /// Every frame, the PGD first.
    pub fn frames(&self) -> impl Iterator<Item = Pfn> + '_ {
        self.pgd
            .into_iter()
            .chain(self.tables.iter().flatten().copied().filter(|&t| t != NIL))
    }
}

impl Mm {
    /// Map `pages` anonymous pages; returns the first virtual page number.
    pub fn mmap_anon(&mut self, pages: u32, flags: u32) -> u32 {
        let start = self.next_vpn;
        self.vmas.push(Vma {
            start,
            flags,
            ptes: vec![0; pages as usize],
            file: None,
            brk: if flags & VM_BRK != 0 { 0 } else { pages },
        });
        // A guard gap between mappings keeps a bad index from landing in the next one.
        self.next_vpn = start + pages + 16;
        start
    }

    /// Grow the anonymous mapping that starts at `start` to `pages` pages, as `brk` grows
    /// a heap. Only the last mapping can grow (the next one would be in the way); returns
    /// whether it did.
    pub fn grow_anon(&mut self, start: u32, pages: u32) -> bool {
        let Some(vma) = self.vmas.last_mut().filter(|v| v.start == start) else {
            return false;
        };
        let pages = vma.ptes.len().max(pages as usize);
        vma.ptes.resize(pages, 0);
        if vma.flags & VM_BRK == 0 {
            vma.brk = pages as u32;
        }
        self.next_vpn = start + pages as u32 + 16;
        true
    }

    /// The mapping holding `vpn` and the PTE index in it.
    #[inline]
    pub fn find_vma(&self, vpn: u32) -> Option<(usize, usize)> {
        // Few mappings per mm: a linear scan from the end beats a search.
        for (i, v) in self.vmas.iter().enumerate().rev() {
            if vpn >= v.start {
                let off = (vpn - v.start) as usize;
                return (off < v.ptes.len()).then_some((i, off));
            }
        }
        None
    }

    /// The PTE of `vpn` (0 if unmapped).
    #[inline]
    pub fn pte(&self, vpn: u32) -> u32 {
        match self.find_vma(vpn) {
            Some((v, i)) => self.vmas[v].ptes[i],
            None => 0,
        }
    }

    /// A mutable PTE.
    #[inline]
    pub fn pte_mut(&mut self, vpn: u32) -> &mut u32 {
        let (v, i) = self.find_vma(vpn).expect("vpn is mapped");
        &mut self.vmas[v].ptes[i]
    }
}

/// The outcome of an access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// The page was resident: the MMU set the young (and dirty) bits.
    Hit,
    /// A fault was needed; `handle_mm_fault` must run.
    Fault,
}

/// The MMU's part of an access: set the accessed bit (and the dirty bit on a write) of a
/// present PTE. No kernel code runs.
#[inline]
pub fn touch(k: &mut Kernel, mm: usize, vpn: u32, write: bool) -> Access {
    let m = &mut k.mms[mm];
    let (v, i) = m.find_vma(vpn).expect("vpn is mapped");
    let vma = &mut m.vmas[v];
    let shared = vma.flags & VM_SHARED != 0;
    let pte = &mut vma.ptes[i];
    if *pte & PTE_PRESENT == 0 || (write && shared && *pte & PTE_DIRTY == 0) {
        // Not present, or write-protected for dirty tracking.
        return Access::Fault;
    }
    *pte |= PTE_YOUNG | if write { PTE_DIRTY } else { 0 };
    Access::Hit
}

/// [`touch`] each page of `vpns` in turn, up to the first that needs a fault; returns that
/// page (`vpns.end` if every page hit). One mapping lookup serves a run of pages.
#[inline]
pub fn touch_range(k: &mut Kernel, mm: usize, vpns: std::ops::Range<u32>, write: bool) -> u32 {
    let m = &mut k.mms[mm];
    let mut vpn = vpns.start;
    while vpn < vpns.end {
        let (v, i) = m.find_vma(vpn).expect("vpn is mapped");
        let vma = &mut m.vmas[v];
        let wp = write && vma.flags & VM_SHARED != 0;
        let n = (vpns.end - vpn).min((vma.ptes.len() - i) as u32) as usize;
        for pte in &mut vma.ptes[i..i + n] {
            if *pte & PTE_PRESENT == 0 || (wp && *pte & PTE_DIRTY == 0) {
                return vpn;
            }
            *pte |= PTE_YOUNG | if write { PTE_DIRTY } else { 0 };
            vpn += 1;
        }
    }
    vpn
}

/// Ask the host CPU to bring `x` into its cache (a hint: no effect on what is computed).
#[inline]
pub fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch never faults and reads nothing the program sees.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((x as *const T).cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// [`prefetch`] the PTE of `vpn` in `mm`, if it is mapped.
#[inline]
pub fn prefetch_pte(k: &Kernel, mm: usize, vpn: u32) {
    let m = &k.mms[mm];
    if let Some((v, i)) = m.find_vma(vpn) {
        prefetch(&m.vmas[v].ptes[i]);
    }
}

/// Result of a fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FaultCost {
    /// Whether it waited for IO.
    pub major: bool,
    /// CPU time the fault used (system).
    pub cpu: Nanos,
}

/// A fault that did nothing (the mapping is gone, or the access was past the end of a file).
const NO_FAULT: FaultCost = FaultCost {
    major: false,
    cpu: 0,
};

/// `PGALLOC_GFP` (x86 `pgd_alloc`, `pte_alloc_one`): `GFP_KERNEL`, zeroed, retried. Not
/// movable: page tables are unmovable allocations, which is why they matter to
/// fragmentation.
const PGALLOC_GFP: Gfp = Gfp(Gfp::KERNEL.0 | Gfp::NOTRACK | Gfp::REPEAT | Gfp::ZERO);
/// `pud_alloc_one`, `pmd_alloc_one`: `get_zeroed_page(GFP_KERNEL | __GFP_REPEAT)`.
const PMD_GFP: Gfp = Gfp(Gfp::KERNEL.0 | Gfp::REPEAT | Gfp::ZERO);

/// The first table a PTE for `vpn` lacks: 0 for the PGD, 1 + its level below it.
fn first_missing(pt: &PageTables, vpn: u32) -> Option<usize> {
    if pt.pgd.is_none() {
        return Some(0);
    }
    (0..PGTABLE_LEVELS)
        .find(|&l| pt.table(l, vpn).is_none())
        .map(|l| l + 1)
}

/// The mask the table of [`first_missing`]'s `level` is allocated with.
fn table_gfp(level: usize) -> Gfp {
    if level == 0 || level == PGTABLE_LEVELS {
        PGALLOC_GFP
    } else {
        PMD_GFP
    }
}

/// `pgd_populate`, `pud_populate`, `pmd_populate`: `pfn` becomes the table of `level` for
/// `vpn`. A PTE page counts in `nr_page_table_pages` (`pgtable_page_ctor`).
fn install_table(k: &mut Kernel, mm: usize, level: usize, vpn: u32, pfn: Pfn) {
    let pt = &mut k.mms[mm].pgtables;
    if level == 0 {
        pt.pgd = Some(pfn);
        return;
    }
    let l = level - 1;
    let i = (vpn >> PGTABLE_SHIFT[l]) as usize;
    let t = &mut pt.tables[l];
    if t.len() <= i {
        t.resize(i + 1, NIL);
    }
    t[i] = pfn;
    if level == PGTABLE_LEVELS {
        let z = k.page_zone(pfn);
        k.zones[z].mod_stat(ZoneStat::nr_page_table_pages, 1);
    }
}

/// Free table `pfn` of `level` (`pte_free`, `pmd_free`, ...).
fn free_table(k: &mut Kernel, level: usize, pfn: Pfn) {
    if level == PGTABLE_LEVELS {
        let z = k.page_zone(pfn);
        k.zones[z].mod_stat(ZoneStat::nr_page_table_pages, -1);
    }
    super::page_alloc::free_page(k, pfn);
}

/// `handle_mm_fault`'s `pud_alloc`, `pmd_alloc` and `pte_alloc` (and the PGD, which mmsim
/// makes at the first fault): allocate, one page at a time and each able to sleep in
/// reclaim, the tables a PTE for `vpn` needs. A table that another thread of the mm
/// installed meanwhile makes ours go back, as `__pte_alloc` frees its page when it finds
/// the PMD populated; so does a table for an mm torn down meanwhile.
pub async fn pgtable_alloc(w: &World, mm: usize, vpn: u32) -> Result<(), AllocError> {
    loop {
        let Some(level) = first_missing(&w.borrow().mms[mm].pgtables, vpn) else {
            return Ok(());
        };
        let pfn = alloc_pages(w, table_gfp(level), 0).await?;
        let mut k = w.borrow_mut();
        let dead = k.mms[mm].dead;
        if dead || first_missing(&k.mms[mm].pgtables, vpn) != Some(level) {
            super::page_alloc::free_page(&mut k, pfn);
            if dead {
                return Ok(());
            }
            continue;
        }
        install_table(&mut k, mm, level, vpn, pfn);
    }
}

/// [`pgtable_alloc`] from the allocator's fast path only; false if a table could not be
/// had that way (the tables it did get stay, as the kernel's would).
pub fn pgtable_alloc_now(k: &mut Kernel, mm: usize, vpn: u32) -> bool {
    while let Some(level) = first_missing(&k.mms[mm].pgtables, vpn) {
        let Some(pfn) = super::page_alloc::alloc_pages_now(k, table_gfp(level), 0) else {
            return false;
        };
        install_table(k, mm, level, vpn, pfn);
    }
    true
}

/// `free_pgtables`: after `vpns` were unmapped, free every table whose span no mapping of
/// the mm overlaps any more, the PTE level first. `None`: the whole mm goes (`exit_mmap`),
/// the PGD with it.
fn free_pgtables(k: &mut Kernel, mm: usize, vpns: Option<std::ops::Range<u32>>) {
    for l in (0..PGTABLE_LEVELS).rev() {
        let shift = PGTABLE_SHIFT[l];
        let spans = match &vpns {
            Some(r) if r.is_empty() => continue,
            Some(r) => (r.start >> shift) as usize..((r.end - 1) >> shift) as usize + 1,
            None => 0..k.mms[mm].pgtables.tables[l].len(),
        };
        for i in spans {
            let Some(&pfn) = k.mms[mm].pgtables.tables[l].get(i) else {
                break;
            };
            let (lo, hi) = ((i as u64) << shift, (i as u64 + 1) << shift);
            let used = k.mms[mm].vmas.iter().any(|v| {
                let start = v.start as u64;
                start < hi && start + v.ptes.len() as u64 > lo
            });
            if pfn == NIL || used {
                continue;
            }
            k.mms[mm].pgtables.tables[l][i] = NIL;
            free_table(k, l + 1, pfn);
        }
    }
    if vpns.is_none() {
        let pt = std::mem::take(&mut k.mms[mm].pgtables);
        debug_assert!(pt.tables.iter().flatten().all(|&t| t == NIL));
        if let Some(pgd) = pt.pgd {
            super::page_alloc::free_page(k, pgd);
        }
    }
}

/// `handle_mm_fault`: first touch or swap-in of anonymous memory; for a shared file mapping,
/// `do_linear_fault` or, on a write to a write-protected PTE, `do_wp_page`.
pub async fn handle_mm_fault(
    w: &World,
    mm: usize,
    vpn: u32,
    write: bool,
) -> Result<FaultCost, AllocError> {
    let (pte, file) = {
        let k = w.borrow();
        let m = &k.mms[mm];
        match m.find_vma(vpn) {
            Some((v, i)) => (m.vmas[v].ptes[i], m.vmas[v].file.is_some()),
            None => return Ok(NO_FAULT),
        }
    };
    if pte == 0 && !file {
        if let Some(cost) = super::huge_memory::do_huge_pmd_anonymous_page(w, mm, vpn).await? {
            return Ok(cost);
        }
    }
    if pte == 0 {
        pgtable_alloc(w, mm, vpn).await?;
    }
    if file {
        if pte & PTE_PRESENT == 0 {
            return do_linear_fault(w, mm, vpn, write).await;
        }
        if write && pte & PTE_DIRTY == 0 {
            let ino = do_wp_page(&mut w.borrow_mut(), mm, vpn, pte);
            balance_after_fault(w, mm, ino).await;
            return Ok(FaultCost {
                major: false,
                cpu: MINOR_FAULT_NS,
            });
        }
    }
    if pte & PTE_PRESENT != 0 {
        // Raced with another thread of the same mm.
        touch(&mut w.borrow_mut(), mm, vpn, write);
        return Ok(FaultCost {
            major: false,
            cpu: 0,
        });
    }
    if pte == 0 {
        do_anonymous_page(w, mm, vpn).await
    } else {
        do_swap_page(w, mm, vpn, pte - 1, write).await
    }
}

/// [`handle_mm_fault`] done at once, for the fault that needs no wait while memory is
/// plentiful: the first touch of anonymous memory (`do_anonymous_page`) when the
/// allocator's fast path has a page ([`page_alloc::alloc_pages_now`]), and one for each
/// page table it lacks. Returns `None`, having changed nothing but the tables it got, for
/// any other fault or when an allocation would need the slow path: then `handle_mm_fault`
/// must run, and does what it would have done.
pub fn handle_mm_fault_now(k: &mut Kernel, mm: usize, vpn: u32) -> Option<FaultCost> {
    let m = &k.mms[mm];
    let (v, i) = m.find_vma(vpn)?;
    if m.vmas[v].file.is_some() || m.vmas[v].ptes[i] != 0 {
        return None;
    }
    // A fault that tries a transparent huge page takes the slow path.
    if super::huge_memory::anon_fault_prepare(k, mm, vpn) {
        return None;
    }
    // A charge that would wait for limit reclaim takes the slow path.
    let mc = super::memcontrol::mm_memcg(k, mm);
    if mc != 0 && k.memcg.groups[mc].stock == 0 {
        return None;
    }
    if !k.mms[mm].pgtables.present(vpn) && !pgtable_alloc_now(k, mm, vpn) {
        return None;
    }
    let pfn = super::page_alloc::alloc_pages_now(k, ANON_PAGE_GFP, 0)?;
    Some(anonymous_page_allocated(k, mm, vpn, pfn))
}

/// `alloc_zeroed_user_highpage_movable`'s mask.
const ANON_PAGE_GFP: Gfp = Gfp(Gfp::HIGHUSER_MOVABLE.0 | Gfp::ZERO);

/// `do_anonymous_page` (write fault): a zeroed page on the active anon list.
async fn do_anonymous_page(w: &World, mm: usize, vpn: u32) -> Result<FaultCost, AllocError> {
    let mc = super::memcontrol::mm_memcg(&w.borrow(), mm);
    super::memcontrol::try_charge(w, mc, 1).await?;
    let pfn = alloc_pages(w, ANON_PAGE_GFP, 0).await?;
    Ok(anonymous_page_allocated(&mut w.borrow_mut(), mm, vpn, pfn))
}

/// The rest of `do_anonymous_page` once its page is allocated: map it.
fn anonymous_page_allocated(k: &mut Kernel, mm: usize, vpn: u32, pfn: Pfn) -> FaultCost {
    k.count(VmEvent::pgfault, 1);
    if *k.mms[mm].pte_mut(vpn) != 0 || k.mms[mm].dead {
        // Another thread got there first, or the mm was torn down meanwhile.
        super::page_alloc::free_page(k, pfn);
        return FaultCost {
            major: false,
            cpu: MINOR_FAULT_NS,
        };
    }
    let mc = super::memcontrol::mm_memcg(k, mm);
    map_new_anon_page(k, mm, vpn, pfn, mc);
    k.mms[mm].min_flt += 1;
    FaultCost {
        major: false,
        cpu: MINOR_FAULT_NS,
    }
}

/// Map new page `pfn` at `vpn` of `mm` as its anonymous page, charged to `mc`, young and
/// dirty, on the active anon list (`page_add_new_anon_rmap`).
pub(super) fn map_new_anon_page(k: &mut Kernel, mm: usize, vpn: u32, pfn: Pfn, mc: usize) {
    k.pages.flags[pfn as usize] = PG_SWAPBACKED | PG_ANON | PG_UPTODATE;
    k.pages.mapping[pfn as usize] = mm as u32;
    k.pages.index[pfn as usize] = vpn;
    k.mapcount_add(pfn, 1);
    let zi = k.page_zone(pfn);
    k.zones[zi].mod_stat(ZoneStat::nr_anon_pages, 1);
    *k.mms[mm].pte_mut(vpn) = PTE_PRESENT | PTE_YOUNG | PTE_DIRTY | pfn;
    k.mms[mm].rss += 1;
    super::memcontrol::commit_charge(k, pfn, mc, true);
    swap::lru_cache_add_lru(k, pfn, Lru::ActiveAnon);
}

/// `do_swap_page`: find the page in the swap cache or read it (with readahead), map it.
async fn do_swap_page(
    w: &World,
    mm: usize,
    vpn: u32,
    slot: u32,
    write: bool,
) -> Result<FaultCost, AllocError> {
    let mut major = false;
    let pfn = loop {
        let cached = w.borrow().swap.lookup_swap_cache(slot);
        let pfn = match cached {
            Some(p) => p,
            None => {
                major = true;
                match page_io::swapin_readahead(w, slot).await? {
                    Some(p) => p,
                    // The slot was freed under us: the PTE changed; retry the fault.
                    None => {
                        return Ok(FaultCost {
                            major,
                            cpu: MAJOR_FAULT_NS,
                        })
                    }
                }
            }
        };
        // lock_page: wait for the read (or another locker) to finish.
        loop {
            let (locked, q) = {
                let k = w.borrow();
                (k.pages.test(pfn, PG_LOCKED), k.wq.page(pfn))
            };
            if !locked {
                break;
            }
            engine::wait_event(w, q, None, false).await;
        }
        let k = w.borrow();
        // The page may have left the swap cache while we slept.
        if k.pages.test(pfn, PG_SWAPCACHE) && k.pages.private[pfn as usize] == slot {
            break pfn;
        }
        if k.mms[mm].pte(vpn) != slot + 1 {
            return Ok(FaultCost {
                major,
                cpu: MAJOR_FAULT_NS,
            });
        }
    };
    let mut k = w.borrow_mut();
    k.count(VmEvent::pgfault, 1);
    if major {
        k.count(VmEvent::pgmajfault, 1);
        k.mms[mm].maj_flt += 1;
    } else {
        k.mms[mm].min_flt += 1;
    }
    if k.mms[mm].pte(vpn) != slot + 1 || k.mms[mm].dead {
        return Ok(FaultCost {
            major,
            cpu: MAJOR_FAULT_NS,
        });
    }
    debug_assert!(k.pages.test(pfn, PG_UPTODATE));
    // page_add_anon_rmap
    k.pages.set(pfn, PG_ANON);
    k.pages.mapping[pfn as usize] = mm as u32;
    k.pages.index[pfn as usize] = vpn;
    if !k.pages.mapped(pfn) {
        let zi = k.page_zone(pfn);
        k.zones[zi].mod_stat(ZoneStat::nr_anon_pages, 1);
    }
    k.mapcount_add(pfn, 1);
    k.mms[mm].rss += 1;
    k.mms[mm].swapents -= 1;
    let mut pte = PTE_PRESENT | PTE_YOUNG | pfn;
    swapfile::swap_free(&mut k, slot);
    if write && swapfile::reuse_swap_page(&mut k, pfn) {
        // The only user: drop the swap copy, the page is dirty anonymous memory again.
        pte |= PTE_DIRTY;
    } else if k.swap.vm_swap_full() {
        swapfile::try_to_free_swap(&mut k, pfn);
    }
    if write {
        pte |= PTE_DIRTY;
    }
    *k.mms[mm].pte_mut(vpn) = pte;
    Ok(FaultCost {
        major,
        cpu: MAJOR_FAULT_NS,
    })
}

/// The file page a virtual page of a file mapping maps, with the file's readahead state.
fn vma_file_page(k: &Kernel, mm: usize, vpn: u32) -> Option<(usize, u64, RaState)> {
    let m = &k.mms[mm];
    let (v, i) = m.find_vma(vpn)?;
    let f = m.vmas[v].file?;
    Some((f.ino, f.pgoff + i as u64, f.ra))
}

/// Keep the readahead state a fault updated (it belongs to the open file).
fn store_file_ra(k: &mut Kernel, mm: usize, vpn: u32, ra: RaState) {
    let m = &mut k.mms[mm];
    if let Some((v, _)) = m.find_vma(vpn) {
        if let Some(f) = m.vmas[v].file.as_mut() {
            f.ra = ra;
        }
    }
}

/// `do_linear_fault` → `__do_fault` on a shared file mapping: `filemap_fault` finds the page
/// in the page cache (minor) or reads it (major); a write fault runs `page_mkwrite`, which
/// dirties the page, maps it writable and dirty, and then throttles the writer as `write(2)`
/// does (`balance_dirty_pages_ratelimited`). A fault past the end of the file would be
/// SIGBUS; mmsim drops the access.
async fn do_linear_fault(
    w: &World,
    mm: usize,
    vpn: u32,
    write: bool,
) -> Result<FaultCost, AllocError> {
    let Some((ino, index, mut ra)) = vma_file_page(&w.borrow(), mm, vpn) else {
        return Ok(NO_FAULT);
    };
    w.borrow_mut().count(VmEvent::pgfault, 1);
    let found = filemap::filemap_fault(w, ino, index, &mut ra).await;
    let (cost, mapped) = map_file_fault(&mut w.borrow_mut(), mm, vpn, ra, found?, write);
    if mapped && write {
        balance_after_fault(w, mm, ino).await;
    }
    Ok(cost)
}

/// The end of `do_linear_fault`, once `filemap_fault` has the page: count the fault, and map
/// the page unless the PTE changed or the mm died meanwhile (dirtying it first for a write).
/// Returns the cost and whether the page was mapped.
fn map_file_fault(
    k: &mut Kernel,
    mm: usize,
    vpn: u32,
    ra: RaState,
    found: Option<(Pfn, bool)>,
    write: bool,
) -> (FaultCost, bool) {
    store_file_ra(k, mm, vpn, ra);
    let Some((pfn, major)) = found else {
        return (NO_FAULT, false);
    };
    if major {
        k.mms[mm].maj_flt += 1;
    } else {
        k.mms[mm].min_flt += 1;
    }
    let cost = FaultCost {
        major,
        cpu: if major {
            MAJOR_FAULT_NS
        } else {
            MINOR_FAULT_NS
        },
    };
    if k.mms[mm].dead || k.mms[mm].pte(vpn) != 0 {
        return (cost, false);
    }
    let mut pte = PTE_PRESENT | PTE_YOUNG | pfn;
    if write {
        // page_mkwrite: the page is dirtied before the PTE becomes writable.
        let mut task = k.mms[mm].dirty;
        set_page_dirty(k, pfn, &mut task);
        k.mms[mm].dirty = task;
        pte |= PTE_DIRTY;
    }
    *k.mms[mm].pte_mut(vpn) = pte;
    k.mms[mm].file_rss += 1;
    rmap::page_add_file_rmap(k, pfn);
    (cost, true)
}

/// `do_wp_page` on a write-protected PTE of a shared file mapping: `page_mkwrite` dirties the
/// page again (3.9 waits for writeback in flight only on devices that need stable pages, which
/// mmsim's do not), then `wp_page_reuse` makes the PTE writable and dirty. A mapped page is
/// never locked in mmsim (only reads in flight are, and they are not mapped), so this does
/// not sleep. Returns the file's inode, for the throttle that follows.
fn do_wp_page(k: &mut Kernel, mm: usize, vpn: u32, pte: u32) -> usize {
    let pfn = pte & PTE_PFN_MASK;
    debug_assert!(!k.pages.test(pfn, PG_LOCKED | PG_ANON));
    k.count(VmEvent::pgfault, 1);
    k.mms[mm].min_flt += 1;
    let mut task = k.mms[mm].dirty;
    set_page_dirty(k, pfn, &mut task);
    k.mms[mm].dirty = task;
    *k.mms[mm].pte_mut(vpn) = pte | PTE_YOUNG | PTE_DIRTY;
    k.pages.mapping[pfn as usize] as usize
}

/// `balance_dirty_pages_ratelimited` after a write fault dirtied a page of `ino`.
async fn balance_after_fault(w: &World, mm: usize, ino: usize) {
    let mut task = w.borrow().mms[mm].dirty;
    balance_dirty_pages_ratelimited(w, ino, &mut task).await;
    w.borrow_mut().mms[mm].dirty = task;
}

/// `mmap(MAP_SHARED)` of `pages` pages of file `ino` from page `pgoff`: a new mapping, entered
/// in the file's `i_mmap`. Returns its first virtual page number.
pub fn mmap_file(k: &mut Kernel, mm: usize, ino: usize, pgoff: u64, pages: u32, flags: u32) -> u32 {
    let m = &mut k.mms[mm];
    let start = m.next_vpn;
    m.vmas.push(Vma {
        start,
        flags: flags | VM_SHARED,
        ptes: vec![0; pages as usize],
        file: Some(VmFile {
            ino,
            pgoff,
            ra: RaState::default(),
        }),
        brk: pages,
    });
    m.next_vpn = start + pages + 16;
    k.inodes[ino].i_mmap.push(super::inode::IMmap {
        mm: mm as u32,
        start,
        pgoff,
        pages: pages as u64,
    });
    start
}

/// `munmap` of the whole mapping that starts at `start`.
pub fn munmap(k: &mut Kernel, mm: usize, start: u32) {
    let Some(v) = k.mms[mm].vmas.iter().position(|v| v.start == start) else {
        return;
    };
    let vma = k.mms[mm].vmas.remove(v);
    let mut task = k.mms[mm].dirty;
    unmap_vma(k, mm, &vma, &mut task);
    k.mms[mm].dirty = task;
    free_pgtables(k, mm, Some(start..start + vma.ptes.len() as u32));
}

/// `zap_pte_range` for one present PTE of a file mapping: the PTE's dirty bit goes to the page
/// (`set_page_dirty`), a young one counts as an access (`mark_page_accessed`), and the mapping
/// is dropped. The page stays in the page cache.
pub fn zap_file_pte(k: &mut Kernel, mm: usize, pte: u32, task: &mut DirtyTask) {
    let pfn = pte & PTE_PFN_MASK;
    if pte & PTE_DIRTY != 0 {
        set_page_dirty(k, pfn, task);
    }
    if pte & PTE_YOUNG != 0 {
        filemap::mark_page_accessed(k, pfn);
    }
    k.mms[mm].file_rss -= 1;
    rmap::page_remove_rmap(k, pfn);
}

/// `unmap_mapping_range` for file pages `from..to` of `ino` (truncation): zap every PTE that
/// maps one of them, in every mapping of the file.
pub fn unmap_mapping_range(k: &mut Kernel, ino: usize, from: u64, to: u64, task: &mut DirtyTask) {
    for j in 0..k.inodes[ino].i_mmap.len() {
        let e = k.inodes[ino].i_mmap[j];
        let (first, end) = (from.max(e.pgoff), to.min(e.pgoff + e.pages));
        let mm = e.mm as usize;
        for index in first..end {
            let vpn = e.start + (index - e.pgoff) as u32;
            let pte = std::mem::take(k.mms[mm].pte_mut(vpn));
            if pte & PTE_PRESENT != 0 {
                zap_file_pte(k, mm, pte, task);
            }
        }
    }
}

/// `unmap_vmas` + `free_pgtables` for one mapping taken out of its mm: anonymous pages are
/// freed (or left to whoever holds them), swap entries released, file pages unmapped.
fn unmap_vma(k: &mut Kernel, mm: usize, v: &Vma, task: &mut DirtyTask) {
    if let Some(f) = v.file {
        let i_mmap = &mut k.inodes[f.ino].i_mmap;
        if let Some(j) = i_mmap
            .iter()
            .position(|e| e.mm as usize == mm && e.start == v.start)
        {
            i_mmap.remove(j);
        }
    }
    for &pte in &v.ptes {
        if pte & PTE_PRESENT != 0 {
            if v.file.is_some() {
                zap_file_pte(k, mm, pte, task);
                continue;
            }
            let pfn = pte & PTE_PFN_MASK;
            if pte & PTE_DIRTY != 0 {
                k.pages.set(pfn, PG_DIRTY);
            }
            rmap::page_remove_rmap(k, pfn);
            k.mms[mm].rss -= 1;
            release_unmapped_anon(k, pfn);
        } else if pte != 0 {
            free_swap_and_cache(k, pte - 1);
            k.mms[mm].swapents -= 1;
        }
    }
}

/// `free_swap_and_cache`: drop a swap PTE's reference to its slot; if only the swap cache
/// is left holding it, the cached page leaves the cache too (unless it is locked, under
/// writeback, or mapped elsewhere while swap is not full) and is freed unless reclaim
/// holds it.
fn free_swap_and_cache(k: &mut Kernel, slot: u32) {
    swapfile::swap_free(k, slot);
    if k.swap.swap_map.get(slot) != swapfile::SWAP_HAS_CACHE {
        return;
    }
    let Some(pfn) = k.swap.lookup_swap_cache(slot) else {
        return;
    };
    let f = k.pages.flags[pfn as usize];
    if f & (PG_LOCKED | PG_WRITEBACK) != 0 || (k.pages.mapped(pfn) && !k.swap.vm_swap_full()) {
        return;
    }
    swapfile::delete_from_swap_cache(k, pfn);
    if k.pages.mapped(pfn) {
        k.pages.set(pfn, PG_DIRTY);
    } else {
        release_unmapped_anon(k, pfn);
    }
}

/// `exit_mmap`: tear down an address space. Pages that reclaim holds isolated, or that are
/// under IO, are left to whoever holds them: they are unmapped here and freed there.
pub fn exit_mmap(k: &mut Kernel, mm: usize) {
    let vmas = std::mem::take(&mut k.mms[mm].vmas);
    let mut task = k.mms[mm].dirty;
    for v in &vmas {
        unmap_vma(k, mm, v, &mut task);
    }
    free_pgtables(k, mm, None);
    let m = &mut k.mms[mm];
    m.dirty = task;
    debug_assert!(m.rss == 0 && m.swapents == 0 && m.file_rss == 0);
    m.dead = true;
    if k.oom_victim == Some(mm) {
        k.oom_victim = None;
    }
}

/// Free an anonymous page that nothing maps any more, if no one else holds it.
pub(super) fn release_unmapped_anon(k: &mut Kernel, pfn: Pfn) {
    let f = k.pages.flags[pfn as usize];
    if f & (super::page::PG_ISOLATED | PG_LOCKED | PG_WRITEBACK) != 0
        || f & super::page::PG_LRU == 0
    {
        // Reclaim or IO holds it; it frees the page when it is done (as the last put_page).
        k.pages.clear(pfn, PG_ANON);
        return;
    }
    // free_pages_and_swap_cache: free_swap_cache drops the swap copy nothing else needs,
    // and release_pages frees the page with it.
    if f & PG_SWAPCACHE != 0 && !swapfile::try_to_free_swap(k, pfn) {
        // Another mm's PTE still names the slot: the page stays in the swap cache.
        k.pages.clear(pfn, PG_ANON | PG_DIRTY);
        return;
    }
    swap::del_page_from_lru_list(k, pfn);
    k.pages.flags[pfn as usize] &= PG_UPTODATE;
    // zap_pte_range's mmu_gather: release_pages.
    super::page_alloc::free_page_batched(k, pfn, false);
}

/// Workload accesses to memory, each counted once by `workload::access` on its first look
/// at the page table: the retry after a fault is part of the same access. Kept for the
/// benchmark; nothing in the simulation reads them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AccessCounts {
    /// Accesses that found their page present (page-table hits): no kernel code ran.
    pub hits: u64,
    /// Accesses that faulted. The kernel's own `pgfault`/`pgmajfault` count the faults its
    /// handlers took, which can be a few fewer: a fault that finds the page already mapped
    /// by another thread, one past the end of a file, or one whose swap slot was freed
    /// meanwhile is not counted there.
    pub faulted: u64,
}

impl AccessCounts {
    /// Every access: hits and faulting accesses.
    pub fn total(&self) -> u64 {
        self.hits + self.faulted
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::mmzone::{MIGRATE_MOVABLE, MIGRATE_UNMOVABLE};
    use crate::mm::{fork, invariants};
    use crate::sim::{boot_for_test, run_task};

    fn new_mm(k: &mut Kernel) -> usize {
        k.mms.push(Mm::default());
        k.mms.len() - 1
    }

    fn pte_pages(k: &Kernel) -> u64 {
        k.zones
            .iter()
            .map(|z| z.stat(ZoneStat::nr_page_table_pages))
            .sum()
    }

    fn free_pages(k: &Kernel) -> u64 {
        crate::mm::page_alloc::free_or_on_cpu_lists(k)
    }

    /// A 128 MiB machine with 64 MiB of swap, and an mm with one faulted anonymous page
    /// that has a swap copy (as a page swapped in keeps it while swap is not full).
    fn swap_cached_page() -> (World, usize, Pfn) {
        let w = boot_for_test(128, 64, "3.9");
        let (mm, pfn) = {
            let mut k = w.borrow_mut();
            let mm = new_mm(&mut k);
            let start = k.mms[mm].mmap_anon(1, 0);
            handle_mm_fault_now(&mut k, mm, start).expect("a free page");
            let pfn = k.mms[mm].pte(start) & PTE_PFN_MASK;
            assert!(swapfile::add_to_swap(&mut k, pfn));
            // Not accessed since: reclaim may unmap it.
            *k.mms[mm].pte_mut(start) &= !PTE_YOUNG;
            (mm, pfn)
        };
        (w, mm, pfn)
    }

    /// [`swap_cached_page`] with its PTE turned into a swap entry, as reclaim leaves it.
    fn swapped_out_page() -> (World, usize, Pfn) {
        let (w, mm, pfn) = swap_cached_page();
        assert_eq!(
            rmap::try_to_unmap(&mut w.borrow_mut(), pfn),
            rmap::Unmap::Success
        );
        (w, mm, pfn)
    }

    #[test]
    fn exit_frees_a_mapped_swap_cache_page_and_its_slot() {
        let (w, mm, pfn) = swap_cached_page();
        let mut k = w.borrow_mut();
        let free = free_pages(&k);
        assert_eq!(k.swap.inuse_pages, 1);
        exit_mmap(&mut k, mm);
        assert_eq!(k.swap.inuse_pages, 0, "the slot is freed with the mm");
        assert!(!k.pages.test(pfn, PG_SWAPCACHE));
        assert_eq!(k.swap.cache_len(), 0);
        // The page and the four page tables.
        assert_eq!(free_pages(&k), free + 5);
        invariants::check(&k).unwrap();
    }

    #[test]
    fn exit_frees_the_cached_page_of_a_swapped_out_pte_unless_it_is_under_writeback() {
        for writeback in [false, true] {
            let (w, mm, pfn) = swapped_out_page();
            let mut k = w.borrow_mut();
            if writeback {
                k.pages.set(pfn, PG_WRITEBACK);
            }
            let free = free_pages(&k);
            exit_mmap(&mut k, mm);
            if writeback {
                // The write holds it: page and slot stay until reclaim frees them.
                assert!(k.pages.test(pfn, PG_SWAPCACHE));
                assert_eq!(k.swap.inuse_pages, 1);
                assert_eq!(free_pages(&k), free + 4);
                k.pages.clear(pfn, PG_WRITEBACK);
            } else {
                assert!(!k.pages.test(pfn, PG_SWAPCACHE));
                assert_eq!(k.swap.inuse_pages, 0);
                assert_eq!(free_pages(&k), free + 5);
                invariants::check(&k).unwrap();
            }
        }
    }

    #[test]
    fn exit_leaves_a_swap_cache_page_whose_slot_another_pte_names() {
        let (w, mm, pfn) = swap_cached_page();
        let mut k = w.borrow_mut();
        let slot = k.pages.private[pfn as usize];
        // Another mm's swap PTE for the same slot.
        swapfile::swap_duplicate(&mut k, slot);
        k.pages.set(pfn, PG_DIRTY);
        exit_mmap(&mut k, mm);
        assert!(
            k.pages.test(pfn, PG_SWAPCACHE),
            "the cache keeps it for the other PTE"
        );
        assert!(!k.pages.test(pfn, PG_ANON | PG_DIRTY));
        assert_eq!(k.swap.inuse_pages, 1);
        assert_eq!(swapfile::page_swapcount(&k, pfn), 1);
    }

    #[test]
    fn a_swap_pte_drops_a_page_mapped_elsewhere_from_the_cache_only_when_swap_is_full() {
        for full in [false, true] {
            let (w, mm, pfn) = swapped_out_page();
            let mut k = w.borrow_mut();
            // Written to swap (clean), and mapped by another mm (a swap-in there) while
            // this one holds the swap PTE.
            k.pages.clear(pfn, PG_DIRTY);
            k.mapcount_add(pfn, 1);
            if full {
                k.swap.inuse_pages = k.swap.total() as u32 - 1;
                assert!(k.swap.vm_swap_full());
            }
            exit_mmap(&mut k, mm);
            assert_eq!(k.pages.test(pfn, PG_SWAPCACHE), !full, "full {full}");
            assert_eq!(k.pages.test(pfn, PG_DIRTY), full, "full {full}");
            assert!(k.pages.mapped(pfn), "still mapped elsewhere");
        }
    }

    #[test]
    fn the_first_fault_makes_four_unmovable_tables_and_each_2m_one_pte_page() {
        let w = boot_for_test(128, 0, "3.9");
        let mut k = w.borrow_mut();
        let mm = new_mm(&mut k);
        let start = k.mms[mm].mmap_anon(2048, 0);
        let free = free_pages(&k);
        handle_mm_fault_now(&mut k, mm, start).expect("a free page");
        // PGD, PUD, PMD and PTE page, then the data page.
        assert_eq!(free - free_pages(&k), 5);
        assert_eq!(pte_pages(&k), 1);
        let frames: Vec<Pfn> = k.mms[mm].pgtables.frames().collect();
        assert_eq!(frames.len(), 4);
        for &t in &frames {
            let z = &k.zones[k.page_zone(t)];
            assert_eq!(z.pageblock_migratetype(t), MIGRATE_UNMOVABLE, "pfn {t}");
        }
        let data = k.mms[mm].pte(start) & PTE_PFN_MASK;
        let z = &k.zones[k.page_zone(data)];
        assert_eq!(z.pageblock_migratetype(data), MIGRATE_MOVABLE);
        // Every page of the mapping: one PTE page per 512-page span it touches.
        for vpn in start..start + 2048 {
            if k.mms[mm].pte(vpn) == 0 {
                handle_mm_fault_now(&mut k, mm, vpn).expect("a free page");
            }
        }
        let spans = u64::from((start + 2047) / 512 - start / 512 + 1);
        assert_eq!(pte_pages(&k), spans);
        assert_eq!(k.mms[mm].pgtables.frames().count() as u64, 3 + spans);
        invariants::check(&k).unwrap();
        exit_mmap(&mut k, mm);
        assert_eq!(free_pages(&k), free);
        assert_eq!(pte_pages(&k), 0);
        assert_eq!(k.mms[mm].pgtables.frames().count(), 0);
        invariants::check(&k).unwrap();
    }

    #[test]
    fn only_the_last_mapping_grows_and_the_next_starts_past_it() {
        let mut m = Mm::default();
        let a = m.mmap_anon(4, 0);
        let b = m.mmap_anon(4, VM_BRK);
        assert!(
            !m.grow_anon(a, 8),
            "a mapping with another after it cannot grow"
        );
        assert_eq!(m.vmas[0].ptes.len(), 4);
        assert!(m.grow_anon(b, 10));
        assert_eq!(m.vmas[1].ptes.len(), 10);
        assert_eq!(
            m.vmas[1].brk, 0,
            "a heap covers only what it has grown into"
        );
        assert!(m.grow_anon(b, 6), "never shrinks");
        assert_eq!(m.vmas[1].ptes.len(), 10);
        assert_eq!(m.find_vma(b + 9), Some((1, 9)));
        let c = m.mmap_anon(1, 0);
        assert_eq!(c, b + 10 + 16);
        assert!(m.grow_anon(c, 3));
        assert_eq!(m.vmas[2].brk, 3, "a plain mapping covers all of itself");
    }

    #[test]
    fn munmap_frees_only_the_tables_no_other_mapping_shares() {
        let w = boot_for_test(128, 0, "3.9");
        let mut k = w.borrow_mut();
        let mm = new_mm(&mut k);
        // Two small mappings in one 2 MiB span (mmap leaves a 16-page gap), then one
        // beyond it.
        let a = k.mms[mm].mmap_anon(8, 0);
        let b = k.mms[mm].mmap_anon(8, 0);
        k.mms[mm].next_vpn = (b / 512 + 2) * 512;
        let c = k.mms[mm].mmap_anon(8, 0);
        assert_eq!(a / 512, b / 512);
        for vpn in [a, b, c] {
            handle_mm_fault_now(&mut k, mm, vpn).expect("a free page");
        }
        assert_eq!(pte_pages(&k), 2);
        munmap(&mut k, mm, a);
        assert_eq!(pte_pages(&k), 2, "b still needs the span's PTE page");
        assert!(k.mms[mm].pgtables.present(b));
        munmap(&mut k, mm, c);
        assert_eq!(pte_pages(&k), 1);
        assert!(!k.mms[mm].pgtables.present(c));
        // PGD, PUD, PMD and b's PTE page stay.
        assert_eq!(k.mms[mm].pgtables.frames().count(), 4);
        invariants::check(&k).unwrap();
    }

    /// A mapping that starts where a span ends, or ends where one starts, does not keep
    /// that span's PTE page.
    #[test]
    fn munmap_frees_a_span_its_neighbours_only_touch() {
        let w = boot_for_test(128, 0, "3.9");
        let mut k = w.borrow_mut();
        let mm = new_mm(&mut k);
        let m = &mut k.mms[mm];
        m.next_vpn = 1024;
        let a = m.mmap_anon(512, 0); // span 2 exactly
        m.next_vpn = 1536;
        let b = m.mmap_anon(8, 0); // from span 3's start
        m.next_vpn = 2560 - 8;
        let e = m.mmap_anon(8, 0); // to span 5's start
        let f = m.mmap_anon(8, 0); // in span 5
        let m = &mut k.mms[mm];
        m.next_vpn = 3584 - 8;
        let g = m.mmap_anon(16, 0); // across spans 6 and 7
        let h = m.mmap_anon(8, 0); // in span 7
        assert_eq!((a, b, e + 8, f / 512), (1024, 1536, 2560, 5));
        assert_eq!((g / 512, (g + 15) / 512, h / 512), (6, 7, 7));
        for vpn in [a, b, e, f, g, g + 15, h] {
            handle_mm_fault_now(&mut k, mm, vpn).expect("a free page");
        }
        assert_eq!(pte_pages(&k), 6);
        munmap(&mut k, mm, a);
        assert!(!k.mms[mm].pgtables.present(a), "b only starts at its end");
        munmap(&mut k, mm, f);
        assert!(!k.mms[mm].pgtables.present(f), "e only ends at its start");
        munmap(&mut k, mm, h);
        assert!(
            k.mms[mm].pgtables.present(g + 15),
            "g reaches into h's span"
        );
        assert_eq!(pte_pages(&k), 4);
        invariants::check(&k).unwrap();
    }

    #[test]
    fn a_pte_outside_any_page_table_breaks_the_invariant() {
        let w = boot_for_test(128, 0, "3.9");
        let mut k = w.borrow_mut();
        let mm = new_mm(&mut k);
        let start = k.mms[mm].mmap_anon(4, 0);
        handle_mm_fault_now(&mut k, mm, start).expect("a free page");
        invariants::check(&k).unwrap();
        // Lose the PTE page (and its count) behind the kernel's back.
        let t = &mut k.mms[mm].pgtables.tables[PGTABLE_LEVELS - 1];
        let pfn = std::mem::replace(&mut t[(start >> 9) as usize], NIL);
        let z = k.page_zone(pfn);
        k.zones[z].mod_stat(ZoneStat::nr_page_table_pages, -1);
        k.held_blocks.push((pfn, 0));
        let e = invariants::check(&k).unwrap_err();
        assert!(
            e.contains("'page tables'") && e.contains("in no page table"),
            "{e}"
        );
    }

    #[test]
    fn pgtable_alloc_makes_the_missing_tables_once() {
        let w = boot_for_test(128, 0, "3.9");
        let mm = new_mm(&mut w.borrow_mut());
        let start = w.borrow_mut().mms[mm].mmap_anon(4, 0);
        let free = free_pages(&w.borrow());
        let w2 = w.clone();
        run_task(&w, crate::engine::SEC, async move {
            pgtable_alloc(&w2, mm, start).await.unwrap();
            // A second caller finds every table there and allocates nothing.
            pgtable_alloc(&w2, mm, start + 1).await.unwrap();
        });
        let k = w.borrow();
        assert_eq!(free - free_pages(&k), 4);
        assert!(k.mms[mm].pgtables.present(start));
        invariants::check(&k).unwrap();
    }

    /// The tables' masks as `mm_page_alloc` prints them: the PGD and PTE pages with x86's
    /// `PGALLOC_GFP`, the PUD and PMD pages without `__GFP_NOTRACK`; all unmovable (type
    /// 0), then the data page movable.
    #[test]
    fn the_first_fault_traces_each_tables_mask() {
        let w = boot_for_test(128, 0, "3.9");
        let cap = crate::mm::trace::testing::capture(&w);
        let mut k = w.borrow_mut();
        let mm = new_mm(&mut k);
        let start = k.mms[mm].mmap_anon(4, 0);
        handle_mm_fault_now(&mut k, mm, start).expect("a free page");
        drop(k);
        let masks: Vec<String> = cap
            .lines_with("mm_page_alloc:")
            .iter()
            .map(|l| l[l.find("migratetype=").unwrap()..].to_string())
            .collect();
        let pgalloc = "migratetype=0 gfp_flags=GFP_KERNEL|GFP_REPEAT|GFP_ZERO|GFP_NOTRACK";
        let pmd = "migratetype=0 gfp_flags=GFP_KERNEL|GFP_REPEAT|GFP_ZERO";
        assert_eq!(
            masks,
            [
                pgalloc,
                pmd,
                pmd,
                pgalloc,
                "migratetype=2 gfp_flags=GFP_HIGHUSER_MOVABLE|GFP_ZERO"
            ]
        );
    }

    /// `THREADINFO_GFP` is `GFP_KERNEL`: with every free page of DMA32 taken by clean page
    /// cache, a fork reclaims for its stack instead of failing as an atomic request would.
    #[test]
    fn a_kernel_stack_may_reclaim_for_itself() {
        use crate::mm::page::PG_UPTODATE;
        use crate::mm::page_alloc::{alloc_flags, get_page_from_freelist};
        let w = boot_for_test(128, 0, "3.9");
        {
            let mut k = w.borrow_mut();
            let ino = crate::mm::inode::new_inode(&mut k, "cache", 0);
            let mut index = 0;
            while let Some(pfn) =
                get_page_from_freelist(&mut k, Gfp::HIGHUSER_MOVABLE, 0, alloc_flags::NO_WATERMARKS)
            {
                k.pages.flags[pfn as usize] = PG_UPTODATE;
                filemap::add_to_page_cache_lru(&mut k, pfn, ino, index);
                index += 1;
            }
            k.inodes[ino].size_pages = index;
        }
        let w2 = w.clone();
        run_task(&w, crate::engine::SEC, async move {
            let pfn = fork::alloc_thread_info(&w2)
                .await
                .expect("reclaim made room");
            fork::free_thread_info(&mut w2.borrow_mut(), pfn);
        });
        let k = w.borrow();
        let stolen = k.events.get(VmEvent::pgsteal_direct_dma32)
            + k.events.get(VmEvent::pgsteal_kswapd_dma32);
        assert!(stolen > 0, "the stack's room came from reclaim");
    }

    #[test]
    fn a_kernel_stack_is_an_order_1_unmovable_block_counted_until_freed() {
        let w = boot_for_test(128, 0, "3.9");
        let free = free_pages(&w.borrow());
        let stack = std::rc::Rc::new(std::cell::Cell::new(NIL));
        let (w2, s2) = (w.clone(), stack.clone());
        run_task(&w, crate::engine::SEC, async move {
            s2.set(fork::alloc_thread_info(&w2).await.unwrap());
        });
        let mut k = w.borrow_mut();
        let pfn = stack.get();
        assert_eq!(pfn % 2, 0, "an order-1 block is aligned");
        assert_eq!(free - free_pages(&k), 2);
        let stacks = |k: &Kernel| -> u64 {
            k.zones
                .iter()
                .map(|z| z.stat(ZoneStat::nr_kernel_stack))
                .sum()
        };
        assert_eq!(stacks(&k), 1);
        let z = &k.zones[k.page_zone(pfn)];
        assert_eq!(z.pageblock_migratetype(pfn), MIGRATE_UNMOVABLE);
        invariants::check(&k).unwrap();
        fork::free_thread_info(&mut k, pfn);
        assert_eq!(stacks(&k), 0);
        assert_eq!(free_pages(&k), free);
        invariants::check(&k).unwrap();
    }
}
