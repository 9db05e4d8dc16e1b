//! `stress-highalloc`: MMTests' driver (`mmtests.md` §6.3, `kernel-compaction.md` §9.2),
//! the whole procedure in one workload:
//! 1. MemTotal_MB/400 copies of a kernel tree (`cp -r`) and the primary tree build with
//!    `make -j1` on the test disk, again and again (`kbuild`'s builds);
//! 2. after the warm-up (the script's 10 × 30 s), Pass 1 of the allocation loop
//!    (`highalloc`), 5 s, Pass 2, the builds still running;
//! 3. 180 s later: `killall -KILL make cc1`, the trees deleted, a file as large as RAM
//!    written with dd, read back with cat and deleted, `drop_caches = 3`, the hugetlb pool
//!    grown to all of memory ("HugeTLB pages after dd") and emptied, and
//!    `min_free_kbytes = 1024`;
//! 4. the "while Rested" pass on the quiet machine; `min_free_kbytes` restored.
//!
//! Each copy is made by `cp -r` of the primary tree, a whole linux-2.6.30 tree, before
//! its build starts, as the script's background jobs do. The script's `updatedb` is not
//! modelled.

use super::highalloc::{self, HighallocPass};
use super::kbuild::{self, Tree};
use super::{enter, finished, stats, CpuDebt, Phase};
use crate::calibration::PAGE_SIZE;
use crate::engine::{self, Nanos, TaskId, SEC};
use crate::mm::{drop_caches, hugetlb, namei, page_alloc, World};
use crate::scenario::{KbuildParams, StressHighallocParams};
use std::cell::RefCell;
use std::rc::Rc;

/// The script's pause between Pass 1 and Pass 2.
const PASS_GAP: Nanos = 5 * SEC;
/// The rested pass's `min_free_kbytes`.
const RESTED_MIN_FREE_KBYTES: u64 = 1024;

/// What the driver measured.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StressHighallocStats {
    /// Tree copies built besides the primary tree.
    pub trees: u32,
    /// The passes run: "pass1", "pass2", "rested".
    pub passes: Vec<(&'static str, HighallocPass)>,
    /// Huge pages the pool could grow to after the dd ("HugeTLB pages after dd").
    pub hugetlb_after_dd: Option<u64>,
}

/// `MemTotal` in pages: every page the buddy allocator manages.
fn mem_total(w: &World) -> u64 {
    w.borrow().zones.iter().map(|z| z.managed_pages).sum()
}

/// The tree copies the script builds: MemTotal_MB / 400.
pub fn default_trees(mem_total_pages: u64) -> u32 {
    (mem_total_pages * PAGE_SIZE / (1 << 20) / 400) as u32
}

/// The trees and the tasks building them: (task, its counters' slot).
#[derive(Default)]
struct Builds {
    trees: Vec<Rc<RefCell<Tree>>>,
    tasks: Vec<(TaskId, usize)>,
}

/// Make the primary tree, start its build and the copies' `cp -r` and builds, and start
/// the driver on task slot `idx` at `start`.
pub fn spawn(
    w: &World,
    idx: usize,
    name: &str,
    bdi: usize,
    p: StressHighallocParams,
    start: Nanos,
) {
    let copies = p.trees.unwrap_or_else(|| default_trees(mem_total(w)));
    let build = KbuildParams {
        device: p.device.clone(),
        jobs: p.jobs,
        units: p.units,
        repeat: true,
        compile_cpu: crate::calibration::KBUILD_COMPILE_NS,
    };
    let builds: Rc<RefCell<Builds>> = Rc::default();
    // The primary tree, untarred before the test: on the disk, not cached.
    let primary = kbuild::create_tree(w, &format!("{name}/linux"), bdi, p.units, p.copy);
    builds.borrow_mut().trees.push(primary.clone());
    for i in 0..copies {
        let copy_name = format!("{name}/linux-{i}");
        if !p.copy {
            let copy = kbuild::create_tree(w, &copy_name, bdi, p.units, false);
            let slot = super::new_task(&mut w.borrow_mut(), "make");
            start_jobs(w, &builds, slot, &copy, &build, 0, start);
            builds.borrow_mut().trees.push(copy);
            continue;
        }
        let copy = kbuild::new_copy(w, &primary, &copy_name);
        builds.borrow_mut().trees.push(copy.clone());
        let slot = super::new_task(&mut w.borrow_mut(), "cp");
        let (w2, src, b2, build) = (w.clone(), primary.clone(), builds.clone(), build.clone());
        let t = w.borrow_mut().sched.spawn("cp", async move {
            super::delay_start(&w2, slot, start).await;
            if !kbuild::copy_tree(&w2, &src, &copy).await {
                return super::exit(&w2, slot, slot);
            }
            // make -jN in the copy, from now: this task is job 0.
            start_jobs(&w2, &b2, slot, &copy, &build, 1, 0);
            enter(
                &mut w2.borrow_mut(),
                slot,
                Phase::Running,
                build.units as u64,
            );
            kbuild::job_slot(w2, slot, copy, build, 0).await;
        });
        w.borrow_mut().mms[slot].task = Some(t);
        builds.borrow_mut().tasks.push((t, slot));
    }
    let slot = super::new_task(&mut w.borrow_mut(), "make");
    start_jobs(w, &builds, slot, &primary, &build, 0, start);
    let (w2, name) = (w.clone(), name.to_string());
    w.borrow_mut().sched.spawn(&name.clone(), async move {
        super::delay_start(&w2, idx, start).await;
        let st = drive(&w2, idx, &name, bdi, &p, &builds).await;
        let mut k = w2.borrow_mut();
        stats(&mut k, idx).stress_highalloc = Some(StressHighallocStats {
            trees: copies,
            ..st
        });
        finished(&mut k, idx);
    });
}

/// Spawn job slots `from..jobs` of `make -j{jobs}` on `tree`, counted on task slot `slot`,
/// each starting `delay` from now, and keep their tasks for the kill.
fn start_jobs(
    w: &World,
    builds: &Rc<RefCell<Builds>>,
    slot: usize,
    tree: &Rc<RefCell<Tree>>,
    build: &KbuildParams,
    from: u32,
    delay: Nanos,
) {
    for t in kbuild::spawn_jobs(w, slot, "make", tree, build, from, delay) {
        builds.borrow_mut().tasks.push((t, slot));
    }
}

/// The script, from the warm-up on.
async fn drive(
    w: &World,
    idx: usize,
    name: &str,
    bdi: usize,
    p: &StressHighallocParams,
    builds: &Rc<RefCell<Builds>>,
) -> StressHighallocStats {
    let mut st = StressHighallocStats::default();
    enter(&mut w.borrow_mut(), idx, Phase::Waiting, 0);
    engine::sleep(w, p.warmup).await;
    st.passes
        .push(("pass1", highalloc::pass(w, idx, p.alloc).await));
    engine::sleep(w, PASS_GAP).await;
    st.passes
        .push(("pass2", highalloc::pass(w, idx, p.alloc).await));
    if !p.rested || w.borrow().stopping() {
        return st;
    }
    enter(&mut w.borrow_mut(), idx, Phase::Waiting, 0);
    engine::sleep(w, p.rest).await;
    // killall -KILL cp make cc1: each exits at its next step.
    let tasks = builds.borrow().tasks.clone();
    for &(t, _) in &tasks {
        w.borrow_mut().sched.kill(t);
    }
    for &(_, slot) in &tasks {
        super::wait_for(w, slot).await;
    }
    let trees = builds.borrow().trees.clone();
    for tree in &trees {
        if !kbuild::delete_tree(w, tree).await {
            return st;
        }
    }
    // dd a file as large as RAM, cat it, delete it: the page cache turns over.
    let bytes = mem_total(w) * PAGE_SIZE;
    let file = format!("{name}/largefile");
    let mut debt = CpuDebt::default();
    let Some(ino) = kbuild::write_file(w, bdi, &file, bytes, &mut debt).await else {
        return st;
    };
    if !kbuild::read_whole(w, ino, &mut debt).await {
        return st;
    }
    debt.flush(w).await;
    if namei::unlink(w, bdi, &file).await.is_err() {
        return st;
    }
    drop_caches::drop_caches_sysctl(&mut w.borrow_mut(), 3);
    // nr_hugepages = MemTotal / 2 MiB, then 0.
    let want = mem_total(w) >> hugetlb::HUGETLB_PAGE_ORDER;
    let pool = hugetlb::grow_pool(w, want).await;
    st.hugetlb_after_dd = Some(pool.len() as u64);
    hugetlb::empty_pool(&mut w.borrow_mut(), pool);
    let saved = w.borrow().min_free_kbytes;
    page_alloc::set_min_free_kbytes(&mut w.borrow_mut(), RESTED_MIN_FREE_KBYTES);
    st.passes
        .push(("rested", highalloc::pass(w, idx, p.alloc).await));
    page_alloc::set_min_free_kbytes(&mut w.borrow_mut(), saved);
    st
}
