//! Whole runs on an NFS mount.

mod common;

use mmsim::engine::SEC;
use mmsim::mm::vmstat::ZoneStat;
use mmsim::presets;
use mmsim::scenario::{BlockDevice, WorkloadKind};
use mmsim::sim;

#[test]
fn debug_nfs_dd() {
    let mut s = common::single_dd(4096, 2048, 40);
    s.machine.devices = vec![BlockDevice::nfs_mount("nfs0")];
    if let WorkloadKind::Dd(dd) = &mut s.workloads[0].kind {
        dd.device = "nfs0".into();
    }
    let k = presets::resolve("3.9", &[]).unwrap();
    let w = sim::boot(&s, &k, 1).unwrap();
    sim::run_world(&w, 40 * SEC).unwrap();
    let k = w.borrow();
    let c = k.bdis[0].nfs.as_ref().unwrap();
    eprintln!("{:?}", c.stats);
    eprintln!("done at {:?}", k.workloads[0].io_done_at);
    eprintln!("unstable {}", k.global_stat(ZoneStat::nr_unstable));
}

#[test]
fn debug_example() {
    let s = mmsim::scenario::load(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/nfs-dd.toml"
    )))
    .unwrap();
    let k = presets::resolve("3.9", &[]).unwrap();
    let w = sim::boot(&s, &k, 1).unwrap();
    sim::run_world(&w, 40 * SEC).unwrap();
    let k = w.borrow();
    let c = k.bdis[0].nfs.as_ref().unwrap();
    eprintln!("{:?}", c.stats);
    eprintln!(
        "done at {:?} started {}",
        k.workloads[0].io_done_at, k.workloads[0].started_at
    );
}
