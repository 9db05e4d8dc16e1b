//! IO schedulers: deadline (`block/deadline-iosched.c`), noop (`block/noop-iosched.c`) and
//! CFQ ([`cfq_iosched`](super::cfq_iosched)).
//!
//! The elevator only orders request ids; the [`RequestQueue`](super::RequestQueue) owns the
//! requests and tells the elevator about additions, merges (and asks whether one is
//! allowed), allocations (`elv_may_queue`) and completions, and asks it for the next id to
//! dispatch. An elevator may decline to dispatch with requests queued (CFQ idling); it then
//! names the time to ask again in [`Elevator::next_timer`].

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::cfq_iosched::{Cfq, CfqTunables};
use super::{Class, Dir, IoContext, ReqId, Request};
use crate::engine::{Nanos, MSEC, SEC};

/// Deadline `read_expire`: `HZ / 2` (`block/deadline-iosched.c`).
pub const DEADLINE_READ_EXPIRE: Nanos = 500 * MSEC;
/// Deadline `write_expire`: `5 * HZ` (`block/deadline-iosched.c`).
pub const DEADLINE_WRITE_EXPIRE: Nanos = 5 * SEC;
/// Deadline `fifo_batch`: requests per batch (`block/deadline-iosched.c`).
pub const DEADLINE_FIFO_BATCH: u32 = 16;
/// Deadline `writes_starved`: read batches before a write batch is forced.
pub const DEADLINE_WRITES_STARVED: u32 = 2;

/// The deadline sysfs tunables (`/sys/block/*/queue/iosched/`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeadlineTunables {
    pub read_expire: Nanos,
    pub write_expire: Nanos,
    pub fifo_batch: u32,
    pub writes_starved: u32,
    /// Whether bios may be front-merged into queued requests.
    pub front_merges: bool,
}

impl Default for DeadlineTunables {
    fn default() -> Self {
        DeadlineTunables {
            read_expire: DEADLINE_READ_EXPIRE,
            write_expire: DEADLINE_WRITE_EXPIRE,
            fifo_batch: DEADLINE_FIFO_BATCH,
            writes_starved: DEADLINE_WRITES_STARVED,
            front_merges: true,
        }
    }
}

/// Which scheduler a queue uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElevatorKind {
    /// FIFO dispatch, merging only.
    Noop,
    /// Sorted batches with per-direction FIFO expiry.
    Deadline(DeadlineTunables),
    /// Per-process sync queues, time slices and idling.
    Cfq(CfqTunables),
}

impl ElevatorKind {
    /// Deadline with the kernel defaults.
    pub fn deadline() -> Self {
        ElevatorKind::Deadline(DeadlineTunables::default())
    }

    /// CFQ with the kernel defaults.
    pub fn cfq() -> Self {
        ElevatorKind::Cfq(CfqTunables::default())
    }
}

impl Default for ElevatorKind {
    fn default() -> Self {
        ElevatorKind::deadline()
    }
}

/// An elevator instance.
#[derive(Debug)]
pub(crate) enum Elevator {
    Noop(Noop),
    Deadline(Deadline),
    Cfq(Box<Cfq>),
}

impl Elevator {
    /// An elevator for a queue whose device is `rotational` and takes `depth` requests.
    pub(crate) fn new(kind: ElevatorKind, rotational: bool, depth: u32) -> Self {
        match kind {
            ElevatorKind::Noop => Elevator::Noop(Noop::default()),
            ElevatorKind::Deadline(t) => Elevator::Deadline(Deadline::new(t)),
            ElevatorKind::Cfq(t) => Elevator::Cfq(Box::new(Cfq::new(t, rotational, depth))),
        }
    }

    pub(crate) fn allows_front_merge(&self) -> bool {
        match self {
            Elevator::Noop(_) | Elevator::Cfq(_) => true,
            Elevator::Deadline(d) => d.t.front_merges,
        }
    }

    /// `elv_allow_merge`: may a bio of `class` from `ioc` merge into queued request `id`?
    /// Only CFQ says no (a sync bio into an async request, or into another task's queue).
    pub(crate) fn allow_merge(&self, id: ReqId, class: Class, ioc: IoContext) -> bool {
        match self {
            Elevator::Cfq(c) => c.allow_merge(id, class, ioc),
            _ => true,
        }
    }

    /// `elv_may_queue`: true for `ELV_MQUEUE_MUST`, an allocation allowed past a full pool.
    pub(crate) fn may_queue(&mut self, class: Class, ioc: IoContext, now: Nanos) -> bool {
        match self {
            Elevator::Cfq(c) => c.may_queue(class, ioc, now),
            _ => false,
        }
    }

    /// A new request entered the queue at `now`.
    pub(crate) fn add(&mut self, rq: &Request, now: Nanos) {
        match self {
            Elevator::Noop(n) => n.fifo.push_back(rq.id),
            Elevator::Deadline(d) => d.add(rq.id, rq.dir, rq.sector, now),
            Elevator::Cfq(c) => c.add(rq, now),
        }
    }

    /// A bio was front-merged into `id`, which now starts at `new_sector` and is
    /// `nr_sectors` long.
    pub(crate) fn front_merged(&mut self, id: ReqId, new_sector: u64, nr_sectors: u32) {
        match self {
            Elevator::Noop(_) => {}
            Elevator::Deadline(d) => d.resort(id, new_sector),
            Elevator::Cfq(c) => c.front_merged(id, new_sector, nr_sectors),
        }
    }

    /// A bio was back-merged into `id`, now `nr_sectors` long.
    pub(crate) fn back_merged(&mut self, id: ReqId, nr_sectors: u32) {
        if let Elevator::Cfq(c) = self {
            c.back_merged(id, nr_sectors);
        }
    }

    /// Request `gone` was merged into `keep` (now `nr_sectors` long) and leaves the queue.
    pub(crate) fn merged_requests(&mut self, keep: ReqId, gone: ReqId, nr_sectors: u32) {
        match self {
            Elevator::Noop(n) => n.remove(gone),
            Elevator::Deadline(d) => d.merged_requests(keep, gone),
            Elevator::Cfq(c) => c.merged_requests(keep, gone, nr_sectors),
        }
    }

    /// The next request to hand to the driver, removed from the elevator.
    pub(crate) fn dispatch(&mut self, now: Nanos) -> Option<ReqId> {
        match self {
            Elevator::Noop(n) => n.fifo.pop_front(),
            Elevator::Deadline(d) => d.dispatch(now),
            Elevator::Cfq(c) => c.dispatch(now),
        }
    }

    /// `elv_completed_request`: a dispatched request finished. Returns whether the driver
    /// should run the queue again although it has nothing in flight
    /// (`cfq_schedule_dispatch`).
    pub(crate) fn completed(&mut self, id: ReqId, now: Nanos) -> bool {
        match self {
            Elevator::Cfq(c) => c.completed(id, now),
            _ => false,
        }
    }

    /// When to ask for a dispatch again although nothing else happens: CFQ's idle timer.
    pub(crate) fn next_timer(&self) -> Option<Nanos> {
        match self {
            Elevator::Cfq(c) => c.next_timer(),
            _ => None,
        }
    }
}

/// noop: one FIFO.
#[derive(Debug, Default)]
pub(crate) struct Noop {
    fifo: VecDeque<ReqId>,
}

impl Noop {
    fn remove(&mut self, id: ReqId) {
        if let Some(pos) = self.fifo.iter().position(|&x| x == id) {
            self.fifo.remove(pos);
        }
    }
}

/// Position in a deadline FIFO: expiry time, then insertion order.
type FifoKey = (Nanos, u64);

#[derive(Debug, Clone, Copy)]
struct DlMeta {
    dir: Dir,
    sector: u64,
    fifo: FifoKey,
}

/// deadline: per direction an LBA-sorted set and a FIFO by expiry time.
#[derive(Debug)]
pub(crate) struct Deadline {
    t: DeadlineTunables,
    sort: [BTreeSet<(u64, ReqId)>; 2],
    fifo: [BTreeMap<FifoKey, ReqId>; 2],
    meta: BTreeMap<ReqId, DlMeta>,
    /// `next_rq[dir]`: where the current ascending sweep continues.
    next_rq: [Option<ReqId>; 2],
    /// Requests dispatched in the current batch.
    batching: u32,
    /// Read batches started while writes were waiting.
    starved: u32,
    seq: u64,
}

impl Deadline {
    fn new(t: DeadlineTunables) -> Self {
        Deadline {
            t,
            sort: [BTreeSet::new(), BTreeSet::new()],
            fifo: [BTreeMap::new(), BTreeMap::new()],
            meta: BTreeMap::new(),
            next_rq: [None, None],
            batching: 0,
            starved: 0,
            seq: 0,
        }
    }

    fn expire(&self, dir: Dir) -> Nanos {
        match dir {
            Dir::Read => self.t.read_expire,
            Dir::Write => self.t.write_expire,
        }
    }

    fn add(&mut self, id: ReqId, dir: Dir, sector: u64, now: Nanos) {
        let key = (now + self.expire(dir), self.seq);
        self.seq += 1;
        self.sort[dir.index()].insert((sector, id));
        self.fifo[dir.index()].insert(key, id);
        self.meta.insert(
            id,
            DlMeta {
                dir,
                sector,
                fifo: key,
            },
        );
    }

    /// `deadline_latter_request`: the next request in ascending LBA order.
    fn latter(&self, id: ReqId) -> Option<ReqId> {
        let m = self.meta[&id];
        self.sort[m.dir.index()]
            .range((m.sector, id)..)
            .nth(1)
            .map(|&(_, i)| i)
    }

    fn resort(&mut self, id: ReqId, new_sector: u64) {
        let m = self
            .meta
            .get_mut(&id)
            .expect("front-merged request is queued");
        self.sort[m.dir.index()].remove(&(m.sector, id));
        m.sector = new_sector;
        self.sort[m.dir.index()].insert((new_sector, id));
    }

    /// `deadline_remove_request`: take `id` out of both lists, moving `next_rq` on.
    fn remove(&mut self, id: ReqId) -> DlMeta {
        let d = self.meta[&id].dir.index();
        if self.next_rq[d] == Some(id) {
            self.next_rq[d] = self.latter(id);
        }
        let m = self.meta.remove(&id).expect("removed request is queued");
        self.sort[d].remove(&(m.sector, id));
        self.fifo[d].remove(&m.fifo);
        m
    }

    /// `deadline_merged_requests`: `keep` inherits the earlier FIFO position of the two.
    fn merged_requests(&mut self, keep: ReqId, gone: ReqId) {
        let g = self.remove(gone);
        let k = self.meta[&keep];
        if g.fifo.0 < k.fifo.0 {
            let d = k.dir.index();
            self.fifo[d].remove(&k.fifo);
            self.fifo[d].insert(g.fifo, keep);
            self.meta.get_mut(&keep).expect("kept").fifo = g.fifo;
        }
    }

    /// `deadline_check_fifo`: the FIFO head has expired once `now` is past its deadline
    /// (3.9 uses `time_after`, strictly later).
    fn fifo_expired(&self, dir: Dir, now: Nanos) -> bool {
        self.fifo[dir.index()]
            .keys()
            .next()
            .is_some_and(|&(expiry, _)| now > expiry)
    }

    /// `deadline_dispatch_requests`.
    fn dispatch(&mut self, now: Nanos) -> Option<ReqId> {
        let reads = !self.fifo[0].is_empty();
        let writes = !self.fifo[1].is_empty();
        let current = self.next_rq[1].or(self.next_rq[0]);
        let id = match current {
            Some(id) if self.batching < self.t.fifo_batch => id,
            _ => {
                let dir = if reads {
                    let starved = self.starved;
                    if writes {
                        self.starved += 1;
                    }
                    if writes && starved >= self.t.writes_starved {
                        self.starved = 0;
                        Dir::Write
                    } else {
                        Dir::Read
                    }
                } else if writes {
                    self.starved = 0;
                    Dir::Write
                } else {
                    return None;
                };
                self.batching = 0;
                match self.next_rq[dir.index()] {
                    Some(next) if !self.fifo_expired(dir, now) => next,
                    _ => *self.fifo[dir.index()]
                        .values()
                        .next()
                        .expect("direction has requests"),
                }
            }
        };
        self.batching += 1;
        // deadline_move_request: the sweep continues after this request, in its direction.
        let dir = self.meta[&id].dir;
        let latter = self.latter(id);
        self.next_rq = [None, None];
        self.next_rq[dir.index()] = latter;
        self.remove(id);
        Some(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deadline(fifo_batch: u32) -> Elevator {
        Elevator::new(
            ElevatorKind::Deadline(DeadlineTunables {
                fifo_batch,
                ..DeadlineTunables::default()
            }),
            true,
            1,
        )
    }

    fn add(e: &mut Elevator, id: ReqId, dir: Dir, sector: u64, now: Nanos) {
        match e {
            Elevator::Noop(n) => n.fifo.push_back(id),
            Elevator::Deadline(d) => d.add(id, dir, sector, now),
            Elevator::Cfq(_) => unreachable!("CFQ is tested in cfq_iosched"),
        }
    }

    fn drain(e: &mut Elevator, now: Nanos) -> Vec<ReqId> {
        std::iter::from_fn(|| e.dispatch(now)).collect()
    }

    #[test]
    fn deadline_batch_starts_at_fifo_head_then_sweeps_up_in_lba_order() {
        let mut e = deadline(16);
        // ids double as LBAs / 100 for readability.
        for (id, lba) in [(1, 100), (5, 500), (3, 300), (0, 50), (9, 900)] {
            add(&mut e, id, Dir::Write, lba, 0);
        }
        // Oldest first (100), then ascending 300, 500, 900; the sweep ends and the next
        // batch begins at the FIFO head (50).
        assert_eq!(drain(&mut e, 0), vec![1, 3, 5, 9, 0]);
    }

    #[test]
    fn deadline_expired_fifo_head_is_served_before_the_sweep_continues() {
        let run = |dispatch_at: Nanos| {
            let mut e = deadline(2);
            add(&mut e, 1000, Dir::Write, 1000, 0);
            add(&mut e, 2000, Dir::Write, 2000, 0);
            assert_eq!(e.dispatch(0), Some(1000));
            add(&mut e, 10, Dir::Write, 10, MSEC);
            add(&mut e, 3000, Dir::Write, 3000, 2 * MSEC);
            add(&mut e, 4000, Dir::Write, 4000, 2 * MSEC);
            assert_eq!(e.dispatch(2 * MSEC), Some(2000)); // batch of 2 used up
            e.dispatch(dispatch_at)
        };
        // Not expired: the ascending sweep goes on.
        assert_eq!(run(3 * MSEC), Some(3000));
        // The request at LBA 10 expired at 5.001 s: the new batch starts with it.
        assert_eq!(run(6 * SEC), Some(10));
    }

    #[test]
    fn deadline_prefers_reads_but_gives_writes_a_batch_after_writes_starved_read_batches() {
        let mut e = deadline(1);
        for i in 0..10 {
            add(&mut e, i, Dir::Read, i * 8, 0);
            add(&mut e, 100 + i, Dir::Write, 1_000_000 + i * 8, 0);
        }
        let dirs: Vec<char> = (0..9)
            .map(|_| {
                if e.dispatch(0).unwrap() < 100 {
                    'R'
                } else {
                    'W'
                }
            })
            .collect();
        assert_eq!(dirs.iter().collect::<String>(), "RRWRRWRRW");
    }

    #[test]
    fn deadline_merged_request_inherits_the_earlier_fifo_position() {
        let mut e = deadline(16);
        add(&mut e, 1, Dir::Write, 100, 0); // oldest
        add(&mut e, 2, Dir::Write, 5000, MSEC);
        add(&mut e, 3, Dir::Write, 200, 2 * MSEC);
        // 1 is merged into 3 (3 absorbs the older request): 3 becomes the FIFO head.
        e.merged_requests(3, 1, 0);
        assert_eq!(e.dispatch(0), Some(3));
    }

    fn dirs_of(e: &mut Elevator, n: usize) -> String {
        (0..n)
            .map(|_| match e.dispatch(0) {
                Some(id) if id < 100 => 'R',
                Some(_) => 'W',
                None => '-',
            })
            .collect()
    }

    /// `kernel-cfq.md` §11: a batch goes on for up to `fifo_batch` requests in its
    /// direction before the direction is chosen again; writes get a batch after
    /// `writes_starved` read batches. A batch cut short by the end of the sweep starts a new
    /// one.
    #[test]
    fn deadline_batches_run_fifo_batch_requests_before_the_direction_is_chosen_again() {
        let mut e = deadline(4);
        for i in 0..10 {
            add(&mut e, i, Dir::Read, i * 8, 0);
            add(&mut e, 100 + i, Dir::Write, 1_000_000 + i * 8, 0);
        }
        // Two read batches of 4, a write batch of 4, the last 2 reads (the sweep ends),
        // then the writes.
        assert_eq!(dirs_of(&mut e, 21), "RRRRRRRRWWWWRRWWWWWW-");
    }

    /// §11: the FIFO is looked at only when a batch starts: an expired request waits for
    /// the current batch to finish.
    #[test]
    fn deadline_checks_expiry_only_between_batches() {
        let mut e = deadline(3);
        add(&mut e, 1000, Dir::Write, 1000, 0);
        add(&mut e, 2000, Dir::Write, 2000, 0);
        assert_eq!(e.dispatch(0), Some(1000));
        add(&mut e, 10, Dir::Write, 10, MSEC);
        add(&mut e, 3000, Dir::Write, 3000, 2 * MSEC);
        add(&mut e, 4000, Dir::Write, 4000, 2 * MSEC);
        // Every request has expired by 10 s; the batch of 3 still sweeps on.
        assert_eq!(e.dispatch(10 * SEC), Some(2000));
        assert_eq!(e.dispatch(10 * SEC), Some(3000));
        // New batch: the expired FIFO head (LBA 10, older than 4000) comes first.
        assert_eq!(e.dispatch(10 * SEC), Some(10));
        assert_eq!(e.dispatch(10 * SEC), Some(4000));
    }

    /// §11: reads expire `read_expire` (HZ/2) after they were queued, writes
    /// `write_expire` (5 HZ) after; 3.9's `deadline_check_fifo` uses `time_after`, so a
    /// request is expired only once its deadline has passed, not at the deadline itself.
    #[test]
    fn deadline_requests_expire_after_read_expire_and_write_expire() {
        let run = |dir: Dir, dispatch_at: Nanos| {
            let mut e = deadline(2);
            add(&mut e, 1000, dir, 1000, 0);
            add(&mut e, 2000, dir, 2000, 0);
            assert_eq!(e.dispatch(0), Some(1000));
            add(&mut e, 10, dir, 10, MSEC);
            add(&mut e, 3000, dir, 3000, 2 * MSEC);
            assert_eq!(e.dispatch(2 * MSEC), Some(2000));
            e.dispatch(dispatch_at)
        };
        for (dir, expire) in [
            (Dir::Read, DEADLINE_READ_EXPIRE),
            (Dir::Write, DEADLINE_WRITE_EXPIRE),
        ] {
            assert_eq!(run(dir, MSEC + expire - 1), Some(3000), "{dir:?}");
            assert_eq!(
                run(dir, MSEC + expire),
                Some(3000),
                "{dir:?}: at the deadline"
            );
            assert_eq!(run(dir, MSEC + expire + 1), Some(10), "{dir:?}");
        }
        assert_eq!(DEADLINE_READ_EXPIRE, 500 * MSEC);
        assert_eq!(DEADLINE_WRITE_EXPIRE, 5 * SEC);
    }

    /// §11 (`deadline_merged`): after a front merge the request's start sector moved, and
    /// it is re-sorted, so the sweep reaches it at its new place.
    #[test]
    fn deadline_front_merged_request_is_swept_at_its_new_start_sector() {
        let mut e = deadline(16);
        add(&mut e, 1, Dir::Write, 100, 0);
        add(&mut e, 3, Dir::Write, 300, 0);
        add(&mut e, 6, Dir::Write, 600, 0);
        e.front_merged(6, 200, 8);
        assert_eq!(drain(&mut e, 0), vec![1, 6, 3]);
    }

    /// `front_merges` is a deadline tunable (on by default); noop always front-merges.
    #[test]
    fn deadline_front_merges_follow_the_tunable() {
        assert!(deadline(16).allows_front_merge());
        let off = Elevator::new(
            ElevatorKind::Deadline(DeadlineTunables {
                front_merges: false,
                ..DeadlineTunables::default()
            }),
            true,
            1,
        );
        assert!(!off.allows_front_merge());
        assert!(Elevator::new(ElevatorKind::Noop, true, 1).allows_front_merge());
    }

    /// §11 (`deadline_merged_requests`): the kept request takes the other's FIFO place
    /// only if that one expires strictly earlier.
    #[test]
    fn deadline_merge_keeps_the_fifo_place_on_equal_expiry() {
        let mut e = deadline(16);
        add(&mut e, 1, Dir::Write, 5000, 0);
        add(&mut e, 2, Dir::Write, 100, 0);
        add(&mut e, 3, Dir::Write, 9000, 0);
        // Same expiry time: 3 stays behind 2 in the FIFO.
        e.merged_requests(3, 1, 0);
        assert_eq!(e.dispatch(0), Some(2));
    }

    #[test]
    fn noop_dispatches_in_arrival_order() {
        let mut e = Elevator::new(ElevatorKind::Noop, true, 1);
        for (id, lba) in [(1, 900), (2, 100), (3, 500)] {
            add(&mut e, id, Dir::Write, lba, 0);
        }
        e.merged_requests(1, 3, 0);
        assert_eq!(drain(&mut e, 0), vec![1, 2]);
    }
}
