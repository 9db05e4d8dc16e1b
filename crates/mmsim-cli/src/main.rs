//! The `mmsim` binary: the command line of `mmsim_cli`, with the counting allocator that
//! `mmsim bench` reads its memory peaks from.

use std::process::ExitCode;

#[global_allocator]
static GLOBAL: mmsim_cli::CountingAlloc = mmsim_cli::CountingAlloc;

fn main() -> ExitCode {
    ExitCode::from(mmsim_cli::main_with_args(std::env::args_os()))
}
