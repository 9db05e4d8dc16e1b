//! The hugetlbfs pool (`mm/hugetlb.c`), as far as writing `/proc/sys/vm/nr_hugepages`
//! grows and empties it: `set_max_huge_pages`. Nothing maps the pages here.

use super::page::Pfn;
use super::page_alloc::{alloc_pages, free_held_block};
use super::vmstat::VmEvent;
use super::{Gfp, Kernel, World};

/// `HUGETLB_PAGE_ORDER` on x86-64.
pub const HUGETLB_PAGE_ORDER: u32 = 9;

/// `alloc_fresh_huge_page_node`'s mask: `htlb_alloc_mask`, which is
/// `GFP_HIGHUSER_MOVABLE` once `hugepages_treat_as_movable` is 1 (stress-highalloc sets
/// it), with `__GFP_COMP | __GFP_THISNODE | __GFP_REPEAT | __GFP_NOWARN`. `__GFP_THISNODE`
/// alone (not `GFP_THISNODE`) brings no `__GFP_NORETRY`, and one node makes it moot.
const FRESH_HUGE_PAGE_GFP: Gfp =
    Gfp(Gfp::HIGHUSER_MOVABLE.0 | Gfp::COMP | Gfp::REPEAT | Gfp::NOWARN);

/// `set_max_huge_pages(count)` on an empty pool: allocate fresh huge pages one at a time
/// until the pool holds `count` or an allocation fails (each `__GFP_REPEAT` allocation
/// reclaims and compacts hard first). The pages are held (`Kernel::held_blocks`) until
/// [`empty_pool`]. Returns the pool.
pub async fn grow_pool(w: &World, count: u64) -> Vec<Pfn> {
    let mut pool = Vec::new();
    while (pool.len() as u64) < count {
        let r = alloc_pages(w, FRESH_HUGE_PAGE_GFP, HUGETLB_PAGE_ORDER).await;
        let mut k = w.borrow_mut();
        match r {
            Ok(pfn) => {
                k.count(VmEvent::htlb_buddy_alloc_success, 1);
                k.held_blocks.push((pfn, HUGETLB_PAGE_ORDER));
                pool.push(pfn);
            }
            Err(_) => {
                k.count(VmEvent::htlb_buddy_alloc_fail, 1);
                break;
            }
        }
    }
    pool
}

/// `set_max_huge_pages(0)`: every page of the pool back to the buddy allocator.
pub fn empty_pool(k: &mut Kernel, pool: Vec<Pfn>) {
    for pfn in pool {
        free_held_block(k, pfn, HUGETLB_PAGE_ORDER);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::invariants;
    use crate::sim::{boot_for_test, run_task};

    fn free_pages(k: &Kernel) -> u64 {
        crate::mm::page_alloc::free_or_on_cpu_lists(k)
    }

    #[test]
    fn the_pool_grows_until_an_allocation_fails_and_empties_whole() {
        let w = boot_for_test(128, 0, "3.9");
        let cap = crate::mm::trace::testing::capture(&w);
        let free = free_pages(&w.borrow());
        let pool = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let (w2, p2) = (w.clone(), pool.clone());
        run_task(&w, 60 * crate::engine::SEC, async move {
            // More than the machine has: the pool stops at the first failure.
            *p2.borrow_mut() = grow_pool(&w2, 1000).await;
        });
        let allocs = cap.lines_with("mm_page_alloc:");
        assert!(
            allocs[0].ends_with(
                "order=9 migratetype=2 gfp_flags=GFP_HIGHUSER_MOVABLE|GFP_NOWARN|GFP_REPEAT|GFP_COMP"
            ),
            "{}",
            allocs[0]
        );
        let mut k = w.borrow_mut();
        let pool = pool.take();
        let n = pool.len() as u64;
        assert!(n > 20 && n < 64, "{n} huge pages of a 128 MiB machine");
        assert_eq!(k.events.get(VmEvent::htlb_buddy_alloc_success), n);
        assert_eq!(k.events.get(VmEvent::htlb_buddy_alloc_fail), 1);
        for &pfn in &pool {
            assert_eq!(pfn % 512, 0, "an order-9 block is aligned");
            assert!(k.held_blocks.contains(&(pfn, HUGETLB_PAGE_ORDER)));
        }
        assert!(free_pages(&k) + n * 512 <= free);
        invariants::check(&k).unwrap();
        empty_pool(&mut k, pool);
        assert!(k.held_blocks.is_empty());
        assert!(free_pages(&k) > n * 512, "the pool's pages are free again");
        invariants::check(&k).unwrap();
    }

    #[test]
    fn the_pool_stops_at_the_count_asked_for() {
        let w = boot_for_test(128, 0, "3.9");
        let n = std::rc::Rc::new(std::cell::Cell::new(0));
        let (w2, n2) = (w.clone(), n.clone());
        run_task(&w, crate::engine::SEC, async move {
            let pool = grow_pool(&w2, 3).await;
            n2.set(pool.len());
            empty_pool(&mut w2.borrow_mut(), pool);
        });
        assert_eq!(n.get(), 3);
        assert_eq!(w.borrow().events.get(VmEvent::htlb_buddy_alloc_fail), 0);
    }
}
