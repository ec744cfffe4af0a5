//! `lost_update`: in increment workloads, a key whose final value is below
//! the number of increments the storage applied: every increment it
//! accepted (once per write, however many copies the network delivered),
//! whether or not its client heard the answer, and every increment a
//! client was told succeeded. A client that timed out while its increment,
//! computed from a stale read, was applied later hides nothing: that
//! increment counts. Journals without increment writes are not checked.

use std::collections::{BTreeMap, BTreeSet};

use crate::oracle::history::History;
use crate::oracle::signature::Signature;
use crate::oracle::{OracleConfig, Violation, ViolationKind};

#[derive(Default)]
struct Key<'a> {
    /// The increments applied to the key, by write id.
    applied: BTreeSet<&'a str>,
    final_value: i64,
    /// The last acceptance or counted acknowledgement of the key.
    last: (u64, u64),
}

/// Counts lost updates over all keys and appends one violation per key
/// that lost any.
pub(super) fn check(
    history: &History<'_>,
    _: &OracleConfig,
    violations: &mut Vec<Violation>,
) -> u64 {
    if !history.has_increments {
        return 0;
    }
    let is_increment = |write_id: &str| history.write(write_id).is_some_and(|w| w.increment);
    let mut keys: BTreeMap<&str, Key> = BTreeMap::new();
    for outcome in history.outcomes.iter().filter(|o| o.accepted) {
        let key = keys.entry(outcome.key).or_default();
        if let Some(v) = outcome.value {
            key.final_value = v;
        }
        key.last = key.last.max((outcome.seq, outcome.t_ns));
        if is_increment(outcome.write_id) {
            key.applied.insert(outcome.write_id);
        }
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
        key.applied.insert(ack.write_id);
        key.last = key.last.max((ack.seq, ack.t_ns));
    }
    let mut total = 0;
    for (name, key) in &keys {
        let applied = key.applied.len() as u64;
        let reflected = u64::try_from(key.final_value).unwrap_or(0);
        let lost = applied.saturating_sub(reflected);
        if lost == 0 {
            continue;
        }
        total += lost;
        let (seq, t_ns) = key.last;
        let were = if applied == 1 {
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
                "storage key {name:?} ends at {} but {applied} {were} applied: {lost} lost \
                 update{lost_s}.",
                key.final_value
            ),
        });
    }
    total
}

/// A lost update belongs to a key, not to a client's write: nothing to add.
pub(super) fn signature(_: &History<'_>, _: u64, _: &mut Signature) {}
