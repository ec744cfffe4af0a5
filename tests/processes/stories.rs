//! The async stories of `scenarios/`: each broken client is found by a
//! generic sweep (the scenario's own faults dropped) by the mechanism its
//! `[expect]` names, and shrunk to a schedule that still breaks it; its
//! fixed twin, the same client code behind a fenced storage (or, for
//! `cas-writer`, sending conditional writes), stays safe under the same
//! sweep. (`.ci/run` sweeps the fixed ones over 10 000
//! seeds with the release binary.)

use fencesim::explore::generic;
use fencesim::explore::shard::Shard;
use fencesim::explore::shrink::shrink;
use fencesim::explore::sweep::{sweep, FaultMode, SweepOptions};
use fencesim::oracle::Verdict;

use crate::scenario;

/// (broken, fixed, generic seeds to sweep): every broken one is found by a
/// seed below its bound.
const STORIES: &[(&str, &str, u64)] = &[
    ("figure-9-6-async-unfenced", "figure-9-6-async", 200),
    ("etcd-mutex-async", "etcd-mutex-async-fenced", 1_500),
    (
        "redisson-watchdog-async",
        "redisson-watchdog-async-fenced",
        100,
    ),
    ("leader-elector-async", "leader-elector-async-fenced", 100),
    (
        "zookeeper-recipe-async",
        "zookeeper-recipe-async-fenced",
        100,
    ),
    (
        "hazelcast-fenced-lock-async",
        "hazelcast-fenced-lock-async-fenced",
        100,
    ),
    ("cas-writer-async", "cas-writer-async-if-match", 100),
];

fn options(seeds: u64) -> SweepOptions {
    SweepOptions {
        seeds: 0..seeds,
        jobs: 2,
        shard: Shard::WHOLE,
        faults: FaultMode::Random,
    }
}

#[test]
fn a_generic_sweep_finds_each_broken_story_and_shrinks_it() {
    for &(broken, _, seeds) in STORIES {
        let s = generic::scenario(&scenario(&format!("scenarios/{broken}.toml")));
        let summary = sweep(&s, &options(seeds), &|_| {});
        assert_eq!(summary.crashed + summary.timed_out, 0, "{broken}");
        let found = summary
            .failures
            .iter()
            .find(|r| generic::reproduces(r) == Some(true))
            .unwrap_or_else(|| panic!("{broken}: no seed of 0..{seeds} reproduces its mechanism"));
        let shrunk = shrink(&s, found.seed, FaultMode::Random)
            .unwrap_or_else(|_| panic!("{broken}: seed {} does not fail", found.seed));
        assert_eq!(
            shrunk.run.report.verdict,
            Verdict::Violation,
            "{broken} seed {}",
            found.seed
        );
        assert!(
            !shrunk.after.is_empty() && shrunk.after.len() <= shrunk.before.len(),
            "{broken} seed {}: {:?} from {:?}",
            found.seed,
            shrunk.after,
            shrunk.before
        );
    }
}

#[test]
fn the_fixed_stories_stay_safe_under_the_same_sweep() {
    for &(_, fixed, _) in STORIES {
        let s = generic::scenario(&scenario(&format!("scenarios/{fixed}.toml")));
        let summary = sweep(&s, &options(500), &|_| {});
        assert_eq!(
            (summary.failing_seeds, summary.crashed, summary.timed_out),
            (0, 0, 0),
            "{fixed}: {:?}",
            summary.first_failing_seed
        );
        // Judged, not vacuous: writes reached the storage and the story's
        // late writes were turned away.
        assert!(
            summary.inconclusive < 50,
            "{fixed}: {}",
            summary.inconclusive
        );
        assert!(
            summary
                .milestones
                .get("stale_write_rejected")
                .copied()
                .unwrap_or(0)
                > 0,
            "{fixed}: no late write was ever rejected: {:?}",
            summary.milestones
        );
    }
}

#[test]
fn figure_9_6_async_unfenced_journals_what_figure_9_6_unfenced_does() {
    let actors = scenario("scenarios/figure-9-6-unfenced.toml");
    let processes = scenario("scenarios/figure-9-6-async-unfenced.toml");
    for seed in [actors.seed, 2, 3, 40] {
        let (a, p) = (
            fencesim::runner::run(&actors, seed),
            fencesim::runner::run(&processes, seed),
        );
        assert_eq!(a.report.verdict, Verdict::Violation);
        assert_eq!(
            a.result.journal.to_jsonl(),
            p.result.journal.to_jsonl(),
            "seed {seed}"
        );
    }
}
