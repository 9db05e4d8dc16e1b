//! The OOM killer (`mm/oom_kill.c`, 3.9): when reclaim makes no progress at all, kill the
//! task with the largest footprint (resident anonymous and file pages + swapped pages), unless
//! a victim is still on its way out.

use super::Kernel;
use crate::engine::{TaskId, SEC};

/// One invocation of the OOM killer.
#[derive(Clone, Debug, PartialEq)]
pub struct OomKill {
    /// Simulated seconds since the start.
    pub at_seconds: f64,
    /// The name of the task killed.
    pub victim: String,
    /// Its resident pages when killed.
    pub rss_pages: u64,
}

/// `out_of_memory`. Returns whether a task was killed now (false: a victim is still
/// exiting, or there is nothing to kill).
pub fn out_of_memory(k: &mut Kernel, _preferred_zone: usize) -> bool {
    if let Some(v) = k.oom_victim {
        if !k.mms[v].dead {
            return false;
        }
    }
    let Some(v) = select_bad_process(k, |_| true) else {
        return false;
    };
    oom_kill_process(k, v);
    k.oom_victim = Some(v);
    true
}

/// `select_bad_process`: of the live mms whose owning task `in_scope` accepts, the one of
/// the largest badness, get_mm_rss + swap entries (page tables ignored); the first on a tie.
pub fn select_bad_process(k: &Kernel, in_scope: impl Fn(TaskId) -> bool) -> Option<usize> {
    k.mms
        .iter()
        .enumerate()
        .filter(|(_, m)| !m.dead && m.task.is_some_and(&in_scope))
        .max_by_key(|(i, m)| (m.rss + m.file_rss + m.swapents, std::cmp::Reverse(*i)))
        .map(|(i, _)| i)
}

/// `oom_kill_process`: record the kill of mm `v`'s task and kill it.
pub fn oom_kill_process(k: &mut Kernel, v: usize) {
    let task = k.mms[v].task.expect("a victim has a task");
    let now = k.sched.now();
    k.oom_kills.push(OomKill {
        at_seconds: now as f64 / SEC as f64,
        victim: k.mms[v].name.clone(),
        rss_pages: k.mms[v].rss + k.mms[v].file_rss,
    });
    k.sched.kill(task);
}
