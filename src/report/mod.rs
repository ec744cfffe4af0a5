//! Reports: renderings of a run's journal for people.
//!
//! Renderers read the journal and nothing else (not the designs, not log
//! text), so a user's own design renders like a bundled one.
//!
//! - [`lanes`](mod@lanes): terminal lanes in the style of DDIA's figure 9-6, one column
//!   per node, time flowing down.
//! - [`belief`]: who believes it holds which lease, beside the truth at the lock.
//! - [`step`]: every event explained in a sentence; `fencesim step`.
//! - [`markdown`], [`html`], [`svg`], [`perfetto`]: the files of `fencesim report`
//!   ([`axis`]: the time axis of the timeline and the figure).
//!
//! ```
//! use fencesim::report::{describe, lanes, LanesOptions};
//! use sim::journal::{Event, Journal};
//!
//! let rejected = Event::new(0, 16_012_000_000, "storage", 16_012_000_000, "rejected")
//!     .with("write", "client1/1")
//!     .with("token", 33u64)
//!     .with("max_token", 34u64);
//! assert_eq!(describe(&rejected), "REJECTED client1/1 (token 33 < 34)");
//! let out = lanes(
//!     &Journal::from_events([rejected]),
//!     &["storage".to_owned()],
//!     &LanesOptions::default(),
//! );
//! assert_eq!(out.lines().nth(2), Some("16.012s  REJECTED client1/1 (tok…"));
//! ```

pub mod axis;
pub mod belief;
#[cfg(feature = "report")]
pub mod html;
pub mod lanes;
#[cfg(feature = "report")]
pub mod markdown;
#[cfg(feature = "report")]
pub mod perfetto;
mod sentence;
pub mod step;
#[cfg(feature = "report")]
pub mod svg;

#[cfg(feature = "report")]
use crate::oracle::history::History;
#[cfg(feature = "report")]
use crate::oracle::roles::NO_ROLES;

pub use lanes::{describe, lanes, LanesOptions};

/// The nodes of `s` in the order its pages draw them: `s.nodes` as given,
/// then every other node of the journal as it first appears.
#[cfg(feature = "report")]
pub(crate) fn node_order<'a>(s: &Subject<'a>) -> Vec<&'a str> {
    let mut order = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for n in s
        .nodes
        .iter()
        .map(String::as_str)
        .chain(s.journal.events().iter().map(|e| e.node.as_str()))
    {
        if seen.insert(n) {
            order.push(n);
        }
    }
    order
}

/// The kind of the first finding of `report` at each event it points at,
/// by the event's `seq`: what the timeline and the figure mark an event
/// with, looked up instead of searched for at every event.
#[cfg(feature = "report")]
pub(crate) fn first_finding_at(
    report: &crate::oracle::Report,
) -> std::collections::BTreeMap<u64, &'static str> {
    let mut at = std::collections::BTreeMap::new();
    for v in &report.violations {
        at.entry(v.seq).or_insert(v.kind.as_str());
    }
    at
}

/// The stretches in which a node ran nothing: `(node, from, to, "paused")`
/// from a pause to what ended it, `(node, from, to, "down")` from a crash to
/// its restart; one still open at the end of the journal ends at `end_ns`.
/// The journal's history computes them ([`History::stops`]).
#[cfg(feature = "report")]
pub(crate) fn stopped_stretches(
    journal: &sim::journal::Journal,
    end_ns: u64,
) -> Vec<(&str, u64, u64, &'static str)> {
    History::index(journal, &NO_ROLES)
        .stops
        .iter()
        .map(|s| {
            (
                s.node,
                s.from_t_ns,
                s.to.map_or(end_ns, |(_, t)| t),
                s.what(),
            )
        })
        .collect()
}

/// What the file renderers ([`markdown`], [`html`], [`perfetto`]) draw: one
/// run's journal, the oracle's judgement of it, and the scenario's words.
#[derive(Clone, Copy, Debug)]
pub struct Subject<'a> {
    /// The scenario's name.
    pub name: &'a str,
    /// The scenario's description.
    pub description: &'a str,
    /// The seed of the run.
    pub seed: u64,
    /// The journal: the one source of what happened.
    pub journal: &'a sim::journal::Journal,
    /// The oracle's report of the journal (for the verdict and findings).
    pub report: &'a crate::oracle::Report,
    /// The milestones the run reached, as the run counted them
    /// ([`crate::oracle::check_and_count`]): shown, not counted again.
    pub milestones: &'a crate::oracle::Milestones,
    /// Node names in lane order.
    pub nodes: &'a [String],
    /// The command that replays the run.
    pub repro: &'a str,
    /// What the run left untested, one sentence each (scripted faults that
    /// never fired, a run cut short: [`crate::runner::ScenarioRun::untested`]).
    pub untested: &'a [String],
}
