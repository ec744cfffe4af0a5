//! `explore --workloads` (or `[explore] workloads = true`): each seed varies
//! the workload as well as the faults, so that a design is exercised in
//! shapes its scenario file never wrote: a holder whose work outlives its
//! lease while renewing and others wait, a client that checks its lease
//! before writing, a third client, a late start, answers slower than a
//! timeout, a grant delivered twice.
//!
//! As faults are ([`super::random`]), the workload is *swarmed* (Groce et
//! al., "Swarm testing", ISSTA 2012): each seed first turns each knob on or
//! off by a coin flip, then varies each client only through the knobs it
//! turned on. A seed that turned on only `work` and `renew` gives every
//! client long renewing work, with nothing else to hide it; a uniform mix
//! of every knob on every client rarely does.
//!
//! The knobs, with `T` the scenario's lease scale ([`scale`]):
//! - `clients`: one or two more clients, each a copy of one of the file's
//!   (its process and keys included), named `clientN` after the last;
//! - `work`: a client's work becomes `T/4`, `T/2`, `3T/4`, `T`, `3T/2`,
//!   `2T` or `3T`: shorter and longer than the lease;
//! - `renew`, `check_lease`: a client's setting turned over;
//! - `rounds`: one to three rounds;
//! - `start`: a start from 0 to `2T`;
//! - `slow`: the lock's answers to one or two clients take `T/20` to `T/2`,
//!   at most a quarter of the client's timeout and of the lock's shortest
//!   duration (two exchanges of an acquire still fit in them);
//! - `duplicate`: the lock's answers to one or two clients are delivered
//!   twice, one time in three.
//!
//! A process client that refuses a setting (its registered `refuses`) keeps
//! the file's; the run's `duration` grows, within 24 h, to fit the longer
//! work. The seed's workload is a pure function of (scenario, seed), from a
//! ChaCha8 stream of its own, apart from the fault schedule's and madsim's:
//! `run`, `shrink`, `step` and `report` with `--workloads` recompute it,
//! and `shrink` writes it out as plain `[[clients]]` and links.
//!
//! ```
//! use fencesim::design::catalog::Registry;
//! use fencesim::explore::workload;
//! let s = fencesim::scenario::load_file(&Registry::builtin(), "scenarios/figure-9-6.toml".as_ref()).unwrap();
//! assert_eq!(workload::vary(&s, 7), workload::vary(&s, 7));
//! let shapes: Vec<_> = (0..50).map(|seed| workload::vary(&s, seed).clients).collect();
//! assert!(shapes.iter().any(|c| c.len() > s.clients.len()));
//! ```

use std::time::Duration;

use rand::{Rng as _, SeedableRng as _};
use rand_chacha::ChaCha8Rng;

use crate::design::params::ParamValue;
use crate::scenario::{ClientSpec, LinkSpec, Scenario};

/// Mixed into the seed so that the workload's stream is unrelated to the
/// fault schedule's and to madsim's ("workload" in ASCII).
const WORKLOAD_SALT: u64 = 0x776f_726b_6c6f_6164;

/// The most clients a varied workload adds to the file's.
const MAX_EXTRA_CLIENTS: usize = 2;

/// The longest run a varied workload asks for.
const MAX_DURATION: Duration = Duration::from_secs(24 * 3600);

/// Whether `scenario`'s seeds vary their workload (`--workloads`, or
/// `[explore] workloads = true`).
pub fn enabled(scenario: &Scenario) -> bool {
    scenario.explore.as_ref().is_some_and(|e| e.workloads)
}

/// `scenario` with its seeds' workloads varied (what `--workloads` does to
/// a loaded file): `[explore] workloads = true`, its other values kept.
pub fn turned_on(scenario: Scenario) -> Scenario {
    let mut s = scenario;
    let mut spec = s.explore_spec();
    spec.workloads = true;
    s.explore = Some(spec);
    s
}

/// The scenario's lease scale: its lock's `ttl`, or else the longest
/// duration among its lock's parameters (a session's timeout, a lock
/// delay), never under a second.
pub fn scale(scenario: &Scenario) -> Duration {
    let params = &scenario.lock.params;
    let ttl = match params.get("ttl") {
        Some(ParamValue::Duration(d)) => Some(*d),
        _ => None,
    };
    let longest = params
        .iter()
        .filter_map(|(_, v)| match v {
            ParamValue::Duration(d) => Some(*d),
            _ => None,
        })
        .max();
    ttl.or(longest)
        .unwrap_or_default()
        .max(Duration::from_secs(1))
}

/// Which knobs a seed turned on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Knobs {
    clients: bool,
    work: bool,
    renew: bool,
    check_lease: bool,
    rounds: bool,
    start: bool,
    slow: bool,
    duplicate: bool,
}

impl Knobs {
    fn draw(rng: &mut ChaCha8Rng) -> Knobs {
        let mut coin = || rng.gen_bool(0.5);
        let knobs = Knobs {
            clients: coin(),
            work: coin(),
            renew: coin(),
            check_lease: coin(),
            rounds: coin(),
            start: coin(),
            slow: coin(),
            duplicate: coin(),
        };
        // No knob at all would run the file's own workload: turn on work,
        // the one that matters most against a lease.
        if knobs == Knobs::default() {
            return Knobs {
                work: true,
                ..knobs
            };
        }
        knobs
    }
}

/// The scenario as `seed` runs it with its workload varied: a pure
/// function of (`scenario`, `seed`). The result's `[explore] workloads` is
/// off: its workload is the seed's, written out in full, and varying it
/// again would be another seed's.
pub fn vary(scenario: &Scenario, seed: u64) -> Scenario {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ WORKLOAD_SALT);
    let mut s = scenario.clone();
    if let Some(e) = s.explore.as_mut() {
        e.workloads = false;
    }
    let t = scale(scenario);
    let knobs = Knobs::draw(&mut rng);
    if knobs.clients {
        let extra = rng.gen_range(1..=MAX_EXTRA_CLIENTS);
        for _ in 0..extra {
            let template = scenario.clients[rng.gen_range(0..scenario.clients.len())].clone();
            let name = fresh_name(&s);
            s.clients.push(ClientSpec { name, ..template });
        }
    }
    for i in 0..s.clients.len() {
        let before = s.clients[i].clone();
        let c = &mut s.clients[i];
        if knobs.work && rng.gen_bool(0.5) {
            let quarters = [1, 2, 3, 4, 6, 8, 12];
            c.work = millis(t * quarters[rng.gen_range(0..quarters.len())] / 4);
        }
        if knobs.renew && rng.gen_bool(0.5) {
            c.renew = !c.renew;
        }
        if knobs.check_lease && rng.gen_bool(0.5) {
            c.check_lease = !c.check_lease;
        }
        if knobs.rounds && rng.gen_bool(0.5) {
            c.rounds = rng.gen_range(1..=3);
        }
        if knobs.start && rng.gen_bool(0.5) {
            c.start = millis(t.mul_f64(rng.gen_range(0.0..=2.0)));
        }
        if let Some(process) = &c.process {
            if (process.refuses)(&c.config()).is_some() {
                *c = before;
            }
        }
    }
    let servers = scenario.lock_nodes();
    // The lock's shortest timing (Redlock's per-node timeout, a session's
    // heartbeat), which its own waits are measured by.
    let shortest = scenario
        .lock
        .params
        .iter()
        .filter_map(|(_, v)| match v {
            ParamValue::Duration(d) if !d.is_zero() => Some(*d),
            _ => None,
        })
        .min();
    if knobs.slow {
        for client in some_clients(&mut rng, &s) {
            // Slow, not lost: an acquire may take two exchanges (a read, then
            // a conditional write), which must fit in the client's timeout or
            // no attempt ever succeeds, a run that never ends rather than a
            // lock that breaks.
            let timeout = s
                .clients
                .iter()
                .find(|c| c.name == client)
                .map(|c| c.timeout);
            let cap = timeout.into_iter().chain(shortest).min().unwrap_or(t) / 4;
            let max = millis(t.mul_f64(rng.gen_range(0.05..=0.5)).min(cap));
            let max = max.max(Duration::from_millis(2));
            let latency = (millis(max / 2), max);
            for server in &servers {
                link(&mut s, server, &client).latency = Some(latency);
            }
        }
    }
    if knobs.duplicate {
        for client in some_clients(&mut rng, &s) {
            for server in &servers {
                link(&mut s, server, &client).duplicate = Some(1.0 / 3.0);
            }
        }
    }
    s.duration = duration(scenario, &s, t);
    s
}

/// How long `varied` may run: `original`'s duration grown as its workload
/// grew (the longest work and the most rounds against the file's, and its
/// number of clients, times the file's own margin, plus the latest start),
/// and at least twice what the clients need without faults ([`busy`]), for
/// the faults; within 24 h. A process's own keys (how many writes a leader
/// makes) are its own, so the file's duration is the measure of them.
fn duration(original: &Scenario, varied: &Scenario, t: Duration) -> Duration {
    let most = |f: fn(&ClientSpec) -> f64, clients: &[ClientSpec]| {
        clients.iter().map(f).fold(0.0_f64, f64::max).max(1e-9)
    };
    let work = |c: &ClientSpec| c.work.as_secs_f64();
    let rounds = |c: &ClientSpec| c.rounds as f64;
    let growth = (most(work, &varied.clients) / most(work, &original.clients)).max(1.0)
        * (most(rounds, &varied.clients) / most(rounds, &original.clients)).max(1.0)
        * (varied.clients.len() as f64 / original.clients.len() as f64);
    let latest_start = varied
        .clients
        .iter()
        .map(|c| c.start)
        .max()
        .unwrap_or_default();
    let grown = original.duration.mul_f64(growth.min(1e4)) + latest_start;
    grown.max(2 * busy(varied, t)).min(MAX_DURATION)
}

/// One or two of `s`'s clients, by name, in file order.
fn some_clients(rng: &mut ChaCha8Rng, s: &Scenario) -> Vec<String> {
    let n = s.clients.len();
    let first = rng.gen_range(0..n);
    let second = rng.gen_range(0..n);
    let mut picked = vec![first.min(second), first.max(second)];
    picked.dedup();
    if rng.gen_bool(0.5) {
        picked.truncate(1);
    }
    picked
        .into_iter()
        .map(|i| s.clients[i].name.clone())
        .collect()
}

/// The `[[network.links]]` entry from `from` to `to`, added when the file
/// has none.
fn link<'s>(s: &'s mut Scenario, from: &str, to: &str) -> &'s mut LinkSpec {
    let links = &mut s.network.links;
    let at = match links.iter().position(|l| l.from == from && l.to == to) {
        Some(at) => at,
        None => {
            links.push(LinkSpec {
                from: from.to_owned(),
                to: to.to_owned(),
                latency: None,
                loss: None,
                duplicate: None,
            });
            links.len() - 1
        }
    };
    &mut links[at]
}

/// The first `clientN` no node of `s` is called.
fn fresh_name(s: &Scenario) -> String {
    let taken = s.node_names();
    (1..)
        .map(|n| format!("client{n}"))
        .find(|name| !taken.contains(name))
        .expect("a free client name")
}

/// How long the clients of `s` need without faults: the latest start, then
/// every round of every client one after another (each waits for the
/// others), with a lease's worth of waiting for each round and ten seconds
/// to spare. The run may take twice as long, for the faults.
fn busy(s: &Scenario, t: Duration) -> Duration {
    let latest_start = s.clients.iter().map(|c| c.start).max().unwrap_or_default();
    let rounds: Duration = s
        .clients
        .iter()
        .map(|c| (c.work + t + c.retry) * c.rounds.min(1000) as u32)
        .sum();
    latest_start + rounds + Duration::from_secs(10)
}

/// `d` in whole milliseconds, so that a written-out workload reads well.
fn millis(d: Duration) -> Duration {
    Duration::from_millis(d.as_millis() as u64)
}
