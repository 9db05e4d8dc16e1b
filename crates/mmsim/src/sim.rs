//! Assemble a machine from a scenario and a kernel, run it, and summarise the run.
//!
//! A run is a pure function of (scenario, kernel, seed): one RNG seeded from `seed`, one
//! event queue, no wall clock.

use crate::calibration::PAGE_SIZE;
use crate::engine::{self, Executor, Nanos, Sched, SEC};
use crate::fs::fs_writeback;
use crate::mm::backing_dev;
use crate::mm::mmzone::Pgdat;
use crate::mm::mmzone::MAX_NR_ZONES;
use crate::mm::page::Pages;
use crate::mm::page_alloc;
use crate::mm::page_io::{self, SwapDev};
use crate::mm::slab::Slab;
use crate::mm::super_block;
use crate::mm::swapfile::SwapInfo;
use crate::mm::vmstat::{VmEvents, ZoneStat};
use crate::mm::{invariants, vmscan, Kernel, Queues, World};
use crate::presets::KernelConfig;
use crate::report::timeseries::{self, TimeSeries};
use crate::report::{RunResult, ThreadTimes, WorkloadState};
use crate::scenario::{BlockDevice, DeviceKind, Scenario, Scheduler, WorkloadKind};
use crate::workload::{self, secs, Phase, WorkloadStats};
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use std::cell::RefCell;
use std::fmt;
use std::rc::Rc;

/// Largest machine the page-table encoding allows (2^29 frames).
pub const MAX_RAM: u64 = (1u64 << 29) * PAGE_SIZE;

/// Why a run could not complete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimError {
    /// The scenario cannot be built into a machine (checked before any simulated time).
    Config(String),
    /// A page-state invariant broke: the run stopped (names the invariant and the page).
    Invariant(String),
    /// The trace file could not be written.
    Trace(String),
    /// The time-series file could not be written.
    TimeSeries(String),
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Config(m) => write!(f, "{m}"),
            SimError::Invariant(m) => write!(f, "simulation stopped: {m}"),
            SimError::Trace(m) => write!(f, "writing the trace: {m}"),
            SimError::TimeSeries(m) => write!(f, "writing the time series: {m}"),
        }
    }
}

impl std::error::Error for SimError {}

/// Options that change how a run is checked, never what it computes.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions {
    /// Check the page-state invariants after reclaim batches (slow; for tests and
    /// `--check`).
    pub check_every_batch: bool,
    /// With `check_every_batch`: the least simulated time between two checks (0: after
    /// every batch).
    pub check_interval: Nanos,
}

/// Host memory a run of `scenario` is expected to need at its peak, in bytes: what the
/// model keeps per simulated frame, per mapped virtual page, per file page and per swap
/// slot, plus a fixed allowance. Used to refuse a machine that cannot fit on the host
/// before booting it; it errs high (measured peaks are in the README).
pub fn host_memory_estimate(scenario: &Scenario) -> u64 {
    /// Per frame: `struct page`'s six u32 fields (flags, two links, mapping, index, private).
    const PAGE_STATE: u64 = 24;
    /// Per mapped virtual page: one u32 PTE.
    const PTE: u64 = 4;
    /// Per file page: the page-cache slot (u32).
    const PAGE_CACHE_SLOT: u64 = 4;
    /// Per swap slot: the swap map byte; and a swap-cache hash entry for each page in the
    /// swap cache, allowed for a quarter of the frames at once.
    const SWAP_SLOT: u64 = 1;
    const SWAP_CACHE_ENTRY: u64 = 16;
    /// Per cached file (the system's at boot, cat's): a dentry and an inode with their LRU
    /// links; per file of a workload also its `Inode` and name.
    const CACHED_FILE: u64 = 64;
    const WORKLOAD_FILE: u64 = 256;
    /// Executor, devices, request queues, buffers and the binary itself.
    const FIXED: u64 = 16 << 20;
    let pages = |bytes: u64| bytes.div_ceil(PAGE_SIZE);
    let frames = pages(scenario.machine.ram);
    let mut mapped = 0;
    let mut file = 0;
    let mut files_cached = 0;
    for wl in &scenario.workloads {
        match &wl.kind {
            WorkloadKind::MemEater { size, .. } => mapped += pages(*size),
            WorkloadKind::Memcachetest(m) => mapped += pages(m.pool),
            WorkloadKind::Dd(d) => file += pages(d.size),
            WorkloadKind::Cat { size, files, .. } => {
                file += pages(*size);
                files_cached += files;
            }
            WorkloadKind::Mmap(m) => {
                mapped += pages(m.size);
                file += pages(m.size);
            }
            WorkloadKind::Parallelio(p) => {
                mapped += pages(p.pool);
                file += pages(p.steps.iter().copied().max().unwrap_or(0));
            }
            // The daemons' text is the boot's page cache, counted with it.
            WorkloadKind::Sync | WorkloadKind::Highalloc(_) | WorkloadKind::Daemons(_) => {}
            WorkloadKind::SimpleWriteback(p) => file += pages(p.size),
            WorkloadKind::Fsmark(p) => {
                file += pages(p.files * p.file_size * u64::from(p.iterations));
                files_cached += p.files * u64::from(p.iterations);
            }
            WorkloadKind::Micro(p) => {
                file += pages(p.file_mmap_size.max(p.mixed_size));
                mapped += pages(p.file_mmap_size.max(p.mixed_size));
            }
            WorkloadKind::Kbuild(k) => {
                let (f, c, m) = kbuild_estimate(k.units, k.jobs, 1);
                file += f;
                files_cached += c;
                mapped += m;
            }
            WorkloadKind::StressHighalloc(p) => {
                let trees = p
                    .trees
                    .unwrap_or_else(|| workload::stress_highalloc::default_trees(frames))
                    as u64
                    + 1;
                let (f, c, m) = kbuild_estimate(p.units, p.jobs, trees);
                // The whole trees, their outputs, and the file as large as RAM.
                use workload::kbuild::{TREE_2_6_30_BYTES, TREE_2_6_30_FILES};
                file += f + pages(TREE_2_6_30_BYTES) * trees + frames;
                files_cached += c + TREE_2_6_30_FILES * trees;
                mapped += m;
            }
        }
    }
    // The page cache boot left: its pages, and a workload file's state per file.
    file += pages(scenario.slab.page_cache);
    files_cached += pages(scenario.slab.page_cache).div_ceil(super_block::BOOT_FILE_PAGES);
    let swap = scenario.machine.swap.as_ref().map_or(0, |s| pages(s.size));
    let estimate = frames * PAGE_STATE
        + mapped * PTE
        + file * PAGE_CACHE_SLOT
        + swap * SWAP_SLOT
        + swap.min(frames) / 4 * SWAP_CACHE_ENTRY
        + scenario.slab.files * CACHED_FILE
        + files_cached * (CACHED_FILE + WORKLOAD_FILE)
        + FIXED;
    // Vectors that grow by doubling may hold up to twice what they use for a moment.
    estimate + estimate / 4
}

/// What `trees` trees of `units` units built with `-j{jobs}` add to the host-memory
/// estimate: (file pages, cached files, mapped pages). Sources, hot headers and objects
/// (about as many pages as the sources); the compilers' largest heaps.
fn kbuild_estimate(units: u32, jobs: u32, trees: u64) -> (u64, u64, u64) {
    use workload::kbuild::{HEADER_BYTES, HEAP_MAX, HOT_HEADERS, SOURCE_BYTES};
    let units = units as u64;
    let file = (units * SOURCE_BYTES * 2 + HOT_HEADERS * HEADER_BYTES).div_ceil(PAGE_SIZE);
    let cached = units * 2 + HOT_HEADERS;
    let mapped = jobs as u64 * HEAP_MAX.div_ceil(PAGE_SIZE);
    (file * trees, cached * trees, mapped * trees)
}

/// Boot a machine: zones, watermarks, slab, swap, kswapd and the workloads' tasks.
pub fn boot(scenario: &Scenario, kernel: &KernelConfig, seed: u64) -> Result<World, SimError> {
    let m = &scenario.machine;
    if m.ram > MAX_RAM {
        return Err(SimError::Config(format!(
            "machine.ram: {} bytes is more than mmsim models (at most {} GiB)",
            m.ram,
            MAX_RAM >> 30
        )));
    }
    let ram_pages = m.ram / PAGE_SIZE;
    let mut zones = page_alloc::build_zones(ram_pages, m.pci_hole / PAGE_SIZE);
    let mut pages = Pages::new(ram_pages as usize);
    page_alloc::free_boot_memory(&mut pages, &mut zones);
    let mut min_free_kbytes = scenario
        .vm
        .min_free_kbytes
        .unwrap_or_else(|| page_alloc::calculate_min_free_kbytes(&zones));
    page_alloc::setup_per_zone_wmarks(&mut zones, min_free_kbytes);
    // hugepage_init (a late initcall): THP stays off on a small machine; khugepaged
    // raises min_free_kbytes, unless the scenario writes the sysctl itself, as a boot
    // script would afterwards.
    let thp = if zones.iter().map(|z| z.managed_pages).sum::<u64>()
        >= crate::mm::huge_memory::THP_MIN_TOTALRAM_PAGES
    {
        scenario.transparent_hugepage
    } else {
        crate::mm::huge_memory::ThpEnabled::Never
    };
    if thp.khugepaged_enabled() && scenario.vm.min_free_kbytes.is_none() {
        let recommended = crate::mm::huge_memory::recommended_min_free_kbytes(&zones);
        if recommended > min_free_kbytes {
            min_free_kbytes = recommended;
            page_alloc::setup_per_zone_wmarks(&mut zones, min_free_kbytes);
        }
    }
    for z in zones.iter_mut() {
        page_alloc::setup_zone_migrate_reserve(&mut pages, z);
    }
    page_alloc::setup_per_zone_lowmem_reserve(&mut zones, &scenario.vm.lowmem_reserve_ratio);
    page_alloc::setup_inactive_ratio(&mut zones);
    page_alloc::setup_zone_pageset(&mut zones, m.cpus);
    let managed: u64 = zones.iter().map(|z| z.managed_pages).sum();
    let high: u64 = zones.iter().map(|z| z.high_wmark()).sum();
    let swap_pages = m.swap.as_ref().map(|s| s.size / PAGE_SIZE).unwrap_or(0);
    if swap_pages > u32::MAX as u64 / 2 {
        return Err(SimError::Config(
            "swap.size: more swap than mmsim models".into(),
        ));
    }
    let mut sched = Sched::new(m.cpus);
    let wq = Queues {
        congestion_async: sched.new_queue(),
        kswapd_wait: sched.new_queue(),
        pfmemalloc_wait: sched.new_queue(),
        timer: sched.new_queue(),
        page_wait: (0..64).map(|_| sched.new_queue()).collect(),
        child_exit: sched.new_queue(),
    };
    let swapdev = m
        .swap
        .as_ref()
        .filter(|s| s.device.is_none())
        .map(|s| SwapDev::new(s.clone(), sched.new_queue()));
    let groups: Vec<crate::mm::memcontrol::GroupConfig> = scenario
        .cgroups
        .iter()
        .map(|c| crate::mm::memcontrol::GroupConfig {
            name: c.name.clone(),
            parent: c.parent.map_or(0, |p| p + 1),
            limit_pages: c.limit_in_bytes.map(|b| b / PAGE_SIZE),
            soft_limit_pages: c.soft_limit_in_bytes.map(|b| b / PAGE_SIZE),
            use_hierarchy: c.use_hierarchy,
            swappiness: c.swappiness,
        })
        .collect();
    let memcg = crate::mm::memcontrol::MemCgroups::new(
        &groups,
        pages.len(),
        swap_pages as usize,
        scenario.vm.swappiness,
    );
    for z in zones.iter_mut() {
        z.memcg_lruvecs = vec![Default::default(); memcg.groups.len().saturating_sub(1)];
    }
    let awaited = scenario
        .workloads
        .iter()
        .map(|w| scenario.run.end_when_done && !w.background)
        .collect::<Vec<bool>>();
    let mut k = Kernel {
        sched,
        rng: ChaCha8Rng::seed_from_u64(seed),
        sw: kernel.switches,
        base: kernel.base,
        vm: scenario.vm.clone(),
        min_free_kbytes,
        pages,
        zones,
        pgdat: Pgdat {
            classzone_idx: MAX_NR_ZONES - 1,
            ..Default::default()
        },
        events: VmEvents::default(),
        swap: SwapInfo::new(swap_pages as u32),
        swapdev,
        swap_bdi: None,
        swap_sector_base: 0,
        slab: Slab::new(scenario.slab.inode_size),
        dcache: Default::default(),
        icache: Default::default(),
        super_blocks: Vec::new(),
        mms: Vec::new(),
        inodes: Vec::new(),
        bdis: Vec::new(),
        bdi_props: crate::mm::page_writeback::BdiProportions::new(0),
        old_wb: crate::mm::page_writeback::OldWriteback::new(0, 0, 1),
        throttle: Default::default(),
        global_dirty_limit: Default::default(),
        cpu_dirty: Default::default(),
        wq,
        nr_bdi_congested_async: 0,
        io_batch: Vec::new(),
        oom_kills: Vec::new(),
        warnings: Default::default(),
        oom_victim: None,
        costs: m.reclaim_costs,
        check_every_batch: false,
        check_interval: 0,
        next_check: 0,
        fatal: None,
        // With `end = "workloads"` and nothing awaited, the run ends at once.
        halt: scenario.run.end_when_done && awaited.iter().all(|&a| !a),
        user: Box::new(workload::Userspace::new(awaited)),
        accesses: Default::default(),
        pages_isolated: 0,
        trace: None,
        reclaim_file_totals: Default::default(),
        held_blocks: Vec::new(),
        file_index: Default::default(),
        memcg,
        thp,
        khugepaged: Default::default(),
    };
    // The system's root filesystem, with the dentries and inodes cached before the run.
    let slab_pages = super_block::boot_pages(&k, scenario.slab.files + 1);
    if slab_pages + high * 2 > managed {
        return Err(SimError::Config(format!(
            "machine.ram: {} MiB is too small for the zones, watermarks and a slab of {} files' dentries and inodes",
            m.ram >> 20,
            scenario.slab.files
        )));
    }
    // page_writeback_init: the proportions' period follows the dirty limit at boot.
    let dirty_total = crate::mm::page_writeback::dirty_limits(&k).1;
    k.old_wb = crate::mm::page_writeback::OldWriteback::new(dirty_total, managed, m.cpus);
    if k.sw.on(crate::presets::Switch::IolessFastBdiRampUp) {
        k.old_wb.fast_ramp_up(dirty_total);
    }
    let root = super_block::mount(&mut k, "/");
    debug_assert_eq!(root, super_block::ROOT_SB);
    super_block::populate(&mut k, root, scenario.slab.files);
    let w: World = Rc::new(RefCell::new(k));
    let w2 = w.clone();
    w.borrow_mut().sched.spawn("kswapd0", vmscan::kswapd(w2));
    if thp.khugepaged_enabled() {
        let w2 = w.clone();
        w.borrow_mut()
            .sched
            .spawn("khugepaged", crate::mm::huge_memory::khugepaged(w2));
    }
    if w.borrow().swapdev.is_some() {
        let w2 = w.clone();
        w.borrow_mut()
            .sched
            .spawn("swapdev", page_io::swap_device_task(w2));
    }
    for dev in &m.devices {
        let id = add_block_device(&w, dev)?;
        if let Some(swap) = m
            .swap
            .as_ref()
            .filter(|s| s.device.as_deref() == Some(&dev.name))
        {
            let mut k = w.borrow_mut();
            k.swap_bdi = Some(id);
            // A swap partition beside a filesystem: the two share the disk as placed.
            if dev.filesystem != crate::fs::Filesystem::Raw {
                let (swap_start, fs_start) = swap.placement.sectors(dev.size, swap.size);
                k.swap_sector_base = swap_start;
                k.bdis[id].next_free_sector = fs_start;
            }
        }
    }
    if scenario.slab.page_cache > 0 {
        // The root filesystem's files lie on the first disk with a filesystem.
        let mut k = w.borrow_mut();
        let disk = m
            .devices
            .iter()
            .position(|d| d.filesystem != crate::fs::Filesystem::Raw)
            .ok_or_else(|| {
                SimError::Config(
                    "slab.page_cache: the system's page cache needs a [[device]] with a \
                     filesystem to hold its files"
                        .into(),
                )
            })?;
        let pages = scenario.slab.page_cache / PAGE_SIZE;
        let active = scenario.slab.page_cache_active / PAGE_SIZE;
        if super_block::cache_boot_pages(&mut k, root, disk, pages, active) < pages {
            return Err(SimError::Config(format!(
                "slab.page_cache: {} MiB does not fit in the free memory at boot",
                scenario.slab.page_cache >> 20
            )));
        }
    }
    if !m.devices.is_empty() {
        let w2 = w.clone();
        w.borrow_mut()
            .sched
            .spawn("iostat", backing_dev::iostat_task(w2));
    }
    for wl in &scenario.workloads {
        spawn_workload(&w, wl);
    }
    Ok(w)
}

/// Build a `[[device]]`: its device model and request queue, its bdi, one driver task per
/// request the device can hold, and its flusher. An NFS mount gets its client state and
/// one task per RPC slot instead of driver tasks.
pub fn add_block_device(w: &World, dev: &BlockDevice) -> Result<usize, SimError> {
    use crate::block::{self, ElevatorKind};
    let device = dev
        .model()
        .map_err(|e| SimError::Config(format!("device \"{}\": {}", dev.name, e.problem)))?;
    let nfs = (dev.kind == DeviceKind::Nfs).then(|| {
        let mut k = w.borrow_mut();
        // totalram_pages: what the buddy allocator manages.
        let ram_pages = k.zones.iter().map(|z| z.managed_pages).sum();
        let wsize_pages = u64::from(device.max_sectors()) / u64::from(backing_dev::PAGE_SECTORS);
        // Patch 45: nfs_init_writepagecache caps nfs_congestion_kb at an eighth of the
        // dirty threshold at boot.
        let cap_kb = if k.sw.on(crate::presets::Switch::NfsCongestionByDirtyThresh) {
            crate::mm::page_writeback::dirty_limits(&k).1 * (PAGE_SIZE / 1024) / 8
        } else {
            u64::MAX
        };
        let wait_queue = k.sw.on(crate::presets::Switch::NfsWritebackWaitQueue);
        let congestion = block::NfsCongestion::with_cap(ram_pages, cap_kb, wait_queue);
        Box::new(crate::fs::nfs::NfsClient::new(
            congestion,
            wsize_pages,
            || k.sched.new_queue(),
        )) as Box<dyn std::any::Any>
    });
    let mut cfg = device.queue_config();
    cfg.nr_requests = cfg.nr_requests.max(dev.nr_requests);
    cfg.elevator = match dev.scheduler {
        Scheduler::Deadline => ElevatorKind::deadline(),
        Scheduler::Noop => ElevatorKind::Noop,
        Scheduler::Cfq => ElevatorKind::cfq(),
    };
    let depth = cfg.depth.max(1);
    let jbd2 = dev.filesystem == crate::fs::Filesystem::Ext4
        && dev.data == crate::scenario::DataMode::Ordered;
    let id = {
        let mut k = w.borrow_mut();
        let now = k.sched.now();
        let (flusher_wq, request_wq, device_wq) = (
            k.sched.new_queue(),
            [k.sched.new_queue(), k.sched.new_queue()],
            k.sched.new_queue(),
        );
        k.bdis.push(backing_dev::Bdi {
            name: dev.name.clone(),
            queue: block::RequestQueue::new(&dev.name, cfg),
            device,
            a_ops: dev.filesystem.aops(),
            sb: crate::mm::page::NIL,
            queueless: nfs.is_some(),
            fs_info: nfs,
            reclaimable: 0,
            writeback: 0,
            dirtied: 0,
            written: 0,
            written_by_dirtiers: 0,
            throttle_view: Default::default(),
            bw: crate::mm::page_writeback::BdiBandwidth::new(now),
            b_dirty: Default::default(),
            b_io: Default::default(),
            b_more_io: Default::default(),
            work_list: Default::default(),
            writeback_running: false,
            last_old_flush: now,
            flusher_wq,
            request_wq,
            device_wq,
            congested: false,
            next_free_sector: 0,
            iostat: block::IostatSampler::mmtests(),
        });
        if dev.filesystem.has_journal() {
            let q = k.sched.new_queue();
            k.bdis.last_mut().expect("just pushed").fs_info =
                Some(Box::new(crate::fs::jbd::Journal::new(q)));
        }
        if jbd2 {
            let q = k.sched.new_queue();
            k.bdis.last_mut().expect("just pushed").fs_info =
                Some(Box::new(crate::fs::jbd2::Journal2::new(q)));
        }
        if dev.filesystem.has_submit_worker() {
            let max_sectors = k
                .bdis
                .last()
                .expect("just pushed")
                .queue
                .config()
                .max_sectors;
            let info = crate::fs::btrfs::BtrfsFsInfo::new(&mut k, max_sectors);
            k.bdis.last_mut().expect("just pushed").fs_info = Some(Box::new(info));
        }
        if dev.filesystem.has_ioends() {
            k.bdis.last_mut().expect("just pushed").fs_info =
                Some(Box::<crate::fs::xfs::XfsMount>::default());
        }
        let n = k.bdis.len();
        if dev.filesystem != crate::fs::Filesystem::Raw {
            k.bdis[n - 1].sb = super_block::mount(&mut k, &dev.name);
        }
        k.bdi_props = crate::mm::page_writeback::BdiProportions::new(n);
        n - 1
    };
    if dev.kind == DeviceKind::Nfs {
        for i in 0..block::device::NFS_RPC_SLOTS {
            let w2 = w.clone();
            w.borrow_mut().sched.spawn(
                &format!("{}/rpc{i}", dev.name),
                crate::fs::nfs::rpc_slot(w2, id),
            );
        }
    } else {
        for i in 0..depth {
            let w2 = w.clone();
            let name = if depth == 1 {
                dev.name.clone()
            } else {
                format!("{}/{i}", dev.name)
            };
            w.borrow_mut()
                .sched
                .spawn(&name, backing_dev::device_task(w2, id));
        }
    }
    let w2 = w.clone();
    w.borrow_mut().sched.spawn(
        &format!("flush-{}", dev.name),
        fs_writeback::flusher(w2, id),
    );
    if dev.filesystem.has_journal() {
        let w2 = w.clone();
        w.borrow_mut().sched.spawn(
            &format!("kjournald-{}", dev.name),
            crate::fs::jbd::kjournald(w2, id),
        );
    }
    if jbd2 {
        let w2 = w.clone();
        w.borrow_mut().sched.spawn(
            &format!("jbd2-{}", dev.name),
            crate::fs::jbd2::kjournald2(w2, id),
        );
    }
    if dev.filesystem.has_submit_worker() {
        let w2 = w.clone();
        w.borrow_mut().sched.spawn(
            &format!("btrfs-submit-{}", dev.name),
            crate::fs::btrfs::submit_worker(w2, id),
        );
    }
    Ok(id)
}

fn spawn_workload(w: &World, wl: &crate::scenario::Workload) {
    // Its tasks start in its group, as a shell that wrote itself into cgroup.procs forks
    // them, and on its CPUs, as `taskset -c` starts them.
    let cgroup = wl.cgroup.map_or(0, |c| c as u16 + 1);
    let mut k = w.borrow_mut();
    k.sched.set_spawn_cgroup(Some(cgroup));
    let cpus = k.sched.new_cpuset(&wl.cpus);
    k.sched.set_spawn_cpus_allowed(Some(cpus));
    drop(k);
    spawn_workload_tasks(w, wl);
    let mut k = w.borrow_mut();
    k.sched.set_spawn_cgroup(None);
    k.sched.set_spawn_cpus_allowed(None);
}

fn spawn_workload_tasks(w: &World, wl: &crate::scenario::Workload) {
    let idx = workload::new_task(&mut w.borrow_mut(), &wl.name);
    let mm = idx;
    let start = wl.start;
    let w2 = w.clone();
    match wl.kind.clone() {
        WorkloadKind::MemEater {
            size,
            chunk,
            pause,
            then,
        } => {
            let t = w.borrow_mut().sched.spawn(&wl.name, async move {
                workload::delay_start(&w2, idx, start).await;
                workload::mem_eater::run(w2, idx, mm, size, chunk, pause, then).await;
            });
            w.borrow_mut().mms[mm].task = Some(t);
        }
        WorkloadKind::Dd(dd) => {
            let bdi = bdi_named(w, &dd.device);
            let t = w.borrow_mut().sched.spawn(&wl.name, async move {
                workload::delay_start(&w2, idx, start).await;
                if let Some(used) = dd.start_when_used {
                    workload::enter(&mut w2.borrow_mut(), idx, Phase::Waiting, 0);
                    workload::dd::wait_for_used_memory(&w2, used).await;
                }
                let now = w2.borrow().sched.now();
                workload::stats(&mut w2.borrow_mut(), idx).started_at = now;
                workload::dd::run(w2, idx, mm, bdi, dd).await;
            });
            w.borrow_mut().mms[mm].task = Some(t);
        }
        WorkloadKind::Cat {
            device,
            size,
            files,
        } => {
            let bdi = bdi_named(w, &device);
            let inos = workload::cat::create_files(w, &wl.name, bdi, size, files);
            let t = w.borrow_mut().sched.spawn(&wl.name, async move {
                workload::delay_start(&w2, idx, start).await;
                workload::cat::run(w2, idx, mm, inos).await;
            });
            w.borrow_mut().mms[mm].task = Some(t);
        }
        WorkloadKind::Mmap(p) => {
            let bdi = bdi_named(w, &p.device);
            let ino = workload::cat::create_file(w, &format!("{}-file", wl.name), bdi, p.size);
            let t = w.borrow_mut().sched.spawn(&wl.name, async move {
                workload::delay_start(&w2, idx, start).await;
                workload::mmap::run(w2, idx, mm, ino, p).await;
            });
            w.borrow_mut().mms[mm].task = Some(t);
        }
        WorkloadKind::Memcachetest(cfg) => {
            workload::memcachetest::spawn(w, idx, &wl.name, cfg, start);
        }
        WorkloadKind::Kbuild(p) => {
            let bdi = bdi_named(w, &p.device);
            let tree = workload::kbuild::create_tree(w, &wl.name, bdi, p.units, false);
            workload::kbuild::spawn_jobs(w, idx, &wl.name, &tree, &p, 0, start);
        }
        WorkloadKind::StressHighalloc(p) => {
            let bdi = bdi_named(w, &p.device);
            workload::stress_highalloc::spawn(w, idx, &wl.name, bdi, p, start);
        }
        WorkloadKind::SimpleWriteback(p) => {
            let bdi = bdi_named(w, &p.device);
            let t = w.borrow_mut().sched.spawn(&wl.name, async move {
                workload::delay_start(&w2, idx, start).await;
                workload::simple_writeback::run(w2, idx, bdi, p).await;
            });
            w.borrow_mut().mms[mm].task = Some(t);
        }
        WorkloadKind::Fsmark(p) => {
            let bdi = bdi_named(w, &p.device);
            let t = w.borrow_mut().sched.spawn(&wl.name, async move {
                workload::delay_start(&w2, idx, start).await;
                workload::fsmark::run(w2, idx, bdi, p).await;
            });
            w.borrow_mut().mms[mm].task = Some(t);
        }
        WorkloadKind::Micro(p) => {
            let bdi = bdi_named(w, &p.device);
            let t = w.borrow_mut().sched.spawn(&wl.name, async move {
                workload::delay_start(&w2, idx, start).await;
                workload::micro::run(w2, idx, bdi, p).await;
            });
            w.borrow_mut().mms[mm].task = Some(t);
        }
        WorkloadKind::Highalloc(p) => {
            w.borrow_mut().sched.spawn(&wl.name, async move {
                workload::delay_start(&w2, idx, start).await;
                workload::highalloc::run(w2, idx, p).await;
            });
        }
        WorkloadKind::Sync => {
            let t = w.borrow_mut().sched.spawn(&wl.name, async move {
                workload::delay_start(&w2, idx, start).await;
                crate::fs::fs_writeback::sys_sync(&w2).await;
                let mut k = w2.borrow_mut();
                let now = k.sched.now();
                workload::stats(&mut k, idx).io_done_at = Some(now);
                workload::finished(&mut k, idx);
            });
            w.borrow_mut().mms[mm].task = Some(t);
        }
        WorkloadKind::Daemons(p) => {
            let t = w.borrow_mut().sched.spawn(&wl.name, async move {
                workload::delay_start(&w2, idx, start).await;
                workload::daemons::run(w2, idx, mm, p).await;
            });
            w.borrow_mut().mms[mm].task = Some(t);
        }
        WorkloadKind::Parallelio(p) => {
            let bdi = w
                .borrow()
                .bdis
                .iter()
                .position(|b| b.name == p.device)
                .expect("the scenario checked that parallelio's device exists");
            let t = w.borrow_mut().sched.spawn(&wl.name, async move {
                workload::delay_start(&w2, idx, start).await;
                workload::parallelio::run(w2, idx, bdi, p).await;
            });
            w.borrow_mut().mms[mm].task = Some(t);
        }
    }
}

/// The backing device of a `[[device]]` (the scenario checked that it exists).
fn bdi_named(w: &World, name: &str) -> usize {
    w.borrow()
        .bdis
        .iter()
        .position(|b| b.name == name)
        .expect("the scenario checked that the workload's device exists")
}

/// Advance a booted machine to `duration`; stops early on an invariant violation.
pub fn advance(w: &World, duration: Nanos) -> Result<Nanos, SimError> {
    advance_with(w, duration, None)
}

/// [`advance`], telling `progress` the simulated time about every 10 simulated seconds.
fn advance_with(
    w: &World,
    duration: Nanos,
    mut progress: Option<Box<dyn FnMut(Nanos) + Send>>,
) -> Result<Nanos, SimError> {
    let mut ex = Executor::new(w.clone());
    let mut next_report = 0;
    let end = ex.run_until(duration, |k: &mut Kernel| {
        if let Some(p) = progress.as_mut() {
            let now = k.sched.now();
            if now >= next_report {
                p(now);
                next_report = now + 10 * SEC;
            }
        }
        k.stopping()
    });
    match &w.borrow().fatal {
        Some(msg) => Err(SimError::Invariant(msg.clone())),
        None => Ok(end),
    }
}

/// Advance to `duration`, then check every page-state invariant.
pub fn run_world(w: &World, duration: Nanos) -> Result<Nanos, SimError> {
    run_world_with(w, duration, None)
}

fn run_world_with(
    w: &World,
    duration: Nanos,
    progress: Option<Box<dyn FnMut(Nanos) + Send>>,
) -> Result<Nanos, SimError> {
    let end = advance_with(w, duration, progress)?;
    invariants::check(&w.borrow()).map_err(SimError::Invariant)?;
    Ok(end)
}

/// Boot, run and summarise.
pub fn run(
    scenario: &Scenario,
    kernel: &KernelConfig,
    seed: u64,
    opts: RunOptions,
) -> Result<RunResult, SimError> {
    run_with(scenario, kernel, seed, opts, RunOutputs::default()).map(|(r, _)| r)
}

/// Optional outputs of a run besides its [`RunResult`].
#[derive(Default)]
pub struct RunOutputs {
    /// Write tracepoint events here (`--trace FILE`).
    pub trace: Option<Box<dyn std::io::Write + Send>>,
    /// Sample the time series every this often (`--timeseries FILE`).
    pub sample_interval: Option<Nanos>,
    /// Write each time-series sample here as a CSV line when it is taken, instead of
    /// keeping the samples for the result (memory stays flat however many there are).
    pub series_out: Option<Box<dyn std::io::Write + Send>>,
    /// Keep the samples for the result even when they are also written to `series_out`
    /// (the HTML report draws them).
    pub keep_series: bool,
    /// Told the simulated time about every 10 simulated seconds (progress bars).
    pub progress: Option<Box<dyn FnMut(Nanos) + Send>>,
}

impl fmt::Debug for RunOutputs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunOutputs")
            .field("trace", &self.trace.is_some())
            .field("sample_interval", &self.sample_interval)
            .field("series_out", &self.series_out.is_some())
            .field("keep_series", &self.keep_series)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// [`run`] with tracing and time-series sampling.
pub fn run_with(
    scenario: &Scenario,
    kernel: &KernelConfig,
    seed: u64,
    opts: RunOptions,
    outputs: RunOutputs,
) -> Result<(RunResult, Option<TimeSeries>), SimError> {
    let w = boot(scenario, kernel, seed)?;
    w.borrow_mut().check_every_batch = opts.check_every_batch;
    w.borrow_mut().check_interval = opts.check_interval;
    w.borrow_mut().trace = outputs.trace.map(crate::mm::trace::Tracer::new);
    let series = outputs.sample_interval.map(|interval| {
        let mut sink = SeriesSink {
            series: TimeSeries {
                device_columns: w
                    .borrow()
                    .bdis
                    .iter()
                    .flat_map(|b| timeseries::device_columns(&b.name))
                    .collect(),
                cgroup_columns: w
                    .borrow()
                    .memcg
                    .groups
                    .iter()
                    .skip(1)
                    .flat_map(|g| timeseries::cgroup_columns(&g.name))
                    .collect(),
                zones: w
                    .borrow()
                    .zones
                    .iter()
                    .map(|z| timeseries::ZoneInfo {
                        name: z.name().to_string(),
                        managed_pages: z.managed_pages,
                        watermarks: [z.min_wmark(), z.low_wmark(), z.high_wmark()],
                    })
                    .collect(),
                rows: Vec::new(),
            },
            keep: outputs.keep_series || outputs.series_out.is_none(),
            out: outputs.series_out,
            error: None,
        };
        // The header goes out now: a run may end before the sampler first runs.
        let header = sink.series.header();
        sink.write(&header);
        let sink = Rc::new(RefCell::new(sink));
        let (w2, s2) = (w.clone(), sink.clone());
        // Spawned last: it only reads state, so the other tasks run exactly as without it.
        w.borrow_mut()
            .sched
            .spawn("sampler", sampler(w2, interval.max(1), s2));
        sink
    });
    let end = run_world_with(&w, scenario.run.duration, outputs.progress)?;
    if let Some(t) = w.borrow_mut().trace.as_mut() {
        if let Some(e) = t.error.take() {
            return Err(SimError::Trace(e.to_string()));
        }
        t.flush().map_err(|e| SimError::Trace(e.to_string()))?;
    }
    let series = match series {
        None => None,
        Some(sink) => {
            let mut sink = sink.borrow_mut();
            if let Some(out) = sink.out.as_mut() {
                let flushed = out.flush();
                if let Some(e) = sink.error.take().or(flushed.err()) {
                    return Err(SimError::TimeSeries(e.to_string()));
                }
            }
            sink.keep.then(|| std::mem::take(&mut sink.series))
        }
    };
    Ok((summarise(&w, scenario, kernel, seed, end), series))
}

/// Where the sampler puts its rows: kept in `series`, written to `out` as taken, or both.
struct SeriesSink {
    series: TimeSeries,
    /// Keep the rows in `series`.
    keep: bool,
    out: Option<Box<dyn std::io::Write + Send>>,
    /// The first write error; sampling stops writing after it and the run reports it.
    error: Option<std::io::Error>,
}

impl SeriesSink {
    /// Keep or write one sample.
    fn take(&mut self, row: Vec<f64>) {
        debug_assert_eq!(
            row.len(),
            timeseries::COLUMNS.len()
                + self.series.device_columns.len()
                + self.series.cgroup_columns.len()
        );
        if self.out.is_some() {
            self.write(&TimeSeries::line(&row));
        }
        if self.keep {
            self.series.rows.push(row);
        }
    }

    fn write(&mut self, text: &str) {
        if let (Some(out), None) = (self.out.as_mut(), &self.error) {
            if let Err(e) = out.write_all(text.as_bytes()) {
                self.error = Some(e);
            }
        }
    }
}

/// One row of [`timeseries::COLUMNS`] and the per-device columns from the machine's state.
fn sample(k: &Kernel) -> Vec<f64> {
    use crate::mm::vmstat::VmEvent as E;
    let per_zone = |e: E| -> u64 { (0..4).map(|z| k.events.get(e.zone(z))).sum() };
    let g = |s: ZoneStat| k.global_stat(s) as f64;
    let mut row = vec![
        k.sched.now() as f64 / SEC as f64,
        k.zones[0].free_pages() as f64,
        k.zones[1].free_pages() as f64,
        k.zones[2].free_pages() as f64,
        g(ZoneStat::nr_dirty),
        g(ZoneStat::nr_writeback),
        g(ZoneStat::nr_unstable),
        g(ZoneStat::nr_anon_pages),
        g(ZoneStat::nr_file_pages),
        g(ZoneStat::nr_slab_reclaimable),
        g(ZoneStat::nr_active_anon),
        g(ZoneStat::nr_inactive_anon),
        g(ZoneStat::nr_active_file),
        g(ZoneStat::nr_inactive_file),
        k.events.get(E::pswpin) as f64,
        k.events.get(E::pswpout) as f64,
        per_zone(E::pgscan_kswapd_dma) as f64,
        per_zone(E::pgscan_direct_dma) as f64,
        per_zone(E::pgsteal_kswapd_dma) as f64,
        per_zone(E::pgsteal_direct_dma) as f64,
        k.events.get(E::allocstall) as f64,
    ];
    let (background, dirty) = crate::mm::page_writeback::dirty_limits(k);
    row.extend([
        background as f64,
        dirty as f64,
        g(ZoneStat::nr_dirtied),
        g(ZoneStat::nr_written),
        f64::from(k.swap.inuse_pages),
    ]);
    let kbps = |pages: u64| (pages * PAGE_SIZE / 1024) as f64;
    for (i, b) in k.bdis.iter().enumerate() {
        let (write_bw, base_rate) = crate::mm::page_writeback::bdi_rates(k, i);
        let v = b.throttle_view;
        let nfs = crate::fs::nfs::mount_stats(k, i).unwrap_or_default();
        row.extend([
            kbps(write_bw),
            b.written as f64,
            b.dirtied as f64,
            b.reclaimable as f64,
            b.writeback as f64,
            v.bdi_thresh as f64,
            v.target as f64,
            kbps(base_rate),
            kbps(v.task_rate),
            nfs.pages_sent_to_commit as f64,
            nfs.pages_committed as f64,
        ]);
    }
    for (i, g) in k.memcg.groups.iter().enumerate().skip(1) {
        row.extend([
            (k.memcg.usage(i) * PAGE_SIZE) as f64,
            (g.stat.swap * PAGE_SIZE) as f64,
        ]);
    }
    row
}

/// The sampling task: a row at time 0 and every `interval` after.
async fn sampler(w: World, interval: Nanos, sink: Rc<RefCell<SeriesSink>>) {
    loop {
        let row = sample(&w.borrow());
        sink.borrow_mut().take(row);
        engine::sleep(&w, interval).await;
    }
}

/// Why a workload's report is short of its measured figures at the end of the run, if it
/// is: the phase it was in and how far it got.
fn state_note(kind: &WorkloadKind, st: &WorkloadStats, end: Nanos) -> Option<String> {
    let at_end = format!("at the end of the run ({:.2} s)", secs(end));
    let done = |what: &str| {
        let pct = st.progress as f64 * 100.0 / st.progress_total.max(1) as f64;
        format!(
            "{} of {} {what} ({pct:.0}%)",
            st.progress, st.progress_total
        )
    };
    let unit = match kind {
        WorkloadKind::Dd(_) => "pages written",
        WorkloadKind::Cat { .. } => "pages read",
        WorkloadKind::Mmap(_) => "pages touched",
        WorkloadKind::Parallelio(_) => "iterations done",
        WorkloadKind::SimpleWriteback(_) => "factors done",
        WorkloadKind::Fsmark(_) => "pages written",
        WorkloadKind::Micro(_) => "tests done",
        WorkloadKind::Highalloc(_) => "attempts made",
        WorkloadKind::Kbuild(_) => "units compiled",
        WorkloadKind::Daemons(_) => "pages of text run",
        _ => "pages touched",
    };
    let unfinished_io = matches!(
        kind,
        WorkloadKind::Dd(_) | WorkloadKind::Cat { .. } | WorkloadKind::Mmap(_) | WorkloadKind::Sync
    ) && st.io_done_at.is_none();
    match st.phase {
        Phase::NotStarted => Some(format!("had not started {at_end}; no metric of its work")),
        Phase::Waiting => Some(format!(
            "still waiting to start its IO {at_end}; io_seconds and mb_per_sec are not reported"
        )),
        Phase::Populating => Some(format!(
            "population not finished {at_end}: {}; the measured phase never began, so ops \
             and ops_per_sec are not reported",
            done("items set")
        )),
        Phase::Filling => Some(format!(
            "first pass not finished {at_end}: {}; fill_seconds is not reported",
            done("pages touched")
        )),
        Phase::Retouching => Some(format!(
            "re-touch pass {} in progress {at_end}: {}",
            st.passes + 1,
            done("pages touched")
        )),
        Phase::Running if matches!(kind, WorkloadKind::Sync) && unfinished_io => Some(format!(
            "sync(2) had not returned {at_end}; sync_seconds is not reported"
        )),
        Phase::Running if unfinished_io => Some(format!(
            "not finished {at_end}: {}; io_seconds and mb_per_sec are not reported",
            done(unit)
        )),
        Phase::Running if matches!(kind, WorkloadKind::Parallelio(_)) => Some(format!(
            "not finished {at_end}: {}; the rows cover the iterations done",
            done(unit)
        )),
        Phase::Killed => Some("killed by the OOM killer; its metrics stop at the kill".into()),
        _ => None,
    }
}

/// The [`RunResult`] of a finished run.
pub fn summarise(
    w: &World,
    scenario: &Scenario,
    kernel: &KernelConfig,
    seed: u64,
    end: Nanos,
) -> RunResult {
    let k = w.borrow();
    let mut workloads = Vec::new();
    let mut workload_states = Vec::new();
    for (i, wl) in scenario.workloads.iter().enumerate() {
        let st = workload::stats_of(&k, i);
        let mm = &k.mms[i];
        let mut m: Vec<(String, f64)> = Vec::new();
        // A metric of a phase the workload never completed is left out, never NaN.
        let mut opt = |name: &str, v: Option<f64>| {
            if let Some(v) = v {
                m.push((name.into(), v));
            }
        };
        let io_secs = st.io_done_at.map(|t| secs(t - st.started_at));
        // `/usr/bin/time` of a one-task workload: its CPU times, and its wall time once done.
        let time_v = |m: &mut Vec<(String, f64)>| {
            if let Some(t) = mm.task {
                let (u, s) = k.sched.task_times(t);
                m.push(("user_seconds".into(), secs(u)));
                m.push(("system_seconds".into(), secs(s)));
            }
            if let Some(t) = st.finished_at {
                m.push(("elapsed_seconds".into(), secs(t - st.started_at)));
            }
        };
        let rate = |bytes: f64| io_secs.map(|s| bytes / (1 << 20) as f64 / s);
        match wl.kind {
            WorkloadKind::Parallelio(_) => {
                m.extend(workload::parallelio::extract(&st.parallelio));
            }
            WorkloadKind::SimpleWriteback(_) => {
                m.extend(workload::simple_writeback::extract(&st.simple_writeback));
            }
            WorkloadKind::Fsmark(_) => {
                let elapsed = st.finished_at.map(|t| secs(t - st.started_at));
                m.extend(workload::fsmark::extract(&st.fsmark, elapsed));
            }
            WorkloadKind::Micro(_) => m.extend(workload::micro::extract(&st.micro)),
            WorkloadKind::Sync => opt("sync_seconds", io_secs),
            WorkloadKind::Daemons(_) => opt("runs", Some(st.passes as f64)),
            WorkloadKind::Kbuild(_) => {
                if let Some(kb) = &st.kbuild {
                    let n = kb.builds.len().max(1) as f64;
                    let mean = |f: fn(&(Nanos, Nanos, Nanos)) -> Nanos| {
                        kb.builds.iter().map(|b| secs(f(b))).sum::<f64>() / n
                    };
                    opt("builds", Some(kb.builds.len() as f64));
                    opt("elapsed_seconds", Some(mean(|b| b.0)));
                    opt("user_seconds", Some(mean(|b| b.1)));
                    opt("system_seconds", Some(mean(|b| b.2)));
                }
            }
            WorkloadKind::Highalloc(_) => {
                if let Some(pass) = &st.highalloc {
                    m.extend(pass.metrics(""));
                }
            }
            WorkloadKind::StressHighalloc(_) => {
                if let Some(sh) = &st.stress_highalloc {
                    opt("trees", Some(sh.trees as f64));
                    opt(
                        "hugetlb_pages_after_dd",
                        sh.hugetlb_after_dd.map(|n| n as f64),
                    );
                    for (label, pass) in &sh.passes {
                        m.extend(pass.metrics(&format!("{label}_")));
                    }
                }
            }
            WorkloadKind::Memcachetest(_) => {
                let measured = match st.phase {
                    Phase::NotStarted | Phase::Populating => false,
                    Phase::Killed => st.ops > 0,
                    _ => true,
                };
                let ran = st
                    .finished_at
                    .unwrap_or(end)
                    .saturating_sub(st.started_at)
                    .max(1);
                opt("ops", measured.then_some(st.ops as f64));
                opt(
                    "ops_per_sec",
                    measured.then(|| (st.ops as f64 / secs(ran) * 100.0).round() / 100.0),
                );
            }
            WorkloadKind::Dd(ref dd) => {
                opt("io_seconds", io_secs);
                opt("mb_per_sec", rate(dd.size as f64));
                opt("pages_written", Some(st.pages_touched as f64));
                time_v(&mut m);
            }
            WorkloadKind::Cat { size, .. } => {
                opt("io_seconds", io_secs);
                opt("mb_per_sec", rate(size as f64));
                opt("pages_read", Some(st.pages_touched as f64));
            }
            WorkloadKind::Mmap(ref p) => {
                opt("io_seconds", io_secs);
                opt("mb_per_sec", rate(p.size as f64 * st.passes as f64));
                opt("pages_touched", Some(st.pages_touched as f64));
                opt("passes", Some(st.passes as f64));
            }
            WorkloadKind::MemEater { ref then, .. } => {
                opt("pages_touched", Some(st.pages_touched as f64));
                opt(
                    "fill_seconds",
                    st.touched_at.map(|t| secs(t - st.started_at)),
                );
                let retouches = matches!(then, crate::scenario::MemEaterThen::Retouch { .. });
                opt("retouch_passes", retouches.then_some(st.passes as f64));
                time_v(&mut m);
            }
        }
        m.push(("minor_faults".into(), mm.min_flt as f64));
        m.push(("major_faults".into(), mm.maj_flt as f64));
        m.push(("oom_killed".into(), st.killed as u8 as f64));
        workloads.push((wl.name.clone(), m));
        workload_states.push(WorkloadState {
            workload: wl.name.clone(),
            state: st.phase.name().to_string(),
            note: state_note(&wl.kind, st, end),
        });
    }
    let threads = k
        .sched
        .cpu_times()
        .into_iter()
        .map(|(name, u, s)| ThreadTimes {
            name,
            user_seconds: secs(u),
            system_seconds: secs(s),
        })
        .collect();
    RunResult {
        buddyinfo: crate::mm::vmstat::buddyinfo(&k.zones),
        pagetypeinfo: crate::mm::vmstat::pagetypeinfo(&k.zones),
        warnings: k
            .warnings
            .iter()
            .map(|(s, n)| (s.to_string(), *n))
            .collect(),
        dirty_throttle: k.throttle.clone(),
        bdi_writeback: k
            .bdis
            .iter()
            .map(|b| (b.name.clone(), b.written, b.written_by_dirtiers))
            .collect(),
        scenario: scenario.name.clone(),
        kernel: kernel.label(),
        switches: kernel.switches.list(),
        seed,
        simulated_seconds: end as f64 / SEC as f64,
        vmstat: k.proc_vmstat(),
        workloads,
        workload_states,
        threads,
        oom_kills: k.oom_kills.clone(),
        cgroups: crate::report::CgroupReport::of(&k.memcg),
        // NFS mounts have no /proc/diskstats entry.
        devices: k
            .bdis
            .iter()
            .filter(|b| !b.queueless)
            .map(|b| crate::report::DeviceReport {
                name: b.name.clone(),
                iostat: b.iostat.samples().iter().map(|(_, s)| *s).collect(),
                iostat_times: b.iostat.samples().iter().map(|(t, _)| secs(*t)).collect(),
                diskstats: b.queue.stats_at(end),
                bdi_written: b.written,
                written_by_dirtiers: b.written_by_dirtiers,
            })
            .collect(),
        nfs: (0..k.bdis.len())
            .filter_map(|i| {
                crate::fs::nfs::mount_stats(&k, i).map(|stats| crate::report::NfsReport {
                    mount: k.bdis[i].name.clone(),
                    stats,
                })
            })
            .collect(),
    }
}

// ---------------------------------------------------------------------------------------
// Test support (unit tests only; not part of the simulator).

/// Run `f` as a task of `w` until `end`; fails the test if the task did not finish. An
/// executor runs a world once, so call this once per world.
#[cfg(test)]
pub(crate) fn run_task<F: std::future::Future<Output = ()> + 'static>(w: &World, end: Nanos, f: F) {
    let done = Rc::new(std::cell::Cell::new(false));
    let d = done.clone();
    w.borrow_mut().sched.spawn("test", async move {
        f.await;
        d.set(true);
    });
    Executor::new(w.clone()).run_until(end, |_| false);
    assert!(done.get(), "the test task finished");
    assert_eq!(w.borrow().fatal, None);
}

/// A scenario with no workloads for unit tests: `ram_mib` MiB of RAM, `swap_mib` MiB of
/// swap on a 5 ms, 100 MiB/s device (0 = no swap), 500 cached system files (about 150
/// slab pages), one simulated second.
#[cfg(test)]
pub(crate) fn scenario_for_test(ram_mib: u64, swap_mib: u64) -> Scenario {
    use crate::engine::MSEC;
    use crate::mm::swapfile::SwapConfig;
    use crate::mm::VmSysctls;
    use crate::scenario::{KernelSelection, Machine, RunParams, SlabParams};
    const MIB: u64 = 1 << 20;
    Scenario {
        name: "unit-test".into(),
        machine: Machine {
            reclaim_costs: Default::default(),
            pci_hole: 0,
            ram: ram_mib * MIB,
            cpus: 2,
            devices: Vec::new(),
            swap: (swap_mib > 0).then(|| SwapConfig {
                size: swap_mib * MIB,
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
            duration: SEC,
            seed: 1,
            end_when_done: false,
        },
        kernel: KernelSelection::default(),
        slab: SlabParams {
            files: 500,
            inode_size: 1024,
            ..Default::default()
        },
        workloads: Vec::new(),
        cgroups: Vec::new(),
    }
}

/// Boot [`scenario_for_test`] under the kernel of `preset`. Only kswapd (and the swap
/// device) run until a test spawns its own tasks.
#[cfg(test)]
pub(crate) fn boot_for_test(ram_mib: u64, swap_mib: u64, preset: &str) -> World {
    let kernel = crate::presets::resolve(preset, &[]).expect("a known preset");
    boot(&scenario_for_test(ram_mib, swap_mib), &kernel, 1).expect("the test machine boots")
}

/// Add a 2 TB 7200 rpm disk `name` holding `filesystem` (named as a scenario names it:
/// "ext4", "ext3"...) to a test machine. Returns its device id.
#[cfg(test)]
pub(crate) fn add_test_disk(w: &World, name: &str, filesystem: &str) -> usize {
    let dev = BlockDevice {
        filesystem: crate::fs::Filesystem::from_name(filesystem).expect("a known filesystem"),
        ..BlockDevice::ext4_hdd(name)
    };
    add_block_device(w, &dev).expect("the disk is built")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// The boot's page cache adds a page-cache slot per page and a file's state (cached and
    /// workload) per 32 KiB file to the host-memory estimate, plus the growth allowance.
    #[test]
    fn the_host_memory_estimate_counts_the_page_cache_boot_left() {
        let mut s = scenario_for_test(4096, 0);
        s.machine.devices = vec![BlockDevice::ext4_hdd("sda")];
        let bare = host_memory_estimate(&s);
        s.slab.page_cache = 400 << 20;
        let grown = host_memory_estimate(&s) - bare;
        let pages = (400 << 20) / PAGE_SIZE;
        let added = pages * 4 + pages / super_block::BOOT_FILE_PAGES * (64 + 256);
        // The allowance is a quarter of the whole, rounded down: within one byte.
        assert!(
            grown.abs_diff(added + added / 4) <= 1,
            "grew by {grown}, expected {added} plus a quarter"
        );
    }

    /// A writer whose bytes the test can read afterwards.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn streamed_samples_are_written_as_taken_and_kept_only_when_asked() {
        let mut s = scenario_for_test(64, 0);
        s.run.duration = 10 * SEC;
        let k = crate::presets::resolve("3.9", &[]).unwrap();
        let kept = RunOutputs {
            sample_interval: Some(SEC),
            ..Default::default()
        };
        let (_, series) = run_with(&s, &k, 1, RunOptions::default(), kept).unwrap();
        let series = series.expect("samples are kept without a writer");
        assert_eq!(
            series.rows.len(),
            11,
            "a sample at 0 s and every second to 10 s"
        );
        let out = Captured::default();
        let streamed = RunOutputs {
            sample_interval: Some(SEC),
            series_out: Some(Box::new(out.clone())),
            ..Default::default()
        };
        let (_, none) = run_with(&s, &k, 1, RunOptions::default(), streamed).unwrap();
        assert!(none.is_none(), "streamed samples are not kept in memory");
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        assert_eq!(text, series.to_csv());
        // Both (--timeseries with --html): written as taken, and kept.
        let out = Captured::default();
        let both = RunOutputs {
            sample_interval: Some(SEC),
            series_out: Some(Box::new(out.clone())),
            keep_series: true,
            ..Default::default()
        };
        let (_, kept) = run_with(&s, &k, 1, RunOptions::default(), both).unwrap();
        assert_eq!(kept.as_ref(), Some(&series));
        assert_eq!(
            String::from_utf8(out.0.lock().unwrap().clone()).unwrap(),
            text
        );
    }
}
