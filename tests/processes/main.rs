//! Lock clients as async processes: the bundled client's rounds written as
//! async code (`process = "rounds"`) run the same journal as the bundled
//! client, event for event.

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
        err.contains("unknown process `nope`: the processes are rounds"),
        "{err}"
    );
}
