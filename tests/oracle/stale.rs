//! `stale_write`: must fire when the storage accepts a write after one made
//! under a newer grant, and only then.

use super::*;

#[test]
fn figure_9_6_fenced_is_safe() {
    let r = judge(fig_9_6(true));
    assert_clean(&r);
    assert_eq!(r.accepted_writes, 1);
    assert_eq!(r.rejected_writes, 1);
    assert_eq!(r.false_rejections, 0);
    // client1 never released: it still believed in its lease at 10.006s.
    assert_eq!(r.overlapping_leases, 1);
}

#[test]
fn figure_9_6_unfenced_is_a_stale_write() {
    let r = judge(fig_9_6(false));
    assert_eq!(r.verdict, Verdict::Violation);
    assert_eq!(r.stale_writes, 1);
    assert_eq!(r.zombie_writes, 0, "a stale write is not also a zombie");
    assert_eq!(r.accepted_writes, 2);
    assert_eq!(kinds(&r), [ViolationKind::StaleWrite]);
    let v = &r.violations[0];
    assert_eq!(v.seq, 9);
    assert_eq!(v.t_ns, 16_012_000_000);
    assert_eq!(
        v.explanation,
        "storage accepted client1's write client1/1 (token 33, granted at 0.004s) at 16.012s, \
         after it had already accepted client2's write client2/1 made under a newer grant \
         (token 34, granted at 10.006s): a stale write."
    );
}

#[test]
fn stale_without_tokens_is_still_stale() {
    let r = judge(
        J::new()
            .acquired(0, "client1", 1, None)
            .wrote(1, "client1", "client1/1", None)
            .acquired(10_000, "client2", 2, None)
            .wrote(10_001, "client2", "client2/1", None)
            .accepted(10_002, "client2/1", None)
            .accepted(10_003, "client1/1", None),
    );
    assert_eq!(r.stale_writes, 1);
    assert_eq!(r.verdict, Verdict::Violation);
    assert!(
        r.violations[0]
            .explanation
            .contains("(no token, granted at 0.000s)"),
        "{}",
        r.violations[0].explanation
    );
}

#[test]
fn write_by_the_current_holder_finds_nothing() {
    let r = judge(
        J::new()
            .acquired(0, "client1", 1, Some(1))
            .wrote(5, "client1", "client1/1", Some(1))
            .accepted(7, "client1/1", Some(1))
            .acked(9, "client1/1", true, "put")
            .released_by_client(10, "client1", 1)
            .released_at_lock(12, "client1", 1),
    );
    assert_clean(&r);
    assert_eq!((r.accepted_writes, r.rejected_writes), (1, 0));
    assert_eq!((r.false_rejections, r.overlapping_leases), (0, 0));
}

#[test]
fn duplicate_acceptance_of_the_same_write_is_not_stale() {
    let r = judge(
        J::new()
            .acquired(0, "client1", 1, Some(1))
            .wrote(5, "client1", "client1/1", Some(1))
            .accepted(7, "client1/1", Some(1))
            .accepted(8, "client1/1", Some(1)),
    );
    assert_clean(&r);
    assert_eq!(r.accepted_writes, 2);
}

#[test]
fn a_duplicate_after_a_newer_write_is_stale() {
    // The network duplicated client1's write and the copy landed late.
    let r = judge(
        J::new()
            .acquired(0, "client1", 1, Some(1))
            .wrote(5, "client1", "client1/1", Some(1))
            .accepted(7, "client1/1", Some(1))
            .released_by_client(8, "client1", 1)
            .acquired(10, "client2", 2, Some(2))
            .wrote(11, "client2", "client2/1", Some(2))
            .accepted(12, "client2/1", Some(2))
            .accepted(13, "client1/1", Some(1)),
    );
    assert_eq!(r.stale_writes, 1);
    assert_eq!(r.violations[0].seq, 7);
}

#[test]
fn every_stale_acceptance_counts_once() {
    // Two old writes of client1 land after client2's: two stale writes.
    let r = judge(
        J::new()
            .acquired(0, "client1", 1, None)
            .wrote(1, "client1", "client1/1", None)
            .wrote(2, "client1", "client1/2", None)
            .acquired(10_000, "client2", 2, None)
            .wrote(10_001, "client2", "client2/1", None)
            .accepted(10_002, "client2/1", None)
            .accepted(10_003, "client1/1", None)
            .accepted(10_004, "client1/2", None),
    );
    assert_eq!(r.stale_writes, 2);
    assert_eq!(r.violations.len(), 2);
}

#[test]
fn a_regressed_token_orders_its_grant_below_the_earlier_one() {
    // The lock hands out 50, then 7 (a regression at the lock). "Newer" is
    // the token's order: client1's write (50) landing after client2's (7) is
    // not stale; the regression is reported as such.
    let r = judge(
        J::new()
            .granted(0, "lock", "client1", 1, 50)
            .acquired(0, "client1", 1, Some(50))
            .wrote(1, "client1", "client1/1", Some(50))
            .granted(10_000, "lock", "client2", 2, 7)
            .acquired(10_000, "client2", 2, Some(7))
            .wrote(10_001, "client2", "client2/1", Some(7))
            .accepted(10_002, "client2/1", Some(7))
            .accepted(10_003, "client1/1", Some(50)),
    );
    assert_eq!(r.stale_writes, 0);
    assert_eq!(r.token_regressions, 1);
    // client2's own write was made under a grant token 50 outranks.
    assert_eq!(r.zombie_writes, 1);
    assert_eq!(r.verdict, Verdict::Violation);
}

/// etcd issue 11456's shape: the lock grants client1 revision 2, then
/// expires it and grants client2 revision 3 while client1's grant is still
/// on its way; client2 hears first. `late` is when client1 hears.
fn late_grant(tokens: bool) -> J {
    let (t1, t2) = if tokens {
        (Some(2), Some(3))
    } else {
        (None, None)
    };
    let granted = |j: J, t, client, lease, token: Option<u64>| match token {
        Some(tok) => j.granted(t, "lock", client, lease, tok),
        None => j.granted_untokened(t, "lock", client, lease),
    };
    let j = granted(J::new(), 2, "client1", 1, t1).expired(2_002, "client1", 1);
    granted(j, 2_002, "client2", 2, t2).acquired(2_004, "client2", 2, t2)
}

#[test]
fn a_grant_heard_late_is_still_the_older_grant() {
    // client2 writes under revision 3; then client1, hearing of revision 2
    // at 6 s, writes, and the storage accepts it: stale, although client1
    // heard of its grant last.
    let r = judge(
        late_grant(true)
            .wrote(3_004, "client2", "client2/1", Some(3))
            .accepted(3_005, "client2/1", Some(3))
            .acquired(6_004, "client1", 1, Some(2))
            .wrote(6_104, "client1", "client1/1", Some(2))
            .accepted(6_105, "client1/1", Some(2)),
    );
    assert_eq!((r.stale_writes, r.zombie_writes), (1, 0));
    assert_eq!(r.token_regressions, 0);
    assert_eq!(
        r.violations[0].explanation,
        "storage accepted client1's write client1/1 (token 2, granted at 0.002s) at 6.105s, \
         after it had already accepted client2's write client2/1 made under a newer grant \
         (token 3, granted at 2.002s): a stale write."
    );
}

#[test]
fn the_current_holder_writing_after_a_late_zombie_is_not_stale() {
    // The other way round: client1's late write lands first (a zombie: its
    // grant had expired before it even heard of it); the real holder's write
    // under the newer token lands after it and is fine.
    for tokens in [true, false] {
        let t = |v| tokens.then_some(v);
        let r = judge(
            late_grant(tokens)
                .wrote(3_004, "client2", "client2/1", t(3))
                .acquired(6_004, "client1", 1, t(2))
                .wrote(6_104, "client1", "client1/1", t(2))
                .accepted(6_105, "client1/1", t(2))
                .accepted(6_200, "client2/1", t(3)),
        );
        assert_eq!((r.stale_writes, r.zombie_writes), (0, 1), "tokens {tokens}");
        let v = &r.violations[0];
        assert_eq!(v.kind, ViolationKind::ZombieWrite);
        assert!(
            v.explanation.contains(
                "its grant (granted at 0.002s) had expired at the lock at 2.002s, before \
                 client1 heard of it at 6.004s, while client2's newer grant (granted at 2.002s"
            ),
            "{}",
            v.explanation
        );
    }
}

#[test]
fn without_tokens_the_lock_order_is_its_granted_events() {
    let r = judge(
        late_grant(false)
            .wrote(3_004, "client2", "client2/1", None)
            .accepted(3_005, "client2/1", None)
            .acquired(6_004, "client1", 1, None)
            .wrote(6_104, "client1", "client1/1", None)
            .accepted(6_105, "client1/1", None),
    );
    assert_eq!((r.stale_writes, r.zombie_writes), (1, 0));
    assert!(r.violations[0].explanation.contains(
        "client2's write client2/1 made under a newer grant (no token, granted at 2.002s)"
    ));
}

/// Redlock on lock1..lock3: client1 wins lock1 and lock2 (a majority, made
/// at lock2's `granted`) but hears of it late; lock2's clock runs fast and
/// expires its key, and client2 wins lock2 and lock3. With `tokens`, each
/// node counts on its own and a client takes the largest of its majority:
/// 10 for client1, then 4 for client2 (no fence: the counters are
/// independent, and none of them went back).
fn redlock_overlap(tokens: bool) -> J {
    let t = |v| tokens.then_some(v);
    let g = |j: J, t_ms, lock, client, tok: Option<u64>| match tok {
        Some(tok) => j.granted(t_ms, lock, client, 1, tok),
        None => j.granted_untokened(t_ms, lock, client, 1),
    };
    let j = g(J::new(), 1, "lock1", "client1", t(10));
    let j = g(j, 2, "lock2", "client1", t(3));
    let j = j.expired_at(40, "lock2", "client1", 1);
    let j = g(j, 50, "lock2", "client2", t(4));
    let j = g(j, 51, "lock3", "client2", t(2));
    j.acquired_majority(53, "client2", 1, t(4), 1)
        .wrote(60, "client2", "client2/1", t(4))
        .accepted(62, "client2/1", t(4))
        .acquired_majority(100, "client1", 1, t(10), 1)
        .wrote(101, "client1", "client1/1", t(10))
        .accepted(103, "client1/1", t(10))
}

#[test]
fn a_majority_grant_is_made_by_its_majority_th_granted() {
    for tokens in [false, true] {
        let r = judge(redlock_overlap(tokens));
        assert_eq!((r.stale_writes, r.zombie_writes), (1, 0), "tokens {tokens}");
        // Each node's counter went up: no regression at any node.
        assert_eq!(r.token_regressions, 0);
        assert!(
            r.violations[0]
                .explanation
                .contains("made under a newer grant (")
                && r.violations[0].explanation.contains("granted at 0.051s)"),
            "{}",
            r.violations[0].explanation
        );
    }
}

#[test]
fn a_conditional_write_on_the_current_version_is_not_stale() {
    // Figure 9-6's pause before a read-modify-write on a compare-and-set
    // store: client1 wakes up, reads client2's 1 at version 1 and writes 2
    // on version 1, which the store checked. Nothing is lost.
    let r = judge(
        J::new()
            .acquired(4, "client1", 1, None)
            .expired(10_004, "client1", 1)
            .acquired(12_006, "client2", 2, None)
            .incremented(12_010, "client2", "client2/1", 1)
            .accepted_if(12_012, "client2/1", "counter", 1, 0)
            .acked(12_014, "client2/1", true, "increment")
            .incremented(16_010, "client1", "client1/1", 2)
            .accepted_if(16_012, "client1/1", "counter", 2, 1)
            .acked(16_014, "client1/1", true, "increment"),
    );
    assert_clean(&r);
    assert_eq!(r.accepted_writes, 2);
}

#[test]
fn a_conditional_write_is_still_a_zombie_before_any_newer_write() {
    // The precondition held, but the grant had expired and no newer holder
    // had written: fencing cannot tell, and the oracle reports it as before
    // (a zombie with client2 holding, a late write with nobody holding).
    let before = |holder: bool| {
        let j = J::new()
            .acquired(4, "client1", 1, None)
            .expired(10_004, "client1", 1);
        let j = if holder {
            j.acquired(10_006, "client2", 2, None)
        } else {
            j
        };
        j.incremented(16_010, "client1", "client1/1", 1)
            .accepted_if(16_012, "client1/1", "counter", 1, 0)
    };
    let r = judge(before(true));
    assert_eq!((r.stale_writes, r.zombie_writes, r.late_writes), (0, 1, 0));
    let r = judge(before(false));
    assert_eq!((r.stale_writes, r.zombie_writes, r.late_writes), (0, 0, 1));
}

#[test]
fn conditional_acceptances_still_count_lost_updates() {
    // A storage that journals a precondition but loses an increment all the
    // same (both writes claim version 0) is caught by the final value.
    let r = judge(
        J::new()
            .acquired(4, "client1", 1, None)
            .expired(10_004, "client1", 1)
            .acquired(12_006, "client2", 2, None)
            .incremented(12_010, "client2", "client2/1", 1)
            .accepted_if(12_012, "client2/1", "counter", 1, 0)
            .acked(12_014, "client2/1", true, "increment")
            .incremented(16_010, "client1", "client1/1", 1)
            .accepted_if(16_012, "client1/1", "counter", 1, 0)
            .acked(16_014, "client1/1", true, "increment"),
    );
    assert_eq!((r.stale_writes, r.lost_updates), (0, 1));
    assert_eq!(r.verdict, Verdict::Violation);
}

#[test]
fn an_older_write_landing_first_is_not_stale() {
    // client1's late write lands before client2 writes: a zombie, not stale;
    // client2's write afterwards is fine.
    let r = judge(
        J::new()
            .acquired(0, "client1", 1, None)
            .wrote(1, "client1", "client1/1", None)
            .acquired(10_000, "client2", 2, None)
            .accepted(10_002, "client1/1", None)
            .wrote(10_003, "client2", "client2/1", None)
            .accepted(10_004, "client2/1", None),
    );
    assert_eq!(r.stale_writes, 0);
    assert_eq!(r.zombie_writes, 1);
}

#[test]
fn writes_without_grants_are_counted_and_make_the_journal_untrusted() {
    let r = judge(
        J::new()
            // Written before client1 ever acquired: no grant.
            .wrote(0, "client1", "client1/0", None)
            .acquired(1, "client1", 1, None)
            .acquired(10_000, "client2", 2, None)
            .wrote(10_001, "client2", "client2/1", None)
            .accepted(10_002, "client2/1", None)
            .accepted(10_003, "client1/0", None)
            // No `wrote` event at all.
            .accepted(10_004, "client9/1", None)
            .rejected(10_005, "client9/2", None),
    );
    // No stale write is made of them, but the oracle cannot vouch for a
    // journal in which writes come from nowhere: the verdict is error.
    assert_eq!(r.verdict, Verdict::Error);
    assert_eq!((r.stale_writes, r.zombie_writes, r.late_writes), (0, 0, 0));
    assert_eq!((r.accepted_writes, r.rejected_writes), (3, 1));
    assert_eq!(r.false_rejections, 0);
    assert_eq!(r.untrusted.len(), 3, "{:#?}", r.untrusted);
    assert!(r.untrusted[0].contains("client1 sent write client1/0 with no grant"));
    assert!(r.untrusted[1].contains("accepted write client9/1 that no client journaled"));
    assert!(r.untrusted[2].contains("rejected write client9/2 that no client journaled"));
}

#[test]
fn storages_are_judged_apart() {
    use sim::journal::Event;
    // A second storage node accepting client1's old write has seen nothing
    // newer: a zombie there, not a stale write.
    let late = Event::new(0, 10_003_000_000, "storage2", 0, "accepted")
        .with("write", "client1/1")
        .with("client", "client1");
    let r = judge(
        J::new()
            .acquired(0, "client1", 1, None)
            .wrote(1, "client1", "client1/1", None)
            .acquired(10_000, "client2", 2, None)
            .wrote(10_001, "client2", "client2/1", None)
            .accepted(10_002, "client2/1", None)
            .push(late),
    );
    assert_eq!((r.stale_writes, r.zombie_writes), (0, 1));
    assert!(r.violations[0].explanation.starts_with("storage2 accepted"));
}

#[test]
fn an_equal_token_made_later_for_another_client_is_newer() {
    // The lock forgot its counter and handed token 33 out again: the fence
    // cannot tell the two holders apart, but the lock's order can.
    let r = judge(
        J::new()
            .granted(0, "lock", "client1", 1, 33)
            .acquired(1, "client1", 1, Some(33))
            .wrote(2, "client1", "client1/1", Some(33))
            .expired_at(2_999, "lock", "client1", 1)
            .granted(3_000, "lock", "client2", 1, 33)
            .acquired(3_001, "client2", 1, Some(33))
            .wrote(3_002, "client2", "client2/1", Some(33))
            .accepted(3_003, "client2/1", Some(33))
            .accepted(12_000, "client1/1", Some(33)),
    );
    assert_eq!((r.stale_writes, r.token_regressions), (1, 1));
    assert!(r.violations[1]
        .explanation
        .contains("made under a newer grant (token 33, granted at 3.000s)"));
}

#[test]
fn the_same_clients_equal_token_is_the_same_holding() {
    // A reentrant lock (Hazelcast's FencedLock) hands its owner the same
    // fence again: the owner's first write landing after its second is not
    // stale.
    let r = judge(
        J::new()
            .granted(0, "lock", "client1", 5, 5)
            .acquired(1, "client1", 5, Some(5))
            .wrote(2, "client1", "client1/1", Some(5))
            .granted(3, "lock", "client1", 5, 5)
            .acquired(4, "client1", 5, Some(5))
            .wrote(5, "client1", "client1/2", Some(5))
            .accepted(6, "client1/2", Some(5))
            .accepted(7, "client1/1", Some(5)),
    );
    assert_eq!(r.stale_writes, 0);
}
