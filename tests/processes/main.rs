//! Lock clients as async processes: the bundled client's rounds written as
//! async code (`process = "rounds"`) run the same journal as the bundled
//! client, event for event.

mod storages;
mod stories;

use std::path::Path;

use fencesim::design::catalog::Registry;
use fencesim::explore::random::scenario_for_seed;
use fencesim::oracle::Verdict;
use fencesim::runner::run;
use fencesim::scenario::{load_file, load_str, Scenario};

fn scenario(file: &str) -> Scenario {
    load_file(&Registry::builtin(), Path::new(file)).expect("a bundled scenario loads")
}

/// Where two journals part, for a failure message.
fn parting(a: &str, b: &str) -> String {
    let at = a.lines().zip(b.lines()).position(|(x, y)| x != y);
    match at {
        Some(i) => format!(
            "line {i}:\n  {}\n  {}",
            a.lines().nth(i).unwrap(),
            b.lines().nth(i).unwrap()
        ),
        None => format!(
            "one is longer: {} vs {} lines",
            a.lines().count(),
            b.lines().count()
        ),
    }
}

#[test]
fn figure_9_6_async_journals_what_figure_9_6_does() {
    let actors = scenario("scenarios/figure-9-6.toml");
    let processes = scenario("scenarios/figure-9-6-async.toml");
    for seed in [actors.seed, 2, 3, 40] {
        let a = run(&actors, seed);
        let p = run(&processes, seed);
        assert_eq!(a.report.verdict, Verdict::Safe);
        assert_eq!(
            a.report.rejected_writes, 1,
            "seed {seed}: the zombie's write is rejected"
        );
        let (a, p) = (a.result.journal.to_jsonl(), p.result.journal.to_jsonl());
        assert!(a == p, "seed {seed}: {}", parting(&a, &p));
    }
}

#[test]
fn figure_9_6_async_matches_under_random_faults() {
    // Faults drawn per seed (pauses anchored on the clients' events, crashes
    // and restarts, clock changes, delays, losses, duplicates, partitions):
    // whatever happens, the async client does what the bundled one does.
    let actors = scenario("scenarios/figure-9-6.toml");
    let processes = scenario("scenarios/figure-9-6-async.toml");
    let mut differ = Vec::new();
    for seed in 0..2_000 {
        let a = run(&scenario_for_seed(&actors, seed), seed);
        let p = run(&scenario_for_seed(&processes, seed), seed);
        if a.result.journal.to_jsonl() != p.result.journal.to_jsonl() {
            differ.push(seed);
        }
    }
    assert!(
        differ.is_empty(),
        "{} seeds differ, the first: {:?}",
        differ.len(),
        &differ[..differ.len().min(10)]
    );
}

#[test]
fn a_process_that_cannot_do_a_clients_settings_is_refused_at_load() {
    let text = std::fs::read_to_string("scenarios/figure-9-6-async.toml")
        .unwrap()
        .replace(
            "rounds = 1\nwork = \"1s\"",
            "rounds = 1\nwork = \"1s\"\ncheck_lease = true",
        );
    let err = load_str(&Registry::builtin(), "t.toml", &text)
        .unwrap_err()
        .to_string();
    assert!(err.contains("t.toml:"), "{err}");
    assert!(
        err.contains("process `rounds`") && err.contains("check_lease"),
        "{err}"
    );
    let text = text.replace(
        "name = \"client1\"\nprocess = \"rounds\"",
        "name = \"client1\"\nprocess = \"nope\"",
    );
    let err = load_str(&Registry::builtin(), "t.toml", &text)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("unknown process `nope`: the processes are rounds, "),
        "{err}"
    );
}

#[test]
fn a_process_given_a_lock_it_does_not_speak_to_is_refused_at_load() {
    let text = std::fs::read_to_string("scenarios/etcd-mutex-async.toml")
        .unwrap()
        .replace("design = \"etcd\"", "design = \"zookeeper\"");
    let err = load_str(&Registry::builtin(), "t.toml", &text).unwrap_err();
    assert_eq!(err.line, 24, "{err}");
    assert!(
        err.message
            .contains("process `etcd-mutex` speaks to the lock designs etcd, not to `zookeeper`"),
        "{err}"
    );
}

/// figure-9-6-async with client1 running `process`, registered beside the
/// bundled ones.
fn with_client1(
    name: &'static str,
    make: impl Fn(
            &fencesim::design::client::ClientConfig,
            &[String],
        ) -> fencesim::process::Process<fencesim::protocol::Msg>
        + Send
        + Sync
        + 'static,
) -> Scenario {
    let mut registry = Registry::builtin();
    registry.add_process(name, "a test's client", make);
    let text = std::fs::read_to_string("scenarios/figure-9-6-async.toml")
        .unwrap()
        .replace(
            "name = \"client1\"\nprocess = \"rounds\"",
            &format!("name = \"client1\"\nprocess = \"{name}\""),
        );
    load_str(&registry, "t.toml", &text).expect("the scenario loads")
}

fn error_saying(s: &Scenario, words: &str) {
    let run = run(s, s.seed);
    assert_eq!(
        run.report.verdict,
        Verdict::Error,
        "{}",
        run.result.journal.to_jsonl()
    );
    // An error, whatever `[expect]` asked for: not a failed expectation.
    assert_eq!(run.status, fencesim::runner::RunStatus::Error);
    let said = run.report.untrusted.join("\n");
    assert!(said.contains(words), "{said}");
}

#[test]
fn a_write_no_client_journaled_ends_the_run_as_an_error() {
    use fencesim::protocol::{Msg, Op};
    let s = with_client1("sends-itself", |_, _| {
        fencesim::process::Process::new(|h| async move {
            let storage = h.node("storage").unwrap();
            h.send(
                storage,
                Msg::Write {
                    write: "client1/1".into(),
                    token: Some(99),
                    key: "x".into(),
                    value: 1,
                    op: Op::Put,
                    expect_version: None,
                },
            );
        })
    });
    error_saying(
        &s,
        "storage accepted write client1/1 that no client journaled sending",
    );
}

#[test]
fn a_write_with_no_grant_ends_the_run_as_an_error() {
    use fencesim::process::{SimStorage, Storage};
    let s = with_client1("writes-unlocked", |config, _| {
        let timeout = config.timeout;
        fencesim::process::Process::new(move |h| async move {
            let storage = SimStorage::new(&h, "storage", timeout);
            let _ = storage.put("x", 1, Some(40)).await;
        })
    });
    error_saying(
        &s,
        "client1 sent write client1/1 with no grant it believed it held",
    );
}

#[test]
fn a_token_the_grant_did_not_carry_ends_the_run_as_an_error() {
    use fencesim::process::{LockService, SimLock, SimStorage, Storage};
    let s = with_client1("forges-a-token", |config, lock_nodes| {
        let (timeout, lock) = (config.timeout, lock_nodes[0].clone());
        fencesim::process::Process::new(move |h| {
            let lock = lock.clone();
            async move {
                let locks = SimLock::new(&h, &lock, timeout);
                let storage = SimStorage::new(&h, "storage", timeout);
                if let Ok(lease) = locks.acquire().await {
                    let forged = lease.token.map(|t| t + 1_000);
                    let _ = storage.put("x", 1, forged).await;
                }
            }
        })
    });
    error_saying(&s, "with token 1033 under a grant whose token is 33");
}

#[test]
fn awaiting_what_the_simulation_does_not_drive_ends_the_run_as_an_error() {
    let s = with_client1("real-sleep", |_, _| {
        fencesim::process::Process::new(|h| async move {
            let _beside = h.spawn({
                let h = h.clone();
                async move { h.sleep(std::time::Duration::from_secs(60)).await }
            });
            // madsim's clock, one for every node: not this node's.
            madsim::time::sleep(std::time::Duration::from_secs(1)).await;
        })
    });
    let run = run(&s, s.seed);
    assert_eq!(run.report.verdict, Verdict::Error);
    let outcome = run.result.outcome.to_string();
    assert!(
        outcome.contains("woken from outside the simulation"),
        "{outcome}"
    );
}
