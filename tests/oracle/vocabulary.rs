//! The typed vocabulary against real journals: every event of every bundled
//! scenario (first seed, and a random fault schedule) decodes, its typed form
//! holds every field the event has, and the serde form reads back equal.

use std::collections::BTreeMap;

use fencesim::events::{decode, Decoded, DomainEvent};
use fencesim::explore::sweep::{run_seed, FaultMode};
use sim::events::WorldEvent;
use sim::journal::{Event, Value};

use super::explored::bundled;

/// The event's kind and fields as JSON: what its typed form must serialize to.
fn as_json(e: &Event) -> serde_json::Value {
    let mut map: BTreeMap<String, serde_json::Value> = BTreeMap::new();
    map.insert("kind".into(), e.kind.as_str().into());
    for (name, value) in &e.fields {
        let v = match value {
            Value::U64(v) => (*v).into(),
            Value::I64(v) => (*v).into(),
            Value::Bool(v) => (*v).into(),
            Value::Str(s) => s.as_str().into(),
            Value::F64(v) => (*v).into(),
        };
        map.insert(name.to_string(), v);
    }
    serde_json::to_value(map).unwrap()
}

fn round_trip(e: &Event, what: &str) {
    let json = match decode(e).unwrap_or_else(|err| panic!("{what}: {err}")) {
        Decoded::World(w) => {
            let json = serde_json::to_string(&w).unwrap();
            let back: WorldEvent<String> =
                serde_json::from_str(&json).unwrap_or_else(|err| panic!("{what}: {json}: {err}"));
            assert_eq!(back, w.map(str::to_owned), "{what}: {json}");
            json
        }
        Decoded::Domain(d) => {
            let json = serde_json::to_string(&d).unwrap();
            let back: DomainEvent<String> =
                serde_json::from_str(&json).unwrap_or_else(|err| panic!("{what}: {json}: {err}"));
            assert_eq!(back, d.map(str::to_owned), "{what}: {json}");
            json
        }
        Decoded::Other => panic!("{what}: a bundled design journals {:?}", e.kind),
    };
    // The typed form loses no field and adds none (every bundled design
    // names a write's `op`, which reads as a put when absent).
    let parsed: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(parsed, as_json(e), "{what}: event {}", e.seq);
}

#[test]
fn every_bundled_event_decodes_and_reads_back() {
    for s in bundled() {
        for random in [false, true] {
            let mode = if random {
                FaultMode::Random
            } else {
                FaultMode::Scenario
            };
            let (run, _) = run_seed(&s, 1, mode);
            for e in run.result.journal.events() {
                round_trip(e, &format!("{} (random faults: {random})", s.file));
            }
        }
    }
}

#[test]
fn a_bad_field_is_an_error_not_a_panic() {
    let e = Event::new(7, 0, "client1", 0, "wrote")
        .with("write", "client1/1")
        .with("op", "swap");
    assert_eq!(
        decode(&e).unwrap_err().to_string(),
        "event 7 (client1 wrote): field `op` is \"swap\", not one of put, increment, fence"
    );
    let e = Event::new(8, 0, "storage", 0, "accepted").with("write", 3u64);
    assert_eq!(
        decode(&e).unwrap_err().to_string(),
        "event 8 (storage accepted): field `write` is 3, not a string"
    );
    let e = Event::new(9, 0, "n", 0, "send").with("id", 1u64);
    assert_eq!(
        decode(&e).unwrap_err().to_string(),
        "event 9 (n send): field `to` is missing"
    );
    assert_eq!(
        decode(&Event::new(0, 0, "n", 0, "migrated")),
        Ok(Decoded::Other)
    );
    let err = serde_json::from_str::<DomainEvent<String>>(r#"{"kind":"granted","client":"c"}"#)
        .unwrap_err()
        .to_string();
    assert!(err.contains("field `lease` is missing"), "{err}");
}

#[test]
fn released_and_renewed_tell_the_lock_from_the_client() {
    let client = Event::new(0, 0, "client1", 0, "released").with("lease", 1u64);
    let lock = client.clone().with("client", "client1");
    assert!(matches!(
        decode(&client),
        Ok(Decoded::Domain(DomainEvent::Released { lease: 1 }))
    ));
    assert!(matches!(
        decode(&lock),
        Ok(Decoded::Domain(DomainEvent::LockReleased {
            client: "client1",
            lease: 1
        }))
    ));
    let Ok(Decoded::Domain(typed)) = decode(&lock) else {
        panic!("a lock's release decodes");
    };
    let json = serde_json::to_string(&typed).unwrap();
    assert!(matches!(
        serde_json::from_str::<DomainEvent<String>>(&json).unwrap(),
        DomainEvent::LockReleased { .. }
    ));
}
