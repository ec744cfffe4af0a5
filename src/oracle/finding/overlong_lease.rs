//! `overlong_lease`: a client's own lease check passed (`checked`) with
//! time left that runs, in true time, past the end the lock promised: the
//! latest `granted` or `renewed` of that lease at any lock node, before the
//! check, plus the TTL it named. With no clock fault to blame, the client's
//! arithmetic is wrong (a renewal counted from when its answer came rather
//! than from when it was asked, a TTL that is not the lock's): it believes,
//! and will write, after the lock may have given the lock to another.
//!
//! Judged only where true time can be read off both clocks: the client's
//! and every lock node's wall clock read true time plus one constant offset
//! at every event of theirs (no skew that changes, no drift, no rate
//! change, no jump), so a duration on either is a duration in true time,
//! and the client was neither paused nor down from one TTL before the
//! promise to the check (a paused node's monotonic clock does not count
//! the paused time). A clock fault, a drifting clock or a pause explains a
//! difference, and the check stands aside for it. With several lock nodes the latest of their
//! promises counts, which errs towards no finding. A check of a lease no
//! lock node promised an end for (a session's lock, a design without
//! `ttl_ms`) is not judged.
//!
//! The client's end is read as the check's true time plus `remaining_ms`,
//! which the client rounds down: never later than the end it believed. A
//! lock promise is exact to the nanosecond, so the tolerance is the
//! nanosecond rounding of a timer's wait, as for `early_expiry`.

use std::collections::BTreeMap;

use crate::oracle::history::History;
use crate::oracle::signature::Signature;
use crate::oracle::{OracleConfig, Secs, Violation, ViolationKind};

use super::ROUNDING_NS;

/// Each lock node's latest promise for one (client, lease): the end in
/// true time, and the true time of the event that made it.
type Promises<'a> = BTreeMap<&'a str, (u64, u64)>;

/// Counts the overlong leases and appends one finding for each.
pub(super) fn check(
    history: &History<'_>,
    _: &OracleConfig,
    violations: &mut Vec<Violation>,
) -> u64 {
    if history.checks.is_empty() {
        return 0;
    }
    let steady = |node: &str| history.steady_clocks.contains(node);
    // (client, lease) → its promises, up to the check at hand.
    let mut promised: BTreeMap<(&str, u64), Promises<'_>> = BTreeMap::new();
    let mut lock = history.lock_events.iter().peekable();
    let mut count = 0;
    for c in &history.checks {
        while let Some(e) = lock.next_if(|e| e.seq < c.seq) {
            let Some(end) = e.promised_end_t_ns() else {
                continue;
            };
            promised
                .entry((e.client, e.lease))
                .or_default()
                .insert(e.node, (end, e.t_ns));
        }
        let Some(ends) = promised.get(&(c.client, c.lease)) else {
            continue;
        };
        if !steady(c.client) || !ends.keys().all(|n| steady(n)) {
            continue;
        }
        let Some((&node, &(lock_end, made))) = ends.iter().max_by_key(|(_, (end, _))| *end) else {
            continue;
        };
        // A pause of the client from a TTL before the promise to the check
        // explains a difference: a paused node's monotonic clock does not
        // count the paused time, so its durations are not true ones.
        let from = made.saturating_sub(lock_end - made);
        let paused = history.stops.iter().any(|s| {
            s.node == c.client && s.from_t_ns <= c.t_ns && s.to.map_or(true, |(_, to)| to >= from)
        });
        if paused {
            continue;
        }
        let client_end = c
            .t_ns
            .saturating_add(c.remaining_ms.saturating_mul(1_000_000));
        if client_end <= lock_end.saturating_add(ROUNDING_NS) {
            continue;
        }
        count += 1;
        violations.push(Violation {
            kind: ViolationKind::OverlongLease,
            seq: c.seq,
            t_ns: c.t_ns,
            explanation: format!(
                "{client}'s lease check at {} passed with {} ms left: its lease {lease} ran, by \
                 its own reckoning, until {}, but the lock promised it only until {} ({node}'s \
                 promise made at {}), {} later than the lock promised, with no clock fault to \
                 explain it. The client's arithmetic is wrong.",
                Secs(c.t_ns),
                c.remaining_ms,
                Secs(client_end),
                Secs(lock_end),
                Secs(made),
                Secs(client_end - lock_end),
                client = c.client,
                lease = c.lease,
            ),
        });
    }
    count
}

/// The client whose check passed, and the grant it checked.
pub(super) fn signature(history: &History<'_>, seq: u64, sig: &mut Signature) {
    let Some(c) = history.checks.iter().find(|c| c.seq == seq) else {
        return;
    };
    sig.writer = Some(c.client.to_owned());
    let grant = history
        .grants
        .iter()
        .rposition(|g| g.client == c.client && g.seq < seq);
    if let Some(i) = grant {
        sig.grants = vec![crate::oracle::signature::grant_ref(history, i)];
    }
}
