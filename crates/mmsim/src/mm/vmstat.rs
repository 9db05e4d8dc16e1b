//! `/proc/vmstat`: zone counters (gauges, summed over zones) and event counters, declared
//! once each, in the order `mm/vmstat.c` of 3.9 prints them. The identifier is the name.
//!
//! Per-zone event counters (`pgscan_kswapd_<zone>` ...) are runs of four variants in zone
//! order DMA, DMA32, Normal, Movable, so `base.zone(z)` finds a zone's counter.

#![allow(non_camel_case_types)]

macro_rules! counters {
    ($(#[$m:meta])* $vis:vis enum $name:ident { $($item:ident),* $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
        #[repr(u16)]
        $vis enum $name { $($item),* }
        impl $name {
            /// Every counter, in `/proc/vmstat` order.
            pub const ALL: &'static [$name] = &[$($name::$item),*];
            /// Number of counters.
            pub const COUNT: usize = $name::ALL.len();
            /// The `/proc/vmstat` name.
            pub fn name(self) -> &'static str {
                const NAMES: &[&str] = &[$(stringify!($item)),*];
                NAMES[self as usize]
            }
        }
    };
}

counters! {
    /// Per-zone page counts (`enum zone_stat_item`).
    pub enum ZoneStat {
        nr_free_pages, nr_inactive_anon, nr_active_anon, nr_inactive_file, nr_active_file,
        nr_unevictable, nr_mlock, nr_anon_pages, nr_mapped, nr_file_pages, nr_dirty,
        nr_writeback, nr_slab_reclaimable, nr_slab_unreclaimable, nr_page_table_pages,
        nr_kernel_stack, nr_unstable, nr_bounce, nr_vmscan_write, nr_vmscan_immediate_reclaim,
        nr_writeback_temp, nr_isolated_anon, nr_isolated_file, nr_shmem, nr_dirtied, nr_written,
        nr_anon_transparent_hugepages, nr_free_cma,
    }
}

counters! {
    /// Event counters (`enum vm_event_item`), for x86-64 without NUMA.
    pub enum VmEvent {
        pgpgin, pgpgout, pswpin, pswpout,
        pgalloc_dma, pgalloc_dma32, pgalloc_normal, pgalloc_movable,
        pgfree, pgactivate, pgdeactivate, pgfault, pgmajfault,
        pgrefill_dma, pgrefill_dma32, pgrefill_normal, pgrefill_movable,
        pgsteal_kswapd_dma, pgsteal_kswapd_dma32, pgsteal_kswapd_normal, pgsteal_kswapd_movable,
        pgsteal_direct_dma, pgsteal_direct_dma32, pgsteal_direct_normal, pgsteal_direct_movable,
        pgscan_kswapd_dma, pgscan_kswapd_dma32, pgscan_kswapd_normal, pgscan_kswapd_movable,
        pgscan_direct_dma, pgscan_direct_dma32, pgscan_direct_normal, pgscan_direct_movable,
        pgscan_direct_throttle,
        pginodesteal, slabs_scanned, kswapd_inodesteal,
        kswapd_low_wmark_hit_quickly, kswapd_high_wmark_hit_quickly,
        kswapd_skip_congestion_wait,
        pageoutrun, allocstall, pgrotated,
        pgmigrate_success, pgmigrate_fail,
        compact_migrate_scanned, compact_free_scanned, compact_isolated,
        compact_stall, compact_fail, compact_success,
        htlb_buddy_alloc_success, htlb_buddy_alloc_fail,
        unevictable_pgs_culled, unevictable_pgs_scanned, unevictable_pgs_rescued,
        unevictable_pgs_mlocked, unevictable_pgs_munlocked, unevictable_pgs_cleared,
        unevictable_pgs_stranded,
        thp_fault_alloc, thp_fault_fallback, thp_collapse_alloc, thp_collapse_alloc_failed,
        thp_split, thp_zero_page_alloc, thp_zero_page_alloc_failed,
    }
}

impl VmEvent {
    /// The counter of zone `zone` (0 = DMA, 1 = DMA32, 2 = Normal, 3 = Movable) in the run of
    /// per-zone counters that starts at `self`.
    #[inline]
    pub fn zone(self, zone: usize) -> VmEvent {
        debug_assert!(zone < 4);
        VmEvent::ALL[self as usize + zone]
    }
}

/// The global event counters.
#[derive(Clone, Debug)]
pub struct VmEvents {
    counts: [u64; VmEvent::COUNT],
}

impl Default for VmEvents {
    fn default() -> Self {
        VmEvents {
            counts: [0; VmEvent::COUNT],
        }
    }
}

impl VmEvents {
    /// Add `n` to `e`.
    #[inline]
    pub fn count(&mut self, e: VmEvent, n: u64) {
        self.counts[e as usize] += n;
    }

    /// Current value of `e`.
    #[inline]
    pub fn get(&self, e: VmEvent) -> u64 {
        self.counts[e as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_proc_vmstat_names() {
        assert_eq!(
            VmEvent::pgscan_kswapd_dma.zone(2).name(),
            "pgscan_kswapd_normal"
        );
        assert_eq!(
            VmEvent::pgsteal_direct_dma.zone(1).name(),
            "pgsteal_direct_dma32"
        );
        assert_eq!(
            ZoneStat::nr_vmscan_immediate_reclaim.name(),
            "nr_vmscan_immediate_reclaim"
        );
        assert_eq!(VmEvent::ALL.len(), VmEvent::COUNT);
    }

    #[test]
    fn per_zone_runs_are_in_zone_order() {
        for base in [
            VmEvent::pgalloc_dma,
            VmEvent::pgrefill_dma,
            VmEvent::pgsteal_kswapd_dma,
            VmEvent::pgsteal_direct_dma,
            VmEvent::pgscan_kswapd_dma,
            VmEvent::pgscan_direct_dma,
        ] {
            let stem = base.name().trim_end_matches("dma");
            for (z, suffix) in ["dma", "dma32", "normal", "movable"].iter().enumerate() {
                assert_eq!(base.zone(z).name(), format!("{stem}{suffix}"));
            }
        }
    }
}

/// `struct contig_page_info` (`fill_contig_page_info`): a zone's free memory as blocks,
/// for a request of `suitable_order`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ContigPageInfo {
    pub free_pages: u64,
    pub free_blocks_total: u64,
    /// Blocks of the requested size the free blocks at or above its order would give.
    pub free_blocks_suitable: u64,
}

impl ContigPageInfo {
    pub fn of(z: &super::mmzone::Zone, suitable_order: usize) -> ContigPageInfo {
        let mut info = ContigPageInfo::default();
        for (order, area) in z.free_area.iter().enumerate() {
            info.free_blocks_total += area.nr_free;
            info.free_pages += area.nr_free << order;
            if order >= suitable_order {
                info.free_blocks_suitable += area.nr_free << (order - suitable_order);
            }
        }
        info
    }
}

/// `fragmentation_index` (`__fragmentation_index`, 2.6.35+): whether a failed allocation
/// of `order` is for want of memory (towards 0) or of contiguity (towards 1000). -1000 when
/// a block of the order is free, 0 when nothing is. Compaction runs only above
/// `extfrag_threshold`.
pub fn fragmentation_index(z: &super::mmzone::Zone, order: usize) -> i64 {
    let info = ContigPageInfo::of(z, order);
    if info.free_blocks_total == 0 {
        return 0;
    }
    if info.free_blocks_suitable > 0 {
        return -1000;
    }
    let requested = 1u64 << order;
    1000 - ((1000 + info.free_pages * 1000 / requested) / info.free_blocks_total) as i64
}

/// `unusable_free_index`: the thousandths of free memory in blocks too small for `order`.
pub fn unusable_free_index(z: &super::mmzone::Zone, order: usize) -> u64 {
    let info = ContigPageInfo::of(z, order);
    if info.free_pages == 0 {
        return 1000;
    }
    (info.free_pages - (info.free_blocks_suitable << order)) * 1000 / info.free_pages
}

/// `/proc/buddyinfo` (`frag_show`): free blocks per order, for each populated zone.
pub fn buddyinfo(zones: &[super::mmzone::Zone]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    for z in zones.iter().filter(|z| z.populated()) {
        let _ = write!(s, "Node 0, zone {:>8} ", z.name());
        for area in &z.free_area {
            let _ = write!(s, "{:>6} ", area.nr_free);
        }
        s.push('\n');
    }
    s
}

/// `/proc/pagetypeinfo` (`pagetypeinfo_show`): free blocks per order and migrate type,
/// then pageblocks per type. The kernel's `Isolate` type is printed, always 0 here.
pub fn pagetypeinfo(zones: &[super::mmzone::Zone]) -> String {
    use super::mmzone::{MAX_ORDER, MIGRATETYPE_NAMES, PAGEBLOCK_NR_PAGES, PAGEBLOCK_ORDER};
    use std::fmt::Write;
    let names = MIGRATETYPE_NAMES.iter().chain(std::iter::once(&"Isolate"));
    let mut s = String::new();
    let _ = writeln!(s, "Page block order: {PAGEBLOCK_ORDER}");
    let _ = writeln!(s, "Pages per block:  {PAGEBLOCK_NR_PAGES}");
    s.push('\n');
    let _ = write!(s, "{:<43} ", "Free pages count per migrate type at order");
    for order in 0..MAX_ORDER {
        let _ = write!(s, "{order:>6} ");
    }
    s.push('\n');
    let populated = || zones.iter().filter(|z| z.populated());
    for z in populated() {
        for (mt, name) in names.clone().enumerate() {
            let _ = write!(s, "Node {:>4}, zone {:>8}, type {:>12} ", 0, z.name(), name);
            for area in &z.free_area {
                let n = area.free_list.get(mt).map_or(0, |l| l.len);
                let _ = write!(s, "{n:>6} ");
            }
            s.push('\n');
        }
    }
    let _ = write!(s, "\n{:<23}", "Number of blocks type ");
    for name in names.clone() {
        let _ = write!(s, "{name:>12} ");
    }
    s.push('\n');
    for z in populated() {
        let _ = write!(s, "Node {}, zone {:>8} ", 0, z.name());
        for mt in 0..=MIGRATETYPE_NAMES.len() {
            let n = z.pageblock_mt.iter().filter(|&&b| b as usize == mt).count();
            let _ = write!(s, "{n:>12} ");
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod frag_tests {
    use super::*;
    use crate::mm::mmzone::{Zone, MIGRATE_MOVABLE, MIGRATE_UNMOVABLE};

    fn zone(blocks: &[(usize, u64)]) -> Zone {
        let mut z = Zone::new(1, 0, 4096);
        z.managed_pages = 4096;
        for &(order, n) in blocks {
            z.free_area[order].nr_free = n;
            z.free_area[order].free_list[MIGRATE_MOVABLE].len = n;
        }
        z
    }

    /// `__fragmentation_index`: 0 with nothing free, -1000 when a block of the order is
    /// free, towards 1000 as free memory is in ever smaller blocks.
    #[test]
    fn the_fragmentation_index_tells_want_of_memory_from_want_of_contiguity() {
        assert_eq!(fragmentation_index(&zone(&[]), 9), 0);
        assert_eq!(fragmentation_index(&zone(&[(9, 1)]), 9), -1000);
        assert_eq!(fragmentation_index(&zone(&[(10, 1)]), 9), -1000);
        // 512 order-0 pages: 1000 - (1000 + 1000) / 512 = 997.
        assert_eq!(fragmentation_index(&zone(&[(0, 512)]), 9), 997);
        // One order-8 block: 1000 - (1000 + 500) / 1 = -500 (memory is short, not contiguity).
        assert_eq!(fragmentation_index(&zone(&[(8, 1)]), 9), -500);
        assert_eq!(unusable_free_index(&zone(&[(0, 512)]), 9), 1000);
        assert_eq!(unusable_free_index(&zone(&[(0, 512), (9, 1)]), 9), 500);
        assert_eq!(unusable_free_index(&zone(&[]), 3), 1000);
    }

    /// `/proc/buddyinfo` and `/proc/pagetypeinfo` in 3.9's layout.
    #[test]
    fn buddyinfo_and_pagetypeinfo_print_as_the_kernel_does() {
        let mut z = zone(&[(0, 3), (10, 2)]);
        z.free_area[0].free_list[MIGRATE_MOVABLE].len = 2;
        z.free_area[0].free_list[MIGRATE_UNMOVABLE].len = 1;
        z.pageblock_mt[0] = MIGRATE_UNMOVABLE as u8;
        let zones = [Zone::new(0, 0, 0), z];
        assert_eq!(
            buddyinfo(&zones),
            "Node 0, zone    DMA32      3      0      0      0      0      0      0      0      0      0      2 \n"
        );
        let p = pagetypeinfo(&zones);
        let lines: Vec<&str> = p.lines().collect();
        assert_eq!(lines[0], "Page block order: 9");
        assert_eq!(lines[1], "Pages per block:  512");
        assert_eq!(
            lines[3],
            "Free pages count per migrate type at order       0      1      2      3      4      5      6      7      8      9     10 "
        );
        assert_eq!(
            lines[4],
            "Node    0, zone    DMA32, type    Unmovable      1      0      0      0      0      0      0      0      0      0      0 "
        );
        assert_eq!(
            lines[6],
            "Node    0, zone    DMA32, type      Movable      2      0      0      0      0      0      0      0      0      0      2 "
        );
        assert_eq!(lines.len(), 12, "{p}");
        assert_eq!(
            lines[10],
            "Number of blocks type     Unmovable  Reclaimable      Movable      Reserve      Isolate "
        );
        assert_eq!(
            lines[11],
            "Node 0, zone    DMA32            1            0            7            0            0 "
        );
    }
}
