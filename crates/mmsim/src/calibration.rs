//! Every physical constant of the model, in one place, each with where it comes from.
//!
//! Nothing here is tuned toward a published result, with one labelled exception
//! ([`MEMCACHETEST_OP_NS`], calibrated to seed 000's 3.9 0M figure; the reports mark the
//! cells it sets as inputs). Costs that no source gives are order-of-magnitude estimates
//! for a 2013 x86-64 server, marked "estimate"; changing one moves every kernel alike.

use crate::engine::{Nanos, USEC};

/// Bytes per page frame.
pub const PAGE_SIZE: u64 = 4096;

/// `sizeof(struct page)` on x86-64 3.x kernels: the memmap the kernel reserves at boot,
/// 64 bytes per 4 KiB frame (`include/linux/mm_types.h`, 3.9, !CONFIG_MEMCG).
pub const STRUCT_PAGE_BYTES: u64 = 64;

/// Memory the kernel image, its static data and early allocations hold at boot, beyond the
/// memmap. Estimate: a 3.x distribution kernel reports ~60-90 MiB "reserved" at boot.
pub const KERNEL_RESERVED_BYTES: u64 = 64 << 20;

/// The CPU costs of reclaim on the simulated machine's CPU, per page and per pass. They
/// are estimates, and they set how fast kswapd and direct reclaim scan, so `mmsim
/// reproduce parallelio --sensitivity` shows what halving or doubling each one does. A scenario sets them as
/// `[machine.reclaim_costs]` (another CPU), so a sweep can do the same to any workload;
/// the reproductions never read scenario files, so it cannot move a published figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReclaimCosts {
    /// [`ISOLATE_PAGE_NS`].
    pub isolate_page: Nanos,
    /// [`SHRINK_PAGE_NS`].
    pub shrink_page: Nanos,
    /// [`RMAP_WALK_NS`].
    pub rmap_walk: Nanos,
    /// [`PAGEOUT_NS`].
    pub pageout: Nanos,
    /// [`DEACTIVATE_PAGE_NS`].
    pub deactivate_page: Nanos,
    /// [`SHRINK_LRUVEC_NS`].
    pub shrink_lruvec: Nanos,
    /// [`SHRINKER_CALL_NS`].
    pub shrinker_call: Nanos,
}

impl Default for ReclaimCosts {
    fn default() -> Self {
        ReclaimCosts {
            isolate_page: ISOLATE_PAGE_NS,
            shrink_page: SHRINK_PAGE_NS,
            rmap_walk: RMAP_WALK_NS,
            pageout: PAGEOUT_NS,
            deactivate_page: DEACTIVATE_PAGE_NS,
            shrink_lruvec: SHRINK_LRUVEC_NS,
            shrinker_call: SHRINKER_CALL_NS,
        }
    }
}

impl ReclaimCosts {
    /// The names of the costs, for reports.
    pub const NAMES: [&'static str; 7] = [
        "ISOLATE_PAGE_NS",
        "SHRINK_PAGE_NS",
        "RMAP_WALK_NS",
        "PAGEOUT_NS",
        "DEACTIVATE_PAGE_NS",
        "SHRINK_LRUVEC_NS",
        "SHRINKER_CALL_NS",
    ];

    /// These costs with the one named `name` scaled by `num / den`.
    pub fn scaled(mut self, name: &str, num: Nanos, den: Nanos) -> ReclaimCosts {
        let c = match name {
            "ISOLATE_PAGE_NS" => &mut self.isolate_page,
            "SHRINK_PAGE_NS" => &mut self.shrink_page,
            "RMAP_WALK_NS" => &mut self.rmap_walk,
            "PAGEOUT_NS" => &mut self.pageout,
            "DEACTIVATE_PAGE_NS" => &mut self.deactivate_page,
            "SHRINK_LRUVEC_NS" => &mut self.shrink_lruvec,
            "SHRINKER_CALL_NS" => &mut self.shrinker_call,
            other => unreachable!("{other} is not one of ReclaimCosts::NAMES"),
        };
        *c = *c * num / den;
        self
    }
}

/// CPU time for reclaim to isolate one page from an LRU list (`isolate_lru_pages`). Estimate.
pub const ISOLATE_PAGE_NS: Nanos = 50;

/// CPU time `shrink_page_list` spends on one page that is not mapped: lock, flag checks,
/// `__remove_mapping`. Estimate.
pub const SHRINK_PAGE_NS: Nanos = 300;

/// Extra CPU time of one `pageout` that reaches the mapping's `writepage`:
/// `clear_page_dirty_for_io` and the write, each taking the mapping's `tree_lock` to
/// change a radix-tree tag and the zone and BDI dirty counters; for a page it writes, a
/// bio's set-up and submission (`get_request`, the elevator's merge and insert); for one
/// it declines (ext4's delayed allocation), `redirty_page_for_writepage` undoing the
/// first half. Estimate: half a dozen cache misses and lock round trips, ~150 ns each.
pub const PAGEOUT_NS: Nanos = USEC;

/// Extra CPU time for one page that is mapped: the rmap walk of `page_referenced` and
/// `try_to_unmap`, with TLB flush. Estimate.
pub const RMAP_WALK_NS: Nanos = 700;

/// CPU time `shrink_active_list` spends per page (rmap walk included for mapped pages).
/// Estimate.
pub const DEACTIVATE_PAGE_NS: Nanos = 400;

/// CPU time of one anonymous first-touch fault: trap, page allocation, zeroing 4 KiB,
/// PTE install. Estimate (zeroing alone is ~0.3 µs at 13 GB/s).
pub const MINOR_FAULT_NS: Nanos = USEC;

/// CPU time of a swap-in fault, not counting the wait for the read. Estimate.
pub const MAJOR_FAULT_NS: Nanos = 3 * USEC;

/// CPU time of one `shrink_lruvec` call (a zone's lists, or one group's in the zone)
/// before it scans a page: `get_scan_count`'s reads of the zone's counters and its
/// `lru_lock` round trip for the reclaim statistics, the memcg iterator's step and the
/// block plug. Estimate: a few cache misses and one uncontended lock, ~100 ns each. With
/// it, a reclaim pass that finds nothing to scan still takes time, as it does on a CPU.
pub const SHRINK_LRUVEC_NS: Nanos = 500;

/// CPU time of one call of a superblock's shrinker (`prune_super`), to count or to scan:
/// `sb_lock`, `grab_super_passive`'s trylock of `s_umount`, the counts, `drop_super`.
/// Estimate: two uncontended locks and a few cache misses.
pub const SHRINKER_CALL_NS: Nanos = 200;

/// CPU time for the slab shrinker to scan one dentry/inode object. Estimate.
pub const SLAB_OBJECT_SCAN_NS: Nanos = 100;

/// CPU time compaction's scanners spend on one frame: a `struct page` read and flag tests
/// (`isolate_migratepages_range`, `isolate_freepages_block`). Estimate: one cache miss in
/// four frames, ~100 ns each.
pub const COMPACT_SCAN_PFN_NS: Nanos = 25;

/// CPU time to migrate one page: allocate the target, unmap (TLB flush), copy 4 KiB,
/// move the page-cache or swap-cache slot and remap (`unmap_and_move`). Estimate: the copy
/// is ~0.8 µs at 5 GB/s, the unmap and remap about as much again.
pub const MIGRATE_PAGE_NS: Nanos = 2 * USEC;

/// Median user CPU time of compiling one kernel C file (`cc1` and `as`), drawn
/// log-normally with [`KBUILD_COMPILE_SIGMA`]. Estimate from `kernel-memcg.md` §9 ("typ.
/// 0.1–2 s CPU" per cc1): a defconfig `make -j1` of ~2,000 objects in ~10 minutes.
pub const KBUILD_COMPILE_NS: Nanos = 300 * crate::engine::MSEC;

/// Compile units of a distribution config's kernel build (seed 001's TEST 1). Calibrated:
/// fitted to seed 001's minor faults with soft limit 0 (37.2 M a build) at the ~12,000
/// faults a compile of the kbuild model takes; the report marks those rows as inputs.
pub const KBUILD_DISTRO_UNITS: u32 = 3050;

/// Median user CPU of one compile on the machine of seed 001. Calibrated: fitted to seed
/// 001's no-limit User time (664 s a build) over [`KBUILD_DISTRO_UNITS`]; the report marks
/// those rows as inputs.
pub const KBUILD_DISTRO_COMPILE_NS: Nanos = 158 * crate::engine::MSEC;

/// Spread (σ of the logarithm) of a compile's CPU time. Estimate: puts 5% of compiles
/// above 1.1 s.
pub const KBUILD_COMPILE_SIGMA: f64 = 0.8;

/// CPU time of one `open(2)`+`close(2)` of a cached file (path walk, fd set-up). Estimate.
pub const OPEN_CLOSE_NS: Nanos = 2 * USEC;

/// CFS's `sched_min_granularity_ns` on one CPU (0.75 ms, `kernel/sched/fair.c` 3.x); the
/// kernel scales it by `1 + ilog2(CPUs)` (up to 8 CPUs, `SCHED_TUNABLESCALING_LOG`). A task
/// that has run this long while others wait gets `need_resched` ([`sched_slice`]).
pub const SCHED_MIN_GRANULARITY_NS: Nanos = 750 * USEC;

/// The timeslice after which a running task is told to reschedule when others wait, on a
/// machine of `cpus` CPUs.
pub fn sched_slice(cpus: u32) -> Nanos {
    SCHED_MIN_GRANULARITY_NS * (1 + cpus.clamp(1, 8).ilog2() as u64)
}

/// CPU time of one `balance_pgdat` pass over the zones beyond the pages it scans
/// (watermark checks, slab bookkeeping). Estimate. Also guarantees kswapd's clock moves
/// when a pass finds nothing to scan.
pub const BALANCE_PASS_NS: Nanos = 2 * USEC;

/// CPU time to copy one 4 KiB page from user space into the page cache in `write(2)`,
/// with the page-cache lookup and accounting. Estimate (~5 GB/s memcpy plus overhead).
pub const COPY_PAGE_NS: Nanos = 1_200;

/// CPU time of the fixed part of one `write(2)` of a file: system call entry and exit,
/// `fget`, `i_mutex`, `file_update_time` and the `generic_perform_write` set-up. Estimate
/// (a null system call is ~0.1 µs on 2010 hardware; the VFS write path adds several
/// times that). Charged to writes smaller than a page, where it is a large share of the
/// cost; for a write of whole pages it is under 0.5 % of the copy and left out.
pub const WRITE_SYSCALL_NS: Nanos = 800;

/// User-mode CPU time a workload spends writing one already-resident page (a 4 KiB memset).
/// Estimate, ~13 GB/s.
pub const TOUCH_PAGE_NS: Nanos = 300;

/// CPU time of one memcachetest operation with 16 KiB values: client, memcached server and
/// the loopback socket together.
///
/// **Calibrated to seed 000 (3.9, 0M)**: 1/23117 s = 43.3 µs, from the published 23,117
/// ops/s of one client thread on vanilla 3.9 with no background IO and no paging. It is
/// not derived from a mechanism, so the cells it sets (memcachetest-0M) are inputs, and
/// `mmsim reproduce` marks them so and leaves them out of its fidelity figures.
pub const MEMCACHETEST_OP_NS: Nanos = 43_258;

/// How much CPU time a running task accumulates before it hands the CPU back to the
/// scheduler. Smaller is more precise interleaving and slower simulation. Model parameter,
/// not a physical constant.
pub const CPU_QUANTUM_NS: Nanos = 200 * USEC;

/// ext3's default journal commit interval (`JBD_DEFAULT_MAX_COMMIT_AGE`, 5 s, in
/// `include/linux/jbd.h`; the `commit=` mount option changes it): kjournald commits the
/// running transaction this long after it started.
pub const JBD_COMMIT_INTERVAL: Nanos = 5 * crate::engine::SEC;
// NFS mounts (`block::Nfs`, `fs::nfs`): a gigabit-Ethernet client of a server with one
// 7200 rpm disk. The `[[device]]` keys `bandwidth`, `latency`, `server_bandwidth` and
// `wsize` override them per mount.

/// Gigabit Ethernet payload rate, ≈ 117 MB/s (125 MB/s line rate less TCP/IP and RPC
/// headers). Estimate.
pub const NFS_NET_BW: u64 = 117_000_000;
/// LAN round trip, 0.2 ms. Estimate.
pub const NFS_RTT: Nanos = 200 * USEC;
/// Server disk bandwidth: the default 7200 rpm disk's outer rate.
pub const NFS_SERVER_DISK_BW: u64 = crate::block::device::HDD_7200_RATE_OUTER;
/// Fixed cost of a COMMIT (or FILE_SYNC WRITE) on the server: one journal commit, taken as
/// the default disk's average seek plus half a revolution (8.5 + 4.17 ms). Estimate.
pub const NFS_COMMIT_COST: Nanos = 12_670 * USEC;
/// `wsize`/`rsize`, 512 KiB (in 512-byte sectors). Estimate (negotiated with the server;
/// knfsd offers up to 1 MiB depending on its memory).
pub const NFS_WSIZE_SECTORS: u32 = 1024;
