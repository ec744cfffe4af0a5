//! `zombie_write`: the storage accepts a write whose grant is no longer
//! current (the lock had made a newer grant, or had ended this one) before
//! it accepted any write made under a newer grant. Fencing tokens cannot stop it, since the
//! storage has not yet seen a newer token; it counts toward the verdict only
//! when strict.

use std::fmt::Write as _;

use super::history::History;
use super::stale::{superseding, write_name};
use super::{Secs, TokenText, Violation, ViolationKind};

/// Counts zombie acceptances and appends one violation for each.
pub(super) fn check(history: &History<'_>, violations: &mut Vec<Violation>) -> u64 {
    let mut count = 0;
    for outcome in history.outcomes.iter().filter(|o| o.accepted) {
        let Some(g) = outcome.grant else { continue };
        if superseding(history, outcome).is_some() {
            continue; // stale, reported as such
        }
        let newer = history.newer_grant_before(g, outcome.seq);
        let end = history.ended_before(g, outcome.seq);
        if newer.is_none() && end.is_none() {
            continue;
        }
        count += 1;
        let grant = &history.grants[g];
        let token = history.write(outcome.write_id).and_then(|w| w.token);
        let mut text = format!(
            "{} accepted {} ({}) at {} although ",
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
                "its grant (granted at {}) had {how} at the lock at {}",
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
        }
        if let Some(newer) = newer {
            let again = if newer.client == grant.client {
                " again"
            } else {
                ""
            };
            if end.is_some() {
                text.push_str(" and ");
            }
            write!(
                text,
                "{} had been granted the lock{again} at {} ({})",
                newer.client,
                Secs(newer.lock_t_ns),
                TokenText(newer.token)
            )
            .unwrap();
            if end.is_none() {
                write!(text, ", after its own grant at {}", Secs(grant.lock_t_ns)).unwrap();
            }
        }
        text.push_str(
            "; no newer holder had written yet, so fencing cannot stop this: a zombie write.",
        );
        violations.push(Violation {
            kind: ViolationKind::ZombieWrite,
            seq: outcome.seq,
            t_ns: outcome.t_ns,
            explanation: text,
        });
    }
    count
}
