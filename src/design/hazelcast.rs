//! `hazelcast`: Hazelcast's `FencedLock` on a CP session (Hazelcast IMDG 4+
//! CP Subsystem), one lock.
//!
//! A client's CP session lives while heartbeats reach the server at least
//! every `ttl` (the session TTL) on the **server's** clock. The lock is
//! reentrant: an acquire by the current owner (same session, same client)
//! returns the same fence and counts one more hold; the lock is free again
//! when every hold is released. The **fence** grows on each free→acquired
//! transition (in Hazelcast it is the Raft log index of that operation; only
//! its growth matters here, so it is a counter). Acquisition is `tryLock`: a
//! lock held by someone else answers [`Msg::Denied`] and the client retries.
//! The fence is the lease id, and with `tokens` (always on in Hazelcast; the
//! key is kept for uniformity) the grant's token.
//!
//! When the owner's session is lost, the lock is released. The owner hears
//! of it only on its **next lock call** (here: its release, or a request on
//! the lost session), which fails with `LockOwnershipLostException`:
//! [`SessionMsg::LockLost`], reported to the workload as [`LockEvent::Lost`].
//!
//! Known failure: a **CP session lost in a pause**. The owner is paused past
//! the session TTL, the lock goes to another client with a higher fence, and
//! the owner wakes and writes before making any lock call: its write carries
//! the old fence, which `fenced` storage rejects (and `unchecked` storage
//! accepts as a stale write).
//!
//! The server keeps sessions and the owner in memory (a crash forgets them);
//! the fence counter is durable, as in the Raft log.
//!
//! [`LockEvent::Lost`]: crate::design::lock_client::LockEvent::Lost

use std::time::Duration;

use sim::NodeId;

use crate::design::config::key;
use crate::design::session::SessionMsg;
use crate::design::session_client::{LossNotice, SessionLockClient};
use crate::design::session_server::{Call, SessionLock, SessionServer};
use crate::protocol::Msg;

crate::lock_design! {
    pub struct Hazelcast as HAZELCAST = "hazelcast",
        "Hazelcast FencedLock on CP sessions: reentrant, fence grows per free-to-acquired transition";
    #[derive(Eq)]
    pub struct HazelcastConfig {
        ttl: Duration = key::ttl(), "CP session TTL on the server's clock";
        tokens: bool = key::tokens(true), "grants carry the fence (Hazelcast always has one)";
        heartbeat: Duration = key::heartbeat("ttl / 5"), "CP session heartbeat interval; 0s means ttl / 5";
    }
    server(config, _index) => Box::new(FencedLock::new(config.clone()));
    client(c, lock_nodes) =>
        SessionLockClient::for_design(lock_nodes, c.heartbeat, c.ttl, 5, LossNotice::OnNextLockCall);
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Owner {
    session: u64,
    node: NodeId,
    fence: u64,
    /// The last acquire request (Hazelcast's invocation UID).
    req: u64,
    /// Reentrant holds.
    holds: u64,
}

/// The `hazelcast` server: CP sessions and one `FencedLock`.
pub type FencedLock = SessionServer<Fence>;

impl FencedLock {
    /// A server with these settings.
    pub fn new(config: HazelcastConfig) -> Self {
        SessionServer::with_lock(
            config.ttl,
            Fence {
                config,
                fence: 0,
                owner: None,
            },
        )
    }
}

/// The `FencedLock` itself: its fence counter and owner.
#[derive(Debug)]
pub struct Fence {
    config: HazelcastConfig,
    /// The last fence handed out.
    fence: u64,
    owner: Option<Owner>,
}

impl SessionLock for Fence {
    fn acquire(&mut self, call: Call<'_, '_>, req: u64) {
        let (from, session, grants, ctx) = call.parts();
        let ttl = self.config.ttl;
        match &mut self.owner {
            None => {
                self.fence += 1;
                self.owner = Some(Owner {
                    session,
                    node: from,
                    fence: self.fence,
                    req,
                    holds: 1,
                });
                let token = self.config.tokens.then_some(self.fence);
                grants.grant(ctx, from, req, self.fence, token, ttl);
            }
            // A retried request (same invocation id): answered again.
            Some(o) if o.session == session && o.node == from && o.req == req => {
                grants.repeat(ctx, from, req, o.fence, ttl);
            }
            // Reentrant: same fence, one more hold, no new grant.
            Some(o) if o.session == session && o.node == from => {
                o.holds += 1;
                o.req = req;
                grants.repeat(ctx, from, req, o.fence, ttl);
            }
            Some(_) => ctx.send(from, Msg::Denied { req }),
        }
    }

    fn release(&mut self, call: Call<'_, '_>, lease: u64) {
        let (from, session, grants, ctx) = call.parts();
        let Some(o) = self
            .owner
            .as_mut()
            .filter(|o| o.session == session && o.node == from && o.fence == lease)
        else {
            // Not the owner (any more): Hazelcast's unlock fails.
            ctx.send(from, Msg::design(SessionMsg::LockLost { lease }));
            return;
        };
        o.holds -= 1;
        let ack = if o.holds == 0 {
            self.owner = None;
            grants.release(ctx, from, lease)
        } else {
            grants.acknowledge(from, lease)
        };
        ack.send(ctx);
    }

    fn release_on_lost_session(&mut self, call: Call<'_, '_>, lease: u64) {
        let (ctx, from) = (call.ctx, call.from);
        // The session that took the lock is gone, and the lock with it.
        ctx.send(from, Msg::design(SessionMsg::LockLost { lease }));
    }

    fn session_of(&self, from: NodeId, lease: u64) -> Option<u64> {
        self.owner
            .as_ref()
            .filter(|o| o.node == from && o.fence == lease)
            .map(|o| o.session)
    }

    fn session_expired(&mut self, call: Call<'_, '_>) {
        let (_, session, grants, ctx) = call.parts();
        if let Some(o) = self.owner.take_if(|o| o.session == session) {
            grants.expire(ctx, o.node, o.fence);
        }
    }

    fn on_crash(&mut self) {
        self.owner = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::design::lock_client::LockEvent;
    use crate::design::session::{SessionTimer, SESSION_TAG};
    use crate::design::session_client::testing::{granted_msg, Host};
    use sim::testing::Harness;
    use sim::TimerId;

    const CLIENT1: NodeId = 1;
    const CLIENT2: NodeId = 2;
    const TTL: Duration = Duration::from_secs(10);

    fn server() -> (Harness, FencedLock) {
        let mut h = Harness::new(&["lock", "client1", "client2"], 0);
        let mut lock = FencedLock::new(HazelcastConfig::default());
        h.message(
            &mut lock,
            CLIENT1,
            Msg::design(SessionMsg::OpenSession { req: 1 }),
        );
        h.message(
            &mut lock,
            CLIENT2,
            Msg::design(SessionMsg::OpenSession { req: 1 }),
        );
        (h, lock)
    }

    fn acquire(h: &mut Harness, lock: &mut FencedLock, client: NodeId, req: u64) -> Msg {
        let session = client as u64;
        let s = h.message(
            lock,
            client,
            Msg::design(SessionMsg::SessionAcquire { session, req }),
        );
        s.sends[0].1.clone()
    }

    fn release(h: &mut Harness, lock: &mut FencedLock, client: NodeId, lease: u64) -> Msg {
        let session = client as u64;
        let s = h.message(
            lock,
            client,
            Msg::design(SessionMsg::SessionRelease { session, lease }),
        );
        s.sends[0].1.clone()
    }

    #[test]
    fn a_reentrant_acquire_returns_the_same_fence() {
        let (mut h, mut lock) = server();
        let first = acquire(&mut h, &mut lock, CLIENT1, 1);
        let s = h.message(
            &mut lock,
            CLIENT1,
            Msg::design(SessionMsg::SessionAcquire { session: 1, req: 2 }),
        );
        assert!(
            s.event("granted").is_none(),
            "a reentrant acquire is no new grant"
        );
        let Msg::Granted { lease, token, .. } = first else {
            panic!("{first:?}")
        };
        assert!(matches!(
            s.sends[0].1,
            Msg::Granted { req: 2, lease: l, token: t, .. } if l == lease && t == token
        ));
        // Two holds: one release leaves it held.
        assert_eq!(
            release(&mut h, &mut lock, CLIENT1, lease),
            Msg::ReleaseAck { lease }
        );
        assert_eq!(
            acquire(&mut h, &mut lock, CLIENT2, 1),
            Msg::Denied { req: 1 }
        );
        let s = h.message(
            &mut lock,
            CLIENT1,
            Msg::design(SessionMsg::SessionRelease { session: 1, lease }),
        );
        assert!(s.event("released").is_some());
        // Free → acquired again: the fence grows.
        let got = acquire(&mut h, &mut lock, CLIENT2, 2);
        assert!(matches!(
            got,
            Msg::Granted {
                lease: 2,
                token: Some(2),
                ..
            }
        ));
    }

    #[test]
    fn a_lost_session_frees_the_lock_and_the_owner_learns_on_its_next_call() {
        let (mut h, mut lock) = server();
        acquire(&mut h, &mut lock, CLIENT1, 1);
        h.advance(TTL / 2);
        h.message(
            &mut lock,
            CLIENT2,
            Msg::design(SessionMsg::Heartbeat { session: 2 }),
        );
        h.advance(TTL / 2);
        let s = h.timer(&mut lock, TimerId(0), SESSION_TAG + 1);
        assert!(s.event("expired").is_some());
        let got = acquire(&mut h, &mut lock, CLIENT2, 1);
        assert!(matches!(got, Msg::Granted { token: Some(2), .. }));
        assert_eq!(
            release(&mut h, &mut lock, CLIENT1, 1),
            Msg::design(SessionMsg::LockLost { lease: 1 })
        );
    }

    #[test]
    fn the_client_keeps_believing_until_its_release_gets_lock_lost() {
        const LOCK: NodeId = 1;
        let protocol = SessionLockClient::new("lock", TTL / 5, LossNotice::OnNextLockCall);
        let (mut h, mut c) = Host::opened(protocol, 3, TTL);
        let granted = granted_msg(1, 5, Some(5), TTL);
        assert!(matches!(
            c.message(&mut h, LOCK, granted).0,
            LockEvent::Acquired(_)
        ));
        // The heartbeat after a pause is answered: session expired. The
        // client is not told it lost the lock yet.
        let (_, step) = c.timer(&mut h, SessionTimer::Heartbeat(3));
        assert_eq!(
            step.sends,
            [(LOCK, Msg::design(SessionMsg::Heartbeat { session: 3 }))]
        );
        let expired = Msg::design(SessionMsg::SessionExpired { session: 3 });
        assert_eq!(c.message(&mut h, LOCK, expired).0, LockEvent::Nothing);
        // Its next lock call is the release, on the old session.
        let sends = c.release(&mut h);
        assert_eq!(
            sends,
            [(
                LOCK,
                Msg::design(SessionMsg::SessionRelease {
                    session: 3,
                    lease: 5
                })
            )]
        );
        let lost = Msg::design(SessionMsg::LockLost { lease: 5 });
        assert_eq!(c.message(&mut h, LOCK, lost).0, LockEvent::Lost);
    }

    #[test]
    fn a_renewal_is_a_lock_call_and_its_refusal_tells_the_owner() {
        const LOCK: NodeId = 1;
        let protocol = SessionLockClient::new("lock", TTL / 5, LossNotice::OnNextLockCall);
        let (mut h, mut c) = Host::opened(protocol, 3, TTL);
        let granted = granted_msg(1, 5, Some(5), TTL);
        c.message(&mut h, LOCK, granted);
        let expired = Msg::design(SessionMsg::SessionExpired { session: 3 });
        assert_eq!(c.message(&mut h, LOCK, expired).0, LockEvent::Nothing);
        // Still believing, it asks; the server refuses: the lock is lost.
        assert!(c.renew(&mut h));
        let refused = Msg::RenewReply {
            lease: 5,
            req: 1,
            ok: false,
            ttl: Duration::ZERO,
        };
        assert_eq!(c.message(&mut h, LOCK, refused).0, LockEvent::Lost);
        assert!(!c.renew(&mut h));
    }

    #[test]
    fn the_server_renews_only_its_owners_live_session() {
        let (mut h, mut lock) = server();
        acquire(&mut h, &mut lock, CLIENT1, 1);
        let s = h.message(&mut lock, CLIENT1, Msg::Renew { lease: 1, req: 1 });
        assert!(s.event("renewed").is_some());
        assert!(matches!(s.sends[0].1, Msg::RenewReply { ok: true, .. }));
        let s = h.message(&mut lock, CLIENT2, Msg::Renew { lease: 1, req: 1 });
        assert!(s.event("renewed").is_none());
        assert!(matches!(s.sends[0].1, Msg::RenewReply { ok: false, .. }));
    }
}
