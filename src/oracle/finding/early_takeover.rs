//! `early_takeover`: a lock or table hands the lock to another client by
//! taking it over (an `expired` with reason `taken_over`, as a DynamoDB
//! lock table journals a conditional put on the holder's record version)
//! while the holder's latest grant or renewal there still promised time:
//! the promise's true time plus its `ttl_ms`. The taker's clock measured
//! the lease, not the lock's; a taker that counts from when it saw the
//! holder's latest record version never takes over before that promise
//! ran out, so one that does counted from an older look (a version changed
//! by a heartbeat it did not start over for) and took over a live holder.
//!
//! Judged only where true time can be read off both clocks that matter:
//! the lock node's, which timed the promise, and the taker's, which timed
//! the wait; each read true time plus one constant offset at every event
//! of theirs (see `overlong_lease`). A clock fault or drift on either
//! explains an early takeover and is not judged; so are takeovers of grants
//! that promised no end (no `ttl_ms`). Ends for other reasons (a restart, a
//! closed session) are not takeovers; TTL expiries are `early_expiry`'s.

use std::collections::BTreeMap;

use crate::oracle::history::{History, LockKind};
use crate::oracle::signature::Signature;
use crate::oracle::{OracleConfig, Secs, Violation, ViolationKind};

use super::ROUNDING_NS;

/// The reason a lock journals on the `expired` that ends a taken-over
/// grant.
pub(crate) const TAKEN_OVER: &str = "taken_over";

/// Counts the early takeovers and appends one finding for each.
pub(super) fn check(
    history: &History<'_>,
    _: &OracleConfig,
    violations: &mut Vec<Violation>,
) -> u64 {
    let events = &history.lock_events;
    if !events.iter().any(|e| e.reason == Some(TAKEN_OVER)) {
        return 0;
    }
    let steady = |node: &str| history.steady_clocks.contains(node);
    // (lock node, client, lease) → its latest promise: (true time made,
    // end in true time).
    let mut promised: BTreeMap<(&str, &str, u64), (u64, u64)> = BTreeMap::new();
    let mut count = 0;
    for (i, e) in events.iter().enumerate() {
        if let Some(end) = e.promised_end_t_ns() {
            promised.insert((e.node, e.client, e.lease), (e.t_ns, end));
            continue;
        }
        if !(e.kind == LockKind::Expired && e.reason == Some(TAKEN_OVER)) {
            continue;
        }
        let Some(&(made, end)) = promised.get(&(e.node, e.client, e.lease)) else {
            continue;
        };
        // The taker: the next grant the same node made.
        let Some(taker) = events[i + 1..]
            .iter()
            .find(|g| g.node == e.node && g.granted())
        else {
            continue;
        };
        if !steady(e.node) || !steady(taker.client) {
            continue;
        }
        if e.t_ns.saturating_add(ROUNDING_NS) >= end {
            continue;
        }
        count += 1;
        violations.push(Violation {
            kind: ViolationKind::EarlyTakeover,
            seq: e.seq,
            t_ns: e.t_ns,
            explanation: format!(
                "{node} let {taker} take over {holder}'s lease {lease} at {}, but its latest \
                 grant or renewal (at {}) promised {holder} the lock until {}: {} early, with \
                 no clock fault to explain it. The taker took over a live holder.",
                Secs(e.t_ns),
                Secs(made),
                Secs(end),
                Secs(end - e.t_ns),
                node = e.node,
                taker = taker.client,
                holder = e.client,
                lease = e.lease,
            ),
        });
    }
    count
}

/// The holder whose grant was taken over, and that grant.
pub(super) fn signature(history: &History<'_>, seq: u64, sig: &mut Signature) {
    let Some(&i) = history.ends.get(&seq) else {
        return;
    };
    sig.writer = Some(history.grants[i].client.to_owned());
    sig.grants = vec![crate::oracle::signature::grant_ref(history, i)];
}
