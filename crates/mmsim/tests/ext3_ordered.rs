//! ext3 data=ordered under memory pressure, over whole runs: buffer states, the journal and
//! reclaim's `is_dirty_writeback` hook (LD patch 7).

mod common;

use mmsim::fs::Filesystem;
use mmsim::presets;
use mmsim::scenario::{MemEaterThen, Scenario, Workload, WorkloadKind};
use mmsim::sim;

/// A 128 MiB machine with swap, for 7 s: a dd of 64 MiB (no fdatasync) to ext3 on a
/// 7200 rpm disk, and a mem_eater that maps 40% of RAM from 4 s on (a second before the
/// journal's first commit, so that reclaim meets pages under its IO) and re-touches it
/// every 5 s. `dirty_background_ratio` 70 (`dirty_ratio` 80) is above what dd dirties, so
/// the flusher leaves dd's pages alone and the commit writes them all.
fn ext3_dd_beside_an_eater() -> Scenario {
    const RAM_MIB: u64 = 128;
    const DD_MIB: u64 = 64;
    const BG_RATIO: u32 = 70;
    let mut s = common::single_dd(RAM_MIB, DD_MIB, 7);
    s.name = "ext3-dd-beside-an-eater".into();
    s.machine.devices[0].filesystem = Filesystem::Ext3;
    s.machine.swap = common::anon_pressure(RAM_MIB, 7).machine.swap;
    s.vm.dirty.dirty_background_ratio = BG_RATIO;
    s.vm.dirty.dirty_ratio = BG_RATIO + 10;
    if let WorkloadKind::Dd(dd) = &mut s.workloads[0].kind {
        dd.conv = mmsim::scenario::DdConv::None;
    }
    s.workloads.push(Workload {
        name: "mem_eater".into(),
        start: 4 * mmsim::engine::SEC,
        kind: WorkloadKind::MemEater {
            size: RAM_MIB * common::MIB / 10 * 4,
            chunk: 16 * common::MIB,
            pause: 100 * mmsim::engine::MSEC,
            then: MemEaterThen::Retouch {
                interval: 5 * mmsim::engine::SEC,
            },
        },
        cgroup: None,
        cpus: Vec::new(),
        background: false,
    });
    s
}

/// What reclaim saw on the file lists in a run of `lessdisrupt-v7r10` with the
/// buffer-head hook on or off, and the journal's commits and data buffers written. With
/// `check`, the invariants are checked after every reclaim batch (else at the end).
fn run(hook: bool, check: bool) -> (mmsim::mm::vmscan::ReclaimFileTotals, u64, u64) {
    let s = ext3_dd_beside_an_eater();
    let k = presets::resolve(
        "lessdisrupt-v7r10",
        &[("buffer_is_dirty_writeback".to_string(), hook)],
    )
    .unwrap();
    let w = sim::boot(&s, &k, 1).unwrap();
    w.borrow_mut().check_every_batch = check;
    sim::run_world(&w, s.run.duration).unwrap_or_else(|e| panic!("hook {hook}: {e}"));
    let k = w.borrow();
    let j = mmsim::fs::jbd::journal_of(&k, 0).expect("ext3 has a journal");
    (
        k.reclaim_file_totals,
        j.commit_sequence,
        j.data_buffers_written,
    )
}

/// LD patch 7: with the hook, reclaim no longer counts ext3 pages whose buffers the journal
/// has written (PG_dirty, clean buffers) as dirty, and counts pages whose buffers are under
/// the journal's IO as under writeback rather than as unqueued dirty. (How many pages of
/// each kind each run meets depends on how the runs diverge, so the test checks what the
/// hook reports within each run, not rates across them.) The invariants hold after every
/// batch (checked in one run), and the journal really wrote data.
#[test]
fn the_buffer_hook_counts_fewer_unqueued_dirty_ext3_pages_in_reclaim() {
    // The two runs are independent: run them side by side.
    let with_hook = std::thread::spawn(|| run(true, true));
    let (off, ..) = run(false, false);
    let (on, commits, data) = with_hook.join().expect("the run with the hook panicked");
    assert!(
        commits >= 1 && data > 0,
        "{commits} commits wrote {data} buffers"
    );
    assert!(
        on.nr_taken > 10_000 && off.nr_taken > 10_000,
        "{on:?} {off:?}"
    );
    // A page counted dirty or under writeback (`nr_dirty`, LD's count) is unqueued dirty, or
    // under PG_writeback (`nr_writeback`, or `nr_immediate` where kswapd stops on it), or,
    // with the hook only, one whose buffers the journal is writing: reclaim cannot see
    // that IO without it.
    let seen = |t: &mmsim::mm::vmscan::ReclaimFileTotals| {
        t.stats.nr_unqueued_dirty + t.stats.nr_writeback + t.stats.nr_immediate
    };
    assert_eq!(off.stats.nr_dirty, seen(&off), "{off:?}");
    assert!(
        on.stats.nr_dirty > seen(&on),
        "no page under the journal's IO counted as writeback with the hook: {on:?}"
    );
}
