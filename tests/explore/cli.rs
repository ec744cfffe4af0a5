//! The `explore` and `shrink` commands as a user runs them.

use crate::{arg, fencesim, TempDir};

pub const UNFENCED: &str = "scenarios/explore-lease-unfenced.toml";

#[test]
fn explore_prints_the_lowest_failing_seed_and_its_repro_and_exits_1() {
    let (code, out, _) = fencesim(&["explore", UNFENCED, "--seeds", "0..12"]).into_parts();
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("lowest failing seed 5"), "{out}");
    assert!(
        out.contains(&format!(
            "repro     fencesim run {UNFENCED} --seed 5 --faults random"
        )),
        "{out}"
    );
    // The repro command replays the violation.
    let (code, out, _) =
        fencesim(&["run", UNFENCED, "--seed", "5", "--faults", "random"]).into_parts();
    assert_eq!(code, 1);
    assert!(out.contains("stale_write"), "{out}");
}

#[test]
fn explore_json_lines_end_with_a_summary() {
    let (code, out, _) = fencesim(&[
        "explore", UNFENCED, "--seeds", "0..12", "--json", "--jobs", "1",
    ])
    .into_parts();
    assert_eq!(code, 1);
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (summary, rest) = lines.split_last().unwrap();
    assert_eq!(summary["summary"], true);
    // Failing seeds' lines, with checkpoints (`"progress": true`) between
    // them on a slow machine.
    let seeds: Vec<&serde_json::Value> = rest.iter().filter(|l| l.get("seed").is_some()).collect();
    assert!(rest
        .iter()
        .all(|l| l.get("seed").is_some() || l["progress"] == true));
    assert_eq!(summary["seeds"], 12);
    assert_eq!(summary["first_failing_seed"], 5);
    assert_eq!(
        summary["violations"].as_u64().unwrap() as usize,
        seeds.len()
    );
    assert!(summary["seeds_per_sec"].as_f64().unwrap() > 0.0);
    assert!(summary["wall_ms"].is_u64());
    assert_eq!(seeds[0]["seed"], 5);
    assert_eq!(seeds[0]["verdict"], "violation");
    assert!(seeds[0]["trace_hash"].is_string());

    let (code, out, _) = fencesim(&[
        "explore",
        "scenarios/explore-lease-fenced.toml",
        "--seeds",
        "0..12",
        "--json",
    ])
    .into_parts();
    assert_eq!(code, 0);
    let summary: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(summary["first_failing_seed"], serde_json::Value::Null);
}

#[test]
fn shrink_writes_a_scenario_that_run_confirms() {
    let dir = TempDir::new("shrunk");
    let out_path = &dir.arg("shrunk.toml");
    let (code, out, err) =
        fencesim(&["shrink", UNFENCED, "--seed", "7", "--out", out_path]).into_parts();
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("before") && out.contains("after"), "{out}");
    let (code, out, _) = fencesim(&["run", out_path]).into_parts();
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("VIOLATION"), "{out}");
}

#[test]
fn bad_flags_exit_2() {
    for args in [
        &["explore", UNFENCED, "--shard", "3/2"][..],
        &["explore", UNFENCED, "--seeds", "9..3"],
        &["explore", UNFENCED, "--exhaustive", "3"],
        &["explore", "no-such-file.toml"],
        &["explore", UNFENCED, "--max-runs", "10"],
        &[
            "explore",
            UNFENCED,
            "--exhaustive",
            "1",
            "--resume",
            "x.jsonl",
        ],
        &["explore", UNFENCED, "--resume", "no-such-output.jsonl"],
        &["explore", UNFENCED, "--run-timeout", "0s"],
    ] {
        assert_eq!(fencesim(args).code, 2, "{args:?}");
    }
}

#[test]
fn shrink_names_every_kind_and_the_finding_it_kept() {
    let dir = TempDir::new("late");
    let out_file = dir.join("late.toml");
    let out_path = arg(&out_file);
    let (code, out, err) = fencesim(&[
        "shrink",
        "scenarios/etcd-11456-late-grant-writes-first.toml",
        "--seed",
        "72",
        "--out",
        out_path,
    ])
    .into_parts();
    let written = std::fs::read_to_string(&out_file).unwrap_or_default();
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("verdict   violation: 1 stale_write (2 accepted, 0 rejected)"),
        "{out}"
    );
    assert!(
        out.contains(
            "kept      stale_write by client1 (grant client1#1), granted late after client2 \
             (grant client2#1)"
        ),
        "{out}"
    );
    // The file tells the shrunk story, not the scenario's.
    assert!(written.contains("description = \"Shrunk by"), "{written}");
    assert!(!written.contains("etcd issue #11456"), "{written}");
    assert!(written.contains("delay of lock to client1"), "{written}");
}

#[test]
fn exhaustive_refuses_a_scenario_that_already_fails_and_says_why() {
    let (code, out, err) = fencesim(&[
        "explore",
        "scenarios/figure-9-6-unfenced.toml",
        "--exhaustive",
        "1",
    ])
    .into_parts();
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("already fails without injections"), "{err}");
    assert!(err.contains("stale_write"), "{err}");
    assert!(
        err.contains("fencesim run scenarios/figure-9-6-unfenced.toml --seed 1"),
        "{err}"
    );
    // Its fenced twin is safe without injections: the search runs.
    let (code, out, err) = fencesim(&[
        "explore",
        "scenarios/figure-9-6.toml",
        "--exhaustive",
        "1",
        "--json",
    ])
    .into_parts();
    assert_eq!(code, 0, "{out}{err}");
    let summary: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(summary["baseline_verdict"], "safe");
}
