//! `dd if=/dev/zero of=FILE bs=BS count=N [conv=fdatasync|fsync]`: buffered writes of a new
//! file on a filesystem, then optionally `fdatasync` or `fsync`. Its io-duration (MMTests'
//! parallelio row) runs from the first write to the end of the sync. With `truncate_to` the
//! file is then cut to that size (`truncate -s`); it is closed, and with `unlink = true`
//! removed (`rm`), its pages and inode freed.
//!
//! dd copies through buffers of its own (coreutils' `dd.c`): one of `bs` bytes, or with
//! `ibs=`/`obs=` in place of `bs=` an input and an output buffer (`C_TWOBUFS`, "POSIX says
//! dd aggregates partial reads into output_blocksize"). Each is a `malloc` of a block, an
//! anonymous mapping of its own at 1 MiB; reading `/dev/zero` clears the input buffer
//! (`read_zero`) and the copy writes the output buffer, block after block, so a dd holds
//! one or two blocks of anonymous memory that reclaim can find.

use super::{access_range, enter, exit, killed, CpuDebt, Phase};
use crate::calibration::{PAGE_SIZE, TOUCH_PAGE_NS, WRITE_SYSCALL_NS};
use crate::fs::fs_writeback::vfs_fsync_range;
use crate::mm::namei::{self, OpenFile};
use crate::mm::page_alloc::AllocError;
use crate::mm::page_writeback::{balance_dirty_pages_ratelimited_nr, DirtyTask};
use crate::mm::{filemap, memory, World};
use crate::scenario::{DdConv, DdParams};

/// The dd task: write `dd.size` bytes to `dd.file` on device `bdi`, truncating the file
/// first if it exists (`O_TRUNC`).
pub async fn run(w: World, idx: usize, mm: usize, bdi: usize, dd: DdParams) {
    let size = dd.size;
    let name = dd
        .file
        .clone()
        .unwrap_or_else(|| w.borrow().mms[mm].name.clone() + "-largefile");
    let Ok(file) = open_trunc(&w, bdi, &name).await else {
        return exit(&w, mm, idx);
    };
    let ino = file.ino;
    // Killed: its exit closes the file.
    let die = |w: &World| {
        namei::close(&mut w.borrow_mut(), file);
        exit(w, mm, idx)
    };
    enter(&mut w.borrow_mut(), idx, Phase::Running, size / PAGE_SIZE);
    let bufs = Buffers::map(&mut w.borrow_mut(), mm, dd.bs, dd.two_buffers);
    let mut task = DirtyTask::default();
    let mut debt = CpuDebt::default();
    let total = size / PAGE_SIZE;
    if !write_file(
        &w,
        idx,
        ino,
        total,
        dd.bs,
        Some(&bufs),
        &mut task,
        &mut debt,
    )
    .await
    {
        return die(&w);
    }
    debt.flush(&w).await;
    // The copy is done: dd frees its buffers (its exit would).
    bufs.unmap(&mut w.borrow_mut());
    match dd.conv {
        DdConv::Fdatasync => vfs_fsync_range(&w, ino, 0..u64::MAX, true).await,
        DdConv::Fsync => vfs_fsync_range(&w, ino, 0..u64::MAX, false).await,
        DdConv::None => {}
    }
    let now = w.borrow().sched.now();
    super::stats(&mut w.borrow_mut(), idx).io_done_at = Some(now);
    if let Some(bytes) = dd.truncate_to {
        filemap::truncate_setsize(&w, ino, bytes / PAGE_SIZE).await;
    }
    namei::close(&mut w.borrow_mut(), file);
    if dd.unlink && namei::unlink(&w, bdi, &name).await.is_err() {
        return exit(&w, mm, idx);
    }
    super::finished(&mut w.borrow_mut(), idx);
}

/// dd's copy buffers in its address space (see the module's doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Buffers {
    mm: usize,
    /// First page of the input buffer.
    ibuf: u32,
    /// First page of the output buffer, with `ibs=`/`obs=`.
    obuf: Option<u32>,
    /// Pages of each: a block's worth, at least one.
    pages: u32,
}

impl Buffers {
    /// Map the buffers of a dd with block size `bs` in `mm` (untouched: the first block
    /// faults them in).
    pub fn map(k: &mut crate::mm::Kernel, mm: usize, bs: u64, two: bool) -> Buffers {
        let pages = bs.div_ceil(PAGE_SIZE).max(1) as u32;
        let ibuf = k.mms[mm].mmap_anon(pages, 0);
        let obuf = two.then(|| k.mms[mm].mmap_anon(pages, 0));
        Buffers {
            mm,
            ibuf,
            obuf,
            pages,
        }
    }

    /// The buffers' pages that a block of `pages` pages of data goes through: the read
    /// from `/dev/zero` clears the input buffer in the kernel (system time), and with two
    /// buffers the copy writes the output one (user time). `Err` if a fault failed.
    async fn fill(&self, w: &World, pages: u64, debt: &mut CpuDebt) -> Result<(), AllocError> {
        let n = pages.min(u64::from(self.pages)) as u32;
        access_range(w, self.mm, self.ibuf..self.ibuf + n, true, debt).await?;
        debt.system(pages * TOUCH_PAGE_NS);
        if let Some(obuf) = self.obuf {
            access_range(w, self.mm, obuf..obuf + n, true, debt).await?;
            debt.user(pages * TOUCH_PAGE_NS);
        }
        Ok(())
    }

    /// `free` of both buffers.
    pub fn unmap(self, k: &mut crate::mm::Kernel) {
        memory::munmap(k, self.mm, self.ibuf);
        if let Some(obuf) = self.obuf {
            memory::munmap(k, self.mm, obuf);
        }
    }
}

/// The write(2) calls of `bs` bytes that fill pages `0..total` of `ino`, page by page as
/// `generic_perform_write` copies them, with the throttle hook; progress counted in task
/// slot `idx`. With `bufs`, each block first goes through dd's buffers. False if the task
/// was killed or an allocation failed.
#[allow(clippy::too_many_arguments)]
pub async fn write_file(
    w: &World,
    idx: usize,
    ino: usize,
    total: u64,
    bs: u64,
    bufs: Option<&Buffers>,
    task: &mut DirtyTask,
    debt: &mut CpuDebt,
) -> bool {
    // A block smaller than a page takes several write(2) calls per page; each copies its
    // part, marks the page accessed and runs the throttle hook (`generic_perform_write`).
    let writes_per_page = (PAGE_SIZE / bs.max(1)).max(1);
    let per_write_cpu = |cpu: u64| {
        if writes_per_page > 1 {
            cpu / writes_per_page + WRITE_SYSCALL_NS
        } else {
            cpu
        }
    };
    // A larger block: one write(2) of whole pages, which the filesystem dirties in batches
    // with a throttle hook after each (a page each for `generic_perform_write`).
    let write_pages = (bs / PAGE_SIZE).max(1);
    let a_ops = w.borrow().inodes[ino].a_ops;
    let mut index = 0;
    while index < total {
        let end = index + write_pages.min(total - index);
        if let Some(b) = bufs {
            if killed(w) || b.fill(w, end - index, debt).await.is_err() {
                return false;
            }
        }
        while index < end {
            let left = end - index;
            let batch = a_ops.write_batch(&w.borrow(), task, left).clamp(1, left);
            // Pages of the batch that count towards the hook.
            let mut nr = 0;
            for i in 0..batch {
                for _ in 0..writes_per_page {
                    if killed(w) {
                        return false;
                    }
                    match filemap::write_page(w, ino, index + i, task).await {
                        Ok((cpu, counts)) => {
                            debt.system(per_write_cpu(cpu));
                            nr += u64::from(counts);
                        }
                        Err(_) => return false,
                    }
                    debt.maybe_flush(w).await;
                    if writes_per_page > 1 && nr > 0 {
                        balance_dirty_pages_ratelimited_nr(w, ino, task, nr).await;
                        nr = 0;
                    }
                }
                if i + 1 < batch {
                    super::page_done(w, idx);
                }
            }
            if nr > 0 {
                balance_dirty_pages_ratelimited_nr(w, ino, task, nr).await;
            }
            super::page_done(w, idx);
            index += batch;
        }
    }
    true
}

/// `open(name, O_WRONLY|O_CREAT|O_TRUNC)` on device `bdi`: the file, created or emptied.
pub async fn open_trunc(w: &World, bdi: usize, name: &str) -> Result<OpenFile, AllocError> {
    let f = namei::open(w, bdi, name, true)
        .await?
        .expect("O_CREAT opens a missing file");
    if !f.created {
        filemap::truncate_inode_pages(w, f.ino).await;
    }
    Ok(f)
}

/// MMTests parallelio's wait before the IO (`mmtests.md` §6.1 step 4): poll every 2 s until
/// "used" memory as `free -b | grep Mem:` reports it reaches `bytes`, then sleep 5 s.
/// The era's `free` (procps before 3.3.10, 2014) printed MemTotal - MemFree there, page
/// cache and buffers included; only its "-/+ buffers/cache" line left them out.
pub async fn wait_for_used_memory(w: &World, bytes: u64) {
    use crate::engine::{sleep, SEC};
    use crate::mm::vmstat::ZoneStat;
    loop {
        let used = {
            let k = w.borrow();
            let total: u64 = k.zones.iter().map(|z| z.managed_pages).sum();
            let free = k.global_stat(ZoneStat::nr_free_pages);
            total.saturating_sub(free) * PAGE_SIZE
        };
        if used >= bytes {
            break;
        }
        sleep(w, 2 * SEC).await;
    }
    sleep(w, 5 * SEC).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Nanos, SEC};
    use crate::mm::page_alloc::{alloc_flags, get_page_from_freelist};
    use crate::mm::vmstat::ZoneStat;
    use crate::mm::Gfp;
    use crate::sim::{add_test_disk, boot_for_test, run_task};

    /// A 16 MiB dd with `two` buffers: the most anonymous pages it held while it ran, the
    /// anonymous pages left after it, and its user time.
    fn dd_buffers(two: bool) -> (u64, u64, Nanos) {
        let w = boot_for_test(256, 0, "3.9");
        let bdi = add_test_disk(&w, "sda", "ext4");
        let anon = |w: &World| w.borrow().global_stat(ZoneStat::nr_anon_pages);
        let base = anon(&w);
        let peak = std::rc::Rc::new(std::cell::Cell::new(0));
        let (w1, p1) = (w.clone(), peak.clone());
        w.borrow_mut().sched.spawn("watcher", async move {
            loop {
                p1.set(p1.get().max(anon(&w1) - base));
                crate::engine::sleep(&w1, crate::engine::MSEC).await;
            }
        });
        let (w2, user) = (w.clone(), std::rc::Rc::new(std::cell::Cell::new(0)));
        let u2 = user.clone();
        run_task(&w, 60 * SEC, async move {
            let d = crate::workload::new_task(&mut w2.borrow_mut(), "dd");
            let params = DdParams {
                device: "sda".into(),
                size: 16 << 20,
                bs: 1 << 20,
                two_buffers: two,
                conv: DdConv::Fdatasync,
                truncate_to: None,
                unlink: false,
                start_when_used: None,
                file: None,
            };
            run(w2.clone(), d, d, bdi, params).await;
            let k = w2.borrow();
            u2.set(k.sched.task_times(k.sched.current()).0);
            let st = crate::workload::stats_of(&k, d);
            assert!(
                !st.killed && st.io_done_at.is_some(),
                "dd finished its copy"
            );
        });
        let left = anon(&w) - base;
        (peak.get(), left, user.get())
    }

    #[test]
    fn a_block_through_the_buffers_costs_a_clear_and_with_two_a_copy_of_each_page() {
        let w = boot_for_test(64, 0, "3.9");
        let w2 = w.clone();
        run_task(&w, SEC, async move {
            let mm = crate::workload::new_task(&mut w2.borrow_mut(), "dd");
            let bufs = Buffers::map(&mut w2.borrow_mut(), mm, 1 << 20, true);
            let mut debt = CpuDebt::default();
            // The first block faults the buffers in; the second finds them resident.
            bufs.fill(&w2, 256, &mut debt).await.unwrap();
            debt.flush(&w2).await;
            bufs.fill(&w2, 256, &mut debt).await.unwrap();
            assert_eq!(
                (debt.system, debt.user),
                (256 * TOUCH_PAGE_NS, 256 * TOUCH_PAGE_NS)
            );
            // A last, short block touches only its pages' worth.
            let mut debt = CpuDebt::default();
            bufs.fill(&w2, 3, &mut debt).await.unwrap();
            assert_eq!(
                (debt.system, debt.user),
                (3 * TOUCH_PAGE_NS, 3 * TOUCH_PAGE_NS)
            );
        });
    }

    #[test]
    fn dd_copies_each_block_through_its_buffers_and_frees_them_when_done() {
        // bs=1M: one buffer of 256 pages, cleared by each read of /dev/zero (system time).
        let (peak, left, user) = dd_buffers(false);
        assert_eq!((peak, left, user), (256, 0, 0));
        // ibs=1M obs=1M: the copy writes a second buffer, in user mode.
        let (peak, left, user) = dd_buffers(true);
        assert_eq!((peak, left), (512, 0));
        assert_eq!(
            user,
            4096 * TOUCH_PAGE_NS,
            "a page's copy for each page written"
        );
    }

    #[test]
    fn used_memory_counts_the_page_cache_as_2013_free_did() {
        let w = boot_for_test(64, 0, "3.9");
        // 4 MiB of page cache and nothing else allocated: "used" is MemTotal - MemFree.
        let used = {
            let mut k = w.borrow_mut();
            for _ in 0..1024 {
                let pfn =
                    get_page_from_freelist(&mut k, Gfp::KERNEL, 0, alloc_flags::NO_WATERMARKS)
                        .unwrap();
                let zi = k.page_zone(pfn);
                k.zones[zi].mod_stat(ZoneStat::nr_file_pages, 1);
            }
            // The CPU list's leftover goes back: the allocation below takes from the buddy
            // lists (a batch), as MemFree sees.
            crate::mm::page_alloc::drain_all_pages(&mut k);
            let total: u64 = k.zones.iter().map(|z| z.managed_pages).sum();
            (total - k.global_stat(ZoneStat::nr_free_pages)) * PAGE_SIZE
        };
        let w2 = w.clone();
        run_task(&w, 40 * SEC, async move {
            let start = w2.borrow().sched.now();
            wait_for_used_memory(&w2, used).await;
            // Reached at the first poll, then the 5 s sleep.
            assert_eq!(w2.borrow().sched.now() - start, 5 * SEC);
            // A page more is used from 3 s on: seen at the poll of 4 s, every 2 s from the
            // start, then the 5 s.
            let w3 = w2.clone();
            w2.borrow_mut().sched.spawn("user", async move {
                crate::engine::sleep(&w3, 3 * SEC).await;
                let mut k = w3.borrow_mut();
                get_page_from_freelist(&mut k, Gfp::KERNEL, 0, alloc_flags::NO_WATERMARKS).unwrap();
            });
            let start = w2.borrow().sched.now();
            wait_for_used_memory(&w2, used + PAGE_SIZE).await;
            assert_eq!(w2.borrow().sched.now() - start, 9 * SEC);
        });
    }
}
