//! `fencesim margin FILE [--seed N] [--json] [--max-runs N]`.

use std::io::IsTerminal as _;
use std::path::PathBuf;

use super::{load, Status};
use crate::design::catalog::Registry;
use crate::explore::margin;
use crate::explore::sweep::Runs;
use crate::oracle::Verdict;

/// `fencesim margin`'s flags.
#[derive(clap::Args, Debug)]
pub(super) struct MarginArgs {
    /// The scenario file.
    file: PathBuf,
    /// Seed of every run (default: the scenario's `seed`).
    #[arg(long)]
    seed: Option<u64>,
    /// Print one JSON object per row (JSON lines).
    #[arg(long)]
    json: bool,
    /// Allow up to N runs (default: 5000); more is refused before any run.
    #[arg(long, value_name = "N")]
    max_runs: Option<u64>,
}

pub(super) fn margin(registry: &Registry, args: MarginArgs, runs: &Runs) -> Status {
    let MarginArgs {
        file,
        seed,
        json,
        max_runs,
    } = args;
    let file = file.as_path();
    let Some(scenario) = load(registry, file) else {
        return Status::Invalid;
    };
    let seed = seed.unwrap_or(scenario.seed);
    // Counted before any run: a crowd of clients has thousands of probes.
    let probes = margin::probes(&scenario);
    let most = margin::most_runs_all(&probes);
    let cap = max_runs.unwrap_or(margin::MAX_RUNS);
    if most > cap {
        eprintln!(
            "error: {}: margin would make up to {most} runs ({} probes, each up to {} \
             runs), more than {cap}: pass --max-runs {most} to make them anyway, or \
             probe a scenario with fewer clients and nodes",
            crate::escape::terminal(&scenario.file),
            probes.len(),
            probes.iter().map(margin::most_runs).max().unwrap_or(0),
        );
        return Status::Invalid;
    }
    let terminal = std::io::stderr().is_terminal();
    let rows = margin::margins_with(runs, &scenario, seed, &probes, &mut |done, total| {
        if terminal {
            eprint!("\rmargin: {done} of {total} probes ");
            if done == total {
                eprint!("\r{}\r", " ".repeat(40));
            }
        }
    });
    if json {
        for row in &rows {
            println!("{}", crate::escape::json_line(&row.json().to_string()));
        }
    } else {
        println!(
            "{}",
            crate::escape::terminal(&format!(
                "margins of {} (seed {seed}): the smallest magnitude at which each fault flips the verdict",
                scenario.file
            ))
        );
        for row in &rows {
            println!("- {}", crate::escape::terminal(&row.text()));
        }
    }
    // A run that crashed is an internal error, whatever the margins say.
    let crashed = rows
        .iter()
        .any(|r| r.verdict_below == Verdict::Error || r.verdict_at == Verdict::Error);
    if crashed {
        eprintln!("error: a run crashed; see the rows whose verdict is `error`");
        Status::Internal
    } else {
        Status::Ok
    }
}
