//! `explore --generic`: the question a new user asks of a design. With its
//! own `[[faults]]` and `[explore]` table dropped, does the generic table
//! (every fault kind, a swarm of them per seed, one to three faults, maxima
//! scaled to the scenario's timeouts: [`ExploreSpec::scaled`]) find the bug
//! the scenario's `[expect]` describes, by the same mechanism?
//!
//! A failing seed *reproduces* the scenario's mechanism when it finds every
//! violation kind `[expect]` counts above zero and reaches every milestone
//! `[expect] mechanism` lists ([`Expect::reproduced_by`]): a file says what
//! the bug is, a program checks it, so "found" never rests on a reading of
//! the trace.
//!
//! ```
//! use fencesim::design::catalog::Registry;
//! use fencesim::explore::generic;
//! let s = fencesim::scenario::load_file(&Registry::builtin(), "scenarios/figure-9-6-unfenced.toml".as_ref()).unwrap();
//! let g = generic::scenario(&s);
//! assert!(g.faults.is_empty() && g.explore.is_none());
//! assert_eq!(g.expect.mechanism, ["holder_paused_past_lease", "zombie_write_sent"]);
//! ```
//!
//! [`ExploreSpec::scaled`]: crate::scenario::ExploreSpec::scaled
//! [`Expect::reproduced_by`]: crate::scenario::Expect::reproduced_by

use super::sweep::SeedReport;
use crate::scenario::{Expect, Scenario};

/// `scenario` as `--generic` explores it: without its `[[faults]]` and its
/// `[explore]` table; everything else, `[expect]` included, kept.
pub fn scenario(scenario: &Scenario) -> Scenario {
    let mut s = scenario.clone();
    s.faults.clear();
    s.explore = None;
    s
}

/// Whether the failing seed `report` reproduces the mechanism of its
/// scenario's `[expect]` (`None`: it names no violation kind and no
/// mechanism), as judged on the seed's own findings when it ran
/// ([`Expect::reproduced_by`]).
pub fn reproduces(report: &SeedReport) -> Option<bool> {
    report.reproduced
}

/// What `[expect]` says the scenario's bug is, as text: its violation
/// kinds, then its milestones (`stale_writes + lock_restarted +
/// two_believers`); `None` when it says nothing.
pub fn describe(expect: &Expect) -> Option<String> {
    let mut parts: Vec<&str> = expect.violation_kinds();
    parts.extend(expect.mechanism.iter().map(String::as_str));
    (!parts.is_empty()).then(|| parts.join(" + "))
}

/// The failing seeds of a sweep that reproduce a mechanism: how many, and
/// the lowest.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reproduced {
    /// Failing seeds that reproduce it.
    pub seeds: u64,
    /// The lowest of them.
    pub first: Option<u64>,
}

impl Reproduced {
    /// Counts `report` if it reproduces its scenario's mechanism; returns
    /// whether it does (`None`: nothing to reproduce).
    pub fn observe(&mut self, report: &SeedReport) -> Option<bool> {
        let yes = reproduces(report)?;
        if yes {
            self.seeds += 1;
            self.first = Some(self.first.map_or(report.seed, |f| f.min(report.seed)));
        }
        Some(yes)
    }
}
