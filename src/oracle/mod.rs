//! The oracle: reads a journal, and only a journal, and judges it.
//!
//! ```
//! use fencesim::oracle::{check, OracleConfig, Verdict};
//! use sim::journal::{Event, Journal};
//!
//! // Figure 9-6 without fencing: client1 (token 33) pauses, its lease
//! // expires, client2 (token 34) writes, then client1's write lands.
//! let s = 1_000_000_000u64;
//! let e = |t: u64, node: &str, kind: &str| Event::new(0, t, node, t as i64, kind);
//! let journal = Journal::from_events([
//!     e(0, "client1", "acquired").with("lease", 1u64).with("token", 33u64),
//!     e(10 * s, "lock", "expired").with("client", "client1").with("lease", 1u64),
//!     e(10 * s, "client2", "acquired").with("lease", 2u64).with("token", 34u64),
//!     e(11 * s, "client2", "wrote").with("write", "client2/1").with("token", 34u64),
//!     e(11 * s, "storage", "accepted").with("write", "client2/1").with("client", "client2"),
//!     e(15 * s, "client1", "wrote").with("write", "client1/1").with("token", 33u64),
//!     e(16 * s, "storage", "accepted").with("write", "client1/1").with("client", "client1"),
//! ]);
//! let report = check(&journal, &OracleConfig::default());
//! assert_eq!(report.verdict, Verdict::Violation);
//! assert_eq!(report.stale_writes, 1);
//! assert_eq!(report.overlapping_leases, 1);
//! assert!(report.violations[0].explanation.contains("token 33"));
//! ```
//!
//! Definitions:
//! - A **grant** is a client's `acquired` event, matched by (client, lease)
//!   to the lock's `granted` event that made it: the latest one before it,
//!   or for a grant won on several lock nodes (`ends` = e on `acquired`,
//!   after k `granted` answers) the (k − e + 1)-th, the majority-th. A
//!   design that journals no `granted` makes its grants at `acquired`.
//! - **Newer** is the lock's order, never the time at which a client heard
//!   of its grant: of two grants that both carry a token from a single lock
//!   node, the one with the larger token; otherwise the one whose `granted`
//!   came later. (Redlock's token, the largest of a majority's independent
//!   counters, orders nothing: its grants are ordered by their majority-th
//!   `granted`.) Of two equal tokens (a regression), the one the lock made
//!   later for another client is newer; the same client's equal token is the
//!   same holding.
//! - A **write** is made under its client's latest grant before its `wrote`
//!   event. A storage outcome for a write with no `wrote` event, or written
//!   before any grant, is counted but judged by no grant-based check.
//! - An acceptance the storage journaled with a `precondition` field was
//!   applied because a condition on the storage's current state held (a
//!   version compare-and-set): it is never stale. It can still be a zombie
//!   write, and lost updates are counted from the final values regardless.
//! - **stale_write**: the storage accepts a write (without a precondition)
//!   after the same storage node accepted a write made under a newer grant.
//! - **zombie_write**: the storage accepts a write whose grant was no longer
//!   current (the lock had already made a newer grant, or ended this one),
//!   before it accepted any write made under a newer grant, while a newer
//!   grant *to another client* was current at the lock (made, not ended):
//!   that client's exclusion is broken.
//! - **late_write**: the same, but with no other client's newer grant
//!   current at the lock (the lock was free, or the writer held it again):
//!   late, but nobody's exclusion was broken. Counted, never a violation.
//! - A network duplicate of a write is the same write (same write id): it
//!   is judged once per storage node, at its first acceptance, except that a
//!   copy accepted after a newer holder's write is stale (once per write).
//! - **token_regression**: a lock node's `granted` carries a token not
//!   greater than one the same node granted before.
//! - A grant **ends** at the lock with the lock's first `expired` or
//!   `released` naming its client and lease (matched to that client's latest
//!   grant of that lease; with `ends` = n, the n-th). An end logged before
//!   the client's `acquired` (the grant reached the client after its lease
//!   had run out) ends the grant from the start.
//! - [`ViolationKind`] describes each finding; [`Report`] lists the counts.
//!
//! One pass indexes the journal (`history.rs`); each concern is then a small
//! pass over those indexes, in its own module.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;
use sim::journal::Journal;

mod counts;
pub mod finding;
pub(crate) mod history;
pub mod milestones;
pub(crate) mod roles;
pub mod signature;
pub(crate) mod spans;
pub(crate) mod stops;

pub use counts::Counters;
pub use finding::{Counter, Counts, ViolationKind};
use history::History;
pub use milestones::Milestones;
pub use roles::Roles;

/// How strictly to judge.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OracleConfig {
    /// Count zombie writes toward the verdict (by default they are reported
    /// but do not make a run a violation: fencing tokens cannot stop them).
    pub strict: bool,
    /// How many lock nodes the design has (a majority of them must grant an
    /// acquisition: `minority_acquire`); 0: the lock nodes that appear in
    /// the journal.
    pub lock_nodes: usize,
    /// Each node's role, from the run's topology ([`Roles::of`]); empty:
    /// the roles the journal's own events show ([`Roles::from_journal`]).
    pub roles: Roles,
}

/// The judgement of one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Writes reached the storage and no violation was found.
    Safe,
    /// At least one violation counted toward the verdict.
    Violation,
    /// No violation, but the run judged nothing: no write reached the
    /// storage, so "no stale write was accepted" would be vacuous.
    /// [`check`] judges a journal and says `safe`; the runner
    /// (`runner::RunConfig::judge`) says `inconclusive` for a run whose report
    /// [judged nothing](Report::judged_nothing).
    Inconclusive,
    /// The run crashed (a panic in a design or in the world): whatever its
    /// journal holds, it is never reported as safe. [`check`] never returns
    /// it; the runner does, for a crashed run.
    Error,
}

impl Verdict {
    /// `"safe"`, `"violation"`, `"inconclusive"` or `"error"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Safe => "safe",
            Verdict::Violation => "violation",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Error => "error",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One finding, tied to the journal event that shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// What was found.
    pub kind: ViolationKind,
    /// Journal `seq` of the event that shows it (for a lost update: the last
    /// acceptance or acknowledgement of the key).
    pub seq: u64,
    /// True time of that event, in nanoseconds.
    pub t_ns: u64,
    /// One or two sentences for humans, with true times in seconds.
    pub explanation: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (seq {}): {}", self.kind, self.seq, self.explanation)
    }
}

/// Everything the oracle found in one journal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Report {
    /// `violation` when stale writes, token regressions or lost updates were
    /// found (or zombie writes, with [`OracleConfig::strict`]), else `safe`
    /// ([`Report::judged_nothing`] tells a vacuous `safe`; the runner calls
    /// it `inconclusive`).
    pub verdict: Verdict,
    /// The findings and writes counted ([`Counters`]); the report reads as
    /// them (`report.stale_writes`).
    #[serde(flatten)]
    pub counters: Counters,
    /// Rejections of a write whose grant was current (newest and not ended).
    pub false_rejections: u64,
    /// Pairs of grants to different clients where the later one was acquired
    /// while the earlier client still believed it held the lock.
    pub overlapping_leases: u64,
    /// Every finding in journal order, zombie writes included even when they
    /// do not count toward the verdict, and late writes, which never do.
    pub violations: Vec<Violation>,
    /// The own milestones of each finding made at a storage acceptance (a
    /// stale, zombie or late write), by the finding's `seq`: what that
    /// write's grant and sending reached, as 0 or 1 each (see
    /// [`Milestones`]). `[expect] mechanism` is judged per finding on
    /// these; a finding not made at an acceptance has none, and is judged
    /// on the run's milestones.
    #[serde(skip)]
    pub finding_milestones: BTreeMap<u64, Milestones>,
    /// What the journal claims that the oracle cannot take on trust (a
    /// write no client journaled sending, a write with no grant the client
    /// believed in, a token its grant did not carry); any makes the verdict
    /// `error`.
    #[serde(skip)]
    pub untrusted: Vec<String>,
}

/// The counters are the report's own fields as much as its verdict is:
/// `report.stale_writes` reads the count, as every caller (and `[expect]`)
/// names it.
impl std::ops::Deref for Report {
    type Target = Counters;

    fn deref(&self) -> &Counters {
        &self.counters
    }
}

impl Report {
    /// No write reached the storage (none accepted, none rejected): a
    /// `safe` verdict would claim nothing.
    pub fn judged_nothing(&self) -> bool {
        self.accepted_writes + self.rejected_writes == 0
    }
}

/// Judges `journal`. Reads nothing but the journal's events.
pub fn check(journal: &Journal, config: &OracleConfig) -> Report {
    check_and_count(journal, config).0
}

/// Judges `journal` and counts its [`Milestones`], indexing it once: the
/// same as [`check`] and [`Milestones::count`], for the price of one pass.
///
/// ```
/// use fencesim::oracle::{check, check_and_count, Milestones, OracleConfig};
/// use sim::journal::{Event, Journal};
/// let e = |t: u64, node: &str, kind: &str| Event::new(0, t, node, t as i64, kind);
/// let journal = Journal::from_events([
///     e(0, "client1", "acquired").with("lease", 1u64).with("token", 33u64),
///     e(1, "client1", "wrote").with("write", "client1/1").with("token", 33u64),
///     e(2, "storage", "accepted").with("write", "client1/1").with("client", "client1"),
/// ]);
/// let config = OracleConfig::default();
/// let (report, milestones) = check_and_count(&journal, &config);
/// assert_eq!(report, check(&journal, &config));
/// assert_eq!(milestones, Milestones::count(&journal));
/// ```
pub fn check_and_count(journal: &Journal, config: &OracleConfig) -> (Report, Milestones) {
    let history = History::index(journal, &config.roles);
    let mut report = judge_indexed(&history, config);
    let (milestones, accepted) = Milestones::count_with_findings(
        journal,
        &history,
        report.stale_writes,
        report.token_regressions,
    );
    report.finding_milestones = report
        .violations
        .iter()
        .filter_map(|v| Some((v.seq, *accepted.get(&v.seq)?)))
        .collect();
    (report, milestones)
}

/// Judges the indexes of one journal.
fn judge_indexed(history: &History<'_>, config: &OracleConfig) -> Report {
    let mut violations = Vec::new();
    let mut counters = finding::check_all(history, config, &mut violations);
    let counts = counts::count(history);
    counters.accepted_writes = counts.accepted_writes;
    counters.rejected_writes = counts.rejected_writes;
    // Stable: findings at the same event keep the order of the checks.
    violations.sort_by_key(|v| v.seq);
    let violated = ViolationKind::ALL
        .iter()
        .any(|&k| k.counts(config.strict) && *counters.finding(k) > 0);
    Report {
        // A journal the oracle cannot trust is judged neither safe nor
        // violated: the run is an error, with what was missing.
        verdict: if !history.untrusted.is_empty() {
            Verdict::Error
        } else if violated {
            Verdict::Violation
        } else {
            Verdict::Safe
        },
        counters,
        false_rejections: counts.false_rejections,
        overlapping_leases: counts.overlapping_leases,
        violations,
        finding_milestones: BTreeMap::new(),
        untrusted: history.untrusted.clone(),
    }
}

/// A true time in seconds with 3 decimals (`16.012s`), by integer arithmetic
/// so that every platform prints the same text.
pub(crate) struct Secs(pub u64);

impl fmt::Display for Secs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&sim::journal::seconds(self.0))
    }
}

/// `token 33` or `no token`.
pub(crate) struct TokenText(pub Option<u64>);

impl fmt::Display for TokenText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(t) => write!(f, "token {t}"),
            None => f.write_str("no token"),
        }
    }
}
