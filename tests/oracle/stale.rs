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
fn grants_are_ordered_by_the_journal_not_by_token() {
    // The newer grant carries the lower token (a regression at the lock);
    // the write under the older grant landing last is stale all the same.
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
    assert_eq!(r.stale_writes, 1);
    assert_eq!(r.token_regressions, 1);
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
fn writes_without_grants_are_counted_only() {
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
    assert_clean(&r);
    assert_eq!((r.accepted_writes, r.rejected_writes), (3, 1));
    assert_eq!(r.false_rejections, 0);
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
