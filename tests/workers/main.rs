//! Worker processes: a sweep runs its seeds in child processes of the
//! program that runs the command line, kills one at `--run-timeout` and
//! replaces one that `--run-memory` ended; `run` makes its run in a child
//! held to the same memory budget.
//!
//! The program under test must register processes that misbehave, so this
//! binary is its own command line (no libtest harness): started with
//! [`CLI`] set it is `fencesim` with those processes (`main_with`, which
//! also serves as the sweep's worker); started by `cargo test` it runs the
//! tests below, each starting itself as that command line.

#[path = "../support/mod.rs"]
mod support;

use std::process::{Command, ExitCode};

use fencesim::design::catalog::Registry;
use serde_json::Value;
use support::{crate_root, TempDir};

/// Set when this binary is the command line under test.
const CLI: &str = "FENCESIM_WORKERS_TEST_CLI";
/// Set, to a value of its own, on every command a test starts: every
/// process the command starts inherits it, so a test can tell whether one
/// is still alive.
const MARK: &str = "FENCESIM_WORKERS_TEST_MARK";

/// The bundled designs, and two clients that misbehave in about a third of
/// the seeds (by the run's own random draw) and run nothing otherwise:
/// `hog` allocates without bound, `spin` never returns from its task.
fn registry() -> Registry {
    let mut registry = Registry::builtin();
    registry.add_process("hog", "allocates without bound", |_, _| {
        fencesim::process::Process::new(|_h| async move {
            if misbehaves() {
                let mut kept: Vec<Vec<u8>> = Vec::new();
                loop {
                    kept.push(vec![1u8; 16 << 20]);
                    std::hint::black_box(&kept);
                }
            }
        })
    });
    registry.add_process("spin", "never returns", |_, _| {
        fencesim::process::Process::new(|_h| async move {
            if misbehaves() {
                let mut n = 0u64;
                loop {
                    n = std::hint::black_box(n.wrapping_add(1));
                }
            }
        })
    });
    registry.add_process(
        "spin_later",
        "works for a while, then never returns",
        |_, _| {
            fencesim::process::Process::new(|h| async move {
                for step in 0..3u64 {
                    fencesim::sim::emit!("working", step = step);
                    h.sleep(std::time::Duration::from_secs(1)).await;
                }
                if std::env::var_os(PANIC_LATER).is_some() {
                    panic!("stops where spin_later spins");
                }
                let mut n = 0u64;
                loop {
                    n = std::hint::black_box(n.wrapping_add(1));
                }
            })
        },
    );
    registry
}

/// Set: `spin_later` panics where it would spin, so that its run crashes
/// with the journal of the hang's prefix.
const PANIC_LATER: &str = "FENCESIM_WORKERS_TEST_PANIC_LATER";

/// A third of the seeds, drawn from the run's deterministic randomness.
fn misbehaves() -> bool {
    madsim::rand::random::<u64>() % 3 == 0
}

fn main() -> ExitCode {
    if std::env::var_os(CLI).is_some() {
        return fencesim::cli::main_with(registry());
    }
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let tests: [(&str, fn()); 5] = [
        (
            "explore_ends_a_seed_past_its_memory_budget_as_an_error_and_goes_on",
            explore_ends_a_seed_past_its_memory_budget_as_an_error_and_goes_on,
        ),
        (
            "run_past_its_memory_budget_prints_an_error_verdict",
            run_past_its_memory_budget_prints_an_error_verdict,
        ),
        (
            "a_run_past_its_timeout_is_killed_with_its_worker",
            a_run_past_its_timeout_is_killed_with_its_worker,
        ),
        (
            "run_past_its_timeout_keeps_the_journal_up_to_the_hang",
            run_past_its_timeout_keeps_the_journal_up_to_the_hang,
        ),
        (
            "explore_past_its_timeout_keeps_the_journal_up_to_the_hang",
            explore_past_its_timeout_keeps_the_journal_up_to_the_hang,
        ),
    ];
    let mut failed = 0;
    for (name, test) in tests {
        if filter.as_ref().is_some_and(|f| !name.contains(f.as_str())) {
            continue;
        }
        match std::panic::catch_unwind(test) {
            Ok(()) => println!("test {name} ... ok"),
            Err(_) => {
                println!("test {name} ... FAILED");
                failed += 1;
            }
        }
    }
    if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// figure-9-6-async with client1 running `process`, in `tmp`.
fn scenario(tmp: &TempDir, process: &str) -> String {
    let text = std::fs::read_to_string(crate_root().join("scenarios/figure-9-6-async.toml"))
        .unwrap()
        .replace(
            "name = \"client1\"\nprocess = \"rounds\"",
            &format!("name = \"client1\"\nprocess = \"{process}\""),
        );
    assert!(text.contains(process), "client1 runs `rounds`");
    tmp.write(&format!("{process}.toml"), text)
        .display()
        .to_string()
}

/// Runs this binary as the command line with `args`, marked `mark`.
fn command_line(args: &[&str], mark: &str) -> (i32, String, String) {
    command_line_env(args, mark, &[])
}

/// [`command_line`] with the environment variables `env` set.
fn command_line_env(args: &[&str], mark: &str, env: &[(&str, &str)]) -> (i32, String, String) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(args)
        .envs(env.iter().copied())
        .env(CLI, "1")
        .env(MARK, mark)
        .current_dir(crate_root())
        .output()
        .unwrap();
    let code = out
        .status
        .code()
        .unwrap_or_else(|| panic!("`{}` died by a signal: {:?}", args.join(" "), out.status));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    (code, stdout, stderr)
}

fn json_lines(out: &str) -> Vec<Value> {
    out.lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The processes still alive that carry `mark` in their environment.
fn marked(mark: &str) -> Vec<String> {
    let needle = format!("{MARK}={mark}");
    let mut alive = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let environ = entry.path().join("environ");
        if let Ok(bytes) = std::fs::read(&environ) {
            if bytes.split(|b| *b == 0).any(|var| var == needle.as_bytes()) {
                alive.push(entry.file_name().to_string_lossy().into_owned());
            }
        }
    }
    alive
}

fn explore_ends_a_seed_past_its_memory_budget_as_an_error_and_goes_on() {
    let tmp = TempDir::new("hog");
    let file = scenario(&tmp, "hog");
    let mark = format!("hog-{}", std::process::id());
    let (code, out, err) = command_line(
        &[
            "--run-memory",
            "256MiB",
            "explore",
            &file,
            "--seeds",
            "0..9",
            "--faults",
            "scenario",
            "--jobs",
            "2",
            "--json",
        ],
        &mark,
    );
    assert_eq!(code, 3, "{out}{err}");
    let lines = json_lines(&out);
    let summary = lines.last().unwrap();
    assert_eq!(summary["summary"], true, "{out}");
    assert_eq!(summary["seeds"], 9, "the sweep ran every seed: {summary}");
    assert_eq!(summary["complete"], true, "{summary}");
    let crashed = summary["crashed"].as_u64().unwrap();
    assert!((1..9).contains(&crashed), "some seeds, not all: {summary}");
    let failing: Vec<&Value> = lines.iter().filter(|l| l.get("seed").is_some()).collect();
    assert_eq!(failing.len() as u64, crashed, "{out}");
    for line in failing {
        let seed = line["seed"].as_u64().unwrap();
        assert_eq!(line["verdict"], "error", "{line}");
        let message = line["crash"]["message"].as_str().unwrap();
        assert!(message.contains("memory budget exceeded"), "{message}");
        assert!(message.contains("256MiB"), "{message}");
        let repro = line["repro"].as_str().unwrap();
        assert!(repro.contains(&format!("--seed {seed}")), "{repro}");
    }
    assert!(marked(&mark).is_empty(), "no worker outlives the sweep");
}

fn run_past_its_memory_budget_prints_an_error_verdict() {
    let tmp = TempDir::new("hog-run");
    let file = scenario(&tmp, "hog");
    let mark = format!("hog-run-{}", std::process::id());
    // A seed that hogs: the sweep's first failing one.
    let (_, out, _) = command_line(
        &[
            "--run-memory",
            "256MiB",
            "explore",
            &file,
            "--seeds",
            "0..30",
            "--faults",
            "scenario",
            "--until",
            "1",
            "--json",
        ],
        &mark,
    );
    let seed = json_lines(&out)
        .iter()
        .find_map(|l| l["seed"].as_u64())
        .expect("a seed hogs");
    let seed = seed.to_string();
    let (code, out, err) = command_line(
        &[
            "--run-memory",
            "256MiB",
            "run",
            &file,
            "--seed",
            &seed,
            "--json",
        ],
        &mark,
    );
    assert_eq!(code, 3, "{out}{err}");
    let line: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(line["verdict"], "error", "{line}");
    let text = line.to_string();
    assert!(text.contains("memory budget exceeded"), "{text}");
    assert!(
        text.contains(&format!("--seed {seed}")),
        "the repro: {text}"
    );
    // Without --json: a verdict, not an abort.
    let (code, out, err) = command_line(
        &["--run-memory", "256MiB", "run", &file, "--seed", &seed],
        &mark,
    );
    assert_eq!(code, 3, "{out}{err}");
    assert!(out.contains("memory budget exceeded"), "{out}");
}

fn a_run_past_its_timeout_is_killed_with_its_worker() {
    let tmp = TempDir::new("spin");
    let file = scenario(&tmp, "spin");
    let mark = format!("spin-{}", std::process::id());
    let started = std::time::Instant::now();
    let (code, out, err) = command_line(
        &[
            "--run-timeout",
            "1s",
            "explore",
            &file,
            "--seeds",
            "0..6",
            "--faults",
            "scenario",
            "--jobs",
            "2",
            "--json",
        ],
        &mark,
    );
    assert_eq!(code, 3, "{out}{err}");
    let lines = json_lines(&out);
    let summary = lines.last().unwrap();
    assert_eq!(summary["seeds"], 6, "{summary}");
    let timed_out = summary["timed_out"].as_u64().unwrap();
    assert!((1..6).contains(&timed_out), "{summary}");
    // Each names its seed, its repro and the node whose handler spun.
    for line in lines.iter().filter(|l| l.get("seed").is_some()) {
        assert_eq!(line["outcome"], "timed_out", "{line}");
        assert_eq!(line["crash"]["node"], "client1", "{line}");
        let seed = line["seed"].as_u64().unwrap();
        let repro = line["repro"].as_str().unwrap();
        assert!(repro.contains(&format!("--seed {seed}")), "{repro}");
    }
    assert!(
        started.elapsed() < std::time::Duration::from_secs(60),
        "each spinning seed ends at its budget"
    );
    // The spinning runs' workers were killed, not abandoned.
    assert!(
        marked(&mark).is_empty(),
        "processes left: {:?}",
        marked(&mark)
    );
}

/// The trace hash of the seed's run where `spin_later` panics instead of
/// spinning: a crashed run keeps its journal up to the panic, which is
/// where the spinning run hangs. Its trace is checked to end there.
fn journal_up_to_the_hang(file: &str, seed: &str, mark: &str, tmp: &TempDir) -> (u64, String) {
    let trace = tmp.path().join(format!("panic-{seed}.jsonl"));
    let trace = trace.display().to_string();
    let (code, out, err) = command_line_env(
        &[
            "run", file, "--seed", seed, "--json", "--trace", &trace, "--force",
        ],
        mark,
        &[(PANIC_LATER, "1")],
    );
    assert_eq!(code, 3, "{out}{err}");
    let line: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(line["outcome"], "crashed", "{line}");
    let events: Vec<Value> = json_lines(&std::fs::read_to_string(&trace).unwrap());
    let last = events.last().expect("events before the panic");
    assert_eq!(last["node"], "client1", "{last}");
    assert_eq!(last["kind"], "working", "{last}");
    assert_eq!(last["fields"]["step"], 2, "{last}");
    (
        line["events"].as_u64().unwrap(),
        line["trace_hash"].as_str().unwrap().to_owned(),
    )
}

fn run_past_its_timeout_keeps_the_journal_up_to_the_hang() {
    let tmp = TempDir::new("spin-later-run");
    let file = scenario(&tmp, "spin_later");
    let mark = format!("spin-later-run-{}", std::process::id());
    let (events, hash) = journal_up_to_the_hang(&file, "5", &mark, &tmp);
    assert!(events > 0);
    let (code, out, err) = command_line(
        &["--run-timeout", "1s", "run", &file, "--seed", "5", "--json"],
        &mark,
    );
    assert_eq!(code, 3, "{out}{err}");
    let line: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(line["outcome"], "timed_out", "{line}");
    assert!(
        line.to_string().contains("client1"),
        "names its node: {line}"
    );
    assert_eq!(line["events"], events, "the journal up to the hang: {line}");
    assert_eq!(line["trace_hash"], hash.as_str(), "{line}");
    // The human report shows what happened before the hang.
    let (code, out, err) =
        command_line(&["--run-timeout", "1s", "run", &file, "--seed", "5"], &mark);
    assert_eq!(code, 3, "{out}{err}");
    assert!(out.contains("working"), "{out}");
    assert!(
        marked(&mark).is_empty(),
        "processes left: {:?}",
        marked(&mark)
    );
}

fn explore_past_its_timeout_keeps_the_journal_up_to_the_hang() {
    let tmp = TempDir::new("spin-later-explore");
    let file = scenario(&tmp, "spin_later");
    let mark = format!("spin-later-explore-{}", std::process::id());
    let (code, out, err) = command_line(
        &[
            "--run-timeout",
            "1s",
            "explore",
            &file,
            "--seeds",
            "5..7",
            "--faults",
            "scenario",
            "--jobs",
            "1",
            "--json",
        ],
        &mark,
    );
    assert_eq!(code, 3, "{out}{err}");
    let lines = json_lines(&out);
    let seeds: Vec<&Value> = lines.iter().filter(|l| l.get("seed").is_some()).collect();
    assert_eq!(seeds.len(), 2, "every seed hangs: {out}");
    for line in seeds {
        assert_eq!(line["outcome"], "timed_out", "{line}");
        assert_eq!(line["crash"]["node"], "client1", "{line}");
        let seed = line["seed"].as_u64().unwrap().to_string();
        let (events, hash) = journal_up_to_the_hang(&file, &seed, &mark, &tmp);
        assert_eq!(line["events"], events, "the journal up to the hang: {line}");
        assert_eq!(line["trace_hash"], hash.as_str(), "{line}");
    }
    assert!(
        marked(&mark).is_empty(),
        "processes left: {:?}",
        marked(&mark)
    );
}
