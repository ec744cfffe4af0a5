//! Duplicate: deliver messages on one link twice (a retransmission that
//! arrives after all, a proxy that retries).

use crate::actor::Message;
use crate::fault::{arm_link, Scope};
use crate::net::RuleAction;
use crate::world::World;

/// Duplicate messages from `from` to `to`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Duplicate {
    /// Sender.
    pub from: String,
    /// Receiver.
    pub to: String,
    /// Which messages.
    pub scope: Scope,
}

impl Duplicate {
    pub(crate) fn apply<M: Message>(&self, w: &mut World<M>) {
        arm_link(w, &self.from, &self.to, RuleAction::Duplicate, self.scope);
    }
}
