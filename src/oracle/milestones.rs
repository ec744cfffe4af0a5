//! Milestones: the dangerous situations a run reached, counted in one pass
//! over the journal. They are not violations; they say what a run *tested*.
//! A sweep in which no holder ever outlived its lease says nothing about
//! fencing, however many seeds came out safe.
//!
//! ```
//! use fencesim::oracle::Milestones;
//! use sim::journal::{Event, Journal};
//!
//! let s = 1_000_000_000u64;
//! let e = |t: u64, node: &str, kind: &str| Event::new(0, t, node, t as i64, kind);
//! let journal = Journal::from_events([
//!     e(0, "client1", "acquired").with("lease", 1u64).with("token", 33u64),
//!     e(0, "client1", "pause"),
//!     e(10 * s, "lock", "expired").with("client", "client1").with("lease", 1u64),
//!     e(15 * s, "client1", "resume"),
//! ]);
//! let m = Milestones::count(&journal);
//! assert_eq!(m.holder_paused_past_lease, 1);
//! assert_eq!(m.lease_expired_while_held, 1);
//! assert_eq!(m.zombie_write_sent, 0);
//! ```
//!
//! A client believes in its latest grant (its latest `acquired`) until it
//! logs `released` of its lease, `lost` or `lapsed`, or crashes: the
//! history's belief spans, which also say which grants are live at each
//! lock node. A grant *ends* at the lock with its lock-side `expired` or
//! `released` (the `ends`-th one, with several lock nodes). Whether a grant is still *current*, and which is
//! *newer*, is the oracle's own judgement (the lock's order, see
//! [`crate::oracle`]): the storage milestones and `token_regressed` count
//! exactly what the oracle counts, so a milestone never contradicts the
//! verdict.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use sim::events::WorldEvent as W;
use sim::journal::{Event, Journal};

use super::history::History;

use crate::events::{Decoded, DomainEvent as D, Op, Role};

use super::finding::ROUNDING_NS;

/// How many times a run reached each dangerous situation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Milestones {
    /// A client was paused across the end of its own grant at the lock (a
    /// pause held it when the lock ended the grant), and acted again still
    /// believing it (counted when it does). A client only silent then is
    /// not counted.
    pub holder_paused_past_lease: u64,
    /// The lock expired, or granted to another client, a lease its client
    /// still believed in (once per grant).
    pub lease_expired_while_held: u64,
    /// A client acquired while another client still believed it held the lock.
    pub two_believers: u64,
    /// A client received a grant whose lease the lock had already ended.
    pub grant_arrived_expired: u64,
    /// A client sent a write under a grant that had ended at the lock or
    /// that a newer grant had superseded: the premise of a stale, zombie or
    /// late write, whichever it then turns out to be (or of a rejection).
    pub zombie_write_sent: u64,
    /// The storage rejected a write whose grant was no longer current.
    pub stale_write_rejected: u64,
    /// The storage accepted a write after accepting one made under a newer grant.
    pub stale_write_accepted: u64,
    /// A lock node handed out a token not greater than one it handed out before.
    pub token_regressed: u64,
    /// A lock node restarted after a crash.
    pub lock_restarted: u64,
    /// The storage restarted after a crash.
    pub storage_restarted: u64,
    /// A write sent while its grant was current reached the storage after
    /// the lock had ended that grant or made a newer one: the network (or a
    /// stalled storage) held it across the lease's end. A write sent late
    /// by a paused holder is `zombie_write_sent` instead.
    pub write_outlived_grant: u64,
    /// A lock node's clock began to run fast while a lease it had granted
    /// was live (once per clock change), or its wall clock jumped forward
    /// and the lock then ended such a lease before the end it promised on
    /// its monotonic clock (once per lease so shortened): a lock whose
    /// expiry runs on its monotonic clock is not moved by a wall jump.
    pub lock_clock_forward: u64,
    /// The lock freed a grant on a release its client had not sent, while
    /// the client still believed in it (once per grant): a duplicated,
    /// delayed or retried release (etcd's `Unlock` retried after its delete
    /// had committed, once the same session had locked again), or another
    /// client's.
    pub released_while_held: u64,
}

/// How many milestones there are.
pub const COUNT: usize = 13;

/// Every milestone's name, in the order they are printed.
pub const NAMES: [&str; COUNT] = [
    "holder_paused_past_lease",
    "lease_expired_while_held",
    "two_believers",
    "grant_arrived_expired",
    "zombie_write_sent",
    "stale_write_rejected",
    "stale_write_accepted",
    "token_regressed",
    "lock_restarted",
    "storage_restarted",
    "write_outlived_grant",
    "lock_clock_forward",
    "released_while_held",
];

impl Milestones {
    /// Each milestone's name and count, in [`NAMES`] order.
    pub fn pairs(&self) -> [(&'static str, u64); COUNT] {
        let counts = [
            self.holder_paused_past_lease,
            self.lease_expired_while_held,
            self.two_believers,
            self.grant_arrived_expired,
            self.zombie_write_sent,
            self.stale_write_rejected,
            self.stale_write_accepted,
            self.token_regressed,
            self.lock_restarted,
            self.storage_restarted,
            self.write_outlived_grant,
            self.lock_clock_forward,
            self.released_while_held,
        ];
        let mut out = [("", 0); COUNT];
        for (slot, (name, count)) in out.iter_mut().zip(NAMES.into_iter().zip(counts)) {
            *slot = (name, count);
        }
        out
    }

    /// The milestones reached (count > 0), as `name ×count` text, or `none`.
    pub fn reached_text(&self) -> String {
        let reached: Vec<String> = self
            .pairs()
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(name, n)| format!("{name} ×{n}"))
            .collect();
        if reached.is_empty() {
            "none".to_owned()
        } else {
            reached.join(", ")
        }
    }

    /// Counts the milestones of `journal`, in one pass.
    pub fn count(journal: &Journal) -> Milestones {
        Milestones::count_with_roles(journal, &super::Roles::default())
    }

    /// [`Milestones::count`], the nodes' roles given by the run's topology
    /// (empty: what the journal shows, [`super::Roles::from_journal`]).
    pub fn count_with_roles(journal: &Journal, roles: &super::Roles) -> Milestones {
        let history = History::index(journal, roles);
        let mut findings = Vec::new();
        let config = super::OracleConfig::default();
        let mut count = |kind| super::finding::check(kind, &history, &config, &mut findings);
        let stale = count(super::ViolationKind::StaleWrite);
        let regressed = count(super::ViolationKind::TokenRegression);
        Milestones::count_indexed(journal, &history, stale, regressed)
    }

    /// Counts the milestones of `journal`, whose indexes are `history`
    /// and whose oracle found `stale` stale writes and `regressed` token
    /// regressions (the milestones count exactly those).
    pub(super) fn count_indexed(
        journal: &Journal,
        history: &History<'_>,
        stale: u64,
        regressed: u64,
    ) -> Milestones {
        Milestones::count_with_findings(journal, history, stale, regressed).0
    }

    /// [`Milestones::count_indexed`], and each acceptance's own milestones
    /// (keyed by its journal `seq`), each 0 or 1: what the write's own
    /// grant and sending reached (`holder_paused_past_lease`,
    /// `lease_expired_while_held`, `two_believers`, `grant_arrived_expired`,
    /// `zombie_write_sent`, `write_outlived_grant`), with what the world had
    /// reached before it landed (`stale_write_rejected`, `lock_restarted`,
    /// `storage_restarted`, `lock_clock_forward`) and the run's own findings
    /// (`stale_write_accepted`, `token_regressed`). A stale or zombie write
    /// shows its scenario's mechanism when its own milestones do, not when
    /// some other write of the run reached them.
    pub(super) fn count_with_findings(
        journal: &Journal,
        history: &History<'_>,
        stale: u64,
        regressed: u64,
    ) -> (Milestones, BTreeMap<u64, Milestones>) {
        let mut pass = Pass::new(history);
        debug_assert_eq!(journal.events().len(), history.decoded.len());
        for (e, &d) in journal.events().iter().zip(&history.decoded) {
            pass.event(e, d);
        }
        pass.m.stale_write_accepted = stale;
        pass.m.token_regressed = regressed;
        let mut accepted = pass.accepted;
        for own in accepted.values_mut() {
            own.stale_write_accepted = stale.min(1);
            own.token_regressed = regressed.min(1);
        }
        (pass.m, accepted)
    }
}

struct Grant<'a> {
    client: &'a str,
    /// True time at which the lock ended it.
    ended_ns: Option<u64>,
    /// Already counted as `lease_expired_while_held` / `holder_paused_past_lease`.
    counted_held: bool,
    counted_paused: bool,
    /// Already counted as `released_while_held`.
    counted_released: bool,
    /// It reached its client already ended (`grant_arrived_expired`).
    arrived_ended: bool,
    /// Another client believed in a grant of its own while this one was
    /// believed (`two_believers`, on either side).
    overlapped: bool,
}

/// A write sent under a belief: its grant (index into `Pass::grants`),
/// whether that grant was still current when it was sent, and whether it
/// was already counted as `write_outlived_grant`.
#[derive(Clone, Copy)]
struct Sent {
    grant: usize,
    current: bool,
    outlived: bool,
}

struct Pass<'a> {
    m: Milestones,
    grants: Vec<Grant<'a>>,
    /// The grants believed at this point of the pass (their clients'
    /// belief spans, [`super::spans::Spans::belief`]).
    believed: BTreeSet<usize>,
    /// Each believer's true time of its latest event since its `acquired`
    /// (for silence across the grant's end).
    last_ns: BTreeMap<&'a str, u64>,
    /// Write id → how it was sent.
    writes: BTreeMap<&'a str, Sent>,
    /// Each acceptance's own milestones (its journal `seq` → 0/1 for each):
    /// see [`Milestones::count_with_findings`].
    accepted: BTreeMap<u64, Milestones>,
    /// Each node's clock as the journal changed it: wall offset from true
    /// time (ns) and rate.
    clocks: BTreeMap<&'a str, (i64, f64)>,
    /// Each live grant's latest promise on its lock node's monotonic clock
    /// (reading when made, ns; ttl, ns), keyed by (lock node, client, lease).
    promises: BTreeMap<(&'a str, &'a str, u64), (u64, u64)>,
    /// Live grants whose lock node's wall clock moved ahead: counted when
    /// the lock then ends one before its monotonic promise (its expiry ran
    /// on the wall clock).
    wall_moved: BTreeSet<(&'a str, &'a str, u64)>,
    /// Token-only writes: left out of the storage milestones.
    fences: BTreeSet<&'a str>,
    /// The journal position just after the event the pass is at.
    at: u64,
    /// The oracle's indexes of the same journal: its grants are this pass's
    /// grants, index for index (one per `acquired`), in the lock's order.
    history: &'a History<'a>,
    /// Each node's beliefs as the spans list them, looked up once per node
    /// and found again by the address of the node's name, which every
    /// event of the node shares.
    beliefs_of: Vec<(&'a str, &'a [usize])>,
}

impl<'a> Pass<'a> {
    /// The beliefs of `node` ([`super::spans::Spans::beliefs_of`]).
    fn beliefs_of(&mut self, node: &'a str) -> &'a [usize] {
        let known = self
            .beliefs_of
            .iter()
            .find(|(n, _)| std::ptr::eq(n.as_ptr(), node.as_ptr()) && n.len() == node.len());
        if let Some(&(_, of)) = known {
            return of;
        }
        let of = self.history.spans.beliefs_of(node);
        // A journal read back from a file has a copy of each name per
        // event: the cache stays small, and the look-up answers the rest.
        if self.beliefs_of.len() < 64 {
            self.beliefs_of.push((node, of));
        }
        of
    }

    fn new(history: &'a History<'a>) -> Self {
        Pass {
            m: Milestones::default(),
            grants: Vec::new(),
            believed: BTreeSet::new(),
            last_ns: BTreeMap::new(),
            writes: BTreeMap::new(),
            accepted: BTreeMap::new(),
            clocks: BTreeMap::new(),
            promises: BTreeMap::new(),
            wall_moved: BTreeSet::new(),
            fences: BTreeSet::new(),
            at: 0,
            history,
            beliefs_of: Vec::new(),
        }
    }

    fn event(&mut self, e: &'a Event, d: Decoded<'a>) {
        let node = e.node.as_str();
        self.at = e.seq + 1;
        // What the node believed before the event and after it: the only
        // belief an event can change is its own node's.
        let of = self.beliefs_of(node);
        let (was, now) = self.history.spans.belief_around(of, e.seq);
        if let Some(g) = was {
            self.believed.remove(&g);
        }
        match d {
            Decoded::Domain(D::Acquired { .. }) => self.acquired(e),
            Decoded::Domain(D::Granted {
                client,
                lease,
                ttl_ms,
                mono_ns,
                ..
            }) => self.granted(e, client, lease, mono_ns, ttl_ms),
            Decoded::Domain(D::LockRenewed {
                client,
                lease,
                ttl_ms,
                mono_ns,
            }) => self.promise(e, client, lease, mono_ns, ttl_ms),
            Decoded::Domain(D::Expired {
                client,
                lease,
                reason,
                mono_ns,
            }) => self.lock_end(e, client, lease, Some((reason, mono_ns))),
            Decoded::Domain(D::LockReleased { client, lease }) => {
                self.lock_end(e, client, lease, None)
            }
            Decoded::Domain(D::Wrote {
                write,
                op: Op::Fence,
                ..
            })
            | Decoded::Domain(D::Fenced { write, .. }) => {
                self.fences.insert(write);
            }
            Decoded::Domain(D::Wrote { write, .. }) => self.wrote(e, write),
            Decoded::Domain(D::Accepted { write, .. }) => self.storage(e, write, true),
            Decoded::Domain(D::Rejected { write, .. }) => self.storage(e, write, false),
            Decoded::World(W::Restart) => match self.history.roles.get(node) {
                Some(Role::Storage) => self.m.storage_restarted += 1,
                Some(Role::Lock) => self.m.lock_restarted += 1,
                _ => {}
            },
            Decoded::World(W::Clock {
                rate,
                offset_ns,
                jump_ns,
            }) => self.clock(e, rate, offset_ns, jump_ns),
            _ => {}
        }
        if let Some(g) = now {
            self.believed.insert(g);
            if was != now {
                self.last_ns.insert(node, e.t_ns);
            }
        }
        if !matches!(d, Decoded::World(W::Drop { .. } | W::Crash { .. })) {
            self.came_back(node, now, e.t_ns);
        }
    }

    /// `node` acts at `t_ns`, believing grant `believed` (after its event):
    /// if that grant ended at the lock since the node last acted, and a
    /// pause held the node when it ended, it was paused across that end.
    /// A node that was merely silent (waiting on the network, or on a grant
    /// that someone else's request ended) was not paused: that is not this
    /// milestone. Only believers' times matter: a client's `acquired` is
    /// where its belief starts, and it acts then.
    fn came_back(&mut self, node: &'a str, believed: Option<usize>, t_ns: u64) {
        let Some(g) = believed else {
            return;
        };
        let last = self.last_ns.insert(node, t_ns).unwrap_or(t_ns);
        let grant = &self.grants[g];
        if let Some(end) = grant.ended_ns {
            let paused = || {
                self.history.stops.iter().any(|s| {
                    s.node == node
                        && !s.down
                        && s.from_t_ns <= end
                        && s.to.map_or(true, |(_, to)| end <= to)
                })
            };
            if !grant.counted_paused && last <= end && end < t_ns && paused() {
                let grant = &mut self.grants[g];
                grant.counted_paused = true;
                self.m.holder_paused_past_lease += 1;
            }
        }
    }

    fn acquired(&mut self, e: &'a Event) {
        let client = e.node.as_str();
        // The client's own earlier belief left `believed` before this event.
        let others: Vec<usize> = self.believed.iter().copied().collect();
        self.m.two_believers += u64::from(!others.is_empty());
        for &o in &others {
            self.grants[o].overlapped = true;
        }
        let g = self.grants.len();
        // The oracle matched the lock's ends to grants (through restarts that
        // reuse lease ids, and with several lock nodes); an end before the
        // `acquired` is a grant that reached its client already over.
        let arrived_ended = self.history.grants[g]
            .end
            .is_some_and(|end| end.seq < e.seq);
        self.m.grant_arrived_expired += u64::from(arrived_ended);
        self.grants.push(Grant {
            client,
            ended_ns: arrived_ended.then_some(e.t_ns),
            counted_held: false,
            counted_released: false,
            // A grant that arrived ended is `grant_arrived_expired`, not a pause.
            counted_paused: arrived_ended,
            arrived_ended,
            overlapped: !others.is_empty(),
        });
        debug_assert_eq!(self.history.spans.beliefs[g].from_seq, e.seq);
    }

    /// A lock node's grant or renewal: the end it promises, on its own
    /// monotonic clock, if it says so.
    fn promise(
        &mut self,
        e: &'a Event,
        client: &'a str,
        lease: u64,
        mono_ns: Option<u64>,
        ttl_ms: Option<u64>,
    ) {
        let key = (e.node.as_str(), client, lease);
        match (mono_ns, ttl_ms) {
            (Some(mono), Some(ttl_ms)) => {
                self.promises
                    .insert(key, (mono, ttl_ms.saturating_mul(1_000_000)));
            }
            _ => {
                self.promises.remove(&key);
            }
        }
    }

    fn granted(
        &mut self,
        e: &'a Event,
        to: &'a str,
        lease: u64,
        mono_ns: Option<u64>,
        ttl_ms: Option<u64>,
    ) {
        self.promise(e, to, lease, mono_ns, ttl_ms);
        // A lease handed to someone else while a holder still believes in
        // its own: the lock has moved on without that holder.
        let held: Vec<usize> = self
            .believed
            .iter()
            .copied()
            .filter(|&g| self.grants[g].client != to)
            .collect();
        for g in held {
            self.held_lost(g);
        }
    }

    fn held_lost(&mut self, g: usize) {
        let grant = &mut self.grants[g];
        if !grant.counted_held {
            grant.counted_held = true;
            self.m.lease_expired_while_held += 1;
        }
    }

    /// A lock node's end of a grant: `expired` is `Some((reason, mono_ns))`
    /// for an expiry, `None` for a release.
    fn lock_end(
        &mut self,
        e: &'a Event,
        client: &'a str,
        lease: u64,
        expired: Option<(Option<&str>, Option<u64>)>,
    ) {
        let key = (e.node.as_str(), client, lease);
        let promise = self.promises.remove(&key);
        if let (true, Some((None, mono_ns))) = (self.wall_moved.remove(&key), expired) {
            // Ended before its promise on the monotonic clock: the lock's
            // expiry followed the wall clock that moved ahead.
            let early = match (promise, mono_ns) {
                (Some((from, ttl)), Some(now)) => now.saturating_sub(from) + ROUNDING_NS < ttl,
                _ => false,
            };
            self.m.lock_clock_forward += u64::from(early);
        }
        // Only an end of a grant its client already acquired; one before is
        // counted at the `acquired` (`grant_arrived_expired`).
        let Some(g) = self.history.ended_at(e.seq) else {
            return;
        };
        let Some(grant) = self.grants.get_mut(g) else {
            return;
        };
        grant.ended_ns = Some(e.t_ns);
        if self.history.spans.belief(client, self.at) == Some(g) {
            match expired {
                Some(_) => self.held_lost(g),
                // A holder gives a grant back only once it stopped believing
                // in it (its `released` comes first): this release was not
                // its own.
                None => {
                    let grant = &mut self.grants[g];
                    if !grant.counted_released {
                        grant.counted_released = true;
                        self.m.released_while_held += 1;
                    }
                }
            }
        }
    }

    /// Whether grant `g` was no longer current before event `seq`: the lock
    /// had ended it, or had made a newer grant (in the lock's order).
    fn superseded(&self, g: usize, seq: u64) -> bool {
        self.history.ended_before(g, seq).is_some()
            || self.history.newer_grant_before(g, seq).is_some()
    }

    fn wrote(&mut self, e: &'a Event, write: &'a str) {
        let Some(g) = self.history.spans.belief(e.node.as_str(), self.at) else {
            return;
        };
        debug_assert_eq!(self.grants[g].client, e.node);
        let current = !self.superseded(g, e.seq);
        let sent = Sent {
            grant: g,
            current,
            outlived: false,
        };
        self.writes.insert(write, sent);
        if !current {
            self.m.zombie_write_sent += 1;
        }
    }

    /// A clock change: forward (a jump ahead, a larger offset, a faster
    /// rate) on a lock node that has a live grant can end that grant early:
    /// a faster rate counts at once; a wall clock moving ahead counts once
    /// the lock ends a grant before its monotonic promise because of it.
    fn clock(
        &mut self,
        e: &'a Event,
        new_rate: Option<f64>,
        offset_ns: Option<i64>,
        jump_ns: Option<i64>,
    ) {
        let node = e.node.as_str();
        let (offset, rate) = self.clocks.get(node).copied().unwrap_or((0, 1.0));
        let (mut faster, mut wall_ahead) = (false, false);
        let mut next = (offset, rate);
        if let Some(r) = new_rate {
            faster |= r > rate;
            next.1 = r;
        }
        if let Some(o) = offset_ns {
            wall_ahead |= o > next.0;
            next.0 = o;
        }
        if let Some(j) = jump_ns {
            wall_ahead |= j > 0;
            next.0 = next.0.saturating_add(j);
        }
        self.clocks.insert(node, next);
        if !self.history.roles.is(node, Role::Lock) {
            return;
        }
        // The grants live at the lock: granted, not yet expired or
        // released there, and the lock has not crashed since (whether they
        // outlive it on disk or not, it runs no clock).
        let live: BTreeSet<(&'a str, u64)> = self
            .history
            .spans
            .live(node, self.at)
            .map(|h| (h.client, h.lease))
            .collect();
        if live.is_empty() {
            return;
        }
        // A faster rate runs both of the node's clocks fast: it shortens a
        // live lease whichever clock the lock expires it on.
        if faster {
            self.m.lock_clock_forward += 1;
            return;
        }
        if !wall_ahead {
            return;
        }
        // A wall clock moving ahead shortens only a lease expired on the
        // wall clock: judged when the lock ends it, against the promise on
        // its monotonic clock. A grant that promised nothing on it is
        // counted now.
        let mut unknown = false;
        for (client, lease) in live {
            let key = (node, client, lease);
            if self.promises.contains_key(&key) {
                self.wall_moved.insert(key);
            } else {
                unknown = true;
            }
        }
        self.m.lock_clock_forward += u64::from(unknown);
    }

    fn storage(&mut self, e: &'a Event, write: &'a str, accepted: bool) {
        if self.fences.contains(write) {
            return;
        }
        let Some(&sent) = self.writes.get(write) else {
            return;
        };
        let g = sent.grant;
        let superseded = self.superseded(g, e.seq);
        if !accepted && superseded {
            self.m.stale_write_rejected += 1;
        }
        if sent.current && superseded && !sent.outlived {
            // Counted once per write: a duplicate arriving later is the same write.
            let outlived = Sent {
                outlived: true,
                ..sent
            };
            self.writes.insert(write, outlived);
            self.m.write_outlived_grant += 1;
        }
        if accepted {
            let grant = &self.grants[g];
            let paused = grant.counted_paused && !grant.arrived_ended;
            let own = Milestones {
                holder_paused_past_lease: u64::from(paused),
                lease_expired_while_held: u64::from(grant.counted_held),
                two_believers: u64::from(grant.overlapped),
                grant_arrived_expired: u64::from(grant.arrived_ended),
                zombie_write_sent: u64::from(!sent.current),
                write_outlived_grant: u64::from(sent.current && superseded),
                // What the world did before this acceptance.
                stale_write_rejected: self.m.stale_write_rejected.min(1),
                lock_restarted: self.m.lock_restarted.min(1),
                storage_restarted: self.m.storage_restarted.min(1),
                lock_clock_forward: self.m.lock_clock_forward.min(1),
                released_while_held: u64::from(grant.counted_released),
                // Findings of the oracle's own, filled in from the run's.
                stale_write_accepted: 0,
                token_regressed: 0,
            };
            self.accepted.insert(e.seq, own);
        }
    }
}

#[cfg(test)]
mod tests;
