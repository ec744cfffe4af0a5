//! `unbacked_acquire` and `unbacked_renewal`: a client believes a grant or
//! a renewal the lock never made for it. A violation whatever the storage
//! does.

use super::*;

/// Client1 holds lease 1 (token 33); a duplicate of the lock's answer makes
/// it believe lease 1 a second time after it released it, while client2
/// holds the lock. The fence turns its write away: only the lock's account
/// shows the bug.
#[test]
fn a_duplicated_grant_believed_twice_is_a_violation_a_fence_cannot_mask() {
    let r = judge(
        J::new()
            .granted(0, "lock", "client1", 1, 33)
            .acquired(1, "client1", 1, Some(33))
            .wrote(2, "client1", "client1/1", Some(33))
            .accepted(3, "client1/1", Some(33))
            .released_by_client(4, "client1", 1)
            .released_at_lock(5, "client1", 1)
            .granted(6, "lock", "client2", 2, 34)
            .acquired(7, "client2", 2, Some(34))
            .acquired(8, "client1", 1, Some(33))
            .wrote(9, "client2", "client2/1", Some(34))
            .accepted(10, "client2/1", Some(34))
            .wrote(11, "client1", "client1/2", Some(33))
            .rejected(12, "client1/2", Some(33)),
    );
    assert_eq!((r.unbacked_acquires, r.stale_writes), (1, 0));
    assert_eq!(r.verdict, Verdict::Violation);
    assert_eq!(kinds(&r), [ViolationKind::UnbackedAcquire]);
    assert_eq!(
        r.violations[0].explanation,
        "client1 believed it acquired the lock at 0.008s (token 33), but the lock's grant it \
         matches (made at 0.000s) had already been acquired at 0.001s and released at the lock \
         at 0.005s: the lock made one grant and client1 believed two. A belief the lock never \
         backed."
    );
}

/// A lock that is reentrant for its holder (a PostgreSQL session's advisory
/// lock whose unlock was lost) answers a second acquire with the grant it
/// still holds: believed twice, backed both times.
#[test]
fn a_grant_still_held_at_the_lock_believed_again_is_backed() {
    let r = judge(
        J::new()
            .granted(0, "lock", "client1", 1, 33)
            .acquired(1, "client1", 1, Some(33))
            .released_by_client(2, "client1", 1)
            .acquired(3, "client1", 1, Some(33))
            .wrote(4, "client1", "client1/1", Some(33))
            .accepted(5, "client1/1", Some(33))
            .released_by_client(6, "client1", 1)
            .released_at_lock(7, "client1", 1),
    );
    assert_eq!(r.unbacked_acquires, 0);
    assert_clean(&r);
}

#[test]
fn each_grant_believed_once_is_backed_and_a_lock_without_grants_is_not_judged() {
    // One belief per grant, the same lease granted again after a release:
    // backed.
    let r = judge(
        J::new()
            .granted(0, "lock", "client1", 1, 33)
            .acquired(1, "client1", 1, Some(33))
            .released_by_client(2, "client1", 1)
            .released_at_lock(3, "client1", 1)
            .granted(4, "lock", "client1", 1, 34)
            .acquired(5, "client1", 1, Some(34))
            .wrote(6, "client1", "client1/1", Some(34))
            .accepted(7, "client1/1", Some(34)),
    );
    assert_clean(&r);
    assert_eq!(r.unbacked_acquires, 0);
    // A design whose lock journals no `granted`, or a grant whose
    // `granted` a crash kept out of the journal: nothing to judge against.
    let r = judge(
        J::new()
            .acquired(0, "client1", 1, Some(33))
            .acquired(1, "client1", 1, Some(33))
            .wrote(2, "client1", "client1/1", Some(33))
            .accepted(3, "client1/1", Some(33)),
    );
    assert_eq!(r.unbacked_acquires, 0);
}

/// Client1 renews every few seconds; its third renewal timed out and it
/// counted it as a success: the lock renewed twice, the client believed
/// three renewals. The fence turns its late write away, so only the lock's
/// account shows the bug.
#[test]
fn a_renewal_the_lock_never_made_is_a_violation_a_fence_cannot_mask() {
    let r = judge(
        J::new()
            .granted(0, "lock", "client1", 1, 33)
            .acquired(1, "client1", 1, Some(33))
            .renewed_at_lock(3_000, "lock", "client1", 1)
            .renewed_by_client(3_001, "client1", 1)
            .renewed_at_lock(6_000, "lock", "client1", 1)
            .renewed_by_client(6_001, "client1", 1)
            .renewed_by_client(9_001, "client1", 1)
            .expired(16_000, "client1", 1)
            .granted(16_001, "lock", "client2", 2, 34)
            .acquired(16_002, "client2", 2, Some(34))
            .wrote(16_003, "client2", "client2/1", Some(34))
            .accepted(16_004, "client2/1", Some(34))
            .wrote(17_000, "client1", "client1/1", Some(33))
            .rejected(17_001, "client1/1", Some(33)),
    );
    assert_eq!((r.unbacked_renewals, r.stale_writes), (1, 0));
    assert_eq!(r.verdict, Verdict::Violation);
    assert_eq!(kinds(&r), [ViolationKind::UnbackedRenewal]);
    assert_eq!(
        r.violations[0].explanation,
        "client1 believed at 9.001s that the lock renewed its lease 1 for 10000 ms, but no lock \
         node journaled a renewal of it that client1 had not already counted: its last renewal \
         of that lease was at 6.000s. A belief the lock never backed."
    );
}

#[test]
fn renewals_the_lock_made_are_backed_one_each_and_extra_ones_are_no_finding() {
    // Two renewals asked at once, both made before either answer came: one
    // lock renewal each. A duplicated request renewed twice, believed
    // once: a renewal over, which is no finding.
    let r = judge(
        J::new()
            .granted(0, "lock", "client1", 1, 33)
            .acquired(1, "client1", 1, Some(33))
            .renewed_at_lock(3_000, "lock", "client1", 1)
            .renewed_at_lock(3_001, "lock", "client1", 1)
            .renewed_by_client(3_002, "client1", 1)
            .renewed_by_client(3_003, "client1", 1)
            .renewed_at_lock(6_000, "lock", "client1", 1)
            .renewed_at_lock(6_001, "lock", "client1", 1)
            .renewed_by_client(6_002, "client1", 1)
            .wrote(7_000, "client1", "client1/1", Some(33))
            .accepted(7_001, "client1/1", Some(33)),
    );
    assert_clean(&r);
    assert_eq!(r.unbacked_renewals, 0);
    // A renewal believed before the lock made it is not backed by it: the
    // lock's renewal must come first.
    let r = judge(
        J::new()
            .granted(0, "lock", "client1", 1, 33)
            .acquired(1, "client1", 1, Some(33))
            .renewed_by_client(3_000, "client1", 1)
            .renewed_at_lock(3_001, "lock", "client1", 1),
    );
    assert_eq!(r.unbacked_renewals, 1);
    assert!(
        r.violations[0]
            .explanation
            .contains("it never renewed that lease"),
        "{}",
        r.violations[0].explanation
    );
    // A lease whose grant the lock did not journal: nothing to judge.
    let r = judge(
        J::new()
            .acquired(0, "client1", 1, Some(33))
            .renewed_by_client(3_000, "client1", 1),
    );
    assert_eq!(r.unbacked_renewals, 0);
}
