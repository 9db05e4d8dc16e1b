//! Scenario files: TOML in, a validated [`Scenario`] out.
//!
//! Loading happens in two stages. `parse` mirrors the TOML as written and reports every
//! problem with the file, line and key it came from; [`Scenario`] is the resolved form the
//! simulator runs: units converted to bytes and nanoseconds, defaults applied, limits
//! checked. Model code only ever sees the resolved form, so it never fails on input.
//!
//! Defaults (when a key is absent):
//! - `[machine]`: `cpus = 4`; no swap device unless `[swap]` is given.
//! - `[vm]`: the kernel defaults of the 3.x era: `swappiness = 60`, `page-cluster = 3`,
//!   `vfs_cache_pressure = 100`, `laptop_mode = 0`, `lowmem_reserve_ratio = [256, 256, 32]`,
//!   `min_free_kbytes` computed by the kernel's formula.
//! - `[run]`: `duration = "60s"`, `seed = 1`.
//! - `[slab]`: `files = 50000` system files whose dentry and inode are cached at boot,
//!   `inode_size = 1024` bytes per inode, no page cache of them (`page_cache = 0`).

mod parse;
mod units;

pub use parse::{load, load_str, load_sweep, load_sweep_str, MAX_POINTS};
pub use units::{parse_duration, parse_size};

use crate::block::{self, DeviceError};
use crate::fs::Filesystem;
use crate::mm::swapfile::SwapConfig;
use crate::mm::VmSysctls;
use std::fmt;

/// Simulated nanoseconds.
pub type Nanos = u64;

/// A validated scenario, ready to run.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// Name used in reports: the file stem of the scenario file.
    pub name: String,
    /// The machine: RAM, CPUs and swap.
    pub machine: Machine,
    /// Sysctls, under their `/proc/sys/vm` names.
    pub vm: VmSysctls,
    /// `[transparent_hugepage] enabled`.
    pub transparent_hugepage: crate::mm::huge_memory::ThpEnabled,
    /// Run length and seed.
    pub run: RunParams,
    /// Kernel preset and switch overrides named in the file (the command line may add more).
    pub kernel: KernelSelection,
    /// The reclaimable slab cache (dentries and inodes).
    pub slab: SlabParams,
    /// The workloads the scenario composes; they run at the same time.
    pub workloads: Vec<Workload>,
    /// Memory control groups (`[[cgroup]]`), parents before children. None: the memory
    /// controller is off, as when booted with `cgroup_disable=memory`.
    pub cgroups: Vec<CgroupSpec>,
}

/// One `[[cgroup]]`: a memory cgroup (v1) below the root, with its knobs under their cgroup
/// file names.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CgroupSpec {
    /// The path below the root, e.g. `A` or `A/B`.
    pub name: String,
    /// The parent's index in [`Scenario::cgroups`]; `None` for a child of the root.
    pub parent: Option<usize>,
    /// `memory.limit_in_bytes` (`None`: unlimited), rounded up to whole pages.
    pub limit_in_bytes: Option<u64>,
    /// `memory.soft_limit_in_bytes` (`None`: unlimited), rounded up to whole pages.
    pub soft_limit_in_bytes: Option<u64>,
    /// `memory.use_hierarchy`: as given, else the parent's (the root's is 0).
    pub use_hierarchy: bool,
    /// `memory.swappiness` (`None`: the parent's).
    pub swappiness: Option<u32>,
}

/// `[machine]` and `[swap]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Machine {
    /// Bytes of RAM; a whole number of 4 KiB pages.
    pub ram: u64,
    /// Number of CPUs; bounds how many simulated threads run at once.
    pub cpus: u32,
    /// RAM the board hides under the MMIO hole below 4 GiB (`pci_hole`, bytes): DMA32
    /// ends at 4 GiB minus this and the rest of `ram` is Normal, as when the firmware
    /// remaps it above 4 GiB. 0 (the default) lets DMA32 run to 4 GiB.
    pub pci_hole: u64,
    /// The swap device, if any.
    pub swap: Option<SwapConfig>,
    /// Block devices with a filesystem (`[[device]]`), in file order.
    pub devices: Vec<BlockDevice>,
    /// The CPU's per-page costs of reclaim: the calibration module's estimates, changed
    /// only by sensitivity analyses (no scenario key sets them).
    pub reclaim_costs: crate::calibration::ReclaimCosts,
}

/// One `[[device]]`: a block device, its queue and the filesystem on it.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockDevice {
    /// Name, e.g. "sda"; iostat rows and dd's `device` key use it.
    pub name: String,
    /// The device model.
    pub kind: DeviceKind,
    /// Capacity in bytes.
    pub size: u64,
    /// The filesystem on it.
    pub filesystem: Filesystem,
    /// `queue/nr_requests`.
    pub nr_requests: u32,
    /// `queue/scheduler`.
    pub scheduler: Scheduler,
    /// ext4's `data=` mount option.
    pub data: DataMode,
    /// Overrides of the device model's parameters.
    pub params: DeviceParams,
}

/// ext4's `data=` mount option (`data = "ordered"` in a `[[device]]`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DataMode {
    /// `data=ordered`, the default: the journal (jbd2) writes a transaction's data before
    /// its metadata, walking each file it filed at every commit (`fs::jbd2`).
    #[default]
    Ordered,
    /// `data=writeback`: no ordering of data, no walk.
    Writeback,
}

impl BlockDevice {
    /// A 2 TB 7200 rpm disk with ext4 and the default queue (128 requests, cfq).
    pub fn ext4_hdd(name: &str) -> BlockDevice {
        BlockDevice {
            name: name.to_string(),
            kind: DeviceKind::Hdd,
            size: 2 << 40,
            filesystem: Filesystem::Ext4,
            nr_requests: 128,
            scheduler: Scheduler::Cfq,
            data: DataMode::Ordered,
            params: DeviceParams::default(),
        }
    }

    /// An NFS mount of a 2 TB export over gigabit Ethernet, with the defaults of
    /// `calibration.rs`.
    pub fn nfs_mount(name: &str) -> BlockDevice {
        BlockDevice {
            kind: DeviceKind::Nfs,
            filesystem: Filesystem::Nfs,
            scheduler: Scheduler::default_for(DeviceKind::Nfs),
            ..BlockDevice::ext4_hdd(name)
        }
    }

    /// The device's timing model: its kind's defaults with `params` applied, checked by the
    /// model's own constructor (an impossible value is a [`DeviceError`]).
    pub fn model(&self) -> Result<Box<dyn block::Device>, DeviceError> {
        use crate::block::device::*;
        let p = &self.params;
        // A disk's parameters: `seek` scales the whole seek curve, `bandwidth` the zoned
        // transfer rates.
        let hdd = |name: &str, sectors: u64| -> Result<Box<dyn block::Device>, DeviceError> {
            let mut h = HddParams::desktop_7200();
            h.sectors = sectors;
            if let Some(rpm) = p.rpm {
                h.rpm = rpm;
            }
            if let Some(seek) = p.seek {
                let scale = |t: Nanos| scale_u64(t, seek, HDD_7200_AVG_SEEK);
                h.track_to_track = scale(h.track_to_track);
                h.full_stroke = scale(h.full_stroke);
                h.avg_seek = seek;
            }
            if let Some(bw) = p.bandwidth {
                h.transfer_rate_inner = scale_u64(h.transfer_rate_inner, bw, h.transfer_rate_outer);
                h.transfer_rate_outer = bw;
            }
            Ok(Box::new(block::Hdd::new(name, h)?))
        };
        let read_write = |read: u64, write: u64| {
            (
                p.read_bandwidth.or(p.bandwidth).unwrap_or(read),
                p.bandwidth.unwrap_or(write),
            )
        };
        let name = self.name.as_str();
        Ok(match self.kind {
            DeviceKind::Hdd => hdd(name, self.size / block::SECTOR_SIZE)?,
            DeviceKind::Ssd => {
                let (r, w) = read_write(SSD_READ_BW, SSD_WRITE_BW);
                Box::new(block::Ssd::new(name, SSD_OVERHEAD, r, w)?)
            }
            DeviceKind::Usb => {
                let (r, w) = read_write(USB_READ_BW, USB_WRITE_BW);
                Box::new(block::UsbStick::new(
                    name,
                    r,
                    w,
                    USB_COPY_BW,
                    USB_OVERHEAD,
                    USB_ERASE_BLOCK,
                    USB_OPEN_UNITS,
                )?)
            }
            DeviceKind::Raid0 { members } => {
                let members = (0..members)
                    .map(|i| hdd(&format!("{name}/{i}"), HDD_7200_SECTORS))
                    .collect::<Result<Vec<_>, _>>()?;
                Box::new(block::Raid0::new(name, members, RAID0_CHUNK_SECTORS)?)
            }
            DeviceKind::Nfs => Box::new(block::Nfs::new(
                name,
                p.bandwidth.unwrap_or(NFS_NET_BW),
                p.latency.unwrap_or(NFS_RTT),
                p.server_bandwidth.unwrap_or(NFS_SERVER_DISK_BW),
                NFS_COMMIT_COST,
                p.wsize
                    .map_or(NFS_WSIZE_SECTORS, |b| (b / block::SECTOR_SIZE) as u32),
            )?),
        })
    }
}

/// `v * num / den` without overflow, saturating.
fn scale_u64(v: u64, num: u64, den: u64) -> u64 {
    (u128::from(v) * u128::from(num) / u128::from(den.max(1))).min(u128::from(u64::MAX)) as u64
}

/// Overrides of a device model's parameters (the optional `[[device]]` keys); `None` keeps
/// the kind's default (`block::device`, `calibration.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceParams {
    /// `bandwidth`, bytes per second. hdd and raid0 members: the outer-track rate (the
    /// inner-track rate keeps its default ratio to it); ssd and usb: the write rate, and the
    /// read rate unless `read_bandwidth` is given; nfs: the network's payload rate.
    pub bandwidth: Option<u64>,
    /// `read_bandwidth` (ssd, usb): the sequential read rate.
    pub read_bandwidth: Option<u64>,
    /// `rpm` (hdd, raid0 members).
    pub rpm: Option<u32>,
    /// `seek` (hdd, raid0 members): the average seek; the track-to-track and full-stroke
    /// times scale with it.
    pub seek: Option<Nanos>,
    /// `latency` (nfs): the network round trip.
    pub latency: Option<Nanos>,
    /// `server_bandwidth` (nfs): the rate at which the server's disk takes the data.
    pub server_bandwidth: Option<u64>,
    /// `wsize` (nfs): bytes per WRITE and READ RPC.
    pub wsize: Option<u64>,
}

/// Device models (`block::device`), with their 2012-2013 defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceKind {
    /// 7200 rpm SATA disk.
    Hdd,
    /// SATA SSD.
    Ssd,
    /// USB 2.0 flash stick.
    Usb,
    /// md RAID0 of `members` 7200 rpm disks.
    Raid0 { members: u32 },
    /// An NFS mount: a server reached over gigabit Ethernet (`block::Nfs`).
    Nfs,
}

/// Elevators, by their sysfs names (`queue/scheduler`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheduler {
    /// deadline.
    Deadline,
    /// noop.
    Noop,
    /// cfq (`block::cfq_iosched`).
    Cfq,
}

impl Scheduler {
    /// The elevator a device of `kind` gets when the scenario names none. Rotating disks
    /// (hdd, raid0) get cfq, the `CONFIG_DEFAULT_IOSCHED` of the era's distribution
    /// kernels; ssd and usb keep deadline, as before CFQ existed here (a 3.x kernel would
    /// give them cfq too unless a udev rule or the driver chose otherwise); an NFS mount
    /// has no request queue (its internal queue is noop).
    pub fn default_for(kind: DeviceKind) -> Scheduler {
        match kind {
            DeviceKind::Hdd | DeviceKind::Raid0 { .. } => Scheduler::Cfq,
            _ => Scheduler::Deadline,
        }
    }
}

/// `[run]`.
#[derive(Clone, Debug, PartialEq)]
pub struct RunParams {
    /// Simulated run length.
    pub duration: Nanos,
    /// Seed of the run's single RNG (the command line's `--seed` overrides it).
    pub seed: u64,
    /// `end = "workloads"`: end the run as soon as every workload not in the background
    /// has finished (`duration` stays the upper bound). The default, `end = "duration"`, always runs to `duration`.
    pub end_when_done: bool,
}

/// `[kernel]`: `preset = "3.9"` and a `[kernel.switches]` table of `name = true|false`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelSelection {
    /// Preset name, if the file names one.
    pub preset: Option<String>,
    /// Switch overrides, in file order. Names are checked against the registry at run time.
    pub switches: Vec<(String, bool)>,
}

/// `[slab]`: the system's dentry and inode cache at boot.
#[derive(Clone, Debug, PartialEq)]
pub struct SlabParams {
    /// The system's files whose dentry and inode are cached, unused, at boot, on the root
    /// filesystem's superblock (two objects each).
    pub files: u64,
    /// Bytes per inode object (every filesystem's; dentries are 192 bytes).
    pub inode_size: u64,
    /// The page cache of those files that boot left, bytes (whole pages): clean pages of
    /// files on the first `[[device]]` with a filesystem, allocated before the run as boot
    /// allocates (the highest zone first).
    pub page_cache: u64,
    /// Of `page_cache`, the bytes on the active file list (pages used again since boot).
    pub page_cache_active: u64,
}

impl Default for SlabParams {
    /// 50,000 files, 100,000 objects (mmsim's earlier fixed pool held as many), and inodes
    /// of 1 KiB: an estimate of `ext4_inode_info`, the VFS inode embedded, on a 3.x x86-64
    /// build.
    fn default() -> Self {
        SlabParams {
            files: 50_000,
            inode_size: 1024,
            page_cache: 0,
            page_cache_active: 0,
        }
    }
}

/// One `[[workload]]` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    /// Unique name; keys the workload's metrics in reports. Defaults to the type name,
    /// with `-2`, `-3`... appended when several share a type.
    pub name: String,
    /// When it starts.
    pub start: Nanos,
    /// What it does.
    pub kind: WorkloadKind,
    /// The memory cgroup its tasks run in (`cgroup = "A"`): an index in
    /// [`Scenario::cgroups`], `None` for the root.
    pub cgroup: Option<usize>,
    /// The CPUs its tasks may run on (`cpus = "0-7"`, as `taskset -c` would pin them),
    /// ascending; empty for every CPU.
    pub cpus: Vec<u32>,
    /// Started in the background (`background = true`): `end = "workloads"` does not wait
    /// for it, as a script that starts it with `&` and waits only for the others.
    pub background: bool,
}

/// The workload types.
#[derive(Clone, Debug, PartialEq)]
pub enum WorkloadKind {
    /// `type = "mem_eater"`: maps and touches `size` bytes of anonymous memory in `chunk`-sized
    /// steps with `pause` after each step, then holds it (`then = "hold"`) or keeps re-touching
    /// it every `retouch_interval` (`then = "retouch"`).
    MemEater {
        size: u64,
        chunk: u64,
        pause: Nanos,
        then: MemEaterThen,
    },
    /// `type = "memcachetest"`: a memcached server holding an anonymous item pool of `pool`
    /// bytes (items of `value_size` bytes) and `threads` client threads doing `set_percent`%
    /// sets and the rest gets on uniformly random keys, after populating every item once
    /// (`populate`, memcachetest's default). With a `duration` (memcachetest's `-T`) the
    /// clients stop after it and the server exits, freeing its memory.
    Memcachetest(MemcachetestParams),
    /// `type = "dd"`: buffered writes of a new file (see [`DdParams`]).
    Dd(DdParams),
    /// `type = "cat"`: read `files` files of `size` bytes between them that are on `device`
    /// at boot, one after another, each sequentially in 128 KiB reads, through the page
    /// cache with readahead.
    Cat {
        device: String,
        size: u64,
        files: u64,
    },
    /// `type = "mmap"`: access a file through a shared mapping (see [`MmapParams`]).
    Mmap(MmapParams),
    /// `type = "parallelio"`: MMTests' parallelio driver (see [`ParallelioParams`]).
    Parallelio(ParallelioParams),
    /// `type = "highalloc"`: one pass of MMTests' stress-highalloc allocation loop (see
    /// [`HighallocParams`]).
    Highalloc(HighallocParams),
    /// `type = "kbuild"`: `make -jN` of a kernel tree on a device (see [`KbuildParams`]).
    Kbuild(KbuildParams),
    /// `type = "stress-highalloc"`: MMTests' whole stress-highalloc driver, its background
    /// builds, its passes and its rest (see [`StressHighallocParams`]).
    StressHighalloc(StressHighallocParams),
    /// `type = "simple-writeback"`: MMTests' simple-writeback, NUMCPUS x factor dd writers
    /// sharing `size` (see [`SimpleWritebackParams`]).
    SimpleWriteback(SimpleWritebackParams),
    /// `type = "fsmark"`: fs_mark creating files of `file_size` with no sync, `iterations`
    /// times, the files kept (see [`FsmarkParams`]).
    Fsmark(FsmarkParams),
    /// `type = "micro"`: MMTests' usemem micro tests of mapped writes (see [`MicroParams`]).
    Micro(MicroParams),
    /// `type = "sync"`: one `sync(2)` at `start`: every dirty page of every file written
    /// and waited for (NFS: committed).
    Sync,
    /// `type = "daemons"`: the system's long-running programs, one process that maps
    /// `text` bytes of the boot's page cache (its active part first) as executable and runs
    /// all of it every `interval`; it never finishes (see [`DaemonsParams`]).
    Daemons(DaemonsParams),
}

/// `type = "daemons"`: MMTests' monitors, sshd and the shells as one process
/// (`workload::daemons`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DaemonsParams {
    /// Bytes of program text, whole pages, at most `[slab] page_cache_active`.
    pub text: u64,
    /// How often the programs run: MMTests' MONITOR_UPDATE_FREQUENCY.
    pub interval: Nanos,
}

impl DaemonsParams {
    /// MMTests' monitors sample every 10 s (`mmtests.md` §4).
    pub const INTERVAL: Nanos = 10_000_000_000;
}

/// `type = "simple-writeback"`: MMTests' simple-writeback (`mmtests.md` §6.4). For each CPU
/// factor from `min_factor` to `max_factor`, doubling, `iterations` times, NUMCPUS x factor
/// `dd if=/dev/zero bs=1M` writers each write `size / jobs` to a file of their own on
/// `device` at once; when all are done the files are removed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimpleWritebackParams {
    /// The `[[device]]` the files are on.
    pub device: String,
    /// Bytes written by all writers together (SIMPLE_WRITEBACK_FILESIZE).
    pub size: u64,
    /// The first CPU factor (SIMPLE_WRITEBACK_MIN_CPUFACTOR).
    pub min_factor: u32,
    /// The last CPU factor (SIMPLE_WRITEBACK_MAX_CPUFACTOR); the factor doubles up to it.
    pub max_factor: u32,
    /// The writers' runs of each factor (SIMPLE_WRITEBACK_ITERATIONS, MMTests from
    /// 2011-07-26).
    pub iterations: u32,
}

impl SimpleWritebackParams {
    /// MMTests' defaults (`mmtests.md` §6.4).
    pub const MIN_FACTOR: u32 = 1;
    pub const MAX_FACTOR: u32 = 64;
    /// The shellpack's default (`ITERATIONS=1`).
    pub const ITERATIONS: u32 = 1;

    /// The CPU factors run, in order: `min_factor`, doubling, up to `max_factor`.
    pub fn factors(&self) -> Vec<u32> {
        std::iter::successors(Some(self.min_factor), |f| f.checked_mul(2))
            .take_while(|&f| f <= self.max_factor)
            .collect()
    }
}

/// `type = "fsmark"`: `fs_mark -D dirs -N files_per_dir -n files/threads -L iterations -S0
/// -s file_size -w write_size` with `threads` threads, each in its own `-d` directory, on
/// `device` (seed 002's command line; `docs/seed-002.md`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FsmarkParams {
    /// The `[[device]]` the files are on.
    pub device: String,
    /// Threads (`-d` given once per thread); `None`: NUMCPUS x `threads_per_cpu`.
    pub threads: Option<u32>,
    /// MMTests' FSMARK_THREADS_PER_CPU.
    pub threads_per_cpu: u32,
    /// Files per iteration, all threads together (`-n` is this over the threads).
    pub files: u64,
    /// `-s`: bytes per file, whole pages.
    pub file_size: u64,
    /// `-w`: bytes per write(2).
    pub write_size: u64,
    /// `-L`: iterations.
    pub iterations: u32,
    /// `-D`: subdirectories.
    pub dirs: u64,
    /// `-N`: files per subdirectory before the next.
    pub files_per_dir: u64,
}

impl FsmarkParams {
    /// The letter's `-s 10485760`.
    pub const FILE_SIZE: u64 = 10 << 20;
    /// fs_mark's default `-w` (16 KiB).
    pub const WRITE_SIZE: u64 = 16 << 10;
    /// The letter's `-L 25`, `-D 100`, `-N 150`.
    pub const ITERATIONS: u32 = 25;
    pub const DIRS: u64 = 100;
    pub const FILES_PER_DIR: u64 = 150;

    /// The threads on a machine of `cpus` CPUs.
    pub fn threads_on(&self, cpus: u32) -> u32 {
        self.threads
            .unwrap_or_else(|| cpus.saturating_mul(self.threads_per_cpu))
            .max(1)
    }
}

/// One of MMTests' 2011 micro tests (`MICRO_TESTLIST`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MicroTest {
    /// `vmscan-file-mmap-write`: NUMCPUS `usemem -f sparse-N` writers share
    /// `file_mmap_size`, one pass each.
    FileMmapWrite,
    /// `vmscan-mixed-mmap-write`: `mixed_size` split `mixed_anon_percent` anonymous, the
    /// rest sparse files; NUMCPUS file writers of 2 x `mixed_iter` passes and NUMCPUS
    /// anonymous writers of `mixed_iter` passes, all at once.
    MixedMmapWrite,
}

impl MicroTest {
    /// MMTests' name.
    pub fn name(self) -> &'static str {
        match self {
            MicroTest::FileMmapWrite => "vmscan-file-mmap-write",
            MicroTest::MixedMmapWrite => "vmscan-mixed-mmap-write",
        }
    }
}

/// `type = "micro"`: MMTests' 2011 usemem micro tests of mapped writes, one after another
/// (`docs/seed-002.md`: seed 002's "mmap-strm"). Every writer maps its region once and
/// writes a word in each page, `-r` passes over it, then unmaps and exits; the sparse files
/// go when the test ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MicroParams {
    /// The `[[device]]` of the sparse files.
    pub device: String,
    /// The tests, in order.
    pub tests: Vec<MicroTest>,
    /// Writers of each kind; `None`: NUMCPUS.
    pub threads: Option<u32>,
    /// MICRO_VMSCAN_FILE_MMAP_OPS_SIZE (10 x MemTotal).
    pub file_mmap_size: u64,
    /// MICRO_VMSCAN_MIXED_MMAPREAD_SIZE (3 x MemTotal).
    pub mixed_size: u64,
    /// MICRO_VMSCAN_MIXED_ANON_PERCENTAGE (30).
    pub mixed_anon_percent: u32,
    /// MICRO_VMSCAN_MIXED_MMAPREAD_ITER (5).
    pub mixed_iter: u32,
}

/// `type = "highalloc"`: one pass of stress-highalloc's kernel module (`mmtests.md` §6.3,
/// `kernel-compaction.md` §9.2): `percent`% of MemTotal in blocks of `order`, one attempt
/// every `(4096 << order) / (mb_per_sec · 1048576 / 1000)` ms, each with
/// `GFP_HIGHUSER_MOVABLE | __GFP_NOWARN`; the blocks it gets are held until the pass ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HighallocParams {
    /// Allocation order (`HUGETLB_ORDER`, 9 on x86-64).
    pub order: u32,
    /// `HIGHALLOC_ALLOC_RATE`, MB/s.
    pub mb_per_sec: u32,
    /// `HIGHALLOC_PERCENTAGE`.
    pub percent: u32,
}

impl Default for HighallocParams {
    /// MMTests' `config-global-dhp__stress-highalloc-performance`.
    fn default() -> Self {
        HighallocParams {
            order: 9,
            mb_per_sec: 16,
            percent: 95,
        }
    }
}

/// `type = "stress-highalloc"`: MMTests' driver (`mmtests.md` §6.3, `kernel-compaction.md`
/// §9.2). MemTotal_MB/400 copies of a kernel tree and a primary tree build with
/// `make -j{jobs}` on `device`; after `warmup`, Pass 1 of the allocation loop, 5 s, Pass 2;
/// then with `rested`: `rest` later the builds are killed and the trees deleted, a file as
/// large as RAM is written and read back and deleted, `drop_caches = 3`, the hugetlb pool
/// is grown to all of memory and emptied, `min_free_kbytes = 1024`, and the loop runs once
/// more on the quiet machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StressHighallocParams {
    /// The test disk: the trees and the large file are on it.
    pub device: String,
    /// Tree copies besides the primary tree; `None`: MemTotal_MB / 400.
    pub trees: Option<u32>,
    /// Each copy is made by `cp -r` of the primary, whole 2.6.30 tree before its build (the
    /// script's way); false: the copies lie on the disk at boot, only the files a build
    /// reads, uncached.
    pub copy: bool,
    /// Each build's `make -jN`.
    pub jobs: u32,
    /// Compile units per build.
    pub units: u32,
    /// Builds before Pass 1 (the script's 10 × 30 s).
    pub warmup: Nanos,
    /// The allocation loop.
    pub alloc: HighallocParams,
    /// The "while Rested" pass and what precedes it.
    pub rested: bool,
    /// Between Pass 2 and killing the builds.
    pub rest: Nanos,
}

impl StressHighallocParams {
    /// The script's wait before Pass 1.
    pub const WARMUP: Nanos = 300 * crate::engine::SEC;
    /// The script's wait after Pass 2.
    pub const REST: Nanos = 180 * crate::engine::SEC;
}

/// `type = "kbuild"`: `make -j{jobs}` of a tree of `units` compile units on `device`
/// (`workload::kbuild`), again and again with `repeat` (`make clean` between builds).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KbuildParams {
    /// The `[[device]]` holding the tree.
    pub device: String,
    /// `make -jN`.
    pub jobs: u32,
    /// Compile units (objects) per build.
    pub units: u32,
    /// Build again after each build (`make clean; make`), until the run ends.
    pub repeat: bool,
    /// Median user CPU time of one compile on the machine (`compile_cpu`; default the
    /// calibration module's [`KBUILD_COMPILE_NS`](crate::calibration::KBUILD_COMPILE_NS)).
    pub compile_cpu: Nanos,
}

impl KbuildParams {
    /// Objects of an x86-64 defconfig of the 2.6.30-3.0 era. Estimate: about 2,000.
    pub const DEFCONFIG_UNITS: u32 = 2000;
}

/// `type = "memcachetest"`: memcached's pool and the memcachetest client's options.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MemcachetestParams {
    /// memcached's item pool, bytes.
    pub pool: u64,
    /// Value size (`-M` with `-F`).
    pub value_size: u64,
    /// Share of sets (`-P`).
    pub set_percent: u32,
    /// Client threads (`-t`).
    pub threads: u32,
    /// Length of the measured phase (`-T`); None: to the end of the run.
    pub duration: Option<Nanos>,
    /// Populate the data set first (no `-S`).
    pub populate: bool,
}

/// `type = "parallelio"`: MMTests' parallelio driver (`mmtests.md` §6.1). A warm-up
/// memcachetest, then for each IO step `iterations` runs of memcachetest with a `dd` of the
/// step's size to `largefile` on `device` beside it.
#[derive(Clone, Debug, PartialEq)]
pub struct ParallelioParams {
    /// The `[[device]]` holding `largefile`.
    pub device: String,
    /// memcached's item pool (MEMCACHED_MEMPOOL).
    pub pool: u64,
    /// memcachetest's value size.
    pub value_size: u64,
    /// memcachetest's client threads (MEMCACHETEST_CONCURRENCY).
    pub threads: u32,
    /// memcachetest's run time (`-T`, MEMCACHETEST_DURATION).
    pub duration: Nanos,
    /// Iterations per IO step (PARALLELIO_ITERATIONS).
    pub iterations: u32,
    /// dd sizes of the IO steps; 0 is the step without IO.
    pub steps: Vec<u64>,
    /// Run one memcachetest first and discard it.
    pub warmup: bool,
}

impl ParallelioParams {
    /// MMTests' IO steps for a machine of `mem_total` bytes and an item pool of `pool`:
    /// no IO, then MIN + (k-1)·⌊(MAX-MIN)/increments⌋ for k in 1..=increments, with
    /// MIN = (MemTotal - pool)/2 and MAX = (MemTotal - pool)·4, in whole MiB (dd bs=1M).
    pub fn mmtests_steps(mem_total: u64, pool: u64, increments: u32) -> Vec<u64> {
        let spare = mem_total.saturating_sub(pool);
        let (min, max) = (spare / 2, spare * 4);
        let inc = (max - min) / increments.max(1) as u64;
        let mib = |b: u64| b >> 20 << 20;
        std::iter::once(0)
            .chain((0..increments as u64).map(|k| mib(min + k * inc)))
            .collect()
    }

    /// MMTests' label of a step: bytes / 2^20, truncated, plus "M".
    pub fn label(size: u64) -> String {
        format!("{}M", size >> 20)
    }
}

/// `type = "dd"`: write `size` bytes in `bs` blocks to a new file on `device`, then sync it
/// as `conv` says, then optionally truncate it and unlink it.
#[derive(Clone, Debug, PartialEq)]
pub struct DdParams {
    /// The `[[device]]` it writes to.
    pub device: String,
    /// Bytes to write.
    pub size: u64,
    /// Block size of each `write(2)`.
    pub bs: u64,
    /// `ibs=` and `obs=` in place of `bs=`: dd copies each block from an input buffer to
    /// an output buffer of its own (coreutils' `C_TWOBUFS`), two blocks of anonymous memory.
    pub two_buffers: bool,
    /// `conv=fdatasync`, `conv=fsync` or neither.
    pub conv: DdConv,
    /// `truncate -s`: after the sync, cut the file to this many bytes (whole pages).
    pub truncate_to: Option<u64>,
    /// Unlink the file when done (`rm`), freeing its pages.
    pub unlink: bool,
    /// MMTests parallelio's start condition: wait (polling every 2 s) until "used" memory
    /// (MemTotal - MemFree - page cache) reaches this many bytes, then 5 s more.
    pub start_when_used: Option<u64>,
    /// The file's name on the device; an existing file of that name is truncated first
    /// (`O_TRUNC`), as dd does. None: a file named after the workload.
    pub file: Option<String>,
}

/// dd's `conv=` sync at the end of the copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DdConv {
    /// No sync: the data may still be dirty when dd exits.
    None,
    /// `conv=fdatasync`.
    Fdatasync,
    /// `conv=fsync`.
    Fsync,
}

/// `type = "mmap"`: `mmap(MAP_SHARED)` a file of `size` bytes that is on `device` at boot and
/// read or write every page through the mapping, `passes` times, in file order or at random
/// (uniform, with repeats), then `munmap` it.
#[derive(Clone, Debug, PartialEq)]
pub struct MmapParams {
    /// The `[[device]]` the file is on.
    pub device: String,
    /// File and mapping size in bytes (whole pages).
    pub size: u64,
    /// Read or write the pages.
    pub access: MmapAccess,
    /// In which order.
    pub pattern: AccessPattern,
    /// Passes over the mapping; each touches as many pages as the file has.
    pub passes: u32,
    /// `msync(MS_SYNC)` of the mapping after each pass.
    pub msync: bool,
}

/// How an mmap workload touches its pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MmapAccess {
    /// Load from each page.
    Read,
    /// Store to each page.
    Write,
}

/// The order of a pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessPattern {
    /// First page to last.
    Sequential,
    /// Uniformly random pages, repeats allowed.
    Random,
}

/// What a mem_eater does once it has touched all its memory.
#[derive(Clone, Debug, PartialEq)]
pub enum MemEaterThen {
    /// Keep the memory mapped and idle until the end of the run.
    Hold,
    /// Re-touch every page, one pass every `interval`.
    Retouch { interval: Nanos },
}

/// A problem with a scenario file: where it is, which key, what was expected.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioError {
    /// The file, as given on the command line (or `<string>`).
    pub file: String,
    /// 1-based line and column of the offending key or value, when known.
    pub line: Option<usize>,
    pub column: Option<usize>,
    /// Dotted key path, e.g. `workload[1].size`; empty for syntax errors.
    pub key: String,
    /// What is wrong and what was expected.
    pub message: String,
    /// "did you mean ...?" for a misspelt key or value.
    pub suggestion: Option<String>,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(col) = self.column {
                write!(f, ":{col}")?;
            }
        }
        write!(f, ": ")?;
        if !self.key.is_empty() {
            write!(f, "key '{}': ", self.key)?;
        }
        write!(f, "{}", self.message)?;
        if let Some(s) = &self.suggestion {
            write!(f, " (did you mean '{s}'?)")?;
        }
        Ok(())
    }
}

impl std::error::Error for ScenarioError {}
