//! A simulated SQL client of the `sql` storage (see [`crate::design::sql`]),
//! whose calls read like sqlx's `execute`: the number of rows the statement
//! changed, where 0 means its `WHERE` (`AND lock_token <= :token`) refused
//! the write.
//!
//! ```ignore
//! let db = Pool::connect(&h, "storage", Duration::from_secs(5));
//! let done = db
//!     .execute(update("x").bind_value(7).bind_token(lease.token))
//!     .await?;
//! if done.rows_affected() == 0 {
//!     // The fence: a newer token is in the row.
//! }
//! let row = db.fetch_value("x").await?;
//! ```
//!
//! What differs from the crate, and why: the statement is not the client's
//! to send. The `sql` storage takes no SQL over fencesim's protocol, only a
//! write ([`Msg::Write`]) and a read ([`Msg::Read`]); for each write it runs
//! the scenario's `[storage] update` with the write's fields bound as
//! `:key`, `:value`, `:token` and `:version`. So [`Pool::execute`] takes an
//! [`Update`] that binds those parameters rather than a query string, and
//! [`Pool::fetch_value`] is the storage's own `SELECT value FROM kv WHERE key
//! = ?`. The storage's answer says only whether the statement changed a
//! row, so [`QueryResult::rows_affected`] is 0 or 1 (a statement that
//! changed several rows answers 1), and an error the database raised while
//! running it (a constraint) answers 0 as well: the storage journals it as
//! a rejection with the error's text. [`Update::journal_as_increment`] has
//! no counterpart in sqlx: it tells the journal the value was computed from
//! a read (the oracle counts increments for lost updates).
//!
//! It journals as [`SimStorage`] does, through it: `read` when a read is
//! answered, `wrote` before an update is sent, `acked` with whether it
//! changed a row when it is answered. Each request waits for the answer to
//! its own id: a late or duplicated answer to another request is never
//! taken for it.

use std::fmt;
use std::time::Duration;

use std::cell::Cell;

use fencesim_env::{SqlError, SqlUpdate};
use sim::process::Handle;
use sim::NodeId;

use crate::design::sql_session::{SqlAnswer, SqlCall};

use crate::process::SimStorage;
use crate::protocol::{Msg, Op};

/// What a call can fail with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// No answer within the pool's timeout.
    Timeout,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the statement timed out")
    }
}

impl std::error::Error for Error {}

/// The scenario's `update` statement, with its parameters bound: the write
/// [`Pool::execute`] sends.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use = "an update is run by `Pool::execute`"]
pub struct Update {
    key: String,
    value: i64,
    token: Option<u64>,
    version: Option<u64>,
    op: Op,
}

/// An update of `key`'s row: `:key` is bound, `:value` is 0 and `:token`
/// and `:version` are NULL until bound.
pub fn update(key: &str) -> Update {
    Update {
        key: key.to_owned(),
        value: 0,
        token: None,
        version: None,
        op: Op::Put,
    }
}

impl Update {
    /// Binds `:value`.
    pub fn bind_value(mut self, value: i64) -> Self {
        self.value = value;
        self
    }

    /// Binds `:token`, the lock's fencing token (NULL for `None`).
    pub fn bind_token(mut self, token: Option<u64>) -> Self {
        self.token = token;
        self
    }

    /// Binds `:version`, the version a read saw ([`Row::version`]).
    pub fn bind_version(mut self, version: u64) -> Self {
        self.version = Some(version);
        self
    }

    /// Journals the update as an increment: its value is what a read of the
    /// key saw, plus one, so the oracle counts it when it looks for lost
    /// updates. Only the journal sees it; the statement is the same.
    pub fn journal_as_increment(mut self) -> Self {
        self.op = Op::Increment;
        self
    }
}

/// `execute`'s answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueryResult {
    rows_affected: u64,
}

impl QueryResult {
    /// The rows the statement changed: 1 if it changed any, 0 if its
    /// `WHERE` matched none (or the database refused it).
    pub fn rows_affected(&self) -> u64 {
        self.rows_affected
    }
}

/// A row read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    value: i64,
    version: u64,
}

impl Row {
    /// The row's `value` (0 for a key never written).
    pub fn value(&self) -> i64 {
        self.value
    }

    /// How many writes the storage has applied to the key: what
    /// [`Update::bind_version`] binds.
    pub fn version(&self) -> u64 {
        self.version
    }
}

/// Connection numbers and request ids, on the node's disk: unique in the
/// run across crashes.
const CONNECTIONS: &str = "sql/connections";
const REQUESTS: &str = "sql/requests";

/// A connection to the `sql` storage on a storage node.
pub struct Pool {
    storage: SimStorage,
    handle: Handle<Msg>,
    server: NodeId,
    conn: u64,
    timeout: Duration,
}

impl Pool {
    /// Connects to the storage node called `storage`; each call waits at
    /// most `timeout` for its answer.
    ///
    /// # Panics
    /// If there is no node of that name.
    pub fn connect(handle: &Handle<Msg>, storage: &str, timeout: Duration) -> Pool {
        let server = handle
            .node(storage)
            .unwrap_or_else(|| panic!("no storage node called {storage:?}"));
        Pool {
            storage: SimStorage::new(handle, storage, timeout),
            handle: handle.clone(),
            server,
            conn: handle.disk().next_u64(CONNECTIONS),
            timeout,
        }
    }

    /// Sends a session call made for a fresh request id and waits for its
    /// answer: within the pool's timeout, or (`wait`) as long as it takes.
    async fn call(
        &self,
        wait: bool,
        call: impl FnOnce(u64, u64) -> SqlCall,
    ) -> Result<SqlAnswer, SqlError> {
        let req = self.handle.disk().next_u64(REQUESTS);
        self.handle
            .send(self.server, Msg::design(call(self.conn, req)));
        let wanted = move |m: &Msg| matches!(m.as_design(), Some(SqlCall::Reply { req: r, .. }) if *r == req);
        let recv = self.handle.recv_from(self.server, wanted);
        let (_, msg) = if wait {
            recv.await
        } else {
            self.handle
                .timeout(self.timeout, recv)
                .await
                .map_err(|_| SqlError::Timeout)?
        };
        match msg.as_design() {
            Some(SqlCall::Reply { answer, .. }) => answer.clone().map_err(SqlError::Database),
            _ => unreachable!("only the call's answer is taken"),
        }
    }

    /// `BEGIN`: a transaction on this connection. While it is open, other
    /// connections' requests wait for it (SQLite's one writer); the server
    /// rolls it back after [`IDLE_IN_TRANSACTION`] without a call. Dropped
    /// open, it is rolled back (the `ROLLBACK` sent, its answer not awaited),
    /// as sqlx does.
    ///
    /// [`IDLE_IN_TRANSACTION`]: crate::design::sql_session::IDLE_IN_TRANSACTION
    pub async fn begin(&self) -> Result<Transaction<'_>, SqlError> {
        self.call(false, |conn, req| SqlCall::Begin { conn, req })
            .await?;
        Ok(Transaction {
            pool: self,
            open: Cell::new(true),
        })
    }

    /// `pg_advisory_lock(key)` (`wait`) or `pg_try_advisory_lock(key)`, or
    /// their transaction forms (`xact`): whether it is held.
    async fn lock(&self, key: i64, wait: bool, xact: bool) -> Result<bool, SqlError> {
        let answer = self
            .call(wait, |conn, req| SqlCall::Lock {
                conn,
                req,
                key,
                wait,
                xact,
            })
            .await?;
        Ok(matches!(answer, SqlAnswer::Done | SqlAnswer::Bool(true)))
    }

    /// `pg_advisory_lock(key)`: waits until this connection's session
    /// holds it.
    pub async fn advisory_lock(&self, key: i64) -> Result<(), SqlError> {
        self.lock(key, true, false).await.map(drop)
    }

    /// `pg_try_advisory_lock(key)`.
    pub async fn try_advisory_lock(&self, key: i64) -> Result<bool, SqlError> {
        self.lock(key, false, false).await
    }

    /// `pg_advisory_unlock(key)`: whether the session held it.
    pub async fn advisory_unlock(&self, key: i64) -> Result<bool, SqlError> {
        let answer = self
            .call(false, |conn, req| SqlCall::Unlock { conn, req, key })
            .await?;
        Ok(answer == SqlAnswer::Bool(true))
    }
}

/// A transaction [`Pool::begin`] opened (sqlx's `Transaction`): the
/// update statement and reads inside it, then `commit` or `rollback`.
/// Its statements are not journaled as writes: the oracle does not judge
/// them (see [`crate::design::sql_session`]).
pub struct Transaction<'a> {
    pool: &'a Pool,
    open: Cell<bool>,
}

impl Transaction<'_> {
    /// The update statement with `update`'s parameters, inside the
    /// transaction: the rows it changed.
    pub async fn execute(&self, update: &SqlUpdate) -> Result<u64, SqlError> {
        let answer = self
            .pool
            .call(false, |conn, req| SqlCall::Execute {
                conn,
                req,
                key: update.key.clone(),
                value: update.value,
                token: update.token,
                version: update.version,
            })
            .await?;
        Ok(match answer {
            SqlAnswer::Rows(n) => n,
            _ => 0,
        })
    }

    /// The row of `key` as the transaction sees it.
    pub async fn fetch_value(&self, key: &str) -> Result<Row, SqlError> {
        let answer = self
            .pool
            .call(false, |conn, req| SqlCall::Fetch {
                conn,
                req,
                key: key.to_owned(),
            })
            .await?;
        Ok(match answer {
            SqlAnswer::Row(value, version) => Row { value, version },
            _ => Row {
                value: 0,
                version: 0,
            },
        })
    }

    /// `pg_advisory_xact_lock(key)`: waits until the transaction holds it.
    pub async fn advisory_xact_lock(&self, key: i64) -> Result<(), SqlError> {
        self.pool.lock(key, true, true).await.map(drop)
    }

    /// `pg_try_advisory_xact_lock(key)`.
    pub async fn try_advisory_xact_lock(&self, key: i64) -> Result<bool, SqlError> {
        self.pool.lock(key, false, true).await
    }

    /// `COMMIT`.
    pub async fn commit(self) -> Result<(), SqlError> {
        self.open.set(false);
        self.pool
            .call(false, |conn, req| SqlCall::Commit { conn, req })
            .await
            .map(drop)
    }

    /// `ROLLBACK`.
    pub async fn rollback(self) -> Result<(), SqlError> {
        self.open.set(false);
        self.pool
            .call(false, |conn, req| SqlCall::Rollback { conn, req })
            .await
            .map(drop)
    }
}

impl Drop for Transaction<'_> {
    fn drop(&mut self) {
        if self.open.get() {
            let req = self.pool.handle.disk().next_u64(REQUESTS);
            let conn = self.pool.conn;
            self.pool.handle.send(
                self.pool.server,
                Msg::design(SqlCall::Rollback { conn, req }),
            );
        }
    }
}

impl fencesim_env::SqlTransaction for Transaction<'_> {
    async fn execute(&self, update: &SqlUpdate) -> Result<u64, SqlError> {
        Transaction::execute(self, update).await
    }

    async fn fetch_value(&self, key: &str) -> Result<(i64, u64), SqlError> {
        let row = Transaction::fetch_value(self, key).await?;
        Ok((row.value, row.version))
    }

    async fn advisory_xact_lock(&self, key: i64) -> Result<(), SqlError> {
        Transaction::advisory_xact_lock(self, key).await
    }

    async fn try_advisory_xact_lock(&self, key: i64) -> Result<bool, SqlError> {
        Transaction::try_advisory_xact_lock(self, key).await
    }

    async fn commit(self) -> Result<(), SqlError> {
        Transaction::commit(self).await
    }

    async fn rollback(self) -> Result<(), SqlError> {
        Transaction::rollback(self).await
    }
}

impl Pool {
    /// Runs the scenario's `update` statement with `update`'s parameters:
    /// how many rows it changed.
    pub async fn execute(&self, update: Update) -> Result<QueryResult, Error> {
        // The storage client gives a request up only when it is unanswered.
        let changed = self
            .storage
            .write(
                &update.key,
                update.value,
                update.token,
                update.op,
                update.version,
            )
            .await
            .map_err(|_| Error::Timeout)?;
        Ok(QueryResult {
            rows_affected: u64::from(changed),
        })
    }

    /// `SELECT value FROM kv WHERE key = ?`, with the key's version.
    pub async fn fetch_value(&self, key: &str) -> Result<Row, Error> {
        let (value, version) = self.storage.read(key).await.map_err(|_| Error::Timeout)?;
        Ok(Row { value, version })
    }
}

/// The seam's [`fencesim_env::Sql`]: the scenario's `update` run with the
/// update's parameters, so a function generic over it runs here and
/// against a real PostgreSQL (`fencesim_env::postgres::PgSql`, given the
/// same statement).
impl fencesim_env::Sql for Pool {
    type Transaction<'a> = Transaction<'a>;

    async fn begin(&self) -> Result<Transaction<'_>, SqlError> {
        Pool::begin(self).await
    }

    async fn advisory_lock(&self, key: i64) -> Result<(), SqlError> {
        Pool::advisory_lock(self, key).await
    }

    async fn try_advisory_lock(&self, key: i64) -> Result<bool, SqlError> {
        Pool::try_advisory_lock(self, key).await
    }

    async fn advisory_unlock(&self, key: i64) -> Result<bool, SqlError> {
        Pool::advisory_unlock(self, key).await
    }

    async fn execute(&self, sql: &SqlUpdate) -> Result<u64, SqlError> {
        let mut bound = update(&sql.key).bind_value(sql.value).bind_token(sql.token);
        if let Some(version) = sql.version {
            bound = bound.bind_version(version);
        }
        let done = Pool::execute(self, bound)
            .await
            .map_err(|Error::Timeout| SqlError::Timeout)?;
        Ok(done.rows_affected())
    }

    async fn fetch_value(&self, key: &str) -> Result<(i64, u64), SqlError> {
        let row = Pool::fetch_value(self, key)
            .await
            .map_err(|Error::Timeout| SqlError::Timeout)?;
        Ok((row.value(), row.version()))
    }
}
