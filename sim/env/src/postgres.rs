//! PostgreSQL on `tokio-postgres` (feature `postgres`): the application's
//! update statement ([`PgSql`], the [`Sql`] trait) and a lease in a row
//! ([`PgLock`], the [`LockService`] trait).
//!
//! [`PgSql`] runs the statement fencesim's `sql` storage runs, with the
//! same named parameters (`:key`, `:value`, `:token`, `:version`, bound as
//! PostgreSQL's `$1`, `$2`, … in the order they first appear) on the same
//! table, `kv(key TEXT PRIMARY KEY, value BIGINT, lock_token BIGINT)`, to
//! which it adds a `version` column it keeps itself. Each write is one
//! transaction: the key's row inserted if missing (value 0, token 0), the
//! statement, and the version counted when the statement changed a row.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//! use fencesim_env::postgres::PgSql;
//! use fencesim_env::{Sql, SqlUpdate};
//!
//! let (client, connection) =
//!     tokio_postgres::connect("host=127.0.0.1 user=postgres", tokio_postgres::NoTls).await?;
//! tokio::spawn(connection);
//! let db = PgSql::new(
//!     client,
//!     "UPDATE kv SET value = :value, lock_token = :token WHERE key = :key AND lock_token <= :token",
//!     Duration::from_secs(1),
//! );
//! db.create_table().await?;
//! if db.execute(&SqlUpdate::new("x", 7, Some(34))).await? == 0 {
//!     // The fence: a newer token is in the row.
//! }
//! # Ok(()) }
//! ```

use std::future::Future;
use std::time::Duration;

use tokio_postgres::types::ToSql;
use tokio_postgres::Client;

use crate::{Lease, LockError, LockService, Sql, SqlError, SqlTransaction, SqlUpdate};

/// The parameters a statement may name, as fencesim's `sql` storage does.
const PARAMETERS: [&str; 4] = [":key", ":value", ":token", ":version"];

fn error(e: tokio_postgres::Error) -> SqlError {
    match e.as_db_error() {
        Some(db) => SqlError::Database(format!("{}: {}", db.code().code(), db.message())),
        None => SqlError::Database(e.to_string()),
    }
}

async fn within<T>(
    timeout: Duration,
    call: impl Future<Output = Result<T, tokio_postgres::Error>>,
) -> Result<T, SqlError> {
    match tokio::time::timeout(timeout, call).await {
        Ok(answer) => answer.map_err(error),
        Err(_) => Err(SqlError::Timeout),
    }
}

/// `statement` with its named parameters numbered (`:token` → `$2`, …),
/// and which parameter each number binds.
fn number_parameters(statement: &str) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(statement.len());
    let mut order: Vec<usize> = Vec::new();
    let bytes = statement.as_bytes();
    let mut i = 0;
    while i < statement.len() {
        let named = (bytes[i] == b':' && (i == 0 || bytes[i - 1] != b':'))
            .then(|| {
                PARAMETERS.iter().position(|p| {
                    statement[i..].starts_with(p)
                        && !bytes
                            .get(i + p.len())
                            .is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_')
                })
            })
            .flatten();
        match named {
            Some(p) => {
                let n = match order.iter().position(|&q| q == p) {
                    Some(n) => n,
                    None => {
                        order.push(p);
                        order.len() - 1
                    }
                };
                out.push_str(&format!("${}", n + 1));
                i += PARAMETERS[p].len();
            }
            None => {
                let c = statement[i..].chars().next().unwrap_or(' ');
                out.push(c);
                i += c.len_utf8();
            }
        }
    }
    (out, order)
}

fn integer(what: &str, n: Option<u64>) -> Result<Option<i64>, SqlError> {
    n.map(|n| {
        i64::try_from(n).map_err(|_| SqlError::Database(format!("{what} {n} is above i64::MAX")))
    })
    .transpose()
}

/// The application's update statement on a PostgreSQL connection.
pub struct PgSql {
    client: Client,
    statement: String,
    order: Vec<usize>,
    timeout: Duration,
}

impl PgSql {
    /// Runs `statement` (an `UPDATE` of `kv` naming `:key`, `:value`,
    /// `:token` and `:version` as it needs) for each write on `client`;
    /// every call waits at most `timeout`. After a timeout the connection's
    /// transaction may still be open: drop it.
    pub fn new(client: Client, statement: &str, timeout: Duration) -> PgSql {
        let (statement, order) = number_parameters(statement);
        PgSql {
            client,
            statement,
            order,
            timeout,
        }
    }

    /// Creates the table `kv` if it is missing.
    pub async fn create_table(&self) -> Result<(), SqlError> {
        within(
            self.timeout,
            self.client.batch_execute(
                "CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value BIGINT, \
                 lock_token BIGINT, version BIGINT NOT NULL DEFAULT 0)",
            ),
        )
        .await
    }

    /// The statement's parameters for `update`, in the order it numbers
    /// them.
    fn bound(&self, update: &SqlUpdate) -> Result<(Option<i64>, Option<i64>), SqlError> {
        Ok((
            integer("token", update.token)?,
            integer("version", update.version)?,
        ))
    }

    /// The row of `update.key` made if missing, the statement, the version
    /// counted: inside a transaction the caller opened.
    async fn update_in_transaction(&self, update: &SqlUpdate) -> Result<u64, SqlError> {
        let (token, version) = self.bound(update)?;
        let values: [&(dyn ToSql + Sync); 4] = [&update.key, &update.value, &token, &version];
        let params: Vec<&(dyn ToSql + Sync)> = self.order.iter().map(|&p| values[p]).collect();
        let c = &self.client;
        c.execute(
            "INSERT INTO kv (key, value, lock_token) VALUES ($1, 0, 0) ON CONFLICT (key) DO NOTHING",
            &[&update.key],
        )
        .await
        .map_err(error)?;
        let changed = c.execute(&self.statement, &params).await.map_err(error)?;
        if changed > 0 {
            c.execute(
                "UPDATE kv SET version = version + 1 WHERE key = $1",
                &[&update.key],
            )
            .await
            .map_err(error)?;
        }
        Ok(changed)
    }

    async fn update(&self, update: &SqlUpdate) -> Result<u64, SqlError> {
        self.bound(update)?;
        let c = &self.client;
        c.batch_execute("BEGIN").await.map_err(error)?;
        let changed = self.update_in_transaction(update).await?;
        c.batch_execute("COMMIT").await.map_err(error)?;
        Ok(changed)
    }

    async fn row(&self, key: &str) -> Result<(i64, u64), SqlError> {
        let row = within(
            self.timeout,
            self.client
                .query_opt("SELECT value, version FROM kv WHERE key = $1", &[&key]),
        )
        .await?;
        Ok(row.map_or((0, 0), |row| {
            let value: Option<i64> = row.get(0);
            let version: i64 = row.get(1);
            (value.unwrap_or(0), version.max(0) as u64)
        }))
    }

    /// `SELECT <function>($1)` answering a boolean, within the timeout.
    async fn boolean(&self, function: &str, key: i64) -> Result<bool, SqlError> {
        let row = within(
            self.timeout,
            self.client
                .query_one(&format!("SELECT {function}($1)"), &[&key]),
        )
        .await?;
        Ok(row.get(0))
    }

    /// `SELECT <function>($1)` that waits for a lock: no timeout of ours
    /// (dropping the call would leave the request running in the session).
    async fn wait_for(&self, function: &str, key: i64) -> Result<(), SqlError> {
        self.client
            .execute(&format!("SELECT {function}($1)"), &[&key])
            .await
            .map_err(error)?;
        Ok(())
    }
}

/// A transaction [`PgSql::begin`] opened on the connection: `COMMIT` or
/// `ROLLBACK` it. Dropped open, it stays open on the connection.
pub struct PgTransaction<'a> {
    sql: &'a PgSql,
}

impl SqlTransaction for PgTransaction<'_> {
    async fn execute(&self, update: &SqlUpdate) -> Result<u64, SqlError> {
        match tokio::time::timeout(self.sql.timeout, self.sql.update_in_transaction(update)).await {
            Ok(answer) => answer,
            Err(_) => Err(SqlError::Timeout),
        }
    }

    async fn fetch_value(&self, key: &str) -> Result<(i64, u64), SqlError> {
        self.sql.row(key).await
    }

    async fn advisory_xact_lock(&self, key: i64) -> Result<(), SqlError> {
        self.sql.wait_for("pg_advisory_xact_lock", key).await
    }

    async fn try_advisory_xact_lock(&self, key: i64) -> Result<bool, SqlError> {
        self.sql.boolean("pg_try_advisory_xact_lock", key).await
    }

    async fn commit(self) -> Result<(), SqlError> {
        within(self.sql.timeout, self.sql.client.batch_execute("COMMIT")).await
    }

    async fn rollback(self) -> Result<(), SqlError> {
        within(self.sql.timeout, self.sql.client.batch_execute("ROLLBACK")).await
    }
}

impl Sql for PgSql {
    type Transaction<'a> = PgTransaction<'a>;

    async fn execute(&self, update: &SqlUpdate) -> Result<u64, SqlError> {
        match tokio::time::timeout(self.timeout, self.update(update)).await {
            Ok(Ok(changed)) => Ok(changed),
            Ok(Err(e)) => {
                let _ = self.client.batch_execute("ROLLBACK").await;
                Err(e)
            }
            Err(_) => Err(SqlError::Timeout),
        }
    }

    async fn fetch_value(&self, key: &str) -> Result<(i64, u64), SqlError> {
        self.row(key).await
    }

    async fn begin(&self) -> Result<PgTransaction<'_>, SqlError> {
        within(self.timeout, self.client.batch_execute("BEGIN")).await?;
        Ok(PgTransaction { sql: self })
    }

    async fn advisory_lock(&self, key: i64) -> Result<(), SqlError> {
        self.wait_for("pg_advisory_lock", key).await
    }

    async fn try_advisory_lock(&self, key: i64) -> Result<bool, SqlError> {
        self.boolean("pg_try_advisory_lock", key).await
    }

    async fn advisory_unlock(&self, key: i64) -> Result<bool, SqlError> {
        self.boolean("pg_advisory_unlock", key).await
    }
}

/// A lease on a lock, kept in a row of `locks(name TEXT PRIMARY KEY, token
/// BIGINT, expires TIMESTAMPTZ)` by the database's clock: a grant sets the
/// row when it has expired (or is missing) and increments its token, which
/// is the grant's fencing token and id; a keep-alive moves `expires` on
/// while the row is still the grant's and unexpired.
pub struct PgLock {
    client: Client,
    name: String,
    ttl: Duration,
    timeout: Duration,
}

/// The lock service did not answer as it should: a timeout, a lost
/// connection or an error from the database all leave the lease unknown.
fn lock_error(_: SqlError) -> LockError {
    LockError::Unavailable
}

impl PgLock {
    /// The lock `name`, granted for `ttl` at a time, on `client`; every
    /// call waits at most `timeout`.
    pub fn new(client: Client, name: &str, ttl: Duration, timeout: Duration) -> PgLock {
        PgLock {
            client,
            name: name.to_owned(),
            ttl,
            timeout,
        }
    }

    /// Creates the table `locks` if it is missing.
    pub async fn create_table(&self) -> Result<(), SqlError> {
        within(
            self.timeout,
            self.client.batch_execute(
                "CREATE TABLE IF NOT EXISTS locks (name TEXT PRIMARY KEY, token BIGINT NOT NULL, \
                 expires TIMESTAMPTZ NOT NULL)",
            ),
        )
        .await
    }

    fn ttl_ms(&self) -> f64 {
        self.ttl.as_secs_f64() * 1000.0
    }
}

impl LockService for PgLock {
    async fn acquire(&self) -> Result<Lease, LockError> {
        let row = within(
            self.timeout,
            self.client.query_opt(
                "INSERT INTO locks (name, token, expires) \
                 VALUES ($1, 1, clock_timestamp() + $2::float8 * interval '1 millisecond') \
                 ON CONFLICT (name) DO UPDATE SET token = locks.token + 1, expires = EXCLUDED.expires \
                 WHERE locks.expires <= clock_timestamp() \
                 RETURNING token",
                &[&self.name, &self.ttl_ms()],
            ),
        )
        .await
        .map_err(lock_error)?;
        match row {
            Some(row) => {
                let token: i64 = row.get(0);
                Ok(Lease {
                    id: token as u64,
                    token: Some(token as u64),
                    ttl: self.ttl,
                })
            }
            None => Err(LockError::Held),
        }
    }

    async fn keep_alive(&self, lease: &Lease) -> Result<Duration, LockError> {
        let changed = within(
            self.timeout,
            self.client.execute(
                "UPDATE locks SET expires = clock_timestamp() + $3::float8 * interval '1 millisecond' \
                 WHERE name = $1 AND token = $2 AND expires > clock_timestamp()",
                &[&self.name, &(lease.id as i64), &self.ttl_ms()],
            ),
        )
        .await
        .map_err(lock_error)?;
        if changed == 1 {
            Ok(self.ttl)
        } else {
            Err(LockError::Lost)
        }
    }

    async fn release(&self, lease: &Lease) -> Result<(), LockError> {
        within(
            self.timeout,
            self.client.execute(
                "UPDATE locks SET expires = clock_timestamp() WHERE name = $1 AND token = $2",
                &[&self.name, &(lease.id as i64)],
            ),
        )
        .await
        .map_err(lock_error)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::number_parameters;

    #[test]
    fn named_parameters_are_numbered_in_the_order_they_first_appear() {
        let (statement, order) = number_parameters(
            "UPDATE kv SET value = :value, lock_token = :token WHERE key = :key AND lock_token <= :token",
        );
        assert_eq!(
            statement,
            "UPDATE kv SET value = $1, lock_token = $2 WHERE key = $3 AND lock_token <= $2"
        );
        assert_eq!(order, [1, 2, 0]);
    }

    #[test]
    fn casts_and_longer_names_are_left_alone() {
        let (statement, order) = number_parameters(
            "UPDATE kv SET value = :value::bigint WHERE key = :keys AND :version = 1",
        );
        assert_eq!(
            statement,
            "UPDATE kv SET value = $1::bigint WHERE key = :keys AND $2 = 1"
        );
        assert_eq!(order, [1, 3]);
    }
}
