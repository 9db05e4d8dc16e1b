//! MMTests' 2011 micro tests of mapped writes, built on `usemem` (`micro/vmscan-file-mmap-
//! ops.sh`, `micro/vmscan-mixed-mmap-ops.sh`; `docs/seed-002.md`), one test after another.
//! A test makes its sparse files (`dd bs=4096 count=0 seek=N/4096+1`: a size, no blocks),
//! starts its writers together and waits for each; then the files go (`rm sparse-*`).
//! Each writer maps its region once (`MAP_SHARED` of its file, or anonymous), writes a word
//! in every page (`-j 4096`), `-r` passes over it, and exits. A write fault on a hole reads
//! nothing: the page is zeroed, and `page_mkwrite` dirties it.

use super::{finished, new_task, secs, stats, wait_for, CpuDebt};
use crate::calibration::PAGE_SIZE;
use crate::mm::{memory, namei, World};
use crate::scenario::{MicroParams, MicroTest};

/// One test's result.
#[derive(Clone, Debug, PartialEq)]
pub struct TestRun {
    pub test: MicroTest,
    /// From the first file's creation to the removal of the last (seconds).
    pub elapsed: f64,
}

/// A writer: `pages` pages of `file` (or anonymous memory), `passes` passes.
async fn usemem(w: World, t: usize, file: Option<usize>, pages: u64, passes: u32) {
    let start = w.borrow().sched.now();
    stats(&mut w.borrow_mut(), t).started_at = start;
    let n = pages as u32;
    let base = {
        let mut k = w.borrow_mut();
        match file {
            Some(ino) => memory::mmap_file(&mut k, t, ino, 0, n, 0),
            None => k.mms[t].mmap_anon(n, 0),
        }
    };
    let mut debt = CpuDebt::default();
    for _ in 0..passes {
        for vpn in base..base + n {
            if super::mem_eater::touch_page(&w, t, t, vpn, &mut debt)
                .await
                .is_err()
            {
                return super::exit(&w, t, t);
            }
        }
        debt.flush(&w).await;
    }
    // exit(): the mapping goes with the mm.
    let mut k = w.borrow_mut();
    memory::munmap(&mut k, t, base);
    finished(&mut k, t);
}

/// The sparse file `name` of `pages` pages on `bdi`, open; `None` if the kernel could not
/// allocate its inode.
async fn sparse_file(w: &World, bdi: usize, name: &str, pages: u64) -> Option<namei::OpenFile> {
    let f = super::dd::open_trunc(w, bdi, name).await.ok()?;
    // seek=SIZE/4096+1 count=0: one page more than the mapping.
    crate::mm::filemap::truncate_setsize(w, f.ino, pages + 1).await;
    Some(f)
}

/// Run `test`: the writers of each kind, each with its share.
async fn run_test(w: &World, bdi: usize, p: &MicroParams, test: MicroTest, threads: u32) {
    let share = |bytes: u64| (bytes / u64::from(threads) / PAGE_SIZE).max(1);
    // (file pages, passes) and (anonymous pages, passes) per writer.
    let (file, anon) = match test {
        MicroTest::FileMmapWrite => ((share(p.file_mmap_size), 1), None),
        MicroTest::MixedMmapWrite => {
            let anon = p.mixed_size * u64::from(p.mixed_anon_percent) / 100;
            let file = p.mixed_size * u64::from(100 - p.mixed_anon_percent) / 100;
            (
                (share(file), 2 * p.mixed_iter),
                Some((share(anon), p.mixed_iter)),
            )
        }
    };
    let mut files = Vec::new();
    for i in 1..=threads {
        let name = format!("sparse-{i}");
        match sparse_file(w, bdi, &name, file.0).await {
            Some(f) => files.push((name, f)),
            None => break,
        }
    }
    let mut writers = Vec::new();
    let mut spawn = |ino: Option<usize>, pages: u64, passes: u32| {
        let t = new_task(&mut w.borrow_mut(), "usemem");
        let w2 = w.clone();
        let task = w
            .borrow_mut()
            .sched
            .spawn("usemem", usemem(w2, t, ino, pages, passes));
        w.borrow_mut().mms[t].task = Some(task);
        writers.push(t);
    };
    for (_, f) in &files {
        spawn(Some(f.ino), file.0, file.1);
    }
    if let Some((pages, passes)) = anon {
        if pages > 0 {
            for _ in 0..threads {
                spawn(None, pages, passes);
            }
        }
    }
    for t in writers {
        wait_for(w, t).await;
    }
    for (name, f) in files {
        namei::close(&mut w.borrow_mut(), f);
        // rm's allocations may fail only for a task the OOM killer chose; go on.
        let _ = namei::unlink(w, bdi, &name).await;
    }
}

/// The driver (slot `idx`): every test of `p`, on device `bdi`.
pub async fn run(w: World, idx: usize, bdi: usize, p: MicroParams) {
    let threads = p.threads.unwrap_or_else(|| w.borrow().sched.cpus()).max(1);
    super::enter(
        &mut w.borrow_mut(),
        idx,
        super::Phase::Running,
        p.tests.len() as u64,
    );
    for &test in &p.tests {
        let start = w.borrow().sched.now();
        run_test(&w, bdi, &p, test, threads).await;
        let now = w.borrow().sched.now();
        let mut k = w.borrow_mut();
        let st = stats(&mut k, idx);
        st.micro.push(TestRun {
            test,
            elapsed: secs(now - start),
        });
        st.progress += 1;
    }
    finished(&mut w.borrow_mut(), idx);
}

/// The metrics: `elapsed-<test>` for each test, and `elapsed` for all of them.
pub fn extract(runs: &[TestRun]) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = runs
        .iter()
        .map(|r| (format!("elapsed-{}", r.test.name()), r.elapsed))
        .collect();
    if !runs.is_empty() {
        out.push(("elapsed".into(), runs.iter().map(|r| r.elapsed).sum()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_test_reports_its_elapsed_time_and_the_run_their_sum() {
        assert!(extract(&[]).is_empty(), "nothing run, nothing reported");
        let m = extract(&[
            TestRun {
                test: MicroTest::FileMmapWrite,
                elapsed: 2.5,
            },
            TestRun {
                test: MicroTest::MixedMmapWrite,
                elapsed: 4.0,
            },
        ]);
        assert_eq!(
            m,
            [
                ("elapsed-vmscan-file-mmap-write".to_string(), 2.5),
                ("elapsed-vmscan-mixed-mmap-write".to_string(), 4.0),
                ("elapsed".to_string(), 6.5)
            ]
        );
    }
}
