//! The benchmark's counts: each access counted once, and the scenarios exercising the paths
//! they are named for.

mod common;

use mmsim::bench::{self, Kind, Size, Stage};
use mmsim::scenario::MmapAccess;

/// Three read passes over a mapped file that fits in memory: the first pass faults every
/// page in (each fault's retry is the same access), the other two hit. Until the counting
/// moved to `workload::access`, a faulting access was counted twice: 4 per page here.
#[test]
fn each_access_is_counted_once_whether_it_hits_or_faults() {
    let pages = 16 * 256;
    let s = common::mmap_file(256, 16, MmapAccess::Read, 3, 20);
    let c = bench::run(&s, |_| {}).unwrap();
    assert_eq!(c.accesses.total(), 3 * pages, "{c:?}");
    assert_eq!(c.accesses.faulted, pages, "{c:?}");
    assert_eq!(c.accesses.hits, 2 * pages, "{c:?}");
    assert_eq!(c.pgfault, pages, "one fault per page: {c:?}");
    assert!(
        c.pgmajfault > 0,
        "the first touch of a file page reads it: {c:?}"
    );
    assert_eq!(c.figures()[0], ("page-table hits", 2 * pages));
}

/// The stages come in order, once each.
#[test]
fn run_marks_start_booted_and_ran_in_order() {
    let s = common::mmap_file(256, 4, MmapAccess::Read, 1, 5);
    let mut stages = Vec::new();
    bench::run(&s, |st| stages.push(st)).unwrap();
    assert_eq!(stages, [Stage::Start, Stage::Booted, Stage::Ran]);
}

/// The quick file scenario goes through dd's writes, writeback to the disk and reclaim of
/// file pages; the quick anon one through swap.
#[test]
fn the_quick_scenarios_exercise_their_paths() {
    let c = bench::run(&Kind::File.scenario(Size::Quick), |_| {}).unwrap();
    let dd_pages = 580 * 256;
    assert!(c.io_written - c.swap_out >= dd_pages, "{c:?}");
    assert!(
        c.reclaimed > 0 && c.isolated > 0 && c.scanned >= c.isolated,
        "{c:?}"
    );
    let a = bench::run(&Kind::Anon.scenario(Size::Quick), |_| {}).unwrap();
    assert!(a.swap_out > 0 && a.swap_in > 0 && a.pgmajfault > 0, "{a:?}");
    assert!(a.reclaimed > 0, "{a:?}");
}
