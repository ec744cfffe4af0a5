//! `lost_update`: in increment workloads, a key whose final value is below
//! the number of increments the storage acknowledged. Journals without
//! increment writes are not checked.

use std::collections::BTreeMap;

use super::history::History;
use super::{Violation, ViolationKind};

#[derive(Default)]
struct Key {
    acknowledged: u64,
    final_value: i64,
    /// The last acceptance or counted acknowledgement of the key.
    last: (u64, u64),
}

/// Counts lost updates over all keys and appends one violation per key
/// that lost any.
pub(super) fn check(history: &History<'_>, violations: &mut Vec<Violation>) -> u64 {
    if !history.has_increments {
        return 0;
    }
    let mut keys: BTreeMap<&str, Key> = BTreeMap::new();
    for outcome in history.outcomes.iter().filter(|o| o.accepted) {
        let key = keys.entry(outcome.key).or_default();
        if let Some(v) = outcome.value {
            key.final_value = v;
        }
        key.last = key.last.max((outcome.seq, outcome.t_ns));
    }
    for ack in history.acks.iter().filter(|a| a.ok) {
        let write = history.write(ack.write_id);
        let increment = ack
            .increment
            .unwrap_or_else(|| write.is_some_and(|w| w.increment));
        if !increment {
            continue;
        }
        // An acknowledged increment the storage never journaled as accepted
        // has no key; it counts against the default key, where it is lost.
        let name = write.and_then(|w| w.key).unwrap_or("");
        let key = keys.entry(name).or_default();
        key.acknowledged += 1;
        key.last = key.last.max((ack.seq, ack.t_ns));
    }
    let mut total = 0;
    for (name, key) in &keys {
        let reflected = u64::try_from(key.final_value).unwrap_or(0);
        let lost = key.acknowledged.saturating_sub(reflected);
        if lost == 0 {
            continue;
        }
        total += lost;
        let (seq, t_ns) = key.last;
        let were = if key.acknowledged == 1 {
            "increment was"
        } else {
            "increments were"
        };
        let lost_s = if lost == 1 { "" } else { "s" };
        violations.push(Violation {
            kind: ViolationKind::LostUpdate,
            seq,
            t_ns,
            explanation: format!(
                "storage key {name:?} ends at {} but {} {were} acknowledged: {lost} lost \
                 update{lost_s}.",
                key.final_value, key.acknowledged
            ),
        });
    }
    total
}
