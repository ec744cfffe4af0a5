//! The `fencesim` command line: `run`, `check`, `step`, `report`, `designs`.
//!
//! Exit codes, for every subcommand: 0 expectations met (without `[expect]`:
//! no violation); 1 an expectation failed or a violation was found; 2 invalid
//! input (a bad file or flag); 3 an internal error, a crashed run, or
//! non-determinism.

mod check;
mod output;
mod report;
mod run;
mod step;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::design::catalog::Registry;
use crate::scenario::{self, Scenario, ScenarioError};

/// Exit status of a command, ordered by severity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// Expectations met.
    Ok = 0,
    /// An expectation failed or a violation was found.
    Failed = 1,
    /// Invalid input.
    Invalid = 2,
    /// Internal error, crash or non-determinism.
    Internal = 3,
}

impl From<Status> for ExitCode {
    fn from(s: Status) -> ExitCode {
        ExitCode::from(s as u8)
    }
}

#[derive(Parser, Debug)]
#[command(
    name = "fencesim",
    version,
    about = "Deterministic simulation testing for distributed locks, leases and fencing tokens",
    after_help = "Exit codes: 0 expectations met, 1 expectation failed or violation found, \
                  2 invalid input, 3 internal error or non-determinism."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run one scenario with one seed: verdict, violations, lanes, repro command.
    Run {
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
    },
    /// Run every scenario under the paths (twice, to check determinism) and
    /// print a table.
    Check {
        /// Scenario files or directories (default: scenarios/).
        paths: Vec<PathBuf>,
    },
    /// Walk through one run event by event, each explained with who
    /// believes what (piped: every step on a line).
    Step {
        /// The scenario file.
        file: PathBuf,
        /// Seed (default: the scenario's `seed`).
        #[arg(long)]
        seed: Option<u64>,
        /// Width of each lane, in characters.
        #[arg(long, default_value_t = 26, value_parser = clap::value_parser!(u16).range(8..=200))]
        width: u16,
    },
    /// Write reports of scenarios into a directory: NAME.md (Mermaid),
    /// NAME.html (timeline), NAME.trace.json (Perfetto), NAME.jsonl, index.
    Report {
        /// Scenario files or directories.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Seed for every scenario (default: each scenario's `seed`).
        #[arg(long)]
        seed: Option<u64>,
        /// The directory to write into (created if missing).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
    /// List the designs and their keys.
    Designs,
}

/// Runs the command line and returns its exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to stdout with status 0; usage errors to
            // stderr with status 2, as the contract says.
            let _ = e.print();
            return if e.use_stderr() {
                Status::Invalid.into()
            } else {
                Status::Ok.into()
            };
        }
    };
    let registry = Registry::builtin();
    let status = match cli.command {
        Command::Run {
            file,
            seed,
            json,
            deliveries,
            width,
            trace,
        } => run::run(
            &registry,
            &file,
            run::Options {
                seed,
                json,
                deliveries,
                width: width as usize,
                trace,
            },
        ),
        Command::Check { paths } => check::check(&registry, &paths),
        Command::Step { file, seed, width } => step::step(&registry, &file, seed, width as usize),
        Command::Report { paths, seed, out } => report::report(&registry, &paths, seed, &out),
        Command::Designs => {
            print!("{}", output::designs(&registry));
            Status::Ok
        }
    };
    status.into()
}

/// Loads a scenario, printing the error on failure.
fn load(registry: &Registry, file: &std::path::Path) -> Result<Scenario, ScenarioError> {
    scenario::load_file(registry, file)
}

/// The command that replays `file` with `seed` exactly. Under `cargo run`
/// (the README's way in) it is spelled as a cargo command.
pub fn repro_command(file: &str, seed: u64) -> String {
    let prefix = if std::env::var_os("CARGO").is_some() {
        "cargo run --release --"
    } else {
        "fencesim"
    };
    format!("{prefix} run {} --seed {seed}", shell_quote(file))
}

/// The command that replays `file` with `seed`, the same in every
/// environment: what written reports print, so that they are byte-identical
/// wherever they are generated.
pub fn reproducible_command(file: &str, seed: u64) -> String {
    format!("fencesim run {} --seed {seed}", shell_quote(file))
}

/// `file` as one shell word: unchanged when it is plain, else single-quoted.
fn shell_quote(file: &str) -> String {
    let plain = !file.is_empty()
        && file
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:,@=%".contains(c));
    if plain {
        file.to_owned()
    } else {
        format!("'{}'", file.replace('\'', "'\\''"))
    }
}
