//! Tests of the milestone counts.

use super::*;

const S: u64 = 1_000_000_000;

fn e(t_s: u64, node: &str, kind: &str) -> Event {
    Event::new(0, t_s * S, node, (t_s * S) as i64, kind)
}

fn count(events: Vec<Event>) -> Milestones {
    Milestones::count(&Journal::from_events(events))
}

fn figure_9_6(fenced: bool) -> Vec<Event> {
    let storage_answer = if fenced { "rejected" } else { "accepted" };
    vec![
        e(0, "lock", "granted")
            .with("client", "client1")
            .with("lease", 1u64)
            .with("token", 33u64),
        e(0, "client1", "acquired")
            .with("lease", 1u64)
            .with("token", 33u64),
        e(0, "client1", "pause"),
        e(10, "lock", "expired")
            .with("client", "client1")
            .with("lease", 1u64),
        e(12, "lock", "granted")
            .with("client", "client2")
            .with("lease", 2u64)
            .with("token", 34u64),
        e(12, "client2", "acquired")
            .with("lease", 2u64)
            .with("token", 34u64),
        e(13, "client2", "wrote").with("write", "client2/1"),
        e(13, "storage", "accepted")
            .with("write", "client2/1")
            .with("client", "client2"),
        e(13, "client2", "released").with("lease", 2u64),
        e(15, "client1", "resume"),
        e(16, "client1", "wrote").with("write", "client1/1"),
        e(16, "storage", storage_answer)
            .with("write", "client1/1")
            .with("client", "client1"),
    ]
}

#[test]
fn figure_9_6_reaches_the_pause_the_zombie_and_the_fence() {
    let m = count(figure_9_6(true));
    assert_eq!(m.holder_paused_past_lease, 1);
    assert_eq!(m.lease_expired_while_held, 1);
    assert_eq!(m.two_believers, 1);
    assert_eq!(m.zombie_write_sent, 1);
    assert_eq!(m.stale_write_rejected, 1);
    assert_eq!(m.stale_write_accepted, 0);
    assert_eq!(m.grant_arrived_expired, 0);
    assert_eq!(m.token_regressed, 0);
}

#[test]
fn without_the_fence_the_zombie_write_is_accepted_stale() {
    let m = count(figure_9_6(false));
    assert_eq!(m.stale_write_accepted, 1);
    assert_eq!(m.stale_write_rejected, 0);
    assert_eq!(m.zombie_write_sent, 1);
}

#[test]
fn a_holder_that_releases_in_time_reaches_nothing() {
    let m = count(vec![
        e(0, "client1", "acquired").with("lease", 1u64),
        e(1, "client1", "wrote").with("write", "client1/1"),
        e(1, "storage", "accepted")
            .with("write", "client1/1")
            .with("client", "client1"),
        e(2, "client1", "released").with("lease", 1u64),
        e(2, "lock", "released")
            .with("client", "client1")
            .with("lease", 1u64),
        e(3, "client2", "acquired").with("lease", 2u64),
    ]);
    assert_eq!(m, Milestones::default());
}

#[test]
fn a_silent_holder_whose_work_outlasts_its_lease_was_not_paused_past_it() {
    // No pause: 45 s of work under a 30 s lease (the batch job that ran
    // twice). Its lease expired while it believed in it; nothing paused it.
    let m = count(vec![
        e(0, "client1", "acquired").with("lease", 1u64),
        e(30, "lock", "expired")
            .with("client", "client1")
            .with("lease", 1u64),
        e(45, "client1", "wrote").with("write", "client1/1"),
    ]);
    assert_eq!(m.holder_paused_past_lease, 0);
    assert_eq!(m.lease_expired_while_held, 1);
    assert_eq!(m.zombie_write_sent, 1);
}

#[test]
fn a_holder_paused_as_its_grant_ends_counts_as_paused_past_it() {
    let m = count(vec![
        e(0, "client1", "acquired").with("lease", 1u64),
        e(1, "client1", "pause").with("duration_ms", 40_000u64),
        e(30, "lock", "expired")
            .with("client", "client1")
            .with("lease", 1u64),
        e(41, "client1", "resume"),
        e(45, "client1", "wrote").with("write", "client1/1"),
    ]);
    assert_eq!(m.holder_paused_past_lease, 1);
    assert_eq!(m.lease_expired_while_held, 1);
}

#[test]
fn a_grant_that_arrives_after_its_expiry_is_counted_once_as_such() {
    let m = count(vec![
        e(0, "lock", "granted")
            .with("client", "client1")
            .with("lease", 1u64),
        e(10, "lock", "expired")
            .with("client", "client1")
            .with("lease", 1u64),
        e(11, "client1", "acquired").with("lease", 1u64),
        e(12, "client1", "wrote").with("write", "client1/1"),
    ]);
    assert_eq!(m.grant_arrived_expired, 1);
    assert_eq!(m.holder_paused_past_lease, 0);
    assert_eq!(m.zombie_write_sent, 1);
}

#[test]
fn tokens_regress_and_servers_restart() {
    // The storage journals nothing of its own: its role comes from the
    // run's topology.
    let mut roles = crate::oracle::Roles::default();
    roles.insert("lock", crate::events::Role::Lock);
    roles.insert("storage", crate::events::Role::Storage);
    roles.insert("client3", crate::events::Role::Client);
    let journal = Journal::from_events(vec![
        e(0, "lock", "granted")
            .with("client", "client1")
            .with("lease", 1u64)
            .with("token", 5u64),
        e(1, "lock", "crash"),
        e(2, "lock", "restart"),
        e(3, "lock", "granted")
            .with("client", "client2")
            .with("lease", 1u64)
            .with("token", 5u64),
        e(4, "storage", "crash"),
        e(5, "storage", "restart"),
        e(6, "client3", "restart"),
    ]);
    let m = Milestones::count_with_roles(&journal, &roles);
    assert_eq!(m.token_regressed, 1);
    assert_eq!(m.lock_restarted, 1);
    assert_eq!(m.storage_restarted, 1);
    // Without it, the journal shows the lock node (it granted), not the storage.
    let m = Milestones::count(&journal);
    assert_eq!((m.lock_restarted, m.storage_restarted), (1, 0));
}

#[test]
fn a_redlock_grant_ends_only_when_enough_nodes_end_it() {
    let end = |t, lock: &str| {
        e(t, lock, "expired")
            .with("client", "client1")
            .with("lease", 1u64)
    };
    let acquired = e(0, "client1", "acquired")
        .with("lease", 1u64)
        .with("ends", 2u64);
    let one = count(vec![acquired.clone(), end(10, "lock1")]);
    assert_eq!(one.lease_expired_while_held, 0);
    let two = count(vec![acquired, end(10, "lock1"), end(10, "lock2")]);
    assert_eq!(two.lease_expired_while_held, 1);
}

#[test]
fn a_write_held_in_the_network_across_its_lease_end_outlived_its_grant() {
    // Sent at 5 s under a live lease; the storage gets it at 12 s, after
    // the lease expired at 10 s: not a zombie sent late, a write held.
    let held = |arrives: u64| -> Milestones {
        count(vec![
            e(0, "lock", "granted")
                .with("client", "client1")
                .with("lease", 1u64),
            e(0, "client1", "acquired").with("lease", 1u64),
            e(5, "client1", "wrote").with("write", "client1/1"),
            e(10, "lock", "expired")
                .with("client", "client1")
                .with("lease", 1u64),
            e(arrives, "storage", "accepted")
                .with("write", "client1/1")
                .with("client", "client1"),
        ])
    };
    let late = held(12);
    assert_eq!(late.write_outlived_grant, 1);
    assert_eq!(late.zombie_write_sent, 0);
    // Arriving before the end, it outlived nothing.
    let early = count(vec![
        e(0, "lock", "granted")
            .with("client", "client1")
            .with("lease", 1u64),
        e(0, "client1", "acquired").with("lease", 1u64),
        e(5, "client1", "wrote").with("write", "client1/1"),
        e(8, "storage", "accepted")
            .with("write", "client1/1")
            .with("client", "client1"),
        e(10, "lock", "expired")
            .with("client", "client1")
            .with("lease", 1u64),
    ]);
    assert_eq!(early.write_outlived_grant, 0);
    // The paused holder of figure 9-6 sends its write late: a zombie.
    let m = count(figure_9_6(false));
    assert_eq!((m.write_outlived_grant, m.zombie_write_sent), (0, 1));
}

#[test]
fn a_lock_clock_moving_ahead_counts_only_while_it_has_a_live_grant() {
    let jump = |t, node: &str, ns: i64| e(t, node, "clock").with("jump_ns", ns);
    let grant = e(1, "lock3", "granted")
        .with("client", "client1")
        .with("lease", 1u64);
    let expire = e(5, "lock3", "expired")
        .with("client", "client1")
        .with("lease", 1u64);
    // Forward while granting; back, or with nothing granted, does not count.
    let m = count(vec![
        jump(0, "lock3", 20 * S as i64),
        grant.clone(),
        jump(2, "lock3", -(S as i64)),
        jump(3, "lock3", 20 * S as i64),
        jump(3, "client1", 20 * S as i64),
        e(4, "lock3", "clock").with("rate", 2.0),
        e(4, "lock3", "clock").with("rate", 1.5),
        expire,
        jump(6, "lock3", 20 * S as i64),
    ]);
    assert_eq!(m.lock_clock_forward, 2);
    // An offset counts by its direction from the previous one.
    let m = count(vec![
        grant,
        e(2, "lock3", "clock").with("offset_ns", 5 * S as i64),
        e(3, "lock3", "clock").with("offset_ns", S as i64),
    ]);
    assert_eq!(m.lock_clock_forward, 1);
}

#[test]
fn names_match_the_fields() {
    let json = serde_json::to_value(Milestones::default()).unwrap();
    let mut keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    keys.sort();
    let mut names = NAMES.to_vec();
    names.sort();
    assert_eq!(keys, names);
}

#[test]
fn a_wall_jump_counts_only_when_the_lock_then_ends_a_lease_early_on_its_monotonic_clock() {
    // A 10 s grant made at monotonic 1 s; the lock's wall clock jumps 20 s
    // ahead at 2 s.
    let grant = e(1, "lock", "granted")
        .with("client", "client1")
        .with("lease", 1u64)
        .with("ttl_ms", 10_000u64)
        .with("mono_ns", S);
    let jump = e(2, "lock", "clock").with("jump_ns", 20 * S as i64);
    let expired = |t: u64| {
        e(t, "lock", "expired")
            .with("client", "client1")
            .with("lease", 1u64)
            .with("mono_ns", t * S)
    };
    // A lock expiring on its monotonic clock ends the lease on time: the
    // jump moved nothing it relies on.
    let m = count(vec![grant.clone(), jump.clone(), expired(11)]);
    assert_eq!(m.lock_clock_forward, 0);
    // A lock expiring on its wall clock ends it at once, 9 s early.
    let m = count(vec![grant.clone(), jump.clone(), expired(2)]);
    assert_eq!(m.lock_clock_forward, 1);
    // Released before its end, it was shortened by nothing.
    let released = e(3, "lock", "released")
        .with("client", "client1")
        .with("lease", 1u64);
    let m = count(vec![grant.clone(), jump.clone(), released]);
    assert_eq!(m.lock_clock_forward, 0);
    // A renewal after the jump promises a new end, and the lock keeps it.
    let renewed = e(5, "lock", "renewed")
        .with("client", "client1")
        .with("lease", 1u64)
        .with("ttl_ms", 10_000u64)
        .with("mono_ns", 5 * S);
    let m = count(vec![grant, jump, renewed, expired(15)]);
    assert_eq!(m.lock_clock_forward, 0);
}

/// A lock frees a grant on a release its holder never sent (a retried
/// release of the same session's earlier lock): `released_while_held`, once,
/// and a release the holder sent after giving the grant up is not one.
#[test]
fn a_release_its_holder_did_not_send_frees_a_grant_still_believed() {
    let grant = |t: u64, lease: u64| {
        [
            e(t, "lock", "granted")
                .with("client", "client1")
                .with("lease", lease)
                .with("token", lease),
            e(t, "client1", "acquired")
                .with("lease", lease)
                .with("token", lease),
        ]
    };
    let freed = |t: u64, lease: u64| {
        e(t, "lock", "released")
            .with("client", "client1")
            .with("lease", lease)
    };
    let mut events: Vec<Event> = grant(0, 1).into();
    events.push(e(1, "client1", "released").with("lease", 1u64));
    events.push(freed(1, 1));
    events.extend(grant(2, 2));
    // The stray release: client1 still believes lease 2.
    events.push(freed(3, 2));
    events.push(e(4, "client1", "wrote").with("write", "client1/1"));
    let m = count(events.clone());
    assert_eq!(m.released_while_held, 1);
    assert_eq!(m.lease_expired_while_held, 0);
    assert_eq!(m.zombie_write_sent, 1);
    // Given back first, the same release is the holder's own.
    let own: Vec<Event> = events
        .into_iter()
        .enumerate()
        .flat_map(|(i, ev)| {
            if i == 6 {
                vec![e(3, "client1", "released").with("lease", 2u64), ev]
            } else {
                vec![ev]
            }
        })
        .filter(|ev| ev.kind != "wrote")
        .collect();
    assert_eq!(count(own).released_while_held, 0);
}
