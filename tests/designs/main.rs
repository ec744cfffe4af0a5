//! The bundled designs end to end: scenario text written here, run through
//! the runner and judged by the oracle, each design in the failure its
//! users have met, failing and fixed. Locks: `redis` and `redlock`
//! (Kleppmann, "How to do distributed locking", 2016), `etcd`, and the
//! session designs `zookeeper`, `chubby`, `hazelcast` and `postgres`;
//! storages: `cas` (object stores included), `sql` and per-key `fenced`.
//! Every scenario runs twice with its seed; the traces must be identical.

mod chubby;
mod etcd;
mod hazelcast;
mod object_store;
mod postgres;
mod redis;
mod redlock;
mod storage;
mod zookeeper;

use fencesim::design::catalog::Registry;
use fencesim::oracle::{Report, Verdict};
use fencesim::runner::{self, ScenarioRun};
use fencesim::scenario;
use sim::journal::Event;

/// Loads `text` (a whole scenario file, `name` in messages) and runs it
/// with its seed, twice: the two runs must give the same trace and
/// complete. Returns the first.
fn run(name: &str, text: &str) -> ScenarioRun {
    let s = scenario::load_str(&Registry::builtin(), name, text)
        .unwrap_or_else(|e| panic!("{name} does not load: {e}"));
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

/// [`run`], and the run meets the file's `[expect]` table.
fn run_as_expected(name: &str, text: &str) -> ScenarioRun {
    let run = run(name, text);
    assert!(run.expectations_met, "{name}: {:#?}", run.expectations);
    run
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

/// The oracle's verdict and counts: (verdict, stale, zombie, accepted, rejected).
fn counts(r: &Report) -> (Verdict, u64, u64, u64, u64) {
    (
        r.verdict,
        r.stale_writes,
        r.zombie_writes,
        r.accepted_writes,
        r.rejected_writes,
    )
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

/// The kinds of the journal's events at `node`, in order.
fn kinds<'a>(run: &'a ScenarioRun, node: &str) -> Vec<&'a str> {
    run.result
        .journal
        .events()
        .iter()
        .filter(|e| e.node == node)
        .map(|e| e.kind.as_str())
        .collect()
}

/// The `token` of the `n`-th event of `kind` at `node`.
fn token(run: &ScenarioRun, node: &str, kind: &str, n: usize) -> Option<u64> {
    run.result
        .journal
        .events()
        .iter()
        .filter(|e| e.node == node && e.kind == kind)
        .nth(n)
        .and_then(|e| e.u64("token"))
}

/// Three clients, three rounds each, on a lossy network: every session
/// design completes, safely, the same way twice, across seeds.
#[test]
fn busy_lossy_runs_complete_safely_for_every_session_design() {
    for design in ["zookeeper", "chubby", "hazelcast"] {
        let text = format!(
            r#"
name = "busy-{design}"
duration = "10m"

[lock]
design = "{design}"
ttl = "3s"

[storage]
design = "fenced"

[network]
latency = ["1ms", "20ms"]
loss = 0.05

[[clients]]
name = "client1"
rounds = 3

[[clients]]
name = "client2"
rounds = 3

[[clients]]
name = "client3"
rounds = 3
"#
        );
        let s = scenario::load_str(&Registry::builtin(), "busy", &text).unwrap();
        for seed in 1..=15 {
            let first = runner::run(&s, seed);
            let again = runner::run(&s, seed);
            assert_eq!(
                first.trace_hash(),
                again.trace_hash(),
                "{design} seed {seed}"
            );
            assert_eq!(
                first.result.outcome,
                sim::Outcome::Completed,
                "{design} seed {seed}"
            );
            assert_eq!(first.report.verdict, Verdict::Safe, "{design} seed {seed}");
            assert_eq!(first.report.token_regressions, 0, "{design} seed {seed}");
        }
    }
}
