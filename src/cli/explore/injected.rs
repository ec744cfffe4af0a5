//! `explore --exhaustive 1|2`: a fault (or a pair) from a menu injected at
//! every event of the scenario's run.

use std::sync::Arc;

use super::{sweep_or_search, Options, Search};
use crate::cli::Status;
use crate::escape;
use crate::explore::describe;
use crate::explore::exhaustive::{self, ExhaustiveResult};
use crate::explore::resume::{Recorded, Resumed};
use crate::explore::shard::Shard;
use crate::explore::sweep::{self, FaultMode};
use crate::scenario::Scenario;
use sim::journal::seconds;

/// `--exhaustive`: counts the search before building or running any of it,
/// then runs its injection sets as a sweep runs seeds (streamed, stopped by
/// a signal, resumed from its `--json` output).
pub(super) fn exhaustive(
    runs: &sweep::Runs,
    scenario: &Scenario,
    options: &mut Options,
    resumed: Option<Resumed>,
) -> Status {
    let depth = options.exhaustive.expect("an exhaustive search");
    let shard = options.sweep.shard;
    // A resumed search was allowed its runs when it started.
    let cap = match &resumed {
        Some(_) => u64::MAX,
        None => options.max_runs.unwrap_or(exhaustive::MAX_RUNS),
    };
    let planned = exhaustive::plan_within(runs, scenario, scenario.seed, depth, shard, cap);
    let baseline = match &planned {
        Ok(plan) => &plan.baseline,
        Err(too_large) => &too_large.baseline,
    };
    // Injections into a run that already fails would all look like they
    // break the design.
    if let Some(reason) = exhaustive::already_fails(baseline) {
        eprintln!(
            "error: {} already fails without injections (seed {}): {reason}; every \
             injection would look like it breaks the design. `{}` shows why; remove the \
             faults that break it, or fix the design, then search again",
            escape::terminal(&scenario.file),
            scenario.seed,
            escape::terminal(&super::repro_command(&scenario.file, scenario.seed)),
        );
        return Status::Invalid;
    }
    let in_shard = |sets: u64| {
        if shard == Shard::WHOLE {
            String::new()
        } else {
            format!(" (shard {shard} of {sets} in all)")
        }
    };
    let plan = match planned {
        Ok(plan) => plan,
        Err(t) => {
            let one = if depth == 2 {
                ", or use --exhaustive 1"
            } else {
                ""
            };
            eprintln!(
                "error: --exhaustive {depth} over a menu of {} injections makes {} runs{}, \
                 more than {cap}: pass --max-runs {} to make them anyway, split them with \
                 --shard K/N{one} (nothing was run but the scenario's own run)",
                t.menu_len,
                t.runs,
                in_shard(t.sets),
                t.runs
            );
            return Status::Invalid;
        }
    };
    let injections = Arc::new(exhaustive::Injections {
        seed: scenario.seed,
        menu: plan.menu,
        depth,
    });
    if let Some(r) = &resumed {
        if let Recorded::Exhaustive { menu, .. } = r.faults {
            if menu != injections.menu.len() as u64 {
                eprintln!(
                    "error: the search being resumed had a menu of {menu} injections; the \
                     scenario's own run now gives {}: the scenario or fencesim changed",
                    injections.menu.len()
                );
                return Status::Invalid;
            }
        }
    }
    eprintln!(
        "exhaustive: {} injections in the menu, depth {depth}: {} runs{}",
        injections.menu.len(),
        plan.runs,
        in_shard(plan.sets)
    );
    options.sweep.seeds = 0..injections.sets();
    options.sweep.faults = FaultMode::Exhaustive(injections.clone());
    let search = Search {
        injections,
        baseline: plan.baseline,
    };
    sweep_or_search(runs, scenario, options, resumed, Some(&search))
}

pub(super) fn exhaustive_human(scenario: &Scenario, depth: u8, r: &ExhaustiveResult) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    writeln!(
        out,
        "exhaustive {} ({}), seed {}, depth {depth}: {} injections in the menu, {} tried in {}",
        escape::terminal(&scenario.name),
        escape::terminal(&scenario.file),
        scenario.seed,
        r.menu.len(),
        r.tried,
        seconds(r.wall.as_nanos() as u64)
    )
    .unwrap();
    writeln!(
        out,
        "baseline  {} without injections",
        r.baseline.verdict.as_str()
    )
    .unwrap();
    if r.breaking.is_empty() {
        writeln!(out, "verdict   no injection breaks the design").unwrap();
        return out;
    }
    writeln!(
        out,
        "verdict   {} injections break the design (add them to [[faults]] to replay):",
        r.breaking.len()
    )
    .unwrap();
    for (faults, report) in &r.breaking {
        let kinds: Vec<&str> = report.kinds.iter().map(|k| k.as_str()).collect();
        let what = if report.outcome.is_error() {
            report.outcome.as_str().to_owned()
        } else {
            kinds.join(", ")
        };
        let faults: Vec<String> = faults.iter().map(describe).collect();
        writeln!(out, "  {what:<16} {}", faults.join(" + ")).unwrap();
    }
    out
}
