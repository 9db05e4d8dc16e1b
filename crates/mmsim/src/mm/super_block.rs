//! Superblocks (`fs/super.c`): one per mounted filesystem, each with its unused-dentry and
//! unused-inode LRUs and its own shrinker, `prune_super` (`kernel-reclaim.md` §6).
//!
//! Superblock 0 is the system's root filesystem, which holds the dentries and inodes the
//! distribution's programs left cached before the run (`[slab] files`); every `[[device]]`
//! with a filesystem mounts one more (`mount`). mmsim's files sit in their filesystem's
//! root directory, which the mount pins.

use super::page::{ListHead, NIL};
use super::slab::CacheId;
use super::{dcache, inode, Gfp, Kernel};
use crate::calibration::SLAB_OBJECT_SCAN_NS;
use crate::engine::Nanos;

/// One superblock.
#[derive(Clone, Debug, Default)]
pub struct SuperBlock {
    /// The device it is mounted from (`/` for the system's root filesystem).
    pub name: String,
    /// `s_dentry_lru`: unused dentries, newest at the head; `len` is `s_nr_dentry_unused`.
    pub dentry_lru: ListHead,
    /// `s_inode_lru`: unused inodes, newest at the head; `len` is `s_nr_inodes_unused`.
    pub inode_lru: ListHead,
    /// Its shrinker's deferred scan count (`s_shrink.nr_in_batch`).
    pub nr_deferred: u64,
    /// Its root dentry (`s_root`), pinned by the mount.
    pub root: u32,
    /// The files whose pages boot left in the page cache ([`cache_boot_pages`]), in the
    /// order it filled them: those with active pages first.
    pub boot_files: Vec<u32>,
}

/// The system's root filesystem, mounted first.
pub const ROOT_SB: u32 = 0;

/// What a reclaimer's `shrink_slab` call carries through the shrinkers.
#[derive(Clone, Copy, Debug)]
pub struct PruneCx {
    /// The reclaimer's allocation flags (`sc->gfp_mask`).
    pub gfp: Gfp,
    /// `current_is_kswapd()`.
    pub kswapd: bool,
    /// CPU time used.
    pub cpu: Nanos,
    /// Page-cache pages dropped from pruned inodes (`reap`, added to `reclaimed_slab`).
    pub reap: u64,
}

impl PruneCx {
    /// One object (or page) looked at.
    #[inline]
    pub fn visit(&mut self) {
        self.cpu += SLAB_OBJECT_SCAN_NS;
    }
}

/// `alloc_super` + `register_shrinker`: a new superblock named `name` with its root dentry
/// and inode, whose objects come from the free lists without waiting (mounts happen at
/// boot). Returns its index.
pub fn mount(k: &mut Kernel, name: &str) -> u32 {
    let sb = k.super_blocks.len() as u32;
    k.super_blocks.push(SuperBlock {
        name: name.to_string(),
        root: NIL,
        ..Default::default()
    });
    let d = dcache::d_alloc_boot(k, sb, None);
    let i = inode::iget_boot(k, sb, NIL);
    dcache::d_instantiate(k, d, i);
    k.super_blocks[sb as usize].root = d;
    sb
}

/// Populate superblock `sb` with `n` cached files left unused: each a dentry on its LRU,
/// marked referenced by its last `dput`, pinning its inode. Objects come from the free
/// lists without waiting (boot).
pub fn populate(k: &mut Kernel, sb: u32, n: u64) {
    // Room for the run's own files too, so that the first of them does not double tables
    // sized to the boot population.
    let room = n as usize + 4096;
    k.dcache.reserve(room);
    k.icache.reserve(room);
    for _ in 0..n {
        let d = dcache::d_alloc_boot(k, sb, None);
        let i = inode::iget_boot(k, sb, NIL);
        dcache::d_instantiate(k, d, i);
        dcache::dput(k, d);
    }
}

/// Pages of page cache per system file that boot read (32 KiB). Estimate: a
/// distribution's programs, libraries, scripts and configuration files, most between 4 KiB
/// and 1 MiB (`docs/seed-000-procedure.md` §7).
pub const BOOT_FILE_PAGES: u64 = 8;

/// Pages per file of the active part of that page cache, the text of programs that keep
/// running (1 MiB). Estimate from the era's binaries: what such text weighs lies mostly
/// in shared libraries and daemons of 0.5-2 MiB (glibc's `libc.so` and `libm.so`,
/// `libperl.so`, OpenSSL's `libcrypto.so`, `bash`, `sshd`), beside a few small tools
/// (`vmstat`, `iostat`, `top`). Not derived from a reproduced figure; seed 000's Sector
/// Reads per major fault (a whole 128 KiB read-around window) agree with files this large
/// (`docs/seed-000-procedure.md` §7).
pub const BOOT_TEXT_FILE_PAGES: u64 = 256;

/// The page cache boot left (`[slab] page_cache`): `pages` clean, up-to-date pages of the
/// system's files on superblock `sb`, whose blocks lie on device `bdi`, taken by the
/// first of `populate`'s cached inodes in turn. The first `active` pages, in files of
/// [`BOOT_TEXT_FILE_PAGES`], go onto the active file list (used again since boot); the
/// rest, in files of [`BOOT_FILE_PAGES`], onto the inactive one. Pages come from the free
/// lists in zonelist order, as boot's allocations do: the highest zone first, down to its
/// low watermark. Returns the pages cached, fewer than asked only if the free lists ran
/// out.
pub fn cache_boot_pages(k: &mut Kernel, sb: u32, bdi: usize, pages: u64, active: u64) -> u64 {
    use super::page::{Lru, PG_ACTIVE, PG_UPTODATE};
    use super::page_alloc::{alloc_flags, get_page_from_freelist};
    let active = active.min(pages);
    let files = (active.div_ceil(BOOT_TEXT_FILE_PAGES) + (pages - active).div_ceil(BOOT_FILE_PAGES))
        as usize;
    let root = k.super_blocks[sb as usize].root;
    let root_inode = k.dcache.dentries[root as usize].inode;
    let inodes: Vec<u32> = (0..k.icache.inodes.len() as u32)
        .filter(|&i| {
            let vi = &k.icache.inodes[i as usize];
            vi.live() && vi.sb == sb && vi.file == NIL && i != root_inode
        })
        .take(files)
        .collect();
    let mut cached = 0;
    for (f, &vi) in inodes.iter().enumerate() {
        let n = if cached < active {
            BOOT_TEXT_FILE_PAGES.min(active - cached)
        } else {
            BOOT_FILE_PAGES.min(pages - cached)
        };
        let ino = inode::new_file(k, &format!("boot-file{f}"), bdi);
        let sector = k.bdis[bdi].next_free_sector;
        k.bdis[bdi].next_free_sector += n * super::backing_dev::PAGE_SECTORS as u64;
        k.inodes[ino].size_pages = n;
        k.inodes[ino].add_extent(0, sector, n);
        k.icache.inodes[vi as usize].file = ino as u32;
        k.inodes[ino].vfs = vi;
        k.super_blocks[sb as usize].boot_files.push(ino as u32);
        for index in 0..n {
            let Some(pfn) =
                get_page_from_freelist(k, Gfp::HIGHUSER_MOVABLE, 0, alloc_flags::WMARK_LOW)
            else {
                return cached;
            };
            k.pages.flags[pfn as usize] = PG_UPTODATE;
            super::filemap::add_to_page_cache_lru(k, pfn, ino, index);
            if cached < active {
                // Read again since boot: mark_page_accessed twice, without the counting.
                super::swap::del_page_from_lru_list(k, pfn);
                k.pages.set(pfn, PG_ACTIVE);
                super::swap::add_page_to_lru_list(k, pfn, Lru::ActiveFile);
            }
            cached += 1;
        }
    }
    cached
}

/// The slab pages [`populate`] takes for `files` files (densely packed, as boot allocates
/// them in order).
pub fn boot_pages(k: &Kernel, files: u64) -> u64 {
    let need = |id: CacheId, n: u64| n.div_ceil(k.slab.cache(id).objects_per_slab as u64);
    need(CacheId::Dentry, files) + need(CacheId::Inode, files)
}

/// `prune_super` (`kernel-reclaim.md` §6), the superblock's shrinker. With `nr_to_scan` 0
/// it answers its object count; otherwise it prunes that many objects, split between the
/// dentry and inode LRUs in proportion to their lengths, dentries first (they pin inodes),
/// and answers what is left. Counts are `vfs_cache_pressure` percent of the unused
/// objects. -1: a scan the caller's flags forbid (no `__GFP_FS`).
pub fn prune_super(k: &mut Kernel, sb: usize, nr_to_scan: u64, cx: &mut PruneCx) -> i64 {
    if nr_to_scan > 0 && !cx.gfp.has(Gfp::FS) {
        return -1;
    }
    cx.cpu += k.costs.shrinker_call;
    let s = &k.super_blocks[sb];
    let (dentries, inodes) = (s.dentry_lru.len, s.inode_lru.len);
    // mmsim's filesystems cache no objects of their own (`nr_cached_objects`).
    let mut total = dentries + inodes + 1;
    if nr_to_scan > 0 {
        dcache::prune_dcache_sb(k, sb, nr_to_scan * dentries / total, cx);
        inode::prune_icache_sb(k, sb, nr_to_scan * inodes / total, cx);
        let s = &k.super_blocks[sb];
        total = s.dentry_lru.len + s.inode_lru.len;
    }
    ((total / 100) * k.vm.vfs_cache_pressure as u64) as i64
}

/// The object counts of superblock `sb` against its lists and objects (invariants).
pub fn check(k: &Kernel, sb: usize) -> Result<(), String> {
    let s = &k.super_blocks[sb];
    let fail = |what: String| {
        Err(format!(
            "invariant 'slab objects' violated: superblock {sb} ({}) {what}",
            s.name
        ))
    };
    // Each LRU lists only unused objects of this superblock, as many as it counts.
    let lru =
        |list: &ListHead, links: &Vec<[u32; 2]>, what: [&str; 2], ours: &dyn Fn(u32) -> bool| {
            let [one, many] = what;
            let mut n = 0;
            for x in list.iter(links) {
                if !ours(x) {
                    return fail(format!(
                        "lists {one} {x}, which is not one of its unused {many}"
                    ));
                }
                n += 1;
            }
            if n != list.len {
                return fail(format!("counts {} unused {many} and lists {n}", list.len));
            }
            Ok(())
        };
    let sb32 = sb as u32;
    lru(
        &s.dentry_lru,
        &k.dcache.links,
        ["dentry", "dentries"],
        &|d| {
            let de = &k.dcache.dentries[d as usize];
            de.live() && de.sb == sb32 && de.flags & dcache::DCACHE_LRU != 0
        },
    )?;
    lru(&s.inode_lru, &k.icache.links, ["inode", "inodes"], &|i| {
        let vi = &k.icache.inodes[i as usize];
        vi.live() && vi.sb == sb32 && vi.state & inode::I_LRU != 0
    })?;
    let root = k.dcache.dentries.get(s.root as usize);
    if !root.is_some_and(|d| d.live() && d.d_count > 0 && d.sb == sb32) {
        return fail("has lost its pinned root dentry".into());
    }
    Ok(())
}
