//! Delay: hold messages on one link back by `extra` on top of their latency
//! ("the next message from client1 to storage, 20 s late").

use std::time::Duration;

use crate::actor::Message;
use crate::fault::{arm_link, Scope};
use crate::net::RuleAction;
use crate::world::World;

/// Delay messages from `from` to `to`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delay {
    /// Sender.
    pub from: String,
    /// Receiver.
    pub to: String,
    /// Added to each affected message's latency.
    pub extra: Duration,
    /// Which messages.
    pub scope: Scope,
}

impl Delay {
    pub(crate) fn apply<M: Message>(&self, w: &mut World<M>) {
        arm_link(
            w,
            &self.from,
            &self.to,
            RuleAction::Delay(self.extra),
            self.scope,
        );
    }
}
