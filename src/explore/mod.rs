//! Exploration: search for the run that breaks a design.
//!
//! - [`sweep`]: every seed of a range, each with a random fault schedule
//!   ([`random`]) or only the scenario's own faults, over all cores;
//! - [`shrink`]: a failing seed's schedule, delta-debugged to a small one and
//!   written back as a standalone scenario;
//! - [`exhaustive`]: one or two faults from a bounded menu at every event
//!   boundary;
//! - [`shard`]: `--shard K/N` and merging the shards' JSON lines;
//! - [`resume`]: continuing a stopped sweep from its JSON lines;
//! - [`strategy`]: proptest strategies for fault schedules;
//! - [`margin`]: the smallest magnitude of each fault that flips a verdict;
//! - [`compare`]: one workload swept over every lock design;
//! - [`generic`]: `explore --generic`, whether the generic table finds the
//!   bug a scenario's `[expect]` describes;
//! - [`workload`]: `explore --workloads`, each seed's workload varied as
//!   its faults are.
//!
//! ```no_run
//! use fencesim::design::catalog::Registry;
//! use fencesim::explore::sweep::{sweep, SweepOptions};
//! let s = fencesim::scenario::load_file(&Registry::builtin(), "scenarios/explore-lease-unfenced.toml".as_ref()).unwrap();
//! let summary = sweep(&s, &SweepOptions::default(), &|_done| {});
//! println!("{} of {} seeds violate", summary.violations, summary.seeds);
//! ```

pub mod compare;
pub mod depth;
pub mod exhaustive;
pub mod generic;
pub mod guided;
pub mod margin;
pub mod random;
pub mod resume;
pub mod shard;
pub mod shrink;
#[cfg(feature = "proptest")]
pub mod strategy;
pub mod sweep;
pub mod worker;
pub mod workload;

use crate::scenario::FaultSpec;

/// A fault as one line of TOML (an inline table with its trigger), as it
/// would appear in a scenario's `[[faults]]`.
pub fn describe(fault: &FaultSpec) -> String {
    let mut text = String::new();
    crate::scenario::write::fault(&mut text, fault);
    format!("{{ {} }}", text.trim_end().replace('\n', ", "))
}
