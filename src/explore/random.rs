//! Random fault schedules: a pure function of (scenario, seed).
//!
//! Each seed draws `faults = [min, max]` faults from the scenario's
//! `[explore]` table (or its defaults). The RNG is ChaCha8 seeded from the
//! seed, apart from madsim's (which drives latency and scheduling inside the
//! run), so `shrink` and `run --faults random` recompute the same schedule
//! from the seed alone, on any platform.
//!
//! How faults are drawn, and why:
//! - kinds are weighted: pauses most (a stalled leaseholder is the story of
//!   figure 9-6), then delays, drops and partitions, then the rest;
//! - a pause, crash or clock change targets a client four times in five
//!   (clients hold leases; servers are still hit, less often);
//! - three faults in five fire *after an event* (`client1:acquired`, `wrote`,
//!   …, with an optional delay within the client's `work`), which hits the
//!   critical section exactly; the others fire at a random true time within
//!   the scenario's busy period (see [`horizon`]);
//! - every duration is a whole number of milliseconds, from 100 ms to the
//!   table's maximum, so written-out schedules read well.
//!
//! ```
//! use fencesim::design::catalog::Registry;
//! use fencesim::explore::random;
//! let s = fencesim::scenario::load_file(&Registry::builtin(), "scenarios/figure-9-6.toml".as_ref()).unwrap();
//! assert_eq!(random::schedule(&s, 7), random::schedule(&s, 7));
//! ```

use std::time::Duration;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::scenario::{ExploreSpec, FaultKind, FaultSpec, Scenario, Trigger};

/// Mixed into the seed so that the schedule's stream is unrelated to the
/// numbers madsim draws from the same seed ("fencesim" in ASCII).
const SCHEDULE_SALT: u64 = 0x6665_6e63_6573_696d;

/// Weights of the kinds, in [`crate::scenario::model::FAULT_KINDS`] terms.
const WEIGHTS: &[(&str, u32)] = &[
    ("pause", 6),
    ("delay", 3),
    ("drop", 2),
    ("partition", 2),
    ("clock", 2),
    ("crash", 1),
    ("duplicate", 1),
];

/// The shortest random duration.
const MIN_MS: u64 = 100;

/// The random faults of `seed` for `scenario`, in firing-independent order.
pub fn schedule(scenario: &Scenario, seed: u64) -> Vec<FaultSpec> {
    let spec = scenario.explore.clone().unwrap_or_default();
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ SCHEDULE_SALT);
    let n = rng.gen_range(spec.faults.0..=spec.faults.1);
    let targets = Targets::new(scenario, &spec);
    (0..n)
        .map(|_| fault(&mut rng, scenario, &spec, &targets))
        .collect()
}

/// The scenario with `faults` appended to its own.
pub fn with_faults(scenario: &Scenario, faults: Vec<FaultSpec>) -> Scenario {
    let mut s = scenario.clone();
    s.faults.extend(faults);
    s
}

/// The scenario as `--faults random` runs `seed`: its own faults, then the
/// seed's random ones.
pub fn scenario_for_seed(scenario: &Scenario, seed: u64) -> Scenario {
    with_faults(scenario, schedule(scenario, seed))
}

/// The true time by which the scenario's clients have usually done their
/// work without faults: the latest start, plus every round's work and a
/// second of protocol each, plus a 10 s lease's worth, within `duration`.
/// `at` triggers are drawn below it; later ones would find nothing to break.
pub fn horizon(scenario: &Scenario) -> Duration {
    let latest_start = scenario.clients.iter().map(|c| c.start).max();
    let work: Duration = scenario
        .clients
        .iter()
        .map(|c| (c.work + Duration::from_secs(1)) * c.rounds.min(1000) as u32)
        .sum();
    let busy = latest_start.unwrap_or_default() + work + Duration::from_secs(10);
    busy.min(scenario.duration)
}

/// Who random faults may hit.
struct Targets {
    clients: Vec<String>,
    servers: Vec<String>,
    /// Every node of the scenario (link ends and partition sides).
    all: Vec<String>,
}

impl Targets {
    fn new(s: &Scenario, spec: &ExploreSpec) -> Targets {
        let allowed = |n: &String| spec.nodes.is_empty() || spec.nodes.contains(n);
        let clients: Vec<String> = s
            .clients
            .iter()
            .map(|c| c.name.clone())
            .filter(allowed)
            .collect();
        let mut servers: Vec<String> = s.lock_nodes().into_iter().filter(allowed).collect();
        if allowed(&"storage".to_string()) {
            servers.push("storage".into());
        }
        Targets {
            clients,
            servers,
            all: s.node_names(),
        }
    }

    /// A client four times in five, else a server (when both exist).
    fn node(&self, rng: &mut ChaCha8Rng) -> String {
        let pool = match (self.clients.is_empty(), self.servers.is_empty()) {
            (false, false) if rng.gen_bool(0.8) => &self.clients,
            (false, false) => &self.servers,
            (false, true) => &self.clients,
            _ => &self.servers,
        };
        pool.choose(rng).expect("a scenario has nodes").clone()
    }

    /// A link from a target node to any other node; client → storage (the
    /// write path) half the time when a client is a target.
    fn link(&self, rng: &mut ChaCha8Rng) -> (String, String) {
        if !self.clients.is_empty() && self.all.contains(&"storage".into()) && rng.gen_bool(0.5) {
            let from = self.clients.choose(rng).unwrap().clone();
            return (from, "storage".into());
        }
        let from = self.node(rng);
        let others: Vec<&String> = self.all.iter().filter(|n| **n != from).collect();
        let to = (*others.choose(rng).expect("a scenario has at least 3 nodes")).clone();
        (from, to)
    }
}

fn millis(rng: &mut ChaCha8Rng, max: Duration) -> Duration {
    let max_ms = (max.as_millis() as u64).max(MIN_MS);
    Duration::from_millis(rng.gen_range(MIN_MS..=max_ms))
}

fn signed_ns(rng: &mut ChaCha8Rng, max: Duration) -> i64 {
    let ns = millis(rng, max).as_nanos() as i64;
    if rng.gen_bool(0.5) {
        ns
    } else {
        -ns
    }
}

fn kind_name(rng: &mut ChaCha8Rng, spec: &ExploreSpec) -> String {
    let allowed: Vec<(&str, u32)> = WEIGHTS
        .iter()
        .copied()
        .filter(|(k, _)| spec.kinds.iter().any(|s| s == k))
        .collect();
    let total: u32 = allowed.iter().map(|(_, w)| w).sum();
    let mut pick = rng.gen_range(0..total);
    for (kind, weight) in &allowed {
        if pick < *weight {
            return kind.to_string();
        }
        pick -= weight;
    }
    unreachable!("the pick is below the total weight")
}

fn fault(rng: &mut ChaCha8Rng, s: &Scenario, spec: &ExploreSpec, t: &Targets) -> FaultSpec {
    let kind = match kind_name(rng, spec).as_str() {
        "pause" => FaultKind::Pause {
            node: t.node(rng),
            duration: millis(rng, spec.max_pause),
        },
        "clock" => {
            let node = t.node(rng);
            match rng.gen_range(0..10) {
                0..=4 => FaultKind::Clock {
                    node,
                    offset: None,
                    rate: None,
                    jump: Some(signed_ns(rng, spec.max_jump)),
                },
                5..=7 => FaultKind::Clock {
                    node,
                    offset: None,
                    // 0.50 to 2.00 in steps of 0.05: drift from half to twice speed.
                    rate: Some(rng.gen_range(10..=40) as f64 / 20.0),
                    jump: None,
                },
                _ => FaultKind::Clock {
                    node,
                    offset: Some(signed_ns(rng, spec.max_jump)),
                    rate: None,
                    jump: None,
                },
            }
        }
        "delay" => {
            let (from, to) = t.link(rng);
            FaultKind::Delay {
                from,
                to,
                extra: millis(rng, spec.max_delay),
                count: Some(if rng.gen_bool(0.8) {
                    1
                } else {
                    rng.gen_range(2..=4)
                }),
                window: None,
            }
        }
        "drop" => {
            let (from, to) = t.link(rng);
            FaultKind::Drop {
                from,
                to,
                count: Some(rng.gen_range(1..=3)),
                window: None,
            }
        }
        "duplicate" => {
            let (from, to) = t.link(rng);
            FaultKind::Duplicate {
                from,
                to,
                count: Some(1),
                window: None,
            }
        }
        "partition" => {
            let node = t.node(rng);
            let rest: Vec<String> = t.all.iter().filter(|n| **n != node).cloned().collect();
            FaultKind::Partition {
                groups: vec![vec![node], rest],
                duration: millis(rng, spec.max_partition),
                one_way: rng.gen_bool(0.2),
            }
        }
        "crash" => FaultKind::Crash {
            node: t.node(rng),
            restart_after: if rng.gen_bool(0.85) {
                Some(millis(rng, spec.max_restart))
            } else {
                None
            },
        },
        other => unreachable!("fault kind `{other}` has a weight but no generator"),
    };
    let trigger = trigger(rng, s, &kind);
    FaultSpec {
        kind,
        trigger,
        line: 0,
    }
}

/// After an event of the target client (or of a random client), or at a
/// random time within the [`horizon`].
fn trigger(rng: &mut ChaCha8Rng, s: &Scenario, kind: &FaultKind) -> Trigger {
    if rng.gen_bool(0.6) {
        let own = match kind {
            FaultKind::Pause { node, .. }
            | FaultKind::Crash { node, .. }
            | FaultKind::Clock { node, .. } => s.clients.iter().find(|c| c.name == *node),
            _ => None,
        };
        let client = match own {
            Some(c) if rng.gen_bool(0.7) => c,
            _ => s.clients.choose(rng).expect("a scenario has a client"),
        };
        let event = *[
            "acquired", "acquired", "acquired", "wrote", "acked", "released",
        ]
        .choose(rng)
        .unwrap();
        let nth = rng.gen_range(1..=client.rounds.min(8)) as u32;
        let delay = if rng.gen_bool(0.5) {
            Duration::ZERO
        } else {
            let work_ms = (client.work.as_millis() as u64).max(1);
            Duration::from_millis(rng.gen_range(0..=work_ms))
        };
        return Trigger::After {
            node: client.name.clone(),
            event: event.into(),
            nth,
            delay,
        };
    }
    let horizon_ms = horizon(s).as_millis() as u64;
    Trigger::At(Duration::from_millis(rng.gen_range(0..=horizon_ms)))
}
