//! Stage one of scenario loading: the TOML as written, checked key by key.
//!
//! # The scenario file format
//!
//! ```toml
//! [machine]                 # required
//! ram = "4G"                # required; size; a multiple of 4096, 64M..=4T
//! cpus = 4                  # optional, default 4; integer 1..=4096
//! [machine.reclaim_costs]   # optional: the CPU's costs of reclaim, times > 0;
//! isolate_page = "..."      # defaults: calibration.rs's ISOLATE_PAGE_NS, SHRINK_PAGE_NS,
//!                           # RMAP_WALK_NS, DEACTIVATE_PAGE_NS (per page), SHRINK_LRUVEC_NS,
//!                           # SHRINKER_CALL_NS (per call) (keys isolate_page, shrink_page,
//!                           # rmap_walk, deactivate_page, shrink_lruvec, shrinker_call)
//!
//! [swap]                    # optional; no swap device if absent
//! size = "8G"               # required in [swap]; size; a multiple of 4096, > 0, <= 64T
//! read_latency = "5ms"      # time, default "5ms"
//! write_latency = "5ms"     # time, default "5ms"
//! bandwidth = "100M"        # bytes per second (size), default "100M"; > 0
//! device = "sda"            # a [[device]] holding the swap area (then no simple-model keys)
//! placement = "end"         # on a device with a filesystem: "end" (default) or "start"
//! gap = "0"                 # with placement = "start": size between swap and the filesystem
//!
//! [vm]                      # sysctls under their /proc/sys/vm names
//! min_free_kbytes = 67584   # integer >= 0 and below RAM; default: the kernel's formula
//! swappiness = 60           # integer 0..=100, default 60
//! lowmem_reserve_ratio = [256, 256, 32]  # exactly 3 integers >= 1 (DMA, DMA32, Normal)
//! page-cluster = 3          # integer 0..=10, default 3 (note the hyphen)
//! vfs_cache_pressure = 100  # integer >= 0, default 100
//! laptop_mode = 0           # integer >= 0, default 0; non-zero means on
//! dirty_ratio = 20          # integer 0..=100, default 20
//! dirty_background_ratio = 10  # integer 0..=100, default 10
//! dirty_bytes = 0           # size, default 0 (use dirty_ratio); else at least 2 pages
//! dirty_background_bytes = 0   # size, default 0 (use dirty_background_ratio)
//! dirty_expire_centisecs = 3000     # integer >= 0, default 3000
//! dirty_writeback_centisecs = 500   # integer >= 0, default 500; 0 disables kupdate
//!
//! [run]
//! duration = "200s"         # time > 0, default "60s"
//! seed = 1                  # integer >= 0, default 1
//! end = "duration"         # "duration" (default) or "workloads": end when every
//!                           # workload has finished (duration is then the upper bound)
//!
//! [kernel]
//! preset = "3.9"            # optional string; checked against the presets at run time
//! [kernel.switches]         # optional: name = true|false, kept in file order
//!
//! [slab]                    # the system's dentries and inodes cached at boot
//! files = 50000             # integer >= 0, default 50000: files whose dentry and inode
//!                           # are cached unused on the root filesystem (two objects each)
//! inode_size = 1024         # size (integer bytes or string), 1..=4096, default 1024:
//!                           # bytes per inode object (dentries are 192 bytes)
//! page_cache = "100M"       # size or "N%" of RAM, default 0, at most half of RAM: the
//!                           # page cache boot left on those files (clean, 32 KiB per
//!                           # file), read from the first [[device]] with a filesystem
//! page_cache_active = "25M" # size up to page_cache, default 0: how much of it is on the
//!                           # active list (used again since boot); the rest is inactive
//!
//! [[workload]]              # any number, including none
//! type = "memcachetest"     # required: memcachetest, mem_eater, dd, cat, mmap, parallelio,
//!                           # highalloc, kbuild, stress-highalloc, simple-writeback, fsmark,
//!                           # micro, sync (one sync(2) at `start`, no other keys) or daemons
//! name = "mc"               # optional; default: the type name, then "-2", "-3"... for
//!                           # repeats; names must be unique
//! start = "0s"              # time, default "0s"
//! # memcachetest keys:
//! pool = "80%"              # size, or "N%" of RAM; default "80%" (as MMTests)
//! value_size = "16K"        # size, default "16K"; 1..=pool
//! set_percent = 33          # integer 0..=100, default 33
//! threads = 1               # integer 1..=4096, default 1
//! duration = "200s"         # time > 0; stop after it and exit (default: run to the end)
//! populate = true           # boolean, default true: set every item once first (no -S)
//! # mem_eater keys:
//! size = "2G"               # required; size, or "N%" of RAM; > 0
//! chunk = "64M"             # size, default the smaller of "64M" and size; 1..=size
//! pause = "100ms"           # time, default "0s"
//! then = "hold"             # "hold" (default) or "retouch"
//! retouch_interval = "10s"  # time > 0, only with then = "retouch"; default "10s"
//! # dd, cat and mmap keys (each works on files of a [[device]] with a filesystem):
//! device = "sda"            # required; the name of a [[device]] whose filesystem is not raw
//! size = "1G"               # required; size, whole 4 KiB pages, > 0, at most the device size
//! # cat keys (reads files that are on the device at boot):
//! files = 1                 # integer 1..=size in pages, default 1: that many files share
//!                           # size and are read one after another
//! # dd keys (writes a new file):
//! bs = "1M"                 # size: whole pages, or 512, 1K or 2K; default "1M"
//! conv = "fdatasync"        # "fdatasync", "fsync" or "none" (default)
//! truncate_to = "512M"      # size, whole pages, at most size: truncate the file after the sync
//! unlink = false            # boolean, default false: remove the file at the end
//! file = "largefile"        # no '/' or control characters; default: named after the
//!                           # workload; an existing file of that name is truncated
//! # mmap keys (maps a file that is on the device at boot, MAP_SHARED):
//! access = "read"           # "read" (default) or "write"
//! pattern = "seq"           # "seq" (default) or "random"
//! passes = 1                # integer 1..=1000000, default 1
//! msync = false             # boolean, default false: msync(MS_SYNC) after each pass
//! # simple-writeback keys (MMTests' NUMCPUS x factor dd writers):
//! device = "sda"            # required; a [[device]] with a filesystem
//! size = "2G"               # size or "N%" of RAM, whole pages; default 4 x MemTotal,
//!                           # shared by the writers of each factor
//! min_factor = 1            # integer 1..=1024, default 1
//! max_factor = 64           # integer min_factor..=1024, default 64 (doubling from min)
//! iterations = 1            # integer 1..=1000, default 1: the writers' runs of each factor
//! # parallelio keys (MMTests' driver; also memcachetest's value_size, threads):
//! device = "sda"            # required; a [[device]] with a filesystem
//! pool = "5600M"            # size or "N%" of RAM; default 4/5 of MemTotal
//! duration = "200s"         # each memcachetest run; time > 0, default "200s"
//! iterations = 5            # integer 1..=1000, default 5
//! increments = 3            # integer 1..=100, default 3 (MMTests' step sizes)
//! steps = [0, "1G"]         # dd sizes in whole MiB instead of increments
//! warmup = true             # boolean, default true
//! # daemons keys (the system's programs, run from [slab] page_cache_active; always in
//! # the background):
//! text = "25M"              # size, whole pages, 1 page..=page_cache_active; default all
//! interval = "10s"          # time > 0, default "10s": every page of the text runs this often
//! ```
//!
//! [[cgroup]]                # any number: memory cgroups (v1) below the root
//! name = "A"                # required: the path below the root; "A/B" is B in A, which
//!                           # must be listed first
//! memory.limit_in_bytes = "512M"       # size (rounded up to pages) or -1; default -1
//! memory.soft_limit_in_bytes = 0       # size or -1; default -1 (unlimited)
//! memory.use_hierarchy = 1  # 0 or 1; default the parent's (the root's is 0)
//! memory.swappiness = 60    # integer 0..=100; default the parent's (the root's is vm's)
//! # and on a [[workload]]:
//! cgroup = "A"              # its tasks run in [[cgroup]] "A"; default the root ("/")
//! cpus = "0-7"              # its tasks run only on these CPUs (taskset -c); default all
//! background = true         # end = "workloads" does not wait for it; default false
//!
//! `[[device]]` tables (name, type, size, filesystem, members, nr_requests, scheduler) are
//! described in the README. `scheduler` is "cfq", "deadline" or "noop"; without it a
//! rotating disk (hdd, raid0) gets cfq and an ssd or usb stick deadline
//! ([`Scheduler::default_for`](super::Scheduler::default_for)); an NFS mount takes neither
//! `nr_requests` nor `scheduler`.
//!
//! Sizes are integers (bytes) or strings with an optional K/M/G/T suffix (powers of 1024;
//! see [`parse_size`](super::parse_size)). Times are strings with a unit: ns, us, ms, s,
//! m (minutes), h (see [`parse_duration`](super::parse_duration)); a bare number is
//! rejected. A percentage "N%" (decimals allowed) is of the machine's RAM, rounded down to
//! a whole number of 4 KiB pages.
//!
//! Whole-file checks: the memory of all workloads together (memcachetest `pool` plus
//! mem_eater `size`) must fit in RAM + swap. The slab is not checked against RAM (the default
//! 50000 files take about 58M of slab pages, nearly all a 64M machine has).
//!
//! Key paths in errors are dotted, with 0-based indexes for arrays: `workload[0].size`,
//! `vm.lowmem_reserve_ratio[2]`. The first problem found is reported.
//!
//! # The code
//!
//! [`tree`] turns the text into a tree of keys and values that knows where each stands;
//! [`check`] and [`values`] read keys and values from it with errors that name the file,
//! line, column and key; one module a section then reads its keys: [`machine`], [`swap`],
//! [`devices`], [`vm`], [`run`], [`kernel`], [`slab`] and [`workloads`].

mod cgroups;
mod check;
mod devices;
mod kernel;
mod machine;
mod run;
mod slab;
mod swap;
mod thp;
mod tree;
mod values;
mod vm;
mod workloads;

mod sweep;
pub use sweep::{load_sweep, load_sweep_str, MAX_POINTS};

use super::{KernelSelection, Machine, RunParams, Scenario, ScenarioError, SlabParams};
use crate::fs::Filesystem;
use crate::mm::VmSysctls;
#[cfg(test)]
use check::nearest;
use check::{opt, sub_table, Cx, Res, Table};

/// Load and validate a scenario file.
// The signature is the module's interface; `ScenarioError` is returned unboxed on purpose.
#[allow(clippy::result_large_err)]
pub fn load(path: &std::path::Path) -> Result<Scenario, ScenarioError> {
    let text = read_file(path)?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    load_str(&text, &path.display().to_string(), &stem)
}

/// Parse and validate scenario text; `file` is used in error messages, `name` is the scenario name.
#[allow(clippy::result_large_err)]
pub fn load_str(text: &str, file: &str, name: &str) -> Result<Scenario, ScenarioError> {
    let cx = Cx { file, text };
    let entries = tree::parse_tree(text).map_err(|e| syntax_error(&cx, &e))?;
    resolve(&cx, &entries, name).map_err(|e| *e)
}

/// A file's text, or an error naming it.
#[allow(clippy::result_large_err)]
fn read_file(path: &std::path::Path) -> Result<String, ScenarioError> {
    std::fs::read_to_string(path).map_err(|e| ScenarioError {
        file: path.display().to_string(),
        line: None,
        column: None,
        key: String::new(),
        message: format!("cannot read the file: {e}"),
        suggestion: None,
    })
}

/// A TOML syntax error at its place; toml's messages span several lines, ours keep to one.
fn syntax_error(cx: &Cx<'_>, e: &toml_edit::TomlError) -> ScenarioError {
    let msg = e
        .message()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    let message = if msg.is_empty() {
        "invalid TOML".to_string()
    } else {
        format!("invalid TOML: {msg}")
    };
    cx.error(e.span().as_ref(), "", message)
}

/// Bytes in a page, and in a MiB.
const PAGE: u64 = 4096;
const MIB: u64 = 1 << 20;

const TOP_KEYS: &[&str] = &[
    "machine",
    "swap",
    "device",
    "vm",
    "transparent_hugepage",
    "run",
    "kernel",
    "slab",
    "workload",
    "cgroup",
];

/// The sections, each read by its module, in the order their checks depend on.
fn resolve(cx: &Cx<'_>, entries: &[tree::Entry], name: &str) -> Res<Scenario> {
    let root = Table {
        path: String::new(),
        entries,
        span: None,
    };
    root.check_keys(cx, TOP_KEYS, "the file (expected tables)")?;

    let machine_t = section(cx, &root, "machine")?.ok_or_else(|| {
        cx.fail(
            None,
            "machine",
            "missing required table [machine]: expected at least `[machine]` with `ram = \"4G\"`",
        )
    })?;
    let (ram, cpus, pci_hole, reclaim_costs) = machine::machine(cx, &machine_t)?;

    let devices = match opt(&root, "device") {
        Some(item) => devices::devices(cx, &item)?,
        None => Vec::new(),
    };

    let swap = match section(cx, &root, "swap")? {
        Some(t) => Some(swap::swap(cx, &t, &devices)?),
        None => None,
    };

    let vm = match section(cx, &root, "vm")? {
        Some(t) => vm::vm(cx, &t, ram)?,
        None => VmSysctls::default(),
    };

    let transparent_hugepage = match section(cx, &root, "transparent_hugepage")? {
        Some(t) => thp::thp(cx, &t)?,
        None => Default::default(),
    };

    let run = match section(cx, &root, "run")? {
        Some(t) => run::run(cx, &t)?,
        None => RunParams {
            duration: 60_000_000_000,
            seed: 1,
            end_when_done: false,
        },
    };

    let kernel = match section(cx, &root, "kernel")? {
        Some(t) => kernel::kernel(cx, &t)?,
        None => KernelSelection::default(),
    };

    let slab = match section(cx, &root, "slab")? {
        Some(t) => {
            let disk = devices
                .iter()
                .find(|d| d.filesystem != Filesystem::Raw)
                .map(|d| d.name.as_str());
            slab::slab(cx, &t, ram, disk)?
        }
        None => SlabParams::default(),
    };

    let cgroups = match opt(&root, "cgroup") {
        Some(item) => cgroups::cgroups(cx, &item)?,
        None => Vec::new(),
    };

    let swap_size = swap.as_ref().map_or(0, |s| s.size);
    let workloads = match opt(&root, "workload") {
        Some(item) => {
            let host = workloads::Host {
                ram,
                swap: swap_size,
                ncpus: cpus,
                devices: &devices,
                cgroups: &cgroups,
                page_cache_active: slab.page_cache_active,
            };
            workloads::workloads(cx, &item, &host)?
        }
        None => Vec::new(),
    };

    Ok(Scenario {
        name: name.to_owned(),
        machine: Machine {
            ram,
            cpus,
            swap,
            devices,
            reclaim_costs,
            pci_hole,
        },
        vm,
        transparent_hugepage,
        run,
        kernel,
        slab,
        workloads,
        cgroups,
    })
}

/// The table `[key]`, if the file has one.
fn section<'a>(cx: &Cx<'_>, root: &Table<'a>, key: &str) -> Res<Option<Table<'a>>> {
    opt(root, key)
        .map(|item| sub_table(cx, &item, &format!("a table [{key}]")))
        .transpose()
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
