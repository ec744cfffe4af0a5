//! `double_grant`: a lock node grants the lock to a client while its own
//! grant to another client is still live there (granted, and not yet ended
//! by that node's `expired` or `released`). The lock's contract is broken by
//! its own account, whatever the storage does: a fenced storage may reject
//! the older holder's writes, but two clients were told they hold the lock.
//! Each lock node is judged on its own (a Redlock node grants its own key).

use std::collections::BTreeMap;

use crate::oracle::history::History;
use crate::oracle::signature::Signature;
use crate::oracle::{OracleConfig, Secs, Violation, ViolationKind};

/// Counts double grants and appends one violation for each.
pub(super) fn check(
    history: &History<'_>,
    _: &OracleConfig,
    violations: &mut Vec<Violation>,
) -> u64 {
    let mut count = 0;
    // Per lock node, its live grants: (client, lease) → when it made them.
    let mut live: BTreeMap<&str, BTreeMap<(&str, u64), u64>> = BTreeMap::new();
    for e in &history.lock_events {
        let grants = live.entry(e.node).or_default();
        if e.ended() {
            grants.remove(&(e.client, e.lease));
        }
        if !e.granted() {
            continue;
        }
        let other = grants
            .iter()
            .filter(|((client, _), _)| *client != e.client)
            .min_by_key(|(_, t)| **t);
        if let Some(((client, lease), t_ns)) = other {
            count += 1;
            violations.push(Violation {
                kind: ViolationKind::DoubleGrant,
                seq: e.seq,
                t_ns: e.t_ns,
                explanation: format!(
                    "{} granted {} lease {} at {} while its grant of lease {lease} to {client} \
                     (granted at {}) was still live there: two holders at once, by the lock's \
                     own account.",
                    e.node,
                    e.client,
                    e.lease,
                    Secs(e.t_ns),
                    Secs(*t_ns)
                ),
            });
        }
        grants.insert((e.client, e.lease), e.t_ns);
    }
    count
}

/// The client granted the lock a second time, by the node's account.
pub(super) fn signature(history: &History<'_>, seq: u64, sig: &mut Signature) {
    if let Some(e) = history
        .lock_events
        .iter()
        .find(|e| e.seq == seq && e.granted())
    {
        sig.writer = Some(e.client.to_owned());
    }
}
