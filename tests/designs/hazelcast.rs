//! Hazelcast FencedLock: a CP session lost in a pause.

use fencesim::oracle::Verdict;

use crate::{counts, kinds, run_as_expected, token};

/// client1 holds the lock and is paused 15 s, past its 10 s CP session TTL;
/// client2 gets the lock with a higher fence and writes; client1 wakes and
/// writes with its old fence before any lock call tells it the lock is gone.
fn pause(storage: &str, verdict: &str) -> String {
    format!(
        r#"
name = "hazelcast-session-lost-{storage}"
description = "Hazelcast FencedLock: the owner's CP session is lost in a pause; its write carries the old fence."
seed = 5
duration = "2m"

[lock]
design = "hazelcast"
ttl = "10s"

[storage]
design = "{storage}"

[[clients]]
name = "client1"

[[clients]]
name = "client2"
start = "12s"

[[faults]]
kind = "pause"
node = "client1"
after = "client1:acquired"
duration = "15s"

[expect]
verdict = "{verdict}"
"#
    )
}

#[test]
fn a_cp_session_lost_in_a_pause_is_fenced_off_by_its_fence() {
    let r = run_as_expected("hazelcast-fenced", &pause("fenced", "safe"));
    assert_eq!(counts(&r.report), (Verdict::Safe, 0, 0, 1, 1));
    assert_eq!(token(&r, "client1", "acquired", 0), Some(1));
    assert_eq!(token(&r, "client2", "acquired", 0), Some(2));
    assert_eq!(token(&r, "storage", "rejected", 0), Some(1));
    // The owner hears of the loss only when its release fails, after writing.
    let client1 = kinds(&r, "client1");
    assert!(!client1.contains(&"lost"), "{client1:?}");
    let lock_lost = r
        .result
        .journal
        .events()
        .iter()
        .any(|e| e.node == "lock" && e.str("msg").is_some_and(|m| m.starts_with("lock lost")));
    assert!(lock_lost, "the release is answered with lock lost");
}

#[test]
fn a_cp_session_lost_in_a_pause_writes_stale_data_to_unchecked_storage() {
    let r = run_as_expected("hazelcast-unchecked", &pause("unchecked", "violation"));
    assert_eq!(counts(&r.report), (Verdict::Violation, 1, 0, 2, 0));
}
