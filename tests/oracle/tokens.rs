//! `token_regression`: a grant's token must exceed every earlier grant's.

use super::*;

#[test]
fn lower_token_after_higher_is_a_regression() {
    let r = judge(
        J::new()
            .acquired(3_000, "client1", 1, Some(34))
            .released_by_client(4_000, "client1", 1)
            .acquired(12_000, "client2", 2, Some(33)),
    );
    assert_eq!(r.token_regressions, 1);
    assert_eq!(r.verdict, Verdict::Violation);
    let v = &r.violations[0];
    assert_eq!(v.kind, ViolationKind::TokenRegression);
    assert_eq!((v.seq, v.t_ns), (2, 12_000_000_000));
    assert_eq!(
        v.explanation,
        "client2 was granted token 33 at 12.000s, not greater than token 34 granted to client1 \
         at 3.000s."
    );
}

#[test]
fn equal_tokens_are_a_regression() {
    let r = judge(
        J::new()
            .acquired(0, "client1", 1, Some(5))
            .acquired(1, "client2", 2, Some(5)),
    );
    assert_eq!(r.token_regressions, 1);
}

#[test]
fn each_regressing_grant_counts_against_the_largest_so_far() {
    // 34 (largest), 33 (regression), 33 (regression), 35 (fine), 34 (regression).
    let r = judge(
        J::new()
            .acquired(0, "client1", 1, Some(34))
            .acquired(1, "client2", 2, Some(33))
            .acquired(2, "client3", 3, Some(33))
            .acquired(3, "client1", 4, Some(35))
            .acquired(4, "client2", 5, Some(34)),
    );
    assert_eq!(r.token_regressions, 3);
    assert!(r.violations[2]
        .explanation
        .contains("not greater than token 35 granted to client1 at 0.003s"));
}

#[test]
fn increasing_tokens_are_fine() {
    let r = judge(
        J::new()
            .acquired(0, "client1", 1, Some(33))
            .acquired(1, "client2", 2, Some(34))
            .acquired(2, "client1", 3, Some(100)),
    );
    assert_eq!(r.token_regressions, 0);
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
    // Grants without a token in between do not reset the largest token.
    let r = judge(
        J::new()
            .acquired(0, "client1", 1, Some(9))
            .acquired(1, "client2", 2, None)
            .acquired(2, "client1", 3, Some(8)),
    );
    assert_eq!(r.token_regressions, 1);
}
