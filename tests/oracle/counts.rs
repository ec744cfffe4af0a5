//! Plain counts: accepted, rejected, false rejections, overlapping leases.

use super::*;

#[test]
fn rejecting_the_current_holder_is_a_false_rejection() {
    let r = judge(
        J::new()
            .acquired(0, "client1", 1, Some(33))
            .wrote(1, "client1", "client1/1", Some(33))
            .rejected(2, "client1/1", Some(33)),
    );
    assert_eq!((r.rejected_writes, r.false_rejections), (1, 1));
    assert_clean(&r);
}

#[test]
fn rejecting_an_expired_or_superseded_grant_is_right() {
    let r = judge(
        J::new()
            .acquired(0, "client1", 1, Some(33))
            .wrote(1, "client1", "client1/1", Some(33))
            .wrote(2, "client1", "client1/2", Some(33))
            .expired(10_000, "client1", 1)
            .rejected(10_001, "client1/1", Some(33))
            .acquired(10_002, "client2", 2, Some(34))
            .rejected(10_003, "client1/2", Some(33)),
    );
    assert_eq!((r.rejected_writes, r.false_rejections), (2, 0));
}

#[test]
fn released_then_acquired_does_not_overlap() {
    let r = judge(
        J::new()
            .acquired(0, "client1", 1, None)
            .released_by_client(5, "client1", 1)
            .acquired(6, "client2", 2, None)
            .released_by_client(7, "client2", 2)
            .acquired(8, "client1", 3, None),
    );
    assert_eq!(r.overlapping_leases, 0);
}

#[test]
fn a_crashed_client_believes_nothing_any_more() {
    // client1 is powered off (STONITH) before client2's grant: a dead
    // process holds no lease. A crash of the lock ends nobody's belief.
    let crash = |node: &str, t_ms: u64| {
        let t_ns = t_ms * 1_000_000;
        sim::Event::new(0, t_ns, node, t_ns as i64, "crash").with("by", "lock")
    };
    let r = judge(
        J::new()
            .acquired(0, "client1", 1, None)
            .push(crash("client1", 5))
            .acquired(6, "client2", 2, None),
    );
    assert_eq!(r.overlapping_leases, 0);
    let r = judge(
        J::new()
            .acquired(0, "client1", 1, None)
            .push(crash("lock", 5))
            .acquired(6, "client2", 2, None),
    );
    assert_eq!(r.overlapping_leases, 1);
}

#[test]
fn a_client_told_it_lost_the_lock_or_whose_lease_lapsed_believes_nothing_any_more() {
    // client1 hears `lost` from the service (or its own check finds the
    // lease run out) before client2's grant: no overlap, as after a release.
    let ends = [
        ev(5, "client1", "lost").with("lease", 1u64),
        ev(5, "client1", "lapsed")
            .with("lease", 1u64)
            .with("overdue_ms", 3u64),
    ];
    for end in ends {
        let kind = end.kind.to_string();
        let r = judge(
            J::new()
                .acquired(0, "client1", 1, None)
                .push(end)
                .acquired(6, "client2", 2, None),
        );
        assert_eq!(r.overlapping_leases, 0, "after `{kind}`");
    }
}

#[test]
fn every_believing_earlier_client_is_a_pair() {
    // Nobody releases: (1,2), (1,3), (2,3); client1 reacquiring then pairs
    // with client2 and client3 again, but never with its own old grant.
    let r = judge(
        J::new()
            .acquired(0, "client1", 1, None)
            .acquired(1, "client2", 2, None)
            .acquired(2, "client3", 3, None)
            .acquired(3, "client1", 4, None),
    );
    assert_eq!(r.overlapping_leases, 5);
}

#[test]
fn belief_ends_at_the_clients_release_not_the_locks_expiry() {
    // The lock expired client1's lease, but client1 (paused) still believed.
    let r = judge(
        J::new()
            .acquired(0, "client1", 1, None)
            .expired(10_000, "client1", 1)
            .acquired(10_001, "client2", 2, None)
            .released_by_client(15_000, "client1", 1),
    );
    assert_eq!(r.overlapping_leases, 1);
}
