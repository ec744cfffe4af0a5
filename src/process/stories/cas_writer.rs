//! A read-modify-write of an object under a lock, as async code over the
//! simulated object-store client: GET the object and its ETag, work, PUT
//! the new body. The lock is meant to keep the GET and the PUT together;
//! only a conditional PUT (`If-Match` on the ETag the GET saw) does.

use fencesim_env::{Lease, LockService};

use crate::design::client::ClientConfig;
use crate::design::object_store::ObjectApi;
use crate::process::object_store::{Client, Error};
use crate::process::{Handle, Process, SimLock};
use crate::protocol::{Msg, Op};

/// Rounds completed, on the node's disk.
const ROUNDS: &str = "cas-writer/rounds";

/// The process `cas-writer`: `rounds` times, acquire the lock (a denial is
/// retried after `retry`), GET the object `x` and its ETag, work for
/// `work`, PUT the body plus one carrying the lease's token as metadata,
/// release. Every request is given up after `timeout`.
///
/// With `precondition = "read"` (the default) the PUT is conditional on
/// what the GET saw: `If-Match` on its ETag, or `If-None-Match: *` if there
/// was no object. A 412 says someone wrote since the GET, so the lock it
/// holds no longer keeps others out: the round ends, nothing retried. With
/// `precondition = "none"` the PUT is plain: a holder paused past its lease
/// overwrites the next holder's update with a body computed from an older
/// one. It speaks S3's API; a `gcs` or `azure` storage answers the same
/// requests in its own words.
pub(crate) fn process(config: ClientConfig, server: String) -> Process<Msg> {
    super::story(config, server, |h, config, server| async move {
        rounds(&h, &config, &server).await
    })
}

/// What the process does not take.
pub(crate) fn refuses(config: &ClientConfig) -> Option<String> {
    crate::process::unsupported(&[
        (
            config.op != Op::Increment,
            "workload = \"write\" (it reads, adds one and writes back: set workload = \"increment\")",
        ),
        (config.check_lease, "check_lease"),
        (config.renew, "renew"),
        (config.fence_on_acquire, "fence_on_acquire"),
    ])
    .map(|set| format!("process `cas-writer` does not do {set}"))
}

async fn rounds(h: &Handle<Msg>, config: &ClientConfig, server: &str) {
    let lock = SimLock::new(h, server, config.timeout);
    let s3 = Client::connect(h, &config.storage, ObjectApi::S3, config.timeout);
    let disk = h.disk();
    let mut round = disk.get_u64(ROUNDS).unwrap_or(0);
    h.sleep(config.start.saturating_sub(h.now())).await;
    while round < config.rounds {
        let lease = match lock.acquire().await {
            Ok(lease) => lease,
            Err(_) => {
                h.sleep(config.retry).await;
                continue;
            }
        };
        // A failed GET or PUT ends the round as a successful one does: the
        // lock is given up.
        let _ = read_modify_write(h, &s3, config, &lease).await;
        let _ = lock.release(&lease).await;
        round += 1;
        disk.put_u64(ROUNDS, round);
        if round < config.rounds {
            h.sleep(config.retry).await;
        }
    }
}

/// GET, work, PUT the body plus one.
async fn read_modify_write(
    h: &Handle<Msg>,
    s3: &Client,
    config: &ClientConfig,
    lease: &Lease,
) -> Result<(), Error> {
    let (body, e_tag) = match s3.get_object(&config.key).await {
        Ok(object) => (object.body(), Some(object.e_tag().clone())),
        Err(Error::NoSuchKey) => (0, None),
        Err(e) => return Err(e),
    };
    h.sleep(config.work).await;
    let put = s3
        .put_object(&config.key, body + 1)
        .fencing_token(lease.token)
        .journal_as_increment();
    let put = match (config.conditional, &e_tag) {
        (false, _) => put,
        (true, Some(e_tag)) => put.if_match(e_tag),
        (true, None) => put.if_none_match(),
    };
    put.send().await
}
