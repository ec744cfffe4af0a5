//! `NAME.trace.json`: the Chrome/Perfetto trace event format.

use std::collections::BTreeMap;

use fencesim::report::{perfetto, Subject};
use serde_json::Value;

use crate::bundled;

fn trace(name: &str) -> (Value, Vec<String>, usize) {
    let (s, run) = bundled(name);
    let repro = format!("fencesim run {} --seed {}", s.file, s.seed);
    let text = perfetto::trace(&Subject {
        name: &s.name,
        description: &s.description,
        seed: s.seed,
        journal: &run.result.journal,
        report: &run.report,
        milestones: &run.milestones,
        nodes: &run.nodes,
        repro: &repro,
        untested: &[],
    });
    let value = serde_json::from_str(&text).expect("the trace is JSON");
    (value, run.nodes.clone(), run.result.journal.len())
}

#[test]
fn every_bundled_kind_of_trace_is_well_formed() {
    for name in [
        "figure-9-6",
        "figure-9-6-unfenced",
        "duplicated-write",
        "lost-release",
        "lock-forgets-counter",
        "partitioned-holder",
        "fast-lock-clock",
    ] {
        let (v, nodes, events) = trace(name);
        let all = v["traceEvents"].as_array().unwrap();
        // A process name for every node.
        let names: Vec<&str> = all
            .iter()
            .filter(|e| e["ph"] == "M" && e["name"] == "process_name")
            .map(|e| e["args"]["name"].as_str().unwrap())
            .collect();
        for n in &nodes {
            assert!(names.contains(&n.as_str()), "{name}: no process for {n}");
        }
        // Every journal event once, as an instant or a message-end slice.
        let journal_events = all.iter().filter(|e| e["args"]["seq"].is_u64()).count();
        assert_eq!(journal_events, events, "{name}");
        // Flows: each id starts once and finishes once, not before it starts.
        let mut flows: BTreeMap<u64, (u32, u32, f64, f64)> = BTreeMap::new();
        for e in all.iter().filter(|e| e["ph"] == "s" || e["ph"] == "f") {
            let f = flows.entry(e["id"].as_u64().unwrap()).or_default();
            let ts = e["ts"].as_f64().unwrap();
            if e["ph"] == "s" {
                f.0 += 1;
                f.2 = ts;
            } else {
                f.1 += 1;
                f.3 = ts;
            }
        }
        assert!(!flows.is_empty(), "{name}: no flows");
        for (id, (s, f, ts_s, ts_f)) in &flows {
            assert_eq!((s, f), (&1, &1), "{name}: flow {id}");
            assert!(ts_s <= ts_f, "{name}: flow {id} finishes before it starts");
        }
        // Slices: non-negative durations; instants are thread-scoped.
        for e in all {
            match e["ph"].as_str().unwrap() {
                "X" => assert!(e["dur"].as_f64().unwrap() >= 0.0, "{name}: {e}"),
                "i" => assert_eq!(e["s"], "t"),
                "M" | "s" | "f" => {}
                other => panic!("{name}: unexpected phase {other}"),
            }
            assert!(e["pid"].as_u64().unwrap() >= 1);
        }
    }
}

#[test]
fn figure_9_6_has_pause_and_lease_slices() {
    let (v, _, _) = trace("figure-9-6");
    let all = v["traceEvents"].as_array().unwrap();
    let slice = |name: &str| {
        all.iter()
            .filter(|e| e["ph"] == "X" && e["name"] == name)
            .map(|e| (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap()))
            .collect::<Vec<_>>()
    };
    assert_eq!(slice("paused"), [(5650.355, 15_000_000.05)]);
    // client1's belief runs from acquisition to its release; the lock's
    // grant ends at the expiry.
    let lease = slice("lease 1 (token 33)");
    assert_eq!(lease.len(), 2, "{lease:?}");
    let spans = |from: f64, to: f64| {
        lease
            .iter()
            .any(|&(ts, dur)| ts == from && (ts + dur - to).abs() < 0.01)
    };
    assert!(spans(5650.355, 16_009_581.876), "{lease:?}");
    assert!(spans(2654.427, 10_002_654.546), "{lease:?}");
    assert_eq!(
        v["otherData"]["repro"],
        "fencesim run scenarios/figure-9-6.toml --seed 1"
    );
}

#[test]
fn a_holder_powered_off_while_paused_is_down_to_the_end_of_the_run() {
    let (v, _, _) = trace("stonith-paused-holder");
    let all = v["traceEvents"].as_array().unwrap();
    // The paused / down track: client1 paused, then powered off by the
    // lock (and never restarted), is down from the power-off to the end.
    let out: Vec<(&str, f64, &Value)> = all
        .iter()
        .filter(|e| e["ph"] == "X" && e["tid"] == 2)
        .map(|e| {
            (
                e["name"].as_str().unwrap(),
                e["ts"].as_f64().unwrap(),
                &e["args"],
            )
        })
        .collect();
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!((out[0].0, out[0].1), ("down", 12_003_879.275));
    assert_eq!(out[0].2["until"], "the end of the run");
}
