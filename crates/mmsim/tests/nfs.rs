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
    assert!(c.stats.pages_committed >= pages, "{:?}", c.stats);
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
