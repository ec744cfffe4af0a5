//! Event-triggered faults: a fault fired by an event takes effect right after
//! that event, before the node's next action (see `cut.rs` for what becomes
//! of the rest of the step); `nth` picks the occurrence and `delay` postpones
//! the fault.

use sim::fault::{Crash, Fault, Pause};
use sim::{run, Outcome, WorldBuilder};

use crate::actors::{Burst, Msg, Sink, Ticker, Timers};
use crate::{after, assert_at, at, find, limits, ms, net_fixed, only};

fn pause(node: &str, duration_ms: u64) -> Fault {
    Fault::Pause(Pause {
        node: node.into(),
        duration: ms(duration_ms),
    })
}

#[test]
fn a_pause_after_an_event_holds_the_next_timer() {
    // Timers at 100 and 101 ms; pause for 1 s right after the first fires.
    let r = run(1, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(5_000)));
        w.node("t", Timers::new(&[ms(100), ms(101)]));
        w.fault(after("t", "fired", 1, ms(0), pause("t", 1_000)));
        w
    });
    assert_eq!(r.outcome, Outcome::Completed);
    let j = &r.journal;
    let fired = find(j, "t", "fired");
    let pause = only(j, "t", "pause");
    assert_at(fired[0].t_ns, 100);
    assert_eq!(
        pause.t_ns, fired[0].t_ns,
        "the pause starts in the same instant"
    );
    assert_eq!(pause.seq, fired[0].seq + 1, "the pause follows its trigger");
    // The timer due 1 ms later waits for the end of the pause.
    assert_at(fired[1].t_ns, 1_100);
    assert!(fired[1].seq > only(j, "t", "resume").seq);
}

#[test]
fn a_pause_after_an_event_holds_an_already_queued_message() {
    // Two pings arrive at the sink in the same instant; the pause fired by
    // handling the first must hold the second.
    let r = run(2, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(5_000)));
        w.node(
            "burst",
            Burst {
                peer: "sink".into(),
                count: 2,
            },
        );
        w.node("sink", Sink);
        w.network(net_fixed(ms(10)));
        w.fault(after("sink", "got", 1, ms(0), pause("sink", 1_000)));
        w
    });
    let j = &r.journal;
    let got = find(j, "sink", "got");
    assert_eq!(got.len(), 2);
    assert_at(got[0].t_ns, 10);
    assert_at(got[1].t_ns, 1_010);
    let pause = only(j, "sink", "pause");
    assert!(got[0].seq < pause.seq && pause.seq < got[1].seq);
    // The second message's deliver is journalled when it is handled.
    let delivers = find(j, "sink", "deliver");
    assert_at(delivers[1].t_ns, 1_010);
}

#[test]
fn nth_picks_the_occurrence() {
    let r = run(3, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(5_000)));
        w.node("t", Timers::new(&[ms(100), ms(200), ms(300)]));
        w.fault(after("t", "fired", 2, ms(0), pause("t", 1_000)));
        w
    });
    let j = &r.journal;
    let fired = find(j, "t", "fired");
    assert_at(fired[0].t_ns, 100);
    assert_at(fired[1].t_ns, 200);
    assert_eq!(only(j, "t", "pause").t_ns, fired[1].t_ns);
    assert_at(fired[2].t_ns, 1_200);
}

#[test]
fn delay_postpones_the_fault() {
    // Pause 500 ms after the first timer (at 100 ms): from 600 to 1600 ms.
    let r = run(4, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(5_000)));
        w.node("t", Timers::new(&[ms(100), ms(200), ms(700)]));
        w.fault(after("t", "fired", 1, ms(500), pause("t", 1_000)));
        w
    });
    let j = &r.journal;
    let fired = find(j, "t", "fired");
    assert_at(only(j, "t", "pause").t_ns, 600);
    assert_at(fired[1].t_ns, 200);
    assert_at(fired[2].t_ns, 1_600);
}

#[test]
fn a_trigger_on_another_nodes_event_pauses_that_node() {
    // The sink is paused after the burst node's second send.
    let r = run(5, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(5_000)));
        w.node(
            "burst",
            Burst {
                peer: "sink".into(),
                count: 2,
            },
        );
        w.node("sink", Sink);
        w.network(net_fixed(ms(10)));
        w.fault(after("burst", "send", 2, ms(0), pause("sink", 1_000)));
        w
    });
    let j = &r.journal;
    assert_at(only(j, "sink", "pause").t_ns, 0);
    for got in find(j, "sink", "got") {
        assert_at(got.t_ns, 1_000);
    }
}

#[test]
fn a_trigger_on_a_world_event_fires_at_once() {
    // `a` is paused at 1 s by time; the crash of `b` is triggered by that
    // pause event and must happen at 1 s. `c` ticks every 300 ms, so the next
    // step anywhere is at 1.2 s.
    let r = run(6, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(3_000)));
        w.node("a", Sink);
        w.node("b", Sink);
        w.node("c", Ticker { every: ms(300) });
        w.fault(at(ms(1_000), pause("a", 100)));
        w.fault(after(
            "a",
            "pause",
            1,
            ms(0),
            Fault::Crash(Crash {
                node: "b".into(),
                restart_after: None,
            }),
        ));
        w
    });
    assert_at(only(&r.journal, "b", "crash").t_ns, 1_000);
}

#[test]
fn the_run_reports_when_each_fault_fired_and_which_never_did() {
    // Timers at 100, 101 and 300 ms; faults after the 1st and the 4th
    // `fired` (there are three), at 200 ms, and at 9 s (after the run).
    let r = run(1, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(5_000)));
        w.node("t", Timers::new(&[ms(100), ms(101), ms(300)]));
        w.fault(after("t", "fired", 1, ms(0), pause("t", 10)));
        w.fault(after("t", "fired", 4, ms(0), pause("t", 10)));
        w.fault(at(ms(200), pause("t", 10)));
        w.fault(at(ms(9_000), pause("t", 10)));
        w
    });
    let fired: Vec<Option<u64>> = r
        .faults_fired
        .iter()
        .map(|t| t.map(|d| d.as_millis() as u64))
        .collect();
    assert_eq!(fired, [Some(100), None, Some(200), None]);
}
