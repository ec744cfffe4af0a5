//! What `run` and `designs` print.

use std::fmt::Write as _;

use serde_json::json;
use sim::journal::seconds;

use crate::design::catalog::{Registry, Role, CLIENT_KEYS};
use crate::escape;
use crate::oracle::Verdict;
use crate::report::lanes::{lanes_limited, LanesOptions};
use crate::runner::ScenarioRun;
use crate::scenario::Scenario;

/// The most lane rows `run` prints: the first and last halves, with a line
/// saying how many were left out. A huge run must not print gigabytes.
pub(crate) const MAX_LANE_ROWS: usize = 400;

/// The most violations (and rejections) `run` explains; `--json` has them all.
const MAX_EXPLAINED: usize = 20;

/// The human report of one run: verdict, violations explained, lanes, repro.
/// Text from the scenario is escaped for the terminal
/// ([`escape::terminal_lines`]; the lanes escape their own).
pub(crate) fn run_human(
    scenario: &Scenario,
    run: &ScenarioRun,
    lanes_options: &LanesOptions,
    repro: &str,
) -> String {
    let mut out = String::new();
    let result = &run.result;
    let rep = &run.report;
    let t = escape::terminal;
    writeln!(
        out,
        "scenario  {} ({})",
        t(&scenario.name),
        t(&scenario.file)
    )
    .unwrap();
    if !scenario.description.is_empty() {
        for line in wrap(&scenario.description, 78) {
            writeln!(out, "          {line}").unwrap();
        }
    }
    writeln!(
        out,
        "seed      {}    outcome {}    {} events    {} simulated",
        result.seed,
        result.outcome,
        result.journal.len(),
        seconds(result.sim_time.as_nanos() as u64)
    )
    .unwrap();
    writeln!(out).unwrap();
    let head = escape::terminal_lines(&out);
    let lanes = lanes_limited(&result.journal, &run.nodes, lanes_options, MAX_LANE_ROWS);
    let mut out = String::new();
    writeln!(out).unwrap();
    let verdict = match rep.verdict {
        Verdict::Safe => "SAFE: the storage accepted no stale write",
        Verdict::Violation => "VIOLATION",
    };
    writeln!(out, "verdict   {verdict}").unwrap();
    writeln!(
        out,
        "writes    {} accepted, {} rejected ({} of the current holder)",
        rep.accepted_writes, rep.rejected_writes, rep.false_rejections
    )
    .unwrap();
    writeln!(
        out,
        "found     {} stale, {} zombie, {} token regressions, {} lost updates, {} overlapping leases",
        rep.stale_writes,
        rep.zombie_writes,
        rep.token_regressions,
        rep.lost_updates,
        rep.overlapping_leases
    )
    .unwrap();
    for v in rep.violations.iter().take(MAX_EXPLAINED) {
        writeln!(out).unwrap();
        writeln!(out, "{} (event {}):", v.kind, v.seq).unwrap();
        for line in wrap(&v.explanation, 76) {
            writeln!(out, "  {line}").unwrap();
        }
    }
    if rep.violations.len() > MAX_EXPLAINED {
        writeln!(out).unwrap();
        writeln!(
            out,
            "… and {} more violations (`run --json` lists them all)",
            rep.violations.len() - MAX_EXPLAINED
        )
        .unwrap();
    }
    let rejections: Vec<_> = result
        .journal
        .events()
        .iter()
        .filter(|e| e.kind == crate::events::REJECTED)
        .collect();
    if rep.violations.is_empty() && !rejections.is_empty() {
        writeln!(out).unwrap();
        if rejections.len() > MAX_EXPLAINED {
            writeln!(
                out,
                "{} writes rejected; the first {MAX_EXPLAINED}:",
                rejections.len()
            )
            .unwrap();
        }
        for e in rejections.into_iter().take(MAX_EXPLAINED) {
            let line = format!(
                "{} rejected {}'s write {} at {}: {}.",
                t(&e.node),
                t(e.str("client").unwrap_or("?")),
                t(e.str("write").unwrap_or("?")),
                seconds(e.t_ns),
                t(e.str("reason").unwrap_or("refused")),
            );
            writeln!(out, "{line}").unwrap();
        }
    }
    if !run.expectations.is_empty() {
        writeln!(out).unwrap();
        let met = run.expectations.iter().filter(|e| e.met()).count();
        writeln!(out, "expect    {met} of {} met", run.expectations.len()).unwrap();
        for e in &run.expectations {
            let mark = if e.met() { "ok  " } else { "FAIL" };
            writeln!(
                out,
                "  {mark} {} = {} (got {})",
                t(e.key),
                t(&e.expected.to_string()),
                t(&e.actual.to_string())
            )
            .unwrap();
        }
    }
    writeln!(out).unwrap();
    writeln!(out, "trace     {}", run.trace_hash()).unwrap();
    writeln!(out, "repro     {}", t(repro)).unwrap();
    head + &lanes + &escape::terminal_lines(&out)
}

/// The `--json` object: the contract's fields, then extras.
pub(crate) fn run_json(scenario: &Scenario, run: &ScenarioRun, repro: &str) -> String {
    let rep = &run.report;
    let result = &run.result;
    let value = json!({
        "scenario": scenario.name,
        "seed": result.seed,
        "verdict": rep.verdict.as_str(),
        "stale_writes": rep.stale_writes,
        "zombie_writes": rep.zombie_writes,
        "accepted_writes": rep.accepted_writes,
        "rejected_writes": rep.rejected_writes,
        "token_regressions": rep.token_regressions,
        "lost_updates": rep.lost_updates,
        "events": result.journal.len(),
        "sim_time_ms": result.sim_time.as_millis() as u64,
        "trace_hash": run.trace_hash(),
        "expectations_met": run.expectations_met,
        "file": scenario.file,
        "outcome": result.outcome.as_str(),
        "crash": match &result.outcome {
            sim::Outcome::Crashed { node, message } => json!({"node": node, "message": message}),
            _ => serde_json::Value::Null,
        },
        "false_rejections": rep.false_rejections,
        "overlapping_leases": rep.overlapping_leases,
        "violations": rep.violations,
        "expectations": run.expectations.iter().map(|e| json!({
            "key": e.key, "expected": e.expected, "actual": e.actual, "met": e.met(),
        })).collect::<Vec<_>>(),
        "repro": repro,
    });
    escape::json_line(&value.to_string())
}

/// `fencesim designs`.
pub(crate) fn designs(registry: &Registry) -> String {
    let mut out = String::new();
    for role in [Role::Lock, Role::Storage] {
        writeln!(out, "{} designs:", role.as_str()).unwrap();
        for d in registry.designs().iter().filter(|d| d.role == role) {
            writeln!(out, "  {:<12} {}", d.name, d.summary).unwrap();
            for k in d.keys {
                let default = k.default.unwrap_or("(required)");
                writeln!(
                    out,
                    "      {:<12} {:<18} default {:<8} {}",
                    k.name,
                    k.kind.to_string(),
                    default,
                    k.doc
                )
                .unwrap();
            }
        }
        writeln!(out).unwrap();
    }
    writeln!(out, "client keys ([[clients]]):").unwrap();
    let name = ("name", "node name of the client, unique");
    writeln!(
        out,
        "      {:<16} {:<18} default {:<9} {}",
        name.0, "string", "(required)", name.1
    )
    .unwrap();
    for k in CLIENT_KEYS {
        writeln!(
            out,
            "      {:<16} {:<18} default {:<9} {}",
            k.name,
            k.kind.to_string(),
            k.default.unwrap_or("(required)"),
            k.doc
        )
        .unwrap();
    }
    out
}

/// Greedy word wrap.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}
