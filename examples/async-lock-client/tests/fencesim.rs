//! The same `lead` the binary runs on tokio, explored in fencesim: each
//! client node of `scenarios/two-leaders.toml` runs it as a process, on the
//! node's own clock, under the scenario's pause and then under random
//! faults, and the oracle judges every run.

use std::path::Path;
use std::rc::Rc;
use std::time::Duration;

use async_lock_client::{lead, Config};
use fencesim::design::catalog::Registry;
use fencesim::oracle::Verdict;
use fencesim::process::{Process, SimLock, SimStorage};
use fencesim::runner::{world_with, RunConfig, ScenarioRun};
use fencesim::scenario::{load_file, Scenario};

fn scenario(storage: &str) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/two-leaders.toml");
    let mut s = load_file(&Registry::builtin(), &path).expect("the scenario loads");
    if storage != "fenced" {
        let text = std::fs::read_to_string(&path)
            .unwrap()
            .replace("design = \"fenced\"", &format!("design = \"{storage}\""));
        s = fencesim::scenario::load_str(&Registry::builtin(), "two-leaders.toml", &text).unwrap();
    }
    s
}

/// One run of `s` with every client running `lead`.
fn run(s: &Scenario, seed: u64) -> ScenarioRun {
    let scripted = s.faults.len();
    let built = s.clone();
    let result = fencesim::sim::run(seed, move || {
        world_with(&built, |_, client| {
            let start = client.start;
            let process = Process::new(move |h| async move {
                let timeout = Duration::from_millis(500);
                let lock = Rc::new(SimLock::new(&h, "lock", timeout));
                let storage = SimStorage::new(&h, "storage", timeout);
                h.sleep(start).await;
                let config = Config {
                    writes: 3,
                    work: Duration::from_millis(400),
                    retry: Duration::from_millis(200),
                };
                lead(&h, &lock, &storage, &config).await;
            });
            Some(Box::new(process) as Box<dyn fencesim::sim::Actor<_>>)
        })
    });
    RunConfig::new(seed).scripted(scripted).judge(s, result)
}

#[test]
fn the_paused_leader_stops_writing_when_its_clock_says_the_lease_ran_out() {
    let s = scenario("fenced");
    let run = run(&s, s.seed);
    assert_eq!(
        run.report.verdict,
        Verdict::Safe,
        "{}",
        run.result.journal.to_jsonl()
    );
    // The scenario reached what it is about: client1 was paused past its
    // lease while client2 took over.
    assert!(run.milestones.lease_expired_while_held > 0);
    let journal = run.result.journal.to_jsonl();
    assert!(journal.contains("\"node\":\"client1\",") && journal.contains("\"kind\":\"lapsed\""));
}

#[test]
fn random_faults_find_the_check_then_write_race_and_the_fence_stops_it() {
    // The client checks its lease on its clock, then writes: a pause between
    // the check and the write (or a write held in the network) lets a late
    // write through. Against an unchecked storage that is a stale write (9
    // of these 300 seeds); the fenced storage rejects every one.
    let mut found = 0;
    for (storage, seeds) in [("unchecked", 0..300), ("fenced", 0..300)] {
        // The random faults alone, without the scenario's own pause.
        let mut s = scenario(storage);
        s.faults.clear();
        for seed in seeds {
            let s = fencesim::explore::random::scenario_for_seed(&s, seed);
            let run = run(&s, seed);
            assert_ne!(
                run.report.verdict,
                Verdict::Error,
                "seed {seed}: {:?}",
                run.result.outcome
            );
            if run.report.verdict == Verdict::Violation {
                assert_eq!(
                    storage, "unchecked",
                    "seed {seed}: a violation behind the fence"
                );
                found += 1;
            }
        }
    }
    assert!(
        found > 0,
        "300 random-fault seeds found no stale write on an unchecked storage"
    );
}
