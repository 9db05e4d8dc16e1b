//! mmsim: a deterministic simulator of the Linux 3.x memory-management subsystem.
//!
//! See `ARCHITECTURE.md` at the repository root for the map of the code.

#![warn(missing_debug_implementations)]

pub mod bench;
pub mod block;
pub mod calibration;
pub mod engine;
pub mod fs;
pub mod mm;
pub mod presets;
pub mod report;
pub mod reproduce;
pub mod scenario;
pub mod sim;
pub mod sweep;
pub mod workload;

/// A small deterministic generator for tests' random inputs: `next(n)` is in `0..n`.
#[cfg(test)]
pub(crate) fn test_numbers(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut x = seed;
    move |n| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) % n
    }
}

/// The first 16 hex digits of SHA-256 over the model's source (every file of this crate's
/// `src/`, computed by `build.rs`): two builds with the same hash run the same model.
pub const MODEL_HASH: &str = env!("MMSIM_MODEL_HASH");
