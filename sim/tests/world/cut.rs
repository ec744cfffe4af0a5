//! A fault fired by an event takes effect at that point of the handler's
//! step: a pause holds whatever the handler did after the event (later
//! events, messages, timers) until the node resumes; a crash of the node
//! itself lets the step finish first.

use std::time::Duration;

use sim::fault::{Crash, Fault, Pause};
use sim::{run, Actor, Context, NodeId, Outcome, TimerId, WorldBuilder};

use crate::actors::{Msg, Sink};
use crate::{after, assert_at, find, limits, ms, net_fixed, only};

/// On start: emits `first`, pings the sink, emits `second`, pings again and
/// sets a 10 ms timer that emits `timer`.
struct TwoPhase {
    done: bool,
}

impl Actor<Msg> for TwoPhase {
    fn on_start(&mut self, ctx: &mut Context<'_, Msg>) {
        let sink = ctx.node("sink").unwrap();
        sim::emit!("first");
        ctx.send(sink, Msg::Ping(1));
        sim::emit!("second");
        ctx.send(sink, Msg::Ping(2));
        ctx.set_timer(Duration::from_millis(10), 0);
    }
    fn on_message(&mut self, _: &mut Context<'_, Msg>, _: NodeId, _: Msg) {}
    fn on_timer(&mut self, _: &mut Context<'_, Msg>, _: TimerId, _: u64) {
        sim::emit!("timer");
        self.done = true;
    }
    fn is_done(&self) -> bool {
        self.done
    }
}

fn world(fault: sim::fault::ScheduledFault) -> WorldBuilder<Msg> {
    let mut w = WorldBuilder::<Msg>::new(limits(ms(10_000)));
    w.node("two", TwoPhase { done: false });
    w.node("sink", Sink);
    w.network(net_fixed(ms(5)));
    w.fault(fault);
    w
}

fn pause(node: &str, duration_ms: u64) -> Fault {
    Fault::Pause(Pause {
        node: node.into(),
        duration: ms(duration_ms),
    })
}

#[test]
fn a_pause_after_the_first_event_holds_the_rest_of_the_step() {
    let r = run(1, || {
        world(after("two", "first", 1, ms(0), pause("two", 1_000)))
    });
    assert_eq!(r.outcome, Outcome::Completed);
    let j = &r.journal;
    assert_at(only(j, "two", "first").t_ns, 0);
    // Everything the handler did after `first` happens at resume.
    assert_at(only(j, "two", "second").t_ns, 1_000);
    let sends = find(j, "two", "send");
    assert_eq!(sends.len(), 2);
    assert!(sends.iter().all(|s| s.seq > only(j, "two", "resume").seq));
    let got = find(j, "sink", "got");
    assert_at(got[0].t_ns, 1_005);
    // The timer counts from the resume.
    assert_at(only(j, "two", "timer").t_ns, 1_010);
}

#[test]
fn a_pause_after_the_second_event_lets_the_first_message_out() {
    let r = run(2, || {
        world(after("two", "second", 1, ms(0), pause("two", 1_000)))
    });
    let j = &r.journal;
    let got = find(j, "sink", "got");
    assert_eq!(got.len(), 2);
    assert_at(got[0].t_ns, 5);
    assert_at(got[1].t_ns, 1_005);
}

#[test]
fn a_nodes_own_crash_lets_its_step_finish() {
    let crash = Fault::Crash(Crash {
        node: "two".into(),
        restart_after: None,
    });
    let r = run(3, || world(after("two", "first", 1, ms(0), crash)));
    let j = &r.journal;
    // Both messages left and `second` happened before the crash...
    assert_eq!(find(j, "sink", "got").len(), 2);
    let crash = only(j, "two", "crash");
    assert!(only(j, "two", "second").seq < crash.seq);
    // ...but the timer died with the node.
    assert!(find(j, "two", "timer").is_empty());
}

#[test]
fn a_pause_fired_by_a_delivery_holds_its_handling() {
    let r = run(4, || {
        world(after("sink", "deliver", 1, ms(0), pause("sink", 1_000)))
    });
    let j = &r.journal;
    // One `deliver` per message, even though the first was held.
    assert_eq!(find(j, "sink", "deliver").len(), 2);
    let got = find(j, "sink", "got");
    assert_at(got[0].t_ns, 1_005);
    assert!(got[0].seq > only(j, "sink", "resume").seq);
}
