//! `mmap`: map a file that is on its device at boot with `mmap(MAP_SHARED)` and load from or
//! store to every page through the mapping, `passes` times, in file order or at random; with
//! `msync`, `msync(MS_SYNC)` after each pass; then `munmap`. Faults go through
//! `filemap_fault` (with mmap read-around); stores to clean pages through `page_mkwrite`,
//! which dirties the page and throttles the task as `write(2)` would.

use super::{access, exit, killed, uniform, CpuDebt};
use crate::calibration::{PAGE_SIZE, TOUCH_PAGE_NS};
use crate::fs::fs_writeback::vfs_fsync_range;
use crate::mm::{memory, namei, World};
use crate::scenario::{AccessPattern, MmapAccess, MmapParams};

/// The mmap task on file `ino`.
pub async fn run(w: World, idx: usize, mm: usize, ino: usize, p: MmapParams) {
    // The mapping holds the open file (`vm_file`) until munmap.
    let Some(file) = super::cat::open_file(&w, ino).await else {
        return exit(&w, mm, idx);
    };
    let die = |w: &World| {
        exit(w, mm, idx);
        namei::close(&mut w.borrow_mut(), file);
    };
    let pages = p.size / PAGE_SIZE;
    let write = p.access == MmapAccess::Write;
    let start = memory::mmap_file(&mut w.borrow_mut(), mm, ino, 0, pages as u32, 0);
    let mut debt = CpuDebt::default();
    super::enter(
        &mut w.borrow_mut(),
        idx,
        super::Phase::Running,
        pages * p.passes as u64,
    );
    for _ in 0..p.passes {
        for n in 0..pages {
            if killed(&w) {
                return die(&w);
            }
            let index = match p.pattern {
                AccessPattern::Sequential => n,
                AccessPattern::Random => uniform(&w, pages),
            };
            if access(&w, mm, start + index as u32, write, &mut debt)
                .await
                .is_err()
            {
                return die(&w);
            }
            debt.user(TOUCH_PAGE_NS);
            super::page_done(&w, idx);
            debt.maybe_flush(&w).await;
        }
        debt.flush(&w).await;
        if p.msync {
            // 3.x msync(MS_SYNC) of a shared file mapping is vfs_fsync of the whole file.
            vfs_fsync_range(&w, ino, 0..u64::MAX, false).await;
        }
        super::stats(&mut w.borrow_mut(), idx).passes += 1;
    }
    let mut k = w.borrow_mut();
    let now = k.sched.now();
    super::stats(&mut k, idx).io_done_at = Some(now);
    memory::munmap(&mut k, mm, start);
    namei::close(&mut k, file);
    super::finished(&mut k, idx);
}
