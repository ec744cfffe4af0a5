//! etcd's `concurrency.Mutex` on a `Session`, as async code over the
//! simulated etcd client: the lock client of etcd issue 11456, where
//! `Mutex.Lock` returned after the session's lease had expired.

use std::time::Duration;

use fencesim_env::{select, Either, Env, Probe, Signal, Storage};

use crate::design::client::ClientConfig;
use crate::process::etcd::{Client, ConnectOptions, LockOptions};
use crate::process::{Handle, Process, SimStorage};
use crate::protocol::Msg;

/// Rounds completed, on the node's disk.
const ROUNDS: &str = "etcd-mutex/rounds";

/// The process `etcd-mutex`: `rounds` times, a session (a lease of the
/// server's TTL, kept alive every third of it by a task of its own), `Lock`
/// on it, work for `work`, one write carrying the lock key's revision,
/// `Unlock`, and the session closed (`LeaseRevoke`). `Lock` is called with
/// a deadline of `timeout` (a Go caller's context); when it passes, the
/// round ends unwritten.
///
/// As etcd's client did before issue 11456 was fixed, it trusts `Lock`'s
/// success, though the session may have ended while it waited. With
/// `check_lease = true` it checks the session right after `Lock` returns,
/// as etcd 3.5's `Mutex.Lock` does, and gives a lost one up (`lost`)
/// instead of writing. Neither makes the write safe on its own: the
/// session can end between the check and the write. A storage that checks
/// the revision does.
pub(crate) fn process(config: ClientConfig, server: String) -> Process<Msg> {
    super::story(config, server, |h, config, server| async move {
        rounds(&h, &config, &server).await
    })
}

/// What the process does not take.
pub(crate) fn refuses(config: &ClientConfig) -> Option<String> {
    super::blind_writer("etcd-mutex", "its session keeps the lease alive", config)
}

/// `concurrency.Session`: the lease's keep-alive task and the signal it
/// raises when the server says the lease is gone (`Session.Done()`).
struct Session {
    done: Signal,
    /// Raised by `close`: the keep-alive task stops.
    closed: Signal,
}

impl Session {
    async fn start(h: &Handle<Msg>, client: &Client, lease: u64, ttl: Duration) -> Session {
        let done = Signal::new();
        let closed = Signal::new();
        let every = ttl / 3;
        let (mut keeper, mut stream) = client
            .lease_keep_alive(lease)
            .await
            .expect("a keeper is made without asking the server");
        let (task_done, task_closed, env) = (done.clone(), closed.clone(), h.clone());
        h.spawn(async move {
            while !task_closed.is_raised() {
                let sent = env.now();
                let _ = keeper.keep_alive().await;
                // The answer, if it comes before the next keep-alive is due.
                let answer = env.timeout(every, stream.message());
                match select(answer, task_closed.raised()).await {
                    Either::Left(Ok(Ok(Some(reply)))) if reply.ttl() == 0 => {
                        task_done.raise();
                        return;
                    }
                    Either::Right(()) => return,
                    _ => {}
                }
                if let Either::Right(()) =
                    select(env.sleep_until(sent + every), task_closed.raised()).await
                {
                    return;
                }
            }
        });
        Session { done, closed }
    }

    fn close(&self) {
        self.closed.raise();
    }
}

async fn rounds(h: &Handle<Msg>, config: &ClientConfig, server: &str) {
    let client = Client::connect(
        h,
        server,
        ConnectOptions::new().with_timeout(config.timeout),
    );
    let storage = SimStorage::new(h, &config.storage, config.timeout);
    let disk = h.disk();
    let mut round = disk.get_u64(ROUNDS).unwrap_or(0);
    h.sleep(config.start.saturating_sub(h.now())).await;
    while round < config.rounds {
        // concurrency.NewSession: a lease of the server's TTL.
        let lease = match client.lease_grant(0).await {
            Ok(lease) => lease,
            Err(_) => {
                h.sleep(config.retry).await;
                continue;
            }
        };
        let ttl = Duration::from_secs(lease.ttl() as u64);
        let session = Session::start(h, &client, lease.id(), ttl).await;
        let options = Some(LockOptions::new().with_lease(lease.id()));
        // Go code calls Lock with a context deadline; `timeout` is it.
        let locked = h
            .timeout(config.timeout, client.lock("lock", options))
            .await;
        if let Ok(Ok(lock)) = locked {
            if config.check_lease && session.done.is_raised() {
                h.probe(Probe::Lost);
            } else {
                h.sleep(config.work).await;
                let value = storage.writes_sent() as i64 + 1;
                let _ = storage.put(&config.key, value, lock.revision()).await;
            }
            let _ = client.unlock(lock.key()).await;
        }
        session.close();
        let _ = client.lease_revoke(lease.id()).await;
        round += 1;
        disk.put_u64(ROUNDS, round);
        if round < config.rounds {
            h.sleep(config.retry).await;
        }
    }
}
