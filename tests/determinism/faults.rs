//! Determinism under every kind of fault and every random draw the network
//! makes (loss, duplication), where an unordered map or an OS clock would
//! show first. The bundled scenarios may not yet cover them all.

use std::collections::BTreeSet;

use fencesim::runner;

use crate::{assert_same, load_text, trace};

const EVERY_FAULT: &str = r#"
name = "every-fault"
description = "One of each fault kind, plus a lossy, duplicating network."
seed = 1
duration = "2m"

[lock]
design = "lease"
ttl = "3s"
first_token = 10

[storage]
design = "fenced"

[network]
latency = ["1ms", "20ms"]
loss = 0.05
duplicate = 0.05

[[clients]]
name = "client1"
rounds = 3
work = "200ms"

[[clients]]
name = "client2"
start = "100ms"
rounds = 3
work = "200ms"
workload = "increment"

[[clients]]
name = "client3"
start = "200ms"
rounds = 3
work = "200ms"

[[faults]]
kind = "pause"
node = "client1"
after = "client1:acquired"
duration = "4s"

[[faults]]
kind = "clock"
node = "client2"
rate = 1.5
at = "1s"

[[faults]]
kind = "clock"
node = "lock"
jump = "+2s"
after = "lock:granted:2"

[[faults]]
kind = "delay"
from = "client3"
to = "storage"
extra = "5s"
after = "client3:wrote"

[[faults]]
kind = "drop"
from = "lock"
to = "client2"
count = 1
at = "2s"

[[faults]]
kind = "duplicate"
from = "client1"
to = "storage"
duration = "10s"
at = "0s"

[[faults]]
kind = "partition"
groups = [["client3"], ["lock", "storage"]]
duration = "3s"
at = "6s"

[[faults]]
kind = "crash"
node = "lock"
after = "lock:granted:4"
restart_after = "1s"
"#;

#[test]
fn every_fault_kind_replays_byte_for_byte() {
    let scenario = load_text("every-fault.toml", EVERY_FAULT);
    for seed in 1..=5 {
        let first = trace(&scenario, seed);
        let second = trace(&scenario, seed);
        assert_same(&format!("every-fault seed {seed}"), &first, &second);
    }
}

#[test]
fn every_fault_kind_fires() {
    // Guards the test above: a fault that never triggers proves nothing.
    let scenario = load_text("every-fault.toml", EVERY_FAULT);
    let run = runner::run(&scenario, 1);
    let kinds: BTreeSet<&str> = run
        .result
        .journal
        .events()
        .iter()
        .map(|e| e.kind.as_str())
        .collect();
    for kind in [
        "pause",
        "clock",
        "drop",
        "duplicate",
        "partition",
        "heal",
        "crash",
        "restart",
    ] {
        assert!(kinds.contains(kind), "no `{kind}` event in {kinds:?}");
    }
}
