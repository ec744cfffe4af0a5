//! `explore --depth D`: at most D faults per seed, all but the first right
//! after an event of the scenario's own run; replayed with `--faults depth`.

use fencesim::explore::depth::{self, Depth};
use fencesim::scenario::Trigger;
use serde_json::Value;

use crate::cli::UNFENCED;
use crate::{bundled, fencesim, figure_without_pause};

#[test]
fn depth_never_draws_more_than_d_faults_and_places_the_rest_at_change_points() {
    let s = figure_without_pause(false);
    for d in 1..=4 {
        let bound = Depth::new(&s, d);
        assert!(!bound.points.is_empty());
        let mut most = 0;
        for seed in 0..300 {
            let faults = depth::schedule(&s, seed, &bound);
            assert!(
                !faults.is_empty() && faults.len() <= d as usize,
                "d {d} seed {seed}"
            );
            most = most.max(faults.len());
            for f in &faults[1..] {
                let Trigger::After {
                    node, kind, nth, ..
                } = &f.trigger
                else {
                    panic!("d {d} seed {seed}: {f:?} is not after a change point");
                };
                assert!(
                    bound.points.contains(&(node.clone(), kind.clone(), *nth)),
                    "{node}:{kind}:{nth} is no event of the scenario's own run"
                );
            }
            assert_eq!(faults, depth::schedule(&s, seed, &bound));
        }
        // The bound is reached, not only respected.
        assert_eq!(most, d as usize, "d {d}");
    }
}

#[test]
fn change_points_are_the_events_of_the_scenarios_own_run() {
    let s = bundled("explore-lease-unfenced");
    let bound = Depth::new(&s, 3);
    let run = fencesim::runner::run(&s, s.seed);
    assert_eq!(bound.points.len(), run.result.journal.len());
    let first = &run.result.journal.events()[0];
    assert_eq!(
        bound.points[0],
        (first.node.to_string(), first.kind.to_string(), 1)
    );
}

fn failing(jobs: &str) -> Vec<Value> {
    let (code, out, err) = fencesim(&[
        "explore", UNFENCED, "--depth", "2", "--seeds", "0..80", "--json", "--jobs", jobs,
    ])
    .into_parts();
    assert_eq!(code, 1, "{out}{err}");
    out.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l.get("seed").is_some())
        .collect()
}

#[test]
fn a_depth_failing_seed_replays_alone_and_jobs_do_not_change_the_seeds() {
    let one = failing("1");
    let two = failing("2");
    let key = |v: &Vec<Value>| {
        v.iter()
            .map(|l| (l["seed"].clone(), l["trace_hash"].clone()))
            .collect::<Vec<_>>()
    };
    assert!(!one.is_empty());
    assert_eq!(key(&one), key(&two));
    for line in one.iter().take(3) {
        let seed = line["seed"].as_u64().unwrap();
        let repro = line["repro"].as_str().unwrap();
        assert_eq!(
            repro,
            format!("fencesim run {UNFENCED} --seed {seed} --faults depth --depth 2")
        );
        assert!(line["faults"].as_u64().unwrap() <= 2);
        let mut args: Vec<&str> = repro.split(' ').skip(1).collect();
        args.push("--json");
        let (_, out, err) = fencesim(&args).into_parts();
        let replay: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
        assert_eq!(replay["trace_hash"], line["trace_hash"], "seed {seed}");
    }
    let (code, _, err) = fencesim(&["run", UNFENCED, "--faults", "depth"]).into_parts();
    assert_eq!(code, 2);
    assert!(err.contains("--depth"), "{err}");
}
