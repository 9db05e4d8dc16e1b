//! `cat FILE... > /dev/null`: read files one after another, each sequentially in 128 KiB
//! `read(2)` calls through the page cache, with on-demand readahead. The file is on its device at boot (laid out
//! contiguously, as a file written once by a streaming writer is on ext4); opening it brings
//! its dentry and inode into memory, and closing it leaves them cached, unused.

use super::{exit, killed, CpuDebt};
use crate::calibration::{COPY_PAGE_NS, PAGE_SIZE};
use crate::mm::namei::{self, OpenFile};
use crate::mm::readahead::{read_page, RaState};
use crate::mm::World;

/// Pages per `read(2)` call.
pub const READ_PAGES: u64 = 32;

/// Create the file on its device with its blocks allocated, not in memory (nothing cached).
pub fn create_file(w: &World, name: &str, bdi: usize, size: u64) -> usize {
    let mut k = w.borrow_mut();
    let pages = size / PAGE_SIZE;
    let sector = k.bdis[bdi].next_free_sector;
    k.bdis[bdi].next_free_sector += pages * crate::mm::backing_dev::PAGE_SECTORS as u64;
    let ino = crate::mm::inode::new_file(&mut k, name, bdi);
    k.inodes[ino].size_pages = pages;
    k.inodes[ino].add_extent(0, sector, pages);
    ino
}

/// `open(2)` of file `ino`, created on its device at boot, by name: its dentry and inode
/// come into memory. `None` if the task was killed in the allocations.
pub async fn open_file(w: &World, ino: usize) -> Option<OpenFile> {
    let (bdi, name) = {
        let k = w.borrow();
        (k.inodes[ino].bdi, k.inodes[ino].name.clone())
    };
    let f = namei::open(w, bdi, &name, false).await.ok()?;
    Some(f.expect("the file exists on its device"))
}

/// Create `files` files named after `name` on device `bdi`, `size` bytes between them (the
/// first `pages % files` get a page more), not in memory: `name-file` alone, else
/// `name-file0`, `name-file1`...
pub fn create_files(w: &World, name: &str, bdi: usize, size: u64, files: u64) -> Vec<usize> {
    let pages = size / PAGE_SIZE;
    (0..files)
        .map(|i| {
            let file = if files == 1 {
                format!("{name}-file")
            } else {
                format!("{name}-file{i}")
            };
            let n = pages / files + u64::from(i < pages % files);
            create_file(w, &file, bdi, n * PAGE_SIZE)
        })
        .collect()
}

/// The cat task: `cat FILE...`, each file opened, read whole and closed in turn.
pub async fn run(w: World, idx: usize, mm: usize, inos: Vec<usize>) {
    let pages: u64 = inos.iter().map(|&i| w.borrow().inodes[i].size_pages).sum();
    super::enter(&mut w.borrow_mut(), idx, super::Phase::Running, pages);
    let mut debt = CpuDebt::default();
    for ino in inos {
        if !read_file(&w, idx, ino, &mut debt).await {
            return exit(&w, mm, idx);
        }
    }
    debt.flush(&w).await;
    let mut k = w.borrow_mut();
    let now = k.sched.now();
    super::stats(&mut k, idx).io_done_at = Some(now);
    super::finished(&mut k, idx);
}

/// Open file `ino`, read it whole in `READ_PAGES` reads and close it. False if the task
/// was killed (its exit closes the file).
async fn read_file(w: &World, idx: usize, ino: usize, debt: &mut CpuDebt) -> bool {
    let Some(file) = open_file(w, ino).await else {
        return false;
    };
    let pages = w.borrow().inodes[ino].size_pages;
    let mut ra = RaState::default();
    let mut index = 0;
    let mut ok = true;
    'read: while index < pages {
        if killed(w) {
            ok = false;
            break;
        }
        let req = READ_PAGES.min(pages - index);
        for i in index..index + req {
            if read_page(w, ino, &mut ra, i, index + req - i)
                .await
                .is_err()
            {
                ok = false;
                break 'read;
            }
            debt.system(COPY_PAGE_NS);
            super::page_done(w, idx);
        }
        index += req;
        debt.maybe_flush(w).await;
    }
    namei::close(&mut w.borrow_mut(), file);
    ok
}
