//! Sending: a message journalled as `send`, routed through the network
//! (dropped, duplicated, delayed) and put on the agenda to arrive.

use crate::actor::{Message, NodeId};
use crate::events::{self, field};
use crate::net::Fate;

use super::agenda::Item;
use super::World;

impl<M: Message> World<M> {
    pub(super) fn send(&mut self, from: NodeId, to: NodeId, msg: M, now: u64) {
        let id = self.next_msg;
        self.next_msg += 1;
        let summary = msg.summary();
        let to_name = self.names[to].as_str();
        let fields = vec![
            (field::ID, id.into()),
            (field::TO, to_name.into()),
            (field::MSG, summary.as_str().into()),
        ];
        self.record(Some(from), events::SEND, fields);
        match self.net.route(from, to, now, &mut self.rng) {
            Fate::Dropped(reason) => {
                let fields = vec![
                    (field::ID, id.into()),
                    (field::TO, self.names[to].as_str().into()),
                    (field::MSG, summary.into()),
                    (field::REASON, reason.into()),
                ];
                self.record(Some(from), events::DROP, fields);
            }
            Fate::Delivered { latencies, extra } => {
                if latencies.len() > 1 {
                    let fields = vec![
                        (field::ID, id.into()),
                        (field::TO, self.names[to].as_str().into()),
                    ];
                    self.record(Some(from), events::DUPLICATE, fields);
                }
                for latency in latencies {
                    let at = now + (latency + extra).as_nanos() as u64;
                    self.in_flight += 1;
                    let msg = msg.clone();
                    self.schedule(at, Item::Arrive { id, from, to, msg });
                }
            }
        }
    }
}
