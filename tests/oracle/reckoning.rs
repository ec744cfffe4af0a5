//! `overlong_lease`: a client's lease check passes with time left past the
//! end the lock promised, its clocks and the lock's reading true time.

use super::*;
use sim::journal::Event;

/// The lock grants lease 1 at 1 s for 10 s (to 11 s); a renewal asked at 6 s
/// is made at 6.5 s for 10 s (to 16.5 s).
fn renewed_late(remaining_ms: u64) -> J {
    renewed_late_paused(remaining_ms, false)
}

/// The same, with client1 paused from 10 s to 11 s if `paused`.
fn renewed_late_paused(remaining_ms: u64, paused: bool) -> J {
    let j = J::new()
        .push(
            ev(1_000, "lock", "granted")
                .with("client", "client1")
                .with("lease", 1u64)
                .with("token", 33u64)
                .with("ttl_ms", 10_000u64),
        )
        .acquired(1_001, "client1", 1, Some(33))
        .push(
            ev(6_500, "lock", "renewed")
                .with("client", "client1")
                .with("lease", 1u64)
                .with("ttl_ms", 10_000u64),
        )
        .push(
            ev(9_000, "client1", "renewed")
                .with("lease", 1u64)
                .with("ttl_ms", 10_000u64)
                .with("asked_ago_ns", 3_000_000_000u64),
        );
    let j = if paused {
        j.push(ev(10_000, "client1", "pause").with("duration_ms", 1_000u64))
            .push(ev(11_000, "client1", "resume"))
    } else {
        j
    };
    j.push(
        ev(12_000, "client1", "checked")
            .with("lease", 1u64)
            .with("remaining_ms", remaining_ms),
    )
    .wrote(12_001, "client1", "client1/1", Some(33))
    .accepted(12_002, "client1/1", Some(33))
}

/// A renewal counted from when its (slow) answer came, at 9 s: the client
/// believes its lease until 19 s, the lock promised 16.5 s.
#[test]
fn a_check_that_counts_past_the_locks_promise_is_a_violation() {
    let r = judge(renewed_late(7_000));
    assert_eq!(r.overlong_leases, 1);
    assert_eq!(r.verdict, Verdict::Violation);
    assert_eq!(kinds(&r), [ViolationKind::OverlongLease]);
    assert_eq!(
        r.violations[0].explanation,
        "client1's lease check at 12.000s passed with 7000 ms left: its lease 1 ran, by its own \
         reckoning, until 19.000s, but the lock promised it only until 16.500s (lock's promise \
         made at 6.500s), 2.500s later than the lock promised, with no clock fault to explain \
         it. The client's arithmetic is wrong."
    );
}

#[test]
fn a_check_within_the_promise_or_with_a_clock_to_blame_is_no_finding() {
    // Counted from when it asked (6 s): until 16 s, within 16.5 s.
    assert_eq!(judge(renewed_late(4_000)).overlong_leases, 0);
    // Up to the lock's promise exactly: on time.
    assert_eq!(judge(renewed_late(4_500)).overlong_leases, 0);
    // The client's clock read another offset at one of its events (a jump,
    // a drift): its durations are not true time, so nothing is judged.
    let r = judge(renewed_late(7_000).push(
        Event::new(0, 13_000_000_000, "client1", 13_500_000_000, "released").with("lease", 1u64),
    ));
    assert_eq!(r.overlong_leases, 0);
    // A pause of the client before the check: its monotonic clock did not
    // count the paused time, which explains the difference.
    assert_eq!(judge(renewed_late_paused(7_000, true)).overlong_leases, 0);
    // A lease the lock promised no end for (no `ttl_ms`): not judged.
    let r = judge(
        J::new()
            .granted(1_000, "lock", "client1", 1, 33)
            .acquired(1_001, "client1", 1, Some(33))
            .push(
                ev(2_000, "client1", "checked")
                    .with("lease", 1u64)
                    .with("remaining_ms", 60_000u64),
            ),
    );
    assert_eq!(r.overlong_leases, 0);
}
