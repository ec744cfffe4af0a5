//! The world's event vocabulary: what the simulator itself writes into the
//! journal, beside the actors' own events.
//!
//! Renderers and checkers decode these events ([`WorldEvent::decode`]) and
//! match on the [`WorldEvent`], never on the kind's text. Every event is a [`crate::journal::Event`] whose `node` is the
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
//! assert_eq!(e.u64(field::DURATION_MS), Some(15_000));
//! assert_eq!(
//!     events::WorldEvent::decode(&e),
//!     Ok(Some(events::WorldEvent::Pause { duration_ms: Some(15_000) }))
//! );
//! ```

use crate::journal::decode::{Fields, RawEvent};
use crate::journal::{DecodeError, Event};

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

/// A world event, decoded: the kinds above with their fields typed, strings
/// borrowed from the event. Renderers and checkers match on this, not on
/// the kind's text; [`WorldEvent::decode`] is the one place that reads the
/// fields by name.
///
/// Its serde form is the kind beside the fields, as in the journal
/// (`{"kind":"pause","duration_ms":15000}`); it reads back, its strings
/// owned (`WorldEvent<String>`), through the same decoder.
///
/// ```
/// use sim::events::{self, field, WorldEvent};
/// use sim::Event;
/// let e = Event::new(0, 0, "client1", 0, events::PAUSE).with(field::DURATION_MS, 15_000u64);
/// let w = WorldEvent::decode(&e).unwrap().unwrap();
/// assert_eq!(w, WorldEvent::Pause { duration_ms: Some(15_000) });
/// let json = serde_json::to_string(&w).unwrap();
/// assert_eq!(json, r#"{"kind":"pause","duration_ms":15000}"#);
/// let back: WorldEvent<String> = serde_json::from_str(&json).unwrap();
/// assert_eq!(back, w.map(str::to_owned));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WorldEvent<S> {
    /// [`SEND`]: a message left its sender.
    Send {
        /// The message's id.
        id: u64,
        /// The receiver.
        to: S,
        /// The message's one-line summary.
        msg: S,
    },
    /// [`DELIVER`]: a message reached its receiver (the event's node).
    Deliver {
        /// The message's id.
        id: u64,
        /// The sender.
        from: S,
        /// The message's one-line summary.
        msg: S,
    },
    /// [`DROP`]: a message was lost.
    Drop {
        /// The message's id.
        id: u64,
        /// The receiver it was for.
        to: S,
        /// The message's one-line summary.
        #[serde(skip_serializing_if = "Option::is_none")]
        msg: Option<S>,
        /// Why: one of [`reason`].
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<S>,
    },
    /// [`DUPLICATE`]: a message will arrive twice.
    Duplicate {
        /// The message's id.
        id: u64,
        /// The receiver.
        to: S,
    },
    /// [`PAUSE`]: the node stops running.
    Pause {
        /// For how long, when known.
        #[serde(skip_serializing_if = "Option::is_none")]
        duration_ms: Option<u64>,
    },
    /// [`RESUME`]: a paused node runs again.
    Resume,
    /// [`CLOCK`]: the node's clocks change.
    Clock {
        /// The new rate.
        #[serde(skip_serializing_if = "Option::is_none")]
        rate: Option<f64>,
        /// The wall clock's new offset from true time.
        #[serde(skip_serializing_if = "Option::is_none")]
        offset_ns: Option<i64>,
        /// The wall clock's step.
        #[serde(skip_serializing_if = "Option::is_none")]
        jump_ns: Option<i64>,
    },
    /// [`CRASH`]: the node goes down.
    Crash {
        /// The node that powered it off (`None`: a crash fault).
        #[serde(skip_serializing_if = "Option::is_none")]
        by: Option<S>,
    },
    /// [`RESTART`]: a crashed node comes back.
    Restart,
    /// [`PARTITION`]: the network splits.
    Partition {
        /// The groups, as text.
        groups: S,
        /// For how long, when known.
        #[serde(skip_serializing_if = "Option::is_none")]
        duration_ms: Option<u64>,
    },
    /// [`HEAL`]: a partition ends.
    Heal {
        /// The groups that join again, as text.
        #[serde(skip_serializing_if = "Option::is_none")]
        groups: Option<S>,
    },
    /// [`LINK`]: a rule is armed on a link.
    Link {
        /// `delay`, `drop` or `duplicate`.
        rule: S,
        /// The receiving end.
        to: S,
        /// The sending end (`"*"`: every sender), when named.
        #[serde(skip_serializing_if = "Option::is_none")]
        from: Option<S>,
        /// A delay's added latency.
        #[serde(skip_serializing_if = "Option::is_none")]
        extra_ms: Option<u64>,
        /// How many messages it applies to.
        #[serde(skip_serializing_if = "Option::is_none")]
        count: Option<u64>,
        /// Its window.
        #[serde(skip_serializing_if = "Option::is_none")]
        duration_ms: Option<u64>,
    },
}

impl<'a> WorldEvent<&'a str> {
    /// Decodes `event` when its kind is one of the world's (`Ok(None)`: it
    /// is not); a missing or mistyped field is an error.
    pub fn decode(event: &'a Event) -> Result<Option<Self>, DecodeError> {
        Self::decode_from(&event)
    }

    /// Decodes from any field source (a journal event, a deserialized one).
    pub fn decode_from(f: &impl Fields<'a>) -> Result<Option<Self>, DecodeError> {
        use field as n;
        Ok(Some(match f.kind() {
            SEND => WorldEvent::Send {
                id: f.req(n::ID)?,
                to: f.req(n::TO)?,
                msg: f.req(n::MSG)?,
            },
            DELIVER => WorldEvent::Deliver {
                id: f.req(n::ID)?,
                from: f.req(n::FROM)?,
                msg: f.req(n::MSG)?,
            },
            DROP => WorldEvent::Drop {
                id: f.req(n::ID)?,
                to: f.req(n::TO)?,
                msg: f.opt(n::MSG)?,
                reason: f.opt(n::REASON)?,
            },
            DUPLICATE => WorldEvent::Duplicate {
                id: f.req(n::ID)?,
                to: f.req(n::TO)?,
            },
            PAUSE => WorldEvent::Pause {
                duration_ms: f.opt(n::DURATION_MS)?,
            },
            RESUME => WorldEvent::Resume,
            CLOCK => WorldEvent::Clock {
                rate: f.opt(n::RATE)?,
                offset_ns: f.opt(n::OFFSET_NS)?,
                jump_ns: f.opt(n::JUMP_NS)?,
            },
            CRASH => WorldEvent::Crash { by: f.opt(n::BY)? },
            RESTART => WorldEvent::Restart,
            PARTITION => WorldEvent::Partition {
                groups: f.req(n::GROUPS)?,
                duration_ms: f.opt(n::DURATION_MS)?,
            },
            HEAL => WorldEvent::Heal {
                groups: f.opt(n::GROUPS)?,
            },
            LINK => WorldEvent::Link {
                rule: f.req(n::RULE)?,
                to: f.req(n::TO)?,
                from: f.opt(n::FROM)?,
                extra_ms: f.opt(n::EXTRA_MS)?,
                count: f.opt(n::COUNT)?,
                duration_ms: f.opt(n::DURATION_MS)?,
            },
            _ => return Ok(None),
        }))
    }
}

impl<S> WorldEvent<S> {
    /// The journal kind this event is.
    pub fn kind(&self) -> &'static str {
        match self {
            WorldEvent::Send { .. } => SEND,
            WorldEvent::Deliver { .. } => DELIVER,
            WorldEvent::Drop { .. } => DROP,
            WorldEvent::Duplicate { .. } => DUPLICATE,
            WorldEvent::Pause { .. } => PAUSE,
            WorldEvent::Resume => RESUME,
            WorldEvent::Clock { .. } => CLOCK,
            WorldEvent::Crash { .. } => CRASH,
            WorldEvent::Restart => RESTART,
            WorldEvent::Partition { .. } => PARTITION,
            WorldEvent::Heal { .. } => HEAL,
            WorldEvent::Link { .. } => LINK,
        }
    }

    /// Whether this is a message's `send` or `deliver`.
    pub fn is_message_end(&self) -> bool {
        matches!(self, WorldEvent::Send { .. } | WorldEvent::Deliver { .. })
    }

    /// The same event with each string passed through `f` (to own a
    /// borrowed event's strings: `e.map(str::to_owned)`).
    pub fn map<T>(self, mut f: impl FnMut(S) -> T) -> WorldEvent<T> {
        use WorldEvent as W;
        match self {
            W::Send { id, to, msg } => W::Send {
                id,
                to: f(to),
                msg: f(msg),
            },
            W::Deliver { id, from, msg } => W::Deliver {
                id,
                from: f(from),
                msg: f(msg),
            },
            W::Drop {
                id,
                to,
                msg,
                reason,
            } => W::Drop {
                id,
                to: f(to),
                msg: msg.map(&mut f),
                reason: reason.map(&mut f),
            },
            W::Duplicate { id, to } => W::Duplicate { id, to: f(to) },
            W::Pause { duration_ms } => W::Pause { duration_ms },
            W::Resume => W::Resume,
            W::Clock {
                rate,
                offset_ns,
                jump_ns,
            } => W::Clock {
                rate,
                offset_ns,
                jump_ns,
            },
            W::Crash { by } => W::Crash { by: by.map(f) },
            W::Restart => W::Restart,
            W::Partition {
                groups,
                duration_ms,
            } => W::Partition {
                groups: f(groups),
                duration_ms,
            },
            W::Heal { groups } => W::Heal {
                groups: groups.map(f),
            },
            W::Link {
                rule,
                to,
                from,
                extra_ms,
                count,
                duration_ms,
            } => W::Link {
                rule: f(rule),
                to: f(to),
                from: from.map(&mut f),
                extra_ms,
                count,
                duration_ms,
            },
        }
    }
}

impl<'de> serde::Deserialize<'de> for WorldEvent<String> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = RawEvent::deserialize(d)?;
        match WorldEvent::decode_from(&&raw) {
            Ok(Some(e)) => Ok(e.map(str::to_owned)),
            Ok(None) => Err(serde::de::Error::custom(format_args!(
                "`{}` is not a world event kind",
                raw.kind
            ))),
            Err(e) => Err(serde::de::Error::custom(e)),
        }
    }
}
