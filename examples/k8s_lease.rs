//! `k8s_lease`: leader election on a Kubernetes Lease object, in the shape of
//! client-go's `leaderelection` with a `LeaseLock`.
//!
//! The API server stores one Lease (`holderIdentity`, `leaseDurationSeconds`,
//! `acquireTime`, `renewTime`, `leaseTransitions`) under a `resourceVersion`;
//! a `PUT` naming a stale one is a `409 Conflict`. It never expires anything:
//! a candidate takes the lease over when `renewTime + leaseDurationSeconds`
//! has passed on its **own** wall clock, so a paused leader (or a clock that
//! runs ahead) lets two lead at once. The leader renews every `retry_period`
//! and gives up leading when no renewal succeeded for `renew_deadline`. The
//! `resourceVersion` of the `PUT` that made it leader is its fencing token.
//!
//! The design's `Candidate` is sans-IO, driven by fencesim's bundled client.
//! The same election written as async code, as it runs in a cluster, is in
//! `k8s_lease/`: a kube-shaped API client (`kube.rs`) and client-go's
//! `LeaderElector` over it, the process `client-go` (`client_go.rs`).
//!
//! ```text
//! cargo run --example k8s_lease -- check examples/k8s_lease/
//! cargo run --release --example k8s_lease -- explore examples/k8s_lease/unfenced.toml
//! ```

use std::time::Duration;

use fencesim::design::catalog::Registry;
use fencesim::design::config::key;
use fencesim::design::grants::Grants;
use fencesim::design::lock_client::{Grant, LockClient, LockContext, LockEvent};
use fencesim::design::node_named;
use fencesim::protocol::{Msg, Payload};
use fencesim::sim::{Actor, Context, NodeId};

/// The Lease object's spec and its `resourceVersion`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lease {
    holder: Option<String>,
    duration: Duration,
    /// Wall-clock readings of the writer, nanoseconds.
    acquire_time: i64,
    renew_time: i64,
    transitions: u64,
    resource_version: u64,
}

/// The API server's protocol: `GET`, `PUT` and their answers. A `PUT` that
/// succeeds is answered through the grant ledger (granted, renewed, released).
#[derive(Clone, Debug, PartialEq)]
pub enum Api {
    Get { req: u64 },
    Object { req: u64, lease: Lease },
    Put { req: u64, lease: Lease },
    Conflict { req: u64 },
}

impl Payload for Api {
    fn summary(&self) -> String {
        let show = |l: &Lease| {
            let holder = l.holder.as_deref().unwrap_or("none");
            format!("holder={holder} rv={}", l.resource_version)
        };
        match self {
            Api::Get { .. } => "GET lease".into(),
            Api::Object { lease, .. } => format!("lease {}", show(lease)),
            Api::Put { lease, .. } => format!("PUT lease {}", show(lease)),
            Api::Conflict { .. } => "409 Conflict".into(),
        }
    }
}

fencesim::lock_design! {
    pub struct K8sLease as K8S_LEASE = "k8s_lease", "Kubernetes Lease leader election (client-go)";
    /// The election's settings, as client-go's `LeaderElectionConfig` names them.
    pub struct Config {
        ttl: Duration = key::ttl(),
            "leaseDurationSeconds: how long after renewTime a candidate waits, on its own clock";
        renew_deadline: Duration = key::shorter_than("ttl", Duration::from_secs(7)),
            "renewDeadline: the leader gives up leading when no renewal succeeded for this long";
        retry_period: Duration = key::shorter_than("renew_deadline", Duration::from_secs(2)),
            "retryPeriod: how often the leader renews";
        tokens: bool = key::tokens(true), "hand out the resourceVersion as the fencing token";
    }
    node = "apiserver";
    server(config, _index) => Box::new(ApiServer {
        tokens: config.tokens,
        grants: Grants::held_by_sessions(),
        ..ApiServer::default()
    });
    client(config, lock_nodes) => Box::new(Candidate {
        config: config.clone(),
        server: lock_nodes[0].clone(),
        ..Candidate::default()
    });
}

/// The API server: one Lease, compare-and-swap on its `resourceVersion`.
/// etcd keeps both across a crash: it forgets nothing.
#[derive(Default)]
struct ApiServer {
    tokens: bool,
    grants: Grants,
    lease: Lease,
    /// The grant the current holder's `PUT` made: (client, its lease id).
    leader: Option<(NodeId, u64)>,
}

impl Actor<Msg> for ApiServer {
    /// A `PUT` at the current `resourceVersion` is stored at the next one. A
    /// new term (another holder, or a new `acquireTime`) is a grant whose
    /// lease id and token are that version, and ends the previous holder's;
    /// the holder's own `PUT` is a renewal, or without a holder a release.
    fn on_message(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, msg: Msg) {
        let current = self.lease.resource_version;
        let (req, mut lease) = match msg.as_design::<Api>() {
            Some(Api::Put { req, lease }) if lease.resource_version == current => {
                (*req, lease.clone())
            }
            Some(Api::Put { req, .. }) => {
                return ctx.send(from, Msg::design(Api::Conflict { req: *req }))
            }
            Some(Api::Get { req }) => {
                let (req, lease) = (*req, self.lease.clone());
                return ctx.send(from, Msg::design(Api::Object { req, lease }));
            }
            _ => return,
        };
        let term = |l: &Lease| (l.holder.clone(), l.acquire_time);
        let new_term = lease.holder.is_some() && term(&lease) != term(&self.lease);
        let (rv, holder, duration) = (current + 1, lease.holder.is_some(), lease.duration);
        lease.resource_version = rv;
        self.lease = lease;
        match (new_term, self.leader.filter(|&(client, _)| client == from)) {
            (true, _) => {
                if let Some((client, id)) = self.leader.replace((from, rv)) {
                    self.grants.expire_because(ctx, client, id, "takeover");
                }
                let token = self.tokens.then_some(rv);
                self.grants.grant(ctx, from, req, rv, token, duration);
            }
            (false, Some((_, id))) if holder => {
                self.grants.renew(ctx, from, id, req, Some(duration))
            }
            (false, Some((_, id))) => {
                self.leader = None;
                self.grants.release(ctx, from, id).send(ctx);
            }
            (false, None) => {}
        }
    }
}

/// A candidate: `GET`, then `PUT` if the lease is free, expired on its own
/// clock, or its own.
#[derive(Default)]
struct Candidate {
    config: Config,
    server: String,
    req: u64,
    /// The request awaited and whether it is a renewal.
    waiting: Option<(u64, bool)>,
    /// What it last wrote, and its `resourceVersion` once stored.
    written: Option<Lease>,
    /// Leading: since when (monotonic) the last renewal succeeded.
    renewed_at: Option<Duration>,
    /// Terms led, to tell this term's renewal loop from an earlier one's.
    term: u64,
}

impl Candidate {
    fn send(&mut self, ctx: &mut Context<'_, Msg>, api: impl FnOnce(u64) -> Api, renewal: bool) {
        self.req += 1;
        self.waiting = Some((self.req, renewal));
        let server = node_named(ctx, &self.server);
        ctx.send(server, Msg::design(api(self.req)));
    }

    /// The `PUT` to make of the lease read: a renewal of its own lease, or
    /// a claim of one that is free, its own, or expired on its wall clock.
    fn claim(&self, ctx: &Context<'_, Msg>, read: &Lease, renewal: bool) -> Option<Lease> {
        let (now, me) = (ctx.wall_ns(), ctx.name().to_owned());
        let mine = read.holder.as_ref() == Some(&me);
        if renewal {
            return mine.then(|| Lease {
                renew_time: now,
                ..read.clone()
            });
        }
        let expired = read.renew_time + read.duration.as_nanos() as i64 <= now;
        (read.holder.is_none() || mine || expired).then(|| Lease {
            holder: Some(me),
            duration: self.config.ttl,
            acquire_time: now,
            renew_time: now,
            transitions: read.transitions + u64::from(!mine),
            resource_version: read.resource_version,
        })
    }

    /// Its `PUT` was stored, at the next `resourceVersion`: it leads on.
    fn stored(&mut self, ctx: &Context<'_, Msg>) {
        self.waiting = None;
        if let Some(lease) = &mut self.written {
            lease.resource_version += 1;
        }
        self.renewed_at = Some(ctx.now());
    }

    /// Not granted: denied while acquiring; while leading, lost (the lease
    /// is another's, or renewDeadline passed).
    fn refused(&mut self, renewal: bool) -> LockEvent {
        self.waiting = None;
        if !renewal {
            return LockEvent::Denied;
        }
        (self.written, self.renewed_at) = (None, None);
        LockEvent::Lost
    }
}

impl LockClient for Candidate {
    /// The leader's renewal loop, one per term: its timer is the term.
    type Timer = u64;

    fn acquire(&mut self, ctx: &mut LockContext<'_, '_, u64>) {
        self.send(ctx, |req| Api::Get { req }, false);
    }

    fn release(&mut self, ctx: &mut LockContext<'_, '_, u64>) {
        // client-go's ReleaseOnCancel: the lease without a holder.
        if let (Some(mut lease), Some(_)) = (self.written.take(), self.renewed_at.take()) {
            lease.holder = None;
            self.send(ctx, |req| Api::Put { req, lease }, false);
        }
        self.waiting = None;
    }

    fn on_message(
        &mut self,
        ctx: &mut LockContext<'_, '_, u64>,
        _: NodeId,
        msg: &Msg,
    ) -> LockEvent {
        let Some((awaited, renewal)) = self.waiting else {
            return LockEvent::Nothing;
        };
        match (msg, msg.as_design::<Api>()) {
            (_, Some(Api::Object { req, lease })) if *req == awaited => {
                let Some(lease) = self.claim(ctx, lease, renewal) else {
                    return self.refused(renewal);
                };
                self.written = Some(lease.clone());
                self.send(ctx, |req| Api::Put { req, lease }, renewal);
                LockEvent::Nothing
            }
            (_, Some(Api::Conflict { req })) if *req == awaited => self.refused(renewal),
            (Msg::Granted { req, lease, .. }, _) if *req == awaited => {
                self.stored(ctx);
                self.term += 1;
                ctx.set_timer(self.config.retry_period, self.term);
                // The lease id is the resourceVersion, and so is the token.
                let token = self.config.tokens.then_some(*lease);
                LockEvent::Acquired(Grant::new(*lease, token, self.config.renew_deadline))
            }
            (Msg::RenewReply { req, ok: true, .. }, _) if *req == awaited => {
                self.stored(ctx);
                LockEvent::Renewed(self.config.renew_deadline)
            }
            _ => LockEvent::Nothing,
        }
    }

    fn on_timer(&mut self, ctx: &mut LockContext<'_, '_, u64>, term: u64) -> LockEvent {
        let Some(renewed_at) = self.renewed_at.filter(|_| term == self.term) else {
            return LockEvent::Nothing; // a loop of an earlier term
        };
        // Like client-go's renew loop, it tries once more before it looks at
        // the deadline: a leader that was paused asks the API server first.
        if self.waiting.is_some() && ctx.now() >= renewed_at + self.config.renew_deadline {
            return self.refused(true);
        }
        ctx.set_timer(self.config.retry_period, term);
        self.send(ctx, |req| Api::Get { req }, true);
        LockEvent::Nothing
    }

    fn on_crash(&mut self) {
        // Request ids and terms stay new: answers from before never match.
        self.refused(true);
    }
}

#[path = "k8s_lease/client_go.rs"]
mod client_go;

/// The whole command line, with `k8s_lease` and the process `client-go`.
fn main() -> std::process::ExitCode {
    let mut registry = Registry::builtin();
    registry.add_lock(K8sLease);
    client_go::register(&mut registry);
    fencesim::cli::main_with(registry)
}
