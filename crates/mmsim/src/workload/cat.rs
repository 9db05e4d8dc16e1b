//! `cat FILE > /dev/null`: read a file sequentially in 128 KiB `read(2)` calls through the
//! page cache, with on-demand readahead. The file is on its device at boot (laid out
//! contiguously, as a file written once by a streaming writer is on ext4).

use super::{exit, killed, CpuDebt};
use crate::calibration::{COPY_PAGE_NS, PAGE_SIZE};
use crate::mm::readahead::{read_page, RaState};
use crate::mm::World;

/// Pages per `read(2)` call.
pub const READ_PAGES: u64 = 32;

/// Create the file's inode with its blocks allocated (no page cached).
pub fn create_file(w: &World, name: &str, bdi: usize, size: u64) -> usize {
    let mut k = w.borrow_mut();
    let pages = size / PAGE_SIZE;
    let sector = k.bdis[bdi].next_free_sector;
    k.bdis[bdi].next_free_sector += pages * crate::mm::backing_dev::PAGE_SECTORS as u64;
    let ino = crate::mm::inode::new_inode(&mut k, name, bdi);
    k.inodes[ino].size_pages = pages;
    k.inodes[ino].add_extent(0, sector, pages);
    ino
}

/// The cat task.
pub async fn run(w: World, idx: usize, mm: usize, ino: usize) {
    let pages = w.borrow().inodes[ino].size_pages;
    super::enter(&mut w.borrow_mut(), idx, super::Phase::Running, pages);
    let mut ra = RaState::default();
    let mut debt = CpuDebt::default();
    let mut index = 0;
    while index < pages {
        if killed(&w) {
            return exit(&w, mm, idx);
        }
        let req = READ_PAGES.min(pages - index);
        for i in index..index + req {
            if read_page(&w, ino, &mut ra, i, index + req - i)
                .await
                .is_err()
            {
                return exit(&w, mm, idx);
            }
            debt.system(COPY_PAGE_NS);
            super::page_done(&w, idx);
        }
        index += req;
        debt.maybe_flush(&w).await;
    }
    debt.flush(&w).await;
    let mut k = w.borrow_mut();
    let now = k.sched.now();
    super::stats(&mut k, idx).io_done_at = Some(now);
    super::finished(&mut k, idx);
}
