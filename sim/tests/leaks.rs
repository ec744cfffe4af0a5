//! Every run frees its world, whatever way it ended: a sweep of a million
//! seeds must not grow with them. (Its own test binary: other tests' worlds
//! alive at the same moment would blur the count.)

use std::time::Duration;

use sim::world::live_worlds;
use sim::{run, Actor, Context, Limits, Message, NodeId, Outcome, TimerId, WorldBuilder};

#[derive(Clone, Debug)]
struct Ping;

impl Message for Ping {
    fn summary(&self) -> String {
        "ping".into()
    }
}

/// Pings its peer every 10 ms forever; panics on its n-th ping if asked.
struct Pinger {
    peer: &'static str,
    panic_at: Option<u32>,
    got: u32,
}

impl Actor<Ping> for Pinger {
    fn on_start(&mut self, ctx: &mut Context<'_, Ping>) {
        ctx.set_timer(Duration::from_millis(10), 0);
    }
    fn on_message(&mut self, _: &mut Context<'_, Ping>, _: NodeId, _: Ping) {
        self.got += 1;
        assert!(Some(self.got) != self.panic_at, "boom");
    }
    fn on_timer(&mut self, ctx: &mut Context<'_, Ping>, _: TimerId, _: u64) {
        let peer = ctx.node(self.peer).unwrap();
        ctx.send(peer, Ping);
        ctx.set_timer(Duration::from_millis(10), 0);
    }
    fn is_done(&self) -> bool {
        false
    }
}

fn world(panic_at: Option<u32>, max_events: u64) -> WorldBuilder<Ping> {
    let mut w = WorldBuilder::new(Limits {
        duration: Duration::from_secs(1),
        max_events,
    });
    w.node(
        "a",
        Pinger {
            peer: "b",
            panic_at: None,
            got: 0,
        },
    );
    w.node(
        "b",
        Pinger {
            peer: "a",
            panic_at,
            got: 0,
        },
    );
    w
}

#[test]
fn no_run_leaves_its_world_behind() {
    for seed in 0..20 {
        let r = run(seed, || world(None, 100_000));
        assert_eq!(r.outcome, Outcome::TimeLimit);
        let r = run(seed, || world(None, 50));
        assert_eq!(r.outcome, Outcome::EventLimit);
        let r = run(seed, || world(Some(3), 100_000));
        assert!(
            matches!(r.outcome, Outcome::Crashed { .. }),
            "{:?}",
            r.outcome
        );
    }
    assert_eq!(live_worlds(), 0, "worlds outlived their runs");
}
