//! `deploy/shard.sh`, the script the Slurm array and the Kubernetes Job
//! run, without a cluster: a shard stopped by SIGTERM to the script alone
//! (as Kubernetes stops a pod) keeps its output and resumes it, a shard
//! killed outright resumes from its last checkpoint, and the merge of the
//! shards is one machine's sweep.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::cli::UNFENCED;
use crate::{fencesim, Output, TempDir};

const SHARDS: &str = "4";

/// The shards' results directory and the sweep's range.
struct Results(TempDir, &'static str);

impl Results {
    fn new(name: &str, seeds: &'static str) -> Results {
        Results(TempDir::new(name), seeds)
    }

    fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.file(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
    }
}

/// `sh deploy/shard.sh ARGS`, with the sweep's settings, not yet waited for.
fn script(results: &Results, args: &[&str]) -> Child {
    Command::new("sh")
        .arg("deploy/shard.sh")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("CARGO")
        .env("FENCESIM", env!("CARGO_BIN_EXE_fencesim"))
        .env("SCENARIO", UNFENCED)
        .env("SEEDS", results.1)
        .env("SHARDS", SHARDS)
        .env("RESULTS", results.0.path())
        .env("JOBS", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sh runs")
}

/// What the script gave: its exit code, stdout and stderr.
fn finished(child: Child) -> Output {
    let args = ["(deploy/shard.sh)"];
    Output::new(&args, child.wait_with_output().unwrap())
}

fn run(results: &Results, args: &[&str]) -> Output {
    finished(script(results, args))
}

/// Waits until `path` holds `text`.
fn wait_for(path: &Path, text: &str) {
    let start = Instant::now();
    while !std::fs::read_to_string(path).is_ok_and(|t| t.contains(text)) {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{} never held {text}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn signal(signal: &str, pid: u32) {
    let status = Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// The fencesim process the script's shell `pid` started, once it runs
/// fencesim (the shell's other children are its grep, sed and mv).
fn fencesim_child(pid: u32) -> Option<u32> {
    let path = format!("/proc/{pid}/task/{pid}/children");
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .find(|c: &u32| {
            std::fs::read_to_string(format!("/proc/{c}/comm")).is_ok_and(|n| n.trim() == "fencesim")
        })
}

/// The failing seeds' lines and the summary's counts, which do not depend
/// on how the sweep was split.
fn result(merged: &str) -> (Vec<String>, Vec<Value>) {
    let lines: Vec<Value> = merged
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (summary, seeds) = lines.split_last().unwrap();
    let counts = [
        "seeds",
        "violations",
        "failing_seeds",
        "by_kind",
        "outcomes",
    ]
    .iter()
    .map(|k| summary[*k].clone())
    .collect();
    (seeds.iter().map(Value::to_string).collect(), counts)
}

/// One machine's sweep of the range (with `--shard K/N`, of one shard),
/// through `merge` so that both sides are printed alike.
fn one_machine(results: &Results, shard: Option<&str>) -> (Vec<String>, Vec<Value>) {
    let mut args = vec!["explore", UNFENCED, "--seeds", results.1, "--json"];
    if let Some(shard) = shard {
        args.extend(["--shard", shard]);
    }
    let (code, out, err) = fencesim(&args).into_parts();
    assert_eq!(code, 1, "{err}");
    let file = results.file("one-machine.jsonl");
    std::fs::write(&file, out).unwrap();
    let (code, merged, err) = fencesim(&["merge", "--json", file.to_str().unwrap()]).into_parts();
    assert_eq!(code, 1, "{err}");
    result(&merged)
}

#[test]
fn a_shard_stopped_by_sigterm_to_the_script_resumes_and_the_merge_is_the_whole_sweep() {
    let results = Results::new("stopped", "0..2000");
    // SIGTERM to the script alone, as Kubernetes signals a pod's first
    // process: it passes it on to fencesim.
    let child = script(&results, &["run", "1"]);
    wait_for(&results.file("shard-1-of-4.tmp"), "\"seed\"");
    signal("-TERM", child.id());
    let (code, out, _) = finished(child).into_parts();
    assert_eq!(code, 143, "{out}");
    assert!(
        out.contains("stopped (exit 143), partial output kept"),
        "{out}"
    );
    let partial = results.read("shard-1-of-4.partial.jsonl");
    let summary: Value = serde_json::from_str(partial.lines().last().unwrap()).unwrap();
    assert_eq!(
        (&summary["summary"], &summary["stopped"]),
        (&true.into(), &true.into())
    );

    // The merge so far: shard 1 partial, the others not started.
    let (code, _, _) = run(&results, &["merge"]).into_parts();
    assert_eq!(code, 0, "seeds that ran violate: a result");
    let merged = results.read("merged.jsonl");
    let last: Value = serde_json::from_str(merged.lines().last().unwrap()).unwrap();
    assert_eq!(last["complete"], false);
    assert_eq!(
        last["gaps"].as_array().unwrap().len(),
        4,
        "{}",
        last["gaps"]
    );

    let (code, out, _) = run(&results, &["run", "1"]).into_parts();
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("resuming from"), "{out}");
    for k in ["0", "2", "3"] {
        let (code, out, _) = run(&results, &["run", k]).into_parts();
        assert_eq!(code, 0, "{out}");
    }
    // A shard whose output is complete does not run again.
    let (code, out, _) = run(&results, &["run", "2"]).into_parts();
    assert_eq!(code, 0);
    assert!(out.contains("already complete"), "{out}");
    let (code, out, _) = run(&results, &["merge"]).into_parts();
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("complete  every seed of every shard ran"),
        "{out}"
    );
    let merged = result(&results.read("merged.jsonl"));
    assert!(merged.0.len() > 20, "the demo fails often");
    assert_eq!(merged, one_machine(&results, None));
}

#[test]
fn a_shard_killed_outright_resumes_from_its_last_checkpoint_twice() {
    // 3 000 seeds in the shard: a checkpoint every 1 000 (or 5 s), so the
    // resumption writes one of its own before it ends.
    let results = Results::new("killed", "0..12000");
    let tmp = results.file("shard-3-of-4.tmp");
    for _ in 0..2 {
        // Killed after a checkpoint of this run: the second time in the
        // middle of a resumption.
        let child = script(&results, &["run", "3"]);
        let start = Instant::now();
        let fencesim = loop {
            if let Some(pid) = fencesim_child(child.id()) {
                break pid;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "fencesim never started"
            );
            std::thread::sleep(Duration::from_millis(1));
        };
        // The script moved the last run's output aside before it started
        // fencesim: a checkpoint in the file is this run's.
        loop {
            let text = std::fs::read_to_string(&tmp).unwrap_or_default();
            if text.contains("\"progress\":true") {
                break;
            }
            assert!(start.elapsed() < Duration::from_secs(60), "no checkpoint");
            std::thread::sleep(Duration::from_millis(5));
        }
        // fencesim first: the script sees it killed, and must keep its
        // lines (it may be killed right after).
        signal("-KILL", fencesim);
        let (code, out, _) = finished(child).into_parts();
        assert_eq!(code, 137, "{out}");
        assert!(
            !results.file("shard-3-of-4.jsonl").exists(),
            "killed too late"
        );
    }
    let (code, out, _) = run(&results, &["run", "3"]).into_parts();
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("resuming from"), "{out}");
    let (code, out, _) = run(&results, &["merge"]).into_parts();
    assert_eq!(code, 0, "{out}");
    let merged = result(&results.read("merged.jsonl"));
    assert!(merged.0.len() > 50, "the demo fails often");
    assert_eq!(merged, one_machine(&results, Some("3/4")));
}
