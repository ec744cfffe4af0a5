//! A design written outside the crate, through every command: the grace
//! period lease of `examples/custom_lock.rs` (included here as it is), in a
//! registry beside the bundled designs, run by the command line's own entry
//! point ([`fencesim::cli::run_args`], what `main_with` runs) and by the
//! library functions each command uses. Nothing may fall back to the bundled
//! registry: a design it does not know used to load, then panic when run.

mod commands;
mod design_msg;
mod library;
mod node_name;

#[path = "../support/mod.rs"]
mod support;

use std::path::PathBuf;

use fencesim::cli::Status;
use fencesim::design::catalog::Registry;
use fencesim::scenario::{self, Scenario};

pub use support::TempDir;

#[path = "../../examples/custom_lock.rs"]
#[allow(dead_code)] // its `main`: the example's own entry point
mod custom_lock;

/// The bundled designs and the example's `grace_lease`.
pub fn registry() -> Registry {
    custom_lock::registry()
}

/// A file of the crate, by its path from the crate root.
pub fn crate_file(path: &str) -> PathBuf {
    support::crate_root().join(path)
}

/// `examples/grace-lease.toml` (unfenced) or its fenced twin, as a path.
pub fn example(fenced: bool) -> PathBuf {
    crate_file(if fenced {
        "examples/grace-lease-fenced.toml"
    } else {
        "examples/grace-lease.toml"
    })
}

/// The example scenario, loaded with [`registry`].
pub fn load(fenced: bool) -> Scenario {
    scenario::load_file(&registry(), &example(fenced)).expect("the example scenario loads")
}

/// Runs `fencesim ARGS…` in this process with [`registry`].
pub fn fencesim(args: &[&str]) -> Status {
    let argv = std::iter::once("fencesim").chain(args.iter().copied());
    fencesim::cli::run_args(&registry(), argv)
}
