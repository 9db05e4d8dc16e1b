//! `mem_eater`: map `size` bytes of anonymous memory and write it `chunk` by `chunk`,
//! pausing after each chunk; then hold it, or re-touch all of it every interval.

use super::{access, enter, exit, killed, CpuDebt, Phase};
use crate::calibration::{PAGE_SIZE, TOUCH_PAGE_NS};
use crate::engine::{self, Nanos};
use crate::mm::World;
use crate::scenario::MemEaterThen;

/// The mem_eater task.
pub async fn run(
    w: World,
    idx: usize,
    mm: usize,
    size: u64,
    chunk: u64,
    pause: Nanos,
    then: MemEaterThen,
) {
    let pages = (size / PAGE_SIZE) as u32;
    let chunk_pages = (chunk / PAGE_SIZE).max(1) as u32;
    let start = w.borrow_mut().mms[mm].mmap_anon(pages, 0);
    let hold_q = w.borrow_mut().sched.new_queue();
    enter(&mut w.borrow_mut(), idx, Phase::Filling, pages as u64);
    let mut debt = CpuDebt::default();
    let mut p = 0;
    while p < pages {
        let end = (p + chunk_pages).min(pages);
        for vpn in start + p..start + end {
            if access(&w, mm, vpn, true, &mut debt).await.is_err() || killed(&w) {
                return exit(&w, mm, idx);
            }
            debt.user(TOUCH_PAGE_NS);
            super::page_done(&w, idx);
            debt.maybe_flush(&w).await;
        }
        p = end;
        debt.flush(&w).await;
        if pause > 0 && engine::sleep_killable(&w, hold_q, pause).await {
            return exit(&w, mm, idx);
        }
    }
    let now = w.borrow().sched.now();
    super::stats(&mut w.borrow_mut(), idx).touched_at = Some(now);
    match then {
        MemEaterThen::Hold => {
            enter(&mut w.borrow_mut(), idx, Phase::Holding, 0);
            engine::wait_event(&w, hold_q, None, true).await;
            exit(&w, mm, idx);
        }
        MemEaterThen::Retouch { interval } => loop {
            enter(&mut w.borrow_mut(), idx, Phase::Retouching, pages as u64);
            let pass_start = w.borrow().sched.now();
            for vpn in start..start + pages {
                if access(&w, mm, vpn, true, &mut debt).await.is_err() || killed(&w) {
                    return exit(&w, mm, idx);
                }
                debt.user(TOUCH_PAGE_NS);
                super::page_done(&w, idx);
                debt.maybe_flush(&w).await;
            }
            debt.flush(&w).await;
            super::stats(&mut w.borrow_mut(), idx).passes += 1;
            // Untouched until the next pass.
            enter(&mut w.borrow_mut(), idx, Phase::Holding, 0);
            let now = w.borrow().sched.now();
            let next = pass_start + interval;
            if next > now && engine::sleep_killable(&w, hold_q, next - now).await {
                return exit(&w, mm, idx);
            }
        },
    }
}
