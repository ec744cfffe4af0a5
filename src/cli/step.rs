//! `fencesim step FILE [--seed N] [--faults random|scenario] [--width W]`:
//! walk through a run one event at a time; with `--faults random`, the seed
//! exactly as `explore` ran it.
//!
//! On a terminal (stdin and stdout both), one event per screen, moved by
//! commands read a line at a time (the keys: [`crate::report::step::HELP`]);
//! otherwise every event on its own line. The lanes fit the terminal's
//! width unless `--width` sets each lane's.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use super::{load, output, reproducible_command, FaultsArg, FaultsChoice, Replay, Status};
use crate::design::catalog::Registry;
use crate::explore::sweep::{self, FaultMode, Runs};
use crate::report::lanes::LanesOptions;
use crate::report::step::{lane_width, Walk};

/// Columns assumed when neither `COLUMNS` nor the tty says.
const DEFAULT_COLUMNS: usize = 80;

/// `fencesim step`'s flags.
#[derive(clap::Args, Debug)]
pub(super) struct StepArgs {
    /// The scenario file.
    file: PathBuf,
    /// Seed (default: the scenario's `seed`).
    #[arg(long)]
    seed: Option<u64>,
    /// Width of each lane, in characters (default: the lanes fit the
    /// terminal: `COLUMNS`, else the tty's size, else 80 columns).
    #[arg(long, value_parser = clap::value_parser!(u16).range(8..=200))]
    width: Option<u16>,
    /// `random`: step through the seed as `explore` ran it (the
    /// scenario's faults plus the seed's random schedule); `guided`: as
    /// a guided sweep ran it (with `--corpus`); `scenario`: only the
    /// scenario's own faults.
    #[arg(long, value_enum, default_value_t = FaultsArg::Scenario)]
    faults: FaultsArg,
    #[command(flatten)]
    replay: Replay,
}

/// `fencesim step --help` ends with the walk's keys.
pub(super) fn keys() -> String {
    format!(
        "Keys on a terminal (a command per line, then Enter):\n{}",
        crate::report::step::HELP
    )
}

pub(super) fn step(registry: &Registry, args: StepArgs, runs: &Runs) -> Status {
    let StepArgs {
        file,
        seed,
        width,
        faults,
        replay,
    } = args;
    let (file, width) = (file.as_path(), width.map(usize::from));
    let choice = FaultsChoice::new(faults, replay);
    let Some(scenario) = load(registry, file) else {
        return Status::Invalid;
    };
    let scenario = choice.scenario(scenario);
    let Some(faults) = choice.mode(&scenario, runs) else {
        return Status::Invalid;
    };
    let seed = seed.unwrap_or(scenario.seed);
    // The run a sweep makes of this seed, random faults and all.
    let (run, _) = sweep::run_seed_with(runs, &scenario, seed, faults.clone());
    let terminal = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let columns = terminal_columns(terminal);
    let journal = &run.result.journal;
    let options = LanesOptions {
        width: width.unwrap_or_else(|| lane_width(journal, &run.nodes, columns)),
        deliveries: true,
        color: terminal && std::env::var_os("NO_COLOR").is_none(),
    };
    let mut walk = Walk::new(
        &scenario.name,
        journal,
        &run.report,
        &run.nodes,
        &options,
        &(replay_command(&scenario.file, seed, &faults) + choice.generic_flag()),
    );
    walk.columns = Some(columns);
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
pub(super) fn replay_command(file: &str, seed: u64, faults: &FaultMode) -> String {
    reproducible_command(file, seed) + &crate::repro::faults_flags(faults)
}

/// The terminal's width: `COLUMNS` when set to a number, else (on a
/// terminal) what `stty size` says of it, else 80.
fn terminal_columns(terminal: bool) -> usize {
    let from_env = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0);
    from_env
        .or_else(|| terminal.then(stty_columns).flatten())
        .unwrap_or(DEFAULT_COLUMNS)
}

/// `stty size` on our own stdin (the terminal): "rows columns". No ioctl
/// of our own, and no dependency for it.
fn stty_columns() -> Option<usize> {
    let out = Command::new("stty")
        .arg("size")
        .stdin(Stdio::inherit())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    text.split_whitespace()
        .nth(1)?
        .parse::<usize>()
        .ok()
        .filter(|&c| c > 0)
}
