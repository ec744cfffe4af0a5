//! Every command of the command line, run with a registry holding a design
//! of the user's (`grace_lease`), judged by its exit status and the files it
//! writes.

use fencesim::cli::Status;
use fencesim::design::catalog::Registry;
use fencesim::oracle::Verdict;
use fencesim::scenario;

use crate::{example, fencesim, registry, TempDir};

fn arg(path: std::path::PathBuf) -> String {
    path.display().to_string()
}

#[test]
fn explore_sweeps_a_user_design_and_finds_its_stale_writes() {
    // The bundled registry's convenience runs panicked here ("no design
    // grace_lease"): explore loaded the file with the user's registry, then
    // built every world from the bundled one.
    let unfenced = arg(example(false));
    assert_eq!(
        fencesim(&["explore", &unfenced, "--seeds", "0..40", "--jobs", "2"]),
        Status::Failed,
        "random faults break the unfenced grace lease"
    );
    let fenced = arg(example(true));
    assert_eq!(
        fencesim(&["explore", &fenced, "--seeds", "0..40", "--jobs", "2"]),
        Status::Ok,
        "tokens and a fenced storage keep it safe"
    );
}

#[test]
fn explore_scenario_faults_and_exhaustive_run_with_the_user_design() {
    let unfenced = arg(example(false));
    // Its own (no) faults: every seed is safe.
    assert_eq!(
        fencesim(&["explore", &unfenced, "--seeds", "0..5", "--faults", "scenario"]),
        Status::Ok
    );
    // One fault at every event boundary: some pause breaks it.
    assert_eq!(
        fencesim(&["explore", &unfenced, "--exhaustive", "1", "--jobs", "2"]),
        Status::Failed
    );
}

#[test]
fn explore_resume_continues_a_stopped_sweep_of_a_user_design() {
    use fencesim::explore::shard::Shard;
    use fencesim::explore::sweep::{self, FaultMode, Runs, SweepEvent, SweepOptions};

    let dir = TempDir::new("resume");
    let scenario = crate::load(false);
    let options = SweepOptions {
        seeds: 0..60,
        jobs: 1,
        shard: Shard::WHOLE,
        faults: FaultMode::Random,
    };
    // A sweep stopped after its first seeds, as a killed `explore --json`
    // leaves it: its summary line names what it completed.
    let ran = std::sync::atomic::AtomicU64::new(0);
    let stop = || ran.load(std::sync::atomic::Ordering::Relaxed) >= 5;
    let summary = sweep::sweep_streaming(
        &scenario,
        &options,
        &Runs::default(),
        &[],
        &stop,
        &mut |event| {
            if let SweepEvent::Seed(_) = event {
                ran.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        },
    );
    assert!(summary.stopped, "the sweep stopped early");
    let mut line = summary.json(&options);
    line["scenario"] = scenario.name.clone().into();
    let file = dir.path().join("stopped.jsonl");
    std::fs::write(&file, format!("{line}\n")).unwrap();

    let unfenced = arg(example(false));
    assert_eq!(
        fencesim(&["explore", &unfenced, "--resume", &arg(file), "--jobs", "2"]),
        Status::Failed,
        "the rest of 0..60 holds failing seeds of the unfenced grace lease"
    );
}

#[test]
fn shrink_writes_a_user_design_scenario_that_still_fails() {
    let dir = TempDir::new("shrink");
    let out = dir.arg("shrunk.toml");
    let unfenced = arg(example(false));
    // Seed 9 of the unfenced grace lease stales a write under random faults.
    assert_eq!(
        fencesim(&["shrink", &unfenced, "--seed", "9", "--out", &out]),
        Status::Ok
    );
    let shrunk = scenario::load_file(&registry(), out.as_ref()).expect("the shrunk file loads");
    assert_eq!(shrunk.lock.design, "grace_lease");
    assert!(!shrunk.faults.is_empty() && shrunk.faults.len() <= 2);
    // The shrunk file replays the failure with the same binary.
    assert_eq!(fencesim(&["run", &out]), Status::Failed);
    let run = fencesim::runner::run(&shrunk, shrunk.seed);
    assert_eq!(run.report.verdict, Verdict::Violation);
    // …and the bundled designs alone cannot even load it.
    assert!(scenario::load_file(&Registry::builtin(), out.as_ref()).is_err());
}

#[test]
fn run_check_and_step_judge_a_user_design() {
    let (unfenced, fenced) = (arg(example(false)), arg(example(true)));
    assert_eq!(
        fencesim(&["run", &unfenced]),
        Status::Ok,
        "its [expect] holds"
    );
    assert_eq!(
        fencesim(&["run", &fenced, "--seed", "3", "--json"]),
        Status::Ok
    );
    assert_eq!(
        fencesim(&["run", &unfenced, "--seed", "9", "--faults", "random"]),
        Status::Failed,
        "seed 9's random faults stale a write"
    );
    // Its two scenarios: examples/ holds another example's too (k8s_lease/).
    assert_eq!(fencesim(&["check", &unfenced, &fenced]), Status::Ok);
    assert_eq!(fencesim(&["step", &fenced]), Status::Ok);
}

#[test]
fn report_renders_a_user_design() {
    let dir = TempDir::new("report");
    let out = dir.arg("out");
    assert_eq!(
        fencesim(&[
            "report",
            &arg(example(false)),
            &arg(example(true)),
            "--out",
            &out
        ]),
        Status::Ok
    );
    for name in ["grace-lease", "grace-lease-fenced"] {
        for ext in ["md", "html", "trace.json", "jsonl"] {
            let file = dir.path().join("out").join(format!("{name}.{ext}"));
            let text = std::fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            assert!(!text.is_empty(), "{} is empty", file.display());
        }
    }
    let md = std::fs::read_to_string(dir.path().join("out/grace-lease.md")).unwrap();
    // The grace lease's server granted, and the diagram shows it.
    assert!(md.contains("grant lease=1"), "{md}");
}

#[test]
fn designs_lists_the_user_design_and_a_builtin_only_cli_refuses_it() {
    assert_eq!(fencesim(&["designs"]), Status::Ok);
    let listing = fencesim::cli::designs_text(&registry());
    assert!(listing.contains("grace_lease"), "{listing}");
    assert!(listing.contains("grace "), "its keys are listed: {listing}");
    // Without the design registered, its file is invalid input, not a panic.
    let builtin = fencesim::cli::run_args(
        &Registry::builtin(),
        [
            "fencesim",
            "explore",
            &arg(example(false)),
            "--seeds",
            "0..2",
        ],
    );
    assert_eq!(builtin, Status::Invalid);
}
