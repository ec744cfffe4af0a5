//! The ZooKeeper lock recipe (Curator's `InterProcessMutex`) as async code
//! over the simulated ZooKeeper client: the lock lives as long as the
//! session, and a holder paused past the session timeout wakes up without
//! it, and writes before anything tells it so (Kleppmann, "How to do
//! distributed locking", 2016; the HBase GC-pause incidents).

use fencesim_env::{Env, Probe, Storage};

use crate::design::client::ClientConfig;
use crate::process::zookeeper::{Client, SessionState};
use crate::process::{Handle, Process, SimStorage};
use crate::protocol::Msg;

/// Rounds completed, on the node's disk.
const ROUNDS: &str = "zookeeper-recipe/rounds";

/// The lock's znodes are named this and a sequence number.
const LOCK_PATH: &str = "/locks/job/lock-";

/// The process `zookeeper-recipe`: one client (a session kept alive by
/// heartbeats) for all its rounds, connected again when its session ends.
/// Each round takes the lock (an ephemeral sequential znode, waited on
/// until it is the lowest, however long that takes), works for `work`,
/// writes once carrying the znode's zxid, and releases the lock (deletes
/// the znode). Each request waits `timeout` for its answer; a failed
/// connect or lock is tried again after `retry`.
///
/// It trusts the lock for as long as it works: a session that expires
/// meanwhile goes unnoticed, and the write goes out. With `check_lease =
/// true` it looks at the session's state before writing, as Curator's
/// documentation asks (a `LOST` connection means the lock is gone), and
/// gives a lost lock up (`lost`) instead of writing. That narrows the
/// window but cannot close it: the client hears of the expiry only when the
/// server answers, and the session can expire between the look and the
/// write. A storage that checks the zxid does.
pub(crate) fn process(config: ClientConfig, server: String) -> Process<Msg> {
    super::story(config, server, |h, config, server| async move {
        rounds(&h, &config, &server).await
    })
}

/// What the process does not take.
pub(crate) fn refuses(config: &ClientConfig) -> Option<String> {
    super::blind_writer(
        "zookeeper-recipe",
        "its session's heartbeats keep the lock",
        config,
    )
}

async fn rounds(h: &Handle<Msg>, config: &ClientConfig, server: &str) {
    let storage = SimStorage::new(h, &config.storage, config.timeout);
    let disk = h.disk();
    let mut round = disk.get_u64(ROUNDS).unwrap_or(0);
    h.sleep(config.start.saturating_sub(h.now())).await;
    let mut client: Option<Client> = None;
    while round < config.rounds {
        // A client whose session ended is of no more use: a new one.
        let connected = client
            .take()
            .filter(|c| c.state() == SessionState::SyncConnected);
        let zk = match connected {
            Some(zk) => zk,
            None => match Client::connect(h, server, config.timeout).await {
                Ok(zk) => zk,
                Err(_) => {
                    h.sleep(config.retry).await;
                    continue;
                }
            },
        };
        client = Some(zk.clone());
        let lock = match zk.lock(LOCK_PATH).await {
            Ok(lock) => lock,
            Err(_) => {
                h.sleep(config.retry).await;
                continue;
            }
        };
        h.sleep(config.work).await;
        if config.check_lease && zk.state() != SessionState::SyncConnected {
            h.probe(Probe::Lost);
        } else {
            let value = storage.writes_sent() as i64 + 1;
            let _ = storage.put(&config.key, value, lock.czxid()).await;
        }
        let _ = lock.release().await;
        round += 1;
        disk.put_u64(ROUNDS, round);
        if round < config.rounds {
            h.sleep(config.retry).await;
        }
    }
    if let Some(zk) = client {
        zk.close();
    }
}
