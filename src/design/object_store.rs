//! Object stores as users meet them: the `cas` storage with `api = "s3"`,
//! `"gcs"` or `"azure"`. Each applies a conditional PUT the way that store's
//! API does, and journals it in that API's words (GCS's `ifGenerationMatch=N`
//! parameter in the headers' style, `ifGenerationMatch: N`):
//!
//! | api | create only | overwrite only if unchanged | refused with |
//! |---|---|---|---|
//! | `s3` | `If-None-Match: *` | `If-Match: "<ETag>"` | 412 PreconditionFailed |
//! | `gcs` | `ifGenerationMatch: 0` | `ifGenerationMatch: <generation>` | 412 conditionNotMet |
//! | `azure` | `If-None-Match: *` | `If-Match: "<ETag>"` | 409 BlobAlreadyExists, 412 ConditionNotMet |
//!
//! A writer names the version it read ([`crate::protocol::Msg::Write`]'s
//! `expect_version`, which the client sends with `precondition = "read"`):
//! version 0 means it found no object, so its PUT is create-only; version
//! `n` is the object's ETag (S3, Azure) or generation (GCS) after its `n`-th
//! write. ETags and generations change with every write and never come
//! back, so a PUT
//! conditional on what the writer read is applied only if nobody wrote the
//! object since: it protects a read-modify-write, and the storage journals
//! the precondition it checked.
//!
//! A plain PUT (`precondition = "none"`) names no version. The lock's token
//! still travels with it, as object metadata (`x-amz-meta-fencing-token`,
//! GCS custom metadata, Azure `x-ms-meta-fencingtoken`), and none of these
//! stores compares metadata with anything: the PUT is applied whatever its
//! token, so a zombie's write with an older token lands after a newer one.
//!
//! ```
//! use fencesim::design::object_store::{ObjectApi, ObjectStore};
//! use fencesim::design::storage::{Decision, StoragePolicy, WriteRequest};
//! use fencesim::protocol::Op;
//!
//! let mut s3 = ObjectStore::new(ObjectApi::S3);
//! let put = |token, expect_version, stored_version| WriteRequest {
//!     write: "client1/1",
//!     client: "client1",
//!     token,
//!     key: "x",
//!     value: 1,
//!     op: Op::Increment,
//!     expect_version,
//!     stored_version,
//! };
//! // A plain PUT carrying token 33 in its metadata, over an object a write
//! // with token 34 made: applied, the metadata is not compared.
//! assert_eq!(s3.decide(&put(Some(33), None, 1)), Decision::Accept);
//! // The same PUT with If-Match on the ETag it read before that write: 412.
//! assert!(matches!(s3.decide(&put(Some(33), Some(0), 1)), Decision::Reject { .. }));
//! ```
//!
//! What is not modelled: S3's ETag is the MD5 of the content (rewriting the
//! same bytes keeps it; here every write gets a new one, as on Azure), GCS's
//! generations are large timestamps (here the write count), metadata-only
//! updates (GCS's metageneration), deletes, and S3's `409
//! ConditionalRequestConflict` for two conditional PUTs in flight at once
//! (the storage here handles one request at a time).

use crate::design::storage::{Decision, StoragePolicy, WriteRequest};

/// Which store's conditional-write API an [`ObjectStore`] speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectApi {
    /// Amazon S3: `If-None-Match: *` and `If-Match` on the ETag.
    S3,
    /// Google Cloud Storage: `ifGenerationMatch` on the generation.
    Gcs,
    /// Azure Blob Storage: `If-None-Match: *` and `If-Match` on the ETag.
    Azure,
}

impl ObjectApi {
    /// The API named by `cas`'s `api` key, if it is an object store's.
    pub fn from_name(name: &str) -> Option<ObjectApi> {
        match name {
            "s3" => Some(ObjectApi::S3),
            "gcs" => Some(ObjectApi::Gcs),
            "azure" => Some(ObjectApi::Azure),
            _ => None,
        }
    }

    /// The object's version as this API shows it: an ETag (S3, Azure) or a
    /// generation number (GCS). Version 0 is no object.
    pub fn show_version(self, key: &str, version: u64) -> String {
        match self {
            ObjectApi::S3 => format!("\"{:08x}\"", etag_bits(key, version)),
            ObjectApi::Azure => format!("\"0x8D{:08X}\"", etag_bits(key, version)),
            ObjectApi::Gcs => version.to_string(),
        }
    }

    /// The precondition a PUT conditional on `version` sends.
    pub fn precondition(self, key: &str, version: u64) -> String {
        match (self, version) {
            (ObjectApi::S3 | ObjectApi::Azure, 0) => "If-None-Match: *".into(),
            (ObjectApi::S3 | ObjectApi::Azure, v) => {
                format!("If-Match: {}", self.show_version(key, v))
            }
            (ObjectApi::Gcs, 0) => "ifGenerationMatch: 0 (create only)".into(),
            (ObjectApi::Gcs, v) => format!("ifGenerationMatch: {v}"),
        }
    }

    /// Why a PUT conditional on `expected` fails on an object at `current`
    /// (`expected != current`), as the store answers.
    fn failure(self, key: &str, expected: u64, current: u64) -> String {
        let sent = self.precondition(key, expected);
        let now = self.show_version(key, current);
        match (self, expected, current) {
            (ObjectApi::S3, 0, _) => {
                format!("412 PreconditionFailed: {sent} but the object exists (ETag {now})")
            }
            (ObjectApi::Azure, 0, _) => {
                format!("409 BlobAlreadyExists: {sent} but the blob exists (ETag {now})")
            }
            (ObjectApi::S3 | ObjectApi::Azure, _, 0) => {
                format!("{sent} but there is no object under the key")
            }
            (ObjectApi::S3, _, _) => {
                format!("412 PreconditionFailed: {sent} but the ETag is {now}")
            }
            (ObjectApi::Azure, _, _) => {
                format!("412 ConditionNotMet: {sent} but the ETag is {now}")
            }
            (ObjectApi::Gcs, _, 0) => format!("412 conditionNotMet: {sent} but there is no object"),
            (ObjectApi::Gcs, _, _) => {
                format!("412 conditionNotMet: {sent} but the object is at generation {now}")
            }
        }
    }
}

/// 32 bits that stand for the ETag of `key` after its `version`-th write:
/// FNV-1a, so they are the same on every machine and run.
fn etag_bits(key: &str, version: u64) -> u32 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in key.bytes().chain(version.to_le_bytes()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    (hash >> 32) as u32 ^ hash as u32
}

/// An object store's conditional PUT (see the [module](self)): a PUT that
/// names the version it read is applied only if the object is still at it
/// ([`Decision::Matched`], journaled with the precondition in the API's
/// words) and refused otherwise; a PUT that names none is applied whatever
/// token its metadata carries. ETags and generations live with the data,
/// which is durable: a crash forgets nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectStore {
    api: ObjectApi,
}

impl ObjectStore {
    /// A store speaking `api`.
    pub fn new(api: ObjectApi) -> Self {
        ObjectStore { api }
    }

    /// The API it speaks.
    pub fn api(&self) -> ObjectApi {
        self.api
    }
}

impl StoragePolicy for ObjectStore {
    fn decide(&mut self, write: &WriteRequest<'_>) -> Decision {
        // The token rides along as metadata: stored, never compared.
        let Some(expected) = write.expect_version else {
            return Decision::Accept;
        };
        if expected == write.stored_version {
            Decision::Matched {
                precondition: self.api.precondition(write.key, expected),
            }
        } else {
            Decision::Reject {
                reason: self.api.failure(write.key, expected, write.stored_version),
                max_token: None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::design::storage::StorageNode;
    use crate::protocol::{Msg, Op};
    use sim::testing::{Harness, Step};
    use sim::Actor;

    const APIS: [ObjectApi; 3] = [ObjectApi::S3, ObjectApi::Gcs, ObjectApi::Azure];

    /// An increment of `x` by the harness's node `from`, carrying `token` as
    /// metadata, conditional on `version` if given.
    fn put(write: &str, token: Option<u64>, version: Option<u64>) -> Msg {
        Msg::Write {
            write: write.into(),
            token,
            key: "x".into(),
            value: 1,
            op: Op::Increment,
            expect_version: version,
        }
    }

    fn field(step: &Step<Msg>, name: &str) -> Option<String> {
        step.events[0]
            .1
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.to_string())
    }

    fn node(api: ObjectApi) -> StorageNode<ObjectStore> {
        StorageNode::new(ObjectStore::new(api))
    }

    #[test]
    fn a_plain_put_is_applied_whatever_token_its_metadata_carries() {
        for api in APIS {
            let mut h = Harness::new(&["storage", "client1", "client2"], 0);
            let mut s = node(api);
            let step = h.message(&mut s, 2, put("client2/1", Some(34), None));
            assert_eq!(step.events[0].0, "accepted", "{api:?}");
            // An older token, after a newer one: the store compares nothing.
            let step = h.message(&mut s, 1, put("client1/1", Some(33), None));
            assert_eq!(step.events[0].0, "accepted", "{api:?}");
            assert_eq!(field(&step, "precondition"), None, "{api:?}");
            assert_eq!(field(&step, "token").as_deref(), Some("33"), "{api:?}");
            assert!(matches!(
                step.sends[0],
                (1, Msg::WriteReply { ok: true, .. })
            ));
        }
    }

    #[test]
    fn create_only_applies_the_first_put_and_refuses_the_second() {
        let expected = [
            (
                ObjectApi::S3,
                "If-None-Match: *",
                "412 PreconditionFailed: If-None-Match: * but the object exists",
            ),
            (
                ObjectApi::Gcs,
                "ifGenerationMatch: 0 (create only)",
                "412 conditionNotMet: ifGenerationMatch: 0 (create only) but the object is at generation 1",
            ),
            (
                ObjectApi::Azure,
                "If-None-Match: *",
                "409 BlobAlreadyExists: If-None-Match: * but the blob exists",
            ),
        ];
        for (api, precondition, reason) in expected {
            let mut h = Harness::new(&["storage", "client1", "client2"], 0);
            let mut s = node(api);
            // Both found no object; the first create wins.
            let step = h.message(&mut s, 2, put("client2/1", None, Some(0)));
            assert_eq!(field(&step, "precondition").as_deref(), Some(precondition));
            let step = h.message(&mut s, 1, put("client1/1", None, Some(0)));
            assert_eq!(step.events[0].0, "rejected", "{api:?}");
            let got = field(&step, "reason").unwrap();
            assert!(got.starts_with(reason), "{api:?}: {got}");
            assert_eq!(field(&step, "max_token"), None, "{api:?}");
            assert!(matches!(
                step.sends[0],
                (1, Msg::WriteReply { ok: false, .. })
            ));
        }
    }

    #[test]
    fn if_match_holds_only_until_the_next_write_changes_the_etag() {
        for api in [ObjectApi::S3, ObjectApi::Azure] {
            let mut h = Harness::new(&["storage", "client1", "client2"], 0);
            let mut s = node(api);
            h.message(&mut s, 1, put("client1/1", None, Some(0)));
            let first = api.show_version("x", 1);
            // Both read the object at its first ETag; client2 writes first.
            let step = h.message(&mut s, 2, put("client2/1", None, Some(1)));
            assert_eq!(
                field(&step, "precondition"),
                Some(format!("If-Match: {first}"))
            );
            let second = api.show_version("x", 2);
            assert_ne!(first, second, "{api:?}: every write changes the ETag");
            let step = h.message(&mut s, 1, put("client1/2", Some(99), Some(1)));
            assert_eq!(step.events[0].0, "rejected");
            let reason = field(&step, "reason").unwrap();
            assert!(
                reason.ends_with(&format!("If-Match: {first} but the ETag is {second}")),
                "{api:?}: {reason}"
            );
        }
    }

    #[test]
    fn gcs_generations_only_increase_and_guard_the_overwrite() {
        let mut h = Harness::new(&["storage", "client1"], 0);
        let mut s = node(ObjectApi::Gcs);
        for generation in 0..3 {
            let step = h.message(&mut s, 1, put("w", None, Some(generation)));
            assert_eq!(
                field(&step, "precondition"),
                Some(ObjectApi::Gcs.precondition("x", generation))
            );
        }
        // An older generation never matches again.
        let step = h.message(&mut s, 1, put("late", None, Some(1)));
        assert_eq!(
            field(&step, "reason").as_deref(),
            Some("412 conditionNotMet: ifGenerationMatch: 1 but the object is at generation 3")
        );
        let read = h.message(
            &mut s,
            1,
            Msg::Read {
                req: 1,
                key: "x".into(),
            },
        );
        assert!(matches!(
            read.sends[0],
            (1, Msg::ReadReply { version: 3, .. })
        ));
    }

    #[test]
    fn the_precondition_is_checked_against_the_object_not_the_token() {
        // A conditional PUT on the current version is applied even with a
        // token lower than one the object's metadata holds: only the
        // version counts, and a crash forgets none of it.
        let mut h = Harness::new(&["storage", "client1", "client2"], 0);
        let mut s = node(ObjectApi::S3);
        h.message(&mut s, 2, put("client2/1", Some(34), Some(0)));
        s.on_crash();
        let step = h.message(&mut s, 1, put("client1/1", Some(33), Some(1)));
        assert_eq!(step.events[0].0, "accepted");
        assert!(field(&step, "precondition").is_some());
    }

    #[test]
    fn etags_differ_by_key_and_version_and_look_like_their_store_s() {
        // Fixed values: a trace must be the same on every machine and run.
        let s3 = ObjectApi::S3.show_version("x", 1);
        assert_eq!(s3, "\"9dcad46f\"");
        assert_eq!(ObjectApi::S3.show_version("x", 2), "\"77c6c905\"");
        assert_ne!(s3, ObjectApi::S3.show_version("y", 1));
        assert_eq!(ObjectApi::Azure.show_version("x", 1), "\"0x8D9DCAD46F\"");
        assert_eq!(ObjectApi::Gcs.show_version("x", 7), "7");
        assert_eq!(ObjectApi::from_name("gcs"), Some(ObjectApi::Gcs));
        assert_eq!(ObjectApi::from_name("version"), None);
    }
}
