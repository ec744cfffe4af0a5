//! Sending: a message journalled as `send`, routed through the network
//! (dropped, duplicated, delayed) and put on the agenda to arrive.

use crate::actor::{Message, NodeId};
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
            ("id", id.into()),
            ("to", to_name.into()),
            ("msg", summary.as_str().into()),
        ];
        self.record(Some(from), "send", fields);
        match self.net.route(from, to, now, &mut self.rng) {
            Fate::Dropped(reason) => {
                let fields = vec![
                    ("id", id.into()),
                    ("to", self.names[to].as_str().into()),
                    ("msg", summary.into()),
                    ("reason", reason.into()),
                ];
                self.record(Some(from), "drop", fields);
            }
            Fate::Delivered { latencies, extra } => {
                if latencies.len() > 1 {
                    let fields = vec![("id", id.into()), ("to", self.names[to].as_str().into())];
                    self.record(Some(from), "duplicate", fields);
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
