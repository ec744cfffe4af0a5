//! Drop: lose messages on one link.

use crate::actor::Message;
use crate::fault::{arm_link, Scope};
use crate::net::RuleAction;
use crate::world::World;

/// Drop messages from `from` to `to`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Drop {
    /// Sender.
    pub from: String,
    /// Receiver.
    pub to: String,
    /// Which messages.
    pub scope: Scope,
}

impl Drop {
    pub(crate) fn apply<M: Message>(&self, w: &mut World<M>) {
        arm_link(w, &self.from, &self.to, RuleAction::Drop, self.scope);
    }
}
