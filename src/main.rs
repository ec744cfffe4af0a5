//! The `fencesim` command line. See `fencesim --help`.

use std::process::ExitCode;

fn main() -> ExitCode {
    fencesim::cli::main()
}
