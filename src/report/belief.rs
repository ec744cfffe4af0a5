//! Who believes what, at every step of a journal: each client's believed
//! lease beside the true holder at the lock, and whether each node is paused
//! or down.
//!
//! A client **believes** it holds a lease from its `acquired` event (lease,
//! token, `ttl_ms`: believed to run until its local time at acquisition plus
//! the TTL, on its own clock) until its own `released` or its next
//! `acquired`, until it hears it `lost` the lock or its own check finds the
//! lease `lapsed`, or until it crashes (beliefs live in memory). Each
//! `renewed` of the client moves the end it believes: to when it asked plus
//! the TTL the lock granted. The lock
//! **truly** grants a lease from its `granted` event until its `expired` or
//! `released` naming that client and lease, or a newer grant. A crash of the
//! lock ends nothing by itself: what a lock keeps on disk survives it, and
//! the grants it kept only in memory are journaled as `expired` with
//! `reason = "restart"` when it is back (shown as lost in a crash). The gap
//! between the two is the whole story of figure 9-6.
//!
//! ```
//! use fencesim::report::belief::Beliefs;
//! use sim::journal::{Event, Journal};
//!
//! let s = 1_000_000_000u64;
//! let journal = Journal::from_events([
//!     Event::new(0, 0, "lock", 0, "granted").with("client", "client1").with("lease", 1u64).with("token", 33u64),
//!     Event::new(0, s, "client1", s as i64, "acquired").with("lease", 1u64).with("token", 33u64).with("ttl_ms", 10_000u64),
//!     Event::new(0, s, "client1", s as i64, "pause").with("duration_ms", 15_000u64),
//!     Event::new(0, 10 * s, "lock", 10 * s as i64, "expired").with("client", "client1").with("lease", 1u64),
//! ]);
//! let mut beliefs = Beliefs::new(&journal);
//! for e in journal.events() {
//!     beliefs.apply(e);
//! }
//! let c1 = beliefs.believed("client1").unwrap();
//! assert_eq!((c1.token, c1.until_local_ns), (Some(33), 11 * s as i64));
//! assert!(beliefs.holder("lock").is_none());
//! assert!(beliefs.is_out("client1"));
//! assert_eq!(
//!     beliefs.summary(),
//!     "client1 believes lease 1 (token 33) until 11.000s · lock: free · client1 paused"
//! );
//! ```

use std::collections::{BTreeMap, BTreeSet};

use sim::events::{self as world, WorldEvent as W};
use sim::journal::{Event, Journal};

use crate::events::{decoded, Decoded, DomainEvent, DomainEvent as D};

/// A client's belief that it holds a lease.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Believed {
    /// The lease id the lock gave.
    pub lease: u64,
    /// Its fencing token, if the lock hands out tokens.
    pub token: Option<u64>,
    /// The TTL the client was told.
    pub ttl_ms: u64,
    /// True time of the `acquired` event.
    pub since_t_ns: u64,
    /// The client's own clock at acquisition.
    pub since_local_ns: i64,
    /// Until when, on its own clock, it believes the lease runs.
    pub until_local_ns: i64,
}

/// A lease the lock service truly granted and has not yet ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Held {
    /// The holder.
    pub client: String,
    /// The lease id.
    pub lease: u64,
    /// Its fencing token, if any.
    pub token: Option<u64>,
    /// True time of the `granted` event.
    pub since_t_ns: u64,
}

/// How a true lease ended at the lock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ended {
    /// The lock node.
    pub lock: String,
    /// The lease as it was held.
    pub held: Held,
    /// `expired`, `released`, `superseded` or `lost in a crash`.
    pub how: &'static str,
    /// True time of the end.
    pub at_t_ns: u64,
}

/// Whether a node runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeState {
    /// Running.
    Up,
    /// Paused (a GC pause): runs nothing, since the given true time.
    Paused(u64),
    /// Crashed, since the given true time.
    Down(u64),
}

/// The beliefs and truths after some prefix of a journal; feed it events in
/// order with [`Beliefs::apply`].
///
/// What a step's sentence needs (the lease that ended, the grants since)
/// is found through indexes, and the state *before* an event is a small
/// copy of the current holders and beliefs over the shared history (see
/// `apply_keeping_before`): explaining a whole journal costs time
/// linear in it (times a logarithm), never a copy of the history per event.
#[derive(Clone, Debug)]
pub struct Beliefs {
    now: Now,
    /// Every true lease that ended so far, oldest first.
    ended: Vec<Ended>,
    /// client → lease → indexes into `ended`, ascending.
    ended_by_lease: BTreeMap<String, BTreeMap<u64, Vec<usize>>>,
    /// Every grant so far (lock, lease), oldest first (so in true time).
    grants: Vec<(String, Held)>,
}

/// Who believes and holds what right now: as small as the set of nodes,
/// and looked up by name through an index, never by scanning every client.
#[derive(Clone, Debug)]
pub(crate) struct Now {
    /// Client nodes (those emitting client events), in order of appearance,
    /// with their belief.
    clients: Vec<(String, Option<Believed>)>,
    /// Lock nodes (those emitting `granted` or `expired`), with the lease
    /// they truly granted.
    locks: Vec<(String, Option<Held>)>,
    /// Every node seen, with its state.
    states: Vec<(String, NodeState)>,
    /// node → where it is in `clients`, `locks` and `states`.
    index: BTreeMap<String, Roles>,
    /// The clients (indexes into `clients`) that believe they hold a lease:
    /// what a crowd's summary names, found without scanning the crowd.
    believing: BTreeSet<usize>,
    /// The nodes (indexes into `states`) paused or down.
    out: BTreeSet<usize>,
}

/// Where a node is in [`Now`]'s lists.
#[derive(Clone, Copy, Debug, Default)]
struct Roles {
    client: Option<usize>,
    lock: Option<usize>,
    state: Option<usize>,
}

/// The beliefs as they were before an event, kept by
/// [`Beliefs::apply_keeping_before`]: what the event's node believed, held
/// and was then (an event changes only its own node's entries), and how
/// much of the (append-only) history existed. As small as one node, so
/// that a thousand clients cost no copy of a thousand beliefs per event.
#[derive(Clone, Debug)]
pub(crate) struct Before {
    node: String,
    belief: Option<Option<Believed>>,
    lock: Option<Option<Held>>,
    state: NodeState,
    ended_len: usize,
    grants_len: usize,
}

/// Read access to the beliefs at one point: now, or before an event (now,
/// with the event's node as it was).
#[derive(Clone, Copy, Debug)]
pub(crate) struct View<'a> {
    now: &'a Now,
    before: Option<&'a Before>,
    history: &'a Beliefs,
    ended_len: usize,
    grants_len: usize,
}

/// Beyond this many clients, a summary names only those that believe they
/// hold a lease, and counts the others.
const SUMMARY_CLIENTS: usize = 8;

/// Whether `e` is one of the events only a client journals: what makes a
/// node a client.
pub(crate) fn client_kind(e: &Event) -> bool {
    use crate::events::DomainEvent as D;
    matches!(
        DomainEvent::decode(e),
        Ok(Some(
            D::Acquired { .. }
                | D::Denied
                | D::Read { .. }
                | D::Wrote { .. }
                | D::Acked { .. }
                | D::Lost
                | D::Checked { .. }
                | D::Lapsed { .. }
                | D::Fenced { .. }
        ))
    )
}

impl Beliefs {
    /// Empty beliefs for `journal`: it is scanned once for the roles of its
    /// nodes (clients, locks), nothing else.
    pub fn new(journal: &Journal) -> Beliefs {
        let mut clients: Vec<(String, Option<Believed>)> = Vec::new();
        let mut locks: Vec<(String, Option<Held>)> = Vec::new();
        let mut states: Vec<(String, NodeState)> = Vec::new();
        let mut index: BTreeMap<String, Roles> = BTreeMap::new();
        for e in journal.events() {
            let d = DomainEvent::decode(e).ok().flatten();
            let is_client = client_kind(e) || matches!(d, Some(D::Released { .. }));
            let is_lock = matches!(
                d,
                Some(D::Granted { .. } | D::Expired { .. } | D::LockReleased { .. })
            );
            let node = e.node.as_str();
            if !is_client && !is_lock && (node == world::WORLD || index.contains_key(node)) {
                continue;
            }
            let roles = index.entry(node.to_owned()).or_default();
            if is_client && roles.client.is_none() {
                roles.client = Some(clients.len());
                clients.push((node.to_owned(), None));
            }
            if is_lock && roles.lock.is_none() {
                roles.lock = Some(locks.len());
                locks.push((node.to_owned(), None));
            }
            if node != world::WORLD && roles.state.is_none() {
                roles.state = Some(states.len());
                states.push((node.to_owned(), NodeState::Up));
            }
        }
        Beliefs {
            now: Now {
                clients,
                locks,
                states,
                index,
                believing: BTreeSet::new(),
                out: BTreeSet::new(),
            },
            ended: Vec::new(),
            ended_by_lease: BTreeMap::new(),
            grants: Vec::new(),
        }
    }

    /// Takes one event into account.
    pub fn apply(&mut self, e: &Event) {
        self.apply_to_node(e);
        // An event changes only its own node's belief and state: the sets
        // of believers and of nodes out follow that one node.
        let roles = self.now.index.get(e.node.as_str()).copied();
        if let Some(i) = roles.and_then(|r| r.client) {
            if self.now.clients[i].1.is_some() {
                self.now.believing.insert(i);
            } else {
                self.now.believing.remove(&i);
            }
        }
        if let Some(i) = roles.and_then(|r| r.state) {
            if self.now.states[i].1 == NodeState::Up {
                self.now.out.remove(&i);
            } else {
                self.now.out.insert(i);
            }
        }
    }

    fn apply_to_node(&mut self, e: &Event) {
        let d = match decoded(e) {
            Decoded::World(W::Pause { .. }) => {
                return self.set_state(&e.node, NodeState::Paused(e.t_ns));
            }
            Decoded::World(W::Crash { .. }) => {
                self.set_state(&e.node, NodeState::Down(e.t_ns));
                // A client's belief lives in memory. A lock's grants may
                // survive on disk: the lock journals the ones it lost
                // (`expired`, reason `restart`) when it is back.
                if let Some(b) = self.belief_mut(&e.node) {
                    *b = None;
                }
                return;
            }
            Decoded::World(W::Resume | W::Restart) => {
                return self.set_state(&e.node, NodeState::Up);
            }
            Decoded::Domain(d) => d,
            _ => return,
        };
        match d {
            D::Acquired {
                lease,
                token,
                ttl_ms,
                ..
            } => {
                if let Some(b) = self.belief_mut(&e.node) {
                    let ttl_ms = ttl_ms.unwrap_or(0);
                    *b = Some(Believed {
                        lease,
                        token,
                        ttl_ms,
                        since_t_ns: e.t_ns,
                        since_local_ns: e.local_ns,
                        until_local_ns: e
                            .local_ns
                            .saturating_add(i64::try_from(ttl_ms).unwrap_or(i64::MAX) * 1_000_000),
                    });
                }
            }
            // The lock extended the lease: the client now believes it
            // until it asked plus the TTL granted (`asked_ago_ns` before
            // this event on its own clock).
            D::Renewed {
                lease,
                ttl_ms,
                asked_ago_ns,
            } => {
                let ttl_ms = ttl_ms.unwrap_or(0);
                let asked_ago = i64::try_from(asked_ago_ns.unwrap_or(0)).unwrap_or(0);
                if let Some(Some(b)) = self.belief_mut(&e.node) {
                    if b.lease == lease {
                        b.ttl_ms = ttl_ms;
                        b.until_local_ns = e.local_ns.saturating_sub(asked_ago).saturating_add(
                            i64::try_from(ttl_ms).unwrap_or(i64::MAX / 1_000_000) * 1_000_000,
                        );
                    }
                }
            }
            // Told it lost the lock, or its own check found the lease run
            // out: the client no longer believes it holds it.
            D::Lost | D::Lapsed { .. } => {
                if let Some(b) = self.belief_mut(&e.node) {
                    *b = None;
                }
            }
            D::Released { lease } => {
                if let Some(b) = self.belief_mut(&e.node) {
                    if b.as_ref().map(|b| b.lease) == Some(lease) {
                        *b = None;
                    }
                }
            }
            D::Granted {
                client,
                lease,
                token,
                ..
            } => {
                self.end_at(&e.node, "superseded", e.t_ns);
                let held = Held {
                    client: client.to_owned(),
                    lease,
                    token,
                    since_t_ns: e.t_ns,
                };
                self.grants.push((e.node.to_string(), held.clone()));
                if let Some(h) = self.lock_mut(&e.node) {
                    *h = Some(held);
                }
            }
            D::Expired { client, lease, .. } | D::LockReleased { client, lease } => {
                let matches = |h: &Held| h.client == client && h.lease == lease;
                let current = self.holder(&e.node).is_some_and(matches);
                if current {
                    let how = match d {
                        D::Expired {
                            reason: Some("restart"),
                            ..
                        } => "lost in a crash",
                        D::Expired { .. } => "expired",
                        _ => "released",
                    };
                    self.end_at(&e.node, how, e.t_ns);
                }
            }
            _ => {}
        }
    }

    /// [`Beliefs::apply`], keeping what is needed to look at the beliefs as
    /// they were just before `e` ([`Beliefs::before`]): a copy of the
    /// current holders and beliefs, not of the history.
    pub(crate) fn apply_keeping_before(&mut self, e: &Event) -> Before {
        let node = e.node.as_str();
        let roles = self.now.roles(node);
        let before = Before {
            node: e.node.to_string(),
            belief: roles.client.map(|i| self.now.clients[i].1.clone()),
            lock: roles.lock.map(|i| self.now.locks[i].1.clone()),
            state: self.state(node),
            ended_len: self.ended.len(),
            grants_len: self.grants.len(),
        };
        self.apply(e);
        before
    }

    /// The beliefs as they were when `before` was kept.
    pub(crate) fn before<'a>(&'a self, before: &'a Before) -> View<'a> {
        View {
            now: &self.now,
            before: Some(before),
            history: self,
            ended_len: before.ended_len,
            grants_len: before.grants_len,
        }
    }

    /// The beliefs now.
    pub(crate) fn view(&self) -> View<'_> {
        View {
            now: &self.now,
            before: None,
            history: self,
            ended_len: self.ended.len(),
            grants_len: self.grants.len(),
        }
    }

    fn set_state(&mut self, node: &str, state: NodeState) {
        match self.now.roles(node).state {
            Some(i) => self.now.states[i].1 = state,
            None => {
                let i = self.now.states.len();
                self.now.states.push((node.to_owned(), state));
                self.now.index.entry(node.to_owned()).or_default().state = Some(i);
            }
        }
    }

    fn belief_mut(&mut self, node: &str) -> Option<&mut Option<Believed>> {
        let i = self.now.roles(node).client?;
        Some(&mut self.now.clients[i].1)
    }

    fn lock_mut(&mut self, lock: &str) -> Option<&mut Option<Held>> {
        let i = self.now.roles(lock).lock?;
        Some(&mut self.now.locks[i].1)
    }

    fn end_at(&mut self, lock: &str, how: &'static str, at_t_ns: u64) {
        if let Some(h) = self.lock_mut(lock) {
            if let Some(held) = h.take() {
                self.ended_by_lease
                    .entry(held.client.clone())
                    .or_default()
                    .entry(held.lease)
                    .or_default()
                    .push(self.ended.len());
                self.ended.push(Ended {
                    lock: lock.to_owned(),
                    held,
                    how,
                    at_t_ns,
                });
            }
        }
    }

    /// The clients, in order of first appearance in the journal.
    pub fn clients(&self) -> impl Iterator<Item = (&str, Option<&Believed>)> {
        self.view().clients()
    }

    /// The lock nodes with their true holder.
    pub fn locks(&self) -> impl Iterator<Item = (&str, Option<&Held>)> {
        self.view().locks()
    }

    /// What `client` believes it holds.
    pub fn believed(&self, client: &str) -> Option<&Believed> {
        self.view().believed(client)
    }

    /// The lease `lock` truly granted and has not ended.
    pub fn holder(&self, lock: &str) -> Option<&Held> {
        self.view().holder(lock)
    }

    /// Whether `node` is a client.
    pub fn is_client(&self, node: &str) -> bool {
        self.now.roles(node).client.is_some()
    }

    /// Whether `node` is a lock node.
    pub fn is_lock(&self, node: &str) -> bool {
        self.now.roles(node).lock.is_some()
    }

    /// How many clients the journal has.
    pub fn client_count(&self) -> usize {
        self.now.clients.len()
    }

    /// The state of `node` (a node never seen is up).
    pub fn state(&self, node: &str) -> NodeState {
        self.view().state(node)
    }

    /// Whether `node` is paused or down.
    pub fn is_out(&self, node: &str) -> bool {
        self.view().is_out(node)
    }

    /// The last time a true lease of `client` with `lease` ended, if it did.
    pub fn ended(&self, client: &str, lease: u64) -> Option<&Ended> {
        self.view().ended(client, lease)
    }

    /// Grants made after true time `t_ns` to clients other than `client`.
    pub fn grants_since(&self, t_ns: u64, client: &str) -> impl Iterator<Item = &Held> {
        self.view().grants_since(t_ns, client)
    }

    /// One line: every client's belief, then every lock's true holder, then
    /// who is paused or down.
    pub fn summary(&self) -> String {
        self.view().summary()
    }
}

impl Now {
    fn roles(&self, node: &str) -> Roles {
        self.index.get(node).copied().unwrap_or_default()
    }
}

/// The members of `now`, a set of indexes kept as events are applied, as
/// they were before the kept event: `kept` is its node's index and whether
/// it was a member then (an event changes only its own node's membership).
fn as_before(now: &BTreeSet<usize>, kept: Option<(usize, bool)>) -> Vec<usize> {
    let mut at: Vec<usize> = now.iter().copied().collect();
    if let Some((i, was)) = kept {
        match (at.binary_search(&i), was) {
            (Ok(p), false) => {
                at.remove(p);
            }
            (Err(p), true) => at.insert(p, i),
            _ => {}
        }
    }
    at
}

impl<'a> View<'a> {
    /// The kept entries of `node`, when this view is before its event.
    fn kept(self, node: &str) -> Option<&'a Before> {
        self.before.filter(|b| b.node == node)
    }

    fn belief_of(self, client: &'a str, now: &'a Option<Believed>) -> Option<&'a Believed> {
        match self.kept(client).and_then(|b| b.belief.as_ref()) {
            Some(then) => then.as_ref(),
            None => now.as_ref(),
        }
    }

    fn holder_of(self, lock: &'a str, now: &'a Option<Held>) -> Option<&'a Held> {
        match self.kept(lock).and_then(|b| b.lock.as_ref()) {
            Some(then) => then.as_ref(),
            None => now.as_ref(),
        }
    }

    pub(crate) fn clients(self) -> impl Iterator<Item = (&'a str, Option<&'a Believed>)> {
        self.now
            .clients
            .iter()
            .map(move |(n, b)| (n.as_str(), self.belief_of(n, b)))
    }

    pub(crate) fn locks(self) -> impl Iterator<Item = (&'a str, Option<&'a Held>)> {
        self.now
            .locks
            .iter()
            .map(move |(n, h)| (n.as_str(), self.holder_of(n, h)))
    }

    pub(crate) fn believed(self, client: &str) -> Option<&'a Believed> {
        let (n, b) = &self.now.clients[self.now.roles(client).client?];
        self.belief_of(n, b)
    }

    pub(crate) fn holder(self, lock: &str) -> Option<&'a Held> {
        let (n, h) = &self.now.locks[self.now.roles(lock).lock?];
        self.holder_of(n, h)
    }

    pub(crate) fn state(self, node: &str) -> NodeState {
        if let Some(b) = self.kept(node) {
            return b.state;
        }
        self.now
            .roles(node)
            .state
            .map_or(NodeState::Up, |i| self.now.states[i].1)
    }

    /// The indexes into `now.clients` of the clients that believe they
    /// hold a lease in this view, in order: the believers now, give or
    /// take the node kept as it was before its event.
    fn believers(self) -> Vec<usize> {
        let kept = self.before.and_then(|b| {
            let believed = b.belief.as_ref()?.is_some();
            Some((self.now.roles(&b.node).client?, believed))
        });
        as_before(&self.now.believing, kept)
    }

    /// The indexes into `now.states` of the nodes paused or down in this
    /// view, in order.
    fn outs(self) -> Vec<usize> {
        let kept = self.before.and_then(|b| {
            let out = b.state != NodeState::Up;
            Some((self.now.roles(&b.node).state?, out))
        });
        as_before(&self.now.out, kept)
    }

    /// Whether the clients are a crowd: more than a summary names one by
    /// one.
    pub(crate) fn is_crowd(self) -> bool {
        self.now.clients.len() > SUMMARY_CLIENTS
    }

    /// The clients worth naming in a crowd, in order of appearance: those
    /// that believe they hold a lease, those a lock truly grants one, and
    /// those paused or down. Costs time in the number named and of lock
    /// nodes, never in the size of the crowd.
    #[cfg(feature = "report")]
    pub(crate) fn notable_clients(self) -> Vec<(&'a str, Option<&'a Believed>)> {
        let mut at: BTreeSet<usize> = self.believers().into_iter().collect();
        for (_, h) in self.locks() {
            if let Some(i) = h.and_then(|h| self.now.roles(&h.client).client) {
                at.insert(i);
            }
        }
        for i in self.outs() {
            if let Some(c) = self.now.roles(&self.now.states[i].0).client {
                at.insert(c);
            }
        }
        at.into_iter()
            .map(|i| {
                let (n, b) = &self.now.clients[i];
                (n.as_str(), self.belief_of(n, b))
            })
            .collect()
    }

    pub(crate) fn is_out(self, node: &str) -> bool {
        self.state(node) != NodeState::Up
    }

    /// The last end of `client`'s `lease` in this view's history.
    pub(crate) fn ended(self, client: &str, lease: u64) -> Option<&'a Ended> {
        let at = self.history.ended_by_lease.get(client)?.get(&lease)?;
        let visible = at.partition_point(|&i| i < self.ended_len);
        visible.checked_sub(1).map(|i| &self.history.ended[at[i]])
    }

    /// Grants at or after true time `t_ns` to clients other than `client`.
    pub(crate) fn grants_since(self, t_ns: u64, client: &str) -> impl Iterator<Item = &'a Held> {
        let client = client.to_owned();
        let grants = &self.history.grants[..self.grants_len];
        let from = grants.partition_point(|(_, h)| h.since_t_ns < t_ns);
        grants[from..]
            .iter()
            .map(|(_, h)| h)
            .filter(move |h| h.client != client)
    }

    pub(crate) fn summary(self) -> String {
        let mut parts = Vec::new();
        let crowd = self.is_crowd();
        let mut idle = 0;
        let believes = |client: &str, b: &Believed| {
            format!(
                "{client} believes lease {}{} until {}",
                b.lease,
                token_text(b.token),
                local_seconds(b.until_local_ns)
            )
        };
        if crowd {
            // Only the believers are named: found through the index, so
            // that a crowd's summary costs time in them, not in the crowd.
            for i in self.believers() {
                let (client, b) = &self.now.clients[i];
                if let Some(b) = self.belief_of(client, b) {
                    parts.push(believes(client, b));
                }
            }
            idle = self.now.clients.len() - parts.len();
        } else {
            for (client, b) in self.clients() {
                parts.push(match b {
                    Some(b) => believes(client, b),
                    None => format!("{client} holds nothing"),
                });
            }
        }
        if idle > 0 {
            let who = if parts.is_empty() { "" } else { "other " };
            let s = if idle == 1 { "" } else { "s" };
            parts.push(format!("{idle} {who}client{s} hold nothing"));
        }
        for (lock, h) in self.locks() {
            parts.push(match h {
                Some(h) => format!(
                    "{lock}: {} holds lease {}{}",
                    h.client,
                    h.lease,
                    token_text(h.token)
                ),
                None => format!("{lock}: free"),
            });
        }
        let out: Vec<String> = self
            .outs()
            .into_iter()
            .filter_map(|i| {
                let (n, s) = &self.now.states[i];
                match self.kept(n).map_or(*s, |b| b.state) {
                    NodeState::Up => None,
                    NodeState::Paused(_) => Some(format!("{n} paused")),
                    NodeState::Down(_) => Some(format!("{n} down")),
                }
            })
            .collect();
        if !out.is_empty() {
            parts.push(out.join(", "));
        }
        parts.join(" · ")
    }
}

/// ` (token 33)` or nothing.
pub fn token_text(token: Option<u64>) -> String {
    token.map_or_else(String::new, |t| format!(" (token {t})"))
}

/// A local clock reading as seconds with 3 decimals (it can be negative).
pub fn local_seconds(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    format!("{sign}{}", seconds(ns.unsigned_abs()))
}

pub use sim::journal::seconds;

/// A true lease or a believed one, as an interval of true time: what the
/// timeline and the Perfetto trace draw as bars.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseBar {
    /// `true` for the lock's grant, `false` for the client's belief.
    pub at_lock: bool,
    /// The node the bar belongs to: the lock (true) or the client (believed).
    pub node: String,
    /// The holder.
    pub client: String,
    /// The lease id.
    pub lease: u64,
    /// Its token.
    pub token: Option<u64>,
    /// True time it began.
    pub start_t_ns: u64,
    /// True time it ended (the end of the journal if it never did).
    pub end_t_ns: u64,
    /// How it ended (`expired`, `released`, …; `still held` at the end).
    pub how: String,
    /// For a belief: until when, on the client's clock, it was believed to run.
    pub until_local_ns: Option<i64>,
}

/// Every believed and true lease of `journal`, in order of their start.
pub fn lease_bars(journal: &Journal) -> Vec<LeaseBar> {
    let mut beliefs = Beliefs::new(journal);
    let mut bars: Vec<LeaseBar> = Vec::new();
    let end = journal.events().last().map_or(0, |e| e.t_ns);
    // node → its open belief's bar: a map, so that a crowd costs no scan.
    let mut open_belief: BTreeMap<String, usize> = BTreeMap::new();
    let mut open_true: Vec<(String, usize)> = Vec::new();
    let mut ended_seen = 0;
    for e in journal.events() {
        let before = beliefs.believed(&e.node).cloned();
        beliefs.apply(e);
        let after = beliefs.believed(&e.node).cloned();
        let renewal = match (&before, &after) {
            (Some(b), Some(a)) => b.lease == a.lease && b.since_t_ns == a.since_t_ns,
            _ => false,
        };
        if renewal && beliefs.is_client(&e.node) {
            // A renewal moves the end of the same belief: one bar, whose
            // `until_local_ns` is the latest end believed.
            if let Some(&i) = open_belief.get(e.node.as_str()) {
                bars[i].until_local_ns = after.as_ref().map(|a| a.until_local_ns);
            }
        } else if before != after && beliefs.is_client(&e.node) {
            if let Some(i) = open_belief.remove(e.node.as_str()) {
                bars[i].end_t_ns = e.t_ns;
                bars[i].how = match decoded(e) {
                    Decoded::World(W::Crash { .. }) => "forgotten in a crash".to_owned(),
                    Decoded::Domain(D::Acquired { .. }) => "replaced by a new grant".to_owned(),
                    Decoded::Domain(D::Lost) => "lost: the lock service said so".to_owned(),
                    Decoded::Domain(D::Lapsed { .. }) => "lapsed on its own clock".to_owned(),
                    _ => "released".to_owned(),
                };
            }
            if let Some(b) = after {
                open_belief.insert(e.node.as_str().to_owned(), bars.len());
                bars.push(LeaseBar {
                    at_lock: false,
                    node: e.node.to_string(),
                    client: e.node.to_string(),
                    lease: b.lease,
                    token: b.token,
                    start_t_ns: e.t_ns,
                    end_t_ns: end,
                    how: "still believed at the end".to_owned(),
                    until_local_ns: Some(b.until_local_ns),
                });
            }
        }
        for ended in &beliefs.ended[ended_seen..] {
            if let Some(pos) = open_true.iter().position(|(n, _)| *n == ended.lock) {
                let (_, i) = open_true.remove(pos);
                bars[i].end_t_ns = ended.at_t_ns;
                bars[i].how = ended.how.to_owned();
            }
        }
        ended_seen = beliefs.ended.len();
        if let Ok(Some(D::Granted { .. })) = DomainEvent::decode(e) {
            if let Some(h) = beliefs.holder(&e.node) {
                open_true.push((e.node.to_string(), bars.len()));
                bars.push(LeaseBar {
                    at_lock: true,
                    node: e.node.to_string(),
                    client: h.client.clone(),
                    lease: h.lease,
                    token: h.token,
                    start_t_ns: e.t_ns,
                    end_t_ns: end,
                    how: "still held at the end".to_owned(),
                    until_local_ns: None,
                });
            }
        }
    }
    bars
}
