//! Figure 9-6 written directly on madsim: what a team would write without
//! fencesim. A lock with a 10 s TTL lease and fencing tokens from 33, a
//! fenced storage, two clients, and client1 paused (madsim's node pause)
//! right after acquiring until 15 s; no journal, no oracle, no scenario
//! file. [`story`] is one seed of it, run inside a madsim runtime.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use madsim::net::Endpoint;
use madsim::runtime::Handle;
use madsim::time::{sleep, Instant as SimInstant};

const LOCK: &str = "10.0.0.1:1";
const STORAGE: &str = "10.0.0.2:1";
const TTL: Duration = Duration::from_secs(10);
const ACQUIRE: u64 = 1;
const GRANT: u64 = 2;
const RELEASE: u64 = 3;
const WRITE: u64 = 4;
const ACK: u64 = 5;

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

async fn lock_server() {
    let ep = Endpoint::bind(LOCK).await.unwrap();
    let mut next_token = 33u64;
    let mut holder: Option<(SocketAddr, u64, SimInstant)> = None;
    loop {
        let (payload, from) = ep.recv_from_raw(0).await.unwrap();
        let msg = *payload.downcast::<(u64, u64)>().unwrap();
        let now = SimInstant::now();
        if holder.is_some_and(|(_, _, expires)| expires <= now) {
            holder = None;
        }
        match msg {
            (ACQUIRE, _) => {
                let token = if holder.is_none() {
                    let t = next_token;
                    next_token += 1;
                    holder = Some((from, t, now + TTL));
                    t
                } else {
                    0
                };
                ep.send_to_raw(from, GRANT, Box::new((GRANT, token)))
                    .await
                    .unwrap();
            }
            (RELEASE, token) => {
                if holder.is_some_and(|(_, t, _)| t == token) {
                    holder = None;
                }
            }
            _ => unreachable!(),
        }
    }
}

async fn storage_server() {
    let ep = Endpoint::bind(STORAGE).await.unwrap();
    let mut max_token = 0u64;
    loop {
        let (payload, from) = ep.recv_from_raw(WRITE).await.unwrap();
        let token = *payload.downcast::<u64>().unwrap();
        let ok = token >= max_token;
        if ok {
            max_token = token;
        }
        ep.send_to_raw(from, ACK, Box::new(ok)).await.unwrap();
    }
}

/// Acquire (retrying every 500 ms), work, write, release; returns whether
/// the storage accepted the write.
async fn client(ip: &str, pause_after_acquire: bool) -> bool {
    let ep = Endpoint::bind(format!("{ip}:1")).await.unwrap();
    let token = loop {
        ep.send_to_raw(addr(LOCK), 0, Box::new((ACQUIRE, 0u64)))
            .await
            .unwrap();
        let (payload, _) = ep.recv_from_raw(GRANT).await.unwrap();
        let (_, token) = *payload.downcast::<(u64, u64)>().unwrap();
        if token != 0 {
            break token;
        }
        sleep(Duration::from_millis(500)).await;
    };
    if pause_after_acquire {
        // The stop-the-world pause: madsim's own node pause, until the
        // supervisor resumes the node at 15 s.
        Handle::current().pause(madsim::plugin::node());
    }
    sleep(Duration::from_secs(1)).await;
    ep.send_to_raw(addr(STORAGE), WRITE, Box::new(token))
        .await
        .unwrap();
    let (payload, _) = ep.recv_from_raw(ACK).await.unwrap();
    let ok = *payload.downcast::<bool>().unwrap();
    ep.send_to_raw(addr(LOCK), 0, Box::new((RELEASE, token)))
        .await
        .unwrap();
    ok
}

/// One seed of the bare story, inside a madsim runtime: builds the nodes,
/// runs the clients, and checks that token 33 was fenced off. Adds the
/// simulated time it took to [`SIM_NS`].
pub async fn story() {
    let h = Handle::current();
    let node = |name: &str, ip: &str| h.create_node().name(name).ip(ip.parse().unwrap()).build();
    let lock = node("lock", "10.0.0.1");
    let storage = node("storage", "10.0.0.2");
    let c1 = node("client1", "10.0.0.3");
    let c2 = node("client2", "10.0.0.4");
    let start = SimInstant::now();
    lock.spawn(lock_server());
    storage.spawn(storage_server());
    sleep(Duration::from_millis(1)).await;
    let c1_id = c1.id();
    let first = c1.spawn(client("10.0.0.3", true));
    let second = c2.spawn(async {
        sleep(Duration::from_secs(12)).await;
        client("10.0.0.4", false).await
    });
    sleep(Duration::from_secs(15)).await;
    Handle::current().resume(c1_id);
    let (first, second) = (first.await.unwrap(), second.await.unwrap());
    assert!(!first && second, "token 33 must be fenced off");
    let took = SimInstant::now() - start;
    SIM_NS.fetch_add(took.as_nanos() as u64, Ordering::Relaxed);
}

/// Simulated nanoseconds of every [`story`] run so far.
pub static SIM_NS: AtomicU64 = AtomicU64::new(0);
