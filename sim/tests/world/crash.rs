//! Crash and restart: the actor chooses what survives, pending timers die with
//! the node, and messages to a down node are lost with reason `node down`.

use std::time::Duration;

use sim::fault::{Crash, Fault};
use sim::{run, Outcome, RunResult, WorldBuilder};

use crate::actors::{Counters, Msg, Pinger};
use crate::{after, assert_at, at, find, limits, ms, net_fixed, only};

/// `c` keeps counters and sets a 3 s timer on every start; `p` pings it at
/// 500 ms, 1500 ms (while down), 2500 and 6000 ms (keeping the run alive
/// past every timer); `c` crashes at 1 s.
fn crash_world(restart_after: Option<Duration>) -> RunResult {
    run(1, move || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(10_000)));
        w.node(
            "c",
            Counters {
                durable: 0,
                volatile: 0,
                timer_after: ms(3_000),
            },
        );
        w.node("p", Pinger::new("c", &[500, 1_500, 2_500, 6_000].map(ms)));
        w.network(net_fixed(ms(10)));
        w.fault(at(
            ms(1_000),
            Fault::Crash(Crash {
                node: "c".into(),
                restart_after,
            }),
        ));
        w
    })
}

#[test]
fn a_restarted_node_keeps_durable_state_and_loses_volatile_state() {
    let r = crash_world(Some(ms(1_000)));
    let j = &r.journal;
    assert_at(only(j, "c", "crash").t_ns, 1_000);
    assert_at(only(j, "c", "restart").t_ns, 2_000);
    let started = find(j, "c", "started");
    assert_eq!(started.len(), 2, "on_start runs again after the restart");
    assert_eq!(started[0].u64("durable"), Some(0));
    assert_eq!(started[0].u64("volatile"), Some(0));
    assert_at(started[1].t_ns, 2_000);
    assert_eq!(started[1].u64("durable"), Some(1), "durable state survives");
    assert_eq!(started[1].u64("volatile"), Some(0), "on_crash forgot it");
}

#[test]
fn a_crashed_nodes_timers_never_fire() {
    // The first incarnation's timer was due at 3 s, after the restart at 2 s;
    // only the second incarnation's (due 5 s) fires.
    let r = crash_world(Some(ms(1_000)));
    let fired = find(&r.journal, "c", "fired");
    assert_eq!(fired.len(), 1, "{}", r.journal.to_jsonl());
    assert_at(fired[0].t_ns, 5_000);
}

#[test]
fn messages_to_a_down_node_are_dropped() {
    let r = crash_world(Some(ms(1_000)));
    let j = &r.journal;
    let dropped = only(j, "p", "drop");
    assert_eq!(dropped.str("reason"), Some("node down"));
    assert_eq!(dropped.str("msg"), Some("ping 1"));
    assert_eq!(dropped.str("to"), Some("c"));
    assert_at(dropped.t_ns, 1_510);
    let got: Vec<_> = find(j, "c", "got")
        .iter()
        .map(|e| e.str("msg").unwrap().to_owned())
        .collect();
    assert_eq!(got, ["ping 0", "ping 2", "ping 3"]);
}

#[test]
fn a_crash_without_restart_keeps_the_node_down() {
    let r = crash_world(None);
    let j = &r.journal;
    assert!(find(j, "c", "restart").is_empty());
    assert_eq!(find(j, "c", "started").len(), 1);
    assert!(find(j, "c", "fired").is_empty());
    let reasons: Vec<_> = find(j, "p", "drop")
        .iter()
        .map(|e| e.str("reason").unwrap())
        .collect();
    assert_eq!(reasons, ["node down"; 3]);
    // Nothing of c's after the crash.
    let crash = only(j, "c", "crash");
    assert!(j
        .events()
        .iter()
        .all(|e| e.node != "c" || e.seq <= crash.seq));
    assert_eq!(r.outcome, Outcome::Completed);
}

#[test]
fn a_node_crashed_by_its_own_event_stops_at_once() {
    // c crashes right after its first `got` and restarts 100 ms later; the
    // later pings reach the new incarnation.
    let r = run(2, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(10_000)));
        w.node(
            "c",
            Counters {
                durable: 0,
                volatile: 0,
                timer_after: ms(5_000),
            },
        );
        w.node("p", Pinger::new("c", &[500, 1_500, 2_500, 6_000].map(ms)));
        w.network(net_fixed(ms(10)));
        w.fault(after(
            "c",
            "got",
            1,
            ms(0),
            Fault::Crash(Crash {
                node: "c".into(),
                restart_after: Some(ms(100)),
            }),
        ));
        w
    });
    let j = &r.journal;
    assert_at(only(j, "c", "crash").t_ns, 510);
    assert_at(only(j, "c", "restart").t_ns, 610);
    assert_eq!(find(j, "c", "got").len(), 4);
    let fired = find(j, "c", "fired");
    assert_eq!(fired.len(), 1);
    assert_at(fired[0].t_ns, 5_610);
}

#[test]
fn messages_queued_at_a_crashing_node_are_journalled_as_dropped() {
    // c is paused at 100 ms; the ping sent at 200 ms waits in its inbox from
    // 210 ms; c crashes at 500 ms. The journal must account for the ping.
    let r = run(3, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(10_000)));
        w.node(
            "c",
            Counters {
                durable: 0,
                volatile: 0,
                timer_after: ms(5_000),
            },
        );
        w.node("p", Pinger::new("c", &[200, 3_000].map(ms)));
        w.network(net_fixed(ms(10)));
        w.fault(at(
            ms(100),
            Fault::Pause(sim::fault::Pause {
                node: "c".into(),
                duration: ms(2_000),
            }),
        ));
        w.fault(at(
            ms(500),
            Fault::Crash(Crash {
                node: "c".into(),
                restart_after: Some(ms(100)),
            }),
        ));
        w
    });
    let j = &r.journal;
    let ping = find(j, "p", "send")[0].u64("id");
    let accounted = j
        .events()
        .iter()
        .any(|e| (e.kind == "deliver" || e.kind == "drop") && e.u64("id") == ping);
    assert!(accounted, "ping 0 vanished:\n{}", j.to_jsonl());
}
