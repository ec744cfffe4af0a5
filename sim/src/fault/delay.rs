//! Delay: hold messages on one link back by `extra` on top of their latency
//! ("the next message from client1 to storage, 20 s late"), or every
//! message to one node ("hold messages to client2 for 3 s").

use std::time::Duration;

use crate::actor::Message;
use crate::fault::random::{millis, Draw, Sizes, Targets};
use crate::fault::{arm_link, Kind, Scope};
use crate::net::RuleAction;
use crate::world::World;

/// Delay messages from `from` (every sender when `None`) to `to`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delay {
    /// Sender; `None`: every node sending to `to`.
    pub from: Option<String>,
    /// Receiver.
    pub to: String,
    /// Added to each affected message's latency.
    pub extra: Duration,
    /// Which messages.
    pub scope: Scope,
}

impl Delay {
    /// A random delay of 100 ms to `max_delay` extra. Seven times in ten on
    /// a target link, on the next message (four times in five) or the next
    /// 2 to 4; else a hold of every message to a target node, or on a target
    /// link, for a window of 100 ms to `max_delay` (a reply held past a
    /// lease, a node that hears nothing for a while).
    pub fn random(d: &mut dyn Draw, t: &dyn Targets, sizes: &Sizes) -> Delay {
        if d.chance(0.7) {
            let (from, to) = t.link(d);
            let extra = millis(d, sizes.max_delay);
            let count = if d.chance(0.8) { 1 } else { d.u64_in(2, 4) };
            return Delay {
                from: Some(from),
                to,
                extra,
                scope: Scope::Count(count),
            };
        }
        let (from, to) = if d.chance(0.5) {
            (None, t.node(d))
        } else {
            let (from, to) = t.link(d);
            (Some(from), to)
        };
        Delay {
            from,
            to,
            extra: millis(d, sizes.max_delay),
            scope: Scope::Window(millis(d, sizes.max_delay)),
        }
    }
}

impl Kind for Delay {
    const NAME: &'static str = "delay";
    /// Its weight in random draws.
    const WEIGHT: u32 = 3;

    fn nodes(&self) -> Vec<&str> {
        self.from
            .iter()
            .map(String::as_str)
            .chain([self.to.as_str()])
            .collect()
    }

    fn draw(d: &mut dyn Draw, t: &dyn Targets, sizes: &Sizes) -> Self {
        Delay::random(d, t, sizes)
    }

    /// Its `extra`.
    fn magnitude(&self) -> Option<Duration> {
        Some(self.extra)
    }

    fn set_magnitude(&mut self, d: Duration) {
        self.extra = d;
    }

    fn scope_mut(&mut self) -> Option<&mut Scope> {
        Some(&mut self.scope)
    }

    fn apply<M: Message>(&self, w: &mut World<M>) {
        arm_link(
            w,
            self.from.as_deref(),
            &self.to,
            RuleAction::Delay(self.extra),
            self.scope,
        );
    }
}
