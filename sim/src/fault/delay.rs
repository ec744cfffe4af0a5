//! Delay: hold messages on one link back by `extra` on top of their latency
//! ("the next message from client1 to storage, 20 s late").

use std::time::Duration;

use crate::actor::Message;
use crate::fault::random::{millis, Draw, Sizes, Targets};
use crate::fault::{arm_link, Scope};
use crate::net::RuleAction;
use crate::world::World;

/// The kind's name, as scenario files spell it.
pub(crate) const NAME: &str = "delay";
/// Its weight in random draws.
pub(crate) const WEIGHT: u32 = 3;

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
    /// A random delay on a target link: 100 ms to `max_delay` extra, on the
    /// next message four times in five, else on the next 2 to 4.
    pub fn random(d: &mut dyn Draw, t: &dyn Targets, sizes: &Sizes) -> Delay {
        let (from, to) = t.link(d);
        let extra = millis(d, sizes.max_delay);
        let count = if d.chance(0.8) { 1 } else { d.u64_in(2, 4) };
        Delay {
            from,
            to,
            extra,
            scope: Scope::Count(count),
        }
    }

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
