//! `fencesim run FILE [--seed N] [--json]`: figure 9-6 as bundled, and the
//! same story without fencing, written here.

use std::path::Path;

use fencesim::design::catalog::Registry;
use fencesim::{runner, scenario};
use serde_json::Value;

use crate::{
    arg, crate_root, fencesim, fencesim_in, fencesim_under_cargo, figure_9_6, unfenced, Output,
    TempDir,
};

/// Every field the CLI contract promises in `--json`, with its JSON type.
const CONTRACT_FIELDS: &[(&str, &str)] = &[
    ("scenario", "string"),
    ("seed", "u64"),
    ("verdict", "string"),
    ("stale_writes", "u64"),
    ("zombie_writes", "u64"),
    ("accepted_writes", "u64"),
    ("rejected_writes", "u64"),
    ("token_regressions", "u64"),
    ("lost_updates", "u64"),
    ("events", "u64"),
    ("sim_time_ms", "u64"),
    ("trace_hash", "string"),
    ("expectations_met", "bool"),
];

/// Asserts every contract field is present with its type.
#[track_caller]
fn assert_contract_fields(json: &serde_json::Map<String, Value>) {
    for (field, kind) in CONTRACT_FIELDS {
        let value = json
            .get(*field)
            .unwrap_or_else(|| panic!("--json lacks `{field}`: {json:?}"));
        let ok = match *kind {
            "string" => value.is_string(),
            "u64" => value.is_u64(),
            "bool" => value.is_boolean(),
            _ => unreachable!(),
        };
        assert!(ok, "`{field}` should be a {kind}, is {value}");
    }
    let hash = json["trace_hash"].as_str().unwrap();
    assert!(
        hash.len() == 16 && hash.chars().all(|c| c.is_ascii_hexdigit()),
        "trace_hash should be 16 hex digits, is {hash:?}"
    );
    let verdict = json["verdict"].as_str().unwrap();
    assert!(
        verdict == "safe" || verdict == "violation",
        "verdict is {verdict:?}"
    );
}

#[test]
fn figure_9_6_shows_token_34_accepted_and_the_zombie_token_33_rejected() {
    let out = fencesim(&["run", "scenarios/figure-9-6.toml"]);
    out.expect_code(0);
    let stdout = &out.stdout;
    assert!(
        stdout.contains("accepted client2/1 (token 34)"),
        "client2's write with token 34 is accepted:\n{stdout}"
    );
    assert!(
        stdout.contains("REJECTED client1/1 (token 33 < 34)"),
        "client1's zombie write with token 33 is rejected:\n{stdout}"
    );
    assert!(out.line("verdict").starts_with("SAFE"), "{stdout}");
    assert_eq!(
        out.line("repro"),
        "fencesim run scenarios/figure-9-6.toml --seed 1"
    );
    assert_eq!(out.stderr, "", "a clean run prints nothing on stderr");
}

#[test]
fn figure_9_6_json_has_every_contract_field() {
    let out = fencesim(&["run", "scenarios/figure-9-6.toml", "--json"]);
    out.expect_code(0);
    let json = out.json();
    assert_contract_fields(&json);
    assert_eq!(json["scenario"], "figure-9-6");
    assert_eq!(json["seed"], 1);
    assert_eq!(json["verdict"], "safe");
    assert_eq!(json["stale_writes"], 0);
    assert_eq!(json["zombie_writes"], 0);
    assert_eq!(json["accepted_writes"], 1);
    assert_eq!(json["rejected_writes"], 1);
    assert_eq!(json["token_regressions"], 0);
    assert_eq!(json["lost_updates"], 0);
    assert!(json["events"].as_u64().unwrap() > 0);
    // client1 sleeps 15 s and writes after it wakes: the run outlasts that.
    assert!(json["sim_time_ms"].as_u64().unwrap() >= 15_000);
    assert_eq!(json["expectations_met"], true);
}

#[test]
fn seed_flag_overrides_the_scenario_seed() {
    let out = fencesim(&["run", "scenarios/figure-9-6.toml", "--seed", "5", "--json"]);
    out.expect_code(0);
    let json = out.json();
    assert_eq!(json["seed"], 5);
    // Figure 9-6 does not depend on the seed's luck: a fenced storage
    // rejects the zombie whatever the latencies.
    assert_eq!(json["expectations_met"], true);
    let seed_1 = fencesim(&["run", "scenarios/figure-9-6.toml", "--json"]).json();
    assert_ne!(
        json["trace_hash"], seed_1["trace_hash"],
        "another seed draws other latencies, so another trace"
    );

    let human = fencesim(&["run", "scenarios/figure-9-6.toml", "--seed", "5"]);
    human.expect_code(0);
    assert!(
        human.line("repro").ends_with("--seed 5"),
        "{}",
        human.stdout
    );
}

#[test]
fn under_cargo_the_repro_command_is_spelt_as_a_cargo_command() {
    let out = fencesim_under_cargo(&["run", "scenarios/figure-9-6.toml"]);
    out.expect_code(0);
    assert_eq!(
        out.line("repro"),
        "cargo run --release -- run scenarios/figure-9-6.toml --seed 1"
    );
}

#[test]
fn the_binary_and_the_library_give_the_same_trace() {
    let out = fencesim(&["run", "scenarios/figure-9-6.toml", "--json"]);
    let json = out.expect_code(0).json();
    let path = crate_root().join("scenarios/figure-9-6.toml");
    let s = scenario::load_file(&Registry::builtin(), &path).unwrap();
    let run = runner::run(&s, 1);
    assert_eq!(json["trace_hash"], run.trace_hash().as_str());
    assert_eq!(json["events"], run.result.journal.len());
}

#[test]
fn unfenced_figure_9_6_is_a_stale_write_and_exits_1() {
    let dir = TempDir::new("unfenced");
    let file = dir.write("unfenced.toml", unfenced("unfenced", ""));

    let out = fencesim(&["run", arg(&file), "--json"]);
    out.expect_code(1);
    let json = out.json();
    assert_contract_fields(&json);
    assert_eq!(json["verdict"], "violation");
    assert_eq!(json["stale_writes"], 1);
    assert_eq!(json["accepted_writes"], 2);
    assert_eq!(json["rejected_writes"], 0);
    assert_eq!(json["expectations_met"], false);

    let out = fencesim(&["run", arg(&file)]);
    out.expect_code(1);
    assert!(
        out.line("verdict").starts_with("VIOLATION"),
        "{}",
        out.stdout
    );
    let explanation = out
        .stdout
        .split("stale_write (event ")
        .nth(1)
        .unwrap_or_else(|| panic!("the stale write is explained:\n{}", out.stdout));
    assert!(
        explanation.contains("client1's write")
            && explanation.contains("client2's write")
            && explanation.contains("stale write"),
        "the explanation names the stale write and the newer one it follows:\n{explanation}"
    );
    assert_eq!(
        out.line("repro"),
        format!("fencesim run {} --seed 1", file.display())
    );
}

#[test]
fn expecting_the_violation_exits_0() {
    let dir = TempDir::new("expect-violation");
    let expect = "\n[expect]\nverdict = \"violation\"\nstale_writes = 1\n";
    let file = dir.write("unfenced.toml", unfenced("unfenced", expect));

    let json = fencesim(&["run", arg(&file), "--json"])
        .expect_code(0)
        .json();
    assert_eq!(json["verdict"], "violation");
    assert_eq!(json["expectations_met"], true);

    let out = fencesim(&["run", arg(&file)]);
    out.expect_code(0);
    assert_eq!(out.line("expect"), "2 of 2 met");
}

#[test]
fn a_wrong_expectation_exits_1_and_is_named() {
    let dir = TempDir::new("wrong-expectation");
    let expect = "\n[expect]\nverdict = \"violation\"\nstale_writes = 0\n";
    let file = dir.write("unfenced.toml", unfenced("unfenced", expect));

    let out = fencesim(&["run", arg(&file)]);
    out.expect_code(1);
    assert_eq!(out.line("expect"), "1 of 2 met");
    assert!(
        out.stdout.contains("FAIL stale_writes = 0 (got 1)"),
        "the failing expectation is named with what happened:\n{}",
        out.stdout
    );
    assert!(out
        .stdout
        .contains("ok   verdict = violation (got violation)"));

    let json = fencesim(&["run", arg(&file), "--json"])
        .expect_code(1)
        .json();
    assert_eq!(json["expectations_met"], false);
    let failing: Vec<&str> = json["expectations"]
        .as_array()
        .expect("expectations listed")
        .iter()
        .filter(|e| e["met"] == false)
        .map(|e| e["key"].as_str().unwrap())
        .collect();
    assert_eq!(failing, ["stale_writes"]);
}

/// Runs the human report's repro line through `sh`, with `fencesim` standing
/// for the binary under test, plus `--json`.
#[cfg(unix)]
fn replay(dir: &Path, repro: &str) -> Output {
    let script = format!("fencesim() {{ \"$FENCESIM_BIN\" \"$@\"; }}\n{repro} --json\n");
    let output = std::process::Command::new("sh")
        .arg("-c")
        .arg(&script)
        .current_dir(dir)
        .env("FENCESIM_BIN", env!("CARGO_BIN_EXE_fencesim"))
        .env_remove("CARGO")
        .output()
        .expect("sh runs");
    Output::new(&[&script], output)
}

#[cfg(unix)]
#[test]
fn the_repro_line_pasted_into_a_shell_replays_the_same_trace() {
    let dir = TempDir::new("repro");
    let file = dir.write("unfenced.toml", unfenced("unfenced", ""));
    for (cwd, file) in [
        (crate_root(), "scenarios/figure-9-6.toml"),
        (dir.path(), arg(&file)),
    ] {
        let first = fencesim_in(cwd, &["run", file, "--seed", "7"]);
        let replayed = replay(cwd, first.line("repro"));
        let json = replayed.expect_code(first.code).json();
        assert_eq!(json["seed"], 7);
        assert_eq!(json["trace_hash"], first.line("trace"));
    }
}

#[cfg(unix)]
#[test]
fn the_repro_line_works_for_a_path_with_a_space() {
    let dir = TempDir::new("repro-space");
    let file = dir.write("my scenarios/unfenced.toml", unfenced("unfenced", ""));
    let first = fencesim(&["run", arg(&file)]);
    first.expect_code(1);
    let replayed = replay(crate_root(), first.line("repro"));
    let json = replayed.expect_code(1).json();
    assert_eq!(json["trace_hash"], first.line("trace"));
}

#[test]
fn figure_9_6_as_written_here_matches_the_bundled_file() {
    // Guards the other modules' assumption that `figure_9_6()` is the story
    // this file tells (tokens from 33, a fenced storage, a 15 s pause).
    let text = figure_9_6();
    for line in [
        "first_token = 33",
        "design = \"fenced\"",
        "duration = \"15s\"",
    ] {
        assert!(text.contains(line), "figure-9-6.toml has `{line}`");
    }
}

#[test]
fn a_crashed_run_prints_its_crash_and_nothing_of_the_build_machine() {
    // The storage's statement runs away on the run's key "x" (not on the
    // load-time trial's "key"): the storage panics at the first write.
    let dir = TempDir::new("crash-context");
    let file = dir.write(
        "crash.toml",
        r#"name = "crash"
[lock]
design = "lease"
[storage]
design = "sql"
update = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10 OR :key <> 'key') UPDATE kv SET value = (SELECT max(x) FROM c) WHERE key = :key"
[[clients]]
name = "client1"
"#,
    );
    for args in [
        vec!["run", arg(&file)],
        vec!["run", arg(&file), "--json"],
        vec!["explore", arg(&file), "--seeds", "0..3", "--jobs", "1"],
    ] {
        let out = fencesim(&args);
        let (stdout, stderr) = (&out.stdout, &out.stderr);
        assert_eq!(out.code, 3, "{args:?}: {stdout}{stderr}");
        assert!(
            stdout.contains("ran past its budget of 1000000 SQLite steps"),
            "{args:?}: {stdout}"
        );
        // madsim's own `context: node=…` line names the path its source
        // was built from.
        for shown in [stdout, stderr] {
            assert!(!shown.contains("context: node="), "{args:?}: {shown}");
            assert!(!shown.contains(".cargo"), "{args:?}: {shown}");
        }
    }
}
