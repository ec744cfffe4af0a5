//! `minority_acquire`: a client believes it acquired a lease (`acquired`)
//! that fewer than a majority of the design's N lock nodes had granted it
//! (`granted`), N ≥ 2. A majority of N is ⌊N/2⌋ + 1: two clients can never
//! both hold one. Designs that journal no `granted` are not judged.

use crate::oracle::history::History;
use crate::oracle::signature::{grant_ref, Signature};
use crate::oracle::{OracleConfig, Secs, Violation, ViolationKind};

/// Counts acquisitions not backed by a majority of the configured lock
/// nodes ([`OracleConfig::lock_nodes`]; 0: the lock nodes that appear in
/// the journal) and appends one violation for each.
pub(super) fn check(
    history: &History<'_>,
    config: &OracleConfig,
    violations: &mut Vec<Violation>,
) -> u64 {
    let lock_nodes = config.lock_nodes;
    let n = if lock_nodes > 0 {
        lock_nodes
    } else {
        let mut seen: Vec<&str> = history.lock_events.iter().map(|e| e.node).collect();
        seen.sort_unstable();
        seen.dedup();
        seen.len()
    };
    if n < 2 {
        return 0;
    }
    let majority = n / 2 + 1;
    let mut count = 0;
    for g in &history.grants {
        // A design that journals no `granted` for the lease is not judged.
        if g.granted_by.is_empty() || g.granted_by.len() >= majority {
            continue;
        }
        count += 1;
        violations.push(Violation {
            kind: ViolationKind::MinorityAcquire,
            seq: g.seq,
            t_ns: g.t_ns,
            explanation: format!(
                "{} believed it acquired the lock at {} with {} of the {n} lock nodes' grants \
                 ({}): a majority is {majority}, so another client can win one at the same time.",
                g.client,
                Secs(g.t_ns),
                g.granted_by.len(),
                g.granted_by.join(", "),
            ),
        });
    }
    count
}

/// The client that believed a minority's grant, and that grant.
pub(super) fn signature(history: &History<'_>, seq: u64, sig: &mut Signature) {
    if let Some(i) = history.grants.iter().position(|g| g.seq == seq) {
        sig.writer = Some(history.grants[i].client.to_owned());
        sig.grants = vec![grant_ref(history, i)];
    }
}
