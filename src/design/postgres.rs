//! `postgres`: a PostgreSQL session-level advisory lock
//! (`pg_try_advisory_lock(key)` … `pg_advisory_unlock(key)`), one key.
//!
//! The lock belongs to a server **session** (a backend, behind one client
//! connection), not to the client process. It is released when the client
//! unlocks, or when the server ends the session, whatever the client
//! believes. What ends a session here is what ends it in PostgreSQL:
//!
//! - **TCP keepalive** (`tcp_keepalives_idle`, `_interval`, `_count`): after
//!   `idle` without a packet from the client, the server's kernel probes
//!   every `interval`; after `count` unanswered probes the connection is
//!   dead and the backend exits. `0` takes the operating system's default,
//!   as PostgreSQL does (Linux: 7200 s, 75 s, 9 probes: over two hours).
//! - **`idle_session_timeout`** (PostgreSQL 14+): a session idle outside a
//!   transaction for that long is terminated (`FATAL: terminating connection
//!   due to idle-session timeout`). A client holding the lock while it works
//!   sends no statement, so it is idle: the timeout bounds its critical
//!   section, paused or not.
//! - **`idle_in_transaction_session_timeout`**: the same for a session idle
//!   inside an open transaction (`in_transaction = true`: the client takes
//!   the lock after `BEGIN` and unlocks before `COMMIT`).
//! - **A crash** of the server (the `lock` node): advisory locks live in
//!   shared memory and are not WAL-logged, so every lock is gone.
//!
//! **How `pause` maps.** A node is a machine, and a `pause` stops all of
//! it: the client's kernel answers no keepalive probe either, so a pause
//! reads as a VM freeze (or a partition, which the `partition` fault
//! models as such). A process-only stop such as a GC pause, whose kernel
//! still answers probes, keeps the TCP connection alive: only an idle
//! timeout ends that session. With the operating system's keepalive
//! defaults (over two hours) a pause of seconds or minutes never reaches
//! the keepalive, so the two readings agree, and the bundled scenarios that
//! pause a client rely on `idle_session_timeout`; the one that ends a
//! session by keepalive cuts the client off with a `partition`.
//!
//! The server sends its `FATAL` notice before closing an idle session, but
//! a client learns of it only on its next call on the connection (libpq
//! reads the socket when it sends a statement): a renewal (`renew = true`:
//! a `SELECT 1` that also keeps the session busy), or its unlock. A paused
//! holder wakes up believing it still holds the lock. The grant's `ttl`,
//! what a client may believe, is the shortest silence that can end its
//! session: the idle timeout that applies while it holds the lock, else the
//! keepalive's `idle + interval × count`.
//!
//! Acquisition is `pg_try_advisory_lock`: a lock held by another session
//! answers [`Msg::Denied`] and the client retries after its `retry`. Within
//! one session the lock is **re-entrant**: a second lock by the same session
//! succeeds at once and needs a second unlock.
//!
//! **Tokens** (`tokens = true`): each grant takes `nextval` of a sequence,
//! which the client passes to its protected `UPDATE … WHERE lock_token <=
//! :token`. Sequences are WAL-logged, 32 values ahead of the last one
//! handed out, so after a crash the sequence goes on past them: a token
//! never goes back (it skips).
//!
//! **Pooler** (`pooler`): `none` connects each client to its own backend.
//! `session` is PgBouncer in session pooling: a client keeps one server
//! connection for as long as it is connected, and its `server_reset_query`
//! (`DISCARD ALL`) unlocks everything when it lets it go, so it behaves as
//! `none`. `transaction` is PgBouncer in transaction pooling: each
//! transaction (each statement, in autocommit) runs on a server connection
//! taken from the pool, and goes back to the pool after it. PgBouncer reuses
//! its most recently used connection first (LIFO); statements take no
//! simulated time, so every client's statements run on one backend: the
//! backend that took the lock for client1 runs client2's
//! `pg_try_advisory_lock` too, which succeeds because advisory locks are
//! re-entrant within a session. Both clients hold the lock. PgBouncer's
//! documentation lists session-level advisory locks among the features
//! transaction pooling breaks. With `in_transaction = true` the client keeps
//! its server connection from `BEGIN` to `COMMIT`, and the others get
//! another backend, which is refused. With a pooler, the `lock` node is
//! PgBouncer and PostgreSQL together, the keepalive is PgBouncer's own
//! towards its clients (the same keys), and a server connection that
//! outlives its client keeps its locks.
//!
//! What survives a crash: the sequence (as logged) and the counters that
//! keep connection and lease ids unique (TCP connections are new ones).
//!
//! ```
//! use fencesim::design::postgres::{PgServer, PostgresConfig};
//! use fencesim::protocol::Msg;
//! use sim::testing::Harness;
//!
//! let mut server = PgServer::new(PostgresConfig { tokens: true, ..PostgresConfig::default() });
//! let mut h = Harness::new(&["lock", "client1"], 0);
//! let step = h.message(&mut server, 1, Msg::OpenSession { req: 1 });
//! assert!(matches!(step.sends[0].1, Msg::SessionOpened { session: 1, .. }));
//! let step = h.message(&mut server, 1, Msg::SessionAcquire { session: 1, req: 1 });
//! assert!(matches!(step.sends[0].1, Msg::Granted { token: Some(1), .. }));
//! ```

use std::collections::BTreeMap;
use std::time::Duration;

use sim::{Actor, Context, NodeId, TimerId};

use crate::design::catalog::{
    DesignInfo, KeyKind, KeySpec, Role, Value, FIRST_TOKEN, MAX_DURATION, MIN_INTERVAL,
};
use crate::design::grants::Grants;
use crate::design::lock_client::{Grant, LockClient, LockEvent, PROTOCOL_TAG};
use crate::design::node_named;
use crate::design::params::Params;
use crate::design::LockDesign;
use crate::protocol::{Msg, Payload};

/// The `postgres` design as the registry knows it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Postgres;

impl LockDesign for Postgres {
    fn info(&self) -> DesignInfo {
        POSTGRES
    }

    fn server(&self, p: &Params, _index: usize) -> Box<dyn Actor<Msg>> {
        Box::new(PgServer::new(PostgresConfig::from_params(p)))
    }

    fn client(&self, _p: &Params, lock_nodes: &[String]) -> Box<dyn LockClient> {
        Box::new(PgClient::new(lock_nodes[0].clone()))
    }
}

/// Linux's `net.ipv4.tcp_keepalive_time`: what `tcp_keepalives_idle = 0`
/// means.
pub const OS_KEEPALIVE_IDLE: Duration = Duration::from_secs(7200);
/// Linux's `net.ipv4.tcp_keepalive_intvl`.
pub const OS_KEEPALIVE_INTERVAL: Duration = Duration::from_secs(75);
/// Linux's `net.ipv4.tcp_keepalive_probes`.
pub const OS_KEEPALIVE_COUNT: u64 = 9;
/// How far ahead of the last value handed out a sequence is WAL-logged
/// (PostgreSQL's `SEQ_LOG_VALS`).
pub const SEQ_LOG_VALS: u64 = 32;

const KEEPALIVE_SECONDS: KeyKind = KeyKind::DurationIn {
    min: Duration::from_secs(1),
    max: MAX_DURATION,
    zero: Some("the OS default"),
    below: None,
};

const TIMEOUT: KeyKind = KeyKind::DurationIn {
    min: MIN_INTERVAL,
    max: MAX_DURATION,
    zero: Some("disabled"),
    below: None,
};

/// Lock service: PostgreSQL's session-level advisory lock.
pub const POSTGRES: DesignInfo = DesignInfo {
    name: "postgres",
    role: Role::Lock,
    summary: "PostgreSQL session-level advisory lock: held by a server session, released when the server \
              ends it (keepalive, idle timeouts, crash); nextval tokens, PgBouncer pooling",
    keys: &[
        KeySpec {
            name: "tcp_keepalives_idle",
            kind: KEEPALIVE_SECONDS,
            default: Some(Value::Duration(Duration::ZERO)),
            doc: "silence before the server's first keepalive probe; 0s: the OS default (Linux: 2h)",
        },
        KeySpec {
            name: "tcp_keepalives_interval",
            kind: KEEPALIVE_SECONDS,
            default: Some(Value::Duration(Duration::ZERO)),
            doc: "time between unanswered probes; 0s: the OS default (Linux: 75s)",
        },
        KeySpec {
            name: "tcp_keepalives_count",
            kind: KeyKind::U64 { min: 0, max: 100 },
            default: Some(Value::U64(0)),
            doc: "unanswered probes that end the connection and its session; 0: the OS default (Linux: 9)",
        },
        KeySpec {
            name: "idle_session_timeout",
            kind: TIMEOUT,
            default: Some(Value::Duration(Duration::ZERO)),
            doc: "a session idle outside a transaction this long is terminated; 0s: disabled",
        },
        KeySpec {
            name: "idle_in_transaction_session_timeout",
            kind: TIMEOUT,
            default: Some(Value::Duration(Duration::ZERO)),
            doc: "a session idle inside a transaction this long is terminated; 0s: disabled",
        },
        KeySpec {
            name: "in_transaction",
            kind: KeyKind::Bool,
            default: Some(Value::Bool(false)),
            doc: "the client holds the lock inside BEGIN … COMMIT (the in-transaction timeout applies)",
        },
        KeySpec {
            name: "pooler",
            kind: KeyKind::Choice(&["none", "session", "transaction"]),
            default: Some(Value::Str("none")),
            doc: "PgBouncer between clients and server: none, session or transaction pooling",
        },
        KeySpec {
            name: "tokens",
            kind: KeyKind::Bool,
            default: Some(Value::Bool(false)),
            doc: "each grant takes nextval of a sequence as its fencing token",
        },
        KeySpec {
            name: "first_token",
            kind: FIRST_TOKEN,
            default: Some(Value::U64(1)),
            doc: "the sequence's START value",
        },
    ],
};

/// How clients reach the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pooler {
    /// Each client connection is a server session.
    None,
    /// PgBouncer session pooling: a server connection per connected client.
    Session,
    /// PgBouncer transaction pooling: a server connection per transaction.
    Transaction,
}

/// Settings of the `postgres` design, operating-system defaults resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PostgresConfig {
    /// Silence before the first keepalive probe.
    pub keepalive_idle: Duration,
    /// Time between probes.
    pub keepalive_interval: Duration,
    /// Unanswered probes that end the connection.
    pub keepalive_count: u64,
    /// `idle_session_timeout`; zero: disabled.
    pub idle_session_timeout: Duration,
    /// `idle_in_transaction_session_timeout`; zero: disabled.
    pub idle_in_transaction_session_timeout: Duration,
    /// The client holds the lock inside an open transaction.
    pub in_transaction: bool,
    /// The pooler between clients and server.
    pub pooler: Pooler,
    /// Grants carry a `nextval` token.
    pub tokens: bool,
    /// The sequence's first value.
    pub first_token: u64,
}

impl PostgresConfig {
    /// The settings [`POSTGRES`]'s keys describe.
    pub fn from_params(p: &Params) -> Self {
        let or = |d: Duration, default: Duration| if d.is_zero() { default } else { d };
        PostgresConfig {
            keepalive_idle: or(p.duration("tcp_keepalives_idle"), OS_KEEPALIVE_IDLE),
            keepalive_interval: or(p.duration("tcp_keepalives_interval"), OS_KEEPALIVE_INTERVAL),
            keepalive_count: match p.u64("tcp_keepalives_count") {
                0 => OS_KEEPALIVE_COUNT,
                n => n,
            },
            idle_session_timeout: p.duration("idle_session_timeout"),
            idle_in_transaction_session_timeout: p.duration("idle_in_transaction_session_timeout"),
            in_transaction: p.bool("in_transaction"),
            pooler: match p.str("pooler") {
                "session" => Pooler::Session,
                "transaction" => Pooler::Transaction,
                _ => Pooler::None,
            },
            tokens: p.bool("tokens"),
            first_token: p.u64("first_token"),
        }
    }

    /// How long a connection may be silent before the keepalive ends it:
    /// `idle + interval × count`.
    pub fn keepalive_budget(&self) -> Duration {
        let probes = u32::try_from(self.keepalive_count).unwrap_or(u32::MAX);
        self.keepalive_idle + self.keepalive_interval * probes
    }

    /// The idle timeout that applies to a session holding the lock (zero:
    /// none).
    pub fn holding_idle_timeout(&self) -> Duration {
        if self.in_transaction {
            self.idle_in_transaction_session_timeout
        } else {
            self.idle_session_timeout
        }
    }

    /// What a holder may believe: the shortest silence that can end its
    /// session, the grant's `ttl`.
    pub fn belief(&self) -> Duration {
        match self.holding_idle_timeout() {
            d if d.is_zero() => self.keepalive_budget(),
            d => d.min(self.keepalive_budget()),
        }
    }
}

impl Default for PostgresConfig {
    /// [`POSTGRES`]'s declared defaults.
    fn default() -> Self {
        PostgresConfig::from_params(&POSTGRES.defaults())
    }
}

/// Why the server ended a session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndReason {
    /// `idle_session_timeout`.
    IdleSession,
    /// `idle_in_transaction_session_timeout`.
    IdleInTransaction,
    /// The keepalive found the client unreachable.
    Keepalive,
}

impl EndReason {
    /// The setting that ended it, as the journal's `reason`.
    pub fn as_str(self) -> &'static str {
        match self {
            EndReason::IdleSession => "idle_session_timeout",
            EndReason::IdleInTransaction => "idle_in_transaction_session_timeout",
            EndReason::Keepalive => "keepalive",
        }
    }
}

/// The design's own messages, carried in [`Msg::Design`]: the TCP layer's
/// keepalive and the server's notice before it closes a connection.
/// Everything else is the common session protocol ([`Msg::OpenSession`],
/// [`Msg::SessionAcquire`], [`Msg::SessionRelease`], [`Msg::Renew`]).
#[derive(Clone, Debug, PartialEq)]
pub enum PgWire {
    /// Server's kernel → client's kernel: a keepalive probe on connection
    /// `conn`.
    Probe {
        /// The connection probed.
        conn: u64,
    },
    /// Client's kernel → server: the probe's acknowledgement.
    ProbeAck {
        /// The connection probed.
        conn: u64,
    },
    /// Server → client: `FATAL: terminating connection`, then the close.
    Terminated {
        /// The connection closed.
        conn: u64,
        /// Why.
        reason: EndReason,
    },
}

impl Payload for PgWire {
    fn summary(&self) -> String {
        match self {
            PgWire::Probe { conn } => format!("keepalive probe conn={conn}"),
            PgWire::ProbeAck { conn } => format!("keepalive ack conn={conn}"),
            PgWire::Terminated { conn, reason } => {
                format!("FATAL terminating conn={conn} ({})", reason.as_str())
            }
        }
    }
}

/// Journal event of the `postgres` server: a server session ended, with
/// `session` (the backend), `client` (whose connection it served, if any)
/// and `reason` (`idle_session_timeout`,
/// `idle_in_transaction_session_timeout` or `keepalive`). Its locks end
/// with it, each journaled `expired`.
pub const SESSION_ENDED: &str = "session_ended";

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
            grants: Grants::new(),
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
        let keepalive = ctx.set_timer(self.config.keepalive_idle, KEEPALIVE_TAG + conn);
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
        let opened = Msg::SessionOpened {
            req,
            session: conn,
            ttl,
        };
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
            self.config.keepalive_idle,
            self.config.keepalive_interval,
            self.config.keepalive_count,
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
        let client = backend
            .conn
            .and_then(|c| self.conns.get(&c).map(|c| c.node))
            .or_else(|| backend.holds.first().map(|h| h.node))
            .map(|n| ctx.name_of(n).to_owned());
        sim::emit!(
            SESSION_ENDED,
            session = b,
            client = client.as_deref(),
            reason = reason.as_str()
        );
        for hold in backend.holds {
            self.grants.expire(ctx, hold.node, hold.lease);
        }
    }
}

impl Actor<Msg> for PgServer {
    fn on_start(&mut self, _ctx: &mut Context<'_, Msg>) {}

    fn on_message(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, msg: Msg) {
        match msg {
            Msg::OpenSession { req } => self.open(ctx, from, req),
            Msg::SessionAcquire { session, .. } | Msg::SessionRelease { session, .. }
                if !self.live(from, session) =>
            {
                // A connection the server closed (or never had): the client
                // finds the socket gone.
                ctx.send(from, Msg::SessionExpired { session });
            }
            Msg::SessionAcquire { session, req } => {
                self.heard(ctx, session);
                self.lock(ctx, from, session, req);
            }
            Msg::SessionRelease { session, lease } => {
                self.heard(ctx, session);
                self.unlock(ctx, from, session, lease);
            }
            Msg::Renew { lease, req } => self.renew(ctx, from, lease, req),
            msg => {
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

/// The client half: one connection (reopened when the server closed it),
/// `pg_try_advisory_lock` on it, `pg_advisory_unlock`, `SELECT 1` as a
/// renewal, and a kernel that answers keepalive probes.
///
/// An acquire given up unanswered is sent again with the same request id
/// on the same connection, so the server does not lock twice; an unlock is
/// sent again every [`RETRANSMIT`] until answered, and a connection request
/// given up is made anew: the simulated network loses what TCP would
/// retransmit, and a lost unlock must not strand the lock. The client
/// learns that the server closed its connection only on its next call (as
/// libpq does): a held lock is reported lost when a renewal is refused, not
/// when the `FATAL` arrives.
#[derive(Debug)]
pub struct PgClient {
    server: String,
    req: u64,
    opens: u64,
    /// The open connection.
    conn: Option<u64>,
    /// The `OpenSession` request in flight.
    connecting: Option<u64>,
    /// The lock request in flight.
    waiting: Option<u64>,
    /// A lock request given up before any answer.
    unanswered: Option<u64>,
    /// (connection, lease) held.
    held: Option<(u64, u64)>,
    /// The unlock awaiting its answer: (connection, lease).
    unlocking: Option<(u64, u64)>,
    retransmit: Option<TimerId>,
    renewals: u64,
    renewing: Option<u64>,
}

/// How often a client sends an unanswered unlock again.
pub const RETRANSMIT: Duration = Duration::from_secs(1);

impl PgClient {
    /// Talks to the server node called `server`.
    pub fn new(server: impl Into<String>) -> Self {
        PgClient {
            server: server.into(),
            req: 0,
            opens: 0,
            conn: None,
            connecting: None,
            waiting: None,
            unanswered: None,
            held: None,
            unlocking: None,
            retransmit: None,
            renewals: 0,
            renewing: None,
        }
    }

    fn send_unlock(&mut self, ctx: &mut Context<'_, Msg>, session: u64, lease: u64) {
        self.unlocking = Some((session, lease));
        let server = node_named(ctx, &self.server);
        ctx.send(server, Msg::SessionRelease { session, lease });
        if let Some(t) = self.retransmit.take() {
            ctx.cancel_timer(t);
        }
        self.retransmit = Some(ctx.set_timer(RETRANSMIT, PROTOCOL_TAG));
    }

    fn unlock_answered(&mut self, ctx: &mut Context<'_, Msg>, session: u64, lease: Option<u64>) {
        let answered = self
            .unlocking
            .is_some_and(|(s, l)| s == session && lease.map_or(true, |lease| lease == l));
        if answered {
            self.unlocking = None;
            if let Some(t) = self.retransmit.take() {
                ctx.cancel_timer(t);
            }
        }
    }

    fn send_lock(&mut self, ctx: &mut Context<'_, Msg>) {
        let server = node_named(ctx, &self.server);
        match (self.conn, self.waiting) {
            (Some(session), Some(req)) => ctx.send(server, Msg::SessionAcquire { session, req }),
            (None, Some(_)) if self.connecting.is_none() => {
                self.opens += 1;
                self.connecting = Some(self.opens);
                ctx.send(server, Msg::OpenSession { req: self.opens });
            }
            _ => {}
        }
    }
}

impl LockClient for PgClient {
    fn acquire(&mut self, ctx: &mut Context<'_, Msg>) {
        let req = self.unanswered.take().unwrap_or_else(|| {
            self.req += 1;
            self.req
        });
        self.waiting = Some(req);
        // A connection request given up (or lost) is made anew.
        self.connecting = None;
        self.send_lock(ctx);
    }

    fn release(&mut self, ctx: &mut Context<'_, Msg>) {
        self.renewing = None;
        if let Some(req) = self.waiting.take() {
            self.unanswered = Some(req);
        }
        if let Some((session, lease)) = self.held.take() {
            self.send_unlock(ctx, session, lease);
        }
    }

    fn on_message(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, msg: &Msg) -> LockEvent {
        match *msg {
            Msg::SessionOpened { req, session, .. } if self.connecting == Some(req) => {
                self.connecting = None;
                self.conn = Some(session);
                self.send_lock(ctx);
            }
            Msg::Granted {
                req,
                lease,
                token,
                ttl,
            } => match self.conn {
                Some(conn) if self.waiting == Some(req) => {
                    self.waiting = None;
                    self.held = Some((conn, lease));
                    return LockEvent::Acquired(Grant::new(lease, token, ttl));
                }
                // A lock for a request given up: unlock it.
                Some(session) if self.held.map(|(_, l)| l) != Some(lease) => {
                    ctx.send(from, Msg::SessionRelease { session, lease });
                }
                _ => {}
            },
            Msg::Denied { req } if self.waiting == Some(req) => {
                self.waiting = None;
                return LockEvent::Denied;
            }
            Msg::ReleaseAck { lease } => {
                if let Some((session, _)) = self.unlocking {
                    self.unlock_answered(ctx, session, Some(lease));
                }
            }
            Msg::SessionExpired { session } => {
                self.unlock_answered(ctx, session, None);
                self.closed(ctx, session);
            }
            Msg::RenewReply {
                lease,
                req,
                ok,
                ttl,
            } if self.held.is_some_and(|(_, l)| l == lease) && self.renewing == Some(req) => {
                self.renewing = None;
                if ok {
                    return LockEvent::Renewed(ttl);
                }
                self.held = None;
                return LockEvent::Lost;
            }
            _ => match msg.as_design::<PgWire>() {
                // The kernel answers for any socket still open.
                Some(&PgWire::Probe { conn }) if self.conn == Some(conn) => {
                    ctx.send(from, Msg::design(PgWire::ProbeAck { conn }));
                }
                Some(&PgWire::Terminated { conn, .. }) => self.closed(ctx, conn),
                _ => {}
            },
        }
        LockEvent::Nothing
    }

    fn on_timer(&mut self, ctx: &mut Context<'_, Msg>, _tag: u64) -> LockEvent {
        self.retransmit = None;
        if let Some((session, lease)) = self.unlocking {
            self.send_unlock(ctx, session, lease);
        }
        LockEvent::Nothing
    }

    fn renew(&mut self, ctx: &mut Context<'_, Msg>) -> bool {
        // Asked even when the connection is known to be closed: the
        // server's refusal is how the client hears the lock is gone.
        let Some((_, lease)) = self.held else {
            return false;
        };
        self.renewals += 1;
        let req = self.renewals;
        self.renewing = Some(req);
        let server = node_named(ctx, &self.server);
        ctx.send(server, Msg::Renew { lease, req });
        true
    }

    fn on_crash(&mut self) {
        self.conn = None;
        self.connecting = None;
        self.waiting = None;
        self.unanswered = None;
        self.held = None;
        self.unlocking = None;
        self.retransmit = None;
        self.renewing = None;
    }
}

impl PgClient {
    /// The server closed connection `conn` (or never had it): a lock
    /// request in progress goes again on a new connection, under a new id.
    fn closed(&mut self, ctx: &mut Context<'_, Msg>, conn: u64) {
        if self.conn != Some(conn) {
            return;
        }
        self.conn = None;
        self.unanswered = None;
        if self.waiting.is_some() {
            self.req += 1;
            self.waiting = Some(self.req);
            self.send_lock(ctx);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::design::session_client::testing::Host;
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
            let step = self.message(client, Msg::OpenSession { req: 1 });
            match step.sends[..] {
                [(to, Msg::SessionOpened { session, .. })] if to == client => session,
                ref other => panic!("{other:?}"),
            }
        }

        fn lock(&mut self, client: NodeId, session: u64, req: u64) -> Step<Msg> {
            self.message(client, Msg::SessionAcquire { session, req })
        }

        fn unlock(&mut self, client: NodeId, session: u64, lease: u64) -> Step<Msg> {
            self.message(client, Msg::SessionRelease { session, lease })
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
        let fields = step.event(SESSION_ENDED)?;
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
            c.keepalive_idle = 10 * SECOND;
            c.keepalive_interval = 2 * SECOND;
            c.keepalive_count = 3;
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
            c.keepalive_idle = 10 * SECOND;
            c.keepalive_interval = 2 * SECOND;
            c.keepalive_count = 3;
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
            assert!(step.sends.is_empty() && step.event(SESSION_ENDED).is_none());
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
        assert!(step.event(SESSION_ENDED).is_none(), "idle 4 s only");
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
        assert_eq!(step.sends[0].1, Msg::SessionExpired { session: conn });
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
        // The old connection is gone; a new one locks at once, with a token
        // past everything the sequence had logged.
        let step = s.lock(CLIENT1, c1, 2);
        assert_eq!(step.sends[0].1, Msg::SessionExpired { session: c1 });
        let c2 = s.connect(CLIENT2);
        assert_ne!(c2, c1, "a new connection, a new id");
        let (lease, token) = granted(&s.lock(CLIENT2, c2, 1)).unwrap();
        assert_eq!(lease, 2);
        assert_eq!(token, Some(2 + SEQ_LOG_VALS));
    }

    #[test]
    fn the_client_answers_probes_and_hears_of_a_lost_lock_on_its_next_call() {
        const LOCK: NodeId = 1;
        let mut h = Harness::new(&["client1", "lock"], 0);
        let mut c = Host::new(PgClient::new("lock"));
        assert_eq!(c.acquire(&mut h), [(LOCK, Msg::OpenSession { req: 1 })]);
        let opened = Msg::SessionOpened {
            req: 1,
            session: 4,
            ttl: 10 * SECOND,
        };
        let (_, sends) = c.message(&mut h, LOCK, opened);
        assert_eq!(sends, [(LOCK, Msg::SessionAcquire { session: 4, req: 1 })]);
        let grant = Msg::Granted {
            req: 1,
            lease: 7,
            token: None,
            ttl: 10 * SECOND,
        };
        assert!(matches!(
            c.message(&mut h, LOCK, grant).0,
            LockEvent::Acquired(_)
        ));
        let probe = Msg::design(PgWire::Probe { conn: 4 });
        let ack = Msg::design(PgWire::ProbeAck { conn: 4 });
        assert_eq!(c.message(&mut h, LOCK, probe).1, [(LOCK, ack)]);
        // The FATAL arrives: nothing to tell the workload yet.
        let fatal = PgWire::Terminated {
            conn: 4,
            reason: EndReason::IdleSession,
        };
        assert_eq!(
            c.message(&mut h, LOCK, Msg::design(fatal)).0,
            LockEvent::Nothing
        );
        // A closed socket answers no probe.
        let probe = Msg::design(PgWire::Probe { conn: 4 });
        assert!(c.message(&mut h, LOCK, probe).1.is_empty());
        // Its next call, a renewal, is refused: now it knows.
        assert!(c.renew(&mut h));
        let refused = Msg::RenewReply {
            lease: 7,
            req: 1,
            ok: false,
            ttl: Duration::ZERO,
        };
        assert_eq!(c.message(&mut h, LOCK, refused).0, LockEvent::Lost);
        // The next acquire opens a new connection.
        assert_eq!(c.acquire(&mut h), [(LOCK, Msg::OpenSession { req: 2 })]);
    }
}
