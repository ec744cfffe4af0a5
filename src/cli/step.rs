//! `fencesim step FILE [--seed N] [--faults random|scenario]`: walk through
//! a run one event at a time; with `--faults random`, the seed exactly as
//! `explore` ran it.
//!
//! On a terminal (stdin and stdout both), one step per screen, moved by
//! commands read a line at a time; otherwise every step on its own line.

use std::io::IsTerminal;
use std::path::Path;

use super::{load, output, reproducible_command, Status};
use crate::design::catalog::Registry;
use crate::explore::sweep::{self, FaultMode};
use crate::report::lanes::LanesOptions;
use crate::report::step::Walk;

pub(super) fn step(
    registry: &Registry,
    file: &Path,
    seed: Option<u64>,
    width: usize,
    faults: FaultMode,
) -> Status {
    let Some(scenario) = load(registry, file) else {
        return Status::Invalid;
    };
    let seed = seed.unwrap_or(scenario.seed);
    // The run a sweep makes of this seed, random faults and all.
    let (run, _) = sweep::run_seed(&scenario, seed, faults);
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
        &replay_command(&scenario.file, seed, faults),
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

/// The command that replays `seed` of `file` with `faults`, the same in
/// every environment (`fencesim run FILE --seed N [--faults random]`).
pub(super) fn replay_command(file: &str, seed: u64, faults: FaultMode) -> String {
    let command = reproducible_command(file, seed);
    match faults {
        FaultMode::Random => command + " --faults random",
        FaultMode::Scenario => command,
    }
}
