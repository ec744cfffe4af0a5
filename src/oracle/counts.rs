//! The plain counts of a report: accepted and rejected writes, false
//! rejections (the current holder turned away) and overlapping believed
//! leases.

use std::collections::BTreeMap;

use super::history::History;

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
    for grant in &history.grants {
        believers.retain(|_, until| *until > grant.seq);
        pairs += believers
            .keys()
            .filter(|&&client| client != grant.client)
            .count() as u64;
        believers.insert(grant.client, grant.believed_until.unwrap_or(u64::MAX));
    }
    pairs
}
