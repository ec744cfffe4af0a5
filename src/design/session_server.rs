//! The server half the session designs share: a [`SessionServer`] hosts one
//! [`SessionLock`] (Chubby's lock, Hazelcast's `FencedLock`, ZooKeeper's
//! lock path) behind a [`SessionTable`] and a [`Grants`] ledger.
//!
//! The server opens sessions, answers heartbeats, refuses requests on a
//! session that is not live, answers renewals by heartbeating the session
//! that holds the lease, hands the lock every session that expires on the
//! server's clock, and forgets sessions and grants in a crash: a session
//! design writes only what its lock does with an acquire, a release and a
//! lost session, and every grant, release, renewal and expiry it makes goes
//! through the ledger, which journals it.
//!
//! ```
//! use std::time::Duration;
//! use fencesim::design::grants::Grants;
//! use fencesim::design::session::Session;
//! use fencesim::design::session_server::{SessionLock, SessionServer};
//! use fencesim::protocol::Msg;
//! use sim::testing::Harness;
//! use sim::{Context, NodeId};
//!
//! /// One lock, no queue: the first live session to ask holds it.
//! #[derive(Debug, Default)]
//! struct Simple(Option<(NodeId, u64)>);
//!
//! impl SessionLock for Simple {
//!     fn acquire(&mut self, g: &mut Grants, ctx: &mut Context<'_, Msg>, from: NodeId, session: u64, req: u64) {
//!         if self.0.is_some() {
//!             return ctx.send(from, Msg::Denied { req });
//!         }
//!         self.0 = Some((from, session));
//!         g.grant(ctx, from, req, session, None, Duration::from_secs(10));
//!     }
//!     fn release(&mut self, g: &mut Grants, ctx: &mut Context<'_, Msg>, from: NodeId, _: u64, lease: u64) {
//!         self.0.take_if(|&mut (node, session)| node == from && session == lease);
//!         g.release(ctx, from, lease).send(ctx);
//!     }
//!     fn session_of(&self, from: NodeId, lease: u64) -> Option<u64> {
//!         self.0.filter(|&h| h == (from, lease)).map(|(_, session)| session)
//!     }
//!     fn session_expired(&mut self, g: &mut Grants, ctx: &mut Context<'_, Msg>, s: &Session) {
//!         if self.0.take_if(|&mut (_, session)| session == s.id).is_some() {
//!             g.expire(ctx, s.node, s.id);
//!         }
//!     }
//!     fn on_crash(&mut self) {
//!         self.0 = None;
//!     }
//! }
//!
//! let mut server = SessionServer::with_lock(Duration::from_secs(10), Simple::default());
//! let mut h = Harness::new(&["lock", "client1"], 0);
//! h.message(&mut server, 1, Msg::OpenSession { req: 1 });
//! let step = h.message(&mut server, 1, Msg::SessionAcquire { session: 1, req: 1 });
//! assert!(step.event("granted").is_some());
//! // A request on a session the server never opened is refused.
//! let step = h.message(&mut server, 1, Msg::SessionAcquire { session: 9, req: 2 });
//! assert_eq!(step.sends[0].1, Msg::SessionExpired { session: 9 });
//! ```

use std::fmt::Debug;
use std::time::Duration;

use sim::{Actor, Context, NodeId, TimerId};

use crate::design::grants::Grants;
use crate::design::session::{Session, SessionTable};
use crate::protocol::Msg;

/// What a session design's lock does; the [`SessionServer`] does the rest.
pub trait SessionLock: Debug + Send + 'static {
    /// [`Msg::SessionAcquire`] on `session`, live and `from`'s: grant
    /// through `grants`, queue, or deny.
    fn acquire(
        &mut self,
        grants: &mut Grants,
        ctx: &mut Context<'_, Msg>,
        from: NodeId,
        session: u64,
        req: u64,
    );

    /// [`Msg::SessionRelease`] of `lease` on `session`, live and `from`'s:
    /// answer it (usually [`Grants::release`]).
    fn release(
        &mut self,
        grants: &mut Grants,
        ctx: &mut Context<'_, Msg>,
        from: NodeId,
        session: u64,
        lease: u64,
    );

    /// A release on a session that is not live. By default it is refused
    /// like any request on it ([`Msg::SessionExpired`]).
    fn release_on_lost_session(
        &mut self,
        ctx: &mut Context<'_, Msg>,
        from: NodeId,
        session: u64,
        _lease: u64,
    ) {
        ctx.send(from, Msg::SessionExpired { session });
    }

    /// The session in which `from` holds `lease`, if it does: a renewal of
    /// the lease heartbeats it.
    fn session_of(&self, from: NodeId, lease: u64) -> Option<u64>;

    /// Session `session` expired on the server's clock: what it held ends
    /// (through [`Grants::expire`]) and the lock may pass on.
    fn session_expired(
        &mut self,
        grants: &mut Grants,
        ctx: &mut Context<'_, Msg>,
        session: &Session,
    );

    /// A session is about to be opened (ZooKeeper counts a transaction).
    fn on_open(&mut self) {}

    /// The server crashed: forget what lived in memory (sessions and
    /// grants are forgotten by the server).
    fn on_crash(&mut self);
}

/// A lock server whose locks live as long as their owners' sessions.
#[derive(Debug)]
pub struct SessionServer<L> {
    sessions: SessionTable,
    grants: Grants,
    lock: L,
}

impl<L: SessionLock> SessionServer<L> {
    /// Sessions living `ttl` past their last heartbeat, around `lock`.
    pub fn with_lock(ttl: Duration, lock: L) -> Self {
        SessionServer {
            sessions: SessionTable::new(ttl),
            grants: Grants::new(),
            lock,
        }
    }

    /// The hosted lock.
    pub fn lock(&self) -> &L {
        &self.lock
    }

    /// The grants live at this server.
    pub fn grants(&self) -> &Grants {
        &self.grants
    }
}

impl<L: SessionLock> Actor<Msg> for SessionServer<L> {
    fn on_start(&mut self, _ctx: &mut Context<'_, Msg>) {}

    fn on_message(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, msg: Msg) {
        let (lock, grants) = (&mut self.lock, &mut self.grants);
        match msg {
            Msg::OpenSession { req } => {
                lock.on_open();
                self.sessions.open(ctx, from, req);
            }
            Msg::Heartbeat { session } => {
                self.sessions.heartbeat(ctx, from, session);
            }
            // A request on a session that is not live is answered
            // SessionExpired by the check.
            Msg::SessionAcquire { session, req } if self.sessions.check(ctx, from, session) => {
                lock.acquire(grants, ctx, from, session, req);
            }
            Msg::SessionRelease { session, lease } => {
                if self.sessions.is_live(ctx, from, session) {
                    lock.release(grants, ctx, from, session, lease);
                } else {
                    lock.release_on_lost_session(ctx, from, session, lease);
                }
            }
            Msg::Renew { lease, req } => {
                // The lock lives as long as the session that holds it: a
                // renewal heartbeats that session, or finds the lock lost.
                let session = lock
                    .session_of(from, lease)
                    .filter(|&session| self.sessions.is_live(ctx, from, session));
                if let Some(session) = session {
                    self.sessions.heartbeat(ctx, from, session);
                }
                let extended = session.map(|_| self.sessions.ttl());
                grants.renew(ctx, from, lease, req, extended);
            }
            _ => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Context<'_, Msg>, _id: TimerId, tag: u64) {
        if let Some(session) = self.sessions.on_timer(ctx, tag) {
            self.lock.session_expired(&mut self.grants, ctx, &session);
        }
    }

    fn on_crash(&mut self) {
        self.sessions.clear();
        self.grants.forget_all();
        self.lock.on_crash();
    }
}
