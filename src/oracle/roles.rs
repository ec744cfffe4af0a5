//! What each node of a run is: a client, a lock node or a storage node.
//!
//! The runner knows from the scenario's topology, and hands the roles to
//! the oracle beside the journal ([`super::OracleConfig::roles`]); nothing
//! is read from a node's name. A journal judged without them (one built by
//! hand) gets the roles its nodes' own events show: a node that journals a
//! lock's event is a lock node, and so on.
//!
//! ```
//! use fencesim::events::Role;
//! use fencesim::oracle::Roles;
//! use sim::journal::{Event, Journal};
//! let journal = Journal::from_events([
//!     Event::new(0, 0, "primary", 0, "granted").with("client", "worker").with("lease", 1u64),
//!     Event::new(0, 1, "worker", 1, "acquired").with("lease", 1u64),
//! ]);
//! let roles = Roles::from_journal(&journal);
//! assert_eq!(roles.get("primary"), Some(Role::Lock));
//! assert_eq!(roles.get("worker"), Some(Role::Client));
//! assert_eq!(roles.get("storage"), None);
//! ```

use std::collections::BTreeMap;

use sim::journal::Journal;

use crate::events::{DomainEvent, Role};
use crate::scenario::Scenario;

/// Each node's role, by name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Roles {
    nodes: BTreeMap<String, Role>,
}

/// No roles: a journal judged on its own events.
pub(crate) static NO_ROLES: Roles = Roles {
    nodes: BTreeMap::new(),
};

impl Roles {
    /// The roles of a scenario's nodes: its clients, its lock node(s), and
    /// its storage (every other node it runs).
    pub fn of(scenario: &Scenario) -> Roles {
        let mut roles = Roles::default();
        for c in &scenario.clients {
            roles.insert(&c.name, Role::Client);
        }
        for lock in scenario.lock_nodes() {
            roles.insert(&lock, Role::Lock);
        }
        for node in scenario.node_names() {
            if roles.get(&node).is_none() {
                roles.insert(&node, Role::Storage);
            }
        }
        roles
    }

    /// The roles a journal's own events show (see the module's doc): the
    /// first domain event of each node decides.
    pub fn from_journal(journal: &Journal) -> Roles {
        let mut nodes: BTreeMap<String, Role> = BTreeMap::new();
        for e in journal.events() {
            if nodes.contains_key(e.node.as_str()) {
                continue;
            }
            if let Ok(Some(d)) = DomainEvent::decode(e) {
                nodes.insert(e.node.to_string(), d.role());
            }
        }
        Roles { nodes }
    }

    /// The roles [`Roles::from_journal`] finds, from each (node, role) in
    /// order of the node's first domain event of that role (the history's
    /// [`super::spans::Spans::appears`]): the first of each node decides.
    pub(crate) fn first_of(appears: &[(&str, Role)]) -> Roles {
        let mut roles = Roles::default();
        for &(node, role) in appears {
            if roles.get(node).is_none() {
                roles.insert(node, role);
            }
        }
        roles
    }

    /// Gives `node` its role.
    pub fn insert(&mut self, node: &str, role: Role) {
        self.nodes.insert(node.to_owned(), role);
    }

    /// The role of `node`, if it has one.
    pub fn get(&self, node: &str) -> Option<Role> {
        self.nodes.get(node).copied()
    }

    /// Whether no node has a role (a journal judged without its topology).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Whether `node` is `role`.
    pub fn is(&self, node: &str, role: Role) -> bool {
        self.get(node) == Some(role)
    }
}
