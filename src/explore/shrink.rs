//! Shrinking a failing seed's fault schedule to a small one that still fails.
//!
//! Delta debugging over the schedule (the scenario's own faults and the
//! seed's random ones), with the seed fixed so that latency and scheduling
//! stay those of the failure:
//! 1. remove faults, halves first, then one at a time, while the run still
//!    fails (ddmin);
//! 2. simplify each remaining fault: `after` triggers to the first
//!    occurrence without delay; durations, extra latencies, downtimes and
//!    clock jumps to the smallest whole millisecond that still fails
//!    (bisection), then rounded up to a whole second when that still fails;
//!    counts to 1.
//!
//! "Still fails" means the verdict is `violation` and the story is kept: the
//! run still shows a finding (of those that count toward the verdict) with
//! the [`Mechanism`] of the original failure's first: the same kind, by the
//! same writer, after the same newer holder, late or not, whose own write
//! reached the same milestones (paused past its lease, sent after its grant
//! ended, held by the network across the lease's end, …, and those the
//! scenario's `[expect] mechanism` names). A schedule that breaks the design
//! some other way (a late grant turned into an ordinary pause past expiry, a
//! zombie write after a newer grant turned into one after a bare expiry) is
//! not a smaller version of this failure, so shrink does not take it.
//!
//! Grant numbers are not part of it: a fault that played no part (a crash
//! of the writer before its failing round, a clock that ran fast) still
//! changes how many grants a client had before the finding, and a shrink
//! that kept every such fault would keep faults that tell nothing.
//!
//! The written scenario's `description` names the faults that remain and
//! the finding they show, never the original story's text, which may tell
//! of faults that are gone.
//!
//! proptest's shrinking would do the same through
//! its value trees; delta debugging over our own schedule type is simpler,
//! needs no strategy to have generated the schedule, and is bounded by
//! [`MAX_RUNS`].

use std::time::Duration;

use super::sweep::{self, FaultMode, SeedReport};
use crate::oracle::signature::{signatures, Signature};
use crate::oracle::{check, Milestones, OracleConfig, ViolationKind};
use crate::runner::{self, ScenarioRun};
use crate::scenario::{FaultSpec, Scenario, Scope, Trigger};

/// At most this many runs per shrink.
pub const MAX_RUNS: u64 = 600;

/// A shrunk failure.
#[derive(Clone, Debug)]
pub struct Shrunk {
    /// The schedule the seed failed with.
    pub before: Vec<FaultSpec>,
    /// The smallest schedule found that still fails.
    pub after: Vec<FaultSpec>,
    /// A standalone scenario: the input's, with `seed`, the shrunk schedule,
    /// and no `[expect]` (so `run` exits 1 while the design has the bug).
    pub scenario: Scenario,
    /// The shrunk scenario's run.
    pub run: ScenarioRun,
    /// Runs spent shrinking.
    pub runs: u64,
    /// What every accepted step kept: the first finding of the seed's run
    /// that counts toward its verdict, or for a safe run that broke a
    /// property of `[expect] always`, the first such property.
    pub target: Target,
    /// The shrunk run's finding of the target's [`Mechanism`], its grants
    /// numbered as in the shrunk run; `None` for a property.
    pub kept: Option<Signature>,
}

/// How a finding broke the design, without the grant numbers of the run
/// that showed it: what `shrink` keeps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mechanism {
    /// The kind of finding.
    pub kind: ViolationKind,
    /// The writer, or the client the finding is about (see [`Signature`]).
    pub writer: Option<String>,
    /// The client of the newer grant (see [`Signature`]).
    pub newer_holder: Option<String>,
    /// The writer's grant reached it after the lock had ended it.
    pub late_grant: bool,
    /// The milestones the finding reached, of those that say how its write
    /// went wrong (see [`OWN_MILESTONES`]) and those the scenario's
    /// `[expect] mechanism` names, in the milestones' order.
    pub milestones: Vec<&'static str>,
}

/// The milestones a stale, zombie or late write reaches by its own grant
/// and sending, whoever else the run holds. The rest are the world's: a
/// lock or storage that restarted, a lock clock that ran fast, a rejection
/// elsewhere, and `two_believers`, which any other client believing a grant
/// of its own at the time reaches (a client paused elsewhere in the
/// schedule). A fault that made one of those and played no part in the
/// write would be kept if they counted; the scenario's `[expect]
/// mechanism` still makes any of them count.
pub const OWN_MILESTONES: [&str; 5] = [
    "holder_paused_past_lease",
    "lease_expired_while_held",
    "grant_arrived_expired",
    "zombie_write_sent",
    "write_outlived_grant",
];

impl Mechanism {
    /// The mechanism of the finding `signature`, whose own milestones are
    /// `own` (`None` for a finding not made at a storage acceptance, judged
    /// on `run`'s), with `listed` (`[expect] mechanism`) counted too.
    fn of(
        signature: &Signature,
        own: Option<&Milestones>,
        run: &Milestones,
        listed: &[String],
    ) -> Mechanism {
        let milestones = match own {
            Some(m) => m
                .pairs()
                .into_iter()
                .filter(|(name, n)| {
                    *n > 0 && (OWN_MILESTONES.contains(name) || listed.iter().any(|l| l == name))
                })
                .map(|(name, _)| name)
                .collect(),
            None => run
                .pairs()
                .into_iter()
                .filter(|(name, n)| *n > 0 && listed.iter().any(|l| l == name))
                .map(|(name, _)| name)
                .collect(),
        };
        Mechanism {
            kind: signature.kind,
            writer: signature.writer.clone(),
            newer_holder: signature.newer_holder.clone(),
            late_grant: signature.late_grant,
            milestones,
        }
    }
}

impl std::fmt::Display for Mechanism {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.kind)?;
        if let Some(w) = &self.writer {
            write!(f, " by {w}")?;
        }
        if self.late_grant {
            f.write_str(", granted late")?;
        }
        if let Some(n) = &self.newer_holder {
            write!(f, " after {n}")?;
        }
        if !self.milestones.is_empty() {
            write!(f, " ({})", self.milestones.join(", "))?;
        }
        Ok(())
    }
}

/// What a shrink keeps failing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A finding that counts toward the verdict, by its signature.
    Finding(Signature),
    /// A property of the scenario's `[expect] always` the run broke.
    Property(&'static str),
}

impl Target {
    /// The finding kept, if the target is one.
    pub fn finding(&self) -> Option<&Signature> {
        match self {
            Target::Finding(s) => Some(s),
            Target::Property(_) => None,
        }
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Finding(s) => write!(f, "{s}"),
            Target::Property(p) => write!(f, "not {p} (`[expect] always`)"),
        }
    }
}

/// Why a seed could not be shrunk.
#[derive(Clone, Debug)]
pub struct NotFailing(pub Box<SeedReport>);

/// Shrinks the schedule of `seed` (run under `mode`), with the bundled
/// designs.
pub fn shrink(scenario: &Scenario, seed: u64, mode: FaultMode) -> Result<Shrunk, NotFailing> {
    shrink_with(&sweep::Runs::default(), scenario, seed, mode)
}

/// [`shrink`], making every run as `runs` says (its designs and budget).
pub fn shrink_with(
    runs: &sweep::Runs,
    scenario: &Scenario,
    seed: u64,
    mode: FaultMode,
) -> Result<Shrunk, NotFailing> {
    let full = sweep::scenario_for(scenario, seed, mode);
    let (run, report) = sweep::run_seed_with(runs, &full, seed, FaultMode::Scenario);
    let target = if report.verdict == crate::oracle::Verdict::Violation {
        // A violation the oracle finds no writes for cannot happen; should
        // it, there is no story to keep.
        match counted(&run, full.strict).into_iter().next() {
            Some(s) => Target::Finding(s),
            None => return Err(NotFailing(Box::new(report))),
        }
    } else if let (false, Some(p)) = (report.outcome.is_error(), report.broken.first()) {
        Target::Property(p)
    } else {
        return Err(NotFailing(Box::new(report)));
    };
    let mechanism = match &target {
        Target::Finding(_) => mechanisms(&run, &full).into_iter().next().map(|(m, _)| m),
        Target::Property(_) => None,
    };
    let mut s = Shrinker {
        runs_with: runs,
        base: full.clone(),
        seed,
        target: target.clone(),
        mechanism: mechanism.clone(),
        runs: 1,
    };
    let before = full.faults.clone();
    let mut faults = s.remove(before.clone());
    faults = s.simplify(faults);
    let mut out = full;
    out.faults = faults.clone();
    out.seed = seed;
    // No `[expect]` (so that `run` exits 1 while the design has the bug),
    // but the property kept, which `run` checks as an expectation.
    out.expect = Default::default();
    if let Target::Property(p) = target {
        out.expect.always = vec![p.to_owned()];
    }
    out.name = format!("{}-seed-{seed}-shrunk", scenario.name);
    // The description is not read by the run: it can name what the run
    // shows.
    let run = s.run(&out);
    let kept = mechanism.and_then(|m| {
        mechanisms(&run, &out)
            .into_iter()
            .find(|(found, _)| *found == m)
            .map(|(_, signature)| signature)
    });
    let shown = match &kept {
        Some(signature) => signature.to_string(),
        None => target.to_string(),
    };
    out.description = description(scenario, seed, before.len(), &faults, &shown);
    Ok(Shrunk {
        before,
        after: faults,
        scenario: out,
        run,
        runs: s.runs + 1,
        target,
        kept,
    })
}

/// The shrunk scenario's story: where it comes from, the faults that
/// remain, and the finding they show.
fn description(
    scenario: &Scenario,
    seed: u64,
    before: usize,
    faults: &[FaultSpec],
    shown: &str,
) -> String {
    let remaining = if faults.is_empty() {
        "no fault at all".to_owned()
    } else {
        faults.iter().map(words).collect::<Vec<_>>().join("; ")
    };
    format!(
        "Shrunk by `{} shrink` from seed {seed} of {} ({before} {} before, {} \
         after): {remaining}. It shows {shown}.",
        crate::repro::program_name(),
        scenario.name,
        if before == 1 { "fault" } else { "faults" },
        faults.len(),
    )
}

/// A fault in a few words: `pause of client1 (7s) after client1:acquired +
/// 8ms`.
pub fn words(f: &FaultSpec) -> String {
    let nodes = f.fault.nodes();
    let link = matches!(f.fault.kind(), "delay" | "drop" | "duplicate") && nodes.len() == 2;
    let nodes = if link {
        format!("{} to {}", nodes[0], nodes[1])
    } else {
        nodes.join(", ")
    };
    let mut size = f.fault.magnitude().map_or(String::new(), |d| {
        format!(" ({})", humantime::format_duration(d))
    });
    match f.fault.clone().scope_mut() {
        Some(Scope::Window(d)) => {
            size += &format!(" for {}", humantime::format_duration(*d));
        }
        Some(Scope::Count(n)) if *n > 1 => size += &format!(" on {n} messages"),
        _ => {}
    }
    let when = trigger_words(&f.trigger, |d| humantime::format_duration(d).to_string());
    format!("{} of {nodes}{size} {when}", f.fault.kind())
}

/// A trigger in words, durations written by `duration`: `at 5s`, `after
/// client1:acquired:2 + 8ms`.
pub fn trigger_words(trigger: &Trigger, duration: impl Fn(Duration) -> String) -> String {
    match trigger {
        Trigger::At(t) => format!("at {}", duration(*t)),
        Trigger::After {
            node,
            kind,
            nth,
            delay,
        } => {
            let nth = if *nth == 1 {
                String::new()
            } else {
                format!(":{nth}")
            };
            let delay = if delay.is_zero() {
                String::new()
            } else {
                format!(" + {}", duration(*delay))
            };
            format!("after {node}:{kind}{nth}{delay}")
        }
    }
}

/// The signatures of `run`'s findings that count toward its verdict, in
/// journal order (zombie writes only when `strict`, late writes never).
pub fn counted(run: &ScenarioRun, strict: bool) -> Vec<Signature> {
    signatures(&run.result.journal)
        .into_iter()
        .filter(|s| s.kind.counts(strict))
        .collect()
}

/// The mechanism and signature of each finding of `run` (of `scenario`)
/// that counts toward its verdict, in journal order.
pub fn mechanisms(run: &ScenarioRun, scenario: &Scenario) -> Vec<(Mechanism, Signature)> {
    let journal = &run.result.journal;
    // `signatures` judges with this configuration: its findings are these,
    // in this order, with their journal positions.
    let all = check(
        journal,
        &OracleConfig {
            strict: true,
            ..OracleConfig::default()
        },
    );
    let listed = &scenario.expect.mechanism;
    all.violations
        .iter()
        .zip(signatures(journal))
        .filter(|(_, sig)| sig.kind.counts(scenario.strict))
        .map(|(v, sig)| {
            let own = run.report.finding_milestones.get(&v.seq);
            (Mechanism::of(&sig, own, &run.milestones, listed), sig)
        })
        .collect()
}

struct Shrinker<'a> {
    runs_with: &'a sweep::Runs,
    base: Scenario,
    seed: u64,
    /// What every accepted step must still show.
    target: Target,
    /// The target finding's mechanism (`None` for a property).
    mechanism: Option<Mechanism>,
    runs: u64,
}

impl Shrinker<'_> {
    fn run(&self, s: &Scenario) -> ScenarioRun {
        let runs = self.runs_with;
        runs.config(self.seed).run(s)
    }

    fn fails(&mut self, faults: &[FaultSpec]) -> bool {
        if self.runs >= MAX_RUNS {
            return false;
        }
        self.runs += 1;
        let mut s = self.base.clone();
        s.faults = faults.to_vec();
        let run = self.run(&s);
        if run.result.outcome.is_error() {
            return false;
        }
        match (&self.target, &self.mechanism) {
            (Target::Finding(_), Some(m)) => {
                run.report.verdict == crate::oracle::Verdict::Violation
                    && mechanisms(&run, &s).iter().any(|(found, _)| found == m)
            }
            (Target::Finding(_), None) => false,
            (Target::Property(p), _) => {
                runner::broken_properties(&s.expect.always, &run.report, &run.result).contains(p)
            }
        }
    }

    /// ddmin: try removing chunks of halving size; restart after a success.
    fn remove(&mut self, mut faults: Vec<FaultSpec>) -> Vec<FaultSpec> {
        let mut chunk = faults.len().div_ceil(2).max(1);
        while !faults.is_empty() {
            let mut removed = false;
            let mut start = 0;
            while start < faults.len() {
                let end = (start + chunk).min(faults.len());
                let mut candidate = faults.clone();
                candidate.drain(start..end);
                if self.fails(&candidate) {
                    faults = candidate;
                    removed = true;
                } else {
                    start = end;
                }
            }
            if chunk == 1 && !removed {
                break;
            }
            if !removed {
                chunk = chunk.div_ceil(2);
            }
        }
        faults
    }

    fn simplify(&mut self, mut faults: Vec<FaultSpec>) -> Vec<FaultSpec> {
        for i in 0..faults.len() {
            if let Trigger::After { nth, delay, .. } = &faults[i].trigger {
                if *nth != 1 || !delay.is_zero() {
                    let mut candidate = faults.clone();
                    if let Trigger::After { nth, delay, .. } = &mut candidate[i].trigger {
                        *nth = 1;
                        *delay = Duration::ZERO;
                    }
                    if self.fails(&candidate) {
                        faults = candidate;
                    }
                }
            }
            if let Some(Scope::Count(count)) = faults[i].fault.clone().scope_mut() {
                if *count > 1 {
                    let mut candidate = faults.clone();
                    *candidate[i].fault.scope_mut().unwrap() = Scope::Count(1);
                    if self.fails(&candidate) {
                        faults = candidate;
                    }
                }
            }
            if let Some(d) = faults[i].fault.magnitude() {
                let d = self.smallest(&faults, i, d);
                faults[i].fault.set_magnitude(d);
            }
        }
        faults
    }

    /// The smallest duration (whole ms, then rounded up to a second when
    /// that still fails) for fault `i` at which the schedule fails.
    fn smallest(&mut self, faults: &[FaultSpec], i: usize, current: Duration) -> Duration {
        let with = |d: Duration| {
            let mut c = faults.to_vec();
            c[i].fault.set_magnitude(d);
            c
        };
        let (mut lo, mut hi) = (0u64, current.as_millis() as u64);
        // Invariant: `hi` fails (it is the current schedule); `lo` is untried or passes.
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if mid == 0 {
                break;
            }
            if self.fails(&with(Duration::from_millis(mid))) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        let found = Duration::from_millis(hi.max(1));
        let rounded = Duration::from_secs(found.as_millis().div_ceil(1000) as u64);
        if rounded != found && rounded < current && self.fails(&with(rounded)) {
            return rounded;
        }
        if found < current {
            found
        } else {
            current
        }
    }
}
