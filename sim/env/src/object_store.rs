//! Object stores on the `object_store` crate (feature `object-store`):
//! [`ObjectStoreClient`], the [`ObjectStore`] trait on any of its stores
//! (S3, GCS and Azure with the crate's `aws`, `gcp` and `azure` features,
//! which the program enables; its in-memory and local stores without).
//!
//! An object's body is its integer in decimal. `If-Match` is the crate's
//! `PutMode::Update` with the ETag, `If-None-Match: *` its
//! `PutMode::Create`; the token is the metadata `fencing-token`
//! (`x-amz-meta-fencing-token` on S3).
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use std::time::Duration;
//! use fencesim_env::object_store::ObjectStoreClient;
//! use fencesim_env::{ObjectStore, ObjectStoreError, PutCondition};
//!
//! let store = ObjectStoreClient::new(
//!     Arc::new(object_store::memory::InMemory::new()),
//!     Duration::from_secs(1),
//! );
//! let (body, condition) = match store.get_object("x").await {
//!     Ok(object) => (object.body + 1, PutCondition::IfMatch(object.e_tag)),
//!     Err(ObjectStoreError::NotFound) => (1, PutCondition::IfNoneMatch),
//!     Err(e) => return Err(e.into()),
//! };
//! match store.put_object("x", body, &condition, Some(34)).await {
//!     Ok(()) | Err(ObjectStoreError::PreconditionFailed) => {}
//!     Err(e) => return Err(e.into()),
//! }
//! # Ok(()) }
//! ```

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use ::object_store::path::Path;
use ::object_store::{Attribute, Attributes, PutMode, PutOptions, UpdateVersion};

use crate::{ObjectStore, ObjectStoreError, PutCondition, StoredObject};

/// The metadata key the fencing token is stored under.
pub const TOKEN_METADATA: &str = "fencing-token";

fn error(e: ::object_store::Error) -> ObjectStoreError {
    match e {
        ::object_store::Error::NotFound { .. } => ObjectStoreError::NotFound,
        ::object_store::Error::Precondition { .. }
        | ::object_store::Error::AlreadyExists { .. } => ObjectStoreError::PreconditionFailed,
        e => ObjectStoreError::Other(e.to_string()),
    }
}

async fn within<T>(
    timeout: Duration,
    call: impl Future<Output = ::object_store::Result<T>>,
) -> Result<T, ObjectStoreError> {
    match tokio::time::timeout(timeout, call).await {
        Ok(answer) => answer.map_err(error),
        Err(_) => Err(ObjectStoreError::Timeout),
    }
}

/// [`ObjectStore`] on one of the crate's stores; every call waits at most
/// `timeout`.
#[derive(Clone)]
pub struct ObjectStoreClient {
    store: Arc<dyn ::object_store::ObjectStore>,
    timeout: Duration,
}

impl ObjectStoreClient {
    /// The calls on `store`.
    pub fn new(store: Arc<dyn ::object_store::ObjectStore>, timeout: Duration) -> Self {
        ObjectStoreClient { store, timeout }
    }
}

impl ObjectStore for ObjectStoreClient {
    async fn get_object(&self, key: &str) -> Result<StoredObject, ObjectStoreError> {
        let path = Path::from(key);
        let got = within(self.timeout, self.store.get(&path)).await?;
        let e_tag = got
            .meta
            .e_tag
            .clone()
            .ok_or_else(|| ObjectStoreError::Other(format!("the store gave {key} no ETag")))?;
        let bytes = within(self.timeout, got.bytes()).await?;
        let body = std::str::from_utf8(&bytes)
            .ok()
            .and_then(|text| text.trim().parse::<i64>().ok())
            .ok_or_else(|| ObjectStoreError::Other(format!("{key} holds no integer")))?;
        Ok(StoredObject { body, e_tag })
    }

    async fn put_object(
        &self,
        key: &str,
        body: i64,
        condition: &PutCondition,
        token: Option<u64>,
    ) -> Result<(), ObjectStoreError> {
        let mode = match condition {
            PutCondition::Always => PutMode::Overwrite,
            PutCondition::IfMatch(e_tag) => PutMode::Update(UpdateVersion {
                e_tag: Some(e_tag.clone()),
                version: None,
            }),
            PutCondition::IfNoneMatch => PutMode::Create,
        };
        let mut attributes = Attributes::new();
        if let Some(token) = token {
            attributes.insert(
                Attribute::Metadata(TOKEN_METADATA.into()),
                token.to_string().into(),
            );
        }
        let options = PutOptions {
            mode,
            attributes,
            ..PutOptions::default()
        };
        let path = Path::from(key);
        let payload = body.to_string().into_bytes().into();
        within(self.timeout, self.store.put_opts(&path, payload, options)).await?;
        Ok(())
    }
}
