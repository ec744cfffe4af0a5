//! How runs end: completed, time limit, event limit, stalled, crashed, timed
//! out — and neither a crash nor a hang takes down the caller or the runs
//! after it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use sim::fault::{Drop, Fault, Scope};
use sim::{run, run_within, Limits, Outcome, WorldBuilder};

use crate::actors::{Burst, Echo, Msg, Panicker, Pinger, Spinner, Ticker};
use crate::{assert_at, at, find, limits, ms, net_fixed};

#[test]
fn a_run_completes_when_every_actor_is_done_and_nothing_is_in_flight() {
    let r = run(1, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(60_000)));
        w.node("a", Pinger::new("echo", &[ms(100)]).wanting_replies());
        w.node("echo", Echo);
        w.network(net_fixed(ms(10)));
        w
    });
    assert_eq!(r.outcome, Outcome::Completed);
    // It ends when the pong is handled, not at the time limit.
    let last = r.journal.events().last().unwrap();
    assert_eq!(last.kind, "pong_got");
    assert_at(last.t_ns, 120);
    assert!(r.sim_time < ms(121), "sim_time {:?}", r.sim_time);
}

#[test]
fn a_message_in_flight_keeps_a_run_going() {
    // burst is done at once, but its ping is in flight for 1 s.
    let r = run(1, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(60_000)));
        w.node(
            "burst",
            Burst {
                peer: "echo".into(),
                count: 1,
            },
        );
        w.node("echo", Echo);
        w.network(net_fixed(ms(1_000)));
        w
    });
    assert_eq!(r.outcome, Outcome::Completed);
    // The echo's pong is in flight too: the run ends when it lands.
    assert_at(r.journal.events().last().unwrap().t_ns, 2_000);
}

#[test]
fn an_actor_that_ticks_forever_hits_the_time_limit() {
    let r = run(2, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(1_000)));
        w.node("t", Ticker { every: ms(100) });
        w
    });
    assert_eq!(r.outcome, Outcome::TimeLimit);
    let ticks = find(&r.journal, "t", "tick");
    assert!((9..=10).contains(&ticks.len()), "{} ticks", ticks.len());
    assert!(r.journal.events().iter().all(|e| e.t_ns <= 1_000_000_000));
    assert!(r.sim_time >= ms(1_000) && r.sim_time < ms(1_001));
}

#[test]
fn the_event_limit_cuts_the_journal_at_its_length() {
    let r = run(3, || {
        let mut w = WorldBuilder::<Msg>::new(Limits {
            duration: ms(60_000),
            max_events: 7,
        });
        w.node("t", Ticker { every: ms(100) });
        w
    });
    assert_eq!(r.outcome, Outcome::EventLimit);
    assert_eq!(r.journal.len(), 7);
}

#[test]
fn waiting_forever_for_a_dropped_reply_stalls() {
    let r = run(4, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(60_000)));
        w.node("a", Pinger::new("echo", &[ms(100)]).wanting_replies());
        w.node("echo", Echo);
        w.network(net_fixed(ms(10)));
        w.fault(at(
            ms(0),
            Fault::Drop(Drop {
                from: "a".into(),
                to: "echo".into(),
                scope: Scope::Count(1),
            }),
        ));
        w
    });
    assert_eq!(r.outcome, Outcome::Stalled);
    // It stalls as soon as nothing can happen, not at the time limit.
    assert!(r.sim_time < ms(101), "stalled late: {:?}", r.sim_time);
}

fn panicking_world(seed: u64) -> sim::RunResult {
    run(seed, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(60_000)));
        w.node("p", Pinger::new("boom", &[ms(100), ms(200), ms(300)]));
        w.node("boom", Panicker { fatal: 1 });
        w.network(net_fixed(ms(10)));
        w
    })
}

#[test]
fn a_panicking_actor_crashes_the_run_not_the_caller() {
    let r = panicking_world(5);
    let Outcome::Crashed { node, message } = &r.outcome else {
        panic!("expected a crash, got {:?}", r.outcome);
    };
    assert_eq!(node.as_deref(), Some("boom"));
    assert!(
        message.contains("panicker hit fatal ping 1"),
        "message: {message}"
    );
    assert!(r.outcome.to_string().contains("panic in boom"));
    // The journal up to the panic is kept: the first ping was handled, the
    // fatal one delivered, and nothing after.
    let j = &r.journal;
    assert_eq!(find(j, "boom", "ok").len(), 1);
    let last = j.events().last().unwrap();
    assert!(last.is("boom", "deliver"), "last event {last:?}");
    assert_eq!(last.str("msg"), Some("ping 1"));
    assert_at(last.t_ns, 210);
    assert!(r.sim_time >= ms(210));
}

#[test]
fn a_panic_in_the_world_builder_is_a_crash_without_a_node() {
    let r = run(6, || -> WorldBuilder<Msg> { panic!("no world today") });
    let Outcome::Crashed { node, message } = r.outcome else {
        panic!("expected a crash");
    };
    assert_eq!(node, None);
    assert!(message.contains("no world today"));
    assert!(r.journal.is_empty());
}

#[test]
fn runs_after_a_crash_still_work() {
    for seed in 0..5 {
        let crashed = panicking_world(seed);
        assert_eq!(crashed.outcome.as_str(), "crashed");
        let fine = run(seed, || {
            let mut w = WorldBuilder::<Msg>::new(limits(ms(60_000)));
            w.node("a", Pinger::new("echo", &[ms(100)]).wanting_replies());
            w.node("echo", Echo);
            w
        });
        assert_eq!(fine.outcome, Outcome::Completed, "seed {seed}");
        assert_eq!(find(&fine.journal, "a", "pong_got").len(), 1);
        // And the crash is reproducible.
        assert_eq!(panicking_world(seed).journal, crashed.journal);
    }
}

fn spinning_world(
    seed: u64,
    spin_on: u64,
    release: Arc<AtomicBool>,
    budget: std::time::Duration,
) -> sim::RunResult {
    run_within(seed, Some(budget), move || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(60_000)));
        w.node("p", Pinger::new("spin", &[ms(100), ms(200)]));
        w.node(
            "spin",
            Spinner {
                spin_on,
                release: release.clone(),
            },
        );
        w.network(net_fixed(ms(10)));
        w
    })
}

#[test]
fn an_actor_that_never_returns_times_out_and_the_runs_after_it_go_on() {
    let release = Arc::new(AtomicBool::new(false));
    // No simulated limit can end this run: the handler of ping 1 never
    // returns. The budget ends it, and the caller goes on.
    let stuck = spinning_world(3, 1, release.clone(), ms(300));
    // It names the node whose handler never returned.
    assert_eq!(
        stuck.outcome,
        Outcome::TimedOut {
            budget: ms(300),
            node: Some("spin".to_owned())
        }
    );
    assert!(stuck.outcome.is_error());
    assert_eq!(stuck.outcome.as_str(), "timed_out");
    assert!(
        stuck
            .outcome
            .to_string()
            .contains("300ms of wall-clock time"),
        "{}",
        stuck.outcome
    );
    // It keeps its journal up to the hang: the same seed's run that does
    // not spin journals the same events first.
    let whole = spinning_world(3, 99, release.clone(), ms(600_000));
    assert!(!stuck.journal.is_empty());
    assert!(stuck.journal.len() < whole.journal.len());
    assert_eq!(
        stuck.journal.events(),
        &whole.journal.events()[..stuck.journal.len()]
    );
    assert_eq!(stuck.journal.events().last().unwrap().kind, "deliver");
    // Runs after it, on other threads, finish as usual while it still spins
    // (with a budget they cannot exhaust on a loaded machine).
    for seed in 0..3 {
        let fine = spinning_world(seed, 99, release.clone(), ms(600_000));
        assert_eq!(fine.outcome, Outcome::Completed, "seed {seed}");
        assert_eq!(find(&fine.journal, "spin", "ok").len(), 2);
    }
    release.store(true, Ordering::Relaxed);
}

#[test]
fn a_budget_never_changes_a_finished_run() {
    let release = Arc::new(AtomicBool::new(true));
    let within = spinning_world(8, 99, release.clone(), ms(600_000));
    let without = run(8, move || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(60_000)));
        w.node("p", Pinger::new("spin", &[ms(100), ms(200)]));
        w.node(
            "spin",
            Spinner {
                spin_on: 99,
                release,
            },
        );
        w.network(net_fixed(ms(10)));
        w
    });
    assert_eq!(within.outcome, Outcome::Completed);
    assert_eq!(within.journal, without.journal);
    assert_eq!(within.journal.hash(), without.journal.hash());
}
