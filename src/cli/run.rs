//! `fencesim run FILE [--seed N] [--json]`.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use super::files::{self, Replace};
use super::{load, output, repro_command, Status};
use crate::design::catalog::Registry;
use crate::report::lanes::LanesOptions;
use crate::runner;

pub(super) struct Options {
    pub seed: Option<u64>,
    pub json: bool,
    pub deliveries: bool,
    pub width: usize,
    pub trace: Option<PathBuf>,
    /// Replace an existing --trace file (`--force`).
    pub force: bool,
    /// Add the seed's random or guided fault schedule (`--faults`).
    pub faults: super::FaultsChoice,
}

pub(super) fn run(registry: &Registry, file: &Path, options: Options) -> Status {
    let Options {
        seed,
        json,
        deliveries,
        width,
        trace,
        force,
        faults,
    } = options;
    let Some(scenario) = load(registry, file) else {
        return Status::Invalid;
    };
    let scenario = faults.scenario(scenario);
    let Some(mode) = faults.mode(&scenario) else {
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
    let run = runner::run_scripted(&scenario, seed, scripted);
    let repro = repro_command(&scenario.file, seed)
        + &crate::repro::faults_flags(&mode)
        + faults.generic_flag();
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
