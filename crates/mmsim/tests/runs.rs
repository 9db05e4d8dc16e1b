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
        trace: None,
        sample_interval: Some(mmsim::engine::SEC),
    };
    let (r, series) = sim::run_with(
        &s,
        &k,
        1,
        RunOptions {
            check_every_batch: false,
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

/// Issue 3: swap on its own device goes through that device's queue and disk model.
#[test]
fn swap_on_a_raw_disk_goes_through_its_request_queue() {
    use mmsim::scenario::{BlockDevice, Filesystem};
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
}

/// Use-once protection: reading a file twice the size of RAM recycles its page-cache pages
/// (they never leave the inactive list) and leaves a mem_eater's idle memory alone.
#[test]
fn streaming_a_file_larger_than_ram_does_not_swap_out_anonymous_memory() {
    use mmsim::scenario::{MemEaterThen, Workload, WorkloadKind};
    let mut s = common::single_dd(512, 1024, 40);
    s.machine.swap = common::anon_pressure(512, 40).machine.swap;
    s.workloads = vec![
        Workload {
            name: "idle".into(),
            start: 0,
            kind: WorkloadKind::MemEater {
                size: 128 << 20,
                chunk: 32 << 20,
                pause: 0,
                then: MemEaterThen::Hold,
            },
        },
        Workload {
            name: "cat".into(),
            start: mmsim::engine::SEC,
            kind: WorkloadKind::Cat {
                device: "sda".into(),
                size: 1 << 30,
            },
        },
    ];
    let r = run(&s, "3.9", 1, true);
    assert_eq!(r.metric("cat", "pages_read"), Some(262_144.0));
    let mbps = r.metric("cat", "mb_per_sec").unwrap();
    assert!((100.0..=140.0).contains(&mbps), "cat read at {mbps} MB/s");
    assert_eq!(
        r.vmstat("pgpgin"),
        1 << 20,
        "each page read exactly once (KiB)"
    );
    assert_eq!(r.vmstat("pswpout"), 0, "idle anonymous memory was swapped");
    let sum = |stem: &str| -> u64 {
        ["dma", "dma32", "normal"]
            .iter()
            .map(|z| r.vmstat(&format!("{stem}_{z}")))
            .sum()
    };
    assert!(
        sum("pgsteal_kswapd") + sum("pgsteal_direct") > 100_000,
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
