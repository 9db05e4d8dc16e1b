//! Unit tests of `vmscan.rs` against `kernel-reclaim.md` (§2.5, §2.6, §3.4, §3.5, §3.7,
//! §3.8, §4.1, §4.2, §4.4, §4.5, §4.10) and the seed 000 diffs. Expected values are computed
//! here from the specification's formulas, never copied from the code under test.

use super::testing::*;
use super::*;
use crate::engine::{Executor, SEC};
use crate::mm::memory::{Mm, PTE_DIRTY, PTE_PRESENT, PTE_YOUNG, VM_EXEC, VM_LOCKED};
use crate::mm::mmzone::{WMARK_HIGH, WMARK_LOW, WMARK_MIN, ZONE_DMA, ZONE_DMA32};
use crate::mm::page_writeback;
use crate::mm::rmap;
use crate::mm::swapfile::SWAP_HAS_CACHE;
use crate::presets;
use crate::sim::{boot_for_test, run_task};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// RAM of the test machine: DMA (~4000 pages) and DMA32 (~14000 managed pages), no Normal.
const RAM_MIB: u64 = 128;

fn world(swap_mib: u64, preset: &str) -> World {
    boot_for_test(RAM_MIB, swap_mib, preset)
}

fn switches(preset: &str) -> crate::presets::Switches {
    presets::resolve(preset, &[])
        .expect("known preset")
        .switches
}

/// `n` page-cache stand-ins (not swap-backed, unmapped) on `lru`: pages of a file on device
/// 0 if the machine has one, else of a file on no filesystem.
fn file_pages(k: &mut Kernel, lru: Lru, n: u64) -> Vec<Pfn> {
    let ino = crate::mm::inode::new_inode(k, "test-file", 0);
    (0..n)
        .map(|i| {
            let pfn = take_page(k);
            k.pages.flags[pfn as usize] = PG_UPTODATE | if lru.is_active() { PG_ACTIVE } else { 0 };
            k.pages.mapping[pfn as usize] = ino as u32;
            k.pages.index[pfn as usize] = i as u32;
            k.inodes[ino].insert_page(i, pfn);
            let zi = k.page_zone(pfn);
            k.zones[zi].mod_stat(ZoneStat::nr_file_pages, 1);
            swap::add_page_to_lru_list(k, pfn, lru);
            pfn
        })
        .collect()
}

/// `n` anonymous pages of a new mm whose mapping has `vm_flags`, on `lru`, in the state
/// `do_anonymous_page` leaves them (dirty PTE), young if `young`. Returns (mm, first vpn,
/// pages).
fn anon_pages(
    k: &mut Kernel,
    lru: Lru,
    n: u32,
    young: bool,
    vm_flags: u32,
) -> (usize, u32, Vec<Pfn>) {
    k.mms.push(Mm::default());
    let mm = k.mms.len() - 1;
    let start = k.mms[mm].mmap_anon(n, vm_flags);
    let mut pfns = Vec::new();
    for i in 0..n {
        let pfn = take_page(k);
        let vpn = start + i;
        k.pages.flags[pfn as usize] =
            PG_SWAPBACKED | PG_ANON | PG_UPTODATE | if lru.is_active() { PG_ACTIVE } else { 0 };
        k.pages.mapping[pfn as usize] = mm as u32;
        k.pages.index[pfn as usize] = vpn;
        k.pages.mapcount_add(pfn, 1).unwrap();
        k.zones[Z].mod_stat(ZoneStat::nr_anon_pages, 1);
        assert!(memory::pgtable_alloc_now(k, mm, vpn));
        *k.mms[mm].pte_mut(vpn) = PTE_PRESENT | PTE_DIRTY | if young { PTE_YOUNG } else { 0 } | pfn;
        k.mms[mm].rss += 1;
        swap::add_page_to_lru_list(k, pfn, lru);
        pfns.push(pfn);
    }
    (mm, start, pfns)
}

fn pte_of(k: &Kernel, pfn: Pfn) -> u32 {
    let mm = k.pages.mapping[pfn as usize] as usize;
    k.mms[mm].pte(k.pages.index[pfn as usize])
}

/// §3.4's FRACT arithmetic, written out from the specification.
fn fract_expected(
    sizes: [u64; 4],
    priority: i32,
    swappiness: u64,
    rs: [u64; 2],
    rr: [u64; 2],
) -> [u64; 4] {
    let ap = swappiness * (rs[0] + 1) / (rr[0] + 1);
    let fp = (200 - swappiness) * (rs[1] + 1) / (rr[1] + 1);
    let den = ap + fp + 1;
    let mut nr = [0; 4];
    for (i, lru) in Lru::EVICTABLE.iter().enumerate() {
        let scan = sizes[i] >> priority;
        nr[*lru as usize] = scan * if lru.is_file() { fp } else { ap } / den;
    }
    nr
}

/// Lists with inactive file low (active > inactive), so §3.4 reaches FRACT.
const FRACT_SIZES: [u64; 4] = [1024, 2048, 512, 1536];

fn fill_lists(k: &mut Kernel, sizes: [u64; 4]) {
    for (i, lru) in Lru::EVICTABLE.iter().enumerate() {
        if lru.is_file() {
            file_pages(k, *lru, sizes[i]);
        } else if sizes[i] > 0 {
            anon_pages(k, *lru, sizes[i] as u32, false, 0);
        }
    }
    for (i, lru) in Lru::EVICTABLE.iter().enumerate() {
        assert_eq!(k.zones[Z].lruvec.size(*lru), sizes[i]);
    }
}

// ---------------------------------------------------------------------------------------
// 1. get_scan_count (§3.4)

#[test]
fn get_scan_count_fract_split_follows_the_reference_formula() {
    // (swappiness, recent_scanned, recent_rotated): the fourth case has anon pages rotating
    // (referenced) far more than file pages, so the split must favour file; the last has
    // fresh statistics, where the +1s alone give ap = swappiness and fp = 200 - swappiness.
    let cases: [(u32, [u64; 2], [u64; 2]); 5] = [
        (60, [700, 500], [100, 100]),
        (100, [700, 500], [100, 100]),
        (100, [300, 200], [0, 150]),
        (60, [760, 500], [700, 10]),
        (60, [0, 0], [0, 0]),
    ];
    for (swappiness, rs, rr) in cases {
        let w = world(256, "3.9");
        let mut k = w.borrow_mut();
        k.vm.swappiness = swappiness;
        fill_lists(&mut k, FRACT_SIZES);
        // Below a quarter of each type's size: no decay.
        assert!(rs[0] <= 3072 / 4 && rs[1] <= 2048 / 4);
        k.zones[Z].lruvec.recent_scanned = rs;
        k.zones[Z].lruvec.recent_rotated = rr;
        for priority in [4, 8] {
            let (nr, balance) = get_scan_count(&mut k, Z, &sc_at(priority, true));
            assert_eq!(balance, ScanBalance::Fract, "swappiness {swappiness}");
            let want = fract_expected(FRACT_SIZES, priority, swappiness as u64, rs, rr);
            assert_eq!(
                nr, want,
                "swappiness {swappiness}, priority {priority}, rs {rs:?}, rr {rr:?}"
            );
        }
        assert_eq!(
            k.zones[Z].lruvec.recent_scanned, rs,
            "no decay below size/4"
        );
        assert_eq!(k.zones[Z].lruvec.recent_rotated, rr);
        if rr[0] > 10 * rr[1] {
            // Rotation statistics favouring file: more file than anon scanned, per page.
            let (nr, _) = get_scan_count(&mut k, Z, &sc_at(4, true));
            let anon_share = nr[Lru::ActiveAnon as usize] * 1000 / (FRACT_SIZES[1] >> 4);
            let file_share = nr[Lru::ActiveFile as usize] * 1000 / (FRACT_SIZES[3] >> 4);
            assert!(
                file_share > 5 * anon_share,
                "file {file_share} vs anon {anon_share}"
            );
        }
    }
}

#[test]
fn get_scan_count_decays_rotation_statistics_above_a_quarter_of_the_lists() {
    let w = world(256, "3.9");
    let mut k = w.borrow_mut();
    fill_lists(&mut k, FRACT_SIZES);
    let anon = FRACT_SIZES[0] + FRACT_SIZES[1];
    let file = FRACT_SIZES[2] + FRACT_SIZES[3];
    // Anon: just above a quarter (halved); file: exactly a quarter (kept).
    k.zones[Z].lruvec.recent_scanned = [anon / 4 + 1, file / 4];
    k.zones[Z].lruvec.recent_rotated = [301, 51];
    let (nr, balance) = get_scan_count(&mut k, Z, &sc_at(4, true));
    assert_eq!(balance, ScanBalance::Fract);
    let rs = [(anon / 4 + 1) >> 1, file / 4];
    let rr = [301 / 2, 51];
    assert_eq!(k.zones[Z].lruvec.recent_scanned, rs);
    assert_eq!(k.zones[Z].lruvec.recent_rotated, rr);
    assert_eq!(
        nr,
        fract_expected(FRACT_SIZES, 4, 60, rs, rr),
        "the split uses the decayed values"
    );
    // Now file too.
    k.zones[Z].lruvec.recent_scanned = [10, file];
    k.zones[Z].lruvec.recent_rotated = [5, 99];
    get_scan_count(&mut k, Z, &sc_at(4, true));
    assert_eq!(k.zones[Z].lruvec.recent_scanned, [10, file / 2]);
    assert_eq!(k.zones[Z].lruvec.recent_rotated, [5, 49]);
    // The mirror image: anon exactly a quarter (kept), file just above (halved).
    k.zones[Z].lruvec.recent_scanned = [anon / 4, file / 4 + 1];
    k.zones[Z].lruvec.recent_rotated = [7, 9];
    get_scan_count(&mut k, Z, &sc_at(4, true));
    assert_eq!(
        k.zones[Z].lruvec.recent_scanned,
        [anon / 4, (file / 4 + 1) >> 1]
    );
    assert_eq!(k.zones[Z].lruvec.recent_rotated, [7, 4]);
}

#[test]
fn get_scan_count_scans_only_file_without_swap_or_may_swap() {
    let shifted = |p: i32| FRACT_SIZES.map(|s| s >> p);
    // No swap device at all.
    let w = world(0, "3.9");
    let mut k = w.borrow_mut();
    fill_lists(&mut k, FRACT_SIZES);
    let (nr, balance) = get_scan_count(&mut k, Z, &sc_at(4, true));
    assert_eq!(balance, ScanBalance::File);
    assert_eq!(nr, [0, 0, shifted(4)[2], shifted(4)[3]]);
    // Even at priority 0 (EQUAL needs swap).
    let (nr, balance) = get_scan_count(&mut k, Z, &sc_at(0, true));
    assert_eq!(balance, ScanBalance::File);
    assert_eq!(nr, [0, 0, FRACT_SIZES[2], FRACT_SIZES[3]]);
    drop(k);

    // Swap present but full, then swap free but may_swap off.
    let w = world(256, "3.9");
    let mut k = w.borrow_mut();
    fill_lists(&mut k, FRACT_SIZES);
    let (_, balance) = get_scan_count(&mut k, Z, &sc_at(4, true));
    assert_eq!(balance, ScanBalance::Fract);
    let inuse = k.swap.inuse_pages;
    k.swap.inuse_pages = k.swap.total() as u32;
    let (nr, balance) = get_scan_count(&mut k, Z, &sc_at(4, true));
    assert_eq!(
        (nr, balance),
        ([0, 0, shifted(4)[2], shifted(4)[3]], ScanBalance::File),
        "swap full"
    );
    k.swap.inuse_pages = inuse;
    let mut sc = sc_at(4, true);
    sc.may_swap = false;
    let (nr, balance) = get_scan_count(&mut k, Z, &sc);
    assert_eq!(
        (nr, balance),
        ([0, 0, shifted(4)[2], shifted(4)[3]], ScanBalance::File),
        "!may_swap"
    );
}

#[test]
fn get_scan_count_scans_only_anon_when_file_and_free_are_below_high() {
    let w = world(256, "3.9");
    let mut k = w.borrow_mut();
    let high = k.zones[Z].high_wmark();
    file_pages(&mut k, Lru::InactiveFile, 10);
    file_pages(&mut k, Lru::ActiveFile, 40);
    // Leave high - 50 - 20 pages free: file + free = high - 20 <= high.
    let free = k.zones[Z].free_pages();
    let keep_free = high - 50 - 20;
    let n = (free - keep_free) as u32;
    anon_pages(&mut k, Lru::ActiveAnon, n / 2, false, 0);
    anon_pages(&mut k, Lru::InactiveAnon, n - n / 2, false, 0);
    // Their page tables took a few pages more (and the CPU lists' leftovers go back).
    crate::mm::page_alloc::drain_all_pages(&mut k);
    let tables = keep_free - k.zones[Z].free_pages();
    assert!(tables > 0 && tables <= u64::from(n) / 512 + 8, "{tables}");
    let ia = k.zones[Z].lruvec.size(Lru::InactiveAnon);
    let aa = k.zones[Z].lruvec.size(Lru::ActiveAnon);
    let (nr, balance) = get_scan_count(&mut k, Z, &sc_at(3, true));
    assert_eq!(balance, ScanBalance::Anon);
    assert_eq!(nr, [ia >> 3, aa >> 3, 0, 0]);
    // Just above: file + free = high + 1 is no longer ANON.
    for _ in 0..21 + tables {
        let pfn = k.zones[Z].lruvec.lists[Lru::InactiveAnon as usize].tail;
        let mm = k.pages.mapping[pfn as usize] as usize;
        let vpn = k.pages.index[pfn as usize];
        swap::del_page_from_lru_list(&mut k, pfn);
        rmap::page_remove_rmap(&mut k, pfn);
        *k.mms[mm].pte_mut(vpn) = 0;
        k.pages.flags[pfn as usize] = 0;
        crate::mm::page_alloc::free_page(&mut k, pfn);
    }
    crate::mm::page_alloc::drain_all_pages(&mut k);
    assert_eq!(k.zones[Z].free_pages() + 50, high + 1);
    let (_, balance) = get_scan_count(&mut k, Z, &sc_at(3, true));
    assert_ne!(balance, ScanBalance::Anon);
}

#[test]
fn get_scan_count_leaves_anon_alone_while_inactive_file_is_not_low() {
    let w = world(256, "3.9");
    let mut k = w.borrow_mut();
    // inactive file == active file: not low.
    let sizes = [1024, 2048, 1024, 1024];
    fill_lists(&mut k, sizes);
    k.zones[Z].lruvec.recent_scanned = [100, 100];
    let (nr, balance) = get_scan_count(&mut k, Z, &sc_at(4, true));
    assert_eq!(balance, ScanBalance::File);
    assert_eq!(nr, [0, 0, 1024 >> 4, 1024 >> 4]);
    // One more active file page makes it low: FRACT.
    file_pages(&mut k, Lru::ActiveFile, 1);
    let (_, balance) = get_scan_count(&mut k, Z, &sc_at(4, true));
    assert_eq!(balance, ScanBalance::Fract);
}

#[test]
fn get_scan_count_scans_every_list_equally_at_priority_zero() {
    let w = world(256, "3.9");
    let mut k = w.borrow_mut();
    fill_lists(&mut k, FRACT_SIZES);
    k.zones[Z].lruvec.recent_rotated = [500, 0];
    let (nr, balance) = get_scan_count(&mut k, Z, &sc_at(0, false));
    assert_eq!(balance, ScanBalance::Equal);
    assert_eq!(nr, FRACT_SIZES);
    // swappiness 0: no EQUAL, the usual rules (here FRACT with anon weight 0).
    k.vm.swappiness = 0;
    let (nr, balance) = get_scan_count(&mut k, Z, &sc_at(0, false));
    assert_eq!(balance, ScanBalance::Fract);
    assert_eq!(nr[Lru::InactiveAnon as usize], 0);
    assert_eq!(nr[Lru::ActiveAnon as usize], 0);
}

#[test]
fn before_e9868505_anon_is_scanned_however_much_inactive_file_there_is() {
    // 3.0: the lists that leave anon alone in 3.9 get the swappiness split.
    let w = world(256, "3.0");
    let mut k = w.borrow_mut();
    let sizes = [1024, 2048, 1024, 1024];
    fill_lists(&mut k, sizes);
    k.zones[Z].lruvec.recent_scanned = [100, 100];
    let (nr, balance) = get_scan_count(&mut k, Z, &sc_at(4, true));
    assert_eq!(balance, ScanBalance::Fract);
    assert!(nr[Lru::InactiveAnon as usize] > 0, "{nr:?}");
    k.sw.set(Switch::OnlyEvictFileWhenPlenty, true);
    let (nr, balance) = get_scan_count(&mut k, Z, &sc_at(4, true));
    assert_eq!(balance, ScanBalance::File);
    assert_eq!(nr, [0, 0, 1024 >> 4, 1024 >> 4]);
}

#[test]
fn before_fe35004f_the_weights_carry_a_plus_one_and_priority_zero_ignores_swappiness() {
    let w = world(256, "3.0");
    let mut k = w.borrow_mut();
    fill_lists(&mut k, FRACT_SIZES);
    // Fresh statistics: ap = swappiness + 1, fp = 201 - swappiness.
    k.vm.swappiness = 0;
    let (nr, balance) = get_scan_count(&mut k, Z, &sc_at(1, true));
    assert_eq!(balance, ScanBalance::Fract);
    let (ap, fp) = (1u64, 201u64);
    let want = |size: u64| ((size >> 1) as u128 * ap as u128 / (ap + fp + 1) as u128) as u64;
    assert_eq!(nr[Lru::ActiveAnon as usize], want(FRACT_SIZES[1]));
    assert!(
        nr[Lru::ActiveAnon as usize] > 0,
        "swappiness 0 still swaps: {nr:?}"
    );
    // swappiness 100: both weights 101.
    k.vm.swappiness = 100;
    let (nr, _) = get_scan_count(&mut k, Z, &sc_at(1, true));
    let half = |size: u64| ((size >> 1) as u128 * 101 / 203) as u64;
    assert_eq!(nr[Lru::ActiveAnon as usize], half(FRACT_SIZES[1]));
    assert_eq!(nr[Lru::ActiveFile as usize], half(FRACT_SIZES[3]));
    k.vm.swappiness = 0;
    // Priority 0 scans everything alike, swappiness 0 or not.
    let (nr, balance) = get_scan_count(&mut k, Z, &sc_at(0, false));
    assert_eq!(balance, ScanBalance::Equal);
    assert_eq!(nr, FRACT_SIZES);
    // With the commit: weight 0, and no EQUAL at priority 0.
    k.sw.set(Switch::SwappinessZeroAvoidsSwap, true);
    let (nr, balance) = get_scan_count(&mut k, Z, &sc_at(1, true));
    assert_eq!(balance, ScanBalance::Fract);
    assert_eq!(nr[Lru::ActiveAnon as usize], 0);
    let (_, balance) = get_scan_count(&mut k, Z, &sc_at(0, false));
    assert_eq!(balance, ScanBalance::Fract);
}

#[test]
fn get_scan_count_forces_a_minimum_scan_for_kswapd_on_an_unreclaimable_zone() {
    let w = world(256, "3.9");
    let mut k = w.borrow_mut();
    fill_lists(&mut k, [10, 10, 20, 100]);
    let mut sc = sc_at(DEF_PRIORITY, true);
    sc.may_swap = false;
    // Lists far shorter than 4096: nothing to scan at priority 12...
    let (nr, _) = get_scan_count(&mut k, Z, &sc);
    assert_eq!(nr, [0, 0, 0, 0]);
    // ...unless kswapd finds the zone all_unreclaimable: min(size, 32).
    k.zones[Z].all_unreclaimable = true;
    let (nr, balance) = get_scan_count(&mut k, Z, &sc);
    assert_eq!(balance, ScanBalance::File);
    assert_eq!(nr, [0, 0, 20, 32]);
    // Direct reclaim does not force (global reclaim).
    let mut sc = sc_at(DEF_PRIORITY, false);
    sc.may_swap = false;
    let (nr, _) = get_scan_count(&mut k, Z, &sc);
    assert_eq!(nr, [0, 0, 0, 0]);
}

/// 246e87a9 (3.0): kswapd scans 32 pages of every list of a zone whose LRU pages shifted by
/// the priority come under 32, after the balance and whatever the list holds; anon only
/// with swap; not once the zone is large enough at that priority, nor in direct reclaim.
#[test]
fn get_scan_count_of_3_0_forces_32_pages_of_each_list_of_a_small_zone_for_kswapd() {
    let w = world(256, "3.0");
    let mut k = w.borrow_mut();
    assert!(k.sw.on(Switch::ForceScanSmallTargets));
    fill_lists(&mut k, [10, 10, 20, 3000]);
    // 3,040 pages >> 12 = 0 < 32: every list 32, the anon ones too (swap is on).
    let (nr, balance) = get_scan_count(&mut k, Z, &sc_at(DEF_PRIORITY, true));
    assert_eq!(balance, ScanBalance::Fract);
    assert_eq!(nr, [32, 32, 32, 32]);
    // Without swap the anon lists stay at 0.
    let mut sc = sc_at(DEF_PRIORITY, true);
    sc.may_swap = false;
    let (nr, _) = get_scan_count(&mut k, Z, &sc);
    assert_eq!(nr, [0, 0, 32, 32]);
    // At priority 6, 3,040 >> 6 = 47: not small; lists keep their share, 0 where it rounds
    // to 0.
    let (nr, _) = get_scan_count(&mut k, Z, &sc_at(6, true));
    assert_eq!(nr[..3], [0, 0, 0]);
    assert!(nr[Lru::ActiveFile as usize] > 0 && nr[Lru::ActiveFile as usize] < 3000 >> 6);
    // Direct reclaim never forces.
    let (nr, _) = get_scan_count(&mut k, Z, &sc_at(DEF_PRIORITY, false));
    assert_eq!(nr, [0, 0, 0, 0]);
    // Without the switch (3.3's b95a2f2d): kswapd forces only on an unreclaimable zone.
    k.sw.set(Switch::ForceScanSmallTargets, false);
    let (nr, _) = get_scan_count(&mut k, Z, &sc_at(DEF_PRIORITY, true));
    assert_eq!(nr, [0, 0, 0, 0]);
    // Only 3.0's presets carry it.
    for preset in ["3.0", "nowriteback-v3"] {
        assert!(
            switches(preset).on(Switch::ForceScanSmallTargets),
            "{preset}"
        );
    }
    for preset in ["3.9", "3.3.6", "3.6-rc1-akpm", "2.6.37-rc5"] {
        assert!(
            !switches(preset).on(Switch::ForceScanSmallTargets),
            "{preset}"
        );
    }
}

/// 246e87a9's test is the zone's anon plus file pages shifted by the priority, strictly
/// under 32: 128 file pages are small at priority 3 (16), not at priority 2 (32).
#[test]
fn get_scan_count_of_3_0_calls_a_zone_small_below_32_pages_at_the_priority() {
    let w = world(256, "3.0");
    let mut k = w.borrow_mut();
    fill_lists(&mut k, [0, 0, 32, 96]);
    let anon = |nr: [u64; 4]| [nr[Lru::InactiveAnon as usize], nr[Lru::ActiveAnon as usize]];
    let (nr, _) = get_scan_count(&mut k, Z, &sc_at(2, true));
    assert_eq!(anon(nr), [0, 0], "128 >> 2 = 32: not small");
    let (nr, _) = get_scan_count(&mut k, Z, &sc_at(3, true));
    assert_eq!(
        anon(nr),
        [32, 32],
        "128 >> 3 = 16: small, the empty anon lists forced"
    );
}

// ---------------------------------------------------------------------------------------
// 2. page_check_references (§3.8)

#[test]
fn page_check_references_activates_young_anon_and_clears_the_young_bit() {
    let w = world(256, "3.9");
    let mut k = w.borrow_mut();
    let (_, _, young) = anon_pages(&mut k, Lru::InactiveAnon, 1, true, 0);
    let p = young[0];
    assert!(pte_of(&k, p) & PTE_YOUNG != 0);
    assert_eq!(page_check_references(&mut k, p), PageReferences::Activate);
    assert_eq!(
        pte_of(&k, p) & PTE_YOUNG,
        0,
        "the young bit is cleared by the check"
    );
    // Looked at again without a new access: nothing references it.
    assert_eq!(page_check_references(&mut k, p), PageReferences::Reclaim);
}

#[test]
fn page_check_references_reclaims_unreferenced_and_locked_anon() {
    let w = world(256, "3.9");
    let mut k = w.borrow_mut();
    // Mapped, young bit clear.
    let (_, _, old) = anon_pages(&mut k, Lru::InactiveAnon, 1, false, 0);
    assert_eq!(
        page_check_references(&mut k, old[0]),
        PageReferences::Reclaim
    );
    // Not mapped at all (a swap-cache page whose PTE is gone).
    let unmapped = take_page(&mut k);
    k.pages.flags[unmapped as usize] = PG_SWAPBACKED | PG_UPTODATE;
    swap::add_page_to_lru_list(&mut k, unmapped, Lru::InactiveAnon);
    assert_eq!(
        page_check_references(&mut k, unmapped),
        PageReferences::Reclaim
    );
    // PG_referenced on a swap-backed page does not make it RECLAIM_CLEAN.
    k.pages.set(unmapped, PG_REFERENCED);
    assert_eq!(
        page_check_references(&mut k, unmapped),
        PageReferences::Reclaim
    );
    assert!(
        !k.pages.test(unmapped, PG_REFERENCED),
        "PG_referenced is test-and-cleared"
    );
    // VM_LOCKED: reclaim (try_to_unmap culls it), even though the PTE is young.
    let (_, _, locked) = anon_pages(&mut k, Lru::InactiveAnon, 1, true, VM_LOCKED);
    assert_eq!(
        page_check_references(&mut k, locked[0]),
        PageReferences::Reclaim
    );
}

/// Map page-cache page `pfn` (index 0 of its file) shared into a new mm whose mapping has
/// `vm_flags`, in the state a read fault leaves it (young if `young`). Returns (mm, vpn).
fn map_file_page(k: &mut Kernel, pfn: Pfn, young: bool, vm_flags: u32) -> (usize, u32) {
    let ino = k.pages.mapping[pfn as usize] as usize;
    k.mms.push(Mm::default());
    let mm = k.mms.len() - 1;
    let vpn = memory::mmap_file(k, mm, ino, 0, 1, vm_flags);
    assert!(memory::pgtable_alloc_now(k, mm, vpn));
    *k.mms[mm].pte_mut(vpn) = PTE_PRESENT | if young { PTE_YOUNG } else { 0 } | pfn;
    k.mms[mm].file_rss += 1;
    rmap::page_add_file_rmap(k, pfn);
    (mm, vpn)
}

/// A page-cache page on `lru`, mapped by one mm. Returns (page, mm, vpn).
fn mapped_file_page(k: &mut Kernel, lru: Lru, young: bool, vm_flags: u32) -> (Pfn, usize, u32) {
    let pfn = file_pages(k, lru, 1)[0];
    let (mm, vpn) = map_file_page(k, pfn, young, vm_flags);
    assert!(k.pages.is_file_cache(pfn) && k.pages.mapped(pfn));
    (pfn, mm, vpn)
}

#[test]
fn page_check_references_gives_file_pages_a_second_trip() {
    let w = world(256, "3.9");
    let mut k = w.borrow_mut();
    // Referenced once: KEEP, and PG_referenced is set for next time.
    let (p, mm, vpn) = mapped_file_page(&mut k, Lru::InactiveFile, true, 0);
    assert_eq!(page_check_references(&mut k, p), PageReferences::Keep);
    assert!(k.pages.test(p, PG_REFERENCED));
    assert_eq!(k.mms[mm].pte(vpn) & PTE_YOUNG, 0);
    // Referenced again on the second look (PG_referenced + young): ACTIVATE.
    *k.mms[mm].pte_mut(vpn) |= PTE_YOUNG;
    assert_eq!(page_check_references(&mut k, p), PageReferences::Activate);
    // PG_referenced only (use-once page cache): RECLAIM_CLEAN, and the flag is consumed.
    k.pages.set(p, PG_REFERENCED);
    assert_eq!(
        page_check_references(&mut k, p),
        PageReferences::ReclaimClean
    );
    assert!(!k.pages.test(p, PG_REFERENCED));
    // Neither: RECLAIM.
    assert_eq!(page_check_references(&mut k, p), PageReferences::Reclaim);
    // Unmapped page cache with PG_referenced: RECLAIM_CLEAN.
    let f = file_pages(&mut k, Lru::InactiveFile, 1)[0];
    k.pages.set(f, PG_REFERENCED);
    assert_eq!(
        page_check_references(&mut k, f),
        PageReferences::ReclaimClean
    );
    // An executable mapping is activated on first use.
    let (x, _, _) = mapped_file_page(&mut k, Lru::InactiveFile, true, VM_EXEC);
    assert_eq!(page_check_references(&mut k, x), PageReferences::Activate);
    invariants::check(&k).unwrap();
}

/// §3.8 `refs > 1`: a file page young in two mappings at once is activated on the first look;
/// the walk clears both young bits.
#[test]
fn page_check_references_activates_a_file_page_shared_by_two_young_mappings() {
    let w = world(256, "3.9");
    let mut k = w.borrow_mut();
    let (p, mm1, vpn1) = mapped_file_page(&mut k, Lru::InactiveFile, true, 0);
    let (mm2, vpn2) = map_file_page(&mut k, p, true, 0);
    assert_eq!(k.pages.mapcount(p), 2);
    assert_eq!(k.global_stat(ZoneStat::nr_mapped), 1, "counted once");
    assert_eq!(
        rmap::page_referenced(&mut k, p),
        (2, memory::VM_SHARED),
        "two references; the flags of the referencing mappings"
    );
    *k.mms[mm1].pte_mut(vpn1) |= PTE_YOUNG;
    *k.mms[mm2].pte_mut(vpn2) |= PTE_YOUNG;
    assert_eq!(page_check_references(&mut k, p), PageReferences::Activate);
    assert_eq!(k.mms[mm1].pte(vpn1) & PTE_YOUNG, 0);
    assert_eq!(k.mms[mm2].pte(vpn2) & PTE_YOUNG, 0);
    // Only one young mapping, and an executable one that is not young: its VM_EXEC does not
    // count (the flags come from the mappings that referenced the page).
    let (q, _, _) = mapped_file_page(&mut k, Lru::InactiveFile, true, 0);
    map_file_page(&mut k, q, false, VM_EXEC);
    assert_eq!(page_check_references(&mut k, q), PageReferences::Keep);
    invariants::check(&k).unwrap();
}

/// §4.1: a clean mapped file page used once gets one more trip on the inactive list; on the
/// next look, unreferenced, it is unmapped (`try_to_unmap`) and freed.
#[test]
fn shrink_page_list_keeps_a_mapped_file_page_once_then_unmaps_and_frees_it() {
    let w = world(0, "3.9");
    let (p, mm, vpn) = mapped_file_page(&mut w.borrow_mut(), Lru::InactiveFile, true, 0);
    let ino = w.borrow().pages.mapping[p as usize] as usize;
    for pass in 0..2 {
        let mut list = isolate_all(&mut w.borrow_mut(), &[p]);
        let w2 = w.clone();
        let freed = Rc::new(Cell::new(0));
        let f2 = freed.clone();
        run_task(&w, SEC, async move {
            let mut sc = sc_at(DEF_PRIORITY, true);
            let mut st = PageListStats::default();
            f2.set(shrink_page_list(&w2, Z, &mut sc, &mut list, &mut st).await);
            putback_inactive_pages(&mut w2.borrow_mut(), Z, &list);
        });
        let k = w.borrow();
        if pass == 0 {
            assert_eq!(freed.get(), 0, "kept for a second trip");
            assert!(k.pages.mapped(p) && k.pages.test(p, PG_REFERENCED));
            assert_eq!(k.pages.lru(p), Lru::InactiveFile);
        } else {
            assert_eq!(freed.get(), 1);
            assert_eq!(k.mms[mm].pte(vpn), 0, "unmapped");
            assert_eq!(k.mms[mm].file_rss, 0);
            assert_eq!(k.inodes[ino].find_page(0), None);
            assert_eq!(k.global_stat(ZoneStat::nr_mapped), 0);
        }
        invariants::check(&k).unwrap();
    }
}

#[test]
fn direct_reclaim_that_finds_nothing_to_scan_still_takes_cpu_time() {
    // No page on any LRU: every priority shrinks every populated zone and calls the
    // shrinkers, and finds nothing; the pass reports progress (no zone is all_unreclaimable
    // yet) and must have taken time, or an allocation retrying it would spin at one instant.
    let w = world(0, "3.9");
    let zones = {
        let k = w.borrow();
        (0..k.zones.len())
            .filter(|&z| k.zones[z].populated())
            .count() as u64
    };
    let out = Rc::new(Cell::new((0, 0)));
    let (w2, out2) = (w.clone(), out.clone());
    run_task(&w, SEC, async move {
        let start = w2.borrow().sched.now();
        let progress = try_to_free_pages(&w2, Gfp::HIGHUSER_MOVABLE, 0).await;
        out2.set((progress, w2.borrow().sched.now() - start));
    });
    let (progress, took) = out.get();
    assert_eq!(progress, 1);
    assert!(took > 0);
    assert_eq!(w.borrow().events.get(VmEvent::allocstall), 1);
    let priorities = DEF_PRIORITY as u64 + 1;
    assert!(
        took >= priorities * zones * SHRINK_LRUVEC_NS,
        "a fruitless direct reclaim took {took} ns over {zones} zones"
    );
}

/// §4.1: direct reclaim unmaps an old mapped page whose PTE is dirty; the PTE's dirty bit goes
/// to the page, which is left to the flushers with PG_reclaim (direct reclaim never writes
/// file pages).
#[test]
fn direct_reclaim_unmaps_a_dirty_mapped_file_page_and_leaves_it_to_the_flushers() {
    let w = world(0, "3.9");
    // The file's device, for its dirty accounting.
    crate::sim::add_test_disk(&w, "sda", "ext4");
    let (p, mm, vpn) = mapped_file_page(&mut w.borrow_mut(), Lru::InactiveFile, false, 0);
    // Stored to through a writable PTE: dirty in the PTE only, until the unmap.
    *w.borrow_mut().mms[mm].pte_mut(vpn) |= PTE_DIRTY;
    let mut list = isolate_all(&mut w.borrow_mut(), &[p]);
    let w2 = w.clone();
    run_task(&w, SEC, async move {
        let mut sc = sc_at(DEF_PRIORITY, false);
        let mut st = PageListStats::default();
        assert_eq!(
            shrink_page_list(&w2, Z, &mut sc, &mut list, &mut st).await,
            0
        );
        let mut k = w2.borrow_mut();
        putback_inactive_pages(&mut k, Z, &list);
        // Checked before the flusher, which the dirtying woke, gets to run.
        assert_eq!(k.mms[mm].pte(vpn), 0);
        assert!(k.pages.test(p, PG_DIRTY) && k.pages.test(p, PG_RECLAIM));
        assert_eq!(k.global_stat(ZoneStat::nr_dirty), 1);
        assert_eq!(k.global_stat(ZoneStat::nr_vmscan_immediate_reclaim), 1);
        assert_eq!(k.global_stat(ZoneStat::nr_vmscan_write), 0);
        invariants::check(&k).unwrap();
    });
    invariants::check(&w.borrow()).unwrap();
}

// ---------------------------------------------------------------------------------------
// 3. shrink_active_list (§3.7)

#[test]
fn shrink_active_list_deactivates_anon_pages_and_counts_referenced_ones_as_rotated() {
    let w = world(256, "3.9");
    let mut k = w.borrow_mut();
    let (_, _, old_inactive) = anon_pages(&mut k, Lru::InactiveAnon, 3, false, 0);
    let (_, _, unreferenced) = anon_pages(&mut k, Lru::ActiveAnon, 8, false, 0);
    let (_, _, referenced) = anon_pages(&mut k, Lru::ActiveAnon, 4, true, 0);
    let rs = k.zones[Z].lruvec.recent_scanned;
    let rr = k.zones[Z].lruvec.recent_rotated;
    let deact = k.events.get(VmEvent::pgdeactivate);
    let refill = k.events.get(VmEvent::pgrefill_dma32);
    let scanned = k.zones[Z].pages_scanned;
    let mut sc = sc_at(DEF_PRIORITY, true);
    shrink_active_list(&mut k, 32, Z, Lru::ActiveAnon, &mut sc);
    let moved = (unreferenced.len() + referenced.len()) as u64;
    assert_eq!(k.events.get(VmEvent::pgdeactivate) - deact, moved);
    assert_eq!(
        k.events.get(VmEvent::pgrefill_dma32) - refill,
        moved,
        "pgrefill per scanned page"
    );
    assert_eq!(k.zones[Z].pages_scanned - scanned, moved);
    assert_eq!(k.zones[Z].lruvec.recent_scanned, [rs[0] + moved, rs[1]]);
    assert_eq!(
        k.zones[Z].lruvec.recent_rotated,
        [rr[0] + referenced.len() as u64, rr[1]]
    );
    assert_eq!(k.zones[Z].lruvec.size(Lru::ActiveAnon), 0);
    assert_eq!(k.zones[Z].stat(ZoneStat::nr_isolated_anon), 0);
    // Moved to the head of the inactive list; the pages already there stay at the tail.
    let inactive: Vec<Pfn> = k.zones[Z].lruvec.lists[Lru::InactiveAnon as usize]
        .iter(&k.pages)
        .collect();
    let mut head: Vec<Pfn> = inactive[..moved as usize].to_vec();
    let mut want: Vec<Pfn> = unreferenced.iter().chain(&referenced).copied().collect();
    head.sort_unstable();
    want.sort_unstable();
    assert_eq!(head, want);
    assert_eq!(
        &inactive[moved as usize..],
        &old_inactive.iter().rev().copied().collect::<Vec<_>>()[..]
    );
    for &p in &want {
        assert!(!k.pages.test(p, PG_ACTIVE));
        assert_eq!(k.pages.lru(p), Lru::InactiveAnon);
        assert_eq!(pte_of(&k, p) & PTE_YOUNG, 0);
    }
    invariants::check(&k).unwrap();
}

#[test]
fn shrink_active_list_keeps_referenced_executable_file_pages_active() {
    let w = world(256, "3.9");
    let mut k = w.borrow_mut();
    let (exec, _, _) = mapped_file_page(&mut k, Lru::ActiveFile, true, VM_EXEC);
    // Executable but not referenced since the last look: deactivated like any page.
    let (idle_exec, _, _) = mapped_file_page(&mut k, Lru::ActiveFile, false, VM_EXEC);
    // Referenced, not executable: deactivated, counted as rotated.
    let (data, _, _) = mapped_file_page(&mut k, Lru::ActiveFile, true, 0);
    // An active unmapped page-cache page: PG_referenced is not looked at here.
    let cache = file_pages(&mut k, Lru::ActiveFile, 1)[0];
    k.pages.set(cache, PG_REFERENCED);
    let rr = k.zones[Z].lruvec.recent_rotated;
    let deact = k.events.get(VmEvent::pgdeactivate);
    let mut sc = sc_at(DEF_PRIORITY, true);
    shrink_active_list(&mut k, 32, Z, Lru::ActiveFile, &mut sc);
    assert_eq!(k.pages.lru(exec), Lru::ActiveFile);
    assert!(k.pages.test(exec, PG_ACTIVE));
    for p in [idle_exec, data, cache] {
        assert_eq!(k.pages.lru(p), Lru::InactiveFile);
    }
    assert_eq!(k.events.get(VmEvent::pgdeactivate) - deact, 3);
    assert_eq!(k.zones[Z].lruvec.recent_rotated, [rr[0], rr[1] + 2]);
    assert_eq!(k.events.get(VmEvent::pgrefill_dma32), 4);
    invariants::check(&k).unwrap();
}

// ---------------------------------------------------------------------------------------
// 4. inactive_{anon,file}_is_low (§3.5)

#[test]
fn inactive_anon_is_low_uses_the_zone_ratio_and_needs_swap() {
    let w = world(256, "3.9");
    let mut k = w.borrow_mut();
    anon_pages(&mut k, Lru::InactiveAnon, 100, false, 0);
    anon_pages(&mut k, Lru::ActiveAnon, 300, false, 0);
    k.zones[Z].inactive_ratio = 3;
    assert!(!inactive_anon_is_low(&k, Z, 0), "100 x 3 == 300 is not low");
    anon_pages(&mut k, Lru::ActiveAnon, 1, false, 0);
    assert!(inactive_anon_is_low(&k, Z, 0), "100 x 3 < 301");
    k.zones[Z].inactive_ratio = 4;
    assert!(!inactive_anon_is_low(&k, Z, 0), "100 x 4 >= 301");
    drop(k);

    let w = world(0, "3.9");
    let mut k = w.borrow_mut();
    anon_pages(&mut k, Lru::InactiveAnon, 1, false, 0);
    anon_pages(&mut k, Lru::ActiveAnon, 100, false, 0);
    assert!(!inactive_anon_is_low(&k, Z, 0), "never low without swap");
}

#[test]
fn inactive_file_is_low_when_active_exceeds_inactive() {
    let w = world(256, "3.9");
    let mut k = w.borrow_mut();
    file_pages(&mut k, Lru::InactiveFile, 50);
    file_pages(&mut k, Lru::ActiveFile, 50);
    assert!(!inactive_file_is_low(&k, Z, 0));
    file_pages(&mut k, Lru::ActiveFile, 1);
    assert!(inactive_file_is_low(&k, Z, 0));
}

/// §3.5: `inactive_list_is_low` asks the file rule for the file lists and the anon rule for
/// the anon lists.
#[test]
fn inactive_list_is_low_picks_the_rule_of_the_list() {
    let w = world(256, "3.9");
    let mut k = w.borrow_mut();
    file_pages(&mut k, Lru::ActiveFile, 2);
    file_pages(&mut k, Lru::InactiveFile, 1);
    anon_pages(&mut k, Lru::InactiveAnon, 10, false, 0);
    anon_pages(&mut k, Lru::ActiveAnon, 1, false, 0);
    assert!(inactive_list_is_low(&k, Z, 0, true));
    assert!(!inactive_list_is_low(&k, Z, 0, false));
    let more = 10 * k.zones[Z].inactive_ratio as u32;
    anon_pages(&mut k, Lru::ActiveAnon, more, false, 0);
    file_pages(&mut k, Lru::InactiveFile, 5);
    assert!(!inactive_list_is_low(&k, Z, 0, true));
    assert!(inactive_list_is_low(&k, Z, 0, false));
}

// ---------------------------------------------------------------------------------------
// 5. zone_balanced, pgdat_balanced, balance_gap (§2.5)

/// Set a zone's high watermark so that it is just balanced for `order` (`free - (2^order -
/// 1) > high`) or just not.
fn set_balanced_order(k: &mut Kernel, zi: usize, order: u32, balanced: bool) {
    let free = k.zones[zi].free_pages();
    k.zones[zi].watermark[WMARK_HIGH] = free - (1 << order) + 1 - balanced as u64;
}

fn set_balanced(k: &mut Kernel, zi: usize, balanced: bool) {
    set_balanced_order(k, zi, 0, balanced);
}

#[test]
fn balance_gap_is_the_smaller_of_low_and_one_percent() {
    let w = world(256, "3.9");
    let mut k = w.borrow_mut();
    for zi in [ZONE_DMA, ZONE_DMA32] {
        let managed = k.zones[zi].managed_pages;
        let pct = managed.div_ceil(100);
        k.zones[zi].watermark[WMARK_LOW] = pct + 5;
        assert_eq!(balance_gap(&k, zi), pct);
        k.zones[zi].watermark[WMARK_LOW] = pct - 1;
        assert_eq!(balance_gap(&k, zi), pct - 1);
    }
    // Rounded up: 101 managed pages is a gap of 2.
    k.zones[ZONE_DMA].managed_pages = 101;
    k.zones[ZONE_DMA].watermark[WMARK_LOW] = 1000;
    assert_eq!(balance_gap(&k, ZONE_DMA), 2);
}

#[test]
fn zone_balanced_needs_free_above_high_plus_gap_and_reserve() {
    let w = world(256, "3.9");
    let mut k = w.borrow_mut();
    let free = k.zones[Z].free_pages();
    k.zones[Z].watermark[WMARK_HIGH] = free - 11;
    assert!(zone_balanced(&k, Z, 0, 10, Z), "free = high + gap + 1");
    assert!(!zone_balanced(&k, Z, 0, 11, Z), "free = high + gap");
    // The DMA zone honours its lowmem reserve against a DMA32 class zone.
    let dma_free = k.zones[ZONE_DMA].free_pages();
    let reserve = k.zones[ZONE_DMA].lowmem_reserve[ZONE_DMA32];
    assert!(reserve > 0);
    k.zones[ZONE_DMA].watermark[WMARK_HIGH] = dma_free - reserve - 1;
    assert!(zone_balanced(&k, ZONE_DMA, 0, 0, ZONE_DMA32));
    k.zones[ZONE_DMA].watermark[WMARK_HIGH] = dma_free - reserve;
    assert!(!zone_balanced(&k, ZONE_DMA, 0, 0, ZONE_DMA32));
    assert!(zone_balanced(&k, ZONE_DMA, 0, 0, ZONE_DMA));
}

#[test]
fn pgdat_balanced_at_order_0_needs_every_zone_but_skips_unreclaimable_ones() {
    let w = world(256, "3.9");
    let mut k = w.borrow_mut();
    let top = ZONE_NORMAL; // unpopulated on this machine: skipped
    assert!(!k.zones[ZONE_NORMAL].populated());
    set_balanced(&mut k, ZONE_DMA, true);
    set_balanced(&mut k, ZONE_DMA32, true);
    assert!(pgdat_balanced(&k, 0, top));
    set_balanced(&mut k, ZONE_DMA, false);
    assert!(
        !pgdat_balanced(&k, 0, top),
        "one unbalanced zone is enough at order 0"
    );
    assert!(!pgdat_balanced(&k, 0, ZONE_DMA));
    k.zones[ZONE_DMA].all_unreclaimable = true;
    assert!(
        pgdat_balanced(&k, 0, top),
        "an unreclaimable zone counts as balanced"
    );
    k.zones[ZONE_DMA].all_unreclaimable = false;
    // Zones above the class zone are not looked at.
    set_balanced(&mut k, ZONE_DMA, true);
    set_balanced(&mut k, ZONE_DMA32, false);
    assert!(pgdat_balanced(&k, 0, ZONE_DMA));
    assert!(!pgdat_balanced(&k, 0, ZONE_DMA32));
}

#[test]
fn pgdat_balanced_at_high_order_needs_a_quarter_of_the_pages() {
    let w = world(256, "3.9");
    let mut k = w.borrow_mut();
    let dma = k.zones[ZONE_DMA].managed_pages;
    let dma32 = k.zones[ZONE_DMA32].managed_pages;
    assert!(dma32 >= (dma + dma32) / 4 && dma < (dma + dma32) / 4);
    // DMA32 (more than a quarter) balanced, DMA not: balanced at order 1.
    set_balanced_order(&mut k, ZONE_DMA, 1, false);
    set_balanced_order(&mut k, ZONE_DMA32, 1, true);
    assert!(zone_balanced(&k, ZONE_DMA32, 1, 0, ZONE_DMA32));
    assert!(!zone_balanced(&k, ZONE_DMA, 1, 0, ZONE_DMA));
    assert!(pgdat_balanced(&k, 1, ZONE_NORMAL));
    // DMA (less than a quarter) balanced, DMA32 not: unbalanced.
    set_balanced_order(&mut k, ZONE_DMA, 1, true);
    set_balanced_order(&mut k, ZONE_DMA32, 1, false);
    assert!(!pgdat_balanced(&k, 1, ZONE_NORMAL));
    // Unless DMA32 is unreclaimable.
    k.zones[ZONE_DMA32].all_unreclaimable = true;
    assert!(pgdat_balanced(&k, 1, ZONE_NORMAL));
}

/// §2.9: a zone stays reclaimable while it has been scanned fewer than six times its
/// reclaimable pages (file lists, plus the anon lists while swap has a free slot) since a
/// page was last freed in it. The comparison is strict.
#[test]
fn zone_reclaimable_until_scanned_six_times_its_file_and_swappable_anon_pages() {
    let w = world(256, "3.9");
    let mut k = w.borrow_mut();
    file_pages(&mut k, Lru::InactiveFile, 10);
    file_pages(&mut k, Lru::ActiveFile, 5);
    anon_pages(&mut k, Lru::InactiveAnon, 7, false, 0);
    anon_pages(&mut k, Lru::ActiveAnon, 3, false, 0);
    assert!(k.swap.nr_free() > 0);
    assert_eq!(zone_reclaimable_pages(&k, Z), 15 + 10);
    k.zones[Z].pages_scanned = 6 * 25 - 1;
    assert!(zone_reclaimable(&k, Z));
    k.zones[Z].pages_scanned = 6 * 25;
    assert!(!zone_reclaimable(&k, Z), "scanned exactly six times over");
    k.zones[Z].pages_scanned = 0;
    assert!(zone_reclaimable(&k, Z));

    // Swap present but without a free slot: the anon lists no longer count.
    let total = k.swap.total() as u32;
    k.swap.inuse_pages = total;
    assert_eq!(k.swap.nr_free(), 0);
    assert_eq!(zone_reclaimable_pages(&k, Z), 15);
    k.zones[Z].pages_scanned = 6 * 15 - 1;
    assert!(zone_reclaimable(&k, Z));
    k.zones[Z].pages_scanned = 6 * 15;
    assert!(!zone_reclaimable(&k, Z));
    // One slot freed: they count again.
    k.swap.inuse_pages = total - 1;
    assert_eq!(zone_reclaimable_pages(&k, Z), 25);
    assert!(zone_reclaimable(&k, Z));
    drop(k);

    // No swap at all: file pages only; a zone with nothing reclaimable never is.
    let w = world(0, "3.9");
    let mut k = w.borrow_mut();
    assert_eq!(zone_reclaimable_pages(&k, Z), 0);
    assert!(!zone_reclaimable(&k, Z), "0 scanned is not fewer than 0");
    anon_pages(&mut k, Lru::InactiveAnon, 4, false, 0);
    file_pages(&mut k, Lru::InactiveFile, 2);
    assert_eq!(zone_reclaimable_pages(&k, Z), 2);
    k.zones[Z].pages_scanned = 11;
    assert!(zone_reclaimable(&k, Z));
    k.zones[Z].pages_scanned = 12;
    assert!(!zone_reclaimable(&k, Z));
}

/// §3.2 (`throttle_direct_reclaim`, 3.6+): the watermark is met while the free pages of
/// the zones up to Normal are strictly more than half their summed min watermarks; when it
/// is not, a sleeping kswapd is woken.
#[test]
fn pfmemalloc_watermark_needs_half_the_min_watermarks_free_and_wakes_kswapd() {
    let w = world(256, "3.9");
    Executor::new(w.clone()).run_until(SEC, |_| false);
    let mut k = w.borrow_mut();
    let q = k.wq.kswapd_wait;
    assert!(k.pgdat.kswapd_sleeping && k.sched.queue_has_waiters(q));
    // Every zone up to Normal counts (Normal is given a watermark and free pages here).
    k.zones[ZONE_NORMAL].watermark[WMARK_MIN] = 1_000;
    let reserve: u64 = k.zones.iter().map(|z| z.min_wmark()).sum();
    let half = reserve / 2;
    let set_free = |k: &mut Kernel, dma32: u64| {
        for (zi, free) in [(ZONE_DMA, 10), (ZONE_DMA32, dma32), (ZONE_NORMAL, 100)] {
            k.zones[zi].vm_stat[ZoneStat::nr_free_pages as usize] = free as i64;
        }
    };
    set_free(&mut k, half - 110 + 1);
    assert!(pfmemalloc_watermark_ok(&mut k), "half + 1 free");
    assert!(k.sched.queue_has_waiters(q), "no wake-up while it is met");
    set_free(&mut k, half - 110);
    assert!(!pfmemalloc_watermark_ok(&mut k), "exactly half free");
    assert!(!k.sched.queue_has_waiters(q), "kswapd was woken");
}

// ---------------------------------------------------------------------------------------
// 6. Stall decisions after shrink_page_list (§4.5, seed 000)

const TAKEN: u64 = 32;

fn decide(
    k: &mut Kernel,
    priority: i32,
    kswapd: bool,
    st: PageListStats,
) -> (bool, Option<Nanos>, u8) {
    k.zones[Z].flags = 0;
    let sc = sc_at(priority, kswapd);
    let (stall, wait) = stall_decisions(k, Z, &sc, &st, TAKEN);
    (stall, wait, k.zones[Z].flags)
}

fn wb(n: u64) -> PageListStats {
    PageListStats {
        nr_writeback: n,
        ..Default::default()
    }
}

fn unqueued(n: u64) -> PageListStats {
    PageListStats {
        nr_dirty: n,
        nr_unqueued_dirty: n,
        ..Default::default()
    }
}

#[test]
fn stall_decisions_of_3_9_throttle_on_writeback_scaled_by_priority() {
    let w = world(256, "3.9");
    let mut k = w.borrow_mut();
    k.sw = switches("3.9");
    for kswapd in [true, false] {
        // Priority 12: every isolated page must be under writeback.
        assert_eq!(
            decide(&mut k, 12, kswapd, wb(TAKEN)),
            (false, Some(HZ_10), 0)
        );
        assert_eq!(decide(&mut k, 12, kswapd, wb(TAKEN - 1)), (false, None, 0));
        // Priority 11: half; priority 10: a quarter.
        assert_eq!(
            decide(&mut k, 11, kswapd, wb(TAKEN / 2)),
            (false, Some(HZ_10), 0)
        );
        assert_eq!(
            decide(&mut k, 11, kswapd, wb(TAKEN / 2 - 1)),
            (false, None, 0)
        );
        assert_eq!(
            decide(&mut k, 10, kswapd, wb(TAKEN / 4)),
            (false, Some(HZ_10), 0)
        );
        assert_eq!(
            decide(&mut k, 10, kswapd, wb(TAKEN / 4 - 1)),
            (false, None, 0)
        );
        // Priority 6 and below: any page under writeback.
        assert_eq!(decide(&mut k, 6, kswapd, wb(1)), (false, Some(HZ_10), 0));
        assert_eq!(decide(&mut k, 0, kswapd, wb(0)), (false, None, 0));
        // No zone flags and no congestion_wait for dirty pages in 3.9; ZONE_CONGESTED is
        // decided in shrink_page_list there.
        let all = PageListStats {
            nr_dirty: TAKEN,
            nr_unqueued_dirty: TAKEN,
            nr_congested: TAKEN,
            nr_writeback: 0,
            nr_immediate: 0,
        };
        assert_eq!(decide(&mut k, 12, kswapd, all), (false, None, 0));
    }
}

#[test]
fn stall_decisions_of_lessdisrupt_flag_the_zone_and_stall_after_the_list() {
    let w = world(256, "lessdisrupt-v7r10");
    let mut k = w.borrow_mut();
    k.sw = switches("lessdisrupt-v7r10");
    for kswapd in [true, false] {
        // The scaled writeback test only sets ZONE_WRITEBACK (LD patch 5): no wait.
        assert_eq!(
            decide(&mut k, 12, kswapd, wb(TAKEN)),
            (false, None, ZONE_WRITEBACK)
        );
        assert_eq!(decide(&mut k, 12, kswapd, wb(TAKEN - 1)), (false, None, 0));
        assert_eq!(
            decide(&mut k, 10, kswapd, wb(TAKEN / 4)),
            (false, None, ZONE_WRITEBACK)
        );
        assert_eq!(
            decide(&mut k, 10, kswapd, wb(TAKEN / 4 - 1)),
            (false, None, 0)
        );
        // A whole batch of unqueued dirty pages: ZONE_TAIL_LRU_DIRTY and congestion_wait, at
        // any priority (no scaling).
        assert_eq!(
            decide(&mut k, 12, kswapd, unqueued(TAKEN)),
            (true, None, ZONE_TAIL_LRU_DIRTY)
        );
        assert_eq!(
            decide(&mut k, 4, kswapd, unqueued(TAKEN - 1)),
            (false, None, 0)
        );
        // nr_immediate: congestion_wait without the flag.
        let imm = PageListStats {
            nr_immediate: 1,
            ..Default::default()
        };
        assert_eq!(decide(&mut k, 12, kswapd, imm), (true, None, 0));
        // ZONE_CONGESTED when every dirty page was congested.
        let cong = PageListStats {
            nr_dirty: 5,
            nr_congested: 5,
            ..Default::default()
        };
        assert_eq!(
            decide(&mut k, 12, kswapd, cong),
            (false, None, ZONE_CONGESTED)
        );
        let partly = PageListStats {
            nr_dirty: 5,
            nr_congested: 4,
            ..Default::default()
        };
        assert_eq!(decide(&mut k, 12, kswapd, partly), (false, None, 0));
        assert_eq!(
            decide(&mut k, 12, kswapd, PageListStats::default()),
            (false, None, 0)
        );
    }
}

#[test]
fn stall_decisions_of_mmotm_flag_tail_dirty_by_the_scaled_unqueued_test() {
    let w = world(256, "mmotm-20130522");
    let mut k = w.borrow_mut();
    k.sw = switches("mmotm-20130522");
    for kswapd in [true, false] {
        assert_eq!(
            decide(&mut k, 12, kswapd, unqueued(TAKEN)),
            (false, None, ZONE_TAIL_LRU_DIRTY)
        );
        assert_eq!(
            decide(&mut k, 12, kswapd, unqueued(TAKEN - 1)),
            (false, None, 0)
        );
        assert_eq!(
            decide(&mut k, 11, kswapd, unqueued(TAKEN / 2)),
            (false, None, ZONE_TAIL_LRU_DIRTY)
        );
        assert_eq!(
            decide(&mut k, 10, kswapd, unqueued(TAKEN / 4)),
            (false, None, ZONE_TAIL_LRU_DIRTY)
        );
        assert_eq!(
            decide(&mut k, 10, kswapd, unqueued(TAKEN / 4 - 1)),
            (false, None, 0)
        );
        assert_eq!(decide(&mut k, 0, kswapd, unqueued(0)), (false, None, 0));
        // The writeback throttle still waits (ZONE_WRITEBACK is set after the wait, by the
        // caller: KS without LD patch 4).
        assert_eq!(
            decide(&mut k, 12, kswapd, wb(TAKEN)),
            (false, Some(HZ_10), 0)
        );
        // No congestion_wait on nr_immediate or dirty pages before LD.
        let imm = PageListStats {
            nr_immediate: 3,
            ..Default::default()
        };
        assert_eq!(decide(&mut k, 12, kswapd, imm), (false, None, 0));
    }
}

/// §4.9 patch 3 on its own (LD without patch 2, a custom switch set): the nr_immediate
/// stall does not depend on the dirty-page accounting of patch 2. With patch 2 off, the
/// tail-dirty flag keeps KS's priority-scaled test and brings no stall.
#[test]
fn stall_decisions_without_stall_on_dirty_still_stall_on_immediate_pages() {
    let w = world(256, "lessdisrupt-v7r10");
    let mut k = w.borrow_mut();
    let mut sw = switches("lessdisrupt-v7r10");
    sw.set(Switch::StallOnDirtyEncountered, false);
    k.sw = sw;
    let imm = |n| PageListStats {
        nr_immediate: n,
        ..Default::default()
    };
    for kswapd in [true, false] {
        assert_eq!(decide(&mut k, 12, kswapd, imm(1)), (true, None, 0));
        assert_eq!(decide(&mut k, 3, kswapd, imm(TAKEN)), (true, None, 0));
        assert_eq!(decide(&mut k, 12, kswapd, imm(0)), (false, None, 0));
        // KS patch 6's scaled test sets the flag; no congestion_wait for dirty pages.
        assert_eq!(
            decide(&mut k, 10, kswapd, unqueued(TAKEN / 4)),
            (false, None, ZONE_TAIL_LRU_DIRTY)
        );
        assert_eq!(
            decide(&mut k, 10, kswapd, unqueued(TAKEN / 4 - 1)),
            (false, None, 0)
        );
    }
    // Patch 3 off as well: no stall at all.
    sw.set(Switch::StallAfterPageList, false);
    k.sw = sw;
    assert_eq!(decide(&mut k, 12, true, imm(5)), (false, None, 0));
}

// ---------------------------------------------------------------------------------------
// 7. shrink_page_list on a booted kernel (§4.1, §4.2, §4.4, §4.10)

const N: u32 = 8;

/// Fault `N` anonymous pages in, age them onto the inactive anon list (which clears their
/// young bits), and isolate them. Returns the pages and the list.
async fn faulted_and_isolated(w: &World) -> (Vec<Pfn>, PageList) {
    let (mm, start) = {
        let mut k = w.borrow_mut();
        k.mms.push(Mm::default());
        let mm = k.mms.len() - 1;
        (mm, k.mms[mm].mmap_anon(N, 0))
    };
    for i in 0..N {
        memory::handle_mm_fault(w, mm, start + i, true)
            .await
            .expect("fault");
    }
    let mut k = w.borrow_mut();
    let pfns: Vec<Pfn> = (0..N)
        .map(|i| k.mms[mm].pte(start + i) & memory::PTE_PFN_MASK)
        .collect();
    for &p in &pfns {
        assert_eq!(k.page_zone(p), Z);
        assert_eq!(k.pages.lru(p), Lru::ActiveAnon);
    }
    let mut sc = sc_at(DEF_PRIORITY, true);
    shrink_active_list(&mut k, N as u64, Z, Lru::ActiveAnon, &mut sc);
    for &p in &pfns {
        assert_eq!(k.pages.lru(p), Lru::InactiveAnon);
        assert_eq!(pte_of(&k, p) & PTE_YOUNG, 0);
    }
    let list = isolate(&mut k);
    (pfns, list)
}

fn isolate(k: &mut Kernel) -> PageList {
    let mut list = PageList::default();
    isolate_lru_pages(
        k,
        N as u64,
        Z,
        Lru::InactiveAnon,
        &sc_at(DEF_PRIORITY, true),
        &mut list,
    );
    assert_eq!(list.len(), N as usize);
    k.zones[Z].mod_stat(ZoneStat::nr_isolated_anon, N as i64);
    list
}

fn putback(k: &mut Kernel, list: &PageList) {
    putback_inactive_pages(k, Z, list);
    k.zones[Z].mod_stat(ZoneStat::nr_isolated_anon, -(list.len() as i64));
}

#[test]
fn shrink_page_list_splits_a_huge_page_before_it_swaps_a_page_of_it() {
    let w = world(256, "3.9");
    let w2 = w.clone();
    run_task(&w, 5 * SEC, async move {
        let w = w2;
        let (pfns, mut list) = faulted_and_isolated(&w).await;
        {
            // The pages' pageblock marked as a huge page, as a THP fault leaves it.
            let mut k = w.borrow_mut();
            k.zones[Z].set_thp(pfns[0], true);
            k.zones[Z].mod_stat(ZoneStat::nr_anon_transparent_hugepages, 1);
        }
        let mut sc = sc_at(DEF_PRIORITY, false);
        let mut st = PageListStats::default();
        shrink_page_list(&w, Z, &mut sc, &mut list, &mut st).await;
        let mut k = w.borrow_mut();
        assert!(k.pages.test(pfns[0], PG_SWAPCACHE));
        assert!(!k.zones[Z].in_thp(pfns[0]));
        assert_eq!(k.events.get(VmEvent::thp_split), 1);
        assert_eq!(k.zones[Z].stat(ZoneStat::nr_anon_transparent_hugepages), 0);
        putback(&mut k, &list);
    });
}

#[test]
fn shrink_page_list_swaps_out_a_dirty_anon_page_and_frees_it_once_written() {
    let w = world(256, "3.9");
    let w2 = w.clone();
    run_task(&w, 5 * SEC, async move {
        let w = w2;
        let (pfns, mut list) = faulted_and_isolated(&w).await;
        let pswpout = w.borrow().events.get(VmEvent::pswpout);
        let mut sc = sc_at(DEF_PRIORITY, false);
        let mut st = PageListStats::default();
        let freed = shrink_page_list(&w, Z, &mut sc, &mut list, &mut st).await;
        {
            let k = w.borrow();
            assert_eq!(freed, 0);
            assert_eq!(
                list.iter().collect::<Vec<_>>(),
                pfns.to_vec(),
                "all kept, in order"
            );
            for &p in &pfns {
                assert!(k.pages.test(p, PG_SWAPCACHE), "pfn {p} got a swap slot");
                let slot = k.pages.private[p as usize];
                assert!(slot > 0);
                assert!(!k.pages.mapped(p), "pfn {p} is unmapped");
                let mm = k.pages.mapping[p as usize] as usize;
                assert_eq!(
                    k.mms[mm].pte(k.pages.index[p as usize]),
                    slot + 1,
                    "its PTE is the swap entry"
                );
                assert_eq!(k.swap.swap_map.get(slot), 1 | SWAP_HAS_CACHE);
                assert!(k.pages.test(p, PG_WRITEBACK) && k.pages.test(p, PG_RECLAIM));
                assert!(!k.pages.test(p, PG_DIRTY), "cleaned for IO");
            }
            assert_eq!(k.events.get(VmEvent::pswpout) - pswpout, N as u64);
            assert_eq!(k.zones[Z].stat(ZoneStat::nr_vmscan_write), N as u64);
            assert_eq!(k.zones[Z].stat(ZoneStat::nr_writeback), N as u64);
            // 3.9 counts dirty anonymous pages (§4.1).
            assert_eq!(st.nr_dirty, N as u64);
            assert_eq!(st.nr_writeback, 0);
        }
        // Met again while still under writeback: kept with PG_reclaim, counted.
        let mut st = PageListStats::default();
        let freed = shrink_page_list(&w, Z, &mut sc, &mut list, &mut st).await;
        {
            let mut k = w.borrow_mut();
            assert_eq!(freed, 0);
            assert_eq!(st.nr_writeback, N as u64);
            assert_eq!(st.nr_immediate, 0);
            assert_eq!(
                k.events.get(VmEvent::pswpout) - pswpout,
                N as u64,
                "not written twice"
            );
            for &p in &pfns {
                assert!(k.pages.test(p, PG_RECLAIM));
            }
            putback(&mut k, &list);
            invariants::check(&k).unwrap();
        }
        // The writes complete: PG_reclaim pages rotate to the inactive tail.
        let rotated = w.borrow().events.get(VmEvent::pgrotated);
        engine::sleep(&w, SEC).await;
        let (mut list, slots) = {
            let mut k = w.borrow_mut();
            assert_eq!(k.events.get(VmEvent::pgrotated) - rotated, N as u64);
            let tail: Vec<Pfn> = k.zones[Z].lruvec.lists[Lru::InactiveAnon as usize]
                .iter(&k.pages)
                .collect();
            let mut tail = tail[tail.len() - N as usize..].to_vec();
            tail.sort_unstable();
            let mut want = pfns.clone();
            want.sort_unstable();
            assert_eq!(tail, want);
            for &p in &pfns {
                assert!(!k.pages.test(p, PG_WRITEBACK | PG_RECLAIM | PG_DIRTY));
            }
            // Next pass: clean, unmapped swap-cache pages leave the cache and are freed; the
            // slots stay, referenced by the PTEs.
            let list = isolate(&mut k);
            let slots: Vec<u32> = pfns.iter().map(|&p| k.pages.private[p as usize]).collect();
            (list, slots)
        };
        let mut st = PageListStats::default();
        let freed = shrink_page_list(&w, Z, &mut sc, &mut list, &mut st).await;
        let mut k = w.borrow_mut();
        assert_eq!(freed, N as u64);
        assert_eq!(list.len(), 0);
        for (&p, &slot) in pfns.iter().zip(&slots) {
            assert!(k.pages.is_free(p), "pfn {p} is free");
            assert_eq!(k.swap.swap_map.get(slot), 1);
        }
        k.zones[Z].mod_stat(ZoneStat::nr_isolated_anon, -(N as i64));
        invariants::check(&k).unwrap();
    });
}

#[test]
fn shrink_page_list_of_lessdisrupt_counts_immediate_pages_for_kswapd_in_a_writeback_zone() {
    let w = world(256, "lessdisrupt-v7r10");
    let w2 = w.clone();
    run_task(&w, SEC, async move {
        let w = w2;
        let (pfns, mut list) = faulted_and_isolated(&w).await;
        let mut kswapd = sc_at(DEF_PRIORITY, true);
        let mut st = PageListStats::default();
        shrink_page_list(&w, Z, &mut kswapd, &mut list, &mut st).await;
        // LD patch 2: anonymous pages never count as dirty.
        assert_eq!(st, PageListStats::default());
        for &p in &pfns {
            assert!(w.borrow().pages.test(p, PG_WRITEBACK | PG_RECLAIM));
        }
        // Under writeback, zone not flagged: case 2 (PG_reclaim, nr_writeback).
        let mut st = PageListStats::default();
        shrink_page_list(&w, Z, &mut kswapd, &mut list, &mut st).await;
        assert_eq!((st.nr_writeback, st.nr_immediate), (N as u64, 0));
        // ZONE_WRITEBACK set: kswapd counts nr_immediate instead (case 1)...
        w.borrow_mut().zones[Z].set_flag(ZONE_WRITEBACK);
        let now = w.borrow().sched.now();
        let mut st = PageListStats::default();
        let freed = shrink_page_list(&w, Z, &mut kswapd, &mut list, &mut st).await;
        assert_eq!(freed, 0);
        assert_eq!((st.nr_writeback, st.nr_immediate), (0, N as u64));
        assert_eq!(list.len(), N as usize, "kept");
        assert_eq!(
            w.borrow().sched.now(),
            now,
            "LD patch 3: no sleep inside the loop"
        );
        // LD patch 6: writeback + PG_reclaim counts as congested only for file pages.
        assert_eq!(st.nr_congested, 0);
        // ...while direct reclaim still takes case 2.
        let mut direct = sc_at(DEF_PRIORITY, false);
        let mut st = PageListStats::default();
        shrink_page_list(&w, Z, &mut direct, &mut list, &mut st).await;
        assert_eq!((st.nr_writeback, st.nr_immediate), (N as u64, 0));
        let mut k = w.borrow_mut();
        putback(&mut k, &list);
        invariants::check(&k).unwrap();
    });
}

#[test]
fn shrink_page_list_of_mmotm_puts_kswapd_to_sleep_inside_the_loop() {
    // KS patch 7 alone: kswapd meeting a PG_reclaim page under writeback in a
    // ZONE_WRITEBACK zone sleeps congestion_wait(HZ/10) inside the loop, clears the flag and
    // falls through with the same page (freed here, as its write completed meanwhile); the
    // LD "-fix-2" patch keeps that page instead.
    for fix2 in [false, true] {
        let w = world(256, "mmotm-20130522");
        w.borrow_mut().sw.set(Switch::KswapdWritebackFix2, fix2);
        let w2 = w.clone();
        run_task(&w, SEC, async move {
            let w = w2;
            let (pfns, mut list) = faulted_and_isolated(&w).await;
            let mut kswapd = sc_at(DEF_PRIORITY, true);
            let mut st = PageListStats::default();
            shrink_page_list(&w, Z, &mut kswapd, &mut list, &mut st).await;
            // KS counts dirty pages in the PageDirty branch, anonymous ones included.
            assert_eq!(st.nr_dirty, N as u64);
            w.borrow_mut().zones[Z].set_flag(ZONE_WRITEBACK);
            let now = w.borrow().sched.now();
            let mut st = PageListStats::default();
            let freed = shrink_page_list(&w, Z, &mut kswapd, &mut list, &mut st).await;
            let mut k = w.borrow_mut();
            assert!(k.sched.now() > now, "congestion_wait inside the loop");
            assert!(k.sched.now() - now <= HZ_10 + crate::calibration::CPU_QUANTUM_NS);
            assert!(
                !k.zones[Z].test_flag(ZONE_WRITEBACK),
                "cleared after the wait"
            );
            assert_eq!(st.nr_immediate, 0, "KS has no nr_immediate");
            if fix2 {
                assert_eq!(freed, N as u64 - 1);
                assert_eq!(
                    list.iter().collect::<Vec<_>>(),
                    pfns[..1].to_vec(),
                    "fix-2: the page waited on is kept"
                );
            } else {
                assert_eq!(
                    freed, N as u64,
                    "without fix-2 the page falls through to be freed"
                );
                assert_eq!(list.len(), 0);
            }
            putback(&mut k, &list);
            k.zones[Z].mod_stat(
                ZoneStat::nr_isolated_anon,
                freed as i64 - N as i64 + list.len() as i64,
            );
            invariants::check(&k).unwrap();
        });
    }
}

// ---------------------------------------------------------------------------------------
// 8. kswapd sleeps only when balanced (§2.6)

/// Run `w` for `end`, recording `pgdat_balanced` each time a step of kswapd ends with it
/// asleep: its HZ/10 nap and its long sleep (the two can begin in one step).
fn run_watching_kswapd(w: &World, end: Nanos) -> Vec<(Nanos, bool)> {
    let sleeps = Rc::new(RefCell::new(Vec::new()));
    let s = sleeps.clone();
    Executor::new(w.clone()).run_until(end, move |k: &mut Kernel| {
        let me = k.sched.current();
        if k.pgdat.kswapd_sleeping && k.sched.task_name(me) == "kswapd0" {
            s.borrow_mut()
                .push((k.sched.now(), pgdat_balanced(k, 0, ZONE_NORMAL)));
        }
        k.fatal.is_some()
    });
    assert_eq!(w.borrow().fatal, None);
    sleeps.take()
}

/// Spawn a task that maps a large anonymous region and faults pages in while `more` says
/// so, then holds them.
fn spawn_eater(w: &World, more: fn(&Kernel) -> bool) -> Rc<Cell<u32>> {
    let faulted = Rc::new(Cell::new(0));
    let f = faulted.clone();
    let w2 = w.clone();
    w.borrow_mut().sched.spawn("eater", async move {
        let (mm, start) = {
            let mut k = w2.borrow_mut();
            k.mms.push(Mm::default());
            let mm = k.mms.len() - 1;
            (mm, k.mms[mm].mmap_anon(1 << 16, 0))
        };
        let mut i = 0;
        while more(&w2.borrow()) {
            memory::handle_mm_fault(&w2, mm, start + i, true)
                .await
                .expect("fault");
            i += 1;
        }
        f.set(i);
        engine::sleep(&w2, 1000 * SEC).await;
    });
    faulted
}

#[test]
fn kswapd_woken_during_its_nap_counts_low_wmark_hit_quickly_and_sleeps_once_balanced() {
    let w = world(256, "3.9");
    // At boot kswapd is balanced and takes its HZ/10 nap. The eater allocates until the
    // slow path wakes it (its wait queue empties): well within the nap.
    let faulted = spawn_eater(&w, |k| k.sched.queue_has_waiters(k.wq.kswapd_wait));
    let sleeps = run_watching_kswapd(&w, 10 * SEC);
    let k = w.borrow();
    assert!(faulted.get() > 10_000, "faulted {}", faulted.get());
    assert_eq!(k.events.get(VmEvent::kswapd_low_wmark_hit_quickly), 1);
    assert_eq!(k.events.get(VmEvent::kswapd_high_wmark_hit_quickly), 0);
    assert!(k.events.get(VmEvent::pageoutrun) >= 1);
    assert!(
        k.events.get(VmEvent::pgsteal_kswapd_dma32) + k.events.get(VmEvent::pgsteal_kswapd_dma) > 0
    );
    assert!(k.events.get(VmEvent::pswpout) > 0);
    assert!(k.pgdat.kswapd_sleeping);
    assert!(pgdat_balanced(&k, 0, ZONE_NORMAL));
    // Boot nap, nap after balancing, and the long sleep; every one of them balanced.
    assert!(sleeps.len() >= 3, "{sleeps:?}");
    assert!(
        sleeps.iter().filter(|&&(t, _)| t == 0).count() == 1,
        "one nap at boot: {sleeps:?}"
    );
    assert!(sleeps.iter().all(|&(_, balanced)| balanced), "{sleeps:?}");
    assert!(
        sleeps[1].0 > 0,
        "kswapd reclaimed before sleeping again: {sleeps:?}"
    );
    invariants::check(&k).unwrap();
}

#[test]
fn kswapd_unbalanced_after_its_nap_counts_high_wmark_hit_quickly() {
    for preset in ["3.9", "lessdisrupt-v7r10"] {
        let w = world(256, preset);
        // Allocate during the boot nap until DMA32 drops to its high watermark: still above
        // low, so nobody wakes kswapd; the nap times out on an unbalanced node.
        let faulted = spawn_eater(&w, |k| pgdat_balanced(k, 0, ZONE_NORMAL));
        let sleeps = run_watching_kswapd(&w, 10 * SEC);
        let k = w.borrow();
        assert!(faulted.get() > 10_000);
        assert_eq!(
            k.events.get(VmEvent::kswapd_low_wmark_hit_quickly),
            0,
            "{preset}"
        );
        assert!(
            k.events.get(VmEvent::kswapd_high_wmark_hit_quickly) >= 1,
            "{preset}"
        );
        if preset == "3.9" {
            // 3.9's balance_pgdat does not return before the node is balanced.
            assert_eq!(k.events.get(VmEvent::kswapd_high_wmark_hit_quickly), 1);
        }
        assert!(k.pgdat.kswapd_sleeping, "{preset}");
        assert!(pgdat_balanced(&k, 0, ZONE_NORMAL), "{preset}");
        assert!(
            sleeps.iter().all(|&(_, balanced)| balanced),
            "{preset}: {sleeps:?}"
        );
        assert!(sleeps.len() >= 3, "{preset}: {sleeps:?}");
        invariants::check(&k).unwrap();
    }
}

// ---------------------------------------------------------------------------------------
// 9. The invariant checker

#[test]
fn invariants_hold_at_boot_and_name_the_broken_invariant_and_page() {
    let w = world(256, "3.9");
    invariants::check(&w.borrow()).expect("a fresh machine is consistent");
    let pfns = {
        let mut k = w.borrow_mut();
        let (_, _, pfns) = anon_pages(&mut k, Lru::ActiveAnon, 4, true, 0);
        invariants::check(&k).expect("pages built as the fault path builds them");
        pfns
    };

    // PG_lru cleared on a page that is on a list.
    let p = pfns[1];
    w.borrow_mut().pages.clear(p, PG_LRU);
    let e = invariants::check(&w.borrow()).unwrap_err();
    assert!(
        e.contains("LRU membership") && e.contains(&format!("pfn {p} ")),
        "{e}"
    );
    w.borrow_mut().pages.set(p, PG_LRU);
    invariants::check(&w.borrow()).unwrap();

    // A swap slot counting a reference no PTE holds.
    {
        let m = &mut w.borrow_mut().swap.swap_map;
        m.set(5, m.get(5) + 1);
    }
    let e = invariants::check(&w.borrow()).unwrap_err();
    assert!(
        e.contains("swap slots balanced") && e.contains("slot 5 "),
        "{e}"
    );
    {
        let m = &mut w.borrow_mut().swap.swap_map;
        m.set(5, m.get(5) - 1);
    }
    invariants::check(&w.borrow()).unwrap();

    // A mapcount no PTE accounts for.
    let p = pfns[2];
    w.borrow_mut().pages.mapcount_add(p, 1).unwrap();
    let e = invariants::check(&w.borrow()).unwrap_err();
    assert!(
        e.contains("mapcount") && e.contains(&format!("pfn {p} ")),
        "{e}"
    );
}

// ---------------------------------------------------------------------------------------
// wakeup_kswapd's request bookkeeping (§2.4)

#[test]
fn wakeup_kswapd_lowers_the_pending_classzone_only_with_a_higher_order() {
    let w = world(256, "3.9");
    let mut k = w.borrow_mut();
    k.pgdat.kswapd_max_order = 0;
    k.pgdat.classzone_idx = ZONE_NORMAL;
    // Same order as pending: the request is left alone.
    crate::mm::page_alloc::wake_all_kswapd(&mut k, 0, ZONE_DMA, &[ZONE_DMA32, ZONE_DMA]);
    assert_eq!(
        (k.pgdat.kswapd_max_order, k.pgdat.classzone_idx),
        (0, ZONE_NORMAL)
    );
    // A higher order raises the order and lowers the class zone.
    crate::mm::page_alloc::wake_all_kswapd(&mut k, 1, ZONE_DMA, &[ZONE_DMA32, ZONE_DMA]);
    assert_eq!(
        (k.pgdat.kswapd_max_order, k.pgdat.classzone_idx),
        (1, ZONE_DMA)
    );
}

// ---------------------------------------------------------------------------------------
// Page-cache pages in reclaim (§3.8 use-once, §4.1 __remove_mapping)

#[test]
fn shrink_page_list_frees_clean_file_pages_out_of_the_page_cache() {
    let w = world(0, "3.9");
    let (pages, mut list, ino) = {
        let mut k = w.borrow_mut();
        let pages = file_pages(&mut k, Lru::InactiveFile, 3);
        let ino = k.pages.mapping[pages[0] as usize] as usize;
        // A page used once (PG_referenced, no PTE) is still reclaimed when clean.
        k.pages.set(pages[1], PG_REFERENCED);
        let list = isolate_all(&mut k, &pages);
        (pages, list, ino)
    };
    let w2 = w.clone();
    run_task(&w, SEC, async move {
        let mut sc = sc_at(DEF_PRIORITY, true);
        let mut st = PageListStats::default();
        let freed = shrink_page_list(&w2, Z, &mut sc, &mut list, &mut st).await;
        assert_eq!(freed, 3);
        assert_eq!(list.len(), 0);
    });
    let k = w.borrow();
    assert_eq!(k.inodes[ino].nrpages, 0);
    for (i, &pfn) in pages.iter().enumerate() {
        assert_eq!(k.inodes[ino].find_page(i as u64), None);
        assert!(k.pages.is_free(pfn), "pfn {pfn} is free");
    }
    invariants::check(&k).expect("invariants after freeing file pages");
}

#[test]
fn mark_page_accessed_activates_a_page_on_its_second_use() {
    let w = world(0, "3.9");
    let mut k = w.borrow_mut();
    let pfn = file_pages(&mut k, Lru::InactiveFile, 1)[0];
    let before = k.events.get(VmEvent::pgactivate);
    super::super::filemap::mark_page_accessed(&mut k, pfn);
    assert!(
        k.pages.test(pfn, PG_REFERENCED) && !k.pages.test(pfn, PG_ACTIVE),
        "first use only marks it"
    );
    super::super::filemap::mark_page_accessed(&mut k, pfn);
    assert!(k.pages.test(pfn, PG_ACTIVE) && !k.pages.test(pfn, PG_REFERENCED));
    assert_eq!(k.pages.lru(pfn), Lru::ActiveFile);
    assert_eq!(k.events.get(VmEvent::pgactivate), before + 1);
    invariants::check(&k).expect("invariants after activation");
}

#[test]
fn the_invariant_checker_catches_a_page_missing_from_its_page_cache_slot() {
    let w = world(0, "3.9");
    let mut k = w.borrow_mut();
    let pfn = file_pages(&mut k, Lru::InactiveFile, 2)[1];
    let ino = k.pages.mapping[pfn as usize] as usize;
    k.inodes[ino].remove_page(1, pfn);
    k.inodes[ino].nrpages += 1;
    let e = invariants::check(&k).unwrap_err();
    assert!(e.contains("page cache"), "{e}");
}

/// §3.5 throttle_vm_writeout: reclaim waits only while writeback exceeds 1.1 × the hard
/// dirty limit.
#[test]
fn reclaim_waits_for_writeback_only_far_above_the_dirty_limit() {
    let w = world(0, "3.9");
    let mut k = w.borrow_mut();
    let (_, thresh) = crate::mm::page_writeback::dirty_limits(&k);
    let limit = k.global_dirty_limit.hard_dirty_limit(thresh);
    k.zones[Z].mod_stat(ZoneStat::nr_writeback, (limit + limit / 10) as i64);
    assert!(!too_much_writeback(&k), "at 1.1 x the limit");
    k.zones[Z].mod_stat(ZoneStat::nr_writeback, 1);
    assert!(too_much_writeback(&k), "above 1.1 x the limit");
    k.zones[Z].mod_stat(ZoneStat::nr_writeback, -((limit + limit / 10 + 1) as i64));
}
/// A test machine whose swap is the last 256 MiB of an ext4 disk `sda` (one request queue
/// for both, as in seed 000's layout).
fn world_with_swap_on_sda(preset: &str) -> World {
    let mut s = crate::sim::scenario_for_test(RAM_MIB, 256);
    let mut sda = crate::scenario::BlockDevice::ext4_hdd("sda");
    sda.size = 1 << 30;
    s.machine.devices = vec![sda];
    s.machine.swap.as_mut().unwrap().device = Some("sda".into());
    let kernel = presets::resolve(preset, &[]).unwrap();
    crate::sim::boot(&s, &kernel, 1).unwrap()
}

/// Fills `bdi`'s async request pool with one-page writes that merge with nothing (sectors
/// far apart at the start of the disk), past the allocation that fills it and the batch
/// that allocation allows; returns how many were queued. The writes carry no page, so the
/// tests using this end before the disk completes any ([`POOL_TEST_END`]).
fn fill_async_pool(k: &mut Kernel, bdi: usize) -> u32 {
    let mut n = 0;
    while backing_dev::try_submit_bio(
        k,
        bdi,
        crate::block::Bio {
            dir: crate::block::Dir::Write,
            sync: false,
            sector: u64::from(n) * 1024,
            nr_sectors: backing_dev::PAGE_SECTORS,
            tag: 0,
        },
    ) {
        n += 1;
    }
    n
}

/// How long the request-pool tests run: their checks happen at time 0, and the run ends
/// before the disk completes a request.
const POOL_TEST_END: Nanos = 1;

/// The current task's batching state, reset (its allowance used up long ago).
fn stop_batching(k: &mut Kernel) {
    let ioc = k.sched.current().0 as usize;
    k.io_batch[ioc] = Default::default();
}

#[test]
fn a_swap_write_queues_past_a_full_pool_only_by_merging_or_as_a_batcher() {
    let w = world_with_swap_on_sda("3.9");
    let w2 = w.clone();
    run_task(&w, POOL_TEST_END, async move {
        let mut k = w2.borrow_mut();
        let bdi = k.swap_bdi.expect("swap on sda");
        let (_, _, pfns) = anon_pages(&mut k, Lru::InactiveAnon, 3, false, 0);
        for &p in &pfns {
            assert!(swapfile::add_to_swap(&mut k, p));
            assert_eq!(rmap::try_to_unmap(&mut k, p), rmap::Unmap::Success);
            k.pages.set(p, PG_DIRTY);
        }
        let slots: Vec<u32> = pfns.iter().map(|&p| k.pages.private[p as usize]).collect();
        assert_eq!(
            [slots[1], slots[2]],
            [slots[0] + 1, slots[0] + 2],
            "slots in a row"
        );
        let nr = k.bdis[bdi].queue.config().nr_requests;
        assert!(
            fill_async_pool(&mut k, bdi) > nr,
            "the task that filled it batched on"
        );
        stop_batching(&mut k);
        // A full pool and nothing queued beside slot 1: the page goes under writeback and
        // its bio waits for a request.
        let queued = k.bdis[bdi].queue.count(crate::block::Class::Async);
        let Pageout::WaitForRequest { bdi: b, bio } = pageout(&mut k, pfns[1], true) else {
            panic!("slot 1's write queued into a full pool");
        };
        assert_eq!(b, bdi);
        assert!(k.pages.test(pfns[1], PG_WRITEBACK) && !k.pages.test(pfns[1], PG_DIRTY));
        assert_eq!(k.bdis[bdi].queue.count(crate::block::Class::Async), queued);
        // Woken from that sleep, the task is a batcher and may allocate.
        backing_dev::woken_for_request(&mut k);
        assert!(backing_dev::try_submit_bio(&mut k, bdi, bio));
        // Its allowance gone, the task still queues the writes of the neighbouring slots:
        // they merge into slot 1's request.
        stop_batching(&mut k);
        let queued = k.bdis[bdi].queue.count(crate::block::Class::Async);
        for p in [pfns[2], pfns[0]] {
            assert_eq!(pageout(&mut k, p, true), Pageout::Success);
            assert!(k.pages.test(p, PG_WRITEBACK));
        }
        assert_eq!(
            k.bdis[bdi].queue.count(crate::block::Class::Async),
            queued,
            "no new request"
        );
    });
}

/// As in the kernel, a reclaimer's swap write that finds the pool full has put the page
/// under writeback before it sleeps for a request: the page's fate is settled, and
/// `shrink_page_list` submits the bio once a request is free and keeps the page.
#[test]
fn a_swap_write_that_must_sleep_for_a_request_is_under_writeback_first() {
    let w = world_with_swap_on_sda("3.9");
    let w2 = w.clone();
    run_task(&w, POOL_TEST_END, async move {
        let mut k = w2.borrow_mut();
        let bdi = k.swap_bdi.unwrap();
        let (_, _, pfns) = anon_pages(&mut k, Lru::InactiveAnon, 1, false, 0);
        fill_async_pool(&mut k, bdi);
        stop_batching(&mut k);
        let list = isolate_all(&mut k, &pfns);
        let mut sc = sc_at(DEF_PRIORITY, true);
        let mut st = PageListStats::default();
        let written = k.global_stat(ZoneStat::nr_vmscan_write);
        let v = shrink_one_page(&mut k, Z, &mut sc, &mut st, list.get(0), false);
        let Verdict::WaitForRequest { bdi: b, bio } = v else {
            panic!("{v:?}: the write queued into a full pool");
        };
        assert_eq!(b, bdi);
        // The bio writes the page's slot.
        let slot = u64::from(k.pages.private[pfns[0] as usize]);
        let sector = k.swap_sector_base + slot * u64::from(backing_dev::PAGE_SECTORS);
        assert_eq!((bio.sector, bio.tag), (sector, pfns[0] as u64));
        assert!(k
            .pages
            .test(pfns[0], PG_WRITEBACK | PG_SWAPCACHE | PG_RECLAIM));
        assert!(!k.pages.test(pfns[0], PG_DIRTY));
        assert_eq!(k.global_stat(ZoneStat::nr_vmscan_write), written + 1);
        crate::mm::invariants::check(&k).expect("invariants");
    });
}

/// The whole list: the reclaimer sleeps with its page under writeback, and its bio is
/// queued as soon as the disk frees a request; the page stays on the list, kept.
#[test]
fn shrink_page_list_submits_a_waiting_write_once_a_request_is_free() {
    let w = world_with_swap_on_sda("3.9");
    let w2 = w.clone();
    let done = std::rc::Rc::new(std::cell::Cell::new(false));
    let d2 = done.clone();
    run_task(&w, 10 * crate::engine::SEC, async move {
        let (bdi, mut list) = {
            let mut k = w2.borrow_mut();
            let bdi = k.swap_bdi.unwrap();
            let (_, _, pfns) = anon_pages(&mut k, Lru::InactiveAnon, 1, false, 0);
            // Fill the pool with kswapd's writes of real file pages, whose completions
            // free the requests.
            let file = file_pages(&mut k, Lru::InactiveFile, 400);
            let ino = k.pages.mapping[file[0] as usize] as usize;
            k.inodes[ino].bdi = bdi;
            for (i, &p) in file.iter().enumerate() {
                k.inodes[ino].add_extent(i as u64, (1 << 20) + 64 * i as u64, 1);
                page_writeback::set_page_dirty(
                    &mut k,
                    p,
                    &mut page_writeback::DirtyTask::default(),
                );
            }
            let mut last = None;
            for &p in &file {
                if let Pageout::WaitForRequest { bdi, bio } = pageout(&mut k, p, true) {
                    last = Some((bdi, bio));
                    break;
                }
            }
            // The page that found the pool full would sleep; queue it as its waker would.
            let (b, bio) = last.expect("400 scattered writes fill the pool");
            backing_dev::woken_for_request(&mut k);
            assert!(backing_dev::try_submit_bio(&mut k, b, bio));
            stop_batching(&mut k);
            (bdi, isolate_all(&mut k, &pfns))
        };
        let pfn = list.get(0);
        let mut sc = sc_at(DEF_PRIORITY, true);
        let mut st = PageListStats::default();
        let t0 = w2.borrow().sched.now();
        let freed = shrink_page_list(&w2, Z, &mut sc, &mut list, &mut st).await;
        {
            let k = w2.borrow();
            assert_eq!(freed, 0);
            assert!(k.sched.now() > t0, "it slept for a request");
            assert_eq!((list.len(), list.get(0)), (1, pfn), "kept");
            assert!(k.pages.test(pfn, PG_WRITEBACK));
            assert!(k.bdis[bdi].queue.queued() > 0);
        }
        // The bio went to the disk: the write completes.
        while w2.borrow().pages.test(pfn, PG_WRITEBACK) {
            engine::sleep(&w2, crate::engine::MSEC).await;
        }
        d2.set(true);
    });
    assert!(done.get(), "the reclaimer never got its request");
}

/// A writer woken from the request pool whose bio then merged hands the wake-up to the
/// next waiter while a request is free (`pass_on_request_wakeup`); with the pool full for a
/// task that is not batching, nobody is woken.
#[test]
fn a_wake_up_for_a_request_nobody_took_goes_to_the_next_waiter() {
    for full in [false, true] {
        let w = world_with_swap_on_sda("3.9");
        let bdi = w.borrow().swap_bdi.expect("swap on sda");
        let q = w.borrow().bdis[bdi].request_wq[crate::block::Class::Async.index()];
        // Spawned first, the waiter sleeps on the pool before the test task runs.
        let w1 = w.clone();
        w.borrow_mut().sched.spawn("waiter", async move {
            engine::wait_event(&w1, q, None, false).await;
        });
        let w2 = w.clone();
        run_task(&w, POOL_TEST_END, async move {
            let mut k = w2.borrow_mut();
            assert!(k.sched.queue_has_waiters(q));
            if full {
                fill_async_pool(&mut k, bdi);
                stop_batching(&mut k);
            }
            backing_dev::pass_on_request_wakeup(&mut k, bdi, crate::block::Class::Async);
            assert_eq!(k.sched.queue_has_waiters(q), full, "pool full: {full}");
        });
    }
}

#[test]
fn a_file_page_written_by_kswapd_waits_for_a_request_unless_its_write_would_queue() {
    let w = world_with_swap_on_sda("3.9");
    let w2 = w.clone();
    run_task(&w, POOL_TEST_END, async move {
        let mut k = w2.borrow_mut();
        let bdi = 0;
        let pfns = file_pages(&mut k, Lru::InactiveFile, 3);
        let ino = k.pages.mapping[pfns[0] as usize] as usize;
        k.inodes[ino].bdi = bdi;
        // Pages 0 and 1 have blocks far from the pool's writes; page 2 is still delalloc.
        let base = 1 << 20;
        k.inodes[ino].add_extent(0, base, 2);
        for p in [pfns[0], pfns[2]] {
            page_writeback::set_page_dirty(&mut k, p, &mut page_writeback::DirtyTask::default());
        }
        fill_async_pool(&mut k, bdi);
        stop_batching(&mut k);
        // A clean page is not written.
        assert_eq!(pageout(&mut k, pfns[1], true), Pageout::Clean);
        page_writeback::set_page_dirty(&mut k, pfns[1], &mut page_writeback::DirtyTask::default());
        // Direct reclaim skips a congested queue instead (may_write_to_queue).
        assert_eq!(pageout(&mut k, pfns[0], false), Pageout::Keep);
        assert!(k.pages.test(pfns[0], PG_DIRTY) && !k.pages.test(pfns[0], PG_WRITEBACK));
        // ext4 does not write a delalloc page from reclaim: nothing to wait for.
        assert_eq!(pageout(&mut k, pfns[2], true), Pageout::Success);
        assert!(k.pages.test(pfns[2], PG_DIRTY));
        // kswapd writes page 0: under writeback, its bio waits for a request.
        let Pageout::WaitForRequest { bdi: b, bio } = pageout(&mut k, pfns[0], true) else {
            panic!("page 0's write queued into a full pool");
        };
        assert_eq!(b, bdi);
        assert!(k.pages.test(pfns[0], PG_WRITEBACK));
        // Once it is queued (as a batcher), page 1's write merges with it.
        backing_dev::woken_for_request(&mut k);
        assert!(backing_dev::try_submit_bio(&mut k, bdi, bio));
        stop_batching(&mut k);
        assert_eq!(pageout(&mut k, pfns[1], true), Pageout::Success);
        assert!(k.pages.test(pfns[1], PG_WRITEBACK));
        crate::mm::invariants::check(&k).expect("invariants");
    });
}

/// kswapd's pageout of an ext4 delalloc page the filesystem declines leaves the page as
/// clear_page_dirty_for_io and the redirtying writepage would (mmsim runs neither), with
/// PG_reclaim clear and the write counted.
#[test]
fn a_declined_pageout_leaves_the_page_as_the_clear_and_redirty_pair_would() {
    let w = world_with_swap_on_sda("3.9");
    let mut k = w.borrow_mut();
    let pfns = file_pages(&mut k, Lru::InactiveFile, 2);
    let ino = k.pages.mapping[pfns[0] as usize] as usize;
    k.inodes[ino].bdi = 0;
    for &p in &pfns {
        page_writeback::set_page_dirty(&mut k, p, &mut page_writeback::DirtyTask::default());
        k.pages.set(p, PG_RECLAIM);
    }
    let state = |k: &Kernel, p: Pfn| {
        (
            k.pages.flags[p as usize],
            k.inodes[ino].tagged_dirty(k.pages.index[p as usize] as u64),
            k.global_stat(ZoneStat::nr_dirty),
            k.bdis[0].reclaimable,
        )
    };
    // The pair, run on page 0 as the kernel runs it.
    let wbc = WritebackControl::for_reclaim(true);
    assert!(page_writeback::clear_page_dirty_for_io(&mut k, pfns[0]));
    assert_eq!(
        page_aops(&k, pfns[0]).writepage(&mut k, pfns[0], &wbc, &mut None),
        WritePage::Redirtied
    );
    k.pages.clear(pfns[0], PG_RECLAIM);
    let paired = state(&k, pfns[0]);
    assert_eq!(paired.0 & (PG_DIRTY | PG_RECLAIM), PG_DIRTY);
    // pageout on page 1.
    let written = k.global_stat(ZoneStat::nr_vmscan_write);
    assert_eq!(pageout(&mut k, pfns[1], true), Pageout::Success);
    assert_eq!(state(&k, pfns[1]), paired);
    assert_eq!(k.global_stat(ZoneStat::nr_vmscan_write), written + 1);
    crate::mm::invariants::check(&k).expect("invariants");
}

/// A file on no filesystem (`EMPTY_AOPS`, ramfs' `__set_page_dirty_no_writeback`) dirties a
/// page without accounting, says whether it was clean, and tags it in the file's index.
#[test]
fn a_file_on_no_filesystem_dirties_and_tags_its_page() {
    use crate::mm::fs_ops::{AddressSpaceOps, EMPTY_AOPS};
    let w = world(0, "3.9");
    let mut k = w.borrow_mut();
    let pfn = file_pages(&mut k, Lru::InactiveFile, 1)[0];
    let ino = k.pages.mapping[pfn as usize] as usize;
    let mut task = page_writeback::DirtyTask::default();
    assert!(
        EMPTY_AOPS.set_page_dirty(&mut k, pfn, &mut task),
        "it was clean"
    );
    assert!(
        !EMPTY_AOPS.set_page_dirty(&mut k, pfn, &mut task),
        "already dirty"
    );
    assert!(k.pages.test(pfn, PG_DIRTY) && k.inodes[ino].tagged_dirty(0));
    assert_eq!(k.global_stat(ZoneStat::nr_dirty), 0, "not accounted");
}

// ---------------------------------------------------------------------------------------
// Lumpy reclaim (3.0-3.4; `kernel-compaction.md` §4.3)

/// A direct reclaimer's scan control for `order` at `priority`.
fn direct_at(order: u32, priority: i32) -> ScanControl {
    let mut sc = ScanControl::new(Gfp::KERNEL, order, false, false);
    sc.priority = priority;
    sc
}

#[test]
fn set_reclaim_mode_picks_compaction_for_costly_orders_or_low_priorities() {
    let cases = [
        (0, DEF_PRIORITY, ReclaimMode::Single),
        (0, 0, ReclaimMode::Single),
        (2, DEF_PRIORITY - 2, ReclaimMode::Single),
        (2, DEF_PRIORITY - 3, ReclaimMode::Compaction),
        (4, DEF_PRIORITY, ReclaimMode::Compaction),
        (9, DEF_PRIORITY, ReclaimMode::Compaction),
    ];
    for (order, priority, mode) in cases {
        for sync in [false, true] {
            let mut sc = direct_at(order, priority);
            sc.set_reclaim_mode(sync);
            assert_eq!(sc.reclaim_mode, mode, "order {order} priority {priority}");
            assert_eq!(sc.reclaim_sync, sync && mode == ReclaimMode::Compaction);
            sc.reset_reclaim_mode();
            assert_eq!(
                (sc.reclaim_mode, sc.reclaim_sync),
                (ReclaimMode::Single, false)
            );
        }
    }
}

#[test]
fn should_reclaim_stall_only_for_a_direct_reclaimer_in_compaction_mode_that_left_pages() {
    let mut sc = direct_at(9, DEF_PRIORITY);
    sc.set_reclaim_mode(false);
    assert!(should_reclaim_stall(32, 31, &sc), "costly order: at once");
    assert!(!should_reclaim_stall(32, 32, &sc), "everything freed");
    let mut kswapd = sc.clone();
    kswapd.kswapd = true;
    assert!(!should_reclaim_stall(32, 0, &kswapd), "kswapd never stalls");
    sc.reset_reclaim_mode();
    assert!(
        !should_reclaim_stall(32, 0, &sc),
        "single mode never stalls"
    );
    // Orders 1-3 stall only at priority DEF_PRIORITY / 3 or below.
    for (order, priority, stall) in [
        (2, DEF_PRIORITY / 3 + 1, false),
        (2, DEF_PRIORITY / 3, true),
        (3, DEF_PRIORITY - 3, false),
        (3, DEF_PRIORITY / 3, true),
    ] {
        let mut sc = direct_at(order, priority);
        sc.set_reclaim_mode(false);
        assert_eq!(
            should_reclaim_stall(32, 0, &sc),
            stall,
            "order {order}, priority {priority}"
        );
    }
}

/// A direct reclaimer for `order` at priority 12 isolates one page from `lru` with its
/// block: the pages taken, sorted, and the pages scanned.
fn lumpy_take(k: &mut Kernel, order: u32, lru: Lru) -> (Vec<Pfn>, u64) {
    let mut sc = direct_at(order, DEF_PRIORITY);
    sc.set_reclaim_mode(false);
    let mut out = PageList::default();
    let scanned = isolate_lru_pages(k, 1, Z, lru, &sc, &mut out);
    let mut got: Vec<Pfn> = out.iter().collect();
    got.sort_unstable();
    (got, scanned)
}

/// 64 inactive file pages; returns them and the aligned `2^order` block around the list's
/// tail page, all of which must be among them.
fn lumpy_setup(k: &mut Kernel, order: u32) -> (Vec<Pfn>, Vec<Pfn>) {
    let pages = file_pages(k, Lru::InactiveFile, 64);
    let tail = k.zones[Z].lruvec.lists[Lru::InactiveFile as usize].tail;
    let start = tail & !((1 << order) - 1);
    let block: Vec<Pfn> = (start..start + (1 << order)).collect();
    for p in &block {
        assert!(
            pages.contains(p),
            "test setup: pfn {p} of the block is a file page"
        );
    }
    (pages, block)
}

#[test]
fn lumpy_isolation_takes_the_aligned_block_around_each_page_only_before_fe2c2a10() {
    const ORDER: u32 = 3;
    for (preset, lumpy) in [("3.3.6", true), ("3.4", false), ("3.9", false)] {
        let w = world(0, preset);
        let mut k = w.borrow_mut();
        let (_, block) = lumpy_setup(&mut k, ORDER);
        let tail = k.zones[Z].lruvec.lists[Lru::InactiveFile as usize].tail;
        let inactive = k.zones[Z].stat(ZoneStat::nr_inactive_file);
        let mut sc = direct_at(ORDER, DEF_PRIORITY);
        sc.set_reclaim_mode(false);
        let mut list = PageList::default();
        let scanned = isolate_lru_pages(&mut k, 1, Z, Lru::InactiveFile, &sc, &mut list);
        let mut got: Vec<Pfn> = list.iter().collect();
        assert_eq!(got[0], tail, "{preset}: the tail page first");
        got.sort_unstable();
        let want = if lumpy { block.clone() } else { vec![tail] };
        assert_eq!(got, want, "{preset}");
        assert_eq!(
            scanned,
            want.len() as u64,
            "{preset}: block pages count as scanned"
        );
        assert_eq!(
            k.zones[Z].stat(ZoneStat::nr_inactive_file),
            inactive - want.len() as u64
        );
        for &p in &want {
            assert!(k.pages.test(p, PG_ISOLATED) && !k.pages.test(p, PG_LRU));
        }
        k.zones[Z].mod_stat(ZoneStat::nr_isolated_file, list.len() as i64);
        putback_inactive_pages(&mut k, Z, &list);
        k.zones[Z].mod_stat(ZoneStat::nr_isolated_file, -(list.len() as i64));
        invariants::check(&k).unwrap();
    }
}

#[test]
fn lumpy_isolation_gives_up_the_block_at_a_page_on_another_list() {
    const ORDER: u32 = 3;
    let w = world(0, "3.3.6");
    let mut k = w.borrow_mut();
    let (_, block) = lumpy_setup(&mut k, ORDER);
    let tail = k.zones[Z].lruvec.lists[Lru::InactiveFile as usize].tail;
    // Move the block's first page other than the tail onto the active list.
    let other = *block.iter().find(|&&p| p != tail).unwrap();
    let k = &mut *k;
    k.zones[Z].lruvec.lists[Lru::InactiveFile as usize].del(&mut k.pages, other);
    k.zones[Z].mod_stat(ZoneStat::nr_inactive_file, -1);
    k.pages.set(other, PG_ACTIVE);
    k.pages.clear(other, PG_LRU);
    swap::add_page_to_lru_list(k, other, Lru::ActiveFile);
    let mut sc = direct_at(ORDER, DEF_PRIORITY);
    sc.set_reclaim_mode(false);
    let mut list = PageList::default();
    isolate_lru_pages(k, 1, Z, Lru::InactiveFile, &sc, &mut list);
    // The pages before `other` in pfn order (the tail aside) are taken, none after it.
    let mut want: Vec<Pfn> = block.iter().copied().take_while(|&p| p != other).collect();
    if !want.contains(&tail) {
        want.push(tail);
    }
    want.sort_unstable();
    let mut got: Vec<Pfn> = list.iter().collect();
    got.sort_unstable();
    assert_eq!(got, want);
    assert_eq!(k.pages.lru(other), Lru::ActiveFile);
    assert!(k.pages.test(other, PG_LRU));
}

#[test]
fn a_direct_lumpy_reclaimer_runs_the_batch_again_synchronously_and_frees_the_written_pages() {
    for preset in ["3.4", "3.9"] {
        let w = world(256, preset);
        let w2 = w.clone();
        let lumpy = preset == "3.4";
        run_task(&w, 5 * SEC, async move {
            let w = w2;
            let (pfns, mut list) = faulted_and_isolated(&w).await;
            let mut sc = direct_at(9, DEF_PRIORITY);
            if lumpy {
                sc.set_reclaim_mode(false);
            }
            let mut st = PageListStats::default();
            let freed = shrink_page_list(&w, Z, &mut sc, &mut list, &mut st).await;
            assert_eq!(freed, 0, "{preset}: written, kept under writeback");
            assert_eq!(list.len(), N as usize);
            if lumpy {
                // keep_lumpy: the mode survives, and the stall test asks for a second pass.
                assert_eq!(sc.reclaim_mode, ReclaimMode::Compaction);
                assert!(should_reclaim_stall(N as u64, freed, &sc));
                sc.set_reclaim_mode(true);
                let t0 = w.borrow().sched.now();
                let freed = shrink_page_list(&w, Z, &mut sc, &mut list, &mut st).await;
                let k = w.borrow();
                assert_eq!(freed, N as u64, "the synchronous pass frees every page");
                assert!(k.sched.now() > t0, "it waited for the writes");
                assert_eq!(list.len(), 0);
                for &p in &pfns {
                    assert!(k.pages.is_free(p));
                }
                drop(k);
                w.borrow_mut().zones[Z].mod_stat(ZoneStat::nr_isolated_anon, -(N as i64));
            } else {
                let mut k = w.borrow_mut();
                putback(&mut k, &list);
            }
        });
        invariants::check(&w.borrow()).unwrap();
    }
}

#[test]
fn a_kept_page_or_an_active_list_scan_resets_the_reclaim_mode_before_c53919ad() {
    let w = world(256, "3.4");
    let w2 = w.clone();
    run_task(&w, 5 * SEC, async move {
        let w = w2;
        let (pfns, mut list) = faulted_and_isolated(&w).await;
        // A young PTE: page_check_references activates it.
        {
            let mut k = w.borrow_mut();
            let (mm, vpn) = (
                k.pages.mapping[pfns[0] as usize] as usize,
                k.pages.index[pfns[0] as usize],
            );
            memory::touch(&mut k, mm, vpn, false);
        }
        let mut sc = direct_at(9, DEF_PRIORITY);
        sc.set_reclaim_mode(false);
        let mut st = PageListStats::default();
        let freed = shrink_page_list(&w, Z, &mut sc, &mut list, &mut st).await;
        assert_eq!(freed, 0);
        assert_eq!(sc.reclaim_mode, ReclaimMode::Single, "activated: reset");
        assert!(!should_reclaim_stall(N as u64, freed, &sc));
        let mut k = w.borrow_mut();
        putback(&mut k, &list);
        let mut sc = direct_at(9, DEF_PRIORITY);
        sc.set_reclaim_mode(false);
        shrink_active_list(&mut k, 1, Z, Lru::ActiveAnon, &mut sc);
        assert_eq!(sc.reclaim_mode, ReclaimMode::Single, "active scan: reset");
    });
}

#[test]
fn kswapd_balances_at_the_full_order_and_never_compacts_in_3_3() {
    for (preset, testorder0, compacts) in [("3.3.6", false, false), ("3.4", true, true)] {
        let w = world(0, preset);
        let mut k = w.borrow_mut();
        // Plenty free: compaction could run for order 9.
        let suitable = compaction::compaction_suitable(&k, Z, Some(9)) != CompactResult::Skipped;
        assert!(suitable, "test setup: compaction is suitable at boot");
        let want = if testorder0 { 0 } else { 9 };
        assert_eq!(kswapd_testorder(&k, Z, 9), want, "{preset}");
        // No zone meets its low watermark at order 9: kswapd would compact, if it may.
        for zi in 0..=Z {
            let free = k.zones[zi].free_pages();
            k.zones[zi].watermark[WMARK_LOW] = free;
        }
        let needs = pgdat_needs_compaction(&k, 9, Z, Z);
        assert_eq!(needs, compacts, "{preset}");
        k.sw.set(Switch::KswapdCompactPgdat, !compacts);
        assert_eq!(
            pgdat_needs_compaction(&k, 9, Z, Z),
            !compacts,
            "{preset}: the switch decides"
        );
    }
}

/// A fresh DMA zone as the small zone of the 3.7 kswapd loops: free blocks of order 9 well
/// above its high watermark, but fewer free pages than compaction's low watermark + 2 <<
/// order, so compaction_suitable says SKIPPED.
fn small_zone_compaction_would_skip(k: &mut Kernel) {
    let z = &mut k.zones[ZONE_DMA];
    let free = z.free_pages();
    z.watermark[WMARK_MIN] = 8;
    z.watermark[WMARK_HIGH] = 10;
    z.watermark[WMARK_LOW] = free + 1 - (2 << 9);
}

#[test]
fn before_60cefed4_kswapd_tests_a_zone_by_its_watermark_alone() {
    for (preset, with_fix) in [("3.6-rc1-akpm", false), ("3.9", true)] {
        let w = world(0, preset);
        let mut k = w.borrow_mut();
        small_zone_compaction_would_skip(&mut k);
        assert_eq!(
            compaction::compaction_suitable(&k, ZONE_DMA, Some(9)),
            CompactResult::Skipped,
            "test setup"
        );
        let z = &k.zones[ZONE_DMA];
        assert!(
            zone_watermark_ok(z, 9, z.high_wmark(), ZONE_DMA, 0),
            "test setup"
        );
        assert_eq!(
            zone_balanced(&k, ZONE_DMA, 9, 0, ZONE_DMA),
            !with_fix,
            "{preset}: order 9"
        );
        assert!(
            zone_balanced(&k, ZONE_DMA, 0, 0, ZONE_DMA),
            "{preset}: order 0"
        );
    }
}

#[test]
fn before_c702418f_one_zone_sends_a_high_order_kswapd_back_to_loop_again() {
    let w = world(0, "3.6-rc1-akpm");
    let mut k = w.borrow_mut();
    for zi in 0..=Z {
        k.zones[zi].set_flag(ZONE_CONGESTED);
    }
    // Every zone compactable and above its order-0 high watermark: on to compaction, and
    // the zones passed lose ZONE_CONGESTED.
    assert_eq!(kswapd_recheck_zones(&mut k, 9, Z, DEF_PRIORITY), None);
    assert!((0..=Z).all(|zi| !k.zones[zi].test_flag(ZONE_CONGESTED)));
    assert_eq!(
        kswapd_recheck_zones(&mut k, 0, Z, DEF_PRIORITY),
        None,
        "order 0: no checks"
    );
    // A small zone compaction would skip: again at the same order (fe2c2a10's test).
    small_zone_compaction_would_skip(&mut k);
    k.zones[Z].set_flag(ZONE_CONGESTED);
    assert_eq!(kswapd_recheck_zones(&mut k, 9, Z, DEF_PRIORITY), Some(9));
    assert!(k.zones[Z].test_flag(ZONE_CONGESTED), "stopped at DMA");
    // ... unless it is unreclaimable and kswapd is past its first priority.
    k.zones[ZONE_DMA].all_unreclaimable = true;
    assert_eq!(kswapd_recheck_zones(&mut k, 9, Z, DEF_PRIORITY - 1), None);
    assert_eq!(kswapd_recheck_zones(&mut k, 9, Z, DEF_PRIORITY), Some(9));
    k.zones[ZONE_DMA].all_unreclaimable = false;
    // Without fe2c2a10 (3.3) only the order-0 test is made; DMA is above its high mark.
    k.sw.set(Switch::ReclaimAtOrder0WithCompaction, false);
    assert_eq!(kswapd_recheck_zones(&mut k, 9, Z, DEF_PRIORITY), None);
    // A zone below its order-0 high watermark: again at order 0.
    let free = k.zones[Z].free_pages();
    k.zones[Z].watermark[WMARK_HIGH] = free + 1;
    assert_eq!(kswapd_recheck_zones(&mut k, 9, Z, DEF_PRIORITY), Some(0));
    k.sw.set(Switch::ReclaimAtOrder0WithCompaction, true);
    assert_eq!(
        kswapd_recheck_zones(&mut k, 9, Z, DEF_PRIORITY),
        Some(9),
        "DMA first"
    );
    // 3.7 removed the checks.
    k.sw.set(Switch::KswapdNoPerZoneCompactionRecheck, true);
    assert_eq!(kswapd_recheck_zones(&mut k, 9, Z, DEF_PRIORITY), None);
}

// ---------------------------------------------------------------------------------------
// Seed 002: filesystem writeback from reclaim (3.0 against the series, merged in 3.2)

/// A dirty, unmapped page of a file on an ext4 disk, isolated; direct reclaim (or kswapd at
/// `priority`) runs `shrink_page_list` on it under `preset` with `set` applied. Returns
/// (kept, PG_reclaim set, nr_vmscan_write, the write-skip / immediate-reclaim slot).
fn reclaim_dirty_file_page(
    preset: &str,
    set: &[(Switch, bool)],
    kswapd: bool,
    priority: i32,
) -> (bool, bool, u64, u64) {
    reclaim_dirty_file_page_on("ext4", preset, set, kswapd, priority).0
}

/// Kernel warnings by site.
type Warnings = Vec<(&'static str, u64)>;

/// [`reclaim_dirty_file_page`] on a disk with filesystem `fs`; also returns the kernel
/// warnings of the run.
fn reclaim_dirty_file_page_on(
    fs: &str,
    preset: &str,
    set: &[(Switch, bool)],
    kswapd: bool,
    priority: i32,
) -> ((bool, bool, u64, u64), Warnings) {
    let w = world(0, preset);
    crate::sim::add_test_disk(&w, "sda", fs);
    {
        let mut k = w.borrow_mut();
        for &(s, on) in set {
            k.sw.set(s, on);
        }
    }
    let p = {
        let mut k = w.borrow_mut();
        let pfn = file_pages(&mut k, Lru::InactiveFile, 1)[0];
        page_writeback::set_page_dirty(&mut k, pfn, &mut page_writeback::DirtyTask::default());
        pfn
    };
    let mut list = isolate_all(&mut w.borrow_mut(), &[p]);
    let w2 = w.clone();
    let out = Rc::new(Cell::new((false, false, 0, 0)));
    let out2 = out.clone();
    run_task(&w, 1, async move {
        let mut sc = sc_at(priority, kswapd);
        let mut st = PageListStats::default();
        shrink_page_list(&w2, Z, &mut sc, &mut list, &mut st).await;
        let mut k = w2.borrow_mut();
        out2.set((
            list.len() == 1,
            k.pages.test(p, PG_RECLAIM),
            k.global_stat(ZoneStat::nr_vmscan_write),
            k.global_stat(ZoneStat::nr_vmscan_immediate_reclaim),
        ));
        putback_inactive_pages(&mut k, Z, &list);
    });
    let warnings = w.borrow().warnings.iter().map(|(s, n)| (*s, *n)).collect();
    (out.get(), warnings)
}

#[test]
fn xfs_and_ext4_warn_when_direct_reclaim_calls_their_writepage_which_only_3_0_does() {
    let cases = [
        ("xfs", "xfs_vm_writepage: called from direct reclaim"),
        ("ext4", "ext4_writepage: delayed page from direct reclaim"),
    ];
    for (fs, site) in cases {
        let (_, warnings) = reclaim_dirty_file_page_on(fs, "3.0", &[], false, DEF_PRIORITY);
        assert_eq!(warnings, vec![(site, 1)], "{fs} under 3.0");
        let (_, warnings) =
            reclaim_dirty_file_page_on(fs, "nowriteback-v3", &[], false, DEF_PRIORITY);
        assert!(warnings.is_empty(), "{fs}: the series never calls it");
        // kswapd may call it: no warning.
        let (_, warnings) = reclaim_dirty_file_page_on(fs, "3.0", &[], true, DEF_PRIORITY);
        assert!(warnings.is_empty(), "{fs} from kswapd");
    }
    // ext2 writes for any reclaimer and never warns.
    let (_, warnings) = reclaim_dirty_file_page_on("ext2", "3.0", &[], false, DEF_PRIORITY);
    assert!(warnings.is_empty());
}

#[test]
fn direct_reclaim_writes_a_dirty_file_page_in_3_0_and_keeps_it_with_patch_1() {
    // 3.0: pageout writes it (PG_reclaim set for the write), nothing skipped.
    let (kept, _, written, skipped) = reclaim_dirty_file_page("3.0", &[], false, DEF_PRIORITY);
    assert!(kept, "under writeback, kept");
    assert_eq!((written, skipped), (1, 0));
    // Patch 1: kept unwritten and counted; without patch 7, no PG_reclaim.
    let p1 = [(Switch::DirectReclaimNoFsWriteback, true)];
    let (kept, reclaim, written, skipped) =
        reclaim_dirty_file_page("3.0", &p1, false, DEF_PRIORITY);
    assert!(kept && !reclaim);
    assert_eq!((written, skipped), (0, 1));
    // Patch 7 as well: PG_reclaim, so the flusher's write rotates it to the tail.
    let p17 = [p1[0], (Switch::ImmediateReclaimDirtyLruTail, true)];
    let (kept, reclaim, written, skipped) =
        reclaim_dirty_file_page("3.0", &p17, false, DEF_PRIORITY);
    assert!(kept && reclaim);
    assert_eq!((written, skipped), (0, 1));
    assert_eq!(
        reclaim_dirty_file_page("nowriteback-v3", &[], false, DEF_PRIORITY),
        (true, true, 0, 1)
    );
}

#[test]
fn kswapd_writes_dirty_file_pages_at_any_priority_in_3_0_and_below_priority_10_with_patch_5() {
    for priority in [DEF_PRIORITY, DEF_PRIORITY - 2, DEF_PRIORITY - 3] {
        let (_, _, written, skipped) = reclaim_dirty_file_page("3.0", &[], true, priority);
        assert_eq!((written, skipped), (1, 0), "3.0, priority {priority}");
        let raised = priority < DEF_PRIORITY - 2;
        let (_, _, written, skipped) =
            reclaim_dirty_file_page("nowriteback-v3", &[], true, priority);
        assert_eq!(
            (written, skipped),
            if raised { (1, 0) } else { (0, 1) },
            "series, priority {priority}"
        );
    }
}

/// xfs_vm_writepage from kswapd's `pageout` clusters the dirty pages that follow the page
/// in the file into its write (`xfs_cluster_write`, `nr_to_write` = 32): one `pageout`,
/// many pages under writeback, stopping at a clean or locked page, the file's end, 32
/// pages, or (mmsim) a request pool that could make the next bio wait. ext3 writes the one
/// page.
#[test]
fn kswapd_pageout_on_xfs_writes_the_dirty_pages_that_follow_the_page() {
    struct Case {
        fs: &'static str,
        chosen: usize,
        clean_at: Option<usize>,
        locked_at: Option<usize>,
        size: u64,
        pool_full: bool,
        after: usize,
    }
    let xfs = Case {
        fs: "xfs",
        chosen: 0,
        clean_at: None,
        locked_at: None,
        size: 40,
        pool_full: false,
        after: 32,
    };
    let cases = [
        Case {
            clean_at: Some(10),
            after: 9,
            ..xfs
        },
        Case {
            locked_at: Some(5),
            after: 4,
            ..xfs
        },
        Case {
            size: 20,
            after: 19,
            ..xfs
        },
        Case { chosen: 3, ..xfs },
        Case {
            pool_full: true,
            after: 0,
            ..xfs
        },
        Case {
            fs: "ext3",
            after: 0,
            ..xfs
        },
        xfs,
    ];
    for c in cases {
        let w = world(0, "3.0");
        crate::sim::add_test_disk(&w, "sda", c.fs);
        let pages = {
            let mut k = w.borrow_mut();
            let pages = file_pages(&mut k, Lru::InactiveFile, 40);
            let ino = k.pages.mapping[pages[0] as usize] as usize;
            k.inodes[ino].size_pages = c.size;
            for (i, &pfn) in pages.iter().enumerate() {
                if Some(i) != c.clean_at {
                    let mut task = page_writeback::DirtyTask::default();
                    page_writeback::set_page_dirty(&mut k, pfn, &mut task);
                }
                if Some(i) == c.locked_at {
                    k.pages.set(pfn, PG_LOCKED);
                }
            }
            if c.pool_full {
                // Requests far from the file, one short of filling the async pool: the
                // chosen page's bio takes the last, and none is left for the next.
                let bdi = k.inodes[ino].bdi;
                let nr = u64::from(k.bdis[bdi].queue.config().nr_requests);
                for i in 0..nr - 1 {
                    let bio = crate::block::Bio {
                        dir: crate::block::Dir::Write,
                        sync: false,
                        sector: (1 << 30) + i * 64,
                        nr_sectors: 8,
                        tag: u64::MAX,
                    };
                    k.bdis[bdi].queue.submit_bio(bio, 0);
                }
            }
            pages
        };
        let mut list = isolate_all(&mut w.borrow_mut(), &pages[c.chosen..=c.chosen]);
        let w2 = w.clone();
        run_task(&w, 1, async move {
            let mut sc = sc_at(DEF_PRIORITY, true);
            let mut st = PageListStats::default();
            shrink_page_list(&w2, Z, &mut sc, &mut list, &mut st).await;
            let mut k = w2.borrow_mut();
            let case = (c.fs, c.chosen, c.clean_at, c.locked_at, c.size, c.pool_full);
            assert_eq!(k.global_stat(ZoneStat::nr_vmscan_write), 1, "{case:?}");
            let last = c.chosen + c.after;
            for (i, &p) in pages.iter().enumerate() {
                let written = (c.chosen..=last).contains(&i);
                assert_eq!(k.pages.test(p, PG_WRITEBACK), written, "{case:?}: page {i}");
                let dirty = !written && Some(i) != c.clean_at;
                assert_eq!(k.pages.test(p, PG_DIRTY), dirty, "{case:?}: page {i}");
            }
            // Only the page reclaim chose is marked for immediate reclaim.
            let reclaim = |i: usize| k.pages.test(pages[i], PG_RECLAIM);
            assert!(reclaim(c.chosen) && !reclaim(c.chosen + 1), "{case:?}");
            putback_inactive_pages(&mut k, Z, &list);
        });
    }
}

#[test]
fn kswapd_never_writes_dirty_file_pages_with_v2_patch_8() {
    let p8 = [(Switch::KswapdNoFsWriteback, true)];
    for priority in [DEF_PRIORITY, DEF_PRIORITY - 3, 0] {
        // Over the series (patch 7 in): kept unwritten, counted and marked PG_reclaim.
        assert_eq!(
            reclaim_dirty_file_page("nowriteback-v3", &p8, true, priority),
            (true, true, 0, 1),
            "series + patch 8, priority {priority}"
        );
        // Over 3.0 alone it overrides 3.0's kswapd too (no patch 7: no PG_reclaim).
        let (kept, reclaim, written, skipped) = reclaim_dirty_file_page("3.0", &p8, true, priority);
        assert!(kept && !reclaim, "3.0 + patch 8, priority {priority}");
        assert_eq!((written, skipped), (0, 1));
    }
    // Direct reclaim is patch 1's business: patch 8 alone leaves 3.0's writing it.
    let (_, _, written, skipped) = reclaim_dirty_file_page("3.0", &p8, false, DEF_PRIORITY);
    assert_eq!((written, skipped), (1, 0));
    // No preset carries it: V3, the published series, has seven patches.
    for preset in crate::presets::PRESETS {
        assert!(
            !switches(preset.name).on(Switch::KswapdNoFsWriteback),
            "{}",
            preset.name
        );
    }
}

#[test]
fn only_patch_6_throttles_reclaim_on_pages_under_writeback() {
    let w = world(256, "3.0");
    let mut k = w.borrow_mut();
    for kswapd in [true, false] {
        k.sw = switches("3.0");
        assert_eq!(decide(&mut k, 12, kswapd, wb(TAKEN)), (false, None, 0));
        k.sw.set(Switch::ThrottleReclaimOnWriteback, true);
        assert_eq!(
            decide(&mut k, 12, kswapd, wb(TAKEN)),
            (false, Some(HZ_10), 0)
        );
        k.sw = switches("nowriteback-v3");
        assert_eq!(
            decide(&mut k, 12, kswapd, wb(TAKEN)),
            (false, Some(HZ_10), 0)
        );
    }
}

#[test]
fn the_synchronous_pass_of_3_0_waits_for_the_write_pageout_started_and_frees_the_page() {
    for (preset, waits) in [("3.0", true), ("nowriteback-v3", false)] {
        let w = world(256, preset);
        let w2 = w.clone();
        run_task(&w, 5 * SEC, async move {
            let w = w2;
            let (pfns, mut list) = faulted_and_isolated(&w).await;
            let mut sc = direct_at(9, DEF_PRIORITY);
            sc.set_reclaim_mode(true);
            let mut st = PageListStats::default();
            let t0 = w.borrow().sched.now();
            let freed = shrink_page_list(&w, Z, &mut sc, &mut list, &mut st).await;
            let mut k = w.borrow_mut();
            if waits {
                assert_eq!(freed, N as u64, "{preset}: written, waited on, freed");
                assert!(k.sched.now() > t0);
                k.zones[Z].mod_stat(ZoneStat::nr_isolated_anon, -(N as i64));
            } else {
                assert_eq!(freed, 0, "{preset}: written and kept");
                assert_eq!(k.sched.now(), t0);
                for &p in &pfns {
                    assert!(k.pages.test(p, PG_WRITEBACK));
                }
                putback(&mut k, &list);
            }
        });
        invariants::check(&w.borrow()).unwrap();
    }
}

#[test]
fn before_3_3_shared_and_executable_file_pages_get_a_second_trip_like_any_other() {
    for (preset, activate) in [("3.0", false), ("3.3.6", true), ("3.9", true)] {
        let w = world(256, preset);
        let mut k = w.borrow_mut();
        let want = if activate {
            PageReferences::Activate
        } else {
            PageReferences::Keep
        };
        // Young in two mappings (34dbc67a).
        let (p, _, _) = mapped_file_page(&mut k, Lru::InactiveFile, true, 0);
        map_file_page(&mut k, p, true, 0);
        assert_eq!(page_check_references(&mut k, p), want, "{preset}: shared");
        // Young in an executable mapping (c909e993).
        let (x, _, _) = mapped_file_page(&mut k, Lru::InactiveFile, true, VM_EXEC);
        assert_eq!(page_check_references(&mut k, x), want, "{preset}: exec");
        // Anonymous pages are activated in every release.
        let (_, _, anon) = anon_pages(&mut k, Lru::InactiveAnon, 1, true, 0);
        assert_eq!(
            page_check_references(&mut k, anon[0]),
            PageReferences::Activate
        );
    }
}

#[test]
fn kswapd_naps_in_congestion_wait_below_priority_10_before_258401a6() {
    let w = world(256, "3.0");
    let mut k = w.borrow_mut();
    let nap = |k: &mut Kernel, scanned, priority| {
        super::kswapd::kswapd_congestion_nap(k, 0, Z, scanned, priority)
    };
    assert!(nap(&mut k, 1, DEF_PRIORITY - 3));
    assert!(!nap(&mut k, 1, DEF_PRIORITY - 2), "only below priority 10");
    assert!(!nap(&mut k, 0, DEF_PRIORITY - 3), "only if it scanned");
    assert_eq!(k.events.get(VmEvent::kswapd_skip_congestion_wait), 0);
    // A zone below its min watermark: no nap, counted.
    let free = k.zones[Z].free_pages();
    k.zones[Z].watermark[WMARK_MIN] = free + 1;
    assert!(!nap(&mut k, 1, DEF_PRIORITY - 3));
    assert_eq!(k.events.get(VmEvent::kswapd_skip_congestion_wait), 1);
    k.zones[Z].watermark[WMARK_MIN] = 0;
    k.sw = switches("3.9");
    assert!(!nap(&mut k, 1, DEF_PRIORITY - 3), "3.9 never naps here");
}

#[test]
fn kswapd_may_writepage_by_scanning_ratio_before_3_9_and_by_priority_in_3_9() {
    let w = world(256, "3.0");
    let mut k = w.borrow_mut();
    let may = |k: &Kernel, scanned: u64, reclaimed: u64, priority: i32| {
        let mut sc = sc_at(priority, true);
        sc.nr_reclaimed = reclaimed;
        super::kswapd::kswapd_may_writepage(k, scanned, &sc)
    };
    // 3.0: more than 64 scanned and more than 1.5x reclaimed, at any priority.
    assert!(may(&k, 65, 43, DEF_PRIORITY));
    assert!(!may(&k, 64, 0, DEF_PRIORITY), "64 is not more than 64");
    assert!(
        !may(&k, 66, 44, DEF_PRIORITY),
        "66 is not more than 44 + 22"
    );
    assert!(!may(&k, 0, 0, 0));
    k.sw = switches("3.9");
    assert!(!may(&k, 1000, 0, DEF_PRIORITY - 2));
    assert!(may(&k, 0, 0, DEF_PRIORITY - 3));
}

#[test]
fn proc_vmstat_names_the_reclaim_skip_slot_and_the_nap_counter_as_each_kernel_did() {
    let names = |preset: &str, set: &[(Switch, bool)]| -> Vec<String> {
        let w = world(0, preset);
        let mut k = w.borrow_mut();
        for &(s, on) in set {
            k.sw.set(s, on);
        }
        k.proc_vmstat().into_iter().map(|(n, _)| n).collect()
    };
    let has = |v: &[String], n: &str| v.iter().any(|x| x == n);
    let old = names("3.0", &[]);
    assert!(!has(&old, "nr_vmscan_immediate_reclaim") && !has(&old, "nr_vmscan_write_skip"));
    assert!(has(&old, "kswapd_skip_congestion_wait"));
    let p1 = names("3.0", &[(Switch::DirectReclaimNoFsWriteback, true)]);
    assert!(has(&p1, "nr_vmscan_write_skip"));
    let series = names("nowriteback-v3", &[]);
    assert!(has(&series, "nr_vmscan_immediate_reclaim") && !has(&series, "nr_vmscan_write_skip"));
    let new = names("3.9", &[]);
    assert!(has(&new, "nr_vmscan_immediate_reclaim"));
    assert!(!has(&new, "kswapd_skip_congestion_wait"));
    assert_eq!(
        new.len(),
        old.len(),
        "3.0 drops one slot and adds one event"
    );
}

#[test]
fn a_page_list_keeps_32_pages_inline_and_the_rest_beyond_in_order() {
    let mut list = PageList::default();
    assert!(list.is_empty());
    for p in 0..40 {
        list.push(1000 + p);
    }
    assert!(!list.is_empty());
    assert_eq!(list.len(), 40);
    for i in 0..40 {
        assert_eq!(list.get(i), 1000 + i as Pfn);
    }
    // Drop the third page and keep the rest, as shrink_page_list compacts its survivors:
    // every later page moves down one place, across the inline edge too.
    let mut kept = 0;
    for i in 0..40 {
        let p = list.get(i);
        if p != 1002 {
            list.set(kept, p);
            kept += 1;
        }
    }
    list.truncate(kept);
    let want: Vec<Pfn> = (0..40).map(|p| 1000 + p).filter(|&p| p != 1002).collect();
    assert_eq!(list.iter().collect::<Vec<_>>(), want);
    assert_eq!(list.len(), 39);
    assert_eq!(
        (list.get(31), list.get(32), list.get(38)),
        (1032, 1033, 1039)
    );
    list.truncate(0);
    assert!(list.is_empty() && list.iter().next().is_none());
}

#[test]
fn set_reclaim_mode_keeps_order_3_single_at_high_priority() {
    let mut sc = direct_at(3, DEF_PRIORITY);
    sc.set_reclaim_mode(true);
    assert_eq!(
        (sc.reclaim_mode, sc.reclaim_sync),
        (ReclaimMode::Single, false)
    );
}

#[test]
fn lumpy_isolation_finds_the_block_of_a_page_in_its_middle() {
    const ORDER: u32 = 3;
    let w = world(0, "3.3.6");
    let mut k = w.borrow_mut();
    let k = &mut *k;
    let (_, block) = lumpy_setup(k, ORDER);
    // Rotate the list until its tail is the block's sixth page.
    let list = Lru::InactiveFile as usize;
    while k.zones[Z].lruvec.lists[list].tail != block[5] {
        let t = k.zones[Z].lruvec.lists[list].tail;
        k.zones[Z].lruvec.lists[list].del(&mut k.pages, t);
        k.zones[Z].lruvec.lists[list].add(&mut k.pages, t);
    }
    let (got, _) = lumpy_take(k, ORDER, Lru::InactiveFile);
    assert_eq!(got, block);
}

#[test]
fn lumpy_isolation_gives_up_at_an_anonymous_page_that_cannot_be_swapped() {
    const ORDER: u32 = 2;
    for (swap_mib, whole) in [(0, false), (256, true)] {
        let w = world(swap_mib, "3.3.6");
        let mut k = w.borrow_mut();
        let (_, _, pages) = anon_pages(&mut k, Lru::InactiveAnon, 32, false, 0);
        // An aligned block of anonymous pages (page tables sit between some), its first
        // page rotated to the list's tail.
        let start = pages
            .iter()
            .map(|&p| p & !((1 << ORDER) - 1))
            .find(|&s| (s..s + (1 << ORDER)).all(|p| pages.contains(&p)))
            .expect("test setup: a whole block of anonymous pages");
        let block: Vec<Pfn> = (start..start + (1 << ORDER)).collect();
        let k2 = &mut *k;
        let list = Lru::InactiveAnon as usize;
        while k2.zones[Z].lruvec.lists[list].tail != start {
            let t = k2.zones[Z].lruvec.lists[list].tail;
            k2.zones[Z].lruvec.lists[list].del(&mut k2.pages, t);
            k2.zones[Z].lruvec.lists[list].add(&mut k2.pages, t);
        }
        let tail = start;
        let (got, _) = lumpy_take(&mut k, ORDER, Lru::InactiveAnon);
        let want = if whole { block.clone() } else { vec![tail] };
        assert_eq!(got, want, "swap {swap_mib} MiB");
    }
}

#[test]
fn lumpy_isolation_passes_over_free_frames_and_gives_up_at_an_isolated_page() {
    const ORDER: u32 = 3;
    for isolated in [false, true] {
        let w = world(0, "3.3.6");
        let mut k = w.borrow_mut();
        let k = &mut *k;
        let (_, block) = lumpy_setup(k, ORDER);
        let tail = k.zones[Z].lruvec.lists[Lru::InactiveFile as usize].tail;
        // The block's fourth page other than the tail: freed, or taken by another reclaimer.
        let other = block.iter().copied().filter(|&p| p != tail).nth(3).unwrap();
        k.zones[Z].lruvec.lists[Lru::InactiveFile as usize].del(&mut k.pages, other);
        k.zones[Z].mod_stat(ZoneStat::nr_inactive_file, -1);
        k.pages.clear(other, PG_LRU);
        if isolated {
            k.pages.set(other, PG_ISOLATED);
        } else {
            crate::mm::filemap::delete_from_page_cache(k, other);
            // Its last reference goes: no state left (the LRU bits included).
            k.pages.flags[other as usize] = 0;
            crate::mm::page_alloc::free_page(k, other);
            assert_eq!(
                k.pages.flags[other as usize], PG_PCP,
                "test setup: a free frame"
            );
        }
        let (got, scanned) = lumpy_take(k, ORDER, Lru::InactiveFile);
        let mut want: Vec<Pfn> = if isolated {
            block.iter().copied().take_while(|&p| p != other).collect()
        } else {
            block.iter().copied().filter(|&p| p != other).collect()
        };
        if !want.contains(&tail) {
            want.push(tail);
            want.sort_unstable();
        }
        assert_eq!(got, want, "isolated = {isolated}");
        assert_eq!(
            scanned,
            want.len() as u64,
            "free frames do not count as scanned"
        );
    }
}

#[test]
fn lumpy_isolation_steps_over_a_free_buddy_block_whole() {
    const ORDER: u32 = 3;
    let w = world(0, "3.3.6");
    let mut k = w.borrow_mut();
    let k = &mut *k;
    let (_, block) = lumpy_setup(k, ORDER);
    let tail = k.zones[Z].lruvec.lists[Lru::InactiveFile as usize].tail;
    // An aligned pair of the block's pages, neither the tail, freed: they merge into one
    // free order-1 block.
    let pair = [2usize, 4, 6]
        .into_iter()
        .map(|i| [block[i], block[i + 1]])
        .find(|p| !p.contains(&tail))
        .unwrap();
    for p in pair {
        k.zones[Z].lruvec.lists[Lru::InactiveFile as usize].del(&mut k.pages, p);
        k.zones[Z].mod_stat(ZoneStat::nr_inactive_file, -1);
        crate::mm::filemap::delete_from_page_cache(k, p);
        k.pages.flags[p as usize] = 0;
        crate::mm::page_alloc::free_page(k, p);
    }
    crate::mm::page_alloc::drain_all_pages(k);
    assert!(k.pages.test(pair[0], PG_BUDDY), "test setup: merged");
    assert_eq!(k.pages.mapping[pair[0] as usize], 1, "test setup: order 1");
    let (got, _) = lumpy_take(k, ORDER, Lru::InactiveFile);
    let want: Vec<Pfn> = block
        .iter()
        .copied()
        .filter(|p| !pair.contains(p))
        .collect();
    assert_eq!(got, want);
}

/// `kernel-memcg.md` §7, e62e384e: limit reclaim meeting a page under writeback that it
/// marked before waits for the IO and frees the page; global reclaim, and limit reclaim
/// before 3.6, mark it and move on.
#[test]
fn limit_reclaim_waits_on_writeback_it_met_before() {
    for (preset, memcg, waits) in [
        ("3.9", true, true),
        ("3.9", false, false),
        ("3.5", true, false),
    ] {
        let w = world(256, preset);
        let w2 = w.clone();
        let done = Rc::new(Cell::new(false));
        let d2 = done.clone();
        run_task(&w, 5 * SEC, async move {
            let w = w2;
            let (_pfns, mut list) = faulted_and_isolated(&w).await;
            let mut sc = sc_at(DEF_PRIORITY, false);
            sc.target_mem_cgroup = memcg.then_some(0);
            let mut st = PageListStats::default();
            // First meeting: swapped out, under writeback, PG_reclaim.
            assert_eq!(
                shrink_page_list(&w, Z, &mut sc, &mut list, &mut st).await,
                0
            );
            let t0 = w.borrow().sched.now();
            let mut st = PageListStats::default();
            let freed = shrink_page_list(&w, Z, &mut sc, &mut list, &mut st).await;
            let waited = w.borrow().sched.now() > t0;
            assert_eq!(waited, waits, "{preset} memcg={memcg}");
            if waits {
                assert_eq!(freed, N as u64, "written, then freed");
                assert_eq!(st.nr_writeback, 0);
            } else {
                assert_eq!(freed, 0);
                assert_eq!(st.nr_writeback, N as u64, "marked and kept");
            }
            d2.set(true);
        });
        assert!(done.get(), "{preset}: the test task finished");
    }
}

/// A page `pageout` writes costs `PAGEOUT_NS` beyond the page's other reclaim work; a
/// page it does not reach `writepage` for costs nothing more.
#[test]
fn a_page_reclaim_writes_costs_the_pageout() {
    let mut spent = Vec::new();
    for pageout_ns in [0, 5_000] {
        let w = world_with_swap_on_sda("3.9");
        let mut k = w.borrow_mut();
        k.costs.pageout = pageout_ns;
        let (_, _, pfns) = anon_pages(&mut k, Lru::InactiveAnon, 1, false, 0);
        let clean = file_pages(&mut k, Lru::InactiveFile, 1);
        let list = isolate_all(&mut k, &[pfns[0], clean[0]]);
        let mut sc = sc_at(DEF_PRIORITY, true);
        let mut st = PageListStats::default();
        let v = shrink_one_page(&mut k, Z, &mut sc, &mut st, list.get(0), false);
        assert_eq!(v, Verdict::Keep, "written, under writeback");
        assert!(k.pages.test(pfns[0], PG_WRITEBACK));
        let written = sc.cpu;
        let v = shrink_one_page(&mut k, Z, &mut sc, &mut st, list.get(1), false);
        assert_eq!(v, Verdict::Free);
        spent.push((written, sc.cpu - written));
    }
    assert_eq!(spent[1].0, spent[0].0 + 5_000, "{spent:?}");
    assert_eq!(spent[1].1, spent[0].1, "a clean page: {spent:?}");
}
