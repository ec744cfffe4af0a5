//! Random fault schedules: a pure function of (scenario, seed).
//!
//! Each seed draws `faults = [min, max]` faults from the scenario's
//! `[explore]` table (or its defaults, scaled to the scenario's timeouts:
//! [`ExploreSpec::scaled`]). The RNG is ChaCha8 seeded from the seed, apart
//! from madsim's (which drives latency and scheduling inside the run), so
//! `shrink` and `run --faults random` recompute the same schedule from the
//! seed alone, on any platform.
//!
//! Each kind's generator sits beside the kind in the simulator
//! (`sim::fault::Pause::random`, …, weighted by `sim::fault::WEIGHTS`);
//! this module picks their targets and triggers, and the proptest strategies
//! ([`super::strategy`]) draw through the same [`fault`].
//!
//! How faults are drawn, and why:
//! - **swarm** (Groce et al., "Swarm testing", ISSTA 2012): each seed first
//!   enables each fault kind, and each node, by a coin flip ([`swarm`]), then
//!   draws its faults from those only. A seed whose only kind is `crash` and
//!   whose only node is the lock crashes the lock, again and again, with no
//!   pause to mask it: extremes that a uniform mix of every kind on every
//!   node almost never reaches. `kinds = [...]` or `nodes = [...]` in the
//!   table pin them; `swarm = false` turns it off;
//! - with swarm, a seed's first faults cover the kinds it enabled, one each
//!   ([`uncovered`]): a seed that enabled pauses and crashes stalls a
//!   holder *and* crashes a server, the coordinated pair a uniform draw
//!   rarely makes;
//! - kinds are weighted: pauses most (a stalled leaseholder is the story of
//!   figure 9-6), then delays, drops and partitions, then the rest;
//! - a pause or clock change targets a client four times in five (clients
//!   hold leases; servers are still hit, less often); a crash, a server
//!   half the time (where a restart may lose state);
//! - a partition cuts one node off, or splits two sides with nodes in
//!   between that reach both (`sim::fault::Partition::random`);
//! - three faults in five fire *after an event*: of the node the fault hits
//!   (`client1:acquired`, `lock:granted`, `storage:accepted`, and a client's
//!   own steps: `read`, `checked`, `renewed` where its variant has them), or
//!   of a client, or of the lock or the storage, the moments where locks
//!   break; with a delay within a client's `work` half the time; the others fire at
//!   a random true time within the scenario's busy period (see [`horizon`]);
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
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ SCHEDULE_SALT);
    let spec = swarm(&mut rng, scenario, &scenario.explore_spec());
    let n = rng.u32_in(spec.faults.0, spec.faults.1);
    let targets = Targets::new(scenario, &spec);
    let mut faults = Vec::new();
    for _ in 0..n {
        let next = fault(&mut rng, scenario, &uncovered(&spec, &faults), &targets);
        faults.push(next);
    }
    faults
}

/// The kinds the next fault of a seed is drawn from: with swarm, first
/// each kind the seed enabled that none of `drawn` is of, so that a seed
/// enabling pauses and crashes gets both (a holder stalled past its lease
/// *and* a storage that forgets), not three pauses; then all of them, by
/// weight.
pub fn uncovered(enabled: &ExploreSpec, drawn: &[FaultSpec]) -> ExploreSpec {
    let mut spec = enabled.clone();
    if enabled.swarm {
        let left: Vec<String> = enabled
            .kinds
            .iter()
            .filter(|k| !drawn.iter().any(|f| f.fault.kind() == k.as_str()))
            .cloned()
            .collect();
        if !left.is_empty() {
            spec.kinds = left;
        }
    }
    spec
}

/// The kinds and nodes one seed enables: with `spec.swarm`, each kind (unless
/// `kinds` pins them) and each node (unless `nodes` pins them) by a coin
/// flip, and one drawn as usual when no coin came up; else `spec` as it is.
pub fn swarm(d: &mut dyn Draw, s: &Scenario, spec: &ExploreSpec) -> ExploreSpec {
    let mut enabled = spec.clone();
    if !spec.swarm {
        return enabled;
    }
    if !spec.kinds_pinned {
        enabled.kinds = spec
            .kinds
            .iter()
            .filter(|_| d.chance(0.5))
            .cloned()
            .collect();
        if enabled.kinds.is_empty() {
            enabled.kinds = vec![sim::fault::random::pick_kind(d, &spec.kinds).to_owned()];
        }
    }
    if spec.nodes.is_empty() {
        let all = s.node_names();
        enabled.nodes = all.iter().filter(|_| d.chance(0.5)).cloned().collect();
        if enabled.nodes.is_empty() {
            enabled.nodes = vec![all[d.index(all.len())].clone()];
        }
    }
    enabled
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
/// it is empty), clients four times in five when both are allowed.
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

    /// A server half the time (when both exist): a client's crash ends
    /// its own lease, a server's is where durable and volatile state part
    /// (a lock restarted without its keys or its counter, a fence forgotten).
    fn crash_target(&self, d: &mut dyn Draw) -> String {
        let pool = match (self.clients.is_empty(), self.servers.is_empty()) {
            (false, false) if d.chance(0.5) => &self.clients,
            (false, false) => &self.servers,
            (false, true) => &self.clients,
            _ => &self.servers,
        };
        pool[d.index(pool.len())].clone()
    }
}

/// One random fault of `spec`'s kinds and sizes on `targets`, drawn by its
/// kind's generator, with a [`trigger`].
pub fn fault(d: &mut dyn Draw, s: &Scenario, spec: &ExploreSpec, targets: &Targets) -> FaultSpec {
    let fault = Fault::random(d, &spec.kinds, targets, &sizes(spec));
    // The node whose own events best anchor the fault: the one it hits, or
    // the sender of a link fault (a delay of the lock's replies right after
    // it grants). A hold of every message to a node and a partition have
    // none: they anchor on a server's or a client's event.
    let own = crate::scenario::fault_kind::of(&fault).anchor(&fault);
    let trigger = trigger(d, s, own);
    FaultSpec {
        fault,
        trigger,
        line: 0,
    }
}

/// The events of a client a random fault fires after (`acquired` thrice as
/// often as the others), beside the steps of its own critical section
/// ([`client_events`]).
const CLIENT_EVENTS: [&str; 6] = [
    crate::events::ACQUIRED,
    crate::events::ACQUIRED,
    crate::events::ACQUIRED,
    crate::events::WROTE,
    crate::events::ACKED,
    crate::events::RELEASED,
];

/// The events `client` logs in a round: [`CLIENT_EVENTS`], and the steps
/// its variant adds inside the critical section, each as often as
/// `acquired`: `read` (an increment reads, then writes), `checked` (a lease
/// check, then the write), `renewed` (a keep-alive). A pause right after
/// one of them is where check-then-act and read-modify-write break.
fn client_events(client: &crate::scenario::ClientSpec) -> Vec<&'static str> {
    use crate::events::{CHECKED, READ, RENEWED};
    use crate::scenario::Workload;
    let mut events = CLIENT_EVENTS.to_vec();
    let steps = [
        (client.workload == Workload::Increment, READ),
        (client.check_lease, CHECKED),
        (client.renew, RENEWED),
    ];
    for (_, event) in steps.into_iter().filter(|(used, _)| *used) {
        events.extend([event; 3]);
    }
    events
}

/// The events of a lock node a random fault fires after: where leases are
/// made (`granted`, thrice as often) and end.
const LOCK_EVENTS: [&str; 5] = [
    crate::events::GRANTED,
    crate::events::GRANTED,
    crate::events::GRANTED,
    crate::events::EXPIRED,
    crate::events::RELEASED,
];

/// The events of the storage a random fault fires after.
const STORAGE_EVENTS: [&str; 3] = [
    crate::events::ACCEPTED,
    crate::events::ACCEPTED,
    crate::events::REJECTED,
];

/// Three times in five after an event, else at a random time within the
/// [`horizon`]. The event is, by weight, one of `own`'s (the node the fault
/// hits or sends from) 4, the lock's (`granted`, `expired`, `released`) 3,
/// the storage's (`accepted`, `rejected`) 1, a random client's (`acquired`
/// most, or `wrote`, `acked`, `released`) 2: the moments where locks break
/// (a client paused right as the lock grants it, a lock crashed right after
/// a grant); the first to eighth such event, with a delay within a client's
/// `work` half the time.
pub fn trigger(d: &mut dyn Draw, s: &Scenario, own: Option<&str>) -> Trigger {
    if !d.chance(0.6) {
        let horizon_ms = horizon(s).as_millis() as u64;
        return Trigger::At(Duration::from_millis(d.u64_in(0, horizon_ms)));
    }
    assert!(!s.clients.is_empty(), "a scenario has a client");
    let locks = s.lock_nodes();
    let own_weight = if own.is_some() { 4 } else { 0 };
    let pick = d.u32_in(0, own_weight + 3 + 1 + 2 - 1);
    let node = match (own, pick) {
        (Some(node), p) if p < own_weight => node.to_owned(),
        (_, p) if p < own_weight + 3 => locks[d.index(locks.len())].clone(),
        (_, p) if p < own_weight + 4 => "storage".to_owned(),
        _ => s.clients[d.index(s.clients.len())].name.clone(),
    };
    let client = s.clients.iter().find(|c| c.name == node);
    let own_steps;
    let events: &[&str] = match client {
        Some(c) => {
            own_steps = client_events(c);
            &own_steps
        }
        None if locks.contains(&node) => &LOCK_EVENTS,
        None => &STORAGE_EVENTS,
    };
    let event = events[d.index(events.len())];
    // A client's own events happen once a round; a server's, once a round
    // of any client.
    let rounds = match client {
        Some(c) => c.rounds,
        None => s.clients.iter().map(|c| c.rounds).sum(),
    };
    let nth = d.u64_in(1, rounds.clamp(1, 8)) as u32;
    let delay = if d.chance(0.5) {
        Duration::ZERO
    } else {
        let work = client.map_or_else(
            || s.clients.iter().map(|c| c.work).max().unwrap_or_default(),
            |c| c.work,
        );
        let work_ms = (work.as_millis() as u64).max(1);
        Duration::from_millis(d.u64_in(0, work_ms))
    };
    Trigger::After {
        node,
        kind: event.into(),
        nth,
        delay,
    }
}
