//! Every lock design's client protocol against a network that duplicates
//! and delays every kind of message: client → lock, lock → client,
//! client → storage and storage → client. Leases (10 s) outlive any delay
//! here, so whatever goes wrong is the protocols' doing: a client acting
//! twice on one answer, or handing back the lease it holds. With tokens and
//! a fenced storage every design must stay safe, and the lock must never
//! end a lease its holder has not given up.

use std::fmt::Write as _;

use fencesim::oracle::{Verdict, ViolationKind};
use fencesim::runner::ScenarioRun;
use sim::journal::Event;

use crate::renewal::DESIGNS;
use crate::run;

const CLIENTS: [&str; 3] = ["client1", "client2", "client3"];

/// Three clients, two rounds each, on `design` with `keys` (`renewing`: a
/// 2 s lease, 3 s of work, `renew` and `check_lease`); every link
/// between a client and a lock node or the storage duplicates every
/// message, in both directions, and delays those sent in a window of its
/// own (so later messages overtake earlier ones).
fn noisy(design: &str, keys: &str, seed: u64, renewing: bool) -> String {
    let locks: Vec<String> = if design == "redlock" {
        (1..=3).map(|i| format!("lock{i}")).collect()
    } else {
        vec!["lock".into()]
    };
    let mut text = format!(
        r#"
name = "noisy-{design}"
description = "Duplicated and delayed messages on every link; {design} with tokens and fenced storage."
seed = {seed}
duration = "2m"
[lock]
design = "{design}"
ttl = "{ttl}"
{keys}
{nodes}
[storage]
design = "fenced"
[network]
latency = ["1ms", "30ms"]
"#,
        // Redlock's request timeout covers a round trip of delayed messages
        // (2 × (30 ms + 150 ms)), else its extensions time out: lost.
        nodes = if design == "redlock" {
            "nodes = 3\ntimeout = \"400ms\""
        } else {
            ""
        },
        ttl = if renewing { "2s" } else { "10s" },
    );
    let variant = if renewing {
        "work = \"3s\"\nrenew = true\ncheck_lease = true\n"
    } else {
        ""
    };
    for (i, client) in CLIENTS.iter().enumerate() {
        let start = i * 300;
        write!(
            text,
            "[[clients]]\nname = \"{client}\"\nstart = \"{start}ms\"\nrounds = 2\nretry = \"200ms\"\n{variant}"
        )
        .unwrap();
    }
    let mut window = 0;
    for client in CLIENTS {
        let peers = locks.iter().map(String::as_str).chain(["storage"]);
        for peer in peers {
            for (from, to) in [(client, peer), (peer, client)] {
                write!(
                    text,
                    "[[faults]]\nkind = \"duplicate\"\nfrom = \"{from}\"\nto = \"{to}\"\nat = \"0s\"\nduration = \"2m\"\n"
                )
                .unwrap();
                let at = 100 * (window % 13);
                window += 1;
                write!(
                    text,
                    "[[faults]]\nkind = \"delay\"\nfrom = \"{from}\"\nto = \"{to}\"\nextra = \"150ms\"\nat = \"{at}ms\"\nduration = \"700ms\"\n"
                )
                .unwrap();
            }
        }
    }
    text
}

fn events(run: &ScenarioRun) -> &[Event] {
    run.result.journal.events()
}

/// The lock never ends a lease (releases or expires it) before its holder
/// has given it up: a lease ended under a working client is the client's
/// doing here, as no lease can run out.
#[track_caller]
fn assert_no_lease_taken_from_its_holder(design: &str, run: &ScenarioRun) {
    let events = events(run);
    for (i, end) in events.iter().enumerate() {
        let ends =
            end.node.starts_with("lock") && (end.kind == "released" || end.kind == "expired");
        if !ends {
            continue;
        }
        let (client, lease) = (end.str("client").unwrap(), end.u64("lease").unwrap());
        let acquired = events[..i]
            .iter()
            .any(|e| e.is(client, "acquired") && e.u64("lease") == Some(lease));
        if !acquired {
            // A grant the client never took (handed back at once).
            continue;
        }
        let given_up = events[..i]
            .iter()
            .any(|e| (e.is(client, "released")) && e.u64("lease") == Some(lease));
        assert!(
            given_up,
            "{design}: {} ended {client}'s lease {lease} (seq {}) before {client} released it\n{}",
            end.node,
            end.seq,
            run.result.journal.to_jsonl()
        );
    }
}

/// Every zombie write is a second delivery of a write the storage had
/// already accepted (the network's duplicate), never a write the client
/// sent after its lease had been taken from it.
#[track_caller]
fn assert_zombies_are_redeliveries(design: &str, run: &ScenarioRun) {
    let events = events(run);
    for v in &run.report.violations {
        if v.kind != ViolationKind::ZombieWrite {
            continue;
        }
        let at = events.iter().position(|e| e.seq == v.seq).unwrap();
        let write = events[at].str("write").unwrap();
        let before = events[..at]
            .iter()
            .any(|e| e.is("storage", "accepted") && e.str("write") == Some(write));
        assert!(before, "{design}: {v}");
    }
}

/// Runs the noisy scenarios of `design` (plain and renewing) with seeds 1
/// to 3 and checks them.
fn assert_safe_when_noisy(design: &str) {
    let (_, keys) = DESIGNS.iter().find(|(d, _)| *d == design).unwrap();
    let keys = if keys.is_empty() {
        "tokens = true"
    } else {
        keys
    };
    for (seed, renewing) in (1..=3).flat_map(|seed| [(seed, false), (seed, true)]) {
        let run = run(&noisy(design, keys, seed, renewing));
        let r = &run.report;
        let what = format!("{design} seed {seed} renewing {renewing}");
        assert_eq!(run.result.outcome, sim::Outcome::Completed, "{what}");
        assert_eq!(r.verdict, Verdict::Safe, "{what}: {:#?}", r.violations);
        assert_eq!(r.stale_writes, 0, "{what}");
        assert_eq!(r.token_regressions, 0, "{what}");
        assert_no_lease_taken_from_its_holder(&what, &run);
        assert_zombies_are_redeliveries(&what, &run);
        // The faults did hit every kind of message.
        let duplicated = |from: &str, to: &str| {
            events(&run).iter().any(|e| {
                e.kind == "duplicate"
                    && e.node.starts_with(from)
                    && e.str("to").is_some_and(|t| t.starts_with(to))
            })
        };
        for (from, to) in [
            ("client", "lock"),
            ("lock", "client"),
            ("client", "storage"),
            ("storage", "client"),
        ] {
            assert!(duplicated(from, to), "{what}: no {from} → {to} duplicate");
        }
        // Every client got the lock and wrote, both rounds; renewing, it
        // kept its lease alive (neither lost nor lapsed, or it would not
        // have written).
        for client in CLIENTS {
            let count = |kind| events(&run).iter().filter(|e| e.is(client, kind)).count();
            assert_eq!(
                count("wrote"),
                2,
                "{what}: {client} wrote {} times",
                count("wrote")
            );
            if renewing {
                assert!(count("renewed") >= 2, "{what}: {client} renewed too little");
            }
        }
    }
}

#[test]
fn lease_is_safe_when_messages_are_duplicated_and_delayed() {
    assert_safe_when_noisy("lease");
}

#[test]
fn redis_is_safe_when_messages_are_duplicated_and_delayed() {
    assert_safe_when_noisy("redis");
}

#[test]
fn redlock_is_safe_when_messages_are_duplicated_and_delayed() {
    assert_safe_when_noisy("redlock");
}

#[test]
fn etcd_is_safe_when_messages_are_duplicated_and_delayed() {
    assert_safe_when_noisy("etcd");
}

#[test]
fn zookeeper_is_safe_when_messages_are_duplicated_and_delayed() {
    assert_safe_when_noisy("zookeeper");
}

#[test]
fn chubby_is_safe_when_messages_are_duplicated_and_delayed() {
    assert_safe_when_noisy("chubby");
}

#[test]
fn hazelcast_is_safe_when_messages_are_duplicated_and_delayed() {
    assert_safe_when_noisy("hazelcast");
}
