//! SQLite's date and time functions without the host: `date`, `time`,
//! `datetime`, `julianday`, `unixepoch`, `strftime` and `timediff` are
//! replaced on the storage's connection by functions that look at the
//! values they are called with, refuse the ones that would read the host
//! (the time value `'now'`, or none at all, reads its clock; the modifiers
//! `'localtime'` and `'utc'` read its time zone), and hand the others to
//! SQLite's own functions on a second connection.
//!
//! Looking at values, not at the statement's text, refuses a time value
//! however it is spelled: `'n' || 'ow'`, `upper('now')`, `'now' || char(0)`
//! (SQLite reads text up to its first NUL).

use std::sync::{Arc, Mutex};

use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::limits::Limit;
use rusqlite::types::{ToSqlOutput, Value, ValueRef};
use rusqlite::Connection;

/// The functions replaced, with their number of arguments (-1: any) and
/// whether their first argument is a format rather than a time value.
const DATE_FUNCTIONS: &[(&str, i32, bool)] = &[
    ("date", -1, false),
    ("time", -1, false),
    ("datetime", -1, false),
    ("julianday", -1, false),
    ("unixepoch", -1, false),
    ("strftime", -1, true),
    ("timediff", 2, false),
];

/// What a refused call reads, by the argument that asked for it.
const HOST_WORDS: &[(&str, &str)] = &[
    ("now", "the host's clock"),
    ("localtime", "the host's time zone"),
    ("utc", "the host's time zone"),
];

/// Why a call was refused: shared with the guard, which reports it.
pub(super) type Refusals = Arc<Mutex<Option<String>>>;

/// Replaces the date and time functions on `db`; a refused call fails its
/// statement and leaves its reason in `refusals`.
pub(super) fn install(db: &Connection, refusals: &Refusals, max_length: i32) -> Result<(), String> {
    let builtin = Connection::open_in_memory().map_err(|e| e.to_string())?;
    builtin.set_limit(Limit::SQLITE_LIMIT_LENGTH, max_length);
    builtin.set_limit(Limit::SQLITE_LIMIT_ATTACHED, 0);
    let builtin = Arc::new(Mutex::new(builtin));
    for &(name, n_arg, formatted) in DATE_FUNCTIONS {
        let builtin = Arc::clone(&builtin);
        let refusals = Arc::clone(refusals);
        db.create_scalar_function(
            name,
            n_arg,
            FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
            move |ctx| {
                if let Some(reason) = reads_host(name, formatted, ctx) {
                    let message = reason.clone();
                    refusals
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .get_or_insert(reason);
                    return Err(rusqlite::Error::UserFunctionError(message.into()));
                }
                let builtin = builtin.lock().unwrap_or_else(|e| e.into_inner());
                call_builtin(&builtin, name, ctx)
            },
        )
        .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Why calling `name` with `ctx`'s arguments would read the host, if it
/// would.
fn reads_host(name: &str, formatted: bool, ctx: &Context<'_>) -> Option<String> {
    let values = usize::from(formatted)..ctx.len();
    if values.is_empty() {
        return Some(format!(
            "the statement calls `{name}` without a time value, which reads the host's clock: \
             runs would differ from one moment to the next"
        ));
    }
    for i in values {
        let bytes = match ctx.get_raw(i) {
            ValueRef::Text(b) | ValueRef::Blob(b) => b,
            _ => continue,
        };
        let text = bytes.split(|&b| b == 0).next().unwrap_or_default();
        for (word, host) in HOST_WORDS {
            if text.eq_ignore_ascii_case(word.as_bytes()) {
                return Some(format!(
                    "the statement calls `{name}` with '{word}', which reads {host}: \
                     runs would differ from one machine or moment to the next"
                ));
            }
        }
    }
    None
}

/// SQLite's own `name` on `ctx`'s arguments.
fn call_builtin(builtin: &Connection, name: &str, ctx: &Context<'_>) -> rusqlite::Result<Value> {
    let placeholders: Vec<String> = (1..=ctx.len()).map(|i| format!("?{i}")).collect();
    let sql = format!("SELECT {name}({})", placeholders.join(", "));
    let mut stmt = builtin.prepare_cached(&sql)?;
    for i in 0..ctx.len() {
        stmt.raw_bind_parameter(i + 1, ToSqlOutput::Borrowed(ctx.get_raw(i)))?;
    }
    let mut rows = stmt.raw_query();
    match rows.next()? {
        Some(row) => row.get::<_, Value>(0),
        None => Ok(Value::Null),
    }
}
