//! mmsim: a deterministic simulator of the Linux 3.x memory-management subsystem.
//!
//! See `ARCHITECTURE.md` at the repository root for the map of the code.

#![warn(missing_debug_implementations)]

pub mod report;
pub mod scenario;
