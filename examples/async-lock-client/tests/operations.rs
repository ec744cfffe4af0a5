//! The seam's wider operations (`async_lock_client::operations`) on
//! fencesim's simulated clients: SQL transactions and advisory locks on the
//! `sql` storage, Redis counters and the fenced-write script on the `redis`
//! lock node, etcd's keys, leases and transactions on the `etcd` lock node.
//! `.ci/real-servers.sh` runs the same functions against real servers.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use async_lock_client::operations::{etcd_operations, redis_operations, sql_operations, Seen};
use fencesim::design::catalog::Registry;
use fencesim::oracle::Verdict;
use fencesim::process::{etcd, redis, sql, Process};
use fencesim::runner;
use fencesim::scenario::load_str;

/// What each process's checks gave, by service.
static SEEN: Mutex<BTreeMap<&'static str, Result<Vec<String>, String>>> =
    Mutex::new(BTreeMap::new());

fn record(service: &'static str, seen: Result<Seen, String>) {
    SEEN.lock().unwrap().insert(service, seen.map(|s| s.lines));
}

fn registry() -> Registry {
    let timeout = Duration::from_secs(1);
    let mut registry = Registry::builtin();
    registry.add_process("sql-operations", "sql_operations", move |config, _| {
        let storage = config.storage.clone();
        Process::new(move |h| {
            let storage = storage.clone();
            async move {
                let a = sql::Pool::connect(&h, &storage, timeout);
                let b = sql::Pool::connect(&h, &storage, timeout);
                record("sql", sql_operations(&a, &b, "x", 7).await);
            }
        })
    });
    registry.add_process("redis-operations", "redis_operations", move |_, locks| {
        let lock = locks[0].clone();
        Process::new(move |h| {
            let lock = lock.clone();
            async move {
                let client = redis::Client::connect(&h, &lock, timeout);
                record("redis", redis_operations(&client, "ops").await);
            }
        })
    });
    registry.add_process("etcd-operations", "etcd_operations", move |_, locks| {
        let lock = locks[0].clone();
        Process::new(move |h| {
            let lock = lock.clone();
            async move {
                let options = etcd::ConnectOptions::new().with_timeout(timeout);
                let client = etcd::Client::connect(&h, &lock, options);
                record("etcd", etcd_operations(&client, "ops").await);
            }
        })
    });
    registry
}

/// Runs the process `<service>-operations` alone against the lock `lock`
/// and the fenced `sql` storage: the lines its checks gave.
fn run(service: &'static str, lock: &str) -> Vec<String> {
    let text = format!(
        r#"
name = "{service}-operations"
seed = 1
duration = "1m"

[lock]
design = "{lock}"
ttl = "10s"
tokens = true

[storage]
design = "sql"
update = "UPDATE kv SET value = :value, lock_token = :token WHERE key = :key AND lock_token <= :token"

[network]
latency = ["1ms", "5ms"]

[[clients]]
name = "client1"
process = "{service}-operations"
rounds = 1
"#
    );
    let s = load_str(&registry(), "operations.toml", &text).unwrap_or_else(|e| panic!("{e}"));
    let run = runner::run(&s, s.seed);
    assert_ne!(run.report.verdict, Verdict::Violation, "{service}");
    let seen = SEEN.lock().unwrap().remove(service);
    match seen {
        Some(Ok(lines)) => lines,
        Some(Err(failed)) => panic!("{service}: {failed}"),
        None => panic!("{service}: the process did not finish"),
    }
}

#[test]
fn sql_transactions_and_advisory_locks_on_the_simulated_database() {
    let lines = run("sql", "lease");
    assert_eq!(lines.len(), 17, "{lines:#?}");
}

#[test]
fn redis_counters_and_the_fenced_write_script_on_the_simulated_node() {
    let lines = run("redis", "redis");
    assert_eq!(lines.len(), 8, "{lines:#?}");
}

#[test]
fn etcd_keys_leases_and_transactions_on_the_simulated_server() {
    let lines = run("etcd", "etcd");
    assert_eq!(lines.len(), 12, "{lines:#?}");
}
