//! What designs exist and which scenario keys each one takes.
//!
//! The scenario loader validates `[lock]` and `[storage]` tables against this
//! catalog and fills in defaults; `fencesim designs` prints it. A user's own
//! design is described once here, with [`Registry::add`], and gets the same
//! validation and documentation as a bundled one.
//!
//! ```
//! use fencesim::design::catalog::{Registry, Role};
//!
//! let registry = Registry::builtin();
//! let lease = registry.get(Role::Lock, "lease").unwrap();
//! assert!(lease.keys.iter().any(|key| key.name == "ttl"));
//! ```

use std::fmt;
use std::sync::Arc;

use crate::design::{LockDesign, StorageDesign};

/// Which part of the system a design plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    /// A lock service: the `[lock]` table.
    Lock,
    /// A storage service: the `[storage]` table.
    Storage,
}

impl Role {
    /// The role's name as the scenario file spells its table: `lock` or `storage`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Lock => "lock",
            Role::Storage => "storage",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The type, and bounds, of a design's key.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KeyKind {
    /// A humantime string such as `"10s"`, at most 24 hours.
    Duration,
    /// `true` or `false`.
    Bool,
    /// An integer in `min..=max`.
    U64 {
        /// Smallest accepted value.
        min: u64,
        /// Largest accepted value.
        max: u64,
    },
    /// A float (or integer) in `min..=max`.
    F64 {
        /// Smallest accepted value.
        min: f64,
        /// Largest accepted value.
        max: f64,
    },
    /// One of the listed strings.
    Choice(&'static [&'static str]),
}

impl fmt::Display for KeyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyKind::Duration => f.write_str("duration"),
            KeyKind::Bool => f.write_str("bool"),
            KeyKind::U64 { min, max: u64::MAX } => write!(f, "integer >= {min}"),
            KeyKind::U64 { min, max } => write!(f, "integer {min}..={max}"),
            KeyKind::F64 { min, max } => write!(f, "float {min}..={max}"),
            KeyKind::Choice(choices) => f.write_str(&choices.join(" | ")),
        }
    }
}

/// One key a design accepts in its table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KeySpec {
    /// The key as written in the scenario file.
    pub name: &'static str,
    /// Its type and bounds.
    pub kind: KeyKind,
    /// The default, written as it would be in TOML (`"\"10s\""`, `"true"`,
    /// `"1"`); `None` makes the key required.
    pub default: Option<&'static str>,
    /// One line for `fencesim designs`.
    pub doc: &'static str,
}

/// A design's name, role, one-line summary and keys.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DesignInfo {
    /// The value of `design = "…"`.
    pub name: &'static str,
    /// Lock service or storage.
    pub role: Role,
    /// One line for `fencesim designs`.
    pub summary: &'static str,
    /// Keys its table takes besides `design`, in documentation order.
    pub keys: &'static [KeySpec],
}

impl DesignInfo {
    /// The key named `name`, if the design takes it.
    pub fn key(&self, name: &str) -> Option<&KeySpec> {
        self.keys.iter().find(|key| key.name == name)
    }
}

/// Lock service: a TTL lease with optional fencing tokens.
pub const LEASE: DesignInfo = DesignInfo {
    name: "lease",
    role: Role::Lock,
    summary: "single server TTL lease, optionally handing out fencing tokens",
    keys: &[
        KeySpec {
            name: "ttl",
            kind: KeyKind::Duration,
            default: Some("\"10s\""),
            doc: "how long a grant lasts on the lock's clock",
        },
        KeySpec {
            name: "tokens",
            kind: KeyKind::Bool,
            default: Some("true"),
            doc: "hand out fencing tokens with each grant",
        },
        KeySpec {
            name: "first_token",
            kind: KeyKind::U64 {
                min: 0,
                max: u64::MAX,
            },
            default: Some("1"),
            doc: "the token of the first grant",
        },
        KeySpec {
            name: "durable",
            kind: KeyKind::Bool,
            default: Some("true"),
            doc: "does the token counter survive a crash",
        },
    ],
};

/// Lock service: ZooKeeper's lock recipe (sessions, ephemeral sequential znodes).
pub const ZOOKEEPER: DesignInfo = DesignInfo {
    name: "zookeeper",
    role: Role::Lock,
    summary: "ZooKeeper lock recipe: sessions kept by heartbeats, ephemeral sequential znodes, zxid as token",
    keys: &[
        KeySpec {
            name: "ttl",
            kind: KeyKind::Duration,
            default: Some("\"10s\""),
            doc: "session timeout on the server's clock",
        },
        KeySpec {
            name: "tokens",
            kind: KeyKind::Bool,
            default: Some("true"),
            doc: "grants carry the lock node's zxid as a fencing token",
        },
        KeySpec {
            name: "heartbeat",
            kind: KeyKind::Duration,
            default: Some("\"0s\""),
            doc: "client heartbeat interval; 0s means ttl / 3",
        },
    ],
};

/// Lock service: Chubby's lock with sequencers and lock-delay.
pub const CHUBBY: DesignInfo = DesignInfo {
    name: "chubby",
    role: Role::Lock,
    summary: "Chubby lock: sessions kept by keep-alives, sequencer generation numbers, lock-delay",
    keys: &[
        KeySpec {
            name: "ttl",
            kind: KeyKind::Duration,
            default: Some("\"10s\""),
            doc: "session lease on the server's clock",
        },
        KeySpec {
            name: "tokens",
            kind: KeyKind::Bool,
            default: Some("true"),
            doc: "grants carry the lock's generation number (sequencer)",
        },
        KeySpec {
            name: "lock_delay",
            kind: KeyKind::Duration,
            default: Some("\"0s\""),
            doc: "after a holder's session is lost, nobody gets the lock for this long",
        },
        KeySpec {
            name: "heartbeat",
            kind: KeyKind::Duration,
            default: Some("\"0s\""),
            doc: "client keep-alive interval; 0s means ttl / 3",
        },
    ],
};

/// Lock service: Hazelcast's FencedLock on CP sessions.
pub const HAZELCAST: DesignInfo = DesignInfo {
    name: "hazelcast",
    role: Role::Lock,
    summary: "Hazelcast FencedLock on CP sessions: reentrant, fence grows per free-to-acquired transition",
    keys: &[
        KeySpec {
            name: "ttl",
            kind: KeyKind::Duration,
            default: Some("\"10s\""),
            doc: "CP session TTL on the server's clock",
        },
        KeySpec {
            name: "tokens",
            kind: KeyKind::Bool,
            default: Some("true"),
            doc: "grants carry the fence (Hazelcast always has one)",
        },
        KeySpec {
            name: "heartbeat",
            kind: KeyKind::Duration,
            default: Some("\"0s\""),
            doc: "CP session heartbeat interval; 0s means ttl / 5",
        },
    ],
};

/// Storage: no check at all, the baseline that shows why fencing matters.
pub const UNCHECKED: DesignInfo = DesignInfo {
    name: "unchecked",
    role: Role::Storage,
    summary: "accepts every write",
    keys: &[],
};

/// Storage: rejects writes whose token is below the highest seen.
pub const FENCED: DesignInfo = DesignInfo {
    name: "fenced",
    role: Role::Storage,
    summary: "rejects a write whose token is lower than the highest it has seen",
    keys: &[KeySpec {
        name: "durable",
        kind: KeyKind::Bool,
        default: Some("true"),
        doc: "does the highest token survive a crash",
    }],
};

/// The designs a scenario may name: their metadata, and how to build them.
#[derive(Clone)]
pub struct Registry {
    designs: Vec<DesignInfo>,
    locks: Vec<Arc<dyn LockDesign>>,
    storages: Vec<Arc<dyn StorageDesign>>,
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("designs", &self.designs)
            .finish_non_exhaustive()
    }
}

impl Registry {
    /// A registry with no designs; see [`Registry::builtin`] for the bundled ones.
    pub fn empty() -> Registry {
        Registry {
            designs: Vec::new(),
            locks: Vec::new(),
            storages: Vec::new(),
        }
    }

    /// The bundled designs, in the order `fencesim designs` lists them.
    pub fn builtin() -> Registry {
        let mut registry = Registry::empty();
        registry.add_lock(crate::design::lease::Lease);
        registry.add_lock(crate::design::zookeeper::ZooKeeper);
        registry.add_lock(crate::design::chubby::Chubby);
        registry.add_lock(crate::design::hazelcast::Hazelcast);
        registry.add_storage(crate::design::storage::UncheckedDesign);
        registry.add_storage(crate::design::storage::FencedDesign);
        registry
    }

    /// Adds a lock design that scenarios can name and runs can build.
    ///
    /// # Panics
    /// As [`Registry::add`].
    pub fn add_lock(&mut self, design: impl LockDesign) {
        let info = design.info();
        assert_eq!(
            info.role,
            Role::Lock,
            "design `{}` is not a lock",
            info.name
        );
        self.add(info);
        self.locks.push(Arc::new(design));
    }

    /// Adds a storage design that scenarios can name and runs can build.
    ///
    /// # Panics
    /// As [`Registry::add`].
    pub fn add_storage(&mut self, design: impl StorageDesign) {
        let info = design.info();
        assert_eq!(
            info.role,
            Role::Storage,
            "design `{}` is not a storage",
            info.name
        );
        self.add(info);
        self.storages.push(Arc::new(design));
    }

    /// The lock design called `name`, if one was added with
    /// [`Registry::add_lock`].
    pub fn lock(&self, name: &str) -> Option<Arc<dyn LockDesign>> {
        self.locks.iter().find(|d| d.info().name == name).cloned()
    }

    /// The storage design called `name`, if one was added with
    /// [`Registry::add_storage`].
    pub fn storage(&self, name: &str) -> Option<Arc<dyn StorageDesign>> {
        self.storages
            .iter()
            .find(|d| d.info().name == name)
            .cloned()
    }

    /// Adds a design's metadata only: scenarios can name it, but runs need a
    /// builder ([`Registry::add_lock`], [`Registry::add_storage`]).
    ///
    /// # Panics
    /// If a design with the same name and role is already registered, if a
    /// key is named `design` or listed twice, or if a key's default does not
    /// satisfy its own kind: all mistakes in the program, not in a scenario
    /// file, so they fail at startup rather than when a file is loaded.
    pub fn add(&mut self, info: DesignInfo) {
        assert!(
            self.get(info.role, info.name).is_none(),
            "design `{}` is already registered as a {}",
            info.name,
            info.role
        );
        for (i, key) in info.keys.iter().enumerate() {
            assert!(
                key.name != "design" && info.keys[..i].iter().all(|k| k.name != key.name),
                "design `{}`: key `{}` is reserved or listed twice",
                info.name,
                key.name
            );
            if let Err(message) = crate::scenario::check_default(key) {
                panic!(
                    "design `{}`: default of key `{}`: {message}",
                    info.name, key.name
                );
            }
        }
        self.designs.push(info);
    }

    /// The design called `name` in `role`.
    pub fn get(&self, role: Role, name: &str) -> Option<&DesignInfo> {
        self.designs
            .iter()
            .find(|d| d.role == role && d.name == name)
    }

    /// Every design, in the order they were added.
    pub fn designs(&self) -> &[DesignInfo] {
        &self.designs
    }

    /// The names of the designs in `role`, in the order they were added.
    pub fn names(&self, role: Role) -> Vec<&'static str> {
        self.designs
            .iter()
            .filter(|d| d.role == role)
            .map(|d| d.name)
            .collect()
    }
}

impl Default for Registry {
    fn default() -> Self {
        Registry::builtin()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_designs_are_listed_by_role_in_order() {
        let registry = Registry::builtin();
        assert_eq!(
            registry.names(Role::Lock),
            ["lease", "zookeeper", "chubby", "hazelcast"]
        );
        assert_eq!(registry.names(Role::Storage), ["unchecked", "fenced"]);
    }

    #[test]
    #[should_panic(expected = "already registered")]
    fn adding_a_duplicate_design_panics() {
        Registry::builtin().add(FENCED);
    }

    #[test]
    fn the_same_name_may_serve_two_roles() {
        let mut registry = Registry::builtin();
        registry.add(DesignInfo {
            role: Role::Lock,
            ..FENCED
        });
        assert!(registry.get(Role::Lock, "fenced").is_some());
    }

    #[test]
    #[should_panic(expected = "default of key `ttl`")]
    fn a_default_that_breaks_its_kind_panics() {
        let keys: &'static [KeySpec] = &[KeySpec {
            name: "ttl",
            kind: KeyKind::Duration,
            default: Some("10"),
            doc: "",
        }];
        Registry::empty().add(DesignInfo {
            name: "x",
            role: Role::Lock,
            summary: "",
            keys,
        });
    }
}
