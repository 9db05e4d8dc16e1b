//! The discrete-event engine: simulated time, threads, sleeps, wait queues and CPUs.
//!
//! The engine knows nothing about pages. A simulated thread is a Rust `async` task; the
//! places where a kernel thread would block (a timed sleep, `congestion_wait`, waiting for
//! a page to be unlocked, waiting for a CPU) are `.await` points on the futures below. All
//! state lives in one `World` behind a `RefCell`; tasks borrow it between awaits only.
//!
//! # Ordering guarantees
//! 1. Events are ordered by (time, sequence number). The sequence number is taken when an
//!    event is scheduled, so two events due at the same instant run first-in first-out.
//! 2. A task woken at the current instant (by a wait queue or a CPU hand-over) runs before
//!    any timer that is due later, and after every task woken before it.
//!
//! Nothing here reads the wall clock or iterates a hash map, so a run is a pure function of
//! its inputs and its seed.

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

/// Simulated nanoseconds since boot.
pub type Nanos = u64;
/// One microsecond.
pub const USEC: Nanos = 1_000;
/// One millisecond.
pub const MSEC: Nanos = 1_000_000;
/// One second.
pub const SEC: Nanos = 1_000_000_000;
/// `HZ/10`, the kernel's usual reclaim nap, is 100 ms whatever HZ is.
pub const HZ_10: Nanos = 100 * MSEC;
/// `HZ/50`, the allocator's retry nap.
pub const HZ_50: Nanos = 20 * MSEC;
/// One jiffy at HZ=250, the usual distribution setting of the 3.x era.
pub const JIFFY: Nanos = 4 * MSEC;

/// A simulated thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TaskId(pub u32);

/// A wait queue: tasks sleep on it until someone wakes the queue or their timeout passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct WaitQueueId(pub u32);

/// Why a wait ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WakeReason {
    /// The queue was woken.
    Woken,
    /// The timeout passed first.
    Timeout,
    /// The task was killed while in a killable wait.
    Killed,
}

/// CPU time is accounted to user or system mode, as `/usr/bin/time` reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuMode {
    /// Workload code.
    User,
    /// Kernel code: faults, reclaim, kswapd.
    System,
}

#[derive(Debug)]
struct TaskState {
    name: String,
    /// Bumped on every wake-up; a registration carrying an older value is stale.
    gen: u32,
    reason: WakeReason,
    killable: bool,
    killed: bool,
    done: bool,
    /// The current wait has a timer in the heap.
    timer_armed: bool,
    user_ns: Nanos,
    sys_ns: Nanos,
    /// The CPU the task last ran on (`task_cpu`), if it ever held one.
    cpu: Option<u32>,
    /// The control group the task is in (an index the model gives meaning to; 0 is the
    /// root). A spawned task starts in its spawner's group, as `fork` puts a child.
    cgroup: u16,
    /// The CPUs it may run on (`sched_setaffinity`): an index into [`Sched::cpusets`], 0
    /// for every CPU. A spawned task inherits its spawner's, as `fork` does.
    cpus_allowed: u16,
}

type BoxFuture = Pin<Box<dyn Future<Output = ()>>>;

/// A set of CPUs as a bitmap: CPU `c` is bit `c % 64` of word `c / 64`. The scheduler asks
/// "may this task run there" and "the lowest free CPU it may use" at every CPU slice, so
/// both are word operations rather than list scans.
#[derive(Clone, Debug, Default, PartialEq)]
struct CpuMask(Vec<u64>);

impl CpuMask {
    /// The empty set on a machine of `cpus` CPUs.
    fn new(cpus: u32) -> CpuMask {
        CpuMask(vec![0; cpus.div_ceil(64) as usize])
    }

    fn test(&self, c: usize) -> bool {
        self.0[c / 64] >> (c % 64) & 1 != 0
    }

    fn set(&mut self, c: usize, on: bool) {
        let bit = 1 << (c % 64);
        if on {
            self.0[c / 64] |= bit;
        } else {
            self.0[c / 64] &= !bit;
        }
    }

    fn count(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The lowest CPU below `cpus` not in the set.
    fn first_clear(&self, cpus: usize) -> Option<usize> {
        self.0
            .iter()
            .enumerate()
            .find(|(_, &w)| w != u64::MAX)
            .map(|(i, &w)| i * 64 + (!w).trailing_zeros() as usize)
            .filter(|&c| c < cpus)
    }

    /// The lowest CPU in this set and not in `other` (of the same machine).
    /// The lowest CPU in the set.
    fn first_set(&self) -> Option<usize> {
        self.0
            .iter()
            .enumerate()
            .find(|(_, &w)| w != 0)
            .map(|(i, &w)| i * 64 + w.trailing_zeros() as usize)
    }

    fn first_not_in(&self, other: &CpuMask) -> Option<usize> {
        self.0
            .iter()
            .zip(&other.0)
            .enumerate()
            .find(|(_, (&a, &b))| a & !b != 0)
            .map(|(i, (&a, &b))| i * 64 + (a & !b).trailing_zeros() as usize)
    }
}

/// The scheduler state: clock, timers, run queue, wait queues and CPUs.
pub struct Sched {
    now: Nanos,
    seq: u64,
    /// (due, seq, task, gen): a min-heap through `Reverse`; `seq` breaks ties FIFO.
    timers: BinaryHeap<Reverse<(Nanos, u64, u32, u32)>>,
    /// Timers of waits that ended before them (woken early); dropped in bulk once they
    /// are half the heap, so that they die with their wait instead of when due.
    stale_timers: usize,
    ready: VecDeque<(u32, u32)>,
    current: u32,
    tasks: Vec<TaskState>,
    queues: Vec<Vec<(u32, u32)>>,
    cpus_free: u32,
    cpus: u32,
    /// Which CPU each held CPU slot is: bit `c` while a task holds CPU `c`. Only
    /// bookkeeping for `task_cpu`; which CPU a task gets never changes when it runs.
    cpu_busy: CpuMask,
    /// Tasks waiting for a CPU, FIFO.
    runq: VecDeque<u32>,
    spawned: Vec<(u32, BoxFuture)>,
    /// The time the running [`Executor::run_until`] stops at: no task runs ahead past it.
    horizon: Nanos,
    /// The group tasks spawned from outside any task start in (set up code's `cgroup.procs`).
    spawn_cgroup: Option<u16>,
    /// CPU masks tasks are pinned to; entry 0 (every CPU) is never read.
    cpusets: Vec<CpuMask>,
    /// The mask tasks spawned from outside any task start with (set-up code's `taskset`).
    spawn_cpus_allowed: Option<u16>,
}

impl std::fmt::Debug for Sched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sched")
            .field("now", &self.now)
            .field("tasks", &self.tasks.len())
            .field("timers", &self.timers.len())
            .finish()
    }
}

impl Sched {
    /// A scheduler for a machine with `cpus` CPUs.
    pub fn new(cpus: u32) -> Sched {
        Sched {
            now: 0,
            seq: 0,
            timers: BinaryHeap::new(),
            stale_timers: 0,
            ready: VecDeque::new(),
            current: 0,
            tasks: Vec::new(),
            queues: Vec::new(),
            cpus_free: cpus.max(1),
            cpus: cpus.max(1),
            cpu_busy: CpuMask::new(cpus.max(1)),
            runq: VecDeque::new(),
            spawned: Vec::new(),
            horizon: 0,
            spawn_cgroup: None,
            cpusets: vec![CpuMask::default()],
            spawn_cpus_allowed: None,
        }
    }

    /// The current simulated time.
    #[inline]
    pub fn now(&self) -> Nanos {
        self.now
    }

    /// The task being polled.
    #[inline]
    pub fn current(&self) -> TaskId {
        TaskId(self.current)
    }

    /// `need_resched()`: another task is waiting for the running one's CPU (a waiter that
    /// may run there), so the running one should yield.
    #[inline]
    pub fn need_resched(&self) -> bool {
        match self.tasks.get(self.current as usize).and_then(|t| t.cpu) {
            Some(c) => self.runq.iter().any(|&t| self.allowed(t, c as usize)),
            None => !self.runq.is_empty(),
        }
    }

    /// Number of CPUs.
    pub fn cpus(&self) -> u32 {
        self.cpus
    }

    /// How long a task holds a CPU while others wait for it before it is preempted
    /// ([`crate::calibration::sched_slice`] on this machine's CPUs).
    pub fn timeslice(&self) -> Nanos {
        crate::calibration::sched_slice(self.cpus)
    }

    /// A new, empty wait queue.
    pub fn new_queue(&mut self) -> WaitQueueId {
        self.queues.push(Vec::new());
        WaitQueueId(self.queues.len() as u32 - 1)
    }

    /// Whether anybody sleeps on `q`.
    pub fn queue_has_waiters(&self, q: WaitQueueId) -> bool {
        let waiters = &self.queues[q.0 as usize];
        waiters
            .iter()
            .any(|&(t, g)| self.tasks[t as usize].gen == g)
    }

    /// Start a new task; it first runs at the current instant, after those already ready.
    pub fn spawn(&mut self, name: &str, fut: impl Future<Output = ()> + 'static) -> TaskId {
        let id = self.tasks.len() as u32;
        let cgroup = self.spawn_cgroup.unwrap_or_else(|| {
            self.tasks
                .get(self.current as usize)
                .map_or(0, |t| t.cgroup)
        });
        let cpus_allowed = self.spawn_cpus_allowed.unwrap_or_else(|| {
            self.tasks
                .get(self.current as usize)
                .map_or(0, |t| t.cpus_allowed)
        });
        self.tasks.push(TaskState {
            name: name.to_string(),
            gen: 0,
            reason: WakeReason::Woken,
            killable: false,
            killed: false,
            done: false,
            timer_armed: false,
            user_ns: 0,
            sys_ns: 0,
            cpu: None,
            cgroup,
            cpus_allowed,
        });
        self.spawned.push((id, Box::pin(fut)));
        self.ready.push_back((id, 0));
        TaskId(id)
    }

    /// Wake every task sleeping on `q`.
    pub fn wake_all(&mut self, q: WaitQueueId) {
        let waiters = std::mem::take(&mut self.queues[q.0 as usize]);
        for (t, g) in waiters {
            self.wake(t, g, WakeReason::Woken);
        }
    }

    /// Wake the first task sleeping on `q` (an exclusive wait, as `wake_up` wakes one
    /// `TASK_UNINTERRUPTIBLE | WQ_FLAG_EXCLUSIVE` sleeper); registrations whose wait already
    /// ended (a timeout, another queue) are dropped on the way. Returns whether a task woke.
    pub fn wake_one(&mut self, q: WaitQueueId) -> bool {
        let qi = q.0 as usize;
        while !self.queues[qi].is_empty() {
            let (t, g) = self.queues[qi].remove(0);
            if self.wake(t, g, WakeReason::Woken) {
                return true;
            }
        }
        false
    }

    fn wake(&mut self, t: u32, g: u32, reason: WakeReason) -> bool {
        let task = &mut self.tasks[t as usize];
        if task.gen != g || task.done {
            return false;
        }
        task.gen = task.gen.wrapping_add(1);
        task.reason = reason;
        task.killable = false;
        if std::mem::take(&mut task.timer_armed) {
            self.stale_timers += 1;
        }
        self.ready.push_back((t, task.gen));
        true
    }

    /// Wait-queue entries and timers held (live and stale), for tests of boundedness.
    pub fn footprint(&self) -> (usize, usize) {
        (self.queues.iter().map(Vec::len).sum(), self.timers.len())
    }

    /// Mark `t` killed; if it is in a killable wait, end the wait now.
    pub fn kill(&mut self, t: TaskId) {
        let task = &mut self.tasks[t.0 as usize];
        task.killed = true;
        if task.killable {
            let g = task.gen;
            self.wake(t.0, g, WakeReason::Killed);
        }
    }

    /// Whether `t` has been killed.
    pub fn is_killed(&self, t: TaskId) -> bool {
        self.tasks[t.0 as usize].killed
    }

    /// Whether `t` has finished.
    pub fn is_done(&self, t: TaskId) -> bool {
        self.tasks[t.0 as usize].done
    }

    /// The control group a task is in.
    pub fn task_cgroup(&self, t: TaskId) -> u16 {
        self.tasks[t.0 as usize].cgroup
    }

    /// Tasks spawned until the next call start in `cgroup` instead of their spawner's group
    /// (`None`: back to the spawner's). Set-up code uses it to start a workload in its group.
    pub fn set_spawn_cgroup(&mut self, cgroup: Option<u16>) {
        self.spawn_cgroup = cgroup;
    }

    /// A CPU mask tasks can be pinned to: CPUs `cpus` (each below [`Sched::cpus`]; an
    /// empty or full list means every CPU). Returns its handle for
    /// [`Sched::set_spawn_cpus_allowed`].
    pub fn new_cpuset(&mut self, cpus: &[u32]) -> u16 {
        let mut mask = CpuMask::new(self.cpus);
        for &c in cpus.iter().filter(|&&c| c < self.cpus) {
            mask.set(c as usize, true);
        }
        let n = mask.count();
        if n == 0 || n == self.cpus as usize {
            return 0;
        }
        self.cpusets.push(mask);
        (self.cpusets.len() - 1) as u16
    }

    /// Tasks spawned until the next call are pinned to CPU mask `set` (from
    /// [`Sched::new_cpuset`]; 0 is every CPU) instead of inheriting their spawner's (`None`:
    /// back to that, which outside any task is the last polled task's).
    pub fn set_spawn_cpus_allowed(&mut self, set: Option<u16>) {
        self.spawn_cpus_allowed = set;
    }

    /// Whether task `t` may run on CPU `c`.
    fn allowed(&self, t: u32, c: usize) -> bool {
        match self.tasks[t as usize].cpus_allowed {
            0 => true,
            set => self.cpusets[set as usize].test(c),
        }
    }

    /// The CPU task `t` would take now: the one it last ran on if free and allowed (the
    /// scheduler's cache affinity), else the lowest-numbered free one it may use.
    fn free_cpu_for(&self, t: u32) -> Option<usize> {
        if self.cpus_free == 0 {
            return None;
        }
        match self.tasks[t as usize].cpu {
            Some(c) if !self.cpu_busy.test(c as usize) && self.allowed(t, c as usize) => {
                Some(c as usize)
            }
            _ => match self.tasks[t as usize].cpus_allowed {
                0 => self.cpu_busy.first_clear(self.cpus as usize),
                set => self.cpusets[set as usize].first_not_in(&self.cpu_busy),
            },
        }
    }

    /// The task's name.
    pub fn task_name(&self, t: TaskId) -> &str {
        &self.tasks[t.0 as usize].name
    }

    /// The CPU `t` last ran on, if it ever used CPU time.
    pub fn task_cpu(&self, t: TaskId) -> Option<u32> {
        self.tasks[t.0 as usize].cpu
    }

    /// `smp_processor_id()`: the CPU the running task last ran on. A task that has not used
    /// CPU time yet is where the scheduler would put it, as `select_task_rq` puts a new
    /// task on an idle CPU: the lowest free CPU it may use, else the lowest it may use.
    /// Code outside any task is on CPU 0. Never a function of task ids, which other tasks
    /// (a sampler) would shift.
    #[inline]
    pub fn this_cpu(&self) -> u32 {
        let Some(t) = self.tasks.get(self.current as usize) else {
            return 0;
        };
        let cpu = match (t.cpu, t.cpus_allowed) {
            (Some(c), _) => return c,
            (None, 0) => self.cpu_busy.first_clear(self.cpus as usize),
            (None, set) => {
                let allowed = &self.cpusets[set as usize];
                allowed
                    .first_not_in(&self.cpu_busy)
                    .or_else(|| allowed.first_set())
            }
        };
        cpu.unwrap_or(0) as u32
    }

    /// Number of tasks ever spawned; task ids are `0..nr_tasks()`.
    pub fn nr_tasks(&self) -> usize {
        self.tasks.len()
    }

    /// (user ns, system ns) task `t` has run so far.
    pub fn task_times(&self, t: TaskId) -> (Nanos, Nanos) {
        let s = &self.tasks[t.0 as usize];
        (s.user_ns, s.sys_ns)
    }

    /// (name, user ns, system ns) for every task, in creation order.
    pub fn cpu_times(&self) -> Vec<(String, Nanos, Nanos)> {
        self.tasks
            .iter()
            .map(|t| (t.name.clone(), t.user_ns, t.sys_ns))
            .collect()
    }

    /// Whether the current task may run on alone until `until`: no other task is ready
    /// now, no live timer is due at or before `until`, and the executor runs past it. Then
    /// a timer at `until` would be the next event, and the task resumes at it with nothing
    /// run in between, so it may as well not yield. Stale timers met on the way are
    /// dropped, as the executor would drop them.
    fn alone_until(&mut self, until: Nanos) -> bool {
        if !self.ready.is_empty() || until > self.horizon {
            return false;
        }
        while let Some(&Reverse((at, _, t, g))) = self.timers.peek() {
            if at > until {
                break;
            }
            let task = &self.tasks[t as usize];
            if task.gen == g && !task.done {
                return false;
            }
            self.timers.pop();
            self.stale_timers = self.stale_timers.saturating_sub(1);
        }
        true
    }

    fn push_timer(&mut self, at: Nanos, t: u32, g: u32) {
        if self.stale_timers > 64 && 2 * self.stale_timers > self.timers.len() {
            let tasks = &self.tasks;
            self.timers
                .retain(|&Reverse((_, _, t, g))| tasks[t as usize].gen == g);
            self.stale_timers = 0;
        }
        self.seq += 1;
        self.timers.push(Reverse((at, self.seq, t, g)));
        self.tasks[t as usize].timer_armed = true;
    }

    /// Register the current task for a wake-up on `q` and/or at `deadline`. Returns the
    /// generation the registration carries.
    fn register(&mut self, q: Option<WaitQueueId>, deadline: Option<Nanos>, killable: bool) -> u32 {
        let t = self.current;
        let g = self.tasks[t as usize].gen;
        if let Some(q) = q {
            let waiters = &mut self.queues[q.0 as usize];
            // Entries of waits that timed out stay until the queue is woken; drop them as
            // the queue doubles, so that a queue nobody wakes stays as long as its waiters.
            if waiters.len() >= 16 && waiters.len().is_power_of_two() {
                let tasks = &self.tasks;
                waiters.retain(|&(t, g)| tasks[t as usize].gen == g);
            }
            waiters.push((t, g));
        }
        if let Some(d) = deadline {
            self.push_timer(d, t, g);
        }
        self.tasks[t as usize].killable = killable;
        g
    }

    fn woken_since(&self, g: u32) -> Option<WakeReason> {
        let task = &self.tasks[self.current as usize];
        (task.gen != g).then_some(task.reason)
    }

    fn account(&mut self, mode: CpuMode, ns: Nanos) {
        let task = &mut self.tasks[self.current as usize];
        match mode {
            CpuMode::User => task.user_ns += ns,
            CpuMode::System => task.sys_ns += ns,
        }
    }

    /// Take CPU `c`, free and allowed, for the current task.
    fn take_cpu(&mut self, c: usize) {
        let me = self.current as usize;
        self.cpus_free -= 1;
        self.cpu_busy.set(c, true);
        self.tasks[me].cpu = Some(c as u32);
        debug_assert_eq!(
            self.cpus_free as usize,
            self.cpus as usize - self.cpu_busy.count(),
            "cpus_free counts the CPUs not busy"
        );
    }

    fn release_cpu(&mut self) {
        let me = self.current as usize;
        let c = self.tasks[me].cpu.expect("the task holds a CPU") as usize;
        // The first waiter that may run on this CPU (any, when nobody is pinned).
        let next = self
            .runq
            .iter()
            .position(|&t| self.allowed(t, c))
            .and_then(|i| self.runq.remove(i));
        if let Some(next) = next {
            // Hand the CPU straight over: it never becomes free.
            let g = self.tasks[next as usize].gen;
            self.tasks[next as usize].cpu = Some(c as u32);
            self.wake(next, g, WakeReason::Woken);
        } else {
            self.cpu_busy.set(c, false);
            self.cpus_free += 1;
        }
    }
}

/// Access to the scheduler inside the world the tasks share.
pub trait SchedHost: 'static {
    /// The scheduler.
    fn sched(&mut self) -> &mut Sched;

    /// Whether the executor's `stop` would let the run go on past the current step. A
    /// task only runs ahead (see [`run_cpu_now`]) while this holds, since running ahead
    /// skips the `stop` check the step's end would have made. The default suits a `stop`
    /// that reads nothing the tasks change.
    fn may_run_ahead(&self) -> bool {
        true
    }
}

/// The shared world: every task holds one of these.
pub type Shared<W> = Rc<RefCell<W>>;

/// A future that waits on a queue and/or a deadline, ending with the reason.
struct Wait<W: SchedHost> {
    world: Shared<W>,
    queue: Option<WaitQueueId>,
    deadline: Option<Nanos>,
    killable: bool,
    gen: Option<u32>,
}

impl<W: SchedHost> Future for Wait<W> {
    type Output = WakeReason;
    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<WakeReason> {
        let mut w = self.world.borrow_mut();
        let s = w.sched();
        match self.gen {
            None => {
                if self.killable && s.tasks[s.current as usize].killed {
                    return Poll::Ready(WakeReason::Killed);
                }
                if let Some(d) = self.deadline {
                    if d <= s.now && self.queue.is_none() {
                        return Poll::Ready(WakeReason::Timeout);
                    }
                }
                let g = s.register(self.queue, self.deadline, self.killable);
                drop(w);
                self.gen = Some(g);
                Poll::Pending
            }
            Some(g) => match s.woken_since(g) {
                Some(r) => Poll::Ready(r),
                None => Poll::Pending,
            },
        }
    }
}

/// Sleep until `deadline` (not killable).
pub fn sleep_until<W: SchedHost>(
    world: &Shared<W>,
    deadline: Nanos,
) -> impl Future<Output = WakeReason> {
    Wait {
        world: world.clone(),
        queue: None,
        deadline: Some(deadline),
        killable: false,
        gen: None,
    }
}

/// Sleep for `d` (not killable).
pub fn sleep<W: SchedHost>(world: &Shared<W>, d: Nanos) -> impl Future<Output = WakeReason> {
    let now = world.borrow_mut().sched().now;
    sleep_until(world, now + d)
}

/// Sleep on `q` until woken or until `timeout` has passed; `killable` lets the OOM killer
/// end the wait.
pub fn wait_event<W: SchedHost>(
    world: &Shared<W>,
    q: WaitQueueId,
    timeout: Option<Nanos>,
    killable: bool,
) -> impl Future<Output = WakeReason> {
    let now = world.borrow_mut().sched().now;
    Wait {
        world: world.clone(),
        queue: Some(q),
        deadline: timeout.map(|t| now + t),
        killable,
        gen: None,
    }
}

/// Sleep `d` on `q` (which nobody wakes) unless killed first; returns true if killed.
pub async fn sleep_killable<W: SchedHost>(world: &Shared<W>, q: WaitQueueId, d: Nanos) -> bool {
    wait_event(world, q, Some(d), true).await == WakeReason::Killed
}

/// [`run_cpu`] without yielding, when that changes nothing: a CPU is free and no other
/// task could run before the `ns` end (nothing ready, no timer due by then, the run goes
/// on past it). The clock moves on by `ns` and the time is accounted, as the timer of
/// `run_cpu`'s sleep would have done with no other event before it. Returns false, having
/// done nothing, when another task could run first: then `run_cpu` must wait.
pub fn run_cpu_now<W: SchedHost>(w: &mut W, ns: Nanos, mode: CpuMode) -> bool {
    match mode {
        CpuMode::System => run_cpu_now_split(w, ns, 0),
        CpuMode::User => run_cpu_now_split(w, 0, ns),
    }
}

/// [`run_cpu_now`] of `system` then `user` time as one charge: both are charged, or
/// (returning false) neither.
pub fn run_cpu_now_split<W: SchedHost>(w: &mut W, system: Nanos, user: Nanos) -> bool {
    let ns = system + user;
    if ns == 0 {
        return true;
    }
    if !w.may_run_ahead() {
        return false;
    }
    let s = w.sched();
    let Some(c) = s.free_cpu_for(s.current) else {
        return false;
    };
    if !s.alone_until(s.now.saturating_add(ns)) {
        return false;
    }
    // take_cpu, then release_cpu with nobody waiting: only the task's CPU can change.
    let me = s.current as usize;
    s.tasks[me].cpu = Some(c as u32);
    s.now += ns;
    s.account(CpuMode::System, system);
    s.account(CpuMode::User, user);
    true
}

/// Use `ns` of CPU time in `mode`: wait for a free CPU (FIFO) and hold it, a timeslice
/// ([`Sched::timeslice`]) at a time; at the end of a slice with another task waiting for
/// the CPU (`need_resched`), hand it over and queue again behind the waiters, as CFS's
/// tick preempts a task that has had its slice. Give it back when `ns` is spent.
pub async fn run_cpu<W: SchedHost>(world: &Shared<W>, ns: Nanos, mode: CpuMode) {
    if run_cpu_now(&mut *world.borrow_mut(), ns, mode) {
        return;
    }
    let mut left = ns;
    while left > 0 {
        let (must_queue, slice) = {
            let mut w = world.borrow_mut();
            let s = w.sched();
            let slice = s.timeslice();
            if let Some(c) = s.free_cpu_for(s.current) {
                s.take_cpu(c);
                (false, slice)
            } else {
                let me = s.current;
                s.runq.push_back(me);
                (true, slice)
            }
        };
        if must_queue {
            // Woken by release_cpu with the CPU already ours.
            Wait {
                world: world.clone(),
                queue: None,
                deadline: None,
                killable: false,
                gen: None,
            }
            .await;
        }
        loop {
            let run = left.min(slice);
            sleep(world, run).await;
            left -= run;
            let mut w = world.borrow_mut();
            let s = w.sched();
            s.account(mode, run);
            if left == 0 || s.need_resched() {
                s.release_cpu();
                break;
            }
        }
    }
}

/// Runs the tasks of one world until a time limit or until nothing is left to do.
pub struct Executor<W: SchedHost> {
    world: Shared<W>,
    tasks: Vec<Option<BoxFuture>>,
}

impl<W: SchedHost> std::fmt::Debug for Executor<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor")
            .field("tasks", &self.tasks.len())
            .finish()
    }
}

impl<W: SchedHost> Executor<W> {
    /// An executor over `world`.
    pub fn new(world: Shared<W>) -> Self {
        Executor {
            world,
            tasks: Vec::new(),
        }
    }

    /// Run until simulated time would pass `end`. Returns the time reached: `end`, unless
    /// `stop`, polled after every task step, returned true earlier. When no task can run
    /// again before `end` (every task asleep with no timer), the clock jumps to `end`: an
    /// idle machine still lives to the end of its run. A task's step goes on through CPU
    /// time it runs alone ([`run_cpu_now`]) only while [`SchedHost::may_run_ahead`] holds,
    /// so that must be false whenever `stop` would be true.
    pub fn run_until(&mut self, end: Nanos, mut stop: impl FnMut(&mut W) -> bool) -> Nanos {
        let waker = Waker::noop();
        let mut cx = Context::from_waker(waker);
        self.world.borrow_mut().sched().horizon = end;
        loop {
            let next = {
                let mut w = self.world.borrow_mut();
                let s = w.sched();
                for (id, fut) in s.spawned.drain(..) {
                    let id = id as usize;
                    if self.tasks.len() <= id {
                        self.tasks.resize_with(id + 1, || None);
                    }
                    self.tasks[id] = Some(fut);
                }
                let mut next = None;
                while let Some((t, g)) = s.ready.pop_front() {
                    if s.tasks[t as usize].gen == g && !s.tasks[t as usize].done {
                        next = Some(t);
                        break;
                    }
                }
                if next.is_none() {
                    while let Some(&Reverse((at, _, t, g))) = s.timers.peek() {
                        if at > end {
                            s.now = end;
                            return end;
                        }
                        s.timers.pop();
                        let task = &mut s.tasks[t as usize];
                        if task.gen == g && !task.done {
                            s.now = at;
                            task.gen = task.gen.wrapping_add(1);
                            task.reason = WakeReason::Timeout;
                            task.killable = false;
                            task.timer_armed = false;
                            next = Some(t);
                            break;
                        }
                        s.stale_timers = s.stale_timers.saturating_sub(1);
                    }
                }
                match next {
                    Some(t) => {
                        s.current = t;
                        t
                    }
                    None => {
                        s.now = s.now.max(end);
                        return s.now;
                    }
                }
            };
            let fut = self.tasks[next as usize]
                .as_mut()
                .expect("a woken task has a future");
            if fut.as_mut().poll(&mut cx).is_ready() {
                self.tasks[next as usize] = None;
                let mut w = self.world.borrow_mut();
                w.sched().tasks[next as usize].done = true;
            }
            if stop(&mut self.world.borrow_mut()) {
                return self.world.borrow_mut().sched().now;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct W {
        s: Sched,
        log: Vec<(Nanos, &'static str)>,
    }
    impl SchedHost for W {
        fn sched(&mut self) -> &mut Sched {
            &mut self.s
        }
    }
    fn world(cpus: u32) -> Shared<W> {
        Rc::new(RefCell::new(W {
            s: Sched::new(cpus),
            log: Vec::new(),
        }))
    }
    fn log(w: &Shared<W>, what: &'static str) {
        let mut b = w.borrow_mut();
        let now = b.s.now();
        b.log.push((now, what));
    }

    #[test]
    fn timers_at_the_same_instant_run_in_scheduling_order() {
        let w = world(1);
        for name in ["a", "b", "c"] {
            let w2 = w.clone();
            w.borrow_mut().s.spawn(name, async move {
                sleep(&w2, 5).await;
                log(&w2, name);
            });
        }
        Executor::new(w.clone()).run_until(100, |_| false);
        assert_eq!(w.borrow().log, vec![(5, "a"), (5, "b"), (5, "c")]);
    }

    #[test]
    fn wait_event_ends_early_when_the_queue_is_woken() {
        let w = world(1);
        let q = w.borrow_mut().s.new_queue();
        let w1 = w.clone();
        w.borrow_mut().s.spawn("waiter", async move {
            let r = wait_event(&w1, q, Some(100), false).await;
            assert_eq!(r, WakeReason::Woken);
            log(&w1, "woken");
            let r = wait_event(&w1, q, Some(100), false).await;
            assert_eq!(r, WakeReason::Timeout);
            log(&w1, "timeout");
        });
        let w2 = w.clone();
        w.borrow_mut().s.spawn("waker", async move {
            sleep(&w2, 30).await;
            w2.borrow_mut().s.wake_all(q);
        });
        Executor::new(w.clone()).run_until(1000, |_| false);
        assert_eq!(w.borrow().log, vec![(30, "woken"), (130, "timeout")]);
    }

    /// `wake_one` wakes the longest sleeper whose wait is still on, skipping one that
    /// timed out.
    #[test]
    fn wake_one_wakes_the_first_live_waiter_only() {
        let w = world(1);
        let q = w.borrow_mut().s.new_queue();
        for (name, timeout) in [("a", Some(10)), ("b", None), ("c", None)] {
            let w1 = w.clone();
            w.borrow_mut().s.spawn(name, async move {
                if wait_event(&w1, q, timeout, false).await == WakeReason::Woken {
                    log(&w1, name);
                }
            });
        }
        let w2 = w.clone();
        w.borrow_mut().s.spawn("waker", async move {
            sleep(&w2, 20).await;
            assert!(w2.borrow_mut().s.wake_one(q));
            sleep(&w2, 20).await;
            assert!(w2.borrow_mut().s.wake_one(q));
            assert!(!w2.borrow_mut().s.wake_one(q));
        });
        Executor::new(w.clone()).run_until(1000, |_| false);
        assert_eq!(w.borrow().log, vec![(20, "b"), (40, "c")]);
    }

    #[test]
    fn cpus_bound_how_many_tasks_run_at_once() {
        let w = world(2);
        for name in ["a", "b", "c"] {
            let w2 = w.clone();
            w.borrow_mut().s.spawn(name, async move {
                run_cpu(&w2, 10, CpuMode::User).await;
                log(&w2, name);
            });
        }
        Executor::new(w.clone()).run_until(1000, |_| false);
        // Two run at once; the third waits for a CPU and finishes at 20.
        assert_eq!(w.borrow().log, vec![(10, "a"), (10, "b"), (20, "c")]);
        let times = w.borrow().s.cpu_times();
        assert!(times.iter().all(|(_, u, s)| *u == 10 && *s == 0));
    }

    #[test]
    fn pinned_tasks_share_their_cpus_and_leave_the_rest_free() {
        let w = world(4);
        // "a" and "b" pinned to CPU 1 (and their children with them); "c" anywhere.
        let set = w.borrow_mut().s.new_cpuset(&[1]);
        assert_ne!(set, 0);
        w.borrow_mut().s.set_spawn_cpus_allowed(Some(set));
        for name in ["a", "b"] {
            let w2 = w.clone();
            w.borrow_mut().s.spawn(name, async move {
                run_cpu(&w2, 10, CpuMode::User).await;
                let w3 = w2.clone();
                w2.borrow_mut().s.spawn("child", async move {
                    run_cpu(&w3, 10, CpuMode::User).await;
                    log(&w3, "child");
                });
                log(&w2, name);
            });
        }
        // Set-up code is no task: it names the mask of what it spawns.
        w.borrow_mut().s.set_spawn_cpus_allowed(Some(0));
        let w2 = w.clone();
        w.borrow_mut().s.spawn("c", async move {
            run_cpu(&w2, 10, CpuMode::User).await;
            log(&w2, "c");
        });
        w.borrow_mut().s.set_spawn_cpus_allowed(None);
        Executor::new(w.clone()).run_until(1000, |_| false);
        // a, b and both children take turns on CPU 1; c runs at once on CPU 0.
        assert_eq!(
            w.borrow().log,
            vec![
                (10, "a"),
                (10, "c"),
                (20, "b"),
                (30, "child"),
                (40, "child")
            ]
        );
        let s = &w.borrow().s;
        for t in [0, 1, 3, 4] {
            assert_eq!(s.task_cpu(TaskId(t)), Some(1), "task {t}");
        }
        assert_eq!(s.task_cpu(TaskId(2)), Some(0));
    }

    #[test]
    fn need_resched_only_for_a_waiter_that_may_take_this_cpu() {
        let w = world(2);
        let seen = Rc::new(RefCell::new(Vec::new()));
        // a, b and d pinned to CPU 0, taking turns; c on CPU 1 sees no waiter for its CPU.
        let set = w.borrow_mut().s.new_cpuset(&[0]);
        w.borrow_mut().s.set_spawn_cpus_allowed(Some(set));
        for name in ["a", "b", "d"] {
            let (w2, s2) = (w.clone(), seen.clone());
            w.borrow_mut().s.spawn(name, async move {
                run_cpu(&w2, 10, CpuMode::User).await;
                let r = w2.borrow().s.need_resched();
                s2.borrow_mut().push((name, r));
            });
        }
        w.borrow_mut().s.set_spawn_cpus_allowed(Some(0));
        let (w2, s2) = (w.clone(), seen.clone());
        w.borrow_mut().s.spawn("c", async move {
            sleep(&w2, 5).await;
            run_cpu(&w2, 1, CpuMode::User).await;
            let r = w2.borrow().s.need_resched();
            s2.borrow_mut().push(("c", r));
        });
        w.borrow_mut().s.set_spawn_cpus_allowed(None);
        Executor::new(w.clone()).run_until(100, |_| false);
        assert_eq!(
            *seen.borrow(),
            [("c", false), ("a", true), ("b", false), ("d", false)],
            "after a hands CPU 0 to b, d still waits for it; after b, nobody"
        );
    }

    /// A long charge runs a timeslice, then the CPU goes to the task that waited and the
    /// long one queues behind it; alone, it holds the CPU for the whole charge.
    #[test]
    fn a_task_that_has_run_its_slice_gives_the_cpu_to_a_waiter() {
        let w = world(1);
        let slice = w.borrow().s.timeslice();
        let done = Rc::new(RefCell::new(Vec::new()));
        let (w2, d2) = (w.clone(), done.clone());
        w.borrow_mut().s.spawn("long", async move {
            run_cpu(&w2, 10 * slice, CpuMode::User).await;
            d2.borrow_mut().push(("long", w2.borrow().s.now()));
        });
        let (w2, d2) = (w.clone(), done.clone());
        w.borrow_mut().s.spawn("short", async move {
            sleep(&w2, 1).await;
            run_cpu(&w2, slice / 2, CpuMode::User).await;
            d2.borrow_mut().push(("short", w2.borrow().s.now()));
        });
        Executor::new(w.clone()).run_until(100 * slice, |_| false);
        assert_eq!(
            *done.borrow(),
            [
                ("short", slice + slice / 2),
                ("long", 10 * slice + slice / 2)
            ],
            "the short task runs after the long one's first slice, not after its charge"
        );
        assert_eq!(w.borrow().s.tasks[0].user_ns, 10 * slice);
    }

    #[test]
    fn a_cpuset_of_every_cpu_or_none_pins_nothing() {
        let mut s = Sched::new(2);
        assert_eq!(s.new_cpuset(&[0, 1]), 0);
        assert_eq!(s.new_cpuset(&[]), 0);
        assert_eq!(s.new_cpuset(&[0]), 1);
        // A CPU the machine does not have is no CPU: this pins to CPU 0.
        assert_eq!(s.new_cpuset(&[0, 2]), 2);
        assert!(s.cpusets[2].test(0) && !s.cpusets[2].test(1));
        assert_eq!(s.cpusets[2].count(), 1);
    }

    /// The bitmap answers what the CPU lists did, across word boundaries.
    #[test]
    fn cpu_masks_find_the_lowest_free_cpu_a_task_may_use() {
        let mut busy = CpuMask::new(130);
        assert_eq!(busy.0.len(), 3);
        assert_eq!(busy.first_clear(130), Some(0));
        for c in 0..70 {
            busy.set(c, true);
        }
        assert_eq!(busy.count(), 70);
        assert_eq!(busy.first_clear(130), Some(70));
        busy.set(3, false);
        assert_eq!(busy.first_clear(130), Some(3));
        busy.set(3, true);
        for c in 70..130 {
            busy.set(c, true);
        }
        // Every CPU busy: the bits past the last CPU are not CPUs.
        assert_eq!(busy.first_clear(130), None);
        assert_eq!(busy.first_clear(128), None);
        busy.set(129, false);
        assert_eq!(busy.first_clear(130), Some(129));

        let mut allowed = CpuMask::new(130);
        for c in [5, 64, 100, 129] {
            allowed.set(c, true);
        }
        assert!(allowed.test(64) && !allowed.test(63) && !allowed.test(65));
        // Of 5, 64, 100 and 129 only 129 is free.
        assert_eq!(allowed.first_not_in(&busy), Some(129));
        busy.set(129, true);
        assert_eq!(allowed.first_not_in(&busy), None);
        busy.set(64, false);
        busy.set(100, false);
        assert_eq!(allowed.first_not_in(&busy), Some(64));
    }

    #[test]
    fn a_task_pinned_past_cpu_63_runs_there() {
        let w = world(70);
        let set = w.borrow_mut().s.new_cpuset(&[66, 68]);
        w.borrow_mut().s.set_spawn_cpus_allowed(Some(set));
        let ts: Vec<TaskId> = ["a", "b", "c"]
            .into_iter()
            .map(|name| {
                let w2 = w.clone();
                w.borrow_mut().s.spawn(name, async move {
                    run_cpu(&w2, 10, CpuMode::User).await;
                    log(&w2, name);
                })
            })
            .collect();
        w.borrow_mut().s.set_spawn_cpus_allowed(None);
        Executor::new(w.clone()).run_until(1000, |_| false);
        // Two CPUs for three tasks: the third waits; each ran on 66 or 68.
        assert_eq!(w.borrow().log, vec![(10, "a"), (10, "b"), (20, "c")]);
        let s = &w.borrow().s;
        assert_eq!(s.task_cpu(ts[0]), Some(66));
        assert_eq!(s.task_cpu(ts[1]), Some(68));
        assert!(matches!(s.task_cpu(ts[2]), Some(66 | 68)));
    }

    #[test]
    fn a_task_that_has_not_run_is_on_the_lowest_free_cpu_it_may_use_whatever_its_id() {
        let w = world(70);
        let set = w.borrow_mut().s.new_cpuset(&[68, 66]);
        let seen = Rc::new(RefCell::new(Vec::new()));
        // Tasks of ids 0 to 4, the last three pinned; each looks before and after running.
        for (i, pinned) in [false, false, true, true, true].into_iter().enumerate() {
            w.borrow_mut()
                .s
                .set_spawn_cpus_allowed(pinned.then_some(set));
            let (w2, s2) = (w.clone(), seen.clone());
            w.borrow_mut().s.spawn("t", async move {
                s2.borrow_mut().push((i, w2.borrow().s.this_cpu()));
                run_cpu(&w2, 10, CpuMode::User).await;
                s2.borrow_mut().push((i, w2.borrow().s.this_cpu()));
            });
        }
        w.borrow_mut().s.set_spawn_cpus_allowed(None);
        assert_eq!(w.borrow().s.this_cpu(), 0, "outside any task");
        Executor::new(w.clone()).run_until(1000, |_| false);
        let mut seen = seen.borrow().clone();
        seen.sort_unstable();
        // Before running, each is on the lowest free CPU it may use (each earlier task
        // holds its CPU by the time the next looks); after, on the CPU it was given. The
        // fifth finds 66 and 68 busy: it is on 66, the lowest it may use, and then runs on
        // the first of them to come free.
        assert_eq!(
            seen,
            vec![
                (0, 0),
                (0, 0),
                (1, 1),
                (1, 1),
                (2, 66),
                (2, 66),
                (3, 68),
                (3, 68),
                (4, 66),
                (4, 66)
            ]
        );
        // With every CPU it may use busy, the lowest of them (the third task).
        let w = world(2);
        let seen = Rc::new(RefCell::new(Vec::new()));
        for i in 0..3 {
            let (w2, s2) = (w.clone(), seen.clone());
            w.borrow_mut().s.spawn("t", async move {
                s2.borrow_mut().push((i, w2.borrow().s.this_cpu()));
                run_cpu(&w2, 10, CpuMode::User).await;
            });
        }
        Executor::new(w.clone()).run_until(1000, |_| false);
        assert_eq!(*seen.borrow(), vec![(0, 0), (1, 1), (2, 0)]);
    }

    #[test]
    fn a_task_goes_back_to_its_last_cpu_when_free_and_else_to_a_free_one() {
        let w = world(3);
        let cpus = Rc::new(RefCell::new(Vec::new()));
        // x holds CPU 0 from 0 to 100.
        let w2 = w.clone();
        w.borrow_mut().s.spawn("x", async move {
            run_cpu(&w2, 100, CpuMode::User).await;
        });
        // y runs at 0, 40 and 70, each time for 10.
        let (w2, c2) = (w.clone(), cpus.clone());
        let y = w.borrow_mut().s.spawn("y", async move {
            for at in [0, 40, 70] {
                let now = w2.borrow().s.now();
                sleep(&w2, at - now).await;
                run_cpu(&w2, 10, CpuMode::User).await;
                let me = w2.borrow().s.current();
                let cpu = w2.borrow().s.task_cpu(me);
                c2.borrow_mut().push(cpu);
            }
        });
        // z takes the lowest free CPU, y's CPU 1, from 30 to 60.
        let w2 = w.clone();
        w.borrow_mut().s.spawn("z", async move {
            sleep(&w2, 30).await;
            run_cpu(&w2, 30, CpuMode::User).await;
        });
        Executor::new(w.clone()).run_until(1000, |_| false);
        // At 40 its CPU is z's, so y takes CPU 2; at 70 CPUs 1 and 2 are free and y goes
        // back to its last one, 2.
        assert_eq!(*cpus.borrow(), [Some(1), Some(2), Some(2)]);
        assert_eq!(w.borrow().s.task_cpu(y), Some(2));
    }

    #[test]
    fn kill_ends_a_killable_wait_only() {
        let w = world(1);
        let q = w.borrow_mut().s.new_queue();
        let w1 = w.clone();
        let victim = w.borrow_mut().s.spawn("victim", async move {
            let r = wait_event(&w1, q, None, true).await;
            assert_eq!(r, WakeReason::Killed);
            log(&w1, "killed");
        });
        let w2 = w.clone();
        w.borrow_mut().s.spawn("killer", async move {
            sleep(&w2, 7).await;
            w2.borrow_mut().s.kill(victim);
        });
        Executor::new(w.clone()).run_until(1000, |_| false);
        assert_eq!(w.borrow().log, vec![(7, "killed")]);
    }

    #[test]
    fn run_stops_at_the_end_time() {
        let w = world(1);
        let w1 = w.clone();
        w.borrow_mut().s.spawn("forever", async move {
            loop {
                sleep(&w1, 10).await;
            }
        });
        let end = Executor::new(w.clone()).run_until(95, |_| false);
        assert_eq!(end, 95);
    }

    #[test]
    fn an_idle_machine_lives_to_the_end_time() {
        // Every task asleep with no timer: nothing can happen again, but the run still
        // lasts until its end (a machine idles; it does not stop).
        let w = world(1);
        let q = w.borrow_mut().s.new_queue();
        let w1 = w.clone();
        w.borrow_mut().s.spawn("sleeper", async move {
            sleep(&w1, 7).await;
            wait_event(&w1, q, None, false).await;
        });
        let end = Executor::new(w.clone()).run_until(1000, |_| false);
        assert_eq!(end, 1000);
        assert_eq!(w.borrow().s.now(), 1000);
    }

    #[test]
    fn waits_that_time_out_do_not_pile_up_on_a_queue_nobody_wakes() {
        // A throttled writer pausing on its own queue, over and over.
        let w = world(1);
        let q = w.borrow_mut().s.new_queue();
        let w1 = w.clone();
        w.borrow_mut().s.spawn("pauser", async move {
            for _ in 0..10_000 {
                wait_event(&w1, q, Some(10), false).await;
            }
            log(&w1, "done");
        });
        Executor::new(w.clone()).run_until(SEC, |_| false);
        assert_eq!(w.borrow().log, vec![(100_000, "done")]);
        let (waiters, _) = w.borrow().s.footprint();
        assert!(waiters <= 32, "{waiters} queue entries for no waiter");
    }

    #[test]
    fn timers_of_waits_woken_early_are_dropped_before_they_are_due() {
        // A waiter with a long timeout, woken early every time.
        let w = world(1);
        let q = w.borrow_mut().s.new_queue();
        let w1 = w.clone();
        w.borrow_mut().s.spawn("waiter", async move {
            for _ in 0..10_000 {
                let r = wait_event(&w1, q, Some(1000 * SEC), false).await;
                assert_eq!(r, WakeReason::Woken);
            }
        });
        let w2 = w.clone();
        w.borrow_mut().s.spawn("waker", async move {
            for _ in 0..10_000 {
                sleep(&w2, 1).await;
                w2.borrow_mut().s.wake_all(q);
            }
        });
        let mut most = 0;
        Executor::new(w.clone()).run_until(SEC, |w: &mut W| {
            most = most.max(w.s.footprint().1);
            false
        });
        assert!(most <= 200, "{most} timers held at once");
    }

    /// CPU time run alone takes no timer and no executor step; with another task due
    /// before it ends, or at the same instant, `run_cpu` waits as before and the other
    /// task runs first.
    #[test]
    fn cpu_time_runs_ahead_only_when_no_other_task_could_run_first() {
        for (other_at, expect) in [
            // Due before the CPU time ends: it runs first.
            (5, vec![(5, "other"), (10, "cpu")]),
            // Due at the same instant: its timer is older, so it runs first.
            (10, vec![(10, "other"), (10, "cpu")]),
            // Due after: the CPU time ends first.
            (11, vec![(10, "cpu"), (11, "other")]),
        ] {
            let w = world(2);
            let w1 = w.clone();
            w.borrow_mut().s.spawn("other", async move {
                sleep(&w1, other_at).await;
                log(&w1, "other");
            });
            let w2 = w.clone();
            let ran_ahead = Rc::new(std::cell::Cell::new(None));
            let r = ran_ahead.clone();
            w.borrow_mut().s.spawn("cpu", async move {
                r.set(Some(run_cpu_now(&mut *w2.borrow_mut(), 10, CpuMode::User)));
                if r.get() == Some(false) {
                    run_cpu(&w2, 10, CpuMode::User).await;
                }
                log(&w2, "cpu");
            });
            Executor::new(w.clone()).run_until(1000, |_| false);
            assert_eq!(w.borrow().log, expect, "other task due at {other_at}");
            assert_eq!(ran_ahead.get(), Some(other_at > 10));
            let times = w.borrow().s.cpu_times();
            assert_eq!((times[1].1, times[1].2), (10, 0), "accounted either way");
        }
    }

    /// Running ahead never passes the executor's end, nor a task woken at this instant,
    /// nor a CPU that is busy.
    #[test]
    fn cpu_time_does_not_run_ahead_past_the_end_or_a_ready_task_or_a_busy_cpu() {
        // The end: run_until(5) stops at 5 with the CPU time not done.
        let w = world(1);
        let w1 = w.clone();
        w.borrow_mut().s.spawn("cpu", async move {
            run_cpu(&w1, 10, CpuMode::System).await;
            log(&w1, "cpu");
        });
        let mut ex = Executor::new(w.clone());
        assert_eq!(ex.run_until(5, |_| false), 5);
        assert!(w.borrow().log.is_empty());
        ex.run_until(100, |_| false);
        assert_eq!(w.borrow().log, vec![(10, "cpu")]);

        // A task made ready at this instant runs before the CPU time ends.
        let w = world(2);
        let q = w.borrow_mut().s.new_queue();
        let w1 = w.clone();
        w.borrow_mut().s.spawn("waiter", async move {
            wait_event(&w1, q, None, false).await;
            log(&w1, "waiter");
        });
        let w2 = w.clone();
        w.borrow_mut().s.spawn("cpu", async move {
            w2.borrow_mut().s.wake_all(q);
            assert!(!run_cpu_now(&mut *w2.borrow_mut(), 10, CpuMode::User));
            run_cpu(&w2, 10, CpuMode::User).await;
            log(&w2, "cpu");
        });
        Executor::new(w.clone()).run_until(100, |_| false);
        assert_eq!(w.borrow().log, vec![(0, "waiter"), (10, "cpu")]);

        // No free CPU: the task queues for one.
        let w = world(1);
        for name in ["a", "b"] {
            let w1 = w.clone();
            w.borrow_mut().s.spawn(name, async move {
                run_cpu(&w1, 10, CpuMode::User).await;
                log(&w1, name);
            });
        }
        Executor::new(w.clone()).run_until(100, |_| false);
        assert_eq!(w.borrow().log, vec![(10, "a"), (20, "b")]);
    }

    /// A host whose `stop` would end the run keeps its tasks from running ahead.
    #[test]
    fn cpu_time_does_not_run_ahead_when_the_host_says_stop() {
        struct Stopping(Sched);
        impl SchedHost for Stopping {
            fn sched(&mut self) -> &mut Sched {
                &mut self.0
            }
            fn may_run_ahead(&self) -> bool {
                false
            }
        }
        let mut h = Stopping(Sched::new(1));
        h.0.horizon = 1000;
        assert!(!run_cpu_now(&mut h, 10, CpuMode::User));
        assert_eq!(h.0.now(), 0);
        assert!(run_cpu_now(&mut h, 0, CpuMode::User), "nothing to run");
    }
}
