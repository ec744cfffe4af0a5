//! `fencesim check [PATH…]`: a table of every scenario under the paths, and
//! one exit code for all of them.
//!
//! One invalid file (or path) makes `check` exit 2, whatever the others
//! did: fix the input first, then the findings. Otherwise the exit code is
//! the worst of the scenarios' codes, by this precedence: 3 (internal error,
//! crash, non-determinism) > 1 (an expectation failed, or a violation
//! without `[expect]`) > 4 (inconclusive: nothing judged, a scripted fault
//! that never fired, a run cut short) > 0 (all met). An invalid file counts
//! as a scenario that did not pass. (3 cannot be provoked from a scenario
//! file without a bug in fencesim.)

use crate::{arg, fencesim, figure_9_6, unfenced, Output, TempDir};

/// The table's data rows: from the header to the blank line before the
/// summary, header excluded.
fn rows(out: &Output) -> Vec<&str> {
    let mut lines = out.stdout.lines();
    let header = lines.next().unwrap_or("");
    assert!(
        header.starts_with("scenario") && header.contains("verdict"),
        "the table opens with its header:\n{}",
        out.stdout
    );
    lines.take_while(|l| !l.is_empty()).collect()
}

/// The row whose first column is `name`.
#[track_caller]
fn row<'a>(rows: &[&'a str], name: &str) -> &'a str {
    rows.iter()
        .copied()
        .find(|r| r.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("no row for {name} in {rows:#?}"))
}

/// Figure 9-6 renamed, so rows tell the files apart.
fn passing(name: &str) -> String {
    figure_9_6().replace("name = \"figure-9-6\"", &format!("name = \"{name}\""))
}

fn failing(name: &str) -> String {
    // One stale write happens; the file claims none.
    unfenced(name, "\n[expect]\nstale_writes = 0\n")
}

#[test]
fn invalid_wins_over_failed_and_every_scenario_gets_a_row() {
    let dir = TempDir::new("check-mixed");
    dir.write("a-passes.toml", passing("passes"));
    let fail = dir.write("b-fails.toml", failing("fails-expectation"));
    let bad = dir.write(
        "c-invalid.toml",
        passing("invalid").replace("ttl = \"10s\"", "ttl = \"ten seconds\""),
    );
    dir.write("notes.txt", "not a scenario: check skips it");

    let out = fencesim(&["check", arg(dir.path())]);
    out.expect_code(2);

    let rows = rows(&out);
    assert_eq!(rows.len(), 3, "one row per scenario file: {rows:#?}");
    assert!(row(&rows, "passes").ends_with(" ok"), "{rows:#?}");
    let failed = row(&rows, "fails-expectation");
    assert!(failed.ends_with(" FAIL"), "{failed}");
    assert!(failed.contains(" violation "), "{failed}");
    let invalid = row(&rows, &bad.display().to_string());
    assert!(invalid.ends_with(" INVALID"), "{invalid}");
    // The invalid file is counted: it did not pass.
    assert!(
        out.stdout.contains("1 of 3 scenarios passed (1 invalid)"),
        "{}",
        out.stdout
    );

    // The failing scenario says why and how to replay it.
    assert!(
        out.stdout.contains(&format!(
            "FAIL {}: expected stale_writes = 0, got 1",
            fail.display()
        )),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains(&format!("repro: fencesim run {} --seed 1", fail.display())),
        "{}",
        out.stdout
    );
    // The invalid one is on stderr, with its position.
    assert!(
        out.stderr.contains(&format!("{}:", bad.display())) && out.stderr.contains("ten seconds"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_failed_expectation_alone_exits_1() {
    let dir = TempDir::new("check-failed");
    dir.write("a-passes.toml", passing("passes"));
    dir.write("b-fails.toml", failing("fails-expectation"));
    let out = fencesim(&["check", arg(dir.path())]);
    out.expect_code(1);
    assert_eq!(rows(&out).len(), 2);
}

#[test]
fn a_violation_without_expect_fails_the_check() {
    let dir = TempDir::new("check-violation");
    let file = dir.write("unfenced.toml", unfenced("unfenced", ""));
    let out = fencesim(&["check", arg(&file)]);
    out.expect_code(1);
    assert!(
        out.stdout
            .contains(&format!("FAIL {}: violation found", file.display())),
        "{}",
        out.stdout
    );
}

#[test]
fn only_passing_scenarios_exit_0() {
    let dir = TempDir::new("check-passing");
    dir.write("one.toml", passing("one"));
    dir.write("nested/two.toml", passing("two"));
    dir.write(
        "three.toml",
        unfenced("three", "\n[expect]\nverdict = \"violation\"\n"),
    );
    let out = fencesim(&["check", arg(dir.path())]);
    out.expect_code(0);
    let rows = rows(&out);
    assert_eq!(rows.len(), 3, "subdirectories are searched too: {rows:#?}");
    for name in ["one", "two", "three"] {
        let r = row(&rows, name);
        assert!(r.ends_with(" ok") && r.contains(" yes "), "{r}");
    }
    assert!(out.stdout.contains("3 of 3 scenarios passed"));
    assert!(!rows.iter().any(|r| r.contains("FAIL")), "{}", out.stdout);
}

#[test]
fn files_and_directories_mix() {
    let dir = TempDir::new("check-files");
    let one = dir.write("one.toml", passing("one"));
    dir.write("more/two.toml", passing("two"));
    let out = fencesim(&["check", arg(&one), arg(&dir.path().join("more"))]);
    out.expect_code(0);
    assert_eq!(rows(&out).len(), 2);
}

#[test]
fn a_path_that_does_not_exist_exits_2() {
    let dir = TempDir::new("check-missing");
    let missing = dir.path().join("nowhere");
    let out = fencesim(&["check", arg(&missing)]);
    out.expect_code(2);
    assert!(
        out.stderr.contains(&missing.display().to_string()),
        "{}",
        out.stderr
    );
}

#[test]
fn a_directory_without_scenarios_exits_2() {
    let dir = TempDir::new("check-empty");
    let out = fencesim(&["check", arg(dir.path())]);
    out.expect_code(2);
    assert!(out.stderr.contains("no scenario files"), "{}", out.stderr);
}

#[test]
fn the_bundled_scenarios_all_pass() {
    // `check` without a path checks scenarios/ of the current directory.
    let out = fencesim(&["check"]);
    out.expect_code(0);
    assert!(row(&rows(&out), "figure-9-6").ends_with(" ok"));
}

#[test]
fn every_count_column_is_explained_under_the_table() {
    let dir = TempDir::new("check-legend");
    dir.write("one.toml", passing("one"));
    let out = fencesim(&["check", arg(dir.path())]);
    out.expect_code(0);
    let header = out.stdout.lines().next().unwrap_or("");
    let legend: Vec<&str> = out
        .stdout
        .lines()
        .skip(rows(&out).len() + 2)
        .take_while(|l| !l.is_empty())
        .collect();
    for column in header.split_whitespace().skip(2) {
        assert!(
            legend
                .iter()
                .any(|l| l.split_whitespace().next() == Some(column)),
            "`{column}` has no line of its own in the legend:\n{}",
            out.stdout
        );
    }
}

#[test]
fn a_directory_s_crate_files_build_output_and_hidden_entries_are_not_scenarios() {
    let dir = TempDir::new("check-crate");
    dir.write("Cargo.toml", "[package]\nname = \"my-lock\"\n");
    dir.write("Cargo.lock", "version = 3\n");
    dir.write("target/debug/x.toml", "not a scenario");
    dir.write(".hidden/y.toml", "not a scenario either");
    dir.write("scenarios/a-passes.toml", passing("passes"));
    let out = fencesim(&["check", arg(dir.path())]);
    out.expect_code(0);
    assert_eq!(rows(&out).len(), 1, "{}", out.stdout);
    // Any other file that does not load is still reported.
    dir.write("scenarios/b-broken.toml", "name = ");
    fencesim(&["check", arg(dir.path())]).expect_code(2);
    // A crate file named on its own is read, and refused.
    let cargo = dir.join("Cargo.toml");
    fencesim(&["check", arg(&cargo)]).expect_code(2);
}
