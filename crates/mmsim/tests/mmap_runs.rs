//! Whole runs of shared file mappings, `fsync` and truncation: invariants after every reclaim
//! batch, and the direction of effects.

mod common;

use mmsim::presets;
use mmsim::report::RunResult;
use mmsim::scenario::{DdConv, MmapAccess, Scenario, WorkloadKind};
use mmsim::sim::{self, RunOptions, RunOutputs};

const PAGE: u64 = 4096;

fn run(s: &Scenario, check: bool) -> (RunResult, mmsim::report::timeseries::TimeSeries) {
    let k = presets::resolve("3.9", &[]).unwrap();
    let (r, series) = sim::run_with(
        s,
        &k,
        1,
        RunOptions {
            check_every_batch: check,
            check_interval: 0,
        },
        RunOutputs {
            sample_interval: Some(mmsim::engine::SEC),
            ..Default::default()
        },
    )
    .unwrap();
    (r, series.unwrap())
}

/// nr_dirty + nr_writeback of every sample.
fn dirty_and_writeback(series: &mmsim::report::timeseries::TimeSeries) -> Vec<f64> {
    let col = |name: &str| {
        mmsim::report::timeseries::COLUMNS
            .iter()
            .position(|c| *c == name)
            .unwrap()
    };
    let (d, wb) = (col("nr_dirty"), col("nr_writeback"));
    series.rows.iter().map(|row| row[d] + row[wb]).collect()
}

fn steal(r: &RunResult) -> u64 {
    ["dma", "dma32", "normal"]
        .iter()
        .map(|z| {
            r.vmstat(&format!("pgsteal_kswapd_{z}")) + r.vmstat(&format!("pgsteal_direct_{z}"))
        })
        .sum()
}

/// Writing through a shared mapping of a file twice the size of RAM: every page is faulted
/// (read first), dirtied once by `page_mkwrite`, written back and reclaimed while the pass
/// goes on; the invariants hold after every reclaim batch and dirty pages never pass the
/// dirty limit.
#[test]
fn an_mmap_write_pass_over_a_file_twice_ram_completes_under_the_dirty_limit() {
    let s = common::mmap_file(256, 512, MmapAccess::Write, 1, 40);
    let (r, series) = run(&s, true);
    let pages = 512 * 256;
    assert_eq!(r.metric("mmap", "passes"), Some(1.0));
    assert_eq!(r.metric("mmap", "pages_touched"), Some(pages as f64));
    assert_eq!(r.vmstat("pgfault"), pages, "one fault per page");
    assert_eq!(r.vmstat("nr_dirtied"), pages, "each page dirtied once");
    assert!(steal(&r) > pages / 2, "mapped pages were reclaimed");
    assert!(r.oom_kills.is_empty());
    // At most the hard limit: 20% of RAM bounds the dirtyable memory's share.
    let limit = 0.2 * (256 * 256) as f64;
    for d in dirty_and_writeback(&series) {
        assert!(
            d < limit,
            "{d} dirty + writeback pages, limit below {limit}"
        );
    }
    assert_eq!(r.vmstat("nr_mapped"), 0, "unmapped at the end");
}

/// The second write pass finds the pages cached and clean (written back, PTEs write-protected
/// by `page_mkclean`): each store is a write-protect fault that dirties the page, at CPU
/// speed, so the writer outruns the disk and `balance_dirty_pages` holds it near the
/// setpoint, as it does `dd`.
///
/// The disk runs deadline: under cfq the first pass's read faults preempt the flusher's
/// writes, so the write bandwidth the throttle has learnt jumps when the second pass
/// starts, and dirty pages sit about 15% under the setpoint for a few seconds while
/// `dirty_ratelimit` catches up. That is the elevator's doing, not the throttle's, which is
/// what this test checks.
#[test]
fn a_second_mmap_write_pass_is_throttled_near_the_dirty_setpoint() {
    let mut s = common::mmap_file(1024, 600, MmapAccess::Write, 2, 30);
    s.machine.devices[0].scheduler = mmsim::scenario::Scheduler::Deadline;
    let (r, series) = run(&s, false);
    let pages = 600 * 256;
    assert_eq!(r.metric("mmap", "passes"), Some(2.0));
    assert_eq!(
        r.vmstat("nr_dirtied"),
        2 * pages,
        "every page dirtied once per pass"
    );
    // A read-and-dirty fault per page in pass 1, a write-protect fault per page in pass 2.
    assert_eq!(r.vmstat("pgfault"), 2 * pages);
    let dirtyable = 1024.0 * 256.0 * 0.9;
    let (bg, thresh) = (0.10 * dirtyable, 0.20 * dirtyable);
    let setpoint = ((bg + thresh) / 2.0 + thresh) / 2.0;
    let d = dirty_and_writeback(&series);
    let throttled: Vec<f64> = d.iter().copied().filter(|&x| x > 1.3 * bg).collect();
    assert!(!throttled.is_empty(), "the writer outran the disk: {d:?}");
    for x in &throttled {
        assert!(
            (x - setpoint).abs() < 0.15 * setpoint,
            "dirty {x} far from the setpoint {setpoint}"
        );
    }
    assert!(d.iter().all(|&x| x < 1.05 * thresh), "{d:?}");
}

/// msync(MS_SYNC) after each pass writes the file's dirty pages and write-protects their
/// PTEs: the run ends with nothing dirty, and every page was dirtied (and written) once per
/// pass. Without msync, the flusher stops at the background threshold and leaves the rest
/// dirty for a while (on data=writeback ext4). (Both runs end a couple of seconds after the workload.)
#[test]
fn msync_after_each_pass_leaves_no_dirty_pages() {
    let mut s = common::mmap_file(512, 128, MmapAccess::Write, 2, 6);
    // Mounted data=writeback: under data=ordered, each journal commit would also write the
    // rewritten pages of a file whose delayed blocks the flusher allocated.
    s.machine.devices[0].data = mmsim::scenario::DataMode::Writeback;
    let (plain, _) = run(&s, false);
    let WorkloadKind::Mmap(p) = &mut s.workloads[0].kind else {
        unreachable!()
    };
    p.msync = true;
    let (synced, _) = run(&s, true);
    let pages = 128 * 256;
    assert!(
        plain.vmstat("nr_dirty") > 0,
        "without msync some pages stay dirty"
    );
    assert_eq!(synced.metric("mmap", "passes"), Some(2.0));
    assert_eq!(synced.vmstat("nr_dirty"), 0);
    assert_eq!(synced.vmstat("nr_writeback"), 0);
    assert_eq!(synced.vmstat("nr_dirtied"), 2 * pages);
    assert_eq!(synced.vmstat("nr_written"), 2 * pages);
}

/// Reading through a shared mapping of a file twice the size of RAM: read-around and
/// asynchronous readahead read each page about once, and the clean mapped pages are
/// reclaimed (unmapped, then freed) without any write.
#[test]
fn an_mmap_read_of_a_file_larger_than_ram_reclaims_its_clean_mapped_pages() {
    let s = common::mmap_file(256, 512, MmapAccess::Read, 1, 40);
    let (r, _) = run(&s, true);
    let pages = 512 * 256;
    assert_eq!(r.metric("mmap", "pages_touched"), Some(pages as f64));
    let kib_read = r.vmstat("pgpgin");
    assert!(
        kib_read >= pages * 4 && kib_read <= pages * 4 * 11 / 10,
        "{kib_read} KiB read for {pages} pages"
    );
    assert!(
        r.vmstat("pgmajfault") < pages / 32,
        "readahead keeps faults minor"
    );
    assert!(steal(&r) > pages / 2, "mapped pages were reclaimed");
    assert_eq!(r.vmstat("nr_dirtied"), 0);
    assert_eq!(r.vmstat("nr_vmscan_write"), 0);
    assert!(r.oom_kills.is_empty());
}

/// dd conv=fsync then truncate_to: every page is written before dd's sync returns; the
/// truncation then frees every page past the new size and keeps the rest cached.
#[test]
fn dd_with_fsync_then_truncate_keeps_only_the_pages_below_the_new_size() {
    let mut s = common::single_dd(512, 200, 20);
    let WorkloadKind::Dd(dd) = &mut s.workloads[0].kind else {
        unreachable!()
    };
    dd.conv = DdConv::Fsync;
    dd.truncate_to = Some(64 << 20);
    let (r, _) = run(&s, true);
    let pages = 200 * 256;
    assert!(r.metric("dd", "io_seconds").unwrap() > 0.0);
    assert_eq!(r.vmstat("nr_written"), pages);
    assert_eq!(r.vmstat("nr_dirty"), 0);
    assert_eq!(r.vmstat("nr_file_pages"), (64 << 20) / PAGE);
    assert_eq!(
        r.vmstat("nr_inactive_file") + r.vmstat("nr_active_file"),
        (64 << 20) / PAGE
    );
}
