//! Comparing lock designs under one workload: the same clients, storage,
//! network and fault model (the scenario's own faults and its `[explore]`
//! table) over each lock design of a registry, swept with the same seeds.
//!
//! Each design runs with the scenario's lock settings it understands (`ttl`,
//! `tokens`, `durable`, …: every key of the scenario's `[lock]` the design
//! also declares) and its own defaults for the rest ([`with_lock`]). A row gives the sweep's failing
//! seeds, the first of them, the violation kinds, how many seeds reached each
//! milestone, and the margin of the main pause ([`super::margin::main_pause`]).
//!
//! ```no_run
//! use fencesim::design::catalog::Registry;
//! use fencesim::explore::compare;
//! use fencesim::explore::sweep::SweepOptions;
//! let registry = Registry::builtin();
//! let s = fencesim::scenario::load_file(&registry, "scenarios/figure-9-6-unfenced.toml".as_ref()).unwrap();
//! let options = SweepOptions { seeds: 0..50, ..SweepOptions::default() };
//! for row in compare::compare(&registry, &s, &registry.names(fencesim::design::catalog::Role::Lock), &options) {
//!     println!("{}: {:?}", row.design, row.first_failing_seed);
//! }
//! ```

use std::collections::BTreeMap;

use serde_json::json;

use super::margin::{self, Finding};
use super::sweep::{self, Runs, SweepOptions, SweepSummary};
use crate::design::catalog::{Registry, Role};
use crate::scenario::{self, DesignSpec, ParamValue, Scenario};

/// One design's results.
#[derive(Clone, Debug)]
pub struct Row {
    /// The lock design.
    pub design: String,
    /// The scenario's lock settings the design ran with (the keys it also
    /// declares, whose values fit its rules), in key order.
    pub kept: Vec<(String, ParamValue)>,
    /// Why the design could not run the scenario (then every count is 0).
    pub error: Option<String>,
    /// Seeds run.
    pub seeds: u64,
    /// Seeds that failed (a violation, or a run that ended in error).
    pub failing_seeds: u64,
    /// The lowest failing seed.
    pub first_failing_seed: Option<u64>,
    /// Seeds whose run crashed (among the failing ones).
    pub crashed: u64,
    /// Seeds whose run outlived its wall-clock budget (among the failing
    /// ones).
    pub timed_out: u64,
    /// Violating seeds per violation kind.
    pub kinds: BTreeMap<&'static str, u64>,
    /// Seeds that reached each milestone (every milestone named).
    pub milestones: BTreeMap<&'static str, u64>,
    /// The main pause's margin, when the scenario has a first client.
    pub main_pause: Option<margin::Row>,
}

impl Row {
    /// How many milestones some seed reached.
    pub fn milestones_reached(&self) -> usize {
        self.milestones.values().filter(|n| **n > 0).count()
    }

    /// The scenario's `ttl`, when the design took it.
    pub fn ttl_kept(&self) -> Option<&ParamValue> {
        self.kept.iter().find(|(k, _)| k == "ttl").map(|(_, v)| v)
    }

    /// The main pause's threshold in ms, if it flips.
    pub fn main_pause_ms(&self) -> Option<u64> {
        self.main_pause.as_ref().and_then(|r| r.threshold)
    }

    /// The row as one JSON object (a line of `--json`).
    pub fn json(&self) -> serde_json::Value {
        let pause = self.main_pause.as_ref();
        json!({
            "design": self.design,
            "ttl_ms": self.ttl_kept().and_then(|v| match v {
                ParamValue::Duration(d) => Some(d.as_millis() as u64),
                _ => None,
            }),
            "lock_kept": self
                .kept
                .iter()
                .map(|(k, v)| (k.clone(), setting(v)))
                .collect::<serde_json::Map<_, _>>(),
            "error": self.error,
            "seeds": self.seeds,
            "failing_seeds": self.failing_seeds,
            "first_failing_seed": self.first_failing_seed,
            "crashed": self.crashed,
            "timed_out": self.timed_out,
            "violation_kinds": self.kinds,
            "milestones": self.milestones,
            "milestones_reached": self.milestones_reached(),
            "main_pause_ms": self.main_pause_ms(),
            "main_pause_finding": pause.map(|r| r.finding.as_str()),
            "main_pause_verdict_below": pause.map(|r| r.verdict_below.as_str()),
        })
    }
}

/// `scenario` with its `[lock]` replaced by `design`'s, keeping every
/// setting of the scenario's lock whose key `design` also declares (`ttl`,
/// `tokens`, `durable`, …) and taking the design's defaults for the rest. The
/// result is loaded again through `registry`, so every rule of a scenario
/// file holds (a key's bounds, a key below another, the faults' node names)
/// and `lock.resolved` is the new design. When the kept settings together
/// break one of the design's rules, they are kept one at a time, in key
/// order, each only if the scenario still loads with it. Returns the
/// scenario and the settings kept; errs with the reason when the design
/// cannot run the scenario at all (a fault naming `lock` for a design whose
/// nodes are `lock1` … `lockN`).
pub fn with_lock(
    registry: &Registry,
    scenario: &Scenario,
    design: &str,
) -> Result<(Scenario, Vec<(String, ParamValue)>), String> {
    let resolved = registry
        .resolve(Role::Lock, design)
        .ok_or_else(|| format!("unknown lock design `{design}`"))?;
    let info = resolved.info();
    let shared: Vec<(String, ParamValue)> = scenario
        .lock
        .params
        .iter()
        .filter(|(key, _)| info.key(key).is_some())
        .map(|(key, value)| (key.to_owned(), value.clone()))
        .collect();
    let attempt = |kept: &[(String, ParamValue)]| {
        let params = kept
            .iter()
            .fold(info.defaults(), |p, (k, v)| p.with(k, v.clone()));
        let mut s = scenario.clone();
        s.lock = DesignSpec {
            design: design.to_owned(),
            params,
            resolved: resolved.clone(),
        };
        scenario::load_str(registry, &scenario.file, &scenario::to_toml(&s)).map_err(|e| e.message)
    };
    let first = match attempt(&shared) {
        Ok(s) => return Ok((s, shared)),
        Err(e) => e,
    };
    // Some setting does not fit this design's other rules (a `ttl` below its
    // own heartbeat, say): keep what fits, one key at a time.
    let mut kept = Vec::new();
    let mut last = attempt(&kept).map_err(|_| first.clone())?;
    for setting in shared {
        kept.push(setting);
        match attempt(&kept) {
            Ok(s) => last = s,
            Err(_) => {
                kept.pop();
            }
        }
    }
    Ok((last, kept))
}

/// A lock setting in JSON: a duration as a scenario file writes it
/// (`"10s"`), the rest as themselves.
fn setting(value: &ParamValue) -> serde_json::Value {
    match value {
        ParamValue::Duration(d) => {
            json!(crate::scenario::write::duration_text(d.as_nanos() as u64))
        }
        ParamValue::Bool(b) => json!(b),
        ParamValue::U64(n) => json!(n),
        ParamValue::F64(f) => json!(f),
        ParamValue::Str(s) => json!(s),
    }
}

/// Sweeps `scenario` with each of `designs` as its lock, one row each, in
/// the order given. Unknown names are rows with an error.
pub fn compare(
    registry: &Registry,
    scenario: &Scenario,
    designs: &[&str],
    options: &SweepOptions,
) -> Vec<Row> {
    compare_with(&Runs::default(), registry, scenario, designs, options)
}

/// [`compare`] with `runs`' budget for every run.
pub fn compare_with(
    runs: &Runs,
    registry: &Registry,
    scenario: &Scenario,
    designs: &[&str],
    options: &SweepOptions,
) -> Vec<Row> {
    designs
        .iter()
        .map(|design| row(runs, registry, scenario, design, options))
        .collect()
}

fn row(
    runs: &Runs,
    registry: &Registry,
    scenario: &Scenario,
    design: &str,
    options: &SweepOptions,
) -> Row {
    let empty = SweepSummary::default();
    let (s, kept, error) = match with_lock(registry, scenario, design) {
        Ok((s, kept)) => (Some(s), kept, None),
        Err(e) => (None, Vec::new(), Some(e)),
    };
    let summary = match &s {
        Some(s) => sweep::sweep_streaming(s, options, runs, &[], &|| false, &mut |_| {}),
        None => empty,
    };
    let main_pause = s.as_ref().and_then(|s| margin::main_pause(runs, s, s.seed));
    Row {
        design: design.to_owned(),
        kept,
        error,
        seeds: summary.seeds,
        failing_seeds: summary.failing_seeds,
        first_failing_seed: summary.first_failing_seed,
        crashed: summary.crashed,
        timed_out: summary.timed_out,
        kinds: summary.by_kind.clone(),
        milestones: summary.milestone_counts(),
        main_pause,
    }
}

/// The table's header.
const HEADER: [&str; 6] = [
    "design",
    "failing seeds",
    "first failing seed",
    "violation kinds",
    "milestones reached",
    "main pause margin",
];

/// The rows' cells, as plain text.
fn cells(rows: &[Row]) -> Vec<[String; 6]> {
    rows.iter().map(row_cells).collect()
}

fn row_cells(r: &Row) -> [String; 6] {
    let dash = || "—".to_owned();
    if let Some(e) = &r.error {
        return [
            r.design.clone(),
            dash(),
            dash(),
            dash(),
            dash(),
            format!("cannot run: {e}"),
        ];
    }
    let kinds = if r.kinds.is_empty() {
        "none".to_owned()
    } else {
        r.kinds
            .iter()
            .map(|(k, n)| format!("{k} ×{n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let pause = match &r.main_pause {
        None => dash(),
        Some(p) => match (p.finding, p.threshold) {
            (Finding::Flip, Some(t)) => format!(
                "{}: {} → {}",
                margin::secs(t),
                p.verdict_below,
                p.verdict_at
            ),
            (Finding::NoFlip, _) => format!(
                "no flip up to {} ({})",
                margin::secs(p.probe.max),
                p.verdict_below
            ),
            (f, _) => f.as_str().replace('_', " "),
        },
    };
    let mut errors = Vec::new();
    if r.crashed > 0 {
        errors.push(format!("{} crashed", r.crashed));
    }
    if r.timed_out > 0 {
        errors.push(format!("{} timed out", r.timed_out));
    }
    let errors = if errors.is_empty() {
        String::new()
    } else {
        format!(" ({})", errors.join(", "))
    };
    [
        r.design.clone(),
        format!("{} of {}{errors}", r.failing_seeds, r.seeds),
        r.first_failing_seed.map_or_else(dash, |s| s.to_string()),
        kinds,
        format!("{} of {}", r.milestones_reached(), r.milestones.len()),
        pause,
    ]
}

/// The rows as a Markdown table (`compare --markdown`), each cell escaped
/// for Markdown.
pub fn markdown(rows: &[Row]) -> String {
    let mut out = format!("| {} |\n|---|---|---|---|---|---|\n", HEADER.join(" | "));
    for row in cells(rows) {
        let row: Vec<String> = row.iter().map(|c| crate::escape::markdown(c)).collect();
        out.push_str(&format!("| {} |\n", row.join(" | ")));
    }
    out
}

/// The rows as a table for the terminal: columns aligned, each cell
/// escaped for the terminal only (a design named `k8s_lease` reads as it is
/// written, not as Markdown escapes it).
pub fn text(rows: &[Row]) -> String {
    let rows: Vec<Vec<String>> = cells(rows)
        .iter()
        .map(|row| row.iter().map(|c| crate::escape::terminal(c)).collect())
        .collect();
    let header: Vec<String> = HEADER.iter().map(|h| h.to_string()).collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(&header).chain(&rows) {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c}{}", " ".repeat(w - c.chars().count())))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}
