//! `docs/cli.md` against the binary: the JSON fields that `run --json`,
//! `explore --json`, `margin --json` and `compare --json` print on bundled
//! scenarios are the fields its tables list, every command and flag of `--help` is in its section, and every
//! exit code of `fencesim::cli::Status` is in its table.

use std::collections::BTreeSet;

use fencesim::cli::Status;
use serde_json::Value;

use crate::{checkout, fencesim_in, page, TempDir};

const FILE: &str = "docs/cli.md";

/// A row of a field table: its path (`violations[].kind`) and whether it
/// may be absent from every output (its type says `optional`), or holds a
/// map whose keys are data (its type is `map`).
struct Field {
    path: String,
    optional: bool,
    map: bool,
}

/// The text of the section under the heading `heading` (up to the next
/// heading of the same or a higher level).
fn section<'a>(text: &'a str, heading: &str) -> &'a str {
    let level = heading.chars().take_while(|&c| c == '#').count();
    let start = text
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("{FILE} has no heading `{heading}`"))
        + heading.len()
        + 2;
    let rest = &text[start..];
    let end = rest
        .match_indices("\n#")
        .find(|(i, _)| {
            let hashes = rest[i + 1..].chars().take_while(|&c| c == '#').count();
            hashes <= level
        })
        .map_or(rest.len(), |(i, _)| i);
    &rest[..end]
}

/// The rows of the field tables in `text`: first cell `` `path` ``, second
/// the type.
fn fields(text: &str) -> Vec<Field> {
    text.lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            // "| `a` | type | meaning |" splits into ["", "`a`", type, meaning, ""].
            let path = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            let kind = cells.get(2)?;
            Some(Field {
                path: path.to_owned(),
                optional: kind.contains("optional"),
                map: kind.starts_with("map"),
            })
        })
        .collect()
}

/// Every field path in `value`: `a`, `a.b`, `a[].b`; the keys of a map
/// (as the table declares it) are data, not fields.
fn paths(value: &Value, prefix: &str, maps: &BTreeSet<String>, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                let path = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                out.insert(path.clone());
                if !maps.contains(&path) {
                    paths(v, &path, maps, out);
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                paths(item, &format!("{prefix}[]"), maps, out);
            }
        }
        _ => {}
    }
}

/// The JSON values on stdout, one per line.
fn json_lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// Checks that the fields of `outputs` and the table under `heading` agree
/// both ways.
fn agree(heading: &str, outputs: &[Value]) -> Vec<String> {
    let doc = page(FILE);
    let table = fields(section(&doc, heading));
    assert!(!table.is_empty(), "{FILE}: `{heading}` has no field table");
    agree_with(heading, table, outputs)
}

/// Checks that the fields of `outputs` and `table` (documented under
/// `heading`) agree both ways.
fn agree_with(heading: &str, table: Vec<Field>, outputs: &[Value]) -> Vec<String> {
    let maps: BTreeSet<String> = table
        .iter()
        .filter(|f| f.map)
        .map(|f| f.path.clone())
        .collect();
    let mut printed = BTreeSet::new();
    for value in outputs {
        paths(value, "", &maps, &mut printed);
    }
    let documented: BTreeSet<String> = table.iter().map(|f| f.path.clone()).collect();
    let mut problems = Vec::new();
    for path in printed.difference(&documented) {
        problems.push(format!(
            "`{heading}`: the binary prints `{path}`, the page does not list it"
        ));
    }
    for field in &table {
        if !field.optional && !printed.contains(&field.path) {
            problems.push(format!(
                "`{heading}`: the page lists `{}`, which no output printed (say `optional` in its type if it is)",
                field.path
            ));
        }
    }
    problems
}

/// A figure 9-6 whose pause waits for an event that never happens: an
/// unfired fault, exit 4.
const UNFIRED: &str = r#"name = "unfired"
[lock]
design = "lease"
[storage]
design = "fenced"
[[clients]]
name = "client1"
[[clients]]
name = "client2"
start = "12s"
[[faults]]
kind = "pause"
node = "client1"
after = "client1:lapsed"
duration = "15s"
"#;

#[test]
fn run_json_fields_are_the_documented_ones() {
    let dir = checkout("run-json");
    std::fs::write(dir.path().join("unfired.toml"), UNFIRED).expect("write");
    let mut outputs = Vec::new();
    for (file, code) in [
        ("scenarios/figure-9-6.toml", 0),
        ("scenarios/figure-9-6-unfenced.toml", 0),
        ("scenarios/jepsen-etcd-lock.toml", 0),
        ("unfired.toml", 4),
    ] {
        let out = fencesim_in(dir.path(), &["run", file, "--json"]);
        assert_eq!(out.code, code, "run {file} --json: {}", out.stderr);
        let values = json_lines(&out.stdout);
        assert_eq!(
            values.len(),
            1,
            "run --json prints one object: {}",
            out.stdout
        );
        outputs.extend(values);
    }
    let problems = agree("## `run --json`", &outputs);
    assert!(problems.is_empty(), "{FILE}:\n{}", problems.join("\n"));
}

#[test]
fn explore_json_fields_are_the_documented_ones() {
    let dir = checkout("explore-json");
    let out = fencesim_in(
        dir.path(),
        &[
            "explore",
            "scenarios/explore-lease-unfenced.toml",
            "--seeds",
            "0..40",
            "--jobs",
            "2",
            "--json",
        ],
    );
    assert_eq!(
        out.code, 1,
        "the demo sweep finds violations: {}",
        out.stderr
    );
    let lines = json_lines(&out.stdout);
    let (summaries, seeds): (Vec<Value>, Vec<Value>) =
        lines.into_iter().partition(|v| v.get("summary").is_some());
    assert_eq!(summaries.len(), 1, "one summary line");
    assert!(!seeds.is_empty(), "failing seed lines");

    let exhaustive = fencesim_in(
        dir.path(),
        &[
            "explore",
            "scenarios/explore-lease-unfenced.toml",
            "--exhaustive",
            "1",
            "--jobs",
            "2",
            "--json",
        ],
    );
    assert_eq!(exhaustive.code, 1, "{}", exhaustive.stderr);
    let (ex_summary, ex_lines): (Vec<Value>, Vec<Value>) = json_lines(&exhaustive.stdout)
        .into_iter()
        .filter(|v| v.get("progress").is_none())
        .partition(|v| v.get("summary").is_some());
    assert_eq!(ex_summary.len(), 1, "one exhaustive summary line");
    assert!(ex_lines.iter().all(|l| l.get("injected").is_some()));

    let mut problems = agree(
        "### A failing seed",
        &seeds.iter().chain(&ex_lines).cloned().collect::<Vec<_>>(),
    );
    problems.extend(agree("### Checkpoint and summary", &summaries));
    // An exhaustive search's summary is a sweep's, plus its own fields.
    let doc = page(FILE);
    let mut table = fields(section(&doc, "### Checkpoint and summary"));
    table.retain(|f| f.path != "summary" && f.path != "shard" && f.path != "wall_ms");
    table.extend(fields(section(&doc, "### `--exhaustive` summary")));
    problems.extend(agree_with("### `--exhaustive` summary", table, &ex_summary));
    assert!(problems.is_empty(), "{FILE}:\n{}", problems.join("\n"));
}

/// `merge --json`'s summary: explore's summary fields less each shard's
/// own, plus the merge's table; its failing seeds are explore's.
#[test]
fn merge_json_fields_are_the_documented_ones() {
    let dir = checkout("merge-json");
    let out = fencesim_in(
        dir.path(),
        &[
            "explore",
            "scenarios/explore-lease-unfenced.toml",
            "--seeds",
            "0..40",
            "--shard",
            "0/2",
            "--json",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    std::fs::write(dir.path().join("shard-0.jsonl"), &out.stdout).expect("write");
    // Shard 1/2 has not run: its seeds are a gap.
    let merged = fencesim_in(dir.path(), &["merge", "--json", "shard-0.jsonl"]);
    assert_eq!(merged.code, 1, "{}", merged.stderr);
    let (summaries, seeds): (Vec<Value>, Vec<Value>) = json_lines(&merged.stdout)
        .into_iter()
        .partition(|v| v.get("summary").is_some());
    assert_eq!(summaries.len(), 1, "one summary line");
    assert!(!summaries[0]["gaps"].as_array().unwrap().is_empty());
    assert!(!seeds.is_empty(), "failing seed lines");
    let doc = page(FILE);
    let own = ["jobs", "shard", "completed_ranges", "progress"];
    let mut table: Vec<Field> = fields(section(&doc, "### Checkpoint and summary"))
        .into_iter()
        .filter(|f| !own.contains(&f.path.as_str()))
        .collect();
    table.extend(fields(section(&doc, "## `merge --json`")));
    let mut problems = agree("### A failing seed", &seeds);
    problems.extend(agree_with("## `merge --json`", table, &summaries));
    assert!(problems.is_empty(), "{FILE}:\n{}", problems.join("\n"));
}

#[test]
fn margin_and_compare_json_fields_are_the_documented_ones() {
    let dir = checkout("margin-json");
    let margin = fencesim_in(
        dir.path(),
        &["margin", "scenarios/figure-9-6-unfenced.toml", "--json"],
    );
    assert_eq!(margin.code, 0, "{}", margin.stderr);
    let compare = fencesim_in(
        dir.path(),
        &[
            "compare",
            "scenarios/figure-9-6-unfenced.toml",
            "--seeds",
            "0..10",
            "--designs",
            "lease,etcd",
            "--json",
        ],
    );
    assert_eq!(compare.code, 0, "{}", compare.stderr);
    let mut problems = agree("## `margin --json`", &json_lines(&margin.stdout));
    problems.extend(agree("## `compare --json`", &json_lines(&compare.stdout)));
    assert!(problems.is_empty(), "{FILE}:\n{}", problems.join("\n"));
}

#[test]
fn journal_line_fields_are_the_documented_ones() {
    let dir = checkout("trace");
    let out = fencesim_in(
        dir.path(),
        &["run", "scenarios/figure-9-6.toml", "--trace", "trace.jsonl"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let text = std::fs::read_to_string(dir.path().join("trace.jsonl")).expect("the trace");
    let lines = json_lines(&text);
    assert_eq!(lines.len(), 40, "figure 9-6 journals 40 events");
    let problems = agree("## Journal lines", &lines);
    assert!(problems.is_empty(), "{FILE}:\n{}", problems.join("\n"));
}

/// The names of the subcommands `fencesim --help` lists.
fn commands(dir: &std::path::Path) -> Vec<String> {
    let help = fencesim_in(dir, &["--help"]);
    assert_eq!(help.code, 0);
    help.stdout
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_command_and_flag_is_documented() {
    let dir = TempDir::new("flags");
    let doc = page(FILE);
    let every = section(&doc, "## Every command");
    let commands = commands(dir.path());
    assert!(commands.len() >= 7, "fencesim --help lists {commands:?}");
    let mut missing = Vec::new();
    for command in &commands {
        let heading = format!("## `fencesim {command}`");
        if !doc.contains(&format!("\n{heading}\n")) {
            missing.push(format!("no section `{heading}`"));
            continue;
        }
        let text = section(&doc, &heading);
        let help = fencesim_in(dir.path(), &[command, "--help"]);
        assert_eq!(help.code, 0, "{command} --help");
        let flags: BTreeSet<&str> = help
            .stdout
            .split(|c: char| c.is_whitespace() || c == ',')
            .map(|w| w.trim_end_matches(|c: char| !c.is_ascii_alphanumeric()))
            .filter(|w| w.starts_with("--") && w.len() > 2)
            .collect();
        assert!(flags.contains("--help"), "{command} --help lists no flag");
        for flag in flags {
            let named = format!("`{flag}");
            if !text.contains(&named) && !every.contains(&named) {
                missing.push(format!("`fencesim {command}`: `{flag}`"));
            }
        }
    }
    assert!(missing.is_empty(), "{FILE} lacks:\n{}", missing.join("\n"));
}

/// Every code of [`Status`]: the match fails to compile when a variant is
/// added, so a new code cannot go undocumented.
fn code(status: Status) -> u8 {
    match status {
        Status::Ok
        | Status::Failed
        | Status::Invalid
        | Status::Internal
        | Status::Inconclusive
        | Status::Interrupted
        | Status::Terminated => status as u8,
    }
}

#[test]
fn every_exit_code_is_documented() {
    let doc = page(FILE);
    let table = section(&doc, "## Exit codes");
    let documented: BTreeSet<String> = table
        .lines()
        .filter_map(|l| l.strip_prefix("| ")?.split(' ').next())
        .filter(|c| c.chars().all(|c| c.is_ascii_digit()))
        .map(str::to_owned)
        .collect();
    let all = [
        Status::Ok,
        Status::Failed,
        Status::Invalid,
        Status::Internal,
        Status::Inconclusive,
        Status::Interrupted,
        Status::Terminated,
    ];
    let defined: BTreeSet<String> = all.iter().map(|s| code(*s).to_string()).collect();
    assert_eq!(
        documented, defined,
        "{FILE}'s exit code table differs from fencesim::cli::Status"
    );
}
