//! Tracepoints (`include/trace/events/vmscan.h`), written in ftrace's text layout so that
//! tools reading a real `trace_pipe` (e.g. `trace-vmscan-postprocess.pl`) can read them:
//!
//! ```text
//!          kswapd0-1     [000]    12.345678: mm_vmscan_kswapd_wake: nid=0 order=0
//! ```
//!
//! The task column is the simulated thread's name and id; every thread is shown on CPU 000
//! (mmsim does not track which CPU runs a thread). Event fields and their order follow the
//! 3.x `TP_printk` formats.

use super::Kernel;
use crate::engine::SEC;
use std::fmt::Arguments;
use std::io::Write;

/// Where trace lines go (`--trace FILE`).
pub struct Tracer {
    out: Box<dyn Write + Send>,
    /// The first write error; tracing stops after it and the run reports it.
    pub error: Option<std::io::Error>,
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
        Tracer { out, error: None }
    }

    /// Flush buffered lines.
    pub fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// Write one event line for the current task.
fn emit(k: &mut Kernel, event: &str, fields: Arguments<'_>) {
    let Some(t) = k.trace.as_mut() else { return };
    if t.error.is_some() {
        return;
    }
    let now = k.sched.now();
    let me = k.sched.current();
    let name = k.sched.task_name(me);
    let r = writeln!(
        t.out,
        "{:>16}-{:<5} [000] {:5}.{:06}: {event}: {fields}",
        name,
        me.0 + 1,
        now / SEC,
        now % SEC / 1000
    );
    if let Err(e) = r {
        t.error = Some(e);
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
pub fn mm_vmscan_direct_reclaim_begin(k: &mut Kernel, order: u32, may_writepage: bool, gfp: &str) {
    emit(
        k,
        "mm_vmscan_direct_reclaim_begin",
        format_args!(
            "order={order} may_writepage={} gfp_flags={gfp}",
            may_writepage as u8
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
    emit(
        k,
        "mm_vmscan_lru_isolate",
        format_args!(
            "isolate_mode={isolate_mode} order={order} nr_requested={nr_requested} nr_scanned={nr_scanned} nr_taken={nr_taken} file={}",
            file as u8
        ),
    );
}

/// `mm_vmscan_writepage`. The `page=` field is the address a `struct page` at `pfn` would
/// have in the x86-64 vmemmap, so traces carry a realistic pointer.
pub fn mm_vmscan_writepage(k: &mut Kernel, pfn: u32, file: bool) {
    let page = 0xffff_ea00_0000_0000u64 + pfn as u64 * 64;
    emit(
        k,
        "mm_vmscan_writepage",
        format_args!("page={page:#x} pfn={pfn} flags={}", reclaim_flags(file)),
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

/// `balance_dirty_pages` (3.3+ fields; rates in KB/s, times in ms). mmsim deviation: the
/// `bdi` field shows the device name where the kernel shows its major:minor.
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
    let name = k.bdis[bdi].name.clone();
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

/// `writeback_single_inode`: one inode's turn in a writeback pass (jiffies at HZ=250).
pub fn writeback_single_inode(k: &mut Kernel, ino: usize, to_write: u64, wrote: u64) {
    let inode = &k.inodes[ino];
    let name = k.bdis[inode.bdi].name.clone();
    let state = match inode.state & (crate::fs::inode::I_DIRTY_PAGES | crate::fs::inode::I_SYNC) {
        0 => "0",
        crate::fs::inode::I_DIRTY_PAGES => "I_DIRTY_PAGES",
        crate::fs::inode::I_SYNC => "I_SYNC",
        _ => "I_DIRTY_PAGES|I_SYNC",
    };
    let jiffy = crate::engine::JIFFY;
    let (dirtied_when, index) = (inode.dirtied_when / jiffy, inode.writeback_index);
    let age = (k.sched.now() - inode.dirtied_when.min(k.sched.now())) / SEC;
    let to_write = to_write.min(i64::MAX as u64);
    emit(
        k,
        "writeback_single_inode",
        format_args!(
            "bdi {name}: ino={} state={state} dirtied_when={dirtied_when} age={age} index={index} to_write={to_write} wrote={wrote}",
            ino + 12
        ),
    );
}
