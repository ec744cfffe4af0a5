//! A failing seed is replayed alone, on a fresh thread, before a sweep
//! reports it; one that gives another journal is reported as
//! non-determinism (the first event that differs, in both runs), never as
//! what the sweep's run found, and `explore` exits 3. A fresh thread per
//! seed cannot help a process that reads what outlives its thread: here,
//! a global counter.

use std::sync::atomic::{AtomicU64, Ordering};

use fencesim::design::catalog::Registry;
use fencesim::explore::shard::Shard;
use fencesim::explore::sweep::{self, FaultMode, SweepOptions};

use crate::TempDir;

/// Runs made in this process so far, read by every run of `counts-runs`.
static RUNS: AtomicU64 = AtomicU64::new(0);

/// The bundled designs, and `counts-runs`: a client that journals how many
/// runs this process made before it, then panics (a failing seed).
fn registry() -> Registry {
    let mut registry = Registry::builtin();
    registry.add_process("counts-runs", "journals a global counter", |_, _| {
        fencesim::process::Process::new(|h| async move {
            let before = RUNS.fetch_add(1, Ordering::Relaxed);
            fencesim::sim::emit!("counted", before = before);
            // A later step: the counted event is in the journal by then.
            h.sleep(std::time::Duration::from_secs(1)).await;
            panic!("counts-runs always fails");
        })
    });
    registry
}

fn scenario_text() -> String {
    let text = std::fs::read_to_string(format!(
        "{}/scenarios/figure-9-6-async.toml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
    .replace(
        "name = \"client1\"\nprocess = \"rounds\"",
        "name = \"client1\"\nprocess = \"counts-runs\"",
    );
    assert!(text.contains("counts-runs"), "client1 runs `rounds`");
    text
}

#[test]
fn a_failing_seed_that_does_not_replay_is_reported_as_nondeterminism() {
    let s = fencesim::scenario::load_str(&registry(), "counts.toml", &scenario_text()).unwrap();
    let options = SweepOptions {
        seeds: 0..4,
        jobs: 2,
        shard: Shard::WHOLE,
        faults: FaultMode::Scenario,
    };
    let summary = sweep::sweep(&s, &options, &|_| {});
    assert_eq!(summary.seeds, 4);
    assert_eq!(summary.nondeterministic_seeds, 4, "{summary:?}");
    assert_eq!(summary.violations, 0, "never reported as a violation");
    let (seed, d) = summary.first_nondeterministic.clone().expect("a first one");
    assert_eq!(seed, 0);
    assert!(d.sweep_event.contains("\"kind\":\"counted\""), "{d:?}");
    assert!(d.replay_event.contains("\"kind\":\"counted\""), "{d:?}");
    assert_ne!(d.sweep_event, d.replay_event);
    let line = summary.json(&options);
    assert_eq!(line["nondeterministic_seeds"], 4);
    assert_eq!(line["first_nondeterministic"]["seed"], 0);
    assert_eq!(line["first_nondeterministic"]["index"], d.index);
    let failure = &summary.failures[0];
    assert_eq!(failure.verdict.as_str(), "error");
    let seed_line = failure.json("fencesim run counts.toml --seed 0");
    assert_eq!(seed_line["nondeterministic"]["index"], d.index);
}

#[test]
fn explore_exits_3_when_a_failing_seed_does_not_replay() {
    let tmp = TempDir::new("nondeterminism");
    let file = tmp.join("counts.toml");
    std::fs::write(&file, scenario_text()).unwrap();
    let args = [
        "fencesim",
        "explore",
        file.to_str().unwrap(),
        "--seeds",
        "0..3",
        "--faults",
        "scenario",
        "--jobs",
        "1",
        "--json",
    ];
    let status = fencesim::cli::run_args(&registry(), args);
    assert_eq!(status as u8, 3);
}
