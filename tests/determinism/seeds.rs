//! Seeds matter: where latencies are drawn from a wide range, different seeds
//! give different traces, so a seed sweep explores rather than repeats.

use std::collections::BTreeSet;

use crate::{load_text, trace};

/// Three clients, each taking the lock twice, over links whose latency is
/// anywhere between 1 ms and 50 ms: the order in which their requests reach
/// the lock depends on the draws.
const CONTENDED: &str = r#"
name = "contended-wide-latency"
description = "Three clients contend for one lease over slow, jittery links."
seed = 1
duration = "2m"

[lock]
design = "lease"
ttl = "2s"

[storage]
design = "fenced"

[network]
latency = ["1ms", "50ms"]

[[clients]]
name = "client1"
rounds = 2
work = "100ms"

[[clients]]
name = "client2"
rounds = 2
work = "100ms"

[[clients]]
name = "client3"
rounds = 2
work = "100ms"
"#;

#[test]
fn different_seeds_give_different_traces() {
    let scenario = load_text("contended.toml", CONTENDED);
    let hashes: BTreeSet<String> = (1..=10).map(|seed| trace(&scenario, seed).hash).collect();
    assert!(
        hashes.len() >= 8,
        "10 seeds gave only {} distinct traces: {hashes:?}",
        hashes.len()
    );
}

#[test]
fn the_same_seed_gives_the_same_trace_however_often() {
    let scenario = load_text("contended.toml", CONTENDED);
    let first = trace(&scenario, 42);
    for _ in 0..3 {
        crate::assert_same("contended seed 42", &first, &trace(&scenario, 42));
    }
}
