//! The `sql` storage's sandbox, enforced by SQLite itself: an authorizer
//! that lets one `UPDATE` of `kv` through and nothing else, limits on
//! attached databases and lengths, temporary storage in memory, a bound on
//! the memory a statement holds ([`memory`](super::memory)), date functions
//! that never read the host ([`dates`](super::dates)), and a progress
//! handler that bounds each statement's work, and the trial's time. See the
//! [parent module](super) for what users get.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rusqlite::config::DbConfig;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::limits::Limit;
use rusqlite::{Batch, Connection};

use super::{dates, memory, PARAMETERS};

/// The SQL functions a statement may call: SQLite's deterministic core,
/// aggregate, date and math functions. Nothing here reads a file, the clock,
/// the time zone or randomness: the date functions refuse `'now'`,
/// `'localtime'` and `'utc'` (see `dates`).
pub const FUNCTIONS: &[&str] = &[
    "abs",
    "avg",
    "ceil",
    "ceiling",
    "char",
    "coalesce",
    "concat",
    "concat_ws",
    "count",
    "date",
    "datetime",
    "floor",
    "format",
    "glob",
    "group_concat",
    "hex",
    "ifnull",
    "iif",
    "instr",
    "julianday",
    "length",
    "like",
    "likelihood",
    "likely",
    "lower",
    "ltrim",
    "max",
    "min",
    "mod",
    "nullif",
    "octet_length",
    "pow",
    "power",
    "printf",
    "quote",
    "replace",
    "round",
    "rtrim",
    "sign",
    "sqrt",
    "strftime",
    "string_agg",
    "substr",
    "substring",
    "sum",
    "time",
    "timediff",
    "total",
    "trim",
    "trunc",
    "typeof",
    "unhex",
    "unicode",
    "unixepoch",
    "unlikely",
    "upper",
];

/// The most SQLite virtual-machine steps one statement may take.
pub const MAX_STEPS: u64 = 1_000_000;

/// The longest string, blob or row a statement may build, in bytes. It
/// bounds the work of one step too: searching a string (`instr`,
/// `replace`, `trim`, `LIKE`) costs up to the product of two lengths.
pub const MAX_LENGTH: i32 = 4_096;

/// The longest `LIKE` or `GLOB` pattern, in bytes.
const MAX_PATTERN_LENGTH: i32 = 1_000;

/// The wall-clock time the load-time trial of a statement may take, for
/// both its sample writes and reads. Only the trial is timed: a run is
/// bounded by its steps, which give every machine the same answer.
pub const TRIAL_TIME: Duration = Duration::from_secs(1);

/// Steps between two calls of the progress handler.
const STEPS_PER_CHECK: u64 = 100;

/// The longest statement text, in bytes.
const MAX_SQL_LENGTH: i32 = 100_000;

/// The sandbox of one connection: what its authorizer saw and how much its
/// current statement has worked.
pub(super) struct Guard {
    seen: Arc<Mutex<Seen>>,
    /// Progress-handler calls during the statement running now.
    checks: Arc<AtomicU64>,
    /// When the trial must be over, while one runs.
    deadline: Arc<Mutex<Option<Instant>>>,
    /// Whether the progress handler stopped the statement for the deadline.
    late: Arc<AtomicBool>,
    /// Why a date function refused its arguments, since the statement began.
    refusals: dates::Refusals,
}

/// Why the user's statement did not run to its end.
#[derive(Debug)]
pub(super) enum Stopped {
    /// SQLite's own error (a constraint, a type).
    Sql(rusqlite::Error),
    /// It ran past [`MAX_STEPS`].
    Steps,
    /// The trial ran past [`TRIAL_TIME`].
    Time,
    /// It needed more than [`MAX_MEMORY`](super::memory::MAX_MEMORY).
    Memory,
    /// A date function was asked to read the host; the reason.
    Host(String),
}

/// What the authorizer saw while a statement was prepared.
#[derive(Default)]
struct Seen {
    /// The first action it refused, in words.
    refused: Option<String>,
    /// Whether the statement updates a column of `kv`.
    updates_kv: bool,
    /// The storage's own statement is running: allow it.
    trusted: bool,
}

impl Guard {
    /// Keeps `db`'s temporary tables and sorters in memory, caps its
    /// attached databases (at zero: `VACUUM INTO` needs one), string, row,
    /// pattern and statement lengths, replaces its date functions, and
    /// installs the authorizer and the progress handler. Statements `db`
    /// prepares from now on go through the authorizer, except inside
    /// [`Guard::trusted`]. `db` was opened after [`memory::install`].
    pub(super) fn install(db: &Connection) -> Result<Guard, String> {
        // Temporary files would be written to the host's temp directory;
        // in memory, the memory bound covers them.
        db.pragma_update(None, "temp_store", "MEMORY")
            .map_err(|e| e.to_string())?;
        db.set_limit(Limit::SQLITE_LIMIT_ATTACHED, 0);
        db.set_limit(Limit::SQLITE_LIMIT_LENGTH, MAX_LENGTH);
        db.set_limit(Limit::SQLITE_LIMIT_SQL_LENGTH, MAX_SQL_LENGTH);
        db.set_limit(Limit::SQLITE_LIMIT_LIKE_PATTERN_LENGTH, MAX_PATTERN_LENGTH);
        db.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)
            .map_err(|e| e.to_string())?;
        let refusals = dates::Refusals::default();
        dates::install(db, &refusals, MAX_LENGTH)?;
        let seen = Arc::new(Mutex::new(Seen::default()));
        let record = Arc::clone(&seen);
        db.authorizer(Some(move |ctx: AuthContext<'_>| {
            let mut seen = record.lock().unwrap_or_else(|e| e.into_inner());
            if seen.trusted {
                return Authorization::Allow;
            }
            match refusal(&ctx.action) {
                None => {
                    if let AuthAction::Update { .. } = ctx.action {
                        seen.updates_kv = true;
                    }
                    Authorization::Allow
                }
                Some(reason) => {
                    seen.refused.get_or_insert(reason);
                    Authorization::Deny
                }
            }
        }));
        let checks = Arc::new(AtomicU64::new(0));
        let deadline = Arc::new(Mutex::new(None::<Instant>));
        let late = Arc::new(AtomicBool::new(false));
        let (counter, until, mark) = (
            Arc::clone(&checks),
            Arc::clone(&deadline),
            Arc::clone(&late),
        );
        db.progress_handler(
            STEPS_PER_CHECK as i32,
            Some(move || {
                let over_steps =
                    counter.fetch_add(1, Ordering::Relaxed) + 1 > MAX_STEPS / STEPS_PER_CHECK;
                // Read the clock only during a trial, never in a run.
                let until = *until.lock().unwrap_or_else(|e| e.into_inner());
                if until.is_some_and(|t| Instant::now() >= t) {
                    mark.store(true, Ordering::Relaxed);
                }
                over_steps || mark.load(Ordering::Relaxed)
            }),
        );
        Ok(Guard {
            seen,
            checks,
            deadline,
            late,
            refusals,
        })
    }

    /// Checks `update` the way the authorizer sees it: exactly one UPDATE
    /// of `kv`, no RETURNING, known parameters.
    pub(super) fn admit(&self, db: &Connection, update: &str) -> Result<(), String> {
        prepare_one(db, update, &self.seen)
    }

    /// From `on` until `off`, the user's statement is stopped at
    /// [`TRIAL_TIME`] after now as well as by its steps.
    pub(super) fn time_trial(&self, on: bool) {
        *self.deadline.lock().unwrap_or_else(|e| e.into_inner()) =
            on.then(|| Instant::now() + TRIAL_TIME);
    }

    /// Runs one of the storage's own statements, which the authorizer lets
    /// through (SQLite may prepare a cached statement again at any step).
    pub(super) fn trusted<T>(&self, run: impl FnOnce() -> T) -> T {
        let set = |trusted| self.seen.lock().unwrap_or_else(|e| e.into_inner()).trusted = trusted;
        set(true);
        let result = run();
        set(false);
        result
    }

    /// Runs the user's statement with a fresh step and memory budget, and
    /// says what stopped it if it did not finish.
    pub(super) fn bounded<T>(
        &self,
        run: impl FnOnce() -> rusqlite::Result<T>,
    ) -> Result<T, Stopped> {
        self.checks.store(0, Ordering::Relaxed);
        self.late.store(false, Ordering::Relaxed);
        let take_refusal = || {
            self.refusals
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take()
        };
        take_refusal();
        let (result, out_of_memory) = memory::bounded(run);
        let host = take_refusal();
        let error = match result {
            Ok(value) => return Ok(value),
            Err(e) => e,
        };
        Err(if let Some(reason) = host {
            Stopped::Host(reason)
        } else if out_of_memory {
            Stopped::Memory
        } else if self.checks.load(Ordering::Relaxed) > MAX_STEPS / STEPS_PER_CHECK {
            Stopped::Steps
        } else if self.late.load(Ordering::Relaxed) {
            Stopped::Time
        } else {
            Stopped::Sql(error)
        })
    }
}

/// Why the authorizer refuses `action`, if it does.
fn refusal(action: &AuthAction<'_>) -> Option<String> {
    match action {
        AuthAction::Select | AuthAction::Recursive => None,
        AuthAction::Read { table_name, .. } | AuthAction::Update { table_name, .. }
            if *table_name == "kv" =>
        {
            None
        }
        AuthAction::Read { table_name, .. } => Some(format!(
            "the statement reads table `{table_name}`: only `kv` may be used"
        )),
        AuthAction::Update { table_name, .. } => Some(format!(
            "the statement updates table `{table_name}`: only `kv` may be updated"
        )),
        AuthAction::Function { function_name } => {
            let name = function_name.to_lowercase();
            (!FUNCTIONS.contains(&name.as_str())).then(|| {
                format!(
                    "the statement calls `{function_name}`, which is not allowed \
                     (no files, time or randomness); allowed functions: {}",
                    FUNCTIONS.join(", ")
                )
            })
        }
        AuthAction::Insert { table_name } | AuthAction::Delete { table_name }
            if table_name.starts_with("sqlite_") =>
        {
            Some("the statement changes the schema (DDL), which is not allowed".into())
        }
        AuthAction::Insert { .. } | AuthAction::Delete { .. } => {
            Some("the statement inserts or deletes rows: it must be one UPDATE of `kv`".to_string())
        }
        AuthAction::Pragma { pragma_name, .. } => Some(format!(
            "the statement runs PRAGMA {pragma_name}, which is not allowed"
        )),
        AuthAction::Attach { .. } | AuthAction::Detach { .. } => {
            Some("the statement attaches or detaches a database, which is not allowed".into())
        }
        AuthAction::Transaction { .. } | AuthAction::Savepoint { .. } => {
            Some("the statement controls a transaction: it must be one UPDATE of `kv`".into())
        }
        other => Some(format!(
            "the statement changes the schema or does something else than an UPDATE of `kv` \
             ({other:?}), which is not allowed"
        )),
    }
}

/// Prepares `update` (through the authorizer) and checks it is exactly one
/// UPDATE of `kv` without RETURNING, with known parameters.
fn prepare_one(db: &Connection, update: &str, seen: &Mutex<Seen>) -> Result<(), String> {
    let take = || std::mem::take(&mut *seen.lock().unwrap_or_else(|e| e.into_inner()));
    let mut batch = Batch::new(db, update);
    let first = batch.next();
    let first_seen = take();
    if let Some(reason) = first_seen.refused {
        return Err(reason);
    }
    let stmt = first
        .map_err(|e| format!("invalid SQL: {e}"))?
        .ok_or("the statement is empty: write the UPDATE run for each write")?;
    if stmt.readonly() {
        return Err("the statement changes no row, so it would accept no write".into());
    }
    if !first_seen.updates_kv {
        return Err("the statement must be an UPDATE of `kv` (one statement, nothing else)".into());
    }
    if stmt.column_count() > 0 {
        return Err(
            "RETURNING is not supported: a write is accepted when the UPDATE changes \
                    a row, and nothing it returns is read"
                .into(),
        );
    }
    for i in 1..=stmt.parameter_count() {
        match stmt.parameter_name(i) {
            Some(name) if PARAMETERS.contains(&name) => {}
            other => {
                return Err(format!(
                    "unknown parameter {}; use {}",
                    other.unwrap_or("`?`"),
                    PARAMETERS.join(", ")
                ))
            }
        }
    }
    drop(stmt);
    let trailing = batch.next();
    take();
    if !matches!(trailing, Ok(None)) {
        return Err(
            "only one statement runs for each write: remove what follows the first `;`".into(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use rusqlite::limits::Limit;
    use rusqlite::Connection;

    use crate::design::sql::Sql;

    #[test]
    fn the_sandbox_refuses_everything_but_one_update_of_kv() {
        let err = |s: &str| Sql::check(s).unwrap_err();
        let cases = [
            ("DROP TABLE kv", "schema"),
            ("CREATE TABLE t (x)", "schema"),
            ("DELETE FROM kv", "inserts or deletes"),
            ("INSERT INTO kv VALUES ('a', 1, 1)", "inserts or deletes"),
            ("ATTACH DATABASE ':memory:' AS other", "attaches"),
            ("PRAGMA writable_schema = ON", "PRAGMA"),
            ("BEGIN", "transaction"),
            (
                "UPDATE kv SET value = (SELECT count(*) FROM sqlite_schema) WHERE key = :key",
                "reads table `sqlite_schema`",
            ),
            (
                "UPDATE kv SET value = length(load_extension('x')) WHERE key = :key",
                "calls `load_extension`",
            ),
            (
                "UPDATE kv SET value = :value WHERE key = :key RETURNING value",
                "RETURNING",
            ),
            (
                "UPDATE kv SET value = :value WHERE key = :key; DELETE FROM kv",
                "only one statement",
            ),
            (
                "UPDATE kv SET value = :value WHERE key = :key; SELECT 1",
                "only one statement",
            ),
            ("VACUUM", "must be an UPDATE of `kv`"),
            ("", "empty"),
        ];
        for (statement, needle) in cases {
            let message = err(statement);
            assert!(message.contains(needle), "{statement}: {message}");
        }
        // Trailing blanks and comments are not a statement.
        Sql::check("UPDATE kv SET value = :value WHERE key = :key; -- fenced? no\n ").unwrap();
    }

    #[test]
    fn vacuum_into_writes_no_file() {
        let dir = std::env::temp_dir().join(format!("fencesim-sql-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("copy.db");
        let target = target.to_str().unwrap();
        for statement in [
            format!("VACUUM INTO '{target}'"),
            format!("UPDATE kv SET value = :value WHERE key = :key; VACUUM INTO '{target}'"),
            format!("ATTACH DATABASE '{target}' AS other"),
        ] {
            assert!(Sql::check(&statement).is_err(), "{statement}");
        }
        // The cap on attached databases alone stops VACUUM INTO too.
        super::memory::install().unwrap();
        let db = Connection::open_in_memory().unwrap();
        db.set_limit(Limit::SQLITE_LIMIT_ATTACHED, 0);
        let message = db
            .execute_batch(&format!("VACUUM INTO '{target}'"))
            .unwrap_err()
            .to_string();
        assert!(message.contains("too many attached databases"), "{message}");
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert!(left.is_empty(), "files written: {left:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_runaway_statement_is_stopped_by_its_step_budget() {
        let cte = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) \
                   UPDATE kv SET value = (SELECT max(x) FROM c) WHERE key = :key";
        let message = Sql::check(cte).unwrap_err();
        assert!(
            message.contains("budget of 1000000 SQLite steps"),
            "{message}"
        );
        // A bounded recursion is fine.
        let bounded = cte.replace("FROM c)", "FROM c WHERE x < 100)");
        Sql::check(&bounded).unwrap();
    }
}
