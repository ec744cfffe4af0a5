//! Bad input is the user's mistake: exit 2 and a message naming the file,
//! line and column, never a panic and never half a report on stdout.

use crate::{arg, fencesim, figure_9_6, TempDir};

/// Figure 9-6 with the one line `old` replaced by `new`; also returns the
/// 1-based number of that line.
fn figure_9_6_with(old: &str, new: &str) -> (String, usize) {
    let text = figure_9_6();
    let lines: Vec<&str> = text.lines().collect();
    let at: Vec<usize> = (0..lines.len()).filter(|&i| lines[i] == old).collect();
    assert_eq!(at.len(), 1, "`{old}` is one line of figure-9-6.toml");
    let edited: Vec<&str> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| if i == at[0] { new } else { l })
        .collect();
    (edited.join("\n") + "\n", at[0] + 1)
}

/// Runs `run FILE` and `run FILE --json` on `text` and checks that both
/// exit 2 with `message` at `FILE:line:col` on stderr and nothing on stdout.
#[track_caller]
fn assert_rejected(test: &str, text: &str, line: usize, col: usize, message: &str) {
    let dir = TempDir::new(test);
    let file = dir.write("bad.toml", text);
    for json in [false, true] {
        let mut args = vec!["run", arg(&file)];
        if json {
            args.push("--json");
        }
        let out = fencesim(&args);
        out.expect_code(2);
        let location = format!("{}:{line}:{col}", file.display());
        assert!(
            out.stderr.contains(&location),
            "stderr names {location}:\n{}",
            out.stderr
        );
        assert!(
            out.stderr.starts_with("error: ") && out.stderr.contains(message),
            "stderr says {message:?}:\n{}",
            out.stderr
        );
        assert_eq!(out.stdout, "", "nothing on stdout for a bad file");
    }
}

#[test]
fn unknown_key() {
    let (text, line) = figure_9_6_with("ttl = \"10s\"", "ttll = \"10s\"");
    assert_rejected("unknown-key", &text, line, 1, "unknown key `ttll`");
}

#[test]
fn unknown_key_suggests_the_right_one() {
    let (text, _) = figure_9_6_with("ttl = \"10s\"", "ttll = \"10s\"");
    let dir = TempDir::new("did-you-mean");
    let out = fencesim(&["run", arg(&dir.write("bad.toml", &text))]);
    out.expect_code(2);
    assert!(out.stderr.contains("did you mean `ttl`?"), "{}", out.stderr);
}

#[test]
fn bad_duration() {
    let (text, line) = figure_9_6_with("ttl = \"10s\"", "ttl = \"10 parsecs\"");
    assert_rejected(
        "bad-duration",
        &text,
        line,
        7,
        "invalid duration \"10 parsecs\"",
    );
}

#[test]
fn unknown_node_in_a_fault() {
    let (text, line) = figure_9_6_with("node = \"client1\"", "node = \"client9\"");
    assert_rejected("unknown-node", &text, line, 8, "unknown node `client9`");
}

#[test]
fn unknown_node_in_an_after_trigger() {
    let (text, line) = figure_9_6_with(
        "after = \"client1:acquired\"",
        "after = \"client3:acquired\"",
    );
    assert_rejected("unknown-after-node", &text, line, 9, "client3");
}

#[test]
fn unknown_design() {
    let (text, line) = figure_9_6_with("design = \"fenced\"", "design = \"fencd\"");
    assert_rejected(
        "unknown-design",
        &text,
        line,
        10,
        "unknown storage design `fencd`",
    );
}

#[test]
fn bad_expected_verdict() {
    let (text, line) = figure_9_6_with("verdict = \"safe\"", "verdict = \"fine\"");
    assert_rejected("bad-verdict", &text, line, 11, "fine");
}

#[test]
fn toml_syntax_error() {
    let (text, line) = figure_9_6_with("seed = 1", "seed = = 1");
    assert_rejected("toml-syntax", &text, line, 8, "invalid TOML");
}

#[test]
fn empty_file() {
    assert_rejected("empty", "", 1, 1, "missing required key `name`");
}

#[test]
fn missing_file_names_the_file() {
    let dir = TempDir::new("missing");
    let file = dir.path().join("no-such-scenario.toml");
    let out = fencesim(&["run", arg(&file)]);
    out.expect_code(2);
    // No line or column to give: the file itself is what is wrong.
    assert!(
        out.stderr.contains(&file.display().to_string()) && out.stderr.contains("cannot read"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stdout, "");
}

#[track_caller]
fn assert_usage_error(args: &[&str], message: &str) {
    let out = fencesim(args);
    out.expect_code(2);
    assert!(
        out.stderr.starts_with("error: ") && out.stderr.contains(message),
        "`fencesim {}` says {message:?} on stderr:\n{}",
        args.join(" "),
        out.stderr
    );
    assert_eq!(out.stdout, "", "usage errors go to stderr only");
}

#[test]
fn bad_flags_exit_2() {
    let fig = "scenarios/figure-9-6.toml";
    assert_usage_error(&["run", fig, "--seed", "abc"], "'abc'");
    assert_usage_error(&["run", fig, "--seed", "-1"], "'-1'");
    assert_usage_error(&["run", fig, "--bogus"], "--bogus");
    assert_usage_error(&["run", fig, "--width", "3"], "--width");
    assert_usage_error(&["frob"], "'frob'");
    assert_usage_error(&["run"], "<FILE>");

    // No subcommand at all: the help, on stderr, still exit 2.
    let out = fencesim(&[]);
    out.expect_code(2);
    assert!(
        out.stderr.contains("Usage: fencesim [OPTIONS] <COMMAND>"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stdout, "");
}

#[test]
fn help_and_version_exit_0() {
    let out = fencesim(&["--help"]);
    out.expect_code(0);
    for word in ["run", "check", "designs", "Exit codes"] {
        assert!(
            out.stdout.contains(word),
            "--help mentions {word}:\n{}",
            out.stdout
        );
    }
    let out = fencesim(&["run", "--help"]);
    out.expect_code(0);
    for flag in ["--seed", "--json"] {
        assert!(out.stdout.contains(flag), "run --help shows {flag}");
    }
    let out = fencesim(&["--version"]);
    out.expect_code(0);
    assert!(out.stdout.starts_with("fencesim "), "{}", out.stdout);
}

#[test]
fn crlf_line_endings_keep_the_position_right() {
    let (text, line) = figure_9_6_with("ttl = \"10s\"", "ttll = \"10s\"");
    let crlf = text.replace('\n', "\r\n");
    assert_rejected("crlf", &crlf, line, 1, "unknown key `ttll`");
}

#[test]
fn values_out_of_range_are_input_errors_not_crashes() {
    let cases = [
        (
            "duration = \"15s\"",
            "duration = \"1000000years\"",
            12,
            "too long",
        ),
        (
            "latency = [\"1ms\", \"5ms\"]",
            "latency = [\"5ms\", \"1ms\"]",
            11,
            "greater than max",
        ),
        ("first_token = 33", "first_token = -33", 15, "-33"),
        ("seed = 1", "seed = 18446744073709551616", 8, "too large"),
    ];
    for (i, (old, new, col, message)) in cases.into_iter().enumerate() {
        let (text, line) = figure_9_6_with(old, new);
        assert_rejected(&format!("range-{i}"), &text, line, col, message);
    }
}

#[test]
fn a_directory_or_a_binary_file_is_not_a_scenario() {
    let dir = TempDir::new("not-a-scenario");
    let out = fencesim(&["run", arg(dir.path())]);
    out.expect_code(2);
    assert!(
        out.stderr.contains("is a directory") && out.stderr.contains(arg(dir.path())),
        "{}",
        out.stderr
    );
    // Not UTF-8: the first bad byte's line and column, and no line shown.
    let binary = dir.path().join("binary.toml");
    std::fs::write(&binary, b"seed = 1\nname = \"\xff\"\n").unwrap();
    let out = fencesim(&["run", arg(&binary)]);
    out.expect_code(2);
    let location = format!("{}:2:9", binary.display());
    assert!(
        out.stderr.contains("not UTF-8") && out.stderr.contains(&location),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("name = "), "{}", out.stderr);
}
