//! Scenario inputs that are not plain scenario files: a symbolic link (Git
//! stores them, so a pull request can carry one), a device, a pipe, a file
//! too large to be a scenario, a file that is not UTF-8. Every command that
//! reads scenarios refuses them with exit 2, promptly, reading nothing
//! through a link and showing nothing of a file that is not a scenario.
//!
//! The links and pipes are made here, at run time, in a temp dir.

use std::os::unix::fs::symlink;
use std::path::Path;

use crate::{arg, fencesim, fencesim_in, figure_9_6, TempDir};

/// Every command that reads a scenario file, with the arguments it needs
/// besides the file (`report` writes into `out`).
fn commands<'a>(file: &'a str, out: &'a str) -> Vec<Vec<&'a str>> {
    vec![
        vec!["run", file],
        vec!["run", file, "--json"],
        vec!["check", file],
        vec!["report", file, "--out", out],
        vec!["step", file],
        vec!["explore", file, "--seeds", "0..2"],
        vec!["shrink", file, "--seed", "1"],
        vec!["compare", file],
        vec!["margin", file],
    ]
}

/// Runs every command on `file` and checks each exits 2 with `message` on
/// stderr, none of `secret`, and writes nothing into the report directory.
#[track_caller]
fn assert_refused_everywhere(dir: &TempDir, file: &Path, message: &str, secret: &str) {
    let out = dir.path().join("reports");
    for args in commands(arg(file), arg(&out)) {
        let run = fencesim(&args);
        run.expect_code(2);
        assert!(
            run.stderr.contains(message),
            "`fencesim {}` says {message:?}:\n{}",
            args.join(" "),
            run.stderr
        );
        for shown in [&run.stdout, &run.stderr] {
            assert!(!shown.contains(secret), "{}: {shown}", args.join(" "));
        }
        assert!(
            std::fs::read_dir(&out).map_or(true, |d| d.count() == 0),
            "{}: report wrote files",
            args.join(" ")
        );
    }
}

#[test]
fn a_link_to_a_device_is_refused_not_read() {
    let dir = TempDir::new("link-device");
    let file = dir.path().join("zero.toml");
    symlink("/dev/zero", &file).unwrap();
    assert_refused_everywhere(&dir, &file, "is a symbolic link", "\0");
}

#[test]
fn a_link_to_a_secret_is_refused_and_shows_none_of_it() {
    let dir = TempDir::new("link-secret");
    let secret = dir.write("credentials", "aws_secret_access_key = \"hunter2\"\n");
    let file = dir.path().join("scenario.toml");
    symlink(&secret, &file).unwrap();
    assert_refused_everywhere(&dir, &file, "is a symbolic link", "hunter2");
    // Even a link to a real scenario is refused: the file must be named.
    let real = dir.write("real.toml", figure_9_6());
    let link = dir.path().join("fig.toml");
    symlink(&real, &link).unwrap();
    fencesim(&["run", arg(&link)]).expect_code(2);
    fencesim(&["run", arg(&real)]).expect_code(0);
}

#[test]
fn a_file_not_named_toml_shows_no_line_in_its_errors() {
    let dir = TempDir::new("not-toml");
    let file = dir.write("credentials", "aws_secret_access_key = \"hunter2\"\n");
    let out = fencesim(&["run", arg(&file)]);
    out.expect_code(2);
    assert!(
        out.stderr.contains(&format!("{}:1:", file.display())),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("hunter2"), "{}", out.stderr);
    // The same text named *.toml is a scenario with a mistake: its line is
    // shown, to help fix it.
    let toml = dir.write("typo.toml", "aws_secret_access_key = \"hunter2\"\n");
    assert!(fencesim(&["run", arg(&toml)]).stderr.contains("hunter2"));
}

#[test]
fn a_pipe_named_like_a_scenario_is_refused_without_waiting_for_a_writer() {
    let dir = TempDir::new("fifo");
    let file = dir.path().join("pipe.toml");
    let path = std::ffi::CString::new(arg(&file)).unwrap();
    // SAFETY: a NUL-terminated path and a mode.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    assert_refused_everywhere(&dir, &file, "not a regular file", "\0");
}

#[test]
fn a_file_larger_than_a_scenario_is_refused() {
    let dir = TempDir::new("oversized");
    let max = fencesim::scenario::MAX_FILE_BYTES as usize;
    // A valid scenario, padded with comments past the limit.
    let text = figure_9_6() + &"# padding\n".repeat(max / 10 + 1);
    let file = dir.write("big.toml", &text);
    assert_refused_everywhere(
        &dir,
        &file,
        "more than a scenario may have (1048576 bytes)",
        "padding",
    );
    // The same scenario under the limit loads.
    let fits = dir.write("fits.toml", &text[..max]);
    fencesim(&["run", arg(&fits)]).expect_code(0);
}

#[test]
fn a_file_that_is_not_utf8_is_refused_at_its_line_and_column() {
    let dir = TempDir::new("latin1");
    let mut bytes = figure_9_6().into_bytes();
    let line = 2;
    let at = bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
    // `description = "…` on line 2: a Latin-1 é in column 4.
    bytes.splice(at + 3..at + 3, [0xe9]);
    let file = dir.path().join("latin1.toml");
    std::fs::write(&file, bytes).unwrap();
    let out = fencesim(&["run", arg(&file)]);
    out.expect_code(2);
    let location = format!("{}:{line}:4", file.display());
    assert!(out.stderr.contains(&location), "{}", out.stderr);
    assert!(out.stderr.contains("not UTF-8"), "{}", out.stderr);
}

#[test]
fn check_walks_past_links_to_directories_and_loops_without_following_them() {
    let dir = TempDir::new("walk-links");
    let tree = dir.path().join("tree");
    std::fs::create_dir(&tree).unwrap();
    std::fs::write(tree.join("figure.toml"), figure_9_6()).unwrap();
    symlink(&tree, tree.join("self")).unwrap();
    symlink("..", tree.join("up")).unwrap();
    symlink("a.toml", tree.join("b.toml")).unwrap();
    symlink("b.toml", tree.join("a.toml")).unwrap();
    symlink("/etc/hostname", tree.join("host.toml")).unwrap();
    // A link to a file not named *.toml is not a scenario: skipped.
    symlink("/etc/hostname", tree.join("notes")).unwrap();
    for args in [
        vec!["check", arg(&tree)],
        vec!["report", arg(&tree), "--out", arg(&dir.path().join("out"))],
    ] {
        let out = fencesim(&args);
        out.expect_code(2);
        for refused in ["a.toml", "b.toml", "host.toml", "self", "up"] {
            let shown = format!("--> {}\n", tree.join(refused).display());
            assert!(
                out.stderr.contains(&shown),
                "{}: {refused} refused:\n{}",
                args[0],
                out.stderr
            );
        }
        assert!(!out.stderr.contains("notes"), "{}", out.stderr);
        assert_eq!(
            out.stderr.matches("is a symbolic link").count(),
            5,
            "{}",
            out.stderr
        );
    }
    let report = dir.path().join("out");
    assert!(
        report.join("figure-9-6.md").exists(),
        "the real scenario is reported"
    );
}

#[test]
fn a_scenarios_directory_that_is_a_link_is_not_walked_however_spelled() {
    let dir = TempDir::new("linked-tree");
    let real = dir.path().join("real");
    std::fs::create_dir(&real).unwrap();
    std::fs::write(real.join("figure.toml"), figure_9_6()).unwrap();
    symlink(&real, dir.path().join("scenarios")).unwrap();
    for args in [
        vec!["check"],
        vec!["check", "scenarios/"],
        vec!["check", "scenarios/."],
        vec!["check", "./scenarios/figure.toml"],
        vec!["run", "scenarios/figure.toml"],
        vec!["report", "scenarios/", "--out", "out"],
    ] {
        let out = fencesim_in(dir.path(), &args);
        out.expect_code(2);
        assert!(
            out.stderr.contains("symbolic link"),
            "{args:?}: {}",
            out.stderr
        );
        assert!(
            !out.stdout.contains("figure-9-6"),
            "{args:?}: {}",
            out.stdout
        );
    }
    assert!(!dir.path().join("out").exists(), "report wrote nothing");
}
