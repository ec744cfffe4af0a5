//! Drop: lose messages on one link.

use crate::actor::Message;
use crate::fault::random::{Draw, Sizes, Targets};
use crate::fault::{arm_link, Kind, Scope};
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
    /// A random drop of the next 1 to 3 messages on a target link.
    pub fn random(d: &mut dyn Draw, t: &dyn Targets) -> Drop {
        let (from, to) = t.link(d);
        Drop {
            from,
            to,
            scope: Scope::Count(d.u64_in(1, 3)),
        }
    }
}

impl Kind for Drop {
    const NAME: &'static str = "drop";
    /// Its weight in random draws.
    const WEIGHT: u32 = 2;

    fn nodes(&self) -> Vec<&str> {
        vec![&self.from, &self.to]
    }

    fn draw(d: &mut dyn Draw, t: &dyn Targets, _: &Sizes) -> Self {
        Drop::random(d, t)
    }

    fn scope_mut(&mut self) -> Option<&mut Scope> {
        Some(&mut self.scope)
    }

    fn apply<M: Message>(&self, w: &mut World<M>) {
        arm_link(w, Some(&self.from), &self.to, RuleAction::Drop, self.scope);
    }
}
