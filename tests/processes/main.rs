//! Lock clients as async processes: the bundled client's rounds written as
//! async code (`process = "rounds"`) run the same journal as the bundled
//! client, event for event.

mod clients;
mod std_clocks;
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

#[test]
fn a_process_s_own_keys_are_checked_at_load_written_back_and_reach_the_process() {
    let path = "scenarios/leader-elector-async.toml";
    let text = std::fs::read_to_string(path).unwrap();
    // A value of the wrong kind, and a misspelt key: exit-2 errors at the key.
    let bad = text.replacen("renew_deadline = \"4s\"", "renew_deadline = 4", 1);
    let err = load_str(&Registry::builtin(), "t.toml", &bad).unwrap_err();
    assert_eq!(
        (err.line, err.message.contains("expected a duration")),
        (29, true),
        "{err}"
    );
    let bad = text.replacen("writes = 5", "writez = 5", 1);
    let err = load_str(&Registry::builtin(), "t.toml", &bad).unwrap_err();
    assert!(err.message.contains("did you mean `writes`?"), "{err}");
    // The bundled client takes no such key.
    let bad = text.replacen("process = \"leader-elector\"\n", "", 1);
    let err = load_str(&Registry::builtin(), "t.toml", &bad).unwrap_err();
    assert!(err.message.contains("unknown key `writes`"), "{err}");

    // Written back as loaded (what `shrink` writes), and handed to the
    // process: client1 (whose table sets the key) writes twice instead of
    // five times; client2 keeps the default, five.
    let s = scenario(path);
    let again = load_str(
        &Registry::builtin(),
        "t.toml",
        &fencesim::scenario::to_toml(&s),
    )
    .unwrap();
    assert_eq!(again.clients[0].process_params, s.clients[0].process_params);
    let fewer = load_str(
        &Registry::builtin(),
        "t.toml",
        &text.replace("writes = 5", "writes = 2"),
    )
    .unwrap();
    let (five, two) = (run(&s, s.seed), run(&fewer, fewer.seed));
    assert_eq!(five.report.accepted_writes, 10);
    assert_eq!(
        two.report.accepted_writes,
        2 + 5,
        "{}",
        two.result.journal.to_jsonl()
    );
}

#[test]
fn a_process_scenario_built_in_rust_asserts_its_verdict_and_the_milestones_it_reached() {
    use fencesim::testkit::ScenarioBuilder;
    // The etcd story, built in a test: the expectation names the milestone
    // that makes it the story (a late grant), so a run that never got there
    // fails the test instead of passing it vacuously.
    let story = ScenarioBuilder::new("etcd-mutex-late-grant")
        .lock("etcd", |t| t.set("ttl", "2s"))
        .storage("fenced", |t| t)
        .client("client1", |t| {
            t.set("process", "etcd-mutex")
                .set("work", "100ms")
                .set("timeout", "20s")
        })
        .client("client2", |t| {
            t.set("process", "etcd-mutex")
                .set("start", "500ms")
                .set("timeout", "20s")
        })
        .fault("delay", |t| {
            t.set("from", "lock")
                .set("to", "client1")
                .set("extra", "6s")
                .set("duration", "1s")
                .set("after", "lock:granted")
        })
        .fault("drop", |t| {
            t.set("from", "client1")
                .set("to", "lock")
                .set("duration", "3s")
                .set("after", "lock:granted")
        })
        .expect(|t| {
            t.set("verdict", "safe")
                .set("rejected_writes", 1)
                .set("mechanism", vec!["grant_arrived_expired"])
        });
    assert_eq!(story.assert_seeds(0..5), 5);
    // Without the drop, keep-alives get through, the lease lives, and the
    // milestone is never reached: the same expectation fails.
    let vacuous = ScenarioBuilder::from_toml(
        &story
            .toml()
            .replace("kind = \"drop\"", "kind = \"duplicate\""),
    )
    .unwrap();
    let run = vacuous.run(0);
    assert!(!run.expectations_met, "{:?}", run.expectations);
}
