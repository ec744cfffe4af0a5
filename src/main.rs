//! The `fencesim` command line. See `fencesim --help`.

// Every seed runs on a fresh thread: mimalloc sets threads up far cheaper
// than glibc's malloc, which otherwise dominates a sweep.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::process::ExitCode;

fn main() -> ExitCode {
    fencesim::cli::main()
}
