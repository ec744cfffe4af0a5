//! Pause: the node runs nothing for a while (a GC pause, a VM freeze, a
//! preempted container). Messages to it queue up; its timers fire late; its
//! clocks keep running. Maps onto madsim's node pause.

use std::time::Duration;

use crate::actor::{Message, NodeId};
use crate::events::{self, field};
use crate::fault::random::{millis, Draw, Sizes, Targets};
use crate::fault::{FollowUp, Kind};
use crate::world::World;

/// Pause `node` for `duration`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pause {
    /// The node to pause.
    pub node: String,
    /// How long it stays paused (true time).
    pub duration: Duration,
}

impl Pause {
    /// A random pause: a target node, for 100 ms to `max_pause`.
    pub fn random(d: &mut dyn Draw, t: &dyn Targets, sizes: &Sizes) -> Pause {
        let node = t.node(d);
        Pause {
            node,
            duration: millis(d, sizes.max_pause),
        }
    }
}

impl Kind for Pause {
    const NAME: &'static str = "pause";
    /// Its weight in random draws: the most likely kind (a stalled leaseholder).
    const WEIGHT: u32 = 6;

    fn nodes(&self) -> Vec<&str> {
        vec![&self.node]
    }

    fn draw(d: &mut dyn Draw, t: &dyn Targets, sizes: &Sizes) -> Self {
        Pause::random(d, t, sizes)
    }

    /// Its `duration`.
    fn magnitude(&self) -> Option<Duration> {
        Some(self.duration)
    }

    fn set_magnitude(&mut self, d: Duration) {
        self.duration = d;
    }

    fn apply<M: Message>(&self, w: &mut World<M>) {
        let id = w.node_id(&self.node);
        if !w.nodes[id].up {
            return;
        }
        w.nodes[id].pauses += 1;
        w.madsim_pause(id, true);
        let ms = self.duration.as_millis() as u64;
        w.record(
            Some(id),
            events::PAUSE,
            vec![(field::DURATION_MS, ms.into())],
        );
        let until = w.now_ns() + self.duration.as_nanos() as u64;
        let epoch = w.nodes[id].epoch;
        w.schedule_follow_up(until, FollowUp::Resume { node: id, epoch });
    }
}

pub(crate) fn resume<M: Message>(w: &mut World<M>, id: NodeId, epoch: u64) {
    // A crash in between already ended the pause (and maybe a later pause
    // of the restarted node is running: that one is not ours to end).
    if w.nodes[id].epoch != epoch || w.nodes[id].pauses == 0 {
        return;
    }
    w.nodes[id].pauses -= 1;
    if w.nodes[id].pauses == 0 {
        w.madsim_pause(id, false);
        w.record(Some(id), events::RESUME, vec![]);
        w.resume_deferred(id);
    }
}
