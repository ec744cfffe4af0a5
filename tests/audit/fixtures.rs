//! The fixture tree: every planted finding found at its line with its kind
//! and verdict, nothing else (the decoys), in every language.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use fencesim::audit::{self, Language};

use crate::{crate_root, FIXTURES};

/// (file, line, kind, fenced) as the fixtures plant it or the audit finds it.
pub(crate) type Row = (String, usize, String, Option<bool>);

fn fenced(word: &str) -> Option<bool> {
    match word {
        "yes" => Some(true),
        "no" => Some(false),
        "unknown" => None,
        other => panic!("a fixture marker says fenced={other}"),
    }
}

/// Every file under `dir`, the skipped directories included (a marker in
/// them would be a finding the audit must not make).
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read the fixtures")
        .map(|e| e.expect("an entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// The markers `audit: KIND fenced=WORD` of the fixture tree.
fn planted() -> BTreeSet<Row> {
    planted_in(FIXTURES)
}

/// The markers of the tree at `dir` (relative to the crate root).
pub(crate) fn planted_in(dir: &str) -> BTreeSet<Row> {
    let mut paths = Vec::new();
    files(&crate_root().join(dir), &mut paths);
    let mut rows = BTreeSet::new();
    for path in paths {
        if Language::of(&path).is_none() {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("a fixture is text");
        let file = path
            .strip_prefix(crate_root())
            .expect("under the crate")
            .to_string_lossy()
            .replace('\\', "/");
        for (i, line) in text.lines().enumerate() {
            let Some(marker) = line.split("audit: ").nth(1) else {
                continue;
            };
            let mut words = marker.split_whitespace();
            let kind = words.next().expect("a kind").to_owned();
            let word = words
                .next()
                .and_then(|w| w.strip_prefix("fenced="))
                .unwrap_or_else(|| panic!("{file}:{}: marker without fenced=", i + 1));
            rows.insert((file.clone(), i + 1, kind, fenced(word)));
        }
    }
    rows
}

/// The audit of the fixture tree, named as from the crate root (cargo runs
/// integration tests there).
fn found() -> (audit::Audit, BTreeSet<Row>) {
    found_in(FIXTURES)
}

/// The audit of the tree at `dir` (relative to the crate root).
pub(crate) fn found_in(dir: &str) -> (audit::Audit, BTreeSet<Row>) {
    let report = audit::audit(&[PathBuf::from(dir)], &crate_root().join("scenarios"))
        .unwrap_or_else(|e| panic!("{e}"));
    let rows = report
        .findings
        .iter()
        .map(|f| (f.file.clone(), f.line, f.kind.name().to_owned(), f.fenced))
        .collect();
    (report, rows)
}

#[test]
fn every_planted_lock_is_found_at_its_line_and_judged_as_planted() {
    let planted = planted();
    assert!(
        planted.len() >= 20,
        "the fixtures plant {} findings",
        planted.len()
    );
    let (_, found) = found();
    let missed: Vec<_> = planted.difference(&found).collect();
    let extra: Vec<_> = found.difference(&planted).collect();
    assert!(
        missed.is_empty() && extra.is_empty(),
        "planted but not found as planted:\n{missed:#?}\nfound but not planted (decoys):\n{extra:#?}"
    );
}

#[test]
fn every_language_plants_a_fenced_and_an_unfenced_lock() {
    let (report, _) = found();
    for language in [
        Language::Rust,
        Language::Go,
        Language::Java,
        Language::Kotlin,
        Language::Python,
        Language::TypeScript,
        Language::JavaScript,
        Language::Sql,
    ] {
        let verdicts: BTreeSet<Option<bool>> = report
            .findings
            .iter()
            .filter(|f| f.language == language)
            .map(|f| f.fenced)
            .collect();
        // SQL code takes only advisory locks, which hand out no token: none
        // of its locks can be fenced.
        let fenced = language == Language::Sql || verdicts.contains(&Some(true));
        assert!(
            fenced && verdicts.contains(&Some(false)),
            "{}: the fixtures judge {verdicts:?}",
            language.name()
        );
    }
    assert!(report.findings.iter().any(|f| f.fenced.is_none()));
}

#[test]
fn decoys_in_comments_strings_and_local_mutexes_give_nothing() {
    let code = r#"
import threading
import redis

_local = threading.Lock()

def refresh(r, cache, key):
    # SETNX would be wrong here; r.setnx(key, 1) is only a comment
    log.warning("SETNX failed, retrying")
    log.debug("SETNX")
    note = "SELECT pg_advisory_lock is taken elsewhere"
    with _local:
        cache[key] = r.get(key)
"#;
    assert_eq!(audit::audit_source("decoy.py", Language::Python, code), []);
    let go = "package x\n\nimport \"sync\"\n\nvar mu sync.Mutex\n\n// rdb.SetNX(ctx, k, v, ttl) takes the lock\nfunc f() {\n\tmu.Lock()\n\tdefer mu.Unlock()\n\tfmt.Println(\"SETNX\")\n}\n";
    assert_eq!(audit::audit_source("decoy.go", Language::Go, go), []);
    let rust = "/// Uses SETNX.\nfn f(m: &std::sync::Mutex<u32>) { *m.lock().unwrap() += 1; let s = \"SET k v NX\"; }\n";
    assert_eq!(audit::audit_source("decoy.rs", Language::Rust, rust), []);
}

#[test]
fn the_same_lock_is_judged_by_its_own_function_only() {
    // Two functions: the guard of the second does not fence the first.
    // (An etcd lock: it hands out a token, so its writes decide.)
    let code = "import etcd3\n\ndef a(etcd, db):\n    etcd.lock('k').acquire()\n    db.execute('UPDATE t SET v = 1 WHERE id = 1')\n\ndef b(etcd, db, token):\n    db.execute('UPDATE t SET v = 1 WHERE id = 1 AND version = %s', (token,))\n";
    let findings = audit::audit_source("two.py", Language::Python, code);
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].fenced, Some(false), "{}", findings[0].reason);
    assert_eq!(findings[0].write_line, Some(5));
    assert!(
        findings[0].reason.contains("checks no token"),
        "{}",
        findings[0].reason
    );
}

#[test]
fn a_set_column_is_not_a_guard_and_a_where_comparison_is() {
    let write = |sql: &str| {
        format!("import etcd3\n\ndef f(etcd, db, token):\n    etcd.lock('k').acquire()\n    db.execute(\"{sql}\", (token,))\n")
    };
    let set_only = write("UPDATE t SET v = 1, fence_token = %s WHERE id = 1");
    let findings = audit::audit_source("a.py", Language::Python, &set_only);
    assert_eq!(findings[0].fenced, Some(false), "{}", findings[0].reason);
    let checked = write("UPDATE t SET v = 1 WHERE id = 1 AND fence_token < %s");
    let findings = audit::audit_source("a.py", Language::Python, &checked);
    assert_eq!(findings[0].fenced, Some(true), "{}", findings[0].reason);
    assert!(
        findings[0].reason.contains("fence_token <"),
        "{}",
        findings[0].reason
    );
}

#[test]
fn findings_are_ordered_by_file_line_and_column_whatever_the_order_of_the_paths() {
    let scenarios = crate_root().join("scenarios");
    let forward: Vec<PathBuf> = ["sql", "go", "python"]
        .iter()
        .map(|d| Path::new(FIXTURES).join(d))
        .collect();
    let backward: Vec<PathBuf> = forward.iter().rev().cloned().collect();
    let a = audit::audit(&forward, &scenarios).expect("audit");
    let b = audit::audit(&backward, &scenarios).expect("audit");
    assert_eq!(a.findings, b.findings);
    let keys: Vec<(String, usize, usize)> = a
        .findings
        .iter()
        .map(|f| (f.file.clone(), f.line, f.column))
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
    assert!(keys.len() >= 8);
}

#[test]
fn every_finding_names_a_bundled_scenario() {
    let (report, _) = found();
    for f in &report.findings {
        assert!(
            crate_root().join(&f.scenario).is_file(),
            "{}:{} names {}, which is not bundled",
            f.file,
            f.line,
            f.scenario
        );
    }
}
