use fencesim::explore::shard::Shard;
use fencesim::explore::sweep::{sweep, FaultMode, Runs, SweepOptions};

use crate::bundled;

fn options(seeds: std::ops::Range<u64>, jobs: usize, shard: Shard) -> SweepOptions {
    SweepOptions {
        seeds,
        jobs,
        shard,
        faults: FaultMode::Random,
    }
}

fn failing(summary: &fencesim::explore::sweep::SweepSummary) -> Vec<u64> {
    summary.failures.iter().map(|f| f.seed).collect()
}

#[test]
fn random_faults_find_a_stale_write_in_the_unfenced_demo() {
    // Seed 5 is the first failing seed of 0..10 000 (found once with
    // `fencesim explore scenarios/explore-lease-unfenced.toml`); pin a range
    // around it.
    let s = bundled("explore-lease-unfenced");
    let summary = sweep(&s, &options(0..12, 2, Shard::WHOLE), &|_| {});
    assert_eq!(summary.seeds, 12);
    assert_eq!(summary.first_failing_seed, Some(5));
    assert!(summary.by_kind.get("stale_write").copied().unwrap_or(0) >= 1);
    assert_eq!(summary.crashed, 0);
}

#[test]
fn the_fenced_twin_shows_no_violation_over_a_thousand_seeds() {
    let s = bundled("explore-lease-fenced");
    let summary = sweep(&s, &options(0..1000, 2, Shard::WHOLE), &|_| {});
    assert_eq!(summary.seeds, 1000);
    assert_eq!(summary.violations, 0, "{:?}", summary.failures.first());
    assert_eq!(summary.crashed, 0);
    assert_eq!(summary.first_failing_seed, None);
}

#[test]
fn two_shards_give_the_failing_seeds_of_the_whole_range() {
    let s = bundled("explore-lease-unfenced");
    let whole = sweep(&s, &options(3..63, 2, Shard::WHOLE), &|_| {});
    let mut union = Vec::new();
    let mut seeds = 0;
    for index in 0..2 {
        let shard = Shard { index, count: 2 };
        let part = sweep(&s, &options(3..63, 1, shard), &|_| {});
        assert!(failing(&part).iter().all(|seed| seed % 2 == index));
        seeds += part.seeds;
        union.extend(failing(&part));
    }
    union.sort();
    assert_eq!(seeds, whole.seeds);
    assert!(!union.is_empty());
    assert_eq!(union, failing(&whole));
}

#[test]
fn jobs_do_not_change_the_result() {
    let s = bundled("explore-lease-unfenced");
    let one = sweep(&s, &options(0..30, 1, Shard::WHOLE), &|_| {});
    let two = sweep(&s, &options(0..30, 2, Shard::WHOLE), &|_| {});
    assert_eq!(one.failures, two.failures);
    assert_eq!(one.outcomes, two.outcomes);
}

#[test]
fn scenario_faults_only_keep_figure_9_6_safe() {
    let s = bundled("figure-9-6");
    let o = SweepOptions {
        faults: FaultMode::Scenario,
        ..options(0..50, 2, Shard::WHOLE)
    };
    let summary = sweep(&s, &o, &|_| {});
    assert_eq!((summary.seeds, summary.violations), (50, 0));
}

#[test]
fn shards_split_a_range_exactly() {
    for (range, n) in [(0..10u64, 3u64), (5..6, 4), (7..100, 7), (0..1, 1)] {
        let mut all: Vec<u64> = (0..n)
            .flat_map(|k| {
                let shard = Shard { index: k, count: n };
                let len = shard.len(&range);
                let range = range.clone();
                (0..len).map(move |i| shard.nth(&range, i).unwrap())
            })
            .collect();
        all.sort();
        assert_eq!(all, range.clone().collect::<Vec<_>>(), "{range:?} in {n}");
    }
    assert!(Shard::parse("2/2").is_err());
    assert!(Shard::parse("0/0").is_err());
    assert_eq!(Shard::parse("1/3"), Ok(Shard { index: 1, count: 3 }));
}

#[test]
fn shard_json_lines_merge_into_the_whole_summary() {
    let lines = [
        r#"{"seed": 9, "verdict": "violation"}"#,
        r#"{"summary": true, "seeds": 5, "violations": 1, "crashed": 0, "first_failing_seed": 9, "wall_ms": 10, "outcomes": {"completed": 5}}"#,
        r#"{"seed": 4, "verdict": "violation"}"#,
        r#"{"summary": true, "seeds": 5, "violations": 1, "crashed": 0, "first_failing_seed": 4, "wall_ms": 12, "outcomes": {"completed": 4, "stalled": 1}}"#,
    ];
    let merged = fencesim::explore::shard::merge(lines).unwrap();
    let seeds: Vec<u64> = merged.iter().filter_map(|v| v["seed"].as_u64()).collect();
    assert_eq!(seeds, [4, 9]);
    let summary = merged.last().unwrap();
    assert_eq!(summary["seeds"], 10);
    assert_eq!(summary["violations"], 2);
    assert_eq!(summary["first_failing_seed"], 4);
    assert_eq!(summary["outcomes"]["completed"], 9);
    assert!(fencesim::explore::shard::merge(["not json"]).is_err());
}

#[test]
fn a_stopped_sweep_names_what_it_completed_and_resuming_gives_the_whole() {
    use fencesim::explore::sweep::{sweep_streaming, SweepEvent};
    use std::sync::atomic::{AtomicU64, Ordering};
    let s = bundled("explore-lease-unfenced");
    let o = options(0..600, 2, Shard { index: 1, count: 3 });
    let whole = sweep(&s, &o, &|_| {});
    // Stop once 7 seeds of the shard's 200 are reported (the sweep reads
    // its stop between waits for results, so a few more may finish).
    let reported = AtomicU64::new(0);
    let mut order = Vec::new();
    let first = sweep_streaming(
        &s,
        &o,
        &Runs::default(),
        &[],
        &|| reported.load(Ordering::Relaxed) >= 7,
        &mut |e| {
            if let SweepEvent::Seed(r) = e {
                order.push(r.seed);
                reported.fetch_add(1, Ordering::Relaxed);
            }
        },
    );
    assert!(first.stopped);
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    assert_eq!(first.seeds, order.len() as u64);
    // The completed range holds exactly the seeds run.
    assert_eq!(first.completed.len(), 1);
    let done = first.completed[0].clone();
    let in_done: Vec<u64> = done.clone().filter(|x| x % 3 == 1).collect();
    assert_eq!(in_done, order);
    let rest = sweep_streaming(
        &s,
        &o,
        &Runs::default(),
        &first.completed,
        &|| false,
        &mut |_| {},
    );
    assert!(!rest.stopped);
    assert_eq!(rest.completed.len(), 1);
    assert_eq!(rest.completed[0], 0..600);
    assert!(rest.is_complete(&o));
    assert_eq!(first.seeds + rest.seeds, whole.seeds);
    let mut failing: Vec<_> = first.failures.clone();
    failing.extend(rest.failures.clone());
    assert_eq!(failing, whole.failures);
}

#[test]
fn partial_shards_merge_with_their_gaps() {
    let lines = [
        r#"{"seed": 4, "verdict": "violation"}"#,
        r#"{"summary": true, "seeds": 50, "violations": 1, "crashed": 0, "first_failing_seed": 4, "wall_ms": 10, "outcomes": {"completed": 50}, "range": "0..100", "shard": "0/2", "completed_ranges": [[0, 100]]}"#,
        r#"{"seed": 9, "verdict": "violation"}"#,
        r#"{"progress": true, "seeds": 20, "violations": 1, "crashed": 0, "first_failing_seed": 9, "wall_ms": 12, "outcomes": {"completed": 20}, "range": "0..100", "shard": "1/2", "completed_ranges": [[0, 40]]}"#,
        // Written after the last checkpoint of a killed shard: not counted.
        r#"{"seed": 45, "verdict": "violation"}"#,
    ];
    let merged = fencesim::explore::shard::merge(lines).unwrap();
    let seeds: Vec<u64> = merged.iter().filter_map(|v| v["seed"].as_u64()).collect();
    assert_eq!(seeds, [4, 9]);
    let summary = merged.last().unwrap();
    assert_eq!(summary["seeds"], 70);
    assert_eq!(summary["violations"], 2);
    assert_eq!(summary["complete"], false);
    assert_eq!(
        summary["gaps"],
        serde_json::json!([{"shard": "1/2", "missing": [[40, 100]]}])
    );
    // A shard that left no line misses its whole range.
    let merged = fencesim::explore::shard::merge(lines[..2].iter().copied()).unwrap();
    assert_eq!(
        merged.last().unwrap()["gaps"],
        serde_json::json!([{"shard": "1/2", "missing": [[0, 100]]}])
    );
}

#[test]
fn a_sweep_with_holes_runs_only_the_holes() {
    use fencesim::explore::sweep::{normalize, subtract, sweep_streaming};
    assert_eq!(
        normalize(vec![5..9, 0..2, 2..4, 8..12, 20..20]),
        [0..4, 5..12]
    );
    assert_eq!(subtract(&(0..50), &[10..20, 40..60]), [0..10, 20..40]);
    assert!(subtract(&(0..50), std::slice::from_ref(&(0..50))).is_empty());
    let s = bundled("explore-lease-unfenced");
    let o = options(0..50, 2, Shard::WHOLE);
    let whole = sweep(&s, &o, &|_| {});
    let done = [10..20, 40..60];
    let mut ran = Vec::new();
    let holes = sweep_streaming(&s, &o, &Runs::default(), &done, &|| false, &mut |e| {
        if let fencesim::explore::sweep::SweepEvent::Seed(r) = e {
            ran.push(r.seed)
        }
    });
    let expected: Vec<u64> = (0..10).chain(20..40).collect();
    assert_eq!(ran, expected);
    assert_eq!(holes.completed.len(), 1);
    assert_eq!(holes.completed[0], 0..60);
    let in_holes: Vec<_> = whole
        .failures
        .iter()
        .filter(|f| expected.contains(&f.seed))
        .cloned()
        .collect();
    assert_eq!(holes.failures, in_holes);
}

/// Release for the threads of [`Spin`]'s runs, abandoned when their budget
/// ran out.
static RELEASE_SPINNERS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A user's storage design that never returns from its first write (until
/// the test releases it): no simulated limit can end its runs.
struct Spin;

impl fencesim::design::storage::StoragePolicy for Spin {
    fn decide(
        &mut self,
        _: &fencesim::design::storage::WriteRequest<'_>,
    ) -> fencesim::design::storage::Decision {
        while !RELEASE_SPINNERS.load(std::sync::atomic::Ordering::Relaxed) {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        fencesim::design::storage::Decision::Accept
    }
}

impl fencesim::design::StorageDesign for Spin {
    type Config = ();

    fn info(&self) -> fencesim::design::catalog::DesignInfo {
        fencesim::design::catalog::DesignInfo::storage("spin", "never returns from a write", &[])
    }
    fn server(&self, _: &()) -> Box<dyn sim::Actor<fencesim::protocol::Msg>> {
        Box::new(fencesim::design::storage::StorageNode::new(Spin))
    }
}

#[test]
fn runs_that_never_end_time_out_and_the_sweep_goes_on() {
    use fencesim::explore::sweep::sweep_streaming;
    let mut registry = fencesim::design::catalog::Registry::builtin();
    registry.add_storage(Spin);
    let text = std::fs::read_to_string(format!(
        "{}/scenarios/explore-lease-unfenced.toml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
    .replace("design = \"unchecked\"", "design = \"spin\"");
    assert!(text.contains("\"spin\""), "the demo's storage is unchecked");
    let s = fencesim::scenario::load_str(&registry, "spin.toml", &text).unwrap();
    let runs = Runs {
        budget: Some(std::time::Duration::from_millis(200)),
        ..Runs::default()
    };
    // Two workers, five seeds: each worker abandons a run and takes the next.
    let o = options(0..5, 2, Shard::WHOLE);
    let summary = sweep_streaming(&s, &o, &runs, &[], &|| false, &mut |_| {});
    RELEASE_SPINNERS.store(true, std::sync::atomic::Ordering::Relaxed);
    assert_eq!((summary.seeds, summary.timed_out), (5, 5));
    assert_eq!(summary.outcomes.get("timed_out"), Some(&5));
    assert_eq!(summary.failing_seeds, 5);
    assert!(summary
        .failures
        .iter()
        .all(|f| f.verdict.as_str() == "error" && f.is_failure() && f.trace_hash.is_empty()));
    // Each names the node whose handler never returned.
    for f in &summary.failures {
        match &f.outcome {
            sim::Outcome::TimedOut { node, .. } => {
                assert_eq!(node.as_deref(), Some("storage"), "seed {}", f.seed)
            }
            other => panic!("seed {} ended {other}", f.seed),
        }
    }
    assert!(summary.is_complete(&o));
}
