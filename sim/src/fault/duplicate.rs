//! Duplicate: deliver messages on one link twice (a retransmission that
//! arrives after all, a proxy that retries).

use crate::actor::Message;
use crate::fault::random::{Draw, Sizes, Targets};
use crate::fault::{arm_link, Kind, Scope};
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
    /// A random duplicate of the next message on a target link.
    pub fn random(d: &mut dyn Draw, t: &dyn Targets) -> Duplicate {
        let (from, to) = t.link(d);
        Duplicate {
            from,
            to,
            scope: Scope::Count(1),
        }
    }
}

impl Kind for Duplicate {
    const NAME: &'static str = "duplicate";
    /// Its weight in random draws.
    const WEIGHT: u32 = 1;

    fn nodes(&self) -> Vec<&str> {
        vec![&self.from, &self.to]
    }

    fn draw(d: &mut dyn Draw, t: &dyn Targets, _: &Sizes) -> Self {
        Duplicate::random(d, t)
    }

    fn scope_mut(&mut self) -> Option<&mut Scope> {
        Some(&mut self.scope)
    }

    fn apply<M: Message>(&self, w: &mut World<M>) {
        arm_link(
            w,
            Some(&self.from),
            &self.to,
            RuleAction::Duplicate,
            self.scope,
        );
    }
}
