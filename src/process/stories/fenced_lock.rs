//! Hazelcast's CP `FencedLock` as async code over the simulated Hazelcast
//! client: the lock lives as long as the CP session, and its owner hears
//! that the session is gone only on its next lock call. An owner paused
//! past the session TTL wakes up and writes before making one (Hazelcast's
//! documentation of `FencedLock`: pass the fence to the external service).

use fencesim_env::{Env, Probe, Storage};

use crate::design::client::ClientConfig;
use crate::process::hazelcast::{Client, ClientOptions};
use crate::process::{Handle, Process, SimStorage};
use crate::protocol::Msg;

/// Rounds completed, on the node's disk.
const ROUNDS: &str = "fenced-lock/rounds";

/// The process `hazelcast-fenced-lock`: one client, whose CP session is
/// opened by its first lock call and kept alive by heartbeats. Each round
/// takes the lock with `lock_and_get_fence` (trying again every `retry`
/// while another holds it), works for `work`, writes once carrying the
/// fence, and unlocks; an unlock that finds the lock lost fails with
/// `LockOwnershipLostException`, too late. Each invocation waits `timeout`
/// for its answer.
///
/// It trusts the lock until it unlocks. With `check_lease = true` it asks
/// `is_locked_by_current_thread` before writing (a lock call, so the news
/// of a lost session reaches it there) and gives a lost lock up (`lost`)
/// instead of writing. That narrows the window but cannot close it: the
/// session can expire between the answer and the write. A storage that
/// checks the fence does.
pub(crate) fn process(config: ClientConfig, server: String) -> Process<Msg> {
    super::story(config, server, |h, config, server| async move {
        rounds(&h, &config, &server).await
    })
}

/// What the process does not take.
pub(crate) fn refuses(config: &ClientConfig) -> Option<String> {
    super::blind_writer(
        "hazelcast-fenced-lock",
        "its CP session's heartbeats keep the lock",
        config,
    )
}

async fn rounds(h: &Handle<Msg>, config: &ClientConfig, server: &str) {
    let options = ClientOptions::new()
        .with_invocation_timeout(config.timeout)
        .with_lock_retry(config.retry);
    let client = Client::new(h, server, options);
    let lock = client.get_lock("job");
    let storage = SimStorage::new(h, &config.storage, config.timeout);
    let disk = h.disk();
    let mut round = disk.get_u64(ROUNDS).unwrap_or(0);
    h.sleep(config.start.saturating_sub(h.now())).await;
    while round < config.rounds {
        let fence = match lock.lock_and_get_fence().await {
            Ok(fence) => fence,
            Err(_) => {
                h.sleep(config.retry).await;
                continue;
            }
        };
        h.sleep(config.work).await;
        let owner = !config.check_lease || lock.is_locked_by_current_thread().await == Ok(true);
        if owner {
            let value = storage.writes_sent() as i64 + 1;
            let _ = storage.put(&config.key, value, Some(fence)).await;
        } else {
            h.probe(Probe::Lost);
        }
        let _ = lock.unlock().await;
        round += 1;
        disk.put_u64(ROUNDS, round);
        if round < config.rounds {
            h.sleep(config.retry).await;
        }
    }
    client.shutdown();
}
