//! `etcd`: the lock of etcd's `clientv3/concurrency` package (`Mutex` on a
//! `Session`), a sans-IO model of etcd's lease and revision semantics.
//!
//! A client creates a lease (`LeaseGrant`, time to live `ttl`) and keeps it
//! alive every `keepalive` (default ttl/3, as `concurrency.NewSession` does);
//! its lock key under the lock's prefix is attached to the lease. The key
//! with the **lowest create revision** holds the lock; the others wait for
//! the deletion of their predecessor. The token is the key's create revision:
//! the store's revision counter goes up by one on every write (a key put, a
//! key deleted), so a later holder's key always has a higher revision. When
//! a lease is not kept alive for `ttl` on the server's clock, the server
//! deletes its keys (journalled `expired {client, lease}` for the holder) and
//! grants the next key; a keep-alive for a lease that is gone is answered
//! with a zero TTL, which is how a client learns that its session is lost.
//! A renewal ([`Msg::Renew`], the `renew` client variant) is one keep-alive
//! the client waits for (`LeaseKeepAliveOnce`): answered with the lease's
//! new TTL, or refused when the lease is gone; the server journals
//! `renewed` when it extends the lease that holds the lock. An acquire the
//! server has seen already from that client (a duplicate) is answered again
//! with the same lease instead of creating a second one.
//!
//! Besides the shared protocol, the server and its clients speak etcd's own
//! calls and answers as [`EtcdCall`] messages, carried in [`Msg::Design`]:
//! the lease's creation (`LeaseCreated`, the answer to an acquire) and its
//! keep-alives (`KeepAlive`, answered by `KeepAliveReply`), which the
//! bundled client uses, and one message per call of etcd's client API for
//! clients written as async code ([`crate::process::etcd`]): `LeaseGrant`
//! makes a lease with no key, `Lock` puts a key on a lease (granted when it
//! is the lowest, or refused when the lease is gone), `Unlock` deletes the
//! key and keeps the lease. `Release` is `LeaseRevoke`. A lease may ask for
//! its own TTL; the others get the design's `ttl`.
//!
//! Known failures:
//! - **Jepsen, etcd 3.4.3 (2020)**: the lock workload (2 s TTL; read, sleep,
//!   write) loses updates: a client paused past its lease still writes.
//!   Safe only when the storage checks the revision as a fencing token.
//! - **etcd issue 11456**: `Mutex.Lock` returned success after the session's
//!   lease had expired. Here: the grant reaches the client only after the
//!   lease is gone (a slow link from the lock, keep-alives lost), and the
//!   client writes as a zombie; a storage that checks the revision rejects it.
//!
//! Why a model rather than `madsim-etcd-client`: that crate's simulator is a
//! madsim service reached over madsim's own network with an async client,
//! while fencesim designs are sans-IO actors on fencesim's journaled network.
//! Pauses, partitions, per-link delays, clock rates and the journal all live
//! in fencesim's world; an etcd server behind madsim's network would bypass
//! them (its messages would neither be journaled nor subject to faults), and
//! an async client cannot be stepped by hand in a unit test. What matters for
//! the verdicts is small and modelled here exactly: leases expire on the
//! server's clock unless kept alive, a lease's keys vanish with it, revisions
//! only go up, and the lowest create revision holds. Not modelled: the raft
//! cluster (one server, whose state survives its crashes; on restart the
//! leases are refreshed by their full TTL, as etcd's lessor does on
//! promotion), and the client's own lease deadline.

use std::collections::BTreeMap;
use std::time::Duration;

use fencesim_env::{
    EtcdCompare, EtcdCompareOp, EtcdError, EtcdKeyValue, EtcdOp, EtcdOpResponse, EtcdTarget,
    EtcdTxn, EtcdTxnResponse,
};
use sim::{Actor, Context, NodeId, TimerId};

use crate::design::config::key;
use crate::design::grants::Grants;
use crate::design::lock_client::{KeepAlive, LockClient, LockContext, LockEvent, SingleServer};
use crate::protocol::Msg;

crate::lock_design! {
    pub struct Etcd as ETCD = "etcd",
        "etcd concurrency.Mutex: a lease kept alive by the client, a lock key \
        on it; the lowest create revision holds, and is the token";
    #[derive(Eq)]
    pub struct EtcdConfig {
        ttl: Duration = key::ttl(), "the lease's time to live on the server's clock";
        keepalive: Duration = key::heartbeat("ttl / 3"),
            "how often the client refreshes its lease; 0s means ttl/3";
        tokens: bool = key::tokens(true),
            "hand out the lock key's create revision as a fencing token";
    }
    server(config, _index) => Box::new(EtcdServer::new(config.ttl, config.tokens));
    client(config, lock_nodes) =>
        Box::new(EtcdClient::new(lock_nodes[0].clone(), config.keepalive_interval()));
}

impl EtcdConfig {
    /// The client's keep-alive period: `keepalive`, or `ttl / 3` for zero.
    pub fn keepalive_interval(&self) -> Duration {
        match self.keepalive {
            Duration::ZERO => self.ttl / 3,
            every => every,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct LeaseState {
    client: NodeId,
    /// The request that created the lease: a copy of it is answered with
    /// this lease again.
    made_by: u64,
    /// The request its key's grant answers: the one that created the lease
    /// and its key (`Acquire`), or the latest `Lock` on it.
    req: u64,
    /// Create revision of the lease's lock key, if it has one.
    key: Option<u64>,
    /// Its time to live.
    ttl: Duration,
    timer: TimerId,
}

/// etcd's own calls and their answers, beside the shared protocol (see the
/// module documentation), carried in [`Msg::Design`]. The journal shows
/// the lease's messages as `lease 1 created`, `keepalive lease=1`, `lease 1
/// kept` or `lease 1 gone`, and the client API's calls in their `Debug`
/// form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EtcdCall {
    /// Client → server, `LeaseGrant`: a lease of `ttl` (the design's own
    /// for zero) with no key yet, answered by [`EtcdCall::LeaseCreated`].
    LeaseGrant {
        /// Request id, echoed in the answer.
        req: u64,
        /// The TTL asked for.
        ttl: Duration,
    },
    /// Server → client: a lease was created for request `req`, a
    /// `LeaseGrant` or an [`Msg::Acquire`] (which makes the lease and its
    /// key in one request); the client keeps it alive with
    /// [`EtcdCall::KeepAlive`] while it waits for the lock and while it
    /// holds it.
    LeaseCreated {
        /// The request answered.
        req: u64,
        /// The lease's id.
        lease: u64,
        /// The lease's time to live on the server's clock.
        ttl: Duration,
    },
    /// Client → server, `LeaseKeepAlive`: keep lease `lease` alive.
    KeepAlive {
        /// The lease to refresh.
        lease: u64,
    },
    /// Server → client: the answer to a keep-alive; `ttl` is zero when the
    /// lease is gone (expired or revoked), as etcd answers.
    KeepAliveReply {
        /// The lease refreshed.
        lease: u64,
        /// Its remaining time to live, zero if it no longer exists.
        ttl: Duration,
    },
    /// Client → server, `Lock` with `WithLease(lease)`: a key under the
    /// lock's prefix, attached to `lease`. Answered by [`Msg::Granted`]
    /// (for `req`, the key's create revision as token) once it is the
    /// lowest key, or [`EtcdCall::LeaseNotFound`] if the lease is gone.
    Lock {
        /// Request id, echoed in the answer.
        req: u64,
        /// The lease the key lives on.
        lease: u64,
    },
    /// Client → server, `Unlock`: deletes `lease`'s lock key; the lease
    /// lives on. Answered by [`Msg::ReleaseAck`].
    Unlock {
        /// The lease whose key is deleted.
        lease: u64,
    },
    /// Server → client: request `req` named a lease that does not exist
    /// (etcd's `requested lease not found`).
    LeaseNotFound {
        /// The request answered.
        req: u64,
    },
    /// Client → server, `Lock` of the lock `name` with `WithLease(lease)`:
    /// [`EtcdCall::Lock`] whose key, `name/<lease in hex>`, is also a key of
    /// the key-value store, which transactions compare, read and delete
    /// (deleting it unlocks).
    NamedLock {
        /// Request id, echoed in the answer.
        req: u64,
        /// The lease the key lives on.
        lease: u64,
        /// The lock's name (the key's prefix).
        name: String,
    },
    /// Client → server, `Txn`: answered by [`EtcdCall::TxnReply`].
    Txn {
        /// Request id, echoed in the answer.
        req: u64,
        /// The transaction.
        txn: EtcdTxn,
    },
    /// Server → client: the answer to transaction `req` (a copy of the
    /// request is answered again with the first answer, not run twice).
    TxnReply {
        /// The request answered.
        req: u64,
        /// What it did, or `LeaseNotFound` for a put on an unknown lease.
        answer: Result<EtcdTxnResponse, EtcdError>,
    },
}

/// [`EtcdCall::LeaseCreated`], as a message.
fn created(req: u64, lease: u64, ttl: Duration) -> Msg {
    Msg::design(EtcdCall::LeaseCreated { req, lease, ttl })
}

impl crate::protocol::Payload for EtcdCall {
    fn summary(&self) -> String {
        match self {
            EtcdCall::LeaseGrant { req, ttl } => {
                format!("LeaseGrant {{ req: {req}, ttl: {}ms }}", ttl.as_millis())
            }
            EtcdCall::LeaseCreated { lease, .. } => format!("lease {lease} created"),
            EtcdCall::KeepAlive { lease } => format!("keepalive lease={lease}"),
            EtcdCall::KeepAliveReply { lease, ttl } if ttl.is_zero() => {
                format!("lease {lease} gone")
            }
            EtcdCall::KeepAliveReply { lease, .. } => format!("lease {lease} kept"),
            EtcdCall::Lock { req, lease } => format!("Lock {{ req: {req}, lease: {lease} }}"),
            EtcdCall::Unlock { lease } => format!("Unlock {{ lease: {lease} }}"),
            EtcdCall::LeaseNotFound { req } => format!("LeaseNotFound {{ req: {req} }}"),
            EtcdCall::NamedLock { req, lease, name } => {
                format!("Lock {{ req: {req}, lease: {lease}, name: {name:?} }}")
            }
            EtcdCall::Txn { req, txn } => format!("Txn {{ req: {req}, {txn:?} }}"),
            EtcdCall::TxnReply { req, answer } => match answer {
                Ok(a) => format!(
                    "TxnReply {{ req: {req}, succeeded: {}, revision: {} }}",
                    a.succeeded, a.revision
                ),
                Err(e) => format!("TxnReply {{ req: {req}, error: {e} }}"),
            },
        }
    }
}

/// The etcd server: leases, the lock prefix's keys and the revision counter.
#[derive(Debug)]
pub struct EtcdServer {
    ttl: Duration,
    tokens: bool,
    /// The store's revision: the revision of its latest write.
    revision: u64,
    next_lease: u64,
    leases: BTreeMap<u64, LeaseState>,
    /// Lock keys by create revision → lease.
    keys: BTreeMap<u64, u64>,
    /// The lease whose key holds the lock, once told so.
    holder: Option<u64>,
    /// The holder's grant, journaled.
    grants: Grants,
    /// The key-value store: keys put by transactions, and the lock keys of
    /// [`EtcdCall::NamedLock`].
    kv: BTreeMap<Vec<u8>, EtcdKeyValue>,
    /// Transactions answered, by (client, request): a copy gets the same
    /// answer.
    txns: BTreeMap<(NodeId, u64), Result<EtcdTxnResponse, EtcdError>>,
}

impl EtcdServer {
    /// A server whose leases live `ttl`; `tokens`: grants carry revisions.
    pub fn new(ttl: Duration, tokens: bool) -> Self {
        EtcdServer {
            ttl,
            tokens,
            revision: 1,
            next_lease: 1,
            leases: BTreeMap::new(),
            keys: BTreeMap::new(),
            holder: None,
            grants: Grants::held_by_sessions(),
            kv: BTreeMap::new(),
            txns: BTreeMap::new(),
        }
    }

    /// Deletes lease `lease` and its key (one write: the revision moves);
    /// the lock is free if that key held it. Returns the lease's client.
    fn delete_lease(&mut self, lease: u64) -> Option<NodeId> {
        let state = self.leases.remove(&lease)?;
        let before = self.kv.len();
        self.kv.retain(|_, kv| kv.lease != lease as i64);
        if let Some(key) = state.key {
            self.delete_key(lease, key);
        } else if self.kv.len() < before {
            // Its keys went in one write.
            self.revision += 1;
        }
        Some(state.client)
    }

    /// Deletes `lease`'s lock key `key` (one write: the revision moves); the
    /// lock is free if that key held it.
    fn delete_key(&mut self, lease: u64, key: u64) {
        self.keys.remove(&key);
        self.kv
            .retain(|_, kv| !(kv.lease == lease as i64 && kv.create_revision == key as i64));
        self.revision += 1;
        self.holder.take_if(|&mut held| held == lease);
    }

    /// A new lease of `ttl` for `client`'s request `req`: its id.
    fn create_lease(
        &mut self,
        ctx: &mut Context<'_, Msg>,
        client: NodeId,
        req: u64,
        ttl: Duration,
    ) -> u64 {
        let lease = self.next_lease;
        self.next_lease += 1;
        let timer = ctx.set_timer(ttl, lease);
        self.leases.insert(
            lease,
            LeaseState {
                client,
                made_by: req,
                req,
                key: None,
                ttl,
                timer,
            },
        );
        lease
    }

    /// Puts `lease`'s lock key (one write: the revision moves) for
    /// request `req`.
    fn put_key(&mut self, lease: u64, req: u64) {
        self.revision += 1;
        let state = self.leases.get_mut(&lease).expect("the lease exists");
        state.key = Some(self.revision);
        state.req = req;
        self.keys.insert(self.revision, lease);
    }

    /// etcd's own calls.
    fn on_call(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, call: &EtcdCall) {
        match *call {
            EtcdCall::LeaseGrant { req, ttl } => {
                let ttl = if ttl.is_zero() { self.ttl } else { ttl };
                let seen = self.seen(from, req);
                let lease = seen.unwrap_or_else(|| self.create_lease(ctx, from, req, ttl));
                let ttl = self.leases[&lease].ttl;
                ctx.send(from, created(req, lease, ttl));
            }
            EtcdCall::Lock { req, lease } => {
                let Some(state) = self.leases.get(&lease).filter(|s| s.client == from) else {
                    ctx.send(from, Msg::design(EtcdCall::LeaseNotFound { req }));
                    return;
                };
                match state.key {
                    // The lock key is the lease's own (`prefix/lease`): a
                    // second `Lock` on the lease (a copy, a retry) waits for
                    // the same key, and is answered at once if it holds.
                    Some(_) => {
                        let ttl = state.ttl;
                        self.leases.get_mut(&lease).expect("just seen").req = req;
                        if self.holder == Some(lease) {
                            self.grants.repeat(ctx, from, req, lease, ttl);
                        }
                    }
                    None => {
                        self.put_key(lease, req);
                        self.grant_next(ctx);
                    }
                }
            }
            EtcdCall::Unlock { lease } => {
                let key = self
                    .leases
                    .get_mut(&lease)
                    .filter(|state| state.client == from)
                    .and_then(|state| state.key.take());
                if let Some(key) = key {
                    self.delete_key(lease, key);
                }
                let ack = self.grants.release(ctx, from, lease);
                if key.is_some() {
                    self.grant_next(ctx);
                }
                ack.send(ctx);
            }
            EtcdCall::KeepAlive { lease } => {
                let ttl = match self.leases.get_mut(&lease) {
                    Some(state) if state.client == from => {
                        ctx.cancel_timer(state.timer);
                        state.timer = ctx.set_timer(state.ttl, lease);
                        state.ttl
                    }
                    _ => Duration::ZERO,
                };
                ctx.send(from, Msg::design(EtcdCall::KeepAliveReply { lease, ttl }));
            }
            EtcdCall::NamedLock {
                req,
                lease,
                ref name,
            } => {
                let fresh = self
                    .leases
                    .get(&lease)
                    .is_some_and(|s| s.client == from && s.key.is_none());
                self.on_call(ctx, from, &EtcdCall::Lock { req, lease });
                if fresh {
                    let revision = self.revision as i64;
                    let key = format!("{name}/{lease:x}").into_bytes();
                    let kv = EtcdKeyValue {
                        key: key.clone(),
                        value: Vec::new(),
                        create_revision: revision,
                        mod_revision: revision,
                        version: 1,
                        lease: lease as i64,
                    };
                    self.kv.insert(key, kv);
                }
            }
            EtcdCall::Txn { req, ref txn } => {
                let answer = match self.txns.get(&(from, req)) {
                    Some(answer) => answer.clone(),
                    None => {
                        let answer = self.txn(ctx, txn);
                        self.txns.insert((from, req), answer.clone());
                        answer
                    }
                };
                ctx.send(from, Msg::design(EtcdCall::TxnReply { req, answer }));
            }
            EtcdCall::LeaseCreated { .. }
            | EtcdCall::KeepAliveReply { .. }
            | EtcdCall::LeaseNotFound { .. }
            | EtcdCall::TxnReply { .. } => {}
        }
    }

    /// Whether `compare` holds on the store.
    fn holds(&self, compare: &EtcdCompare) -> bool {
        fn by<T: Ord + ?Sized>(a: &T, op: EtcdCompareOp, b: &T) -> bool {
            match op {
                EtcdCompareOp::Equal => a == b,
                EtcdCompareOp::NotEqual => a != b,
                EtcdCompareOp::Greater => a > b,
                EtcdCompareOp::Less => a < b,
            }
        }
        let kv = self.kv.get(&compare.key);
        let field = |f: fn(&EtcdKeyValue) -> i64| kv.map_or(0, f);
        match &compare.target {
            EtcdTarget::CreateRevision(r) => by(&field(|kv| kv.create_revision), compare.op, r),
            EtcdTarget::ModRevision(r) => by(&field(|kv| kv.mod_revision), compare.op, r),
            EtcdTarget::Version(v) => by(&field(|kv| kv.version), compare.op, v),
            EtcdTarget::Value(v) => kv.is_some_and(|kv| by(&kv.value[..], compare.op, &v[..])),
        }
    }

    /// Runs `txn`: its compares, then its branch, all at one revision. A
    /// deleted lock key unlocks (its holder's grant ends, journaled as
    /// released) and the next key is granted.
    fn txn(
        &mut self,
        ctx: &mut Context<'_, Msg>,
        txn: &EtcdTxn,
    ) -> Result<EtcdTxnResponse, EtcdError> {
        let succeeded = txn.compares.iter().all(|c| self.holds(c));
        let ops = if succeeded { &txn.then } else { &txn.otherwise };
        let unknown_lease = ops.iter().any(|op| {
            matches!(op, EtcdOp::Put { lease, .. }
                if *lease != 0 && !self.leases.contains_key(&(*lease as u64)))
        });
        if unknown_lease {
            return Err(EtcdError::LeaseNotFound);
        }
        let writes = ops.iter().any(|op| match op {
            EtcdOp::Put { .. } => true,
            EtcdOp::Delete { key } => self.kv.contains_key(key),
            EtcdOp::Get { .. } => false,
        });
        if writes {
            self.revision += 1;
        }
        let revision = self.revision as i64;
        let mut unlocked = Vec::new();
        let mut responses = Vec::new();
        for op in ops {
            responses.push(match op {
                EtcdOp::Put { key, value, lease } => {
                    let kv = self.kv.entry(key.clone()).or_insert_with(|| EtcdKeyValue {
                        key: key.clone(),
                        value: Vec::new(),
                        create_revision: revision,
                        mod_revision: revision,
                        version: 0,
                        lease: 0,
                    });
                    kv.value.clone_from(value);
                    kv.mod_revision = revision;
                    kv.version += 1;
                    kv.lease = *lease;
                    EtcdOpResponse::Put
                }
                EtcdOp::Delete { key } => match self.kv.remove(key) {
                    Some(kv) => {
                        let lease = kv.lease as u64;
                        let state = self.leases.get_mut(&lease);
                        if let Some(state) =
                            state.filter(|s| s.key == Some(kv.create_revision as u64))
                        {
                            state.key = None;
                            self.keys.remove(&(kv.create_revision as u64));
                            self.holder.take_if(|&mut held| held == lease);
                            unlocked.push((state.client, lease));
                        }
                        EtcdOpResponse::Delete { deleted: 1 }
                    }
                    None => EtcdOpResponse::Delete { deleted: 0 },
                },
                EtcdOp::Get { key } => EtcdOpResponse::Get(self.kv.get(key).cloned()),
            });
        }
        for (client, lease) in unlocked {
            // The holder is told by its own call's answer, not by this ack.
            let _ack = self.grants.release(ctx, client, lease);
        }
        self.grant_next(ctx);
        Ok(EtcdTxnResponse {
            succeeded,
            revision,
            responses,
        })
    }

    /// The lease `client`'s request `req` created, if it was seen already.
    fn seen(&self, client: NodeId, req: u64) -> Option<u64> {
        self.leases
            .iter()
            .find(|(_, s)| s.client == client && s.made_by == req)
            .map(|(&lease, _)| lease)
    }

    /// The watch firing: the lowest key's lease holds the lock, if free.
    fn grant_next(&mut self, ctx: &mut Context<'_, Msg>) {
        if self.holder.is_some() {
            return;
        }
        let Some((&key, &lease)) = self.keys.iter().next() else {
            return;
        };
        let state = &self.leases[&lease];
        let (client, req, ttl) = (state.client, state.req, state.ttl);
        let token = self.tokens.then_some(key);
        self.holder = Some(lease);
        self.grants.grant(ctx, client, req, lease, token, ttl);
    }

    /// A second copy of acquire `req`, whose lease is `lease`: the same
    /// answers again (the lease, and the grant if its key holds the lock).
    fn answer_again(&mut self, ctx: &mut Context<'_, Msg>, client: NodeId, req: u64, lease: u64) {
        let ttl = self.leases[&lease].ttl;
        ctx.send(client, created(req, lease, ttl));
        if self.holder == Some(lease) {
            self.grants.repeat(ctx, client, req, lease, ttl);
        }
    }
}

impl Actor<Msg> for EtcdServer {
    fn on_start(&mut self, ctx: &mut Context<'_, Msg>) {
        // After a restart every lease gets its full TTL again (the lessor's
        // promotion); timers did not survive the crash.
        for (&lease, state) in self.leases.iter_mut() {
            state.timer = ctx.set_timer(state.ttl, lease);
        }
    }

    fn on_message(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, msg: Msg) {
        match msg {
            Msg::Acquire { req } => {
                if let Some(lease) = self.seen(from, req) {
                    self.answer_again(ctx, from, req, lease);
                    return;
                }
                // LeaseGrant and Lock in one request: the lease, then its key.
                let lease = self.create_lease(ctx, from, req, self.ttl);
                self.put_key(lease, req);
                let ttl = self.ttl;
                ctx.send(from, created(req, lease, ttl));
                self.grant_next(ctx);
            }
            Msg::Renew { lease, req } => {
                let extended = match self.leases.get_mut(&lease) {
                    Some(state) if state.client == from => {
                        ctx.cancel_timer(state.timer);
                        state.timer = ctx.set_timer(state.ttl, lease);
                        Some(state.ttl)
                    }
                    _ => None,
                };
                // Every lease can be kept alive; only the holder's renewal
                // moves the lock's lease end (the ledger journals that one).
                let ttl = extended;
                self.grants.renew(ctx, from, lease, req, ttl);
            }
            Msg::Release { lease } => {
                let timer = self
                    .leases
                    .get(&lease)
                    .filter(|state| state.client == from)
                    .map(|state| state.timer);
                if let Some(timer) = timer {
                    ctx.cancel_timer(timer);
                    self.delete_lease(lease);
                }
                let ack = self.grants.release(ctx, from, lease);
                if timer.is_some() {
                    self.grant_next(ctx);
                }
                ack.send(ctx);
            }
            Msg::Design(ref call) => {
                if let Some(call) = call.downcast_ref::<EtcdCall>() {
                    self.on_call(ctx, from, call);
                }
            }
            _ => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Context<'_, Msg>, id: TimerId, lease: u64) {
        if self.leases.get(&lease).is_some_and(|s| s.timer == id) {
            let client = self.delete_lease(lease).expect("the lease was just seen");
            self.grants.expire(ctx, client, lease);
            self.grant_next(ctx);
        }
    }
}

/// The client half: the single-server acquire ([`SingleServer`]) and a
/// session, its lease kept alive ([`KeepAlive`]) from its creation until
/// the client releases it or hears it is gone.
#[derive(Debug)]
pub struct EtcdClient {
    single: SingleServer,
    keepalive: KeepAlive<EtcdTimer>,
}

/// The etcd client's one timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EtcdTimer {
    /// The lease's next keep-alive is due.
    KeepAlive,
}

crate::design::lock_client::timer_tags!(EtcdTimer { KeepAlive });

impl EtcdClient {
    /// Talks to the etcd node `lock`, refreshing its lease every `keepalive`.
    pub fn new(lock: impl Into<String>, keepalive: Duration) -> Self {
        EtcdClient {
            single: SingleServer::new(lock),
            keepalive: KeepAlive::new(
                keepalive,
                |lease| Msg::design(EtcdCall::KeepAlive { lease }),
                EtcdTimer::KeepAlive,
            ),
        }
    }
}

impl LockClient for EtcdClient {
    type Timer = EtcdTimer;

    fn acquire(&mut self, ctx: &mut LockContext<'_, '_, EtcdTimer>) {
        self.single.acquire(&mut ctx.untimed());
    }

    fn release(&mut self, ctx: &mut LockContext<'_, '_, EtcdTimer>) {
        let held = self.single.held().is_some();
        self.single.release(&mut ctx.untimed());
        if let Some(lease) = self.keepalive.lease().filter(|_| !held) {
            // A lease whose key is still waiting: revoke it all the same.
            let lock = self.single.lock(ctx);
            ctx.send(lock, Msg::Release { lease });
        }
        self.keepalive.stop(ctx);
    }

    fn on_message(
        &mut self,
        ctx: &mut LockContext<'_, '_, EtcdTimer>,
        from: NodeId,
        msg: &Msg,
    ) -> LockEvent {
        match msg.as_design::<EtcdCall>() {
            Some(&EtcdCall::LeaseCreated { req, lease, .. }) if self.single.is_waiting_for(req) => {
                self.keepalive.start(ctx, lease);
                LockEvent::Nothing
            }
            Some(&EtcdCall::LeaseCreated { lease, .. })
                if self.keepalive.lease() != Some(lease) =>
            {
                // For an acquire given up already: revoke the lease.
                ctx.send(from, Msg::Release { lease });
                LockEvent::Nothing
            }
            Some(&EtcdCall::KeepAliveReply { lease, ttl })
                if ttl.is_zero() && self.keepalive.lease() == Some(lease) =>
            {
                // The session is gone (etcd closes `Session.Done()`), and
                // a waiting key with it: it will never be granted.
                self.keepalive.stop(ctx);
                self.single.lost()
            }
            _ => {
                let event = self.single.on_message(&mut ctx.untimed(), from, msg);
                match &event {
                    LockEvent::Acquired(grant) => self.keepalive.start(ctx, grant.lease),
                    LockEvent::Lost => self.keepalive.stop(ctx),
                    _ => {}
                }
                event
            }
        }
    }

    fn on_timer(
        &mut self,
        ctx: &mut LockContext<'_, '_, EtcdTimer>,
        timer: EtcdTimer,
    ) -> LockEvent {
        let EtcdTimer::KeepAlive = timer;
        let lock = self.single.lock(ctx);
        self.keepalive.on_timer(ctx, lock);
        LockEvent::Nothing
    }

    fn renew(&mut self, ctx: &mut LockContext<'_, '_, EtcdTimer>) -> bool {
        self.single.renew(&mut ctx.untimed())
    }

    /// Queued once the server created the lease and its key: the grant
    /// comes when the key of the previous revision is deleted.
    fn is_queued(&self) -> bool {
        self.single.is_waiting() && self.keepalive.lease().is_some()
    }

    fn recheck(&mut self, ctx: &mut LockContext<'_, '_, EtcdTimer>) {
        self.single.resend(ctx);
    }

    fn on_crash(&mut self) {
        self.single.on_crash();
        self.keepalive.on_crash();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::design::lock_client::timer_tag;
    use sim::testing::Harness;

    const CLIENT1: NodeId = 1;
    const CLIENT2: NodeId = 2;
    const TTL: Duration = Duration::from_secs(2);

    fn server() -> (Harness, EtcdServer) {
        (
            Harness::new(&["lock", "client1", "client2"], 0),
            EtcdServer::new(TTL, true),
        )
    }

    fn keep_alive(lease: u64) -> Msg {
        Msg::design(EtcdCall::KeepAlive { lease })
    }

    fn granted(sends: &[(NodeId, Msg)]) -> Option<(NodeId, u64, Option<u64>)> {
        sends.iter().find_map(|(to, m)| match m {
            Msg::Granted { lease, token, .. } => Some((*to, *lease, *token)),
            _ => None,
        })
    }

    #[test]
    fn the_lowest_revision_holds_and_the_next_is_granted_on_release() {
        let (mut h, mut s) = server();
        let step = h.message(&mut s, CLIENT1, Msg::Acquire { req: 1 });
        let (to, created) = &step.sends[0];
        assert_eq!(*to, CLIENT1);
        let created = created.as_design();
        assert!(matches!(
            created,
            Some(EtcdCall::LeaseCreated { lease: 1, .. })
        ));
        // Revision 1 is the empty store; the first key is revision 2.
        assert_eq!(granted(&step.sends), Some((CLIENT1, 1, Some(2))));
        let step = h.message(&mut s, CLIENT2, Msg::Acquire { req: 1 });
        assert_eq!(granted(&step.sends), None);
        let step = h.message(&mut s, CLIENT1, Msg::Release { lease: 1 });
        assert_eq!(step.events[0].0, "released");
        // client2's key was created at revision 3: its token.
        assert_eq!(granted(&step.sends), Some((CLIENT2, 2, Some(3))));
    }

    #[test]
    fn an_expired_lease_loses_its_key_and_keepalives_are_answered_with_zero() {
        let (mut h, mut s) = server();
        let step = h.message(&mut s, CLIENT1, Msg::Acquire { req: 1 });
        let timer = step.timers[0].0;
        h.message(&mut s, CLIENT2, Msg::Acquire { req: 1 });
        // A keep-alive resets the lease's timer.
        let step = h.message(&mut s, CLIENT1, keep_alive(1));
        assert_eq!(step.cancelled, vec![timer]);
        let timer = step.timers[0].0;
        let step = h.timer(&mut s, timer, 1);
        assert_eq!(step.events[0].0, "expired");
        // Revisions: keys 2 and 3, the deletion 4; client2's token is 3.
        assert_eq!(granted(&step.sends), Some((CLIENT2, 2, Some(3))));
        let step = h.message(&mut s, CLIENT1, keep_alive(1));
        assert_eq!(
            step.sends,
            vec![(
                CLIENT1,
                Msg::design(EtcdCall::KeepAliveReply {
                    lease: 1,
                    ttl: Duration::ZERO
                })
            )]
        );
        // The next key is created after the deletion: revision 5.
        let step = h.message(&mut s, CLIENT1, Msg::Release { lease: 2 });
        assert!(step.event("released").is_none(), "not client1's lease");
        h.message(&mut s, CLIENT2, Msg::Release { lease: 2 });
        let step = h.message(&mut s, CLIENT1, Msg::Acquire { req: 2 });
        assert_eq!(granted(&step.sends), Some((CLIENT1, 3, Some(6))));
    }

    #[test]
    fn the_client_keeps_its_lease_alive_and_learns_when_it_is_lost() {
        use crate::design::client::{Client, ClientConfig};
        const LOCK: NodeId = 1;
        let mut h = Harness::new(&["client1", "lock", "storage"], 0);
        let config = ClientConfig {
            work: Duration::from_secs(5),
            ..ClientConfig::default()
        };
        let mut c = Client::with_protocol(config, Box::new(EtcdClient::new("lock", TTL / 3)));
        let step = h.start(&mut c);
        let step = h.timer(&mut c, step.timers[0].0, step.timers[0].2);
        assert_eq!(step.sends, vec![(LOCK, Msg::Acquire { req: 1 })]);
        let created = created(1, 9, TTL);
        let step = h.message(&mut c, LOCK, created);
        let (keepalive, every, tag) = step.timers[0];
        assert_eq!((every, tag), (TTL / 3, timer_tag(&EtcdTimer::KeepAlive)));
        let grant = Msg::Granted {
            req: 1,
            lease: 9,
            token: Some(2),
            ttl: TTL,
        };
        let step = h.message(&mut c, LOCK, grant);
        assert!(step.event("acquired").is_some());
        let step = h.timer(&mut c, keepalive, tag);
        assert_eq!(step.sends, vec![(LOCK, keep_alive(9))]);
        let gone = Msg::design(EtcdCall::KeepAliveReply {
            lease: 9,
            ttl: Duration::ZERO,
        });
        // Told while working: the round is abandoned, nothing is written.
        let step = h.message(&mut c, LOCK, gone);
        assert!(step.event("lost").is_some());
        assert_eq!(step.sends, vec![]);
        assert!(c.is_done());
    }

    #[test]
    fn etcds_own_calls_grant_a_lease_lock_a_key_on_it_and_unlock_it() {
        let (mut h, mut s) = server();
        let grant = |req| {
            Msg::design(EtcdCall::LeaseGrant {
                req,
                ttl: Duration::ZERO,
            })
        };
        let step = h.message(&mut s, CLIENT1, grant(1));
        assert_eq!(step.sends, vec![(CLIENT1, created(1, 1, TTL))]);
        // A lease alone holds nothing, and moves no revision.
        assert!(step.events.is_empty());
        h.message(&mut s, CLIENT2, grant(1));
        let lock = |req, lease| Msg::design(EtcdCall::Lock { req, lease });
        let step = h.message(&mut s, CLIENT1, lock(2, 1));
        assert_eq!(granted(&step.sends), Some((CLIENT1, 1, Some(2))));
        let step = h.message(&mut s, CLIENT2, lock(2, 2));
        assert_eq!(granted(&step.sends), None);
        // A retried Lock on the held lease is answered again, for itself.
        let step = h.message(&mut s, CLIENT1, lock(3, 1));
        assert!(step.events.is_empty());
        assert!(matches!(
            step.sends[..],
            [(
                CLIENT1,
                Msg::Granted {
                    req: 3,
                    lease: 1,
                    ..
                }
            )]
        ));
        // Unlock deletes the key (revision 4) and the next key holds; the
        // lease lives on and is kept alive.
        let step = h.message(&mut s, CLIENT1, Msg::design(EtcdCall::Unlock { lease: 1 }));
        assert_eq!(step.events[0].0, "released");
        assert_eq!(granted(&step.sends), Some((CLIENT2, 2, Some(3))));
        let step = h.message(&mut s, CLIENT1, keep_alive(1));
        assert_eq!(
            step.sends,
            vec![(
                CLIENT1,
                Msg::design(EtcdCall::KeepAliveReply { lease: 1, ttl: TTL })
            )]
        );
        // Not client2's lease, and a lease that is gone: not found.
        for (client, lease) in [(CLIENT2, 1), (CLIENT1, 9)] {
            let step = h.message(&mut s, client, lock(5, lease));
            assert_eq!(
                step.sends,
                vec![(client, Msg::design(EtcdCall::LeaseNotFound { req: 5 }))]
            );
        }
        // A lease may ask for its own TTL.
        let step = h.message(
            &mut s,
            CLIENT1,
            Msg::design(EtcdCall::LeaseGrant {
                req: 6,
                ttl: Duration::from_secs(7),
            }),
        );
        assert_eq!(step.timers[0].1, Duration::from_secs(7));
    }

    #[test]
    fn a_renewal_keeps_the_holders_lease_alive_and_a_duplicate_acquire_reuses_its_lease() {
        let (mut h, mut s) = server();
        let first = h.message(&mut s, CLIENT1, Msg::Acquire { req: 1 });
        // The same request again: the same lease and grant, no second key.
        let again = h.message(&mut s, CLIENT1, Msg::Acquire { req: 1 });
        assert_eq!(again.sends, first.sends);
        assert!(again.events.is_empty());
        let timer = first.timers[0].0;
        let step = h.message(&mut s, CLIENT1, Msg::Renew { lease: 1, req: 7 });
        assert_eq!(step.cancelled, vec![timer]);
        assert!(step.event("renewed").is_some());
        let ok = Msg::RenewReply {
            lease: 1,
            req: 7,
            ok: true,
            ttl: TTL,
        };
        assert_eq!(step.sends, vec![(CLIENT1, ok)]);
        // Not client2's lease to renew.
        let step = h.message(&mut s, CLIENT2, Msg::Renew { lease: 1, req: 1 });
        assert!(step.event("renewed").is_none());
        assert!(matches!(step.sends[0].1, Msg::RenewReply { ok: false, .. }));
    }
}
