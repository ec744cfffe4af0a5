//! `token_regression`: a lock node hands out a token not greater than one it
//! handed out before (its `granted` events, in journal order). This is what
//! the lock *issued*: a grant that merely reaches its client late (after a
//! newer one reached another client) is not a regression — the storage's
//! fence deals with it, and the stale and zombie checks judge what it wrote.
//! Each lock node is judged on its own (Redlock's nodes keep independent
//! counters). Grants without tokens are not checked.

use std::collections::BTreeMap;

use super::history::History;
use super::{Secs, Violation, ViolationKind};

/// Counts regressing grants and appends one violation for each.
pub(super) fn check(history: &History<'_>, violations: &mut Vec<Violation>) -> u64 {
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
