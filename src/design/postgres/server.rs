//! The `postgres` server: client connections and their keepalive, server
//! sessions (backends) and their idle timeouts, the transaction pooler's
//! pool, the advisory lock and the token sequence.

use std::collections::BTreeMap;
use std::time::Duration;

use sim::{Actor, Context, NodeId, TimerId};

use super::{EndReason, PgWire, Pooler, PostgresConfig, SEQ_LOG_VALS};
use crate::design::grants::Grants;
use crate::design::session::SessionMsg;
use crate::protocol::Msg;

const KEEPALIVE_TAG: u64 = 1 << 40;
const IDLE_TAG: u64 = 2 << 40;

/// A client connection (to the server, or to the pooler).
#[derive(Debug)]
struct Conn {
    node: NodeId,
    /// The backend serving it: always, without a pooler or with session
    /// pooling; during a transaction, with transaction pooling.
    backend: Option<u64>,
    last_heard: Duration,
    probes: u64,
    keepalive: TimerId,
}

/// A server session.
#[derive(Debug, Default)]
struct Backend {
    /// The connection it serves, if any.
    conn: Option<u64>,
    /// The advisory lock's holds taken on it, one per client connection
    /// (the lock is re-entrant: `count` locks need `count` unlocks).
    holds: Vec<Hold>,
    last_active: Duration,
    idle_timer: Option<TimerId>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Hold {
    node: NodeId,
    conn: u64,
    lease: u64,
    /// The last lock request it answered (a duplicate is no second lock).
    req: u64,
    count: u64,
}

/// The `postgres` server: connections, backends, the advisory lock and the
/// token sequence.
#[derive(Debug)]
pub struct PgServer {
    config: PostgresConfig,
    grants: Grants,
    conns: BTreeMap<u64, Conn>,
    backends: BTreeMap<u64, Backend>,
    /// Transaction pooling: idle server connections, most recent last.
    pool: Vec<u64>,
    // Durable (see the module doc).
    next_conn: u64,
    next_backend: u64,
    next_lease: u64,
    next_token: u64,
    /// The highest sequence value WAL-logged.
    logged_token: u64,
}

impl PgServer {
    /// A server with these settings.
    pub fn new(config: PostgresConfig) -> Self {
        let first = config.first_token;
        PgServer {
            config,
            grants: Grants::held_by_sessions(),
            conns: BTreeMap::new(),
            backends: BTreeMap::new(),
            pool: Vec::new(),
            next_conn: 1,
            next_backend: 1,
            next_lease: 1,
            next_token: first,
            logged_token: first.saturating_sub(1),
        }
    }

    /// The backend holding the advisory lock, if any.
    pub fn holder(&self) -> Option<u64> {
        self.backends
            .iter()
            .find(|(_, b)| !b.holds.is_empty())
            .map(|(&id, _)| id)
    }

    /// How many server sessions are open.
    pub fn sessions(&self) -> usize {
        self.backends.len()
    }

    fn new_backend(&mut self, ctx: &Context<'_, Msg>, conn: Option<u64>) -> u64 {
        let id = self.next_backend;
        self.next_backend += 1;
        let backend = Backend {
            conn,
            last_active: ctx.now(),
            ..Backend::default()
        };
        self.backends.insert(id, backend);
        id
    }

    /// `nextval`: the next token, WAL-logged [`SEQ_LOG_VALS`] ahead.
    fn nextval(&mut self) -> u64 {
        let token = self.next_token;
        self.next_token += 1;
        if token > self.logged_token {
            self.logged_token = token + SEQ_LOG_VALS;
        }
        token
    }

    fn live(&self, from: NodeId, conn: u64) -> bool {
        self.conns.get(&conn).is_some_and(|c| c.node == from)
    }

    /// A packet from the client: the keepalive starts counting again.
    fn heard(&mut self, ctx: &Context<'_, Msg>, conn: u64) {
        if let Some(c) = self.conns.get_mut(&conn) {
            c.last_heard = ctx.now();
            c.probes = 0;
        }
    }

    /// The backend a statement on `conn` runs on: its own, or (transaction
    /// pooling) the pool's most recently used one, or a new one.
    fn statement_backend(&mut self, ctx: &Context<'_, Msg>, conn: u64) -> u64 {
        if let Some(b) = self.conns[&conn].backend {
            return b;
        }
        let b = match self.pool.pop() {
            Some(b) => b,
            None => self.new_backend(ctx, None),
        };
        if let Some(backend) = self.backends.get_mut(&b) {
            backend.conn = Some(conn);
        }
        if let Some(c) = self.conns.get_mut(&conn) {
            c.backend = Some(b);
        }
        b
    }

    /// A statement on `conn` ran on backend `b`: with transaction pooling
    /// the backend goes back to the pool, unless the client's transaction
    /// is still open; the backend's idle clock starts again.
    fn after_statement(&mut self, ctx: &mut Context<'_, Msg>, conn: u64, b: u64) {
        if self.config.pooler == Pooler::Transaction && !self.in_transaction(b) {
            if let Some(backend) = self.backends.get_mut(&b) {
                backend.conn = None;
            }
            if let Some(c) = self.conns.get_mut(&conn) {
                c.backend = None;
            }
            self.pool.push(b);
        }
        self.touch(ctx, b);
    }

    /// Whether backend `b` is inside its client's open transaction: the
    /// client holds the lock there with `in_transaction`.
    fn in_transaction(&self, b: u64) -> bool {
        let Some(backend) = self.backends.get(&b) else {
            return false;
        };
        self.config.in_transaction
            && backend
                .conn
                .is_some_and(|c| backend.holds.iter().any(|h| h.conn == c))
    }

    /// The idle timeout that applies to backend `b` now, and its reason.
    fn idle_timeout(&self, b: u64) -> (Duration, EndReason) {
        if self.in_transaction(b) {
            let d = self.config.idle_in_transaction_session_timeout;
            (d, EndReason::IdleInTransaction)
        } else {
            (self.config.idle_session_timeout, EndReason::IdleSession)
        }
    }

    /// Backend `b` just ran a statement: its idle timer starts again.
    fn touch(&mut self, ctx: &mut Context<'_, Msg>, b: u64) {
        let (timeout, _) = self.idle_timeout(b);
        let Some(backend) = self.backends.get_mut(&b) else {
            return;
        };
        backend.last_active = ctx.now();
        if let Some(t) = backend.idle_timer.take() {
            ctx.cancel_timer(t);
        }
        if !timeout.is_zero() {
            backend.idle_timer = Some(ctx.set_timer(timeout, IDLE_TAG + b));
        }
    }

    fn open(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, req: u64) {
        let conn = self.next_conn;
        self.next_conn += 1;
        let backend = match self.config.pooler {
            Pooler::None | Pooler::Session => Some(self.new_backend(ctx, Some(conn))),
            Pooler::Transaction => None,
        };
        let keepalive = ctx.set_timer(self.config.keepalive_idle(), KEEPALIVE_TAG + conn);
        let c = Conn {
            node: from,
            backend,
            last_heard: ctx.now(),
            probes: 0,
            keepalive,
        };
        self.conns.insert(conn, c);
        if let Some(b) = backend {
            self.touch(ctx, b);
        }
        let ttl = self.config.belief();
        let opened = Msg::design(SessionMsg::SessionOpened {
            req,
            session: conn,
            ttl,
        });
        ctx.send(from, opened);
    }

    /// `pg_try_advisory_lock` on `conn`.
    fn lock(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, conn: u64, req: u64) {
        let b = self.statement_backend(ctx, conn);
        let holder = self.holder();
        let ttl = self.config.belief();
        let backend = self.backends.get_mut(&b).expect("the statement's backend");
        if let Some(hold) = backend
            .holds
            .iter_mut()
            .find(|h| h.node == from && h.conn == conn)
        {
            // The same session locks again: re-entrant, one more unlock
            // needed; a second copy of the same request is no second lock.
            if hold.req != req {
                hold.req = req;
                hold.count += 1;
            }
            self.grants.repeat(ctx, from, req, hold.lease, ttl);
        } else if holder.is_none() || holder == Some(b) {
            // Free, or held by this very session (another client's, through
            // a transaction pooler): advisory locks are re-entrant within a
            // session, so the lock succeeds at once.
            let lease = self.next_lease;
            self.next_lease += 1;
            let token = self.config.tokens.then(|| self.nextval());
            let backend = self.backends.get_mut(&b).expect("the statement's backend");
            backend.holds.push(Hold {
                node: from,
                conn,
                lease,
                req,
                count: 1,
            });
            self.grants.grant(ctx, from, req, lease, token, ttl);
        } else {
            ctx.send(from, Msg::Denied { req });
        }
        self.after_statement(ctx, conn, b);
    }

    /// `pg_advisory_unlock` on `conn`.
    fn unlock(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, conn: u64, lease: u64) {
        let b = self.statement_backend(ctx, conn);
        let backend = self.backends.get_mut(&b).expect("the statement's backend");
        let ack = match backend
            .holds
            .iter()
            .position(|h| h.node == from && h.lease == lease)
        {
            Some(i) if backend.holds[i].count > 1 => {
                backend.holds[i].count -= 1;
                self.grants.acknowledge(from, lease)
            }
            Some(i) => {
                backend.holds.remove(i);
                self.grants.release(ctx, from, lease)
            }
            // This session does not hold it: the unlock returns false (a
            // WARNING the client does not read) and changes nothing.
            None => self.grants.acknowledge(from, lease),
        };
        ack.send(ctx);
        self.after_statement(ctx, conn, b);
    }

    /// A `SELECT 1` on the connection holding `lease`: the session is busy
    /// again, and the lock still its.
    fn renew(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, lease: u64, req: u64) {
        let held = self.backends.iter().find_map(|(&b, backend)| {
            backend
                .holds
                .iter()
                .find(|h| h.node == from && h.lease == lease)
                .map(|h| (b, h.conn))
        });
        let extended = match held {
            Some((b, conn)) if self.live(from, conn) => {
                self.heard(ctx, conn);
                self.touch(ctx, b);
                Some(self.config.belief())
            }
            _ => None,
        };
        self.grants.renew(ctx, from, lease, req, extended);
    }

    /// The keepalive timer of `conn` fired: probe, or declare it dead.
    fn keepalive(&mut self, ctx: &mut Context<'_, Msg>, id: TimerId, conn: u64) {
        let (idle, interval, count) = (
            self.config.keepalive_idle(),
            self.config.keepalive_interval(),
            self.config.keepalive_count(),
        );
        let Some(c) = self.conns.get_mut(&conn).filter(|c| c.keepalive == id) else {
            return;
        };
        let silent = ctx.now().saturating_sub(c.last_heard);
        if silent < idle {
            c.probes = 0;
            c.keepalive = ctx.set_timer(idle - silent, KEEPALIVE_TAG + conn);
        } else if c.probes >= count {
            self.close(ctx, conn, EndReason::Keepalive);
        } else {
            c.probes += 1;
            let node = c.node;
            c.keepalive = ctx.set_timer(interval, KEEPALIVE_TAG + conn);
            ctx.send(node, Msg::design(PgWire::Probe { conn }));
        }
    }

    /// The idle timer of backend `b` fired: terminate it if it has been
    /// idle for its timeout.
    fn idle(&mut self, ctx: &mut Context<'_, Msg>, id: TimerId, b: u64) {
        let (timeout, reason) = self.idle_timeout(b);
        let Some(backend) = self.backends.get_mut(&b) else {
            return;
        };
        if backend.idle_timer != Some(id) {
            return;
        }
        backend.idle_timer = None;
        if timeout.is_zero() {
            return;
        }
        let idle = ctx.now().saturating_sub(backend.last_active);
        if idle < timeout {
            backend.idle_timer = Some(ctx.set_timer(timeout - idle, IDLE_TAG + b));
            return;
        }
        match backend.conn {
            // The client's connection goes with its session, with a FATAL.
            Some(conn) => {
                let node = self.conns[&conn].node;
                ctx.send(node, Msg::design(PgWire::Terminated { conn, reason }));
                self.close(ctx, conn, reason);
            }
            // A pooled server connection: PgBouncer drops it from the pool.
            None => {
                self.pool.retain(|&p| p != b);
                self.end_backend(ctx, b, reason);
            }
        }
    }

    /// Connection `conn` is gone, and the session serving it, if any.
    fn close(&mut self, ctx: &mut Context<'_, Msg>, conn: u64, reason: EndReason) {
        let Some(c) = self.conns.remove(&conn) else {
            return;
        };
        ctx.cancel_timer(c.keepalive);
        if let Some(b) = c.backend {
            self.end_backend(ctx, b, reason);
        }
    }

    /// Server session `b` ends: every advisory lock it held is released.
    fn end_backend(&mut self, ctx: &mut Context<'_, Msg>, b: u64, reason: EndReason) {
        let Some(backend) = self.backends.remove(&b) else {
            return;
        };
        if let Some(t) = backend.idle_timer {
            ctx.cancel_timer(t);
        }
        for hold in backend.holds {
            let (node, lease) = (hold.node, hold.lease);
            self.grants
                .expire_because(ctx, node, lease, reason.as_str());
        }
    }
}

impl Actor<Msg> for PgServer {
    fn on_start(&mut self, ctx: &mut Context<'_, Msg>) {
        // Locks lost in a crash are journaled as ended once the server is back.
        self.grants.restarted(ctx);
    }

    fn on_message(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, msg: Msg) {
        match (&msg, msg.as_design::<SessionMsg>()) {
            (_, Some(&SessionMsg::OpenSession { req })) => self.open(ctx, from, req),
            (
                _,
                Some(
                    &SessionMsg::SessionAcquire { session, .. }
                    | &SessionMsg::SessionRelease { session, .. },
                ),
            ) if !self.live(from, session) => {
                // A connection the server closed (or never had): the client
                // finds the socket gone.
                ctx.send(from, Msg::design(SessionMsg::SessionExpired { session }));
            }
            (_, Some(&SessionMsg::SessionAcquire { session, req })) => {
                self.heard(ctx, session);
                self.lock(ctx, from, session, req);
            }
            (_, Some(&SessionMsg::SessionRelease { session, lease })) => {
                self.heard(ctx, session);
                self.unlock(ctx, from, session, lease);
            }
            (&Msg::Renew { lease, req }, _) => self.renew(ctx, from, lease, req),
            _ => {
                if let Some(&PgWire::ProbeAck { conn }) = msg.as_design::<PgWire>() {
                    if self.live(from, conn) {
                        self.heard(ctx, conn);
                    }
                }
            }
        }
    }

    fn on_timer(&mut self, ctx: &mut Context<'_, Msg>, id: TimerId, tag: u64) {
        if tag >= IDLE_TAG {
            self.idle(ctx, id, tag - IDLE_TAG);
        } else if tag >= KEEPALIVE_TAG {
            self.keepalive(ctx, id, tag - KEEPALIVE_TAG);
        }
    }

    fn on_crash(&mut self) {
        // Connections, sessions and advisory locks lived in memory; the
        // sequence resumes past what it logged.
        self.conns.clear();
        self.backends.clear();
        self.pool.clear();
        self.grants.forget_all();
        if self.next_token <= self.logged_token {
            self.next_token = self.logged_token + 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::events;
    use sim::testing::{Harness, Step};

    const CLIENT1: NodeId = 1;
    const CLIENT2: NodeId = 2;
    const SECOND: Duration = Duration::from_secs(1);

    /// The server under test, with the latest timer it set per tag, so a
    /// test can fire what the world would fire.
    struct Server {
        h: Harness,
        pg: PgServer,
        timers: BTreeMap<u64, TimerId>,
    }

    impl Server {
        fn new(config: PostgresConfig) -> Self {
            Server {
                h: Harness::new(&["lock", "client1", "client2"], 0),
                pg: PgServer::new(config),
                timers: BTreeMap::new(),
            }
        }

        fn note(&mut self, step: Step<Msg>) -> Step<Msg> {
            for &(id, _, tag) in &step.timers {
                self.timers.insert(tag, id);
            }
            step
        }

        fn message(&mut self, from: NodeId, msg: Msg) -> Step<Msg> {
            let step = self.h.message(&mut self.pg, from, msg);
            self.note(step)
        }

        /// Opens a connection for `client`; returns its id.
        fn connect(&mut self, client: NodeId) -> u64 {
            let step = self.message(client, Msg::design(SessionMsg::OpenSession { req: 1 }));
            match step.sends[..] {
                [(to, ref m)] if to == client => match m.as_design() {
                    Some(&SessionMsg::SessionOpened { session, .. }) => session,
                    _ => panic!("{m:?}"),
                },
                ref other => panic!("{other:?}"),
            }
        }

        fn lock(&mut self, client: NodeId, session: u64, req: u64) -> Step<Msg> {
            self.message(
                client,
                Msg::design(SessionMsg::SessionAcquire { session, req }),
            )
        }

        fn unlock(&mut self, client: NodeId, session: u64, lease: u64) -> Step<Msg> {
            self.message(
                client,
                Msg::design(SessionMsg::SessionRelease { session, lease }),
            )
        }

        /// Moves time on by `d` and fires the timer of `tag`.
        fn fire_after(&mut self, d: Duration, tag: u64) -> Step<Msg> {
            self.h.advance(d);
            let id = self.timers[&tag];
            let step = self.h.timer(&mut self.pg, id, tag);
            self.note(step)
        }
    }

    fn config(f: impl FnOnce(&mut PostgresConfig)) -> PostgresConfig {
        let mut c = PostgresConfig::default();
        f(&mut c);
        c
    }

    fn reason(step: &Step<Msg>) -> Option<String> {
        let fields = step.event(events::EXPIRED)?;
        let (_, value) = fields.iter().find(|(k, _)| k == "reason")?;
        Some(value.to_string().trim_matches('"').to_owned())
    }

    fn granted(step: &Step<Msg>) -> Option<(u64, Option<u64>)> {
        step.sends.iter().find_map(|(_, m)| match *m {
            Msg::Granted { lease, token, .. } => Some((lease, token)),
            _ => None,
        })
    }

    #[test]
    fn the_defaults_are_postgresql_and_linux_defaults() {
        let c = PostgresConfig::default();
        assert_eq!(c.keepalive_budget(), Duration::from_secs(7200 + 75 * 9));
        assert!(c.idle_session_timeout.is_zero() && !c.tokens);
        assert_eq!(c.pooler, Pooler::None);
        // Nothing but the keepalive can end an idle session: the belief.
        assert_eq!(c.belief(), c.keepalive_budget());
    }

    #[test]
    fn a_silent_client_loses_its_session_after_idle_plus_interval_times_count() {
        let mut s = Server::new(config(|c| {
            c.tcp_keepalives_idle = 10 * SECOND;
            c.tcp_keepalives_interval = 2 * SECOND;
            c.tcp_keepalives_count = 3;
        }));
        let conn = s.connect(CLIENT1);
        assert!(granted(&s.lock(CLIENT1, conn, 1)).is_some());
        let tag = KEEPALIVE_TAG + conn;
        // Three probes, at 10, 12 and 14 s of silence, none answered.
        for at in [10, 12, 14] {
            let step = s.fire_after(if at == 10 { 10 * SECOND } else { 2 * SECOND }, tag);
            let probe = Msg::design(PgWire::Probe { conn });
            assert_eq!(step.sends, [(CLIENT1, probe)], "a probe at {at} s");
            assert!(step.event(events::EXPIRED).is_none());
        }
        // 16 s: the third probe went unanswered: the session and its lock end.
        let step = s.fire_after(2 * SECOND, tag);
        assert_eq!(reason(&step).as_deref(), Some("keepalive"));
        assert!(step.event(events::EXPIRED).is_some());
        assert!(step.sends.is_empty(), "nothing reaches a dead peer");
        assert_eq!((s.pg.holder(), s.pg.sessions()), (None, 0));
        // The next client gets the lock at once.
        let conn2 = s.connect(CLIENT2);
        assert!(granted(&s.lock(CLIENT2, conn2, 1)).is_some());
    }

    #[test]
    fn a_client_whose_kernel_answers_the_probes_keeps_its_session() {
        let mut s = Server::new(config(|c| {
            c.tcp_keepalives_idle = 10 * SECOND;
            c.tcp_keepalives_interval = 2 * SECOND;
            c.tcp_keepalives_count = 3;
        }));
        let conn = s.connect(CLIENT1);
        s.lock(CLIENT1, conn, 1);
        let tag = KEEPALIVE_TAG + conn;
        for _ in 0..5 {
            let step = s.fire_after(10 * SECOND, tag);
            assert_eq!(step.sends.len(), 1, "one probe");
            let ack = Msg::design(PgWire::ProbeAck { conn });
            s.message(CLIENT1, ack);
            // The ack restarts the silence: the next timer only re-arms.
            let step = s.fire_after(2 * SECOND, tag);
            assert!(step.sends.is_empty() && step.event(events::EXPIRED).is_none());
            s.h.advance(Duration::from_secs(8) - 2 * SECOND);
        }
        assert!(s.pg.holder().is_some());
    }

    #[test]
    fn idle_session_timeout_ends_an_idle_holder_and_a_statement_postpones_it() {
        let mut s = Server::new(config(|c| c.idle_session_timeout = 10 * SECOND));
        let conn = s.connect(CLIENT1);
        let (lease, _) = granted(&s.lock(CLIENT1, conn, 1)).unwrap();
        let tag = IDLE_TAG + 1;
        // A renewal (SELECT 1) at 6 s: the session is busy again.
        s.h.advance(6 * SECOND);
        let step = s.message(CLIENT1, Msg::Renew { lease, req: 1 });
        assert!(matches!(
            step.sends[..],
            [(_, Msg::RenewReply { ok: true, .. })]
        ));
        let step = s.fire_after(4 * SECOND, tag);
        assert!(step.event(events::EXPIRED).is_none(), "idle 4 s only");
        let step = s.fire_after(6 * SECOND, tag);
        assert_eq!(reason(&step).as_deref(), Some("idle_session_timeout"));
        assert!(step.event(events::EXPIRED).is_some());
        let fatal = PgWire::Terminated {
            conn,
            reason: EndReason::IdleSession,
        };
        assert_eq!(step.sends, [(CLIENT1, Msg::design(fatal))]);
        // Its next call finds the connection gone.
        let step = s.unlock(CLIENT1, conn, lease);
        assert_eq!(
            step.sends[0].1,
            Msg::design(SessionMsg::SessionExpired { session: conn })
        );
    }

    #[test]
    fn inside_a_transaction_the_in_transaction_timeout_applies() {
        let mut s = Server::new(config(|c| {
            c.idle_session_timeout = 5 * SECOND;
            c.idle_in_transaction_session_timeout = 20 * SECOND;
            c.in_transaction = true;
        }));
        let conn = s.connect(CLIENT1);
        let step = s.lock(CLIENT1, conn, 1);
        assert!(step.timers.iter().any(|t| t.1 == 20 * SECOND));
        let step = s.fire_after(20 * SECOND, IDLE_TAG + 1);
        assert_eq!(
            reason(&step).as_deref(),
            Some("idle_in_transaction_session_timeout")
        );
        assert_eq!(s.pg.holder(), None);
    }

    #[test]
    fn without_a_pooler_another_session_is_refused_and_a_lock_is_reentrant() {
        let mut s = Server::new(PostgresConfig::default());
        let (c1, c2) = (s.connect(CLIENT1), s.connect(CLIENT2));
        let (lease, _) = granted(&s.lock(CLIENT1, c1, 1)).unwrap();
        assert_eq!(s.lock(CLIENT2, c2, 1).sends[0].1, Msg::Denied { req: 1 });
        // The same session again: a second hold of the same grant, and a
        // second copy of that request is no third.
        let step = s.lock(CLIENT1, c1, 2);
        assert!(step.event(events::GRANTED).is_none());
        assert_eq!(granted(&step), Some((lease, None)));
        s.lock(CLIENT1, c1, 2);
        assert!(s
            .unlock(CLIENT1, c1, lease)
            .event(events::RELEASED)
            .is_none());
        assert!(s
            .unlock(CLIENT1, c1, lease)
            .event(events::RELEASED)
            .is_some());
        assert!(granted(&s.lock(CLIENT2, c2, 2)).is_some());
    }

    #[test]
    fn transaction_pooling_hands_the_locked_session_to_the_next_client() {
        let mut s = Server::new(config(|c| {
            c.pooler = Pooler::Transaction;
            c.tokens = true;
        }));
        let (c1, c2) = (s.connect(CLIENT1), s.connect(CLIENT2));
        assert_eq!(granted(&s.lock(CLIENT1, c1, 1)), Some((1, Some(1))));
        // client2's statement runs on the server session that took the lock.
        let step = s.lock(CLIENT2, c2, 1);
        assert!(step.event(events::GRANTED).is_some());
        assert_eq!(granted(&step), Some((2, Some(2))));
        assert_eq!(s.pg.sessions(), 1, "one server session serves both");
        // client1's unlock ends its own hold; client2 still holds the lock.
        assert!(s.unlock(CLIENT1, c1, 1).event(events::RELEASED).is_some());
        assert_eq!(s.pg.holder(), Some(1));
    }

    #[test]
    fn transaction_pooling_keeps_an_open_transaction_on_its_own_session() {
        let mut s = Server::new(config(|c| {
            c.pooler = Pooler::Transaction;
            c.in_transaction = true;
        }));
        let (c1, c2) = (s.connect(CLIENT1), s.connect(CLIENT2));
        assert!(granted(&s.lock(CLIENT1, c1, 1)).is_some());
        assert_eq!(s.lock(CLIENT2, c2, 1).sends[0].1, Msg::Denied { req: 1 });
        assert_eq!(s.pg.sessions(), 2);
        // COMMIT: the session goes back to the pool, unlocked.
        s.unlock(CLIENT1, c1, 1);
        assert!(granted(&s.lock(CLIENT2, c2, 2)).is_some());
    }

    #[test]
    fn a_crash_frees_the_lock_and_the_sequence_never_goes_back() {
        let mut s = Server::new(config(|c| c.tokens = true));
        let c1 = s.connect(CLIENT1);
        assert_eq!(granted(&s.lock(CLIENT1, c1, 1)), Some((1, Some(1))));
        s.pg.on_crash();
        // Back up, it says the lock is gone.
        let step = s.h.start(&mut s.pg);
        assert_eq!(reason(&step).as_deref(), Some("restart"));
        // The old connection is gone; a new one locks at once, with a token
        // past everything the sequence had logged.
        let step = s.lock(CLIENT1, c1, 2);
        assert_eq!(
            step.sends[0].1,
            Msg::design(SessionMsg::SessionExpired { session: c1 })
        );
        let c2 = s.connect(CLIENT2);
        assert_ne!(c2, c1, "a new connection, a new id");
        let (lease, token) = granted(&s.lock(CLIENT2, c2, 1)).unwrap();
        assert_eq!(lease, 2);
        assert_eq!(token, Some(2 + SEQ_LOG_VALS));
    }
}
