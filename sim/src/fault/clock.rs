//! Clock: skew (`offset`), drift (`rate`) and steps (`jump`) of one node's
//! clocks, holding from the trigger on. See [`crate::clock`] for the model.

use crate::actor::Message;
use crate::events::{self, field};
use crate::fault::random::{signed_ns, Draw, Sizes, Targets};
use crate::world::World;

/// The kind's name, as scenario files spell it.
pub(crate) const NAME: &str = "clock";
/// Its weight in random draws.
pub(crate) const WEIGHT: u32 = 2;

/// Change `node`'s clocks.
#[derive(Clone, Debug, PartialEq)]
pub struct ClockChange {
    /// The node whose clocks change.
    pub node: String,
    /// Set the wall clock this far from true time (nanoseconds, signed).
    pub offset_ns: Option<i64>,
    /// Run both clocks at this rate (1.1 = 10% fast).
    pub rate: Option<f64>,
    /// Step the wall clock by this much (nanoseconds, signed).
    pub jump_ns: Option<i64>,
}

impl ClockChange {
    /// A random change of a target node's clocks: a jump half the time
    /// (up to `max_jump`, either sign), a drift three times in ten (rate
    /// 0.50 to 2.00 in steps of 0.05), else an offset (as a jump).
    pub fn random(d: &mut dyn Draw, t: &dyn Targets, sizes: &Sizes) -> ClockChange {
        let mut change = ClockChange {
            node: t.node(d),
            offset_ns: None,
            rate: None,
            jump_ns: None,
        };
        match d.u32_in(0, 9) {
            0..=4 => change.jump_ns = Some(signed_ns(d, sizes.max_jump)),
            5..=7 => change.rate = Some(f64::from(d.u32_in(10, 40)) / 20.0),
            _ => change.offset_ns = Some(signed_ns(d, sizes.max_jump)),
        }
        change
    }

    pub(crate) fn apply<M: Message>(&self, w: &mut World<M>) {
        let id = w.node_id(&self.node);
        let now = w.now_ns();
        let clock = &mut w.nodes[id].clock;
        let mut fields = Vec::new();
        if let Some(rate) = self.rate {
            clock.set_rate(now, rate);
            fields.push((field::RATE, rate.into()));
        }
        if let Some(offset) = self.offset_ns {
            clock.set_offset(now, offset);
            fields.push((field::OFFSET_NS, offset.into()));
        }
        if let Some(jump) = self.jump_ns {
            clock.jump(now, jump);
            fields.push((field::JUMP_NS, jump.into()));
        }
        w.record(Some(id), events::CLOCK, fields);
        if self.rate.is_some() {
            w.rearm_timers(id);
        }
    }
}
