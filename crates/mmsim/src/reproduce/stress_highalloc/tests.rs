//! The claims judged on the published figures and on perturbed ones, the table's layout,
//! and a small whole run of the procedure.

use super::*;
use crate::report::mmtests::Cell;
use crate::reproduce::verdict_summary;

/// An outcome with the given passes and the letter's vmstat rows empty.
fn outcome(success: [f64; 3]) -> Outcome {
    Outcome {
        success: success.map(Some),
        vmstat: Vec::new(),
        hugetlb_after_dd: None,
        elapsed: 0.0,
    }
}

/// Every column of a `--versions` reproduction with its published figures as the
/// simulated ones. C4's reclaim rows: the letter's for the series, and for 3.3.6 the
/// 71,881 pages swapped quoted in the series' letters and, as its Kswapd pages reclaimed
/// are not published, 3x the series'.
fn published_runs() -> Vec<(Column, Outcome)> {
    columns(true)
        .into_iter()
        .map(|c| {
            let mut o = outcome(c.published);
            let reclaim = match c.label {
                "full-series" => Some((0, 1484629)),
                "3.3.6" => Some((71881, 3 * 1484629)),
                _ => None,
            };
            if let Some((swap_outs, kswapd)) = reclaim {
                o.vmstat = vec![
                    ("Swap Outs".into(), Cell::Int(swap_outs)),
                    ("Kswapd pages reclaimed".into(), Cell::Int(kswapd)),
                ];
            }
            (c, o)
        })
        .collect()
}

fn set_vm(runs: &mut [(Column, Outcome)], label: &str, row: &str, value: i64) {
    let o = &mut runs.iter_mut().find(|(c, _)| c.label == label).unwrap().1;
    o.vmstat.retain(|(r, _)| r != row);
    o.vmstat.push((row.into(), Cell::Int(value)));
}

fn verdict<'a>(v: &'a [Verdict], id: &str) -> &'a Verdict {
    v.iter().find(|v| v.id == id).expect("the claim exists")
}

fn set(runs: &mut [(Column, Outcome)], label: &str, pass: usize, value: f64) {
    let o = &mut runs.iter_mut().find(|(c, _)| c.label == label).unwrap().1;
    o.success[pass] = Some(value);
}

#[test]
fn the_published_figures_meet_every_judged_claim() {
    let v = claims(&published_runs());
    for id in ["C1", "C2", "C3", "C4", "C5", "C6"] {
        assert_eq!(verdict(&v, id).outcome(), "holds", "{id}");
    }
    assert_eq!(verdict_summary(&v), "6 of 6 claims hold");
}

#[test]
fn each_claim_fails_on_a_table_perturbed_against_it() {
    let cases: [(&str, &str, usize, f64); 9] = [
        ("C1", "full-series", 0, 43.0),
        ("C2", "full-series", 1, 51.0),
        ("C3", "full-series", 2, 74.0),
        ("C3", "3.6-rc1-akpm", 2, 92.0),
        ("C4", "3.3.6", 0, 60.0),
        ("C4", "full-series", 0, 69.0),
        ("C5", "3.4", 0, 54.0),
        ("C6", "v1-1-5", 0, 11.0),
        ("C6", "v1-1-6", 0, 29.0),
    ];
    for (id, label, pass, value) in cases {
        let mut runs = published_runs();
        set(&mut runs, label, pass, value);
        let v = claims(&runs);
        assert_eq!(
            verdict(&v, id).outcome(),
            "FAILS",
            "{id} with {label} = {value}"
        );
    }
    // C4's reclaim rows: 3.3.6 below 3x the series' (or 3 when the series' is 0).
    for (row, value) in [
        ("Swap Outs", 2),
        ("Kswapd pages reclaimed", 3 * 1484629 - 1),
    ] {
        let mut runs = published_runs();
        set_vm(&mut runs, "3.3.6", row, value);
        assert_eq!(
            verdict(&claims(&runs), "C4").outcome(),
            "FAILS",
            "{row} = {value}"
        );
    }
    // At the bounds they still hold.
    let mut runs = published_runs();
    set(&mut runs, "full-series", 0, 44.0);
    set(&mut runs, "full-series", 1, 52.0);
    set(&mut runs, "v1-1-5", 0, 10.0);
    set(&mut runs, "v1-1-6", 0, 40.0);
    set(&mut runs, "3.4", 0, 53.0);
    set_vm(&mut runs, "3.3.6", "Swap Outs", 3);
    let v = claims(&runs);
    for id in ["C1", "C2", "C4", "C5", "C6"] {
        assert_eq!(verdict(&v, id).outcome(), "holds", "{id} at its bound");
    }
    let mut runs = published_runs();
    set(&mut runs, "3.3.6", 0, 61.0);
    set(&mut runs, "full-series", 0, 51.0);
    assert_eq!(
        verdict(&claims(&runs), "C4").outcome(),
        "holds",
        "C4 at its bound"
    );
}

#[test]
fn a_claim_without_its_kernels_is_not_judged() {
    let runs: Vec<(Column, Outcome)> = published_runs().into_iter().take(2).collect();
    let v = claims(&runs);
    for id in ["C4", "C5", "C6"] {
        assert_eq!(verdict(&v, id).outcome(), "not judged", "{id}");
    }
    assert_eq!(verdict(&v, "C1").outcome(), "holds");
}

#[test]
fn the_table_shows_points_from_the_first_column_as_mmtests_does() {
    let mut runs: Vec<(Column, Outcome)> = published_runs().into_iter().take(2).collect();
    runs[1].1.success[2] = None;
    let t = highalloc_table(&runs);
    let lines: Vec<&str> = t.lines().collect();
    assert!(lines[0].starts_with("STRESS-HIGHALLOC"), "{t}");
    assert!(
        lines[1].contains("published") && lines[2].contains("3.6-rc1-akpm"),
        "{t}"
    );
    let pass1 = lines[3];
    assert!(pass1.starts_with("Pass 1"), "{t}");
    assert!(pass1.contains("36.00 ( 0.00%)"), "{t}");
    assert!(pass1.contains("51.00 (15.00%)"), "{t}");
    assert!(pass1.contains("1.00"), "sim/pub of equal figures: {t}");
    assert!(lines[4].contains("63.00 (21.00%)"), "{t}");
    // A pass that did not run prints `-`.
    assert!(lines[5].contains(" - "), "{t}");
}

#[test]
fn fidelity_counts_the_passes_and_the_letters_vmstat_rows() {
    let runs = published_runs();
    let cells = compared(&runs);
    // 3 passes per column but 3.3.6's two unpublished ones, 12 vmstat rows for the letter's
    // two columns.
    assert_eq!(cells.len(), 3 * runs.len() - 2 + 12 * 2);
    let f = Fidelity::of(&cells);
    // The passes equal their published figures; the vmstat rows were left empty (0).
    let zero_published = cells.iter().filter(|c| c.published == 0.0).count();
    assert_eq!(f.cells, cells.len() - zero_published);
    assert_eq!(
        f.simulated_zero,
        2 * 10 - 1,
        "the non-zero vmstat cells simulated 0 (full-series' Kswapd pages reclaimed is set)"
    );
    assert_eq!(f.within_2x, f.cells - f.simulated_zero);
}

#[test]
fn the_published_scenario_is_hydra() {
    let p = Procedure::published();
    let s = p.scenario();
    assert_eq!(s.machine.ram, 4096 << 20);
    assert_eq!(s.machine.cpus, 4);
    let swap = s.machine.swap.as_ref().expect("swap");
    assert_eq!((swap.size, swap.device.as_deref()), (2 << 30, Some("sda")));
    assert_eq!(s.machine.devices[0].filesystem, Filesystem::Ext3);
    assert!(s.run.end_when_done);
    let WorkloadKind::StressHighalloc(sh) = &s.workloads[0].kind else {
        panic!("the driver");
    };
    assert_eq!(sh.alloc, HighallocParams::default());
    assert_eq!(sh.trees, None, "MemTotal_MB/400");
    assert!(p.describe().contains("4096 MiB RAM"));
    assert!(!p.describe().contains("Caveat"));
    assert!(Procedure::fast().describe().contains("Caveat"));
    let other_seed = Procedure {
        seed: 2,
        ..Procedure::fast()
    };
    assert!(
        other_seed.describe().contains("Caveat"),
        "a seed hides nothing"
    );
    let at_boot = Procedure {
        copy: false,
        ..Procedure::published()
    };
    assert!(at_boot.describe().contains("Caveat"));
    let thp_never = Procedure {
        thp: ThpEnabled::Never,
        seed: 7,
        ..Procedure::published()
    };
    assert!(!thp_never.describe().contains("Caveat"));
}

#[test]
fn a_small_procedure_runs_every_pass_and_the_rest() {
    let mut p = Procedure::fast();
    p.units = 100;
    let o = run_column(&p, &LETTER[1], None).expect("the run completes");
    for (i, pass) in PASSES.iter().enumerate() {
        let s = o.success[i].unwrap_or_else(|| panic!("{pass} ran"));
        assert!((0.0..=100.0).contains(&s), "{pass}: {s}");
    }
    assert!(o.hugetlb_after_dd.is_some_and(|n| n > 0.0));
    assert!(o.elapsed >= min_seconds(&p) as f64, "{} s", o.elapsed);
    assert!(o.vm("Kswapd pages scanned") > 0.0);
}
