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
//! use fencesim::design::session::SessionMsg;
//! use fencesim::design::session_server::{Call, SessionLock, SessionServer};
//! use fencesim::protocol::Msg;
//! use sim::testing::Harness;
//! use sim::{Context, NodeId};
//!
//! /// One lock, no queue: the first live session to ask holds it.
//! #[derive(Debug, Default)]
//! struct Simple(Option<(NodeId, u64)>);
//!
//! impl SessionLock for Simple {
//!     fn acquire(&mut self, call: Call<'_, '_>, req: u64) {
//!         if self.0.is_some() {
//!             return call.ctx.send(call.from, Msg::Denied { req });
//!         }
//!         self.0 = Some((call.from, call.session));
//!         let ttl = Duration::from_secs(10);
//!         call.grants.grant(call.ctx, call.from, req, call.session, None, ttl);
//!     }
//!     fn release(&mut self, call: Call<'_, '_>, lease: u64) {
//!         self.0.take_if(|&mut held| held == (call.from, lease));
//!         call.grants.release(call.ctx, call.from, lease).send(call.ctx);
//!     }
//!     fn session_of(&self, from: NodeId, lease: u64) -> Option<u64> {
//!         self.0.filter(|&held| held == (from, lease)).map(|(_, session)| session)
//!     }
//!     fn session_expired(&mut self, call: Call<'_, '_>) {
//!         if self.0.take_if(|&mut (_, session)| session == call.session).is_some() {
//!             call.grants.expire(call.ctx, call.from, call.session);
//!         }
//!     }
//!     fn on_crash(&mut self) {
//!         self.0 = None;
//!     }
//! }
//!
//! let mut server = SessionServer::with_lock(Duration::from_secs(10), Simple::default());
//! let mut h = Harness::new(&["lock", "client1"], 0);
//! h.message(&mut server, 1, Msg::design(SessionMsg::OpenSession { req: 1 }));
//! let acquire = SessionMsg::SessionAcquire { session: 1, req: 1 };
//! let step = h.message(&mut server, 1, Msg::design(acquire));
//! assert!(step.event("granted").is_some());
//! // A request on a session the server never opened is refused.
//! let acquire = SessionMsg::SessionAcquire { session: 9, req: 2 };
//! let step = h.message(&mut server, 1, Msg::design(acquire));
//! assert_eq!(step.sends[0].1, Msg::design(SessionMsg::SessionExpired { session: 9 }));
//! ```

use std::fmt::Debug;
use std::time::Duration;

use sim::{Actor, Context, NodeId, TimerId};

use crate::design::grants::Grants;
use crate::design::session::{SessionMsg, SessionTable};
use crate::protocol::Msg;

/// One call of the [`SessionServer`] into its lock: whose session it is
/// about, and the ledger and context to answer through.
pub struct Call<'a, 'c> {
    /// The client's node.
    pub from: NodeId,
    /// The client's session: live for an acquire or a release, just
    /// expired for [`SessionLock::session_expired`].
    pub session: u64,
    /// The ledger every grant, release and expiry goes through.
    pub grants: &'a mut Grants,
    /// The server's context.
    pub ctx: &'a mut Context<'c, Msg>,
}

impl<'a, 'c> Call<'a, 'c> {
    /// Its parts: `(from, session, grants, ctx)`.
    pub fn parts(self) -> (NodeId, u64, &'a mut Grants, &'a mut Context<'c, Msg>) {
        (self.from, self.session, self.grants, self.ctx)
    }
}

/// What a session design's lock does; the [`SessionServer`] does the rest.
pub trait SessionLock: Debug + Send + 'static {
    /// [`SessionMsg::SessionAcquire`] `req` on a live session: grant through
    /// `call.grants`, queue, or deny.
    fn acquire(&mut self, call: Call<'_, '_>, req: u64);

    /// [`SessionMsg::SessionRelease`] of `lease` on a live session: answer it
    /// (usually with [`Grants::release`]).
    fn release(&mut self, call: Call<'_, '_>, lease: u64);

    /// A release on a session that is not live. By default it is refused
    /// like any request on it ([`SessionMsg::SessionExpired`]).
    fn release_on_lost_session(&mut self, call: Call<'_, '_>, _lease: u64) {
        let expired = Msg::design(SessionMsg::SessionExpired {
            session: call.session,
        });
        call.ctx.send(call.from, expired);
    }

    /// The session in which `from` holds `lease`, if it does: a renewal of
    /// the lease heartbeats it.
    fn session_of(&self, from: NodeId, lease: u64) -> Option<u64>;

    /// `call.session` expired on the server's clock: what it held ends
    /// (through [`Grants::expire`]) and the lock may pass on.
    fn session_expired(&mut self, call: Call<'_, '_>);

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
            grants: Grants::held_by_sessions(),
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
    fn on_start(&mut self, ctx: &mut Context<'_, Msg>) {
        // Grants lost in a crash are journaled as ended once the server is back.
        self.grants.restarted(ctx);
    }

    fn on_message(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, msg: Msg) {
        let grants = &mut self.grants;
        match (&msg, msg.as_design::<SessionMsg>()) {
            (_, Some(&SessionMsg::OpenSession { req })) => {
                self.lock.on_open();
                self.sessions.open(ctx, from, req);
            }
            (_, Some(&SessionMsg::Heartbeat { session })) => {
                self.sessions.heartbeat(ctx, from, session);
            }
            // A request on a session that is not live is answered
            // SessionExpired by the check.
            (_, Some(&SessionMsg::SessionAcquire { session, req }))
                if self.sessions.check(ctx, from, session) =>
            {
                let call = Call {
                    from,
                    session,
                    grants,
                    ctx,
                };
                self.lock.acquire(call, req);
            }
            (_, Some(&SessionMsg::SessionRelease { session, lease })) => {
                let live = self.sessions.is_live(ctx, from, session);
                let call = Call {
                    from,
                    session,
                    grants,
                    ctx,
                };
                if live {
                    self.lock.release(call, lease);
                } else {
                    self.lock.release_on_lost_session(call, lease);
                }
            }
            (&Msg::Renew { lease, req }, _) => {
                // The lock lives as long as the session that holds it: a
                // renewal heartbeats that session, or finds the lock lost.
                let session = self
                    .lock
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
            let call = Call {
                from: session.node,
                session: session.id,
                grants: &mut self.grants,
                ctx,
            };
            self.lock.session_expired(call);
        }
    }

    fn on_crash(&mut self) {
        self.sessions.clear();
        self.grants.forget_all();
        self.lock.on_crash();
    }
}
