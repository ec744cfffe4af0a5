//! The `sql` storage runs a statement from the scenario file: whatever it
//! says, `fencesim run` refuses it at load (exit 2, at the `update` key) or
//! runs it inside SQLite's sandbox. It never writes a file, never hangs and
//! never wraps a token.

use super::{fencesim, TempDir};

/// Figure 9-6 against the `sql` storage running `update` (line 9), with
/// the lock's `first_token` on line 6.
fn scenario(update: &str, first_token: u64) -> String {
    format!(
        r#"name = "sql-sandbox"
description = "Figure 9-6 against a SQL storage."
duration = "1m"
[lock]
design = "lease"
first_token = {first_token}
[storage]
design = "sql"
update = "{update}"
[[clients]]
name = "client1"
[[clients]]
name = "client2"
start = "12s"
[[faults]]
kind = "pause"
node = "client1"
after = "client1:acquired"
duration = "15s"
"#
    )
}

/// Runs `scenario` from `dir` and asserts exit 2 with `needle` at `line:col`.
#[track_caller]
fn assert_refused(dir: &TempDir, text: &str, line: usize, col: usize, needle: &str) {
    let file = dir.write("sandbox.toml", text);
    let file = file.to_str().unwrap();
    let (code, stdout, stderr) = fencesim(&["run", file, "--json"]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains(&format!("{file}:{line}:{col}")), "{stderr}");
    assert!(stderr.contains(needle), "{stderr}");
    assert_eq!(stdout, "");
}

#[test]
fn vacuum_into_writes_no_file() {
    let out = TempDir::new("vacuum-target");
    let dir = TempDir::new("vacuum-scenario");
    let target = out.path().join("copy.db");
    let target = target.to_str().unwrap();
    let into_value = format!("{}/", out.path().to_str().unwrap());
    for (update, needle) in [
        (format!("VACUUM INTO '{target}'"), "must be an UPDATE of `kv`"),
        (
            format!("UPDATE kv SET value = :value WHERE key = :key; VACUUM INTO '{target}'"),
            "only one statement",
        ),
        (
            format!("UPDATE kv SET value = :value WHERE key = :key; VACUUM INTO '{into_value}' || :value"),
            "only one statement",
        ),
        (format!("ATTACH DATABASE '{target}' AS copy"), "attaches"),
    ] {
        assert_refused(&dir, &scenario(&update, 33), 9, 10, needle);
    }
    let written: Vec<_> = std::fs::read_dir(out.path()).unwrap().collect();
    assert!(written.is_empty(), "files written: {written:?}");
}

#[test]
fn an_unbounded_recursive_cte_is_refused_not_run_forever() {
    let dir = TempDir::new("cte");
    let cte = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) \
               UPDATE kv SET value = (SELECT max(x) FROM c) WHERE key = :key";
    assert_refused(
        &dir,
        &scenario(cte, 33),
        9,
        10,
        "ran past its budget of 1000000 SQLite steps",
    );
}

#[test]
fn drop_table_and_returning_are_refused() {
    let dir = TempDir::new("drop-returning");
    assert_refused(
        &dir,
        &scenario("DROP TABLE kv", 33),
        9,
        10,
        "changes the schema",
    );
    let returning = "UPDATE kv SET value = :value WHERE key = :key RETURNING value";
    assert_refused(
        &dir,
        &scenario(returning, 33),
        9,
        10,
        "RETURNING is not supported",
    );
}

#[test]
fn a_statement_that_panicked_at_run_time_is_refused_at_load() {
    let dir = TempDir::new("text-value");
    let update = "UPDATE kv SET value = :key, lock_token = :token \
                  WHERE key = :key AND lock_token <= :token";
    assert_refused(
        &dir,
        &scenario(update, 33),
        9,
        10,
        "the statement fails on a sample write",
    );
}

#[test]
fn tokens_that_do_not_fit_sqlite_are_refused() {
    let dir = TempDir::new("big-token");
    let update = "UPDATE kv SET value = :value, lock_token = :token \
                  WHERE key = :key AND lock_token <= :token";
    assert_refused(
        &dir,
        &scenario(update, i64::MAX as u64),
        6,
        15,
        "`first_token`: 9223372036854775807 is out of range: expected 0..=1000000000000000000",
    );
    // The largest first token runs, and fences: no wrap to a negative token.
    let file = dir.write("fits.toml", &scenario(update, 1_000_000_000_000_000_000));
    let (code, stdout, stderr) = fencesim(&["run", file.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("\"accepted_writes\":1"), "{stdout}");
    assert!(stdout.contains("\"rejected_writes\":1"), "{stdout}");
}
