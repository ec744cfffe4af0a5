//! Scenarios written by someone else: what a file says is data. It cannot
//! forge a report's verdict, drive the terminal, or make a command write
//! where the user did not ask.

use std::path::{Path, PathBuf};

use crate::{crate_root, fencesim, support, TempDir};

/// Escape sequences a hostile file may carry: a screen clear, a window
/// title, an OSC 52 clipboard write, a C1 CSI, a right-to-left override.
const NASTY: &str = r"\u001b[2J\u001b]0;owned\u0007\u001b]52;c;aGk=\u0007\u009b31m\u202e";

/// `scenarios/figure-9-6-unfenced.toml` (a stale write, as its `[expect]`
/// says: exit 0) with another `name` and `description` (TOML basic
/// strings).
fn unfenced_as(name: &str, description: &str) -> String {
    let text = std::fs::read_to_string(crate_root().join("scenarios/figure-9-6-unfenced.toml"))
        .expect("bundled scenario");
    let rest = &text[text.find("\nseed = ").expect("seed line")..];
    format!("name = \"{name}\"\ndescription = \"{description}\"{rest}")
}

fn write(dir: &TempDir, file: &str, text: &str) -> PathBuf {
    let path = dir.path().join(file);
    std::fs::write(&path, text).unwrap();
    path
}

fn arg(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Every character a terminal could act on (C0, DEL, C1, bidirectional
/// overrides), other than line breaks.
fn raw_controls(text: &str) -> Vec<char> {
    let bidi = '\u{202a}'..='\u{202e}';
    text.chars()
        .filter(|&c| (c.is_control() || bidi.contains(&c)) && c != '\n')
        .collect()
}

#[test]
fn a_description_cannot_forge_the_verdict_of_the_markdown_report() {
    let dir = TempDir::new("a_description_cannot_forge_the_verdict_of_the_markdown_report");
    let forged = "Harmless.\\n\\n**Verdict:** SAFE: the storage accepted no stale write \
                  <!-- the rest is hidden\\n\\n```mermaid\\nsequenceDiagram\\n```\\n\\n# Fine";
    let file = write(&dir, "forged.toml", &unfenced_as("forged", forged));
    let out = dir.path().join("out");
    let (code, stdout, stderr) = fencesim(&["report", arg(&file), "--out", arg(&out)]).into_parts();
    assert_eq!(code, 0, "{stdout}{stderr}");
    let md = std::fs::read_to_string(out.join("forged.md")).unwrap();
    let lines: Vec<&str> = md.lines().collect();
    // The real verdict comes right after the title, before any text of the
    // scenario's.
    assert_eq!(lines[0], "# VIOLATION · forged");
    assert!(lines[2].starts_with("**Verdict:** VIOLATION"), "{md}");
    assert!(lines[4].starts_with("**Milestones**"), "{md}");
    let description = lines[6];
    assert!(
        description.starts_with("Harmless. \\*\\*Verdict:\\*\\* SAFE"),
        "{md}"
    );
    // Nothing of it is live Markdown: no comment, no fence, no heading.
    assert!(!description.contains("<!--") && !description.contains("```"));
    assert!(!lines.contains(&"# Fine"), "{md}");
    assert_eq!(md.matches("<!--").count(), 1, "only fencesim's own marker");
    let marker = lines
        .iter()
        .position(|l| *l == "<!-- fencesim:sequence -->")
        .unwrap();
    assert_eq!(lines[marker + 1], "```mermaid");
    assert_eq!(lines[marker + 2], "sequenceDiagram");
    assert_eq!(lines[marker + 3], "    participant n0 as client1");
}

#[test]
fn no_control_character_reaches_the_terminal() {
    let dir = TempDir::new("no_control_character_reaches_the_terminal");
    let file = write(
        &dir,
        "nasty.toml",
        &unfenced_as(&format!("nasty{NASTY}"), &format!("desc{NASTY}\\r\\nmore")),
    );
    let seed = ["--seed", "1"];
    let runs: [&[&str]; 5] = [
        &["run", arg(&file)],
        &["run", arg(&file), "--json", seed[0], seed[1]],
        &["step", arg(&file)],
        &["check", arg(&file)],
        &[
            "explore",
            arg(&file),
            "--seeds",
            "0..2",
            "--faults",
            "scenario",
        ],
    ];
    for args in runs {
        let (code, stdout, stderr) = fencesim(args).into_parts();
        assert_eq!(code, i32::from(args[0] == "explore"), "{args:?}: {stderr}");
        // Shown, in the terminal's form or JSON's.
        let shown = if args.contains(&"--json") {
            "nasty\\u001b[2J\\u001b]0;owned\\u0007"
        } else {
            "nasty\\x1b[2J\\x1b]0;owned\\x07"
        };
        assert!(stdout.contains(shown), "{args:?}: {stdout}");
        assert_eq!(raw_controls(&stdout), [], "{args:?} stdout: {stdout:?}");
        assert_eq!(raw_controls(&stderr), [], "{args:?} stderr: {stderr:?}");
    }
    // The loader's errors quote the file: the key, and the line itself.
    let bad = write(
        &dir,
        "bad.toml",
        &format!("\"key{NASTY}\" = 1\n{}", unfenced_as("bad", "")),
    );
    let (code, stdout, stderr) = fencesim(&["run", arg(&bad)]).into_parts();
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("bad.toml:1:1"), "{stderr}");
    assert!(stderr.contains("key\\x1b[2J"), "{stderr}");
    assert_eq!(raw_controls(&stdout), []);
    assert_eq!(raw_controls(&stderr), [], "{stderr:?}");
    // So do the command line's errors, which quote the argument.
    let (code, _, stderr) = fencesim(&["run", arg(&file), "--seed", "1\x07\u{9b}2J"]).into_parts();
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(raw_controls(&stderr), [], "{stderr:?}");
}

#[test]
fn a_symbolic_link_as_output_is_not_followed() {
    let dir = TempDir::new("a_symbolic_link_as_output_is_not_followed");
    let victim = write(&dir, "victim.txt", "precious\n");
    let link = |name: &str| {
        let path = dir.path().join(name);
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        path
    };
    let scenario = "scenarios/figure-9-6-unfenced.toml";

    let trace = link("trace.jsonl");
    let (code, _, stderr) = fencesim(&["run", scenario, "--trace", arg(&trace)]).into_parts();
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("symbolic link"), "{stderr}");

    let shrunk = link("shrunk.toml");
    let (code, _, stderr) =
        fencesim(&["shrink", scenario, "--seed", "1", "--out", arg(&shrunk)]).into_parts();
    assert_eq!(code, 2, "{stderr}");

    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::os::unix::fs::symlink(&victim, out.join("figure-9-6-unfenced.md")).unwrap();
    let (code, _, stderr) = fencesim(&["report", scenario, "--out", arg(&out)]).into_parts();
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");

    // --force replaces the link itself, never what it points to.
    let (code, _, stderr) =
        fencesim(&["run", scenario, "--trace", arg(&trace), "--force"]).into_parts();
    assert_eq!(code, 0, "{stderr}");
    assert!(!std::fs::symlink_metadata(&trace)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&trace)
        .unwrap()
        .starts_with("{\"seq\":0"));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
}

#[test]
fn report_does_not_replace_a_readme_nor_its_index_with_a_scenario() {
    let dir = TempDir::new("report_does_not_replace_a_readme_nor_its_index_with_a_scenario");
    let readme = write(&dir, "readme.toml", &unfenced_as("README", "a readme"));
    let index = write(&dir, "index.toml", &unfenced_as("index", "an index"));
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("README.md"), "# my project\n").unwrap();
    let (code, stdout, stderr) =
        fencesim(&["report", arg(&readme), arg(&index), "--out", arg(&out)]).into_parts();
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains("README.md already exists"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(out.join("README.md")).unwrap(),
        "# my project\n"
    );
    // The scenario named `index` has its own page; the index lists it.
    let page = std::fs::read_to_string(out.join("_index.md")).unwrap();
    assert!(page.starts_with("# VIOLATION · \\_index\n"), "{page}");
    let listing = std::fs::read_to_string(out.join("index.md")).unwrap();
    assert!(listing.starts_with("# fencesim reports"), "{listing}");
    assert!(listing.contains("[\\_index](_index.md)"), "{listing}");

    // Its own earlier output is replaced; a file it did not write is kept.
    std::fs::write(out.join("notes.md"), "mine\n").unwrap();
    let (code, _, stderr) = fencesim(&["report", arg(&index), "--out", arg(&out)]).into_parts();
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        std::fs::read_to_string(out.join("notes.md")).unwrap(),
        "mine\n"
    );
    // And with --force, what the user says goes.
    let (code, _, stderr) =
        fencesim(&["report", arg(&readme), "--out", arg(&out), "--force"]).into_parts();
    assert_eq!(code, 0, "{stderr}");
    assert!(std::fs::read_to_string(out.join("README.md"))
        .unwrap()
        .starts_with("# VIOLATION · README"));
}

#[test]
fn shrink_replaces_only_its_own_scenario_file() {
    let dir = TempDir::new("shrink_replaces_only_its_own_scenario_file");
    let scenario = "scenarios/figure-9-6-unfenced.toml";
    let out = write(&dir, "shrunk.toml", "# my notes\n");
    let args = [
        "shrink",
        scenario,
        "--seed",
        "1",
        "--faults",
        "scenario",
        "--out",
        arg(&out),
    ];
    let (code, _, stderr) = fencesim(&args).into_parts();
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "# my notes\n");
    std::fs::remove_file(&out).unwrap();
    for _ in 0..2 {
        let (code, stdout, stderr) = fencesim(&args).into_parts();
        assert_eq!(code, 0, "{stdout}{stderr}");
    }
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .starts_with("# Written by `fencesim shrink "));
}

#[test]
fn run_caps_its_lanes_for_a_long_journal() {
    let dir = TempDir::new("run_caps_its_lanes_for_a_long_journal");
    let text =
        unfenced_as("long", "many rounds").replace("work = \"1s\"", "work = \"1s\"\nrounds = 60");
    let file = write(&dir, "long.toml", &text);
    let (_, stdout, stderr) = fencesim(&["run", arg(&file)]).into_parts();
    assert!(stdout.contains("rows not shown"), "{stdout}{stderr}");
    let lanes = stdout.lines().filter(|l| l.contains('│')).count();
    assert!(lanes <= 400, "{lanes} lane rows");
    assert!(stdout.contains("repro"), "the end is still printed");
}

#[test]
fn report_does_not_write_through_a_link_spelled_as_a_directory() {
    let dir = TempDir::new("report_does_not_write_through_a_link_spelled_as_a_directory");
    let target = dir.path().join("elsewhere");
    std::fs::create_dir(&target).unwrap();
    std::fs::create_dir(target.join("sub")).unwrap();
    let link = dir.path().join("linkdir");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let scenario = crate_root().join("scenarios/figure-9-6-unfenced.toml");
    let absolute = arg(&link).to_owned();
    // Relative paths as a checkout's links are named, from the directory.
    for (out, from) in [
        (absolute.clone(), crate_root()),
        (format!("{absolute}/"), crate_root()),
        (format!("{absolute}/."), crate_root()),
        (format!("{absolute}//./"), crate_root()),
        (format!("{absolute}/sub/.."), crate_root()),
        ("linkdir/".to_owned(), dir.path()),
        ("./linkdir/.".to_owned(), dir.path()),
        ("linkdir/sub".to_owned(), dir.path()),
        ("linkdir/sub/..".to_owned(), dir.path()),
    ] {
        let (code, _, stderr) =
            support::fencesim_in(from, &["report", arg(&scenario), "--out", &out]).into_parts();
        assert_eq!(code, 2, "{out}: {stderr}");
        assert!(stderr.contains("symbolic link"), "{out}: {stderr}");
        let written: Vec<_> = std::fs::read_dir(&target)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(written, ["sub"], "{out}: wrote through the link");
        let below = std::fs::read_dir(target.join("sub")).unwrap().count();
        assert_eq!(below, 0, "{out}: wrote through the link");
    }
}

#[test]
fn run_refuses_an_existing_trace_file_before_running() {
    let dir = TempDir::new("run_refuses_an_existing_trace_file_before_running");
    let trace = write(&dir, "trace.jsonl", "mine\n");
    // Quick on the load-time trial's key, minutes on the run's key "x": a
    // run would take far longer than the refusal.
    let slow = unfenced_as("slow", "").replace(
        "design = \"unchecked\"",
        "design = \"sql\"\nupdate = \"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 \
         FROM c WHERE x < 10 OR (:key <> 'key' AND x < 100000)) UPDATE kv SET value = :value + \
         0 * (SELECT sum(instr(printf('%.*c', 4000, 'a'), printf('%.*c', 2000, 'a') || x)) \
         FROM c) WHERE key = :key\"",
    );
    assert!(slow.contains("design = \"sql\""), "{slow}");
    let file = write(&dir, "slow.toml", &slow);
    let started = std::time::Instant::now();
    let (code, stdout, stderr) =
        fencesim(&["run", arg(&file), "--trace", arg(&trace)]).into_parts();
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains("--trace:"), "{stderr}");
    assert!(stderr.contains("already exists"), "{stderr}");
    assert_eq!(stdout, "");
    assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
    assert_eq!(std::fs::read_to_string(&trace).unwrap(), "mine\n");
}

#[test]
fn shrink_keeps_a_file_edited_by_hand_under_its_header() {
    let dir = TempDir::new("shrink_keeps_a_file_edited_by_hand_under_its_header");
    let out = dir.path().join("shrunk.toml");
    let args = [
        "shrink",
        "scenarios/figure-9-6-unfenced.toml",
        "--seed",
        "1",
        "--faults",
        "scenario",
        "--out",
        arg(&out),
    ];
    let (code, stdout, stderr) = fencesim(&args).into_parts();
    assert_eq!(code, 0, "{stdout}{stderr}");
    // Shrink's header kept, a body edited by hand: the file is the user's.
    let edited = std::fs::read_to_string(&out).unwrap() + "# my note: try ttl = \"30s\"\n";
    std::fs::write(&out, &edited).unwrap();
    let (code, _, stderr) = fencesim(&args).into_parts();
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("already exists"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), edited);
}

#[test]
fn a_name_or_description_cannot_link_or_head_the_markdown_report() {
    let dir = TempDir::new("a_name_or_description_cannot_link_or_head_the_markdown_report");
    let name = "SAFE: the storage accepted no stale write";
    let description = "Ask ops@example.com, see https://evil.example/x|y or \
                       WWW.example.com and mailto:a@b.c; plain words stay plain: a_b.";
    let file = write(&dir, "named.toml", &unfenced_as(name, description));
    let out = dir.path().join("out");
    let (code, stdout, stderr) = fencesim(&["report", arg(&file), "--out", arg(&out)]).into_parts();
    assert_eq!(code, 0, "{stdout}{stderr}");
    let page = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "md") && !p.ends_with("index.md"))
        .unwrap();
    let md = std::fs::read_to_string(page).unwrap();
    let lines: Vec<&str> = md.lines().collect();
    // The first heading opens with the real verdict (the name as a file
    // name keeps its letters).
    assert_eq!(
        lines[0],
        "# VIOLATION · SAFE\\_\\_the\\_storage\\_accepted\\_no\\_stale\\_write"
    );
    assert!(lines[2].starts_with("**Verdict:** VIOLATION"), "{md}");
    // Every word GitHub would link by itself is code, which it never links.
    assert_eq!(
        lines[6],
        "Ask `ops@example.com,` see `https://evil.example/x\\x7cy` or \
         `WWW.example.com` and `mailto:a@b.c;` plain words stay plain: a\\_b."
    );
}
