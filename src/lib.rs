//! fencesim: deterministic simulation testing for distributed locks, leases
//! and fencing tokens.
#![deny(missing_docs)]

#[cfg(feature = "audit")]
pub mod audit;
#[cfg(feature = "cli")]
pub mod cli;
pub mod design;
// Escaping and repro lines serve every output; a build without the command
// line or the reports leaves some of them unused.
#[cfg_attr(not(all(feature = "cli", feature = "report")), allow(dead_code))]
mod escape;
pub mod events;
pub mod explore;
pub mod oracle;
pub mod process;
pub mod protocol;
pub mod report;
#[cfg_attr(not(all(feature = "cli", feature = "report")), allow(dead_code))]
mod repro;
pub mod runner;
pub mod scenario;
pub mod testkit;

/// A command line of your own, with your designs registered beside the
/// bundled ones (feature `cli`).
#[cfg(feature = "cli")]
pub use cli::{main_with, run_args, Status};

/// The simulated world designs are written against (`fencesim-sim`):
/// `fencesim::sim::{Actor, Context, NodeId, TimerId}`.
pub use sim;
