//! `lost_update`: applied increments missing from a key's final value.

use super::*;

/// `client` increments key `key` from `from` under its current grant.
fn inc(j: J, t: u64, client: &str, n: u32, key: &str, value: i64) -> J {
    let id = format!("{client}/{n}");
    j.incremented(t, client, &id, value)
        .accepted_value(t + 1, &id, None, key, value)
        .acked(t + 2, &id, true, "increment")
}

#[test]
fn increments_overwritten_by_a_zombie_are_lost() {
    // client1 and client2 both read 1 and write 2, and so on: five
    // acknowledged increments, but "x" ends at 3.
    let mut j = J::new().acquired(0, "client1", 1, None);
    j = inc(j, 10, "client1", 1, "x", 1);
    j = inc(j, 20, "client1", 2, "x", 2);
    j = j.acquired(30, "client2", 2, None);
    j = inc(j, 40, "client2", 1, "x", 2);
    j = inc(j, 50, "client2", 2, "x", 3);
    j = inc(j, 60, "client2", 3, "x", 3);
    let r = judge(j);
    assert_eq!(r.lost_updates, 2);
    assert_eq!(r.verdict, Verdict::Violation);
    let v = r.violations.last().unwrap();
    assert_eq!(v.kind, ViolationKind::LostUpdate);
    assert_eq!(
        v.t_ns, 62_000_000,
        "tied to the last acknowledgement of the key"
    );
    assert_eq!(
        v.explanation,
        "storage key \"x\" ends at 3 but 5 increments were applied: 2 lost updates."
    );
}

#[test]
fn all_increments_reflected_is_fine() {
    let mut j = J::new().acquired(0, "client1", 1, None);
    for n in 1..=3 {
        j = inc(j, 10 * u64::from(n), "client1", n, "x", i64::from(n));
    }
    let r = judge(j);
    assert_clean(&r);
    assert_eq!(r.accepted_writes, 3);
}

#[test]
fn keys_are_summed_and_reported_apart() {
    let mut j = J::new().acquired(0, "client1", 1, None);
    j = inc(j, 10, "client1", 1, "a", 1);
    j = inc(j, 20, "client1", 2, "a", 1);
    j = inc(j, 30, "client1", 3, "b", 1);
    j = inc(j, 40, "client1", 4, "b", 1);
    j = inc(j, 50, "client1", 5, "b", 2);
    j = inc(j, 60, "client1", 6, "b", 2);
    let r = judge(j);
    assert_eq!(r.lost_updates, 3);
    assert_eq!(
        kinds(&r),
        [ViolationKind::LostUpdate, ViolationKind::LostUpdate]
    );
    assert_eq!(
        r.violations[0].explanation,
        "storage key \"a\" ends at 1 but 2 increments were applied: 1 lost update."
    );
}

#[test]
fn unacknowledged_and_failed_increments_are_not_expected() {
    let j = J::new()
        .acquired(0, "client1", 1, None)
        .incremented(1, "client1", "client1/1", 1)
        .accepted_value(2, "client1/1", None, "x", 1)
        .acked(3, "client1/1", true, "increment")
        // Sent, never answered.
        .incremented(4, "client1", "client1/2", 2)
        // Refused by the storage.
        .incremented(5, "client1", "client1/3", 2)
        .rejected(6, "client1/3", None)
        .acked(7, "client1/3", false, "increment");
    let r = judge(j);
    assert_eq!(r.lost_updates, 0);
}

#[test]
fn puts_are_not_checked() {
    // Blind writes overwrite each other by design: no increments, no check.
    let r = judge(
        J::new()
            .acquired(0, "client1", 1, None)
            .wrote(1, "client1", "client1/1", None)
            .accepted_value(2, "client1/1", None, "x", 0)
            .acked(3, "client1/1", true, "put"),
    );
    assert_clean(&r);
}

#[test]
fn a_key_that_was_never_written_ends_at_zero() {
    // The storage acknowledged an increment it never journaled as accepted.
    let j = J::new()
        .acquired(0, "client1", 1, None)
        .incremented(1, "client1", "client1/1", 1)
        .acked(3, "client1/1", true, "increment");
    let r = judge(j);
    assert_eq!(r.lost_updates, 1);
    assert_eq!(
        r.violations[0].explanation,
        "storage key \"\" ends at 0 but 1 increment was applied: 1 lost update."
    );
}

#[test]
fn a_timed_out_increment_the_storage_applied_counts() {
    // lost-update-fenced --seed 379 --faults random: both clients read 0 and
    // write 1; client2 times out waiting for its answer, but the storage
    // applied its increment. Two increments applied, the key at 1.
    let j = J::new()
        .acquired(0, "client1", 1, Some(33))
        .incremented(1, "client1", "client1/1", 1)
        .accepted_value(2, "client1/1", None, "x", 1)
        .acked(3, "client1/1", true, "increment")
        .acquired(10, "client2", 2, Some(34))
        .incremented(11, "client2", "client2/1", 1)
        .acked(20, "client2/1", false, "increment")
        .accepted_value(21, "client2/1", None, "x", 1);
    let r = judge(j);
    assert_eq!(r.lost_updates, 1);
    assert_eq!(r.verdict, Verdict::Violation);
    assert_eq!(
        r.violations.last().unwrap().explanation,
        "storage key \"x\" ends at 1 but 2 increments were applied: 1 lost update."
    );
}

#[test]
fn a_duplicated_increment_is_one_increment() {
    // A network copy of an applied increment writes the same value again.
    let j = J::new()
        .acquired(0, "client1", 1, None)
        .incremented(1, "client1", "client1/1", 1)
        .accepted_value(2, "client1/1", None, "x", 1)
        .accepted_value(3, "client1/1", None, "x", 1)
        .acked(4, "client1/1", true, "increment")
        .acked(5, "client1/1", true, "increment");
    assert_eq!(judge(j).lost_updates, 0);
}
