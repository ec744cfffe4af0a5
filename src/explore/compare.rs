//! Comparing lock designs under one workload: the same clients, storage,
//! network and fault model (the scenario's own faults and its `[explore]`
//! table) over each lock design of a registry, swept with the same seeds.
//!
//! Each design runs with its own defaults, keeping the scenario's `ttl` when
//! the design takes one ([`with_lock`]). A row gives the sweep's failing
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
use super::sweep::{self, SweepOptions, SweepSummary};
use crate::design::catalog::{Registry, Role};
use crate::scenario::{self, DesignSpec, ParamValue, Scenario};

/// One design's results.
#[derive(Clone, Debug)]
pub struct Row {
    /// The lock design.
    pub design: String,
    /// The scenario's `ttl`, when the design took it.
    pub ttl_kept: Option<ParamValue>,
    /// Why the design could not run the scenario (then every count is 0).
    pub error: Option<String>,
    /// Seeds run.
    pub seeds: u64,
    /// Seeds that failed (a violation, or a run that ended in error).
    pub failing_seeds: u64,
    /// The lowest failing seed.
    pub first_failing_seed: Option<u64>,
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

    /// The main pause's threshold in ms, if it flips.
    pub fn main_pause_ms(&self) -> Option<u64> {
        self.main_pause.as_ref().and_then(|r| r.threshold)
    }

    /// The row as one JSON object (a line of `--json`).
    pub fn json(&self) -> serde_json::Value {
        let pause = self.main_pause.as_ref();
        json!({
            "design": self.design,
            "ttl_ms": self.ttl_kept.as_ref().and_then(|v| match v {
                ParamValue::Duration(d) => Some(d.as_millis() as u64),
                _ => None,
            }),
            "error": self.error,
            "seeds": self.seeds,
            "failing_seeds": self.failing_seeds,
            "first_failing_seed": self.first_failing_seed,
            "violation_kinds": self.kinds,
            "milestones": self.milestones,
            "milestones_reached": self.milestones_reached(),
            "main_pause_ms": self.main_pause_ms(),
            "main_pause_finding": pause.map(|r| r.finding.as_str()),
            "main_pause_verdict_below": pause.map(|r| r.verdict_below.as_str()),
        })
    }
}

/// `scenario` with its `[lock]` replaced by `design`'s defaults, keeping the
/// scenario's `ttl` if the design takes one. The result is loaded again
/// through `registry`, so every rule of a scenario file holds (a key's
/// bounds, a key below another, the faults' node names) and
/// `lock.resolved` is the new design. When the kept `ttl` breaks one of the
/// design's rules, the design's own default is used. Errs with the reason
/// when the design cannot run the scenario at all (a fault naming `lock`
/// for a design whose nodes are `lock1` … `lockN`).
pub fn with_lock(
    registry: &Registry,
    scenario: &Scenario,
    design: &str,
) -> Result<(Scenario, Option<ParamValue>), String> {
    let resolved = registry
        .resolve(Role::Lock, design)
        .ok_or_else(|| format!("unknown lock design `{design}`"))?;
    let info = resolved.info();
    let ttl = scenario
        .lock
        .params
        .get("ttl")
        .filter(|_| info.key("ttl").is_some())
        .cloned();
    let attempt = |ttl: Option<&ParamValue>| {
        let mut params = info.defaults();
        if let Some(ttl) = ttl {
            params = params.with("ttl", ttl.clone());
        }
        let mut s = scenario.clone();
        s.lock = DesignSpec {
            design: design.to_owned(),
            params,
            resolved: resolved.clone(),
        };
        scenario::load_str(registry, &scenario.file, &scenario::to_toml(&s)).map_err(|e| e.message)
    };
    match attempt(ttl.as_ref()) {
        Ok(s) => Ok((s, ttl)),
        Err(first) if ttl.is_some() => attempt(None).map(|s| (s, None)).map_err(|_| first),
        Err(e) => Err(e),
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
    designs
        .iter()
        .map(|design| row(registry, scenario, design, options))
        .collect()
}

fn row(registry: &Registry, scenario: &Scenario, design: &str, options: &SweepOptions) -> Row {
    let empty = SweepSummary::default();
    let (s, ttl_kept, error) = match with_lock(registry, scenario, design) {
        Ok((s, ttl)) => (Some(s), ttl, None),
        Err(e) => (None, None, Some(e)),
    };
    let summary = match &s {
        Some(s) => sweep::sweep(s, options, &|_| {}),
        None => empty,
    };
    let main_pause = s.as_ref().and_then(|s| margin::main_pause(s, s.seed));
    Row {
        design: design.to_owned(),
        ttl_kept,
        error,
        seeds: summary.seeds,
        failing_seeds: summary.failing_seeds,
        first_failing_seed: summary.first_failing_seed,
        kinds: summary.by_kind.clone(),
        milestones: summary.milestone_counts(),
        main_pause,
    }
}

/// The rows as a Markdown table.
pub fn markdown(rows: &[Row]) -> String {
    let mut out = String::from(
        "| design | failing seeds | first failing seed | violation kinds | milestones reached | main pause margin |\n\
         |---|---|---|---|---|---|\n",
    );
    for r in rows {
        if let Some(e) = &r.error {
            out.push_str(&format!(
                "| {} | — | — | — | — | cannot run: {} |\n",
                cell(&r.design),
                cell(e)
            ));
            continue;
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
            None => "—".to_owned(),
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
        out.push_str(&format!(
            "| {} | {} of {} | {} | {} | {} of {} | {} |\n",
            cell(&r.design),
            r.failing_seeds,
            r.seeds,
            r.first_failing_seed
                .map_or("—".to_owned(), |s| s.to_string()),
            kinds,
            r.milestones_reached(),
            r.milestones.len(),
            pause
        ));
    }
    out
}

/// Text for a Markdown cell: escaped, pipes included.
fn cell(text: &str) -> String {
    crate::escape::markdown(text)
}
