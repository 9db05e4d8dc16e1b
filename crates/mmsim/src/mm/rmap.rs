//! Reverse mapping: from a page to the PTEs that map it (`mm/rmap.c`).
//!
//! Anonymous pages are mapped once, at (`page->mapping` = mm, `page->index` = virtual page).
//! A file page (`page->mapping` = inode, `page->index` = page offset) is found the kernel's
//! way: walk the file's `i_mmap` and compute the virtual page of each mapping that covers the
//! offset (`vma_address`), so no per-page rmap state is kept.

use super::memory::{PTE_DIRTY, PTE_PFN_MASK, PTE_PRESENT, PTE_YOUNG};
use super::memory::{VM_LOCKED, VM_SHARED};
use super::page::{Pfn, PG_ANON, PG_DIRTY, PG_SWAPCACHE};
use super::page_writeback::{set_page_dirty, DirtyTask};
use super::vmstat::ZoneStat;
use super::Kernel;

/// `page_referenced`: count and clear the young bits of the PTEs mapping the page; also
/// returns the `VM_*` flags of the mappings that had it young (and `VM_LOCKED` if a mapping
/// is locked).
#[inline]
pub fn page_referenced(k: &mut Kernel, pfn: Pfn) -> (u32, u32) {
    if !k.pages.mapped(pfn) {
        return (0, 0);
    }
    if !k.pages.test(pfn, PG_ANON) {
        return page_referenced_file(k, pfn);
    }
    let mm = k.pages.mapping[pfn as usize] as usize;
    let vpn = k.pages.index[pfn as usize];
    let m = &mut k.mms[mm];
    let Some((v, i)) = m.find_vma(vpn) else {
        return (0, 0);
    };
    let vma = &mut m.vmas[v];
    let pte = &mut vma.ptes[i];
    if *pte & PTE_YOUNG != 0 {
        *pte &= !PTE_YOUNG;
        (1, vma.flags)
    } else {
        (0, vma.flags)
    }
}

/// The PTEs that map `pfn`, a page of a file, in turn (`vma_interval_tree_foreach` over
/// `i_mmap`): `f(k, mm, vma, pte index)` returns whether to go on.
fn for_each_file_pte(
    k: &mut Kernel,
    pfn: Pfn,
    f: impl FnMut(&mut Kernel, usize, usize, usize) -> bool,
) {
    let ino = k.pages.mapping[pfn as usize] as usize;
    let index = k.pages.index[pfn as usize] as u64;
    for_each_pte_of(k, ino, index, pfn, f);
}

/// The PTEs of file `ino`'s mappings that map page `index` with frame `pfn`.
fn for_each_pte_of(
    k: &mut Kernel,
    ino: usize,
    index: u64,
    pfn: Pfn,
    mut f: impl FnMut(&mut Kernel, usize, usize, usize) -> bool,
) {
    for j in 0..k.inodes[ino].i_mmap.len() {
        let e = k.inodes[ino].i_mmap[j];
        let Some(vpn) = e.vpn_of(index) else {
            continue;
        };
        let mm = e.mm as usize;
        let Some((v, i)) = k.mms[mm].find_vma(vpn) else {
            continue;
        };
        let pte = k.mms[mm].vmas[v].ptes[i];
        if pte & PTE_PRESENT == 0 || pte & PTE_PFN_MASK != pfn {
            continue;
        }
        if !f(k, mm, v, i) {
            return;
        }
    }
}

/// `page_referenced_file`: a locked mapping stops the walk and reports `VM_LOCKED`; each young
/// PTE counts once and is cleared, and its mapping's flags are reported (`VM_EXEC`).
fn page_referenced_file(k: &mut Kernel, pfn: Pfn) -> (u32, u32) {
    let (mut refs, mut flags) = (0, 0);
    let mut left = k.pages.mapcount(pfn);
    for_each_file_pte(k, pfn, |k, mm, v, i| {
        let vma = &mut k.mms[mm].vmas[v];
        if vma.flags & VM_LOCKED != 0 {
            flags |= VM_LOCKED;
            return false;
        }
        let vm_flags = vma.flags;
        let pte = &mut vma.ptes[i];
        if *pte & PTE_YOUNG != 0 {
            *pte &= !PTE_YOUNG;
            refs += 1;
            flags |= vm_flags;
        }
        left -= 1;
        left > 0
    });
    (refs, flags)
}

/// Result of `try_to_unmap`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unmap {
    /// Every PTE is gone.
    Success,
    /// A PTE was young: the page is in use (`SWAP_FAIL`).
    Fail,
}

/// `page_add_file_rmap`: one more PTE maps a page-cache page; the first one counts it in
/// `nr_mapped` (`NR_FILE_MAPPED`).
pub fn page_add_file_rmap(k: &mut Kernel, pfn: Pfn) {
    k.mapcount_add(pfn, 1);
    if k.pages.mapcount(pfn) == 1 {
        let zi = k.page_zone(pfn);
        k.zones[zi].mod_stat(ZoneStat::nr_mapped, 1);
    }
}

/// `page_remove_rmap`: one mapping fewer; the last one takes the page out of `nr_anon_pages`
/// or `nr_mapped`.
pub fn page_remove_rmap(k: &mut Kernel, pfn: Pfn) {
    k.mapcount_add(pfn, -1);
    if !k.pages.mapped(pfn) {
        let zi = k.page_zone(pfn);
        let stat = if k.pages.test(pfn, PG_ANON) {
            ZoneStat::nr_anon_pages
        } else {
            ZoneStat::nr_mapped
        };
        k.zones[zi].mod_stat(stat, -1);
    }
}

/// `try_to_unmap` (TTU_UNMAP). An anonymous page, already in the swap cache: its PTE becomes
/// the swap entry. A file page: every PTE mapping it is cleared (`try_to_unmap_file`). Either
/// way a PTE's dirty bit goes to the page (`set_page_dirty` for a file page), and a PTE found
/// young fails the unmap: the page was used since `page_check_references` looked.
pub fn try_to_unmap(k: &mut Kernel, pfn: Pfn) -> Unmap {
    if !k.pages.mapped(pfn) {
        return Unmap::Success;
    }
    if !k.pages.test(pfn, PG_ANON) {
        return try_to_unmap_file(k, pfn);
    }
    debug_assert!(
        k.pages.test(pfn, PG_SWAPCACHE),
        "unmapping pfn {pfn} outside the swap cache"
    );
    let mm = k.pages.mapping[pfn as usize] as usize;
    let vpn = k.pages.index[pfn as usize];
    let pte = *k.mms[mm].pte_mut(vpn);
    debug_assert!(pte & PTE_PRESENT != 0 && pte & PTE_PFN_MASK == pfn);
    if pte & PTE_YOUNG != 0 {
        // ptep_clear_flush_young: referenced since page_check_references looked.
        *k.mms[mm].pte_mut(vpn) = pte & !PTE_YOUNG;
        return Unmap::Fail;
    }
    if pte & PTE_DIRTY != 0 {
        k.pages.set(pfn, PG_DIRTY);
    }
    let slot = k.pages.private[pfn as usize];
    super::swapfile::swap_duplicate(k, slot);
    *k.mms[mm].pte_mut(vpn) = slot + 1;
    k.mms[mm].rss -= 1;
    k.mms[mm].swapents += 1;
    page_remove_rmap(k, pfn);
    Unmap::Success
}

/// `try_to_unmap_file`: the walk stops at the first young PTE (SWAP_FAIL) or once the page is
/// no longer mapped.
fn try_to_unmap_file(k: &mut Kernel, pfn: Pfn) -> Unmap {
    let mut result = Unmap::Success;
    // The dirtying is the reclaimer's (`current`); it never throttles on it.
    let mut task = DirtyTask::default();
    for_each_file_pte(k, pfn, |k, mm, v, i| {
        let pte = &mut k.mms[mm].vmas[v].ptes[i];
        if *pte & PTE_YOUNG != 0 {
            *pte &= !PTE_YOUNG;
            result = Unmap::Fail;
            return false;
        }
        let old = std::mem::take(pte);
        if old & PTE_DIRTY != 0 {
            set_page_dirty(k, pfn, &mut task);
        }
        k.mms[mm].file_rss -= 1;
        page_remove_rmap(k, pfn);
        k.pages.mapped(pfn)
    });
    result
}

/// `page_mkclean`: write-protect and clean every PTE of the page in a shared mapping, so the
/// next write through it faults (`page_mkwrite`) and dirties the page again. Returns whether
/// a PTE was dirty (mmsim's shared file PTEs are writable exactly while dirty; see
/// `mm::memory`).
pub fn page_mkclean(k: &mut Kernel, pfn: Pfn) -> bool {
    if !k.pages.mapped(pfn) || k.pages.test(pfn, PG_ANON) {
        return false;
    }
    let mut cleaned = false;
    for_each_file_pte(k, pfn, |k, mm, v, i| {
        let vma = &mut k.mms[mm].vmas[v];
        if vma.flags & VM_SHARED != 0 && vma.ptes[i] & PTE_DIRTY != 0 {
            vma.ptes[i] &= !PTE_DIRTY;
            cleaned = true;
        }
        true
    });
    cleaned
}

/// `remove_migration_ptes`: every PTE that maps `old` maps `new` instead, keeping its young
/// and dirty bits (mmsim moves the PTEs in one step, so there are no migration entries). The
/// caller has moved the page's identity (mapping, index, mapcount) to `new`.
pub fn remap_migrated_page(k: &mut Kernel, old: Pfn, new: Pfn) {
    if !k.pages.mapped(new) {
        return;
    }
    let swap = |pte: &mut u32| *pte = (*pte & !PTE_PFN_MASK) | new;
    if k.pages.test(new, PG_ANON) {
        let mm = k.pages.mapping[new as usize] as usize;
        let vpn = k.pages.index[new as usize];
        let pte = k.mms[mm].pte_mut(vpn);
        debug_assert!(*pte & PTE_PRESENT != 0 && *pte & PTE_PFN_MASK == old);
        swap(pte);
        return;
    }
    // The walk looks for PTEs of `old` at `new`'s (mapping, index), which are `old`'s.
    let ino = k.pages.mapping[new as usize] as usize;
    let index = k.pages.index[new as usize] as u64;
    let mut left = k.pages.mapcount(new);
    for_each_pte_of(k, ino, index, old, |k, mm, v, i| {
        swap(&mut k.mms[mm].vmas[v].ptes[i]);
        left -= 1;
        left > 0
    });
}
