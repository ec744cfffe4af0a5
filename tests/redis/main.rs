//! The `redis` and `redlock` lock designs end to end: scenario files written
//! here, run through the runner and judged by the oracle. Each known failure
//! (Kleppmann, "How to do distributed locking", 2016) is shown next to the
//! run that does not fail, and every run is checked to replay identically.

mod redis;
mod redlock;

use fencesim::design::catalog::Registry;
use fencesim::oracle::Verdict;
use fencesim::runner::{self, ScenarioRun};
use fencesim::scenario;
use sim::journal::Event;

/// Loads `text` (a whole scenario file) and runs it with its seed, twice:
/// the two runs must give the same trace.
fn run(name: &str, text: &str) -> ScenarioRun {
    let s = scenario::load_str(&Registry::builtin(), name, text).unwrap_or_else(|e| panic!("{e}"));
    let first = runner::run(&s, s.seed);
    let again = runner::run(&s, s.seed);
    assert_eq!(
        first.trace_hash(),
        again.trace_hash(),
        "{name}: the same seed gave two traces"
    );
    assert!(
        matches!(first.result.outcome, sim::Outcome::Completed),
        "{name}: {:?}\n{}",
        first.result.outcome,
        first.result.journal.to_jsonl()
    );
    first
}

/// The run's verdict and counts, with the journal on failure.
#[track_caller]
fn assert_counts(run: &ScenarioRun, verdict: Verdict, stale: u64, overlapping: u64) {
    let r = &run.report;
    assert_eq!(
        (r.verdict, r.stale_writes, r.overlapping_leases),
        (verdict, stale, overlapping),
        "{r:#?}\n{}",
        run.result.journal.to_jsonl()
    );
    assert!(run.expectations_met, "{:#?}", run.expectations);
}

/// The journal's events of `kind` at `node`.
fn events<'a>(run: &'a ScenarioRun, node: &str, kind: &str) -> Vec<&'a Event> {
    run.result
        .journal
        .events()
        .iter()
        .filter(|e| e.is(node, kind))
        .collect()
}

/// The journal position of the first event of `kind` at `node`.
#[track_caller]
fn first(run: &ScenarioRun, node: &str, kind: &str) -> u64 {
    events(run, node, kind)
        .first()
        .unwrap_or_else(|| panic!("no {node}:{kind}"))
        .seq
}

#[test]
fn the_registry_lists_both_designs_with_their_keys() {
    use fencesim::design::catalog::Role;
    let registry = Registry::builtin();
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

#[test]
fn redlock_names_its_nodes_lock1_to_lock_n_and_bounds_n() {
    let text = |nodes: u64| {
        format!(
            "name = \"n\"\n[lock]\ndesign = \"redlock\"\nnodes = {nodes}\n\
             [storage]\ndesign = \"unchecked\"\n[[clients]]\nname = \"client1\"\n"
        )
    };
    let s = scenario::load_str(&Registry::builtin(), "n.toml", &text(3)).unwrap();
    assert_eq!(s.lock_nodes(), ["lock1", "lock2", "lock3"]);
    let err = scenario::load_str(&Registry::builtin(), "n.toml", &text(16)).unwrap_err();
    assert!(err.to_string().contains("nodes"), "{err}");
}
