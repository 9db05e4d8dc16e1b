//! The dentry cache (`fs/dcache.c`, 3.9): dentries, their reference counts, the
//! superblocks' unused-dentry LRUs and their pruning (`prune_dcache_sb`,
//! `kernel-reclaim.md` §6).
//!
//! A positive dentry pins its inode (it holds one `i_count`); killing it drops that
//! reference, which sends the inode to its superblock's inode LRU. A dentry whose last
//! reference goes (`dput`) stays cached, on the LRU, marked referenced; the LRU is lazy: a
//! dentry taken again (`dget`) stays on it until the shrinker finds it in use and takes it
//! off. Unlinking a file leaves a negative dentry behind, which a new file of the same name
//! reuses.

use super::page::NIL;
use super::slab::{self, CacheId};
use super::super_block::PruneCx;
use super::{inode, Gfp, Kernel};
use rustc_hash::FxHashMap;

/// `DCACHE_REFERENCED`: used since the shrinker last passed; it gets another pass.
pub const DCACHE_REFERENCED: u8 = 1 << 0;
/// mmsim: on its superblock's LRU (the kernel's `!list_empty(&dentry->d_lru)`).
pub const DCACHE_LRU: u8 = 1 << 1;

/// One dentry.
#[derive(Clone, Copy, Debug)]
pub struct Dentry {
    /// Its superblock.
    pub sb: u32,
    /// Its inode (an index into [`inode::Icache`]), `NIL` for a negative dentry.
    pub inode: u32,
    /// `d_count`.
    pub d_count: u32,
    /// `DCACHE_*` flags.
    pub flags: u8,
    /// Its page in the dentry cache; `NIL` once freed.
    pub slab: u32,
}

impl Dentry {
    /// Whether the entry holds a live dentry.
    #[inline]
    pub fn live(&self) -> bool {
        self.slab != NIL
    }
}

/// Every dentry, with the LRU links (`d_lru`) and the name hash of the named ones.
#[derive(Clone, Debug, Default)]
pub struct Dcache {
    /// Indexed by dentry id; freed entries are reused.
    pub dentries: Vec<Dentry>,
    /// `d_lru` links, by dentry id.
    pub links: Vec<[u32; 2]>,
    /// Freed ids.
    free: Vec<u32>,
    /// The hashed named dentries (`dentry_hashtable`): superblock → name → dentry (looked
    /// up by `&str`, without building a key), and back. The system's cached files are
    /// nameless: nothing looks them up.
    names: FxHashMap<u32, FxHashMap<String, u32>>,
    hashed_as: FxHashMap<u32, (u32, String)>,
    /// Live dentries.
    pub nr_dentry: u64,
}

impl Dcache {
    /// Room for `n` more dentries at once, so boot's population does not leave the tables
    /// at twice their size (peak heap counts).
    pub fn reserve(&mut self, n: usize) {
        self.dentries.reserve_exact(n);
        self.links.reserve_exact(n);
    }
}

/// `d_alloc` with its object already allocated in slab page `slab`: a new negative dentry
/// of superblock `sb`, hashed under `name` if it has one, held once.
pub fn d_alloc(k: &mut Kernel, sb: u32, name: Option<&str>, slab: u32) -> u32 {
    let dc = &mut k.dcache;
    let de = Dentry {
        sb,
        inode: NIL,
        d_count: 1,
        flags: 0,
        slab,
    };
    let d = slab::insert_object(&mut dc.dentries, &mut dc.links, &mut dc.free, de);
    if let Some(name) = name {
        let key = (sb, name.to_string());
        let old = dc.names.entry(sb).or_default().insert(key.1.clone(), d);
        debug_assert!(old.is_none(), "two dentries hashed as {name}");
        dc.hashed_as.insert(d, key);
    }
    dc.nr_dentry += 1;
    d
}

/// [`d_alloc`] taking its object from the free lists without waiting (boot, tests).
pub fn d_alloc_boot(k: &mut Kernel, sb: u32, name: Option<&str>) -> u32 {
    let slab = slab::kmem_cache_alloc_now(
        k,
        CacheId::Dentry,
        Gfp::KERNEL,
        super::page_alloc::alloc_flags::NO_WATERMARKS,
    )
    .expect("a free page for the dentry cache");
    d_alloc(k, sb, name, slab)
}

/// `d_instantiate`: negative dentry `d` takes inode `i`, with the reference its caller holds.
pub fn d_instantiate(k: &mut Kernel, d: u32, i: u32) {
    debug_assert_eq!(k.dcache.dentries[d as usize].inode, NIL);
    k.dcache.dentries[d as usize].inode = i;
}

/// `d_lookup`: the hashed dentry of `name` in superblock `sb`.
pub fn d_lookup(k: &Kernel, sb: u32, name: &str) -> Option<u32> {
    k.dcache.names.get(&sb)?.get(name).copied()
}

/// `dget`: one more reference. A dentry on the LRU stays there (the shrinker takes it off
/// when it finds it in use).
pub fn dget(k: &mut Kernel, d: u32) {
    k.dcache.dentries[d as usize].d_count += 1;
}

/// `dentry_lru_add`: onto the head of its superblock's LRU, if not on it.
fn dentry_lru_add(k: &mut Kernel, d: u32) {
    let de = &mut k.dcache.dentries[d as usize];
    if de.flags & DCACHE_LRU == 0 {
        de.flags |= DCACHE_LRU;
        let sb = de.sb as usize;
        k.super_blocks[sb].dentry_lru.add(&mut k.dcache.links, d);
    }
}

/// `dentry_lru_del`: off its superblock's LRU, if on it.
fn dentry_lru_del(k: &mut Kernel, d: u32) {
    let de = &mut k.dcache.dentries[d as usize];
    if de.flags & DCACHE_LRU != 0 {
        de.flags &= !DCACHE_LRU;
        let sb = de.sb as usize;
        k.super_blocks[sb].dentry_lru.del(&mut k.dcache.links, d);
    }
}

/// `dput`: drop a reference. The last one leaves the dentry cached and unused: marked
/// referenced and on its superblock's LRU.
pub fn dput(k: &mut Kernel, d: u32) {
    let de = &mut k.dcache.dentries[d as usize];
    assert!(de.d_count > 0, "dput of dentry {d}, which nobody holds");
    if de.d_count == 1 {
        de.flags |= DCACHE_REFERENCED;
        dentry_lru_add(k, d);
    }
    k.dcache.dentries[d as usize].d_count -= 1;
}

/// `d_delete` of a dentry only its caller holds (`vfs_unlink`): it turns negative, and its
/// inode is returned with the reference the dentry held, for the caller to drop
/// (`dentry_unlink_inode`). mmsim unlinks only files nobody else has open.
pub fn d_delete(k: &mut Kernel, d: u32) -> u32 {
    let de = &mut k.dcache.dentries[d as usize];
    assert_eq!(de.d_count, 1, "unlink of dentry {d} while it is in use");
    std::mem::replace(&mut de.inode, NIL)
}

/// `dentry_kill` + `d_kill` of an unused dentry: off the LRU and the hash, its inode's
/// reference dropped (`dentry_iput`), the object freed (`d_free`). mmsim's files sit in
/// their filesystem's root directory, which the mount pins, so no ancestor is pruned.
fn dentry_kill(k: &mut Kernel, d: u32) {
    dentry_lru_del(k, d);
    let de = k.dcache.dentries[d as usize];
    if let Some((sb, name)) = k.dcache.hashed_as.remove(&d) {
        if let Some(names) = k.dcache.names.get_mut(&sb) {
            names.remove(&name);
        }
    }
    if de.inode != NIL {
        inode::iput(k, de.inode);
    }
    slab::kmem_cache_free(k, CacheId::Dentry, de.slab);
    let dc = &mut k.dcache;
    dc.dentries[d as usize].slab = NIL;
    dc.dentries[d as usize].inode = NIL;
    dc.free.push(d);
    dc.nr_dentry -= 1;
}

/// `prune_dcache_sb` (`kernel-reclaim.md` §6): from the tail of superblock `sb`'s LRU,
/// referenced dentries lose the mark and go back to the head without counting; the others
/// are taken until `count` are (`count` 0 takes them all, as the kernel's decrement-then-test
/// does). Of those taken (`shrink_dentry_list`, last taken first), a dentry in use leaves the
/// LRU and the others are killed, which sends their inodes to the inode LRU.
pub fn prune_dcache_sb(k: &mut Kernel, sb: usize, count: u64, cx: &mut PruneCx) {
    let mut left = count as i64;
    let mut referenced = Vec::new();
    let mut taken = Vec::new();
    loop {
        let d = k.super_blocks[sb].dentry_lru.tail;
        if d == NIL {
            break;
        }
        cx.visit();
        k.super_blocks[sb].dentry_lru.del(&mut k.dcache.links, d);
        let de = &mut k.dcache.dentries[d as usize];
        if de.flags & DCACHE_REFERENCED != 0 {
            de.flags &= !DCACHE_REFERENCED;
            referenced.push(d);
        } else {
            // Off the list, still counted as on it until shrink_dentry_list below.
            taken.push(d);
            left -= 1;
            if left == 0 {
                break;
            }
        }
    }
    // list_splice of the referenced list: back at the head, the last one moved first.
    for &d in &referenced {
        k.super_blocks[sb].dentry_lru.add(&mut k.dcache.links, d);
    }
    for &d in taken.iter().rev() {
        let de = &mut k.dcache.dentries[d as usize];
        de.flags &= !DCACHE_LRU;
        if de.d_count == 0 {
            dentry_kill(k, d);
        }
    }
}

/// The dentries against the dentry cache's pages and their inodes (invariants): each live
/// dentry's object is in a dentry page, `nr_dentry` counts them, and each positive dentry
/// names a live inode of its superblock. Adds the references dentries hold on each inode to
/// `held`.
pub fn check(k: &Kernel, held: &mut [u32]) -> Result<(), String> {
    let fail = |what: String| Err(format!("invariant 'slab objects' violated: {what}"));
    let cache = k.slab.cache(CacheId::Dentry);
    let mut live = 0;
    for (d, de) in k.dcache.dentries.iter().enumerate() {
        if !de.live() {
            continue;
        }
        live += 1;
        if cache.inuse(de.slab).is_none_or(|n| n == 0) {
            return fail(format!(
                "dentry {d} is in dentry page {}, which holds none",
                de.slab
            ));
        }
        if de.inode != NIL {
            let i = k.icache.inodes.get(de.inode as usize);
            if !i.is_some_and(|i| i.live() && i.sb == de.sb) {
                return fail(format!(
                    "dentry {d} names inode {}, which is not a live inode of its superblock",
                    de.inode
                ));
            }
            held[de.inode as usize] += 1;
        }
    }
    if live != k.dcache.nr_dentry || live != cache.active_objs {
        return fail(format!(
            "{live} live dentries, nr_dentry {}, dentry cache objects {}",
            k.dcache.nr_dentry, cache.active_objs
        ));
    }
    Ok(())
}
