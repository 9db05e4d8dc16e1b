//! The NFS client's page-cache side (`fs/nfs/write.c`, `fs/nfs/file.c`, `fs/nfs/pagelist.c`,
//! `fs/nfs/read.c` of 3.x; `kernel-writeback.md` §3.3, §8): WRITE RPCs of up to `wsize`
//! built by a page-IO descriptor, unstable pages awaiting COMMIT, `nfs_write_inode` and its
//! defer rule, the mount's own congestion, and reclaim's `releasepage` and
//! `is_dirty_writeback` hooks. A mount's RPC slots ([`rpc_slot`]) carry its WRITE, COMMIT
//! and READ calls to the server model (`block::Nfs`); nothing of an NFS mount goes through
//! a block request queue.
//!
//! Page states on an NFS mount:
//! - dirty: PG_dirty;
//! - in a WRITE RPC: PG_writeback, counted in the mount's congestion (`nfss->writeback`);
//! - unstable (the server answered UNSTABLE; the page awaits a COMMIT): PG_private, neither
//!   dirty nor under writeback, counted in NR_UNSTABLE_NFS and in the bdi's reclaimable
//!   pages.
//!
//! mmsim deviation: the kernel attaches a write request (and PG_private) to a page from the
//! `write()` that dirties it until the request is freed; mmsim sets PG_private only while the
//! page awaits COMMIT and counts requests per inode ([`NfsInode::npages`]). A page with a
//! request is exactly one that is dirty, under a WRITE or PG_private, which is what the
//! `is_dirty_writeback` hook tests. A `write()` to an unstable page takes it off the commit
//! list first (`nfs_updatepage` → `nfs_clear_request_commit`), so PG_private never goes
//! with PG_dirty or PG_writeback.
//!
//! The NFS patches 40-45 of IO-less dirty throttling v3 are switches (`ioless-v3` only):
//! the writeback wait queues ([`nfs_wait_congested`]), the in-commit count and its wait
//! ([`nfs_commit_wait`]), the commit heuristics (`nfs_commit_due`), `nr_to_write` left
//! alone by `write_inode`, COMMIT ranges, and the congestion limit capped by the dirty
//! threshold (`sim::add_block_device`).
//!
//! Not modelled: COMMIT verifier mismatches (the server never reboots), RPC errors and
//! retransmits, delegations, pNFS, `launder_page`, O_DIRECT, `nfs_flush_incompatible`.

use super::fs_writeback::{__mark_inode_dirty, __set_page_dirty_nobuffers};
use crate::block::{Bio, NfsCongestion};
use crate::calibration::PAGE_SIZE;
use crate::engine::{self, Nanos, WaitQueueId};
use crate::mm::filemap::filemap_write_and_wait_range;
use crate::mm::fs_ops::{
    AddressSpaceOps, FsCountFuture, FsFuture, PageioData, Release, WritePage, WritebackControl,
};
use crate::mm::inode::I_DIRTY_DATASYNC;
use crate::mm::invariants::describe;
use crate::mm::mmzone::MAX_NR_ZONES;
use crate::mm::page::{Pfn, PG_BH_DIRTY, PG_BH_LOCKED, PG_DIRTY, PG_PRIVATE, PG_WRITEBACK};
use crate::mm::page_writeback::{test_set_page_writeback, DirtyTask};
use crate::mm::vmstat::ZoneStat;
use crate::mm::{page_io, Gfp, Kernel, World};
use crate::presets::Switch;
use std::collections::VecDeque;
use std::ops::Range;

/// An NFS inode's write state (`struct nfs_inode`), kept by its mount's client.
#[derive(Clone, Debug, Default)]
pub struct NfsInode {
    /// `npages`: pages with a write request: dirty, in a WRITE RPC, or awaiting COMMIT.
    pub npages: u64,
    /// `commit_info.ncommit`: unstable pages on the commit list, not yet in a COMMIT.
    pub ncommit: u64,
    /// `NFS_INO_COMMIT`: a COMMIT is in flight (one at a time per inode).
    pub commit_in_flight: bool,
    /// The unstable pages that COMMIT covers, sorted by frame number.
    pub committing: Vec<Pfn>,
    /// The pages that COMMIT was sent with (what it adds to the mount's `in_commit`).
    pub commit_sent: u64,
    /// Its first page index and the span to its last (patch 44's offset and count).
    pub commit_range: (u64, u64),
}

/// What an NFS mount has sent and the server has answered, for reports and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NfsStats {
    /// WRITE RPCs answered, and how many of them were FILE_SYNC.
    pub write_rpcs: u64,
    pub stable_write_rpcs: u64,
    /// Bytes the server received in WRITEs.
    pub bytes_written: u64,
    /// COMMITs answered and the unstable pages they made stable.
    pub commits: u64,
    pub pages_committed: u64,
    /// Unstable pages sent in COMMITs, counted when sent.
    pub pages_sent_to_commit: u64,
    /// Pages the FILE_SYNC WRITEs carried: stable when answered, never committed.
    pub pages_written_stable: u64,
    /// READ RPCs answered and the bytes they carried.
    pub read_rpcs: u64,
    pub bytes_read: u64,
    /// Per-operation statistics, as `/proc/self/mountstats` gives them.
    pub write: OpStats,
    pub commit: OpStats,
    pub read: OpStats,
}

impl NfsStats {
    /// The per-operation statistics by operation name, in mountstats' order.
    pub fn ops(&self) -> [(&'static str, OpStats); 3] {
        [
            ("READ", self.read),
            ("WRITE", self.write),
            ("COMMIT", self.commit),
        ]
    }
}

/// One operation's counters on a mount, as the per-op lines of `/proc/self/mountstats`
/// keep them (and `nfsiostat` averages them): operations, payload bytes each way, and
/// cumulative times. mmsim counts payload only (no RPC headers) and never retransmits, so
/// transmissions equal operations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpStats {
    pub ops: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Waiting for a transport slot, from the RPC's creation to its transmission.
    pub queue_ns: u64,
    /// From transmission to the reply.
    pub rtt_ns: u64,
    /// From the RPC's creation to its completion (queue + rtt).
    pub execute_ns: u64,
}

impl OpStats {
    fn add(&mut self, sent: u64, received: u64, queue: Nanos, rtt: Nanos) {
        self.ops += 1;
        self.bytes_sent += sent;
        self.bytes_received += received;
        self.queue_ns += queue;
        self.rtt_ns += rtt;
        self.execute_ns += queue + rtt;
    }

    /// Mean round trip per operation, ms (nfsiostat's "avg RTT").
    pub fn avg_rtt_ms(&self) -> f64 {
        self.rtt_ns as f64 / 1e6 / self.ops.max(1) as f64
    }

    /// Mean execution time per operation, ms (nfsiostat's "avg exe").
    pub fn avg_exe_ms(&self) -> f64 {
        self.execute_ns as f64 / 1e6 / self.ops.max(1) as f64
    }
}

/// One RPC: what it is, for which inode, on which pages.
#[derive(Debug)]
enum RpcKind {
    /// WRITE; `stable` asks FILE_SYNC, otherwise UNSTABLE.
    Write {
        stable: bool,
    },
    /// COMMIT of the inode's `committing` pages.
    Commit,
    Read,
}

#[derive(Debug)]
struct Rpc {
    kind: RpcKind,
    ino: usize,
    pages: Vec<Pfn>,
    priority: RpcPriority,
    /// When it was created (queued for a slot).
    queued_at: Nanos,
}

/// RPC priorities (`RPC_PRIORITY_LOW`, `_NORMAL`, `_HIGH`; `flush_task_priority`):
/// background writeback is low, reclaim's writes high, the rest (COMMIT, READ, fsync's
/// WRITEs) normal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum RpcPriority {
    Low = 0,
    Normal = 1,
    High = 2,
}

/// RPCs waiting to be sent: the transport's priority wait queue. Weighted round robin as
/// `__rpc_find_next_queued_priority` does it: the level being served keeps the transport for
/// up to 4^level RPCs, then the next lower non-empty level gets its turn (wrapping from the
/// lowest to the highest). mmsim simplification: no batching by owner (`RPC_BATCH_COUNT`).
#[derive(Debug, Default)]
struct RpcQueue {
    levels: [VecDeque<Rpc>; 3],
    level: usize,
    left: u32,
}

impl RpcQueue {
    fn push(&mut self, rpc: Rpc) {
        self.levels[rpc.priority as usize].push_back(rpc);
    }

    fn pop(&mut self) -> Option<Rpc> {
        if self.left > 0 && !self.levels[self.level].is_empty() {
            self.left -= 1;
            return self.levels[self.level].pop_front();
        }
        let n = self.levels.len();
        for step in 1..=n {
            let l = (self.level + n - step) % n;
            if !self.levels[l].is_empty() {
                self.level = l;
                self.left = (1u32 << (2 * l)) - 1;
                return self.levels[l].pop_front();
            }
        }
        None
    }

    fn len(&self) -> usize {
        self.levels.iter().map(VecDeque::len).sum()
    }
}

/// The client side of one NFS mount (`struct nfs_server` and its RPC transport).
#[derive(Debug)]
pub struct NfsClient {
    /// `nfss->writeback` and the mount's async congestion bit.
    pub congestion: NfsCongestion,
    /// Pages per WRITE and READ RPC (`wsize`, `rsize`).
    pub wsize_pages: u64,
    /// RPCs waiting for a transport slot.
    backlog: RpcQueue,
    /// Idle RPC slots sleep here.
    pub slot_wq: WaitQueueId,
    /// Waiters for a COMMIT to finish (the `NFS_INO_COMMIT` bit waiters of every inode).
    pub commit_wq: WaitQueueId,
    /// Writers waiting for the ASYNC and the SYNC congestion to clear (patch 40).
    pub congestion_wq: [WaitQueueId; 2],
    /// `nfss->in_commit`: pages in COMMITs in flight (patch 41's counter).
    pub in_commit: u64,
    /// Flushers waiting for `in_commit` to drop (patch 41).
    pub in_commit_wq: WaitQueueId,
    /// Page lists of finished RPCs, reused so that sending allocates nothing.
    spare: Vec<Vec<Pfn>>,
    pub stats: NfsStats,
    /// The write state of each file the mount has written, by inode id.
    inodes: Vec<NfsInode>,
}

impl NfsClient {
    /// A mount with write congestion `congestion`, sending `wsize_pages` per RPC, its wait
    /// queues from `new_queue`.
    pub fn new(
        congestion: NfsCongestion,
        wsize_pages: u64,
        mut new_queue: impl FnMut() -> WaitQueueId,
    ) -> NfsClient {
        NfsClient {
            congestion,
            wsize_pages: wsize_pages.max(1),
            backlog: RpcQueue::default(),
            slot_wq: new_queue(),
            commit_wq: new_queue(),
            congestion_wq: [new_queue(), new_queue()],
            in_commit: 0,
            in_commit_wq: new_queue(),
            spare: Vec::new(),
            stats: NfsStats::default(),
            inodes: Vec::new(),
        }
    }

    fn page_list(&mut self) -> Vec<Pfn> {
        self.spare.pop().unwrap_or_default()
    }

    fn recycle(&mut self, mut pages: Vec<Pfn>) {
        pages.clear();
        self.spare.push(pages);
    }

    /// RPCs not yet given a slot.
    pub fn backlog_len(&self) -> usize {
        self.backlog.len()
    }
}

/// The client of NFS mount `bdi` (the mount's `s_fs_info`).
fn client(k: &mut Kernel, bdi: usize) -> &mut NfsClient {
    k.bdis[bdi]
        .fs_info
        .as_mut()
        .and_then(|i| i.downcast_mut())
        .expect("NFS IO goes to an NFS mount")
}

/// The client of device `bdi`, if it is an NFS mount.
pub fn client_of(k: &Kernel, bdi: usize) -> Option<&NfsClient> {
    k.bdis[bdi].fs_info.as_ref()?.downcast_ref()
}

/// The statistics of device `bdi`, if it is an NFS mount (`/proc/self/mountstats`).
pub fn mount_stats(k: &Kernel, bdi: usize) -> Option<NfsStats> {
    client_of(k, bdi).map(|c| c.stats)
}

/// The NFS state of file `ino` (`NFS_I(inode)`), kept by its mount's client.
fn nfs_i(k: &mut Kernel, ino: usize) -> &mut NfsInode {
    let bdi = k.inodes[ino].bdi;
    let c = client(k, bdi);
    if c.inodes.len() <= ino {
        c.inodes.resize_with(ino + 1, NfsInode::default);
    }
    &mut c.inodes[ino]
}

/// The NFS state of file `ino`, read-only: a file the client has not written has none.
pub fn nfs_i_ref(k: &Kernel, ino: usize) -> &NfsInode {
    static NO_REQUESTS: NfsInode = NfsInode {
        npages: 0,
        ncommit: 0,
        commit_in_flight: false,
        committing: Vec::new(),
        commit_sent: 0,
        commit_range: (0, 0),
    };
    client_of(k, k.inodes[ino].bdi)
        .and_then(|c| c.inodes.get(ino))
        .unwrap_or(&NO_REQUESTS)
}

fn queue_rpc(k: &mut Kernel, bdi: usize, rpc: Rpc) {
    let c = client(k, bdi);
    c.backlog.push(rpc);
    let q = c.slot_wq;
    k.sched.wake_all(q);
}

// ---------------------------------------------------------------------------------------
// Congestion (`nfs_set_page_writeback`, `nfs_end_page_writeback`).

fn set_congested(k: &mut Kernel, bdi: usize, congested: bool) {
    k.bdis[bdi].congested = congested;
    if congested {
        k.nr_bdi_congested_async += 1;
    } else {
        k.nr_bdi_congested_async -= 1;
    }
}

/// `nfs_set_page_writeback`: the page enters a WRITE; the mount congests above ON.
fn nfs_set_page_writeback(k: &mut Kernel, bdi: usize, pfn: Pfn) {
    test_set_page_writeback(k, pfn);
    if client(k, bdi).congestion.start_writeback(1) {
        set_congested(k, bdi, true);
    }
}

/// `nfs_end_page_writeback`: the WRITE is answered. Below OFF the congestion clears and, as
/// `clear_bdi_congested` does on every call, `congestion_wait` sleepers are woken. With
/// patch 40 each class below its OFF wakes its writers, and `congestion_wait` sleepers are
/// woken only when the ASYNC bit is actually cleared (the patch tests it first).
fn nfs_end_page_writeback(k: &mut Kernel, bdi: usize, pfn: Pfn) {
    page_io::end_page_writeback(k, pfn);
    let c = client(k, bdi);
    let e = c.congestion.end_writeback(1);
    let wait_queue = c.congestion.wait_queue;
    let [async_wq, sync_wq] = c.congestion_wq;
    if e.async_cleared {
        set_congested(k, bdi, false);
    }
    if wait_queue {
        if e.below_sync_off {
            k.sched.wake_all(sync_wq);
        }
        if e.below_async_off {
            k.sched.wake_all(async_wq);
        }
    }
    if (wait_queue && e.async_cleared) || (!wait_queue && e.below_async_off) {
        let q = k.wq.congestion_async;
        k.sched.wake_all(q);
    }
}

/// `nfs_wait_congested` (patch 40): after adding a page to a WRITE, a writer of class
/// `sync` (WB_SYNC_ALL) sleeps uninterruptibly while that class of mount `bdi` is
/// congested.
pub async fn nfs_wait_congested(w: &World, bdi: usize, sync: bool) {
    loop {
        let q = {
            let k = w.borrow();
            let c = client_of(&k, bdi).expect("an NFS mount has its client");
            if !c.congestion.class_congested(sync) {
                return;
            }
            c.congestion_wq[sync as usize]
        };
        engine::wait_event(w, q, None, false).await;
    }
}

// ---------------------------------------------------------------------------------------
// Building RPCs (`nfs_pageio_descriptor`).

/// How a descriptor's WRITEs ask the server to store the data (`wb_priority`, 3.x).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteHow {
    /// `FLUSH_COND_STABLE` (flusher, fsync): FILE_SYNC only if this call sends one RPC and
    /// no page of the inode awaits COMMIT; otherwise UNSTABLE.
    CondStable,
    /// `FLUSH_STABLE` (reclaim's `writepage`): FILE_SYNC.
    Stable,
    /// Reads (`nfs_pageio_init_read`).
    Read,
}

/// A page-IO descriptor: contiguous pages coalesced into one RPC of up to `wsize`.
#[derive(Debug)]
pub struct NfsPageio {
    ino: usize,
    bdi: usize,
    how: WriteHow,
    priority: RpcPriority,
    pages: Vec<Pfn>,
    next_index: u64,
    /// `pg_moreio`: an RPC was sent because the next page did not fit.
    moreio: bool,
}

/// `nfs_pageio_init_write` / `nfs_pageio_init_read` for file `ino`; `priority` of its
/// RPCs.
pub fn nfs_pageio_init(
    k: &mut Kernel,
    ino: usize,
    how: WriteHow,
    priority: RpcPriority,
) -> NfsPageio {
    let bdi = k.inodes[ino].bdi;
    NfsPageio {
        ino,
        bdi,
        how,
        priority,
        pages: client(k, bdi).page_list(),
        next_index: 0,
        moreio: false,
    }
}

/// `nfs_pageio_add_request`: add page `index`. For a write the caller has cleared its dirty
/// bit; it goes under writeback now. A page that does not continue the RPC, or one past
/// `wsize`, sends the RPC so far first.
pub fn nfs_pageio_add(k: &mut Kernel, d: &mut NfsPageio, index: u64, pfn: Pfn) {
    let full = d.pages.len() as u64 >= client(k, d.bdi).wsize_pages;
    if !d.pages.is_empty() && (index != d.next_index || full) {
        d.moreio = true;
        nfs_pageio_doio(k, d);
    }
    if d.how != WriteHow::Read {
        nfs_set_page_writeback(k, d.bdi, pfn);
    }
    d.pages.push(pfn);
    d.next_index = index + 1;
}

/// Send the descriptor's pages as one RPC (`nfs_generic_pg_writepages`). The FILE_SYNC
/// decision of `FLUSH_COND_STABLE` is taken here, as `nfs_generic_pgio` takes it.
fn nfs_pageio_doio(k: &mut Kernel, d: &mut NfsPageio) {
    let kind = match d.how {
        WriteHow::Read => RpcKind::Read,
        WriteHow::Stable => RpcKind::Write { stable: true },
        WriteHow::CondStable => RpcKind::Write {
            stable: !d.moreio && nfs_i_ref(k, d.ino).ncommit == 0,
        },
    };
    let next = client(k, d.bdi).page_list();
    let pages = std::mem::replace(&mut d.pages, next);
    queue_rpc(
        k,
        d.bdi,
        Rpc {
            kind,
            ino: d.ino,
            pages,
            priority: d.priority,
            queued_at: k.sched.now(),
        },
    );
}

/// `nfs_pageio_complete`: send what is left.
pub fn nfs_pageio_complete(k: &mut Kernel, mut d: NfsPageio) {
    if !d.pages.is_empty() {
        nfs_pageio_doio(k, &mut d);
    }
    client(k, d.bdi).recycle(d.pages);
}

/// `nfs_writepage` from reclaim (`FLUSH_STABLE`): one page, one FILE_SYNC WRITE, whichever
/// reclaimer asks. The caller has cleared its dirty bit. Never sleeps.
pub fn nfs_writepage(k: &mut Kernel, pfn: Pfn) {
    let ino = k.pages.mapping[pfn as usize] as usize;
    let index = k.pages.index[pfn as usize] as u64;
    let mut d = nfs_pageio_init(k, ino, WriteHow::Stable, RpcPriority::High);
    nfs_pageio_add(k, &mut d, index, pfn);
    nfs_pageio_complete(k, d);
}

// ---------------------------------------------------------------------------------------
// Requests and the commit list.

/// `nfs_updatepage` for a page about to be dirtied by `write()` (it is not dirty now): an
/// unstable page leaves the commit list, its request staying; a page with no request gets
/// one.
pub fn nfs_updatepage(k: &mut Kernel, pfn: Pfn) {
    let ino = k.pages.mapping[pfn as usize] as usize;
    if k.pages.test(pfn, PG_PRIVATE) {
        nfs_clear_request_commit(k, ino, pfn);
    } else if !k.pages.test(pfn, PG_WRITEBACK) {
        nfs_i(k, ino).npages += 1;
    }
}

/// `nfs_mark_request_commit` (with `nfs_mark_page_unstable`): the server answered UNSTABLE.
fn nfs_mark_request_commit(k: &mut Kernel, ino: usize, pfn: Pfn) {
    k.pages.set(pfn, PG_PRIVATE);
    let zi = k.page_zone(pfn);
    k.zones[zi].mod_stat(ZoneStat::nr_unstable, 1);
    let bdi = k.inodes[ino].bdi;
    k.bdis[bdi].reclaimable += 1;
    nfs_i(k, ino).ncommit += 1;
    __mark_inode_dirty(k, ino, I_DIRTY_DATASYNC);
}

/// The unstable accounting of one page goes (`nfs_clear_page_commit`).
fn nfs_clear_page_commit(k: &mut Kernel, ino: usize, pfn: Pfn) {
    k.pages.clear(pfn, PG_PRIVATE);
    let zi = k.page_zone(pfn);
    k.zones[zi].mod_stat(ZoneStat::nr_unstable, -1);
    let bdi = k.inodes[ino].bdi;
    k.bdis[bdi].reclaimable -= 1;
}

/// `nfs_clear_request_commit`: an unstable page stops awaiting COMMIT without being
/// committed (rewritten or truncated). If the COMMIT in flight covers it, it leaves that
/// COMMIT's list.
fn nfs_clear_request_commit(k: &mut Kernel, ino: usize, pfn: Pfn) {
    nfs_clear_page_commit(k, ino, pfn);
    let n = nfs_i(k, ino);
    match n.committing.binary_search(&pfn) {
        Ok(i) => {
            n.committing.remove(i);
        }
        Err(_) => n.ncommit -= 1,
    }
}

/// Whether `pfn` is in the COMMIT in flight for its inode (its request is locked then:
/// truncation waits for it). The queue to wait on, if so.
pub fn nfs_page_in_commit(k: &Kernel, pfn: Pfn) -> Option<WaitQueueId> {
    let ino = k.pages.mapping[pfn as usize] as usize;
    let n = nfs_i_ref(k, ino);
    if n.commit_in_flight && n.committing.binary_search(&pfn).is_ok() {
        let bdi = k.inodes[ino].bdi;
        client_of(k, bdi).map(|c| c.commit_wq)
    } else {
        None
    }
}

/// `nfs_invalidate_page` → `nfs_wb_page_cancel` of truncation: the page's request goes
/// unwritten. The caller has waited for its WRITE and its COMMIT; it cancels the dirty
/// accounting itself.
pub fn nfs_invalidate_page(k: &mut Kernel, pfn: Pfn) {
    let ino = k.pages.mapping[pfn as usize] as usize;
    if k.pages.test(pfn, PG_PRIVATE) {
        nfs_clear_request_commit(k, ino, pfn);
        nfs_i(k, ino).npages -= 1;
    } else if k.pages.test(pfn, PG_DIRTY) {
        nfs_i(k, ino).npages -= 1;
    }
}

// ---------------------------------------------------------------------------------------
// COMMIT.

/// `nfs_scan_commit` + `nfs_commit_list`: every page on the commit list goes into one
/// COMMIT. The caller holds the commit "lock" (none in flight). Returns the pages.
fn nfs_commit_start(k: &mut Kernel, ino: usize) -> u64 {
    let mut list = std::mem::take(&mut nfs_i(k, ino).committing);
    list.clear();
    let (mut first, mut last) = (u64::MAX, 0);
    for (index, pfn) in k.inodes[ino].cached() {
        if k.pages.test(pfn, PG_PRIVATE) {
            list.push(pfn);
            first = first.min(index);
            last = last.max(index);
        }
    }
    list.sort_unstable();
    let n = nfs_i(k, ino);
    debug_assert_eq!(
        list.len() as u64,
        n.ncommit,
        "the commit list is the unstable pages"
    );
    let count = list.len() as u64;
    n.committing = list;
    n.ncommit = 0;
    n.commit_in_flight = true;
    n.commit_sent = count;
    n.commit_range = if count > 0 {
        (first, last - first + 1)
    } else {
        (0, 0)
    };
    let bdi = k.inodes[ino].bdi;
    let c = client(k, bdi);
    c.stats.pages_sent_to_commit += count;
    c.in_commit += count;
    let pages = client(k, bdi).page_list();
    queue_rpc(
        k,
        bdi,
        Rpc {
            kind: RpcKind::Commit,
            ino,
            pages,
            priority: RpcPriority::Normal,
            queued_at: k.sched.now(),
        },
    );
    count
}

/// `nfs_commit_inode(inode, 0)`: send a COMMIT of the commit list without waiting. If one
/// is in flight already, none is sent. Either way the inode stays `I_DIRTY_DATASYNC`, so a
/// later writeback makes sure the data is stable. Returns the pages sent.
pub fn nfs_commit_inode_nowait(k: &mut Kernel, ino: usize) -> u64 {
    let n = nfs_i_ref(k, ino);
    if !n.commit_in_flight && n.ncommit == 0 {
        return 0;
    }
    let sent = if n.commit_in_flight {
        0
    } else {
        nfs_commit_start(k, ino)
    };
    __mark_inode_dirty(k, ino, I_DIRTY_DATASYNC);
    sent
}

/// `nfs_commit_inode(inode, FLUSH_SYNC)`: wait for a COMMIT in flight, send one of the
/// commit list and wait for it. Returns the pages it made stable.
pub async fn nfs_commit_inode(w: &World, ino: usize) -> u64 {
    loop {
        let q = {
            let k = w.borrow();
            if !nfs_i_ref(&k, ino).commit_in_flight {
                break;
            }
            client_wq(&k, ino)
        };
        engine::wait_event(w, q, None, false).await;
    }
    let sent = {
        let mut k = w.borrow_mut();
        if nfs_i_ref(&k, ino).ncommit == 0 {
            return 0;
        }
        nfs_commit_start(&mut k, ino)
    };
    loop {
        let q = {
            let k = w.borrow();
            if !nfs_i_ref(&k, ino).commit_in_flight {
                return sent;
            }
            client_wq(&k, ino)
        };
        engine::wait_event(w, q, None, false).await;
    }
}

fn client_wq(k: &Kernel, ino: usize) -> WaitQueueId {
    let bdi = k.inodes[ino].bdi;
    client_of(k, bdi)
        .expect("an NFS inode is on an NFS mount")
        .commit_wq
}

/// `nfs_write_inode` for the flusher (`WB_SYNC_NONE`) in the inode's turn of `chunk`
/// pages: `nfs_commit_unstable_pages` (`nfs_commit_due`, then the COMMIT), without
/// patch 41's wait. Returns the pages
/// committed, which count against the flusher's `nr_to_write` (at most `nr_to_write`)
/// unless patch 43 is in.
pub fn nfs_write_inode(k: &mut Kernel, ino: usize, nr_to_write: u64, chunk: u64) -> u64 {
    let due = nfs_commit_due(k, ino);
    nfs_write_inode_commit(k, ino, due, nr_to_write, chunk)
}

/// [`nfs_write_inode`] as the flusher runs it: with patch 41, a COMMIT that is due first
/// waits for the mount's `in_commit` to drop below the limit ([`nfs_commit_wait`]).
pub async fn nfs_write_inode_wait(w: &World, ino: usize, nr_to_write: u64, chunk: u64) -> u64 {
    let (due, wait, bdi) = {
        let mut k = w.borrow_mut();
        let due = nfs_commit_due(&mut k, ino);
        let wait = due && k.sw.on(Switch::NfsInCommitLimit);
        (due, wait, k.inodes[ino].bdi)
    };
    if wait {
        nfs_commit_wait(w, bdi).await;
    }
    nfs_write_inode_commit(&mut w.borrow_mut(), ino, due, nr_to_write, chunk)
}

/// The COMMIT of [`nfs_write_inode`] once `due` is decided, and its trace.
fn nfs_write_inode_commit(
    k: &mut Kernel,
    ino: usize,
    due: bool,
    nr_to_write: u64,
    chunk: u64,
) -> u64 {
    let sent = if due {
        nfs_commit_inode_nowait(k, ino)
    } else {
        0
    };
    if crate::mm::trace::enabled(k) {
        let npages = nfs_i_ref(k, ino).npages;
        let bdi = k.inodes[ino].bdi;
        let in_commit = if k.sw.on(Switch::NfsInCommitLimit) {
            client_of(k, bdi).map_or(0, |c| c.in_commit)
        } else {
            pages_in_commit(k, bdi)
        };
        // write_chunk is v3's wbc->per_file_limit: the flusher's slice for this inode.
        crate::mm::trace::nfs_commit_unstable_pages(k, ino, npages, in_commit, chunk, false, sent);
    }
    if k.sw.on(Switch::NfsWriteInodeKeepsNrToWrite) {
        0
    } else {
        sent.min(nr_to_write)
    }
}

/// `MIN_WRITEBACK_PAGES` of patch 42: 4 MiB awaiting COMMIT is worth one.
const NFS_MIN_COMMIT_PAGES: u64 = 4096 * 1024 / PAGE_SIZE;

/// Whether `nfs_commit_unstable_pages` (`WB_SYNC_NONE`) commits now: not if no page awaits
/// COMMIT; otherwise, without patch 42, if more than half of the inode's requests await it
/// (WRITEs are still outstanding while fewer do); with 42, if no WRITE of the inode is in
/// flight, if 4 MiB await it, or if they are more than half the mount's `in_commit`. A
/// deferred inode stays `I_DIRTY_DATASYNC`.
fn nfs_commit_due(k: &mut Kernel, ino: usize) -> bool {
    let n = nfs_i_ref(k, ino);
    if n.ncommit == 0 {
        return false;
    }
    let due = if k.sw.on(Switch::NfsCommitHeuristics) {
        let in_commit = client_of(k, k.inodes[ino].bdi).map_or(0, |c| c.in_commit);
        n.ncommit == n.npages || n.ncommit >= NFS_MIN_COMMIT_PAGES || n.ncommit > in_commit / 2
    } else {
        n.ncommit > n.npages >> 1
    };
    if !due {
        __mark_inode_dirty(k, ino, I_DIRTY_DATASYNC);
    }
    due
}

/// `nfs_commit_wait` (patch 41): a non-sync COMMIT waits uninterruptibly while the mount's
/// `in_commit` is at the limit (`nfs_congestion_kb`) or above.
pub async fn nfs_commit_wait(w: &World, bdi: usize) {
    loop {
        let q = {
            let k = w.borrow();
            let c = client_of(&k, bdi).expect("an NFS mount has its client");
            if c.in_commit < c.congestion.on {
                return;
            }
            c.in_commit_wq
        };
        engine::wait_event(w, q, None, false).await;
    }
}

/// The pages in COMMITs in flight on mount `bdi` (v3's `nfss->in_commit`, patch 41): the
/// pages each of its inodes' COMMIT in flight still covers (one COMMIT per inode).
fn pages_in_commit(k: &Kernel, bdi: usize) -> u64 {
    client_of(k, bdi).map_or(0, |c| {
        c.inodes
            .iter()
            .filter(|n| n.commit_in_flight)
            .map(|n| n.committing.len() as u64)
            .sum()
    })
}

// ---------------------------------------------------------------------------------------
// Reclaim hooks.

/// `nfs_release_page` for an unstable page (`try_to_release_page` of `shrink_page_list`):
/// with a mask that allows IO and FS calls it commits the inode, synchronously for direct
/// reclaim ([`Release::Wait`]: reclaim then waits in [`nfs_commit_inode`] and tries
/// again), without waiting for kswapd (which must not block on the server); the page is
/// not freeable while it has PG_private.
pub fn nfs_release_page(k: &mut Kernel, pfn: Pfn, gfp: Gfp, kswapd: bool) -> Release {
    let ino = k.pages.mapping[pfn as usize] as usize;
    if gfp.has(Gfp::KERNEL.0) {
        if !kswapd {
            return Release::Wait;
        }
        nfs_commit_inode_nowait(k, ino);
    }
    Release::Busy
}

/// `nfs_check_dirty_writeback` (LD patch 8), applied where the kernel calls the hook: on a
/// page with a request (`page_has_private`). Pages of an inode with a COMMIT in flight count
/// as under writeback, since they will soon be freeable; otherwise a page with a request
/// counts as dirty, since an unstable page is not going to be cleaned soon.
pub fn nfs_check_dirty_writeback(
    k: &Kernel,
    pfn: Pfn,
    dirty: bool,
    writeback: bool,
) -> (bool, bool) {
    if !(dirty || writeback || k.pages.test(pfn, PG_PRIVATE)) {
        return (dirty, writeback);
    }
    let ino = k.pages.mapping[pfn as usize] as usize;
    if nfs_i_ref(k, ino).commit_in_flight {
        (dirty, true)
    } else {
        (true, writeback)
    }
}

// ---------------------------------------------------------------------------------------
// The RPC slots and completions.

/// One RPC slot of a mount (the sunrpc slot table holds `NFS_RPC_SLOTS`): take the oldest
/// RPC, hold it for the server model's answer, complete it.
pub async fn rpc_slot(w: World, bdi: usize) {
    loop {
        let (rpc, q) = {
            let mut k = w.borrow_mut();
            let c = client(&mut k, bdi);
            (c.backlog.pop(), c.slot_wq)
        };
        let Some(rpc) = rpc else {
            engine::wait_event(&w, q, None, false).await;
            continue;
        };
        let t = {
            let mut k = w.borrow_mut();
            let now = k.sched.now();
            let bytes = rpc.pages.len() as u64 * PAGE_SIZE;
            let server = k.bdis[bdi]
                .device
                .as_nfs()
                .expect("an NFS mount's device is the NFS model");
            let (t, what): (Nanos, &str) = match rpc.kind {
                RpcKind::Write { stable } => (server.write_rpc(bytes, stable, now), "WRITE"),
                RpcKind::Commit => (server.commit(now), "COMMIT"),
                RpcKind::Read => (server.read_rpc(bytes, now), "READ"),
            };
            if !crate::mm::backing_dev::check_service_time(&mut k, bdi, t, what, bytes) {
                return;
            }
            t
        };
        let sent_at = w.borrow().sched.now();
        engine::sleep(&w, t).await;
        let mut k = w.borrow_mut();
        let bytes = rpc.pages.len() as u64 * PAGE_SIZE;
        let queue = sent_at - rpc.queued_at;
        let s = &mut client(&mut k, bdi).stats;
        match rpc.kind {
            RpcKind::Write { .. } => s.write.add(bytes, 0, queue, t),
            RpcKind::Commit => s.commit.add(0, 0, queue, t),
            RpcKind::Read => s.read.add(0, bytes, queue, t),
        }
        match rpc.kind {
            RpcKind::Write { stable } => nfs_write_completion(&mut k, bdi, &rpc, stable),
            RpcKind::Commit => {
                // Patch 44: the COMMIT's range; before it, the whole file.
                let range = if k.sw.on(Switch::NfsCommitRange) {
                    nfs_i_ref(&k, rpc.ino).commit_range
                } else {
                    (0, 0)
                };
                crate::mm::trace::nfs_commit_release(&mut k, rpc.ino, range);
                nfs_commit_release_pages(&mut k, bdi, rpc.ino);
            }
            RpcKind::Read => nfs_read_completion(&mut k, bdi, &rpc),
        }
        client(&mut k, bdi).recycle(rpc.pages);
    }
}

/// `nfs_write_completion`: a FILE_SYNC page is clean and its request goes; an UNSTABLE one
/// joins the commit list; a page dirtied again meanwhile keeps its request for the next
/// WRITE. Then `end_page_writeback`.
fn nfs_write_completion(k: &mut Kernel, bdi: usize, rpc: &Rpc, stable: bool) {
    for &pfn in &rpc.pages {
        if !k.pages.test(pfn, PG_DIRTY) {
            if stable {
                nfs_i(k, rpc.ino).npages -= 1;
            } else {
                nfs_mark_request_commit(k, rpc.ino, pfn);
            }
        }
        nfs_end_page_writeback(k, bdi, pfn);
    }
    let s = &mut client(k, bdi).stats;
    s.write_rpcs += 1;
    s.stable_write_rpcs += stable as u64;
    if stable {
        s.pages_written_stable += rpc.pages.len() as u64;
    }
    s.bytes_written += rpc.pages.len() as u64 * PAGE_SIZE;
}

/// `nfs_commit_release_pages`: the COMMIT's pages are stable: clean, request freed.
fn nfs_commit_release_pages(k: &mut Kernel, bdi: usize, ino: usize) {
    let list = std::mem::take(&mut nfs_i(k, ino).committing);
    for &pfn in &list {
        debug_assert!(
            k.pages.test(pfn, PG_PRIVATE),
            "committing pages are unstable"
        );
        nfs_clear_page_commit(k, ino, pfn);
        nfs_i(k, ino).npages -= 1;
        let q = k.wq.page(pfn);
        k.sched.wake_all(q);
    }
    let committed = list.len() as u64;
    let n = nfs_i(k, ino);
    n.committing = list;
    n.committing.clear();
    n.commit_in_flight = false;
    let sent = std::mem::take(&mut n.commit_sent);
    let limit_on = k.sw.on(Switch::NfsInCommitLimit);
    let c = client(k, bdi);
    c.stats.commits += 1;
    c.stats.pages_committed += committed;
    c.in_commit -= sent;
    let limit = c.congestion.on;
    // Patch 41: waiters go on once in_commit is an eighth below the limit.
    let wake_in_commit = limit_on && c.in_commit < limit - limit / 8;
    let (q, in_commit_wq) = (c.commit_wq, c.in_commit_wq);
    k.sched.wake_all(q);
    if wake_in_commit {
        k.sched.wake_all(in_commit_wq);
    }
}

/// A READ is answered: its pages are uptodate and unlocked.
fn nfs_read_completion(k: &mut Kernel, bdi: usize, rpc: &Rpc) {
    for &pfn in &rpc.pages {
        page_io::end_page_read(k, pfn);
    }
    let s = &mut client(k, bdi).stats;
    s.read_rpcs += 1;
    s.bytes_read += rpc.pages.len() as u64 * PAGE_SIZE;
}

// ---------------------------------------------------------------------------------------
// The mount's operations (`nfs_file_aops`, `nfs_file_operations`, `nfs_sops`).

/// The NFS client's operations.
#[derive(Debug)]
pub struct NfsAops;

/// The one [`NfsAops`] table.
pub static NFS_AOPS: NfsAops = NfsAops;

/// The page-IO descriptor of a `writepages` or readahead call.
fn pageio(data: &mut PageioData) -> Option<&mut NfsPageio> {
    data.as_mut()?.downcast_mut()
}

/// Send what a descriptor gathered.
fn pageio_end(k: &mut Kernel, data: PageioData) {
    if let Some(d) = data.and_then(|d| d.downcast().ok()) {
        nfs_pageio_complete(k, *d);
    }
}

impl AddressSpaceOps for NfsAops {
    fn name(&self) -> &'static str {
        "Nfs"
    }

    /// The write request is set up first (`nfs_updatepage`, in `nfs_write_end` and
    /// `nfs_vm_page_mkwrite`): an unstable page leaves the commit list. Then
    /// `__set_page_dirty_nobuffers`.
    fn set_page_dirty(&self, k: &mut Kernel, pfn: Pfn, task: &mut DirtyTask) -> bool {
        if k.pages.test(pfn, PG_DIRTY) {
            return false;
        }
        nfs_updatepage(k, pfn);
        __set_page_dirty_nobuffers(k, pfn, task)
    }

    /// In `nfs_writepages` the page joins the walk's descriptor (`nfs_writepages_callback`);
    /// alone, from reclaim, it is one FILE_SYNC WRITE ([`nfs_writepage`]).
    /// With patch 40 the walk's writer then sleeps while its class is congested
    /// ([`WritePage::Congested`], [`nfs_wait_congested`]). mmsim deviation: reclaim's
    /// `nfs_writepage` does not wait (reclaim's `pageout` cannot sleep here).
    fn writepage(
        &self,
        k: &mut Kernel,
        pfn: Pfn,
        wbc: &WritebackControl,
        data: &mut PageioData,
    ) -> WritePage {
        match pageio(data) {
            Some(d) => {
                let index = k.pages.index[pfn as usize] as u64;
                nfs_pageio_add(k, d, index, pfn);
                let bdi = d.bdi;
                let c = &client(k, bdi).congestion;
                if c.wait_queue && c.class_congested(wbc.sync_all) {
                    return WritePage::Congested { bdi };
                }
            }
            None => nfs_writepage(k, pfn),
        }
        WritePage::Started
    }

    fn writeback_congestion_wait<'a>(
        &'a self,
        w: &'a World,
        bdi: usize,
        sync: bool,
    ) -> FsFuture<'a> {
        Box::pin(nfs_wait_congested(w, bdi, sync))
    }

    /// `nfs_writepages`: a descriptor of `FLUSH_COND_STABLE` WRITEs; background and kupdate
    /// writeback send low-priority RPCs (`FLUSH_LOWPRI`).
    fn writepages_start(&self, k: &mut Kernel, ino: usize, wbc: &WritebackControl) -> PageioData {
        let priority = if wbc.sync_all {
            RpcPriority::Normal
        } else {
            RpcPriority::Low
        };
        Some(Box::new(nfs_pageio_init(
            k,
            ino,
            WriteHow::CondStable,
            priority,
        )))
    }

    fn writepages_end(&self, k: &mut Kernel, data: PageioData) -> Option<usize> {
        pageio_end(k, data);
        None
    }

    /// `nfs_readpages`: READ RPCs of up to `rsize`, sent at the end at the latest.
    fn readpages_start(&self, k: &mut Kernel, ino: usize) -> PageioData {
        Some(Box::new(nfs_pageio_init(
            k,
            ino,
            WriteHow::Read,
            RpcPriority::Normal,
        )))
    }

    fn readpage(&self, k: &mut Kernel, pfn: Pfn, data: &mut PageioData) -> Option<Bio> {
        let d = pageio(data).expect("NFS reads go through nfs_readpages' descriptor");
        let index = k.pages.index[pfn as usize] as u64;
        nfs_pageio_add(k, d, index, pfn);
        None
    }

    fn readpages_end(&self, k: &mut Kernel, data: PageioData) {
        pageio_end(k, data);
    }

    /// `nfs_is_dirty_writeback` (LD patch 8): [`nfs_check_dirty_writeback`].
    fn is_dirty_writeback(
        &self,
        k: &Kernel,
        pfn: Pfn,
        dirty: bool,
        writeback: bool,
    ) -> (bool, bool) {
        if k.sw.on(Switch::NfsDirtyWritebackHook) {
            return nfs_check_dirty_writeback(k, pfn, dirty, writeback);
        }
        (dirty, writeback)
    }

    fn releasepage(&self, k: &mut Kernel, pfn: Pfn, gfp: Gfp, kswapd: bool) -> Release {
        nfs_release_page(k, pfn, gfp, kswapd)
    }

    /// `nfs_release_page`'s `nfs_commit_inode(FLUSH_SYNC)`.
    fn releasepage_wait<'a>(&'a self, w: &'a World, ino: usize) -> FsFuture<'a> {
        Box::pin(async move {
            nfs_commit_inode(w, ino).await;
        })
    }

    /// A page in the COMMIT in flight: its request is locked until the answer.
    fn invalidatepage_wait(&self, k: &Kernel, pfn: Pfn) -> Option<WaitQueueId> {
        nfs_page_in_commit(k, pfn)
    }

    fn invalidatepage(&self, k: &mut Kernel, pfn: Pfn) {
        nfs_invalidate_page(k, pfn);
    }

    /// `nfs_file_fsync`: write and wait, then a COMMIT of every unstable page, waited for.
    fn fsync<'a>(&'a self, w: &'a World, ino: usize, range: Range<u64>) -> FsFuture<'a> {
        Box::pin(async move {
            filemap_write_and_wait_range(w, ino, range).await;
            nfs_commit_inode(w, ino).await;
        })
    }

    fn write_inode<'a>(
        &'a self,
        w: &'a World,
        ino: usize,
        nr_to_write: u64,
        chunk: u64,
    ) -> FsCountFuture<'a> {
        Box::pin(nfs_write_inode_wait(w, ino, nr_to_write, chunk))
    }

    /// A request awaiting COMMIT: PG_private, never buffer state.
    fn check_private(&self, k: &Kernel, pfn: Pfn) -> Result<(), String> {
        if k.pages.test(pfn, PG_BH_DIRTY | PG_BH_LOCKED) {
            return Err(format!("has buffer state on {}", self.name()));
        }
        Ok(())
    }

    /// A page awaiting COMMIT is neither dirty nor under writeback, and the inode's request
    /// and commit-list counts match its pages.
    fn check_mapping(
        &self,
        k: &Kernel,
        ino: usize,
        unstable: &mut [u64; MAX_NR_ZONES],
    ) -> Result<(), String> {
        let inode = &k.inodes[ino];
        let (mut requests, mut private) = (0u64, 0u64);
        for (_, pfn) in inode.cached() {
            let f = k.pages.flags[pfn as usize];
            if f & PG_PRIVATE != 0 {
                if f & (PG_DIRTY | PG_WRITEBACK) != 0 {
                    return Err(format!(
                        "invariant 'NFS unstable pages' violated: {} awaits COMMIT but is dirty or under writeback",
                        describe(k, pfn)
                    ));
                }
                private += 1;
                unstable[k.page_zone(pfn)] += 1;
            }
            if f & (PG_PRIVATE | PG_DIRTY | PG_WRITEBACK) != 0 {
                requests += 1;
            }
        }
        let n = nfs_i_ref(k, ino);
        let committing = n.committing.len() as u64;
        if n.npages != requests || n.ncommit + committing != private {
            return Err(format!(
                "invariant 'NFS requests' violated: inode {ino} ({}) counts {} requests and {} + {} unstable pages, its pages say {requests} and {private}",
                inode.name, n.npages, n.ncommit, committing
            ));
        }
        Ok(())
    }

    /// The pages in WRITEs and the congestion the client counts are its bdi's.
    fn check_mount(&self, k: &Kernel, bdi: usize) -> Result<(), String> {
        let b = &k.bdis[bdi];
        let c = client_of(k, bdi).expect("an NFS mount has its client");
        if c.congestion.writeback_pages() != b.writeback || c.congestion.congested() != b.congested
        {
            return Err(format!(
                "invariant 'counters' violated: NFS mount {} counts {} pages in WRITEs (congested {}), its bdi {} (congested {})",
                b.name,
                c.congestion.writeback_pages(),
                c.congestion.congested(),
                b.writeback,
                b.congested
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets::Switch;

    /// A 128 MiB machine with one NFS mount and one empty file on it.
    fn mount() -> (World, usize) {
        mount_with("lessdisrupt-v7r10", &[])
    }

    /// [`mount`] under `preset` with the switches `off` turned off before the mount.
    fn mount_with(preset: &str, off: &[Switch]) -> (World, usize) {
        let w = crate::sim::boot_for_test(128, 0, preset);
        for &s in off {
            w.borrow_mut().sw.set(s, false);
        }
        crate::sim::add_block_device(&w, &crate::scenario::BlockDevice::nfs_mount("nfs0")).unwrap();
        let ino = crate::mm::inode::new_inode(&mut w.borrow_mut(), "f", 0);
        (w, ino)
    }

    /// A task that runs `f` and then raises its flag.
    fn spawn_flagged<F>(
        w: &World,
        f: impl FnOnce(World) -> F + 'static,
    ) -> std::rc::Rc<std::cell::Cell<bool>>
    where
        F: std::future::Future<Output = ()> + 'static,
    {
        let done = std::rc::Rc::new(std::cell::Cell::new(false));
        let (d, w2) = (done.clone(), w.clone());
        w.borrow_mut().sched.spawn("waiter", async move {
            f(w2).await;
            d.set(true);
        });
        done
    }

    /// Patch 40: once the mount is ASYNC-congested, a background writer's page in
    /// `nfs_writepages` makes it sleep until the count is below ON − min(ON/8, 1 MiB); a
    /// WB_SYNC_ALL writer goes on (SYNC is not congested). Without 40 nobody sleeps.
    #[test]
    fn writers_sleep_while_their_class_is_congested_with_patch_40() {
        let (w, ino) = mount_with("ioless-v3", &[]);
        let mut ex = crate::engine::Executor::new(w.clone());
        let (on, off, pages) = {
            let mut k = w.borrow_mut();
            let c = &client_of(&k, 0).unwrap().congestion;
            assert!(c.wait_queue);
            let (on, off) = (c.on, c.off);
            assert_eq!(off, on - (on / 8).min(256));
            let indexes: Vec<u64> = (0..on + 3).collect();
            let pages = cached(&mut k, ino, &indexes);
            for &pfn in &pages[..on as usize + 1] {
                nfs_set_page_writeback(&mut k, 0, pfn);
            }
            (on, off, pages)
        };
        let written = |sync_all: bool, pfn: Pfn| {
            let mut k = w.borrow_mut();
            let wbc = WritebackControl {
                sync_all,
                ..Default::default()
            };
            let mut data = NFS_AOPS.writepages_start(&mut k, ino, &wbc);
            let index = k.pages.index[pfn as usize] as u64;
            let r = NFS_AOPS.writepage(&mut k, pfn, &wbc, &mut data);
            // The RPC is not sent: its pages stay under writeback, as if in flight.
            let _ = index;
            std::mem::forget(data);
            r
        };
        assert_eq!(
            written(false, pages[on as usize + 1]),
            WritePage::Congested { bdi: 0 }
        );
        assert_eq!(written(true, pages[on as usize + 2]), WritePage::Started);
        let woke = spawn_flagged(
            &w,
            |w| async move { nfs_wait_congested(&w, 0, false).await },
        );
        run_to_quiet(&mut ex, &w);
        assert!(!woke.get(), "asleep while congested");
        // on + 3 in writeback: ending all but `off` keeps it asleep, one more wakes it.
        for &pfn in &pages[..(on + 3 - off) as usize] {
            nfs_end_page_writeback(&mut w.borrow_mut(), 0, pfn);
        }
        run_to_quiet(&mut ex, &w);
        assert!(!woke.get(), "at OFF still asleep");
        nfs_end_page_writeback(&mut w.borrow_mut(), 0, pages[(on + 3 - off) as usize]);
        run_to_quiet(&mut ex, &w);
        assert!(woke.get(), "woken below OFF");
        // Without 40, the page is simply started.
        let (w, ino) = mount_with("ioless-v3", &[Switch::NfsWritebackWaitQueue]);
        let mut k = w.borrow_mut();
        let on = client_of(&k, 0).unwrap().congestion.on;
        let pages = cached(&mut k, ino, &(0..on + 2).collect::<Vec<_>>());
        for &pfn in &pages[..on as usize + 1] {
            nfs_set_page_writeback(&mut k, 0, pfn);
        }
        assert!(client_of(&k, 0).unwrap().congestion.congested());
        let wbc = WritebackControl::default();
        let mut data = NFS_AOPS.writepages_start(&mut k, ino, &wbc);
        let pfn = pages[on as usize + 1];
        assert_eq!(
            NFS_AOPS.writepage(&mut k, pfn, &wbc, &mut data),
            WritePage::Started
        );
        std::mem::forget(data);
    }

    /// Run the machine a millisecond, enough for woken tasks to run.
    fn run_to_quiet(ex: &mut crate::engine::Executor<Kernel>, w: &World) {
        let t = w.borrow().sched.now() + crate::engine::MSEC;
        ex.run_until(t, |_| false);
    }

    /// Patch 41: the flusher's COMMIT waits while the mount's in_commit is at the limit,
    /// and is woken only once a COMMIT's answer takes it below the limit less an eighth.
    #[test]
    fn a_commit_waits_for_in_commit_below_the_limit_with_patch_41() {
        let (w, _) = mount_with("ioless-v3", &[]);
        let mut ex = crate::engine::Executor::new(w.clone());
        let (a, b) = {
            let mut k = w.borrow_mut();
            let (a, b) = (
                crate::mm::inode::new_inode(&mut k, "a", 0),
                crate::mm::inode::new_inode(&mut k, "b", 0),
            );
            let limit = client_of(&k, 0).unwrap().congestion.on;
            // Two COMMITs in flight: `limit / 8` and the rest up to the limit.
            for (ino, sent) in [(a, limit / 8), (b, limit - limit / 8)] {
                let n = nfs_i(&mut k, ino);
                n.commit_in_flight = true;
                n.commit_sent = sent;
            }
            client(&mut k, 0).in_commit = limit;
            (a, b)
        };
        let woke = spawn_flagged(&w, |w| async move { nfs_commit_wait(&w, 0).await });
        run_to_quiet(&mut ex, &w);
        assert!(!woke.get(), "in_commit at the limit: asleep");
        // Down to limit − limit/8: below the limit, but not woken yet.
        nfs_commit_release_pages(&mut w.borrow_mut(), 0, a);
        run_to_quiet(&mut ex, &w);
        assert!(!woke.get(), "not below limit − limit/8");
        nfs_commit_release_pages(&mut w.borrow_mut(), 0, b);
        run_to_quiet(&mut ex, &w);
        assert!(woke.get());
        assert_eq!(client_of(&w.borrow(), 0).unwrap().in_commit, 0);
        // Below the limit the wait returns at once.
        let at_once = spawn_flagged(&w, |w| async move { nfs_commit_wait(&w, 0).await });
        run_to_quiet(&mut ex, &w);
        assert!(at_once.get());
    }

    /// Patch 42's three reasons to commit against the old "defer while ncommit ≤ npages/2".
    #[test]
    fn commit_heuristics_of_patch_42_against_the_old_rule() {
        let (w, ino) = mount_with("ioless-v3", &[]);
        let mut k = w.borrow_mut();
        // (npages, ncommit, in_commit) → (old rule, patch 42)
        let cases = [
            ((10, 10, 1000), (true, true)),         // no WRITE in flight
            ((3000, 1024, 100_000), (false, true)), // 4 MiB to commit
            ((3000, 600, 1000), (false, true)),     // more than half of in_commit
            ((3000, 600, 1200), (false, false)),    // exactly half: deferred
            ((1000, 600, 2000), (true, false)),     // old rule commits, 42 defers
            ((1000, 0, 0), (false, false)),         // nothing to commit
        ];
        for ((npages, ncommit, in_commit), (old, new)) in cases {
            for (on, want) in [(false, old), (true, new)] {
                k.sw.set(Switch::NfsCommitHeuristics, on);
                k.inodes[ino].state = 0;
                let n = nfs_i(&mut k, ino);
                (n.npages, n.ncommit) = (npages, ncommit);
                client(&mut k, 0).in_commit = in_commit;
                let due = nfs_commit_due(&mut k, ino);
                assert_eq!(due, want, "42 {on}: {npages} {ncommit} {in_commit}");
                let deferred = ncommit > 0 && !due;
                assert_eq!(k.inodes[ino].state & I_DIRTY_DATASYNC != 0, deferred);
            }
        }
    }

    /// Four unstable pages of `ino` at `indexes` on the commit list, no COMMIT in flight.
    fn on_commit_list(k: &mut Kernel, ino: usize, indexes: &[u64]) {
        for pfn in cached(k, ino, indexes) {
            nfs_i(k, ino).npages += 1;
            nfs_mark_request_commit(k, ino, pfn);
        }
    }

    /// Patch 43: the pages write_inode puts in a COMMIT count against the flusher's
    /// nr_to_write without it, not with it. Patch 41's counter follows the COMMIT; 44's
    /// range is its first to last page index.
    #[test]
    fn write_inode_leaves_nr_to_write_with_patch_43_and_commits_a_range() {
        for keeps in [false, true] {
            let off = if keeps {
                vec![]
            } else {
                vec![Switch::NfsWriteInodeKeepsNrToWrite]
            };
            let (w, ino) = mount_with("ioless-v3", &off);
            let mut k = w.borrow_mut();
            on_commit_list(&mut k, ino, &[30, 31, 35, 33]);
            let counted = nfs_write_inode(&mut k, ino, 3, 1024);
            assert_eq!(counted, if keeps { 0 } else { 3 }, "43 {keeps}");
            let n = nfs_i_ref(&k, ino);
            assert!(n.commit_in_flight);
            assert_eq!((n.commit_sent, n.commit_range), (4, (30, 6)));
            assert_eq!(client_of(&k, 0).unwrap().in_commit, 4);
            assert_eq!(client_of(&k, 0).unwrap().stats.pages_sent_to_commit, 4);
        }
    }

    /// Patch 44 in the trace: `nfs_commit_release` gives the COMMIT's range with the switch,
    /// `offset=0 len=0` (the whole file) without.
    #[test]
    fn the_commit_release_trace_gives_the_range_with_patch_44() {
        for (range, want) in [(true, "offset=10 len=5"), (false, "offset=0 len=0")] {
            let off = if range {
                vec![]
            } else {
                vec![Switch::NfsCommitRange]
            };
            let (w, ino) = mount_with("ioless-v3", &off);
            let mut ex = crate::engine::Executor::new(w.clone());
            let cap = crate::mm::trace::testing::capture(&w);
            {
                let mut k = w.borrow_mut();
                on_commit_list(&mut k, ino, &[10, 14, 12]);
                nfs_commit_inode_nowait(&mut k, ino);
            }
            ex.run_until(crate::engine::SEC, |_| false);
            let lines = cap.lines_with("nfs_commit_release");
            let line = lines.first().expect("the COMMIT was answered");
            assert!(line.ends_with(want), "{line}");
        }
    }

    /// Patch 45: the mount's limit is at most an eighth of the boot-time dirty threshold.
    #[test]
    fn the_congestion_limit_is_capped_by_the_dirty_threshold_with_patch_45() {
        let (w, _) = mount_with("ioless-v3", &[]);
        let k = w.borrow();
        let managed: u64 = k.zones.iter().map(|z| z.managed_pages).sum();
        let thresh = crate::mm::page_writeback::dirty_limits(&k).1;
        let on = client_of(&k, 0).unwrap().congestion.on;
        assert!(thresh / 8 < 16 * managed.isqrt(), "the cap bites here");
        assert_eq!(on, thresh / 8);
        let (w, _) = mount_with("ioless-v3", &[Switch::NfsCongestionByDirtyThresh]);
        let k = w.borrow();
        assert_eq!(
            client_of(&k, 0).unwrap().congestion.on,
            16 * managed.isqrt()
        );
    }

    /// §8: `nfs_write_inode` defers the COMMIT while at most half of the inode's requests
    /// await it (WRITEs are still outstanding), keeping the inode I_DIRTY_DATASYNC.
    #[test]
    fn write_inode_defers_the_commit_while_writes_are_outstanding() {
        let (w, ino) = mount();
        let mut k = w.borrow_mut();
        nfs_i(&mut k, ino).npages = 10;
        nfs_i(&mut k, ino).ncommit = 5;
        assert_eq!(nfs_write_inode(&mut k, ino, 1024, 1024), 0);
        assert_ne!(k.inodes[ino].state & I_DIRTY_DATASYNC, 0, "still to commit");
        assert!(!nfs_i_ref(&k, ino).commit_in_flight);
        // Nothing awaiting COMMIT: nothing to do, nothing re-marked.
        k.inodes[ino].state = 0;
        nfs_i(&mut k, ino).ncommit = 0;
        assert_eq!(nfs_write_inode(&mut k, ino, 1024, 1024), 0);
        assert_eq!(k.inodes[ino].state & I_DIRTY_DATASYNC, 0);
    }

    /// LD patch 8: pages of an inode with a COMMIT in flight count as under writeback;
    /// otherwise a page awaiting COMMIT counts as dirty; a page with no request is left as
    /// its flags say.
    #[test]
    fn the_nfs_hook_reports_commit_state() {
        let (w, ino) = mount();
        let mut k = w.borrow_mut();
        let pfn: Pfn = 5000;
        k.pages.mapping[pfn as usize] = ino as u32;
        assert_eq!(
            nfs_check_dirty_writeback(&k, pfn, false, false),
            (false, false)
        );
        k.pages.set(pfn, PG_PRIVATE);
        assert_eq!(
            nfs_check_dirty_writeback(&k, pfn, false, false),
            (true, false)
        );
        nfs_i(&mut k, ino).commit_in_flight = true;
        assert_eq!(
            nfs_check_dirty_writeback(&k, pfn, false, false),
            (false, true)
        );
        k.pages.clear(pfn, PG_PRIVATE);
        assert!(
            k.sw.on(Switch::NfsDirtyWritebackHook),
            "lessdisrupt has patch 8"
        );
    }

    /// `nfs_release_page`: direct reclaim with GFP_KERNEL waits for the inode's COMMIT;
    /// kswapd starts one without waiting; a mask without IO/FS only leaves the page.
    #[test]
    fn release_page_waits_only_in_direct_reclaim() {
        let (w, ino) = mount();
        let mut k = w.borrow_mut();
        let pfn: Pfn = 5000;
        k.pages.mapping[pfn as usize] = ino as u32;
        assert_eq!(
            nfs_release_page(&mut k, pfn, Gfp::KERNEL, false),
            Release::Wait
        );
        assert_eq!(
            nfs_release_page(&mut k, pfn, Gfp::KERNEL, true),
            Release::Busy
        );
        assert_eq!(nfs_release_page(&mut k, pfn, Gfp(0), false), Release::Busy);
    }

    /// Cache `indexes` of `ino` as clean pages on the inactive file list (the file grows to
    /// hold them).
    fn cached(k: &mut Kernel, ino: usize, indexes: &[u64]) -> Vec<Pfn> {
        use crate::mm::page_alloc::{alloc_flags, get_page_from_freelist};
        indexes
            .iter()
            .map(|&i| {
                let pfn = get_page_from_freelist(k, Gfp::KERNEL, 0, alloc_flags::NO_WATERMARKS)
                    .expect("a free page");
                k.pages.flags[pfn as usize] = crate::mm::page::PG_UPTODATE;
                crate::mm::filemap::add_to_page_cache_lru(k, pfn, ino, i);
                let inode = &mut k.inodes[ino];
                inode.size_pages = inode.size_pages.max(i + 1);
                pfn
            })
            .collect()
    }

    /// `nfs_writepages` of `pages` (at `indexes`) as the flusher does it: dirtied by
    /// `write()`, then taken for IO into one descriptor.
    fn write_back(k: &mut Kernel, ino: usize, indexes: &[u64], pages: &[Pfn]) {
        use crate::mm::page_writeback::{clear_page_dirty_for_io, set_page_dirty, DirtyTask};
        let mut task = DirtyTask::default();
        for &pfn in pages {
            set_page_dirty(k, pfn, &mut task);
        }
        assert_eq!(
            nfs_i_ref(k, ino).npages,
            pages.len() as u64,
            "one request a page"
        );
        let mut d = nfs_pageio_init(k, ino, WriteHow::CondStable, RpcPriority::Low);
        for (&i, &pfn) in indexes.iter().zip(pages) {
            assert!(clear_page_dirty_for_io(k, pfn));
            nfs_pageio_add(k, &mut d, i, pfn);
        }
        nfs_pageio_complete(k, d);
    }

    /// Run `ex` (the machine's only executor) to `t`; the invariants must hold there.
    fn run_to(ex: &mut crate::engine::Executor<Kernel>, w: &World, t: Nanos) {
        ex.run_until(t, |_| false);
        let k = w.borrow();
        assert_eq!(k.fatal, None);
        crate::mm::invariants::check(&k).expect("invariants hold");
    }

    /// A mount with eight pages of a file written back in two runs: the descriptor sends
    /// the first because the second does not continue it (pg_moreio), so neither is
    /// FILE_SYNC. Run to 5 ms: the WRITEs are answered, no COMMIT (12.7 ms on the server)
    /// yet.
    fn eight_unstable_pages() -> (World, crate::engine::Executor<Kernel>, usize) {
        let (w, ino) = mount();
        let mut ex = crate::engine::Executor::new(w.clone());
        let indexes = [0, 1, 2, 3, 10, 11, 12, 13];
        {
            let mut k = w.borrow_mut();
            let pages = cached(&mut k, ino, &indexes);
            write_back(&mut k, ino, &indexes, &pages);
            assert_eq!(k.global_stat(ZoneStat::nr_writeback), 8);
            assert_eq!(k.bdis[0].reclaimable, 0);
        }
        run_to(&mut ex, &w, 5 * crate::engine::MSEC);
        (w, ex, ino)
    }

    /// §3.3: an UNSTABLE reply leaves the page clean, not under writeback, PG_private, in
    /// NR_UNSTABLE_NFS and the bdi's reclaimable pages, with the inode I_DIRTY_DATASYNC;
    /// the COMMIT's answer cleans it and frees its request.
    #[test]
    fn unstable_pages_are_accounted_until_their_commit_is_answered() {
        use crate::engine::SEC;
        let (w, mut ex, ino) = eight_unstable_pages();
        {
            let mut k = w.borrow_mut();
            let c = client_of(&k, 0).unwrap();
            assert_eq!((c.stats.write_rpcs, c.stats.stable_write_rpcs), (2, 0));
            assert_eq!(c.stats.commits, 0);
            for (_, pfn) in k.inodes[ino].cached() {
                assert!(k.pages.test(pfn, PG_PRIVATE));
                assert!(!k.pages.test(pfn, PG_DIRTY | PG_WRITEBACK));
            }
            assert_eq!(k.global_stat(ZoneStat::nr_unstable), 8);
            assert_eq!(k.global_stat(ZoneStat::nr_writeback), 0);
            assert_eq!(k.bdis[0].reclaimable, 8, "unstable pages are reclaimable");
            assert_ne!(k.inodes[ino].state & I_DIRTY_DATASYNC, 0);
            let n = nfs_i_ref(&k, ino);
            assert_eq!((n.npages, n.ncommit + n.committing.len() as u64), (8, 8));
            // The flusher may have sent the COMMIT already; one per inode in any case.
            nfs_commit_inode_nowait(&mut k, ino);
            assert!(nfs_i_ref(&k, ino).commit_in_flight);
            assert_eq!(
                nfs_commit_inode_nowait(&mut k, ino),
                0,
                "one COMMIT at a time"
            );
        }
        run_to(&mut ex, &w, SEC);
        let k = w.borrow();
        assert_eq!(k.global_stat(ZoneStat::nr_unstable), 0);
        assert_eq!(k.bdis[0].reclaimable, 0);
        for (_, pfn) in k.inodes[ino].cached() {
            assert!(!k.pages.test(pfn, PG_PRIVATE | PG_DIRTY | PG_WRITEBACK));
        }
        let n = nfs_i_ref(&k, ino);
        assert_eq!((n.npages, n.ncommit, n.commit_in_flight), (0, 0, false));
        let c = client_of(&k, 0).unwrap();
        assert_eq!((c.stats.commits, c.stats.pages_committed), (1, 8));
    }

    /// §8 `FLUSH_COND_STABLE`: a writepages call that sends a single RPC while nothing of
    /// the inode awaits COMMIT asks FILE_SYNC: the pages come back clean, never unstable.
    #[test]
    fn a_single_rpc_with_nothing_to_commit_is_written_file_sync() {
        let (w, ino) = mount();
        let mut ex = crate::engine::Executor::new(w.clone());
        let indexes = [20, 21, 22, 23];
        {
            let mut k = w.borrow_mut();
            let pages = cached(&mut k, ino, &indexes);
            write_back(&mut k, ino, &indexes, &pages);
        }
        run_to(&mut ex, &w, crate::engine::SEC);
        let k = w.borrow();
        let c = client_of(&k, 0).unwrap();
        assert_eq!((c.stats.write_rpcs, c.stats.stable_write_rpcs), (1, 1));
        assert_eq!(c.stats.pages_written_stable, 4);
        assert_eq!(c.stats.commits, 0);
        assert_eq!(nfs_i_ref(&k, ino).npages, 0);
        assert_eq!(k.global_stat(ZoneStat::nr_unstable), 0);
        for (_, pfn) in k.inodes[ino].cached() {
            assert!(!k.pages.test(pfn, PG_PRIVATE | PG_DIRTY | PG_WRITEBACK));
        }
    }

    /// §8: the mount is write-congested once more than ON = 16·√(RAM pages) pages are in
    /// WRITE RPCs, and stays so until fewer than OFF = ON − ON/4 are; `bdi_write_congested`
    /// and `nr_bdi_congested` follow.
    #[test]
    fn the_mount_congests_above_on_and_clears_below_off() {
        use crate::mm::backing_dev::bdi_write_congested;
        let (w, ino) = mount();
        let mut k = w.borrow_mut();
        let managed: u64 = k.zones.iter().map(|z| z.managed_pages).sum();
        let (on, off) = {
            let c = &client_of(&k, 0).unwrap().congestion;
            (c.on, c.off)
        };
        assert_eq!(on, 16 * managed.isqrt());
        assert_eq!(off, on - on / 4);
        let indexes: Vec<u64> = (0..=on).collect();
        let pages = cached(&mut k, ino, &indexes);
        for (n, &pfn) in pages.iter().enumerate() {
            assert_eq!(bdi_write_congested(&k, 0), n as u64 > on);
            nfs_set_page_writeback(&mut k, 0, pfn);
        }
        assert!(bdi_write_congested(&k, 0));
        assert_eq!(k.nr_bdi_congested_async, 1);
        for (n, &pfn) in pages.iter().enumerate() {
            let left = on + 1 - n as u64;
            assert_eq!(bdi_write_congested(&k, 0), left >= off, "{left} in WRITEs");
            nfs_end_page_writeback(&mut k, 0, pfn);
        }
        assert!(!bdi_write_congested(&k, 0));
        assert_eq!(k.nr_bdi_congested_async, 0);
    }

    /// Truncation of unstable pages keeps the counters exact: a page in the COMMIT in
    /// flight is waited for (its request is locked), one still on the commit list is taken
    /// off it unwritten.
    #[test]
    fn truncating_unstable_pages_keeps_the_counters_exact() {
        use crate::engine::SEC;
        let (w, mut ex, ino) = eight_unstable_pages();
        {
            // Four more unstable pages after the COMMIT was sent: on the commit list only.
            let mut k = w.borrow_mut();
            nfs_commit_inode_nowait(&mut k, ino);
            let more = cached(&mut k, ino, &[30, 31, 32, 33]);
            for pfn in more {
                nfs_i(&mut k, ino).npages += 1;
                nfs_mark_request_commit(&mut k, ino, pfn);
            }
            assert_eq!(k.global_stat(ZoneStat::nr_unstable), 12);
            assert!(nfs_i_ref(&k, ino).commit_in_flight);
            assert_eq!(nfs_i_ref(&k, ino).ncommit, 4);
        }
        let w2 = w.clone();
        w.borrow_mut().sched.spawn("truncate", async move {
            crate::mm::filemap::truncate_inode_pages(&w2, ino).await;
        });
        run_to(&mut ex, &w, SEC);
        let k = w.borrow();
        assert_eq!(k.inodes[ino].nrpages, 0);
        assert_eq!(k.global_stat(ZoneStat::nr_unstable), 0);
        assert_eq!(k.bdis[0].reclaimable, 0);
        let n = nfs_i_ref(&k, ino);
        assert_eq!((n.npages, n.ncommit, n.commit_in_flight), (0, 0, false));
        let c = client_of(&k, 0).unwrap();
        assert_eq!(
            c.stats.pages_committed, 8,
            "the COMMIT in flight finished first"
        );
    }
}
