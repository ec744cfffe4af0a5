//! `token_regression`: a lock node hands out a token not greater than one it
//! handed out before (its `granted` events, in journal order). This is what
//! the lock *issued*: a grant that merely reaches its client late (after a
//! newer one reached another client) is not a regression — the storage's
//! fence deals with it, and the stale and zombie checks judge what it wrote.
//! Each lock node is judged on its own (Redlock's nodes keep independent
//! counters). Grants without tokens are not checked.

use std::collections::BTreeMap;

use crate::oracle::history::{History, Issued};
use crate::oracle::signature::Signature;
use crate::oracle::{OracleConfig, Secs, Violation, ViolationKind};

/// Counts regressing grants and appends one violation for each.
pub(super) fn check(
    history: &History<'_>,
    _: &OracleConfig,
    violations: &mut Vec<Violation>,
) -> u64 {
    let mut count = 0;
    // Per lock node, the earlier grant holding the largest token so far.
    let mut largest: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, grant) in history.issued.iter().enumerate() {
        match largest.get(grant.node).map(|&j| &history.issued[j]) {
            Some(earlier) if grant.token <= earlier.token => {
                count += 1;
                violations.push(Violation {
                    kind: ViolationKind::TokenRegression,
                    seq: grant.seq,
                    t_ns: grant.t_ns,
                    explanation: format!(
                        "{} granted {} token {} at {}, not greater than token {} it had \
                         granted to {} at {}.",
                        grant.node,
                        grant.client,
                        grant.token,
                        Secs(grant.t_ns),
                        earlier.token,
                        earlier.client,
                        Secs(earlier.t_ns)
                    ),
                });
            }
            _ => {
                largest.insert(grant.node, i);
            }
        }
    }
    count
}

/// The client handed the regressed token, and the client of the larger
/// earlier token it is compared with.
pub(super) fn signature(history: &History<'_>, seq: u64, sig: &mut Signature) {
    let Some(at) = history.issued.iter().position(|i| i.seq == seq) else {
        return;
    };
    let grant = &history.issued[at];
    sig.writer = Some(grant.client.to_owned());
    // The earlier grant of the same node with the largest token (the first
    // to reach it), as the check compares.
    let earlier = history.issued[..at]
        .iter()
        .filter(|i| i.node == grant.node)
        .fold(None, |best: Option<&Issued<'_>>, i| match best {
            Some(b) if b.token >= i.token => Some(b),
            _ => Some(i),
        });
    sig.newer_holder = earlier.map(|e| e.client.to_owned());
}
