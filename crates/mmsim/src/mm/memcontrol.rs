//! Memory cgroups, v1 (`mm/memcontrol.c`, `kernel/res_counter.c`, `mm/page_cgroup.c` of
//! 3.9-3.11; `kernel-memcg.md` §1-3): groups with their `res` and `memsw` counters, the
//! page → group array (`page_cgroup`), charging and uncharging, and limit reclaim.
//!
//! Off (no `[[cgroup]]`, as when booted with `cgroup_disable=memory`), nothing here runs
//! and every page is on its zone's own lruvec. On, group 0 is the root: its pages are
//! tagged and listed on its lruvecs but never counted in its `res` (§1.4).
//!
//! mmsim deviations, each small at the scale of a run:
//! - the per-cpu charge stock is one stock per group (a batch charged ahead, consumed by
//!   the group's next charges; §2.3);
//! - a page is uncharged when it is freed (the kernel: when its last mapping goes, or when
//!   it leaves the page cache, just before the free), so no free path can leak a charge;
//! - transparent hugepages are not charged;
//! - `memcg_check_events` counts a group's events on one counter, not one per CPU (§11.5).
//!
//! Soft limits (§4): the old design every released 3.x kernel has. Charges and uncharges
//! re-key a group in the soft-limit tree of the page's zone every 1024 events; kswapd and
//! direct reclaim first reclaim, zone by zone, from the group furthest over its soft limit,
//! at priority 0 and as limit reclaim (`mem_cgroup_soft_limit_reclaim`).

use super::page::Pfn;
use super::page_alloc::AllocError;
use super::vmscan;
use super::{Kernel, World};
use crate::mm::mmzone::MAX_NR_ZONES;
use crate::presets::Switch;

/// `PCG_USED`: the page is charged to the group in the low bits.
pub const PCG_USED: u16 = 0x8000;
/// mmsim: the charge counts as `rss` (anonymous or swap cache), not `cache`.
pub const PCG_RSS: u16 = 0x4000;
const PCG_GROUP: u16 = 0x3fff;

/// `CHARGE_BATCH`: pages charged at once for a one-page charge (the stock's refill).
pub const CHARGE_BATCH: u64 = 32;
/// `MEM_CGROUP_RECLAIM_RETRIES`: rounds of limit reclaim before the OOM killer.
pub const MEM_CGROUP_RECLAIM_RETRIES: u32 = 5;
/// `MEM_CGROUP_MAX_RECLAIM_LOOPS`: `try_to_free_mem_cgroup_pages` calls per round.
pub const MEM_CGROUP_MAX_RECLAIM_LOOPS: u32 = 100;
/// `PAGE_ALLOC_COSTLY_ORDER` in pages: smaller charges retry while reclaim makes progress.
const COSTLY_PAGES: u64 = 8;
/// `THRESHOLDS_EVENTS_TARGET` and `SOFTLIMIT_EVENTS_TARGET`: page events between checks.
pub const THRESHOLDS_EVENTS_TARGET: u64 = 128;
pub const SOFTLIMIT_EVENTS_TARGET: u64 = 1024;
/// `MEM_CGROUP_MAX_SOFT_LIMIT_RECLAIM_LOOPS`: groups tried while none gives anything back.
pub const MEM_CGROUP_MAX_SOFT_LIMIT_RECLAIM_LOOPS: u32 = 2;

/// `struct res_counter`, in pages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResCounter {
    pub usage: u64,
    pub max_usage: u64,
    /// `RESOURCE_MAX` is `u64::MAX`.
    pub limit: u64,
    pub soft_limit: u64,
    pub failcnt: u64,
}

impl Default for ResCounter {
    fn default() -> Self {
        ResCounter {
            usage: 0,
            max_usage: 0,
            limit: u64::MAX,
            soft_limit: u64::MAX,
            failcnt: 0,
        }
    }
}

impl ResCounter {
    /// `res_counter_margin`.
    pub fn margin(&self) -> u64 {
        self.limit.saturating_sub(self.usage)
    }

    /// `res_counter_soft_limit_excess`.
    pub fn soft_limit_excess(&self) -> u64 {
        self.usage.saturating_sub(self.soft_limit)
    }
}

/// `memory.stat`'s per-group counters (pages, and events).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemcgStat {
    pub cache: u64,
    pub rss: u64,
    pub swap: u64,
    pub pgpgin: u64,
    pub pgpgout: u64,
}

/// One `struct mem_cgroup`.
#[derive(Clone, Debug, Default)]
pub struct MemCgroup {
    /// The path below the root ("" for the root).
    pub name: String,
    /// The group's parent directory (`None` for the root).
    pub parent: Option<usize>,
    /// `memory.use_hierarchy`.
    pub use_hierarchy: bool,
    /// `memory.swappiness`.
    pub swappiness: u32,
    /// Memory: page cache, anonymous and swap-cache pages.
    pub res: ResCounter,
    /// Memory + swap.
    pub memsw: ResCounter,
    pub stat: MemcgStat,
    /// Pages charged to `res` and `memsw` ahead of use (the per-cpu stock, one per group).
    pub stock: u64,
    /// The groups a reclaim rooted here visits, in `mem_cgroup_iter`'s pre-order: itself,
    /// then its descendants if hierarchical (the root: every group).
    pub walk: Vec<usize>,
    /// `reclaim_iter[priority]` per zone: where the next walk rooted here starts.
    pub reclaim_iter: [[usize; vmscan::DEF_PRIORITY as usize + 1]; MAX_NR_ZONES],
    /// `res_counter.parent`: the hierarchical parent whose counters a charge also takes.
    pub res_parent: Option<usize>,
    /// `nr_page_events`: pages charged and uncharged.
    pub nr_page_events: u64,
    /// `targets[MEM_CGROUP_TARGET_THRESH]` and `[..._SOFTLIMIT]`.
    pub event_targets: [u64; 2],
    /// Per zone, its key in that zone's soft-limit tree (`on_tree`, `usage_in_excess`).
    pub tree_node: [Option<(u64, u64)>; MAX_NR_ZONES],
}

/// The memory controller's state.
#[derive(Clone, Debug, Default)]
pub struct MemCgroups {
    /// Groups; 0 is the root. Empty when the controller is off.
    pub groups: Vec<MemCgroup>,
    /// `page_cgroup`: per frame, the group and `PCG_*` bits.
    pub pc: Vec<u16>,
    /// `swap_cgroup`: per swap slot, 1 + the group its swapped page was charged to (0:
    /// none).
    pub swap_cgroup: Vec<u16>,
    /// `soft_limit_tree`, per zone: (excess, insertion order, group); the largest excess
    /// is the last, and of equal keys the last inserted ("equal keys go right").
    pub soft_limit_tree: [std::collections::BTreeSet<(u64, u64, usize)>; MAX_NR_ZONES],
    /// Insertions so far (orders equal keys).
    pub tree_seq: u64,
}

/// A scenario's group, as boot reads it.
#[derive(Clone, Debug)]
pub struct GroupConfig {
    pub name: String,
    /// The parent's index among the groups (0 is the root).
    pub parent: usize,
    pub limit_pages: Option<u64>,
    pub soft_limit_pages: Option<u64>,
    pub use_hierarchy: bool,
    pub swappiness: Option<u32>,
}

impl MemCgroups {
    /// The controller with the root and `groups` (parents before children), for `frames`
    /// frames and `swap_slots` slots; off when `groups` is empty.
    pub fn new(
        groups: &[GroupConfig],
        frames: usize,
        swap_slots: usize,
        vm_swappiness: u32,
    ) -> Self {
        if groups.is_empty() {
            return MemCgroups::default();
        }
        let mut g = vec![MemCgroup {
            name: String::new(),
            swappiness: vm_swappiness,
            ..Default::default()
        }];
        for c in groups {
            let parent = &g[c.parent];
            let hier_parent = parent.use_hierarchy;
            let mut res = ResCounter::default();
            if let Some(l) = c.limit_pages {
                res.limit = l;
            }
            if let Some(s) = c.soft_limit_pages {
                res.soft_limit = s;
            }
            g.push(MemCgroup {
                name: c.name.clone(),
                parent: Some(c.parent),
                use_hierarchy: c.use_hierarchy,
                swappiness: c.swappiness.unwrap_or(parent.swappiness),
                res,
                res_parent: hier_parent.then_some(c.parent),
                ..Default::default()
            });
        }
        // mem_cgroup_iter's pre-order walks.
        let n = g.len();
        for root in 0..n {
            let mut walk = Vec::new();
            preorder(&g, root, root == 0 || g[root].use_hierarchy, &mut walk);
            g[root].walk = walk;
        }
        MemCgroups {
            groups: g,
            pc: vec![0; frames],
            swap_cgroup: vec![0; swap_slots],
            ..Default::default()
        }
    }

    /// `mem_cgroup_disabled()`.
    #[inline]
    pub fn disabled(&self) -> bool {
        self.groups.is_empty()
    }

    /// The group whose lruvecs hold `pfn`: its charged group, else the root
    /// (`mem_cgroup_page_lruvec`).
    #[inline]
    pub fn page_lruvec_memcg(&self, pfn: Pfn) -> usize {
        self.page_memcg(pfn).unwrap_or(0)
    }

    /// The group `pfn` is charged to, if it is.
    #[inline]
    pub fn page_memcg(&self, pfn: Pfn) -> Option<usize> {
        match self.pc.get(pfn as usize) {
            Some(&pc) if pc & PCG_USED != 0 => Some((pc & PCG_GROUP) as usize),
            _ => None,
        }
    }

    /// The hierarchical chain a charge to `mc` takes: `mc`, then its `res_parent`s.
    fn chain(&self, mc: usize) -> impl Iterator<Item = usize> + '_ {
        std::iter::successors(Some(mc), move |&c| self.groups[c].res_parent)
    }

    /// `res_counter_charge` of `nr` pages on `res` and `memsw`: every level or none; `Err`
    /// names the level over its limit (`limit_fail_at`), whose `failcnt` counts it.
    pub fn res_charge(&mut self, mc: usize, nr: u64) -> Result<(), usize> {
        let fail = self
            .chain(mc)
            .find(|&c| self.groups[c].res.usage + nr > self.groups[c].res.limit);
        if let Some(c) = fail {
            self.groups[c].res.failcnt += 1;
            return Err(c);
        }
        self.force_charge(mc, nr);
        Ok(())
    }

    /// Apply `f` to `mc` and each of its `res_parent`s, in that order.
    fn for_chain(&mut self, mc: usize, mut f: impl FnMut(&mut MemCgroup)) {
        let mut c = Some(mc);
        while let Some(i) = c {
            let g = &mut self.groups[i];
            f(g);
            c = g.res_parent;
        }
    }

    /// `res_counter_charge_nofail`: charge whatever the limits (a bypassed charge).
    pub fn force_charge(&mut self, mc: usize, nr: u64) {
        self.for_chain(mc, |g| {
            g.res.usage += nr;
            g.res.max_usage = g.res.max_usage.max(g.res.usage);
            g.memsw.usage += nr;
            g.memsw.max_usage = g.memsw.max_usage.max(g.memsw.usage);
        });
    }

    /// `res_counter_uncharge` of `res` (and of `memsw` too, unless the pages go to swap).
    fn res_uncharge(&mut self, mc: usize, nr: u64, memsw: bool) {
        self.for_chain(mc, |g| {
            g.res.usage -= nr;
            if memsw {
                g.memsw.usage -= nr;
            }
        });
    }

    /// `memsw` alone uncharged: a swap slot charged to `mc` is freed.
    fn memsw_uncharge(&mut self, mc: usize, nr: u64) {
        self.for_chain(mc, |g| g.memsw.usage -= nr);
    }

    /// `memory.usage_in_bytes` in pages: `res.usage`, or for the root the pages of every
    /// group (its own `res` is never charged).
    pub fn usage(&self, mc: usize) -> u64 {
        if mc != 0 {
            return self.groups[mc].res.usage;
        }
        self.groups.iter().map(|g| g.stat.cache + g.stat.rss).sum()
    }

    /// Pages charged to each group's `res` by its own pages, its descendants' (when
    /// hierarchical) and its stock: what `res.usage` must be.
    pub fn expected_usage(&self) -> Vec<u64> {
        let mut want = vec![0u64; self.groups.len()];
        for (i, g) in self.groups.iter().enumerate().skip(1) {
            let own = g.stat.cache + g.stat.rss + g.stock;
            for c in self.chain(i) {
                want[c] += own;
            }
        }
        want
    }
}

impl MemCgroups {
    /// `memcg_check_events`: one page event of `mc`, for a page of zone `zi`; every 128
    /// events the thresholds are due, and every 1024 of those the group (and its
    /// hierarchical ancestors) is re-keyed in `zi`'s soft-limit tree.
    pub fn check_events(&mut self, mc: usize, zi: usize) {
        if mc == 0 {
            // The root's res is never charged: its excess is always 0.
            return;
        }
        let g = &mut self.groups[mc];
        g.nr_page_events += 1;
        let val = g.nr_page_events;
        if val <= g.event_targets[0] {
            return;
        }
        g.event_targets[0] = val + THRESHOLDS_EVENTS_TARGET;
        if val <= g.event_targets[1] {
            return;
        }
        g.event_targets[1] = val + SOFTLIMIT_EVENTS_TARGET;
        self.update_tree(mc, zi);
    }

    /// `mem_cgroup_update_tree`: `mc` and its hierarchical ancestors take their current
    /// excess as their key in `zi`'s tree, or leave it when they have none.
    pub fn update_tree(&mut self, mc: usize, zi: usize) {
        let mut c = Some(mc);
        while let Some(m) = c {
            let excess = self.groups[m].res.soft_limit_excess();
            if excess > 0 || self.groups[m].tree_node[zi].is_some() {
                self.remove_exceeded(m, zi);
                self.insert_exceeded(m, zi, excess);
            }
            c = self.groups[m].res_parent;
        }
    }

    /// `__mem_cgroup_insert_exceeded`: a group with no excess stays off the tree.
    fn insert_exceeded(&mut self, mc: usize, zi: usize, excess: u64) {
        if excess == 0 {
            return;
        }
        self.tree_seq += 1;
        let key = (excess, self.tree_seq);
        self.soft_limit_tree[zi].insert((key.0, key.1, mc));
        self.groups[mc].tree_node[zi] = Some(key);
    }

    /// `__mem_cgroup_remove_exceeded`.
    fn remove_exceeded(&mut self, mc: usize, zi: usize) {
        if let Some((e, s)) = self.groups[mc].tree_node[zi].take() {
            self.soft_limit_tree[zi].remove(&(e, s, mc));
        }
    }

    /// `__mem_cgroup_largest_soft_limit_node`: take the group of the largest key off the
    /// tree; one that is no longer over its soft limit is dropped and the next taken.
    pub fn largest_soft_limit_node(&mut self, zi: usize) -> Option<usize> {
        while let Some((_, _, mc)) = self.soft_limit_tree[zi].pop_last() {
            self.groups[mc].tree_node[zi] = None;
            if self.groups[mc].res.soft_limit_excess() > 0 {
                return Some(mc);
            }
        }
        None
    }

    /// `mem_cgroup_soft_reclaim_eligible` (the rework, §5.1 and §5.3): `mc` is over its
    /// soft limit, or a hierarchical ancestor is, the climb stopping after the reclaim's
    /// `root` (limit reclaim) as the code has it: the root's own parent is still looked at.
    pub fn soft_reclaim_eligible(&self, mc: usize, root: Option<usize>) -> bool {
        if self.groups[mc].res.soft_limit_excess() > 0 {
            return true;
        }
        let mut p = mc;
        while let Some(q) = self.groups[p].res_parent {
            if self.groups[q].res.soft_limit_excess() > 0 {
                return true;
            }
            if Some(q) == root {
                break;
            }
            p = q;
        }
        false
    }

    /// `mem_cgroup_reclaimable(memcg, noswap = false)`: the group's own lruvecs hold file
    /// pages, or anonymous pages and there is swap.
    fn reclaimable(k: &Kernel, mc: usize) -> bool {
        use super::page::Lru;
        let (mut file, mut anon) = (0, 0);
        for z in &k.zones {
            let lv = z.mem_cgroup_lruvec(mc);
            file += lv.size(Lru::InactiveFile) + lv.size(Lru::ActiveFile);
            anon += lv.size(Lru::InactiveAnon) + lv.size(Lru::ActiveAnon);
        }
        file > 0 || (anon > 0 && k.swap.total() > 0)
    }
}

/// `mem_cgroup_soft_limit_reclaim` (§4.2): before kswapd or direct reclaim shrinks zone
/// `zi`, reclaim from the group furthest over its soft limit there, moving on to the next
/// only while nothing at all comes back. Returns (reclaimed, scanned); neither is in
/// vmstat. Order > 0 never does it.
pub async fn soft_limit_reclaim(w: &World, zi: usize, order: u32, kswapd: bool) -> (u64, u64) {
    {
        let k = w.borrow();
        if order > 0
            || k.memcg.disabled()
            || k.memcg.soft_limit_tree[zi].is_empty()
            || k.sw.on(Switch::SoftReclaimInShrinkZone)
        {
            return (0, 0);
        }
    }
    let (mut reclaimed, mut scanned) = (0, 0);
    let mut next: Option<usize> = None;
    let mut loops = 0;
    loop {
        let mz = match next.take() {
            Some(m) => m,
            None => match w.borrow_mut().memcg.largest_soft_limit_node(zi) {
                Some(m) => m,
                None => break,
            },
        };
        let (got, s) = soft_reclaim(w, mz, zi, kswapd).await;
        reclaimed += got;
        scanned += s;
        let mut k = w.borrow_mut();
        if got == 0 {
            next = k.memcg.largest_soft_limit_node(zi);
        }
        // Back on the tree with its excess now (off it if none is left).
        k.memcg.remove_exceeded(mz, zi);
        let excess = k.memcg.groups[mz].res.soft_limit_excess();
        k.memcg.insert_exceeded(mz, zi, excess);
        loops += 1;
        if reclaimed > 0 || next.is_none() || loops > MEM_CGROUP_MAX_SOFT_LIMIT_RECLAIM_LOOPS {
            // A group taken as `next` and not reclaimed stays off the tree until its
            // next event, as in the kernel.
            break;
        }
    }
    (reclaimed, scanned)
}

/// `mem_cgroup_soft_reclaim` (§4.3): rounds over `root`'s subtree, zone `zi` only, until a
/// quarter of its excess at entry has come back or its excess is gone; at most 100 rounds,
/// and none more after two that gave nothing.
async fn soft_reclaim(w: &World, root: usize, zi: usize, kswapd: bool) -> (u64, u64) {
    let (excess, len, mut pos) = {
        let k = w.borrow();
        let g = &k.memcg.groups[root];
        (
            g.res.soft_limit_excess(),
            g.walk.len(),
            g.reclaim_iter[zi][0],
        )
    };
    let (mut total, mut scanned) = (0, 0);
    let mut rounds = 0;
    loop {
        if pos >= len {
            // mem_cgroup_iter ran off the end: a round is complete.
            pos = 0;
            rounds += 1;
            if rounds >= 2
                && (total == 0 || total >= excess >> 2 || rounds > MEM_CGROUP_MAX_RECLAIM_LOOPS)
            {
                break;
            }
            continue;
        }
        let victim = w.borrow().memcg.groups[root].walk[pos];
        pos += 1;
        if !MemCgroups::reclaimable(&w.borrow(), victim) {
            continue;
        }
        let (r, s) = vmscan::mem_cgroup_shrink_node_zone(w, victim, zi, kswapd).await;
        total += r;
        scanned += s;
        if w.borrow().memcg.groups[root].res.soft_limit_excess() == 0 {
            break;
        }
        if w.borrow().fatal.is_some() {
            break;
        }
    }
    w.borrow_mut().memcg.groups[root].reclaim_iter[zi][0] = pos % len.max(1);
    (total, scanned)
}

/// Pre-order of `root`'s subtree (just `root` when not `deep`).
fn preorder(g: &[MemCgroup], root: usize, deep: bool, out: &mut Vec<usize>) {
    out.push(root);
    if !deep {
        return;
    }
    for (i, c) in g.iter().enumerate() {
        if c.parent == Some(root) {
            preorder(g, i, true, out);
        }
    }
}

/// `mem_cgroup_from_task`: the group of the running task.
#[inline]
pub fn current_memcg(k: &Kernel) -> usize {
    if k.memcg.disabled() {
        return 0;
    }
    k.sched.task_cgroup(k.sched.current()) as usize
}

/// The group of an mm's owner (`mm->owner`); the root for an mm without one.
#[inline]
pub fn mm_memcg(k: &Kernel, mm: usize) -> usize {
    if k.memcg.disabled() {
        return 0;
    }
    k.mms[mm]
        .task
        .map_or(0, |t| k.sched.task_cgroup(t) as usize)
}

/// `__mem_cgroup_commit_charge`: `pfn`, off the LRU, becomes `mc`'s, anonymous (`rss`) or
/// page cache. Its charge comes from the group's stock, which `mem_cgroup_try_charge`
/// filled; a page with none there is charged regardless of the limit (the kernel's bypass).
pub fn commit_charge(k: &mut Kernel, pfn: Pfn, mc: usize, rss: bool) {
    if k.memcg.disabled() {
        return;
    }
    debug_assert!(
        !k.pages.test(pfn, super::page::PG_LRU),
        "charging pfn {pfn} on an LRU list"
    );
    let zi = k.page_zone(pfn);
    let cg = &mut k.memcg;
    if cg.pc[pfn as usize] & PCG_USED != 0 {
        return;
    }
    cg.pc[pfn as usize] = PCG_USED | if rss { PCG_RSS } else { 0 } | mc as u16;
    let g = &mut cg.groups[mc];
    if rss {
        g.stat.rss += 1;
    } else {
        g.stat.cache += 1;
    }
    g.stat.pgpgin += 1;
    if mc == 0 {
        return;
    }
    if g.stock > 0 {
        g.stock -= 1;
    } else {
        cg.force_charge(mc, 1);
    }
    cg.check_events(mc, zi);
}

/// Clear a charged page's `page_cgroup` and take it out of its group's stat; `None` if it
/// was not charged.
fn clear_page_cgroup(cg: &mut MemCgroups, pfn: Pfn) -> Option<usize> {
    let pc = cg.pc.get_mut(pfn as usize)?;
    if *pc & PCG_USED == 0 {
        return None;
    }
    let mc = (*pc & PCG_GROUP) as usize;
    let rss = std::mem::take(pc) & PCG_RSS != 0;
    let g = &mut cg.groups[mc];
    if rss {
        g.stat.rss -= 1;
    } else {
        g.stat.cache -= 1;
    }
    g.stat.pgpgout += 1;
    Some(mc)
}

/// The page `pfn` leaves its group (`__mem_cgroup_uncharge_common`), at its free.
pub fn uncharge_page(k: &mut Kernel, pfn: Pfn) {
    if k.memcg.disabled() {
        return;
    }
    let zi = k.page_zone(pfn);
    let cg = &mut k.memcg;
    if let Some(mc) = clear_page_cgroup(cg, pfn) {
        if mc != 0 {
            cg.res_uncharge(mc, 1, true);
        }
        cg.check_events(mc, zi);
    }
}

/// `mem_cgroup_uncharge_swapcache(swapout)`: reclaim frees a swap-cache page whose slot
/// holds its data. `res` lets it go; `memsw` keeps it, recorded against `slot` until the
/// slot is freed.
pub fn uncharge_swapcache(k: &mut Kernel, pfn: Pfn, slot: u32) {
    if k.memcg.disabled() {
        return;
    }
    let zi = k.page_zone(pfn);
    let cg = &mut k.memcg;
    let Some(mc) = clear_page_cgroup(cg, pfn) else {
        return;
    };
    cg.check_events(mc, zi);
    cg.groups[mc].stat.swap += 1;
    cg.swap_cgroup[slot as usize] = mc as u16 + 1;
    if mc != 0 {
        cg.res_uncharge(mc, 1, false);
    }
}

/// `mem_cgroup_uncharge_swap`: a slot is freed; the group it was recorded against lets go
/// of its `memsw` charge.
pub fn uncharge_swap(k: &mut Kernel, slot: u32) {
    let cg = &mut k.memcg;
    let Some(rec) = cg.swap_cgroup.get_mut(slot as usize) else {
        return;
    };
    if *rec == 0 {
        return;
    }
    let mc = (*rec - 1) as usize;
    *rec = 0;
    cg.groups[mc].stat.swap -= 1;
    if mc != 0 {
        cg.memsw_uncharge(mc, 1);
    }
}

/// The group a swap-in of `slot` charges: the one its data was charged to when swapped
/// out (swap accounting), else the faulting task's.
pub fn swapin_memcg(k: &Kernel, slot: u32) -> usize {
    match k.memcg.swap_cgroup.get(slot as usize) {
        Some(&rec) if rec != 0 => (rec - 1) as usize,
        _ => current_memcg(k),
    }
}

/// `mem_cgroup_commit_charge_swapin`: the page read back for `slot` is charged, and the
/// slot's record lets go of its `memsw` charge, which the page now carries.
pub fn commit_charge_swapin(k: &mut Kernel, pfn: Pfn, slot: u32) {
    if k.memcg.disabled() {
        return;
    }
    let mc = swapin_memcg(k, slot);
    commit_charge(k, pfn, mc, true);
    uncharge_swap(k, slot);
}

/// `__mem_cgroup_try_charge` (§2.2): make sure `nr` pages are charged to `mc` ahead of
/// their commit, charging a batch into its stock, reclaiming within the group when a limit
/// stops it, and calling the group's OOM killer when reclaim cannot make room.
pub async fn try_charge(w: &World, mc: usize, nr: u64) -> Result<(), AllocError> {
    if mc == 0 {
        return Ok(());
    }
    let mut oom_retries = MEM_CGROUP_RECLAIM_RETRIES;
    let mut batch = nr.max(CHARGE_BATCH);
    loop {
        let over = {
            let mut k = w.borrow_mut();
            if k.sched.is_killed(k.sched.current()) {
                return Err(AllocError::Killed);
            }
            if k.memcg.groups[mc].stock >= nr {
                return Ok(());
            }
            match k.memcg.res_charge(mc, batch) {
                Ok(()) => {
                    k.memcg.groups[mc].stock += batch;
                    return Ok(());
                }
                Err(over) => over,
            }
        };
        if batch > nr {
            // Never reclaim for the optional part of the batch (CHARGE_RETRY).
            batch = nr;
            continue;
        }
        let reclaimed = mem_cgroup_reclaim(w, over).await;
        {
            let k = w.borrow();
            if k.memcg.groups[over].res.margin() >= nr || (nr <= COSTLY_PAGES && reclaimed > 0) {
                continue;
            }
        }
        if oom_retries > 0 {
            oom_retries -= 1;
            continue;
        }
        mem_cgroup_out_of_memory(w, over).await?;
        oom_retries = MEM_CGROUP_RECLAIM_RETRIES;
    }
}

/// `mem_cgroup_newpage_charge` of a transparent huge page (3.x): `nr` pages at once, with
/// no batch and no OOM killer. A group at its limit reclaims once (`mem_cgroup_do_charge`
/// with a request above the batch) and the charge fails unless that made room: the fault
/// then falls back to small pages, and khugepaged gives up the collapse.
pub async fn try_charge_thp(w: &World, mc: usize, nr: u64) -> Result<(), usize> {
    if mc == 0 {
        return Ok(());
    }
    for attempt in 0..2 {
        let over = {
            let mut k = w.borrow_mut();
            match k.memcg.res_charge(mc, nr) {
                Ok(()) => {
                    k.memcg.groups[mc].stock += nr;
                    return Ok(());
                }
                Err(over) => over,
            }
        };
        if attempt == 1 {
            return Err(over);
        }
        mem_cgroup_reclaim(w, over).await;
    }
    unreachable!("the loop returns")
}

/// `__mem_cgroup_cancel_charge`: give back `nr` pages charged by [`try_charge_thp`] that no
/// page took.
pub fn cancel_charge(k: &mut Kernel, mc: usize, nr: u64) {
    if mc == 0 {
        return;
    }
    let cg = &mut k.memcg;
    cg.groups[mc].stock -= nr;
    cg.res_uncharge(mc, nr, true);
}

/// `mem_cgroup_reclaim`: up to 100 rounds of `try_to_free_mem_cgroup_pages` until the
/// group has room, or two rounds in a row free nothing.
pub async fn mem_cgroup_reclaim(w: &World, mc: usize) -> u64 {
    let mut total = 0;
    for lp in 0..MEM_CGROUP_MAX_RECLAIM_LOOPS {
        if lp > 0 {
            // drain_all_stock_async: the group's stock goes back.
            let mut k = w.borrow_mut();
            drain_stock(&mut k, mc);
        }
        total += vmscan::try_to_free_mem_cgroup_pages(w, mc).await;
        let k = w.borrow();
        if k.memcg.groups[mc].res.margin() > 0 || (lp > 0 && total == 0) {
            break;
        }
    }
    total
}

/// `drain_stock` for `mc` and the groups under it: uncharge what they hold ahead of use.
pub fn drain_stock(k: &mut Kernel, mc: usize) {
    let cg = &mut k.memcg;
    for i in 0..cg.groups[mc].walk.len() {
        let c = cg.groups[mc].walk[i];
        let s = std::mem::take(&mut cg.groups[c].stock);
        if s > 0 && c != 0 {
            cg.res_uncharge(c, s, true);
        }
    }
}

/// `mem_cgroup_out_of_memory` (3.3-3.11's `mem_cgroup_handle_oom`): kill the task of
/// `over`'s subtree with the largest footprint; the charging task, if it is the victim,
/// fails its charge. Otherwise it waits a jiffy for the victim to go.
async fn mem_cgroup_out_of_memory(w: &World, over: usize) -> Result<(), AllocError> {
    {
        let mut k = w.borrow_mut();
        let in_subtree = |t| {
            k.memcg.groups[over]
                .walk
                .contains(&(k.sched.task_cgroup(t) as usize))
        };
        let Some(v) = super::oom_kill::select_bad_process(&k, in_subtree) else {
            return Err(AllocError::NoMemory);
        };
        let task = k.mms[v].task.expect("a victim has a task");
        if !k.sched.is_killed(task) {
            super::oom_kill::oom_kill_process(&mut k, v);
        }
        if task == k.sched.current() {
            return Err(AllocError::Killed);
        }
    }
    let timer = w.borrow().wq.timer;
    crate::engine::wait_event(w, timer, Some(crate::engine::JIFFY), true).await;
    Ok(())
}

#[cfg(test)]
#[path = "memcontrol/tests.rs"]
mod tests;
