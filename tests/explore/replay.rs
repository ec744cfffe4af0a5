//! A seed a sweep prints replays exactly as it ran in the sweep, through
//! `run`, `step` and `report` with `--faults random --seed N`.

use serde_json::Value;

use crate::cli::UNFENCED;
use crate::{fencesim, TempDir};

/// The failing seeds' lines of `explore --json` over `seeds`.
fn failing_lines(seeds: &str, jobs: &str) -> Vec<Value> {
    let (code, out, err) = fencesim(&[
        "explore", UNFENCED, "--seeds", seeds, "--json", "--jobs", jobs,
    ])
    .into_parts();
    assert_eq!(code, 1, "{out}{err}");
    out.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l.get("seed").is_some())
        .collect()
}

fn run_json(args: &[&str]) -> Value {
    let (_, out, err) = fencesim(args).into_parts();
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"))
}

#[test]
fn run_with_random_faults_gives_the_sweeps_trace_hash_for_every_failing_seed() {
    let lines = failing_lines("0..40", "2");
    assert!(lines.len() >= 3, "{lines:?}");
    for line in &lines {
        let seed = line["seed"].as_u64().unwrap().to_string();
        let replay = run_json(&[
            "run", UNFENCED, "--seed", &seed, "--faults", "random", "--json",
        ]);
        assert_eq!(replay["trace_hash"], line["trace_hash"], "seed {seed}");
        assert_eq!(replay["verdict"], line["verdict"], "seed {seed}");
        assert_eq!(replay["events"], line["events"], "seed {seed}");
        assert_eq!(replay["stale_writes"], line["stale_writes"], "seed {seed}");
        // The sweep's repro line is that very command.
        assert_eq!(
            line["repro"],
            format!("fencesim run {UNFENCED} --seed {seed} --faults random"),
        );
        // Without the seed's random faults it is another run.
        let alone = run_json(&["run", UNFENCED, "--seed", &seed, "--json"]);
        assert_ne!(alone["trace_hash"], line["trace_hash"], "seed {seed}");
    }
}

#[test]
fn step_with_random_faults_walks_the_swept_run() {
    let line = &failing_lines("0..12", "1")[0];
    let seed = line["seed"].as_u64().unwrap().to_string();
    let (code, out, err) =
        fencesim(&["step", UNFENCED, "--seed", &seed, "--faults", "random"]).into_parts();
    assert_eq!(code, 1, "{out}{err}");
    // Piped, one numbered line per event of the journal: the sweep's count.
    let steps = out
        .lines()
        .filter(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|w| w.parse::<u64>().is_ok())
        })
        .count();
    assert_eq!(steps as u64, line["events"].as_u64().unwrap(), "{out}");
    assert!(out.contains("VIOLATION"), "{out}");
    assert!(
        out.contains(&format!(
            "fencesim run {UNFENCED} --seed {seed} --faults random"
        )),
        "{out}"
    );
    // The default is the scenario's own faults: a different, safe run.
    let (code, out, _) = fencesim(&["step", UNFENCED, "--seed", &seed]).into_parts();
    assert_eq!(code, 0, "{out}");
}

#[test]
fn report_with_random_faults_writes_the_swept_journal() {
    let line = &failing_lines("0..12", "1")[0];
    let seed = line["seed"].as_u64().unwrap().to_string();
    let tmp = TempDir::new("replay");
    let dir = tmp.path();
    let trace = dir.join("run.jsonl");
    let (code, out, err) = fencesim(&[
        "report",
        UNFENCED,
        "--seed",
        &seed,
        "--faults",
        "random",
        "--out",
        dir.to_str().unwrap(),
    ])
    .into_parts();
    assert_eq!(code, 1, "{out}{err}");
    let (code, _, _) = fencesim(&[
        "run",
        UNFENCED,
        "--seed",
        &seed,
        "--faults",
        "random",
        "--trace",
        trace.to_str().unwrap(),
    ])
    .into_parts();
    assert_eq!(code, 1);
    let reported = std::fs::read_to_string(dir.join("explore-lease-unfenced.jsonl")).unwrap();
    let ran = std::fs::read_to_string(&trace).unwrap();
    let page = std::fs::read_to_string(dir.join("explore-lease-unfenced.md")).unwrap();
    let index = std::fs::read_to_string(dir.join("index.md")).unwrap();
    assert_eq!(reported, ran);
    assert_eq!(
        reported.lines().count() as u64,
        line["events"].as_u64().unwrap()
    );
    let repro = format!("fencesim run {UNFENCED} --seed {seed} --faults random");
    assert!(page.contains(&repro), "{page}");
    assert!(index.contains(&repro), "{index}");
    // The page tells its reader which faults the seed added to the story.
    let scenario = crate::bundled("explore-lease-unfenced");
    let random = fencesim::explore::random::schedule(&scenario, seed.parse().unwrap());
    assert!(!random.is_empty());
    for f in &random {
        let words = fencesim::explore::shrink::words(f);
        assert!(page.contains(&words), "{words} not in {page}");
    }
}
