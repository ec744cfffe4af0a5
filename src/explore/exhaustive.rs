//! Exhaustive injection: one (or every pair of) fault(s) from a bounded menu
//! at every event boundary of the run without random faults.
//!
//! The boundaries are the designs' events of that run (`acquired`, `wrote`,
//! `granted`, `accepted`, …; the world's `send`/`deliver` are left out: every
//! message is bracketed by designs' events already). At the boundary after
//! the `n`-th event `kind` of `node`, the menu is, each fired by
//! `after = "node:kind:n"`:
//! - pause `node` for `max_pause` (longer than any bundled TTL);
//! - delay the next message from `node` to each other node by `max_delay`;
//! - jump `node`'s wall clock forward by `max_jump`;
//! - crash `node`, restarting after `max_restart`.
//!
//! (maxima from `[explore]`, or without one the defaults scaled to the
//! scenario's timeouts, as random faults use them). With depth 2 every unordered
//! pair of distinct injections is tried; both triggers come from the run
//! without faults, so the second fires only if its event still happens.
//!
//! A run that already fails without injections has nothing to search: every
//! injection would "break" it. [`already_fails`] says so, and `explore
//! --exhaustive` refuses such a scenario (exit 2) with the reason.
//!
//! A menu of `m` injections makes `m` runs at depth 1 and `m (m - 1) / 2` at
//! depth 2: a scenario with a few hundred events has millions of pairs.
//! [`plan`] says how many runs a search will make before any of them runs,
//! and the sets are numbered, not listed: [`injection`] turns a number into
//! its set, so memory does not grow with the number of runs.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::shard::Shard;
use super::sweep::{Runs, SeedReport};
use crate::oracle::Verdict;
use crate::scenario::fault_kind::{self, FaultKind};
use crate::scenario::{FaultSpec, Scenario, Trigger};

/// The most runs `explore --exhaustive` makes unless `--max-runs` allows
/// more: well under a minute on two cores for a small scenario.
pub const MAX_RUNS: u64 = 10_000;

/// What an exhaustive search found.
#[derive(Clone, Debug)]
pub struct ExhaustiveResult {
    /// The run without injections.
    pub baseline: SeedReport,
    /// Every single injection of the menu.
    pub menu: Vec<FaultSpec>,
    /// Injections (sets of 1 or 2) tried.
    pub tried: u64,
    /// Injections that made the run fail, in menu order, with their result.
    pub breaking: Vec<(Vec<FaultSpec>, SeedReport)>,
    /// Wall-clock time.
    pub wall: Duration,
}

/// The menu of single injections for `scenario` run with `seed`.
pub fn menu(scenario: &Scenario, seed: u64) -> (SeedReport, Vec<FaultSpec>) {
    menu_with(&Runs::default(), scenario, seed)
}

/// [`menu`], its baseline run made as `runs` says.
pub fn menu_with(runs: &Runs, scenario: &Scenario, seed: u64) -> (SeedReport, Vec<FaultSpec>) {
    let run = runs.run(scenario, seed);
    let baseline = SeedReport::new(&run, scenario);
    let menu = build_menu(scenario, &boundaries(scenario, &run));
    (baseline, menu)
}

/// The event boundaries of a run that the menu injects at, as (node, kind,
/// N: its N-th such event on that node), in journal order.
fn boundaries(scenario: &Scenario, run: &crate::runner::ScenarioRun) -> Vec<(String, String, u32)> {
    let spec = scenario.explore_spec();
    let nodes = scenario.node_names();
    let mut seen = std::collections::BTreeMap::<(&str, &str), u32>::new();
    let mut out = Vec::new();
    for e in run.result.journal.events() {
        // A world kind decodes (or fails to) as a world event; a node's own does not.
        let world = !matches!(sim::events::WorldEvent::decode(e), Ok(None));
        if world || !nodes.iter().any(|n| *n == e.node) {
            continue;
        }
        let nth = seen.entry((&e.node, &e.kind)).or_default();
        *nth += 1;
        if !spec.nodes.is_empty() && !spec.nodes.iter().any(|n| *n == e.node) {
            continue;
        }
        out.push((e.node.to_string(), e.kind.to_string(), *nth));
    }
    out
}

/// The kinds `[explore]` allows that inject at a boundary, in the order
/// the menu lists them (the simulator's order: pause, delay, clock, crash).
fn menu_kinds(scenario: &Scenario) -> Vec<&'static dyn FaultKind> {
    let spec = scenario.explore_spec();
    sim::fault::KINDS
        .iter()
        .filter(|k| spec.kinds.iter().any(|s| s == *k))
        .filter_map(|k| fault_kind::named(k))
        .collect()
}

/// How many injections the menu has at one boundary: each allowed kind's
/// ([`FaultKind::menu_len`]; a pause, a delay to each other node, a clock
/// jump and a crash).
fn per_boundary(scenario: &Scenario) -> u64 {
    let nodes = scenario.node_names().len();
    menu_kinds(scenario).iter().map(|k| k.menu_len(nodes)).sum()
}

fn build_menu(scenario: &Scenario, boundaries: &[(String, String, u32)]) -> Vec<FaultSpec> {
    let spec = scenario.explore_spec();
    let nodes = scenario.node_names();
    let kinds = menu_kinds(scenario);
    let mut menu = Vec::new();
    for (node, kind, nth) in boundaries {
        let trigger = Trigger::After {
            node: node.clone(),
            kind: kind.clone(),
            nth: *nth,
            delay: Duration::ZERO,
        };
        for k in &kinds {
            menu.extend(
                k.menu(node, &nodes, &spec)
                    .into_iter()
                    .map(|fault| FaultSpec {
                        fault,
                        trigger: trigger.clone(),
                        line: 0,
                    }),
            );
        }
    }
    menu
}

/// A search too large for its cap, counted without building its menu.
#[derive(Clone, Debug)]
pub struct TooLarge {
    /// The run without injections.
    pub baseline: SeedReport,
    /// Injections the menu would have.
    pub menu_len: u64,
    /// Injection sets of the whole search.
    pub sets: u64,
    /// The shard's share of them.
    pub runs: u64,
}

/// [`plan_with`] that counts the menu from the baseline's event boundaries
/// before building it, and builds nothing when the shard's runs exceed
/// `cap`: a large scenario's menu alone can take gigabytes.
pub fn plan_within(
    runs: &Runs,
    scenario: &Scenario,
    seed: u64,
    depth: u8,
    shard: Shard,
    cap: u64,
) -> Result<Plan, Box<TooLarge>> {
    assert!(depth == 1 || depth == 2, "depth is 1 or 2, not {depth}");
    let run = runs.run(scenario, seed);
    let baseline = SeedReport::new(&run, scenario);
    let points = boundaries(scenario, &run);
    let menu_len = points.len() as u64 * per_boundary(scenario);
    let sets = count(menu_len, depth);
    let shard_runs = shard.len(&(0..sets));
    if shard_runs > cap {
        return Err(Box::new(TooLarge {
            baseline,
            menu_len,
            sets,
            runs: shard_runs,
        }));
    }
    let menu = build_menu(scenario, &points);
    debug_assert_eq!(menu.len() as u64, menu_len);
    Ok(Plan {
        baseline,
        depth,
        sets,
        runs: shard_runs,
        menu,
    })
}

/// The injection sets of a search as a sweep runs them
/// ([`super::sweep::FaultMode::Exhaustive`]): set `k` is the `k`-th of
/// [`injection`], run with `seed`.
#[derive(Clone, Debug, PartialEq)]
pub struct Injections {
    /// The seed of every run.
    pub seed: u64,
    /// The menu.
    pub menu: Vec<FaultSpec>,
    /// 1 or 2.
    pub depth: u8,
}

// Faults hold clock rates (f64), never NaN: equality is total.
impl Eq for Injections {}

impl Injections {
    /// The faults of set `k`.
    pub fn set(&self, k: u64) -> Vec<FaultSpec> {
        injection(k, self.menu.len() as u64, self.depth)
            .into_iter()
            .map(|m| self.menu[m].clone())
            .collect()
    }

    /// How many sets there are.
    pub fn sets(&self) -> u64 {
        count(self.menu.len() as u64, self.depth)
    }
}

/// Why a search cannot judge injections into the run `baseline` describes:
/// it already violates (listing its kinds) or ended in error. `None` when
/// it does not fail: only then does a failing injection say something.
pub fn already_fails(baseline: &SeedReport) -> Option<String> {
    if baseline.outcome.is_error() {
        return Some(format!("the run ended in error ({})", baseline.outcome));
    }
    if baseline.verdict == Verdict::Violation {
        let kinds: Vec<&str> = baseline.kinds.iter().map(|k| k.as_str()).collect();
        return Some(format!("its own run is a violation ({})", kinds.join(", ")));
    }
    None
}

/// How many injection sets of size `depth` (1 or 2) a menu of `menu_len`
/// has.
pub fn count(menu_len: u64, depth: u8) -> u64 {
    match depth {
        1 => menu_len,
        _ => menu_len * menu_len.saturating_sub(1) / 2,
    }
}

/// The `k`-th injection set of size `depth` (1 or 2) of a menu of
/// `menu_len`, as menu indices, in the order `{0}, {1}, …` or `{0, 1},
/// {0, 2}, …, {0, m-1}, {1, 2}, …`.
pub fn injection(k: u64, menu_len: u64, depth: u8) -> Vec<usize> {
    assert!(
        k < count(menu_len, depth),
        "injection {k} of {}",
        count(menu_len, depth)
    );
    if depth == 1 {
        return vec![k as usize];
    }
    // Pairs starting with i come after start(i) = i*m - i*(i+1)/2 others.
    let m = menu_len;
    let start = |i: u64| i * m - i * (i + 1) / 2;
    let (mut lo, mut hi) = (0u64, m - 1);
    while lo + 1 < hi {
        let mid = (lo + hi) / 2;
        if start(mid) <= k {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let i = lo;
    let j = i + 1 + (k - start(i));
    vec![i as usize, j as usize]
}

/// A search before it runs: the baseline, the menu, and how many runs the
/// shard will make.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The run without injections.
    pub baseline: SeedReport,
    /// Every single injection of the menu.
    pub menu: Vec<FaultSpec>,
    /// 1 or 2.
    pub depth: u8,
    /// Injection sets of the whole search.
    pub sets: u64,
    /// The shard's share of them: the runs it will make.
    pub runs: u64,
}

/// Runs the baseline, builds the menu and counts the runs, without making
/// any of them.
pub fn plan(scenario: &Scenario, seed: u64, depth: u8, shard: Shard) -> Plan {
    plan_with(&Runs::default(), scenario, seed, depth, shard)
}

/// [`plan`], its baseline run made as `runs` says.
pub fn plan_with(runs: &Runs, scenario: &Scenario, seed: u64, depth: u8, shard: Shard) -> Plan {
    assert!(depth == 1 || depth == 2, "depth is 1 or 2, not {depth}");
    let (baseline, menu) = menu_with(runs, scenario, seed);
    let sets = count(menu.len() as u64, depth);
    Plan {
        baseline,
        depth,
        sets,
        runs: shard.len(&(0..sets)),
        menu,
    }
}

/// Tries every injection set of size `depth` (1 or 2) on `scenario` (its own
/// faults kept) with `seed`, over `jobs` threads; the shard picks injection
/// sets by index, as it picks seeds.
pub fn exhaustive(
    scenario: &Scenario,
    seed: u64,
    depth: u8,
    jobs: usize,
    shard: Shard,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> ExhaustiveResult {
    let runs = Runs::default();
    let started = Instant::now();
    let plan = plan_with(&runs, scenario, seed, depth, shard);
    let mut result = run_plan(&runs, scenario, seed, &plan, jobs, shard, progress);
    result.wall = started.elapsed();
    result
}

/// Makes the runs of `plan` (from [`plan_with`] with the same scenario, seed
/// and shard) as `runs` says: with its designs and budget.
pub fn run_plan(
    runs: &Runs,
    scenario: &Scenario,
    seed: u64,
    plan: &Plan,
    jobs: usize,
    shard: Shard,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> ExhaustiveResult {
    let started = Instant::now();
    let (menu, depth) = (&plan.menu, plan.depth);
    let sets = 0..plan.sets;
    let total = plan.runs;
    let next = AtomicU64::new(0);
    let done = AtomicU64::new(0);
    let mut breaking: Vec<(u64, Vec<FaultSpec>, SeedReport)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..jobs.clamp(1, 1024))
            .map(|_| {
                scope.spawn(|| {
                    let mut found = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(k) = shard.nth(&sets, i) else { break };
                        let set = injection(k, menu.len() as u64, depth);
                        let faults: Vec<FaultSpec> = set.iter().map(|&m| menu[m].clone()).collect();
                        let mut s = scenario.clone();
                        s.faults.extend(faults.iter().cloned());
                        let run = runs.run(&s, seed);
                        let report = SeedReport::new(&run, &s);
                        if report.is_failure() {
                            found.push((i, faults, report));
                        }
                        progress(done.fetch_add(1, Ordering::Relaxed) + 1, total);
                    }
                    found
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| {
                w.join()
                    .expect("an exhaustive worker panicked outside a run")
            })
            .collect()
    });
    breaking.sort_by_key(|(i, _, _)| *i);
    ExhaustiveResult {
        baseline: plan.baseline.clone(),
        menu: menu.clone(),
        tried: total,
        breaking: breaking.into_iter().map(|(_, f, r)| (f, r)).collect(),
        wall: started.elapsed(),
    }
}
