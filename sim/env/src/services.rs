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

/// etcd's lease and lock API, as `etcd-client` calls it.
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
pub trait Sql {
    /// Runs the update statement with `update`'s parameters bound: the
    /// number of rows it changed (0: its `WHERE` refused the write).
    fn execute(&self, update: &SqlUpdate) -> impl Future<Output = Result<u64, SqlError>>;

    /// The row of `key`: its value and how many writes changed it (0 and 0
    /// for a key never written).
    fn fetch_value(&self, key: &str) -> impl Future<Output = Result<(i64, u64), SqlError>>;
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
