//! A lock client as production code writes it: take the lease, keep it
//! alive from a task beside the work, write with its fencing token while the
//! client's own clock says the lease holds, give it up. Generic over
//! [`Env`], [`LockService`] and [`Storage`], so `src/main.rs` runs it on
//! tokio and `tests/fencesim.rs` explores it, unchanged, under fencesim's
//! faults.

pub mod memory;

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use fencesim_env::{Env, LockError, LockService, Probe, Storage, StorageError};

/// What one leadership does.
#[derive(Clone, Debug)]
pub struct Config {
    /// Writes to make while holding the lease.
    pub writes: u32,
    /// Work before each write.
    pub work: Duration,
    /// Wait between acquire attempts (plus up to as much again of jitter).
    pub retry: Duration,
}

/// How a leadership ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ended {
    /// Every write was made and answered.
    Done {
        /// Writes the storage applied.
        applied: u32,
        /// Writes the storage refused (a newer token got there first).
        refused: u32,
    },
    /// The client's clock said the lease had run out, or a renewal was
    /// refused, before all its writes: it stopped writing.
    GaveUp {
        /// Writes made before.
        written: u32,
    },
}

/// Takes the lock and writes `config.writes` times under it.
pub async fn lead<E, L, S>(env: &E, lock: &Rc<L>, storage: &S, config: &Config) -> Ended
where
    E: Env,
    L: LockService + 'static,
    S: Storage,
{
    let (lease, asked) = loop {
        // The lock counts the lease from when it granted, after the request
        // left: so does the client, or a slow answer would have it believe
        // past the lock's promise.
        let asked = env.now();
        match lock.acquire().await {
            Ok(lease) => break (lease, asked),
            Err(LockError::Held | LockError::Lost | LockError::Unavailable) => {
                env.sleep(config.retry + env.jitter(config.retry)).await
            }
        }
    };
    // The lease holds, by this client's clock, until `until`; the renewal
    // task moves it on, or clears `alive` when the lock refuses.
    let until = Rc::new(Cell::new(asked + lease.ttl));
    let alive = Rc::new(Cell::new(true));
    let stop = Rc::new(Cell::new(false));
    env.spawn({
        let (env, lock, lease) = (env.clone(), lock.clone(), lease.clone());
        let (until, alive, stop) = (until.clone(), alive.clone(), stop.clone());
        async move {
            while !stop.get() && alive.get() {
                env.sleep(lease.ttl / 3).await;
                if stop.get() {
                    break;
                }
                let asked = env.now();
                match lock.keep_alive(&lease).await {
                    Ok(ttl) => until.set(asked + ttl),
                    Err(LockError::Lost) => alive.set(false),
                    // Unanswered: the lease runs out on its own.
                    Err(_) => {}
                }
            }
        }
    });
    let (mut applied, mut refused) = (0, 0);
    let mut ended = None;
    for n in 1..=config.writes {
        env.sleep(config.work).await;
        let now = env.now();
        if !alive.get() {
            env.probe(Probe::Lost);
            ended = Some(Ended::GaveUp { written: n - 1 });
            break;
        }
        if now >= until.get() {
            env.probe(Probe::Lapsed {
                lease: lease.id,
                overdue: now - until.get(),
            });
            ended = Some(Ended::GaveUp { written: n - 1 });
            break;
        }
        env.probe(Probe::Checked {
            lease: lease.id,
            remaining: until.get() - now,
        });
        match storage.put("x", i64::from(n), lease.token).await {
            Ok(()) => applied += 1,
            Err(StorageError::Rejected(_)) => refused += 1,
            Err(StorageError::Unavailable) => {}
        }
    }
    stop.set(true);
    let _ = lock.release(&lease).await;
    ended.unwrap_or(Ended::Done { applied, refused })
}
