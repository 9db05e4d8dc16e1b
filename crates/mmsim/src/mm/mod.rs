//! The memory-management model: one file per kernel file, kernel names throughout.
//!
//! | module | kernel | what |
//! |---|---|---|
//! | `page` | `include/linux/page-flags.h`, `mm_types.h` | page frames, flags, list links |
//! | `mmzone` | `include/linux/mmzone.h` | zones, lruvecs, the node |
//! | `page_alloc` | `mm/page_alloc.c` | buddy allocator, watermarks, allocation slow path |
//! | `inode` | `include/linux/fs.h`, `fs/inode.c` | files and their page-cache index (`struct address_space`); the inode cache and `prune_icache_sb` |
//! | `dcache` | `fs/dcache.c` | the dentry cache and `prune_dcache_sb` |
//! | `super_block` | `fs/super.c` | superblocks and their shrinker, `prune_super` |
//! | `namei` | `fs/namei.c`, `fs/open.c` | open, close and unlink by name: dentries and inodes come and go |
//! | `radix_tree` | `lib/radix-tree.c` | the page index of a file's page cache and of the swap cache, with dirty tags |
//! | `fs_ops` | `include/linux/fs.h` | the filesystems' operations (`address_space_operations`): the boundary `fs` implements |
//! | `filemap` | `mm/filemap.c`, `mm/truncate.c` | the page cache: find, add, delete, `mark_page_accessed`, `filemap_fault`, truncation |
//! | `readahead` | `mm/readahead.c` | on-demand readahead and the buffered read path |
//! | `swap` | `mm/swap.c` | LRU insertion, activation, rotation |
//! | `rmap` | `mm/rmap.c` | `page_referenced`, `try_to_unmap`, `page_mkclean`, anon and file rmap |
//! | `memcontrol` | `mm/memcontrol.c`, `kernel/res_counter.c` | memory cgroups (v1): charges, limits, limit reclaim |
//! | `memory` | `mm/memory.c` | page tables, faults, shared file mappings, `unmap_mapping_range` |
//! | `fork` | `kernel/fork.c` | a new process's kernel stack |
//! | `migrate` | `mm/migrate.c` | page migration and why a page cannot move |
//! | `compaction` | `mm/compaction.c` | the migrate and free scanners, deferral, kswapd's and direct compaction |
//! | `huge_memory` | `mm/huge_memory.c` | transparent hugepages: faults, khugepaged, splits, `min_free_kbytes` |
//! | `hugetlb` | `mm/hugetlb.c` | growing and emptying the hugetlbfs pool (`nr_hugepages`) |
//! | `drop_caches` | `fs/drop_caches.c` | `/proc/sys/vm/drop_caches` |
//! | `page_writeback` | `mm/page-writeback.c`, `lib/flex_proportions.c` | dirty limits, bdi bandwidth, IO-less dirty throttling maths, `write_cache_pages` |
//! | `swapfile`, `page_io` | `mm/swapfile.c`, `mm/swap_state.c`, `mm/page_io.c` | swap slots, swap cache, `swap_aops`, swap IO |
//! | `backing_dev` | `mm/backing-dev.c` | backing devices: queue, device, writeback statistics, congestion |
//! | `vmscan` | `mm/vmscan.c` | reclaim: kswapd, direct reclaim, LRU scanning, slab shrinking |
//! | `slab` | `mm/slub.c`, `mm/vmscan.c` | the reclaimable slab caches (dentries, inodes, buffer heads) and `shrink_slab` |
//! | `oom_kill` | `mm/oom_kill.c` | the OOM killer |
//! | `vmstat` | `mm/vmstat.c` | `/proc/vmstat` counters |
//! | `trace` | `include/trace/events/vmscan.h` | tracepoints in ftrace's text layout |
//! | `invariants` | — | page-state invariant checks |
//!
//! `mm` names no filesystem and imports no `fs`: it calls a filesystem through the
//! operations of the page's mapping (`fs_ops::AddressSpaceOps`), which `fs` implements.

pub mod backing_dev;
pub mod compaction;
pub mod dcache;
pub mod drop_caches;
pub mod filemap;
pub mod fork;
pub mod fs_ops;
pub mod huge_memory;
pub mod hugetlb;
pub mod inode;
pub mod invariants;
pub mod memcontrol;
pub mod memory;
pub mod migrate;
pub mod mmzone;
pub mod namei;
pub mod oom_kill;
pub mod page;
pub mod page_alloc;
pub mod page_io;
pub mod page_writeback;
pub mod radix_tree;
pub mod readahead;
pub mod rmap;
pub mod slab;
pub mod super_block;
pub mod swap;
pub mod swapfile;
pub mod trace;
pub mod vmscan;
pub mod vmstat;

use crate::engine::{Sched, SchedHost, Shared, WaitQueueId};
use crate::presets::Switches;
use rand_chacha::ChaCha8Rng;

use memory::Mm;
use mmzone::{Pgdat, Zone, MAX_NR_ZONES};
use page::{Pages, Pfn};
use page_io::SwapDev;
use slab::Slab;
use swapfile::SwapInfo;
use vmstat::{VmEvent, VmEvents, ZoneStat};

/// Allocation flags (`gfp_t`): the subset the model reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gfp(pub u32);

impl Gfp {
    pub const WAIT: u32 = 1 << 0;
    pub const HIGH: u32 = 1 << 1;
    pub const IO: u32 = 1 << 2;
    pub const FS: u32 = 1 << 3;
    pub const NORETRY: u32 = 1 << 4;
    pub const HIGHMEM: u32 = 1 << 5;
    pub const MOVABLE: u32 = 1 << 6;
    pub const NO_KSWAPD: u32 = 1 << 7;
    /// `__GFP_WRITE`: a page-cache page about to be dirtied (3.3+ zone-fair placement).
    pub const WRITE: u32 = 1 << 8;
    /// `__GFP_HARDWALL`: user allocations keep to the cpuset (no effect in the model).
    pub const HARDWALL: u32 = 1 << 9;
    /// `__GFP_ZERO`: an anonymous fault's zeroed page (no effect in the model; traced).
    pub const ZERO: u32 = 1 << 10;
    /// `__GFP_RECLAIMABLE`: a page of a `SLAB_RECLAIM_ACCOUNT` cache (`MIGRATE_RECLAIMABLE`;
    /// no other effect in the model; traced).
    pub const RECLAIMABLE: u32 = 1 << 11;
    /// `__GFP_NOTRACK`: SLUB's slab pages (no effect in the model; traced).
    pub const NOTRACK: u32 = 1 << 12;
    /// `__GFP_REPEAT`: an order > 3 request retries reclaim until it has reclaimed as many
    /// pages as it asks for (hugetlbfs pool growth).
    pub const REPEAT: u32 = 1 << 13;
    /// `__GFP_NOWARN` (no effect in the model; traced).
    pub const NOWARN: u32 = 1 << 14;
    /// `__GFP_COMP`: a compound page (no effect in the model; traced).
    pub const COMP: u32 = 1 << 15;
    /// `__GFP_NOMEMALLOC`: never dip into the reserves (no `ALLOC_HARDER`).
    pub const NOMEMALLOC: u32 = 1 << 16;
    /// `__GFP_COLD`: a page not expected to be in the CPU cache soon (readahead's
    /// `page_cache_alloc_cold`): taken from the tail of the per-cpu list.
    pub const COLD: u32 = 1 << 17;
    /// `GFP_KERNEL`.
    pub const KERNEL: Gfp = Gfp(Self::WAIT | Self::IO | Self::FS);
    /// `GFP_NOFS`.
    pub const NOFS: Gfp = Gfp(Self::WAIT | Self::IO);
    /// `GFP_HIGHUSER_MOVABLE`: anonymous and page-cache pages.
    pub const HIGHUSER_MOVABLE: Gfp =
        Gfp(Self::WAIT | Self::IO | Self::FS | Self::HARDWALL | Self::HIGHMEM | Self::MOVABLE);
    /// `GFP_TRANSHUGE`: a transparent huge page (`GFP_HIGHUSER_MOVABLE` plus COMP,
    /// NOMEMALLOC, NORETRY, NOWARN and NO_KSWAPD).
    pub const TRANSHUGE: Gfp = Gfp(Self::HIGHUSER_MOVABLE.0
        | Self::COMP
        | Self::NOMEMALLOC
        | Self::NORETRY
        | Self::NOWARN
        | Self::NO_KSWAPD);
    /// `GFP_ATOMIC`.
    pub const ATOMIC: Gfp = Gfp(Self::HIGH);

    /// Whether all bits of `f` are set.
    #[inline]
    pub fn has(self, f: u32) -> bool {
        self.0 & f == f
    }
}

/// The sysctls of `/proc/sys/vm` that the model reads (the scenario's `[vm]`).
#[derive(Clone, Debug, PartialEq)]
pub struct VmSysctls {
    /// `min_free_kbytes`; `None` means the kernel's boot-time formula.
    pub min_free_kbytes: Option<u64>,
    /// `swappiness`, 0..=100.
    pub swappiness: u32,
    /// `lowmem_reserve_ratio` for DMA, DMA32, Normal.
    pub lowmem_reserve_ratio: [u32; 3],
    /// `page-cluster`: swap readahead is `1 << page_cluster` pages.
    pub page_cluster: u32,
    /// `vfs_cache_pressure`, percent.
    pub vfs_cache_pressure: u32,
    /// `laptop_mode`: non-zero disables `may_writepage` at the start of reclaim.
    pub laptop_mode: bool,
    /// `dirty_ratio`, `dirty_background_ratio`, `dirty_bytes`, `dirty_background_bytes`,
    /// `dirty_expire_centisecs`, `dirty_writeback_centisecs`.
    pub dirty: page_writeback::DirtySysctls,
    /// `extfrag_threshold`, 0..=1000: compaction is worth trying for an order whose
    /// fragmentation index (`vmstat::fragmentation_index`) is above it
    /// (`compaction::compaction_suitable`).
    pub extfrag_threshold: u32,
}

impl Default for VmSysctls {
    fn default() -> Self {
        VmSysctls {
            min_free_kbytes: None,
            swappiness: 60,
            lowmem_reserve_ratio: [256, 256, 32],
            page_cluster: 3,
            vfs_cache_pressure: 100,
            laptop_mode: false,
            dirty: Default::default(),
            extfrag_threshold: 500,
        }
    }
}

/// The wait queues of the model.
#[derive(Clone, Debug)]
pub struct Queues {
    /// `congestion_wqh[BLK_RW_ASYNC]`: woken when a write request completes on a queue
    /// below its congestion-off threshold.
    pub congestion_async: WaitQueueId,
    /// `pgdat->kswapd_wait`.
    pub kswapd_wait: WaitQueueId,
    /// `pgdat->pfmemalloc_wait`.
    pub pfmemalloc_wait: WaitQueueId,
    /// A queue nobody wakes: killable timed sleeps (throttle pauses) wait here.
    pub timer: WaitQueueId,
    /// Hashed page wait queues (`page_waitqueue`): lock and writeback waiters.
    pub page_wait: Vec<WaitQueueId>,
    /// Woken when a workload finishes (`wait(2)` on a child).
    pub child_exit: WaitQueueId,
}

impl Queues {
    /// The wait queue a page's waiters sleep on.
    #[inline]
    pub fn page(&self, pfn: Pfn) -> WaitQueueId {
        self.page_wait[pfn as usize % self.page_wait.len()]
    }
}

/// The whole simulated machine: what every task shares.
#[derive(Debug)]
pub struct Kernel {
    /// Clock, tasks, wait queues, CPUs.
    pub sched: Sched,
    /// The run's only RNG.
    pub rng: ChaCha8Rng,
    /// Behaviour switches in force.
    pub sw: Switches,
    /// The release the kernel is built on.
    pub base: crate::presets::Base,
    /// Sysctls.
    pub vm: VmSysctls,
    /// `min_free_kbytes` in force (computed or given).
    pub min_free_kbytes: u64,
    /// Every page frame.
    pub pages: Pages,
    /// DMA, DMA32, Normal (a zone may be empty).
    pub zones: [Zone; MAX_NR_ZONES],
    /// kswapd state.
    pub pgdat: Pgdat,
    /// Event counters.
    pub events: VmEvents,
    /// Swap slots and the swap cache.
    pub swap: SwapInfo,
    /// The swap device, if any (the simple model).
    pub swapdev: Option<SwapDev>,
    /// The `[[device]]` holding the swap area, when swap is on a block device.
    pub swap_bdi: Option<usize>,
    /// First sector of the swap partition on `swap_bdi`: 0 for a whole raw disk, the end of
    /// the disk when a filesystem shares it.
    pub swap_sector_base: u64,
    /// The slab caches (dentries, inodes, buffer heads).
    pub slab: Slab,
    /// The dentry cache.
    pub dcache: dcache::Dcache,
    /// The inode cache (in-memory inodes).
    pub icache: inode::Icache,
    /// Mounted filesystems; 0 is the system's root filesystem. Their shrinkers run in this
    /// order (`shrinker_list`).
    pub super_blocks: Vec<super_block::SuperBlock>,
    /// Address spaces.
    pub mms: Vec<Mm>,
    /// Files; a file page's `mapping` is its index here.
    pub inodes: Vec<inode::Inode>,
    /// The live files of each device and name, oldest first: the first is the one the
    /// directories' lookup finds. Kept beside `inodes` (never iterated); looked up by
    /// `&str`, without building a key.
    pub file_index: rustc_hash::FxHashMap<usize, rustc_hash::FxHashMap<String, Vec<usize>>>,
    /// Backing devices with a filesystem or raw block IO.
    pub bdis: Vec<backing_dev::Bdi>,
    /// The per-bdi shares of writeback completions (`writeout_completions`).
    pub bdi_props: page_writeback::BdiProportions,
    /// 2.6.37's dirty throttling: event-clocked proportions and per-CPU rate limits.
    pub old_wb: page_writeback::OldWriteback,
    /// Every pause and throttled call of `balance_dirty_pages` (reports only).
    pub throttle: page_writeback::ThrottleStats,
    /// The smoothed global dirty limit (`global_dirty_limit`, 3.1+).
    pub global_dirty_limit: page_writeback::GlobalDirtyLimit,
    /// Per-CPU dirtying counters (one CPU's worth: mmsim does not place tasks on CPUs).
    pub cpu_dirty: page_writeback::CpuDirtyCounters,
    /// Wait queues.
    pub wq: Queues,
    /// `nr_bdi_congested[BLK_RW_ASYNC]`: BDIs currently write-congested.
    pub nr_bdi_congested_async: u32,
    /// Each task's io-context batching state (`ioc->nr_batch_requests`, `last_waited`),
    /// by task id; grown on a task's first bio.
    pub io_batch: Vec<crate::block::BatchState>,
    /// OOM kills so far.
    pub oom_kills: Vec<oom_kill::OomKill>,
    /// Warnings the kernel would print (`WARN_ON_ONCE` sites; mmsim counts every hit), by
    /// site.
    pub warnings: std::collections::BTreeMap<&'static str, u64>,
    /// The mm of an OOM victim that has not exited yet.
    pub oom_victim: Option<usize>,
    /// The CPU's per-page costs of reclaim.
    pub costs: crate::calibration::ReclaimCosts,
    /// Check page-state invariants after reclaim batches (tests, `--check`).
    pub check_every_batch: bool,
    /// The least simulated time between two such checks (0: every batch).
    pub check_interval: crate::engine::Nanos,
    /// When the next batch check is due.
    pub next_check: crate::engine::Nanos,
    /// First invariant violation: stops the run.
    pub fatal: Option<String>,
    /// User space has asked the machine to stop (with `[run] end = "workloads"`, the last
    /// workload the run waits for has finished): the run ends at the next step.
    pub halt: bool,
    /// Workload accesses, each counted once (`workload::access`), for the benchmark; the
    /// kernel never reads them.
    pub accesses: memory::AccessCounts,
    /// mmsim: pages taken off the LRU lists by `isolate_lru_pages` (its `nr_taken`, active
    /// and inactive lists), summed over the run, for the benchmark (3.9 has no vmstat event
    /// for it, only the `mm_vmscan_lru_isolate` tracepoint); the kernel never reads it.
    pub pages_isolated: u64,
    /// The trace sink, when tracing (`--trace`).
    pub trace: Option<trace::Tracer>,
    /// User space's own bookkeeping, opaque to the kernel, which never reads it (the
    /// workloads keep their counters here: `workload::Userspace`).
    pub user: Box<dyn std::any::Any>,
    /// mmsim: what reclaim saw on the file lists, summed over the run.
    pub reclaim_file_totals: vmscan::ReclaimFileTotals,
    /// Memory cgroups (off when the scenario has none).
    pub memcg: memcontrol::MemCgroups,
    /// `transparent_hugepage/enabled` as the run has it (`never` on a machine too small).
    pub thp: huge_memory::ThpEnabled,
    /// khugepaged's scan list and cursor.
    pub khugepaged: huge_memory::Khugepaged,
    /// Blocks kernel code holds outside the LRU and the slab, as (first frame, order): the
    /// pages a driver or test module allocated (stress-highalloc's), hugetlbfs's pool.
    /// Their frames carry no state; the invariants count them here.
    pub held_blocks: Vec<(Pfn, u32)>,
}

impl SchedHost for Kernel {
    #[inline]
    fn sched(&mut self) -> &mut Sched {
        &mut self.sched
    }

    #[inline]
    fn may_run_ahead(&self) -> bool {
        !self.stopping()
    }
}

/// The shared world handle every task holds.
pub type World = Shared<Kernel>;

impl Kernel {
    /// The zone a frame belongs to.
    #[inline]
    pub fn page_zone(&self, pfn: Pfn) -> usize {
        if pfn >= self.zones[2].start_pfn {
            2
        } else if pfn >= self.zones[1].start_pfn {
            1
        } else {
            0
        }
    }

    /// Whether the run must stop: an invariant broke, or the workloads whose end ends the
    /// run (`[run] end = "workloads"`) have all finished.
    #[inline]
    pub fn stopping(&self) -> bool {
        self.fatal.is_some() || self.halt
    }

    /// Whether the kernel is built on 2.6.37 (its writeback: event-clocked proportions, no
    /// `dirty_balance_reserve`, 4 MiB flusher slices, background writeback on global counts).
    #[inline]
    pub fn writeback_2_6_37(&self) -> bool {
        self.base == crate::presets::Base::V2_6_37
    }

    /// Whether dirtiers write pages in `balance_dirty_pages` (2.6.36 – 3.0): a 2.6.37 kernel
    /// without the IO-less series.
    #[inline]
    pub fn old_dirty_throttle(&self) -> bool {
        self.writeback_2_6_37() && !self.sw.on(crate::presets::Switch::IolessBalanceDirtyPages)
    }

    /// Whether dirtiers go through the IO-less series v3's throttle: a 2.6.37 kernel with
    /// the series, whose own trace events replace 3.x's.
    #[inline]
    pub fn ioless_v3(&self) -> bool {
        self.writeback_2_6_37() && self.sw.on(crate::presets::Switch::IolessBalanceDirtyPages)
    }

    /// Count an event.
    #[inline]
    pub fn count(&mut self, e: VmEvent, n: u64) {
        self.events.count(e, n);
    }

    /// A zone counter summed over zones, as `/proc/vmstat` shows it.
    pub fn global_stat(&self, item: ZoneStat) -> u64 {
        self.zones.iter().map(|z| z.stat(item)).sum()
    }

    /// `/proc/vmstat`: zone counters, then event counters, as the kernel's switches name
    /// them: the reclaim-skip slot is `nr_vmscan_write_skip` between seed 002's patches 1
    /// and 7 and absent before them, and `kswapd_skip_congestion_wait` exists until 3.9.
    pub fn proc_vmstat(&self) -> Vec<(String, u64)> {
        use crate::presets::Switch;
        let skip_slot = if self.sw.on(Switch::ImmediateReclaimDirtyLruTail) {
            Some("nr_vmscan_immediate_reclaim")
        } else if self.sw.on(Switch::DirectReclaimNoFsWriteback) {
            Some("nr_vmscan_write_skip")
        } else {
            None
        };
        let mut v: Vec<(String, u64)> = ZoneStat::ALL
            .iter()
            .filter_map(|&s| {
                let name = match s {
                    ZoneStat::nr_vmscan_immediate_reclaim => skip_slot?,
                    _ => s.name(),
                };
                Some((name.to_string(), self.global_stat(s)))
            })
            .collect();
        let nap_counted = !self.sw.on(Switch::KswapdNoCongestionWait);
        v.extend(
            VmEvent::ALL
                .iter()
                .filter(|&&e| e != VmEvent::kswapd_skip_congestion_wait || nap_counted)
                .map(|&e| (e.name().to_string(), self.events.get(e))),
        );
        v
    }

    /// Record the first invariant violation; the run stops at the next task step.
    pub fn fail(&mut self, msg: String) {
        if self.fatal.is_none() {
            self.fatal = Some(msg);
        }
    }

    /// Add `delta` to a page's mapcount; a count past its 8 bits stops the run.
    pub fn mapcount_add(&mut self, pfn: page::Pfn, delta: i32) {
        if let Err(e) = self.pages.mapcount_add(pfn, delta) {
            self.fail(e.to_string());
        }
    }
}
