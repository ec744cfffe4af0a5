//! One pass over the journal into the small indexes every checker reads:
//! grants (with their place in the lock's order), writes (with the grant
//! each was made under), lease ends at the lock, storage outcomes (with the
//! earlier acceptance that supersedes each) and acknowledgements; and the
//! spans every other reader queries ([`super::spans`]: who believes, holds
//! and runs what, from which event to which), with the stops the timeline
//! draws read off them. The roles of a journal judged alone come from the
//! same pass.
//!
//! Everything borrows from the journal, so indexing allocates only the
//! vectors and maps themselves.

use std::collections::BTreeMap;

use sim::journal::{Event, Journal};

use sim::events::WorldEvent;

use super::spans::{SpanIndexer, Spans};
use super::stops::{stops, Stop};
use super::Roles;
use crate::events::{decoded, Decoded, DomainEvent as D, Op};

/// How a grant ended at the lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct End {
    /// Journal position of the lock's `expired` or `released` event.
    pub seq: u64,
    /// True time of that event.
    pub t_ns: u64,
    /// Whether the lease expired (else: the lock saw it released).
    pub expired: bool,
}

/// A client's `acquired` event, matched to the lock's `granted` event(s).
/// [`History::grants`] lists grants in the order clients heard of them; the
/// lock's order, which decides which grant is *newer*, is [`History::newer`].
#[derive(Clone, Debug)]
pub(crate) struct Grant<'a> {
    /// The client's `acquired` event.
    pub seq: u64,
    pub t_ns: u64,
    pub client: &'a str,
    pub token: Option<u64>,
    /// Where the grant stands in the lock's order: the journal position of
    /// the `granted` event that made it a grant (for a majority of nodes,
    /// the majority-th), else of the `acquired` event itself (a design that
    /// journals no `granted`).
    pub lock_seq: u64,
    /// True time of that event.
    pub lock_t_ns: u64,
    /// Ordered by its token: it has one, from a single lock node. A token
    /// from several nodes (Redlock's largest of a majority) is no order.
    pub by_token: bool,
    /// The earliest grant, in the lock's order, that is newer than this
    /// one: (its `lock_seq`, its index).
    pub superseded: Option<(u64, usize)>,
    /// The lock's `expired`/`released` that ended this grant (the first, or
    /// with `ends` = n on `acquired`, the n-th).
    pub end: Option<End>,
    /// Lock-node ends needed, and seen so far.
    ends_needed: u64,
    ends_seen: u64,
    /// Journal position of the client's next `released` or `acquired`:
    /// where the client stopped writing under this grant (`None`: never
    /// did). A `lost` or `lapsed` does not end it here, as it ends the
    /// client's belief span ([`super::spans::BeliefSpan::until`]): a write
    /// the client sends after them still carries this grant, and is judged
    /// as one (a zombie), not as a write under no grant.
    pub believed_until: Option<u64>,
    /// The lock nodes whose `granted` for this (client, lease) came before
    /// the client's `acquired`, each once, in journal order.
    pub granted_by: Vec<&'a str>,
}

/// A client's `wrote` event.
#[derive(Clone, Debug)]
pub(crate) struct Write<'a> {
    pub client: &'a str,
    /// Index into [`History::grants`]; `None` when the client wrote before
    /// any grant of its own.
    pub grant: Option<usize>,
    /// The token the write carried (falls back to its grant's token).
    pub token: Option<u64>,
    pub increment: bool,
    /// The storage key, from the first `accepted` event of this write.
    pub key: Option<&'a str>,
}

/// A storage `accepted` or `rejected` event.
#[derive(Clone, Debug)]
pub(crate) struct Outcome<'a> {
    pub seq: u64,
    pub t_ns: u64,
    /// The storage node.
    pub node: &'a str,
    pub accepted: bool,
    pub write_id: &'a str,
    /// The writer, from the write's `wrote` event, else the storage's `client` field.
    pub client: &'a str,
    pub key: &'a str,
    pub value: Option<i64>,
    /// The grant the write was made under (`None`: unknown write, or no grant).
    pub grant: Option<usize>,
    /// An acceptance the storage journaled with a `precondition`: it applied
    /// the write because a condition on its current state held (a version
    /// compare-and-set, a token checked in the row).
    pub conditional: bool,
    /// An acceptance of a write the same storage node had already accepted
    /// (a network duplicate, or a retry, delivered again): the same write,
    /// judged at its first acceptance.
    pub redelivery: bool,
    /// For an acceptance: index into [`History::outcomes`] of an earlier
    /// acceptance at the same storage node whose grant is newer than this
    /// one's (the newest such), if any.
    pub superseding: Option<usize>,
}

/// A lock node's `granted` event carrying a token: what the lock handed out.
#[derive(Clone, Debug)]
pub(crate) struct Issued<'a> {
    pub seq: u64,
    pub t_ns: u64,
    /// The lock node.
    pub node: &'a str,
    pub client: &'a str,
    pub token: u64,
}

/// A lock node's `granted`, `renewed`, `expired` or `released` of a grant,
/// in journal order: the lock's own account of who holds it, and until when.
#[derive(Clone, Debug)]
pub(crate) struct LockEvent<'a> {
    pub seq: u64,
    pub t_ns: u64,
    /// The lock node's wall clock at the event.
    pub local_ns: i64,
    /// The lock node.
    pub node: &'a str,
    pub client: &'a str,
    pub lease: u64,
    pub kind: LockKind,
    /// The TTL a grant or renewal promised (`ttl_ms`), if it named one.
    pub ttl_ms: Option<u64>,
    /// The node's monotonic clock at the event (`mono_ns`), if journaled.
    pub mono_ns: Option<u64>,
    /// Why an `expired` came (`reason`: `restart`, …); `None` for a TTL
    /// running out.
    pub reason: Option<&'a str>,
}

/// What a [`LockEvent`] did to its grant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LockKind {
    Granted,
    Renewed,
    Released,
    Expired,
}

impl<'a> LockEvent<'a> {
    /// Whether this event made a grant.
    pub fn granted(&self) -> bool {
        matches!(self.kind, LockKind::Granted)
    }

    /// The end, in true time, a `granted` or `renewed` with a `ttl_ms`
    /// promised: its true time plus that TTL (`None`: it promised none).
    pub fn promised_end_t_ns(&self) -> Option<u64> {
        match (self.kind, self.ttl_ms) {
            (LockKind::Granted | LockKind::Renewed, Some(ttl_ms)) => {
                Some(self.t_ns.saturating_add(ttl_ms.saturating_mul(1_000_000)))
            }
            _ => None,
        }
    }

    /// Whether this event ended a grant.
    pub fn ended(&self) -> bool {
        matches!(self.kind, LockKind::Released | LockKind::Expired)
    }

    /// The lock's own account in a decoded event, if it is one.
    fn new(e: &'a Event, d: &D<&'a str>) -> Option<LockEvent<'a>> {
        let (client, lease, kind, ttl_ms, mono_ns, reason) = match *d {
            D::Granted {
                client,
                lease,
                ttl_ms,
                mono_ns,
                ..
            } => (client, lease, LockKind::Granted, ttl_ms, mono_ns, None),
            D::LockRenewed {
                client,
                lease,
                ttl_ms,
                mono_ns,
            } => (client, lease, LockKind::Renewed, ttl_ms, mono_ns, None),
            D::LockReleased { client, lease } => {
                (client, lease, LockKind::Released, None, None, None)
            }
            D::Expired {
                client,
                lease,
                reason,
                mono_ns,
            } => (client, lease, LockKind::Expired, None, mono_ns, reason),
            _ => return None,
        };
        Some(LockEvent {
            seq: e.seq,
            t_ns: e.t_ns,
            local_ns: e.local_ns,
            node: e.node.as_str(),
            client,
            lease,
            kind,
            ttl_ms,
            mono_ns,
            reason,
        })
    }
}

/// A client's `checked` event: its own lease check passed, with
/// `remaining_ms` left on its clock.
#[derive(Clone, Debug)]
pub(crate) struct Check<'a> {
    pub seq: u64,
    pub t_ns: u64,
    pub client: &'a str,
    pub lease: u64,
    pub remaining_ms: u64,
}

/// A client's `acked` event.
#[derive(Clone, Debug)]
pub(crate) struct Ack<'a> {
    pub seq: u64,
    pub t_ns: u64,
    pub write_id: &'a str,
    pub ok: bool,
    /// The ack's `op` is `increment` (`None`: the ack names no op).
    pub increment: Option<bool>,
}

/// The indexes of one journal.
#[derive(Clone, Debug, Default)]
pub(crate) struct History<'a> {
    /// Each node's role: the run's topology, else what the journal shows.
    pub roles: std::borrow::Cow<'a, Roles>,
    pub grants: Vec<Grant<'a>>,
    /// Tokens as the lock nodes handed them out, in journal order.
    pub issued: Vec<Issued<'a>>,
    pub writes: BTreeMap<&'a str, Write<'a>>,
    pub outcomes: Vec<Outcome<'a>>,
    pub acks: Vec<Ack<'a>>,
    /// Whether any `wrote` event has `op = "increment"`.
    pub has_increments: bool,
    /// Token-only writes (`fenced` events, or `wrote` with `op = "fence"`):
    /// not data writes, so their storage outcomes are left out of every check.
    pub fences: std::collections::BTreeSet<&'a str>,
    /// Every lock node's grants and ends, in journal order.
    pub lock_events: Vec<LockEvent<'a>>,
    /// Every client's passed lease check (`checked` with its lease and
    /// the time left), in journal order.
    pub checks: Vec<Check<'a>>,
    /// The nodes whose wall clock read true time plus one constant offset
    /// at every event of theirs: no drift, no rate change, no jump showed.
    pub steady_clocks: std::collections::BTreeSet<&'a str>,
    /// The journal position of each grant's end at the lock → the grant.
    pub ends: BTreeMap<u64, usize>,
    /// Every grant (index into `grants`) in the lock's order of making:
    /// by `lock_seq`.
    pub by_lock: Vec<usize>,
    /// Every stretch a node ran nothing, in the order they ended, then
    /// those still open at the end of the journal in the order they began.
    pub stops: Vec<Stop<'a>>,
    /// What the journal claims that the oracle cannot take on trust, in
    /// journal order: a write the storage took that no client journaled
    /// sending, a write sent with no grant the client believed in, a write
    /// carrying a token its grant did not. A client that writes without
    /// saying so (a process that sends to the storage itself, not through
    /// its storage client) would otherwise be judged on half a story.
    pub untrusted: Vec<String>,
    /// Who believes, holds and runs what, event by event: the one account
    /// every reader of beliefs, holders and node states queries.
    pub spans: Spans<'a>,
    /// Each journal event decoded, in journal order: the oracle's later
    /// passes (the milestones) read these instead of decoding again.
    pub decoded: Vec<Decoded<'a>>,
}

impl<'a> History<'a> {
    /// The write `write_id`, if a `wrote` event announced it.
    pub fn write(&self, write_id: &str) -> Option<&Write<'a>> {
        self.writes.get(write_id)
    }

    /// Whether grant `a` is newer than grant `b` in the lock's order: by
    /// token when both are ordered by token (an equal token is newer only
    /// when the lock made it later for another client: the same client's
    /// equal token is the same holding), else by their place among the
    /// lock's `granted` events. Never by when a client heard of its grant.
    pub fn newer(&self, a: usize, b: usize) -> bool {
        let (a, b) = (&self.grants[a], &self.grants[b]);
        match (a.by_token, b.by_token, a.token, b.token) {
            // An equal token handed to another client (a regression) does
            // not order the two: the lock's own order does.
            (true, true, Some(x), Some(y)) => {
                x > y || (x == y && a.client != b.client && a.lock_seq > b.lock_seq)
            }
            _ => a.lock_seq > b.lock_seq,
        }
    }

    /// A grant newer than grant `index` that the lock had made strictly
    /// before `seq` (the earliest such).
    pub fn newer_grant_before(&self, index: usize, seq: u64) -> Option<&Grant<'a>> {
        let (at, newer) = self.grants[index].superseded?;
        (at < seq).then(|| &self.grants[newer])
    }

    /// The grant to a client other than grant `index`'s that is newer than
    /// it and current at the lock at `seq`: made strictly before `seq` and
    /// not ended before it. Of several (a lock that granted twice), the one
    /// the lock made last.
    pub fn current_newer_grant_of_another(&self, index: usize, seq: u64) -> Option<usize> {
        let mine = &self.grants[index];
        let made_before = self
            .by_lock
            .partition_point(|&h| self.grants[h].lock_seq < seq);
        self.by_lock[..made_before]
            .iter()
            .rev()
            .copied()
            .find(|&h| {
                self.grants[h].client != mine.client
                    && self.newer(h, index)
                    && self.ended_before(h, seq).is_none()
            })
    }

    /// How grant `index` ended at the lock, if it did strictly before `seq`.
    pub fn ended_before(&self, index: usize, seq: u64) -> Option<End> {
        self.grants[index].end.filter(|e| e.seq < seq)
    }

    /// The grant whose end at the lock is the event at `seq`, if any.
    pub fn ended_at(&self, seq: u64) -> Option<usize> {
        self.ends.get(&seq).copied()
    }

    /// Indexes `journal` in one pass, its nodes' roles `roles` (empty: the
    /// roles its events show, [`Roles::from_journal`]).
    pub fn index(journal: &'a Journal, roles: &'a Roles) -> Self {
        let mut indexer = Indexer::default();
        let mut all = Vec::with_capacity(journal.events().len());
        for event in journal.events() {
            let d = decoded(event);
            indexer.event(event, d);
            all.push(d);
        }
        let mut history = indexer.history;
        history.decoded = all;
        history.steady_clocks = indexer
            .offsets
            .iter()
            .filter(|(_, _, steady)| *steady)
            .map(|(node, ..)| *node)
            .collect();
        history.spans = indexer.spans.finish();
        history.stops = stops(&history.spans);
        history.roles = if roles.is_empty() {
            std::borrow::Cow::Owned(Roles::first_of(&history.spans.appears))
        } else {
            std::borrow::Cow::Borrowed(roles)
        };
        supersede(&mut history);
        let mut by_lock: Vec<usize> = (0..history.grants.len()).collect();
        by_lock.sort_by_key(|&i| (history.grants[i].lock_seq, i));
        history.by_lock = by_lock;
        history.ends = history
            .grants
            .iter()
            .enumerate()
            .filter_map(|(i, g)| g.end.map(|e| (e.seq, i)))
            .collect();
        history
    }
}

/// Fills in every grant's [`Grant::superseded`]: the newer grant the lock
/// made first. Sorting keeps it O(n log n) for runs with many grants.
fn supersede(history: &mut History<'_>) {
    let grants = &history.grants;
    // Every grant by lock position: a grant is newer than one not ordered
    // by token exactly when it stands later in the lock's order.
    let mut by_seq: Vec<(u64, usize)> = grants
        .iter()
        .enumerate()
        .map(|(i, g)| (g.lock_seq, i))
        .collect();
    by_seq.sort_unstable();
    // Grants not ordered by token, by lock position: newer than a token
    // grant when they stand later.
    let untokened: Vec<(u64, usize)> = by_seq
        .iter()
        .copied()
        .filter(|&(_, i)| !grants[i].by_token)
        .collect();
    // Token grants by token, each with the earliest lock position among the
    // grants with a larger token.
    let mut tokened: Vec<(u64, usize)> = grants
        .iter()
        .enumerate()
        .filter(|(_, g)| g.by_token)
        .map(|(i, g)| (g.token.unwrap_or(0), i))
        .collect();
    tokened.sort_unstable();
    let mut earliest_above: Vec<Option<(u64, usize)>> = vec![None; tokened.len() + 1];
    for k in (0..tokened.len()).rev() {
        let here = (grants[tokened[k].1].lock_seq, tokened[k].1);
        earliest_above[k] = Some(earliest_above[k + 1].map_or(here, |e| e.min(here)));
    }
    let first_after = |list: &[(u64, usize)], seq: u64| {
        let k = list.partition_point(|&(s, _)| s <= seq);
        list.get(k).copied()
    };
    let superseded: Vec<Option<(u64, usize)>> = grants
        .iter()
        .map(|g| {
            if !g.by_token {
                return first_after(&by_seq, g.lock_seq);
            }
            let token = g.token.unwrap_or(0);
            let k = tokened.partition_point(|&(t, _)| t <= token);
            let by_token = earliest_above[k];
            let by_place = first_after(&untokened, g.lock_seq);
            // The same token, made later for another client.
            let first = tokened.partition_point(|&(t, _)| t < token);
            let again = tokened[first..k]
                .iter()
                .map(|&(_, h)| (grants[h].lock_seq, h))
                .filter(|&(s, h)| s > g.lock_seq && grants[h].client != g.client)
                .min();
            by_token.into_iter().chain(by_place).chain(again).min()
        })
        .collect();
    for (g, s) in history.grants.iter_mut().zip(superseded) {
        g.superseded = s;
    }
}

#[derive(Default)]
struct Indexer<'a> {
    history: History<'a>,
    /// Each client's latest grant.
    latest_grant: BTreeMap<&'a str, usize>,
    /// Each (client, lease)'s latest grant, to match lock-side ends.
    by_lease: BTreeMap<(&'a str, u64), usize>,
    /// Lock-side ends seen before any grant of that (client, lease): a grant
    /// message that arrived after its lease had run out. The grant, when the
    /// client does acquire, is over from the start. Each with the lock node
    /// that ended it.
    early_ends: BTreeMap<(&'a str, u64), Vec<(End, &'a str)>>,
    /// Each (client, lease)'s lock-side `granted` events so far.
    granted: BTreeMap<(&'a str, u64), Vec<Made<'a>>>,
    /// Per storage node, the newest grants among its acceptances so far.
    newest: BTreeMap<&'a str, Newest<'a>>,
    /// Where a lock node last granted a (client, lease) it had granted
    /// before: it restarted and numbers its leases afresh.
    regranted: BTreeMap<(&'a str, u64, &'a str), u64>,
    /// (storage node, write id) of every acceptance so far.
    applied: std::collections::BTreeSet<(&'a str, &'a str)>,
    /// Beliefs, holders and node states.
    spans: SpanIndexer<'a>,
    /// Each node's wall clock offset at its first event, and whether every
    /// later event of it showed the same: a handful of nodes, scanned.
    offsets: Vec<(&'a str, i64, bool)>,
}

/// A lock node's `granted` event: (seq, t_ns, node).
type Made<'a> = (u64, u64, &'a str);

/// A storage node's newest acceptances so far, each as (key, outcome index):
/// enough to tell whether a write's grant has been superseded there.
#[derive(Clone, Debug, Default)]
struct Newest<'a> {
    /// Among grants ordered by token: per token, per client, the latest
    /// lock position.
    tokens: BTreeMap<u64, BTreeMap<&'a str, (u64, usize)>>,
    /// The latest lock position among grants not ordered by token.
    untokened: Option<(u64, usize)>,
    /// The latest lock position among all grants.
    any: Option<(u64, usize)>,
}

impl<'a> Newest<'a> {
    /// The acceptance made under a grant newer than `grant` (see
    /// [`History::newer`]), if any.
    fn above(&self, grant: &Grant<'_>) -> Option<usize> {
        let later = |m: Option<(u64, usize)>| m.filter(|&(s, _)| s > grant.lock_seq);
        match (grant.by_token, grant.token) {
            (true, Some(t)) => {
                let larger = self.tokens.range(t + 1..).next_back();
                let equal = self.tokens.get(&t).and_then(|clients| {
                    let others = clients.iter().filter(|(c, _)| **c != grant.client);
                    later(others.map(|(_, &m)| m).max())
                });
                larger
                    .and_then(|(_, clients)| clients.values().max().copied())
                    .or(equal)
                    .or_else(|| later(self.untokened))
            }
            _ => later(self.any),
        }
        .map(|(_, i)| i)
    }

    fn add(&mut self, grant: &Grant<'a>, index: usize) {
        fn raise(m: &mut Option<(u64, usize)>, key: u64, index: usize) {
            if m.map_or(true, |(k, _)| key > k) {
                *m = Some((key, index));
            }
        }
        match (grant.by_token, grant.token) {
            (true, Some(t)) => {
                let latest = self
                    .tokens
                    .entry(t)
                    .or_default()
                    .entry(grant.client)
                    .or_insert((grant.lock_seq, index));
                if grant.lock_seq > latest.0 {
                    *latest = (grant.lock_seq, index);
                }
            }
            _ => raise(&mut self.untokened, grant.lock_seq, index),
        }
        raise(&mut self.any, grant.lock_seq, index);
    }
}

impl<'a> Indexer<'a> {
    fn event(&mut self, e: &'a Event, d: Decoded<'a>) {
        self.spans.event(e, &d);
        let offset = e.local_ns.wrapping_sub(e.t_ns as i64);
        match self
            .offsets
            .iter_mut()
            .find(|(n, ..)| *n == e.node.as_str())
        {
            Some((_, first, steady)) => *steady &= *first == offset,
            None => self.offsets.push((e.node.as_str(), offset, true)),
        }
        match d {
            Decoded::Domain(d) => match d {
                D::Acquired { lease, token, .. } => self.acquired(e, lease, token, d.ends_needed()),
                D::Wrote {
                    write,
                    op: Op::Fence,
                    ..
                }
                | D::Fenced { write, .. } => {
                    self.history.fences.insert(write);
                }
                D::Wrote {
                    write, token, op, ..
                } => self.wrote(e, write, token, op == Op::Increment),
                D::Acked { write, ok, op } => self.history.acks.push(Ack {
                    seq: e.seq,
                    t_ns: e.t_ns,
                    write_id: write,
                    ok,
                    increment: op.map(|op| op == Op::Increment),
                }),
                D::Released { .. } => self.client_released(e),
                D::LockReleased { client, lease } => self.ended(e, &d, client, lease, false),
                D::Expired { client, lease, .. } => self.ended(e, &d, client, lease, true),
                D::Granted {
                    client,
                    lease,
                    token,
                    ..
                } => self.issued(e, &d, client, lease, token),
                D::LockRenewed { .. } => self.history.lock_events.extend(LockEvent::new(e, &d)),
                D::Checked {
                    lease: Some(lease),
                    remaining_ms: Some(remaining_ms),
                } => self.history.checks.push(Check {
                    seq: e.seq,
                    t_ns: e.t_ns,
                    client: e.node.as_str(),
                    lease,
                    remaining_ms,
                }),
                D::Accepted {
                    write,
                    client,
                    key,
                    value,
                    precondition,
                    ..
                } => self.outcome(e, write, client, key, value, Some(precondition.is_some())),
                D::Rejected {
                    write, client, key, ..
                } => self.outcome(e, write, client, key, None, None),
                _ => {}
            },
            // A crashed (or powered-off) client believes nothing any more.
            Decoded::World(WorldEvent::Crash { .. }) => self.client_released(e),
            _ => {}
        }
    }

    fn acquired(&mut self, e: &'a Event, lease: u64, token: Option<u64>, ends_needed: u64) {
        let client = e.node.as_str();
        let index = self.history.grants.len();
        self.stop_believing(client, e.seq);
        let early: Vec<End> = self
            .early_ends
            .remove(&(client, lease))
            .unwrap_or_default()
            .into_iter()
            .map(|(end, _)| end)
            .collect();
        // The lock's `granted` events for this lease so far. A majority of
        // `k` answers ending after `ends` node ends means the grant became a
        // grant at its (k − ends + 1)-th, the majority-th; with one node,
        // the latest.
        let granted = self
            .granted
            .get(&(client, lease))
            .map_or(&[][..], Vec::as_slice);
        let made = granted
            .len()
            .checked_sub(ends_needed as usize)
            .map(|k| granted[k]);
        let (lock_seq, lock_t_ns) = made.map_or((e.seq, e.t_ns), |(s, t, _)| (s, t));
        let one_node = granted.iter().all(|g| g.2 == granted[0].2);
        let mut granted_by: Vec<&'a str> = Vec::new();
        for &(_, _, node) in granted {
            if !granted_by.contains(&node) {
                granted_by.push(node);
            }
        }
        self.history.grants.push(Grant {
            seq: e.seq,
            t_ns: e.t_ns,
            client,
            token,
            lock_seq,
            lock_t_ns,
            by_token: token.is_some() && one_node && ends_needed == 1,
            superseded: None,
            end: early.get(ends_needed as usize - 1).copied(),
            ends_needed,
            ends_seen: early.len() as u64,
            believed_until: None,
            granted_by,
        });
        self.latest_grant.insert(client, index);
        self.by_lease.insert((client, lease), index);
    }

    fn issued(
        &mut self,
        e: &'a Event,
        d: &D<&'a str>,
        client: &'a str,
        lease: u64,
        token: Option<u64>,
    ) {
        {
            let node = e.node.as_str();
            self.history.lock_events.extend(LockEvent::new(e, d));
            let made = self.granted.entry((client, lease)).or_default();
            // A lock node grants a lease id once per life: the same node
            // granting the same (client, lease) again has restarted and
            // numbers its leases afresh (`durable = false`). This is a new
            // grant: what the node did with the old one (its ends, the
            // grant a client acquired from it) belongs to the old one.
            if made.iter().any(|m| m.2 == node) {
                made.retain(|m| m.2 != node);
                if let Some(ends) = self.early_ends.get_mut(&(client, lease)) {
                    ends.retain(|(_, n)| *n != node);
                }
                self.regranted.insert((client, lease, node), e.seq);
            }
            made.push((e.seq, e.t_ns, node));
        }
        if let Some(token) = token {
            self.history.issued.push(Issued {
                seq: e.seq,
                t_ns: e.t_ns,
                node: e.node.as_str(),
                client,
                token,
            });
        }
    }

    fn client_released(&mut self, e: &'a Event) {
        self.stop_believing(e.node.as_str(), e.seq);
    }

    fn stop_believing(&mut self, client: &str, seq: u64) {
        if let Some(&i) = self.latest_grant.get(client) {
            let grant = &mut self.history.grants[i];
            if grant.believed_until.is_none() {
                grant.believed_until = Some(seq);
            }
        }
    }

    fn ended(&mut self, e: &'a Event, d: &D<&'a str>, client: &'a str, lease: u64, expired: bool) {
        self.history.lock_events.extend(LockEvent::new(e, d));
        let end = End {
            seq: e.seq,
            t_ns: e.t_ns,
            expired,
        };
        let acquired = self.by_lease.get(&(client, lease)).copied();
        // An end from a node that has granted this lease id again since the
        // client acquired it ends the new grant, not the acquired one.
        let regranted = |i: usize| {
            self.regranted
                .get(&(client, lease, e.node.as_str()))
                .is_some_and(|&at| at > self.history.grants[i].seq)
        };
        match acquired.filter(|&i| !regranted(i)) {
            // With several lock nodes (redlock) each reports its own end; the
            // grant ends with the `ends_needed`-th.
            Some(i) => {
                let grant = &mut self.history.grants[i];
                grant.ends_seen += 1;
                if grant.ends_seen == grant.ends_needed {
                    grant.end.get_or_insert(end);
                }
            }
            None => {
                self.early_ends
                    .entry((client, lease))
                    .or_default()
                    .push((end, e.node.as_str()));
            }
        }
    }

    fn wrote(&mut self, e: &'a Event, id: &'a str, token: Option<u64>, increment: bool) {
        let client = e.node.as_str();
        let grant = self.latest_grant.get(client).copied();
        match grant.map(|g| &self.history.grants[g]) {
            Some(g) if g.believed_until.is_none() => {
                if token.is_some() && token != g.token {
                    self.history.untrusted.push(format!(
                        "{client} sent write {id} with token {} under a grant whose token is {} \
                         (event {})",
                        token.map_or("none".into(), |t| t.to_string()),
                        g.token.map_or("none".into(), |t| t.to_string()),
                        e.seq
                    ));
                }
            }
            _ => self.history.untrusted.push(format!(
                "{client} sent write {id} with no grant it believed it held (event {}): no \
                 `acquired` since its last release, loss or crash",
                e.seq
            )),
        }
        self.history.has_increments |= increment;
        let token = token.or_else(|| grant.and_then(|g| self.history.grants[g].token));
        self.history.writes.insert(
            id,
            Write {
                client,
                grant,
                token,
                increment,
                key: None,
            },
        );
    }

    /// A storage answer: `conditional` is `Some` for an acceptance
    /// (whether it named a precondition), `None` for a rejection.
    fn outcome(
        &mut self,
        e: &'a Event,
        write_id: &'a str,
        writer: Option<&'a str>,
        key: Option<&'a str>,
        value: Option<i64>,
        conditional: Option<bool>,
    ) {
        let accepted = conditional.is_some();
        if self.history.fences.contains(write_id) {
            return;
        }
        let key = key.unwrap_or("");
        let node = e.node.as_str();
        let write = self.history.writes.get_mut(write_id);
        let (client, grant) = match write {
            Some(w) => {
                if accepted {
                    w.key.get_or_insert(key);
                }
                (w.client, w.grant)
            }
            None => {
                self.history.untrusted.push(format!(
                    "{node} {} write {write_id} that no client journaled sending (event {}): \
                     every write goes with a `wrote` from its client",
                    if accepted { "accepted" } else { "rejected" },
                    e.seq
                ));
                (writer.unwrap_or("?"), None)
            }
        };
        let index = self.history.outcomes.len();
        let redelivery = accepted && !write_id.is_empty() && !self.applied.insert((node, write_id));
        let newest = self.newest.entry(node).or_default();
        let superseding = match grant {
            Some(g) if accepted => newest.above(&self.history.grants[g]),
            _ => None,
        };
        if let (true, Some(g)) = (accepted, grant) {
            newest.add(&self.history.grants[g], index);
        }
        self.history.outcomes.push(Outcome {
            seq: e.seq,
            t_ns: e.t_ns,
            node,
            accepted,
            write_id,
            client,
            key,
            value,
            grant,
            conditional: conditional == Some(true),
            redelivery,
            superseding,
        });
    }
}
