//! A simulated etcd client whose calls read like the `etcd-client` crate's
//! (`lease_grant`, `lease_keep_alive`, `lock`, `unlock`, `lease_revoke`),
//! spoken to the bundled `etcd` design over fencesim's network.
//!
//! ```ignore
//! let client = Client::connect(&h, "lock", ConnectOptions::new());
//! let lease = client.lease_grant(2).await?;
//! let (mut keeper, mut stream) = client.lease_keep_alive(lease.id()).await?;
//! let lock = client.lock("job", Some(LockOptions::new().with_lease(lease.id()))).await?;
//! storage.put("x", 1, Some(lock.revision())).await?;
//! client.unlock(lock.key()).await?;
//! ```
//!
//! What differs from the crate, and why: ids and revisions are `u64`
//! (fencesim's), a lock key is a [`LockKey`] rather than bytes, and the
//! lock's fencing token is [`LockResponse::revision`], the key's create
//! revision (the crate gives it through the key's `create_revision`; the
//! response header's revision is the store's, which later writes move);
//! `lease_grant` takes no options.
//!
//! Like the bundled client, it journals what its caller comes to believe:
//! `acquired` when `lock` returns, `released` when `unlock` or
//! `lease_revoke` gives the lock up. Anything else the caller decides (a
//! lease it gives up as lost, a check of its own clock) is its own to
//! [`Env::probe`].

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::fmt;
use std::rc::Rc;
use std::time::Duration;

use fencesim_env::{Env, EtcdError, EtcdLease, EtcdLock, EtcdOp, EtcdTxn, EtcdTxnResponse, Probe};
use sim::process::Handle;
use sim::NodeId;

use crate::design::etcd::EtcdCall;
use crate::protocol::Msg;

/// Request ids, on the node's disk: unique in the run across crashes.
const REQUESTS: &str = "etcd/requests";

/// What a call can fail with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// `etcdserver: requested lease not found`: the lease expired or was
    /// revoked.
    LeaseNotFound,
    /// No answer within the connection's timeout (gRPC's
    /// `DeadlineExceeded`).
    Timeout,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Error::LeaseNotFound => "etcdserver: requested lease not found",
            Error::Timeout => "deadline exceeded",
        })
    }
}

impl std::error::Error for Error {}

/// How to connect: `etcd-client`'s `ConnectOptions`, of which the request
/// timeout matters here.
#[derive(Clone, Copy, Debug, Default)]
pub struct ConnectOptions {
    timeout: Option<Duration>,
}

impl ConnectOptions {
    /// No timeout: a call waits for its answer as long as it takes.
    pub fn new() -> Self {
        ConnectOptions::default()
    }

    /// Gives each call up after `timeout` on the node's clock
    /// ([`Error::Timeout`]). `lock` waits for the lock, not for an answer,
    /// and has none.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }
}

/// `LockOptions`: the lease the lock key lives on.
#[derive(Clone, Copy, Debug, Default)]
pub struct LockOptions {
    lease: Option<u64>,
}

impl LockOptions {
    /// No lease yet.
    pub fn new() -> Self {
        LockOptions::default()
    }

    /// The key lives on lease `id`, and goes with it.
    pub fn with_lease(mut self, id: u64) -> Self {
        self.lease = Some(id);
        self
    }
}

/// `lease_grant`'s answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeaseGrantResponse {
    id: u64,
    ttl: Duration,
}

impl LeaseGrantResponse {
    /// The lease's id.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Its time to live, in seconds (as etcd answers).
    pub fn ttl(&self) -> i64 {
        self.ttl.as_secs() as i64
    }
}

/// The key `lock` put under the lock's prefix: `unlock` deletes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockKey {
    name: String,
    lease: u64,
}

impl fmt::Display for LockKey {
    /// `name/lease` with the lease in hex, as etcd names the key.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{:x}", self.name, self.lease)
    }
}

/// `lock`'s answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockResponse {
    key: LockKey,
    revision: Option<u64>,
}

impl LockResponse {
    /// The key that holds the lock.
    pub fn key(&self) -> &LockKey {
        &self.key
    }

    /// The key's create revision: the fencing token, larger for every later
    /// holder. `None` from a server with `tokens = false`.
    pub fn revision(&self) -> Option<u64> {
        self.revision
    }
}

/// `lease_keep_alive`'s sending half: each `keep_alive` sends one
/// `LeaseKeepAlive`.
pub struct LeaseKeeper {
    handle: Handle<Msg>,
    server: NodeId,
    lease: u64,
}

impl LeaseKeeper {
    /// The lease kept alive.
    pub fn id(&self) -> u64 {
        self.lease
    }

    /// Sends one keep-alive; its answer comes on the stream.
    pub async fn keep_alive(&mut self) -> Result<(), Error> {
        self.handle.send(
            self.server,
            Msg::design(EtcdCall::KeepAlive { lease: self.lease }),
        );
        Ok(())
    }
}

/// A keep-alive's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeaseKeepAliveResponse {
    id: u64,
    ttl: Duration,
}

impl LeaseKeepAliveResponse {
    /// The lease.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Its time to live from now, in seconds: 0 when the lease is gone.
    pub fn ttl(&self) -> i64 {
        self.ttl.as_secs() as i64
    }
}

/// `lease_keep_alive`'s receiving half: the answers, in the order they
/// arrive.
pub struct LeaseKeepAliveStream {
    handle: Handle<Msg>,
    server: NodeId,
    lease: u64,
}

impl LeaseKeepAliveStream {
    /// The next answer (the stream never ends by itself: `Ok(Some)`).
    pub async fn message(&mut self) -> Result<Option<LeaseKeepAliveResponse>, Error> {
        let lease = self.lease;
        let (_, msg) = self
            .handle
            .recv_from(self.server, move |m| {
                keep_alive_reply(m).is_some_and(|(l, _)| l == lease)
            })
            .await;
        let (id, ttl) = keep_alive_reply(&msg).expect("only keep-alive answers are taken");
        Ok(Some(LeaseKeepAliveResponse { id, ttl }))
    }
}

/// The lease and TTL a keep-alive's answer gives, if `msg` is one.
fn keep_alive_reply(msg: &Msg) -> Option<(u64, Duration)> {
    match msg.as_design() {
        Some(&EtcdCall::KeepAliveReply { lease, ttl }) => Some((lease, ttl)),
        _ => None,
    }
}

/// A client of the etcd node `lock` (the bundled `etcd` design).
#[derive(Clone)]
pub struct Client {
    handle: Handle<Msg>,
    server: NodeId,
    timeout: Option<Duration>,
    /// The leases whose key this client was told holds the lock, and has
    /// not given up: what `released` is journaled for.
    held: Rc<RefCell<BTreeSet<u64>>>,
}

impl Client {
    /// Connects to the etcd node called `server`.
    ///
    /// # Panics
    /// If there is no node of that name.
    pub fn connect(handle: &Handle<Msg>, server: &str, options: ConnectOptions) -> Client {
        let node = handle
            .node(server)
            .unwrap_or_else(|| panic!("no etcd node called {server:?}"));
        Client {
            handle: handle.clone(),
            server: node,
            timeout: options.timeout,
            held: Rc::default(),
        }
    }

    fn next_req(&self) -> u64 {
        self.handle.disk().next_u64(REQUESTS)
    }

    /// Waits for the first message from the server `wanted` takes, within
    /// the connection's timeout.
    async fn answer(
        &self,
        limit: Option<Duration>,
        wanted: impl FnMut(&Msg) -> bool + Unpin,
    ) -> Result<Msg, Error> {
        let recv = self.handle.recv_from(self.server, wanted);
        let (_, msg) = match limit {
            Some(limit) => self
                .handle
                .timeout(limit, recv)
                .await
                .map_err(|_| Error::Timeout)?,
            None => recv.await,
        };
        Ok(msg)
    }

    /// `LeaseGrant`: a lease of `ttl` seconds (0: the server's own TTL).
    pub async fn lease_grant(&self, ttl: i64) -> Result<LeaseGrantResponse, Error> {
        let req = self.next_req();
        let ttl = Duration::from_secs(ttl.max(0) as u64);
        self.handle
            .send(self.server, Msg::design(EtcdCall::LeaseGrant { req, ttl }));
        let msg = self
            .answer(self.timeout, move |m| {
                let created = m.as_design();
                matches!(created, Some(EtcdCall::LeaseCreated { req: r, .. }) if *r == req)
            })
            .await?;
        match msg.as_design() {
            Some(&EtcdCall::LeaseCreated { lease, ttl, .. }) => {
                Ok(LeaseGrantResponse { id: lease, ttl })
            }
            _ => unreachable!("only the lease's answer is taken"),
        }
    }

    /// `LeaseKeepAlive`: the keeper that sends keep-alives for lease `id`
    /// and the stream of their answers.
    pub async fn lease_keep_alive(
        &self,
        id: u64,
    ) -> Result<(LeaseKeeper, LeaseKeepAliveStream), Error> {
        Ok((
            LeaseKeeper {
                handle: self.handle.clone(),
                server: self.server,
                lease: id,
            },
            LeaseKeepAliveStream {
                handle: self.handle.clone(),
                server: self.server,
                lease: id,
            },
        ))
    }

    /// `Lock`: puts the lock key `name/<lease>` on the options' lease and
    /// waits until it is the lowest, however long that takes. A second
    /// `lock` on the same lease waits for the same key (as etcd's does).
    ///
    /// # Panics
    /// Without a lease in `options`: this model's keys always live on one.
    pub async fn lock(
        &self,
        name: &str,
        options: Option<LockOptions>,
    ) -> Result<LockResponse, Error> {
        let lease = options
            .and_then(|o| o.lease)
            .expect("lock needs LockOptions::with_lease: a key lives on a lease");
        let req = self.next_req();
        let name_sent = name.to_owned();
        self.handle.send(
            self.server,
            Msg::design(EtcdCall::NamedLock {
                req,
                lease,
                name: name_sent,
            }),
        );
        let msg = self
            .answer(None, move |m| match m {
                Msg::Granted { req: r, .. } => *r == req,
                m => m
                    .as_design::<EtcdCall>()
                    .is_some_and(|c| *c == EtcdCall::LeaseNotFound { req }),
            })
            .await?;
        match msg {
            Msg::Granted {
                lease, token, ttl, ..
            } => {
                if self.held.borrow_mut().insert(lease) {
                    self.handle.probe(Probe::Acquired { lease, token, ttl });
                }
                Ok(LockResponse {
                    key: LockKey {
                        name: name.to_owned(),
                        lease,
                    },
                    revision: token,
                })
            }
            _ => Err(Error::LeaseNotFound),
        }
    }

    /// Journals that the caller no longer holds the lock under `lease`, if
    /// it did.
    fn give_up(&self, lease: u64) {
        if self.held.borrow_mut().remove(&lease) {
            self.handle.probe(Probe::Released { lease });
        }
    }

    /// `Unlock`: deletes `key`; its lease lives on.
    pub async fn unlock(&self, key: &LockKey) -> Result<(), Error> {
        let lease = key.lease;
        self.handle
            .send(self.server, Msg::design(EtcdCall::Unlock { lease }));
        self.give_up(lease);
        self.answer(
            self.timeout,
            move |m| matches!(m, Msg::ReleaseAck { lease: l } if *l == lease),
        )
        .await
        .map(|_| ())
    }

    /// `Txn`: `txn`'s compares, then one of its branches, on the server's
    /// key-value store (which holds the lock keys too: `name/<lease>`).
    /// A delete of a lock key this client holds, in the `then` branch
    /// (etcd's guarded unlock), gives the lock up whatever the compares
    /// say, as `unlock` does.
    pub async fn txn(&self, txn: EtcdTxn) -> Result<EtcdTxnResponse, EtcdError> {
        let held: Vec<u64> = self.held.borrow().iter().copied().collect();
        for lease in held {
            let deletes = txn.then.iter().any(|op| match op {
                EtcdOp::Delete { key } => {
                    let key = String::from_utf8_lossy(key);
                    key.rsplit_once('/')
                        .is_some_and(|(_, hex)| hex == format!("{lease:x}"))
                }
                _ => false,
            });
            if deletes {
                self.give_up(lease);
            }
        }
        let req = self.next_req();
        self.handle
            .send(self.server, Msg::design(EtcdCall::Txn { req, txn }));
        let msg = self
            .answer(self.timeout, move |m| {
                matches!(m.as_design(), Some(EtcdCall::TxnReply { req: r, .. }) if *r == req)
            })
            .await
            .map_err(seam_error)?;
        match msg.as_design() {
            Some(EtcdCall::TxnReply { answer, .. }) => answer.clone(),
            _ => unreachable!("only the transaction's answer is taken"),
        }
    }

    /// `LeaseRevoke`: ends lease `id` and deletes its keys.
    pub async fn lease_revoke(&self, id: u64) -> Result<(), Error> {
        self.handle.send(self.server, Msg::Release { lease: id });
        self.give_up(id);
        self.answer(
            self.timeout,
            move |m| matches!(m, Msg::ReleaseAck { lease: l } if *l == id),
        )
        .await
        .map(|_| ())
    }
}

/// The seam's [`fencesim_env::Etcd`]: the same calls, so a function
/// generic over it runs here and against a real etcd
/// (`fencesim_env::etcd::EtcdClient`). Ids and revisions are this model's
/// `u64`s as `i64`s; a lock's revision is 0 from a server with `tokens =
/// false`. `lease_keep_alive` sends one keep-alive and waits, within the
/// connection's timeout, for the next answer about the lease (a late answer
/// to an earlier keep-alive counts: a real stream's answers carry no
/// request id either).
impl fencesim_env::Etcd for Client {
    async fn lease_grant(&self, ttl: Duration) -> Result<EtcdLease, EtcdError> {
        let ttl = i64::try_from(ttl.as_secs()).unwrap_or(i64::MAX);
        let granted = Client::lease_grant(self, ttl).await.map_err(seam_error)?;
        Ok(EtcdLease {
            id: granted.id() as i64,
            ttl: granted.ttl,
        })
    }

    async fn lease_keep_alive(&self, lease: i64) -> Result<Duration, EtcdError> {
        let (mut keeper, mut stream) = Client::lease_keep_alive(self, lease as u64)
            .await
            .map_err(seam_error)?;
        keeper.keep_alive().await.map_err(seam_error)?;
        let answer = match self.timeout {
            Some(limit) => self
                .handle
                .timeout(limit, stream.message())
                .await
                .map_err(|_| EtcdError::Timeout)?,
            None => stream.message().await,
        };
        match answer.map_err(seam_error)? {
            Some(answer) if !answer.ttl.is_zero() => Ok(answer.ttl),
            _ => Err(EtcdError::LeaseNotFound),
        }
    }

    async fn lock(&self, name: &str, lease: i64) -> Result<EtcdLock, EtcdError> {
        let options = LockOptions::new().with_lease(lease as u64);
        let locked = Client::lock(self, name, Some(options))
            .await
            .map_err(seam_error)?;
        Ok(EtcdLock {
            key: locked.key.to_string().into_bytes(),
            lease,
            revision: locked.revision.map_or(0, |r| r as i64),
        })
    }

    async fn unlock(&self, lock: &EtcdLock) -> Result<(), EtcdError> {
        let name = String::from_utf8_lossy(&lock.key);
        let name = name.rsplit_once('/').map_or(&*name, |(name, _)| name);
        let key = LockKey {
            name: name.to_owned(),
            lease: lock.lease as u64,
        };
        Client::unlock(self, &key).await.map_err(seam_error)
    }

    async fn lease_revoke(&self, lease: i64) -> Result<(), EtcdError> {
        Client::lease_revoke(self, lease as u64)
            .await
            .map_err(seam_error)
    }

    async fn txn(&self, txn: &EtcdTxn) -> Result<EtcdTxnResponse, EtcdError> {
        Client::txn(self, txn.clone()).await
    }
}

fn seam_error(e: Error) -> EtcdError {
    match e {
        Error::LeaseNotFound => EtcdError::LeaseNotFound,
        Error::Timeout => EtcdError::Timeout,
    }
}
