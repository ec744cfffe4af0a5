//! Lock clients as async processes: the bundled client's rounds written as
//! async code run the same journal as the bundled client, event for event.

use std::path::Path;

use fencesim::design::catalog::Registry;
use fencesim::process::workload;
use fencesim::runner::{world, world_with};
use fencesim::scenario::{load_file, Scenario};

fn scenario(file: &str) -> Scenario {
    load_file(&Registry::builtin(), Path::new(file)).expect("a bundled scenario loads")
}

/// The journal of `seed` with the bundled client, and with the async one.
fn both(s: &Scenario, seed: u64) -> (String, String) {
    let lock = s.lock_nodes()[0].clone();
    let a = s.clone();
    let actors = sim::run(seed, move || world(&a)).journal.to_jsonl();
    let p = s.clone();
    let processes = sim::run(seed, move || {
        world_with(&p, |_, config| {
            Some(Box::new(workload(config.clone(), &lock)) as Box<dyn sim::Actor<_>>)
        })
    })
    .journal
    .to_jsonl();
    (actors, processes)
}

#[test]
fn figure_9_6_as_an_async_process_journals_what_the_bundled_client_does() {
    let s = scenario("scenarios/figure-9-6.toml");
    for seed in [s.seed, 2, 3, 40] {
        let (actors, processes) = both(&s, seed);
        assert!(
            actors.contains("\"kind\":\"rejected\""),
            "seed {seed}: {actors}"
        );
        if actors != processes {
            let first = actors
                .lines()
                .zip(processes.lines())
                .position(|(a, p)| a != p);
            panic!(
                "seed {seed}: the journals part at line {first:?}\nactors:\n{actors}\nprocesses:\n{processes}"
            );
        }
    }
}

#[test]
fn figure_9_6_as_an_async_process_matches_under_random_faults() {
    // Faults drawn per seed (pauses anchored on the clients' events, crashes
    // and restarts, clock changes, delays, losses, duplicates, partitions):
    // whatever happens, the async client does what the bundled one does.
    let s = scenario("scenarios/figure-9-6.toml");
    let mut differ = Vec::new();
    for seed in 0..2_000 {
        let with_faults = fencesim::explore::random::scenario_for_seed(&s, seed);
        let (actors, processes) = both(&with_faults, seed);
        if actors != processes {
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
