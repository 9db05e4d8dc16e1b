//! Page reclaim (`mm/vmscan.c`): kswapd, direct reclaim, LRU scanning, the writeback stall
//! decisions and slab shrinking, as 3.9 has them and as the kswapd series (KS) and its
//! follow-up (LD) change them. `kernel-reclaim.md` §2.5-§4.9 is the specification; each
//! switch of `presets.rs` is tested at the one place its patch changed.
//!
//! The call chain reads as in the kernel: `kswapd` → `balance_pgdat` → `kswapd_shrink_zone`
//! → `shrink_zone` → `shrink_lruvec` → `shrink_list` → `shrink_{active,inactive}_list` →
//! `shrink_page_list`; and `try_to_free_pages` → `do_try_to_free_pages` → `shrink_zones` →
//! `shrink_zone`. Functions that may sleep are `async`. kswapd and `balance_pgdat` are in
//! `vmscan/kswapd.rs`, the shrink functions here.

use super::compaction::{self, CompactResult};
use super::fs_ops::{page_aops, Release, WritePage, WritebackControl};
use super::memcontrol;
use super::mmzone::{zone_flags::*, MAX_NR_ZONES, ZONE_NORMAL};
use super::page::*;
use super::page_alloc::{zone_watermark_ok, zonelist};
use super::vmstat::{VmEvent, ZoneStat};
use super::{
    backing_dev, invariants, memory, rmap, slab, swap, swapfile, trace, Gfp, Kernel, World,
};
use crate::calibration::*;
use crate::engine::{self, CpuMode, Nanos, HZ_10};
use crate::presets::Switch;

/// `DEF_PRIORITY`: scan 1/4096 of each list at first.
pub const DEF_PRIORITY: i32 = 12;
/// `SWAP_CLUSTER_MAX`: reclaim batch and direct-reclaim target.
pub const SWAP_CLUSTER_MAX: u64 = 32;
/// `KSWAPD_ZONE_BALANCE_GAP_RATIO`.
pub const KSWAPD_ZONE_BALANCE_GAP_RATIO: u64 = 100;

/// One reclaim invocation's intent and progress (`struct scan_control`).
#[derive(Clone, Debug)]
pub struct ScanControl {
    /// Pages looked at by `shrink_page_list` in this pass (doubled for mapped pages).
    pub nr_scanned: u64,
    /// Pages freed so far.
    pub nr_reclaimed: u64,
    /// How many pages to free before stopping.
    pub nr_to_reclaim: u64,
    /// May dirty pages be written?
    pub may_writepage: bool,
    /// May mapped pages be unmapped?
    pub may_unmap: bool,
    /// May anonymous pages be swapped?
    pub may_swap: bool,
    /// Scan `size >> priority` of each list.
    pub priority: i32,
    /// Allocation order reclaim is for.
    pub order: u32,
    /// The allocation's flags.
    pub gfp: Gfp,
    /// `current_is_kswapd()`.
    pub kswapd: bool,
    /// CPU time used and not yet charged to the reclaiming task.
    pub cpu: Nanos,
    /// `sc->reclaim_mode` of the kernels before c53919ad (3.0-3.4); unused once lumpy
    /// reclaim is removed.
    pub reclaim_mode: ReclaimMode,
    /// `RECLAIM_MODE_SYNC`: the batch's second, synchronous pass waits on writeback.
    pub reclaim_sync: bool,
    /// `target_mem_cgroup`: the group limit reclaim works for (`None`: global reclaim).
    pub target_mem_cgroup: Option<usize>,
    /// The group whose lruvec in the zone being shrunk is scanned (the kernel passes the
    /// lruvec itself).
    pub memcg: usize,
}

/// `reclaim_mode_t` with compaction built in (3.0-3.4): `RECLAIM_MODE_LUMPYRECLAIM` is the
/// mode of kernels without `CONFIG_COMPACTION`, which mmsim does not model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReclaimMode {
    /// `RECLAIM_MODE_SINGLE`: reclaim single pages.
    Single,
    /// `RECLAIM_MODE_COMPACTION`: free pages for compaction (reclaim/compaction).
    Compaction,
}

impl ScanControl {
    pub(crate) fn new(gfp: Gfp, order: u32, kswapd: bool, laptop_mode: bool) -> ScanControl {
        ScanControl {
            nr_scanned: 0,
            nr_reclaimed: 0,
            nr_to_reclaim: if kswapd { u64::MAX } else { SWAP_CLUSTER_MAX },
            may_writepage: !laptop_mode,
            may_unmap: true,
            may_swap: true,
            priority: DEF_PRIORITY,
            order,
            gfp,
            kswapd,
            cpu: 0,
            reclaim_mode: ReclaimMode::Single,
            reclaim_sync: false,
            target_mem_cgroup: None,
            memcg: 0,
        }
    }

    /// `set_reclaim_mode` (before c53919ad): compaction mode for a costly order, or for any
    /// order > 0 once the priority has dropped below 10; single pages otherwise.
    pub fn set_reclaim_mode(&mut self, sync: bool) {
        if self.order > super::page_alloc::PAGE_ALLOC_COSTLY_ORDER
            || (self.order > 0 && self.priority < DEF_PRIORITY - 2)
        {
            self.reclaim_mode = ReclaimMode::Compaction;
            self.reclaim_sync = sync;
        } else {
            self.reset_reclaim_mode();
        }
    }

    /// `reset_reclaim_mode`: single pages, asynchronous.
    pub fn reset_reclaim_mode(&mut self) {
        self.reclaim_mode = ReclaimMode::Single;
        self.reclaim_sync = false;
    }

    /// `global_reclaim(sc)`: no memory cgroup target.
    #[inline]
    pub fn global(&self) -> bool {
        self.target_mem_cgroup.is_none()
    }
}

/// The pages one `shrink_inactive_list` call isolated: `SWAP_CLUSTER_MAX` kept on the stack
/// so a batch allocates nothing; lumpy isolation's blocks (kernels before fe2c2a10) spill
/// into `more`.
#[derive(Clone, Debug)]
pub struct PageList {
    pfns: [Pfn; SWAP_CLUSTER_MAX as usize],
    more: Vec<Pfn>,
    len: usize,
}

impl Default for PageList {
    fn default() -> Self {
        PageList {
            pfns: [NIL; SWAP_CLUSTER_MAX as usize],
            more: Vec::new(),
            len: 0,
        }
    }
}

impl PageList {
    const INLINE: usize = SWAP_CLUSTER_MAX as usize;

    fn push(&mut self, pfn: Pfn) {
        if self.len < Self::INLINE {
            self.pfns[self.len] = pfn;
        } else {
            self.more.push(pfn);
        }
        self.len += 1;
    }
    /// The `i`th page.
    pub fn get(&self, i: usize) -> Pfn {
        if i < Self::INLINE {
            self.pfns[i]
        } else {
            self.more[i - Self::INLINE]
        }
    }
    fn set(&mut self, i: usize, pfn: Pfn) {
        if i < Self::INLINE {
            self.pfns[i] = pfn;
        } else {
            self.more[i - Self::INLINE] = pfn;
        }
    }
    fn truncate(&mut self, len: usize) {
        self.len = len;
        self.more.truncate(len.saturating_sub(Self::INLINE));
    }
    /// Pages on the list.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub(crate) fn iter(&self) -> impl Iterator<Item = Pfn> + '_ {
        self.pfns[..self.len.min(Self::INLINE)]
            .iter()
            .chain(self.more.iter())
            .copied()
    }
}

/// What `shrink_page_list` saw, for the stall decisions of its caller.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageListStats {
    pub nr_dirty: u64,
    pub nr_unqueued_dirty: u64,
    pub nr_congested: u64,
    pub nr_writeback: u64,
    pub nr_immediate: u64,
}

/// mmsim: what `shrink_page_list` saw on the file lists over a run, for tests of the
/// stall decisions (3.x exports no counter for these).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReclaimFileTotals {
    /// File pages isolated (`nr_taken` of file batches).
    pub nr_taken: u64,
    /// The batches' counts, summed.
    pub stats: PageListStats,
}

impl PageListStats {
    /// Add another batch's counts.
    pub fn add(&mut self, o: &PageListStats) {
        self.nr_dirty += o.nr_dirty;
        self.nr_unqueued_dirty += o.nr_unqueued_dirty;
        self.nr_congested += o.nr_congested;
        self.nr_writeback += o.nr_writeback;
        self.nr_immediate += o.nr_immediate;
    }
}

// ---------------------------------------------------------------------------------------
// Sleeping: congestion_wait, wait_iff_congested, CPU time.

/// Charge the CPU time reclaim has used so far to the current task.
async fn charge(w: &World, sc: &mut ScanControl) {
    let ns = std::mem::take(&mut sc.cpu);
    engine::run_cpu(w, ns, CpuMode::System).await;
}

/// Charge CPU time once a quantum has built up.
async fn maybe_charge(w: &World, sc: &mut ScanControl) {
    if sc.cpu >= CPU_QUANTUM_NS {
        charge(w, sc).await;
    }
}

/// `congestion_wait(BLK_RW_ASYNC, timeout)`: sleep until a write completes on a queue that
/// is not congested, or `timeout`.
pub async fn congestion_wait(w: &World, timeout: Nanos) {
    let (q, start) = {
        let k = w.borrow();
        (k.wq.congestion_async, k.sched.now())
    };
    engine::wait_event(w, q, Some(timeout), true).await;
    let mut k = w.borrow_mut();
    let slept = k.sched.now() - start;
    trace::writeback_congest_waited(&mut k, "writeback_congestion_wait", timeout, slept);
}

/// `wait_iff_congested(zone, BLK_RW_ASYNC, timeout)`: sleep like `congestion_wait` only if
/// some BDI is write-congested and the zone is flagged ZONE_CONGESTED; otherwise return.
pub async fn wait_iff_congested(w: &World, zone: usize, timeout: Nanos) {
    let sleep = {
        let k = w.borrow();
        k.nr_bdi_congested_async > 0 && k.zones[zone].test_flag(ZONE_CONGESTED)
    };
    let start = w.borrow().sched.now();
    if sleep {
        let q = w.borrow().wq.congestion_async;
        engine::wait_event(w, q, Some(timeout), true).await;
    }
    let mut k = w.borrow_mut();
    let slept = k.sched.now() - start;
    trace::writeback_congest_waited(&mut k, "writeback_wait_iff_congested", timeout, slept);
}

// ---------------------------------------------------------------------------------------
// Zone predicates.

/// `zone_reclaimable_pages`: file pages, plus anon pages while swap has free slots.
pub fn zone_reclaimable_pages(k: &Kernel, zi: usize) -> u64 {
    let z = &k.zones[zi];
    let mut n = z.stat(ZoneStat::nr_active_file) + z.stat(ZoneStat::nr_inactive_file);
    if k.swap.nr_free() > 0 {
        n += z.stat(ZoneStat::nr_active_anon) + z.stat(ZoneStat::nr_inactive_anon);
    }
    n
}

/// `zone_reclaimable`: scanned fewer than six times its reclaimable pages since a page was
/// last freed in it.
pub fn zone_reclaimable(k: &Kernel, zi: usize) -> bool {
    k.zones[zi].pages_scanned < zone_reclaimable_pages(k, zi) * 6
}

/// `zone_balanced` (3.7+): the high watermark (plus `gap`) is met for `order`, and for
/// order > 0 compaction would have the free pages to run.
pub fn zone_balanced(k: &Kernel, zi: usize, order: u32, gap: u64, classzone: usize) -> bool {
    let z = &k.zones[zi];
    if !zone_watermark_ok(z, order, z.high_wmark() + gap, classzone, 0) {
        return false;
    }
    // 60cefed4 (3.7): before it, kswapd's tests were the watermark alone.
    order == 0
        || !k.sw.on(Switch::KswapdZoneBalancedForCompaction)
        || compaction::compaction_suitable(k, zi, Some(order)) != CompactResult::Skipped
}

/// The order kswapd checks a zone at (`testorder`, 3.4+ `fe2c2a10`): 0 once compaction could
/// run there, so kswapd reclaims single pages and leaves contiguity to compaction.
pub fn kswapd_testorder(k: &Kernel, zi: usize, order: u32) -> u32 {
    if order > 0
        && k.sw.on(Switch::ReclaimAtOrder0WithCompaction)
        && compaction::compaction_suitable(k, zi, Some(order)) != CompactResult::Skipped
    {
        0
    } else {
        order
    }
}

/// Whether no zone up to `end_zone` has a free block of `order` at its low watermark: then
/// kswapd compacts (`zones_need_compaction`, `pgdat_needs_compaction`).
pub fn pgdat_needs_compaction(k: &Kernel, order: u32, end_zone: usize, classzone: usize) -> bool {
    order > 0
        && k.sw.on(Switch::KswapdCompactPgdat)
        && (0..=end_zone).all(|i| {
            let z = &k.zones[i];
            !z.populated() || !zone_watermark_ok(z, order, z.low_wmark(), classzone, 0)
        })
}

/// Where the per-zone checks that ended a high-order `balance_pgdat` before c702418f (3.7)
/// send kswapd back to `loop_again`: `Some(order)` to restart at, or `None` to go on to
/// compaction. A zone that compaction would skip for want of free pages (with fe2c2a10)
/// restarts at the same order; a zone below its order-0 high watermark restarts at order 0.
/// A zone that passes loses ZONE_CONGESTED.
pub fn kswapd_recheck_zones(
    k: &mut Kernel,
    order: u32,
    end_zone: usize,
    priority: i32,
) -> Option<u32> {
    if order == 0 || k.sw.on(Switch::KswapdNoPerZoneCompactionRecheck) {
        return None;
    }
    for i in 0..=end_zone {
        let z = &k.zones[i];
        if !z.populated() || (z.all_unreclaimable && priority != DEF_PRIORITY) {
            continue;
        }
        if k.sw.on(Switch::ReclaimAtOrder0WithCompaction)
            && compaction::compaction_suitable(k, i, Some(order)) == CompactResult::Skipped
        {
            return Some(order);
        }
        if !zone_watermark_ok(z, 0, z.high_wmark(), 0, 0) {
            return Some(0);
        }
        k.zones[i].clear_flag(ZONE_CONGESTED);
    }
    None
}

/// kswapd's balance gap: min(low watermark, 1% of the zone).
pub fn balance_gap(k: &Kernel, zi: usize) -> u64 {
    let z = &k.zones[zi];
    z.low_wmark()
        .min(z.managed_pages.div_ceil(KSWAPD_ZONE_BALANCE_GAP_RATIO))
}

/// `pgdat_balanced` (`kernel-reclaim.md` §2.5).
pub fn pgdat_balanced(k: &Kernel, order: u32, classzone: usize) -> bool {
    let mut managed = 0;
    let mut balanced = 0;
    for i in 0..=classzone {
        let z = &k.zones[i];
        if !z.populated() {
            continue;
        }
        managed += z.managed_pages;
        if z.all_unreclaimable || zone_balanced(k, i, order, 0, i) {
            balanced += z.managed_pages;
        } else if order == 0 {
            return false;
        }
    }
    order == 0 || balanced >= managed / 4
}

/// `pfmemalloc_watermark_ok`: free pages of the zones up to Normal above half their summed
/// min watermarks; wakes kswapd when they are not.
fn pfmemalloc_watermark_ok(k: &mut Kernel) -> bool {
    let mut reserve = 0;
    let mut free = 0;
    for z in k.zones.iter().take(ZONE_NORMAL + 1) {
        reserve += z.min_wmark();
        free += z.free_pages();
    }
    let ok = free > reserve / 2;
    if !ok && k.pgdat.kswapd_sleeping {
        k.pgdat.classzone_idx = k.pgdat.classzone_idx.min(ZONE_NORMAL);
        let q = k.wq.kswapd_wait;
        k.sched.wake_all(q);
    }
    ok
}

/// `inactive_anon_is_low` of group `memcg`'s lruvec in zone `zi`: without swap, never;
/// else inactive x ratio < active. The ratio is the zone's, or with memcg on
/// (`mem_cgroup_inactive_anon_is_low`) the lruvec's own, from its anon size.
pub fn inactive_anon_is_low(k: &Kernel, zi: usize, memcg: usize) -> bool {
    if k.swap.total() == 0 {
        return false;
    }
    let z = &k.zones[zi];
    let lv = z.mem_cgroup_lruvec(memcg);
    let (inactive, active) = (lv.size(Lru::InactiveAnon), lv.size(Lru::ActiveAnon));
    let ratio = if k.memcg.disabled() {
        z.inactive_ratio
    } else {
        let gb = (inactive + active) >> (30 - 12);
        if gb > 0 {
            super::page_alloc::int_sqrt(10 * gb)
        } else {
            1
        }
    };
    inactive * ratio < active
}

/// `inactive_file_is_low`: more active than inactive file pages.
pub fn inactive_file_is_low(k: &Kernel, zi: usize, memcg: usize) -> bool {
    let lv = k.zones[zi].mem_cgroup_lruvec(memcg);
    lv.size(Lru::ActiveFile) > lv.size(Lru::InactiveFile)
}

fn inactive_list_is_low(k: &Kernel, zi: usize, memcg: usize, file: bool) -> bool {
    if file {
        inactive_file_is_low(k, zi, memcg)
    } else {
        inactive_anon_is_low(k, zi, memcg)
    }
}

// ---------------------------------------------------------------------------------------
// get_scan_count

/// How `get_scan_count` balanced the lists (`enum scan_balance`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanBalance {
    Equal,
    Fract,
    File,
    Anon,
}

/// `get_scan_count` (3.9, `kernel-reclaim.md` §3.4; 3.0's without fe35004f and e9868505):
/// pages to scan on each evictable list, indexed by [`Lru`]. Decays the zone's rotation
/// statistics as the kernel does.
pub fn get_scan_count(k: &mut Kernel, zi: usize, sc: &ScanControl) -> ([u64; 4], ScanBalance) {
    // vmscan_swappiness: the target group's, for limit reclaim.
    let swappiness = match sc.target_mem_cgroup {
        Some(mc) => k.memcg.groups[mc].swappiness as u64,
        None => k.vm.swappiness as u64,
    };
    let no_swap = k.swap.nr_free() == 0;
    // Before fe35004f the weights carry a + 1 and priority 0 ignores swappiness.
    let fe35004f = k.sw.on(Switch::SwappinessZeroAvoidsSwap);
    let plenty = k.sw.on(Switch::OnlyEvictFileWhenPlenty);
    let small_targets = k.sw.on(Switch::ForceScanSmallTargets);
    let z = &mut k.zones[zi];
    let lv = z.mem_cgroup_lruvec(sc.memcg);
    let anon = lv.size(Lru::ActiveAnon) + lv.size(Lru::InactiveAnon);
    let file = lv.size(Lru::ActiveFile) + lv.size(Lru::InactiveFile);
    let force_scan = if small_targets {
        // 246e87a9 (3.0): a small target, for kswapd or limit reclaim.
        (anon + file) >> sc.priority < SWAP_CLUSTER_MAX && (sc.kswapd || !sc.global())
    } else {
        (sc.kswapd && z.all_unreclaimable) || !sc.global()
    };
    let mut fraction = [1u64, 1];
    let mut denominator = 1u64;
    let balance = if !sc.may_swap || no_swap || (!sc.global() && swappiness == 0) {
        ScanBalance::File
    } else if sc.priority == 0 && (swappiness > 0 || !fe35004f) {
        ScanBalance::Equal
    } else if sc.global() && file + z.free_pages() <= z.high_wmark() {
        ScanBalance::Anon
    } else if plenty && lv.size(Lru::ActiveFile) <= lv.size(Lru::InactiveFile) {
        // !inactive_file_is_low: enough inactive cache, leave anon alone (e9868505).
        ScanBalance::File
    } else {
        let lv = z.mem_cgroup_lruvec_mut(sc.memcg);
        if lv.recent_scanned[0] > anon / 4 {
            lv.recent_scanned[0] /= 2;
            lv.recent_rotated[0] /= 2;
        }
        if lv.recent_scanned[1] > file / 4 {
            lv.recent_scanned[1] /= 2;
            lv.recent_rotated[1] /= 2;
        }
        let plus = u64::from(!fe35004f);
        let ap = (swappiness + plus) * (lv.recent_scanned[0] + 1) / (lv.recent_rotated[0] + 1);
        let fp =
            (200 - swappiness + plus) * (lv.recent_scanned[1] + 1) / (lv.recent_rotated[1] + 1);
        fraction = [ap, fp];
        denominator = ap + fp + 1;
        ScanBalance::Fract
    };
    let lv = z.mem_cgroup_lruvec(sc.memcg);
    let mut nr = [0u64; 4];
    for lru in Lru::EVICTABLE {
        let file = lru.is_file();
        let size = lv.size(lru);
        let mut scan = size >> sc.priority;
        if scan == 0 && force_scan && !small_targets {
            scan = size.min(SWAP_CLUSTER_MAX);
        }
        scan = match balance {
            ScanBalance::Equal => scan,
            ScanBalance::Fract => {
                (scan as u128 * fraction[file as usize] as u128 / denominator as u128) as u64
            }
            ScanBalance::File if !file => 0,
            ScanBalance::Anon if file => 0,
            _ => scan,
        };
        // 3.0 forces after the balance, whatever the list holds; anon only with swap.
        if scan == 0 && force_scan && small_targets && (file || (sc.may_swap && !no_swap)) {
            scan = SWAP_CLUSTER_MAX;
        }
        nr[lru as usize] = scan;
    }
    (nr, balance)
}

// ---------------------------------------------------------------------------------------
// Isolation and the active list

/// `isolate_lru_pages`: take up to `nr_to_scan` pages from the tail of `lru`; pages the mode
/// excludes go back to the head. Returns pages scanned.
fn isolate_lru_pages(
    k: &mut Kernel,
    nr_to_scan: u64,
    zi: usize,
    lru: Lru,
    sc: &ScanControl,
    out: &mut PageList,
) -> u64 {
    let clean_only = !sc.may_writepage;
    let unmapped_only = !sc.may_unmap;
    // Before fe2c2a10 every reclaim for order > 0 also takes the block around each page.
    let lumpy_order =
        if k.sw.on(Switch::RemoveLumpyReclaim) || k.sw.on(Switch::ReclaimAtOrder0WithCompaction) {
            0
        } else {
            sc.order
        };
    let mut scan = 0;
    while scan < nr_to_scan {
        let pfn = k.zones[zi].mem_cgroup_lruvec(sc.memcg).lists[lru as usize].tail;
        if pfn == NIL {
            break;
        }
        scan += 1;
        k.pages.prefetch_prev_lru(pfn);
        let list = &mut k.zones[zi].mem_cgroup_lruvec_mut(sc.memcg).lists[lru as usize];
        list.del(&mut k.pages, pfn);
        if lru_page_busy(k, pfn, clean_only, unmapped_only) {
            k.zones[zi].mem_cgroup_lruvec_mut(sc.memcg).lists[lru as usize].add(&mut k.pages, pfn);
            continue;
        }
        take_lru_page(k, zi, lru, pfn, out);
        if lumpy_order > 0 {
            scan +=
                isolate_lumpy_block(k, zi, lru, pfn, lumpy_order, clean_only, unmapped_only, out);
        }
    }
    k.pages_isolated += out.len() as u64;
    if trace::enabled(k) {
        let mode = (clean_only as u32) | ((unmapped_only as u32) << 1);
        trace::mm_vmscan_lru_isolate(
            k,
            mode,
            sc.order,
            nr_to_scan,
            scan,
            out.len() as u64,
            lru.is_file(),
        );
    }
    scan
}

/// `__isolate_lru_page`'s -EBUSY: a page the isolation mode excludes.
#[inline]
fn lru_page_busy(k: &Kernel, pfn: Pfn, clean_only: bool, unmapped_only: bool) -> bool {
    let f = k.pages.flags[pfn as usize];
    (clean_only && f & (PG_DIRTY | PG_WRITEBACK) != 0) || (unmapped_only && k.pages.mapped(pfn))
}

/// Take a page already unlinked from `lru` onto the reclaimer's list.
#[inline]
fn take_lru_page(k: &mut Kernel, zi: usize, lru: Lru, pfn: Pfn, out: &mut PageList) {
    k.pages.clear(pfn, PG_LRU);
    k.pages.set(pfn, PG_ISOLATED);
    k.zones[zi].mod_stat(super::mmzone::Zone::lru_stat(lru), -1);
    k.pages.prefetch_owner(pfn);
    out.push(pfn);
}

/// Lumpy isolation (before fe2c2a10, `kernel-compaction.md` §4.3): take every other page of
/// the aligned `2^order` block around `pfn` that is on the same list and isolatable. Free
/// frames are passed over; the block is given up at the zone's edge, at an anonymous page
/// when swap is full, and at any page that cannot be taken. Returns the pages taken, which
/// count as scanned.
#[allow(clippy::too_many_arguments)]
fn isolate_lumpy_block(
    k: &mut Kernel,
    zi: usize,
    lru: Lru,
    pfn: Pfn,
    order: u32,
    clean_only: bool,
    unmapped_only: bool,
    out: &mut PageList,
) -> u64 {
    let start = (pfn as usize) & !((1usize << order) - 1);
    let end = (start + (1usize << order)).min(k.pages.flags.len());
    let no_swap = k.swap.nr_free() == 0;
    let mut taken = 0;
    let mut c = start;
    while c < end {
        if c == pfn as usize {
            c += 1;
            continue;
        }
        let cp = c as Pfn;
        if k.page_zone(cp) != zi {
            break;
        }
        let f = k.pages.flags[c];
        if f & PG_BUDDY != 0 {
            // A free block: no references to take.
            c += 1usize << k.pages.mapping[c];
            continue;
        }
        if f == PG_PCP {
            // Free on a CPU's list: no references either.
            c += 1;
            continue;
        }
        if no_swap && f & PG_SWAPBACKED != 0 && f & PG_SWAPCACHE == 0 {
            break;
        }
        if f & PG_LRU == 0
            || k.pages.lru(cp) != lru
            || lru_page_busy(k, cp, clean_only, unmapped_only)
        {
            break;
        }
        let mc = k.memcg.page_lruvec_memcg(cp);
        k.zones[zi].mem_cgroup_lruvec_mut(mc).lists[lru as usize].del(&mut k.pages, cp);
        take_lru_page(k, zi, lru, cp, out);
        taken += 1;
        c += 1;
    }
    taken
}

fn isolated_stat(file: bool) -> ZoneStat {
    if file {
        ZoneStat::nr_isolated_file
    } else {
        ZoneStat::nr_isolated_anon
    }
}

/// `shrink_active_list`: move pages not referenced since the last look to the inactive
/// list; referenced executable file pages stay active (`kernel-reclaim.md` §3.7).
pub fn shrink_active_list(
    k: &mut Kernel,
    nr_to_scan: u64,
    zi: usize,
    lru: Lru,
    sc: &mut ScanControl,
) {
    let file = lru.is_file();
    if !k.sw.on(Switch::RemoveLumpyReclaim) {
        sc.reset_reclaim_mode();
    }
    let mut list = PageList::default();
    let nr_scanned = isolate_lru_pages(k, nr_to_scan.min(SWAP_CLUSTER_MAX), zi, lru, sc, &mut list);
    let nr_taken = list.len() as u64;
    let z = &mut k.zones[zi];
    if sc.global() {
        z.pages_scanned += nr_scanned;
    }
    z.mem_cgroup_lruvec_mut(sc.memcg).recent_scanned[file as usize] += nr_taken;
    z.mod_stat(isolated_stat(file), nr_taken as i64);
    k.count(VmEvent::pgrefill_dma.zone(zi), nr_scanned);
    let mut nr_rotated = 0;
    let mut nr_deactivated = 0;
    for pfn in list.iter() {
        k.pages.clear(pfn, PG_ISOLATED);
        sc.cpu += k.costs.deactivate_page;
        if k.pages.test(pfn, PG_UNEVICTABLE) {
            swap::add_page_to_lru_list(k, pfn, Lru::Unevictable);
            continue;
        }
        let (refs, vm_flags) = rmap::page_referenced(k, pfn);
        if refs > 0 {
            nr_rotated += 1;
            if file && vm_flags & memory::VM_EXEC != 0 {
                swap::add_page_to_lru_list(k, pfn, lru);
                continue;
            }
        }
        k.pages.clear(pfn, PG_ACTIVE);
        swap::add_page_to_lru_list(k, pfn, Lru::of(file, false));
        nr_deactivated += 1;
    }
    let z = &mut k.zones[zi];
    z.mem_cgroup_lruvec_mut(sc.memcg).recent_rotated[file as usize] += nr_rotated;
    z.mod_stat(isolated_stat(file), -(nr_taken as i64));
    k.count(VmEvent::pgdeactivate, nr_deactivated);
}

// ---------------------------------------------------------------------------------------
// shrink_page_list

/// `page_check_references` outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageReferences {
    Activate,
    Keep,
    Reclaim,
    ReclaimClean,
}

/// `page_check_references` (`kernel-reclaim.md` §3.8).
pub fn page_check_references(k: &mut Kernel, pfn: Pfn) -> PageReferences {
    let sw = k.sw;
    let (refs, vm_flags) = rmap::page_referenced(k, pfn);
    let referenced_page = k.pages.test_and_clear(pfn, PG_REFERENCED);
    if vm_flags & memory::VM_LOCKED != 0 {
        return PageReferences::Reclaim;
    }
    let swap_backed = k.pages.test(pfn, PG_SWAPBACKED);
    if refs > 0 {
        if swap_backed {
            return PageReferences::Activate;
        }
        k.pages.set(pfn, PG_REFERENCED);
        let shared = refs > 1 && sw.on(Switch::PromoteSharedFileMappedPages);
        let exec =
            vm_flags & memory::VM_EXEC != 0 && sw.on(Switch::ActivateExecPagesAfterFirstUsage);
        if referenced_page || shared || exec {
            return PageReferences::Activate;
        }
        return PageReferences::Keep;
    }
    if referenced_page && !swap_backed {
        return PageReferences::ReclaimClean;
    }
    PageReferences::Reclaim
}

/// `page_check_dirty_writeback` (LD patch 2): anonymous pages never count; file pages by
/// their flags, as their filesystem's `is_dirty_writeback` hook (LD patches 7 and 8) sees
/// them.
pub fn page_check_dirty_writeback(k: &Kernel, pfn: Pfn) -> (bool, bool) {
    if !k.pages.is_file_cache(pfn) {
        return (false, false);
    }
    let (dirty, writeback) = (k.pages.test(pfn, PG_DIRTY), k.pages.test(pfn, PG_WRITEBACK));
    page_aops(k, pfn).is_dirty_writeback(k, pfn, dirty, writeback)
}

/// `pageout` result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pageout {
    Keep,
    Activate,
    Success,
    Clean,
    /// The page is under writeback and its bio found the device's request pool empty:
    /// `writepage` sleeps in `get_request` before it submits `bio` (`kernel-cfq.md` §2.2).
    WaitForRequest {
        bdi: usize,
        bio: crate::block::Bio,
    },
}

/// `pageout` of a page reclaim has unmapped (`kernel-reclaim.md` §4.4): its mapping's
/// `writepage` (the swap cache's, or the filesystem's) writes it. The swap BDI is never
/// congested; a file page's BDI is, when its queue is. As in the kernel, the page is under
/// writeback before its bio looks for a request, so a write that must sleep for one
/// returns [`Pageout::WaitForRequest`] with the page's fate already settled.
fn pageout(k: &mut Kernel, pfn: Pfn, kswapd: bool) -> Pageout {
    if k.pages.mapped(pfn) {
        return Pageout::Keep;
    }
    let swap = k.pages.test(pfn, PG_SWAPCACHE);
    if swap {
        if !k.pages.test(pfn, PG_DIRTY) {
            return Pageout::Clean;
        }
    } else {
        // may_write_to_queue: kswapd (PF_SWAPWRITE) may write to a congested queue.
        let bdi = super::page_writeback::page_bdi(k, pfn);
        if !kswapd && backing_dev::bdi_write_congested(k, bdi) {
            return Pageout::Keep;
        }
    }
    let a_ops = page_aops(k, pfn);
    if !swap && !kswapd {
        // Only reached before seed 002's patch 1: what its patches 3 and 4 warn about.
        if let Some(site) = a_ops.direct_reclaim_warning(k, pfn) {
            *k.warnings.entry(site).or_default() += 1;
        }
    }
    let wbc = WritebackControl::for_reclaim(kswapd);
    let mut waits = None;
    if a_ops.writepage_declines(k, pfn, &wbc) {
        // clear_page_dirty_for_io, then a writepage that redirties the page: for a dirty,
        // unmapped page the pair leaves its flags, tag and counters as they were (but the
        // dirtying a pre-3.3 redirty counts), so neither is run (mmsim: kswapd meets ext4's delayed-allocation pages by the
        // million). PG_reclaim, set and cleared around the call, ends clear.
        debug_assert!(!swap && k.pages.test(pfn, PG_DIRTY));
        k.pages.clear(pfn, PG_RECLAIM);
        super::page_writeback::account_redirty(k, pfn);
    } else {
        if swap {
            // clear_page_dirty_for_io of a mapping that does not account dirty pages.
            k.pages.clear(pfn, PG_DIRTY);
        } else if !super::page_writeback::clear_page_dirty_for_io(k, pfn) {
            return Pageout::Clean;
        }
        k.pages.set(pfn, PG_RECLAIM);
        let (ino, index) = (
            k.pages.mapping[pfn as usize] as usize,
            k.pages.index[pfn as usize],
        );
        let mut walk = if !swap && a_ops.reclaim_write_clusters() {
            a_ops.writepages_start(k, ino, &wbc)
        } else {
            None
        };
        if let WritePage::Submit { bdi, bio } = a_ops.writepage(k, pfn, &wbc, &mut walk) {
            if !backing_dev::try_submit_bio(k, bdi, bio) {
                waits = Some(Pageout::WaitForRequest { bdi, bio });
            } else if walk.is_some() {
                pageout_cluster(k, a_ops, ino, u64::from(index), &wbc, &mut walk, bdi);
            }
        }
        if walk.is_some() {
            a_ops.writepages_end(k, walk);
        }
    }
    trace::mm_vmscan_writepage(k, pfn, !swap);
    if !k.pages.test(pfn, PG_WRITEBACK) {
        k.pages.clear(pfn, PG_RECLAIM);
    }
    // Counted whether or not the filesystem wrote the page, as the kernel does.
    let zi = k.page_zone(pfn);
    k.zones[zi].mod_stat(ZoneStat::nr_vmscan_write, 1);
    waits.unwrap_or(Pageout::Success)
}

/// `xfs_cluster_write` from `pageout`: the dirty pages after page `index` of `ino` join the
/// write of the page reclaim chose, in its ioend, until a page is missing, clean, locked or
/// under writeback, the file ends, or `SWAP_CLUSTER_MAX` pages (`pageout`'s `nr_to_write`)
/// are taken. mmsim stops early where the device's request pool could make the next bio
/// wait: `pageout` cannot sleep for it (the kernel's would merge into one bio).
fn pageout_cluster(
    k: &mut Kernel,
    a_ops: &'static dyn super::fs_ops::AddressSpaceOps,
    ino: usize,
    index: u64,
    wbc: &WritebackControl,
    walk: &mut super::fs_ops::PageioData,
    bdi: usize,
) {
    let end = k.inodes[ino].size_pages;
    let mut next = index + 1;
    while next < end && next - index <= SWAP_CLUSTER_MAX {
        let Some(p) = super::filemap::find_get_page(k, ino, next) else {
            break;
        };
        let f = k.pages.flags[p as usize];
        if f & PG_DIRTY == 0
            || f & (PG_WRITEBACK | PG_LOCKED) != 0
            || !k.bdis[bdi]
                .queue
                .has_free_request(crate::block::Class::Async)
            || a_ops.writepage_declines(k, p, wbc)
            || !super::page_writeback::clear_page_dirty_for_io(k, p)
        {
            break;
        }
        match a_ops.writepage(k, p, wbc, walk) {
            WritePage::Submit { bdi, bio } => {
                let queued = backing_dev::try_submit_bio(k, bdi, bio);
                assert!(queued, "a free request was checked for");
            }
            _ => break,
        }
        next += 1;
    }
}

/// `shrink_page_list` after a `pageout` that wrote (or declined) the page: a page under
/// writeback or dirty again is kept; None when it is clean and goes on to be freed.
fn after_pageout_success(k: &Kernel, sc: &ScanControl, pfn: Pfn) -> Option<Verdict> {
    if !k.sw.on(Switch::RemoveLumpyReclaim) && k.pages.test(pfn, PG_WRITEBACK) {
        // 3.0's pageout waits for its own write in the synchronous pass; else keep_lumpy.
        if sc.reclaim_sync && !k.sw.on(Switch::LumpyNoSyncPageoutWait) {
            return Some(Verdict::WaitOnWriteback);
        }
        return Some(Verdict::KeepLumpy);
    }
    if k.pages.test(pfn, PG_WRITEBACK) || k.pages.test(pfn, PG_DIRTY) {
        return Some(Verdict::Keep);
    }
    None
}

/// What happens to one page of the list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    Free,
    Keep,
    Activate,
    Cull,
    /// KS patch 7 without LD patch 3: kswapd sleeps inside the loop.
    SleepInLoop,
    /// `pageout` put the page under writeback and its bio found the request pool of
    /// device `bdi` empty: sleep in `get_request` until one is free, submit, and go on.
    WaitForRequest {
        bdi: usize,
        bio: crate::block::Bio,
    },
    /// `releasepage` must sleep (NFS: a COMMIT for direct reclaim) for a page of this inode:
    /// sleep, then look at the page again.
    WaitForRelease(usize),
    /// Lumpy reclaim's `keep_lumpy` (before c53919ad): kept without resetting the reclaim
    /// mode, so the batch may be run again synchronously.
    KeepLumpy,
    /// The synchronous lumpy pass (before c53919ad): `wait_on_page_writeback`, then go on
    /// with the same page.
    WaitOnWriteback,
}

/// An anonymous page whose owner has exited while reclaim or IO held it.
#[inline]
fn page_orphaned(k: &Kernel, pfn: Pfn) -> bool {
    let f = k.pages.flags[pfn as usize];
    f & PG_SWAPBACKED != 0 && f & PG_ANON == 0 && !k.pages.mapped(pfn) && f & PG_SWAPCACHE == 0
}

/// The decision tree of `shrink_page_list` for one page (`kernel-reclaim.md` §4.1, §4.2).
/// `after_wait` resumes after KS's in-loop sleep.
fn shrink_one_page(
    k: &mut Kernel,
    zi: usize,
    sc: &mut ScanControl,
    st: &mut PageListStats,
    pfn: Pfn,
    after_wait: bool,
) -> Verdict {
    let sw = k.sw;
    if !after_wait {
        if k.pages.test(pfn, PG_LOCKED) {
            // trylock_page failed.
            return Verdict::Keep;
        }
        sc.nr_scanned += 1;
        sc.cpu += k.costs.shrink_page;
        let mapped = k.pages.mapped(pfn);
        if mapped {
            sc.cpu += k.costs.rmap_walk;
        }
        if k.pages.test(pfn, PG_UNEVICTABLE) {
            return Verdict::Cull;
        }
        if !sc.may_unmap && mapped {
            return Verdict::Keep;
        }
        // Double the slab pressure for mapped and swap-cache pages.
        if mapped || k.pages.test(pfn, PG_SWAPCACHE) {
            sc.nr_scanned += 1;
        }
    }
    if (page_orphaned(k, pfn) || k.pages.test(pfn, PG_TRUNCATED))
        && !k.pages.test(pfn, PG_WRITEBACK)
    {
        k.pages.clear(pfn, PG_DIRTY | PG_TRUNCATED);
        return Verdict::Free;
    }
    let file = k.pages.is_file_cache(pfn);
    let mut may_enter_fs =
        sc.gfp.has(Gfp::FS) || (k.pages.test(pfn, PG_SWAPCACHE) && sc.gfp.has(Gfp::IO));

    if sw.on(Switch::StallOnDirtyEncountered) && !after_wait {
        let (dirty, writeback) = page_check_dirty_writeback(k, pfn);
        if dirty || writeback {
            st.nr_dirty += 1;
        }
        if dirty && !writeback {
            st.nr_unqueued_dirty += 1;
        }
        // The page's BDI is never congested until the block layer exists (swap never is).
        let bdi_congested =
            file && backing_dev::bdi_write_congested(k, super::page_writeback::page_bdi(k, pfn));
        if bdi_congested
            || (sw.on(Switch::ImmediateReclaimIsCongestion)
                && writeback
                && k.pages.test(pfn, PG_RECLAIM))
        {
            st.nr_congested += 1;
        }
    }

    if k.pages.test(pfn, PG_WRITEBACK) {
        if after_wait {
            // mmsim deviation (see the kswapd_block_on_writeback_fix2 switch): never go on
            // to free a page still under writeback.
            return Verdict::Keep;
        }
        if !sw.on(Switch::RemoveLumpyReclaim) {
            // 3.0-3.4: only the synchronous pass waits; otherwise keep_lumpy.
            st.nr_writeback += 1;
            if sc.reclaim_sync && may_enter_fs {
                return Verdict::WaitOnWriteback;
            }
            return Verdict::KeepLumpy;
        }
        let zone_writeback = k.zones[zi].test_flag(ZONE_WRITEBACK);
        if sw.on(Switch::KswapdBlockOnWriteback)
            && sc.kswapd
            && k.pages.test(pfn, PG_RECLAIM)
            && zone_writeback
        {
            // Case 1: pages cycle through the LRU faster than they are written.
            if sw.on(Switch::StallAfterPageList) {
                st.nr_immediate += 1;
                return Verdict::Keep;
            }
            return Verdict::SleepInLoop;
        }
        // Case 3 (e62e384e, 3.6): limit reclaim meeting a page it marked before waits for
        // its writeback, lest a small group full of writeback go OOM.
        if sw.on(Switch::MemcgWaitOnWriteback)
            && !sc.global()
            && k.pages.test(pfn, PG_RECLAIM)
            && may_enter_fs
        {
            return Verdict::WaitOnWriteback;
        }
        // Case 2 (global reclaim): mark for immediate reclaim and move on.
        k.pages.set(pfn, PG_RECLAIM);
        st.nr_writeback += 1;
        return Verdict::Keep;
    }

    let references = page_check_references(k, pfn);
    match references {
        PageReferences::Activate => return Verdict::Activate,
        PageReferences::Keep => return Verdict::Keep,
        PageReferences::Reclaim | PageReferences::ReclaimClean => {}
    }

    if k.pages.test(pfn, PG_ANON) && !k.pages.test(pfn, PG_SWAPCACHE) {
        if !sc.gfp.has(Gfp::IO) {
            return Verdict::Keep;
        }
        // add_to_swap splits a huge page before it gives one of its pages a slot.
        super::huge_memory::split_huge_page(k, pfn);
        if !swapfile::add_to_swap(k, pfn) {
            return Verdict::Activate;
        }
        may_enter_fs = true;
    }

    if k.pages.mapped(pfn) && rmap::try_to_unmap(k, pfn) == rmap::Unmap::Fail {
        return Verdict::Activate;
    }

    if k.pages.test(pfn, PG_DIRTY) {
        if !sw.on(Switch::StallOnDirtyEncountered) {
            // 3.9 and KS count dirty pages here, anonymous ones included.
            st.nr_dirty += 1;
            if !k.pages.test(pfn, PG_WRITEBACK) {
                st.nr_unqueued_dirty += 1;
            }
        }
        let may_write_file = if !sc.kswapd {
            !sw.on(Switch::DirectReclaimNoFsWriteback)
        } else if sw.on(Switch::KswapdNoFsWriteback) {
            false
        } else if sw.on(Switch::KswapdWritebackOnTailDirty) {
            k.zones[zi].test_flag(ZONE_TAIL_LRU_DIRTY)
        } else {
            !sw.on(Switch::KswapdFsWritebackAtRaisedPriority) || sc.priority < DEF_PRIORITY - 2
        };
        if file && !may_write_file {
            // Leave it to the flushers (seed 002 patches 1 and 5, V2's 8). The slot is
            // nr_vmscan_write_skip until patch 7 renames it.
            k.zones[zi].mod_stat(ZoneStat::nr_vmscan_immediate_reclaim, 1);
            if sw.on(Switch::ImmediateReclaimDirtyLruTail) {
                // Reclaim it as soon as its IO completes.
                k.pages.set(pfn, PG_RECLAIM);
            }
            return Verdict::Keep;
        }
        if references == PageReferences::ReclaimClean || !may_enter_fs || !sc.may_writepage {
            return Verdict::Keep;
        }
        let out = pageout(k, pfn, sc.kswapd);
        if matches!(out, Pageout::Success | Pageout::WaitForRequest { .. }) {
            sc.cpu += k.costs.pageout;
        }
        match out {
            Pageout::Keep => {
                if !sw.on(Switch::StallOnDirtyEncountered) {
                    st.nr_congested += 1;
                }
                return Verdict::Keep;
            }
            Pageout::Activate => return Verdict::Activate,
            Pageout::WaitForRequest { bdi, bio } => return Verdict::WaitForRequest { bdi, bio },
            Pageout::Success => {
                if let Some(v) = after_pageout_success(k, sc, pfn) {
                    return v;
                }
            }
            Pageout::Clean => {}
        }
    }

    // try_to_release_page: private data (dirty or locked buffers, an unstable page) may
    // keep the page.
    if file && k.pages.test(pfn, PG_PRIVATE) {
        match page_aops(k, pfn).releasepage(k, pfn, sc.gfp, sc.kswapd) {
            Release::Released => {}
            Release::Busy => return Verdict::Activate,
            Release::Wait => {
                return Verdict::WaitForRelease(k.pages.mapping[pfn as usize] as usize)
            }
        }
    }

    // __remove_mapping: a clean, unmapped page leaves the swap cache and is freed.
    if k.pages.mapped(pfn) {
        return Verdict::Keep;
    }
    if k.pages.test(pfn, PG_SWAPCACHE) {
        let slot = k.pages.private[pfn as usize];
        memcontrol::uncharge_swapcache(k, pfn, slot);
        swapfile::delete_from_swap_cache(k, pfn);
    } else if file {
        super::filemap::delete_from_page_cache(k, pfn);
    }
    Verdict::Free
}

/// The rest of `shrink_page_list` for a page after its `releasepage` slept (NFS: for a
/// COMMIT): released if its private data went meanwhile, then `__remove_mapping` if nothing
/// else holds it.
fn release_after_wait(k: &mut Kernel, pfn: Pfn) -> Verdict {
    if k.pages.test(pfn, PG_TRUNCATED) {
        // Truncated while we waited: the last reference is ours.
        k.pages.clear(pfn, PG_DIRTY | PG_TRUNCATED);
        return Verdict::Free;
    }
    if k.pages.test(pfn, PG_PRIVATE) {
        return Verdict::Activate;
    }
    if k.pages.test(pfn, PG_DIRTY | PG_WRITEBACK | PG_LOCKED) || k.pages.mapped(pfn) {
        return Verdict::Keep;
    }
    super::filemap::delete_from_page_cache(k, pfn);
    Verdict::Free
}

/// `shrink_page_list`: decide the fate of each isolated page; free the reclaimable ones and
/// leave the rest in `list` to be put back. Returns pages freed.
pub async fn shrink_page_list(
    w: &World,
    zi: usize,
    sc: &mut ScanControl,
    list: &mut PageList,
    st: &mut PageListStats,
) -> u64 {
    let mut nr_reclaimed = 0;
    let mut nr_activate = 0;
    let mut kept = 0;
    let mut i = 0;
    let mut after_wait = false;
    let lumpy = !w.borrow().sw.on(Switch::RemoveLumpyReclaim);
    while i < list.len() {
        let pfn = list.get(i);
        let mut verdict = shrink_one_page(&mut w.borrow_mut(), zi, sc, st, pfn, after_wait);
        after_wait = false;
        if let Verdict::WaitForRequest { bdi, bio } = verdict {
            // The page is under writeback already; its bio waits for a request.
            charge(w, sc).await;
            backing_dev::submit_bio(w, bdi, bio).await;
            let k = w.borrow();
            verdict = after_pageout_success(&k, sc, pfn).unwrap_or(Verdict::Keep);
        }
        if let Verdict::WaitForRelease(ino) = verdict {
            // releasepage holds the page locked while it sleeps.
            charge(w, sc).await;
            let a_ops = w.borrow().inodes[ino].a_ops;
            a_ops.releasepage_wait(w, ino).await;
            verdict = release_after_wait(&mut w.borrow_mut(), pfn);
        }
        match verdict {
            Verdict::WaitOnWriteback => {
                charge(w, sc).await;
                super::filemap::wait_on_page_writeback(w, pfn).await;
                after_wait = true;
                continue;
            }
            Verdict::SleepInLoop => {
                // KS: unlock the page, congestion_wait(HZ/10), clear ZONE_WRITEBACK.
                charge(w, sc).await;
                congestion_wait(w, HZ_10).await;
                let mut k = w.borrow_mut();
                k.zones[zi].clear_flag(ZONE_WRITEBACK);
                if k.sw.on(Switch::KswapdWritebackFix2) {
                    list.set(kept, pfn);
                    kept += 1;
                    i += 1;
                } else {
                    // Fall through to the rest of the checks for the same page.
                    after_wait = true;
                }
                continue;
            }
            Verdict::Free => {
                let mut k = w.borrow_mut();
                debug_assert!(
                    k.pages.flags[pfn as usize]
                        & (PG_DIRTY
                            | PG_WRITEBACK
                            | PG_LOCKED
                            | PG_SWAPCACHE
                            | PG_BH_DIRTY
                            | PG_BH_LOCKED)
                        == 0
                );
                free_isolated_page(&mut k, pfn);
                nr_reclaimed += 1;
            }
            Verdict::Activate => {
                let mut k = w.borrow_mut();
                if k.pages.test(pfn, PG_SWAPCACHE) && k.swap.vm_swap_full() {
                    swapfile::try_to_free_swap(&mut k, pfn);
                }
                k.pages.set(pfn, PG_ACTIVE);
                nr_activate += 1;
                list.set(kept, pfn);
                kept += 1;
                if lumpy {
                    sc.reset_reclaim_mode();
                }
            }
            Verdict::Keep
            | Verdict::Cull
            | Verdict::WaitForRelease(_)
            | Verdict::WaitForRequest { .. } => {
                list.set(kept, pfn);
                kept += 1;
                if lumpy {
                    sc.reset_reclaim_mode();
                }
            }
            Verdict::KeepLumpy => {
                list.set(kept, pfn);
                kept += 1;
            }
        }
        i += 1;
    }
    list.truncate(kept);
    let mut k = w.borrow_mut();
    k.count(VmEvent::pgactivate, nr_activate);
    // 3.9 and KS decide ZONE_CONGESTED here; LD patch 5 moves it to shrink_inactive_list.
    if !k.sw.on(Switch::DirectWaitIffCongestedInShrinkList)
        && st.nr_dirty > 0
        && st.nr_dirty == st.nr_congested
        && sc.global()
    {
        k.zones[zi].set_flag(ZONE_CONGESTED);
    }
    nr_reclaimed
}

/// The last reference to a page reclaim isolated goes: its flags (isolation, LRU and
/// reclaim state) are dropped and it joins the batch `free_hot_cold_page_list` frees cold.
fn free_isolated_page(k: &mut Kernel, pfn: Pfn) {
    k.pages.flags[pfn as usize] &= PG_UPTODATE;
    super::page_alloc::free_page_batched(k, pfn, true);
}

/// `putback_inactive_pages`: survivors go back to the head of the list their flags name.
fn putback_inactive_pages(k: &mut Kernel, zi: usize, list: &PageList) {
    for pfn in list.iter() {
        k.pages.clear(pfn, PG_ISOLATED);
        let truncated = k.pages.test(pfn, PG_TRUNCATED);
        if (page_orphaned(k, pfn) || truncated)
            && k.pages.flags[pfn as usize] & (PG_WRITEBACK | PG_LOCKED | PG_BH_LOCKED) == 0
        {
            // Its owner exited while we held it: the last reference goes now.
            free_isolated_page(k, pfn);
            continue;
        }
        let lru = k.pages.page_lru(pfn);
        swap::add_page_to_lru_list(k, pfn, lru);
        if lru.is_active() {
            let mc = k.memcg.page_lruvec_memcg(pfn);
            k.zones[zi].mem_cgroup_lruvec_mut(mc).recent_rotated[lru.is_file() as usize] += 1;
        }
    }
}

/// `too_many_isolated`: direct reclaimers wait while more pages are isolated than are
/// inactive (an eighth, for ordinary allocations).
fn too_many_isolated(k: &Kernel, zi: usize, file: bool, sc: &ScanControl) -> bool {
    if sc.kswapd || !sc.global() {
        return false;
    }
    let z = &k.zones[zi];
    let (mut inactive, isolated) = if file {
        (
            z.stat(ZoneStat::nr_inactive_file),
            z.stat(ZoneStat::nr_isolated_file),
        )
    } else {
        (
            z.stat(ZoneStat::nr_inactive_anon),
            z.stat(ZoneStat::nr_isolated_anon),
        )
    };
    if sc.gfp.has(Gfp::IO | Gfp::FS) {
        inactive >>= 3;
    }
    isolated > inactive
}

/// `shrink_inactive_list`: isolate a batch, run `shrink_page_list`, put survivors back, then
/// take the stall decisions of the kernel version (`kernel-reclaim.md` §3.9, §4.5).
pub async fn shrink_inactive_list(
    w: &World,
    nr_to_scan: u64,
    zi: usize,
    lru: Lru,
    sc: &mut ScanControl,
) -> u64 {
    let file = lru.is_file();
    loop {
        let (tmi, killed) = {
            let k = w.borrow();
            (
                too_many_isolated(&k, zi, file, sc),
                k.sched.is_killed(k.sched.current()),
            )
        };
        if !tmi {
            break;
        }
        if killed {
            return SWAP_CLUSTER_MAX;
        }
        charge(w, sc).await;
        congestion_wait(w, HZ_10).await;
    }
    let lumpy = !w.borrow().sw.on(Switch::RemoveLumpyReclaim);
    if lumpy {
        sc.set_reclaim_mode(false);
    }
    let mut list = PageList::default();
    let nr_taken;
    let nr_scanned;
    {
        let mut k = w.borrow_mut();
        nr_scanned = isolate_lru_pages(&mut k, nr_to_scan, zi, lru, sc, &mut list);
        nr_taken = list.len() as u64;
        sc.cpu += nr_scanned * k.costs.isolate_page;
        let z = &mut k.zones[zi];
        z.mod_stat(isolated_stat(file), nr_taken as i64);
        z.mem_cgroup_lruvec_mut(sc.memcg).recent_scanned[file as usize] += nr_taken;
        // Limit reclaim is hidden from the zone and from vmstat (global_reclaim()).
        if sc.global() {
            z.pages_scanned += nr_scanned;
            let scan_event = if sc.kswapd {
                VmEvent::pgscan_kswapd_dma
            } else {
                VmEvent::pgscan_direct_dma
            };
            k.count(scan_event.zone(zi), nr_scanned);
        }
        if nr_taken == 0 {
            return 0;
        }
    }
    let mut st = PageListStats::default();
    let mut nr_reclaimed = shrink_page_list(w, zi, sc, &mut list, &mut st).await;
    if lumpy && should_reclaim_stall(nr_taken, nr_reclaimed, sc) {
        // The batch again, synchronously: wait on the writeback it met or started.
        sc.set_reclaim_mode(true);
        nr_reclaimed += shrink_page_list(w, zi, sc, &mut list, &mut st).await;
    }
    let (stall, wait_congested) = {
        let mut k = w.borrow_mut();
        if file {
            k.reclaim_file_totals.nr_taken += nr_taken;
            k.reclaim_file_totals.stats.add(&st);
        }
        if sc.global() {
            let steal_event = if sc.kswapd {
                VmEvent::pgsteal_kswapd_dma
            } else {
                VmEvent::pgsteal_direct_dma
            };
            k.count(steal_event.zone(zi), nr_reclaimed);
        }
        putback_inactive_pages(&mut k, zi, &list);
        trace::mm_vmscan_lru_shrink_inactive(
            &mut k,
            zi,
            nr_scanned,
            nr_reclaimed,
            sc.priority,
            file,
        );
        k.zones[zi].mod_stat(isolated_stat(file), -(nr_taken as i64));
        if k.check_every_batch && k.sched.now() >= k.next_check {
            k.next_check = k.sched.now() + k.check_interval;
            if let Err(e) = invariants::check(&k) {
                k.fail(e);
            }
        }
        stall_decisions(&mut k, zi, sc, &st, nr_taken)
    };
    if let Some(d) = wait_congested {
        charge(w, sc).await;
        wait_iff_congested(w, zi, d).await;
        // KS patch 7 without LD patch 4 flags ZONE_WRITEBACK only after its wait.
        let mut k = w.borrow_mut();
        if k.sw.on(Switch::KswapdBlockOnWriteback) && !k.sw.on(Switch::SetZoneFlagsBeforeBlocking) {
            k.zones[zi].set_flag(ZONE_WRITEBACK);
        }
    }
    if stall {
        charge(w, sc).await;
        congestion_wait(w, HZ_10).await;
    }
    // LD patch 5: every direct-reclaim batch ends in wait_iff_congested.
    let direct_wait = w.borrow().sw.on(Switch::DirectWaitIffCongestedInShrinkList) && !sc.kswapd;
    if direct_wait {
        charge(w, sc).await;
        wait_iff_congested(w, zi, HZ_10).await;
    }
    maybe_charge(w, sc).await;
    nr_reclaimed
}

/// `should_reclaim_stall` (before c53919ad): a direct reclaimer in compaction mode that freed
/// less than it isolated runs the batch again synchronously: at once for a costly order,
/// below priority 4 for orders 1-3.
pub fn should_reclaim_stall(nr_taken: u64, nr_freed: u64, sc: &ScanControl) -> bool {
    if sc.kswapd || sc.reclaim_mode == ReclaimMode::Single || nr_freed == nr_taken {
        return false;
    }
    let stall_priority = if sc.order > super::page_alloc::PAGE_ALLOC_COSTLY_ORDER {
        DEF_PRIORITY
    } else {
        DEF_PRIORITY / 3
    };
    sc.priority <= stall_priority
}

/// The priority-scaled writeback test: at priority 12 every isolated page must be under
/// writeback, at 11 half, at 10 a quarter...
fn writeback_throttle(st: &PageListStats, nr_taken: u64, priority: i32) -> bool {
    st.nr_writeback > 0 && st.nr_writeback >= nr_taken >> (DEF_PRIORITY - priority)
}

/// The zone flags and stalls `shrink_inactive_list` decides after a batch. Returns
/// (congestion_wait?, wait_iff_congested timeout for the writeback throttle).
pub fn stall_decisions(
    k: &mut Kernel,
    zi: usize,
    sc: &ScanControl,
    st: &PageListStats,
    nr_taken: u64,
) -> (bool, Option<Nanos>) {
    let sw = k.sw;
    let z = &mut k.zones[zi];
    let mut wait = None;
    let mut stall = false;
    if sw.on(Switch::ThrottleReclaimOnWriteback) && writeback_throttle(st, nr_taken, sc.priority) {
        if sw.on(Switch::DirectWaitIffCongestedInShrinkList) {
            // LD 5: the throttle only flags the zone.
            if sw.on(Switch::KswapdBlockOnWriteback) {
                z.set_flag(ZONE_WRITEBACK);
            }
        } else {
            if sw.on(Switch::KswapdBlockOnWriteback) && sw.on(Switch::SetZoneFlagsBeforeBlocking) {
                z.set_flag(ZONE_WRITEBACK);
            }
            wait = Some(HZ_10);
        }
    }
    if sw.on(Switch::DirectWaitIffCongestedInShrinkList)
        && sc.global()
        && st.nr_dirty > 0
        && st.nr_dirty == st.nr_congested
    {
        z.set_flag(ZONE_CONGESTED);
    }
    if sc.global() {
        if sw.on(Switch::StallOnDirtyEncountered) {
            let tail_dirty = st.nr_unqueued_dirty == nr_taken;
            if tail_dirty {
                z.set_flag(ZONE_TAIL_LRU_DIRTY);
            }
            stall = tail_dirty || (sw.on(Switch::StallAfterPageList) && st.nr_immediate > 0);
        } else {
            if sw.on(Switch::KswapdWritebackOnTailDirty)
                && st.nr_unqueued_dirty > 0
                && st.nr_unqueued_dirty >= nr_taken >> (DEF_PRIORITY - sc.priority)
            {
                z.set_flag(ZONE_TAIL_LRU_DIRTY);
            }
            stall = sw.on(Switch::StallAfterPageList) && st.nr_immediate > 0;
        }
    }
    (stall, wait)
}

// ---------------------------------------------------------------------------------------
// shrink_lruvec, shrink_zone

async fn shrink_list(w: &World, lru: Lru, nr_to_scan: u64, zi: usize, sc: &mut ScanControl) -> u64 {
    if lru.is_active() {
        let mut k = w.borrow_mut();
        if inactive_list_is_low(&k, zi, sc.memcg, lru.is_file()) {
            shrink_active_list(&mut k, nr_to_scan, zi, lru, sc);
        }
        return 0;
    }
    shrink_inactive_list(w, nr_to_scan, zi, lru, sc).await
}

/// `shrink_lruvec` (`kernel-reclaim.md` §3.5): scan the lists in SWAP_CLUSTER_MAX batches
/// until the targets of `get_scan_count` are met, then age the anon list a little.
pub async fn shrink_lruvec(w: &World, zi: usize, sc: &mut ScanControl) {
    let (mut nr, _) = {
        let mut k = w.borrow_mut();
        sc.cpu += k.costs.shrink_lruvec;
        get_scan_count(&mut k, zi, sc)
    };
    let targets = nr;
    let proportional = w.borrow().sw.on(Switch::KswapdProportionalScan);
    let nr_to_reclaim = sc.nr_to_reclaim;
    let mut nr_reclaimed = 0;
    // KS patch 2 (3.11): direct reclaim stops at its target at every priority, 12 included;
    // starting "adjusted" at DEF_PRIORITY came with a later (3.15) patch.
    let mut scan_adjusted = false;
    let ia = Lru::InactiveAnon as usize;
    let aa = Lru::ActiveAnon as usize;
    let ifl = Lru::InactiveFile as usize;
    let af = Lru::ActiveFile as usize;
    while nr[ia] > 0 || nr[af] > 0 || nr[ifl] > 0 {
        for lru in Lru::EVICTABLE {
            let l = lru as usize;
            if nr[l] > 0 {
                let n = nr[l].min(SWAP_CLUSTER_MAX);
                nr[l] -= n;
                nr_reclaimed += shrink_list(w, lru, n, zi, sc).await;
            }
        }
        if w.borrow().fatal.is_some() {
            return;
        }
        if !proportional {
            if nr_reclaimed >= nr_to_reclaim && sc.priority < DEF_PRIORITY {
                break;
            }
            continue;
        }
        // KS patch 2: once the target is met, finish the scan proportionally.
        if nr_reclaimed < nr_to_reclaim || scan_adjusted {
            continue;
        }
        if sc.global() && !sc.kswapd {
            break;
        }
        let nr_file = nr[ifl] + nr[af];
        let nr_anon = nr[ia] + nr[aa];
        let (small, big) = if nr_file > nr_anon {
            ([ia, aa], [ifl, af])
        } else {
            ([ifl, af], [ia, aa])
        };
        let scan_target = targets[small[0]] + targets[small[1]] + 1;
        let percentage = (nr[small[0]] + nr[small[1]]) * 100 / scan_target;
        nr[small[0]] = 0;
        nr[small[1]] = 0;
        for l in big {
            let scanned = targets[l] - nr[l];
            nr[l] = targets[l] * (100 - percentage.min(100)) / 100;
            nr[l] -= nr[l].min(scanned);
        }
        scan_adjusted = true;
    }
    sc.nr_reclaimed += nr_reclaimed;
    {
        let mut k = w.borrow_mut();
        if inactive_anon_is_low(&k, zi, sc.memcg) {
            shrink_active_list(&mut k, SWAP_CLUSTER_MAX, zi, Lru::ActiveAnon, sc);
        }
    }
    throttle_vm_writeout(w, sc).await;
}

/// Whether pages under writeback (and unstable NFS pages) exceed 1.1 × the hard dirty limit
/// (`throttle_vm_writeout`'s test).
pub fn too_much_writeback(k: &Kernel) -> bool {
    let (_, thresh) = super::page_writeback::dirty_limits(k);
    let mut limit = k.global_dirty_limit.hard_dirty_limit(thresh);
    limit += limit / 10;
    k.global_stat(ZoneStat::nr_unstable) + k.global_stat(ZoneStat::nr_writeback) > limit
}

/// `throttle_vm_writeout` (`kernel-reclaim.md` §3.5): a reclaimer waits while writeback is far
/// over the dirty limit; one wait only for allocations without both __GFP_FS and __GFP_IO.
async fn throttle_vm_writeout(w: &World, sc: &mut ScanControl) {
    loop {
        if !too_much_writeback(&w.borrow()) {
            return;
        }
        charge(w, sc).await;
        congestion_wait(w, HZ_10).await;
        if !sc.gfp.has(Gfp::FS | Gfp::IO) {
            return;
        }
    }
}

/// `shrink_zone` (`kernel-memcg.md` §3.2): shrink the lruvec of every group under the
/// reclaim's root (`mem_cgroup_iter`, one lruvec with memcg off), again while
/// `should_continue_reclaim` says reclaim/compaction needs more. Limit reclaim stops at its
/// target; its walk resumes after the last group it shrank (`reclaim_iter`).
pub async fn shrink_zone(w: &World, zi: usize, sc: &mut ScanControl) {
    loop {
        let (reclaimed, scanned) = (sc.nr_reclaimed, sc.nr_scanned);
        let (disabled, soft) = {
            let k = w.borrow();
            // mem_cgroup_should_soft_reclaim: global reclaim from the rework's patch 1
            // (3b38722e), limit reclaim too from its patch 3.
            let soft = k.sw.on(Switch::SoftReclaimInShrinkZone)
                && (sc.global() || k.sw.on(Switch::SoftReclaimInLimitReclaim));
            (k.memcg.disabled(), soft)
        };
        if disabled {
            sc.memcg = 0;
            shrink_lruvec(w, zi, sc).await;
        } else {
            let before = sc.nr_scanned;
            shrink_memcgs(w, zi, sc, soft).await;
            if soft && sc.nr_scanned == before {
                // Nothing eligible had pages to scan here: every group, same priority.
                shrink_memcgs(w, zi, sc, false).await;
            }
        }
        let k = w.borrow();
        let (reclaimed, scanned) = (sc.nr_reclaimed - reclaimed, sc.nr_scanned - scanned);
        if !should_continue_reclaim(&k, zi, reclaimed, scanned, sc) {
            return;
        }
    }
}

/// `shrink_zone`'s hierarchy walk: from the shared cursor of (root, zone, priority) to the
/// end of the root's pre-order.
/// With `soft` (the rework's first pass), only the groups `mem_cgroup_soft_reclaim_eligible`
/// lets through are shrunk.
async fn shrink_memcgs(w: &World, zi: usize, sc: &mut ScanControl, soft: bool) {
    let root = sc.target_mem_cgroup.unwrap_or(0);
    let prio = sc.priority as usize;
    let (start, len) = {
        let k = w.borrow();
        let g = &k.memcg.groups[root];
        (g.reclaim_iter[zi][prio], g.walk.len())
    };
    let mut next = 0;
    for i in start..len {
        next = (i + 1) % len;
        {
            let k = w.borrow();
            sc.memcg = k.memcg.groups[root].walk[i];
            if soft
                && !k
                    .memcg
                    .soft_reclaim_eligible(sc.memcg, sc.target_mem_cgroup)
            {
                continue;
            }
        }
        shrink_lruvec(w, zi, sc).await;
        if !sc.global() && sc.nr_reclaimed >= sc.nr_to_reclaim {
            break;
        }
        if w.borrow().fatal.is_some() {
            break;
        }
    }
    w.borrow_mut().memcg.groups[root].reclaim_iter[zi][prio] = next;
    sc.memcg = 0;
}

/// `in_reclaim_compaction` (3.5+): reclaim for a costly order, or for any order > 0 once
/// the priority has dropped, frees pages for compaction rather than for the allocation.
pub fn in_reclaim_compaction(sc: &ScanControl) -> bool {
    sc.order > 0
        && (sc.order > super::page_alloc::PAGE_ALLOC_COSTLY_ORDER || sc.priority < DEF_PRIORITY - 2)
}

/// `should_continue_reclaim` (`kernel-compaction.md` §4.2): in reclaim/compaction mode, go
/// on until `2 << order` pages are reclaimed (while the inactive lists hold more than that),
/// then until compaction could run; stop as soon as a round reclaims nothing (`__GFP_REPEAT`:
/// nothing reclaimed and nothing scanned).
pub fn should_continue_reclaim(
    k: &Kernel,
    zi: usize,
    nr_reclaimed: u64,
    nr_scanned: u64,
    sc: &ScanControl,
) -> bool {
    let mode = if k.sw.on(Switch::RemoveLumpyReclaim) {
        in_reclaim_compaction(sc)
    } else {
        // Before c53919ad the mode the last batch left decides: a kept page or an
        // active-list scan has reset it to single.
        sc.reclaim_mode == ReclaimMode::Compaction
    };
    if !mode {
        return false;
    }
    if sc.gfp.has(Gfp::REPEAT) {
        if nr_reclaimed == 0 && nr_scanned == 0 {
            return false;
        }
    } else if nr_reclaimed == 0 {
        return false;
    }
    let z = &k.zones[zi];
    let mut pages_for_compaction = 2u64 << sc.order;
    // Patch 2 of seed 004's series: compaction keeps failing here, so reclaim more for it.
    if k.sw.on(Switch::ReclaimCompactionScaleByFailures) && z.compact_order_failed <= sc.order {
        pages_for_compaction <<= z.compact_defer_shift;
    }
    let mut inactive = z.stat(ZoneStat::nr_inactive_file);
    if k.swap.nr_free() > 0 {
        inactive += z.stat(ZoneStat::nr_inactive_anon);
    }
    if sc.nr_reclaimed < pages_for_compaction && inactive > pages_for_compaction {
        return true;
    }
    compaction::compaction_suitable(k, zi, Some(sc.order)) == CompactResult::Skipped
}

/// `compaction_ready` (3.3-3.9): direct reclaim for a costly order leaves a zone alone once
/// it has the free pages compaction needs (high watermark + balance gap + `2 << order`) and
/// compaction is not deferred into uselessness. Counts a `compaction_deferred` call.
pub fn compaction_ready(k: &mut Kernel, zi: usize, sc: &ScanControl) -> bool {
    if sc.order <= super::page_alloc::PAGE_ALLOC_COSTLY_ORDER {
        return false;
    }
    let gap = balance_gap(k, zi);
    let z = &k.zones[zi];
    let watermark = z.high_wmark() + gap + (2u64 << sc.order);
    let watermark_ok = zone_watermark_ok(z, 0, watermark, 0, 0);
    if compaction::compaction_deferred(k, zi, sc.order) {
        return watermark_ok;
    }
    if compaction::compaction_suitable(k, zi, Some(sc.order)) == CompactResult::Skipped {
        return false;
    }
    watermark_ok
}

// ---------------------------------------------------------------------------------------
// Direct reclaim

/// `throttle_direct_reclaim`: a task allocating while the node's reserves are low waits for
/// kswapd. Returns true if the task was killed meanwhile.
async fn throttle_direct_reclaim(w: &World, gfp: Gfp) -> bool {
    {
        let mut k = w.borrow_mut();
        let me = k.sched.current();
        if k.sched.is_killed(me) {
            return true;
        }
        if pfmemalloc_watermark_ok(&mut k) {
            return false;
        }
        k.count(VmEvent::pgscan_direct_throttle, 1);
    }
    let q = w.borrow().wq.pfmemalloc_wait;
    let timeout = if gfp.has(Gfp::FS) {
        None
    } else {
        Some(engine::SEC)
    };
    loop {
        let r = engine::wait_event(w, q, timeout, true).await;
        let mut k = w.borrow_mut();
        let me = k.sched.current();
        if k.sched.is_killed(me) {
            return true;
        }
        if r == engine::WakeReason::Timeout || pfmemalloc_watermark_ok(&mut k) {
            return false;
        }
    }
}

/// `try_to_free_pages`: direct reclaim for an allocation. Returns progress (pages freed, or
/// 1 when nothing was freed but some zone is still reclaimable; 0 means OOM).
pub async fn try_to_free_pages(w: &World, gfp: Gfp, order: u32) -> u64 {
    if throttle_direct_reclaim(w, gfp).await {
        return 1;
    }
    let laptop = w.borrow().vm.laptop_mode;
    let mut sc = ScanControl::new(gfp, order, false, laptop);
    trace::mm_vmscan_direct_reclaim_begin(&mut w.borrow_mut(), order, sc.may_writepage, gfp);
    let progress = do_try_to_free_pages(w, &mut sc).await;
    // The CPU time of the pages scanned, isolated and reclaimed is spent inside the
    // reclaim, so it is charged before the end tracepoint.
    charge(w, &mut sc).await;
    trace::mm_vmscan_direct_reclaim_end(&mut w.borrow_mut(), sc.nr_reclaimed);
    progress
}

/// `try_to_free_mem_cgroup_pages` (`kernel-memcg.md` §2.4): limit reclaim of `memcg`'s
/// subtree, 32 pages, from DEF_PRIORITY down. Returns pages freed.
pub async fn try_to_free_mem_cgroup_pages(w: &World, memcg: usize) -> u64 {
    let laptop = w.borrow().vm.laptop_mode;
    let mut sc = ScanControl::new(Gfp::HIGHUSER_MOVABLE, 0, false, laptop);
    sc.target_mem_cgroup = Some(memcg);
    trace::mm_vmscan_memcg_reclaim_begin(&mut w.borrow_mut(), false, sc.may_writepage, sc.gfp);
    do_try_to_free_pages(w, &mut sc).await;
    charge(w, &mut sc).await;
    trace::mm_vmscan_memcg_reclaim_end(&mut w.borrow_mut(), false, sc.nr_reclaimed);
    sc.nr_reclaimed
}

/// `mem_cgroup_shrink_node_zone` (`kernel-memcg.md` §4.4): the old soft-limit reclaim's
/// one `shrink_lruvec` of `memcg`'s lists in zone `zi`, at priority 0 ("we hack the
/// priority and make it zero"), as limit reclaim of that group. Returns (reclaimed,
/// scanned).
pub async fn mem_cgroup_shrink_node_zone(
    w: &World,
    memcg: usize,
    zi: usize,
    kswapd: bool,
) -> (u64, u64) {
    let laptop = w.borrow().vm.laptop_mode;
    let mut sc = ScanControl::new(Gfp::HIGHUSER_MOVABLE, 0, kswapd, laptop);
    sc.nr_to_reclaim = SWAP_CLUSTER_MAX;
    sc.priority = 0;
    sc.target_mem_cgroup = Some(memcg);
    sc.memcg = memcg;
    trace::mm_vmscan_memcg_reclaim_begin(&mut w.borrow_mut(), true, sc.may_writepage, sc.gfp);
    shrink_lruvec(w, zi, &mut sc).await;
    charge(w, &mut sc).await;
    trace::mm_vmscan_memcg_reclaim_end(&mut w.borrow_mut(), true, sc.nr_reclaimed);
    (sc.nr_reclaimed, sc.nr_scanned)
}

/// `do_try_to_free_pages` (`kernel-reclaim.md` §3.2).
async fn do_try_to_free_pages(w: &World, sc: &mut ScanControl) -> u64 {
    let (preferred, list, n) = {
        let mut k = w.borrow_mut();
        if sc.global() {
            k.count(VmEvent::allocstall, 1);
        }
        zonelist(&k, sc.gfp)
    };
    let mut total_scanned = 0;
    let mut aborted_reclaim = false;
    loop {
        sc.nr_scanned = 0;
        // shrink_zones
        for &zi in &list[..n] {
            if sc.global() {
                {
                    let mut k = w.borrow_mut();
                    if !k.zones[zi].populated()
                        || (k.zones[zi].all_unreclaimable && sc.priority != DEF_PRIORITY)
                    {
                        continue;
                    }
                    // Enough free for compaction here: reclaim no more, let compaction run.
                    if compaction_ready(&mut k, zi, sc) {
                        aborted_reclaim = true;
                        continue;
                    }
                }
                // The old soft-limit reclaim, before the zone's own shrink.
                let (r, s) = memcontrol::soft_limit_reclaim(w, zi, sc.order, false).await;
                sc.nr_reclaimed += r;
                sc.nr_scanned += s;
            }
            shrink_zone(w, zi, sc).await;
        }
        if sc.global() {
            let mut k = w.borrow_mut();
            let lru_pages: u64 = list[..n]
                .iter()
                .map(|&zi| zone_reclaimable_pages(&k, zi))
                .sum();
            let shrunk = slab::shrink_slab(&mut k, sc.gfp, sc.kswapd, sc.nr_scanned, lru_pages);
            sc.cpu += shrunk.cpu;
            sc.nr_reclaimed += shrunk.reclaimed_slab;
            if k.fatal.is_some() {
                return sc.nr_reclaimed.max(1);
            }
        }
        total_scanned += sc.nr_scanned;
        if sc.nr_reclaimed >= sc.nr_to_reclaim {
            break;
        }
        if sc.priority < DEF_PRIORITY - 2 {
            sc.may_writepage = true;
        }
        if total_scanned > sc.nr_to_reclaim + sc.nr_to_reclaim / 2 {
            let mut k = w.borrow_mut();
            let nr = if k.vm.laptop_mode { 0 } else { total_scanned };
            backing_dev::wakeup_flusher_threads(&mut k, nr);
            sc.may_writepage = true;
        }
        let nap = !w.borrow().sw.on(Switch::DirectWaitIffCongestedInShrinkList);
        if nap && sc.nr_scanned > 0 && sc.priority < DEF_PRIORITY - 2 {
            charge(w, sc).await;
            wait_iff_congested(w, preferred, HZ_10).await;
        }
        if sc.priority == 0 {
            break;
        }
        sc.priority -= 1;
    }
    if sc.nr_reclaimed > 0 || !sc.global() {
        return sc.nr_reclaimed;
    }
    // Reclaim stopped so that compaction could run: not an OOM.
    if aborted_reclaim {
        return 1;
    }
    let k = w.borrow();
    // all_unreclaimable(zonelist): OOM only when kswapd has given up on every zone.
    let all_unreclaimable = list[..n].iter().all(|&zi| k.zones[zi].all_unreclaimable);
    if all_unreclaimable {
        0
    } else {
        1
    }
}

/// Helpers for the unit tests of reclaim, here and in the filesystems' tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use crate::mm::mmzone::ZONE_DMA32;
    use crate::mm::page_alloc::{alloc_flags, get_page_from_freelist};

    /// The zone the tests build their lists in: the first zone of every zonelist of a
    /// 128 MiB machine.
    pub const Z: usize = ZONE_DMA32;

    /// A free order-0 page of zone `Z`, taken from the buddy allocator.
    pub fn take_page(k: &mut Kernel) -> Pfn {
        let pfn = get_page_from_freelist(k, Gfp::KERNEL, 0, alloc_flags::NO_WATERMARKS)
            .expect("a free page");
        assert_eq!(k.page_zone(pfn), Z, "test pages come from DMA32");
        pfn
    }

    /// A scan control of `priority`, for kswapd or direct reclaim.
    pub fn sc_at(priority: i32, kswapd: bool) -> ScanControl {
        let mut sc = ScanControl::new(Gfp::KERNEL, 0, kswapd, false);
        sc.priority = priority;
        sc
    }

    /// Take `pages` off their LRU lists into a list for `shrink_page_list`.
    pub fn isolate_all(k: &mut Kernel, pages: &[Pfn]) -> PageList {
        let mut list = PageList::default();
        for &pfn in pages {
            swap::del_page_from_lru_list(k, pfn);
            k.pages.set(pfn, PG_ISOLATED);
            list.push(pfn);
        }
        list
    }

    /// `putback_inactive_pages`.
    pub fn putback(k: &mut Kernel, zi: usize, list: &PageList) {
        putback_inactive_pages(k, zi, list);
    }

    /// A file's first `pages` pages, clean and uptodate, in its page cache and on the LRU.
    pub fn cache_clean_pages(k: &mut Kernel, ino: usize, pages: u64) -> Vec<Pfn> {
        let pfns = (0..pages)
            .map(|index| {
                let pfn =
                    get_page_from_freelist(k, Gfp::HIGHUSER_MOVABLE, 0, alloc_flags::WMARK_MIN)
                        .expect("a free page");
                k.pages.flags[pfn as usize] = PG_UPTODATE;
                crate::mm::filemap::add_to_page_cache_lru(k, pfn, ino, index);
                pfn
            })
            .collect();
        k.inodes[ino].size_pages = pages;
        pfns
    }
}

mod kswapd;
pub use kswapd::kswapd;

#[cfg(test)]
mod tests;
