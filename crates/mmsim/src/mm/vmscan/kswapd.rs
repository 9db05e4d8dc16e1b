//! kswapd (`mm/vmscan.c`): the per-node daemon that wakes below the low watermark,
//! `balance_pgdat` shrinking zones until they are balanced at the high watermark, and its
//! nap before sleep (`kswapd_try_to_sleep`). 3.9's `balance_pgdat` and the kswapd series'
//! flat loop live side by side, chosen by switch.

use super::*;

/// `age_active_anon`: keep the inactive anon list of every group from running dry.
pub(super) fn age_active_anon(k: &mut Kernel, zi: usize, sc: &mut ScanControl) {
    if k.swap.total() == 0 {
        return;
    }
    let groups = k.memcg.groups.len().max(1);
    for i in 0..groups {
        // The root's walk is every group, in mem_cgroup_iter's order.
        let mc = k.memcg.groups.first().map_or(0, |r| r.walk[i]);
        if inactive_anon_is_low(k, zi, mc) {
            sc.memcg = mc;
            shrink_active_list(k, SWAP_CLUSTER_MAX, zi, Lru::ActiveAnon, sc);
        }
    }
    sc.memcg = 0;
}

/// Pass 1 of `balance_pgdat`: from the highest zone down, the first unbalanced zone.
pub(super) fn find_end_zone(k: &mut Kernel, order: u32, sc: &mut ScanControl) -> Option<usize> {
    for i in (0..MAX_NR_ZONES).rev() {
        let z = &k.zones[i];
        if !z.populated() || (z.all_unreclaimable && sc.priority != DEF_PRIORITY) {
            continue;
        }
        age_active_anon(k, i, sc);
        if !zone_balanced(k, i, order, 0, 0) {
            return Some(i);
        }
        k.zones[i].clear_flag(ZONE_CONGESTED);
        if k.sw.on(Switch::KswapdShrinkZone) {
            k.zones[i].clear_flag(ZONE_TAIL_LRU_DIRTY);
        }
    }
    None
}

/// Shrink slab after a zone and account what it freed; marks the zone unreclaimable when
/// neither the LRU nor slab made progress.
pub(super) fn kswapd_shrink_slab(k: &mut Kernel, zi: usize, sc: &mut ScanControl, lru_pages: u64) {
    let shrunk = slab::shrink_slab(k, sc.gfp, sc.kswapd, sc.nr_scanned, lru_pages);
    sc.cpu += shrunk.cpu;
    sc.nr_reclaimed += shrunk.reclaimed_slab;
    if shrunk.ret == 0 && !zone_reclaimable(k, zi) {
        k.zones[zi].all_unreclaimable = true;
    }
}

/// `balance_pgdat` of 3.9 (`kernel-reclaim.md` §2.7): priorities 12 → 0, back to 12 after
/// every 32 pages, until the node is balanced; before c702418f (3.0-3.6) a balanced
/// high-order pass rechecks each zone and may start again (`kswapd_recheck_zones`).
/// Returns the order it balanced for and sets `classzone` to the end zone.
pub(super) async fn balance_pgdat_v39(w: &World, mut order: u32, classzone: &mut usize) -> u32 {
    let laptop = w.borrow().vm.laptop_mode;
    let mut sc = ScanControl::new(Gfp::KERNEL, order, true, laptop);
    let mut end_zone = 0;
    loop {
        // loop_again:
        sc.priority = DEF_PRIORITY;
        sc.nr_reclaimed = 0;
        sc.may_writepage = !laptop;
        sc.order = order;
        w.borrow_mut().count(VmEvent::pageoutrun, 1);
        let mut balanced = false;
        // 3.0-3.8: pages scanned since loop_again, for may_writepage and the nap.
        let mut total_scanned = 0;
        let floor = if w.borrow().sw.on(Switch::KswapdNoMaxPriority) {
            1
        } else {
            0
        };
        loop {
            sc.cpu += BALANCE_PASS_NS;
            let lru_pages;
            {
                let mut k = w.borrow_mut();
                match find_end_zone(&mut k, order, &mut sc) {
                    Some(e) => end_zone = e,
                    None => {
                        balanced = true;
                        break;
                    }
                }
                lru_pages = (0..=end_zone)
                    .map(|i| zone_reclaimable_pages(&k, i))
                    .sum::<u64>();
            }
            let mut i = 0;
            while i <= end_zone {
                let (skip, shrink, gap_nr) = {
                    let k = w.borrow();
                    let z = &k.zones[i];
                    let skip =
                        !z.populated() || (z.all_unreclaimable && sc.priority != DEF_PRIORITY);
                    let testorder = kswapd_testorder(&k, i, order);
                    let shrink =
                        !skip && !zone_balanced(&k, i, testorder, balance_gap(&k, i), end_zone);
                    (skip, shrink, SWAP_CLUSTER_MAX.max(z.high_wmark()))
                };
                if skip {
                    i += 1;
                    continue;
                }
                sc.nr_scanned = 0;
                // The old soft-limit reclaim: counted as progress and as pages scanned
                // since loop_again, not in sc.nr_scanned.
                let (r, s) = memcontrol::soft_limit_reclaim(w, i, order, true).await;
                sc.nr_reclaimed += r;
                total_scanned += s;
                if shrink {
                    if w.borrow().sw.on(Switch::KswapdLimitReclaimPerPriority) {
                        sc.nr_to_reclaim = gap_nr;
                    }
                    shrink_zone(w, i, &mut sc).await;
                    total_scanned += sc.nr_scanned;
                    let mut k = w.borrow_mut();
                    kswapd_shrink_slab(&mut k, i, &mut sc, lru_pages);
                    if k.sw.on(Switch::KswapdShrinkZone) {
                        k.zones[i].clear_flag(ZONE_WRITEBACK);
                    }
                }
                let unreclaimable = {
                    let mut k = w.borrow_mut();
                    if kswapd_may_writepage(&k, total_scanned, &sc) {
                        sc.may_writepage = true;
                    }
                    let unreclaimable = k.zones[i].all_unreclaimable;
                    if !unreclaimable && zone_balanced(&k, i, order, 0, end_zone) {
                        k.zones[i].clear_flag(ZONE_CONGESTED);
                    }
                    unreclaimable
                };
                if unreclaimable {
                    if end_zone > 0 && end_zone == i {
                        end_zone -= 1;
                    }
                    i += 1;
                    continue;
                }
                maybe_charge(w, &mut sc).await;
                i += 1;
            }
            {
                let mut k = w.borrow_mut();
                if k.fatal.is_some() {
                    return order;
                }
                wake_pfmemalloc_waiters(&mut k);
                if k.sw.on(Switch::KswapdWritepageOncePerPass) && sc.priority < DEF_PRIORITY - 2 {
                    sc.may_writepage = true;
                }
                if balanced_at_testorder(&k, order, end_zone, *classzone) {
                    balanced = true;
                    break;
                }
            }
            let nap = {
                let mut k = w.borrow_mut();
                kswapd_congestion_nap(&mut k, order, end_zone, total_scanned, sc.priority)
            };
            if nap {
                charge(w, &mut sc).await;
                congestion_wait(w, HZ_10).await;
            }
            if sc.nr_reclaimed >= SWAP_CLUSTER_MAX {
                break;
            }
            if sc.priority <= floor {
                break;
            }
            sc.priority -= 1;
        }
        charge(w, &mut sc).await;
        if balanced {
            let recheck = kswapd_recheck_zones(&mut w.borrow_mut(), order, end_zone, sc.priority);
            match recheck {
                Some(o) => order = o,
                None => break,
            }
            continue;
        }
        if sc.nr_reclaimed < SWAP_CLUSTER_MAX {
            order = 0;
        }
    }
    if pgdat_needs_compaction(&w.borrow(), order, end_zone, *classzone) {
        compaction::compact_pgdat(w, order).await;
    }
    *classzone = end_zone;
    order
}

/// Whether kswapd turns `may_writepage` on after a zone: in 3.9, below priority 10 (at the
/// end of the pass with KS patch 8); in 3.0-3.8, once it has scanned more than 64 pages
/// since `loop_again` and more than 1.5 times what it reclaimed.
pub(super) fn kswapd_may_writepage(k: &Kernel, total_scanned: u64, sc: &ScanControl) -> bool {
    if !k.sw.on(Switch::KswapdWritepageByPriority) {
        return total_scanned > 2 * SWAP_CLUSTER_MAX
            && total_scanned > sc.nr_reclaimed + sc.nr_reclaimed / 2;
    }
    !k.sw.on(Switch::KswapdWritepageOncePerPass) && sc.priority < DEF_PRIORITY - 2
}

/// 3.0-3.8 (before 258401a6): kswapd in trouble, having scanned below priority 10, naps
/// in `congestion_wait` unless a zone is below its min watermark, when it counts
/// `kswapd_skip_congestion_wait` instead. Returns whether to nap.
pub(super) fn kswapd_congestion_nap(
    k: &mut Kernel,
    order: u32,
    end_zone: usize,
    total_scanned: u64,
    priority: i32,
) -> bool {
    if k.sw.on(Switch::KswapdNoCongestionWait) || total_scanned == 0 || priority >= DEF_PRIORITY - 2
    {
        return false;
    }
    let under_min = (0..=end_zone).any(|i| {
        let z = &k.zones[i];
        z.populated() && !zone_watermark_ok(z, order, z.min_wmark(), end_zone, 0)
    });
    if under_min {
        k.count(VmEvent::kswapd_skip_congestion_wait, 1);
        return false;
    }
    true
}

/// 3.9's end-of-pass test: order 0 as `pgdat_balanced`; for order > 0, each zone is checked
/// at its `testorder` (order 0 where compaction could run), and the node is done when every
/// zone up to `end_zone` is, or when those up to `classzone` hold a quarter of its pages.
pub(super) fn balanced_at_testorder(
    k: &Kernel,
    order: u32,
    end_zone: usize,
    classzone: usize,
) -> bool {
    if order == 0 {
        return pgdat_balanced(k, 0, classzone);
    }
    let (mut all_ok, mut balanced, mut present) = (true, 0, 0);
    for i in 0..=end_zone {
        let z = &k.zones[i];
        if !z.populated() {
            continue;
        }
        if i <= classzone {
            present += z.present_pages;
        }
        if z.all_unreclaimable {
            continue;
        }
        if zone_balanced(k, i, kswapd_testorder(k, i, order), 0, end_zone) {
            if i <= classzone {
                balanced += z.present_pages;
            }
        } else {
            all_ok = false;
        }
    }
    all_ok || balanced >= present / 4
}

pub(super) fn wake_pfmemalloc_waiters(k: &mut Kernel) {
    let q = k.wq.pfmemalloc_wait;
    if k.sched.queue_has_waiters(q) && pfmemalloc_watermark_ok(k) {
        k.sched.wake_all(q);
    }
}

/// `kswapd_shrink_zone` (KS patch 9, `kernel-reclaim.md` §2.8). Returns true if the zone
/// was balanced already or reclaim scanned its whole target (no need to raise priority).
pub(super) async fn kswapd_shrink_zone(
    w: &World,
    zi: usize,
    classzone: usize,
    sc: &mut ScanControl,
    lru_pages: u64,
    nr_attempted: &mut u64,
) -> bool {
    {
        let k = w.borrow();
        sc.nr_to_reclaim = if k.sw.on(Switch::KswapdLimitReclaimPerPriority) {
            SWAP_CLUSTER_MAX.max(k.zones[zi].high_wmark())
        } else {
            u64::MAX
        };
        let testorder = kswapd_testorder(&k, zi, sc.order);
        if zone_balanced(&k, zi, testorder, balance_gap(&k, zi), classzone) {
            return true;
        }
    }
    shrink_zone(w, zi, sc).await;
    let mut k = w.borrow_mut();
    kswapd_shrink_slab(&mut k, zi, sc, lru_pages);
    *nr_attempted = nr_attempted.saturating_add(sc.nr_to_reclaim);
    if k.sw.on(Switch::KswapdShrinkZone) {
        k.zones[zi].clear_flag(ZONE_WRITEBACK);
    }
    if zone_reclaimable(&k, zi) && zone_balanced(&k, zi, sc.order, 0, classzone) {
        k.zones[zi].clear_flag(ZONE_CONGESTED);
        k.zones[zi].clear_flag(ZONE_TAIL_LRU_DIRTY);
    }
    sc.nr_scanned >= sc.nr_to_reclaim
}

/// `balance_pgdat` with the flattened priority loop (KS patch 3; 3.11, `kernel-reclaim.md`
/// §2.8): one pass per priority, which drops only when a pass could not scan its target or
/// reclaimed nothing.
pub(super) async fn balance_pgdat_flat(w: &World, mut order: u32, classzone: &mut usize) -> u32 {
    let laptop = w.borrow().vm.laptop_mode;
    let mut sc = ScanControl::new(Gfp::KERNEL, order, true, laptop);
    let mut end_zone = 0;
    w.borrow_mut().count(VmEvent::pageoutrun, 1);
    loop {
        sc.cpu += BALANCE_PASS_NS;
        sc.nr_reclaimed = 0;
        let mut nr_attempted = 0;
        let mut raise_priority = true;
        let lru_pages;
        let (floor, once_per_pass) = {
            let mut k = w.borrow_mut();
            match find_end_zone(&mut k, order, &mut sc) {
                Some(e) => end_zone = e,
                None => break,
            }
            lru_pages = (0..=end_zone)
                .map(|i| zone_reclaimable_pages(&k, i))
                .sum::<u64>();
            (
                if k.sw.on(Switch::KswapdNoMaxPriority) {
                    1
                } else {
                    0
                },
                k.sw.on(Switch::KswapdWritepageOncePerPass),
            )
        };
        if once_per_pass && sc.priority < DEF_PRIORITY - 2 {
            sc.may_writepage = true;
        }
        for i in 0..=end_zone {
            {
                let k = w.borrow();
                let z = &k.zones[i];
                if !z.populated() || (z.all_unreclaimable && sc.priority != DEF_PRIORITY) {
                    continue;
                }
            }
            sc.nr_scanned = 0;
            let (r, _) = memcontrol::soft_limit_reclaim(w, i, sc.order, true).await;
            sc.nr_reclaimed += r;
            if kswapd_shrink_zone(w, i, end_zone, &mut sc, lru_pages, &mut nr_attempted).await {
                raise_priority = false;
            }
            if !once_per_pass && sc.priority < DEF_PRIORITY - 2 {
                sc.may_writepage = true;
            }
            maybe_charge(w, &mut sc).await;
        }
        // KS patch 4: compact inside the loop once this pass reclaimed what it attempted.
        let compact_now = {
            let k = w.borrow();
            k.sw.on(Switch::KswapdCompactOnProgress)
                && pgdat_needs_compaction(&k, order, end_zone, *classzone)
                && sc.nr_reclaimed > nr_attempted
        };
        if compact_now {
            compaction::compact_pgdat(w, order).await;
        }
        let mut k = w.borrow_mut();
        if k.fatal.is_some() {
            return order;
        }
        wake_pfmemalloc_waiters(&mut k);
        if order > 0 && sc.nr_reclaimed >= 2 << order {
            order = 0;
            sc.order = 0;
        }
        if raise_priority || sc.nr_reclaimed == 0 {
            sc.priority -= 1;
        }
        let done = sc.priority < floor || pgdat_balanced(&k, order, *classzone);
        drop(k);
        if done {
            break;
        }
    }
    charge(w, &mut sc).await;
    let at_end = !w.borrow().sw.on(Switch::KswapdCompactOnProgress);
    if at_end && pgdat_needs_compaction(&w.borrow(), order, end_zone, *classzone) {
        compaction::compact_pgdat(w, order).await;
    }
    *classzone = end_zone;
    order
}

pub(super) async fn balance_pgdat(w: &World, order: u32, classzone: &mut usize) -> u32 {
    let flat = w.borrow().sw.on(Switch::KswapdFlattenPriorityLoop);
    if flat {
        balance_pgdat_flat(w, order, classzone).await
    } else {
        balance_pgdat_v39(w, order, classzone).await
    }
}

/// `prepare_kswapd_sleep`.
pub(super) fn prepare_kswapd_sleep(
    k: &mut Kernel,
    order: u32,
    remaining: bool,
    classzone: usize,
) -> bool {
    if remaining {
        return false;
    }
    let q = k.wq.pfmemalloc_wait;
    if k.sched.queue_has_waiters(q) {
        k.sched.wake_all(q);
        return false;
    }
    pgdat_balanced(k, order, classzone)
}

/// `kswapd_try_to_sleep` (`kernel-reclaim.md` §2.6): nap HZ/10 first; sleep for good only if
/// still balanced and not woken during the nap.
pub(super) async fn kswapd_try_to_sleep(w: &World, order: u32, classzone: usize) {
    let q = w.borrow().wq.kswapd_wait;
    let mut remaining = false;
    if prepare_kswapd_sleep(&mut w.borrow_mut(), order, false, classzone) {
        w.borrow_mut().pgdat.kswapd_sleeping = true;
        let r = engine::wait_event(w, q, Some(HZ_10), false).await;
        w.borrow_mut().pgdat.kswapd_sleeping = false;
        remaining = r == engine::WakeReason::Woken;
    }
    let sleep = prepare_kswapd_sleep(&mut w.borrow_mut(), order, remaining, classzone);
    if sleep {
        trace::mm_vmscan_kswapd_sleep(&mut w.borrow_mut());
        // 62997027: compaction may succeed again once kswapd is done.
        compaction::reset_isolation_suitable(&mut w.borrow_mut());
        w.borrow_mut().pgdat.kswapd_sleeping = true;
        engine::wait_event(w, q, None, false).await;
        w.borrow_mut().pgdat.kswapd_sleeping = false;
    } else if remaining {
        w.borrow_mut()
            .count(VmEvent::kswapd_low_wmark_hit_quickly, 1);
    } else {
        w.borrow_mut()
            .count(VmEvent::kswapd_high_wmark_hit_quickly, 1);
    }
}

pub(super) fn highest_zone(k: &Kernel) -> usize {
    (0..MAX_NR_ZONES)
        .rev()
        .find(|&i| k.zones[i].populated())
        .unwrap_or(0)
}

/// The kswapd thread (`kswapd`, `kernel-reclaim.md` §2.6).
pub async fn kswapd(w: World) {
    let top = highest_zone(&w.borrow());
    w.borrow_mut().pgdat.classzone_idx = top;
    let mut order = 0;
    let mut classzone = top;
    let mut new_order = 0;
    let mut new_classzone = top;
    let mut balanced_order = 0;
    let mut balanced_classzone = top;
    loop {
        {
            let mut k = w.borrow_mut();
            if balanced_classzone >= new_classzone && balanced_order == new_order {
                new_order = k.pgdat.kswapd_max_order;
                new_classzone = k.pgdat.classzone_idx;
                k.pgdat.kswapd_max_order = 0;
                k.pgdat.classzone_idx = top;
            }
        }
        if order < new_order || classzone > new_classzone {
            order = new_order;
            classzone = new_classzone;
        } else {
            kswapd_try_to_sleep(&w, balanced_order, balanced_classzone).await;
            let mut k = w.borrow_mut();
            order = k.pgdat.kswapd_max_order;
            classzone = k.pgdat.classzone_idx;
            new_order = order;
            new_classzone = classzone;
            k.pgdat.kswapd_max_order = 0;
            k.pgdat.classzone_idx = top;
        }
        if w.borrow().fatal.is_some() {
            return;
        }
        trace::mm_vmscan_kswapd_wake(&mut w.borrow_mut(), order);
        balanced_classzone = classzone;
        balanced_order = balance_pgdat(&w, order, &mut balanced_classzone).await;
    }
}
