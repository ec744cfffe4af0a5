//! `double_grant`: a lock node grants while its grant to another client is
//! live there. A violation whatever the storage does.

use super::*;

#[test]
fn a_grant_over_another_clients_live_grant_is_a_violation_a_fence_cannot_mask() {
    // The writes are fenced and nothing stale lands: the lock still told two
    // clients they hold it.
    let r = judge(
        J::new()
            .granted(0, "lock", "client1", 1, 1)
            .acquired(1, "client1", 1, Some(1))
            .granted(1_000, "lock", "client2", 2, 2)
            .acquired(1_001, "client2", 2, Some(2))
            .wrote(1_002, "client2", "client2/1", Some(2))
            .accepted(1_003, "client2/1", Some(2))
            .wrote(2_000, "client1", "client1/1", Some(1))
            .rejected(2_001, "client1/1", Some(1)),
    );
    assert_eq!((r.double_grants, r.stale_writes), (1, 0));
    assert_eq!(r.verdict, Verdict::Violation);
    assert_eq!(kinds(&r), [ViolationKind::DoubleGrant]);
    assert_eq!(
        r.violations[0].explanation,
        "lock granted client2 lease 2 at 1.000s while its grant of lease 1 to client1 (granted \
         at 0.000s) was still live there: two holders at once, by the lock's own account."
    );
}

#[test]
fn a_grant_after_the_lock_ended_the_previous_one_is_fine() {
    for end in ["expired", "released"] {
        let j = J::new()
            .granted(0, "lock", "client1", 1, 1)
            .acquired(1, "client1", 1, Some(1));
        let j = if end == "expired" {
            j.expired(999, "client1", 1)
        } else {
            j.released_at_lock(999, "client1", 1)
        };
        let r =
            judge(
                j.granted(1_000, "lock", "client2", 2, 2)
                    .acquired(1_001, "client2", 2, Some(2)),
            );
        assert_eq!(r.double_grants, 0, "{end}");
    }
}

#[test]
fn each_lock_node_is_judged_on_its_own() {
    // Redlock: lock1 grants client1, lock2 grants client2; neither node
    // granted twice. The same client again (re-entrant) is no double grant.
    let r = judge(
        J::new()
            .granted(0, "lock1", "client1", 1, 1)
            .granted(0, "lock2", "client2", 1, 1)
            .granted(5, "lock1", "client1", 2, 2),
    );
    assert_eq!(r.double_grants, 0);
}
