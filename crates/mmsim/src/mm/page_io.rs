//! Swap IO (`mm/page_io.c`, `swapin_readahead` of `mm/swap_state.c`) and, until the block
//! layer arrives, a simple swap device: a FIFO queue of requests, adjacent requests merged up
//! to 512 KiB, each served in `seek (if not contiguous) + size / bandwidth`.
//!
//! The swap device never reports congestion (`kernel-reclaim.md` §1), but every completed
//! write wakes `congestion_wait` sleepers, as a request freed below a queue's congestion-off
//! threshold does in `blk-core.c`.

use super::fs_ops::{
    set_page_dirty_no_writeback, AddressSpaceOps, PageioData, WritePage, WritebackControl,
};
use super::page::{
    Lru, Pfn, PG_BH_LOCKED, PG_LOCKED, PG_RECLAIM, PG_SWAPBACKED, PG_UPTODATE, PG_WRITEBACK,
};
use super::page_alloc::{alloc_pages, AllocError};
use super::page_writeback::DirtyTask;
use super::swapfile::SwapConfig;
use super::vmstat::{VmEvent, ZoneStat};
use super::{swap, swapfile, Gfp, Kernel, World};
use crate::calibration::PAGE_SIZE;
use crate::engine::{self, Nanos, WaitQueueId, SEC};
use std::collections::VecDeque;

/// Largest merged request, in pages (512 KiB, a typical `max_sectors_kb`).
pub const MAX_REQUEST_PAGES: u32 = 128;

/// A request: `nr` pages starting at swap slot `slot`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwapBio {
    pub write: bool,
    pub slot: u32,
    pub nr: u32,
}

/// The swap device.
#[derive(Debug)]
pub struct SwapDev {
    /// Service-time parameters.
    pub params: SwapConfig,
    /// Queued requests, FIFO.
    pub queue: VecDeque<SwapBio>,
    /// The device task sleeps here when the queue is empty.
    pub wq: WaitQueueId,
    /// Slot after the end of the last request served (for the seek decision).
    pub head_slot: u32,
    /// Requests completed, for tests and reports.
    pub completed: u64,
}

impl SwapDev {
    /// A device with `params`.
    pub fn new(params: SwapConfig, wq: WaitQueueId) -> SwapDev {
        SwapDev {
            params,
            queue: VecDeque::new(),
            wq,
            head_slot: 0,
            completed: 0,
        }
    }

    /// Time to serve `bio` with the head at `head_slot`.
    pub fn service_time(&self, bio: &SwapBio) -> Nanos {
        let seek = if bio.slot == self.head_slot {
            0
        } else if bio.write {
            self.params.write_latency
        } else {
            self.params.read_latency
        };
        let bytes = bio.nr as u64 * PAGE_SIZE;
        seek + (bytes as u128 * SEC as u128 / self.params.bandwidth.max(1) as u128) as Nanos
    }
}

/// `submit_bio`: queue a one-page request, merging it into the last queued one when adjacent.
pub fn submit_bio(k: &mut Kernel, write: bool, slot: u32) {
    let dev = k.swapdev.as_mut().expect("swap IO needs a swap device");
    if let Some(last) = dev.queue.back_mut() {
        if last.write == write && last.slot + last.nr == slot && last.nr < MAX_REQUEST_PAGES {
            last.nr += 1;
            count_bio(k, write);
            return;
        }
    }
    dev.queue.push_back(SwapBio { write, slot, nr: 1 });
    let q = dev.wq;
    k.sched.wake_all(q);
    count_bio(k, write);
}

fn count_bio(k: &mut Kernel, write: bool) {
    // pgpgin/pgpgout are kept in KiB, as /proc/vmstat shows them.
    let kib = PAGE_SIZE / 1024;
    if write {
        k.count(VmEvent::pgpgout, kib);
        k.count(VmEvent::pswpout, 1);
    } else {
        k.count(VmEvent::pgpgin, kib);
        k.count(VmEvent::pswpin, 1);
    }
}

/// The swap cache's operations (`swap_aops`, `mm/swap_state.c`): `swap_writepage` and
/// `__set_page_dirty_no_writeback`.
#[derive(Debug)]
pub struct SwapAops;

/// The one [`SwapAops`] table.
pub static SWAP_AOPS: SwapAops = SwapAops;

impl AddressSpaceOps for SwapAops {
    fn name(&self) -> &'static str {
        "swap"
    }

    fn set_page_dirty(&self, k: &mut Kernel, pfn: Pfn, _task: &mut DirtyTask) -> bool {
        set_page_dirty_no_writeback(k, pfn)
    }

    fn writepage(
        &self,
        k: &mut Kernel,
        pfn: Pfn,
        _wbc: &WritebackControl,
        _data: &mut PageioData,
    ) -> WritePage {
        swap_writepage(k, pfn)
    }
}

/// `swap_writepage`: start writing a locked, dirty-for-IO swap-cache page. On a swap
/// partition the caller submits the bio (reclaim sleeps for a request if the pool has
/// none, the page already under writeback); the simple device queues it here.
pub fn swap_writepage(k: &mut Kernel, pfn: Pfn) -> WritePage {
    k.pages.set(pfn, PG_WRITEBACK);
    let zi = k.page_zone(pfn);
    k.zones[zi].mod_stat(ZoneStat::nr_writeback, 1);
    let slot = k.pages.private[pfn as usize];
    match k.swap_bdi {
        Some(bdi) => {
            k.count(VmEvent::pswpout, 1);
            let bio = swap_bio(true, k.swap_sector_base, slot, pfn);
            WritePage::Submit { bdi, bio }
        }
        None => {
            submit_bio(k, true, slot);
            WritePage::Started
        }
    }
}

/// A one-page bio for swap slot `slot` of a swap partition starting at sector `base`.
fn swap_bio(write: bool, base: u64, slot: u32, pfn: Pfn) -> crate::block::Bio {
    crate::block::Bio {
        dir: if write {
            crate::block::Dir::Write
        } else {
            crate::block::Dir::Read
        },
        // Swap-in reads are synchronous IO; reclaim's writes are async.
        sync: !write,
        sector: base + slot as u64 * super::backing_dev::PAGE_SECTORS as u64,
        nr_sectors: super::backing_dev::PAGE_SECTORS,
        tag: pfn as u64,
    }
}

/// A write bio completed for page writeback (`end_buffer_async_write`, `end_swap_bio_write`):
/// unlock the page's buffers, if it has any (swap pages have none), and end its writeback.
pub fn end_buffer_async_write(k: &mut Kernel, pfn: Pfn) {
    k.pages.clear(pfn, PG_BH_LOCKED);
    end_page_writeback(k, pfn);
}

/// A buffer's own write completed (`end_buffer_write_sync`, for a bio tagged
/// `backing_dev::BH_SYNC_WRITE`): unlock the buffer and wake its waiters. The page's other
/// flags are not touched.
pub fn end_buffer_write_sync(k: &mut Kernel, pfn: Pfn) {
    debug_assert!(k.pages.test(pfn, PG_BH_LOCKED));
    k.pages.clear(pfn, PG_BH_LOCKED);
    let q = k.wq.page(pfn);
    k.sched.wake_all(q);
}

/// `end_page_writeback`: rotate a PG_reclaim page to the LRU tail, clear PG_writeback, wake
/// waiters.
pub fn end_page_writeback(k: &mut Kernel, pfn: Pfn) {
    let reclaim = k.pages.test_and_clear(pfn, PG_RECLAIM);
    if k.pages.is_file_cache(pfn) {
        super::page_writeback::test_clear_page_writeback(k, pfn);
    } else {
        k.pages.clear(pfn, PG_WRITEBACK);
        let zi = k.page_zone(pfn);
        k.zones[zi].mod_stat(ZoneStat::nr_writeback, -1);
    }
    if reclaim {
        // rotate_reclaimable_page runs before PG_writeback clears in the kernel, but its
        // checks exclude only pages that are locked, dirty, active or unevictable.
        swap::rotate_reclaimable_page(k, pfn);
    }
    let q = k.wq.page(pfn);
    k.sched.wake_all(q);
}

/// A read completed: the page is uptodate and unlocked (`end_buffer_async_read` /
/// `end_swap_bio_read`).
pub fn end_page_read(k: &mut Kernel, pfn: Pfn) {
    k.pages.set(pfn, PG_UPTODATE);
    unlock_page(k, pfn);
}

/// `unlock_page`.
pub fn unlock_page(k: &mut Kernel, pfn: Pfn) {
    k.pages.clear(pfn, PG_LOCKED);
    let q = k.wq.page(pfn);
    k.sched.wake_all(q);
}

/// The swap device's task: serve requests in order, complete their pages.
pub async fn swap_device_task(w: World) {
    loop {
        let (bio, t, q) = {
            let mut k = w.borrow_mut();
            let dev = k.swapdev.as_mut().expect("swap device");
            match dev.queue.pop_front() {
                Some(bio) => {
                    let t = dev.service_time(&bio);
                    dev.head_slot = bio.slot + bio.nr;
                    (Some(bio), t, dev.wq)
                }
                None => (None, 0, dev.wq),
            }
        };
        let Some(bio) = bio else {
            engine::wait_event(&w, q, None, false).await;
            continue;
        };
        engine::sleep(&w, t).await;
        let mut k = w.borrow_mut();
        for slot in bio.slot..bio.slot + bio.nr {
            let Some(pfn) = k.swap.lookup_swap_cache(slot) else {
                k.fail(format!(
                    "swap IO completed for slot {slot} with no page in the swap cache"
                ));
                return;
            };
            if bio.write {
                end_page_writeback(&mut k, pfn);
            } else {
                k.pages.set(pfn, PG_UPTODATE);
                unlock_page(&mut k, pfn);
            }
        }
        k.swapdev.as_mut().expect("swap device").completed += 1;
        if bio.write {
            let q = k.wq.congestion_async;
            k.sched.wake_all(q);
        }
    }
}

/// `read_swap_cache_async`: the swap-cache page of `slot`, reading it if needed. `None` if
/// the slot is no longer in use.
async fn read_swap_cache_async(w: &World, slot: u32) -> Result<Option<Pfn>, AllocError> {
    loop {
        {
            let k = w.borrow();
            if let Some(p) = k.swap.lookup_swap_cache(slot) {
                return Ok(Some(p));
            }
            if k.swap.swap_map.get(slot) & swapfile::SWAP_COUNT_MASK == 0 {
                return Ok(None);
            }
        }
        let mc = super::memcontrol::swapin_memcg(&w.borrow(), slot);
        super::memcontrol::try_charge(w, mc, 1).await?;
        let pfn = alloc_pages(w, Gfp::HIGHUSER_MOVABLE, 0).await?;
        let to_partition = {
            let mut k = w.borrow_mut();
            if !swapfile::swapcache_prepare(&mut k, slot) {
                // Freed, or another reader won the race while we allocated.
                super::page_alloc::free_page(&mut k, pfn);
                if k.swap.lookup_swap_cache(slot).is_none()
                    && k.swap.swap_map.get(slot) & swapfile::SWAP_COUNT_MASK == 0
                {
                    return Ok(None);
                }
                continue;
            }
            k.pages.flags[pfn as usize] = PG_SWAPBACKED | PG_LOCKED;
            swapfile::add_to_swap_cache(&mut k, pfn, slot);
            super::memcontrol::commit_charge_swapin(&mut k, pfn, slot);
            swap::lru_cache_add_lru(&mut k, pfn, Lru::InactiveAnon);
            match k.swap_bdi {
                Some(bdi) => {
                    k.count(VmEvent::pswpin, 1);
                    Some((bdi, k.swap_sector_base))
                }
                None => {
                    submit_bio(&mut k, false, slot);
                    None
                }
            }
        };
        if let Some((bdi, base)) = to_partition {
            super::backing_dev::submit_bio(w, bdi, swap_bio(false, base, slot, pfn)).await;
        }
        return Ok(Some(pfn));
    }
}

/// `swapin_readahead`: read the `page-cluster`-aligned cluster around `slot`, then return
/// the page for `slot`.
pub async fn swapin_readahead(w: &World, slot: u32) -> Result<Option<Pfn>, AllocError> {
    let (start, end) = {
        let k = w.borrow();
        let mask = (1u32 << k.vm.page_cluster) - 1;
        ((slot & !mask).max(1), (slot | mask).min(k.swap.max - 1))
    };
    for s in start..=end {
        if s != slot {
            read_swap_cache_async(w, s).await?;
        }
    }
    read_swap_cache_async(w, slot).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::MSEC;

    #[test]
    fn contiguous_requests_skip_the_seek() {
        let wq = WaitQueueId(0);
        let mut dev = SwapDev::new(
            SwapConfig {
                size: 1 << 30,
                read_latency: 5 * MSEC,
                write_latency: 2 * MSEC,
                bandwidth: 100 << 20,
                device: None,
                placement: Default::default(),
            },
            wq,
        );
        let bio = SwapBio {
            write: true,
            slot: 10,
            nr: 32,
        };
        let transfer = 32 * 4096 * SEC / (100 << 20);
        assert_eq!(dev.service_time(&bio), 2 * MSEC + transfer);
        dev.head_slot = 10;
        assert_eq!(dev.service_time(&bio), transfer);
    }
}
