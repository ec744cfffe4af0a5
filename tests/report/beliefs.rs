//! Beliefs from hand-built journals: every event that changes what a client
//! believes moves it (acquisition, renewal, loss, lapse, release, crash).

use fencesim::report::belief::{lease_bars, Beliefs};
use sim::journal::{Event, Journal};

const MS: u64 = 1_000_000;

fn event(seq: u64, t_ms: u64, node: &str, kind: &str) -> Event {
    Event::new(seq, t_ms * MS, node, (t_ms * MS) as i64, kind)
}

fn acquired(seq: u64, t_ms: u64) -> Event {
    event(seq, t_ms, "client1", "acquired")
        .with("lease", 1u64)
        .with("token", 7u64)
        .with("ttl_ms", 6_000u64)
}

/// The summary after each event of `events`.
fn summaries(events: Vec<Event>) -> Vec<String> {
    let journal = Journal::from_events(events);
    let mut beliefs = Beliefs::new(&journal);
    journal
        .events()
        .iter()
        .map(|e| {
            beliefs.apply(e);
            beliefs.summary()
        })
        .collect()
}

#[test]
fn a_renewal_moves_the_end_to_when_the_client_asked_plus_the_ttl() {
    let s = summaries(vec![
        acquired(0, 5),
        // Asked at 3.005 s, answered at 3.012 s: believed until 9.005 s.
        event(1, 3_012, "client1", "renewed")
            .with("lease", 1u64)
            .with("ttl_ms", 6_000u64)
            .with("asked_ago_ns", 7 * MS),
        // A renewal of another lease does not move this one.
        event(2, 4_000, "client1", "renewed")
            .with("lease", 2u64)
            .with("ttl_ms", 60_000u64),
        // Without `asked_ago_ns`: asked just now.
        event(3, 6_000, "client1", "renewed")
            .with("lease", 1u64)
            .with("ttl_ms", 6_000u64),
    ]);
    assert_eq!(s[0], "client1 believes lease 1 (token 7) until 6.005s");
    assert_eq!(s[1], "client1 believes lease 1 (token 7) until 9.005s");
    assert_eq!(s[2], s[1]);
    assert_eq!(s[3], "client1 believes lease 1 (token 7) until 12.000s");
}

#[test]
fn loss_lapse_and_crash_end_the_belief_and_a_release_after_them_changes_nothing() {
    for (kind, how) in [
        ("lost", "lost: the lock service said so"),
        ("lapsed", "lapsed on its own clock"),
        ("crash", "forgotten in a crash"),
    ] {
        let events = vec![
            acquired(0, 5),
            event(1, 7_000, "client1", kind),
            event(2, 7_000, "client1", "released").with("lease", 1u64),
        ];
        let s = summaries(events.clone());
        assert_eq!(
            s[0], "client1 believes lease 1 (token 7) until 6.005s",
            "{kind}"
        );
        assert!(
            s[1].starts_with("client1 holds nothing"),
            "{kind}: {}",
            s[1]
        );
        assert!(
            s[2].starts_with("client1 holds nothing"),
            "{kind}: {}",
            s[2]
        );
        // The belief's bar ends at the event, saying how.
        let bars = lease_bars(&Journal::from_events(events));
        assert_eq!(bars.len(), 1, "{kind}");
        assert_eq!((bars[0].end_t_ns, bars[0].how.as_str()), (7_000 * MS, how));
    }
}

#[test]
fn a_renewal_extends_one_belief_bar_instead_of_starting_another() {
    let journal = Journal::from_events([
        acquired(0, 5),
        event(1, 3_010, "client1", "renewed")
            .with("lease", 1u64)
            .with("ttl_ms", 6_000u64)
            .with("asked_ago_ns", 5 * MS),
        event(2, 8_000, "client1", "released").with("lease", 1u64),
    ]);
    let bars = lease_bars(&journal);
    assert_eq!(bars.len(), 1, "{bars:?}");
    let bar = &bars[0];
    assert_eq!((bar.start_t_ns, bar.end_t_ns), (5 * MS, 8_000 * MS));
    assert_eq!(bar.until_local_ns, Some((9_005 * MS) as i64));
    assert_eq!(bar.how, "released");
}

#[test]
fn a_crowds_summary_names_its_believers_and_who_is_out_and_counts_the_rest() {
    // Twenty clients ask (a `denied` makes each a client); client13 gets
    // the lease, client4 is paused, then client13 releases and crashes.
    let mut events: Vec<Event> = (1..=20)
        .map(|i| event(i - 1, i, &format!("client{i}"), "denied"))
        .collect();
    let n = events.len() as u64;
    events.extend([
        event(n, 100, "lock", "granted")
            .with("client", "client13")
            .with("lease", 1u64)
            .with("token", 3u64),
        event(n + 1, 101, "client13", "acquired")
            .with("lease", 1u64)
            .with("token", 3u64)
            .with("ttl_ms", 6_000u64),
        event(n + 2, 102, "client4", "pause"),
        event(n + 3, 200, "client13", "released").with("lease", 1u64),
        event(n + 4, 201, "client13", "crash"),
    ]);
    let s = summaries(events);
    let n = n as usize;
    assert_eq!(s[n - 1], "20 clients hold nothing · lock: free");
    assert_eq!(
        s[n],
        "20 clients hold nothing · lock: client13 holds lease 1 (token 3)"
    );
    assert_eq!(
        s[n + 2],
        "client13 believes lease 1 (token 3) until 6.101s · 19 other clients hold nothing \
         · lock: client13 holds lease 1 (token 3) · client4 paused"
    );
    assert_eq!(
        s[n + 3],
        "20 clients hold nothing · lock: client13 holds lease 1 (token 3) · client4 paused"
    );
    assert_eq!(
        s[n + 4],
        "20 clients hold nothing · lock: client13 holds lease 1 (token 3) · client4 paused, \
         client13 down"
    );
}
