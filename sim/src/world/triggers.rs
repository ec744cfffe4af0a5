//! Event-triggered faults: matching journal events against pending
//! `after` triggers, and applying the faults they fire.

use std::time::Duration;

use crate::actor::{Message, NodeId};
use crate::fault::{Fault, Trigger};
use crate::journal::{Event, Name};

use super::agenda::Item;
use super::World;

pub(super) struct PendingTrigger {
    node: NodeId,
    kind: Name,
    nth: u32,
    seen: u32,
    delay: Duration,
    fault: usize,
}

impl<M: Message> World<M> {
    /// Puts each `at` fault on the agenda and notes each `after` trigger.
    pub(super) fn arm_triggers(&mut self) {
        let faults = std::sync::Arc::clone(&self.faults);
        for (i, f) in faults.iter().enumerate() {
            match &f.trigger {
                Trigger::At(at) => self.schedule(at.as_nanos() as u64, Item::Fault(i)),
                Trigger::After {
                    node,
                    kind,
                    nth,
                    delay,
                } => {
                    let trigger = PendingTrigger {
                        node: self.node_id(node),
                        kind: Name::from(kind),
                        nth: (*nth).max(1),
                        seen: 0,
                        delay: *delay,
                        fault: i,
                    };
                    self.triggers.push(trigger);
                }
            }
        }
    }

    /// Counts `event` (stamped `t_ns`, of node `node`; `None`: the world)
    /// against the pending triggers: faults due right away join `fired`;
    /// those due after a delay are returned with their time, for the agenda.
    pub(super) fn match_triggers(
        &mut self,
        node: Option<NodeId>,
        event: &Event,
        t_ns: u64,
    ) -> Vec<(u64, usize)> {
        let mut delayed = Vec::new();
        let Some(node) = node else {
            // Triggers name nodes, and the world is none.
            return delayed;
        };
        for trig in &mut self.triggers {
            if trig.seen < trig.nth && trig.node == node && event.kind == trig.kind {
                trig.seen += 1;
                if trig.seen == trig.nth {
                    if trig.delay.is_zero() {
                        self.fired.push(trig.fault);
                    } else {
                        delayed.push((t_ns + trig.delay.as_nanos() as u64, trig.fault));
                    }
                }
            }
        }
        delayed
    }

    /// Applies the faults that events fired, and those their events fire.
    /// A crash of the node whose step is being carried out waits for the end
    /// of that step (see [`World::carry_out`]).
    pub(super) fn apply_fired(&mut self) {
        while !self.fired.is_empty() {
            for i in std::mem::take(&mut self.fired) {
                let own_crash = matches!(
                    (&self.faults[i].fault, self.stepping),
                    (Fault::Crash(c), Some(node)) if self.names[node] == c.node
                );
                if own_crash {
                    self.postponed.push(i);
                } else {
                    self.fire(i);
                }
            }
        }
    }

    /// Applies fault `i` now and notes when: a run reports the scripted
    /// faults that never fired.
    pub(super) fn fire(&mut self, i: usize) {
        if self.stop.is_none() {
            let now = self.now_ns();
            self.fired_ns[i].get_or_insert(now);
        }
        let faults = std::sync::Arc::clone(&self.faults);
        faults[i].fault.apply(self);
    }
}
