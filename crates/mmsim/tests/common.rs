//! Scenarios built in code for whole-run tests.
#![allow(dead_code)]

use mmsim::engine::{MSEC, SEC};
use mmsim::mm::swapfile::SwapConfig;
use mmsim::mm::VmSysctls;
use mmsim::scenario::*;
use std::path::PathBuf;

pub const MIB: u64 = 1 << 20;

/// A small machine under anonymous pressure: memcachetest at 80% of RAM and a mem_eater
/// that pushes it into swap.
pub fn anon_pressure(ram_mib: u64, seconds: u64) -> Scenario {
    let ram = ram_mib * MIB;
    Scenario {
        name: "anon-pressure-test".into(),
        machine: Machine {
            reclaim_costs: Default::default(),
            pci_hole: 0,
            ram,
            cpus: 4,
            devices: Vec::new(),
            swap: Some(SwapConfig {
                size: ram * 2,
                read_latency: 5 * MSEC,
                write_latency: 5 * MSEC,
                bandwidth: 100 * MIB,
                device: None,
                placement: Default::default(),
            }),
        },
        vm: VmSysctls::default(),
        transparent_hugepage: Default::default(),
        run: RunParams {
            duration: seconds * SEC,
            seed: 1,
            end_when_done: false,
        },
        kernel: KernelSelection::default(),
        slab: SlabParams {
            files: 10_000,
            inode_size: 1024,
            ..Default::default()
        },
        workloads: vec![
            Workload {
                name: "memcachetest".into(),
                start: 0,
                cgroup: None,
                cpus: Vec::new(),
                background: false,
                kind: WorkloadKind::Memcachetest(MemcachetestParams {
                    pool: ram / 10 * 8,
                    value_size: 16384,
                    set_percent: 33,
                    threads: 1,
                    duration: None,
                    populate: true,
                }),
            },
            Workload {
                name: "mem_eater".into(),
                start: seconds * SEC / 3,
                cgroup: None,
                cpus: Vec::new(),
                background: false,
                kind: WorkloadKind::MemEater {
                    size: ram / 2,
                    chunk: 16 * MIB,
                    pause: 100 * MSEC,
                    then: MemEaterThen::Retouch { interval: 5 * SEC },
                },
            },
        ],
        cgroups: Vec::new(),
    }
}

/// Compares `actual` with `tests/golden/<name>`, or rewrites the file under `MMSIM_BLESS=1`.
pub fn check_golden(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var("MMSIM_BLESS").as_deref() == Ok("1") {
        std::fs::write(&path, actual).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "reading {}: {e}\n(run with MMSIM_BLESS=1 to create it)\nactual:\n{actual}",
            path.display()
        )
    });
    if expected != actual {
        panic!(
            "{} differs (MMSIM_BLESS=1 rewrites it)\n--- expected ---\n{expected}--- actual ---\n{actual}--- end ---",
            path.display()
        );
    }
}

/// An otherwise idle machine with one 7200 rpm disk running ext4, and a dd of `dd_mib`
/// with `conv=fdatasync`.
pub fn single_dd(ram_mib: u64, dd_mib: u64, seconds: u64) -> Scenario {
    let mut s = anon_pressure(ram_mib, seconds);
    s.name = "single-dd".into();
    s.machine.swap = None;
    s.machine.devices = vec![BlockDevice::ext4_hdd("sda")];
    s.workloads = vec![Workload {
        name: "dd".into(),
        start: 0,
        kind: WorkloadKind::Dd(DdParams {
            device: "sda".into(),
            size: dd_mib * MIB,
            bs: MIB,
            two_buffers: false,
            conv: DdConv::Fdatasync,
            truncate_to: None,
            unlink: false,
            start_when_used: None,
            file: None,
        }),
        cgroup: None,
        cpus: Vec::new(),
        background: false,
    }];
    s
}

/// An otherwise idle machine with one 7200 rpm ext4 disk, no swap, and an `mmap` workload on
/// a file of `file_mib` that is on the disk at boot. It starts at 1 s, so its inode is not
/// dirtied at time 0.
pub fn mmap_file(
    ram_mib: u64,
    file_mib: u64,
    access: MmapAccess,
    passes: u32,
    seconds: u64,
) -> Scenario {
    let mut s = single_dd(ram_mib, 0, seconds);
    s.name = "mmap-file".into();
    s.workloads = vec![Workload {
        name: "mmap".into(),
        start: SEC,
        kind: WorkloadKind::Mmap(MmapParams {
            device: "sda".into(),
            size: file_mib * MIB,
            access,
            pattern: AccessPattern::Sequential,
            passes,
            msync: false,
        }),
        cgroup: None,
        cpus: Vec::new(),
        background: false,
    }];
    s
}
