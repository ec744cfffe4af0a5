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
//! (maxima from `[explore]`, or its defaults). With depth 2 every unordered
//! pair of distinct injections is tried; both triggers come from the run
//! without faults, so the second fires only if its event still happens.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::shard::Shard;
use super::sweep::SeedReport;
use crate::oracle::Verdict;
use crate::runner;
use crate::scenario::{FaultKind, FaultSpec, Scenario, Trigger};

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
    let run = runner::run(scenario, seed);
    let baseline = SeedReport::new(&run, scenario.faults.len(), scenario.strict);
    let spec = scenario.explore.clone().unwrap_or_default();
    let nodes = scenario.node_names();
    let mut seen: Vec<(String, String, u32)> = Vec::new();
    let mut menu = Vec::new();
    for e in run.result.journal.events() {
        if sim::WORLD_EVENTS.contains(&e.kind.as_str()) || !nodes.contains(&e.node) {
            continue;
        }
        let nth = seen
            .iter()
            .filter(|(n, k, _)| *n == e.node && *k == e.kind)
            .count() as u32
            + 1;
        seen.push((e.node.clone(), e.kind.clone(), nth));
        if !spec.nodes.is_empty() && !spec.nodes.contains(&e.node) {
            continue;
        }
        let trigger = Trigger::After {
            node: e.node.clone(),
            event: e.kind.clone(),
            nth,
            delay: Duration::ZERO,
        };
        let at = |kind| FaultSpec {
            kind,
            trigger: trigger.clone(),
            line: 0,
        };
        let node = e.node.clone();
        let kinds = |k: &str| spec.kinds.iter().any(|s| s == k);
        if kinds("pause") {
            menu.push(at(FaultKind::Pause {
                node: node.clone(),
                duration: spec.max_pause,
            }));
        }
        if kinds("delay") {
            for to in nodes.iter().filter(|n| **n != node) {
                menu.push(at(FaultKind::Delay {
                    from: node.clone(),
                    to: to.clone(),
                    extra: spec.max_delay,
                    count: Some(1),
                    window: None,
                }));
            }
        }
        if kinds("clock") {
            menu.push(at(FaultKind::Clock {
                node: node.clone(),
                offset: None,
                rate: None,
                jump: Some(spec.max_jump.as_nanos() as i64),
            }));
        }
        if kinds("crash") {
            menu.push(at(FaultKind::Crash {
                node: node.clone(),
                restart_after: Some(spec.max_restart),
            }));
        }
    }
    (baseline, menu)
}

/// Every injection set of size `depth` (1 or 2), as menu indices.
fn injections(menu_len: usize, depth: u8) -> Vec<Vec<usize>> {
    match depth {
        1 => (0..menu_len).map(|i| vec![i]).collect(),
        _ => (0..menu_len)
            .flat_map(|i| (i + 1..menu_len).map(move |j| vec![i, j]))
            .collect(),
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
    assert!(depth == 1 || depth == 2, "depth is 1 or 2, not {depth}");
    let started = Instant::now();
    let (baseline, menu) = menu(scenario, seed);
    let all = injections(menu.len(), depth);
    let mine: Vec<&Vec<usize>> = all
        .iter()
        .enumerate()
        .filter(|(i, _)| shard.contains(*i as u64))
        .map(|(_, set)| set)
        .collect();
    let total = mine.len() as u64;
    let next = AtomicU64::new(0);
    let done = AtomicU64::new(0);
    let mut breaking: Vec<(usize, Vec<FaultSpec>, SeedReport)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..jobs.clamp(1, 1024))
            .map(|_| {
                scope.spawn(|| {
                    let mut found = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                        let Some(set) = mine.get(i) else { break };
                        let faults: Vec<FaultSpec> = set.iter().map(|&m| menu[m].clone()).collect();
                        let mut s = scenario.clone();
                        s.faults.extend(faults.iter().cloned());
                        let run = runner::run(&s, seed);
                        let report = SeedReport::new(&run, s.faults.len(), s.strict);
                        if report.verdict == Verdict::Violation || report.crashed() {
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
        baseline,
        menu,
        tried: total,
        breaking: breaking.into_iter().map(|(_, f, r)| (f, r)).collect(),
        wall: started.elapsed(),
    }
}
