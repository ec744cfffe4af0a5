//! Seed sweeps: every seed of a range (or of one shard of it), over `jobs` OS
//! threads pulling seed indices from one atomic counter.
//!
//! Each seed is one [`crate::runner::run`], which runs on a fresh thread of
//! its own (see `sim::run`), so workers share nothing but the counter. Only
//! failing seeds are kept (at most [`MAX_KEPT`]); everything else is a
//! counter, so memory stays flat however many seeds a sweep runs.
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
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use sim::Outcome;

use super::random;
use super::shard::Shard;
use crate::design::catalog::Registry;
use crate::oracle::{milestones, Milestones, Verdict, ViolationKind};
use crate::runner::{self, ScenarioRun};
use crate::scenario::Scenario;

/// At most this many failing seeds are kept in a summary; further ones are
/// only counted.
pub const MAX_KEPT: usize = 10_000;

/// Which faults a seed runs with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FaultMode {
    /// The scenario's own faults plus the seed's random schedule
    /// ([`random::schedule`]): explore adds faults, it never removes the
    /// story's own.
    #[default]
    Random,
    /// Only the scenario's own faults: the seed varies latency and scheduling.
    Scenario,
}

impl FaultMode {
    /// `"random"` or `"scenario"`.
    pub fn as_str(self) -> &'static str {
        match self {
            FaultMode::Random => "random",
            FaultMode::Scenario => "scenario",
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

/// One seed's result, small enough to keep for every failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeedReport {
    /// The seed.
    pub seed: u64,
    /// The oracle's verdict.
    pub verdict: Verdict,
    /// How the run ended (`crashed` carries the panic).
    pub outcome: Outcome,
    /// Stale writes found.
    pub stale_writes: u64,
    /// Zombie writes found.
    pub zombie_writes: u64,
    /// Writes accepted.
    pub accepted_writes: u64,
    /// Writes rejected.
    pub rejected_writes: u64,
    /// Token regressions found.
    pub token_regressions: u64,
    /// Lost updates found.
    pub lost_updates: u64,
    /// Kinds of the findings that count toward the verdict, deduplicated.
    pub kinds: Vec<ViolationKind>,
    /// Journal length.
    pub events: u64,
    /// Simulated time at the end.
    pub sim_time: Duration,
    /// The journal's hash, for the seeds a sweep reports (violations and
    /// crashes); empty for the others, which the sweep only counts (hashing
    /// every journal would cost a sixth of a sweep's time).
    pub trace_hash: String,
    /// How many faults the run had (the scenario's and the random ones).
    pub faults: usize,
    /// How many of the scenario's own faults never fired (random ones may
    /// miss their moment; they are not counted).
    pub unfired_faults: u64,
    /// The dangerous situations the run reached.
    pub milestones: Milestones,
}

impl SeedReport {
    /// Summarizes a judged run.
    pub fn new(run: &ScenarioRun, faults: usize, strict: bool) -> SeedReport {
        let r = &run.report;
        let mut kinds: Vec<ViolationKind> = r
            .violations
            .iter()
            .map(|v| v.kind)
            .filter(|k| strict || *k != ViolationKind::ZombieWrite)
            .collect();
        kinds.sort();
        kinds.dedup();
        let reported = r.verdict == Verdict::Violation
            || matches!(run.result.outcome, sim::Outcome::Crashed { .. });
        SeedReport {
            seed: run.result.seed,
            verdict: r.verdict,
            outcome: run.result.outcome.clone(),
            stale_writes: r.stale_writes,
            zombie_writes: r.zombie_writes,
            accepted_writes: r.accepted_writes,
            rejected_writes: r.rejected_writes,
            token_regressions: r.token_regressions,
            lost_updates: r.lost_updates,
            kinds,
            events: run.result.journal.len() as u64,
            sim_time: run.result.sim_time,
            trace_hash: if reported {
                run.trace_hash()
            } else {
                String::new()
            },
            faults,
            unfired_faults: run.unfired_faults().count() as u64,
            milestones: run.milestones,
        }
    }

    /// The run judged nothing: no write reached the storage.
    pub fn inconclusive(&self) -> bool {
        self.verdict == Verdict::Inconclusive
    }

    /// The run stalled or hit the time or event limit.
    pub fn cut_short(&self) -> bool {
        runner::is_cut_short(&self.outcome)
    }

    /// A violation, or a panic inside the run.
    pub fn is_failure(&self) -> bool {
        self.verdict == Verdict::Violation || self.crashed()
    }

    /// Whether the run panicked.
    pub fn crashed(&self) -> bool {
        matches!(self.outcome, Outcome::Crashed { .. })
    }

    /// The JSON line of `--json`.
    pub fn json(&self, repro: &str) -> serde_json::Value {
        json!({
            "seed": self.seed,
            "verdict": self.verdict.as_str(),
            "outcome": self.outcome.as_str(),
            "crash": match &self.outcome {
                Outcome::Crashed { node, message } => json!({"node": node, "message": message}),
                _ => serde_json::Value::Null,
            },
            "kinds": self.kinds.iter().map(|k| k.as_str()).collect::<Vec<_>>(),
            "stale_writes": self.stale_writes,
            "zombie_writes": self.zombie_writes,
            "accepted_writes": self.accepted_writes,
            "rejected_writes": self.rejected_writes,
            "token_regressions": self.token_regressions,
            "lost_updates": self.lost_updates,
            "events": self.events,
            "sim_time_ms": self.sim_time.as_millis() as u64,
            "faults": self.faults,
            "unfired_faults": self.unfired_faults,
            "milestones": self.milestones,
            "trace_hash": self.trace_hash,
            "repro": repro,
        })
    }
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
    /// Seeds per violation kind (a seed counts once per kind it shows).
    pub by_kind: BTreeMap<&'static str, u64>,
    /// Seeds per outcome (`completed`, `stalled`, `time_limit`, …).
    pub outcomes: BTreeMap<&'static str, u64>,
    /// Seeds whose verdict is `inconclusive` (no write reached the storage).
    pub inconclusive: u64,
    /// Seeds cut short: stalled, or at the time or event limit.
    pub cut_short: u64,
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
}

impl SweepSummary {
    fn add(&mut self, report: SeedReport) {
        self.seeds += 1;
        *self.outcomes.entry(report.outcome.as_str()).or_default() += 1;
        self.sim_time += report.sim_time;
        self.inconclusive += u64::from(report.inconclusive());
        self.cut_short += u64::from(report.cut_short());
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
        if report.crashed() {
            self.crashed += 1;
        }
        if report.is_failure() {
            self.first_failing_seed = Some(
                self.first_failing_seed
                    .map_or(report.seed, |s| s.min(report.seed)),
            );
            self.failures.push(report);
            if self.failures.len() > 2 * MAX_KEPT {
                self.trim();
            }
        }
    }

    fn merge(&mut self, other: SweepSummary) {
        self.seeds += other.seeds;
        self.violations += other.violations;
        self.crashed += other.crashed;
        for (k, n) in other.by_kind {
            *self.by_kind.entry(k).or_default() += n;
        }
        for (k, n) in other.outcomes {
            *self.outcomes.entry(k).or_default() += n;
        }
        self.inconclusive += other.inconclusive;
        self.cut_short += other.cut_short;
        self.unfired += other.unfired;
        for (k, n) in other.milestones {
            *self.milestones.entry(k).or_default() += n;
        }
        self.sim_time += other.sim_time;
        self.first_failing_seed = match (self.first_failing_seed, other.first_failing_seed) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.failures.extend(other.failures);
        self.trim();
    }

    fn trim(&mut self) {
        self.failures.sort_by_key(|f| f.seed);
        self.failures.truncate(MAX_KEPT);
    }

    /// Seeds that reached each milestone, every name present (a sweep of
    /// no seed has all zeros).
    pub fn milestone_counts(&self) -> BTreeMap<&'static str, u64> {
        milestones::NAMES
            .iter()
            .map(|name| (*name, self.milestones.get(name).copied().unwrap_or(0)))
            .collect()
    }

    /// Seeds per second of wall time.
    pub fn seeds_per_sec(&self) -> f64 {
        self.seeds as f64 / self.wall.as_secs_f64().max(1e-9)
    }

    /// The last line of `--json`.
    pub fn json(&self, options: &SweepOptions) -> serde_json::Value {
        json!({
            "summary": true,
            "seeds": self.seeds,
            "violations": self.violations,
            "crashed": self.crashed,
            "first_failing_seed": self.first_failing_seed,
            "seeds_per_sec": (self.seeds_per_sec() * 10.0).round() / 10.0,
            "wall_ms": self.wall.as_millis() as u64,
            "sim_ms": self.sim_time.as_millis() as u64,
            "by_kind": self.by_kind,
            "outcomes": self.outcomes,
            "inconclusive": self.inconclusive,
            "cut_short": self.cut_short,
            "unfired": self.unfired,
            "milestones": self.milestone_counts(),
            "range": format!("{}..{}", options.seeds.start, options.seeds.end),
            "shard": options.shard.to_string(),
            "faults": options.faults.as_str(),
            "jobs": options.jobs,
        })
    }
}

/// The scenario that `seed` runs under `mode`.
pub fn scenario_for(scenario: &Scenario, seed: u64, mode: FaultMode) -> Scenario {
    match mode {
        FaultMode::Random => random::scenario_for_seed(scenario, seed),
        FaultMode::Scenario => scenario.clone(),
    }
}

/// Runs and judges one seed as a sweep would.
pub fn run_seed(scenario: &Scenario, seed: u64, mode: FaultMode) -> (ScenarioRun, SeedReport) {
    let s = match mode {
        FaultMode::Random => std::borrow::Cow::Owned(random::scenario_for_seed(scenario, seed)),
        FaultMode::Scenario => std::borrow::Cow::Borrowed(scenario),
    };
    let run = runner::run_scripted(&Registry::builtin(), &s, seed, scenario.faults.len());
    let report = SeedReport::new(&run, s.faults.len(), s.strict);
    (run, report)
}

/// Runs every seed of `options`, calling `progress` with the number of seeds
/// done so far (from worker threads, after each seed).
pub fn sweep(
    scenario: &Scenario,
    options: &SweepOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> SweepSummary {
    let started = Instant::now();
    let total = options.shard.len(&options.seeds);
    let next = AtomicU64::new(0);
    let done = AtomicU64::new(0);
    let jobs = options.jobs.clamp(1, 1024).min(total.max(1) as usize);
    let mut summary = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..jobs)
            .map(|_| {
                scope.spawn(|| {
                    let mut local = SweepSummary::default();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(seed) = options.shard.nth(&options.seeds, i) else {
                            break;
                        };
                        let (_, report) = run_seed(scenario, seed, options.faults);
                        local.add(report);
                        progress(done.fetch_add(1, Ordering::Relaxed) + 1);
                    }
                    local
                })
            })
            .collect();
        let mut all = SweepSummary::default();
        for w in workers {
            all.merge(w.join().expect("a sweep worker panicked outside a run"));
        }
        all
    });
    summary.trim();
    summary.wall = started.elapsed();
    summary
}
