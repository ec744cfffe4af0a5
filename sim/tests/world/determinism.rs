//! The same world and seed give the same journal, byte for byte; the seed is
//! what varies a run.

use sim::fault::{Duplicate, Fault, Pause, Scope};
use sim::{run, LinkConfig, NetConfig, RunResult, WorldBuilder};

use crate::actors::{Echo, Msg, Pinger};
use crate::{at, limits, ms};

/// Two pingers and an echo on a network with random latency, loss and
/// duplication, plus a pause and a duplicate fault: enough randomness and
/// interleaving for a nondeterminism to show.
fn busy_world(seed: u64) -> RunResult {
    run(seed, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(5_000)));
        let times: Vec<_> = (1..=20).map(|i| ms(i * 37)).collect();
        w.node("a", Pinger::new("echo", &times));
        w.node("b", Pinger::new("echo", &times));
        w.node("echo", Echo);
        w.network(NetConfig {
            default: LinkConfig {
                latency_min: ms(1),
                latency_max: ms(50),
                loss: 0.1,
                duplicate: 0.1,
            },
            links: Vec::new(),
        });
        w.fault(at(
            ms(200),
            Fault::Pause(Pause {
                node: "echo".into(),
                duration: ms(100),
            }),
        ));
        w.fault(at(
            ms(400),
            Fault::Duplicate(Duplicate {
                from: "a".into(),
                to: "echo".into(),
                scope: Scope::Count(2),
            }),
        ));
        w
    })
}

#[test]
fn the_same_seed_gives_the_same_journal() {
    let first = busy_world(42);
    let second = busy_world(42);
    assert!(first.journal.len() > 50, "the world did too little to tell");
    assert_eq!(first.outcome, second.outcome);
    assert_eq!(first.journal.to_jsonl(), second.journal.to_jsonl());
    assert_eq!(first.journal.hash(), second.journal.hash());
    assert_eq!(first.sim_time, second.sim_time);
}

#[test]
fn different_seeds_give_different_journals() {
    let mut hashes: Vec<String> = (0..10)
        .map(|seed| busy_world(seed).journal.hash())
        .collect();
    hashes.sort();
    hashes.dedup();
    assert!(
        hashes.len() >= 8,
        "only {} distinct journals out of 10 seeds",
        hashes.len()
    );
}
