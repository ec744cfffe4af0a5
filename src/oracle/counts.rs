//! The counters of a report, declared once: every output that shows them
//! (`run --json`, explore's per-seed lines) flattens [`Counters`] into its
//! own fields, under these names. Also the plain counts: accepted and
//! rejected writes, false rejections (the current holder turned away) and
//! overlapping believed leases.

use std::collections::BTreeMap;

use serde::Serialize;

use super::history::History;

/// How many of each finding one journal shows, and how many writes the
/// storage took and turned away: the counters that a run's report and each
/// seed of a sweep carry, under the names of the JSON fields and of the
/// `[expect]` keys. (A report's false rejections and overlapping leases are
/// its own: a sweep's seeds leave them out.)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Counters {
    /// Acceptances of a write after one made under a newer grant (in the
    /// lock's order), except acceptances on a precondition.
    pub stale_writes: u64,
    /// Acceptances of a write whose grant was no longer current, not stale,
    /// while another client's newer grant was current at the lock.
    pub zombie_writes: u64,
    /// Acceptances of a write whose grant was no longer current, not stale,
    /// while no other client's newer grant was current: never a violation.
    pub late_writes: u64,
    /// Storage `accepted` events.
    pub accepted_writes: u64,
    /// Storage `rejected` events.
    pub rejected_writes: u64,
    /// Tokens a lock node handed out that were not greater than one it had
    /// handed out before.
    pub token_regressions: u64,
    /// Applied increments missing from the final values.
    pub lost_updates: u64,
    /// Grants a lock node made while its grant to another client was live.
    pub double_grants: u64,
    /// Grants a lock node ended before the end it had promised them.
    pub early_expiries: u64,
    /// Acquisitions a client believed with fewer than a majority of the
    /// lock nodes' grants.
    pub minority_acquires: u64,
}

/// The counts that never make a run a violation by themselves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Counts {
    pub accepted_writes: u64,
    pub rejected_writes: u64,
    pub false_rejections: u64,
    pub overlapping_leases: u64,
}

/// Counts over the indexes of one journal.
pub(super) fn count(history: &History<'_>) -> Counts {
    let mut counts = Counts::default();
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
