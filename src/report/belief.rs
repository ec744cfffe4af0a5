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
//! None of this is worked out here: the oracle's history finds these
//! spans once, for every reader (the milestones, the lanes, the timeline,
//! Perfetto), and [`Beliefs`] only reads them at one point of the journal.
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

use sim::journal::{Event, Journal};

use crate::events::Role;
use crate::oracle::history::History;
use crate::oracle::roles::NO_ROLES;
use crate::oracle::spans::{BeliefEnd, Spans};

pub use crate::oracle::spans::NodeState;

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
    /// `expired`, `released`, `superseded`, `lost in a crash`, or `ended`
    /// for a reason of the server's own ([`Ended::reason`]).
    pub how: &'static str,
    /// The server's own word for an `ended` lease (`keepalive`,
    /// `takeover`): the `reason` of its `expired` event.
    pub reason: Option<String>,
    /// True time of the end.
    pub at_t_ns: u64,
}

/// The beliefs and truths after some prefix of a journal; feed it events in
/// order with [`Beliefs::apply`].
///
/// A cursor over the spans of the journal's history (who believes, holds
/// and runs what, from which event to which, computed once when it is
/// indexed): [`Beliefs::apply`] moves the cursor past an event, and every
/// question is a binary search in the spans of one node. The state
/// *before* an event is the same spans one position earlier (see
/// `apply_keeping_before`): explaining a whole journal costs time linear
/// in it (times a logarithm), never a copy of the history per event.
#[derive(Clone, Debug)]
pub struct Beliefs<'a> {
    history: History<'a>,
    /// How many events the cursor has passed.
    at: u64,
    /// Each belief span's belief, one per end it believed (its acquisition,
    /// then each renewal).
    believed: Vec<Vec<Believed>>,
    /// Each holder span's lease, as held.
    held: Vec<Held>,
    /// Every holding that ended, in the order it did, with the journal
    /// position of its end.
    ended: Vec<(u64, Ended)>,
    /// client → lease → indexes into `ended`, ascending.
    ended_by_lease: BTreeMap<&'a str, BTreeMap<u64, Vec<usize>>>,
    /// Client nodes, in order of their first client event.
    clients: Vec<&'a str>,
    /// Lock nodes, in order of their first lock event.
    locks: Vec<&'a str>,
    /// Every node, in order of its first event.
    states: Vec<&'a str>,
    /// node → where it is in `clients`, `locks` and `states`.
    index: BTreeMap<&'a str, Place>,
    /// The clients (indexes into `clients`) that believe they hold a lease
    /// at the cursor: what a crowd's summary names, found without scanning
    /// the crowd.
    believing: BTreeSet<usize>,
    /// The nodes (indexes into `states`) paused or down at the cursor.
    out: BTreeSet<usize>,
}

/// Where a node is in [`Beliefs`]' lists.
#[derive(Clone, Copy, Debug, Default)]
struct Place {
    client: Option<usize>,
    lock: Option<usize>,
    state: Option<usize>,
}

/// Where the cursor was before an event, kept by
/// [`Beliefs::apply_keeping_before`]: the event's node (the only one whose
/// belief, holding or state the event changes) and the position.
#[derive(Clone, Debug)]
pub(crate) struct Before {
    node: String,
    at: u64,
}

/// Read access to the beliefs at one position: the cursor's, or before an
/// event (one position earlier).
#[derive(Clone, Copy, Debug)]
pub(crate) struct View<'a> {
    beliefs: &'a Beliefs<'a>,
    /// The position read.
    at: u64,
    /// The node of the kept event, when this view is before it.
    kept: Option<&'a str>,
}

/// Beyond this many clients, a summary names only those that believe they
/// hold a lease, and counts the others.
const SUMMARY_CLIENTS: usize = 8;

impl<'a> Beliefs<'a> {
    /// Beliefs before the first event of `journal`, over the spans of its
    /// history (indexed here, its nodes' roles those its events show).
    pub fn new(journal: &'a Journal) -> Beliefs<'a> {
        Beliefs::over(History::index(journal, &NO_ROLES))
    }

    /// Beliefs before the first event of the journal `history` indexes.
    pub(crate) fn over(history: History<'a>) -> Beliefs<'a> {
        let spans = &history.spans;
        let believed = spans
            .beliefs
            .iter()
            .map(|b| {
                b.moves()
                    .map(|m| Believed {
                        lease: b.lease,
                        token: b.token,
                        ttl_ms: m.ttl_ms,
                        since_t_ns: b.from_t_ns,
                        since_local_ns: b.from_local_ns,
                        until_local_ns: m.until_local_ns,
                    })
                    .collect()
            })
            .collect();
        let held: Vec<Held> = spans
            .holders
            .iter()
            .map(|h| Held {
                client: h.client.to_owned(),
                lease: h.lease,
                token: h.token,
                since_t_ns: h.from_t_ns,
            })
            .collect();
        let mut ended = Vec::with_capacity(spans.holder_ends.len());
        let mut ended_by_lease: BTreeMap<&'a str, BTreeMap<u64, Vec<usize>>> = BTreeMap::new();
        for &i in &spans.holder_ends {
            let h = &spans.holders[i];
            let Some((seq, t_ns, how)) = h.until else {
                continue;
            };
            ended_by_lease
                .entry(h.client)
                .or_default()
                .entry(h.lease)
                .or_default()
                .push(ended.len());
            ended.push((
                seq,
                Ended {
                    lock: h.lock.to_owned(),
                    held: held[i].clone(),
                    how: how.how(),
                    reason: how.reason().map(str::to_owned),
                    at_t_ns: t_ns,
                },
            ));
        }
        let mut index: BTreeMap<&'a str, Place> = BTreeMap::new();
        let (mut clients, mut locks) = (Vec::new(), Vec::new());
        for &(node, role) in &spans.appears {
            if !history.roles.is(node, role) {
                continue;
            }
            let place = index.entry(node).or_default();
            match role {
                Role::Client if place.client.is_none() => {
                    place.client = Some(clients.len());
                    clients.push(node);
                }
                Role::Lock if place.lock.is_none() => {
                    place.lock = Some(locks.len());
                    locks.push(node);
                }
                _ => {}
            }
        }
        let states = spans.nodes.clone();
        for (i, &node) in states.iter().enumerate() {
            index.entry(node).or_default().state = Some(i);
        }
        Beliefs {
            history,
            at: 0,
            believed,
            held,
            ended,
            ended_by_lease,
            clients,
            locks,
            states,
            index,
            believing: BTreeSet::new(),
            out: BTreeSet::new(),
        }
    }

    /// The spans this cursor reads.
    pub(crate) fn spans(&self) -> &Spans<'a> {
        &self.history.spans
    }

    /// Moves past one event: the beliefs just after it.
    pub fn apply(&mut self, e: &Event) {
        self.at = e.seq + 1;
        // An event changes only its own node's belief and state: the sets
        // of believers and of nodes out follow that one node.
        let place = self.place(&e.node);
        if let Some(i) = place.client {
            if self.view().believed(&e.node).is_some() {
                self.believing.insert(i);
            } else {
                self.believing.remove(&i);
            }
        }
        if let Some(i) = place.state {
            if self.view().is_out(&e.node) {
                self.out.insert(i);
            } else {
                self.out.remove(&i);
            }
        }
    }

    /// [`Beliefs::apply`], keeping what is needed to look at the beliefs as
    /// they were just before `e` ([`Beliefs::before`]).
    pub(crate) fn apply_keeping_before(&mut self, e: &Event) -> Before {
        let before = Before {
            node: e.node.to_string(),
            at: e.seq,
        };
        self.apply(e);
        before
    }

    /// The beliefs as they were when `before` was kept.
    pub(crate) fn before<'v>(&'v self, before: &'v Before) -> View<'v> {
        View {
            beliefs: self,
            at: before.at,
            kept: Some(&before.node),
        }
    }

    /// The beliefs now.
    pub(crate) fn view(&self) -> View<'_> {
        View {
            beliefs: self,
            at: self.at,
            kept: None,
        }
    }

    fn place(&self, node: &str) -> Place {
        self.index.get(node).copied().unwrap_or_default()
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
        self.place(node).client.is_some()
    }

    /// Whether `node` is a lock node.
    pub fn is_lock(&self, node: &str) -> bool {
        self.place(node).lock.is_some()
    }

    /// How many clients the journal has.
    pub fn client_count(&self) -> usize {
        self.clients.len()
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

/// The members of `now`, a set of indexes kept at the cursor, as they were
/// before the kept event: `kept` is its node's index and whether it was a
/// member then (an event changes only its own node's membership).
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
    pub(crate) fn clients(self) -> impl Iterator<Item = (&'a str, Option<&'a Believed>)> {
        self.beliefs
            .clients
            .iter()
            .map(move |&n| (n, self.believed(n)))
    }

    pub(crate) fn locks(self) -> impl Iterator<Item = (&'a str, Option<&'a Held>)> {
        self.beliefs.locks.iter().map(move |&n| (n, self.holder(n)))
    }

    pub(crate) fn believed(self, client: &str) -> Option<&'a Believed> {
        let b = self.beliefs;
        b.place(client).client?;
        let i = b.spans().belief(client, self.at)?;
        let span = &b.spans().beliefs[i];
        let k = span.renewals.partition_point(|m| m.seq < self.at);
        Some(&b.believed[i][k])
    }

    pub(crate) fn holder(self, lock: &str) -> Option<&'a Held> {
        let b = self.beliefs;
        b.place(lock).lock?;
        b.spans().holder(lock, self.at).map(|i| &b.held[i])
    }

    pub(crate) fn state(self, node: &str) -> NodeState {
        self.beliefs.spans().state(node, self.at)
    }

    /// The indexes into `clients` of the clients that believe they hold a
    /// lease in this view, in order: the believers at the cursor, give or
    /// take the node kept as it was before its event.
    fn believers(self) -> Vec<usize> {
        let kept = self.kept.and_then(|node| {
            let i = self.beliefs.place(node).client?;
            Some((i, self.believed(node).is_some()))
        });
        as_before(&self.beliefs.believing, kept)
    }

    /// The indexes into `states` of the nodes paused or down in this view,
    /// in order.
    fn outs(self) -> Vec<usize> {
        let kept = self.kept.and_then(|node| {
            let i = self.beliefs.place(node).state?;
            Some((i, self.is_out(node)))
        });
        as_before(&self.beliefs.out, kept)
    }

    /// Whether the clients are a crowd: more than a summary names one by
    /// one.
    pub(crate) fn is_crowd(self) -> bool {
        self.beliefs.clients.len() > SUMMARY_CLIENTS
    }

    /// The clients worth naming in a crowd, in order of appearance: those
    /// that believe they hold a lease, those a lock truly grants one, and
    /// those paused or down. Costs time in the number named and of lock
    /// nodes, never in the size of the crowd.
    #[cfg(feature = "report")]
    pub(crate) fn notable_clients(self) -> Vec<(&'a str, Option<&'a Believed>)> {
        let b = self.beliefs;
        let mut at: BTreeSet<usize> = self.believers().into_iter().collect();
        for (_, h) in self.locks() {
            if let Some(i) = h.and_then(|h| b.place(&h.client).client) {
                at.insert(i);
            }
        }
        for i in self.outs() {
            if let Some(c) = b.place(b.states[i]).client {
                at.insert(c);
            }
        }
        at.into_iter()
            .map(|i| (b.clients[i], self.believed(b.clients[i])))
            .collect()
    }

    pub(crate) fn is_out(self, node: &str) -> bool {
        self.state(node) != NodeState::Up
    }

    /// The last end of `client`'s `lease` in this view's history.
    pub(crate) fn ended(self, client: &str, lease: u64) -> Option<&'a Ended> {
        let b = self.beliefs;
        let at = b.ended_by_lease.get(client)?.get(&lease)?;
        let visible = at.partition_point(|&i| b.ended[i].0 < self.at);
        visible.checked_sub(1).map(|i| &b.ended[at[i]].1)
    }

    /// Grants at or after true time `t_ns` to clients other than `client`.
    pub(crate) fn grants_since(self, t_ns: u64, client: &str) -> impl Iterator<Item = &'a Held> {
        let client = client.to_owned();
        let b = self.beliefs;
        let holders = &b.spans().holders;
        let made = holders.partition_point(|h| h.from_seq < self.at);
        let from = holders[..made].partition_point(|h| h.from_t_ns < t_ns);
        b.held[from..made]
            .iter()
            .filter(move |h| h.client != client)
    }

    pub(crate) fn summary(self) -> String {
        let b = self.beliefs;
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
                let client = b.clients[i];
                if let Some(belief) = self.believed(client) {
                    parts.push(believes(client, belief));
                }
            }
            idle = b.clients.len() - parts.len();
        } else {
            for (client, belief) in self.clients() {
                parts.push(match belief {
                    Some(belief) => believes(client, belief),
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
                let n = b.states[i];
                match self.state(n) {
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
    Beliefs::new(journal).lease_bars()
}

impl Beliefs<'_> {
    /// Every believed and true lease of the journal, in order of their
    /// start: its belief and holder spans.
    pub(crate) fn lease_bars(&self) -> Vec<LeaseBar> {
        let beliefs = self;
        let spans = beliefs.spans();
        let end = spans.end_t_ns;
        // (start seq, bar): a belief and a grant never start at the same event
        // (a client's and a lock's), so the order of the start is the order.
        let mut bars: Vec<(u64, LeaseBar)> = Vec::new();
        for (client, of) in &spans.beliefs_of {
            if !beliefs.is_client(client) {
                continue;
            }
            let mut open: Option<usize> = None;
            for &i in of {
                let span = &spans.beliefs[i];
                let until_local_ns = span.moves().last().map(|m| m.until_local_ns);
                // A new grant of the same lease at the same instant moves the
                // end of the same belief, as a renewal does: one bar.
                if let Some(k) = open.filter(|&k| {
                    let bar = &bars[k].1;
                    bar.lease == span.lease && bar.start_t_ns == span.from_t_ns
                }) {
                    bars[k].1.until_local_ns = until_local_ns;
                    close_belief(&mut bars[k].1, span.until, end);
                    open = span
                        .until
                        .is_some_and(|u| u.2 == BeliefEnd::Replaced)
                        .then_some(k);
                    continue;
                }
                let mut bar = LeaseBar {
                    at_lock: false,
                    node: (*client).to_owned(),
                    client: (*client).to_owned(),
                    lease: span.lease,
                    token: span.token,
                    start_t_ns: span.from_t_ns,
                    end_t_ns: end,
                    how: String::new(),
                    until_local_ns,
                };
                close_belief(&mut bar, span.until, end);
                open = span
                    .until
                    .is_some_and(|u| u.2 == BeliefEnd::Replaced)
                    .then_some(bars.len());
                bars.push((span.from_seq, bar));
            }
        }
        for (i, h) in spans.holders.iter().enumerate() {
            if !beliefs.is_lock(h.lock) {
                continue;
            }
            let (end_t_ns, how) = match h.until {
                Some((_, t, how)) => match how.reason_words() {
                    Some(words) => (t, format!("ended: {words}")),
                    None => (t, how.how().to_owned()),
                },
                None => (end, "still held at the end".to_owned()),
            };
            let held = &beliefs.held[i];
            bars.push((
                h.from_seq,
                LeaseBar {
                    at_lock: true,
                    node: h.lock.to_owned(),
                    client: held.client.clone(),
                    lease: held.lease,
                    token: held.token,
                    start_t_ns: h.from_t_ns,
                    end_t_ns,
                    how,
                    until_local_ns: None,
                },
            ));
        }
        bars.sort_by_key(|(seq, _)| *seq);
        bars.into_iter().map(|(_, bar)| bar).collect()
    }
}

/// Ends a belief's bar where and as its span ended (the end of the
/// journal if it never did).
fn close_belief(bar: &mut LeaseBar, until: Option<(u64, u64, BeliefEnd)>, end: u64) {
    let (t, how) = match until {
        None => (end, "still believed at the end"),
        Some((_, t, why)) => (
            t,
            match why {
                BeliefEnd::Crashed => "forgotten in a crash",
                BeliefEnd::Replaced => "replaced by a new grant",
                BeliefEnd::Lost => "lost: the lock service said so",
                BeliefEnd::Lapsed => "lapsed on its own clock",
                BeliefEnd::Released => "released",
            },
        ),
    };
    bar.end_t_ns = t;
    bar.how = how.to_owned();
}
