//! Rules as data: the bundled table loads, `--rules FILE` adds an in-house
//! lock library (its own kinds, or a bundled one), and a bad rule file is
//! exit 2 with `FILE:LINE:COL: what is wrong`.

use fencesim::audit::{Kind, Rules};
use serde_json::Value;

use crate::{fencesim_in, TempDir};

/// An in-house library: `acme.locks`, whose `hold` hands out no token and
/// whose `lease` hands out an epoch.
const ACME_RULES: &str = "\
# Acme's in-house lock library.
libraries:
  acme: [from acme, import acme]

kinds:
  - id: acme_hold
    label: Acme hold
    no_token: an Acme hold hands out no token that a write could carry
    scenarios: [figure-9-6-unfenced.toml]
    description: Acme's `locks.hold(name)`.
  - id: acme_lease
    label: Acme lease
    token: the lease's epoch
    scenarios: [figure-9-6-unfenced.toml]
    description: Acme's `locks.lease(name)`.

rules:
  - id: acme-hold
    kind: acme_hold
    calls: [hold]
    receiver: { is: [locks] }
    uses: [acme]
    first_arg: name
  - id: acme-lease
    kind: acme_lease
    calls: [lease]
    receiver: { is: [locks] }
    uses: [acme]
  - id: acme-redis-wrapper
    kind: redis_set_nx
    calls: [with_redis_lock]
";

const ACME_CODE: &str = "\
from acme import locks

def settle(db, token):
    locks.hold('settle')
    db.execute('UPDATE t SET v = 1 WHERE id = 1 AND fence_token < %s', (token,))

def rotate(db, epoch):
    lease = locks.lease('rotate')
    db.execute('UPDATE t SET v = 1 WHERE id = 1 AND epoch < %s', (epoch,))

def publish(db):
    with_redis_lock('publish')
    db.execute('UPDATE t SET v = 1 WHERE id = 1')

def decoy(db):
    locks.hold(name)
";

fn json_lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

#[test]
fn the_bundled_rules_load_with_every_kind() {
    let rules = Rules::bundled();
    assert_eq!(rules.kinds(), &Kind::ALL[..]);
    for kind in Kind::ALL {
        assert!(!kind.label().is_empty() && !kind.description().is_empty());
    }
}

#[test]
fn a_user_rule_finds_an_in_house_lock_library() {
    let dir = TempDir::new("rules-acme");
    dir.write("acme.yaml", ACME_RULES.as_bytes());
    dir.write("src/jobs.py", ACME_CODE.as_bytes());
    let without = fencesim_in(dir.path(), &["audit", "src", "--json"]);
    assert_eq!(
        (without.code, without.stdout.as_str()),
        (0, ""),
        "{}",
        without.stderr
    );
    let out = fencesim_in(
        dir.path(),
        &["audit", "src", "--json", "--rules", "acme.yaml"],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    let found: Vec<(u64, String, Value)> = json_lines(&out.stdout)
        .iter()
        .map(|v| {
            (
                v["line"].as_u64().unwrap(),
                v["kind"].as_str().unwrap().to_owned(),
                v["fenced"].clone(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            (4, "acme_hold".to_owned(), Value::Bool(false)),
            (8, "acme_lease".to_owned(), Value::Bool(true)),
            (12, "redis_set_nx".to_owned(), Value::Bool(false)),
        ],
        "{}",
        out.stdout
    );
    let first = &json_lines(&out.stdout)[0];
    assert_eq!(first["token"], Value::Null);
    assert!(first["reason"]
        .as_str()
        .unwrap()
        .starts_with("an Acme hold hands out no token"));
    assert_eq!(first["scenario"], "scenarios/figure-9-6-unfenced.toml");
    let text = fencesim_in(dir.path(), &["audit", "src", "--rules", "acme.yaml"]);
    assert!(
        text.stdout
            .contains("src/jobs.py:8:19: Acme lease `lease = locks.lease('rotate')`: fenced yes: "),
        "{}",
        text.stdout
    );
}

#[test]
fn a_user_kind_is_a_sarif_rule() {
    let dir = TempDir::new("rules-sarif");
    dir.write("acme.yaml", ACME_RULES.as_bytes());
    dir.write("src/jobs.py", ACME_CODE.as_bytes());
    let out = fencesim_in(
        dir.path(),
        &["audit", "src", "--sarif", "--rules", "acme.yaml"],
    );
    let log: Value = serde_json::from_str(&out.stdout).expect("JSON");
    let rules = log["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    assert_eq!(rules.len(), Kind::ALL.len() + 2);
    assert_eq!(rules[Kind::ALL.len()]["id"], "acme_hold");
    let result = &log["runs"][0]["results"][0];
    assert_eq!(result["ruleId"], "acme_hold");
    assert_eq!(result["ruleIndex"], Kind::ALL.len());
    assert_eq!(result["level"], "error");
}

/// Runs the audit with `rules` as `bad.yaml`: exit 2 and the message.
fn refused(rules: &str) -> String {
    let dir = TempDir::new("rules-bad");
    dir.write("bad.yaml", rules.as_bytes());
    dir.write("src/jobs.py", ACME_CODE.as_bytes());
    let out = fencesim_in(dir.path(), &["audit", "src", "--rules", "bad.yaml"]);
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(out.stdout, "");
    out.stderr.trim_end().to_owned()
}

#[test]
fn a_bad_rule_is_exit_2_at_its_file_line_and_column() {
    let rule = |extra: &str| {
        format!("rules:\n  - id: acme\n    kind: redis_set_nx\n    calls: [hold]\n{extra}")
    };
    let cases = [
        (
            "rules:\n  - id: acme\n    kind: acme_lok\n    calls: [hold]\n".to_owned(),
            "error: bad.yaml:3:5: rule `acme`: unknown kind `acme_lok` (known: redis_set_nx, ",
        ),
        (
            rule("    call: [hold]\n"),
            "error: bad.yaml:5:5: rules[0]: unknown field `call`, expected one of ",
        ),
        (
            rule("    first_arg: literal\n"),
            "error: bad.yaml:5:16: rules[0].first_arg: unknown variant `literal`, expected one of `string`, `path`, `name`",
        ),
        (
            rule("    uses: [acme]\n"),
            "error: bad.yaml:5:5: rule `acme`: unknown library `acme` (known: ",
        ),
        (
            rule("    receiver: { or_named: [x] }\n"),
            "error: bad.yaml:5:5: rule `acme`: `receiver` needs `any`, `is`, `contains`, `assigned_from` or `typed`",
        ),
        (
            rule("    annotation: Locked\n"),
            "error: bad.yaml:2:5: rule `acme` needs either `calls` or `annotation`",
        ),
        (
            "kinds:\n  - id: acme_hold\n    label: Acme hold\n    token: an epoch\n    no_token: none\n    scenarios: [figure-9-6-unfenced.toml]\n    description: Acme.\n".to_owned(),
            "error: bad.yaml:2:5: kind `acme_hold` has both `token` and `no_token`",
        ),
        (
            "kinds:\n  - id: redlock\n    label: Mine\n    token: an epoch\n    scenarios: [figure-9-6-unfenced.toml]\n    description: Mine.\n".to_owned(),
            "error: bad.yaml:2:5: kind `redlock` is already defined",
        ),
        (
            "rules:\n  - id: acme\n    calls: [hold\n".to_owned(),
            "error: bad.yaml:4:1: ",
        ),
    ];
    for (rules, expected) in cases {
        let message = refused(&rules);
        assert!(
            message.starts_with(expected),
            "for\n{rules}\nexpected a message starting {expected:?}, got {message:?}"
        );
    }
}

#[test]
fn a_missing_rule_file_is_exit_2_naming_it() {
    let dir = TempDir::new("rules-missing");
    dir.write("src/jobs.py", ACME_CODE.as_bytes());
    let out = fencesim_in(dir.path(), &["audit", "src", "--rules", "no-such.yaml"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .starts_with("error: no-such.yaml: cannot read the rule file: "),
        "{}",
        out.stderr
    );
}

#[test]
fn rule_files_are_read_in_order_and_the_first_matching_rule_wins() {
    let dir = TempDir::new("rules-order");
    dir.write("acme.yaml", ACME_RULES.as_bytes());
    // A second file maps the same call to another bundled kind: the first
    // file's rule wins.
    dir.write(
        "second.yaml",
        b"rules:\n  - id: wrapper-as-etcd\n    kind: etcd_lock\n    calls: [with_redis_lock]\n",
    );
    dir.write("src/jobs.py", ACME_CODE.as_bytes());
    let kinds = |args: &[&str]| -> Vec<String> {
        let out = fencesim_in(dir.path(), args);
        json_lines(&out.stdout)
            .iter()
            .map(|v| v["kind"].as_str().unwrap().to_owned())
            .collect()
    };
    let a = kinds(&[
        "audit",
        "src",
        "--json",
        "--rules",
        "acme.yaml",
        "--rules",
        "second.yaml",
    ]);
    let b = kinds(&[
        "audit",
        "src",
        "--json",
        "--rules",
        "second.yaml",
        "--rules",
        "acme.yaml",
    ]);
    assert_eq!(a, ["acme_hold", "acme_lease", "redis_set_nx"]);
    assert_eq!(b, ["acme_hold", "acme_lease", "etcd_lock"]);
}
