//! The transcripts of the README and of the docs pages, run: a command
//! block that shows output and no longer matches what the binary prints
//! fails here. The syntax of a transcript is in `main.rs`.

use std::path::Path;

use crate::{blocks, checkout, fencesim_in, page, Block};

/// The line standing for any number of lines of output.
const ELLIPSIS: &str = "…";

/// One step of a transcript.
#[derive(Debug)]
enum Step {
    /// `$ fencesim ARGS [2>&1]` and its output.
    Fencesim {
        line: usize,
        args: Vec<String>,
        with_stderr: bool,
        expected: Vec<String>,
    },
    /// `$ echo $?` and the code it shows.
    Exit { line: usize, code: String },
    /// `$ cat FILE` and the file's lines.
    Cat {
        line: usize,
        file: String,
        expected: Vec<String>,
    },
}

/// The steps of a ```text block, or an error naming the page's line.
fn steps(file: &str, block: &Block) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    let mut lines = block.lines.iter().enumerate().peekable();
    while let Some((i, line)) = lines.next() {
        let at = block.line + 1 + i;
        let Some(command) = line.strip_prefix("$ ") else {
            return Err(format!(
                "{file}:{at}: a ```text block shows a transcript and starts with `$ `; got {line:?}"
            ));
        };
        let mut expected = Vec::new();
        while let Some((_, next)) = lines.peek() {
            if next.starts_with("$ ") {
                break;
            }
            expected.push(lines.next().expect("peeked").1.clone());
        }
        while expected.last().is_some_and(|l| l.trim().is_empty()) {
            expected.pop();
        }
        let words: Vec<&str> = command.split_whitespace().collect();
        let step = match words.as_slice() {
            ["echo", "$?"] => Step::Exit {
                line: at,
                code: expected.join("\n").trim().to_owned(),
            },
            ["cat", name] => Step::Cat {
                line: at,
                file: (*name).to_owned(),
                expected,
            },
            ["fencesim", rest @ ..] => {
                let (rest, with_stderr) = match rest {
                    [args @ .., "2>&1"] => (args, true),
                    args => (args, false),
                };
                if let Some(bad) = rest
                    .iter()
                    .find(|w| w.contains(['|', '<', '>', '\'', '"', '*', '$', ';', '&']))
                {
                    return Err(format!(
                        "{file}:{at}: `{bad}`: a transcript runs plain arguments, no shell syntax"
                    ));
                }
                Step::Fencesim {
                    line: at,
                    args: rest.iter().map(|w| (*w).to_owned()).collect(),
                    with_stderr,
                    expected,
                }
            }
            _ => {
                return Err(format!(
                    "{file}:{at}: a transcript runs `fencesim …`, `echo $?` or `cat FILE`; got `{command}`"
                ))
            }
        };
        steps.push(step);
    }
    Ok(steps)
}

/// Whether `actual` is `pattern`, where a pattern line `…` stands for any
/// number of lines (zero included).
fn matches(pattern: &[String], actual: &[String]) -> bool {
    // fit[i][j]: pattern[i..] matches actual[j..].
    let (m, n) = (pattern.len(), actual.len());
    let mut fit = vec![vec![false; n + 1]; m + 1];
    fit[m][n] = true;
    for i in (0..m).rev() {
        for j in (0..=n).rev() {
            fit[i][j] = if pattern[i] == ELLIPSIS {
                fit[i + 1][j] || (j < n && fit[i][j + 1])
            } else {
                j < n && pattern[i] == actual[j] && fit[i + 1][j + 1]
            };
        }
    }
    fit[0][0]
}

/// The wall-clock figures of explore's `speed` line (seeds per second, wall
/// seconds, simulated/wall ratio) made placeholders; simulated time stays.
fn normalize_speed(line: &str) -> String {
    if !line.starts_with("speed ") {
        return line.to_owned();
    }
    let words: Vec<&str> = line.split(' ').collect();
    let mut out = Vec::with_capacity(words.len());
    for (i, word) in words.iter().enumerate() {
        let next = words.get(i + 1).copied().unwrap_or("");
        let ratio = word.starts_with('(') && word.ends_with("x)");
        if next.starts_with("seeds/s") || next == "wall" {
            out.push("‹wall-clock›");
        } else if ratio {
            out.push("(‹wall-clock›)");
        } else {
            out.push(word);
        }
    }
    out.join(" ")
}

/// Lines as compared: trailing spaces dropped, trailing empty lines
/// dropped, and what the block declares varying normalized.
fn comparable(text: &str, varies_speed: bool) -> Vec<String> {
    let mut lines: Vec<String> = text
        .lines()
        .map(|l| {
            let l = l.trim_end();
            if varies_speed {
                normalize_speed(l)
            } else {
                l.to_owned()
            }
        })
        .collect();
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines
}

fn numbered(lines: &[String]) -> String {
    lines
        .iter()
        .enumerate()
        .map(|(i, l)| format!("{:>4} | {l}\n", i + 1))
        .collect()
}

/// The command of a page that still has to show its exit code.
struct Pending {
    line: usize,
    command: String,
    code: i32,
}

impl Pending {
    /// Nobody showed the exit code: it must be 0.
    fn settle(self, file: &str) -> Result<(), String> {
        if self.code == 0 {
            return Ok(());
        }
        Err(format!(
            "{file}:{}: `{}` exited with {}; a transcript shows a non-zero exit code with \
             `$ echo $?` after the command",
            self.line, self.command, self.code
        ))
    }
}

/// Runs every transcript of `text` (the page `file`) in order in `dir`,
/// writing its `file=NAME` blocks first; the first difference is an error
/// naming the page's line. Returns how many commands ran.
pub fn check_page(file: &str, text: &str, dir: &Path) -> Result<usize, String> {
    let mut commands = 0;
    for block in blocks(file, text) {
        if let Some(name) = block.attr("file") {
            let mut body = block.lines.join("\n");
            body.push('\n');
            std::fs::write(dir.join(name), body).map_err(|e| format!("{name}: {e}"))?;
            continue;
        }
        if block.lang() != "text" {
            continue;
        }
        let varies_speed = block.attr("varies") == Some("speed");
        let mut pending: Option<Pending> = None;
        for step in steps(file, &block)? {
            match step {
                Step::Exit { line, code } => {
                    let Some(p) = pending.take() else {
                        return Err(format!("{file}:{line}: `echo $?` follows no command"));
                    };
                    if code != p.code.to_string() {
                        return Err(format!(
                            "{file}:{line}: `{}` (line {}) exits with {}, not {code:?}",
                            p.command, p.line, p.code
                        ));
                    }
                }
                Step::Cat {
                    line,
                    file: name,
                    expected,
                } => {
                    if let Some(p) = pending.take() {
                        p.settle(file)?;
                    }
                    let actual = std::fs::read_to_string(dir.join(&name))
                        .map_err(|e| format!("{file}:{line}: cat {name}: {e}"))?;
                    compare(
                        file,
                        line,
                        &format!("cat {name}"),
                        &expected,
                        &actual,
                        false,
                    )?;
                }
                Step::Fencesim {
                    line,
                    args,
                    with_stderr,
                    expected,
                } => {
                    if let Some(p) = pending.take() {
                        p.settle(file)?;
                    }
                    let command = format!("fencesim {}", args.join(" "));
                    let args: Vec<&str> = args.iter().map(String::as_str).collect();
                    let out = fencesim_in(dir, &args);
                    commands += 1;
                    for stream in [&out.stdout, &out.stderr] {
                        if stream.contains("panicked") {
                            return Err(format!("{file}:{line}: `{command}` panicked:\n{stream}"));
                        }
                    }
                    let mut shown = out.stdout.clone();
                    if with_stderr {
                        shown.push_str(&out.stderr);
                    }
                    compare(file, line, &command, &expected, &shown, varies_speed)
                        .map_err(|e| format!("{e}\n--- stderr\n{}", out.stderr))?;
                    pending = Some(Pending {
                        line,
                        command,
                        code: out.code,
                    });
                }
            }
        }
        if let Some(p) = pending.take() {
            p.settle(file)?;
        }
    }
    Ok(commands)
}

fn compare(
    file: &str,
    line: usize,
    command: &str,
    expected: &[String],
    actual: &str,
    varies_speed: bool,
) -> Result<(), String> {
    let pattern: Vec<String> = expected
        .iter()
        .map(|l| {
            let l = l.trim_end();
            if varies_speed {
                normalize_speed(l)
            } else {
                l.to_owned()
            }
        })
        .collect();
    let actual = comparable(actual, varies_speed);
    if matches(&pattern, &actual) {
        return Ok(());
    }
    Err(format!(
        "{file}:{line}: `{command}` no longer prints what the page shows \
         (a line `{ELLIPSIS}` stands for any lines)\n--- the page shows\n{}--- the binary prints\n{}",
        numbered(&pattern),
        numbered(&actual)
    ))
}

/// Runs a page's transcripts in a fresh checkout-like directory and fails
/// with the first drift; the page must show at least `at_least` commands.
fn check(file: &str, test: &str, at_least: usize) {
    let dir = checkout(test);
    match check_page(file, &page(file), dir.path()) {
        Ok(n) => assert!(
            n >= at_least,
            "{file} runs {n} commands in its transcripts, expected at least {at_least}"
        ),
        Err(e) => panic!("{e}"),
    }
}

/// The pages whose ```text blocks are transcripts, each with the fewest
/// commands it must run. No other page may show one (see
/// `no_other_page_shows_a_transcript`).
const TRANSCRIPT_PAGES: [(&str, &str, usize); 7] = [
    ("README.md", "readme", 4),
    ("docs/tutorial.md", "tutorial", 8),
    ("docs/cli.md", "cli", 2),
    ("docs/exploring.md", "exploring", 5),
    ("docs/catalogue.md", "catalogue", 1),
    ("docs/audit.md", "audit", 1),
    ("docs/teaching.md", "teaching", 1),
];

#[test]
fn the_readme_shows_what_the_binary_prints() {
    check("README.md", "readme", 4);
}

#[test]
fn the_tutorial_shows_what_the_binary_prints() {
    check("docs/tutorial.md", "tutorial", 8);
}

#[test]
fn the_cli_reference_shows_what_the_binary_prints() {
    check("docs/cli.md", "cli", 2);
}

#[test]
fn the_exploring_page_shows_what_the_binary_prints() {
    check("docs/exploring.md", "exploring", 5);
}

#[test]
fn the_catalogue_shows_what_the_binary_prints() {
    check("docs/catalogue.md", "catalogue", 1);
}

#[test]
fn the_audit_page_shows_what_the_binary_prints() {
    check("docs/audit.md", "audit", 1);
}

#[test]
fn the_teaching_page_shows_what_the_binary_prints() {
    check("docs/teaching.md", "teaching", 1);
}

/// Every page of the list above is run by a test of its own.
#[test]
fn every_transcript_page_is_run() {
    let source = include_str!("transcripts.rs");
    for (file, test, at_least) in TRANSCRIPT_PAGES {
        let call = format!("check(\"{file}\", \"{test}\", {at_least});");
        assert!(source.contains(&call), "no test runs `{call}`");
    }
}

/// The check above can fail: the README's first transcript with one output
/// line changed is reported at its line.
#[test]
fn a_drifted_transcript_fails() {
    let readme = page("README.md");
    let first = blocks("README.md", &readme)
        .into_iter()
        .find(|b| b.lang() == "text")
        .expect("the README has a transcript");
    let last = first
        .lines
        .iter()
        .rposition(|l| !l.starts_with("$ ") && l != ELLIPSIS && !l.trim().is_empty())
        .expect("the transcript shows output");
    let mut drifted = first.lines.clone();
    drifted[last].push_str(" (drifted)");
    let text = format!("```text\n{}\n```\n", drifted.join("\n"));
    let dir = checkout("drift");
    let error = check_page("drifted.md", &text, dir.path()).expect_err("a drift is an error");
    assert!(
        error.starts_with("drifted.md:2:") && error.contains("(drifted)"),
        "{error}"
    );
}

#[test]
fn a_wrong_exit_code_fails_and_an_unshown_failure_fails() {
    let dir = checkout("exit");
    let shown = "```text\n$ fencesim run nothing.toml 2>&1\n…\n$ echo $?\n0\n```\n";
    let error = check_page("p.md", shown, dir.path()).expect_err("exit 2 is not 0");
    assert!(error.contains("exits with 2"), "{error}");
    let unshown = "```text\n$ fencesim run nothing.toml\n```\n";
    let error = check_page("p.md", unshown, dir.path()).expect_err("exit 2 unshown");
    assert!(
        error.starts_with("p.md:2:") && error.contains("exited with 2"),
        "{error}"
    );
}

fn lines(text: &[&str]) -> Vec<String> {
    text.iter().map(|l| (*l).to_owned()).collect()
}

#[test]
fn an_ellipsis_stands_for_any_lines_and_nothing_else_varies() {
    let actual = lines(&["a", "b", "c", "d"]);
    assert!(matches(&lines(&["a", "b", "c", "d"]), &actual));
    assert!(matches(&lines(&["a", "…", "d"]), &actual));
    assert!(matches(&lines(&["…", "b", "c", "…"]), &actual));
    assert!(matches(&lines(&["a", "…", "b", "c", "d"]), &actual));
    assert!(!matches(&lines(&["a", "b", "c"]), &actual));
    assert!(!matches(&lines(&["a", "…", "c"]), &actual));
    assert!(!matches(&lines(&["a", "b", "x", "d"]), &actual));
    assert!(!matches(&lines(&["a", "c", "…"]), &actual));
}

#[test]
fn only_the_wall_clock_figures_of_speed_vary() {
    let a = "speed     160 seeds/s, 17290.330s simulated in 6.264s wall (2760x)";
    let b = "speed     4082 seeds/s, 17290.330s simulated in 0.245s wall (70823x)";
    let other_sim = "speed     4082 seeds/s, 17290.331s simulated in 0.245s wall (70823x)";
    assert_eq!(normalize_speed(a), normalize_speed(b));
    assert_ne!(normalize_speed(a), normalize_speed(other_sim));
    let seeds = "seeds     1000 run: 991 completed, 9 stalled";
    assert_eq!(normalize_speed(seeds), seeds);
}

/// Every ```text block of the transcript pages is a checked transcript (so
/// none shows output that is not checked), and each page shows some.
#[test]
fn every_text_block_is_a_checked_transcript() {
    for (file, _, _) in TRANSCRIPT_PAGES {
        let text = page(file);
        let transcripts = blocks(file, &text)
            .into_iter()
            .filter(|b| b.lang() == "text")
            .inspect(|b| {
                if let Err(e) = steps(file, b) {
                    panic!("{e}");
                }
            })
            .count();
        assert!(transcripts > 0, "{file} shows no transcript");
    }
}

/// A page that is not run shows no transcript: a block that starts with
/// `$ fencesim` belongs on a page of `TRANSCRIPT_PAGES`, where it is run.
#[test]
fn no_other_page_shows_a_transcript() {
    for file in crate::pages() {
        if TRANSCRIPT_PAGES.iter().any(|(f, _, _)| *f == file) {
            continue;
        }
        for block in blocks(&file, &page(&file)) {
            let first = block.lines.first().map_or("", String::as_str);
            assert!(
                !first.starts_with("$ fencesim"),
                "{file}:{}: a transcript on a page whose transcripts are not run; \
                 add the page to TRANSCRIPT_PAGES in tests/docs/transcripts.rs",
                block.line
            );
        }
    }
}
