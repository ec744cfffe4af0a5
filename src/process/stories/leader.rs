//! A client-go-style leader elector, as async code over the generic lock
//! client ([`SimLock`]): acquire, then renew every retry period from a task
//! of its own; a leader that has not renewed within its renew deadline
//! stops leading. Its work is a loop of writes that should stop with the
//! leadership, and in this one does not: the loop never looks at the
//! leadership's context (cilium issue 42920, where the operator kept acting
//! after its lease was lost while its stop hooks blocked).

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use fencesim_env::{select, Either, Env, LockService, Probe, Signal, Storage};

use crate::design::catalog::{KeyKind, MAX_DURATION, MIN_INTERVAL};
use crate::design::client::ClientConfig;
use crate::design::config::key;
use crate::process::{Handle, Process, SimLock, SimStorage};
use crate::protocol::Msg;

/// Leaderships completed, on the node's disk.
const TERMS: &str = "leader/terms";

crate::design_config! {
    /// The leader elector's own keys, beside the client keys.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct LeaderConfig {
        writes: u64 = key::integer(1, 1_000, 5), "writes per leadership, `work` apart";
        renew_deadline: Duration = key::duration(RENEW_DEADLINE, Duration::ZERO),
            "client-go's renewDeadline: the leader stops leading when no renewal \
             succeeded for this long";
    }
}

/// `renew_deadline`'s kind: `0s` for two thirds of the lease's TTL.
const RENEW_DEADLINE: KeyKind = KeyKind::DurationIn {
    min: MIN_INTERVAL,
    max: MAX_DURATION,
    zero: Some("two thirds of the lease's TTL, client-go's 10 s of 15"),
    below: None,
};

/// The process `leader-elector`: `rounds` leaderships. Each tries to acquire
/// every `retry` (client-go's `RetryPeriod`); once leader, a task renews
/// every `retry`, each renewal given up after `timeout`, and the leader
/// stops leading when a renewal is refused or none has succeeded for its
/// `renew_deadline`. The work writes `writes` times, `work` apart, carrying
/// the lease's token, then gives the lease up.
///
/// The work does not stop when the leadership does: it writes on. With
/// `check_lease = true` it checks the leadership before each write, as
/// code that watches client-go's context does, and stops (`lost`). That
/// narrows the window but cannot close it (the lease can end between the
/// check and the write); a storage that checks the token does.
pub(crate) fn process(config: ClientConfig, own: LeaderConfig, server: String) -> Process<Msg> {
    super::story(config, server, move |h, config, server| {
        let own = own.clone();
        async move { terms(&h, &config, &own, &server).await }
    })
}

/// What the process does not take.
pub(crate) fn refuses(config: &ClientConfig) -> Option<String> {
    super::blind_writer("leader-elector", "it renews every retry", config)
}

/// The renewal task: raises `stopped` when the leadership ends (a refusal,
/// or no renewal for `deadline`), and ends when `released` is raised.
fn renew_loop(
    h: &Handle<Msg>,
    lock: &Rc<SimLock>,
    lease: fencesim_env::Lease,
    every: Duration,
    deadline: Duration,
    stopped: &Signal,
    released: &Signal,
) {
    let (env, lock, stopped, released) =
        (h.clone(), lock.clone(), stopped.clone(), released.clone());
    h.spawn(async move {
        let renewed_at = Cell::new(env.now());
        loop {
            if let Either::Right(()) = select(env.sleep(every), released.raised()).await {
                return;
            }
            let asked = env.now();
            match lock.keep_alive(&lease).await {
                Ok(_) => renewed_at.set(asked),
                Err(fencesim_env::LockError::Lost) => {
                    stopped.raise();
                    return;
                }
                Err(_) => {}
            }
            if env.now().saturating_sub(renewed_at.get()) >= deadline {
                stopped.raise();
                return;
            }
        }
    });
}

async fn terms(h: &Handle<Msg>, config: &ClientConfig, own: &LeaderConfig, server: &str) {
    let lock = Rc::new(SimLock::new(h, server, config.timeout));
    let storage = SimStorage::new(h, &config.storage, config.timeout);
    let disk = h.disk();
    let mut term = disk.get_u64(TERMS).unwrap_or(0);
    h.sleep(config.start.saturating_sub(h.now())).await;
    while term < config.rounds {
        let lease = match lock.acquire().await {
            Ok(lease) => lease,
            Err(_) => {
                h.sleep(config.retry).await;
                continue;
            }
        };
        let (stopped, released) = (Signal::new(), Signal::new());
        let deadline = match own.renew_deadline {
            Duration::ZERO => lease.ttl * 2 / 3,
            set => set,
        };
        renew_loop(
            h,
            &lock,
            lease.clone(),
            config.retry,
            deadline,
            &stopped,
            &released,
        );
        for _ in 0..own.writes {
            h.sleep(config.work).await;
            if config.check_lease && stopped.is_raised() {
                h.probe(Probe::Lost);
                break;
            }
            let value = storage.writes_sent() as i64 + 1;
            let _ = storage.put(&config.key, value, lease.token).await;
        }
        released.raise();
        let _ = lock.release(&lease).await;
        term += 1;
        disk.put_u64(TERMS, term);
        if term < config.rounds {
            h.sleep(config.retry).await;
        }
    }
}
