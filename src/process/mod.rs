//! Lock clients as ordinary async Rust, hosted on a node of the world.
//!
//! A [`Process`] runs an async function on a node, on the node's own clocks,
//! over the journaled network, under every fault of the scenario (see
//! [`sim::process`]). Its [`Handle`] is a [`fencesim_env::Env`], so a lock
//! client written against that seam runs here unchanged; [`SimLock`] and
//! [`SimStorage`] are the services it talks to, simulated over fencesim's
//! protocol, and they journal what the client comes to believe (the same
//! events fencesim's own clients journal), so the oracle judges a process as
//! it judges the bundled client. [`etcd`], [`redis`], [`object_store`] and
//! [`sql`] are clients whose calls read like the real crates' (each module
//! says what differs, and why), journaling as these do.
//!
//! [`workload`] is the bundled client's round — acquire, work, write with
//! the token, release — written as such a process: DDIA's figure 9-6 as
//! async code.

pub mod etcd;
pub mod hazelcast;
mod lock;
pub mod object_store;
pub mod redis;
mod session;
pub mod sql;
mod storage;
mod stories;
pub mod zookeeper;

pub use fencesim_env::{Env, Lease, LockError, LockService, Probe, Storage, StorageError};
pub use lock::SimLock;
pub use sim::process::{Disk, Handle, Process};
pub use storage::SimStorage;

use crate::design::client::ClientConfig;
use crate::protocol::{Msg, Op};

/// Registers the bundled client processes.
pub(crate) fn add_bundled(registry: &mut crate::design::catalog::Registry) {
    registry.add_process_refusing(
        "rounds",
        "the bundled client's rounds (acquire, work, write, release) as async code",
        refuses,
        |config, lock_nodes| workload(config.clone(), &lock_nodes[0]),
    );
    registry.process_speaks_to("rounds", SimLock::DESIGNS);
    stories::add(registry);
}

/// The settings of `checks` that are on (`(on, the setting's words)`), as
/// one list for a process's refusal; `None` when none is.
pub(crate) fn unsupported(checks: &[(bool, &str)]) -> Option<String> {
    let set: Vec<&str> = checks
        .iter()
        .filter_map(|&(on, what)| on.then_some(what))
        .collect();
    (!set.is_empty()).then(|| set.join(", "))
}

/// What [`workload`] does not do.
fn refuses(config: &ClientConfig) -> Option<String> {
    unsupported(&[
        (config.op != Op::Put, "workload = \"increment\""),
        (config.check_lease, "check_lease"),
        (config.renew, "renew"),
        (config.fence_on_acquire, "fence_on_acquire"),
    ])
    .map(|set| {
        format!(
            "process `rounds` writes blindly and does not do {set}: that is the bundled client's"
        )
    })
}

/// Rounds completed, on the node's disk: a restarted client does not do
/// them again (the bundled client keeps its count across a crash too).
const ROUNDS: &str = "client/rounds";

/// The bundled client's rounds as an async process: after `start` on its
/// own clock, `rounds` times: acquire (a denial is retried after `retry`),
/// work for `work`, write the number of its write with the grant's token,
/// release. Every request is given up after `timeout`. It speaks to the
/// single lock server `lock` and the storage node `storage`.
///
/// It journals what the bundled client journals, step for step, and sets
/// and cancels the same timers in the same order, so a scenario run with it
/// gives the same journal (and trace hash) as with the bundled client.
/// Blind writes only: `check_lease`, `renew`, `fence_on_acquire` and the
/// `increment` workload are the bundled client's.
///
/// # Panics
/// (When the process starts) if the config asks for what it does not do.
pub fn workload(config: ClientConfig, lock: &str) -> Process<Msg> {
    let lock = lock.to_owned();
    Process::new(move |h| {
        let config = config.clone();
        let lock = lock.clone();
        async move { rounds(&h, &config, &lock).await }
    })
}

async fn rounds(h: &Handle<Msg>, config: &ClientConfig, lock: &str) {
    if let Some(refused) = refuses(config) {
        panic!("{refused}");
    }
    let disk = h.disk();
    let lock = SimLock::new(h, lock, config.timeout);
    let storage = SimStorage::new(h, &config.storage, config.timeout);
    let mut round = disk.get_u64(ROUNDS).unwrap_or(0);
    if round >= config.rounds {
        return;
    }
    h.sleep(config.start.saturating_sub(h.now())).await;
    while round < config.rounds {
        let lease = match lock.acquire().await {
            Ok(lease) => lease,
            Err(_) => {
                h.sleep(config.retry).await;
                continue;
            }
        };
        h.sleep(config.work).await;
        let value = storage.writes_sent() as i64 + 1;
        // A refused or unanswered write ends the round as an answered one
        // does: the client gives the lock up.
        let _ = storage.put(&config.key, value, lease.token).await;
        let _ = lock.release(&lease).await;
        round += 1;
        disk.put_u64(ROUNDS, round);
        if round < config.rounds {
            h.sleep(config.retry).await;
        }
    }
}
