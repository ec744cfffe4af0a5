//! The `cas`, `sql` and per-key `fenced` storages in scenarios.

use fencesim::design::catalog::Registry;
use fencesim::oracle::Verdict;
use fencesim::scenario::load_str;

use crate::run;

/// A service takes a lease (ZooKeeper in the original story; the `lease`
/// lock here, without tokens) and read-modify-writes an object in an
/// S3-like store. A Kubernetes preemption pauses it between its read and its
/// write, past the lease; the next holder increments meanwhile.
fn preempted(storage: &str, workload: &str) -> String {
    format!(
        r#"name = "lease-s3-preemption"
description = "A leased writer to an S3-like store, paused by a preemption."
duration = "1m"
[lock]
design = "lease"
tokens = false
[storage]
design = "{storage}"
[[clients]]
name = "client1"
workload = "{workload}"
[[clients]]
name = "client2"
start = "12s"
workload = "{workload}"
[[faults]]
kind = "pause"
node = "client1"
after = "{after}"
duration = "15s"
"#,
        // For increments, client1 is paused while the storage's answer to
        // its read is on its way: between its read and its write.
        after = if workload == "increment" {
            "storage:send"
        } else {
            "client1:acquired"
        }
    )
}

#[test]
fn without_a_condition_the_preempted_writer_loses_an_update() {
    let r = run("storage.toml", &preempted("unchecked", "increment")).report;
    assert_eq!(r.verdict, Verdict::Violation, "{r:#?}");
    assert_eq!((r.lost_updates, r.stale_writes), (1, 1), "{r:#?}");
}

#[test]
fn cas_rejects_the_preempted_writers_write_at_an_old_version() {
    let run = run("storage.toml", &preempted("cas", "increment"));
    let r = &run.report;
    assert_eq!(r.verdict, Verdict::Safe, "{r:#?}");
    assert_eq!((r.accepted_writes, r.rejected_writes), (1, 1), "{r:#?}");
    assert_eq!(r.lost_updates, 0);
    let rejected = run
        .result
        .journal
        .events()
        .iter()
        .find(|e| e.kind == "rejected")
        .unwrap();
    assert_eq!(
        rejected.get("reason").unwrap().to_string(),
        "version 0 != 1"
    );
}

#[test]
fn cas_has_nothing_to_compare_for_a_blind_write() {
    let r = run("storage.toml", &preempted("cas", "write")).report;
    assert_eq!(r.verdict, Verdict::Violation, "{r:#?}");
    assert_eq!(r.stale_writes, 1, "{r:#?}");
}

/// DDIA figure 9-6 against a SQL storage running `update`; with `duplicate`
/// the network delivers client2's write twice, under the same token.
fn sql(update: &str, duplicate: bool) -> String {
    let mut text = format!(
        r#"name = "sql"
description = "Figure 9-6 against a SQL conditional UPDATE."
duration = "1m"
[lock]
design = "lease"
first_token = 33
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
    );
    if duplicate {
        text.push_str(
            r#"[[faults]]
kind = "duplicate"
from = "client2"
to = "storage"
after = "client2:wrote"
"#,
        );
    }
    text
}

const AT_MOST: &str = "UPDATE kv SET value = :value, lock_token = :token \
                       WHERE key = :key AND lock_token <= :token";

#[test]
fn sql_with_lock_token_at_most_fences_and_accepts_a_holders_repeat() {
    let r = run("storage.toml", &sql(AT_MOST, true)).report;
    assert_eq!(r.verdict, Verdict::Safe, "{r:#?}");
    assert_eq!((r.accepted_writes, r.rejected_writes), (2, 1), "{r:#?}");
    assert_eq!(r.false_rejections, 0);
}

#[test]
fn sql_with_lock_token_below_rejects_the_holders_own_repeat() {
    let r = run("storage.toml", &sql(&AT_MOST.replace("<=", "<"), true)).report;
    assert_eq!(r.verdict, Verdict::Safe, "{r:#?}");
    assert_eq!((r.accepted_writes, r.rejected_writes), (1, 2), "{r:#?}");
    assert_eq!(r.false_rejections, 1, "{r:#?}");
}

#[test]
fn sql_without_a_token_condition_accepts_a_stale_write() {
    let r = run(
        "storage.toml",
        &sql("UPDATE kv SET value = :value WHERE key = :key", false),
    )
    .report;
    assert_eq!(r.verdict, Verdict::Violation, "{r:#?}");
    assert_eq!(r.stale_writes, 1, "{r:#?}");
}

#[test]
fn sql_refuses_a_bad_statement_at_load_time_at_its_key() {
    let text = sql("UPDATE kv SET valu = :value WHERE key = :key", false);
    let err = load_str(&Registry::builtin(), "t.toml", &text).unwrap_err();
    let shown = err.to_string();
    assert!(shown.contains("update: invalid SQL"), "{shown}");
    assert!(shown.contains("t.toml:9:"), "{shown}");
}

#[test]
fn fenced_scope_is_global_by_default_and_may_be_per_key() {
    let text = sql(AT_MOST, false).replace(
        "design = \"sql\"\nupdate",
        "design = \"fenced\"\nscope = \"key\"\n# update",
    );
    let r = run("storage.toml", &text).report;
    assert_eq!((r.verdict, r.rejected_writes), (Verdict::Safe, 1), "{r:#?}");
    let bad = text.replace("\"key\"", "\"row\"");
    let err = load_str(&Registry::builtin(), "t.toml", &bad).unwrap_err();
    assert!(err.to_string().contains("global, key"), "{err}");
}

/// Loads `text` and returns the error's location and message.
fn refused(text: &str) -> (String, String) {
    let err = load_str(&Registry::builtin(), "t.toml", text).unwrap_err();
    (err.location(), err.message)
}

#[test]
fn sql_refuses_at_load_a_statement_that_used_to_fail_at_run_time() {
    // `value` holds integers: text there used to panic the storage's reads.
    let text = sql(
        "UPDATE kv SET value = :key, lock_token = :token WHERE key = :key AND lock_token <= :token",
        false,
    );
    let (location, message) = refused(&text);
    assert_eq!(location, "t.toml:9:10");
    assert!(
        message.starts_with("update: the statement fails on a sample write"),
        "{message}"
    );
}

#[test]
fn sql_refuses_what_is_not_one_update_of_kv() {
    for (update, needle) in [
        ("DROP TABLE kv", "changes the schema"),
        ("CREATE TABLE t (x INTEGER)", "changes the schema"),
        (
            "UPDATE kv SET value = :value WHERE key = :key RETURNING lock_token",
            "RETURNING is not supported",
        ),
        (
            "UPDATE kv SET value = :value WHERE key = :key; VACUUM INTO 'copy.db'",
            "only one statement",
        ),
        ("VACUUM INTO 'copy.db'", "must be an UPDATE of `kv`"),
        ("PRAGMA journal_mode = WAL", "PRAGMA"),
    ] {
        let (location, message) = refused(&sql(update, false));
        assert_eq!(location, "t.toml:9:10", "{update}");
        assert!(message.contains(needle), "{update}: {message}");
    }
}

#[test]
fn sql_stops_an_unbounded_recursive_cte_at_load() {
    let cte = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) \
               UPDATE kv SET value = (SELECT max(x) FROM c) WHERE key = :key";
    let (location, message) = refused(&sql(cte, false));
    assert_eq!(location, "t.toml:9:10");
    assert!(
        message.contains("ran past its budget of 1000000 SQLite steps"),
        "{message}"
    );
}

/// Runs `update` in figure 9-6 and returns the crash message of its
/// storage: the statement passes its load-time trial, then does something
/// the sandbox stops on a run's data.
fn crash_of(update: &str) -> String {
    let scenario = load_str(&Registry::builtin(), "t.toml", &sql(update, false)).unwrap();
    let run = fencesim::runner::run(&scenario, scenario.seed);
    let sim::Outcome::Crashed { node, message } = &run.result.outcome else {
        panic!("the run ends as crashed: {:?}", run.result.outcome);
    };
    assert_eq!(node.as_deref(), Some("storage"));
    assert!(!run.expectations_met, "a crashed run meets no expectation");
    message.clone()
}

#[test]
fn sql_ends_a_run_whose_statement_reads_the_host_on_its_data() {
    // The trial's token 1 never asks for the time zone; client2's 34 does.
    let update = "UPDATE kv SET value = :value, lock_token = :token + 0 * \
                  strftime('%H', 0, CASE WHEN :token = 34 THEN 'local' || 'time' ELSE '+1 day' END) \
                  WHERE key = :key AND lock_token <= :token";
    let message = crash_of(update);
    assert!(
        message.contains("`strftime` with 'localtime', which reads the host's time zone"),
        "{message}"
    );
}

#[test]
fn sql_ends_a_run_whose_statement_needs_too_much_memory_on_its_data() {
    // A few rows for the trial's token 1; 20 000 rows of 4 000 bytes, 80 MB
    // of sort, for client2's 34.
    let update = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c \
                  WHERE x < 10 OR (:token = 34 AND x < 20000)) \
                  UPDATE kv SET value = (SELECT count(*) FROM \
                  (SELECT printf('%.*c', 4000, 'a') || x AS s FROM c GROUP BY s)) WHERE key = :key";
    let message = crash_of(update);
    assert!(
        message.contains("needed more than its budget of 64 MiB of memory"),
        "{message}"
    );
}

#[test]
fn sql_memory_bound_gives_a_seed_the_same_run_alone_or_after_others() {
    // Client2's write sorts 16 600 or 16 700 rows of about 4 000 bytes: just
    // inside the 64 MiB bound, and just past it. Which one fits must not
    // depend on what ran on the thread before.
    for (rows, outcome) in [(16_600, "completed"), (16_700, "crashed")] {
        let update = format!(
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c \
             WHERE x < 10 OR (:token = 34 AND x < {rows})) \
             UPDATE kv SET value = :value + 0 * (SELECT count(*) FROM \
             (SELECT printf('%.*c', 4000, 'a') || x AS s FROM c GROUP BY s)), \
             lock_token = :token WHERE key = :key AND lock_token <= :token"
        );
        let scenario = load_str(&Registry::builtin(), "t.toml", &sql(&update, false)).unwrap();
        let alone = fencesim::runner::run(&scenario, scenario.seed);
        assert_eq!(alone.result.outcome.as_str(), outcome, "{rows} rows");
        let fenced = load_str(&Registry::builtin(), "f.toml", &sql(AT_MOST, true)).unwrap();
        for _ in 0..3 {
            // Other SQL runs on this thread first, as in a sweep.
            fencesim::runner::RunConfig::new(fenced.seed)
                .here()
                .run(&fenced);
            let run = fencesim::runner::RunConfig::new(scenario.seed)
                .here()
                .run(&scenario);
            assert_eq!(run.result.outcome, alone.result.outcome, "{rows} rows");
            assert_eq!(run.trace_hash(), alone.trace_hash(), "{rows} rows");
        }
    }
}

#[test]
fn sql_ends_a_run_whose_statement_runs_away_on_its_data() {
    // Bounded for the sample write's token 1; endless for client2's 34.
    let update = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c \
                  WHERE x < 10 OR :token = 34) \
                  UPDATE kv SET value = (SELECT max(x) FROM c) WHERE key = :key";
    let scenario = load_str(&Registry::builtin(), "t.toml", &sql(update, false)).unwrap();
    let run = fencesim::runner::run(&scenario, scenario.seed);
    let sim::Outcome::Crashed { node, message } = &run.result.outcome else {
        panic!("the run ends as crashed: {:?}", run.result.outcome);
    };
    assert_eq!(node.as_deref(), Some("storage"));
    assert!(
        message.contains("budget of 1000000 SQLite steps"),
        "{message}"
    );
    assert!(!run.expectations_met, "a crashed run meets no expectation");
}
