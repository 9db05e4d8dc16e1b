//! Published experiments, re-run (`mmsim reproduce <experiment>`): the published tables as
//! data, the simulated tables in the same shape, and the authors' claims as checks that
//! either table can be judged by.

pub mod dirty_throttling;
pub mod memcg_softlimit;
pub mod nowriteback;
pub mod parallelio;
pub mod seed000;
pub mod stress_highalloc;

/// The three kernels of seed 000, in the column order of its tables.
pub const SEED000_KERNELS: [&str; 3] = ["3.9", "mmotm-20130522", "lessdisrupt-v7r10"];

/// MMTests' vmstat rows of run `r` (`report::mmtests::vmstat_summary`), with the names the
/// 2011 and 2012 reports gave pgpgin and pgpgout: Page Ins and Page Outs.
pub fn vmstat_page_ins(
    r: &crate::report::RunResult,
    new_migration_counters: bool,
) -> Vec<(String, crate::report::mmtests::Cell)> {
    crate::report::mmtests::vmstat_summary(
        &|n| r.vmstat(n),
        r.simulated_seconds,
        new_migration_counters,
    )
    .into_iter()
    .map(|(label, cell)| {
        let label = match label {
            "Sector Reads" => "Page Ins",
            "Sector Writes" => "Page Outs",
            l => l,
        };
        (label.to_string(), cell)
    })
    .collect()
}

/// One claim's verdict.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// Claim id, e.g. "P1".
    pub id: &'static str,
    /// The claim in words, naming the rows it reads as the judged table labels them.
    pub claim: String,
    /// Whether it holds on the table it was judged on (false when not judged).
    pub holds: bool,
    /// Whether it could be judged: a claim whose numbers are all 0 says nothing either way
    /// (e.g. swap against swap on a machine that never swapped).
    pub judged: bool,
    /// The numbers it was judged on: (what, value).
    pub values: Vec<(String, f64)>,
}

impl Verdict {
    /// `holds`, `FAILS` or `not judged`.
    pub fn outcome(&self) -> &'static str {
        match (self.judged, self.holds) {
            (false, _) => "not judged",
            (true, true) => "holds",
            (true, false) => "FAILS",
        }
    }
}

/// A number as a verdict prints it: whole numbers without a fraction, others with 3
/// decimals (MMTests' velocity precision).
pub fn verdict_number(x: f64) -> String {
    if x.is_finite() && x.fract() == 0.0 {
        format!("{x:.0}")
    } else if x.is_finite() {
        format!("{x:.3}")
    } else {
        format!("{x}")
    }
}

/// The closing line of a list of verdicts: "9 of 12 claims hold", then how many fail and
/// how many could not be judged, when any.
pub fn verdict_summary(verdicts: &[Verdict]) -> String {
    let count = |o: &str| verdicts.iter().filter(|v| v.outcome() == o).count();
    let mut line = format!("{} of {} claims hold", count("holds"), verdicts.len());
    for (n, what) in [
        (count("FAILS"), "fail"),
        (count("not judged"), "not judged"),
    ] {
        if n > 0 {
            line.push_str(&format!(", {n} {what}"));
        }
    }
    line
}

/// The verdicts as the reports print them: per claim its id, outcome and words, then the
/// numbers it was judged on (when it has any); then the summary line.
pub fn verdicts_text(verdicts: &[Verdict]) -> String {
    let mut out = String::new();
    for v in verdicts {
        out.push_str(&format!("{:<4} {:<10} {}\n", v.id, v.outcome(), v.claim));
        if !v.values.is_empty() {
            let values: Vec<String> = v
                .values
                .iter()
                .map(|(what, x)| format!("{what} = {}", verdict_number(*x)))
                .collect();
            out.push_str(&format!("     {}\n", values.join(", ")));
        }
    }
    out.push_str(&format!("\n{}\n", verdict_summary(verdicts)));
    out
}
