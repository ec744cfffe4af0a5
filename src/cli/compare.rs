//! `fencesim compare FILE [--designs a,b] [--seeds A..B] [--jobs N]
//! [--json | --markdown]`.

use std::path::PathBuf;

use clap::Args;

use super::{load, Status};
use crate::design::catalog::{Registry, Role};
use crate::explore::compare;
use crate::explore::sweep::{Runs, SweepOptions};

/// The flags of `fencesim compare`.
#[derive(Args, Debug)]
pub(super) struct CompareArgs {
    /// The scenario file.
    file: PathBuf,
    /// Lock designs to compare, comma-separated (default: every one).
    #[arg(long, value_delimiter = ',')]
    designs: Option<Vec<String>>,
    /// Seeds to run: A..B (B excluded), A..=B or A [default: 0..1000].
    #[arg(long, value_parser = crate::explore::shard::parse_range)]
    seeds: Option<std::ops::Range<u64>>,
    /// Worker threads (default: one per core).
    #[arg(long)]
    jobs: Option<usize>,
    /// Print one JSON object per design (JSON lines).
    #[arg(long, conflicts_with = "markdown")]
    json: bool,
    /// Print the table in Markdown, to paste into a document.
    #[arg(long)]
    markdown: bool,
}

pub(super) fn compare(registry: &Registry, args: &CompareArgs, runs: &Runs) -> Status {
    let defaults = SweepOptions::default();
    let sweep = SweepOptions {
        seeds: args.seeds.clone().unwrap_or(defaults.seeds.clone()),
        jobs: args.jobs.unwrap_or(defaults.jobs).max(1),
        ..defaults
    };
    let (file, designs, json) = (&args.file, &args.designs, args.json);
    let known = registry.names(Role::Lock);
    let designs: Vec<&str> = match designs {
        None => known.clone(),
        Some(names) => {
            if let Some(bad) = names.iter().find(|n| !known.contains(&n.as_str())) {
                eprintln!(
                    "error: --designs: unknown lock design `{}`; known lock designs: {}",
                    crate::escape::terminal(bad),
                    known.join(", ")
                );
                return Status::Invalid;
            }
            names.iter().map(String::as_str).collect()
        }
    };
    let Some(scenario) = load(registry, file) else {
        return Status::Invalid;
    };
    let rows = compare::compare_with(runs, registry, &scenario, &designs, &sweep);
    if json {
        for row in &rows {
            println!("{}", crate::escape::json_line(&row.json().to_string()));
        }
    } else {
        println!(
            "{}\n",
            crate::escape::terminal(&format!(
                "{} over {} lock designs, seeds {}..{} (random faults as `explore` draws them)",
                scenario.file,
                rows.len(),
                sweep.seeds.start,
                sweep.seeds.end
            ))
        );
        if args.markdown {
            print!("{}", compare::markdown(&rows));
        } else {
            print!("{}", compare::text(&rows));
        }
    }
    // A design that cannot run the scenario is a row that says so, not a
    // failure of the comparison; a seed that crashed or timed out is: its
    // design was not judged there.
    let broken: Vec<String> = rows
        .iter()
        .filter(|r| r.crashed + r.timed_out > 0)
        .map(|r| format!("{} ({} of {})", r.design, r.crashed + r.timed_out, r.seeds))
        .collect();
    if broken.is_empty() {
        Status::Ok
    } else {
        eprintln!(
            "error: seeds crashed or timed out under {}: those seeds judged nothing",
            crate::escape::terminal(&broken.join(", "))
        );
        Status::Internal
    }
}
