//! Workloads: user programs a scenario composes. Each runs as one simulated task with its
//! own address space; it touches memory through the MMU model (`mm::memory::touch`) and
//! takes faults through the kernel.

pub mod cat;
pub mod daemons;
pub mod dd;
pub mod fsmark;
pub mod highalloc;
pub mod kbuild;
pub mod malloc;
pub mod mem_eater;
pub mod memcachetest;
pub mod micro;
pub mod mmap;
pub mod parallelio;
pub mod simple_writeback;
pub mod stress_highalloc;

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
    /// A highalloc pass, once it has ended.
    pub highalloc: Option<highalloc::HighallocPass>,
    /// A kbuild's finished builds.
    pub kbuild: Option<kbuild::KbuildStats>,
    /// A stress-highalloc driver's passes, once it has ended.
    pub stress_highalloc: Option<stress_highalloc::StressHighallocStats>,
    /// A simple-writeback driver's phases, in the order run.
    pub simple_writeback: Vec<simple_writeback::Phase>,
    /// A fs_mark's iterations, in the order run.
    pub fsmark: Vec<fsmark::Iteration>,
    /// A micro driver's tests, in the order run.
    pub micro: Vec<micro::TestRun>,
}

/// User space's own bookkeeping: every task's counters and the run's end condition. It
/// lives in the machine's opaque user slot (`Kernel::user`), which the kernel never reads.
#[derive(Debug, Default)]
pub struct Userspace {
    /// Each task's counters, by task slot ([`new_task`]).
    pub stats: Vec<WorkloadStats>,
    /// `[run] end = "workloads"`: which scenario workloads (the first task slots) the run
    /// waits for; empty when it runs to its duration.
    pub awaited: Vec<bool>,
    /// Awaited workloads that have not finished.
    pub left: usize,
}

impl Userspace {
    /// No task yet; the run ends when every scenario workload `awaited` marks has finished.
    pub fn new(awaited: Vec<bool>) -> Userspace {
        Userspace {
            left: awaited.iter().filter(|&&a| a).count(),
            awaited,
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
        if self.due() {
            self.flush(w).await;
        }
    }

    /// Whether a quantum has built up ([`CpuDebt::maybe_flush`] would charge).
    #[inline]
    pub fn due(&self) -> bool {
        self.user + self.system >= CPU_QUANTUM_NS
    }

    /// Charge what is owed without waiting, if no other task could run meanwhile
    /// ([`engine::run_cpu_now_split`]): all of it or, returning false, none, which
    /// [`CpuDebt::flush`] must then charge.
    #[inline]
    pub fn flush_now(&mut self, k: &mut Kernel) -> bool {
        if !engine::run_cpu_now_split(k, self.system, self.user) {
            return false;
        }
        self.system = 0;
        self.user = 0;
        true
    }

    /// [`CpuDebt::maybe_flush`] for a caller holding the kernel: charges at once if it can,
    /// else returns true and the caller, once it has let go of the kernel, must
    /// `flush().await`.
    #[inline]
    pub fn maybe_flush_now(&mut self, k: &mut Kernel) -> bool {
        self.due() && !self.flush_now(k)
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

/// Access one page of `mm`: on a hit nothing runs; on a fault, the fault is handled and its
/// kernel time owed. A fault that needs no wait is handled at once while less than a
/// quantum is owed, as the task would take it on the CPU it holds (the quantum is the
/// model's time slice: CFS would not take the CPU at every fault); a fault that may sleep,
/// or one met with a quantum owed, has the debt charged first. What needs no wait is done
/// at once ([`access_range_now`]); the task awaits only for the rest.
pub async fn access(
    w: &World,
    mm: usize,
    vpn: u32,
    write: bool,
    debt: &mut CpuDebt,
) -> Result<(), AllocError> {
    if access_range_now(&mut w.borrow_mut(), mm, vpn..vpn + 1, write, debt) > vpn {
        return Ok(());
    }
    access_slow(w, mm, vpn, write, debt).await
}

/// [`access`] the long way: every step that may wait awaited (a fault short of a quantum
/// that needs no wait is still handled at once, as [`access`] does).
pub async fn access_slow(
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
        if !debt.due() {
            // Short of a quantum: taken on the CPU the task holds. (Callers that come from
            // access_range_now have tried this already; it fails again, cheaply, as it did.)
            let mut k = w.borrow_mut();
            if let Some(cost) = memory::handle_mm_fault_now(&mut k, mm, vpn) {
                debt.system += cost.cpu;
                memory::touch(&mut k, mm, vpn, write);
                return Ok(());
            }
        }
        debt.flush(w).await;
        let cost = memory::handle_mm_fault(w, mm, vpn, write).await?;
        debt.system += cost.cpu;
        // The faulting access itself now hits (the same access, not counted again).
        memory::touch(&mut w.borrow_mut(), mm, vpn, write);
    }
    Ok(())
}

/// The MMU's part of accessing every page of `vpns` in turn, in one borrow: each page that
/// is present is a hit, counted as [`access`] counts it, up to the first that needs a
/// fault. Returns that page (`vpns.end` if every page hit).
#[inline]
pub fn touch_range(k: &mut Kernel, mm: usize, vpns: std::ops::Range<u32>, write: bool) -> u32 {
    let start = vpns.start;
    let miss = memory::touch_range(k, mm, vpns, write);
    k.accesses.hits += u64::from(miss - start);
    miss
}

/// [`access`] to every page of `vpns` in turn as far as it needs no wait, in one borrow:
/// the hits ([`touch_range`]), and the faults that need none: with a quantum owed, the CPU
/// owed is charged at once ([`CpuDebt::flush_now`]), and the fault is handled at once
/// ([`memory::handle_mm_fault_now`]). Returns the first page that needs more (`vpns.end`
/// if none did); [`access_slow`] does that page the long way, with the same outcome as if
/// every step had been awaited.
pub fn access_range_now(
    k: &mut Kernel,
    mm: usize,
    vpns: std::ops::Range<u32>,
    write: bool,
    debt: &mut CpuDebt,
) -> u32 {
    let mut vpn = vpns.start;
    loop {
        vpn = touch_range(k, mm, vpn..vpns.end, write);
        if vpn >= vpns.end || (debt.due() && !debt.flush_now(k)) {
            return vpn;
        }
        let Some(cost) = memory::handle_mm_fault_now(k, mm, vpn) else {
            return vpn;
        };
        k.accesses.faulted += 1;
        debt.system += cost.cpu;
        // The faulting access itself now hits (the same access, not counted again).
        memory::touch(k, mm, vpn, write);
        vpn += 1;
    }
}

/// [`access`] to every page of `vpns` in turn: what needs no wait in one borrow
/// ([`access_range_now`]), the rest awaited.
pub async fn access_range(
    w: &World,
    mm: usize,
    vpns: std::ops::Range<u32>,
    write: bool,
    debt: &mut CpuDebt,
) -> Result<(), AllocError> {
    let mut vpn = vpns.start;
    loop {
        vpn = access_range_now(&mut w.borrow_mut(), mm, vpn..vpns.end, write, debt);
        if vpn >= vpns.end {
            return Ok(());
        }
        access_slow(w, mm, vpn, write, debt).await?;
        vpn += 1;
    }
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
    page_done_k(&mut w.borrow_mut(), idx);
}

/// [`page_done`] for a caller holding the kernel.
#[inline]
pub fn page_done_k(k: &mut Kernel, idx: usize) {
    let st = stats(k, idx);
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
    uniform_k(&mut w.borrow_mut(), n)
}

/// [`uniform`] for a caller holding the kernel.
#[inline]
pub fn uniform_k(k: &mut Kernel, n: u64) -> u64 {
    uniform_rng(&mut k.rng, n)
}

/// [`uniform`] from `rng`.
#[inline]
pub fn uniform_rng(rng: &mut impl rand_core::RngCore, n: u64) -> u64 {
    ((rng.next_u64() as u128 * n as u128) >> 64) as u64
}

/// Whether the current task has been killed.
pub fn killed(w: &World) -> bool {
    killed_k(&w.borrow())
}

/// [`killed`] for a caller holding the kernel.
#[inline]
pub fn killed_k(k: &Kernel) -> bool {
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
    if u.awaited.get(stats) == Some(&true) {
        u.left -= 1;
        if u.left == 0 {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::MSEC;
    use std::cell::Cell;
    use std::rc::Rc;

    /// What an access can change: the page tables, every frame's state and the LRU lists,
    /// the counters, the clock and the CPU accounting.
    fn state(k: &Kernel, mm: usize) -> String {
        let lists: Vec<Vec<Pfn>> = k
            .zones
            .iter()
            .flat_map(|z| z.lruvec.lists.iter().map(|l| l.iter(&k.pages).collect()))
            .collect();
        format!(
            "{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}",
            k.mms[mm].vmas.iter().map(|v| &v.ptes).collect::<Vec<_>>(),
            (
                &k.pages.flags,
                &k.pages.mapping,
                &k.pages.index,
                &k.pages.private
            ),
            lists,
            k.proc_vmstat(),
            k.accesses,
            (
                k.mms[mm].rss,
                k.mms[mm].swapents,
                k.mms[mm].min_flt,
                k.mms[mm].maj_flt
            ),
            k.sched.cpu_times(),
            k.sched.now(),
        )
    }

    use crate::mm::page::Pfn;

    /// Runs of pages to access: some repeat earlier ones (hits), some are new (faults),
    /// some straddle both; over the test's run the mapping outgrows RAM, so faults also
    /// take the allocator's slow path, reclaim and swap-ins.
    fn runs(pages: u32) -> Vec<(std::ops::Range<u32>, bool)> {
        let mut next = crate::test_numbers(12345);
        let mut v = Vec::new();
        let mut frontier = 0;
        while frontier < pages {
            let len = 1 + next(6) as u32;
            let start = if next(3) == 0 {
                frontier.saturating_sub(next(4) as u32)
            } else {
                next(frontier.max(1) as u64) as u32
            };
            let end = (start + len).min(pages);
            frontier = frontier.max(end);
            v.push((start..end, next(2) == 0));
        }
        v
    }

    /// A task that sleeps `period` ns, `ticks` times: a timer always due soon, so that a
    /// CPU charge longer than `period` cannot be made on the spot (`run_cpu_now`).
    pub(crate) fn spawn_ticker(w: &World, period: Nanos, ticks: u32) {
        let w1 = w.clone();
        w.borrow_mut().sched.spawn("ticker", async move {
            for _ in 0..ticks {
                engine::sleep(&w1, period).await;
            }
        });
    }

    /// Run the access list on a fresh 16 MiB machine, each run through [`access_range`]
    /// (`fast`) or page by page through [`access_slow`], with another task's timer every
    /// 37 µs; returns the state after every 32nd run and the last, and the access counts.
    fn run(fast: bool) -> (Vec<String>, AccessCounts) {
        let w = crate::sim::boot_for_test(16, 32, "3.9");
        let mm = new_task(&mut w.borrow_mut(), "test");
        // Another task's timers, so that a debt cannot always be charged on the spot.
        spawn_ticker(&w, 37_000, 400_000);
        let pages = 6 * 1024; // 24 MiB
        let seen = Rc::new(std::cell::RefCell::new(Vec::new()));
        let done = Rc::new(Cell::new(false));
        let (w2, s, d) = (w.clone(), seen.clone(), done.clone());
        crate::sim::run_task(&w, 600 * crate::engine::SEC, async move {
            let start = w2.borrow_mut().mms[mm].mmap_anon(pages, 0);
            let mut debt = CpuDebt::default();
            let runs = runs(pages);
            let n = runs.len();
            for (i, (r, write)) in runs.into_iter().enumerate() {
                let vpns = start + r.start..start + r.end;
                if fast {
                    access_range(&w2, mm, vpns, write, &mut debt).await.unwrap();
                } else {
                    for vpn in vpns {
                        access_slow(&w2, mm, vpn, write, &mut debt).await.unwrap();
                    }
                }
                debt.user(3 * MSEC / 100);
                debt.maybe_flush(&w2).await;
                if i % 32 == 0 || i + 1 == n {
                    s.borrow_mut().push(state(&w2.borrow(), mm));
                }
            }
            d.set(true);
        });
        assert!(done.get());
        let a = w.borrow().accesses;
        (seen.take(), a)
    }

    /// A fault that needs no wait, owed less than a quantum, is handled at once: the task
    /// keeps going as it would on its CPU, and the fault's kernel time joins what it owes,
    /// even when a timer of another task is due before that debt would end (so the debt
    /// cannot be charged on the spot). Owed a quantum, it is charged first.
    #[test]
    fn a_fault_short_of_a_quantum_is_handled_without_charging_the_debt_first() {
        use crate::calibration::{CPU_QUANTUM_NS, MINOR_FAULT_NS};
        let w = crate::sim::boot_for_test(16, 32, "3.9");
        let mm = new_task(&mut w.borrow_mut(), "test");
        // Another task's timer, due 1 µs in: run_cpu_now cannot charge past it.
        spawn_ticker(&w, 1_000, 10_000);
        let seen = Rc::new(std::cell::RefCell::new(Vec::new()));
        let (w2, s) = (w.clone(), seen.clone());
        crate::sim::run_task(&w, crate::engine::SEC, async move {
            let start = w2.borrow_mut().mms[mm].mmap_anon(2, 0);
            let mut debt = CpuDebt::default();
            debt.user(5_000);
            let t0 = w2.borrow().sched.now();
            access_slow(&w2, mm, start, true, &mut debt).await.unwrap();
            let t1 = w2.borrow().sched.now();
            s.borrow_mut().push((t1 - t0, debt.user, debt.system));
            debt.user(CPU_QUANTUM_NS);
            let owed = debt.user + debt.system;
            access_slow(&w2, mm, start + 1, true, &mut debt)
                .await
                .unwrap();
            let t2 = w2.borrow().sched.now();
            s.borrow_mut()
                .push((t2 - t1, owed, debt.user + debt.system));
        });
        let seen = seen.take();
        assert_eq!(seen.len(), 2, "the task ran to its end");
        assert_eq!(
            seen[0],
            (0, 5_000, MINOR_FAULT_NS),
            "handled at once, cost owed"
        );
        let (took, owed, left) = seen[1];
        assert!(
            took >= owed,
            "the quantum owed was charged first: {took} < {owed}"
        );
        assert_eq!(left, MINOR_FAULT_NS, "only the second fault's cost is owed");
        assert_eq!(w.borrow().accesses.faulted, 2);
    }

    /// `flush_now` charges the whole debt on the spot when nothing could run before it
    /// ends, and nothing of it when something could, even where the system part alone
    /// would fit.
    #[test]
    fn flush_now_charges_all_of_a_debt_or_none() {
        let w = crate::sim::boot_for_test(16, 0, "3.9");
        let seen = Rc::new(std::cell::RefCell::new(Vec::new()));
        let (w2, s) = (w.clone(), seen.clone());
        // Charge 100 µs of system and 200 µs of user time owed, at once if it can.
        let try_flush = |k: &mut Kernel| {
            let mut debt = CpuDebt::default();
            debt.system(100_000);
            debt.user(200_000);
            let (t0, me) = (k.sched.now(), k.sched.current());
            let ok = debt.flush_now(k);
            (
                ok,
                k.sched.now() - t0,
                k.sched.task_times(me),
                debt.user + debt.system,
            )
        };
        crate::sim::run_task(&w, crate::engine::SEC, async move {
            let first = try_flush(&mut w2.borrow_mut());
            s.borrow_mut().push(first);
            // Another task's timer 150 µs away: the system part would fit before it, the
            // whole debt not.
            spawn_ticker(&w2, 150_000, 1);
            crate::engine::sleep(&w2, 1).await;
            let second = try_flush(&mut w2.borrow_mut());
            s.borrow_mut().push(second);
        });
        let seen = seen.take();
        assert_eq!(seen[0], (true, 300_000, (200_000, 100_000), 0));
        assert_eq!(seen[1], (false, 0, (200_000, 100_000), 300_000));
    }

    /// The one-borrow path ([`access_range_now`]: hits, CPU charged without a timer,
    /// anonymous faults without an await) leaves the same page state, counters, clock and
    /// CPU accounting as awaiting every step, all along a mixed hit/miss list.
    #[test]
    fn access_range_does_what_access_slow_does_page_by_page() {
        let (fast, fast_counts) = run(true);
        let (slow, slow_counts) = run(false);
        assert_eq!(fast.len(), slow.len());
        for (i, (f, s)) in fast.iter().zip(&slow).enumerate() {
            assert_eq!(f, s, "state at sample {i}");
        }
        assert_eq!(fast_counts, slow_counts);
        // The list covered what it must: hits, faults, and pressure enough to swap.
        assert!(fast_counts.hits > 1000 && fast_counts.faulted > 6 * 1024);
        let last = slow.last().unwrap();
        assert!(
            last.contains("(\"pswpin\"") && !last.contains("(\"pswpin\", 0)"),
            "pages were swapped back in"
        );
    }
}
