//! Whole runs on an NFS mount (issue 3, `kernel-writeback.md` §3.3, §8).

mod common;

use mmsim::engine::SEC;
use mmsim::mm::vmstat::ZoneStat;
use mmsim::presets;
use mmsim::report::timeseries::COLUMNS;
use mmsim::scenario::{BlockDevice, WorkloadKind};
use mmsim::sim::{self, RunOptions, RunOutputs};

/// A 2 GiB dd with conv=fdatasync to an NFS mount on an idle 4 GiB machine: WRITE replies
/// are UNSTABLE, so pages wait in NR_UNSTABLE_NFS until a COMMIT; the dirty throttle counts
/// them; the dd runs at the network's rate; and after fdatasync every page is on the
/// server and committed, with nothing dirty, unstable or under writeback.
#[test]
fn a_dd_to_nfs_ends_committed_at_the_network_rate() {
    let mut s = common::single_dd(4096, 2048, 40);
    s.machine.devices = vec![BlockDevice::nfs_mount("nfs0")];
    if let WorkloadKind::Dd(dd) = &mut s.workloads[0].kind {
        dd.device = "nfs0".into();
    }
    let k = presets::resolve("3.9", &[]).unwrap();
    let w = sim::boot(&s, &k, 1).unwrap();
    w.borrow_mut().check_every_batch = true;
    let end = sim::run_world(&w, 40 * SEC).unwrap();
    let k = w.borrow();
    let pages = 2048 * 256;
    let c = mmsim::fs::nfs::client_of(&k, 0).expect("an NFS mount");
    assert_eq!(c.stats.bytes_written, 2048 << 20, "{:?}", c.stats);
    // Every page is stable on the server: committed, or written FILE_SYNC (reclaim's
    // single-page writes).
    assert!(
        c.stats.pages_committed + c.stats.pages_written_stable >= pages,
        "{:?}",
        c.stats
    );
    assert!(c.stats.commits > 0 && c.stats.write_rpcs > 0);
    for stat in [
        ZoneStat::nr_dirty,
        ZoneStat::nr_writeback,
        ZoneStat::nr_unstable,
    ] {
        assert_eq!(k.global_stat(stat), 0, "{stat:?} after fdatasync");
    }
    let done = mmsim::workload::stats_of(&k, 0)
        .io_done_at
        .expect("dd finished") as f64
        / SEC as f64;
    let rate = (2048u64 << 20) as f64 / done;
    // Gigabit Ethernet's payload rate (calibration::NFS_NET_BW, 117 MB/s).
    assert!(
        (100e6..=117.5e6).contains(&rate),
        "{rate} B/s over {done} s (run ended at {end})"
    );
}

/// Unstable pages are seen during the run and counted with dirty ones by the throttle:
/// dirty + writeback + unstable stays between the background threshold and the limit.
#[test]
fn unstable_pages_are_throttled_like_dirty_ones() {
    let mut s = common::single_dd(4096, 2048, 20);
    s.machine.devices = vec![BlockDevice::nfs_mount("nfs0")];
    if let WorkloadKind::Dd(dd) = &mut s.workloads[0].kind {
        dd.device = "nfs0".into();
    }
    let k = presets::resolve("3.9", &[]).unwrap();
    let outputs = RunOutputs {
        sample_interval: Some(SEC),
        ..Default::default()
    };
    let (_, series) = sim::run_with(&s, &k, 1, RunOptions::default(), outputs).unwrap();
    let series = series.unwrap();
    let col = |name: &str| COLUMNS.iter().position(|c| *c == name).unwrap();
    let mid: Vec<&Vec<f64>> = series
        .rows
        .iter()
        .filter(|r| r[0] >= 5.0 && r[0] <= 12.0)
        .collect();
    assert!(
        mid.iter().any(|r| r[col("nr_unstable")] > 0.0),
        "unstable pages seen"
    );
    // The COMMIT columns: pages sent, then made stable, never more than were sent.
    let dev = |name: &str| {
        COLUMNS.len()
            + series
                .device_columns
                .iter()
                .position(|c| c == name)
                .unwrap()
    };
    let last = series.rows.last().unwrap();
    let (sent, stable) = (
        last[dev("nfs_commit_sent_nfs0")],
        last[dev("nfs_committed_nfs0")],
    );
    assert!(stable > 100_000.0 && stable <= sent, "{stable} of {sent}");
    for r in mid {
        let held = r[col("nr_dirty")] + r[col("nr_writeback")] + r[col("nr_unstable")];
        let (bg, thresh) = (r[col("dirty_background_thresh")], r[col("dirty_thresh")]);
        assert!(
            held > bg * 0.9 && held < thresh * 1.05,
            "t={} held {held} outside ({bg}, {thresh})",
            r[0]
        );
    }
}

/// Reclaim meets NFS pages in every state (dirty, in WRITEs, awaiting COMMIT) while a
/// mem_eater pushes a small machine into swap and a dd streams to the mount, then unlinks
/// its file: the page-state invariants (unstable counts, requests, no unstable page freed)
/// hold after every reclaim batch under every preset.
#[test]
fn reclaim_and_unlink_keep_nfs_page_state_exact_under_every_preset() {
    use mmsim::scenario::{MemEaterThen, Workload};
    let mut s = common::single_dd(256, 256, 12);
    s.machine.devices = vec![BlockDevice::nfs_mount("nfs0")];
    s.machine.swap = common::anon_pressure(256, 12).machine.swap;
    if let WorkloadKind::Dd(dd) = &mut s.workloads[0].kind {
        dd.device = "nfs0".into();
        dd.unlink = true;
    }
    s.workloads.push(Workload {
        name: "mem_eater".into(),
        start: 2 * SEC,
        kind: WorkloadKind::MemEater {
            size: 160 << 20,
            chunk: 16 << 20,
            pause: 100 * mmsim::engine::MSEC,
            then: MemEaterThen::Retouch { interval: 3 * SEC },
        },
        cgroup: None,
        cpus: Vec::new(),
        background: false,
    });
    for p in presets::PRESETS {
        let k = presets::resolve(p.name, &[]).unwrap();
        let r = sim::run(
            &s,
            &k,
            1,
            RunOptions {
                check_every_batch: true,
                check_interval: 0,
            },
        )
        .unwrap_or_else(|e| panic!("{}: {e}", p.name));
        assert!(r.vmstat("pgscan_kswapd_normal") + r.vmstat("pgscan_kswapd_dma32") > 0);
        let done = r.metric("dd", "io_seconds").is_some_and(f64::is_finite);
        assert!(done, "{}: the dd finished and unlinked its file", p.name);
        assert_eq!(r.vmstat("nr_unstable"), 0, "{}: the file is gone", p.name);
    }
}

/// A trace writer whose text the test reads after the run.
#[derive(Clone, Default)]
struct TraceBuf(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for TraceBuf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The writeback and NFS trace lines (no `mm_*` events) of a 128 MiB dd to an NFS mount
/// of a 256 MiB machine under `preset`.
fn traced_nfs_dd(preset: &str) -> Vec<String> {
    let mut s = common::single_dd(256, 128, 8);
    s.machine.devices = vec![BlockDevice::nfs_mount("nfs0")];
    if let WorkloadKind::Dd(dd) = &mut s.workloads[0].kind {
        dd.device = "nfs0".into();
    }
    let k = presets::resolve(preset, &[]).unwrap();
    let buf = TraceBuf::default();
    let outputs = RunOutputs {
        trace: Some(Box::new(buf.clone())),
        ..Default::default()
    };
    sim::run_with(&s, &k, 1, RunOptions::default(), outputs).unwrap();
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    text.lines()
        .filter(|l| !l.contains(": mm_"))
        .map(str::to_string)
        .collect()
}

/// The `key=value` fields of `event`'s lines after `bdi 0:38: `, each checked to have
/// exactly `keys` in order, with integer values except those in `text`.
fn fields_of(lines: &[String], event: &str, keys: &[&str], text: &[&str]) -> Vec<Vec<i64>> {
    let head = format!(": {event}: bdi 0:38: ");
    lines
        .iter()
        .filter_map(|l| l.split_once(&head).map(|(_, f)| (l, f)))
        .map(|(l, f)| {
            let kv: Vec<(&str, &str)> = f.split(' ').filter_map(|t| t.split_once('=')).collect();
            let got: Vec<&str> = kv.iter().map(|(k, _)| *k).collect();
            assert_eq!(got, keys, "{l}");
            kv.iter()
                .filter(|(k, _)| !text.contains(k))
                .map(|(k, v)| v.parse().unwrap_or_else(|_| panic!("{k} in {l}")))
                .collect()
        })
        .collect()
}

/// The IO-less series v3's own trace events on a whole NFS run (its patches 33, 34, 46 and
/// 47): each in its v3 layout with consistent values, deterministic, and in place of 3.x's
/// `global_dirty_state` and `writeback_single_inode` layout; neither 2.6.37-rc5 nor 3.9
/// emits them, and 3.9 keeps `global_dirty_state`.
#[test]
fn ioless_v3_traces_its_own_writeback_and_nfs_commit_events() {
    let v3 = traced_nfs_dd("ioless-v3");
    let state = fields_of(
        &v3,
        "balance_dirty_state",
        &[
            "dirty",
            "wb",
            "unstable",
            "bg_thresh",
            "thresh",
            "gap",
            "poll_thresh",
            "ino",
        ],
        &[],
    );
    assert!(!state.is_empty(), "the dd was throttled");
    for f in &state {
        assert_eq!(f[5], f[4] - f[0] - f[1] - f[2], "gap: {f:?}");
        assert_eq!(f[7], 12, "the dd's file, the mount's first: {f:?}");
    }
    assert!(state.iter().any(|f| f[2] > 0), "unstable pages seen");
    let wsi = fields_of(
        &v3,
        "writeback_single_inode",
        &["ino", "state", "age", "wrote", "to_write"],
        &["state"],
    );
    assert!(!wsi.is_empty(), "the flusher wrote");
    for f in &wsi {
        // ino, age, wrote, to_write (state is text).
        assert!(
            f[1] % 4 == 0 && f[2] <= f[3],
            "ms of whole jiffies, wrote <= to_write: {f:?}"
        );
    }
    assert!(
        wsi.iter().any(|f| f[1] > 0 && f[2] > 0),
        "aged inodes written"
    );
    let commit = fields_of(
        &v3,
        "nfs_commit_unstable_pages",
        &["ino", "npages", "in_commit", "write_chunk", "sync", "ret"],
        &[],
    );
    assert!(commit.iter().any(|f| f[5] > 0), "the flusher sent a COMMIT");
    for f in &commit {
        // The COMMIT just sent is in flight; the chunk is patch 35's power of two.
        assert!(f[2] >= f[5], "in_commit >= ret: {f:?}");
        assert!(f[3] >= 1024 && (f[3] as u64).is_power_of_two(), "{f:?}");
        assert_eq!(f[4], 0, "the flusher does not wait: {f:?}");
    }
    let release = fields_of(&v3, "nfs_commit_release", &["ino", "offset", "len"], &[]);
    assert!(!release.is_empty(), "COMMITs were answered");
    // Patch 44: each COMMIT covers its pages' index range, never the whole-file 0/0.
    assert!(release.iter().all(|f| f[2] >= 1), "ranged COMMITs");
    assert!(!v3.iter().any(|l| l.contains("global_dirty_state")));
    assert!(
        !v3.iter().any(|l| l.contains(" dirtied_when=")),
        "no 3.x layout"
    );
    assert_eq!(v3, traced_nfs_dd("ioless-v3"), "deterministic");

    let v3_only = [
        "balance_dirty_state",
        "nfs_commit_unstable_pages",
        "nfs_commit_release",
    ];
    for preset in ["2.6.37-rc5", "3.9"] {
        let lines = traced_nfs_dd(preset);
        for event in v3_only {
            let tag = format!(": {event}: ");
            assert!(!lines.iter().any(|l| l.contains(&tag)), "{preset}: {event}");
        }
        let wsi: Vec<&String> = lines
            .iter()
            .filter(|l| l.contains(": writeback_single_inode: "))
            .collect();
        assert!(!wsi.is_empty(), "{preset}");
        assert!(
            wsi.iter().all(|l| l.contains(" dirtied_when=")),
            "{preset}: 3.x layout"
        );
        let global = lines.iter().any(|l| l.contains(": global_dirty_state: "));
        assert_eq!(global, preset == "3.9", "{preset}: global_dirty_state");
    }
}

/// What a run of `n` dd to an NFS mount of a 3 GiB machine under ioless-v3 with `sets` saw
/// from 5 s to `seconds`, sampled every 10 ms.
#[derive(Debug)]
struct NfsExtremes {
    /// The mount's congestion limit (`nfs_congestion_kb` in pages).
    limit: u64,
    max_writeback: u64,
    max_in_commit: u64,
    stats: mmsim::fs::nfs::NfsStats,
}

fn nfs_dd_extremes(n: usize, sets: &[(&str, bool)], seconds: u64) -> NfsExtremes {
    use mmsim::engine::{Executor, MSEC};
    let mut s = common::single_dd(3072, 2048, seconds);
    s.machine.devices = vec![BlockDevice::nfs_mount("nfs0")];
    let one = s.workloads.pop().expect("single_dd has a dd");
    for i in 0..n {
        let mut w = one.clone();
        w.name = format!("dd{i}");
        if let WorkloadKind::Dd(dd) = &mut w.kind {
            dd.device = "nfs0".into();
        }
        s.workloads.push(w);
    }
    let sets: Vec<(String, bool)> = sets.iter().map(|&(n, v)| (n.into(), v)).collect();
    let k = presets::resolve("ioless-v3", &sets).unwrap();
    let w = sim::boot(&s, &k, 1).unwrap();
    let (mut max_writeback, mut max_in_commit) = (0, 0);
    let mut next = 5 * SEC;
    Executor::new(w.clone()).run_until(seconds * SEC, |k: &mut mmsim::mm::Kernel| {
        let now = k.sched.now();
        if now >= next {
            next = now + 10 * MSEC;
            max_writeback = max_writeback.max(k.global_stat(ZoneStat::nr_writeback));
            let c = mmsim::fs::nfs::client_of(k, 0).unwrap();
            max_in_commit = max_in_commit.max(c.in_commit);
        }
        false
    });
    let k = w.borrow();
    assert_eq!(k.fatal, None);
    let c = mmsim::fs::nfs::client_of(&k, 0).unwrap();
    NfsExtremes {
        limit: c.congestion.on,
        max_writeback,
        max_in_commit,
        stats: c.stats,
    }
}

/// Patches 40 and 42 of IO-less v3 on 10 dd to NFS of a 3 GiB machine. With the writeback
/// wait queue (40) the flusher sleeps once the mount is congested, so pages in WRITEs stay
/// within 2×limit; without it they run to several times the limit. With the commit
/// heuristics (42) the flusher commits each inode as soon as it has more than half the
/// mount's in_commit, so COMMITs are more and smaller and pages in COMMITs stay under the
/// limit; the old "more than half of the inode's requests" rule lets them pile up in
/// bursts past it.
#[test]
fn nfs_patches_of_ioless_v3_bound_writeback_and_in_commit() {
    let all = nfs_dd_extremes(10, &[], 20);
    assert!(all.stats.bytes_written > 1 << 30, "{all:?}");
    assert!(all.max_writeback <= 2 * all.limit, "{all:?}");
    assert!(all.max_in_commit < all.limit, "{all:?}");
    let no_40 = nfs_dd_extremes(10, &[("nfs_writeback_wait_queue", false)], 20);
    assert!(no_40.max_writeback > 4 * no_40.limit, "{no_40:?}");
    let no_42 = nfs_dd_extremes(10, &[("nfs_commit_heuristics", false)], 20);
    assert!(no_42.max_writeback <= 2 * no_42.limit, "{no_42:?}");
    assert!(no_42.max_in_commit > no_42.limit, "{no_42:?}");
    assert!(no_42.stats.commits < all.stats.commits, "{no_42:?} {all:?}");
}
