//! The validated scenario: what the loader returns and the world is built from.
//!
//! Every value here has passed validation and has its default filled in, so
//! consumers never re-check the file's rules.

use std::time::Duration;

use crate::design::catalog::Resolved;
/// A design's parameters live in the design layer; re-exported here, where
/// a loaded [`DesignSpec`] carries them.
pub use crate::design::params::{ParamValue, Params};

/// A loaded and validated scenario file.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// The file it was loaded from, as named to the loader.
    pub file: String,
    /// `name`: non-empty.
    pub name: String,
    /// `description`, `""` when absent.
    pub description: String,
    /// `seed`, default 1 (a `--seed` flag overrides it).
    pub seed: u64,
    /// `duration`: the simulated time limit, default 1 minute, > 0, at most 24h.
    pub duration: Duration,
    /// `max_events`: the journal's event limit, default 100 000, 1 to
    /// 1 000 000 (about 400 bytes of memory per event).
    pub max_events: u64,
    /// `strict`: zombie writes count toward the verdict; default false.
    pub strict: bool,
    /// `[lock]`.
    pub lock: DesignSpec,
    /// `[storage]`.
    pub storage: DesignSpec,
    /// `[network]`.
    pub network: NetworkSpec,
    /// `[[clients]]`, in file order (1 to 64).
    pub clients: Vec<ClientSpec>,
    /// `[[faults]]`, in file order.
    pub faults: Vec<FaultSpec>,
    /// `[expect]`.
    pub expect: Expect,
    /// `[explore]`: how `fencesim explore` draws random faults; `None` when
    /// the file has no such table (the defaults of [`ExploreSpec`] apply).
    pub explore: Option<ExploreSpec>,
}

impl Scenario {
    /// The lock service's node names: `lock`, or `lock1` … `lockN` when the
    /// lock design has a `nodes` parameter greater than 1.
    pub fn lock_nodes(&self) -> Vec<String> {
        match self.lock.params.get("nodes") {
            Some(ParamValue::U64(n)) if *n > 1 => (1..=*n).map(|i| format!("lock{i}")).collect(),
            _ => vec!["lock".to_string()],
        }
    }

    /// Every node: the clients in file order, then the lock node(s), then
    /// `storage`.
    pub fn node_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.clients.iter().map(|c| c.name.clone()).collect();
        names.extend(self.lock_nodes());
        names.push("storage".to_string());
        names
    }
}

/// A `[lock]` or `[storage]` table: the design, as the loader's registry
/// resolved it, and its parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct DesignSpec {
    /// `design = "…"`, a name from the registry.
    pub design: String,
    /// Every key the design takes (see the catalog), defaults filled in.
    pub params: Params,
    /// The design the name resolved to in the registry the scenario was
    /// loaded with: what every run of the scenario builds.
    pub resolved: Resolved,
}

/// `[network]`: the latency, loss and duplication of every link, with
/// per-link overrides.
#[derive(Clone, Debug, PartialEq)]
pub struct NetworkSpec {
    /// `latency = [min, max]`: uniform, min ≤ max; default 1ms to 5ms.
    pub latency: (Duration, Duration),
    /// `loss`: probability in [0, 1) that a message is lost; default 0.
    pub loss: f64,
    /// `duplicate`: probability in [0, 1) that a message is delivered twice; default 0.
    pub duplicate: f64,
    /// `[[network.links]]`, in file order.
    pub links: Vec<LinkSpec>,
}

impl Default for NetworkSpec {
    fn default() -> Self {
        NetworkSpec {
            latency: (Duration::from_millis(1), Duration::from_millis(5)),
            loss: 0.0,
            duplicate: 0.0,
            links: Vec::new(),
        }
    }
}

/// `[[network.links]]`: overrides for the messages from one node to another
/// (one direction).
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpec {
    /// Sending node.
    pub from: String,
    /// Receiving node, different from `from`.
    pub to: String,
    /// Overrides the network's latency range.
    pub latency: Option<(Duration, Duration)>,
    /// Overrides the network's loss probability.
    pub loss: Option<f64>,
    /// Overrides the network's duplication probability.
    pub duplicate: Option<f64>,
}

/// `[[clients]]`: one client node and its workload.
#[derive(Clone, Debug, PartialEq)]
pub struct ClientSpec {
    /// The node's name: unique, `[A-Za-z][A-Za-z0-9_-]*`, not a server's name.
    pub name: String,
    /// When it first tries to acquire; default 0s, at most 24h.
    pub start: Duration,
    /// Acquire → work → write → release cycles, 1 to 100 000; default 1.
    pub rounds: u64,
    /// Time inside the critical section before the write; default 1s, at most 24h.
    pub work: Duration,
    /// What the write does; default blind write.
    pub workload: Workload,
    /// Wait before retrying a denied acquire; default 500ms, 1ms to 24h.
    pub retry: Duration,
    /// How long the client waits for any answer; default 5s, 1ms to 24h.
    pub timeout: Duration,
    /// Check the lease on its own clock before writing; default false.
    pub check_lease: bool,
    /// Renew the lease every half ttl while holding it; default false.
    pub renew: bool,
    /// A token-only write right after acquiring; default false.
    pub fence_on_acquire: bool,
}

/// What a client's write does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// `"write"`: a blind put of a new value.
    Write,
    /// `"increment"`: read, add one, write back (lost updates show up here).
    Increment,
}

/// `[[faults]]`: one fault and when it fires, in the simulator's own terms:
/// the loader reads a table straight into a [`Fault`] and a [`Trigger`], and
/// the world runs them as they are.
#[derive(Clone, Debug, PartialEq)]
pub struct FaultSpec {
    /// What happens. A file's `duration` on a link fault is its
    /// [`Scope::Window`]; `count` (default 1) its [`Scope::Count`].
    pub fault: Fault,
    /// When it happens: `at = "5s"` is [`Trigger::At`]; `after =
    /// "node:event[:N]"` (plus an optional `delay`) is [`Trigger::After`]
    /// with the event's name as `kind`.
    pub trigger: Trigger,
    /// The line of the fault's `[[faults]]` header, for reports.
    pub line: usize,
}

/// The simulator's faults and triggers are the scenario's: one vocabulary.
pub use sim::fault::{Fault, Scope, Trigger};

/// `[expect]`: what the run should show; `None` is not checked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expect {
    /// The verdict.
    pub verdict: Option<Verdict>,
    /// Number of stale writes.
    pub stale_writes: Option<u64>,
    /// Number of zombie writes.
    pub zombie_writes: Option<u64>,
    /// Number of writes the storage accepted.
    pub accepted_writes: Option<u64>,
    /// Number of writes the storage rejected.
    pub rejected_writes: Option<u64>,
    /// Number of token regressions.
    pub token_regressions: Option<u64>,
    /// Number of lost updates.
    pub lost_updates: Option<u64>,
    /// Number of rejections of the current holder's writes (a fence too
    /// strict, such as `lock_token < :token`).
    pub false_rejections: Option<u64>,
    /// Number of scripted faults that never fired (their trigger never came
    /// within the run). Unset, any unfired fault makes the run inconclusive.
    pub unfired_faults: Option<u64>,
    /// How the run ends: `completed`, `stalled`, `time_limit` or
    /// `event_limit`. Unset, a run cut short (anything but `completed`) is
    /// inconclusive.
    pub outcome: Option<String>,
}

/// The values `[expect] outcome` accepts: how a run may end (a crash is
/// never expected).
pub const EXPECT_OUTCOMES: &[&str] = &["completed", "stalled", "time_limit", "event_limit"];

/// `[explore]`: the random fault schedules `fencesim explore` draws for each
/// seed. Every key is optional; see [`ExploreSpec::default`].
#[derive(Clone, Debug, PartialEq)]
pub struct ExploreSpec {
    /// `kinds`: fault kinds to draw from, by their file names (`pause`, …).
    pub kinds: Vec<String>,
    /// `faults = [min, max]`: how many random faults each seed gets, drawn
    /// uniformly; 0 ≤ min ≤ max ≤ 16.
    pub faults: (u32, u32),
    /// `nodes`: the nodes random faults may target; empty means every node.
    pub nodes: Vec<String>,
    /// `max_pause`: longest random pause, > 0.
    pub max_pause: Duration,
    /// `max_delay`: longest extra latency of a random delay, > 0.
    pub max_delay: Duration,
    /// `max_jump`: largest random clock jump or offset (either sign), > 0.
    pub max_jump: Duration,
    /// `max_partition`: longest random partition, > 0.
    pub max_partition: Duration,
    /// `max_restart`: longest downtime of a random crash, > 0.
    pub max_restart: Duration,
}

impl Default for ExploreSpec {
    /// Every kind, one to three faults a seed, pauses and partitions of up to
    /// 30 s: three times the bundled 10 s TTL, so that most pauses outlive a
    /// lease, which is what figure-9-6-type bugs need.
    fn default() -> Self {
        ExploreSpec {
            kinds: FAULT_KINDS.iter().map(|k| k.to_string()).collect(),
            faults: (1, 3),
            nodes: Vec::new(),
            max_pause: Duration::from_secs(30),
            max_delay: Duration::from_secs(30),
            max_jump: Duration::from_secs(30),
            max_partition: Duration::from_secs(30),
            max_restart: Duration::from_secs(10),
        }
    }
}

/// Every fault kind, as scenario files spell them: the simulator's
/// [`sim::fault::KINDS`].
pub const FAULT_KINDS: &[&str] = sim::fault::KINDS;

/// `[expect] verdict` uses the oracle's verdict.
pub use crate::oracle::Verdict;
