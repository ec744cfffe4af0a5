//! What fencesim promises about hosted code, held against processes that
//! each do one everyday thing (see `src/lib.rs`): a seed is the same run
//! wherever it runs, std's clocks and `thread_rng` are the node's and the
//! seed's, a wait nothing drives is named and never passes a sweep, calls a
//! simulation cannot host are named, and runaway code is stopped by its
//! budget without taking the sweep with it.

use std::path::{Path, PathBuf};

use fencesim::explore::sweep::{self, FaultMode, SweepEvent, SweepOptions};
use fencesim::oracle::Verdict;
use fencesim::runner::RunConfig;
use fencesim::scenario::{load_file, Scenario};
use fencesim::Status;

fn path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{name}.toml"))
}

fn scenario(name: &str) -> Scenario {
    load_file(&hosted::registry(), &path(name)).expect("the scenario loads")
}

/// `hosted ARGS…` run in this process (the command line's own code).
fn cli(args: &[&str]) -> Status {
    let mut all = vec!["hosted"];
    all.extend_from_slice(args);
    fencesim::run_args(&hosted::registry(), all)
}

/// Each seed's trace hash and verdict inside a sweep of `seeds` over `jobs`
/// threads.
fn swept(s: &Scenario, seeds: std::ops::Range<u64>, jobs: usize) -> Vec<(u64, String, Verdict)> {
    let options = SweepOptions {
        seeds,
        jobs,
        faults: FaultMode::Scenario,
        ..SweepOptions::default()
    };
    let runs = sweep::Runs {
        trace_hashes: true,
        ..sweep::Runs::default()
    };
    let mut out = Vec::new();
    sweep::sweep_streaming(s, &options, &runs, &[], &|| false, &mut |event| {
        if let SweepEvent::Seed(r) = event {
            out.push((r.seed, r.trace_hash.clone(), r.verdict));
        }
    });
    out
}

#[test]
fn a_hashmap_s_order_is_the_seed_s_alone_and_inside_any_sweep() {
    let s = scenario("map-order");
    let alone: Vec<(u64, String, Verdict)> = (0..24)
        .map(|seed| {
            let run = RunConfig::new(seed).run(&s);
            (seed, run.trace_hash(), run.report.verdict)
        })
        .collect();
    // The order decides the outcome: some seeds violate, some do not.
    assert!(alone.iter().any(|(_, _, v)| *v == Verdict::Violation));
    assert!(alone.iter().any(|(_, _, v)| *v == Verdict::Safe));
    for jobs in [1, 2] {
        assert_eq!(swept(&s, 0..24, jobs), alone, "--jobs {jobs}");
    }
}

#[test]
fn thread_rng_draws_from_the_seed() {
    let s = scenario("thread-rng");
    let hashes: Vec<String> = (0..6)
        .map(|seed| RunConfig::new(seed % 3).run(&s).trace_hash())
        .collect();
    assert_eq!(hashes[0..3], hashes[3..6], "the same seed, the same run");
    assert_ne!(hashes[0], hashes[1], "another seed, another draw");
    assert_eq!(
        swept(&s, 0..3, 2)
            .into_iter()
            .map(|(_, h, _)| h)
            .collect::<Vec<_>>(),
        hashes[0..3]
    );
}

/// The seeds of a random-fault sweep of `name` that violate.
fn failing(name: &str, seeds: std::ops::Range<u64>) -> Vec<u64> {
    let s = scenario(name);
    seeds
        .filter(|seed| {
            let (run, _) = sweep::run_seed(&s, *seed, FaultMode::Random);
            run.report.verdict == Verdict::Violation
        })
        .collect()
}

#[test]
fn std_s_clocks_are_the_node_s_clocks() {
    let wall = failing("lease-wall", 0..300);
    let mono = failing("lease-mono", 0..300);
    assert!(
        !wall.is_empty() && !mono.is_empty(),
        "the clock faults must break some checks"
    );
    assert_eq!(
        failing("lease-systemtime", 0..300),
        wall,
        "SystemTime::now() is the wall clock"
    );
    assert_eq!(
        failing("lease-instant", 0..300),
        mono,
        "Instant::now() is the monotonic clock"
    );
}

#[test]
fn a_wait_nothing_drives_is_named_and_no_sweep_passes_it() {
    for name in ["pending", "madsim-timer"] {
        let s = scenario(name);
        let run = RunConfig::new(1).run(&s);
        let why = run.inconclusive.join("\n");
        assert!(
            why.contains("client1: its main task awaits something the simulation does not drive"),
            "{name}: {why}"
        );
        let file = path(name);
        let status = cli(&[
            "explore",
            file.to_str().unwrap(),
            "--seeds",
            "0..20",
            "--json",
        ]);
        assert_eq!(status, Status::Inconclusive, "{name}");
    }
}

#[test]
fn a_process_that_never_takes_the_lock_is_inconclusive() {
    let s = scenario("returns");
    let run = RunConfig::new(1).run(&s);
    assert_eq!(run.report.verdict, Verdict::Safe, "client2 wrote alone");
    assert!(
        run.inconclusive
            .iter()
            .any(|w| w.contains("client1 (a process) never acquired the lock")),
        "{:?}",
        run.inconclusive
    );
    let file = path("returns");
    let status = cli(&["explore", file.to_str().unwrap(), "--seeds", "0..20"]);
    assert_eq!(status, Status::Inconclusive);
    // Saying so in [expect] makes it a pass.
    let text =
        std::fs::read_to_string(&file).unwrap() + "\n[expect]\nidle_clients = [\"client1\"]\n";
    let s = fencesim::scenario::load_str(&hosted::registry(), "returns.toml", &text).unwrap();
    assert!(RunConfig::new(1).run(&s).inconclusive.is_empty());
}

#[test]
fn calls_a_simulation_cannot_host_are_named() {
    for (name, words) in [
        ("tokio-time", "tokio's own runtime (tokio::time"),
        ("thread-spawn", "std::thread::spawn"),
    ] {
        let run = RunConfig::new(1).run(&scenario(name));
        let crash = run.result.outcome.to_string();
        assert!(
            crash.contains("panic in client1") && crash.contains(words),
            "{name}: {crash}"
        );
        assert_eq!(run.report.verdict, Verdict::Error);
    }
}

#[test]
fn a_panicking_process_ends_its_run_not_the_sweep() {
    let file = path("panics");
    assert_eq!(
        cli(&["explore", file.to_str().unwrap(), "--seeds", "0..10"]),
        Status::Internal
    );
    let run = RunConfig::new(3).run(&scenario("panics"));
    assert!(run
        .result
        .outcome
        .to_string()
        .contains("the client lost its mind"));
}

/// The hosted binary, run as a user runs it: `(status, stdout, stderr)`.
fn binary(args: &[&str]) -> (Option<i32>, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hosted"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the hosted binary runs");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

/// The hosted binary's processes still alive (worker processes included,
/// whoever their parent is now).
fn hosted_processes() -> Vec<String> {
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_hosted")).expect("the binary exists");
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        if std::fs::read_link(entry.path().join("exe")).is_ok_and(|p| p == exe) {
            out.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    out
}

/// The tests that start the binary run one at a time: each looks for
/// processes the other's left.
static BINARY: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn a_runaway_allocation_ends_its_run_as_an_error_and_the_sweep_goes_on() {
    let _one = BINARY.lock().unwrap_or_else(|e| e.into_inner());
    let (code, out, err) = binary(&[
        "explore",
        "scenarios/hungry.toml",
        "--seeds",
        "0..3",
        "--run-memory",
        "256MiB",
        "--json",
    ]);
    assert_eq!(code, Some(3), "{out}{err}");
    let lines: Vec<serde_json::Value> = out
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let summary = lines.last().expect("a summary line");
    assert_eq!(
        summary["seeds"], 3,
        "every seed is in the summary: {summary}"
    );
    let seeds: Vec<&serde_json::Value> = lines.iter().filter(|l| l.get("seed").is_some()).collect();
    assert_eq!(seeds.len(), 3, "each seed reported with its repro: {out}");
    for seed in seeds {
        assert_eq!(seed["verdict"], "error", "{seed}");
        assert!(seed["repro"].as_str().unwrap().contains("--seed"), "{seed}");
    }
    let (code, out, err) = binary(&["run", "scenarios/hungry.toml", "--run-memory", "256MiB"]);
    assert_eq!(
        code,
        Some(3),
        "run prints an error verdict, not an abort: {out}{err}"
    );
    assert!(out.contains("repro"), "{out}");
}

#[test]
fn a_busy_loop_is_killed_at_its_budget_and_leaves_nothing_running() {
    let _one = BINARY.lock().unwrap_or_else(|e| e.into_inner());
    let (code, out, err) = binary(&[
        "explore",
        "scenarios/busy.toml",
        "--seeds",
        "0..2",
        "--run-timeout",
        "1s",
        "--json",
    ]);
    assert_eq!(code, Some(3), "{out}{err}");
    let summary: serde_json::Value =
        serde_json::from_str(out.lines().last().unwrap_or("")).expect("a summary line");
    assert_eq!(summary["timed_out"], 2, "{summary}");
    assert!(
        hosted_processes().is_empty(),
        "left running: {:?}",
        hosted_processes()
    );
}
