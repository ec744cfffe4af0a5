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

use std::time::Duration;

use sim::fault::{self, Fault, ScheduledFault, Scope};
use sim::{Actor, Limits, LinkConfig, NetConfig, Outcome, RunResult, WorldBuilder};

use crate::design::catalog::Registry;
use crate::design::client::{Client, ClientConfig};
use crate::oracle::{self, OracleConfig, Report};
use crate::protocol::{Msg, Op};
use crate::scenario::{FaultKind, Scenario, Trigger, Workload};

/// One run of a scenario, judged.
#[derive(Clone, Debug)]
pub struct ScenarioRun {
    /// The run itself: seed, outcome, journal, times.
    pub result: RunResult,
    /// The oracle's findings.
    pub report: Report,
    /// Each `[expect]` key, checked.
    pub expectations: Vec<Expectation>,
    /// Whether every expectation held (without `[expect]`: no violation), and
    /// the run did not crash.
    pub expectations_met: bool,
    /// Node names, clients first, for lanes.
    pub nodes: Vec<String>,
}

impl ScenarioRun {
    /// The journal's hash (computed on demand: a sweep needs it only for the
    /// seeds it reports).
    pub fn trace_hash(&self) -> String {
        self.result.journal.hash()
    }
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

/// Runs `scenario` with `seed` on a fresh thread, with the bundled designs,
/// and judges it.
pub fn run(scenario: &Scenario, seed: u64) -> ScenarioRun {
    run_with(&Registry::builtin(), scenario, seed)
}

/// Runs `scenario` with `seed`, building its designs from `registry` (which
/// must hold those the scenario was loaded with), and judges it.
pub fn run_with(registry: &Registry, scenario: &Scenario, seed: u64) -> ScenarioRun {
    run_within(registry, scenario, seed, sim::run::default_run_timeout())
}

/// [`run_with`] within a wall-clock `budget` (`None`: none): a run still
/// going after it ends as `Outcome::TimedOut` (see `sim::run_within`).
pub fn run_within(
    registry: &Registry,
    scenario: &Scenario,
    seed: u64,
    budget: Option<Duration>,
) -> ScenarioRun {
    let (s, r) = (scenario.clone(), registry.clone());
    let result = sim::run_within(seed, budget, move || world(&r, &s));
    judge(scenario, result)
}

/// Judges a finished run of `scenario`.
pub fn judge(scenario: &Scenario, result: RunResult) -> ScenarioRun {
    let config = OracleConfig {
        strict: scenario.strict,
    };
    let report = oracle::check(&result.journal, &config);
    let expectations = expectations(scenario, &report);
    let crashed = matches!(
        result.outcome,
        Outcome::Crashed { .. } | Outcome::TimedOut { .. }
    );
    let expectations_met = !crashed
        && if expectations.is_empty() {
            report.verdict == oracle::Verdict::Safe
        } else {
            expectations.iter().all(Expectation::met)
        };
    ScenarioRun {
        nodes: scenario.node_names(),
        result,
        report,
        expectations,
        expectations_met,
    }
}

fn expectations(scenario: &Scenario, report: &Report) -> Vec<Expectation> {
    let e = &scenario.expect;
    let mut out = Vec::new();
    if let Some(v) = e.verdict {
        out.push(Expectation {
            key: "verdict",
            expected: v.as_str().to_owned(),
            actual: report.verdict.as_str().to_owned(),
        });
    }
    let counts = [
        ("stale_writes", e.stale_writes, report.stale_writes),
        ("zombie_writes", e.zombie_writes, report.zombie_writes),
        ("accepted_writes", e.accepted_writes, report.accepted_writes),
        ("rejected_writes", e.rejected_writes, report.rejected_writes),
        (
            "token_regressions",
            e.token_regressions,
            report.token_regressions,
        ),
        ("lost_updates", e.lost_updates, report.lost_updates),
        (
            "false_rejections",
            e.false_rejections,
            report.false_rejections,
        ),
    ];
    for (key, expected, actual) in counts {
        if let Some(expected) = expected {
            out.push(Expectation {
                key,
                expected: expected.to_string(),
                actual: actual.to_string(),
            });
        }
    }
    out
}

/// The world a scenario describes: clients, lock node(s), storage, network
/// and faults.
///
/// # Panics
/// If `registry` cannot build one of the scenario's designs (it was loaded
/// with another registry, or a design was added as metadata only).
pub fn world(registry: &Registry, s: &Scenario) -> WorldBuilder<Msg> {
    let lock = registry.lock(&s.lock.design).unwrap_or_else(|| {
        panic!(
            "no builder for lock design {:?} in the registry",
            s.lock.design
        )
    });
    let storage = registry.storage(&s.storage.design).unwrap_or_else(|| {
        panic!(
            "no builder for storage design {:?} in the registry",
            s.storage.design
        )
    });
    let lock_nodes = s.lock_nodes();
    let mut w = WorldBuilder::new(Limits {
        duration: s.duration,
        max_events: s.max_events,
    });
    for c in &s.clients {
        let config = ClientConfig {
            start: c.start,
            rounds: c.rounds,
            work: c.work,
            op: match c.workload {
                Workload::Write => Op::Put,
                Workload::Increment => Op::Increment,
            },
            retry: c.retry,
            timeout: c.timeout,
            check_lease: c.check_lease,
            renew: c.renew,
            fence_on_acquire: c.fence_on_acquire,
            ..ClientConfig::default()
        };
        let protocol = lock.client(&s.lock.params, &lock_nodes);
        w.node(c.name.clone(), Client::with_protocol(config, protocol));
    }
    for (index, name) in lock_nodes.iter().enumerate() {
        w.node(name.clone(), Boxed(lock.server(&s.lock.params, index)));
    }
    w.node("storage", Boxed(storage.server(&s.storage.params)));
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
            fault: to_fault(&f.kind),
            trigger: match &f.trigger {
                Trigger::At(at) => fault::Trigger::At(*at),
                Trigger::After {
                    node,
                    event,
                    nth,
                    delay,
                } => fault::Trigger::After {
                    node: node.clone(),
                    kind: event.clone(),
                    nth: *nth,
                    delay: *delay,
                },
            },
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
}

fn scope(count: Option<u64>, window: Option<Duration>) -> Scope {
    match (count, window) {
        (_, Some(w)) => Scope::Window(w),
        (Some(n), None) => Scope::Count(n),
        (None, None) => Scope::Count(1),
    }
}

fn to_fault(kind: &FaultKind) -> Fault {
    match kind.clone() {
        FaultKind::Pause { node, duration } => Fault::Pause(fault::Pause { node, duration }),
        FaultKind::Clock {
            node,
            offset,
            rate,
            jump,
        } => Fault::Clock(fault::ClockChange {
            node,
            offset_ns: offset,
            rate,
            jump_ns: jump,
        }),
        FaultKind::Delay {
            from,
            to,
            extra,
            count,
            window,
        } => Fault::Delay(fault::Delay {
            from,
            to,
            extra,
            scope: scope(count, window),
        }),
        FaultKind::Drop {
            from,
            to,
            count,
            window,
        } => Fault::Drop(fault::Drop {
            from,
            to,
            scope: scope(count, window),
        }),
        FaultKind::Duplicate {
            from,
            to,
            count,
            window,
        } => Fault::Duplicate(fault::Duplicate {
            from,
            to,
            scope: scope(count, window),
        }),
        FaultKind::Partition {
            groups,
            duration,
            one_way,
        } => Fault::Partition(fault::Partition {
            groups,
            duration,
            one_way,
        }),
        FaultKind::Crash {
            node,
            restart_after,
        } => Fault::Crash(fault::Crash {
            node,
            restart_after,
        }),
    }
}
