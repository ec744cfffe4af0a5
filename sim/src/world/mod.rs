//! The world: nodes, their inboxes and clocks, the network, the agenda of
//! timed happenings, and the journal. One world per run, on its run's thread.
//!
//! Execution model. Every node is a madsim node whose one task takes inputs
//! from its inbox and runs the actor's handler. Everything that happens *at a
//! time* — a message arriving, a timer firing, a fault starting or ending —
//! sits in one agenda ordered by (true time, sequence number), worked through
//! by the supervisor task (madsim's main task). Arrivals and timers go into the
//! inbox of their node; a paused node's task is held by madsim, so its inbox
//! fills up and its timers are handled late, as on a real machine.
//!
//! One file per concern: [`WorldBuilder`] (`builder`), the state and the
//! journal (here), the agenda and the end of a run (`agenda`), `after`
//! triggers (`triggers`), stepping a node (`step`), sending (`send`), crash
//! and pause plumbing (`lifecycle`), the run's futures (`tasks`), the leak
//! counter (`live`) and the OS clocks that read the stepping node's
//! (`os_clocks`).

mod agenda;
mod builder;
mod lifecycle;
mod live;
mod os_clocks;
mod send;
mod step;
mod tasks;
mod triggers;

pub use builder::WorldBuilder;
pub use live::live_worlds;
pub(crate) use step::Input;
pub(crate) use tasks::{run_world, take_current};

use std::collections::{BTreeMap, BinaryHeap, VecDeque};
use std::sync::Arc;
use std::task::Waker;
use std::time::Duration;

use crate::actor::{Actor, Message, NodeId, NodeNames, TimerId};
use crate::clock::Clock;
use crate::fault::{ScheduledFault, Trigger};
use crate::journal::{Event, Journal, Name, Value};
use crate::net::Network;
use crate::run::{Limits, Outcome};

use agenda::{Item, Scheduled};
use live::LIVE_WORLDS;
use step::Rest;
use triggers::PendingTrigger;

/// Name used in the journal for events of the world as a whole (partitions).
pub const WORLD_NODE: &str = "world";

pub(crate) struct Node<M> {
    actor: Box<dyn Actor<M>>,
    pub(crate) clock: Clock,
    inbox: VecDeque<Input<M>>,
    /// Timers set and not yet fired or cancelled → when each is due, on the
    /// node's monotonic clock, and its tag.
    live_timers: BTreeMap<TimerId, (i64, u64)>,
    waker: Option<Waker>,
    pub(crate) up: bool,
    pub(crate) pauses: u32,
    /// The rest of a step that a pause cut short.
    deferred: Option<Rest<M>>,
    /// Bumped on every crash, so that a dead incarnation's timers, task and
    /// pauses recognise themselves.
    pub(crate) epoch: u64,
    /// The actor's `is_done` (or the node powered off for good) after its
    /// latest handler call, crash or power-off.
    done: bool,
    /// Powered off for good by another node: the run no longer waits for it.
    pub(crate) powered_off: bool,
    madsim_id: Option<madsim::task::NodeId>,
}

/// The state of a running world.
pub struct World<M> {
    pub(crate) names: NodeNames,
    pub(crate) nodes: Vec<Node<M>>,
    pub(crate) net: Network,
    pub(crate) journal: Journal,
    /// Shared, so that applying one borrows it while the world changes.
    faults: Arc<[ScheduledFault]>,
    /// True time at which each fault fired (`None`: not yet, or never).
    pub(crate) fired_ns: Vec<Option<u64>>,
    triggers: Vec<PendingTrigger>,
    /// Faults fired by events, applied as soon as the event is journalled.
    fired: Vec<usize>,
    /// Crashes of the stepping node, applied at the end of its step.
    postponed: Vec<usize>,
    /// The node whose step is being carried out.
    stepping: Option<NodeId>,
    agenda: BinaryHeap<Scheduled<M>>,
    agenda_seq: u64,
    agenda_waker: Option<Waker>,
    /// Set when something needs the supervisor before its deadline.
    agenda_poked: bool,
    /// When the supervisor will next wake up by itself.
    agenda_deadline: u64,
    in_flight: usize,
    /// Inputs waiting in all inboxes, and actors not done: what the end of
    /// a run depends on, kept as counts so that checking for it after
    /// every step does not visit every node.
    queued_inputs: usize,
    undone: usize,
    next_msg: u64,
    next_timer: u64,
    limits: Limits,
    time: madsim::time::TimeHandle,
    start: Duration,
    rng: madsim::rand::GlobalRng,
    pub(crate) stop: Option<Outcome>,
    /// True time at which the run ended.
    end_ns: u64,
    /// The node whose handler is running (to name it when it panics).
    pub(crate) current: Option<NodeId>,
    /// An empty buffer, kept between steps, for the next step's events.
    spare_events: Vec<crate::capture::RawEvent>,
    /// Where the waiter of a run with a budget sees which node runs.
    pub(crate) watch: Option<std::sync::Arc<crate::run::Watch>>,
}

impl<M: Message> World<M> {
    fn new(builder: WorldBuilder<M>) -> Self {
        let (names, actors): (Vec<String>, Vec<_>) = builder.nodes.into_iter().unzip();
        let names = NodeNames::new(names);
        let index = |name: &str| {
            names
                .id(name)
                .unwrap_or_else(|| panic!("unknown node {name:?} in the network or faults"))
        };
        let links = builder
            .net
            .links
            .iter()
            .map(|(a, b, cfg)| ((index(a), index(b)), cfg.clone()))
            .collect();
        for f in &builder.faults {
            for n in f.fault.nodes() {
                index(n);
            }
            if let Trigger::After { node, .. } = &f.trigger {
                index(node);
            }
        }
        let time = madsim::time::TimeHandle::current();
        let start = time.elapsed();
        os_clocks::install(&time);
        LIVE_WORLDS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let mut world = World {
            nodes: actors
                .into_iter()
                .map(|actor| Node {
                    done: actor.is_done(),
                    actor,
                    clock: Clock::default(),
                    inbox: VecDeque::from([Input::Start]),
                    live_timers: BTreeMap::new(),
                    waker: None,
                    up: true,
                    pauses: 0,
                    deferred: None,
                    epoch: 0,
                    powered_off: false,
                    madsim_id: None,
                })
                .collect(),
            names,
            net: Network::new(builder.net.default, links),
            journal: Journal::default(),
            fired_ns: vec![None; builder.faults.len()],
            faults: builder.faults.into(),
            triggers: Vec::new(),
            fired: Vec::new(),
            postponed: Vec::new(),
            stepping: None,
            agenda: BinaryHeap::new(),
            agenda_seq: 0,
            agenda_waker: None,
            agenda_poked: false,
            agenda_deadline: 0,
            in_flight: 0,
            queued_inputs: 0,
            undone: 0,
            next_msg: 0,
            next_timer: 0,
            limits: builder.limits,
            time,
            start,
            rng: madsim::rand::thread_rng(),
            stop: None,
            end_ns: 0,
            current: None,
            spare_events: Vec::new(),
            watch: crate::run::watch(),
        };
        if let Some(watch) = &world.watch {
            watch.names(world.names.iter().map(|n| n.as_str().to_owned()).collect());
        }
        crate::capture::share_node_names(&world.names);
        world.queued_inputs = world.nodes.len();
        world.undone = world.nodes.iter().filter(|n| !n.done).count();
        world.arm_triggers();
        world
    }

    /// Node `id`'s actor was just called (or crashed, or was powered off or
    /// restarted): counts it done or not.
    pub(crate) fn note_done(&mut self, id: NodeId) {
        let node = &mut self.nodes[id];
        let done = node.actor.is_done() || node.powered_off;
        if done != node.done {
            node.done = done;
            if done {
                self.undone -= 1;
            } else {
                self.undone += 1;
            }
        }
    }

    /// Takes node `id`'s next input, if any.
    pub(crate) fn pop_input(&mut self, id: NodeId) -> Option<Input<M>> {
        let input = self.nodes[id].inbox.pop_front()?;
        self.queued_inputs -= 1;
        Some(input)
    }

    /// True time since the start of the run, in nanoseconds.
    pub(crate) fn now_ns(&self) -> u64 {
        (self.time.elapsed() - self.start).as_nanos() as u64
    }

    /// What the live nodes' code waits on that nothing in the world will
    /// end, node by node in the world's order.
    pub(crate) fn undriven_waits(&self) -> Vec<crate::run::Wait> {
        let live = self.nodes.iter().enumerate().filter(|(_, n)| n.up);
        live.flat_map(|(id, n)| {
            let node = self.names[id].to_string();
            n.actor
                .undriven_waits()
                .into_iter()
                .map(move |what| crate::run::Wait {
                    node: node.clone(),
                    what,
                })
        })
        .collect()
    }

    /// The madsim nodes the world created.
    pub(crate) fn madsim_nodes(&self) -> Vec<madsim::task::NodeId> {
        self.nodes.iter().filter_map(|n| n.madsim_id).collect()
    }

    /// Drops everything that refers to the run's tasks (wakers, queued
    /// inputs, the agenda): the run is over.
    pub(crate) fn dismantle(&mut self) {
        self.agenda_waker = None;
        self.agenda.clear();
        for node in &mut self.nodes {
            node.waker = None;
            node.inbox.clear();
            node.deferred = None;
        }
        self.queued_inputs = 0;
    }

    /// Simulated time at the end of a run (the runtime may be gone).
    pub(crate) fn now_ns_outside(&self) -> u64 {
        self.journal
            .events()
            .last()
            .map_or(0, |e| e.t_ns)
            .max(self.end_ns)
    }

    pub(crate) fn node_id(&self, name: &str) -> NodeId {
        self.names
            .id(name)
            .unwrap_or_else(|| panic!("unknown node {name:?}"))
    }

    /// Appends a world event (one of [`crate::events`], with its fields),
    /// stamped now, for `node` (`None`: the world itself), and fires the
    /// faults it triggers.
    pub(crate) fn record(
        &mut self,
        node: Option<NodeId>,
        kind: &'static str,
        fields: impl IntoIterator<Item = (&'static str, Value)>,
    ) {
        if self.stop.is_some() {
            return;
        }
        let fields = fields
            .into_iter()
            .map(|(k, v)| (Name::from_static(k), v))
            .collect();
        self.record_owned(node, Name::from_static(kind), fields);
    }

    fn record_owned(&mut self, node: Option<NodeId>, kind: Name, fields: Vec<(Name, Value)>) {
        if self.stop.is_some() {
            return;
        }
        let t_ns = self.now_ns();
        let (name, local_ns) = match node {
            Some(id) => (self.names[id].clone(), self.nodes[id].clock.wall_ns(t_ns)),
            None => (Name::from_static(WORLD_NODE), t_ns as i64),
        };
        let event = Event {
            seq: self.journal.len() as u64,
            t_ns,
            node: name,
            local_ns,
            kind,
            fields,
        };
        let delayed = self.match_triggers(node, &event, t_ns);
        self.journal.push(event);
        for (at, fault) in delayed {
            self.schedule(at, Item::Fault(fault));
        }
        if self.journal.len() as u64 >= self.limits.max_events {
            self.finish(Outcome::EventLimit);
        }
    }
}
