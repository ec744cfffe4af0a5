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
//! The design's `Candidate` is sans-IO, a state machine fencesim's bundled
//! client drives. The same election is also written here as async code, the
//! way it runs in a cluster: `kube`, a simulated API client whose calls read like
//! the `kube` crate's `Api<Lease>` (`get`, `replace`, a 409 `Conflict`),
//! and the process `client-go`, client-go's `LeaderElector` over it, whose
//! work writes on after it stopped leading (cilium issue 42920) unless
//! `check_lease = true`. Its scenarios name it with `process = "client-go"`
//! and set its `lease_duration`, `renew_deadline`, `retry_period` and
//! `writes`.
//!
//! ```text
//! cargo run --example k8s_lease -- check examples/k8s_lease/
//! cargo run --release --example k8s_lease -- explore examples/k8s_lease/unfenced.toml
//! cargo run --release --example k8s_lease -- explore examples/k8s_lease/client-go.toml --generic --seeds 0..2000
//! cargo run --release --example k8s_lease -- explore examples/k8s_lease/client-go-fenced.toml --generic --seeds 0..10000
//! ```

use std::time::Duration;

use fencesim::design::catalog::{DesignInfo, Registry};
use fencesim::design::config::{key, DesignConfig};
use fencesim::design::grants::Grants;
use fencesim::design::lock_client::{Grant, LockClient, LockEvent, PROTOCOL_TAG};
use fencesim::design::{node_named, LockDesign};
use fencesim::protocol::{Msg, Payload};
use fencesim::sim::{Actor, Context, NodeId, TimerId};

fencesim::design_config! {
    /// The election's settings, as client-go's `LeaderElectionConfig` names them.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Config {
        ttl: Duration = key::ttl(),
            "leaseDurationSeconds: how long after renewTime a candidate waits, on its own clock";
        renew_deadline: Duration = key::shorter_than("ttl", Duration::from_secs(7)),
            "renewDeadline: the leader gives up leading when no renewal succeeded for this long";
        retry_period: Duration = key::shorter_than("renew_deadline", Duration::from_secs(2)),
            "retryPeriod: how often the leader renews";
        tokens: bool = key::tokens(true), "hand out the resourceVersion as the fencing token";
    }
}

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

/// The design as the registry knows it.
struct K8sLease;

impl LockDesign for K8sLease {
    type Config = Config;
    fn info(&self) -> DesignInfo {
        let summary = "Kubernetes Lease leader election (client-go)";
        DesignInfo::lock("k8s_lease", summary, Config::KEYS)
    }
    fn server(&self, config: &Config, _index: usize) -> Box<dyn Actor<Msg>> {
        let mut server = ApiServer::default();
        (server.tokens, server.grants) = (config.tokens, Grants::held_by_sessions());
        Box::new(server)
    }
    fn client(&self, config: &Config, lock_nodes: &[String]) -> Box<dyn LockClient> {
        let mut candidate = Candidate::default();
        (candidate.config, candidate.server) = (config.clone(), lock_nodes[0].clone());
        Box::new(candidate)
    }
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
    fn on_start(&mut self, _: &mut Context<'_, Msg>) {}

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

    fn on_timer(&mut self, _: &mut Context<'_, Msg>, _: TimerId, _: u64) {}
}

/// Timer tags of the leader's renewal loop: `RENEW + term`.
const RENEW: u64 = PROTOCOL_TAG;

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
    fn acquire(&mut self, ctx: &mut Context<'_, Msg>) {
        self.send(ctx, |req| Api::Get { req }, false);
    }

    fn release(&mut self, ctx: &mut Context<'_, Msg>) {
        // client-go's ReleaseOnCancel: the lease without a holder.
        if let (Some(mut lease), Some(_)) = (self.written.take(), self.renewed_at.take()) {
            lease.holder = None;
            self.send(ctx, |req| Api::Put { req, lease }, false);
        }
        self.waiting = None;
    }

    fn on_message(&mut self, ctx: &mut Context<'_, Msg>, _: NodeId, msg: &Msg) -> LockEvent {
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
                ctx.set_timer(self.config.retry_period, RENEW + self.term);
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

    fn on_timer(&mut self, ctx: &mut Context<'_, Msg>, tag: u64) -> LockEvent {
        let Some(renewed_at) = self.renewed_at.filter(|_| tag == RENEW + self.term) else {
            return LockEvent::Nothing; // a loop of an earlier term
        };
        // Like client-go's renew loop, it tries once more before it looks at
        // the deadline: a leader that was paused asks the API server first.
        if self.waiting.is_some() && ctx.now() >= renewed_at + self.config.renew_deadline {
            return self.refused(true);
        }
        ctx.set_timer(self.config.retry_period, tag);
        self.send(ctx, |req| Api::Get { req }, true);
        LockEvent::Nothing
    }

    fn on_crash(&mut self) {
        // Request ids and terms stay new: answers from before never match.
        self.refused(true);
    }
}

/// A simulated Kubernetes API client for processes: its calls read like the
/// `kube` crate's `Api<Lease>`, its objects like k8s-openapi's `Lease`, and
/// it speaks the API server's `Api` messages over fencesim's
/// network (every fault applies, every message is journaled).
///
/// ```ignore
/// let client = kube::Client::new(&h, "lock", Duration::from_secs(1));
/// let leases: kube::Api<kube::Lease> = kube::Api::namespaced(client, "default");
/// let mut lease = leases.get("leader").await?;
/// lease.spec.as_mut().unwrap().renew_time = Some(kube::MicroTime(h.wall_ns()));
/// match leases.replace("leader", &kube::PostParams::default(), &lease).await {
///     Ok(stored) => {} // stored.metadata.resource_version: the next version
///     Err(kube::Error::Api(e)) if e.code == 409 => {} // written since it was read
///     Err(e) => {} // kube::Error::Service: no answer in time
/// }
/// ```
///
/// What differs from kube, and why:
/// - The API server holds one Lease, so every name and namespace is that
///   Lease. It exists from the start, empty, at `resourceVersion` `"0"`:
///   client-go would create it after a 404, and there is no `create`.
/// - `replace` needs `metadata.resourceVersion`, as the server only compares
///   and swaps (Kubernetes also has unconditional updates): without one, or
///   with one that is not a number, it fails as the API server would (422
///   `Invalid`) without asking it.
/// - `resourceVersion` is the Lease's own counter, a decimal number, where
///   Kubernetes promises only an opaque string (etcd's revision): the
///   election takes its fencing token from it, as the sans-IO candidate does.
/// - A `MicroTime` is the writer's wall-clock reading in nanoseconds (the
///   model keeps what the node read), not an RFC 3339 time in microseconds.
///   `leaseDurationSeconds` is whole seconds, as in Kubernetes: a duration
///   the sans-IO candidate wrote in finer units reads rounded up.
/// - The server answers a `PUT` it stored through its grant ledger (the
///   grant a new term makes, a renewal, a release), and the client answers
///   `replace` with the object it sent at the next `resourceVersion`.
///   Being the client of one lock design, it also journals what that answer
///   makes its caller believe, as fencesim's bundled clients do: `acquired`
///   when a `replace` began a term (the grant's lease id and token, for the
///   Lease's duration), `renewed` when one extended it (for the Lease's
///   duration from when the `PUT` was sent; the sans-IO candidate, which
///   knows its renew deadline, journals that instead: only reports read
///   it, not the oracle). Giving up leading is the elector's decision, and
///   so are its probes (`denied`, `lost`, `released`).
///   `Api::fencing_token` is fencesim's addition: the token of the term
///   the latest `replace` began, which is its `resourceVersion` when the
///   server hands tokens out (`tokens = true`) and none otherwise.
/// - A request unanswered within the client's timeout fails as
///   `Error::Service` (kube reports its tower timeout so); the client does
///   not retry, as kube does not. `PostParams` holds nothing: the server has
///   no dry run and no field managers.
mod kube {
    use std::cell::Cell;
    use std::fmt;
    use std::marker::PhantomData;
    use std::rc::Rc;
    use std::time::Duration;

    use fencesim::process::{Env, Handle, Probe};
    use fencesim::protocol::Msg;
    use fencesim::sim::NodeId;
    use fencesim_env::Elapsed;

    use super::{Api as Call, Lease as Stored};

    /// Request ids, on the node's disk: unique in the run across crashes.
    const REQUESTS: &str = "kube/requests";

    /// k8s-openapi's `MicroTime`: here the writer's wall-clock reading, in
    /// nanoseconds.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
    pub struct MicroTime(pub i64);

    /// The object's `metadata`, as far as the server keeps it.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct ObjectMeta {
        pub name: Option<String>,
        pub namespace: Option<String>,
        pub resource_version: Option<String>,
    }

    /// `coordination.k8s.io/v1` `LeaseSpec`.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct LeaseSpec {
        pub holder_identity: Option<String>,
        pub lease_duration_seconds: Option<i32>,
        pub acquire_time: Option<MicroTime>,
        pub renew_time: Option<MicroTime>,
        pub lease_transitions: Option<i32>,
    }

    /// `coordination.k8s.io/v1` `Lease`.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct Lease {
        pub metadata: ObjectMeta,
        pub spec: Option<LeaseSpec>,
    }

    /// `kube::api::PostParams`: nothing to set here.
    #[derive(Clone, Copy, Debug, Default)]
    pub struct PostParams {}

    /// `kube::core::ErrorResponse`: the `Status` of a refused call.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct ErrorResponse {
        pub status: String,
        pub message: String,
        pub reason: String,
        pub code: u16,
    }

    /// What a call can fail with.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub enum Error {
        /// The API server refused the call (kube's `Error::Api`): 409
        /// `Conflict` for a stale `resourceVersion`.
        Api(ErrorResponse),
        /// No answer within the client's timeout (kube's `Error::Service`,
        /// carrying tower's `Elapsed`).
        Service(Elapsed),
    }

    impl fmt::Display for Error {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self {
                Error::Api(e) => write!(f, "ApiError: {} ({}): {}", e.message, e.reason, e.code),
                Error::Service(_) => f.write_str("ServiceError: request timed out"),
            }
        }
    }

    impl std::error::Error for Error {}

    /// The error the API server gives for a `PUT` at a stale version.
    fn conflict(name: &str) -> Error {
        Error::Api(ErrorResponse {
            status: "Failure".into(),
            message: format!(
                "Operation cannot be fulfilled on leases.coordination.k8s.io \"{name}\": the \
                 object has been modified; please apply your changes to the latest version and \
                 try again"
            ),
            reason: "Conflict".into(),
            code: 409,
        })
    }

    /// The error the API server gives for an update without a usable
    /// `resourceVersion`.
    fn invalid(name: &str, version: Option<&str>) -> Error {
        Error::Api(ErrorResponse {
            status: "Failure".into(),
            message: format!(
                "Lease.coordination.k8s.io \"{name}\" is invalid: metadata.resourceVersion: \
                 Invalid value: {version:?}: must be specified for an update"
            ),
            reason: "Invalid".into(),
            code: 422,
        })
    }

    /// `kube::Client`: the API server's node, and how long a request may
    /// wait for its answer (kube's `Config::read_timeout`).
    #[derive(Clone)]
    pub struct Client {
        handle: Handle<Msg>,
        server: NodeId,
        timeout: Duration,
        /// The term its latest `replace` began, until a release ends it.
        term: Rc<Cell<Option<Term>>>,
    }

    /// A term as the server's grant gave it: the lease id (the answer to a
    /// release names it) and the fencing token.
    #[derive(Clone, Copy, Debug)]
    struct Term {
        lease: u64,
        token: Option<u64>,
    }

    impl Client {
        /// A client of the API server node called `server`.
        ///
        /// # Panics
        /// If there is no node of that name.
        pub fn new(handle: &Handle<Msg>, server: &str, timeout: Duration) -> Client {
            let node = handle
                .node(server)
                .unwrap_or_else(|| panic!("no API server node called {server:?}"));
            Client {
                handle: handle.clone(),
                server: node,
                timeout,
                term: Rc::default(),
            }
        }

        fn next_req(&self) -> u64 {
            self.handle.disk().next_u64(REQUESTS)
        }

        fn send(&self, call: Call) {
            self.handle.send(self.server, Msg::design(call));
        }

        /// The first message from the server that `wanted` takes, within
        /// the timeout.
        async fn answer(&self, mut wanted: impl FnMut(&Msg) -> bool + Unpin) -> Result<Msg, Error> {
            let server = self.server;
            let recv = self
                .handle
                .recv_where(move |from, m| from == server && wanted(m));
            match self.handle.timeout(self.timeout, recv).await {
                Ok((_, msg)) => Ok(msg),
                Err(elapsed) => Err(Error::Service(elapsed)),
            }
        }
    }

    /// `kube::Api<K>`: the calls on one kind of object in one namespace.
    #[derive(Clone)]
    pub struct Api<K> {
        client: Client,
        namespace: String,
        kind: PhantomData<K>,
    }

    impl Api<Lease> {
        /// The Leases of `namespace`.
        pub fn namespaced(client: Client, namespace: &str) -> Self {
            Api {
                client,
                namespace: namespace.into(),
                kind: PhantomData,
            }
        }

        /// `GET`: the Lease `name`.
        pub async fn get(&self, name: &str) -> Result<Lease, Error> {
            let req = self.client.next_req();
            self.client.send(Call::Get { req });
            let msg = self
                .client
                .answer(move |m| {
                    matches!(m.as_design::<Call>(), Some(Call::Object { req: r, .. }) if *r == req)
                })
                .await?;
            match msg.as_design::<Call>() {
                Some(Call::Object { lease, .. }) => Ok(self.object(name, lease)),
                _ => unreachable!("only the object is taken"),
            }
        }

        /// `PUT`: stores `data` if its `resourceVersion` is still the
        /// Lease's, and answers the stored object; else a 409 `Conflict`.
        pub async fn replace(
            &self,
            name: &str,
            _params: &PostParams,
            data: &Lease,
        ) -> Result<Lease, Error> {
            let mut lease = Self::stored(name, data)?;
            let (req, sent) = (self.client.next_req(), self.client.handle.now());
            let release = lease.holder.is_none();
            let term = self.client.term.get().map(|t| t.lease);
            self.client.send(Call::Put {
                req,
                lease: lease.clone(),
            });
            let msg = self
                .client
                .answer(move |m| match m {
                    Msg::Granted { req: r, .. } | Msg::RenewReply { req: r, .. } => *r == req,
                    Msg::ReleaseAck { lease } => release && term == Some(*lease),
                    m => matches!(m.as_design::<Call>(), Some(Call::Conflict { req: r }) if *r == req),
                })
                .await?;
            let h = &self.client.handle;
            match msg {
                Msg::Granted {
                    lease: id,
                    token,
                    ttl,
                    ..
                } => {
                    self.client.term.set(Some(Term { lease: id, token }));
                    h.probe(Probe::Acquired {
                        lease: id,
                        token,
                        ttl,
                    });
                }
                Msg::RenewReply {
                    lease: id,
                    ok: true,
                    ttl,
                    ..
                } => h.probe(Probe::Renewed {
                    lease: id,
                    ttl,
                    asked_ago: h.now().saturating_sub(sent),
                }),
                Msg::ReleaseAck { .. } => self.client.term.set(None),
                // The server refuses a renewal only by a conflict.
                _ => return Err(conflict(name)),
            }
            lease.resource_version += 1;
            Ok(self.object(name, &lease))
        }

        /// fencesim's addition: the fencing token of the term the latest
        /// `replace` began, as the server's grant carried it.
        pub fn fencing_token(&self) -> Option<u64> {
            self.client.term.get().and_then(|t| t.token)
        }

        /// The server's Lease as the object `name`.
        fn object(&self, name: &str, stored: &Stored) -> Lease {
            let written = stored.resource_version > 0;
            let seconds = |d: Duration| d.as_secs() + u64::from(d.subsec_nanos() > 0);
            Lease {
                metadata: ObjectMeta {
                    name: Some(name.into()),
                    namespace: Some(self.namespace.clone()),
                    resource_version: Some(stored.resource_version.to_string()),
                },
                spec: Some(LeaseSpec {
                    holder_identity: stored.holder.clone(),
                    lease_duration_seconds: (!stored.duration.is_zero())
                        .then(|| i32::try_from(seconds(stored.duration)).unwrap_or(i32::MAX)),
                    acquire_time: written.then_some(MicroTime(stored.acquire_time)),
                    renew_time: written.then_some(MicroTime(stored.renew_time)),
                    lease_transitions: written
                        .then(|| i32::try_from(stored.transitions).unwrap_or(i32::MAX)),
                }),
            }
        }

        /// The server's Lease for the object `data`, or the API server's
        /// error for it.
        fn stored(name: &str, data: &Lease) -> Result<Stored, Error> {
            let version = data.metadata.resource_version.as_deref();
            let resource_version = version
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| invalid(name, version))?;
            let spec = data.spec.clone().unwrap_or_default();
            let whole = |n: Option<i32>| u64::try_from(n.unwrap_or(0)).unwrap_or(0);
            Ok(Stored {
                holder: spec.holder_identity.filter(|h| !h.is_empty()),
                duration: Duration::from_secs(whole(spec.lease_duration_seconds)),
                acquire_time: spec.acquire_time.map_or(0, |t| t.0),
                renew_time: spec.renew_time.map_or(0, |t| t.0),
                transitions: whole(spec.lease_transitions),
                resource_version,
            })
        }
    }
}

/// The process `client-go`: client-go's `LeaderElector` on a `LeaseLock`,
/// as async code over the `kube` client above.
///
/// A candidate tries to acquire every `retry_period` (jittered as client-go
/// does): it reads the Lease and replaces it with itself as the holder when
/// it is free, its own, or expired on its own wall clock (`renewTime +
/// leaseDurationSeconds`). Once leader, a task renews every `retry_period`
/// (read, then replace with a new `renewTime` while it is still the
/// holder), and the leader stops leading when no renewal has succeeded for
/// `renew_deadline`. The work writes `writes` times, `work` apart, with the
/// term's token; then the renewal task stops and the leader releases the
/// Lease (client-go's `ReleaseOnCancel`: no holder, at the version it last
/// saw) and journals `released`.
///
/// The work does not look at the leadership: it writes on after the leader
/// stopped leading (cilium issue 42920, where the operator kept acting after
/// its lease was lost). With `check_lease = true` it checks the leadership
/// before each write, as code that watches client-go's context does, and
/// gives the term up (`lost`): that narrows the window without closing it;
/// a storage that checks the token closes it.
///
/// Where it differs from client-go: each acquisition starts a new term (a
/// new `acquireTime`, so a new token), even of a Lease still its own, as the
/// sans-IO candidate does; and a renewal only renews a Lease it holds,
/// never takes one over.
mod client_go {
    use std::cell::RefCell;
    use std::rc::Rc;
    use std::time::Duration;

    use fencesim::design::catalog::{KeyKind, MAX_DURATION};
    use fencesim::design::client::ClientConfig;
    use fencesim::design::config::key;
    use fencesim::process::{Env, Handle, Probe, Process, SimStorage, Storage};
    use fencesim::protocol::{Msg, Op};
    use fencesim_env::{select, Either, Signal};

    use super::kube::{self, Api, Lease, LeaseSpec, MicroTime, PostParams};

    fencesim::design_config! {
        /// client-go's `LeaderElectionConfig`: keys of the `[[clients]]`
        /// tables that name the process.
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub struct ElectorConfig {
            lease_duration: Duration = key::duration(WHOLE_SECONDS, Duration::from_secs(15)),
                "LeaseDuration: how long after renewTime a candidate waits, on its own wall \
                 clock, to take the Lease over (written in whole seconds)";
            renew_deadline: Duration = key::shorter_than("lease_duration", Duration::from_secs(10)),
                "RenewDeadline: the leader stops leading when no renewal succeeded for this long";
            retry_period: Duration = key::shorter_than("renew_deadline", Duration::from_secs(2)),
                "RetryPeriod: how often a candidate tries to acquire (jittered) and the leader \
                 renews";
            writes: u64 = key::integer(1, 1_000, 5), "writes per leadership, `work` apart";
        }
    }

    /// `lease_duration`'s kind: `leaseDurationSeconds` is whole seconds.
    const WHOLE_SECONDS: KeyKind = KeyKind::DurationIn {
        min: Duration::from_secs(1),
        max: MAX_DURATION,
        zero: None,
        below: None,
    };

    /// Leaderships completed, on the node's disk: a restarted process does
    /// not lead them again.
    const TERMS: &str = "client-go/terms";
    /// The Lease's name and namespace.
    const NAME: &str = "leader";
    const NAMESPACE: &str = "default";
    /// client-go's `JitterFactor`: a candidate waits `RetryPeriod` plus up
    /// to 1.2 times it between attempts.
    const JITTER_FACTOR: f64 = 1.2;

    /// What the process does not take.
    pub fn refuses(config: &ClientConfig) -> Option<String> {
        let set: Vec<&str> = [
            (config.op != Op::Put, "workload = \"increment\""),
            (config.renew, "renew (it renews every retry_period)"),
            (config.fence_on_acquire, "fence_on_acquire"),
            (
                config.retry != ClientConfig::default().retry,
                "retry (it tries every retry_period, client-go's RetryPeriod)",
            ),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, what)| *what)
        .collect();
        (!set.is_empty()).then(|| format!("process `client-go` does not do {}", set.join(", ")))
    }

    /// The process, speaking to the API server node `server`: `rounds`
    /// leaderships after `start`, each request given up after `timeout`.
    pub fn process(config: ClientConfig, own: ElectorConfig, server: String) -> Process<Msg> {
        Process::new(move |h| {
            let (config, own, server) = (config.clone(), own.clone(), server.clone());
            async move { elect(&h, &config, &own, &server).await }
        })
    }

    async fn elect(h: &Handle<Msg>, config: &ClientConfig, own: &ElectorConfig, server: &str) {
        let client = kube::Client::new(h, server, config.timeout);
        let leases: Api<Lease> = Api::namespaced(client, NAMESPACE);
        let storage = SimStorage::new(h, &config.storage, config.timeout);
        let disk = h.disk();
        let mut terms = disk.get_u64(TERMS).unwrap_or(0);
        h.sleep(config.start.saturating_sub(h.now())).await;
        while terms < config.rounds {
            let led = acquire(h, &leases, own).await;
            let (term, token) = (version(&led), leases.fencing_token());
            let observed = Rc::new(RefCell::new(led));
            let (stopped, done) = (Signal::new(), Signal::new());
            let renewal = h.spawn(renew(
                h.clone(),
                leases.clone(),
                own.clone(),
                observed.clone(),
                stopped.clone(),
                done.clone(),
            ));
            for _ in 0..own.writes {
                h.sleep(config.work).await;
                if config.check_lease && stopped.is_raised() {
                    h.probe(Probe::Lost);
                    break;
                }
                let value = storage.writes_sent() as i64 + 1;
                let _ = storage.put(&config.key, value, token).await;
            }
            // The work is over: the renewal task ends (its request in
            // flight first), then ReleaseOnCancel.
            done.raise();
            renewal.await;
            h.probe(Probe::Released { lease: term });
            let last = observed.borrow().clone();
            if holder(&last) == Some(h.name().as_str()) {
                let _ = leases
                    .replace(NAME, &PostParams::default(), &release(h, last))
                    .await;
            }
            terms += 1;
            disk.put_u64(TERMS, terms);
            if terms < config.rounds {
                h.sleep(own.retry_period).await;
            }
        }
    }

    /// The Lease's holder, if any (client-go's empty identity is none).
    fn holder(lease: &Lease) -> Option<&str> {
        let spec = lease.spec.as_ref()?;
        spec.holder_identity.as_deref().filter(|h| !h.is_empty())
    }

    /// The object's `resourceVersion`, a number on this server.
    fn version(lease: &Lease) -> u64 {
        let version = lease.metadata.resource_version.as_deref();
        version.and_then(|v| v.parse().ok()).unwrap_or(0)
    }

    /// client-go's `acquire`: a try at once, then every retry period and
    /// its jitter, until it leads. Answers the Lease as stored.
    async fn acquire(h: &Handle<Msg>, leases: &Api<Lease>, own: &ElectorConfig) -> Lease {
        loop {
            if let Some(led) = try_acquire(h, leases, own).await {
                return led;
            }
            let jitter = h.jitter(own.retry_period.mul_f64(JITTER_FACTOR));
            h.sleep(own.retry_period + jitter).await;
        }
    }

    /// One `tryAcquireOrRenew` of a candidate: read the Lease, and take it
    /// if it is free, its own, or expired by its own wall clock. A Lease
    /// another holds, or a conflict, is `denied` (as the sans-IO candidate
    /// journals it); an unanswered request is only tried again.
    async fn try_acquire(
        h: &Handle<Msg>,
        leases: &Api<Lease>,
        own: &ElectorConfig,
    ) -> Option<Lease> {
        let read = leases.get(NAME).await.ok()?;
        let (me, now) = (h.name(), h.wall_ns());
        let mine = holder(&read) == Some(me.as_str());
        let spec = read.spec.clone().unwrap_or_default();
        let lasts = i64::from(spec.lease_duration_seconds.unwrap_or(0)) * 1_000_000_000;
        let expired = spec
            .renew_time
            .map_or(true, |t| t.0.saturating_add(lasts) <= now);
        if !(holder(&read).is_none() || mine || expired) {
            h.probe(Probe::Denied);
            return None;
        }
        let claim = Lease {
            metadata: read.metadata,
            spec: Some(LeaseSpec {
                holder_identity: Some(me.to_string()),
                lease_duration_seconds: Some(
                    i32::try_from(own.lease_duration.as_secs()).unwrap_or(i32::MAX),
                ),
                acquire_time: Some(MicroTime(now)),
                renew_time: Some(MicroTime(now)),
                lease_transitions: Some(
                    spec.lease_transitions
                        .unwrap_or(0)
                        .saturating_add(i32::from(!mine)),
                ),
            }),
        };
        match leases.replace(NAME, &PostParams::default(), &claim).await {
            Ok(led) => Some(led),
            Err(kube::Error::Api(_)) => {
                h.probe(Probe::Denied);
                None
            }
            Err(kube::Error::Service(_)) => None,
        }
    }

    /// The renewal task: every retry period, one renewal; it raises
    /// `stopped` (OnStoppedLeading) when none has succeeded for the renew
    /// deadline, and ends when `done` is raised. `observed` is the Lease as
    /// it last read or stored it.
    async fn renew(
        h: Handle<Msg>,
        leases: Api<Lease>,
        own: ElectorConfig,
        observed: Rc<RefCell<Lease>>,
        stopped: Signal,
        done: Signal,
    ) {
        let mut renewed_at = h.now();
        loop {
            if let Either::Right(()) = select(h.sleep(own.retry_period), done.raised()).await {
                return;
            }
            let asked = h.now();
            if try_renew(&h, &leases, &observed).await {
                renewed_at = asked;
            }
            // Like client-go it asks before it looks at the deadline: a
            // leader that was paused tries once more first.
            if h.now().saturating_sub(renewed_at) >= own.renew_deadline {
                stopped.raise();
                return;
            }
        }
    }

    /// One renewal: read the Lease and, while it is still its own, replace
    /// it with a new `renewTime`.
    async fn try_renew(h: &Handle<Msg>, leases: &Api<Lease>, observed: &RefCell<Lease>) -> bool {
        let Ok(read) = leases.get(NAME).await else {
            return false;
        };
        *observed.borrow_mut() = read.clone();
        if holder(&read) != Some(h.name().as_str()) {
            return false;
        }
        let mut renewal = read;
        if let Some(spec) = renewal.spec.as_mut() {
            spec.renew_time = Some(MicroTime(h.wall_ns()));
        }
        match leases.replace(NAME, &PostParams::default(), &renewal).await {
            Ok(stored) => {
                *observed.borrow_mut() = stored;
                true
            }
            Err(_) => false,
        }
    }

    /// client-go's `release`: the Lease without a holder, for one second,
    /// at the version it last saw.
    fn release(h: &Handle<Msg>, mut last: Lease) -> Lease {
        let now = Some(MicroTime(h.wall_ns()));
        let transitions = last.spec.as_ref().and_then(|s| s.lease_transitions);
        last.spec = Some(LeaseSpec {
            holder_identity: None,
            lease_duration_seconds: Some(1),
            acquire_time: now,
            renew_time: now,
            lease_transitions: transitions,
        });
        last
    }
}

/// The whole command line, with `k8s_lease` beside the bundled designs and
/// the process `client-go` speaking to it.
fn main() -> std::process::ExitCode {
    let mut registry = Registry::builtin();
    registry.add_lock(K8sLease);
    registry.add_process_with(
        "client-go",
        "client-go's LeaderElector on the k8s_lease API server, through a kube-shaped client \
         (get, replace); its work writes on after it stopped leading",
        |config, own: &client_go::ElectorConfig, lock_nodes| {
            client_go::process(config.clone(), own.clone(), lock_nodes[0].clone())
        },
    );
    registry.process_refuses("client-go", client_go::refuses);
    registry.process_speaks_to("client-go", &["k8s_lease"]);
    fencesim::cli::main_with(registry)
}
