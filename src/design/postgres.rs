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
//! answers [`Msg::Denied`](crate::protocol::Msg::Denied) and the client
//! retries after its `retry`. Within one session the lock is **re-entrant**:
//! a second lock by the same session succeeds at once and needs a second
//! unlock.
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
//! use fencesim::design::session::SessionMsg;
//! use fencesim::protocol::Msg;
//! use sim::testing::Harness;
//!
//! let mut server = PgServer::new(PostgresConfig { tokens: true, ..PostgresConfig::default() });
//! let mut h = Harness::new(&["lock", "client1"], 0);
//! let step = h.message(&mut server, 1, Msg::design(SessionMsg::OpenSession { req: 1 }));
//! let opened = step.sends[0].1.as_design();
//! assert!(matches!(opened, Some(SessionMsg::SessionOpened { session: 1, .. })));
//! let acquire = SessionMsg::SessionAcquire { session: 1, req: 1 };
//! let step = h.message(&mut server, 1, Msg::design(acquire));
//! assert!(matches!(step.sends[0].1, Msg::Granted { token: Some(1), .. }));
//! ```

mod client;
mod server;

use std::time::Duration;

use crate::design::catalog::{KeyKind, MAX_DURATION, MIN_INTERVAL};
use crate::design::config::key;
use crate::protocol::Payload;

pub use client::{PgClient, PgTimer, RETRANSMIT};
pub use server::PgServer;

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

crate::design_choice! {
    /// How clients reach the server.
    pub enum Pooler {
        /// Each client connection is a server session.
        None = "none",
        /// PgBouncer session pooling: a server connection per connected client.
        Session = "session",
        /// PgBouncer transaction pooling: a server connection per transaction.
        Transaction = "transaction",
    }
}

crate::lock_design! {
    pub struct Postgres as POSTGRES = "postgres",
        "PostgreSQL session-level advisory lock: held by a server session, released when the server \
        ends it (keepalive, idle timeouts, crash); nextval tokens, PgBouncer pooling";
    #[derive(Eq)]
    pub struct PostgresConfig {
        tcp_keepalives_idle: Duration = key::duration(KEEPALIVE_SECONDS, Duration::ZERO),
            "silence before the server's first keepalive probe; 0s: the OS default (Linux: 2h)";
        tcp_keepalives_interval: Duration = key::duration(KEEPALIVE_SECONDS, Duration::ZERO),
            "time between unanswered probes; 0s: the OS default (Linux: 75s)";
        tcp_keepalives_count: u64 = key::integer(0, 100, 0),
            "unanswered probes that end the connection and its session; 0: the OS default (Linux: 9)";
        idle_session_timeout: Duration = key::duration(TIMEOUT, Duration::ZERO),
            "a session idle outside a transaction this long is terminated; 0s: disabled";
        idle_in_transaction_session_timeout: Duration = key::duration(TIMEOUT, Duration::ZERO),
            "a session idle inside a transaction this long is terminated; 0s: disabled";
        in_transaction: bool = key::flag(false),
            "the client holds the lock inside BEGIN … COMMIT (the in-transaction timeout applies)";
        pooler: Pooler = Pooler::key(Pooler::None),
            "PgBouncer between clients and server: none, session or transaction pooling";
        tokens: bool = key::tokens(false), "each grant takes nextval of a sequence as its fencing token";
        first_token: u64 = key::first_token(), "the sequence's START value";
    }
    server(config, _index) => Box::new(PgServer::new(config.clone()));
    client(_config, lock_nodes) => Box::new(PgClient::new(lock_nodes[0].clone()));
}

impl PostgresConfig {
    /// Silence before the first keepalive probe, the OS default resolved.
    pub fn keepalive_idle(&self) -> Duration {
        or_default(self.tcp_keepalives_idle, OS_KEEPALIVE_IDLE)
    }

    /// Time between probes, the OS default resolved.
    pub fn keepalive_interval(&self) -> Duration {
        or_default(self.tcp_keepalives_interval, OS_KEEPALIVE_INTERVAL)
    }

    /// Unanswered probes that end the connection, the OS default resolved.
    pub fn keepalive_count(&self) -> u64 {
        match self.tcp_keepalives_count {
            0 => OS_KEEPALIVE_COUNT,
            n => n,
        }
    }

    /// How long a connection may be silent before the keepalive ends it:
    /// `idle + interval × count`.
    pub fn keepalive_budget(&self) -> Duration {
        let probes = u32::try_from(self.keepalive_count()).unwrap_or(u32::MAX);
        self.keepalive_idle() + self.keepalive_interval() * probes
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

/// `d`, or `default` for zero.
fn or_default(d: Duration, default: Duration) -> Duration {
    if d.is_zero() {
        default
    } else {
        d
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
    /// The setting that ended it: the `reason` of the `expired` event of
    /// each lock the session held.
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
/// Everything else is the session designs' protocol
/// ([`SessionMsg::OpenSession`], [`SessionMsg::SessionAcquire`],
/// [`SessionMsg::SessionRelease`]) and the shared one ([`Msg::Renew`]).
///
/// [`Msg::Design`]: crate::protocol::Msg::Design
/// [`Msg::Renew`]: crate::protocol::Msg::Renew
/// [`SessionMsg::OpenSession`]: crate::design::session::SessionMsg::OpenSession
/// [`SessionMsg::SessionAcquire`]: crate::design::session::SessionMsg::SessionAcquire
/// [`SessionMsg::SessionRelease`]: crate::design::session::SessionMsg::SessionRelease
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
