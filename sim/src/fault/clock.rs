//! Clock: skew (`offset`), drift (`rate`) and steps (`jump`) of one node's
//! clocks, holding from the trigger on. See [`crate::clock`] for the model.

use std::time::Duration;

use crate::actor::Message;
use crate::events::{self, field};
use crate::fault::random::{signed_ns, Draw, Sizes, Targets};
use crate::fault::Kind;
use crate::world::World;

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
}

impl Kind for ClockChange {
    const NAME: &'static str = "clock";
    /// Its weight in random draws.
    const WEIGHT: u32 = 2;

    fn nodes(&self) -> Vec<&str> {
        vec![&self.node]
    }

    fn draw(d: &mut dyn Draw, t: &dyn Targets, sizes: &Sizes) -> Self {
        ClockChange::random(d, t, sizes)
    }

    /// A jump's size, when the change only jumps.
    fn magnitude(&self) -> Option<Duration> {
        match self {
            ClockChange {
                jump_ns: Some(ns),
                offset_ns: None,
                rate: None,
                ..
            } => Some(Duration::from_nanos(ns.unsigned_abs())),
            _ => None,
        }
    }

    /// Sets a jump's size, keeping its sign.
    fn set_magnitude(&mut self, d: Duration) {
        if let Some(ns) = &mut self.jump_ns {
            *ns = ns.signum() * d.as_nanos() as i64;
        }
    }

    fn apply<M: Message>(&self, w: &mut World<M>) {
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
