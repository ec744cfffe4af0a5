//! The object stores (`cas` with `api = "s3" | "gcs" | "azure"`) in their
//! bundled scenario pairs: which write each store applied or refused, and
//! why, not only the verdict. In each pair the same zombie write lands: a
//! plain PUT carrying its token as metadata is applied over a newer token's
//! object; the same PUT conditional on what it read is refused in the
//! store's own words.

use std::path::Path;

use fencesim::design::catalog::Registry;
use fencesim::design::object_store::ObjectApi;
use fencesim::oracle::Verdict;
use fencesim::runner::{self, ScenarioRun};
use fencesim::scenario::{load_file, load_str};
use sim::journal::Event;

/// One store's pair of bundled scenarios and the story they share.
struct Pair {
    api: ObjectApi,
    /// Plain PUTs, token in metadata.
    wrong: &'static str,
    /// PUTs conditional on what was read.
    right: &'static str,
    /// The late write of the holder whose lease ended.
    zombie: &'static str,
    /// The next holder's write, made meanwhile.
    newer: &'static str,
    /// The version the zombie read and the one the newer write left.
    read: u64,
    now: u64,
}

const PAIRS: [Pair; 3] = [
    Pair {
        api: ObjectApi::S3,
        wrong: "s3-token-in-metadata.toml",
        right: "s3-if-match.toml",
        zombie: "client1/2",
        newer: "client2/1",
        read: 1,
        now: 2,
    },
    Pair {
        api: ObjectApi::Gcs,
        wrong: "gcs-token-in-metadata.toml",
        right: "gcs-if-generation-match.toml",
        zombie: "client1/2",
        newer: "client2/1",
        read: 1,
        now: 2,
    },
    Pair {
        api: ObjectApi::Azure,
        wrong: "azure-token-in-metadata.toml",
        right: "azure-if-none-match.toml",
        zombie: "service1/1",
        newer: "service2/1",
        read: 0,
        now: 1,
    },
];

fn bundled(file: &str) -> ScenarioRun {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(file);
    let scenario = load_file(&Registry::builtin(), &path)
        .unwrap_or_else(|e| panic!("{file} does not load: {e}"));
    runner::run(&scenario, scenario.seed)
}

/// The storage's answer (`accepted` or `rejected`) to write `id`.
fn answer<'a>(run: &'a ScenarioRun, id: &str) -> &'a Event {
    let answers: Vec<&Event> = run
        .result
        .journal
        .events()
        .iter()
        .filter(|e| matches!(e.kind.as_str(), "accepted" | "rejected"))
        .filter(|e| e.str("write") == Some(id))
        .collect();
    assert_eq!(answers.len(), 1, "one answer to {id}: {answers:?}");
    answers[0]
}

#[test]
fn a_token_in_object_metadata_is_stored_and_never_compared() {
    for pair in PAIRS {
        let run = bundled(pair.wrong);
        let r = &run.report;
        assert_eq!(r.verdict, Verdict::Violation, "{}: {r:#?}", pair.wrong);
        assert_eq!((r.stale_writes, r.lost_updates), (1, 1), "{}", pair.wrong);
        assert_eq!(r.rejected_writes, 0, "{}", pair.wrong);
        let newer = answer(&run, pair.newer);
        let zombie = answer(&run, pair.zombie);
        // The zombie's PUT arrives after the newer one, carrying an older
        // token, and is applied with no precondition checked.
        assert!(zombie.seq > newer.seq, "{}", pair.wrong);
        assert_eq!(zombie.kind, "accepted", "{}", pair.wrong);
        assert_eq!(zombie.get("precondition"), None, "{}", pair.wrong);
        let (old, new) = (zombie.u64("token").unwrap(), newer.u64("token").unwrap());
        assert!(old < new, "{}: token {old} after {new}", pair.wrong);
    }
}

#[test]
fn a_precondition_on_the_version_read_refuses_the_same_put() {
    for pair in PAIRS {
        let run = bundled(pair.right);
        let r = &run.report;
        assert_eq!(r.verdict, Verdict::Safe, "{}: {r:#?}", pair.right);
        assert_eq!((r.stale_writes, r.lost_updates), (0, 0), "{}", pair.right);
        // The newer holder's PUT named the version it read, which was the
        // current one: applied, on that precondition.
        let newer = answer(&run, pair.newer);
        assert_eq!(newer.kind, "accepted", "{}", pair.right);
        assert_eq!(
            newer.str("precondition"),
            Some(pair.api.precondition("x", pair.read).as_str()),
            "{}",
            pair.right
        );
        // The zombie's names the same version, which that PUT moved on:
        // refused in the store's words, whatever its token.
        let zombie = answer(&run, pair.zombie);
        assert_eq!(zombie.kind, "rejected", "{}", pair.right);
        assert!(zombie.u64("token").is_some(), "{}", pair.right);
        assert_eq!(zombie.get("max_token"), None, "{}", pair.right);
        let etag = |v| pair.api.show_version("x", v);
        let reason = match pair.api {
            ObjectApi::S3 => format!(
                "412 PreconditionFailed: If-Match: {} but the ETag is {}",
                etag(pair.read),
                etag(pair.now)
            ),
            ObjectApi::Gcs => format!(
                "412 conditionNotMet: ifGenerationMatch: {} but the object is at generation {}",
                pair.read, pair.now
            ),
            ObjectApi::Azure => format!(
                "409 BlobAlreadyExists: If-None-Match: * but the blob exists (ETag {})",
                etag(pair.now)
            ),
        };
        assert_eq!(
            zombie.str("reason"),
            Some(reason.as_str()),
            "{}",
            pair.right
        );
    }
}

#[test]
fn the_first_put_of_a_missing_object_is_create_only() {
    // In the two-round stories client1's first PUT found no object.
    for (file, precondition) in [
        ("s3-if-match.toml", "If-None-Match: *"),
        (
            "gcs-if-generation-match.toml",
            "ifGenerationMatch: 0 (create only)",
        ),
    ] {
        let run = bundled(file);
        let first = answer(&run, "client1/1");
        assert_eq!(first.kind, "accepted", "{file}");
        assert_eq!(first.str("precondition"), Some(precondition), "{file}");
    }
}

#[test]
fn an_unknown_api_is_refused_at_its_key_with_the_choices() {
    let text = r#"name = "t"
[lock]
design = "lease"
[storage]
design = "cas"
api = "minio"
[[clients]]
name = "client1"
"#;
    let err = load_str(&Registry::builtin(), "t.toml", text).unwrap_err();
    assert_eq!(err.location(), "t.toml:6:7");
    assert!(
        err.message.contains("version, s3, gcs, azure"),
        "{}",
        err.message
    );
}
