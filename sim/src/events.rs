//! The world's event vocabulary: what the simulator itself writes into the
//! journal, beside the actors' own events.
//!
//! Renderers and checkers match on these constants, never on string
//! literals. Every event is a [`crate::journal::Event`] whose `node` is the
//! node named below (or [`WORLD`] for the network as a whole) and whose
//! `kind` is one of the constants, with the [`field`]s listed. Fields marked
//! *optional* are absent when they do not apply.
//!
//! Messages (`node` = the sender, except for [`DELIVER`]):
//! - [`SEND`] `id: u64`, `to: str`, `msg: str`: a message left its sender.
//! - [`DELIVER`] `id: u64`, `from: str`, `msg: str` (`node` = the receiver):
//!   it reached its receiver's inbox.
//! - [`DROP`] `id: u64`, `to: str`, `msg: str`, `reason: str`: it was lost,
//!   for one of the [`reason`]s.
//! - [`DUPLICATE`] `id: u64`, `to: str`: it will arrive twice.
//!
//! Faults (`node` = the node they hit):
//! - [`PAUSE`] `duration_ms: u64` and [`RESUME`]: the node stops running, and
//!   runs again.
//! - [`CLOCK`] `rate: f64` *optional*, `offset_ns: i64` *optional*, `jump_ns:
//!   i64` *optional*: its clocks change.
//! - [`CRASH`] `by: str` *optional* and [`RESTART`]: it goes down, and comes
//!   back. `by` names the node that powered it off
//!   ([`crate::Context::power_off`]); without it, a crash fault.
//! - [`LINK`] `rule: str` (`delay`, `drop` or `duplicate`), `to: str`,
//!   `from: str` *optional* (`"*"`: every sender; then `node` = `to`),
//!   `extra_ms: u64` *optional* (a delay's), then `count: u64` or
//!   `duration_ms: u64` (the window) (`node` = the link's sender): a rule is
//!   armed on the link.
//! - [`PARTITION`] `groups: str`, `duration_ms: u64` and [`HEAL`] `groups:
//!   str` (`node` = [`WORLD`]): the network splits, and joins again.
//!
//! ```
//! use sim::events::{self, field};
//! use sim::Event;
//! let e = Event::new(0, 0, "client1", 0, events::PAUSE).with(field::DURATION_MS, 15_000u64);
//! assert_eq!(e.kind, events::PAUSE);
//! assert_eq!(e.u64(field::DURATION_MS), Some(15_000));
//! assert!(events::WORLD_EVENTS.contains(&e.kind.as_str()));
//! ```

/// A message left its sender.
pub const SEND: &str = "send";
/// A message reached its receiver.
pub const DELIVER: &str = "deliver";
/// A message was lost.
pub const DROP: &str = "drop";
/// A message will arrive twice.
pub const DUPLICATE: &str = "duplicate";
/// A node stopped running.
pub const PAUSE: &str = "pause";
/// A paused node runs again.
pub const RESUME: &str = "resume";
/// A node's clocks changed.
pub const CLOCK: &str = "clock";
/// A node went down.
pub const CRASH: &str = "crash";
/// A crashed node came back.
pub const RESTART: &str = "restart";
/// The network split into groups.
pub const PARTITION: &str = "partition";
/// A partition ended.
pub const HEAL: &str = "heal";
/// A delay, drop or duplicate rule was armed on a link.
pub const LINK: &str = "link";

/// The node name of events of the world as a whole (partitions).
pub const WORLD: &str = crate::world::WORLD_NODE;

/// Every event kind the world writes.
pub const WORLD_EVENTS: &[&str] = &[
    SEND, DELIVER, DROP, DUPLICATE, PAUSE, RESUME, CLOCK, CRASH, RESTART, PARTITION, HEAL, LINK,
];

/// Field names of the world's events.
pub mod field {
    /// The message's id, unique in a run (`send`, `deliver`, `drop`, `duplicate`).
    pub const ID: &str = "id";
    /// The receiving node (`send`, `drop`, `duplicate`, `link`).
    pub const TO: &str = "to";
    /// The sending node (`deliver`).
    pub const FROM: &str = "from";
    /// The message's one-line summary (`send`, `deliver`, `drop`).
    pub const MSG: &str = "msg";
    /// Why a message was lost (`drop`): one of [`super::reason`].
    pub const REASON: &str = "reason";
    /// How long a pause or partition lasts, or a link rule's window.
    pub const DURATION_MS: &str = "duration_ms";
    /// A clock's new rate (`clock`).
    pub const RATE: &str = "rate";
    /// A wall clock's new offset from true time (`clock`).
    pub const OFFSET_NS: &str = "offset_ns";
    /// A wall clock's step (`clock`).
    pub const JUMP_NS: &str = "jump_ns";
    /// A partition's groups, as text (`partition`, `heal`).
    pub const GROUPS: &str = "groups";
    /// The node that powered this one off (`crash`, *optional*).
    pub const BY: &str = "by";
    /// A link rule's action (`link`): `delay`, `drop` or `duplicate`.
    pub const RULE: &str = "rule";
    /// A delay rule's added latency (`link`).
    pub const EXTRA_MS: &str = "extra_ms";
    /// How many messages a link rule applies to (`link`).
    pub const COUNT: &str = "count";
}

/// Why a message was lost (the `reason` of a [`DROP`]).
pub mod reason {
    /// The link's random loss.
    pub const LOSS: &str = "loss";
    /// A partition cut the link.
    pub const PARTITION: &str = "partition";
    /// A drop fault.
    pub const FAULT: &str = "fault";
    /// The receiver (or, for a queued message, its holder) was down.
    pub const NODE_DOWN: &str = "node down";
}
