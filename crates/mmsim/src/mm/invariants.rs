//! Page-state invariants, checked at the end of every run and, in tests, after every
//! reclaim batch. A violation names the invariant and the page.
//!
//! 1. Frame conservation: every frame is in exactly one place (buddy, a CPU's free list,
//!    LRU, isolated, slab, a page table, a block kernel code holds, reserved), the free
//!    counts match the free lists, and each CPU's count its lists.
//! 2. LRU membership: every page on a list carries that list's id and zone, and the list
//!    lengths match the zone counters.
//! 3. No free page is locked, dirty, under writeback or in the swap cache.
//! 4. Swap slots balance: each slot's count equals the PTEs that name it, its cache flag
//!    matches the swap cache, and the in-use count matches.
//! 5. Mapcounts equal the PTEs that map each page, across every mm, and the rss counters of
//!    each mm equal its PTEs.
//! 6. Rmap: an anonymous PTE maps a page whose (mm, index) is that PTE; a file PTE maps the
//!    page the file holds at that offset (so no truncated page stays mapped); every file
//!    mapping is in its file's `i_mmap` once, and `i_mmap` names only live mappings.
//! 7. Counters: page cache, dirty and writeback per zone and device, `nr_anon_pages` and
//!    `nr_mapped` against the pages.
//! 8. Private data: PG_BH_DIRTY and PG_BH_LOCKED only with PG_PRIVATE; PG_PRIVATE only on
//!    page-cache pages, with the rules of their filesystem's private data
//!    (`AddressSpaceOps::check_private`: buffer heads only where the filesystem has them,
//!    dirty buffers only on a dirty page, a buffer page under writeback has its buffers
//!    locked); no free page carries buffers, and no page leaves the page cache with private
//!    data (checked where it leaves, in `filemap::delete_from_page_cache`).
//! 9. A filesystem's own page state (`AddressSpaceOps::check_mapping`, `check_mount`; NFS:
//!    a page awaiting COMMIT is neither dirty nor under writeback, each inode's request and
//!    commit-list counts match its pages, the mount's congestion matches its bdi), and the
//!    unstable counters it reports match the zones' and, with dirty pages, the devices'.
//! 10. The slab: each cache's pages carry PG_slab alone and the zones' `nr_slab_reclaimable`
//!     counts them; each cache's objects fill its pages as counted; every live dentry and
//!     inode is in a page of its cache, a positive dentry names a live inode of its
//!     superblock, an inode's `i_count` covers the dentries that hold it, each superblock's
//!     LRUs hold only its unused objects and its counts match them, a file has page cache or
//!     mappings only while its inode is in memory, an unlinked file is in memory only while
//!     it is being evicted; one buffer head per page with buffers. Counts are unsigned and
//!     checked as they fall.
//! 11. Page tables: every PTE that is set lies in a PTE page its mm holds, a torn-down mm
//!     holds none, a table page carries no page state, and the zones'
//!     `nr_page_table_pages` counts the PTE pages.
//! 12. Transparent huge pages: every frame of a pageblock marked as one is an anonymous
//!     page, none of them free, and the zones' `nr_anon_transparent_hugepages` counts the
//!     marked pageblocks.

use super::memory::{PGTABLE_LEVELS, PGTABLE_SHIFT, PTE_PFN_MASK, PTE_PRESENT};
use super::mmzone::{
    MAX_ORDER, MIGRATETYPE_NAMES, MIGRATE_TYPES, PAGEBLOCK_NR_PAGES, PAGEBLOCK_ORDER,
};
use super::page::*;
use super::swapfile::{SWAP_COUNT_MASK, SWAP_HAS_CACHE};
use super::vmstat::ZoneStat;
use super::Kernel;

/// A page as violation messages name it: frame, zone, flags and mapcount.
pub fn describe(k: &Kernel, pfn: Pfn) -> String {
    format!(
        "pfn {pfn} (zone {}, flags {:#x}, mapcount {})",
        k.zones[k.page_zone(pfn)].name(),
        k.pages.flags[pfn as usize] & ((1 << MAPCOUNT_SHIFT) - 1),
        k.pages.mapcount(pfn)
    )
}

/// Invariant 6 for one frame.
fn check_buffers(k: &Kernel, pfn: Pfn) -> Result<(), String> {
    let f = k.pages.flags[pfn as usize];
    if f & (PG_PRIVATE | PG_BH_DIRTY | PG_BH_LOCKED) == 0 {
        return Ok(());
    }
    let fail = |what: &str| {
        Err(format!(
            "invariant 'buffers' violated: {} {what}",
            describe(k, pfn)
        ))
    };
    if f & PG_PRIVATE == 0 {
        return fail("has buffer state without buffers");
    }
    if f & (PG_SWAPBACKED | PG_BUDDY | PG_SLAB | PG_RESERVED) != 0 {
        return fail("has private data but is not a page-cache page");
    }
    let ino = k.pages.mapping[pfn as usize] as usize;
    let Some(inode) = k.inodes.get(ino) else {
        return fail("has private data but no file");
    };
    if inode.find_page(k.pages.index[pfn as usize] as u64) != Some(pfn) {
        return fail("has private data but is not in its file's page cache");
    }
    match inode.a_ops.check_private(k, pfn) {
        Ok(()) => Ok(()),
        Err(what) => fail(&what),
    }
}

/// Invariant 10: the slab. Each cache's pages are slab pages and nothing else, the zones'
/// `nr_slab_reclaimable` counts them, each cache's objects fill its pages as counted, every
/// dentry and inode sits in a page of its cache with the references and LRU places its
/// superblock counts, and the buffer heads are one per page with buffers.
/// Memory cgroups: no free page is charged; each group's pages, stock and swap records add
/// up to its counters (`res`, and `memsw` with the swap), hierarchically.
fn check_memcg(k: &Kernel) -> Result<(), String> {
    let cg = &k.memcg;
    if cg.disabled() {
        return Ok(());
    }
    let groups = cg.groups.len();
    let (mut rss, mut cache, mut swap) =
        (vec![0u64; groups], vec![0u64; groups], vec![0u64; groups]);
    for (pfn, &pc) in cg.pc.iter().enumerate() {
        let Some(mc) = cg.page_memcg(pfn as Pfn) else {
            continue;
        };
        if k.pages.test(pfn as Pfn, PG_BUDDY) || k.pages.flags[pfn] == PG_PCP {
            return Err(format!(
                "invariant 'memcg charges balance' violated: {} is free but charged to memory cgroup {mc}",
                describe(k, pfn as Pfn)
            ));
        }
        if pc & super::memcontrol::PCG_RSS != 0 {
            rss[mc] += 1;
        } else {
            cache[mc] += 1;
        }
    }
    for (slot, &rec) in cg.swap_cgroup.iter().enumerate() {
        if rec == 0 {
            continue;
        }
        if k.swap.swap_map.get(slot as u32) == 0 {
            return Err(format!(
                "invariant 'memcg charges balance' violated: free swap slot {slot} is charged to memory cgroup {}",
                rec - 1
            ));
        }
        swap[(rec - 1) as usize] += 1;
    }
    let want = cg.expected_usage();
    for (i, g) in cg.groups.iter().enumerate() {
        if (g.stat.rss, g.stat.cache, g.stat.swap) != (rss[i], cache[i], swap[i]) {
            return Err(format!(
                "invariant 'memcg charges balance' violated: memory cgroup \"{}\" counts rss {} cache {} swap {}, its pages and slots are {} {} {}",
                g.name, g.stat.rss, g.stat.cache, g.stat.swap, rss[i], cache[i], swap[i]
            ));
        }
        if i != 0 && g.res.usage != want[i] {
            return Err(format!(
                "invariant 'memcg charges balance' violated: memory cgroup \"{}\" has res usage {} pages, its pages and stock (and its children's) are {}",
                g.name, g.res.usage, want[i]
            ));
        }
    }
    let mut want_sw = want;
    for (i, g) in cg.groups.iter().enumerate().skip(1) {
        let mut c = Some(i);
        while let Some(j) = c {
            want_sw[j] += g.stat.swap;
            c = cg.groups[j].res_parent;
        }
    }
    for (i, g) in cg.groups.iter().enumerate().skip(1) {
        if g.memsw.usage != want_sw[i] {
            return Err(format!(
                "invariant 'memcg charges balance' violated: memory cgroup \"{}\" has memsw usage {} pages, its pages, stock and swap are {}",
                g.name, g.memsw.usage, want_sw[i]
            ));
        }
    }
    Ok(())
}

fn check_slab(k: &Kernel) -> Result<(), String> {
    use super::slab::CacheId;
    let mut per_zone = [0u64; 3];
    for cache in &k.slab.caches {
        let mut pages = 0;
        for pfn in cache.pages() {
            pages += 1;
            per_zone[k.page_zone(pfn)] += 1;
            if k.pages.flags[pfn as usize] & ((1 << MAPCOUNT_SHIFT) - 1) != PG_SLAB {
                return Err(format!(
                    "invariant 'slab pages' violated: {} is a page of {} without PG_slab alone",
                    describe(k, pfn),
                    cache.name
                ));
            }
        }
        let capacity = pages * cache.objects_per_slab as u64;
        if pages != cache.num_slabs
            || cache.inuse_total() != cache.active_objs
            || cache.active_objs > capacity
        {
            return Err(format!(
                "invariant 'slab pages' violated: {} holds {pages} pages (counts {}) for {} objects (counts {}, room for {capacity})",
                cache.name,
                cache.num_slabs,
                cache.inuse_total(),
                cache.active_objs
            ));
        }
    }
    for z in &k.zones {
        if z.stat(ZoneStat::nr_slab_reclaimable) != per_zone[z.idx] {
            return Err(format!(
                "invariant 'slab pages' violated: zone {} counts {} reclaimable slab pages, the caches hold {}",
                z.name(),
                z.stat(ZoneStat::nr_slab_reclaimable),
                per_zone[z.idx]
            ));
        }
    }
    let mut held = vec![0u32; k.icache.inodes.len()];
    super::dcache::check(k, &mut held)?;
    super::inode::check(k, &held)?;
    for sb in 0..k.super_blocks.len() {
        super::super_block::check(k, sb)?;
    }
    let bh = k.slab.cache(CacheId::BufferHead);
    let mut with_buffers = 0;
    for inode in &k.inodes {
        if !inode.a_ops.buffer_heads() {
            continue;
        }
        for (_, pfn) in inode.cached() {
            if !k.pages.test(pfn, PG_PRIVATE) {
                continue;
            }
            with_buffers += 1;
            if bh
                .inuse(k.pages.private[pfn as usize])
                .is_none_or(|n| n == 0)
            {
                return Err(format!(
                    "invariant 'slab objects' violated: {} has buffers whose buffer head is in no buffer_head page",
                    describe(k, pfn)
                ));
            }
        }
    }
    if with_buffers != bh.active_objs {
        return Err(format!(
            "invariant 'slab objects' violated: {with_buffers} pages have buffers, the buffer_head cache holds {} objects",
            bh.active_objs
        ));
    }
    Ok(())
}

/// Check every invariant; the first violation is returned as a message.
/// Invariant 12.
fn check_thp(k: &Kernel) -> Result<(), String> {
    for z in &k.zones {
        let first = z.start_pfn as u64 >> PAGEBLOCK_ORDER;
        let mut huge = 0;
        for (i, &thp) in z.pageblock_thp.iter().enumerate() {
            if !thp {
                continue;
            }
            huge += 1;
            let head = ((first + i as u64) << PAGEBLOCK_ORDER) as Pfn;
            for pfn in head..head + PAGEBLOCK_NR_PAGES as Pfn {
                let f = k.pages.flags[pfn as usize];
                if f & PG_SWAPBACKED == 0 {
                    return Err(format!(
                        "invariant 'transparent huge pages' violated: {} lies in the huge page \
                         at pfn {head} but is not an anonymous page in use",
                        describe(k, pfn)
                    ));
                }
            }
        }
        if z.stat(ZoneStat::nr_anon_transparent_hugepages) != huge {
            return Err(format!(
                "invariant 'transparent huge pages' violated: zone {} counts {} huge pages, \
                 {huge} pageblocks are marked",
                z.name(),
                z.stat(ZoneStat::nr_anon_transparent_hugepages)
            ));
        }
    }
    Ok(())
}

pub fn check(k: &Kernel) -> Result<(), String> {
    let n = k.pages.len();
    // Where each frame is: 0 = unplaced, 1 = placed.
    let mut placed = vec![false; n];
    let mark = |pfn: Pfn, what: &str, placed: &mut Vec<bool>| -> Result<(), String> {
        if placed[pfn as usize] {
            return Err(format!(
                "invariant 'frame conservation' violated: {} is in two places (second: {what})",
                describe(k, pfn)
            ));
        }
        placed[pfn as usize] = true;
        Ok(())
    };
    for z in &k.zones {
        let mut free = 0u64;
        for (order, area) in z.free_area.iter().enumerate().take(MAX_ORDER) {
            let mut blocks = 0;
            for (mt, list) in area.free_list.iter().enumerate() {
                let mut len = 0;
                for pfn in list.iter(&k.pages) {
                    len += 1;
                    let f = k.pages.flags[pfn as usize];
                    if f & (PG_PRIVATE | PG_BH_DIRTY | PG_BH_LOCKED) != 0 {
                        return Err(format!(
                            "invariant 'no page freed with buffers' violated: {} on the order-{order} free list",
                            describe(k, pfn)
                        ));
                    }
                    if f != PG_BUDDY | mt as u32 || k.pages.mapping[pfn as usize] != order as u32 {
                        return Err(format!(
                            "invariant 'free page state' violated: {} on the order-{order} {} free list",
                            describe(k, pfn),
                            MIGRATETYPE_NAMES[mt]
                        ));
                    }
                    for p in pfn..pfn + (1 << order) {
                        if p != pfn && k.pages.flags[p as usize] != 0 {
                            return Err(format!(
                                "invariant 'free page state' violated: {} inside a free block",
                                describe(k, p)
                            ));
                        }
                        mark(p, "free list", &mut placed)?;
                    }
                    free += 1 << order;
                }
                if len != list.len {
                    return Err(format!(
                        "invariant 'free lists' violated: zone {} order {order} {} list holds {len} blocks, counts {}",
                        z.name(),
                        MIGRATETYPE_NAMES[mt],
                        list.len
                    ));
                }
                blocks += len;
            }
            if blocks != area.nr_free {
                return Err(format!(
                    "invariant 'free lists' violated: zone {} order {order} holds {blocks} blocks, nr_free says {}",
                    z.name(),
                    area.nr_free
                ));
            }
        }
        if let Some(mt) = z
            .pageblock_mt
            .iter()
            .find(|&&mt| mt as usize >= MIGRATE_TYPES)
        {
            return Err(format!(
                "invariant 'pageblock types' violated: zone {} has a pageblock of type {mt}",
                z.name()
            ));
        }
        if free != z.free_pages() {
            return Err(format!(
                "invariant 'frame conservation' violated: zone {} has {free} free pages on its lists, nr_free_pages says {}",
                z.name(),
                z.free_pages()
            ));
        }
        for lru in [
            Lru::InactiveAnon,
            Lru::ActiveAnon,
            Lru::InactiveFile,
            Lru::ActiveFile,
            Lru::Unevictable,
        ] {
            let mut total = 0;
            let lruvecs = std::iter::once(&z.lruvec).chain(&z.memcg_lruvecs);
            for (mc, lv) in lruvecs.enumerate() {
                let list = &lv.lists[lru as usize];
                let mut len = 0;
                for pfn in list.iter(&k.pages) {
                    len += 1;
                    if !k.pages.test(pfn, PG_LRU)
                        || k.pages.lru(pfn) != lru
                        || k.page_zone(pfn) != z.idx
                        || k.memcg.page_lruvec_memcg(pfn) != mc
                    {
                        return Err(format!(
                            "invariant 'LRU membership' violated: {} found on {lru:?} of zone {} (memory cgroup {mc}'s lruvec)",
                            describe(k, pfn),
                            z.name()
                        ));
                    }
                    mark(pfn, "LRU", &mut placed)?;
                }
                if len != list.len {
                    return Err(format!(
                        "invariant 'LRU membership' violated: zone {} {lru:?} of memory cgroup {mc} holds {len} pages, list says {}",
                        z.name(),
                        list.len,
                    ));
                }
                total += len;
            }
            if total != z.stat(super::mmzone::Zone::lru_stat(lru)) {
                return Err(format!(
                    "invariant 'LRU membership' violated: zone {} {lru:?} holds {total} pages, counter says {}",
                    z.name(),
                    z.stat(super::mmzone::Zone::lru_stat(lru))
                ));
            }
        }
    }
    for z in &k.zones {
        for (cpu, pcp) in z.pageset.iter().enumerate() {
            let mut len = 0;
            for list in &pcp.lists {
                for &(pfn, _) in list {
                    len += 1;
                    if k.pages.flags[pfn as usize] != PG_PCP || k.page_zone(pfn) != z.idx {
                        return Err(format!(
                            "invariant 'free page state' violated: {} on CPU {cpu}'s list of zone {}",
                            describe(k, pfn),
                            z.name()
                        ));
                    }
                    mark(pfn, "per-cpu list", &mut placed)?;
                }
            }
            if len != pcp.count {
                return Err(format!(
                    "invariant 'free lists' violated: CPU {cpu}'s lists of zone {} hold {len} pages, count says {}",
                    z.name(),
                    pcp.count
                ));
            }
        }
    }
    for cache in &k.slab.caches {
        for pfn in cache.pages() {
            mark(pfn, cache.name, &mut placed)?;
        }
    }
    for &(first, order) in &k.held_blocks {
        for pfn in first..first + (1 << order) {
            if k.pages.flags[pfn as usize] != 0 {
                return Err(format!(
                    "invariant 'held blocks' violated: {} in an order-{order} block kernel code holds",
                    describe(k, pfn)
                ));
            }
            mark(pfn, "held block", &mut placed)?;
        }
    }
    let mut pte_pages = [0u64; 3];
    for (mi, m) in k.mms.iter().enumerate() {
        let pt = &m.pgtables;
        let leaf = pt.tables[PGTABLE_LEVELS - 1].iter().filter(|&&t| t != NIL);
        for pfn in leaf {
            pte_pages[k.page_zone(*pfn)] += 1;
        }
        for pfn in pt.frames() {
            if k.pages.flags[pfn as usize] != 0 {
                return Err(format!(
                    "invariant 'page tables' violated: {} is a page table of mm {mi} with page state",
                    describe(k, pfn)
                ));
            }
            mark(pfn, "page table", &mut placed)?;
        }
        if m.dead && pt.frames().next().is_some() {
            return Err(format!(
                "invariant 'page tables' violated: mm {mi} ({}) is torn down but keeps page tables",
                m.name
            ));
        }
        for v in &m.vmas {
            // Each run of PTEs one PTE page holds: if any is set, the page must be there.
            let span = 1u32 << PGTABLE_SHIFT[PGTABLE_LEVELS - 1];
            let mut vpn = v.start;
            let end = v.start + v.ptes.len() as u32;
            while vpn < end {
                let next = ((vpn / span) + 1) * span;
                let run = &v.ptes[(vpn - v.start) as usize..(next.min(end) - v.start) as usize];
                if run.iter().any(|&pte| pte != 0) && !pt.present(vpn) {
                    return Err(format!(
                        "invariant 'page tables' violated: mm {mi} ({}) has a PTE at vpn {vpn} in no page table",
                        m.name
                    ));
                }
                vpn = next;
            }
        }
    }
    for z in &k.zones {
        if z.stat(ZoneStat::nr_page_table_pages) != pte_pages[z.idx] {
            return Err(format!(
                "invariant 'page tables' violated: zone {} counts {} page-table pages, the mms hold {}",
                z.name(),
                z.stat(ZoneStat::nr_page_table_pages),
                pte_pages[z.idx]
            ));
        }
    }
    for pfn in 0..n as Pfn {
        let f = k.pages.flags[pfn as usize];
        if f & (PG_RESERVED | PG_ISOLATED) != 0 {
            mark(pfn, "reserved or isolated", &mut placed)?;
        }
        if !placed[pfn as usize] {
            return Err(format!(
                "invariant 'frame conservation' violated: {} is in no place",
                describe(k, pfn)
            ));
        }
        if f & PG_BUDDY != 0 && f & (PG_LOCKED | PG_DIRTY | PG_WRITEBACK | PG_SWAPCACHE) != 0 {
            return Err(format!(
                "invariant 'no page freed while locked, dirty or under writeback' violated: {}",
                describe(k, pfn)
            ));
        }
        check_buffers(k, pfn)?;
    }
    check_memcg(k)?;
    check_thp(k)?;
    // Swap and mapcounts, from the page tables.
    let mut slot_refs = vec![0u32; k.swap.max as usize];
    let mut maps = vec![0u32; n];
    for (mi, m) in k.mms.iter().enumerate() {
        let (mut anon, mut file, mut swapents) = (0u64, 0u64, 0u64);
        for v in &m.vmas {
            for (i, &pte) in v.ptes.iter().enumerate() {
                if pte & PTE_PRESENT != 0 {
                    let pfn = pte & PTE_PFN_MASK;
                    maps[pfn as usize] += 1;
                    let vpn = v.start + i as u32;
                    check_pte_rmap(k, mi, vpn, v, i, pfn)?;
                    if v.file.is_some() {
                        file += 1;
                    } else {
                        anon += 1;
                    }
                } else if pte != 0 {
                    if v.file.is_some() {
                        return Err(format!("invariant 'rmap' violated: a swap entry in the file mapping at vpn {} of mm {mi}", v.start + i as u32));
                    }
                    let slot = (pte - 1) as usize;
                    if slot >= slot_refs.len() {
                        return Err(format!("invariant 'swap slots balanced' violated: PTE names slot {slot} beyond the swap area"));
                    }
                    slot_refs[slot] += 1;
                    swapents += 1;
                }
            }
            if let Some(f) = v.file {
                let entries = k.inodes[f.ino]
                    .i_mmap
                    .iter()
                    .filter(|e| {
                        e.mm as usize == mi
                            && e.start == v.start
                            && e.pgoff == f.pgoff
                            && e.pages == v.ptes.len() as u64
                    })
                    .count();
                if entries != 1 {
                    return Err(format!(
                        "invariant 'rmap' violated: the mapping at vpn {} of mm {mi} is in the i_mmap of inode {} {entries} times",
                        v.start, f.ino
                    ));
                }
            }
        }
        if (anon, file, swapents) != (m.rss, m.file_rss, m.swapents) {
            return Err(format!(
                "invariant 'mapcount' violated: mm {mi} ({}) maps {anon} anonymous pages, {file} file pages and {swapents} swap entries; it counts {}, {} and {}",
                m.name, m.rss, m.file_rss, m.swapents
            ));
        }
    }
    for (ino, inode) in k.inodes.iter().enumerate() {
        for e in &inode.i_mmap {
            let live = k.mms.get(e.mm as usize).is_some_and(|m| {
                m.vmas
                    .iter()
                    .any(|v| v.start == e.start && v.file.is_some_and(|f| f.ino == ino))
            });
            if !live {
                return Err(format!(
                    "invariant 'rmap' violated: inode {ino} ({}) lists a mapping at vpn {} of mm {} that does not exist",
                    inode.name, e.start, e.mm
                ));
            }
        }
    }
    for pfn in 0..n as Pfn {
        if maps[pfn as usize] != k.pages.mapcount(pfn) {
            return Err(format!(
                "invariant 'mapcount' violated: {} is mapped by {} PTEs",
                describe(k, pfn),
                maps[pfn as usize]
            ));
        }
        if k.pages.test(pfn, PG_SWAPCACHE) {
            let slot = k.pages.private[pfn as usize];
            if k.swap.lookup_swap_cache(slot) != Some(pfn) {
                return Err(format!(
                    "invariant 'swap slots balanced' violated: {} claims slot {slot}, the swap cache disagrees",
                    describe(k, pfn)
                ));
            }
        }
    }
    let mut inuse = 0;
    for (slot, m) in k.swap.swap_map.iter().enumerate() {
        if m != 0 {
            inuse += 1;
        }
        if (m & SWAP_COUNT_MASK) as u32 != slot_refs[slot] {
            return Err(format!(
                "invariant 'swap slots balanced' violated: slot {slot} counts {} references, page tables hold {}",
                m & SWAP_COUNT_MASK,
                slot_refs[slot]
            ));
        }
        let cached = k.swap.lookup_swap_cache(slot as u32).is_some();
        if cached != (m & SWAP_HAS_CACHE != 0) {
            return Err(format!(
                "invariant 'swap slots balanced' violated: slot {slot} cache flag {} but swap cache {}",
                m & SWAP_HAS_CACHE != 0,
                cached
            ));
        }
    }
    if inuse != k.swap.inuse_pages {
        return Err(format!(
            "invariant 'swap slots balanced' violated: {inuse} slots in use, inuse_pages says {}",
            k.swap.inuse_pages
        ));
    }
    if k.swap.cache_len() as u64 > k.swap.total() {
        return Err("invariant 'swap slots balanced' violated: swap cache larger than swap".into());
    }
    // The page-cache index and the pages agree both ways.
    let mut cached = 0u64;
    for (ino, inode) in k.inodes.iter().enumerate() {
        let mut n = 0;
        for (index, pfn) in inode.cached() {
            n += 1;
            let f = k.pages.flags[pfn as usize];
            if k.pages.mapping[pfn as usize] as usize != ino
                || k.pages.index[pfn as usize] as u64 != index
                || f & (PG_SWAPBACKED | PG_BUDDY | PG_SLAB) != 0
                || f & (PG_LRU | PG_ISOLATED) == 0
            {
                return Err(format!(
                    "invariant 'page cache' violated: {} is at index {index} of inode {ino} ({})",
                    describe(k, pfn),
                    inode.name
                ));
            }
            if f & PG_DIRTY != 0 && !inode.tagged_dirty(index) {
                return Err(format!(
                    "invariant 'dirty tags' violated: {} at index {index} of inode {ino} ({}) is dirty but not tagged",
                    describe(k, pfn),
                    inode.name
                ));
            }
        }
        if n != inode.nrpages {
            return Err(format!(
                "invariant 'page cache' violated: inode {ino} ({}) counts {} pages, holds {n}",
                inode.name, inode.nrpages
            ));
        }
        cached += n;
    }
    let file_pages = k.global_stat(ZoneStat::nr_file_pages);
    if file_pages != cached + k.swap.cache_len() as u64 {
        return Err(format!(
            "invariant 'counters' violated: nr_file_pages {file_pages}, page cache {cached} + swap cache {}",
            k.swap.cache_len()
        ));
    }
    // Dirty, writeback and unstable accounting matches the page flags, per zone and per
    // device (a device's reclaimable pages are its dirty and unstable ones).
    let mut dirty = [0u64; 3];
    let mut writeback = [0u64; 3];
    let mut unstable = [0u64; 3];
    let mut bdi_dirty = vec![0u64; k.bdis.len()];
    let mut bdi_writeback = vec![0u64; k.bdis.len()];
    for (ino, inode) in k.inodes.iter().enumerate() {
        if k.bdis.get(inode.bdi).is_some() {
            // The filesystem's own state; its unstable pages count as the device's dirty.
            let before: u64 = unstable.iter().sum();
            inode.a_ops.check_mapping(k, ino, &mut unstable)?;
            let added = unstable.iter().sum::<u64>() - before;
            bdi_dirty[inode.bdi] += added;
        }
        for (_, pfn) in inode.cached() {
            let zi = k.page_zone(pfn);
            if k.pages.test(pfn, PG_DIRTY) {
                dirty[zi] += 1;
                if let Some(b) = bdi_dirty.get_mut(inode.bdi) {
                    *b += 1;
                }
            }
            if k.pages.test(pfn, PG_WRITEBACK) {
                writeback[zi] += 1;
                if let Some(b) = bdi_writeback.get_mut(inode.bdi) {
                    *b += 1;
                }
            }
        }
    }
    for pfn in 0..n as Pfn {
        if k.pages.test(pfn, PG_SWAPCACHE) && k.pages.test(pfn, PG_WRITEBACK) {
            writeback[k.page_zone(pfn)] += 1;
        }
    }
    for z in &k.zones {
        if z.stat(ZoneStat::nr_unstable) != unstable[z.idx] {
            return Err(format!(
                "invariant 'counters' violated: zone {} counts {} unstable NFS pages, its pages say {}",
                z.name(),
                z.stat(ZoneStat::nr_unstable),
                unstable[z.idx]
            ));
        }
        if z.stat(ZoneStat::nr_dirty) != dirty[z.idx]
            || z.stat(ZoneStat::nr_writeback) != writeback[z.idx]
        {
            return Err(format!(
                "invariant 'counters' violated: zone {} counts {} dirty and {} writeback pages, its pages say {} and {}",
                z.name(),
                z.stat(ZoneStat::nr_dirty),
                z.stat(ZoneStat::nr_writeback),
                dirty[z.idx],
                writeback[z.idx]
            ));
        }
    }
    for (i, b) in k.bdis.iter().enumerate() {
        b.a_ops.check_mount(k, i)?;
        if b.reclaimable != bdi_dirty[i] || b.writeback != bdi_writeback[i] {
            return Err(format!(
                "invariant 'counters' violated: device {} counts {} reclaimable and {} writeback pages, its files hold {} and {}",
                b.name, b.reclaimable, b.writeback, bdi_dirty[i], bdi_writeback[i]
            ));
        }
    }
    let (mut mapped_anon, mut mapped_file) = ([0i64; 3], [0i64; 3]);
    for pfn in 0..n as Pfn {
        if k.pages.mapped(pfn) {
            let counts = if k.pages.test(pfn, PG_ANON) {
                &mut mapped_anon
            } else {
                &mut mapped_file
            };
            counts[k.page_zone(pfn)] += 1;
        }
    }
    for z in &k.zones {
        let anon = z.vm_stat[ZoneStat::nr_anon_pages as usize];
        let file = z.vm_stat[ZoneStat::nr_mapped as usize];
        if anon != mapped_anon[z.idx] || file != mapped_file[z.idx] {
            return Err(format!(
                "invariant 'counters' violated: zone {} counts nr_anon_pages {anon} and nr_mapped {file}, its mapped pages are {} anonymous and {} file",
                z.name(),
                mapped_anon[z.idx],
                mapped_file[z.idx]
            ));
        }
    }
    check_slab(k)
}

/// A present PTE at `vpn` (index `i` of mapping `v` of mm `mm`) maps the page the rmap says it
/// does: for anonymous memory the page names (mm, vpn); for a file mapping the file holds the
/// page at the mapped offset.
fn check_pte_rmap(
    k: &Kernel,
    mm: usize,
    vpn: u32,
    v: &super::memory::Vma,
    i: usize,
    pfn: Pfn,
) -> Result<(), String> {
    let (mapping, index) = (
        k.pages.mapping[pfn as usize] as usize,
        k.pages.index[pfn as usize] as u64,
    );
    let anon = k.pages.test(pfn, PG_ANON);
    match v.file {
        None if anon && mapping == mm && index == vpn as u64 => Ok(()),
        None => Err(format!(
            "invariant 'rmap' violated: {} is mapped at vpn {vpn} of mm {mm} but its rmap names mm {mapping} vpn {index}",
            describe(k, pfn)
        )),
        Some(f) => {
            let offset = f.pgoff + i as u64;
            if anon || k.inodes[f.ino].find_page(offset) != Some(pfn) {
                Err(format!(
                    "invariant 'no truncated page mapped' violated: {} is mapped at vpn {vpn} of mm {mm}, but inode {} holds {:?} at offset {offset}",
                    describe(k, pfn),
                    f.ino,
                    k.inodes[f.ino].find_page(offset)
                ))
            } else {
                Ok(())
            }
        }
    }
}
