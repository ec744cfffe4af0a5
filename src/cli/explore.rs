//! `fencesim explore FILE [--seeds A..B] [--jobs N] [--shard K/N]
//! [--faults random|scenario] [--json] [--exhaustive 1|2]`.
//!
//! Exit status, by the contract's order (3 > 2 > 1 > 0):
//! - 3 when any seed crashed (a panic in a design or the world is a bug the
//!   sweep cannot judge), even if others violate: the summary still lists
//!   both, each with its repro;
//! - 2 for a bad file or flag;
//! - 1 when any seed violates;
//! - 0 otherwise. Seeds that stall or hit the time or event limit are
//!   counted by outcome and listed, but are not failures: the oracle judges
//!   what they did up to that point.

use std::io::{IsTerminal, Write as _};
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::{load, repro_command_faults, Status};
use crate::design::catalog::Registry;
use crate::escape;
use crate::explore::exhaustive::{self, ExhaustiveResult};
use crate::explore::shard::Shard;
use crate::explore::sweep::{self, FaultMode, SeedReport, SweepOptions, SweepSummary};
use crate::explore::{describe, random};
use crate::scenario::Scenario;
use sim::journal::seconds;

pub(super) struct Options {
    pub sweep: SweepOptions,
    pub json: bool,
    pub exhaustive: Option<u8>,
}

pub(super) fn explore(registry: &Registry, file: &Path, options: Options) -> Status {
    let Some(scenario) = load(registry, file) else {
        return Status::Invalid;
    };
    match options.exhaustive {
        Some(depth) => exhaustive(&scenario, depth, &options),
        None => sweep(&scenario, &options),
    }
}

fn repro(scenario: &Scenario, seed: u64, mode: FaultMode) -> String {
    repro_command_faults(&scenario.file, seed, mode == FaultMode::Random)
}

fn sweep(scenario: &Scenario, options: &Options) -> Status {
    let o = &options.sweep;
    let total = o.shard.len(&o.seeds);
    let bar = Progress::new(total);
    let summary = sweep::sweep(scenario, o, &|done| bar.update(done, 0));
    bar.finish();
    if options.json {
        let mut out = std::io::stdout().lock();
        for f in &summary.failures {
            let line = f.json(&repro(scenario, f.seed, o.faults));
            let _ = writeln!(out, "{}", escape::json_line(&line.to_string()));
        }
        let _ = writeln!(out, "{}", escape::json_line(&summary.json(o).to_string()));
    } else {
        print!("{}", escape::terminal_lines(&human(scenario, o, &summary)));
    }
    if summary.crashed > 0 {
        Status::Internal
    } else if summary.violations > 0 {
        Status::Failed
    } else {
        Status::Ok
    }
}

fn human(scenario: &Scenario, o: &SweepOptions, s: &SweepSummary) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let shard = if o.shard == Shard::WHOLE {
        String::new()
    } else {
        format!(", shard {}", o.shard)
    };
    writeln!(
        out,
        "explore   {} ({}), seeds {}..{}{shard}, faults {}, {} jobs",
        escape::terminal(&scenario.name),
        escape::terminal(&scenario.file),
        o.seeds.start,
        o.seeds.end,
        o.faults.as_str(),
        o.jobs
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
    if s.crashed > 0 {
        writeln!(out, "crashed   {} seeds panicked", s.crashed).unwrap();
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
        if s.failures.len() > shown.len() {
            let more = s.failures.len() - shown.len();
            writeln!(out, "  … and {more} more (all of them with --json)").unwrap();
        }
    }
    if let Some(first) = s.first_failing_seed {
        writeln!(out).unwrap();
        writeln!(out, "lowest failing seed {first}").unwrap();
        if o.faults == FaultMode::Random {
            for f in random::schedule(scenario, first) {
                writeln!(out, "  random fault {}", describe(&f)).unwrap();
            }
        }
        writeln!(out, "repro     {}", repro(scenario, first, o.faults)).unwrap();
        if o.faults == FaultMode::Random {
            writeln!(
                out,
                "shrink    {}",
                super::shrink::command(&scenario.file, first)
            )
            .unwrap();
        }
    }
    out
}

fn seed_line(f: &SeedReport) -> String {
    let kinds: Vec<&str> = f.kinds.iter().map(|k| k.as_str()).collect();
    format!(
        "seed {:<8} {:<9} {:<10} {} stale, {} accepted, {} rejected, {} faults, trace {}{}",
        f.seed,
        f.verdict.as_str(),
        f.outcome.as_str(),
        f.stale_writes,
        f.accepted_writes,
        f.rejected_writes,
        f.faults,
        f.trace_hash,
        if kinds.is_empty() {
            match &f.outcome {
                sim::Outcome::Crashed { message, .. } => format!("  ({message})"),
                _ => String::new(),
            }
        } else {
            format!("  ({})", kinds.join(", "))
        }
    )
}

fn exhaustive(scenario: &Scenario, depth: u8, options: &Options) -> Status {
    let o = &options.sweep;
    let bar = Progress::new(0);
    let result =
        exhaustive::exhaustive(scenario, scenario.seed, depth, o.jobs, o.shard, &|d, t| {
            bar.update(d, t)
        });
    bar.finish();
    if options.json {
        let mut out = std::io::stdout().lock();
        for (faults, report) in &result.breaking {
            let mut line = report.json(&super::repro_command(&scenario.file, scenario.seed));
            line["injected"] = faults.iter().map(describe).collect::<Vec<_>>().into();
            let _ = writeln!(out, "{}", escape::json_line(&line.to_string()));
        }
        let summary = serde_json::json!({
            "summary": true,
            "depth": depth,
            "menu": result.menu.len(),
            "tried": result.tried,
            "breaking": result.breaking.len(),
            "baseline_verdict": result.baseline.verdict.as_str(),
            "wall_ms": result.wall.as_millis() as u64,
            "shard": o.shard.to_string(),
        });
        let _ = writeln!(out, "{summary}");
    } else {
        print!(
            "{}",
            escape::terminal_lines(&exhaustive_human(scenario, depth, &result))
        );
    }
    let crashed = result.breaking.iter().any(|(_, r)| r.crashed());
    if crashed {
        Status::Internal
    } else if result.breaking.is_empty() {
        Status::Ok
    } else {
        Status::Failed
    }
}

fn exhaustive_human(scenario: &Scenario, depth: u8, r: &ExhaustiveResult) -> String {
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
        let what = if report.crashed() {
            "crashed".to_owned()
        } else {
            kinds.join(", ")
        };
        let faults: Vec<String> = faults.iter().map(describe).collect();
        writeln!(out, "  {what:<16} {}", faults.join(" + ")).unwrap();
    }
    out
}

/// A progress bar on stderr, drawn only when stderr is a terminal, at most
/// ten times a second.
struct Progress {
    enabled: bool,
    total: u64,
    started: Instant,
    last: Mutex<Instant>,
}

impl Progress {
    fn new(total: u64) -> Progress {
        let now = Instant::now();
        Progress {
            enabled: std::io::stderr().is_terminal(),
            total,
            started: now,
            last: Mutex::new(now),
        }
    }

    fn update(&self, done: u64, total: u64) {
        if !self.enabled {
            return;
        }
        let total = if total > 0 { total } else { self.total };
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if last.elapsed() < Duration::from_millis(100) && done < total {
            return;
        }
        *last = Instant::now();
        let width = 30;
        let filled = (done * width / total.max(1)) as usize;
        let rate = done as f64 / self.started.elapsed().as_secs_f64().max(1e-9);
        eprint!(
            "\r[{}{}] {done}/{total} {rate:.0}/s ",
            "#".repeat(filled),
            ".".repeat(width as usize - filled)
        );
    }

    fn finish(&self) {
        if self.enabled {
            eprint!("\r{}\r", " ".repeat(70));
        }
    }
}
