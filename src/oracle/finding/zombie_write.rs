//! `zombie_write` and `late_write`: the storage accepts a write whose grant
//! is no longer current (the lock had made a newer grant, or had ended this
//! one) before it accepted any write made under a newer grant, so fencing
//! tokens cannot stop it: the storage has not yet seen a newer token.
//!
//! Which of the two it is depends on what the lock held at that moment:
//! - a **zombie write** lands while a newer grant *to another client* is
//!   current at the lock (made, and not yet ended): that client's exclusion
//!   is broken, whether or not it has written yet. It counts toward the
//!   verdict when strict.
//! - a **late write** lands after its own grant ended with no other client's
//!   newer grant current (the lock was free, or the writer holds it again):
//!   it was not on time, but it broke nobody's exclusion. Counted and
//!   explained, never a violation.
//!
//! A write is judged once, at its first acceptance on a storage node: a
//! network duplicate of it is the same write.

use std::fmt::Write as _;

use super::stale_write::{superseding, write_name};
use crate::oracle::history::{Grant, History};
use crate::oracle::signature::{at_write, Signature};
use crate::oracle::{OracleConfig, Secs, TokenText, Violation, ViolationKind};

/// Counts zombie acceptances and appends one finding for each.
pub(super) fn check(
    history: &History<'_>,
    _: &OracleConfig,
    violations: &mut Vec<Violation>,
) -> u64 {
    untimely(history, ViolationKind::ZombieWrite, violations)
}

/// The writer, and the client whose newer grant was current: whose
/// exclusion the write broke.
pub(super) fn signature(history: &History<'_>, seq: u64, sig: &mut Signature) {
    at_write(history, seq, sig, |_, g| {
        history.current_newer_grant_of_another(g, seq)
    });
}

/// Counts the acceptances of writes whose grant was no longer current that
/// are of `kind` (a zombie or a late write: which one depends on whether
/// another client's newer grant was current) and appends one finding for
/// each.
pub(super) fn untimely(
    history: &History<'_>,
    kind: ViolationKind,
    violations: &mut Vec<Violation>,
) -> u64 {
    let mut count = 0;
    for outcome in history.outcomes.iter().filter(|o| o.accepted) {
        let Some(g) = outcome.grant else { continue };
        if outcome.redelivery || superseding(history, outcome).is_some() {
            continue; // judged at its first acceptance; or stale, reported as such
        }
        let newer = history.newer_grant_before(g, outcome.seq);
        let end = history.ended_before(g, outcome.seq);
        if newer.is_none() && end.is_none() {
            continue;
        }
        let holder = history.current_newer_grant_of_another(g, outcome.seq);
        let found = if holder.is_some() {
            ViolationKind::ZombieWrite
        } else {
            ViolationKind::LateWrite
        };
        if found != kind {
            continue;
        }
        count += 1;
        let grant = &history.grants[g];
        let token = history.write(outcome.write_id).and_then(|w| w.token);
        let mut text = format!(
            "{} accepted {} ({}) at {}, ",
            outcome.node,
            write_name(outcome),
            TokenText(token),
            Secs(outcome.t_ns)
        );
        if let Some(end) = end {
            let how = if end.expired {
                "expired"
            } else {
                "been released"
            };
            write!(
                text,
                "after its grant (granted at {}) had {how} at the lock at {}",
                Secs(grant.lock_t_ns),
                Secs(end.t_ns)
            )
            .unwrap();
            if end.seq < grant.seq {
                write!(
                    text,
                    ", before {} heard of it at {}",
                    grant.client,
                    Secs(grant.t_ns)
                )
                .unwrap();
            }
        } else if let Some(newer) = newer {
            let again = if newer.client == grant.client {
                " again"
            } else {
                ""
            };
            write!(
                text,
                "after {} had been granted the lock{again} at {} ({})",
                newer.client,
                Secs(newer.lock_t_ns),
                TokenText(newer.token)
            )
            .unwrap();
        }
        let tail = match holder {
            Some(holder) => {
                let holder = &history.grants[holder];
                format!(
                    ", while {}'s newer grant (granted at {}, {}) was current at the lock; \
                         no newer holder had written yet, so fencing cannot stop this: a zombie \
                         write.",
                    holder.client,
                    Secs(holder.lock_t_ns),
                    TokenText(holder.token)
                )
            }
            None => format!(
                "; {}: a late write, not a violation.",
                nobody_else(history, grant)
            ),
        };
        text.push_str(&tail);
        violations.push(Violation {
            kind,
            seq: outcome.seq,
            t_ns: outcome.t_ns,
            explanation: text,
        });
    }
    count
}

/// Why a late write broke no one's exclusion.
fn nobody_else(history: &History<'_>, grant: &Grant<'_>) -> String {
    let others = history.grants.iter().any(|h| h.client != grant.client);
    if others {
        "no other client's newer grant was current at the lock then, so it broke nobody's \
         exclusion"
            .to_owned()
    } else {
        format!(
            "no other client was ever granted the lock, so it broke nobody's exclusion ({} \
             wrote after its own lease)",
            grant.client
        )
    }
}
