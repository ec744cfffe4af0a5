//! `unbacked_acquire`: a client believes it acquired the lock (`acquired`)
//! on a grant the lock made once, that the same client had already
//! believed, and that the lock had ended since (a duplicated answer, a
//! retry's answer, counted as a second grant): the lock made one grant and
//! the client believed two. Judged on the lock's own account, so a fenced
//! storage that turns the unbacked holder's writes away does not hide it.
//! A grant the lock still holds when the client believes it again is
//! backed: a lock that is reentrant for its holder (a PostgreSQL session's
//! advisory lock whose unlock was lost) answers a second acquire with it.
//!
//! An `acquired` that matches no `granted` at all is not judged: the lock
//! may have made the grant in a step that a pause cut and a crash ended
//! before its `granted` was journaled (a durable lock, such as etcd's,
//! keeps the grant and answers a retry with it). Designs whose lock
//! journals no `granted` at all are not judged either.

use std::collections::BTreeMap;

use crate::oracle::history::History;
use crate::oracle::signature::{grant_ref, Signature};
use crate::oracle::{OracleConfig, Secs, Violation, ViolationKind};

/// Counts the unbacked acquisitions and appends one finding for each.
pub(super) fn check(
    history: &History<'_>,
    _: &OracleConfig,
    violations: &mut Vec<Violation>,
) -> u64 {
    let mut count = 0;
    // Each `granted` matched so far (by its client and position), and the
    // grant (index) that matched it first.
    let mut believed: BTreeMap<(&str, u64), usize> = BTreeMap::new();
    for (i, g) in history.grants.iter().enumerate() {
        // Only a grant matched to a `granted` can be told apart from the
        // one before it; see the module's docs for the grant that matches
        // none.
        if g.granted_by.is_empty() {
            continue;
        }
        let Some(&first) = believed.get(&(g.client, g.lock_seq)) else {
            believed.insert((g.client, g.lock_seq), i);
            continue;
        };
        // Still held at the lock: the lock backs the belief again.
        let Some(end) = history.grants[first].end.filter(|end| end.seq < g.seq) else {
            continue;
        };
        let why = format!(
            "the lock's grant it matches (made at {}) had already been acquired at {} and \
             {} at the lock at {}: the lock made one grant and {} believed two",
            Secs(g.lock_t_ns),
            Secs(history.grants[first].t_ns),
            if end.expired { "expired" } else { "released" },
            Secs(end.t_ns),
            g.client
        );
        count += 1;
        violations.push(Violation {
            kind: ViolationKind::UnbackedAcquire,
            seq: g.seq,
            t_ns: g.t_ns,
            explanation: format!(
                "{} believed it acquired the lock at {} ({}), but {why}. A belief the lock never \
                 backed.",
                g.client,
                Secs(g.t_ns),
                crate::oracle::TokenText(g.token),
            ),
        });
    }
    count
}

/// The client that believed the grant, and the grant.
pub(super) fn signature(history: &History<'_>, seq: u64, sig: &mut Signature) {
    if let Some(i) = history.grants.iter().position(|g| g.seq == seq) {
        sig.writer = Some(history.grants[i].client.to_owned());
        sig.grants = vec![grant_ref(history, i)];
    }
}
