//! Address spaces, page tables and faults (`mm/memory.c`, `do_anonymous_page`,
//! `do_swap_page`; `kernel-reclaim.md` §4.10).
//!
//! A PTE is a `u32`: 0 is none; bit 31 set means present, with the young and dirty bits and
//! the frame number below; otherwise the value is a swap slot plus one.

use super::page::{
    Lru, Pfn, PG_ANON, PG_DIRTY, PG_LOCKED, PG_SWAPBACKED, PG_SWAPCACHE, PG_UPTODATE, PG_WRITEBACK,
};
use super::page_alloc::{alloc_pages, AllocError};
use super::vmstat::{VmEvent, ZoneStat};
use super::{page_io, swap, swapfile, Gfp, Kernel, World};
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

/// A mapping: a run of virtual pages and their PTEs.
#[derive(Clone, Debug)]
pub struct Vma {
    /// First virtual page number.
    pub start: u32,
    /// `VM_*` flags.
    pub flags: u32,
    /// One PTE per page.
    pub ptes: Vec<u32>,
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
    /// Swap entries in the page tables (`MM_SWAPENTS`).
    pub swapents: u64,
    /// Faults that needed no IO.
    pub min_flt: u64,
    /// Faults that waited for a read.
    pub maj_flt: u64,
    /// Torn down after an OOM kill.
    pub dead: bool,
}

impl Mm {
    /// Map `pages` anonymous pages; returns the first virtual page number.
    pub fn mmap_anon(&mut self, pages: u32, flags: u32) -> u32 {
        let start = self.next_vpn;
        self.vmas.push(Vma {
            start,
            flags,
            ptes: vec![0; pages as usize],
        });
        // A guard gap between mappings keeps a bad index from landing in the next one.
        self.next_vpn = start + pages + 16;
        start
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
    k.pages_touched += 1;
    let pte = k.mms[mm].pte_mut(vpn);
    if *pte & PTE_PRESENT != 0 {
        *pte |= PTE_YOUNG | if write { PTE_DIRTY } else { 0 };
        Access::Hit
    } else {
        Access::Fault
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

/// `handle_mm_fault` for an anonymous mapping: first touch or swap-in.
pub async fn handle_mm_fault(
    w: &World,
    mm: usize,
    vpn: u32,
    write: bool,
) -> Result<FaultCost, AllocError> {
    let pte = w.borrow().mms[mm].pte(vpn);
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

/// `do_anonymous_page` (write fault): a zeroed page on the active anon list.
async fn do_anonymous_page(w: &World, mm: usize, vpn: u32) -> Result<FaultCost, AllocError> {
    let pfn = alloc_pages(w, Gfp::HIGHUSER_MOVABLE, 0).await?;
    let mut k = w.borrow_mut();
    k.count(VmEvent::pgfault, 1);
    if *k.mms[mm].pte_mut(vpn) != 0 || k.mms[mm].dead {
        // Another thread got there first, or the mm was torn down meanwhile.
        super::page_alloc::free_page(&mut k, pfn);
        return Ok(FaultCost {
            major: false,
            cpu: MINOR_FAULT_NS,
        });
    }
    k.pages.flags[pfn as usize] = PG_SWAPBACKED | PG_ANON | PG_UPTODATE;
    k.pages.mapping[pfn as usize] = mm as u32;
    k.pages.index[pfn as usize] = vpn;
    k.pages.mapcount_add(pfn, 1);
    let zi = k.page_zone(pfn);
    k.zones[zi].mod_stat(ZoneStat::nr_anon_pages, 1);
    *k.mms[mm].pte_mut(vpn) = PTE_PRESENT | PTE_YOUNG | PTE_DIRTY | pfn;
    k.mms[mm].rss += 1;
    k.mms[mm].min_flt += 1;
    swap::lru_cache_add_lru(&mut k, pfn, Lru::ActiveAnon);
    Ok(FaultCost {
        major: false,
        cpu: MINOR_FAULT_NS,
    })
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
    k.pages.mapcount_add(pfn, 1);
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

/// `exit_mmap`: tear down an address space. Pages that reclaim holds isolated, or that are
/// under IO, are left to whoever holds them: they are unmapped here and freed there.
pub fn exit_mmap(k: &mut Kernel, mm: usize) {
    let vmas = std::mem::take(&mut k.mms[mm].vmas);
    for v in &vmas {
        for &pte in &v.ptes {
            if pte & PTE_PRESENT != 0 {
                let pfn = pte & PTE_PFN_MASK;
                if pte & PTE_DIRTY != 0 {
                    k.pages.set(pfn, PG_DIRTY);
                }
                super::rmap::page_remove_rmap(k, pfn);
                release_unmapped_anon(k, pfn);
            } else if pte != 0 {
                swapfile::swap_free(k, pte - 1);
            }
        }
    }
    let m = &mut k.mms[mm];
    m.rss = 0;
    m.swapents = 0;
    m.dead = true;
    if k.oom_victim == Some(mm) {
        k.oom_victim = None;
    }
}

/// Free an anonymous page that nothing maps any more, if no one else holds it.
fn release_unmapped_anon(k: &mut Kernel, pfn: Pfn) {
    let f = k.pages.flags[pfn as usize];
    if f & (super::page::PG_ISOLATED | PG_LOCKED | PG_WRITEBACK) != 0
        || f & super::page::PG_LRU == 0
    {
        // Reclaim or IO holds it; it frees the page when it is done (as the last put_page).
        k.pages.clear(pfn, PG_ANON);
        return;
    }
    if f & PG_SWAPCACHE != 0 {
        // Stays in the swap cache until reclaim drops it (the slot is still referenced by
        // the cache alone).
        k.pages.clear(pfn, PG_ANON | PG_DIRTY);
        return;
    }
    swap::del_page_from_lru_list(k, pfn);
    k.pages.flags[pfn as usize] &= PG_UPTODATE;
    super::page_alloc::free_page(k, pfn);
}
