//! Kernel presets and behaviour switches: one registry, the order of which is the order of
//! `mmsim kernels` and of the docs.
//!
//! A switch models one patch. Model code asks `sw.on(Switch::X)` at the one place the patch
//! changed; a preset is a named set of switches that are on. Any switch can be set on its own
//! in a scenario (`[kernel.switches]`) or on the command line (`--set name=true`), so one
//! patch of a series can be ablated.
//!
//! Sources: `shared/seeds/000-kswapd-reclaim-stalls.txt` (the series and its follow-up) and
//! `shared/reference/kernel-reclaim.md` §2.8 (KS patches), §4.2, §4.5, §4.9 (LD patches).

use std::fmt;

/// A behaviour switch. The discriminant indexes the bit set and the registry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Switch {
    KswapdLimitReclaimPerPriority,
    KswapdProportionalScan,
    KswapdFlattenPriorityLoop,
    KswapdCompactOnProgress,
    KswapdNoMaxPriority,
    KswapdWritebackOnTailDirty,
    KswapdBlockOnWriteback,
    KswapdWritepageOncePerPass,
    KswapdShrinkZone,
    KswapdWritebackFix2,
    StallOnDirtyEncountered,
    StallAfterPageList,
    SetZoneFlagsBeforeBlocking,
    DirectWaitIffCongestedInShrinkList,
    ImmediateReclaimIsCongestion,
    BufferDirtyWritebackHook,
    NfsDirtyWritebackHook,
    IolessBalanceDirtyPages,
    IolessBdiLimitGate,
    IolessBdiStatMargin,
    IolessPerTaskRatelimit,
    IolessNoDuplicateBalance,
    IolessBandwidthEstimation,
    IolessQuitOnBdiDrop,
    IolessFastBdiRampUp,
    IolessDirtyBgGap,
    IolessTaskThreshSplit,
    IolessMaxPause200ms,
    IolessEarlyBackgroundWriteback,
    IolessThinkTime,
    IolessBaseThrottleBandwidth,
    IolessSmoothedBdiDirty,
    IolessMaxPauseByMemory,
    IolessMinPauseConcurrent,
    IolessChunkByBandwidth,
    BtrfsNoBalanceOnDirtyPages,
    BtrfsDirtyBatch16,
    BtrfsAsyncBioLimit,
    NfsWritebackWaitQueue,
    NfsInCommitLimit,
    NfsCommitHeuristics,
    NfsWriteInodeKeepsNrToWrite,
    NfsCommitRange,
    NfsCongestionByDirtyThresh,
    DirectReclaimNoFsWriteback,
    LumpyNoSyncPageoutWait,
    KswapdFsWritebackAtRaisedPriority,
    KswapdNoFsWriteback,
    ThrottleReclaimOnWriteback,
    ImmediateReclaimDirtyLruTail,
    PromoteSharedFileMappedPages,
    ActivateExecPagesAfterFirstUsage,
    KswapdNoCongestionWait,
    KswapdWritepageByPriority,
    OnlyEvictFileWhenPlenty,
    MemcgWaitOnWriteback,
    SwappinessZeroAvoidsSwap,
    ForceScanSmallTargets,
    CompactionDeferByOrder,
    ReclaimAtOrder0WithCompaction,
    KswapdCompactPgdat,
    RemoveLumpyReclaim,
    CompactionAbortOnEnomem,
    CompactionCachedFreePfn,
    CompactionCachedFreePfnNearFree,
    RemoveGfpNoKswapd,
    KswapdZoneBalancedForCompaction,
    KswapdNoPerZoneCompactionRecheck,
    ReclaimCompactionScaleByFailures,
    CompactionCapture,
    CompactionAbortOnContention,
    CompactionAbortWhenContended,
    CompactionSkipBits,
    CompactionMigrateScanOneBlock,
    SoftReclaimInShrinkZone,
    SoftReclaimInLimitReclaim,
}

/// A registry entry.
#[derive(Debug)]
pub struct SwitchDef {
    /// The switch.
    pub switch: Switch,
    /// Name used in scenarios and on the command line.
    pub name: &'static str,
    /// The patch subject it models.
    pub patch: &'static str,
    /// The series, author and date.
    pub series: &'static str,
    /// What changes in the model when it is on.
    pub doc: &'static str,
}

const KS: &str = "\"Reduce system disruption due to kswapd\" V4, Mel Gorman, 2013-05 (mmotm-20130522; mainline 3.11)";
const LD: &str = "\"Reduce system disruption due to kswapd followup\" V3 (lessdisrupt-v7r10), Mel Gorman, 2013-05-30 (mainline 3.11)";
const MAINLINE: &str = "mainline";
const HIGHALLOC: &str = "\"Improve hugepage allocation success rates under load\" V4, Mel Gorman, 2012-08-14 (seed 004; on 3.6-rc1-akpm)";
const NOWB: &str = "\"Reduce filesystem writeback from page reclaim\" V3, Mel Gorman, 2011-08 (seed 002; on 3.0, mainline 3.2)";
const NOWB_V2: &str = "\"Reduce filesystem writeback from page reclaim\" V2, Mel Gorman, 2011-07-21 (on 3.0; V3 dropped this patch)";
const SOFTLIMIT: &str = "\"Soft limit rework\" v5.1, Michal Hocko, 2013-07-26 (seed 001; on mmotm-2013-07-18; merged for 3.12, reverted before its release)";
const IOLESS: &str = "\"IO-less dirty throttling\" v3, Wu Fengguang, 2010-12-13 (seed 003; merged in reworked form in 3.1-3.3)";

/// Every switch, in documentation order.
pub static SWITCHES: &[SwitchDef] = &[
    SwitchDef {
        switch: Switch::KswapdLimitReclaimPerPriority,
        name: "kswapd_limit_reclaim_per_priority",
        patch: "mm: vmscan: Limit the number of pages kswapd reclaims at each priority",
        series: KS,
        doc: "kswapd's per-zone target becomes max(SWAP_CLUSTER_MAX, high watermark) instead of unlimited.",
    },
    SwitchDef {
        switch: Switch::KswapdProportionalScan,
        name: "kswapd_proportional_scan",
        patch: "mm: vmscan: Obey proportional scanning requirements for kswapd",
        series: KS,
        doc: "Once shrink_lruvec meets its target, kswapd and memcg reclaim finish the scan keeping the anon/file \
              proportion get_scan_count chose; global direct reclaim stops at its target at every priority.",
    },
    SwitchDef {
        switch: Switch::KswapdFlattenPriorityLoop,
        name: "kswapd_flatten_priority_loop",
        patch: "mm: vmscan: Flatten kswapd priority loop",
        series: KS,
        doc: "balance_pgdat no longer restarts at priority 12 after 32 pages: the priority only drops when a pass \
              could not scan its target or reclaimed nothing.",
    },
    SwitchDef {
        switch: Switch::KswapdCompactOnProgress,
        name: "kswapd_compact_on_progress",
        patch: "mm: vmscan: Decide whether to compact the pgdat based on reclaim progress",
        series: KS,
        doc: "kswapd compacts the pgdat inside the balance loop, after a pass that reclaimed more than it \
              attempted, instead of once at the end of balance_pgdat.",
    },
    SwitchDef {
        switch: Switch::KswapdNoMaxPriority,
        name: "kswapd_no_max_priority",
        patch: "mm: vmscan: Do not allow kswapd to scan at maximum priority",
        series: KS,
        doc: "The kswapd loop ends at priority 1: kswapd never scans whole LRU lists at priority 0.",
    },
    SwitchDef {
        switch: Switch::KswapdWritebackOnTailDirty,
        name: "kswapd_writeback_on_tail_dirty",
        patch: "mm: vmscan: Have kswapd writeback pages based on dirty pages encountered, not priority",
        series: KS,
        doc: "New zone flag ZONE_TAIL_LRU_DIRTY, set when enough isolated pages are unqueued dirty; kswapd writes \
              file pages only in zones so flagged, instead of below priority 10.",
    },
    SwitchDef {
        switch: Switch::KswapdBlockOnWriteback,
        name: "kswapd_block_on_writeback",
        patch: "mm: vmscan: Block kswapd if it is encountering pages under writeback",
        series: KS,
        doc: "New zone flag ZONE_WRITEBACK, set by the writeback throttle test; kswapd meeting a PG_reclaim page \
              under writeback in such a zone sleeps in congestion_wait(HZ/10) inside shrink_page_list.",
    },
    SwitchDef {
        switch: Switch::KswapdWritepageOncePerPass,
        name: "kswapd_writepage_once_per_pass",
        patch: "mm: vmscan: Check if kswapd should writepage once per pgdat scan",
        series: KS,
        doc: "The `priority < 10 → may_writepage` decision is taken once per balance pass, not per zone.",
    },
    SwitchDef {
        switch: Switch::KswapdShrinkZone,
        name: "kswapd_shrink_zone",
        patch: "mm: vmscan: Move logic from balance_pgdat() to kswapd_shrink_zone()",
        series: KS,
        doc: "kswapd_shrink_zone clears ZONE_WRITEBACK after every zone it shrinks, and clears ZONE_CONGESTED and \
              ZONE_TAIL_LRU_DIRTY when the zone is balanced afterwards.",
    },
    SwitchDef {
        switch: Switch::KswapdWritebackFix2,
        name: "kswapd_block_on_writeback_fix2",
        patch: "mm: vmscan: Block kswapd if it is encountering pages under writeback -fix-2",
        series: LD,
        doc: "After kswapd's in-loop congestion_wait the page is kept instead of falling through to be reclaimed. \
              mmsim deviation: with the switch off a page still under writeback after the wait is kept anyway, \
              since freeing it would break the page-state invariants.",
    },
    SwitchDef {
        switch: Switch::StallOnDirtyEncountered,
        name: "stall_on_dirty_encountered",
        patch: "mm: vmscan: Stall page reclaim and writeback pages based on dirty/writepage pages encountered",
        series: LD,
        doc: "Dirty/writeback/congested pages are counted at the top of shrink_page_list for file pages only \
              (page_check_dirty_writeback); ZONE_TAIL_LRU_DIRTY is set only when the whole batch is unqueued dirty, \
              and reclaim then congestion_waits before kswapd starts writing.",
    },
    SwitchDef {
        switch: Switch::StallAfterPageList,
        name: "stall_after_page_list",
        patch: "mm: vmscan: Stall page reclaim after a list of pages have been processed",
        series: LD,
        doc: "kswapd no longer sleeps inside shrink_page_list: it counts nr_immediate and sleeps once per batch.",
    },
    SwitchDef {
        switch: Switch::SetZoneFlagsBeforeBlocking,
        name: "set_zone_flags_before_blocking",
        patch: "mm: vmscan: Set zone flags before blocking",
        series: LD,
        doc: "ZONE_WRITEBACK is set before the writeback throttle's wait rather than after it.",
    },
    SwitchDef {
        switch: Switch::DirectWaitIffCongestedInShrinkList,
        name: "direct_wait_iff_congested_in_shrink_list",
        patch: "mm: vmscan: Move direct reclaim wait_iff_congested into shrink_list",
        series: LD,
        doc: "ZONE_CONGESTED is decided in shrink_inactive_list; the writeback throttle only flags ZONE_WRITEBACK; \
              direct reclaim calls wait_iff_congested after every batch; the per-priority nap in \
              do_try_to_free_pages goes.",
    },
    SwitchDef {
        switch: Switch::ImmediateReclaimIsCongestion,
        name: "immediate_reclaim_is_congestion",
        patch: "mm: vmscan: Treat pages marked for immediate reclaim as zone congestion",
        series: LD,
        doc: "A page under writeback with PG_reclaim counts as congested when deciding ZONE_CONGESTED.",
    },
    SwitchDef {
        switch: Switch::BufferDirtyWritebackHook,
        name: "buffer_is_dirty_writeback",
        patch: "mm: vmscan: Take page buffers dirty and locked state into account",
        series: LD,
        doc: "New is_dirty_writeback address-space hook; the buffer-head version (block devices, ext3) reports a \
              page dirty only if a buffer is dirty and under writeback if a buffer is locked.",
    },
    SwitchDef {
        switch: Switch::NfsDirtyWritebackHook,
        name: "nfs_is_dirty_writeback",
        patch: "fs: nfs: Inform the VM about pages being committed or unstable",
        series: LD,
        doc: "NFS's is_dirty_writeback: pages of an inode being committed count as writeback, unstable pages as dirty.",
    },
    SwitchDef {
        switch: Switch::IolessBalanceDirtyPages,
        name: "ioless_balance_dirty_pages",
        patch: "writeback: IO-less balance_dirty_pages() (patch 03; with 04, and the trace points of 14, 32-34, 46 and 47)",
        series: IOLESS,
        doc: "On a 2.6.37 kernel: dirtiers no longer write pages; the flusher alone does. A dirtier sleeps \
              HZ x pages_dirtied / bw jiffies, clamped to [1 jiffy, 100 ms], with bw falling linearly from \
              100 MB/s to 0 across the top sixteenth of its task limit (the bdi limit less bdi_limit/16 x its \
              share of recent dirtyings), and 100 ms at or above it; it loops while the bdi or the machine \
              was over its limit before the sleep. The later patches below refine each rule. \
              A 3.x kernel has the reworked, merged design built in.",
    },
    SwitchDef {
        switch: Switch::IolessBdiLimitGate,
        name: "ioless_bdi_limit_gate",
        patch: "writeback: enabling gate limit for light dirtied bdi (patch 01)",
        series: IOLESS,
        doc: "bdi_dirty_limit keeps a global margin of 1/128 of the limit (at most 32 MiB) and gives a bdi \
              with a small share at least half of the global headroom left.",
    },
    SwitchDef {
        switch: Switch::IolessBdiStatMargin,
        name: "ioless_bdi_stat_margin",
        patch: "writeback: safety margin for bdi stat error (patch 02)",
        series: IOLESS,
        doc: "bdi_dirty_limit first takes bdi_stat_error off the global limit (0 if the limit is smaller).",
    },
    SwitchDef {
        switch: Switch::IolessPerTaskRatelimit,
        name: "ioless_per_task_ratelimit",
        patch: "writeback: per-task rate limit on balance_dirty_pages() (patch 05, with its fix 19)",
        series: IOLESS,
        doc: "The per-CPU rate limit goes: a task enters the throttle after nr_dirtied_pause pages (1 + the \
              square root of the headroom at first and after a call that stayed below the background \
              limit; +1/32 + 1 after a short pause, -1/4 after a maximum one), or at every page while its \
              bdi is over its limit.",
    },
    SwitchDef {
        switch: Switch::IolessNoDuplicateBalance,
        name: "ioless_no_duplicate_balance",
        patch: "writeback: prevent duplicate balance_dirty_pages_ratelimited() calls (patch 06)",
        series: IOLESS,
        doc: "generic_perform_write runs the throttle hook only after a write that dirtied a clean page \
              (a 1 KiB dd calls it once a page, not four times).",
    },
    SwitchDef {
        switch: Switch::IolessBandwidthEstimation,
        name: "ioless_bandwidth_estimation",
        patch: "writeback: bdi write bandwidth estimation (patches 07, 08 and 18, in the final form of 20-23)",
        series: IOLESS,
        doc: "Each bdi estimates its write bandwidth from its written pages: at most every 100 ms, a moving \
              average with the new sample weighted elapsed/256 jiffies (at most 1/2), updated from the \
              throttle and the flusher; it replaces the fixed 100 MB/s base.",
    },
    SwitchDef {
        switch: Switch::IolessQuitOnBdiDrop,
        name: "ioless_quit_on_bdi_drop",
        patch: "writeback: quit throttling when bdi dirty pages dropped low (patch 10, with 25)",
        series: IOLESS,
        doc: "A throttled task leaves the loop when the machine is within its limit and the bdi's dirty \
              pages fell by more than an eighth of a second of write bandwidth since the last iteration.",
    },
    SwitchDef {
        switch: Switch::IolessFastBdiRampUp,
        name: "ioless_fast_bdi_ramp_up",
        patch: "writeback: reduce per-bdi dirty threshold ramp up time (patch 11)",
        series: IOLESS,
        doc: "The proportions' period shift is ilog2(dirty_total - 1) - 1 instead of + 2: bdi and task \
              shares follow 8 times faster.",
    },
    SwitchDef {
        switch: Switch::IolessDirtyBgGap,
        name: "ioless_dirty_bg_gap",
        patch: "writeback: make reasonable gap between the dirty/background thresholds (patch 12, v3 only)",
        series: IOLESS,
        doc: "The background limit is at most 3/4 of the dirty limit (it was halved only when at or above it).",
    },
    SwitchDef {
        switch: Switch::IolessTaskThreshSplit,
        name: "ioless_task_thresh_split",
        patch: "writeback: scale down max throttle bandwidth on concurrent dirtiers (patch 13)",
        series: IOLESS,
        doc: "The bdi limit stays raw beside the task limit: the rate is base x (bdi_limit - dirty)/(bdi_limit/8) \
              x (task_limit - dirty)/(bdi_limit/16), hard throttling starts at the task limit, and the loop \
              test uses the bdi limit.",
    },
    SwitchDef {
        switch: Switch::IolessMaxPause200ms,
        name: "ioless_max_pause_200ms",
        patch: "writeback: increase pause time on concurrent dirtiers (patch 24)",
        series: IOLESS,
        doc: "MAX_PAUSE is 200 ms (HZ/5) instead of 100 ms.",
    },
    SwitchDef {
        switch: Switch::IolessEarlyBackgroundWriteback,
        name: "ioless_early_background_writeback",
        patch: "writeback: start background writeback earlier (patch 26)",
        series: IOLESS,
        doc: "Every throttled iteration starts background writeback if the flusher is idle, not only the \
              end of the call.",
    },
    SwitchDef {
        switch: Switch::IolessThinkTime,
        name: "ioless_think_time",
        patch: "writeback: user space think time compensation (patch 27)",
        series: IOLESS,
        doc: "A task's pause is its period (HZ x pages/rate + 1) from the end of its last paid-for period: \
              one that arrives up to 10 s late does not sleep (up to 100 ms late it carries the debt); more \
              than 10 s late, or never paused, it sleeps the maximum. The machine over its limit also throttles hard.",
    },
    SwitchDef {
        switch: Switch::IolessBaseThrottleBandwidth,
        name: "ioless_base_throttle_bandwidth",
        patch: "writeback: bdi base throttle bandwidth (patch 28)",
        series: IOLESS,
        doc: "The rate's base is a per-bdi throttle bandwidth, cut when the bdi's dirty pages reach the top \
              sixteenth of its limit (or two sixteenths, while above 1.5 x the write bandwidth) and raised \
              by 1/16 + 1 below 2.5 sixteenths while under half of it, at each bandwidth update.",
    },
    SwitchDef {
        switch: Switch::IolessSmoothedBdiDirty,
        name: "ioless_smoothed_bdi_dirty",
        patch: "writeback: smoothed bdi dirty pages (patch 29)",
        series: IOLESS,
        doc: "The throttle reads a smoothed bdi dirty count (1/16 moving average with hysteresis, never \
              below the instantaneous count), which also steers the base throttle bandwidth.",
    },
    SwitchDef {
        switch: Switch::IolessMaxPauseByMemory,
        name: "ioless_max_pause_by_memory",
        patch: "writeback: adapt max balance pause time to memory size (patch 30)",
        series: IOLESS,
        doc: "The longest pause is 1 ms per 4 MiB of the bdi's limit plus 2 jiffies, at most MAX_PAUSE.",
    },
    SwitchDef {
        switch: Switch::IolessMinPauseConcurrent,
        name: "ioless_min_pause_concurrent",
        patch: "writeback: increase min pause time on concurrent dirtiers (patch 31)",
        series: IOLESS,
        doc: "nr_dirtied_pause grows after any pause up to 10 ms per halving of the base throttle bandwidth \
              below the write bandwidth (at most half the maximum pause), not only after 1 jiffy.",
    },
    SwitchDef {
        switch: Switch::IolessChunkByBandwidth,
        name: "ioless_chunk_by_bandwidth",
        patch: "writeback: scale IO chunk size up to device bandwidth (patch 35)",
        series: IOLESS,
        doc: "The flusher's slice per inode is one second of write bandwidth rounded down to a power of two, \
              at least 4 MiB.",
    },
    SwitchDef {
        switch: Switch::BtrfsNoBalanceOnDirtyPages,
        name: "btrfs_no_balance_on_dirty_pages",
        patch: "btrfs: dont call balance_dirty_pages_ratelimited() on already dirty pages (patch 36 of v3)",
        series: IOLESS,
        doc: "A write(2) to btrfs runs the dirty-throttle hook only when it dirtied a page that was clean before \
              it; btrfs still re-dirties (and re-accounts) a dirty page at every small write.",
    },
    SwitchDef {
        switch: Switch::BtrfsDirtyBatch16,
        name: "btrfs_dirty_batch_16",
        patch: "btrfs: lower the dirty balancing rate limit (patch 37 of v3)",
        series: IOLESS,
        doc: "btrfs_file_aio_write prepares and dirties at most 16 pages between dirty-throttle hooks instead \
              of a page of pointers' worth (512 pages): a 1 MiB write runs the hook 16 times, not once with \
              all 256 pages.",
    },
    SwitchDef {
        switch: Switch::BtrfsAsyncBioLimit,
        name: "btrfs_async_bio_limit",
        patch: "btrfs: wait on too many nr_async_bios (patch 38 of v3)",
        series: IOLESS,
        doc: "A btrfs writeback submitter that queued a bio to the submit worker waits while more than \
              btrfs_async_submit_limit (256 bios per open device, up to the worker pool) wait for it, so \
              pages under writeback stay bounded instead of all dirty pages going to writeback.",
    },
    SwitchDef {
        switch: Switch::NfsWritebackWaitQueue,
        name: "nfs_writeback_wait_queue",
        patch: "NFS: writeback pages wait queue (patch 40 of v3)",
        series: IOLESS,
        doc: "An NFS mount's write congestion gets two classes: ASYNC above nfs_congestion_kb in WRITEs, SYNC \
              above twice that, each cleared 1 MiB (at most an eighth of the limit) below its threshold. After \
              each page nfs_writepages adds to a WRITE, the writer sleeps while its class (SYNC for \
              WB_SYNC_ALL) is congested, so the flusher blocks on NFS writeback as on a block queue.",
    },
    SwitchDef {
        switch: Switch::NfsInCommitLimit,
        name: "nfs_in_commit_limit",
        patch: "nfs: in-commit pages accounting and wait queue (patch 41 of v3)",
        series: IOLESS,
        doc: "The mount counts the pages in COMMITs in flight (in_commit); the flusher's non-sync \
              nfs_commit_inode first sleeps while in_commit is at least nfs_congestion_kb, and is woken once \
              it is below that less an eighth.",
    },
    SwitchDef {
        switch: Switch::NfsCommitHeuristics,
        name: "nfs_commit_heuristics",
        patch: "nfs: heuristics to avoid commit (patch 42 of v3)",
        series: IOLESS,
        doc: "The flusher's write_inode commits when no WRITE of the inode is in flight (ncommit == npages), \
              when 4 MiB await COMMIT, or when they are more than half the mount's in_commit; otherwise it \
              defers. Replaces the rule of deferring while at most half of the inode's requests await COMMIT.",
    },
    SwitchDef {
        switch: Switch::NfsWriteInodeKeepsNrToWrite,
        name: "nfs_write_inode_keeps_nr_to_write",
        patch: "nfs: dont change wbc->nr_to_write in write_inode() (patch 43 of v3)",
        series: IOLESS,
        doc: "Pages the flusher's write_inode puts in a COMMIT no longer count against its nr_to_write: \
              only pages written count towards the inode's slice.",
    },
    SwitchDef {
        switch: Switch::NfsCommitRange,
        name: "nfs_commit_range",
        patch: "nfs: limit the range of commits (patch 44 of v3)",
        series: IOLESS,
        doc: "A COMMIT covers the first to the last page index of its requests instead of the whole file. \
              The server model's COMMIT costs the same either way, so only the nfs_commit_release trace \
              (offset, len in page indices, as the patch puts them) changes.",
    },
    SwitchDef {
        switch: Switch::NfsCongestionByDirtyThresh,
        name: "nfs_congestion_by_dirty_thresh",
        patch: "nfs: adapt congestion threshold to dirty threshold (patch 45 of v3)",
        series: IOLESS,
        doc: "At mount, nfs_congestion_kb is also capped at an eighth of the boot-time global dirty \
              threshold, so WRITEs in flight stay a small part of the dirty pages.",
    },
    SwitchDef {
        switch: Switch::DirectReclaimNoFsWriteback,
        name: "direct_reclaim_no_fs_writeback",
        patch: "ee72886d mm: vmscan: do not writeback filesystem pages in direct reclaim (patch 1)",
        series: NOWB,
        doc: "Direct reclaim keeps a dirty file page instead of calling pageout on it, and counts it \
              (nr_vmscan_write_skip; nr_vmscan_immediate_reclaim once patch 7 renames the slot). \
              Anonymous pages are still swapped.",
    },
    SwitchDef {
        switch: Switch::LumpyNoSyncPageoutWait,
        name: "lumpy_no_sync_pageout_wait",
        patch: "mm: vmscan: remove dead code related to lumpy reclaim waiting on pages under writeback (patch 2)",
        series: NOWB,
        doc: "pageout no longer waits for the write it started in lumpy reclaim's synchronous pass; \
              the pass still waits on pages it finds under writeback. Without lumpy reclaim \
              (remove_lumpy_reclaim) it changes nothing.",
    },
    SwitchDef {
        switch: Switch::KswapdFsWritebackAtRaisedPriority,
        name: "kswapd_fs_writeback_at_raised_priority",
        patch: "f84f6e2b mm: vmscan: do not writeback filesystem pages in kswapd except in high priority (patch 5)",
        series: NOWB,
        doc: "kswapd writes a dirty file page only once its priority has dropped below \
              DEF_PRIORITY - 2 (10); before that it keeps the page as direct reclaim does.",
    },
    SwitchDef {
        switch: Switch::KswapdNoFsWriteback,
        name: "kswapd_no_fs_writeback",
        patch: "mm: vmscan: Do not writeback filesystem pages from kswapd (V2 patch 8/8)",
        series: NOWB_V2,
        doc: "kswapd never calls pageout on a dirty file page, at any priority: it keeps it as \
              direct reclaim does, counted and (with patch 7) marked PG_reclaim. The V3 letter \
              still names it as patch 8, but V3 has seven patches, so no preset carries it.",
    },
    SwitchDef {
        switch: Switch::ThrottleReclaimOnWriteback,
        name: "throttle_reclaim_on_writeback",
        patch: "92df3a72 mm: vmscan: throttle reclaim if encountering too many dirty pages under writeback (patch 6)",
        series: NOWB,
        doc: "shrink_inactive_list counts the pages it met under writeback, and when they are at \
              least nr_taken >> (DEF_PRIORITY - priority) it waits in wait_iff_congested (HZ/10) \
              if the zone is congested.",
    },
    SwitchDef {
        switch: Switch::ImmediateReclaimDirtyLruTail,
        name: "immediate_reclaim_dirty_lru_tail",
        patch: "49ea7eb6 mm: vmscan: immediately reclaim end-of-LRU dirty pages when writeback completes (patch 7)",
        series: NOWB,
        doc: "A dirty file page reclaim keeps unwritten gets PG_reclaim, so the flusher's write \
              rotates it to the inactive tail to be freed at once; the counter slot becomes \
              nr_vmscan_immediate_reclaim.",
    },
    SwitchDef {
        switch: Switch::PromoteSharedFileMappedPages,
        name: "promote_shared_file_mapped_pages",
        patch: "34dbc67a vmscan: promote shared file mapped pages (3.3)",
        series: MAINLINE,
        doc: "page_check_references activates a file page referenced through more than one PTE \
              at once; without it (3.0-3.2) such a page is kept for a second trip like any other.",
    },
    SwitchDef {
        switch: Switch::ActivateExecPagesAfterFirstUsage,
        name: "activate_exec_pages_after_first_usage",
        patch: "c909e993 vmscan: activate executable pages after first usage (3.3)",
        series: MAINLINE,
        doc: "page_check_references activates a referenced page of an executable mapping at once; \
              without it (3.0-3.2) only shrink_active_list protects such pages.",
    },
    SwitchDef {
        switch: Switch::KswapdNoCongestionWait,
        name: "kswapd_no_congestion_wait",
        patch: "258401a6 mm: don't wait on congested zones in balance_pgdat() (3.9)",
        series: MAINLINE,
        doc: "Without it (3.0-3.8), a balance_pgdat pass that scanned anything below priority 10 \
              ends in congestion_wait(BLK_RW_ASYNC, HZ/10), or counts kswapd_skip_congestion_wait \
              instead when a zone is below its min watermark.",
    },
    SwitchDef {
        switch: Switch::KswapdWritepageByPriority,
        name: "kswapd_writepage_by_priority",
        patch: "3.9's balance_pgdat: may_writepage once the priority drops below 10 (commit not identified)",
        series: MAINLINE,
        doc: "Without it (3.0-3.8), kswapd turns may_writepage on once it has scanned more than \
              64 pages in this balance_pgdat and more than 1.5 times what it reclaimed (only \
              laptop_mode starts with it off).",
    },
    SwitchDef {
        switch: Switch::OnlyEvictFileWhenPlenty,
        name: "only_evict_file_when_plenty",
        patch: "e9868505 mm,vmscan: only evict file pages when we have plenty (3.8)",
        series: MAINLINE,
        doc: "get_scan_count scans only the file lists while the inactive file list is at least \
              as large as the active one; without it (3.0-3.7) anon and file are always \
              balanced by swappiness and the recent rotation ratios.",
    },
    SwitchDef {
        switch: Switch::MemcgWaitOnWriteback,
        name: "memcg_wait_on_writeback",
        patch: "e62e384e memcg: prevent OOM with too many dirty pages (3.6)",
        series: MAINLINE,
        doc: "limit reclaim meeting a page under writeback that it already marked PG_reclaim \
              waits for the writeback (when it may enter the filesystem); without it (before \
              3.6) it marks the page and moves on, as global reclaim does.",
    },
    SwitchDef {
        switch: Switch::SwappinessZeroAvoidsSwap,
        name: "swappiness_zero_avoids_swap",
        patch: "fe35004f mm: avoid swapping out with swappiness==0 (3.5)",
        series: MAINLINE,
        doc: "get_scan_count weighs anon by swappiness and file by 200 - swappiness, and scans \
              every list alike at priority 0 only when swappiness is not 0; without it (3.0-3.4) \
              the weights are swappiness + 1 and 201 - swappiness, and priority 0 scans every \
              list alike whatever swappiness is.",
    },
    SwitchDef {
        switch: Switch::ForceScanSmallTargets,
        name: "force_scan_small_targets",
        patch: "246e87a9 memcg: fix get_scan_count() for small targets (3.0-rc1)",
        series: MAINLINE,
        doc: "get_scan_count of 3.0: when a zone's LRU pages shifted by the priority come to \
              fewer than SWAP_CLUSTER_MAX, kswapd (and limit reclaim) scans 32 pages of every \
              list whose share rounds to 0, anon too while swap is on, so the 16 MiB DMA zone \
              is scanned like a large one at every priority. Off, the rule of b95a2f2d (3.3), \
              which every 3.9-based preset has: kswapd forces a scan only in a zone marked \
              all_unreclaimable, limit reclaim always, at most the list's size. 2.6.37 batched \
              small scans instead (nr_scan_try_batch, not modelled); only 3.0's presets carry it.",
    },
    SwitchDef {
        switch: Switch::CompactionDeferByOrder,
        name: "compaction_defer_by_order",
        patch: "aff62249 vmscan: only defer compaction for failed order and higher (3.4)",
        series: MAINLINE,
        doc: "A sync compaction failure defers compaction only for its order and above \
              (compact_order_failed); without it, a failure defers every order.",
    },
    SwitchDef {
        switch: Switch::ReclaimAtOrder0WithCompaction,
        name: "reclaim_at_order0_with_compaction",
        patch: "fe2c2a10 vmscan: reclaim at order 0 when compaction is enabled (3.4)",
        series: MAINLINE,
        doc: "Reclaim isolates the pages around an LRU page (contiguous, \"lumpy\" isolation) only in \
              RECLAIM_MODE_LUMPYRECLAIM, which a kernel with compaction never uses; kswapd checks a \
              zone at order 0 once compaction could run there (testorder). Without it (3.3), every \
              reclaim for order > 0, kswapd's included, isolates the aligned 2^order block around \
              each page it takes, and kswapd balances at the full order.",
    },
    SwitchDef {
        switch: Switch::KswapdCompactPgdat,
        name: "kswapd_compact_pgdat",
        patch: "7be62de9 vmscan: kswapd carefully call compaction (3.4)",
        series: MAINLINE,
        doc: "kswapd ends a high-order balance_pgdat with compact_pgdat when no zone has a free \
              block of the order at its low watermark; without it (3.3) kswapd never compacts.",
    },
    SwitchDef {
        switch: Switch::RemoveLumpyReclaim,
        name: "remove_lumpy_reclaim",
        patch: "c53919ad mm: vmscan: remove lumpy reclaim (3.5)",
        series: MAINLINE,
        doc: "Removes reclaim_mode: no synchronous second shrink_page_list pass that waits on \
              writeback, and reclaim/compaction mode is decided from order and priority alone. \
              Without it (3.0-3.4), shrink_inactive_list sets the mode per batch (compaction mode \
              for order > 3, or order > 0 below priority 10; otherwise single), any kept page and \
              any active-list scan reset it to single, and a direct reclaimer that freed less than \
              it isolated runs the batch again synchronously.",
    },
    SwitchDef {
        switch: Switch::CompactionAbortOnEnomem,
        name: "compaction_abort_on_enomem",
        patch: "4bf2bba3 mm, thp: abort compaction if migration page cannot be charged to memcg (3.5)",
        series: MAINLINE,
        doc: "A migration batch that ran out of target pages (migrate_pages' -ENOMEM: the free \
              scanner found none) ends the run, PARTIAL. Without it (3.3-3.4) the migrate \
              scanner goes on, putting back what it isolates, until the scanners meet.",
    },
    SwitchDef {
        switch: Switch::CompactionCachedFreePfn,
        name: "compaction_cached_free_pfn",
        patch: "7db8889a mm: have order > 0 compaction start off where it left (3.6-rc1)",
        series: MAINLINE,
        doc: "An order > 0 run starts its free scanner at the zone's compact_cached_free_pfn and \
              wraps to the zone end once; as merged, every block step may skip down to the cached \
              pfn another compactor left, and every block that yields pages moves the cache.",
    },
    SwitchDef {
        switch: Switch::CompactionCachedFreePfnNearFree,
        name: "compaction_cached_free_pfn_near_free",
        patch: "de74f1cc mm: have order > 0 compaction start near a pageblock with free pages (3.6)",
        series: MAINLINE,
        doc: "With compaction_cached_free_pfn: no skipping to another compactor's cached pfn; the \
              cache moves only after a wrap, or once when it still points at the zone end.",
    },
    SwitchDef {
        switch: Switch::RemoveGfpNoKswapd,
        name: "remove_gfp_no_kswapd",
        patch: "c6543459 mm: remove __GFP_NO_KSWAPD (mmotm, August 2012; in 3.7-rc1, reverted by 82b212f4)",
        series: MAINLINE,
        doc: "GFP_TRANSHUGE loses __GFP_NO_KSWAPD, so a THP fault wakes kswapd; and the slow path's \
              test for failing without direct reclaim when compaction is deferred or contended \
              becomes 'movable and not __GFP_REPEAT' instead of '__GFP_NO_KSWAPD', which takes in \
              every movable high-order allocation that is not hugetlbfs's (stress-highalloc's \
              GFP_HIGHUSER_MOVABLE among them).",
    },
    SwitchDef {
        switch: Switch::KswapdZoneBalancedForCompaction,
        name: "kswapd_zone_balanced_for_compaction",
        patch: "60cefed4 mm: vmscan: fix endless loop in kswapd balancing (3.7)",
        series: MAINLINE,
        doc: "kswapd's zone_balanced asks, for order > 0, that compaction_suitable is not SKIPPED \
              as well as the high watermark at the order, wherever kswapd tests a zone (end zone, \
              shrink, balanced pages, sleep). Without it (3.0-3.6) only the watermark is tested.",
    },
    SwitchDef {
        switch: Switch::KswapdNoPerZoneCompactionRecheck,
        name: "kswapd_no_per_zone_compaction_recheck",
        patch: "c702418f mm: vmscan: do not keep kswapd looping forever due to individual \
                uncompactable zones (3.7)",
        series: MAINLINE,
        doc: "Removes the per-zone checks that end a high-order balance_pgdat: without it \
              (3.0-3.6), any zone up to the end zone below its order-0 high watermark sends kswapd \
              back to loop_again at order 0, and (with fe2c2a10) any zone where compaction_suitable \
              is SKIPPED sends it back at the same order, so one small zone can keep kswapd from \
              compact_pgdat and from sleeping.",
    },
    SwitchDef {
        switch: Switch::ReclaimCompactionScaleByFailures,
        name: "reclaim_compaction_scale_by_failures",
        patch: "mm: vmscan: Scale number of pages reclaimed by reclaim/compaction based on failures (patch 2)",
        series: HIGHALLOC,
        doc: "Reclaim/compaction frees 2 << order pages shifted left by the zone's compact_defer_shift \
              when compaction failed at this order or below (compact_order_failed <= order): up to 64x \
              more after repeated failures.",
    },
    SwitchDef {
        switch: Switch::CompactionCapture,
        name: "compaction_capture",
        patch: "mm: compaction: Capture a suitable high-order page immediately when it is made available (patch 3)",
        series: HIGHALLOC,
        doc: "After each migration batch, direct compaction takes a free block of the order it wants \
              (any of the three types for MOVABLE) straight off the free lists for its caller, if the zone \
              stays above its low watermark; the run ends only once it has one or the scanners meet.",
    },
    SwitchDef {
        switch: Switch::CompactionAbortOnContention,
        name: "compaction_abort_on_contention",
        patch: "c67fe375 mm: compaction: Abort async compaction if locks are contended or taking too long (patch 5)",
        series: HIGHALLOC,
        doc: "Async compaction stops a scanner step when the task should reschedule (another task waits \
              for a CPU): the migrate scanner keeps what it isolated, the free scanner gives up its \
              search; the run is marked contended and a THP fault then fails without reclaim. Lock \
              contention itself is not modelled.",
    },
    SwitchDef {
        switch: Switch::CompactionAbortWhenContended,
        name: "compaction_abort_when_contended",
        patch: "e64c5237 mm: compaction: abort compaction loop if lock is contended or run too long (3.7)",
        series: MAINLINE,
        doc: "With compaction_abort_on_contention: a migrate-scanner step that backs out ends the \
              run (ISOLATE_ABORT, PARTIAL) instead of migrating what it isolated and going on.",
    },
    SwitchDef {
        switch: Switch::CompactionSkipBits,
        name: "compaction_skip_bits",
        patch: "bb13ffeb mm: compaction: cache if a pageblock was scanned and no pages were isolated \
                (3.7; with c89511ab's restart from the cached pfns and 62997027's reset rules)",
        series: MAINLINE,
        doc: "A pageblock that a scanner went through whole without isolating a page gets \
              PB_migrate_skip, and both scanners pass over it; until a run first isolates \
              something, such blocks move the zone's compact_cached_migrate_pfn up and \
              compact_cached_free_pfn down, and every run (any order) starts its scanners there. \
              The bits and pfns are reset when kswapd goes to sleep after a direct or proc run \
              reached COMPLETE (compact_blockskip_flush, cleared by an allocation compaction \
              served), or when a direct or proc run starts with compaction just past its longest \
              deferral (compaction_restarting). A free-scanner step that starts inside a block \
              ends with it (\"mm: compaction: check pfn_valid when entering a new \
              MAX_ORDER_NR_PAGES block during isolation for free\", 3.7). Without it (3.3-3.6) \
              every run starts at the zone's ends and nothing is remembered.",
    },
    SwitchDef {
        switch: Switch::CompactionMigrateScanOneBlock,
        name: "compaction_migrate_scan_one_block",
        patch: "mm: compaction: do not accidentally skip pageblocks in the migrate scanner \
                (Mel Gorman, 2012-12-20; 3.8)",
        series: MAINLINE,
        doc: "A migrate-scanner step that starts part-way into a pageblock scans to the end of \
              that block only; without it the step runs on to the end of the next block.",
    },
    SwitchDef {
        switch: Switch::SoftReclaimInShrinkZone,
        name: "soft_reclaim_in_shrink_zone",
        patch: "3b38722e memcg, vmscan: integrate soft reclaim tighter with zone shrinking code (1/8)",
        series: SOFTLIMIT,
        doc: "global reclaim's shrink_zone first shrinks only the groups over their soft limit \
              (or below an ancestor that is), with the caller's priority and rules, and all \
              groups only when that scanned nothing; the old soft-limit reclaim (the per-zone \
              trees, priority 0 from kswapd and direct reclaim) is gone, which patch 2/8 then \
              deletes.",
    },
    SwitchDef {
        switch: Switch::SoftReclaimInLimitReclaim,
        name: "soft_reclaim_in_limit_reclaim",
        patch: "vmscan, memcg: do softlimit reclaim also for targeted reclaim (3/8)",
        series: SOFTLIMIT,
        doc: "limit reclaim takes the soft pass too, over the groups under the limited one \
              that are over their soft limit (an ancestor above it does not count).",
    },
];

/// The switches of the kswapd series (KS).
const KS_SWITCHES: &[Switch] = &[
    Switch::KswapdLimitReclaimPerPriority,
    Switch::KswapdProportionalScan,
    Switch::KswapdFlattenPriorityLoop,
    Switch::KswapdCompactOnProgress,
    Switch::KswapdNoMaxPriority,
    Switch::KswapdWritebackOnTailDirty,
    Switch::KswapdBlockOnWriteback,
    Switch::KswapdWritepageOncePerPass,
    Switch::KswapdShrinkZone,
];

/// Seed 002's series, V3, as merged in 3.2 (patches 3 and 4 only add warnings).
const NOWB_SWITCHES: &[Switch] = &[
    Switch::DirectReclaimNoFsWriteback,
    Switch::LumpyNoSyncPageoutWait,
    Switch::KswapdFsWritebackAtRaisedPriority,
    Switch::ThrottleReclaimOnWriteback,
    Switch::ImmediateReclaimDirtyLruTail,
];

/// 3.3's `page_check_references` rules.
const MAINLINE_3_3: &[Switch] = &[
    Switch::PromoteSharedFileMappedPages,
    Switch::ActivateExecPagesAfterFirstUsage,
];

/// 3.9's kswapd, which the presets of 3.3-3.6 compaction also carry (`docs/kernels.md`).
const MAINLINE_3_9_KSWAPD: &[Switch] = &[
    Switch::KswapdNoCongestionWait,
    Switch::KswapdWritepageByPriority,
];

/// 3.7's kswapd fixes for high-order balancing, which the 3.0-3.6 presets lack.
const MAINLINE_3_7_KSWAPD: &[Switch] = &[
    Switch::KswapdZoneBalancedForCompaction,
    Switch::KswapdNoPerZoneCompactionRecheck,
];

/// The 3.6-3.8 compaction that 3.9 runs, which the presets of seed 004's era lack: c67fe375
/// (merged for 3.6 as seed 004's patch 5), e64c5237's abort, 3.7's skip bits and cached
/// pfns, and 3.8's one-block migrate step.
const MAINLINE_3_9_COMPACTION: &[Switch] = &[
    Switch::CompactionAbortOnContention,
    Switch::CompactionAbortWhenContended,
    Switch::CompactionSkipBits,
    Switch::CompactionMigrateScanOneBlock,
];

/// Mainline changes every preset's 3.9 base carries.
/// 3.5's and 3.8's get_scan_count.
const MAINLINE_3_5_SCAN: &[Switch] = &[Switch::SwappinessZeroAvoidsSwap];
const MAINLINE_3_8_SCAN: &[Switch] = &[Switch::OnlyEvictFileWhenPlenty];
/// 3.0's get_scan_count (3.1 forced every small list for kswapd, 4508378b; 3.3 only in
/// unreclaimable zones, b95a2f2d).
const MAINLINE_3_0_SCAN: &[Switch] = &[Switch::ForceScanSmallTargets];
/// 3.6's limit reclaim.
const MAINLINE_3_6_MEMCG: &[Switch] = &[Switch::MemcgWaitOnWriteback];

/// 3.9's reclaim and compaction, get_scan_count aside (`MAINLINE_3_5_SCAN`,
/// `MAINLINE_3_8_SCAN`).
const MAINLINE_3_9: &[Switch] = &[
    Switch::DirectReclaimNoFsWriteback,
    Switch::LumpyNoSyncPageoutWait,
    Switch::KswapdFsWritebackAtRaisedPriority,
    Switch::ThrottleReclaimOnWriteback,
    Switch::ImmediateReclaimDirtyLruTail,
    Switch::PromoteSharedFileMappedPages,
    Switch::ActivateExecPagesAfterFirstUsage,
    Switch::KswapdNoCongestionWait,
    Switch::KswapdWritepageByPriority,
    Switch::CompactionDeferByOrder,
    Switch::ReclaimAtOrder0WithCompaction,
    Switch::KswapdCompactPgdat,
    Switch::RemoveLumpyReclaim,
    Switch::CompactionAbortOnEnomem,
];

/// 3.4's reclaim and compaction: 3.5 without c53919ad.
const V3_4: &[Switch] = &[
    Switch::CompactionDeferByOrder,
    Switch::ReclaimAtOrder0WithCompaction,
    Switch::KswapdCompactPgdat,
];

/// 3.6-rc1 as in mmotm (seed 004's baseline): 7db8889a as merged, and mmotm's removal of
/// __GFP_NO_KSWAPD (the letter: "the series is based on latest mmotm and takes into account
/// the __GFP_NO_KSWAPD flag is going away").
const V3_6_RC1_AKPM: &[Switch] = &[Switch::CompactionCachedFreePfn, Switch::RemoveGfpNoKswapd];

/// Seed 004's series, V4: patch 1 is a comment; patch 4 fixes 7db8889a as de74f1cc did.
const HIGHALLOC_V4: &[Switch] = &[
    Switch::ReclaimCompactionScaleByFailures,
    Switch::CompactionCapture,
    Switch::CompactionCachedFreePfnNearFree,
    Switch::CompactionAbortOnContention,
];

/// The switches of the follow-up series (LD).
const LD_SWITCHES: &[Switch] = &[
    Switch::KswapdWritebackFix2,
    Switch::StallOnDirtyEncountered,
    Switch::StallAfterPageList,
    Switch::SetZoneFlagsBeforeBlocking,
    Switch::DirectWaitIffCongestedInShrinkList,
    Switch::ImmediateReclaimIsCongestion,
    Switch::BufferDirtyWritebackHook,
    Switch::NfsDirtyWritebackHook,
];

/// The mainline release a preset is built on. mmsim models the 3.9 kernel; a 2.6.37 base
/// differs in dirty throttling and writeback (`kernel-writeback.md` §4: dirtiers write
/// pages themselves, event-clocked proportions, the flusher's 4 MiB slices) and takes
/// everything else from 3.9 (`docs/kernels.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Base {
    /// 3.9 (3.2+ writeback: IO-less throttling).
    V3_9,
    /// 2.6.37-rc5 (2.6.36-3.0 writeback: `balance_dirty_pages` writes pages).
    V2_6_37,
}

impl Base {
    /// The release, as `mmsim kernels` prints it.
    pub fn name(self) -> &'static str {
        match self {
            Base::V3_9 => "3.9",
            Base::V2_6_37 => "2.6.37-rc5",
        }
    }
}

/// A named kernel: a base release and a set of switches that are on.
#[derive(Debug)]
pub struct Preset {
    /// Name, as the seed's tables label the kernel.
    pub name: &'static str,
    /// The release it is built on.
    pub base: Base,
    /// What it is.
    pub summary: &'static str,
    /// Switch groups that are on.
    pub on: &'static [&'static [Switch]],
}

/// Every preset, in documentation order; the first is the default.
pub static PRESETS: &[Preset] = &[
    Preset {
        name: "3.9",
        base: Base::V3_9,
        summary: "vanilla 3.9 (3.10 behaves the same for reclaim)",
        on: &[
            MAINLINE_3_9,
            MAINLINE_3_5_SCAN,
            MAINLINE_3_6_MEMCG,
            MAINLINE_3_8_SCAN,
            MAINLINE_3_7_KSWAPD,
            MAINLINE_3_9_COMPACTION,
        ],
    },
    Preset {
        name: "mmotm-20130522",
        base: Base::V3_9,
        summary:
            "3.9 plus \"Reduce system disruption due to kswapd\" V4, as in mmotm of 2013-05-22",
        on: &[
            MAINLINE_3_9,
            MAINLINE_3_5_SCAN,
            MAINLINE_3_6_MEMCG,
            MAINLINE_3_8_SCAN,
            MAINLINE_3_7_KSWAPD,
            MAINLINE_3_9_COMPACTION,
            KS_SWITCHES,
        ],
    },
    Preset {
        name: "lessdisrupt-v7r10",
        base: Base::V3_9,
        summary: "mmotm-20130522 plus the \"kswapd followup\" V3 series (seed 000)",
        on: &[
            MAINLINE_3_9,
            MAINLINE_3_5_SCAN,
            MAINLINE_3_6_MEMCG,
            MAINLINE_3_8_SCAN,
            MAINLINE_3_7_KSWAPD,
            MAINLINE_3_9_COMPACTION,
            KS_SWITCHES,
            LD_SWITCHES,
        ],
    },
    Preset {
        name: "mmotm-2013-07-18",
        base: Base::V3_9,
        summary: "3.11-era reclaim as in mmotm of 2013-07-18 (seed 001's base): 3.9 with the \
                  kswapd series and its followup, and the old soft-limit reclaim",
        on: &[
            MAINLINE_3_9,
            MAINLINE_3_5_SCAN,
            MAINLINE_3_6_MEMCG,
            MAINLINE_3_8_SCAN,
            MAINLINE_3_7_KSWAPD,
            MAINLINE_3_9_COMPACTION,
            KS_SWITCHES,
            LD_SWITCHES,
        ],
    },
    Preset {
        name: "softlimit-rework-v5.1",
        base: Base::V3_9,
        summary: "mmotm-2013-07-18 plus \"Soft limit rework\" v5.1 (seed 001): soft limits \
                  as a first pass of shrink_zone",
        on: &[
            MAINLINE_3_9,
            MAINLINE_3_5_SCAN,
            MAINLINE_3_6_MEMCG,
            MAINLINE_3_8_SCAN,
            MAINLINE_3_7_KSWAPD,
            MAINLINE_3_9_COMPACTION,
            KS_SWITCHES,
            LD_SWITCHES,
            SOFTLIMIT_SWITCHES,
        ],
    },
    Preset {
        name: "3.0",
        base: Base::V2_6_37,
        summary: "3.0 (seed 002's baseline): 2.6.36-3.0 writeback, lumpy reclaim with 3.0's \
                  synchronous pass, both reclaimers writing filesystem pages",
        on: &[MAINLINE_3_0_SCAN],
    },
    Preset {
        name: "nowriteback-v3",
        base: Base::V2_6_37,
        summary: "3.0 plus \"Reduce filesystem writeback from page reclaim\" V3 (seed 002)",
        on: &[MAINLINE_3_0_SCAN, NOWB_SWITCHES],
    },
    Preset {
        name: "3.3.6",
        base: Base::V3_9,
        summary: "3.9 with 3.3's high-order reclaim: lumpy isolation in reclaim/compaction mode, \
                  the synchronous lumpy stall, kswapd at the full order and without compaction, \
                  deferral for every order (seed 004's C4/C5)",
        on: &[NOWB_SWITCHES, MAINLINE_3_3, MAINLINE_3_9_KSWAPD],
    },
    Preset {
        name: "3.4",
        base: Base::V3_9,
        summary: "3.9 with 3.4's high-order reclaim: fe2c2a10 and kswapd compaction, lumpy reclaim's \
                  reclaim_mode and synchronous stall still in",
        on: &[NOWB_SWITCHES, MAINLINE_3_3, MAINLINE_3_9_KSWAPD, V3_4],
    },
    Preset {
        name: "3.5",
        base: Base::V3_9,
        summary: "3.9 with 3.5's high-order reclaim and compaction: lumpy reclaim removed, no \
                  cached free pfn (the base of V1-V3 of seed 004's series)",
        on: &[MAINLINE_3_9, MAINLINE_3_5_SCAN],
    },
    Preset {
        name: "3.6-rc1-akpm",
        base: Base::V3_9,
        summary: "3.9 with 3.6-rc1-mmotm's compaction: 7db8889a's cached free pfn as merged, and __GFP_NO_KSWAPD removed (seed 004's baseline)",
        on: &[
            MAINLINE_3_9,
            MAINLINE_3_5_SCAN,
            MAINLINE_3_6_MEMCG,
            V3_6_RC1_AKPM,
        ],
    },
    Preset {
        name: "highalloc-v4",
        base: Base::V3_9,
        summary: "3.6-rc1-akpm plus \"Improve hugepage allocation success rates under load\" V4 (seed 004)",
        on: &[
            MAINLINE_3_9,
            MAINLINE_3_5_SCAN,
            MAINLINE_3_6_MEMCG,
            V3_6_RC1_AKPM,
            HIGHALLOC_V4,
        ],
    },
    Preset {
        name: "2.6.37-rc5",
        base: Base::V2_6_37,
        summary:
            "vanilla 2.6.37-rc5: dirtiers write pages in balance_dirty_pages (seed 003's baseline)",
        on: &[
            MAINLINE_3_9,
            MAINLINE_3_5_SCAN,
            MAINLINE_3_6_MEMCG,
            MAINLINE_3_8_SCAN,
            MAINLINE_3_7_KSWAPD,
            MAINLINE_3_9_COMPACTION,
        ],
    },
    Preset {
        name: "ioless-v3",
        base: Base::V2_6_37,
        summary: "2.6.37-rc5 plus \"IO-less dirty throttling\" v3 (seed 003)",
        on: &[
            MAINLINE_3_9,
            MAINLINE_3_5_SCAN,
            MAINLINE_3_6_MEMCG,
            MAINLINE_3_8_SCAN,
            MAINLINE_3_7_KSWAPD,
            MAINLINE_3_9_COMPACTION,
            IOLESS_SWITCHES,
        ],
    },
];

/// The soft limit rework's patches that change behaviour in mmsim (`docs/kernels.md`).
const SOFTLIMIT_SWITCHES: &[Switch] = &[
    Switch::SoftReclaimInShrinkZone,
    Switch::SoftReclaimInLimitReclaim,
];

/// The switches of the IO-less dirty throttling series, v3.
const IOLESS_SWITCHES: &[Switch] = &[
    Switch::IolessBalanceDirtyPages,
    Switch::IolessBdiLimitGate,
    Switch::IolessBdiStatMargin,
    Switch::IolessPerTaskRatelimit,
    Switch::IolessNoDuplicateBalance,
    Switch::IolessBandwidthEstimation,
    Switch::IolessQuitOnBdiDrop,
    Switch::IolessFastBdiRampUp,
    Switch::IolessDirtyBgGap,
    Switch::IolessTaskThreshSplit,
    Switch::IolessMaxPause200ms,
    Switch::IolessEarlyBackgroundWriteback,
    Switch::IolessThinkTime,
    Switch::IolessBaseThrottleBandwidth,
    Switch::IolessSmoothedBdiDirty,
    Switch::IolessMaxPauseByMemory,
    Switch::IolessMinPauseConcurrent,
    Switch::IolessChunkByBandwidth,
    Switch::BtrfsNoBalanceOnDirtyPages,
    Switch::BtrfsDirtyBatch16,
    Switch::BtrfsAsyncBioLimit,
    Switch::NfsWritebackWaitQueue,
    Switch::NfsInCommitLimit,
    Switch::NfsCommitHeuristics,
    Switch::NfsWriteInodeKeepsNrToWrite,
    Switch::NfsCommitRange,
    Switch::NfsCongestionByDirtyThresh,
];

/// The set of switches of one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Switches(u128);

impl Switches {
    /// Whether `s` is on.
    #[inline]
    pub fn on(self, s: Switch) -> bool {
        self.0 & (1u128 << s as u8) != 0
    }

    /// Set `s`.
    pub fn set(&mut self, s: Switch, on: bool) {
        if on {
            self.0 |= 1u128 << s as u8;
        } else {
            self.0 &= !(1u128 << s as u8);
        }
    }

    /// Every switch with its value, in registry order.
    pub fn list(self) -> Vec<(String, bool)> {
        SWITCHES
            .iter()
            .map(|d| (d.name.to_string(), self.on(d.switch)))
            .collect()
    }
}

/// A resolved kernel: the preset it started from, overrides, and the switch set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelConfig {
    /// Preset name.
    pub preset: &'static str,
    /// The release the preset is built on.
    pub base: Base,
    /// Overrides applied on top, in order.
    pub overrides: Vec<(&'static str, bool)>,
    /// The switches in force.
    pub switches: Switches,
}

impl KernelConfig {
    /// The label reports use: the preset, then `+name` / `-name` for each override that
    /// changes it.
    pub fn label(&self) -> String {
        let mut s = self.preset.to_string();
        let base = preset_switches(find_preset(self.preset).expect("resolved preset exists"));
        for (name, on) in &self.overrides {
            let def = find_switch(name).expect("resolved switch exists");
            if base.on(def.switch) != *on {
                s.push(if *on { '+' } else { '-' });
                s.push_str(name);
            }
        }
        s
    }
}

/// An unknown preset or switch name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownName {
    /// "preset" or "switch".
    pub what: &'static str,
    /// The name given.
    pub name: String,
    /// The nearest valid name, if close.
    pub suggestion: Option<&'static str>,
}

impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown {} '{}'", self.what, self.name)?;
        if let Some(s) = self.suggestion {
            write!(f, " (did you mean '{s}'?)")?;
        }
        write!(f, "; `mmsim kernels` lists them")
    }
}

impl std::error::Error for UnknownName {}

fn nearest(name: &str, candidates: impl Iterator<Item = &'static str>) -> Option<&'static str> {
    candidates
        .map(|c| (strsim::jaro_winkler(name, c), c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// Look a preset up by name.
pub fn find_preset(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

/// Look a switch up by name.
pub fn find_switch(name: &str) -> Option<&'static SwitchDef> {
    SWITCHES.iter().find(|d| d.name == name)
}

fn preset_switches(p: &Preset) -> Switches {
    let mut sw = Switches::default();
    for group in p.on {
        for s in *group {
            sw.set(*s, true);
        }
    }
    sw
}

/// Resolve a preset name and overrides into a kernel configuration.
pub fn resolve(preset: &str, overrides: &[(String, bool)]) -> Result<KernelConfig, UnknownName> {
    let p = find_preset(preset).ok_or_else(|| UnknownName {
        what: "preset",
        name: preset.to_string(),
        suggestion: nearest(preset, PRESETS.iter().map(|p| p.name)),
    })?;
    let mut switches = preset_switches(p);
    let mut resolved = Vec::new();
    for (name, on) in overrides {
        let def = find_switch(name).ok_or_else(|| UnknownName {
            what: "switch",
            name: name.clone(),
            suggestion: nearest(name, SWITCHES.iter().map(|d| d.name)),
        })?;
        switches.set(def.switch, *on);
        resolved.push((def.name, *on));
    }
    Ok(KernelConfig {
        preset: p.name,
        base: p.base,
        overrides: resolved,
        switches,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_002s_presets_are_3_0_and_the_series_on_it_and_3_2_merged_the_series() {
        let old = resolve("3.0", &[]).unwrap();
        let series = resolve("nowriteback-v3", &[]).unwrap();
        assert_eq!((old.base, series.base), (Base::V2_6_37, Base::V2_6_37));
        // Both carry 3.0's get_scan_count (246e87a9) and nothing else but the series.
        for d in SWITCHES {
            let v3_0 = MAINLINE_3_0_SCAN.contains(&d.switch);
            assert_eq!(old.switches.on(d.switch), v3_0, "3.0: {}", d.name);
            assert_eq!(
                series.switches.on(d.switch),
                v3_0 || NOWB_SWITCHES.contains(&d.switch),
                "{}",
                d.name
            );
        }
        for preset in ["3.3.6", "3.4", "3.5", "3.9", "2.6.37-rc5"] {
            let k = resolve(preset, &[]).unwrap();
            assert!(NOWB_SWITCHES.iter().all(|s| k.switches.on(*s)), "{preset}");
        }
        let lumpy = |p: &str| {
            !resolve(p, &[])
                .unwrap()
                .switches
                .on(Switch::RemoveLumpyReclaim)
        };
        assert!(lumpy("3.0") && lumpy("3.3.6") && lumpy("3.4") && !lumpy("3.5"));
        let k33 = resolve("3.3.6", &[]).unwrap().switches;
        assert!(
            !k33.on(Switch::ReclaimAtOrder0WithCompaction) && !k33.on(Switch::KswapdCompactPgdat)
        );
        assert!(!k33.on(Switch::CompactionDeferByOrder));
        let k34 = resolve("3.4", &[]).unwrap().switches;
        assert!(
            k34.on(Switch::ReclaimAtOrder0WithCompaction) && k34.on(Switch::KswapdCompactPgdat)
        );
    }

    #[test]
    fn registry_covers_every_switch_once_in_declaration_order() {
        for (i, d) in SWITCHES.iter().enumerate() {
            assert_eq!(d.switch as usize, i, "{} out of order", d.name);
        }
        assert!(SWITCHES.len() <= 128);
    }

    #[test]
    fn vanilla_has_only_mainline_switches_and_lessdisrupt_has_all_of_seed_000() {
        let v = resolve("3.9", &[]).unwrap();
        let mainline: Vec<Switch> = [
            MAINLINE_3_9,
            MAINLINE_3_5_SCAN,
            MAINLINE_3_6_MEMCG,
            MAINLINE_3_8_SCAN,
            MAINLINE_3_7_KSWAPD,
            MAINLINE_3_9_COMPACTION,
        ]
        .concat();
        assert!(SWITCHES
            .iter()
            .all(|d| v.switches.on(d.switch) == mainline.contains(&d.switch)));
        // get_scan_count by release: 3.0 has neither commit, 3.5 fe35004f only.
        let old = resolve("3.0", &[]).unwrap();
        let v3_5 = resolve("3.5", &[]).unwrap();
        assert!(!old.switches.on(Switch::SwappinessZeroAvoidsSwap));
        assert!(!old.switches.on(Switch::OnlyEvictFileWhenPlenty));
        assert!(v3_5.switches.on(Switch::SwappinessZeroAvoidsSwap));
        assert!(!v3_5.switches.on(Switch::OnlyEvictFileWhenPlenty));
        let ld = resolve("lessdisrupt-v7r10", &[]).unwrap();
        for s in KS_SWITCHES.iter().chain(LD_SWITCHES) {
            assert!(ld.switches.on(*s));
        }
        assert!(!ld.switches.on(Switch::IolessBalanceDirtyPages));
        let old = resolve("2.6.37-rc5", &[]).unwrap();
        assert_eq!(old.base, Base::V2_6_37);
        assert!(SWITCHES
            .iter()
            .all(|d| old.switches.on(d.switch) == mainline.contains(&d.switch)));
        let io = resolve("ioless-v3", &[]).unwrap();
        assert_eq!(io.base, Base::V2_6_37);
        assert!(io.switches.on(Switch::IolessBalanceDirtyPages));
        let ks = resolve("mmotm-20130522", &[]).unwrap();
        assert!(ks.switches.on(Switch::KswapdBlockOnWriteback));
        assert!(!ks.switches.on(Switch::StallAfterPageList));
    }

    #[test]
    fn seed_004s_presets_are_3_6_rc1_akpm_and_the_v4_series_on_it() {
        let akpm = resolve("3.6-rc1-akpm", &[]).unwrap();
        assert!(akpm.switches.on(Switch::CompactionCachedFreePfn));
        assert!(
            akpm.switches.on(Switch::RemoveGfpNoKswapd),
            "mmotm's, August 2012"
        );
        for release in ["3.5", "3.9", "3.3.6", "3.4"] {
            let k = resolve(release, &[]).unwrap();
            assert!(!k.switches.on(Switch::RemoveGfpNoKswapd), "{release}");
        }
        assert!(!akpm.switches.on(Switch::CompactionCachedFreePfnNearFree));
        let v4 = resolve("highalloc-v4", &[]).unwrap();
        for s in V3_6_RC1_AKPM.iter().chain(HIGHALLOC_V4) {
            assert!(v4.switches.on(*s));
        }
        assert!(!v4.switches.on(Switch::KswapdShrinkZone));
    }

    #[test]
    fn one_patch_can_be_ablated_and_the_label_says_so() {
        let k = resolve(
            "lessdisrupt-v7r10",
            &[("stall_after_page_list".into(), false)],
        )
        .unwrap();
        assert!(!k.switches.on(Switch::StallAfterPageList));
        assert!(k.switches.on(Switch::StallOnDirtyEncountered));
        assert_eq!(k.label(), "lessdisrupt-v7r10-stall_after_page_list");
        // An override that matches the preset does not change the label.
        let k = resolve("3.9", &[("kswapd_shrink_zone".into(), false)]).unwrap();
        assert_eq!(k.label(), "3.9");
    }

    #[test]
    fn misspelt_names_get_a_suggestion() {
        let e = resolve("lessdisrupt-v7r1", &[]).unwrap_err();
        assert_eq!(e.suggestion, Some("lessdisrupt-v7r10"));
        let e = resolve("3.9", &[("kswapd_shrink_zon".into(), true)]).unwrap_err();
        assert_eq!(e.suggestion, Some("kswapd_shrink_zone"));
    }
}
