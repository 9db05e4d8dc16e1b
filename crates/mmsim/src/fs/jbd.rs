//! ext3's journal in data=ordered mode (`fs/jbd/`, 3.x): the part that moves data pages.
//!
//! A `write()` to an ext3 file runs inside a handle of the running transaction, and files
//! the data buffers it dirties on the transaction's `t_sync_datalist`
//! (`journal_dirty_data`). The first handle starts the transaction and arms the commit
//! timer: `commit=` seconds (5 by default) later, rounded to a whole second. kjournald
//! then commits it. In ordered mode the commit first writes every data buffer still dirty
//! on the list (`journal_submit_data_buffers`): `submit_bh` cleans and locks the buffer,
//! the write goes through the device's request queue, and the page stays PG_dirty and never
//! gets PG_writeback. Buffers already locked (by `writepage`) are waited for instead. The
//! commit waits for all of them before it writes the metadata and the commit record.
//! Afterwards those pages are "PG_dirty with clean buffers": the flusher's or reclaim's
//! `writepage` later finds nothing to write (`fs::buffer::block_write_full_page`).
//!
//! Not modelled: the metadata blocks, descriptors and commit record in the log (and the
//! cache flush they carry), checkpointing, transactions closed early because the log is
//! full, `fsync` forcing a commit, data=writeback and data=journal, and rewrites of a
//! buffer the committing transaction still holds (`journal_dirty_data` writes it
//! synchronously).

use super::block_fs::EXT3;
use super::buffer;
use crate::block::{Bio, Dir};
use crate::calibration::JBD_COMMIT_INTERVAL;
use crate::engine::{self, Nanos, WaitQueueId, SEC};
use crate::mm::backing_dev::{submit_bio, BH_SYNC_WRITE, PAGE_SECTORS};
use crate::mm::page::{Pfn, PG_BH_DIRTY, PG_BH_LOCKED};
use crate::mm::{Kernel, World};

/// One journal (`journal_t`): ext3 has one per filesystem, here one per device.
#[derive(Debug)]
pub struct Journal {
    /// kjournald sleeps here (`j_wait_commit`).
    pub wait_commit: WaitQueueId,
    /// `j_commit_interval`.
    pub commit_interval: Nanos,
    /// When the running transaction started (its first handle); `None` if there is none.
    pub running_since: Option<Nanos>,
    /// The running transaction's `t_sync_datalist`: (inode, page index) of each data
    /// buffer it dirtied, in filing order.
    sync_datalist: Vec<(u32, u32)>,
    /// The committing transaction's list, kept between commits for its capacity.
    spare: Vec<(u32, u32)>,
    /// `j_commit_sequence`: transactions committed.
    pub commit_sequence: u64,
    /// Data buffers the commits wrote with `submit_bh`.
    pub data_buffers_written: u64,
}

impl Journal {
    /// An empty journal whose kjournald waits on `wait_commit`.
    pub fn new(wait_commit: WaitQueueId) -> Journal {
        Journal {
            wait_commit,
            commit_interval: JBD_COMMIT_INTERVAL,
            running_since: None,
            sync_datalist: Vec::new(),
            spare: Vec::new(),
            commit_sequence: 0,
            data_buffers_written: 0,
        }
    }

    /// Data buffers filed on the running transaction.
    pub fn running_data_buffers(&self) -> usize {
        self.sync_datalist.len()
    }
}

/// The journal of device `bdi`, if its filesystem has one (the mount's `s_fs_info`).
pub fn journal_of(k: &Kernel, bdi: usize) -> Option<&Journal> {
    k.bdis[bdi].fs_info.as_ref()?.downcast_ref()
}

fn journal(k: &mut Kernel, bdi: usize) -> &mut Journal {
    k.bdis[bdi]
        .fs_info
        .as_mut()
        .and_then(|i| i.downcast_mut())
        .expect("an ordered-data filesystem has a journal")
}

/// A `write()` to page `index` of `ino` on journalled device `bdi`: start the running
/// transaction if there is none (`ext3_journal_start`), and file the page's data buffer on
/// it if the write dirtied it (`journal_dirty_data`; a buffer already dirty is already on
/// a list).
pub fn journal_dirty_data(k: &mut Kernel, bdi: usize, ino: usize, index: u64, newly_dirty: bool) {
    let now = k.sched.now();
    let j = journal(k, bdi);
    if j.running_since.is_none() {
        j.running_since = Some(now);
        let q = j.wait_commit;
        k.sched.wake_all(q);
    }
    if newly_dirty {
        journal(k, bdi)
            .sync_datalist
            .push((ino as u32, index as u32));
    }
}

/// `round_jiffies` (CPU 0): a timer `t` rounds to a whole second, down if it is less than
/// a quarter second past one, else up.
pub fn round_jiffies(t: Nanos) -> Nanos {
    let rem = t % SEC;
    if rem < SEC / 4 {
        t - rem
    } else {
        t - rem + SEC
    }
}

/// The page of a filed buffer, if the page is still in the page cache.
fn filed_page(k: &Kernel, ino: u32, index: u32) -> Option<Pfn> {
    k.inodes[ino as usize].find_page(index as u64)
}

/// What the commit does with one filed buffer.
enum DataBuffer {
    /// Dirty and now locked by us: write it at this sector.
    Submit(Pfn, u64),
    /// Dirty but locked by someone else: wait, then look again (`lock_buffer`).
    WaitLocked(Pfn),
    /// Clean (written by `writepage` or truncated): nothing to write.
    Done,
}

/// `journal_submit_data_buffers`' decision for one filed buffer.
fn lock_data_buffer(k: &mut Kernel, ino: u32, index: u32) -> DataBuffer {
    let Some(pfn) = filed_page(k, ino, index) else {
        return DataBuffer::Done;
    };
    if !buffer::page_has_buffers(k, pfn) || !k.pages.test(pfn, PG_BH_DIRTY) {
        return DataBuffer::Done;
    }
    if k.pages.test(pfn, PG_BH_LOCKED) {
        return DataBuffer::WaitLocked(pfn);
    }
    k.pages.clear(pfn, PG_BH_DIRTY);
    k.pages.set(pfn, PG_BH_LOCKED);
    let sector = EXT3.map_block(k, ino as usize, index as u64);
    DataBuffer::Submit(pfn, sector)
}

/// `journal_commit_transaction`, data part: the running transaction becomes the committing
/// one, its dirty data buffers are written, and the commit waits for every data buffer it
/// filed to be unlocked.
pub async fn journal_commit_transaction(w: &World, bdi: usize) {
    let list = {
        let mut k = w.borrow_mut();
        let j = journal(&mut k, bdi);
        j.running_since = None;
        let mut list = std::mem::take(&mut j.spare);
        std::mem::swap(&mut list, &mut j.sync_datalist);
        list
    };
    for &(ino, index) in &list {
        loop {
            let next = lock_data_buffer(&mut w.borrow_mut(), ino, index);
            match next {
                DataBuffer::Submit(pfn, sector) => {
                    let bio = Bio {
                        dir: Dir::Write,
                        sync: false,
                        sector,
                        nr_sectors: PAGE_SECTORS,
                        tag: pfn as u64 | BH_SYNC_WRITE,
                    };
                    journal(&mut w.borrow_mut(), bdi).data_buffers_written += 1;
                    submit_bio(w, bdi, bio).await;
                    break;
                }
                DataBuffer::WaitLocked(pfn) => buffer::wait_on_buffer(w, pfn).await,
                DataBuffer::Done => break,
            }
        }
    }
    // Wait for all submitted (and otherwise locked) data buffers.
    for &(ino, index) in &list {
        let locked = {
            let k = w.borrow();
            filed_page(&k, ino, index).filter(|&p| k.pages.test(p, PG_BH_LOCKED))
        };
        if let Some(pfn) = locked {
            buffer::wait_on_buffer(w, pfn).await;
        }
    }
    let mut k = w.borrow_mut();
    let j = journal(&mut k, bdi);
    j.commit_sequence += 1;
    let mut list = list;
    list.clear();
    j.spare = list;
}

/// kjournald: commit the running transaction when its timer expires.
pub async fn kjournald(w: World, bdi: usize) {
    let timer = |k: &Kernel| {
        let j = journal_of(k, bdi).expect("an ordered-data filesystem has a journal");
        (j.running_since, j.commit_interval, j.wait_commit)
    };
    commit_loop(&w, timer, || journal_commit_transaction(&w, bdi)).await
}

/// A journal thread's loop (kjournald, kjournald2): sleep until a transaction runs and its
/// commit timer (`timer` gives its start, the interval and the thread's wait queue)
/// expires, then `commit`.
pub async fn commit_loop<T, C, F>(w: &World, timer: T, commit: C)
where
    T: Fn(&Kernel) -> (Option<Nanos>, Nanos, WaitQueueId),
    C: Fn() -> F,
    F: std::future::Future<Output = ()>,
{
    loop {
        let (since, interval, q) = timer(&w.borrow());
        let Some(start) = since else {
            engine::wait_event(w, q, None, false).await;
            continue;
        };
        let expires = round_jiffies(start + interval);
        if w.borrow().sched.now() < expires {
            engine::sleep_until(w, expires).await;
        }
        commit().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::buffer::testing::*;
    use crate::fs::Filesystem;
    use crate::mm::filemap::filemap_write_and_wait_range;
    use crate::mm::invariants;
    use crate::mm::page::{PG_DIRTY, PG_PRIVATE, PG_WRITEBACK};
    use crate::mm::page_writeback::{write_cache_pages, Written};
    use crate::mm::vmstat::{VmEvent, ZoneStat};
    use crate::sim::run_task;

    const PAGES: u64 = 64;

    /// An ext3 machine and a file of `PAGES` pages, written by [`write_file`].
    fn ext3_file() -> (World, usize) {
        let w = machine("lessdisrupt-v7r10", Filesystem::Ext3);
        let ino = new_file(&mut w.borrow_mut());
        (w, ino)
    }

    /// Write the file at 1 s (after the first kupdate pass of the flusher, which would take
    /// an inode dirtied at time 0 as expired); the commit is due at 6 s.
    async fn write_file(w: &World, ino: usize) -> Vec<Pfn> {
        engine::sleep_until(w, SEC).await;
        let mut k = w.borrow_mut();
        (0..PAGES).map(|i| written_page(&mut k, ino, i)).collect()
    }

    fn flags(k: &Kernel, pfn: Pfn) -> u32 {
        k.pages.flags[pfn as usize]
            & (PG_DIRTY | PG_WRITEBACK | PG_PRIVATE | PG_BH_DIRTY | PG_BH_LOCKED)
    }

    fn sectors_written(k: &Kernel) -> u64 {
        k.bdis[0].queue.stats().sectors_written
    }

    #[test]
    fn the_commit_timer_rounds_to_a_whole_second() {
        assert_eq!(round_jiffies(5 * SEC), 5 * SEC);
        assert_eq!(round_jiffies(5 * SEC + SEC / 5), 5 * SEC);
        assert_eq!(round_jiffies(5 * SEC + SEC / 4), 6 * SEC);
        assert_eq!(round_jiffies(5 * SEC + 9 * SEC / 10), 6 * SEC);
    }

    /// One commit interval after the writes, the journal has written every data buffer of
    /// the transaction with submit_bh: the device saw the sectors, the pages are still
    /// PG_dirty (NR_FILE_DIRTY unchanged) with clean, unlocked buffers and never had
    /// PG_writeback. The flusher's writepage then finds nothing to write.
    #[test]
    fn after_one_commit_interval_written_pages_are_dirty_with_clean_buffers() {
        let (w, ino) = ext3_file();
        let w2 = w.clone();
        run_task(&w, 9 * SEC, async move {
            let pages = write_file(&w2, ino).await;
            engine::sleep_until(&w2, 5 * SEC).await;
            {
                let k = w2.borrow();
                let j = journal_of(&k, 0).unwrap();
                assert_eq!((j.commit_sequence, sectors_written(&k)), (0, 0));
            }
            engine::sleep_until(&w2, 7 * SEC).await;
            {
                let k = w2.borrow();
                let j = journal_of(&k, 0).unwrap();
                assert_eq!((j.commit_sequence, j.data_buffers_written), (1, PAGES));
                assert_eq!(j.running_since, None, "no write since the commit");
                for &p in &pages {
                    assert_eq!(flags(&k, p), PG_DIRTY | PG_PRIVATE, "pfn {p}");
                }
                assert_eq!(k.global_stat(ZoneStat::nr_dirty), PAGES);
                assert_eq!(k.global_stat(ZoneStat::nr_writeback), 0);
                assert_eq!(k.global_stat(ZoneStat::nr_written), 0);
                assert_eq!(sectors_written(&k), PAGES * 8);
                assert_eq!(k.events.get(VmEvent::pgpgout), PAGES * 4);
                invariants::check(&k).expect("invariants after the commit");
            }
            let wc = write_cache_pages(&w2, ino, u64::MAX, None, true).await;
            assert_eq!(
                wc,
                Written {
                    pages: PAGES,
                    skipped: 0
                }
            );
            let k = w2.borrow();
            for &p in &pages {
                assert_eq!(flags(&k, p), PG_PRIVATE, "pfn {p} is clean");
            }
            assert_eq!(k.global_stat(ZoneStat::nr_dirty), 0);
            assert_eq!(k.global_stat(ZoneStat::nr_written), PAGES);
            assert_eq!(sectors_written(&k), PAGES * 8, "no second write");
            invariants::check(&k).expect("invariants after writeback");
        });
    }

    /// While the commit's data IO is in flight, WB_SYNC_NONE writeback redirties the pages
    /// (their buffers are locked) and starts no IO; fdatasync (WB_SYNC_ALL) waits for the
    /// buffers and then has nothing left to write.
    #[test]
    fn writeback_skips_pages_whose_buffers_the_commit_holds_and_fdatasync_waits() {
        let (w, ino) = ext3_file();
        let w2 = w.clone();
        run_task(&w, 9 * SEC, async move {
            let pages = write_file(&w2, ino).await;
            engine::sleep_until(&w2, 6 * SEC + 100 * engine::USEC).await;
            {
                let k = w2.borrow();
                let j = journal_of(&k, 0).unwrap();
                assert_eq!(j.commit_sequence, 0, "the commit waits for its data");
                for &p in &pages {
                    assert_eq!(
                        flags(&k, p),
                        PG_DIRTY | PG_PRIVATE | PG_BH_LOCKED,
                        "pfn {p}"
                    );
                }
                invariants::check(&k).expect("invariants during the commit");
            }
            let wc = write_cache_pages(&w2, ino, u64::MAX, None, true).await;
            assert_eq!(
                wc,
                Written {
                    pages: PAGES,
                    skipped: PAGES
                }
            );
            {
                let k = w2.borrow();
                for &p in &pages {
                    assert_eq!(
                        flags(&k, p),
                        PG_DIRTY | PG_PRIVATE | PG_BH_LOCKED,
                        "pfn {p}"
                    );
                }
                assert_eq!(k.global_stat(ZoneStat::nr_dirty), PAGES);
                assert_eq!(
                    k.bdis[0].queue.stats().sectors_written,
                    0,
                    "still in flight"
                );
            }
            filemap_write_and_wait_range(&w2, ino, 0..u64::MAX).await;
            // kjournald, woken by the same completion, finishes the commit.
            engine::sleep(&w2, engine::MSEC).await;
            let k = w2.borrow();
            for &p in &pages {
                assert_eq!(flags(&k, p), PG_PRIVATE, "pfn {p} is clean");
            }
            assert_eq!(k.global_stat(ZoneStat::nr_dirty), 0);
            assert_eq!(
                sectors_written(&k),
                PAGES * 8,
                "written once, by the journal"
            );
            assert_eq!(journal_of(&k, 0).unwrap().commit_sequence, 1);
            invariants::check(&k).expect("invariants after fdatasync");
        });
    }
}
