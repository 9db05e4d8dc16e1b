//! `mem_eater`: map `size` bytes of anonymous memory and write it `chunk` by `chunk`,
//! pausing after each chunk; then hold it, or re-touch all of it every interval.

use super::{access_range_now, access_slow, enter, exit, killed_k, CpuDebt, Phase};
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
            if touch_page(&w, idx, mm, vpn, &mut debt).await.is_err() {
                return exit(&w, mm, idx);
            }
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
                if touch_page(&w, idx, mm, vpn, &mut debt).await.is_err() {
                    return exit(&w, mm, idx);
                }
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

/// Write one page and account for it; `Err` when the task must exit (the allocation
/// failed, or it was killed). What needs no wait is done in one borrow.
pub(super) async fn touch_page(
    w: &World,
    idx: usize,
    mm: usize,
    vpn: u32,
    debt: &mut CpuDebt,
) -> Result<(), ()> {
    let done = access_range_now(&mut w.borrow_mut(), mm, vpn..vpn + 1, true, debt) > vpn;
    if !done && access_slow(w, mm, vpn, true, debt).await.is_err() {
        return Err(());
    }
    let must_wait = {
        let mut k = w.borrow_mut();
        if killed_k(&k) {
            return Err(());
        }
        debt.user(TOUCH_PAGE_NS);
        super::page_done_k(&mut k, idx);
        debt.maybe_flush_now(&mut k)
    };
    if must_wait {
        debt.flush(w).await;
    }
    Ok(())
}
