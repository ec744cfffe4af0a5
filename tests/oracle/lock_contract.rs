//! The lock's own contract: `early_expiry` (a lock node ends a grant before
//! the end it promised, on its own clocks) and `minority_acquire` (a client
//! believes a lock fewer than a majority of the lock nodes granted). Both
//! are violations whatever the storage does.

use sim::journal::Event;

use super::*;

const MS: u64 = 1_000_000;

/// A lock-node event at true time `t_ms`, its wall clock reading `wall_ms`
/// and its monotonic clock `mono_ms`.
fn lock_ev(t_ms: u64, wall_ms: i64, mono_ms: u64, kind: &str, client: &str, lease: u64) -> Event {
    Event::new(0, t_ms * MS, "lock", wall_ms * 1_000_000, kind)
        .with("client", client)
        .with("lease", lease)
        .with("mono_ns", mono_ms * MS)
}

fn promise(e: Event, ttl_ms: u64) -> Event {
    e.with("ttl_ms", ttl_ms)
}

/// The lock's events, with client1 acquiring lease 1 right after the
/// first (its grant).
fn held(events: impl IntoIterator<Item = Event>) -> Report {
    let mut events = events.into_iter();
    let grant = events.next().expect("a grant first");
    let t_ms = grant.t_ns / MS;
    let mut j = J::new().push(grant).acquired(t_ms, "client1", 1, Some(1));
    for e in events {
        j = j.push(e);
    }
    judge(j)
}

#[test]
fn a_lease_that_expires_before_its_renewal_promised_is_a_violation() {
    // Granted at 0 for 10 s, renewed at 5 s for 10 s more, expired at 10 s:
    // the renewal's promise was 15 s (the old timer fired).
    let r = held([
        promise(lock_ev(0, 0, 0, "granted", "client1", 1), 10_000),
        promise(
            lock_ev(5_000, 5_000, 5_000, "renewed", "client1", 1),
            10_000,
        ),
        lock_ev(10_000, 10_000, 10_000, "expired", "client1", 1),
    ]);
    assert_eq!(r.early_expiries, 1);
    assert_eq!(r.verdict, Verdict::Violation);
    assert_eq!(kinds(&r), [ViolationKind::EarlyExpiry]);
    assert_eq!(
        r.violations[0].explanation,
        "lock expired client1's lease 1 at 10.000s, 5.000s on its own clock after the renewal \
         at 5.000s that promised 10.000s: 5.000s early (monotonic clock 5.000s, wall clock \
         5.000s). The lock ended a grant before the end it promised."
    );
}

#[test]
fn an_expiry_at_or_after_the_promise_on_either_clock_is_on_time() {
    for (wall_end, mono_end) in [
        // Both clocks say 10 s: on time.
        (10_000, 10_000),
        // The wall clock jumped forward 4 s: a wall-clock lease ends after
        // 6 s of monotonic time, on time by the clock it runs on.
        (14_000, 6_000),
        // The wall clock stepped back: a monotonic lease is on time.
        (3_000, 10_000),
    ] {
        let r = held([
            promise(lock_ev(0, 0, 0, "granted", "client1", 1), 10_000),
            lock_ev(10_000, wall_end, mono_end, "expired", "client1", 1),
        ]);
        assert_eq!(r.early_expiries, 0, "wall {wall_end} mono {mono_end}");
    }
}

#[test]
fn a_slow_clock_expires_late_in_true_time_and_a_fast_one_early_but_neither_breaks_a_promise() {
    // A clock at rate 2.0: 10 s on it is 5 s of true time. The lock kept
    // its word on its own clock; the drift is the clock's hazard.
    let r = held([
        promise(lock_ev(0, 0, 0, "granted", "client1", 1), 10_000),
        lock_ev(5_000, 10_000, 10_000, "expired", "client1", 1),
    ]);
    assert_eq!(r.early_expiries, 0);
}

#[test]
fn ends_that_promise_nothing_are_not_judged() {
    // A restart, a grant held by a session (no ttl_ms), a release.
    let restart = held([
        promise(lock_ev(0, 0, 0, "granted", "client1", 1), 10_000),
        lock_ev(2_000, 2_000, 2_000, "expired", "client1", 1).with("reason", "restart"),
    ]);
    let session = held([
        lock_ev(0, 0, 0, "granted", "client1", 1),
        lock_ev(2_000, 2_000, 2_000, "expired", "client1", 1),
    ]);
    let released = held([
        promise(lock_ev(0, 0, 0, "granted", "client1", 1), 10_000),
        lock_ev(2_000, 2_000, 2_000, "released", "client1", 1),
    ]);
    for r in [restart, session, released] {
        assert_eq!(r.early_expiries, 0);
    }
}

#[test]
fn an_acquisition_granted_by_a_minority_of_the_lock_nodes_is_a_violation() {
    // Five nodes; client1 believes it holds lease 1 with lock1's and
    // lock2's grants only.
    let j = J::new()
        .granted(0, "lock1", "client1", 1, 1)
        .granted(0, "lock2", "client1", 1, 1)
        .acquired(5, "client1", 1, Some(1));
    let config = |n| OracleConfig {
        lock_nodes: n,
        ..OracleConfig::default()
    };
    let r = check(&j.build(), &config(5));
    assert_eq!(r.minority_acquires, 1);
    assert_eq!(r.verdict, Verdict::Violation);
    assert_eq!(kinds(&r), [ViolationKind::MinorityAcquire]);
    assert_eq!(
        r.violations[0].explanation,
        "client1 believed it acquired the lock at 0.005s with 2 of the 5 lock nodes' grants \
         (lock1, lock2): a majority is 3, so another client can win one at the same time."
    );
    // Of three nodes, two are a majority.
    let j = J::new()
        .granted(0, "lock1", "client1", 1, 1)
        .granted(0, "lock2", "client1", 1, 1)
        .acquired(5, "client1", 1, Some(1));
    assert_eq!(check(&j.build(), &config(3)).minority_acquires, 0);
}

#[test]
fn a_single_lock_node_or_a_design_without_granted_events_is_not_judged_for_a_majority() {
    let config = |n| OracleConfig {
        lock_nodes: n,
        ..OracleConfig::default()
    };
    // One lock node (given, or the only one in the journal).
    for n in [1, 0] {
        let one = J::new()
            .granted(0, "lock", "client1", 1, 1)
            .acquired(5, "client1", 1, Some(1));
        assert_eq!(check(&one.build(), &config(n)).minority_acquires, 0);
    }
    // Five nodes, none of which journals `granted`: nothing to count.
    let silent = J::new().acquired(5, "client1", 1, Some(1));
    assert_eq!(check(&silent.build(), &config(5)).minority_acquires, 0);
}
