//! Every output format lives here; models never format anything.
//!
//! A finished run is summarised as a [`RunResult`]: plain data, the only thing the report
//! formats read. `mmtests` computes the MMTests "vmstat" summary rows and prints them in the
//! 2013 compare-kernels layout; `json` writes the `--json` file; `terminal` prints the summary
//! after `mmsim run`.

pub mod graphs;
pub mod html;
pub mod json;
pub mod mmtests;
pub mod terminal;
pub mod timeseries;

/// The OOM killer's record of a kill, as the model keeps it.
pub use crate::mm::oom_kill::OomKill;

/// What one run produced.
#[derive(Clone, Debug, PartialEq)]
pub struct RunResult {
    /// Scenario name (file stem).
    pub scenario: String,
    /// Kernel label: the preset name, with `+switch`/`-switch` for command-line overrides.
    pub kernel: String,
    /// Every switch and its value in this run, in registry order.
    pub switches: Vec<(String, bool)>,
    /// The seed of the run's RNG.
    pub seed: u64,
    /// Simulated seconds from start to end of the run (MMTests' elapsed time `E`).
    pub simulated_seconds: f64,
    /// `/proc/vmstat` at the end of the run, in the kernel's order: cumulative event counters
    /// (they start at 0 at boot, so they are also the deltas over the run) and gauges.
    pub vmstat: Vec<(String, u64)>,
    /// Per workload, in scenario order: metric name -> value. A metric of a phase the
    /// workload did not complete is absent (see `workload_states`).
    pub workloads: Vec<(String, Vec<(String, f64)>)>,
    /// Per workload, in scenario order: where it was at the end of the run.
    pub workload_states: Vec<WorkloadState>,
    /// Simulated threads and the CPU time they used.
    pub threads: Vec<ThreadTimes>,
    /// OOM kills, in order.
    pub oom_kills: Vec<OomKill>,
    /// Block devices and their iostat -x samples (every 10 simulated seconds).
    pub devices: Vec<DeviceReport>,
    /// NFS mounts and their per-operation RPC statistics.
    pub nfs: Vec<NfsReport>,
    /// The pauses and throttled calls of `balance_dirty_pages`.
    pub dirty_throttle: crate::mm::page_writeback::ThrottleStats,
    /// Every backing device, NFS mounts included: (name, `BDI_WRITTEN`, pages dirtiers
    /// wrote themselves).
    pub bdi_writeback: Vec<(String, u64, u64)>,
    /// `/proc/buddyinfo` at the end of the run.
    pub buddyinfo: String,
    /// `/proc/pagetypeinfo` at the end of the run.
    pub pagetypeinfo: String,
    /// Kernel warnings (`WARN_ON_ONCE` sites) and how often each was hit, by site.
    pub warnings: Vec<(String, u64)>,
    /// Memory cgroups at the end of the run, the root first (empty: the controller is off).
    pub cgroups: Vec<CgroupReport>,
}

/// A memory cgroup's files at the end of the run, under their cgroup file names, in bytes
/// as the kernel shows them.
#[derive(Clone, Debug, PartialEq)]
pub struct CgroupReport {
    /// The path below the root: `/` for the root, `/A`, `/A/B`.
    pub name: String,
    /// `memory.usage_in_bytes`, `memory.max_usage_in_bytes`, `memory.limit_in_bytes`,
    /// `memory.soft_limit_in_bytes`, `memory.failcnt`, `memory.memsw.usage_in_bytes`, then
    /// `memory.stat`'s `cache`, `rss`, `swap`, `pgpgin` and `pgpgout`, in that order.
    pub files: Vec<(&'static str, u64)>,
}

impl CgroupReport {
    /// The files of every group of a controller (none when it is off).
    pub fn of(cg: &crate::mm::memcontrol::MemCgroups) -> Vec<CgroupReport> {
        const PAGE: u64 = crate::calibration::PAGE_SIZE;
        let bytes = |pages: u64| {
            if pages == u64::MAX {
                // RESOURCE_MAX as the kernel prints it.
                i64::MAX as u64
            } else {
                pages * PAGE
            }
        };
        cg.groups
            .iter()
            .enumerate()
            .map(|(i, g)| {
                let usage = cg.usage(i);
                let (max_usage, memsw) = if i == 0 {
                    (0, usage + g.stat.swap)
                } else {
                    (g.res.max_usage, g.memsw.usage)
                };
                CgroupReport {
                    name: format!("/{}", g.name),
                    files: vec![
                        ("memory.usage_in_bytes", bytes(usage)),
                        ("memory.max_usage_in_bytes", bytes(max_usage)),
                        ("memory.limit_in_bytes", bytes(g.res.limit)),
                        ("memory.soft_limit_in_bytes", bytes(g.res.soft_limit)),
                        ("memory.failcnt", g.res.failcnt),
                        ("memory.memsw.usage_in_bytes", bytes(memsw)),
                        ("cache", bytes(g.stat.cache)),
                        ("rss", bytes(g.stat.rss)),
                        ("swap", bytes(g.stat.swap)),
                        ("pgpgin", g.stat.pgpgin),
                        ("pgpgout", g.stat.pgpgout),
                    ],
                }
            })
            .collect()
    }

    /// A file's value.
    pub fn get(&self, file: &str) -> Option<u64> {
        self.files.iter().find(|(f, _)| *f == file).map(|(_, v)| *v)
    }
}

/// An NFS mount's RPC statistics at the end of the run (`/proc/self/mountstats`).
#[derive(Clone, Debug, PartialEq)]
pub struct NfsReport {
    /// The mount's `[[device]]` name.
    pub mount: String,
    pub stats: crate::fs::nfs::NfsStats,
}

/// A block device's iostat samples.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceReport {
    /// Device name, e.g. `sda`.
    pub name: String,
    /// The samples, in time order.
    pub iostat: Vec<crate::block::IostatSample>,
    /// When each sample was taken, simulated seconds (the end of its interval).
    pub iostat_times: Vec<f64>,
    /// `/proc/diskstats` at the end of the run.
    pub diskstats: crate::block::DiskStats,
    /// Pages whose writeback completed (`BDI_WRITTEN`), cumulative.
    pub bdi_written: u64,
    /// Of the pages written, those a dirtier wrote itself in `balance_dirty_pages` (2.6.37's
    /// throttle); the flusher, reclaim and `fsync` wrote the rest.
    pub written_by_dirtiers: u64,
}

impl DeviceReport {
    /// The MMTests iostat summary of the samples (§4 of `mmtests.md`), if any was kept.
    pub fn summary(&self) -> Option<crate::block::IostatSummary> {
        crate::block::IostatSummary::from_samples(&self.iostat)
    }
}

impl RunResult {
    /// Value of a /proc/vmstat counter; a counter the model does not export reads 0, as in
    /// MMTests.
    pub fn vmstat(&self, name: &str) -> u64 {
        self.vmstat
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
            .unwrap_or(0)
    }

    /// A workload metric, if present.
    pub fn metric(&self, workload: &str, metric: &str) -> Option<f64> {
        self.workloads
            .iter()
            .find(|(w, _)| w == workload)
            .and_then(|(_, m)| m.iter().find(|(n, _)| n == metric).map(|(_, v)| *v))
    }
}

/// Where a workload was when the run ended.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadState {
    /// The workload's name.
    pub workload: String,
    /// Its phase: `not started`, `waiting`, `populating`, `running`, `filling`, `holding`,
    /// `retouching`, `finished` or `oom-killed`.
    pub state: String,
    /// Why some of its metrics are missing or partial, when they are: the phase it did not
    /// complete and how far it got.
    pub note: Option<String>,
}

/// CPU time of one simulated thread.
#[derive(Clone, Debug, PartialEq)]
pub struct ThreadTimes {
    /// Thread name, e.g. `kswapd0`, `memcachetest`.
    pub name: String,
    /// Seconds in user mode.
    pub user_seconds: f64,
    /// Seconds in the kernel (faults, reclaim).
    pub system_seconds: f64,
}
