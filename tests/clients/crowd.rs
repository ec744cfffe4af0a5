//! Many clients on one lock. Where the design queues (ZooKeeper's
//! sequential znodes, etcd's keys by revision) a waiter keeps its place and
//! is woken by the server in its turn, asking about its request again only
//! after `timeout`, then twice that, …; where it polls (`redis`' `SET NX`)
//! a waiter asks again every `retry`. And a thousand clients load, run to a
//! judged verdict and give the same trace twice.

use std::fmt::Write as _;

use fencesim::oracle::Verdict;
use fencesim::report::step::steps;
use fencesim::report::{lanes, LanesOptions};
use fencesim::runner::ScenarioRun;
use sim::Outcome;

use crate::run;

/// `n` clients on `design` with fenced storage, client `i` starting at
/// `i × 10ms`, each working `work` once with the default 5 s timeout and
/// 500 ms retry.
fn crowd(design: &str, n: usize, work: &str) -> String {
    let mut text = format!(
        "name = \"crowd-{design}-{n}\"\nduration = \"1h\"\nmax_events = 1000000\n\
         [lock]\ndesign = \"{design}\"\n[storage]\ndesign = \"fenced\"\n"
    );
    for i in 1..=n {
        let start = (i - 1) * 10;
        write!(
            text,
            "[[clients]]\nname = \"client{i}\"\nstart = \"{start}ms\"\nwork = \"{work}\"\n"
        )
        .unwrap();
    }
    text
}

/// How many acquire requests `client` sent to the lock.
fn acquire_requests(run: &ScenarioRun, client: &str) -> usize {
    let events = run.result.journal.events();
    events
        .iter()
        .filter(|e| e.node == client && e.kind == sim::events::SEND)
        .filter(|e| e.str("msg").is_some_and(|m| m.starts_with("acquire ")))
        .count()
}

/// The clients in the order their first acquire request reached the lock:
/// the order of the queue.
fn arrival_order(run: &ScenarioRun) -> Vec<String> {
    let events = run.result.journal.events();
    let mut order: Vec<String> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for e in events {
        let acquire = e.str("msg").is_some_and(|m| m.starts_with("acquire "));
        if e.node == "lock" && e.kind == sim::events::DELIVER && acquire {
            let from = e.str("from").expect("a delivery names its sender");
            if seen.insert(from.to_owned()) {
                order.push(from.to_owned());
            }
        }
    }
    order
}

/// The clients in the order they acquired.
fn acquired_order(run: &ScenarioRun) -> Vec<String> {
    let events = run.result.journal.events();
    events
        .iter()
        .filter(|e| e.kind == "acquired")
        .map(|e| e.node.to_string())
        .collect()
}

fn clients(n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("client{i}")).collect()
}

#[test]
fn queued_waiters_keep_their_place_and_are_woken_in_order() {
    // Eight clients holding the lock 2 s each: the last waits about 14 s,
    // nearly three times its 5 s timeout. A waiter asks about its request
    // again at 5 s, then not before 15 s: at most twice in all.
    for design in ["zookeeper", "etcd"] {
        let run = run(&crowd(design, 8, "2s"));
        assert_eq!(run.result.outcome, Outcome::Completed, "{design}");
        assert_eq!(run.report.verdict, Verdict::Safe, "{design}");
        assert_eq!(run.report.accepted_writes, 8, "{design}");
        assert_eq!(arrival_order(&run), clients(8), "{design}");
        assert_eq!(acquired_order(&run), clients(8), "{design}: queue order");
        for (i, client) in clients(8).iter().enumerate() {
            let asked = acquire_requests(&run, client);
            let most = if i < 2 { 1 } else { 2 };
            assert!(
                (1..=most).contains(&asked),
                "{design}: {client} asked {asked}"
            );
        }
        let events = run.result.journal.events();
        let releases = events
            .iter()
            .filter(|e| e.kind == sim::events::SEND)
            .filter(|e| e.str("msg").is_some_and(|m| m.starts_with("release ")))
            .count();
        // One release per round: no waiter gave up its place in the queue.
        assert_eq!(releases, 8, "{design}");
    }
}

#[test]
fn lock_requests_grow_with_the_waiters_where_the_design_queues_and_with_the_wait_where_it_polls() {
    let requests = |design: &str, n: usize| {
        let run = run(&crowd(design, n, "1s"));
        assert_eq!(run.report.accepted_writes, n as u64, "{design} {n}");
        clients(n)
            .iter()
            .map(|c| acquire_requests(&run, c))
            .sum::<usize>()
    };
    // Queued: one request per waiter, and one recheck each after 5 s and
    // 15 s of waiting: waits of up to 15 s cost at most three.
    assert_eq!(requests("zookeeper", 4), 4);
    for design in ["zookeeper", "etcd"] {
        let asked = requests(design, 16);
        assert!((16..=16 + 12).contains(&asked), "{design}: {asked}");
    }
    // Polled: client i asks about every 500 ms for the (i − 1) s it waits,
    // so 16 clients ask far more than 16 times, and four times as many
    // clients ask more than four times as often.
    let (few, many) = (requests("redis", 4), requests("redis", 16));
    assert!(many > 16 * 10, "{many}");
    assert!(many > 4 * few * 3, "{few} then {many}");
}

#[test]
fn a_thousand_clients_run_to_a_judged_verdict_the_same_way_twice() {
    // `run` runs it twice and compares the trace hashes.
    let run = run(&crowd("zookeeper", 1000, "10ms"));
    assert_eq!(run.result.outcome, Outcome::Completed);
    assert_eq!(run.report.verdict, Verdict::Safe);
    assert_eq!(run.report.accepted_writes, 1000);
    assert_eq!(run.report.rejected_writes, 0);
    assert!(run.expectations_met);
    let queue = arrival_order(&run);
    assert_eq!(queue.len(), 1000);
    assert_eq!(acquired_order(&run), queue, "the queue is served in order");

    // Drawn as ten client lanes, the lock, the storage and one column for
    // the other 990 clients: still one row per event, as `step` needs.
    let journal = &run.result.journal;
    let options = LanesOptions {
        width: 12,
        deliveries: true,
        ..LanesOptions::default()
    };
    let drawn = lanes(journal, &run.nodes, &options);
    let header = drawn.lines().next().unwrap();
    assert!(
        header.contains("client10 ") && !header.contains("client11 "),
        "{header}"
    );
    assert!(
        header.contains("lock") && header.contains("storage"),
        "{header}"
    );
    assert!(header.contains("990 more cl"), "{header}");
    assert_eq!(drawn.lines().count(), journal.len() + 2);
    // Step's beliefs name the holder and count the others.
    let steps = steps(journal, &run.report);
    assert_eq!(steps.len(), journal.len());
    let granted = steps
        .iter()
        .find(|s| s.beliefs.contains(" believes "))
        .unwrap();
    assert!(
        granted.beliefs.contains("999 other clients hold nothing"),
        "{}",
        granted.beliefs
    );
}
