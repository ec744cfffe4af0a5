//! fencesim: deterministic simulation testing for distributed locks, leases
//! and fencing tokens.
#![deny(missing_docs)]

pub mod events;
pub mod oracle;
