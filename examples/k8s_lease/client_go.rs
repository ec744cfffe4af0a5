//! The process `client-go`: client-go's `LeaderElector` on a `LeaseLock`,
//! as async code over the `kube` client (`kube.rs`).
//!
//! A candidate tries to acquire every `retry_period` (jittered as client-go
//! does): it reads the Lease and replaces it with itself as the holder when
//! it is free, its own, or expired on its own wall clock (`renewTime +
//! leaseDurationSeconds`). Once leader, a task renews every `retry_period`
//! (read, then replace with a new `renewTime` while it is still the
//! holder), and the leader stops leading when no renewal has succeeded for
//! `renew_deadline`. The work writes `writes` times, `work` apart, with the
//! term's token; then the renewal task stops and the leader releases the
//! Lease (client-go's `ReleaseOnCancel`: no holder, at the version it last
//! saw) and journals `released`.
//!
//! The work does not look at the leadership: it writes on after the leader
//! stopped leading (cilium issue 42920, where the operator kept acting after
//! its lease was lost). With `check_lease = true` it checks the leadership
//! before each write, as code that watches client-go's context does, and
//! gives the term up (`lost`): that narrows the window without closing it;
//! a storage that checks the token closes it.
//!
//! Where it differs from client-go: each acquisition starts a new term (a
//! new `acquireTime`, so a new token), even of a Lease still its own, as the
//! sans-IO candidate does; and a renewal only renews a Lease it holds,
//! never takes one over.
//!
//! ```text
//! cargo run --release --example k8s_lease -- explore examples/k8s_lease/client-go.toml --generic --seeds 0..2000
//! cargo run --release --example k8s_lease -- explore examples/k8s_lease/client-go-fenced.toml --generic --seeds 0..10000
//! ```

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use fencesim::design::catalog::{KeyKind, Registry, MAX_DURATION};
use fencesim::design::client::ClientConfig;
use fencesim::design::config::key;
use fencesim::process::{Env, Handle, Probe, Process, SimStorage, Storage};
use fencesim::protocol::{Msg, Op};
use fencesim_env::{select, Either, Signal};

use self::kube::{Api, Lease, LeaseSpec, MicroTime, PostParams};

// The kube-shaped API client this elector calls.
#[path = "kube.rs"]
pub mod kube;

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
async fn try_acquire(h: &Handle<Msg>, leases: &Api<Lease>, own: &ElectorConfig) -> Option<Lease> {
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

/// Registers the process `client-go`, speaking to `k8s_lease` only.
pub fn register(registry: &mut Registry) {
    registry.add_process_with(
        "client-go",
        "client-go's LeaderElector on the k8s_lease API server, through a kube-shaped client \
         (get, replace); its work writes on after it stopped leading",
        |config, own: &ElectorConfig, lock_nodes| {
            process(config.clone(), own.clone(), lock_nodes[0].clone())
        },
    );
    registry.process_refuses("client-go", refuses);
    registry.process_speaks_to("client-go", &["k8s_lease"]);
}
