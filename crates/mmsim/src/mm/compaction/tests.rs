//! Unit tests of compaction and migration against `kernel-compaction.md` §3.3, §6.2-§6.8.
//! Expected values come from the specification, never from the code under test.

use super::*;
use crate::mm::invariants;
use crate::mm::memory::{self, Mm, PTE_PFN_MASK};
use crate::mm::migrate::{migrate_check, MigrateError};
use crate::mm::mmzone::{MIGRATE_UNMOVABLE, ZONE_DMA32};
use crate::mm::page::{Lru, PG_ANON, PG_BH_LOCKED, PG_DIRTY, PG_LOCKED, PG_PRIVATE, PG_UPTODATE};
use crate::mm::page_alloc::alloc_flags;
use crate::mm::vmstat::VmEvent;
use crate::sim::{add_test_disk, boot_for_test, run_task};

/// The 128 MiB test machine has DMA and DMA32; anonymous memory comes from DMA32.
const Z: usize = ZONE_DMA32;

fn world() -> World {
    boot_for_test(128, 0, "3.9")
}

/// Fault `n` pages into each of two new mms in turn, so their frames interleave; then tear
/// the second down. Returns the first mm, its first virtual page and its pages' frames: a
/// checkerboard of used and free frames.
fn checkerboard(k: &mut Kernel, n: u32) -> (usize, u32, Vec<Pfn>) {
    let mut mms = [0; 2];
    let mut starts = [0; 2];
    for m in 0..2 {
        k.mms.push(Mm::default());
        mms[m] = k.mms.len() - 1;
        starts[m] = k.mms[mms[m]].mmap_anon(n, 0);
    }
    for i in 0..n {
        for m in 0..2 {
            memory::handle_mm_fault_now(k, mms[m], starts[m] + i).expect("a free page");
        }
    }
    memory::exit_mmap(k, mms[1]);
    let pfns = (0..n)
        .map(|i| k.mms[mms[0]].pte(starts[0] + i) & PTE_PFN_MASK)
        .collect();
    (mms[0], starts[0], pfns)
}

/// A checkerboard of 600 pages; returns the first frame of the pageblock its first page
/// is in.
fn checkerboard_block(k: &mut Kernel) -> u64 {
    let (_, _, pfns) = checkerboard(k, 600);
    pfns[0] as u64 & !(PAGEBLOCK_NR_PAGES - 1)
}

/// `n` tasks that each run `ns` of user time from now.
fn spawn_cpu_hogs(w: &World, n: u32, ns: crate::engine::Nanos) {
    for i in 0..n {
        let w2 = w.clone();
        w.borrow_mut().sched.spawn(&format!("hog{i}"), async move {
            crate::engine::run_cpu(&w2, ns, crate::engine::CpuMode::User).await;
        });
    }
}

fn free_blocks_at_least(z: &Zone, order: usize) -> u64 {
    z.free_area[order..].iter().map(|a| a.nr_free).sum()
}

/// Free pages in blocks of `order` or more.
fn free_pages_at_least(z: &Zone, order: usize) -> u64 {
    (order..MAX_ORDER)
        .map(|o| z.free_area[o].nr_free << o)
        .sum()
}

#[test]
fn deferral_skips_twice_as_many_calls_after_each_failure_up_to_63() {
    let w = world();
    let mut k = w.borrow_mut();
    for failures in 1..=8u32 {
        defer_compaction(&mut k.zones[Z], 9);
        let shift = failures.min(COMPACT_MAX_DEFER_SHIFT);
        assert_eq!(k.zones[Z].compact_defer_shift, shift);
        let skipped = (0..100)
            .take_while(|_| compaction_deferred(&mut k, Z, 9))
            .count();
        assert_eq!(skipped, (1 << shift) - 1, "after {failures} failures");
        // The call that went through leaves the count at its limit: later calls go through.
        assert!(!compaction_deferred(&mut k, Z, 9));
    }
    compaction_succeeded(&mut k.zones[Z], 9);
    assert_eq!(
        (
            k.zones[Z].compact_defer_shift,
            k.zones[Z].compact_considered
        ),
        (0, 0)
    );
    assert_eq!(k.zones[Z].compact_order_failed, 10);
}

#[test]
fn deferral_by_order_spares_smaller_orders_and_without_it_defers_all() {
    let w = world();
    let mut k = w.borrow_mut();
    defer_compaction(&mut k.zones[Z], 4);
    assert_eq!(
        k.zones[Z].compact_order_failed, 0,
        "min(0, 4): nothing succeeded yet"
    );
    compaction_succeeded(&mut k.zones[Z], 6);
    defer_compaction(&mut k.zones[Z], 4);
    assert_eq!(k.zones[Z].compact_order_failed, 4);
    assert!(
        !compaction_deferred(&mut k, Z, 3),
        "order 3 < 4 is never deferred"
    );
    assert_eq!(k.zones[Z].compact_considered, 0, "and is not counted");
    assert!(compaction_deferred(&mut k, Z, 9));
    k.sw.set(Switch::CompactionDeferByOrder, false);
    defer_compaction(&mut k.zones[Z], 9);
    assert!(
        compaction_deferred(&mut k, Z, 1),
        "3.3: every order is deferred"
    );
}

#[test]
fn suitability_wants_free_pages_and_fragmentation() {
    let w = world();
    let mut k = w.borrow_mut();
    // A fresh machine: order-9 blocks are free, so an order-9 request would already succeed.
    assert_eq!(compaction_suitable(&k, Z, Some(9)), CompactResult::Partial);
    assert_eq!(compaction_suitable(&k, Z, None), CompactResult::Continue);
    let (_, _, _) = checkerboard(&mut k, 5000);
    // Take what order >= 1 blocks remain, keeping them, so only single pages are free.
    while let Some(pfn) = get_big(&mut k) {
        k.held_blocks.push(pfn);
    }
    let z = &k.zones[Z];
    assert_eq!(free_blocks_at_least(z, 1), 0);
    let wm = z.low_wmark() + (2 << 9);
    assert!(z.free_pages() > wm, "free {} > {wm}", z.free_pages());
    assert!(fragmentation_index(z, 9) > 500);
    assert_eq!(compaction_suitable(&k, Z, Some(9)), CompactResult::Continue);
    k.vm.extfrag_threshold = 1000;
    assert_eq!(
        compaction_suitable(&k, Z, Some(9)),
        CompactResult::Skipped,
        "an index at or below extfrag_threshold means too little memory"
    );
    k.vm.extfrag_threshold = 500;
    // Below the low watermark plus twice the request: reclaim first. (The torn-down mm's
    // page tables went to a CPU's list: drained, every allocation below takes from the
    // buddy lists, a batch at a time.)
    page_alloc::drain_all_pages(&mut k);
    let need = k.zones[Z].free_pages() - (k.zones[Z].low_wmark() + (2 << 9)) + 1;
    let mut taken = Vec::new();
    for _ in 0..need {
        taken.push(take(&mut k));
    }
    assert_eq!(compaction_suitable(&k, Z, Some(9)), CompactResult::Skipped);
}

/// The smallest free block of order 1..=10 in DMA32, taken (None when there is none).
fn get_big(k: &mut Kernel) -> Option<(Pfn, u32)> {
    get_big_in(k, Z)
}

/// The smallest free block of order 1..=10 in zone `zi`, taken.
fn get_big_in(k: &mut Kernel, zi: usize) -> Option<(Pfn, u32)> {
    for order in 1..MAX_ORDER {
        let z = &k.zones[zi];
        for mt in 0..crate::mm::mmzone::MIGRATE_TYPES {
            let head = z.free_area[order].free_list[mt].head;
            if head != crate::mm::page::NIL {
                let super::Kernel { pages, zones, .. } = k;
                page_alloc::take_free_block(pages, &mut zones[zi], head, order);
                return Some((head, order as u32));
            }
        }
    }
    None
}

/// A free order-0 page of DMA32, held.
/// Zone Z's free pages, on the buddy lists or a CPU's (where migration frees).
fn free_or_on_cpu_lists(k: &Kernel) -> u64 {
    k.zones[Z].free_pages() + k.zones[Z].pcp_pages()
}

fn take(k: &mut Kernel) -> Pfn {
    let pfn = page_alloc::get_page_from_freelist(k, Gfp::KERNEL, 0, alloc_flags::NO_WATERMARKS)
        .expect("a free page");
    k.held_blocks.push((pfn, 0));
    pfn
}

#[test]
fn migration_moves_an_anonymous_page_with_its_pte_and_frees_the_old_frame() {
    let w = world();
    let mut k = w.borrow_mut();
    let (mm, start, pfns) = checkerboard(&mut k, 64);
    let old = pfns[10];
    swap::del_page_from_lru_list(&mut k, old);
    k.pages.set(old, PG_ISOLATED);
    k.zones[Z].mod_stat(ZoneStat::nr_isolated_anon, 1);
    let target = take(&mut k);
    k.held_blocks.pop();
    let mut list = vec![old];
    let free_before = free_or_on_cpu_lists(&k);
    let r = migrate::migrate_pages(&mut k, &mut list, |_| Some(target), MigrateMode::Async);
    assert_eq!((r.succeeded, r.failed, r.remaining), (1, 0, 0));
    assert_eq!(k.mms[mm].pte(start + 10) & PTE_PFN_MASK, target);
    assert!(k.pages.test(target, PG_LRU) && !k.pages.test(target, PG_ISOLATED));
    assert_eq!(k.pages.mapcount(target), 1);
    assert_eq!(
        k.pages.flags[old as usize] & (PG_LRU | PG_ISOLATED | PG_ANON),
        0,
        "the old frame is free"
    );
    assert_eq!(free_or_on_cpu_lists(&k), free_before + 1);
    assert_eq!(k.zones[Z].stat(ZoneStat::nr_isolated_anon), 0);
    invariants::check(&k).unwrap();
}

#[test]
fn migration_refuses_locked_writeback_and_unmovable_private_pages() {
    let w = world();
    let disk = add_test_disk(&w, "sdb", "btrfs");
    let ext3 = add_test_disk(&w, "sdc", "ext3");
    let mut k = w.borrow_mut();
    let file_page = |k: &mut Kernel, bdi: usize, flags: u32| {
        let ino = crate::mm::inode::new_inode(k, "f", bdi);
        let pfn = cached_page(k, ino, 0);
        k.pages.set(pfn, flags);
        pfn
    };
    use MigrateMode::*;
    let locked = file_page(&mut k, ext3, PG_LOCKED);
    assert_eq!(
        migrate_check(&k, locked, SyncLight),
        Err(MigrateError::Again)
    );
    let wb = file_page(&mut k, ext3, PG_WRITEBACK);
    assert_eq!(migrate_check(&k, wb, Async), Err(MigrateError::Busy));
    assert_eq!(migrate_check(&k, wb, SyncLight), Err(MigrateError::Busy));
    // buffer_migrate_page moves a dirty page and its buffers, unless a buffer is locked.
    let dirty3 = file_page(&mut k, ext3, PG_DIRTY | PG_PRIVATE);
    assert_eq!(migrate_check(&k, dirty3, Async), Ok(()));
    let bh_locked = file_page(&mut k, ext3, PG_PRIVATE | PG_BH_LOCKED);
    assert_eq!(
        migrate_check(&k, bh_locked, Async),
        Err(MigrateError::Again)
    );
    // btrfs has no ->migratepage: a dirty page would need writing (MIGRATE_SYNC only).
    let dirty_btrfs = file_page(&mut k, disk, PG_DIRTY);
    assert_eq!(
        migrate_check(&k, dirty_btrfs, SyncLight),
        Err(MigrateError::Busy)
    );
    assert!(
        !isolatable(&k, dirty_btrfs, Async),
        "async compaction does not even isolate it"
    );
    assert!(isolatable(&k, dirty_btrfs, SyncLight));
    assert!(isolatable(&k, dirty3, Async));
    // btrfs's private data (not buffers) outlive nothing but its IO: a clean page that still
    // has them is waited for.
    let private_btrfs = file_page(&mut k, disk, PG_PRIVATE);
    assert_eq!(
        migrate_check(&k, private_btrfs, SyncLight),
        Err(MigrateError::Again)
    );
    let clean_btrfs = file_page(&mut k, disk, 0);
    assert_eq!(migrate_check(&k, clean_btrfs, Async), Ok(()));
    assert!(
        isolatable(&k, clean_btrfs, Async),
        "clean: moved without a write"
    );
    let unevictable = file_page(&mut k, ext3, crate::mm::page::PG_UNEVICTABLE);
    assert!(!isolatable(&k, unevictable, SyncLight));
    assert!(!isolatable(&k, wb, Async) && isolatable(&k, wb, SyncLight));
}

/// A clean, up-to-date page-cache page at `index` of file `ino`, on the inactive list.
fn cached_page(k: &mut Kernel, ino: usize, index: u64) -> Pfn {
    let pfn = take(k);
    k.held_blocks.pop();
    k.pages.flags[pfn as usize] = PG_UPTODATE;
    crate::mm::filemap::add_to_page_cache_lru(k, pfn, ino, index);
    pfn
}

/// Isolate file page `old` as compaction would and migrate it, async, to a free frame:
/// the new frame.
fn migrate_file_page(k: &mut Kernel, old: Pfn) -> Pfn {
    swap::del_page_from_lru_list(k, old);
    k.pages.set(old, PG_ISOLATED);
    k.zones[Z].mod_stat(ZoneStat::nr_isolated_file, 1);
    let new = take(k);
    k.held_blocks.pop();
    let r = migrate::migrate_pages(k, &mut vec![old], |_| Some(new), MigrateMode::Async);
    assert_eq!(r.succeeded, 1);
    new
}

#[test]
fn a_file_page_moves_in_its_page_cache_slot_with_its_dirty_tag() {
    let w = world();
    let ext3 = add_test_disk(&w, "sdc", "ext3");
    let mut k = w.borrow_mut();
    let ino = crate::mm::inode::new_inode(&mut k, "f", ext3);
    let old = cached_page(&mut k, ino, 7);
    let mut task = crate::mm::page_writeback::DirtyTask::default();
    crate::mm::page_writeback::set_page_dirty(&mut k, old, &mut task);
    let new = migrate_file_page(&mut k, old);
    assert_eq!(k.inodes[ino].find_page(7), Some(new));
    assert!(k.pages.test(new, PG_DIRTY | PG_PRIVATE));
    assert_eq!(k.pages.lru(new), Lru::InactiveFile);
    invariants::check(&k).unwrap();
}

#[test]
fn a_block_device_page_moves_without_its_clean_buffers_and_waits_for_busy_ones() {
    // def_blk_aops has no ->migratepage (3.x): fallback_migrate_page releases the buffers
    // (try_to_release_page) and moves the bare page; dirty or locked buffers keep it.
    let w = world();
    let raw = add_test_disk(&w, "sdd", "raw");
    let ext3 = add_test_disk(&w, "sde", "ext3");
    let mut k = w.borrow_mut();
    let dev = crate::mm::inode::new_inode(&mut k, "sdd", raw);
    let buffered = |k: &mut Kernel, ino: usize, index: u64, bh: u32| {
        let pfn = cached_page(k, ino, index);
        crate::fs::buffer::create_empty_buffers(k, pfn);
        k.pages.set(pfn, bh);
        pfn
    };
    let bhs = |k: &Kernel| {
        k.slab
            .cache(crate::mm::slab::CacheId::BufferHead)
            .active_objs
    };
    let clean = buffered(&mut k, dev, 0, 0);
    let locked = buffered(&mut k, dev, 1, PG_BH_LOCKED);
    use MigrateMode::*;
    assert_eq!(migrate_check(&k, clean, Async), Ok(()));
    assert_eq!(
        migrate_check(&k, locked, SyncLight),
        Err(MigrateError::Again)
    );
    let before = bhs(&k);
    let new = migrate_file_page(&mut k, clean);
    assert_eq!(k.inodes[dev].find_page(0), Some(new));
    assert!(
        !k.pages.test(new, PG_PRIVATE),
        "the buffers were freed, not moved"
    );
    assert_eq!(bhs(&k), before - 1);
    // ext3's buffer_migrate_page moves clean buffers along with the page.
    let f = crate::mm::inode::new_inode(&mut k, "f", ext3);
    let old = buffered(&mut k, f, 0, 0);
    let bh = k.pages.private[old as usize];
    let before = bhs(&k);
    let new = migrate_file_page(&mut k, old);
    assert!(k.pages.test(new, PG_PRIVATE));
    assert_eq!(k.pages.private[new as usize], bh);
    assert_eq!(bhs(&k), before);
    k.pages.clear(locked, PG_BH_LOCKED);
    invariants::check(&k).unwrap();
}

#[test]
fn a_page_that_cannot_move_gives_its_target_back_and_returns_to_the_lru() {
    let w = world();
    let mut k = w.borrow_mut();
    let (_, _, pfns) = checkerboard(&mut k, 16);
    let p = pfns[3];
    swap::del_page_from_lru_list(&mut k, p);
    k.pages.set(p, PG_ISOLATED | PG_LOCKED);
    k.zones[Z].mod_stat(ZoneStat::nr_isolated_anon, 1);
    let targets: Vec<Pfn> = (0..20).map(|_| take(&mut k)).collect();
    k.held_blocks.clear();
    let free_before = free_or_on_cpu_lists(&k);
    let mut it = targets.into_iter();
    let mut list = vec![p];
    let r = migrate::migrate_pages(&mut k, &mut list, |_| it.next(), MigrateMode::Async);
    // -EAGAIN on each of the 10 passes, each pass taking a target and freeing it again.
    assert_eq!((r.succeeded, r.failed, r.remaining), (0, 0, 1));
    assert_eq!(it.len(), 10);
    assert_eq!(free_or_on_cpu_lists(&k), free_before + 10);
    k.pages.clear(p, PG_LOCKED);
    migrate::putback_lru_page(&mut k, p);
    // The 10 targets never used are still out: give them back for the check.
    for t in it {
        page_alloc::free_page(&mut k, t);
    }
    invariants::check(&k).unwrap();
}

#[test]
fn compact_memory_gathers_a_checkerboard_into_free_pageblocks() {
    let w = world();
    let (mm, start, n) = {
        let mut k = w.borrow_mut();
        let (mm, start, pfns) = checkerboard(&mut k, 5000);
        while let Some(b) = get_big(&mut k) {
            k.held_blocks.push(b);
        }
        assert_eq!(free_blocks_at_least(&k.zones[Z], 9), 0);
        // Give the big blocks back: the checkerboard alone keeps orders >= 9 away.
        for (pfn, order) in std::mem::take(&mut k.held_blocks) {
            page_alloc::free_pages(&mut k, pfn, order);
        }
        (mm, start, pfns.len() as u32)
    };
    let before = free_pages_at_least(&w.borrow().zones[Z], 9);
    run_task(&w, 10 * crate::engine::SEC, {
        let w = w.clone();
        async move {
            compact_memory(&w).await;
        }
    });
    let k = w.borrow();
    let after = free_pages_at_least(&k.zones[Z], 9);
    let free = k.zones[Z].free_pages();
    // The test machine's DMA32 starts with the kernel's reserved frames; of the rest, the
    // checkerboard held half. Nearly every free page is in a pageblock-sized block now.
    assert!(
        after > before + 2048 && after * 10 >= free * 8,
        "free pages in order >= 9 blocks {before} -> {after} of {free}"
    );
    assert!(k.events.get(VmEvent::pgmigrate_success) >= 1000);
    assert_eq!(
        k.events.get(VmEvent::compact_stall),
        0,
        "not a direct compaction"
    );
    // Every page of the surviving mm is still mapped, once.
    for i in 0..n {
        assert_ne!(k.mms[mm].pte(start + i) & PTE_PFN_MASK, 0);
    }
    invariants::check(&k).unwrap();
}

#[test]
fn the_free_scanner_takes_only_movable_blocks_or_whole_free_pageblocks() {
    let w = world();
    let mut k = w.borrow_mut();
    let z = &k.zones[Z];
    let last = start_free_pfn(z) - PAGEBLOCK_NR_PAGES;
    let mut cc = CompactControl::new(Z, Some(9), MIGRATE_MOVABLE, MigrateMode::Async);
    cc.migrate_pfn = z.start_pfn as u64;
    assert!(suitable_migration_target(&k, Z, last), "a free pageblock");
    k.zones[Z].set_pageblock_migratetype(last as Pfn, MIGRATE_UNMOVABLE);
    assert!(
        suitable_migration_target(&k, Z, last),
        "a whole free pageblock, whatever its type"
    );
    let n = isolate_freepages_block(&mut k, &mut cc, last, last + PAGEBLOCK_NR_PAGES);
    assert_eq!(n, PAGEBLOCK_NR_PAGES);
    assert_eq!(
        k.zones[Z].pageblock_migratetype(last as Pfn),
        MIGRATE_MOVABLE,
        "taking a block of order >= 8 makes it MOVABLE"
    );
    // Half of the block back: no longer a whole pageblock, and UNMOVABLE is no target.
    for _ in 0..256 {
        let p = cc.freepages.pop().unwrap();
        k.pages.flags[p as usize] = 0;
        page_alloc::free_page(&mut k, p);
    }
    k.zones[Z].set_pageblock_migratetype(last as Pfn, MIGRATE_UNMOVABLE);
    assert!(!suitable_migration_target(&k, Z, last + 256));
    k.zones[Z].set_pageblock_migratetype(last as Pfn, MIGRATE_RESERVE);
    assert!(
        !suitable_migration_target(&k, Z, last + 256),
        "never the reserve"
    );
    release_freepages(&mut k, &mut cc);
}

#[test]
fn split_free_page_keeps_the_low_watermark_plus_the_block() {
    use crate::mm::mmzone::WMARK_LOW;
    let w = world();
    let mut k = w.borrow_mut();
    let pfn = k.zones[Z].free_area[9]
        .free_list
        .iter()
        .map(|l| l.head)
        .find(|&h| h != crate::mm::page::NIL)
        .expect("a free order-9 block");
    let free = k.zones[Z].free_pages();
    let mut out = Vec::new();
    // Taking the block must leave more than the low watermark: free > low + 512.
    k.zones[Z].watermark[WMARK_LOW] = free - 512;
    assert_eq!(split_free_page(&mut k, Z, pfn, &mut out), 0);
    assert!(out.is_empty());
    k.zones[Z].watermark[WMARK_LOW] = free - 513;
    assert_eq!(split_free_page(&mut k, Z, pfn, &mut out), 512);
    assert_eq!(out, (pfn..pfn + 512).collect::<Vec<_>>());
    assert!(out
        .iter()
        .all(|&p| k.pages.flags[p as usize] == PG_ISOLATED));
    assert_eq!(k.zones[Z].free_pages(), free - 512);
}

/// A migrate scan of the pageblock from `block` for an order-9 MOVABLE request in `mode`,
/// the free scanner at the zone's end.
fn migrate_scan_from(k: &Kernel, block: u64, mode: MigrateMode) -> CompactControl {
    let mut cc = CompactControl::new(Z, Some(9), MIGRATE_MOVABLE, mode);
    cc.migrate_pfn = block;
    cc.free_pfn = start_free_pfn(&k.zones[Z]);
    cc
}

#[test]
fn isolation_steps_over_a_transparent_huge_page() {
    // 3.x cannot migrate a THP: the scanner skips its pageblock whole, in any mode.
    let w = world();
    let mut k = w.borrow_mut();
    let block = checkerboard_block(&mut k);
    k.zones[Z].set_thp(block as Pfn, true);
    let mut cc = migrate_scan_from(&k, block, MigrateMode::SyncLight);
    assert_eq!(isolate_migratepages(&mut k, &mut cc), Isolate::Success);
    assert!(cc.migratepages.is_empty(), "{:?}", cc.migratepages);
    assert_eq!(cc.migrate_pfn, block + PAGEBLOCK_NR_PAGES);
}

#[test]
fn async_isolation_skips_pageblocks_that_are_not_movable() {
    let w = world();
    let mut k = w.borrow_mut();
    // 3.3-3.6: no skip bit remembers the async scan (3.7's quirk has its own test).
    k.sw.set(Switch::CompactionSkipBits, false);
    let block = checkerboard_block(&mut k);
    k.zones[Z].set_pageblock_migratetype(block as Pfn, MIGRATE_UNMOVABLE);
    let mut cc = migrate_scan_from(&k, block, MigrateMode::Async);
    assert_eq!(isolate_migratepages(&mut k, &mut cc), Isolate::Success);
    assert!(cc.migratepages.is_empty(), "{:?}", cc.migratepages);
    assert_eq!(cc.migrate_pfn, block + PAGEBLOCK_NR_PAGES);
    let mut cc = migrate_scan_from(&k, block, MigrateMode::SyncLight);
    assert_eq!(isolate_migratepages(&mut k, &mut cc), Isolate::Success);
    assert_eq!(cc.migratepages.len(), COMPACT_CLUSTER_MAX);
    assert_eq!(
        k.zones[Z].stat(ZoneStat::nr_isolated_anon),
        COMPACT_CLUSTER_MAX as u64
    );
    for &p in &cc.migratepages {
        migrate::putback_lru_page(&mut k, p);
    }
    invariants::check(&k).unwrap();
}

#[test]
fn compact_finished_stops_when_the_order_is_free_or_the_scanners_meet() {
    let w = world();
    let mut k = w.borrow_mut();
    let mut cc = CompactControl::new(Z, Some(9), MIGRATE_MOVABLE, MigrateMode::Async);
    cc.migrate_pfn = k.zones[Z].start_pfn as u64;
    cc.free_pfn = start_free_pfn(&k.zones[Z]);
    assert_eq!(compact_finished(&mut k, &mut cc), CompactResult::Partial);
    let mut held = Vec::new();
    while let Some(b) = get_big(&mut k) {
        held.push(b);
    }
    assert_eq!(compact_finished(&mut k, &mut cc), CompactResult::Continue);
    cc.order = None;
    assert_eq!(compact_finished(&mut k, &mut cc), CompactResult::Continue);
    cc.free_pfn = cc.migrate_pfn;
    assert_eq!(compact_finished(&mut k, &mut cc), CompactResult::Complete);
    for (p, o) in held {
        page_alloc::free_pages(&mut k, p, o);
    }
}

#[test]
fn the_cached_free_pfn_run_wraps_once_and_completes_where_it_started() {
    let w = world();
    let mut k = w.borrow_mut();
    k.sw.set(Switch::CompactionCachedFreePfn, true);
    let mut held = Vec::new();
    while let Some(b) = get_big(&mut k) {
        held.push(b);
    }
    let z = &k.zones[Z];
    let end = start_free_pfn(z);
    let mut cc = CompactControl::new(Z, Some(9), MIGRATE_MOVABLE, MigrateMode::Async);
    cc.migrate_pfn = z.start_pfn as u64 + 4 * PAGEBLOCK_NR_PAGES;
    cc.start_free_pfn = end - 8 * PAGEBLOCK_NR_PAGES;
    cc.free_pfn = cc.migrate_pfn;
    assert_eq!(compact_finished(&mut k, &mut cc), CompactResult::Continue);
    assert!(cc.wrapped);
    assert_eq!(
        (cc.free_pfn, k.zones[Z].compact_cached_free_pfn),
        (end, end)
    );
    cc.free_pfn = cc.start_free_pfn + PAGEBLOCK_NR_PAGES;
    assert_eq!(compact_finished(&mut k, &mut cc), CompactResult::Continue);
    cc.free_pfn = cc.start_free_pfn;
    assert_eq!(compact_finished(&mut k, &mut cc), CompactResult::Complete);
    k.sw.set(Switch::CompactionCachedFreePfn, false);
    let mut cc = CompactControl::new(Z, Some(9), MIGRATE_MOVABLE, MigrateMode::Async);
    cc.free_pfn = 0;
    assert_eq!(compact_finished(&mut k, &mut cc), CompactResult::Complete);
    for (p, o) in held {
        page_alloc::free_pages(&mut k, p, o);
    }
}

#[test]
fn an_order_9_allocation_compacts_a_fragmented_zone_and_counts_it() {
    let w = world();
    {
        let mut k = w.borrow_mut();
        checkerboard(&mut k, 5000);
        for zi in [crate::mm::mmzone::ZONE_DMA, Z] {
            while let Some(b) = get_big_in(&mut k, zi) {
                k.held_blocks.push(b);
            }
        }
    }
    let got = std::rc::Rc::new(std::cell::Cell::new(None));
    run_task(&w, 10 * crate::engine::SEC, {
        let (w, got) = (w.clone(), got.clone());
        async move {
            let gfp = Gfp(Gfp::HIGHUSER_MOVABLE.0 | Gfp::NOWARN);
            got.set(page_alloc::alloc_pages(&w, gfp, 9).await.ok());
        }
    });
    let mut k = w.borrow_mut();
    let pfn = got.get().expect("compaction made an order-9 block");
    assert_eq!(pfn % 512, 0);
    k.held_blocks.push((pfn, 9));
    assert_eq!(k.events.get(VmEvent::compact_stall), 1);
    assert_eq!(k.events.get(VmEvent::compact_success), 1);
    assert!(k.events.get(VmEvent::pgmigrate_success) > 0);
    invariants::check(&k).unwrap();
}

/// A direct-reclaim scan control for `order` at `priority`.
fn direct_sc(order: u32, priority: i32) -> crate::mm::vmscan::ScanControl {
    let mut sc = crate::mm::vmscan::ScanControl::new(Gfp::HIGHUSER_MOVABLE, order, false, false);
    sc.priority = priority;
    sc
}

#[test]
fn reclaim_compaction_mode_is_for_costly_orders_or_low_priorities() {
    use crate::mm::vmscan::{in_reclaim_compaction, DEF_PRIORITY};
    assert!(!in_reclaim_compaction(&direct_sc(0, 0)));
    assert!(!in_reclaim_compaction(&direct_sc(3, DEF_PRIORITY - 2)));
    assert!(in_reclaim_compaction(&direct_sc(3, DEF_PRIORITY - 3)));
    assert!(in_reclaim_compaction(&direct_sc(4, DEF_PRIORITY)));
}

/// `n` inactive file pages of one file, standing in for reclaimable memory.
fn inactive_file_pages(k: &mut Kernel, n: u64) {
    let ino = crate::mm::inode::new_inode(k, "f", 0);
    for i in 0..n {
        let pfn = take(k);
        k.held_blocks.pop();
        k.pages.flags[pfn as usize] = PG_UPTODATE;
        crate::mm::filemap::add_to_page_cache_lru(k, pfn, ino, i);
    }
}

#[test]
fn reclaim_goes_on_until_twice_the_order_is_reclaimed_then_until_compaction_can_run() {
    use crate::mm::vmscan::should_continue_reclaim;
    let w = world();
    let mut k = w.borrow_mut();
    inactive_file_pages(&mut k, 5000);
    let mut sc = direct_sc(9, 12);
    sc.nr_reclaimed = 32;
    assert!(
        !should_continue_reclaim(&k, Z, 0, 32, &sc),
        "a round that reclaimed nothing stops"
    );
    assert!(
        should_continue_reclaim(&k, Z, 32, 32, &sc),
        "32 < 1024 pages for compaction"
    );
    sc.nr_reclaimed = 1024;
    // With 1024 reclaimed, go on only if compaction could not run yet.
    let suitable = compaction_suitable(&k, Z, Some(9));
    assert_eq!(
        should_continue_reclaim(&k, Z, 32, 32, &sc),
        suitable == CompactResult::Skipped
    );
    sc.gfp = Gfp(sc.gfp.0 | Gfp::REPEAT);
    sc.nr_reclaimed = 32;
    assert!(
        should_continue_reclaim(&k, Z, 0, 32, &sc),
        "__GFP_REPEAT: scanning is enough"
    );
    assert!(!should_continue_reclaim(&k, Z, 0, 0, &sc));
    assert!(
        !should_continue_reclaim(&k, Z, 32, 32, &direct_sc(2, 12)),
        "not a costly order"
    );
}

#[test]
fn before_c53919ad_reclaim_continues_only_in_the_mode_the_last_batch_left() {
    use crate::mm::vmscan::{should_continue_reclaim, ReclaimMode};
    let w = boot_for_test(128, 0, "3.4");
    let mut k = w.borrow_mut();
    inactive_file_pages(&mut k, 5000);
    // Order 9, 32 of 1024 reclaimed: 3.5+ would go on.
    let mut sc = direct_sc(9, 12);
    sc.nr_reclaimed = 32;
    sc.set_reclaim_mode(false);
    assert_eq!(sc.reclaim_mode, ReclaimMode::Compaction);
    assert!(should_continue_reclaim(&k, Z, 32, 32, &sc));
    // A kept page reset the mode: stop.
    sc.reset_reclaim_mode();
    assert!(!should_continue_reclaim(&k, Z, 32, 32, &sc));
    // And order 2 at priority 9 is compaction mode here too.
    let mut small = direct_sc(2, 9);
    small.nr_reclaimed = 4;
    small.set_reclaim_mode(false);
    assert!(should_continue_reclaim(&k, Z, 4, 4, &small));
}

#[test]
fn direct_reclaim_leaves_a_zone_ready_for_compaction_alone() {
    use crate::mm::vmscan::{balance_gap, compaction_ready};
    let w = world();
    let mut k = w.borrow_mut();
    let sc = direct_sc(9, 12);
    // A fresh zone: order 9 is free, so compaction_suitable says Partial, not Skipped.
    let z = &k.zones[Z];
    let need = z.high_wmark() + balance_gap(&k, Z) + (2 << 9);
    assert!(k.zones[Z].free_pages() > need);
    assert!(compaction_ready(&mut k, Z, &sc));
    assert!(
        !compaction_ready(&mut k, Z, &direct_sc(3, 12)),
        "small orders reclaim"
    );
    // Below the watermark the zone is not ready, deferred or not.
    let mut held = 0;
    while k.zones[Z].free_pages() > need {
        take(&mut k);
        held += 1;
    }
    assert!(held > 0);
    assert!(!compaction_ready(&mut k, Z, &sc));
    defer_compaction(&mut k.zones[Z], 9);
    let considered = k.zones[Z].compact_considered;
    assert!(!compaction_ready(&mut k, Z, &sc));
    assert_eq!(
        k.zones[Z].compact_considered,
        considered + 1,
        "it counts as a deferral check"
    );
}

#[test]
fn kswapd_checks_order_0_once_compaction_could_run() {
    use crate::mm::vmscan::{kswapd_testorder, pgdat_needs_compaction, zone_balanced};
    let w = world();
    let mut k = w.borrow_mut();
    assert_eq!(kswapd_testorder(&k, Z, 0), 0);
    assert_eq!(
        kswapd_testorder(&k, Z, 9),
        0,
        "plenty free: compaction could run"
    );
    assert!(
        !pgdat_needs_compaction(&k, 9, Z, Z),
        "a free order-9 block exists"
    );
    assert!(!pgdat_needs_compaction(&k, 0, Z, Z));
    for zi in [crate::mm::mmzone::ZONE_DMA, Z] {
        while let Some(b) = get_big_in(&mut k, zi) {
            k.held_blocks.push(b);
        }
    }
    assert!(pgdat_needs_compaction(&k, 9, Z, Z));
    // Too few free pages for compaction: kswapd must reclaim for the order itself, and the
    // zone is not balanced at it.
    let low = k.zones[Z].low_wmark();
    while k.zones[Z].free_pages() > low {
        take(&mut k);
    }
    assert_eq!(compaction_suitable(&k, Z, Some(9)), CompactResult::Skipped);
    assert_eq!(kswapd_testorder(&k, Z, 9), 9);
    assert!(!zone_balanced(&k, Z, 9, 0, Z));
}

#[test]
fn kswapd_woken_for_order_9_compacts_the_node_when_no_zone_has_the_block() {
    let w = world();
    {
        let mut k = w.borrow_mut();
        // DMA32 a checkerboard, DMA without its pageblock-sized blocks but well above its
        // watermarks (so kswapd has nothing to reclaim at order 0).
        checkerboard(&mut k, 3000);
        while let Some(b) = get_big(&mut k) {
            k.held_blocks.push(b);
        }
        for order in 9..MAX_ORDER {
            while let Some(head) = (0..crate::mm::mmzone::MIGRATE_TYPES)
                .map(|mt| k.zones[0].free_area[order].free_list[mt].head)
                .find(|&h| h != crate::mm::page::NIL)
            {
                let super::Kernel { pages, zones, .. } = &mut *k;
                page_alloc::take_free_block(pages, &mut zones[0], head, order);
                k.held_blocks.push((head, order as u32));
            }
        }
    }
    run_task(&w, 5 * crate::engine::SEC, {
        let w = w.clone();
        async move {
            // An atomic order-9 allocation fails and wakes kswapd for its order.
            let gfp = Gfp(Gfp::HIGH | Gfp::NOWARN);
            assert!(page_alloc::alloc_pages(&w, gfp, 9).await.is_err());
            crate::engine::sleep(&w, crate::engine::SEC).await;
        }
    });
    let k = w.borrow();
    assert!(k.events.get(VmEvent::compact_migrate_scanned) > 0);
    assert_eq!(
        k.events.get(VmEvent::compact_stall),
        0,
        "kswapd's, not a direct compaction"
    );
    assert!(free_blocks_at_least(&k.zones[Z], 9) > 0);
    invariants::check(&k).unwrap();
}

#[test]
fn patch_2_scales_reclaim_for_compaction_by_recent_failures() {
    use crate::mm::vmscan::should_continue_reclaim;
    let w = world();
    let mut k = w.borrow_mut();
    let ino = crate::mm::inode::new_inode(&mut k, "f", 0);
    for i in 0..6000 {
        let pfn = take(&mut k);
        k.held_blocks.pop();
        k.pages.flags[pfn as usize] = PG_UPTODATE;
        crate::mm::filemap::add_to_page_cache_lru(&mut k, pfn, ino, i);
    }
    // Two failures at order 9: shift 2, and order 9 is at or above the failed order.
    compaction_succeeded(&mut k.zones[Z], 8);
    defer_compaction(&mut k.zones[Z], 9);
    defer_compaction(&mut k.zones[Z], 9);
    let mut sc = direct_sc(9, 12);
    sc.nr_reclaimed = 2048;
    let plain = should_continue_reclaim(&k, Z, 32, 32, &sc);
    assert_eq!(
        plain,
        compaction_suitable(&k, Z, Some(9)) == CompactResult::Skipped
    );
    k.sw.set(Switch::ReclaimCompactionScaleByFailures, true);
    assert!(
        should_continue_reclaim(&k, Z, 32, 32, &sc),
        "2048 < 1024 << 2 and the inactive list is larger"
    );
    sc.nr_reclaimed = 4096;
    assert_eq!(should_continue_reclaim(&k, Z, 32, 32, &sc), plain);
    // An order below the failed one is not scaled.
    k.zones[Z].compact_order_failed = 10;
    sc.nr_reclaimed = 2048;
    assert_eq!(should_continue_reclaim(&k, Z, 32, 32, &sc), plain);
}

#[test]
fn async_compaction_backs_out_when_a_task_waits_for_a_cpu() {
    let w = world();
    let block = {
        let mut k = w.borrow_mut();
        let block = checkerboard_block(&mut k);
        // c67fe375 as 3.6 has it: the migrate scanner's back-out ends only its step.
        k.sw.set(Switch::CompactionAbortOnContention, true);
        k.sw.set(Switch::CompactionAbortWhenContended, false);
        block
    };
    // Three CPU hogs on the two CPUs: one is always waiting.
    spawn_cpu_hogs(&w, 3, 10 * crate::engine::SEC);
    run_task(&w, crate::engine::SEC, {
        let w = w.clone();
        async move {
            crate::engine::sleep(&w, crate::engine::MSEC).await;
            let mut k = w.borrow_mut();
            assert!(k.sched.need_resched());
            let start = block;
            let end = start_free_pfn(&k.zones[Z]);
            for (mode, backs_out) in [(MigrateMode::Async, true), (MigrateMode::SyncLight, false)] {
                let mut cc = CompactControl::new(Z, Some(9), MIGRATE_MOVABLE, mode);
                cc.migrate_pfn = start;
                cc.free_pfn = end;
                // A fresh slice does not back out, one used up does.
                assert!(!cc.must_back_out(&k));
                cc.slice = crate::calibration::sched_slice(2);
                assert_eq!(isolate_migratepages(&mut k, &mut cc), Isolate::Success);
                assert_eq!(cc.contended, backs_out, "{mode:?}");
                assert_eq!(cc.migratepages.is_empty(), backs_out, "{mode:?}");
                for &p in &cc.migratepages {
                    migrate::putback_lru_page(&mut k, p);
                }
                cc.migratepages.clear();
                cc.nr_migratepages = 32;
                isolate_freepages(&mut k, &mut cc);
                assert_eq!(cc.freepages.is_empty(), backs_out, "{mode:?}");
                release_freepages(&mut k, &mut cc);
            }
            // e64c5237 (3.7): the back-out ends the run.
            k.sw.set(Switch::CompactionAbortWhenContended, true);
            let mut cc = CompactControl::new(Z, Some(9), MIGRATE_MOVABLE, MigrateMode::Async);
            cc.migrate_pfn = start;
            cc.free_pfn = end;
            cc.slice = crate::calibration::sched_slice(2);
            assert_eq!(isolate_migratepages(&mut k, &mut cc), Isolate::Abort);
            assert!(cc.contended && cc.migratepages.is_empty());
            k.sw.set(Switch::CompactionAbortOnContention, false);
            let mut cc = CompactControl::new(Z, Some(9), MIGRATE_MOVABLE, MigrateMode::Async);
            cc.migrate_pfn = start;
            cc.free_pfn = end;
            cc.slice = crate::calibration::sched_slice(2);
            isolate_migratepages(&mut k, &mut cc);
            assert!(
                !cc.contended,
                "without c67fe375 async compaction carries on"
            );
            for &p in &cc.migratepages {
                migrate::putback_lru_page(&mut k, p);
            }
        }
    });
}

#[test]
fn capture_hands_the_compacted_block_to_the_allocation() {
    let w = world();
    {
        let mut k = w.borrow_mut();
        checkerboard(&mut k, 5000);
        for zi in [crate::mm::mmzone::ZONE_DMA, Z] {
            while let Some(b) = get_big_in(&mut k, zi) {
                k.held_blocks.push(b);
            }
        }
        k.sw.set(Switch::CompactionCapture, true);
        // With capture, finding the order free is not enough to stop: it must be taken.
        let mut cc = CompactControl::new(Z, Some(9), MIGRATE_MOVABLE, MigrateMode::Async);
        cc.capture = true;
        cc.free_pfn = start_free_pfn(&k.zones[Z]);
        assert_eq!(compact_finished(&mut k, &mut cc), CompactResult::Continue);
        cc.captured = Some(0);
        assert_eq!(compact_finished(&mut k, &mut cc), CompactResult::Partial);
    }
    let got = std::rc::Rc::new(std::cell::Cell::new(None));
    run_task(&w, 10 * crate::engine::SEC, {
        let (w, got) = (w.clone(), got.clone());
        async move {
            let gfp = Gfp(Gfp::HIGHUSER_MOVABLE.0 | Gfp::NOWARN);
            got.set(page_alloc::alloc_pages(&w, gfp, 9).await.ok());
        }
    });
    let mut k = w.borrow_mut();
    let pfn = got.get().expect("a captured order-9 block");
    assert_eq!(pfn % 512, 0);
    assert!(
        k.pages.flags[pfn as usize] & PG_BUDDY == 0,
        "off the free lists"
    );
    k.held_blocks.push((pfn, 9));
    assert_eq!(k.events.get(VmEvent::compact_success), 1);
    invariants::check(&k).unwrap();
}

#[test]
fn the_failed_order_itself_is_deferred_and_the_cfs_slice_grows_with_cpus() {
    let w = world();
    let mut k = w.borrow_mut();
    compaction_succeeded(&mut k.zones[Z], 6);
    defer_compaction(&mut k.zones[Z], 4);
    assert!(
        compaction_deferred(&mut k, Z, 4),
        "order 4 failed: it is deferred"
    );
    use crate::calibration::{sched_slice, SCHED_MIN_GRANULARITY_NS as G};
    assert_eq!(
        [1, 2, 4, 8, 64].map(sched_slice),
        [G, 2 * G, 3 * G, 4 * G, 4 * G]
    );
}

#[test]
fn the_free_scanner_starts_at_the_zones_last_pageblock() {
    assert_eq!(start_free_pfn(&Zone::new(1, 0, 1000)), 512);
    assert_eq!(start_free_pfn(&Zone::new(1, 4096, 32768)), 32768);
    assert_eq!(start_free_pfn(&Zone::new(1, 4096, 33279)), 32768);
}

#[test]
fn suitability_is_partial_only_if_the_order_is_free_within_the_watermark() {
    let w = world();
    let mut k = w.borrow_mut();
    checkerboard(&mut k, 3000);
    while let Some(b) = get_big(&mut k) {
        k.held_blocks.push(b);
    }
    // One order-9 block back, among thousands of single pages: the block exists (index
    // -1000) but the order-9 watermark counts only the pages in blocks of 9 and up.
    let (p, o) = *k.held_blocks.iter().find(|&&(_, o)| o == 9).unwrap();
    k.held_blocks.retain(|&b| b != (p, o));
    page_alloc::free_pages(&mut k, p, 9);
    let z = &k.zones[Z];
    assert_eq!(fragmentation_index(z, 9), -1000);
    assert!(!zone_watermark_ok(z, 9, z.low_wmark() + (2 << 9), 0, 0));
    assert_eq!(compaction_suitable(&k, Z, Some(9)), CompactResult::Continue);
}

#[test]
fn compact_finished_wants_the_order_above_low_plus_the_block_on_its_own_list() {
    use crate::mm::mmzone::{MIGRATE_RECLAIMABLE, WMARK_LOW};
    let w = world();
    let mut k = w.borrow_mut();
    let free = k.zones[Z].free_pages();
    let mut cc = CompactControl::new(Z, Some(9), MIGRATE_MOVABLE, MigrateMode::Async);
    cc.free_pfn = start_free_pfn(&k.zones[Z]);
    // The order-9 check needs free - 511 > low + 512.
    k.zones[Z].watermark[WMARK_LOW] = free - 600;
    assert_eq!(compact_finished(&mut k, &mut cc), CompactResult::Continue);
    k.zones[Z].watermark[WMARK_LOW] = free - 2000;
    assert_eq!(compact_finished(&mut k, &mut cc), CompactResult::Partial);
    // A type with no free block of order 4 or more: not done at order 4, done at order 9
    // (a whole-pageblock allocation takes any free block over).
    let empty = [MIGRATE_UNMOVABLE, MIGRATE_RECLAIMABLE]
        .into_iter()
        .find(|&mt| (4..MAX_ORDER).all(|o| k.zones[Z].free_area[o].free_list[mt].is_empty()))
        .expect("a type without large free blocks");
    let mut cc = CompactControl::new(Z, Some(4), empty, MigrateMode::Async);
    cc.free_pfn = start_free_pfn(&k.zones[Z]);
    assert_eq!(compact_finished(&mut k, &mut cc), CompactResult::Continue);
    cc.order = Some(9);
    assert_eq!(compact_finished(&mut k, &mut cc), CompactResult::Partial);
    cc.order = Some(4);
    cc.migratetype = MIGRATE_MOVABLE;
    assert_eq!(compact_finished(&mut k, &mut cc), CompactResult::Partial);
}

#[test]
fn too_many_isolated_is_more_than_half_the_lru_and_async_gives_up_on_it() {
    let w = world();
    let mut k = w.borrow_mut();
    let block = checkerboard_block(&mut k);
    let z = &mut k.zones[Z];
    for (i, stat) in [
        ZoneStat::nr_active_file,
        ZoneStat::nr_inactive_file,
        ZoneStat::nr_active_anon,
        ZoneStat::nr_inactive_anon,
    ]
    .into_iter()
    .enumerate()
    {
        z.mod_stat(stat, 100 * (i as i64 + 1));
    }
    let lru = z.stat(ZoneStat::nr_active_file)
        + z.stat(ZoneStat::nr_inactive_file)
        + z.stat(ZoneStat::nr_active_anon)
        + z.stat(ZoneStat::nr_inactive_anon);
    z.mod_stat(ZoneStat::nr_isolated_file, 7);
    z.mod_stat(ZoneStat::nr_isolated_anon, (lru / 2 - 7) as i64);
    assert!(!too_many_isolated(z), "half is not too many");
    z.mod_stat(ZoneStat::nr_isolated_anon, 1);
    assert!(too_many_isolated(z));
    for (mode, want) in [
        (MigrateMode::Async, Isolate::Abort),
        (MigrateMode::SyncLight, Isolate::Throttle),
    ] {
        let mut cc = migrate_scan_from(&k, block, mode);
        assert_eq!(isolate_migratepages(&mut k, &mut cc), want);
        assert!(cc.migratepages.is_empty());
    }
}

#[test]
fn the_migrate_scanner_counts_every_frame_and_may_reach_the_free_scanners_block() {
    let w = world();
    let mut k = w.borrow_mut();
    // The zone's last pageblock is free: 512 frames looked at, nothing isolated.
    let last = start_free_pfn(&k.zones[Z]) - PAGEBLOCK_NR_PAGES;
    let mut cc = CompactControl::new(Z, Some(9), MIGRATE_MOVABLE, MigrateMode::SyncLight);
    cc.migrate_pfn = last;
    cc.free_pfn = last + PAGEBLOCK_NR_PAGES;
    assert_eq!(isolate_migratepages(&mut k, &mut cc), Isolate::Success);
    assert_eq!(cc.stats.migrate_scanned, PAGEBLOCK_NR_PAGES);
    assert_eq!(cc.migrate_pfn, last + PAGEBLOCK_NR_PAGES);
    assert!(cc.migratepages.is_empty());
    // Past the free scanner: nothing scanned.
    let mut cc = CompactControl::new(Z, Some(9), MIGRATE_MOVABLE, MigrateMode::SyncLight);
    cc.migrate_pfn = last;
    cc.free_pfn = last + PAGEBLOCK_NR_PAGES - 1;
    assert_eq!(isolate_migratepages(&mut k, &mut cc), Isolate::None);
    assert_eq!(cc.stats.migrate_scanned, 0);
    // Some LRU pages: each frame counted once.
    let (_, _, pfns) = checkerboard(&mut k, 8);
    let block = pfns[0] as u64 & !(PAGEBLOCK_NR_PAGES - 1);
    let mut cc = migrate_scan_from(&k, block, MigrateMode::SyncLight);
    isolate_migratepages(&mut k, &mut cc);
    assert_eq!(cc.stats.migrate_scanned, PAGEBLOCK_NR_PAGES);
    assert_eq!(cc.migratepages.len(), 8);
    for &p in &cc.migratepages {
        migrate::putback_lru_page(&mut k, p);
    }
}

#[test]
fn a_page_in_use_is_never_a_free_scanner_target_outside_movable_blocks() {
    let w = world();
    let ext3 = add_test_disk(&w, "sdc", "ext3");
    let mut k = w.borrow_mut();
    // Enough files that the page's mapping (its inode number) is past pageblock_order.
    let ino = (0..12)
        .map(|i| crate::mm::inode::new_inode(&mut k, &format!("f{i}"), ext3))
        .last()
        .unwrap();
    assert!(ino >= PAGEBLOCK_ORDER);
    let pfn = take(&mut k);
    k.held_blocks.pop();
    k.pages.flags[pfn as usize] = PG_UPTODATE;
    crate::mm::filemap::add_to_page_cache_lru(&mut k, pfn, ino, 0);
    k.zones[Z].set_pageblock_migratetype(pfn, MIGRATE_UNMOVABLE);
    assert!(!suitable_migration_target(&k, Z, pfn as u64));
    k.zones[Z].set_pageblock_migratetype(pfn, MIGRATE_MOVABLE);
    assert!(suitable_migration_target(&k, Z, pfn as u64));
}

#[test]
fn a_swap_cache_page_moves_with_its_slot_and_an_orphaned_anon_page_waits() {
    let w = boot_for_test(128, 64, "3.9");
    let mut k = w.borrow_mut();
    let (mm, start, pfns) = checkerboard(&mut k, 16);
    // Swapped out but still in the swap cache: unmapped, its PTE a swap entry.
    let old = pfns[5];
    assert!(crate::mm::swapfile::add_to_swap(&mut k, old));
    let slot = k.pages.private[old as usize];
    let pte = k.mms[mm].pte_mut(start + 5);
    *pte &= !crate::mm::memory::PTE_YOUNG;
    assert_eq!(
        crate::mm::rmap::try_to_unmap(&mut k, old),
        crate::mm::rmap::Unmap::Success
    );
    assert!(!k.pages.mapped(old));
    assert_eq!(migrate_check(&k, old, MigrateMode::Async), Ok(()));
    swap::del_page_from_lru_list(&mut k, old);
    k.pages.set(old, PG_ISOLATED);
    k.zones[Z].mod_stat(ZoneStat::nr_isolated_anon, 1);
    let new = take(&mut k);
    k.held_blocks.pop();
    let r = migrate::migrate_pages(&mut k, &mut vec![old], |_| Some(new), MigrateMode::Async);
    assert_eq!(r.succeeded, 1);
    assert_eq!(k.swap.lookup_swap_cache(slot), Some(new));
    assert_eq!(k.pages.private[new as usize], slot);
    invariants::check(&k).unwrap();
    // An anonymous page neither mapped nor in the swap cache is on its way out.
    let orphan = take(&mut k);
    k.pages.flags[orphan as usize] = crate::mm::page::PG_SWAPBACKED | PG_ANON | PG_ISOLATED;
    assert_eq!(
        migrate_check(&k, orphan, MigrateMode::SyncLight),
        Err(MigrateError::Again)
    );
    k.pages.flags[orphan as usize] = 0;
}

#[test]
fn a_permanent_failure_leaves_the_list_for_the_lru_and_frees_its_target() {
    let w = world();
    let mut k = w.borrow_mut();
    let (_, _, pfns) = checkerboard(&mut k, 16);
    let p = pfns[2];
    swap::del_page_from_lru_list(&mut k, p);
    k.pages.set(p, PG_ISOLATED | PG_WRITEBACK);
    k.zones[Z].mod_stat(ZoneStat::nr_isolated_anon, 1);
    let target = take(&mut k);
    k.held_blocks.pop();
    let free_before = free_or_on_cpu_lists(&k);
    let mut list = vec![p];
    let r = migrate::migrate_pages(&mut k, &mut list, |_| Some(target), MigrateMode::Async);
    // -EBUSY: no retry, the page goes back to the LRU at once.
    assert_eq!((r.succeeded, r.failed, r.remaining), (0, 1, 0));
    assert!(list.is_empty());
    assert!(k.pages.test(p, PG_LRU) && !k.pages.test(p, PG_ISOLATED));
    assert_eq!(k.zones[Z].stat(ZoneStat::nr_isolated_anon), 0);
    assert_eq!(
        free_or_on_cpu_lists(&k),
        free_before + 1,
        "the target was given back"
    );
    k.pages.clear(p, PG_WRITEBACK);
    invariants::check(&k).unwrap();
}

#[test]
fn freeing_a_block_counts_every_page_and_leaves_no_owner_on_its_frames() {
    let w = world();
    let mut k = w.borrow_mut();
    let (pfn, order) = get_big(&mut k).expect("a free block");
    let pgfree = k.events.get(VmEvent::pgfree);
    // A stale owner on the block's last frame: freeing clears it.
    let last = pfn + (1 << order) - 1;
    k.pages.mapping[last as usize] = 7;
    k.pages.private[last as usize] = 9;
    page_alloc::free_pages(&mut k, pfn, order);
    assert_eq!(k.events.get(VmEvent::pgfree), pgfree + (1 << order));
    assert_eq!(
        (
            k.pages.mapping[last as usize],
            k.pages.private[last as usize]
        ),
        (0, 0)
    );
    invariants::check(&k).unwrap();
}

/// The free buddy block holding `pfn`: its head and order.
fn free_block_holding(k: &Kernel, pfn: Pfn) -> (Pfn, usize) {
    (0..MAX_ORDER)
        .rev()
        .map(|o| (pfn & !((1 << o) - 1), o))
        .find(|&(h, o)| {
            k.pages.flags[h as usize] & PG_BUDDY != 0 && k.pages.mapping[h as usize] as usize == o
        })
        .expect("a free frame")
}

/// Take the pageblock `block` off the free lists whole (a fresh zone's top is free) and
/// keep it, giving back the rest of the buddy block it was part of.
fn hold_pageblock(k: &mut Kernel, block: Pfn) {
    let (head, order) = free_block_holding(k, block);
    let super::Kernel { pages, zones, .. } = k;
    page_alloc::take_free_block(pages, &mut zones[Z], head, order);
    for part in (head..head + (1 << order)).step_by(PAGEBLOCK_NR_PAGES as usize) {
        if part != block {
            page_alloc::free_pages(k, part, PAGEBLOCK_ORDER as u32);
        }
    }
    k.held_blocks.push((block, PAGEBLOCK_ORDER as u32));
}

#[test]
fn a_migrate_scan_that_isolates_nothing_marks_the_block_and_moves_the_cached_pfn() {
    // §6.5/§6.9 (3.7): a range scanned whole with nothing isolated sets the block's skip
    // bit, and the cached migrate pfn moves up to it until the run isolates a page.
    let w = world();
    let mut k = w.borrow_mut();
    assert!(
        k.sw.on(Switch::CompactionSkipBits),
        "3.9 has 3.7's skip bits"
    );
    let used = checkerboard_block(&mut k);
    let zend = k.zones[Z].end_pfn as u64;
    // Blocks with no LRU page: at the zone's top, boot left only its slab and free pages.
    let bare = [zend - 4 * PAGEBLOCK_NR_PAGES, zend - 2 * PAGEBLOCK_NR_PAGES];
    let start = k.zones[Z].compact_cached_migrate_pfn;
    assert_eq!(start, k.zones[Z].start_pfn as u64);
    let mut cc = migrate_scan_from(&k, bare[0], MigrateMode::SyncLight);
    cc.free_pfn = zend;
    assert_eq!(isolate_migratepages(&mut k, &mut cc), Isolate::Success);
    assert!(cc.migratepages.is_empty());
    assert!(k.zones[Z].pageblock_skip(bare[0] as Pfn));
    assert_eq!(k.zones[Z].compact_cached_migrate_pfn, bare[0]);
    // Once the run has isolated pages, an empty block gets its bit but keeps the cache.
    cc.migrate_pfn = used;
    isolate_migratepages(&mut k, &mut cc);
    assert_eq!(cc.migratepages.len(), COMPACT_CLUSTER_MAX);
    assert!(!k.zones[Z].pageblock_skip(used as Pfn));
    for p in std::mem::take(&mut cc.migratepages) {
        migrate::putback_lru_page(&mut k, p);
    }
    cc.migrate_pfn = bare[1];
    isolate_migratepages(&mut k, &mut cc);
    assert!(k.zones[Z].pageblock_skip(bare[1] as Pfn));
    assert_eq!(k.zones[Z].compact_cached_migrate_pfn, bare[0]);
    // A marked block is passed over: a new run scans none of it.
    let mut cc = migrate_scan_from(&k, bare[0], MigrateMode::SyncLight);
    cc.free_pfn = zend;
    isolate_migratepages(&mut k, &mut cc);
    assert_eq!(cc.stats.migrate_scanned, 0);
    assert_eq!(cc.migrate_pfn, bare[0] + PAGEBLOCK_NR_PAGES);
    // The reset forgets it all.
    reset_isolation_suitable_zone(&mut k.zones[Z]);
    let z = &k.zones[Z];
    assert!(!z.pageblock_skip(bare[0] as Pfn) && !z.pageblock_skip(bare[1] as Pfn));
    assert_eq!(
        (z.compact_cached_migrate_pfn, z.compact_cached_free_pfn),
        (z.start_pfn as u64, zend)
    );
    invariants::check(&k).unwrap();
}

#[test]
fn an_async_scan_marks_a_block_of_another_type_which_sync_compaction_then_skips() {
    // The 3.7 quirk of §6.5: async passes over a non-MOVABLE block, isolating nothing, so
    // the block is marked and later sync runs skip it; the cache stays where it was.
    let w = world();
    let mut k = w.borrow_mut();
    let block = checkerboard_block(&mut k);
    k.zones[Z].set_pageblock_migratetype(block as Pfn, MIGRATE_UNMOVABLE);
    let mut cc = migrate_scan_from(&k, block, MigrateMode::Async);
    isolate_migratepages(&mut k, &mut cc);
    assert!(cc.migratepages.is_empty());
    assert!(k.zones[Z].pageblock_skip(block as Pfn));
    assert_eq!(
        k.zones[Z].compact_cached_migrate_pfn,
        k.zones[Z].start_pfn as u64
    );
    let mut cc = migrate_scan_from(&k, block, MigrateMode::SyncLight);
    assert_eq!(isolate_migratepages(&mut k, &mut cc), Isolate::Success);
    assert!(cc.migratepages.is_empty(), "skipped despite its LRU pages");
    assert_eq!(cc.migrate_pfn, block + PAGEBLOCK_NR_PAGES);
    // Without skip bits (3.3-3.6) sync compaction takes the block's pages.
    k.sw.set(Switch::CompactionSkipBits, false);
    let mut cc = migrate_scan_from(&k, block, MigrateMode::SyncLight);
    isolate_migratepages(&mut k, &mut cc);
    assert_eq!(cc.migratepages.len(), COMPACT_CLUSTER_MAX);
    for &p in &cc.migratepages {
        migrate::putback_lru_page(&mut k, p);
    }
    invariants::check(&k).unwrap();
}

#[test]
fn a_step_begun_inside_a_pageblock_ends_with_it_from_3_8() {
    let w = world();
    let mut k = w.borrow_mut();
    let zend = k.zones[Z].end_pfn as u64;
    let block = zend - 4 * PAGEBLOCK_NR_PAGES;
    for (one_block, end) in [
        (true, block + PAGEBLOCK_NR_PAGES),
        (false, block + 2 * PAGEBLOCK_NR_PAGES),
    ] {
        k.sw.set(Switch::CompactionMigrateScanOneBlock, one_block);
        reset_isolation_suitable_zone(&mut k.zones[Z]);
        let mut cc = migrate_scan_from(&k, block + 100, MigrateMode::SyncLight);
        cc.free_pfn = zend;
        isolate_migratepages(&mut k, &mut cc);
        assert_eq!(cc.migrate_pfn, end, "one block: {one_block}");
    }
}

#[test]
fn the_free_scanner_marks_a_block_without_free_pages_and_passes_marked_blocks_over() {
    // §6.6 (3.7): a suitable block scanned whole that gave no free page is marked, and
    // the cached free pfn moves down to it until the run isolates free pages.
    let w = world();
    let mut k = w.borrow_mut();
    // The upper half of the highest free order-10 block (boot's slab holds the zone's top).
    let head = (0..crate::mm::mmzone::MIGRATE_TYPES)
        .flat_map(|mt| k.zones[Z].free_area[MAX_ORDER - 1].free_list[mt].iter(&k.pages))
        .max()
        .expect("a free order-10 block") as u64;
    let top = head + PAGEBLOCK_NR_PAGES;
    hold_pageblock(&mut k, top as Pfn);
    let scan = |k: &mut Kernel| {
        let mut cc = CompactControl::new(Z, Some(9), MIGRATE_MOVABLE, MigrateMode::Async);
        cc.migrate_pfn = k.zones[Z].start_pfn as u64;
        cc.free_pfn = top;
        cc.nr_migratepages = COMPACT_CLUSTER_MAX;
        isolate_freepages(k, &mut cc);
        cc
    };
    let mut cc = scan(&mut k);
    assert!(k.zones[Z].pageblock_skip(top as Pfn));
    assert_eq!(k.zones[Z].compact_cached_free_pfn, top);
    assert!(cc.finished_update_free);
    let below = top - PAGEBLOCK_NR_PAGES;
    assert!(cc
        .freepages
        .iter()
        .all(|&p| (below..top).contains(&(p as u64))));
    assert!(!k.zones[Z].pageblock_skip(below as Pfn));
    release_freepages(&mut k, &mut cc);
    // Its pages free again, the marked block is still passed over.
    let (pfn, order) = k.held_blocks.pop().unwrap();
    page_alloc::free_pages(&mut k, pfn, order);
    let mut cc = scan(&mut k);
    assert!(!cc.freepages.is_empty());
    assert!(cc.freepages.iter().all(|&p| (p as u64) < top));
    release_freepages(&mut k, &mut cc);
    invariants::check(&k).unwrap();
}

#[test]
fn skip_bits_are_flushed_when_kswapd_sleeps_after_a_complete_run_or_when_deferral_ends() {
    // §6.9 (62997027): a direct or proc run that reaches COMPLETE asks for the flush,
    // kswapd's does not; an allocation compaction served cancels it; kswapd flushes on
    // sleeping; compaction_restarting says when a direct run clears the bits itself.
    let w = world();
    let mut k = w.borrow_mut();
    let block = k.zones[Z].end_pfn as u64 - 2 * PAGEBLOCK_NR_PAGES;
    let met = |k: &mut Kernel, kswapd: bool| {
        let mut cc = CompactControl::new(Z, Some(9), MIGRATE_MOVABLE, MigrateMode::Async);
        cc.kswapd = kswapd;
        cc.migrate_pfn = block;
        cc.free_pfn = block;
        compact_finished(k, &mut cc)
    };
    k.zones[Z].set_pageblock_skip(block as Pfn);
    assert_eq!(met(&mut k, true), CompactResult::Complete);
    assert!(!k.zones[Z].compact_blockskip_flush, "kswapd's run");
    reset_isolation_suitable(&mut k);
    assert!(k.zones[Z].pageblock_skip(block as Pfn), "no flush asked");
    assert_eq!(met(&mut k, false), CompactResult::Complete);
    assert!(k.zones[Z].compact_blockskip_flush);
    compaction_succeeded(&mut k.zones[Z], 9);
    assert!(
        !k.zones[Z].compact_blockskip_flush,
        "an allocation succeeded"
    );
    met(&mut k, false);
    reset_isolation_suitable(&mut k);
    assert!(!k.zones[Z].pageblock_skip(block as Pfn));
    assert!(!k.zones[Z].compact_blockskip_flush);
    // Without the switch there is nothing to flush.
    k.zones[Z].set_pageblock_skip(block as Pfn);
    met(&mut k, false);
    k.sw.set(Switch::CompactionSkipBits, false);
    reset_isolation_suitable(&mut k);
    assert!(k.zones[Z].pageblock_skip(block as Pfn));
    // Restarting: the longest deferral (64 calls) just ended, at or above the failed order.
    let z = &mut k.zones[Z];
    compaction_succeeded(z, 9);
    for _ in 0..COMPACT_MAX_DEFER_SHIFT {
        defer_compaction(z, 4);
    }
    assert!(!compaction_restarting(z, Some(9)), "still deferred");
    z.compact_considered = 64;
    assert!(compaction_restarting(z, Some(9)));
    assert!(compaction_restarting(z, Some(4)));
    assert!(!compaction_restarting(z, Some(3)), "below the failed order");
    assert!(!compaction_restarting(z, None), "a proc run's order is -1");
}

#[test]
fn a_batch_with_nothing_to_move_into_ends_the_run_from_3_5() {
    // 4bf2bba3: migrate_pages' -ENOMEM (the free scanner found no page) ends the run,
    // PARTIAL; 3.3-3.4 went on scanning.
    let w = world();
    let mut k = w.borrow_mut();
    let block = checkerboard_block(&mut k);
    for (on, ends) in [(true, true), (false, false)] {
        k.sw.set(Switch::CompactionAbortOnEnomem, on);
        // The free scanner may not go below the block after the migrate scanner's.
        let mut cc = CompactControl::new(Z, None, MIGRATE_MOVABLE, MigrateMode::SyncLight);
        cc.migrate_pfn = block;
        cc.free_pfn = block + PAGEBLOCK_NR_PAGES;
        let step = compact_step(&mut k, &mut cc);
        assert_eq!(
            matches!(step, Step::CpuThenDone(_, CompactResult::Partial)),
            ends,
            "{step:?}"
        );
        assert!(matches!(step, Step::Cpu(_) | Step::CpuThenDone(..)));
        assert_eq!(cc.stats.migrated, 0);
        assert!(cc.stats.isolated > 0, "the batch was isolated");
        assert!(cc.migratepages.is_empty(), "and put back");
        invariants::check(&k).unwrap();
    }
    // With capture (patch 3) such a batch leaves before taking a block; without the end
    // the capture after it goes ahead (free order-9 blocks are left at the zone's top).
    k.sw.set(Switch::CompactionCapture, true);
    for (on, captures) in [(true, false), (false, true)] {
        k.sw.set(Switch::CompactionAbortOnEnomem, on);
        let mut cc = CompactControl::new(Z, Some(9), MIGRATE_MOVABLE, MigrateMode::SyncLight);
        cc.capture = true;
        cc.migrate_pfn = block;
        cc.free_pfn = block + PAGEBLOCK_NR_PAGES;
        compact_step(&mut k, &mut cc);
        assert_eq!(cc.captured.is_some(), captures, "enomem end: {on}");
        if let Some(pfn) = cc.captured {
            k.held_blocks.push((pfn, 9));
        }
        invariants::check(&k).unwrap();
    }
}

#[test]
fn a_marked_block_moves_a_cached_pfn_only_inwards_and_only_before_the_first_isolation() {
    // §6.9: the migrate cache only moves up, the free cache only down, and neither once
    // the run has isolated something (finished_update_*).
    let w = world();
    let mut k = w.borrow_mut();
    let start = k.zones[Z].start_pfn as u64;
    let mid = start + 8 * PAGEBLOCK_NR_PAGES;
    k.zones[Z].compact_cached_migrate_pfn = mid;
    k.zones[Z].compact_cached_free_pfn = mid;
    let mut cc = CompactControl::new(Z, Some(9), MIGRATE_MOVABLE, MigrateMode::Async);
    let cached = |k: &Kernel| {
        let z = &k.zones[Z];
        (z.compact_cached_migrate_pfn, z.compact_cached_free_pfn)
    };
    let (below, above) = (mid - PAGEBLOCK_NR_PAGES, mid + PAGEBLOCK_NR_PAGES);
    update_pageblock_skip(&mut k, &cc, below, true);
    update_pageblock_skip(&mut k, &cc, above, false);
    assert_eq!(cached(&k), (mid, mid), "outwards: no move");
    cc.finished_update_migrate = true;
    cc.finished_update_free = true;
    update_pageblock_skip(&mut k, &cc, above, true);
    update_pageblock_skip(&mut k, &cc, below, false);
    assert_eq!(cached(&k), (mid, mid), "after an isolation: no move");
    assert!(k.zones[Z].pageblock_skip(above as Pfn) && k.zones[Z].pageblock_skip(below as Pfn));
    cc.finished_update_migrate = false;
    cc.finished_update_free = false;
    update_pageblock_skip(&mut k, &cc, above, true);
    update_pageblock_skip(&mut k, &cc, below, false);
    assert_eq!(cached(&k), (above, below));
}

#[test]
fn runs_start_at_the_cached_pfns_which_a_direct_run_after_the_longest_deferral_resets() {
    // §6.4/§6.9 (3.7): both scanners start at the zone's cached pfns, put back at the
    // zone's ends when outside it; a direct run that follows the longest deferral clears
    // the skip bits (and the cache) but starts where the cache said; kswapd's does not.
    let w = world();
    let mut k = w.borrow_mut();
    let (start, end) = (k.zones[Z].start_pfn as u64, k.zones[Z].end_pfn as u64);
    let (m, f) = (start + 4 * PAGEBLOCK_NR_PAGES, end - 4 * PAGEBLOCK_NR_PAGES);
    let run = |k: &mut Kernel, kswapd: bool| {
        let mut cc = CompactControl::new(Z, Some(9), MIGRATE_MOVABLE, MigrateMode::Async);
        cc.kswapd = kswapd;
        start_scanners(k, &mut cc);
        (cc.migrate_pfn, cc.free_pfn)
    };
    k.zones[Z].compact_cached_migrate_pfn = m;
    k.zones[Z].compact_cached_free_pfn = f;
    assert_eq!(run(&mut k, false), (m, f));
    k.zones[Z].compact_cached_migrate_pfn = end + 1;
    k.zones[Z].compact_cached_free_pfn = start - 1;
    assert_eq!(run(&mut k, false), (start, start_free_pfn(&k.zones[Z])));
    assert_eq!(
        (
            k.zones[Z].compact_cached_migrate_pfn,
            k.zones[Z].compact_cached_free_pfn
        ),
        (start, start_free_pfn(&k.zones[Z])),
        "and cached"
    );
    // Restarting after 64 deferred calls at order 9.
    let z = &mut k.zones[Z];
    for _ in 0..COMPACT_MAX_DEFER_SHIFT {
        defer_compaction(z, 9);
    }
    z.compact_considered = 64;
    z.compact_cached_migrate_pfn = m;
    z.compact_cached_free_pfn = f;
    z.set_pageblock_skip(m as Pfn);
    assert_eq!(run(&mut k, true), (m, f));
    assert!(
        k.zones[Z].pageblock_skip(m as Pfn),
        "kswapd leaves the bits"
    );
    assert_eq!(run(&mut k, false), (m, f), "it starts where the cache said");
    let z = &k.zones[Z];
    assert!(!z.pageblock_skip(m as Pfn));
    assert_eq!(z.compact_cached_migrate_pfn, start);
    // Without skip bits: the zone's start and end.
    k.sw.set(Switch::CompactionSkipBits, false);
    assert_eq!(run(&mut k, false), (start, start_free_pfn(&k.zones[Z])));
}

#[test]
fn a_step_costs_the_frames_it_scanned_and_the_pages_it_copied() {
    // The module's cost model (calibration.rs): COMPACT_SCAN_PFN_NS per frame either
    // scanner looked at, MIGRATE_PAGE_NS per page moved.
    let w = world();
    let mut k = w.borrow_mut();
    let block = checkerboard_block(&mut k);
    let mut cc = migrate_scan_from(&k, block, MigrateMode::SyncLight);
    let Step::Cpu(ns) = compact_step(&mut k, &mut cc) else {
        panic!("a step with targets to move into");
    };
    let s = cc.stats;
    assert_eq!(s.migrated, COMPACT_CLUSTER_MAX as u64);
    assert!(s.migrate_scanned > 0 && s.free_scanned > 0);
    assert_eq!(
        ns,
        (s.migrate_scanned + s.free_scanned) * crate::calibration::COMPACT_SCAN_PFN_NS
            + s.migrated * crate::calibration::MIGRATE_PAGE_NS
    );
    release_freepages(&mut k, &mut cc);
    invariants::check(&k).unwrap();
}

/// The kernel's compaction runs until `cond_resched`: on a machine whose CPUs are taken, it
/// waits for one once a quantum of its work, not once a step (a pageblock scanned, a batch
/// moved). Its time is its CPU time plus at most a timeslice of waiting per quantum.
#[test]
fn compaction_waits_for_a_cpu_once_a_quantum_not_once_a_step() {
    use crate::calibration::CPU_QUANTUM_NS;
    use crate::engine::SEC;
    let w = world();
    checkerboard(&mut w.borrow_mut(), 5000);
    // As many CPU hogs as CPUs: compaction always waits behind one.
    let cpus = w.borrow().sched.cpus();
    spawn_cpu_hogs(&w, cpus, 10 * SEC);
    let took = std::rc::Rc::new(std::cell::Cell::new((0, 0)));
    run_task(&w, 20 * SEC, {
        let (w, took) = (w.clone(), took.clone());
        async move {
            let t0 = w.borrow().sched.now();
            compact_memory(&w).await;
            let k = w.borrow();
            let (_, sys) = k.sched.task_times(k.sched.current());
            took.set((k.sched.now() - t0, sys));
        }
    });
    let k = w.borrow();
    let (took, sys) = took.get();
    let moved = k.events.get(VmEvent::pgmigrate_success);
    assert!(moved >= 1000);
    assert!(
        sys >= moved * crate::calibration::MIGRATE_PAGE_NS,
        "every page moved was charged: {sys} ns for {moved}"
    );
    let quanta = sys / CPU_QUANTUM_NS + 1 + crate::mm::mmzone::MAX_NR_ZONES as u64;
    let bound = sys + quanta * k.sched.timeslice();
    assert!(
        took <= bound,
        "compaction of {sys} ns of CPU took {took} ns (at most {bound})"
    );
}

/// The step that ends a run for want of pages to move into (4bf2bba3) is charged too.
#[test]
fn the_step_that_ends_a_run_out_of_targets_is_charged() {
    let w = world();
    {
        let mut k = w.borrow_mut();
        let block = checkerboard_block(&mut k);
        assert!(k.sw.on(Switch::CompactionAbortOnEnomem) && k.sw.on(Switch::CompactionSkipBits));
        // Both scanners start at the cached pfns: the free scanner may not go below the
        // block after the migrate scanner's, so the first batch has nothing to move into.
        let z = &mut k.zones[Z];
        z.compact_cached_migrate_pfn = block;
        z.compact_cached_free_pfn = block + PAGEBLOCK_NR_PAGES;
    }
    let seen = std::rc::Rc::new(std::cell::Cell::new(None));
    run_task(&w, crate::engine::SEC, {
        let (w, seen) = (w.clone(), seen.clone());
        async move {
            let mut cc = CompactControl::new(Z, None, MIGRATE_MOVABLE, MigrateMode::SyncLight);
            let r = compact_zone(&w, &mut cc).await;
            let k = w.borrow();
            let (_, sys) = k.sched.task_times(k.sched.current());
            seen.set(Some((r, cc.stats.batches, sys, cc.owed)));
        }
    });
    let (r, batches, sys, owed) = seen.get().expect("the run ended");
    assert_eq!(
        (r, batches),
        (CompactResult::Partial, 1),
        "one batch, then the end"
    );
    assert!(
        sys >= COMPACT_SCAN_PFN_NS,
        "its scanning was charged: {sys} ns"
    );
    assert_eq!(owed, 0, "nothing left owed");
}

/// A charge the task ran without waiting adds to the slice it has used; one that waited for
/// a CPU starts a new slice (`cc.slice`, which c67fe375's back-out reads).
#[test]
fn a_charge_that_waited_for_a_cpu_starts_a_new_slice() {
    use crate::engine::SEC;
    let w = world();
    let seen = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    run_task(&w, 20 * SEC, {
        let (w, seen) = (w.clone(), seen.clone());
        async move {
            let mut cc = CompactControl::new(Z, None, MIGRATE_MOVABLE, MigrateMode::SyncLight);
            for ns in [500, 300] {
                cc.owed = ns;
                charge_compaction(&w, &mut cc).await;
                seen.borrow_mut().push((cc.slice, cc.owed));
            }
            // Every CPU taken by a hog: the next charge waits.
            let cpus = w.borrow().sched.cpus();
            spawn_cpu_hogs(&w, cpus, SEC);
            crate::engine::sleep(&w, 1).await;
            cc.owed = 300;
            charge_compaction(&w, &mut cc).await;
            seen.borrow_mut().push((cc.slice, cc.owed));
        }
    });
    assert_eq!(*seen.borrow(), [(500, 0), (800, 0), (0, 0)]);
}
