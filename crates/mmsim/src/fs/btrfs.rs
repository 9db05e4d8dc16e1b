//! btrfs's own write paths (2.6.37, `fs/btrfs/file.c`, `disk-io.c`, `volumes.c`): how
//! `btrfs_file_aio_write` batches the pages of a `write()` between dirty-throttle hooks, and
//! how writeback hands data bios to worker threads instead of submitting them.
//!
//! **Batches.** `btrfs_file_aio_write` prepares, copies into and dirties `nrptrs` pages at a
//! time and calls `balance_dirty_pages_ratelimited_nr` once per batch: `nrptrs` is the
//! write's pages up to a page of pointers (512 on 64-bit), or up to 16 with patch 37 of the
//! IO-less series v3. 3.2+ (mainline's form of 37) stops a batch where the task's
//! `nr_dirtied_pause` is due, but at no fewer than 8 pages.
//!
//! **Async submission.** A data write bio is checksummed by a worker (`btrfs_wq_submit_bio`)
//! and then queued on its device's pending list (`schedule_bio`, `nr_async_bios` + 1); the
//! device's submit worker (`run_scheduled_bios`) takes bios off the list (`nr_async_bios`
//! − 1) and submits them, sleeping in `get_request` when the request pool is full. The
//! writer itself never waits for a request, so without a bound every dirty page it walks
//! goes under writeback. Patch 38 of v3 makes the writer wait, after queueing a bio, while
//! more than `btrfs_async_submit_limit` bios are pending; the worker wakes it once fewer
//! than two thirds of the limit are.
//!
//! A bio is what `extent_writepages` builds: a run of pages of one walk, contiguous on disk,
//! up to the queue's `max_sectors` (`bio_add_page`). Its pages keep their one-page bios
//! here, submitted one after another, which merge in the request queue as the real bio
//! would be one request.
//!
//! Not modelled: the checksumming stage's own time and queue (`nr_async_submits`), the
//! separate list for sync bios (served first), and a multi-device filesystem's back-off
//! from a congested device.

use std::collections::VecDeque;

use crate::block::Bio;
use crate::engine::{self, WaitQueueId};
use crate::mm::backing_dev::submit_bio;
use crate::mm::fs_ops::PageioData;
use crate::mm::page_writeback::DirtyTask;
use crate::mm::{Kernel, World};
use crate::presets::Switch;

/// `btrfs_file_aio_write`'s `nrptrs` before patch 37: a page of `struct page *`.
pub const NRPTRS_MAX: u64 = crate::calibration::PAGE_SIZE / 8;

/// `nrptrs` with patch 37 of v3.
pub const NRPTRS_PATCH_37: u64 = 16;

/// The least `nrptrs` of 3.2+ (`max(nrptrs, 8)`).
pub const NRPTRS_MIN_3_2: u64 = 8;

/// Pending bios per submit worker (`btrfs_async_submit_limit`: 256 × min(workers, open
/// devices)).
pub const ASYNC_BIOS_PER_WORKER: u64 = 256;

/// `thread_pool_size`, the `max_workers` of btrfs's worker pools: `min(CPUs + 2, 8)`
/// (`open_ctree`).
pub fn thread_pool_size(cpus: u32) -> u64 {
    (u64::from(cpus) + 2).min(8)
}

/// `btrfs_async_submit_limit` of a filesystem on `open_devices` devices.
pub fn async_submit_limit(cpus: u32, open_devices: u64) -> u64 {
    ASYNC_BIOS_PER_WORKER * thread_pool_size(cpus).min(open_devices)
}

/// `nrptrs`: the pages one batch of a `write()` of `write_pages` pages prepares and dirties
/// before its throttle hook, for `task`.
pub fn nrptrs(k: &Kernel, task: &DirtyTask, write_pages: u64) -> u64 {
    let pages = write_pages.clamp(1, NRPTRS_MAX);
    if !k.writeback_2_6_37() {
        // 3.2+: batches end where the task's next throttle check is due.
        let due = task.nr_dirtied_pause.saturating_sub(task.nr_dirtied);
        return pages.min(due).max(NRPTRS_MIN_3_2);
    }
    if k.sw.on(Switch::BtrfsDirtyBatch16) {
        pages.min(NRPTRS_PATCH_37)
    } else {
        pages
    }
}

/// A btrfs mount's submission state (`struct btrfs_fs_info`'s part, with its one device's
/// pending list).
#[derive(Debug)]
pub struct BtrfsFsInfo {
    /// Bios queued for the submit worker, oldest first; each the one-page bios of a run.
    pending: VecDeque<Vec<Bio>>,
    /// `nr_async_bios`.
    pub nr_async_bios: u64,
    /// `btrfs_async_submit_limit`.
    pub limit: u64,
    /// The queue's `max_sectors`: the largest bio.
    max_sectors: u32,
    /// The submit worker sleeps here while nothing is pending.
    worker_wq: WaitQueueId,
    /// `async_submit_wait`: writers over the limit sleep here (patch 38).
    async_submit_wait: WaitQueueId,
    /// Bios queued, cumulative.
    pub bios_queued: u64,
    /// Times a writer waited for the pending bios to drain (patch 38), cumulative.
    pub submitter_waits: u64,
}

impl BtrfsFsInfo {
    /// A mount with nothing pending, whose largest bio is `max_sectors`.
    pub fn new(k: &mut Kernel, max_sectors: u32) -> BtrfsFsInfo {
        BtrfsFsInfo {
            pending: VecDeque::new(),
            nr_async_bios: 0,
            limit: async_submit_limit(k.sched.cpus(), 1),
            max_sectors,
            worker_wq: k.sched.new_queue(),
            async_submit_wait: k.sched.new_queue(),
            bios_queued: 0,
            submitter_waits: 0,
        }
    }

    /// Pages in the pending bios.
    pub fn pending_pages(&self) -> usize {
        self.pending.iter().map(Vec::len).sum()
    }
}

/// The btrfs state of mount `bdi`, if its filesystem submits asynchronously.
pub fn fs_info(k: &Kernel, bdi: usize) -> Option<&BtrfsFsInfo> {
    k.bdis[bdi].fs_info.as_ref()?.downcast_ref()
}

fn fs_info_mut(k: &mut Kernel, bdi: usize) -> &mut BtrfsFsInfo {
    k.bdis[bdi]
        .fs_info
        .as_mut()
        .and_then(|i| i.downcast_mut())
        .expect("a btrfs mount has its submission state")
}

/// The bio a writeback walk is building (`extent_page_data`'s `bio`).
#[derive(Debug, Default)]
pub struct BioUnderConstruction {
    bdi: usize,
    pages: Vec<Bio>,
    sectors: u32,
}

/// The walk's state for a new `->writepages`.
pub fn writepages_start() -> PageioData {
    Some(Box::new(BioUnderConstruction::default()))
}

/// Queue a finished bio for the submit worker (`btrfs_wq_submit_bio` → `schedule_bio`).
fn queue_bio(k: &mut Kernel, bdi: usize, pages: Vec<Bio>) {
    let info = fs_info_mut(k, bdi);
    info.pending.push_back(pages);
    info.nr_async_bios += 1;
    info.bios_queued += 1;
    let q = info.worker_wq;
    k.sched.wake_all(q);
}

/// `submit_extent_page`: add a page's bio to the walk's bio, queueing the bio built so far
/// first if the page does not extend it on disk or it is full. Returns whether a bio was
/// queued. A page with no walk (`data` is `None`) goes in a bio of its own.
pub fn add_page(k: &mut Kernel, data: &mut PageioData, bdi: usize, bio: Bio) -> bool {
    let Some(b) = data
        .as_mut()
        .and_then(|d| d.downcast_mut::<BioUnderConstruction>())
    else {
        queue_bio(k, bdi, vec![bio]);
        return true;
    };
    let max = fs_info_mut(k, bdi).max_sectors;
    let extends = b.pages.last().is_some_and(|last| {
        b.bdi == bdi
            && last.sector + u64::from(last.nr_sectors) == bio.sector
            && b.sectors + bio.nr_sectors <= max
    });
    let mut queued = false;
    if !extends && !b.pages.is_empty() {
        let done = std::mem::take(&mut b.pages);
        queue_bio(k, b.bdi, done);
        b.sectors = 0;
        queued = true;
    }
    b.bdi = bdi;
    b.sectors += bio.nr_sectors;
    b.pages.push(bio);
    queued
}

/// The end of a walk (`flush_epd_write_bio`): queue the bio it was building. Returns the
/// device it went to, if there was one.
pub fn writepages_end(k: &mut Kernel, data: PageioData) -> Option<usize> {
    let b = data?.downcast::<BioUnderConstruction>().ok()?;
    if b.pages.is_empty() {
        return None;
    }
    queue_bio(k, b.bdi, b.pages);
    Some(b.bdi)
}

/// What a writer that queued a bio on `bdi` waits for: with patch 38, while more than the
/// limit are pending, until fewer than the limit are.
pub async fn wait_for_async_bios(w: &World, bdi: usize) {
    let (over, q) = {
        let mut k = w.borrow_mut();
        let on = k.sw.on(Switch::BtrfsAsyncBioLimit);
        let info = fs_info_mut(&mut k, bdi);
        let over = on && info.nr_async_bios > info.limit;
        if over {
            info.submitter_waits += 1;
        }
        (over, info.async_submit_wait)
    };
    if !over {
        return;
    }
    loop {
        engine::wait_event(w, q, None, false).await;
        let mut k = w.borrow_mut();
        let info = fs_info_mut(&mut k, bdi);
        if info.nr_async_bios < info.limit {
            return;
        }
    }
}

/// The submit worker of mount `bdi` (`run_scheduled_bios`): submit pending bios in order,
/// sleeping in `get_request` as any submitter does, and wake writers waiting on the limit
/// once fewer than two thirds of it are pending.
pub async fn submit_worker(w: World, bdi: usize) {
    loop {
        let next = {
            let mut k = w.borrow_mut();
            let info = fs_info_mut(&mut k, bdi);
            match info.pending.pop_front() {
                Some(bio) => {
                    info.nr_async_bios -= 1;
                    let wake = info.nr_async_bios < info.limit * 2 / 3;
                    let q = info.async_submit_wait;
                    if wake {
                        k.sched.wake_all(q);
                    }
                    Ok(bio)
                }
                None => Err(info.worker_wq),
            }
        };
        match next {
            Ok(pages) => {
                for bio in pages {
                    submit_bio(&w, bdi, bio).await;
                }
            }
            Err(q) => {
                engine::wait_event(&w, q, None, false).await;
            }
        }
    }
}

/// Invariants: the pending count is the pending list's length, and its pages are under
/// writeback.
pub fn check_mount(k: &Kernel, bdi: usize) -> Result<(), String> {
    let Some(info) = fs_info(k, bdi) else {
        return Err("btrfs mount without its submission state".into());
    };
    if info.nr_async_bios != info.pending.len() as u64 {
        return Err(format!(
            "nr_async_bios {} with {} bios pending",
            info.nr_async_bios,
            info.pending.len()
        ));
    }
    for bio in info.pending.iter().flatten() {
        let pfn = bio.tag as crate::mm::page::Pfn;
        if !k.pages.test(pfn, crate::mm::page::PG_WRITEBACK) {
            return Err(format!("pending bio of page {pfn} not under writeback"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The page invariants read a btrfs mount's submission state: a count of pending bios
    /// that disagrees with the list is a violation naming it.
    #[test]
    fn the_invariants_check_the_pending_bios_count() {
        let w = machine("ioless-v3", Filesystem::Btrfs);
        let mut k = w.borrow_mut();
        crate::mm::invariants::check(&k).expect("a fresh mount");
        let info = k.bdis[0]
            .fs_info
            .as_mut()
            .and_then(|i| i.downcast_mut::<BtrfsFsInfo>());
        info.expect("a btrfs mount").nr_async_bios = 1;
        let e = crate::mm::invariants::check(&k).expect_err("one bio counted, none pending");
        assert!(
            format!("{e:?}").contains("nr_async_bios 1 with 0 bios pending"),
            "{e:?}"
        );
    }
    use crate::engine::SEC;
    use crate::fs::buffer::testing::{machine, new_file, written_page};
    use crate::fs::Filesystem;
    use crate::mm::invariants;
    use crate::mm::page::PG_WRITEBACK;
    use crate::mm::page_writeback::write_cache_pages;
    use crate::sim::run_task;

    /// Patch 37: a write's pages go to the hook at most 16 at a time; before it, the whole
    /// write up to a page of pointers. 3.2+ ends a batch where the task's pause is due.
    #[test]
    fn a_write_runs_the_hook_every_16_pages_with_patch_37_and_once_before_it() {
        let task = DirtyTask::default();
        let w = machine("2.6.37-rc5", Filesystem::Btrfs);
        let k = w.borrow();
        for (write_pages, batch) in [(1, 1), (16, 16), (256, 256), (512, 512), (2048, 512)] {
            assert_eq!(nrptrs(&k, &task, write_pages), batch, "{write_pages} pages");
        }
        drop(k);
        let w = machine("ioless-v3", Filesystem::Btrfs);
        let k = w.borrow();
        for (write_pages, batch) in [(1, 1), (10, 10), (16, 16), (256, 16), (2048, 16)] {
            assert_eq!(nrptrs(&k, &task, write_pages), batch, "{write_pages} pages");
        }
        drop(k);
        let mut k = w.borrow_mut();
        k.sw.set(Switch::BtrfsDirtyBatch16, false);
        assert_eq!(nrptrs(&k, &task, 256), 256, "ioless-v3 without 37");
        drop(k);
        let w = machine("3.9", Filesystem::Btrfs);
        let k = w.borrow();
        let mut task = DirtyTask {
            nr_dirtied_pause: 100,
            nr_dirtied: 60,
            ..Default::default()
        };
        assert_eq!(nrptrs(&k, &task, 256), 40, "up to the pause");
        task.nr_dirtied = 97;
        assert_eq!(nrptrs(&k, &task, 256), 8, "at least 8");
        task.nr_dirtied_pause = 4096;
        assert_eq!(nrptrs(&k, &task, 1024), 512, "at most a page of pointers");
    }

    #[test]
    fn the_limit_is_256_bios_per_worker_and_open_device() {
        assert_eq!(thread_pool_size(1), 3);
        assert_eq!(thread_pool_size(6), 8);
        assert_eq!(thread_pool_size(24), 8);
        assert_eq!(async_submit_limit(8, 1), 256);
        assert_eq!(async_submit_limit(2, 12), 4 * 256);
        assert_eq!(async_submit_limit(24, 12), 8 * 256);
    }

    /// `pages` pages of a new file, every `stride`-th index (a stride of 2 leaves holes, so
    /// no two pages share a bio).
    fn dirty_file(w: &World, pages: u64, stride: u64) -> usize {
        let mut k = w.borrow_mut();
        let ino = new_file(&mut k);
        for i in 0..pages {
            written_page(&mut k, ino, i * stride);
        }
        ino
    }

    /// A walk builds bios of contiguous pages up to `max_sectors` (128 pages here) and
    /// queues them to the worker without waiting for a request; the worker submits them,
    /// and the pages' writeback ends.
    #[test]
    fn writeback_queues_runs_of_contiguous_pages_to_the_worker() {
        let w = machine("2.6.37-rc5", Filesystem::Btrfs);
        let ino = dirty_file(&w, 300, 1);
        let w2 = w.clone();
        run_task(&w, 10 * SEC, async move {
            let start = w2.borrow().sched.now();
            write_cache_pages(&w2, ino, u64::MAX, None, false).await;
            let k = w2.borrow();
            assert_eq!(k.sched.now(), start, "the walk never sleeps");
            let info = fs_info(&k, 0).unwrap();
            assert_eq!((info.bios_queued, info.nr_async_bios), (3, 3));
            assert_eq!(info.pending_pages(), 300);
            let sizes: Vec<usize> = info.pending.iter().map(Vec::len).collect();
            assert_eq!(sizes, [128, 128, 44]);
            assert_eq!(k.bdis[0].writeback, 300);
            invariants::check(&k).expect("invariants");
        });
        let k = w.borrow();
        let info = fs_info(&k, 0).unwrap();
        assert_eq!((info.nr_async_bios, info.submitter_waits), (0, 0));
        assert_eq!(k.bdis[0].writeback, 0, "all written");
        assert_eq!(k.bdis[0].written, 300);
        invariants::check(&k).expect("invariants");
    }

    /// Patch 38: a writer that queued a bio while more than the limit are pending sleeps
    /// until the worker has brought them under it; without the patch it queues them all.
    #[test]
    fn with_patch_38_the_writer_waits_above_the_limit_and_without_it_does_not() {
        for (preset, waits) in [("2.6.37-rc5", false), ("ioless-v3", true)] {
            let w = machine(preset, Filesystem::Btrfs);
            let ino = dirty_file(&w, 400, 2);
            let w2 = w.clone();
            run_task(&w, 20 * SEC, async move {
                let start = w2.borrow().sched.now();
                write_cache_pages(&w2, ino, u64::MAX, None, false).await;
                let k = w2.borrow();
                let info = fs_info(&k, 0).unwrap();
                assert_eq!(info.limit, 256);
                assert_eq!(info.bios_queued, 400, "{preset}: a bio a page");
                if waits {
                    // It slept while the worker filled the request pool (at once here).
                    assert!(info.submitter_waits > 0, "{preset}");
                    assert!(info.nr_async_bios <= info.limit, "{preset}");
                } else {
                    assert_eq!(info.submitter_waits, 0, "{preset}");
                    assert_eq!(k.sched.now(), start, "{preset}: never slept");
                    assert_eq!(info.nr_async_bios, 400, "{preset}: all pending");
                }
                invariants::check(&k).expect("invariants");
            });
            let k = w.borrow();
            assert_eq!(k.bdis[0].written, 400, "{preset}");
            assert!(!k.pages.flags.iter().any(|f| f & PG_WRITEBACK != 0));
        }
    }
}
