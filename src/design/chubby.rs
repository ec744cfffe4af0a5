//! `chubby`: Google's Chubby lock service (Burrows, "The Chubby lock service
//! for loosely-coupled distributed systems", OSDI 2006), one lock.
//!
//! A client opens a session kept alive by keep-alives (heartbeats); a
//! session not kept alive for `ttl` on the **server's** clock is lost, and
//! with it the lock its client held. Acquisition is `TryAcquire`: a busy lock
//! answers [`Msg::Denied`] and the client retries. Each acquisition bumps the
//! lock's **generation number**; with `tokens` the grant carries it, as the
//! paper's *sequencer* (lock name, mode, generation) that a server checks
//! before acting on a request. The generation is the lease id too.
//!
//! **Lock-delay**: when a lock becomes free because its holder's session was
//! lost (not released), nobody gets it until `lock_delay` has passed on the
//! server's clock, so that requests the old holder sent before it failed
//! have drained. Chubby lets a client set it up to a minute; here the default
//! is `0s`, so that "without lock-delay" is the default and a scenario sets
//! the delay explicitly.
//!
//! Known failure (§2.4 of the paper): without lock-delay or sequencers, the
//! old holder's **delayed write** (sent before its session was lost) lands
//! after the next holder's write: a stale write at storage that checks
//! nothing. With a lock-delay longer than the delay, the old write lands
//! before the next holder even gets the lock (at worst a zombie write); with
//! sequencers and `fenced` storage it is rejected.
//!
//! The server keeps sessions and the holder in memory (a crash forgets
//! them, and lock-delay with them); the generation number is durable.

use std::time::Duration;

use sim::NodeId;

use crate::design::catalog::KeyKind;
use crate::design::config::key;
use crate::design::session_client::{LossNotice, SessionLockClient};
use crate::design::session_server::{Call, SessionLock, SessionServer};
use crate::protocol::Msg;

/// Chubby's lock-delay: none up to one minute.
const LOCK_DELAY: KeyKind = KeyKind::DurationIn {
    min: Duration::ZERO,
    max: Duration::from_secs(60),
    zero: None,
    below: None,
};

crate::lock_design! {
    pub struct Chubby as CHUBBY = "chubby",
        "Chubby lock: sessions kept by keep-alives, sequencer generation numbers, lock-delay";
    #[derive(Eq)]
    pub struct ChubbyConfig {
        ttl: Duration = key::ttl(), "session lease on the server's clock";
        tokens: bool = key::tokens(true), "grants carry the lock's generation number (sequencer)";
        lock_delay: Duration = key::duration(LOCK_DELAY, Duration::ZERO),
            "after a holder's session is lost, nobody gets the lock for this long \
             (Chubby caps it at one minute)";
        heartbeat: Duration = key::heartbeat("ttl / 3"), "client keep-alive interval; 0s means ttl / 3";
    }
    server(config, _index) => Box::new(ChubbyLock::new(config.clone()));
    client(c, lock_nodes) =>
        SessionLockClient::for_design(lock_nodes, c.heartbeat, c.ttl, 3, LossNotice::OnSessionExpiry);
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Holder {
    session: u64,
    node: NodeId,
    /// The request that acquired it.
    req: u64,
    generation: u64,
}

/// The `chubby` server: sessions and one lock.
pub type ChubbyLock = SessionServer<ChubbyMutex>;

impl ChubbyLock {
    /// A server with these settings.
    pub fn new(config: ChubbyConfig) -> Self {
        SessionServer::with_lock(
            config.ttl,
            ChubbyMutex {
                config,
                generation: 0,
                holder: None,
                free_at: Duration::ZERO,
            },
        )
    }
}

/// Chubby's lock: its generation number, holder and lock-delay.
#[derive(Debug)]
pub struct ChubbyMutex {
    config: ChubbyConfig,
    /// The last acquisition's generation number.
    generation: u64,
    holder: Option<Holder>,
    /// Lock-delay: nobody acquires before this, on the server's clock.
    free_at: Duration,
}

impl SessionLock for ChubbyMutex {
    fn acquire(&mut self, call: Call<'_, '_>, req: u64) {
        let (from, session, grants, ctx) = call.parts();
        let ttl = self.config.ttl;
        if let Some(h) = self
            .holder
            .as_ref()
            .filter(|h| h.session == session && h.req == req)
        {
            // The holder's retried request (its answer was lost): the same grant.
            grants.repeat(ctx, from, req, h.generation, ttl);
            return;
        }
        if self.holder.is_some() || ctx.now() < self.free_at {
            ctx.send(from, Msg::Denied { req });
            return;
        }
        self.generation += 1;
        let generation = self.generation;
        self.holder = Some(Holder {
            session,
            node: from,
            req,
            generation,
        });
        let token = self.config.tokens.then_some(generation);
        grants.grant(ctx, from, req, generation, token, ttl);
    }

    fn release(&mut self, call: Call<'_, '_>, lease: u64) {
        let (from, session, grants, ctx) = call.parts();
        // Released, not lost: no lock-delay. The lock is the session's: a
        // release on another session of the client's (after its crash)
        // leaves it held.
        let ack = match self
            .holder
            .take_if(|h| h.session == session && h.generation == lease)
        {
            Some(_) => grants.release(ctx, from, lease),
            None => grants.acknowledge(from, lease),
        };
        ack.send(ctx);
    }

    fn session_of(&self, from: NodeId, lease: u64) -> Option<u64> {
        self.holder
            .as_ref()
            .filter(|h| h.node == from && h.generation == lease)
            .map(|h| h.session)
    }

    fn session_expired(&mut self, call: Call<'_, '_>) {
        let (_, session, grants, ctx) = call.parts();
        if let Some(h) = self.holder.take_if(|h| h.session == session) {
            grants.expire(ctx, h.node, h.generation);
            self.free_at = ctx.now() + self.config.lock_delay;
        }
    }

    fn on_crash(&mut self) {
        self.holder = None;
        self.free_at = Duration::ZERO;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::design::session::{SessionMsg, SESSION_TAG};
    use sim::testing::{Harness, Step};
    use sim::TimerId;

    const CLIENT1: NodeId = 1;
    const CLIENT2: NodeId = 2;
    const TTL: Duration = Duration::from_secs(10);

    fn server(lock_delay: Duration) -> (Harness, ChubbyLock) {
        let mut h = Harness::new(&["lock", "client1", "client2"], 0);
        let mut lock = ChubbyLock::new(ChubbyConfig {
            lock_delay,
            ..ChubbyConfig::default()
        });
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

    fn acquire(h: &mut Harness, lock: &mut ChubbyLock, client: NodeId, req: u64) -> Msg {
        let session = client as u64;
        let s = h.message(
            lock,
            client,
            Msg::design(SessionMsg::SessionAcquire { session, req }),
        );
        s.sends[0].1.clone()
    }

    fn release(
        h: &mut Harness,
        lock: &mut ChubbyLock,
        client: NodeId,
        session: u64,
        lease: u64,
    ) -> Step<Msg> {
        h.message(
            lock,
            client,
            Msg::design(SessionMsg::SessionRelease { session, lease }),
        )
    }

    /// client1 holds; only client2 heartbeats; client1's session expires.
    fn lose_client1(h: &mut Harness, lock: &mut ChubbyLock) {
        h.advance(TTL / 2);
        h.message(
            lock,
            CLIENT2,
            Msg::design(SessionMsg::Heartbeat { session: 2 }),
        );
        h.advance(TTL / 2);
        let s = h.timer(lock, TimerId(0), SESSION_TAG + 1);
        assert!(s.event("expired").is_some());
    }

    #[test]
    fn each_acquisition_bumps_the_generation_and_a_busy_lock_denies() {
        let (mut h, mut lock) = server(Duration::ZERO);
        let granted = Msg::Granted {
            req: 1,
            lease: 1,
            token: Some(1),
            ttl: TTL,
        };
        assert_eq!(acquire(&mut h, &mut lock, CLIENT1, 1), granted);
        assert_eq!(
            acquire(&mut h, &mut lock, CLIENT2, 1),
            Msg::Denied { req: 1 }
        );
        let s = release(&mut h, &mut lock, CLIENT1, 1, 1);
        assert!(s.event("released").is_some());
        // A release starts no lock-delay.
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
    fn without_lock_delay_a_lost_session_frees_the_lock_at_once() {
        let (mut h, mut lock) = server(Duration::ZERO);
        acquire(&mut h, &mut lock, CLIENT1, 1);
        lose_client1(&mut h, &mut lock);
        let got = acquire(&mut h, &mut lock, CLIENT2, 1);
        assert!(matches!(got, Msg::Granted { token: Some(2), .. }));
    }

    #[test]
    fn lock_delay_keeps_a_lost_holders_lock_unavailable() {
        let delay = Duration::from_secs(20);
        let (mut h, mut lock) = server(delay);
        acquire(&mut h, &mut lock, CLIENT1, 1);
        lose_client1(&mut h, &mut lock);
        h.advance(delay - Duration::from_millis(1));
        h.message(
            &mut lock,
            CLIENT2,
            Msg::design(SessionMsg::Heartbeat { session: 2 }),
        );
        assert_eq!(
            acquire(&mut h, &mut lock, CLIENT2, 1),
            Msg::Denied { req: 1 }
        );
        h.advance(Duration::from_millis(1));
        let got = acquire(&mut h, &mut lock, CLIENT2, 2);
        assert!(matches!(got, Msg::Granted { token: Some(2), .. }));
    }

    #[test]
    fn a_lost_session_cannot_release_or_acquire() {
        let (mut h, mut lock) = server(Duration::ZERO);
        acquire(&mut h, &mut lock, CLIENT1, 1);
        lose_client1(&mut h, &mut lock);
        let s = release(&mut h, &mut lock, CLIENT1, 1, 1);
        assert_eq!(
            s.sends,
            [(
                CLIENT1,
                Msg::design(SessionMsg::SessionExpired { session: 1 })
            )]
        );
        assert_eq!(
            acquire(&mut h, &mut lock, CLIENT1, 2),
            Msg::design(SessionMsg::SessionExpired { session: 1 })
        );
    }

    #[test]
    fn a_release_on_another_session_of_the_holder_leaves_the_lock_held() {
        let (mut h, mut lock) = server(Duration::ZERO);
        acquire(&mut h, &mut lock, CLIENT1, 1);
        // client1 restarted and opened session 3; session 1 holds the lock.
        h.message(
            &mut lock,
            CLIENT1,
            Msg::design(SessionMsg::OpenSession { req: 2 }),
        );
        let s = release(&mut h, &mut lock, CLIENT1, 3, 1);
        assert!(s.events.is_empty(), "{:?}", s.events);
        assert_eq!(s.sends, [(CLIENT1, Msg::ReleaseAck { lease: 1 })]);
        assert_eq!(
            acquire(&mut h, &mut lock, CLIENT2, 1),
            Msg::Denied { req: 1 }
        );
    }

    #[test]
    fn without_tokens_grants_carry_no_sequencer() {
        let mut h = Harness::new(&["lock", "client1"], 0);
        let mut lock = ChubbyLock::new(ChubbyConfig {
            tokens: false,
            ..ChubbyConfig::default()
        });
        h.message(
            &mut lock,
            CLIENT1,
            Msg::design(SessionMsg::OpenSession { req: 1 }),
        );
        let got = acquire(&mut h, &mut lock, CLIENT1, 1);
        assert!(matches!(got, Msg::Granted { token: None, .. }));
    }
}
