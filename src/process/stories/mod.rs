//! The bundled client processes beside `rounds`: lock clients written as
//! async code the way their real counterparts are, each the client of a
//! story in `scenarios/` (a broken and a fixed scenario).

mod cas_writer;
mod etcd_mutex;
mod fenced_lock;
mod leader;
mod watchdog;
mod zookeeper_recipe;

use std::future::Future;

use crate::design::catalog::Registry;
use crate::design::client::ClientConfig;
use crate::process::{Handle, Process};
use crate::protocol::{Msg, Op};

/// Registers them.
pub(crate) fn add(registry: &mut Registry) {
    registry.add_process_refusing(
        "etcd-mutex",
        "etcd's concurrency.Mutex on a session, through a simulated etcd client \
         (lease_grant, lease_keep_alive, lock, unlock); the lock key's revision is the token",
        etcd_mutex::refuses,
        |config, lock_nodes| etcd_mutex::process(config.clone(), lock_nodes[0].clone()),
    );
    registry.add_process_refusing(
        "redisson-watchdog",
        "a Redisson-style lock: SET NX PX through a simulated Redis client, a watchdog task \
         extending the key while the holder works, the INCR token on the write",
        watchdog::refuses,
        |config, lock_nodes| watchdog::process(config.clone(), lock_nodes[0].clone()),
    );
    registry.add_process_with(
        "leader-elector",
        "a client-go-style leader elector on a single-server lease: renews every retry, stops \
         leading past its renew deadline, while its work writes on",
        |config, own: &leader::LeaderConfig, lock_nodes| {
            leader::process(config.clone(), own.clone(), lock_nodes[0].clone())
        },
    );
    registry.process_refuses("leader-elector", leader::refuses);
    registry.add_process_refusing(
        "zookeeper-recipe",
        "the ZooKeeper lock recipe (Curator's InterProcessMutex) through a simulated ZooKeeper \
         client (connect, lock, release) on a session kept by heartbeats; the znode's zxid is \
         the token",
        zookeeper_recipe::refuses,
        |config, lock_nodes| zookeeper_recipe::process(config.clone(), lock_nodes[0].clone()),
    );
    registry.add_process_refusing(
        "hazelcast-fenced-lock",
        "Hazelcast's CP FencedLock through a simulated client (lock_and_get_fence, unlock, \
         is_locked_by_current_thread) on a CP session kept by heartbeats; the fence is the token",
        fenced_lock::refuses,
        |config, lock_nodes| fenced_lock::process(config.clone(), lock_nodes[0].clone()),
    );
    registry.add_process_refusing(
        "cas-writer",
        "a read-modify-write of an object under a lock through a simulated S3 client \
         (get_object, then put_object with If-Match on the ETag read, or a plain PUT with \
         precondition = \"none\")",
        cas_writer::refuses,
        |config, lock_nodes| cas_writer::process(config.clone(), lock_nodes[0].clone()),
    );
    registry.process_speaks_to("etcd-mutex", &["etcd"]);
    registry.process_speaks_to("redisson-watchdog", &["redis"]);
    registry.process_speaks_to("leader-elector", super::SimLock::DESIGNS);
    registry.process_speaks_to("zookeeper-recipe", &["zookeeper"]);
    registry.process_speaks_to("hazelcast-fenced-lock", &["hazelcast"]);
    registry.process_speaks_to("cas-writer", super::SimLock::DESIGNS);
}

/// A story's process: `body` run on the node with the client's settings
/// and the lock node's name (a restart runs it again from the start).
fn story<F, Fut>(config: ClientConfig, server: String, body: F) -> Process<Msg>
where
    F: Fn(Handle<Msg>, ClientConfig, String) -> Fut + 'static,
    Fut: Future<Output = ()> + 'static,
{
    Process::new(move |h| body(h, config.clone(), server.clone()))
}

/// What a story's process refuses of a client's settings: it writes blind
/// puts (no `increment`), sends no token-only write (`fence_on_acquire`),
/// and keeps its lock alive its own way (`renews` says how), not by
/// `renew`.
fn blind_writer(process: &str, renews: &str, config: &ClientConfig) -> Option<String> {
    let renew = format!("renew ({renews})");
    super::unsupported(&[
        (config.op != Op::Put, "workload = \"increment\""),
        (config.renew, renew.as_str()),
        (config.fence_on_acquire, "fence_on_acquire"),
    ])
    .map(|set| format!("process `{process}` does not do {set}"))
}
