//! The `fencesim` command line. See `fencesim --help`.

// A run alone gets a fresh thread, and every seed of a sweep allocates and
// frees a whole world: mimalloc does both far cheaper than glibc's malloc.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::process::ExitCode;

fn main() -> ExitCode {
    fencesim::cli::main()
}
