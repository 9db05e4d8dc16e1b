//! An NFS mount as a request queue: the network, the server's disk and its journal
//! commits (`kernel-writeback.md` §9.3), and the client's write congestion.

use super::*;
use crate::calibration::PAGE_SIZE;

// The NFS defaults (`NFS_NET_BW`, `NFS_RTT`, `NFS_SERVER_DISK_BW`, `NFS_COMMIT_COST`,
// `NFS_WSIZE_SECTORS`) are physical estimates: they live in `calibration.rs`.
pub use crate::calibration::{
    NFS_COMMIT_COST, NFS_NET_BW, NFS_RTT, NFS_SERVER_DISK_BW, NFS_WSIZE_SECTORS,
};

/// The device-like part of an NFS mount: WRITE/READ RPCs over one network link and COMMIT.
///
/// * The link carries one RPC's payload at a time (`bytes / net_bw`), then the reply comes
///   back after `rtt`; RPCs pipeline, so a stream runs at `net_bw`.
/// * UNSTABLE WRITEs land in the server's page cache, which drains to its disk at
///   `server_disk_bw` in the background. A COMMIT (or a FILE_SYNC WRITE) waits for that
///   backlog to drain, plus `commit_cost`.
/// * READs are served at the slower of the link and the server disk.
///
/// The unstable-page bookkeeping (which pages await COMMIT, when the client sends it) is the
/// filesystem layer's job; [`NfsCongestion`] gives the mount's congestion thresholds.
#[derive(Clone, Debug)]
pub struct Nfs {
    name: String,
    net_bw: u64,
    rtt: Nanos,
    server_disk_bw: u64,
    commit_cost: Nanos,
    wsize_sectors: u32,
    link_free: Nanos,
    /// Server dirty bytes at `backlog_at`; the server disk drains them from `backlog_at`
    /// on (a flush in progress pushes `backlog_at` to its end).
    backlog: u64,
    backlog_at: Nanos,
    /// When the last scheduled flush starts (it ends at `backlog_at`).
    flush_start: Nanos,
}

impl Nfs {
    pub fn new(
        name: &str,
        net_bw: u64,
        rtt: Nanos,
        server_disk_bw: u64,
        commit_cost: Nanos,
        wsize_sectors: u32,
    ) -> Result<Self, DeviceError> {
        check_bw(name, "network", net_bw)?;
        check_bw(name, "server disk", server_disk_bw)?;
        check(name, wsize_sectors >= 1, || "wsize is zero".into())?;
        Ok(Nfs {
            name: name.to_string(),
            net_bw,
            rtt,
            server_disk_bw,
            commit_cost,
            wsize_sectors,
            link_free: 0,
            backlog: 0,
            backlog_at: 0,
            flush_start: 0,
        })
    }

    /// A gigabit-Ethernet mount of a server with one 7200 rpm disk.
    pub fn gige(name: &str) -> Result<Self, DeviceError> {
        Nfs::new(
            name,
            NFS_NET_BW,
            NFS_RTT,
            NFS_SERVER_DISK_BW,
            NFS_COMMIT_COST,
            NFS_WSIZE_SECTORS,
        )
    }

    /// Server dirty bytes left at `t` (drained at `server_disk_bw` since the last change).
    fn drain(&mut self, t: Nanos) {
        if t > self.backlog_at {
            let drained =
                u128::from(t - self.backlog_at) * u128::from(self.server_disk_bw) / u128::from(SEC);
            self.backlog = self
                .backlog
                .saturating_sub(drained.min(u128::from(u64::MAX)) as u64);
            self.backlog_at = t;
        }
    }

    /// Server bytes not yet on its disk at `now`.
    pub fn server_backlog(&mut self, now: Nanos) -> u64 {
        self.drain(now);
        self.backlog
    }

    /// Send `bytes` over the link starting no earlier than `now`; returns when it arrived.
    fn send(&mut self, bytes: u64, now: Nanos) -> Nanos {
        let start = now.max(self.link_free);
        self.link_free = start + transfer(bytes, self.net_bw);
        self.link_free
    }

    /// A WRITE RPC of `bytes` sent at `now`: time until the reply. `stable` = FILE_SYNC.
    pub fn write_rpc(&mut self, bytes: u64, stable: bool, now: Nanos) -> Nanos {
        let arrived = self.send(bytes, now) + self.rtt / 2;
        self.drain(arrived);
        self.backlog += bytes;
        let answered = if stable {
            self.flush_server(arrived)
        } else {
            arrived
        };
        answered + (self.rtt - self.rtt / 2) - now
    }

    /// The server writes its whole backlog and commits, starting at `at` or when its disk
    /// is free; returns when that is done.
    ///
    /// Concurrent stable requests share commits: knfsd's threads serve them in parallel and
    /// the server filesystem's journal batches their fsyncs (a jbd/jbd2 commit in progress
    /// makes later fsyncs wait for it, then one commit takes them all). So a request that
    /// arrives while a flush is queued behind a running one joins the queued flush: it adds
    /// its data, not another commit. mmsim simplification: the nfsd thread count (8 by
    /// default) never limits this.
    fn flush_server(&mut self, at: Nanos) -> Nanos {
        let data = transfer(self.backlog, self.server_disk_bw);
        self.backlog = 0;
        if self.flush_start > at {
            self.backlog_at += data;
            return self.backlog_at;
        }
        let start = at.max(self.backlog_at);
        self.flush_start = start;
        self.backlog_at = start + self.commit_cost + data;
        self.backlog_at
    }

    /// A COMMIT sent at `now`: time until the reply (the server's backlog is on disk then).
    pub fn commit(&mut self, now: Nanos) -> Nanos {
        let arrived = now + self.rtt / 2;
        self.drain(arrived);
        self.flush_server(arrived) + (self.rtt - self.rtt / 2) - now
    }

    /// A READ RPC of `bytes` sent at `now`: time until the data is back.
    pub fn read_rpc(&mut self, bytes: u64, now: Nanos) -> Nanos {
        let net_done = self.send(bytes, now);
        let disk = transfer(bytes, self.server_disk_bw);
        (net_done.max(now + disk) + self.rtt) - now
    }
}

impl Device for Nfs {
    fn name(&self) -> &str {
        &self.name
    }

    /// Reads are READ RPCs, writes UNSTABLE WRITE RPCs.
    fn service_time(&mut self, io: &Io, now: Nanos) -> Nanos {
        match io.dir {
            Dir::Read => self.read_rpc(io.bytes(), now),
            Dir::Write => self.write_rpc(io.bytes(), false, now),
        }
    }

    fn max_sectors(&self) -> u32 {
        self.wsize_sectors
    }

    fn as_nfs(&mut self) -> Option<&mut Nfs> {
        Some(self)
    }

    /// RPCs in flight at once: the sunrpc slot table default, 16 (`RPC_DEF_SLOT_TABLE`;
    /// 3.1+ grows TCP slot tables dynamically, so this is an estimate).
    fn queue_depth(&self) -> u32 {
        NFS_RPC_SLOTS
    }

    /// NFS has no request queue or request pool: a noop queue with an effectively unlimited
    /// pool, `wsize` requests and one slot per RPC. Its `write_congested` means nothing;
    /// the mount's congestion is [`NfsCongestion`].
    fn queue_config(&self) -> QueueConfig {
        QueueConfig {
            nr_requests: NFS_UNLIMITED_REQUESTS,
            max_sectors: self.wsize_sectors,
            depth: NFS_RPC_SLOTS,
            elevator: ElevatorKind::Noop,
            rotational: false,
        }
    }
}

/// RPC slots per transport, `RPC_DEF_SLOT_TABLE` (`include/linux/sunrpc/xprt.h`).
pub const NFS_RPC_SLOTS: u32 = 16;
/// Pool size standing for "no pool" in an NFS mount's queue.
pub const NFS_UNLIMITED_REQUESTS: u32 = 1 << 24;

/// Ceiling of the NFS congestion threshold: 256 MiB (`nfs_init_writepagecache`).
pub const NFS_CONGESTION_MAX_KB: u64 = 256 * 1024;

/// `NFS_WAIT_PAGES` (patch 40 of IO-less v3): at most 1 MiB of hysteresis below each
/// threshold, so that waiters are woken in batches of at most that much.
pub const NFS_WAIT_PAGES: u64 = 1024 * 1024 / PAGE_SIZE;

/// An NFS mount's own write congestion (`fs/nfs/write.c`, `kernel-writeback.md` §8):
/// counted on pages under WRITE-RPC writeback (`nfss->writeback`); congested when the count
/// goes above ON = `min(16·√(RAM pages), 256 MiB)` pages, cleared when it drops below
/// OFF = ON − ON/4.
///
/// With the wait queues of patch 40 of IO-less v3 ([`NfsCongestion::wait_queue`]) there
/// are two classes: ASYNC as before but cleared below ON − min(ON/8, 1 MiB), and SYNC,
/// set above 2·ON and cleared below 2·ON − min(ON/8, 1 MiB).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NfsCongestion {
    /// ON: `nfs_congestion_kb` in pages (patch 40's and 41's `limit`).
    pub on: u64,
    /// OFF of the ASYNC class.
    pub off: u64,
    writeback: u64,
    congested: bool,
    /// Patch 40: the SYNC class and the narrower hysteresis.
    pub wait_queue: bool,
    sync_congested: bool,
}

/// What one `end_writeback` crossed (patch 40 wakes a class's waiters below its OFF).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EndWriteback {
    /// The ASYNC congestion cleared.
    pub async_cleared: bool,
    /// Below the ASYNC / SYNC class's OFF.
    pub below_async_off: bool,
    pub below_sync_off: bool,
}

impl NfsCongestion {
    /// Thresholds for a machine with `total_ram_pages` 4 KiB pages.
    pub fn new(total_ram_pages: u64) -> Self {
        Self::with_cap(total_ram_pages, u64::MAX, false)
    }

    /// Thresholds with `nfs_congestion_kb` also capped at `cap_kb` (patch 45: an eighth of
    /// the boot-time dirty threshold), and with patch 40's classes if `wait_queue`.
    pub fn with_cap(total_ram_pages: u64, cap_kb: u64, wait_queue: bool) -> Self {
        let kb = (16 * total_ram_pages.isqrt() * 4)
            .min(NFS_CONGESTION_MAX_KB)
            .min(cap_kb);
        // At least one page, so that the mount can ever be uncongested.
        let on = (kb / 4).max(1);
        let off = if wait_queue {
            on - (on / 8).min(NFS_WAIT_PAGES)
        } else {
            on - on / 4
        };
        NfsCongestion {
            on,
            off,
            writeback: 0,
            congested: false,
            wait_queue,
            sync_congested: false,
        }
    }

    /// OFF of the SYNC class (patch 40).
    pub fn sync_off(&self) -> u64 {
        2 * self.on - (self.on / 8).min(NFS_WAIT_PAGES)
    }

    /// `pages` entered writeback; true if this made the mount (ASYNC-)congested. With
    /// patch 40 a count above 2·ON sets SYNC congestion if ASYNC was set already.
    pub fn start_writeback(&mut self, pages: u64) -> bool {
        self.writeback += pages;
        let became = !self.congested && self.writeback > self.on;
        self.congested |= became;
        if self.wait_queue && !became && !self.sync_congested && self.writeback > 2 * self.on {
            self.sync_congested = true;
        }
        became
    }

    /// `pages` left writeback; what it cleared and crossed.
    pub fn end_writeback(&mut self, pages: u64) -> EndWriteback {
        self.writeback = self.writeback.saturating_sub(pages);
        let below_async_off = self.writeback < self.off;
        let below_sync_off = self.wait_queue && self.writeback < self.sync_off();
        let async_cleared = self.congested && below_async_off;
        self.congested &= !async_cleared;
        self.sync_congested &= !below_sync_off;
        EndWriteback {
            async_cleared,
            below_async_off,
            below_sync_off,
        }
    }

    pub fn congested(&self) -> bool {
        self.congested
    }

    /// Whether a writer of class `sync` (WB_SYNC_ALL) must wait (patch 40).
    pub fn class_congested(&self, sync: bool) -> bool {
        if sync {
            self.sync_congested
        } else {
            self.congested
        }
    }

    pub fn writeback_pages(&self) -> u64 {
        self.writeback
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nfs_commit_waits_for_the_server_backlog() {
        let mut d = Nfs::gige("server:/export").unwrap();
        let mb = 1_000_000;
        // 100 MB of UNSTABLE writes stream at the network rate.
        let mut now = 0;
        for _ in 0..200 {
            now += d.write_rpc(mb / 2, false, now);
        }
        // One RPC at a time: 0.5 MB / (4.27 ms on the wire + 0.2 ms round trip) ≈ 112 MB/s.
        let mb_s = 100.0 / (now as f64 / SEC as f64);
        assert!((105.0..117.0).contains(&mb_s), "{mb_s:.1} MB/s");
        // The server disk (138 MB/s) keeps up with 117 MB/s, so little backlog is left...
        let backlog = d.server_backlog(now);
        assert!(backlog < 2 * mb, "{backlog}");
        let c = d.commit(now);
        assert!(c >= NFS_COMMIT_COST + NFS_RTT);
        // ...but a slow server disk makes COMMIT pay for it.
        let mut slow = Nfs::new(
            "slow:/x",
            NFS_NET_BW,
            NFS_RTT,
            20 * mb,
            NFS_COMMIT_COST,
            1024,
        )
        .unwrap();
        let mut now = 0;
        for _ in 0..100 {
            now += slow.write_rpc(mb / 2, false, now);
        }
        let c = slow.commit(now);
        assert!(c > SEC, "commit {c}");
        // A second COMMIT right away finds nothing to flush but waits for the disk.
        let c2 = slow.commit(now);
        assert!(c2 >= c + NFS_COMMIT_COST, "second commit {c2} after {c}");
    }

    #[test]
    fn concurrent_stable_writes_share_journal_commits() {
        // Sixteen one-page FILE_SYNC WRITEs sent at once (one per RPC slot): the first
        // starts a commit, the other fifteen arrive while it runs and all join the next
        // one, as knfsd's threads and the journal's batched fsyncs serve them. Sent one
        // after another, each would pay a commit of its own.
        let mut d = Nfs::gige("server:/export").unwrap();
        let replies: Vec<Nanos> = (0..16).map(|_| d.write_rpc(4096, true, 0)).collect();
        let last = *replies.iter().max().unwrap();
        assert!(last < 3 * NFS_COMMIT_COST, "{last}");
        assert!(last >= 2 * NFS_COMMIT_COST, "two commits: {last}");
        // One batch: the joiners' replies differ only by their pages' wire and disk time.
        let first_joiner = *replies[1..].iter().min().unwrap();
        assert!(last - first_joiner < MSEC, "{first_joiner} .. {last}");
        let mut serial = Nfs::gige("server:/export").unwrap();
        let mut now = 0;
        for _ in 0..16 {
            now += serial.write_rpc(4096, true, now);
        }
        assert!(now >= 16 * NFS_COMMIT_COST, "{now}");
    }

    #[test]
    fn nfs_congestion_thresholds_for_4_gib_are_16384_and_12288_pages() {
        let mut c = NfsCongestion::new(1 << 20);
        assert_eq!((c.on, c.off), (16_384, 12_288));
        assert!(!c.start_writeback(16_384));
        assert!(c.start_writeback(1));
        assert!(!c.end_writeback(16_385 - 12_288).async_cleared);
        assert!(c.end_writeback(1).async_cleared);
        assert!(!c.congested());
        // Capped at 256 MiB = 65 536 pages.
        assert_eq!(NfsCongestion::new(1 << 30).on, 65_536);
        // Without patch 40 there is no SYNC class.
        c.start_writeback(3 * 16_384);
        assert!(!c.class_congested(true));
    }

    /// Patch 40: ASYNC above ON, SYNC above 2·ON once ASYNC is set; cleared below ON and
    /// 2·ON less min(ON/8, 1 MiB).
    #[test]
    fn nfs_wait_queue_classes_set_and_clear_at_their_thresholds() {
        let mut c = NfsCongestion::with_cap(1 << 20, u64::MAX, true);
        let on = 16_384;
        assert_eq!((c.on, c.off, c.sync_off()), (on, on - 256, 2 * on - 256));
        assert!(!c.start_writeback(on));
        assert!(
            c.start_writeback(on + 1),
            "ASYNC above ON, SYNC only on a later page"
        );
        assert!(c.class_congested(false) && !c.class_congested(true));
        assert!(!c.start_writeback(1));
        assert!(c.class_congested(true), "SYNC above 2·ON");
        // 2·ON + 2 in writeback: down to 2·ON − 256 keeps SYNC, one less clears it.
        let e = c.end_writeback(258);
        assert!(c.class_congested(true) && !e.below_sync_off);
        let e = c.end_writeback(1);
        assert!(e.below_sync_off && !c.class_congested(true) && c.congested());
        // Down to ON − 256 keeps ASYNC, one less clears it.
        let e = c.end_writeback(c.writeback_pages() - (on - 256));
        assert!(!e.async_cleared && c.congested());
        let e = c.end_writeback(1);
        assert!(e.async_cleared && e.below_async_off && !c.congested());
        // A small limit: the hysteresis is an eighth of it.
        let small = NfsCongestion::with_cap(1 << 20, 4096, true);
        assert_eq!((small.on, small.off), (1024, 1024 - 128));
    }
}
