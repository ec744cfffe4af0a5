//! What designs exist and which scenario keys each one takes.
//!
//! Each design declares its keys next to its code (`lease.rs` holds
//! [`LEASE`], the `lease` design's name, summary and keys, each with its
//! kind, bounds and typed default); the [`Registry`] collects the designs a
//! program knows. The scenario loader validates `[lock]` and `[storage]`
//! tables against it and fills in defaults; `fencesim designs` prints it. A
//! user's own design registers the same way ([`Registry::add_lock`]) and gets
//! the same validation and documentation as a bundled one.
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

pub use crate::design::chubby::CHUBBY;
pub use crate::design::client::CLIENT_KEYS;
use crate::design::config::DesignConfig;
pub use crate::design::etcd::ETCD;
pub use crate::design::hazelcast::HAZELCAST;
pub use crate::design::lease::LEASE;
use crate::design::params::{ParamValue, Params};
pub use crate::design::redis::REDIS;
pub use crate::design::redlock::REDLOCK;
#[cfg(feature = "sql")]
pub use crate::design::sql::SQL;
pub use crate::design::storage::{CAS, FENCED, UNCHECKED};
pub use crate::design::zookeeper::ZOOKEEPER;
use crate::design::{DynLockDesign, DynStorageDesign, LockDesign, StorageDesign};

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

impl KeyKind {
    /// Whether `value` is of this kind and within its bounds; if not, why
    /// (`"2ms is out of range: expected 10ms..=24h"`). A duration's `below`
    /// relation involves another key and is checked by the loader.
    pub fn check(&self, value: &ParamValue) -> Result<(), String> {
        match (*self, value) {
            (KeyKind::Duration, ParamValue::Duration(d)) if *d <= MAX_DURATION => Ok(()),
            (KeyKind::Duration, ParamValue::Duration(d)) => Err(format!(
                "{} is out of range: expected at most {}",
                show_duration(*d),
                show_duration(MAX_DURATION)
            )),
            (KeyKind::DurationIn { min, max, zero, .. }, ParamValue::Duration(d)) => {
                if (d.is_zero() && zero.is_some()) || (min..=max).contains(d) {
                    return Ok(());
                }
                let or_zero = zero.map_or(String::new(), |z| format!(", or 0s for {z}"));
                Err(format!(
                    "{} is out of range: expected {}..={}{or_zero}",
                    show_duration(*d),
                    show_duration(min),
                    show_duration(max)
                ))
            }
            (KeyKind::Bool, ParamValue::Bool(_)) => Ok(()),
            (KeyKind::U64 { min, max }, ParamValue::U64(n)) if (min..=max).contains(n) => Ok(()),
            (KeyKind::U64 { min, max }, ParamValue::U64(n)) => {
                Err(format!("{n} is out of range: expected {min}..={max}"))
            }
            (KeyKind::F64 { min, max }, ParamValue::F64(x)) if (min..=max).contains(x) => Ok(()),
            (KeyKind::F64 { min, max }, ParamValue::F64(x)) => {
                Err(format!("{x} is out of range: expected {min}..={max}"))
            }
            (KeyKind::Choice(choices), ParamValue::Str(s)) if choices.contains(&s.as_ref()) => {
                Ok(())
            }
            (KeyKind::Choice(choices), ParamValue::Str(s)) => Err(format!(
                "unknown value {:?}; expected one of: {}",
                s,
                choices.join(", ")
            )),
            (KeyKind::Text, ParamValue::Str(_)) => Ok(()),
            (kind, value) => Err(format!("{value:?} is not a {kind}")),
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
pub const TTL: KeyKind = KeyKind::DurationIn {
    min: MIN_TTL,
    max: MAX_DURATION,
    zero: None,
    below: None,
};

/// A client's heartbeat or keep-alive period: at least [`MIN_INTERVAL`],
/// shorter than the session it keeps alive; `0s` for the design's default,
/// which `zero` names (`"ttl / 3"`).
pub const fn heartbeat(zero: &'static str) -> KeyKind {
    KeyKind::DurationIn {
        min: MIN_INTERVAL,
        max: MAX_DURATION,
        zero: Some(zero),
        below: Some("ttl"),
    }
}

/// A duration from 0 to a day.
pub const ANY_DURATION: KeyKind = KeyKind::DurationIn {
    min: Duration::ZERO,
    max: MAX_DURATION,
    zero: None,
    below: None,
};

/// A timer that repeats or waits: [`MIN_INTERVAL`] to a day.
pub const INTERVAL: KeyKind = KeyKind::DurationIn {
    min: MIN_INTERVAL,
    max: MAX_DURATION,
    zero: None,
    below: None,
};

/// A first token, up to [`MAX_FIRST_TOKEN`].
pub const FIRST_TOKEN: KeyKind = KeyKind::U64 {
    min: 0,
    max: MAX_FIRST_TOKEN,
};

/// One key a design accepts in its table: declared in the design's own
/// file, in a `const` [`DesignInfo`].
///
/// ```
/// use std::time::Duration;
/// use fencesim::design::catalog::{KeySpec, TTL};
/// use fencesim::design::params::ParamValue;
///
/// const TTL_KEY: KeySpec = KeySpec {
///     name: "ttl",
///     kind: TTL,
///     default: Some(ParamValue::Duration(Duration::from_secs(10))),
///     doc: "how long a grant lasts on the lock's clock",
/// };
/// assert_eq!(TTL_KEY.default.unwrap().to_string(), "\"10s\"");
/// ```
///
/// A design writes none by hand: its
/// [`design_config!`](crate::design_config) struct makes them.
#[derive(Clone, Debug, PartialEq)]
pub struct KeySpec {
    /// The key as written in the scenario file.
    pub name: &'static str,
    /// Its type and bounds.
    pub kind: KeyKind,
    /// The default, typed (`ParamValue::Duration(Duration::from_secs(10))`,
    /// `ParamValue::Bool(true)`, `ParamValue::text("global")`); `None` makes the key
    /// required. It must satisfy the key's own kind ([`KeyKind::check`]);
    /// [`Registry::add`] refuses a design whose default does not.
    pub default: Option<ParamValue>,
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
    /// What a lock design's node is called (`lock` unless the design says,
    /// [`DesignInfo::on_node`]); with a `nodes` key above 1, its nodes are
    /// this name and a number (`lock1` … `lockN`). Scenario files name it
    /// in triggers, faults and links, and the reports show it.
    pub node: &'static str,
}

impl DesignInfo {
    /// A lock design's name, summary and keys (its config's
    /// [`DesignConfig::KEYS`]).
    pub const fn lock(name: &'static str, summary: &'static str, keys: &'static [KeySpec]) -> Self {
        DesignInfo {
            name,
            role: Role::Lock,
            summary,
            keys,
            node: "lock",
        }
    }

    /// A storage design's name, summary and keys.
    pub const fn storage(
        name: &'static str,
        summary: &'static str,
        keys: &'static [KeySpec],
    ) -> Self {
        DesignInfo {
            name,
            role: Role::Storage,
            summary,
            keys,
            node: "storage",
        }
    }

    /// This lock design with its node called `node` (`apiserver` for a
    /// Kubernetes API server) instead of `lock`.
    ///
    /// ```
    /// use fencesim::design::catalog::DesignInfo;
    /// const INFO: DesignInfo = DesignInfo::lock("k8s", "an API server", &[]).on_node("apiserver");
    /// assert_eq!(INFO.node, "apiserver");
    /// ```
    pub const fn on_node(self, node: &'static str) -> Self {
        DesignInfo { node, ..self }
    }

    /// The key named `name`, if the design takes it.
    pub fn key(&self, name: &str) -> Option<&KeySpec> {
        self.keys.iter().find(|key| key.name == name)
    }

    /// The declared default of every key that has one: what a table that
    /// sets nothing but `design` loads as, and what the design's typed
    /// config's `Default` is made of.
    pub fn defaults(&self) -> Params {
        Params::defaults(self.keys)
    }
}

/// What a `[lock]` or `[storage]` table's `design` resolved to in the
/// registry that loaded the scenario: the design a run builds, so that every
/// command runs exactly what was loaded. Compared and printed by role and
/// name.
#[derive(Clone)]
pub enum Resolved {
    /// A lock design added with [`Registry::add_lock`].
    Lock(Arc<dyn DynLockDesign>),
    /// A storage design added with [`Registry::add_storage`].
    Storage(Arc<dyn DynStorageDesign>),
    /// A design added as metadata only ([`Registry::add`]): a scenario naming
    /// it loads, but no run can build it.
    Unbuilt(DesignInfo),
}

impl Resolved {
    /// The design's name, role, summary and keys.
    pub fn info(&self) -> DesignInfo {
        match self {
            Resolved::Lock(design) => design.info(),
            Resolved::Storage(design) => design.info(),
            Resolved::Unbuilt(info) => *info,
        }
    }

    /// The lock design, if this is a buildable one.
    pub fn lock(&self) -> Option<&Arc<dyn DynLockDesign>> {
        match self {
            Resolved::Lock(design) => Some(design),
            _ => None,
        }
    }

    /// The storage design, if this is a buildable one.
    pub fn storage(&self) -> Option<&Arc<dyn DynStorageDesign>> {
        match self {
            Resolved::Storage(design) => Some(design),
            _ => None,
        }
    }
}

impl PartialEq for Resolved {
    fn eq(&self, other: &Resolved) -> bool {
        let (a, b) = (self.info(), other.info());
        (a.role, a.name) == (b.role, b.name)
    }
}

impl fmt::Debug for Resolved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self {
            Resolved::Lock(_) => "Lock",
            Resolved::Storage(_) => "Storage",
            Resolved::Unbuilt(_) => "Unbuilt",
        };
        f.debug_tuple(kind).field(&self.info().name).finish()
    }
}

/// The designs a scenario may name: their metadata, and how to build them.
#[derive(Clone)]
pub struct Registry {
    designs: Vec<DesignInfo>,
    locks: Vec<Arc<dyn DynLockDesign>>,
    storages: Vec<Arc<dyn DynStorageDesign>>,
    processes: Vec<ProcessDesign>,
}

/// What a client's process is made from: its settings (the `[[clients]]`
/// table's keys) and the names of the lock nodes.
pub type MakeProcess = dyn Fn(
        &crate::design::client::ClientConfig,
        &Params,
        &[String],
    ) -> crate::process::Process<crate::protocol::Msg>
    + Send
    + Sync;

/// A client process a scenario can name (`[[clients]] process = "NAME"`):
/// async code that runs on the client's node instead of the bundled client.
#[derive(Clone)]
pub struct ProcessDesign {
    /// The name scenarios give it.
    pub name: &'static str,
    /// One line on what it does.
    pub summary: &'static str,
    /// Makes the process of one client, from the client's settings, the
    /// values of its own keys and the lock's node names.
    pub make: Arc<MakeProcess>,
    /// Its own keys in a `[[clients]]` table, beside the client keys.
    pub keys: &'static [KeySpec],
    /// What it cannot do with a client's settings, said when a scenario
    /// is loaded (`None`: it takes any).
    pub refuses: fn(&crate::design::client::ClientConfig) -> Option<String>,
    /// The lock designs whose protocol it speaks (`None`: any), checked
    /// when a scenario is loaded; see [`Registry::process_speaks_to`].
    pub locks: Option<&'static [&'static str]>,
}

impl fmt::Debug for ProcessDesign {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProcessDesign")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl PartialEq for ProcessDesign {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
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
            processes: Vec::new(),
        }
    }

    /// The bundled designs, in the order `fencesim designs` lists them.
    ///
    /// Built (and its defaults checked) once per process; later calls clone
    /// it, which is cheap: runs build their worlds from it once per seed.
    pub fn builtin() -> Registry {
        Registry::bundled().clone()
    }

    /// The bundled registry itself, built once.
    fn bundled() -> &'static Registry {
        static BUILTIN: std::sync::OnceLock<Registry> = std::sync::OnceLock::new();
        BUILTIN.get_or_init(Registry::build_builtin)
    }

    /// Whether `resolved` is a design fencesim bundles (the very one
    /// [`Registry::builtin`] holds, which a registry built on it shares),
    /// not one a user added.
    pub fn is_bundled(resolved: &Resolved) -> bool {
        let builtin = Registry::bundled();
        match resolved {
            Resolved::Lock(d) => builtin.locks.iter().any(|b| Arc::ptr_eq(b, d)),
            Resolved::Storage(d) => builtin.storages.iter().any(|b| Arc::ptr_eq(b, d)),
            Resolved::Unbuilt(_) => false,
        }
    }

    /// Whether `process` is one fencesim bundles (`fencesim::process`'s
    /// clients), not one a user added.
    pub fn is_bundled_process(process: &ProcessDesign) -> bool {
        let builtin = Registry::bundled();
        builtin
            .processes
            .iter()
            .any(|b| Arc::ptr_eq(&b.make, &process.make))
    }

    fn build_builtin() -> Registry {
        let mut registry = Registry::empty();
        crate::design::add_bundled(&mut registry);
        crate::process::add_bundled(&mut registry);
        registry
    }

    /// Adds a client process that scenarios can name (`[[clients]] process
    /// = "NAME"`): `make` builds one client's process from its settings and
    /// the lock nodes' names.
    ///
    /// # Panics
    /// If a process of that name is already registered.
    pub fn add_process(
        &mut self,
        name: &'static str,
        summary: &'static str,
        make: impl Fn(
                &crate::design::client::ClientConfig,
                &[String],
            ) -> crate::process::Process<crate::protocol::Msg>
            + Send
            + Sync
            + 'static,
    ) {
        self.add_process_with(name, summary, move |config, _: &(), locks| {
            make(config, locks)
        });
    }

    /// [`Registry::add_process`] for a process with keys of its own: the
    /// fields of `C` (a [`design_config!`](crate::design_config) struct) are
    /// keys of the `[[clients]]` tables that name it, with their kinds,
    /// bounds and defaults checked when the scenario loads, written back by
    /// `shrink`, and handed to `make` typed.
    ///
    /// # Panics
    /// If a process called `name` was added already, or one of `C`'s keys
    /// is a client key.
    pub fn add_process_with<C: DesignConfig>(
        &mut self,
        name: &'static str,
        summary: &'static str,
        make: impl Fn(
                &crate::design::client::ClientConfig,
                &C,
                &[String],
            ) -> crate::process::Process<crate::protocol::Msg>
            + Send
            + Sync
            + 'static,
    ) {
        assert!(
            self.process(name).is_none(),
            "process `{name}` is registered twice"
        );
        for key in C::KEYS {
            assert!(
                !crate::design::client::CLIENT_KEYS
                    .iter()
                    .any(|k| k.name == key.name)
                    && !matches!(key.name, "name" | "process"),
                "process `{name}`'s key `{}` is a client key",
                key.name
            );
        }
        self.processes.push(ProcessDesign {
            name,
            summary,
            make: Arc::new(move |config, params, locks| {
                make(config, &C::from_params(params), locks)
            }),
            keys: C::KEYS,
            refuses: |_| None,
            locks: None,
        });
    }

    /// Says what process `name` cannot do with a client's settings: a
    /// scenario that sets them is refused when it is loaded, at its
    /// `process` key.
    ///
    /// # Panics
    /// If no process called `name` was added.
    pub fn process_refuses(
        &mut self,
        name: &str,
        refuses: fn(&crate::design::client::ClientConfig) -> Option<String>,
    ) {
        self.process_mut(name).refuses = refuses;
    }

    fn process_mut(&mut self, name: &str) -> &mut ProcessDesign {
        self.processes
            .iter_mut()
            .find(|p| p.name == name)
            .unwrap_or_else(|| panic!("no process `{name}`"))
    }

    /// Says that process `name` speaks only to the lock designs `locks`
    /// (its client is one design's, as an etcd client is): a scenario that
    /// gives it another lock is refused when it is loaded, and `compare`
    /// shows that design's row as one it cannot run.
    ///
    /// # Panics
    /// If no process called `name` was added.
    pub fn process_speaks_to(&mut self, name: &str, locks: &'static [&'static str]) {
        self.process_mut(name).locks = Some(locks);
    }

    /// [`Registry::add_process`] for a process that takes only some client
    /// settings: `refuses` says what is wrong with the others, and a
    /// scenario that sets them is refused when it is loaded.
    ///
    /// # Panics
    /// As [`Registry::add_process`].
    pub fn add_process_refusing(
        &mut self,
        name: &'static str,
        summary: &'static str,
        refuses: fn(&crate::design::client::ClientConfig) -> Option<String>,
        make: impl Fn(
                &crate::design::client::ClientConfig,
                &[String],
            ) -> crate::process::Process<crate::protocol::Msg>
            + Send
            + Sync
            + 'static,
    ) {
        self.add_process(name, summary, make);
        self.process_refuses(name, refuses);
    }

    /// The client process called `name`, if one was added.
    pub fn process(&self, name: &str) -> Option<&ProcessDesign> {
        self.processes.iter().find(|p| p.name == name)
    }

    /// Every client process, in the order they were added.
    pub fn processes(&self) -> &[ProcessDesign] {
        &self.processes
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
    pub fn lock(&self, name: &str) -> Option<Arc<dyn DynLockDesign>> {
        self.locks.iter().find(|d| d.info().name == name).cloned()
    }

    /// The storage design called `name`, if one was added with
    /// [`Registry::add_storage`].
    pub fn storage(&self, name: &str) -> Option<Arc<dyn DynStorageDesign>> {
        self.storages
            .iter()
            .find(|d| d.info().name == name)
            .cloned()
    }

    /// The design called `name` in `role`, as a scenario that names it
    /// resolves: buildable if it was added with [`Registry::add_lock`] or
    /// [`Registry::add_storage`], else its metadata alone.
    pub fn resolve(&self, role: Role, name: &str) -> Option<Resolved> {
        let built = match role {
            Role::Lock => self.lock(name).map(Resolved::Lock),
            Role::Storage => self.storage(name).map(Resolved::Storage),
        };
        built.or_else(|| self.get(role, name).copied().map(Resolved::Unbuilt))
    }

    /// Adds a design's metadata only: scenarios can name it, but runs need a
    /// builder ([`Registry::add_lock`], [`Registry::add_storage`]).
    ///
    /// # Panics
    /// If a design with the same name and role is already registered, if a
    /// lock design's node is not a well-formed name or is `storage`, if a
    /// key is named `design` or listed twice, if a key's default does not
    /// satisfy its own kind, or if a duration's bounds are out of order or
    /// name as `below` a key that is not one of the design's durations: all
    /// mistakes in the program, not in a scenario file, so they fail at
    /// startup rather than when a file is loaded.
    pub fn add(&mut self, info: DesignInfo) {
        if info.role == Role::Lock {
            if let Some(problem) = crate::scenario::node_name_problem(info.node, "lock node") {
                panic!("design `{}`: {problem}", info.name);
            }
        }
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
            if let Some(Err(message)) = key.default.as_ref().map(|d| key.kind.check(d)) {
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

    /// The bundled designs keep their order (a new one may come anywhere
    /// between them): `fencesim designs`, `compare` and the docs list them so.
    #[test]
    fn builtin_designs_are_listed_by_role_in_order() {
        let registry = Registry::builtin();
        let in_order = |role, expected: &[&str]| {
            let names = registry.names(role);
            let kept: Vec<&str> = names.into_iter().filter(|n| expected.contains(n)).collect();
            assert_eq!(kept, expected, "{role} designs");
        };
        in_order(
            Role::Lock,
            &[
                "lease",
                "redis",
                "redlock",
                "etcd",
                "zookeeper",
                "chubby",
                "hazelcast",
                "postgres",
                "epoch",
            ],
        );
        in_order(Role::Storage, &["unchecked", "fenced", "cas", "sql"]);
    }

    #[test]
    fn every_declared_default_satisfies_its_kind() {
        let registry = Registry::builtin();
        let designs = registry.designs().iter().map(|d| (d.name, d.keys));
        for (design, keys) in designs.chain([("[[clients]]", CLIENT_KEYS)]) {
            for key in keys {
                let default = key
                    .default
                    .as_ref()
                    .unwrap_or_else(|| panic!("{design}: key `{}` has no default", key.name));
                if let Err(e) = key.kind.check(default) {
                    panic!("{design}: default of `{}`: {e}", key.name);
                }
            }
        }
    }

    #[test]
    fn a_design_loads_its_declared_defaults() {
        let lease = LEASE.defaults();
        assert_eq!(lease.duration("ttl"), Duration::from_secs(10));
        assert!(lease.bool("tokens"));
        assert_eq!(FENCED.defaults().str("scope"), "global");
        assert_eq!(REDLOCK.defaults().f64("drift_factor"), 0.01);
    }

    #[test]
    fn kinds_check_type_and_bounds() {
        let d = |ms| ParamValue::Duration(Duration::from_millis(ms));
        assert_eq!(TTL.check(&d(10)), Ok(()));
        assert_eq!(
            TTL.check(&d(2)).unwrap_err(),
            "2ms is out of range: expected 10ms..=24h"
        );
        assert_eq!(heartbeat("ttl / 3").check(&d(0)), Ok(()));
        assert!(TTL.check(&ParamValue::Bool(true)).is_err());
        let scope = FENCED.key("scope").unwrap().kind;
        assert!(scope.check(&ParamValue::Str("key".into())).is_ok());
        assert!(scope.check(&ParamValue::Str("row".into())).is_err());
        assert!(FIRST_TOKEN
            .check(&ParamValue::U64(MAX_FIRST_TOKEN + 1))
            .is_err());
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
            default: Some(ParamValue::Duration(Duration::ZERO)),
            doc: "",
        }];
        Registry::empty().add(DesignInfo::lock("x", "", KEYS));
    }

    #[test]
    #[should_panic(expected = "lock node name `storage` is the storage's")]
    fn a_lock_node_called_storage_panics() {
        Registry::empty().add(DesignInfo::lock("x", "", &[]).on_node("storage"));
    }

    #[test]
    #[should_panic(expected = "already registered")]
    fn adding_a_duplicate_design_panics() {
        Registry::builtin().add(FENCED);
    }

    #[test]
    fn the_same_name_may_serve_two_roles() {
        let mut registry = Registry::builtin();
        registry.add(DesignInfo::lock(FENCED.name, FENCED.summary, FENCED.keys));
        assert!(registry.get(Role::Lock, "fenced").is_some());
    }

    #[test]
    #[should_panic(expected = "default of key `ttl`")]
    fn a_default_that_breaks_its_kind_panics() {
        let keys: &'static [KeySpec] = &[KeySpec {
            name: "ttl",
            kind: KeyKind::Duration,
            default: Some(ParamValue::U64(10)),
            doc: "",
        }];
        Registry::empty().add(DesignInfo::lock("x", "", keys));
    }
}
