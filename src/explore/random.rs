//! Random fault schedules: a pure function of (scenario, seed).
//!
//! Each seed draws `faults = [min, max]` faults from the scenario's
//! `[explore]` table (or its defaults). The RNG is ChaCha8 seeded from the
//! seed, apart from madsim's (which drives latency and scheduling inside the
//! run), so `shrink` and `run --faults random` recompute the same schedule
//! from the seed alone, on any platform.
//!
//! Each kind's generator sits beside the kind in the simulator
//! (`sim::fault::Pause::random`, …, weighted by `sim::fault::WEIGHTS`);
//! this module picks their targets and triggers, and the proptest strategies
//! ([`super::strategy`]) draw through the same [`fault`].
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

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use sim::fault::random::{Draw, Sizes};

use crate::scenario::{ExploreSpec, Fault, FaultSpec, Scenario, Trigger};

/// Mixed into the seed so that the schedule's stream is unrelated to the
/// numbers madsim draws from the same seed ("fencesim" in ASCII).
const SCHEDULE_SALT: u64 = 0x6665_6e63_6573_696d;

/// The random faults of `seed` for `scenario`, in firing-independent order.
pub fn schedule(scenario: &Scenario, seed: u64) -> Vec<FaultSpec> {
    let spec = scenario.explore.clone().unwrap_or_default();
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ SCHEDULE_SALT);
    let n = rng.u32_in(spec.faults.0, spec.faults.1);
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

/// The sizes of `[explore]`'s random faults, for the kinds' generators.
pub fn sizes(spec: &ExploreSpec) -> Sizes {
    Sizes {
        max_pause: spec.max_pause,
        max_delay: spec.max_delay,
        max_jump: spec.max_jump,
        max_partition: spec.max_partition,
        max_restart: spec.max_restart,
    }
}

/// Who random faults may hit: the nodes `[explore] nodes` allows (all when
/// it is empty), clients four times in five.
#[derive(Clone, Debug)]
pub struct Targets {
    clients: Vec<String>,
    servers: Vec<String>,
    /// Every node of the scenario (link ends and partition sides).
    all: Vec<String>,
}

impl Targets {
    /// The targets of `s` under `spec`.
    pub fn new(s: &Scenario, spec: &ExploreSpec) -> Targets {
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
}

impl sim::fault::random::Targets for Targets {
    /// A client four times in five, else a server (when both exist).
    fn node(&self, d: &mut dyn Draw) -> String {
        let pool = match (self.clients.is_empty(), self.servers.is_empty()) {
            (false, false) if d.chance(0.8) => &self.clients,
            (false, false) => &self.servers,
            (false, true) => &self.clients,
            _ => &self.servers,
        };
        pool[d.index(pool.len())].clone()
    }

    /// A link from a target node to any other node; client → storage (the
    /// write path) half the time when a client is a target.
    fn link(&self, d: &mut dyn Draw) -> (String, String) {
        if !self.clients.is_empty() && self.all.contains(&"storage".into()) && d.chance(0.5) {
            let from = self.clients[d.index(self.clients.len())].clone();
            return (from, "storage".into());
        }
        let from = self.node(d);
        let others: Vec<&String> = self.all.iter().filter(|n| **n != from).collect();
        assert!(!others.is_empty(), "a scenario has at least 3 nodes");
        let to = others[d.index(others.len())].clone();
        (from, to)
    }

    fn all(&self) -> &[String] {
        &self.all
    }
}

/// One random fault of `spec`'s kinds and sizes on `targets`, drawn by its
/// kind's generator, with a [`trigger`].
pub fn fault(d: &mut dyn Draw, s: &Scenario, spec: &ExploreSpec, targets: &Targets) -> FaultSpec {
    let fault = Fault::random(d, &spec.kinds, targets, &sizes(spec));
    let own = match &fault {
        Fault::Pause(f) => Some(f.node.as_str()),
        Fault::Crash(f) => Some(f.node.as_str()),
        Fault::Clock(f) => Some(f.node.as_str()),
        _ => None,
    };
    let trigger = trigger(d, s, own);
    FaultSpec {
        fault,
        trigger,
        line: 0,
    }
}

/// Three times in five after an event (`acquired` most, or `wrote`,
/// `acked`, `released`; the first to eighth; with a delay within the
/// client's `work` half the time) of `own`, the node a pause, crash or clock
/// change hits, when it is a client (seven times in ten), or of a random
/// client; else at a random time within the [`horizon`].
pub fn trigger(d: &mut dyn Draw, s: &Scenario, own: Option<&str>) -> Trigger {
    if d.chance(0.6) {
        let own = own.and_then(|node| s.clients.iter().find(|c| c.name == node));
        let client = match own {
            Some(c) if d.chance(0.7) => c,
            _ => {
                assert!(!s.clients.is_empty(), "a scenario has a client");
                &s.clients[d.index(s.clients.len())]
            }
        };
        const EVENTS: [&str; 6] = [
            crate::events::ACQUIRED,
            crate::events::ACQUIRED,
            crate::events::ACQUIRED,
            crate::events::WROTE,
            crate::events::ACKED,
            crate::events::RELEASED,
        ];
        let event = EVENTS[d.index(EVENTS.len())];
        let nth = d.u64_in(1, client.rounds.min(8)) as u32;
        let delay = if d.chance(0.5) {
            Duration::ZERO
        } else {
            let work_ms = (client.work.as_millis() as u64).max(1);
            Duration::from_millis(d.u64_in(0, work_ms))
        };
        return Trigger::After {
            node: client.name.clone(),
            kind: event.into(),
            nth,
            delay,
        };
    }
    let horizon_ms = horizon(s).as_millis() as u64;
    Trigger::At(Duration::from_millis(d.u64_in(0, horizon_ms)))
}
