//! A sweep stopped by SIGTERM, SIGINT or SIGKILL and resumed gives what the
//! uninterrupted sweep gives, in every mode: the same failing lines (seed,
//! trace, repro), the same counts, and for guided search the same corpus.
//! And the bounds every command checks before spending: `--exhaustive`'s
//! menu, `margin`'s runs and `report`'s size, on a thousand-client file.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read as _};
use std::process::{Command, Stdio};
use std::sync::Mutex;

use serde_json::Value;

use crate::{fencesim, TempDir};

const UNFENCED: &str = "scenarios/explore-lease-unfenced.toml";
const CROWD: &str = "tests/fixtures/thousand-clients.toml";

/// Starts `args`, sends `signal` once its first checkpoint line is out,
/// and returns what it wrote and its exit code (`None`: killed).
fn interrupted(args: &[&str], signal: &str) -> (String, Option<i32>) {
    let mut child = crate::support::command(crate::support::crate_root())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("fencesim starts");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut out = String::new();
    loop {
        let mut line = String::new();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "the sweep ended before its first checkpoint: {out}"
        );
        out.push_str(&line);
        if line.contains("\"progress\":true") {
            break;
        }
    }
    let sent = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    stdout.read_to_string(&mut out).unwrap();
    (out, child.wait().unwrap().code())
}

fn lines(out: &str) -> Vec<Value> {
    // A sweep killed outright may leave its last line cut.
    out.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// What a user relies on in a sweep's output: each failing line's number,
/// trace and repro (and injections), in order; the summary without the
/// wall-clock fields.
fn essence(out: &str) -> (Vec<String>, Value) {
    let all = lines(out);
    let failing = all
        .iter()
        .filter(|l| l.get("seed").is_some())
        .map(|l| {
            format!(
                "{} {} {} {} {}",
                l["seed"], l["injection"], l["trace_hash"], l["repro"], l["injected"]
            )
        })
        .collect();
    let mut summary = all.last().expect("a summary").clone();
    assert_eq!(summary["summary"], true, "{summary}");
    for key in ["wall_ms", "seeds_per_sec", "jobs"] {
        summary.as_object_mut().unwrap().remove(key);
    }
    (failing, summary)
}

/// Runs `args` whole, then stopped by `signal` and resumed, and checks that
/// both give the same; `reset` runs before each (a guided sweep's corpus).
/// The uninterrupted sweep of `args`: run once per test process and kept,
/// since a sweep's output is a function of its arguments (the determinism
/// tests hold it to that), and several tests resume the same sweep under
/// different signals.
fn whole_sweep(args: &[&str]) -> String {
    static WHOLE: Mutex<BTreeMap<Vec<String>, String>> = Mutex::new(BTreeMap::new());
    let key: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    if let Some(out) = WHOLE.lock().unwrap().get(&key) {
        return out.clone();
    }
    let (code, whole, err) = fencesim(args).into_parts();
    assert_eq!(code, 1, "{err}");
    WHOLE.lock().unwrap().insert(key, whole.clone());
    whole
}

/// Resumes `args` stopped by `signal` and compares it with the whole sweep.
/// `reset` (a guided sweep's corpus, which the sweep grows) runs before
/// each of them; without one, the whole sweep is run once for every test.
fn resumes_exactly(args: &[&str], signal: &str, reset: Option<&dyn Fn()>) {
    let whole = match reset {
        None => whole_sweep(args),
        Some(reset) => {
            reset();
            let (code, whole, err) = fencesim(args).into_parts();
            assert_eq!(code, 1, "{err}");
            reset();
            whole
        }
    };
    let (stopped, code) = interrupted(args, signal);
    let expected = match signal {
        "-TERM" => Some(143),
        "-INT" => Some(130),
        _ => None,
    };
    assert_eq!(code, expected, "{args:?} {signal}");
    let tmp = TempDir::new("interrupt");
    let file = tmp.join(&format!("{}{signal}.jsonl", args[2].replace('-', "")));
    std::fs::write(&file, &stopped).unwrap();
    let (code, resumed, err) =
        fencesim(&["explore", args[1], "--resume", file.to_str().unwrap()]).into_parts();
    assert_eq!(code, 1, "{err}");
    let (a, b) = (essence(&resumed), essence(&whole));
    assert!(!b.0.is_empty(), "the sweep finds failing seeds");
    assert_eq!(a.0, b.0, "{args:?} {signal}: failing lines");
    assert_eq!(a.1, b.1, "{args:?} {signal}: summary");
}

#[test]
fn random_and_scenario_sweeps_resume_exactly_after_sigkill() {
    let random = [
        "explore", UNFENCED, "--seeds", "0..2500", "--json", "--jobs", "2",
    ];
    resumes_exactly(&random, "-KILL", None);
    let scenario = [
        "explore",
        "scenarios/figure-9-6-unfenced.toml",
        "--faults",
        "scenario",
        "--seeds",
        "0..2500",
        "--json",
        "--jobs",
        "2",
    ];
    resumes_exactly(&scenario, "-INT", None);
}

#[test]
fn a_generic_sweep_resumes_exactly_after_sigterm() {
    let args = [
        "explore",
        UNFENCED,
        "--generic",
        "--seeds",
        "0..2500",
        "--json",
        "--jobs",
        "2",
    ];
    resumes_exactly(&args, "-TERM", None);
}

#[test]
fn a_guided_sweep_resumes_exactly_with_the_same_corpus() {
    let tmp = TempDir::new("interrupt");
    let corpus = tmp.join("corpus.toml");
    let path = corpus.to_str().unwrap().to_owned();
    let reset = || {
        let _ = std::fs::remove_file(&corpus);
    };
    let args = [
        "explore", UNFENCED, "--guided", "--corpus", &path, "--seeds", "0..2500", "--json",
        "--jobs", "2",
    ];
    for signal in ["-TERM", "-KILL"] {
        reset();
        let (code, _, err) = fencesim(&args).into_parts();
        assert_eq!(code, 1, "{err}");
        let whole = std::fs::read_to_string(&corpus).unwrap();
        resumes_exactly(&args, signal, Some(&reset));
        let resumed = std::fs::read_to_string(&corpus).unwrap();
        assert!(whole.matches("[[entries]]").count() > 3, "{whole}");
        assert_eq!(resumed, whole, "{signal}: the grown corpus");
    }
    reset();
}

#[test]
fn a_depth_bounded_sweep_resumes_exactly() {
    let args = [
        "explore", UNFENCED, "--depth", "3", "--seeds", "0..2500", "--json", "--jobs", "2",
    ];
    resumes_exactly(&args, "-KILL", None);
    resumes_exactly(&args, "-INT", None);
}

#[test]
fn an_exhaustive_search_streams_stops_and_resumes_exactly() {
    // A twentieth of the pairs: a few thousand runs.
    let args = [
        "explore",
        UNFENCED,
        "--exhaustive",
        "2",
        "--shard",
        "3/20",
        "--json",
        "--jobs",
        "2",
    ];
    resumes_exactly(&args, "-TERM", None);
    resumes_exactly(&args, "-KILL", None);
}

#[test]
fn a_resumed_summary_counts_time_and_mechanism_exactly() {
    // Two resumptions in a row: milliseconds rounded each time would drift.
    let args = [
        "explore", UNFENCED, "--seeds", "0..2500", "--json", "--jobs", "2",
    ];
    let whole = whole_sweep(&args);
    let (stopped, _) = interrupted(&args, "-KILL");
    let tmp = TempDir::new("interrupt");
    let first = tmp.join("first.jsonl");
    std::fs::write(&first, &stopped).unwrap();
    let (_, resumed, _) =
        fencesim(&["explore", UNFENCED, "--resume", first.to_str().unwrap()]).into_parts();
    let (w, r) = (essence(&whole).1, essence(&resumed).1);
    assert_eq!(r["sim_ns"], w["sim_ns"]);
    assert_eq!(r["sim_ms"], w["sim_ms"]);
    assert_eq!(r["mechanism_seeds"], w["mechanism_seeds"]);
    // A checkpoint's mechanism count is what a resumption starts from, not
    // the failing lines (at most 10 000 of them): forge one that says more.
    let mut forged: Vec<Value> = lines(&stopped)
        .into_iter()
        .filter(|l| l.get("seed").is_none())
        .collect();
    let last = forged.last_mut().unwrap();
    last["mechanism_seeds"] = 12_345.into();
    last["first_mechanism_seed"] = 0.into();
    let tmp = TempDir::new("interrupt");
    let file = tmp.join("forged.jsonl");
    let text: String = forged.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let (_, out, err) =
        fencesim(&["explore", UNFENCED, "--resume", file.to_str().unwrap()]).into_parts();
    let s = essence(&out).1;
    let new = w["mechanism_seeds"].as_u64().unwrap();
    assert!(
        s["mechanism_seeds"].as_u64().unwrap() >= 12_345,
        "{s} {err}"
    );
    assert!(
        s["mechanism_seeds"].as_u64().unwrap() <= 12_345 + new,
        "{s}"
    );
    assert_eq!(s["first_mechanism_seed"], 0);
}

#[test]
fn a_resumed_file_s_failing_lines_are_written_in_seed_order_when_nothing_new_fails() {
    // A stopped part that holds every failing seed: the whole range done
    // but one seed at the end.
    let (_, out, _) = fencesim(&["explore", UNFENCED, "--seeds", "0..300", "--json"]).into_parts();
    let mut all = lines(&out);
    let mut last = all.pop().unwrap();
    let failing: Vec<u64> = all.iter().map(|l| l["seed"].as_u64().unwrap()).collect();
    assert!(failing.len() > 5);
    let map = last.as_object_mut().unwrap();
    map.remove("summary");
    map.insert("progress".into(), true.into());
    map.insert("range".into(), "0..301".into());
    all.push(last);
    let tmp = TempDir::new("interrupt");
    let file = tmp.join("all-but-one.jsonl");
    let text: String = all.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let (_, resumed, err) =
        fencesim(&["explore", UNFENCED, "--resume", file.to_str().unwrap()]).into_parts();
    let written: Vec<u64> = lines(&resumed)
        .iter()
        .filter_map(|l| l.get("seed").and_then(Value::as_u64))
        .collect();
    // Seed 300 may fail too; every earlier one is there, in order, before
    // the checkpoint that claims them.
    assert_eq!(&written[..failing.len()], &failing[..], "{err}");
    let first_checkpoint = resumed
        .lines()
        .position(|l| l.contains("\"progress\":true"))
        .expect("a checkpoint at once");
    assert!(first_checkpoint >= failing.len(), "{resumed}");
}

#[test]
fn exhaustive_on_a_crowd_is_refused_from_its_size_before_any_menu() {
    for depth in ["1", "2"] {
        let started = std::time::Instant::now();
        let (code, out, err) = fencesim(&["explore", CROWD, "--exhaustive", depth]).into_parts();
        assert_eq!(code, 2, "{out}{err}");
        assert!(err.contains("injections makes"), "{err}");
        assert!(
            err.contains("more than 10000") && err.contains("--max-runs"),
            "{err}"
        );
        assert!(out.is_empty(), "{out}");
        assert!(started.elapsed().as_secs() < 60, "counted, not built");
    }
}

#[test]
fn margin_and_report_on_a_crowd_say_what_they_would_cost_and_refuse() {
    let (code, out, err) = fencesim(&["margin", CROWD]).into_parts();
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.is_empty());
    assert!(
        err.contains("more than 5000") && err.contains("--max-runs"),
        "{err}"
    );
    assert!(err.contains("probes"), "{err}");
    let (code, _, err) =
        fencesim(&["margin", "scenarios/figure-9-6.toml", "--max-runs", "10"]).into_parts();
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--max-runs"), "{err}");

    let tmp = TempDir::new("interrupt");
    let dir = tmp.join("crowd-report");
    let (code, _, err) = fencesim(&["report", CROWD, "--out", dir.to_str().unwrap()]).into_parts();
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("1000 clients") && err.contains("more than 20000000"),
        "{err}"
    );
    assert!(!dir.join("thousand-clients.html").exists());
}

#[test]
fn a_corpus_that_is_not_a_regular_file_is_refused() {
    let (code, _, err) = fencesim(&[
        "explore",
        UNFENCED,
        "--guided",
        "--corpus",
        "/dev/zero",
        "--seeds",
        "0..2",
    ])
    .into_parts();
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("corpus") && err.contains("regular file"),
        "{err}"
    );
    let tmp = TempDir::new("interrupt");
    let link = tmp.join("corpus-link.toml");
    std::os::unix::fs::symlink("/etc/passwd", &link).unwrap();
    let (code, _, err) = fencesim(&[
        "explore",
        UNFENCED,
        "--guided",
        "--corpus",
        link.to_str().unwrap(),
        "--seeds",
        "0..2",
    ])
    .into_parts();
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("symbolic link"), "{err}");
}

#[test]
fn every_mode_resumes_exactly_after_the_signals_the_tests_above_leave_out() {
    // With the tests above, each mode is stopped by each of SIGTERM, SIGINT
    // and SIGKILL once.
    fn sweep<'a>(mode: &[&'a str]) -> Vec<&'a str> {
        let mut args = vec!["explore", UNFENCED];
        args.extend_from_slice(mode);
        args.extend_from_slice(&["--json", "--jobs", "2"]);
        args
    }
    let figure = [
        "explore",
        "scenarios/figure-9-6-unfenced.toml",
        "--faults",
        "scenario",
        "--seeds",
        "0..2500",
        "--json",
        "--jobs",
        "2",
    ];
    for (args, signal) in [
        (sweep(&["--seeds", "0..2500"]), "-TERM"),
        (sweep(&["--seeds", "0..2500"]), "-INT"),
        (figure.to_vec(), "-TERM"),
        (figure.to_vec(), "-KILL"),
        (sweep(&["--generic", "--seeds", "0..2500"]), "-INT"),
        (sweep(&["--generic", "--seeds", "0..2500"]), "-KILL"),
        (sweep(&["--depth", "3", "--seeds", "0..2500"]), "-TERM"),
        (sweep(&["--exhaustive", "2", "--shard", "3/20"]), "-INT"),
    ] {
        resumes_exactly(&args, signal, None);
    }
    // Guided, under SIGINT, with its corpus.
    let tmp = TempDir::new("interrupt");
    let corpus = tmp.join("corpus-int.toml");
    let path = corpus.to_str().unwrap().to_owned();
    let reset = || {
        let _ = std::fs::remove_file(&corpus);
    };
    let guided = sweep(&["--guided", "--corpus", &path, "--seeds", "0..2500"]);
    resumes_exactly(&guided, "-INT", Some(&reset));
    reset();
}
