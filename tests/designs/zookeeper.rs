//! ZooKeeper session expiry during a pause (Kleppmann 2016, the HBase
//! GC-pause incidents, Curator's notes on lost connections).

use fencesim::oracle::Verdict;

use crate::{counts, kinds, run_as_expected, token};

/// client1 holds the lock and is paused for 15 s, past the 10 s session
/// timeout, in the middle of its work; client2, queued behind it since 2 s,
/// is granted when client1's session expires and writes; client1 wakes and
/// writes with its old zxid (its work timer fires first, before its next
/// heartbeat could tell it the session is gone).
fn pause(storage: &str, verdict: &str) -> String {
    format!(
        r#"
name = "zookeeper-session-expiry-{storage}"
description = "ZooKeeper: the holder is paused past its session timeout; its znode goes with its session and the next waiter is granted."
seed = 7
duration = "2m"

[lock]
design = "zookeeper"
ttl = "10s"

[storage]
design = "{storage}"

[[clients]]
name = "client1"

[[clients]]
name = "client2"
start = "2s"
timeout = "30s"

[[faults]]
kind = "pause"
node = "client1"
after = "client1:acquired"
delay = "500ms"
duration = "15s"

[expect]
verdict = "{verdict}"
"#
    )
}

#[test]
fn a_session_lost_in_a_pause_is_fenced_off_by_its_zxid() {
    let r = run_as_expected("zookeeper-fenced", &pause("fenced", "safe"));
    assert_eq!(counts(&r.report), (Verdict::Safe, 0, 0, 1, 1));
    // The lock: client1's grant, its expiry with the session, client2's grant.
    let lock: Vec<_> = kinds(&r, "lock")
        .into_iter()
        .filter(|k| ["granted", "expired", "released"].contains(k))
        .collect();
    assert_eq!(lock, ["granted", "expired", "granted", "released"]);
    // client2's znode was created after client1's: its zxid is higher.
    let (t1, t2) = (
        token(&r, "client1", "acquired", 0).unwrap(),
        token(&r, "client2", "acquired", 0).unwrap(),
    );
    assert!(t1 < t2, "{t1} < {t2}");
    assert_eq!(token(&r, "storage", "rejected", 0), Some(t1));
}

#[test]
fn a_session_lost_in_a_pause_writes_stale_data_to_unchecked_storage() {
    let r = run_as_expected("zookeeper-unchecked", &pause("unchecked", "violation"));
    assert_eq!(counts(&r.report), (Verdict::Violation, 1, 0, 2, 0));
}

#[test]
fn a_holder_told_of_its_expiry_before_writing_reports_lost_and_writes_nothing() {
    // Paused for 12 s but with 5 s of work left: the heartbeat due before
    // the work ends is answered "session expired" first.
    let text = pause("fenced", "safe")
        .replace("duration = \"15s\"", "duration = \"12s\"")
        .replace(
            "name = \"client1\"\n",
            "name = \"client1\"\nwork = \"20s\"\n",
        );
    let r = run_as_expected("zookeeper-lost", &text);
    assert!(kinds(&r, "client1").contains(&"lost"));
    assert_eq!(counts(&r.report), (Verdict::Safe, 0, 0, 1, 0));
}
