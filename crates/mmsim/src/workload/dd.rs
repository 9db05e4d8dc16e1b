//! `dd if=/dev/zero of=FILE bs=BS count=N [conv=fdatasync]`: buffered writes of a new file
//! on a filesystem, then optionally `fdatasync`. Its io-duration (MMTests' parallelio row)
//! runs from the first write to the end of `fdatasync`. With `unlink = true` the file is
//! then removed and its pages freed.

use super::{exit, killed, CpuDebt};
use crate::calibration::PAGE_SIZE;
use crate::fs::fs_writeback::vfs_fsync;
use crate::fs::inode::Inode;
use crate::mm::page_writeback::{balance_dirty_pages_ratelimited, DirtyTask};
use crate::mm::{filemap, World};

/// The dd task: write `size` bytes to a new file on device `bdi`.
pub async fn run(
    w: World,
    idx: usize,
    mm: usize,
    bdi: usize,
    size: u64,
    fdatasync: bool,
    unlink: bool,
) {
    let ino = {
        let mut k = w.borrow_mut();
        let name = format!("{}-largefile", k.mms[mm].name);
        k.inodes.push(Inode::new(&name, bdi));
        k.inodes.len() - 1
    };
    let mut task = DirtyTask::default();
    let mut debt = CpuDebt::default();
    for index in 0..size / PAGE_SIZE {
        if killed(&w) {
            return exit(&w, mm, idx);
        }
        match filemap::write_page(&w, ino, index, &mut task).await {
            Ok(cpu) => debt.system(cpu),
            Err(_) => return exit(&w, mm, idx),
        }
        w.borrow_mut().workloads[idx].pages_touched += 1;
        debt.maybe_flush(&w).await;
        balance_dirty_pages_ratelimited(&w, bdi, &mut task).await;
    }
    debt.flush(&w).await;
    if fdatasync {
        vfs_fsync(&w, ino).await;
    }
    let now = w.borrow().sched.now();
    w.borrow_mut().workloads[idx].io_done_at = Some(now);
    if unlink {
        filemap::truncate_inode_pages(&w, ino).await;
    }
}

/// MMTests parallelio's wait before the IO (`mmtests.md` §6.1 step 4): poll every 2 s until
/// "used" memory as `free` reports it (MemTotal - MemFree - page cache) reaches `bytes`,
/// then sleep 5 s.
pub async fn wait_for_used_memory(w: &World, bytes: u64) {
    use crate::engine::{sleep, SEC};
    use crate::mm::vmstat::ZoneStat;
    loop {
        let used = {
            let k = w.borrow();
            let total: u64 = k.zones.iter().map(|z| z.managed_pages).sum();
            let free = k.global_stat(ZoneStat::nr_free_pages);
            let cache = k.global_stat(ZoneStat::nr_file_pages);
            total.saturating_sub(free + cache) * PAGE_SIZE
        };
        if used >= bytes {
            break;
        }
        sleep(w, 2 * SEC).await;
    }
    sleep(w, 5 * SEC).await;
}
