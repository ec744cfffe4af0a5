//! `fencesim step FILE [--seed N]`: walk through a run one event at a time.
//!
//! On a terminal (stdin and stdout both), one step per screen, moved by
//! commands read a line at a time; otherwise every step on its own line.

use std::io::IsTerminal;
use std::path::Path;

use super::{load, output, reproducible_command, Status};
use crate::design::catalog::Registry;
use crate::report::lanes::LanesOptions;
use crate::report::step::Walk;
use crate::runner;

pub(super) fn step(registry: &Registry, file: &Path, seed: Option<u64>, width: usize) -> Status {
    let Some(scenario) = load(registry, file) else {
        return Status::Invalid;
    };
    let seed = seed.unwrap_or(scenario.seed);
    let run = runner::run(&scenario, seed);
    let terminal = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let options = LanesOptions {
        width,
        deliveries: true,
        color: terminal && std::env::var_os("NO_COLOR").is_none(),
    };
    let mut walk = Walk::new(
        &scenario.name,
        &run.result.journal,
        &run.report,
        &run.nodes,
        &options,
        &reproducible_command(&scenario.file, seed),
    );
    // What the run tested and what it left untested, after the verdict.
    walk.notes = output::run_notes(&run);
    if terminal {
        let stdin = std::io::stdin();
        if let Err(e) = walk.interact(stdin.lock(), std::io::stdout().lock(), true) {
            eprintln!("error: {e}");
            return Status::Internal;
        }
    } else {
        print!("{}", walk.piped());
    }
    run.status.into()
}
