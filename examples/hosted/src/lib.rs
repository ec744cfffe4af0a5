//! Hosted processes, each doing one everyday thing that production Rust
//! code does, as a user's lock client would: iterate a `HashMap`, draw from
//! `rand::thread_rng()`, read `SystemTime` or `Instant`, await something
//! the simulation does not drive, spawn a thread, call `tokio::time`, spin
//! or allocate without end, panic.
//!
//! Each is a process (`process = "NAME"` in a scenario's `[[clients]]`
//! table) that takes the bundled lock through [`SimLock`], does its one
//! thing, and writes with its token through [`SimStorage`]. The tests in
//! `tests/` hold fencesim to what docs/async.md promises about each.

use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime};

use fencesim::design::catalog::Registry;
use fencesim::design::client::ClientConfig;
use fencesim::process::{Env, Handle, LockService, Probe, Process, SimLock, SimStorage, Storage};
use fencesim::protocol::Msg;
use rand::Rng;

/// Every process of this crate, by the name scenarios give it.
pub const PROCESSES: &[(&str, &str)] = &[
    (
        "map-order",
        "works for as long as the first entry of a HashMap says",
    ),
    (
        "thread-rng",
        "works for a time drawn from rand::thread_rng()",
    ),
    (
        "lease-systemtime",
        "checks its lease on SystemTime::now() before writing",
    ),
    (
        "lease-instant",
        "checks its lease on Instant::now() before writing",
    ),
    (
        "lease-wall",
        "checks its lease on the handle's wall clock before writing",
    ),
    (
        "lease-mono",
        "checks its lease on the handle's monotonic clock before writing",
    ),
    (
        "pending",
        "parks on std::future::pending() while holding the lock",
    ),
    (
        "madsim-timer",
        "sleeps on madsim's own timer while holding the lock",
    ),
    ("tokio-time", "sleeps on tokio::time while holding the lock"),
    ("thread-spawn", "spawns an OS thread while holding the lock"),
    ("returns", "returns at once: never takes the lock"),
    ("panics", "panics while holding the lock"),
    ("busy", "spins for ever while holding the lock"),
    ("hungry", "allocates without end while holding the lock"),
];

/// A registry with the bundled designs and every process of this crate.
pub fn registry() -> Registry {
    let mut registry = Registry::builtin();
    for (name, summary) in PROCESSES {
        let name: &'static str = name;
        registry.add_process(name, summary, move |config, locks| {
            process(name, config.clone(), locks[0].clone())
        });
        registry.process_speaks_to(name, SimLock::DESIGNS);
    }
    registry
}

/// The process called `name` for a client configured as `config`, taking
/// the lock of node `lock`.
fn process(name: &'static str, config: ClientConfig, lock: String) -> Process<Msg> {
    Process::new(move |h| {
        let (config, lock) = (config.clone(), lock.clone());
        async move {
            h.sleep(config.start).await;
            if name == "returns" {
                return;
            }
            let locks = SimLock::new(&h, &lock, config.timeout);
            let storage = SimStorage::new(&h, &config.storage, config.timeout);
            let lease = loop {
                match locks.acquire().await {
                    Ok(lease) => break lease,
                    Err(_) => h.sleep(config.retry).await,
                }
            };
            let acquired = Clocks::read(&h);
            let write = work(name, &h, &config, &lease, acquired).await;
            if write {
                let _ = storage.put(&config.key, 1, lease.token).await;
            }
            let _ = locks.release(&lease).await;
        }
    })
}

/// The four clocks a lease check may read, at one instant.
#[derive(Clone, Copy)]
struct Clocks {
    system: SystemTime,
    instant: Instant,
    wall_ns: i64,
    mono: Duration,
}

impl Clocks {
    fn read(h: &Handle<Msg>) -> Clocks {
        Clocks {
            system: SystemTime::now(),
            instant: Instant::now(),
            wall_ns: h.wall_ns(),
            mono: h.now(),
        }
    }

    /// How long since `earlier` on the clock `name` checks.
    fn since(&self, earlier: &Clocks, name: &str) -> Duration {
        let ns = |d: i64| Duration::from_nanos(d.max(0) as u64);
        match name {
            "lease-systemtime" => self
                .system
                .duration_since(earlier.system)
                .unwrap_or_default(),
            "lease-instant" => self.instant.saturating_duration_since(earlier.instant),
            "lease-wall" => ns(self.wall_ns - earlier.wall_ns),
            _ => self.mono.saturating_sub(earlier.mono),
        }
    }
}

/// The one thing `name` does while it holds `lease`; whether it writes
/// after.
async fn work(
    name: &str,
    h: &Handle<Msg>,
    config: &ClientConfig,
    lease: &fencesim::process::Lease,
    acquired: Clocks,
) -> bool {
    match name {
        "map-order" => {
            // The order of a HashMap's entries is its hasher's: the seed's,
            // under fencesim, on the thread the seed runs on.
            let mut works = HashMap::new();
            for (key, ms) in [("a", 200), ("b", 2500), ("c", 300), ("d", 2600)] {
                works.insert(key, Duration::from_millis(ms));
            }
            let first = works.values().next().copied().unwrap_or_default();
            h.sleep(first).await;
        }
        "thread-rng" => {
            let ms = rand::thread_rng().gen_range(100..3000);
            h.sleep(Duration::from_millis(ms)).await;
        }
        "lease-systemtime" | "lease-instant" | "lease-wall" | "lease-mono" => {
            h.sleep(config.work).await;
            let held = Clocks::read(h).since(&acquired, name);
            if held >= lease.ttl {
                h.probe(Probe::Lapsed {
                    lease: lease.id,
                    overdue: held - lease.ttl,
                });
                return false;
            }
            h.probe(Probe::Checked {
                lease: lease.id,
                remaining: lease.ttl - held,
            });
        }
        "pending" => std::future::pending::<()>().await,
        "madsim-timer" => madsim::time::sleep(config.work).await,
        "tokio-time" => tokio::time::sleep(config.work).await,
        "thread-spawn" => {
            let _ = std::thread::spawn(|| 1).join();
        }
        "panics" => panic!("the client lost its mind"),
        "busy" => {
            let mut n = 0u64;
            loop {
                n = std::hint::black_box(n.wrapping_add(1));
            }
        }
        "hungry" => {
            let mut held: Vec<Vec<u8>> = Vec::new();
            loop {
                held.push(vec![1; 1 << 20]);
                std::hint::black_box(&held);
            }
        }
        _ => h.sleep(config.work).await,
    }
    true
}
