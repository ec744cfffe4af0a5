//! `early_takeover`: a table lets a client take over a grant whose latest
//! renewal still promised its holder time.

use super::*;

/// The table grants client1 lease 1 at 0 s for 10 s; a heartbeat at
/// `renewed_ms` renews it for 10 s; client2 takes it over at 12 s.
fn taken_over_at_12s(renewed_ms: u64) -> J {
    J::new()
        .push(
            ev(0, "lock", "granted")
                .with("client", "client1")
                .with("lease", 1u64)
                .with("token", 1u64)
                .with("ttl_ms", 10_000u64),
        )
        .acquired(1, "client1", 1, Some(1))
        .push(
            ev(renewed_ms, "lock", "renewed")
                .with("client", "client1")
                .with("lease", 1u64)
                .with("ttl_ms", 10_000u64),
        )
        .push(
            ev(12_000, "lock", "expired")
                .with("client", "client1")
                .with("lease", 1u64)
                .with("reason", "taken_over"),
        )
        .push(
            ev(12_000, "lock", "granted")
                .with("client", "client2")
                .with("lease", 2u64)
                .with("token", 2u64)
                .with("ttl_ms", 10_000u64),
        )
        .acquired(12_001, "client2", 2, Some(2))
}

#[test]
fn a_takeover_before_the_holders_latest_promise_is_a_violation() {
    let r = judge(taken_over_at_12s(5_000));
    assert_eq!(r.early_takeovers, 1);
    assert_eq!(r.verdict, Verdict::Violation);
    assert_eq!(kinds(&r), [ViolationKind::EarlyTakeover]);
    assert_eq!(
        r.violations[0].explanation,
        "lock let client2 take over client1's lease 1 at 12.000s, but its latest grant or \
         renewal (at 5.000s) promised client1 the lock until 15.000s: 3.000s early, with no \
         clock fault to explain it. The taker took over a live holder."
    );
}

#[test]
fn a_takeover_after_the_promise_or_with_a_clock_to_blame_is_no_finding() {
    // The latest heartbeat at 1.5 s promised until 11.5 s: taken over after.
    let r = judge(taken_over_at_12s(1_500));
    assert_eq!(r.early_takeovers, 0);
    assert_eq!(r.verdict, Verdict::Safe);
    // The taker's clock read another offset at one of its events: its wait
    // was not true time, so nothing is judged.
    let r = judge(
        taken_over_at_12s(5_000).push(
            sim::journal::Event::new(0, 13_000_000_000, "client2", 14_000_000_000, "released")
                .with("lease", 2u64),
        ),
    );
    assert_eq!(r.early_takeovers, 0);
}
