//! Unit tests of `memcontrol.rs` against `kernel-memcg.md` §1-3. Expected values are
//! worked out here from the specification.

use super::*;

/// Groups as (name, parent index, limit in pages, use_hierarchy).
fn groups(spec: &[(&str, usize, Option<u64>, bool)]) -> MemCgroups {
    let cfg: Vec<GroupConfig> = spec
        .iter()
        .map(|&(name, parent, limit, hier)| GroupConfig {
            name: name.into(),
            parent,
            limit_pages: limit,
            soft_limit_pages: None,
            use_hierarchy: hier,
            swappiness: None,
        })
        .collect();
    MemCgroups::new(&cfg, 64, 16, 60)
}

/// §1.1: a charge takes every level of the hierarchy or none, and the level over its
/// limit counts the failure.
#[test]
fn a_charge_takes_every_hierarchical_level_or_none() {
    // root ← A (hierarchical, limit 10) ← B (limit 100)
    let mut cg = groups(&[("A", 0, Some(10), true), ("A/B", 1, Some(100), true)]);
    assert_eq!(cg.groups[2].res_parent, Some(1));
    assert_eq!(
        cg.groups[1].res_parent, None,
        "the root is not hierarchical"
    );
    assert_eq!(cg.res_charge(2, 6), Ok(()));
    assert_eq!((cg.groups[1].res.usage, cg.groups[2].res.usage), (6, 6));
    assert_eq!(cg.res_charge(2, 6), Err(1), "A, at 12 > 10, stops it");
    assert_eq!((cg.groups[1].res.usage, cg.groups[2].res.usage), (6, 6));
    assert_eq!((cg.groups[1].res.failcnt, cg.groups[2].res.failcnt), (1, 0));
    assert_eq!(cg.groups[2].res.max_usage, 6);
    assert_eq!(cg.groups[1].memsw.usage, 6);
}

/// §1.4: below a parent without use_hierarchy, a group's counters have no parent.
#[test]
fn a_flat_parent_does_not_take_its_childrens_charges() {
    let mut cg = groups(&[("A", 0, Some(4), false), ("A/B", 1, None, false)]);
    assert_eq!(cg.groups[2].res_parent, None);
    assert_eq!(cg.res_charge(2, 50), Ok(()));
    assert_eq!(cg.groups[1].res.usage, 0);
    // A's walk is A alone; the root's is every group, in pre-order.
    assert_eq!(cg.groups[1].walk, vec![1]);
    assert_eq!(cg.groups[0].walk, vec![0, 1, 2]);
}

/// Pre-order: a group's descendants come right after it, before its next sibling.
#[test]
fn the_walk_is_pre_order() {
    let cg = groups(&[
        ("A", 0, None, true),
        ("B", 0, None, false),
        ("A/C", 1, None, true),
    ]);
    assert_eq!(cg.groups[0].walk, vec![0, 1, 3, 2]);
    assert_eq!(cg.groups[1].walk, vec![1, 3]);
}

/// §1.1: margin and soft-limit excess.
#[test]
fn margin_and_soft_limit_excess() {
    let r = ResCounter {
        usage: 30,
        limit: 40,
        soft_limit: 0,
        ..Default::default()
    };
    assert_eq!(r.margin(), 10);
    assert_eq!(
        r.soft_limit_excess(),
        30,
        "soft limit 0: all of it is excess"
    );
    let r = ResCounter {
        usage: 50,
        limit: 40,
        ..Default::default()
    };
    assert_eq!(r.margin(), 0);
    assert_eq!(r.soft_limit_excess(), 0, "no soft limit");
}

/// A group `name` below the root, flat, with a limit of `limit` pages.
fn child(name: &str, limit: Option<u64>) -> GroupConfig {
    GroupConfig {
        name: name.into(),
        parent: 0,
        limit_pages: limit,
        soft_limit_pages: None,
        use_hierarchy: false,
        swappiness: None,
    }
}

/// The 128 MiB test machine with `swap_mib` MiB of swap and memory cgroups `groups`, as
/// boot sets them up.
fn machine_with_groups(swap_mib: u64, groups: &[GroupConfig]) -> crate::mm::World {
    let w = crate::sim::boot_for_test(128, swap_mib, "3.9");
    {
        let mut k = w.borrow_mut();
        let frames = k.pages.len();
        let slots = k.swap.max as usize;
        k.memcg = MemCgroups::new(groups, frames, slots, 60);
        for z in k.zones.iter_mut() {
            z.memcg_lruvecs = vec![Default::default(); groups.len()];
        }
    }
    w
}

/// A kernel with group "A" (limit `limit` pages) for the charge tests.
fn kernel_with_group(limit: Option<u64>) -> crate::mm::World {
    machine_with_groups(64, &[child("A", limit)])
}

/// A free page for a user mapping or the page cache.
fn user_page(k: &mut Kernel) -> Pfn {
    use crate::mm::page_alloc::{alloc_flags, get_page_from_freelist};
    get_page_from_freelist(
        k,
        crate::mm::Gfp::HIGHUSER_MOVABLE,
        0,
        alloc_flags::WMARK_MIN,
    )
    .expect("a free page")
}

/// §2.1, §2.6: a committed page counts in its group's stat and `res`, from the stock when
/// there is one; freeing it uncharges `res` and `memsw`.
#[test]
fn commit_takes_the_stock_and_the_free_uncharges() {
    use crate::mm::page_alloc::free_page;
    let w = kernel_with_group(None);
    let mut k = w.borrow_mut();
    k.memcg.res_charge(1, CHARGE_BATCH).unwrap();
    k.memcg.groups[1].stock = CHARGE_BATCH;
    let pfn = user_page(&mut k);
    commit_charge(&mut k, pfn, 1, true);
    assert_eq!(k.memcg.page_memcg(pfn), Some(1));
    assert_eq!(k.memcg.groups[1].stock, CHARGE_BATCH - 1);
    assert_eq!(
        k.memcg.groups[1].res.usage, CHARGE_BATCH,
        "the stock was charged already"
    );
    assert_eq!(
        (k.memcg.groups[1].stat.rss, k.memcg.groups[1].stat.pgpgin),
        (1, 1)
    );
    // A second commit of the same page changes nothing.
    commit_charge(&mut k, pfn, 1, true);
    assert_eq!(k.memcg.groups[1].stat.rss, 1);
    k.memcg.groups[1].stock = 0;
    k.memcg.res_uncharge(1, CHARGE_BATCH - 1, true);
    assert_eq!(k.memcg.expected_usage()[1], 1);
    free_page(&mut k, pfn);
    assert_eq!(k.memcg.page_memcg(pfn), None);
    assert_eq!(
        (k.memcg.groups[1].res.usage, k.memcg.groups[1].memsw.usage),
        (0, 0)
    );
    assert_eq!(
        (k.memcg.groups[1].stat.rss, k.memcg.groups[1].stat.pgpgout),
        (0, 1)
    );
}

/// Without stock, a commit charges regardless of the limit (the bypass) and counts no
/// failure; the root's pages are tagged but never in its `res`.
#[test]
fn commit_without_stock_forces_the_charge() {
    let w = kernel_with_group(Some(0));
    let mut k = w.borrow_mut();
    let a = user_page(&mut k);
    commit_charge(&mut k, a, 1, false);
    assert_eq!(k.memcg.groups[1].res.usage, 1);
    assert_eq!(k.memcg.groups[1].res.failcnt, 0);
    assert_eq!(k.memcg.groups[1].stat.cache, 1);
    let b = user_page(&mut k);
    commit_charge(&mut k, b, 0, true);
    assert_eq!(k.memcg.page_lruvec_memcg(b), 0);
    assert_eq!(k.memcg.groups[0].stat.rss, 1);
    assert_eq!(k.memcg.groups[0].res.usage, 0);
    assert_eq!(
        k.memcg.usage(0),
        2,
        "the root's usage is every group's pages"
    );
}

/// §2.6: swap-out keeps `memsw` and records the slot; freeing the slot lets `memsw` go;
/// a swap-in charges the recorded group and drops the record.
#[test]
fn swapout_moves_the_charge_to_the_slot() {
    let w = kernel_with_group(None);
    let mut k = w.borrow_mut();
    let pfn = user_page(&mut k);
    commit_charge(&mut k, pfn, 1, true);
    uncharge_swapcache(&mut k, pfn, 5);
    let g = &k.memcg.groups[1];
    assert_eq!(
        (g.res.usage, g.memsw.usage, g.stat.rss, g.stat.swap),
        (0, 1, 0, 1)
    );
    assert_eq!(swapin_memcg(&k, 5), 1, "the record names the group");
    let again = user_page(&mut k);
    commit_charge_swapin(&mut k, again, 5);
    let g = &k.memcg.groups[1];
    assert_eq!(
        (g.res.usage, g.memsw.usage, g.stat.rss, g.stat.swap),
        (1, 1, 1, 0)
    );
    assert_eq!(k.memcg.swap_cgroup[5], 0);
    // A second uncharge of the freed record does nothing.
    uncharge_swap(&mut k, 5);
    assert_eq!(k.memcg.groups[1].memsw.usage, 1);
}

/// Off, nothing is charged and every page is the root's.
#[test]
fn off_charges_nothing() {
    let w = crate::sim::boot_for_test(128, 0, "3.9");
    let mut k = w.borrow_mut();
    assert!(k.memcg.disabled());
    let pfn = user_page(&mut k);
    commit_charge(&mut k, pfn, 0, true);
    assert_eq!(k.memcg.page_memcg(pfn), None);
    assert_eq!(current_memcg(&k), 0);
}

/// §4.1: the targets start at 0, so a group's first event re-keys it in the tree of the
/// page's zone; after that, the soft-limit target (1024 events on) is looked at only when
/// the threshold target (128 on) passes. A group with no excess stays off the tree.
#[test]
fn events_put_a_group_over_its_soft_limit_on_its_zones_tree() {
    let mut cg = groups(&[("A", 0, None, false), ("B", 0, None, false)]);
    cg.groups[1].res.soft_limit = 10;
    cg.res_charge(1, 50).unwrap();
    cg.res_charge(2, 50).unwrap();
    cg.check_events(1, 1);
    cg.check_events(2, 1);
    assert_eq!(
        cg.groups[1].tree_node[1].map(|n| n.0),
        Some(40),
        "keyed by its excess"
    );
    assert_eq!(cg.groups[2].tree_node[1], None, "B has no soft limit");
    assert!(cg.soft_limit_tree[0].is_empty(), "only the page's zone");
    // Targets now 129 and 1025: the threshold passes at events 130, 259, ... 904 and
    // 1033, and only at 1033 is the soft-limit target behind.
    cg.res_charge(1, 10).unwrap();
    for _ in 2..=1032 {
        cg.check_events(1, 1);
    }
    assert_eq!(cg.groups[1].tree_node[1].map(|n| n.0), Some(40));
    cg.check_events(1, 1);
    assert_eq!(cg.groups[1].tree_node[1].map(|n| n.0), Some(50));
    assert_eq!(cg.soft_limit_tree[1].len(), 1);
}

/// §4.1-4.2: the largest excess comes first, equal keys in insertion order from the
/// last; taking a node removes it, and one no longer over its soft limit is dropped.
#[test]
fn the_largest_excess_is_taken_off_the_tree_first() {
    let mut cg = groups(&[
        ("A", 0, None, false),
        ("B", 0, None, false),
        ("C", 0, None, false),
    ]);
    for (mc, usage) in [(1, 30), (2, 30), (3, 10)] {
        cg.groups[mc].res.soft_limit = 0;
        cg.res_charge(mc, usage).unwrap();
        cg.update_tree(mc, 2);
    }
    // A hierarchical parent is re-keyed with its child; A, B and C have none here.
    assert_eq!(
        cg.largest_soft_limit_node(2),
        Some(2),
        "B: 30, inserted after A"
    );
    assert_eq!(cg.groups[2].tree_node[2], None);
    cg.res_uncharge(1, 30, true);
    assert_eq!(
        cg.largest_soft_limit_node(2),
        Some(3),
        "A's excess is gone: dropped"
    );
    assert_eq!(cg.largest_soft_limit_node(2), None);
}

/// §4.1: `mem_cgroup_update_tree` walks up the hierarchy.
#[test]
fn a_childs_events_re_key_its_hierarchical_parent() {
    let mut cg = groups(&[("A", 0, None, true), ("A/B", 1, None, true)]);
    cg.groups[1].res.soft_limit = 4;
    cg.res_charge(2, 9).unwrap();
    cg.update_tree(2, 2);
    assert_eq!(cg.groups[1].tree_node[2].map(|n| n.0), Some(5));
    assert_eq!(
        cg.groups[2].tree_node[2], None,
        "B itself has no soft limit"
    );
}

/// §5.1, §5.3: eligible for the rework's soft pass when over the soft limit, or below a
/// hierarchical ancestor that is; limit reclaim's climb stops after its root, whose own
/// parent is still looked at (the literal code).
#[test]
fn soft_reclaim_eligibility_climbs_the_hierarchy_up_to_the_root() {
    // root ← A (hier) ← B (hier) ← C; D beside A, flat.
    let mut cg = groups(&[
        ("A", 0, None, true),
        ("A/B", 1, None, true),
        ("A/B/C", 2, None, true),
        ("D", 0, None, false),
    ]);
    cg.res_charge(3, 10).unwrap();
    cg.res_charge(4, 10).unwrap();
    assert!(
        !cg.soft_reclaim_eligible(3, None),
        "no soft limits anywhere"
    );
    cg.groups[1].res.soft_limit = 5;
    assert!(
        cg.soft_reclaim_eligible(3, None),
        "A, its grandparent, is over"
    );
    assert!(cg.soft_reclaim_eligible(2, None));
    assert!(!cg.soft_reclaim_eligible(4, None), "D is not below A");
    assert!(
        !cg.soft_reclaim_eligible(3, Some(2)),
        "limit reclaim of B: the climb stops at B"
    );
    assert!(
        cg.soft_reclaim_eligible(2, Some(2)),
        "B itself still looks at its parent A"
    );
    cg.groups[4].res.soft_limit = 0;
    assert!(cg.soft_reclaim_eligible(4, None));
}

/// A transparent huge page is charged whole or not at all: no batch, one reclaim, no OOM;
/// a charge no page took is given back.
#[test]
fn a_huge_page_is_charged_whole_or_not_at_all() {
    for (limit, fits) in [(600, true), (300, false)] {
        let w = kernel_with_group(Some(limit));
        let w2 = w.clone();
        crate::sim::run_task(&w, crate::engine::SEC, async move {
            let r = try_charge_thp(&w2, 1, 512).await;
            let mut k = w2.borrow_mut();
            let g = &k.memcg.groups[1];
            if fits {
                assert_eq!(r, Ok(()));
                assert_eq!((g.res.usage, g.memsw.usage, g.stock), (512, 512, 512));
                cancel_charge(&mut k, 1, 512);
                let g = &k.memcg.groups[1];
                assert_eq!((g.res.usage, g.memsw.usage, g.stock), (0, 0, 0));
            } else {
                assert_eq!(r, Err(1));
                assert_eq!((g.res.usage, g.stock), (0, 0));
                assert!(g.res.failcnt >= 2, "charged twice around one reclaim");
            }
        });
        assert!(w.borrow().oom_kills.is_empty());
    }
    // The root group is not charged.
    let w = kernel_with_group(None);
    let w2 = w.clone();
    crate::sim::run_task(&w, crate::engine::SEC, async move {
        assert_eq!(try_charge_thp(&w2, 0, 512).await, Ok(()));
        cancel_charge(&mut w2.borrow_mut(), 0, 512);
    });
}

/// A test task in group A faulting `pages` anonymous pages of its own mm. Returns how
/// many faults succeeded.
fn fault_in_group(w: &crate::mm::World, pages: u32) -> u32 {
    use std::cell::Cell;
    use std::rc::Rc;
    let done = Rc::new(Cell::new(0));
    let d = done.clone();
    let w2 = w.clone();
    w.borrow_mut().sched.set_spawn_cgroup(Some(1));
    crate::sim::run_task(w, 60 * crate::engine::SEC, async move {
        d.set(fault_anon(&w2, pages).await);
    });
    w.borrow_mut().sched.set_spawn_cgroup(None);
    done.get()
}

/// The current task faults `pages` anonymous pages of a new mm of its own; returns how
/// many faults succeeded.
async fn fault_anon(w: &crate::mm::World, pages: u32) -> u32 {
    let (mm, start) = {
        let mut k = w.borrow_mut();
        let task = k.sched.current();
        k.mms.push(crate::mm::memory::Mm {
            task: Some(task),
            ..Default::default()
        });
        let mm = k.mms.len() - 1;
        (mm, k.mms[mm].mmap_anon(pages, 0))
    };
    for i in 0..pages {
        if crate::mm::memory::handle_mm_fault(w, mm, start + i, true)
            .await
            .is_err()
        {
            return i;
        }
    }
    pages
}

/// §2.2-§2.4, §3.1: a group's pages sit on its own lruvecs; at its limit, limit reclaim
/// swaps its pages out (hidden from pgscan) and the group never goes over.
#[test]
fn limit_reclaim_keeps_a_group_under_its_limit_on_its_own_lists() {
    use crate::mm::page::Lru;
    use crate::mm::vmstat::VmEvent;
    let w = kernel_with_group(Some(256));
    assert_eq!(fault_in_group(&w, 1024), 1024);
    let k = w.borrow();
    let g = &k.memcg.groups[1];
    assert!(g.res.max_usage <= 256, "max usage {}", g.res.max_usage);
    assert!(g.res.failcnt > 0);
    assert!(g.stat.swap > 0 && g.stat.pgpgout > 0);
    assert_eq!(
        g.stat.rss + g.stat.swap,
        1024,
        "every page in memory or in swap"
    );
    let on_lists = |mc: usize, lru: Lru| -> u64 {
        k.zones
            .iter()
            .map(|z| z.mem_cgroup_lruvec(mc).size(lru))
            .sum()
    };
    let a_anon = on_lists(1, Lru::ActiveAnon) + on_lists(1, Lru::InactiveAnon);
    assert_eq!(a_anon, g.stat.rss, "A's pages are on A's lists");
    assert_eq!(
        on_lists(0, Lru::ActiveAnon) + on_lists(0, Lru::InactiveAnon),
        0
    );
    assert_eq!(k.events.get(VmEvent::pgscan_direct_dma32), 0);
    assert_eq!(k.events.get(VmEvent::pgsteal_direct_dma32), 0);
    assert_eq!(k.events.get(VmEvent::allocstall), 0);
    assert!(k.events.get(VmEvent::pswpout) > 0);
    crate::mm::invariants::check(&k).unwrap();
}

/// §2.2, §2.5: without swap, a group at its limit kills its largest task; the charge
/// of the victim itself fails.
#[test]
fn a_group_that_cannot_reclaim_kills_its_task() {
    let w = machine_with_groups(0, &[child("A", Some(64))]);
    let done = fault_in_group(&w, 200);
    let k = w.borrow();
    assert!(done <= 64, "{done} faults went through a 64-page limit");
    assert_eq!(k.oom_kills.len(), 1);
    assert!(k.memcg.groups[1].res.max_usage <= 64);
}

/// Two groups "A" and "B" with `pages` clean page-cache pages each in zone DMA32, A with
/// soft limit 0 and on that zone's tree.
fn two_groups_with_cache(pages: u64) -> crate::mm::World {
    let w = machine_with_groups(64, &[child("A", None), child("B", None)]);
    let mut k = w.borrow_mut();
    for mc in [1, 2] {
        let ino = crate::mm::inode::new_inode(&mut k, "cache", 0);
        for index in 0..pages {
            let pfn = user_page(&mut k);
            k.pages.flags[pfn as usize] = crate::mm::page::PG_UPTODATE;
            k.memcg.groups[mc].stock = 1;
            k.memcg.force_charge(mc, 1);
            commit_page_cache(&mut k, pfn, ino, index, mc);
        }
        k.inodes[ino].size_pages = pages;
    }
    k.memcg.groups[1].res.soft_limit = 0;
    let zi = crate::mm::mmzone::ZONE_DMA32;
    k.memcg.update_tree(1, zi);
    drop(k);
    w
}

/// `add_to_page_cache_lru` as group `mc`'s task would do it.
fn commit_page_cache(k: &mut Kernel, pfn: Pfn, ino: usize, index: u64, mc: usize) {
    k.pages.mapping[pfn as usize] = ino as u32;
    k.pages.index[pfn as usize] = index as u32;
    k.inodes[ino].insert_page(index, pfn);
    let zi = k.page_zone(pfn);
    k.zones[zi].mod_stat(crate::mm::vmstat::ZoneStat::nr_file_pages, 1);
    commit_charge(k, pfn, mc, false);
    crate::mm::swap::lru_cache_add_lru(k, pfn, crate::mm::page::Lru::InactiveFile);
}

/// §4.2-§4.4: one call reclaims from the group over its soft limit, a quarter of its
/// excess or more, at priority 0 and hidden from vmstat; the other group keeps its pages
/// and the victim goes back on the tree with its smaller excess. Order > 0, and the
/// rework, do none.
#[test]
fn soft_limit_reclaim_takes_a_quarter_of_the_excess_from_the_worst_group() {
    use crate::mm::mmzone::ZONE_DMA32;
    use crate::mm::vmstat::VmEvent;
    let w = two_groups_with_cache(400);
    let w2 = w.clone();
    crate::sim::run_task(&w, 10 * crate::engine::SEC, async move {
        let w = w2;
        assert_eq!(soft_limit_reclaim(&w, ZONE_DMA32, 1, true).await, (0, 0));
        let (reclaimed, scanned) = soft_limit_reclaim(&w, ZONE_DMA32, 0, true).await;
        assert!(reclaimed >= 100, "a quarter of 400 at least: {reclaimed}");
        assert!(scanned >= reclaimed);
        let k = w.borrow();
        let a = &k.memcg.groups[1];
        assert_eq!(a.stat.cache, 400 - reclaimed);
        assert_eq!(a.res.usage, 400 - reclaimed);
        assert_eq!(
            k.memcg.groups[2].stat.cache, 400,
            "B is under its soft limit"
        );
        assert_eq!(a.tree_node[ZONE_DMA32].map(|n| n.0), Some(a.res.usage));
        assert_eq!(k.events.get(VmEvent::pgscan_kswapd_dma32), 0);
        assert_eq!(k.events.get(VmEvent::pgsteal_kswapd_dma32), 0);
        crate::mm::invariants::check(&k).unwrap();
    });
    // With the rework the trees are not reclaimed from.
    let w = two_groups_with_cache(40);
    let k = crate::presets::resolve("softlimit-rework-v5.1", &[]).unwrap();
    w.borrow_mut().sw = k.switches;
    let w2 = w.clone();
    crate::sim::run_task(&w, crate::engine::SEC, async move {
        assert_eq!(soft_limit_reclaim(&w2, ZONE_DMA32, 0, true).await, (0, 0));
    });
}

/// §4.3: a group with nothing it could give back is passed over (`mem_cgroup_reclaimable`):
/// anonymous pages without swap are not reclaimable, page cache is.
#[test]
fn a_group_is_reclaimable_with_file_pages_or_anon_and_swap() {
    let w = two_groups_with_cache(4);
    let k = w.borrow();
    assert!(MemCgroups::reclaimable(&k, 1));
    assert!(
        !MemCgroups::reclaimable(&k, 0),
        "the root has no pages here"
    );
}

/// Groups "A" and "B" on a machine with `swap_mib` MiB of swap, B with `cache` clean
/// page-cache pages; then, in a task of A, `anon` anonymous pages faulted, both groups
/// given soft limit 0 and put on zone DMA32's tree, and `then` run.
fn anon_and_cache_groups<F>(swap_mib: u64, anon: u32, cache: u64, then: F)
where
    F: FnOnce(crate::mm::World) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>
        + 'static,
{
    use crate::mm::mmzone::ZONE_DMA32;
    let w = machine_with_groups(swap_mib, &[child("A", None), child("B", None)]);
    {
        let mut k = w.borrow_mut();
        let ino = crate::mm::inode::new_inode(&mut k, "cache", 0);
        for index in 0..cache {
            let pfn = user_page(&mut k);
            k.pages.flags[pfn as usize] = crate::mm::page::PG_UPTODATE;
            k.memcg.groups[2].stock = 1;
            k.memcg.force_charge(2, 1);
            commit_page_cache(&mut k, pfn, ino, index, 2);
        }
        k.inodes[ino].size_pages = cache;
    }
    w.borrow_mut().sched.set_spawn_cgroup(Some(1));
    let w2 = w.clone();
    crate::sim::run_task(&w, 60 * crate::engine::SEC, async move {
        let w = w2;
        assert_eq!(fault_anon(&w, anon).await, anon);
        {
            let mut k = w.borrow_mut();
            for mc in [1, 2] {
                k.memcg.groups[mc].res.soft_limit = 0;
                k.memcg.update_tree(mc, ZONE_DMA32);
            }
        }
        then(w).await;
    });
}

/// `mem_cgroup_reclaimable`: anonymous pages count only with swap to put them in.
#[test]
fn anonymous_memory_is_reclaimable_only_with_swap() {
    for (swap, reclaimable) in [(0, false), (64, true)] {
        anon_and_cache_groups(swap, 64, 0, move |w| {
            Box::pin(async move {
                assert_eq!(MemCgroups::reclaimable(&w.borrow(), 1), reclaimable);
            })
        });
    }
}

/// §4.2: the group furthest over its soft limit gives nothing (anonymous memory, no
/// swap), so the loop moves on to the next on the tree and stops once that one gave.
#[test]
fn soft_limit_reclaim_moves_on_from_a_group_that_gives_nothing() {
    use crate::mm::mmzone::ZONE_DMA32;
    anon_and_cache_groups(0, 400, 100, |w| {
        Box::pin(async move {
            // A's usage: its 400 pages and what is left of its last charge batch.
            let a0 = w.borrow().memcg.groups[1].res.usage;
            assert!(a0 >= 400);
            assert_eq!(w.borrow().memcg.groups[2].res.usage, 100);
            let (reclaimed, scanned) = soft_limit_reclaim(&w, ZONE_DMA32, 0, true).await;
            assert!(
                reclaimed >= 25,
                "a quarter of B's 100 at least: {reclaimed}"
            );
            assert!(scanned >= reclaimed);
            let k = w.borrow();
            assert_eq!(k.memcg.groups[1].res.usage, a0, "A has nothing to give");
            assert_eq!(k.memcg.groups[2].res.usage, 100 - reclaimed);
            // A went back on the tree with its excess.
            assert_eq!(
                k.memcg.groups[1].tree_node[ZONE_DMA32].map(|n| n.0),
                Some(a0)
            );
            crate::mm::invariants::check(&k).unwrap();
        })
    });
}
