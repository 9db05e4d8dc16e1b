//! Published experiments, re-run (`mmsim reproduce <experiment>`): the published tables as
//! data, the simulated tables in the same shape, and the authors' claims as checks that
//! either table can be judged by.

pub mod parallelio;
pub mod seed000;

/// The three kernels of seed 000, in the column order of its tables.
pub const SEED000_KERNELS: [&str; 3] = ["3.9", "mmotm-20130522", "lessdisrupt-v7r10"];

/// One claim's verdict.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// Claim id, e.g. "P1".
    pub id: &'static str,
    /// The claim in words.
    pub claim: &'static str,
    /// Whether it holds on the table it was judged on.
    pub holds: bool,
    /// The numbers it was judged on: (what, value).
    pub values: Vec<(String, f64)>,
}
