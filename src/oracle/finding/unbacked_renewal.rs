//! `unbacked_renewal`: a client believes the lock extended its lease
//! (`renewed`) when no lock node journaled a renewal of that lease for it
//! since the renewals its earlier beliefs used up: a renewal that timed out
//! counted as a success, a stale or duplicated answer counted again. The
//! client's reckoning of its lease then runs past anything the lock
//! promised. Judged on the lock's own account, so a fenced storage that
//! turns the holder's writes away does not hide it.
//!
//! Each lock-side `renewed {client, lease}` backs one client `renewed` of
//! that lease (the earliest not yet backed, before it in the journal); a
//! lock renewal nobody believed (its answer lost, a duplicated request
//! renewed twice) backs nothing and is no finding. Several lock nodes
//! renewing one client renewal (a majority) leave renewals over, which can
//! back a later belief: that errs towards no finding, never towards a false
//! one. A lease whose `granted` the lock did not journal is not judged (see
//! `unbacked_acquire`), nor a `renewed` of a lease the client had stopped
//! believing.

use std::collections::BTreeMap;

use crate::oracle::history::{History, LockKind};
use crate::oracle::signature::Signature;
use crate::oracle::{OracleConfig, Secs, Violation, ViolationKind};

/// Counts the unbacked renewals and appends one finding for each.
pub(super) fn check(
    history: &History<'_>,
    _: &OracleConfig,
    violations: &mut Vec<Violation>,
) -> u64 {
    let beliefs = &history.spans.beliefs;
    if beliefs.iter().all(|b| b.renewals.is_empty()) {
        return 0;
    }
    // The lock's grants and renewals of each (client, lease): journal
    // positions and true times, in journal order.
    let mut granted: BTreeMap<(&str, u64), ()> = BTreeMap::new();
    let mut renewed: BTreeMap<(&str, u64), Vec<(u64, u64)>> = BTreeMap::new();
    for e in &history.lock_events {
        match e.kind {
            LockKind::Granted => {
                granted.insert((e.client, e.lease), ());
            }
            LockKind::Renewed => renewed
                .entry((e.client, e.lease))
                .or_default()
                .push((e.seq, e.t_ns)),
            LockKind::Released | LockKind::Expired => {}
        }
    }
    // How many of each lease's lock renewals earlier beliefs used up.
    let mut used: BTreeMap<(&str, u64), usize> = BTreeMap::new();
    let mut count = 0;
    for b in beliefs.iter().filter(|b| !b.renewals.is_empty()) {
        let key = (b.client, b.lease);
        if !granted.contains_key(&key) {
            continue;
        }
        let lock = renewed.get(&key).map_or(&[][..], Vec::as_slice);
        let next = used.entry(key).or_default();
        for m in &b.renewals {
            if lock
                .get(*next)
                .is_some_and(|&(lock_seq, _)| lock_seq < m.seq)
            {
                *next += 1;
                continue;
            }
            let last = match next.checked_sub(1).and_then(|i| lock.get(i)) {
                Some(&(_, t)) => format!("its last renewal of that lease was at {}", Secs(t)),
                None => "it never renewed that lease".to_owned(),
            };
            count += 1;
            violations.push(Violation {
                kind: ViolationKind::UnbackedRenewal,
                seq: m.seq,
                t_ns: m.t_ns,
                explanation: format!(
                    "{client} believed at {} that the lock renewed its lease {lease} for {} \
                     ms, but no lock node journaled a renewal of it that {client} had not \
                     already counted: {last}. A belief the lock never backed.",
                    Secs(m.t_ns),
                    m.ttl_ms,
                    client = b.client,
                    lease = b.lease,
                ),
            });
        }
    }
    count
}

/// The client that believed the renewal, and the grant it renewed.
pub(super) fn signature(history: &History<'_>, seq: u64, sig: &mut Signature) {
    let belief = history
        .spans
        .beliefs
        .iter()
        .find(|b| b.renewals.iter().any(|m| m.seq == seq));
    if let Some(b) = belief {
        sig.writer = Some(b.client.to_owned());
        if let Some(i) = history.grants.iter().position(|g| g.seq == b.from_seq) {
            sig.grants = vec![crate::oracle::signature::grant_ref(history, i)];
        }
    }
}
