//! Truncated, mangled and random source text is audited without a panic:
//! a half-written file, an unterminated string or comment, or stray
//! multi-byte characters are findings or nothing, never a crash.

use std::path::Path;

use fencesim::audit::{audit_source, Language};
use proptest::prelude::*;

use crate::{crate_root, FIXTURES};

const LANGUAGES: [Language; 8] = [
    Language::Rust,
    Language::Go,
    Language::Java,
    Language::Kotlin,
    Language::Python,
    Language::TypeScript,
    Language::JavaScript,
    Language::Sql,
];

fn fixture_texts() -> Vec<(Language, String)> {
    let mut out = Vec::new();
    let mut dirs = vec![crate_root().join(FIXTURES)];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if let Some(language) = Language::of(&path) {
                out.push((language, std::fs::read_to_string(&path).expect("text")));
            }
        }
    }
    out
}

/// Every finding's position is inside the text.
#[track_caller]
fn audits(language: Language, text: &str) {
    for f in audit_source("f", language, text) {
        assert!(
            f.line >= 1 && f.line <= text.lines().count().max(1),
            "{f:?}"
        );
        assert!(f.column >= 1);
    }
}

#[test]
fn every_prefix_and_suffix_of_the_fixtures_audits() {
    for (language, text) in fixture_texts() {
        let cuts: Vec<usize> = text.char_indices().map(|(i, _)| i).step_by(11).collect();
        for &cut in &cuts {
            audits(language, &text[..cut]);
            audits(language, &text[cut..]);
        }
        // The same text read as every other language.
        for other in LANGUAGES {
            audits(other, &text);
        }
    }
}

#[test]
fn a_file_that_is_only_an_opening_is_nothing() {
    for language in LANGUAGES {
        for text in [
            "\"",
            "'",
            "`",
            "/*",
            "r#\"",
            "\"\"\"",
            "$$",
            "{",
            "}",
            "(",
            ")",
            "@SchedulerLock",
            "if",
            "é'",
            "'é",
        ] {
            audits(language, text);
        }
    }
    // Cases the random test once found: a command in a string opened by
    // three quotes, and an unclosed call ending inside a multi-byte
    // character.
    audits(Language::Python, r#"'''é"redis.call('SET', k, 'NX')"#);
    audits(Language::Rust, r##"Do("SET"#é"##);
    assert!(Path::new(FIXTURES).is_relative());
}

/// Pieces of source: quotes, comments, brackets, lock calls and writes, and
/// multi-byte characters, put together at random.
fn piece() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "\"",
        "'",
        "`",
        "'''",
        "\"\"\"",
        "r#\"",
        "\"#",
        "//",
        "#",
        "--",
        "/*",
        "*/",
        "$$",
        "{",
        "}",
        "(",
        ")",
        ";",
        ",",
        ":",
        "=",
        ".",
        "\n",
        "    ",
        "if ",
        "def f():",
        "fn f() ",
        "func f() ",
        "function f() ",
        "r.set(k, v, nx=True, px=1)",
        "SetNX(",
        "\"SET\"",
        "\"NX\"",
        "Do(",
        "redis.call('SET', k, 'NX')",
        "pg_advisory_lock(",
        "UPDATE t SET v = 1 WHERE ",
        "token < 1",
        "store.put(",
        "IfMatch",
        "is_leader",
        "@SchedulerLock",
        "concurrency.NewMutex(",
        "getLock(",
        "etcd",
        "redis",
        "é",
        "日本",
        "\u{202e}",
        "x",
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_source_audits_in_every_language(
        pieces in prop::collection::vec(piece(), 0..60),
        language in prop::sample::select(LANGUAGES.to_vec()),
    ) {
        audits(language, &pieces.concat());
    }
}
