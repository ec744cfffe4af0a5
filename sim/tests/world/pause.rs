//! Pause: a paused node runs nothing; messages to it wait and are delivered
//! (journalled) only after it resumes; its timers fire late; its clocks keep
//! running.

use sim::fault::{Crash, Fault, Pause};
use sim::{run, Outcome, WorldBuilder};

use crate::actors::{Counters, Echo, Msg, Pinger, Ticker, Timers};
use crate::{assert_at, at, find, limits, ms, ms_ns, net_fixed, of, only};

fn pause(node: &str, duration_ms: u64) -> Fault {
    Fault::Pause(Pause {
        node: node.into(),
        duration: ms(duration_ms),
    })
}

#[test]
fn messages_to_a_paused_node_are_delivered_after_resume() {
    // a pings echo at 100, 200, 1200 ms; echo is paused from 50 ms to 1050 ms.
    let r = run(1, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(5_000)));
        w.node(
            "a",
            Pinger::new("echo", &[ms(100), ms(200), ms(1_200)]).wanting_replies(),
        );
        w.node("echo", Echo);
        w.network(net_fixed(ms(10)));
        w.fault(at(ms(50), pause("echo", 1_000)));
        w
    });
    assert_eq!(r.outcome, Outcome::Completed);
    let j = &r.journal;
    assert_at(only(j, "echo", "pause").t_ns, 50);
    let resume = only(j, "echo", "resume");
    assert_at(resume.t_ns, 1_050);
    // Nothing of echo's between pause and resume.
    for e in of(j, "echo") {
        assert!(
            e.kind == "pause" || e.t_ns < ms_ns(50) || e.t_ns >= resume.t_ns,
            "echo acted while paused: {e:?}"
        );
    }
    let delivers = find(j, "echo", "deliver");
    assert_eq!(delivers.len(), 3);
    // The two pings that arrived during the pause are handled right after it,
    // in order, and journalled at handling time.
    assert_eq!(delivers[0].str("msg"), Some("ping 0"));
    assert_eq!(delivers[1].str("msg"), Some("ping 1"));
    assert_at(delivers[0].t_ns, 1_050);
    assert_at(delivers[1].t_ns, 1_050);
    assert!(delivers[0].seq > resume.seq);
    assert_at(delivers[2].t_ns, 1_210);
    // The replies go out after the resume too.
    let pongs = find(j, "a", "pong_got");
    assert_at(pongs[0].t_ns, 1_060);
}

#[test]
fn a_paused_nodes_timers_fire_late_and_its_clock_keeps_running() {
    // A 200 ms timer on a node paused from 100 ms to 1100 ms.
    let r = run(2, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(5_000)));
        w.node("t", Timers::new(&[ms(200), ms(1_500)]));
        w.fault(at(ms(100), pause("t", 1_000)));
        w
    });
    assert_eq!(r.outcome, Outcome::Completed);
    let fired = find(&r.journal, "t", "fired");
    assert_eq!(fired.len(), 2);
    // Late: handled when the pause ends, not at 200 ms.
    assert_at(fired[0].t_ns, 1_100);
    // The clock ran on through the pause: the handler reads ~1100 ms, and the
    // journal's local time agrees.
    let mono = fired[0].i64("mono_ns").unwrap() as u64;
    assert!(mono >= ms_ns(1_100) && mono <= ms_ns(1_100) + crate::SLACK_NS);
    assert_eq!(fired[0].local_ns, fired[0].t_ns as i64);
    // A timer due after the pause is on time.
    assert_at(fired[1].t_ns, 1_500);
}

#[test]
fn overlapping_pauses_end_with_the_last() {
    let r = run(3, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(5_000)));
        w.node("t", Timers::new(&[ms(300)]));
        w.fault(at(ms(100), pause("t", 500)));
        w.fault(at(ms(200), pause("t", 1_000)));
        w
    });
    assert_eq!(find(&r.journal, "t", "pause").len(), 2);
    assert_at(only(&r.journal, "t", "resume").t_ns, 1_200);
    assert_at(only(&r.journal, "t", "fired").t_ns, 1_200);
}

#[test]
fn a_pause_at_time_zero_holds_the_node_from_the_start() {
    let r = run(4, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(5_000)));
        w.node("t", Timers::new(&[ms(100)]));
        w.fault(at(ms(0), pause("t", 1_000)));
        w
    });
    assert_eq!(r.outcome, Outcome::Completed);
    // on_start may not run before the pause ends; the 100 ms timer it sets
    // counts from then.
    assert_at(only(&r.journal, "t", "started").t_ns, 1_000);
    assert_at(only(&r.journal, "t", "fired").t_ns, 1_100);
}

#[test]
fn a_pause_cut_short_by_a_crash_does_not_end_a_later_pause() {
    // Pause A 100..5100 ms; crash at 200 ms, restart at 300 ms; pause B from
    // 1000 ms for 10 s. A's resume (due 5100 ms) must not end B.
    let r = run(5, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(20_000)));
        w.node(
            "c",
            Counters {
                durable: 0,
                volatile: 0,
                timer_after: ms(2_000),
            },
        );
        // Keeps the run going to its time limit.
        w.node("ticker", Ticker { every: ms(1_000) });
        w.fault(at(ms(100), pause("c", 5_000)));
        w.fault(at(
            ms(200),
            Fault::Crash(Crash {
                node: "c".into(),
                restart_after: Some(ms(100)),
            }),
        ));
        w.fault(at(ms(1_000), pause("c", 10_000)));
        w
    });
    let j = &r.journal;
    assert_eq!(find(j, "c", "pause").len(), 2);
    // The timer set at restart (due 2300 ms) fires when pause B ends.
    assert_at(only(j, "c", "resume").t_ns, 11_000);
    assert_at(only(j, "c", "fired").t_ns, 11_000);
}
