//! What a sweep tested: seeds that judged nothing, were cut short or left a
//! scenario fault unfired are counted apart from the passes, and the
//! summary says which dangerous situations the seeds reached.

use fencesim::explore::shard::Shard;
use fencesim::explore::sweep::{run_seed, sweep, FaultMode, SweepOptions};
use fencesim::scenario::{self, Fault, FaultSpec, Scenario, Trigger};

use crate::{arg, bundled, fencesim, figure_without_pause, TempDir};

fn options(seeds: std::ops::Range<u64>, faults: FaultMode) -> SweepOptions {
    SweepOptions {
        seeds,
        jobs: 2,
        shard: Shard::WHOLE,
        faults,
    }
}

/// `fencesim explore` on `s`, written to a temp file: (exit code, stdout).
fn explore(s: &Scenario, test: &str, args: &[&str]) -> (i32, String) {
    let dir = TempDir::new(test);
    let file = dir.write("s.toml", scenario::to_toml(s));
    let mut all = vec!["explore", arg(&file)];
    all.extend_from_slice(args);
    let (code, stdout, _) = fencesim(&all).into_parts();
    (code, stdout)
}

/// Figure 9-6 (fenced, no pause) ending at 500 ms: client1's write, due at
/// 1 s, never leaves.
fn too_short() -> Scenario {
    let mut s = figure_without_pause(true);
    s.duration = std::time::Duration::from_millis(500);
    s
}

#[test]
fn seeds_cut_short_before_any_write_are_inconclusive_not_passes() {
    let summary = sweep(&too_short(), &options(0..4, FaultMode::Scenario), &|_| {});
    assert_eq!(summary.seeds, 4);
    assert_eq!(summary.violations, 0);
    assert_eq!(summary.inconclusive, 4);
    assert_eq!(summary.cut_short, 4);
    assert_eq!(summary.outcomes.get("time_limit"), Some(&4));

    let (code, out) = explore(
        &too_short(),
        "short",
        &["--seeds", "0..4", "--faults", "scenario"],
    );
    assert_eq!(code, 4, "{out}");
    assert!(
        out.contains("judged    0 of 4 seeds: 4 inconclusive"),
        "{out}"
    );
    assert!(
        out.contains("no seed had a write reach the storage: this sweep judged nothing"),
        "{out}"
    );
}

#[test]
fn a_sweep_that_never_pauses_a_holder_says_it_did_not_test_fencing() {
    let s = figure_without_pause(true);
    let summary = sweep(&s, &options(0..4, FaultMode::Scenario), &|_| {});
    assert_eq!(summary.inconclusive, 0);
    assert_eq!(summary.milestone_counts()["holder_paused_past_lease"], 0);
    let (code, out) = explore(&s, "nopause", &["--seeds", "0..4", "--faults", "scenario"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("no seed paused a holder past its lease: this sweep did not test fencing"),
        "{out}"
    );
}

#[test]
fn the_summary_counts_the_seeds_that_reached_each_milestone() {
    let s = bundled("figure-9-6");
    let summary = sweep(&s, &options(0..6, FaultMode::Scenario), &|_| {});
    let m = summary.milestone_counts();
    assert_eq!(m.len(), fencesim::oracle::milestones::NAMES.len(), "{m:?}");
    assert_eq!(m["holder_paused_past_lease"], 6);
    assert_eq!(m["zombie_write_sent"], 6);
    assert_eq!(m["stale_write_rejected"], 6);
    assert_eq!(m["stale_write_accepted"], 0);
    let json = summary.json(&options(0..6, FaultMode::Scenario));
    assert_eq!(json["milestones"]["holder_paused_past_lease"], 6);
    assert_eq!(json["inconclusive"], 0);
    assert_eq!(json["cut_short"], 0);
    assert_eq!(json["unfired"], 0);
    let (_, out) = explore(&s, "reached", &["--seeds", "0..6", "--faults", "scenario"]);
    assert!(!out.contains("did not test fencing"), "{out}");
    assert!(out.contains("holder_paused_past_lease 6"), "{out}");
}

#[test]
fn only_the_scenarios_own_unfired_faults_count() {
    let mut s = figure_without_pause(true);
    s.faults.push(FaultSpec {
        fault: Fault::Pause(sim::fault::Pause {
            node: "client1".into(),
            duration: std::time::Duration::from_secs(15),
        }),
        trigger: Trigger::After {
            node: "client1".into(),
            kind: "lapsed".into(),
            nth: 1,
            delay: std::time::Duration::ZERO,
        },
        line: 0,
    });
    let summary = sweep(&s, &options(0..8, FaultMode::Random), &|_| {});
    assert_eq!(summary.unfired, 8, "client1 never lapses, in any seed");

    // Random faults that miss their moment are not the scenario's: without
    // a fault of its own, no seed counts as unfired, though some random
    // faults never fire.
    let plain = figure_without_pause(true);
    let mut random_unfired = 0;
    for seed in 0..30 {
        let (run, report) = run_seed(&plain, seed, FaultMode::Random);
        random_unfired += run.faults.iter().filter(|f| f.fired_at.is_none()).count();
        assert_eq!(report.unfired_faults, 0);
        assert_eq!(run.unfired_faults().count(), 0);
    }
    assert!(
        random_unfired > 0,
        "some random fault never fired in 30 seeds"
    );
}

#[test]
fn shards_merge_the_untested_counts_and_the_milestones() {
    let s = bundled("figure-9-6");
    let mut lines = Vec::new();
    for index in 0..2 {
        let mut o = options(0..6, FaultMode::Scenario);
        o.shard = Shard { index, count: 2 };
        lines.push(sweep(&s, &o, &|_| {}).json(&o).to_string());
    }
    let short = options(0..2, FaultMode::Scenario);
    lines.push(
        sweep(&too_short(), &short, &|_| {})
            .json(&short)
            .to_string(),
    );
    let merged = fencesim::explore::shard::merge(lines.iter().map(String::as_str)).unwrap();
    let summary = merged.last().unwrap();
    assert_eq!(summary["seeds"], 8);
    assert_eq!(summary["milestones"]["holder_paused_past_lease"], 6);
    assert_eq!(summary["inconclusive"], 2);
    assert_eq!(summary["cut_short"], 2);
    assert_eq!(summary["unfired"], 0);
}
