//! `[expect] always`: properties that must hold in every seed of a sweep,
//! beyond safety. A seed that breaks one fails the sweep with its repro,
//! and shrinks like any other failure.

use fencesim::design::catalog::Registry;
use fencesim::explore::shard::Shard;
use fencesim::explore::shrink::{shrink, Target};
use fencesim::explore::sweep::{run_seed, sweep, FaultMode, SweepOptions};
use fencesim::oracle::Verdict;
use fencesim::scenario::{self, Scenario};

fn bundled_with(stem: &str, edit: impl Fn(String) -> String) -> Scenario {
    let path = format!("{}/scenarios/{stem}.toml", env!("CARGO_MANIFEST_DIR"));
    let text = edit(std::fs::read_to_string(path).unwrap());
    scenario::load_str(&Registry::builtin(), &format!("{stem}-always.toml"), &text).unwrap()
}

/// `etcd-leader-sql-strict-less` (its `lock_token < :token` fence turns the
/// leader's own retried write away), declaring that it never should.
fn strict_less() -> Scenario {
    bundled_with("etcd-leader-sql-strict-less", |t| {
        t.replace(
            "false_rejections = 1",
            "false_rejections = 1\nalways = [\"no_false_rejections\"]",
        )
    })
}

/// `chubby-lock-delay` with a lock-delay longer than the run: once client1's
/// session is lost, nobody gets the lock again before the end.
fn stuck_lock_delay() -> Scenario {
    bundled_with("chubby-lock-delay", |t| {
        t.replace("lock_delay = \"20s\"", "lock_delay = \"1m\"")
            .replace("duration = \"2m\"", "duration = \"40s\"")
            .replace(
                "always = [\"no_false_rejections\"]",
                "always = [\"no_false_rejections\", \"completes\"]",
            )
    })
}

fn random_sweep(
    s: &Scenario,
    seeds: std::ops::Range<u64>,
) -> fencesim::explore::sweep::SweepSummary {
    let options = SweepOptions {
        seeds,
        jobs: 2,
        shard: Shard::WHOLE,
        faults: FaultMode::Random,
    };
    sweep(s, &options, &|_| {})
}

#[test]
fn a_seed_with_a_false_rejection_fails_a_sweep_that_declares_none() {
    let s = strict_less();
    let summary = random_sweep(&s, 0..40);
    assert!(summary.failing_seeds > 10, "{summary:?}");
    assert_eq!(
        summary.violations, 0,
        "safe all along: it is the property that fails"
    );
    assert_eq!(
        summary.by_property.get("no_false_rejections"),
        Some(&summary.failing_seeds)
    );
    let first = &summary.failures[0];
    assert_eq!(first.verdict, Verdict::Safe);
    assert_eq!(first.broken, ["no_false_rejections"]);
    // Its repro fails alone, the same way.
    let (run, alone) = run_seed(&s, first.seed, FaultMode::Random);
    assert_eq!(alone.broken, ["no_false_rejections"]);
    assert!(!run.expectations_met);
    // Without the declaration the same seeds pass.
    let mut quiet = s.clone();
    quiet.expect.always.clear();
    assert_eq!(random_sweep(&quiet, 0..40).failing_seeds, 0);
}

#[test]
fn shrink_keeps_the_false_rejection() {
    let s = strict_less();
    let seed = random_sweep(&s, 0..40).failures[0].seed;
    let shrunk = shrink(&s, seed, FaultMode::Random).expect("a failing seed shrinks");
    assert_eq!(shrunk.target, Target::Property("no_false_rejections"));
    assert!(shrunk.after.len() <= shrunk.before.len());
    assert_eq!(shrunk.run.report.verdict, Verdict::Safe);
    assert!(shrunk.run.report.false_rejections > 0);
    assert_eq!(shrunk.scenario.expect.always, ["no_false_rejections"]);
    assert!(!shrunk.run.expectations_met, "the shrunk file's run fails");
}

#[test]
fn a_run_that_stops_making_progress_fails_a_sweep_that_declares_completes() {
    let s = stuck_lock_delay();
    let summary = random_sweep(&s, 0..20);
    assert!(summary.failing_seeds > 10, "{summary:?}");
    assert_eq!(
        summary.by_property.get("completes"),
        Some(&summary.failing_seeds)
    );
    let seed = summary.failures[0].seed;
    let shrunk = shrink(&s, seed, FaultMode::Random).expect("a failing seed shrinks");
    assert_eq!(shrunk.target, Target::Property("completes"));
    assert!(fencesim::runner::is_cut_short(&shrunk.run.result.outcome));
    assert!(!shrunk.run.expectations_met);
}

#[test]
fn a_node_left_down_by_a_crash_excuses_an_unfinished_run() {
    // The bundled lease, two clients, `completes` declared: the runs cut
    // short in these seeds all have a node a crash left down for good.
    let s = scenario::load_str(
        &Registry::builtin(),
        "lease-completes.toml",
        r#"
name = "lease-completes"
duration = "1m"
[lock]
design = "lease"
ttl = "10s"
[storage]
design = "fenced"
[[clients]]
name = "client1"
[[clients]]
name = "client2"
start = "1s"
[expect]
verdict = "safe"
always = ["completes"]
"#,
    )
    .unwrap();
    let summary = random_sweep(&s, 0..200);
    assert!(summary.cut_short > 0, "the sweep has runs cut short");
    assert_eq!(summary.failing_seeds, 0, "{:?}", summary.failures);
}

#[test]
fn explore_exits_1_and_names_the_broken_property_with_a_repro_that_fails() {
    use crate::{arg, fencesim, TempDir};
    let path = format!(
        "{}/tests/explore/../../scenarios/etcd-leader-sql-strict-less.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(path).unwrap().replace(
        "false_rejections = 1",
        "false_rejections = 1\nalways = [\"no_false_rejections\"]",
    );
    let dir = TempDir::new("always");
    let file = dir.write("strict-less-always.toml", text);
    let file = arg(&file);
    let (code, out, err) = fencesim(&["explore", file, "--seeds", "0..20", "--json"]).into_parts();
    assert_eq!(code, 1, "{err}");
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let summary = lines.last().unwrap();
    assert_eq!(summary["violations"], 0);
    let failing = summary["failing_seeds"].as_u64().unwrap();
    assert!(failing > 0);
    assert_eq!(summary["by_property"]["no_false_rejections"], failing);
    let seed_line = lines.iter().find(|l| l.get("seed").is_some()).unwrap();
    assert_eq!(
        seed_line["broken"],
        serde_json::json!(["no_false_rejections"])
    );
    let repro = seed_line["repro"].as_str().unwrap();
    let args: Vec<&str> = repro.split(' ').skip(1).collect();
    let (code, out, _) = fencesim(&args).into_parts();
    assert_eq!(code, 1, "{repro}: {out}");
    assert!(
        out.contains("FAIL always = no_false_rejections (got not no_false_rejections)"),
        "{out}"
    );
}
