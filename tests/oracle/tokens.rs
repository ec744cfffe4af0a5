//! `token_regression`: a token a lock node hands out must exceed every token
//! that node handed out before. What counts is what the lock issued (its
//! `granted` events), not the order in which clients heard of their grants.

use super::*;

#[test]
fn lower_token_after_higher_is_a_regression() {
    let r = judge(
        J::new()
            .granted(3_000, "lock", "client1", 1, 34)
            .acquired(3_000, "client1", 1, Some(34))
            .released_by_client(4_000, "client1", 1)
            .granted(12_000, "lock", "client2", 2, 33)
            .acquired(12_000, "client2", 2, Some(33)),
    );
    assert_eq!(r.token_regressions, 1);
    assert_eq!(r.verdict, Verdict::Violation);
    let v = &r.violations[0];
    assert_eq!(v.kind, ViolationKind::TokenRegression);
    assert_eq!((v.seq, v.t_ns), (3, 12_000_000_000));
    assert_eq!(
        v.explanation,
        "lock granted client2 token 33 at 12.000s, not greater than token 34 it had granted \
         to client1 at 3.000s."
    );
}

#[test]
fn equal_tokens_are_a_regression() {
    let r = judge(
        J::new()
            .granted(0, "lock", "client1", 1, 5)
            .granted(1, "lock", "client2", 2, 5),
    );
    assert_eq!(r.token_regressions, 1);
}

#[test]
fn each_regressing_grant_counts_against_the_largest_so_far() {
    // 34 (largest), 33 (regression), 33 (regression), 35 (fine), 34 (regression).
    let r = judge(
        J::new()
            .granted(0, "lock", "client1", 1, 34)
            .granted(1, "lock", "client2", 2, 33)
            .granted(2, "lock", "client3", 3, 33)
            .granted(3, "lock", "client1", 4, 35)
            .granted(4, "lock", "client2", 5, 34),
    );
    assert_eq!(r.token_regressions, 3);
    // (Nothing ends these grants: they are double grants as well.)
    let regressions: Vec<_> = r
        .violations
        .iter()
        .filter(|v| v.kind == ViolationKind::TokenRegression)
        .collect();
    assert!(regressions[2]
        .explanation
        .contains("not greater than token 35 it had granted to client1 at 0.003s"));
}

#[test]
fn increasing_tokens_are_fine() {
    let r = judge(
        J::new()
            .granted(0, "lock", "client1", 1, 33)
            .granted(1, "lock", "client2", 2, 34)
            .granted(2, "lock", "client1", 3, 100),
    );
    assert_eq!(r.token_regressions, 0);
}

#[test]
fn a_grant_heard_late_is_not_a_regression() {
    // The lock hands out 1 then 2, but client1 hears of token 1 only after
    // client2 acquired token 2 (a slow network, a paused client).
    let r = judge(
        J::new()
            .granted(0, "lock", "client1", 1, 1)
            .granted(10_000, "lock", "client2", 2, 2)
            .acquired(10_001, "client2", 2, Some(2))
            .acquired(15_000, "client1", 1, Some(1)),
    );
    assert_eq!(r.token_regressions, 0);
}

#[test]
fn each_lock_node_is_judged_on_its_own() {
    // Redlock's nodes keep independent counters.
    let r = judge(
        J::new()
            .granted(0, "lock1", "client1", 1, 7)
            .granted(0, "lock2", "client1", 1, 3)
            .granted(1, "lock2", "client2", 2, 4),
    );
    assert_eq!(r.token_regressions, 0);
    let r = judge(
        J::new()
            .granted(0, "lock1", "client1", 1, 7)
            .granted(1, "lock1", "client2", 2, 7),
    );
    assert_eq!(r.token_regressions, 1);
}

#[test]
fn no_tokens_no_regression() {
    let r = judge(
        J::new()
            .acquired(0, "client1", 1, None)
            .acquired(1, "client2", 2, None)
            .acquired(2, "client1", 3, None),
    );
    assert_clean(&r);
}
