//! `balance_dirty_pages`: the loop a writer runs after dirtying pages, pausing as the
//! control lines of `page_writeback.rs` say (`kernel-writeback.md` §5).

use super::*;

/// The inputs of one `balance_dirty_pages` pass for `bdi`.
fn bdp_input(k: &mut crate::mm::Kernel, bdi: usize) -> BdpInput {
    use crate::mm::vmstat::ZoneStat as S;
    let now = k.sched.now();
    let (bg_thresh, thresh) = global_dirty_limits_traced(k);
    let (num, den) = k.bdi_props.fraction(bdi, now);
    let b = &k.bdis[bdi];
    BdpInput {
        now,
        nr_reclaimable: k.global_stat(S::nr_dirty) + k.global_stat(S::nr_unstable),
        nr_writeback: k.global_stat(S::nr_writeback),
        bg_thresh,
        thresh,
        bdi_thresh: bdi_dirty_limit(thresh, num, den, 0, 100, 0),
        bdi_reclaimable: b.reclaimable,
        bdi_writeback: b.writeback,
        bdi_dirtied: b.dirtied,
        bdi_written: b.written,
        bdi_stat_error: bdi_stat_error(k.sched.cpus() as u64),
        writeback_in_progress: b.writeback_running,
    }
}

/// `balance_dirty_pages_ratelimited`: after dirtying a page of file `ino` (the kernel's
/// `mapping`), throttle the writer if it has dirtied its allowance.
pub async fn balance_dirty_pages_ratelimited(
    w: &crate::mm::World,
    ino: usize,
    task: &mut DirtyTask,
) {
    balance_dirty_pages_ratelimited_nr(w, ino, task, 1).await;
}

/// `balance_dirty_pages_ratelimited_nr`: the hook after a writer dirtied `nr` pages of file
/// `ino` at once (btrfs's batches). 2.6.37 and v3 count the `nr`; 3.2+ counts pages as
/// they are dirtied (`account_page_dirtied`) and ignores it.
pub async fn balance_dirty_pages_ratelimited_nr(
    w: &crate::mm::World,
    ino: usize,
    task: &mut DirtyTask,
    nr: u64,
) {
    let bdi = w.borrow().inodes[ino].bdi;
    if w.borrow().old_dirty_throttle() {
        return balance_dirty_pages_ratelimited_old(w, bdi, task, nr).await;
    }
    if w.borrow().ioless_v3() {
        return balance_dirty_pages_ratelimited_v3(w, ino, task, nr).await;
    }
    let pages = {
        let mut k = w.borrow_mut();
        let (_, thresh) = dirty_limits(&k);
        let ratelimit = ratelimit_pages(thresh, k.sched.cpus() as u64);
        let exceeded = k.bdis[bdi].bw.dirty_exceeded;
        let k = &mut *k;
        ratelimit_exceeded(task, &mut k.cpu_dirty, exceeded, ratelimit)
    };
    if let Some(pages) = pages {
        balance_dirty_pages(w, bdi, task, pages).await;
    }
}

/// `balance_dirty_pages` (IO-less, 3.2+): pause the writer so dirty pages settle near the
/// setpoint, kicking the flusher as the kernel does (§5.2, §5.9).
pub async fn balance_dirty_pages(
    w: &crate::mm::World,
    bdi: usize,
    task: &mut DirtyTask,
    pages_dirtied: u64,
) {
    let now = w.borrow().sched.now();
    let mut bdp = BalanceDirtyPages::new(now, pages_dirtied);
    let mut throttled = false;
    loop {
        let decision = {
            let mut k = w.borrow_mut();
            let input = bdp_input(&mut k, bdi);
            let k = &mut *k;
            let d = bdp.iterate(task, &mut k.bdis[bdi].bw, &mut k.global_dirty_limit, &input);
            if let BdpDecision::Sleep { t, .. } | BdpDecision::NoSleep(t) = d {
                k.bdis[bdi].throttle_view = crate::mm::backing_dev::ThrottleView {
                    bdi_thresh: input.bdi_thresh,
                    target: t.bdi_setpoint,
                    task_rate: t.task_ratelimit,
                };
            }
            if crate::mm::trace::enabled(k) {
                let traced = match d {
                    BdpDecision::Sleep { t, pause, .. } => Some((t, pause as i64)),
                    BdpDecision::NoSleep(t) => Some((t, t.raw_pause)),
                    BdpDecision::FreeRun { .. } => None,
                };
                if let Some((t, pause)) = traced {
                    let now = input.now;
                    let limit = k.global_dirty_limit.hard_dirty_limit(input.thresh);
                    let think = if task.dirty_paused_when == 0 {
                        0
                    } else {
                        now as i64 - task.dirty_paused_when as i64
                    };
                    let paused = now.saturating_sub(bdp.start_time);
                    crate::mm::trace::balance_dirty_pages(
                        k,
                        bdi,
                        limit,
                        &t,
                        bdp.pages_dirtied,
                        paused,
                        pause,
                        think,
                    );
                }
            }
            if d.kick_flusher() {
                crate::mm::backing_dev::bdi_start_background_writeback(k, bdi);
            }
            d
        };
        match decision {
            BdpDecision::Sleep { pause, again, .. } => {
                throttled = true;
                w.borrow_mut().throttle.pauses.record(pause);
                let q = w.borrow().wq.timer;
                let killed = crate::engine::sleep_killable(w, q, pause).await;
                if !again || killed {
                    break;
                }
            }
            _ => break,
        }
    }
    let mut k = w.borrow_mut();
    let k = &mut *k;
    if throttled {
        let end = k.sched.now();
        k.throttle.calls.record(end - now);
    }
    let running = k.bdis[bdi].writeback_running;
    let laptop = k.vm.laptop_mode;
    if bdp.finish(&mut k.bdis[bdi].bw, running, laptop) {
        crate::mm::backing_dev::bdi_start_background_writeback(k, bdi);
    }
}
