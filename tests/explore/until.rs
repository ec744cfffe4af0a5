//! `explore --until N` and `--time DURATION`: a sweep that stops by itself,
//! after the lowest N failing seeds (the same ones whatever `--jobs`) or a
//! budget of wall time, and says why.

use fencesim::explore::shard::Shard;
use fencesim::explore::sweep::{
    sweep, sweep_with_rules, FaultMode, Runs, StopRules, StoppedBy, SweepOptions, SweepSummary,
};
use serde_json::Value;

use crate::cli::UNFENCED;
use crate::{bundled, fencesim};

fn options(seeds: std::ops::Range<u64>, jobs: usize) -> SweepOptions {
    SweepOptions {
        seeds,
        jobs,
        shard: Shard::WHOLE,
        faults: FaultMode::Random,
    }
}

fn with_rules(o: &SweepOptions, rules: StopRules) -> SweepSummary {
    let s = bundled("explore-lease-unfenced");
    sweep_with_rules(&s, o, &Runs::default(), &[], rules, &|| false, &mut |_| {})
}

fn failing(summary: &SweepSummary) -> Vec<u64> {
    summary.failures.iter().map(|f| f.seed).collect()
}

#[test]
fn until_keeps_the_lowest_failing_seeds_whatever_the_jobs() {
    let whole = sweep(
        &bundled("explore-lease-unfenced"),
        &options(0..60, 2),
        &|_| {},
    );
    let lowest: Vec<u64> = failing(&whole).into_iter().take(4).collect();
    assert_eq!(lowest.len(), 4, "{:?}", failing(&whole));
    let until = StopRules {
        until: Some(4),
        time: None,
    };
    let one = with_rules(&options(0..60, 1), until);
    let two = with_rules(&options(0..60, 2), until);
    for s in [&one, &two] {
        assert_eq!(failing(s), lowest);
        assert_eq!(s.failing_seeds, 4);
        // Counted up to the fourth failing seed, and not one seed further.
        assert_eq!(s.seeds, lowest[3] + 1);
        assert_eq!(s.completed, vec![0..lowest[3] + 1]);
        assert!(s.stopped);
        assert_eq!(s.stopped_by, Some(StoppedBy::Until));
        let json = s.json(&options(0..60, 1));
        assert_eq!(json["stopped_by"], "until");
        assert_eq!(json["until"], 4);
        assert_eq!(json["complete"], false);
        let per = json["seeds_per_failure"].as_f64().unwrap();
        assert!((per - (lowest[3] + 1) as f64 / 4.0).abs() < 0.06, "{per}");
    }
    // The counts of what ran match too, not only the seeds.
    assert_eq!(one.outcomes, two.outcomes);
    assert_eq!(one.milestones, two.milestones);
    assert_eq!(one.by_kind, two.by_kind);
}

#[test]
fn until_more_than_the_range_holds_runs_it_all() {
    let s = with_rules(
        &options(0..12, 2),
        StopRules {
            until: Some(1000),
            time: None,
        },
    );
    assert_eq!(s.seeds, 12);
    assert!(!s.stopped);
    assert_eq!(s.stopped_by, None);
    assert_eq!(s.json(&options(0..12, 2))["stopped_by"], Value::Null);
}

#[test]
fn a_spent_time_budget_stops_the_sweep_and_says_so() {
    // A budget already spent when the first worker looks: no seed starts.
    let s = with_rules(
        &options(0..1000, 2),
        StopRules {
            until: None,
            time: Some(std::time::Duration::from_nanos(1)),
        },
    );
    assert!(s.stopped);
    assert_eq!(s.stopped_by, Some(StoppedBy::Time));
    assert!(s.seeds < 1000);
    let counted: u64 = s.completed.iter().map(|r| r.end - r.start).sum();
    assert_eq!(counted, s.seeds);
}

fn json_lines(out: &str) -> Vec<Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn explore_until_prints_the_same_seeds_with_one_job_or_two() {
    let run = |jobs: &str| {
        let (code, out, err) = fencesim(&[
            "explore", UNFENCED, "--seeds", "0..200", "--until", "3", "--json", "--jobs", jobs,
        ])
        .into_parts();
        assert_eq!(code, 1, "{out}{err}");
        let lines = json_lines(&out);
        let seeds: Vec<(u64, String)> = lines
            .iter()
            .filter(|l| l.get("seed").is_some())
            .map(|l| (l["seed"].as_u64().unwrap(), l["trace_hash"].to_string()))
            .collect();
        let summary = lines.last().unwrap().clone();
        (seeds, summary)
    };
    let (one, s1) = run("1");
    let (two, s2) = run("2");
    assert_eq!(one.len(), 3);
    assert_eq!(one, two);
    assert_eq!(one[0].0, 5);
    for key in [
        "seeds",
        "failing_seeds",
        "completed_ranges",
        "stopped_by",
        "by_kind",
    ] {
        assert_eq!(s1[key], s2[key], "{key}");
    }
    assert_eq!(s1["stopped_by"], "until");
    assert_eq!(s1["seeds"], one[2].0 + 1);

    let (code, out, _) =
        fencesim(&["explore", UNFENCED, "--seeds", "0..200", "--until", "3"]).into_parts();
    assert_eq!(code, 1);
    assert!(out.contains("stopped   by --until 3"), "{out}");
    assert!(out.contains("found     3 failing seeds in"), "{out}");
}

#[test]
fn bad_until_and_time_values_exit_2_with_the_reason() {
    for (args, says) in [
        (&["--until", "0"][..], "--until"),
        (&["--until", "three"], "--until"),
        (&["--time", "0s"], "longer than 0"),
        (&["--time", "soon"], "expected a duration"),
        (
            &["--until", "2", "--exhaustive", "1"],
            "cannot be used with",
        ),
        (
            &["--until", "2", "--resume", "x.jsonl"],
            "cannot be used with",
        ),
        (
            &["--time", "5s", "--exhaustive", "1"],
            "cannot be used with",
        ),
    ] {
        let mut all = vec!["explore", UNFENCED];
        all.extend_from_slice(args);
        let (code, out, err) = fencesim(&all).into_parts();
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn merged_shards_keep_why_one_stopped_and_recount_seeds_per_failure() {
    use fencesim::explore::resume::{add, Sessions};
    let stopped = serde_json::json!({"summary": true, "seeds": 30, "failing_seeds": 3,
        "stopped": true, "stopped_by": "until", "until": 3, "seeds_per_failure": 10.0});
    let whole = serde_json::json!({"summary": true, "seeds": 50, "failing_seeds": 2,
        "stopped": false, "stopped_by": null, "until": 3, "seeds_per_failure": 25.0});
    let merged = add(&stopped, &whole, Sessions::Parallel);
    assert_eq!(merged["stopped"], true);
    assert_eq!(merged["stopped_by"], "until");
    // A setting, not a count: never added up.
    assert_eq!(merged["until"], 3);
    assert_eq!(merged["seeds"], 80);
    assert_eq!(merged["seeds_per_failure"], 16.0);
}
