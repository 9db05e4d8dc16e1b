//! Reverse mapping: from a page to the PTEs that map it (`mm/rmap.c`). Anonymous pages are
//! mapped once, at (`page->mapping` = mm, `page->index` = virtual page).

use super::memory::{PTE_DIRTY, PTE_PRESENT, PTE_YOUNG};
use super::page::{Pfn, PG_ANON, PG_DIRTY, PG_SWAPCACHE};
use super::vmstat::ZoneStat;
use super::Kernel;

/// `page_referenced`: count and clear the young bits of the PTEs mapping the page; also
/// returns the `VM_*` flags of the mappings that had it young.
#[inline]
pub fn page_referenced(k: &mut Kernel, pfn: Pfn) -> (u32, u32) {
    if !k.pages.mapped(pfn) || !k.pages.test(pfn, PG_ANON) {
        return (0, 0);
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

/// Result of `try_to_unmap`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unmap {
    /// Every PTE is gone.
    Success,
    /// A PTE was young: the page is in use (`SWAP_FAIL`).
    Fail,
}

/// `page_remove_rmap`: one mapping fewer.
pub fn page_remove_rmap(k: &mut Kernel, pfn: Pfn) {
    k.pages.mapcount_add(pfn, -1);
    if !k.pages.mapped(pfn) {
        let zi = k.page_zone(pfn);
        k.zones[zi].mod_stat(ZoneStat::nr_anon_pages, -1);
    }
}

/// `try_to_unmap` (TTU_UNMAP) of an anonymous page already in the swap cache: replace its
/// PTE by the swap entry, carrying the PTE's dirty bit over to the page.
pub fn try_to_unmap(k: &mut Kernel, pfn: Pfn) -> Unmap {
    if !k.pages.mapped(pfn) {
        return Unmap::Success;
    }
    debug_assert!(
        k.pages.test(pfn, PG_SWAPCACHE),
        "unmapping pfn {pfn} outside the swap cache"
    );
    let mm = k.pages.mapping[pfn as usize] as usize;
    let vpn = k.pages.index[pfn as usize];
    let pte = *k.mms[mm].pte_mut(vpn);
    debug_assert!(pte & PTE_PRESENT != 0 && pte & super::memory::PTE_PFN_MASK == pfn);
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
