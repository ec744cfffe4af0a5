//! Every command works on a scenario whose clients are async processes, as
//! it does on the bundled client: the exit code a user scripts against, and
//! the line that shows the command did its work on the process.

use crate::support::{fencesim, TempDir};

const BROKEN: &str = "scenarios/leader-elector-async.toml";
const FIXED: &str = "scenarios/leader-elector-async-fenced.toml";

#[test]
fn run_step_and_report_show_the_processes_run() {
    // The violation its [expect] table asks for: exit 0.
    let out = fencesim(&["run", BROKEN]);
    out.expect_code(0);
    assert!(
        out.stdout_str().contains("stale_write ("),
        "{}",
        out.stdout_str()
    );
    let out = fencesim(&["step", BROKEN, "--seed", "1"]);
    out.expect_code(0);
    assert!(out
        .stdout_str()
        .contains("client1 sends write client1/2 (token 1), believing it holds lease 1"));
    let dir = TempDir::new("processes-report");
    let out = fencesim(&["report", FIXED, "--out", &dir.arg("r")]);
    out.expect_code(0);
    let md = std::fs::read_to_string(dir.join("r/leader-elector-async-fenced.md")).unwrap();
    assert!(md.contains("rejected"), "{md}");
}

#[test]
fn shrink_keeps_the_process_and_its_keys() {
    let dir = TempDir::new("processes-shrink");
    let shrunk = dir.arg("shrunk.toml");
    let out = fencesim(&[
        "shrink",
        BROKEN,
        "--seed",
        "21",
        "--generic",
        "--out",
        &shrunk,
    ]);
    out.expect_code(0);
    let text = std::fs::read_to_string(&shrunk).unwrap();
    assert!(
        text.contains("process = \"leader-elector\"") && text.contains("renew_deadline = \"4s\"")
    );
    fencesim(&["run", &shrunk]).expect_code(1);
}

#[test]
fn margin_compare_and_the_searches_run_processes() {
    let out = fencesim(&["margin", FIXED]);
    out.expect_code(0);
    assert!(out.stdout_str().contains("no flip"), "{}", out.stdout_str());

    let out = fencesim(&[
        "compare",
        FIXED,
        "--designs",
        "lease,etcd,zookeeper",
        "--seeds",
        "0..50",
    ]);
    out.expect_code(0);
    let table = out.stdout_str();
    assert!(table.contains("lease      0 of 50"), "{table}");
    assert!(
        table.contains("cannot run: process `leader-elector` speaks to the lock designs"),
        "{table}"
    );

    // Exhaustive: every single injection of its menu, none breaks the fix.
    let out = fencesim(&["explore", FIXED, "--exhaustive", "1", "--max-runs", "1000"]);
    out.expect_code(0);
    let dir = TempDir::new("processes-guided");
    let corpus = dir.arg("corpus.jsonl");
    let out = fencesim(&[
        "explore", BROKEN, "--guided", "--corpus", &corpus, "--seeds", "0..100",
    ]);
    out.expect_code(1);
    assert!(std::fs::read_to_string(&corpus).unwrap().lines().count() > 0);
    let out = fencesim(&["explore", BROKEN, "--depth", "1", "--seeds", "0..100"]);
    out.expect_code(1);
    let out = fencesim(&["explore", FIXED, "--depth", "1", "--seeds", "0..100"]);
    out.expect_code(0);
}
