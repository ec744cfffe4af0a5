//! Crash, restart and pause plumbing: what a node's state and its madsim
//! node go through when a fault stops or revives it.

use std::time::Duration;

use crate::actor::{Message, NodeId};
use crate::events::{self, field, reason};
use crate::fault::FollowUp;
use crate::journal::{Name, Value};

use super::step::Input;
use super::World;

impl<M: Message> World<M> {
    pub(crate) fn madsim_pause(&mut self, id: NodeId, pause: bool) {
        if let Some(mid) = self.nodes[id].madsim_id {
            let handle = madsim::runtime::Handle::current();
            if pause {
                handle.pause(mid);
            } else {
                handle.resume(mid);
            }
        }
    }

    pub(crate) fn crash_node(&mut self, id: NodeId) {
        // Messages that arrived but were not handled yet die with the node.
        let queued: Vec<Input<M>> = self.nodes[id].inbox.drain(..).collect();
        self.queued_inputs -= queued.len();
        for input in queued {
            if let Input::Message {
                id: msg_id,
                from,
                summary,
                ..
            } = input
            {
                let fields = [
                    (field::ID, msg_id.into()),
                    (field::TO, Value::Str(self.names[id].clone())),
                    (field::MSG, Value::Str(summary)),
                    (
                        field::REASON,
                        Value::Str(Name::from_static(reason::NODE_DOWN)),
                    ),
                ];
                self.record(Some(from), events::DROP, fields);
            }
        }
        let node = &mut self.nodes[id];
        node.up = false;
        node.pauses = 0;
        node.deferred = None;
        node.epoch += 1;
        node.live_timers.clear();
        node.waker = None;
        // What the process's tasks do as they are dropped reads the node's
        // clocks too.
        let now = self.now_ns();
        let node = &mut self.nodes[id];
        let clocks =
            super::os_clocks::StepClocks::enter(node.clock.mono_ns(now), node.clock.wall_ns(now));
        node.actor.on_crash();
        drop(clocks);
        if let Some(mid) = node.madsim_id {
            madsim::runtime::Handle::current().kill(mid);
        }
        self.note_done(id);
    }

    /// Node `by` powers node `id` off ([`crate::Context::power_off`]): a
    /// crash journaled with `by`, and a restart after `restart_after` if
    /// given. A node already down is left as it is.
    pub(crate) fn power_off(&mut self, by: NodeId, id: NodeId, restart_after: Option<Duration>) {
        if !self.nodes[id].up {
            return;
        }
        self.crash_node(id);
        self.nodes[id].powered_off = restart_after.is_none();
        self.note_done(id);
        let by = Value::Str(self.names[by].clone());
        self.record(Some(id), events::CRASH, [(field::BY, by)]);
        if let Some(after) = restart_after {
            let at = self.now_ns() + after.as_nanos() as u64;
            self.schedule_follow_up(at, FollowUp::Restart(id));
        }
    }

    pub(crate) fn restart_node(&mut self, id: NodeId) {
        let node = &mut self.nodes[id];
        node.up = true;
        node.powered_off = false;
        node.inbox.push_back(Input::Start);
        self.queued_inputs += 1;
        if let Some(mid) = node.madsim_id {
            // Respawns the node's task through its init closure.
            madsim::runtime::Handle::current().restart(mid);
        }
        self.note_done(id);
    }
}
