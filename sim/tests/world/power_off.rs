//! An actor powering another node off (`Context::power_off`, a fencing
//! agent's kill): a crash journaled with `by`, placed between the events the
//! handler emitted before and after asking for it; what the node sent
//! before still arrives; powered off for good, it does not hold the run
//! open.

use std::time::Duration;

use sim::{run, Actor, Context, NodeId, Outcome, RunResult, TimerId, WorldBuilder};

use crate::actors::{Msg, Pinger};
use crate::{assert_at, find, limits, ms, net_fixed, only};

/// Emits `got` for every ping; on `Ping(1)` powers its sender off, once,
/// between a `before` and an `after` event.
struct Shooter {
    restart_after: Option<Duration>,
    shot: bool,
}

impl Actor<Msg> for Shooter {
    fn on_start(&mut self, _: &mut Context<'_, Msg>) {}
    fn on_message(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, msg: Msg) {
        let Msg::Ping(n) = msg else { return };
        sim::emit!("got", n = n);
        if n == 1 && !self.shot {
            self.shot = true;
            sim::emit!("before");
            ctx.power_off(from, self.restart_after);
            sim::emit!("after");
        }
    }
    fn on_timer(&mut self, _: &mut Context<'_, Msg>, _: TimerId, _: u64) {}
}

/// `v` pings `s` at 0, 1000, 1005 and 5000 ms (10 ms links); `s` powers
/// `v` off when ping 1 arrives, at 1010 ms, while ping 2 is on its way.
fn world(restart_after: Option<Duration>) -> RunResult {
    run(1, move || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(20_000)));
        w.node("v", Pinger::new("s", &[0, 1_000, 1_005, 5_000].map(ms)));
        w.node(
            "s",
            Shooter {
                restart_after,
                shot: false,
            },
        );
        w.network(net_fixed(ms(10)));
        w
    })
}

#[test]
fn the_power_off_is_a_crash_by_the_node_that_asked_between_its_events() {
    let r = world(None);
    let j = &r.journal;
    let crash = only(j, "v", "crash");
    assert_eq!(crash.str("by"), Some("s"));
    assert_at(crash.t_ns, 1_010);
    let (before, after) = (only(j, "s", "before"), only(j, "s", "after"));
    assert!(before.seq < crash.seq && crash.seq < after.seq);
}

#[test]
fn what_the_node_sent_before_still_arrives_and_nothing_after() {
    let r = world(None);
    let got: Vec<u64> = find(&r.journal, "s", "got")
        .iter()
        .map(|e| e.u64("n").unwrap())
        .collect();
    // Ping 2 left at 1005 ms and lands after the kill; ping 3 never leaves.
    assert_eq!(got, [0, 1, 2]);
}

#[test]
fn a_node_powered_off_for_good_does_not_hold_the_run_open() {
    let r = world(None);
    // The pinger never sends ping 3, so it is never done; the run still
    // completes rather than stalling.
    assert_eq!(r.outcome, Outcome::Completed);
    assert!(find(&r.journal, "v", "restart").is_empty());
}

#[test]
fn a_power_off_with_a_restart_brings_the_node_back() {
    let r = world(Some(ms(2_000)));
    assert_at(only(&r.journal, "v", "restart").t_ns, 3_010);
    let got = find(&r.journal, "s", "got");
    assert!(got.iter().any(|e| e.u64("n") == Some(3)), "ping 3 is sent");
}
