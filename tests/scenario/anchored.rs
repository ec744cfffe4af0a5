//! Faults anchored where locks break: a hold of every message to a node,
//! partitions of any two groups and one-way cuts, each fired by a lock or
//! storage event, read, run and written back.

use fencesim::scenario::{to_toml, Fault};
use fencesim::{runner, scenario::load_str};

use crate::{assert_error, load, BASE};

/// etcd issue 11456 told with a hold: every message to client1 in the
/// second after the lock grants is held 6 s, so the grant arrives after its
/// 2 s lease; a one-way cut and a two-group partition fire after storage
/// events.
const HELD_GRANT: &str = r#"name = "held-grant"
[lock]
design = "etcd"
ttl = "2s"
[storage]
design = "unchecked"
[[clients]]
name = "client1"
work = "100ms"
timeout = "20s"
[[clients]]
name = "client2"
start = "500ms"
timeout = "20s"
[[clients]]
name = "client3"
start = "30s"

[[faults]]
kind = "delay"
to = "client1"
extra = "6s"
duration = "1s"
after = "lock:granted"

[[faults]]
kind = "partition"
groups = [["client1"], ["storage"]]
one_way = true
duration = "1s"
after = "storage:accepted"

[[faults]]
kind = "partition"
groups = [["client2", "lock"], ["client3", "storage"]]
duration = "2s"
after = "storage:accepted:2"
"#;

#[test]
fn a_hold_of_every_message_to_a_node_delivers_a_grant_after_its_lease() {
    let s = load(HELD_GRANT).unwrap();
    let Fault::Delay(hold) = &s.faults[0].fault else {
        panic!("{:?}", s.faults[0])
    };
    assert_eq!(hold.from, None);
    let run = runner::run(&s, 1);
    for f in &run.faults {
        assert!(
            f.fired_at.is_some(),
            "{} ({}) never fired",
            f.kind,
            f.trigger
        );
    }
    // The hold's link event names every sender.
    let link = run
        .result
        .journal
        .events()
        .iter()
        .find(|e| e.kind == "link");
    let link = link.expect("the hold is journaled");
    assert_eq!(link.node, "client1");
    assert_eq!(link.str("from"), Some("*"));
    // The mechanism of etcd 11456: a grant that arrives expired, and its
    // late write accepted after the newer holder's.
    assert_eq!(run.milestones.grant_arrived_expired, 1);
    assert_eq!(run.report.stale_writes, 1);
}

#[test]
fn holds_and_any_partition_round_trip_through_the_writer() {
    let s = load(HELD_GRANT).unwrap();
    let text = to_toml(&s);
    assert!(text.contains("kind = \"delay\"\nto = \"client1\"\nextra = \"6s\""));
    let again = load_str(
        &fencesim::design::catalog::Registry::builtin(),
        "t.toml",
        &text,
    )
    .unwrap();
    let faults = |s: &fencesim::scenario::Scenario| -> Vec<_> {
        s.faults
            .iter()
            .map(|f| (f.fault.clone(), f.trigger.clone()))
            .collect()
    };
    assert_eq!(faults(&again), faults(&s));
}

#[test]
fn a_hold_names_a_known_node() {
    let text = format!(
        "{BASE}[[faults]]\nkind = \"delay\"\nto = \"client9\"\nextra = \"1s\"\nat = \"1s\"\n"
    );
    assert_error(&text, "t.toml:12:6", "unknown node `client9`");
    let text = format!(
        "{BASE}[[faults]]\nkind = \"delay\"\nfrom = \"client1\"\nextra = \"1s\"\nat = \"1s\"\n"
    );
    assert_error(&text, "t.toml:10:1", "missing required key `to`");
}
