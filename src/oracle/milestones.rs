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
//! logs `released`, `lost` or `lapsed`, or crashes. A grant *ends* at the
//! lock with its lock-side `expired` or `released` (the `ends`-th one, with
//! several lock nodes). Whether a grant is still *current*, and which is
//! *newer*, is the oracle's own judgement (the lock's order, see
//! [`crate::oracle`]): the storage milestones and `token_regressed` count
//! exactly what the oracle counts, so a milestone never contradicts the
//! verdict.

use std::collections::BTreeMap;

use serde::Serialize;
use sim::events as world;
use sim::journal::{Event, Journal};

use super::history::History;

use crate::events::{
    ACCEPTED, ACQUIRED, EXPIRED, FENCED, GRANTED, LAPSED, LOST, REJECTED, RELEASED, WROTE,
};

/// How many times a run reached each dangerous situation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Milestones {
    /// A client was paused, or did nothing, across the end of its own grant
    /// at the lock, and acted again still believing it (counted when it does).
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
    /// A lock node's clock jumped forward, or began to run fast, while a
    /// lease it had granted was live: that lease can end early at that node
    /// (counted once per clock change).
    pub lock_clock_forward: u64,
}

/// How many milestones there are.
pub const COUNT: usize = 12;

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
        let history = History::index(journal);
        let mut findings = Vec::new();
        let stale = super::stale::check(&history, &mut findings);
        let regressed = super::tokens::check(&history, &mut findings);
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
        let mut pass = Pass::new(history);
        for e in journal.events() {
            pass.event(e);
        }
        pass.m.stale_write_accepted = stale;
        pass.m.token_regressed = regressed;
        pass.m
    }
}

/// A client's belief in a grant.
struct Belief {
    /// The grant (index into `Pass::grants`).
    grant: usize,
    /// True time of the client's latest event since its `acquired` (for
    /// silence across the grant's end).
    last_ns: u64,
}

struct Grant<'a> {
    client: &'a str,
    /// True time at which the lock ended it.
    ended_ns: Option<u64>,
    /// Already counted as `lease_expired_while_held` / `holder_paused_past_lease`.
    counted_held: bool,
    counted_paused: bool,
}

struct Pass<'a, 'h> {
    m: Milestones,
    grants: Vec<Grant<'a>>,
    /// Each client's believed grant.
    believes: BTreeMap<&'a str, Belief>,
    /// Write id → the grant it was sent under, and whether that grant was
    /// still current when it was sent.
    writes: BTreeMap<&'a str, (usize, bool)>,
    /// Each lock node's live grants (client, lease): granted, not yet
    /// expired or released there.
    live: BTreeMap<&'a str, std::collections::BTreeSet<(&'a str, u64)>>,
    /// Each node's clock as the journal changed it: wall offset from true
    /// time (ns) and rate.
    clocks: BTreeMap<&'a str, (i64, f64)>,
    /// Token-only writes: left out of the storage milestones.
    fences: std::collections::BTreeSet<&'a str>,
    /// The oracle's indexes of the same journal: its grants are this pass's
    /// grants, index for index (one per `acquired`), in the lock's order.
    history: &'h History<'h>,
}

impl<'a, 'h> Pass<'a, 'h> {
    fn new(history: &'h History<'h>) -> Self {
        Pass {
            m: Milestones::default(),
            grants: Vec::new(),
            believes: BTreeMap::new(),
            writes: BTreeMap::new(),
            live: BTreeMap::new(),
            clocks: BTreeMap::new(),
            fences: std::collections::BTreeSet::new(),
            history,
        }
    }

    fn event(&mut self, e: &'a Event) {
        let node = e.node.as_str();
        // The lock's `expired` and `released` name the client; the client's
        // own `released` does not.
        let lock_side = |e: &Event| e.get("client").is_some();
        match e.kind.as_str() {
            ACQUIRED => self.acquired(e),
            GRANTED => self.granted(e),
            EXPIRED | RELEASED if lock_side(e) => self.lock_end(e),
            RELEASED | LOST | LAPSED | world::CRASH => {
                self.believes.remove(node);
                if e.kind == world::CRASH {
                    // A crashed lock node's grants end with it (or outlive it
                    // in its durable state; either way it runs no clock).
                    self.live.remove(node);
                }
            }
            WROTE => self.wrote(e),
            FENCED => {
                if let Some(w) = e.str("write") {
                    self.fences.insert(w);
                }
            }
            ACCEPTED | REJECTED => self.storage(e),
            world::RESTART if node == "storage" => self.m.storage_restarted += 1,
            world::RESTART if is_lock_node(node) => self.m.lock_restarted += 1,
            world::CLOCK => self.clock(e),
            _ => {}
        }
        if e.kind != world::DROP && e.kind != world::CRASH {
            self.came_back(node, e.t_ns);
        }
    }

    /// `node` acts at `t_ns`: if it still believes a grant that ended at the
    /// lock since it last acted, it was paused or silent across that end.
    /// Only believers' times matter: a client's `acquired` is where its
    /// belief starts, and it acts then.
    fn came_back(&mut self, node: &str, t_ns: u64) {
        let Some(belief) = self.believes.get_mut(node) else {
            return;
        };
        let last = std::mem::replace(&mut belief.last_ns, t_ns);
        let grant = &mut self.grants[belief.grant];
        if let Some(end) = grant.ended_ns {
            if !grant.counted_paused && last <= end && end < t_ns {
                grant.counted_paused = true;
                self.m.holder_paused_past_lease += 1;
            }
        }
    }

    fn acquired(&mut self, e: &'a Event) {
        let client = e.node.as_str();
        let others = self.believes.keys().any(|c| *c != client);
        self.m.two_believers += u64::from(others);
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
            // A grant that arrived ended is `grant_arrived_expired`, not a pause.
            counted_paused: arrived_ended,
        });
        let belief = Belief {
            grant: g,
            last_ns: e.t_ns,
        };
        self.believes.insert(client, belief);
    }

    fn granted(&mut self, e: &'a Event) {
        let to = e.str("client").unwrap_or("");
        if let Some(lease) = e.u64("lease") {
            self.live
                .entry(e.node.as_str())
                .or_default()
                .insert((to, lease));
        }
        // A lease handed to someone else while a holder still believes in
        // its own: the lock has moved on without that holder.
        let held: Vec<usize> = self
            .believes
            .iter()
            .filter(|(c, _)| **c != to)
            .map(|(_, b)| b.grant)
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

    fn lock_end(&mut self, e: &'a Event) {
        let (Some(client), Some(lease)) = (e.str("client"), e.u64("lease")) else {
            return;
        };
        if let Some(live) = self.live.get_mut(e.node.as_str()) {
            live.remove(&(client, lease));
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
        if e.kind == EXPIRED && self.believes.get(client).is_some_and(|b| b.grant == g) {
            self.held_lost(g);
        }
    }

    /// Whether grant `g` was no longer current before event `seq`: the lock
    /// had ended it, or had made a newer grant (in the lock's order).
    fn superseded(&self, g: usize, seq: u64) -> bool {
        self.history.ended_before(g, seq).is_some()
            || self.history.newer_grant_before(g, seq).is_some()
    }

    fn wrote(&mut self, e: &'a Event) {
        let Some(write) = e.str("write") else { return };
        if e.str("op") == Some("fence") {
            self.fences.insert(write);
            return;
        }
        let Some(g) = self.believes.get(e.node.as_str()).map(|b| b.grant) else {
            return;
        };
        debug_assert_eq!(self.grants[g].client, e.node);
        let current = !self.superseded(g, e.seq);
        self.writes.insert(write, (g, current));
        if !current {
            self.m.zombie_write_sent += 1;
        }
    }

    /// A clock change: forward (a jump ahead, a larger offset, a faster
    /// rate) on a lock node that has a live grant can end that grant early.
    fn clock(&mut self, e: &'a Event) {
        let node = e.node.as_str();
        let (offset, rate) = self.clocks.get(node).copied().unwrap_or((0, 1.0));
        let mut forward = false;
        let mut next = (offset, rate);
        if let Some(r) = e.get(world::field::RATE).and_then(rate_of) {
            forward |= r > rate;
            next.1 = r;
        }
        if let Some(o) = e.i64(world::field::OFFSET_NS) {
            forward |= o > next.0;
            next.0 = o;
        }
        if let Some(j) = e.i64(world::field::JUMP_NS) {
            forward |= j > 0;
            next.0 = next.0.saturating_add(j);
        }
        self.clocks.insert(node, next);
        let granting = self.live.get(node).is_some_and(|l| !l.is_empty());
        if forward && granting && is_lock_node(node) {
            self.m.lock_clock_forward += 1;
        }
    }

    fn storage(&mut self, e: &'a Event) {
        let Some(write) = e.str("write") else { return };
        if self.fences.contains(write) {
            return;
        }
        let Some(&(g, sent_current)) = self.writes.get(write) else {
            return;
        };
        let superseded = self.superseded(g, e.seq);
        if e.kind == REJECTED && superseded {
            self.m.stale_write_rejected += 1;
        }
        if sent_current && superseded {
            // Counted once per write: a duplicate arriving later is the same write.
            self.writes.insert(write, (g, false));
            self.m.write_outlived_grant += 1;
        }
    }
}

fn rate_of(v: &sim::journal::Value) -> Option<f64> {
    match v {
        sim::journal::Value::F64(r) => Some(*r),
        _ => None,
    }
}

/// `lock` or `lock1` … `lockN`: the scenario's lock node names.
fn is_lock_node(node: &str) -> bool {
    node.strip_prefix("lock")
        .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests;
