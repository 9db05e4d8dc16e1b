//! xfs's IO completion (`fs/xfs/linux-2.6/xfs_aops.c`, 2.6.37; the same design through
//! 3.x): pages end writeback an ioend at a time, not a bio at a time.
//!
//! `xfs_vm_writepage` maps the page's extent and then clusters the dirty pages that follow
//! it in the same extent (`xfs_cluster_write` → `xfs_convert_page`) into one `xfs_ioend`,
//! until a page is not dirty, is under writeback or lies past the extent, or the walk's
//! `nr_to_write` runs out. The ioend is split into bios at submission, each bio holding a
//! reference (`io_remaining`, which starts at 1 for the submitter). A bio's completion
//! (`xfs_end_bio`) only drops its reference; the last one queues `xfs_end_io` on xfsdatad,
//! which ends writeback of every page of the ioend together (`xfs_destroy_ioend` → the
//! buffers' `b_end_io`). So writeback ends in units of a whole writeback chunk: 4 MiB
//! under vanilla 2.6.37 (`MAX_WRITEBACK_PAGES`), more with patch 35 of the IO-less series
//! v3 — the letter's "IO completion in units of 1MB, 32MB or even more".
//!
//! mmsim's walk (`write_cache_pages`) hands xfs one page at a time, so an ioend is built
//! across the walk's `writepage` calls: a page extends the open ioend if it follows the
//! last page in the file and on disk (an xfs extent is contiguous on disk; mmsim's 32 MiB
//! allocation units that happen to be adjacent make one extent), and otherwise the open
//! ioend is submitted and a new one begun. The walk's end submits the last. Reclaim's
//! `writepage` (kswapd only) is a walk of its own: `pageout` hands xfs its page and then the
//! dirty pages that follow it, up to its `nr_to_write` of 32 (`xfs_cluster_write`; mmsim
//! stops early where the next bio could not be queued without sleeping).
//!
//! Not modelled: xfsdatad's own scheduling delay, and the on-disk size update
//! (`xfs_setfilesize`) at completion.

use crate::mm::fs_ops::PageioData;
use crate::mm::page::{Pfn, PG_WRITEBACK};
use crate::mm::{page_io, Kernel};

/// Bio tag bits of a page written in an ioend: the ioend's slot + 1, above the page frame
/// (low 32 bits) and `backing_dev::BH_SYNC_WRITE` (bit 32).
const IOEND_SHIFT: u32 = 40;

/// One `struct xfs_ioend`.
#[derive(Debug, Default)]
struct Ioend {
    /// `io_remaining`: the submitter's reference while the ioend is open, plus one per page
    /// whose write has not completed (mmsim's bios are a page each).
    remaining: u32,
    /// Its pages, in file order.
    pages: Vec<Pfn>,
}

/// The ioends of one xfs mount (`sb->s_fs_info`), their slots reused.
#[derive(Debug, Default)]
pub struct XfsMount {
    ioends: Vec<Ioend>,
    free: Vec<u32>,
    /// Ioends completed, and their pages (statistics).
    pub ioends_completed: u64,
    pub pages_completed: u64,
}

fn mount(k: &mut Kernel, bdi: usize) -> &mut XfsMount {
    k.bdis[bdi]
        .fs_info
        .as_mut()
        .and_then(|i| i.downcast_mut())
        .expect("an xfs mount has its ioends")
}

/// The open ioend of a `writepages` walk: its slot, and the file page and sector it ends at.
#[derive(Debug)]
struct Walk {
    bdi: usize,
    open: Option<(u32, u64, u64)>,
}

/// The start of a walk: no ioend yet.
pub fn writepages_start(bdi: usize) -> PageioData {
    Some(Box::new(Walk { bdi, open: None }))
}

/// `xfs_alloc_ioend`: a new ioend holding the submitter's reference.
fn alloc_ioend(m: &mut XfsMount) -> u32 {
    let id = m.free.pop().unwrap_or_else(|| {
        m.ioends.push(Ioend::default());
        (m.ioends.len() - 1) as u32
    });
    m.ioends[id as usize].remaining = 1;
    id
}

/// `xfs_add_to_ioend` for page `pfn` (file page `index`, at `sector`), now under
/// writeback: it extends the walk's open ioend if it follows it in the file and on disk;
/// otherwise the open one is submitted and a new one begun. Returns the tag of the page's
/// bio. A page with no walk (`data` is `None`: reclaim) gets an ioend of its own.
pub fn add_to_ioend(
    k: &mut Kernel,
    data: &mut PageioData,
    bdi: usize,
    pfn: Pfn,
    index: u64,
    sector: u64,
) -> u64 {
    let walk = data.as_mut().and_then(|d| d.downcast_mut::<Walk>());
    let id = match walk {
        Some(walk) => {
            let id = match walk.open {
                Some((id, last, end)) if last + 1 == index && end == sector => id,
                open => {
                    if let Some((old, _, _)) = open {
                        put_ioend(k, walk.bdi, old);
                    }
                    alloc_ioend(mount(k, bdi))
                }
            };
            let end = sector + u64::from(crate::mm::backing_dev::PAGE_SECTORS);
            walk.open = Some((id, index, end));
            id
        }
        None => {
            // Submitted at once: the page's own completion ends it.
            let m = mount(k, bdi);
            let id = alloc_ioend(m);
            m.ioends[id as usize].remaining = 0;
            id
        }
    };
    let io = &mut mount(k, bdi).ioends[id as usize];
    io.remaining += 1;
    io.pages.push(pfn);
    u64::from(pfn) + ((u64::from(id) + 1) << IOEND_SHIFT)
}

/// The end of a walk: submit its open ioend.
pub fn writepages_end(k: &mut Kernel, data: PageioData) {
    let Some(walk) = data.and_then(|d| d.downcast::<Walk>().ok()) else {
        return;
    };
    if let Some((id, _, _)) = walk.open {
        put_ioend(k, walk.bdi, id);
    }
}

/// Whether a write bio's tag belongs to an ioend.
#[inline]
pub fn in_ioend(tag: u64) -> bool {
    tag >> IOEND_SHIFT != 0
}

/// `xfs_end_bio` of the page tagged `tag`: drop its reference on the ioend.
pub fn end_bio(k: &mut Kernel, bdi: usize, tag: u64) {
    let id = ((tag >> IOEND_SHIFT) - 1) as u32;
    put_ioend(k, bdi, id);
}

/// `xfs_finish_ioend`: drop a reference; the last one ends writeback of all the ioend's
/// pages (`xfs_end_io` → `xfs_destroy_ioend`) and frees it.
fn put_ioend(k: &mut Kernel, bdi: usize, id: u32) {
    let m = mount(k, bdi);
    let io = &mut m.ioends[id as usize];
    io.remaining -= 1;
    if io.remaining > 0 {
        return;
    }
    let mut pages = std::mem::take(&mut io.pages);
    m.ioends_completed += 1;
    m.pages_completed += pages.len() as u64;
    for &pfn in &pages {
        page_io::end_buffer_async_write(k, pfn);
    }
    let m = mount(k, bdi);
    pages.clear();
    // Keep the vector's room for the slot's next ioend.
    m.ioends[id as usize].pages = pages;
    m.free.push(id);
}

/// Invariants: every page of a live ioend is under writeback, and an ioend's references
/// cover its pages still in flight.
pub fn check_mount(k: &Kernel, bdi: usize) -> Result<(), String> {
    let Some(m) = k.bdis[bdi]
        .fs_info
        .as_ref()
        .and_then(|i| i.downcast_ref::<XfsMount>())
    else {
        return Err("xfs mount without its ioends".into());
    };
    for (id, io) in m.ioends.iter().enumerate() {
        if m.free.contains(&(id as u32)) {
            if !io.pages.is_empty() || io.remaining != 0 {
                return Err(format!("free ioend {id} still holds pages"));
            }
            continue;
        }
        if io.remaining == 0 && !io.pages.is_empty() {
            return Err(format!(
                "ioend {id} has {} pages and no reference",
                io.pages.len()
            ));
        }
        for &pfn in &io.pages {
            if !k.pages.test(pfn, PG_WRITEBACK) {
                return Err(format!("page {pfn} of ioend {id} is not under writeback"));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{self, SEC, USEC};
    use crate::fs::buffer::testing::{machine, new_file, written_page};
    use crate::fs::Filesystem;
    use crate::mm::invariants;
    use crate::mm::page_writeback::write_cache_pages;
    use crate::mm::World;
    use crate::sim::run_task;

    /// Write back `pages` dirty pages of a new file, every `stride`-th index, in one walk,
    /// and return the device's writeback count every 10 µs until it is 0, with each
    /// value once.
    fn writeback_steps(fs: Filesystem, pages: u64, stride: u64) -> (World, Vec<u64>) {
        let w = machine("2.6.37-rc5", fs);
        let ino = {
            let mut k = w.borrow_mut();
            let ino = new_file(&mut k);
            for i in 0..pages {
                written_page(&mut k, ino, i * stride);
            }
            ino
        };
        let w2 = w.clone();
        let steps = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let s2 = steps.clone();
        run_task(&w, 10 * SEC, async move {
            write_cache_pages(&w2, ino, u64::MAX, None, false).await;
            loop {
                let wb = w2.borrow().bdis[0].writeback;
                if s2.borrow().last() != Some(&wb) {
                    s2.borrow_mut().push(wb);
                }
                if wb == 0 {
                    break;
                }
                invariants::check(&w2.borrow()).expect("invariants mid-IO");
                engine::sleep(&w2, 10 * USEC).await;
            }
        });
        let steps = steps.borrow().clone();
        (w, steps)
    }

    /// A run of 300 contiguous pages is one ioend: it goes to the disk as three requests
    /// (512 KiB each at most), but no page ends writeback until the last completes. ext4
    /// ends them a request at a time.
    #[test]
    fn contiguous_pages_end_writeback_together_when_their_ioend_completes() {
        let (w, steps) = writeback_steps(Filesystem::Xfs, 300, 1);
        assert_eq!(steps, [300, 0]);
        let k = w.borrow();
        assert_eq!(
            k.bdis[0].queue.stats().writes_completed,
            3,
            "three requests"
        );
        let m = k.bdis[0].fs_info.as_ref().unwrap();
        let m = m.downcast_ref::<XfsMount>().unwrap();
        assert_eq!((m.ioends_completed, m.pages_completed), (1, 300));
        assert_eq!(k.bdis[0].written, 300);
        invariants::check(&k).expect("invariants");

        let (_, steps) = writeback_steps(Filesystem::Ext4, 300, 1);
        assert_eq!(steps, [300, 172, 44, 0], "ext4: a request at a time");
    }

    /// A hole in the file ends the ioend: pages two apart are an ioend each, and end
    /// writeback one by one.
    #[test]
    fn a_gap_in_the_file_starts_a_new_ioend() {
        let (w, steps) = writeback_steps(Filesystem::Xfs, 4, 2);
        assert_eq!(steps, [4, 3, 2, 1, 0]);
        let k = w.borrow();
        let m = k.bdis[0].fs_info.as_ref().unwrap();
        let m = m.downcast_ref::<XfsMount>().unwrap();
        assert_eq!((m.ioends_completed, m.pages_completed), (4, 4));
        assert_eq!(m.ioends.len(), 4, "slots reused only once free");
        assert_eq!(m.free.len(), 4);
    }

    /// The open ioend takes a page that follows its last one both in the file and on disk;
    /// a jump in either starts a new one. A submitted ioend ends its pages' writeback when
    /// the last of their IO completes.
    #[test]
    fn an_ioend_takes_only_pages_that_follow_in_the_file_and_on_disk() {
        let w = machine("2.6.37-rc5", Filesystem::Xfs);
        let mut k = w.borrow_mut();
        let ino = new_file(&mut k);
        let pfns: Vec<Pfn> = (0..4).map(|i| written_page(&mut k, ino, i)).collect();
        for &p in &pfns {
            crate::mm::page_writeback::test_set_page_writeback(&mut k, p);
        }
        let mut data = writepages_start(0);
        let id = |tag: u64| tag >> IOEND_SHIFT;
        let a = add_to_ioend(&mut k, &mut data, 0, pfns[0], 0, 800);
        let b = add_to_ioend(&mut k, &mut data, 0, pfns[1], 1, 808);
        assert_eq!(id(a), id(b), "next page, next sectors");
        // Next in the file, elsewhere on disk: a new ioend, and the first is submitted.
        let c = add_to_ioend(&mut k, &mut data, 0, pfns[2], 2, 4000);
        assert_ne!(id(c), id(b));
        end_bio(&mut k, 0, a);
        assert!(
            k.pages.test(pfns[0], PG_WRITEBACK),
            "b's IO is still in flight"
        );
        end_bio(&mut k, 0, b);
        assert!(!k.pages.test(pfns[0], PG_WRITEBACK) && !k.pages.test(pfns[1], PG_WRITEBACK));
        // Next on disk but not in the file: a new one again.
        let d = add_to_ioend(&mut k, &mut data, 0, pfns[3], 5, 4008);
        assert_ne!(id(d), id(c));
        writepages_end(&mut k, data);
        end_bio(&mut k, 0, d);
        assert!(!k.pages.test(pfns[3], PG_WRITEBACK));
        assert!(
            k.pages.test(pfns[2], PG_WRITEBACK),
            "its own IO still in flight"
        );
        end_bio(&mut k, 0, c);
        check_mount(&k, 0).expect("all free");
    }

    /// Reclaim's `writepage` (no walk) puts its page in an ioend of its own, which its own
    /// completion ends; the mount's invariants name a page of a live ioend that is not
    /// under writeback.
    #[test]
    fn a_page_without_a_walk_is_an_ioend_of_its_own_and_the_invariants_check_ioends() {
        let w = machine("2.6.37-rc5", Filesystem::Xfs);
        let mut k = w.borrow_mut();
        let ino = new_file(&mut k);
        let pfn = written_page(&mut k, ino, 0);
        crate::mm::page_writeback::test_set_page_writeback(&mut k, pfn);
        let tag = add_to_ioend(&mut k, &mut None, 0, pfn, 0, 0);
        assert!(in_ioend(tag) && tag as Pfn == pfn);
        check_mount(&k, 0).expect("a page under writeback");
        k.pages.clear(pfn, PG_WRITEBACK);
        let e = check_mount(&k, 0).expect_err("not under writeback");
        assert!(e.contains(&format!("page {pfn} of ioend 0")), "{e}");
        k.pages.set(pfn, PG_WRITEBACK);
        end_bio(&mut k, 0, tag);
        assert!(!k.pages.test(pfn, PG_WRITEBACK), "its completion ended it");
        check_mount(&k, 0).expect("freed");
        assert!(!in_ioend(u64::from(pfn)));
    }
}
