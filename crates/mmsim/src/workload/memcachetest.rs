//! `memcachetest` against a local memcached (MMTests' parallelio foreground load,
//! `mmtests.md` §6.1): the server keeps items of `value_size` bytes in anonymous memory,
//! `pool / (value_size + 4 KiB)` of them, each stored where it was first set, in
//! memcached 1.4's slab allocator (see [`SlabClass`]): the pool sets the item count, the
//! slab class sets the footprint. The client
//! first populates the data set (memcachetest's default; `-S` skips it): its threads set
//! every key once, in key order, each thread a contiguous share. Then the measured phase:
//! `set_percent`% sets and the rest gets on uniformly random keys, for `duration`. A get of a
//! key never set (only without population) is a miss and touches no item memory.

use super::{
    access_range, access_range_now, enter, exit, killed, killed_k, uniform_k, uniform_rng, CpuDebt,
    Phase,
};
use crate::calibration::{MEMCACHETEST_OP_NS, PAGE_SIZE};
use crate::engine::{Nanos, TaskId};
use crate::mm::{Kernel, World};
use std::cell::RefCell;
use std::rc::Rc;

/// memcached 1.4.15's slab allocator with its defaults (`-n 48 -f 1.25 -I 1m`, no `-L`):
/// items live in chunks of fixed size classes, carved from 1 MiB slab pages that are
/// malloc'd one at a time as the class fills. An item takes the smallest class it fits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlabClass {
    /// Chunk size of the class, bytes.
    pub chunk: u64,
    /// Chunks per slab page.
    pub per_slab: u64,
}

impl SlabClass {
    /// `sizeof(item)` on 64-bit (three links, times, sizes, flags) plus the CAS field.
    const ITEM_HEADER: u64 = 48 + 8;
    /// `settings.item_size_max`: a slab page.
    const SLAB_PAGE: u64 = 1 << 20;

    /// The class of an item holding a `value_size`-byte value under a key of up to
    /// `key_len` characters, as `slabs_init` sizes the classes (`chunk_size` 48 after the
    /// header, each class 1.25 times the last, 8-byte aligned) and `item_make_header`
    /// sizes the item (header, key and its NUL, the " <flags> <bytes>\r\n" suffix, the
    /// value and its "\r\n").
    pub fn for_item(value_size: u64, key_len: u64) -> SlabClass {
        let total = Self::item_bytes(value_size, key_len);
        let mut size = 48 + 48_u64;
        loop {
            size = size.next_multiple_of(8);
            if size >= total || (size as f64) > Self::SLAB_PAGE as f64 / 1.25 {
                break;
            }
            size = (size as f64 * 1.25) as u64;
        }
        // Past the largest class, an item takes a whole slab page.
        let chunk = if size >= total { size } else { Self::SLAB_PAGE };
        SlabClass {
            chunk,
            per_slab: (Self::SLAB_PAGE / chunk).max(1),
        }
    }

    /// Bytes of an item (`item_make_header`'s `ntotal`, with the CAS field).
    pub fn item_bytes(value_size: u64, key_len: u64) -> u64 {
        let suffix = format!(" 0 {value_size}\r\n").len() as u64;
        Self::ITEM_HEADER + key_len + 1 + suffix + value_size + 2
    }

    /// Pages of address space one slab page takes: glibc serves a 1 MiB malloc with its
    /// own mmap, the request plus the chunk header rounded up to pages.
    pub fn mapped_pages() -> u64 {
        (Self::SLAB_PAGE + MALLOC_CHUNK_HEADER).div_ceil(PAGE_SIZE)
    }
}

/// Where memcached's items lie in its mapping: `items` of `value_size`-byte values, slot
/// after slot in their slab class's chunks, slab page after slab page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ItemLayout {
    class: SlabClass,
    item_bytes: u64,
    slabs: u64,
}

impl ItemLayout {
    /// The layout of `items` items (keys are the item numbers in decimal).
    pub fn new(items: u64, value_size: u64) -> ItemLayout {
        let key_len = items.saturating_sub(1).to_string().len() as u64;
        let class = SlabClass::for_item(value_size, key_len);
        ItemLayout {
            class,
            item_bytes: SlabClass::item_bytes(value_size, key_len),
            slabs: items.max(1).div_ceil(class.per_slab),
        }
    }

    /// Pages the mapping needs: the slab pages' mmaps sit next to each other and merge
    /// into one mapping.
    pub fn mapped_pages(&self) -> u64 {
        self.slabs * SlabClass::mapped_pages()
    }

    /// Pages, from the mapping's start, that the item in `slot` covers.
    pub fn pages(&self, slot: u64) -> std::ops::Range<u64> {
        let slab = slot / self.class.per_slab;
        let off = slab * SlabClass::mapped_pages() * PAGE_SIZE
            + MALLOC_CHUNK_HEADER
            + (slot % self.class.per_slab) * self.class.chunk;
        off / PAGE_SIZE..(off + self.item_bytes - 1) / PAGE_SIZE + 1
    }
}

/// Bytes glibc puts before the memory of an mmap'd chunk (`prev_size`, `size`).
const MALLOC_CHUNK_HEADER: u64 = 16;

/// Shared server state: where each item lives.
#[derive(Debug)]
pub struct Server {
    /// Position of each item in the pool, or `u32::MAX` if never set.
    slot_of: Vec<u32>,
    next_slot: u32,
    layout: ItemLayout,
    start_vpn: u32,
    /// Client threads still running; the last one out shuts the server down.
    clients: u32,
    /// Client threads still populating (`pthread_join` of the populate threads).
    populating: u32,
}

impl Server {
    /// Map the pool in `mm`.
    pub fn new(w: &World, mm: usize, pool: u64, value_size: u64) -> Server {
        // MMTests' item count (memcachetest-bench's MEMCACHETEST_ITEMS).
        let items = (pool / (value_size + PAGE_SIZE)).max(1);
        let layout = ItemLayout::new(items, value_size);
        // One mmap per slab page, each next to the last, merged: a heap that grows.
        let start_vpn = w.borrow_mut().mms[mm]
            .mmap_anon(layout.mapped_pages() as u32, crate::mm::memory::VM_BRK);
        Server {
            slot_of: vec![u32::MAX; items as usize],
            next_slot: 0,
            layout,
            start_vpn,
            clients: 0,
            populating: 0,
        }
    }

    /// Number of items.
    pub fn items(&self) -> u64 {
        self.slot_of.len() as u64
    }

    /// Pages holding the item in `slot`.
    fn pages(&self, slot: u32) -> std::ops::Range<u32> {
        let r = self.layout.pages(slot as u64);
        self.start_vpn + r.start as u32..self.start_vpn + r.end as u32
    }
}

/// What a memcachetest run does (memcached's pool and the client's options).
pub type Config = crate::scenario::MemcachetestParams;

/// Start a memcached server and the memcachetest client's threads in task slot `idx`,
/// `start` from now. With a `duration` the clients stop after the measured phase and the
/// server exits. Returns the first client's task (the OOM killer's victim for the slot).
pub fn spawn(w: &World, idx: usize, name: &str, cfg: Config, start: Nanos) -> TaskId {
    let Config {
        pool,
        value_size,
        set_percent,
        threads,
        duration,
        populate,
    } = cfg;
    let server = Rc::new(RefCell::new(Server::new(w, idx, pool, value_size)));
    server.borrow_mut().clients = threads;
    if populate {
        server.borrow_mut().populating = threads;
    }
    let mut first = None;
    for i in 0..threads {
        let (w2, s) = (w.clone(), server.clone());
        let task_name = if threads == 1 {
            name.to_string()
        } else {
            format!("{name}/{i}")
        };
        let t = w.borrow_mut().sched.spawn(&task_name, async move {
            super::delay_start(&w2, idx, start).await;
            if populate && i == 0 {
                let items = s.borrow().items();
                enter(&mut w2.borrow_mut(), idx, Phase::Populating, items);
            }
            if populate && populate_share(&w2, idx, &s, i, threads).await.is_err() {
                return;
            }
            let deadline = duration.map(|d| super::stats_of(&w2.borrow(), idx).started_at + d);
            client(w2, idx, idx, s, set_percent, deadline).await;
        });
        first.get_or_insert(t);
    }
    let first = first.expect("memcachetest has at least one thread");
    w.borrow_mut().mms[idx].task = Some(first);
    first
}

/// Populate thread `i` of `n`: set its contiguous share of the keys, in order, then wait for
/// the other populate threads. The measured phase starts when the last one is done.
async fn populate_share(
    w: &World,
    idx: usize,
    server: &Rc<RefCell<Server>>,
    i: u32,
    n: u32,
) -> Result<(), ()> {
    let items = server.borrow().items();
    let (per, rest) = (items / n as u64, items % n as u64);
    let first = i as u64 * per + (i as u64).min(rest);
    let count = per + u64::from((i as u64) < rest);
    let mut debt = CpuDebt::default();
    for key in first..first + count {
        // What needs no wait is done in one borrow; the rest is awaited.
        let rest = {
            let mut k = w.borrow_mut();
            if killed_k(&k) {
                drop(k);
                exit(w, idx, idx);
                return Err(());
            }
            let pages = {
                let mut s = server.borrow_mut();
                let slot = s.next_slot;
                s.slot_of[key as usize] = slot;
                s.next_slot += 1;
                s.pages(slot)
            };
            access_range_now(&mut k, idx, pages.clone(), true, &mut debt)..pages.end
        };
        if !rest.is_empty() && access_range(w, idx, rest, true, &mut debt).await.is_err() {
            exit(w, idx, idx);
            return Err(());
        }
        debt.user(MEMCACHETEST_OP_NS);
        let must_wait = {
            let mut k = w.borrow_mut();
            super::stats(&mut k, idx).progress += 1;
            debt.maybe_flush_now(&mut k)
        };
        if must_wait {
            debt.flush(w).await;
        }
    }
    debt.flush(w).await;
    let last = {
        let mut s = server.borrow_mut();
        s.populating -= 1;
        s.populating == 0
    };
    if last {
        let mut k = w.borrow_mut();
        let now = k.sched.now();
        // The measured phase (and memcachetest's -T) starts now.
        super::stats(&mut k, idx).started_at = now;
        enter(&mut k, idx, Phase::Running, 0);
        let q = k.wq.child_exit;
        k.sched.wake_all(q);
    }
    while server.borrow().populating > 0 {
        if killed(w) {
            exit(w, idx, idx);
            return Err(());
        }
        let q = w.borrow().wq.child_exit;
        crate::engine::wait_event(w, q, None, true).await;
    }
    Ok(())
}

/// Warms the host's caches for a client's next operations while the current one runs: an
/// operation's wall time goes mostly to two cache misses at random places, its item's slot
/// and its page-table entry. The next operations' keys are the run's next RNG draws: a
/// copy of the RNG runs [`Lookahead::DEPTH`] operations ahead, and each operation
/// prefetches the slot of the last key drawn ahead and the PTE of the operation after the
/// next (whose slot was prefetched operations ago). Another task's draw shows as a key that was
/// not predicted, and the copy is taken again. Only the host's caches depend on this;
/// nothing the simulation computes does.
struct Lookahead {
    rng: Option<rand_chacha::ChaCha8Rng>,
    keys: std::collections::VecDeque<usize>,
}

impl Lookahead {
    /// How many operations ahead the slots are prefetched.
    const DEPTH: usize = 4;

    fn new() -> Lookahead {
        Lookahead {
            rng: None,
            keys: std::collections::VecDeque::with_capacity(Self::DEPTH + 1),
        }
    }

    /// The operation on `key` is starting: prefetch for the ones after it.
    #[inline]
    fn advance(&mut self, k: &Kernel, mm: usize, s: &Server, items: u64, key: usize) {
        if self.keys.pop_front() != Some(key) {
            // Not predicted (the first operation, or another task drew): start again from
            // where the run's RNG is now.
            self.keys.clear();
            self.rng = Some(k.rng.clone());
        }
        let rng = self.rng.as_mut().expect("set above");
        while self.keys.len() < Self::DEPTH {
            let next = uniform_rng(rng, items) as usize;
            uniform_rng(rng, 100);
            crate::mm::memory::prefetch(&s.slot_of[next]);
            self.keys.push_back(next);
        }
        let slot = s.slot_of[self.keys[1]];
        if slot != u32::MAX {
            // An item's PTEs may straddle two cache lines.
            let pages = s.pages(slot);
            crate::mm::memory::prefetch_pte(k, mm, pages.start);
            crate::mm::memory::prefetch_pte(k, mm, pages.end - 1);
        }
    }
}

/// One client thread (with the server work it causes), until `deadline` if there is one.
pub async fn client(
    w: World,
    idx: usize,
    mm: usize,
    server: Rc<RefCell<Server>>,
    set_percent: u32,
    deadline: Option<Nanos>,
) {
    let mut debt = CpuDebt::default();
    let items = server.borrow().items();
    let mut ahead = Lookahead::new();
    loop {
        // One operation. What needs no wait is done in one borrow with the choice of the
        // key; the task awaits only where another task could run first.
        let (rest, is_set) = {
            let mut k = w.borrow_mut();
            if killed_k(&k) {
                drop(k);
                return exit(&w, mm, idx);
            }
            if deadline.is_some_and(|d| k.sched.now() >= d) {
                break;
            }
            let key = uniform_k(&mut k, items) as usize;
            let is_set = uniform_k(&mut k, 100) < set_percent as u64;
            let pages = {
                let mut s = server.borrow_mut();
                if s.slot_of[key] == u32::MAX && is_set {
                    s.slot_of[key] = s.next_slot;
                    s.next_slot += 1;
                }
                let slot = s.slot_of[key];
                if slot == u32::MAX {
                    0..0
                } else {
                    s.pages(slot)
                }
            };
            ahead.advance(&k, mm, &server.borrow(), items, key);
            (
                access_range_now(&mut k, mm, pages.clone(), is_set, &mut debt)..pages.end,
                is_set,
            )
        };
        if !rest.is_empty() && access_range(&w, mm, rest, is_set, &mut debt).await.is_err() {
            return exit(&w, mm, idx);
        }
        debt.user(MEMCACHETEST_OP_NS);
        let must_wait = {
            let mut k = w.borrow_mut();
            super::stats(&mut k, idx).ops += 1;
            debt.maybe_flush_now(&mut k)
        };
        if must_wait {
            debt.flush(&w).await;
        }
    }
    debt.flush(&w).await;
    let last = {
        let mut s = server.borrow_mut();
        s.clients -= 1;
        s.clients == 0
    };
    if last {
        // The client is done and MMTests stops memcached: its items go with it.
        let mut k = w.borrow_mut();
        crate::mm::memory::exit_mmap(&mut k, mm);
        super::finished(&mut k, idx);
    }
}

#[cfg(test)]
mod tests {
    use super::{ItemLayout, SlabClass};

    #[test]
    fn a_16_kib_item_takes_the_17352_byte_class_60_to_a_slab() {
        // memcached 1.4's default classes run 96, 120, 152, ... 13880, 17352, 21696; a
        // 16 KiB value with a 6-digit key makes a 16,459-byte item.
        assert_eq!(
            SlabClass::for_item(16384, 6),
            SlabClass {
                chunk: 17352,
                per_slab: 60
            }
        );
        // 893 bytes more and it no longer fits.
        assert_eq!(SlabClass::for_item(16384 + 894, 6).chunk, 21696);
        assert_eq!(SlabClass::for_item(16384 + 893, 6).chunk, 17352);
    }

    #[test]
    fn small_items_take_the_smallest_classes() {
        // 56 + 1 + 1 + " 0 1\r\n" (6) + 1 + 2 = 67 bytes: the first class.
        assert_eq!(SlabClass::for_item(1, 0).chunk, 96);
        // 56 + 1 + 1 + " 0 53\r\n" (7) + 53 + 2 = 120 bytes exactly fits the second class.
        assert_eq!(SlabClass::for_item(53, 1).chunk, 120);
        assert_eq!(SlabClass::for_item(54, 1).chunk, 152);
    }

    #[test]
    fn an_item_past_the_largest_class_takes_a_whole_slab_page() {
        let c = SlabClass::for_item(1 << 20, 6);
        assert_eq!(
            c,
            SlabClass {
                chunk: 1 << 20,
                per_slab: 1
            }
        );
    }

    #[test]
    fn items_lie_slab_page_after_slab_page_past_mallocs_header() {
        // 293,171 items (MMTests' count for seed 000's pool): 4,887 slab pages of 60.
        let l = ItemLayout::new(293_171, 16384);
        assert_eq!(l.mapped_pages(), 4887 * 257);
        assert_eq!(SlabClass::item_bytes(16384, 6), 16459);
        // The first item starts 16 bytes in and ends at byte 16,474: pages 0-4.
        assert_eq!(l.pages(0), 0..5);
        // The second starts at 17,368 (page 4) and ends at 33,826 (page 8).
        assert_eq!(l.pages(1), 4..9);
        // The last of the first slab: 16 + 59 * 17,352 = 1,023,784 (page 249).
        assert_eq!(l.pages(59), 249..254);
        // The next slab page is its own mmap, 257 pages on.
        assert_eq!(l.pages(60), 257..262);
        assert_eq!(l.pages(121), 514 + 4..514 + 9);
        // 16 + 4 * 17,352 = 69,424 is 3,888 into page 16: the item ends at 85,882, in
        // page 20, five pages.
        assert_eq!(l.pages(4), 16..21);
        // One in 60 starts more than 4,021 bytes into a page and covers six:
        // 16 + 38 * 17,352 = 659,392 is 4,032 into page 160; it ends in page 165.
        assert_eq!(l.pages(38), 160..166);
    }

    #[test]
    fn an_item_ending_on_a_page_boundary_covers_no_page_past_it() {
        // 56 + 1 + 1 + " 0 4011\r\n" (9) + 4011 + 2 = 4,080 bytes from byte 16: the item
        // ends on the last byte of page 0.
        let l = ItemLayout::new(2, 4011);
        assert_eq!(SlabClass::item_bytes(4011, 1), 4080);
        assert_eq!(l.pages(0), 0..1);
    }

    #[test]
    fn a_small_pool_takes_whole_slab_pages() {
        // One item still takes a slab page; 61 items take two.
        assert_eq!(ItemLayout::new(1, 16384).mapped_pages(), 257);
        assert_eq!(ItemLayout::new(60, 16384).mapped_pages(), 257);
        assert_eq!(ItemLayout::new(61, 16384).mapped_pages(), 514);
    }

    #[test]
    fn a_slab_page_maps_257_pages() {
        // 1 MiB plus glibc's 16-byte chunk header, in whole pages.
        assert_eq!(SlabClass::mapped_pages(), 257);
    }
}
