//! ext4's journal in data=ordered mode (`fs/jbd2/`, 2.6.37–3.x): the part that touches data
//! pages, which for a delayed-allocation file is a burst of redirtying every commit.
//!
//! When ext4's `->writepages` allocates blocks for a file in data=ordered mode it puts the
//! inode on the running transaction (`ext4_jbd2_file_inode`). The first handle starts the
//! transaction and arms the commit timer: `commit=` seconds (5 by default) later, rounded
//! to a whole second, kjournald2 commits it. Ordered data means the commit first writes
//! each filed inode's dirty pages, with `generic_writepages` over the whole file
//! (`journal_submit_inode_data_buffers`), then waits for their writeback
//! (`journal_finish_inode_data_buffers`). That walk goes through ext4's `->writepage`,
//! which allocates nothing: every page whose blocks are still delayed is redirtied. A
//! streaming writer's file is almost all such pages, so each commit redirties the whole
//! dirty part of the file: Wu's "burst-of-redirty" of data=ordered. Before 3.3 every
//! redirtying counts as a new dirtying ([`account_redirty`]); data=writeback files no
//! inode and has none of it.
//!
//! Not modelled: metadata and the log, `fsync` forcing a commit, transactions closed early
//! because the log is full, and handles waiting for a commit to start.
//!
//! [`account_redirty`]: crate::mm::page_writeback::account_redirty

use super::jbd::commit_loop;
use crate::calibration::JBD_COMMIT_INTERVAL;
use crate::engine::{Nanos, WaitQueueId};
use crate::mm::filemap::filemap_fdatawait_range;
use crate::mm::page_writeback::generic_writepages;
use crate::mm::{Kernel, World};

/// One jbd2 journal (`journal_t`), one per ext4 data=ordered mount.
#[derive(Debug)]
pub struct Journal2 {
    /// kjournald2 sleeps here (`j_wait_commit`).
    pub wait_commit: WaitQueueId,
    /// `j_commit_interval`.
    pub commit_interval: Nanos,
    /// When the running transaction started; `None` if there is none.
    pub running_since: Option<Nanos>,
    /// The running transaction's `t_inode_list`, in filing order, each inode once.
    inode_list: Vec<u32>,
    /// The committing transaction's list, kept between commits for its capacity.
    spare: Vec<u32>,
    /// `j_commit_sequence`: transactions committed.
    pub commit_sequence: u64,
    /// Pages the commits' walks redirtied (delayed blocks) and wrote (allocated ones).
    pub pages_redirtied: u64,
    pub pages_written: u64,
}

impl Journal2 {
    /// An empty journal whose kjournald2 waits on `wait_commit`.
    pub fn new(wait_commit: WaitQueueId) -> Journal2 {
        Journal2 {
            wait_commit,
            commit_interval: JBD_COMMIT_INTERVAL,
            running_since: None,
            inode_list: Vec::new(),
            spare: Vec::new(),
            commit_sequence: 0,
            pages_redirtied: 0,
            pages_written: 0,
        }
    }

    /// The inodes filed on the running transaction.
    pub fn filed(&self) -> &[u32] {
        &self.inode_list
    }
}

/// The jbd2 journal of device `bdi`, if it is an ext4 data=ordered mount.
pub fn journal_of(k: &Kernel, bdi: usize) -> Option<&Journal2> {
    k.bdis[bdi].fs_info.as_ref()?.downcast_ref()
}

fn journal_mut(k: &mut Kernel, bdi: usize) -> Option<&mut Journal2> {
    k.bdis[bdi].fs_info.as_mut()?.downcast_mut()
}

/// `ext4_jbd2_file_inode`: put `ino` on its mount's running transaction (starting one if
/// there is none), if the mount is data=ordered.
pub fn ext4_jbd2_file_inode(k: &mut Kernel, ino: usize) {
    let now = k.sched.now();
    let bdi = k.inodes[ino].bdi;
    let Some(j) = journal_mut(k, bdi) else {
        return;
    };
    if j.running_since.is_none() {
        j.running_since = Some(now);
        let q = j.wait_commit;
        k.sched.wake_all(q);
    }
    let j = journal_mut(k, bdi).expect("checked");
    // A transaction files an inode once (`jinode->i_transaction`); lists are a few long.
    if !j.inode_list.contains(&(ino as u32)) {
        j.inode_list.push(ino as u32);
    }
}

/// `jbd2_journal_commit_transaction`, data part: the running transaction becomes the
/// committing one; each of its inodes is walked with `generic_writepages` up to its size,
/// then waited on.
pub async fn jbd2_journal_commit_transaction(w: &World, bdi: usize) {
    let list = {
        let mut k = w.borrow_mut();
        let j = journal_mut(&mut k, bdi).expect("a jbd2 mount");
        j.running_since = None;
        let mut list = std::mem::take(&mut j.spare);
        std::mem::swap(&mut list, &mut j.inode_list);
        list
    };
    for &ino in &list {
        let ino = ino as usize;
        let size = w.borrow().inodes[ino].size_pages;
        let walked = generic_writepages(w, ino, 0..size).await;
        let mut k = w.borrow_mut();
        let j = journal_mut(&mut k, bdi).expect("a jbd2 mount");
        j.pages_redirtied += walked.skipped;
        j.pages_written += walked.pages - walked.skipped;
    }
    for &ino in &list {
        let size = w.borrow().inodes[ino as usize].size_pages;
        filemap_fdatawait_range(w, ino as usize, 0..size).await;
    }
    let mut k = w.borrow_mut();
    let j = journal_mut(&mut k, bdi).expect("a jbd2 mount");
    j.commit_sequence += 1;
    let mut list = list;
    list.clear();
    j.spare = list;
}

/// kjournald2: commit the running transaction when its timer expires.
pub async fn kjournald2(w: World, bdi: usize) {
    let timer = |k: &Kernel| {
        let j = journal_of(k, bdi).expect("a jbd2 mount");
        (j.running_since, j.commit_interval, j.wait_commit)
    };
    commit_loop(&w, timer, || jbd2_journal_commit_transaction(&w, bdi)).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{self, SEC};
    use crate::fs::buffer::testing::*;
    use crate::fs::Filesystem;
    use crate::mm::invariants;
    use crate::mm::page::{Pfn, PG_DIRTY};
    use crate::mm::page_writeback::write_cache_pages;
    use crate::mm::vmstat::ZoneStat;
    use crate::sim::run_task;

    const PAGES: u64 = 64;
    /// Pages the flusher writes (allocating their blocks) before the commit.
    const FLUSHED: u64 = 16;

    /// Under `preset`, write `PAGES` pages to a file on ext4 (data=ordered unless
    /// `writeback`), let `->writepages` write the first `FLUSHED`, rewrite the first and the
    /// last of those after their write completed, and look at the file at 3 s (before the
    /// commit) and 8 s (after).
    /// Returns (nr_dirtied before, after), the pages dirty after, and the journal's
    /// (commits, redirtied, written) at the end.
    fn commit_of_a_streamed_file(preset: &str, writeback: bool) -> ((u64, u64), u64, [u64; 3]) {
        let w = if writeback {
            let w = crate::sim::boot_for_test(128, 0, preset);
            let dev = crate::scenario::BlockDevice {
                data: crate::scenario::DataMode::Writeback,
                ..crate::scenario::BlockDevice::ext4_hdd("sda")
            };
            crate::sim::add_block_device(&w, &dev).expect("the disk is built");
            for _ in 0..1024 {
                w.borrow_mut().bdi_props.writeout_inc(0, 0);
            }
            w
        } else {
            machine(preset, Filesystem::Ext4)
        };
        let ino = new_file(&mut w.borrow_mut());
        let w2 = w.clone();
        let out = std::rc::Rc::new(std::cell::RefCell::new(None));
        let out2 = out.clone();
        run_task(&w, 9 * SEC, async move {
            engine::sleep_until(&w2, SEC).await;
            let pages: Vec<Pfn> = {
                let mut k = w2.borrow_mut();
                (0..PAGES).map(|i| written_page(&mut k, ino, i)).collect()
            };
            write_cache_pages(&w2, ino, FLUSHED, None, false).await;
            filemap_fdatawait_range(&w2, ino, 0..FLUSHED).await;
            {
                let mut k = w2.borrow_mut();
                for index in [0, FLUSHED - 1] {
                    let pfn = pages[index as usize];
                    crate::mm::filemap::write_end(
                        &mut k,
                        ino,
                        index,
                        pfn,
                        &mut crate::mm::page_writeback::DirtyTask::default(),
                    );
                    assert!(k.pages.test(pfn, PG_DIRTY));
                }
            }
            engine::sleep_until(&w2, 3 * SEC).await;
            let dirtied = |k: &Kernel| (k.global_stat(ZoneStat::nr_dirtied), k.bdis[0].dirtied);
            let before = dirtied(&w2.borrow());
            engine::sleep_until(&w2, 8 * SEC).await;
            let k = w2.borrow();
            invariants::check(&k).expect("invariants after the commit");
            let after = dirtied(&k);
            assert_eq!(
                after.0 - before.0,
                after.1 - before.1,
                "the bdi counts what the zone counts"
            );
            let dirty = pages.iter().filter(|&&p| k.pages.test(p, PG_DIRTY)).count() as u64;
            let j = journal_of(&k, 0).map_or([0; 3], |j| {
                [j.commit_sequence, j.pages_redirtied, j.pages_written]
            });
            *out2.borrow_mut() = Some(((before.0, after.0), dirty, j));
        });
        let r = out.borrow_mut().take().expect("the task ran");
        r
    }

    /// The commit walks the file the flusher filed: the delayed pages are redirtied (still
    /// dirty, no IO), the rewritten allocated pages are written. Under 2.6.37 each redirty is
    /// a new dirtying; 3.3's account_page_redirty takes it back.
    #[test]
    fn a_commit_redirties_the_delayed_pages_of_a_filed_file() {
        let delayed = PAGES - FLUSHED;
        let ((before, after), dirty, j) = commit_of_a_streamed_file("2.6.37-rc5", false);
        assert_eq!(j, [1, delayed, 2], "commits, redirtied, written");
        assert_eq!(
            dirty, delayed,
            "the delayed pages stay dirty; the rewrites were written"
        );
        assert_eq!(
            after - before,
            delayed,
            "each redirty counted as a dirtying"
        );
        let ((before, after), dirty, j) = commit_of_a_streamed_file("3.9", false);
        assert_eq!(j, [1, delayed, 2]);
        assert_eq!(dirty, delayed);
        assert_eq!(after, before, "3.3+: a redirty is no new dirtying");
    }

    /// data=writeback has no journal and no walk: the pages stay as the flusher left them.
    #[test]
    fn data_writeback_files_nothing_and_walks_nothing() {
        let ((before, after), dirty, j) = commit_of_a_streamed_file("2.6.37-rc5", true);
        assert_eq!(j, [0; 3]);
        assert_eq!(dirty, PAGES - FLUSHED + 2, "the rewrites are still dirty");
        assert_eq!(after, before);
    }

    /// Only `->writepages` mapping a delayed page files the inode and moves i_disksize:
    /// reclaim's `writepage` of a page in the allocated extent past it does neither.
    #[test]
    fn reclaim_writing_an_allocated_page_files_nothing() {
        use crate::mm::fs_ops::WritebackControl;
        let w = machine("2.6.37-rc5", Filesystem::Ext4);
        let ino = new_file(&mut w.borrow_mut());
        let w2 = w.clone();
        run_task(&w, SEC, async move {
            let pages: Vec<Pfn> = {
                let mut k = w2.borrow_mut();
                (0..PAGES).map(|i| written_page(&mut k, ino, i)).collect()
            };
            write_cache_pages(&w2, ino, FLUSHED, None, false).await;
            let mut k = w2.borrow_mut();
            let j = journal_of(&k, 0).expect("data=ordered");
            assert_eq!(j.filed(), &[ino as u32]);
            assert_eq!(k.inodes[ino].disksize_pages, FLUSHED);
            journal_mut(&mut k, 0)
                .expect("data=ordered")
                .inode_list
                .clear();
            let pfn = pages[FLUSHED as usize + 4];
            assert!(crate::mm::page_writeback::clear_page_dirty_for_io(
                &mut k, pfn
            ));
            let a_ops = k.inodes[ino].a_ops;
            let wbc = WritebackControl::for_reclaim(true);
            let done = a_ops.writepage(&mut k, pfn, &wbc, &mut None);
            assert!(matches!(done, crate::mm::fs_ops::WritePage::Submit { .. }));
            assert!(journal_of(&k, 0).expect("data=ordered").filed().is_empty());
            assert_eq!(k.inodes[ino].disksize_pages, FLUSHED);
        });
    }

    /// The commit timer is armed by the first filing and rounds like ext3's.
    #[test]
    fn filing_starts_the_running_transaction_once() {
        let w = machine("3.9", Filesystem::Ext4);
        let mut k = w.borrow_mut();
        let (a, b) = (new_file(&mut k), new_file(&mut k));
        ext4_jbd2_file_inode(&mut k, b);
        ext4_jbd2_file_inode(&mut k, a);
        ext4_jbd2_file_inode(&mut k, b);
        let j = journal_of(&k, 0).expect("ext4 mounts data=ordered by default");
        assert_eq!(j.running_since, Some(0));
        assert_eq!(
            j.filed(),
            &[b as u32, a as u32],
            "each once, in filing order"
        );
    }
}
