//! Sessions kept alive by heartbeats: the part `zookeeper`, `chubby` and
//! `hazelcast` share.
//!
//! A session belongs to one client (by name) and is named by its id. The
//! server ([`SessionTable`]) lets a session live while heartbeats arrive at
//! least every `ttl` on **its own** monotonic clock, and finds expired
//! sessions with timers; what a session held (znodes, a lock) is the
//! design's business. The client ([`ClientSession`]) opens a session, sends a
//! heartbeat every `heartbeat` on its own clock, and learns of an expiry only
//! when the server answers a request with [`SessionMsg::SessionExpired`]: a
//! paused client hears nothing until it wakes up, which is how these designs
//! fail. Their messages are a [`SessionMsg`] of their own, carried in
//! [`Msg::Design`].
//!
//! ```
//! use std::time::Duration;
//! use fencesim::design::session::{SessionMsg, SessionTable};
//! use fencesim::protocol::Msg;
//! use sim::testing::Harness;
//! # struct Server(SessionTable);
//! # impl sim::Actor<Msg> for Server {
//! #     fn on_message(&mut self, ctx: &mut sim::Context<'_, Msg>, from: usize, msg: Msg) {
//! #         if let Some(&SessionMsg::OpenSession { req }) = msg.as_design() {
//! #             self.0.open(ctx, from, req);
//! #         }
//! #     }
//! #     fn on_timer(&mut self, ctx: &mut sim::Context<'_, Msg>, _: sim::TimerId, tag: u64) {
//! #         assert!(self.0.on_timer(ctx, tag).is_some());
//! #     }
//! # }
//! let mut server = Server(SessionTable::new(Duration::from_secs(10)));
//! let mut h = Harness::new(&["lock", "client1"], 0);
//! let step = h.message(&mut server, 1, Msg::design(SessionMsg::OpenSession { req: 1 }));
//! let opened = step.sends[0].1.as_design();
//! assert!(matches!(opened, Some(SessionMsg::SessionOpened { session: 1, .. })));
//! h.advance(Duration::from_secs(10));
//! let (timer, _, tag) = step.timers[0];
//! h.timer(&mut server, timer, tag); // no heartbeat for 10 s: expired
//! ```

use std::collections::BTreeMap;
use std::time::Duration;

use sim::{Context, NodeId};

use crate::design::lock_client::{LockContext, ProtocolTimer};
use crate::design::node_named;
use crate::protocol::{Msg, Payload};

/// The session designs' own messages, carried in [`Msg::Design`]: a session
/// is opened, kept alive by heartbeats and reported expired, and the lock
/// is acquired and released within it. The answers a lock gives any client
/// ([`Msg::Granted`], [`Msg::Denied`], [`Msg::ReleaseAck`], [`Msg::Renew`]
/// and its reply) stay in the shared protocol. The journal shows each as
/// one short line (`open session req=1`, `heartbeat session=1`, `queued
/// lease=2`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionMsg {
    /// Client → lock: open a session (`zookeeper`, `chubby`, `hazelcast`).
    OpenSession {
        /// Request id, echoed in the answer.
        req: u64,
    },
    /// Lock → client: session `session` is open; it lives while heartbeats
    /// arrive at least every `ttl` on the lock's clock.
    SessionOpened {
        /// The request answered.
        req: u64,
        /// The new session's id.
        session: u64,
        /// The session timeout (ZooKeeper) or TTL (Chubby, Hazelcast CP).
        ttl: Duration,
    },
    /// Client → lock: keep session `session` alive (ZooKeeper ping, Chubby
    /// KeepAlive, Hazelcast CP session heartbeat).
    Heartbeat {
        /// The session kept alive.
        session: u64,
    },
    /// Lock → client: session `session` is unknown or has expired; whatever
    /// it held is gone. The answer to any request on such a session.
    SessionExpired {
        /// The dead session.
        session: u64,
    },
    /// Client → lock: acquire the lock within session `session`. Answered by
    /// [`Msg::Granted`], [`Msg::Denied`], [`SessionMsg::Queued`] or
    /// [`SessionMsg::SessionExpired`].
    SessionAcquire {
        /// The session acquiring.
        session: u64,
        /// Request id, echoed in the answer.
        req: u64,
    },
    /// Lock → client: the request is queued as lease `lease` (a ZooKeeper
    /// ephemeral sequential znode behind a predecessor); a
    /// [`Msg::Granted`] for the same `req` follows when it reaches the head.
    Queued {
        /// The request answered.
        req: u64,
        /// The queued lease's id (the znode's sequence number).
        lease: u64,
    },
    /// Client → lock: give up lease `lease` (held or queued) of session
    /// `session`. Answered by [`Msg::ReleaseAck`],
    /// [`SessionMsg::SessionExpired`] or [`SessionMsg::LockLost`].
    SessionRelease {
        /// The session that took the lease.
        session: u64,
        /// The lease given up.
        lease: u64,
    },
    /// Lock → client: you no longer own lease `lease`: your session was lost
    /// meanwhile (Hazelcast's `LockOwnershipLostException`).
    LockLost {
        /// The lease lost.
        lease: u64,
    },
}

impl Payload for SessionMsg {
    fn summary(&self) -> String {
        match *self {
            SessionMsg::OpenSession { req } => format!("open session req={req}"),
            SessionMsg::SessionOpened { session, .. } => format!("session {session} open"),
            SessionMsg::Heartbeat { session } => format!("heartbeat session={session}"),
            SessionMsg::SessionExpired { session } => format!("session {session} expired"),
            SessionMsg::SessionAcquire { session, req } => {
                format!("acquire session={session} req={req}")
            }
            SessionMsg::Queued { lease, .. } => format!("queued lease={lease}"),
            SessionMsg::SessionRelease { session, lease } => {
                format!("release session={session} lease={lease}")
            }
            SessionMsg::LockLost { lease } => format!("lock lost lease={lease}"),
        }
    }
}

/// Server timer tags at or above this belong to the [`SessionTable`]
/// (`SESSION_TAG + session id`); a server keeps its own tags below it.
pub const SESSION_TAG: u64 = 1 << 40;

/// One live session at the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Session {
    /// The session's id, unique at this server.
    pub id: u64,
    /// The client's name.
    pub client: String,
    /// The client's node.
    pub node: NodeId,
    /// When it expires, on the server's monotonic clock, unless a heartbeat
    /// comes first.
    pub expires_at: Duration,
}

/// The server's live sessions.
#[derive(Debug)]
pub struct SessionTable {
    ttl: Duration,
    next_id: u64,
    sessions: BTreeMap<u64, Session>,
}

impl SessionTable {
    /// No sessions yet; each will live `ttl` past its last heartbeat.
    pub fn new(ttl: Duration) -> Self {
        assert!(!ttl.is_zero(), "a session ttl must be positive");
        SessionTable {
            ttl,
            next_id: 1,
            sessions: BTreeMap::new(),
        }
    }

    /// The session timeout.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// Opens a session for `client`, answers request `req` with
    /// [`SessionMsg::SessionOpened`] and arms its expiry timer. Returns its
    /// id.
    pub fn open(&mut self, ctx: &mut Context<'_, Msg>, client: NodeId, req: u64) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.sessions.insert(
            id,
            Session {
                id,
                client: ctx.name_of(client).to_owned(),
                node: client,
                expires_at: ctx.now() + self.ttl,
            },
        );
        ctx.set_timer(self.ttl, SESSION_TAG + id);
        let ttl = self.ttl;
        ctx.send(
            client,
            Msg::design(SessionMsg::SessionOpened {
                req,
                session: id,
                ttl,
            }),
        );
        id
    }

    /// Whether `session` is live and belongs to `client`.
    pub fn is_live(&self, ctx: &Context<'_, Msg>, client: NodeId, session: u64) -> bool {
        self.sessions
            .get(&session)
            .is_some_and(|s| s.client == ctx.name_of(client))
    }

    /// A heartbeat from `client` for `session`: extends a live session, else
    /// answers [`SessionMsg::SessionExpired`]. Returns whether the session is
    /// live.
    pub fn heartbeat(&mut self, ctx: &mut Context<'_, Msg>, client: NodeId, session: u64) -> bool {
        if !self.is_live(ctx, client, session) {
            ctx.send(client, Msg::design(SessionMsg::SessionExpired { session }));
            return false;
        }
        let expires_at = ctx.now() + self.ttl;
        if let Some(s) = self.sessions.get_mut(&session) {
            s.expires_at = expires_at;
        }
        true
    }

    /// A request from `client` on `session`: `true` if the session is live,
    /// else answers [`SessionMsg::SessionExpired`] and returns `false`.
    pub fn check(&mut self, ctx: &mut Context<'_, Msg>, client: NodeId, session: u64) -> bool {
        let live = self.is_live(ctx, client, session);
        if !live {
            ctx.send(client, Msg::design(SessionMsg::SessionExpired { session }));
        }
        live
    }

    /// A server timer fired. For a session's timer: `Some` with the session
    /// when it has expired (it is removed), else the timer is re-armed for
    /// the time left and `None` is returned. `None` for other tags too.
    pub fn on_timer(&mut self, ctx: &mut Context<'_, Msg>, tag: u64) -> Option<Session> {
        let id = tag.checked_sub(SESSION_TAG)?;
        let expires_at = self.sessions.get(&id)?.expires_at;
        let now = ctx.now();
        if now < expires_at {
            // Heartbeats moved the deadline: check again then.
            ctx.set_timer(expires_at - now, tag);
            return None;
        }
        self.sessions.remove(&id)
    }

    /// The server crashed: sessions lived in its memory.
    pub fn clear(&mut self) {
        self.sessions.clear();
    }
}

/// What a message meant for the client's session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionEvent {
    /// Not a session message.
    None,
    /// Our session is now open, with this id.
    Opened(u64),
    /// The server says session `id` expired (ours, or an older one).
    Expired(u64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Closed,
    Opening { req: u64 },
    Open { session: u64 },
}

/// The timer of a client's session: the next heartbeat of session `id`.
/// Its tag is the session id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionTimer {
    /// Session `id`'s next heartbeat is due.
    Heartbeat(u64),
}

impl ProtocolTimer for SessionTimer {
    fn tag(&self) -> u64 {
        let SessionTimer::Heartbeat(session) = *self;
        session
    }

    fn from_tag(tag: u64) -> Option<Self> {
        Some(SessionTimer::Heartbeat(tag))
    }
}

/// The client's half of a session: open, heartbeat, learn of expiry. Its
/// heartbeats are [`SessionTimer`]s of the protocol that holds it.
#[derive(Debug)]
pub struct ClientSession {
    lock: String,
    heartbeat: Duration,
    req: u64,
    state: State,
}

impl ClientSession {
    /// A closed session with the lock node `lock`, sending a heartbeat every
    /// `heartbeat` once open.
    pub fn new(lock: impl Into<String>, heartbeat: Duration) -> Self {
        assert!(
            !heartbeat.is_zero(),
            "a heartbeat interval must be positive"
        );
        ClientSession {
            lock: lock.into(),
            heartbeat,
            req: 0,
            state: State::Closed,
        }
    }

    /// The lock node.
    pub fn lock(&self, ctx: &Context<'_, Msg>) -> NodeId {
        node_named(ctx, &self.lock)
    }

    /// The open session's id.
    pub fn id(&self) -> Option<u64> {
        match self.state {
            State::Open { session } => Some(session),
            _ => None,
        }
    }

    /// Opens a session unless one is open or opening; returns the open one.
    pub fn open(&mut self, ctx: &mut Context<'_, Msg>) -> Option<u64> {
        if self.state == State::Closed {
            self.req += 1;
            self.state = State::Opening { req: self.req };
            let lock = self.lock(ctx);
            ctx.send(lock, Msg::design(SessionMsg::OpenSession { req: self.req }));
        }
        self.id()
    }

    /// Gives up a session still opening (its answer may be lost): the next
    /// [`ClientSession::open`] asks again. A late answer is ignored; the
    /// orphan session expires at the server.
    pub fn abandon_opening(&mut self) {
        if matches!(self.state, State::Opening { .. }) {
            self.state = State::Closed;
        }
    }

    /// Sends a heartbeat now; `false` without an open session.
    pub fn heartbeat_now(&mut self, ctx: &mut Context<'_, Msg>) -> bool {
        let Some(session) = self.id() else {
            return false;
        };
        let lock = self.lock(ctx);
        ctx.send(lock, Msg::design(SessionMsg::Heartbeat { session }));
        true
    }

    /// Handles [`SessionMsg::SessionOpened`] and
    /// [`SessionMsg::SessionExpired`]; an expiry of the open session closes it
    /// (open another with [`ClientSession::open`]).
    pub fn on_message(
        &mut self,
        ctx: &mut LockContext<'_, '_, SessionTimer>,
        msg: &Msg,
    ) -> SessionEvent {
        match msg.as_design::<SessionMsg>() {
            Some(&SessionMsg::SessionOpened { req, session, .. })
                if self.state == State::Opening { req } =>
            {
                self.state = State::Open { session };
                // One timer chain per session: its timer names the session,
                // so the chain of an expired session dies out.
                ctx.set_timer(self.heartbeat, SessionTimer::Heartbeat(session));
                SessionEvent::Opened(session)
            }
            Some(&SessionMsg::SessionExpired { session }) => {
                if self.id() == Some(session) {
                    self.state = State::Closed;
                }
                SessionEvent::Expired(session)
            }
            _ => SessionEvent::None,
        }
    }

    /// A session's heartbeat timer fired: the open session's heartbeat is
    /// sent and re-armed. Returns whether it was the open session's (that of
    /// a session gone since does nothing).
    pub fn on_timer(
        &mut self,
        ctx: &mut LockContext<'_, '_, SessionTimer>,
        timer: SessionTimer,
    ) -> bool {
        let SessionTimer::Heartbeat(session) = timer;
        if self.id() != Some(session) {
            return false;
        }
        self.heartbeat_now(ctx);
        ctx.set_timer(self.heartbeat, timer);
        true
    }

    /// The client crashed: its session is forgotten (the server expires it).
    pub fn on_crash(&mut self) {
        self.state = State::Closed;
    }
}

/// The heartbeat interval: `heartbeat` if set, else `ttl / divisor` (the
/// `heartbeat = "0s"` default of the session designs).
pub fn heartbeat_interval(heartbeat: Duration, ttl: Duration, divisor: u32) -> Duration {
    if heartbeat.is_zero() {
        (ttl / divisor).max(Duration::from_millis(1))
    } else {
        heartbeat
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::design::client::protocol_timer;
    use crate::design::lock_client::timer_tag;
    use sim::testing::Harness;
    use sim::{Actor, TimerId};

    /// A bare server: sessions and nothing else.
    struct Server(SessionTable, Vec<u64>);

    impl Actor<Msg> for Server {
        fn on_message(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, msg: Msg) {
            match msg.as_design::<SessionMsg>() {
                Some(&SessionMsg::OpenSession { req }) => {
                    self.0.open(ctx, from, req);
                }
                Some(&SessionMsg::Heartbeat { session }) => {
                    self.0.heartbeat(ctx, from, session);
                }
                _ => {}
            }
        }
        fn on_timer(&mut self, ctx: &mut Context<'_, Msg>, _: TimerId, tag: u64) {
            if let Some(s) = self.0.on_timer(ctx, tag) {
                self.1.push(s.id);
            }
        }
    }

    const CLIENT1: NodeId = 1;
    const CLIENT2: NodeId = 2;

    fn server() -> (Harness, Server) {
        (
            Harness::new(&["lock", "client1", "client2"], 0),
            Server(SessionTable::new(Duration::from_secs(10)), Vec::new()),
        )
    }

    #[test]
    fn heartbeats_keep_a_session_alive_and_silence_expires_it() {
        let (mut h, mut s) = server();
        let open = h.message(
            &mut s,
            CLIENT1,
            Msg::design(SessionMsg::OpenSession { req: 1 }),
        );
        let (timer, after, tag) = open.timers[0];
        assert_eq!(after, Duration::from_secs(10));
        h.advance(Duration::from_secs(6));
        h.message(
            &mut s,
            CLIENT1,
            Msg::design(SessionMsg::Heartbeat { session: 1 }),
        );
        h.advance(Duration::from_secs(4));
        // The first deadline passed, but the heartbeat moved it to 16 s.
        let step = h.timer(&mut s, timer, tag);
        assert_eq!(step.timers[0].1, Duration::from_secs(6));
        assert!(s.1.is_empty());
        h.advance(Duration::from_secs(6));
        h.timer(&mut s, step.timers[0].0, tag);
        assert_eq!(s.1, [1]);
        // Too late now.
        let step = h.message(
            &mut s,
            CLIENT1,
            Msg::design(SessionMsg::Heartbeat { session: 1 }),
        );
        assert_eq!(
            step.sends,
            [(
                CLIENT1,
                Msg::design(SessionMsg::SessionExpired { session: 1 })
            )]
        );
    }

    #[test]
    fn a_session_answers_only_its_own_client() {
        let (mut h, mut s) = server();
        h.message(
            &mut s,
            CLIENT1,
            Msg::design(SessionMsg::OpenSession { req: 1 }),
        );
        let step = h.message(
            &mut s,
            CLIENT2,
            Msg::design(SessionMsg::Heartbeat { session: 1 }),
        );
        assert_eq!(
            step.sends,
            [(
                CLIENT2,
                Msg::design(SessionMsg::SessionExpired { session: 1 })
            )]
        );
    }

    /// Hosts a client session: opens it on start, hands it everything else.
    /// The session, its events, and what each timer's `on_timer` said.
    struct Host(ClientSession, Vec<SessionEvent>, Vec<bool>);

    impl Actor<Msg> for Host {
        fn on_start(&mut self, ctx: &mut Context<'_, Msg>) {
            self.0.open(ctx);
        }
        fn on_message(&mut self, ctx: &mut Context<'_, Msg>, _: NodeId, msg: Msg) {
            let event = self.0.on_message(&mut LockContext::new(ctx), &msg);
            self.1.push(event);
        }
        fn on_timer(&mut self, ctx: &mut Context<'_, Msg>, _: TimerId, tag: u64) {
            let timer = protocol_timer(tag).and_then(SessionTimer::from_tag);
            let timer = timer.expect("a heartbeat's timer");
            let open = self.0.on_timer(&mut LockContext::new(ctx), timer);
            self.2.push(open);
        }
    }

    #[test]
    fn the_client_heartbeats_its_open_session_only() {
        const LOCK: NodeId = 1;
        let mut h = Harness::new(&["client1", "lock"], 0);
        let mut c = Host(
            ClientSession::new("lock", Duration::from_secs(3)),
            vec![],
            vec![],
        );
        let step = h.start(&mut c);
        assert_eq!(
            step.sends,
            [(LOCK, Msg::design(SessionMsg::OpenSession { req: 1 }))]
        );
        let opened = Msg::design(SessionMsg::SessionOpened {
            req: 1,
            session: 4,
            ttl: Duration::from_secs(10),
        });
        let step = h.message(&mut c, LOCK, opened);
        let (timer, after, tag) = step.timers[0];
        let heartbeat = timer_tag(&SessionTimer::Heartbeat(4));
        assert_eq!((after, tag), (Duration::from_secs(3), heartbeat));
        let step = h.timer(&mut c, timer, tag);
        assert_eq!(
            step.sends,
            [(LOCK, Msg::design(SessionMsg::Heartbeat { session: 4 }))]
        );
        h.message(
            &mut c,
            LOCK,
            Msg::design(SessionMsg::SessionExpired { session: 4 }),
        );
        assert_eq!(c.0.id(), None);
        // The old session's timer chain stops.
        let step = h.timer(&mut c, step.timers[0].0, tag);
        assert!(step.sends.is_empty() && step.timers.is_empty());
        assert_eq!(c.1, [SessionEvent::Opened(4), SessionEvent::Expired(4)]);
        // The open session's heartbeat, then the expired one's.
        assert_eq!(c.2, [true, false]);
    }

    #[test]
    fn heartbeat_defaults_to_a_fraction_of_the_ttl() {
        let ttl = Duration::from_secs(9);
        assert_eq!(
            heartbeat_interval(Duration::ZERO, ttl, 3),
            Duration::from_secs(3)
        );
        assert_eq!(
            heartbeat_interval(Duration::from_secs(1), ttl, 3),
            Duration::from_secs(1)
        );
    }
}
