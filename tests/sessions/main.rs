//! The session lock designs end to end: `zookeeper`, `chubby`, `hazelcast`
//! and `postgres`, each in the failure its users have met, failing and fixed.
//! Every scenario runs twice with its seed; the traces must be identical.

mod chubby;
mod hazelcast;
mod postgres;
mod zookeeper;

use fencesim::design::catalog::Registry;
use fencesim::oracle::{Report, Verdict};
use fencesim::runner::{self, ScenarioRun};
use fencesim::scenario;

/// Loads `text`, runs it with its seed twice, checks the runs agree and
/// completed, and returns the first.
fn run(name: &str, text: &str) -> ScenarioRun {
    let s = scenario::load_str(&Registry::builtin(), name, text)
        .unwrap_or_else(|e| panic!("{name} does not load: {e}"));
    let first = runner::run(&s, s.seed);
    let again = runner::run(&s, s.seed);
    assert_eq!(
        first.trace_hash(),
        again.trace_hash(),
        "{name} is not deterministic"
    );
    assert_eq!(
        first.result.outcome,
        sim::Outcome::Completed,
        "{name}: {:#?}",
        first.report
    );
    assert!(first.expectations_met, "{name}: {:#?}", first.expectations);
    first
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
