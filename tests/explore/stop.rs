//! Sweeps that survive interruption: streaming lines, SIGTERM, `--resume`,
//! the failing-seed cap, `--run-timeout`, and the exhaustive run cap, as a
//! user meets them through the binary.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::{fencesim, TempDir};

const UNFENCED: &str = "scenarios/explore-lease-unfenced.toml";

fn json_lines(out: &str) -> Vec<Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn summary(lines: &[Value]) -> &Value {
    let last = lines.last().expect("a summary line");
    assert_eq!(last["summary"], true, "{last}");
    last
}

/// The failing seeds' lines, without the fields that vary between runs.
fn failing(lines: &[Value]) -> Vec<(u64, String)> {
    lines
        .iter()
        .filter(|l| l.get("seed").is_some())
        .map(|l| (l["seed"].as_u64().unwrap(), l["trace_hash"].to_string()))
        .collect()
}

#[test]
fn sigterm_stops_a_sweep_cleanly_and_resume_finishes_it() {
    // Interrupt once the first failing seed is out.
    let mut child = crate::support::command(crate::support::crate_root())
        .args([
            "explore", UNFENCED, "--seeds", "0..1000", "--json", "--jobs", "2",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("fencesim starts");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(143),
        "the sweep finished before SIGTERM?"
    );
    let out = first + &rest;
    let lines = json_lines(&out);
    let stopped = summary(&lines);
    assert_eq!(stopped["stopped"], true);
    assert_eq!(stopped["complete"], false);
    let done = stopped["completed_ranges"].as_array().unwrap();
    assert_eq!(done.len(), 1, "{stopped}");
    let end = done[0][1].as_u64().unwrap();
    assert_eq!(done[0][0], 0);
    assert!(end > 7 && end < 1000, "{stopped}");
    assert_eq!(stopped["seeds"], end);
    // Every failing seed of the completed range is written, in seed order.
    let seeds: Vec<u64> = failing(&lines).iter().map(|(s, _)| *s).collect();
    assert!(seeds.windows(2).all(|w| w[0] < w[1]));
    assert!(seeds.iter().all(|s| *s < end));
    assert_eq!(
        seeds.len() as u64,
        stopped["failing_seeds"].as_u64().unwrap()
    );

    let tmp = TempDir::new("stop");
    let file = tmp.join("stopped.jsonl");
    std::fs::write(&file, &out).unwrap();
    let (code, resumed, err) =
        fencesim(&["explore", UNFENCED, "--resume", file.to_str().unwrap()]).into_parts();
    assert_eq!(code, 1, "{err}");
    let (code, whole, _) =
        fencesim(&["explore", UNFENCED, "--seeds", "0..1000", "--json"]).into_parts();
    assert_eq!(code, 1);
    let (resumed, whole) = (json_lines(&resumed), json_lines(&whole));
    assert_eq!(failing(&resumed), failing(&whole));
    let (a, b) = (summary(&resumed), summary(&whole));
    for key in [
        "seeds",
        "violations",
        "crashed",
        "failing_seeds",
        "outcomes",
        "by_kind",
        "first_failing_seed",
    ] {
        assert_eq!(a[key], b[key], "{key}");
    }
    assert_eq!(a["completed_ranges"], serde_json::json!([[0, 1000]]));
    assert_eq!(
        (&a["complete"], &a["stopped"]),
        (&Value::Bool(true), &Value::Bool(false))
    );
}

#[test]
fn sigint_stops_a_human_sweep_with_what_it_completed() {
    let child = crate::support::command(crate::support::crate_root())
        .args(["explore", UNFENCED, "--seeds", "0..1000000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("fencesim starts");
    // A million seeds take minutes: two seconds in, it has caught the
    // signals and is still running.
    std::thread::sleep(std::time::Duration::from_secs(2));
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("explore   explore-lease-unfenced"), "{text}");
    assert!(text.contains("stopped   by SIGINT after"), "{text}");
}

#[test]
fn resume_refuses_other_settings_and_files_without_a_checkpoint() {
    let tmp = TempDir::new("stop");
    let file = tmp.join("other.jsonl");
    std::fs::write(
        &file,
        r#"{"progress": true, "completed_ranges": [[0, 10]], "seeds": 10, "range": "0..20", "shard": "0/1", "faults": "random", "scenario": "explore-lease-unfenced"}"#,
    )
    .unwrap();
    let path = file.to_str().unwrap();
    let (code, _, err) =
        fencesim(&["explore", UNFENCED, "--resume", path, "--seeds", "0..30"]).into_parts();
    assert_eq!(code, 2);
    assert!(err.contains("--seeds 0..20"), "{err}");
    let (code, _, err) = fencesim(&[
        "explore",
        "scenarios/explore-lease-fenced.toml",
        "--resume",
        path,
    ])
    .into_parts();
    assert_eq!(code, 2);
    assert!(err.contains("explore-lease-unfenced"), "{err}");
    std::fs::write(&file, "{\"seed\": 3}\nnot json\n{\"seed\": 4}\n").unwrap();
    let (code, _, err) = fencesim(&["explore", UNFENCED, "--resume", path]).into_parts();
    assert_eq!(code, 2);
    assert!(err.contains(&format!("{path}:2:")), "{err}");
}

#[test]
fn the_summary_says_when_the_failing_seed_list_was_cut() {
    // A sweep that already wrote 10 000 failing seeds (the cap) resumes over
    // 100 more seeds, some of which fail: their lines are left out, and the
    // summary says so.
    let mut text = String::new();
    for seed in 0..10_000 {
        text += &format!("{{\"seed\": {seed}, \"verdict\": \"violation\"}}\n");
    }
    text += r#"{"summary": true, "completed_ranges": [[0, 10000]], "seeds": 10000, "violations": 10000, "failing_seeds": 10000, "failing_seeds_truncated": false, "range": "0..10100", "shard": "0/1", "faults": "random", "scenario": "explore-lease-unfenced"}"#;
    let tmp = TempDir::new("stop");
    let file = tmp.join("cap.jsonl");
    std::fs::write(&file, text).unwrap();
    let (code, out, err) =
        fencesim(&["explore", UNFENCED, "--resume", file.to_str().unwrap()]).into_parts();
    assert_eq!(code, 1, "{err}");
    let lines = json_lines(&out);
    let s = summary(&lines);
    assert_eq!(s["seeds"], 10_100);
    assert!(s["failing_seeds"].as_u64().unwrap() > 10_000, "{s}");
    assert_eq!(s["failing_seeds_truncated"], true);
    assert_eq!(failing(&lines).len(), 10_000);
}

#[test]
fn exhaustive_pairs_are_counted_before_they_run_and_capped() {
    // Two clients, a hundred rounds each: thousands of injections, millions
    // of pairs.
    let tmp = TempDir::new("stop");
    let file = tmp.join("busy.toml");
    std::fs::write(
        &file,
        r#"name = "busy"
[lock]
design = "lease"
ttl = "10s"
tokens = true
[storage]
design = "fenced"
[[clients]]
name = "client1"
rounds = 100
[[clients]]
name = "client2"
rounds = 100
"#,
    )
    .unwrap();
    let path = file.to_str().unwrap();
    let (code, out, err) = fencesim(&["explore", path, "--exhaustive", "2"]).into_parts();
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("more than 10000:") && err.contains("--max-runs"),
        "{err}"
    );
    assert!(out.is_empty());
}

#[test]
fn shrink_refuses_a_seed_a_scenario_file_cannot_hold() {
    let tmp = TempDir::new("stop");
    let out_file = tmp.join("big-seed.toml");
    let (code, _, err) = fencesim(&[
        "shrink",
        UNFENCED,
        "--seed",
        "9223372036854775808",
        "--faults",
        "scenario",
        "--out",
        out_file.to_str().unwrap(),
    ])
    .into_parts();
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("9223372036854775807"), "{err}");
    assert!(!out_file.exists());
}

#[test]
fn resume_refuses_a_forged_file_with_the_line_that_does_not_fit() {
    let line = |fields: &str| {
        format!(
            "{{\"seed\": 3, \"verdict\": \"violation\"}}\n{{\"progress\": true, {fields}, \
             \"range\": \"0..20\", \"shard\": \"0/1\", \"faults\": \"random\", \
             \"scenario\": \"explore-lease-unfenced\"}}\n"
        )
    };
    let forged = [
        (
            line(r#""completed_ranges": [[0, 30]], "seeds": 30"#),
            "completed range [0, 30] lies outside the sweep's range 0..20",
        ),
        (
            line(r#""completed_ranges": [[0, 10], [5, 15]], "seeds": 15"#),
            "completed ranges [0, 10] and [5, 15] overlap",
        ),
        (
            line(r#""completed_ranges": [[0, 10]], "seeds": -4"#),
            "\"seeds\" is -4, not a count",
        ),
        (
            line(r#""completed_ranges": [[0, 10]], "seeds": 7"#),
            "it counts 7 seeds, but its completed ranges hold 10 seeds of shard 0/1",
        ),
        (
            line(r#""completed_ranges": [[0, 10]], "seeds": 10, "failing_seeds": 0"#),
            "it counts 0 failing seeds in completed_ranges, but the file has 1",
        ),
    ];
    let tmp = TempDir::new("stop");
    let file = tmp.join("forged.jsonl");
    let path = file.to_str().unwrap().to_owned();
    for (text, needle) in forged {
        std::fs::write(&file, &text).unwrap();
        let (code, out, err) = fencesim(&["explore", UNFENCED, "--resume", &path]).into_parts();
        assert_eq!(code, 2, "{text}: {err}");
        assert!(out.is_empty(), "nothing runs: {out}");
        assert!(err.contains(&format!("{path}:2:1: {needle}")), "{err}");
    }
    // Not a regular file: refused before anything is read.
    let (code, _, err) = fencesim(&["explore", UNFENCED, "--resume", "/dev/zero"]).into_parts();
    assert_eq!(code, 2);
    assert!(err.contains("not a regular file"), "{err}");
}

#[test]
fn a_stopped_generic_sweep_resumes_as_a_generic_one() {
    // The first half of a `--generic` sweep, as its last checkpoint would
    // record it; resumed without the flag, it must finish as the whole
    // `--generic` sweep does, repro commands included.
    let args = |seeds: &str| {
        ["explore", UNFENCED, "--generic", "--seeds", seeds, "--json"]
            .map(str::to_owned)
            .to_vec()
    };
    let run = |args: Vec<String>| {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        fencesim(&refs).into_parts()
    };
    let (_, whole, _) = run(args("0..600"));
    let (_, half, _) = run(args("0..300"));
    let mut lines: Vec<serde_json::Value> = json_lines(&half);
    let mut last = lines.pop().unwrap();
    let map = last.as_object_mut().unwrap();
    map.remove("summary");
    map.insert("progress".into(), true.into());
    map.insert("range".into(), "0..600".into());
    lines.push(last);
    let tmp = TempDir::new("stop");
    let file = tmp.join("generic-half.jsonl");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let (code, out, err) =
        fencesim(&["explore", UNFENCED, "--resume", file.to_str().unwrap()]).into_parts();
    assert_eq!(code, 1, "{err}");
    let key = |l: &serde_json::Value| {
        (
            l["seed"].as_u64().unwrap(),
            l["trace_hash"].to_string(),
            l["repro"].as_str().unwrap().to_owned(),
        )
    };
    let seeds = |out: &str| -> Vec<_> {
        json_lines(out)
            .iter()
            .filter(|l| l.get("seed").is_some())
            .map(key)
            .collect()
    };
    let (resumed, expected) = (seeds(&out), seeds(&whole));
    assert!(!expected.is_empty());
    assert_eq!(resumed, expected);
    assert!(resumed.iter().all(|(_, _, r)| r.ends_with(" --generic")));
    assert_eq!(summary(&json_lines(&out))["generic"], true);
    assert!(
        summary(&json_lines(&out)).get("progress").is_none(),
        "a summary after a checkpoint is no checkpoint"
    );
    // And a real checkpoint records the flag for `--resume` to read.
    let (_, long, _) = run(args("0..1100"));
    let checkpoints: Vec<_> = json_lines(&long)
        .into_iter()
        .filter(|l| l["progress"] == true)
        .collect();
    assert!(!checkpoints.is_empty());
    assert!(
        checkpoints.iter().all(|c| c["generic"] == true),
        "{checkpoints:?}"
    );
}
