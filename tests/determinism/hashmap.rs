//! A process whose journal follows a std `HashMap`'s iteration order gives
//! the same trace alone and in a sweep: madsim seeds the hasher keys once
//! per OS thread and std advances them with every map made there, so a
//! seed run after others on one thread would see another order. Every seed
//! runs on a fresh thread, wherever it runs.

use std::collections::{BTreeMap, HashMap};

use fencesim::design::catalog::Registry;
use fencesim::explore::shard::Shard;
use fencesim::explore::sweep::{self, FaultMode, Runs, SweepEvent, SweepOptions};
use fencesim::scenario::Scenario;

/// figure-9-6-async with client1 journaling the order of a `HashMap`'s
/// keys (one event per key) before it does nothing more.
fn scenario() -> Scenario {
    let mut registry = Registry::builtin();
    registry.add_process("hash-order", "journals a HashMap's order", |_, _| {
        fencesim::process::Process::new(|_h| async move {
            let map: HashMap<String, u64> = (0..16).map(|i| (format!("key{i}"), i)).collect();
            for (key, value) in &map {
                fencesim::sim::emit!("visited", key = key.as_str(), value = *value);
            }
        })
    });
    let text = std::fs::read_to_string(format!(
        "{}/scenarios/figure-9-6-async.toml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
    .replace(
        "name = \"client1\"\nprocess = \"rounds\"",
        "name = \"client1\"\nprocess = \"hash-order\"",
    );
    assert!(text.contains("hash-order"), "client1 runs `rounds`");
    fencesim::scenario::load_str(&registry, "hash-order.toml", &text).unwrap()
}

const SEEDS: u64 = 24;

#[test]
fn a_hashmap_s_order_is_the_same_alone_and_in_sweeps_of_one_and_two_jobs() {
    let s = scenario();
    let alone: BTreeMap<u64, String> = (0..SEEDS)
        .map(|seed| {
            let (run, _) = sweep::run_seed(&s, seed, FaultMode::Random);
            (seed, run.trace_hash())
        })
        .collect();
    // The order is the run's: seeds differ in it (else this tests nothing).
    let first = sweep::run_seed(&s, 0, FaultMode::Random).0;
    let order = |run: &fencesim::runner::ScenarioRun| -> Vec<String> {
        let visited = run.result.journal.events().iter();
        let visited = visited.filter(|e| e.kind == "visited");
        visited.map(|e| e.str("key").unwrap().to_owned()).collect()
    };
    assert_eq!(order(&first).len(), 16, "client1 visits every key");
    let orders: std::collections::BTreeSet<Vec<String>> = (0..SEEDS)
        .map(|seed| order(&sweep::run_seed(&s, seed, FaultMode::Random).0))
        .collect();
    assert!(orders.len() > 1, "the order depends on the seed");
    for jobs in [1, 2] {
        let options = SweepOptions {
            seeds: 0..SEEDS,
            jobs,
            shard: Shard::WHOLE,
            faults: FaultMode::Random,
        };
        let runs = Runs {
            trace_hashes: true,
            ..Runs::default()
        };
        let mut swept = BTreeMap::new();
        sweep::sweep_streaming(&s, &options, &runs, &[], &|| false, &mut |e| {
            if let SweepEvent::Seed(r) = e {
                swept.insert(r.seed, r.trace_hash.clone());
                assert!(r.nondeterministic.is_none(), "seed {} replays", r.seed);
            }
        });
        for (seed, hash) in &alone {
            assert_eq!(Some(hash), swept.get(seed), "seed {seed}, --jobs {jobs}");
        }
    }
}
