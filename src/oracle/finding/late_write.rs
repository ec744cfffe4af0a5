//! `late_write`: the storage accepts a write after its own grant ended (or
//! after the lock granted it anew), before it accepted any write made under
//! a newer grant, while no other client's newer grant was current at the
//! lock (the lock was free, or the writer holds it again): it was not on
//! time, but it broke nobody's exclusion. Counted and explained, never a
//! violation. Judged with zombie writes (see [`super::zombie_write`]): an
//! untimely acceptance is one or the other.

use crate::oracle::history::History;
use crate::oracle::signature::{at_write, Signature};
use crate::oracle::{OracleConfig, Violation, ViolationKind};

/// Counts late acceptances and appends one finding for each.
pub(super) fn check(
    history: &History<'_>,
    _: &OracleConfig,
    violations: &mut Vec<Violation>,
) -> u64 {
    super::zombie_write::untimely(history, ViolationKind::LateWrite, violations)
}

/// The writer, and the client the lock granted anew before the write
/// (none when the writer's grant had only expired or been released).
pub(super) fn signature(history: &History<'_>, seq: u64, sig: &mut Signature) {
    at_write(history, seq, sig, |_, g| {
        history.grants[g]
            .superseded
            .filter(|(at, _)| *at < seq)
            .map(|(_, i)| i)
    });
}
