//! The validated scenario: what the loader returns and the world is built from.
//!
//! Every value here has passed validation and has its default filled in, so
//! consumers never re-check the file's rules.

use std::time::Duration;

use crate::design::catalog::Resolved;
/// A design's parameters live in the design layer; re-exported here, where
/// a loaded [`DesignSpec`] carries them.
pub use crate::design::params::{ParamValue, Params};
use crate::oracle::finding::Judged;
use crate::oracle::{Counts, ViolationKind};

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
    /// `[[clients]]`, in file order (1 to 1000).
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
    /// Whether a run of this scenario hosts code fencesim did not write: a
    /// lock or storage design, or a client process, that a user added to
    /// the registry. Such code may keep state on its thread (std's hasher
    /// keys, thread-locals) or run away, so each of its seeds runs on a
    /// fresh thread and, in a sweep under the command line, in a worker
    /// process; fencesim's own designs and processes keep nothing on a
    /// thread (the determinism tests prove it), and run many seeds on one.
    pub fn hosts_user_code(&self) -> bool {
        use crate::design::catalog::Registry;
        !Registry::is_bundled(&self.lock.resolved)
            || !Registry::is_bundled(&self.storage.resolved)
            || self
                .clients
                .iter()
                .filter_map(|c| c.process.as_ref())
                .any(|p| !Registry::is_bundled_process(p))
    }

    /// The `[explore]` table as random schedules use it: the file's, or the
    /// defaults scaled to the scenario ([`ExploreSpec::scaled`]).
    pub fn explore_spec(&self) -> ExploreSpec {
        self.explore
            .clone()
            .unwrap_or_else(|| ExploreSpec::scaled(self))
    }

    /// The lock service's node names: `lock` (or the name the lock design
    /// gives its node, [`DesignInfo::on_node`](crate::design::catalog::DesignInfo::on_node)),
    /// or `lock1` … `lockN` when the lock design has a `nodes` parameter
    /// greater than 1.
    pub fn lock_nodes(&self) -> Vec<String> {
        let node = self.lock.resolved.info().node;
        match self.lock.params.get("nodes") {
            Some(ParamValue::U64(n)) if *n > 1 => (1..=*n).map(|i| format!("{node}{i}")).collect(),
            _ => vec![node.to_string()],
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
    /// An increment's write names the version it read (`precondition =
    /// "read"`, default true); false: a plain write (`"none"`).
    pub conditional: bool,
    /// The registered process the node runs instead of the bundled client
    /// (`process = "NAME"`), given the settings above.
    pub process: Option<crate::design::catalog::ProcessDesign>,
    /// The values of the process's own keys (empty without a process, or
    /// for a process with none), defaults filled in.
    pub process_params: crate::design::params::Params,
}

impl ClientSpec {
    /// The settings the client's node runs with: the bundled client's, or
    /// its process's.
    pub fn config(&self) -> crate::design::client::ClientConfig {
        use crate::design::client::ClientConfig;
        use crate::protocol::Op;
        ClientConfig {
            start: self.start,
            rounds: self.rounds,
            work: self.work,
            op: match self.workload {
                Workload::Write => Op::Put,
                Workload::Increment => Op::Increment,
            },
            retry: self.retry,
            timeout: self.timeout,
            check_lease: self.check_lease,
            renew: self.renew,
            fence_on_acquire: self.fence_on_acquire,
            conditional: self.conditional,
            // Not `..ClientConfig::default()`: that parses the declared
            // defaults into a map, for every client of every seed (a
            // twentieth of a short sweep).
            key: ClientConfig::KEY.into(),
            storage: ClientConfig::STORAGE.into(),
        }
    }
}

/// What a client's write does: `"write"` or `"increment"`.
pub use crate::design::client::Workload;

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
    /// The counters the run must show (`stale_writes = 0`, …): one per
    /// finding kind (see [`crate::oracle::finding`]) and the accepted and
    /// rejected writes.
    pub counts: Counts<Option<u64>>,
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
    /// `mechanism`: the milestones (see [`crate::oracle::milestones`]) a run
    /// must reach to show this scenario's own bug, beside the violation
    /// kinds the counts above expect; empty is not checked. `run` checks
    /// them as an expectation; `explore` counts the failing seeds that
    /// reproduce them ([`Expect::reproduced_by`]).
    pub mechanism: Vec<String>,
    /// `idle_clients`: the clients a run may leave idle. A hosted process
    /// client that never acquires the lock makes a run inconclusive (the
    /// code under test did nothing) unless it is named here.
    pub idle_clients: Vec<String>,
    /// `always`: what must hold in every seed, beyond safety, by the names
    /// of [`ALWAYS`] (`no_false_rejections`, `completes`). `run` checks
    /// them as an expectation; `explore` counts a seed that breaks one as
    /// failing, and `shrink` keeps it.
    pub always: Vec<String>,
}

/// The properties `[expect] always` can name: no false rejection (the
/// storage never turns away the current holder), and the run completes
/// (it does not stall or run into its time or event limit).
pub const ALWAYS: [&str; 2] = ["no_false_rejections", "completes"];

impl Expect {
    /// The violation kinds this `[expect]` counts above zero, by their
    /// counters' names (`stale_writes`, `token_regressions`, …): every kind
    /// that can make a run a violation, in the order the checks run.
    pub fn violation_kinds(&self) -> Vec<&'static str> {
        ViolationKind::ALL
            .iter()
            .filter(|k| k.judged() != Judged::Never)
            .filter(|&&k| self.counts.finding(k).is_some_and(|n| n > 0))
            .map(|k| k.counter())
            .collect()
    }

    /// Whether a violating run reproduces this scenario's own bug: it found
    /// every violation kind the counts expect (at least one each), and one
    /// of those findings reached every milestone of `mechanism` itself (a
    /// stale or zombie write by its own grant and sending, see
    /// [`Report::finding_milestones`]; another kind of finding by the run's
    /// `milestones`), so that a seed whose violation was made another way
    /// does not count. `None` when this `[expect]` names neither (nothing
    /// to reproduce).
    ///
    /// [`Report::finding_milestones`]: crate::oracle::Report::finding_milestones
    pub fn reproduced_by(
        &self,
        report: &crate::oracle::Report,
        milestones: &crate::oracle::Milestones,
    ) -> Option<bool> {
        let kinds = self.violation_kinds();
        if kinds.is_empty() && self.mechanism.is_empty() {
            return None;
        }
        if report.verdict != Verdict::Violation {
            return Some(false);
        }
        let found = |kind: &str| report.violations.iter().any(|v| v.kind.counter() == kind);
        if !kinds.iter().all(|k| found(k)) {
            return Some(false);
        }
        if self.mechanism.is_empty() {
            return Some(true);
        }
        let reaches = |m: &crate::oracle::Milestones| {
            let pairs = m.pairs();
            self.mechanism
                .iter()
                .all(|name| pairs.iter().any(|(n, c)| n == name && *c > 0))
        };
        // The findings that show the bug: of the kinds expected (any, with
        // none expected).
        let shows =
            |v: &&crate::oracle::Violation| kinds.is_empty() || kinds.contains(&v.kind.counter());
        Some(report.violations.iter().filter(shows).any(|v| {
            match report.finding_milestones.get(&v.seq) {
                Some(own) => reaches(own),
                None => reaches(milestones),
            }
        }))
    }
}

/// The values `[expect] outcome` accepts: how a run may end (a crash is
/// never expected).
pub const EXPECT_OUTCOMES: &[&str] = &["completed", "stalled", "time_limit", "event_limit"];

/// `[explore]`: the random fault schedules `fencesim explore` draws for each
/// seed. Every key is optional; see [`ExploreSpec::scaled`] for the defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct ExploreSpec {
    /// `kinds`: fault kinds to draw from, by their file names (`pause`, …).
    pub kinds: Vec<String>,
    /// `true` when the table lists `kinds`: every seed may then draw each of
    /// them, and swarm exploration draws no subset of kinds.
    pub kinds_pinned: bool,
    /// `faults = [min, max]`: how many random faults each seed gets, drawn
    /// uniformly; 0 ≤ min ≤ max ≤ 16.
    pub faults: (u32, u32),
    /// `nodes`: the nodes random faults may target; empty means every node
    /// (and swarm exploration draws a subset of them per seed).
    pub nodes: Vec<String>,
    /// `swarm` (default `true`): each seed first draws which fault kinds
    /// (unless `kinds` pins them) and which target nodes (unless `nodes`
    /// pins them) it enables, then draws its faults from those only.
    pub swarm: bool,
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
    /// `workloads` (default `false`): each seed also varies the workload
    /// (clients, work against the lease, renewals, lease checks, rounds,
    /// starts, slow and duplicated answers: [`crate::explore::workload`]),
    /// as `explore --workloads` does.
    pub workloads: bool,
}

impl Default for ExploreSpec {
    /// Every kind, one to three faults a seed, swarm on, pauses and
    /// partitions of up to 30 s (three times a 10 s TTL) and restarts within
    /// 10 s: [`ExploreSpec::scaled`] for a scenario whose longest timeout is
    /// 10 s.
    fn default() -> Self {
        ExploreSpec::with_timeout(Duration::from_secs(10))
    }
}

impl ExploreSpec {
    /// The defaults for `s`, scaled to its own timeouts: with `T` the longest
    /// duration among the `[lock]` table's parameters (`ttl`, a session's
    /// `heartbeat`, `lock_delay`, …) and the clients' `work` and `retry`,
    /// pauses, delays, clock jumps and partitions last up to `3 T` (most
    /// outlive a lease) and a crashed node restarts within `T`.
    pub fn scaled(s: &Scenario) -> ExploreSpec {
        let lock = s.lock.params.iter().filter_map(|(_, v)| match v {
            ParamValue::Duration(d) => Some(*d),
            _ => None,
        });
        let clients = s.clients.iter().flat_map(|c| [c.work, c.retry]);
        let longest = lock.chain(clients).max().unwrap_or_default();
        ExploreSpec::with_timeout(longest)
    }

    fn with_timeout(timeout: Duration) -> ExploreSpec {
        // Never shorter than a second: below it, faults hide in latency.
        let t = timeout.max(Duration::from_secs(1));
        ExploreSpec {
            kinds: FAULT_KINDS.iter().map(|k| k.to_string()).collect(),
            kinds_pinned: false,
            faults: (1, 3),
            nodes: Vec::new(),
            swarm: true,
            max_pause: 3 * t,
            max_delay: 3 * t,
            max_jump: 3 * t,
            max_partition: 3 * t,
            max_restart: t,
            workloads: false,
        }
    }
}

/// Every fault kind, as scenario files spell them: the simulator's
/// [`sim::fault::KINDS`].
pub const FAULT_KINDS: &[&str] = sim::fault::KINDS;

/// `[expect] verdict` uses the oracle's verdict.
pub use crate::oracle::Verdict;
