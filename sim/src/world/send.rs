//! Sending: a message journalled as `send`, routed through the network
//! (dropped, duplicated, delayed) and put on the agenda to arrive.

use crate::actor::{Message, NodeId};
use crate::events::{self, field};
use crate::journal::{Name, Value};
use crate::net::Fate;

use super::agenda::Item;
use super::World;

impl<M: Message> World<M> {
    pub(super) fn send(&mut self, from: NodeId, to: NodeId, msg: M, now: u64) {
        let id = self.next_msg;
        self.next_msg += 1;
        // One summary for the `send`, and the `deliver` or `drop` of each copy.
        let summary = Name::from(msg.summary());
        let to_name = Value::Str(self.names[to].clone());
        let fields = [
            (field::ID, id.into()),
            (field::TO, to_name.clone()),
            (field::MSG, Value::Str(summary.clone())),
        ];
        self.record(Some(from), events::SEND, fields);
        match self.net.route(from, to, now, &mut self.rng) {
            Fate::Dropped(reason) => {
                let fields = [
                    (field::ID, id.into()),
                    (field::TO, to_name),
                    (field::MSG, Value::Str(summary)),
                    (field::REASON, Value::Str(Name::from_static(reason))),
                ];
                self.record(Some(from), events::DROP, fields);
            }
            Fate::Delivered { latencies, extra } => {
                if latencies.len() > 1 {
                    let fields = [(field::ID, id.into()), (field::TO, to_name)];
                    self.record(Some(from), events::DUPLICATE, fields);
                }
                for latency in latencies {
                    let at = now + (latency + extra).as_nanos() as u64;
                    self.in_flight += 1;
                    let item = Item::Arrive {
                        id,
                        from,
                        to,
                        msg: msg.clone(),
                        summary: summary.clone(),
                    };
                    self.schedule(at, item);
                }
            }
        }
    }
}
