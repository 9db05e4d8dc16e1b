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
