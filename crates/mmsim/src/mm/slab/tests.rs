//! Unit tests of the slab caches, the dentry and inode caches and their shrinkers against
//! `kernel-reclaim.md` §6 (shrink_slab, prune_super, prune_dcache_sb, prune_icache_sb and
//! inode steals) and §7 (`slabs_scanned`, `kswapd_inodesteal`, `pginodesteal`). Expected
//! values are computed here from the specification's formulas.

use super::*;
use crate::engine::SEC;
use crate::mm::dcache::{self, DCACHE_LRU, DCACHE_REFERENCED};
use crate::mm::inode::{self, I_DIRTY_PAGES, I_LRU, I_REFERENCED};
use crate::mm::page::{
    PG_ACTIVE, PG_DIRTY, PG_LOCKED, PG_LRU, PG_RECLAIM, PG_UPTODATE, PG_WRITEBACK,
};
use crate::mm::super_block::{self, PruneCx};
use crate::mm::{filemap, invariants, namei};
use crate::sim::{add_test_disk, run_task};

/// A 256 MiB machine under 3.9 whose root filesystem holds `files` cached system files.
fn machine(files: u64) -> World {
    let mut s = crate::sim::scenario_for_test(256, 0);
    s.slab.files = files;
    let kernel = crate::presets::resolve("3.9", &[]).expect("3.9");
    crate::sim::boot(&s, &kernel, 1).expect("boots")
}

/// A kswapd (or direct reclaim) pruning context with GFP_KERNEL.
fn cx(kswapd: bool) -> PruneCx {
    PruneCx {
        gfp: Gfp::KERNEL,
        kswapd,
        cpu: 0,
        reap: 0,
    }
}

/// What prune_super answers for a count (§6): unused dentries and inodes, plus one, in whole
/// hundreds, times vfs_cache_pressure percent.
fn sb_count(k: &Kernel, sb: usize) -> u64 {
    let s = &k.super_blocks[sb];
    (s.dentry_lru.len + s.inode_lru.len + 1) / 100 * k.vm.vfs_cache_pressure as u64
}

/// §6's scan budget of one shrinker: the new delta and the total after both clamps.
fn budget(carry: u64, nr_scanned: u64, lru_pages: u64, objs: u64) -> (u64, u64) {
    let delta = (4 * nr_scanned / DEFAULT_SEEKS) * objs / (lru_pages + 1);
    let mut total = carry + delta;
    if delta < objs / 4 {
        total = total.min(objs / 2);
    }
    (delta, total.min(2 * objs))
}

/// A new superblock holding `n` cached files, as boot leaves them.
fn sb_with(k: &mut Kernel, n: u64) -> usize {
    let sb = super_block::mount(k, "test");
    super_block::populate(k, sb, n);
    sb as usize
}

/// The dentries of superblock `sb`'s LRU, head to tail.
fn dentry_lru(k: &Kernel, sb: usize) -> Vec<u32> {
    k.super_blocks[sb]
        .dentry_lru
        .iter(&k.dcache.links)
        .collect()
}

/// The inodes of superblock `sb`'s LRU, head to tail.
fn inode_lru(k: &Kernel, sb: usize) -> Vec<u32> {
    k.super_blocks[sb].inode_lru.iter(&k.icache.links).collect()
}

/// A file of device 0 named `name`, opened (its dentry and inode in memory), with `pages`
/// clean uptodate pages cached, then closed: its dentry unused on the LRU. Returns (file,
/// dentry, inode, pages).
fn cached_file(k: &mut Kernel, name: &str, pages: u64) -> (usize, u32, u32, Vec<Pfn>) {
    let sb = inode::sb_of(k, 0);
    let ino = inode::new_file(k, name, 0);
    let d = dcache::d_alloc_boot(k, sb, Some(name));
    let i = inode::iget_boot(k, sb, ino as u32);
    dcache::d_instantiate(k, d, i);
    let pfns = crate::mm::vmscan::testing::cache_clean_pages(k, ino, pages);
    dcache::dput(k, d);
    (ino, d, i, pfns)
}

/// Take the `n` unused dentries of superblock `sb` and then their inodes through their
/// LRUs' first passes: the dentries rotate, then die, killed in the reverse of their LRU
/// order (the oldest dentry's inode arrives last, at the head); the inodes arrive referenced
/// and rotate once round, keeping their order. All `n` inodes end unused and unmarked.
fn unused_inodes(k: &mut Kernel, sb: usize, n: u64) {
    let mut c = cx(true);
    dcache::prune_dcache_sb(k, sb, 0, &mut c);
    dcache::prune_dcache_sb(k, sb, 0, &mut c);
    inode::prune_icache_sb(k, sb, n - 1, &mut c);
}

/// The free pages of every zone, on the buddy lists or a CPU's.
fn free(k: &Kernel) -> u64 {
    crate::mm::page_alloc::free_or_on_cpu_lists(k)
}

/// §6: each shrinker scans `(4 * nr_scanned / seeks) * objs / (lru_pages + 1)` objects more
/// than it carried, in batches of 1024 (each counted in `slabs_scanned`, §7), and keeps the
/// remainder for its next call; with no pages scanned it counts 32.
#[test]
fn shrink_slab_scans_in_proportion_to_lru_scanning_and_defers_the_remainder() {
    let w = machine(20_000);
    let mut k = w.borrow_mut();
    let objs = sb_count(&k, 0);
    assert_eq!(objs, 20_000, "20,000 unused dentries, no unused inode yet");
    let (delta, total) = budget(0, 100, 1000, objs);
    assert_eq!((delta, total), (3996, 3996));
    let r = shrink_slab(&mut k, Gfp::KERNEL, true, 100, 1000);
    let batches = total / SB_SHRINK_BATCH;
    assert_eq!(batches, 3);
    assert_eq!(
        k.events.get(VmEvent::slabs_scanned),
        batches * SB_SHRINK_BATCH
    );
    let carry = total - batches * SB_SHRINK_BATCH;
    assert_eq!(k.super_blocks[0].nr_deferred, carry);
    assert!(r.cpu > 0);
    // nr_scanned 0 counts as SWAP_CLUSTER_MAX (32); the carry joins the new delta.
    let objs = sb_count(&k, 0);
    let (_, total) = budget(carry, 32, 1000, objs);
    shrink_slab(&mut k, Gfp::KERNEL, true, 0, 1000);
    let b2 = total / SB_SHRINK_BATCH;
    assert_eq!(
        k.events.get(VmEvent::slabs_scanned),
        (batches + b2) * SB_SHRINK_BATCH
    );
    assert_eq!(k.super_blocks[0].nr_deferred, total - b2 * SB_SHRINK_BATCH);
    invariants::check(&k).expect("invariants");
}

/// §6's clamps, on each side of `delta < objs / 4`: a small delta lets a large carry scan
/// at most half the cache; a delta of a quarter or more lets it scan up to twice the cache.
#[test]
fn shrink_slab_clamps_a_large_carry_to_half_the_cache_unless_delta_is_a_quarter() {
    // lru_pages + 1 = 8000 and 20,000 objects: delta = 2 * nr_scanned * 20000 / 8000.
    for (nr_scanned, delta, total) in [(999u64, 4995u64, 10_000u64), (1000, 5000, 40_000)] {
        let w = machine(20_000);
        let mut k = w.borrow_mut();
        k.super_blocks[0].nr_deferred = 50_000;
        let objs = sb_count(&k, 0);
        assert_eq!(budget(50_000, nr_scanned, 7999, objs), (delta, total));
        shrink_slab(&mut k, Gfp::KERNEL, true, nr_scanned, 7999);
        let scanned = total / SB_SHRINK_BATCH * SB_SHRINK_BATCH;
        assert_eq!(
            k.events.get(VmEvent::slabs_scanned),
            scanned,
            "delta {delta}"
        );
        assert_eq!(
            k.super_blocks[0].nr_deferred,
            total - scanned,
            "delta {delta}"
        );
    }
}

/// §6: a shrinker answering a count of 0 is skipped: nothing scanned, nothing deferred. The
/// superblock shrinker's count is in whole hundreds, so a filesystem with fewer than 99
/// unused objects is never shrunk.
#[test]
fn a_superblock_with_under_a_hundred_unused_objects_is_never_shrunk() {
    let w = machine(0);
    let mut k = w.borrow_mut();
    let sb = sb_with(&mut k, 98);
    assert_eq!(sb_count(&k, sb), 0, "(98 + 0 + 1) / 100 = 0");
    shrink_slab(&mut k, Gfp::KERNEL, true, 1_000_000, 1);
    assert_eq!(k.events.get(VmEvent::slabs_scanned), 0);
    assert_eq!(k.super_blocks[sb].nr_deferred, 0);
    assert_eq!(k.super_blocks[sb].dentry_lru.len, 98);
    // One more makes a hundred, and it is scanned.
    super_block::populate(&mut k, sb as u32, 1);
    assert_eq!(sb_count(&k, sb), 100);
    shrink_slab(&mut k, Gfp::KERNEL, true, 1_000_000, 1);
    assert_eq!(k.events.get(VmEvent::slabs_scanned), 0, "200 < one batch");
    assert_eq!(k.super_blocks[sb].nr_deferred, 200, "2 x 100, deferred");
}

/// §6: every superblock is a shrinker of its own, with its own count and deferred work.
#[test]
fn each_superblock_shrinker_keeps_its_own_deferred_count() {
    let w = machine(20_000);
    let mut k = w.borrow_mut();
    let sb = sb_with(&mut k, 5_000);
    let (o0, o1) = (sb_count(&k, 0), sb_count(&k, sb));
    assert_eq!((o0, o1), (20_000, 5_000));
    let (_, t0) = budget(0, 300, 5000, o0);
    let (_, t1) = budget(0, 300, 5000, o1);
    shrink_slab(&mut k, Gfp::KERNEL, true, 300, 5000);
    let b = SB_SHRINK_BATCH;
    assert_eq!(k.super_blocks[0].nr_deferred, t0 % b);
    assert_eq!(k.super_blocks[sb].nr_deferred, t1 % b);
    assert_eq!(k.events.get(VmEvent::slabs_scanned), (t0 / b + t1 / b) * b);
    assert!(t0 / b > 0 && t1 / b == 0, "t0 {t0} t1 {t1}");
}

/// §6: `prune_super` counts unused dentries and inodes plus one, in whole hundreds, scaled by
/// vfs_cache_pressure; it splits a scan between them in proportion (dentries first), answers
/// what is left without the plus one, and refuses to scan without __GFP_FS.
#[test]
fn prune_super_counts_splits_and_refuses_without_gfp_fs() {
    let w = machine(0);
    let mut k = w.borrow_mut();
    let sb = sb_with(&mut k, 400);
    let mut c = cx(true);
    // 400 referenced dentries: the first pass only clears the marks; then 100 die, sending
    // 100 referenced inodes to the inode LRU; a pass over those clears theirs.
    dcache::prune_dcache_sb(&mut k, sb, 1, &mut c);
    dcache::prune_dcache_sb(&mut k, sb, 100, &mut c);
    inode::prune_icache_sb(&mut k, sb, 99, &mut c);
    let (d, i) = (300u64, 100u64);
    assert_eq!(
        (
            k.super_blocks[sb].dentry_lru.len,
            k.super_blocks[sb].inode_lru.len
        ),
        (d, i)
    );
    k.vm.vfs_cache_pressure = 50;
    assert_eq!(
        super_block::prune_super(&mut k, sb, 0, &mut c),
        ((d + i + 1) / 100 * 50) as i64
    );
    let mut nofs = cx(true);
    nofs.gfp = Gfp::NOFS;
    assert_eq!(super_block::prune_super(&mut k, sb, 200, &mut nofs), -1);
    assert_eq!(k.super_blocks[sb].dentry_lru.len, d, "nothing pruned");
    // 200 split: dentries 200 * 300 / 401, inodes 200 * 100 / 401 (+1 looked at).
    let (pd, pi) = (200 * d / (d + i + 1), 200 * i / (d + i + 1));
    assert_eq!((pd, pi), (149, 49));
    let left = super_block::prune_super(&mut k, sb, 200, &mut c);
    let s = &k.super_blocks[sb];
    // The dentries killed send their inodes to the LRU; pi + 1 old inodes are freed.
    assert_eq!(s.dentry_lru.len, d - pd);
    assert_eq!(s.inode_lru.len, i - (pi + 1) + pd);
    assert_eq!(
        left,
        ((s.dentry_lru.len + s.inode_lru.len) / 100 * 50) as i64
    );
    invariants::check(&k).expect("invariants");
}

/// §6 (`prune_dcache_sb`): referenced dentries lose the mark and go back to the head without
/// counting; unreferenced ones are taken until `count` are; a taken dentry in use leaves the
/// LRU, the others die and drop their inodes onto the inode LRU, referenced. Each dentry
/// looked at costs scan time.
#[test]
fn prune_dcache_sb_rotates_referenced_dentries_and_kills_the_rest() {
    let w = machine(0);
    let mut k = w.borrow_mut();
    let sb = sb_with(&mut k, 10);
    let before = dentry_lru(&k, sb);
    assert!(before
        .iter()
        .all(|&d| k.dcache.dentries[d as usize].flags == DCACHE_REFERENCED | DCACHE_LRU));
    let mut c = cx(true);
    dcache::prune_dcache_sb(&mut k, sb, 3, &mut c);
    // All ten looked at, none taken: they are back at the head in their order, unmarked.
    assert_eq!(c.cpu, 10 * crate::calibration::SLAB_OBJECT_SCAN_NS);
    assert_eq!(dentry_lru(&k, sb), before);
    assert!(before
        .iter()
        .all(|&d| k.dcache.dentries[d as usize].flags == DCACHE_LRU));
    // One is taken again (lazy LRU: it stays there) and one is used and released (marked).
    let (tail, next) = (before[9], before[8]);
    dcache::dget(&mut k, tail);
    dcache::dget(&mut k, before[5]);
    dcache::dput(&mut k, before[5]);
    let objects = k.slab.cache(CacheId::Dentry).active_objs;
    let mut c = cx(true);
    dcache::prune_dcache_sb(&mut k, sb, 3, &mut c);
    // Taken: the three at the tail; the one in use leaves the LRU alive.
    assert_eq!(c.cpu, 3 * crate::calibration::SLAB_OBJECT_SCAN_NS);
    assert_eq!(k.dcache.dentries[tail as usize].flags & DCACHE_LRU, 0);
    assert!(k.dcache.dentries[tail as usize].live());
    assert_eq!(k.slab.cache(CacheId::Dentry).active_objs, objects - 2);
    assert_eq!(k.super_blocks[sb].dentry_lru.len, 7);
    // The inodes of the two killed dentries are unused now: on the LRU, referenced.
    let inodes = inode_lru(&k, sb);
    assert_eq!(inodes.len(), 2);
    for i in inodes {
        let vi = k.icache.inodes[i as usize];
        assert_eq!(
            (vi.i_count, vi.state),
            (0, I_REFERENCED | I_LRU),
            "inode {i}"
        );
    }
    assert!(!k.dcache.dentries[next as usize].live());
    // dput of the dentry in use puts it back at the head, referenced.
    dcache::dput(&mut k, tail);
    assert_eq!(dentry_lru(&k, sb)[0], tail);
    // Count 0 takes every unreferenced dentry (the kernel decrements before it tests).
    let mut c = cx(true);
    dcache::prune_dcache_sb(&mut k, sb, 0, &mut c);
    assert_eq!(
        dentry_lru(&k, sb),
        vec![tail, before[5]],
        "only the referenced ones are left, rotated in the order they were seen"
    );
    assert_eq!(k.super_blocks[sb].inode_lru.len, 8);
    invariants::check(&k).expect("invariants");
}

/// §6 (`prune_icache_sb`, 3.9): `nr_to_scan + 1` inodes looked at from the tail; referenced
/// ones rotate, those in use or dirty leave the LRU, and the rest are freed with their slab
/// pages once a page empties.
#[test]
fn prune_icache_sb_rotates_referenced_inodes_drops_busy_ones_and_frees_the_rest() {
    let w = machine(0);
    add_test_disk(&w, "sda", "ext4");
    let mut k = w.borrow_mut();
    let sb = inode::sb_of(&k, 0) as usize;
    // Three files without pages; their inodes reach the LRU referenced.
    let files: Vec<_> = ["a", "b", "c"]
        .iter()
        .map(|n| cached_file(&mut k, n, 0))
        .collect();
    let mut c = cx(true);
    dcache::prune_dcache_sb(&mut k, sb, 0, &mut c);
    dcache::prune_dcache_sb(&mut k, sb, 0, &mut c);
    assert_eq!(k.super_blocks[sb].inode_lru.len, 3);
    // Killed last first, c, b, a joined the head in turn: a heads, c is the tail.
    let [ia, ib, ic] = [files[0].2, files[1].2, files[2].2];
    assert_eq!(inode_lru(&k, sb), vec![ia, ib, ic]);
    // nr_to_scan 1 looks at two: c then b, referenced, rotated to the head.
    let mut c = cx(true);
    inode::prune_icache_sb(&mut k, sb, 1, &mut c);
    assert_eq!(c.cpu, 2 * crate::calibration::SLAB_OBJECT_SCAN_NS);
    assert_eq!(inode_lru(&k, sb), vec![ib, ic, ia]);
    let marked = |k: &Kernel, i: u32| k.icache.inodes[i as usize].state & I_REFERENCED != 0;
    assert!(marked(&k, ia) && !marked(&k, ib) && !marked(&k, ic));
    // a is in use again (the LRU is lazy: it stays on it), c is dirtied: looking at three,
    // both leave the LRU and b, unmarked and clean, is freed.
    inode::ihold(&mut k, ia);
    let fc = files[2].0;
    k.inodes[fc].state |= I_DIRTY_PAGES;
    let inodes = k.icache.nr_inodes;
    inode::prune_icache_sb(&mut k, sb, 2, &mut c);
    assert!(inode_lru(&k, sb).is_empty());
    assert_eq!(k.icache.nr_inodes, inodes - 1);
    assert_eq!(k.inodes[files[1].0].vfs, NIL, "b's file left memory");
    assert!(!k.icache.inodes[ib as usize].live());
    // a's last reference: back on the LRU, marked; one pass rotates it, the next frees it.
    inode::iput(&mut k, ia);
    assert_eq!(inode_lru(&k, sb), vec![ia]);
    assert!(marked(&k, ia));
    inode::prune_icache_sb(&mut k, sb, 1, &mut c);
    assert_eq!(k.icache.nr_inodes, inodes - 2);
    // c joins the LRU when its writeback completes clean (inode_sync_complete).
    inode::inode_sync_complete(&mut k, fc);
    assert!(inode_lru(&k, sb).is_empty(), "still dirty");
    k.inodes[fc].state = 0;
    inode::inode_sync_complete(&mut k, fc);
    assert_eq!(inode_lru(&k, sb), vec![ic]);
    invariants::check(&k).expect("invariants");
}

/// §6: an unused inode that still has page cache has its clean pages dropped first
/// (`invalidate_mapping_pages`); kswapd counts them in `kswapd_inodesteal`, others in
/// `pginodesteal` (§7), and they join `reclaimed_slab`. The reference taken for that marks
/// the inode referenced again; alone on the LRU it heads it and is freed at once.
#[test]
fn an_unused_inode_with_page_cache_has_its_pages_stolen_then_is_freed() {
    for kswapd in [true, false] {
        let w = machine(0);
        add_test_disk(&w, "sda", "ext4");
        let mut k = w.borrow_mut();
        let sb = inode::sb_of(&k, 0) as usize;
        let (ino, _, i, pfns) = cached_file(&mut k, "f", 8);
        unused_inodes(&mut k, sb, 1);
        assert_eq!(inode_lru(&k, sb), vec![i]);
        let (free0, inodes0) = (free(&k), k.icache.nr_inodes);
        let mut c = cx(kswapd);
        inode::prune_icache_sb(&mut k, sb, 0, &mut c);
        assert_eq!(c.reap, 8);
        let (mine, other) = if kswapd {
            (VmEvent::kswapd_inodesteal, VmEvent::pginodesteal)
        } else {
            (VmEvent::pginodesteal, VmEvent::kswapd_inodesteal)
        };
        assert_eq!((k.events.get(mine), k.events.get(other)), (8, 0));
        assert_eq!(k.inodes[ino].nrpages, 0);
        assert_eq!(k.inodes[ino].vfs, NIL, "freed in the same pass");
        assert_eq!(k.icache.nr_inodes, inodes0 - 1);
        assert!(pfns.iter().all(|&p| !k.pages.test(p, PG_LRU)));
        assert!(
            free(&k) >= free0 + 8,
            "the pages went back to the buddy allocator"
        );
        // 1 look at the inode, 8 at its pages.
        assert_eq!(c.cpu, 9 * crate::calibration::SLAB_OBJECT_SCAN_NS);
        invariants::check(&k).expect("invariants");
    }
}

/// §6 (3.9's `prune_icache_sb`): after the steal, the inode is freed in the same pass only
/// if it heads the LRU (the check compares with the list's first entry); otherwise it stays,
/// marked referenced again, for a pass that rotates it and one that frees it. Pages that are
/// dirty, under writeback, mapped or locked are not dropped (the locked one is not even
/// looked at again), so the inode survives while they last.
#[test]
fn a_stolen_inode_behind_others_waits_and_busy_pages_are_kept() {
    let w = machine(0);
    add_test_disk(&w, "sda", "ext4");
    let mut k = w.borrow_mut();
    let sb = inode::sb_of(&k, 0) as usize;
    let (_, _, other, _) = cached_file(&mut k, "g", 0);
    let (ino, _, i, pfns) = cached_file(&mut k, "f", 4);
    // f's dentry was the newer, so its inode is the inode LRU's tail, behind g's.
    unused_inodes(&mut k, sb, 2);
    assert_eq!(inode_lru(&k, sb), vec![other, i]);
    // A dirty, a writeback and a locked page; one clean.
    k.pages.set(pfns[0], PG_DIRTY);
    crate::mm::inode::tag_page_dirty(&mut k, pfns[0]);
    k.pages.set(pfns[1], PG_WRITEBACK);
    k.pages.set(pfns[2], PG_LOCKED);
    let zi = k.page_zone(pfns[0]);
    k.zones[zi].mod_stat(ZoneStat::nr_dirty, 1);
    let zw = k.page_zone(pfns[1]);
    k.zones[zw].mod_stat(ZoneStat::nr_writeback, 1);
    k.bdis[0].reclaimable += 1;
    k.bdis[0].writeback += 1;
    let mut c = cx(true);
    inode::prune_icache_sb(&mut k, sb, 0, &mut c);
    assert_eq!(
        k.events.get(VmEvent::kswapd_inodesteal),
        1,
        "only the clean page"
    );
    assert_eq!(k.inodes[ino].nrpages, 3);
    assert_eq!(
        k.icache.inodes[i as usize].state,
        I_REFERENCED | I_LRU,
        "kept at the tail, marked"
    );
    assert_eq!(inode_lru(&k, sb), vec![other, i]);
    // deactivate_page: the dirty and writeback pages get PG_reclaim; the locked one is
    // passed over.
    for (p, reclaim) in [(pfns[0], true), (pfns[1], true), (pfns[2], false)] {
        assert_eq!(k.pages.test(p, PG_RECLAIM), reclaim, "pfn {p}");
    }
    // The next look rotates it (marked), the one after frees g's inode; then f's heads the
    // LRU, alone, but steals nothing more and cannot go: its pages are busy.
    inode::prune_icache_sb(&mut k, sb, 0, &mut c);
    assert_eq!(inode_lru(&k, sb), vec![i, other]);
    inode::prune_icache_sb(&mut k, sb, 0, &mut c);
    assert_eq!(inode_lru(&k, sb), vec![i], "g's inode was freed");
    inode::prune_icache_sb(&mut k, sb, 0, &mut c);
    assert_eq!(k.events.get(VmEvent::kswapd_inodesteal), 1);
    assert!(k.icache.inodes[i as usize].live(), "its pages are busy");
    assert_eq!(k.inodes[ino].nrpages, 3);
    invariants::check(&k).expect("invariants");
}

/// `invalidate_mapping_pages` keeps a mapped page and deactivates a clean active one it
/// cannot drop to the inactive tail (`lru_deactivate_fn`: `pgdeactivate`, `pgrotated`).
#[test]
fn deactivate_page_sends_a_clean_page_to_the_inactive_tail_and_a_dirty_one_to_its_head() {
    use crate::mm::page::{Lru, PG_REFERENCED};
    use crate::mm::swap::{add_page_to_lru_list, deactivate_page, del_page_from_lru_list};
    let w = machine(0);
    add_test_disk(&w, "sda", "ext4");
    let mut k = w.borrow_mut();
    let (_, _, _, pfns) = cached_file(&mut k, "f", 3);
    for &p in &pfns {
        del_page_from_lru_list(&mut k, p);
        k.pages.set(p, PG_ACTIVE | PG_REFERENCED);
        add_page_to_lru_list(&mut k, p, Lru::ActiveFile);
    }
    k.pages.set(pfns[1], PG_DIRTY);
    crate::mm::inode::tag_page_dirty(&mut k, pfns[1]);
    let zi = k.page_zone(pfns[1]);
    k.zones[zi].mod_stat(ZoneStat::nr_dirty, 1);
    k.bdis[0].reclaimable += 1;
    deactivate_page(&mut k, pfns[0]);
    deactivate_page(&mut k, pfns[1]);
    let tail = |k: &Kernel, p: Pfn| {
        let z = &k.zones[k.page_zone(p)];
        z.lruvec.lists[Lru::InactiveFile as usize].tail == p
    };
    assert!(tail(&k, pfns[0]));
    assert!(!k
        .pages
        .test(pfns[0], PG_ACTIVE | PG_REFERENCED | PG_RECLAIM));
    assert!(k.pages.test(pfns[1], PG_RECLAIM) && !tail(&k, pfns[1]));
    assert_eq!(k.pages.lru(pfns[1]), Lru::InactiveFile);
    assert_eq!(k.events.get(VmEvent::pgdeactivate), 2);
    assert_eq!(k.events.get(VmEvent::pgrotated), 1);
    invariants::check(&k).expect("invariants");
}

/// `shrink_slab`'s `reclaimed_slab` is the slab pages its shrinkers freed plus the pages of
/// the inodes they stole from; its return value is how far the counts fell.
#[test]
fn shrink_slab_reports_the_slab_pages_and_stolen_pages_it_freed() {
    let w = machine(0);
    add_test_disk(&w, "sda", "ext4");
    let mut k = w.borrow_mut();
    let sb = inode::sb_of(&k, 0) as usize;
    super_block::populate(&mut k, sb as u32, 2_999);
    let (ino, ..) = cached_file(&mut k, "f", 16);
    // Every dentry pruned, every inode's mark cleared: f's inode is the LRU's tail.
    unused_inodes(&mut k, sb, 3_000);
    assert_eq!(k.super_blocks[sb].inode_lru.tail, k.inodes[ino].vfs);
    let (free0, count0) = (free(&k), sb_count(&k, sb));
    let inode_pages0 = k.slab.cache(CacheId::Inode).num_slabs;
    let r = shrink_slab(&mut k, Gfp::KERNEL, true, 1_000_000, 1000);
    assert_eq!(k.events.get(VmEvent::kswapd_inodesteal), 16);
    assert_eq!(free(&k) - free0, r.reclaimed_slab);
    let inode_pages = inode_pages0 - k.slab.cache(CacheId::Inode).num_slabs;
    assert!(inode_pages > 0);
    assert_eq!(r.reclaimed_slab, 16 + inode_pages);
    // The counts fell (by at least what is gone; the count asked before each batch has
    // prune_super's plus one, the answer after it not).
    let fell = count0 - sb_count(&k, sb);
    assert!(
        r.ret >= fell && r.ret <= fell + 100 * 5,
        "ret {} fell {fell}",
        r.ret
    );
    invariants::check(&k).expect("invariants");
}

/// The caches' pages: objects fill a page before the next is taken from the buddy
/// allocator; a page goes back only when its last object is freed (fragmentation at page
/// granularity), and the next object fills the lowest partly used page.
#[test]
fn slab_pages_come_from_the_buddy_allocator_and_go_back_when_empty() {
    let w = machine(0);
    let mut k = w.borrow_mut();
    let base_pages = k.slab.nr_pages();
    let slab0 = k.global_stat(ZoneStat::nr_slab_reclaimable);
    assert_eq!(slab0, base_pages);
    let per = k.slab.cache(CacheId::Dentry).objects_per_slab as u64;
    assert_eq!(per, 4096 / 192);
    assert_eq!(k.slab.cache(CacheId::Inode).objects_per_slab, 4);
    assert_eq!(
        k.slab.cache(CacheId::BufferHead).objects_per_slab,
        4096 / 104
    );
    let dentries0 = k.slab.cache(CacheId::Dentry).active_objs;
    let pages0 = k.slab.cache(CacheId::Dentry).num_slabs;
    let room = pages0 * per - dentries0;
    let free0 = free(&k);
    let objs: Vec<u32> = (0..room + 2 * per)
        .map(|_| {
            kmem_cache_alloc_now(&mut k, CacheId::Dentry, Gfp::KERNEL, alloc_flags::WMARK_MIN)
                .unwrap()
        })
        .collect();
    assert_eq!(k.slab.cache(CacheId::Dentry).num_slabs, pages0 + 2);
    assert_eq!(free0 - free(&k), 2);
    assert_eq!(k.global_stat(ZoneStat::nr_slab_reclaimable), slab0 + 2);
    // Free all but one object of the last page: it stays.
    let last = *objs.last().unwrap();
    let in_last: Vec<u32> = objs.iter().copied().filter(|&s| s == last).collect();
    assert_eq!(in_last.len() as u64, per);
    for &s in &in_last[1..] {
        kmem_cache_free(&mut k, CacheId::Dentry, s);
    }
    assert_eq!(k.slab.cache(CacheId::Dentry).num_slabs, pages0 + 2);
    // With room in two pages, the next object goes to the lower one.
    let first_new = objs[room as usize];
    assert!(first_new < last);
    kmem_cache_free(&mut k, CacheId::Dentry, first_new);
    let s =
        kmem_cache_alloc_now(&mut k, CacheId::Dentry, Gfp::KERNEL, alloc_flags::WMARK_MIN).unwrap();
    assert_eq!(s, first_new);
    let freed0 = k.slab.pages_freed;
    kmem_cache_free(&mut k, CacheId::Dentry, in_last[0]);
    assert_eq!(k.slab.pages_freed, freed0 + 1);
    assert_eq!(k.slab.cache(CacheId::Dentry).num_slabs, pages0 + 1);
    assert_eq!(free0 - free(&k), 1);
    assert_eq!(k.global_stat(ZoneStat::nr_slab_reclaimable), slab0 + 1);
    for &s in objs.iter().filter(|&&s| s != last) {
        kmem_cache_free(&mut k, CacheId::Dentry, s);
    }
    assert_eq!(k.slab.cache(CacheId::Dentry).active_objs, dentries0);
    assert_eq!(k.global_stat(ZoneStat::nr_slab_reclaimable), slab0);
    invariants::check(&k).expect("invariants");
}

/// Boot: `[slab] files` cached system files on the root filesystem: one dentry on its LRU,
/// marked referenced, and one pinned inode each, packed densely.
#[test]
fn boot_caches_the_system_files_dentries_and_inodes_on_the_root_filesystem() {
    let w = machine(1000);
    let k = w.borrow();
    let s = &k.super_blocks[0];
    assert_eq!((s.dentry_lru.len, s.inode_lru.len), (1000, 0));
    // Plus the root's dentry and inode.
    assert_eq!(k.dcache.nr_dentry, 1001);
    assert_eq!(k.icache.nr_inodes, 1001);
    let pages = 1001u64.div_ceil(21) + 1001u64.div_ceil(4);
    assert_eq!(k.slab.nr_pages(), pages);
    assert_eq!(k.global_stat(ZoneStat::nr_slab_reclaimable), pages);
    assert_eq!(super_block::boot_pages(&k, 1001), pages);
    for d in dentry_lru(&k, 0) {
        let de = k.dcache.dentries[d as usize];
        assert_eq!((de.d_count, de.flags), (0, DCACHE_REFERENCED | DCACHE_LRU));
        assert_eq!(k.icache.inodes[de.inode as usize].i_count, 1);
    }
}

/// Files come and go (`fs/namei.c`): opening a new file allocates its dentry and inode;
/// closing leaves the dentry unused on the LRU, marked; `rm` evicts the inode with its page
/// cache and leaves the dentry negative; a new file of that name takes that dentry.
#[test]
fn files_bring_their_dentries_and_inodes_and_unlink_leaves_a_negative_dentry() {
    let w = machine(0);
    add_test_disk(&w, "sda", "ext4");
    let w2 = w.clone();
    run_task(&w, SEC, async move {
        let w = w2;
        let (d0, i0) = {
            let k = w.borrow();
            (k.dcache.nr_dentry, k.icache.nr_inodes)
        };
        let f = namei::open(&w, 0, "x", true).await.unwrap().unwrap();
        assert!(f.created);
        {
            let k = w.borrow();
            assert_eq!((k.dcache.nr_dentry, k.icache.nr_inodes), (d0 + 1, i0 + 1));
            assert_eq!(k.dcache.dentries[f.dentry as usize].d_count, 1);
        }
        let mut task = crate::mm::page_writeback::DirtyTask::default();
        for index in 0..4 {
            filemap::write_page(&w, f.ino, index, &mut task)
                .await
                .unwrap();
        }
        namei::close(&mut w.borrow_mut(), f);
        {
            let k = w.borrow();
            let de = k.dcache.dentries[f.dentry as usize];
            assert_eq!((de.d_count, de.flags), (0, DCACHE_REFERENCED | DCACHE_LRU));
        }
        // Opened again: the same dentry and inode, nothing allocated.
        let g = namei::open(&w, 0, "x", false).await.unwrap().unwrap();
        assert_eq!((g.ino, g.dentry, g.created), (f.ino, f.dentry, false));
        namei::close(&mut w.borrow_mut(), g);
        assert!(namei::unlink(&w, 0, "x").await.unwrap());
        {
            let k = w.borrow();
            assert_eq!((k.dcache.nr_dentry, k.icache.nr_inodes), (d0 + 1, i0));
            assert!(k.inodes[f.ino].unlinked && k.inodes[f.ino].nrpages == 0);
            let de = k.dcache.dentries[f.dentry as usize];
            assert_eq!(de.inode, NIL, "negative");
            assert!(de.flags & DCACHE_LRU != 0);
            invariants::check(&k).expect("invariants after rm");
        }
        assert!(
            !namei::unlink(&w, 0, "x").await.unwrap(),
            "rm -f of no file"
        );
        assert_eq!(namei::open(&w, 0, "x", false).await.unwrap(), None);
        let h = namei::open(&w, 0, "x", true).await.unwrap().unwrap();
        assert!(h.created && h.dentry == f.dentry && h.ino != f.ino);
        let k = w.borrow();
        assert_eq!((k.dcache.nr_dentry, k.icache.nr_inodes), (d0 + 1, i0 + 1));
        invariants::check(&k).expect("invariants");
    });
}

/// A file on its device but not in memory is looked up by name: a new dentry and inode; one
/// whose dentry the shrinker pruned keeps its inode, which the new dentry takes again.
#[test]
fn opening_a_file_on_disk_brings_its_inode_back_or_reuses_the_cached_one() {
    let w = machine(0);
    add_test_disk(&w, "sda", "ext4");
    let ino = crate::workload::cat::create_file(&w, "y", 0, 1 << 20);
    assert_eq!(w.borrow().inodes[ino].vfs, NIL);
    let w2 = w.clone();
    run_task(&w, SEC, async move {
        let w = w2;
        let f = namei::open(&w, 0, "y", false).await.unwrap().unwrap();
        assert_eq!((f.ino, f.created), (ino, false));
        let i = w.borrow().inodes[ino].vfs;
        assert_ne!(i, NIL);
        namei::close(&mut w.borrow_mut(), f);
        {
            let mut k = w.borrow_mut();
            let sb = inode::sb_of(&k, 0) as usize;
            let mut c = cx(true);
            dcache::prune_dcache_sb(&mut k, sb, 0, &mut c);
            dcache::prune_dcache_sb(&mut k, sb, 0, &mut c);
            assert!(
                !k.dcache.dentries[f.dentry as usize].live()
                    || k.dcache.dentries[f.dentry as usize].inode != i
            );
            assert_eq!(inode_lru(&k, sb), vec![i]);
        }
        let g = namei::open(&w, 0, "y", false).await.unwrap().unwrap();
        let k = w.borrow();
        assert_eq!(k.inodes[ino].vfs, i, "the cached inode, taken again");
        assert_eq!(k.icache.inodes[i as usize].i_count, 1);
        assert_eq!(k.dcache.dentries[g.dentry as usize].inode, i);
        invariants::check(&k).expect("invariants");
    });
}

/// Buffer heads are slab objects of their own cache: one per page with buffers, freed with
/// the buffers (`try_to_free_buffers`, truncation), and no shrinker counts them.
#[test]
fn buffer_heads_are_slab_objects_that_go_with_their_pages_buffers() {
    use crate::fs::buffer::{self, testing};
    let w = testing::machine("3.9", crate::fs::Filesystem::Ext3);
    let mut k = w.borrow_mut();
    let bh = |k: &Kernel| k.slab.cache(CacheId::BufferHead).active_objs;
    let ino = testing::new_file(&mut k);
    let pfns: Vec<Pfn> = (0..50)
        .map(|i| testing::written_page(&mut k, ino, i))
        .collect();
    assert_eq!(bh(&k), 50);
    assert_eq!(
        k.slab.cache(CacheId::BufferHead).num_slabs,
        50u64.div_ceil(39)
    );
    for sb in 0..k.super_blocks.len() {
        let count = super_block::prune_super(&mut k, sb, 0, &mut cx(true));
        assert_eq!(count as u64, sb_count(&k, sb), "dentries and inodes only");
    }
    invariants::check(&k).expect("invariants");
    // Clean buffers are released with the page's private data.
    for &p in &pfns[..10] {
        k.pages.clear(p, crate::mm::page::PG_BH_DIRTY);
        assert!(buffer::try_to_release_page(&mut k, p));
    }
    assert_eq!(bh(&k), 40);
    drop(k);
    let w2 = w.clone();
    run_task(&w, SEC, async move {
        filemap::truncate_setsize(&w2, ino, 0).await;
    });
    let k = w.borrow();
    assert_eq!(bh(&k), 0);
    assert_eq!(
        k.slab.cache(CacheId::BufferHead).num_slabs,
        0,
        "the pages went back"
    );
    invariants::check(&k).expect("invariants");
}

/// The invariant checker names broken slab state: counts against the caches' pages and the
/// zones, objects against their pages, LRU counts, and page cache of a file not in memory.
#[test]
fn the_invariant_checker_catches_broken_slab_state() {
    type Break = fn(&mut Kernel);
    let cases: [(&str, Break); 6] = [
        ("reclaimable slab pages", |k| {
            k.zones[1].mod_stat(ZoneStat::nr_slab_reclaimable, 1)
        }),
        ("inode_cache holds", |k| {
            k.slab.caches[CacheId::Inode as usize].active_objs += 1
        }),
        ("unused dentries", |k| k.super_blocks[0].dentry_lru.len += 1),
        ("live dentries", |k| k.dcache.nr_dentry -= 1),
        ("dentries hold it", |k| {
            let i = k.dcache.dentries[k.super_blocks[0].root as usize].inode;
            k.icache.inodes[i as usize].i_count = 0;
        }),
        ("no inode in memory", |k| {
            let ino = k.inodes.len() - 1;
            let i = k.inodes[ino].vfs;
            k.inodes[ino].vfs = NIL;
            k.icache.inodes[i as usize].file = NIL;
        }),
    ];
    for (message, breakit) in cases {
        let w = machine(50);
        add_test_disk(&w, "sda", "ext4");
        let mut k = w.borrow_mut();
        cached_file(&mut k, "f", 2);
        invariants::check(&k).expect("consistent before");
        breakit(&mut k);
        let e = invariants::check(&k).unwrap_err();
        assert!(e.contains(message), "{message}: {e}");
    }
}

/// `mm_shrink_slab_start`/`_end` name each superblock's shrinker by its own address.
#[test]
fn each_superblock_shrinker_is_traced_at_its_own_address() {
    let w = machine(20_000);
    let sink = crate::mm::trace::testing::capture(&w);
    let mut k = w.borrow_mut();
    let sb = sb_with(&mut k, 5_000);
    shrink_slab(&mut k, Gfp::KERNEL, true, 300, 5000);
    drop(k);
    let lines = sink.lines();
    let start: Vec<&String> = lines
        .iter()
        .filter(|l| l.contains("mm_shrink_slab_start"))
        .collect();
    let end: Vec<&String> = lines
        .iter()
        .filter(|l| l.contains("mm_shrink_slab_end"))
        .collect();
    assert_eq!((start.len(), end.len()), (2, 2));
    assert!(start[0].contains("prune_super+0x0/0x1b0 ffff88007b0c2ec8: objects to shrink 0 gfp_flags GFP_KERNEL pgs_scanned 300 lru_pgs 5000 cache items 20000 delta 2399 total_scan 2399"), "{}", start[0]);
    assert!(
        start[1].contains(&format!(
            "ffff88007b0c{:x}: objects to shrink 0",
            0x2ec8 + 0x800 * sb
        )),
        "{}",
        start[1]
    );
    assert!(
        end[0].contains("unused scan count 0 new scan count 351 total_scan 351"),
        "{}",
        end[0]
    );
    assert!(
        end[1].contains(
            "unused scan count 0 new scan count 599 total_scan 599 last shrinker return val 0"
        ),
        "{}",
        end[1]
    );
}

/// `[slab] page_cache`: boot leaves clean, up-to-date pages of the system's files,
/// allocated as boot allocates (Normal first), the active part on the active file list in
/// files of 1 MiB (program text), the rest in files of 32 KiB; each file hangs off one of
/// the root filesystem's cached inodes, its blocks on the first disk. Pruning those
/// inodes steals the pages (§6, §7).
#[test]
fn the_page_cache_boot_left_lies_in_normal_and_goes_with_its_inodes() {
    let mut s = crate::sim::scenario_for_test(4608, 0);
    s.machine.devices = vec![crate::scenario::BlockDevice::ext4_hdd("sda")];
    s.slab.page_cache = 1 << 20;
    s.slab.page_cache_active = 256 << 10;
    let kernel = crate::presets::resolve("3.9", &[]).expect("3.9");
    let w = crate::sim::boot(&s, &kernel, 1).expect("boots");
    let mut k = w.borrow_mut();
    let lru = |k: &Kernel, stat| -> u64 { k.zones.iter().map(|z| z.stat(stat)).sum() };
    assert_eq!(lru(&k, ZoneStat::nr_file_pages), 256);
    assert_eq!(lru(&k, ZoneStat::nr_active_file), 64);
    assert_eq!(lru(&k, ZoneStat::nr_inactive_file), 192);
    let normal = &k.zones[crate::mm::mmzone::ZONE_NORMAL];
    assert_eq!(
        normal.stat(ZoneStat::nr_file_pages),
        256,
        "boot fills Normal first"
    );
    let files: Vec<usize> = (0..k.inodes.len())
        .filter(|&f| k.inodes[f].name.starts_with("boot-file"))
        .collect();
    // The active 64 pages in one text file (a quarter of BOOT_TEXT_FILE_PAGES), then 24
    // files of 8; the superblock lists them in that order.
    assert_eq!(files.len(), 25);
    let listed: Vec<usize> = k.super_blocks[0]
        .boot_files
        .iter()
        .map(|&f| f as usize)
        .collect();
    assert_eq!(listed, files);
    for (i, &f) in files.iter().enumerate() {
        let file = &k.inodes[f];
        let n = if i == 0 { 64 } else { 8 };
        assert_eq!((file.nrpages, file.bdi), (n, 0));
        let vi = &k.icache.inodes[file.vfs as usize];
        assert_eq!((vi.sb, vi.file), (0, f as u32), "a root inode holds it");
        for index in 0..n {
            let pfn = filemap::find_get_page(&k, f, index).expect("cached");
            assert!(k.pages.test(pfn, PG_UPTODATE) && !k.pages.test(pfn, PG_DIRTY));
            assert_eq!(k.pages.test(pfn, PG_ACTIVE), i == 0);
        }
    }
    invariants::check(&k).expect("invariants");
    // kswapd's shrinker passes: the dentries rotate and die, then the inodes' pages go.
    let mut c = cx(true);
    for _ in 0..4 {
        super_block::prune_super(&mut k, 0, 10_000, &mut c);
    }
    assert_eq!(k.events.get(VmEvent::kswapd_inodesteal), 256);
    assert_eq!(lru(&k, ZoneStat::nr_file_pages), 0);
    invariants::check(&k).expect("invariants");
}

/// Without a page cache from boot, the root filesystem's inodes have no files.
#[test]
fn by_default_boot_leaves_no_page_cache() {
    let w = machine(100);
    let k = w.borrow();
    assert!(k.inodes.iter().all(|f| !f.name.starts_with("boot-file")));
    assert_eq!(
        k.zones
            .iter()
            .map(|z| z.stat(ZoneStat::nr_file_pages))
            .sum::<u64>(),
        0
    );
}

/// `cache_boot_pages` gives each file `BOOT_FILE_PAGES` pages, the last one what is left;
/// each file's blocks follow the previous file's on the disk.
#[test]
fn boot_files_take_consecutive_blocks_and_the_last_holds_the_rest() {
    let w = machine(100);
    add_test_disk(&w, "sda", "ext4");
    let mut k = w.borrow_mut();
    let start = k.bdis[0].next_free_sector;
    assert_eq!(super_block::cache_boot_pages(&mut k, 0, 0, 21, 0), 21);
    assert_eq!(k.bdis[0].next_free_sector - start, 21 * 8);
    let files: Vec<(u64, Option<u64>)> = k
        .inodes
        .iter()
        .filter(|f| f.name.starts_with("boot-file"))
        .map(|f| (f.nrpages, f.sector_of(0)))
        .collect();
    assert_eq!(
        files,
        [
            (8, Some(start)),
            (8, Some(start + 64)),
            (5, Some(start + 128))
        ]
    );
    invariants::check(&k).expect("invariants");
}

/// A page cache from boot larger than the free memory down to the low watermarks is a
/// configuration error, not a smaller cache.
#[test]
fn a_boot_page_cache_that_does_not_fit_refuses_to_boot() {
    let mut s = crate::sim::scenario_for_test(256, 0);
    s.machine.devices = vec![crate::scenario::BlockDevice::ext4_hdd("sda")];
    s.slab.files = 20_000;
    s.slab.page_cache = 200 << 20;
    let kernel = crate::presets::resolve("3.9", &[]).expect("3.9");
    let Err(e) = crate::sim::boot(&s, &kernel, 1) else {
        panic!("200 MiB of page cache fit a 256 MiB machine with 20,000 files' slab");
    };
    assert!(e.to_string().contains("does not fit"), "{e}");
}

/// Built without the parser, a scenario with a boot page cache and no disk for its files
/// is refused with a message, not a panic.
#[test]
fn a_boot_page_cache_without_a_disk_refuses_to_boot() {
    let mut s = crate::sim::scenario_for_test(256, 0);
    s.slab.page_cache = 1 << 20;
    let kernel = crate::presets::resolve("3.9", &[]).expect("3.9");
    let Err(e) = crate::sim::boot(&s, &kernel, 1) else {
        panic!("booted a page cache without a disk");
    };
    assert!(e.to_string().contains("needs a [[device]]"), "{e}");
}
