//! The `etcd` lock and the `cas` (object stores included), `sql` and per-key
//! `fenced` storages, end to end: scenario text in, the oracle's counts out,
//! each run twice to check it is deterministic.

mod etcd;
mod object_store;
mod storage;

use fencesim::design::catalog::Registry;
use fencesim::runner::{self, ScenarioRun};
use fencesim::scenario::load_str;

/// Loads `text`, runs it with its seed twice, asserts both traces are the
/// same, and returns the run.
fn run(text: &str) -> ScenarioRun {
    let scenario = load_str(&Registry::builtin(), "t.toml", text)
        .unwrap_or_else(|e| panic!("scenario does not load: {e}"));
    let first = runner::run(&scenario, scenario.seed);
    let again = runner::run(&scenario, scenario.seed);
    assert_eq!(
        first.trace_hash(),
        again.trace_hash(),
        "non-deterministic run"
    );
    assert!(
        matches!(first.result.outcome, sim::Outcome::Completed),
        "run did not complete: {:?}",
        first.result.outcome
    );
    first
}
