//! Transparent hugepages (`mm/huge_memory.c`, 3.x), so far only their boot-time effect on
//! the watermarks. THP faults, khugepaged's collapses and splitting under reclaim are not
//! modelled yet, so the `thp_*` counters stay 0.
//!
//! When khugepaged runs (`enabled` is `always` or `madvise`) on a machine of 512 MiB or
//! more, `hugepage_init` → `set_recommended_min_free_kbytes` raises `min_free_kbytes` so that
//! two pageblocks per zone can stay free for MIGRATE_RESERVE and, per zone, three pageblocks
//! of each of the three other types for fallbacks, capped at 5% of lowmem. On a 4 GiB+
//! machine with three zones that is 16,896 pages (67,584 KiB), several times the default.

use super::mmzone::{Zone, MIGRATE_TYPES, PAGEBLOCK_NR_PAGES};
use crate::calibration::PAGE_SIZE;

/// `/sys/kernel/mm/transparent_hugepage/enabled`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ThpEnabled {
    Always,
    Madvise,
    /// mmsim's default while THP itself is not modelled (the era's distribution kernels
    /// mostly shipped `always`).
    #[default]
    Never,
}

impl ThpEnabled {
    /// Its name in sysfs and in a scenario.
    pub fn name(self) -> &'static str {
        match self {
            ThpEnabled::Always => "always",
            ThpEnabled::Madvise => "madvise",
            ThpEnabled::Never => "never",
        }
    }

    /// `khugepaged_enabled()`: khugepaged runs for `always` and `madvise`.
    pub fn khugepaged_enabled(self) -> bool {
        self != ThpEnabled::Never
    }
}

/// `hugepage_init` turns THP off on machines with less memory than this, in pages.
pub const THP_MIN_TOTALRAM_PAGES: u64 = (512 << 20) / PAGE_SIZE;

/// `MIGRATE_PCPTYPES`: the types with per-cpu lists (unmovable, reclaimable, movable).
const MIGRATE_PCPTYPES: u64 = MIGRATE_TYPES as u64 - 1;

/// `set_recommended_min_free_kbytes`: the `min_free_kbytes` khugepaged asks for, given the
/// zones with their current watermarks (the 5% cap is of `nr_free_buffer_pages`, the
/// lowmem pages above the high watermarks).
pub fn recommended_min_free_kbytes(zones: &[Zone]) -> u64 {
    let nr_zones = zones.iter().filter(|z| z.populated()).count() as u64;
    let mut pages = PAGEBLOCK_NR_PAGES * nr_zones * 2;
    pages += PAGEBLOCK_NR_PAGES * nr_zones * MIGRATE_PCPTYPES * MIGRATE_PCPTYPES;
    let free_buffer: u64 = zones
        .iter()
        .map(|z| z.managed_pages.saturating_sub(z.high_wmark()))
        .sum();
    pages.min(free_buffer / 20) * (PAGE_SIZE / 1024)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::page_alloc::{build_zones, calculate_min_free_kbytes, setup_per_zone_wmarks};

    /// Three populated zones ask for 11 pageblocks each: 67,584 KiB, against the default's
    /// ~11 MiB on a 7 GiB machine; a 256 MiB machine with two zones would be capped at 5%.
    #[test]
    fn khugepaged_asks_for_eleven_pageblocks_per_zone_at_most_five_percent_of_lowmem() {
        let mut zones = build_zones((7336u64 << 20) / PAGE_SIZE, 0);
        let base = calculate_min_free_kbytes(&zones);
        setup_per_zone_wmarks(&mut zones, base);
        assert!(base < 12_000, "{base}");
        assert_eq!(recommended_min_free_kbytes(&zones), 67_584);
        let mut small = build_zones((256u64 << 20) / PAGE_SIZE, 0);
        let base = calculate_min_free_kbytes(&small);
        setup_per_zone_wmarks(&mut small, base);
        let r = recommended_min_free_kbytes(&small);
        assert!(r < 2 * 11 * 2048, "capped: {r}");
        let five_percent: u64 = small
            .iter()
            .map(|z| z.managed_pages - z.high_wmark())
            .sum::<u64>()
            / 20
            * 4;
        assert_eq!(r, five_percent);
        assert!(ThpEnabled::Madvise.khugepaged_enabled());
        assert!(!ThpEnabled::Never.khugepaged_enabled());
    }
}
