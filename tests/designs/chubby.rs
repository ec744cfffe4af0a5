//! Chubby (Burrows, OSDI 2006, §2.4): a delayed request from a holder whose
//! session was lost, without and with lock-delay, and with sequencers.

use fencesim::oracle::Verdict;

use crate::{counts, kinds, run_as_expected, token};

/// client1 acquires and writes; the write is held 15 s in the network and
/// client1 is paused right after sending it, so its session (10 s) is lost.
/// client2 asks for the lock from 12 s on.
fn delayed_write(lock: &str, storage: &str, verdict: &str) -> String {
    format!(
        r#"
name = "chubby-delayed-write"
description = "Chubby: the old holder's write, sent before its session was lost, is delayed in the network."
seed = 3
duration = "2m"

[lock]
design = "chubby"
ttl = "10s"
{lock}

[storage]
design = "{storage}"

[[clients]]
name = "client1"

[[clients]]
name = "client2"
start = "12s"

[[faults]]
kind = "delay"
from = "client1"
to = "storage"
extra = "15s"
after = "client1:wrote"

# 1 ms after: the write has left, then the process stalls (its session
# expires meanwhile).
[[faults]]
kind = "pause"
node = "client1"
after = "client1:wrote"
delay = "1ms"
duration = "30s"

[expect]
verdict = "{verdict}"
"#
    )
}

#[test]
fn without_lock_delay_the_old_holders_delayed_write_lands_after_the_next_holders() {
    let r = run_as_expected(
        "chubby-no-delay",
        &delayed_write("tokens = false", "unchecked", "violation"),
    );
    assert_eq!(counts(&r.report), (Verdict::Violation, 1, 0, 2, 0));
    // client2 got the lock as soon as it asked.
    assert!(!kinds(&r, "client2").contains(&"denied"));
}

#[test]
fn a_lock_delay_longer_than_the_delay_lets_the_old_write_land_first() {
    let r = run_as_expected(
        "chubby-lock-delay",
        &delayed_write("tokens = false\nlock_delay = \"20s\"", "unchecked", "safe"),
    );
    // The old write lands at ~16 s, after its session was lost, while nobody
    // holds the lock (a late write, neither stale nor zombie); client2 is
    // denied until the lock-delay ends at ~30 s.
    assert_eq!(counts(&r.report), (Verdict::Safe, 0, 0, 2, 0));
    assert_eq!(r.report.late_writes, 1);
    assert!(kinds(&r, "client2").contains(&"denied"));
    let storage = kinds(&r, "storage");
    assert_eq!(
        storage.iter().filter(|k| **k == "accepted").count(),
        2,
        "{storage:?}"
    );
}

#[test]
fn with_sequencers_fenced_storage_rejects_the_old_write() {
    let r = run_as_expected("chubby-sequencer", &delayed_write("", "fenced", "safe"));
    assert_eq!(counts(&r.report), (Verdict::Safe, 0, 0, 1, 1));
    // Generation numbers: 1 for client1, 2 for client2.
    assert_eq!(token(&r, "client1", "acquired", 0), Some(1));
    assert_eq!(token(&r, "client2", "acquired", 0), Some(2));
    assert_eq!(token(&r, "storage", "rejected", 0), Some(1));
}
