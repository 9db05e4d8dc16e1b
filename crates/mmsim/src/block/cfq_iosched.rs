//! CFQ, the Completely Fair Queueing IO scheduler (`block/cfq-iosched.c`, 3.0 and 3.9),
//! as `kernel-cfq.md` §3–§8 describes it.
//!
//! # What is modelled
//!
//! * **Queues** (§3.2): one sync queue per io context (the submitting task) and one async
//!   queue shared by every task (the device's BE/4 `async_cfqq`). A request goes to the
//!   queue of its class ([`Class`]) and io context.
//! * **Service trees by workload type** (§3.3, §4.3): ASYNC, SYNC_NOIDLE and SYNC, keyed by
//!   `now + cfq_slice_offset − slice_resid`, or leftmost − HZ on preemption.
//! * **Workload choice and slices** (§5.2): the tree whose first queue has the lowest key,
//!   for `target_latency · count / busy` (async: also capped by the async share and scaled
//!   by `slice_async / slice_sync`), kept until it expires or its tree empties; the
//!   workload state is saved and restored across queue switches (`cfq_group_served`,
//!   `cfq_choose_cfqg`).
//! * **Queue slices** (§5.3): `slice_sync` / `slice_async`, scaled to the target latency by
//!   the busy-queue average with `low_latency`, started at the first completion; an async
//!   queue also expires after `2 · 2 · slice_async_rq` dispatches when others are busy
//!   (§6.2).
//! * **Idling** (§3.4, §7): think time per io context, per service tree and for the group;
//!   seekiness from a 32-request history; the idle window; idling for a SYNC queue and for
//!   the last SYNC_NOIDLE queue of its tree; group idling when one queue is busy; the idle
//!   timer (§7.3). The timer is reported by [`Cfq::next_timer`] and run lazily when the
//!   queue is next called at or after its expiry (the device task sleeps until then).
//! * **Dispatch** (§6.2, §6.3): one request per call; `cfq_check_fifo` once per slice;
//!   `cfq_may_dispatch` with the drain-before-idle rule, no async while sync is in flight,
//!   `quantum`, and the async depth ramp from `last_delayed_sync`.
//! * **Order within a queue** (§4.2): `cfq_choose_req` with `back_seek_max` and
//!   `back_seek_penalty`, sync before async.
//! * **Preemption** (§8): the BE rules of `cfq_should_preempt` and `cfq_preempt_queue`.
//! * **`cfq_may_queue`** (§2.2): an idling queue's task may allocate past a full pool once
//!   per slice.
//! * **Merging** (§3.2, `cfq_allow_merge`): a bio merges only into a request of the queue it
//!   would go to (never a sync bio into an async request).
//!
//! # Left out
//!
//! * I/O priority classes and levels: every queue is best-effort level 4 (there is no
//!   `ionice` or nice in the simulator), so the RT and IDLE classes, `CFQ_IDLE_DELAY`,
//!   `REQ_PRIO`/`REQ_META` boosting and the per-priority async queues are absent.
//! * Groups (blkio cgroups): only the root group exists, so vdisktime and weights have no
//!   effect, and `wait_busy` (which only extends a lone queue's slice for group fairness)
//!   is not modelled.
//! * Close cooperators and queue merging/splitting (§7.4); IOPS mode (`slice_idle = 0`
//!   with NCQ).
//! * NCQ detection (§6.4): `hw_tag` is set from the device's queue depth (at least
//!   `CFQ_HW_QUEUE_MIN`) instead of being measured, because the simulator's driver tasks
//!   hold at most `depth` requests and a depth-1 disk would never look queued.
//! * Timers are in nanoseconds, not jiffies: the defaults are the HZ=250 jiffy values
//!   (e.g. `fifo_expire_sync` = 31 jiffies = 124 ms) and comparisons are exact, not
//!   rounded to a tick.
//! * `REQ_NOIDLE` is inferred: a sync write is `WRITE_SYNC` (fsync, WB_SYNC_ALL), which
//!   carries it; the simulator has no O_DIRECT writes (`WRITE_ODIRECT`, no NOIDLE).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::{Class, Dir, IoContext, ReqId, ReqMap, Request, SECTOR_SIZE};
use crate::engine::{Nanos, JIFFY};

/// `HZ` at 250 ticks a second: one second.
const HZ: Nanos = 250 * JIFFY;
/// `cfq_quantum` = 8 (`block/cfq-iosched.c`).
pub const CFQ_QUANTUM: u32 = 8;
/// `cfq_fifo_expire[1]` = HZ/8: 31 jiffies = 124 ms at HZ=250.
pub const CFQ_FIFO_EXPIRE_SYNC: Nanos = (250 / 8) * JIFFY;
/// `cfq_fifo_expire[0]` = HZ/4: 62 jiffies = 248 ms at HZ=250.
pub const CFQ_FIFO_EXPIRE_ASYNC: Nanos = (250 / 4) * JIFFY;
/// `cfq_back_max` = 16 MiB, in sectors.
pub const CFQ_BACK_MAX_SECTORS: u64 = 16 * 1024 * 2;
/// `cfq_back_penalty` = 2.
pub const CFQ_BACK_PENALTY: u64 = 2;
/// `cfq_slice_sync` = HZ/10: 25 jiffies = 100 ms.
pub const CFQ_SLICE_SYNC: Nanos = (250 / 10) * JIFFY;
/// `cfq_slice_async` = HZ/25: 10 jiffies = 40 ms.
pub const CFQ_SLICE_ASYNC: Nanos = (250 / 25) * JIFFY;
/// `cfq_slice_async_rq` = 2.
pub const CFQ_SLICE_ASYNC_RQ: u32 = 2;
/// `cfq_slice_idle` = HZ/125: 2 jiffies = 8 ms.
pub const CFQ_SLICE_IDLE: Nanos = (250 / 125) * JIFFY;
/// `cfq_group_idle` = HZ/125: 8 ms.
pub const CFQ_GROUP_IDLE: Nanos = (250 / 125) * JIFFY;
/// `cfq_target_latency` = HZ·3/10: 75 jiffies = 300 ms.
pub const CFQ_TARGET_LATENCY: Nanos = (250 * 3 / 10) * JIFFY;
/// `CFQ_SLICE_SCALE` = 5.
const CFQ_SLICE_SCALE: Nanos = 5;
/// `CFQ_MIN_TT` = 2 jiffies.
const CFQ_MIN_TT: Nanos = 2 * JIFFY;
/// `CFQ_HW_QUEUE_MIN` = 5.
pub const CFQ_HW_QUEUE_MIN: u32 = 5;
/// `CFQQ_SEEK_THR` = 8 · 100 sectors.
const CFQQ_SEEK_THR: u64 = 800;
/// `CFQQ_SECT_THR_NONROT` = 2 · 32 sectors.
const CFQQ_SECT_THR_NONROT: u32 = 64;
/// `CFQQ_CLOSE_THR` = 8 · 1024 sectors (4 MiB).
const CFQQ_CLOSE_THR: u64 = 8 * 1024;
/// `cfq_hist_divisor` = 4.
const CFQ_HIST_DIVISOR: u32 = 4;
/// `IOPRIO_BE_NR` = 8 and `IOPRIO_NORM` = 4: every queue here is BE/4.
const IOPRIO_BE_NR: u32 = 8;
const IOPRIO_NORM: u32 = 4;
/// `PAGE_CACHE_SIZE`.
const PAGE_SIZE: u64 = 4096;

/// The CFQ sysfs tunables (`/sys/block/*/queue/iosched/`), kernel defaults at HZ=250
/// (`kernel-cfq.md` §3.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CfqTunables {
    pub quantum: u32,
    pub fifo_expire_sync: Nanos,
    pub fifo_expire_async: Nanos,
    /// `back_seek_max`, in sectors.
    pub back_seek_max: u64,
    pub back_seek_penalty: u64,
    pub slice_sync: Nanos,
    pub slice_async: Nanos,
    pub slice_async_rq: u32,
    pub slice_idle: Nanos,
    pub group_idle: Nanos,
    pub low_latency: bool,
    pub target_latency: Nanos,
}

impl Default for CfqTunables {
    fn default() -> Self {
        CfqTunables {
            quantum: CFQ_QUANTUM,
            fifo_expire_sync: CFQ_FIFO_EXPIRE_SYNC,
            fifo_expire_async: CFQ_FIFO_EXPIRE_ASYNC,
            back_seek_max: CFQ_BACK_MAX_SECTORS,
            back_seek_penalty: CFQ_BACK_PENALTY,
            slice_sync: CFQ_SLICE_SYNC,
            slice_async: CFQ_SLICE_ASYNC,
            slice_async_rq: CFQ_SLICE_ASYNC_RQ,
            slice_idle: CFQ_SLICE_IDLE,
            group_idle: CFQ_GROUP_IDLE,
            low_latency: true,
            target_latency: CFQ_TARGET_LATENCY,
        }
    }
}

/// Workload type of a queue (`enum wl_type_t`), the index of its service tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Workload {
    Async = 0,
    SyncNoidle = 1,
    Sync = 2,
}

const WORKLOADS: [Workload; 3] = [Workload::Async, Workload::SyncNoidle, Workload::Sync];

/// A think-time record (`struct cfq_ttime`).
#[derive(Clone, Copy, Debug, Default)]
struct ThinkTime {
    last_end_request: Nanos,
    samples: u64,
    total: u64,
    mean: Nanos,
}

impl ThinkTime {
    /// `__cfq_update_io_thinktime`: a decaying average of the gap between the last
    /// completion and this request, capped at `2 · slice_idle`.
    fn update(&mut self, now: Nanos, slice_idle: Nanos) {
        let elapsed = now
            .saturating_sub(self.last_end_request)
            .min(2 * slice_idle);
        self.samples = (7 * self.samples + 256) / 8;
        self.total = (7 * self.total + 256 * elapsed) / 8;
        self.mean = (self.total + 128) / self.samples;
    }

    /// `sample_valid`.
    fn valid(&self) -> bool {
        self.samples > 80
    }

    /// `cfq_io_thinktime_big`.
    fn big(&self, limit: Nanos) -> bool {
        self.valid() && self.mean > limit
    }
}

/// One service tree: queues ordered by (key, insertion sequence).
#[derive(Debug, Default)]
struct ServiceTree {
    rb: BTreeSet<(i64, u64, usize)>,
    ttime: ThinkTime,
}

impl ServiceTree {
    fn first(&self) -> Option<(i64, usize)> {
        self.rb.first().map(|&(k, _, q)| (k, q))
    }
    fn count(&self) -> usize {
        self.rb.len()
    }
}

/// A `cfq_queue`.
#[derive(Debug)]
struct CfqQueue {
    sync: bool,
    /// Requests by (sector, id): `sort_list`.
    sort: BTreeSet<(u64, ReqId)>,
    /// Requests in arrival order; their expiry is in [`CfqRq::fifo_time`].
    fifo: VecDeque<ReqId>,
    next_rq: Option<ReqId>,
    dispatched: u32,
    on_rr: bool,
    /// Position on a service tree: (workload, key, sequence).
    tree: Option<(Workload, i64, u64)>,
    slice_start: Nanos,
    slice_end: Nanos,
    slice_resid: i64,
    slice_dispatch: u32,
    wait_request: bool,
    must_dispatch: bool,
    must_alloc_slice: bool,
    fifo_expire: bool,
    idle_window: bool,
    slice_new: bool,
    deep: bool,
    seek_history: u32,
    last_request_pos: u64,
    /// The io context's think time (`cic->ttime`); sync queues only.
    ttime: ThinkTime,
}

impl CfqQueue {
    fn new(sync: bool, now: Nanos) -> Self {
        CfqQueue {
            sync,
            sort: BTreeSet::new(),
            fifo: VecDeque::new(),
            next_rq: None,
            dispatched: 0,
            on_rr: false,
            tree: None,
            slice_start: 0,
            slice_end: 0,
            slice_resid: 0,
            slice_dispatch: 0,
            wait_request: false,
            must_dispatch: false,
            must_alloc_slice: false,
            fifo_expire: false,
            // cfq_init_cfqq: a new sync queue starts with the idle window on.
            idle_window: sync,
            slice_new: false,
            deep: false,
            seek_history: 0,
            last_request_pos: 0,
            ttime: ThinkTime {
                last_end_request: now,
                ..ThinkTime::default()
            },
        }
    }

    /// `CFQQ_SEEKY`: more than 4 of the last 32 requests were seeks.
    fn seeky(&self) -> bool {
        self.seek_history.count_ones() > 4
    }

    /// `cfqq_type`.
    fn workload(&self) -> Workload {
        match (self.sync, self.idle_window) {
            (false, _) => Workload::Async,
            (true, true) => Workload::Sync,
            (true, false) => Workload::SyncNoidle,
        }
    }

    fn is_empty(&self) -> bool {
        self.sort.is_empty()
    }

    /// `cfq_slice_used`.
    fn slice_used(&self, now: Nanos) -> bool {
        !self.slice_new && now >= self.slice_end
    }
}

/// CFQ's view of one request.
#[derive(Clone, Copy, Debug)]
struct CfqRq {
    queue: usize,
    sector: u64,
    nr_sectors: u32,
    sync: bool,
    noidle: bool,
    start_time: Nanos,
    fifo_time: Nanos,
}

/// One CFQ instance (`struct cfq_data` with its root `cfq_group`).
#[derive(Debug)]
pub(crate) struct Cfq {
    t: CfqTunables,
    nonrot: bool,
    hw_tag: bool,
    queues: Vec<CfqQueue>,
    /// Sync queue of each io context (`cic->cfqq[SYNC]`).
    sync_queues: BTreeMap<IoContext, usize>,
    /// The shared BE/4 async queue: index 0.
    reqs: ReqMap<CfqRq>,
    trees: [ServiceTree; 3],
    tree_seq: u64,
    active: Option<usize>,
    /// Whether the active queue has dispatched in this slice (`active_cic` is set).
    active_cic: bool,
    serving: Workload,
    /// Signed: a fresh choice sets it to `now − 1`, before boot at time 0.
    workload_expires: i64,
    saved_wl_slice: Nanos,
    saved_wl: Workload,
    busy_queues: u32,
    busy_sync_queues: u32,
    busy_queues_avg: u32,
    group_dispatched: u32,
    group_ttime: ThinkTime,
    rq_queued: u32,
    rq_in_driver: u32,
    rq_in_flight: [u32; 2],
    last_position: u64,
    last_delayed_sync: Nanos,
    idle_timer: Option<Nanos>,
}

const ASYNC_QUEUE: usize = 0;

impl Cfq {
    /// A CFQ instance for a queue; `rotational` is `queue/rotational`, `depth` the number of
    /// requests the device takes at once.
    pub(crate) fn new(t: CfqTunables, rotational: bool, depth: u32) -> Self {
        Cfq {
            t,
            nonrot: !rotational,
            hw_tag: depth >= CFQ_HW_QUEUE_MIN,
            queues: vec![CfqQueue::new(false, 0)],
            sync_queues: BTreeMap::new(),
            reqs: ReqMap::default(),
            trees: Default::default(),
            tree_seq: 0,
            active: None,
            active_cic: false,
            serving: Workload::Async,
            workload_expires: 0,
            saved_wl_slice: 0,
            saved_wl: Workload::Async,
            busy_queues: 0,
            busy_sync_queues: 0,
            busy_queues_avg: 0,
            group_dispatched: 0,
            group_ttime: ThinkTime::default(),
            rq_queued: 0,
            rq_in_driver: 0,
            rq_in_flight: [0; 2],
            last_position: 0,
            // cfq_init_queue: last_delayed_sync = jiffies - HZ.
            last_delayed_sync: 0u64.wrapping_sub(HZ),
            idle_timer: None,
        }
    }

    /// When the idle timer fires, if it is pending.
    pub(crate) fn next_timer(&self) -> Option<Nanos> {
        self.idle_timer
    }

    /// Run the idle timer if it is due: every entry point calls this first, so the timer
    /// takes effect before anything else that happens at or after its expiry.
    fn run_timer(&mut self, now: Nanos) {
        if let Some(at) = self.idle_timer {
            if now >= at {
                self.idle_timer = None;
                self.idle_slice_timer(now);
            }
        }
    }

    fn prio_slice(&self, sync: bool, prio: u32) -> Nanos {
        let base = if sync {
            self.t.slice_sync
        } else {
            self.t.slice_async
        };
        // cfq_prio_slice: base + base/CFQ_SLICE_SCALE · (4 − prio), prio ≤ 4 here.
        base + base / CFQ_SLICE_SCALE * Nanos::from(IOPRIO_NORM - prio)
    }

    /// The queue a request of `class` from `ioc` goes to, created on first use.
    fn queue_for(&mut self, class: Class, ioc: IoContext, now: Nanos) -> usize {
        match class {
            Class::Async => ASYNC_QUEUE,
            Class::Sync => *self.sync_queues.entry(ioc).or_insert_with(|| {
                self.queues.push(CfqQueue::new(true, now));
                self.queues.len() - 1
            }),
        }
    }

    fn busy_in_class(&self) -> u32 {
        self.trees.iter().map(|t| t.count() as u32).sum()
    }

    // -- service trees ------------------------------------------------------------------

    /// `cfq_service_tree_add`.
    fn service_tree_add(&mut self, qi: usize, add_front: bool, now: Nanos) {
        let wl = self.queues[qi].workload();
        let key = if !add_front {
            // cfq_slice_offset: `nr_cfqq - 1` with the group's busy count, in which a queue
            // not yet on a tree is not counted (the int `nr_cfqq - 1` of an empty group is -1).
            let nr_cfqq = i64::from(self.busy_queues) - i64::from(self.queues[qi].tree.is_none());
            let delta =
                self.prio_slice(true, 0) as i64 - self.prio_slice(self.queues[qi].sync, 4) as i64;
            let q = &mut self.queues[qi];
            let key = now as i64 + (nr_cfqq - 1) * delta - q.slice_resid;
            q.slice_resid = 0;
            key
        } else {
            let first = self.trees[wl as usize].first().map(|(k, _)| k);
            first.unwrap_or(now as i64) - HZ as i64
        };
        if let Some((old_wl, old_key, seq)) = self.queues[qi].tree {
            if old_wl == wl && old_key == key {
                return;
            }
            self.trees[old_wl as usize].rb.remove(&(old_key, seq, qi));
        }
        let seq = self.tree_seq;
        self.tree_seq += 1;
        self.trees[wl as usize].rb.insert((key, seq, qi));
        self.queues[qi].tree = Some((wl, key, seq));
    }

    /// `cfq_add_cfqq_rr`.
    fn add_cfqq_rr(&mut self, qi: usize, now: Nanos) {
        self.queues[qi].on_rr = true;
        self.busy_queues += 1;
        if self.queues[qi].sync {
            self.busy_sync_queues += 1;
        }
        self.service_tree_add(qi, false, now);
    }

    /// `cfq_del_cfqq_rr`.
    fn del_cfqq_rr(&mut self, qi: usize) {
        let q = &mut self.queues[qi];
        q.on_rr = false;
        if let Some((wl, key, seq)) = q.tree.take() {
            self.trees[wl as usize].rb.remove(&(key, seq, qi));
        }
        self.busy_queues -= 1;
        if self.queues[qi].sync {
            self.busy_sync_queues -= 1;
        }
    }

    /// The tree a queue sits on (or would sit on).
    fn tree_of(&self, qi: usize) -> &ServiceTree {
        let wl = match self.queues[qi].tree {
            Some((wl, _, _)) => wl,
            None => self.queues[qi].workload(),
        };
        &self.trees[wl as usize]
    }

    // -- requests within a queue --------------------------------------------------------

    /// `cfq_choose_req`: which of two requests to serve next from `head`.
    fn choose_req(&self, r1: Option<ReqId>, r2: Option<ReqId>, head: u64) -> Option<ReqId> {
        let (a, b) = match (r1, r2) {
            (None, r) | (r, None) => return r,
            (Some(a), Some(b)) if a == b => return Some(b),
            (Some(a), Some(b)) => (a, b),
        };
        let (ra, rb) = (&self.reqs[&a], &self.reqs[&b]);
        if ra.sync != rb.sync {
            return Some(if ra.sync { a } else { b });
        }
        let back_max = self.t.back_seek_max;
        // Distance from the head: forward as is, a short way back at a penalty, else "wraps".
        let cost = |s: u64| -> Option<u64> {
            if s >= head {
                Some(s - head)
            } else if s + back_max >= head {
                Some((head - s) * self.t.back_seek_penalty)
            } else {
                None
            }
        };
        let (s1, s2) = (ra.sector, rb.sector);
        Some(match (cost(s1), cost(s2)) {
            (Some(d1), Some(d2)) if d1 < d2 => a,
            (Some(d1), Some(d2)) if d2 < d1 => b,
            (Some(_), Some(_)) => {
                if s1 >= s2 {
                    a
                } else {
                    b
                }
            }
            (Some(_), None) => a,
            (None, Some(_)) => b,
            (None, None) => {
                if s1 <= s2 {
                    a
                } else {
                    b
                }
            }
        })
    }

    /// `cfq_find_next_rq`: the best neighbour of `last` in sector order.
    fn find_next_rq(&self, qi: usize, last: ReqId) -> Option<ReqId> {
        let q = &self.queues[qi];
        let key = (self.reqs[&last].sector, last);
        let prev = q.sort.range(..key).next_back().map(|&(_, id)| id);
        let next = q
            .sort
            .range(key..)
            .nth(1)
            .or_else(|| q.sort.first().filter(|&&(_, id)| id != last))
            .map(|&(_, id)| id);
        self.choose_req(next, prev, key.0)
    }

    /// `cfq_add_rq_rb`.
    fn add_rq_rb(&mut self, id: ReqId, now: Nanos) {
        let r = self.reqs[&id];
        self.queues[r.queue].sort.insert((r.sector, id));
        if !self.queues[r.queue].on_rr {
            self.add_cfqq_rr(r.queue, now);
        }
        let cur = self.queues[r.queue].next_rq;
        self.queues[r.queue].next_rq = self.choose_req(cur, Some(id), self.last_position);
    }

    /// `cfq_remove_request`: take a queued request out of its queue.
    fn remove_request(&mut self, id: ReqId) {
        let r = self.reqs[&id];
        let qi = r.queue;
        if self.queues[qi].next_rq == Some(id) {
            self.queues[qi].next_rq = self.find_next_rq(qi, id);
        }
        let q = &mut self.queues[qi];
        if let Some(pos) = q.fifo.iter().position(|&x| x == id) {
            q.fifo.remove(pos);
        }
        q.sort.remove(&(r.sector, id));
        self.rq_queued -= 1;
    }

    // -- insertion ------------------------------------------------------------------------

    /// `cfq_insert_request` for a new request.
    pub(crate) fn add(&mut self, rq: &Request, now: Nanos) {
        self.run_timer(now);
        let qi = self.queue_for(rq.class, rq.ioc, now);
        let sync = rq.class == Class::Sync;
        let fifo_time = now
            + if sync {
                self.t.fifo_expire_sync
            } else {
                self.t.fifo_expire_async
            };
        self.reqs.insert(
            rq.id,
            CfqRq {
                queue: qi,
                sector: rq.sector,
                nr_sectors: rq.nr_sectors,
                sync,
                noidle: sync && rq.dir == Dir::Write,
                start_time: rq.start_time,
                fifo_time,
            },
        );
        self.queues[qi].fifo.push_back(rq.id);
        self.add_rq_rb(rq.id, now);
        self.rq_queued += 1;
        self.rq_enqueued(qi, rq.id, now);
    }

    /// `cfq_rq_enqueued`.
    fn rq_enqueued(&mut self, qi: usize, id: ReqId, now: Nanos) {
        let r = self.reqs[&id];
        let slice_idle = self.t.slice_idle;
        if self.queues[qi].sync {
            self.queues[qi].ttime.update(now, slice_idle);
            let wl = self.queues[qi].tree.map_or(Workload::Sync, |(wl, _, _)| wl);
            self.trees[wl as usize].ttime.update(now, slice_idle);
        }
        self.group_ttime.update(now, self.t.group_idle);
        self.update_io_seektime(qi, &r);
        self.update_idle_window(qi);
        self.queues[qi].last_request_pos = r.sector + u64::from(r.nr_sectors);

        if self.active == Some(qi) {
            if self.queues[qi].wait_request {
                let bytes = u64::from(r.nr_sectors) * SECTOR_SIZE;
                if bytes > PAGE_SIZE || self.busy_queues > 1 {
                    self.idle_timer = None;
                    self.queues[qi].wait_request = false;
                } else {
                    self.queues[qi].must_dispatch = true;
                }
            }
        } else if self.should_preempt(qi, &r, now) {
            self.preempt_queue(qi, now);
        }
    }

    /// `cfq_update_io_seektime`.
    fn update_io_seektime(&mut self, qi: usize, r: &CfqRq) {
        let q = &mut self.queues[qi];
        let dist = if q.last_request_pos != 0 {
            q.last_request_pos.abs_diff(r.sector)
        } else {
            0
        };
        let seek = if self.nonrot {
            r.nr_sectors < CFQQ_SECT_THR_NONROT
        } else {
            dist > CFQQ_SEEK_THR
        };
        q.seek_history = (q.seek_history << 1) | u32::from(seek);
    }

    /// `cfq_update_idle_window`.
    fn update_idle_window(&mut self, qi: usize) {
        let slice_idle = self.t.slice_idle;
        let next_noidle = self.queues[qi]
            .next_rq
            .is_some_and(|n| self.reqs[&n].noidle);
        let q = &mut self.queues[qi];
        if !q.sync {
            return;
        }
        if q.sort.len() >= 4 {
            q.deep = true;
        }
        if next_noidle || slice_idle == 0 || (!q.deep && q.seeky()) {
            q.idle_window = false;
        } else if q.ttime.valid() {
            q.idle_window = q.ttime.mean <= slice_idle;
        }
    }

    /// `cfq_should_preempt` for the BE class and the root group only (§8).
    fn should_preempt(&self, new: usize, r: &CfqRq, now: Nanos) -> bool {
        let Some(ai) = self.active else {
            return false;
        };
        let a = &self.queues[ai];
        // Rule 5: a sync request preempts an async queue.
        if r.sync && !a.sync {
            return true;
        }
        if a.slice_used(now) {
            return true;
        }
        // Rule 8: idling on the SYNC_NOIDLE tree and a second no-idle queue appears.
        let n = &self.queues[new];
        if self.serving == Workload::SyncNoidle
            && n.workload() == Workload::SyncNoidle
            && self.tree_of(new).count() == 2
            && a.is_empty()
        {
            return true;
        }
        if a.is_empty() && !self.should_idle(ai) {
            return true;
        }
        if !self.active_cic || !a.wait_request {
            return false;
        }
        // cfq_rq_close.
        r.sector.abs_diff(self.last_position) <= CFQQ_CLOSE_THR
    }

    /// `cfq_preempt_queue`.
    fn preempt_queue(&mut self, qi: usize, now: Nanos) {
        let old = self.active.map(|a| self.queues[a].workload());
        self.slice_expired(true, now);
        if old != Some(self.queues[qi].workload()) {
            self.saved_wl_slice = 0;
        }
        self.service_tree_add(qi, true, now);
        self.queues[qi].slice_end = 0;
        self.queues[qi].slice_new = true;
    }

    // -- merging ---------------------------------------------------------------------------

    /// `cfq_allow_merge`: may a bio of `class` from `ioc` merge into queued request `id`?
    pub(crate) fn allow_merge(&self, id: ReqId, class: Class, ioc: IoContext) -> bool {
        let r = &self.reqs[&id];
        match class {
            Class::Async => !r.sync,
            Class::Sync => r.sync && self.sync_queues.get(&ioc) == Some(&r.queue),
        }
    }

    /// A front merge moved request `id` to `new_sector` (`cfq_merged_request`).
    pub(crate) fn front_merged(&mut self, id: ReqId, new_sector: u64, nr_sectors: u32) {
        let r = self.reqs.get_mut(&id).expect("merged request is queued");
        let (qi, old) = (r.queue, r.sector);
        r.sector = new_sector;
        r.nr_sectors = nr_sectors;
        self.queues[qi].sort.remove(&(old, id));
        self.queues[qi].sort.insert((new_sector, id));
        let cur = self.queues[qi].next_rq;
        self.queues[qi].next_rq = self.choose_req(cur, Some(id), self.last_position);
    }

    /// A back merge grew request `id`.
    pub(crate) fn back_merged(&mut self, id: ReqId, nr_sectors: u32) {
        self.reqs
            .get_mut(&id)
            .expect("merged request is queued")
            .nr_sectors = nr_sectors;
    }

    /// `cfq_merged_requests`: `gone` was appended to `keep` and leaves.
    pub(crate) fn merged_requests(&mut self, keep: ReqId, gone: ReqId, nr_sectors: u32) {
        let (k, g) = (self.reqs[&keep], self.reqs[&gone]);
        if k.queue == g.queue && g.fifo_time < k.fifo_time {
            // Move `keep` to `gone`'s place in the fifo, with its expiry.
            let q = &mut self.queues[k.queue];
            if let Some(pos) = q.fifo.iter().position(|&x| x == keep) {
                q.fifo.remove(pos);
            }
            let at = q.fifo.iter().position(|&x| x == gone).unwrap_or(0);
            q.fifo.insert(at, keep);
            self.reqs.get_mut(&keep).expect("kept").fifo_time = g.fifo_time;
        }
        self.reqs.get_mut(&keep).expect("kept").nr_sectors = nr_sectors;
        if k.queue == g.queue && self.queues[g.queue].next_rq == Some(gone) {
            self.queues[g.queue].next_rq = Some(keep);
        }
        self.remove_request(gone);
        self.reqs.remove(&gone);
        let gq = g.queue;
        if self.queues[gq].on_rr && self.queues[gq].is_empty() && self.active != Some(gq) {
            self.del_cfqq_rr(gq);
        }
    }

    // -- may_queue ---------------------------------------------------------------------------

    /// `cfq_may_queue`: `true` is `ELV_MQUEUE_MUST` (allocate even past a full pool), given
    /// once per slice to the task whose queue is idling for its next request.
    pub(crate) fn may_queue(&mut self, class: Class, ioc: IoContext, now: Nanos) -> bool {
        self.run_timer(now);
        let qi = match class {
            Class::Async => ASYNC_QUEUE,
            Class::Sync => match self.sync_queues.get(&ioc) {
                Some(&q) => q,
                None => return false,
            },
        };
        let q = &mut self.queues[qi];
        if q.wait_request && !q.must_alloc_slice {
            q.must_alloc_slice = true;
            return true;
        }
        false
    }

    // -- slices ----------------------------------------------------------------------------

    /// `cfq_group_get_avg_queues`: fast up, slow down.
    fn get_avg_queues(&mut self) -> u32 {
        let busy = self.busy_in_class();
        let (lo, hi) = (
            self.busy_queues_avg.min(busy),
            self.busy_queues_avg.max(busy),
        );
        self.busy_queues_avg =
            ((CFQ_HIST_DIVISOR - 1) * hi + lo + CFQ_HIST_DIVISOR / 2) / CFQ_HIST_DIVISOR;
        self.busy_queues_avg
    }

    /// `cfq_scaled_cfqq_slice`.
    fn scaled_slice(&mut self, qi: usize) -> Nanos {
        let mut slice = self.prio_slice(self.queues[qi].sync, IOPRIO_NORM);
        if self.t.low_latency {
            let iq = Nanos::from(self.get_avg_queues());
            let sync_slice = self.t.slice_sync;
            let expect = sync_slice * iq;
            let group_slice = self.t.target_latency;
            if expect > group_slice {
                let base_low = 2 * self.t.slice_idle;
                let low = slice.min(base_low * slice / sync_slice);
                slice = (slice * group_slice / expect).max(low);
            }
        }
        slice
    }

    /// `cfq_set_prio_slice`: the slice starts at the queue's first completion.
    fn set_prio_slice(&mut self, qi: usize, now: Nanos) {
        let slice = self.scaled_slice(qi);
        let q = &mut self.queues[qi];
        q.slice_start = now;
        q.slice_end = now + slice;
    }

    /// `__cfq_slice_expired`; `timed_out` keeps the unused slice as `slice_resid`.
    fn slice_expired(&mut self, timed_out: bool, now: Nanos) {
        let Some(qi) = self.active else {
            return;
        };
        if self.queues[qi].wait_request {
            self.idle_timer = None;
        }
        self.queues[qi].wait_request = false;
        if timed_out {
            let resid = if self.queues[qi].slice_new {
                self.scaled_slice(qi) as i64
            } else {
                self.queues[qi].slice_end as i64 - now as i64
            };
            self.queues[qi].slice_resid = resid;
        }
        // cfq_group_served: save the workload state of the (only) group.
        self.saved_wl_slice = (self.workload_expires - now as i64).max(0) as Nanos;
        self.saved_wl = self.serving;
        if self.queues[qi].on_rr && self.queues[qi].is_empty() {
            self.del_cfqq_rr(qi);
        }
        if self.queues[qi].on_rr {
            self.service_tree_add(qi, false, now);
        }
        self.active = None;
        self.active_cic = false;
    }

    /// The workload slice of `choose_wl_class_and_type` for a tree of `count` queues.
    fn workload_slice(&self, wl: Workload, count: u32) -> Nanos {
        let group_slice = self.t.target_latency;
        let busy = self.busy_queues_avg.max(self.busy_in_class()).max(1);
        let mut slice = group_slice * Nanos::from(count) / Nanos::from(busy);
        if wl == Workload::Async {
            let busy_async = self.trees[Workload::Async as usize].count() as Nanos;
            let tmp = self.t.target_latency * busy_async / Nanos::from(self.busy_queues.max(1));
            slice = slice.min(tmp);
            slice = slice * self.t.slice_async / self.t.slice_sync;
        } else {
            slice = slice.max(2 * self.t.slice_idle);
        }
        slice.max(CFQ_MIN_TT)
    }

    /// `cfq_choose_cfqg` + `choose_wl_class_and_type` for the root group, BE class.
    fn choose_workload(&mut self, now: Nanos) {
        if self.saved_wl_slice > 0 {
            self.workload_expires = (now + self.saved_wl_slice) as i64;
            self.serving = self.saved_wl;
        } else {
            self.workload_expires = now as i64 - 1;
        }
        let count = self.trees[self.serving as usize].count();
        if count > 0 && now as i64 <= self.workload_expires {
            return;
        }
        // cfq_choose_wl_type: the tree whose first queue has the lowest key.
        let mut best: Option<(i64, Workload)> = None;
        for wl in WORKLOADS {
            if let Some((key, _)) = self.trees[wl as usize].first() {
                if best.is_none_or(|(k, _)| key < k) {
                    best = Some((key, wl));
                }
            }
        }
        self.serving = best.map_or(Workload::SyncNoidle, |(_, wl)| wl);
        let count = self.trees[self.serving as usize].count() as u32;
        self.workload_expires = (now + self.workload_slice(self.serving, count)) as i64;
    }

    /// `cfq_set_active_queue` with the next queue of the serving tree.
    fn set_active_queue(&mut self, now: Nanos) -> Option<usize> {
        self.choose_workload(now);
        let qi = if self.rq_queued == 0 {
            None
        } else {
            self.trees[self.serving as usize].first().map(|(_, q)| q)
        };
        if let Some(qi) = qi {
            let q = &mut self.queues[qi];
            q.slice_start = 0;
            q.slice_end = 0;
            q.slice_dispatch = 0;
            q.wait_request = false;
            q.must_dispatch = false;
            q.must_alloc_slice = false;
            q.fifo_expire = false;
            q.slice_new = true;
            self.idle_timer = None;
        }
        self.active = qi;
        qi
    }

    // -- idling ------------------------------------------------------------------------------

    /// `cfq_should_idle`.
    fn should_idle(&self, qi: usize) -> bool {
        if self.t.slice_idle == 0 {
            return false;
        }
        let q = &self.queues[qi];
        if q.idle_window && !(self.nonrot && self.hw_tag) {
            return true;
        }
        let st = self.tree_of(qi);
        st.count() == 1 && q.sync && !st.ttime.big(self.t.slice_idle)
    }

    /// `cfq_arm_slice_timer` for the active queue, which has just emptied.
    fn arm_slice_timer(&mut self, now: Nanos) {
        let Some(qi) = self.active else {
            return;
        };
        if self.nonrot && self.hw_tag {
            return;
        }
        let mut group_idle = false;
        if !self.should_idle(qi) {
            if self.t.group_idle == 0 {
                return;
            }
            group_idle = true;
        }
        let q = &self.queues[qi];
        if q.dispatched > 0 || !self.active_cic {
            return;
        }
        if q.ttime.valid() && q.slice_end > now && q.slice_end - now < q.ttime.mean {
            return;
        }
        if group_idle && self.busy_queues > 1 {
            return;
        }
        self.queues[qi].wait_request = true;
        let sl = if group_idle {
            self.t.group_idle
        } else {
            self.t.slice_idle
        };
        self.idle_timer = Some(now + sl);
    }

    /// `cfq_idle_slice_timer`.
    fn idle_slice_timer(&mut self, now: Nanos) {
        if let Some(qi) = self.active {
            let q = &self.queues[qi];
            if q.must_dispatch {
                return;
            }
            if !q.slice_used(now) {
                if self.busy_queues == 0 || !q.is_empty() {
                    return;
                }
                // The idle did not pay off.
                self.queues[qi].deep = false;
            }
        }
        self.slice_expired(false, now);
    }

    // -- dispatch ------------------------------------------------------------------------------

    /// `cfq_select_queue`.
    fn select_queue(&mut self, now: Nanos) -> Option<usize> {
        let Some(qi) = self.active else {
            return self.set_active_queue(now);
        };
        if self.rq_queued == 0 {
            return None;
        }
        let q = &self.queues[qi];
        let group_idle_check = if q.slice_used(now) && !q.must_dispatch {
            if self.busy_queues == 1 && q.is_empty() && q.dispatched > 0 && self.should_idle(qi) {
                return None;
            }
            true
        } else {
            if !q.is_empty() {
                return Some(qi);
            }
            if self.idle_timer.is_some() {
                return None;
            }
            let q = &mut self.queues[qi];
            if q.seeky()
                && q.idle_window
                && (q.slice_new
                    || q.slice_end.saturating_sub(now) > now.saturating_sub(q.slice_start))
            {
                q.deep = false;
                q.idle_window = false;
            }
            if self.queues[qi].dispatched > 0 && self.should_idle(qi) {
                return None;
            }
            true
        };
        if group_idle_check
            && self.t.group_idle > 0
            && self.busy_queues == 1
            && self.group_dispatched > 0
            && !self.group_ttime.big(self.t.group_idle)
        {
            return None;
        }
        self.slice_expired(false, now);
        self.set_active_queue(now)
    }

    /// `cfq_slice_used_soon`.
    fn slice_used_soon(&self, qi: usize, now: Nanos) -> bool {
        let q = &self.queues[qi];
        q.slice_new || now + self.t.slice_idle * Nanos::from(q.dispatched) > q.slice_end
    }

    /// `cfq_may_dispatch`.
    fn may_dispatch(&self, qi: usize, now: Nanos) -> bool {
        let q = &self.queues[qi];
        if self.should_idle(qi) && self.rq_in_flight[0] > 0 {
            return false;
        }
        if self.rq_in_flight[1] > 0 && !q.sync {
            return false;
        }
        let mut max = (self.t.quantum / 2).max(1);
        if q.dispatched >= max {
            let promote = q.sync && self.busy_sync_queues == 1;
            if self.busy_queues > 1 && self.slice_used_soon(qi, now) && !promote {
                return false;
            }
            max = if self.busy_queues == 1 || promote {
                u32::MAX
            } else {
                self.t.quantum
            };
        }
        if !q.sync && self.t.low_latency {
            let since = now.wrapping_sub(self.last_delayed_sync);
            let mut depth = (since / self.t.slice_sync).min(Nanos::from(u32::MAX)) as u32;
            if depth == 0 && q.dispatched == 0 {
                depth = 1;
            }
            max = max.min(depth);
        }
        q.dispatched < max
    }

    /// `cfq_check_fifo`: once per slice, the oldest request if it has expired.
    fn check_fifo(&mut self, qi: usize, now: Nanos) -> Option<ReqId> {
        let q = &mut self.queues[qi];
        if q.fifo_expire {
            return None;
        }
        q.fifo_expire = true;
        let &id = q.fifo.front()?;
        (now >= self.reqs[&id].fifo_time).then_some(id)
    }

    /// `cfq_dispatch_requests`: the next request for the driver, if CFQ allows one now.
    pub(crate) fn dispatch(&mut self, now: Nanos) -> Option<ReqId> {
        self.run_timer(now);
        if self.busy_queues == 0 {
            return None;
        }
        let qi = self.select_queue(now)?;
        if !self.may_dispatch(qi, now) {
            return None;
        }
        let id = match self.check_fifo(qi, now) {
            Some(id) => id,
            None => self.queues[qi].next_rq.expect("active queue has requests"),
        };
        // cfq_dispatch_insert + cfq_activate_request.
        self.remove_request(id);
        let r = self.reqs[&id];
        let q = &mut self.queues[qi];
        q.dispatched += 1;
        self.group_dispatched += 1;
        self.rq_in_flight[usize::from(q.sync)] += 1;
        self.rq_in_driver += 1;
        self.last_position = r.sector + u64::from(r.nr_sectors);
        self.active_cic = true;
        q.slice_dispatch += 1;
        q.must_dispatch = false;
        let max_rq = 2 * self.t.slice_async_rq * (IOPRIO_BE_NR - IOPRIO_NORM);
        if self.busy_queues > 1 && !q.sync && q.slice_dispatch >= max_rq {
            q.slice_end = now + 1;
            self.slice_expired(false, now);
        }
        Some(id)
    }

    /// `cfq_completed_request`. Returns whether the driver should be kicked
    /// (`cfq_schedule_dispatch` when nothing is left at the driver).
    pub(crate) fn completed(&mut self, id: ReqId, now: Nanos) -> bool {
        self.run_timer(now);
        let r = self.reqs.remove(&id).expect("completed request was CFQ's");
        let qi = r.queue;
        self.rq_in_driver -= 1;
        self.queues[qi].dispatched -= 1;
        self.group_dispatched -= 1;
        self.rq_in_flight[usize::from(self.queues[qi].sync)] -= 1;
        if r.sync {
            self.queues[qi].ttime.last_end_request = now;
            let wl = match self.queues[qi].tree {
                Some((wl, _, _)) => wl,
                None => self.queues[qi].workload(),
            };
            self.trees[wl as usize].ttime.last_end_request = now;
            if now >= r.start_time + self.t.fifo_expire_sync {
                self.last_delayed_sync = now;
            }
        }
        self.group_ttime.last_end_request = now;
        if self.active == Some(qi) {
            if self.queues[qi].slice_new {
                self.set_prio_slice(qi, now);
                self.queues[qi].slice_new = false;
            }
            if self.queues[qi].slice_used(now) {
                self.slice_expired(true, now);
            } else if r.sync && self.queues[qi].is_empty() {
                self.arm_slice_timer(now);
            }
        }
        self.rq_in_driver == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::{Bio, ElevatorKind, QueueConfig, RequestQueue, Submit};
    use crate::engine::MSEC;

    /// A CFQ queue in front of a disk that takes `svc` per request, `depth` at a time.
    /// Submissions, completions and the idle timer run in time order; every dispatch is
    /// logged as (time, tag).
    struct Rig {
        q: RequestQueue,
        now: Nanos,
        svc: Nanos,
        at_dev: Vec<(Nanos, Request)>,
        log: Vec<(Nanos, u64)>,
        done: Vec<(Nanos, u64)>,
    }

    const READ: u64 = 1 << 40;

    impl Rig {
        fn new(depth: u32, svc: Nanos) -> Self {
            let cfg = QueueConfig {
                depth,
                elevator: ElevatorKind::cfq(),
                ..QueueConfig::default()
            };
            Rig {
                q: RequestQueue::new("sda", cfg),
                now: 0,
                svc,
                at_dev: Vec::new(),
                log: Vec::new(),
                done: Vec::new(),
            }
        }

        /// A one-page bio: a read (tag has `READ` set) from `ioc`, or an async write.
        fn submit(&mut self, read: bool, ioc: IoContext, sector: u64, tag: u64) {
            let bio = Bio {
                dir: if read { Dir::Read } else { Dir::Write },
                sync: read,
                sector,
                nr_sectors: 8,
                tag: tag | if read { READ } else { 0 },
            };
            let r = self.q.submit_bio_from(bio, ioc, None, self.now);
            assert_ne!(r, Submit::Full);
        }

        /// Run until `t`, calling `on_done(rig, tag)` for each completion.
        fn run(&mut self, t: Nanos, mut on_done: impl FnMut(&mut Rig, u64)) {
            loop {
                while let Some(rq) = self.q.dispatch(self.now) {
                    self.log.push((self.now, rq.tags()[0]));
                    let at = self.now + self.svc;
                    self.at_dev.push((at, rq));
                }
                let next_done = self.at_dev.iter().map(|(at, _)| *at).min();
                let next = [next_done, self.q.next_timer(), Some(t)]
                    .into_iter()
                    .flatten()
                    .min()
                    .expect("t is always there");
                if next > t || (next == t && next_done.is_none_or(|d| d > t)) {
                    self.now = t;
                    // Let anything due exactly at t dispatch.
                    while let Some(rq) = self.q.dispatch(self.now) {
                        self.log.push((self.now, rq.tags()[0]));
                        let at = self.now + self.svc;
                        self.at_dev.push((at, rq));
                    }
                    return;
                }
                self.now = next;
                if next_done == Some(next) {
                    let i = (0..self.at_dev.len())
                        .find(|&i| self.at_dev[i].0 == next)
                        .expect("due");
                    let (_, rq) = self.at_dev.remove(i);
                    let c = self.q.complete(rq, self.now);
                    for tag in c.tags {
                        self.done.push((self.now, tag));
                        on_done(self, tag);
                    }
                }
            }
        }

        fn dispatched(&self, pred: impl Fn(u64) -> bool) -> Vec<Nanos> {
            self.log
                .iter()
                .filter(|(_, tag)| pred(*tag))
                .map(|&(t, _)| t)
                .collect()
        }
    }

    fn is_read(tag: u64) -> bool {
        tag & READ != 0
    }

    /// §8 rule 5, §10.3, §13.5: a sync read arriving behind a backlog of async writes
    /// preempts the async queue and is the very next request dispatched.
    #[test]
    fn a_read_behind_a_stream_of_async_writes_is_dispatched_next() {
        let mut rig = Rig::new(1, 5 * MSEC);
        for i in 0..100 {
            rig.submit(false, 1, 1_000_000 + i * 64, i);
        }
        rig.run(12 * MSEC, |_, _| {});
        rig.submit(true, 2, 50, 7);
        rig.run(40 * MSEC, |_, _| {});
        let pos = rig.log.iter().position(|&(_, t)| is_read(t)).unwrap();
        let (t_read, _) = rig.log[pos];
        // Dispatched when the one write at the device finished (at 15 ms), not after the
        // 97 writes still queued.
        assert_eq!(t_read, 15 * MSEC);
        assert!(rig.log[..pos].iter().all(|&(t, _)| t <= 10 * MSEC));
    }

    /// §10.1, §10.2, §13.9: a reader that always has its next read ready takes most of the
    /// disk, but the async queue still gets a slice every round: writes are never stuck
    /// for more than a target latency plus slices.
    #[test]
    fn async_writes_are_starved_by_a_busy_reader_but_not_indefinitely() {
        // A writer keeps 100 async writes queued (one new write per completed write), and
        // a sequential reader with no think time submits its next read at each completion.
        let run = |reader: bool| {
            let mut rig = Rig::new(1, 4 * MSEC);
            let mut w = 0u64;
            for _ in 0..100 {
                rig.submit(false, 1, 10_000_000 + w * 64, w);
                w += 1;
            }
            let mut next = 0u64;
            if reader {
                rig.submit(true, 2, 0, 0);
            }
            rig.run(4000 * MSEC, |rig, tag| {
                if is_read(tag) {
                    next += 1;
                    rig.submit(true, 2, next * 8, next);
                } else {
                    rig.submit(false, 1, 10_000_000 + w * 64, w);
                    w += 1;
                }
            });
            rig
        };
        let alone = run(false).dispatched(|t| !is_read(t)).len();
        let rig = run(true);
        let writes = rig.dispatched(|t| !is_read(t));
        let reads = rig.dispatched(is_read);
        assert!((999..=1001).contains(&alone), "{alone}"); // 4 s at 4 ms a request
                                                           // The reader takes most of the disk (each round: a 150 ms sync workload, served
                                                           // as two 100 ms queue slices, against two 40 ms async queue slices) ...
        assert!(
            reads.len() > 2 * writes.len(),
            "{} {}",
            reads.len(),
            writes.len()
        );
        assert!(writes.len() < alone / 2, "{}", writes.len());
        // ... but the async queue gets a turn every round: no gap between two write
        // dispatches is longer than the target latency.
        assert!(!writes.is_empty());
        let max_gap = writes.windows(2).map(|w| w[1] - w[0]).max().unwrap();
        assert!(max_gap <= CFQ_TARGET_LATENCY, "async waited {max_gap} ns");
    }

    /// §7.2, §13.7: a sequential reader with 2 ms think time keeps the disk: CFQ idles
    /// (up to slice_idle = 8 ms) for its next read instead of switching to the writes.
    #[test]
    fn the_disk_idles_for_a_sequential_reader_instead_of_serving_async() {
        let run = |think: Nanos| {
            let mut rig = Rig::new(1, 2 * MSEC);
            let mut next = 0u64;
            let mut due: Vec<Nanos> = Vec::new();
            rig.submit(true, 2, 0, 0);
            for i in 0..100 {
                rig.submit(false, 1, 10_000_000 + i * 64, i);
            }
            let mut t = 0;
            while t < 80 * MSEC {
                let end = due.first().copied().unwrap_or(t + MSEC).min(t + MSEC);
                rig.run(end, |_, tag| {
                    if is_read(tag) {
                        due.push(0);
                    }
                });
                // Reads completing at `now` schedule the next one after `think`.
                for d in due.iter_mut().filter(|d| **d == 0) {
                    *d = rig.now + think;
                }
                if due.first().is_some_and(|&d| d <= rig.now) {
                    due.remove(0);
                    next += 1;
                    rig.submit(true, 2, next * 8, next);
                }
                t = rig.now;
            }
            rig
        };
        let rig = run(2 * MSEC);
        // The read preempted at time 0 or was first; during the reader's 100 ms slice no
        // write is dispatched: the disk waits 2 ms each time.
        let writes = rig.dispatched(|t| !is_read(t));
        assert!(
            writes.iter().all(|&t| t >= 80 * MSEC),
            "{writes:?} {:?}",
            rig.log
        );
        assert!(rig.dispatched(is_read).len() > 15);
        // Think time 20 ms (> slice_idle): the idle window is lost and writes run between
        // reads.
        let rig = run(20 * MSEC);
        assert!(!rig.dispatched(|t| !is_read(t)).is_empty());
    }

    /// §6.3, §13.6: no async request is dispatched while a sync request is in flight, and
    /// after a sync request took ≥ 124 ms the async depth is 1 for the next 100 ms.
    #[test]
    fn async_depth_is_limited_while_sync_io_is_in_flight_and_after_a_delayed_sync() {
        let mut rig = Rig::new(8, 10 * MSEC);
        rig.submit(true, 2, 0, 0);
        rig.run(0, |_, _| {});
        for i in 0..50 {
            rig.submit(false, 1, 10_000_000 + i * 64, i);
        }
        rig.run(9 * MSEC, |_, _| {});
        // Only the read is at the device.
        assert_eq!(rig.log.len(), 1);
        assert_eq!(rig.q.in_driver(), 1);
        // It completes at 10 ms and the reader's queue idles 8 ms for its next read; then
        // the writes go out. The read was quick, so the depth ramp allows
        // (now − (−1 s)) / 100 ms = 10, and a lone queue has no quantum limit.
        rig.run(17 * MSEC, |_, _| {});
        assert_eq!(rig.q.in_driver(), 0);
        rig.run(19 * MSEC, |_, _| {});
        assert_eq!(rig.q.in_driver(), 8);

        // A delayed sync request: allocated at 0, completed at 130 ms.
        let mut rig = Rig::new(8, 130 * MSEC);
        rig.submit(true, 2, 0, 0);
        rig.run(130 * MSEC, |_, _| {});
        rig.svc = 5 * MSEC;
        for i in 0..50 {
            rig.submit(false, 1, 10_000_000 + i * 64, i);
        }
        let mut max_in_driver = 0;
        for step in 0..=199 {
            rig.run(130 * MSEC + step * MSEC, |_, _| {});
            max_in_driver = max_in_driver.max(rig.q.in_driver());
        }
        assert_eq!(max_in_driver, 1);
        // 200 ms after the delayed completion the depth is 2.
        rig.run(331 * MSEC, |_, _| {});
        assert_eq!(rig.q.in_driver(), 2);
    }

    /// §6.2 (`cfq_check_fifo`), §13.8: a write far behind the head is skipped by the
    /// one-way sweep, but once older than fifo_expire_async (248 ms) it is taken first at
    /// the start of the next async slice.
    #[test]
    fn an_expired_async_request_is_served_at_the_next_slice_start() {
        let mut rig = Rig::new(1, 5 * MSEC);
        for i in 0..4 {
            rig.submit(false, 1, 100_000_000 + i * 64, i);
        }
        rig.run(0, |_, _| {});
        rig.submit(false, 1, 10, 999); // far behind the head: "wraps"
                                       // Keep the sweep fed with writes ahead of the head.
        let mut served = None;
        for step in 1..200u64 {
            let next = step + 3;
            rig.submit(false, 1, 100_000_000 + next * 64, next);
            rig.run(step * 5 * MSEC, |_, _| {});
            if let Some(&(t, _)) = rig.log.iter().find(|&&(_, tag)| tag == 999) {
                served = Some(t);
                break;
            }
        }
        let t = served.expect("the old request is served");
        // Expired at 248 ms; the slice in progress (40 ms) ends first.
        assert!(t >= CFQ_FIFO_EXPIRE_ASYNC, "{t}");
        assert!(
            t <= CFQ_FIFO_EXPIRE_ASYNC + CFQ_SLICE_ASYNC + 10 * MSEC,
            "{t}"
        );
    }

    /// §8 (`cfq_preempt_queue`): the async queue is expired with its unused slice kept, and
    /// the sync queue goes to the front of its tree.
    #[test]
    fn a_sync_request_preempts_the_active_async_queue() {
        let mut cfq = Cfq::new(CfqTunables::default(), true, 1);
        let mut id = 0;
        let mut rq = |class: Class, ioc: IoContext, sector: u64, now: Nanos| {
            id += 1;
            Request {
                id,
                dir: if class == Class::Sync {
                    Dir::Read
                } else {
                    Dir::Write
                },
                class,
                ioc,
                sector,
                nr_sectors: 8,
                tags: Vec::new(),
                start_time: now,
                dispatch_time: None,
            }
        };
        for i in 0..10 {
            cfq.add(&rq(Class::Async, 1, i * 1000, 0), 0);
        }
        let first = cfq.dispatch(0).unwrap();
        assert_eq!(cfq.active, Some(ASYNC_QUEUE));
        cfq.completed(first, 5 * MSEC); // the async slice starts: 40 ms
        assert_eq!(cfq.queues[ASYNC_QUEUE].slice_end, 45 * MSEC);
        let read = rq(Class::Sync, 2, 5_000_000, 6 * MSEC);
        cfq.add(&read, 6 * MSEC);
        assert_eq!(cfq.active, None, "the async queue was expired");
        assert_eq!(cfq.queues[ASYNC_QUEUE].slice_resid, 0, "re-keyed already");
        assert_eq!(cfq.dispatch(6 * MSEC), Some(read.id));
        assert_eq!(cfq.serving, Workload::Sync);
    }

    /// §3.4, §13.7: a reader whose requests are more than 800 sectors apart becomes seeky
    /// and loses its idle window: it moves to the SYNC_NOIDLE tree.
    #[test]
    fn a_random_reader_moves_to_the_sync_noidle_tree() {
        // A reader of task 3 submitting its next read at each completion, at `sector(n)`;
        // returns (seeky, workload) of its queue after 300 ms.
        let reader = |sector: fn(u64) -> u64| {
            let mut rig = Rig::new(1, 2 * MSEC);
            let mut n = 0u64;
            rig.submit(true, 3, 0, 0);
            rig.run(300 * MSEC, |rig, tag| {
                if is_read(tag) {
                    n += 1;
                    rig.submit(true, 3, sector(n), n);
                }
            });
            let crate::block::elevator::Elevator::Cfq(cfq) = rig.q.elevator_ref() else {
                unreachable!("the rig runs cfq")
            };
            let q = &cfq.queues[cfq.sync_queues[&3]];
            (q.seeky(), q.workload())
        };
        // About 100 MB apart each time.
        let random = reader(|n| (n % 7) * 200_000 + n * 8);
        assert_eq!(random, (true, Workload::SyncNoidle));
        // A sequential reader keeps its idle window.
        let sequential = reader(|n| n * 8);
        assert_eq!(sequential, (false, Workload::Sync));
    }

    /// §5.3, §13.3: queue slices, and their scaling to the 300 ms target latency.
    #[test]
    fn slices_are_100_and_40_ms_alone_and_60_and_24_ms_with_five_busy_queues() {
        let mut cfq = Cfq::new(CfqTunables::default(), true, 1);
        cfq.queues.push(CfqQueue::new(true, 0));
        assert_eq!(cfq.scaled_slice(1), 100 * MSEC);
        assert_eq!(cfq.scaled_slice(ASYNC_QUEUE), 40 * MSEC);
        // Five busy BE queues, and an average that has caught up with them.
        for i in 0..5 {
            cfq.trees[Workload::SyncNoidle as usize]
                .rb
                .insert((0, i, 1));
        }
        cfq.busy_queues_avg = 5;
        assert_eq!(cfq.scaled_slice(1), 60 * MSEC);
        assert_eq!(cfq.scaled_slice(ASYNC_QUEUE), 24 * MSEC);
    }

    /// §5.2, §13.4: workload slices with 4 SYNC_NOIDLE queues and 1 ASYNC queue busy.
    #[test]
    fn workload_slices_are_240_ms_noidle_and_24_ms_async() {
        let mut cfq = Cfq::new(CfqTunables::default(), true, 1);
        for i in 0..4 {
            cfq.queues.push(CfqQueue::new(true, 0));
            cfq.trees[Workload::SyncNoidle as usize]
                .rb
                .insert((0, i, 1 + i as usize));
        }
        cfq.trees[Workload::Async as usize]
            .rb
            .insert((0, 9, ASYNC_QUEUE));
        cfq.busy_queues = 5;
        assert_eq!(cfq.workload_slice(Workload::SyncNoidle, 4), 240 * MSEC);
        assert_eq!(cfq.workload_slice(Workload::Async, 1), 24 * MSEC);
    }

    /// §2.2 (`cfq_may_queue`): the task of a queue that is idling for its next request may
    /// allocate past a full pool, once per slice.
    #[test]
    fn an_idling_queue_may_allocate_past_a_full_pool_once_per_slice() {
        let mut rig = Rig::new(1, 2 * MSEC);
        rig.submit(true, 2, 0, 0);
        rig.run(2 * MSEC, |_, _| {});
        // The read completed; the queue idles for its next read.
        assert!(rig.q.next_timer().is_some());
        let cfg = *rig.q.config();
        // Fill the sync pool from other tasks' (ioc 10+) reads.
        for i in 0..cfg.nr_requests {
            let bio = Bio {
                dir: Dir::Read,
                sync: true,
                sector: 50_000_000 + u64::from(i) * 10_000,
                nr_sectors: 8,
                tag: 100 + u64::from(i),
            };
            rig.q.submit_bio_from(bio, 10 + i, None, rig.now);
        }
        let far = |n: u64| Bio {
            dir: Dir::Read,
            sync: true,
            sector: 90_000_000 + n * 10_000,
            nr_sectors: 8,
            tag: n,
        };
        assert_eq!(
            rig.q.submit_bio_from(far(1), 99, None, rig.now),
            Submit::Full
        );
        assert_eq!(
            rig.q.submit_bio_from(far(2), 2, None, rig.now),
            Submit::Queued
        );
        assert_eq!(
            rig.q.submit_bio_from(far(3), 2, None, rig.now),
            Submit::Full
        );
    }

    /// §3.2 (`cfq_allow_merge`): a sync bio never merges into an async request, and one
    /// task's read never into another task's.
    #[test]
    fn bios_merge_only_into_requests_of_their_own_cfq_queue() {
        let mut rig = Rig::new(1, 2 * MSEC);
        // Keep the device busy so nothing is dispatched meanwhile.
        rig.submit(true, 9, 1 << 30, 0);
        rig.run(0, |_, _| {});
        rig.submit(false, 1, 0, 1);
        let write_sync = Bio {
            dir: Dir::Write,
            sync: true,
            sector: 8,
            nr_sectors: 8,
            tag: 2,
        };
        assert_eq!(
            rig.q.submit_bio_from(write_sync, 1, None, 0),
            Submit::Queued
        );
        rig.submit(true, 2, 100, 3);
        // Task 3's read adjacent to task 2's queued read (sectors 100..108) stays apart.
        let other = Bio {
            dir: Dir::Read,
            sector: 108,
            tag: 4,
            ..write_sync
        };
        assert_eq!(rig.q.submit_bio_from(other, 3, None, 0), Submit::Queued);
        // Task 2's own adjacent read merges.
        let same = Bio {
            sector: 92,
            tag: 5,
            ..other
        };
        assert!(matches!(
            rig.q.submit_bio_from(same, 2, None, 0),
            Submit::Merged { .. }
        ));
    }
}
