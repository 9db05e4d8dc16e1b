//! The request queue of one device: request pools, congestion, merging, dispatch and
//! completion (`block/blk-core.c`, `block/blk-merge.c`, `block/elevator.c`, 3.x).

use super::diskstats::DiskStats;
use super::elevator::{Elevator, ElevatorKind};
use super::{Bio, Class, Dir, IoContext, ReqId, ReqMap, Request};
use crate::engine::{Nanos, MSEC};
use std::cell::Cell;

/// Default `nr_requests` per class: `BLKDEV_MAX_RQ` (`include/linux/blkdev.h`).
pub const BLKDEV_MAX_RQ: u32 = 128;
/// Default largest request: `BLK_DEF_MAX_SECTORS` = 1024 sectors = 512 KiB
/// (`include/linux/blkdev.h`).
pub const BLK_DEF_MAX_SECTORS: u32 = 1024;
/// Requests a batcher may allocate past a full pool: `BLK_BATCH_REQ` (`block/blk.h`).
pub const BLK_BATCH_REQ: u32 = 32;
/// How long a task stays a batcher after it waited for a request: `BLK_BATCH_TIME` =
/// `HZ / 50` (`block/blk.h`).
pub const BLK_BATCH_TIME: Nanos = 20 * MSEC;

/// Per-queue settings (sysfs `queue/nr_requests`, `queue/max_sectors_kb`, `queue/scheduler`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueConfig {
    /// Requests per class before submitters sleep. At least 2 (`queue_requests_store`
    /// clamps to `BLKDEV_MIN_RQ` = 4; 2 keeps the thresholds meaningful).
    pub nr_requests: u32,
    /// Largest request in sectors, at least 1.
    pub max_sectors: u32,
    /// How many dispatched requests the device holds at once (1: no NCQ, e.g. USB storage;
    /// 31: SATA NCQ).
    pub depth: u32,
    pub elevator: ElevatorKind,
    /// `queue/rotational`: false for an SSD (CFQ then counts small requests as seeks and,
    /// with a queueing device, does not idle).
    pub rotational: bool,
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig {
            nr_requests: BLKDEV_MAX_RQ,
            max_sectors: BLK_DEF_MAX_SECTORS,
            depth: 1,
            elevator: ElevatorKind::default(),
            rotational: true,
        }
    }
}

/// `queue_congestion_on_threshold`: `nr - nr/8 + 1`, capped at `nr` (113 of 128).
pub fn congestion_on_threshold(nr_requests: u32) -> u32 {
    (nr_requests - nr_requests / 8 + 1).min(nr_requests)
}

/// `queue_congestion_off_threshold`: `nr - nr/8 - nr/16 - 1`, at least 1 (103 of 128).
pub fn congestion_off_threshold(nr_requests: u32) -> u32 {
    (nr_requests - nr_requests / 8)
        .saturating_sub(nr_requests / 16 + 1)
        .max(1)
}

/// The part of a task's `io_context` the allocator uses: the "batcher" allowance.
/// Keep one per submitting task.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BatchState {
    nr_batch_requests: u32,
    last_waited: Nanos,
}

impl BatchState {
    /// `ioc_batching`: may this task allocate past a full pool?
    pub fn is_batching(&self, now: Nanos) -> bool {
        self.nr_batch_requests == BLK_BATCH_REQ
            || (self.nr_batch_requests > 0 && now < self.last_waited + BLK_BATCH_TIME)
    }

    /// `ioc_set_batching`: call when the task was woken after [`Submit::Full`] (the queue
    /// also calls it on the task that marks a pool full).
    pub fn start(&mut self, now: Nanos) {
        if self.is_batching(now) {
            return;
        }
        self.nr_batch_requests = BLK_BATCH_REQ;
        self.last_waited = now;
    }
}

/// What freeing a request changed (`freed_request` / `__freed_request`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Release {
    /// The pool the request came from.
    pub class: Class,
    /// The class was congested and no longer is.
    pub congestion_cleared: bool,
    /// The count is below the off threshold, so `clear_bdi_congested` ran and wakes **all**
    /// `congestion_wait` sleepers of that class (true on every such free, not only on the
    /// transition: `kernel-reclaim.md` §4.8).
    pub congestion_wake: bool,
    /// The pool has room again (`count + 1 <= nr_requests`): wake one task that got
    /// [`Submit::Full`] for this class.
    pub slots_freed: bool,
}

/// Result of [`RequestQueue::submit_bio`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Submit {
    /// Merged into a queued request. If that made it adjacent to another queued request and
    /// the two merged, one request was freed: `freed` says what that changed.
    Merged { freed: Option<Release> },
    /// A new request was allocated and queued.
    Queued,
    /// No request available: the submitter must sleep until a completion reports
    /// `slots_freed` for the bio's class, call [`BatchState::start`], and resubmit.
    Full,
}

/// Result of [`RequestQueue::complete`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    /// The tags of every bio in the request, in LBA order.
    pub tags: Vec<u64>,
    pub dir: Dir,
    pub sector: u64,
    pub nr_sectors: u32,
    /// Time from request creation to completion.
    pub latency: Nanos,
    pub release: Release,
    /// The elevator asks for the queue to be run again (CFQ's `cfq_schedule_dispatch` when
    /// nothing is left at the driver): wake any idle driver task.
    pub kick: bool,
}

/// A set of (sector, request) pairs, sorted as a `BTreeSet` of them would be, in a vector:
/// a queue holds a few hundred requests at most, where a binary search and a short move
/// cost less than a B-tree's walk from the root (the merge lookups run once per bio).
/// The second field is where the last lookup or move ended: a stream of adjacent bios asks
/// there next (the kernel's `q->last_merge`), so it is tried before a search.
#[derive(Debug, Default)]
struct SectorIndex(Vec<(u64, ReqId)>, Cell<usize>);

impl SectorIndex {
    /// Add a pair (nothing if it is there already).
    fn insert(&mut self, pair: (u64, ReqId)) {
        if let Err(i) = self.0.binary_search(&pair) {
            self.0.insert(i, pair);
        }
    }

    /// Remove a pair (nothing if it is not there).
    fn remove(&mut self, pair: &(u64, ReqId)) {
        if let Ok(i) = self.0.binary_search(pair) {
            self.0.remove(i);
        }
    }

    /// Move a request's pair from `old` to `new` sector: [`SectorIndex::remove`] then
    /// [`SectorIndex::insert`], in place when no other pair lies between the two.
    fn relocate(&mut self, id: ReqId, old: u64, new: u64) {
        match self.0.binary_search(&(old, id)) {
            Ok(i) => self.relocate_at(i, new),
            Err(_) => self.insert((new, id)),
        }
    }

    /// [`SectorIndex::relocate`] of the pair at position `i`.
    fn relocate_at(&mut self, i: usize, new: u64) {
        let v = &mut self.0;
        let pair = (new, v[i].1);
        // Between its neighbours, the new pair is nowhere else in the sorted set.
        let fits_left = i == 0 || v[i - 1] < pair;
        let fits_right = i + 1 == v.len() || pair < v[i + 1];
        if fits_left && fits_right {
            v[i] = pair;
            self.1.set(i);
        } else {
            v.remove(i);
            match v.binary_search(&pair) {
                Err(j) => {
                    v.insert(j, pair);
                    self.1.set(j);
                }
                Ok(j) => self.1.set(j),
            }
        }
    }

    /// The position of the first pair at or after `sector`: the hint if it is that, else
    /// by binary search.
    #[inline]
    fn lower_bound(&self, sector: u64) -> usize {
        let v = &self.0;
        let h = self.1.get();
        if h < v.len() && v[h].0 >= sector && (h == 0 || v[h - 1].0 < sector) {
            return h;
        }
        let i = v.partition_point(|&(s, _)| s < sector);
        self.1.set(i);
        i
    }

    /// The first pair at `sector` whose request passes `ok`, with its position.
    fn find_at(&self, sector: u64, mut ok: impl FnMut(ReqId) -> bool) -> Option<(ReqId, usize)> {
        let i = self.lower_bound(sector);
        self.0[i..]
            .iter()
            .take_while(|&&(s, _)| s == sector)
            .position(|&(_, id)| ok(id))
            .map(|j| (self.0[i + j].1, i + j))
    }

    /// The requests at `sector`, in id order.
    fn at(&self, sector: u64) -> impl Iterator<Item = ReqId> + '_ {
        let i = self.lower_bound(sector);
        self.0[i..]
            .iter()
            .take_while(move |&&(s, _)| s == sector)
            .map(|&(_, id)| id)
    }
}

/// The request queue of one device.
#[derive(Debug)]
pub struct RequestQueue {
    name: String,
    cfg: QueueConfig,
    elevator: Elevator,
    /// Requests in the elevator, not yet dispatched (looked up by id, never iterated).
    queued: ReqMap<Request>,
    /// Merge index: queued requests by (direction, start sector) and (direction, end).
    by_start: [SectorIndex; 2],
    by_end: [SectorIndex; 2],
    /// Allocated requests per class (queued + at the driver): `rl->count[sync]`.
    count: [u32; 2],
    full: [bool; 2],
    congested: [bool; 2],
    in_driver: u32,
    next_id: ReqId,
    stats: DiskStats,
    spare_tags: Vec<Vec<u64>>,
}

impl RequestQueue {
    /// A queue for the device `name` (used in messages and by the diskstats line).
    ///
    /// # Panics
    /// If `nr_requests < 2`, `max_sectors == 0` or `depth == 0`: those are programming
    /// errors of the caller, which builds configs from validated device parameters.
    pub fn new(name: &str, cfg: QueueConfig) -> Self {
        assert!(
            cfg.nr_requests >= 2,
            "{name}: nr_requests must be at least 2"
        );
        assert!(
            cfg.max_sectors >= 1,
            "{name}: max_sectors must be at least 1"
        );
        assert!(cfg.depth >= 1, "{name}: depth must be at least 1");
        RequestQueue {
            name: name.to_string(),
            cfg,
            elevator: Elevator::new(cfg.elevator, cfg.rotational, cfg.depth),
            queued: ReqMap::default(),
            by_start: Default::default(),
            by_end: Default::default(),
            count: [0; 2],
            full: [false; 2],
            congested: [false; 2],
            in_driver: 0,
            next_id: 0,
            stats: DiskStats::default(),
            spare_tags: Vec::new(),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn config(&self) -> &QueueConfig {
        &self.cfg
    }
    /// Change how many requests the device may hold at once.
    pub fn set_depth(&mut self, depth: u32) {
        assert!(depth >= 1, "{}: depth must be at least 1", self.name);
        self.cfg.depth = depth;
    }
    pub fn depth(&self) -> u32 {
        self.cfg.depth
    }
    /// Allocated requests of a class (`rl->count[sync]`).
    pub fn count(&self, class: Class) -> u32 {
        self.count[class.index()]
    }
    /// `bdi_write_congested`: the async pool is congested.
    pub fn write_congested(&self) -> bool {
        self.congested[Class::Async.index()]
    }
    /// `bdi_read_congested`: the sync pool is congested.
    pub fn read_congested(&self) -> bool {
        self.congested[Class::Sync.index()]
    }
    pub fn congested(&self, class: Class) -> bool {
        self.congested[class.index()]
    }
    /// Requests created and not completed (diskstats `in_flight`): queued + at the device.
    pub fn in_flight(&self) -> u32 {
        self.queued.len() as u32 + self.in_driver
    }
    /// Requests waiting in the elevator.
    pub fn queued(&self) -> u32 {
        self.queued.len() as u32
    }
    /// Requests dispatched and not completed.
    pub fn in_driver(&self) -> u32 {
        self.in_driver
    }
    /// The device's counters as last updated (times accrue only at the last event).
    pub fn stats(&self) -> &DiskStats {
        &self.stats
    }
    /// The counters as `/proc/diskstats` shows them at `now` (`diskstats_show` first
    /// brings `io_ticks` and `time_in_queue` up to date).
    pub fn stats_at(&self, now: Nanos) -> DiskStats {
        self.stats.snapshot(now)
    }
    /// Give a tag vector back (from a [`Completion`]) so the next request reuses it.
    pub fn recycle_tags(&mut self, mut tags: Vec<u64>) {
        tags.clear();
        if self.spare_tags.len() < 256 {
            self.spare_tags.push(tags);
        }
    }

    /// Submit a bio from a task with no batcher state: it gets [`Submit::Full`] as soon as
    /// the pool is full (the kernel would let the task that fills the pool finish a batch;
    /// use [`RequestQueue::submit_bio_batching`] for that).
    pub fn submit_bio(&mut self, bio: Bio, now: Nanos) -> Submit {
        self.submit_bio_batching(bio, None, now)
    }

    /// `blk_queue_bio`: merge the bio into a queued request, or allocate a new one.
    /// `batch` is the submitting task's batcher state, if it keeps one.
    ///
    /// # Panics
    /// If the bio is empty or larger than `max_sectors` (the caller builds bios).
    pub fn submit_bio_batching(
        &mut self,
        bio: Bio,
        batch: Option<&mut BatchState>,
        now: Nanos,
    ) -> Submit {
        self.submit_bio_from(bio, 0, batch, now)
    }

    /// `blk_queue_bio` for a bio from the task with io context `ioc` (CFQ queues and
    /// merges by it).
    ///
    /// # Panics
    /// If the bio is empty or larger than `max_sectors` (the caller builds bios).
    pub fn submit_bio_from(
        &mut self,
        bio: Bio,
        ioc: IoContext,
        batch: Option<&mut BatchState>,
        now: Nanos,
    ) -> Submit {
        assert!(
            bio.nr_sectors >= 1 && bio.nr_sectors <= self.cfg.max_sectors,
            "{}: bio of {} sectors (max_sectors {})",
            self.name,
            bio.nr_sectors,
            self.cfg.max_sectors
        );
        if let Some(freed) = self.try_merge(&bio, ioc, now) {
            self.stats.account_merge(bio.dir);
            return Submit::Merged { freed };
        }
        if !self.get_request(bio.class(), ioc, batch, now) {
            return Submit::Full;
        }
        let id = self.next_id;
        self.next_id += 1;
        let mut tags = self.spare_tags.pop().unwrap_or_default();
        tags.push(bio.tag);
        let rq = Request {
            id,
            dir: bio.dir,
            class: bio.class(),
            ioc,
            sector: bio.sector,
            nr_sectors: bio.nr_sectors,
            tags,
            start_time: now,
            dispatch_time: None,
        };
        self.index_insert(&rq);
        self.elevator.add(&rq, now);
        self.queued.insert(id, rq);
        self.stats.account_new_request(now);
        Submit::Queued
    }

    /// `__get_request`: take a request from the class's pool, or refuse.
    fn get_request(
        &mut self,
        class: Class,
        ioc: IoContext,
        batch: Option<&mut BatchState>,
        now: Nanos,
    ) -> bool {
        let c = class.index();
        let nr = self.cfg.nr_requests;
        let count = self.count[c];
        let must = self.elevator.may_queue(class, ioc, now);
        let batching = batch.as_ref().is_some_and(|b| b.is_batching(now));
        let mut batch = batch;
        if count + 1 >= congestion_on_threshold(nr) {
            if count + 1 >= nr {
                if !self.full[c] {
                    // This allocation fills the pool: mark it full and let this task
                    // finish its batch; others will sleep.
                    if let Some(b) = batch.as_deref_mut() {
                        b.start(now);
                    }
                    self.full[c] = true;
                } else if !must && !batching {
                    return false;
                }
            }
            self.congested[c] = true;
        }
        if count >= nr * 3 / 2 {
            return false;
        }
        self.count[c] += 1;
        if let Some(b) = batch {
            if b.is_batching(now) {
                b.nr_batch_requests -= 1;
            }
        }
        true
    }

    /// `__freed_request`.
    fn freed_request(&mut self, class: Class) -> Release {
        let c = class.index();
        self.count[c] -= 1;
        let nr = self.cfg.nr_requests;
        let mut release = Release {
            class,
            congestion_cleared: false,
            congestion_wake: false,
            slots_freed: false,
        };
        if self.count[c] < congestion_off_threshold(nr) {
            release.congestion_cleared = self.congested[c];
            release.congestion_wake = true;
            self.congested[c] = false;
        }
        if self.count[c] < nr {
            release.slots_freed = true;
            self.full[c] = false;
        }
        release
    }

    fn index_insert(&mut self, rq: &Request) {
        let d = rq.dir.index();
        self.by_start[d].insert((rq.sector, rq.id));
        self.by_end[d].insert((rq.end(), rq.id));
    }

    fn index_remove(&mut self, dir: Dir, sector: u64, end: u64, id: ReqId) {
        let d = dir.index();
        self.by_start[d].remove(&(sector, id));
        self.by_end[d].remove(&(end, id));
    }

    fn fits(&self, a: u32, b: u32) -> bool {
        a + b <= self.cfg.max_sectors
    }

    /// A queued request that ends where `bio` starts and may take it (a back merge), with
    /// its position in the end index.
    fn back_merge_candidate(&self, bio: &Bio, ioc: IoContext) -> Option<(ReqId, usize)> {
        let d = bio.dir.index();
        self.by_end[d].find_at(bio.sector, |id| {
            self.fits(self.queued[&id].nr_sectors, bio.nr_sectors)
                && self.elevator.allow_merge(id, bio.class(), ioc)
        })
    }

    /// A queued request that starts where `bio` ends and may take it (a front merge), if
    /// the elevator front-merges at all.
    fn front_merge_candidate(&self, bio: &Bio, ioc: IoContext) -> Option<ReqId> {
        if !self.elevator.allows_front_merge() {
            return None;
        }
        let d = bio.dir.index();
        let end = bio.end();
        self.by_start[d].at(end).find(|&id| {
            self.fits(self.queued[&id].nr_sectors, bio.nr_sectors)
                && self.elevator.allow_merge(id, bio.class(), ioc)
        })
    }

    /// Whether `get_request` is certain to allocate a request of `class` now: the pool is
    /// below the allocation that would fill it.
    pub fn has_free_request(&self, class: Class) -> bool {
        self.count[class.index()] + 1 < self.cfg.nr_requests
    }

    /// Whether `bio` would merge into a queued request.
    pub fn would_merge(&self, bio: &Bio, ioc: IoContext) -> bool {
        self.back_merge_candidate(bio, ioc).is_some()
            || self.front_merge_candidate(bio, ioc).is_some()
    }

    /// Whether `get_request` would allocate a request of `class` now without the task
    /// sleeping: a free request, the allocation that fills the pool (neither marks it
    /// full before), or a batcher's allowance, always below the hard cap. CFQ's `ELV_MQUEUE_MUST` is left out: only a sync queue idling for its
    /// next request gets it, and the callers (reclaim's writes) are async.
    pub fn would_allocate(&self, class: Class, batch: Option<&BatchState>, now: Nanos) -> bool {
        let c = class.index();
        let batching = batch.is_some_and(|b| b.is_batching(now));
        // Below nr_requests - 1 the pool is never marked full, so `!full` covers it.
        self.count[c] < self.cfg.nr_requests * 3 / 2 && (!self.full[c] || batching)
    }

    /// Back or front merge of `bio` into a queued request; `None` if neither is possible,
    /// `Some(freed)` on success.
    fn try_merge(&mut self, bio: &Bio, ioc: IoContext, now: Nanos) -> Option<Option<Release>> {
        let d = bio.dir.index();
        if let Some((id, pos)) = self.back_merge_candidate(bio, ioc) {
            let rq = self.queued.get_mut(&id).expect("indexed request is queued");
            let old_end = rq.end();
            rq.nr_sectors += bio.nr_sectors;
            rq.tags.push(bio.tag);
            let end = rq.end();
            let nr_sectors = rq.nr_sectors;
            self.elevator.back_merged(id, nr_sectors);
            debug_assert_eq!(self.by_end[d].0[pos], (old_end, id));
            self.by_end[d].relocate_at(pos, end);
            // attempt_back_merge: the next request may now be adjacent.
            let next = self.by_start[d].at(end).find(|n| *n != id);
            let freed = next.and_then(|n| self.merge_requests(id, n, now));
            return Some(freed);
        }
        let id = self.front_merge_candidate(bio, ioc)?;
        let rq = self.queued.get_mut(&id).expect("indexed request is queued");
        let old_sector = rq.sector;
        rq.sector = bio.sector;
        rq.nr_sectors += bio.nr_sectors;
        rq.tags.insert(0, bio.tag);
        let nr_sectors = rq.nr_sectors;
        self.by_start[d].relocate(id, old_sector, bio.sector);
        self.elevator.front_merged(id, bio.sector, nr_sectors);
        // attempt_front_merge: a previous request may now end where this one starts.
        let prev = self.by_end[d].at(bio.sector).find(|p| *p != id);
        let freed = prev.and_then(|p| self.merge_requests(p, id, now));
        Some(freed)
    }

    /// `attempt_merge`: append queued request `next` to queued request `rq` (adjacent, same
    /// direction) if the result fits; frees `next`.
    fn merge_requests(&mut self, rq: ReqId, next: ReqId, now: Nanos) -> Option<Release> {
        let (a, b) = (&self.queued[&rq], &self.queued[&next]);
        if a.dir != b.dir || a.end() != b.sector || !self.fits(a.nr_sectors, b.nr_sectors) {
            return None;
        }
        let mut gone = self.queued.remove(&next).expect("queued");
        self.index_remove(gone.dir, gone.sector, gone.end(), next);
        let keep = self.queued.get_mut(&rq).expect("queued");
        let old_end = keep.end();
        keep.nr_sectors += gone.nr_sectors;
        keep.tags.append(&mut gone.tags);
        keep.start_time = keep.start_time.min(gone.start_time);
        let (dir, new_end, nr_sectors) = (keep.dir, keep.end(), keep.nr_sectors);
        self.by_end[dir.index()].relocate(rq, old_end, new_end);
        self.elevator.merged_requests(rq, next, nr_sectors);
        self.stats.account_request_merge(now);
        self.recycle_tags(gone.tags);
        Some(self.freed_request(gone.class))
    }

    /// When the elevator wants to be asked for a dispatch again even if nothing is
    /// submitted or completed meanwhile (CFQ's idle timer): a driver that got `None` from
    /// [`RequestQueue::dispatch`] sleeps until then at most.
    pub fn next_timer(&self) -> Option<Nanos> {
        self.elevator.next_timer()
    }

    #[cfg(test)]
    pub(crate) fn elevator_ref(&self) -> &Elevator {
        &self.elevator
    }

    /// Hand the next request to the driver, if the device has room (`depth`) and the
    /// elevator has one.
    pub fn dispatch(&mut self, now: Nanos) -> Option<Request> {
        if self.in_driver >= self.cfg.depth {
            return None;
        }
        let id = self.elevator.dispatch(now)?;
        let mut rq = self
            .queued
            .remove(&id)
            .expect("elevator returns queued ids");
        self.index_remove(rq.dir, rq.sector, rq.end(), id);
        rq.dispatch_time = Some(now);
        self.in_driver += 1;
        Some(rq)
    }

    /// The device finished `rq` (`blk_finish_request`, `__blk_put_request`).
    ///
    /// # Panics
    /// If no request is at the driver.
    pub fn complete(&mut self, rq: Request, now: Nanos) -> Completion {
        assert!(
            self.in_driver > 0,
            "{}: completion with nothing dispatched",
            self.name
        );
        self.in_driver -= 1;
        self.stats.account_done(&rq, now);
        let kick = self.elevator.completed(rq.id, now);
        let release = self.freed_request(rq.class);
        Completion {
            kick,
            latency: now.saturating_sub(rq.start_time),
            dir: rq.dir,
            sector: rq.sector,
            nr_sectors: rq.nr_sectors,
            tags: rq.tags,
            release,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::elevator::DeadlineTunables;
    use std::collections::{BTreeMap, BTreeSet};

    /// A lookup leaves its hint where it ended, and a move where the pair went: a stream of
    /// adjacent bios then finds its request without a search.
    #[test]
    fn lookups_and_moves_leave_the_hint_where_the_next_adjacent_lookup_starts() {
        let mut idx = SectorIndex::default();
        for (s, id) in [(8, 1), (16, 2), (24, 3), (40, 4)] {
            idx.insert((s, id));
        }
        assert!(idx.at(24).eq([3]));
        assert_eq!(
            idx.1.get(),
            2,
            "a search ends at the first pair at or after 24"
        );
        // A back merge grows request 3 in place to end at 32: the next bio starts there.
        idx.relocate_at(2, 32);
        assert_eq!((idx.1.get(), idx.0[2]), (2, (32, 3)));
        // Grown past request 4, it moves behind it, and the hint follows.
        idx.relocate_at(2, 48);
        assert_eq!((idx.1.get(), idx.0[3]), (3, (48, 3)));
        assert_eq!(idx.find_at(48, |_| true), Some((3, 3)));
        // A stale hint is not trusted.
        idx.1.set(0);
        assert!(idx.at(40).eq([4]));
        assert_eq!(idx.1.get(), 2);
    }

    /// The merge index holds what a `BTreeSet` of the same pairs would, in the same
    /// order, through inserts, removals and relocations (in place or not), and finds the
    /// requests at a sector as a range of the set would.
    #[test]
    fn the_sector_index_behaves_as_a_btree_set_of_its_pairs() {
        let mut idx = SectorIndex::default();
        let mut set = BTreeSet::new();
        let mut next = crate::test_numbers(7);
        for _ in 0..5000 {
            let (sector, id) = (next(64), next(16));
            match next(3) {
                0 => {
                    idx.insert((sector, id));
                    set.insert((sector, id));
                }
                1 => {
                    idx.remove(&(sector, id));
                    set.remove(&(sector, id));
                }
                _ => {
                    // Small moves (a merge grows a request) and large ones.
                    let new = if next(2) == 0 {
                        sector + next(3)
                    } else {
                        next(64)
                    };
                    idx.relocate(id, sector, new);
                    set.remove(&(sector, id));
                    set.insert((new, id));
                }
            }
            assert_eq!(idx.0, set.iter().copied().collect::<Vec<_>>());
            // Asked again, and at the next sector, the lookup starts from its hint.
            let s = next(64);
            for s in [s, s, s + 1] {
                assert!(idx
                    .at(s)
                    .eq(set.range((s, 0)..=(s, ReqId::MAX)).map(|&(_, id)| id)));
            }
        }
    }

    fn wbio(sector: u64, nr: u32, tag: u64) -> Bio {
        Bio {
            dir: Dir::Write,
            sync: false,
            sector,
            nr_sectors: nr,
            tag,
        }
    }

    fn queue() -> RequestQueue {
        RequestQueue::new("sda", QueueConfig::default())
    }

    /// Below the allocation that fills the pool (`nr_requests` - 1 requests in it), any
    /// allocation succeeds; then not for certain.
    #[test]
    fn a_free_request_is_certain_until_the_pool_is_one_short_of_full() {
        let mut q = queue();
        let nr = q.config().nr_requests as u64;
        for i in 0..nr - 2 {
            assert_eq!(q.submit_bio(wbio(i * 100, 8, i), 0), Submit::Queued);
        }
        assert!(q.has_free_request(Class::Async));
        assert_eq!(q.submit_bio(wbio(nr * 100, 8, nr), 0), Submit::Queued);
        assert!(
            !q.has_free_request(Class::Async),
            "{} of {nr} taken",
            nr - 1
        );
        assert!(q.has_free_request(Class::Sync), "the sync pool is its own");
    }

    #[test]
    fn thresholds_are_113_and_103_of_128() {
        assert_eq!(congestion_on_threshold(128), 113);
        assert_eq!(congestion_off_threshold(128), 103);
    }

    #[test]
    fn adjacent_bios_back_and_front_merge_into_one_request_carrying_all_tags() {
        let mut q = queue();
        assert_eq!(q.submit_bio(wbio(800, 8, 2), 0), Submit::Queued);
        assert_eq!(
            q.submit_bio(wbio(808, 8, 3), 0),
            Submit::Merged { freed: None }
        );
        assert_eq!(
            q.submit_bio(wbio(792, 8, 1), 0),
            Submit::Merged { freed: None }
        );
        assert_eq!(q.queued(), 1);
        let rq = q.dispatch(0).unwrap();
        assert_eq!((rq.sector(), rq.nr_sectors()), (792, 24));
        assert_eq!(rq.tags(), &[1, 2, 3]);
        assert_eq!(q.stats().writes_merged, 2);
        let c = q.complete(rq, 5 * MSEC);
        assert_eq!(c.tags, vec![1, 2, 3]);
        assert_eq!(q.stats().writes_completed, 1);
        assert_eq!(q.stats().sectors_written, 24);
    }

    #[test]
    fn a_bio_filling_the_gap_merges_the_two_neighbouring_requests() {
        let mut q = queue();
        q.submit_bio(wbio(0, 8, 1), 0);
        q.submit_bio(wbio(16, 8, 3), MSEC);
        assert_eq!(q.count(Class::Async), 2);
        let r = q.submit_bio(wbio(8, 8, 2), 2 * MSEC);
        let Submit::Merged { freed: Some(rel) } = r else {
            panic!("expected a request merge, got {r:?}")
        };
        assert!(rel.slots_freed);
        assert_eq!(q.count(Class::Async), 1);
        assert_eq!(q.in_flight(), 1);
        let rq = q.dispatch(2 * MSEC).unwrap();
        assert_eq!((rq.sector(), rq.nr_sectors()), (0, 24));
        assert_eq!(rq.tags(), &[1, 2, 3]);
        assert_eq!(rq.start_time(), 0);
    }

    #[test]
    fn a_merge_never_exceeds_max_sectors() {
        let mut q = queue();
        for i in 0..200u64 {
            q.submit_bio(wbio(i * 8, 8, i), 0);
        }
        // 1600 sectors of sequential 4 KiB bios: one full 1024-sector request and one of 576.
        assert_eq!(q.queued(), 2);
        let a = q.dispatch(0).unwrap();
        q.complete(a.clone(), MSEC);
        let b = q.dispatch(MSEC).unwrap();
        assert_eq!(a.nr_sectors(), BLK_DEF_MAX_SECTORS);
        assert_eq!(b.nr_sectors(), 576);
        assert_eq!(q.stats().writes_merged, 198);
    }

    #[test]
    fn non_adjacent_or_other_direction_bios_do_not_merge() {
        let mut q = queue();
        q.submit_bio(wbio(0, 8, 1), 0);
        assert_eq!(q.submit_bio(wbio(9, 8, 2), 0), Submit::Queued); // one-sector gap
        let read = Bio {
            dir: Dir::Read,
            ..wbio(8, 1, 3)
        };
        assert_eq!(q.submit_bio(read, 0), Submit::Queued); // adjacent but a read
        assert_eq!(q.queued(), 3);
        assert_eq!(q.stats().writes_merged + q.stats().reads_merged, 0);
    }

    #[test]
    fn dispatched_requests_take_no_more_merges() {
        let mut q = queue();
        q.submit_bio(wbio(0, 8, 1), 0);
        let rq = q.dispatch(0).unwrap();
        assert_eq!(q.submit_bio(wbio(8, 8, 2), 0), Submit::Queued);
        assert_eq!(rq.nr_sectors(), 8);
    }

    #[test]
    fn write_congestion_sets_at_113_async_requests_and_clears_only_below_103() {
        let mut q = queue();
        for i in 0..112u64 {
            q.submit_bio(wbio(i * 100, 8, i), 0);
        }
        assert!(!q.write_congested());
        q.submit_bio(wbio(112 * 100, 8, 112), 0);
        assert_eq!(q.count(Class::Async), 113);
        assert!(q.write_congested());
        assert!(!q.read_congested());
        let mut cleared_at = None;
        for t in 1..=20 {
            let rq = q.dispatch(t).unwrap();
            let c = q.complete(rq, t);
            if c.release.congestion_cleared {
                cleared_at = Some(q.count(Class::Async));
                break;
            }
            assert!(
                q.write_congested(),
                "still congested at {}",
                q.count(Class::Async)
            );
            assert!(!c.release.congestion_wake);
        }
        assert_eq!(cleared_at, Some(102));
        assert!(!q.write_congested());
        // Every later release below the off threshold wakes congestion_wait sleepers again.
        let rq = q.dispatch(100).unwrap();
        let c = q.complete(rq, 100);
        assert!(c.release.congestion_wake && !c.release.congestion_cleared);
    }

    #[test]
    fn sync_requests_count_in_their_own_pool() {
        let mut q = queue();
        for i in 0..120u64 {
            let read = Bio {
                dir: Dir::Read,
                ..wbio(i * 100, 8, i)
            };
            q.submit_bio(read, 0);
        }
        assert!(q.read_congested());
        assert!(!q.write_congested());
        assert_eq!(q.submit_bio(wbio(1, 8, 0), 0), Submit::Queued);
    }

    #[test]
    fn a_full_pool_returns_full_until_a_request_completes() {
        let mut q = queue();
        for i in 0..128u64 {
            assert_eq!(
                q.submit_bio(wbio(i * 100, 8, i), 0),
                Submit::Queued,
                "bio {i}"
            );
        }
        assert_eq!(q.submit_bio(wbio(1_000_000, 8, 999), 0), Submit::Full);
        // A merge needs no new request, so it still succeeds.
        assert!(matches!(
            q.submit_bio(wbio(8, 8, 1000), 0),
            Submit::Merged { .. }
        ));
        let rq = q.dispatch(0).unwrap();
        let c = q.complete(rq, MSEC);
        assert!(c.release.slots_freed);
        assert_eq!(q.submit_bio(wbio(1_000_000, 8, 999), MSEC), Submit::Queued);
    }

    #[test]
    fn a_woken_batcher_may_exceed_the_pool_by_its_allowance_up_to_the_hard_cap() {
        let mut q = queue();
        for i in 0..128u64 {
            q.submit_bio(wbio(i * 100, 8, i), 0);
        }
        let mut batch = BatchState::default();
        let far = |i: u64| wbio(1_000_000 + i * 100, 8, i);
        assert_eq!(
            q.submit_bio_batching(far(0), Some(&mut batch), 0),
            Submit::Full
        );
        batch.start(0); // woken from the wait
        let mut extra = 0;
        while q.submit_bio_batching(far(extra + 1), Some(&mut batch), MSEC) == Submit::Queued {
            extra += 1;
        }
        assert_eq!(extra, u64::from(BLK_BATCH_REQ));
        // After BLK_BATCH_TIME the allowance lapses even with requests left.
        let mut late = BatchState::default();
        late.start(0);
        let mut q2 = queue();
        for i in 0..128u64 {
            q2.submit_bio(wbio(i * 100, 8, i), 0);
        }
        assert_eq!(
            q2.submit_bio_batching(far(0), Some(&mut late), MSEC),
            Submit::Queued
        );
        assert_eq!(
            q2.submit_bio_batching(far(1), Some(&mut late), 30 * MSEC),
            Submit::Full
        );
        // Hard cap 1.5 × nr_requests whatever the allowance.
        let mut q3 = RequestQueue::new(
            "sdb",
            QueueConfig {
                nr_requests: 16,
                ..QueueConfig::default()
            },
        );
        let mut b3 = BatchState::default();
        b3.start(0);
        let mut n = 0;
        while q3.submit_bio_batching(far(n), Some(&mut b3), 0) == Submit::Queued {
            n += 1;
        }
        assert_eq!(n, 24);
    }

    #[test]
    fn would_take_agrees_with_what_submission_then_does() {
        let mut q = queue();
        for i in 0..128u64 {
            q.submit_bio(wbio(i * 100, 8, i), 0);
        }
        let far = wbio(1_000_000, 8, 999);
        let next = wbio(8, 8, 998); // starts where the first request ends
                                    // A full pool: a bio that back-merges is taken, one that needs a request is not.
        assert!(q.would_merge(&next, 0));
        assert!(!q.would_merge(&far, 0));
        assert!(!q.would_allocate(Class::Async, None, 0));
        assert_eq!(q.submit_bio(far, 0), Submit::Full);
        assert_eq!(q.submit_bio(next, 0), Submit::Merged { freed: None });
        // A woken batcher may allocate past the full pool, and submission agrees.
        let mut batch = BatchState::default();
        batch.start(0);
        assert!(q.would_allocate(Class::Async, Some(&batch), MSEC));
        assert_eq!(
            q.submit_bio_batching(far, Some(&mut batch), MSEC),
            Submit::Queued
        );
        // Sync requests have their own pool.
        assert!(q.would_allocate(Class::Sync, None, MSEC));
    }

    #[test]
    fn would_allocate_agrees_with_get_request_through_fill_batch_and_hard_cap() {
        for nr in [4, 16, 128] {
            let mut q = RequestQueue::new(
                "sda",
                QueueConfig {
                    nr_requests: nr,
                    ..QueueConfig::default()
                },
            );
            let mut batch = BatchState::default();
            for i in 0..u64::from(nr) * 2 {
                // Now and then the task is woken from a wait and batches again.
                if i % 7 == 6 {
                    batch.start(i * MSEC);
                }
                let now = i * MSEC;
                let would = q.would_allocate(Class::Async, Some(&batch), now);
                let did = q.submit_bio_batching(wbio(i * 100, 8, i), Some(&mut batch), now);
                assert_eq!(would, did == Submit::Queued, "nr {nr}, bio {i}: {did:?}");
            }
            assert_eq!(q.count(Class::Async), nr * 3 / 2, "up to the hard cap");
        }
    }

    #[test]
    fn dispatch_respects_the_device_depth() {
        let mut q = queue();
        q.set_depth(2);
        for i in 0..4u64 {
            q.submit_bio(wbio(i * 100, 8, i), 0);
        }
        let a = q.dispatch(0).unwrap();
        let _b = q.dispatch(0).unwrap();
        assert!(q.dispatch(0).is_none());
        assert_eq!((q.in_driver(), q.in_flight()), (2, 4));
        q.complete(a, MSEC);
        assert!(q.dispatch(MSEC).is_some());
    }

    #[test]
    fn deadline_queue_dispatches_ascending_lba_from_the_fifo_head() {
        let mut q = RequestQueue::new(
            "sda",
            QueueConfig {
                elevator: ElevatorKind::Deadline(DeadlineTunables::default()),
                ..QueueConfig::default()
            },
        );
        for (tag, s) in [(0, 5000), (1, 100), (2, 9000), (3, 7000), (4, 6000)] {
            q.submit_bio(wbio(s, 8, tag), 0);
        }
        let order: Vec<u64> = std::iter::from_fn(|| {
            let rq = q.dispatch(0)?;
            let s = rq.sector();
            q.complete(rq, 0);
            Some(s)
        })
        .collect();
        assert_eq!(order, vec![5000, 6000, 7000, 9000, 100]);
    }

    /// Random submit/dispatch/complete sequences (deterministic seeds) with every elevator:
    /// every accepted bio completes exactly once, inside a request whose bios tile its sector
    /// range, never above `max_sectors`; pool counts, `in_flight` and diskstats agree.
    #[test]
    fn random_traffic_keeps_requests_contiguous_and_accounting_consistent() {
        for seed in 0..40u64 {
            let elevator = match seed % 3 {
                0 => ElevatorKind::deadline(),
                1 => ElevatorKind::Noop,
                _ => ElevatorKind::cfq(),
            };
            let cfg = QueueConfig {
                nr_requests: 16,
                max_sectors: 64,
                depth: 1 + (seed % 3) as u32,
                elevator,
                rotational: true,
            };
            let mut q = RequestQueue::new("sdx", cfg);
            let mut lcg = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            let mut rnd = |n: u64| {
                lcg = lcg
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (lcg >> 33) % n
            };
            let mut bios = BTreeMap::new();
            let mut at_device = Vec::new();
            let mut done = BTreeSet::new();
            let (mut written, mut read) = (0u64, 0u64);
            for step in 0..3000u64 {
                let now = step * MSEC;
                match rnd(4) {
                    0 | 1 => {
                        let bio = Bio {
                            dir: if rnd(4) == 0 { Dir::Read } else { Dir::Write },
                            sync: rnd(3) == 0,
                            sector: rnd(64) * 8,
                            nr_sectors: 8 * (1 + rnd(2) as u32),
                            tag: step,
                        };
                        let ioc = rnd(3) as IoContext;
                        if q.submit_bio_from(bio, ioc, None, now) != Submit::Full {
                            bios.insert(step, bio);
                        }
                    }
                    2 => {
                        if let Some(rq) = q.dispatch(now) {
                            at_device.push(rq);
                        }
                    }
                    _ => {
                        if !at_device.is_empty() {
                            let rq = at_device.remove(rnd(at_device.len() as u64) as usize);
                            assert!(rq.nr_sectors() <= cfg.max_sectors);
                            let mut next = rq.sector();
                            for tag in rq.tags() {
                                let b = bios[tag];
                                assert_eq!((b.sector, b.dir), (next, rq.dir()), "seed {seed}");
                                next = b.end();
                            }
                            assert_eq!(next, rq.end(), "seed {seed}");
                            let c = q.complete(rq, now);
                            for t in &c.tags {
                                assert!(done.insert(*t), "tag {t} completed twice");
                            }
                            match c.dir {
                                Dir::Read => read += u64::from(c.nr_sectors),
                                Dir::Write => written += u64::from(c.nr_sectors),
                            }
                        }
                    }
                }
                let counts = q.count(Class::Async) + q.count(Class::Sync);
                assert_eq!(counts, q.in_flight(), "seed {seed} step {step}");
                assert_eq!(u64::from(counts), q.stats().in_flight);
                assert!(q.in_driver() <= cfg.depth);
                assert!(q.count(Class::Async) <= cfg.nr_requests);
            }
            // Drain: every accepted bio completes exactly once.
            let mut now = 3000 * MSEC;
            for rq in std::mem::take(&mut at_device) {
                let c = q.complete(rq, now);
                written += u64::from(c.nr_sectors) * u64::from(c.dir == Dir::Write);
                read += u64::from(c.nr_sectors) * u64::from(c.dir == Dir::Read);
                done.extend(c.tags);
            }
            loop {
                let Some(rq) = q.dispatch(now) else {
                    // CFQ may idle with requests queued: wait for its timer.
                    match q.next_timer() {
                        Some(t) if q.queued() > 0 => {
                            now = now.max(t);
                            continue;
                        }
                        _ => break,
                    }
                };
                now += MSEC;
                let c = q.complete(rq, now);
                written += u64::from(c.nr_sectors) * u64::from(c.dir == Dir::Write);
                read += u64::from(c.nr_sectors) * u64::from(c.dir == Dir::Read);
                done.extend(c.tags);
            }
            assert_eq!(done.len(), bios.len(), "seed {seed}");
            assert_eq!((q.in_flight(), q.stats().in_flight), (0, 0));
            assert!(!q.write_congested() && !q.read_congested());
            let st = q.stats();
            assert_eq!((st.sectors_written, st.sectors_read), (written, read));
            let merged = st.reads_merged + st.writes_merged;
            let completed = st.reads_completed + st.writes_completed;
            // Each accepted bio made a request or merged into one; request-request merges
            // make the sum smaller.
            assert!(merged + completed <= bios.len() as u64);
        }
    }
}
