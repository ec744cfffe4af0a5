//! `zombie_write` and `late_write`: a write whose grant is no longer
//! current, accepted before any newer holder wrote. A zombie when another
//! client's newer grant is current at the lock (a violation only when
//! strict); a late write when none is (never a violation).

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
fn a_write_after_its_lease_with_nobody_else_holding_is_late_even_strict() {
    let r = judge_strict(expired_then_accepted());
    assert_eq!((r.zombie_writes, r.late_writes, r.stale_writes), (0, 1, 0));
    assert_eq!(r.verdict, Verdict::Safe);
    assert_eq!(
        kinds(&r),
        [ViolationKind::LateWrite],
        "listed, never counted"
    );
    assert_eq!(
        r.violations[0].explanation,
        "storage accepted client1's write client1/1 (no token) at 12.010s, after its grant \
         (granted at 0.004s) had expired at the lock at 10.004s; no other client was ever \
         granted the lock, so it broke nobody's exclusion (client1 wrote after its own lease): \
         a late write, not a violation."
    );
    assert_eq!(r.violations[0].seq, 3);
}

/// client1's write lands while client2's newer grant is current, before
/// client2 writes.
fn expired_then_accepted_over_a_live_grant() -> J {
    J::new()
        .acquired(4, "client1", 1, None)
        .expired(10_004, "client1", 1)
        .acquired(10_006, "client2", 2, None)
        .wrote(12_000, "client1", "client1/1", None)
        .accepted(12_010, "client1/1", None)
}

#[test]
fn a_write_over_another_clients_live_grant_is_a_zombie_but_safe_by_default() {
    let r = judge(expired_then_accepted_over_a_live_grant());
    assert_eq!((r.zombie_writes, r.late_writes), (1, 0));
    assert_eq!(r.verdict, Verdict::Safe);
    assert_eq!(
        kinds(&r),
        [ViolationKind::ZombieWrite],
        "listed even when not strict"
    );
    assert_eq!(
        r.violations[0].explanation,
        "storage accepted client1's write client1/1 (no token) at 12.010s, after its grant \
         (granted at 0.004s) had expired at the lock at 10.004s, while client2's newer grant \
         (granted at 10.006s, no token) was current at the lock; no newer holder had written \
         yet, so fencing cannot stop this: a zombie write."
    );
}

#[test]
fn strict_makes_a_zombie_a_violation() {
    let r = judge_strict(expired_then_accepted_over_a_live_grant());
    assert_eq!(r.zombie_writes, 1);
    assert_eq!(r.verdict, Verdict::Violation);
}

#[test]
fn a_newer_grant_that_had_already_ended_makes_a_late_write() {
    // client2 held the lock and released it before client1's write landed:
    // the lock was free again, and the explanation never names client2's
    // ended grant as current.
    let r = judge_strict(
        J::new()
            .acquired(4, "client1", 1, None)
            .expired(10_004, "client1", 1)
            .acquired(10_006, "client2", 2, None)
            .released_by_client(11_000, "client2", 2)
            .released_at_lock(11_001, "client2", 2)
            .wrote(12_000, "client1", "client1/1", None)
            .accepted(12_010, "client1/1", None),
    );
    assert_eq!((r.zombie_writes, r.late_writes), (0, 1));
    assert_eq!(r.verdict, Verdict::Safe);
    let text = &r.violations[0].explanation;
    assert!(
        text.contains("no other client's newer grant was current at the lock then"),
        "{text}"
    );
    assert!(!text.contains("client2"), "{text}");
}

#[test]
fn a_duplicate_of_an_applied_write_after_the_release_is_the_same_write() {
    // fence-on-acquire with `duplicate = 0.3`: a network copy of client1's
    // write, applied while its grant was current, lands again after client1
    // released and client2 acquired. It is judged once, at its first
    // acceptance: no zombie, even strict.
    let r = judge_strict(
        J::new()
            .acquired(4, "client1", 1, Some(33))
            .wrote(1_000, "client1", "client1/1", Some(33))
            .accepted(1_010, "client1/1", Some(33))
            .released_by_client(1_020, "client1", 1)
            .released_at_lock(1_021, "client1", 1)
            .acquired(12_000, "client2", 2, Some(34))
            .accepted(12_005, "client1/1", Some(33)),
    );
    assert_clean(&r);
    assert_eq!(r.accepted_writes, 2, "both copies are counted as accepted");
}

#[test]
fn a_duplicate_landing_after_a_newer_holders_write_is_still_stale() {
    let r = judge_strict(
        J::new()
            .acquired(4, "client1", 1, Some(33))
            .wrote(1_000, "client1", "client1/1", Some(33))
            .accepted(1_010, "client1/1", Some(33))
            .released_by_client(1_020, "client1", 1)
            .released_at_lock(1_021, "client1", 1)
            .acquired(12_000, "client2", 2, Some(34))
            .wrote(12_001, "client2", "client2/1", Some(34))
            .accepted(12_002, "client2/1", Some(34))
            .accepted(12_005, "client1/1", Some(33))
            .accepted(12_006, "client1/1", Some(33)),
    );
    assert_eq!(
        (r.stale_writes, r.zombie_writes, r.late_writes),
        (1, 0, 0),
        "two copies after client2's write: one stale write"
    );
    assert_eq!(r.verdict, Verdict::Violation);
    assert_eq!(kinds(&r), [ViolationKind::StaleWrite]);
    assert_eq!(
        r.violations[0].t_ns, 12_005_000_000,
        "at the first stale copy"
    );
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
        "storage accepted client1's write client1/1 (token 33) at 12.010s, after client2 had \
         been granted the lock at 10.006s (token 34), while client2's newer grant (granted at \
         10.006s, token 34) was current at the lock; no newer holder had written yet, so \
         fencing cannot stop this: a zombie write."
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
            "had expired at the lock at 10.004s, while client2's newer grant (granted at \
             10.006s, no token) was current"
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
    assert_eq!(r.late_writes, 1);
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
    assert_eq!(r.late_writes, 1);
    assert!(r.violations[0]
        .explanation
        .contains("had expired at the lock at 10.000s, before client1 heard of it at 15.000s"));
}

#[test]
fn a_lease_id_reused_after_a_lock_restart_is_a_new_grant() {
    // A `lease` lock with `durable = false`: lease 1's grant message is lost,
    // the lock restarts (expiring lease 1, reason restart) and numbers its
    // leases afresh, so client1's retry is granted lease 1 again. That grant
    // is current: the end belongs to the first one.
    let r = judge_strict(
        J::new()
            .granted_untokened(2, "lock", "client1", 1)
            .expired_at(1_004, "lock", "client1", 1)
            .granted_untokened(2_002, "lock", "client1", 1)
            .acquired(2_007, "client1", 1, None)
            .wrote(3_000, "client1", "client1/1", None)
            .accepted(3_009, "client1/1", None),
    );
    assert_clean(&r);
    let m = fencesim::oracle::Milestones::count(
        &J::new()
            .granted_untokened(2, "lock", "client1", 1)
            .expired_at(1_004, "lock", "client1", 1)
            .granted_untokened(2_002, "lock", "client1", 1)
            .acquired(2_007, "client1", 1, None)
            .build(),
    );
    assert_eq!(m.grant_arrived_expired, 0);
}

#[test]
fn a_grant_heard_after_a_restart_ended_it_is_over_from_the_start() {
    // The same restart, but the first grant message arrives after it: that
    // grant did reach its client already over.
    let r = judge_strict(
        J::new()
            .granted_untokened(2, "lock", "client1", 1)
            .expired_at(1_004, "lock", "client1", 1)
            .acquired(1_500, "client1", 1, None)
            .wrote(1_501, "client1", "client1/1", None)
            .accepted(1_502, "client1/1", None),
    );
    assert_eq!(r.late_writes, 1);
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
    assert_eq!(r.late_writes, 1, "nobody else held the lock");
    assert!(r.violations[0]
        .explanation
        .contains("client1 had been granted the lock again at 0.003s (token 2)"));
}
