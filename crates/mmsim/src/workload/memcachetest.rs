//! `memcachetest` against a local memcached (MMTests' parallelio foreground load,
//! `mmtests.md` §6.1): the server keeps items of `value_size` bytes in anonymous memory,
//! `pool / (value_size + 4 KiB)` of them, each stored where it was first set; client threads
//! do `set_percent`% sets and the rest gets on uniformly random keys. A get of a key never
//! set is a miss and touches no item memory.

use super::{access, exit, killed, uniform, CpuDebt};
use crate::calibration::{MEMCACHETEST_OP_NS, PAGE_SIZE};
use crate::mm::World;

/// Bytes of item header and key stored before the value.
const ITEM_HEADER: u64 = 64;

/// Shared server state: where each item lives.
#[derive(Debug)]
pub struct Server {
    /// Position of each item in the pool, or `u32::MAX` if never set.
    slot_of: Vec<u32>,
    next_slot: u32,
    chunk: u64,
    value_size: u64,
    start_vpn: u32,
}

impl Server {
    /// Map the pool in `mm`.
    pub fn new(w: &World, mm: usize, pool: u64, value_size: u64) -> Server {
        let items = (pool / (value_size + PAGE_SIZE)).max(1);
        let chunk = pool / items;
        let pages = (items * chunk).div_ceil(PAGE_SIZE) as u32 + 1;
        let start_vpn = w.borrow_mut().mms[mm].mmap_anon(pages, 0);
        Server {
            slot_of: vec![u32::MAX; items as usize],
            next_slot: 0,
            chunk,
            value_size,
            start_vpn,
        }
    }

    /// Number of items.
    pub fn items(&self) -> u64 {
        self.slot_of.len() as u64
    }

    /// Pages holding the item in `slot`.
    fn pages(&self, slot: u32) -> std::ops::Range<u32> {
        let off = slot as u64 * self.chunk;
        let first = (off / PAGE_SIZE) as u32;
        let last = ((off + ITEM_HEADER + self.value_size - 1) / PAGE_SIZE) as u32;
        self.start_vpn + first..self.start_vpn + last + 1
    }
}

/// One client thread (with the server work it causes).
pub async fn client(
    w: World,
    idx: usize,
    mm: usize,
    server: std::rc::Rc<std::cell::RefCell<Server>>,
    set_percent: u32,
) {
    let mut debt = CpuDebt::default();
    let items = server.borrow().items();
    loop {
        if killed(&w) {
            return exit(&w, mm, idx);
        }
        let key = uniform(&w, items) as usize;
        let is_set = uniform(&w, 100) < set_percent as u64;
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
        for vpn in pages {
            if access(&w, mm, vpn, is_set, &mut debt).await.is_err() {
                return exit(&w, mm, idx);
            }
        }
        debt.user(MEMCACHETEST_OP_NS);
        w.borrow_mut().workloads[idx].ops += 1;
        debt.maybe_flush(&w).await;
    }
}
