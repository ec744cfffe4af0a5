//! The seam a lock client is written against, so that the same code runs in
//! production on tokio and under test in fencesim.
//!
//! A lock client's bugs live in its timing: when it believes its lease ends,
//! how it retries, what it does while a renewal is late. To test that logic
//! rather than a rewrite of it, write it as a function generic over an
//! [`Env`] (time, sleep, timeout, spawn, randomness) and the services it
//! talks to ([`LockService`], [`Storage`]). In production it gets
//! [`TokioEnv`] (feature `tokio`) and clients of the real services; in
//! fencesim it gets the node's environment, whose time is the node's own
//! clock (skewed, drifting, paused by the faults of the scenario) and whose
//! services are simulated over fencesim's network.
//!
//! ```
//! use std::time::Duration;
//! use fencesim_env::{Env, LockService, Storage, StorageError};
//!
//! /// Figure 9-6's client: take the lock, work, write with the token.
//! async fn write_once<E: Env, L: LockService, S: Storage>(
//!     env: &E,
//!     lock: &L,
//!     storage: &S,
//! ) -> Result<(), StorageError> {
//!     let lease = loop {
//!         match lock.acquire().await {
//!             Ok(lease) => break lease,
//!             Err(_) => env.sleep(Duration::from_millis(100)).await,
//!         }
//!     };
//!     env.sleep(Duration::from_secs(1)).await; // the work
//!     let written = storage.put("x", 1, lease.token).await;
//!     let _ = lock.release(&lease).await;
//!     written
//! }
//! ```
//!
//! The environment is not `Send`: a lock client's tasks run on one thread
//! (tokio's `LocalSet` in production, the node in fencesim), which is what
//! makes a simulated run reproducible.
//!
//! Beside the lock and the storage, the seam speaks the services a lock
//! client is built on, as wide as their clients: [`Etcd`] (leases, locks
//! and their revisions), [`Redis`] (`SET NX PX`, the token counter and the
//! compare scripts), [`Sql`] (the application's `UPDATE` with bound
//! parameters) and [`ObjectStore`] (conditional object writes).
//! fencesim's simulated clients implement them, and so do the production
//! adapters of the features `etcd` (on `etcd-client`), `redis` (on
//! `redis`), `postgres` (on `tokio-postgres`) and `object-store` (on
//! `object_store`). The etcd and Redis adapters also give a [`Storage`]
//! (the fenced write on the real server), the PostgreSQL one a
//! [`LockService`] (a lease in a row).

#![deny(missing_docs)]

use std::fmt;
use std::future::Future;
use std::time::Duration;

mod services;
mod sync;
#[cfg(feature = "tokio")]
mod tokio_env;

#[cfg(feature = "etcd")]
pub mod etcd;
#[cfg(feature = "object-store")]
pub mod object_store;
#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(feature = "redis")]
pub mod redis;

pub use services::{
    Etcd, EtcdCompare, EtcdCompareOp, EtcdError, EtcdKeyValue, EtcdLease, EtcdLock, EtcdOp,
    EtcdOpResponse, EtcdTarget, EtcdTxn, EtcdTxnResponse, ObjectStore, ObjectStoreError,
    PutCondition, Redis, RedisError, RedisSet, Sql, SqlError, SqlTransaction, SqlUpdate,
    StoredObject,
};
pub use sync::{select, Either, Signal};

#[cfg(feature = "tokio")]
pub use tokio_env::TokioEnv;

/// Where a lock client runs: its clocks, its timers, its tasks and its
/// randomness.
pub trait Env: Clone + 'static {
    /// The monotonic clock: time since the environment started, never going
    /// back. In fencesim, the node's monotonic clock (drift and rate changes
    /// apply).
    fn now(&self) -> Duration;

    /// The wall clock, in nanoseconds since the Unix epoch (in fencesim,
    /// since the run's start, with the node's skew and jumps): it can go
    /// back.
    fn wall_ns(&self) -> i64;

    /// Waits `duration` on the monotonic clock.
    fn sleep(&self, duration: Duration) -> impl Future<Output = ()>;

    /// Runs `future` for at most `duration` on the monotonic clock.
    fn timeout<F: Future>(
        &self,
        duration: Duration,
        future: F,
    ) -> impl Future<Output = Result<F::Output, Elapsed>>;

    /// Runs `future` as a task of its own beside the caller's (a renewal
    /// loop beside the work). It ends with the program, or in fencesim with
    /// the node's crash.
    fn spawn<F: Future<Output = ()> + 'static>(&self, future: F);

    /// A random number: in fencesim from the run's seed, in production from
    /// wherever the environment takes it.
    fn random_u64(&self) -> u64;

    /// Tells the simulation what the client now believes (see [`Probe`]).
    /// Outside the simulation it does nothing.
    fn probe(&self, probe: Probe) {
        let _ = probe;
    }

    /// A random duration in `[0, max)`: jitter for retries.
    fn jitter(&self, max: Duration) -> Duration {
        let nanos = max.as_nanos().min(u64::MAX as u128) as u64;
        if nanos == 0 {
            Duration::ZERO
        } else {
            Duration::from_nanos(self.random_u64() % nanos)
        }
    }
}

/// [`Env::timeout`]'s error: the time ran out first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Elapsed;

impl fmt::Display for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("deadline has elapsed")
    }
}

impl std::error::Error for Elapsed {}

/// A grant of the lock, as the lock service made it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    /// The service's id of this grant.
    pub id: u64,
    /// The fencing token, larger for every later grant; `None` from a lock
    /// that hands out none.
    pub token: Option<u64>,
    /// How long the service promised to keep it, from when it was asked
    /// for (renewals extend it).
    pub ttl: Duration,
}

/// Why a lock request failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LockError {
    /// Someone else holds the lock.
    Held,
    /// The lease is gone: it expired, or was taken over.
    Lost,
    /// No answer in time (the service is down, slow or cut off).
    Unavailable,
}

impl fmt::Display for LockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LockError::Held => "the lock is held by another client",
            LockError::Lost => "the lease is gone",
            LockError::Unavailable => "the lock service did not answer",
        })
    }
}

impl std::error::Error for LockError {}

/// Why a storage request failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StorageError {
    /// The storage refused the write (its token is older than one it has
    /// accepted, or its precondition failed).
    Rejected(String),
    /// No answer in time.
    Unavailable,
}

impl fmt::Display for StorageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StorageError::Rejected(why) => write!(f, "the storage rejected the write: {why}"),
            StorageError::Unavailable => f.write_str("the storage did not answer"),
        }
    }
}

impl std::error::Error for StorageError {}

/// A lock service with leases and fencing tokens, as a client sees it.
pub trait LockService {
    /// Asks for the lock once: a lease, or why not.
    fn acquire(&self) -> impl Future<Output = Result<Lease, LockError>>;

    /// Extends `lease`: the TTL it now has from when it was asked.
    fn keep_alive(&self, lease: &Lease) -> impl Future<Output = Result<Duration, LockError>>;

    /// Gives `lease` up.
    fn release(&self, lease: &Lease) -> impl Future<Output = Result<(), LockError>>;
}

/// A key-value storage that may check fencing tokens, as a client sees it.
pub trait Storage {
    /// Writes `value` to `key`, carrying `token` (the writer's lease's).
    fn put(
        &self,
        key: &str,
        value: i64,
        token: Option<u64>,
    ) -> impl Future<Output = Result<(), StorageError>>;

    /// Reads `key`: its value and its version (0 and 0 if never written).
    fn get(&self, key: &str) -> impl Future<Output = Result<(i64, u64), StorageError>>;
}

/// What a write does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteOp {
    /// Sets the value.
    Put,
    /// Adds to the value read before.
    Increment,
    /// Carries only a token, so that the storage learns it: not a data write.
    Fence,
}

impl WriteOp {
    /// The name the journal gives it (`put`, `increment`, `fence`).
    pub fn as_str(self) -> &'static str {
        match self {
            WriteOp::Put => "put",
            WriteOp::Increment => "increment",
            WriteOp::Fence => "fence",
        }
    }
}

/// A lock client's account of what it believes and does, for the
/// simulation's oracle: the same events fencesim's own clients journal. The
/// simulated services journal the probes of what they do (a grant returned
/// is `Acquired`, a write sent `Wrote`, its answer `Acked`, a release
/// `Released`); a client's own decisions are its to report (`Checked` or
/// `Lapsed` when it checks its lease on its clock, `Lost` when it gives up a
/// lease it was told is gone). In production [`Env::probe`] drops them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Probe {
    /// It now believes it holds the lock, under this grant.
    Acquired {
        /// The lock's id of the grant.
        lease: u64,
        /// Its fencing token, if the lock hands them out.
        token: Option<u64>,
        /// How long the lock promised it.
        ttl: Duration,
    },
    /// The lock said no.
    Denied,
    /// It was told its lease is gone, and gives the round up unwritten.
    Lost,
    /// Its own clock says its lease has `remaining` left; it writes next.
    Checked {
        /// The lease.
        lease: u64,
        /// Time left by its clock.
        remaining: Duration,
    },
    /// Its own clock says its lease ran out `overdue` ago; it does not write.
    Lapsed {
        /// The lease.
        lease: u64,
        /// How long ago, by its clock.
        overdue: Duration,
    },
    /// The lock extended its lease for `ttl` from when it asked, `asked_ago`
    /// before now on its clock.
    Renewed {
        /// The lease.
        lease: u64,
        /// The new TTL.
        ttl: Duration,
        /// How long ago it asked.
        asked_ago: Duration,
    },
    /// A read was answered.
    Read {
        /// The value.
        value: i64,
        /// Its version.
        version: u64,
    },
    /// It sent write `write` (unique in the run) under its current grant.
    Wrote {
        /// The write's id.
        write: String,
        /// The token it carries.
        token: Option<u64>,
        /// The value written (or added).
        value: i64,
        /// What it does.
        op: WriteOp,
    },
    /// It sent a token-only write right after acquiring.
    Fenced {
        /// The write's id.
        write: String,
        /// The token.
        token: u64,
    },
    /// The storage answered write `write`.
    Acked {
        /// The write's id.
        write: String,
        /// Whether it was applied.
        ok: bool,
        /// What the write did.
        op: WriteOp,
    },
    /// It gave the lock up: it no longer believes it holds it.
    Released {
        /// The lease.
        lease: u64,
    },
}

impl Probe {
    /// The journal's name for it (`acquired`, `wrote`, …).
    pub fn kind(&self) -> &'static str {
        match self {
            Probe::Acquired { .. } => "acquired",
            Probe::Denied => "denied",
            Probe::Lost => "lost",
            Probe::Checked { .. } => "checked",
            Probe::Lapsed { .. } => "lapsed",
            Probe::Renewed { .. } => "renewed",
            Probe::Read { .. } => "read",
            Probe::Wrote { .. } => "wrote",
            Probe::Fenced { .. } => "fenced",
            Probe::Acked { .. } => "acked",
            Probe::Released { .. } => "released",
        }
    }
}
