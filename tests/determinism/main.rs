//! Determinism: the same scenario, seed and version give the byte-identical
//! trace, however many times and on however many threads it runs; different
//! seeds explore different traces.
//!
//! These tests use the library (`runner::run`), as `check` does; the `cli`
//! tests compare the binary's trace hash with the library's.

mod bundled;
mod faults;
mod hashmap;
mod seeds;
mod sweeps;

use std::path::PathBuf;

use fencesim::design::catalog::Registry;
use fencesim::runner::{self, ScenarioRun};
use fencesim::scenario::{self, Scenario};

/// Every `*.toml` under `scenarios/`, sorted. The directory grows as
/// scenarios are added; every one of them is held to these tests.
pub fn bundled_files() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("scenarios/ exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(
        files.iter().any(|f| f.ends_with("figure-9-6.toml")),
        "scenarios/ holds at least figure 9-6: {files:?}"
    );
    files
}

/// Loads a bundled scenario (a bundled file that does not load is a failure
/// of its own, reported with the loader's message).
pub fn load(path: &std::path::Path) -> Scenario {
    scenario::load_file(&Registry::builtin(), path).unwrap_or_else(|e| panic!("{e}"))
}

/// A scenario written in a test.
pub fn load_text(name: &str, text: &str) -> Scenario {
    scenario::load_str(&Registry::builtin(), name, text).unwrap_or_else(|e| panic!("{e}"))
}

/// What must be identical between two runs of one scenario and seed.
#[derive(Debug, PartialEq, Eq)]
pub struct Trace {
    pub hash: String,
    pub jsonl: String,
}

impl Trace {
    pub fn of(run: &ScenarioRun) -> Trace {
        assert_eq!(
            run.trace_hash(),
            run.result.journal.hash(),
            "trace_hash is the journal's hash"
        );
        Trace {
            hash: run.trace_hash(),
            jsonl: run.result.journal.to_jsonl(),
        }
    }
}

/// Runs `scenario` with `seed` and returns its trace.
pub fn trace(scenario: &Scenario, seed: u64) -> Trace {
    Trace::of(&runner::run(scenario, seed))
}

/// Asserts two traces are the same, showing the first differing line.
#[track_caller]
pub fn assert_same(what: &str, a: &Trace, b: &Trace) {
    if a == b {
        return;
    }
    let first_diff = a
        .jsonl
        .lines()
        .zip(b.jsonl.lines())
        .position(|(x, y)| x != y);
    let detail = match first_diff {
        Some(i) => format!(
            "first difference at event {i}:\n  {}\n  {}",
            a.jsonl.lines().nth(i).unwrap(),
            b.jsonl.lines().nth(i).unwrap()
        ),
        None => format!(
            "one journal is a prefix of the other ({} vs {} events)",
            a.jsonl.lines().count(),
            b.jsonl.lines().count()
        ),
    };
    panic!(
        "{what}: traces differ (hash {} vs {}); {detail}",
        a.hash, b.hash
    );
}
