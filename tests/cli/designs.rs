//! `fencesim designs`: what a scenario's `design = "…"` can name, with keys.

use crate::fencesim;

/// The lines of the design `name`'s entry: its summary line and its keys,
/// up to the next design or section.
fn entry<'a>(stdout: &'a str, name: &str) -> Vec<&'a str> {
    let mut lines = stdout.lines().skip_while(|l| {
        l.strip_prefix("  ")
            .and_then(|l| l.split_whitespace().next())
            != Some(name)
    });
    let Some(first) = lines.next() else {
        panic!("`designs` lists {name}:\n{stdout}");
    };
    // Keys are indented deeper than designs.
    std::iter::once(first)
        .chain(lines.take_while(|l| l.starts_with("      ")))
        .collect()
}

fn keys<'a>(entry: &[&'a str]) -> Vec<&'a str> {
    entry[1..]
        .iter()
        .filter_map(|l| l.split_whitespace().next())
        .collect()
}

#[test]
fn lists_the_builtin_designs_with_their_keys() {
    let out = fencesim(&["designs"]);
    out.expect_code(0);
    let lease = entry(&out.stdout, "lease");
    assert_eq!(
        keys(&lease),
        [
            "ttl",
            "tokens",
            "first_token",
            "durable",
            "stonith",
            "stonith_restart",
            "renew_rearms"
        ]
    );
    let epoch = entry(&out.stdout, "epoch");
    assert_eq!(
        keys(&epoch),
        [
            "nodes",
            "ttl",
            "heartbeat",
            "timeout",
            "drift_factor",
            "tokens",
            "durable",
            "stonith",
            "stonith_restart"
        ]
    );
    let unchecked = entry(&out.stdout, "unchecked");
    assert!(keys(&unchecked).is_empty(), "{unchecked:#?}");
    let fenced = entry(&out.stdout, "fenced");
    assert_eq!(keys(&fenced), ["durable", "scope"]);
    let etcd = entry(&out.stdout, "etcd");
    assert_eq!(keys(&etcd), ["ttl", "keepalive", "tokens"]);
    assert_eq!(keys(&entry(&out.stdout, "cas")), ["api"]);
    assert_eq!(keys(&entry(&out.stdout, "sql")), ["update"]);
    let postgres = entry(&out.stdout, "postgres");
    assert_eq!(
        keys(&postgres),
        [
            "tcp_keepalives_idle",
            "tcp_keepalives_interval",
            "tcp_keepalives_count",
            "idle_session_timeout",
            "idle_in_transaction_session_timeout",
            "in_transaction",
            "pooler",
            "tokens",
            "first_token"
        ]
    );
    assert!(postgres
        .iter()
        .any(|l| l.contains("pooler") && l.contains("none | session | transaction")));
    // Each key shows its default, as the scenario format relies on them.
    assert!(lease
        .iter()
        .any(|l| l.contains("ttl") && l.contains("\"10s\"")));
}

#[test]
fn lock_and_storage_designs_are_apart() {
    let out = fencesim(&["designs"]);
    out.expect_code(0);
    let lock = out.stdout.find("lock designs:").expect("a lock section");
    let storage = out
        .stdout
        .find("storage designs:")
        .expect("a storage section");
    let at = |name: &str| out.stdout.find(&format!("  {name} ")).unwrap();
    assert!(lock < at("lease") && at("lease") < storage);
    assert!(storage < at("unchecked") && storage < at("fenced"));
}

#[test]
fn lists_the_client_keys_with_their_defaults() {
    let out = fencesim(&["designs"]);
    out.expect_code(0);
    let clients = out
        .stdout
        .split("client keys ([[clients]]):")
        .nth(1)
        .expect("a client keys section")
        .split("\nclient processes")
        .next()
        .unwrap();
    let keys: Vec<&str> = clients
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(
        keys,
        [
            "name",
            "start",
            "rounds",
            "work",
            "workload",
            "retry",
            "timeout",
            "check_lease",
            "renew",
            "fence_on_acquire",
            "precondition"
        ]
    );
    assert!(clients
        .lines()
        .any(|l| l.contains("fence_on_acquire") && l.contains("default false")));
}

#[test]
fn lists_the_client_processes_with_their_own_keys() {
    let out = fencesim(&["designs"]);
    out.expect_code(0);
    let processes = out
        .stdout
        .split("client processes ([[clients]] process = \"NAME\"):")
        .nth(1)
        .expect("a client processes section");
    for name in ["rounds", "etcd-mutex", "leader-elector"] {
        assert!(processes.contains(&format!("\n  {name} ")), "{processes}");
    }
    assert!(
        processes.contains("speaks to the lock designs etcd\n"),
        "{processes}"
    );
    assert!(processes.contains("      renew_deadline "), "{processes}");
}
