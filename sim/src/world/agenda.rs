//! The agenda: everything that happens at a time (arrivals, timers, faults
//! and their follow-ups), in (true time, sequence) order, and the end of a run.

use std::time::Duration;

use crate::actor::{Message, NodeId, TimerId};
use crate::events::{self, field, reason};
use crate::fault::FollowUp;
use crate::journal::{Name, Value};
use crate::run::Outcome;

use super::step::Input;
use super::World;

pub(super) enum Item<M> {
    Arrive {
        id: u64,
        from: NodeId,
        to: NodeId,
        msg: M,
        /// `msg.summary()`, made once when it was sent.
        summary: Name,
    },
    Timer {
        node: NodeId,
        epoch: u64,
        id: TimerId,
        tag: u64,
    },
    Fault(usize),
    FollowUp(FollowUp),
}

/// An agenda item with its time and sequence number. The agenda is a
/// binary heap ordered by (time, sequence), earliest first: the pair is
/// unique, so items come out in exactly the order a sorted map would give,
/// while a pop moves log n items within one array instead of shifting the
/// rest of a B-tree leaf down (a profile showed that shifting as the
/// largest copy of a run).
pub(crate) struct Scheduled<M> {
    pub(super) at_ns: u64,
    seq: u64,
    item: Item<M>,
}

impl<M> PartialEq for Scheduled<M> {
    fn eq(&self, other: &Self) -> bool {
        (self.at_ns, self.seq) == (other.at_ns, other.seq)
    }
}

impl<M> Eq for Scheduled<M> {}

impl<M> PartialOrd for Scheduled<M> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl<M> Ord for Scheduled<M> {
    /// Reversed: `BinaryHeap` pops its greatest, the agenda its earliest.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (other.at_ns, other.seq).cmp(&(self.at_ns, self.seq))
    }
}

/// How far short of its due reading a timer's clock may be when it fires:
/// the true wait of a timer is rounded down to the nanosecond from its
/// clock's rate.
const TIMER_ROUNDING_NS: i64 = 1_000;

impl<M: Message> World<M> {
    /// Node `id`'s clock changed rate: each of its live timers is due when
    /// the clock reaches its reading, so it is scheduled again for that
    /// time at the new rate (an earlier arrival of a timer finds it not
    /// due yet and waits again; a later one finds it fired).
    pub(crate) fn rearm_timers(&mut self, id: NodeId) {
        if !self.nodes[id].up {
            return;
        }
        let now = self.now_ns();
        let timers: Vec<TimerId> = self.nodes[id].live_timers.keys().copied().collect();
        for timer in timers {
            self.schedule_timer(id, timer, now, now);
        }
    }

    /// Schedules node `id`'s live timer `timer` for the true time at which,
    /// at its clock's rate as of `now`, the clock reaches the reading the
    /// timer is due at; no sooner than `not_before_ns`.
    pub(super) fn schedule_timer(
        &mut self,
        id: NodeId,
        timer: TimerId,
        now: u64,
        not_before_ns: u64,
    ) {
        let node = &self.nodes[id];
        let Some(&(due, tag)) = node.live_timers.get(&timer) else {
            return;
        };
        let left = due.saturating_sub(node.clock.mono_ns(now)).max(0) as u64;
        let wait = node.clock.true_after(Duration::from_nanos(left));
        let item = Item::Timer {
            node: id,
            epoch: node.epoch,
            id: timer,
            tag,
        };
        let at = (now + wait.as_nanos() as u64).max(not_before_ns);
        self.schedule(at, item);
    }

    pub(super) fn schedule(&mut self, at_ns: u64, item: Item<M>) {
        let seq = self.agenda_seq;
        self.agenda_seq += 1;
        self.agenda.push(Scheduled { at_ns, seq, item });
        self.wake_agenda_if_before(at_ns);
    }

    pub(crate) fn schedule_follow_up(&mut self, at_ns: u64, follow_up: FollowUp) {
        self.schedule(at_ns, Item::FollowUp(follow_up));
    }

    pub(super) fn wake_agenda_if_before(&mut self, at_ns: u64) {
        if at_ns < self.agenda_deadline {
            self.poke_agenda();
        }
    }

    pub(super) fn poke_agenda(&mut self) {
        self.agenda_poked = true;
        if let Some(w) = self.agenda_waker.take() {
            w.wake();
        }
    }

    pub(super) fn finish(&mut self, outcome: Outcome) {
        if self.stop.is_none() {
            self.end_ns = self.now_ns();
            self.stop = Some(outcome);
            self.poke_agenda();
        }
    }

    /// Ends the run when every actor is done and nothing is in flight
    /// (completed), or when nothing can ever happen again (stalled).
    pub(super) fn check_end(&mut self) {
        if self.stop.is_some() {
            return;
        }
        if cfg!(debug_assertions) && self.nodes.len() <= 64 {
            // The counts against what they count, in worlds small enough
            // (debug builds only: the check visits every node, each step).
            let queued: usize = self.nodes.iter().map(|n| n.inbox.len()).sum();
            let undone = self
                .nodes
                .iter()
                .filter(|n| !(n.actor.is_done() || n.powered_off))
                .count();
            debug_assert_eq!((self.queued_inputs, self.undone), (queued, undone));
        }
        if self.queued_inputs > 0 {
            return;
        }
        if self.in_flight == 0 && self.undone == 0 {
            self.finish(Outcome::Completed);
        } else if self.agenda.is_empty() {
            self.finish(Outcome::Stalled);
        }
    }

    /// Works through the agenda items due by now.
    pub(super) fn run_due(&mut self, now: u64) {
        while self.stop.is_none() {
            if self.agenda.peek().is_none_or(|first| first.at_ns > now) {
                break;
            }
            let Some(Scheduled { item, .. }) = self.agenda.pop() else {
                break;
            };
            match item {
                Item::Arrive {
                    id,
                    from,
                    to,
                    msg,
                    summary,
                } => {
                    self.in_flight -= 1;
                    if self.nodes[to].up {
                        let input = Input::Message {
                            id,
                            from,
                            msg,
                            summary,
                            noted: false,
                        };
                        self.deliver_input(to, input);
                    } else {
                        let fields = [
                            (field::ID, id.into()),
                            (field::TO, Value::Str(self.names[to].clone())),
                            (field::MSG, Value::Str(summary)),
                            (
                                field::REASON,
                                Value::Str(Name::from_static(reason::NODE_DOWN)),
                            ),
                        ];
                        self.record(Some(from), events::DROP, fields);
                    }
                }
                Item::Timer {
                    node,
                    epoch,
                    id,
                    tag,
                } => {
                    let now = self.now_ns();
                    let n = &self.nodes[node];
                    let Some(&(due, _)) = n.live_timers.get(&id) else {
                        continue;
                    };
                    if n.epoch != epoch || !n.up {
                        continue;
                    }
                    // A timer is measured on its node's clock: one whose
                    // clock slowed since it was set is not due yet, and
                    // waits for the rest at the clock's new rate.
                    if due.saturating_sub(n.clock.mono_ns(now)) > TIMER_ROUNDING_NS {
                        // At least a nanosecond on: a clock so fast that the
                        // rest rounds to no true time still moves on.
                        self.schedule_timer(node, id, now, now + 1);
                        continue;
                    }
                    self.deliver_input(node, Input::Timer { id, tag });
                }
                Item::Fault(i) => self.fire(i),
                Item::FollowUp(f) => f.apply(self),
            }
            // The world's own events (pause, crash, …) can trigger faults too.
            self.apply_fired();
        }
        self.check_end();
    }
}
