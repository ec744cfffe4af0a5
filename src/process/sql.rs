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

use fencesim_env::{SqlError, SqlUpdate};
use sim::process::Handle;

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

/// A connection to the `sql` storage on a storage node.
pub struct Pool {
    storage: SimStorage,
}

impl Pool {
    /// Connects to the storage node called `storage`; each call waits at
    /// most `timeout` for its answer.
    ///
    /// # Panics
    /// If there is no node of that name.
    pub fn connect(handle: &Handle<Msg>, storage: &str, timeout: Duration) -> Pool {
        Pool {
            storage: SimStorage::new(handle, storage, timeout),
        }
    }

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
