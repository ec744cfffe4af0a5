//! A [`Scenario`] written back as a standalone TOML file (format version 1)
//! that loads back to an equal model (up to `file` and the faults' `line`).
//!
//! `fencesim shrink` uses it to hand back a failing fault schedule as a
//! scenario anyone can `run`.
//!
//! ```
//! use fencesim::design::catalog::Registry;
//! use fencesim::scenario::{load_str, to_toml};
//! let text = "name = \"x\"\n[lock]\ndesign = \"lease\"\n[storage]\ndesign = \"fenced\"\n[[clients]]\nname = \"c\"\n";
//! let s = load_str(&Registry::builtin(), "x.toml", text).unwrap();
//! let again = load_str(&Registry::builtin(), "x.toml", &to_toml(&s)).unwrap();
//! assert_eq!(s, again);
//! ```

use std::fmt::Write as _;
use std::time::Duration;

use super::model::{ExploreSpec, FaultSpec, NetworkSpec, ParamValue, Scenario, Trigger, Workload};

/// The scenario as TOML, every value explicit (defaults included).
pub fn to_toml(s: &Scenario) -> String {
    let mut out = String::new();
    let o = &mut out;
    line(o, "name", &string(&s.name));
    if !s.description.is_empty() {
        line(o, "description", &string(&s.description));
    }
    line(o, "seed", &s.seed.to_string());
    line(o, "duration", &duration(s.duration));
    line(o, "max_events", &s.max_events.to_string());
    line(o, "strict", &s.strict.to_string());
    for (table, spec) in [("lock", &s.lock), ("storage", &s.storage)] {
        writeln!(o, "\n[{table}]").unwrap();
        line(o, "design", &string(&spec.design));
        for (key, value) in spec.params.iter() {
            line(o, key, &param(value));
        }
    }
    network(o, &s.network);
    for c in &s.clients {
        writeln!(o, "\n[[clients]]").unwrap();
        line(o, "name", &string(&c.name));
        if let Some(p) = &c.process {
            line(o, "process", &string(p.name));
            for (key, value) in c.process_params.iter() {
                line(o, key, &param(value));
            }
        }
        line(o, "start", &duration(c.start));
        line(o, "rounds", &c.rounds.to_string());
        line(o, "work", &duration(c.work));
        let workload = match c.workload {
            Workload::Write => "write",
            Workload::Increment => "increment",
        };
        line(o, "workload", &string(workload));
        line(o, "retry", &duration(c.retry));
        line(o, "timeout", &duration(c.timeout));
        line(o, "check_lease", &c.check_lease.to_string());
        line(o, "renew", &c.renew.to_string());
        line(o, "fence_on_acquire", &c.fence_on_acquire.to_string());
        let precondition = if c.conditional { "read" } else { "none" };
        line(o, "precondition", &string(precondition));
    }
    for f in &s.faults {
        writeln!(o, "\n[[faults]]").unwrap();
        fault(o, f);
    }
    expect(o, s);
    if let Some(e) = &s.explore {
        explore(o, e);
    }
    out
}

fn line(out: &mut String, key: &str, value: &str) {
    writeln!(out, "{key} = {value}").unwrap();
}

/// A TOML basic string: JSON's string escapes are all valid TOML escapes.
pub(crate) fn string(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

pub(crate) fn strings(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| string(s)).collect();
    format!("[{}]", quoted.join(", "))
}

/// A float that TOML reads back as a float (`1.0`, not `1`).
pub(crate) fn float(f: f64) -> String {
    format!("{f:?}")
}

/// The largest exact unit: `"10s"`, `"250ms"`, `"7us"`, `"3ns"`.
pub(crate) fn duration(d: Duration) -> String {
    string(&duration_text(d.as_nanos() as u64))
}

pub(crate) fn duration_text(ns: u64) -> String {
    match ns {
        0 => "0s".to_owned(),
        n if n % 1_000_000_000 == 0 => format!("{}s", n / 1_000_000_000),
        n if n % 1_000_000 == 0 => format!("{}ms", n / 1_000_000),
        n if n % 1_000 == 0 => format!("{}us", n / 1_000),
        n => format!("{n}ns"),
    }
}

pub(crate) fn signed(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "+" };
    string(&format!("{sign}{}", duration_text(ns.unsigned_abs())))
}

fn param(value: &ParamValue) -> String {
    match value {
        ParamValue::Duration(d) => duration(*d),
        ParamValue::Bool(b) => b.to_string(),
        ParamValue::U64(n) => n.to_string(),
        ParamValue::F64(f) => float(*f),
        ParamValue::Str(s) => string(s),
    }
}

fn latency((min, max): (Duration, Duration)) -> String {
    format!("[{}, {}]", duration(min), duration(max))
}

fn network(o: &mut String, n: &NetworkSpec) {
    writeln!(o, "\n[network]").unwrap();
    line(o, "latency", &latency(n.latency));
    line(o, "loss", &float(n.loss));
    line(o, "duplicate", &float(n.duplicate));
    for l in &n.links {
        writeln!(o, "\n[[network.links]]").unwrap();
        line(o, "from", &string(&l.from));
        line(o, "to", &string(&l.to));
        if let Some(lat) = l.latency {
            line(o, "latency", &latency(lat));
        }
        if let Some(p) = l.loss {
            line(o, "loss", &float(p));
        }
        if let Some(p) = l.duplicate {
            line(o, "duplicate", &float(p));
        }
    }
}

/// One `[[faults]]` table's keys (without the header).
pub(crate) fn fault(o: &mut String, f: &FaultSpec) {
    line(o, "kind", &string(f.fault.kind()));
    for (key, value) in super::fault_kind::of(&f.fault).write(&f.fault) {
        line(o, key, &value);
    }
    for (key, value) in trigger_keys(&f.trigger) {
        line(o, key, &value);
    }
}

/// A fault's trigger as the keys and TOML values a scenario file writes:
/// `at = "5s"`, or `after = "client1:acquired:2"` with `delay` when not zero.
pub(crate) fn trigger_keys(trigger: &Trigger) -> Vec<(&'static str, String)> {
    match trigger {
        Trigger::At(at) => vec![("at", duration(*at))],
        Trigger::After {
            node,
            kind: event,
            nth,
            delay,
        } => {
            let after = if *nth <= 1 {
                format!("{node}:{event}")
            } else {
                format!("{node}:{event}:{nth}")
            };
            let mut keys = vec![("after", string(&after))];
            if !delay.is_zero() {
                keys.push(("delay", duration(*delay)));
            }
            keys
        }
    }
}

fn expect(o: &mut String, s: &Scenario) {
    let e = &s.expect;
    let counts: Vec<(&str, Option<u64>)> = e
        .counts
        .iter()
        .map(|(c, n)| (c.name(), *n))
        .chain([
            ("false_rejections", e.false_rejections),
            ("unfired_faults", e.unfired_faults),
        ])
        .collect();
    if e.verdict.is_none()
        && e.outcome.is_none()
        && e.mechanism.is_empty()
        && e.always.is_empty()
        && e.idle_clients.is_empty()
        && counts.iter().all(|(_, v)| v.is_none())
    {
        return;
    }
    writeln!(o, "\n[expect]").unwrap();
    if let Some(v) = e.verdict {
        line(o, "verdict", &string(v.as_str()));
    }
    if let Some(outcome) = &e.outcome {
        line(o, "outcome", &string(outcome));
    }
    for (key, value) in counts {
        if let Some(n) = value {
            line(o, key, &n.to_string());
        }
    }
    if !e.mechanism.is_empty() {
        line(o, "mechanism", &strings(&e.mechanism));
    }
    if !e.always.is_empty() {
        line(o, "always", &strings(&e.always));
    }
    if !e.idle_clients.is_empty() {
        line(o, "idle_clients", &strings(&e.idle_clients));
    }
}

fn explore(o: &mut String, e: &ExploreSpec) {
    writeln!(o, "\n[explore]").unwrap();
    if e.kinds_pinned {
        line(o, "kinds", &strings(&e.kinds));
    }
    line(o, "faults", &format!("[{}, {}]", e.faults.0, e.faults.1));
    if !e.nodes.is_empty() {
        line(o, "nodes", &strings(&e.nodes));
    }
    line(o, "swarm", &e.swarm.to_string());
    line(o, "max_pause", &duration(e.max_pause));
    line(o, "max_delay", &duration(e.max_delay));
    line(o, "max_jump", &duration(e.max_jump));
    line(o, "max_partition", &duration(e.max_partition));
    line(o, "max_restart", &duration(e.max_restart));
    if e.workloads {
        line(o, "workloads", "true");
    }
}
