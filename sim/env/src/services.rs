//! The services a lock client speaks to, as wide as the clients that speak
//! them: etcd's leases and locks ([`Etcd`]), a Redis lock's `SET NX PX`,
//! its token counter and its compare scripts ([`Redis`]), a SQL database's
//! update statement with bound parameters ([`Sql`]), and an object store's
//! conditional writes ([`ObjectStore`]).
//!
//! Each trait is implemented twice: by fencesim's simulated client
//! (`fencesim::process::{etcd, redis, sql, object_store}`) and by a
//! production adapter on the crate a program already uses (features
//! `etcd`, `redis`, `postgres` and `object-store` of this crate). A function generic over one of them runs
//! against a real server and, unchanged, under fencesim's faults. The
//! errors are the real clients' cases a lock client has to tell apart: a
//! lease the server no longer knows, a refused conditional write (an
//! answer, not an error: `Ok(false)`, `Ok(None)` or 0 rows), no answer in
//! time.

use std::fmt;
use std::future::Future;
use std::time::Duration;

/// Why an etcd call failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EtcdError {
    /// `etcdserver: requested lease not found`: the lease expired or was
    /// revoked.
    LeaseNotFound,
    /// No answer in time (gRPC's `DeadlineExceeded`, or the client's own
    /// timeout).
    Timeout,
    /// Anything else the client or the server said, in its words.
    Other(String),
}

impl fmt::Display for EtcdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EtcdError::LeaseNotFound => f.write_str("etcdserver: requested lease not found"),
            EtcdError::Timeout => f.write_str("deadline exceeded"),
            EtcdError::Other(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for EtcdError {}

/// A lease etcd granted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EtcdLease {
    /// The lease's id.
    pub id: i64,
    /// The time to live the server gave it.
    pub ttl: Duration,
}

/// A lock etcd granted: the key that holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EtcdLock {
    /// The lock key (`name/<lease in hex>`); `unlock` deletes it.
    pub key: Vec<u8>,
    /// The lease the key lives on.
    pub lease: i64,
    /// The key's create revision: the fencing token, larger for every later
    /// holder. 0 from a simulated server with `tokens = false`; a real
    /// server always gives one.
    pub revision: i64,
}

/// A key and its value as etcd keeps them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EtcdKeyValue {
    /// The key.
    pub key: Vec<u8>,
    /// Its value.
    pub value: Vec<u8>,
    /// The store's revision when the key was created (since its latest
    /// deletion): a lock key's is the lock's fencing token.
    pub create_revision: i64,
    /// The store's revision of the key's latest change.
    pub mod_revision: i64,
    /// How many times the key was put since it was created (1 after the
    /// first put).
    pub version: i64,
    /// The lease the key lives on (0: none).
    pub lease: i64,
}

/// What a compare of a transaction compares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EtcdTarget {
    /// The key's create revision (0 for a missing key).
    CreateRevision(i64),
    /// The key's mod revision (0 for a missing key).
    ModRevision(i64),
    /// The key's version (0 for a missing key).
    Version(i64),
    /// The key's value (a missing key compares false, whatever the op).
    Value(Vec<u8>),
}

/// How a compare compares: the key's field `op` the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EtcdCompareOp {
    /// `==`.
    Equal,
    /// `!=`.
    NotEqual,
    /// `>`.
    Greater,
    /// `<`.
    Less,
}

/// One compare of a transaction: `key`'s field `op` `target`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EtcdCompare {
    /// The key compared.
    pub key: Vec<u8>,
    /// How.
    pub op: EtcdCompareOp,
    /// With what.
    pub target: EtcdTarget,
}

impl EtcdCompare {
    /// `create_revision(key) op revision`: with `Equal` and a lock key's
    /// revision, "the lock key is still the one I was granted".
    pub fn create_revision(key: impl Into<Vec<u8>>, op: EtcdCompareOp, revision: i64) -> Self {
        EtcdCompare {
            key: key.into(),
            op,
            target: EtcdTarget::CreateRevision(revision),
        }
    }

    /// `mod_revision(key) op revision`.
    pub fn mod_revision(key: impl Into<Vec<u8>>, op: EtcdCompareOp, revision: i64) -> Self {
        EtcdCompare {
            key: key.into(),
            op,
            target: EtcdTarget::ModRevision(revision),
        }
    }

    /// `version(key) op version`.
    pub fn version(key: impl Into<Vec<u8>>, op: EtcdCompareOp, version: i64) -> Self {
        EtcdCompare {
            key: key.into(),
            op,
            target: EtcdTarget::Version(version),
        }
    }

    /// `value(key) op value` (bytes compared as etcd does, lexically).
    pub fn value(key: impl Into<Vec<u8>>, op: EtcdCompareOp, value: impl Into<Vec<u8>>) -> Self {
        EtcdCompare {
            key: key.into(),
            op,
            target: EtcdTarget::Value(value.into()),
        }
    }
}

/// One operation of a transaction's branch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EtcdOp {
    /// `Put`: the key's value, on lease `lease` (0: none).
    Put {
        /// The key.
        key: Vec<u8>,
        /// Its new value.
        value: Vec<u8>,
        /// The lease it lives on (0: none).
        lease: i64,
    },
    /// `DeleteRange` of one key.
    Delete {
        /// The key.
        key: Vec<u8>,
    },
    /// `Range` of one key.
    Get {
        /// The key.
        key: Vec<u8>,
    },
}

impl EtcdOp {
    /// A put of `value` under `key`, on no lease.
    pub fn put(key: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>) -> Self {
        EtcdOp::Put {
            key: key.into(),
            value: value.into(),
            lease: 0,
        }
    }

    /// A put of `value` under `key`, which goes with lease `lease`.
    pub fn put_on_lease(key: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>, lease: i64) -> Self {
        EtcdOp::Put {
            key: key.into(),
            value: value.into(),
            lease,
        }
    }

    /// A delete of `key`.
    pub fn delete(key: impl Into<Vec<u8>>) -> Self {
        EtcdOp::Delete { key: key.into() }
    }

    /// A get of `key`.
    pub fn get(key: impl Into<Vec<u8>>) -> Self {
        EtcdOp::Get { key: key.into() }
    }
}

/// A transaction: if every compare holds, the `then` operations, else the
/// `otherwise` ones, all at one revision.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EtcdTxn {
    /// The compares (all must hold).
    pub compares: Vec<EtcdCompare>,
    /// The operations when they hold.
    pub then: Vec<EtcdOp>,
    /// The operations when one does not.
    pub otherwise: Vec<EtcdOp>,
}

impl EtcdTxn {
    /// An empty transaction (no compare holds vacuously: `then` runs).
    pub fn new() -> Self {
        EtcdTxn::default()
    }

    /// Adds compares (etcd-client's `when`).
    pub fn when(mut self, compares: impl IntoIterator<Item = EtcdCompare>) -> Self {
        self.compares.extend(compares);
        self
    }

    /// Adds operations to run when the compares hold (`and_then`).
    pub fn and_then(mut self, ops: impl IntoIterator<Item = EtcdOp>) -> Self {
        self.then.extend(ops);
        self
    }

    /// Adds operations to run when one does not (`or_else`).
    pub fn or_else(mut self, ops: impl IntoIterator<Item = EtcdOp>) -> Self {
        self.otherwise.extend(ops);
        self
    }
}

/// What one operation of the branch that ran answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EtcdOpResponse {
    /// A put was applied.
    Put,
    /// A delete removed this many keys (0 or 1).
    Delete {
        /// How many.
        deleted: i64,
    },
    /// A get found the key, or not.
    Get(Option<EtcdKeyValue>),
}

/// A transaction's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EtcdTxnResponse {
    /// Whether the compares held (the `then` branch ran).
    pub succeeded: bool,
    /// The store's revision after it.
    pub revision: i64,
    /// One answer per operation of the branch that ran.
    pub responses: Vec<EtcdOpResponse>,
}

/// etcd's lease and lock API and its key-value API (puts on leases,
/// revisions, transactions with compares), as `etcd-client` calls them.
pub trait Etcd {
    /// `LeaseGrant`: a lease of `ttl`, in whole seconds (0: the server's
    /// own TTL, where it has one).
    fn lease_grant(&self, ttl: Duration) -> impl Future<Output = Result<EtcdLease, EtcdError>>;

    /// One `LeaseKeepAlive` and its answer: the lease's time to live from
    /// now. [`EtcdError::LeaseNotFound`] when the server answers that the
    /// lease is gone.
    fn lease_keep_alive(&self, lease: i64) -> impl Future<Output = Result<Duration, EtcdError>>;

    /// `Lock`: puts the key `name/<lease>` on `lease` and waits until it is
    /// the oldest under `name`, however long that takes (bound it with
    /// [`crate::Env::timeout`]).
    fn lock(&self, name: &str, lease: i64) -> impl Future<Output = Result<EtcdLock, EtcdError>>;

    /// `Unlock`: deletes the lock's key; its lease lives on.
    fn unlock(&self, lock: &EtcdLock) -> impl Future<Output = Result<(), EtcdError>>;

    /// `LeaseRevoke`: ends the lease and deletes its keys.
    fn lease_revoke(&self, lease: i64) -> impl Future<Output = Result<(), EtcdError>>;

    /// `Txn`: `txn`'s compares, then one of its branches, at one revision.
    /// A put on a lease the server does not know is
    /// [`EtcdError::LeaseNotFound`] (nothing of the transaction applied).
    fn txn(&self, txn: &EtcdTxn) -> impl Future<Output = Result<EtcdTxnResponse, EtcdError>>;

    /// `Put` of `value` under `key`, on `lease` if given: the store's
    /// revision after it.
    fn put(
        &self,
        key: &[u8],
        value: &[u8],
        lease: Option<i64>,
    ) -> impl Future<Output = Result<i64, EtcdError>> {
        let op = EtcdOp::put_on_lease(key, value, lease.unwrap_or(0));
        async move { Ok(self.txn(&EtcdTxn::new().and_then([op])).await?.revision) }
    }

    /// `Range` of one key: it, with its revisions, or `None`.
    fn get(&self, key: &[u8]) -> impl Future<Output = Result<Option<EtcdKeyValue>, EtcdError>> {
        let op = EtcdOp::get(key);
        async move {
            let answer = self.txn(&EtcdTxn::new().and_then([op])).await?;
            Ok(match answer.responses.into_iter().next() {
                Some(EtcdOpResponse::Get(kv)) => kv,
                _ => None,
            })
        }
    }

    /// `DeleteRange` of one key: how many keys it deleted (0 or 1).
    fn delete(&self, key: &[u8]) -> impl Future<Output = Result<i64, EtcdError>> {
        let op = EtcdOp::delete(key);
        async move {
            let answer = self.txn(&EtcdTxn::new().and_then([op])).await?;
            Ok(match answer.responses.first() {
                Some(EtcdOpResponse::Delete { deleted }) => *deleted,
                _ => 0,
            })
        }
    }
}

/// Why a Redis command failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RedisError {
    /// No answer in time.
    Timeout,
    /// The connection was refused or dropped, in the client's words.
    Connection(String),
    /// Anything else the server said (a script error, a wrong type), in
    /// its words.
    Other(String),
}

impl fmt::Display for RedisError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RedisError::Timeout => f.write_str("response timed out"),
            RedisError::Connection(why) | RedisError::Other(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for RedisError {}

/// A successful `SET NX PX`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RedisSet {
    /// The value `INCR` of the lock's counter gave in the same step: the
    /// fencing token (`None` from a lock that keeps no counter).
    pub token: Option<u64>,
    /// The key's `PX`.
    pub ttl: Duration,
}

/// A lock on one Redis key, as the single-instance recipe takes it: `SET
/// key value NX PX` (with `INCR` of a counter in the same script, for a
/// token), the compare-and-`PEXPIRE` and compare-and-`DEL` scripts that
/// touch the key only while it holds the caller's value. The key's `PX` is
/// the connection's (the scenario's `[lock] ttl` in fencesim).
pub trait Redis {
    /// A value for the lock key no other client uses (a random one).
    fn random_value(&self) -> u64;

    /// `SET key value NX PX`, and `INCR` of the key's counter when it set:
    /// `Some` if the key was free and now holds `value`, `None` if another
    /// value holds it.
    fn set_nx_px(
        &self,
        key: &str,
        value: u64,
    ) -> impl Future<Output = Result<Option<RedisSet>, RedisError>>;

    /// The compare-and-`PEXPIRE` script: gives the key its full `PX` again
    /// if it still holds `value`. Whether it did.
    fn pexpire_if_eq(
        &self,
        key: &str,
        value: u64,
    ) -> impl Future<Output = Result<bool, RedisError>>;

    /// The compare-and-`DEL` script: deletes the key if it still holds
    /// `value`.
    fn del_if_eq(&self, key: &str, value: u64) -> impl Future<Output = Result<(), RedisError>>;

    /// `INCRBY key delta`: the counter's value after adding `delta` (a
    /// missing key counts from 0). A key that holds no integer is the
    /// server's error ([`RedisError::Other`]).
    fn incr_by(&self, key: &str, delta: i64) -> impl Future<Output = Result<i64, RedisError>>;

    /// `INCR key`: a fresh fencing token from a counter.
    fn incr(&self, key: &str) -> impl Future<Output = Result<i64, RedisError>> {
        self.incr_by(key, 1)
    }

    /// `GET key` as an integer: `None` for a missing key.
    fn get_i64(&self, key: &str) -> impl Future<Output = Result<Option<i64>, RedisError>>;

    /// The fenced-write script: sets `key` to `value` and `<key>:token` to
    /// `token` unless `<key>:token` holds a larger token, in one step.
    /// Whether it did (`false`: the compare refused a stale token).
    fn set_if_token(
        &self,
        key: &str,
        value: i64,
        token: u64,
    ) -> impl Future<Output = Result<bool, RedisError>>;
}

/// Why a SQL statement failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SqlError {
    /// No answer in time.
    Timeout,
    /// The database refused the statement (a constraint, a syntax error,
    /// a lost connection), in its words.
    Database(String),
}

impl fmt::Display for SqlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SqlError::Timeout => f.write_str("the statement timed out"),
            SqlError::Database(why) => write!(f, "the database refused the statement: {why}"),
        }
    }
}

impl std::error::Error for SqlError {}

/// The parameters of one run of the database's update statement:
/// `:key`, `:value`, `:token` (NULL for `None`) and `:version` (NULL for
/// `None`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqlUpdate {
    /// `:key`.
    pub key: String,
    /// `:value`.
    pub value: i64,
    /// `:token`, the writer's fencing token.
    pub token: Option<u64>,
    /// `:version`, the version a read saw.
    pub version: Option<u64>,
}

impl SqlUpdate {
    /// An update of `key` to `value`, carrying `token` and no version.
    pub fn new(key: &str, value: i64, token: Option<u64>) -> SqlUpdate {
        SqlUpdate {
            key: key.to_owned(),
            value,
            token,
            version: None,
        }
    }
}

/// A SQL database whose writes are one `UPDATE` statement with named
/// parameters (`:key`, `:value`, `:token`, `:version`), given to the
/// connection: the application's statement, whose `WHERE` is the fence
/// (`AND lock_token <= :token`) or is not. In fencesim the statement is
/// the scenario's `[storage] update`, run by SQLite; in production, the
/// adapter's, run by the real database.
///
/// Beside single statements, the connection opens transactions
/// ([`Sql::begin`]: the same statement and reads inside, then
/// [`SqlTransaction::commit`] or [`SqlTransaction::rollback`]) and takes
/// PostgreSQL's advisory locks: session locks ([`Sql::advisory_lock`],
/// [`Sql::try_advisory_lock`], [`Sql::advisory_unlock`]) and, inside a
/// transaction, transaction locks
/// ([`SqlTransaction::advisory_xact_lock`],
/// [`SqlTransaction::try_advisory_xact_lock`]) that its end releases.
pub trait Sql {
    /// An open transaction on this connection.
    type Transaction<'a>: SqlTransaction
    where
        Self: 'a;

    /// Runs the update statement with `update`'s parameters bound: the
    /// number of rows it changed (0: its `WHERE` refused the write).
    fn execute(&self, update: &SqlUpdate) -> impl Future<Output = Result<u64, SqlError>>;

    /// The row of `key`: its value and how many writes changed it (0 and 0
    /// for a key never written).
    fn fetch_value(&self, key: &str) -> impl Future<Output = Result<(i64, u64), SqlError>>;

    /// `BEGIN`: a transaction, whose statements are applied together at
    /// its commit or not at all. Commit it or roll it back: a transaction
    /// dropped open stays open on the connection until the server ends it.
    fn begin(&self) -> impl Future<Output = Result<Self::Transaction<'_>, SqlError>>;

    /// `SELECT pg_advisory_lock(key)`: waits until this session holds the
    /// lock `key`, however long that takes. Session locks are re-entrant:
    /// each lock needs its unlock. Bounding the wait with
    /// [`crate::Env::timeout`] gives the call up, not the request: the
    /// server may still grant it to the session later.
    fn advisory_lock(&self, key: i64) -> impl Future<Output = Result<(), SqlError>>;

    /// `SELECT pg_try_advisory_lock(key)`: whether this session now holds
    /// the lock `key` (`false`: another session does).
    fn try_advisory_lock(&self, key: i64) -> impl Future<Output = Result<bool, SqlError>>;

    /// `SELECT pg_advisory_unlock(key)`: releases one hold of `key`;
    /// `false` if this session did not hold it.
    fn advisory_unlock(&self, key: i64) -> impl Future<Output = Result<bool, SqlError>>;
}

/// A transaction [`Sql::begin`] opened.
pub trait SqlTransaction {
    /// The update statement inside the transaction: the rows it changed.
    fn execute(&self, update: &SqlUpdate) -> impl Future<Output = Result<u64, SqlError>>;

    /// The row of `key` as the transaction sees it (its own writes
    /// included).
    fn fetch_value(&self, key: &str) -> impl Future<Output = Result<(i64, u64), SqlError>>;

    /// `SELECT pg_advisory_xact_lock(key)`: waits until the transaction
    /// holds the lock `key`; its commit or rollback releases it.
    fn advisory_xact_lock(&self, key: i64) -> impl Future<Output = Result<(), SqlError>>;

    /// `SELECT pg_try_advisory_xact_lock(key)`: whether the transaction now
    /// holds the lock `key`.
    fn try_advisory_xact_lock(&self, key: i64) -> impl Future<Output = Result<bool, SqlError>>;

    /// `COMMIT`: its statements applied. An error (a timeout, a session
    /// the server ended) leaves them unapplied, or unknown after a timeout.
    fn commit(self) -> impl Future<Output = Result<(), SqlError>>;

    /// `ROLLBACK`: none of its statements applied.
    fn rollback(self) -> impl Future<Output = Result<(), SqlError>>;
}

/// Why an object-store call failed, named after S3's answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ObjectStoreError {
    /// `NoSuchKey`: a GET of a key that has no object.
    NotFound,
    /// `412 PreconditionFailed`: a PUT whose `If-Match` names an ETag the
    /// object no longer has, or whose `If-None-Match: *` finds an object.
    PreconditionFailed,
    /// No answer in time.
    Timeout,
    /// Anything else the client or the store said, in its words.
    Other(String),
}

impl fmt::Display for ObjectStoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ObjectStoreError::NotFound => f.write_str("NoSuchKey: the key has no object"),
            ObjectStoreError::PreconditionFailed => {
                f.write_str("412 PreconditionFailed: the PUT's precondition did not hold")
            }
            ObjectStoreError::Timeout => f.write_str("the request timed out"),
            ObjectStoreError::Other(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for ObjectStoreError {}

/// An object as a GET saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredObject {
    /// Its content: an integer.
    pub body: i64,
    /// Its ETag, as the store shows it: what [`PutCondition::IfMatch`]
    /// names.
    pub e_tag: String,
}

/// The precondition of a PUT.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PutCondition {
    /// None: the PUT overwrites whatever is there.
    Always,
    /// `If-Match: <ETag>`: applied only if the object still has this ETag
    /// (one a GET of this store gave).
    IfMatch(String),
    /// `If-None-Match: *`: applied only if the key has no object.
    IfNoneMatch,
}

/// An object store's conditional writes, as S3, GCS and Azure offer them:
/// a GET gives the object and its ETag, a PUT may be conditional on it.
/// The fencing token travels as metadata, which these stores keep and
/// never compare.
pub trait ObjectStore {
    /// `GetObject`: the object under `key`, or
    /// [`ObjectStoreError::NotFound`].
    fn get_object(&self, key: &str)
        -> impl Future<Output = Result<StoredObject, ObjectStoreError>>;

    /// `PutObject` of `body` under `key` if `condition` holds, with `token`
    /// as its `fencing-token` metadata.
    fn put_object(
        &self,
        key: &str,
        body: i64,
        condition: &PutCondition,
        token: Option<u64>,
    ) -> impl Future<Output = Result<(), ObjectStoreError>>;
}
