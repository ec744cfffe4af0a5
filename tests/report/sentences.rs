//! Every event kind a bundled design emits reads as a sentence: `step`,
//! the Markdown and the HTML page explain each event in prose, never as a
//! `key=value` dump. The kinds come from the journals themselves, so a
//! design that starts emitting a new kind fails here until it has one.

use std::collections::BTreeMap;

use fencesim::design::catalog::Registry;
use fencesim::explore::random::scenario_for_seed;
use fencesim::report::step::steps;
use fencesim::runner;
use fencesim::scenario;

use crate::crate_root;

/// Random-fault seeds run for every bundled scenario, beside its own seed.
const RANDOM_SEEDS: [u64; 3] = [1, 2, 3];

/// Client variants no bundled scenario ends in: a lease check that finds
/// the lease run out (`lapsed`), and a renewal refused before the write
/// (`lost`). Both with the bundled client and lock.
const VARIANTS: [(&str, &str); 2] = [
    (
        "lapsed.toml",
        r#"
name = "lapsed"
description = "client1 checks its lease after a pause longer than it."
[lock]
design = "lease"
ttl = "2s"
[storage]
design = "fenced"
[[clients]]
name = "client1"
check_lease = true
[[faults]]
kind = "pause"
node = "client1"
after = "client1:acquired"
duration = "3s"
"#,
    ),
    (
        "lost.toml",
        r#"
name = "lost"
description = "client1's renewal after a pause is refused before it writes."
[lock]
design = "lease"
ttl = "2s"
[storage]
design = "fenced"
[[clients]]
name = "client1"
work = "5s"
renew = true
[[faults]]
kind = "pause"
node = "client1"
after = "client1:acquired"
duration = "3s"
"#,
    ),
];

/// `text` without the spans in “…”: a message's own summary, quoted as the
/// message says it.
fn unquoted(text: &str) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '“' => depth += 1,
            '”' => depth = depth.saturating_sub(1),
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// Why `sentence` (of an event on `node`) is not prose, if it is not.
fn not_prose(node: &str, sentence: &str) -> Option<&'static str> {
    let text = unquoted(sentence);
    let chars: Vec<char> = text.chars().collect();
    let dump = chars
        .windows(2)
        .any(|w| (w[0].is_alphanumeric() || w[0] == '_') && w[1] == '=');
    if dump {
        return Some("a key=value field");
    }
    let raw_field = text
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|word| word.contains('_'));
    if raw_field {
        return Some("a raw field name");
    }
    // What `step` says of a kind it has no sentence for: `node: phrase.`
    if text.starts_with(&format!("{node}: ")) {
        return Some("the fallback `node: kind` form");
    }
    if !text.trim_end().ends_with('.') {
        return Some("no full stop");
    }
    None
}

#[test]
fn every_event_kind_of_every_bundled_scenario_reads_as_a_sentence() {
    let registry = Registry::builtin();
    let mut files: Vec<_> = std::fs::read_dir(crate_root().join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(files.len() > 40, "{files:?}");
    // kind → (how many events, an example sentence)
    let mut kinds: BTreeMap<String, (usize, String)> = BTreeMap::new();
    let mut bad = Vec::new();
    let mut sources: Vec<(String, String)> = files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            (f.display().to_string(), text)
        })
        .collect();
    sources.extend(VARIANTS.map(|(f, t)| (f.to_owned(), t.to_owned())));
    for (file, text) in &sources {
        let loaded = scenario::load_str(&registry, file, text).expect("valid scenario");
        let mut runs = vec![(loaded.seed, loaded.clone())];
        runs.extend(RANDOM_SEEDS.map(|seed| (seed, scenario_for_seed(&loaded, seed))));
        for (seed, s) in runs {
            let run = runner::run(&s, seed);
            let journal = &run.result.journal;
            for (step, e) in steps(journal, &run.report).iter().zip(journal.events()) {
                let entry = kinds.entry(e.kind.to_string()).or_default();
                entry.0 += 1;
                if entry.1.is_empty() {
                    entry.1 = step.sentence.clone();
                }
                if let Some(why) = not_prose(&e.node, &step.sentence) {
                    if bad.len() < 20 {
                        bad.push(format!(
                            "{file} seed {seed}, event #{} ({}): {why}: {}",
                            e.seq, e.kind, step.sentence
                        ));
                    }
                }
            }
        }
    }
    assert!(bad.is_empty(), "not prose:\n{}", bad.join("\n"));
    // The journals exercised the kinds this test is about: the client
    // variants, renewals at the client and the lock, the faults. A kind
    // seen nowhere is a kind whose sentence this test never read.
    for kind in [
        "acquired",
        "denied",
        "read",
        "wrote",
        "acked",
        "released",
        "granted",
        "expired",
        "accepted",
        "rejected",
        "renewed",
        "checked",
        "lapsed",
        "fenced",
        "lost",
        "pause",
        "resume",
        "crash",
        "restart",
        "clock",
        "partition",
        "heal",
        "link",
        "drop",
    ] {
        assert!(
            kinds.contains_key(kind),
            "no bundled journal has a `{kind}` event; kinds seen: {:?}",
            kinds.keys().collect::<Vec<_>>()
        );
    }
}

#[test]
fn the_prose_check_rejects_dumps_and_the_fallback() {
    assert_eq!(
        not_prose("client1", "client1: migrated lease=1."),
        Some("a key=value field")
    );
    assert_eq!(
        not_prose("client1", "client1: ⏸ paused 15.000s."),
        Some("the fallback `node: kind` form")
    );
    assert_eq!(
        not_prose("lock", "lock waits 3 ttl_ms."),
        Some("a raw field name")
    );
    assert_eq!(
        not_prose(
            "lock",
            "lock sends “grant lease=1 token=33” to client1 (message 1)."
        ),
        None
    );
    assert_eq!(
        not_prose(
            "storage",
            "storage rejects client1's write client1/1: version 2 != 1."
        ),
        None
    );
}

/// A lease the server ends for a reason of its own (PostgreSQL closing a
/// session its keepalive found dead) is said to end for that reason, not
/// to expire on the server's clock, in the lanes' phrase, the event's
/// sentence and the later sentences that recall it.
#[test]
fn a_lease_the_server_ends_for_its_own_reason_is_ended_not_expired() {
    let registry = Registry::builtin();
    let file = crate_root().join("scenarios/postgres-keepalive-vm-freeze.toml");
    let s = scenario::load_file(&registry, &file).expect("valid scenario");
    let run = runner::run(&s, s.seed);
    let journal = &run.result.journal;
    let steps = steps(journal, &run.report);
    let (step, _) = steps
        .iter()
        .zip(journal.events())
        .find(|(_, e)| e.kind == "expired" && e.str("reason") == Some("keepalive"))
        .expect("the server closes client1's session for its keepalive");
    assert_eq!(step.phrase, "lease 1 of client1 ended: keepalive");
    assert!(
        step.sentence
            .starts_with("lock ends lease 1 of client1 (keepalive):"),
        "{}",
        step.sentence
    );
    let recalled: Vec<&str> = steps
        .iter()
        .map(|s| s.sentence.as_str())
        .filter(|s| s.contains("(keepalive) at 25.007s"))
        .collect();
    assert!(!recalled.is_empty(), "no later sentence recalls the end");
    // (A message's own words, quoted, may say so: PostgreSQL's do.)
    for s in steps.iter().map(|s| unquoted(&s.sentence)) {
        assert!(
            !s.contains("expire"),
            "a keepalive's end said to expire: {s}"
        );
    }
}
