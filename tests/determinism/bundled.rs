//! Every bundled scenario, replayed: sequentially and from parallel threads.

use std::sync::Barrier;

use crate::{assert_same, bundled_files, load, trace, Trace};

#[test]
fn every_bundled_scenario_replays_byte_for_byte() {
    for file in bundled_files() {
        let scenario = load(&file);
        let first = trace(&scenario, scenario.seed);
        let second = trace(&scenario, scenario.seed);
        assert!(
            !first.jsonl.is_empty(),
            "{}: the run did something",
            file.display()
        );
        assert_same(&file.display().to_string(), &first, &second);
    }
}

#[test]
fn parallel_runs_do_not_interfere() {
    for file in bundled_files() {
        let scenario = load(&file);
        let seeds = [scenario.seed, scenario.seed.wrapping_add(1)];
        let sequential: Vec<Trace> = seeds.iter().map(|&s| trace(&scenario, s)).collect();

        // Both seeds at once, released together so their runs overlap.
        let start = Barrier::new(seeds.len());
        let parallel: Vec<Trace> = std::thread::scope(|scope| {
            let handles: Vec<_> = seeds
                .iter()
                .map(|&seed| {
                    let (scenario, start) = (&scenario, &start);
                    scope.spawn(move || {
                        start.wait();
                        trace(scenario, seed)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });

        for ((seed, seq), par) in seeds.iter().zip(&sequential).zip(&parallel) {
            let what = format!("{} seed {seed}, sequential vs parallel", file.display());
            assert_same(&what, seq, par);
        }
    }
}

#[test]
fn eight_threads_on_one_seed_agree() {
    // Eight runs of the same seed at once: each run captures its own journal
    // (thread-scoped tracing dispatcher), so none sees another's events.
    let file = bundled_files()
        .into_iter()
        .find(|f| f.ends_with("figure-9-6.toml"))
        .unwrap();
    let scenario = load(&file);
    let alone = trace(&scenario, scenario.seed);
    let start = Barrier::new(8);
    let traces: Vec<Trace> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let (scenario, start) = (&scenario, &start);
                scope.spawn(move || {
                    start.wait();
                    trace(scenario, scenario.seed)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (i, t) in traces.iter().enumerate() {
        assert_same(&format!("figure 9-6, thread {i} of 8"), &alone, t);
    }
}
