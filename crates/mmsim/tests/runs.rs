//! Whole runs: invariants, determinism, the direction of effects, OOM.

mod common;

use mmsim::presets::{self, PRESETS};
use mmsim::report::{json, RunResult};
use mmsim::scenario::{self, MemEaterThen, WorkloadKind};
use mmsim::sim::{self, RunOptions};

fn run(s: &mmsim::scenario::Scenario, preset: &str, seed: u64, check: bool) -> RunResult {
    let k = presets::resolve(preset, &[]).unwrap();
    sim::run(
        s,
        &k,
        seed,
        RunOptions {
            check_every_batch: check,
            check_interval: 0,
        },
    )
    .unwrap()
}

fn example() -> mmsim::scenario::Scenario {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/anon-pressure.toml"
    );
    scenario::load(std::path::Path::new(path)).unwrap()
}

#[test]
fn same_scenario_preset_and_seed_give_identical_json() {
    let s = common::anon_pressure(192, 20);
    for p in PRESETS {
        let a = serde_json::to_string(&json::run_to_json(&run(&s, p.name, 7, false))).unwrap();
        let b = serde_json::to_string(&json::run_to_json(&run(&s, p.name, 7, false))).unwrap();
        assert_eq!(a, b, "{} is not deterministic", p.name);
    }
}

#[test]
fn another_seed_gives_different_workload_figures() {
    let s = common::anon_pressure(256, 30);
    let a = run(&s, "3.9", 1, false);
    let b = run(&s, "3.9", 2, false);
    assert_ne!(a.workloads, b.workloads);
}

#[test]
fn invariants_hold_after_every_reclaim_batch_under_every_preset() {
    let s = common::anon_pressure(80, 8);
    for p in PRESETS {
        let r = run(&s, p.name, 3, true);
        assert!(
            r.vmstat("pswpout") > 0,
            "{}: the test must reach swap to mean anything",
            p.name
        );
    }
}

/// Issue 2: examples/anon-pressure.toml under all three presets swaps, scans from kswapd
/// and direct reclaim, and its efficiency rows are non-zero and consistent.
#[test]
fn anon_pressure_example_swaps_and_reclaims_consistently_under_all_presets() {
    let s = example();
    for p in PRESETS {
        let r = run(&s, p.name, s.run.seed, false);
        let sum = |stem: &str| -> u64 {
            ["dma", "dma32", "normal", "movable"]
                .iter()
                .map(|z| r.vmstat(&format!("{stem}_{z}")))
                .sum()
        };
        let (ks, kr) = (sum("pgscan_kswapd"), sum("pgsteal_kswapd"));
        let (ds, dr) = (sum("pgscan_direct"), sum("pgsteal_direct"));
        assert!(r.vmstat("pswpout") > 0, "{}: no swap-out", p.name);
        assert!(
            ks > 0 && ds > 0,
            "{}: kswapd {ks} / direct {ds} scanning",
            p.name
        );
        assert!(
            kr > 0 && dr > 0,
            "{}: kswapd {kr} / direct {dr} reclaimed",
            p.name
        );
        assert!(kr <= ks && dr <= ds, "{}: reclaimed above scanned", p.name);
        let rows =
            mmsim::report::mmtests::vmstat_summary(&|n| r.vmstat(n), r.simulated_seconds, true);
        let row = |label: &str| {
            rows.iter()
                .find(|(l, _)| *l == label)
                .map(|(_, c)| mmsim::report::mmtests::json_value(c))
                .unwrap()
        };
        for label in [
            "Kswapd efficiency",
            "Kswapd velocity",
            "Direct velocity",
            "Zone normal velocity",
        ] {
            assert!(row(label) > 0.0, "{}: {label} is 0", p.name);
        }
        assert!(row("Kswapd efficiency") <= 100.0 && row("Direct efficiency") <= 100.0);
        assert_eq!(row("Page writes anon") as u64, r.vmstat("pswpout"));
        assert!(r.oom_kills.is_empty(), "{}: unexpected OOM kill", p.name);
    }
}

#[test]
fn without_swap_an_eater_larger_than_ram_is_oom_killed_and_the_run_ends() {
    let mut s = common::anon_pressure(128, 30);
    s.machine.swap = None;
    s.workloads
        .retain(|w| matches!(w.kind, WorkloadKind::MemEater { .. }));
    if let WorkloadKind::MemEater { size, then, .. } = &mut s.workloads[0].kind {
        *size = 160 << 20;
        *then = MemEaterThen::Hold;
    }
    let r = run(&s, "3.9", 1, false);
    assert_eq!(r.oom_kills.len(), 1, "{:?}", r.oom_kills);
    assert_eq!(r.oom_kills[0].victim, "mem_eater");
    assert_eq!(r.metric("mem_eater", "oom_killed"), Some(1.0));
    assert_eq!(r.vmstat("pswpout"), 0);
    // Its memory came back.
    assert!(r.vmstat("nr_anon_pages") < 1000);
}

#[test]
fn more_ram_means_less_swapping() {
    let small = run(&common::anon_pressure(192, 30), "3.9", 1, false);
    let mut big_s = common::anon_pressure(192, 30);
    big_s.machine.ram = 384 << 20;
    let big = run(&big_s, "3.9", 1, false);
    assert!(
        big.vmstat("pswpout") < small.vmstat("pswpout") / 2,
        "{} vs {}",
        big.vmstat("pswpout"),
        small.vmstat("pswpout")
    );
}

#[test]
fn sampling_a_time_series_does_not_change_the_run() {
    let s = common::anon_pressure(160, 15);
    let k = presets::resolve("lessdisrupt-v7r10", &[]).unwrap();
    let plain = run(&s, "lessdisrupt-v7r10", 5, false);
    let outputs = sim::RunOutputs {
        trace: Some(Box::new(std::io::sink())),
        sample_interval: Some(mmsim::engine::SEC),
        progress: Some(Box::new(|_| {})),
        series_out: None,
        keep_series: false,
    };
    let (sampled, series) = sim::run_with(&s, &k, 5, RunOptions::default(), outputs).unwrap();
    // The sampler's own thread appears in the CPU table; everything else is identical.
    let strip = |r: &RunResult| {
        let mut r = r.clone();
        r.threads.retain(|t| t.name != "sampler");
        serde_json::to_string(&json::run_to_json(&r)).unwrap()
    };
    assert_eq!(strip(&plain), strip(&sampled));
    let series = series.unwrap();
    assert_eq!(
        series.rows.len(),
        16,
        "a sample at 0 s and every second to 15 s"
    );
    let last = series.rows.last().unwrap();
    let col = |name: &str| {
        mmsim::report::timeseries::COLUMNS
            .iter()
            .position(|c| *c == name)
            .unwrap()
    };
    assert_eq!(last[col("pswpout")] as u64, sampled.vmstat("pswpout"));
}

/// Issue 3: a single dd on an idle machine settles at the device's bandwidth with the dirty
/// pages held near the setpoint, and after fdatasync every page it wrote is on disk.
#[test]
fn a_single_dd_runs_at_disk_speed_with_dirty_pages_near_the_setpoint_and_loses_nothing() {
    let s = common::single_dd(2048, 1536, 40);
    let k = presets::resolve("3.9", &[]).unwrap();
    let outputs = sim::RunOutputs {
        sample_interval: Some(mmsim::engine::SEC),
        ..Default::default()
    };
    let (r, series) = sim::run_with(
        &s,
        &k,
        1,
        RunOptions {
            check_every_batch: false,
            check_interval: 0,
        },
        outputs,
    )
    .unwrap();
    // The 7200 rpm model's outer-track rate is 138 MB/s; the file sits at the start of the disk.
    let mbps = r.metric("dd", "mb_per_sec").unwrap();
    assert!((110.0..=140.0).contains(&mbps), "dd ran at {mbps} MB/s");
    // Dirty + writeback pages mid-run, against the setpoint of the dirty limits: between the
    // background threshold and the hard limit, near (freerun + limit) / 2.
    let series = series.unwrap();
    let col = |name: &str| {
        mmsim::report::timeseries::COLUMNS
            .iter()
            .position(|c| *c == name)
            .unwrap()
    };
    let dirtyable: f64 = 2048.0 * 256.0 * 0.9;
    let (bg, thresh) = (0.10 * dirtyable, 0.20 * dirtyable);
    let setpoint = ((bg + thresh) / 2.0 + thresh) / 2.0;
    let mid: Vec<f64> = series
        .rows
        .iter()
        .filter(|row| row[0] >= 4.0 && row[0] <= 8.0)
        .map(|row| row[col("nr_dirty")] + row[col("nr_writeback")])
        .collect();
    assert!(!mid.is_empty());
    for d in &mid {
        assert!(
            *d > bg && *d < thresh * 1.05,
            "dirty {d} outside ({bg}, {thresh}); setpoint ~{setpoint}"
        );
        assert!(
            (d - setpoint).abs() < 0.15 * setpoint,
            "dirty {d} far from the setpoint {setpoint}"
        );
    }
    // The sampled thresholds are the global dirty limits, and the writeback bandwidth
    // estimate (per-device column) has converged to the rate dd saw by the end of the dd.
    let dev_col = |name: &str| {
        mmsim::report::timeseries::COLUMNS.len()
            + series
                .device_columns
                .iter()
                .position(|c| c == name)
                .unwrap()
    };
    let row6 = series.rows.iter().find(|row| row[0] >= 6.0).unwrap();
    let (sampled_bg, sampled_thresh) = (
        row6[col("dirty_background_thresh")],
        row6[col("dirty_thresh")],
    );
    assert!((sampled_bg / bg - 1.0).abs() < 0.1 && (sampled_thresh / thresh - 1.0).abs() < 0.1);
    let last_io = series
        .rows
        .iter()
        .rev()
        .find(|row| row[0] <= r.metric("dd", "io_seconds").unwrap())
        .unwrap();
    let bw_mbps = last_io[dev_col("write_bw_kbps_sda")] / 1024.0;
    assert!(
        (bw_mbps / mbps - 1.0).abs() < 0.15,
        "bandwidth estimate {bw_mbps} MB/s against {mbps} MB/s"
    );
    assert!(series.rows.last().unwrap()[dev_col("written_sda")] > 0.0);
    // After fdatasync: nothing dirty or under writeback, every page written once.
    let pages = 1536 * 256;
    assert_eq!(r.vmstat("nr_dirty"), 0);
    assert_eq!(r.vmstat("nr_writeback"), 0);
    assert_eq!(r.vmstat("nr_dirtied"), pages);
    assert_eq!(r.vmstat("nr_written"), pages);
    // The disk saw every page once, in merged requests; iostat saw a busy write queue.
    let sda = &r.devices[0];
    assert_eq!(sda.diskstats.sectors_written, pages * 8);
    assert_eq!(
        sda.diskstats.writes_completed + sda.diskstats.writes_merged,
        pages
    );
    assert!(
        sda.diskstats.writes_completed * 64 <= pages,
        "requests of at least 256 KiB"
    );
    let io = sda.summary().expect("iostat samples were kept");
    assert!(
        io.mean_w_await > 0.0 && io.mean_avgqz > 1.0 && io.mean_r_await == 0.0,
        "{io:?}"
    );
}

/// ext2 (buffer heads, no journal): a dd on a machine with less RAM than the file writes
/// every page once, through `writepage` (the flusher's, or reclaim's), with nothing else
/// reaching the disk and no journal thread.
#[test]
fn a_dd_on_ext2_writes_every_page_once() {
    let mut s = common::single_dd(128, 256, 20);
    s.machine.devices[0].filesystem = mmsim::fs::Filesystem::Ext2;
    let r = run(&s, "3.9", 1, true);
    let pages = 256 * 256;
    assert_eq!(r.metric("dd", "pages_written"), Some(pages as f64));
    assert!(r.metric("dd", "io_seconds").is_some(), "fdatasync returned");
    assert_eq!((r.vmstat("nr_dirty"), r.vmstat("nr_writeback")), (0, 0));
    assert_eq!(r.vmstat("nr_dirtied"), pages);
    assert_eq!(r.vmstat("nr_written"), pages);
    let sda = &r.devices[0].diskstats;
    assert_eq!(sda.sectors_written, pages * 8, "each page once");
    assert_eq!(sda.writes_completed + sda.writes_merged, pages);
    assert!(r.threads.iter().all(|t| !t.name.starts_with("kjournald")));
}

/// Issue 3: swap on its own device goes through that device's queue and disk model.
#[test]
fn swap_on_a_raw_disk_goes_through_its_request_queue() {
    use mmsim::fs::Filesystem;
    use mmsim::scenario::BlockDevice;
    let mut s = common::anon_pressure(128, 20);
    let mut dev = BlockDevice::ext4_hdd("sdb");
    dev.filesystem = Filesystem::Raw;
    dev.size = 1 << 30;
    s.machine.devices = vec![dev];
    let swap = s.machine.swap.as_mut().unwrap();
    swap.device = Some("sdb".into());
    let r = run(&s, "3.9", 1, true);
    assert!(r.vmstat("pswpout") > 0, "the test must reach swap");
    // pgpgout counts KiB: 4 per swapped-out page, nothing else writes.
    assert_eq!(r.vmstat("pgpgout"), 4 * r.vmstat("pswpout"));
    assert_eq!(r.vmstat("pgpgin"), 4 * r.vmstat("pswpin"));
    let sdb = r.devices.iter().find(|d| d.name == "sdb").unwrap();
    assert!(
        sdb.iostat.iter().any(|s| s.w_s > 0.0),
        "iostat saw the swap writes"
    );
    // Reclaim swaps out neighbouring slots back to back: their one-page bios merge into
    // multi-page requests, which is also what lets kswapd past a full request pool.
    let d = &sdb.diskstats;
    assert!(
        d.sectors_written > 4 * 8 * d.writes_completed,
        "{} sectors in {} write requests",
        d.sectors_written,
        d.writes_completed
    );
}

/// Use-once protection: reading a file twice the size of RAM recycles its page-cache pages
/// (they never leave the inactive list) and leaves a mem_eater's idle memory alone.
#[test]
fn streaming_a_file_larger_than_ram_does_not_swap_out_anonymous_memory() {
    use mmsim::scenario::{MemEaterThen, Workload, WorkloadKind};
    // 256 MiB of RAM, a 64 MiB idle eater, a 512 MiB file; invariants after every batch.
    let (ram_mib, file_mib) = (256, 512);
    let mut s = common::single_dd(ram_mib, file_mib, 20);
    s.machine.swap = common::anon_pressure(ram_mib, 20).machine.swap;
    s.workloads = vec![
        Workload {
            name: "idle".into(),
            start: 0,
            kind: WorkloadKind::MemEater {
                size: ram_mib * common::MIB / 4,
                chunk: 16 << 20,
                pause: 0,
                then: MemEaterThen::Hold,
            },
            cgroup: None,
            cpus: Vec::new(),
            background: false,
        },
        Workload {
            name: "cat".into(),
            start: mmsim::engine::SEC,
            kind: WorkloadKind::Cat {
                device: "sda".into(),
                size: file_mib * common::MIB,
                files: 1,
            },
            cgroup: None,
            cpus: Vec::new(),
            background: false,
        },
    ];
    let r = run(&s, "3.9", 1, true);
    let file_pages = file_mib * 256;
    assert_eq!(r.metric("cat", "pages_read"), Some(file_pages as f64));
    let mbps = r.metric("cat", "mb_per_sec").unwrap();
    assert!((100.0..=140.0).contains(&mbps), "cat read at {mbps} MB/s");
    assert_eq!(
        r.vmstat("pgpgin"),
        file_mib * 1024,
        "each page read exactly once (KiB)"
    );
    assert_eq!(r.vmstat("pswpout"), 0, "idle anonymous memory was swapped");
    let sum = |stem: &str| -> u64 {
        ["dma", "dma32", "normal"]
            .iter()
            .map(|z| r.vmstat(&format!("{stem}_{z}")))
            .sum()
    };
    // At most RAM's worth of the file can still be cached: the rest was reclaimed.
    assert!(
        sum("pgsteal_kswapd") + sum("pgsteal_direct") >= file_pages - ram_mib * 256,
        "the file's pages were reclaimed"
    );
}

/// Issue 3: unlink frees a file's pages; dirty ones are dropped unwritten, and pages reclaim
/// held isolated meanwhile are freed by reclaim. Nothing is left behind.
#[test]
fn unlinking_a_file_frees_every_page_it_had_in_the_page_cache() {
    use mmsim::scenario::WorkloadKind;
    let mut s = common::single_dd(256, 400, 20);
    if let WorkloadKind::Dd(dd) = &mut s.workloads[0].kind {
        dd.conv = mmsim::scenario::DdConv::None;
        dd.unlink = true;
    }
    let r = run(&s, "lessdisrupt-v7r10", 1, true);
    assert!(r.metric("dd", "io_seconds").unwrap() > 0.0);
    for counter in [
        "nr_file_pages",
        "nr_dirty",
        "nr_writeback",
        "nr_inactive_file",
        "nr_active_file",
    ] {
        assert_eq!(r.vmstat(counter), 0, "{counter} after unlink");
    }
    let dirtied = r.vmstat("nr_dirtied");
    assert_eq!(dirtied, 400 * 256);
    assert!(
        r.vmstat("nr_written") < dirtied,
        "some dirty pages were dropped unwritten"
    );
}

/// A memcachetest with a duration stops after it and its server exits: its memory is freed
/// and, with `end = "workloads"`, the run ends there.
#[test]
fn a_memcachetest_with_a_duration_exits_and_frees_its_memory() {
    use mmsim::scenario::WorkloadKind;
    let ram_mib = 128;
    let mut s = common::anon_pressure(ram_mib, 60);
    s.workloads.truncate(1);
    if let WorkloadKind::Memcachetest(mmsim::scenario::MemcachetestParams { duration, .. }) =
        &mut s.workloads[0].kind
    {
        *duration = Some(20 * mmsim::engine::SEC);
    }
    s.run.end_when_done = true;
    let r = run(&s, "3.9", 1, true);
    // The data set is populated first (every item set once); the 20 s start after that.
    let items = (ram_mib * common::MIB / 10 * 8) / (16384 + 4096);
    assert!(
        r.simulated_seconds > 20.0 && r.simulated_seconds < 40.0,
        "the run ends when memcachetest does: {}",
        r.simulated_seconds
    );
    assert!(
        r.vmstat("pgfault") >= items,
        "population touched every item"
    );
    assert_eq!(r.vmstat("nr_anon_pages"), 0, "the server's items are freed");
    let ops = r.metric("memcachetest", "ops").unwrap();
    let rate = r.metric("memcachetest", "ops_per_sec").unwrap();
    assert!(
        (ops / 20.0 / rate - 1.0).abs() < 0.005,
        "ops/sec is over its 20 s: {ops} ops, {rate}/s"
    );
}

/// memcachetest's client leaks its latency arrays: each loop of 10,000 operations callocs
/// twelve 80,000-byte arrays it never frees, so its heap grows by about 234 pages a loop,
/// most of them written (calloc's clearing and the latencies), each faulted in once.
#[test]
fn memcachetests_client_faults_in_the_latency_arrays_it_never_frees() {
    use mmsim::scenario::WorkloadKind;
    use mmsim::workload::memcachetest::{ItemLayout, NO_ITERATIONS};
    let ram_mib = 512;
    let mut s = common::anon_pressure(ram_mib, 60);
    s.workloads.truncate(1);
    let pool = ram_mib * common::MIB / 2;
    if let WorkloadKind::Memcachetest(p) = &mut s.workloads[0].kind {
        p.duration = Some(20 * mmsim::engine::SEC);
        p.pool = pool;
    }
    s.run.end_when_done = true;
    let r = run(&s, "3.9", 1, true);
    assert_eq!(r.vmstat("pswpout"), 0, "no memory pressure");
    let items = pool / (16384 + 4096);
    let pool_pages = ItemLayout::new(items, 16384).mapped_pages();
    let loops = r.metric("memcachetest", "ops").unwrap() as u64 / NO_ITERATIONS;
    assert!(loops > 20, "{loops} loops");
    // Faults beyond the items' pages (a few page-table and stack pages aside).
    let heap = r.vmstat("pgfault") - pool_pages;
    assert!(
        heap >= loops * 180 && heap <= (loops + 1) * 236 + 64,
        "{heap} pages faulted in the client's heap over {loops} loops"
    );
    assert_eq!(r.vmstat("nr_anon_pages"), 0, "freed when the client exits");
}

/// dd opens its file with O_TRUNC: writing the same file twice leaves one copy cached,
/// and the first copy's pages are freed by the truncation, not by reclaim.
#[test]
fn a_second_dd_of_the_same_file_truncates_the_first() {
    use mmsim::scenario::WorkloadKind;
    let mut s = common::single_dd(512, 100, 30);
    let mut second = s.workloads[0].clone();
    second.name = "dd-2".into();
    second.start = 10 * mmsim::engine::SEC;
    if let WorkloadKind::Dd(dd) = &mut second.kind {
        dd.size = 60 * common::MIB;
    }
    s.workloads.push(second);
    for w in &mut s.workloads {
        if let WorkloadKind::Dd(dd) = &mut w.kind {
            dd.file = Some("largefile".into());
        }
    }
    let r = run(&s, "3.9", 1, true);
    assert!(r.metric("dd-2", "io_seconds").unwrap() > 0.0);
    assert_eq!(
        r.vmstat("nr_file_pages"),
        60 * 256,
        "only the second copy is cached"
    );
    assert_eq!(
        r.vmstat("pgsteal_kswapd_normal") + r.vmstat("pgsteal_kswapd_dma32"),
        0
    );
}

/// MMTests' parallelio driver on one machine: a warm-up, then every step's iterations in
/// order, each reporting its own vmstat deltas; later iterations of an IO step start with
/// the previous largefile cached, which dd truncates.
#[test]
fn the_parallelio_driver_runs_every_iteration_and_reports_the_worst() {
    use mmsim::scenario::{ParallelioParams, Workload, WorkloadKind};
    let mut s = common::single_dd(512, 100, 3600);
    s.machine.swap = common::anon_pressure(512, 1).machine.swap;
    s.run.end_when_done = true;
    s.workloads = vec![Workload {
        name: "parallelio".into(),
        start: 0,
        kind: WorkloadKind::Parallelio(ParallelioParams {
            device: "sda".into(),
            pool: 256 * common::MIB,
            value_size: 16384,
            threads: 1,
            duration: 30 * mmsim::engine::SEC,
            iterations: 2,
            steps: vec![0, 64 * common::MIB],
            warmup: true,
        }),
        cgroup: None,
        cpus: Vec::new(),
        background: false,
    }];
    let r = run(&s, "lessdisrupt-v7r10", 1, true);
    // Warm-up + 2 steps x 2 iterations, each 30 s of memcachetest after memcached's 10 s
    // start-up sleep and its population, and a second's shutdown poll.
    assert!(
        (205.0..215.0).contains(&r.simulated_seconds),
        "{} {:?}",
        r.simulated_seconds,
        r.workloads
    );
    for row in [
        "memcachetest-0M",
        "memcachetest-64M",
        "io-duration-64M",
        "swaptotal-64M",
        "minorfaults-0M",
    ] {
        assert!(r.metric("parallelio", row).is_some(), "{row}");
    }
    assert_eq!(r.metric("parallelio", "io-duration-0M"), Some(0.0));
    assert!(r.metric("parallelio", "memcachetest-0M").unwrap() > 1000.0);
    // `rm -rf $SHELLPACK_TEMP/*` after every iteration: no largefile is left.
    assert_eq!(r.vmstat("nr_file_pages"), 0);
    assert_eq!(r.vmstat("nr_anon_pages"), 0, "every memcached exited");
}

/// A swap partition may share a disk with a filesystem ("a partition of one"): it sits at
/// the end of the disk, and swap IO and the filesystem's IO share one request queue.
#[test]
fn a_swap_partition_beside_a_filesystem_shares_the_disk() {
    use mmsim::scenario::{Workload, WorkloadKind};
    let mut s = common::anon_pressure(128, 40);
    let mut dev = mmsim::scenario::BlockDevice::ext4_hdd("sda");
    dev.size = 8 << 30;
    s.machine.devices = vec![dev.clone()];
    let swap_size = s.machine.swap.as_ref().unwrap().size;
    s.machine.swap.as_mut().unwrap().device = Some("sda".into());
    let dd_mib = 32;
    let dd = common::single_dd(128, dd_mib, 1).workloads.remove(0);
    s.workloads.push(Workload {
        start: 15 * mmsim::engine::SEC,
        ..dd
    });
    let k = presets::resolve("3.9", &[]).unwrap();
    {
        let w = sim::boot(&s, &k, 1).unwrap();
        let w = w.borrow();
        assert_eq!(w.swap_bdi, Some(0));
        assert_eq!(w.swap_sector_base, (dev.size - swap_size) / 512);
    }
    let r = run(&s, "3.9", 1, true);
    assert!(r.vmstat("pswpout") > 0, "the test must reach swap");
    assert!(matches!(s.workloads[2].kind, WorkloadKind::Dd(_)));
    let sda = r.devices.iter().find(|d| d.name == "sda").unwrap();
    // Every swapped-out page and every page dd dirtied and the flusher cleaned went to sda
    // (pswpout counts at submission: pages still under writeback at the end are not written
    // yet; under CFQ the swap-ins' sync reads may keep the dd from finishing in time). dd's
    // own count lags nr_dirtied by the pages of a write(2) it is still in.
    let dd_pages = r.metric("dd", "pages_written").unwrap() as u64;
    let dirtied = r.vmstat("nr_dirtied");
    assert!(dd_pages > 0 && dd_pages <= dirtied && dirtied <= dd_pages + 256);
    assert_eq!(
        sda.diskstats.sectors_written + 8 * r.vmstat("nr_writeback"),
        8 * (r.vmstat("pswpout") + dirtied - r.vmstat("nr_dirty")),
        "dd {:?}, nr_dirty {}, nr_written {}",
        r.metric("dd", "io_seconds"),
        r.vmstat("nr_dirty"),
        r.vmstat("nr_written")
    );
    // Swap-ins count at submission; a few may still be in flight at the end.
    let read = sda.diskstats.sectors_read;
    assert!(read <= 8 * r.vmstat("pswpin") && read + 8 * 128 >= 8 * r.vmstat("pswpin"));
}

/// `sync(2)` writes every dirty page and waits for it: a dd's pages, below the background
/// threshold and not yet expired, are still dirty without it and all clean after it.
#[test]
fn sync_writes_every_dirty_page_and_waits() {
    use mmsim::scenario::{DdConv, Workload, WorkloadKind};
    let mut s = common::single_dd(2048, 64, 15);
    if let WorkloadKind::Dd(dd) = &mut s.workloads[0].kind {
        dd.conv = DdConv::None;
    }
    let without = run(&s, "3.9", 1, true);
    assert!(without.vmstat("nr_dirty") > 0, "64 MiB stay dirty for 15 s");
    s.workloads.push(Workload {
        name: "sync".into(),
        start: 10 * mmsim::engine::SEC,
        kind: WorkloadKind::Sync,
        cgroup: None,
        cpus: Vec::new(),
        background: false,
    });
    let with = run(&s, "3.9", 1, true);
    assert_eq!(with.vmstat("nr_dirty"), 0);
    assert_eq!(with.vmstat("nr_writeback"), 0);
    assert_eq!(with.vmstat("nr_written"), 64 * 256);
    assert!(with.metric("sync", "sync_seconds").unwrap() > 0.0);
}

/// The slab lives with the workload (`kernel-reclaim.md` §6): cat brings 3,000 files'
/// dentries and inodes in, then a dd on ext3 gives each page it writes a buffer head, so
/// `nr_slab_reclaimable` grows; then a mem_eater's pressure makes reclaim free the page
/// cache (its buffer heads with it) and the shrinkers prune the unused dentries and inodes,
/// the system's and cat's: the slab ends below where it started. Invariants hold after
/// reclaim batches throughout (checked at most every 20 simulated ms).
#[test]
fn the_slab_grows_with_files_and_buffer_heads_and_shrinks_under_pressure() {
    use mmsim::engine::{MSEC, SEC};
    use mmsim::mm::slab::CacheId;
    use mmsim::scenario::BlockDevice;
    let mut s = common::single_dd(256, 100, 60);
    s.machine.devices = vec![BlockDevice {
        filesystem: mmsim::fs::Filesystem::Ext3,
        ..BlockDevice::ext4_hdd("sda")
    }];
    s.machine.swap = common::anon_pressure(256, 1).machine.swap;
    s.slab.files = 10_000;
    if let WorkloadKind::Dd(dd) = &mut s.workloads[0].kind {
        dd.conv = mmsim::scenario::DdConv::Fsync;
    }
    s.workloads[0].start = 12 * SEC;
    s.workloads.push(mmsim::scenario::Workload {
        name: "cat".into(),
        start: 0,
        kind: WorkloadKind::Cat {
            device: "sda".into(),
            size: 60 * common::MIB,
            files: 3_000,
        },
        cgroup: None,
        cpus: Vec::new(),
        background: false,
    });
    s.workloads.push(mmsim::scenario::Workload {
        name: "eater".into(),
        start: 25 * SEC,
        kind: WorkloadKind::MemEater {
            size: 200 * common::MIB,
            chunk: 8 * common::MIB,
            pause: 100 * MSEC,
            then: MemEaterThen::Hold,
        },
        cgroup: None,
        cpus: Vec::new(),
        background: false,
    });
    let kernel = presets::resolve("3.9", &[]).unwrap();
    let outputs = sim::RunOutputs {
        trace: None,
        sample_interval: Some(SEC),
        progress: None,
        series_out: None,
        keep_series: false,
    };
    let check = RunOptions {
        check_every_batch: true,
        check_interval: 20 * MSEC,
    };
    let (r, series) = sim::run_with(&s, &kernel, 1, check, outputs).unwrap();
    let series = series.unwrap();
    let col = mmsim::report::timeseries::COLUMNS
        .iter()
        .position(|c| *c == "nr_slab_reclaimable")
        .unwrap();
    let slab = |t: usize| series.rows[t][col] as u64;
    let (boot, after_cat, after_dd, end) = (slab(0), slab(10), slab(24), slab(60));
    // 3,000 files: at least their 750 pages of inodes and 142 of dentries.
    assert!(
        after_cat >= boot + 3_000 / 4 + 3_000 / 21,
        "{boot} -> {after_cat}"
    );
    // 100 MiB of ext3 pages: a buffer head each, 39 to a page.
    assert!(
        after_dd >= after_cat + 25_600 / 39,
        "{after_cat} -> {after_dd}"
    );
    let peak = series.rows.iter().map(|row| row[col] as u64).max().unwrap();
    assert!(
        end < boot && end < peak / 2,
        "boot {boot}, peak {peak}, end {end}"
    );
    assert!(r.vmstat("slabs_scanned") > 0);
    assert_eq!(r.vmstat("nr_slab_reclaimable"), end);
    assert_eq!(r.metric("cat", "pages_read"), Some(60.0 * 256.0));
    // The objects themselves, at the end of the same run.
    let w = sim::boot(&s, &kernel, 1).unwrap();
    sim::run_world(&w, 60 * SEC).unwrap();
    let k = w.borrow();
    assert_eq!(
        k.global_stat(mmsim::mm::vmstat::ZoneStat::nr_slab_reclaimable),
        end
    );
    assert!(
        k.slab.cache(CacheId::BufferHead).active_objs < 25_600 / 4,
        "most of dd's pages and their buffer heads were reclaimed: {}",
        k.slab.cache(CacheId::BufferHead).active_objs
    );
    assert!(
        k.dcache.nr_dentry < 10_000 && k.icache.nr_inodes < 10_000,
        "the system's files and cat's were pruned: {} dentries, {} inodes",
        k.dcache.nr_dentry,
        k.icache.nr_inodes
    );
}

/// `vfs_cache_pressure` scales the superblocks' counts, so the shrinkers' share of reclaim
/// (§6): at 1000, a mem_eater's pressure prunes cat's 4,000 unused inodes while their page
/// cache is still there, and those pages are inode steals (`kswapd_inodesteal`); at the
/// default 100 the shrinkers scan far less and the LRU takes the pages first.
#[test]
fn vfs_cache_pressure_scales_slab_scanning_and_brings_inode_steals() {
    let run_with = |pressure: u32| {
        let mut s = common::single_dd(1024, 0, 60);
        s.machine.swap = common::anon_pressure(1024, 1).machine.swap;
        s.vm.vfs_cache_pressure = pressure;
        s.slab.files = 5_000;
        s.workloads = vec![
            mmsim::scenario::Workload {
                name: "cat".into(),
                start: 0,
                kind: WorkloadKind::Cat {
                    device: "sda".into(),
                    size: 400 * common::MIB,
                    files: 4_000,
                },
                cgroup: None,
                cpus: Vec::new(),
                background: false,
            },
            mmsim::scenario::Workload {
                name: "eater".into(),
                start: 20 * mmsim::engine::SEC,
                kind: WorkloadKind::MemEater {
                    size: 920 * common::MIB,
                    chunk: 32 * common::MIB,
                    pause: 200 * mmsim::engine::MSEC,
                    then: MemEaterThen::Hold,
                },
                cgroup: None,
                cpus: Vec::new(),
                background: false,
            },
        ];
        run(&s, "3.9", 1, false)
    };
    let (low, high) = (run_with(100), run_with(1000));
    let steals = |r: &RunResult| r.vmstat("kswapd_inodesteal") + r.vmstat("pginodesteal");
    // At 1000 the shrinkers run out of objects to scan: everything was pruned.
    assert!(
        2 * high.vmstat("slabs_scanned") >= 3 * low.vmstat("slabs_scanned"),
        "{} vs {}",
        high.vmstat("slabs_scanned"),
        low.vmstat("slabs_scanned")
    );
    assert!(steals(&high) > 10_000, "{}", steals(&high));
    assert!(
        steals(&high) > 10 * steals(&low),
        "{} vs {}",
        steals(&high),
        steals(&low)
    );
    assert_eq!(high.metric("cat", "pages_read"), Some(400.0 * 256.0));
}

/// The page cache boot left lies in Normal (boot allocates the highest zone first), and
/// keeps that zone off `get_scan_count`'s "file + free <= high watermark: scan only anon"
/// branch: without it a parallelio step (dd beside memcached's heap, which fills Normal to
/// its low watermark) makes lessdisrupt's kswapd swap the heap out of Normal; with it, it
/// reclaims file pages instead. 3.9's kswapd still swaps either way, and prunes the boot
/// files' inodes with their pages (inode steals). `docs/seed-000-procedure.md` §7.
#[test]
fn the_page_cache_boot_left_keeps_lessdisrupts_kswapd_off_anonymous_memory_in_normal() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/parallelio-step.toml"
    );
    let bare = scenario::load(std::path::Path::new(path)).unwrap();
    let mut cached = bare.clone();
    cached.slab.page_cache = 100 << 20;
    cached.slab.page_cache_active = 25 << 20;
    let without = run(&bare, "lessdisrupt-v7r10", 1, false);
    let with = run(&cached, "lessdisrupt-v7r10", 1, false);
    assert!(
        without.vmstat("pswpout") > 500,
        "the branch must be reached for the test to mean anything: {} swap-outs",
        without.vmstat("pswpout")
    );
    assert_eq!(with.vmstat("pswpout"), 0);
    let old = run(&cached, "3.9", 1, false);
    assert!(old.vmstat("pswpout") > 10_000, "{}", old.vmstat("pswpout"));
    assert!(old.vmstat("kswapd_inodesteal") > 0);
    assert_eq!(without.vmstat("kswapd_inodesteal"), 0);
}
