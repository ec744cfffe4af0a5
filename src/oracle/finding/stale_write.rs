//! `stale_write`: the storage accepts a write after it has already accepted a
//! write made under a newer grant (newer in the lock's order: see
//! [`History::newer`]). The headline check; every design is held to it, with
//! tokens or without. An acceptance the storage journaled with a
//! `precondition` (a compare-and-set on the current version, a token checked
//! in the row) is judged by that precondition: it cannot be stale.

use crate::oracle::history::{History, Outcome};
use crate::oracle::signature::{at_write, Signature};
use crate::oracle::{OracleConfig, Secs, TokenText, Violation, ViolationKind};

/// The earlier acceptance, at the same storage node, made under a grant
/// newer than `outcome`'s, if any (conditional acceptances included).
pub(super) fn superseding<'h, 'a>(
    history: &'h History<'a>,
    outcome: &Outcome<'a>,
) -> Option<&'h Outcome<'a>> {
    outcome.superseding.map(|i| &history.outcomes[i])
}

/// Counts stale writes and appends one violation for each, at its first
/// stale acceptance: a network duplicate of a write is the same write, so a
/// write delivered twice after a newer holder's is one stale write (and a
/// duplicate that lands after a newer holder's write is one, however its
/// first delivery fared).
pub(super) fn check(
    history: &History<'_>,
    _: &OracleConfig,
    violations: &mut Vec<Violation>,
) -> u64 {
    let mut count = 0;
    let mut judged = std::collections::BTreeSet::new();
    for outcome in history.outcomes.iter().filter(|o| o.accepted) {
        if outcome.conditional {
            continue;
        }
        let Some(prior) = superseding(history, outcome) else {
            continue;
        };
        if !outcome.write_id.is_empty() && !judged.insert((outcome.node, outcome.write_id)) {
            continue;
        }
        debug_assert!(
            matches!((prior.grant, outcome.grant), (Some(p), Some(g)) if history.newer(p, g)),
            "{prior:?} does not supersede {outcome:?}"
        );
        count += 1;
        violations.push(Violation {
            kind: ViolationKind::StaleWrite,
            seq: outcome.seq,
            t_ns: outcome.t_ns,
            explanation: format!(
                "{} accepted {} at {}, after it had already accepted {} made under a newer \
                 grant ({}): a stale write.",
                outcome.node,
                write_text(history, outcome),
                Secs(outcome.t_ns),
                write_name(prior),
                grant_text(history, prior),
            ),
        });
    }
    count
}

/// The writer, and the client whose earlier accepted write makes it stale.
pub(super) fn signature(history: &History<'_>, seq: u64, sig: &mut Signature) {
    at_write(history, seq, sig, |outcome, _| {
        outcome.superseding.and_then(|i| history.outcomes[i].grant)
    });
}

/// `client1's write client1/1`.
pub(super) fn write_name(outcome: &Outcome<'_>) -> String {
    format!("{}'s write {}", outcome.client, outcome.write_id)
}

/// `token 33, granted at 0.002s` for the write of `outcome`: the time at
/// which the lock made its grant, not when the client heard of it.
pub(super) fn grant_text(history: &History<'_>, outcome: &Outcome<'_>) -> String {
    let token = history.write(outcome.write_id).and_then(|w| w.token);
    match outcome.grant {
        Some(g) => format!(
            "{}, granted at {}",
            TokenText(token),
            Secs(history.grants[g].lock_t_ns)
        ),
        None => TokenText(token).to_string(),
    }
}

/// `client1's write client1/1 (token 33, granted at 0.002s)`.
fn write_text(history: &History<'_>, outcome: &Outcome<'_>) -> String {
    format!("{} ({})", write_name(outcome), grant_text(history, outcome))
}
