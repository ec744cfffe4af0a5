//! A Redisson-style lock with a watchdog, as async code over the simulated
//! Redis client: `lock()` sets the key with a short `PX`, and a watchdog
//! task keeps extending it every third of that while the holder works, for
//! as long as the work takes. The holder never looks at the watchdog: the
//! lock is "held until unlock". When the whole process freezes (a GC pause,
//! a VM stall, a CPU-starved container) the watchdog freezes with the work,
//! the key expires, another client takes the lock, and the holder wakes up
//! and writes (Redisson issues #5698 and #2665).

use std::cell::Cell;
use std::rc::Rc;

use fencesim_env::{select, Either, Env, Signal, Storage};

use crate::design::client::ClientConfig;
use crate::process::redis::Client;
use crate::process::{Handle, Process, SimStorage};
use crate::protocol::Msg;

/// Rounds completed, on the node's disk.
const ROUNDS: &str = "watchdog/rounds";

/// The lock's key.
const KEY: &str = "lock";

/// The process `redisson-watchdog`: `rounds` times, `SET NX PX` (a denial
/// or no answer is retried after `retry`), a watchdog task that runs the
/// compare-and-`PEXPIRE` script every third of the key's `PX` until the
/// lock is given up or the script fails, work for `work` (which may last
/// far longer than the `PX`: the watchdog is what keeps the key), one write
/// carrying the `INCR` token, then the compare-and-delete script.
///
/// A failed renewal stops the watchdog, as Redisson's does, and tells the
/// holder nothing: it writes all the same. With `check_lease = true` the
/// holder does look before it writes: a watchdog that has stopped means the
/// lock is gone (`lost`), and it does not write. That narrows the window
/// but cannot close it (the key can expire between the look and the
/// write); a storage that checks the token does.
pub(crate) fn process(config: ClientConfig, server: String) -> Process<Msg> {
    super::story(config, server, |h, config, server| async move {
        rounds(&h, &config, &server).await
    })
}

/// What the process does not take.
pub(crate) fn refuses(config: &ClientConfig) -> Option<String> {
    super::blind_writer("redisson-watchdog", "its watchdog renews", config)
}

/// Starts the watchdog of the key holding `value`: it stops when `unlocked`
/// is raised or a renewal fails, and says which in the returned flag (true:
/// it still runs).
fn watchdog(
    h: &Handle<Msg>,
    redis: &Client,
    value: u64,
    every: std::time::Duration,
    unlocked: &Signal,
) -> Rc<Cell<bool>> {
    let running = Rc::new(Cell::new(true));
    let (env, redis, unlocked, flag) =
        (h.clone(), redis.clone(), unlocked.clone(), running.clone());
    h.spawn(async move {
        loop {
            if let Either::Right(()) = select(env.sleep(every), unlocked.raised()).await {
                return;
            }
            match redis.pexpire_if_eq(KEY, value).await {
                Ok(true) => {}
                // The key is no longer ours (or Redis did not answer):
                // Redisson logs it and stops renewing.
                _ => {
                    flag.set(false);
                    return;
                }
            }
        }
    });
    running
}

async fn rounds(h: &Handle<Msg>, config: &ClientConfig, server: &str) {
    let redis = Client::connect(h, server, config.timeout);
    let storage = SimStorage::new(h, &config.storage, config.timeout);
    let disk = h.disk();
    let mut round = disk.get_u64(ROUNDS).unwrap_or(0);
    h.sleep(config.start.saturating_sub(h.now())).await;
    while round < config.rounds {
        let value = redis.random_value();
        let set = match redis.set_nx_px(KEY, value).await {
            Ok(Some(set)) => set,
            Ok(None) | Err(_) => {
                h.sleep(config.retry).await;
                continue;
            }
        };
        let unlocked = Signal::new();
        let running = watchdog(h, &redis, value, set.ttl / 3, &unlocked);
        h.sleep(config.work).await;
        if config.check_lease && !running.get() {
            h.probe(fencesim_env::Probe::Lost);
        } else {
            let written = storage.writes_sent() as i64 + 1;
            let _ = storage.put(&config.key, written, set.token).await;
        }
        unlocked.raise();
        let _ = redis.del_if_eq(KEY, value).await;
        round += 1;
        disk.put_u64(ROUNDS, round);
        if round < config.rounds {
            h.sleep(config.retry).await;
        }
    }
}
