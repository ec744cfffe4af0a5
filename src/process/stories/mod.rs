//! The bundled client processes beside `rounds`: lock clients written as
//! async code the way their real counterparts are, each the client of a
//! story in `scenarios/` (a broken and a fixed scenario).

mod cas_writer;
mod etcd_mutex;
mod leader;
mod watchdog;

use crate::design::catalog::Registry;

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
    registry.add_process_refusing(
        "leader-elector",
        "a client-go-style leader elector on a single-server lease: renews every retry, stops \
         leading past its renew deadline, while its work writes on",
        leader::refuses,
        |config, lock_nodes| leader::process(config.clone(), lock_nodes[0].clone()),
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
    registry.process_speaks_to("cas-writer", super::SimLock::DESIGNS);
}
