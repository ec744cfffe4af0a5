//! `fencesim merge`: the shards of a sweep, run as separate processes,
//! merge into what one machine's sweep of the range prints; a stopped or
//! killed shard leaves gaps, its resumed output closes them; files that are
//! not one sweep's output are refused with `file:line:column`.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::cli::UNFENCED;
use crate::{fencesim, TempDir};

/// Writes `text` to `name` in `dir`; returns its path, as an argument.
fn write(dir: &TempDir, name: &str, text: &str) -> String {
    dir.write(name, text).display().to_string()
}

fn json_lines(out: &str) -> Vec<Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The failing seeds' (seed, trace hash, kinds), in the order printed.
fn failing(lines: &[Value]) -> Vec<(u64, String, String)> {
    lines
        .iter()
        .filter(|l| l.get("seed").is_some())
        .map(|l| {
            (
                l["seed"].as_u64().unwrap(),
                l["trace_hash"].to_string(),
                l["kinds"].to_string(),
            )
        })
        .collect()
}

/// The summary fields that do not depend on the machine or the split.
const COUNTS: [&str; 12] = [
    "seeds",
    "violations",
    "crashed",
    "timed_out",
    "failing_seeds",
    "first_failing_seed",
    "by_kind",
    "outcomes",
    "inconclusive",
    "cut_short",
    "unfired",
    "milestones",
];

/// `explore --json` of one shard of `range`, as the shard's file.
fn shard(dir: &TempDir, file: &str, range: &str, shard: &str) -> String {
    let (code, out, err) = fencesim(&[
        "explore", file, "--seeds", range, "--shard", shard, "--jobs", "1", "--json",
    ])
    .into_parts();
    assert!(code == 0 || code == 1, "shard {shard} exited {code}: {err}");
    write(
        dir,
        &format!("shard-{}.jsonl", shard.replace('/', "-of-")),
        &out,
    )
}

/// Shard `K/N` of `range` stopped by SIGTERM once its first line is out:
/// its output, as the partial file a stopped task leaves.
fn stopped_shard(range: &str, shard: &str) -> String {
    let mut child = crate::support::command(crate::support::crate_root())
        .args([
            "explore", UNFENCED, "--seeds", range, "--shard", shard, "--jobs", "1", "--json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("fencesim starts");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut out = String::new();
    stdout.read_line(&mut out).unwrap();
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    stdout.read_to_string(&mut out).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(143),
        "the shard finished before SIGTERM?"
    );
    out
}

fn merge(files: &[&str]) -> (i32, Vec<Value>, String) {
    let mut args = vec!["merge", "--json"];
    args.extend_from_slice(files);
    let (code, out, err) = fencesim(&args).into_parts();
    (code, json_lines(&out), err)
}

#[test]
fn four_shards_merge_into_the_one_machine_sweep() {
    let dir = TempDir::new("four");
    let files: Vec<String> = (0..4)
        .map(|k| shard(&dir, UNFENCED, "0..400", &format!("{k}/4")))
        .collect();
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    let (code, merged, err) = merge(&files);
    assert_eq!(code, 1, "violations found: {err}");
    let (whole_code, whole, _) =
        fencesim(&["explore", UNFENCED, "--seeds", "0..400", "--json"]).into_parts();
    assert_eq!(whole_code, 1);
    let whole = json_lines(&whole);
    assert!(failing(&merged).len() > 10, "the demo fails often");
    assert_eq!(failing(&merged), failing(&whole));
    let (m, w) = (merged.last().unwrap(), whole.last().unwrap());
    for key in COUNTS {
        assert_eq!(m[key], w[key], "{key}");
    }
    assert_eq!(m["summary"], true);
    assert_eq!(m["complete"], true);
    assert_eq!(m["gaps"], json!([]));
    assert_eq!((&m["range"], &m["shards"]), (&json!("0..400"), &json!(4)));
    // Each shard's own fields are gone from the whole.
    for key in ["shard", "jobs", "completed_ranges"] {
        assert!(m.get(key).is_none(), "{key} in {m}");
    }
    // The same files in another order merge alike.
    let reversed: Vec<&str> = files.iter().rev().copied().collect();
    assert_eq!(failing(&merge(&reversed).1), failing(&whole));

    let mut args = vec!["merge"];
    args.extend_from_slice(&files);
    let (code, human, _) = fencesim(&args).into_parts();
    assert_eq!(code, 1);
    let first = w["first_failing_seed"].as_u64().unwrap();
    for line in [
        "merge     explore-lease-unfenced, seeds 0..400 in 4 shards, faults random, from 4 files"
            .to_owned(),
        "seeds     400 run: ".to_owned(),
        format!("verdict   {} seeds violate", w["violations"]),
        "complete  every seed of every shard ran".to_owned(),
        format!("lowest failing seed {first}"),
        format!("repro     fencesim run {UNFENCED} --seed {first} --faults random"),
    ] {
        assert!(human.contains(&line), "{line:?} not in\n{human}");
    }
}

#[test]
fn a_stopped_shard_leaves_a_gap_that_its_resumed_output_closes() {
    let dir = TempDir::new("stopped");
    let range = "0..2000";
    let mut files: Vec<String> = (0..4)
        .map(|k| shard(&dir, UNFENCED, range, &format!("{k}/4")))
        .collect();
    let partial = stopped_shard(range, "1/4");
    let stopped = json_lines(&partial);
    let done = stopped.last().unwrap()["completed_ranges"].clone();
    let end = done[0][1].as_u64().unwrap();
    assert!(end < 2000, "{done}");
    files[1] = write(&dir, "shard-1-of-4.partial.jsonl", &partial);
    let (code, merged, err) = merge(&files.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 1, "the seeds that ran violate: {err}");
    let summary = merged.last().unwrap();
    assert_eq!(summary["complete"], false);
    assert_eq!(summary["stopped"], true);
    assert_eq!(
        summary["gaps"],
        json!([{"shard": "1/4", "missing": [[end, 2000]]}])
    );
    let (_, whole, _) = fencesim(&["explore", UNFENCED, "--seeds", range, "--json"]).into_parts();
    let whole = json_lines(&whole);
    // The failing seeds are the whole sweep's, less those of the gap.
    let expected: Vec<_> = failing(&whole)
        .into_iter()
        .filter(|(s, _, _)| !(s % 4 == 1 && *s >= end))
        .collect();
    assert_eq!(failing(&merged), expected);
    let (_, human, _) =
        fencesim(&["merge", &files[0], &files[1], &files[2], &files[3]]).into_parts();
    assert!(
        human.contains(&format!("gaps      shard 1/4 has not run {end}..2000;")),
        "{human}"
    );

    // Given with its resumed output, the shard's seeds are in twice.
    let (code, resumed, err) = fencesim(&["explore", UNFENCED, "--resume", &files[1]]).into_parts();
    assert_eq!(code, 1, "{err}");
    let resumed = write(&dir, "shard-1-of-4.jsonl", &resumed);
    let (code, _, err) = merge(&[&files[0], &files[1], &resumed, &files[2], &files[3]]);
    assert_eq!(code, 2);
    assert!(
        err.contains(&format!("{resumed}:"))
            && err.contains(&format!("shard 1/4 is also in {}", files[1])),
        "{err}"
    );
    // Instead of it, the gap is closed: the whole sweep.
    files[1] = resumed;
    let (code, merged, _) = merge(&files.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 1);
    assert_eq!(failing(&merged), failing(&whole));
    let (m, w) = (merged.last().unwrap(), whole.last().unwrap());
    for key in COUNTS {
        assert_eq!(m[key], w[key], "{key}");
    }
    assert_eq!((&m["complete"], &m["gaps"]), (&json!(true), &json!([])));
}

#[test]
fn a_shard_killed_while_writing_misses_what_its_last_whole_line_does_not_cover() {
    let dir = TempDir::new("killed");
    let range = "0..2000";
    let partial = stopped_shard(range, "2/4");
    // Killed in the middle of writing its first checkpoint (or summary):
    // the cut line is left out, and without a whole one the shard's seeds
    // do not count.
    let first = partial.find("\"completed_ranges\"").unwrap();
    let cut = &partial[..partial[..first].rfind('\n').unwrap() + 30];
    assert!(cut.contains("\"seed\""), "failing seeds before it: {cut}");
    let files = [
        shard(&dir, UNFENCED, range, "0/4"),
        shard(&dir, UNFENCED, range, "1/4"),
        write(&dir, "shard-2-of-4.tmp", cut),
        // Killed before its first line.
        write(&dir, "shard-3-of-4.tmp", ""),
    ];
    let (code, merged, err) = merge(&files.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 1, "{err}");
    let summary = merged.last().unwrap();
    assert_eq!(summary["complete"], false);
    assert_eq!(
        summary["gaps"],
        json!([
            {"shard": "2/4", "missing": [[0, 2000]]},
            {"shard": "3/4", "missing": [[0, 2000]]},
        ])
    );
    assert_eq!(summary["seeds"], 1000);
    assert!(failing(&merged).iter().all(|(s, _, _)| s % 4 < 2));
}

#[test]
fn gaps_without_a_violation_are_inconclusive_and_a_whole_safe_sweep_is_not() {
    let dir = TempDir::new("fenced");
    let fenced = "scenarios/explore-lease-fenced.toml";
    let a = shard(&dir, fenced, "0..100", "0/2");
    let (code, merged, _) = merge(&[&a]);
    assert_eq!(code, 4, "half a sweep claims no safety");
    assert_eq!(
        merged.last().unwrap()["gaps"],
        json!([{"shard": "1/2", "missing": [[0, 100]]}])
    );
    let b = shard(&dir, fenced, "0..100", "1/2");
    let (code, merged, _) = merge(&[&a, &b]);
    assert_eq!(code, 0);
    assert_eq!(merged.len(), 1, "no failing seed, one summary");
    assert_eq!(merged[0]["seeds"], 100);
    let (code, human, _) = fencesim(&["merge", &a, &b]).into_parts();
    assert_eq!(code, 0);
    assert!(human.contains("verdict   no violation"), "{human}");
}

#[test]
fn files_that_are_not_one_sweeps_output_exit_2_naming_file_line_and_column() {
    let dir = TempDir::new("bad");
    let good = shard(&dir, UNFENCED, "0..40", "0/2");
    let summary = std::fs::read_to_string(&good)
        .unwrap()
        .lines()
        .last()
        .unwrap()
        .to_owned();
    let cases: Vec<(String, String)> = vec![
        (
            write(
                &dir,
                "not-json.jsonl",
                &format!("{{\"seed\": 3}}\n{{\"seed\": 4,,}}\n{summary}\n"),
            ),
            ":2:12: not a JSON line of `explore --json`".to_owned(),
        ),
        (
            write(
                &dir,
                "neither.jsonl",
                &format!("{summary}\n{{\"verdict\": \"violation\"}}\n"),
            ),
            ":2:1: neither a failing seed's line".to_owned(),
        ),
        (
            write(
                &dir,
                "bad-ranges.jsonl",
                &summary.replace(
                    "\"completed_ranges\":[[0,40]]",
                    "\"completed_ranges\":[[40,0]]",
                ),
            ),
            ":1:1: completed_ranges is not a list of [start, end] pairs".to_owned(),
        ),
        (
            write(
                &dir,
                "bad-shard.jsonl",
                &summary.replace("\"0/2\"", "\"2/2\""),
            ),
            ":1:1: invalid shard \"2/2\"".to_owned(),
        ),
        (
            write(
                &dir,
                "other-range.jsonl",
                &summary.replace("0..40", "0..80").replace("0/2", "1/2"),
            ),
            format!(":1:1: range 0..80, but {good}:"),
        ),
        (
            write(&dir, "empty.jsonl", ""),
            "no checkpoint or summary line in any file".to_owned(),
        ),
        (dir.arg("missing.jsonl"), "cannot read".to_owned()),
    ];
    for (file, message) in &cases {
        // The odd file alone, and after a good shard.
        let other_range = file.ends_with("other-range.jsonl");
        let files: Vec<&str> = if other_range {
            vec![&good, file]
        } else {
            vec![file]
        };
        let mut args = vec!["merge"];
        args.extend_from_slice(&files);
        let (code, out, err) = fencesim(&args).into_parts();
        assert_eq!(code, 2, "{file}: {out}{err}");
        assert!(out.is_empty(), "{file}: {out}");
        assert!(!err.contains("panicked"), "{err}");
        let at = if message.starts_with(':') {
            format!("{file}{message}")
        } else {
            message.clone()
        };
        assert!(err.contains(&at), "{file}: expected {at:?} in {err}");
    }
    let (code, _, err) = fencesim(&["merge"]).into_parts();
    assert_eq!(code, 2, "{err}");
}
