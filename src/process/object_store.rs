//! A simulated object-store client whose calls read like the AWS SDK's
//! (`get_object`, `put_object` with `if_match`, `if_none_match`), spoken to
//! the scenario's storage node: the `cas` storage with `api = "s3"`, `"gcs"`
//! or `"azure"` (see [`crate::design::object_store`]) applies its
//! preconditions.
//!
//! ```ignore
//! let s3 = Client::connect(&h, "storage", ObjectApi::S3, Duration::from_secs(5));
//! let put = match s3.get_object("x").await {
//!     Ok(object) => s3.put_object("x", object.body() + 1).if_match(object.e_tag()),
//!     Err(Error::NoSuchKey) => s3.put_object("x", 1).if_none_match(),
//!     Err(e) => return Err(e),
//! };
//! match put.fencing_token(lease.token).journal_as_increment().send().await {
//!     Ok(()) => {}
//!     Err(Error::PreconditionFailed) => { /* someone wrote since the GET */ }
//!     Err(e) => return Err(e),
//! }
//! ```
//!
//! What differs from the crate, and why: the body is an `i64` (fencesim's
//! storage holds one integer per key) and the bucket is the storage node;
//! an [`ETag`] stands for the object's version, the count of its writes,
//! shown as the store shows it (an ETag for S3 and Azure, a generation for
//! GCS: the model's ETags change with every write, as Azure's do); the only
//! metadata a PUT carries is the fencing token
//! ([`PutObject::fencing_token`], `x-amz-meta-fencing-token`), which these
//! stores keep and never compare; and a PUT's answer says only whether it
//! was applied, so `send` gives no new ETag (GET again for it) and cannot
//! tell a precondition that failed from any other refusal. Two calls have
//! no counterpart in the SDK: [`PutObject::journal_as_increment`] tells the
//! journal the body was computed from a GET (the oracle counts increments
//! for lost updates), and [`Client::connect`] names the API whose words the
//! ETags are shown in (the journal's words are the storage's own).
//!
//! It journals as [`SimStorage`] does, through it: `read` when a GET is
//! answered (a missing object reads as value 0, version 0), `wrote` before
//! a PUT is sent, `acked` with whether it was applied when it is answered.
//! Each request waits for the answer to its own id: a late or duplicated
//! answer to another request is never taken for it.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::rc::Rc;
use std::time::Duration;

use fencesim_env::{ObjectStoreError, PutCondition, StoredObject};
use sim::process::Handle;

use crate::design::object_store::ObjectApi;
use crate::process::SimStorage;
use crate::protocol::{Msg, Op};

/// What a call can fail with, named after the S3 error codes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// `NoSuchKey`: a GET of a key that has no object.
    NoSuchKey,
    /// `412 PreconditionFailed`: a PUT with `If-Match` on an ETag the object
    /// no longer has, or with `If-None-Match: *` on a key that has one (GCS
    /// says `conditionNotMet`, Azure `ConditionNotMet` or
    /// `BlobAlreadyExists`).
    PreconditionFailed,
    /// A PUT without a precondition refused: S3, GCS and Azure never refuse
    /// one, but a storage that compares the token does (a `fenced` storage
    /// standing in for the store).
    Rejected,
    /// No answer within the client's timeout.
    Timeout,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Error::NoSuchKey => "NoSuchKey: The specified key does not exist.",
            Error::PreconditionFailed => {
                "412 PreconditionFailed: At least one of the pre-conditions you specified did not hold"
            }
            Error::Rejected => "the store refused the PUT",
            Error::Timeout => "the request timed out",
        })
    }
}

impl std::error::Error for Error {}

/// An object's version as a GET saw it: an ETag (S3, Azure) or a
/// generation (GCS), changed by every write and never given again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ETag {
    key: String,
    version: u64,
    api: ObjectApi,
}

impl ETag {
    /// The object's write count this ETag stands for.
    pub fn version(&self) -> u64 {
        self.version
    }
}

impl fmt::Display for ETag {
    /// As the store shows it: `"9dcad46f"` for S3, a generation for GCS.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.api.show_version(&self.key, self.version))
    }
}

/// A GET's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GetObjectOutput {
    body: i64,
    e_tag: ETag,
}

impl GetObjectOutput {
    /// The object's content.
    pub fn body(&self) -> i64 {
        self.body
    }

    /// The object's ETag when it was read.
    pub fn e_tag(&self) -> &ETag {
        &self.e_tag
    }
}

/// A client of an object store on the storage node.
#[derive(Clone)]
pub struct Client {
    storage: Rc<SimStorage>,
    api: ObjectApi,
    /// The ETags the seam's `get_object` handed out, as shown, per key:
    /// the versions `PutCondition::IfMatch` names.
    shown: Rc<RefCell<BTreeMap<(String, String), u64>>>,
}

impl Client {
    /// A client of the storage node called `storage`, showing ETags as
    /// `api` does and waiting at most `timeout` for each answer.
    ///
    /// # Panics
    /// If there is no node of that name.
    pub fn connect(
        handle: &Handle<Msg>,
        storage: &str,
        api: ObjectApi,
        timeout: Duration,
    ) -> Client {
        Client {
            storage: Rc::new(SimStorage::new(handle, storage, timeout)),
            api,
            shown: Rc::default(),
        }
    }

    /// `GetObject`: the object under `key` and its ETag, or
    /// [`Error::NoSuchKey`] if it has none.
    pub async fn get_object(&self, key: &str) -> Result<GetObjectOutput, Error> {
        // The storage client gives a request up only when it is unanswered.
        let (body, version) = self.storage.read(key).await.map_err(|_| Error::Timeout)?;
        if version == 0 {
            return Err(Error::NoSuchKey);
        }
        Ok(GetObjectOutput {
            body,
            e_tag: ETag {
                key: key.to_owned(),
                version,
                api: self.api,
            },
        })
    }

    /// `PutObject` of `body` under `key`: unconditional until a
    /// precondition is added; nothing is sent before
    /// [`PutObject::send`].
    pub fn put_object(&self, key: &str, body: i64) -> PutObject {
        PutObject {
            client: self.clone(),
            key: key.to_owned(),
            body,
            precondition: None,
            token: None,
            op: Op::Put,
        }
    }
}

/// A `PutObject` request being built.
#[must_use = "a PUT is sent by `send`"]
pub struct PutObject {
    client: Client,
    key: String,
    body: i64,
    /// The version the object must be at: 0 for no object.
    precondition: Option<u64>,
    token: Option<u64>,
    op: Op,
}

impl PutObject {
    /// `If-Match: <ETag>` (GCS: `ifGenerationMatch`): applied only if the
    /// object still has this ETag.
    pub fn if_match(mut self, e_tag: &ETag) -> Self {
        self.precondition = Some(e_tag.version);
        self
    }

    /// `If-None-Match: *` (GCS: `ifGenerationMatch: 0`): applied only if
    /// there is no object under the key.
    pub fn if_none_match(mut self) -> Self {
        self.precondition = Some(0);
        self
    }

    /// The lock's fencing token as object metadata
    /// (`x-amz-meta-fencing-token`): stored with the object, compared by
    /// none of these stores.
    pub fn fencing_token(mut self, token: Option<u64>) -> Self {
        self.token = token;
        self
    }

    /// Journals the PUT as an increment: its body is what a GET of the key
    /// read, plus one, so the oracle counts it when it looks for lost
    /// updates. Only the journal sees it; the request is the same.
    pub fn journal_as_increment(mut self) -> Self {
        self.op = Op::Increment;
        self
    }

    /// Sends the PUT and waits for its answer: `Ok` if the store applied
    /// it, [`Error::PreconditionFailed`] if it refused a PUT with a
    /// precondition, [`Error::Rejected`] if it refused one without.
    pub async fn send(self) -> Result<(), Error> {
        let applied = self
            .client
            .storage
            .write(&self.key, self.body, self.token, self.op, self.precondition)
            .await
            .map_err(|_| Error::Timeout)?;
        match (applied, self.precondition) {
            (true, _) => Ok(()),
            (false, Some(_)) => Err(Error::PreconditionFailed),
            (false, None) => Err(Error::Rejected),
        }
    }
}

/// The seam's [`fencesim_env::ObjectStore`]: the same GET and conditional
/// PUT, so a function generic over it runs here and on a real store
/// (`fencesim_env::object_store::ObjectStoreClient`). The ETag is shown as
/// the client's API shows it; `PutCondition::IfMatch` names one this client
/// read, and an ETag it never read from this store fails the precondition
/// without a request.
impl fencesim_env::ObjectStore for Client {
    async fn get_object(&self, key: &str) -> Result<StoredObject, ObjectStoreError> {
        let got = Client::get_object(self, key).await.map_err(seam_error)?;
        let e_tag = got.e_tag.to_string();
        self.shown
            .borrow_mut()
            .insert((key.to_owned(), e_tag.clone()), got.e_tag.version);
        Ok(StoredObject {
            body: got.body,
            e_tag,
        })
    }

    async fn put_object(
        &self,
        key: &str,
        body: i64,
        condition: &PutCondition,
        token: Option<u64>,
    ) -> Result<(), ObjectStoreError> {
        let put = Client::put_object(self, key, body).fencing_token(token);
        let put = match condition {
            PutCondition::Always => put,
            PutCondition::IfNoneMatch => put.if_none_match(),
            PutCondition::IfMatch(shown) => {
                let version = self
                    .shown
                    .borrow()
                    .get(&(key.to_owned(), shown.clone()))
                    .copied();
                match version {
                    Some(version) => put.if_match(&ETag {
                        key: key.to_owned(),
                        version,
                        api: self.api,
                    }),
                    None => return Err(ObjectStoreError::PreconditionFailed),
                }
            }
        };
        put.send().await.map_err(seam_error)
    }
}

fn seam_error(e: Error) -> ObjectStoreError {
    match e {
        Error::NoSuchKey => ObjectStoreError::NotFound,
        Error::PreconditionFailed => ObjectStoreError::PreconditionFailed,
        Error::Timeout => ObjectStoreError::Timeout,
        Error::Rejected => ObjectStoreError::Other(Error::Rejected.to_string()),
    }
}
