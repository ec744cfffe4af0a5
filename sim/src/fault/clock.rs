//! Clock: skew (`offset`), drift (`rate`) and steps (`jump`) of one node's
//! clocks, holding from the trigger on. See [`crate::clock`] for the model.

use crate::actor::Message;
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
    pub(crate) fn apply<M: Message>(&self, w: &mut World<M>) {
        let id = w.node_id(&self.node);
        let now = w.now_ns();
        let clock = &mut w.nodes[id].clock;
        let mut fields = Vec::new();
        if let Some(rate) = self.rate {
            clock.set_rate(now, rate);
            fields.push(("rate", rate.into()));
        }
        if let Some(offset) = self.offset_ns {
            clock.set_offset(now, offset);
            fields.push(("offset_ns", offset.into()));
        }
        if let Some(jump) = self.jump_ns {
            clock.jump(now, jump);
            fields.push(("jump_ns", jump.into()));
        }
        w.record(Some(id), "clock", fields);
    }
}
