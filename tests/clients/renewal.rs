//! Renewal with every lock design that can renew: a 3 s critical section
//! under a 2 s lease, with `renew` and `check_lease`. The client keeps the
//! lock alive, journals each extension as `renewed` (its belief of its
//! lease end moves), passes its check and writes; the lock journals the
//! same extensions; client2, waiting meanwhile, gets the lock only after.

use fencesim::oracle::Verdict;
use fencesim::runner::ScenarioRun;

use crate::{count, run};

/// The designs that renew, with the keys that give them fencing tokens.
pub(crate) const DESIGNS: [(&str, &str); 7] = [
    ("lease", ""),
    ("redis", "tokens = true"),
    ("redlock", "tokens = true"),
    ("etcd", ""),
    ("zookeeper", ""),
    ("chubby", ""),
    ("hazelcast", ""),
];

fn renewing(design: &str, keys: &str) -> String {
    format!(
        r#"
name = "renew-{design}"
description = "client1 works 3 s under a 2 s lease and renews it meanwhile."
[lock]
design = "{design}"
ttl = "2s"
{keys}
[storage]
design = "fenced"
[[clients]]
name = "client1"
work = "3s"
renew = true
check_lease = true
[[clients]]
name = "client2"
start = "1s"
[expect]
verdict = "safe"
accepted_writes = 2
"#
    )
}

/// The events of `kind` at the lock node(s) (`lock`, or `lock1` …).
fn at_lock(run: &ScenarioRun, kind: &str) -> usize {
    let events = run.result.journal.events();
    events
        .iter()
        .filter(|e| e.node.starts_with("lock") && e.kind == kind)
        .count()
}

/// Runs the renewal scenario of `design` and checks it.
fn assert_renews(design: &str) {
    let (_, keys) = DESIGNS.iter().find(|(d, _)| *d == design).unwrap();
    let run = run(&renewing(design, keys));
    let journal = || run.result.journal.to_jsonl();
    // 3 s of work under a 2 s lease: renewed at about 1 s and 2 s.
    assert!(
        count(&run, "client1", "renewed") >= 2,
        "{design}\n{}",
        journal()
    );
    assert_eq!(
        count(&run, "client1", "lapsed"),
        0,
        "{design}\n{}",
        journal()
    );
    assert_eq!(count(&run, "client1", "lost"), 0, "{design}\n{}", journal());
    assert_eq!(count(&run, "client1", "checked"), 1, "{design}");
    assert_eq!(count(&run, "client1", "wrote"), 1, "{design}");
    // The storage took client1's write, and the lock never let go of
    // client1's lease meanwhile.
    let events = run.result.journal.events();
    let accepted = events
        .iter()
        .any(|e| e.is("storage", "accepted") && e.str("write") == Some("client1/1"));
    assert!(accepted, "{design}\n{}", journal());
    assert!(at_lock(&run, "renewed") >= 2, "{design}\n{}", journal());
    assert_eq!(at_lock(&run, "expired"), 0, "{design}\n{}", journal());
    assert_eq!(run.report.overlapping_leases, 0, "{design}");
    assert_eq!(run.report.verdict, Verdict::Safe, "{design}");
    assert!(run.expectations_met, "{design}: {:#?}", run.expectations);
    // Each renewal moves the client's belief by what the lock granted,
    // counted from when it asked; redlock believes ttl − drift
    // (2 s × 0.01 + 2 ms).
    let want_ms = if design == "redlock" { 1978 } else { 2000 };
    for e in events.iter().filter(|e| e.is("client1", "renewed")) {
        assert_eq!(e.u64("ttl_ms"), Some(want_ms), "{design}");
    }
}

#[test]
fn lease_renews_through_a_critical_section_longer_than_its_ttl() {
    assert_renews("lease");
}

#[test]
fn redis_renews_through_a_critical_section_longer_than_its_ttl() {
    assert_renews("redis");
}

#[test]
fn redlock_renews_through_a_critical_section_longer_than_its_ttl() {
    assert_renews("redlock");
}

#[test]
fn etcd_renews_through_a_critical_section_longer_than_its_ttl() {
    assert_renews("etcd");
}

#[test]
fn zookeeper_renews_through_a_critical_section_longer_than_its_ttl() {
    assert_renews("zookeeper");
}

#[test]
fn chubby_renews_through_a_critical_section_longer_than_its_ttl() {
    assert_renews("chubby");
}

#[test]
fn hazelcast_renews_through_a_critical_section_longer_than_its_ttl() {
    assert_renews("hazelcast");
}
