//! The OOM killer (`mm/oom_kill.c`, 3.9): when reclaim makes no progress at all, kill the
//! task with the largest footprint (resident anonymous and file pages + swapped pages), unless
//! a victim is still on its way out.

use super::Kernel;
use crate::engine::SEC;

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
    // select_bad_process: badness = get_mm_rss + swap entries (page tables ignored).
    let victim = k
        .mms
        .iter()
        .enumerate()
        .filter(|(_, m)| !m.dead && m.task.is_some())
        .max_by_key(|(i, m)| (m.rss + m.file_rss + m.swapents, std::cmp::Reverse(*i)))
        .map(|(i, _)| i);
    let Some(v) = victim else {
        return false;
    };
    let task = k.mms[v].task.expect("filtered");
    let now = k.sched.now();
    k.oom_kills.push(OomKill {
        at_seconds: now as f64 / SEC as f64,
        victim: k.mms[v].name.clone(),
        rss_pages: k.mms[v].rss + k.mms[v].file_rss,
    });
    k.oom_victim = Some(v);
    k.sched.kill(task);
    true
}
