//! `fencesim margin FILE [--seed N] [--json]`.

use std::path::Path;

use super::{load, Status};
use crate::design::catalog::Registry;
use crate::explore::margin;
use crate::oracle::Verdict;

pub(super) fn margin(registry: &Registry, file: &Path, seed: Option<u64>, json: bool) -> Status {
    let Some(scenario) = load(registry, file) else {
        return Status::Invalid;
    };
    let seed = seed.unwrap_or(scenario.seed);
    let rows = margin::margins(&scenario, seed);
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
