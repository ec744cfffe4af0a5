//! How a margin [`Row`] reads: one line for humans, one JSON object.

use serde_json::json;
use sim::fault::{Fault, Trigger};

use super::{Finding, ProbeKind, Row};
use crate::oracle::Verdict;
use crate::scenario::fault_kind;

impl Row {
    /// The node the fault hits: the paused or skewed node, a delayed link's
    /// client.
    pub fn node(&self) -> String {
        let fault = &self.probe.fault.fault;
        fault_kind::of(fault).margin_node(fault)
    }

    /// `ms`, or `ms/s` for a clock rate.
    pub fn unit(&self) -> &'static str {
        match self.probe.kind {
            ProbeKind::ClockRate { .. } => "ms/s",
            _ => "ms",
        }
    }

    /// One line for humans: "a pause of 8.996 s after client1:acquired
    /// breaks it; ttl 10 s, work 1 s".
    pub fn text(&self) -> String {
        let what = self.what();
        let bare = what
            .replace(" of {}", "")
            .replace(" for {}", "")
            .replace(" lasting {}", "")
            .replace("{} ", "");
        let against: Vec<String> = self
            .timeouts
            .iter()
            .map(|(k, d)| format!("{k} {}", secs(d.as_millis() as u64)))
            .collect();
        let against = if against.is_empty() {
            String::new()
        } else {
            format!("; {}", against.join(", "))
        };
        let max = self.magnitude(self.probe.max);
        let body = match self.finding {
            Finding::Flip => {
                let threshold = self.threshold.expect("a flip has a threshold");
                let effect = if self.verdict_at == Verdict::Violation {
                    "breaks it".to_owned()
                } else {
                    format!("makes it {}", self.verdict_at)
                };
                let mut text = format!(
                    "{} {effect} (at {}: {})",
                    what.replace("{}", &self.magnitude(threshold)),
                    self.magnitude(threshold - 1),
                    self.verdict_below
                );
                if !self.monotone {
                    text.push_str("; not monotone: a larger magnitude flips back");
                }
                text
            }
            Finding::NoFlip => format!(
                "{bare}: no flip up to {max} ({} throughout)",
                self.verdict_below
            ),
            Finding::FlipsAtMin => format!(
                "{}: already {} at {} (as written: {}), no threshold",
                bare,
                self.verdict_at,
                self.magnitude(1),
                self.verdict_below
            ),
            Finding::Unfired => format!("{}: never fires", bare),
        };
        format!("{body}{against}")
    }

    /// A magnitude in the row's unit, as text.
    fn magnitude(&self, m: u64) -> String {
        match self.probe.kind {
            ProbeKind::ClockRate { .. } => format!("{m} ms/s"),
            _ => secs(m),
        }
    }

    /// The fault in words, `{}` standing for its magnitude.
    fn what(&self) -> String {
        let after = trigger_text(&self.probe.fault.trigger);
        let own = match self.probe.kind {
            ProbeKind::Scripted(i) => format!(
                "the scenario's own {} (fault {}, line {}): ",
                self.probe.fault.fault.kind(),
                i + 1,
                self.probe.fault.line
            ),
            _ => String::new(),
        };
        let fault = &self.probe.fault.fault;
        let text = match (&self.probe.kind, fault) {
            (ProbeKind::ClockRate { fast }, Fault::Clock(c)) => format!(
                "{}'s clocks running {{}} {} {after}",
                c.node,
                if *fast { "fast" } else { "slow" }
            ),
            (ProbeKind::Delay, Fault::Delay(d)) => {
                format!(
                    "a delay of {{}} on the first message {} → {}",
                    d.from.as_deref().unwrap_or("*"),
                    d.to
                )
            }
            _ => fault_kind::of(fault).margin_words(fault, &self.probe.fault.trigger, &after),
        };
        format!("{own}{text}")
    }

    /// The row as one JSON object (a line of `--json`).
    pub fn json(&self) -> serde_json::Value {
        let fault = &self.probe.fault.fault;
        let (from, to) = match fault_kind::of(fault).link(fault) {
            Some((from, to)) => (Some(from), Some(to)),
            None => (None, None),
        };
        let direction = match &self.probe.kind {
            ProbeKind::ClockJump { forward } => Some(if *forward { "forward" } else { "back" }),
            ProbeKind::ClockRate { fast } => Some(if *fast { "fast" } else { "slow" }),
            ProbeKind::Scripted(_) => {
                fault_kind::of(&self.probe.fault.fault).direction(&self.probe.fault.fault)
            }
            _ => None,
        };
        let scripted_line = match self.probe.kind {
            ProbeKind::Scripted(_) => Some(self.probe.fault.line),
            _ => None,
        };
        let timeouts: serde_json::Map<String, serde_json::Value> = self
            .timeouts
            .iter()
            .map(|(k, d)| (format!("{k}_ms"), json!(d.as_millis() as u64)))
            .collect();
        let found = self.finding == Finding::Flip;
        json!({
            "kind": self.probe.kind_name(),
            "node": self.node(),
            "threshold_ms": self.threshold,
            "seed": self.seed,
            "unit": self.unit(),
            "trigger": trigger_text(&self.probe.fault.trigger),
            "from": from,
            "to": to,
            "direction": direction,
            "scripted_line": scripted_line,
            "finding": self.finding.as_str(),
            "verdict_below": self.verdict_below.as_str(),
            "verdict_at": found.then(|| self.verdict_at.as_str()),
            "max_ms": self.probe.max,
            "monotone": self.monotone,
            "runs": self.runs,
            "timeouts": timeouts,
        })
    }
}

/// `after client1:acquired`, `after client1:acquired:2 + 500 ms`, `from
/// the start`, `at 5 s`.
pub(super) fn trigger_text(trigger: &Trigger) -> String {
    match trigger {
        Trigger::At(d) if d.is_zero() => "from the start".to_owned(),
        _ => crate::explore::shrink::trigger_words(trigger, |d| secs(d.as_millis() as u64)),
    }
}

/// Milliseconds as seconds, trailing zeros dropped: `8.996 s`, `10 s`.
pub fn secs(ms: u64) -> String {
    let whole = ms / 1000;
    let frac = ms % 1000;
    if frac == 0 {
        format!("{whole} s")
    } else {
        let digits = format!("{frac:03}");
        format!("{whole}.{} s", digits.trim_end_matches('0'))
    }
}
