//! Seed sweeps: every seed of a range (or of one shard of it), over `jobs` OS
//! threads pulling seed indices from one atomic counter.
//!
//! Each worker runs its seeds one after the other, each on a fresh thread
//! it spawns and waits for ([`RunConfig::here`]): a seed's trace is the
//! same in a sweep as alone, even for user code whose order depends on
//! std's hasher keys or on a thread-local (`sim::run_fresh` says why).
//! Workers share nothing but the counter. The
//! calling thread watches each run's wall-clock budget: a run that outlives
//! it is reported as timed out, its worker abandoned, and a fresh worker
//! takes the next seed. With [`Runs::workers`] (the command line's
//! `explore`), each worker thread feeds a worker process instead (see
//! [`worker`]), a fresh thread per seed there too, and watches the budget
//! itself: a run past it, or past the memory budget, ends its process,
//! which a fresh one replaces. Before a failing seed is reported it is run
//! again alone, on a fresh thread; one that gives another journal is
//! reported as non-determinism ([`SeedReport::nondeterministic`]). Only
//! failing seeds are kept (at most [`MAX_KEPT`]);
//! everything else is a counter, so memory stays flat however many seeds a
//! sweep runs.
//!
//! [`sweep_streaming`] reports every seed in seed order as it finishes,
//! with checkpoints, can be stopped (the seeds running finish, the rest are
//! left), and can skip the ranges an earlier sweep completed: that is how
//! `explore --resume` continues a stopped sweep. [`sweep_with_rules`] also
//! stops by itself ([`StopRules`]): after the lowest N failing seeds
//! (`explore --until N`, the same seeds whatever `jobs`), or after a budget
//! of wall time (`--time`).
//!
//! ```no_run
//! use fencesim::design::catalog::Registry;
//! use fencesim::explore::sweep::{sweep, FaultMode, SweepOptions};
//! let s = fencesim::scenario::load_file(&Registry::builtin(), "scenarios/explore-lease-unfenced.toml".as_ref()).unwrap();
//! let summary = sweep(&s, &SweepOptions { seeds: 0..200, ..SweepOptions::default() }, &|_| {});
//! assert!(summary.first_failing_seed.is_some());
//! ```

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::json;
use sim::Outcome;

use super::depth;
use super::exhaustive;
use super::guided::{self, Corpus};
use super::random;
use super::shard::Shard;
use super::worker;
use super::workload;
use crate::oracle::{milestones, Counters, Milestones, Verdict, ViolationKind};
use crate::runner::{self, Crash, RunConfig, ScenarioRun};
use crate::scenario::Scenario;

/// At most this many failing seeds are kept in a summary; further ones are
/// only counted.
pub const MAX_KEPT: usize = 10_000;

/// Which faults a seed runs with.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum FaultMode {
    /// The scenario's own faults plus the seed's random schedule
    /// ([`random::schedule`]): explore adds faults, it never removes the
    /// story's own.
    #[default]
    Random,
    /// Only the scenario's own faults: the seed varies latency and scheduling.
    Scenario,
    /// The scenario's own faults plus the seed's guided schedule
    /// ([`guided::schedule`]): fresh, or a mutation of an entry of this corpus.
    Guided(std::sync::Arc<Corpus>),
    /// The scenario's own faults plus at most `d` faults placed at change
    /// points ([`depth::schedule`]).
    Depth(std::sync::Arc<depth::Depth>),
    /// `explore --exhaustive`: "seed" `k` is the number of an injection set
    /// ([`exhaustive::injection`]), run with the search's own seed.
    Exhaustive(std::sync::Arc<exhaustive::Injections>),
}

impl FaultMode {
    /// `"random"`, `"scenario"` or `"guided"`.
    pub fn as_str(&self) -> &'static str {
        match self {
            FaultMode::Random => "random",
            FaultMode::Scenario => "scenario",
            FaultMode::Guided(_) => "guided",
            FaultMode::Depth(_) => "depth",
            FaultMode::Exhaustive(_) => "exhaustive",
        }
    }

    /// The random faults `seed` adds to the scenario's own under this mode.
    pub fn schedule(&self, scenario: &Scenario, seed: u64) -> Vec<crate::scenario::FaultSpec> {
        match self {
            FaultMode::Random => random::schedule(scenario, seed),
            FaultMode::Scenario => Vec::new(),
            FaultMode::Guided(corpus) => guided::schedule(scenario, seed, corpus),
            FaultMode::Depth(d) => depth::schedule(scenario, seed, d),
            FaultMode::Exhaustive(i) => i.set(seed),
        }
    }

    /// The seed the run of `seed` is made with: `seed` itself, but for an
    /// exhaustive search, whose runs all have its one seed.
    pub fn run_seed(&self, seed: u64) -> u64 {
        match self {
            FaultMode::Exhaustive(i) => i.seed,
            _ => seed,
        }
    }
}

/// What to sweep, and how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SweepOptions {
    /// Seeds, end excluded.
    pub seeds: Range<u64>,
    /// Worker threads, at least 1.
    pub jobs: usize,
    /// Which seeds of the range this sweep runs.
    pub shard: Shard,
    /// Which faults each seed runs with.
    pub faults: FaultMode,
}

impl Default for SweepOptions {
    /// Seeds `0..1000`, one job per core, the whole range, random faults.
    fn default() -> Self {
        SweepOptions {
            seeds: 0..1000,
            jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
            shard: Shard::WHOLE,
            faults: FaultMode::Random,
        }
    }
}

/// When a sweep stops before the end of its range.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StopRules {
    /// Stop after this many failing seeds: the lowest ones of the range (of
    /// the shard), counted in seed order, so the same seeds whatever `jobs`.
    /// Seeds after the last of them are neither reported nor counted, even
    /// those that had already run.
    pub until: Option<u64>,
    /// Take no new seed after this much wall time (seeds running finish).
    /// Which seeds that covers depends on the machine; every seed counted
    /// is still deterministic.
    pub time: Option<Duration>,
}

impl StopRules {
    /// No rule: the sweep runs its whole range.
    pub const NONE: StopRules = StopRules {
        until: None,
        time: None,
    };
}

/// Why a sweep stopped before the end of its range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoppedBy {
    /// It had found [`StopRules::until`] failing seeds.
    Until,
    /// Its [`StopRules::time`] ran out.
    Time,
    /// The caller's `stop` (a signal, in `explore`).
    Signal,
}

impl StoppedBy {
    /// `"until"`, `"time"` or `"signal"`.
    pub fn as_str(self) -> &'static str {
        match self {
            StoppedBy::Until => "until",
            StoppedBy::Time => "time",
            StoppedBy::Signal => "signal",
        }
    }
}

/// One seed's result, small enough to keep for every failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeedReport {
    /// The seed.
    pub seed: u64,
    /// The oracle's verdict.
    pub verdict: Verdict,
    /// How the run ended (`crashed` carries the panic).
    pub outcome: Outcome,
    /// The findings and writes counted, as the run's report counts them.
    pub counters: Counters,
    /// Kinds of the findings that count toward the verdict, deduplicated.
    pub kinds: Vec<ViolationKind>,
    /// Journal length.
    pub events: u64,
    /// Simulated time at the end.
    pub sim_time: Duration,
    /// The journal's hash, for the seeds a sweep reports (violations and
    /// crashes); empty for the others, which the sweep only counts (hashing
    /// every journal would cost a sixth of a sweep's time), unless
    /// [`Runs::trace_hashes`] asks for every one.
    pub trace_hash: String,
    /// How many faults the run had (the scenario's and the random ones).
    pub faults: usize,
    /// How many of the scenario's own faults never fired (random ones may
    /// miss their moment; they are not counted).
    pub unfired_faults: u64,
    /// The dangerous situations the run reached.
    pub milestones: Milestones,
    /// For a violation, its findings that count toward the verdict, each
    /// as its signature (`stale_write by client1 (grant client1#1) after
    /// client2 (grant client2#1)`: see `oracle::signature`), distinct, in
    /// journal order; empty for the others. The first is what `shrink`
    /// keeps.
    pub findings: Vec<String>,
    /// The scenario's `[expect] always` properties this run broke (see
    /// [`runner::broken_properties`]): a failure too, however safe.
    pub broken: Vec<&'static str>,
    /// Whether the run reproduces the bug the scenario's `[expect]`
    /// describes, judged per finding ([`Expect::reproduced_by`]); `None`
    /// when it describes none.
    ///
    /// [`Expect::reproduced_by`]: crate::scenario::Expect::reproduced_by
    pub reproduced: Option<bool>,
    /// Cut short with no fault of the run to explain it, and the scenario's
    /// `[expect] outcome` does not say how runs end: why, in words (what
    /// its code waited on, or how it was cut short). `None` otherwise.
    pub cut_short_unexplained: Option<String>,
    /// Whether a hosted process client that the scenario does not name in
    /// `[expect] idle_clients` never acquired the lock.
    pub idle_process: bool,
    /// Where the seed's run parted from its replay, when the sweep ran a
    /// failing seed again alone on a fresh thread before reporting it and
    /// got another journal (`None`: it replayed, or was not replayed). Its
    /// verdict is then `error` and its kinds are dropped: what the sweep's
    /// run found is not what a repro command shows.
    pub nondeterministic: Option<Box<Divergence>>,
}

/// The first journal event in which two runs of one seed differ.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Divergence {
    /// Its index in the journals, from 0.
    pub index: u64,
    /// The event in the sweep's run, as a line of the journal's JSON
    /// (empty: that journal had ended).
    pub sweep_event: String,
    /// The event in the replay, likewise.
    pub replay_event: String,
    /// The replay's trace hash (the sweep's is the report's).
    pub replay_hash: String,
}

impl Divergence {
    /// Where `replay` parts from `run`; `None` when the two are the same.
    pub fn between(run: &sim::Journal, replay: &sim::Journal) -> Option<Divergence> {
        let line = |journal: &sim::Journal, i: usize| {
            let mut out = String::new();
            if let Some(e) = journal.events().get(i) {
                e.write_json(&mut out);
            }
            out
        };
        let longest = run.len().max(replay.len());
        (0..longest)
            .map(|i| (i, line(run, i), line(replay, i)))
            .find(|(_, a, b)| a != b)
            .map(|(i, sweep_event, replay_event)| Divergence {
                index: i as u64,
                sweep_event,
                replay_event,
                replay_hash: replay.hash(),
            })
    }
}

impl SeedReport {
    /// Summarizes a judged run of `scenario` (its faults, random ones
    /// included: their number, its `strict` and its `[expect] always`).
    pub fn new(run: &ScenarioRun, scenario: &Scenario) -> SeedReport {
        let (faults, strict) = (scenario.faults.len(), scenario.strict);
        let r = &run.report;
        let mut kinds: Vec<ViolationKind> = r
            .violations
            .iter()
            .map(|v| v.kind)
            .filter(|k| k.counts(strict))
            .collect();
        kinds.sort();
        kinds.dedup();
        let broken = runner::broken_properties(&scenario.expect.always, r, &run.result);
        let reported =
            r.verdict == Verdict::Violation || run.result.outcome.is_error() || !broken.is_empty();
        SeedReport {
            seed: run.result.seed,
            verdict: r.verdict,
            outcome: run.result.outcome.clone(),
            counters: r.counters,
            kinds,
            events: run.result.journal.len() as u64,
            sim_time: run.result.sim_time,
            // A timed-out run abandoned by an in-process sweep left no
            // journal: no hash to show. (`run_within` keeps the journal up
            // to the hang, and a worker's sweep replays it.)
            trace_hash: if reported
                && !(matches!(run.result.outcome, Outcome::TimedOut { .. })
                    && run.result.journal.is_empty())
            {
                run.trace_hash()
            } else {
                String::new()
            },
            faults,
            unfired_faults: run.unfired_faults().count() as u64,
            milestones: run.milestones,
            findings: if r.verdict == Verdict::Violation {
                let mut seen = Vec::new();
                for f in super::shrink::counted(run, strict) {
                    let text = f.to_string();
                    if !seen.contains(&text) {
                        seen.push(text);
                    }
                }
                seen
            } else {
                Vec::new()
            },
            broken,
            reproduced: scenario.expect.reproduced_by(r, &run.milestones),
            cut_short_unexplained: (run.cut_short_unexplained()
                && scenario.expect.outcome.is_none())
            .then(|| run.cut_short_sentence())
            .flatten(),
            idle_process: run.idle_clients.iter().any(|c| {
                c.process && !c.acquired && !scenario.expect.idle_clients.contains(&c.name)
            }),
            nondeterministic: None,
        }
    }

    /// Marks the seed as one that did not replay, at `divergence`: an
    /// error, never a violation.
    pub fn set_nondeterministic(&mut self, divergence: Divergence) {
        self.verdict = Verdict::Error;
        self.kinds.clear();
        self.reproduced = None;
        self.nondeterministic = Some(Box::new(divergence));
    }

    /// The run judged nothing: no write reached the storage.
    pub fn inconclusive(&self) -> bool {
        self.verdict == Verdict::Inconclusive
    }

    /// The run stalled or hit the time or event limit.
    pub fn cut_short(&self) -> bool {
        runner::is_cut_short(&self.outcome)
    }

    /// A violation, a run that ended in error (a panic, or its wall-clock
    /// budget ran out), or one that broke a property of the scenario's
    /// `[expect] always`.
    pub fn is_failure(&self) -> bool {
        // `error` is a crashed run or a journal the oracle could not trust.
        self.verdict == Verdict::Violation
            || self.verdict == Verdict::Error
            || self.outcome.is_error()
            || !self.broken.is_empty()
    }

    /// Whether the run outlived its wall-clock budget.
    pub fn timed_out(&self) -> bool {
        matches!(self.outcome, Outcome::TimedOut { .. })
    }

    /// Whether the run panicked.
    pub fn crashed(&self) -> bool {
        matches!(self.outcome, Outcome::Crashed { .. })
    }

    /// The JSON line of `--json`.
    pub fn json(&self, repro: &str) -> serde_json::Value {
        serde_json::to_value(SeedLine {
            seed: self.seed,
            verdict: self.verdict,
            outcome: self.outcome.as_str(),
            crash: Crash::of(&self.outcome),
            kinds: &self.kinds,
            findings: &self.findings,
            broken: &self.broken,
            counters: &self.counters,
            events: self.events,
            sim_time_ms: self.sim_time.as_millis() as u64,
            faults: self.faults,
            unfired_faults: self.unfired_faults,
            milestones: &self.milestones,
            trace_hash: &self.trace_hash,
            repro,
            nondeterministic: self.nondeterministic.as_deref(),
        })
        .expect("a seed's line is plain data")
    }
}

/// A seed's line of `explore --json`: its verdict and [`Counters`] (the
/// same fields as `run --json`'s), how the run ended, and its repro.
#[derive(Serialize)]
struct SeedLine<'a> {
    seed: u64,
    verdict: Verdict,
    outcome: &'static str,
    crash: Option<Crash<'a>>,
    kinds: &'a [ViolationKind],
    findings: &'a [String],
    broken: &'a [&'static str],
    #[serde(flatten)]
    counters: &'a Counters,
    events: u64,
    sim_time_ms: u64,
    faults: usize,
    unfired_faults: u64,
    milestones: &'a Milestones,
    trace_hash: &'a str,
    repro: &'a str,
    /// Only on a seed that did not replay.
    #[serde(skip_serializing_if = "Option::is_none")]
    nondeterministic: Option<&'a Divergence>,
}

/// What a sweep found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SweepSummary {
    /// Seeds run.
    pub seeds: u64,
    /// Seeds whose verdict is `violation`.
    pub violations: u64,
    /// Seeds whose run panicked.
    pub crashed: u64,
    /// Seeds whose run outlived its wall-clock budget (`--run-timeout`).
    pub timed_out: u64,
    /// Failing seeds that gave another journal when replayed alone on a
    /// fresh thread ([`SeedReport::nondeterministic`]).
    pub nondeterministic_seeds: u64,
    /// The lowest of them, with where its replay parted from its run.
    pub first_nondeterministic: Option<(u64, Divergence)>,
    /// Failing seeds ([`SeedReport::is_failure`]), all of them, kept or not.
    pub failing_seeds: u64,
    /// Seeds per violation kind (a seed counts once per kind it shows).
    pub by_kind: BTreeMap<&'static str, u64>,
    /// Seeds per `[expect] always` property they broke.
    pub by_property: BTreeMap<&'static str, u64>,
    /// Seeds per outcome (`completed`, `stalled`, `time_limit`, …).
    pub outcomes: BTreeMap<&'static str, u64>,
    /// Seeds whose verdict is `inconclusive` (no write reached the storage).
    pub inconclusive: u64,
    /// Seeds cut short: stalled, or at the time or event limit.
    pub cut_short: u64,
    /// Seeds cut short that no fault of theirs explains, in a scenario
    /// whose `[expect] outcome` does not say how runs end: the sweep is then
    /// inconclusive.
    pub cut_short_unexplained: u64,
    /// The lowest such seed, and why it was cut short.
    pub first_cut_short: Option<(u64, String)>,
    /// Seeds in which a hosted process client never acquired the lock.
    pub idle_process: u64,
    /// Seeds in which one of the scenario's own faults never fired.
    pub unfired: u64,
    /// Per milestone, the seeds that reached it (every name, zeros included).
    pub milestones: BTreeMap<&'static str, u64>,
    /// Failing seeds ([`SeedReport::is_failure`]), in seed order, at most
    /// [`MAX_KEPT`] (the lowest ones).
    pub failures: Vec<SeedReport>,
    /// The lowest failing seed.
    pub first_failing_seed: Option<u64>,
    /// Simulated time over every seed.
    pub sim_time: Duration,
    /// Wall-clock time of the sweep (reporting only).
    pub wall: Duration,
    /// Seed ranges (half-open, `[a, b)`, in order, disjoint) whose seeds of
    /// the sweep's shard have all been run, by this sweep or by the one it
    /// resumed: the whole range once the sweep is done.
    pub completed: Vec<Range<u64>>,
    /// Whether the sweep was stopped before running every seed.
    pub stopped: bool,
    /// Why it stopped before running every seed (`None`: it did not).
    pub stopped_by: Option<StoppedBy>,
    /// The rules it ran under.
    pub rules: StopRules,
}

impl SweepSummary {
    fn add(&mut self, report: SeedReport) {
        self.seeds += 1;
        *self.outcomes.entry(report.outcome.as_str()).or_default() += 1;
        self.sim_time += report.sim_time;
        self.inconclusive += u64::from(report.inconclusive());
        self.cut_short += u64::from(report.cut_short());
        if let Some(why) = &report.cut_short_unexplained {
            self.cut_short_unexplained += 1;
            if self.first_cut_short.is_none() {
                self.first_cut_short = Some((report.seed, why.clone()));
            }
        }
        self.idle_process += u64::from(report.idle_process);
        self.unfired += u64::from(report.unfired_faults > 0);
        for (name, n) in report.milestones.pairs() {
            *self.milestones.entry(name).or_default() += u64::from(n > 0);
        }
        if report.verdict == Verdict::Violation {
            self.violations += 1;
            for k in &report.kinds {
                *self.by_kind.entry(k.as_str()).or_default() += 1;
            }
        }
        for p in &report.broken {
            *self.by_property.entry(p).or_default() += 1;
        }
        if report.crashed() {
            self.crashed += 1;
        }
        if report.timed_out() {
            self.timed_out += 1;
        }
        if let Some(d) = &report.nondeterministic {
            self.nondeterministic_seeds += 1;
            if self.first_nondeterministic.is_none() {
                self.first_nondeterministic = Some((report.seed, (**d).clone()));
            }
        }
        if report.is_failure() {
            self.failing_seeds += 1;
            self.first_failing_seed = Some(
                self.first_failing_seed
                    .map_or(report.seed, |s| s.min(report.seed)),
            );
            // Seeds arrive in seed order: the first MAX_KEPT are the lowest.
            if self.failures.len() < MAX_KEPT {
                self.failures.push(report);
            }
        }
    }

    /// Whether some failing seeds were only counted, not kept (more than
    /// [`MAX_KEPT`] failed).
    pub fn failures_truncated(&self) -> bool {
        self.failing_seeds > self.failures.len() as u64
    }

    /// Seeds that reached each milestone, every name present (a sweep of
    /// no seed has all zeros).
    pub fn milestone_counts(&self) -> BTreeMap<&'static str, u64> {
        milestones::NAMES
            .iter()
            .map(|name| (*name, self.milestones.get(name).copied().unwrap_or(0)))
            .collect()
    }

    /// Seeds run per failing seed found (`None`: none failed).
    pub fn seeds_per_failure(&self) -> Option<f64> {
        (self.failing_seeds > 0).then(|| self.seeds as f64 / self.failing_seeds as f64)
    }

    /// Seeds per second of wall time.
    pub fn seeds_per_sec(&self) -> f64 {
        self.seeds as f64 / self.wall.as_secs_f64().max(1e-9)
    }

    /// Whether every seed of `options`' range (of its shard) has been run.
    pub fn is_complete(&self, options: &SweepOptions) -> bool {
        subtract(&options.seeds, &self.completed).is_empty()
    }

    /// The last line of `--json`.
    pub fn json(&self, options: &SweepOptions) -> serde_json::Value {
        serde_json::to_value(SummaryLine {
            summary: true,
            seeds: self.seeds,
            violations: self.violations,
            crashed: self.crashed,
            timed_out: self.timed_out,
            nondeterministic_seeds: self.nondeterministic_seeds,
            first_nondeterministic: self.first_nondeterministic.as_ref().map(|(seed, d)| {
                FirstNondeterministic {
                    seed: *seed,
                    divergence: d,
                }
            }),
            failing_seeds: self.failing_seeds,
            failing_seeds_truncated: self.failures_truncated(),
            first_failing_seed: self.first_failing_seed,
            seeds_per_sec: (self.seeds_per_sec() * 10.0).round() / 10.0,
            wall_ms: self.wall.as_millis() as u64,
            sim_ms: self.sim_time.as_millis() as u64,
            sim_ns: self.sim_time.as_nanos() as u64,
            by_kind: &self.by_kind,
            by_property: &self.by_property,
            outcomes: &self.outcomes,
            inconclusive: self.inconclusive,
            cut_short: self.cut_short,
            cut_short_unexplained: self.cut_short_unexplained,
            first_cut_short: self
                .first_cut_short
                .as_ref()
                .map(|(seed, why)| json!({"seed": seed, "why": why})),
            idle_process: self.idle_process,
            unfired: self.unfired,
            milestones: self.milestone_counts(),
            range: format!("{}..{}", options.seeds.start, options.seeds.end),
            shard: options.shard.to_string(),
            faults: options.faults.as_str(),
            jobs: options.jobs,
            completed_ranges: self.completed.iter().map(|r| [r.start, r.end]).collect(),
            complete: self.is_complete(options),
            stopped: self.stopped,
            stopped_by: self.stopped_by.map(StoppedBy::as_str),
            seeds_per_failure: self.seeds_per_failure().map(|r| (r * 10.0).round() / 10.0),
            until: self.rules.until,
            time_ms: self.rules.time.map(|t| t.as_millis() as u64),
        })
        .expect("a summary is plain data")
    }

    /// A `--json` progress line: the summary so far, marked
    /// `"progress": true` instead of `"summary": true`.
    pub fn progress_json(&self, options: &SweepOptions) -> serde_json::Value {
        let mut line = self.json(options);
        let map = line.as_object_mut().expect("a summary is an object");
        map.remove("summary");
        let mut out = serde_json::Map::new();
        out.insert("progress".into(), true.into());
        out.extend(std::mem::take(map));
        out.into()
    }
}

/// The summary line of `explore --json` (see [`SweepSummary::json`]).
#[derive(Serialize)]
struct SummaryLine<'a> {
    summary: bool,
    seeds: u64,
    violations: u64,
    crashed: u64,
    timed_out: u64,
    nondeterministic_seeds: u64,
    first_nondeterministic: Option<FirstNondeterministic<'a>>,
    failing_seeds: u64,
    failing_seeds_truncated: bool,
    first_failing_seed: Option<u64>,
    seeds_per_sec: f64,
    wall_ms: u64,
    sim_ms: u64,
    /// Exact, so that a resumed sweep's and shards' sums are too.
    sim_ns: u64,
    by_kind: &'a BTreeMap<&'static str, u64>,
    by_property: &'a BTreeMap<&'static str, u64>,
    outcomes: &'a BTreeMap<&'static str, u64>,
    inconclusive: u64,
    cut_short: u64,
    cut_short_unexplained: u64,
    /// `{"seed": N, "why": "…"}`: the lowest unexplained cut-short seed.
    first_cut_short: Option<serde_json::Value>,
    idle_process: u64,
    unfired: u64,
    milestones: BTreeMap<&'static str, u64>,
    range: String,
    shard: String,
    faults: &'static str,
    jobs: usize,
    /// Half-open, `[[a, b], …]`.
    completed_ranges: Vec<[u64; 2]>,
    complete: bool,
    stopped: bool,
    stopped_by: Option<&'static str>,
    seeds_per_failure: Option<f64>,
    until: Option<u64>,
    time_ms: Option<u64>,
}

/// The summary's `first_nondeterministic`: the seed and its [`Divergence`].
#[derive(Serialize)]
struct FirstNondeterministic<'a> {
    seed: u64,
    #[serde(flatten)]
    divergence: &'a Divergence,
}

/// Ranges as JSON: `[[a, b], …]`, each half-open.
pub fn ranges_json(ranges: &[Range<u64>]) -> serde_json::Value {
    ranges.iter().map(|r| json!([r.start, r.end])).collect()
}

/// `ranges` sorted, with overlapping and adjacent ones joined and empty ones
/// dropped.
pub fn normalize(mut ranges: Vec<Range<u64>>) -> Vec<Range<u64>> {
    ranges.retain(|r| r.start < r.end);
    ranges.sort_by_key(|r| (r.start, r.end));
    let mut out: Vec<Range<u64>> = Vec::with_capacity(ranges.len());
    for r in ranges {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// The parts of `range` that no range of `done` covers, in order.
pub fn subtract(range: &Range<u64>, done: &[Range<u64>]) -> Vec<Range<u64>> {
    let mut out = Vec::new();
    let mut from = range.start;
    for d in normalize(done.to_vec()) {
        if d.end <= from {
            continue;
        }
        if d.start >= range.end {
            break;
        }
        if d.start > from {
            out.push(from..d.start);
        }
        from = from.max(d.end);
    }
    if from < range.end {
        out.push(from..range.end);
    }
    out
}

/// The scenario that `seed` runs under `mode`: with its workload varied
/// first when the scenario asks for it ([`workload`]; not in an exhaustive
/// search, whose runs share one seed), then the mode's faults, drawn for
/// that workload.
pub fn scenario_for(scenario: &Scenario, seed: u64, mode: FaultMode) -> Scenario {
    seed_scenario(scenario, seed, &mode).into_owned()
}

/// [`scenario_for`], borrowing `scenario` when the seed runs it unchanged.
fn seed_scenario<'s>(
    scenario: &'s Scenario,
    seed: u64,
    mode: &FaultMode,
) -> std::borrow::Cow<'s, Scenario> {
    use std::borrow::Cow;
    let varied = match mode {
        FaultMode::Exhaustive(_) => None,
        _ if workload::enabled(scenario) => Some(workload::vary(scenario, seed)),
        _ => None,
    };
    if let FaultMode::Scenario = mode {
        return varied.map_or(Cow::Borrowed(scenario), Cow::Owned);
    }
    let base = varied.as_ref().unwrap_or(scenario);
    Cow::Owned(random::with_faults(base, mode.schedule(base, seed)))
}

/// How a sweep makes each run: the wall-clock budget of each. The designs
/// are the scenario's own, resolved when it was loaded.
#[derive(Clone, Debug)]
pub struct Runs {
    /// Each run's wall-clock budget (`--run-timeout`); `None`: none.
    pub budget: Option<Duration>,
    /// Hash every seed's journal into its [`SeedReport::trace_hash`], not
    /// only the reported seeds' (a sweep then costs a sixth more): to
    /// compare a sweep's runs with the same seeds run alone.
    pub trace_hashes: bool,
    /// Run a sweep's seeds in worker processes (see [`worker`]), which
    /// the sweep kills at the budget; `None`: in-process, each seed on a
    /// fresh thread, abandoned at the budget. Sweeps of guided,
    /// depth-bounded and exhaustive searches run in-process either way.
    pub workers: Option<worker::Workers>,
}

impl Default for Runs {
    /// No budget, hashes of the reported seeds only.
    fn default() -> Self {
        Runs {
            budget: None,
            trace_hashes: false,
            workers: None,
        }
    }
}

impl Runs {
    /// Runs of `budget` (`--run-timeout`), hashes of the reported seeds
    /// only.
    pub fn within(budget: Option<Duration>) -> Runs {
        Runs {
            budget,
            ..Runs::default()
        }
    }

    /// The configuration of a run with `seed` and this budget.
    pub fn config(&self, seed: u64) -> RunConfig {
        RunConfig::new(seed).budget(self.budget)
    }

    /// Runs `scenario` (all of whose faults are its own) with `seed` and
    /// judges it.
    pub fn run(&self, scenario: &Scenario, seed: u64) -> ScenarioRun {
        self.config(seed).run(scenario)
    }

    /// A sweep worker's seed: run on a fresh thread the worker waits for
    /// (the sweep watches the budget), summarized.
    pub(crate) fn report_here(
        &self,
        scenario: &Scenario,
        seed: u64,
        mode: &FaultMode,
    ) -> SeedReport {
        self.report(scenario, seed, mode, false)
    }

    /// [`Runs::report_here`] on the calling thread, which must be fresh:
    /// a worker process's seed, each on a thread spawned for it.
    pub(crate) fn report_on_this_thread(
        &self,
        scenario: &Scenario,
        seed: u64,
        mode: &FaultMode,
    ) -> SeedReport {
        self.report(scenario, seed, mode, true)
    }

    fn report(
        &self,
        scenario: &Scenario,
        seed: u64,
        mode: &FaultMode,
        this_thread: bool,
    ) -> SeedReport {
        let s = seed_scenario(scenario, seed, mode);
        let config = RunConfig::new(mode.run_seed(seed))
            .scripted(scenario.faults.len())
            .here();
        let run = if this_thread {
            let result = sim::run_here(mode.run_seed(seed), || runner::world(&s));
            config.judge(&s, result)
        } else {
            config.run(&s)
        };
        let mut report = SeedReport::new(&run, &s);
        // Numbered as the sweep took it (an exhaustive search's set).
        report.seed = seed;
        // A seed the sweep reports must be the one its repro command shows:
        // replayed alone, on a fresh thread, it must give the same journal.
        // (A timed-out run has none to compare.)
        if report.is_failure() && !report.timed_out() {
            let replay = config.run(&s);
            if let Some(d) = Divergence::between(&run.result.journal, &replay.result.journal) {
                report.set_nondeterministic(d);
            }
        }
        if self.trace_hashes && report.trace_hash.is_empty() {
            report.trace_hash = run.trace_hash();
        }
        report
    }
}

/// Runs and judges one seed as a sweep would.
pub fn run_seed(scenario: &Scenario, seed: u64, mode: FaultMode) -> (ScenarioRun, SeedReport) {
    run_seed_with(&Runs::default(), scenario, seed, mode)
}

/// [`run_seed`] with `runs`' budget.
pub fn run_seed_with(
    runs: &Runs,
    scenario: &Scenario,
    seed: u64,
    mode: FaultMode,
) -> (ScenarioRun, SeedReport) {
    let mode_seed = mode.run_seed(seed);
    let s = seed_scenario(scenario, seed, &mode);
    let run = runs
        .config(mode_seed)
        .scripted(scenario.faults.len())
        .run(&s);
    let mut report = SeedReport::new(&run, &s);
    report.seed = seed;
    (run, report)
}

/// What a streaming sweep reports, from the calling thread, in seed order.
#[derive(Debug)]
pub enum SweepEvent<'a> {
    /// A seed finished; every seed before it (of the work) finished too.
    Seed(&'a SeedReport),
    /// A checkpoint: the summary so far, with its completed ranges. Sent
    /// every [`CHECKPOINT_SEEDS`] seeds, or after [`CHECKPOINT_WALL`] of
    /// wall time with at least one seed done.
    Checkpoint(&'a SweepSummary),
}

/// Seeds between two checkpoints.
pub const CHECKPOINT_SEEDS: u64 = 1000;
/// Wall time after which a slow sweep checkpoints anyway.
pub const CHECKPOINT_WALL: Duration = Duration::from_secs(5);

/// How far ahead of the oldest unfinished seed workers may go. Results come
/// back in any order but are reported in seed order, so finished seeds wait
/// for slower ones; this bounds how many wait (and the memory they hold)
/// while one seed runs long.
const WINDOW: u64 = 1 << 16;

/// Runs every seed of `options`, calling `progress` with the number of seeds
/// done so far (after each seed).
pub fn sweep(
    scenario: &Scenario,
    options: &SweepOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> SweepSummary {
    let mut seeds = 0;
    let runs = Runs::default();
    sweep_streaming(scenario, options, &runs, &[], &|| false, &mut |event| {
        if let SweepEvent::Seed(_) = event {
            seeds += 1;
            progress(seeds);
        }
    })
}

/// The seeds of `options` that `done` does not cover, made as `runs` says
/// over `jobs` threads, and reported in seed order through `on` (on the
/// calling thread). A seed whose run outlives its budget is reported as
/// timed out, and its worker goes on with the next seed.
///
/// When `stop` turns true, workers take no new seed; the seeds they are
/// running finish (each within the run's wall-clock budget, if any) and are
/// reported, and the summary is [`SweepSummary::stopped`]. Its
/// [`SweepSummary::completed`] always names exactly the seeds it counted
/// (plus `done`): seeds finish out of order, but a seed is counted only once
/// every seed before it has finished.
pub fn sweep_streaming(
    scenario: &Scenario,
    options: &SweepOptions,
    runs: &Runs,
    done: &[Range<u64>],
    stop: &(dyn Fn() -> bool + Sync),
    on: &mut dyn FnMut(SweepEvent<'_>),
) -> SweepSummary {
    sweep_with_rules(scenario, options, runs, done, StopRules::NONE, stop, on)
}

/// [`sweep_streaming`] that also stops by itself, as `rules` say. With
/// [`StopRules::until`] = N, the sweep reports and counts seeds in seed
/// order up to and including the N-th failing one, and no further: its
/// failing seeds are the lowest N of the work, and its summary (seeds,
/// counts, completed ranges) the same whatever `jobs`.
pub fn sweep_with_rules(
    scenario: &Scenario,
    options: &SweepOptions,
    runs: &Runs,
    done: &[Range<u64>],
    rules: StopRules,
    stop: &(dyn Fn() -> bool + Sync),
    on: &mut dyn FnMut(SweepEvent<'_>),
) -> SweepSummary {
    let started = Instant::now();
    let work = Work::new(options, done);
    let total = work.total;
    let jobs = options.jobs.clamp(1, 1024).min(total.max(1) as usize);
    let mut summary = SweepSummary {
        completed: normalize(done.to_vec()),
        rules,
        ..SweepSummary::default()
    };
    // Workers are detached threads owning what they use: a run that never
    // returns keeps its worker, which the sweep abandons (see `watch`).
    let shared = Arc::new(Shared {
        scenario: scenario.clone(),
        mode: options.faults.clone(),
        runs: runs.clone(),
        work,
        next: AtomicU64::new(0),
        reported: AtomicU64::new(0),
        halt: AtomicBool::new(false),
        started,
        time: rules.time,
        in_process: AtomicBool::new(false),
    });
    let (sender, results) = mpsc::channel::<Done>();
    let mut slots: Vec<Arc<Slot>> = (0..jobs).map(|_| spawn_worker(&shared, &sender)).collect();
    let mut live = jobs;
    // Reorder: report index i once 0..i are all in.
    let mut waiting: BTreeMap<u64, SeedReport> = BTreeMap::new();
    let mut prefix = 0u64;
    let mut last_checkpoint = (0u64, Instant::now());
    let enough = |summary: &SweepSummary| rules.until.is_some_and(|n| summary.failing_seeds >= n);
    let mut arrived: Vec<(u64, SeedReport)> = Vec::new();
    while live > 0 {
        if stop() {
            shared.halt.store(true, Ordering::Relaxed);
        }
        match results.recv_timeout(watch_wait(&slots, runs.budget)) {
            Ok(Done::Ready) | Err(mpsc::RecvTimeoutError::Timeout) => {}
            Ok(Done::Exit) => live -= 1,
            Ok(Done::Panicked(payload)) => {
                // A bug of the sweep's own (a run's panic is its outcome):
                // stop the other workers and fail the caller with it.
                shared.halt.store(true, Ordering::Relaxed);
                std::panic::resume_unwind(payload);
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        for slot in &slots {
            slot.take_finished(&mut arrived);
        }
        if let Some(budget) = runs.budget {
            for slot in &mut slots {
                if let Some((i, seed, node)) = slot.abandon_after(budget, &mut arrived) {
                    let timed_out = Outcome::TimedOut { budget, node };
                    arrived.push((i, shared.lost(seed, timed_out, budget)));
                    *slot = spawn_worker(&shared, &sender);
                }
            }
        }
        for (i, report) in arrived.drain(..) {
            if enough(&summary) {
                // Seeds after the N-th failing one: run, but not counted.
                continue;
            }
            waiting.insert(i, report);
            while let Some(report) = waiting.remove(&prefix) {
                prefix += 1;
                shared.reported.store(prefix, Ordering::Release);
                on(SweepEvent::Seed(&report));
                summary.add(report);
                if enough(&summary) {
                    shared.halt.store(true, Ordering::Relaxed);
                    waiting.clear();
                    break;
                }
            }
        }
        let since = prefix - last_checkpoint.0;
        if since >= CHECKPOINT_SEEDS
            || (since > 0 && last_checkpoint.1.elapsed() >= CHECKPOINT_WALL)
        {
            summary.completed = shared.work.completed(prefix, done);
            summary.wall = started.elapsed();
            on(SweepEvent::Checkpoint(&summary));
            last_checkpoint = (prefix, Instant::now());
        }
    }
    // Every seed taken was run (or timed out), so nothing is left waiting.
    assert!(
        waiting.is_empty(),
        "seeds {:?} finished but an earlier one never did",
        waiting.keys().take(5).collect::<Vec<_>>()
    );
    summary.completed = shared.work.completed(prefix, done);
    summary.stopped = prefix < total;
    summary.stopped_by = summary.stopped.then(|| {
        if enough(&summary) {
            StoppedBy::Until
        } else if shared.out_of_time() && !stop() {
            StoppedBy::Time
        } else {
            StoppedBy::Signal
        }
    });
    summary.wall = started.elapsed();
    summary
}

/// What a sweep's workers share.
struct Shared {
    scenario: Scenario,
    mode: FaultMode,
    runs: Runs,
    work: Work,
    /// The next index of the work to take.
    next: AtomicU64,
    /// How many indices have been reported, in order.
    reported: AtomicU64,
    /// Take no new seed: the caller's stop, or `--until` reached.
    halt: AtomicBool,
    started: Instant,
    /// `--time`.
    time: Option<Duration>,
    /// A worker process could not start: seeds run in-process.
    in_process: AtomicBool,
}

impl Shared {
    /// The worker processes to run seeds in, unless the sweep runs them
    /// in-process (see [`Runs::workers`]).
    fn workers(&self) -> Option<&worker::Workers> {
        // fencesim's own designs and processes neither keep state on a
        // thread nor run away: their seeds run in-process, as fast as ever.
        if self.in_process.load(Ordering::Relaxed)
            || !worker::can_run(&self.mode)
            || !self.scenario.hosts_user_code()
        {
            return None;
        }
        self.runs.workers.as_ref()
    }

    fn out_of_time(&self) -> bool {
        self.time.is_some_and(|t| self.started.elapsed() >= t)
    }

    /// The report of a seed whose run was lost, ending `outcome` after
    /// `wall`: it outlived its budget (what a run with a
    /// [budget](RunConfig::budget) gives such a run), or its worker process
    /// died. No journal, no hash.
    fn lost(&self, seed: u64, outcome: Outcome, wall: Duration) -> SeedReport {
        let s = seed_scenario(&self.scenario, seed, &self.mode);
        let result = sim::RunResult {
            seed,
            outcome,
            journal: sim::Journal::default(),
            sim_time: Duration::ZERO,
            wall_time: wall,
            faults_fired: Vec::new(),
            waits: Vec::new(),
        };
        let run = RunConfig::new(seed)
            .scripted(self.scenario.faults.len())
            .judge(&s, result);
        SeedReport::new(&run, &s)
    }
}

/// What a worker tells the sweep.
enum Done {
    /// The worker's slot holds [`Slot::READY`] finished seeds.
    Ready,
    /// The worker took its last seed and is gone.
    Exit,
    /// The worker panicked outside a run.
    Panicked(Box<dyn std::any::Any + Send>),
}

/// The seed a worker is running, watched against the run's budget, and
/// the seeds it finished that the sweep has not taken yet.
///
/// Finished seeds wait in the slot rather than travel one by one through
/// the channel: a send that wakes the sweep's thread is a futex call on
/// both sides, which cost more than a twentieth of a short seed. The sweep
/// takes them whenever it wakes: at least every [`POLL`], or when a worker
/// says [`Done::Ready`]. Kept in the slot, they are never lost with a
/// worker whose next run never returns.
#[derive(Default)]
struct Slot(Mutex<Running>);

#[derive(Default)]
struct Running {
    /// Index in the work, seed and start of the run in progress.
    seed: Option<(u64, u64, Instant)>,
    /// The sweep gave up on this worker's run and reported it timed out.
    abandoned: bool,
    /// Which node's handler the worker's run is in.
    watch: Option<Arc<sim::Watch>>,
    /// Seeds finished (index in the work, report), in the order they ran.
    finished: Vec<(u64, SeedReport)>,
}

impl Slot {
    /// Finished seeds a worker lets pile up before it wakes the sweep.
    const READY: usize = 64;

    /// Moves the seeds the worker finished to `into`.
    fn take_finished(&self, into: &mut Vec<(u64, SeedReport)>) {
        let mut running = self.0.lock().expect("a slot is never poisoned");
        into.append(&mut running.finished);
    }

    /// Abandons the run in progress if it has been going for `budget`:
    /// its index and seed, and the node whose handler it is in. The seeds
    /// the worker finished before it go to `into`.
    fn abandon_after(
        &self,
        budget: Duration,
        into: &mut Vec<(u64, SeedReport)>,
    ) -> Option<(u64, u64, Option<String>)> {
        let mut running = self.0.lock().expect("a slot is never poisoned");
        into.append(&mut running.finished);
        let (i, seed, since) = running.seed?;
        if since.elapsed() < budget {
            return None;
        }
        running.seed = None;
        running.abandoned = true;
        let node = running.watch.as_ref().and_then(|w| w.running());
        Some((i, seed, node))
    }
}

/// How long the sweep may wait for a result: until the first running seed
/// outlives `budget`, and at most [`POLL`] (the caller's stop is read
/// between waits).
fn watch_wait(slots: &[Arc<Slot>], budget: Option<Duration>) -> Duration {
    let Some(budget) = budget else { return POLL };
    let mut wait = POLL;
    for slot in slots {
        let running = slot.0.lock().expect("a slot is never poisoned");
        if let Some((_, _, since)) = running.seed {
            wait = wait.min(budget.saturating_sub(since.elapsed()));
        }
    }
    wait
}

/// How often a sweep waiting for slow seeds reads the caller's stop.
const POLL: Duration = Duration::from_millis(20);

/// Starts a worker: it takes seeds one after the other and runs each on a
/// thread of its own ([`RunConfig::here`]: one madsim runtime and one
/// thread per seed), until the work is done or the sweep halts.
fn spawn_worker(shared: &Arc<Shared>, sender: &mpsc::Sender<Done>) -> Arc<Slot> {
    let slot = Arc::new(Slot::default());
    let (shared, mine, sender) = (shared.clone(), slot.clone(), sender.clone());
    std::thread::Builder::new()
        .name("fencesim-sweep".to_owned())
        .spawn(move || {
            let worked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                work_loop(&shared, &mine, &sender)
            }));
            if let Err(payload) = worked {
                let _ = sender.send(Done::Panicked(payload));
            }
        })
        .expect("spawn a sweep worker");
    slot
}

fn work_loop(shared: &Shared, slot: &Slot, sender: &mpsc::Sender<Done>) {
    // Seeds taken from the work and not run yet: those a worker process
    // had when none could start any more.
    let mut taken = std::collections::VecDeque::new();
    if let Some(workers) = shared.workers() {
        match process_loop(shared, workers, slot, sender) {
            Ok(()) => {
                let _ = sender.send(Done::Exit);
                return;
            }
            Err(left) => taken = left,
        }
    }
    // The runs made for this worker, each on a thread of its own, show the
    // sweep which node they are in.
    slot.0.lock().expect("a slot is never poisoned").watch = Some(sim::Watch::install());
    loop {
        let (i, seed) = match taken.pop_front() {
            Some(next) => next,
            None => match take(shared) {
                Take::Seed(i, seed) => (i, seed),
                Take::Wait => {
                    std::thread::sleep(Duration::from_millis(1));
                    continue;
                }
                Take::Done => break,
            },
        };
        slot.0.lock().expect("a slot is never poisoned").seed = Some((i, seed, Instant::now()));
        let report = shared
            .runs
            .report_here(&shared.scenario, seed, &shared.mode);
        let ready = {
            let mut running = slot.0.lock().expect("a slot is never poisoned");
            if running.abandoned {
                // Reported as timed out; the sweep went on without us.
                return;
            }
            running.seed = None;
            running.finished.push((i, report));
            running.finished.len() == Slot::READY
        };
        if ready && sender.send(Done::Ready).is_err() {
            return;
        }
    }
    let _ = sender.send(Done::Exit);
}

/// What a worker gets when it asks for the next seed.
enum Take {
    /// The seed of this index in the work.
    Seed(u64, u64),
    /// None yet: too far ahead of the oldest unfinished seed.
    Wait,
    /// None: the work is done, or the sweep halts.
    Done,
}

fn take(shared: &Shared) -> Take {
    if shared.halt.load(Ordering::Relaxed) || shared.out_of_time() {
        return Take::Done;
    }
    if shared.next.load(Ordering::Relaxed) >= shared.reported.load(Ordering::Acquire) + WINDOW {
        return Take::Wait;
    }
    let i = shared.next.fetch_add(1, Ordering::Relaxed);
    match shared.work.nth(i) {
        Some(seed) => Take::Seed(i, seed),
        None => Take::Done,
    }
}

/// Seeds a worker process is sent ahead of the one it runs: it never waits
/// for the sweep between two seeds.
const AHEAD: usize = 16;

/// A worker that runs its seeds in a worker process, which it watches
/// against the run's budget itself: a seed still running at the budget
/// has its process killed, and a fresh process gets the seeds sent after
/// it. A process that dies with several seeds in hand has them sent again
/// one at a time, to a fresh process each time it dies, until one dies
/// alone with it: that seed is the one that ended it (its run is
/// deterministic). Returns the seeds taken and not run when no process
/// could start (the sweep then runs them, and the rest, in-process).
fn process_loop(
    shared: &Shared,
    workers: &worker::Workers,
    slot: &Slot,
    sender: &mpsc::Sender<Done>,
) -> Result<(), std::collections::VecDeque<(u64, u64)>> {
    let mut process: Option<worker::Worker> = None;
    // Taken, in order, and not answered yet: the first `sent` of them sent
    // to the process, whose first is running since `since`.
    let mut flight = std::collections::VecDeque::new();
    let mut sent = 0;
    let mut since = Instant::now();
    // Seeds to send one at a time, after a process died with several.
    let mut careful = 0;
    let mut more = true;
    loop {
        if process.is_none() {
            if !more && flight.is_empty() {
                return Ok(());
            }
            let trace_hashes = shared.runs.trace_hashes;
            match worker::Worker::start(workers, &shared.scenario, &shared.mode, trace_hashes) {
                Ok(started) => {
                    process = Some(started);
                    sent = 0;
                }
                Err(e) => {
                    if !shared.in_process.swap(true, Ordering::Relaxed) {
                        eprintln!("warning: {e}; running the seeds in this process instead");
                    }
                    return Err(flight);
                }
            }
        }
        let w = process.as_mut().expect("started above");
        let limit = if careful > 0 { 1 } else { AHEAD };
        while sent < flight.len().min(limit) {
            if sent == 0 {
                since = Instant::now();
            }
            // A worker that is gone says so when asked for the answer.
            w.send_seed(flight[sent].1);
            sent += 1;
        }
        while careful == 0 && more && flight.len() < AHEAD {
            match take(shared) {
                Take::Seed(i, seed) => {
                    if sent == 0 {
                        since = Instant::now();
                    }
                    flight.push_back((i, seed));
                    w.send_seed(seed);
                    sent += 1;
                }
                Take::Wait => {
                    if flight.is_empty() {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    break;
                }
                Take::Done => more = false,
            }
        }
        let Some(&(i, seed)) = flight.front() else {
            if more {
                continue;
            }
            return Ok(());
        };
        let budget = shared.runs.budget;
        let report = match w.answer(budget.map(|b| b.saturating_sub(since.elapsed()))) {
            worker::Answer::Report(report) => *report,
            worker::Answer::Late => {
                // Killed: nothing of the run is left running. (The worker
                // sends what it finished within milliseconds: the seed
                // still unanswered at the budget is the one running.)
                let node = w.running_node();
                let _ = w.why_gone();
                process = None;
                let budget = budget.expect("an answer is late only past a budget");
                let wall = since.elapsed();
                let mut report = shared.lost(seed, Outcome::TimedOut { budget, node }, wall);
                // Its journal up to the hang: the seed replayed, streamed,
                // and killed at the same budget.
                let s = &shared.scenario;
                if let Some(prefix) = worker::Worker::prefix(workers, s, &shared.mode, seed, budget)
                {
                    report.events = prefix.events;
                    report.trace_hash = prefix.trace_hash;
                    report.sim_time = prefix.sim_time;
                }
                report
            }
            worker::Answer::Gone if sent > 1 => {
                // Which of its seeds ended it? Each again, alone.
                let _ = w.why_gone();
                process = None;
                careful = flight.len();
                continue;
            }
            worker::Answer::Gone => {
                let why = w.why_gone();
                process = None;
                let outcome = worker::died_outcome(&why, workers.memory);
                shared.lost(seed, outcome, since.elapsed())
            }
        };
        flight.pop_front();
        sent = sent.saturating_sub(1);
        careful = careful.saturating_sub(1);
        since = Instant::now();
        let ready = {
            let mut running = slot.0.lock().expect("a slot is never poisoned");
            running.finished.push((i, report));
            running.finished.len() == Slot::READY
        };
        if ready && sender.send(Done::Ready).is_err() {
            return Ok(());
        }
    }
}

/// The seeds a sweep runs: the shard's seeds in the parts of the range that
/// are not done yet, numbered 0, 1, … in seed order.
struct Work {
    shard: Shard,
    /// Each part with the number of its seeds before it.
    parts: Vec<(Range<u64>, u64)>,
    total: u64,
}

impl Work {
    fn new(options: &SweepOptions, done: &[Range<u64>]) -> Work {
        let mut parts = Vec::new();
        let mut total = 0u64;
        for part in subtract(&options.seeds, done) {
            let len = options.shard.len(&part);
            parts.push((part, total));
            total += len;
        }
        Work {
            shard: options.shard,
            parts,
            total,
        }
    }

    /// The `i`-th seed of the work.
    fn nth(&self, i: u64) -> Option<u64> {
        if i >= self.total {
            return None;
        }
        let at = self.parts.partition_point(|(_, before)| *before <= i) - 1;
        let (part, before) = &self.parts[at];
        self.shard.nth(part, i - before)
    }

    /// `done` and the seed ranges covered once seeds `0..prefix` of the work
    /// have run.
    fn completed(&self, prefix: u64, done: &[Range<u64>]) -> Vec<Range<u64>> {
        let mut out = done.to_vec();
        for (part, before) in &self.parts {
            let len = self.shard.len(part);
            if prefix >= before + len {
                out.push(part.clone());
            } else if prefix > *before {
                // Up to (not including) the first seed not run yet.
                let first_missing = self
                    .shard
                    .nth(part, prefix - before)
                    .expect("within the part");
                out.push(part.start..first_missing);
            }
        }
        normalize(out)
    }
}
