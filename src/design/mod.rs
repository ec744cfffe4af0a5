//! Lock services, storages and clients, and the metadata that scenarios and
//! the CLI read about them.
//!
//! Designs are sans-IO state machines ([`sim::Actor`] over
//! [`crate::protocol::Msg`]): they read their node's clock from the context,
//! send messages and set timers through it, and emit journal events with
//! [`sim::emit!`] in the vocabulary of [`crate::events`]. The events the
//! oracle reads come from hosts, never by hand: a lock server answers
//! through its [`grants::Grants`] ledger (session designs through a
//! [`session_server::SessionServer`]), a storage is a
//! [`storage::StorageNode`].
//!
//! Each design owns its configuration, in its own file: a struct declared
//! with [`design_config!`](crate::design_config) whose fields are its keys
//! (kind, bounds, typed default, one line of documentation), from which
//! come the [`DesignInfo`]'s keys, the parser from the loaded [`Params`] and
//! a `Default` of the declared defaults ([`lease::LeaseConfig`]). This
//! layer knows nothing of scenario files: the loader in `scenario` reads a
//! table against the keys, and `fencesim designs` prints them.

pub mod catalog;
pub mod client;
pub mod config;
pub mod grants;
pub mod lock_client;
pub mod object_store;
pub mod params;
pub mod session;
pub mod session_client;
pub mod session_server;

// The bundled designs' modules. They are declared here, not by `bundled!`
// below: rustfmt (and so `cargo fmt`) follows only the modules it sees
// declared, never those a macro declares.
pub mod chubby;
pub mod dynamodb;
pub mod epoch;
pub mod etcd;
pub mod hazelcast;
pub mod lease;
pub mod postgres;
pub mod redis;
pub mod redlock;
#[cfg(feature = "sql")]
pub mod sql;
pub mod sql_session;
pub mod storage;
pub mod zookeeper;

/// The bundled designs, one line each, in the order `fencesim designs`
/// lists them: `lock module::{Design};` registers the design in
/// [`catalog::Registry::builtin`]. A bundled design is its file, its
/// module's line above and its line here.
macro_rules! bundled {
    ($( $(#[$cfg:meta])* $role:ident $module:ident :: { $($design:ident),+ } ; )*) => {
        /// Adds the bundled designs to `registry`, in their order.
        pub(crate) fn add_bundled(registry: &mut catalog::Registry) {
            $( $(#[$cfg])* { $( bundled!(@add registry $role $module::$design); )+ } )*
        }
    };
    (@add $registry:ident lock $design:path) => {
        $registry.add_lock($design)
    };
    (@add $registry:ident storage $design:path) => {
        $registry.add_storage($design)
    };
}

bundled! {
    lock lease::{Lease};
    lock redis::{Redis};
    lock redlock::{Redlock};
    lock etcd::{Etcd};
    lock zookeeper::{ZooKeeper};
    lock chubby::{Chubby};
    lock hazelcast::{Hazelcast};
    lock postgres::{Postgres};
    lock epoch::{Epoch};
    lock dynamodb::{DynamoDb};
    storage storage::{UncheckedDesign, FencedDesign, CasDesign};
    // A bundled SQLite: a feature of its own.
    #[cfg(feature = "sql")]
    storage sql::{SqlDesign};
}

use sim::Actor;

/// The bundled designs that a cargo feature of fencesim's brings, by role,
/// name and feature: a build without the feature says which one to turn on
/// rather than that the design is unknown.
pub(crate) const BEHIND_FEATURES: &[(crate::design::catalog::Role, &str, &str)] =
    &[(crate::design::catalog::Role::Storage, "sql", "sql")];

/// The cargo feature that brings the bundled `role` design `name`, when
/// this build leaves it out.
pub(crate) fn missing_feature(
    role: crate::design::catalog::Role,
    name: &str,
) -> Option<&'static str> {
    BEHIND_FEATURES
        .iter()
        .find(|(r, n, _)| *r == role && *n == name)
        .map(|(_, _, feature)| *feature)
}

use crate::design::catalog::DesignInfo;
pub use crate::design::config::DesignConfig;
use crate::design::lock_client::AnyLockClient;
pub use crate::design::params::{ParamValue, Params};
use crate::protocol::Msg;

/// A lock service: its metadata, its server actor(s) and the client half of
/// its protocol. Register one with
/// [`Registry::add_lock`](catalog::Registry::add_lock) to name it in
/// scenario files (`examples/custom_lock.rs` is a complete one); a scenario
/// loaded with that registry carries the design, and every run of it builds
/// its actors from it.
///
/// Configuration: [`LockDesign::Config`] is a struct declared with
/// [`design_config!`](crate::design_config), one field per key of the
/// `[lock]` table with its kind, bounds, default and documentation; `info`
/// lists its [`DesignConfig::KEYS`]. The loader checks a file's values
/// against them and fills in the defaults, and the design is handed the
/// parsed struct: [`LockDesign::server`] and [`LockDesign::client`] read
/// fields, never strings.
///
/// Contract for the server actor: it answers acquires, releases and
/// renewals through a [`grants::Grants`] ledger (or is a
/// [`session_server::SessionServer`], which owns one), never by sending
/// [`Msg::Granted`], [`Msg::ReleaseAck`] or [`Msg::RenewReply`] itself: the
/// ledger journals [`granted`](crate::events::GRANTED) `{client, lease,
/// token?}`, [`released`](crate::events::RELEASED) `{client, lease}` and
/// [`renewed`](crate::events::RENEWED) `{client, lease}` with each answer, and
/// [`expired`](crate::events::EXPIRED) `{client, lease}` when the server ends
/// a grant on its own clock. The oracle matches these to the clients'
/// `acquired` events by (client, lease). Lease ids are unique per client.
/// What survives [`sim::Actor::on_crash`] is what the modelled
/// service keeps on disk (say which in the design's doc). Its timer tags are
/// its own; the client protocol's timers are its
/// [`LockClient::Timer`](lock_client::LockClient::Timer), apart from the
/// server's. Read time only from the context's clocks (`now()` for leases,
/// `wall_ns()` if the real system uses the wall clock) and randomness only
/// from `ctx.rng()`.
pub trait LockDesign: Send + Sync + 'static {
    /// The design's settings, one field per key of its `[lock]` table
    /// (`()` for none).
    type Config: DesignConfig;
    /// Name, summary and keys (`Self::Config::KEYS`): what the loader
    /// checks a `[lock]` table against and `fencesim designs` prints.
    fn info(&self) -> DesignInfo;
    /// The server actor of lock node `index` (0-based; designs with a
    /// `nodes` key have several, named `lock1` … `lockN`).
    fn server(&self, config: &Self::Config, index: usize) -> Box<dyn Actor<Msg>>;
    /// The protocol one client speaks to the lock nodes, given their names:
    /// any [`LockClient`](lock_client::LockClient), boxed.
    fn client(&self, config: &Self::Config, lock_nodes: &[String]) -> Box<dyn AnyLockClient>;
    /// Checks the settings beyond their kinds and bounds when a scenario is
    /// loaded (Redlock's `quorum` must not exceed its `nodes`), so a bad
    /// value is an error at its key, with its file, line and column.
    fn validate(&self, _config: &Self::Config) -> Result<(), ParamError> {
        Ok(())
    }
}

/// A storage: its metadata and its server actor. The simplest is a
/// [`storage::StorageNode`] around your own [`storage::StoragePolicy`],
/// which journals `accepted`/`rejected` for you; a hand-written actor must
/// journal them itself (see [`crate::events`]) and answer each
/// [`Msg::Write`] with a [`Msg::WriteReply`]. Register one with
/// [`Registry::add_storage`](catalog::Registry::add_storage).
///
/// Configuration works as for a [`LockDesign`]: [`StorageDesign::Config`]
/// declares the `[storage]` keys, and the server is handed it parsed.
pub trait StorageDesign: Send + Sync + 'static {
    /// The design's settings, one field per key of its `[storage]` table
    /// (`()` for none).
    type Config: DesignConfig;
    /// Name, summary and keys (`Self::Config::KEYS`): what the loader
    /// checks a `[storage]` table against and `fencesim designs` prints.
    fn info(&self) -> DesignInfo;
    /// The storage node's actor.
    fn server(&self, config: &Self::Config) -> Box<dyn Actor<Msg>>;
    /// Checks the settings beyond their kinds and bounds when a scenario is
    /// loaded (the `sql` storage prepares its statement), so a bad value is
    /// an error at its key, with its file, line and column, rather than a
    /// panic at run time.
    fn validate(&self, _config: &Self::Config) -> Result<(), ParamError> {
        Ok(())
    }
}

/// A [`LockDesign`] as the registry keeps it: its config parsed from the
/// loaded [`Params`] on the way in, so one list holds designs of every
/// config type.
pub trait DynLockDesign: Send + Sync + 'static {
    /// [`LockDesign::info`].
    fn info(&self) -> DesignInfo;
    /// [`LockDesign::server`], given the loaded table.
    fn server(&self, params: &Params, index: usize) -> Box<dyn Actor<Msg>>;
    /// [`LockDesign::client`], given the loaded table.
    fn client(&self, params: &Params, lock_nodes: &[String]) -> Box<dyn AnyLockClient>;
    /// [`LockDesign::validate`], given the loaded table.
    fn validate(&self, params: &Params) -> Result<(), ParamError>;
}

impl<D: LockDesign> DynLockDesign for D {
    fn info(&self) -> DesignInfo {
        LockDesign::info(self)
    }
    fn server(&self, params: &Params, index: usize) -> Box<dyn Actor<Msg>> {
        LockDesign::server(self, &D::Config::from_params(params), index)
    }
    fn client(&self, params: &Params, lock_nodes: &[String]) -> Box<dyn AnyLockClient> {
        LockDesign::client(self, &D::Config::from_params(params), lock_nodes)
    }
    fn validate(&self, params: &Params) -> Result<(), ParamError> {
        LockDesign::validate(self, &D::Config::from_params(params))
    }
}

/// A [`StorageDesign`] as the registry keeps it (see [`DynLockDesign`]).
pub trait DynStorageDesign: Send + Sync + 'static {
    /// [`StorageDesign::info`].
    fn info(&self) -> DesignInfo;
    /// [`StorageDesign::server`], given the loaded table.
    fn server(&self, params: &Params) -> Box<dyn Actor<Msg>>;
    /// [`StorageDesign::validate`], given the loaded table.
    fn validate(&self, params: &Params) -> Result<(), ParamError>;
}

impl<D: StorageDesign> DynStorageDesign for D {
    fn info(&self) -> DesignInfo {
        StorageDesign::info(self)
    }
    fn server(&self, params: &Params) -> Box<dyn Actor<Msg>> {
        StorageDesign::server(self, &D::Config::from_params(params))
    }
    fn validate(&self, params: &Params) -> Result<(), ParamError> {
        StorageDesign::validate(self, &D::Config::from_params(params))
    }
}

/// A design's objection to one of its parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamError {
    /// The key at fault.
    pub key: &'static str,
    /// What is wrong with it.
    pub message: String,
}

/// The node called `name`: how a design that was given its peers' names
/// (the lock nodes, the storage) finds one.
///
/// # Panics
/// If there is no such node: the world and the design's peers come from the
/// same scenario, so a missing one is a bug in fencesim or the design.
pub fn node_named(ctx: &sim::Context<'_, Msg>, name: &str) -> sim::NodeId {
    ctx.node(name)
        .unwrap_or_else(|| panic!("{}: no node named {name:?}", ctx.name_of(ctx.me())))
}
