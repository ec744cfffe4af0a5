//! The user's handle on a world before it runs: nodes, network, faults, limits.

use crate::actor::{Actor, Message, NodeId};
use crate::fault::ScheduledFault;
use crate::net::NetConfig;
use crate::run::Limits;

use super::WORLD_NODE;

/// Everything a world is made of, before it runs.
pub struct WorldBuilder<M> {
    pub(crate) nodes: Vec<(String, Box<dyn Actor<M>>)>,
    pub(crate) net: NetConfig,
    pub(crate) faults: Vec<ScheduledFault>,
    pub(crate) limits: Limits,
}

impl<M: Message> WorldBuilder<M> {
    /// An empty world with these limits.
    pub fn new(limits: Limits) -> Self {
        WorldBuilder {
            nodes: Vec::new(),
            net: NetConfig::default(),
            faults: Vec::new(),
            limits,
        }
    }

    /// Adds a node hosting `actor`; nodes are numbered in the order added.
    ///
    /// # Panics
    /// If the name is empty, taken, or `world`.
    pub fn node(&mut self, name: impl Into<String>, actor: impl Actor<M>) -> NodeId {
        let name = name.into();
        assert!(
            !name.is_empty() && name != WORLD_NODE,
            "invalid node name {name:?}"
        );
        assert!(
            self.nodes.iter().all(|(n, _)| *n != name),
            "duplicate node name {name:?}"
        );
        self.nodes.push((name, Box::new(actor)));
        self.nodes.len() - 1
    }

    /// Sets the network.
    pub fn network(&mut self, net: NetConfig) -> &mut Self {
        self.net = net;
        self
    }

    /// Adds a fault.
    pub fn fault(&mut self, fault: ScheduledFault) -> &mut Self {
        self.faults.push(fault);
        self
    }
}
