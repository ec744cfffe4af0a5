//! proptest strategies for fault schedules, for property tests of your own
//! designs: every schedule they generate is valid for the scenario (it names
//! only its nodes and passes the loader's rules), and proptest shrinks a
//! failing one toward fewer faults, shorter durations and earlier triggers.
//!
//! ```
//! use fencesim::design::catalog::Registry;
//! use fencesim::explore::strategy;
//! use fencesim::{runner, scenario};
//! use proptest::prelude::*;
//! use proptest::test_runner::{Config, TestRunner};
//!
//! let s = scenario::load_file(&Registry::builtin(), "scenarios/figure-9-6.toml".as_ref()).unwrap();
//! let mut runner = TestRunner::new(Config { cases: 4, ..Config::default() });
//! runner.run(&strategy::schedule(&s), |faults| {
//!     let mut s = s.clone();
//!     s.faults.extend(faults);
//!     prop_assert_eq!(runner::run(&s, 1).report.stale_writes, 0);
//!     Ok(())
//! }).unwrap();
//! ```

use std::time::Duration;

use proptest::prelude::*;
use proptest::sample::select;

use crate::scenario::{ExploreSpec, FaultKind, FaultSpec, Scenario, Trigger};

/// The shortest generated duration, in milliseconds.
const MIN_MS: u64 = 100;

fn millis(max: Duration) -> impl Strategy<Value = Duration> {
    (MIN_MS..=(max.as_millis() as u64).max(MIN_MS)).prop_map(Duration::from_millis)
}

/// Nodes the scenario's `[explore] nodes` allows (all when empty).
fn targets(s: &Scenario, spec: &ExploreSpec) -> Vec<String> {
    let all = s.node_names();
    if spec.nodes.is_empty() {
        all
    } else {
        all.into_iter().filter(|n| spec.nodes.contains(n)).collect()
    }
}

/// `(from, to)`: a target node and any other node.
fn link(targets: Vec<String>, all: Vec<String>) -> impl Strategy<Value = (String, String)> {
    select(targets).prop_flat_map(move |from| {
        let others: Vec<String> = all.iter().filter(|n| **n != from).cloned().collect();
        (Just(from), select(others))
    })
}

/// A trigger: after the first to fourth `acquired`, `wrote` or `released` of
/// a client (with up to its `work` of delay), or at a time within
/// [`super::random::horizon`].
pub fn trigger(s: &Scenario) -> BoxedStrategy<Trigger> {
    let clients: Vec<(String, u64, u64)> = s
        .clients
        .iter()
        .map(|c| (c.name.clone(), c.rounds.min(4), c.work.as_millis() as u64))
        .collect();
    let after = select(clients).prop_flat_map(|(node, rounds, work_ms)| {
        (
            Just(node),
            select(vec!["acquired", "wrote", "released"]),
            1..=rounds as u32,
            0..=work_ms,
        )
            .prop_map(|(node, event, nth, delay_ms)| Trigger::After {
                node,
                event: event.to_string(),
                nth,
                delay: Duration::from_millis(delay_ms),
            })
    });
    let horizon_ms = super::random::horizon(s).as_millis() as u64;
    let at = (0..=horizon_ms).prop_map(|ms| Trigger::At(Duration::from_millis(ms)));
    prop_oneof![3 => after, 2 => at].boxed()
}

/// One fault of the kinds and sizes of `spec`, on the scenario's nodes.
pub fn fault_kind(s: &Scenario, spec: &ExploreSpec) -> BoxedStrategy<FaultKind> {
    let t = targets(s, spec);
    let all = s.node_names();
    let mut options: Vec<(u32, BoxedStrategy<FaultKind>)> = Vec::new();
    for kind in &spec.kinds {
        let strategy = match kind.as_str() {
            "pause" => (select(t.clone()), millis(spec.max_pause))
                .prop_map(|(node, duration)| FaultKind::Pause { node, duration })
                .boxed(),
            "clock" => {
                let max_ns = spec.max_jump.as_millis() as i64 * 1_000_000;
                (select(t.clone()), -max_ns..=max_ns)
                    .prop_filter("a jump moves the clock", |(_, ns)| *ns != 0)
                    .prop_map(|(node, ns)| FaultKind::Clock {
                        node,
                        offset: None,
                        rate: None,
                        jump: Some(ns),
                    })
                    .boxed()
            }
            "delay" => (
                link(t.clone(), all.clone()),
                millis(spec.max_delay),
                1..=3u64,
            )
                .prop_map(|((from, to), extra, count)| FaultKind::Delay {
                    from,
                    to,
                    extra,
                    count: Some(count),
                    window: None,
                })
                .boxed(),
            "drop" => (link(t.clone(), all.clone()), 1..=3u64)
                .prop_map(|((from, to), count)| FaultKind::Drop {
                    from,
                    to,
                    count: Some(count),
                    window: None,
                })
                .boxed(),
            "duplicate" => link(t.clone(), all.clone())
                .prop_map(|(from, to)| FaultKind::Duplicate {
                    from,
                    to,
                    count: Some(1),
                    window: None,
                })
                .boxed(),
            "partition" => {
                let all = all.clone();
                (select(t.clone()), millis(spec.max_partition), any::<bool>())
                    .prop_map(move |(node, duration, one_way)| {
                        let rest = all.iter().filter(|n| **n != node).cloned().collect();
                        FaultKind::Partition {
                            groups: vec![vec![node], rest],
                            duration,
                            one_way,
                        }
                    })
                    .boxed()
            }
            "crash" => (
                select(t.clone()),
                proptest::option::weighted(0.85, millis(spec.max_restart)),
            )
                .prop_map(|(node, restart_after)| FaultKind::Crash {
                    node,
                    restart_after,
                })
                .boxed(),
            other => unreachable!("the loader lets no fault kind `{other}` through"),
        };
        let weight = if kind == "pause" { 3 } else { 1 };
        options.push((weight, strategy));
    }
    proptest::strategy::Union::new_weighted(options).boxed()
}

/// One fault with its trigger.
pub fn fault(s: &Scenario, spec: &ExploreSpec) -> BoxedStrategy<FaultSpec> {
    (fault_kind(s, spec), trigger(s))
        .prop_map(|(kind, trigger)| FaultSpec {
            kind,
            trigger,
            line: 0,
        })
        .boxed()
}

/// `faults = [min, max]` faults drawn with [`fault`], from the scenario's
/// `[explore]` table (or its defaults).
pub fn schedule(s: &Scenario) -> BoxedStrategy<Vec<FaultSpec>> {
    let spec = s.explore.clone().unwrap_or_default();
    let (min, max) = (spec.faults.0 as usize, spec.faults.1 as usize);
    proptest::collection::vec(fault(s, &spec), min..=max).boxed()
}
