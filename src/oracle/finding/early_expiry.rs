//! `early_expiry`: a lock node ends a grant (`expired`, a TTL running out)
//! before the end its `granted` or latest `renewed` promised (`ttl_ms`), by
//! both of its own clocks: its monotonic clock (`mono_ns`) and its wall
//! clock (the event's local time). A lock may run its expiry on either;
//! ending early on both is ending early on the clock it chose. A wall clock
//! that jumps forward ends a wall-clock lease early by true time: that is
//! the clock's fault, shown as such (`lock_clock_forward`), not the lock's.
//! Judged on the lock's own events and clocks, so that no storage, however
//! well fenced, can mask a broken lock.
//!
//! Grants with no `ttl_ms` (a session's lock, kept alive apart from the
//! grant) and ends with a `reason` (a restart, a closed session) promise
//! nothing and are not judged; neither are designs that journal no
//! `granted`.

use std::collections::BTreeMap;

use crate::oracle::history::{History, LockKind};
use crate::oracle::signature::Signature;
use crate::oracle::{OracleConfig, Secs, Violation, ViolationKind};

use super::ROUNDING_NS;

/// Counts early expiries and appends one violation for each.
pub(super) fn check(
    history: &History<'_>,
    _: &OracleConfig,
    violations: &mut Vec<Violation>,
) -> u64 {
    struct Promise {
        t_ns: u64,
        local_ns: i64,
        mono_ns: u64,
        ttl_ms: u64,
        renewed: bool,
    }
    let mut count = 0;
    // (lock node, client, lease) → the latest promise made for it.
    let mut promised: BTreeMap<(&str, &str, u64), Promise> = BTreeMap::new();
    for e in &history.lock_events {
        let key = (e.node, e.client, e.lease);
        match e.kind {
            LockKind::Granted | LockKind::Renewed => match (e.ttl_ms, e.mono_ns) {
                (Some(ttl_ms), Some(mono_ns)) => {
                    promised.insert(
                        key,
                        Promise {
                            t_ns: e.t_ns,
                            local_ns: e.local_ns,
                            mono_ns,
                            ttl_ms,
                            renewed: matches!(e.kind, LockKind::Renewed),
                        },
                    );
                }
                // A grant that promises nothing replaces an earlier promise.
                _ if matches!(e.kind, LockKind::Granted) => {
                    promised.remove(&key);
                }
                _ => {}
            },
            LockKind::Released => {
                promised.remove(&key);
            }
            LockKind::Expired => {
                let Some(p) = promised.remove(&key) else {
                    continue;
                };
                let (Some(mono_ns), None) = (e.mono_ns, e.reason) else {
                    continue;
                };
                let ttl_ns = p.ttl_ms.saturating_mul(1_000_000);
                let mono = mono_ns.saturating_sub(p.mono_ns);
                let wall = u64::try_from(e.local_ns.saturating_sub(p.local_ns)).unwrap_or(0);
                let held = mono.max(wall);
                if held.saturating_add(ROUNDING_NS) >= ttl_ns {
                    continue;
                }
                count += 1;
                let what = if p.renewed { "renewal" } else { "grant" };
                violations.push(Violation {
                    kind: ViolationKind::EarlyExpiry,
                    seq: e.seq,
                    t_ns: e.t_ns,
                    explanation: format!(
                        "{} expired {}'s lease {} at {}, {} on its own clock after the {what} \
                         at {} that promised {}: {} early (monotonic clock {}, wall clock {}). \
                         The lock ended a grant before the end it promised.",
                        e.node,
                        e.client,
                        e.lease,
                        Secs(e.t_ns),
                        Secs(held),
                        Secs(p.t_ns),
                        Secs(ttl_ns),
                        Secs(ttl_ns - held),
                        Secs(mono),
                        Secs(wall),
                    ),
                });
            }
        }
    }
    count
}

/// The client whose grant the lock ended early.
pub(super) fn signature(history: &History<'_>, seq: u64, sig: &mut Signature) {
    if let Some(e) = history.lock_events.iter().find(|e| e.seq == seq) {
        sig.writer = Some(e.client.to_owned());
    }
}
