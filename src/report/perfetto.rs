//! `NAME.trace.json`: a run in the Chrome trace event format, which
//! ui.perfetto.dev (and chrome://tracing) open.
//!
//! - every node is a process (`M` `process_name`, sorted in lane order);
//! - every event is an instant (`ph: "i"`) on the node's `events` thread,
//!   with its journal fields as `args`; sends and deliveries are 1 µs slices
//!   (`ph: "X"`) instead, because flows bind to slices, not instants;
//! - every delivered message is a flow (`s` at the send, `f` at the
//!   delivery, `id` the message id; a duplicate's extra copies get
//!   `id + copy × 2^32`);
//! - pauses and crashes, believed leases (on the client) and true leases
//!   (on the lock, and beside the belief on the client) are complete slices
//!   (`ph: "X"`) on threads of their own, so they never need to nest.
//!
//! Timestamps are microseconds of true simulated time.
//!
//! ```
//! use fencesim::oracle::{check_and_count, OracleConfig};
//! use fencesim::report::{perfetto, Subject};
//! use sim::journal::{Event, Journal};
//!
//! let journal = Journal::from_events([
//!     Event::new(0, 1_000, "client1", 1_000, "send").with("id", 7u64).with("to", "lock").with("msg", "acquire"),
//!     Event::new(0, 3_000, "lock", 3_000, "deliver").with("id", 7u64).with("from", "client1").with("msg", "acquire"),
//! ]);
//! let (report, milestones) = check_and_count(&journal, &OracleConfig::default());
//! let nodes = ["client1".to_owned(), "lock".to_owned()];
//! let trace = perfetto::trace(&Subject {
//!     name: "tiny", description: "", seed: 1, journal: &journal, report: &report,
//!     milestones: &milestones,
//!     nodes: &nodes, repro: "fencesim run tiny.toml --seed 1",
//!     untested: &[],
//! });
//! let v: serde_json::Value = serde_json::from_str(&trace).unwrap();
//! let flows: Vec<_> = v["traceEvents"].as_array().unwrap().iter()
//!     .filter(|e| e["ph"] == "s" || e["ph"] == "f").collect();
//! assert_eq!((flows[0]["id"].as_u64(), flows[0]["ts"].as_f64()), (Some(7), Some(1.0)));
//! assert_eq!((flows[1]["ph"].as_str(), flows[1]["ts"].as_f64()), (Some("f"), Some(3.0)));
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde_json::{json, Map, Value};
use sim::events::WorldEvent as W;
use sim::journal::Value as FieldValue;

use super::belief::{local_seconds as local, token_text, Beliefs, NodeState};
use super::lanes::describe;
use super::step::verdict_text;
use super::{node_order, Subject};

const EVENTS: u64 = 1;
const OUT: u64 = 2;
const BELIEVED: u64 = 3;
const HELD: u64 = 4;

/// The trace, as one JSON object (`traceEvents`, `displayTimeUnit`,
/// `otherData`), one trace event per line.
pub fn trace(s: &Subject<'_>) -> String {
    // Every node is a process, a crowd's clients too: Perfetto folds
    // processes away, and lookups go through maps, so that the trace costs
    // time linear in the journal (times a logarithm), never in events ×
    // clients.
    let nodes = node_order(s);
    let pids: BTreeMap<&str, u64> = (1..)
        .zip(nodes.iter().copied())
        .map(|(p, n)| (n, p))
        .collect();
    let pid = |node: &str| pids.get(node).copied().unwrap_or(0);
    let other = json!({
        "scenario": s.name,
        "seed": s.seed,
        "verdict": verdict_text(s.report),
        "repro": s.repro,
        "events": s.journal.len(),
        "trace_hash": s.journal.hash(),
    });
    // Each trace event is written as it is made: a long journal never has
    // a second copy as JSON trees.
    let mut out = Lines::new(format!(
        "{{\"displayTimeUnit\":\"ms\",\"otherData\":{other},\"traceEvents\":[\n"
    ));
    let beliefs = Beliefs::new(s.journal);
    let spans = beliefs.spans();
    let bars = beliefs.lease_bars();
    let clients: BTreeSet<&str> = {
        let believers: BTreeSet<&str> = bars
            .iter()
            .filter(|b| !b.at_lock)
            .map(|b| b.node.as_str())
            .collect();
        nodes
            .iter()
            .copied()
            .filter(|n| believers.contains(n))
            .collect()
    };
    for (i, n) in nodes.iter().enumerate() {
        let p = i as u64 + 1;
        out.push(meta(p, None, "process_name", json!({ "name": n })));
        out.push(meta(
            p,
            None,
            "process_sort_index",
            json!({ "sort_index": p }),
        ));
        out.push(meta(
            p,
            Some(EVENTS),
            "thread_name",
            json!({ "name": "events" }),
        ));
        out.push(meta(
            p,
            Some(OUT),
            "thread_name",
            json!({ "name": "paused / down" }),
        ));
        let held_name = if clients.contains(n) {
            out.push(meta(
                p,
                Some(BELIEVED),
                "thread_name",
                json!({ "name": "lease: believed" }),
            ));
            "lease: held at the lock"
        } else {
            "leases granted"
        };
        out.push(meta(
            p,
            Some(HELD),
            "thread_name",
            json!({ "name": held_name }),
        ));
    }

    let mut sends: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
    let mut copies: BTreeMap<u64, u64> = BTreeMap::new();
    let mut findings: BTreeMap<u64, Vec<&crate::oracle::Violation>> = BTreeMap::new();
    for v in &s.report.violations {
        findings.entry(v.seq).or_default().push(v);
    }
    for e in s.journal.events() {
        let p = pid(&e.node);
        let mut args = Map::new();
        args.insert("seq".into(), json!(e.seq));
        args.insert("local_time".into(), json!(local(e.local_ns)));
        for (name, value) in &e.fields {
            args.insert(name.to_string(), field(value));
        }
        for v in findings.get(&e.seq).into_iter().flatten() {
            args.insert(v.kind.as_str().into(), json!(v.explanation));
        }
        let w = W::decode(e).ok().flatten();
        let message_end = w.is_some_and(|w| w.is_message_end());
        let mut event = json!({
            "name": describe(e),
            "cat": &*e.kind,
            "ph": if message_end { "X" } else { "i" },
            "ts": micros(e.t_ns),
            "pid": p,
            "tid": EVENTS,
            "args": args,
        });
        if message_end {
            event["dur"] = json!(1);
        } else {
            event["s"] = json!("t");
        }
        out.push(event);
        match w {
            Some(W::Send { id, .. }) => {
                sends.insert(id, (e.t_ns, p));
            }
            Some(W::Deliver { id, .. }) => {
                if let Some((id, &(sent, from))) = sends.get_key_value(&id) {
                    let copy = copies.entry(*id).or_insert(0);
                    let flow = id + (*copy << 32);
                    *copy += 1;
                    for (ph, ts, p) in [("s", sent, from), ("f", e.t_ns, p)] {
                        out.push(json!({
                            "name": "message", "cat": "message", "ph": ph, "bp": "e",
                            "id": flow, "ts": micros(ts), "pid": p, "tid": EVENTS,
                        }));
                    }
                }
            }
            // A node back up ends its stretch out: paused or down since
            // the state it was in just before.
            Some(W::Resume | W::Restart) => {
                if let Some((since, what)) = out_since(spans.state(&e.node, e.seq)) {
                    out.push(slice(p, OUT, what, since, e.t_ns, json!({})));
                }
            }
            _ => {}
        }
    }
    let end = s.journal.events().last().map_or(0, |e| e.t_ns);
    let after = s.journal.len() as u64;
    for &node in spans.states.keys() {
        if let Some((since, what)) = out_since(spans.state(node, after)) {
            out.push(slice(
                pid(node),
                OUT,
                what,
                since,
                end,
                json!({ "until": "the end of the run" }),
            ));
        }
    }
    for bar in bars {
        let name = format!("lease {}{}", bar.lease, token_text(bar.token));
        let mut args = json!({ "client": bar.client, "ended": bar.how });
        if let Some(until) = bar.until_local_ns {
            args["believed_until_local"] = json!(local(until));
        }
        if bar.at_lock {
            let label = format!("{} {name}", bar.client);
            out.push(slice(
                pid(&bar.node),
                HELD,
                &label,
                bar.start_t_ns,
                bar.end_t_ns,
                args.clone(),
            ));
            if clients.contains(&bar.client.as_str()) {
                out.push(slice(
                    pid(&bar.client),
                    HELD,
                    &name,
                    bar.start_t_ns,
                    bar.end_t_ns,
                    args,
                ));
            }
        } else {
            out.push(slice(
                pid(&bar.node),
                BELIEVED,
                &name,
                bar.start_t_ns,
                bar.end_t_ns,
                args,
            ));
        }
    }
    out.0.push_str("\n]}\n");
    out.0
}

/// Since when, and whether paused or down, a node in `state` is out.
fn out_since(state: NodeState) -> Option<(u64, &'static str)> {
    match state {
        NodeState::Up => None,
        NodeState::Paused(since) => Some((since, "paused")),
        NodeState::Down(since) => Some((since, "down")),
    }
}

/// The trace's text so far; [`Lines::push`] appends one trace event.
struct Lines(String, bool);

impl Lines {
    fn new(head: String) -> Lines {
        Lines(head, false)
    }

    fn push(&mut self, v: Value) {
        if self.1 {
            self.0.push_str(",\n");
        }
        self.1 = true;
        write!(self.0, "{v}").unwrap();
    }
}

fn meta(pid: u64, tid: Option<u64>, name: &str, args: Value) -> Value {
    let mut v = json!({ "name": name, "ph": "M", "pid": pid, "args": args });
    if let Some(tid) = tid {
        v["tid"] = json!(tid);
    }
    v
}

fn slice(pid: u64, tid: u64, name: &str, start: u64, end: u64, args: Value) -> Value {
    json!({
        "name": name, "cat": "span", "ph": "X", "ts": micros(start),
        "dur": micros(end.saturating_sub(start)), "pid": pid, "tid": tid, "args": args,
    })
}

/// Nanoseconds as microseconds; `f64` prints the same shortest form on every
/// platform, and every nanosecond count below 2^53 is exact.
fn micros(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

fn field(v: &FieldValue) -> Value {
    match v {
        FieldValue::U64(x) => json!(x),
        FieldValue::I64(x) => json!(x),
        FieldValue::Bool(x) => json!(x),
        FieldValue::Str(x) => json!(x.as_str()),
        FieldValue::F64(x) if x.is_finite() => json!(x),
        FieldValue::F64(x) => json!(x.to_string()),
    }
}
