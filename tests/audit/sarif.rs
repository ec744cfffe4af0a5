//! `audit --sarif`: a SARIF 2.1.0 log that the official schema accepts,
//! with a rule per kind, a result per finding as `--json` gives it, the
//! same bytes on every run, and fingerprints that survive moved lines.

use std::collections::BTreeSet;

use fencesim::audit::Kind;
use serde_json::Value;

use crate::{crate_root, fencesim, fencesim_in, TempDir, FIXTURES};

/// The OASIS SARIF 2.1.0 schema (errata 01), vendored.
const SCHEMA: &str = "tests/fixtures/sarif/sarif-schema-2.1.0.json";

fn validator() -> jsonschema::Validator {
    let text = std::fs::read_to_string(crate_root().join(SCHEMA)).expect("the vendored schema");
    let schema: Value = serde_json::from_str(&text).expect("the schema is JSON");
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft4)
        .should_validate_formats(true)
        .build(&schema)
        .expect("the schema compiles")
}

/// The schema's complaints about `log`, one per line.
fn errors(log: &Value) -> String {
    validator()
        .iter_errors(log)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn sarif_of(dir: &std::path::Path, args: &[&str]) -> (Value, String, i32) {
    let out = fencesim_in(dir, args);
    let log = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", out.stdout, out.stderr));
    (log, out.stdout, out.code)
}

#[test]
fn the_fixtures_log_validates_against_the_sarif_schema() {
    let (log, _, code) = sarif_of(crate_root(), &["audit", FIXTURES, "--sarif"]);
    assert_eq!(code, 1, "the exit code is the audit's");
    let errors = errors(&log);
    assert!(errors.is_empty(), "the schema rejects the log:\n{errors}");
    assert_eq!(log["version"], "2.1.0");
    assert_eq!(log["runs"].as_array().map(Vec::len), Some(1));
    // The log names the schema it was checked against.
    let text = std::fs::read_to_string(crate_root().join(SCHEMA)).expect("the vendored schema");
    let schema: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(log["$schema"], schema["id"]);
}

/// A change that makes a log invalid.
type Breakage = fn(&mut Value);

#[test]
fn the_validator_rejects_a_broken_log() {
    let (log, _, _) = sarif_of(crate_root(), &["audit", FIXTURES, "--sarif"]);
    let breakages: [(&str, Breakage); 5] = [
        ("no version", |l| {
            l.as_object_mut().unwrap().remove("version");
        }),
        ("an unknown level", |l| {
            l["runs"][0]["results"][0]["level"] = "fatal".into()
        }),
        ("line 0", |l| {
            l["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] =
                0.into()
        }),
        ("a driver without a name", |l| {
            l["runs"][0]["tool"]["driver"]
                .as_object_mut()
                .unwrap()
                .remove("name");
        }),
        ("a helpUri that is no URI", |l| {
            l["runs"][0]["tool"]["driver"]["rules"][0]["helpUri"] = "not a uri".into()
        }),
    ];
    for (what, breakage) in breakages {
        let mut broken = log.clone();
        breakage(&mut broken);
        assert!(
            !validator().is_valid(&broken),
            "the schema accepts a log with {what}"
        );
    }
}

#[test]
fn each_finding_is_a_result_as_json_gives_it() {
    let (log, _, _) = sarif_of(crate_root(), &["audit", FIXTURES, "--sarif"]);
    let json = fencesim(&["audit", FIXTURES, "--json"]);
    let findings: Vec<Value> = json
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    let run = &log["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().expect("rules");
    let results = run["results"].as_array().expect("results");
    assert_eq!(results.len(), findings.len());
    for (r, f) in results.iter().zip(&findings) {
        let level = match f["fenced"].as_bool() {
            Some(false) => "error",
            None => "warning",
            Some(true) => "note",
        };
        assert_eq!(r["level"], level, "{r}");
        assert_eq!(r["ruleId"], f["kind"]);
        let index = r["ruleIndex"].as_u64().expect("an index") as usize;
        assert_eq!(rules[index]["id"], f["kind"]);
        let location = &r["locations"][0]["physicalLocation"];
        let file = f["file"].as_str().unwrap();
        assert_eq!(location["artifactLocation"]["uri"], file, "{r}");
        assert_eq!(location["artifactLocation"]["uriBaseId"], "%SRCROOT%");
        assert_eq!(location["region"]["startLine"], f["line"]);
        assert_eq!(location["region"]["startColumn"], f["column"]);
        let message = r["message"]["text"].as_str().unwrap();
        assert!(message.contains(f["reason"].as_str().unwrap()), "{message}");
        // The write first (id 1), then the calls not followed (id 2, …).
        let mut expected: Vec<(u64, u64)> = f["write_line"]
            .as_u64()
            .map(|line| (1, line))
            .into_iter()
            .collect();
        let unfollowed = f["unfollowed"].as_array().expect("an array");
        for (i, u) in unfollowed.iter().enumerate() {
            expected.push((i as u64 + 2, u["line"].as_u64().unwrap()));
            let text = r["relatedLocations"][expected.len() - 1]["message"]["text"]
                .as_str()
                .unwrap();
            assert!(text.contains(u["call"].as_str().unwrap()), "{text}");
        }
        let related: Vec<(u64, u64)> = r
            .get("relatedLocations")
            .map(|l| {
                let l = l.as_array().expect("an array");
                assert!(!l.is_empty(), "{r}");
                l.iter()
                    .map(|x| {
                        let line = &x["physicalLocation"]["region"]["startLine"];
                        (x["id"].as_u64().unwrap(), line.as_u64().unwrap())
                    })
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(related, expected, "{r}");
    }
    let prints: BTreeSet<&str> = results
        .iter()
        .map(|r| {
            r["partialFingerprints"]["fencesimFinding/v1"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(
        prints.len(),
        results.len(),
        "each result has its own fingerprint"
    );
}

#[test]
fn every_kind_is_a_rule_naming_its_bundled_scenario() {
    let (log, _, _) = sarif_of(crate_root(), &["audit", FIXTURES, "--sarif"]);
    let driver = &log["runs"][0]["tool"]["driver"];
    assert_eq!(driver["name"], "fencesim");
    assert_eq!(driver["version"], env!("CARGO_PKG_VERSION"));
    let rules = driver["rules"].as_array().expect("rules");
    let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    let kinds: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
    assert_eq!(ids, kinds);
    for (rule, kind) in rules.iter().zip(Kind::ALL) {
        let scenario = kind.scenario(&crate_root().join("scenarios"));
        assert!(
            crate_root().join("scenarios").join(scenario).is_file(),
            "{scenario}"
        );
        assert!(
            rule["helpUri"].as_str().unwrap().ends_with(scenario),
            "{rule}"
        );
        assert!(rule["help"]["text"].as_str().unwrap().contains(scenario));
        assert_eq!(rule["shortDescription"]["text"], kind.label());
        let full = rule["fullDescription"]["text"].as_str().unwrap();
        assert_eq!(full.contains("no token"), kind.token().is_none(), "{full}");
    }
}

#[test]
fn the_log_is_the_same_bytes_on_every_run() {
    let (_, a, _) = sarif_of(crate_root(), &["audit", FIXTURES, "--sarif"]);
    let (_, b, _) = sarif_of(crate_root(), &["audit", FIXTURES, "--sarif"]);
    assert_eq!(a, b);
}

#[test]
fn fingerprints_survive_lines_moving_and_twins_differ() {
    let dir = TempDir::new("sarif-prints");
    let job = "def run(r, db):\n    r.set('lock:job', 'me', nx=True, px=30000)\n    db.execute('UPDATE jobs SET done = 1 WHERE id = 1')\n";
    dir.write("src/job.py", format!("{job}\n{job}").as_bytes());
    let (before, _, _) = sarif_of(dir.path(), &["audit", "src", "--sarif"]);
    dir.write(
        "src/job.py",
        format!("import redis\n\n{job}\n{job}").as_bytes(),
    );
    let (after, _, _) = sarif_of(dir.path(), &["audit", "src", "--sarif"]);
    let prints = |log: &Value| -> Vec<(String, u64)> {
        log["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["partialFingerprints"]["fencesimFinding/v1"]
                        .as_str()
                        .unwrap()
                        .to_owned(),
                    r["locations"][0]["physicalLocation"]["region"]["startLine"]
                        .as_u64()
                        .unwrap(),
                )
            })
            .collect()
    };
    let (before, after) = (prints(&before), prints(&after));
    assert_eq!(before.len(), 2);
    assert_ne!(before[0].0, before[1].0, "the same code twice: two prints");
    for (b, a) in before.iter().zip(&after) {
        assert_eq!(b.0, a.0, "a print does not follow the line number");
        assert_eq!(b.1 + 2, a.1);
    }
    assert!(errors(
        &serde_json::from_str(&fencesim_in(dir.path(), &["audit", "src", "--sarif"]).stdout)
            .unwrap()
    )
    .is_empty());
}

#[test]
fn sarif_and_json_together_are_refused() {
    let out = fencesim(&["audit", FIXTURES, "--sarif", "--json"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr.contains("--sarif") && out.stderr.contains("--json"),
        "{}",
        out.stderr
    );
}

#[test]
fn nothing_found_is_a_valid_log_with_no_result() {
    let dir = TempDir::new("sarif-empty");
    dir.write("job.py", b"def run(work):\n    work()\n");
    let (log, _, code) = sarif_of(dir.path(), &["audit", "job.py", "--sarif"]);
    assert_eq!(code, 0);
    assert_eq!(log["runs"][0]["results"], Value::Array(Vec::new()));
    let errors = errors(&log);
    assert!(errors.is_empty(), "{errors}");
}
