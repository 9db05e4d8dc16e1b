//! Unit tests of shared file mappings and truncation: `filemap_fault` (minor and major faults,
//! mmap read-around), `page_mkwrite` and `page_mkclean`, `try_to_unmap` of file pages, and
//! `truncate_setsize` with and without mappings. Expected values come from the kernel's
//! documented behaviour (`mm/filemap.c`, `mm/memory.c`, `mm/rmap.c`, `mm/truncate.c`;
//! `kernel-writeback.md` §3.1).

use super::*;
use crate::engine::{Executor, Nanos, SEC};
use crate::mm::inode::I_DIRTY_PAGES;
use crate::mm::memory::{self, Access, Mm, PTE_DIRTY, PTE_PFN_MASK, PTE_PRESENT, PTE_YOUNG};
use crate::mm::page::{PG_DIRTY, PG_READAHEAD};
use crate::mm::page_writeback::clear_page_dirty_for_io;
use crate::mm::{invariants, rmap};
use std::cell::Cell;
use std::rc::Rc;

/// A 128 MiB machine with an ext4 disk `sda` (device 0) and no swap.
fn machine() -> World {
    let w = crate::sim::boot_for_test(128, 0, "3.9");
    crate::sim::add_test_disk(&w, "sda", "ext4");
    w
}

/// A file of `pages` pages on the disk (nothing cached), mapped shared by a new mm. Returns
/// (inode, mm, first vpn).
fn mapped_file(w: &World, pages: u64) -> (usize, usize, u32) {
    let ino = crate::workload::cat::create_file(w, "f", 0, pages * crate::calibration::PAGE_SIZE);
    let mut k = w.borrow_mut();
    // Opened for good: its inode in memory, held.
    let sb = crate::mm::inode::sb_of(&k, 0);
    crate::mm::inode::iget_boot(&mut k, sb, ino as u32);
    k.mms.push(Mm::default());
    let mm = k.mms.len() - 1;
    let start = memory::mmap_file(&mut k, mm, ino, 0, pages as u32, 0);
    (ino, mm, start)
}

/// Run `f` as a task on `ex` until it finishes (stopping there, so the flusher does not run
/// on); fails the test if it takes longer than `limit`.
fn run_task<F: std::future::Future<Output = ()> + 'static>(
    ex: &mut Executor<Kernel>,
    w: &World,
    limit: Nanos,
    f: F,
) {
    let done = Rc::new(Cell::new(false));
    let d = done.clone();
    w.borrow_mut().sched.spawn("test", async move {
        f.await;
        d.set(true);
    });
    let d = done.clone();
    let end = w.borrow().sched.now() + limit;
    ex.run_until(end, move |_| d.get());
    assert!(done.get(), "the test task finished");
    assert_eq!(w.borrow().fatal, None);
}

/// One access as a workload makes it: the MMU, then the fault if it needs one. Returns the
/// fault's cost, if there was a fault.
async fn access(w: &World, mm: usize, vpn: u32, write: bool) -> Option<memory::FaultCost> {
    if memory::touch(&mut w.borrow_mut(), mm, vpn, write) == Access::Hit {
        return None;
    }
    let cost = memory::handle_mm_fault(w, mm, vpn, write)
        .await
        .expect("memory");
    assert_eq!(
        memory::touch(&mut w.borrow_mut(), mm, vpn, write),
        Access::Hit,
        "the faulting access hits once the fault is handled"
    );
    Some(cost)
}

fn pte(w: &World, mm: usize, vpn: u32) -> u32 {
    w.borrow().mms[mm].pte(vpn)
}

fn cached(w: &World, ino: usize) -> Vec<u64> {
    w.borrow().inodes[ino].cached().map(|(i, _)| i).collect()
}

fn ev(w: &World, e: VmEvent) -> u64 {
    w.borrow().events.get(e)
}

fn stat(w: &World, s: ZoneStat) -> u64 {
    w.borrow().global_stat(s)
}

/// `filemap_fault`: a page not in the page cache is a major fault and reads the 32 pages
/// around it (`do_sync_mmap_readahead`: start = offset - 16, async quarter at the end); a
/// page the read-around brought in is a minor fault; reaching the PG_readahead page starts
/// the next window without a major fault. pgfault counts every fault.
#[test]
fn filemap_fault_is_major_when_it_reads_and_minor_when_the_page_is_cached() {
    let w = machine();
    let mut ex = Executor::new(w.clone());
    let (ino, mm, start) = mapped_file(&w, 256);
    let w2 = w.clone();
    run_task(&mut ex, &w, 10 * SEC, async move {
        let w = w2;
        let cost = access(&w, mm, start + 40, false).await.expect("a fault");
        assert!(cost.major);
        assert_eq!(ev(&w, VmEvent::pgmajfault), 1);
        assert_eq!(ev(&w, VmEvent::pgfault), 1);
        assert_eq!(cached(&w, ino), (24..56).collect::<Vec<_>>());
        let marker = w.borrow().inodes[ino].find_page(48).unwrap();
        assert!(
            w.borrow().pages.test(marker, PG_READAHEAD),
            "the async quarter starts at 48"
        );
        // A page read around: minor.
        let cost = access(&w, mm, start + 41, false).await.expect("a fault");
        assert!(!cost.major);
        // The marker page: minor, and the next window (56..88) is read.
        let cost = access(&w, mm, start + 48, false).await.expect("a fault");
        assert!(!cost.major);
        assert_eq!(cached(&w, ino), (24..88).collect::<Vec<_>>());
        // Touching a mapped page again is no fault at all.
        assert!(access(&w, mm, start + 41, false).await.is_none());
        assert_eq!(ev(&w, VmEvent::pgmajfault), 1);
        assert_eq!(ev(&w, VmEvent::pgfault), 3);
        let k = w.borrow();
        assert_eq!((k.mms[mm].maj_flt, k.mms[mm].min_flt), (1, 2));
        assert_eq!(k.mms[mm].file_rss, 3);
        assert_eq!(k.global_stat(ZoneStat::nr_mapped), 3);
        for vpn in [40, 41, 48] {
            let p = k.mms[mm].pte(start + vpn);
            assert!(p & PTE_PRESENT != 0 && p & PTE_YOUNG != 0 && p & PTE_DIRTY == 0);
            assert_eq!(k.pages.mapcount(p & PTE_PFN_MASK), 1);
        }
        invariants::check(&k).unwrap();
    });
}

/// A write fault runs `page_mkwrite`: the page is dirtied and accounted, the PTE is mapped
/// writable and dirty. Writeback's `clear_page_dirty_for_io` runs `page_mkclean`, which
/// write-protects and cleans the PTE, so the next write faults (`do_wp_page`) and dirties
/// the page again; a read does not fault.
#[test]
fn page_mkclean_write_protects_the_pte_so_the_next_write_dirties_the_page_again() {
    let w = machine();
    let mut ex = Executor::new(w.clone());
    let (ino, mm, start) = mapped_file(&w, 64);
    let w2 = w.clone();
    run_task(&mut ex, &w, 10 * SEC, async move {
        let w = w2;
        access(&w, mm, start, true).await.expect("a fault");
        let pfn = pte(&w, mm, start) & PTE_PFN_MASK;
        {
            let k = w.borrow();
            assert!(k.pages.test(pfn, PG_DIRTY));
            assert!(
                k.inodes[ino].tagged_dirty(0),
                "writeback finds it by its tag"
            );
            assert!(k.mms[mm].pte(start) & PTE_DIRTY != 0);
            assert_eq!(k.global_stat(ZoneStat::nr_dirty), 1);
            assert_eq!(k.global_stat(ZoneStat::nr_dirtied), 1);
            assert_eq!(k.bdis[0].reclaimable, 1);
            assert_ne!(k.inodes[ino].state & I_DIRTY_PAGES, 0);
            assert_eq!(
                k.mms[mm].dirty.nr_dirtied, 1,
                "charged to the faulting task"
            );
        }
        // Stores to the writable PTE are no faults.
        assert!(access(&w, mm, start, true).await.is_none());
        assert!(clear_page_dirty_for_io(&mut w.borrow_mut(), pfn));
        {
            let k = w.borrow();
            assert!(!k.pages.test(pfn, PG_DIRTY));
            assert_eq!(
                k.mms[mm].pte(start) & PTE_DIRTY,
                0,
                "cleaned and write-protected"
            );
            assert!(k.mms[mm].pte(start) & PTE_PRESENT != 0, "still mapped");
            assert_eq!(k.global_stat(ZoneStat::nr_dirty), 0);
            assert!(!k.inodes[ino].tagged_dirty(0), "untagged when cleaned");
        }
        assert!(
            access(&w, mm, start, false).await.is_none(),
            "reads do not fault"
        );
        let faults = ev(&w, VmEvent::pgfault);
        let cost = access(&w, mm, start, true)
            .await
            .expect("a write-protect fault");
        assert!(!cost.major);
        let k = w.borrow();
        assert_eq!(k.events.get(VmEvent::pgfault), faults + 1);
        assert!(k.pages.test(pfn, PG_DIRTY));
        assert!(k.mms[mm].pte(start) & PTE_DIRTY != 0);
        assert_eq!(k.global_stat(ZoneStat::nr_dirty), 1);
        assert_eq!(k.global_stat(ZoneStat::nr_dirtied), 2);
        assert_eq!(k.pages.mapcount(pfn), 1, "the same mapping, made writable");
        assert!(k.inodes[ino].tagged_dirty(0), "tagged again");
        invariants::check(&k).unwrap();
        drop(k);
        // A dirty page without its tag is one writeback would never find.
        crate::mm::inode::untag_page_dirty(&mut w.borrow_mut(), pfn);
        let e = invariants::check(&w.borrow()).unwrap_err();
        assert!(e.contains("invariant 'dirty tags' violated"), "{e}");
    });
}

/// `try_to_unmap` of a file page: a young PTE fails the unmap (and is aged); an old one is
/// cleared, and its dirty bit goes to the page (`set_page_dirty`: accounted, inode dirtied).
#[test]
fn try_to_unmap_of_a_file_page_moves_the_pte_dirty_bit_to_the_page() {
    let w = machine();
    let mut ex = Executor::new(w.clone());
    let (ino, mm, start) = mapped_file(&w, 64);
    let w2 = w.clone();
    run_task(&mut ex, &w, 10 * SEC, async move {
        access(&w2, mm, start + 3, false).await;
    });
    let mut k = w.borrow_mut();
    let pfn = k.mms[mm].pte(start + 3) & PTE_PFN_MASK;
    // A store through a PTE the MMU may write without a fault (as in a mapping without
    // dirty tracking): only the PTE knows the page is dirty.
    *k.mms[mm].pte_mut(start + 3) |= PTE_DIRTY;
    assert!(!k.pages.test(pfn, PG_DIRTY));
    assert_eq!(rmap::try_to_unmap(&mut k, pfn), rmap::Unmap::Fail);
    assert_eq!(
        k.mms[mm].pte(start + 3) & PTE_YOUNG,
        0,
        "aged by the attempt"
    );
    assert!(k.pages.mapped(pfn));
    assert_eq!(rmap::try_to_unmap(&mut k, pfn), rmap::Unmap::Success);
    assert_eq!(k.mms[mm].pte(start + 3), 0);
    assert!(!k.pages.mapped(pfn));
    assert!(k.pages.test(pfn, PG_DIRTY));
    assert_eq!(k.global_stat(ZoneStat::nr_dirty), 1);
    assert_eq!(k.global_stat(ZoneStat::nr_mapped), 0);
    assert_eq!(k.mms[mm].file_rss, 0);
    assert_eq!(k.bdis[0].reclaimable, 1);
    assert_ne!(k.inodes[ino].state & I_DIRTY_PAGES, 0);
    invariants::check(&k).unwrap();
}

/// `truncate_setsize` to 24 pages of a 64-page file: pages below 24 stay (dirty ones still
/// dirty), every page at or past 24 is freed, dirty ones cancelled unwritten
/// (`cancel_dirty_page`: nr_dirty and the bdi's reclaimable drop, nr_dirtied does not). One
/// task does it all without sleeping, so the flusher never runs in between.
#[test]
fn truncate_to_n_pages_keeps_the_pages_below_n_and_frees_the_rest_with_exact_counters() {
    let w = machine();
    let mut ex = Executor::new(w.clone());
    let ino = {
        let mut k = w.borrow_mut();
        crate::mm::inode::new_inode(&mut k, "t", 0)
    };
    let w2 = w.clone();
    run_task(&mut ex, &w, SEC, async move {
        let w = w2;
        let mut task = DirtyTask::default();
        for index in 0..64 {
            write_page(&w, ino, index, &mut task).await.unwrap();
        }
        // Pages 30..40 clean (as after writeback), the rest dirty.
        {
            let mut k = w.borrow_mut();
            for index in 30..40 {
                let pfn = k.inodes[ino].find_page(index).unwrap();
                assert!(clear_page_dirty_for_io(&mut k, pfn));
            }
        }
        let now = w.borrow().sched.now();
        let free = crate::mm::page_alloc::free_or_on_cpu_lists(&w.borrow());
        let file = stat(&w, ZoneStat::nr_file_pages);
        let inactive = stat(&w, ZoneStat::nr_inactive_file);
        assert_eq!(stat(&w, ZoneStat::nr_dirty), 54);
        let dropped: Vec<Pfn> = w.borrow().inodes[ino]
            .cached_from(24)
            .map(|(_, p)| p)
            .collect();
        assert_eq!(dropped.len(), 40);
        truncate_setsize(&w, ino, 24).await;
        let k = w.borrow();
        assert_eq!(k.sched.now(), now, "nothing to wait for");
        assert_eq!(k.inodes[ino].size_pages, 24);
        assert_eq!(k.inodes[ino].nrpages, 24);
        assert_eq!(
            k.inodes[ino].cached().map(|(i, _)| i).collect::<Vec<_>>(),
            (0..24).collect::<Vec<_>>()
        );
        assert_eq!(crate::mm::page_alloc::free_or_on_cpu_lists(&k), free + 40);
        assert_eq!(k.global_stat(ZoneStat::nr_file_pages), file - 40);
        assert_eq!(k.global_stat(ZoneStat::nr_inactive_file), inactive - 40);
        assert_eq!(k.global_stat(ZoneStat::nr_dirty), 24);
        assert_eq!(k.bdis[0].reclaimable, 24);
        assert_eq!(k.global_stat(ZoneStat::nr_dirtied), 64);
        for pfn in dropped {
            assert!(k.pages.is_free(pfn));
        }
        invariants::check(&k).unwrap();
    });
}

/// Truncation unmaps mapped pages before dropping them (`unmap_mapping_range`): their PTEs
/// are zapped (a dirty one first dirties the page, which is then cancelled), the mappings of
/// the pages that stay are untouched, and a fault past the new end maps nothing (SIGBUS).
#[test]
fn truncate_unmaps_mapped_pages_past_the_new_end_and_keeps_the_others() {
    let w = machine();
    let mut ex = Executor::new(w.clone());
    let (ino, mm, start) = mapped_file(&w, 64);
    let w2 = w.clone();
    run_task(&mut ex, &w, 10 * SEC, async move {
        for vpn in 30..34 {
            access(&w2, mm, start + vpn, true).await;
        }
        access(&w2, mm, start + 40, false).await;
        assert_eq!(w2.borrow().global_stat(ZoneStat::nr_mapped), 5);
        truncate_setsize(&w2, ino, 32).await;
        let cost = memory::handle_mm_fault(&w2, mm, start + 40, false)
            .await
            .unwrap();
        assert_eq!(cost.cpu, 0, "nothing mapped past the end");
    });
    let k = w.borrow();
    for vpn in [32, 33, 40] {
        assert_eq!(k.mms[mm].pte(start + vpn), 0, "vpn {vpn} unmapped");
    }
    for vpn in [30, 31] {
        let p = k.mms[mm].pte(start + vpn);
        assert!(
            p & PTE_PRESENT != 0 && p & PTE_DIRTY != 0,
            "vpn {vpn} still mapped"
        );
        assert!(k.pages.test(p & PTE_PFN_MASK, PG_DIRTY));
    }
    assert_eq!(k.mms[mm].file_rss, 2);
    assert_eq!(k.global_stat(ZoneStat::nr_mapped), 2);
    assert_eq!(k.global_stat(ZoneStat::nr_dirty), 2);
    assert!(k.inodes[ino].cached().all(|(i, _)| i < 32));
    assert_eq!(
        k.inodes[ino].nrpages,
        k.global_stat(ZoneStat::nr_file_pages)
    );
    invariants::check(&k).unwrap();
}

/// `munmap` (and exit) zaps a file mapping: dirty PTEs reach the page, the mapping leaves the
/// file's `i_mmap`, and the pages stay cached.
#[test]
fn munmap_moves_dirty_ptes_to_the_pages_and_leaves_them_cached() {
    let w = machine();
    let mut ex = Executor::new(w.clone());
    let (ino, mm, start) = mapped_file(&w, 64);
    let w2 = w.clone();
    run_task(&mut ex, &w, 10 * SEC, async move {
        access(&w2, mm, start + 5, true).await;
        access(&w2, mm, start + 6, false).await;
    });
    let mut k = w.borrow_mut();
    let dirty = k.mms[mm].pte(start + 5) & PTE_PFN_MASK;
    let cached_before = k.inodes[ino].nrpages;
    memory::munmap(&mut k, mm, start);
    assert!(k.inodes[ino].i_mmap.is_empty());
    assert!(k.mms[mm].vmas.is_empty());
    assert_eq!(k.mms[mm].file_rss, 0);
    assert_eq!(k.global_stat(ZoneStat::nr_mapped), 0);
    assert!(k.pages.test(dirty, PG_DIRTY));
    assert_eq!(k.inodes[ino].nrpages, cached_before);
    invariants::check(&k).unwrap();
}

/// The invariant checker catches a file PTE whose page is no longer in the file at that
/// offset (a truncated page left mapped) and a mapping missing from `i_mmap`.
#[test]
fn the_invariant_checker_catches_a_mapped_truncated_page_and_a_lost_rmap_entry() {
    let w = machine();
    let mut ex = Executor::new(w.clone());
    let (ino, mm, start) = mapped_file(&w, 64);
    let w2 = w.clone();
    run_task(&mut ex, &w, 10 * SEC, async move {
        access(&w2, mm, start + 2, false).await;
    });
    let mut k = w.borrow_mut();
    invariants::check(&k).unwrap();
    let pfn = k.mms[mm].pte(start + 2) & PTE_PFN_MASK;
    k.inodes[ino].remove_page(2, pfn);
    k.inodes[ino].nrpages += 1;
    let e = invariants::check(&k).unwrap_err();
    assert!(e.contains("no truncated page mapped"), "{e}");
    k.inodes[ino].insert_page(2, pfn);
    k.inodes[ino].nrpages -= 1;
    invariants::check(&k).unwrap();
    let entry = k.inodes[ino].i_mmap.pop().unwrap();
    let e = invariants::check(&k).unwrap_err();
    assert!(e.contains("rmap") && e.contains("0 times"), "{e}");
    k.inodes[ino].i_mmap.push(entry);
    invariants::check(&k).unwrap();
}

/// `filemap_write_and_wait_range` (fsync): the range's dirty pages are written, and the
/// caller returns only when every one of them has finished writeback, across several
/// pagevecs of the wait; pages past the range stay dirty.
#[test]
fn fsync_of_a_range_writes_it_and_waits_for_every_page_of_it() {
    let w = machine();
    let mut ex = Executor::new(w.clone());
    let pages = 3 * super::PAGEVEC_SIZE as u64 + 5;
    let (ino, mm, start) = mapped_file(&w, pages + 8);
    let w2 = w.clone();
    run_task(&mut ex, &w, 10 * SEC, async move {
        let w = w2;
        for i in 0..pages + 8 {
            access(&w, mm, start + i as u32, true)
                .await
                .expect("a fault");
        }
        let before = w.borrow().sched.now();
        super::filemap_write_and_wait_range(&w, ino, 0..pages).await;
        let k = w.borrow();
        assert!(k.sched.now() > before, "the writes took disk time");
        for (i, pfn) in k.inodes[ino].cached() {
            let (dirty, writeback) = (
                k.pages.test(pfn, PG_DIRTY),
                k.pages.test(pfn, crate::mm::page::PG_WRITEBACK),
            );
            if i < pages {
                assert!(!dirty && !writeback, "page {i} written and waited for");
            } else {
                assert!(dirty && !writeback, "page {i} past the range left alone");
            }
        }
        assert_eq!(k.global_stat(ZoneStat::nr_written), pages);
    });
}
