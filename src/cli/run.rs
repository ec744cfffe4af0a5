//! `fencesim run FILE [--seed N] [--json]`.
//!
//! Under [`super::main_with`] the run is made by a child process (the same
//! program, the same arguments) whose memory is limited to `--run-memory`:
//! a run that allocates past it ends the child, and the command prints an
//! `error` verdict saying so, with the repro command (exit 3).

use std::io::IsTerminal;
use std::path::PathBuf;

use super::files::{self, Replace};
use super::{load, output, repro_command, FaultsArg, FaultsChoice, Replay, Status};
use crate::design::catalog::Registry;
use crate::explore::sweep::Runs;
use crate::explore::worker;
use crate::report::lanes::LanesOptions;

/// `fencesim run`'s flags.
#[derive(clap::Args, Debug)]
pub(super) struct RunArgs {
    /// The scenario file.
    file: PathBuf,
    /// Seed (default: the scenario's `seed`).
    #[arg(long)]
    seed: Option<u64>,
    /// Print one JSON object instead of the human report.
    #[arg(long)]
    json: bool,
    /// Show message deliveries in the lanes too.
    #[arg(long)]
    deliveries: bool,
    /// Width of each lane, in characters.
    #[arg(long, default_value_t = 36, value_parser = clap::value_parser!(u16).range(8..=200))]
    width: u16,
    /// Also write the journal (the whole trace) to this file, as JSON Lines.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Replace the --trace file if it exists (a link is replaced, never
    /// followed).
    #[arg(long)]
    force: bool,
    /// `random`: the scenario's faults plus the seed's random schedule,
    /// exactly as `explore` ran that seed (same trace hash); `guided`:
    /// as a guided sweep ran it (with `--corpus`); `scenario`: only
    /// the scenario's own faults.
    #[arg(long, value_enum, default_value_t = FaultsArg::Scenario)]
    faults: FaultsArg,
    #[command(flatten)]
    replay: Replay,
}

pub(super) fn run(registry: &Registry, args: RunArgs, runs: &Runs) -> Status {
    let RunArgs {
        file,
        seed,
        json,
        deliveries,
        width,
        trace,
        force,
        faults,
        replay,
    } = args;
    let (file, width) = (file.as_path(), usize::from(width));
    let faults = FaultsChoice::new(faults, replay);
    let Some(scenario) = load(registry, file) else {
        return Status::Invalid;
    };
    let scenario = faults.scenario(scenario);
    let Some(mode) = faults.mode(&scenario, runs) else {
        return Status::Invalid;
    };
    let seed = seed.unwrap_or(scenario.seed);
    // A trace has no header to recognize it by: an existing file is
    // replaced only with --force. Refused before running, and checked again
    // when writing.
    let replace = if force { Replace::Force } else { Replace::Own };
    if let Some(path) = &trace {
        if let Err(e) = files::check_target(path, replace, |_| false) {
            eprintln!("error: --trace: {e}");
            return Status::Invalid;
        }
    }
    // The seed's random faults may never fire; only the scenario's own must.
    let scripted = scenario.faults.len();
    let scenario = crate::explore::sweep::scenario_for(&scenario, seed, mode.clone());
    let repro = repro_command(&scenario.file, seed)
        + &crate::repro::faults_flags(&mode)
        + faults.generic_flag();
    let config = runs.config(seed).scripted(scripted);
    let run = match worker::run_child_budget() {
        // The child of a `run` that watches it: the run, within its budget.
        Some(memory) => {
            if let Some(bytes) = memory {
                if let Err(e) = worker::limit_memory(bytes) {
                    eprintln!("error: cannot limit the run's memory: {e}");
                    return Status::Internal;
                }
            }
            config.run(&scenario)
        }
        // Under `main_with`: the run is made by a child process, so that
        // one past its memory budget ends the child, not this command.
        None => match &runs.workers {
            Some(workers) => match worker::run_in_child(workers) {
                Ok(worker::Supervised::Exited(code)) => return Status::from_code(code),
                Ok(worker::Supervised::Died(why)) => {
                    let outcome = worker::died_outcome(&why, workers.memory);
                    config.judge(&scenario, lost(seed, outcome))
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    return Status::Internal;
                }
            },
            None => config.run(&scenario),
        },
    };
    if let Some(path) = trace {
        let jsonl = run.result.journal.to_jsonl();
        if let Err(e) = files::write(&path, jsonl.as_bytes(), replace, |_| false) {
            eprintln!("error: --trace: {e}");
            return Status::Invalid;
        }
    }
    if json {
        println!("{}", output::run_json(&scenario, &run, &repro));
    } else {
        let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        let options = LanesOptions {
            width,
            deliveries,
            color,
        };
        print!("{}", output::run_human(&scenario, &run, &options, &repro));
    }
    run.status.into()
}

/// A run lost with its process, ending `outcome`: no journal.
fn lost(seed: u64, outcome: sim::Outcome) -> sim::RunResult {
    sim::RunResult {
        seed,
        outcome,
        journal: sim::Journal::default(),
        sim_time: std::time::Duration::ZERO,
        wall_time: std::time::Duration::ZERO,
        faults_fired: Vec::new(),
        waits: Vec::new(),
    }
}
