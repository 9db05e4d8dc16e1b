//! Files by name (`fs/namei.c`, `fs/open.c`): what opening, creating, closing and removing a
//! file does to the dentry and inode caches.
//!
//! - `open` finds the file's dentry in the cache (`d_lookup`) or allocates one (`d_alloc`);
//!   a file on its device but not in memory gets an in-memory inode (`iget`), a new file
//!   a new inode (`O_CREAT`). The open file holds the dentry, which holds the inode.
//! - `close` drops the dentry (`dput`): it stays cached, unused, on its superblock's LRU.
//! - `unlink` (`rm`) turns the dentry negative and evicts the inode with its page cache; the
//!   negative dentry stays cached until the shrinker frees it or a new file of that name
//!   takes it.
//!
//! Objects come from their slab caches with `GFP_KERNEL` (dentries) and `GFP_NOFS` (the
//! filesystems' inodes), so opening may reclaim.

use super::page::NIL;
use super::page_alloc::AllocError;
use super::slab::{self, CacheId};
use super::{dcache, filemap, inode, Gfp, Kernel, World};

/// An open file: its file and the dentry it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenFile {
    /// The file ([`inode::Inode`] id).
    pub ino: usize,
    /// The dentry the open file holds.
    pub dentry: u32,
    /// `O_CREAT` made it.
    pub created: bool,
}

/// The file called `name` on device `bdi`, if it exists.
pub fn file_on_disk(k: &Kernel, bdi: usize, name: &str) -> Option<usize> {
    k.file_index
        .get(&bdi)?
        .get(name)
        .and_then(|live| live.first().copied())
}

/// The objects an open must allocate: (a dentry, an inode).
fn needs(k: &Kernel, bdi: usize, name: &str, create: bool) -> (bool, bool) {
    let sb = inode::sb_of(k, bdi);
    match dcache::d_lookup(k, sb, name) {
        Some(d) if k.dcache.dentries[d as usize].inode != NIL => (false, false),
        // A negative dentry: the file does not exist.
        Some(_) => (false, create),
        None => match file_on_disk(k, bdi, name) {
            Some(ino) => (true, k.inodes[ino].vfs == NIL),
            None => (true, create),
        },
    }
}

/// `open(name)` on device `bdi`'s filesystem, with `O_CREAT` if `create`. `None` if the file
/// does not exist and is not created (the lookup leaves a negative dentry, as the kernel's
/// does).
pub async fn open(
    w: &World,
    bdi: usize,
    name: &str,
    create: bool,
) -> Result<Option<OpenFile>, AllocError> {
    loop {
        let need = needs(&w.borrow(), bdi, name, create);
        let dentry = match need.0 {
            true => Some(slab::kmem_cache_alloc(w, CacheId::Dentry, Gfp::KERNEL).await?),
            false => None,
        };
        let inode = match need.1 {
            true => match slab::kmem_cache_alloc(w, CacheId::Inode, Gfp::NOFS).await {
                Ok(s) => Some(s),
                Err(e) => {
                    if let Some(s) = dentry {
                        slab::kmem_cache_free(&mut w.borrow_mut(), CacheId::Dentry, s);
                    }
                    return Err(e);
                }
            },
            false => None,
        };
        let mut k = w.borrow_mut();
        if needs(&k, bdi, name, create) == need {
            return Ok(open_now(&mut k, bdi, name, create, dentry, inode));
        }
        // Another task changed the caches while this one slept: look again.
        if let Some(s) = dentry {
            slab::kmem_cache_free(&mut k, CacheId::Dentry, s);
        }
        if let Some(s) = inode {
            slab::kmem_cache_free(&mut k, CacheId::Inode, s);
        }
    }
}

/// [`open`] with its objects allocated (in slab pages `dentry` and `inode`, where
/// [`needs`] asked for them).
fn open_now(
    k: &mut Kernel,
    bdi: usize,
    name: &str,
    create: bool,
    dentry: Option<u32>,
    inode_slab: Option<u32>,
) -> Option<OpenFile> {
    let sb = inode::sb_of(k, bdi);
    let d = match dcache::d_lookup(k, sb, name) {
        Some(d) => {
            dcache::dget(k, d);
            d
        }
        None => dcache::d_alloc(k, sb, Some(name), dentry.expect("a dentry object")),
    };
    let i = k.dcache.dentries[d as usize].inode;
    if i != NIL {
        let ino = k.icache.inodes[i as usize].file as usize;
        return Some(OpenFile {
            ino,
            dentry: d,
            created: false,
        });
    }
    let (ino, created) = match file_on_disk(k, bdi, name) {
        Some(ino) => (ino, false),
        None if create => (inode::new_file(k, name, bdi), true),
        None => {
            dcache::dput(k, d);
            return None;
        }
    };
    let i = match k.inodes[ino].vfs {
        NIL => inode::iget(k, sb, ino as u32, inode_slab.expect("an inode object")),
        i => {
            inode::ihold(k, i);
            i
        }
    };
    dcache::d_instantiate(k, d, i);
    Some(OpenFile {
        ino,
        dentry: d,
        created,
    })
}

/// `close`: the open file's dentry is dropped (`dput`) and stays cached, unused.
pub fn close(k: &mut Kernel, f: OpenFile) {
    dcache::dput(k, f.dentry);
}

/// `unlink(name)` on device `bdi` (`rm`), of a file nobody has open: its dentry turns
/// negative and its inode is evicted, its page cache truncated (`truncate_inode_pages`).
/// Returns whether the file existed (`rm -f` of a missing file does nothing).
pub async fn unlink(w: &World, bdi: usize, name: &str) -> Result<bool, AllocError> {
    if file_on_disk(&w.borrow(), bdi, name).is_none() {
        return Ok(false);
    }
    let Some(f) = open(w, bdi, name, false).await? else {
        return Ok(false);
    };
    let i = {
        let mut k = w.borrow_mut();
        let i = dcache::d_delete(&mut k, f.dentry);
        let vi = &mut k.icache.inodes[i as usize];
        vi.nlink = 0;
        vi.i_count -= 1;
        assert_eq!(vi.i_count, 0, "unlink of {name} while it is open");
        // iput_final of an unlinked inode: evict it. The name is gone at once: a file
        // created under it meanwhile is a new one.
        vi.state |= inode::I_FREEING;
        k.inodes[f.ino].unlinked = true;
        inode::unindex_file(&mut k, f.ino);
        i
    };
    filemap::truncate_inode_pages(w, f.ino).await;
    let mut k = w.borrow_mut();
    inode::evict(&mut k, i);
    close(&mut k, f);
    Ok(true)
}
