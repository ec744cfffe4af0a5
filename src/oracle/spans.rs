//! Who believes, holds and runs what, as spans of journal positions: each
//! client's beliefs, each lock node's holders and each node's states, found
//! once while the history is indexed ([`super::history::History::spans`]).
//! Every reader that asks "what did X believe, hold or do just after event
//! N" (the milestones, the step-through, the lanes, the timeline, the
//! Perfetto trace) asks these spans with a binary search or a cursor,
//! instead of walking the events with a state machine of its own.
//!
//! A position `p` is the journal after its first `p` events: a span that
//! begins at event `from_seq` holds from position `from_seq + 1`, and one
//! that ends at event `seq` holds no more from position `seq + 1`.
//!
//! - A client **believes** a lease from its `acquired` (lease, token, TTL:
//!   believed to run until its local time then plus the TTL) until its next
//!   `acquired`, its own `released` of that lease, a `lost` or `lapsed`, or
//!   its crash (beliefs live in memory). Each `renewed` of that lease moves
//!   the end it believes: to when it asked plus the TTL the lock granted.
//! - A lock node **holds** a lease for a client from its `granted` until
//!   its `expired` or `released` of that client and lease, or its next
//!   `granted` (superseded). A crash of the lock ends no holding by itself:
//!   what the lock keeps on disk survives it, and what it kept only in
//!   memory is journaled as `expired` with `reason = "restart"` when it is
//!   back (lost in a crash). The lock's own `expired` or `released` of a
//!   holding it had already superseded still ends it *at the lock*: until
//!   then, or until the lock node crashes, it is **live** there (its clock
//!   still runs on it).
//! - A node is up, paused (since its `pause`) or down (since its `crash`):
//!   a `resume` or `restart` brings it up.

use std::collections::BTreeMap;

use sim::events::{WorldEvent as W, WORLD};
use sim::journal::Event;

use crate::events::{Decoded, DomainEvent as D, Role};

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

/// A node's state from one event on, until its next span.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StateSpan {
    /// The `pause`, `crash`, `resume` or `restart` that began it: its
    /// journal position and true time.
    pub from_seq: u64,
    pub from_t_ns: u64,
    pub state: NodeState,
}

/// How a lock node stopped holding a lease for its client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HoldEnd<'a> {
    /// The lock granted again (to anyone): a newer holder.
    Superseded,
    /// The lease ran out on the lock's clock.
    Expired,
    /// The holder released it.
    Released,
    /// The lock kept it in memory only, and crashed (`expired` with
    /// `reason = "restart"`).
    LostInACrash,
    /// The server ended it for a reason of its own, no clock of its
    /// running out: `expired` with that `reason` (a session its keepalive
    /// closed, an API server's takeover).
    EndedBy(&'a str),
}

impl<'a> HoldEnd<'a> {
    /// `superseded`, `expired`, `released`, `lost in a crash` or `ended`
    /// (for a [`HoldEnd::reason`]).
    pub fn how(self) -> &'static str {
        match self {
            HoldEnd::Superseded => "superseded",
            HoldEnd::Expired => "expired",
            HoldEnd::Released => "released",
            HoldEnd::LostInACrash => "lost in a crash",
            HoldEnd::EndedBy(_) => "ended",
        }
    }

    /// How an `expired` event with this `reason` ended its lease: on the
    /// lock's clock without one, in a crash for `restart`, else for the
    /// server's own reason. Every reader of an `expired` asks here.
    pub fn of_expired(reason: Option<&'a str>) -> HoldEnd<'a> {
        match reason {
            None => HoldEnd::Expired,
            Some("restart") => HoldEnd::LostInACrash,
            Some(reason) => HoldEnd::EndedBy(reason),
        }
    }

    /// The server's own reason, for [`HoldEnd::EndedBy`].
    pub fn reason(self) -> Option<&'a str> {
        match self {
            HoldEnd::EndedBy(reason) => Some(reason),
            _ => None,
        }
    }

    /// [`HoldEnd::reason`] in words ([`reason_words`]).
    pub fn reason_words(self) -> Option<String> {
        self.reason().map(reason_words)
    }
}

/// A server's reason (`idle_session_timeout`) as the reports write it
/// (`idle session timeout`).
pub(crate) fn reason_words(reason: &str) -> String {
    reason.replace('_', " ")
}

/// A lease a lock node granted, from its `granted` on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HolderSpan<'a> {
    /// The lock node.
    pub lock: &'a str,
    pub client: &'a str,
    pub lease: u64,
    pub token: Option<u64>,
    /// The `granted` event: its journal position and true time.
    pub from_seq: u64,
    pub from_t_ns: u64,
    /// Where the lock stopped holding it, at what true time, and how.
    pub until: Option<(u64, u64, HoldEnd<'a>)>,
    /// Where it stopped being live at the lock: the lock's own `expired` or
    /// `released` of it (even after a newer grant), or the lock node's crash.
    pub live_until: Option<u64>,
}

/// Why a client stopped believing it holds a lease.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BeliefEnd {
    /// A new `acquired`: it believes the new grant instead.
    Replaced,
    /// Its own `released` of the lease.
    Released,
    /// The lock service told it (`lost`).
    Lost,
    /// Its own check found the lease run out (`lapsed`).
    Lapsed,
    /// It crashed: beliefs live in memory.
    Crashed,
}

/// A client's belief in one grant: one per `acquired`, index for index
/// with [`super::history::History::grants`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BeliefSpan<'a> {
    pub client: &'a str,
    pub lease: u64,
    pub token: Option<u64>,
    /// The `acquired` event: its journal position, true time and the
    /// client's clock.
    pub from_seq: u64,
    pub from_t_ns: u64,
    pub from_local_ns: i64,
    /// The end it believes as the `acquired` set it: (journal position,
    /// TTL told, end on its own clock).
    pub first: Move,
    /// Each `renewed` that moved that end, in journal order (most beliefs
    /// have none, and allocate nothing for them).
    pub renewals: Vec<Move>,
    /// Where it stopped believing, at what true time, and why.
    pub until: Option<(u64, u64, BeliefEnd)>,
}

/// A believed end, from one client event (`acquired` or `renewed`) on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Move {
    /// The event's journal position and true time.
    pub seq: u64,
    pub t_ns: u64,
    /// The TTL the client was told, in ms.
    pub ttl_ms: u64,
    /// The end it believes from then on, on its own clock.
    pub until_local_ns: i64,
}

impl BeliefSpan<'_> {
    /// Every end it believed, the first first.
    pub fn moves(&self) -> impl Iterator<Item = &Move> {
        std::iter::once(&self.first).chain(&self.renewals)
    }
}

/// The spans of one journal.
#[derive(Clone, Debug, Default)]
pub(crate) struct Spans<'a> {
    /// Every node but the world, in order of its first event.
    pub nodes: Vec<&'a str>,
    /// Each (node, role) in order of the node's first domain event of that
    /// role: who joins the clients or the locks, and when.
    pub appears: Vec<(&'a str, Role)>,
    /// Each node's state changes, in journal order (up before the first).
    pub states: BTreeMap<&'a str, Vec<StateSpan>>,
    /// Every grant at a lock node, in journal order.
    pub holders: Vec<HolderSpan<'a>>,
    /// Each lock node's grants: indexes into `holders`, ascending.
    pub holders_at: BTreeMap<&'a str, Vec<usize>>,
    /// Indexes into `holders` in the order their holding ended.
    pub holder_ends: Vec<usize>,
    /// Every belief, in journal order.
    pub beliefs: Vec<BeliefSpan<'a>>,
    /// Each client's beliefs: indexes into `beliefs`, ascending.
    pub beliefs_of: BTreeMap<&'a str, Vec<usize>>,
    /// True time of the journal's last event: where a span still open ends.
    pub end_t_ns: u64,
}

/// The last of `spans` (indexes, ascending by `from`) that began before
/// position `p`.
fn last_before(spans: &[usize], p: u64, from: impl Fn(usize) -> u64) -> Option<usize> {
    let k = spans.partition_point(|&i| from(i) < p);
    k.checked_sub(1).map(|k| spans[k])
}

/// Whether an end at `until` (journal position) is still ahead at `p`.
fn open_at(until: Option<u64>, p: u64) -> bool {
    until.map_or(true, |seq| seq >= p)
}

impl<'a> Spans<'a> {
    /// The state of `node` at position `p` (a node never paused is up).
    pub fn state(&self, node: &str, p: u64) -> NodeState {
        let Some(spans) = self.states.get(node) else {
            return NodeState::Up;
        };
        let k = spans.partition_point(|s| s.from_seq < p);
        k.checked_sub(1).map_or(NodeState::Up, |k| spans[k].state)
    }

    /// The belief of `client` at position `p`: its index into `beliefs`.
    pub fn belief(&self, client: &str, p: u64) -> Option<usize> {
        let of = self.beliefs_of.get(client)?;
        let i = last_before(of, p, |i| self.beliefs[i].from_seq)?;
        open_at(self.beliefs[i].until.map(|u| u.0), p).then_some(i)
    }

    /// Every belief of `client` (indexes into `beliefs`, in journal order).
    pub fn beliefs_of(&self, client: &str) -> &[usize] {
        self.beliefs_of.get(client).map_or(&[], Vec::as_slice)
    }

    /// The belief of a client before event `seq` and after it, `of` its
    /// beliefs ([`Spans::beliefs_of`]).
    pub fn belief_around(&self, of: &[usize], seq: u64) -> (Option<usize>, Option<usize>) {
        let at = |p: u64| {
            let i = last_before(of, p, |i| self.beliefs[i].from_seq)?;
            open_at(self.beliefs[i].until.map(|u| u.0), p).then_some(i)
        };
        (at(seq), at(seq + 1))
    }

    /// The lease `lock` holds at position `p`: its index into `holders`.
    pub fn holder(&self, lock: &str, p: u64) -> Option<usize> {
        let at = self.holders_at.get(lock)?;
        let i = last_before(at, p, |i| self.holders[i].from_seq)?;
        open_at(self.holders[i].until.map(|u| u.0), p).then_some(i)
    }

    /// The grants live at `lock` at position `p`, oldest first.
    pub fn live(&self, lock: &str, p: u64) -> impl Iterator<Item = &HolderSpan<'a>> {
        let at = self.holders_at.get(lock).map_or(&[][..], Vec::as_slice);
        let made = at.partition_point(|&i| self.holders[i].from_seq < p);
        at[..made]
            .iter()
            .map(|&i| &self.holders[i])
            .filter(move |h| open_at(h.live_until, p))
    }
}

/// Builds [`Spans`] one event at a time.
#[derive(Debug, Default)]
pub(crate) struct SpanIndexer<'a> {
    spans: Spans<'a>,
    seen: std::collections::BTreeSet<&'a str>,
    seen_as: std::collections::BTreeSet<(&'a str, Role)>,
    /// Each lock node's current holder (index into `holders`).
    holding: BTreeMap<&'a str, usize>,
    /// Each grant still live at its lock node: (lock node, client, lease,
    /// index into `holders`).
    live: std::collections::BTreeSet<(&'a str, &'a str, u64, usize)>,
    /// Each client's current belief (index into `beliefs`).
    believing: BTreeMap<&'a str, usize>,
}

impl<'a> SpanIndexer<'a> {
    /// Takes event `e`, decoded as `d`, into account.
    pub fn event(&mut self, e: &'a Event, d: &Decoded<'a>) {
        let node = e.node.as_str();
        self.spans.end_t_ns = e.t_ns;
        // Every event of a node shares the world's copy of its name: a
        // node already listed is found by address, without comparing text
        // (the sets stay the truth for any other copy).
        let listed = self.spans.nodes.iter().any(|n| same_copy(n, node));
        if !listed && node != WORLD && self.seen.insert(node) {
            self.spans.nodes.push(node);
        }
        match *d {
            Decoded::World(W::Pause { .. }) => self.state(e, NodeState::Paused(e.t_ns)),
            Decoded::World(W::Crash { .. }) => {
                self.state(e, NodeState::Down(e.t_ns));
                self.stop_believing(e, BeliefEnd::Crashed);
                self.crashed(e);
            }
            Decoded::World(W::Resume | W::Restart) => self.state(e, NodeState::Up),
            Decoded::Domain(ref d) => {
                let role = d.role();
                let listed =
                    (self.spans.appears.iter()).any(|&(n, r)| r == role && same_copy(n, node));
                if !listed && self.seen_as.insert((node, role)) {
                    self.spans.appears.push((node, role));
                }
                self.domain(e, d);
            }
            _ => {}
        }
    }

    /// The spans, every one still open at the end of the journal left open.
    pub fn finish(self) -> Spans<'a> {
        self.spans
    }

    fn domain(&mut self, e: &'a Event, d: &D<&'a str>) {
        match *d {
            D::Acquired {
                lease,
                token,
                ttl_ms,
                ..
            } => {
                self.stop_believing(e, BeliefEnd::Replaced);
                let ttl_ms = ttl_ms.unwrap_or(0);
                let until = e
                    .local_ns
                    .saturating_add(i64::try_from(ttl_ms).unwrap_or(i64::MAX) * 1_000_000);
                let i = self.spans.beliefs.len();
                self.spans.beliefs.push(BeliefSpan {
                    client: e.node.as_str(),
                    lease,
                    token,
                    from_seq: e.seq,
                    from_t_ns: e.t_ns,
                    from_local_ns: e.local_ns,
                    first: Move {
                        seq: e.seq,
                        t_ns: e.t_ns,
                        ttl_ms,
                        until_local_ns: until,
                    },
                    renewals: Vec::new(),
                    until: None,
                });
                let client = e.node.as_str();
                self.spans.beliefs_of.entry(client).or_default().push(i);
                self.believing.insert(client, i);
            }
            // The lock extended the lease: the client now believes it
            // until it asked plus the TTL granted (`asked_ago_ns` before
            // this event on its own clock).
            D::Renewed {
                lease,
                ttl_ms,
                asked_ago_ns,
            } => {
                let Some(&i) = self.believing.get(e.node.as_str()) else {
                    return;
                };
                let belief = &mut self.spans.beliefs[i];
                if belief.lease == lease {
                    let ttl_ms = ttl_ms.unwrap_or(0);
                    let asked_ago = i64::try_from(asked_ago_ns.unwrap_or(0)).unwrap_or(0);
                    let until = e.local_ns.saturating_sub(asked_ago).saturating_add(
                        i64::try_from(ttl_ms).unwrap_or(i64::MAX / 1_000_000) * 1_000_000,
                    );
                    belief.renewals.push(Move {
                        seq: e.seq,
                        t_ns: e.t_ns,
                        ttl_ms,
                        until_local_ns: until,
                    });
                }
            }
            D::Lost => self.stop_believing(e, BeliefEnd::Lost),
            D::Lapsed { .. } => self.stop_believing(e, BeliefEnd::Lapsed),
            D::Released { lease } => {
                let believed = self.believing.get(e.node.as_str());
                if believed.is_some_and(|&i| self.spans.beliefs[i].lease == lease) {
                    self.stop_believing(e, BeliefEnd::Released);
                }
            }
            D::Granted {
                client,
                lease,
                token,
                ..
            } => self.granted(e, client, lease, token),
            D::Expired {
                client,
                lease,
                reason,
                ..
            } => self.lock_end(e, client, lease, HoldEnd::of_expired(reason)),
            D::LockReleased { client, lease } => self.lock_end(e, client, lease, HoldEnd::Released),
            _ => {}
        }
    }

    fn state(&mut self, e: &'a Event, state: NodeState) {
        self.spans
            .states
            .entry(e.node.as_str())
            .or_default()
            .push(StateSpan {
                from_seq: e.seq,
                from_t_ns: e.t_ns,
                state,
            });
    }

    fn stop_believing(&mut self, e: &Event, why: BeliefEnd) {
        if let Some(i) = self.believing.remove(e.node.as_str()) {
            self.spans.beliefs[i].until = Some((e.seq, e.t_ns, why));
        }
    }

    fn granted(&mut self, e: &'a Event, client: &'a str, lease: u64, token: Option<u64>) {
        let lock = e.node.as_str();
        self.stop_holding(e, HoldEnd::Superseded);
        let i = self.spans.holders.len();
        self.spans.holders.push(HolderSpan {
            lock,
            client,
            lease,
            token,
            from_seq: e.seq,
            from_t_ns: e.t_ns,
            until: None,
            live_until: None,
        });
        self.spans.holders_at.entry(lock).or_default().push(i);
        self.holding.insert(lock, i);
        self.live.insert((lock, client, lease, i));
    }

    fn stop_holding(&mut self, e: &Event, how: HoldEnd<'a>) {
        if let Some(i) = self.holding.remove(e.node.as_str()) {
            self.spans.holders[i].until = Some((e.seq, e.t_ns, how));
            self.spans.holder_ends.push(i);
        }
    }

    /// A lock node's `expired` or `released` of (`client`, `lease`): ends
    /// the holding if it is the current one, and every live grant of it.
    fn lock_end(&mut self, e: &'a Event, client: &'a str, lease: u64, how: HoldEnd<'a>) {
        let lock = e.node.as_str();
        let current = self.holding.get(lock).is_some_and(|&i| {
            let h = &self.spans.holders[i];
            h.client == client && h.lease == lease
        });
        if current {
            self.stop_holding(e, how);
        }
        let grants = (lock, client, lease, 0)..=(lock, client, lease, usize::MAX);
        let ended = self.live.range(grants).copied().collect();
        self.unlive(e.seq, ended);
    }

    /// Ends the liveness of `grants` (keys of `live`) at `seq`.
    fn unlive(&mut self, seq: u64, grants: Vec<(&'a str, &'a str, u64, usize)>) {
        for key in grants {
            self.live.remove(&key);
            self.spans.holders[key.3].live_until.get_or_insert(seq);
        }
    }

    /// A node's crash: a lock node's grants are live there no more (it runs
    /// no clock), though it may still hold them on disk.
    fn crashed(&mut self, e: &'a Event) {
        let lock = e.node.as_str();
        let ended = self
            .live
            .range((lock, "", 0, 0)..)
            .take_while(|k| k.0 == lock)
            .copied()
            .collect();
        self.unlive(e.seq, ended);
    }
}

/// Whether `a` and `b` are the same copy of a text (same address and
/// length): a fast path before comparing texts, never a substitute for it.
fn same_copy(a: &str, b: &str) -> bool {
    std::ptr::eq(a.as_ptr(), b.as_ptr()) && a.len() == b.len()
}

#[cfg(test)]
mod tests {
    use sim::journal::{Event, Journal};

    use super::*;
    use crate::oracle::history::History;
    use crate::oracle::Roles;

    fn event(t: u64, node: &str, kind: &str) -> Event {
        Event::new(0, t, node, t as i64, kind)
    }

    fn granted(t: u64, client: &str, lease: u64) -> Event {
        event(t, "lock", "granted")
            .with("client", client)
            .with("lease", lease)
    }

    #[test]
    fn a_lock_crash_ends_no_holding_but_the_grant_is_live_there_no_more() {
        let journal = Journal::from_events([
            granted(1, "client1", 1),
            event(2, "lock", "crash"),
            event(3, "lock", "restart"),
            event(4, "lock", "expired")
                .with("client", "client1")
                .with("lease", 1u64)
                .with("reason", "restart"),
        ]);
        let roles = Roles::default();
        let history = History::index(&journal, &roles);
        let spans = &history.spans;
        // Held across the crash, until the lock says it lost it.
        assert_eq!(spans.holder("lock", 0), None);
        assert_eq!(spans.holder("lock", 3), Some(0));
        assert_eq!(spans.holder("lock", 4), None);
        assert_eq!(spans.holders[0].until, Some((3, 4, HoldEnd::LostInACrash)));
        // Live (its clock running on it) only until the crash.
        assert_eq!(spans.live("lock", 1).count(), 1);
        assert_eq!(spans.live("lock", 2).count(), 0);
        assert_eq!(spans.state("lock", 2), NodeState::Down(2));
        assert_eq!(spans.state("lock", 3), NodeState::Up);
    }

    #[test]
    fn a_superseded_grant_stays_live_until_the_lock_ends_it() {
        let journal = Journal::from_events([
            granted(1, "client1", 1),
            granted(2, "client2", 2),
            event(3, "lock", "expired")
                .with("client", "client1")
                .with("lease", 1u64),
        ]);
        let roles = Roles::default();
        let history = History::index(&journal, &roles);
        let spans = &history.spans;
        assert_eq!(spans.holders[0].until, Some((1, 2, HoldEnd::Superseded)));
        assert_eq!(spans.holder("lock", 2), Some(1));
        let live = |p| spans.live("lock", p).map(|h| h.client).collect::<Vec<_>>();
        assert_eq!(live(2), ["client1", "client2"]);
        assert_eq!(live(3), ["client2"]);
        // The late end of the superseded grant does not end the holder.
        assert_eq!(spans.holder("lock", 3), Some(1));
        assert_eq!(spans.holder_ends, [0]);
    }

    #[test]
    fn renewals_move_the_believed_end_and_a_release_of_another_lease_ends_nothing() {
        let s = 1_000_000_000u64;
        let journal = Journal::from_events([
            event(s, "client1", "acquired")
                .with("lease", 1u64)
                .with("ttl_ms", 10_000u64),
            event(5 * s, "client1", "renewed")
                .with("lease", 1u64)
                .with("ttl_ms", 10_000u64),
            event(6 * s, "client1", "released").with("lease", 2u64),
            event(7 * s, "client1", "lapsed").with("lease", 1u64),
        ]);
        let roles = Roles::default();
        let history = History::index(&journal, &roles);
        let spans = &history.spans;
        assert_eq!(spans.belief("client1", 0), None);
        assert_eq!(spans.belief("client1", 1), Some(0));
        let until: Vec<i64> = spans.beliefs[0].moves().map(|m| m.until_local_ns).collect();
        assert_eq!(until, [11 * s as i64, 15 * s as i64]);
        assert_eq!(spans.belief("client1", 3), Some(0));
        assert_eq!(spans.belief("client1", 4), None);
        assert_eq!(spans.beliefs[0].until, Some((3, 7 * s, BeliefEnd::Lapsed)));
    }
}
