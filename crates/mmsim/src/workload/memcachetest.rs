//! `memcachetest` against a local memcached (MMTests' parallelio foreground load,
//! `mmtests.md` §6.1): the server keeps items of `value_size` bytes in anonymous memory,
//! `pool / (value_size + 4 KiB)` of them, each stored where it was first set, in
//! memcached 1.4's slab allocator (see [`SlabClass`]): the pool sets the item count, the
//! slab class sets the footprint. The client
//! first populates the data set (memcachetest's default; `-S` skips it): its threads set
//! every key once, in key order, each thread a contiguous share. Then the measured phase:
//! `set_percent`% sets and the rest gets on uniformly random keys, for `duration`. A get of a
//! key never set (only without population) is a miss and touches no item memory. The
//! client's own heap holds the latency arrays it callocs for every loop of `-l` and never
//! frees (see `ClientHeap`); mmsim runs client and server in one address space.

use super::{
    access_range, access_range_now, enter, exit, killed, killed_k, uniform_k, uniform_rng, CpuDebt,
    Phase,
};
use crate::calibration::{MEMCACHETEST_OP_NS, PAGE_SIZE};
use crate::engine::{Nanos, TaskId};
use crate::mm::page_alloc::AllocError;
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
        (Self::SLAB_PAGE + super::malloc::CHUNK_HEADER).div_ceil(PAGE_SIZE)
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
            + super::malloc::CHUNK_HEADER
            + (slot % self.class.per_slab) * self.class.chunk;
        off / PAGE_SIZE..(off + self.item_bytes - 1) / PAGE_SIZE + 1
    }
}

/// memcachetest's `-c` default: operations per loop of `-l` (MMTests passes `-T 200 -l`
/// and no `-c`), split over the threads as `main` splits them.
pub const NO_ITERATIONS: u64 = 10_000;
/// Latency arrays `initialize_thread_ctx` callocs per context, one per transaction type
/// from `TX_GET` to `TX_PREPEND` (`TX_CAS - TX_GET`).
const TX_TYPES: u64 = 6;
/// Bytes of one latency sample (`hrtime_t`).
const SAMPLE_BYTES: u64 = 8;

/// The client's heap. memcachetest 0.8.3-6-g35fd1b9 (the version MMTests' shellpack builds;
/// `metrics.c`, `main.c`) records each operation's latency in arrays it never frees: before
/// each loop `main` callocs a context of six arrays with a slot per operation for each
/// thread, and after it `print_aggregated_metrics` callocs six more for the whole loop and
/// copies the gets' and sets' latencies there to sort them. At 10,000 operations a loop that
/// is twelve 80,000-byte callocs, below glibc's mmap threshold: the main arena's heap grows
/// by 960,192 bytes a loop, about 2 MiB a second at the 0M rate, and every page calloc
/// clears or a latency lands on is written once and never again.
#[derive(Debug)]
struct ClientHeap {
    arena: super::malloc::MainArena,
    /// First page of the heap's mapping (a [`crate::mm::memory::VM_BRK`] one, the mm's last,
    /// grown as the break moves).
    start_vpn: u32,
}

/// One thread's current loop: where its context's get and set arrays lie in the heap, and
/// how many latencies each holds.
#[derive(Debug, Default)]
struct Samples {
    ops: u64,
    gets: u64,
    sets: u64,
    get_array: u64,
    set_array: u64,
}

impl Samples {
    /// An operation is done: `record_tx` keeps a set's latency, and a get's if it found
    /// its item (`slot`, `u32::MAX` for a key never set).
    fn record(&mut self, is_set: bool, slot: u32) {
        if is_set {
            self.sets += 1;
        } else if slot != u32::MAX {
            self.gets += 1;
        }
        self.ops += 1;
    }
}

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
    /// The client's heap, in the same mm (mmsim runs memcached and its client as one
    /// address space).
    heap: ClientHeap,
}

impl Server {
    /// Map the pool in `mm`.
    pub fn new(w: &World, mm: usize, pool: u64, value_size: u64) -> Server {
        // MMTests' item count (memcachetest-bench's MEMCACHETEST_ITEMS).
        let items = (pool / (value_size + PAGE_SIZE)).max(1);
        let layout = ItemLayout::new(items, value_size);
        // One mmap per slab page, each next to the last, merged: a heap that grows.
        let (start_vpn, heap_vpn) = {
            let m = &mut w.borrow_mut().mms[mm];
            let brk = crate::mm::memory::VM_BRK;
            (
                m.mmap_anon(layout.mapped_pages() as u32, brk),
                m.mmap_anon(0, brk),
            )
        };
        Server {
            slot_of: vec![u32::MAX; items as usize],
            next_slot: 0,
            layout,
            start_vpn,
            clients: 0,
            populating: 0,
            heap: ClientHeap {
                arena: Default::default(),
                start_vpn: heap_vpn,
            },
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
            let share = loop_share(threads, i);
            client(w2, idx, idx, s, set_percent, deadline, share).await;
        });
        first.get_or_insert(t);
    }
    let first = first.expect("memcachetest has at least one thread");
    w.borrow_mut().mms[idx].task = Some(first);
    first
}

/// Thread `i` of `n`'s operations in a loop of `-l`: `main` splits `no_iterations` evenly
/// and gives the first threads one more each until the remainder is spent.
fn loop_share(n: u32, i: u32) -> u64 {
    let (per, rest) = (NO_ITERATIONS / n as u64, NO_ITERATIONS % n as u64);
    per + u64::from((i as u64) < rest)
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

impl ClientHeap {
    /// `calloc` six latency arrays of `slots` samples each (`initialize_thread_ctx`): where
    /// the get and set arrays begin, and the bytes calloc clears.
    fn calloc_context(&mut self, slots: u64, writes: &mut Vec<std::ops::Range<u64>>) -> [u64; 2] {
        let mut starts = [0; TX_TYPES as usize];
        for start in &mut starts {
            let c = self.arena.calloc(slots * SAMPLE_BYTES);
            *start = c.mem.start;
            writes.push(c.cleared);
        }
        // TX_GET and TX_SET come first.
        [starts[0], starts[1]]
    }

    /// A loop starts: `main` callocs the thread's context. Returns the bytes written.
    fn start_loop(&mut self, samples: &mut Samples, share: u64) -> Vec<std::ops::Range<u64>> {
        let mut writes = Vec::with_capacity(TX_TYPES as usize);
        [samples.get_array, samples.set_array] = self.calloc_context(share, &mut writes);
        writes
    }

    /// A loop ends: the latencies `record_tx` stored during it, then
    /// `print_aggregated_metrics`' context (this thread's share of it) with the gets' and
    /// sets' copied in. Returns the bytes written.
    fn end_loop(&mut self, samples: &Samples, share: u64) -> Vec<std::ops::Range<u64>> {
        let lens = [samples.gets * SAMPLE_BYTES, samples.sets * SAMPLE_BYTES];
        let mut writes = vec![
            samples.get_array..samples.get_array + lens[0],
            samples.set_array..samples.set_array + lens[1],
        ];
        let all = self.calloc_context(share, &mut writes);
        writes.extend(all.iter().zip(lens).map(|(&a, len)| a..a + len));
        writes
    }
}

/// The client writes `bytes` of its heap, first growing the heap's mapping to the break.
async fn write_heap(
    w: &World,
    mm: usize,
    server: &Rc<RefCell<Server>>,
    bytes: Vec<std::ops::Range<u64>>,
    debt: &mut CpuDebt,
) -> Result<(), AllocError> {
    let (base, end) = {
        let s = server.borrow();
        (s.heap.start_vpn, s.heap.arena.end())
    };
    // The heap is the mm's last mapping, so the break can always move.
    let grown = w.borrow_mut().mms[mm].grow_anon(base, end.div_ceil(PAGE_SIZE) as u32);
    debug_assert!(grown, "the client's heap is the mm's last mapping");
    for r in bytes {
        let pages = super::malloc::pages(&r);
        if !pages.is_empty() {
            let vpns = base + pages.start as u32..base + pages.end as u32;
            access_range(w, mm, vpns, true, debt).await?;
        }
    }
    Ok(())
}

/// One client thread (with the server work it causes), until `deadline` if there is one;
/// `share` is its operations per loop of `-l`.
pub async fn client(
    w: World,
    idx: usize,
    mm: usize,
    server: Rc<RefCell<Server>>,
    set_percent: u32,
    deadline: Option<Nanos>,
    share: u64,
) {
    let mut debt = CpuDebt::default();
    let items = server.borrow().items();
    let mut ahead = Lookahead::new();
    let mut samples = Samples::default();
    loop {
        if samples.ops == 0 {
            let writes = server.borrow_mut().heap.start_loop(&mut samples, share);
            if write_heap(&w, mm, &server, writes, &mut debt)
                .await
                .is_err()
            {
                return exit(&w, mm, idx);
            }
        }
        // One operation. What needs no wait is done in one borrow with the choice of the
        // key; the task awaits only where another task could run first.
        let (rest, is_set, slot) = {
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
            let (pages, slot) = {
                let mut s = server.borrow_mut();
                if s.slot_of[key] == u32::MAX && is_set {
                    s.slot_of[key] = s.next_slot;
                    s.next_slot += 1;
                }
                let slot = s.slot_of[key];
                if slot == u32::MAX {
                    (0..0, slot)
                } else {
                    (s.pages(slot), slot)
                }
            };
            ahead.advance(&k, mm, &server.borrow(), items, key);
            (
                access_range_now(&mut k, mm, pages.clone(), is_set, &mut debt)..pages.end,
                is_set,
                slot,
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
        samples.record(is_set, slot);
        if samples.ops == share {
            let writes = server.borrow_mut().heap.end_loop(&samples, share);
            if write_heap(&w, mm, &server, writes, &mut debt)
                .await
                .is_err()
            {
                return exit(&w, mm, idx);
            }
            samples = Samples::default();
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
    use super::{
        loop_share, ClientHeap, ItemLayout, Samples, SlabClass, NO_ITERATIONS, SAMPLE_BYTES,
    };

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

    fn heap() -> ClientHeap {
        ClientHeap {
            arena: Default::default(),
            start_vpn: 0,
        }
    }

    #[test]
    fn a_loop_callocs_a_context_before_it_and_another_after_it() {
        let mut h = heap();
        let mut s = Samples::default();
        let first = h.start_loop(&mut s, NO_ITERATIONS);
        // Six 80,000-byte arrays; the first came with the heap's first sbrk, so calloc
        // cleared none of it, the second lay in the pad and was cleared whole.
        assert_eq!(first.len(), 6);
        assert!(first[0].is_empty());
        assert_eq!(first[1].end - first[1].start, NO_ITERATIONS * SAMPLE_BYTES);
        assert_eq!(s.get_array, 16, "the get array is the first");
        assert_eq!(s.set_array, 16 + 80_016, "the set array follows it");
        let context = h.arena.end();
        (s.gets, s.sets) = (6_700, 3_300);
        let last = h.end_loop(&s, NO_ITERATIONS);
        // The latencies, six more arrays, and the gets' and sets' copied into two of them.
        assert_eq!(last.len(), 2 + 6 + 2);
        assert_eq!(last[0], 16..16 + 6_700 * 8);
        assert_eq!(last[1], 16 + 80_016..16 + 80_016 + 3_300 * 8);
        let (get_copy, set_copy) = (&last[8], &last[9]);
        assert_eq!(get_copy.end - get_copy.start, 6_700 * 8);
        assert_eq!(set_copy.start - get_copy.start, 80_016);
        assert!(
            get_copy.start >= 12 * 80_016 / 2,
            "after the loop's own context"
        );
        assert!(h.arena.end() > context, "nothing is freed: the heap grows");
    }

    #[test]
    fn a_set_and_a_get_that_finds_its_item_record_a_latency_a_missed_get_does_not() {
        let mut s = Samples::default();
        s.record(true, u32::MAX);
        s.record(true, 7);
        s.record(false, 7);
        s.record(false, 8);
        s.record(false, u32::MAX);
        assert_eq!((s.ops, s.sets, s.gets), (5, 2, 2));
    }

    #[test]
    fn a_loops_operations_are_split_over_the_threads_the_first_taking_the_remainder() {
        assert_eq!(loop_share(1, 0), 10_000);
        assert_eq!([0, 1, 2].map(|i| loop_share(3, i)), [3_334, 3_333, 3_333]);
        assert_eq!([0, 5, 6].map(|i| loop_share(7, i)), [1_429, 1_428, 1_428]);
    }

    #[test]
    fn every_loop_leaks_twelve_arrays_and_writes_most_of_them() {
        let mut h = heap();
        let (mut written, loops) = (0u64, 100u64);
        for _ in 0..loops {
            let mut s = Samples::default();
            let mut w = h.start_loop(&mut s, NO_ITERATIONS);
            (s.gets, s.sets) = (6_700, 3_300);
            w.extend(h.end_loop(&s, NO_ITERATIONS));
            let mut pages: Vec<u64> = w.iter().flat_map(super::super::malloc::pages).collect();
            pages.sort_unstable();
            pages.dedup();
            written += pages.len() as u64;
        }
        let leaked = loops * 12 * 80_016;
        // The break runs ahead of the chunks by at most the top pad and a page.
        assert!(h.arena.end() >= leaked && h.arena.end() <= leaked + (132 << 10));
        // 234 pages a loop hold the arrays; calloc leaves the freshly sbrk'd part of the
        // ones that grow the heap unwritten, and a page two arrays share counts once.
        let per_loop = written as f64 / loops as f64;
        assert!(
            (180.0..=236.0).contains(&per_loop),
            "{per_loop} pages a loop"
        );
    }
}
