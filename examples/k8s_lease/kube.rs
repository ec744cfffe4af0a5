//! A simulated Kubernetes API client for processes: its calls read like the
//! `kube` crate's `Api<Lease>`, its objects like k8s-openapi's `Lease`, and
//! it speaks the API server's `Api` messages over fencesim's
//! network (every fault applies, every message is journaled).
//!
//! ```ignore
//! let client = kube::Client::new(&h, "apiserver", Duration::from_secs(1));
//! let leases: kube::Api<kube::Lease> = kube::Api::namespaced(client, "default");
//! let mut lease = leases.get("leader").await?;
//! lease.spec.as_mut().unwrap().renew_time = Some(kube::MicroTime(h.wall_ns()));
//! match leases.replace("leader", &kube::PostParams::default(), &lease).await {
//!     Ok(stored) => {} // stored.metadata.resource_version: the next version
//!     Err(kube::Error::Api(e)) if e.code == 409 => {} // written since it was read
//!     Err(e) => {} // kube::Error::Service: no answer in time
//! }
//! ```
//!
//! What differs from kube, and why:
//! - The API server holds one Lease, so every name and namespace is that
//!   Lease. It exists from the start, empty, at `resourceVersion` `"0"`:
//!   client-go would create it after a 404, and there is no `create`.
//! - `replace` needs `metadata.resourceVersion`, as the server only compares
//!   and swaps (Kubernetes also has unconditional updates): without one, or
//!   with one that is not a number, it fails as the API server would (422
//!   `Invalid`) without asking it.
//! - `resourceVersion` is the Lease's own counter, a decimal number, where
//!   Kubernetes promises only an opaque string (etcd's revision): the
//!   election takes its fencing token from it, as the sans-IO candidate does.
//! - A `MicroTime` is the writer's wall-clock reading in nanoseconds (the
//!   model keeps what the node read), not an RFC 3339 time in microseconds.
//!   `leaseDurationSeconds` is whole seconds, as in Kubernetes: a duration
//!   the sans-IO candidate wrote in finer units reads rounded up.
//! - The server answers a `PUT` it stored through its grant ledger (the
//!   grant a new term makes, a renewal, a release), and the client answers
//!   `replace` with the object it sent at the next `resourceVersion`.
//!   Being the client of one lock design, it also journals what that answer
//!   makes its caller believe, as fencesim's bundled clients do: `acquired`
//!   when a `replace` began a term (the grant's lease id and token, for the
//!   Lease's duration), `renewed` when one extended it (for the Lease's
//!   duration from when the `PUT` was sent; the sans-IO candidate, which
//!   knows its renew deadline, journals that instead: only reports read
//!   it, not the oracle). Giving up leading is the elector's decision, and
//!   so are its probes (`denied`, `lost`, `released`).
//!   `Api::fencing_token` is fencesim's addition: the token of the term
//!   the latest `replace` began, which is its `resourceVersion` when the
//!   server hands tokens out (`tokens = true`) and none otherwise.
//! - A request unanswered within the client's timeout fails as
//!   `Error::Service` (kube reports its tower timeout so); the client does
//!   not retry, as kube does not. `PostParams` holds nothing: the server has
//!   no dry run and no field managers.

use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;
use std::rc::Rc;
use std::time::Duration;

use fencesim::process::{Env, Handle, Probe};
use fencesim::protocol::Msg;
use fencesim::sim::NodeId;
use fencesim_env::Elapsed;

use crate::{Api as Call, Lease as Stored};

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
    async fn answer(&self, wanted: impl FnMut(&Msg) -> bool + Unpin) -> Result<Msg, Error> {
        let recv = self.handle.recv_from(self.server, wanted);
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
