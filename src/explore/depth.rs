//! Depth-bounded exploration (`explore --depth D`), after PCT (Burckhardt et
//! al., "A Randomized Scheduler with Probabilistic Guarantees of Finding
//! Bugs", ASPLOS 2010): each seed draws between 1 and D faults; the first
//! keeps its ordinary random trigger, each other one fires right after a
//! *change point*, an event drawn uniformly from the journal of the
//! scenario's own run (its own faults, its own `seed`), as `after =
//! "node:kind:N"` of that event.
//!
//! What it guarantees: never more than D random faults per seed, and every
//! event position of the scenario's own run equally likely as a change
//! point, so a bug that needs at most D faults, each right after a given
//! event, is within reach of every seed. What it does not: PCT's bound
//! (probability ≥ 1/(n·k^(d−1)) for a bug of depth d in n threads and k
//! steps) assumes the schedule is the only choice; here each fault's kind,
//! target and size are drawn too, and a fault shifts the events after it,
//! so the k-th event of a node under faults need not be the one of the
//! undisturbed run. It suits small scenarios, whose journals are short.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use sim::fault::random::Draw;

use super::random::{self, Targets};
use crate::scenario::{FaultSpec, Scenario, Trigger};

/// Mixed into the seed so that the depth stream is unrelated to the random
/// schedule's ("depth!!!" in ASCII).
const DEPTH_SALT: u64 = 0x6465_7074_6821_2121;

/// The most faults `--depth` takes.
pub const MAX_DEPTH: u32 = 16;

/// A depth bound and the change points its faults may fire after.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Depth {
    /// At most this many random faults per seed (1 to [`MAX_DEPTH`]).
    pub d: u32,
    /// Every event of the scenario's own run, as (node, kind, N: its N-th
    /// event of that kind on that node), in journal order.
    pub points: Vec<(String, String, u32)>,
}

impl Depth {
    /// Runs `scenario` with its own faults and seed once, and takes its
    /// journal's events as the change points.
    pub fn new(scenario: &Scenario, d: u32) -> Depth {
        Depth::of_run(&crate::runner::run(scenario, scenario.seed), d)
    }

    /// The change points of `run`, the scenario's own run with its seed.
    pub fn of_run(run: &crate::runner::ScenarioRun, d: u32) -> Depth {
        let mut seen = std::collections::BTreeMap::<(&str, &str), u32>::new();
        let points = run
            .result
            .journal
            .events()
            .iter()
            .map(|e| {
                let n = seen.entry((&e.node, &e.kind)).or_default();
                *n += 1;
                (e.node.to_string(), e.kind.to_string(), *n)
            })
            .collect();
        Depth {
            d: d.clamp(1, MAX_DEPTH),
            points,
        }
    }
}

/// The faults of `seed` for `scenario` under `depth`: 1 to `d` faults, all
/// but the first after a change point.
pub fn schedule(scenario: &Scenario, seed: u64, depth: &Depth) -> Vec<FaultSpec> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ DEPTH_SALT);
    let spec = random::swarm(&mut rng, scenario, &scenario.explore_spec());
    let targets = Targets::new(scenario, &spec);
    let n = rng.u32_in(1, depth.d);
    let mut faults = vec![random::fault(&mut rng, scenario, &spec, &targets)];
    for _ in 1..n {
        let mut f = random::fault(&mut rng, scenario, &spec, &targets);
        if depth.points.is_empty() {
            faults.push(f);
            continue;
        }
        let (node, kind, nth) = &depth.points[rng.index(depth.points.len())];
        f.trigger = Trigger::After {
            node: node.clone(),
            kind: kind.clone(),
            nth: *nth,
            delay: std::time::Duration::ZERO,
        };
        faults.push(f);
    }
    faults
}
