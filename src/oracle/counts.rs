//! The counters of a report: every output that shows them (`run --json`,
//! explore's per-seed lines) flattens [`Counters`] into its own fields,
//! under the names the finding kinds declare. Also the plain counts:
//! accepted and rejected writes, false rejections (the current holder
//! turned away) and overlapping believed leases.

use std::collections::BTreeMap;

use super::history::History;
use super::Counts;

/// How many of each finding one journal shows, and how many writes the
/// storage took and turned away: the counters that a run's report and each
/// seed of a sweep carry, under the names of the JSON fields and of the
/// `[expect]` keys (see [`Counts`], declared with the finding kinds). A
/// report's false rejections and overlapping leases are its own: a sweep's
/// seeds leave them out.
pub type Counters = Counts<u64>;

/// The counts that never make a run a violation by themselves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Plain {
    pub accepted_writes: u64,
    pub rejected_writes: u64,
    pub false_rejections: u64,
    pub overlapping_leases: u64,
}

/// Counts over the indexes of one journal.
pub(super) fn count(history: &History<'_>) -> Plain {
    let mut counts = Plain::default();
    for outcome in &history.outcomes {
        if outcome.accepted {
            counts.accepted_writes += 1;
            continue;
        }
        counts.rejected_writes += 1;
        let current = outcome.grant.is_some_and(|g| {
            history.newer_grant_before(g, outcome.seq).is_none()
                && history.ended_before(g, outcome.seq).is_none()
        });
        counts.false_rejections += u64::from(current);
    }
    counts.overlapping_leases = overlapping_leases(history);
    counts
}

/// Pairs (g, h) of grants to different clients, h later, where h was
/// acquired while g's client still believed it held g.
fn overlapping_leases(history: &History<'_>) -> u64 {
    // Each client believes in at most one grant at a time (a new `acquired`
    // ends belief in the previous one), so this map stays as small as the
    // number of clients. Value: where the belief ends (`u64::MAX`: never).
    let mut believers: BTreeMap<&str, u64> = BTreeMap::new();
    let mut pairs = 0;
    // The belief spans end where the client stopped believing for any
    // reason: a new grant, its release, a crash, and also the service's
    // `lost` and its own `lapsed`, after which it no longer holds the lock
    // in its own eyes.
    for (grant, belief) in history.grants.iter().zip(&history.spans.beliefs) {
        believers.retain(|_, until| *until > grant.seq);
        pairs += believers
            .keys()
            .filter(|&&client| client != grant.client)
            .count() as u64;
        let until = belief.until.map_or(u64::MAX, |(seq, _, _)| seq);
        believers.insert(grant.client, until);
    }
    pairs
}
