//! Crash: the node stops, loses its volatile state (the actor decides what is
//! durable), its timers and its queued messages; messages to it are lost until
//! it restarts. Maps onto madsim's kill and restart.

use std::time::Duration;

use crate::actor::{Message, NodeId};
use crate::events;
use crate::fault::random::{millis, Draw, Sizes, Targets};
use crate::fault::{FollowUp, Kind};
use crate::world::World;

/// Crash `node`, and restart it after `restart_after` if given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Crash {
    /// The node to crash.
    pub node: String,
    /// When to restart it; `None`: down for good.
    pub restart_after: Option<Duration>,
}

impl Crash {
    /// A random crash of a target node, restarting 85 times in 100, else
    /// down for good. Half the restarts are quick (a supervisor's: 100 ms to
    /// a fifth of `max_restart`), before the clients' first retries give up
    /// on it; the others take 100 ms to `max_restart`.
    pub fn random(d: &mut dyn Draw, t: &dyn Targets, sizes: &Sizes) -> Crash {
        let node = t.crash_target(d);
        let restart_after = if d.chance(0.85) {
            let max = if d.chance(0.5) {
                sizes.max_restart / 5
            } else {
                sizes.max_restart
            };
            Some(millis(d, max))
        } else {
            None
        };
        Crash {
            node,
            restart_after,
        }
    }
}

impl Kind for Crash {
    const NAME: &'static str = "crash";
    /// Its weight in random draws.
    const WEIGHT: u32 = 1;

    fn nodes(&self) -> Vec<&str> {
        vec![&self.node]
    }

    fn draw(d: &mut dyn Draw, t: &dyn Targets, sizes: &Sizes) -> Self {
        Crash::random(d, t, sizes)
    }

    /// Its downtime, when it restarts.
    fn magnitude(&self) -> Option<Duration> {
        self.restart_after
    }

    /// Sets its downtime (a crash without a restart gets one).
    fn set_magnitude(&mut self, d: Duration) {
        self.restart_after = Some(d);
    }

    fn apply<M: Message>(&self, w: &mut World<M>) {
        let id = w.node_id(&self.node);
        if !w.nodes[id].up {
            return;
        }
        w.crash_node(id);
        w.record(Some(id), events::CRASH, vec![]);
        if let Some(after) = self.restart_after {
            let at = w.now_ns() + after.as_nanos() as u64;
            w.schedule_follow_up(at, FollowUp::Restart(id));
        }
    }
}

pub(crate) fn restart<M: Message>(w: &mut World<M>, id: NodeId) {
    if w.nodes[id].up {
        return;
    }
    w.record(Some(id), events::RESTART, vec![]);
    w.restart_node(id);
}
