//! The binary: human lines, `--json` lines with the fields `docs/cli.md`
//! lists, exit codes 0, 1, 2 and 4.

use std::collections::BTreeSet;

use fencesim::audit::Kind;
use serde_json::Value;

use crate::{crate_root, fencesim, fencesim_in, TempDir, FIXTURES};

fn json_lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

#[test]
fn the_human_output_is_one_line_per_finding_then_a_summary() {
    let out = fencesim(&["audit", FIXTURES]);
    assert_eq!(out.code, 1, "an unfenced lock is exit 1: {}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    let (summary, findings) = lines.split_last().expect("output");
    assert!(findings.len() >= 20);
    for line in findings {
        assert!(line.starts_with(&format!("{FIXTURES}/")), "{line}");
        assert!(
            [": fenced yes: ", ": fenced no: ", ": fenced unknown: "]
                .iter()
                .any(|w| line.contains(w)),
            "{line}"
        );
        assert!(line.contains("; see fencesim run scenarios/"), "{line}");
    }
    let line = findings
        .iter()
        .find(|l| l.starts_with(&format!("{FIXTURES}/sql/settle.sql:6:")))
        .expect("the SQL file's first lock");
    assert!(
        line.contains("PostgreSQL advisory lock")
            && line.contains("fenced yes: held by the storage itself: the `UPDATE` at line 7 runs in the transaction that holds the lock, which ends with it")
            && line.ends_with("see fencesim run scenarios/postgres-advisory-idle-timeout.toml"),
        "{line}"
    );
    assert!(
        summary.starts_with(&format!("audit: {} findings in ", findings.len()))
            && summary.contains(" fenced, ")
            && summary.contains(" unfenced, "),
        "{summary}"
    );
}

#[test]
fn json_has_one_object_per_finding_with_the_documented_fields() {
    let human = fencesim(&["audit", FIXTURES]);
    let out = fencesim(&["audit", FIXTURES, "--json"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let values = json_lines(&out.stdout);
    assert_eq!(values.len() + 1, human.stdout.lines().count());
    let documented = documented_fields();
    for v in &values {
        let object = v.as_object().expect("an object per line");
        let keys: BTreeSet<String> = object.keys().cloned().collect();
        assert_eq!(
            keys, documented,
            "docs/cli.md `audit --json` lists other fields"
        );
        assert!(v["file"].as_str().is_some_and(|f| f.starts_with(FIXTURES)));
        assert!(v["line"].as_u64().is_some_and(|l| l >= 1));
        assert!(v["column"].as_u64().is_some_and(|c| c >= 1));
        assert!(v["fenced"].is_boolean() || v["fenced"].is_null());
        assert!(v["kind"].is_string() && v["language"].is_string());
        assert!(v["what"].is_string() && v["reason"].is_string());
        let scenario = v["scenario"].as_str().expect("a scenario");
        assert!(crate_root().join(scenario).is_file(), "{scenario}");
        assert_eq!(v["command"], format!("fencesim run {scenario}"));
    }
    // true, false and null all appear.
    for wanted in [Value::Bool(true), Value::Bool(false), Value::Null] {
        assert!(values.iter().any(|v| v["fenced"] == wanted), "{wanted}");
    }
    let lines: Vec<(String, u64)> = values
        .iter()
        .map(|v| {
            (
                v["file"].as_str().unwrap().to_owned(),
                v["line"].as_u64().unwrap(),
            )
        })
        .collect();
    let mut sorted = lines.clone();
    sorted.sort();
    assert_eq!(lines, sorted, "findings in file and line order");
}

/// The field names of the table under `## \`audit --json\`` in docs/cli.md.
fn documented_fields() -> BTreeSet<String> {
    let doc = std::fs::read_to_string(crate_root().join("docs/cli.md")).expect("docs/cli.md");
    let start = doc
        .find("\n## `audit --json`\n")
        .expect("docs/cli.md has a section `audit --json`");
    let section = &doc[start + 1..];
    let end = section[1..].find("\n## ").map_or(section.len(), |i| i + 1);
    section[..end]
        .lines()
        .filter_map(|line| {
            let cell = line.split('|').nth(1)?.trim();
            Some(cell.strip_prefix('`')?.strip_suffix('`')?.to_owned())
        })
        .collect()
}

#[test]
fn a_missing_path_is_exit_2_naming_it() {
    let out = fencesim(&["audit", "no/such/tree"]);
    assert_eq!(out.code, 2);
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr.contains("no/such/tree") && out.stderr.contains("no such file or directory"),
        "{}",
        out.stderr
    );
    let none = fencesim(&["audit"]);
    assert_eq!(none.code, 2, "a path is required: {}", none.stderr);
    let flag = fencesim(&["audit", FIXTURES, "--jsn"]);
    assert_eq!(flag.code, 2, "{}", flag.stderr);
}

#[test]
fn only_fenced_locks_exit_0_and_only_undetermined_ones_exit_4() {
    let dir = TempDir::new("codes");
    dir.write(
        "fenced/job.py",
        b"import etcd3\n\ndef run(etcd, db, revision):\n    etcd.lock('job').acquire()\n    db.execute('UPDATE jobs SET done = 1 WHERE id = 1 AND revision < %s', (revision,))\n",
    );
    dir.write(
        "unknown/job.py",
        b"import etcd3\n\ndef run(etcd, work):\n    with etcd.lock('job'):\n        work()\n",
    );
    dir.write("none/job.py", b"def run(work):\n    work()\n");
    let fenced = fencesim_in(dir.path(), &["audit", "fenced"]);
    assert_eq!(fenced.code, 0, "{}", fenced.stdout);
    assert!(
        fenced.stdout.contains(": fenced yes: "),
        "{}",
        fenced.stdout
    );
    let unknown = fencesim_in(dir.path(), &["audit", "unknown"]);
    assert_eq!(unknown.code, 4, "{}", unknown.stdout);
    assert!(
        unknown.stdout.contains("fenced unknown: no write follows"),
        "{}",
        unknown.stdout
    );
    // Fenced and undetermined together: nothing unfenced, and something
    // judged: 0.
    let both = fencesim_in(dir.path(), &["audit", "fenced", "unknown"]);
    assert_eq!(both.code, 0, "{}", both.stdout);
    let none = fencesim_in(dir.path(), &["audit", "none", "--json"]);
    assert_eq!((none.code, none.stdout.as_str()), (0, ""));
    let none = fencesim_in(dir.path(), &["audit", "none"]);
    assert_eq!(
        none.stdout,
        "audit: no distributed lock found in 1 source file\n"
    );
}

#[test]
fn postgres_findings_point_at_the_postgres_scenario_when_it_is_there() {
    let dir = TempDir::new("postgres");
    dir.write(
        "src/settle.sql",
        b"SELECT pg_advisory_lock(42);\nUPDATE t SET v = 1 WHERE id = 1;\nSELECT pg_advisory_unlock(42);\n",
    );
    let without = fencesim_in(dir.path(), &["audit", "src", "--json"]);
    let v = &json_lines(&without.stdout)[0];
    assert_eq!(v["scenario"], "scenarios/figure-9-6-unfenced.toml");
    dir.write(
        "scenarios/postgres-advisory-idle-timeout.toml",
        b"name = \"x\"\n",
    );
    let with = fencesim_in(dir.path(), &["audit", "src", "--json"]);
    let v = &json_lines(&with.stdout)[0];
    assert_eq!(
        v["scenario"],
        "scenarios/postgres-advisory-idle-timeout.toml"
    );
    assert_eq!(v["line"], 1);
    assert_eq!(v["fenced"], false);
}

#[test]
fn the_reference_names_every_kind_and_every_kind_names_a_bundled_scenario() {
    let doc = std::fs::read_to_string(crate_root().join("docs/cli.md")).expect("docs/cli.md");
    let start = doc
        .find("\n## `fencesim audit`\n")
        .expect("an audit section");
    let section = &doc[start..];
    for kind in Kind::ALL {
        assert!(
            section.contains(&format!("| `{}` |", kind.name())),
            "docs/cli.md's audit table has no row for `{}`",
            kind.name()
        );
        let scenarios = crate_root().join("scenarios");
        let scenario = kind.scenario(&scenarios);
        assert!(
            scenarios.join(scenario).is_file(),
            "{} names {scenario}",
            kind.name()
        );
    }
}
