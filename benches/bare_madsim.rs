//! Figure 9-6 written directly on madsim, beside fencesim running the same
//! story: `cargo bench --bench bare_madsim [-- SEEDS]`.
//!
//! The bare version is what a team would write without fencesim: a lock
//! with a 10 s TTL lease and fencing tokens from 33, a fenced storage, two
//! clients, and client1 paused (madsim's node pause) right after acquiring
//! until 15 s; no journal, no oracle, no scenario file. Each seed gets a
//! fresh thread and runtime, as fencesim's do (madsim seeds std's hasher
//! once per thread, so a sweep that wants independent seeds needs that).
//!
//! fencesim's side is `runner::run` on `scenarios/figure-9-6.toml`, what
//! `fencesim explore scenarios/figure-9-6.toml --faults scenario --jobs 1`
//! does per seed: the full journal, the oracle and the expectations.

// Both sides run with the allocator the `fencesim` binary uses.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use fencesim::design::catalog::Registry;
use fencesim::explore::shard::Shard;
use fencesim::explore::sweep::{sweep, FaultMode, SweepOptions};
use fencesim::scenario;
use madsim::net::Endpoint;
use madsim::runtime::{Handle, Runtime};
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

/// One seed of the bare story; returns (client1 accepted, client2 accepted).
fn bare_seed(seed: u64) -> (bool, bool) {
    std::thread::spawn(move || {
        let rt = Runtime::with_seed_and_config(seed, madsim::Config::default());
        let h = rt.handle().clone();
        let lock = h
            .create_node()
            .name("lock")
            .ip("10.0.0.1".parse().unwrap())
            .build();
        let storage = h
            .create_node()
            .name("storage")
            .ip("10.0.0.2".parse().unwrap())
            .build();
        let c1 = h
            .create_node()
            .name("client1")
            .ip("10.0.0.3".parse().unwrap())
            .build();
        let c2 = h
            .create_node()
            .name("client2")
            .ip("10.0.0.4".parse().unwrap())
            .build();
        rt.block_on(async move {
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
            (first.await.unwrap(), second.await.unwrap())
        })
    })
    .join()
    .unwrap()
}

fn main() {
    let seeds: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(2_000);

    let started = Instant::now();
    for seed in 0..seeds {
        let (first, second) = bare_seed(seed);
        assert!(!first && second, "seed {seed}: token 33 must be fenced off");
    }
    let bare = seeds as f64 / started.elapsed().as_secs_f64();

    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/figure-9-6.toml");
    let s = scenario::load_file(&Registry::builtin(), path.as_ref()).expect("figure 9-6 loads");
    let mut rates = Vec::new();
    for jobs in [1, 2] {
        let options = SweepOptions {
            seeds: 0..seeds,
            jobs,
            shard: Shard::WHOLE,
            faults: FaultMode::Scenario,
        };
        let summary = sweep(&s, &options, &|_| {});
        assert_eq!(summary.violations, 0);
        rates.push(summary.seeds_per_sec());
    }
    println!("figure 9-6, {seeds} seeds each, one fresh thread and madsim runtime per seed:");
    println!("  bare madsim (no journal, no oracle), one core: {bare:>8.0} seeds/s");
    println!(
        "  fencesim explore --faults scenario --jobs 1:   {:>8.0} seeds/s ({:.0}% of bare)",
        rates[0],
        100.0 * rates[0] / bare
    );
    println!(
        "  fencesim explore --faults scenario --jobs 2:   {:>8.0} seeds/s ({:.2}x --jobs 1)",
        rates[1],
        rates[1] / rates[0]
    );
}
