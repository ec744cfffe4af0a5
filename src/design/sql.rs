//! `sql`: a real SQLite database (rusqlite's bundled SQLite, in memory)
//! inside the storage node, fenced by the user's own conditional statement.
//!
//! The fencing advice for relational stores is a conditional UPDATE, "apply
//! the write only if its token is at least the one in the row". Users paste
//! the statement their service runs as the `update` key and see whether it
//! fences:
//!
//! ```toml
//! [storage]
//! design = "sql"
//! update = "UPDATE kv SET value = :value, lock_token = :token WHERE key = :key AND lock_token <= :token"
//! ```
//!
//! The table is `kv(key TEXT PRIMARY KEY, value INTEGER, lock_token INTEGER)`
//! (`STRICT`).
//! For each write the node first runs `INSERT OR IGNORE INTO kv VALUES (:key,
//! 0, 0)` (a key's row exists from its first write on, with token 0), then the
//! statement with the named parameters it uses among `:key`, `:value`,
//! `:token` (NULL for a write without a token) and `:version` (the version an
//! increment read, NULL for a blind write). The write is **accepted when the
//! statement changed a row**, rejected otherwise; an SQL
//! error at run time (a constraint, say) is a rejection that names it. Reads
//! answer the row's `value`.
//!
//! What the statements show:
//! - `lock_token <= :token` fences and lets a holder write twice.
//! - `lock_token < :token`, the form often quoted, rejects the holder's own
//!   second write with the same token: a false rejection.
//! - `WHERE key = :key` alone checks nothing: a zombie's write lands.
//!
//! ## The sandbox
//!
//! A scenario file may come from anyone, so the statement runs in a sandbox
//! that SQLite itself enforces, and is checked when the scenario is loaded
//! ([`StorageDesign::validate`]): any objection is an error at the `update`
//! key (exit 2), never a panic or a surprise at run time.
//! - **Exactly one statement, an `UPDATE` of `kv`.** SQLite's authorizer
//!   refuses, while the statement is prepared, every other action: reading
//!   or writing any other table (`sqlite_schema` included), `INSERT`,
//!   `DELETE`, DDL (`CREATE`, `DROP`, `ALTER`), `ATTACH`, `DETACH`,
//!   `PRAGMA`, transactions, and any function not on [`FUNCTIONS`]
//!   (`load_extension`, `random()`, `CURRENT_TIMESTAMP`, …). A statement
//!   that updates nothing (`VACUUM`, `SELECT`) is refused, and so is a
//!   second statement after the first (`UPDATE …; VACUUM INTO …`).
//!   Attaching databases is also capped at zero, which `VACUUM INTO` needs:
//!   nothing is ever written outside the in-memory database.
//! - **No `RETURNING`.** The write's outcome is the number of rows the
//!   statement changed, nothing else.
//! - **The decision is the statement's own change count**: the rows it
//!   changed (SQLite's total change count across it), never the count left
//!   by the storage's own `INSERT OR IGNORE`.
//! - **Bounded work.** A progress handler stops any statement after
//!   [`MAX_STEPS`] SQLite virtual-machine steps; strings, blobs and rows are
//!   capped at [`MAX_LENGTH`] bytes, which bounds one step's work too (a
//!   search in a string costs up to the product of two lengths); each
//!   statement may hold at most [`MAX_MEMORY`] bytes, counted on its own
//!   thread (see `memory`), and its sorts and temporary tables stay in
//!   memory: nothing is written to the host's temporary directory. An
//!   unbounded recursive CTE is caught at load; one that runs away only on
//!   some run's data ends that run as crashed, with that message (exit 3):
//!   never a hang.
//! - **Integers only.** The table is `STRICT`: `value` and `lock_token` hold
//!   integers (or NULL), so `SET value = :key` fails at load rather than
//!   answering reads with text. Tokens are bound as SQLite's signed 64-bit
//!   integers; the built-in locks' tokens stay far below `i64::MAX` (see
//!   [`MAX_FIRST_TOKEN`](crate::design::catalog::MAX_FIRST_TOKEN)), and a
//!   larger one is never wrapped: it ends the run as crashed, saying so.
//! - **A trial run.** At load the statement runs on a fresh table for two
//!   sample writes (key `"key"`, value 1, token 1 and version 0; then no
//!   token and no version), each followed by a read, within [`TRIAL_TIME`]
//!   of wall-clock time: a statement that fails there (a constraint, a type,
//!   a budget) is refused.
//! - **Determinism.** Randomness (`random()`) and the clock
//!   (`CURRENT_TIME`) are refused by the authorizer; the date functions are
//!   replaced by ones that refuse `'now'`, `'localtime'` and `'utc'` on the
//!   values they are given (see `dates`), so runs of a seed stay identical
//!   on every machine and in every time zone.
//!
//! The database lives in the node and survives its crashes: the data is
//! durable.

use rusqlite::{Connection, Statement};
use sim::Actor;

use crate::design::catalog::DesignInfo;
use crate::design::config::{key, DesignConfig as _};
use crate::design::storage::{Decision, StorageNode, StoragePolicy, WriteRequest};
use crate::design::{ParamError, StorageDesign};
use crate::protocol::{Msg, Op};

mod dates;
mod memory;
mod sandbox;

pub use memory::MAX_MEMORY;
use sandbox::{Guard, Stopped};
pub use sandbox::{FUNCTIONS, MAX_LENGTH, MAX_STEPS, TRIAL_TIME};

/// The parameters a statement may use.
pub const PARAMETERS: &[&str] = &[":key", ":value", ":token", ":version"];

const SCHEMA: &str =
    "CREATE TABLE kv (key TEXT PRIMARY KEY, value INTEGER, lock_token INTEGER) STRICT;";
const INSERT: &str = "INSERT OR IGNORE INTO kv (key, value, lock_token) VALUES (?1, 0, 0)";
const READ: &str = "SELECT value FROM kv WHERE key = ?1";

/// The `sql` design as the registry knows it.
#[derive(Clone, Copy, Debug, Default)]
pub struct SqlDesign;

impl StorageDesign for SqlDesign {
    type Config = SqlConfig;

    fn info(&self) -> DesignInfo {
        SQL
    }

    fn server(&self, config: &SqlConfig) -> Box<dyn Actor<Msg>> {
        let sql = Sql::new(&config.update)
            .unwrap_or_else(|e| panic!("sql storage: invalid `update` statement: {e}"));
        Box::new(StorageNode::new(sql))
    }

    fn validate(&self, config: &SqlConfig) -> Result<(), ParamError> {
        Sql::check(&config.update).map_err(|message| ParamError {
            key: "update",
            message,
        })
    }
}

/// Storage: a real SQLite running the user's conditional UPDATE.
pub const SQL: DesignInfo = DesignInfo::storage(
    "sql",
    "an in-memory SQLite table kv(key, value, lock_token) written by your own \
     UPDATE; a write is accepted when it changes a row",
    SqlConfig::KEYS,
);

crate::design_config! {
    /// Settings of the `sql` storage; the default is the fencing `UPDATE`.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct SqlConfig {
        update: String = key::text(
            "UPDATE kv SET value = :value, lock_token = :token \
             WHERE key = :key AND lock_token <= :token",
        ),
            "the statement run for each write, with :key, :value, :token, :version";
    }
}

/// The policy: an in-memory SQLite and the user's statement.
pub struct Sql {
    db: Connection,
    update: String,
    guard: Guard,
}

impl std::fmt::Debug for Sql {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sql").field("update", &self.update).finish()
    }
}

/// Why a write could not be decided.
#[derive(Debug)]
enum RunError {
    /// SQLite's own error (a constraint, a type): the write is rejected.
    Sql(rusqlite::Error),
    /// The sandbox stopped the statement (steps, time, memory or a read of
    /// the host): the run ends, since a rejection would pass for a verdict.
    Stopped(Stopped),
    /// A token or version above `i64::MAX`.
    TooLarge(&'static str, u64),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Sql(e) | RunError::Stopped(Stopped::Sql(e)) => write!(f, "{e}"),
            RunError::Stopped(Stopped::Steps) => write!(
                f,
                "the statement ran past its budget of {MAX_STEPS} SQLite steps \
                 (an unbounded recursive CTE?)"
            ),
            RunError::Stopped(Stopped::Time) => write!(
                f,
                "the statement's trial ran past its budget of {}s of wall-clock time \
                 (searching long strings?)",
                TRIAL_TIME.as_secs_f64()
            ),
            RunError::Stopped(Stopped::Memory) => write!(
                f,
                "the statement needed more than its budget of {} MiB of memory \
                 (a sort or a temporary table of too many rows?)",
                MAX_MEMORY >> 20
            ),
            RunError::Stopped(Stopped::Host(reason)) => f.write_str(reason),
            RunError::TooLarge(what, n) => write!(
                f,
                "{what} {n} does not fit SQLite's signed 64-bit integer (at most {})",
                i64::MAX
            ),
        }
    }
}

impl Sql {
    /// A fresh database running `update` for each write; an error says why
    /// the statement cannot be used. See the module docs for the rules.
    pub fn new(update: &str) -> Result<Sql, String> {
        memory::install()?;
        let db = Connection::open_in_memory().map_err(|e| e.to_string())?;
        db.execute_batch(SCHEMA).map_err(|e| e.to_string())?;
        let guard = Guard::install(&db)?;
        guard.admit(&db, update)?;
        Ok(Sql {
            db,
            update: update.to_owned(),
            guard,
        })
    }

    /// Runs one of the storage's own statements, past the authorizer.
    fn own<T>(&self, run: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T, RunError> {
        self.guard.trusted(|| run(&self.db)).map_err(RunError::Sql)
    }

    /// Checks `update` as [`Sql::new`] does, then runs it for two sample
    /// writes on a fresh table, each followed by a read of the key, within
    /// [`TRIAL_TIME`] of wall-clock time.
    pub fn check(update: &str) -> Result<(), String> {
        let mut sql = Sql::new(update)?;
        sql.guard.time_trial(true);
        let result = sql.trial();
        sql.guard.time_trial(false);
        result
    }

    fn trial(&mut self) -> Result<(), String> {
        let sql = self;
        for (token, version) in [(Some(1), Some(0)), (None, None)] {
            let write = WriteRequest {
                write: "sample",
                client: "client1",
                token,
                key: "key",
                value: 1,
                op: Op::Put,
                expect_version: version,
                stored_version: 0,
            };
            let shown = token.map_or("none".to_string(), |t| t.to_string());
            sql.run(&write)
                .and_then(|_| sql.try_read("key").map(drop))
                .map_err(|e| {
                    format!(
                        "the statement fails on a sample write (key \"key\", value 1, token {shown}): {e}"
                    )
                })?;
        }
        Ok(())
    }

    fn run(&mut self, w: &WriteRequest<'_>) -> Result<u64, RunError> {
        let integer = |what, n: Option<u64>| {
            n.map(|n| i64::try_from(n).map_err(|_| RunError::TooLarge(what, n)))
                .transpose()
        };
        let token = integer("token", w.token)?;
        let version = integer("version", w.expect_version)?;
        self.own(|db| db.prepare_cached(INSERT)?.execute([w.key]))?;
        let mut stmt = self
            .db
            .prepare_cached(&self.update)
            .map_err(RunError::Sql)?;
        let bound = bind(&mut stmt, ":key", w.key)
            .and_then(|()| bind(&mut stmt, ":value", w.value))
            .and_then(|()| bind(&mut stmt, ":token", token))
            .and_then(|()| bind(&mut stmt, ":version", version));
        bound.map_err(RunError::Sql)?;
        let before = self.db.total_changes();
        let result = self.guard.bounded(|| stmt.raw_execute());
        // A failed run leaves its bindings; clear them for the next write.
        stmt.clear_bindings();
        match result {
            Ok(_) => Ok(self.db.total_changes() - before),
            Err(Stopped::Sql(e)) => Err(RunError::Sql(e)),
            Err(stopped) => Err(RunError::Stopped(stopped)),
        }
    }

    /// One of the storage's own transaction statements.
    fn transaction(&self, statement: &str) {
        if let Err(e) = self.own(|db| db.execute_batch(statement)) {
            panic!("sql storage: {statement}: {e}");
        }
    }

    fn try_read(&self, key: &str) -> Result<i64, RunError> {
        let value = self.own(|db| {
            let mut read = db.prepare_cached(READ)?;
            match read.query_row([key], |row| row.get::<_, Option<i64>>(0)) {
                Err(rusqlite::Error::QueryReturnedNoRows) => Ok(None),
                other => other,
            }
        })?;
        Ok(value.unwrap_or(0))
    }
}

fn bind(stmt: &mut Statement<'_>, name: &str, value: impl rusqlite::ToSql) -> rusqlite::Result<()> {
    match stmt.parameter_index(name)? {
        Some(i) => stmt.raw_bind_parameter(i, value),
        None => Ok(()),
    }
}

impl StoragePolicy for Sql {
    fn decide(&mut self, write: &WriteRequest<'_>) -> Decision {
        match self.run(write) {
            Ok(0) => Decision::Reject {
                reason: "the statement changed no row".into(),
                max_token: None,
            },
            Ok(_) => Decision::Accept,
            Err(RunError::Sql(e)) => Decision::Reject {
                reason: format!("sql error: {e}"),
                max_token: None,
            },
            // Rejecting would pass for a verdict; the run ends instead.
            Err(e) => panic!(
                "sql storage: write {} (key {:?}): {e}",
                write.write, write.key
            ),
        }
    }

    fn transactions(&self) -> bool {
        true
    }

    fn begin(&mut self) {
        self.transaction("SAVEPOINT txn");
    }

    fn commit(&mut self) {
        self.transaction("RELEASE txn");
    }

    fn rollback(&mut self) {
        self.transaction("ROLLBACK TO txn; RELEASE txn");
    }

    fn read(&mut self, key: &str) -> Option<i64> {
        match self.try_read(key) {
            Ok(value) => Some(value),
            Err(e) => panic!("sql storage: reading key {key:?}: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Op;
    use sim::testing::Harness;

    const FENCING: &str =
        "UPDATE kv SET value = :value, lock_token = :token WHERE key = :key AND lock_token <= :token";

    fn write(id: &str, token: u64, value: i64) -> Msg {
        Msg::Write {
            write: id.into(),
            token: Some(token),
            key: "x".into(),
            value,
            op: Op::Put,
            expect_version: None,
        }
    }

    fn outcomes(update: &str, writes: &[(&str, u64, i64)]) -> Vec<String> {
        let mut h = Harness::new(&["storage", "client1"], 0);
        let mut node = StorageNode::new(Sql::new(update).unwrap());
        writes
            .iter()
            .map(|&(id, token, value)| {
                h.message(&mut node, 1, write(id, token, value)).events[0]
                    .0
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn lock_token_at_most_fences_and_lets_the_holder_write_twice() {
        let got = outcomes(FENCING, &[("a", 34, 1), ("b", 34, 2), ("c", 33, 3)]);
        assert_eq!(got, ["accepted", "accepted", "rejected"]);
    }

    #[test]
    fn lock_token_below_rejects_the_holders_second_write() {
        let strict = FENCING.replace("<=", "<");
        let got = outcomes(&strict, &[("a", 34, 1), ("b", 34, 2)]);
        assert_eq!(got, ["accepted", "rejected"]);
    }

    #[test]
    fn without_a_token_condition_a_stale_write_lands_and_reads_see_it() {
        let plain = "UPDATE kv SET value = :value WHERE key = :key";
        let got = outcomes(plain, &[("a", 34, 1), ("b", 33, 7)]);
        assert_eq!(got, ["accepted", "accepted"]);
        let mut sql = Sql::new(plain).unwrap();
        let req = WriteRequest {
            write: "a",
            client: "client1",
            token: None,
            key: "y",
            value: 5,
            op: Op::Put,
            expect_version: None,
            stored_version: 0,
        };
        assert_eq!(sql.decide(&req), Decision::Accept);
        assert_eq!(sql.read("y"), Some(5));
        assert_eq!(sql.read("never"), Some(0));
    }

    fn sample(token: u64) -> WriteRequest<'static> {
        WriteRequest {
            write: "w",
            client: "client1",
            token: Some(token),
            key: "x",
            value: 1,
            op: Op::Put,
            expect_version: None,
            stored_version: 0,
        }
    }

    #[test]
    #[should_panic(expected = "budget of 1000000 SQLite steps")]
    fn a_statement_that_runs_away_on_a_runs_data_ends_the_run() {
        // Fine for the sample write's value 1, endless for a value of 0.
        let sneaky = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c \
                      WHERE :value > 0 AND x < 10 OR :value = 0) \
                      UPDATE kv SET value = (SELECT max(x) FROM c) WHERE key = :key";
        Sql::check(sneaky).unwrap();
        let mut sql = Sql::new(sneaky).unwrap();
        sql.decide(&WriteRequest {
            value: 0,
            ..sample(1)
        });
    }

    #[test]
    fn values_and_tokens_stay_integers() {
        let message = Sql::check(
            "UPDATE kv SET value = :key, lock_token = :token WHERE key = :key AND lock_token <= :token",
        )
        .unwrap_err();
        assert!(message.contains("sample write"), "{message}");
        assert!(
            message.contains("cannot store TEXT value in INTEGER column"),
            "{message}"
        );
    }

    #[test]
    fn the_decision_is_the_statements_own_change_count() {
        // The storage's INSERT OR IGNORE creates key x's row; the UPDATE
        // changes no row, so the write is rejected.
        let mut sql = Sql::new("UPDATE kv SET value = :value WHERE key = 'elsewhere'").unwrap();
        assert!(matches!(sql.decide(&sample(1)), Decision::Reject { .. }));
        let mut sql = Sql::new(FENCING).unwrap();
        assert_eq!(sql.decide(&sample(i64::MAX as u64)), Decision::Accept);
        assert!(matches!(sql.decide(&sample(5)), Decision::Reject { .. }));
    }

    #[test]
    #[should_panic(expected = "token 9223372036854775808 does not fit")]
    fn a_token_above_i64_max_is_never_wrapped() {
        let mut sql = Sql::new(FENCING).unwrap();
        sql.decide(&sample(i64::MAX as u64 + 1));
    }

    #[test]
    fn bad_statements_are_refused_with_a_reason() {
        let err = |s: &str| Sql::new(s).unwrap_err();
        assert!(err("UPDATE kv SET valu = :value").contains("invalid SQL"));
        assert!(err("SELECT value FROM kv").contains("changes no row"));
        assert!(err("UPDATE kv SET value = :v WHERE key = :key").contains("unknown parameter :v"));
        assert!(err("UPDATE kv SET value = random()").contains("random"));
        let check = |s: &str| Sql::check(s).unwrap_err();
        assert!(check("UPDATE kv SET lock_token = strftime('%s', 'now')").contains("'now'"));
    }
}
