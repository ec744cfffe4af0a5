//! The human summary of a sweep: seeds by outcome, violating seeds by kind,
//! what was judged and reached, speed, the lowest failing seeds and how to
//! replay and shrink them.

use super::repro;
use super::signal::Signal;
use crate::cli::output::plural;
use crate::escape;
use crate::explore::describe;
use crate::explore::generic::{self, Reproduced};
use crate::explore::shard::Shard;
use crate::explore::sweep::{self, FaultMode, SeedReport, StoppedBy, SweepOptions, SweepSummary};
use crate::scenario::Scenario;
use sim::journal::seconds;

/// The completed seed ranges, `0..412, 500..600`, or `none`.
pub(super) fn ranges_text(s: &SweepSummary) -> String {
    let ranges: Vec<String> = s
        .completed
        .iter()
        .map(|r| format!("{}..{}", r.start, r.end))
        .collect();
    if ranges.is_empty() {
        "none".to_owned()
    } else {
        ranges.join(", ")
    }
}

pub(super) fn stopped_note(s: &SweepSummary, signal: Signal, json: bool, search: bool) -> String {
    let how = if json {
        "`explore FILE --resume OUTPUT` runs the rest"
    } else {
        "with --json, `explore --resume` could run the rest"
    };
    let (what, ranges) = if search {
        ("injection sets", "injection sets ")
    } else {
        ("seeds", "")
    };
    format!(
        "stopped   by {} after {} {what}; completed {ranges}{} ({how})",
        signal.name(),
        s.seeds,
        ranges_text(s),
    )
}

/// `mechanism stale_writes + lock_restarted: 7 of 120 failing seeds
/// reproduce it, the first seed 52`, when `[expect]` describes a bug.
pub(super) fn mechanism_line(scenario: &Scenario, r: &Reproduced, failing: u64) -> Option<String> {
    let what = generic::describe(&scenario.expect)?;
    let found = match r.first {
        Some(first) => format!(
            "{} of {failing} failing seeds reproduce it, the first seed {first}",
            r.seeds
        ),
        None => format!("none of {failing} failing seeds reproduces it"),
    };
    Some(format!("mechanism {}: {found}\n", escape::terminal(&what)))
}

pub(super) fn human(
    scenario: &Scenario,
    o: &SweepOptions,
    s: &SweepSummary,
    generic: &str,
) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let shard = if o.shard == Shard::WHOLE {
        String::new()
    } else {
        format!(", shard {}", o.shard)
    };
    writeln!(
        out,
        "explore   {} ({}), seeds {}..{}{shard}, faults {}{}, {}",
        escape::terminal(&scenario.name),
        escape::terminal(&scenario.file),
        o.seeds.start,
        o.seeds.end,
        o.faults.as_str(),
        match (
            generic.contains("--generic"),
            generic.contains("--workloads")
        ) {
            (false, false) => "",
            (true, false) => " (generic table)",
            (false, true) => " (workloads varied)",
            (true, true) => " (generic table, workloads varied)",
        },
        plural(o.jobs, "job")
    )
    .unwrap();
    let outcomes: Vec<String> = s.outcomes.iter().map(|(k, n)| format!("{n} {k}")).collect();
    writeln!(out, "seeds     {} run: {}", s.seeds, outcomes.join(", ")).unwrap();
    let kinds: Vec<String> = s.by_kind.iter().map(|(k, n)| format!("{n} {k}")).collect();
    if s.violations == 0 {
        writeln!(out, "verdict   no violation").unwrap();
    } else {
        writeln!(
            out,
            "verdict   {} seeds violate ({})",
            s.violations,
            kinds.join(", ")
        )
        .unwrap();
    }
    if !s.by_property.is_empty() {
        // A seed counts once per property it broke.
        let broken: Vec<String> = s
            .by_property
            .iter()
            .map(|(p, n)| format!("{n} {} not {p}", if *n == 1 { "seed" } else { "seeds" }))
            .collect();
        let what = format!(
            "{}: what [expect] always says holds in every seed",
            broken.join(", ")
        );
        crate::cli::output::labelled(&mut out, "broken", &what);
    }
    if s.crashed > 0 {
        writeln!(out, "crashed   {} seeds panicked", s.crashed).unwrap();
    }
    if let Some((seed, d)) = &s.first_nondeterministic {
        let said = |line: &str| match line {
            "" => "(the journal had ended)".to_owned(),
            line => line.to_owned(),
        };
        let what = format!(
            "{} failing seeds gave another journal when replayed alone on a fresh \
             thread: not reported as violations. The first, seed {seed}, parts at \
             event {} (from 0):",
            s.nondeterministic_seeds, d.index,
        );
        crate::cli::output::labelled(&mut out, "nondeterm", &what);
        // The events whole: JSON lines are not wrapped.
        writeln!(out, "          in the sweep: {}", said(&d.sweep_event)).unwrap();
        writeln!(out, "          replayed:     {}", said(&d.replay_event)).unwrap();
    }
    if let Some(rate) = s.seeds_per_failure() {
        writeln!(
            out,
            "found     {} failing seeds in {} seeds: one per {rate:.1} seeds",
            s.failing_seeds, s.seeds
        )
        .unwrap();
    }
    match s.stopped_by {
        Some(StoppedBy::Until) => writeln!(
            out,
            "stopped   by --until {}: the lowest {} failing seeds of the range, \
             completed {}",
            s.rules.until.unwrap_or(0),
            s.failing_seeds,
            ranges_text(s)
        )
        .unwrap(),
        Some(StoppedBy::Time) => writeln!(
            out,
            "stopped   by --time {} (wall), completed {}",
            humantime::format_duration(s.rules.time.unwrap_or_default()),
            ranges_text(s)
        )
        .unwrap(),
        // A signal's note follows the summary.
        Some(StoppedBy::Signal) | None => {}
    }
    let judged = format!(
        "{} of {} seeds: {} inconclusive (no write reached the storage), \
         {} cut short (stalled or at a limit), {} with a scenario fault that never fired",
        s.seeds - s.inconclusive,
        s.seeds,
        s.inconclusive,
        s.cut_short,
        s.unfired
    );
    crate::cli::output::labelled(&mut out, "judged", &judged);
    if let Some((seed, why)) = &s.first_cut_short {
        let what = format!(
            "{} cut short with no fault to explain it (inconclusive; [expect] outcome says \
             how runs end when that is the story); the lowest, seed {seed}: {why}",
            plural(s.cut_short_unexplained as usize, "seed"),
        );
        crate::cli::output::labelled(&mut out, "cut short", &what);
        writeln!(
            out,
            "          {}",
            repro(scenario, *seed, &o.faults, generic)
        )
        .unwrap();
    }
    if s.idle_process > 0 {
        let what = format!(
            "in {} a process client never acquired the lock: the code under test did \
             nothing there{}",
            plural(s.idle_process as usize, "seed"),
            if s.idle_process == s.seeds {
                " (in every seed: inconclusive)"
            } else {
                ""
            }
        );
        crate::cli::output::labelled(&mut out, "idle", &what);
    }
    for line in untested(s) {
        crate::cli::output::labelled(&mut out, "untested", &line);
    }
    let reached: Vec<String> = s
        .milestone_counts()
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(name, n)| format!("{name} {n}"))
        .collect();
    let reached = if reached.is_empty() {
        "none".to_owned()
    } else {
        reached.join(", ")
    };
    crate::cli::output::labelled(
        &mut out,
        "reached",
        &format!("seeds per milestone: {reached}"),
    );
    if s.timed_out > 0 {
        writeln!(
            out,
            "timed out {} seeds were still running after --run-timeout (replay one to see where it hangs)",
            s.timed_out
        )
        .unwrap();
    }
    writeln!(
        out,
        "speed     {:.0} seeds/s, {} simulated in {} wall ({:.0}x)",
        s.seeds_per_sec(),
        seconds(s.sim_time.as_nanos() as u64),
        seconds(s.wall.as_nanos() as u64),
        s.sim_time.as_secs_f64() / s.wall.as_secs_f64().max(1e-9)
    )
    .unwrap();
    let shown: Vec<&SeedReport> = s.failures.iter().take(10).collect();
    if !shown.is_empty() {
        writeln!(out).unwrap();
        writeln!(out, "failing seeds (lowest first):").unwrap();
        for f in &shown {
            writeln!(out, "  {}", seed_line(f)).unwrap();
        }
        if s.failing_seeds > shown.len() as u64 {
            let more = s.failing_seeds - shown.len() as u64;
            let with_json = if s.failures_truncated() {
                format!("the lowest {} of them with --json", sweep::MAX_KEPT)
            } else {
                "all of them with --json".to_owned()
            };
            writeln!(out, "  … and {more} more ({with_json})").unwrap();
        }
    }
    if let Some(first) = s.first_failing_seed {
        writeln!(out).unwrap();
        writeln!(out, "lowest failing seed {first}").unwrap();
        let report = s.failures.iter().find(|f| f.seed == first);
        for finding in report.map_or(&[][..], |f| &f.findings[..]) {
            writeln!(out, "  finding {finding}").unwrap();
        }
        if o.faults != FaultMode::Scenario {
            for f in o.faults.schedule(scenario, first) {
                writeln!(out, "  random fault {}", describe(&f)).unwrap();
            }
        }
        writeln!(
            out,
            "repro     {}",
            repro(scenario, first, &o.faults, generic)
        )
        .unwrap();
        writeln!(
            out,
            "step      {} step {} --seed {first}{}{generic}",
            crate::cli::invocation(),
            crate::repro::shell_quote(&scenario.file),
            crate::repro::faults_flags(&o.faults)
        )
        .unwrap();
        if o.faults == FaultMode::Random && crate::cli::shrink::writable_seed(first) {
            writeln!(
                out,
                "shrink    {}{generic}",
                crate::cli::shrink::command(&scenario.file, first)
            )
            .unwrap();
        }
    }
    out
}

/// What a sweep never got to test, in plain words.
pub(super) fn untested(s: &SweepSummary) -> Vec<String> {
    let m = s.milestone_counts();
    let mut out = Vec::new();
    if s.seeds == 0 {
        return out;
    }
    if s.inconclusive == s.seeds {
        out.push("no seed had a write reach the storage: this sweep judged nothing".to_owned());
    }
    if m["holder_paused_past_lease"] == 0 {
        out.push(
            "no seed paused a holder past its lease: this sweep did not test fencing".to_owned(),
        );
    } else if m["zombie_write_sent"] == 0 {
        out.push(
            "no seed sent a write under a grant no longer current: the fence was never tested"
                .to_owned(),
        );
    }
    out
}

pub(super) fn seed_line(f: &SeedReport) -> String {
    let kinds: Vec<&str> = f.kinds.iter().map(|k| k.as_str()).collect();
    format!(
        "seed {:<8} {:<9} {:<10} {} stale, {} accepted, {} rejected, {}, trace {}{}",
        f.seed,
        f.verdict.as_str(),
        f.outcome.as_str(),
        f.counters.stale_writes,
        f.counters.accepted_writes,
        f.counters.rejected_writes,
        plural(f.faults, "fault"),
        f.trace_hash,
        if kinds.is_empty() && f.broken.is_empty() {
            match &f.outcome {
                sim::Outcome::Crashed { message, .. } => format!("  ({message})"),
                timed_out @ sim::Outcome::TimedOut { .. } => format!("  ({timed_out})"),
                _ => String::new(),
            }
        } else {
            let broken = f.broken.iter().map(|p| format!("not {p}"));
            let all: Vec<String> = kinds.iter().map(|k| k.to_string()).chain(broken).collect();
            format!("  ({})", all.join(", "))
        }
    )
}
