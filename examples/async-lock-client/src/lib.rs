//! A lock client as production code writes it: take the lease, keep it
//! alive from a task beside the work, write with its fencing token while the
//! client's own clock says the lease holds, give it up. Generic over
//! [`Env`], [`LockService`] and [`Storage`], so `src/main.rs` runs it on
//! tokio and `tests/fencesim.rs` explores it, unchanged, under fencesim's
//! faults.
//!
//! [`lead_etcd`], [`lead_redis`] and [`lead_sql`] are figure 9-6's leader
//! on the services of the seam ([`Etcd`], [`Redis`], [`Sql`]): the binary
//! `real-servers` runs them against a real etcd, Redis and PostgreSQL, and
//! `tests/services.rs` explores them in fencesim.

pub mod memory;
pub mod operations;
pub mod services;

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use fencesim_env::{Env, Etcd, LockError, LockService, Probe, Redis, Sql, Storage, StorageError};

use services::{EtcdMutex, RedisMutex, SqlTable};

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

/// Whether a leader's writes carry its fencing token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fence {
    /// Each write carries the lease's token, for the storage to check.
    Token,
    /// The writes carry none: the storage cannot tell a stale leader.
    None,
}

/// What one leadership of [`lead_and_write`] does.
#[derive(Clone, Debug)]
pub struct Leadership {
    /// The key written.
    pub key: String,
    /// Writes to make while holding the lease.
    pub writes: u32,
    /// The value of the first write; each later one adds 1.
    pub first_value: i64,
    /// Work between the check of the lease and the write.
    pub work: Duration,
    /// Wait between acquire attempts (plus up to as much again of jitter).
    pub retry: Duration,
    /// Whether the writes carry the token.
    pub fence: Fence,
}

/// One write [`lead_and_write`] made, and the storage's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wrote {
    /// The value written.
    pub value: i64,
    /// The token it carried.
    pub token: Option<u64>,
    /// The answer: applied, refused (with the storage's reason) or none.
    pub answer: Result<(), StorageError>,
}

/// How a leadership of [`lead_and_write`] went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Led {
    /// The lease's fencing token.
    pub token: Option<u64>,
    /// The writes made, in order.
    pub writes: Vec<Wrote>,
    /// Whether it stopped before all its writes: its clock said the lease
    /// had run out, or a renewal was refused.
    pub gave_up: bool,
}

/// Figure 9-6's leader: takes the lock (retrying while it is held), keeps
/// the lease alive from a task beside the work, and for each write checks
/// the lease (by its own clock, and whether a renewal was refused), does
/// its work, then writes, with the token or not as `config.fence` says.
/// The check comes before the work, as in a client that checks and then
/// computes what to write: a pause during the work (a GC pause, a stopped
/// process) longer than the lease lets the lock go to another leader, and
/// the write lands after that leader's, unless the storage checks the
/// token.
pub async fn lead_and_write<E, L, S>(env: &E, lock: &Rc<L>, storage: &S, config: &Leadership) -> Led
where
    E: Env,
    L: LockService + 'static,
    S: Storage,
{
    let (lease, asked) = loop {
        // The lease is counted from the request, as the lock counts it from
        // its grant, which came later: never from the answer.
        let asked = env.now();
        match lock.acquire().await {
            Ok(lease) => break (lease, asked),
            Err(_) => env.sleep(config.retry + env.jitter(config.retry)).await,
        }
    };
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
                    Err(_) => {}
                }
            }
        }
    });
    let mut led = Led {
        token: lease.token,
        writes: Vec::new(),
        gave_up: false,
    };
    for n in 0..config.writes {
        let now = env.now();
        if !alive.get() {
            env.probe(Probe::Lost);
            led.gave_up = true;
            break;
        }
        if now >= until.get() {
            env.probe(Probe::Lapsed {
                lease: lease.id,
                overdue: now - until.get(),
            });
            led.gave_up = true;
            break;
        }
        env.probe(Probe::Checked {
            lease: lease.id,
            remaining: until.get() - now,
        });
        env.sleep(config.work).await;
        let value = config.first_value + i64::from(n);
        let token = match config.fence {
            Fence::Token => lease.token,
            Fence::None => None,
        };
        let answer = storage.put(&config.key, value, token).await;
        led.writes.push(Wrote {
            value,
            token,
            answer,
        });
    }
    stop.set(true);
    let _ = lock.release(&lease).await;
    led
}

/// [`lead_and_write`] on etcd's lock: a lease of `ttl`, the lock `name` on
/// it (its key's revision is the token), waited for at most `wait` before
/// trying again.
pub async fn lead_etcd<E, C, S>(
    env: &E,
    etcd: C,
    name: &str,
    ttl: Duration,
    wait: Duration,
    storage: &S,
    config: &Leadership,
) -> Led
where
    E: Env,
    C: Etcd + 'static,
    S: Storage,
{
    let lock = Rc::new(EtcdMutex::new(env.clone(), etcd, name, ttl, wait));
    lead_and_write(env, &lock, storage, config).await
}

/// [`lead_and_write`] on a Redis lock on `key` (`SET NX PX`, the token
/// from its counter).
pub async fn lead_redis<E, R, S>(
    env: &E,
    redis: R,
    key: &str,
    storage: &S,
    config: &Leadership,
) -> Led
where
    E: Env,
    R: Redis + 'static,
    S: Storage,
{
    let lock = Rc::new(RedisMutex::new(redis, key));
    lead_and_write(env, &lock, storage, config).await
}

/// [`lead_and_write`] writing to a SQL database: each write runs the
/// database's update statement, whose `WHERE` is the fence or is not.
pub async fn lead_sql<E, L, D>(env: &E, lock: &Rc<L>, db: D, config: &Leadership) -> Led
where
    E: Env,
    L: LockService + 'static,
    D: Sql,
{
    lead_and_write(env, lock, &SqlTable::new(db), config).await
}
