//! Runs a scenario: builds its world, runs one seed, judges the journal and
//! checks the scenario's `[expect]`.
//!
//! ```no_run
//! use fencesim::design::catalog::Registry;
//! use fencesim::{runner, scenario};
//! let s = scenario::load_file(&Registry::builtin(), "scenarios/figure-9-6.toml".as_ref()).unwrap();
//! let run = runner::run(&s, s.seed);
//! assert!(run.expectations_met);
//! ```

use std::borrow::Cow;
use std::time::Duration;

use serde::Serialize;
use sim::fault::ScheduledFault;
use sim::{Actor, Limits, LinkConfig, NetConfig, Outcome, RunResult, WorldBuilder};

use crate::design::client::{Client, ClientConfig};
use crate::oracle::{self, Milestones, OracleConfig, Report, Verdict};
use crate::protocol::Msg;
use crate::scenario::{write, Scenario, Trigger};
use sim::journal::seconds;

/// One run of a scenario, judged.
#[derive(Clone, Debug)]
pub struct ScenarioRun {
    /// The run itself: seed, outcome, journal, times.
    pub result: RunResult,
    /// The oracle's findings; its verdict is [`Verdict::Error`] when the run
    /// crashed, and [`Verdict::Inconclusive`] when it found no violation but
    /// no write reached the storage.
    pub report: Report,
    /// Each `[expect]` key, checked.
    pub expectations: Vec<Expectation>,
    /// Whether the run ended [`RunStatus::Ok`]: it did not crash, every
    /// expectation held (without `[expect]`: no violation), and it was not
    /// inconclusive without `[expect]` saying so.
    pub expectations_met: bool,
    /// Node names, clients first, for lanes.
    pub nodes: Vec<String>,
    /// Every fault of the run, in the scenario's order, with when it fired.
    pub faults: Vec<FaultFiring>,
    /// The dangerous situations the run reached.
    pub milestones: Milestones,
    /// Why the run tested less than it claims, when `[expect]` did not say
    /// so: no write reached the storage, a scripted fault never fired, the
    /// run was cut short. Empty for a conclusive run.
    pub inconclusive: Vec<String>,
    /// What the run amounts to (the CLI's exit status).
    pub status: RunStatus,
    /// Each client that never acquired the lock, or acquired it and never
    /// wrote, with which of the two, in the scenario's order.
    pub idle_clients: Vec<IdleClient>,
    /// For a run cut short: the fault of the run that explains it (a crash
    /// for good, a pause or partition that lasted to the end), in words;
    /// `None` when no fault does, or when the run was not cut short.
    pub cut_short_by: Option<String>,
}

/// A client that the run never saw acquire, or never saw write.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IdleClient {
    /// The client's node.
    pub name: String,
    /// Whether it acquired the lock at least once (then it never wrote).
    pub acquired: bool,
    /// Whether it is a hosted process (the code under test), not a bundled
    /// client.
    pub process: bool,
}

impl std::fmt::Display for IdleClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = if self.acquired {
            "acquired the lock but never wrote"
        } else {
            "never acquired the lock"
        };
        let who = if self.process { " (a process)" } else { "" };
        write!(f, "{}{who} {what}", self.name)
    }
}

impl ScenarioRun {
    /// The journal's hash (computed on demand: a sweep needs it only for the
    /// seeds it reports).
    pub fn trace_hash(&self) -> String {
        self.result.journal.hash()
    }

    /// The scripted faults that never fired.
    pub fn unfired_faults(&self) -> impl Iterator<Item = &FaultFiring> {
        self.faults
            .iter()
            .filter(|f| f.scripted && f.fired_at.is_none())
    }

    /// Whether the run stopped before its clients finished: it stalled, or
    /// hit the time or event limit.
    pub fn cut_short(&self) -> bool {
        is_cut_short(&self.result.outcome)
    }

    /// Whether the run was cut short and none of its faults explains it:
    /// its own code stalled (on a wait nothing drives, or a message it
    /// never got over), or ran out of time.
    pub fn cut_short_unexplained(&self) -> bool {
        self.cut_short() && self.cut_short_by.is_none()
    }

    /// What the run left untested, one sentence each, whether or not
    /// `[expect]` names it: each scripted fault that never fired, and a run
    /// cut short. Empty when every fault fired and the run completed.
    pub fn untested(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .unfired_faults()
            .map(|f| format!("the {} never fired: {}", f.name(), f.why_unfired))
            .collect();
        out.extend(self.cut_short_sentence());
        out
    }

    /// For a run cut short: how, and what its code waited on or the fault
    /// that explains it, in one sentence. `None` for a run that was not.
    pub fn cut_short_sentence(&self) -> Option<String> {
        self.cut_short().then(|| {
            format!(
                "the run was cut short ({}): {}{}",
                self.result.outcome,
                cut_short_text(&self.result.outcome),
                cut_short_cause(&self.result, self.cut_short_by.as_deref())
            )
        })
    }
}

/// Whether an outcome is a run cut short (stalled, time limit, event limit).
pub fn is_cut_short(outcome: &Outcome) -> bool {
    outcome.is_cut_short()
}

/// The `crash` field of `run --json` and of explore's per-seed lines: the
/// node and panic of a crashed run; for a run that outlived its wall-clock
/// budget, the node whose handler was running when that is known, and the
/// outcome in words.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Crash<'a> {
    /// The node whose handler panicked, or was running when the run timed
    /// out (`None`: outside a handler, or not known).
    pub node: Option<&'a str>,
    /// The panic message and location, or why the run timed out.
    pub message: Cow<'a, str>,
}

impl<'a> Crash<'a> {
    /// The crash of a run that ended `outcome`; `None` unless it crashed or
    /// timed out.
    pub fn of(outcome: &'a Outcome) -> Option<Crash<'a>> {
        match outcome {
            Outcome::Crashed { node, message } => Some(Crash {
                node: node.as_deref(),
                message: Cow::Borrowed(message),
            }),
            Outcome::TimedOut { node, .. } => Some(Crash {
                node: node.as_deref(),
                message: Cow::Owned(outcome.to_string()),
            }),
            _ => None,
        }
    }
}

/// What a judged run amounts to, most severe first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunStatus {
    /// The run crashed: an internal error.
    Error,
    /// A violation nobody expected, or an expectation that failed.
    Failed,
    /// The run judged nothing, a scripted fault never fired or the run was
    /// cut short, and `[expect]` did not say so.
    Inconclusive,
    /// Everything held.
    Ok,
}

/// One fault of a run and whether it fired.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultFiring {
    /// Its position among the run's faults, from 0.
    pub index: usize,
    /// `pause`, `clock`, …
    pub kind: &'static str,
    /// The nodes it names.
    pub nodes: Vec<String>,
    /// Its trigger as a scenario writes it: `after = "client1:lapsed"`,
    /// `at = "5s"` (with `, delay = "…"` when it has one).
    pub trigger: String,
    /// Line of its `[[faults]]` header (0: not from a file, e.g. random).
    pub line: usize,
    /// True time at which it fired; `None`: never.
    pub fired_at: Option<Duration>,
    /// One of the scenario's own faults (not added by `--faults random`):
    /// only those make a run inconclusive when they never fire.
    pub scripted: bool,
    /// Why it never fired, in words (empty when it fired).
    pub why_unfired: String,
}

/// One `[expect]` key compared with what happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expectation {
    /// The key (`verdict`, `stale_writes`, …).
    pub key: &'static str,
    /// What the file expects.
    pub expected: String,
    /// What the run gave.
    pub actual: String,
}

impl Expectation {
    /// Whether it held.
    pub fn met(&self) -> bool {
        self.expected == self.actual
    }
}

/// Runs `scenario` with `seed` on a fresh thread and judges it:
/// [`RunConfig::new`]`(seed).run(scenario)`. The world is built from the
/// designs the scenario was loaded with
/// ([`DesignSpec::resolved`](crate::scenario::DesignSpec::resolved)): a
/// user's own designs run as they were loaded, with no registry to pass.
pub fn run(scenario: &Scenario, seed: u64) -> ScenarioRun {
    RunConfig::new(seed).run(scenario)
}

/// How to make and judge one run of a scenario: its seed, how many of the
/// scenario's faults are its own, the wall-clock budget, and the thread it
/// runs on. Built with [`RunConfig::new`] and its setters; then
/// [`RunConfig::run`] makes the run, or [`RunConfig::judge`] judges one
/// made elsewhere.
///
/// ```no_run
/// use std::time::Duration;
/// use fencesim::design::catalog::Registry;
/// use fencesim::runner::RunConfig;
/// let s = fencesim::scenario::load_file(&Registry::builtin(), "scenarios/figure-9-6.toml".as_ref()).unwrap();
/// let run = RunConfig::new(s.seed).budget(Some(Duration::from_secs(60))).run(&s);
/// assert!(run.expectations_met);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunConfig {
    seed: u64,
    scripted: Option<usize>,
    budget: Option<Duration>,
    here: bool,
    used: bool,
}

impl RunConfig {
    /// A run with `seed`, on a fresh thread, with no wall-clock budget, in
    /// which every fault of the scenario is its own.
    pub fn new(seed: u64) -> RunConfig {
        RunConfig {
            seed,
            scripted: None,
            budget: None,
            here: false,
            used: false,
        }
    }

    /// Only the scenario's first `scripted` faults are its own; the others
    /// were added to it (`--faults random`) and may never fire without
    /// making the run inconclusive.
    pub fn scripted(mut self, scripted: usize) -> RunConfig {
        self.scripted = Some(scripted);
        self
    }

    /// A run still going after `budget` of wall-clock time (`None`: none)
    /// ends as `Outcome::TimedOut`, with its journal up to then (see
    /// `sim::run_within`).
    /// A run on the calling thread has none: its caller watches it.
    pub fn budget(mut self, budget: Option<Duration>) -> RunConfig {
        self.budget = budget;
        self
    }

    /// The calling thread waits for the run, with no budget (its caller
    /// watches it). A scenario that hosts user code
    /// ([`Scenario::hosts_user_code`]) runs on a fresh thread spawned for
    /// it (see `sim::run_fresh`), borrowing the scenario rather than copying
    /// it: never two such seeds on one thread, whose hasher keys and
    /// thread-locals would reach the second. fencesim's own designs keep
    /// nothing on a thread, and run on the calling thread itself. This is
    /// how sweeps run their seeds.
    pub fn here(mut self) -> RunConfig {
        self.here = true;
        self
    }

    /// Runs on a thread that first runs another seed of the scenario (see
    /// `sim::run_within_used`): a run that then differs from the same
    /// seed's on a fresh thread depends on what a thread keeps between
    /// runs. `check` compares the two.
    pub fn used_thread(mut self) -> RunConfig {
        self.used = true;
        self
    }

    fn scripted_of(&self, scenario: &Scenario) -> usize {
        self.scripted.unwrap_or(scenario.faults.len())
    }

    /// Runs `scenario` and judges it.
    pub fn run(&self, scenario: &Scenario) -> ScenarioRun {
        let result = if self.here && !scenario.hosts_user_code() {
            // fencesim's own code keeps nothing on a thread: the calling
            // thread serves seed after seed, at no cost of a thread each.
            sim::run_here(self.seed, || world(scenario))
        } else if self.here {
            sim::run_fresh(self.seed, || world(scenario))
        } else if self.used {
            let s = scenario.clone();
            sim::run_within_used(self.seed, self.budget, move || world(&s))
        } else {
            let s = scenario.clone();
            sim::run_within(self.seed, self.budget, move || world(&s))
        };
        self.judge(scenario, result)
    }

    /// Judges `result`, a finished run of `scenario` (its seed is the
    /// result's own).
    pub fn judge(&self, scenario: &Scenario, result: RunResult) -> ScenarioRun {
        let config = OracleConfig {
            strict: scenario.strict,
            lock_nodes: scenario.lock_nodes().len(),
            roles: oracle::Roles::of(scenario),
        };
        let (mut report, milestones) = oracle::check_and_count(&result.journal, &config);
        // A crashed run, or a journal the oracle cannot trust (its verdict
        // is already `error`), is an error whatever `[expect]` says.
        let crashed = result.outcome.is_error();
        let errored = crashed || !report.untrusted.is_empty();
        if crashed {
            report.verdict = Verdict::Error;
        } else if report.verdict == Verdict::Safe && report.judged_nothing() {
            report.verdict = Verdict::Inconclusive;
        }
        let faults = firings(scenario, &result, self.scripted_of(scenario));
        let unfired = faults
            .iter()
            .filter(|f| f.scripted && f.fired_at.is_none())
            .count() as u64;
        let mut expectations = expectations(scenario, &report, unfired, &result);
        expectations.extend(mechanism(scenario, &report, &milestones));
        let idle_clients = idle_clients(scenario, &result);
        let cut_short_by = if result.outcome.is_cut_short() && result.waits.is_empty() {
            explaining_fault(scenario, &faults, &result)
        } else {
            None
        };
        let inconclusive = inconclusive(
            scenario,
            &report,
            &faults,
            &result,
            &idle_clients,
            cut_short_by.as_deref(),
        );
        // A violation is definite, whatever else the run left untested: it fails
        // unless `[expect]` asks for it (by its verdict, or by counts alone).
        let unexpected_violation = report.verdict == Verdict::Violation
            && match scenario.expect.verdict {
                Some(v) => v != Verdict::Violation,
                None => expectations.is_empty(),
            };
        let status = if errored {
            RunStatus::Error
        } else if unexpected_violation {
            RunStatus::Failed
        } else if !inconclusive.is_empty() {
            RunStatus::Inconclusive
        } else if expectations.iter().all(Expectation::met) {
            RunStatus::Ok
        } else {
            RunStatus::Failed
        };
        ScenarioRun {
            nodes: scenario.node_names(),
            milestones,
            result,
            report,
            expectations,
            expectations_met: status == RunStatus::Ok,
            faults,
            inconclusive,
            status,
            idle_clients,
            cut_short_by,
        }
    }
}

/// Why a run is inconclusive, for each reason `[expect]` does not name.
fn inconclusive(
    scenario: &Scenario,
    report: &Report,
    faults: &[FaultFiring],
    result: &RunResult,
    idle: &[IdleClient],
    cut_short_by: Option<&str>,
) -> Vec<String> {
    let outcome = &result.outcome;
    let e = &scenario.expect;
    let mut out = Vec::new();
    if report.verdict == Verdict::Inconclusive && e.verdict != Some(Verdict::Inconclusive) {
        out.push("no write reached the storage: the run judged nothing".to_owned());
    }
    if e.unfired_faults.is_none() {
        for f in faults.iter().filter(|f| f.scripted && f.fired_at.is_none()) {
            out.push(format!("{} never fired: {}", f.name(), f.why_unfired));
        }
    }
    if is_cut_short(outcome) && e.outcome.is_none() {
        out.push(format!(
            "the run was cut short: {}{}",
            cut_short_text(outcome),
            cut_short_cause(result, cut_short_by)
        ));
    }
    // A process is the code under test: a run in which it never took the
    // lock tested none of it.
    let judged = !outcome.is_error();
    for client in idle.iter().filter(|c| judged && c.process && !c.acquired) {
        if !e.idle_clients.contains(&client.name) {
            out.push(format!(
                "{client}: the code under test was never exercised (`[expect] idle_clients` \
                 names the clients meant to stay idle)"
            ));
        }
    }
    out
}

/// `: client1: its task 1 awaits …` for a run whose code waited on what
/// nothing drives; `, explained by …` for one a fault cut short.
fn cut_short_cause(result: &RunResult, by: Option<&str>) -> String {
    if !result.waits.is_empty() {
        let waits: Vec<String> = result.waits.iter().map(ToString::to_string).collect();
        format!("; {}", waits.join("; "))
    } else if let Some(by) = by {
        format!("; the {by}")
    } else {
        String::new()
    }
}

/// The clients that never acquired the lock, or never wrote, in the
/// scenario's order.
fn idle_clients(scenario: &Scenario, result: &RunResult) -> Vec<IdleClient> {
    let mut acquired = vec![false; scenario.clients.len()];
    let mut wrote = vec![false; scenario.clients.len()];
    for e in result.journal.events() {
        let is_acquired = e.kind == crate::events::ACQUIRED;
        if !is_acquired && e.kind != crate::events::WROTE {
            continue;
        }
        if let Some(i) = scenario.clients.iter().position(|c| c.name == *e.node) {
            if is_acquired {
                acquired[i] = true;
            } else {
                wrote[i] = true;
            }
        }
    }
    scenario
        .clients
        .iter()
        .enumerate()
        .filter(|(i, _)| !wrote[*i])
        .map(|(i, c)| IdleClient {
            name: c.name.clone(),
            acquired: acquired[i],
            process: c.process.is_some(),
        })
        .collect()
}

/// The fault that explains why a run was cut short, in words; `None` when
/// none does. Best, one that fired and was still in force when the run
/// ended (a crash without restart or whose restart was due after the end, a
/// pause, partition or delay lasting past it); else, for a run at its time
/// or event limit, any fault that fired (pauses, delays, retries after lost
/// messages and slow clocks all push work past the scenario's duration);
/// for a stalled run, one that lost messages or took a node down (a reply
/// that never came).
fn explaining_fault(
    scenario: &Scenario,
    faults: &[FaultFiring],
    result: &RunResult,
) -> Option<String> {
    let end = result.sim_time;
    let fired = || faults.iter().filter(|f| f.fired_at.is_some());
    let lasting = fired().find_map(|f| {
        let fault = &scenario.faults.get(f.index)?.fault;
        let kinds = matches!(f.kind, "crash" | "pause" | "partition" | "delay");
        let in_force = match fault.magnitude() {
            None => f.kind == "crash",
            Some(d) => f.fired_at? + d >= end,
        };
        (kinds && in_force).then(|| {
            if f.kind == "crash" && fault.magnitude().is_none() {
                format!("{} took it down for good", f.name())
            } else {
                format!("{} was still in force when the run ended", f.name())
            }
        })
    });
    lasting.or_else(|| match result.outcome {
        Outcome::TimeLimit | Outcome::EventLimit => fired().next().map(|f| {
            format!(
                "{} (and any after it) slowed the run past its limit",
                f.name()
            )
        }),
        Outcome::Stalled => fired()
            .find(|f| matches!(f.kind, "crash" | "partition" | "drop"))
            .map(|f| format!("{} lost what a node was waiting for", f.name())),
        _ => None,
    })
}

/// What a cut-short outcome means, in words.
pub fn cut_short_text(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Stalled => "it stalled (work was pending but nothing could happen any more)",
        Outcome::TimeLimit => "it reached the scenario's duration before its clients finished",
        Outcome::EventLimit => {
            "it reached the event limit (max_events) before its clients finished"
        }
        _ => "it ended normally",
    }
}

impl FaultFiring {
    /// `pause of client1 (line 31, after = "client1:lapsed")`.
    pub fn name(&self) -> String {
        let line = if self.line > 0 {
            format!("line {}, ", self.line)
        } else {
            String::new()
        };
        format!(
            "{} of {} ({line}{})",
            self.kind,
            self.nodes.join(", "),
            self.trigger
        )
    }
}

fn firings(scenario: &Scenario, result: &RunResult, scripted: usize) -> Vec<FaultFiring> {
    scenario
        .faults
        .iter()
        .enumerate()
        .map(|(index, f)| {
            let fired_at = result.faults_fired.get(index).copied().flatten();
            FaultFiring {
                index,
                kind: f.fault.kind(),
                nodes: f.fault.nodes().into_iter().map(str::to_owned).collect(),
                trigger: trigger_text(&f.trigger),
                line: f.line,
                fired_at,
                scripted: index < scripted,
                // Only an unfired fault needs the journal searched.
                why_unfired: match fired_at {
                    Some(_) => String::new(),
                    None => why_unfired(&f.trigger, result),
                },
            }
        })
        .collect()
}

/// `after = "client1:acquired:2", delay = "500ms"` or `at = "5s"`.
fn trigger_text(trigger: &Trigger) -> String {
    let keys: Vec<String> = write::trigger_keys(trigger)
        .into_iter()
        .map(|(key, value)| format!("{key} = {value}"))
        .collect();
    keys.join(", ")
}

/// Why a fault with `trigger` never fired in `result`, in words.
fn why_unfired(trigger: &Trigger, result: &RunResult) -> String {
    let end = seconds(result.sim_time.as_nanos() as u64);
    match trigger {
        Trigger::At(at) => format!(
            "the run ended at {end}, before {}",
            seconds(at.as_nanos() as u64)
        ),
        Trigger::After {
            node,
            kind: event,
            nth,
            delay,
        } => {
            let seen = result
                .journal
                .events()
                .iter()
                .filter(|e| e.is(node, event))
                .count();
            if seen == 0 {
                format!("{node} never logged `{event}` in this run")
            } else if seen < *nth as usize {
                format!("{node} logged `{event}` only {seen} times, not {nth}")
            } else {
                format!(
                    "it was due {} after {node}'s `{event}`, past the end of the run at {end}",
                    seconds(delay.as_nanos() as u64)
                )
            }
        }
    }
}

/// `[expect] mechanism`: the milestones it lists that the run's own bug
/// reached, against all of them. The bug is a finding of a kind `[expect]`
/// counts (any finding, if it counts none), judged on its own milestones
/// ([`oracle::Report::finding_milestones`]; the run's for a finding not
/// made at an acceptance): the one that reached the most of them. With no
/// such finding, the run's milestones.
fn mechanism(scenario: &Scenario, report: &Report, run: &Milestones) -> Option<Expectation> {
    let expect = &scenario.expect;
    let listed = &expect.mechanism;
    if listed.is_empty() {
        return None;
    }
    let kinds = expect.violation_kinds();
    let reached_by = |m: &Milestones| -> Vec<&str> {
        let pairs = m.pairs();
        listed
            .iter()
            .filter(|name| pairs.iter().any(|(n, c)| n == *name && *c > 0))
            .map(String::as_str)
            .collect()
    };
    let actual = report
        .violations
        .iter()
        .filter(|v| kinds.is_empty() || kinds.contains(&v.kind.counter()))
        .map(|v| reached_by(report.finding_milestones.get(&v.seq).unwrap_or(run)))
        // The first of the findings that reach the most.
        .fold(None::<Vec<&str>>, |best, r| match best {
            Some(b) if b.len() >= r.len() => Some(b),
            _ => Some(r),
        })
        .unwrap_or_else(|| reached_by(run));
    Some(Expectation {
        key: "mechanism",
        expected: listed.join(", "),
        actual: if actual.is_empty() {
            "none".to_owned()
        } else {
            actual.join(", ")
        },
    })
}

fn expectations(
    scenario: &Scenario,
    report: &Report,
    unfired: u64,
    result: &RunResult,
) -> Vec<Expectation> {
    let outcome = &result.outcome;
    let e = &scenario.expect;
    let mut out = Vec::new();
    if let Some(v) = e.verdict {
        out.push(Expectation {
            key: "verdict",
            expected: v.as_str().to_owned(),
            actual: report.verdict.as_str().to_owned(),
        });
    }
    if let Some(expected) = &e.outcome {
        out.push(Expectation {
            key: "outcome",
            expected: expected.clone(),
            actual: outcome.as_str().to_owned(),
        });
    }
    let counts = e
        .counts
        .iter()
        .map(|(c, n)| (c.name(), *n, *report.counters.get(c)))
        .chain([
            (
                "false_rejections",
                e.false_rejections,
                report.false_rejections,
            ),
            ("unfired_faults", e.unfired_faults, unfired),
        ]);
    for (key, expected, actual) in counts {
        if let Some(expected) = expected {
            out.push(Expectation {
                key,
                expected: expected.to_string(),
                actual: actual.to_string(),
            });
        }
    }
    if !e.always.is_empty() {
        let broken = broken_properties(&e.always, report, result);
        let actual: Vec<String> = e
            .always
            .iter()
            .map(|p| match broken.contains(&p.as_str()) {
                true => format!("not {p}"),
                false => p.clone(),
            })
            .collect();
        out.push(Expectation {
            key: "always",
            expected: e.always.join(", "),
            actual: actual.join(", "),
        });
    }
    out
}

/// Which of the properties `always` (by [`ALWAYS`](crate::scenario::model::ALWAYS)
/// name) the run `result`, judged `report`, broke, in that list's order:
/// - `no_false_rejections` when the storage turned the current holder away;
/// - `completes` when the run was cut short (stalled, or at its time or
///   event limit) while every node was up at the end. A node that crashed
///   and never came back leaves its work undone by the fault's doing, not
///   the design's; a crash or a timeout of the run itself is an error of its
///   own, not counted here.
pub fn broken_properties(
    always: &[String],
    report: &Report,
    result: &RunResult,
) -> Vec<&'static str> {
    crate::scenario::model::ALWAYS
        .into_iter()
        .filter(|p| always.iter().any(|a| a == p))
        .filter(|&p| match p {
            "no_false_rejections" => report.false_rejections > 0,
            _ => is_cut_short(&result.outcome) && down_at_end(&result.journal).is_empty(),
        })
        .collect()
}

/// The nodes that crashed (or were powered off) and had not restarted when
/// the journal ends, in name order.
pub fn down_at_end(journal: &sim::journal::Journal) -> Vec<&str> {
    let mut down = std::collections::BTreeSet::new();
    for e in journal.events() {
        match sim::events::WorldEvent::decode(e) {
            Ok(Some(sim::events::WorldEvent::Crash { .. })) => {
                down.insert(e.node.as_str());
            }
            Ok(Some(sim::events::WorldEvent::Restart)) => {
                down.remove(e.node.as_str());
            }
            _ => {}
        }
    }
    down.into_iter().collect()
}

/// The world a scenario describes: clients, lock node(s), storage, network
/// and faults.
///
/// # Panics
/// If one of the scenario's designs cannot be built: it was registered as
/// metadata only ([`Registry::add`](crate::design::catalog::Registry::add)).
pub fn world(s: &Scenario) -> WorldBuilder<Msg> {
    world_with(s, |_, _| None)
}

/// [`world`], with `client` choosing what each client node runs: `None`
/// for the bundled client with the settings the scenario gives it, or an
/// actor of its own (a hosted process, say) given those settings.
pub fn world_with(
    s: &Scenario,
    client: impl Fn(&str, &ClientConfig) -> Option<Box<dyn Actor<Msg>>>,
) -> WorldBuilder<Msg> {
    let unbuilt = |spec: &crate::scenario::DesignSpec| -> ! {
        panic!(
            "design `{}` was registered as metadata only (Registry::add): a run needs \
             Registry::add_lock or Registry::add_storage",
            spec.design
        )
    };
    let lock = s.lock.resolved.lock().unwrap_or_else(|| unbuilt(&s.lock));
    let storage = s
        .storage
        .resolved
        .storage()
        .unwrap_or_else(|| unbuilt(&s.storage));
    let lock_nodes = s.lock_nodes();
    let mut w = WorldBuilder::new(Limits {
        duration: s.duration,
        max_events: s.max_events,
    });
    for c in &s.clients {
        let config = c.config();
        let process = || {
            c.process.as_ref().map(|p| {
                Box::new((p.make)(&config, &c.process_params, &lock_nodes)) as Box<dyn Actor<Msg>>
            })
        };
        match client(&c.name, &config).or_else(process) {
            Some(actor) => w.node(c.name.clone(), Boxed(actor)),
            None => {
                let protocol = lock.client(&s.lock.params, &lock_nodes);
                w.node(c.name.clone(), Client::with_protocol(config, protocol))
            }
        };
    }
    for (index, name) in lock_nodes.iter().enumerate() {
        w.node(name.clone(), Boxed(lock.server(&s.lock.params, index)));
    }
    w.node(
        ClientConfig::STORAGE,
        Boxed(storage.server(&s.storage.params)),
    );
    let link = |latency: (Duration, Duration), loss, duplicate| LinkConfig {
        latency_min: latency.0,
        latency_max: latency.1,
        loss,
        duplicate,
    };
    let n = &s.network;
    w.network(NetConfig {
        default: link(n.latency, n.loss, n.duplicate),
        links: n
            .links
            .iter()
            .map(|l| {
                let cfg = link(
                    l.latency.unwrap_or(n.latency),
                    l.loss.unwrap_or(n.loss),
                    l.duplicate.unwrap_or(n.duplicate),
                );
                (l.from.clone(), l.to.clone(), cfg)
            })
            .collect(),
    });
    for f in &s.faults {
        w.fault(ScheduledFault {
            fault: f.fault.clone(),
            trigger: f.trigger.clone(),
        });
    }
    w
}

/// Designs come boxed from the registry; `WorldBuilder::node` takes an
/// `impl Actor`, so they go in through this forwarding wrapper.
struct Boxed(Box<dyn Actor<Msg>>);

impl Actor<Msg> for Boxed {
    fn on_start(&mut self, ctx: &mut sim::Context<'_, Msg>) {
        self.0.on_start(ctx)
    }
    fn on_message(&mut self, ctx: &mut sim::Context<'_, Msg>, from: sim::NodeId, msg: Msg) {
        self.0.on_message(ctx, from, msg)
    }
    fn on_timer(&mut self, ctx: &mut sim::Context<'_, Msg>, id: sim::TimerId, tag: u64) {
        self.0.on_timer(ctx, id, tag)
    }
    fn on_crash(&mut self) {
        self.0.on_crash()
    }
    fn is_done(&self) -> bool {
        self.0.is_done()
    }
    fn undriven_waits(&self) -> Vec<String> {
        self.0.undriven_waits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `write::duration` quotes its text: the trigger is shown once quoted,
    /// as a scenario file writes it.
    #[test]
    fn triggers_read_as_written() {
        let at = Trigger::At(Duration::from_secs(20));
        assert_eq!(trigger_text(&at), "at = \"20s\"");
        let after = Trigger::After {
            node: "client1".into(),
            kind: "acquired".into(),
            nth: 2,
            delay: Duration::from_millis(500),
        };
        assert_eq!(
            trigger_text(&after),
            "after = \"client1:acquired:2\", delay = \"500ms\""
        );
    }
}
