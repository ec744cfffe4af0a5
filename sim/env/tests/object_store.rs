//! The object-store adapter on the `object_store` crate's in-memory store,
//! whose conditional PUTs follow S3's: a PUT `If-None-Match: *` on a key
//! with an object, or `If-Match` an ETag the object no longer has, is
//! `PreconditionFailed`; a GET of a missing key is `NotFound`.

#![cfg(feature = "object-store")]

use std::sync::Arc;
use std::time::Duration;

use fencesim_env::object_store::ObjectStoreClient;
use fencesim_env::{ObjectStore, ObjectStoreError, PutCondition};

fn store() -> ObjectStoreClient {
    ObjectStoreClient::new(
        Arc::new(object_store::memory::InMemory::new()),
        Duration::from_secs(1),
    )
}

#[tokio::test]
async fn a_missing_key_is_not_found_and_if_none_match_creates_it_once() {
    let s = store();
    assert_eq!(s.get_object("x").await, Err(ObjectStoreError::NotFound));
    assert_eq!(
        s.put_object("x", 1, &PutCondition::IfNoneMatch, Some(33))
            .await,
        Ok(())
    );
    assert_eq!(
        s.put_object("x", 2, &PutCondition::IfNoneMatch, Some(34))
            .await,
        Err(ObjectStoreError::PreconditionFailed)
    );
    assert_eq!(s.get_object("x").await.map(|o| o.body), Ok(1));
}

#[tokio::test]
async fn if_match_applies_on_the_etag_read_and_refuses_a_stale_one() {
    let s = store();
    s.put_object("x", 1, &PutCondition::Always, None)
        .await
        .unwrap();
    let read = s.get_object("x").await.unwrap();
    // Someone else writes between the GET and the PUT.
    s.put_object("x", 5, &PutCondition::Always, None)
        .await
        .unwrap();
    let stale = PutCondition::IfMatch(read.e_tag.clone());
    assert_eq!(
        s.put_object("x", read.body + 1, &stale, None).await,
        Err(ObjectStoreError::PreconditionFailed)
    );
    let fresh = s.get_object("x").await.unwrap();
    assert_ne!(fresh.e_tag, read.e_tag);
    let current = PutCondition::IfMatch(fresh.e_tag);
    assert_eq!(
        s.put_object("x", fresh.body + 1, &current, None).await,
        Ok(())
    );
    assert_eq!(s.get_object("x").await.map(|o| o.body), Ok(6));
}
