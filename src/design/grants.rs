//! The lock side's journal: every grant, renewal, release and expiry a lock
//! server makes goes through its [`Grants`] ledger, which sends the answer
//! and journals the event the oracle reads, together.
//!
//! Storages get `accepted`/`rejected` for free from
//! [`StorageNode`](crate::design::storage::StorageNode); this is the lock
//! side's equivalent. It is a ledger the server owns rather than a host actor
//! around a policy because the bundled designs differ in exactly what a host
//! would own: what holds the lock (a lease, a Redis key, the lowest of a
//! queue of znodes or revisions, a session's lock), when it ends (a timer on
//! the monotonic clock, a wall-clock deadline noticed lazily, a session's
//! expiry, a restart without persistence) and what else a request answers
//! (queue slots, lease creation). Each design keeps its sans-IO state
//! machine and decides; the ledger is the only way it answers, so it cannot
//! send a grant without journaling `granted`, end one without `released` or
//! `expired`, or extend one without `renewed`:
//!
//! - [`Grants::grant`] journals `granted {client, lease, token?}` and sends
//!   [`Msg::Granted`]; [`Grants::repeat`] answers a second copy of the
//!   request with the same grant (no new event), and only for a live one.
//! - [`Grants::release`] ends the client's grant of that lease if it is live
//!   (`released {client, lease}`) and returns the [`ReleaseAck`] to send
//!   (`#[must_use]`: a design may send it after what the release set off,
//!   such as the next grant, as ZooKeeper's watch and etcd do);
//!   [`Grants::acknowledge`] answers a release that, by the design's rules,
//!   ends nothing.
//! - [`Grants::renew`] answers [`Msg::Renew`] with [`Msg::RenewReply`] and
//!   journals `renewed {client, lease}` when it extends a live grant.
//! - [`Grants::expire`] ends a live grant on the server's own clock
//!   (`expired {client, lease}`).
//!
//! **STONITH** ("shoot the other node in the head", [`Grants::with_stonith`]):
//! the ledger remembers each client whose grant ran out (`expired`, not
//! `released`) and, before it grants to another client, powers that
//! client's node off ([`sim::Context::power_off`], journaled as the node's
//! `crash` with `by` naming the lock), so the `crash` comes before the
//! `granted`. That stops a holder that is paused or still working; it
//! cannot recall a write the holder sent before it died, which is still in
//! the network and may land after the new holder's.
//!
//! **What a grant promises.** A lease lock's grant promises its TTL: the
//! ledger journals `ttl_ms` and the server's monotonic reading `mono_ns` on
//! `granted` and `renewed`, and `mono_ns` on `expired`, so the oracle can
//! tell a lock that ends a grant before the end it promised on its own
//! clock (`early_expiry`). A lock whose grants live as long as a session or
//! a connection ([`Grants::held_by_sessions`]: ZooKeeper, etcd, Chubby,
//! Hazelcast, PostgreSQL) promises no end: its events carry neither.
//!
//! A grant is named by its client and lease id (lease ids are unique per
//! client). The ledger holds no timers: when a grant ends is the design's
//! business, and so is what survives a crash ([`Grants::forget_all`] in
//! `on_crash` for a server whose grants live in memory, then
//! [`Grants::restarted`] in `on_start`, which journals them as `expired`
//! with `reason = "restart"`).
//!
//! ```
//! use std::time::Duration;
//! use fencesim::design::grants::Grants;
//! use fencesim::protocol::Msg;
//! use sim::testing::Harness;
//! # struct Lock(Grants);
//! # impl sim::Actor<Msg> for Lock {
//! #     fn on_message(&mut self, ctx: &mut sim::Context<'_, Msg>, from: usize, msg: Msg) {
//! #         match msg {
//! #             Msg::Acquire { req } => self.0.grant(ctx, from, req, req, Some(req), Duration::from_secs(10)),
//! #             Msg::Release { lease } => self.0.release(ctx, from, lease).send(ctx),
//! #             _ => {}
//! #         }
//! #     }
//! #     fn on_timer(&mut self, _: &mut sim::Context<'_, Msg>, _: sim::TimerId, _: u64) {}
//! # }
//! let mut lock = Lock(Grants::new());
//! let mut h = Harness::new(&["lock", "client1"], 0);
//! let step = h.message(&mut lock, 1, Msg::Acquire { req: 7 });
//! assert_eq!(step.events[0].0, "granted");
//! assert!(matches!(step.sends[0].1, Msg::Granted { lease: 7, token: Some(7), .. }));
//! let step = h.message(&mut lock, 1, Msg::Release { lease: 7 });
//! assert_eq!(step.events[0].0, "released");
//! assert_eq!(step.sends[0].1, Msg::ReleaseAck { lease: 7 });
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use sim::{Context, NodeId};

use crate::events;
use crate::protocol::Msg;

/// The grants a lock server has handed out and not yet seen end.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Grants {
    /// (client, lease) → token.
    live: BTreeMap<(NodeId, u64), Option<u64>>,
    /// Grants that lived in memory when the server crashed, journaled as
    /// ended when it restarts ([`Grants::restarted`]).
    forgotten: Vec<(NodeId, u64)>,
    /// Power off a client whose grant ran out before granting to another.
    stonith: bool,
    /// Clients whose grant ran out and whose node has not been powered off.
    lapsed: BTreeSet<NodeId>,
    /// How long a powered-off node stays down (`None`: for good).
    restart_after: Option<Duration>,
    /// Grants live as long as their session: no TTL is promised, none is
    /// journaled.
    held_by_sessions: bool,
}

impl Grants {
    /// No grants yet.
    pub fn new() -> Self {
        Grants::default()
    }

    /// No grants yet; with `stonith`, a client whose grant expired is
    /// powered off before the next grant to another client (see the module
    /// documentation).
    pub fn with_stonith(stonith: bool) -> Self {
        Grants {
            stonith,
            ..Grants::default()
        }
    }

    /// No grants yet, for a lock whose grants live as long as the session
    /// (or connection) that holds them, kept alive apart from any grant:
    /// a grant promises no end of its own, so `granted` and `renewed`
    /// carry no `ttl_ms` (see the module documentation).
    pub fn held_by_sessions() -> Self {
        Grants {
            held_by_sessions: true,
            ..Grants::default()
        }
    }

    /// With STONITH, powered-off nodes restart after `restart` (a cluster
    /// manager's "reboot" fencing action); `Duration::ZERO`, the default,
    /// leaves them down for good.
    pub fn restarting_after(mut self, restart: Duration) -> Self {
        self.restart_after = (!restart.is_zero()).then_some(restart);
        self
    }

    /// Whether this ledger powers off lapsed holders before granting again.
    pub fn stonith(&self) -> bool {
        self.stonith
    }

    /// Whether `client` holds a grant of `lease` that has not ended.
    pub fn is_live(&self, client: NodeId, lease: u64) -> bool {
        self.live.contains_key(&(client, lease))
    }

    /// The token of `client`'s live grant of `lease` (`None` inside: the
    /// grant carries no token).
    pub fn token(&self, client: NodeId, lease: u64) -> Option<Option<u64>> {
        self.live.get(&(client, lease)).copied()
    }

    /// How many grants are live.
    pub fn len(&self) -> usize {
        self.live.len()
    }

    /// Whether no grant is live.
    pub fn is_empty(&self) -> bool {
        self.live.is_empty()
    }

    /// Grants `lease` (with `token`, for `ttl`) to `client` in answer to its
    /// request `req`: journals `granted` and sends [`Msg::Granted`]. With
    /// STONITH, powers off every other client whose grant expired first.
    ///
    /// # Panics
    /// If `client` already holds a live grant of `lease`: a second grant of
    /// one lease would make the oracle match the client's `acquired` to the
    /// wrong one (answer a second copy of a request with [`Grants::repeat`]).
    pub fn grant(
        &mut self,
        ctx: &mut Context<'_, Msg>,
        client: NodeId,
        req: u64,
        lease: u64,
        token: Option<u64>,
        ttl: Duration,
    ) {
        // STONITH: whoever held the lock before and let it run out is
        // powered off first, so its `crash` precedes this `granted`.
        for victim in std::mem::take(&mut self.lapsed) {
            if victim != client {
                ctx.power_off(victim, self.restart_after);
            }
        }
        let name = ctx.name_of(client);
        assert!(
            self.live.insert((client, lease), token).is_none(),
            "lease {lease} granted twice to {name} without ending"
        );
        let (ttl_ms, mono_ns) = self.promise(ctx, Some(ttl));
        sim::emit!(
            events::GRANTED,
            client = name,
            lease = lease,
            token = token,
            ttl_ms = ttl_ms,
            mono_ns = mono_ns
        );
        self.repeat(ctx, client, req, lease, ttl);
    }

    /// Answers request `req` again with `client`'s live grant of `lease`
    /// (a retransmission, a duplicate, a reentrant acquire): the same
    /// [`Msg::Granted`], no new `granted` event.
    ///
    /// # Panics
    /// If that grant is not live: a grant that ended cannot be handed out
    /// again without journaling a new one.
    pub fn repeat(
        &self,
        ctx: &mut Context<'_, Msg>,
        client: NodeId,
        req: u64,
        lease: u64,
        ttl: Duration,
    ) {
        let Some(token) = self.token(client, lease) else {
            panic!(
                "lease {lease} of {} answered again after it ended",
                ctx.name_of(client)
            );
        };
        let granted = Msg::Granted {
            req,
            lease,
            token,
            ttl,
        };
        ctx.send(client, granted);
    }

    /// `client` gives up `lease`: its grant ends (`released`) if it is live;
    /// either way the release is answered with the returned [`ReleaseAck`],
    /// which the caller sends when the release's consequences have been
    /// dealt with.
    pub fn release(
        &mut self,
        ctx: &mut Context<'_, Msg>,
        client: NodeId,
        lease: u64,
    ) -> ReleaseAck {
        if self.live.remove(&(client, lease)).is_some() {
            sim::emit!(
                events::RELEASED,
                client = ctx.name_of(client),
                lease = lease
            );
        }
        ReleaseAck { client, lease }
    }

    /// The answer to a release that ends no grant, by the design's own
    /// rules, even if `client` holds `lease`: one of several holds of a
    /// reentrant lock given up, or a release the lock ignores (ZooKeeper's
    /// delete of a znode that another session of the client owns). The grant,
    /// if any, goes on; what ends it later is journaled then.
    pub fn acknowledge(&self, client: NodeId, lease: u64) -> ReleaseAck {
        ReleaseAck { client, lease }
    }

    /// Answers `client`'s [`Msg::Renew`] `{lease, req}` with
    /// [`Msg::RenewReply`]: `extended` is the new lease length (`None`:
    /// refused, the lock is lost). An extension of a live grant is journaled
    /// as `renewed`, so the oracle and the beliefs see its end move; an
    /// extension of a lease that holds no lock (an etcd lease still waiting
    /// for its key's turn) is answered only.
    pub fn renew(
        &self,
        ctx: &mut Context<'_, Msg>,
        client: NodeId,
        lease: u64,
        req: u64,
        extended: Option<Duration>,
    ) {
        if extended.is_some() && self.is_live(client, lease) {
            let (ttl_ms, mono_ns) = self.promise(ctx, extended);
            sim::emit!(
                events::RENEWED,
                client = ctx.name_of(client),
                lease = lease,
                ttl_ms = ttl_ms,
                mono_ns = mono_ns
            );
        }
        let reply = Msg::RenewReply {
            lease,
            req,
            ok: extended.is_some(),
            ttl: extended.unwrap_or_default(),
        };
        ctx.send(client, reply);
    }

    /// What a grant or renewal for `ttl` promises, journaled beside it: the
    /// TTL in milliseconds and the server's monotonic reading (neither for
    /// grants held by sessions). Milliseconds are what a TTL is set in;
    /// the reading is exact.
    fn promise(&self, ctx: &Context<'_, Msg>, ttl: Option<Duration>) -> (Option<u64>, Option<u64>) {
        if self.held_by_sessions {
            return (None, None);
        }
        let ttl_ms = ttl.map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX));
        (ttl_ms, Some(ctx.mono_ns().max(0) as u64))
    }

    /// `client`'s grant of `lease` ran out on the server's clock: journals
    /// `expired` if it was live. Returns whether it was.
    pub fn expire(&mut self, ctx: &mut Context<'_, Msg>, client: NodeId, lease: u64) -> bool {
        self.end_expired(ctx, client, lease, None)
    }

    /// `client`'s grant of `lease` was lost while the server was down (a
    /// restart without persistence): journals `expired` with `reason =
    /// "restart"` if it was live, so the journal shows where it ended.
    pub fn expire_on_restart(
        &mut self,
        ctx: &mut Context<'_, Msg>,
        client: NodeId,
        lease: u64,
    ) -> bool {
        self.expire_because(ctx, client, lease, "restart")
    }

    /// `client`'s grant of `lease` ended because the server ended what
    /// held it, for `reason` (a session closed by an idle timeout or a
    /// keepalive): journals `expired` with that `reason` if it was live.
    /// Returns whether it was.
    pub fn expire_because(
        &mut self,
        ctx: &mut Context<'_, Msg>,
        client: NodeId,
        lease: u64,
        reason: &'static str,
    ) -> bool {
        self.end_expired(ctx, client, lease, Some(reason))
    }

    fn end_expired(
        &mut self,
        ctx: &mut Context<'_, Msg>,
        client: NodeId,
        lease: u64,
        reason: Option<&'static str>,
    ) -> bool {
        if self.live.remove(&(client, lease)).is_none() {
            return false;
        }
        if self.stonith {
            self.lapsed.insert(client);
        }
        // A TTL's end names the clock reading it came at, to be held to the
        // promise; other ends (a restart, a closed session) promise nothing.
        let mono_ns =
            (!self.held_by_sessions && reason.is_none()).then(|| ctx.mono_ns().max(0) as u64);
        journal_expired(ctx, client, lease, reason, mono_ns);
        true
    }

    /// The server crashed and its grants lived in memory: they are gone.
    /// The real service says nothing; the journal says so when the server
    /// is back: call [`Grants::restarted`] from `on_start`.
    /// With STONITH, a server that forgot its grants has also forgotten
    /// whom it owed a power-off.
    pub fn forget_all(&mut self) {
        let live = std::mem::take(&mut self.live);
        self.forgotten.extend(live.into_keys());
        self.lapsed.clear();
    }

    /// The server (re)started: journals `expired` with `reason = "restart"`
    /// for every grant [`Grants::forget_all`] dropped in the crash, so a
    /// reader of the journal (the oracle, `step`, the timeline) sees where
    /// each ended, and a grant that survived on disk is not mistaken for a
    /// lost one. Call it first thing in `on_start`; it does nothing on a
    /// first start.
    pub fn restarted(&mut self, ctx: &mut Context<'_, Msg>) {
        for (client, lease) in std::mem::take(&mut self.forgotten) {
            journal_expired(ctx, client, lease, Some("restart"), None);
        }
    }
}

/// Journals `expired {client, lease, reason?, mono_ns?}`: the one place
/// the ledger says a grant ended without a release.
fn journal_expired(
    ctx: &mut Context<'_, Msg>,
    client: NodeId,
    lease: u64,
    reason: Option<&'static str>,
    mono_ns: Option<u64>,
) {
    sim::emit!(
        events::EXPIRED,
        client = ctx.name_of(client),
        lease = lease,
        reason = reason,
        mono_ns = mono_ns
    );
}

/// The answer a release is owed, from [`Grants::release`]: send it.
#[derive(Debug, PartialEq, Eq)]
#[must_use = "a release is answered: send the ReleaseAck"]
pub struct ReleaseAck {
    client: NodeId,
    lease: u64,
}

impl ReleaseAck {
    /// Sends [`Msg::ReleaseAck`] to the releasing client.
    pub fn send(self, ctx: &mut Context<'_, Msg>) {
        ctx.send(self.client, Msg::ReleaseAck { lease: self.lease });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim::testing::Harness;
    use sim::{Actor, TimerId};

    const CLIENT1: NodeId = 1;
    const CLIENT2: NodeId = 2;
    const TTL: Duration = Duration::from_secs(10);

    /// A server that does what it is told: Acquire grants lease `req` with
    /// token `req`, Release releases, Renew extends, timer tag N expires
    /// client1's lease N.
    struct Lock(Grants);

    impl Actor<Msg> for Lock {
        fn on_message(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, msg: Msg) {
            match msg {
                Msg::Acquire { req } if self.0.is_live(from, req) => {
                    self.0.repeat(ctx, from, req, req, TTL)
                }
                Msg::Acquire { req } => self.0.grant(ctx, from, req, req, Some(req), TTL),
                Msg::Release { lease } => self.0.release(ctx, from, lease).send(ctx),
                Msg::Renew { lease, req } => self.0.renew(ctx, from, lease, req, Some(TTL)),
                _ => {}
            }
        }
        fn on_timer(&mut self, ctx: &mut Context<'_, Msg>, _: TimerId, lease: u64) {
            self.0.expire(ctx, CLIENT1, lease);
        }
    }

    fn setup() -> (Harness, Lock) {
        (
            Harness::new(&["lock", "client1", "client2"], 0),
            Lock(Grants::new()),
        )
    }

    #[test]
    fn a_grant_is_journaled_with_its_answer_and_a_repeat_is_not() {
        let (mut h, mut l) = setup();
        let s = h.message(&mut l, CLIENT1, Msg::Acquire { req: 4 });
        assert_eq!(s.events.len(), 1);
        assert!(s.event("granted").is_some());
        let granted = Msg::Granted {
            req: 4,
            lease: 4,
            token: Some(4),
            ttl: TTL,
        };
        assert_eq!(s.sends, vec![(CLIENT1, granted.clone())]);
        let again = h.message(&mut l, CLIENT1, Msg::Acquire { req: 4 });
        assert!(again.events.is_empty());
        assert_eq!(again.sends, vec![(CLIENT1, granted)]);
    }

    #[test]
    fn a_release_ends_only_the_releasing_clients_live_grant() {
        let (mut h, mut l) = setup();
        h.message(&mut l, CLIENT1, Msg::Acquire { req: 1 });
        // client2 has no grant of lease 1: answered, nothing ends.
        let s = h.message(&mut l, CLIENT2, Msg::Release { lease: 1 });
        assert!(s.events.is_empty());
        assert_eq!(s.sends, vec![(CLIENT2, Msg::ReleaseAck { lease: 1 })]);
        assert!(l.0.is_live(CLIENT1, 1));
        let s = h.message(&mut l, CLIENT1, Msg::Release { lease: 1 });
        assert!(s.event("released").is_some());
        assert!(l.0.is_empty());
        // A second copy of the release is answered and journals nothing.
        let s = h.message(&mut l, CLIENT1, Msg::Release { lease: 1 });
        assert!(s.events.is_empty());
        assert_eq!(s.sends, vec![(CLIENT1, Msg::ReleaseAck { lease: 1 })]);
    }

    #[test]
    fn renewed_is_journaled_only_for_a_live_grant() {
        let (mut h, mut l) = setup();
        h.message(&mut l, CLIENT1, Msg::Acquire { req: 1 });
        let s = h.message(&mut l, CLIENT1, Msg::Renew { lease: 1, req: 1 });
        assert!(s.event("renewed").is_some());
        let s = h.message(&mut l, CLIENT1, Msg::Renew { lease: 9, req: 2 });
        assert!(s.events.is_empty());
        assert!(matches!(
            s.sends[0],
            (CLIENT1, Msg::RenewReply { ok: true, .. })
        ));
    }

    #[test]
    fn an_expiry_ends_a_grant_once() {
        let (mut h, mut l) = setup();
        h.message(&mut l, CLIENT1, Msg::Acquire { req: 3 });
        let s = h.timer(&mut l, TimerId(0), 3);
        assert!(s.event("expired").is_some());
        assert!(h.timer(&mut l, TimerId(0), 3).events.is_empty());
        // Ended: a release of it is answered without `released`.
        let s = h.message(&mut l, CLIENT1, Msg::Release { lease: 3 });
        assert!(s.events.is_empty());
    }

    #[test]
    #[should_panic(expected = "granted twice")]
    fn a_live_lease_cannot_be_granted_again() {
        let mut h = Harness::new(&["lock", "client1"], 0);
        struct Twice(Grants);
        impl Actor<Msg> for Twice {
            fn on_message(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, _: Msg) {
                self.0.grant(ctx, from, 1, 1, None, TTL);
            }
        }
        let mut l = Twice(Grants::new());
        h.message(&mut l, CLIENT1, Msg::Acquire { req: 1 });
        h.message(&mut l, CLIENT1, Msg::Acquire { req: 2 });
    }
}
