//! Workloads: user programs a scenario composes. Each runs as one simulated task with its
//! own address space; it touches memory through the MMU model (`mm::memory::touch`) and
//! takes faults through the kernel.

pub mod cat;
pub mod dd;
pub mod mem_eater;
pub mod memcachetest;
pub mod mmap;

use crate::calibration::CPU_QUANTUM_NS;
use crate::engine::{self, CpuMode, Nanos, SEC};
use crate::mm::memory::{self, Access};
use crate::mm::page_alloc::AllocError;
use crate::mm::World;

/// Counters a workload keeps while it runs; turned into metrics at the end of the run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorkloadStats {
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

/// Access one page of `mm`: on a hit nothing runs; on a fault the CPU owed so far is charged
/// first, then the fault is handled and its kernel time owed.
pub async fn access(
    w: &World,
    mm: usize,
    vpn: u32,
    write: bool,
    debt: &mut CpuDebt,
) -> Result<(), AllocError> {
    let a = memory::touch(&mut w.borrow_mut(), mm, vpn, write);
    if a == Access::Fault {
        debt.flush(w).await;
        let cost = memory::handle_mm_fault(w, mm, vpn, write).await?;
        debt.system += cost.cpu;
        // The faulting access itself now hits.
        memory::touch(&mut w.borrow_mut(), mm, vpn, write);
    }
    Ok(())
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
    k.workloads[stats].killed = true;
}

/// Seconds from nanoseconds.
pub fn secs(ns: Nanos) -> f64 {
    ns as f64 / SEC as f64
}
