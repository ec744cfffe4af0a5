//! The `sql` storage runs a statement from the scenario file: whatever it
//! says, `fencesim run` refuses it at load (exit 2, at the `update` key) or
//! runs it inside SQLite's sandbox. It never writes a file, never hangs and
//! never wraps a token.

use super::{fencesim, support, TempDir};

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
    let (code, stdout, stderr) = fencesim(&["run", file, "--json"]).into_parts();
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
    let file = dir.write("fits.toml", scenario(update, 1_000_000_000_000_000_000));
    let (code, stdout, stderr) = fencesim(&["run", file.to_str().unwrap(), "--json"]).into_parts();
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("\"accepted_writes\":1"), "{stdout}");
    assert!(stdout.contains("\"rejected_writes\":1"), "{stdout}");
}

/// Runs fencesim with no file writes allowed (`ulimit -f 0`: a write to
/// any file kills it with SIGXFSZ) and SQLite's temporary directory in
/// `tmp`: its exit code, stdout and stderr.
fn fencesim_writing_no_file(tmp: &TempDir, args: &[&str]) -> (i32, String, String) {
    let mut command = std::process::Command::new("sh");
    command
        .arg("-c")
        .arg("ulimit -f 0; exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_fencesim"))
        .env("SQLITE_TMPDIR", tmp.path())
        .env("TMPDIR", tmp.path());
    support::run(command, args).into_parts()
}

/// A fencing UPDATE that also groups `rows` strings of about 4 000 bytes.
fn group_by(rows: u32) -> String {
    format!(
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {rows}) \
         UPDATE kv SET value = :value + 0 * (SELECT count(*) FROM \
         (SELECT printf('%.*c', 4000, 'a') || x AS s FROM c GROUP BY s)), lock_token = :token \
         WHERE key = :key AND lock_token <= :token"
    )
}

#[test]
fn a_sort_stays_in_memory_and_one_too_big_for_it_is_refused() {
    let dir = TempDir::new("sort-scenario");
    let tmp = TempDir::new("sort-tmp");
    // 32 MB of sort: SQLite's default spills this to a temporary file.
    let file = dir.write("sort.toml", scenario(&group_by(8_000), 33));
    let (code, stdout, stderr) = fencesim_writing_no_file(&tmp, &["run", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    // 80 MB is past the statement's memory budget: refused at load.
    let file = dir.write("sort.toml", scenario(&group_by(20_000), 33));
    let (code, stdout, stderr) = fencesim_writing_no_file(&tmp, &["run", file.to_str().unwrap()]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("needed more than its budget of 64 MiB of memory"),
        "{stderr}"
    );
    let written: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(written.is_empty(), "files written: {written:?}");
}

#[test]
fn strings_longer_than_the_bound_are_refused() {
    let dir = TempDir::new("long-string");
    let update = "UPDATE kv SET value = length(printf('%.*c', 4000, 'a') || \
                  printf('%.*c', 4000, 'a')) WHERE key = :key";
    assert_refused(&dir, &scenario(update, 33), 9, 10, "string or blob too big");
}

#[test]
fn a_trial_that_would_take_minutes_stops_at_its_wall_clock_budget() {
    let dir = TempDir::new("slow-trial");
    // Each step searches a 4 000-byte string: 100 000 of them take minutes
    // but fewer than a million SQLite steps.
    let update =
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000) \
                  UPDATE kv SET value = (SELECT sum(instr(printf('%.*c', 4000, 'a'), \
                  printf('%.*c', 2000, 'a') || x)) FROM c) WHERE key = :key";
    let file = dir.write("slow.toml", scenario(update, 33));
    let started = std::time::Instant::now();
    let (code, stdout, stderr) = fencesim(&[
        "run",
        file.to_str().unwrap(),
        "--run-timeout",
        "1s",
        "--json",
    ])
    .into_parts();
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("trial ran past its budget of 1s of wall-clock time"),
        "{stderr}"
    );
    assert!(started.elapsed().as_secs() < 30, "{:?}", started.elapsed());
}

#[test]
fn a_date_function_that_reads_the_host_is_refused_however_it_is_spelled() {
    let dir = TempDir::new("host-time");
    let set = |expr: &str| {
        format!(
            "UPDATE kv SET value = :value, lock_token = :token + 0 * ({expr}) \
             WHERE key = :key AND lock_token <= :token"
        )
    };
    for (expr, needle) in [
        (
            "strftime('%H', 0, 'local' || 'time')",
            "`strftime` with 'localtime', which reads the host's time zone",
        ),
        (
            "unixepoch(0, upper('utc'))",
            "`unixepoch` with 'utc', which reads the host's time zone",
        ),
        (
            "julianday('n' || 'ow')",
            "`julianday` with 'now', which reads the host's clock",
        ),
        (
            "length(date('now' || char(0) || 'x'))",
            "`date` with 'now', which reads the host's clock",
        ),
        (
            "length(strftime('%s'))",
            "`strftime` without a time value, which reads the host's clock",
        ),
        ("timediff(0, 'NOW') IS NULL", "`timediff` with 'now'"),
        ("length(CURRENT_TIMESTAMP)", "calls `current_timestamp`"),
    ] {
        assert_refused(&dir, &scenario(&set(expr), 33), 9, 10, needle);
    }
    // Dates of the data, and modifiers that read nothing, run the same
    // under any time zone.
    let pure = set("strftime('%H', :token * 3600, 'unixepoch', '+1 day', 'start of month')");
    let file = dir.write("pure.toml", scenario(&pure, 33));
    let hashes: Vec<String> = ["UTC", "Europe/Paris", "Asia/Kolkata"]
        .into_iter()
        .map(|tz| {
            let mut command = support::command(support::crate_root());
            command.env("TZ", tz);
            let (code, stdout, _) =
                support::run(command, &["run", file.to_str().unwrap(), "--json"]).into_parts();
            assert_eq!(code, 0, "{tz}: {stdout}");
            let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
            json["trace_hash"].as_str().unwrap().to_owned()
        })
        .collect();
    assert!(hashes.iter().all(|h| *h == hashes[0]), "{hashes:?}");
}
