use super::*;

fn holds(t: &Table, extra: Option<&Extra>) -> Vec<(&'static str, &'static str)> {
    claims(t, extra)
        .iter()
        .map(|v| (v.id, v.outcome()))
        .collect()
}

#[test]
fn the_published_table_passes_m1_to_m6() {
    let got = holds(&PUBLISHED, None);
    assert_eq!(
        got,
        vec![
            ("M1", "holds"),
            ("M2", "holds"),
            ("M3", "holds"),
            ("M4", "holds"),
            ("M5", "holds"),
            ("M6", "holds"),
            ("M7", "not judged"),
        ]
    );
}

/// The published table with one row's mean scaled.
fn perturbed(c: Config, k: usize, m: usize, by: f64) -> Table {
    let mut t = PUBLISHED.clone();
    t.rows[c.index()][k][m].avg *= by;
    t
}

#[test]
fn each_claim_fails_on_a_table_perturbed_against_it() {
    let fails = |t: &Table, id: &str| {
        claims(t, None)
            .iter()
            .any(|v| v.id == id && v.outcome() == "FAILS")
    };
    // M1: the rework's no-limit elapsed 10% up.
    assert!(fails(&perturbed(Config::NoLimit, 1, 2, 1.1), "M1"));
    // M2: the rework's 0-limit elapsed doubled (61%).
    assert!(fails(&perturbed(Config::ZeroLimit, 1, 2, 2.0), "M2"));
    // M3: major faults of the rework 4x (11.5% of base); minor 10% down.
    assert!(fails(&perturbed(Config::ZeroLimit, 1, 4, 4.0), "M3"));
    assert!(fails(&perturbed(Config::ZeroLimit, 1, 3, 0.9), "M3"));
    // M4: base's 0-limit elapsed halved (1.75x its no-limit).
    assert!(fails(&perturbed(Config::ZeroLimit, 0, 2, 0.5), "M4"));
    // M5: the rework's system time above base's.
    assert!(fails(&perturbed(Config::Stream, 1, 1, 1.1), "M5"));
    assert!(fails(&perturbed(Config::Stream, 1, 2, 1.1), "M5"));
    // M6: the rework swapping a fifth of base's peak.
    let mut t = PUBLISHED.clone();
    t.swap[1].0 = 0.2 * t.swap[0].0;
    assert!(fails(&t, "M6"));
}

#[test]
fn m6_and_m3_are_not_judged_when_base_never_swapped_or_faulted() {
    let mut t = PUBLISHED.clone();
    t.swap = [(0.0, 0.0), (0.0, 0.0)];
    t.rows[Config::ZeroLimit.index()][0][4].avg = 0.0;
    let v = claims(&t, None);
    assert_eq!(v[5].outcome(), "not judged");
    assert_eq!(v[2].outcome(), "not judged");
}

#[test]
fn m7_needs_a_sooner_fill_repeated_drops_under_base_and_none_under_the_rework() {
    let ok = Extra {
        fill_seconds: [180.0, 130.0],
        drops: [3.0, 0.0],
    };
    let m7 = |x: &Extra| claims(&PUBLISHED, Some(x))[6].outcome();
    assert_eq!(m7(&ok), "holds");
    let later = Extra {
        fill_seconds: [130.0, 180.0],
        ..ok.clone()
    };
    assert_eq!(m7(&later), "FAILS");
    let as_soon = Extra {
        fill_seconds: [130.0, 130.0],
        ..ok.clone()
    };
    assert_eq!(m7(&as_soon), "FAILS");
    let once = Extra {
        drops: [1.0, 0.0],
        ..ok.clone()
    };
    assert_eq!(m7(&once), "FAILS");
    let rework_drops = Extra {
        drops: [3.0, 0.5],
        ..ok
    };
    assert_eq!(m7(&rework_drops), "FAILS");
    // A mem_eater not full by the end of a run fills later than any that is.
    let base_never = Extra {
        fill_seconds: [f64::INFINITY, 130.0],
        drops: [3.0, 0.0],
    };
    assert_eq!(m7(&base_never), "holds");
    let rework_never = Extra {
        fill_seconds: [130.0, f64::INFINITY],
        ..base_never.clone()
    };
    assert_eq!(m7(&rework_never), "FAILS");
    let neither = Extra {
        fill_seconds: [f64::INFINITY; 2],
        ..base_never
    };
    assert_eq!(m7(&neither), "FAILS");
}

#[test]
fn a_fill_time_prints_in_seconds_or_as_never() {
    assert_eq!(fill(132.933), "132.93 s");
    assert_eq!(
        fill(f64::INFINITY),
        "never (still filling when a run ended)"
    );
}

#[test]
fn drops_count_falls_below_half_the_median_after_reaching_it() {
    // Ramp-up below half the median is not a drop; two dips are.
    let usage = [0.0, 1.0, 10.0, 10.0, 4.0, 3.0, 10.0, 10.0, 2.0, 10.0, 10.0];
    assert_eq!(drops(&usage), 2);
    // Exactly half the median is not below it.
    assert_eq!(drops(&[10.0, 10.0, 5.0, 10.0, 10.0]), 0);
    assert_eq!(drops(&[10.0, 10.0, 4.9, 10.0, 10.0]), 1);
    assert_eq!(drops(&[10.0; 5]), 0);
    assert_eq!(drops(&[]), 0);
}

#[test]
fn the_fast_procedure_is_short_and_says_so() {
    let f = Procedure::fast();
    assert_eq!(
        (f.units, f.test2_ram_mb, f.boots),
        (DISTRO_UNITS / 8, 8192, 1)
    );
    assert!(f.describe().contains("Caveat"));
    let p = Procedure {
        seed: 7,
        ..Procedure::published()
    };
    assert_eq!((p.units, p.test2_ram_mb, p.boots), (DISTRO_UNITS, 16384, 3));
    assert!(
        !p.describe().contains("Caveat"),
        "another seed is the same procedure"
    );
    assert!(p.describe().contains("seeds 7 to 9"));
    assert_eq!(runs(&p).len(), 3 * 3 * 2);
}

#[test]
fn stats_are_min_max_mean_and_population_std() {
    let s = Stats::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
    assert_eq!((s.min, s.max, s.avg, s.std), (2.0, 9.0, 5.0, 2.0));
    assert!(Stats::of(&[]).avg.is_nan());
}

#[test]
fn fidelity_leaves_out_the_calibrated_rows() {
    let cells = compared(&PUBLISHED);
    let calibrated: Vec<&str> = cells
        .iter()
        .filter(|c| c.calibrated)
        .map(|c| c.label.as_str())
        .collect();
    // No-limit User and 0-limit Minor, four statistics, two kernels.
    assert_eq!(calibrated.len(), 16);
    assert!(calibrated
        .iter()
        .all(|l| l.starts_with("test1-no-limit User") || l.starts_with("test1-0-limit Minor")));
    let f = Fidelity::of(&cells);
    assert_eq!(f.within_2x, f.cells);
}

#[test]
fn the_scenarios_load_with_pinned_builds_and_a_background_eater() {
    let p = Procedure::published();
    for c in Config::ALL {
        let s = crate::scenario::load_str(&p.scenario_toml(c), "<t>", c.id()).unwrap();
        assert_eq!(s.cgroups.len(), 2);
        match c {
            Config::Stream => {
                assert_eq!(s.machine.ram, 16 << 30);
                assert!(s.workloads[1].background);
                assert!(!s.workloads[0].background);
                let crate::scenario::WorkloadKind::Dd(dd) = &s.workloads[0].kind else {
                    panic!("dd first");
                };
                assert_eq!((dd.size, dd.bs), (32 << 30, 1024));
            }
            _ => {
                assert_eq!(s.machine.cpus, 32);
                for w in &s.workloads {
                    assert_eq!(w.cpus, (0..8).collect::<Vec<u32>>());
                }
            }
        }
        let soft = s.cgroups[0].soft_limit_in_bytes;
        assert_eq!(soft == Some(0), c != Config::NoLimit, "{c:?}");
    }
}
