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
//! The table is `kv(key TEXT PRIMARY KEY, value INTEGER, lock_token INTEGER)`.
//! For each write the node first runs `INSERT OR IGNORE INTO kv VALUES (:key,
//! 0, 0)` (a key's row exists from its first write on, with token 0), then the
//! statement with the named parameters it uses among `:key`, `:value`,
//! `:token` (NULL for a write without a token) and `:version` (the version an
//! increment read, NULL for a blind write). The write is **accepted when the
//! statement changed a row** (`changes() > 0`), rejected otherwise; an SQL
//! error at run time (a constraint, say) is a rejection that names it. Reads
//! answer the row's `value`.
//!
//! What the statements show:
//! - `lock_token <= :token` fences and lets a holder write twice.
//! - `lock_token < :token`, the form often quoted, rejects the holder's own
//!   second write with the same token: a false rejection.
//! - `WHERE key = :key` alone checks nothing: a zombie's write lands.
//!
//! The statement is prepared when a scenario is loaded
//! ([`StorageDesign::validate`]): invalid SQL, an unknown parameter, a
//! statement that cannot change a row, or one that reads the time or
//! randomness (`random()`, `'now'`, `CURRENT_TIMESTAMP`, which would break
//! determinism) is an error at the `update` key. The database lives in the
//! node and survives its crashes: the data is durable.

use rusqlite::{Connection, Statement};
use sim::Actor;

use crate::design::catalog::{self, DesignInfo};
use crate::design::storage::{Decision, StorageNode, StoragePolicy, WriteRequest};
use crate::design::{ParamError, StorageDesign};
use crate::protocol::Msg;
use crate::scenario::Params;

/// The parameters a statement may use.
pub const PARAMETERS: &[&str] = &[":key", ":value", ":token", ":version"];

/// Substrings (lowercase) of SQL that reads time or randomness.
const NONDETERMINISTIC: &[&str] = &["random", "'now'", "current_time", "current_date"];

/// The `sql` design as the registry knows it.
#[derive(Clone, Copy, Debug, Default)]
pub struct SqlDesign;

impl StorageDesign for SqlDesign {
    fn info(&self) -> DesignInfo {
        catalog::SQL
    }

    fn server(&self, params: &Params) -> Box<dyn Actor<Msg>> {
        let sql = Sql::new(params.str("update"))
            .unwrap_or_else(|e| panic!("sql storage: invalid `update` statement: {e}"));
        Box::new(StorageNode::new(sql))
    }

    fn validate(&self, params: &Params) -> Result<(), ParamError> {
        Sql::new(params.str("update"))
            .map(drop)
            .map_err(|message| ParamError {
                key: "update",
                message,
            })
    }
}

/// The policy: an in-memory SQLite and the user's statement.
pub struct Sql {
    db: Connection,
    update: String,
}

impl std::fmt::Debug for Sql {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sql").field("update", &self.update).finish()
    }
}

impl Sql {
    /// A fresh database running `update` for each write; an error says why
    /// the statement cannot be used.
    pub fn new(update: &str) -> Result<Sql, String> {
        let lower = update.to_lowercase();
        if let Some(bad) = NONDETERMINISTIC.iter().find(|bad| lower.contains(*bad)) {
            return Err(format!(
                "the statement uses `{bad}`: time and randomness would make runs differ"
            ));
        }
        let db = Connection::open_in_memory().map_err(|e| e.to_string())?;
        db.execute_batch(
            "CREATE TABLE kv (key TEXT PRIMARY KEY, value INTEGER, lock_token INTEGER);",
        )
        .map_err(|e| e.to_string())?;
        {
            let stmt = db
                .prepare_cached(update)
                .map_err(|e| format!("invalid SQL: {e}"))?;
            if stmt.readonly() {
                return Err("the statement changes no row, so it would accept no write".into());
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
        }
        Ok(Sql {
            db,
            update: update.to_owned(),
        })
    }

    fn run(&self, w: &WriteRequest<'_>) -> rusqlite::Result<usize> {
        self.db.execute(
            "INSERT OR IGNORE INTO kv (key, value, lock_token) VALUES (?1, 0, 0)",
            [w.key],
        )?;
        let mut stmt = self.db.prepare_cached(&self.update)?;
        bind(&mut stmt, ":key", w.key)?;
        bind(&mut stmt, ":value", w.value)?;
        bind(&mut stmt, ":token", w.token.map(|t| t as i64))?;
        bind(&mut stmt, ":version", w.expect_version.map(|v| v as i64))?;
        stmt.raw_execute()?;
        Ok(self.db.changes() as usize)
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
            Err(e) => Decision::Reject {
                reason: format!("sql error: {e}"),
                max_token: None,
            },
        }
    }

    fn read(&mut self, key: &str) -> Option<i64> {
        let value = self
            .db
            .query_row("SELECT value FROM kv WHERE key = ?1", [key], |row| {
                row.get::<_, Option<i64>>(0)
            });
        match value {
            Ok(v) => Some(v.unwrap_or(0)),
            Err(rusqlite::Error::QueryReturnedNoRows) => Some(0),
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
                    .clone()
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

    #[test]
    fn bad_statements_are_refused_with_a_reason() {
        let err = |s: &str| Sql::new(s).unwrap_err();
        assert!(err("UPDATE kv SET valu = :value").contains("invalid SQL"));
        assert!(err("SELECT value FROM kv").contains("changes no row"));
        assert!(err("UPDATE kv SET value = :v WHERE key = :key").contains("unknown parameter :v"));
        assert!(err("UPDATE kv SET value = random()").contains("random"));
        assert!(err("UPDATE kv SET lock_token = strftime('%s', 'now')").contains("'now'"));
    }
}
