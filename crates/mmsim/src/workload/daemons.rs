//! `type = "daemons"`: the system's long-running programs (MMTests' monitors, which sample
//! every MONITOR_UPDATE_FREQUENCY, sshd, the shells) as one process. Their text is the
//! page cache boot left on the root filesystem, its active part first (`[slab]
//! page_cache_active`): the process maps `text` of it executable, one mapping per file
//! whose dentry it pins as a mapping's `vm_file` does, and runs all of it every `interval`.
//!
//! Why it matters to reclaim: a mapped page with a young PTE is referenced, and a
//! referenced `VM_EXEC` file page stays on the active list (`shrink_active_list`) or goes
//! back to it (`page_check_references`). Text in use therefore outlives a flood of
//! use-once page cache in its zone, where page cache boot read and nothing maps goes with
//! the flood.
//!
//! Simplification: every page of the text runs every interval; the real programs each run
//! their own hot part at their own pace.

use super::{access_range, enter, exit, CpuDebt, Phase};
use crate::calibration::PAGE_SIZE;
use crate::engine;
use crate::mm::memory::{self, VM_EXEC};
use crate::mm::page::NIL;
use crate::mm::super_block::ROOT_SB;
use crate::mm::{dcache, Kernel, World};
use crate::scenario::DaemonsParams;
use std::ops::Range;

/// The daemons' task.
pub async fn run(w: World, idx: usize, mm: usize, p: DaemonsParams) {
    let (ranges, pinned) = map_text(&mut w.borrow_mut(), mm, p.text / PAGE_SIZE);
    let pages = ranges.iter().map(|r| u64::from(r.end - r.start)).sum();
    let sleep_q = w.borrow_mut().sched.new_queue();
    let mut debt = CpuDebt::default();
    loop {
        enter(&mut w.borrow_mut(), idx, Phase::Running, pages);
        for r in &ranges {
            if access_range(&w, mm, r.clone(), false, &mut debt)
                .await
                .is_err()
            {
                return quit(&w, mm, idx, &pinned);
            }
            let mut k = w.borrow_mut();
            let st = super::stats(&mut k, idx);
            st.progress += u64::from(r.end - r.start);
        }
        debt.flush(&w).await;
        super::stats(&mut w.borrow_mut(), idx).passes += 1;
        if engine::sleep_killable(&w, sleep_q, p.interval).await {
            return quit(&w, mm, idx, &pinned);
        }
    }
}

/// Map the first `pages` pages of the boot's page cache into `mm`, executable, one mapping
/// per file, each file's dentry pinned. Files boot cached that are no longer in memory
/// are passed over. Returns the mappings' virtual pages and the dentries pinned.
pub fn map_text(k: &mut Kernel, mm: usize, pages: u64) -> (Vec<Range<u32>>, Vec<u32>) {
    let files = k.super_blocks[ROOT_SB as usize].boot_files.clone();
    // Each inode's dentry, from one pass over the dentries (a freed one names none).
    let mut dentry_of = vec![NIL; k.icache.inodes.len()];
    for (d, de) in k.dcache.dentries.iter().enumerate() {
        if de.inode != NIL {
            dentry_of[de.inode as usize] = d as u32;
        }
    }
    let mut ranges = Vec::new();
    let mut pinned = Vec::new();
    let mut left = pages;
    for ino in files {
        if left == 0 {
            break;
        }
        let ino = ino as usize;
        let vi = k.inodes[ino].vfs;
        if vi == NIL || dentry_of[vi as usize] == NIL {
            continue;
        }
        let d = dentry_of[vi as usize];
        dcache::dget(k, d);
        pinned.push(d);
        let n = k.inodes[ino].size_pages.min(left);
        let start = memory::mmap_file(k, mm, ino, 0, n as u32, VM_EXEC);
        ranges.push(start..start + n as u32);
        left -= n;
    }
    (ranges, pinned)
}

/// Killed: the mappings go with the mm, then the files' references.
fn quit(w: &World, mm: usize, idx: usize, pinned: &[u32]) {
    exit(w, mm, idx);
    let mut k = w.borrow_mut();
    for &d in pinned {
        dcache::dput(&mut k, d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::vmstat::ZoneStat;

    /// A 256 MiB machine whose boot left 48 MiB of page cache, 8 MiB of it active, reading
    /// a 1 GiB file for 60 s; with the daemons running that 8 MiB every second or not.
    fn streamed(daemons: bool) -> World {
        let mut text = String::from(
            "[machine]\nram = \"256M\"\n\
             [[device]]\nname = \"sda\"\ntype = \"hdd\"\nfilesystem = \"ext4\"\n\
             [slab]\nfiles = 5000\npage_cache = \"48M\"\npage_cache_active = \"8M\"\n\
             [[workload]]\ntype = \"cat\"\ndevice = \"sda\"\nsize = \"1G\"\n",
        );
        if daemons {
            text.push_str("[[workload]]\ntype = \"daemons\"\ninterval = \"1s\"\n");
        }
        let s = crate::scenario::load_str(&text, "t.toml", "t").expect("loads");
        let kernel = crate::presets::resolve("3.9", &[]).expect("3.9");
        let w = crate::sim::boot(&s, &kernel, 1).expect("boots");
        crate::sim::run_world(&w, 60_000_000_000).expect("runs");
        w
    }

    /// Pages of the boot's active files (the text) still cached, and their files still
    /// in memory.
    fn text_left(k: &Kernel) -> (u64, usize) {
        let files = &k.super_blocks[ROOT_SB as usize].boot_files;
        let text = &files[..(8 << 20) / (256 * PAGE_SIZE) as usize];
        let pages = text.iter().map(|&f| k.inodes[f as usize].nrpages).sum();
        let live = text
            .iter()
            .filter(|&&f| k.inodes[f as usize].vfs != NIL)
            .count();
        (pages, live)
    }

    /// Without the daemons the superblock's shrinker prunes the boot's files, text and
    /// all, as the stream makes reclaim scan; with them the text files are held (their
    /// dentries pinned) and every page of them stays cached and mapped, each faulted once.
    #[test]
    fn running_text_outlives_a_stream_that_takes_the_boots_page_cache() {
        let w = streamed(false);
        let k = w.borrow();
        let (pages, live) = text_left(&k);
        assert!(
            pages < 1024 && live < 4,
            "without daemons {pages} text pages in {live} files outlived the stream"
        );
        drop(k);
        let w = streamed(true);
        let k = w.borrow();
        assert_eq!(text_left(&k), (2048, 8));
        let mm = k.mms.iter().position(|m| m.name == "daemons").expect("mm");
        assert_eq!((k.mms[mm].min_flt, k.mms[mm].maj_flt), (2048, 0));
        assert_eq!(k.mms[mm].file_rss, 2048);
        // One mapping per file, executable, and the text on the active list.
        let text: Vec<_> = k.mms[mm].vmas.iter().filter(|v| v.file.is_some()).collect();
        assert_eq!(text.len(), 8);
        assert!(text.iter().all(|v| v.flags & VM_EXEC != 0));
        let active: u64 = k
            .zones
            .iter()
            .map(|z| z.stat(ZoneStat::nr_active_file))
            .sum();
        assert!(active >= 2048, "{active} active file pages");
        drop(k);
        // A run every second for 60 s, each over all 2048 pages (the `runs` metric).
        let mut k = w.borrow_mut();
        let st = crate::workload::stats(&mut k, mm);
        assert!((59..=61).contains(&st.passes), "{} runs", st.passes);
        assert_eq!((st.progress, st.progress_total), (2048, 2048));
    }

    /// `map_text` takes the boot's files in order, text first, up to the pages asked for,
    /// and pins each file's dentry once per mapping.
    #[test]
    fn map_text_takes_the_boots_files_in_order_and_pins_each_once() {
        let w = crate::sim::boot_for_test(256, 0, "3.9");
        crate::sim::add_test_disk(&w, "sda", "ext4");
        let mut k = w.borrow_mut();
        // Two text files (256 and 44 pages), then 38 small ones.
        assert_eq!(
            crate::mm::super_block::cache_boot_pages(&mut k, ROOT_SB, 0, 600, 300),
            600
        );
        let files = k.super_blocks[ROOT_SB as usize].boot_files.clone();
        let sizes: Vec<u64> = files
            .iter()
            .map(|&f| k.inodes[f as usize].nrpages)
            .collect();
        assert_eq!(sizes.len(), 40);
        assert_eq!((sizes[0], sizes[1], sizes[2], sizes[39]), (256, 44, 8, 4));
        let mm = crate::workload::new_task(&mut k, "daemons");
        let (ranges, pinned) = map_text(&mut k, mm, 280);
        assert_eq!(
            ranges.iter().map(|r| r.end - r.start).collect::<Vec<_>>(),
            [256, 24]
        );
        assert_eq!(pinned.len(), 2);
        for (&d, &f) in pinned.iter().zip(&files) {
            let de = &k.dcache.dentries[d as usize];
            assert_eq!((de.inode, de.d_count), (k.inodes[f as usize].vfs, 1));
        }
        let maps: Vec<usize> = files
            .iter()
            .map(|&f| k.inodes[f as usize].i_mmap.len())
            .collect();
        assert_eq!(&maps[..3], [1, 1, 0]);
        // All of it, and more than there is: every file, each once.
        let mm2 = crate::workload::new_task(&mut k, "more");
        let (ranges, pinned) = map_text(&mut k, mm2, 1000);
        assert_eq!(ranges.len(), 40);
        assert_eq!(ranges.iter().map(|r| r.end - r.start).sum::<u32>(), 600);
        assert_eq!(pinned.len(), 40);
        assert_eq!(k.dcache.dentries[pinned[0] as usize].d_count, 2);
        assert_eq!(k.dcache.dentries[pinned[39] as usize].d_count, 1);
    }

    /// A file the superblock's shrinker took before the daemons started is passed over:
    /// its dentry gone (the inode waits on the inode LRU), or its inode gone too.
    #[test]
    fn map_text_passes_over_files_the_shrinker_took() {
        use crate::mm::super_block::{prune_super, PruneCx};
        let w = crate::sim::boot_for_test(256, 0, "3.9");
        crate::sim::add_test_disk(&w, "sda", "ext4");
        let mut k = w.borrow_mut();
        crate::mm::super_block::cache_boot_pages(&mut k, ROOT_SB, 0, 600, 300);
        let files = k.super_blocks[ROOT_SB as usize].boot_files.clone();
        let mut cx = PruneCx {
            gfp: crate::mm::Gfp::KERNEL,
            kswapd: true,
            cpu: 0,
            reap: 0,
        };
        // Whether a file still has its inode, and whether that inode still has a dentry.
        let state = |k: &Kernel, f: u32| {
            let vi = k.inodes[f as usize].vfs;
            let dentry = vi != NIL && k.dcache.dentries.iter().any(|d| d.live() && d.inode == vi);
            (vi != NIL, dentry)
        };
        // map_text maps exactly the files whose inode and dentry are both still there.
        let check = |k: &mut Kernel| {
            let whole = files
                .iter()
                .filter(|&&f| state(k, f) == (true, true))
                .count();
            let mm = crate::workload::new_task(k, "daemons");
            let (ranges, pinned) = map_text(k, mm, 600);
            assert_eq!((ranges.len(), pinned.len()), (whole, whole));
            for &d in &pinned {
                dcache::dput(k, d);
            }
            crate::mm::memory::exit_mmap(k, mm);
            whole
        };
        let mut seen = [false; 2];
        for _ in 0..8 {
            prune_super(&mut k, ROOT_SB as usize, 20_000, &mut cx);
            let dentry_gone = files.iter().any(|&f| state(&k, f) == (true, false));
            let inode_gone = files.iter().any(|&f| state(&k, f) == (false, false));
            if (dentry_gone && !seen[0]) || (inode_gone && !seen[1]) {
                check(&mut k);
            }
            seen[0] |= dentry_gone;
            seen[1] |= inode_gone;
        }
        assert_eq!(seen, [true, true], "the shrinker left both states behind");
        assert_eq!(check(&mut k), 0, "the shrinker took every file");
    }

    /// Killed, the daemons leave nothing behind: the mappings go with the mm and each
    /// file's dentry is unused again.
    #[test]
    fn a_killed_daemon_unmaps_its_text_and_lets_its_files_go() {
        let w = crate::sim::boot_for_test(256, 0, "3.9");
        crate::sim::add_test_disk(&w, "sda", "ext4");
        let (mm, pinned, files) = {
            let mut k = w.borrow_mut();
            crate::mm::super_block::cache_boot_pages(&mut k, ROOT_SB, 0, 600, 300);
            let mm = crate::workload::new_task(&mut k, "daemons");
            let (_, pinned) = map_text(&mut k, mm, 300);
            let files = k.super_blocks[ROOT_SB as usize].boot_files.clone();
            (mm, pinned, files)
        };
        quit(&w, mm, mm, &pinned);
        let k = w.borrow();
        for &d in &pinned {
            assert_eq!(k.dcache.dentries[d as usize].d_count, 0);
        }
        assert!(files
            .iter()
            .all(|&f| k.inodes[f as usize].i_mmap.is_empty()));
        assert!(k.mms[mm].vmas.is_empty());
        crate::mm::invariants::check(&k).expect("invariants");
    }
}
