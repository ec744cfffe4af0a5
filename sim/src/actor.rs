//! Actors: the sans-IO state machines that nodes host.
//!
//! An actor never performs I/O. Each handler gets a [`Context`] that reads the
//! node's clocks and collects outputs (messages to send, timers to set); the
//! world carries them out after the handler returns. Journal events are emitted
//! with [`crate::emit!`] from inside a handler. The same actor can therefore
//! be driven by hand in a unit test (see [`crate::testing::Harness`]) or hosted
//! by the world.
//!
//! ```
//! use sim::{Actor, Context, Message, NodeId};
//! #[derive(Clone, Debug)]
//! struct Ping;
//! impl Message for Ping {
//!     fn summary(&self) -> String { "ping".into() }
//! }
//! /// Answers every ping with a ping.
//! struct Echo;
//! impl Actor<Ping> for Echo {
//!     fn on_message(&mut self, ctx: &mut Context<'_, Ping>, from: NodeId, msg: Ping) {
//!         sim::emit!("echoed", from = ctx.name_of(from));
//!         ctx.send(from, msg);
//!     }
//! }
//! ```

use std::fmt::Debug;
use std::time::Duration;

use rand::RngCore;

use crate::journal::Name;

/// Index of a node in its world, in the order nodes were added.
pub type NodeId = usize;

/// Identifies a timer set by an actor; unique within a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimerId(pub u64);

/// What actors send each other.
pub trait Message: Clone + Debug + 'static {
    /// A short human summary for the journal (`"grant lease=1 token=33"`).
    fn summary(&self) -> String;
}

/// A state machine hosted by a node.
pub trait Actor<M: Message>: 'static {
    /// The node starts, or restarts after a crash. An actor that only
    /// answers keeps the default, which does nothing.
    fn on_start(&mut self, _ctx: &mut Context<'_, M>) {}
    /// A message arrived.
    fn on_message(&mut self, ctx: &mut Context<'_, M>, from: NodeId, msg: M);
    /// A timer set with [`Context::set_timer`] fired. An actor that sets
    /// none keeps the default, which does nothing.
    fn on_timer(&mut self, _ctx: &mut Context<'_, M>, _id: TimerId, _tag: u64) {}
    /// The node crashed: forget what would not survive (volatile state), keep
    /// what is durable. `on_start` follows on restart. Timers are already gone.
    fn on_crash(&mut self) {}
    /// Whether this actor has finished its work. A run completes when every
    /// actor is done; servers are always done. The world asks after each
    /// handler call and crash, so the answer may change only in those.
    fn is_done(&self) -> bool {
        true
    }
    /// What this actor waits on that nothing in the world will ever end,
    /// one phrase each (`"task 2 awaits …"`). Asked when a run is cut
    /// short, so that a stall says what it stalled on. A state machine only
    /// waits on the world's own inputs: the default says nothing.
    fn undriven_waits(&self) -> Vec<String> {
        Vec::new()
    }
}

/// A timer operation requested by a handler.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum TimerOp {
    Set {
        id: TimerId,
        after: Duration,
        tag: u64,
    },
    Cancel(TimerId),
}

/// What a handler asked for; carried out by the world after it returns.
/// Each output remembers how many events the handler had emitted before it
/// (its mark), so that a fault fired by an event can cut the step there.
#[derive(Debug)]
pub(crate) struct Outputs<M> {
    pub sends: Vec<(usize, NodeId, M)>,
    pub timers: Vec<(usize, TimerOp)>,
    /// Nodes to power off, each with when to restart it.
    pub power_offs: Vec<(usize, NodeId, Option<Duration>)>,
}

impl<M> Default for Outputs<M> {
    fn default() -> Self {
        Outputs {
            sends: Vec::new(),
            timers: Vec::new(),
            power_offs: Vec::new(),
        }
    }
}

/// The world's node names, indexed both ways: by id, and by name through a
/// sorted permutation, so that finding a peer by name costs O(log n) in a
/// world of a thousand clients instead of a scan of every name.
#[derive(Debug)]
pub(crate) struct NodeNames {
    /// Each node's name: the one copy every event of the run shares.
    names: Vec<Name>,
    /// Ids in the order of their names (then of their ids).
    by_name: Vec<NodeId>,
}

impl NodeNames {
    pub(crate) fn new(names: Vec<String>) -> Self {
        let names: Vec<Name> = names.into_iter().map(Name::from).collect();
        let mut by_name: Vec<NodeId> = (0..names.len()).collect();
        by_name.sort_by(|&a, &b| names[a].cmp(&names[b]).then(a.cmp(&b)));
        NodeNames { names, by_name }
    }

    /// The first node called `name`.
    pub(crate) fn id(&self, name: &str) -> Option<NodeId> {
        let at = self
            .by_name
            .partition_point(|&id| self.names[id].as_str() < name);
        self.by_name
            .get(at)
            .copied()
            .filter(|&id| self.names[id] == name)
    }
}

impl std::ops::Deref for NodeNames {
    type Target = [Name];

    fn deref(&self) -> &[Name] {
        &self.names
    }
}

/// A handler's view of its node: clocks, peers, randomness and outputs.
pub struct Context<'a, M> {
    pub(crate) me: NodeId,
    pub(crate) names: &'a NodeNames,
    pub(crate) mono_ns: i64,
    pub(crate) wall_ns: i64,
    pub(crate) out: &'a mut Outputs<M>,
    pub(crate) next_timer: &'a mut u64,
    pub(crate) rng: &'a mut dyn RngCore,
}

impl<'a, M: Message> Context<'a, M> {
    /// This node's id.
    pub fn me(&self) -> NodeId {
        self.me
    }

    /// This node's name.
    pub fn name(&self) -> &str {
        &self.names[self.me]
    }

    /// The name of node `id`.
    pub fn name_of(&self, id: NodeId) -> &str {
        &self.names[id]
    }

    /// The id of the node called `name`, if there is one.
    pub fn node(&self, name: &str) -> Option<NodeId> {
        self.names.id(name)
    }

    /// The node's monotonic clock: starts at 0, runs at the node's rate,
    /// never steps. Use it for timeouts and lease durations. Inside a
    /// handler, `Instant::now()` reads the same clock.
    pub fn now(&self) -> Duration {
        Duration::from_nanos(self.mono_ns.max(0) as u64)
    }

    /// The node's monotonic clock in nanoseconds.
    pub fn mono_ns(&self) -> i64 {
        self.mono_ns
    }

    /// The node's wall clock in nanoseconds since the world's epoch: skewed,
    /// drifting, and able to jump forward or back (negative after a jump
    /// before the epoch). Inside a handler, `SystemTime::now()` reads the
    /// same clock, on madsim's epoch.
    pub fn wall_ns(&self) -> i64 {
        self.wall_ns
    }

    /// Sends `msg` to node `to` through the simulated network.
    pub fn send(&mut self, to: NodeId, msg: M) {
        assert!(to < self.names.len(), "send to unknown node {to}");
        self.out.sends.push((crate::capture::len(), to, msg));
    }

    /// Sets a timer that fires after `after` on this node's monotonic clock
    /// (so a fast clock fires it early in true time, and a paused node late).
    /// `tag` comes back in [`Actor::on_timer`].
    pub fn set_timer(&mut self, after: Duration, tag: u64) -> TimerId {
        let id = TimerId(*self.next_timer);
        *self.next_timer += 1;
        self.out
            .timers
            .push((crate::capture::len(), TimerOp::Set { id, after, tag }));
        id
    }

    /// Cancels a timer; cancelling one that already fired does nothing.
    pub fn cancel_timer(&mut self, id: TimerId) {
        self.out
            .timers
            .push((crate::capture::len(), TimerOp::Cancel(id)));
    }

    /// Powers node `node` off, as a fencing agent does (STONITH: "shoot the
    /// other node in the head", a power switch or a cloud API's instance
    /// stop): the node crashes exactly as under a crash fault, journaled as
    /// its `crash` with `by` naming this node, and restarts after
    /// `restart_after` if given. A node powered off for good counts as
    /// finished: the run does not wait for it.
    ///
    /// It takes effect where the handler asked for it: events the handler
    /// emits after this call are journaled after the `crash`, so "power
    /// off, then grant" reads in that order. Messages the node sent before
    /// are already in the network and still arrive: powering a node off
    /// does not recall them.
    ///
    /// # Panics
    /// If `node` is this node (an actor stops itself by other means) or
    /// does not exist.
    pub fn power_off(&mut self, node: NodeId, restart_after: Option<Duration>) {
        assert!(node < self.names.len(), "power off unknown node {node}");
        assert!(node != self.me, "{} cannot power itself off", self.name());
        self.out
            .power_offs
            .push((crate::capture::len(), node, restart_after));
    }

    /// The run's seeded random number generator.
    pub fn rng(&mut self) -> &mut dyn RngCore {
        self.rng
    }
}
