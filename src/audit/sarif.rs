//! The audit as SARIF 2.1.0, the format code-scanning UIs read: one run
//! whose tool lists a rule per lock kind, and a result per finding.
//!
//! The output is deterministic: findings in file, line and column order,
//! rules in [`Kind::ALL`] order (then a rule file's kinds), object keys sorted, no timestamp and no
//! absolute path the user did not give. A result's fingerprint leaves the
//! line out, so a finding keeps it when code above it moves.

use std::path::Path;

use serde_json::{json, Value};

use super::{Audit, Finding, Kind};

/// The version of SARIF written.
pub const VERSION: &str = "2.1.0";

/// The schema the document names (the one its test validates against).
pub const SCHEMA: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// The base a relative `artifactLocation.uri` is resolved against.
const SRCROOT: &str = "%SRCROOT%";

/// Where the tool is documented: the crate's documentation.
const INFORMATION_URI: &str = "https://docs.rs/fencesim";

/// The key of the one partial fingerprint a result carries.
const FINGERPRINT: &str = "fencesimFinding/v1";

/// The audit as one SARIF log; `scenarios` is the directory the findings'
/// scenarios were named from (as for [`super::audit`]).
pub fn log(report: &Audit, scenarios: &Path) -> Value {
    let kinds = if report.kinds.is_empty() {
        &Kind::ALL[..]
    } else {
        &report.kinds[..]
    };
    let rules: Vec<Value> = kinds.iter().map(|&k| rule(k, scenarios)).collect();
    let mut seen: Vec<(String, String, String)> = Vec::new();
    let results: Vec<Value> = report
        .findings
        .iter()
        .map(|f| {
            // The same lock written twice in a file (same kind, same line
            // text) is told apart by its rank among its twins.
            let key = (
                f.file.clone(),
                f.kind.name().to_owned(),
                normalized(&f.snippet),
            );
            let rank = seen.iter().filter(|k| **k == key).count();
            seen.push(key);
            result(f, kinds, rank)
        })
        .collect();
    json!({
        "$schema": SCHEMA,
        "version": VERSION,
        "runs": [{
            "tool": {
                "driver": {
                    "name": "fencesim",
                    "version": env!("CARGO_PKG_VERSION"),
                    "informationUri": INFORMATION_URI,
                    "rules": rules,
                }
            },
            "originalUriBaseIds": {
                SRCROOT: {
                    "description": {
                        "text": "The directory fencesim audit ran from: relative paths given to it are relative to it."
                    }
                }
            },
            "columnKind": "unicodeCodePoints",
            "results": results,
        }]
    })
}

/// The reportingDescriptor of a kind.
fn rule(kind: Kind, scenarios: &Path) -> Value {
    let scenario = kind.scenario(scenarios);
    let fence = match (kind.no_token(), kind.token()) {
        (Some(why), _) => format!("{}: it cannot fence anything.", capitalized(why)),
        (None, Some(token)) => format!(
            "It hands out a token ({token}): each write must carry it, and the storage must reject older ones."
        ),
        (None, None) => unreachable!("a kind hands out a token or says why not"),
    };
    let full = format!(
        "{} {fence} Without a fence, a holder that paused or lost the lock can still write.",
        kind.description()
    );
    let help = format!(
        "The bundled scenario scenarios/{scenario} shows what goes wrong: fencesim run scenarios/{scenario}"
    );
    json!({
        "id": kind.name(),
        "name": pascal(kind.name()),
        "shortDescription": { "text": kind.label() },
        "fullDescription": { "text": full },
        "help": {
            "text": help,
            "markdown": format!(
                "The bundled scenario `scenarios/{scenario}` shows what goes wrong:\n\n```\nfencesim run scenarios/{scenario}\n```"
            ),
        },
        "helpUri": help_uri(scenario),
        "defaultConfiguration": {
            "level": if kind.token().is_none() { "error" } else { "warning" }
        },
        "properties": {
            "token": kind.token(),
            "scenario": format!("scenarios/{scenario}"),
        },
    })
}

/// Where a bundled scenario can be read: the crate's source of this
/// version.
fn help_uri(scenario: &str) -> String {
    format!(
        "https://docs.rs/crate/fencesim/{}/source/scenarios/{}",
        env!("CARGO_PKG_VERSION"),
        encode(scenario)
    )
}

/// The SARIF level of a verdict.
pub fn level(fenced: Option<bool>) -> &'static str {
    match fenced {
        Some(false) => "error",
        None => "warning",
        Some(true) => "note",
    }
}

fn result(f: &Finding, kinds: &[Kind], rank: usize) -> Value {
    let index = kinds
        .iter()
        .position(|&k| k == f.kind)
        .expect("the rules list every kind they find");
    let location = |line: usize, column: Option<usize>| {
        let mut region = json!({ "startLine": line });
        if let Some(column) = column {
            region["startColumn"] = json!(column);
        }
        json!({
            "physicalLocation": {
                "artifactLocation": artifact(&f.file),
                "region": region,
            }
        })
    };
    let mut primary = location(f.line, Some(f.column));
    primary["physicalLocation"]["region"]["snippet"] = json!({ "text": f.snippet });
    let mut value = json!({
        "ruleId": f.kind.name(),
        "ruleIndex": index,
        "level": level(f.fenced),
        "message": {
            "text": format!("{}: fenced {}: {}", f.what(), f.fenced_word(), f.reason)
        },
        "locations": [primary],
        "partialFingerprints": { FINGERPRINT: fingerprint(f, rank) },
        "properties": {
            "fenced": f.fenced,
            "scenario": f.scenario,
            "command": f.command(),
        },
    });
    let mut related = Vec::new();
    if let Some(write) = f.write_line {
        let mut write = location(write, None);
        write["id"] = json!(1);
        write["message"] = json!({ "text": "the write the verdict rests on" });
        related.push(write);
    }
    // The calls not followed: what the verdict could not see.
    for (i, u) in f.unfollowed.iter().enumerate() {
        let mut call = location(u.line, None);
        call["id"] = json!(i + 2);
        call["message"] = json!({ "text": format!("`{}` not followed: {}", u.call, u.why) });
        related.push(call);
    }
    if !related.is_empty() {
        value["relatedLocations"] = json!(related);
    }
    value
}

/// An `artifactLocation`: a relative path under `%SRCROOT%`, an absolute
/// one as a `file` URI.
fn artifact(file: &str) -> Value {
    if let Some(rest) = file.strip_prefix('/') {
        json!({ "uri": format!("file:///{}", encode(rest)) })
    } else {
        let file = file.strip_prefix("./").unwrap_or(file);
        json!({ "uri": encode(file), "uriBaseId": SRCROOT })
    }
}

/// `path` as a URI path: every byte but the unreserved characters and `/`
/// percent-encoded.
fn encode(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The fingerprint of a finding: its file, kind and line text (spaces
/// collapsed) and its rank among the same in the file; not its line
/// number.
fn fingerprint(f: &Finding, rank: usize) -> String {
    let text = format!(
        "{}\0{}\0{}\0{rank}",
        f.file,
        f.kind.name(),
        normalized(&f.snippet)
    );
    format!("{:016x}", fnv1a(text.as_bytes()))
}

fn normalized(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// FNV-1a, 64 bits: small, and the same on every platform and release.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// `redis_set_nx` → `RedisSetNx`.
fn pascal(name: &str) -> String {
    name.split('_').map(capitalized).collect()
}

fn capitalized(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_become_uris_under_the_source_root() {
        assert_eq!(
            artifact("src/a b/ü.py"),
            json!({ "uri": "src/a%20b/%C3%BC.py", "uriBaseId": "%SRCROOT%" })
        );
        assert_eq!(artifact("./x.go")["uri"], "x.go");
        assert_eq!(
            artifact("/srv/app/x.go"),
            json!({ "uri": "file:///srv/app/x.go" })
        );
    }

    #[test]
    fn names_and_levels() {
        assert_eq!(pascal("redis_set_nx"), "RedisSetNx");
        assert_eq!(
            [Some(false), None, Some(true)].map(level),
            ["error", "warning", "note"]
        );
        // The FNV-1a 64 test vector.
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
