//! `token_regression`: a grant whose token is not greater than the largest
//! token of any earlier grant. Grants without tokens are not checked.

use super::history::History;
use super::{Secs, Violation, ViolationKind};

/// Counts regressing grants and appends one violation for each.
pub(super) fn check(history: &History<'_>, violations: &mut Vec<Violation>) -> u64 {
    let mut count = 0;
    // The earlier grant holding the largest token so far.
    let mut largest: Option<(u64, usize)> = None;
    for (i, grant) in history.grants.iter().enumerate() {
        let Some(token) = grant.token else { continue };
        match largest {
            Some((max, j)) if token <= max => {
                count += 1;
                let earlier = &history.grants[j];
                violations.push(Violation {
                    kind: ViolationKind::TokenRegression,
                    seq: grant.seq,
                    t_ns: grant.t_ns,
                    explanation: format!(
                        "{} was granted token {token} at {}, not greater than token {max} \
                         granted to {} at {}.",
                        grant.client,
                        Secs(grant.t_ns),
                        earlier.client,
                        Secs(earlier.t_ns)
                    ),
                });
            }
            _ => largest = Some((token, i)),
        }
    }
    count
}
