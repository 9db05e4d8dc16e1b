//! Workloads: user programs a scenario composes. Each runs as one simulated task with its
//! own address space; it touches memory through the MMU model (`mm::memory::touch`) and
//! takes faults through the kernel.

pub mod cat;
pub mod dd;
pub mod mem_eater;
pub mod memcachetest;
pub mod mmap;
pub mod parallelio;

use crate::calibration::CPU_QUANTUM_NS;
use crate::engine::{self, CpuMode, Nanos, SEC};
use crate::mm::memory::{self, Access};
use crate::mm::page_alloc::AllocError;
use crate::mm::{Kernel, World};

/// Where a workload is in its life. A run can end before a workload reaches its measured
/// phase; the report then says so instead of printing a metric of a phase that never ran.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Phase {
    /// Waiting for its `start` time.
    #[default]
    NotStarted,
    /// Started, waiting for a condition before its work (dd's "used memory" wait).
    Waiting,
    /// memcachetest setting every key once before the measured phase.
    Populating,
    /// Doing its work (memcachetest: the measured phase).
    Running,
    /// mem_eater's first pass over its memory.
    Filling,
    /// mem_eater holding its memory untouched.
    Holding,
    /// mem_eater re-touching its memory every interval.
    Retouching,
    /// Done and exited.
    Finished,
    /// Killed by the OOM killer.
    Killed,
}

impl Phase {
    /// The name reports use.
    pub fn name(self) -> &'static str {
        match self {
            Phase::NotStarted => "not started",
            Phase::Waiting => "waiting",
            Phase::Populating => "populating",
            Phase::Running => "running",
            Phase::Filling => "filling",
            Phase::Holding => "holding",
            Phase::Retouching => "retouching",
            Phase::Finished => "finished",
            Phase::Killed => "oom-killed",
        }
    }
}

/// Counters a workload keeps while it runs; turned into metrics at the end of the run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorkloadStats {
    /// Where it is now.
    pub phase: Phase,
    /// Work done in the current phase, out of `progress_total` (items set while populating,
    /// pages of the current mem_eater pass, pages of dd's file...).
    pub progress: u64,
    /// The current phase's whole work, in the units of `progress`.
    pub progress_total: u64,
    /// Operations completed (memcachetest).
    pub ops: u64,
    /// When it started running.
    pub started_at: Nanos,
    /// When it finished its first pass over its memory (mem_eater).
    pub touched_at: Option<Nanos>,
    /// Pages touched in total.
    pub pages_touched: u64,
    /// Completed re-touch passes (mem_eater), or passes over the mapping (mmap).
    pub passes: u64,
    /// Killed by the OOM killer.
    pub killed: bool,
    /// When its IO finished, `fdatasync` included (dd), or its last pass and `msync` (mmap).
    pub io_done_at: Option<Nanos>,
    /// When it finished and exited (a memcachetest with a duration, a parallelio driver).
    pub finished_at: Option<Nanos>,
    /// The parallelio driver's iterations, in the order run.
    pub parallelio: Vec<parallelio::Iteration>,
}

/// User space's own bookkeeping: every task's counters and the run's end condition. It
/// lives in the machine's opaque user slot (`Kernel::user`), which the kernel never reads.
#[derive(Debug, Default)]
pub struct Userspace {
    /// Each task's counters, by task slot ([`new_task`]).
    pub stats: Vec<WorkloadStats>,
    /// `[run] end = "workloads"`: how many scenario workloads (the first task slots) must
    /// finish to end the run.
    pub end_when_done: Option<usize>,
    /// Scenario workloads that have finished.
    pub done: usize,
}

impl Userspace {
    /// No task yet; the run ends when `end_when_done` scenario workloads have finished.
    pub fn new(end_when_done: Option<usize>) -> Userspace {
        Userspace {
            end_when_done,
            ..Default::default()
        }
    }
}

/// The workloads' bookkeeping, from the machine's user slot.
#[inline]
pub fn userspace(k: &mut Kernel) -> &mut Userspace {
    k.user
        .downcast_mut()
        .expect("the machine boots with the workloads' bookkeeping")
}

/// The counters of task slot `idx`.
#[inline]
pub fn stats(k: &mut Kernel, idx: usize) -> &mut WorkloadStats {
    &mut userspace(k).stats[idx]
}

/// The counters of task slot `idx`, read-only.
#[inline]
pub fn stats_of(k: &Kernel, idx: usize) -> &WorkloadStats {
    let u: &Userspace = k
        .user
        .downcast_ref()
        .expect("the machine boots with the workloads' bookkeeping");
    &u.stats[idx]
}

/// CPU time a workload has used and not yet been charged for.
#[derive(Debug, Default)]
pub struct CpuDebt {
    user: Nanos,
    system: Nanos,
}

impl CpuDebt {
    /// Add user time.
    pub fn user(&mut self, ns: Nanos) {
        self.user += ns;
    }

    /// Add system time.
    pub fn system(&mut self, ns: Nanos) {
        self.system += ns;
    }

    /// Charge everything owed now.
    pub async fn flush(&mut self, w: &World) {
        let (u, s) = (
            std::mem::take(&mut self.user),
            std::mem::take(&mut self.system),
        );
        engine::run_cpu(w, s, CpuMode::System).await;
        engine::run_cpu(w, u, CpuMode::User).await;
    }

    /// Charge once a quantum has built up.
    pub async fn maybe_flush(&mut self, w: &World) {
        if self.user + self.system >= CPU_QUANTUM_NS {
            self.flush(w).await;
        }
    }
}

pub use crate::mm::memory::AccessCounts;

/// Count one access in the machine's [`AccessCounts`].
#[inline]
fn count_access(c: &mut AccessCounts, a: Access) {
    match a {
        Access::Hit => c.hits += 1,
        Access::Fault => c.faulted += 1,
    }
}

/// Access one page of `mm`: on a hit nothing runs; on a fault the CPU owed so far is charged
/// first, then the fault is handled and its kernel time owed.
pub async fn access(
    w: &World,
    mm: usize,
    vpn: u32,
    write: bool,
    debt: &mut CpuDebt,
) -> Result<(), AllocError> {
    let a = {
        let mut k = w.borrow_mut();
        let a = memory::touch(&mut k, mm, vpn, write);
        count_access(&mut k.accesses, a);
        a
    };
    if a == Access::Fault {
        debt.flush(w).await;
        let cost = memory::handle_mm_fault(w, mm, vpn, write).await?;
        debt.system += cost.cpu;
        // The faulting access itself now hits (the same access, not counted again).
        memory::touch(&mut w.borrow_mut(), mm, vpn, write);
    }
    Ok(())
}

/// Sleep until the workload's start time, then note it as started.
pub async fn delay_start(w: &World, idx: usize, start: Nanos) {
    if start > 0 {
        engine::sleep(w, start).await;
    }
    let mut k = w.borrow_mut();
    let now = k.sched.now();
    let st = stats(&mut k, idx);
    st.started_at = now;
    // Threads of one workload start together; the first may already have moved on.
    if st.phase == Phase::NotStarted {
        st.phase = Phase::Running;
    }
}

/// One more page done: counted as touched, and as progress in the current phase.
pub fn page_done(w: &World, idx: usize) {
    let mut k = w.borrow_mut();
    let st = stats(&mut k, idx);
    st.pages_touched += 1;
    st.progress += 1;
}

/// Enter `phase`, with `total` units of work to do in it.
pub fn enter(k: &mut Kernel, idx: usize, phase: Phase, total: u64) {
    let st = stats(k, idx);
    st.phase = phase;
    st.progress = 0;
    st.progress_total = total;
}

/// Uniform integer in `0..n` from the run's RNG (multiply-shift, no modulo bias to speak of).
pub fn uniform(w: &World, n: u64) -> u64 {
    use rand_core::RngCore;
    let r = w.borrow_mut().rng.next_u64();
    ((r as u128 * n as u128) >> 64) as u64
}

/// Whether the current task has been killed.
pub fn killed(w: &World) -> bool {
    let k = w.borrow();
    k.sched.is_killed(k.sched.current())
}

/// Tear the workload down after an OOM kill.
pub fn exit(w: &World, mm: usize, stats: usize) {
    let mut k = w.borrow_mut();
    crate::mm::memory::exit_mmap(&mut k, mm);
    self::stats(&mut k, stats).killed = true;
    finished(&mut k, stats);
    self::stats(&mut k, stats).phase = Phase::Killed;
}

/// The workload has finished: note when, and wake whoever waits for it.
pub fn finished(k: &mut Kernel, stats: usize) {
    let now = k.sched.now();
    let u = userspace(k);
    let st = &mut u.stats[stats];
    if st.finished_at.is_some() {
        return;
    }
    st.finished_at = Some(now);
    st.phase = Phase::Finished;
    if u.end_when_done.is_some_and(|n| stats < n) {
        u.done += 1;
        if u.end_when_done == Some(u.done) {
            k.halt = true;
        }
    }
    let q = k.wq.child_exit;
    k.sched.wake_all(q);
}

/// A new task slot: its counters and its address space (`fork`); returns its index.
pub fn new_task(k: &mut Kernel, name: &str) -> usize {
    let u = userspace(k);
    u.stats.push(WorkloadStats::default());
    let idx = u.stats.len() - 1;
    k.mms.push(crate::mm::memory::Mm {
        name: name.to_string(),
        ..Default::default()
    });
    idx
}

/// Wait until workload `stats` has finished (`waitpid`).
pub async fn wait_for(w: &World, stats: usize) {
    loop {
        let q = {
            let k = w.borrow();
            if stats_of(&k, stats).finished_at.is_some() {
                return;
            }
            k.wq.child_exit
        };
        crate::engine::wait_event(w, q, None, false).await;
    }
}

/// Seconds from nanoseconds.
pub fn secs(ns: Nanos) -> f64 {
    ns as f64 / SEC as f64
}
