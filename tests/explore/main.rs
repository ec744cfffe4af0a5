//! Exploration: sweeps, shards, random schedules, shrink, exhaustive
//! injection, the TOML writer and the proptest strategies.

mod always;
mod cli;
mod compare;
mod deploy;
mod depth;
mod exhaustive;
mod generic;
mod guided;
mod interrupt;
mod margin;
mod merge;
mod nondeterminism;
mod property;
mod random;
mod replay;
mod shrink;
mod stop;
mod swarm;
mod sweep;
mod until;
mod verdicts;
mod workload;
mod write;

#[path = "../support/mod.rs"]
mod support;

use fencesim::design::catalog::Registry;
use fencesim::scenario::{self, Scenario};

pub use support::{arg, fencesim, Output, TempDir};

/// A bundled scenario by file stem.
pub fn bundled(stem: &str) -> Scenario {
    let path = format!("{}/scenarios/{stem}.toml", env!("CARGO_MANIFEST_DIR"));
    scenario::load_file(&Registry::builtin(), path.as_ref()).expect("bundled scenario loads")
}

/// Figure 9-6 without its scripted pause (and without `[expect]`), fenced or
/// not: two clients, client2 starting at 12 s.
pub fn figure_without_pause(fenced: bool) -> Scenario {
    let mut s = bundled(if fenced {
        "figure-9-6"
    } else {
        "figure-9-6-unfenced"
    });
    s.faults.clear();
    s.expect = Default::default();
    s
}
