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

use std::any::Any;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context as TaskContext, Poll, Waker};
use std::time::Duration;

use crate::actor::{Actor, Context, Message, NodeId, Outputs, TimerId, TimerOp};
use crate::capture;
use crate::clock::Clock;
use crate::fault::{FollowUp, ScheduledFault, Trigger};
use crate::journal::{Event, Journal, Value};
use crate::net::{Fate, NetConfig, Network};
use crate::run::{Limits, Outcome};

/// Name used in the journal for events of the world as a whole (partitions).
pub const WORLD_NODE: &str = "world";

/// Everything a world is made of, before it runs.
pub struct WorldBuilder<M> {
    pub(crate) nodes: Vec<(String, Box<dyn Actor<M>>)>,
    pub(crate) net: NetConfig,
    pub(crate) faults: Vec<ScheduledFault>,
    pub(crate) limits: Limits,
}

impl<M: Message> WorldBuilder<M> {
    /// An empty world with these limits.
    pub fn new(limits: Limits) -> Self {
        WorldBuilder {
            nodes: Vec::new(),
            net: NetConfig::default(),
            faults: Vec::new(),
            limits,
        }
    }

    /// Adds a node hosting `actor`; nodes are numbered in the order added.
    ///
    /// # Panics
    /// If the name is empty, taken, or `world`.
    pub fn node(&mut self, name: impl Into<String>, actor: impl Actor<M>) -> NodeId {
        let name = name.into();
        assert!(
            !name.is_empty() && name != WORLD_NODE,
            "invalid node name {name:?}"
        );
        assert!(
            self.nodes.iter().all(|(n, _)| *n != name),
            "duplicate node name {name:?}"
        );
        self.nodes.push((name, Box::new(actor)));
        self.nodes.len() - 1
    }

    /// Sets the network.
    pub fn network(&mut self, net: NetConfig) -> &mut Self {
        self.net = net;
        self
    }

    /// Adds a fault.
    pub fn fault(&mut self, fault: ScheduledFault) -> &mut Self {
        self.faults.push(fault);
        self
    }
}

pub(crate) enum Input<M> {
    Start,
    Message {
        id: u64,
        from: NodeId,
        msg: M,
        /// Its `deliver` is journalled already (a pause held its handling).
        noted: bool,
    },
    Timer {
        id: TimerId,
        tag: u64,
    },
}

/// What a step still has to do: events from the `first`-th on, and the
/// outputs marked with the number of events emitted before them.
pub(crate) struct Rest<M> {
    events: Vec<capture::RawEvent>,
    first: usize,
    timers: Vec<(usize, TimerOp)>,
    sends: Vec<(usize, NodeId, M)>,
}

impl<M> Rest<M> {
    fn is_empty(&self) -> bool {
        self.events.is_empty() && self.timers.is_empty() && self.sends.is_empty()
    }
}

enum Item<M> {
    Arrive {
        id: u64,
        from: NodeId,
        to: NodeId,
        msg: M,
    },
    Timer {
        node: NodeId,
        epoch: u64,
        id: TimerId,
        tag: u64,
    },
    Fault(usize),
    FollowUp(FollowUp),
}

pub(crate) struct Node<M> {
    actor: Box<dyn Actor<M>>,
    pub(crate) clock: Clock,
    inbox: VecDeque<Input<M>>,
    live_timers: BTreeSet<TimerId>,
    waker: Option<Waker>,
    pub(crate) up: bool,
    pub(crate) pauses: u32,
    /// The rest of a step that a pause cut short.
    deferred: Option<Rest<M>>,
    /// Bumped on every crash, so that a dead incarnation's timers, task and
    /// pauses recognise themselves.
    pub(crate) epoch: u64,
    madsim_id: Option<madsim::task::NodeId>,
}

struct PendingTrigger {
    node: String,
    kind: String,
    nth: u32,
    seen: u32,
    delay: Duration,
    fault: usize,
}

/// The state of a running world.
pub struct World<M> {
    pub(crate) names: Vec<String>,
    pub(crate) nodes: Vec<Node<M>>,
    pub(crate) net: Network,
    pub(crate) journal: Journal,
    faults: Vec<ScheduledFault>,
    /// True time at which each fault fired (`None`: not yet, or never).
    pub(crate) fired_ns: Vec<Option<u64>>,
    triggers: Vec<PendingTrigger>,
    /// Faults fired by events, applied as soon as the event is journalled.
    fired: Vec<usize>,
    /// Crashes of the stepping node, applied at the end of its step.
    postponed: Vec<usize>,
    /// The node whose step is being carried out.
    stepping: Option<NodeId>,
    agenda: BTreeMap<(u64, u64), Item<M>>,
    agenda_seq: u64,
    agenda_waker: Option<Waker>,
    /// Set when something needs the supervisor before its deadline.
    agenda_poked: bool,
    /// When the supervisor will next wake up by itself.
    agenda_deadline: u64,
    in_flight: usize,
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
}

/// Worlds alive in this process (see [`live_worlds`]).
static LIVE_WORLDS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// How many worlds are alive in this process: 0 once every run has
/// returned. A world that outlives its run (a task of the run kept alive by
/// a reference cycle) is a leak that grows with every seed of a sweep.
pub fn live_worlds() -> usize {
    LIVE_WORLDS.load(std::sync::atomic::Ordering::SeqCst)
}

impl<M> Drop for World<M> {
    fn drop(&mut self) {
        LIVE_WORLDS.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

thread_local! {
    /// The world of this thread's run. Node tasks must be created through
    /// madsim's `Send + Sync` init closures, which can carry only an index,
    /// so they find their world here; each run has its own thread.
    static CURRENT: RefCell<Option<Rc<dyn Any>>> = const { RefCell::new(None) };
}

type Shared<M> = Rc<RefCell<World<M>>>;

fn current<M: Message>() -> Shared<M> {
    let any = CURRENT
        .with(|c| c.borrow().clone())
        .expect("no world on this thread");
    any.downcast::<RefCell<World<M>>>()
        .unwrap_or_else(|_| panic!("the world on this thread has another message type"))
}

/// Takes this thread's world out, if a run left one (after a panic).
pub(crate) fn take_current<M: Message>() -> Option<Shared<M>> {
    let any = CURRENT.with(|c| c.borrow_mut().take())?;
    any.downcast::<RefCell<World<M>>>().ok()
}

impl<M: Message> World<M> {
    fn new(builder: WorldBuilder<M>) -> Self {
        let names: Vec<String> = builder.nodes.iter().map(|(n, _)| n.clone()).collect();
        let index = |name: &str| {
            names
                .iter()
                .position(|n| n == name)
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
        LIVE_WORLDS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let mut world = World {
            nodes: builder
                .nodes
                .into_iter()
                .map(|(_, actor)| Node {
                    actor,
                    clock: Clock::default(),
                    inbox: VecDeque::from([Input::Start]),
                    live_timers: BTreeSet::new(),
                    waker: None,
                    up: true,
                    pauses: 0,
                    deferred: None,
                    epoch: 0,
                    madsim_id: None,
                })
                .collect(),
            names,
            net: Network::new(builder.net.default, links),
            journal: Journal::default(),
            fired_ns: vec![None; builder.faults.len()],
            faults: builder.faults,
            triggers: Vec::new(),
            fired: Vec::new(),
            postponed: Vec::new(),
            stepping: None,
            agenda: BTreeMap::new(),
            agenda_seq: 0,
            agenda_waker: None,
            agenda_poked: false,
            agenda_deadline: 0,
            in_flight: 0,
            next_msg: 0,
            next_timer: 0,
            limits: builder.limits,
            time,
            start,
            rng: madsim::rand::thread_rng(),
            stop: None,
            end_ns: 0,
            current: None,
        };
        for i in 0..world.faults.len() {
            match world.faults[i].trigger.clone() {
                Trigger::At(at) => world.schedule(at.as_nanos() as u64, Item::Fault(i)),
                Trigger::After {
                    node,
                    kind,
                    nth,
                    delay,
                } => world.triggers.push(PendingTrigger {
                    node,
                    kind,
                    nth: nth.max(1),
                    seen: 0,
                    delay,
                    fault: i,
                }),
            }
        }
        world
    }

    /// True time since the start of the run, in nanoseconds.
    pub(crate) fn now_ns(&self) -> u64 {
        (self.time.elapsed() - self.start).as_nanos() as u64
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
            .iter()
            .position(|n| n == name)
            .unwrap_or_else(|| panic!("unknown node {name:?}"))
    }

    /// Appends an event, stamped now, for `node` (`None`: the world itself),
    /// and fires the faults it triggers.
    pub(crate) fn record(&mut self, node: Option<NodeId>, kind: &str, fields: Vec<(&str, Value)>) {
        let fields = fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        self.record_owned(node, kind.to_owned(), fields);
    }

    fn record_owned(&mut self, node: Option<NodeId>, kind: String, fields: Vec<(String, Value)>) {
        if self.stop.is_some() {
            return;
        }
        let t_ns = self.now_ns();
        let (name, local_ns) = match node {
            Some(id) => (self.names[id].as_str(), self.nodes[id].clock.wall_ns(t_ns)),
            None => (WORLD_NODE, t_ns as i64),
        };
        let mut event = Event::new(self.journal.len() as u64, t_ns, name, local_ns, &kind);
        event.fields = fields;
        let mut delayed = Vec::new();
        for trig in &mut self.triggers {
            if trig.seen < trig.nth && event.node == trig.node && event.kind == trig.kind {
                trig.seen += 1;
                if trig.seen == trig.nth {
                    if trig.delay.is_zero() {
                        self.fired.push(trig.fault);
                    } else {
                        delayed.push((t_ns + trig.delay.as_nanos() as u64, trig.fault));
                    }
                }
            }
        }
        self.journal.push(event);
        for (at, fault) in delayed {
            self.schedule(at, Item::Fault(fault));
        }
        if self.journal.len() as u64 >= self.limits.max_events {
            self.finish(Outcome::EventLimit);
        }
    }

    fn schedule(&mut self, at_ns: u64, item: Item<M>) {
        let seq = self.agenda_seq;
        self.agenda_seq += 1;
        self.agenda.insert((at_ns, seq), item);
        self.wake_agenda_if_before(at_ns);
    }

    pub(crate) fn schedule_follow_up(&mut self, at_ns: u64, follow_up: FollowUp) {
        self.schedule(at_ns, Item::FollowUp(follow_up));
    }

    fn wake_agenda_if_before(&mut self, at_ns: u64) {
        if at_ns < self.agenda_deadline {
            self.poke_agenda();
        }
    }

    fn poke_agenda(&mut self) {
        self.agenda_poked = true;
        if let Some(w) = self.agenda_waker.take() {
            w.wake();
        }
    }

    fn finish(&mut self, outcome: Outcome) {
        if self.stop.is_none() {
            self.end_ns = self.now_ns();
            self.stop = Some(outcome);
            self.poke_agenda();
        }
    }

    fn deliver_input(&mut self, node: NodeId, input: Input<M>) {
        let n = &mut self.nodes[node];
        n.inbox.push_back(input);
        if let Some(w) = n.waker.take() {
            w.wake();
        }
    }

    pub(crate) fn madsim_pause(&mut self, id: NodeId, pause: bool) {
        if let Some(mid) = self.nodes[id].madsim_id {
            let handle = madsim::runtime::Handle::current();
            if pause {
                handle.pause(mid);
            } else {
                handle.resume(mid);
            }
        }
    }

    pub(crate) fn crash_node(&mut self, id: NodeId) {
        // Messages that arrived but were not handled yet die with the node.
        let queued: Vec<Input<M>> = self.nodes[id].inbox.drain(..).collect();
        for input in queued {
            if let Input::Message {
                id: msg_id,
                from,
                msg,
                ..
            } = input
            {
                let fields = vec![
                    ("id", msg_id.into()),
                    ("to", self.names[id].as_str().into()),
                    ("msg", msg.summary().into()),
                    ("reason", "node down".into()),
                ];
                self.record(Some(from), "drop", fields);
            }
        }
        let node = &mut self.nodes[id];
        node.up = false;
        node.pauses = 0;
        node.deferred = None;
        node.epoch += 1;
        node.live_timers.clear();
        node.waker = None;
        node.actor.on_crash();
        if let Some(mid) = node.madsim_id {
            madsim::runtime::Handle::current().kill(mid);
        }
    }

    pub(crate) fn restart_node(&mut self, id: NodeId) {
        let node = &mut self.nodes[id];
        node.up = true;
        node.inbox.push_back(Input::Start);
        if let Some(mid) = node.madsim_id {
            // Respawns the node's task through its init closure.
            madsim::runtime::Handle::current().restart(mid);
        }
    }

    /// Runs one input through node `id`'s actor and carries out what it asked.
    fn step(&mut self, id: NodeId, input: Input<M>) {
        let now = self.now_ns();
        match &input {
            Input::Message {
                id: msg_id,
                from,
                msg,
                noted: false,
            } => {
                let fields = vec![
                    ("id", (*msg_id).into()),
                    ("from", self.names[*from].as_str().into()),
                    ("msg", msg.summary().into()),
                ];
                self.record(Some(id), "deliver", fields);
                // A pause fired by the delivery holds its handling.
                let epoch = self.nodes[id].epoch;
                self.apply_fired();
                if self.nodes[id].epoch != epoch {
                    return;
                }
                if self.nodes[id].pauses > 0 {
                    if let Input::Message {
                        id: msg_id,
                        from,
                        msg,
                        ..
                    } = input
                    {
                        let again = Input::Message {
                            id: msg_id,
                            from,
                            msg,
                            noted: true,
                        };
                        self.nodes[id].inbox.push_front(again);
                    }
                    return;
                }
            }
            Input::Timer { id: timer, .. } => {
                if !self.nodes[id].live_timers.remove(timer) {
                    return; // cancelled
                }
            }
            Input::Message { .. } | Input::Start => {}
        }
        if self.stop.is_some() {
            return;
        }
        self.current = Some(id);
        let mut out = Outputs::default();
        let node = &mut self.nodes[id];
        let mut ctx = Context {
            me: id,
            names: &self.names,
            mono_ns: node.clock.mono_ns(now),
            wall_ns: node.clock.wall_ns(now),
            out: &mut out,
            next_timer: &mut self.next_timer,
            rng: &mut self.rng,
        };
        match input {
            Input::Start => node.actor.on_start(&mut ctx),
            Input::Message { from, msg, .. } => node.actor.on_message(&mut ctx, from, msg),
            Input::Timer { id: timer, tag } => node.actor.on_timer(&mut ctx, timer, tag),
        }
        self.current = None;
        let rest = Rest {
            events: capture::drain(),
            first: 0,
            timers: out.timers,
            sends: out.sends,
        };
        self.carry_out(id, rest);
    }

    /// Carries out what a handler produced, in order: its events are
    /// journalled one by one, and a fault fired by one of them takes effect
    /// right there. If it pauses the node, whatever the handler did after
    /// that event (later events, messages, timers) happens when the node
    /// resumes. So a pause fired by `client1:read` falls between the read and
    /// the write the handler sends after it, and a delay armed by
    /// `client1:wrote` applies to the write sent after `wrote`. A crash of
    /// the node itself takes effect at the end of the step: the step's
    /// messages leave (a crash fired by `lock:granted` lets the grant out),
    /// its timers die with the node.
    fn carry_out(&mut self, id: NodeId, rest: Rest<M>) {
        let now = self.now_ns();
        let epoch = self.nodes[id].epoch;
        self.stepping = Some(id);
        let mut done = rest.first;
        let mut events = rest.events.into_iter();
        let mut cut = false;
        for raw in events.by_ref() {
            self.record_owned(Some(id), raw.kind, raw.fields);
            done += 1;
            self.apply_fired();
            if self.nodes[id].pauses > 0 || self.nodes[id].epoch != epoch {
                cut = true;
                break;
            }
        }
        let before_cut = |mark: usize| !cut || mark < done;
        let (timers, later_timers): (Vec<_>, Vec<_>) =
            rest.timers.into_iter().partition(|(m, _)| before_cut(*m));
        let (sends, later_sends): (Vec<_>, Vec<_>) =
            rest.sends.into_iter().partition(|(m, _, _)| before_cut(*m));
        let alive = self.nodes[id].epoch == epoch;
        if alive {
            for (_, op) in timers {
                self.timer_op(id, op, now);
            }
        }
        for (_, to, msg) in sends {
            self.send(id, to, msg, now);
        }
        // The world's events of this step (`send`, `drop`) can fire faults too.
        self.apply_fired();
        self.stepping = None;
        for i in std::mem::take(&mut self.postponed) {
            self.fire(i);
        }
        self.apply_fired();
        let alive = alive && self.nodes[id].epoch == epoch;
        if cut && alive {
            let later = Rest {
                events: events.collect(),
                first: done,
                timers: later_timers,
                sends: later_sends,
            };
            if !later.is_empty() {
                self.nodes[id].deferred = Some(later);
            }
        }
        self.check_end();
    }

    /// The node resumed: what its last step did after the pause began
    /// happens now.
    pub(crate) fn resume_deferred(&mut self, id: NodeId) {
        if let Some(rest) = self.nodes[id].deferred.take() {
            self.carry_out(id, rest);
        }
    }

    /// Applies the faults that events fired, and those their events fire.
    /// A crash of the node whose step is being carried out waits for the end
    /// of that step (see [`World::carry_out`]).
    fn apply_fired(&mut self) {
        while !self.fired.is_empty() {
            for i in std::mem::take(&mut self.fired) {
                let fault = self.faults[i].fault.clone();
                let own_crash = matches!(
                    (&fault, self.stepping),
                    (crate::fault::Fault::Crash(c), Some(node)) if self.names[node] == c.node
                );
                if own_crash {
                    self.postponed.push(i);
                } else {
                    self.fire(i);
                }
            }
        }
    }

    /// Applies fault `i` now and notes when: a run reports the scripted
    /// faults that never fired.
    fn fire(&mut self, i: usize) {
        if self.stop.is_none() {
            let now = self.now_ns();
            self.fired_ns[i].get_or_insert(now);
        }
        let fault = self.faults[i].fault.clone();
        fault.apply(self);
    }

    fn timer_op(&mut self, id: NodeId, op: TimerOp, now: u64) {
        match op {
            TimerOp::Set {
                id: timer,
                after,
                tag,
            } => {
                let node = &mut self.nodes[id];
                node.live_timers.insert(timer);
                let at = now + node.clock.true_after(after).as_nanos() as u64;
                let epoch = node.epoch;
                let item = Item::Timer {
                    node: id,
                    epoch,
                    id: timer,
                    tag,
                };
                self.schedule(at, item);
            }
            TimerOp::Cancel(timer) => {
                self.nodes[id].live_timers.remove(&timer);
            }
        }
    }

    fn send(&mut self, from: NodeId, to: NodeId, msg: M, now: u64) {
        let id = self.next_msg;
        self.next_msg += 1;
        let summary = msg.summary();
        let to_name = self.names[to].as_str();
        let fields = vec![
            ("id", id.into()),
            ("to", to_name.into()),
            ("msg", summary.as_str().into()),
        ];
        self.record(Some(from), "send", fields);
        match self.net.route(from, to, now, &mut self.rng) {
            Fate::Dropped(reason) => {
                let fields = vec![
                    ("id", id.into()),
                    ("to", self.names[to].as_str().into()),
                    ("msg", summary.into()),
                    ("reason", reason.into()),
                ];
                self.record(Some(from), "drop", fields);
            }
            Fate::Delivered { latencies, extra } => {
                if latencies.len() > 1 {
                    let fields = vec![("id", id.into()), ("to", self.names[to].as_str().into())];
                    self.record(Some(from), "duplicate", fields);
                }
                for latency in latencies {
                    let at = now + (latency + extra).as_nanos() as u64;
                    self.in_flight += 1;
                    let msg = msg.clone();
                    self.schedule(at, Item::Arrive { id, from, to, msg });
                }
            }
        }
    }

    /// Ends the run when every actor is done and nothing is in flight
    /// (completed), or when nothing can ever happen again (stalled).
    fn check_end(&mut self) {
        if self.stop.is_some() {
            return;
        }
        let inboxes_empty = self.nodes.iter().all(|n| n.inbox.is_empty());
        if !inboxes_empty {
            return;
        }
        if self.in_flight == 0 && self.nodes.iter().all(|n| n.actor.is_done()) {
            self.finish(Outcome::Completed);
        } else if self.agenda.is_empty() {
            self.finish(Outcome::Stalled);
        }
    }

    /// Works through the agenda items due by now.
    fn run_due(&mut self, now: u64) {
        while self.stop.is_none() {
            let Some(entry) = self.agenda.first_entry() else {
                break;
            };
            if entry.key().0 > now {
                break;
            }
            match entry.remove() {
                Item::Arrive { id, from, to, msg } => {
                    self.in_flight -= 1;
                    if self.nodes[to].up {
                        let input = Input::Message {
                            id,
                            from,
                            msg,
                            noted: false,
                        };
                        self.deliver_input(to, input);
                    } else {
                        let fields = vec![
                            ("id", id.into()),
                            ("to", self.names[to].as_str().into()),
                            ("msg", msg.summary().into()),
                            ("reason", "node down".into()),
                        ];
                        self.record(Some(from), "drop", fields);
                    }
                }
                Item::Timer {
                    node,
                    epoch,
                    id,
                    tag,
                } => {
                    let n = &self.nodes[node];
                    if n.epoch == epoch && n.up && n.live_timers.contains(&id) {
                        self.deliver_input(node, Input::Timer { id, tag });
                    }
                }
                Item::Fault(i) => self.fire(i),
                Item::FollowUp(f) => f.apply(self),
            }
            // The world's own events (pause, crash, …) can trigger faults too.
            self.apply_fired();
        }
        self.check_end();
    }
}

/// Builds the world on this thread and runs it to its end.
pub(crate) async fn run_world<M: Message>(builder: WorldBuilder<M>) -> Outcome {
    let world: Shared<M> = Rc::new(RefCell::new(World::new(builder)));
    CURRENT.with(|c| *c.borrow_mut() = Some(world.clone() as Rc<dyn Any>));
    // Faults at time zero (initial clock skew, say) hold before anyone acts.
    world.borrow_mut().run_due(0);
    let handle = madsim::runtime::Handle::current();
    let count = world.borrow().nodes.len();
    for id in 0..count {
        let name = world.borrow().names[id].clone();
        let node = handle
            .create_node()
            .name(name)
            .init(move || node_main::<M>(id))
            .build();
        let mut w = world.borrow_mut();
        w.nodes[id].madsim_id = Some(node.id());
        // A pause that began before the node existed (at time zero) holds it
        // from its first action on.
        if w.nodes[id].pauses > 0 {
            handle.pause(node.id());
        }
        // Likewise a crash at time zero: the node starts down.
        if !w.nodes[id].up {
            handle.kill(node.id());
        }
    }
    let limit_ns = world.borrow().limits.duration.as_nanos() as u64;
    loop {
        let deadline = {
            let mut w = world.borrow_mut();
            let now = w.now_ns();
            if now >= limit_ns {
                w.finish(Outcome::TimeLimit);
            }
            w.run_due(now);
            if let Some(outcome) = w.stop.clone() {
                return outcome;
            }
            let next = w
                .agenda
                .keys()
                .next()
                .map_or(limit_ns, |k| k.0.min(limit_ns));
            w.agenda_deadline = next;
            w.agenda_poked = false;
            next.saturating_sub(now)
        };
        let at = madsim::time::Instant::now() + Duration::from_nanos(deadline);
        Supervise {
            world: world.clone(),
            sleep: Box::pin(madsim::time::sleep_until(at)),
        }
        .await;
    }
}

/// The supervisor's wait: until its deadline, or until woken early (an
/// earlier agenda item, the end of the run).
struct Supervise<M> {
    world: Shared<M>,
    sleep: Pin<Box<madsim::time::Sleep>>,
}

impl<M: Message> Future for Supervise<M> {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<()> {
        if self.sleep.as_mut().poll(cx).is_ready() {
            return Poll::Ready(());
        }
        let mut w = self.world.borrow_mut();
        if std::mem::take(&mut w.agenda_poked) {
            return Poll::Ready(());
        }
        w.agenda_waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// A node's task: take inputs, run them, forever (until a crash drops it).
async fn node_main<M: Message>(id: NodeId) {
    let world = current::<M>();
    let epoch = world.borrow().nodes[id].epoch;
    loop {
        let input = NextInput {
            world: world.clone(),
            id,
            epoch,
        }
        .await;
        world.borrow_mut().step(id, input);
        let (paused, crashed) = {
            let w = world.borrow();
            (w.nodes[id].pauses > 0, w.nodes[id].epoch != epoch)
        };
        if crashed {
            // madsim drops this task; until then it must not act.
            std::future::pending::<()>().await;
        }
        if paused {
            // Hand control back so that madsim holds this node's task.
            YieldNow(false).await;
        }
    }
}

struct NextInput<M> {
    world: Shared<M>,
    id: NodeId,
    epoch: u64,
}

impl<M: Message> Future for NextInput<M> {
    type Output = Input<M>;
    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Input<M>> {
        let mut w = self.world.borrow_mut();
        if w.stop.is_some() || w.nodes[self.id].epoch != self.epoch {
            return Poll::Pending;
        }
        let node = &mut w.nodes[self.id];
        match node.inbox.pop_front() {
            Some(input) => Poll::Ready(input),
            None => {
                node.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

struct YieldNow(bool);

impl Future for YieldNow {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}
