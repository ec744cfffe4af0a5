//! Stepping: one input through a node's actor, and carrying out what the
//! handler produced (events, timers, messages), cut short by a pause.

use std::time::Duration;

use crate::actor::{Context, Message, NodeId, Outputs, TimerId, TimerOp};
use crate::capture;
use crate::events::{self, field};
use crate::journal::{Name, Value};

use super::World;

pub(crate) enum Input<M> {
    Start,
    Message {
        id: u64,
        from: NodeId,
        msg: M,
        /// `msg.summary()`, made once when it was sent.
        summary: Name,
        /// Its `deliver` is journalled already (a pause held its handling).
        noted: bool,
    },
    Timer {
        id: TimerId,
        tag: u64,
    },
}

/// What a step still has to do: events from the `first`-th on, and the
/// outputs marked with the number of events emitted before them.
pub(crate) struct Rest<M> {
    events: Vec<capture::RawEvent>,
    first: usize,
    timers: Vec<(usize, TimerOp)>,
    sends: Vec<(usize, NodeId, M)>,
    power_offs: Vec<(usize, NodeId, Option<Duration>)>,
}

impl<M> Rest<M> {
    fn is_empty(&self) -> bool {
        self.events.is_empty()
            && self.timers.is_empty()
            && self.sends.is_empty()
            && self.power_offs.is_empty()
    }
}

impl<M: Message> World<M> {
    pub(super) fn deliver_input(&mut self, node: NodeId, input: Input<M>) {
        self.queued_inputs += 1;
        let n = &mut self.nodes[node];
        n.inbox.push_back(input);
        if let Some(w) = n.waker.take() {
            w.wake();
        }
    }

    /// Runs one input through node `id`'s actor and carries out what it asked.
    pub(super) fn step(&mut self, id: NodeId, input: Input<M>) {
        let now = self.now_ns();
        match &input {
            Input::Message {
                id: msg_id,
                from,
                summary,
                noted: false,
                ..
            } => {
                let fields = [
                    (field::ID, (*msg_id).into()),
                    (field::FROM, Value::Str(self.names[*from].clone())),
                    (field::MSG, Value::Str(summary.clone())),
                ];
                self.record(Some(id), events::DELIVER, fields);
                // A pause fired by the delivery holds its handling.
                let epoch = self.nodes[id].epoch;
                self.apply_fired();
                if self.nodes[id].epoch != epoch {
                    return;
                }
                if self.nodes[id].pauses > 0 {
                    if let Input::Message {
                        id: msg_id,
                        from,
                        msg,
                        summary,
                        ..
                    } = input
                    {
                        let again = Input::Message {
                            id: msg_id,
                            from,
                            msg,
                            summary,
                            noted: true,
                        };
                        self.nodes[id].inbox.push_front(again);
                        self.queued_inputs += 1;
                    }
                    return;
                }
            }
            Input::Timer { id: timer, .. } => {
                if self.nodes[id].live_timers.remove(timer).is_none() {
                    // Cancelled after it fired (while the node was paused,
                    // say, by an input queued before it). It may have been
                    // the last input anything waited for: the run may be
                    // over now.
                    self.check_end();
                    return;
                }
            }
            Input::Message { .. } | Input::Start => {}
        }
        if self.stop.is_some() {
            return;
        }
        self.current = Some(id);
        if let Some(watch) = &self.watch {
            watch.set_running(Some(id));
        }
        let mut out = Outputs::default();
        let node = &mut self.nodes[id];
        let mut ctx = Context {
            me: id,
            names: &self.names,
            mono_ns: node.clock.mono_ns(now),
            wall_ns: node.clock.wall_ns(now),
            out: &mut out,
            next_timer: &mut self.next_timer,
            rng: &mut self.rng,
        };
        let clocks = super::os_clocks::StepClocks::enter(ctx.mono_ns, ctx.wall_ns);
        match input {
            Input::Start => node.actor.on_start(&mut ctx),
            Input::Message { from, msg, .. } => node.actor.on_message(&mut ctx, from, msg),
            Input::Timer { id: timer, tag } => node.actor.on_timer(&mut ctx, timer, tag),
        }
        drop(clocks);
        self.current = None;
        if let Some(watch) = &self.watch {
            watch.set_running(None);
        }
        self.note_done(id);
        let mut events = std::mem::take(&mut self.spare_events);
        capture::drain_into(&mut events);
        let rest = Rest {
            events,
            first: 0,
            timers: out.timers,
            sends: out.sends,
            power_offs: out.power_offs,
        };
        self.carry_out(id, rest);
    }

    /// Carries out what a handler produced, in order: its events are
    /// journalled one by one, and a fault fired by one of them takes effect
    /// right there. If it pauses the node, whatever the handler did after
    /// that event (later events, messages, timers) happens when the node
    /// resumes. So a pause fired by `client1:read` falls between the read and
    /// the write the handler sends after it, and a delay armed by
    /// `client1:wrote` applies to the write sent after `wrote`. A crash of
    /// the node itself takes effect at the end of the step: the step's
    /// messages leave (a crash fired by `lock:granted` lets the grant out),
    /// its timers die with the node.
    pub(super) fn carry_out(&mut self, id: NodeId, rest: Rest<M>) {
        let now = self.now_ns();
        let epoch = self.nodes[id].epoch;
        self.stepping = Some(id);
        let mut done = rest.first;
        let mut buffer = rest.events;
        let mut events = buffer.drain(..);
        let mut power_offs = rest.power_offs.into_iter().peekable();
        let mut cut = false;
        loop {
            // A power-off takes effect between the events emitted before it
            // and those emitted after it.
            if let Some((_, node, restart_after)) = power_offs.next_if(|p| p.0 <= done) {
                self.power_off(id, node, restart_after);
            } else if let Some(raw) = events.next() {
                self.record_owned(Some(id), raw.kind, raw.fields);
                done += 1;
            } else {
                break;
            }
            self.apply_fired();
            if self.nodes[id].pauses > 0 || self.nodes[id].epoch != epoch {
                cut = true;
                break;
            }
        }
        let later_events: Vec<_> = if cut {
            events.by_ref().collect()
        } else {
            Vec::new()
        };
        drop(events);
        // The emptied buffer serves the next step.
        self.spare_events = buffer;
        let (timers, later_timers, sends, later_sends) = if cut {
            let before_cut = |mark: usize| mark < done;
            let (timers, later_timers): (Vec<_>, Vec<_>) =
                rest.timers.into_iter().partition(|(m, _)| before_cut(*m));
            let (sends, later_sends): (Vec<_>, Vec<_>) =
                rest.sends.into_iter().partition(|(m, _, _)| before_cut(*m));
            (timers, later_timers, sends, later_sends)
        } else {
            (rest.timers, Vec::new(), rest.sends, Vec::new())
        };
        let alive = self.nodes[id].epoch == epoch;
        if alive {
            for (_, op) in timers {
                self.timer_op(id, op, now);
            }
        }
        for (_, to, msg) in sends {
            self.send(id, to, msg, now);
        }
        // The world's events of this step (`send`, `drop`) can fire faults too.
        self.apply_fired();
        self.stepping = None;
        for i in std::mem::take(&mut self.postponed) {
            self.fire(i);
        }
        self.apply_fired();
        let alive = alive && self.nodes[id].epoch == epoch;
        if cut && alive {
            let later = Rest {
                events: later_events,
                first: done,
                timers: later_timers,
                sends: later_sends,
                power_offs: power_offs.collect(),
            };
            if !later.is_empty() {
                self.nodes[id].deferred = Some(later);
            }
        }
        self.check_end();
    }

    /// The node resumed: what its last step did after the pause began
    /// happens now.
    pub(crate) fn resume_deferred(&mut self, id: NodeId) {
        if let Some(rest) = self.nodes[id].deferred.take() {
            self.carry_out(id, rest);
        }
    }

    pub(super) fn timer_op(&mut self, id: NodeId, op: TimerOp, now: u64) {
        match op {
            TimerOp::Set {
                id: timer,
                after,
                tag,
            } => {
                let node = &mut self.nodes[id];
                let local = i64::try_from(after.as_nanos()).unwrap_or(i64::MAX);
                let due = node.clock.mono_ns(now).saturating_add(local);
                node.live_timers.insert(timer, (due, tag));
                self.schedule_timer(id, timer, now, now);
            }
            TimerOp::Cancel(timer) => {
                self.nodes[id].live_timers.remove(&timer);
            }
        }
    }
}
