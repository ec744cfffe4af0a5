//! `fencesim compare FILE [--designs a,b] [--seeds A..B] [--jobs N] [--json]`.

use std::path::Path;

use super::{load, Status};
use crate::design::catalog::{Registry, Role};
use crate::explore::compare;
use crate::explore::sweep::SweepOptions;

pub(super) fn compare(
    registry: &Registry,
    file: &Path,
    designs: Option<Vec<String>>,
    sweep: SweepOptions,
    json: bool,
) -> Status {
    let known = registry.names(Role::Lock);
    let designs: Vec<&str> = match &designs {
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
    let rows = compare::compare(registry, &scenario, &designs, &sweep);
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
        print!("{}", compare::markdown(&rows));
    }
    // A design that cannot run the scenario is a row that says so, not a
    // failure of the comparison.
    Status::Ok
}
