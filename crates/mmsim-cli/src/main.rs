//! The `mmsim` command line.

fn main() {}
