//! `memcachetest` against a local memcached (MMTests' parallelio foreground load,
//! `mmtests.md` §6.1): the server keeps items of `value_size` bytes in anonymous memory,
//! `pool / (value_size + 4 KiB)` of them, each stored where it was first set. The client
//! first populates the data set (memcachetest's default; `-S` skips it): its threads set
//! every key once, in key order, each thread a contiguous share. Then the measured phase:
//! `set_percent`% sets and the rest gets on uniformly random keys, for `duration`. A get of a
//! key never set (only without population) is a miss and touches no item memory.

use super::{access, enter, exit, killed, uniform, CpuDebt, Phase};
use crate::calibration::{MEMCACHETEST_OP_NS, PAGE_SIZE};
use crate::engine::{Nanos, TaskId};
use crate::mm::World;
use std::cell::RefCell;
use std::rc::Rc;

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
    /// Client threads still running; the last one out shuts the server down.
    clients: u32,
    /// Client threads still populating (`pthread_join` of the populate threads).
    populating: u32,
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
        let off = slot as u64 * self.chunk;
        let first = (off / PAGE_SIZE) as u32;
        let last = ((off + ITEM_HEADER + self.value_size - 1) / PAGE_SIZE) as u32;
        self.start_vpn + first..self.start_vpn + last + 1
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
        if killed(w) {
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
        for vpn in pages {
            if access(w, idx, vpn, true, &mut debt).await.is_err() {
                exit(w, idx, idx);
                return Err(());
            }
        }
        super::stats(&mut w.borrow_mut(), idx).progress += 1;
        debt.user(MEMCACHETEST_OP_NS);
        debt.maybe_flush(w).await;
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
    loop {
        if killed(&w) {
            return exit(&w, mm, idx);
        }
        if deadline.is_some_and(|d| w.borrow().sched.now() >= d) {
            break;
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
        super::stats(&mut w.borrow_mut(), idx).ops += 1;
        debt.maybe_flush(&w).await;
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
