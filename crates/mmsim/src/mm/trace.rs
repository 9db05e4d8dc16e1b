//! Tracepoints (`include/trace/events/{vmscan,kmem,writeback}.h`), written as 3.9's
//! `trace_pipe` prints them, so that the kernel's own post-processing scripts
//! (`trace-vmscan-postprocess.pl`, `trace-pagealloc-postprocess.pl`) read them:
//!
//! ```text
//!          kswapd0-35    [001] ....    12.345678: mm_vmscan_kswapd_wake: nid=0 order=0
//! ```
//!
//! The layout is `trace_print_context` with 3.9's default `irq-info` option: the task's
//! comm (`%16s`) and pid (`-%-5d`), its CPU (`[%03d]`), the four irq-info characters
//! (irqs-off, need-resched, hardirq/softirq, preempt-depth), then `%5lu.%06lu` seconds.
//! Event fields follow the 3.9 `TP_printk` formats. `docs/traces.md` describes every
//! event and what the scripts make of it.
//!
//! Who a simulated thread is in the trace (a deterministic scheme that looks like a 3.9
//! boot, see [`Tracer`]):
//! - kernel threads (`kswapd0`, the flushers, `kjournald`) get pids from 35 up, in the
//!   order the simulator starts them; flushers are named `flush-MAJOR:MINOR`
//!   ([`bdi_dev_name`]), ext3's journal thread `kjournald`;
//! - user tasks (workloads and their threads, the monitors) get pids from 2000 up in the
//!   order they start; their comm is the task name up to a `/` (threads share their
//!   process's comm), at most 15 bytes (`TASK_COMM_LEN`);
//! - the device-completion tasks stand for interrupt work: their events show as
//!   `<idle>-0` in softirq context (`..s.`).
//!
//! A thread's CPU is the one it last ran on; one that never ran is shown on CPU
//! `task id % cpus`. mmsim keeps no preemption count or need-resched flag, so those
//! columns are `.`; irqs-off (`d`) is shown for events the kernel emits under an
//! `irq`-disabling lock (`mm_vmscan_lru_isolate` under `zone->lru_lock`).

use super::{Gfp, Kernel};
use crate::engine::{TaskId, JIFFY, SEC};
use std::fmt::Arguments;
use std::io::Write;

/// First pid of the kernel threads mmsim models: on a 3.9 boot `kswapd0` comes after
/// init, kthreadd, the per-CPU threads and the early workqueues.
pub const KTHREAD_PID_BASE: u32 = 35;
/// First pid of user tasks: a booted distribution has used some two thousand pids.
pub const USER_PID_BASE: u32 = 2000;
/// `INITIAL_JIFFIES` at HZ=250 on a 64-bit kernel: jiffies start 300 s before wrapping a
/// 32-bit counter, so `dirtied_when` values look like a real trace's.
pub const INITIAL_JIFFIES: u64 = (-(300i64 * 250)) as u32 as u64;

/// How a thread appears in the trace.
#[derive(Clone, Debug, PartialEq, Eq)]
struct TaskComm {
    comm: String,
    pid: u32,
    /// Interrupt work (device completions): shown as softirq context.
    softirq: bool,
}

/// Where trace lines go (`--trace FILE`).
pub struct Tracer {
    out: Box<dyn Write + Send>,
    /// The first write error; tracing stops after it and the run reports it.
    pub error: Option<std::io::Error>,
    /// comm and pid of each task id, assigned in creation order.
    tasks: Vec<TaskComm>,
    next_kthread: u32,
    next_user: u32,
}

impl std::fmt::Debug for Tracer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tracer")
            .field("error", &self.error)
            .finish()
    }
}

impl Tracer {
    /// Trace into `out`.
    pub fn new(out: Box<dyn Write + Send>) -> Tracer {
        Tracer {
            out,
            error: None,
            tasks: Vec::new(),
            next_kthread: KTHREAD_PID_BASE,
            next_user: USER_PID_BASE,
        }
    }

    /// Flush buffered lines.
    pub fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }

    /// Name and number every task created so far that has none yet. Tasks are numbered in
    /// creation order whenever the tracer first looks, so the result does not depend on
    /// which task traced first.
    fn name_tasks(&mut self, sched: &crate::engine::Sched, bdis: &[super::backing_dev::Bdi]) {
        for t in self.tasks.len()..sched.nr_tasks() {
            let c = classify(sched.task_name(TaskId(t as u32)), bdis);
            let tc = match c {
                Class::Kthread(comm) => {
                    self.next_kthread += 1;
                    TaskComm {
                        comm,
                        pid: self.next_kthread - 1,
                        softirq: false,
                    }
                }
                Class::User(comm) => {
                    self.next_user += 1;
                    TaskComm {
                        comm,
                        pid: self.next_user - 1,
                        softirq: false,
                    }
                }
                Class::Irq => TaskComm {
                    comm: "<idle>".into(),
                    pid: 0,
                    softirq: true,
                },
            };
            self.tasks.push(tc);
        }
    }
}

enum Class {
    Kthread(String),
    User(String),
    Irq,
}

/// What a simulated task is, from the names `sim.rs` gives them.
fn classify(name: &str, bdis: &[super::backing_dev::Bdi]) -> Class {
    let bdi = |dev: &str| bdis.iter().position(|b| b.name == dev);
    if name.starts_with("kswapd") {
        return Class::Kthread(name.to_string());
    }
    if let Some(i) = name.strip_prefix("flush-").and_then(bdi) {
        return Class::Kthread(format!("flush-{}", bdi_dev_name(bdis, i)));
    }
    if name.strip_prefix("kjournald-").and_then(bdi).is_some() {
        return Class::Kthread("kjournald".into());
    }
    if let Some(dev) = name.strip_prefix("jbd2-").filter(|d| bdi(d).is_some()) {
        // The kernel names it after the partition and the journal's inode: jbd2/sda1-8.
        return Class::Kthread(format!("jbd2/{dev}1-8"));
    }
    if name.strip_prefix("btrfs-submit-").and_then(bdi).is_some() {
        return Class::Kthread("btrfs-submit-1".into());
    }
    let base = name.split('/').next().unwrap_or(name);
    if name == "swapdev" || bdi(base).is_some() {
        return Class::Irq;
    }
    let mut comm = base.to_string();
    let mut end = comm.len().min(15);
    while !comm.is_char_boundary(end) {
        end -= 1;
    }
    comm.truncate(end);
    Class::User(comm)
}

/// The name 3.9 gives a backing device (`dev_name(bdi->dev)`), which the writeback
/// tracepoints print and the flusher thread is named after: the block device's
/// `MAJOR:MINOR`. `sdX` disks are SCSI disks (major 8, 16 minors each, then majors
/// 65..71), `mdN` md arrays (major 9); other block devices are numbered as SCSI disks in
/// the order they are configured. A network filesystem's bdi (NFS) is its anonymous
/// superblock device, `0:N`, from `0:38` up (what a distribution's earlier
/// pseudo-filesystems leave free).
pub fn bdi_dev_name(bdis: &[super::backing_dev::Bdi], i: usize) -> String {
    let b = &bdis[i];
    let anon_index = b
        .queueless
        .then(|| bdis[..i].iter().filter(|b| b.queueless).count());
    let disk_index = bdis[..i]
        .iter()
        .filter(|b| !b.queueless && !b.name.starts_with("md"))
        .count();
    dev_name(&b.name, anon_index, disk_index)
}

/// [`bdi_dev_name`] of a device called `name`: the `anon_index`-th mount with an anonymous
/// device, else the `disk_index`-th block device not called `mdN`.
fn dev_name(name: &str, anon_index: Option<usize>, disk_index: usize) -> String {
    if let Some(n) = anon_index {
        return format!("0:{}", 38 + n);
    }
    if let Some(n) = name.strip_prefix("md").and_then(|n| n.parse::<u32>().ok()) {
        return format!("9:{n}");
    }
    let sd_index = |name: &str| -> Option<usize> {
        let letters = name.strip_prefix("sd")?;
        if letters.is_empty() || !letters.bytes().all(|c| c.is_ascii_lowercase()) {
            return None;
        }
        // sda..sdz, then sdaa..: bijective base 26.
        Some(
            letters
                .bytes()
                .fold(0, |n, c| n * 26 + (c - b'a') as usize + 1)
                - 1,
        )
    };
    let index = sd_index(name).unwrap_or(disk_index);
    let (major, minor) = if index < 16 {
        (8, index * 16)
    } else {
        (65 + (index - 16) / 16, (index - 16) % 16 * 16)
    };
    format!("{major}:{minor}")
}

/// Irq-info of an event: whether the kernel emits it with interrupts disabled.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Irqs {
    On,
    Off,
}

/// Write one event line for the current task.
fn emit(k: &mut Kernel, event: &str, fields: Arguments<'_>) {
    emit_ctx(k, Irqs::On, event, fields)
}

fn emit_ctx(k: &mut Kernel, irqs: Irqs, event: &str, fields: Arguments<'_>) {
    let Kernel {
        trace, sched, bdis, ..
    } = k;
    let Some(t) = trace.as_mut() else { return };
    if t.error.is_some() {
        return;
    }
    let now = sched.now();
    let me = sched.current();
    if me.0 as usize >= t.tasks.len() {
        t.name_tasks(sched, bdis);
    }
    let cpu = sched.this_cpu();
    let tc = &t.tasks[me.0 as usize];
    let irqs_off = if irqs == Irqs::Off { 'd' } else { '.' };
    let softirq = if tc.softirq { 's' } else { '.' };
    let r = writeln!(
        t.out,
        "{:>16}-{:<5} [{cpu:03}] {irqs_off}.{softirq}. {:5}.{:06}: {event}: {fields}",
        tc.comm,
        tc.pid,
        now / SEC,
        now % SEC / 1000
    );
    if let Err(e) = r {
        t.error = Some(e);
    }
}

/// The `gfp_t` bits of 3.9 (`include/linux/gfp.h`) for the model's flags.
fn gfp_bits(g: Gfp) -> u64 {
    const MAP: [(u32, u64); 18] = [
        (Gfp::WAIT, 0x10),
        (Gfp::HIGH, 0x20),
        (Gfp::IO, 0x40),
        (Gfp::FS, 0x80),
        (Gfp::NORETRY, 0x1000),
        (Gfp::HIGHMEM, 0x02),
        (Gfp::MOVABLE, 0x08),
        (Gfp::NO_KSWAPD, 0x40_0000),
        (Gfp::WRITE, 0x100_0000),
        (Gfp::HARDWALL, 0x2_0000),
        (Gfp::ZERO, 0x8000),
        (Gfp::RECLAIMABLE, 0x8_0000),
        (Gfp::NOTRACK, 0x20_0000),
        (Gfp::REPEAT, 0x400),
        (Gfp::NOWARN, 0x200),
        (Gfp::COMP, 0x4000),
        (Gfp::NOMEMALLOC, 0x1_0000),
        (Gfp::COLD, 0x100),
    ];
    MAP.iter()
        .filter(|&&(m, _)| g.0 & m != 0)
        .fold(0, |a, &(_, k)| a | k)
}

/// `show_gfp_flags` as 3.9 prints it: the table's masks in order, each taken when all its
/// bits are still set, `|`-separated; bits no entry names (`__GFP_FS` alone,
/// `__GFP_HIGHMEM`, `__GFP_WRITE`...) are printed last in hex; no bits is `GFP_NOWAIT`.
pub fn show_gfp_flags(g: Gfp) -> String {
    const HIGHUSER_MOVABLE: u64 = 0x10 | 0x40 | 0x80 | 0x2_0000 | 0x02 | 0x08;
    const TABLE: [(u64, &str); 29] = [
        (
            HIGHUSER_MOVABLE | 0x4000 | 0x1_0000 | 0x1000 | 0x200 | 0x40_0000,
            "GFP_TRANSHUGE",
        ),
        (HIGHUSER_MOVABLE, "GFP_HIGHUSER_MOVABLE"),
        (0x10 | 0x40 | 0x80 | 0x2_0000 | 0x02, "GFP_HIGHUSER"),
        (0x10 | 0x40 | 0x80 | 0x2_0000, "GFP_USER"),
        (0x10 | 0x40 | 0x80 | 0x8_0000, "GFP_TEMPORARY"),
        (0x10 | 0x40 | 0x80, "GFP_KERNEL"),
        (0x10 | 0x40, "GFP_NOFS"),
        (0x20, "GFP_ATOMIC"),
        (0x10, "GFP_NOIO"),
        (0x20, "GFP_HIGH"),
        (0x10, "GFP_WAIT"),
        (0x40, "GFP_IO"),
        (0x100, "GFP_COLD"),
        (0x200, "GFP_NOWARN"),
        (0x400, "GFP_REPEAT"),
        (0x800, "GFP_NOFAIL"),
        (0x1000, "GFP_NORETRY"),
        (0x4000, "GFP_COMP"),
        (0x8000, "GFP_ZERO"),
        (0x1_0000, "GFP_NOMEMALLOC"),
        (0x2000, "GFP_MEMALLOC"),
        (0x2_0000, "GFP_HARDWALL"),
        (0x4_0000, "GFP_THISNODE"),
        (0x8_0000, "GFP_RECLAIMABLE"),
        (0x10_0000, "GFP_KMEMCG"),
        (0x08, "GFP_MOVABLE"),
        (0x20_0000, "GFP_NOTRACK"),
        (0x40_0000, "GFP_NO_KSWAPD"),
        (0x80_0000, "GFP_OTHER_NODE"),
    ];
    let mut flags = gfp_bits(g);
    if flags == 0 {
        return "GFP_NOWAIT".into();
    }
    let mut out = String::new();
    for &(mask, name) in &TABLE {
        if flags == 0 {
            break;
        }
        if flags & mask == mask {
            flags &= !mask;
            if !out.is_empty() {
                out.push('|');
            }
            out.push_str(name);
        }
    }
    if flags != 0 {
        if !out.is_empty() {
            out.push('|');
        }
        out.push_str(&format!("{flags:#x}"));
    }
    out
}

/// The address `%p` prints for the `struct page` of `pfn`: x86-64's vmemmap starts at
/// `0xffffea0000000000` and a `struct page` is 64 bytes. `%p` has no `0x`.
fn page_ptr(pfn: u32) -> u64 {
    0xffff_ea00_0000_0000u64 + pfn as u64 * 64
}

/// 3.9's `MIGRATE_*` of an allocation (`allocflags_to_migratetype`): movable 2,
/// reclaimable 1, unmovable 0.
fn migratetype(g: Gfp) -> u32 {
    if g.has(Gfp::MOVABLE) {
        2
    } else if g.has(Gfp::RECLAIMABLE) {
        1
    } else {
        0
    }
}

/// Whether tracing is on (lets callers skip computing fields).
#[inline]
pub fn enabled(k: &Kernel) -> bool {
    k.trace.is_some()
}

/// `RECLAIM_WB_*` flags of a reclaim of anon or file pages (all reclaim IO is async).
pub fn reclaim_flags(file: bool) -> &'static str {
    if file {
        "RECLAIM_WB_FILE|RECLAIM_WB_ASYNC"
    } else {
        "RECLAIM_WB_ANON|RECLAIM_WB_ASYNC"
    }
}

/// `mm_vmscan_kswapd_sleep`.
pub fn mm_vmscan_kswapd_sleep(k: &mut Kernel) {
    emit(k, "mm_vmscan_kswapd_sleep", format_args!("nid=0"));
}

/// `mm_vmscan_kswapd_wake`.
pub fn mm_vmscan_kswapd_wake(k: &mut Kernel, order: u32) {
    emit(
        k,
        "mm_vmscan_kswapd_wake",
        format_args!("nid=0 order={order}"),
    );
}

/// `mm_vmscan_wakeup_kswapd`.
pub fn mm_vmscan_wakeup_kswapd(k: &mut Kernel, zid: usize, order: u32) {
    emit(
        k,
        "mm_vmscan_wakeup_kswapd",
        format_args!("nid=0 zid={zid} order={order}"),
    );
}

/// `mm_vmscan_direct_reclaim_begin`.
pub fn mm_vmscan_direct_reclaim_begin(k: &mut Kernel, order: u32, may_writepage: bool, gfp: Gfp) {
    if !enabled(k) {
        return;
    }
    emit(
        k,
        "mm_vmscan_direct_reclaim_begin",
        format_args!(
            "order={order} may_writepage={} gfp_flags={}",
            may_writepage as u8,
            show_gfp_flags(gfp)
        ),
    );
}

/// `mm_vmscan_direct_reclaim_end`.
pub fn mm_vmscan_direct_reclaim_end(k: &mut Kernel, nr_reclaimed: u64) {
    emit(
        k,
        "mm_vmscan_direct_reclaim_end",
        format_args!("nr_reclaimed={nr_reclaimed}"),
    );
}

/// `mm_vmscan_memcg_reclaim_begin` (limit reclaim) and
/// `mm_vmscan_memcg_softlimit_reclaim_begin`: the direct-reclaim template.
pub fn mm_vmscan_memcg_reclaim_begin(k: &mut Kernel, soft: bool, may_writepage: bool, gfp: Gfp) {
    if !enabled(k) {
        return;
    }
    let name = if soft {
        "mm_vmscan_memcg_softlimit_reclaim_begin"
    } else {
        "mm_vmscan_memcg_reclaim_begin"
    };
    emit(
        k,
        name,
        format_args!(
            "order=0 may_writepage={} gfp_flags={}",
            may_writepage as u8,
            show_gfp_flags(gfp)
        ),
    );
}

/// `mm_vmscan_memcg_reclaim_end` and `mm_vmscan_memcg_softlimit_reclaim_end`.
pub fn mm_vmscan_memcg_reclaim_end(k: &mut Kernel, soft: bool, nr_reclaimed: u64) {
    let name = if soft {
        "mm_vmscan_memcg_softlimit_reclaim_end"
    } else {
        "mm_vmscan_memcg_reclaim_end"
    };
    emit(k, name, format_args!("nr_reclaimed={nr_reclaimed}"));
}

/// `mm_vmscan_lru_isolate`.
pub fn mm_vmscan_lru_isolate(
    k: &mut Kernel,
    isolate_mode: u32,
    order: u32,
    nr_requested: u64,
    nr_scanned: u64,
    nr_taken: u64,
    file: bool,
) {
    // Under spin_lock_irq(&zone->lru_lock).
    emit_ctx(
        k,
        Irqs::Off,
        "mm_vmscan_lru_isolate",
        format_args!(
            "isolate_mode={isolate_mode} order={order} nr_requested={nr_requested} nr_scanned={nr_scanned} nr_taken={nr_taken} file={}",
            file as u8
        ),
    );
}

/// `mm_vmscan_writepage`. The `page=` field is the address a `struct page` at `pfn` would
/// have in the x86-64 vmemmap, printed as `%p` does (no `0x`).
pub fn mm_vmscan_writepage(k: &mut Kernel, pfn: u32, file: bool) {
    emit(
        k,
        "mm_vmscan_writepage",
        format_args!(
            "page={:x} pfn={pfn} flags={}",
            page_ptr(pfn),
            reclaim_flags(file)
        ),
    );
}

/// `mm_vmscan_lru_shrink_inactive`.
pub fn mm_vmscan_lru_shrink_inactive(
    k: &mut Kernel,
    zid: usize,
    nr_scanned: u64,
    nr_reclaimed: u64,
    priority: i32,
    file: bool,
) {
    emit(
        k,
        "mm_vmscan_lru_shrink_inactive",
        format_args!(
            "nid=0 zid={zid} nr_scanned={nr_scanned} nr_reclaimed={nr_reclaimed} priority={priority} flags={}",
            reclaim_flags(file)
        ),
    );
}

/// `writeback_congestion_wait` / `writeback_wait_iff_congested`: the timeout and how long
/// the task actually slept, in µs.
pub fn writeback_congest_waited(
    k: &mut Kernel,
    event: &str,
    timeout: crate::engine::Nanos,
    delayed: crate::engine::Nanos,
) {
    emit(
        k,
        event,
        format_args!(
            "usec_timeout={} usec_delayed={}",
            timeout / 1000,
            delayed / 1000
        ),
    );
}

/// `balance_dirty_pages` (3.3+ fields; rates in KB/s, times in ms).
#[allow(clippy::too_many_arguments)]
pub fn balance_dirty_pages(
    k: &mut Kernel,
    bdi: usize,
    limit: u64,
    t: &super::page_writeback::Throttle,
    dirtied: u64,
    paused: crate::engine::Nanos,
    pause: i64,
    think: i64,
) {
    let name = bdi_dev_name(&k.bdis, bdi);
    let ms = crate::engine::MSEC as i64;
    emit(
        k,
        "balance_dirty_pages",
        format_args!(
            "bdi {name}: limit={limit} setpoint={} dirty={} bdi_setpoint={} bdi_dirty={} dirty_ratelimit={} task_ratelimit={} dirtied={dirtied} dirtied_pause={} paused={} pause={} period={} think={}",
            t.setpoint,
            t.nr_dirty,
            t.bdi_setpoint,
            t.bdi_dirty,
            t.dirty_ratelimit * 4,
            t.task_ratelimit * 4,
            t.nr_dirtied_pause,
            paused / crate::engine::MSEC,
            pause / ms,
            t.period / crate::engine::MSEC,
            think / ms,
        ),
    );
}

/// `balance_dirty_pages` of the IO-less series v3 (its patches 14 and 32): the bdi's and the
/// task's limits, its dirty pages raw and smoothed, the gaps in percent of the ramps, the
/// three rates in KB/s, and the period, think time and pause in ms.
pub fn balance_dirty_pages_v3(k: &mut Kernel, bdi: usize, t: &super::page_writeback::V3Trace) {
    if !enabled(k) {
        return;
    }
    let name = bdi_dev_name(&k.bdis, bdi);
    let limit = t.bdi_limit as i64;
    // BDP_PERCENT(a, b, c): (a - b) in hundredths of limit / c, rounded.
    let bdp = |a: u64, b: u64, c: i64| ((a as i64 - b as i64) * 100 * c + limit / 2) / (limit | 1);
    let ms = |j: i64| j * (crate::engine::JIFFY / crate::engine::MSEC) as i64;
    let kbps = |pages: u64| pages * (crate::calibration::PAGE_SIZE >> 10);
    emit(
        k,
        "balance_dirty_pages",
        format_args!(
            "bdi {name}: bdi_limit={} task_limit={} bdi_dirty={} avg_dirty={} bdi_gap={}% task_gap={}% task_weight={}% bdi_bw={} base_bw={} task_bw={} dirtied={} period={} think={} pause={}",
            t.bdi_limit,
            t.task_limit,
            t.bdi_dirty,
            t.avg_dirty,
            bdp(t.bdi_limit, t.bdi_dirty, 8),
            bdp(t.task_limit, t.avg_dirty, 16),
            bdp(t.bdi_limit, t.task_limit, 16),
            kbps(t.bdi_bw),
            kbps(t.base_bw),
            kbps(t.task_bw),
            t.dirtied,
            ms(t.period as i64),
            ms(t.think),
            ms(t.pause),
        ),
    );
}

/// `global_dirty_state` (3.1+): the global dirty counters and limits, each time
/// `global_dirty_limits` computes them. 2.6.37 has no such event; with the IO-less series
/// v3 the throttle traces [`balance_dirty_state`] instead.
pub fn global_dirty_state(k: &mut Kernel, bg_thresh: u64, thresh: u64) {
    use super::vmstat::ZoneStat as S;
    if !enabled(k) || k.writeback_2_6_37() {
        return;
    }
    let g = |s| k.global_stat(s);
    let (dirty, writeback, unstable) = (g(S::nr_dirty), g(S::nr_writeback), g(S::nr_unstable));
    let (dirtied, written) = (g(S::nr_dirtied), g(S::nr_written));
    let limit = k.global_dirty_limit.limit;
    emit(
        k,
        "global_dirty_state",
        format_args!(
            "dirty={dirty} writeback={writeback} unstable={unstable} bg_thresh={bg_thresh} thresh={thresh} limit={limit} dirtied={dirtied} written={written}"
        ),
    );
}

/// `balance_dirty_state` (patch 33 of the IO-less series v3, merged in 3.1 as
/// `global_dirty_state`): the global counters and limits at each pass of v3's throttle loop
/// for a page of file `ino` on `bdi`, and the task's `nr_dirtied_pause` (`poll_thresh`).
/// `gap` is the headroom left under the dirty limit, negative above it.
pub fn balance_dirty_state(
    k: &mut Kernel,
    bdi: usize,
    ino: usize,
    bg_thresh: u64,
    thresh: u64,
    poll_thresh: u64,
) {
    use super::vmstat::ZoneStat as S;
    if !enabled(k) || !k.ioless_v3() {
        return;
    }
    let g = |s| k.global_stat(s);
    let (dirty, wb, unstable) = (g(S::nr_dirty), g(S::nr_writeback), g(S::nr_unstable));
    let gap = thresh as i64 - (dirty + wb + unstable) as i64;
    let name = bdi_dev_name(&k.bdis, bdi);
    emit(
        k,
        "balance_dirty_state",
        format_args!(
            "bdi {name}: dirty={dirty} wb={wb} unstable={unstable} bg_thresh={bg_thresh} thresh={thresh} gap={gap} poll_thresh={poll_thresh} ino={}",
            i_ino(ino)
        ),
    );
}

/// The inode number the trace shows for mmsim's inode `ino`: numbered from 12, as the
/// first files of a fresh filesystem are.
fn i_ino(ino: usize) -> usize {
    ino + 12
}

/// `show_inode_state` over the state bits mmsim keeps, in the kernel's bit order
/// (`I_DIRTY_DATASYNC`, `I_DIRTY_PAGES`, `I_SYNC`); no bits print nothing.
fn show_inode_state(state: u32) -> String {
    use super::inode::{I_DIRTY_DATASYNC, I_DIRTY_PAGES, I_SYNC};
    [
        (I_DIRTY_DATASYNC, "I_DIRTY_DATASYNC"),
        (I_DIRTY_PAGES, "I_DIRTY_PAGES"),
        (I_SYNC, "I_SYNC"),
    ]
    .iter()
    .filter(|&&(bit, _)| state & bit != 0)
    .map(|&(_, name)| name)
    .collect::<Vec<_>>()
    .join("|")
}

/// `writeback_single_inode` in the layout of patch 34 of the IO-less series v3, traced on
/// every return of `writeback_single_inode` (also the early one that only requeues an
/// inode someone else is writing): its state then, its age since `dirtied_when` in ms
/// (whole jiffies at HZ=250), the pages written (`nr_to_write` used up) and `nr_to_write`
/// at entry. Only under the series; other kernels trace [`writeback_single_inode`].
pub fn writeback_single_inode_v3(k: &mut Kernel, ino: usize, to_write: u64, wrote: u64) {
    if !enabled(k) || !k.ioless_v3() {
        return;
    }
    let inode = &k.inodes[ino];
    let name = bdi_dev_name(&k.bdis, inode.bdi);
    let state = show_inode_state(inode.state);
    let jiffies = |t: crate::engine::Nanos| t / JIFFY;
    let age_j = jiffies(k.sched.now()).saturating_sub(jiffies(inode.dirtied_when));
    let age = age_j * (JIFFY / crate::engine::MSEC);
    let (to_write, wrote) = (to_write.min(i64::MAX as u64), wrote.min(i64::MAX as u64));
    emit(
        k,
        "writeback_single_inode",
        format_args!(
            "bdi {name}: ino={} state={state} age={age} wrote={wrote} to_write={to_write}",
            i_ino(ino)
        ),
    );
}

/// `nfs_commit_unstable_pages` (patch 46 of the IO-less series v3; only under it): the
/// flusher's `write_inode` of NFS file `ino`. `npages` is the inode's write requests,
/// `in_commit` the pages in COMMITs in flight on its mount, `write_chunk` the flusher's
/// slice for the inode, `sync` whether the caller waits for the COMMIT (`FLUSH_SYNC`), and
/// `ret` the pages the call put in a COMMIT.
pub fn nfs_commit_unstable_pages(
    k: &mut Kernel,
    ino: usize,
    npages: u64,
    in_commit: u64,
    write_chunk: u64,
    sync: bool,
    ret: u64,
) {
    if !enabled(k) || !k.ioless_v3() {
        return;
    }
    let name = bdi_dev_name(&k.bdis, k.inodes[ino].bdi);
    emit(
        k,
        "nfs_commit_unstable_pages",
        format_args!(
            "bdi {name}: ino={} npages={npages} in_commit={in_commit} write_chunk={write_chunk} sync={} ret={ret}",
            i_ino(ino),
            sync as u8
        ),
    );
}

/// `nfs_commit_release` (patch 47 of the IO-less series v3; only under it): a COMMIT of
/// NFS file `ino` was answered. `range` is its `(offset, len)`: `(0, 0)`, the whole file,
/// unless patch 44 limits it to its first to last page index (page indices in the byte
/// fields, as the patch has it).
pub fn nfs_commit_release(k: &mut Kernel, ino: usize, range: (u64, u64)) {
    if !enabled(k) || !k.ioless_v3() {
        return;
    }
    let name = bdi_dev_name(&k.bdis, k.inodes[ino].bdi);
    let (offset, len) = range;
    emit(
        k,
        "nfs_commit_release",
        format_args!("bdi {name}: ino={} offset={offset} len={len}", i_ino(ino)),
    );
}

/// `writeback_single_inode`: one inode's turn in a writeback pass (jiffies at HZ=250,
/// from [`INITIAL_JIFFIES`]), in 3.x's layout. Under the IO-less series v3 the flusher
/// traces [`writeback_single_inode_v3`] instead.
pub fn writeback_single_inode(k: &mut Kernel, ino: usize, to_write: u64, wrote: u64) {
    if !enabled(k) || k.ioless_v3() {
        return;
    }
    let inode = &k.inodes[ino];
    let name = bdi_dev_name(&k.bdis, inode.bdi);
    // __print_flags of no flags prints nothing.
    use super::inode::{I_DIRTY_PAGES, I_SYNC};
    let state = match inode.state & (I_DIRTY_PAGES | I_SYNC) {
        0 => "",
        I_DIRTY_PAGES => "I_DIRTY_PAGES",
        I_SYNC => "I_SYNC",
        _ => "I_DIRTY_PAGES|I_SYNC",
    };
    let (dirtied_when, index) = (
        INITIAL_JIFFIES + inode.dirtied_when / JIFFY,
        inode.writeback_index,
    );
    let age = (k.sched.now() - inode.dirtied_when.min(k.sched.now())) / SEC;
    let to_write = to_write.min(i64::MAX as u64);
    emit(
        k,
        "writeback_single_inode",
        format_args!(
            "bdi {name}: ino={} state={state} dirtied_when={dirtied_when} age={age} index={index} to_write={to_write} wrote={wrote}",
            i_ino(ino)
        ),
    );
}

/// The shrinker of superblock `sb` as `%pF %p` prints it: `prune_super` (fs/super.c in 3.9)
/// and the address of the `super_block`'s embedded `s_shrink`. The symbol's size and the
/// addresses are made up but fixed: the root filesystem's superblock (0) at
/// `ffff88007b0c2ec8`, each later one 2 KiB on (superblocks come from `kmalloc-2048`).
fn sb_shrinker(sb: usize) -> String {
    format!(
        "prune_super+0x0/0x1b0 {:x}",
        0xffff_8800_7b0c_2ec8u64 + 0x800 * sb as u64
    )
}

/// `mm_shrink_slab_start` (3.9 fields): the deferred count taken (`nr`), the LRU pages
/// scanned and eligible, the cache's object count (`max_pass`), the new scan `delta` and
/// the `total_scan` to do.
#[allow(clippy::too_many_arguments)]
pub fn mm_shrink_slab_start(
    k: &mut Kernel,
    sb: usize,
    gfp: Gfp,
    nr: u64,
    pgs_scanned: u64,
    lru_pgs: u64,
    cache_items: u64,
    delta: u64,
    total_scan: u64,
) {
    if !enabled(k) {
        return;
    }
    emit(
        k,
        "mm_shrink_slab_start",
        format_args!(
            "{}: objects to shrink {nr} gfp_flags {} pgs_scanned {pgs_scanned} lru_pgs {lru_pgs} cache items {cache_items} delta {delta} total_scan {total_scan}",
            sb_shrinker(sb),
            show_gfp_flags(gfp)
        ),
    );
}

/// `mm_shrink_slab_end`: the deferred count taken at the start (`unused_scan`), the
/// deferred count left (`new_scan`), their difference and the shrinker's last return
/// value (objects left, or 0 if it was not called).
pub fn mm_shrink_slab_end(k: &mut Kernel, sb: usize, retval: i64, unused_scan: u64, new_scan: u64) {
    let total = new_scan as i64 - unused_scan as i64;
    emit(
        k,
        "mm_shrink_slab_end",
        format_args!(
            "{}: unused scan count {unused_scan} new scan count {new_scan} total_scan {total} last shrinker return val {retval}",
            sb_shrinker(sb)
        ),
    );
}

/// `mm_page_alloc`: an allocation's result (`__alloc_pages_nodemask`), `page=(null)
/// pfn=0` when it failed.
pub fn mm_page_alloc(k: &mut Kernel, pfn: Option<u32>, order: u32, gfp: Gfp) {
    if !enabled(k) {
        return;
    }
    let mt = migratetype(gfp);
    let flags = show_gfp_flags(gfp);
    match pfn {
        Some(pfn) => emit(
            k,
            "mm_page_alloc",
            format_args!(
                "page={:x} pfn={pfn} order={order} migratetype={mt} gfp_flags={flags}",
                page_ptr(pfn)
            ),
        ),
        None => emit(
            k,
            "mm_page_alloc",
            format_args!("page=(null) pfn=0 order={order} migratetype={mt} gfp_flags={flags}"),
        ),
    }
}

/// `mm_page_alloc_zone_locked`: a block taken off the buddy lists under the zone lock
/// (`__rmqueue`); 3.9 prints `percpu_refill=1` for every order-0 page.
#[inline]
pub fn mm_page_alloc_zone_locked(k: &mut Kernel, pfn: u32, order: u32, mt: usize) {
    if !enabled(k) {
        return;
    }
    emit(
        k,
        "mm_page_alloc_zone_locked",
        format_args!(
            "page={:x} pfn={pfn} order={order} migratetype={mt} percpu_refill={}",
            page_ptr(pfn),
            (order == 0) as u8
        ),
    );
}

/// `mm_page_pcpu_drain`: a page going from a CPU's list back to the buddy lists
/// (`free_pcppages_bulk`), with the migrate type it is freed as.
#[inline]
pub fn mm_page_pcpu_drain(k: &mut Kernel, pfn: u32, mt: usize) {
    if !enabled(k) {
        return;
    }
    emit(
        k,
        "mm_page_pcpu_drain",
        format_args!(
            "page={:x} pfn={pfn} order=0 migratetype={mt}",
            page_ptr(pfn)
        ),
    );
}

/// `mm_page_free`: a page going back to the allocator (`free_pages_prepare`).
#[inline]
pub fn mm_page_free(k: &mut Kernel, pfn: u32, order: u32) {
    if !enabled(k) {
        return;
    }
    emit(
        k,
        "mm_page_free",
        format_args!("page={:x} pfn={pfn} order={order}", page_ptr(pfn)),
    );
}

/// `mm_page_free_batched`: a page freed from a list (`free_hot_cold_page_list`: reclaim's
/// free list is cold, `release_pages`' is hot); `mm_page_free` follows for the same page.
#[inline]
pub fn mm_page_free_batched(k: &mut Kernel, pfn: u32, cold: bool) {
    if !enabled(k) {
        return;
    }
    emit(
        k,
        "mm_page_free_batched",
        format_args!(
            "page={:x} pfn={pfn} order=0 cold={}",
            page_ptr(pfn),
            cold as u8
        ),
    );
}

/// Tracing into memory, for the unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::Tracer;
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    /// A writer whose bytes the test reads afterwards.
    #[derive(Clone, Default)]
    pub(crate) struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Captured {
        /// The lines traced so far.
        pub(crate) fn lines(&self) -> Vec<String> {
            let text = String::from_utf8(self.0.lock().unwrap().clone()).unwrap();
            text.lines().map(str::to_string).collect()
        }

        /// The lines traced so far that contain `pat`.
        pub(crate) fn lines_with(&self, pat: &str) -> Vec<String> {
            self.lines()
                .into_iter()
                .filter(|l| l.contains(pat))
                .collect()
        }
    }

    /// Trace machine `w` into memory from now on.
    pub(crate) fn capture(w: &crate::mm::World) -> Captured {
        let cap = Captured::default();
        w.borrow_mut().trace = Some(Tracer::new(Box::new(cap.clone())));
        cap
    }
}

#[cfg(test)]
mod tests {
    use super::testing::Captured;
    use super::*;
    use crate::engine::{run_cpu, CpuMode};
    use crate::sim::{add_test_disk, boot_for_test, run_task};

    #[test]
    fn gfp_flags_print_as_3_9_show_gfp_flags() {
        let cases = [
            (Gfp::KERNEL, "GFP_KERNEL"),
            (Gfp::NOFS, "GFP_NOFS"),
            (
                Gfp(Gfp::KERNEL.0 | Gfp::RECLAIMABLE | Gfp::NOTRACK),
                // GFP_TEMPORARY is GFP_KERNEL with __GFP_RECLAIMABLE, and comes first.
                "GFP_TEMPORARY|GFP_NOTRACK",
            ),
            (Gfp::ATOMIC, "GFP_ATOMIC"),
            (Gfp::HIGHUSER_MOVABLE, "GFP_HIGHUSER_MOVABLE"),
            // __GFP_WRITE (0x1000000) has no name in 3.9's table.
            (
                Gfp(Gfp::HIGHUSER_MOVABLE.0 | Gfp::WRITE),
                "GFP_HIGHUSER_MOVABLE|0x1000000",
            ),
            (
                Gfp(Gfp::HIGHUSER_MOVABLE.0 | Gfp::ZERO),
                "GFP_HIGHUSER_MOVABLE|GFP_ZERO",
            ),
            (Gfp(0), "GFP_NOWAIT"),
            // __GFP_FS alone (0x80) and __GFP_HIGHMEM (0x2) are left over in hex.
            (Gfp(Gfp::FS), "0x80"),
            (Gfp(Gfp::KERNEL.0 | Gfp::HIGHMEM), "GFP_KERNEL|0x2"),
            (Gfp(Gfp::WAIT | Gfp::NORETRY), "GFP_NOIO|GFP_NORETRY"),
            (Gfp(Gfp::HIGH | Gfp::NO_KSWAPD), "GFP_ATOMIC|GFP_NO_KSWAPD"),
        ];
        for (g, want) in cases {
            assert_eq!(show_gfp_flags(g), want, "{:#x}", g.0);
        }
    }

    #[test]
    fn devices_are_named_major_colon_minor() {
        assert_eq!(dev_name("sda", None, 0), "8:0");
        assert_eq!(dev_name("sdb", None, 0), "8:16");
        assert_eq!(dev_name("sdp", None, 0), "8:240");
        assert_eq!(dev_name("sdq", None, 0), "65:0");
        assert_eq!(dev_name("sdaa", None, 0), "65:160");
        assert_eq!(dev_name("md0", None, 2), "9:0");
        // Other names: numbered as SCSI disks in configuration order.
        assert_eq!(dev_name("disk", None, 2), "8:32");
        assert_eq!(dev_name("nfs0", Some(0), 1), "0:38");
        assert_eq!(dev_name("nfs1", Some(1), 1), "0:39");
    }

    #[test]
    fn initial_jiffies_is_300_seconds_before_a_32_bit_wrap_at_hz_250() {
        assert_eq!(INITIAL_JIFFIES, (1u64 << 32) - 300 * 250);
    }

    /// A booted test machine with an ext3 disk `sda` and an ext4 disk `sdb`, tracing.
    fn traced_world() -> (crate::mm::World, Captured) {
        let w = boot_for_test(128, 0, "3.9");
        add_test_disk(&w, "sda", "ext3");
        add_test_disk(&w, "sdb", "ext4");
        let cap = super::testing::capture(&w);
        (w, cap)
    }

    #[test]
    fn kernel_threads_get_small_pids_and_3_9_names_devices_show_as_irq_work() {
        let (w, _) = traced_world();
        let mut k = w.borrow_mut();
        let Kernel {
            trace, sched, bdis, ..
        } = &mut *k;
        let t = trace.as_mut().unwrap();
        t.name_tasks(sched, bdis);
        let shown: Vec<(String, String, u32)> = (0..sched.nr_tasks())
            .map(|i| {
                let tc = &t.tasks[i];
                (
                    sched.task_name(TaskId(i as u32)).to_string(),
                    tc.comm.clone(),
                    tc.pid,
                )
            })
            .collect();
        let find = |name: &str| {
            shown
                .iter()
                .find(|(n, _, _)| n == name)
                .map(|(_, c, p)| (c.as_str(), *p))
                .unwrap()
        };
        assert_eq!(find("kswapd0"), ("kswapd0", 35));
        assert_eq!(find("flush-sda"), ("flush-8:0", 36));
        assert_eq!(find("kjournald-sda"), ("kjournald", 37));
        assert_eq!(find("flush-sdb"), ("flush-8:16", 38));
        for (name, comm, pid) in &shown {
            if name == "sda" || name.starts_with("sda/") || name.starts_with("sdb") {
                assert_eq!((comm.as_str(), *pid), ("<idle>", 0), "{name}");
                assert!(t.tasks[shown.iter().position(|s| &s.0 == name).unwrap()].softirq);
            }
        }
    }

    #[test]
    fn lines_follow_3_9_trace_print_context_and_tp_printk() {
        let (w, cap) = traced_world();
        // kswapd0 (task 0) has not run yet: shown on CPU 0 % 2.
        mm_vmscan_kswapd_wake(&mut w.borrow_mut(), 0);
        let w2 = w.clone();
        run_task(&w, 2 * SEC, async move {
            // The first free CPU is CPU 0.
            run_cpu(&w2, 1_500_000_000, CpuMode::System).await;
            let mut k = w2.borrow_mut();
            mm_page_alloc(
                &mut k,
                Some(4660),
                0,
                Gfp(Gfp::HIGHUSER_MOVABLE.0 | Gfp::WRITE),
            );
            mm_page_alloc(&mut k, None, 0, Gfp::HIGHUSER_MOVABLE);
            mm_vmscan_direct_reclaim_begin(&mut k, 0, true, Gfp::HIGHUSER_MOVABLE);
            mm_vmscan_lru_isolate(&mut k, 1, 0, 32, 32, 30, true);
            mm_vmscan_writepage(&mut k, 4660, true);
            mm_page_free_batched(&mut k, 4660, true);
            mm_page_free(&mut k, 4660, 0);
            mm_shrink_slab_start(&mut k, 0, Gfp::KERNEL, 5, 32, 1000, 1200, 76, 81);
            mm_shrink_slab_end(&mut k, 0, 1100, 5, 81);
            let ino = crate::mm::inode::new_inode(&mut k, "f", 0);
            writeback_single_inode(&mut k, ino, 1024, 0);
        });
        // The flushers' first background checks print global_dirty_state (tested on its own).
        let lines: Vec<String> = cap
            .lines()
            .into_iter()
            .filter(|l| !l.contains("global_dirty_state"))
            .collect();
        let user = "            test-2000  [000] .... ";
        let want = [
            "         kswapd0-35    [000] ....     0.000000: mm_vmscan_kswapd_wake: nid=0 order=0"
                .to_string(),
            // kswapd's first sleep, 100 ms after boot: it has used no CPU time yet, so it
            // is shown where it would run, the lowest free CPU (the test task holds 0).
            "         kswapd0-35    [001] ....     0.100000: mm_vmscan_kswapd_sleep: nid=0"
                .to_string(),
            format!("{user}    1.500000: mm_page_alloc: page=ffffea0000048d00 pfn=4660 order=0 migratetype=2 gfp_flags=GFP_HIGHUSER_MOVABLE|0x1000000"),
            format!("{user}    1.500000: mm_page_alloc: page=(null) pfn=0 order=0 migratetype=2 gfp_flags=GFP_HIGHUSER_MOVABLE"),
            format!("{user}    1.500000: mm_vmscan_direct_reclaim_begin: order=0 may_writepage=1 gfp_flags=GFP_HIGHUSER_MOVABLE"),
            "            test-2000  [000] d...     1.500000: mm_vmscan_lru_isolate: isolate_mode=1 order=0 nr_requested=32 nr_scanned=32 nr_taken=30 file=1".to_string(),
            format!("{user}    1.500000: mm_vmscan_writepage: page=ffffea0000048d00 pfn=4660 flags=RECLAIM_WB_FILE|RECLAIM_WB_ASYNC"),
            format!("{user}    1.500000: mm_page_free_batched: page=ffffea0000048d00 pfn=4660 order=0 cold=1"),
            format!("{user}    1.500000: mm_page_free: page=ffffea0000048d00 pfn=4660 order=0"),
            format!("{user}    1.500000: mm_shrink_slab_start: prune_super+0x0/0x1b0 ffff88007b0c2ec8: objects to shrink 5 gfp_flags GFP_KERNEL pgs_scanned 32 lru_pgs 1000 cache items 1200 delta 76 total_scan 81"),
            format!("{user}    1.500000: mm_shrink_slab_end: prune_super+0x0/0x1b0 ffff88007b0c2ec8: unused scan count 5 new scan count 81 total_scan 76 last shrinker return val 1100"),
        ];
        assert_eq!(&lines[..want.len()], &want[..]);
        // A clean inode of sda: no state flags, jiffies from INITIAL_JIFFIES.
        let wb = &lines[want.len()];
        assert!(
            wb.starts_with(&format!(
                "{user}    1.500000: writeback_single_inode: bdi 8:0: ino={} state= dirtied_when=4294892296 age=1 index=0 to_write=1024 wrote=0",
                w.borrow().inodes.len() - 1 + 12
            )),
            "{wb}"
        );
    }
}

#[cfg(test)]
mod global_dirty_state_tests {
    use crate::mm::vmstat::ZoneStat;
    use crate::sim::boot_for_test;

    #[test]
    fn global_dirty_state_prints_the_counters_and_limits_only_under_3_x() {
        for (preset, want) in [("3.9", true), ("ioless-v3", false), ("2.6.37-rc5", false)] {
            let w = boot_for_test(128, 0, preset);
            let cap = super::testing::capture(&w);
            let mut k = w.borrow_mut();
            k.zones[1].mod_stat(ZoneStat::nr_dirty, 7);
            k.zones[1].mod_stat(ZoneStat::nr_dirtied, 9);
            k.global_dirty_limit.limit = 5000;
            super::global_dirty_state(&mut k, 1000, 2000);
            k.zones[1].mod_stat(ZoneStat::nr_dirty, -7);
            drop(k);
            let lines = cap.lines();
            if want {
                assert_eq!(lines.len(), 1, "{preset}");
                assert!(
                    lines[0].ends_with(
                        "global_dirty_state: dirty=7 writeback=0 unstable=0 bg_thresh=1000 thresh=2000 limit=5000 dirtied=9 written=0"
                    ),
                    "{preset}: {}",
                    lines[0]
                );
            } else {
                assert!(lines.is_empty(), "{preset}: {lines:?}");
            }
        }
    }

    /// v3's layout (its patches 14 and 32): gaps as BDP_PERCENT, rates in KB/s, times in
    /// ms (4 per jiffy at HZ 250), signed think time and pause.
    #[test]
    fn balance_dirty_pages_of_ioless_v3_prints_gaps_rates_and_times() {
        let w = boot_for_test(128, 0, "ioless-v3");
        let sda = crate::sim::add_test_disk(&w, "sda", "xfs");
        let cap = super::testing::capture(&w);
        let t = crate::mm::page_writeback::V3Trace {
            bdi_dirty: 14_500,
            avg_dirty: 14_000,
            bdi_limit: 16_000,
            task_limit: 15_000,
            dirtied: 32,
            bdi_bw: 25_600,
            base_bw: 12_800,
            task_bw: 3_000,
            period: 3,
            think: -2,
            pause: 5,
        };
        super::balance_dirty_pages_v3(&mut w.borrow_mut(), sda, &t);
        let lines = cap.lines();
        assert_eq!(lines.len(), 1);
        // bdi_gap = (16000 - 14500) x 800 / 16000 = 75; task_gap = 1000 x 1600 / 16000 =
        // 100; task_weight = 1000 x 1600 / 16000 = 100 (each rounded from + 8000).
        assert!(
            lines[0].ends_with(
                "balance_dirty_pages: bdi 8:0: bdi_limit=16000 task_limit=15000 bdi_dirty=14500 avg_dirty=14000 bdi_gap=75% task_gap=100% task_weight=100% bdi_bw=102400 base_bw=51200 task_bw=12000 dirtied=32 period=12 think=-8 pause=20"
            ),
            "{}",
            lines[0]
        );
    }

    /// Patch 33 of v3: the global counters, limits and headroom (negative over the limit),
    /// the task's poll threshold and the file, only under the series.
    #[test]
    fn balance_dirty_state_is_traced_only_under_ioless_v3_with_a_signed_gap() {
        for (preset, want) in [("ioless-v3", true), ("3.9", false), ("2.6.37-rc5", false)] {
            let w = boot_for_test(128, 0, preset);
            let sda = crate::sim::add_test_disk(&w, "sda", "ext4");
            let cap = super::testing::capture(&w);
            let mut k = w.borrow_mut();
            let ino = crate::mm::inode::new_inode(&mut k, "f", sda);
            let stats = [
                (ZoneStat::nr_dirty, 1500),
                (ZoneStat::nr_writeback, 400),
                (ZoneStat::nr_unstable, 200),
            ];
            for (s, n) in stats {
                k.zones[1].mod_stat(s, n);
            }
            super::balance_dirty_state(&mut k, sda, ino, 1000, 2000, 37);
            for (s, n) in stats {
                k.zones[1].mod_stat(s, -n);
            }
            drop(k);
            let lines = cap.lines();
            if want {
                assert_eq!(lines.len(), 1, "{lines:?}");
                let end = format!(
                    "balance_dirty_state: bdi 8:0: dirty=1500 wb=400 unstable=200 bg_thresh=1000 thresh=2000 gap=-100 poll_thresh=37 ino={}",
                    ino + 12
                );
                assert!(lines[0].ends_with(&end), "{}", lines[0]);
            } else {
                assert!(lines.is_empty(), "{preset}: {lines:?}");
            }
        }
    }

    /// Patch 34 of v3: state flags in the kernel's order, age in ms from whole jiffies,
    /// `wrote` before `to_write`; 3.x's layout everywhere else, never both.
    #[test]
    fn writeback_single_inode_has_v3_s_layout_under_ioless_v3_only() {
        use crate::mm::inode::{I_DIRTY_DATASYNC, I_DIRTY_PAGES};
        for preset in ["ioless-v3", "3.9", "2.6.37-rc5"] {
            let w = boot_for_test(128, 0, preset);
            let sda = crate::sim::add_test_disk(&w, "sda", "ext4");
            let cap = super::testing::capture(&w);
            let ino = crate::mm::inode::new_inode(&mut w.borrow_mut(), "f", sda);
            let w2 = w.clone();
            crate::sim::run_task(&w, 2 * crate::engine::SEC, async move {
                crate::engine::sleep(&w2, 1_500 * crate::engine::MSEC).await;
                let mut k = w2.borrow_mut();
                k.inodes[ino].state = I_DIRTY_PAGES | I_DIRTY_DATASYNC;
                // Jiffy 63 (253 ms); now is jiffy 375: 312 jiffies, 1248 ms.
                k.inodes[ino].dirtied_when = 253 * crate::engine::MSEC;
                super::writeback_single_inode(&mut k, ino, 1024, 300);
                super::writeback_single_inode_v3(&mut k, ino, 1024, 300);
            });
            let lines = cap.lines_with("writeback_single_inode");
            assert_eq!(lines.len(), 1, "{preset}: {lines:?}");
            let v3 = format!(
                ": writeback_single_inode: bdi 8:0: ino={} state=I_DIRTY_DATASYNC|I_DIRTY_PAGES age=1248 wrote=300 to_write=1024",
                ino + 12
            );
            if preset == "ioless-v3" {
                assert!(lines[0].ends_with(&v3), "{}", lines[0]);
            } else {
                assert!(
                    lines[0].contains(" dirtied_when="),
                    "{preset}: {}",
                    lines[0]
                );
            }
        }
    }

    /// Patches 46 and 47 of v3: the NFS commit events print their fields in order, and
    /// only under the series.
    #[test]
    fn the_nfs_commit_events_are_traced_only_under_ioless_v3() {
        for preset in ["ioless-v3", "3.9", "2.6.37-rc5"] {
            let w = boot_for_test(128, 0, preset);
            let nfs =
                crate::sim::add_block_device(&w, &crate::scenario::BlockDevice::nfs_mount("nfs0"))
                    .unwrap();
            let cap = super::testing::capture(&w);
            let mut k = w.borrow_mut();
            let ino = crate::mm::inode::new_inode(&mut k, "f", nfs);
            super::nfs_commit_unstable_pages(&mut k, ino, 96, 64, 16384, false, 48);
            super::nfs_commit_release(&mut k, ino, (0, 0));
            drop(k);
            let lines = cap.lines();
            if preset != "ioless-v3" {
                assert!(lines.is_empty(), "{preset}: {lines:?}");
                continue;
            }
            assert_eq!(lines.len(), 2, "{lines:?}");
            let i = ino + 12;
            assert!(
                lines[0].ends_with(&format!(
                    "nfs_commit_unstable_pages: bdi 0:38: ino={i} npages=96 in_commit=64 write_chunk=16384 sync=0 ret=48"
                )),
                "{}",
                lines[0]
            );
            assert!(
                lines[1].ends_with(&format!(
                    "nfs_commit_release: bdi 0:38: ino={i} offset=0 len=0"
                )),
                "{}",
                lines[1]
            );
        }
    }
}
