//! `redis`: one node, SET NX PX on its wall clock.

use fencesim::oracle::Verdict;

use crate::{assert_counts, events, first, run};

/// client1 takes the lock and works 5 s before writing; client2 asks at 2 s.
/// `{lock}` and `{faults}` complete the story.
fn story(lock: &str, storage: &str, faults: &str, expect: &str) -> String {
    format!(
        r#"
name = "redis"
description = "A Redis lock node and two clients."
seed = 1
duration = "1m"

[lock]
design = "redis"
ttl = "10s"
{lock}

[storage]
design = "{storage}"

[[clients]]
name = "client1"
work = "5s"

[[clients]]
name = "client2"
start = "2s"
work = "1s"

{faults}

[expect]
{expect}
"#
    )
}

const CRASH: &str = r#"
[[faults]]
kind = "crash"
node = "lock"
after = "lock:granted"
restart_after = "1s"
"#;

#[test]
fn without_faults_the_second_client_waits_for_the_release() {
    let run = run(
        "redis-calm",
        &story("", "unchecked", "", r#"verdict = "safe""#),
    );
    assert_counts(&run, Verdict::Safe, 0, 0);
    assert!(first(&run, "lock", "released") < first(&run, "client2", "acquired"));
    assert!(!events(&run, "client2", "denied").is_empty());
}

/// Kleppmann 2016: "if Redis restarts without persistence, a second client
/// can acquire the lock" while the first still believes it holds it.
#[test]
fn a_restart_without_persistence_lets_a_second_client_in_and_a_stale_write_through() {
    let run = run(
        "redis-restart-volatile",
        &story(
            "durable = false",
            "unchecked",
            CRASH,
            "verdict = \"violation\"\nstale_writes = 1\naccepted_writes = 2",
        ),
    );
    assert_counts(&run, Verdict::Violation, 1, 1);
    // The restarted node reports the lost key as the end of client1's grant.
    let expired = &events(&run, "lock", "expired")[0];
    assert_eq!(expired.str("client"), Some("client1"));
    assert_eq!(expired.str("reason"), Some("restart"));
    assert!(first(&run, "lock", "restart") < expired.seq);
    assert!(first(&run, "client2", "acquired") < first(&run, "client1", "released"));
}

#[test]
fn a_restart_without_persistence_hands_out_the_first_token_again() {
    let run = run(
        "redis-restart-volatile-tokens",
        &story(
            "durable = false\ntokens = true\nfirst_token = 33",
            "fenced",
            CRASH,
            "verdict = \"violation\"\ntoken_regressions = 1",
        ),
    );
    let tokens: Vec<Option<u64>> = ["client1", "client2"]
        .iter()
        .map(|c| events(&run, c, "acquired")[0].u64("token"))
        .collect();
    assert_eq!(tokens, [Some(33), Some(33)]);
    // The fence accepts an equal token, so the older holder's later write
    // still lands after the newer one's.
    assert_counts(&run, Verdict::Violation, 1, 1);
    assert_eq!(run.report.token_regressions, 1);
}

#[test]
fn with_persistence_a_restart_keeps_the_lock() {
    let run = run(
        "redis-restart-durable",
        &story(
            "durable = true\ntokens = true",
            "fenced",
            CRASH,
            "verdict = \"safe\"\ntoken_regressions = 0",
        ),
    );
    assert_counts(&run, Verdict::Safe, 0, 0);
    assert!(events(&run, "lock", "expired").is_empty());
    assert_eq!(events(&run, "client2", "acquired")[0].u64("token"), Some(2));
}

/// The key's deadline is on the wall clock: a jump forward expires it early.
#[test]
fn a_wall_clock_jump_expires_the_key_early() {
    let faults = r#"
[[faults]]
kind = "clock"
node = "lock"
after = "client1:acquired"
jump = "+20s"
"#;
    let run = run(
        "redis-clock-jump",
        &story(
            "",
            "unchecked",
            faults,
            "verdict = \"violation\"\nstale_writes = 1",
        ),
    );
    assert_counts(&run, Verdict::Violation, 1, 1);
    let expired = events(&run, "lock", "expired")[0];
    let acquired = events(&run, "client1", "acquired")[0];
    // Noticed by the expire cycle (every 100 ms), seconds before the TTL.
    assert!(expired.t_ns - acquired.t_ns <= 200_000_000, "{expired:?}");
    assert!(expired.seq < first(&run, "client2", "acquired"));
}

#[test]
fn a_wall_clock_jump_back_keeps_the_key_past_its_ttl() {
    // client1 is paused for 20 s after acquiring; the lock's wall clock steps
    // back 5 s, so the key lives 15 s of true time instead of 10 s.
    let faults = r#"
[[faults]]
kind = "pause"
node = "client1"
after = "client1:acquired"
duration = "20s"

[[faults]]
kind = "clock"
node = "lock"
after = "client1:acquired"
jump = "-5s"
"#;
    let run = run(
        "redis-clock-back",
        &story(
            "",
            "unchecked",
            faults,
            "verdict = \"violation\"\nstale_writes = 1",
        ),
    );
    let s = 1_000_000_000;
    let expired = events(&run, "lock", "expired")[0];
    assert!(
        (15 * s..15 * s + 200_000_000).contains(&expired.t_ns),
        "{expired:?}"
    );
    assert!(events(&run, "client2", "acquired")[0].t_ns > 15 * s);
}

#[test]
fn the_registry_lists_both_designs_with_their_keys() {
    use fencesim::design::catalog::Role;
    let registry = fencesim::design::catalog::Registry::builtin();
    let keys = |name: &str| -> Vec<&str> {
        let info = registry.get(Role::Lock, name).expect("registered");
        info.keys.iter().map(|k| k.name).collect()
    };
    assert_eq!(
        keys("redis"),
        ["ttl", "tokens", "first_token", "durable", "release"]
    );
    assert_eq!(
        keys("redlock"),
        [
            "nodes",
            "ttl",
            "timeout",
            "drift_factor",
            "tokens",
            "durable",
            "quorum"
        ]
    );
}
