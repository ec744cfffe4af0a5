//! Margins: for each fault that applies to a scenario, the smallest
//! magnitude, to the millisecond, at which its verdict flips, found by
//! deterministic runs (the scenario's own faults plus the one probed, same
//! seed).
//!
//! The probes ([`probes`]): a pause of each client right after its first
//! `acquired`; a forward and a backward clock jump on each node right after
//! the first client's first `acquired`; each node's clocks running fast or
//! slow from the start; an extra delay on the first message of each link
//! client → storage and lock → client; and the magnitude of each of the
//! scenario's own faults that has one (a pause's or partition's duration, a
//! delay's extra, a crash's downtime, a jump). A probe that repeats one of
//! the scenario's own faults (same kind, node and trigger) is left to that
//! fault's own row.
//!
//! How a threshold is found ([`search`]): the run at 1 ms must give the
//! reference verdict (the scenario as written; for a scenario's own fault,
//! the run at 1 ms is the reference), else the probe "flips at the low
//! end". Then 16 evenly spaced magnitudes up to the probe's maximum are
//! run; the first that flips is bisected against the point before it, to
//! the millisecond. No point flips: "no flip up to MAX". A point past the
//! first flip that flips back marks the row not monotone. A flip narrower
//! than the scan's step can be missed; everything reported was run.
//!
//! ```no_run
//! use fencesim::design::catalog::Registry;
//! use fencesim::explore::margin;
//! let s = fencesim::scenario::load_file(&Registry::builtin(), "scenarios/figure-9-6-unfenced.toml".as_ref()).unwrap();
//! for row in margin::margins(&s, s.seed) {
//!     println!("{}", row.text());
//! }
//! ```

mod render;

use std::collections::BTreeMap;
use std::time::Duration;

use sim::fault::{ClockChange, Delay, Fault, Pause, Scope, Trigger};

use super::sweep;
use crate::oracle::Verdict;
use crate::runner;
use crate::scenario::fault_kind;
use crate::scenario::{FaultSpec, ParamValue, Scenario};
pub use render::secs;

/// Magnitudes the scan runs before bisecting.
pub const SCAN_POINTS: u64 = 16;
/// The largest drift a rate probe tries, in ms per second: 1000 (fast: rate
/// 2.0; slow: the clock stops).
const MAX_DRIFT_MS_PER_S: u64 = 1000;

/// What a probe changes.
#[derive(Clone, Debug, PartialEq)]
pub enum ProbeKind {
    /// An added pause of a client.
    Pause,
    /// An added clock jump, forward or back.
    ClockJump {
        /// Forward (`+`) or back.
        forward: bool,
    },
    /// An added clock rate from the start: `1 ± ms/1000`.
    ClockRate {
        /// Fast (rate above 1) or slow.
        fast: bool,
    },
    /// An added extra latency on the first message of a link.
    Delay,
    /// The magnitude of the scenario's own fault at this index.
    Scripted(usize),
}

/// One fault whose magnitude is searched.
#[derive(Clone, Debug, PartialEq)]
pub struct Probe {
    /// What it changes.
    pub kind: ProbeKind,
    /// The fault at some magnitude, with its trigger.
    pub fault: FaultSpec,
    /// The largest magnitude tried (ms, or ms per second for a rate).
    pub max: u64,
}

impl Probe {
    /// The row's kind: `pause`, `clock_jump`, `clock_rate`, `delay`, or a
    /// scenario fault's kind (`partition`, `crash`, …; `clock_jump` for a
    /// jump).
    pub fn kind_name(&self) -> &'static str {
        match &self.kind {
            ProbeKind::Pause => "pause",
            ProbeKind::ClockJump { .. } => "clock_jump",
            ProbeKind::ClockRate { .. } => "clock_rate",
            ProbeKind::Delay => "delay",
            ProbeKind::Scripted(_) => fault_kind::of(&self.fault.fault).margin_name(),
        }
    }

    /// The fault at `magnitude`.
    pub fn fault_at(&self, magnitude: u64) -> FaultSpec {
        let mut spec = self.fault.clone();
        let ms = Duration::from_millis(magnitude);
        match (&self.kind, &mut spec.fault) {
            (ProbeKind::ClockRate { fast }, Fault::Clock(c)) => {
                let drift = magnitude as f64 / 1000.0;
                c.rate = Some(if *fast { 1.0 + drift } else { 1.0 - drift });
            }
            (_, fault) => fault.set_magnitude(ms),
        }
        spec
    }

    /// `scenario` with this probe's fault at `magnitude`: in place of the
    /// scenario's own fault, or added after its own.
    pub fn scenario_at(&self, scenario: &Scenario, magnitude: u64) -> Scenario {
        let mut s = scenario.clone();
        match self.kind {
            ProbeKind::Scripted(i) => s.faults[i] = self.fault_at(magnitude),
            _ => s.faults.push(self.fault_at(magnitude)),
        }
        s
    }

    /// The index of the probed fault among the run's faults.
    fn index(&self, scenario: &Scenario) -> usize {
        match self.kind {
            ProbeKind::Scripted(i) => i,
            _ => scenario.faults.len(),
        }
    }
}

/// How a search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finding {
    /// The verdict flips at [`Row::threshold`].
    Flip,
    /// No magnitude tried up to the maximum flips it.
    NoFlip,
    /// The smallest magnitude (1 ms) already gives another verdict than the
    /// scenario as written: there is no threshold to find.
    FlipsAtMin,
    /// The probed fault never fired (its trigger never came).
    Unfired,
}

impl Finding {
    /// `flip`, `no_flip`, `flips_at_min` or `unfired`.
    pub fn as_str(self) -> &'static str {
        match self {
            Finding::Flip => "flip",
            Finding::NoFlip => "no_flip",
            Finding::FlipsAtMin => "flips_at_min",
            Finding::Unfired => "unfired",
        }
    }
}

/// One probe's result.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The probe.
    pub probe: Probe,
    /// The seed of every run.
    pub seed: u64,
    /// How the search ended.
    pub finding: Finding,
    /// The smallest magnitude that flips the verdict ([`Finding::Flip`]).
    pub threshold: Option<u64>,
    /// The reference verdict: the run one below the threshold (or at 1 ms,
    /// or as written, when nothing flips).
    pub verdict_below: Verdict,
    /// The verdict at the threshold, or at the maximum when nothing flips.
    pub verdict_at: Verdict,
    /// No magnitude scanned past the first flip flips back.
    pub monotone: bool,
    /// Runs the search made.
    pub runs: u64,
    /// The lock's durations (`ttl`, `heartbeat`, …) and the client's
    /// `work`, to read the threshold against.
    pub timeouts: Vec<(String, Duration)>,
}

/// Every probe of `scenario`, in a fixed order: its own faults, then
/// pauses, clock jumps, clock rates and delays.
pub fn probes(scenario: &Scenario) -> Vec<Probe> {
    let max = max_magnitude(scenario);
    let mut out = Vec::new();
    for (i, spec) in scenario.faults.iter().enumerate() {
        if let Some(d) = spec.fault.magnitude() {
            // A scenario's own fault may already be longer than the scaled
            // maximum: search at least up to it.
            let own = d.as_millis().min(u128::from(u64::MAX)) as u64;
            out.push(Probe {
                kind: ProbeKind::Scripted(i),
                fault: spec.clone(),
                max: max.max(own),
            });
        }
    }
    let mut added = Vec::new();
    let story = scenario.clients.first().map(|c| acquired(&c.name));
    for c in &scenario.clients {
        added.push(Probe {
            kind: ProbeKind::Pause,
            fault: spec(
                Fault::Pause(Pause {
                    node: c.name.clone(),
                    duration: Duration::ZERO,
                }),
                acquired(&c.name),
            ),
            max,
        });
    }
    for node in scenario.node_names() {
        let clock = |jump: Option<i64>, rate: Option<f64>| {
            Fault::Clock(ClockChange {
                node: node.clone(),
                offset_ns: None,
                rate,
                jump_ns: jump,
            })
        };
        if let Some(story) = &story {
            for forward in [true, false] {
                added.push(Probe {
                    kind: ProbeKind::ClockJump { forward },
                    fault: spec(
                        clock(Some(if forward { 1 } else { -1 }), None),
                        story.clone(),
                    ),
                    max,
                });
            }
        }
        for fast in [true, false] {
            added.push(Probe {
                kind: ProbeKind::ClockRate { fast },
                fault: spec(clock(None, Some(1.0)), Trigger::At(Duration::ZERO)),
                max: if fast {
                    MAX_DRIFT_MS_PER_S
                } else {
                    MAX_DRIFT_MS_PER_S - 1
                },
            });
        }
    }
    for c in &scenario.clients {
        for lock in scenario.lock_nodes() {
            for (from, to) in [
                (c.name.clone(), "storage".to_owned()),
                (lock, c.name.clone()),
            ] {
                if from != c.name && to != c.name {
                    continue;
                }
                let fault = Fault::Delay(Delay {
                    from: Some(from),
                    to,
                    extra: Duration::ZERO,
                    scope: Scope::Count(1),
                });
                added.push(Probe {
                    kind: ProbeKind::Delay,
                    fault: spec(fault, Trigger::At(Duration::ZERO)),
                    max,
                });
            }
        }
    }
    // client → storage is the same for every lock node: keep it once.
    let mut seen = Vec::new();
    added.retain(|p| {
        let key = (
            p.kind_name(),
            p.fault.fault.nodes().join(">"),
            p.kind.clone(),
        );
        let fresh = !seen.contains(&key);
        seen.push(key);
        fresh
    });
    // A probe the scenario already scripts is searched as its own fault.
    added.retain(|p| {
        !scenario.faults.iter().any(|own| {
            own.trigger == p.fault.trigger
                && own.fault.kind() == p.fault.fault.kind()
                && own.fault.nodes() == p.fault.fault.nodes()
        })
    });
    out.extend(added);
    out
}

/// The pause margin a comparison of designs shows: the first client's
/// pause right after its first `acquired` (the scenario's own such pause if
/// it scripts one). Each run has `runs`' budget.
pub fn main_pause(runs: &sweep::Runs, scenario: &Scenario, seed: u64) -> Option<Row> {
    let first = scenario.clients.first()?;
    let wanted = acquired(&first.name);
    let probe = probes(scenario).into_iter().find(|p| {
        p.fault.trigger == wanted
            && matches!(&p.fault.fault, Fault::Pause(f) if f.node == first.name)
    })?;
    let reference = verdict_of(&runs.run(scenario, seed));
    Some(search(runs, scenario, seed, &probe, reference))
}

/// The margin of every probe of `scenario` with `seed`.
pub fn margins(scenario: &Scenario, seed: u64) -> Vec<Row> {
    let runs = sweep::Runs::default();
    margins_with(&runs, scenario, seed, &probes(scenario), &mut |_, _| {})
}

/// The margin of each of `probes` (of [`probes`]`(scenario)`), calling
/// `progress` with the rows done and their number after each. Each run has
/// `runs`' budget.
pub fn margins_with(
    runs: &sweep::Runs,
    scenario: &Scenario,
    seed: u64,
    probes: &[Probe],
    progress: &mut dyn FnMut(usize, usize),
) -> Vec<Row> {
    let reference = verdict_of(&runs.run(scenario, seed));
    let mut rows = Vec::with_capacity(probes.len());
    for p in probes {
        rows.push(search(runs, scenario, seed, p, reference));
        progress(rows.len(), probes.len());
    }
    rows
}

/// The most runs the search of `probe` makes: the run at 1 ms, the
/// [`SCAN_POINTS`] of the scan, and a bisection of the widest step between
/// them to the millisecond.
pub fn most_runs(probe: &Probe) -> u64 {
    let step = probe.max.div_ceil(SCAN_POINTS).max(1);
    let bisect = u64::from(u64::BITS - step.leading_zeros());
    1 + SCAN_POINTS + bisect
}

/// The most runs `margin` makes for `probes`: the scenario as written,
/// then each probe's [`most_runs`].
pub fn most_runs_all(probes: &[Probe]) -> u64 {
    1 + probes.iter().map(most_runs).sum::<u64>()
}

/// The most runs `margin` makes unless `--max-runs` allows more: about a
/// minute for a scenario of a few clients.
pub const MAX_RUNS: u64 = 5_000;

/// The verdict the runner gives a run.
fn verdict_of(run: &runner::ScenarioRun) -> Verdict {
    run.report.verdict
}

/// The search described in the module's documentation. `reference` is the
/// verdict of the scenario as written. Each run has `runs_with`' budget.
pub fn search(
    runs_with: &sweep::Runs,
    scenario: &Scenario,
    seed: u64,
    probe: &Probe,
    reference: Verdict,
) -> Row {
    let mut runs = Runs {
        runs_with,
        scenario,
        seed,
        probe,
        verdicts: BTreeMap::new(),
    };
    let (low, fired) = runs.fired(1);
    let timeouts = timeouts(scenario, probe);
    let mut row = Row {
        probe: probe.clone(),
        seed,
        finding: Finding::NoFlip,
        threshold: None,
        verdict_below: low,
        verdict_at: low,
        monotone: true,
        runs: 0,
        timeouts,
    };
    if !fired {
        row.finding = Finding::Unfired;
        row.runs = runs.count();
        return row;
    }
    // A scenario's own fault is judged against itself at its smallest; an
    // added one against the scenario as written.
    let broken = |v: Verdict| v == Verdict::Violation;
    let reference = match probe.kind {
        ProbeKind::Scripted(_) => low,
        _ => reference,
    };
    if broken(low) != broken(reference) {
        row.finding = Finding::FlipsAtMin;
        row.verdict_below = reference;
        row.runs = runs.count();
        return row;
    }
    let flips = |v: Verdict| broken(v) != broken(reference);
    let points: Vec<u64> = (1..=SCAN_POINTS)
        .map(|i| (probe.max * i / SCAN_POINTS).max(1))
        .collect();
    let mut first = None;
    for (i, &p) in points.iter().enumerate() {
        let v = runs.at(p);
        if flips(v) && first.is_none() {
            first = Some(i);
        } else if !flips(v) && first.is_some() {
            row.monotone = false;
        }
    }
    let Some(first) = first else {
        row.verdict_at = runs.at(probe.max);
        row.runs = runs.count();
        return row;
    };
    let (mut lo, mut hi) = (
        if first == 0 { 1 } else { points[first - 1] },
        points[first],
    );
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if flips(runs.at(mid)) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    row.finding = Finding::Flip;
    row.threshold = Some(hi);
    row.verdict_below = runs.at(lo);
    row.verdict_at = runs.at(hi);
    row.runs = runs.count();
    row
}

/// The runs of one search, each magnitude run once.
struct Runs<'a> {
    /// The budget of each run.
    runs_with: &'a sweep::Runs,
    scenario: &'a Scenario,
    seed: u64,
    probe: &'a Probe,
    verdicts: BTreeMap<u64, Verdict>,
}

impl Runs<'_> {
    /// The verdict at `magnitude`, and whether the probed fault fired.
    fn fired(&mut self, magnitude: u64) -> (Verdict, bool) {
        let s = self.probe.scenario_at(self.scenario, magnitude);
        // The probe's own fault may never fire without making the run
        // inconclusive: only the scenario's own faults count as scripted.
        let run = self
            .runs_with
            .config(self.seed)
            .scripted(self.scenario.faults.len())
            .run(&s);
        let index = self.probe.index(self.scenario);
        let fired = run.faults.get(index).is_some_and(|f| f.fired_at.is_some());
        let verdict = verdict_of(&run);
        self.verdicts.insert(magnitude, verdict);
        (verdict, fired)
    }

    /// The verdict at `magnitude`.
    fn at(&mut self, magnitude: u64) -> Verdict {
        match self.verdicts.get(&magnitude) {
            Some(v) => *v,
            None => self.fired(magnitude).0,
        }
    }

    fn count(&self) -> u64 {
        self.verdicts.len() as u64
    }
}

/// The largest magnitude a pause, jump or delay probe tries: three times the
/// lock's longest duration setting (its TTL, session, …; 10 s when it has
/// none), but at most half the run's duration, so the run still has time to
/// show what the fault did; at least 1 s.
pub fn max_magnitude(scenario: &Scenario) -> u64 {
    let longest = scenario
        .lock
        .params
        .iter()
        .filter_map(|(_, v)| match v {
            ParamValue::Duration(d) => Some(*d),
            _ => None,
        })
        .max()
        .unwrap_or(Duration::from_secs(10));
    let max = (longest * 3).min(scenario.duration / 2);
    (max.as_millis() as u64).max(1000)
}

/// The lock's duration settings, then the work of the client the fault
/// concerns (else the first client's). A zero setting is left out: it
/// means "off" or "derived from another" (a heartbeat of 0 is a third of
/// the TTL), not a time to read a threshold against.
fn timeouts(scenario: &Scenario, probe: &Probe) -> Vec<(String, Duration)> {
    let mut out: Vec<(String, Duration)> = scenario
        .lock
        .params
        .iter()
        .filter_map(|(k, v)| match v {
            ParamValue::Duration(d) if !d.is_zero() => Some((k.to_owned(), *d)),
            _ => None,
        })
        .collect();
    let nodes = probe.fault.fault.nodes();
    let client = scenario
        .clients
        .iter()
        .find(|c| nodes.contains(&c.name.as_str()))
        .or(scenario.clients.first());
    if let Some(c) = client {
        out.push(("work".to_owned(), c.work));
    }
    out
}

fn spec(fault: Fault, trigger: Trigger) -> FaultSpec {
    FaultSpec {
        fault,
        trigger,
        line: 0,
    }
}

fn acquired(client: &str) -> Trigger {
    Trigger::after(client, "acquired")
}
