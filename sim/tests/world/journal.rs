//! The journal: contiguous sequence numbers, time that never goes back, world
//! events with their fields, and actor events with typed fields stamped with
//! their node and its local time.

use sim::fault::{ClockChange, Fault};
use sim::{run, Value, WorldBuilder};

use crate::actors::{Echo, Msg, Pinger, Typed};
use crate::{assert_at, at, find, limits, ms, only};

#[test]
fn seq_is_contiguous_and_time_never_goes_back() {
    let r = run(1, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(10_000)));
        let times: Vec<_> = (1..=30).map(|i| ms(i * 13)).collect();
        w.node("a", Pinger::new("echo", &times));
        w.node("b", Pinger::new("echo", &times));
        w.node("echo", Echo);
        w
    });
    let events = r.journal.events();
    assert!(events.len() > 100);
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e.seq, i as u64);
    }
    assert!(events.windows(2).all(|w| w[0].t_ns <= w[1].t_ns));
    // The canonical form has one line per event.
    assert_eq!(r.journal.to_jsonl().lines().count(), events.len());
}

#[test]
fn sends_and_delivers_carry_id_peer_and_message() {
    let r = run(2, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(10_000)));
        w.node("a", Pinger::new("echo", &[ms(100), ms(200)]));
        w.node("echo", Echo);
        w
    });
    let j = &r.journal;
    let sends = find(j, "a", "send");
    assert_eq!(sends.len(), 2);
    assert_eq!(sends[0].str("to"), Some("echo"));
    assert_eq!(sends[0].str("msg"), Some("ping 0"));
    assert_eq!(sends[1].str("msg"), Some("ping 1"));
    assert_ne!(sends[0].u64("id"), sends[1].u64("id"));
    let reply = &find(j, "echo", "send")[0];
    assert_eq!(reply.str("to"), Some("a"));
    assert_eq!(reply.str("msg"), Some("pong 0"));
    let deliver = &find(j, "echo", "deliver")[0];
    assert_eq!(deliver.u64("id"), sends[0].u64("id"));
    assert_eq!(deliver.str("from"), Some("a"));
    assert_eq!(deliver.str("msg"), Some("ping 0"));
    // Message ids are unique across the run.
    let mut ids: Vec<_> = j
        .events()
        .iter()
        .filter(|e| e.kind == "send")
        .map(|e| e.u64("id").unwrap())
        .collect();
    let n = ids.len();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), n);
}

#[test]
fn emitted_events_carry_typed_fields_node_and_local_time() {
    // "typed" runs 3 s fast, so its local time differs from true time.
    let r = run(3, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(10_000)));
        w.node("other", Echo);
        w.node("typed", Typed { done: false });
        w.fault(at(
            ms(0),
            Fault::Clock(ClockChange {
                node: "typed".into(),
                offset_ns: Some(3_000_000_000),
                rate: None,
                jump_ns: None,
            }),
        ));
        w
    });
    let e = only(&r.journal, "typed", "typed");
    assert_eq!(
        e.fields,
        vec![
            ("count".into(), Value::U64(7)),
            ("skew".into(), Value::I64(-3)),
            ("ok".into(), Value::Bool(true)),
            ("who".into(), Value::Str("client9".into())),
        ]
    );
    assert_at(e.t_ns, 10);
    assert_eq!(e.local_ns, e.t_ns as i64 + 3_000_000_000);
    // And serialized with their types.
    assert!(r
        .journal
        .to_jsonl()
        .contains(r#""kind":"typed","fields":{"count":7,"skew":-3,"ok":true,"who":"client9"}"#));
}
