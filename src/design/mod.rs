//! Lock services, storages and clients, and the metadata that scenarios and
//! the CLI read about them.
//!
//! Designs are sans-IO state machines ([`sim::Actor`] over
//! [`crate::protocol::Msg`]): they read their node's clock from the context,
//! send messages and set timers through it, and emit journal events with
//! [`sim::emit!`] in the vocabulary of [`crate::events`].

pub mod catalog;
pub mod client;
pub mod lease;
pub mod storage;
