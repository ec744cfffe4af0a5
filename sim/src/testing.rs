//! Driving an actor by hand, without a runtime: for unit tests of sans-IO
//! designs.
//!
//! ```
//! use sim::testing::Harness;
//! use sim::{Actor, Context, Message, NodeId};
//! use std::time::Duration;
//! #[derive(Clone, Debug, PartialEq)]
//! struct Ping(u32);
//! impl Message for Ping {
//!     fn summary(&self) -> String { format!("ping {}", self.0) }
//! }
//! struct Echo;
//! impl Actor<Ping> for Echo {
//!     fn on_message(&mut self, ctx: &mut Context<'_, Ping>, from: NodeId, msg: Ping) {
//!         sim::emit!("echo", n = msg.0);
//!         ctx.send(from, Ping(msg.0 + 1));
//!     }
//! }
//! let mut h = Harness::new(&["echo", "peer"], 0);
//! let step = h.message(&mut Echo, 1, Ping(1));
//! assert_eq!(step.sends, vec![(1, Ping(2))]);
//! assert_eq!(step.events[0].0, "echo");
//! ```

use std::time::Duration;

use rand::rngs::StdRng;
use rand::SeedableRng;

use crate::actor::{Actor, Context, Message, NodeId, NodeNames, Outputs, TimerId, TimerOp};
use crate::capture;
use crate::journal::{Name, Value};

/// What one handler call produced.
#[derive(Debug)]
pub struct Step<M> {
    /// Messages sent, in order.
    pub sends: Vec<(NodeId, M)>,
    /// Timers set: id, delay on the node's monotonic clock, tag.
    pub timers: Vec<(TimerId, Duration, u64)>,
    /// Timers cancelled.
    pub cancelled: Vec<TimerId>,
    /// Nodes powered off ([`Context::power_off`]), each with its restart
    /// delay.
    pub power_offs: Vec<(NodeId, Option<Duration>)>,
    /// Events emitted: kind and fields.
    pub events: Vec<(Name, Vec<(Name, Value)>)>,
}

impl<M> Step<M> {
    /// The first emitted event of `kind`, if any.
    pub fn event(&self, kind: &str) -> Option<&[(Name, Value)]> {
        self.events
            .iter()
            .find(|(k, _)| *k == *kind)
            .map(|(_, f)| f.as_slice())
    }
}

/// Hosts calls to one actor as node `me` among `names`, at a clock you set.
pub struct Harness {
    names: NodeNames,
    me: NodeId,
    /// Monotonic clock reading handed to the next call, in nanoseconds.
    pub mono_ns: i64,
    /// Wall clock reading handed to the next call, in nanoseconds.
    pub wall_ns: i64,
    next_timer: u64,
    rng: StdRng,
    _dispatch: tracing::subscriber::DefaultGuard,
}

impl Harness {
    /// A harness where the actor under test is node `me` of `names`.
    pub fn new(names: &[&str], me: NodeId) -> Self {
        Harness {
            names: NodeNames::new(names.iter().map(|n| n.to_string()).collect()),
            me,
            mono_ns: 0,
            wall_ns: 0,
            next_timer: 0,
            rng: StdRng::seed_from_u64(0),
            _dispatch: capture::install(),
        }
    }

    /// Moves both clocks forward by `d`.
    pub fn advance(&mut self, d: Duration) {
        self.mono_ns += d.as_nanos() as i64;
        self.wall_ns += d.as_nanos() as i64;
    }

    fn call<M: Message>(&mut self, f: impl FnOnce(&mut Context<'_, M>)) -> Step<M> {
        let mut out = Outputs::default();
        let mut ctx = Context {
            me: self.me,
            names: &self.names,
            mono_ns: self.mono_ns,
            wall_ns: self.wall_ns,
            out: &mut out,
            next_timer: &mut self.next_timer,
            rng: &mut self.rng,
        };
        f(&mut ctx);
        let mut step = Step {
            sends: out
                .sends
                .into_iter()
                .map(|(_, to, msg)| (to, msg))
                .collect(),
            timers: Vec::new(),
            cancelled: Vec::new(),
            power_offs: out
                .power_offs
                .into_iter()
                .map(|(_, node, restart)| (node, restart))
                .collect(),
            events: capture::drain()
                .into_iter()
                .map(|e| (e.kind, e.fields))
                .collect(),
        };
        for (_, op) in out.timers {
            match op {
                TimerOp::Set { id, after, tag } => step.timers.push((id, after, tag)),
                TimerOp::Cancel(id) => step.cancelled.push(id),
            }
        }
        step
    }

    /// Calls `on_start`.
    pub fn start<M: Message>(&mut self, actor: &mut dyn Actor<M>) -> Step<M> {
        self.call(|ctx| actor.on_start(ctx))
    }

    /// Calls `on_message` with a message from node `from`.
    pub fn message<M: Message>(
        &mut self,
        actor: &mut dyn Actor<M>,
        from: NodeId,
        msg: M,
    ) -> Step<M> {
        self.call(|ctx| actor.on_message(ctx, from, msg))
    }

    /// Calls `on_timer`.
    pub fn timer<M: Message>(
        &mut self,
        actor: &mut dyn Actor<M>,
        id: TimerId,
        tag: u64,
    ) -> Step<M> {
        self.call(|ctx| actor.on_timer(ctx, id, tag))
    }
}
