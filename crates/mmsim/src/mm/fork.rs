//! The memory a new process takes (`kernel/fork.c`): its kernel stack. The stack and
//! `thread_info` share one block of `THREAD_SIZE` bytes, 8 KiB on x86-64 until 3.15, so
//! each fork makes an order-1 unmovable allocation (`alloc_thread_info_node`) that lives
//! until the task is freed. `nr_kernel_stack` counts stacks, not pages.
//!
//! The process's page tables are `memory`'s; its `task_struct`, `mm_struct` and VMAs are
//! unmovable slab objects, which mmsim does not model.

use super::page::Pfn;
use super::page_alloc::{alloc_pages, free_held_block, AllocError};
use super::vmstat::ZoneStat;
use super::{Gfp, Kernel, World};

/// `THREAD_SIZE_ORDER` on x86-64, 3.x.
pub const THREAD_SIZE_ORDER: u32 = 1;
/// `THREADINFO_GFP`: `GFP_KERNEL | __GFP_NOTRACK`.
const THREADINFO_GFP: Gfp = Gfp(Gfp::KERNEL.0 | Gfp::NOTRACK);

/// `alloc_thread_info_node` and `account_kernel_stack(ti, 1)`: a new task's stack. The
/// block is one the kernel holds (`Kernel::held_blocks`) until [`free_thread_info`].
pub async fn alloc_thread_info(w: &World) -> Result<Pfn, AllocError> {
    let pfn = alloc_pages(w, THREADINFO_GFP, THREAD_SIZE_ORDER).await?;
    let mut k = w.borrow_mut();
    let z = k.page_zone(pfn);
    k.zones[z].mod_stat(ZoneStat::nr_kernel_stack, 1);
    k.held_blocks.push((pfn, THREAD_SIZE_ORDER));
    Ok(pfn)
}

/// `free_thread_info` and `account_kernel_stack(ti, -1)`, when the task is freed.
pub fn free_thread_info(k: &mut Kernel, pfn: Pfn) {
    let z = k.page_zone(pfn);
    k.zones[z].mod_stat(ZoneStat::nr_kernel_stack, -1);
    free_held_block(k, pfn, THREAD_SIZE_ORDER);
}
