//! Lock services, storages and clients, and the metadata that scenarios and
//! the CLI read about them.
//!
//! Designs are sans-IO state machines ([`sim::Actor`] over
//! [`crate::protocol::Msg`]): they read their node's clock from the context,
//! send messages and set timers through it, and emit journal events with
//! [`sim::emit!`] in the vocabulary of [`crate::events`].

pub mod catalog;
pub mod chubby;
pub mod client;
pub mod hazelcast;
pub mod lease;
pub mod lock_client;
pub mod session;
pub mod session_client;
pub mod storage;
pub mod zookeeper;

use sim::Actor;

use crate::design::catalog::DesignInfo;
use crate::design::lock_client::LockClient;
use crate::protocol::Msg;
use crate::scenario::Params;

/// A lock service: its metadata, its server actor(s) and the client half of
/// its protocol. Register one with
/// [`Registry::add_lock`](catalog::Registry::add_lock) to name it in
/// scenario files.
pub trait LockDesign: Send + Sync + 'static {
    /// Name, summary and keys (validated by the scenario loader).
    fn info(&self) -> DesignInfo;
    /// The server actor of lock node `index` (0-based; designs with a
    /// `nodes` key have several, named `lock1` … `lockN`).
    fn server(&self, params: &Params, index: usize) -> Box<dyn Actor<Msg>>;
    /// The protocol one client speaks to the lock nodes, given their names.
    fn client(&self, params: &Params, lock_nodes: &[String]) -> Box<dyn LockClient>;
}

/// A storage: its metadata and its server actor.
pub trait StorageDesign: Send + Sync + 'static {
    /// Name, summary and keys (validated by the scenario loader).
    fn info(&self) -> DesignInfo;
    /// The storage node's actor.
    fn server(&self, params: &Params) -> Box<dyn Actor<Msg>>;
}
