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
pub mod workload;
