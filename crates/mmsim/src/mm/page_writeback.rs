//! Dirty-page limits and IO-less dirty throttling (`mm/page-writeback.c`, 3.5 – 3.11 form;
//! `lib/flex_proportions.c` for the per-bdi shares). Specification: `kernel-writeback.md`
//! §2 and §5.
//!
//! Everything in this file is a pure function of numbers or a plain struct: no `Kernel`, no
//! tasks, no sleeping. The write path and the flusher call in with counters they read from
//! the model and act on what comes back (sleep, kick the flusher, call again). The parts
//! that act on the machine are beside it: `account.rs` (dirty and writeback page
//! accounting), `balance.rs` (`balance_dirty_pages`) and `write_cache_pages.rs`.
//!
//! # Units
//!
//! * Pages are 4 KiB counts; rates are pages per second.
//! * Times at the interface are [`Nanos`]. Inside, the arithmetic runs in jiffies at
//!   [`HZ`] = 250 (one jiffy = [`JIFFY`] = 4 ms, the model's clock tick), because the
//!   kernel's truncations are jiffy truncations: `period = HZ × pages / rate` is 1 jiffy,
//!   not 1.95, for 200 pages at 25 575 pages/s. A time passed in is floored to a jiffy;
//!   a time handed back is a whole number of jiffies.
//! * Ratios use `RATELIMIT_CALC_SHIFT = 10`: 1.0 is 1024.
//!
//! # What the caller supplies, and from where
//!
//! | input | kernel source | in the model |
//! |---|---|---|
//! | `free_pages` | `NR_FREE_PAGES` | `Kernel::global_stat(nr_free_pages)` |
//! | `file_lru` | `NR_ACTIVE_FILE + NR_INACTIVE_FILE` | the two zone counters, summed |
//! | `anon_lru`, `nr_swap_pages` | `NR_*_ANON`, `get_nr_swap_pages()` | anon counts only while swap has free slots |
//! | `dirty_balance_reserve` | `calculate_totalreserve_pages()` | [`dirty_balance_reserve`] over the zones' high watermark and `lowmem_reserve[]` |
//! | `nr_reclaimable` | `NR_FILE_DIRTY + NR_UNSTABLE_NFS` | zone counters |
//! | `nr_writeback` | `NR_WRITEBACK` | zone counter |
//! | `bdi_reclaimable`, `bdi_writeback` | `BDI_RECLAIMABLE`, `BDI_WRITEBACK` | per-bdi counters |
//! | `bdi_dirtied`, `bdi_written` | `BDI_DIRTIED`, `BDI_WRITTEN` (cumulative) | per-bdi counters |
//! | `bdi_thresh` | `bdi_dirty_limit()` | [`bdi_dirty_limit`] with [`BdiProportions::fraction`] |
//! | `bdi_stat_error` | per-CPU counter slack | [`bdi_stat_error`] of the CPU count |
//!
//! State the caller keeps: one [`GlobalDirtyLimit`], one [`BdiProportions`], one
//! [`BdiBandwidth`] per bdi, one [`DirtyTask`] per task, one [`CpuDirtyCounters`] per CPU.
//!
//! # The position control line (§5.3)
//!
//! `pos_ratio` scales the bdi's base rate: `task_ratelimit = dirty_ratelimit × pos_ratio`.
//! Its global factor is the cubic `1 + ((setpoint − dirty) / (limit − setpoint))³`:
//!
//! ```text
//!  pos_ratio
//!   2.0 +  *                        no throttling at all
//!       |   *                       left of freerun
//!       |     *
//!       |        *
//!       |            *   *
//!   1.0 +- - - - - - - - - - *  *  *   flat at the setpoint: small oscillation
//!       |                              *   *
//!       |                                       *
//!       |                                           *
//!       |                                             *
//!   0.0 +--+-------------------+----------------------+------> dirty pages
//!       freerun            setpoint                 limit
//!    (thresh+bg)/2   (freerun+limit)/2   max(thresh, global_dirty_limit)
//! ```
//!
//! The bdi factor is a straight line through (`bdi_setpoint`, 1.0) that reaches 0 at
//! `bdi_setpoint + span` (`span ≈ 8 s × write_bw` for a single device) and is floored at
//! 1/4; below half of `bdi_thresh` (the bdi reserve area) the product is raised by
//! `(bdi_thresh/2) / bdi_dirty`, at most ×8, so that the device queue never runs dry.
//!
//! # Worked example: one writer, `dirty_ratio` 20, 1 GiB of RAM
//!
//! A 1 GiB machine (262 144 pages) with 30 000 free pages, 210 000 file LRU pages, 15 000
//! anon pages and no swap, zone reserves of 3 000 pages:
//!
//! * dirtyable = 30 000 + 210 000 − 3 000 + 1 = 237 001 pages;
//! * `dirty_thresh` = 20 % = 47 400, `background_thresh` = 10 % = 23 700;
//! * freerun = 35 550, setpoint = 41 475, limit = 47 400.
//!
//! One task writes to a 10 MB/s disk (2 560 pages/s) that has settled
//! (`dirty_ratelimit` = `avg_write_bandwidth` = 2 560), with dirty pages at the setpoint:
//! `pos_ratio` = 1023 (≈1.0), `task_ratelimit` = 2 557 pages/s, `max_pause` = 200 ms,
//! the next poll interval is 32 pages (`DIRTY_POLL_THRESH`) and `min_pause` 8 ms. Having
//! dirtied its 32 pages without think time, the task sleeps
//! `HZ × 32 / 2 557` = 3 jiffies = 12 ms: 128 KiB per 12 ms ≈ 10.4 MB/s.
//!
//! ```
//! use mmsim::engine::MSEC;
//! use mmsim::mm::page_writeback::*;
//!
//! let dirtyable = global_dirtyable_memory(&Dirtyable {
//!     free_pages: 30_000,
//!     file_lru: 210_000,
//!     anon_lru: 15_000,
//!     nr_swap_pages: 0,
//!     dirty_balance_reserve: 3_000,
//!     highmem_dirtyable: 0,
//! });
//! assert_eq!(dirtyable, 237_001);
//! let (bg, thresh) = global_dirty_limits(dirtyable, &DirtySysctls::default(), false);
//! assert_eq!((bg, thresh), (23_700, 47_400));
//!
//! let now = 100 * mmsim::engine::SEC;
//! let mut bdi = BdiBandwidth::new(now);
//! bdi.write_bandwidth = 2_560;
//! bdi.avg_write_bandwidth = 2_560;
//! bdi.dirty_ratelimit = 2_560;
//! bdi.balanced_dirty_ratelimit = 2_560;
//! let mut gdl = GlobalDirtyLimit::default();
//! let mut task = DirtyTask { nr_dirtied: 32, nr_dirtied_pause: 32, dirty_paused_when: now, ..Default::default() };
//! let mut call = BalanceDirtyPages::new(now, 32);
//! let input = BdpInput {
//!     now,
//!     nr_reclaimable: 41_475 - 4_000,
//!     nr_writeback: 4_000,
//!     bg_thresh: bg,
//!     thresh,
//!     bdi_thresh: thresh,
//!     bdi_reclaimable: 41_475 - 4_000,
//!     bdi_writeback: 4_000,
//!     bdi_dirtied: 0,
//!     bdi_written: 0,
//!     bdi_stat_error: bdi_stat_error(4),
//!     writeback_in_progress: true,
//! };
//! match call.iterate(&mut task, &mut bdi, &mut gdl, &input) {
//!     BdpDecision::Sleep { pause, again, t } => {
//!         assert_eq!((t.setpoint, t.pos_ratio, t.task_ratelimit), (41_475, 1023, 2_557));
//!         assert_eq!((t.max_pause, t.min_pause, t.nr_dirtied_pause), (200 * MSEC, 8 * MSEC, 32));
//!         assert_eq!(pause, 12 * MSEC);
//!         assert!(!again);
//!     }
//!     other => panic!("expected a sleep, got {other:?}"),
//! }
//! ```
//!
//! # Choices where the specification leaves room
//!
//! * Version: the 3.5 – 3.11 form (think-time compensation, `bdi_min_pause`, balanced rate
//!   capped at `write_bw`, `dirty_exceeded` needing both limits, time-based proportions);
//!   no 3.12 `[0, 2]` clamp of the cubic and no `BDI_CAP_STRICTLIMIT`.
//! * `step >>= rate / (2 step + 1)` in the base-rate update shifts by 64 or more when the
//!   step is tiny; C leaves that undefined (x86 masks the count). Here such a step is 0,
//!   which is what later kernels made explicit.
//! * The cubic is computed in 128-bit integers; the kernel's 64-bit product would overflow
//!   only far left of freerun, where it is never evaluated.
//! * HZ is 250, so the §5.6 table (worked at HZ = 1000) does not apply verbatim: the
//!   one-writer target pause is 2 jiffies (8 ms, `nr_dirtied_pause` 200 at 100 MB/s), and
//!   `period` truncates to whole 4 ms jiffies; think-time compensation carries the
//!   remainder, and the base-rate loop absorbs the systematic part.
//! * The throttle path's bandwidth update needs *more* than 200 ms since the last
//!   snapshot (the `bdi_update_bandwidth` wrapper's test is strict), the flusher's
//!   (`__bdi_update_bandwidth` directly) at least 200 ms.
//! * Arithmetic the kernel would let wrap (`thresh − bdi_thresh` when the (limit −
//!   dirty)/8 floor lifts `bdi_thresh` above `thresh`) saturates instead.
//! * The proportion aging timer (deferrable in the kernel) fires exactly on time, lazily,
//!   whenever the tracker is next touched.

use super::fs_ops::{WritePage, WritebackControl};
use super::inode::I_DIRTY_PAGES;
use super::page::{Pfn, PG_BH_LOCKED, PG_DIRTY, PG_WRITEBACK};
use super::{Kernel, World};
use crate::calibration::PAGE_SIZE;
use crate::engine::{Nanos, JIFFY, SEC};
use std::fmt;
use std::ops::Range;

/// Timer ticks per second (`HZ`), from the model's jiffy of 4 ms.
pub const HZ: u64 = SEC / JIFFY;
/// Fixed-point shift of `pos_ratio` and rate ratios: 1.0 = `1 << 10`.
pub const RATELIMIT_CALC_SHIFT: u32 = 10;
/// `MAX_PAUSE`: the longest single throttle sleep, `max(HZ/5, 1)` jiffies = 200 ms.
pub const MAX_PAUSE: Nanos = MAX_PAUSE_J * JIFFY;
/// `BANDWIDTH_INTERVAL`: bandwidth and rate estimates are refreshed at most this often.
pub const BANDWIDTH_INTERVAL: Nanos = BANDWIDTH_INTERVAL_J * JIFFY;
/// `DIRTY_POLL_THRESH`: 128 KiB, the smallest poll interval worth a throttle pause.
pub const DIRTY_POLL_THRESH: u64 = 128 * 1024 / PAGE_SIZE;
/// `INIT_BW`: initial write bandwidth and rate limits of a bdi, 100 MB/s in pages/s.
pub const INIT_BW: u64 = (100 << 20) / PAGE_SIZE;
/// Initial `nr_dirtied_pause` of a new task (`DIRTY_POLL_THRESH`, 128 KiB).
pub const INIT_NR_DIRTIED_PAUSE: u64 = DIRTY_POLL_THRESH;
/// `VM_COMPLETIONS_PERIOD_LEN`: the aging period of the bdi writeout shares, 3 s.
pub const VM_COMPLETIONS_PERIOD_LEN: Nanos = 3 * SEC;
/// `FPROP_FRAC_SHIFT`: precision of the `max_ratio` cap on a bdi's share.
pub const FPROP_FRAC_SHIFT: u32 = 10;

const MAX_PAUSE_J: u64 = if HZ / 5 > 1 { HZ / 5 } else { 1 };
const BANDWIDTH_INTERVAL_J: u64 = MAX_PAUSE_J;
const PERIOD_LEN_J: u64 = 3 * HZ;

/// Floor of a time to jiffies.
#[inline]
fn jiffies(t: Nanos) -> u64 {
    t / JIFFY
}

/// `ilog2`; −1 for 0 (what `fls_long(0) - 1` gives for a run-time value).
#[inline]
fn ilog2(x: u64) -> i64 {
    if x == 0 {
        -1
    } else {
        63 - i64::from(x.leading_zeros())
    }
}

/// `roundup_pow_of_two`.
#[inline]
fn pow2up(x: u64) -> u64 {
    x.next_power_of_two()
}

// ---------------------------------------------------------------------------------------
// §2.2 sysctls
// ---------------------------------------------------------------------------------------

/// The `vm.dirty_*` sysctls (kernel defaults from `Default`).
///
/// Only one of each ratio/bytes pair is in force: a non-zero `*_bytes` wins over its
/// ratio, as writing `*_bytes` zeroes the ratio in the kernel (and vice versa).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirtySysctls {
    /// `vm.dirty_ratio`: throttling threshold, percent of dirtyable memory (20).
    pub dirty_ratio: u32,
    /// `vm.dirty_background_ratio`: background writeback threshold, percent (10).
    pub dirty_background_ratio: u32,
    /// `vm.dirty_bytes`: throttling threshold in bytes; 0 = use the ratio.
    pub dirty_bytes: u64,
    /// `vm.dirty_background_bytes`: background threshold in bytes; 0 = use the ratio.
    pub dirty_background_bytes: u64,
    /// `vm.dirty_expire_centisecs`: age at which kupdate writes a dirty inode (3000 = 30 s).
    pub dirty_expire_centisecs: u32,
    /// `vm.dirty_writeback_centisecs`: kupdate interval (500 = 5 s); 0 disables it.
    pub dirty_writeback_centisecs: u32,
}

impl Default for DirtySysctls {
    fn default() -> Self {
        DirtySysctls {
            dirty_ratio: 20,
            dirty_background_ratio: 10,
            dirty_bytes: 0,
            dirty_background_bytes: 0,
            dirty_expire_centisecs: 3000,
            dirty_writeback_centisecs: 500,
        }
    }
}

/// A `vm.dirty_*` value the kernel's sysctl handler would refuse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SysctlError {
    /// A ratio outside 0..=100.
    RatioOutOfRange { name: &'static str, value: u32 },
    /// `dirty_bytes` non-zero but below two pages (`dirty_bytes_min`).
    DirtyBytesTooSmall { value: u64, min: u64 },
}

impl fmt::Display for SysctlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SysctlError::RatioOutOfRange { name, value } => {
                write!(f, "vm.{name} = {value} is outside 0..=100")
            }
            SysctlError::DirtyBytesTooSmall { value, min } => write!(
                f,
                "vm.dirty_bytes = {value} is below the minimum of {min} bytes (two pages); \
                 use 0 to fall back to vm.dirty_ratio"
            ),
        }
    }
}

impl std::error::Error for SysctlError {}

impl DirtySysctls {
    /// The kernel's `dirty_bytes_min`: two pages.
    pub const DIRTY_BYTES_MIN: u64 = 2 * PAGE_SIZE;

    /// Check the values against the ranges the sysctl handlers enforce.
    pub fn validate(&self) -> Result<(), SysctlError> {
        for (name, value) in [
            ("dirty_ratio", self.dirty_ratio),
            ("dirty_background_ratio", self.dirty_background_ratio),
        ] {
            if value > 100 {
                return Err(SysctlError::RatioOutOfRange { name, value });
            }
        }
        if self.dirty_bytes != 0 && self.dirty_bytes < Self::DIRTY_BYTES_MIN {
            return Err(SysctlError::DirtyBytesTooSmall {
                value: self.dirty_bytes,
                min: Self::DIRTY_BYTES_MIN,
            });
        }
        Ok(())
    }

    /// `dirty_expire_interval` as a time.
    pub fn dirty_expire(&self) -> Nanos {
        u64::from(self.dirty_expire_centisecs) * (SEC / 100)
    }

    /// `dirty_writeback_interval` as a time; `None` when periodic writeback is off.
    pub fn dirty_writeback_interval(&self) -> Option<Nanos> {
        (self.dirty_writeback_centisecs != 0)
            .then(|| u64::from(self.dirty_writeback_centisecs) * (SEC / 100))
    }
}

// ---------------------------------------------------------------------------------------
// §2.1 dirtyable memory, §2.2 global thresholds
// ---------------------------------------------------------------------------------------

/// One zone's contribution to `dirty_balance_reserve` (3.3+ `calculate_totalreserve_pages`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZoneReserve {
    /// `zone->managed_pages`.
    pub managed_pages: u64,
    /// `high_wmark_pages(zone)`.
    pub high_wmark: u64,
    /// `max(zone->lowmem_reserve[])`.
    pub max_lowmem_reserve: u64,
}

/// `dirty_balance_reserve` (= `totalreserve_pages`): per zone, the high watermark plus the
/// largest lowmem reserve, capped at the zone's managed pages, summed.
pub fn dirty_balance_reserve(zones: &[ZoneReserve]) -> u64 {
    zones.iter().map(ZoneReserve::pages).sum()
}

impl ZoneReserve {
    /// The inputs of a model zone.
    pub fn of(z: &super::mmzone::Zone) -> ZoneReserve {
        ZoneReserve {
            managed_pages: z.managed_pages,
            high_wmark: z.high_wmark(),
            max_lowmem_reserve: z.lowmem_reserve.iter().copied().max().unwrap_or(0),
        }
    }

    /// The zone's `dirty_balance_reserve`: high watermark plus largest lowmem reserve, at
    /// most its managed pages.
    pub fn pages(&self) -> u64 {
        (self.high_wmark + self.max_lowmem_reserve).min(self.managed_pages)
    }
}

/// Inputs of [`global_dirtyable_memory`], all global page counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dirtyable {
    /// `NR_FREE_PAGES`.
    pub free_pages: u64,
    /// `NR_ACTIVE_FILE + NR_INACTIVE_FILE`.
    pub file_lru: u64,
    /// `NR_ACTIVE_ANON + NR_INACTIVE_ANON` (counted only while swap has free slots).
    pub anon_lru: u64,
    /// Free swap slots (`get_nr_swap_pages()`).
    pub nr_swap_pages: u64,
    /// [`dirty_balance_reserve`] of the zones (3.3+).
    pub dirty_balance_reserve: u64,
    /// Dirtyable pages of HIGHMEM zones, excluded unless `vm.highmem_is_dirtyable`
    /// (Σ highmem zones of free + reclaimable − zone reserve, floored at 0). 0 on 64-bit,
    /// and so always 0 in this model.
    pub highmem_dirtyable: u64,
}

/// `global_reclaimable_pages()`: file LRU, plus anon LRU while swap has free slots.
pub fn global_reclaimable_pages(file_lru: u64, anon_lru: u64, nr_swap_pages: u64) -> u64 {
    if nr_swap_pages > 0 {
        file_lru + anon_lru
    } else {
        file_lru
    }
}

/// `global_dirtyable_memory()` (§2.1): free + reclaimable LRU − reserve − highmem, + 1
/// so that it is never zero.
pub fn global_dirtyable_memory(d: &Dirtyable) -> u64 {
    let mut x = d.free_pages + global_reclaimable_pages(d.file_lru, d.anon_lru, d.nr_swap_pages);
    x -= x.min(d.dirty_balance_reserve);
    x -= x.min(d.highmem_dirtyable);
    x + 1
}

/// `global_dirty_limits()` (§2.2): `(background_thresh, dirty_thresh)` in pages.
///
/// `*_bytes` take precedence over the ratios (rounded up to pages); a background threshold
/// at or above the dirty threshold becomes half of it; `boosted` (a real-time task or one
/// with `PF_LESS_THROTTLE`, i.e. nfsd) adds a quarter to both.
pub fn global_dirty_limits(dirtyable: u64, s: &DirtySysctls, boosted: bool) -> (u64, u64) {
    let halve = |background, dirty| {
        if background >= dirty {
            dirty / 2
        } else {
            background
        }
    };
    global_dirty_limits_by(dirtyable, s, boosted, halve)
}

/// [`global_dirty_limits`] with `gap(background, dirty)` in place of its rule for a
/// background limit too close to the dirty one.
pub fn global_dirty_limits_by(
    dirtyable: u64,
    s: &DirtySysctls,
    boosted: bool,
    gap: impl Fn(u64, u64) -> u64,
) -> (u64, u64) {
    let mut dirty = if s.dirty_bytes != 0 {
        s.dirty_bytes.div_ceil(PAGE_SIZE)
    } else {
        u64::from(s.dirty_ratio) * dirtyable / 100
    };
    let mut background = if s.dirty_background_bytes != 0 {
        s.dirty_background_bytes.div_ceil(PAGE_SIZE)
    } else {
        u64::from(s.dirty_background_ratio) * dirtyable / 100
    };
    background = gap(background, dirty);
    if boosted {
        background += background / 4;
        dirty += dirty / 4;
    }
    (background, dirty)
}

/// `dirty_freerun_ceiling()`: below `(thresh + bg) / 2` dirty pages nobody is throttled.
#[inline]
pub fn dirty_freerun_ceiling(thresh: u64, bg_thresh: u64) -> u64 {
    (thresh + bg_thresh) / 2
}

/// The throttling setpoint, `(freerun + limit) / 2`.
#[inline]
pub fn dirty_setpoint(freerun: u64, limit: u64) -> u64 {
    (freerun + limit) / 2
}

/// `writeback_set_ratelimit()`: the per-CPU safety-net interval, `thresh / (cpus × 32)`,
/// at least 16 pages.
pub fn ratelimit_pages(dirty_thresh: u64, online_cpus: u64) -> u64 {
    (dirty_thresh / (online_cpus.max(1) * 32)).max(16)
}

/// `bdi_stat_error()`: the slack of a per-CPU bdi counter, `cpus × 8 × (1 + ilog2 cpus)`;
/// 1 on a uniprocessor build.
pub fn bdi_stat_error(ncpus: u64) -> u64 {
    if ncpus <= 1 {
        1
    } else {
        ncpus * 8 * (1 + ilog2(ncpus) as u64)
    }
}

// ---------------------------------------------------------------------------------------
// §2.6 smoothed global limit
// ---------------------------------------------------------------------------------------

/// `global_dirty_limit` (3.1+): follows a rising `thresh` at once and a falling one by
/// 1/32 of the gap per [`BANDWIDTH_INTERVAL`], never below the dirty count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GlobalDirtyLimit {
    /// `global_dirty_limit`, pages (0 until the first update, as in 3.3 – 3.11).
    pub limit: u64,
    /// Jiffy time of the last update (`update_time` of `global_update_bandwidth`); `None`
    /// before the first, which always runs.
    pub update_time: Option<Nanos>,
}

impl GlobalDirtyLimit {
    /// `hard_dirty_limit()`: `max(thresh, global_dirty_limit)`.
    #[inline]
    pub fn hard_dirty_limit(&self, thresh: u64) -> u64 {
        thresh.max(self.limit)
    }

    /// `update_dirty_limit()`: one smoothing step, unconditionally.
    pub fn update_dirty_limit(&mut self, thresh: u64, dirty: u64) {
        if self.limit < thresh {
            self.limit = thresh;
            return;
        }
        let target = thresh.max(dirty);
        if self.limit > target {
            self.limit -= (self.limit - target) >> 5;
        }
    }

    /// `global_update_bandwidth()`: [`Self::update_dirty_limit`] at most once per
    /// [`BANDWIDTH_INTERVAL`]. Returns whether it ran.
    pub fn update(&mut self, now: Nanos, thresh: u64, dirty: u64) -> bool {
        let now_j = jiffies(now);
        if let Some(t) = self.update_time {
            if now_j < jiffies(t) + BANDWIDTH_INTERVAL_J {
                return false;
            }
        }
        self.update_dirty_limit(thresh, dirty);
        self.update_time = Some(now_j * JIFFY);
        true
    }
}

// ---------------------------------------------------------------------------------------
// §2.4 per-bdi share
// ---------------------------------------------------------------------------------------

/// `bdi_dirty_limit()` (§2.4): the bdi's share `numerator / denominator` of the part of
/// `dirty_thresh` not reserved by `min_ratio`s (`sum_min_ratio` = Σ over all bdis), plus
/// its own `min_ratio` %, capped at `max_ratio` %.
pub fn bdi_dirty_limit(
    dirty_thresh: u64,
    numerator: u64,
    denominator: u64,
    min_ratio: u32,
    max_ratio: u32,
    sum_min_ratio: u32,
) -> u64 {
    let base = dirty_thresh * u64::from(100 - sum_min_ratio.min(100)) / 100;
    let share = u128::from(base) * u128::from(numerator) / u128::from(denominator.max(1));
    let mut x = share as u64 + dirty_thresh * u64::from(min_ratio) / 100;
    let cap = dirty_thresh * u64::from(max_ratio) / 100;
    if x > cap {
        x = cap;
    }
    x
}

/// One bdi's completion count (`fprop_local_percpu`, counted exactly).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LocalProp {
    events: u64,
    period: u64,
    /// `max_prop_frac = FPROP_FRAC_BASE × max_ratio / 100`.
    max_prop_frac: u64,
}

/// Writeout-completion shares of the bdis: the time-based "flexible proportions" of
/// 3.5+ (`lib/flex_proportions.c`), not the event-clocked `lib/proportions.c` of 2.6.24 –
/// 3.4.
///
/// Every [`VM_COMPLETIONS_PERIOD_LEN`] (3 s) the global count is halved and a new period
/// begins; a bdi's count is halved once per period it missed, when it is next touched.
/// The aging timer is armed by the first completion after it stopped and stops when the
/// global count has decayed to at most 1. Counts are exact (no per-CPU error).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BdiProportions {
    /// Global events of the current period (`writeout_completions.events`; starts at 1).
    events: u64,
    /// Periods elapsed.
    period: u64,
    /// Jiffy at which the aging timer fires next; `None` while it is stopped.
    period_time: Option<u64>,
    bdis: Vec<LocalProp>,
}

impl BdiProportions {
    /// A tracker for `nr_bdis` devices, no history, `max_ratio` 100 % each.
    pub fn new(nr_bdis: usize) -> Self {
        BdiProportions {
            events: 1,
            period: 0,
            period_time: None,
            bdis: vec![
                LocalProp {
                    events: 0,
                    period: 0,
                    max_prop_frac: 1 << FPROP_FRAC_SHIFT,
                };
                nr_bdis
            ],
        }
    }

    /// `bdi_set_max_ratio()`'s effect on counting: completions are not counted while the
    /// bdi's share exceeds `max_ratio` %.
    pub fn set_max_ratio(&mut self, bdi: usize, max_ratio: u32) {
        self.bdis[bdi].max_prop_frac = (1u64 << FPROP_FRAC_SHIFT) * u64::from(max_ratio) / 100;
    }

    /// Run the aging timer for every expiry at or before `now` (`writeout_period`).
    pub fn age(&mut self, now: Nanos) {
        let now_j = jiffies(now);
        while let Some(t) = self.period_time {
            if t > now_j {
                break;
            }
            // fprop_new_period(1): halve the global count, unless nothing is left.
            if self.events <= 1 {
                self.period_time = None;
                break;
            }
            self.events >>= 1;
            self.period += 1;
            self.period_time = Some(t + PERIOD_LEN_J);
        }
    }

    /// `fprop_reflect_period`: bring one bdi's count up to the current period.
    fn reflect(&mut self, bdi: usize) {
        let p = self.period;
        let l = &mut self.bdis[bdi];
        if l.period == p {
            return;
        }
        let missed = p - l.period;
        l.events = if missed < 64 { l.events >> missed } else { 0 };
        l.period = p;
    }

    /// `bdi_writeout_fraction()`: `(numerator, denominator)` of the bdi's share, with
    /// `0 < denominator` and `numerator <= denominator`.
    pub fn fraction(&mut self, bdi: usize, now: Nanos) -> (u64, u64) {
        self.age(now);
        self.reflect(bdi);
        let num = self.bdis[bdi].events;
        let mut den = self.events;
        if den <= num {
            den = num.max(1);
        }
        (num, den)
    }

    /// `__bdi_writeout_inc()`: one page writeback completed on `bdi` at `now` (the
    /// `BDI_WRITTEN` counter is the caller's). Arms the aging timer if it was stopped.
    pub fn writeout_inc(&mut self, bdi: usize, now: Nanos) {
        self.age(now);
        let frac = self.bdis[bdi].max_prop_frac;
        let counted = if frac < (1 << FPROP_FRAC_SHIFT) {
            let (num, den) = self.fraction(bdi, now);
            num <= (den * frac) >> FPROP_FRAC_SHIFT
        } else {
            self.reflect(bdi);
            true
        };
        if counted {
            self.bdis[bdi].events += 1;
            self.events += 1;
        }
        if self.period_time.is_none() {
            self.period_time = Some(jiffies(now) + PERIOD_LEN_J);
        }
    }
}

// ---------------------------------------------------------------------------------------
// §5.3 position ratio
// ---------------------------------------------------------------------------------------

/// The five numbers the throttle path passes around (`thresh, bg_thresh, dirty,
/// bdi_thresh, bdi_dirty`). All zero for the flusher's bandwidth update.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DirtyState {
    /// `dirty_thresh` of [`global_dirty_limits`].
    pub thresh: u64,
    /// `background_thresh` of [`global_dirty_limits`].
    pub bg_thresh: u64,
    /// `nr_dirty` = `FILE_DIRTY + WRITEBACK + UNSTABLE_NFS`.
    pub dirty: u64,
    /// [`bdi_dirty_limit`] of `thresh`.
    pub bdi_thresh: u64,
    /// The bdi's `RECLAIMABLE + WRITEBACK`.
    pub bdi_dirty: u64,
}

/// [`bdi_position_ratio`] with the intermediate points, for tracing and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PosRatio {
    /// The result, 1.0 = 1024.
    pub pos_ratio: u64,
    /// Factor of the global cubic alone, 1.0 = 1024.
    pub global: u64,
    /// `dirty_freerun_ceiling`.
    pub freerun: u64,
    /// Global setpoint.
    pub setpoint: u64,
    /// `hard_dirty_limit`.
    pub limit: u64,
    /// The bdi's setpoint (0 when `dirty >= limit`).
    pub bdi_setpoint: u64,
}

/// The global cubic control line: `1 + ((setpoint − dirty) / (limit − setpoint + 1))³`
/// in 1/1024 units, with the kernel's truncations (division toward zero, then arithmetic
/// shifts). Requires `dirty < limit`.
pub fn global_pos_ratio(setpoint: u64, limit: u64, dirty: u64) -> u64 {
    let x: i128 = ((setpoint as i128 - dirty as i128) << RATELIMIT_CALC_SHIFT)
        / (limit as i128 - setpoint as i128 + 1);
    let mut pos = x;
    pos = (pos * x) >> RATELIMIT_CALC_SHIFT;
    pos = (pos * x) >> RATELIMIT_CALC_SHIFT;
    pos += 1 << RATELIMIT_CALC_SHIFT;
    pos.clamp(0, u64::MAX as i128) as u64
}

/// `bdi_position_ratio()` (§5.3), detailed. `limit` is
/// [`GlobalDirtyLimit::hard_dirty_limit`]; `write_bw` is the bdi's
/// `avg_write_bandwidth`.
pub fn bdi_position_ratio_detail(st: &DirtyState, limit: u64, write_bw: u64) -> PosRatio {
    let freerun = dirty_freerun_ceiling(st.thresh, st.bg_thresh);
    let setpoint = dirty_setpoint(freerun, limit);
    let mut out = PosRatio {
        pos_ratio: 0,
        global: 0,
        freerun,
        setpoint,
        limit,
        bdi_setpoint: 0,
    };
    if st.dirty >= limit {
        return out;
    }
    let global = global_pos_ratio(setpoint, limit, st.dirty);
    out.global = global;
    let mut pos = u128::from(global);

    // The bdi line. An idle device's tiny share is raised to an eighth of the headroom.
    let bdi_thresh = st.bdi_thresh.min(st.thresh).max((limit - st.dirty) / 8);
    // share of the global threshold, 16-bit fixed point
    let share = (u128::from(bdi_thresh) << 16) / (u128::from(st.thresh) + 1);
    let bdi_setpoint = ((u128::from(setpoint) * share) >> 16) as u64;
    let span = (((u128::from(st.thresh.saturating_sub(bdi_thresh)) + 8 * u128::from(write_bw))
        * share)
        >> 16) as u64;
    let x_intercept = bdi_setpoint + span;
    out.bdi_setpoint = bdi_setpoint;
    if st.bdi_dirty < x_intercept - span / 4 {
        pos = pos * u128::from(x_intercept - st.bdi_dirty)
            / u128::from(x_intercept - bdi_setpoint + 1);
    } else {
        pos /= 4;
    }

    // The bdi reserve area: keep at least half of bdi_thresh queued.
    let reserve = bdi_thresh / 2;
    if st.bdi_dirty < reserve {
        if st.bdi_dirty > reserve / 8 {
            pos = pos * u128::from(reserve) / u128::from(st.bdi_dirty);
        } else {
            pos *= 8;
        }
    }
    out.pos_ratio = pos.min(u128::from(u64::MAX)) as u64;
    out
}

/// `bdi_position_ratio()` (§5.3): the factor applied to the bdi's base rate, 1.0 = 1024.
pub fn bdi_position_ratio(st: &DirtyState, limit: u64, write_bw: u64) -> u64 {
    bdi_position_ratio_detail(st, limit, write_bw).pos_ratio
}

// ---------------------------------------------------------------------------------------
// §5.4 / §5.5 bandwidth and base rate
// ---------------------------------------------------------------------------------------

/// A bdi's write-bandwidth estimate and throttle base rate (the `backing_dev_info`
/// fields of §1), all rates in pages/s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BdiBandwidth {
    /// `write_bandwidth`: ≈3 s moving average of completions.
    pub write_bandwidth: u64,
    /// `avg_write_bandwidth`: `write_bandwidth` smoothed once more; what the control
    /// loops use.
    pub avg_write_bandwidth: u64,
    /// `dirty_ratelimit`: the base rate of every task dirtying this bdi (≈ write_bw / N).
    pub dirty_ratelimit: u64,
    /// `balanced_dirty_ratelimit`: the last raw estimate of write_bw / N.
    pub balanced_dirty_ratelimit: u64,
    /// `bw_time_stamp`: time of the last snapshot, whole jiffies.
    pub bw_time_stamp: Nanos,
    /// `written_stamp`: `BDI_WRITTEN` at the last snapshot.
    pub written_stamp: u64,
    /// `dirtied_stamp`: `BDI_DIRTIED` at the last snapshot.
    pub dirtied_stamp: u64,
    /// `dirty_exceeded`: some task found the bdi over its share and the system over
    /// `thresh`; writers then poll every 8 pages.
    pub dirty_exceeded: bool,
}

impl BdiBandwidth {
    /// `bdi_init()` at `now`: every rate at [`INIT_BW`], counters at zero.
    pub fn new(now: Nanos) -> Self {
        BdiBandwidth {
            write_bandwidth: INIT_BW,
            avg_write_bandwidth: INIT_BW,
            dirty_ratelimit: INIT_BW,
            balanced_dirty_ratelimit: INIT_BW,
            bw_time_stamp: jiffies(now) * JIFFY,
            written_stamp: 0,
            dirtied_stamp: 0,
            dirty_exceeded: false,
        }
    }

    /// `bdi_update_bandwidth()` as the throttle path calls it: runs only when more than
    /// [`BANDWIDTH_INTERVAL`] has passed since the last snapshot (the wrapper's check is
    /// strict), then as [`Self::update`]. `written`/`dirtied` are the cumulative
    /// `BDI_WRITTEN`/`BDI_DIRTIED`; `start_time` is when the current
    /// `balance_dirty_pages` call began. Returns whether a snapshot was taken.
    pub fn bdi_update_bandwidth(
        &mut self,
        gdl: &mut GlobalDirtyLimit,
        now: Nanos,
        written: u64,
        dirtied: u64,
        st: &DirtyState,
        start_time: Nanos,
    ) -> bool {
        if jiffies(now) <= jiffies(self.bw_time_stamp) + BANDWIDTH_INTERVAL_J {
            return false;
        }
        self.update(gdl, now, written, dirtied, st, start_time)
    }

    /// The flusher's update after each `wb_writeback` iteration (`wb_update_bandwidth`,
    /// thresholds zero: bandwidth only). `start_time` is when the work item began.
    pub fn wb_update_bandwidth(
        &mut self,
        now: Nanos,
        written: u64,
        dirtied: u64,
        start_time: Nanos,
    ) -> bool {
        let mut unused = GlobalDirtyLimit::default();
        self.update(
            &mut unused,
            now,
            written,
            dirtied,
            &DirtyState::default(),
            start_time,
        )
    }

    /// `__bdi_update_bandwidth()` (§5.4): at most once per [`BANDWIDTH_INTERVAL`]; skips
    /// (only re-snapshots) an interval longer than 1 s that began before `start_time`
    /// (the device sat idle); with `st.thresh != 0` also updates the smoothed global limit
    /// and the base rate (§5.5). Returns whether a snapshot was taken.
    pub fn update(
        &mut self,
        gdl: &mut GlobalDirtyLimit,
        now: Nanos,
        written: u64,
        dirtied: u64,
        st: &DirtyState,
        start_time: Nanos,
    ) -> bool {
        let now_j = jiffies(now);
        let stamp_j = jiffies(self.bw_time_stamp);
        let elapsed = now_j.saturating_sub(stamp_j);
        if elapsed < BANDWIDTH_INTERVAL_J {
            return false;
        }
        let idle = elapsed > HZ && stamp_j < jiffies(start_time);
        if !idle {
            if st.thresh != 0 {
                gdl.update(now, st.thresh, st.dirty);
                let limit = gdl.hard_dirty_limit(st.thresh);
                self.update_dirty_ratelimit(st, limit, dirtied, elapsed);
            }
            self.update_write_bandwidth(elapsed, written);
        }
        self.dirtied_stamp = dirtied;
        self.written_stamp = written;
        self.bw_time_stamp = now_j * JIFFY;
        true
    }

    /// `bdi_update_write_bandwidth()`: blend the interval's rate into a
    /// `pow2up(3 HZ)`-jiffy moving average; move `avg_write_bandwidth` 1/8 toward it only
    /// when the trend is consistent. An interval longer than the period restarts both.
    fn update_write_bandwidth(&mut self, elapsed: u64, written: u64) {
        let period = pow2up(3 * HZ);
        let old = self.write_bandwidth;
        let mut avg = self.avg_write_bandwidth;
        let mut bw = u128::from(written.wrapping_sub(self.written_stamp)) * u128::from(HZ);
        if elapsed > period {
            bw /= u128::from(elapsed);
            let bw = bw as u64;
            self.write_bandwidth = bw;
            self.avg_write_bandwidth = bw;
            return;
        }
        bw += u128::from(old) * u128::from(period - elapsed);
        let bw = (bw >> period.trailing_zeros()) as u64;
        if avg > old && old >= bw {
            avg -= (avg - old) >> 3;
        }
        if avg < old && old <= bw {
            avg += (old - avg) >> 3;
        }
        self.write_bandwidth = bw;
        self.avg_write_bandwidth = avg;
    }

    /// `bdi_update_dirty_ratelimit()` (§5.5).
    fn update_dirty_ratelimit(&mut self, st: &DirtyState, limit: u64, dirtied: u64, elapsed: u64) {
        let freerun = dirty_freerun_ceiling(st.thresh, st.bg_thresh);
        let setpoint = dirty_setpoint(freerun, limit);
        let write_bw = self.avg_write_bandwidth;
        let rate = self.dirty_ratelimit;
        let dirty_rate = (u128::from(dirtied.wrapping_sub(self.dirtied_stamp)) * u128::from(HZ)
            / u128::from(elapsed)) as u64;
        let pos = bdi_position_ratio(st, limit, write_bw);
        // +1 lets the rate climb back from tiny values
        let task_rate = ((u128::from(rate) * u128::from(pos)) >> RATELIMIT_CALC_SHIFT) as u64 + 1;
        let balanced =
            ((u128::from(task_rate) * u128::from(write_bw)) / u128::from(dirty_rate | 1)) as u64;
        let balanced = balanced.min(write_bw);

        // Follow `balanced` only where the position error agrees, and only up to the
        // nearest of the three estimates.
        let mut step = 0;
        if st.dirty < setpoint {
            let x = self.balanced_dirty_ratelimit.min(balanced).min(task_rate);
            if rate < x {
                step = x - rate;
            }
        } else {
            let x = self.balanced_dirty_ratelimit.max(balanced).max(task_rate);
            if rate > x {
                step = rate - x;
            }
        }
        // Shrink steps that are small relative to the rate; a shift of 64+ empties it.
        let shift = rate / (2 * step + 1);
        step = if shift < 64 { step >> shift } else { 0 };
        step = step.div_ceil(8);
        let rate = if rate < balanced {
            rate + step
        } else {
            rate - step
        };
        self.dirty_ratelimit = rate.max(1);
        self.balanced_dirty_ratelimit = balanced;
    }
}

/// Bdi `bdi`'s estimated write bandwidth and base rate limit as the running kernel keeps
/// them, pages/s: 3.x's `avg_write_bandwidth` and `dirty_ratelimit`, v3's `write_bandwidth`
/// and `throttle_bandwidth`, none (0, 0) for 2.6.37's throttle.
pub fn bdi_rates(k: &crate::mm::Kernel, bdi: usize) -> (u64, u64) {
    if k.ioless_v3() {
        let st = k.old_wb.v3_bdis.get(bdi).copied().unwrap_or_default();
        (st.write_bandwidth, st.throttle_bandwidth)
    } else if k.old_dirty_throttle() {
        (0, 0)
    } else {
        let bw = &k.bdis[bdi].bw;
        (bw.avg_write_bandwidth, bw.dirty_ratelimit)
    }
}

// ---------------------------------------------------------------------------------------
// §5.6 pause bounds, poll interval
// ---------------------------------------------------------------------------------------

/// `dirty_poll_interval()`: pages a task may dirty before checking again in freerun,
/// `2^(ilog2(thresh − dirty) / 2)` ≈ √headroom; 1 without headroom.
pub fn dirty_poll_interval(dirty: u64, thresh: u64) -> u64 {
    if thresh > dirty {
        1 << (ilog2(thresh - dirty) >> 1)
    } else {
        1
    }
}

fn max_pause_j(bdi_dirty: u64, avg_write_bw: u64) -> u64 {
    let t = bdi_dirty / (1 + avg_write_bw / pow2up(1 + HZ / 8)) + 1;
    t.min(MAX_PAUSE_J)
}

/// `bdi_max_pause()` (3.3+): at most [`MAX_PAUSE`] and at most ≈ 1/8 of the time the
/// bdi's dirty pages last at `avg_write_bw`: `bdi_dirty / (1 + bw / pow2up(1 + HZ/8)) + 1`
/// jiffies.
pub fn bdi_max_pause(bdi_dirty: u64, avg_write_bw: u64) -> Nanos {
    max_pause_j(bdi_dirty, avg_write_bw) * JIFFY
}

fn min_pause_j(
    avg_write_bw: u64,
    max_pause: u64,
    task_ratelimit: u64,
    dirty_ratelimit: u64,
) -> (u64, u64) {
    let hi = ilog2(avg_write_bw);
    let lo = ilog2(dirty_ratelimit);
    let hz = HZ as i64;
    let max_pause = max_pause as i64;
    let rate = dirty_ratelimit as i64;
    // 10 ms for one writer, +10 ms per doubling of the writers (hi − lo ≈ log2 N)
    let mut t: i64 = (hz / 100).max(1);
    if hi > lo {
        t += (hi - lo) * (10 * hz) / 1024;
    }
    t = t.min(1 + max_pause / 2);
    let hz_pow2 = pow2up(HZ) as i64;
    let poll = DIRTY_POLL_THRESH as i64;
    let mut pages = rate * t / hz_pow2;
    if pages < poll {
        t = max_pause;
        pages = rate * t / hz_pow2;
        if pages > poll {
            pages = poll;
            t = hz * poll / rate.max(1);
        }
    }
    let pause = hz * pages / (task_ratelimit as i64 + 1);
    if pause > max_pause {
        t = max_pause;
        pages = task_ratelimit as i64 * t / hz_pow2;
    }
    let min_pause = if pages >= poll { 1 + t / 2 } else { t };
    (min_pause as u64, pages as u64)
}

/// `bdi_min_pause()` (3.3+): `(min_pause, nr_dirtied_pause)`. The target pause is
/// 10 ms plus 10 ms per doubling of the writers, at most half of `max_pause`;
/// `nr_dirtied_pause` is what the base rate dirties in that time, pushed up towards
/// [`DIRTY_POLL_THRESH`] when smaller, and cut so that the next pause at
/// `task_ratelimit` fits `max_pause`. Sleeps shorter than `min_pause` are skipped.
pub fn bdi_min_pause(
    avg_write_bw: u64,
    max_pause: Nanos,
    task_ratelimit: u64,
    dirty_ratelimit: u64,
) -> (Nanos, u64) {
    let (t, pages) = min_pause_j(
        avg_write_bw,
        jiffies(max_pause),
        task_ratelimit,
        dirty_ratelimit,
    );
    (t * JIFFY, pages)
}

// ---------------------------------------------------------------------------------------
// §5.1 entry, §5.2 main loop, §5.7 think time, §5.9 background start
// ---------------------------------------------------------------------------------------

/// A task's throttling state (`task_struct` fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirtyTask {
    /// `nr_dirtied`: pages newly dirtied since the last throttle.
    pub nr_dirtied: u64,
    /// `nr_dirtied_pause`: pages to dirty before the next call.
    pub nr_dirtied_pause: u64,
    /// `dirty_paused_when`: end of the last paid-for period, whole jiffies; 0 = never
    /// (no think-time credit).
    pub dirty_paused_when: Nanos,
    /// `dirties`: the task's recent page dirtyings, for its share of the limit (2.6.37,
    /// `task_dirty_limit`).
    pub dirties: proportions::PropLocal,
    /// The task's fields under the IO-less series v3.
    pub v3: TaskV3,
}

impl Default for DirtyTask {
    fn default() -> Self {
        DirtyTask {
            nr_dirtied: 0,
            nr_dirtied_pause: INIT_NR_DIRTIED_PAUSE,
            dirty_paused_when: 0,
            dirties: Default::default(),
            v3: TaskV3::default(),
        }
    }
}

/// Per-CPU counters of the entry hook.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuDirtyCounters {
    /// `bdp_ratelimits`: pages dirtied on this CPU since the last throttle check.
    pub bdp_ratelimits: u64,
    /// `dirty_throttle_leaks`: unthrottled pages of tasks that exited on this CPU.
    pub dirty_throttle_leaks: u64,
}

/// `account_page_dirtied()`'s share (3.3+): a page became dirty for `task` on `cpu`.
pub fn task_dirtied(task: &mut DirtyTask, cpu: &mut CpuDirtyCounters) {
    task.nr_dirtied += 1;
    cpu.bdp_ratelimits += 1;
}

/// At exit a task's unthrottled pages go to its CPU's leak counter.
pub fn dirty_throttle_exit(task: &DirtyTask, cpu: &mut CpuDirtyCounters) {
    cpu.dirty_throttle_leaks += task.nr_dirtied;
}

/// `balance_dirty_pages_ratelimited()` (§5.1) after a page was dirtied on a bdi that
/// accounts dirty pages: `Some(pages_dirtied)` when the task must now run
/// [`BalanceDirtyPages`].
pub fn ratelimit_exceeded(
    task: &mut DirtyTask,
    cpu: &mut CpuDirtyCounters,
    bdi_dirty_exceeded: bool,
    ratelimit_pages: u64,
) -> Option<u64> {
    let mut limit = task.nr_dirtied_pause;
    if bdi_dirty_exceeded {
        limit = limit.min(32 * 1024 / PAGE_SIZE);
    }
    if task.nr_dirtied >= limit {
        cpu.bdp_ratelimits = 0;
    } else if cpu.bdp_ratelimits >= ratelimit_pages {
        cpu.bdp_ratelimits = 0;
        limit = 0;
    }
    if cpu.dirty_throttle_leaks > 0 && task.nr_dirtied < limit {
        let take = cpu.dirty_throttle_leaks.min(limit - task.nr_dirtied);
        cpu.dirty_throttle_leaks -= take;
        task.nr_dirtied += take;
    }
    (task.nr_dirtied >= limit).then_some(task.nr_dirtied)
}

/// Everything one iteration of the `balance_dirty_pages` loop reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BdpInput {
    /// Current time.
    pub now: Nanos,
    /// `NR_FILE_DIRTY + NR_UNSTABLE_NFS`.
    pub nr_reclaimable: u64,
    /// `NR_WRITEBACK`.
    pub nr_writeback: u64,
    /// `background_thresh` from [`global_dirty_limits`], this iteration.
    pub bg_thresh: u64,
    /// `dirty_thresh` from [`global_dirty_limits`], this iteration.
    pub thresh: u64,
    /// [`bdi_dirty_limit`] of `thresh`.
    pub bdi_thresh: u64,
    /// The bdi's `BDI_RECLAIMABLE`.
    pub bdi_reclaimable: u64,
    /// The bdi's `BDI_WRITEBACK`.
    pub bdi_writeback: u64,
    /// The bdi's cumulative `BDI_DIRTIED`.
    pub bdi_dirtied: u64,
    /// The bdi's cumulative `BDI_WRITTEN`.
    pub bdi_written: u64,
    /// [`bdi_stat_error`] of the machine.
    pub bdi_stat_error: u64,
    /// `writeback_in_progress(bdi)`: the flusher is running.
    pub writeback_in_progress: bool,
}

/// What a throttled iteration computed (the `balance_dirty_pages` trace point).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Throttle {
    /// The flusher was idle: start background writeback now.
    pub kick_flusher: bool,
    /// `bdi_dirty > bdi_thresh && nr_dirty > thresh`.
    pub dirty_exceeded: bool,
    /// `nr_dirty`.
    pub nr_dirty: u64,
    /// `bdi_dirty`.
    pub bdi_dirty: u64,
    /// Global setpoint.
    pub setpoint: u64,
    /// The bdi's setpoint.
    pub bdi_setpoint: u64,
    /// `dirty_ratelimit` used (after this iteration's bandwidth update).
    pub dirty_ratelimit: u64,
    /// `task_ratelimit = dirty_ratelimit × pos_ratio / 1024`.
    pub task_ratelimit: u64,
    /// `pos_ratio`, 1.0 = 1024.
    pub pos_ratio: u64,
    /// Time the dirtied pages cost at `task_ratelimit`.
    pub period: Nanos,
    /// `period` minus the think-time credit, before clipping (may be negative).
    pub raw_pause: i64,
    /// `bdi_max_pause`.
    pub max_pause: Nanos,
    /// `bdi_min_pause`.
    pub min_pause: Nanos,
    /// The `nr_dirtied_pause` a sleep installs.
    pub nr_dirtied_pause: u64,
}

/// The outcome of one loop iteration. The task state has already been updated as the
/// kernel updates it (for a sleep: as it stands after the sleep).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BdpDecision {
    /// `nr_dirty <= freerun`: no throttling; the task may dirty `nr_dirtied_pause` pages
    /// before the next call. Finish the call.
    FreeRun { nr_dirtied_pause: u64 },
    /// Throttled, but the pause came out under `min_pause` (think time covered it, or the
    /// batch was too small): no sleep. Finish the call.
    NoSleep(Throttle),
    /// Sleep `pause` (killable, counted as IO wait). Then iterate again if `again` and no
    /// fatal signal is pending, else finish the call. `again` is the hard throttle:
    /// `task_ratelimit` was 0 (dirty at or above the limit) and the bdi holds more than
    /// its stat error.
    Sleep {
        pause: Nanos,
        again: bool,
        t: Throttle,
    },
}

/// One `balance_dirty_pages()` call: the locals that live across loop iterations.
///
/// ```text
/// let mut call = BalanceDirtyPages::new(now, pages_dirtied);
/// loop {
///     let d = call.iterate(&mut task, &mut bdi, &mut gdl, &read_counters());
///     if d.kick_flusher() { start background writeback }
///     match d { Sleep { pause, again, .. } => { sleep(pause); if again && !killed { continue } }
///               _ => {} }
///     break;
/// }
/// if call.finish(&mut bdi, writeback_in_progress(), laptop_mode) { start background writeback }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BalanceDirtyPages {
    /// `start_time`: when the call began.
    pub start_time: Nanos,
    /// `pages_dirtied`: the task's `nr_dirtied` at entry; fixed for the call.
    pub pages_dirtied: u64,
    /// `dirty_exceeded` of the last throttled iteration (false if none).
    pub dirty_exceeded: bool,
    /// `nr_reclaimable` and `background_thresh` of the last iteration, for the tail.
    last_reclaimable: u64,
    last_bg_thresh: u64,
}

impl BdpDecision {
    /// Whether the caller must start background writeback before acting on the decision.
    pub fn kick_flusher(&self) -> bool {
        match self {
            BdpDecision::FreeRun { .. } => false,
            BdpDecision::NoSleep(t) | BdpDecision::Sleep { t, .. } => t.kick_flusher,
        }
    }
}

impl BalanceDirtyPages {
    /// Begin a call at `now` for a task that has dirtied `pages_dirtied` pages.
    pub fn new(now: Nanos, pages_dirtied: u64) -> Self {
        BalanceDirtyPages {
            start_time: jiffies(now) * JIFFY,
            pages_dirtied,
            dirty_exceeded: false,
            last_reclaimable: 0,
            last_bg_thresh: 0,
        }
    }

    /// One pass of the loop body (§5.2, 3.3+ form), updating the task, the bdi's
    /// bandwidth state (every ≥200 ms) and `dirty_exceeded`, and the smoothed global
    /// limit.
    pub fn iterate(
        &mut self,
        task: &mut DirtyTask,
        bdi: &mut BdiBandwidth,
        gdl: &mut GlobalDirtyLimit,
        i: &BdpInput,
    ) -> BdpDecision {
        let now_j = jiffies(i.now);
        let nr_dirty = i.nr_reclaimable + i.nr_writeback;
        self.last_reclaimable = i.nr_reclaimable;
        self.last_bg_thresh = i.bg_thresh;

        if nr_dirty <= dirty_freerun_ceiling(i.thresh, i.bg_thresh) {
            task.dirty_paused_when = now_j * JIFFY;
            task.nr_dirtied = 0;
            task.nr_dirtied_pause = dirty_poll_interval(nr_dirty, i.thresh);
            return BdpDecision::FreeRun {
                nr_dirtied_pause: task.nr_dirtied_pause,
            };
        }
        let kick_flusher = !i.writeback_in_progress;

        let bdi_dirty = i.bdi_reclaimable + i.bdi_writeback;
        let exceeded = bdi_dirty > i.bdi_thresh && nr_dirty > i.thresh;
        self.dirty_exceeded = exceeded;
        if exceeded {
            bdi.dirty_exceeded = true;
        }
        let st = DirtyState {
            thresh: i.thresh,
            bg_thresh: i.bg_thresh,
            dirty: nr_dirty,
            bdi_thresh: i.bdi_thresh,
            bdi_dirty,
        };
        bdi.bdi_update_bandwidth(
            gdl,
            i.now,
            i.bdi_written,
            i.bdi_dirtied,
            &st,
            self.start_time,
        );

        let dirty_ratelimit = bdi.dirty_ratelimit;
        let pr =
            bdi_position_ratio_detail(&st, gdl.hard_dirty_limit(i.thresh), bdi.avg_write_bandwidth);
        let task_ratelimit = ((u128::from(dirty_ratelimit) * u128::from(pr.pos_ratio))
            >> RATELIMIT_CALC_SHIFT) as u64;
        let max_pause = max_pause_j(bdi_dirty, bdi.avg_write_bandwidth);
        let (min_pause, nr_dirtied_pause) = min_pause_j(
            bdi.avg_write_bandwidth,
            max_pause,
            task_ratelimit,
            dirty_ratelimit,
        );
        let mut t = Throttle {
            kick_flusher,
            dirty_exceeded: exceeded,
            nr_dirty,
            bdi_dirty,
            setpoint: pr.setpoint,
            bdi_setpoint: pr.bdi_setpoint,
            dirty_ratelimit,
            task_ratelimit,
            pos_ratio: pr.pos_ratio,
            period: 0,
            raw_pause: 0,
            max_pause: max_pause * JIFFY,
            min_pause: min_pause * JIFFY,
            nr_dirtied_pause,
        };

        // `task_ratelimit` 0 (at the limit): sleep max_pause, no credit, no clipping
        let (pause, mut wake) = match (HZ * self.pages_dirtied).checked_div(task_ratelimit) {
            None => {
                t.period = max_pause * JIFFY;
                t.raw_pause = (max_pause * JIFFY) as i64;
                (max_pause as i64, now_j as i64)
            }
            Some(period) => {
                let period = period as i64;
                let mut pause = period;
                let paused_j = jiffies(task.dirty_paused_when) as i64;
                if task.dirty_paused_when != 0 {
                    pause -= now_j as i64 - paused_j;
                }
                t.period = period as u64 * JIFFY;
                t.raw_pause = pause * JIFFY as i64;
                if pause < min_pause as i64 {
                    if pause < -(HZ as i64) {
                        // more than 1 s behind: a light writer, forget the credit
                        task.dirty_paused_when = now_j * JIFFY;
                        task.nr_dirtied = 0;
                    } else if period != 0 {
                        // carry the unpaid period forward
                        task.dirty_paused_when = ((paused_j + period) as u64) * JIFFY;
                        task.nr_dirtied = 0;
                    } else if task.nr_dirtied_pause <= self.pages_dirtied {
                        task.nr_dirtied_pause += self.pages_dirtied;
                    }
                    return BdpDecision::NoSleep(t);
                }
                let mut wake = now_j as i64;
                if pause > max_pause as i64 {
                    // remember part of the debt beyond one max_pause
                    wake += (pause - max_pause as i64).min(max_pause as i64);
                    pause = max_pause as i64;
                }
                (pause, wake)
            }
        };
        wake += pause;
        task.dirty_paused_when = wake.max(0) as u64 * JIFFY;
        task.nr_dirtied = 0;
        task.nr_dirtied_pause = nr_dirtied_pause;
        let again = task_ratelimit == 0 && bdi_dirty > i.bdi_stat_error;
        BdpDecision::Sleep {
            pause: pause as u64 * JIFFY,
            again,
            t,
        }
    }

    /// The tail of the call: clears the bdi's `dirty_exceeded` if the last throttled
    /// iteration was not over, and returns whether to start background writeback
    /// (§5.9: flusher idle, not laptop mode, `nr_reclaimable > background_thresh`).
    pub fn finish(
        &self,
        bdi: &mut BdiBandwidth,
        writeback_in_progress: bool,
        laptop_mode: bool,
    ) -> bool {
        if !self.dirty_exceeded && bdi.dirty_exceeded {
            bdi.dirty_exceeded = false;
        }
        should_start_background_writeback(
            self.last_reclaimable,
            self.last_bg_thresh,
            writeback_in_progress,
            laptop_mode,
        )
    }
}

/// §5.9: whether the end of `balance_dirty_pages` starts background writeback.
pub fn should_start_background_writeback(
    nr_reclaimable: u64,
    bg_thresh: u64,
    writeback_in_progress: bool,
    laptop_mode: bool,
) -> bool {
    !writeback_in_progress && !laptop_mode && nr_reclaimable > bg_thresh
}

/// `over_bground_thresh()` (3.2+): the flusher keeps doing background writeback while
/// the global `FILE_DIRTY + UNSTABLE` exceeds `bg_thresh` or the bdi's reclaimable pages
/// exceed its share of it (`bdi_bg_thresh` = [`bdi_dirty_limit`] of `bg_thresh`).
pub fn over_bground_thresh(
    nr_reclaimable: u64,
    bg_thresh: u64,
    bdi_reclaimable: u64,
    bdi_bg_thresh: u64,
) -> bool {
    nr_reclaimable > bg_thresh || bdi_reclaimable > bdi_bg_thresh
}

mod account;
mod balance;
mod balance_old;
mod balance_v3;
pub mod proportions;
mod throttle_stats;
mod write_cache_pages;

pub use account::*;
pub use balance::*;
pub use balance_old::*;
pub use balance_v3::*;
pub use throttle_stats::*;
pub use write_cache_pages::*;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::MSEC;

    const GIB_PAGES: u64 = (1 << 30) / PAGE_SIZE;
    const MB: u64 = 1_000_000;

    fn sysctls() -> DirtySysctls {
        DirtySysctls::default()
    }

    // ---- §2.1 / §2.2 thresholds -------------------------------------------------------

    #[test]
    fn thresholds_of_4_gib_dirtyable_with_default_ratios() {
        let dirtyable = 4 * GIB_PAGES; // 1 048 576 pages
        let (bg, thresh) = global_dirty_limits(dirtyable, &sysctls(), false);
        assert_eq!(thresh, 20 * dirtyable / 100);
        assert_eq!(thresh, 209_715); // 838 860 KiB
        assert_eq!(bg, 10 * dirtyable / 100);
        assert_eq!(bg, 104_857);
        assert_eq!(dirty_freerun_ceiling(thresh, bg), (209_715 + 104_857) / 2);
    }

    #[test]
    fn dirtyable_memory_counts_anon_only_while_swap_has_room_and_never_returns_zero() {
        let mut d = Dirtyable {
            free_pages: 10_000,
            file_lru: 50_000,
            anon_lru: 30_000,
            nr_swap_pages: 0,
            dirty_balance_reserve: 2_000,
            highmem_dirtyable: 0,
        };
        assert_eq!(global_dirtyable_memory(&d), 10_000 + 50_000 - 2_000 + 1);
        d.nr_swap_pages = 1;
        assert_eq!(
            global_dirtyable_memory(&d),
            10_000 + 50_000 + 30_000 - 2_000 + 1
        );
        d.highmem_dirtyable = 8_000;
        assert_eq!(
            global_dirtyable_memory(&d),
            10_000 + 50_000 + 30_000 - 2_000 - 8_000 + 1
        );
        d.dirty_balance_reserve = 1_000_000;
        assert_eq!(global_dirtyable_memory(&d), 1);
    }

    #[test]
    fn dirty_balance_reserve_is_high_watermark_plus_lowmem_reserve_capped_by_zone_size() {
        let zones = [
            ZoneReserve {
                managed_pages: 3_977,
                high_wmark: 10,
                max_lowmem_reserve: 5_000,
            },
            ZoneReserve {
                managed_pages: 500_000,
                high_wmark: 1_500,
                max_lowmem_reserve: 2_000,
            },
            ZoneReserve {
                managed_pages: 0,
                high_wmark: 0,
                max_lowmem_reserve: 0,
            },
        ];
        assert_eq!(dirty_balance_reserve(&zones), 3_977 + 3_500);
    }

    #[test]
    fn dirty_bytes_overrides_dirty_ratio_and_rounds_up_to_pages() {
        let s = DirtySysctls {
            dirty_bytes: 100 * MB + 1,
            ..sysctls()
        };
        let (bg, thresh) = global_dirty_limits(4 * GIB_PAGES, &s, false);
        assert_eq!(thresh, (100 * MB + 1).div_ceil(4096));
        // the background ratio is still a ratio of dirtyable memory, but it is above the
        // byte limit, so it becomes half of it
        assert_eq!(bg, thresh / 2);
        let s = DirtySysctls {
            dirty_background_bytes: 40 * MB,
            ..s
        };
        let (bg, _) = global_dirty_limits(4 * GIB_PAGES, &s, false);
        assert_eq!(bg, (40 * MB).div_ceil(4096));
    }

    #[test]
    fn background_at_or_above_dirty_threshold_is_halved() {
        let dirtyable = 1_000_000;
        let s = DirtySysctls {
            dirty_ratio: 20,
            dirty_background_ratio: 20,
            ..sysctls()
        };
        assert_eq!(
            global_dirty_limits(dirtyable, &s, false),
            (100_000, 200_000)
        );
        let s = DirtySysctls {
            dirty_ratio: 20,
            dirty_background_ratio: 50,
            ..sysctls()
        };
        assert_eq!(
            global_dirty_limits(dirtyable, &s, false),
            (100_000, 200_000)
        );
        let s = DirtySysctls {
            dirty_ratio: 20,
            dirty_background_ratio: 19,
            ..sysctls()
        };
        assert_eq!(
            global_dirty_limits(dirtyable, &s, false),
            (190_000, 200_000)
        );
    }

    #[test]
    fn ratio_0_and_100_are_the_edges() {
        let dirtyable = 777_777;
        let s = DirtySysctls {
            dirty_ratio: 0,
            ..sysctls()
        };
        // background (10 %) >= dirty (0) -> background = 0 / 2
        assert_eq!(global_dirty_limits(dirtyable, &s, false), (0, 0));
        let s = DirtySysctls {
            dirty_ratio: 100,
            dirty_background_ratio: 100,
            ..sysctls()
        };
        assert_eq!(
            global_dirty_limits(dirtyable, &s, false),
            (dirtyable / 2, dirtyable)
        );
        let s = DirtySysctls {
            dirty_ratio: 100,
            dirty_background_ratio: 0,
            ..sysctls()
        };
        assert_eq!(global_dirty_limits(dirtyable, &s, false), (0, dirtyable));
        assert!(s.validate().is_ok());
    }

    #[test]
    fn rt_and_less_throttle_tasks_get_a_quarter_more_on_both_thresholds() {
        let (bg, thresh) = global_dirty_limits(1_000_003, &sysctls(), false);
        let (bg_rt, thresh_rt) = global_dirty_limits(1_000_003, &sysctls(), true);
        assert_eq!(bg_rt, bg + bg / 4);
        assert_eq!(thresh_rt, thresh + thresh / 4);
    }

    #[test]
    fn validate_refuses_what_the_sysctl_handlers_refuse() {
        assert_eq!(sysctls().validate(), Ok(()));
        let e = DirtySysctls {
            dirty_ratio: 101,
            ..sysctls()
        }
        .validate()
        .unwrap_err();
        assert_eq!(
            e,
            SysctlError::RatioOutOfRange {
                name: "dirty_ratio",
                value: 101
            }
        );
        assert!(e.to_string().contains("vm.dirty_ratio = 101"));
        let e = DirtySysctls {
            dirty_background_ratio: 200,
            ..sysctls()
        }
        .validate();
        assert!(matches!(
            e,
            Err(SysctlError::RatioOutOfRange {
                name: "dirty_background_ratio",
                ..
            })
        ));
        let e = DirtySysctls {
            dirty_bytes: 4096,
            ..sysctls()
        }
        .validate()
        .unwrap_err();
        assert_eq!(
            e,
            SysctlError::DirtyBytesTooSmall {
                value: 4096,
                min: 8192
            }
        );
        assert!(DirtySysctls {
            dirty_bytes: 8192,
            ..sysctls()
        }
        .validate()
        .is_ok());
        assert_eq!(sysctls().dirty_expire(), 30 * SEC);
        assert_eq!(sysctls().dirty_writeback_interval(), Some(5 * SEC));
        let off = DirtySysctls {
            dirty_writeback_centisecs: 0,
            ..sysctls()
        };
        assert_eq!(off.dirty_writeback_interval(), None);
    }

    #[test]
    fn ratelimit_pages_and_stat_error_follow_the_cpu_count() {
        assert_eq!(ratelimit_pages(200_000, 4), 200_000 / 128);
        assert_eq!(ratelimit_pages(1_000, 4), 16);
        assert_eq!(bdi_stat_error(1), 1);
        assert_eq!(bdi_stat_error(4), 4 * 8 * 3); // 96, spec §11
        assert_eq!(bdi_stat_error(6), 6 * 8 * 3);
    }

    // ---- §2.6 smoothed limit ----------------------------------------------------------

    #[test]
    fn global_dirty_limit_jumps_up_creeps_down_and_stays_above_dirty() {
        let mut g = GlobalDirtyLimit::default();
        assert!(g.update(0, 100_000, 0));
        assert_eq!(g.limit, 100_000);
        // thresh drops to 50 000: 1/32 of the gap per 200 ms
        assert!(
            !g.update(199 * MSEC, 50_000, 0),
            "rate limited to one update per 200 ms"
        );
        assert!(g.update(200 * MSEC, 50_000, 0));
        assert_eq!(g.limit, 100_000 - 50_000 / 32);
        let mut expect = g.limit;
        for k in 2..200u64 {
            g.update(k * 200 * MSEC, 50_000, 70_000);
            if expect > 70_000 {
                expect -= (expect - 70_000) >> 5;
            }
            assert_eq!(g.limit, expect);
        }
        assert!(g.limit >= 70_000, "never below the dirty count");
        assert_eq!(g.hard_dirty_limit(50_000), g.limit);
        assert_eq!(g.hard_dirty_limit(90_000), 90_000);
        g.update(1_000 * SEC, 90_000, 0);
        assert_eq!(g.limit, 90_000);
    }

    // ---- §2.4 per-bdi share -----------------------------------------------------------

    #[test]
    fn bdi_dirty_limit_splits_the_threshold_by_share_with_min_and_max_ratio() {
        assert_eq!(bdi_dirty_limit(100_000, 1, 4, 0, 100, 0), 25_000);
        // 10 % reserved for this bdi: 90 % shared
        assert_eq!(
            bdi_dirty_limit(100_000, 1, 4, 10, 100, 10),
            90_000 / 4 + 10_000
        );
        // min ratios of other bdis shrink the shared part
        assert_eq!(bdi_dirty_limit(100_000, 1, 4, 0, 100, 30), 70_000 / 4);
        // capped at max_ratio
        assert_eq!(bdi_dirty_limit(100_000, 3, 4, 0, 50, 0), 50_000);
        assert_eq!(bdi_dirty_limit(100_000, 0, 1, 0, 100, 0), 0);
    }

    #[test]
    fn proportions_follow_completions_and_halve_every_3_seconds() {
        let mut p = BdiProportions::new(2);
        let t0 = 10 * SEC;
        for _ in 0..300 {
            p.writeout_inc(0, t0);
        }
        for _ in 0..100 {
            p.writeout_inc(1, t0);
        }
        // global count starts at 1
        assert_eq!(p.fraction(0, t0), (300, 401));
        assert_eq!(p.fraction(1, t0), (100, 401));
        // one period later: everything halved
        let t1 = t0 + VM_COMPLETIONS_PERIOD_LEN;
        assert_eq!(p.fraction(0, t1), (150, 200));
        assert_eq!(p.fraction(1, t1), (50, 200));
        // bdi 1 alone is busy from now on: its share rises towards 1
        for k in 0..4 {
            for _ in 0..400 {
                p.writeout_inc(1, t1 + k * VM_COMPLETIONS_PERIOD_LEN);
            }
        }
        let t5 = t1 + 4 * VM_COMPLETIONS_PERIOD_LEN;
        let (n0, d0) = p.fraction(0, t5);
        let (n1, d1) = p.fraction(1, t5);
        assert_eq!(n0, 150 >> 4);
        assert!(n1 * 100 / d1 > 95, "busy bdi share {n1}/{d1}");
        assert!(n0 * 100 / d0 < 5);
        // idle long enough and everything decays to nothing; the timer stops
        let (n0, _) = p.fraction(0, t5 + 40 * VM_COMPLETIONS_PERIOD_LEN);
        let (n1, _) = p.fraction(1, t5 + 40 * VM_COMPLETIONS_PERIOD_LEN);
        // aging stops once the global count is down to 1, which may leave a bdi at 1
        assert_eq!(n0, 0);
        assert!(n1 <= 1);
        assert_eq!(p.period_time, None);
        p.writeout_inc(0, 1_000 * SEC);
        assert_eq!(
            p.period_time,
            Some(jiffies(1_000 * SEC + VM_COMPLETIONS_PERIOD_LEN))
        );
    }

    #[test]
    fn completions_over_max_ratio_are_not_counted() {
        let mut p = BdiProportions::new(2);
        p.set_max_ratio(0, 50);
        for _ in 0..100 {
            p.writeout_inc(1, 0);
        }
        for _ in 0..1000 {
            p.writeout_inc(0, 0);
        }
        let (n, d) = p.fraction(0, 0);
        assert!(n * 1024 <= d * 512 + 1024, "share {n}/{d} above 50 %");
        assert!(n >= 90);
    }

    // ---- §5.3 position ratio ----------------------------------------------------------

    /// thresh 200 000, bg 100 000: freerun 150 000, setpoint 175 000, limit 200 000.
    fn region() -> (u64, u64, u64, u64, u64) {
        let (thresh, bg) = (200_000, 100_000);
        let freerun = dirty_freerun_ceiling(thresh, bg);
        let limit = thresh;
        (thresh, bg, freerun, dirty_setpoint(freerun, limit), limit)
    }

    #[test]
    fn global_control_line_is_2_at_freerun_1_at_setpoint_0_at_limit() {
        let (_, _, freerun, setpoint, limit) = region();
        assert_eq!((freerun, setpoint, limit), (150_000, 175_000, 200_000));
        // x = (setpoint - freerun) * 1024 / (limit - setpoint + 1) = 1023 (truncated)
        let x: i64 = (25_000 << 10) / 25_001;
        let at_freerun = 1024 + ((((x * x) >> 10) * x) >> 10);
        assert_eq!(
            global_pos_ratio(setpoint, limit, freerun) as i64,
            at_freerun
        );
        assert!((2045..=2048).contains(&at_freerun));
        assert_eq!(global_pos_ratio(setpoint, limit, setpoint), 1024);
        assert!(global_pos_ratio(setpoint, limit, limit - 1) <= 4);
        let st = DirtyState {
            thresh: 200_000,
            bg_thresh: 100_000,
            dirty: limit,
            ..Default::default()
        };
        assert_eq!(bdi_position_ratio(&st, limit, INIT_BW), 0);
        let st = DirtyState {
            dirty: limit + 5,
            ..st
        };
        assert_eq!(bdi_position_ratio(&st, limit, INIT_BW), 0);
    }

    #[test]
    fn global_control_line_decreases_monotonically_from_freerun_to_limit() {
        let (_, _, freerun, setpoint, limit) = region();
        let mut prev = u64::MAX;
        for dirty in freerun..limit {
            let p = global_pos_ratio(setpoint, limit, dirty);
            assert!(
                p <= prev,
                "pos_ratio rose at dirty = {dirty}: {prev} -> {p}"
            );
            prev = p;
        }
        // flat near the setpoint, steep near the ends
        let near = global_pos_ratio(setpoint, limit, setpoint - 2_500);
        let far = global_pos_ratio(setpoint, limit, freerun + 2_500);
        assert!(near - 1024 < 2, "slope at the setpoint is ~0: {near}");
        assert!(far > 1700);
    }

    #[test]
    fn single_bdi_at_its_setpoint_runs_at_the_base_rate() {
        let (thresh, bg, _, setpoint, limit) = region();
        let st = DirtyState {
            thresh,
            bg_thresh: bg,
            dirty: setpoint,
            bdi_thresh: thresh,
            bdi_dirty: setpoint,
        };
        let d = bdi_position_ratio_detail(&st, limit, INIT_BW);
        let share = (thresh << 16) / (thresh + 1);
        assert_eq!(d.bdi_setpoint, (setpoint * share) >> 16);
        assert!((1020..=1024).contains(&d.pos_ratio), "{d:?}");
        // one second of bandwidth above the bdi setpoint costs about 1/8
        let st2 = DirtyState {
            bdi_dirty: d.bdi_setpoint + INIT_BW,
            ..st
        };
        let p = bdi_position_ratio(&st2, limit, INIT_BW);
        assert!((890..=900).contains(&p), "{p}");
    }

    #[test]
    fn bdi_line_never_throttles_below_a_quarter() {
        let (thresh, bg, _, setpoint, limit) = region();
        let st = DirtyState {
            thresh,
            bg_thresh: bg,
            dirty: setpoint,
            bdi_thresh: thresh / 10,
            bdi_dirty: thresh,
        };
        assert_eq!(bdi_position_ratio(&st, limit, 1_000), 1024 / 4);
    }

    /// §5.3: the bdi line is linear while `bdi_dirty < x_intercept − span/4` and a flat
    /// quarter from that point on (the comparison is strict).
    #[test]
    fn bdi_line_turns_flat_at_a_quarter_span_before_its_x_intercept() {
        let (thresh, bg, _, setpoint, limit) = region();
        let bw = INIT_BW;
        let share = (thresh << 16) / (thresh + 1);
        let bdi_setpoint = (setpoint * share) >> 16;
        let span = ((8 * bw) * share) >> 16;
        let xi = bdi_setpoint + span;
        let knee = xi - span / 4;
        let at = |bdi_dirty: u64| {
            let st = DirtyState {
                thresh,
                bg_thresh: bg,
                dirty: setpoint,
                bdi_thresh: thresh,
                bdi_dirty,
            };
            bdi_position_ratio(&st, limit, bw)
        };
        let line = |b: u64| 1024 * (xi - b) / (xi - bdi_setpoint + 1);
        assert_eq!(at(knee), 1024 / 4, "the knee is on the flat part");
        assert_eq!(at(knee + 1), 1024 / 4);
        assert_eq!(at(xi + span), 1024 / 4);
        assert_eq!(at(knee - 1), line(knee - 1));
        assert_eq!(at(bdi_setpoint + span / 2), line(bdi_setpoint + span / 2));
        assert!(
            line(knee) < 1024 / 4,
            "the linear formula would dip under the floor at the knee"
        );
    }

    #[test]
    fn bdi_reserve_area_raises_pos_ratio_when_the_bdi_is_nearly_empty() {
        let (thresh, bg, _, setpoint, limit) = region();
        let base = DirtyState {
            thresh,
            bg_thresh: bg,
            dirty: setpoint,
            bdi_thresh: 100_000,
            bdi_dirty: 60_000,
        };
        let normal = bdi_position_ratio(&base, limit, INIT_BW);
        assert!(
            normal >= 1024,
            "below bdi_setpoint the bdi line is above 1: {normal}"
        );
        // reserve = bdi_thresh / 2 = 50 000
        let d = bdi_position_ratio_detail(
            &DirtyState {
                bdi_dirty: 20_000,
                ..base
            },
            limit,
            INIT_BW,
        );
        let share = (100_000u64 << 16) / (thresh + 1);
        let bdi_setpoint = (setpoint * share) >> 16;
        let span = ((thresh - 100_000 + 8 * INIT_BW) * share) >> 16;
        let xi = bdi_setpoint + span;
        let line = 1024 * (xi - 20_000) / (xi - bdi_setpoint + 1);
        assert_eq!(d.pos_ratio, line * 50_000 / 20_000);
        // at or below reserve/8 the boost is exactly ×8
        let tiny = bdi_position_ratio(
            &DirtyState {
                bdi_dirty: 6_000,
                ..base
            },
            limit,
            INIT_BW,
        );
        let line = 1024 * (xi - 6_000) / (xi - bdi_setpoint + 1);
        assert_eq!(tiny, line * 8);
        assert!(tiny > d.pos_ratio && d.pos_ratio > normal);
    }

    /// §5.3, the bdi reserve area: below `r = bdi_thresh / 2` the factor is `r / bdi_dirty`
    /// while `bdi_dirty > r / 8`, and a flat ×8 at `r / 8` and below; at `r` itself there is
    /// no boost. Both comparisons are strict.
    #[test]
    fn bdi_reserve_area_boundaries_are_strict() {
        let (thresh, bg, _, setpoint, limit) = region();
        let bw = INIT_BW;
        // bdi_thresh is raised to the floor (limit - dirty) / 8 = 3 125: r = 1 562, and
        // r / 8 = 195 is not an eighth of r exactly.
        let base = DirtyState {
            thresh,
            bg_thresh: bg,
            dirty: setpoint,
            bdi_thresh: 200,
            bdi_dirty: 0,
        };
        let bdi_thresh = (limit - setpoint) / 8;
        let r = bdi_thresh / 2;
        assert_eq!((r, r / 8), (1_562, 195));
        let detail = |bdi_dirty: u64| {
            bdi_position_ratio_detail(&DirtyState { bdi_dirty, ..base }, limit, bw)
        };
        let line = |bdi_dirty: u64| {
            let d = detail(bdi_dirty);
            let share = (bdi_thresh << 16) / (thresh + 1);
            let span = ((thresh - bdi_thresh + 8 * bw) * share) >> 16;
            let xi = d.bdi_setpoint + span;
            assert!(bdi_dirty < xi - span / 4);
            1024 * (xi - bdi_dirty) / (xi - d.bdi_setpoint + 1)
        };
        assert_eq!(detail(195).pos_ratio, line(195) * 8, "r / 8: flat x8");
        assert_eq!(
            detail(196).pos_ratio,
            line(196) * r / 196,
            "just above r / 8"
        );
        assert!(line(195) * r / 195 != line(195) * 8);
        assert_eq!(detail(r).pos_ratio, line(r), "at r: no boost");
        assert_eq!(detail(r - 1).pos_ratio, line(r - 1) * r / (r - 1));
    }

    /// §5.3: when `bdi_thresh` rounds down to a page, the reserve area is empty (`r = 0`)
    /// and an empty bdi gets no ×8 from it.
    #[test]
    fn a_one_page_bdi_threshold_has_no_reserve_area() {
        // A tiny machine: thresh 10 pages, bg 5: freerun 7, setpoint 8, limit 10.
        let st = DirtyState {
            thresh: 10,
            bg_thresh: 5,
            dirty: 0,
            bdi_thresh: 0,
            bdi_dirty: 0,
        };
        let d = bdi_position_ratio_detail(&st, 10, 0);
        assert_eq!((d.freerun, d.setpoint), (7, 8));
        // bdi_thresh = max(0, 10 / 8) = 1: share 0, bdi_setpoint 0, span 0, so the bdi line
        // is on its floor; r = 0.
        assert_eq!(d.bdi_setpoint, 0);
        assert_eq!(d.pos_ratio, d.global / 4);
        assert!(d.global > 1024);
    }

    #[test]
    fn idle_bdi_with_no_share_gets_an_eighth_of_the_headroom() {
        let (thresh, bg, _, setpoint, limit) = region();
        let st = DirtyState {
            thresh,
            bg_thresh: bg,
            dirty: setpoint,
            bdi_thresh: 0,
            bdi_dirty: 0,
        };
        let d = bdi_position_ratio_detail(&st, limit, INIT_BW);
        let floor = (limit - setpoint) / 8;
        let share = (floor << 16) / (thresh + 1);
        assert_eq!(d.bdi_setpoint, (setpoint * share) >> 16);
        assert!(
            d.pos_ratio > 1024 * 8,
            "an empty bdi is not throttled: {}",
            d.pos_ratio
        );
    }

    // ---- §5.4 bandwidth ---------------------------------------------------------------

    /// Feed `rate_bytes` per second of completions every `step` for `secs` seconds
    /// through the flusher's update; returns the bdi.
    fn feed(bdi: &mut BdiBandwidth, t0: Nanos, rate_bytes: u64, step: Nanos, secs: u64) -> Nanos {
        let mut now = t0;
        let base = bdi.written_stamp;
        while now < t0 + secs * SEC {
            now += step;
            let written = base + rate_bytes * ((now - t0) / MSEC) / 1000 / PAGE_SIZE;
            bdi.wb_update_bandwidth(now, written, 0, t0);
        }
        now
    }

    fn within(actual: u64, target: u64, pct: u64) -> bool {
        actual.abs_diff(target) * 100 <= target * pct
    }

    #[test]
    fn write_bandwidth_converges_to_a_100_mb_s_device_within_10_s() {
        let mut bdi = BdiBandwidth::new(0);
        feed(&mut bdi, 0, 100 * MB, 200 * MSEC, 10);
        let real = 100 * MB / PAGE_SIZE;
        assert!(
            within(bdi.write_bandwidth, real, 5),
            "{} vs {real}",
            bdi.write_bandwidth
        );
        assert!(
            within(bdi.avg_write_bandwidth, real, 5),
            "{} vs {real}",
            bdi.avg_write_bandwidth
        );
    }

    #[test]
    fn write_bandwidth_converges_from_far_away_as_a_3_s_average() {
        let mut bdi = BdiBandwidth::new(0);
        let now = feed(&mut bdi, 0, 20 * MB, 200 * MSEC, 3);
        let real = 20 * MB / PAGE_SIZE;
        // after one period only part of the way
        assert!(
            bdi.write_bandwidth > real * 13 / 10,
            "{}",
            bdi.write_bandwidth
        );
        feed(&mut bdi, now, 20 * MB, 200 * MSEC, 27);
        assert!(
            within(bdi.write_bandwidth, real, 5),
            "{} vs {real}",
            bdi.write_bandwidth
        );
        assert!(
            within(bdi.avg_write_bandwidth, real, 5),
            "{} vs {real}",
            bdi.avg_write_bandwidth
        );
    }

    #[test]
    fn one_update_blends_the_interval_rate_into_the_period() {
        let mut bdi = BdiBandwidth::new(0);
        let mut g = GlobalDirtyLimit::default();
        // 2 000 pages in 50 jiffies = 10 000 pages/s
        assert!(bdi.update(&mut g, 200 * MSEC, 2_000, 0, &DirtyState::default(), 0));
        let period = pow2up(3 * HZ);
        let expect = (2_000 * HZ + INIT_BW * (period - 50)) / period;
        assert_eq!(bdi.write_bandwidth, expect);
        // old == avg: the second-level average does not move
        assert_eq!(bdi.avg_write_bandwidth, INIT_BW);
        // less than 200 ms later: nothing
        assert!(!bdi.update(&mut g, 396 * MSEC, 9_999, 0, &DirtyState::default(), 0));
        assert_eq!(bdi.written_stamp, 2_000);
    }

    #[test]
    fn estimator_ignores_an_idle_gap_longer_than_1_s() {
        let mut bdi = BdiBandwidth::new(0);
        let now = feed(&mut bdi, 0, 100 * MB, 200 * MSEC, 10);
        let before = bdi;
        // the device sits idle for 5 s; a new writer arrives and is throttled at once
        let later = now + 5 * SEC;
        let written = bdi.written_stamp + 17;
        let st = DirtyState {
            thresh: 200_000,
            bg_thresh: 100_000,
            dirty: 160_000,
            bdi_thresh: 200_000,
            bdi_dirty: 160_000,
        };
        let mut g = GlobalDirtyLimit::default();
        assert!(bdi.bdi_update_bandwidth(&mut g, later, written, 1_000, &st, later));
        assert_eq!(bdi.write_bandwidth, before.write_bandwidth);
        assert_eq!(bdi.avg_write_bandwidth, before.avg_write_bandwidth);
        assert_eq!(bdi.dirty_ratelimit, before.dirty_ratelimit);
        assert_eq!((bdi.written_stamp, bdi.dirtied_stamp), (written, 1_000));
        assert_eq!(bdi.bw_time_stamp, later);
        assert_eq!(
            g,
            GlobalDirtyLimit::default(),
            "skipped before the global update"
        );

        // the same gap inside one throttle call (stamp after start) is measured: a
        // gap longer than the period restarts both averages at the gap's rate
        let mut bdi2 = before;
        bdi2.bdi_update_bandwidth(&mut g, later, written, 1_000, &st, now - SEC);
        let expect = 17 * HZ / jiffies(5 * SEC);
        assert_eq!(
            (bdi2.write_bandwidth, bdi2.avg_write_bandwidth),
            (expect, expect)
        );
    }

    #[test]
    fn throttle_path_update_needs_strictly_more_than_200_ms() {
        let mut bdi = BdiBandwidth::new(0);
        let mut g = GlobalDirtyLimit::default();
        let st = DirtyState::default();
        assert!(!bdi.bdi_update_bandwidth(&mut g, 200 * MSEC, 100, 0, &st, 0));
        assert!(bdi.bdi_update_bandwidth(&mut g, 204 * MSEC, 100, 0, &st, 0));
        let mut bdi = BdiBandwidth::new(0);
        assert!(bdi.wb_update_bandwidth(200 * MSEC, 100, 0, 0));
    }

    // ---- §5.5 base rate ---------------------------------------------------------------

    /// A closed loop: `n` tasks each dirtying at their `task_ratelimit` (recomputed every
    /// jiffy, as frequent throttle calls would), a device completing `bw` pages/s, the
    /// bdi asking for an update every jiffy (it runs every 200 ms). Returns
    /// (dirty_ratelimit, dirty, setpoint) after `secs`.
    fn closed_loop(n: u64, bw: u64, secs: u64) -> (u64, u64, u64) {
        let (thresh, bg, _, setpoint, _) = region();
        let mut bdi = BdiBandwidth::new(0);
        bdi.write_bandwidth = bw;
        bdi.avg_write_bandwidth = bw;
        let mut g = GlobalDirtyLimit::default();
        let mut dirty = setpoint;
        // cumulative counts in pages × HZ, so that sub-page progress per jiffy adds up
        let (mut dirtied_hz, mut written_hz) = (0u64, 0u64);
        for j in 1..=secs * HZ {
            let st = DirtyState {
                thresh,
                bg_thresh: bg,
                dirty,
                bdi_thresh: thresh,
                bdi_dirty: dirty,
            };
            let pos = bdi_position_ratio(&st, g.hard_dirty_limit(thresh), bdi.avg_write_bandwidth);
            let task_rate = (bdi.dirty_ratelimit * pos) >> RATELIMIT_CALC_SHIFT;
            let before = (dirtied_hz / HZ, written_hz / HZ);
            dirtied_hz += n * task_rate;
            written_hz += bw;
            let (dirtied, written) = (dirtied_hz / HZ, written_hz / HZ);
            dirty = (dirty + (dirtied - before.0)).saturating_sub(written - before.1);
            let st = DirtyState {
                dirty,
                bdi_dirty: dirty,
                ..st
            };
            bdi.update(&mut g, j * JIFFY, written, dirtied, &st, 0);
        }
        (bdi.dirty_ratelimit, dirty, setpoint)
    }

    #[test]
    fn dirty_ratelimit_converges_to_write_bw_over_n_dirtiers() {
        let bw = 12_800;
        let (_, _, _, setpoint, limit) = region();
        for n in [1, 2, 4, 10] {
            let (early, _, _) = closed_loop(n, bw, 5);
            let (rate, dirty, _) = closed_loop(n, bw, 60);
            let want = bw / n;
            assert!(
                rate.abs_diff(want) < early.abs_diff(want),
                "N = {n}: not converging ({early} at 5 s, {rate} at 60 s, want {want})"
            );
            // `step >>= rate / (2 step + 1)` leaves a dead band of a few percent
            assert!(
                within(rate, want, 10),
                "N = {n}: dirty_ratelimit {rate}, want {want}"
            );
            assert!(
                dirty.abs_diff(setpoint) < (limit - setpoint) / 4,
                "N = {n}: dirty {dirty}, setpoint {setpoint}"
            );
        }
    }

    #[test]
    fn balanced_rate_is_capped_at_the_write_bandwidth() {
        let (thresh, bg, freerun, _, _) = region();
        let mut bdi = BdiBandwidth::new(0);
        bdi.write_bandwidth = 1_000;
        bdi.avg_write_bandwidth = 1_000;
        let mut g = GlobalDirtyLimit::default();
        // nobody dirtied anything: the raw estimate would be huge
        let st = DirtyState {
            thresh,
            bg_thresh: bg,
            dirty: freerun + 1,
            bdi_thresh: thresh,
            bdi_dirty: freerun + 1,
        };
        bdi.update(&mut g, 200 * MSEC, 200, 0, &st, 0);
        assert_eq!(bdi.balanced_dirty_ratelimit, 1_000);
    }

    // ---- §5.6 pauses ------------------------------------------------------------------

    #[test]
    fn max_pause_is_200_ms_or_an_eighth_of_the_bdi_pool_time() {
        // plenty of dirty pages: 200 ms
        assert_eq!(bdi_max_pause(100_000, INIT_BW), MAX_PAUSE);
        assert_eq!(MAX_PAUSE, 200 * MSEC);
        // 4 000 pages at 25 600 pages/s last 156 ms; an eighth is ~20 ms
        let j = 4_000 / (1 + INIT_BW / pow2up(1 + HZ / 8)) + 1;
        assert_eq!(bdi_max_pause(4_000, INIT_BW), j * JIFFY);
        assert_eq!(bdi_max_pause(4_000, INIT_BW), 20 * MSEC);
        assert!(bdi_max_pause(0, INIT_BW) >= JIFFY);
    }

    #[test]
    fn min_pause_and_poll_interval_scale_with_the_number_of_writers() {
        let bw = INIT_BW;
        // one writer: 2 jiffies (8 ms at HZ=250) of base rate
        let (mp, pages) = bdi_min_pause(bw, MAX_PAUSE, bw, bw);
        assert_eq!(pages, bw * 2 / pow2up(HZ));
        assert_eq!(mp, (1 + 2 / 2) * JIFFY);
        // 16 writers: ilog2 difference 4 -> t = 2 + 4 * 2500 / 1024 = 11 jiffies
        let rate = bw / 16;
        let (mp, pages) = bdi_min_pause(bw, MAX_PAUSE, rate, rate);
        let t = 2 + 4 * (10 * HZ) / 1024;
        assert_eq!(pages, rate * t / pow2up(HZ));
        assert_eq!(mp, (1 + t / 2) * JIFFY);
        // 100 writers: under 32 pages per target pause -> 32 pages at max_pause
        let rate = bw / 100;
        let (mp, pages) = bdi_min_pause(bw, MAX_PAUSE, rate, rate);
        assert_eq!(pages, DIRTY_POLL_THRESH);
        assert_eq!(mp, (1 + (HZ * 32 / rate) / 2) * JIFFY);
        // a task rate far under the base rate: the next pause must fit max_pause
        let (mp, pages) = bdi_min_pause(bw, MAX_PAUSE, 100, bw);
        assert_eq!(pages, 100 * 50 / pow2up(HZ));
        assert_eq!(mp, 50 * JIFFY);
    }

    /// §5.6: the target pause is at most `1 + max_pause / 2`; a short `max_pause` (a bdi
    /// with few dirty pages) caps it below the writers' target.
    #[test]
    fn a_short_max_pause_caps_the_target_pause_at_half_plus_one() {
        // 256 MiB/s of bandwidth, 4 096 pages/s per task (16 writers): a target of
        // 2 + 4 * 2500 / 1024 = 11 jiffies, capped at 1 + 4 / 2 = 3 by a 4-jiffy max_pause.
        let (bw, rate) = (1 << 16, 4_096);
        let max_pause = 4 * JIFFY;
        let t = 3;
        let pages = rate * t / pow2up(HZ);
        assert!(pages >= DIRTY_POLL_THRESH);
        assert_eq!(
            bdi_min_pause(bw, max_pause, rate, rate),
            ((1 + t / 2) * JIFFY, pages)
        );
        // With the 200 ms max_pause the 11 jiffies stand.
        let t = 2 + 4 * (10 * HZ) / 1024;
        assert_eq!(t, 11);
        assert_eq!(
            bdi_min_pause(bw, MAX_PAUSE, rate, rate),
            ((1 + t / 2) * JIFFY, rate * t / pow2up(HZ))
        );
    }

    /// §5.6: a base rate too slow to dirty 32 pages in the target pause gets a pause of
    /// `max_pause` and whatever it dirties in it, cut to 32 pages (and the pause with them)
    /// only when it is strictly more; the next pause at `task_rate` is re-fitted only when
    /// it would be strictly longer than `max_pause`.
    #[test]
    fn slow_writers_pause_up_to_max_pause_and_the_next_pause_must_fit_it() {
        let bw = INIT_BW;
        let mp = MAX_PAUSE_J;
        let hz2 = pow2up(HZ);
        // 100 pages/s: 19 pages in max_pause, under 32: min_pause is the whole pause.
        let rate = 100;
        assert!(rate * mp / hz2 < DIRTY_POLL_THRESH);
        assert_eq!(
            bdi_min_pause(bw, MAX_PAUSE, rate, rate),
            (mp * JIFFY, rate * mp / hz2)
        );
        // 164 pages/s dirty exactly 32 pages in max_pause: kept at max_pause, and half of
        // it (plus one) is the minimum pause.
        let rate = 164;
        assert_eq!(rate * mp / hz2, DIRTY_POLL_THRESH);
        assert_eq!(
            bdi_min_pause(bw, MAX_PAUSE, rate, rate),
            ((1 + mp / 2) * JIFFY, DIRTY_POLL_THRESH)
        );
        // 170 pages/s: 33 pages, cut to 32 in HZ * 32 / 170 = 47 jiffies.
        let rate = 170;
        let t = HZ * DIRTY_POLL_THRESH / rate;
        assert_eq!(t, 47);
        assert_eq!(
            bdi_min_pause(bw, MAX_PAUSE, rate, rate),
            ((1 + t / 2) * JIFFY, DIRTY_POLL_THRESH)
        );
        // A base rate that dirties exactly 32 pages in the 2-jiffy target is not pushed.
        let rate = 16 * hz2;
        assert_eq!(rate * 2 / hz2, DIRTY_POLL_THRESH);
        assert_eq!(
            bdi_min_pause(rate, MAX_PAUSE, rate, rate),
            (2 * JIFFY, DIRTY_POLL_THRESH)
        );
        // The next pause of 32 pages at task_rate: 250 * 32 / (156 + 1) = 50 jiffies fits
        // max_pause exactly; at 155 it is 51 and the pages are cut to what 155 pages/s
        // dirties in max_pause.
        let rate = 164;
        assert_eq!(HZ * DIRTY_POLL_THRESH / (156 + 1), mp);
        assert_eq!(
            bdi_min_pause(bw, MAX_PAUSE, 156, rate),
            ((1 + mp / 2) * JIFFY, DIRTY_POLL_THRESH)
        );
        assert_eq!(
            bdi_min_pause(bw, MAX_PAUSE, 155, rate),
            (mp * JIFFY, 155 * mp / hz2)
        );
    }

    #[test]
    fn freerun_poll_interval_is_the_square_root_of_the_headroom() {
        assert_eq!(dirty_poll_interval(0, 256), 16); // 1 MiB -> 64 KiB
        assert_eq!(dirty_poll_interval(0, 16_384), 128); // 64 MiB
        assert_eq!(dirty_poll_interval(0, 262_144), 512); // 1 GiB
        assert_eq!(dirty_poll_interval(1_000, 1_000 + 1_023), 16); // floor of log2
        assert_eq!(dirty_poll_interval(5, 5), 1);
        assert_eq!(dirty_poll_interval(9, 5), 1);
    }

    // ---- §5.2 loop body ---------------------------------------------------------------

    fn input(now: Nanos, dirty: u64) -> BdpInput {
        let (thresh, bg, ..) = region();
        BdpInput {
            now,
            nr_reclaimable: dirty,
            nr_writeback: 0,
            bg_thresh: bg,
            thresh,
            bdi_thresh: thresh,
            bdi_reclaimable: dirty,
            bdi_writeback: 0,
            bdi_dirtied: 0,
            bdi_written: 0,
            bdi_stat_error: bdi_stat_error(4),
            writeback_in_progress: true,
        }
    }

    #[test]
    fn freerun_resets_the_task_and_sets_the_sqrt_poll_interval() {
        let (thresh, _, freerun, ..) = region();
        let now = 50 * SEC + 3 * MSEC;
        let mut task = DirtyTask {
            nr_dirtied: 40,
            nr_dirtied_pause: 32,
            dirty_paused_when: 0,
            ..Default::default()
        };
        let mut bdi = BdiBandwidth::new(0);
        let mut g = GlobalDirtyLimit::default();
        let mut call = BalanceDirtyPages::new(now, 40);
        let d = call.iterate(&mut task, &mut bdi, &mut g, &input(now, freerun));
        let want = dirty_poll_interval(freerun, thresh);
        assert_eq!(
            d,
            BdpDecision::FreeRun {
                nr_dirtied_pause: want
            }
        );
        assert_eq!(want, 1 << (ilog2(thresh - freerun) / 2));
        assert_eq!(
            task,
            DirtyTask {
                nr_dirtied: 0,
                nr_dirtied_pause: want,
                dirty_paused_when: 50 * SEC,
                ..Default::default()
            }
        );
        assert!(!d.kick_flusher());
        assert_eq!(bdi, BdiBandwidth::new(0), "freerun does not touch the bdi");
    }

    #[test]
    fn pause_is_clipped_to_max_pause_and_part_of_the_debt_is_remembered() {
        let (_, _, _, setpoint, _) = region();
        let now = 100 * SEC;
        let mut bdi = BdiBandwidth::new(now);
        bdi.dirty_ratelimit = 1_000;
        let mut g = GlobalDirtyLimit::default();
        // 1 000 pages at ~1 000 pages/s = 1 s of debt, no think time
        let mut task = DirtyTask {
            nr_dirtied: 1_000,
            nr_dirtied_pause: 1_000,
            dirty_paused_when: now,
            ..Default::default()
        };
        let mut call = BalanceDirtyPages::new(now, 1_000);
        match call.iterate(&mut task, &mut bdi, &mut g, &input(now, setpoint)) {
            BdpDecision::Sleep { pause, again, t } => {
                assert_eq!(pause, MAX_PAUSE);
                assert!(!again);
                assert!(t.period > MAX_PAUSE * 2);
                assert_eq!(t.task_ratelimit, (1_000 * t.pos_ratio) >> 10);
                // now + min(pause - max, max) + max
                assert_eq!(task.dirty_paused_when, now + 2 * MAX_PAUSE);
                assert_eq!(
                    (task.nr_dirtied, task.nr_dirtied_pause),
                    (0, t.nr_dirtied_pause)
                );
            }
            d => panic!("{d:?}"),
        }
        // a small pool bounds the pause further
        let mut task = DirtyTask {
            nr_dirtied: 1_000,
            nr_dirtied_pause: 1_000,
            dirty_paused_when: now,
            ..Default::default()
        };
        let mut i = input(now, setpoint);
        i.bdi_thresh = 8_000;
        i.bdi_reclaimable = 4_000;
        let mut bdi = BdiBandwidth::new(now);
        bdi.dirty_ratelimit = 1_000;
        match BalanceDirtyPages::new(now, 1_000).iterate(&mut task, &mut bdi, &mut g, &i) {
            BdpDecision::Sleep { pause, .. } => assert_eq!(pause, bdi_max_pause(4_000, INIT_BW)),
            d => panic!("{d:?}"),
        }
    }

    #[test]
    fn pauses_under_min_pause_are_skipped_and_the_period_carried_forward() {
        let (_, _, _, setpoint, _) = region();
        let now = 100 * SEC;
        let mut bdi = BdiBandwidth::new(now);
        let mut g = GlobalDirtyLimit::default();
        // 200 pages at ~25 600 pages/s: period 1 jiffy, under min_pause (2 jiffies)
        let mut task = DirtyTask {
            nr_dirtied: 200,
            nr_dirtied_pause: 200,
            dirty_paused_when: now,
            ..Default::default()
        };
        let d = BalanceDirtyPages::new(now, 200).iterate(
            &mut task,
            &mut bdi,
            &mut g,
            &input(now, setpoint),
        );
        let BdpDecision::NoSleep(t) = d else {
            panic!("{d:?}")
        };
        assert_eq!(t.period, JIFFY);
        assert_eq!(t.min_pause, 2 * JIFFY);
        assert_eq!(
            task.dirty_paused_when,
            now + JIFFY,
            "the unpaid period is carried"
        );
        assert_eq!(task.nr_dirtied, 0);
        // the same again without time passing: now the debt is 2 jiffies -> sleep
        task.nr_dirtied = 200;
        let d = BalanceDirtyPages::new(now, 200).iterate(
            &mut task,
            &mut bdi,
            &mut g,
            &input(now, setpoint),
        );
        let BdpDecision::Sleep { pause, .. } = d else {
            panic!("{d:?}")
        };
        assert_eq!(pause, 2 * JIFFY);
        assert_eq!(task.dirty_paused_when, now + 2 * JIFFY);
    }

    #[test]
    fn think_time_is_credited_and_more_than_1_s_of_it_is_forgotten() {
        let (_, _, _, setpoint, _) = region();
        let now = 100 * SEC;
        let mut g = GlobalDirtyLimit::default();
        let mut bdi = BdiBandwidth::new(now);
        bdi.dirty_ratelimit = 2_560;
        // 32 pages at ~2 557 pages/s = 3 jiffies; the task computed for 2 jiffies
        let mut task = DirtyTask {
            nr_dirtied: 32,
            nr_dirtied_pause: 32,
            dirty_paused_when: now - 2 * JIFFY,
            ..Default::default()
        };
        let d = BalanceDirtyPages::new(now, 32).iterate(
            &mut task,
            &mut bdi,
            &mut g,
            &input(now, setpoint),
        );
        let BdpDecision::NoSleep(t) = d else {
            panic!("{d:?}")
        };
        assert_eq!(t.raw_pause, JIFFY as i64);
        assert_eq!(task.dirty_paused_when, now + JIFFY);
        // 3 s of think time: the credit is dropped, the clock restarts at now
        let mut task = DirtyTask {
            nr_dirtied: 32,
            nr_dirtied_pause: 32,
            dirty_paused_when: now - 3 * SEC,
            ..Default::default()
        };
        let d = BalanceDirtyPages::new(now, 32).iterate(
            &mut task,
            &mut bdi,
            &mut g,
            &input(now, setpoint),
        );
        assert!(matches!(d, BdpDecision::NoSleep(_)));
        assert_eq!(task.dirty_paused_when, now);
        // a zero period (too few pages): the poll interval grows instead
        let mut task = DirtyTask {
            nr_dirtied: 4,
            nr_dirtied_pause: 4,
            dirty_paused_when: 0,
            ..Default::default()
        };
        BalanceDirtyPages::new(now, 4).iterate(&mut task, &mut bdi, &mut g, &input(now, setpoint));
        assert_eq!(task.nr_dirtied_pause, 8);
        assert_eq!(task.nr_dirtied, 4);
    }

    #[test]
    fn at_the_limit_tasks_sleep_max_pause_and_loop_until_the_bdi_drains() {
        let (_, _, _, _, limit) = region();
        let now = 100 * SEC;
        let mut bdi = BdiBandwidth::new(now);
        let mut g = GlobalDirtyLimit::default();
        let mut task = DirtyTask {
            nr_dirtied: 32,
            ..Default::default()
        };
        let mut call = BalanceDirtyPages::new(now, 32);
        let mut i = input(now, limit);
        i.writeback_in_progress = false;
        let d = call.iterate(&mut task, &mut bdi, &mut g, &i);
        let BdpDecision::Sleep { pause, again, t } = d else {
            panic!("{d:?}")
        };
        assert_eq!((t.pos_ratio, t.task_ratelimit), (0, 0));
        assert_eq!(pause, t.max_pause);
        assert!(again);
        assert!(d.kick_flusher());
        assert!(!t.dirty_exceeded, "dirty == thresh is not over");
        // over both limits: dirty_exceeded
        let i2 = BdpInput {
            nr_reclaimable: limit + 10,
            bdi_reclaimable: limit + 10,
            ..i
        };
        let d = call.iterate(&mut task, &mut bdi, &mut g, &i2);
        assert!(matches!(d, BdpDecision::Sleep { again: true, .. }));
        assert!(bdi.dirty_exceeded);
        // this bdi holds almost nothing of it: let its writer trickle through
        let i3 = BdpInput {
            bdi_reclaimable: 50,
            ..i2
        };
        let d = call.iterate(&mut task, &mut bdi, &mut g, &i3);
        assert!(
            matches!(d, BdpDecision::Sleep { again: false, .. }),
            "{d:?}"
        );
        // the call ends over the limit: the flag stays; the flusher is running
        assert!(!call.finish(&mut bdi, true, false));
        assert!(
            !bdi.dirty_exceeded,
            "last iteration was not over the bdi share"
        );
    }

    #[test]
    fn finish_clears_dirty_exceeded_and_starts_background_writeback_over_bg() {
        let (_, bg, freerun, ..) = region();
        let mut bdi = BdiBandwidth::new(0);
        bdi.dirty_exceeded = true;
        let mut g = GlobalDirtyLimit::default();
        let mut task = DirtyTask::default();
        let mut call = BalanceDirtyPages::new(SEC, 32);
        call.iterate(&mut task, &mut bdi, &mut g, &input(SEC, freerun));
        assert!(
            call.finish(&mut bdi, false, false),
            "freerun but over bg, flusher idle"
        );
        assert!(!bdi.dirty_exceeded);
        assert!(!call.finish(&mut bdi, false, true), "laptop mode");
        assert!(!call.finish(&mut bdi, true, false), "already running");
        let mut call = BalanceDirtyPages::new(SEC, 32);
        call.iterate(&mut task, &mut bdi, &mut g, &input(SEC, bg));
        assert!(!call.finish(&mut bdi, false, false), "not over bg");
        assert!(should_start_background_writeback(bg + 1, bg, false, false));
        assert!(over_bground_thresh(bg + 1, bg, 0, 10));
        assert!(over_bground_thresh(0, bg, 11, 10));
        assert!(!over_bground_thresh(bg, bg, 10, 10));
    }

    // ---- §5.1 entry -------------------------------------------------------------------

    #[test]
    fn entry_hook_calls_in_after_nr_dirtied_pause_pages_or_8_when_exceeded() {
        let mut task = DirtyTask::default();
        let mut cpu = CpuDirtyCounters::default();
        for k in 1..=32 {
            task_dirtied(&mut task, &mut cpu);
            let r = ratelimit_exceeded(&mut task, &mut cpu, false, 1_000);
            assert_eq!(r, (k == 32).then_some(32));
        }
        assert_eq!(cpu.bdp_ratelimits, 0, "reset when the task calls in");
        let mut task = DirtyTask::default();
        for _ in 0..8 {
            task_dirtied(&mut task, &mut cpu);
        }
        assert_eq!(
            ratelimit_exceeded(&mut task, &mut cpu, true, 1_000),
            Some(8)
        );
    }

    #[test]
    fn entry_hook_safety_net_and_leaked_pages_of_exited_tasks() {
        let mut cpu = CpuDirtyCounters {
            bdp_ratelimits: 16,
            dirty_throttle_leaks: 0,
        };
        let mut task = DirtyTask {
            nr_dirtied: 1,
            ..Default::default()
        };
        assert_eq!(ratelimit_exceeded(&mut task, &mut cpu, false, 16), Some(1));
        assert_eq!(cpu.bdp_ratelimits, 0);
        // an exited task left 100 pages; the next writer picks up what fits its allowance
        dirty_throttle_exit(
            &DirtyTask {
                nr_dirtied: 100,
                ..Default::default()
            },
            &mut cpu,
        );
        let mut task = DirtyTask {
            nr_dirtied: 1,
            ..Default::default()
        };
        assert_eq!(
            ratelimit_exceeded(&mut task, &mut cpu, false, 1_000),
            Some(32)
        );
        assert_eq!(cpu.dirty_throttle_leaks, 100 - 31);
    }

    // ---- the module doc's worked example ----------------------------------------------

    #[test]
    fn worked_example_one_writer_dirty_ratio_20_on_1_gib() {
        let d = Dirtyable {
            free_pages: 30_000,
            file_lru: 210_000,
            anon_lru: 15_000,
            nr_swap_pages: 0,
            dirty_balance_reserve: 3_000,
            highmem_dirtyable: 0,
        };
        assert!(d.free_pages + d.file_lru + d.anon_lru <= GIB_PAGES);
        let dirtyable = global_dirtyable_memory(&d);
        assert_eq!(dirtyable, 237_001);
        let (bg, thresh) = global_dirty_limits(dirtyable, &sysctls(), false);
        assert_eq!((bg, thresh), (23_700, 47_400));
        let freerun = dirty_freerun_ceiling(thresh, bg);
        assert_eq!((freerun, dirty_setpoint(freerun, thresh)), (35_550, 41_475));

        let now = 100 * SEC;
        let mut bdi = BdiBandwidth::new(now);
        bdi.write_bandwidth = 2_560;
        bdi.avg_write_bandwidth = 2_560;
        bdi.dirty_ratelimit = 2_560;
        bdi.balanced_dirty_ratelimit = 2_560;
        let mut g = GlobalDirtyLimit::default();
        let mut task = DirtyTask {
            nr_dirtied: 32,
            nr_dirtied_pause: 32,
            dirty_paused_when: now,
            ..Default::default()
        };
        let i = BdpInput {
            now,
            nr_reclaimable: 41_475 - 4_000,
            nr_writeback: 4_000,
            bg_thresh: bg,
            thresh,
            bdi_thresh: thresh,
            bdi_reclaimable: 41_475 - 4_000,
            bdi_writeback: 4_000,
            bdi_dirtied: 0,
            bdi_written: 0,
            bdi_stat_error: bdi_stat_error(4),
            writeback_in_progress: true,
        };
        let d = BalanceDirtyPages::new(now, 32).iterate(&mut task, &mut bdi, &mut g, &i);
        let BdpDecision::Sleep { pause, again, t } = d else {
            panic!("{d:?}")
        };
        assert_eq!(
            (t.setpoint, t.pos_ratio, t.task_ratelimit),
            (41_475, 1023, 2_557)
        );
        assert_eq!(t.task_ratelimit, (2_560 * 1023) >> 10);
        assert_eq!(
            (t.max_pause, t.min_pause, t.nr_dirtied_pause),
            (200 * MSEC, 8 * MSEC, 32)
        );
        assert_eq!(pause, (HZ * 32 / 2_557) * JIFFY);
        assert_eq!(pause, 12 * MSEC);
        assert!(!again);
        assert_eq!(task.dirty_paused_when, now + 12 * MSEC);
    }
}
