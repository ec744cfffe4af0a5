//! fencesim: deterministic simulation testing for distributed locks, leases
//! and fencing tokens.
#![deny(missing_docs)]

pub mod audit;
pub mod cli;
pub mod design;
pub mod escape;
pub mod events;
pub mod explore;
pub mod oracle;
pub mod protocol;
pub mod report;
pub mod repro;
pub mod runner;
pub mod scenario;
pub mod testkit;

/// The simulated world designs are written against (`fencesim-sim`):
/// `fencesim::sim::{Actor, Context, NodeId, TimerId}`.
pub use sim;
