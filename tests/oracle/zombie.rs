//! `zombie_write`: a write whose grant is no longer current, accepted before
//! any newer holder wrote. Reported always, a violation only when strict.

use super::*;

/// client1 acquires (no tokens), pauses past its lease, and its write lands
/// at 12.010s with nobody else holding or writing.
fn expired_then_accepted() -> J {
    J::new()
        .acquired(4, "client1", 1, None)
        .expired(10_004, "client1", 1)
        .wrote(12_000, "client1", "client1/1", None)
        .accepted(12_010, "client1/1", None)
}

#[test]
fn expired_grant_write_is_a_zombie_but_safe_by_default() {
    let r = judge(expired_then_accepted());
    assert_eq!(r.zombie_writes, 1);
    assert_eq!(r.stale_writes, 0);
    assert_eq!(r.verdict, Verdict::Safe);
    assert_eq!(
        kinds(&r),
        [ViolationKind::ZombieWrite],
        "listed even when not strict"
    );
    assert_eq!(
        r.violations[0].explanation,
        "storage accepted client1's write client1/1 (no token) at 12.010s although its grant \
         (granted at 0.004s) had expired at the lock at 10.004s; no newer holder had written \
         yet, so fencing cannot stop this: a zombie write."
    );
    assert_eq!(r.violations[0].seq, 3);
}

#[test]
fn strict_makes_a_zombie_a_violation() {
    let r = judge_strict(expired_then_accepted());
    assert_eq!(r.zombie_writes, 1);
    assert_eq!(r.verdict, Verdict::Violation);
}

#[test]
fn write_accepted_before_the_expiry_is_not_a_zombie() {
    let r = judge_strict(
        J::new()
            .acquired(4, "client1", 1, None)
            .wrote(5_000, "client1", "client1/1", None)
            .accepted(5_010, "client1/1", None)
            .expired(10_004, "client1", 1),
    );
    assert_clean(&r);
}

#[test]
fn newer_grant_without_a_newer_write_makes_a_zombie() {
    let r = judge(
        J::new()
            .acquired(4, "client1", 1, Some(33))
            .wrote(1_000, "client1", "client1/1", Some(33))
            .acquired(10_006, "client2", 2, Some(34))
            .accepted(12_010, "client1/1", Some(33))
            .wrote(13_000, "client2", "client2/1", Some(34))
            .accepted(13_010, "client2/1", Some(34)),
    );
    assert_eq!((r.zombie_writes, r.stale_writes), (1, 0));
    assert_eq!(r.verdict, Verdict::Safe);
    assert_eq!(
        r.violations[0].explanation,
        "storage accepted client1's write client1/1 (token 33) at 12.010s although client2 had \
         been granted the lock at 10.006s (token 34), after its own grant at 0.004s; no newer \
         holder had written yet, so fencing cannot stop this: a zombie write."
    );
}

#[test]
fn expiry_and_newer_grant_are_both_named() {
    let r = judge(
        J::new()
            .acquired(4, "client1", 1, None)
            .wrote(1_000, "client1", "client1/1", None)
            .expired(10_004, "client1", 1)
            .acquired(10_006, "client2", 2, None)
            .accepted(12_010, "client1/1", None),
    );
    assert_eq!(r.zombie_writes, 1);
    let text = &r.violations[0].explanation;
    assert!(
        text.contains(
            "had expired at the lock at 10.004s and client2 had been granted the lock at 10.006s"
        ),
        "{text}"
    );
}

#[test]
fn release_at_the_lock_ends_a_grant_too() {
    let r = judge(
        J::new()
            .acquired(4, "client1", 1, None)
            .wrote(1_000, "client1", "client1/1", None)
            .released_by_client(1_001, "client1", 1)
            .released_at_lock(1_003, "client1", 1)
            .accepted(1_050, "client1/1", None),
    );
    assert_eq!(r.zombie_writes, 1);
    assert!(r.violations[0]
        .explanation
        .contains("had been released at the lock at 1.003s"));
}

#[test]
fn an_end_matches_the_nearest_earlier_grant_of_that_lease() {
    // Sessions reused as lease ids (ZooKeeper-like): the release ends the
    // first grant only; the second grant of the same lease is current.
    let r = judge_strict(
        J::new()
            .acquired(0, "client1", 7, None)
            .released_by_client(1_000, "client1", 7)
            .released_at_lock(1_001, "client1", 7)
            .acquired(2_000, "client1", 7, None)
            .wrote(2_001, "client1", "client1/2", None)
            .accepted(2_002, "client1/2", None),
    );
    assert_clean(&r);
}

#[test]
fn an_end_of_another_client_or_lease_does_not_count() {
    let r = judge_strict(
        J::new()
            .acquired(0, "client1", 1, None)
            .expired(500, "client2", 1)
            .expired(600, "client1", 2)
            .wrote(1_000, "client1", "client1/1", None)
            .accepted(1_001, "client1/1", None),
    );
    assert_clean(&r);
}

#[test]
fn a_grant_that_arrives_after_its_expiry_is_over_from_the_start() {
    // The grant message was delayed past the TTL: the lock expired the lease
    // before the client came to believe it held it.
    let r = judge(
        J::new()
            .expired(10_000, "client1", 1)
            .acquired(15_000, "client1", 1, None)
            .wrote(15_001, "client1", "client1/1", None)
            .accepted(15_002, "client1/1", None),
    );
    assert_eq!(r.zombie_writes, 1);
}

#[test]
fn reacquiring_client_names_itself_again() {
    // client1's first write, delayed, lands after client1 acquired again.
    let r = judge(
        J::new()
            .acquired(0, "client1", 1, Some(1))
            .wrote(1, "client1", "client1/1", Some(1))
            .released_by_client(2, "client1", 1)
            .acquired(3, "client1", 2, Some(2))
            .accepted(4, "client1/1", Some(1)),
    );
    assert_eq!(r.zombie_writes, 1);
    assert!(r.violations[0]
        .explanation
        .contains("client1 had been granted the lock again at 0.003s (token 2)"));
}
