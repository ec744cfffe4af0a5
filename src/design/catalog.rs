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
use std::time::Duration;

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
    /// A humantime string in `min..=max`, checked when a scenario is loaded.
    ///
    /// With `zero`, `"0s"` is accepted as well and stands for a value the
    /// design derives (`zero` names it, as in `"ttl / 3"`). With `below`, the
    /// duration must be shorter than the duration key of that name in the
    /// same table (a heartbeat shorter than its session), defaults included.
    DurationIn {
        /// Shortest accepted value (besides `0s` with `zero`).
        min: Duration,
        /// Longest accepted value, at most [`MAX_DURATION`].
        max: Duration,
        /// What `0s` means, if it is accepted.
        zero: Option<&'static str>,
        /// The key this one must stay below.
        below: Option<&'static str>,
    },
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
    /// Any string (a design may check it further with
    /// [`StorageDesign::validate`]).
    Text,
}

impl fmt::Display for KeyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyKind::Duration => f.write_str("duration"),
            KeyKind::DurationIn {
                min,
                max,
                zero,
                below,
            } => {
                f.write_str("duration ")?;
                if zero.is_some() {
                    f.write_str("0s | ")?;
                }
                match below {
                    Some(key) => write!(f, "{}..<{key}", show_duration(*min)),
                    None => write!(f, "{}..={}", show_duration(*min), show_duration(*max)),
                }
            }
            KeyKind::Bool => f.write_str("bool"),
            KeyKind::U64 { min, max: u64::MAX } => write!(f, "integer >= {min}"),
            KeyKind::U64 { min, max } => write!(f, "integer {min}..={}", show_count(*max)),
            KeyKind::F64 { min, max } => write!(f, "float {min}..={max}"),
            KeyKind::Choice(choices) => f.write_str(&choices.join(" | ")),
            KeyKind::Text => f.write_str("string"),
        }
    }
}

/// The longest duration any key takes: longer ones are typos ("10000h")
/// rather than scenarios, and would overflow the simulator's clocks.
pub const MAX_DURATION: Duration = Duration::from_secs(24 * 60 * 60);

/// The shortest `ttl` of the built-in lock designs. madsim's timers fire on
/// a 1 ms grid, so a shorter lease is mostly rounding; and the derived
/// heartbeats (ttl / 3, ttl / 5) stay at 2 ms or more.
pub const MIN_TTL: Duration = Duration::from_millis(10);

/// The shortest period of anything that repeats (heartbeat, keep-alive,
/// retry) or waits (timeouts): madsim's timer resolution. A sub-millisecond
/// timer would fire late or, repeated, fill the journal with nothing.
pub const MIN_INTERVAL: Duration = Duration::from_millis(1);

/// The largest `first_token`. A run hands out at most one token per journal
/// event, so with at most a million events tokens stay far below
/// `i64::MAX` (9.2 × 10^18), the largest integer SQLite and most stores
/// keep; a token that would not fit is refused here rather than wrapped.
pub const MAX_FIRST_TOKEN: u64 = 1_000_000_000_000_000_000;

/// A duration as short as it can be written exactly: `10ms`, `24h`, `1500us`.
pub fn show_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    let units: [(u128, &str); 5] = [
        (3_600_000_000_000, "h"),
        (60_000_000_000, "m"),
        (1_000_000_000, "s"),
        (1_000_000, "ms"),
        (1_000, "us"),
    ];
    if ns == 0 {
        return "0s".into();
    }
    for (size, unit) in units {
        if ns % size == 0 {
            return format!("{}{unit}", ns / size);
        }
    }
    format!("{ns}ns")
}

/// `10^18` for a large power of ten, else the number.
fn show_count(n: u64) -> String {
    match n.checked_ilog10() {
        Some(exp) if exp >= 9 && 10u64.pow(exp) == n => format!("10^{exp}"),
        _ => n.to_string(),
    }
}

/// A lease, session or key TTL: [`MIN_TTL`] to a day.
const TTL: KeyKind = KeyKind::DurationIn {
    min: MIN_TTL,
    max: MAX_DURATION,
    zero: None,
    below: None,
};

/// A client's heartbeat or keep-alive period: at least [`MIN_INTERVAL`],
/// shorter than the session it keeps alive; `0s` for the design's default.
const fn heartbeat(zero: &'static str) -> KeyKind {
    KeyKind::DurationIn {
        min: MIN_INTERVAL,
        max: MAX_DURATION,
        zero: Some(zero),
        below: Some("ttl"),
    }
}

/// A duration from 0 to a day.
const ANY_DURATION: KeyKind = KeyKind::DurationIn {
    min: Duration::ZERO,
    max: MAX_DURATION,
    zero: None,
    below: None,
};

/// A timer that repeats or waits: [`MIN_INTERVAL`] to a day.
const INTERVAL: KeyKind = KeyKind::DurationIn {
    min: MIN_INTERVAL,
    max: MAX_DURATION,
    zero: None,
    below: None,
};

/// A first token, up to [`MAX_FIRST_TOKEN`].
const FIRST_TOKEN: KeyKind = KeyKind::U64 {
    min: 0,
    max: MAX_FIRST_TOKEN,
};

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
            kind: TTL,
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
            kind: FIRST_TOKEN,
            default: Some("1"),
            doc: "the token of the first grant (tokens stay within a signed 64-bit integer)",
        },
        KeySpec {
            name: "durable",
            kind: KeyKind::Bool,
            default: Some("true"),
            doc: "does the token counter survive a crash",
        },
    ],
};

/// Lock service: one Redis node, `SET NX PX` on its wall clock.
pub const REDIS: DesignInfo = DesignInfo {
    name: "redis",
    role: Role::Lock,
    summary: "one Redis node: SET NX PX with the key's expiry on the node's wall clock",
    keys: &[
        KeySpec {
            name: "ttl",
            kind: TTL,
            default: Some("\"10s\""),
            doc: "the key's PX, on the node's wall clock",
        },
        KeySpec {
            name: "tokens",
            kind: KeyKind::Bool,
            default: Some("false"),
            doc: "take a token from an INCR counter with each grant",
        },
        KeySpec {
            name: "first_token",
            kind: FIRST_TOKEN,
            default: Some("1"),
            doc: "the counter's first token (tokens stay within a signed 64-bit integer)",
        },
        KeySpec {
            name: "durable",
            kind: KeyKind::Bool,
            default: Some("true"),
            doc: "persistence: do the key and the counter survive a crash",
        },
    ],
};

/// Lock service: Redlock over N independent Redis nodes.
pub const REDLOCK: DesignInfo = DesignInfo {
    name: "redlock",
    role: Role::Lock,
    summary: "Redlock: a majority of N Redis nodes, validity = ttl - elapsed - drift",
    keys: &[
        KeySpec {
            name: "nodes",
            kind: KeyKind::U64 { min: 1, max: 15 },
            default: Some("5"),
            doc: "how many Redis nodes (lock1 … lockN)",
        },
        KeySpec {
            name: "ttl",
            kind: TTL,
            default: Some("\"10s\""),
            doc: "the keys' PX, on each node's wall clock",
        },
        KeySpec {
            name: "timeout",
            kind: KeyKind::DurationIn {
                min: MIN_INTERVAL,
                max: MAX_DURATION,
                zero: None,
                below: Some("ttl"),
            },
            default: Some("\"50ms\""),
            doc: "how long the client waits for the nodes' answers (Redlock: much less than ttl)",
        },
        KeySpec {
            name: "drift_factor",
            kind: KeyKind::F64 { min: 0.0, max: 0.5 },
            default: Some("0.01"),
            doc: "clock drift allowed per unit of ttl (plus 2 ms)",
        },
        KeySpec {
            name: "tokens",
            kind: KeyKind::Bool,
            default: Some("false"),
            doc: "INCR counter per node; the token is the majority's largest (not a fence)",
        },
        KeySpec {
            name: "durable",
            kind: KeyKind::Bool,
            default: Some("true"),
            doc: "persistence: do each node's key and counter survive a crash",
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
    keys: &[
        KeySpec {
            name: "durable",
            kind: KeyKind::Bool,
            default: Some("true"),
            doc: "does the highest token survive a crash",
        },
        KeySpec {
            name: "scope",
            kind: KeyKind::Choice(&["global", "key"]),
            default: Some("\"global\""),
            doc: "one highest token for the whole store, or one per key",
        },
    ],
};

/// Storage: a conditional write on the key's version (S3 If-Match).
pub const CAS: DesignInfo = DesignInfo {
    name: "cas",
    role: Role::Storage,
    summary: "applies a write only if the key is still at the version the writer read \
              (S3 If-Match, GCS ifGenerationMatch); blind writes pass",
    keys: &[],
};

/// Storage: a real SQLite running the user's conditional UPDATE.
pub const SQL: DesignInfo = DesignInfo {
    name: "sql",
    role: Role::Storage,
    summary: "an in-memory SQLite table kv(key, value, lock_token) written by your own \
              UPDATE; a write is accepted when it changes a row",
    keys: &[KeySpec {
        name: "update",
        kind: KeyKind::Text,
        default: Some(
            "\"UPDATE kv SET value = :value, lock_token = :token \
             WHERE key = :key AND lock_token <= :token\"",
        ),
        doc: "the statement run for each write, with :key, :value, :token, :version",
    }],
};

/// Lock service: an etcd lease with a lock key; the key's revision is the token.
pub const ETCD: DesignInfo = DesignInfo {
    name: "etcd",
    role: Role::Lock,
    summary: "etcd concurrency.Mutex: a lease kept alive by the client, a lock key \
              on it; the lowest create revision holds, and is the token",
    keys: &[
        KeySpec {
            name: "ttl",
            kind: TTL,
            default: Some("\"10s\""),
            doc: "the lease's time to live on the server's clock",
        },
        KeySpec {
            name: "keepalive",
            kind: heartbeat("ttl / 3"),
            default: Some("\"0s\""),
            doc: "how often the client refreshes its lease; 0s means ttl/3",
        },
        KeySpec {
            name: "tokens",
            kind: KeyKind::Bool,
            default: Some("true"),
            doc: "hand out the lock key's create revision as a fencing token",
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
            kind: TTL,
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
            kind: heartbeat("ttl / 3"),
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
            kind: TTL,
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
            kind: KeyKind::DurationIn {
                min: Duration::ZERO,
                max: Duration::from_secs(60),
                zero: None,
                below: None,
            },
            default: Some("\"0s\""),
            doc: "after a holder's session is lost, nobody gets the lock for this long \
                  (Chubby caps it at one minute)",
        },
        KeySpec {
            name: "heartbeat",
            kind: heartbeat("ttl / 3"),
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
            kind: TTL,
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
            kind: heartbeat("ttl / 5"),
            default: Some("\"0s\""),
            doc: "CP session heartbeat interval; 0s means ttl / 5",
        },
    ],
};

/// The keys of a `[[clients]]` table besides its required `name`, in
/// documentation order: the one list the scenario loader validates against
/// (and takes defaults from) and `fencesim designs` prints.
pub const CLIENT_KEYS: &[KeySpec] = &[
    KeySpec {
        name: "start",
        kind: ANY_DURATION,
        default: Some("\"0s\""),
        doc: "when it first tries to acquire, on its own clock",
    },
    KeySpec {
        name: "rounds",
        kind: KeyKind::U64 {
            min: 1,
            max: 100_000,
        },
        default: Some("1"),
        doc: "acquire → work → write → release cycles",
    },
    KeySpec {
        name: "work",
        kind: ANY_DURATION,
        default: Some("\"1s\""),
        doc: "time in the critical section before the write",
    },
    KeySpec {
        name: "workload",
        kind: KeyKind::Choice(&["write", "increment"]),
        default: Some("\"write\""),
        doc: "write: a blind write; increment: read, add one, write back",
    },
    KeySpec {
        name: "retry",
        kind: INTERVAL,
        default: Some("\"500ms\""),
        doc: "wait after a denial before asking again",
    },
    KeySpec {
        name: "timeout",
        kind: INTERVAL,
        default: Some("\"5s\""),
        doc: "how long to wait for any answer",
    },
    KeySpec {
        name: "check_lease",
        kind: KeyKind::Bool,
        default: Some("false"),
        doc: "check the lease on its own clock before writing (check-then-act)",
    },
    KeySpec {
        name: "renew",
        kind: KeyKind::Bool,
        default: Some("false"),
        doc: "renew the lease every half ttl while holding it (keep-alive)",
    },
    KeySpec {
        name: "fence_on_acquire",
        kind: KeyKind::Bool,
        default: Some("false"),
        doc: "send a token-only write right after acquiring",
    },
];

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
    ///
    /// Built (and its defaults checked) once per process; later calls clone
    /// it, which is cheap: runs build their worlds from it once per seed.
    pub fn builtin() -> Registry {
        static BUILTIN: std::sync::OnceLock<Registry> = std::sync::OnceLock::new();
        BUILTIN.get_or_init(Registry::build_builtin).clone()
    }

    fn build_builtin() -> Registry {
        let mut registry = Registry::empty();
        registry.add_lock(crate::design::lease::Lease);
        registry.add_lock(crate::design::redis::Redis);
        registry.add_lock(crate::design::redlock::Redlock);
        registry.add_lock(crate::design::etcd::Etcd);
        registry.add_lock(crate::design::zookeeper::ZooKeeper);
        registry.add_lock(crate::design::chubby::Chubby);
        registry.add_lock(crate::design::hazelcast::Hazelcast);
        registry.add_storage(crate::design::storage::UncheckedDesign);
        registry.add_storage(crate::design::storage::FencedDesign);
        registry.add_storage(crate::design::storage::CasDesign);
        registry.add_storage(crate::design::sql::SqlDesign);
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
    /// key is named `design` or listed twice, if a key's default does not
    /// satisfy its own kind, or if a duration's bounds are out of order or
    /// name as `below` a key that is not one of the design's durations: all
    /// mistakes in the program, not in a scenario file, so they fail at
    /// startup rather than when a file is loaded.
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
            if let KeyKind::DurationIn {
                min, max, below, ..
            } = key.kind
            {
                assert!(
                    min <= max && max <= MAX_DURATION,
                    "design `{}`: key `{}` has bounds out of order",
                    info.name,
                    key.name
                );
                let other = below.map(|b| info.keys.iter().find(|k| k.name == b));
                assert!(
                    matches!(
                        other,
                        None | Some(Some(KeySpec {
                            kind: KeyKind::Duration | KeyKind::DurationIn { .. },
                            ..
                        }))
                    ),
                    "design `{}`: key `{}` must stay below {:?}, which is not one of its durations",
                    info.name,
                    key.name,
                    below
                );
            }
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
            [
                "lease",
                "redis",
                "redlock",
                "etcd",
                "zookeeper",
                "chubby",
                "hazelcast"
            ]
        );
        assert_eq!(
            registry.names(Role::Storage),
            ["unchecked", "fenced", "cas", "sql"]
        );
    }

    #[test]
    fn client_key_defaults_satisfy_their_kinds() {
        for key in CLIENT_KEYS {
            crate::scenario::check_default(key).unwrap();
            assert!(
                key.default.is_some(),
                "client key `{}` is optional",
                key.name
            );
        }
    }

    #[test]
    fn kinds_show_their_ranges() {
        let shown = |key: &str, design: &DesignInfo| design.key(key).unwrap().kind.to_string();
        assert_eq!(shown("ttl", &LEASE), "duration 10ms..=24h");
        assert_eq!(shown("heartbeat", &ZOOKEEPER), "duration 0s | 1ms..<ttl");
        assert_eq!(shown("lock_delay", &CHUBBY), "duration 0s..=1m");
        assert_eq!(shown("first_token", &REDIS), "integer 0..=10^18");
        assert_eq!(shown("nodes", &REDLOCK), "integer 1..=15");
        assert_eq!(show_duration(Duration::from_micros(1500)), "1500us");
        assert_eq!(show_duration(Duration::from_nanos(7)), "7ns");
    }

    #[test]
    #[should_panic(expected = "must stay below Some(\"ttl\")")]
    fn a_bound_on_a_key_the_design_lacks_panics() {
        const KEYS: &[KeySpec] = &[KeySpec {
            name: "heartbeat",
            kind: heartbeat("ttl / 3"),
            default: Some("\"0s\""),
            doc: "",
        }];
        Registry::empty().add(DesignInfo {
            name: "x",
            role: Role::Lock,
            summary: "",
            keys: KEYS,
        });
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
