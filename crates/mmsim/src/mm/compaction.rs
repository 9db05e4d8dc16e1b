//! Memory compaction (`mm/compaction.c`, 3.3-3.6; `kernel-compaction.md` §6): a migrate
//! scanner walks a zone up from its start isolating movable LRU pages, a free scanner walks
//! down from its end isolating free pages, and each batch of the first moves into the second.
//!
//! A run is a task's own work: it holds no lock across its steps, and after each batch it
//! spends the CPU time of what it scanned and copied, so other tasks (and other compactors)
//! run between batches as they would on other CPUs.
//!
//! Versions: the migrate scanner starts at the zone start every run; the free scanner at the
//! zone end (≤3.5) or, for order > 0, at the zone's cached pfn with one wrap (3.6,
//! `compaction_cached_free_pfn`). From 3.7 (`compaction_skip_bits`) a block a scanner found
//! nothing in is marked and passed over, and both scanners start at the zone's cached pfns,
//! until kswapd's sleep or the end of a long deferral resets them. Seed 004's capture (3.7's
//! 1fb3f8ca) and c67fe375's back-out on `need_resched` are switches; lock contention is not
//! modelled.

use super::migrate::{self, MigrateMode};
use super::mmzone::{
    Zone, MAX_ORDER, MIGRATE_MOVABLE, MIGRATE_RECLAIMABLE, MIGRATE_RESERVE, MIGRATE_UNMOVABLE,
    PAGEBLOCK_NR_PAGES, PAGEBLOCK_ORDER,
};
use super::page::{Pfn, PG_BUDDY, PG_ISOLATED, PG_LRU, PG_UNEVICTABLE, PG_WRITEBACK};
use super::page_alloc::{self, zone_watermark_ok};
use super::vmstat::{fragmentation_index, VmEvent, ZoneStat};
use super::{swap, Gfp, Kernel, World};
use crate::calibration::{COMPACT_SCAN_PFN_NS, CPU_QUANTUM_NS, MIGRATE_PAGE_NS};
use crate::engine::{self, CpuMode, Nanos, HZ_10};
use crate::presets::Switch;

/// `COMPACT_MAX_DEFER_SHIFT`: after a failure, compaction is skipped for up to 63 calls.
pub const COMPACT_MAX_DEFER_SHIFT: u32 = 6;
/// `COMPACT_CLUSTER_MAX` (= `SWAP_CLUSTER_MAX`): pages isolated for one migration batch.
pub const COMPACT_CLUSTER_MAX: usize = 32;

/// A compaction result (`COMPACT_*`); callers keep the largest over zones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CompactResult {
    /// Not attempted: too little free memory, or the failure is not fragmentation.
    Skipped,
    /// Go on compacting.
    Continue,
    /// A page of the order may be free now.
    Partial,
    /// The scanners met: the whole zone was compacted.
    Complete,
}

/// `compaction_deferred` (3.3-3.9): whether to skip compaction of `order` in the zone. Each
/// call counts (`compact_considered`), so the `1 << compact_defer_shift`th call after a
/// failure tries again. Per-order (3.4+, `compaction_defer_by_order`): an order below the
/// one that failed is never deferred.
pub fn compaction_deferred(k: &mut Kernel, zi: usize, order: u32) -> bool {
    let by_order = k.sw.on(Switch::CompactionDeferByOrder);
    let z = &mut k.zones[zi];
    if by_order && order < z.compact_order_failed {
        return false;
    }
    let limit = 1u32 << z.compact_defer_shift;
    z.compact_considered = (z.compact_considered + 1).min(limit);
    z.compact_considered < limit
}

/// `defer_compaction`: a sync compaction for `order` failed: skip twice as many calls next
/// time, up to 64.
pub fn defer_compaction(z: &mut Zone, order: u32) {
    z.compact_considered = 0;
    z.compact_defer_shift = (z.compact_defer_shift + 1).min(COMPACT_MAX_DEFER_SHIFT);
    z.compact_order_failed = z.compact_order_failed.min(order);
}

/// What an allocation that compaction served resets (`__alloc_pages_direct_compact`).
pub fn compaction_succeeded(z: &mut Zone, order: u32) {
    z.compact_blockskip_flush = false;
    z.compact_considered = 0;
    z.compact_defer_shift = 0;
    if order >= z.compact_order_failed {
        z.compact_order_failed = order + 1;
    }
}

/// `compaction_restarting` (3.7): a run for `order` that follows the longest deferral, after
/// repeated failures at or below it.
pub fn compaction_restarting(z: &Zone, order: Option<u32>) -> bool {
    let Some(order) = order else { return false };
    order >= z.compact_order_failed
        && z.compact_defer_shift == COMPACT_MAX_DEFER_SHIFT
        && z.compact_considered >= 1 << z.compact_defer_shift
}

/// `__reset_isolation_suitable` (3.7): clear every skip bit of the zone and send both
/// cached pfns back to the zone's ends.
pub fn reset_isolation_suitable_zone(z: &mut Zone) {
    z.compact_cached_migrate_pfn = z.start_pfn as u64;
    z.compact_cached_free_pfn = z.end_pfn as u64;
    z.compact_blockskip_flush = false;
    z.pageblock_skip.fill(false);
}

/// `reset_isolation_suitable` (3.7), as kswapd goes to sleep: reset each zone in which a
/// direct or proc run reached COMPLETE since.
pub fn reset_isolation_suitable(k: &mut Kernel) {
    if !k.sw.on(Switch::CompactionSkipBits) {
        return;
    }
    for z in k.zones.iter_mut() {
        if z.populated() && z.compact_blockskip_flush {
            reset_isolation_suitable_zone(z);
        }
    }
}

/// `update_pageblock_skip` (3.7): a scanner went through the range starting at `pfn` whole
/// and isolated nothing. The block gets its skip bit and, until the run first isolated
/// something, becomes where the next run starts.
fn update_pageblock_skip(k: &mut Kernel, cc: &CompactControl, pfn: u64, migrate_scanner: bool) {
    let z = &mut k.zones[cc.zone];
    z.set_pageblock_skip(pfn as Pfn);
    if migrate_scanner {
        if !cc.finished_update_migrate && pfn > z.compact_cached_migrate_pfn {
            z.compact_cached_migrate_pfn = pfn;
        }
    } else if !cc.finished_update_free && pfn < z.compact_cached_free_pfn {
        z.compact_cached_free_pfn = pfn;
    }
}

/// `compaction_suitable` (§6.3): `Skipped` when the zone lacks the free pages to migrate
/// into (low watermark + 2 << order), or when its fragmentation index says a failure would
/// be for lack of memory (index ≤ `extfrag_threshold`); `Partial` when the order is already
/// free; else `Continue`. `order` None is a whole-zone run (`/proc/sys/vm/compact_memory`).
pub fn compaction_suitable(k: &Kernel, zi: usize, order: Option<u32>) -> CompactResult {
    let Some(order) = order else {
        return CompactResult::Continue;
    };
    let z = &k.zones[zi];
    let watermark = z.low_wmark() + (2 << order);
    if !zone_watermark_ok(z, 0, watermark, 0, 0) {
        return CompactResult::Skipped;
    }
    let fi = fragmentation_index(z, order as usize);
    if (0..=k.vm.extfrag_threshold as i64).contains(&fi) {
        return CompactResult::Skipped;
    }
    if fi == -1000 && zone_watermark_ok(z, order, watermark, 0, 0) {
        return CompactResult::Partial;
    }
    CompactResult::Continue
}

/// `struct compact_control`: one run over one zone.
#[derive(Debug)]
pub struct CompactControl {
    /// The order wanted; None for a whole-zone run.
    pub order: Option<u32>,
    /// The allocation's migrate type (the free list `compact_finished` looks at).
    pub migratetype: usize,
    /// Async or sync-light migration.
    pub mode: MigrateMode,
    /// The zone.
    pub zone: usize,
    /// Where the migrate scanner goes on from.
    pub migrate_pfn: u64,
    /// Where the free scanner goes on from (downwards, a pageblock at a time).
    pub free_pfn: u64,
    /// 3.6: where this run's free scanner started, and whether it has wrapped.
    pub start_free_pfn: u64,
    pub wrapped: bool,
    /// Isolated free pages (`cc->freepages`), taken from the end.
    pub freepages: Vec<Pfn>,
    /// Isolated pages to move (`cc->migratepages`).
    pub migratepages: Vec<Pfn>,
    /// `cc->nr_migratepages`: the batch being moved, which the free scanner matches.
    pub nr_migratepages: usize,
    /// What the run did, for vmstat and tests.
    pub stats: CompactStats,
    /// c67fe375: an async scanner stopped because the task had to reschedule.
    pub contended: bool,
    /// Capture (patch 3): direct compaction wants a block for its caller...
    pub capture: bool,
    /// ...and took this one.
    pub captured: Option<Pfn>,
    /// CPU time the run has used since the task last waited for a CPU (its timeslice).
    pub slice: u64,
    /// CPU time the steps have used and not yet been charged: the kernel's compaction runs
    /// on until `cond_resched`, so it is charged a quantum at a time, not a step at a time.
    pub owed: Nanos,
    /// The run is kswapd's (`current_is_kswapd()`): it neither asks for nor does a reset
    /// of the skip bits.
    pub kswapd: bool,
    /// 3.7: a scanner has isolated something (or, async, met a block of another type), so
    /// blocks it skips no longer move the zone's cached pfns.
    pub finished_update_migrate: bool,
    pub finished_update_free: bool,
}

/// Counts of one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompactStats {
    /// Frames the migrate scanner looked at (`compact_migrate_scanned`).
    pub migrate_scanned: u64,
    /// Frames the free scanner looked at (`compact_free_scanned`).
    pub free_scanned: u64,
    /// Pages isolated by both scanners (`compact_isolated`).
    pub isolated: u64,
    /// Pages moved (`pgmigrate_success`).
    pub migrated: u64,
    /// Permanent migration failures (`pgmigrate_fail`).
    pub migrate_failed: u64,
    /// Migration batches (`compact_blocks_moved` before 3.8).
    pub batches: u64,
}

impl CompactControl {
    /// A run over zone `zi` for `order` (None: the whole zone).
    pub fn new(zone: usize, order: Option<u32>, migratetype: usize, mode: MigrateMode) -> Self {
        CompactControl {
            order,
            migratetype,
            mode,
            zone,
            migrate_pfn: 0,
            free_pfn: 0,
            start_free_pfn: 0,
            wrapped: false,
            freepages: Vec::with_capacity(COMPACT_CLUSTER_MAX * 2),
            migratepages: Vec::with_capacity(COMPACT_CLUSTER_MAX),
            nr_migratepages: 0,
            stats: CompactStats::default(),
            contended: false,
            capture: false,
            captured: None,
            slice: 0,
            owed: 0,
            kswapd: false,
            finished_update_migrate: false,
            finished_update_free: false,
        }
    }

    /// c67fe375's `compact_checklock_irqsave` outcome: async compaction backs out when the
    /// task should reschedule (it has used its timeslice and another task waits for a CPU);
    /// sync compaction yields and goes on (mmsim's step already ends at a yield).
    fn must_back_out(&mut self, k: &Kernel) -> bool {
        if self.mode == MigrateMode::Async
            && k.sw.on(Switch::CompactionAbortOnContention)
            && self.slice + self.owed >= k.sched.timeslice()
            && k.sched.need_resched()
        {
            self.contended = true;
            return true;
        }
        false
    }

    /// Whether this run uses 3.6's cached free pfn.
    fn incremental(&self, k: &Kernel) -> bool {
        self.order.is_some() && k.sw.on(Switch::CompactionCachedFreePfn)
    }
}

/// `start_free_pfn`: the first frame of the zone's last pageblock, where a full run's free
/// scanner starts.
pub fn start_free_pfn(z: &Zone) -> u64 {
    z.end_pfn as u64 & !(PAGEBLOCK_NR_PAGES - 1)
}

/// `compact_finished`: whether the run is over (§6.8).
pub fn compact_finished(k: &mut Kernel, cc: &mut CompactControl) -> CompactResult {
    let me = k.sched.current();
    if k.sched.is_killed(me) {
        return CompactResult::Partial;
    }
    let incremental = cc.incremental(k);
    let z = &mut k.zones[cc.zone];
    if cc.free_pfn <= cc.migrate_pfn {
        if incremental && !cc.wrapped {
            // 7db8889a: the run started part-way down; go round once from the zone end.
            cc.free_pfn = start_free_pfn(z);
            z.compact_cached_free_pfn = cc.free_pfn;
            cc.wrapped = true;
            return CompactResult::Continue;
        }
        if !cc.kswapd {
            // 62997027: let kswapd clear the skip bits when it next sleeps.
            z.compact_blockskip_flush = true;
        }
        return CompactResult::Complete;
    }
    if incremental && cc.wrapped && cc.free_pfn <= cc.start_free_pfn {
        return CompactResult::Complete;
    }
    let Some(order) = cc.order else {
        return CompactResult::Continue;
    };
    if cc.capture {
        // Direct compaction with capture goes on until it holds its block.
        return if cc.captured.is_some() {
            CompactResult::Partial
        } else {
            CompactResult::Continue
        };
    }
    let z = &k.zones[cc.zone];
    if !zone_watermark_ok(z, order, z.low_wmark() + (1 << order), 0, 0) {
        return CompactResult::Continue;
    }
    for o in order as usize..MAX_ORDER {
        let area = &z.free_area[o];
        if !area.free_list[cc.migratetype].is_empty() {
            return CompactResult::Partial;
        }
        // An allocation of a whole pageblock takes any free block over.
        if order as usize >= PAGEBLOCK_ORDER && area.nr_free > 0 {
            return CompactResult::Partial;
        }
    }
    CompactResult::Continue
}

/// What one migrate-scanner step found (`isolate_migrate_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isolate {
    /// The range was past the free scanner: nothing to do.
    None,
    /// Scanned (possibly isolating nothing).
    Success,
    /// Async and too many pages already isolated in the zone: give up the run.
    Abort,
    /// Sync and too many isolated: wait for reclaim to put some back, then retry.
    Throttle,
}

/// `too_many_isolated` (compaction's): isolated pages over half the zone's LRU pages.
fn too_many_isolated(z: &Zone) -> bool {
    let active = z.stat(ZoneStat::nr_active_file) + z.stat(ZoneStat::nr_active_anon);
    let inactive = z.stat(ZoneStat::nr_inactive_file) + z.stat(ZoneStat::nr_inactive_anon);
    let isolated = z.stat(ZoneStat::nr_isolated_file) + z.stat(ZoneStat::nr_isolated_anon);
    isolated > (inactive + active) / 2
}

/// `__isolate_lru_page` in `ISOLATE_ASYNC_MIGRATE` mode (async) or plain (sync): what
/// compaction may take. Unevictable pages never; in async mode not a page under writeback,
/// nor a dirty page its mapping could not move without writing it.
fn isolatable(k: &Kernel, pfn: Pfn, mode: MigrateMode) -> bool {
    let f = k.pages.flags[pfn as usize];
    if f & PG_UNEVICTABLE != 0 {
        return false;
    }
    if mode == MigrateMode::Async {
        if f & PG_WRITEBACK != 0 {
            return false;
        }
        if f & super::page::PG_DIRTY != 0
            && k.pages.is_file_cache(pfn)
            && f & super::page::PG_SWAPCACHE == 0
            && !super::fs_ops::page_aops(k, pfn).has_migratepage()
        {
            return false;
        }
    }
    true
}

/// `isolate_migratepages` and `isolate_migratepages_range` (§6.5): scan the rest of the
/// current pageblock (or, mid-block before 3.8, up to the end of the next), isolating up to
/// 32 LRU pages. Async runs look only at MOVABLE pageblocks; with skip bits (3.7) a range
/// scanned whole without isolating a page marks its block.
pub fn isolate_migratepages(k: &mut Kernel, cc: &mut CompactControl) -> Isolate {
    let zi = cc.zone;
    let (zstart, zend) = (k.zones[zi].start_pfn as u64, k.zones[zi].end_pfn as u64);
    let low = cc.migrate_pfn.max(zstart);
    let end = if k.sw.on(Switch::CompactionMigrateScanOneBlock) {
        (low + 1).next_multiple_of(PAGEBLOCK_NR_PAGES)
    } else {
        (low + PAGEBLOCK_NR_PAGES).next_multiple_of(PAGEBLOCK_NR_PAGES)
    };
    if end > cc.free_pfn {
        cc.migrate_pfn = end;
        return Isolate::None;
    }
    if too_many_isolated(&k.zones[zi]) {
        return if cc.mode == MigrateMode::Async {
            Isolate::Abort
        } else {
            Isolate::Throttle
        };
    }
    let skip_bits = k.sw.on(Switch::CompactionSkipBits);
    let mut pfn = low;
    let mut last_block = u64::MAX;
    let (mut anon, mut file) = (0i64, 0i64);
    while pfn < end.min(zend) {
        if pfn == low && cc.must_back_out(k) {
            if k.sw.on(Switch::CompactionAbortWhenContended) {
                // e64c5237: the run ends here.
                return Isolate::Abort;
            }
            // c67fe375: stop this step; what was isolated is migrated.
            break;
        }
        if skip_bits && k.zones[zi].pageblock_skip(pfn as Pfn) {
            // Isolation failed here recently: pass the block over.
            pfn = ((pfn >> PAGEBLOCK_ORDER) + 1) << PAGEBLOCK_ORDER;
            continue;
        }
        let f = k.pages.flags[pfn as usize];
        if f & PG_BUDDY != 0 {
            // A free block: its frames are all free.
            let n = 1u64 << k.pages.mapping[pfn as usize];
            cc.stats.migrate_scanned += n;
            pfn += n;
            continue;
        }
        cc.stats.migrate_scanned += 1;
        let block = pfn >> PAGEBLOCK_ORDER;
        if cc.mode == MigrateMode::Async && block != last_block {
            last_block = block;
            if k.zones[zi].pageblock_migratetype(pfn as Pfn) != MIGRATE_MOVABLE {
                // The block still counts as scanned (and gets its skip bit), but the
                // cached pfn stops here.
                cc.finished_update_migrate = true;
                pfn = (block + 1) << PAGEBLOCK_ORDER;
                continue;
            }
        }
        if k.zones[zi].in_thp(pfn as Pfn) {
            // 3.x cannot migrate a transparent huge page: step over it.
            pfn = (block + 1) << PAGEBLOCK_ORDER;
            continue;
        }
        let p = pfn as Pfn;
        pfn += 1;
        if f & PG_LRU == 0 || !isolatable(k, p, cc.mode) {
            continue;
        }
        swap::del_page_from_lru_list(k, p);
        k.pages.set(p, PG_ISOLATED);
        if k.pages.is_file_cache(p) {
            file += 1;
        } else {
            anon += 1;
        }
        cc.migratepages.push(p);
        cc.finished_update_migrate = true;
        if cc.migratepages.len() == COMPACT_CLUSTER_MAX {
            break;
        }
    }
    if skip_bits && pfn >= end.min(zend) && cc.migratepages.is_empty() && low < zend {
        update_pageblock_skip(k, cc, low, true);
    }
    let z = &mut k.zones[zi];
    z.mod_stat(ZoneStat::nr_isolated_anon, anon);
    z.mod_stat(ZoneStat::nr_isolated_file, file);
    cc.stats.isolated += (anon + file) as u64;
    cc.migrate_pfn = pfn.max(low);
    Isolate::Success
}

/// `suitable_migration_target`: a free page may be taken from a MOVABLE pageblock, or from
/// any block if it is a whole free pageblock; never from the reserve.
fn suitable_migration_target(k: &Kernel, zi: usize, pfn: u64) -> bool {
    let z = &k.zones[zi];
    let mt = z.pageblock_migratetype(pfn as Pfn);
    if mt == MIGRATE_RESERVE {
        return false;
    }
    if k.pages.flags[pfn as usize] & PG_BUDDY != 0
        && k.pages.mapping[pfn as usize] as usize >= PAGEBLOCK_ORDER
    {
        return true;
    }
    mt == MIGRATE_MOVABLE
}

/// `split_free_page`: take free block `pfn` whole as order-0 pages, if the zone stays above
/// its low watermark plus the block; a block of half a pageblock or more makes its
/// pageblocks MOVABLE. Returns the pages taken.
fn split_free_page(k: &mut Kernel, zi: usize, pfn: Pfn, out: &mut Vec<Pfn>) -> u64 {
    let order = k.pages.mapping[pfn as usize] as usize;
    let z = &k.zones[zi];
    if !zone_watermark_ok(z, 0, z.low_wmark() + (1 << order), 0, 0) {
        return 0;
    }
    let super::Kernel { pages, zones, .. } = k;
    page_alloc::take_free_block(pages, &mut zones[zi], pfn, order);
    claim_pageblocks(&mut zones[zi], pfn, order);
    for p in pfn..pfn + (1 << order) {
        pages.flags[p as usize] = PG_ISOLATED;
        out.push(p);
    }
    1 << order
}

/// A free block of half a pageblock or more taken whole makes its pageblocks MOVABLE
/// (`split_free_page`, `capture_free_page`).
fn claim_pageblocks(z: &mut Zone, pfn: Pfn, order: usize) {
    if order < PAGEBLOCK_ORDER - 1 {
        return;
    }
    let mut b = pfn as u64 & !(PAGEBLOCK_NR_PAGES - 1);
    while b < pfn as u64 + (1 << order) {
        z.set_pageblock_migratetype(b as Pfn, MIGRATE_MOVABLE);
        b += PAGEBLOCK_NR_PAGES;
    }
}

/// `isolate_freepages_block`: every free block in `[start, end)`.
fn isolate_freepages_block(k: &mut Kernel, cc: &mut CompactControl, start: u64, end: u64) -> u64 {
    let mut total = 0;
    let mut pfn = start;
    while pfn < end {
        cc.stats.free_scanned += 1;
        if k.pages.flags[pfn as usize] & PG_BUDDY == 0 {
            pfn += 1;
            continue;
        }
        let n = split_free_page(k, cc.zone, pfn as Pfn, &mut cc.freepages);
        total += n;
        cc.stats.isolated += n;
        pfn += n.max(1);
    }
    total
}

/// `isolate_freepages` (§6.6): walk down from `free_pfn` a pageblock at a time, taking the
/// free pages of suitable blocks, until there are as many as pages to move or the scanner
/// reaches the migrate scanner's block. The next call starts at the highest block that gave
/// pages, as migration may free more there.
pub fn isolate_freepages(k: &mut Kernel, cc: &mut CompactControl) {
    let zi = cc.zone;
    let (zstart, zend) = (k.zones[zi].start_pfn as u64, k.zones[zi].end_pfn as u64);
    let incremental = cc.incremental(k);
    let near_free = k.sw.on(Switch::CompactionCachedFreePfnNearFree);
    let skip_bits = k.sw.on(Switch::CompactionSkipBits);
    let low = cc.migrate_pfn + PAGEBLOCK_NR_PAGES;
    let mut pfn = cc.free_pfn;
    let mut high = low.min(pfn);
    let mut nfree = cc.freepages.len();
    while pfn > low && cc.nr_migratepages > nfree {
        if cc.must_back_out(k) {
            // c67fe375: zone->lock not taken; the search ends here.
            break;
        }
        if incremental && !near_free {
            // 7db8889a as merged: skip ahead to where another compactor left the cache.
            let cached = k.zones[zi].compact_cached_free_pfn;
            if !cc.wrapped || cached > cc.start_free_pfn {
                pfn = pfn.min(cached);
            }
        }
        if pfn >= zstart
            && pfn < zend
            && suitable_migration_target(k, zi, pfn)
            && !(skip_bits && k.zones[zi].pageblock_skip(pfn as Pfn))
        {
            // From 3.7 (the fix that followed c89511ab) a scan that starts inside a block
            // ends with it; 3.6 took a block's length from wherever it started.
            let end = if skip_bits {
                (pfn + 1).next_multiple_of(PAGEBLOCK_NR_PAGES)
            } else {
                pfn + PAGEBLOCK_NR_PAGES
            }
            .min(zend);
            let isolated = isolate_freepages_block(k, cc, pfn, end);
            nfree += isolated as usize;
            if skip_bits && isolated == 0 {
                update_pageblock_skip(k, cc, pfn, false);
            }
            if isolated > 0 {
                cc.finished_update_free = true;
                high = high.max(pfn);
                if incremental && (!near_free || cc.wrapped) {
                    k.zones[zi].compact_cached_free_pfn = high;
                }
            }
        }
        if pfn < PAGEBLOCK_NR_PAGES {
            break;
        }
        pfn -= PAGEBLOCK_NR_PAGES;
    }
    cc.free_pfn = high;
    if incremental && near_free && !cc.wrapped {
        let z = &mut k.zones[zi];
        if z.compact_cached_free_pfn == start_free_pfn(z) {
            z.compact_cached_free_pfn = high;
        }
    }
}

/// `compaction_alloc`: a target page for migration, isolating more when the list is empty.
fn compaction_alloc(k: &mut Kernel, cc: &mut CompactControl) -> Option<Pfn> {
    if cc.freepages.is_empty() {
        isolate_freepages(k, cc);
    }
    let pfn = cc.freepages.pop()?;
    k.pages.flags[pfn as usize] = 0;
    Some(pfn)
}

/// `compact_capture_page` (patch 3): take a free block of the wanted order or larger off
/// the lists of the caller's type (any of the three for MOVABLE) and split it to the order
/// (`capture_free_page`), if the zone stays above its low watermark plus the block.
fn compact_capture_page(k: &mut Kernel, cc: &mut CompactControl) {
    let Some(order) = cc.order else { return };
    let types: &[usize] = if cc.migratetype == MIGRATE_MOVABLE {
        &[MIGRATE_UNMOVABLE, MIGRATE_RECLAIMABLE, MIGRATE_MOVABLE]
    } else {
        std::slice::from_ref(&cc.migratetype)
    };
    for &mt in types {
        for o in order as usize..MAX_ORDER {
            let head = k.zones[cc.zone].free_area[o].free_list[mt].head;
            if head == super::page::NIL {
                continue;
            }
            let z = &k.zones[cc.zone];
            if !zone_watermark_ok(z, 0, z.low_wmark() + (1 << o), 0, 0) {
                return;
            }
            let super::Kernel { pages, zones, .. } = k;
            page_alloc::capture_free_block(pages, &mut zones[cc.zone], head, o, order as usize, mt);
            claim_pageblocks(&mut zones[cc.zone], head, o);
            cc.captured = Some(head);
            return;
        }
    }
}

/// `release_freepages`: isolated free pages not used go back to the allocator.
fn release_freepages(k: &mut Kernel, cc: &mut CompactControl) {
    while let Some(pfn) = cc.freepages.pop() {
        k.pages.flags[pfn as usize] = 0;
        page_alloc::free_page(k, pfn);
    }
}

/// What one step of `compact_zone`'s loop asks of the task next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// Spend this much CPU time (what it scanned and copied).
    Cpu(u64),
    /// Spend it, then end the run.
    CpuThenDone(u64, CompactResult),
    /// Too many pages isolated: wait for reclaim to put some back.
    Throttle,
    /// The run is over.
    Done(CompactResult),
}

/// One isolate-and-migrate step of `compact_zone`'s loop.
fn compact_step(k: &mut Kernel, cc: &mut CompactControl) -> Step {
    let scanned_before = cc.stats.migrate_scanned + cc.stats.free_scanned;
    match isolate_migratepages(k, cc) {
        Isolate::Abort => return Step::Done(CompactResult::Partial),
        Isolate::Throttle => return Step::Throttle,
        Isolate::None => return Step::Cpu(COMPACT_SCAN_PFN_NS),
        Isolate::Success => {}
    }
    cc.stats.batches += 1;
    let mut list = std::mem::take(&mut cc.migratepages);
    cc.nr_migratepages = list.len();
    let mode = cc.mode;
    let r = migrate::migrate_pages(k, &mut list, |k| compaction_alloc(k, cc), mode);
    for &pfn in &list {
        migrate::putback_lru_page(k, pfn);
    }
    list.clear();
    cc.migratepages = list;
    cc.nr_migratepages = 0;
    let out_of_targets = r.nomem && k.sw.on(Switch::CompactionAbortOnEnomem);
    // A run that ends for want of targets leaves before the capture (§6.4).
    if cc.capture && cc.captured.is_none() && !out_of_targets {
        compact_capture_page(k, cc);
    }
    cc.stats.migrated += r.succeeded as u64;
    cc.stats.migrate_failed += r.failed as u64;
    k.count(VmEvent::pgmigrate_success, r.succeeded as u64);
    k.count(VmEvent::pgmigrate_fail, r.failed as u64);
    let scanned = cc.stats.migrate_scanned + cc.stats.free_scanned - scanned_before;
    // At least a frame's worth: a step that backed out still yields the CPU.
    let ns = (scanned * COMPACT_SCAN_PFN_NS + r.succeeded as u64 * MIGRATE_PAGE_NS)
        .max(COMPACT_SCAN_PFN_NS);
    if out_of_targets {
        // 4bf2bba3: no page to move into; the run ends once this step's work is done.
        return Step::CpuThenDone(ns, CompactResult::Partial);
    }
    Step::Cpu(ns)
}

/// Where a run's scanners start (`compact_zone`): the zone's ends (3.3-3.5), the cached
/// free pfn for order > 0 (3.6), or both cached pfns (3.7+), which a direct or proc run
/// that follows the longest deferral also resets.
fn start_scanners(k: &mut Kernel, cc: &mut CompactControl) {
    let incremental = cc.incremental(k);
    let skip_bits = k.sw.on(Switch::CompactionSkipBits);
    let z = &mut k.zones[cc.zone];
    if skip_bits {
        // c89511ab: both scanners start where the zone's cache says.
        let (start, end) = (z.start_pfn as u64, z.end_pfn as u64);
        if !(start..=end).contains(&z.compact_cached_free_pfn) {
            z.compact_cached_free_pfn = start_free_pfn(z);
        }
        if !(start..=end).contains(&z.compact_cached_migrate_pfn) {
            z.compact_cached_migrate_pfn = start;
        }
        cc.migrate_pfn = z.compact_cached_migrate_pfn;
        cc.free_pfn = z.compact_cached_free_pfn;
        if !cc.kswapd && compaction_restarting(z, cc.order) {
            // 62997027: after the longest deferral, forget the skip bits (this run
            // still starts at the pfns it read).
            reset_isolation_suitable_zone(z);
        }
    } else {
        cc.migrate_pfn = z.start_pfn as u64;
        cc.free_pfn = if incremental {
            z.compact_cached_free_pfn
        } else {
            start_free_pfn(z)
        };
    }
    cc.start_free_pfn = cc.free_pfn;
}

/// `compact_zone` (§6.4): run the scanners until `compact_finished` says stop.
pub async fn compact_zone(w: &World, cc: &mut CompactControl) -> CompactResult {
    {
        let mut k = w.borrow_mut();
        let ret = compaction_suitable(&k, cc.zone, cc.order);
        if matches!(ret, CompactResult::Skipped | CompactResult::Partial) {
            return ret;
        }
        start_scanners(&mut k, cc);
    }
    let ret = loop {
        let step = {
            let mut k = w.borrow_mut();
            match compact_finished(&mut k, cc) {
                CompactResult::Continue => compact_step(&mut k, cc),
                done => Step::Done(done),
            }
        };
        match step {
            Step::Done(done) => break done,
            Step::Throttle => {
                charge_compaction(w, cc).await;
                // congestion_wait(BLK_RW_ASYNC, HZ/10)
                super::vmscan::congestion_wait(w, HZ_10).await;
                cc.slice = 0;
            }
            Step::Cpu(ns) => {
                cc.owed += ns;
                if cc.owed >= CPU_QUANTUM_NS {
                    charge_compaction(w, cc).await;
                }
            }
            Step::CpuThenDone(ns, done) => {
                cc.owed += ns;
                break done;
            }
        }
    };
    charge_compaction(w, cc).await;
    let mut k = w.borrow_mut();
    release_freepages(&mut k, cc);
    let s = cc.stats;
    k.count(VmEvent::compact_migrate_scanned, s.migrate_scanned);
    k.count(VmEvent::compact_free_scanned, s.free_scanned);
    k.count(VmEvent::compact_isolated, s.isolated);
    ret
}

/// Charge the CPU time the run's steps owe (`cc.owed`); a charge that waited for a CPU
/// starts a new timeslice (`cc.slice`).
async fn charge_compaction(w: &World, cc: &mut CompactControl) {
    let ns = std::mem::take(&mut cc.owed);
    if ns == 0 {
        return;
    }
    let t0 = w.borrow().sched.now();
    engine::run_cpu(w, ns, CpuMode::System).await;
    let waited = w.borrow().sched.now() - t0 > ns;
    cc.slice = if waited { 0 } else { cc.slice + ns };
}

/// What a direct compaction found: its result, a block captured for the caller (patch 3),
/// and whether an async scanner backed out (c67fe375).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirectCompaction {
    pub result: CompactResult,
    pub captured: Option<Pfn>,
    pub contended: bool,
}

/// `try_to_compact_pages` (§6.1): direct compaction for an allocation of `order`, zone by
/// zone in zonelist order until one meets its low watermark at the order (or, with
/// capture, until a block is captured).
pub async fn try_to_compact_pages(
    w: &World,
    gfp: Gfp,
    order: u32,
    mode: MigrateMode,
) -> DirectCompaction {
    let mut out = DirectCompaction {
        result: CompactResult::Skipped,
        captured: None,
        contended: false,
    };
    if order == 0 || !gfp.has(Gfp::FS) || !gfp.has(Gfp::IO) {
        return out;
    }
    let capture = {
        let mut k = w.borrow_mut();
        k.count(VmEvent::compact_stall, 1);
        k.sw.on(Switch::CompactionCapture)
    };
    let mt = page_alloc::gfp_migratetype(gfp);
    for zi in (0..super::mmzone::MAX_NR_ZONES).rev() {
        if !w.borrow().zones[zi].populated() {
            continue;
        }
        let mut cc = CompactControl::new(zi, Some(order), mt, mode);
        cc.capture = capture;
        let status = compact_zone(w, &mut cc).await;
        out.result = out.result.max(status);
        out.contended = cc.contended;
        if cc.captured.is_some() {
            out.captured = cc.captured;
            break;
        }
        let k = w.borrow();
        let z = &k.zones[zi];
        if zone_watermark_ok(z, order, z.low_wmark(), 0, 0) {
            break;
        }
    }
    out
}

/// `compact_pgdat` (3.4+, `7be62de9`): kswapd's async compaction of every zone for `order`,
/// each unless deferred. A zone left with a free block of the order raises its
/// `compact_order_failed` past it; async failures never defer.
pub async fn compact_pgdat(w: &World, order: u32) {
    for zi in 0..super::mmzone::MAX_NR_ZONES {
        if !w.borrow().zones[zi].populated() {
            continue;
        }
        if !compaction_deferred(&mut w.borrow_mut(), zi, order) {
            let mut cc = CompactControl::new(zi, Some(order), MIGRATE_MOVABLE, MigrateMode::Async);
            cc.kswapd = true;
            compact_zone(w, &mut cc).await;
        }
        let mut k = w.borrow_mut();
        let z = &mut k.zones[zi];
        if zone_watermark_ok(z, order, z.low_wmark(), 0, 0) && order >= z.compact_order_failed {
            z.compact_order_failed = order + 1;
        }
    }
}

/// `compact_nodes` (`echo 1 > /proc/sys/vm/compact_memory`): every zone compacted whole,
/// sync, ignoring deferral.
pub async fn compact_memory(w: &World) {
    for zi in 0..super::mmzone::MAX_NR_ZONES {
        if !w.borrow().zones[zi].populated() {
            continue;
        }
        let mut cc = CompactControl::new(zi, None, MIGRATE_MOVABLE, MigrateMode::SyncLight);
        compact_zone(w, &mut cc).await;
    }
}

#[cfg(test)]
mod tests;
