//! What `run` and `designs` print.

use std::fmt::Write as _;

use serde::Serialize;
use sim::journal::seconds;

use crate::design::catalog::{KeySpec, Registry, Role, CLIENT_KEYS};
use crate::escape;
use crate::oracle::{Milestones, Report, Verdict};
use crate::report::lanes::{lanes_limited, LanesOptions};
use crate::runner::{Crash, FaultFiring, ScenarioRun};
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
        Verdict::Safe => "SAFE: the storage accepted no stale write".to_owned(),
        Verdict::Violation => "VIOLATION".to_owned(),
        Verdict::Inconclusive => {
            "INCONCLUSIVE: no write reached the storage, so nothing was judged".to_owned()
        }
        Verdict::Error if !rep.untrusted.is_empty() => format!(
            "ERROR: the oracle cannot trust this run's journal:\n{}",
            rep.untrusted
                .iter()
                .map(|why| format!("          - {why}"))
                .collect::<Vec<_>>()
                .join("\n")
        ),
        Verdict::Error => format!("ERROR: the run {}", result.outcome),
    };
    writeln!(out, "verdict   {verdict}").unwrap();
    if run.cut_short() {
        writeln!(
            out,
            "cut short {}: {}",
            result.outcome,
            crate::runner::cut_short_text(&result.outcome)
        )
        .unwrap();
    }
    writeln!(
        out,
        "writes    {} accepted, {} rejected ({} of the current holder)",
        rep.accepted_writes, rep.rejected_writes, rep.false_rejections
    )
    .unwrap();
    writeln!(
        out,
        "found     {}, {} overlapping leases",
        rep.found_text(),
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
    use crate::events::DomainEvent;
    // Each rejection: (the storage node, the writer, the write, when, why).
    let rejections: Vec<_> = result
        .journal
        .events()
        .iter()
        .filter_map(|e| match DomainEvent::decode(e) {
            Ok(Some(DomainEvent::Rejected {
                write,
                client,
                reason,
                ..
            })) => Some((&e.node, client, write, e.t_ns, reason)),
            _ => None,
        })
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
        for (node, client, write, t_ns, reason) in rejections.into_iter().take(MAX_EXPLAINED) {
            let line = format!(
                "{} rejected {}'s write {} at {}: {}.",
                t(node),
                t(client.unwrap_or("?")),
                t(write),
                seconds(t_ns),
                t(reason.unwrap_or("refused")),
            );
            writeln!(out, "{line}").unwrap();
        }
    }
    writeln!(out).unwrap();
    let reached = if run.milestones == crate::oracle::Milestones::default() {
        "no milestone (no dangerous situation came up)".to_owned()
    } else {
        run.milestones.reached_text()
    };
    labelled(&mut out, "reached", &reached);
    for client in &run.idle_clients {
        labelled(&mut out, "idle", &client.to_string());
    }
    for wait in &result.waits {
        labelled(&mut out, "waiting", &wait.to_string());
    }
    for f in run.unfired_faults() {
        let text = format!("the {} never fired: {}", f.name(), f.why_unfired);
        labelled(&mut out, "unfired", &text);
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
    if !run.inconclusive.is_empty() {
        writeln!(out).unwrap();
        let e = &scenario.expect;
        let mut keys = Vec::new();
        if rep.verdict == Verdict::Inconclusive && e.verdict.is_none() {
            keys.push("verdict = \"inconclusive\"".to_owned());
        }
        let unfired = run.unfired_faults().count();
        if unfired > 0 && e.unfired_faults.is_none() {
            keys.push(format!("unfired_faults = {unfired}"));
        }
        if run.cut_short() && e.outcome.is_none() {
            keys.push(format!("outcome = \"{}\"", result.outcome.as_str()));
        }
        let idle: Vec<String> = run
            .idle_clients
            .iter()
            .filter(|c| c.process && !c.acquired && !e.idle_clients.contains(&c.name))
            .map(|c| format!("\"{}\"", c.name))
            .collect();
        if !idle.is_empty() && !result.outcome.is_error() {
            keys.push(format!("idle_clients = [{}]", idle.join(", ")));
        }
        let hint = if keys.is_empty() {
            String::new()
        } else {
            format!("; if intended, say so in [expect]: {}", keys.join(", "))
        };
        writeln!(out, "INCONCLUSIVE (exit 4{hint}):").unwrap();
        for why in &run.inconclusive {
            for (i, line) in wrap(why, 76).iter().enumerate() {
                let lead = if i == 0 { "- " } else { "  " };
                writeln!(out, "  {lead}{line}").unwrap();
            }
        }
    }
    writeln!(out).unwrap();
    writeln!(out, "trace     {}", run.trace_hash()).unwrap();
    writeln!(out, "repro     {}", t(repro)).unwrap();
    head + &lanes + &escape::terminal_lines(&out)
}

/// The `--json` object: the contract's fields, then extras.
pub(crate) fn run_json(scenario: &Scenario, run: &ScenarioRun, repro: &str) -> String {
    escape::json_line(&json_text(&RunLine::new(scenario, run, repro)))
}

/// `value` as one line of JSON, its keys in serde_json's order (sorted):
/// the order the outputs have always had, whatever a struct declares.
pub(crate) fn json_text(value: &impl Serialize) -> String {
    serde_json::to_value(value)
        .expect("an output line is plain data")
        .to_string()
}

/// The object `run --json` prints: the oracle's report (its verdict,
/// [`Counters`](crate::oracle::Counters) and findings) flattened among the
/// run's own fields.
#[derive(Serialize)]
struct RunLine<'a> {
    scenario: &'a str,
    seed: u64,
    #[serde(flatten)]
    report: &'a Report,
    events: usize,
    sim_time_ms: u64,
    trace_hash: String,
    expectations_met: bool,
    file: &'a str,
    outcome: &'static str,
    crash: Option<Crash<'a>>,
    unfired_faults: Vec<UnfiredLine<'a>>,
    milestones: &'a Milestones,
    faults: Vec<FaultLine<'a>>,
    cut_short: bool,
    /// What the code of a run cut short waited on that nothing drives.
    waits: Vec<String>,
    /// The fault that explains a run cut short, in words.
    cut_short_by: Option<&'a str>,
    /// The clients that never acquired the lock or never wrote.
    idle_clients: &'a [crate::runner::IdleClient],
    inconclusive: &'a [String],
    expectations: Vec<ExpectationLine<'a>>,
    repro: &'a str,
}

impl<'a> RunLine<'a> {
    fn new(scenario: &'a Scenario, run: &'a ScenarioRun, repro: &'a str) -> RunLine<'a> {
        let result = &run.result;
        RunLine {
            scenario: &scenario.name,
            seed: result.seed,
            report: &run.report,
            events: result.journal.len(),
            sim_time_ms: result.sim_time.as_millis() as u64,
            trace_hash: run.trace_hash(),
            expectations_met: run.expectations_met,
            file: &scenario.file,
            outcome: result.outcome.as_str(),
            crash: Crash::of(&result.outcome),
            unfired_faults: run
                .unfired_faults()
                .map(|f| UnfiredLine {
                    fault: FaultFields::of(f),
                    why: &f.why_unfired,
                })
                .collect(),
            milestones: &run.milestones,
            faults: run
                .faults
                .iter()
                .map(|f| FaultLine {
                    fault: FaultFields::of(f),
                    fired_at_ms: f.fired_at.map(|t| t.as_millis() as u64),
                })
                .collect(),
            cut_short: run.cut_short(),
            waits: result.waits.iter().map(ToString::to_string).collect(),
            cut_short_by: run.cut_short_by.as_deref(),
            idle_clients: &run.idle_clients,
            inconclusive: &run.inconclusive,
            expectations: run
                .expectations
                .iter()
                .map(|e| ExpectationLine {
                    key: e.key,
                    expected: &e.expected,
                    actual: &e.actual,
                    met: e.met(),
                })
                .collect(),
            repro,
        }
    }
}

/// What `faults` and `unfired_faults` say of a fault.
#[derive(Serialize)]
struct FaultFields<'a> {
    kind: &'static str,
    nodes: &'a [String],
    trigger: &'a str,
    line: usize,
}

impl<'a> FaultFields<'a> {
    fn of(f: &'a FaultFiring) -> FaultFields<'a> {
        FaultFields {
            kind: f.kind,
            nodes: &f.nodes,
            trigger: &f.trigger,
            line: f.line,
        }
    }
}

/// An element of `faults`: every fault of the run, and when it fired.
#[derive(Serialize)]
struct FaultLine<'a> {
    #[serde(flatten)]
    fault: FaultFields<'a>,
    fired_at_ms: Option<u64>,
}

/// An element of `unfired_faults`: a scripted fault that never fired, and why.
#[derive(Serialize)]
struct UnfiredLine<'a> {
    #[serde(flatten)]
    fault: FaultFields<'a>,
    why: &'a str,
}

/// An element of `expectations`: an `[expect]` key checked.
#[derive(Serialize)]
struct ExpectationLine<'a> {
    key: &'static str,
    expected: &'a str,
    actual: &'a str,
    met: bool,
}

/// `label` in the 10-column margin, then `text` wrapped beside it.
pub(crate) fn labelled(out: &mut String, label: &str, text: &str) {
    for (i, line) in wrap(text, 78).iter().enumerate() {
        let margin = if i == 0 { label } else { "" };
        writeln!(out, "{margin:<10}{line}").unwrap();
    }
}

/// What a run reached and what it left untested (faults that never fired, a
/// run cut short), one labelled line each (for `step`, after its verdict).
pub(crate) fn run_notes(run: &ScenarioRun) -> Vec<String> {
    let mut lines = vec![format!("reached  {}", run.milestones.reached_text())];
    lines.extend(run.untested().iter().map(|line| format!("untested {line}")));
    lines
}

/// `fencesim designs`.
pub(crate) fn designs(registry: &Registry) -> String {
    let mut out = String::new();
    for role in [Role::Lock, Role::Storage] {
        writeln!(out, "{} designs:", role.as_str()).unwrap();
        for d in registry.designs().iter().filter(|d| d.role == role) {
            writeln!(out, "  {:<12} {}", d.name, d.summary).unwrap();
            for k in d.keys {
                let default = shown_default(k);
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
        client_key_line(&mut out, k);
    }
    writeln!(out, "\nclient processes ([[clients]] process = \"NAME\"):").unwrap();
    for p in registry.processes() {
        writeln!(out, "  {:<18} {}", p.name, p.summary).unwrap();
        if let Some(locks) = p.locks {
            writeln!(out, "      speaks to the lock designs {}", locks.join(", ")).unwrap();
        }
        for k in p.keys {
            client_key_line(&mut out, k);
        }
    }
    out
}

/// A key of a `[[clients]]` table (the client's or a process's own) as a
/// line of `designs`.
fn client_key_line(out: &mut String, k: &KeySpec) {
    writeln!(
        out,
        "      {:<16} {:<18} default {:<9} {}",
        k.name,
        k.kind.to_string(),
        shown_default(k),
        k.doc
    )
    .unwrap();
}

/// A key's default as a scenario file writes it, or `(required)`.
fn shown_default(key: &KeySpec) -> String {
    key.default
        .as_ref()
        .map_or_else(|| "(required)".to_owned(), |d| d.to_string())
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

/// `1 fault`, `2 faults`, `0 faults`: a count with its noun, singular only
/// for one.
pub(crate) fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn plural_is_singular_only_for_one() {
        assert_eq!(super::plural(0, "fault"), "0 faults");
        assert_eq!(super::plural(1, "fault"), "1 fault");
        assert_eq!(super::plural(2, "scenario"), "2 scenarios");
        assert_eq!(super::plural(1, "job"), "1 job");
    }
    use sim::{Actor, Context, NodeId};

    use super::*;
    use crate::design::catalog::DesignInfo;
    use crate::design::StorageDesign;
    use crate::protocol::Msg;

    /// A storage whose server panics on its first write: a bug in a design.
    struct Panics;

    struct PanickingServer;

    impl Actor<Msg> for PanickingServer {
        fn on_message(&mut self, _: &mut Context<'_, Msg>, _: NodeId, _: Msg) {
            panic!("the storage design has a bug");
        }
    }

    impl StorageDesign for Panics {
        type Config = ();

        fn info(&self) -> DesignInfo {
            DesignInfo::storage("panics", "panics on its first write", &[])
        }
        fn server(&self, _: &()) -> Box<dyn Actor<Msg>> {
            Box::new(PanickingServer)
        }
    }

    #[test]
    fn a_crashed_run_is_an_error_and_never_printed_safe() {
        let mut registry = Registry::builtin();
        registry.add_storage(Panics);
        let text = std::fs::read_to_string("scenarios/figure-9-6.toml")
            .unwrap()
            .replace("design = \"fenced\"\ndurable = true", "design = \"panics\"");
        let scenario = crate::scenario::load_str(&registry, "crash.toml", &text).unwrap();
        let run = crate::runner::run(&scenario, 1);
        assert!(matches!(run.result.outcome, sim::Outcome::Crashed { .. }));
        assert_eq!(run.report.verdict, Verdict::Error);
        assert_eq!(run.status, crate::runner::RunStatus::Error);
        let options = LanesOptions {
            width: 20,
            deliveries: false,
            color: false,
        };
        let human = run_human(&scenario, &run, &options, "repro");
        let verdict = human.lines().find(|l| l.starts_with("verdict")).unwrap();
        assert!(verdict.contains("ERROR"), "{verdict}");
        assert!(
            verdict.contains("the storage design has a bug"),
            "{verdict}"
        );
        assert!(!human.contains("SAFE"), "{human}");
        let json: serde_json::Value =
            serde_json::from_str(&run_json(&scenario, &run, "repro")).unwrap();
        assert_eq!(json["verdict"], "error");
    }
}
