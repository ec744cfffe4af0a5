//! The lock domain's event vocabulary: what designs write into the journal.
//!
//! The oracle and the renderers read these events and nothing else, so a
//! design (bundled or user-written) that emits them is checked like any other.
//! Every event is a [`sim::journal::Event`] whose `node` is the emitting node
//! and whose `kind` is one of the constants below, with the fields listed.
//! Fields marked *optional* are absent when they do not apply (for example
//! `token` when the lock hands out no tokens).
//!
//! Designs emit them by these constants; readers never match on a kind's
//! text: [`decode`] turns an event into a [`DomainEvent`] or a
//! [`WorldEvent`] (or [`Decoded::Other`], a kind neither knows), and a
//! missing or mistyped field into a [`DecodeError`] that names the event and
//! the field. Readers of `checked` and `lapsed` take `lease` as optional,
//! and a `wrote` without `op` as a put; the other fields below are required
//! unless marked.
//!
//! Client events (`node` = the client's name):
//! - [`ACQUIRED`] `lease: u64`, `token: u64` *optional*, `ttl_ms: u64`,
//!   `ends: u64` *optional*: the client now believes it holds the lock. This
//!   is a **grant**; the oracle orders grants by the lock's order (the token,
//!   else the lock's `granted` event for the lease), not by when clients
//!   heard of them. `ends` (default 1) is how many lock-node `expired` or
//!   `released` events for this lease end it: with several lock nodes
//!   (Redlock), the grant ends when no majority holds it any more, and it
//!   was made at its majority-th `granted`.
//! - [`DENIED`]: the lock said no; the client will retry.
//! - [`READ`] `value: i64`, `version: u64` *optional*: a read answered.
//! - [`WROTE`] `write: str`, `token: u64` *optional*, `value: i64`, `op: str`
//!   (`put` or `increment`): the client sent write `write` under its current
//!   grant. Write ids are unique in a run (`client1/1`, `client1/2`, …).
//! - [`ACKED`] `write: str`, `ok: bool`, `op: str`: the storage answered.
//! - [`RELEASED`] `lease: u64`: the client gave the lock up (it no longer
//!   believes it holds it).
//! - [`LOST`]: the lock service told the client it lost the lock (a session
//!   expired); it gives up the round without writing.
//! - [`CHECKED`] `lease: u64`, `remaining_ms: u64`: (`check_lease`) the
//!   client's own clock says its lease has this long left; it writes next.
//! - [`LAPSED`] `lease: u64`, `overdue_ms: u64`: (`check_lease`) the
//!   client's own clock says its lease ran out; it gives up the round
//!   without writing.
//! - [`RENEWED`] `lease: u64`, `ttl_ms: u64`, `asked_ago_ns: u64`
//!   *optional*: (`renew`) the lock extended the lease; the client believes
//!   it for `ttl_ms` from when it asked, `asked_ago_ns` before this event on
//!   its own clock (absent: it asked just now).
//! - [`FENCED`] `write: str`, `token: u64`: (`fence_on_acquire`) the client
//!   sent a token-only write (op `fence`), which is not a data write: the
//!   oracle leaves it, and the storage's answer to it, out of every count.
//!   Its answer is journaled as an [`ACKED`] with `op = "fence"`.
//!
//! Lock service events (`node` = `lock` or `lock1` … `lockN`):
//! - [`GRANTED`] `client: str`, `lease: u64`, `token: u64` *optional*,
//!   `ttl_ms: u64` *optional*, `mono_ns: u64` *optional*: `ttl_ms` is the
//!   TTL the grant promised, from `mono_ns`, the lock's monotonic clock at
//!   the grant (absent for a lock whose grants live as long as a session).
//! - [`EXPIRED`] `client: str`, `lease: u64`, `reason: str` *optional*,
//!   `mono_ns: u64` *optional*: the lease ran out on the lock's clock
//!   (`reason`: it ended otherwise, such as `restart`).
//! - [`RELEASED`] `client: str`, `lease: u64`: the holder released it.
//! - [`RENEWED`] `client: str`, `lease: u64`, `ttl_ms: u64` *optional*,
//!   `mono_ns: u64` *optional*: the holder extended it, for `ttl_ms` from
//!   `mono_ns`.
//!
//! Storage events (`node` = `storage`):
//! - [`ACCEPTED`] `write: str`, `client: str`, `token: u64` *optional*,
//!   `value: i64`, `key: str`, `precondition: str` *optional*: present when
//!   the storage applied the write because a condition it named held on the
//!   storage's current state (`cas`: `version 1`); the oracle never counts
//!   such a write as stale.
//! - [`REJECTED`] `write: str`, `client: str`, `token: u64` *optional*,
//!   `reason: str`, `max_token: u64` *optional*, `key: str`.

use sim::events::WorldEvent;
use sim::journal::decode::{one_of, Fields, RawEvent};
use sim::journal::{DecodeError, Event};

/// Client: the lock was granted to it.
pub const ACQUIRED: &str = "acquired";
/// Client: the lock refused it.
pub const DENIED: &str = "denied";
/// Client: a read was answered.
pub const READ: &str = "read";
/// Client: a write was sent.
pub const WROTE: &str = "wrote";
/// Client: the storage answered a write.
pub const ACKED: &str = "acked";
/// Client: the lock service told it that it lost the lock (a session
/// expired, ownership lost), before it wrote.
pub const LOST: &str = "lost";
/// Client: its lease check passed, on its own clock (`check_lease`).
pub const CHECKED: &str = "checked";
/// Client: its lease check failed, on its own clock; no write this round.
pub const LAPSED: &str = "lapsed";
/// Client or lock: a lease was extended (`renew`).
pub const RENEWED: &str = "renewed";
/// Client: a token-only write was sent (`fence_on_acquire`).
pub const FENCED: &str = "fenced";
/// Client or lock: the lock was released.
pub const RELEASED: &str = "released";
/// Lock: a lease was granted.
pub const GRANTED: &str = "granted";
/// Lock: a lease expired.
pub const EXPIRED: &str = "expired";
/// Storage: a write was applied.
pub const ACCEPTED: &str = "accepted";
/// Storage: a write was refused.
pub const REJECTED: &str = "rejected";

/// Event kinds that a design emits (the world adds its own: see
/// [`sim::WORLD_EVENTS`]). `after = "node:kind"` triggers may name any of them.
pub const DOMAIN_EVENTS: &[&str] = &[
    ACQUIRED, DENIED, LOST, READ, WROTE, ACKED, RELEASED, GRANTED, EXPIRED, ACCEPTED, REJECTED,
    CHECKED, LAPSED, RENEWED, FENCED,
];

/// What a write does (`op` of [`WROTE`] and [`ACKED`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// Sets the value.
    Put,
    /// Adds to the value.
    Increment,
    /// Carries only a token (`fence_on_acquire`): not a data write.
    Fence,
}

const OPS: &[(&str, Op)] = &[
    ("put", Op::Put),
    ("increment", Op::Increment),
    ("fence", Op::Fence),
];

/// A domain event, decoded: the kinds above with their fields typed, strings
/// borrowed from the event. The oracle and the renderers match on this;
/// [`DomainEvent::decode`] is the one place that reads fields by name.
///
/// `released` and `renewed` are written by a client (about its own lease)
/// and by a lock node (naming the `client`): they decode to
/// [`DomainEvent::Released`]/[`DomainEvent::Renewed`] and
/// [`DomainEvent::LockReleased`]/[`DomainEvent::LockRenewed`].
///
/// Its serde form is the kind beside the fields, as in the journal, and it
/// reads back, its strings owned (`DomainEvent<String>`), through the same
/// decoder:
///
/// ```
/// use fencesim::events::{DomainEvent, GRANTED};
/// use sim::Event;
/// let e = Event::new(3, 0, "lock", 0, GRANTED).with("client", "client1").with("lease", 1u64);
/// let d = DomainEvent::decode(&e).unwrap().unwrap();
/// assert!(matches!(d, DomainEvent::Granted { client: "client1", lease: 1, token: None, .. }));
/// let json = serde_json::to_string(&d).unwrap();
/// assert_eq!(json, r#"{"kind":"granted","client":"client1","lease":1}"#);
/// let back: DomainEvent<String> = serde_json::from_str(&json).unwrap();
/// assert_eq!(back, d.map(str::to_owned));
/// let bad = Event::new(4, 0, "lock", 0, GRANTED).with("client", "client1");
/// assert_eq!(
///     DomainEvent::decode(&bad).unwrap_err().to_string(),
///     "event 4 (lock granted): field `lease` is missing"
/// );
/// ```
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DomainEvent<S> {
    /// Client, [`ACQUIRED`]: it believes it holds the lock (a grant).
    Acquired {
        /// The lease.
        lease: u64,
        /// The fencing token, when the lock hands them out.
        #[serde(skip_serializing_if = "Option::is_none")]
        token: Option<u64>,
        /// The TTL it believes.
        #[serde(skip_serializing_if = "Option::is_none")]
        ttl_ms: Option<u64>,
        /// How many lock-node ends end it (absent: 1); see
        /// [`DomainEvent::ends_needed`].
        #[serde(skip_serializing_if = "Option::is_none")]
        ends: Option<u64>,
    },
    /// Client, [`DENIED`]: the lock said no.
    Denied,
    /// Client, [`READ`]: a read was answered.
    Read {
        /// The value read.
        value: i64,
        /// Its version, when the storage has them.
        #[serde(skip_serializing_if = "Option::is_none")]
        version: Option<u64>,
    },
    /// Client, [`WROTE`]: a write was sent.
    Wrote {
        /// The write's id, unique in a run.
        write: S,
        /// The token it carried.
        #[serde(skip_serializing_if = "Option::is_none")]
        token: Option<u64>,
        /// The value it writes (or adds).
        #[serde(skip_serializing_if = "Option::is_none")]
        value: Option<i64>,
        /// What it does (absent: a put).
        op: Op,
    },
    /// Client, [`ACKED`]: the storage answered a write.
    Acked {
        /// The write's id.
        write: S,
        /// Whether it was applied.
        ok: bool,
        /// What the write did, when the ack says.
        #[serde(skip_serializing_if = "Option::is_none")]
        op: Option<Op>,
    },
    /// Client, [`RELEASED`]: it gave the lock up.
    Released {
        /// The lease.
        lease: u64,
    },
    /// Client, [`LOST`]: the lock service told it that it lost the lock.
    Lost,
    /// Client, [`CHECKED`]: its own clock says its lease has this long left.
    Checked {
        /// The lease (readers that only need to know the belief ended
        /// do without it).
        #[serde(skip_serializing_if = "Option::is_none")]
        lease: Option<u64>,
        /// Time left, on its clock.
        #[serde(skip_serializing_if = "Option::is_none")]
        remaining_ms: Option<u64>,
    },
    /// Client, [`LAPSED`]: its own clock says its lease ran out.
    Lapsed {
        /// The lease (readers that only need to know the belief ended
        /// do without it).
        #[serde(skip_serializing_if = "Option::is_none")]
        lease: Option<u64>,
        /// How long ago, on its clock.
        #[serde(skip_serializing_if = "Option::is_none")]
        overdue_ms: Option<u64>,
    },
    /// Client, [`RENEWED`]: the lock extended its lease.
    Renewed {
        /// The lease.
        lease: u64,
        /// The TTL it now believes, from when it asked.
        #[serde(skip_serializing_if = "Option::is_none")]
        ttl_ms: Option<u64>,
        /// How long before this event it asked, on its own clock (absent:
        /// just now).
        #[serde(skip_serializing_if = "Option::is_none")]
        asked_ago_ns: Option<u64>,
    },
    /// Client, [`FENCED`]: a token-only write was sent.
    Fenced {
        /// The write's id.
        write: S,
        /// The token it carried.
        #[serde(skip_serializing_if = "Option::is_none")]
        token: Option<u64>,
    },
    /// Lock, [`GRANTED`]: it granted a lease.
    Granted {
        /// The client it granted to.
        client: S,
        /// The lease.
        lease: u64,
        /// The fencing token.
        #[serde(skip_serializing_if = "Option::is_none")]
        token: Option<u64>,
        /// The TTL promised from `mono_ns` (absent: held by a session).
        #[serde(skip_serializing_if = "Option::is_none")]
        ttl_ms: Option<u64>,
        /// The lock's monotonic clock at the grant.
        #[serde(skip_serializing_if = "Option::is_none")]
        mono_ns: Option<u64>,
    },
    /// Lock, [`EXPIRED`]: a lease ran out (or ended otherwise: `reason`).
    Expired {
        /// The holder.
        client: S,
        /// The lease.
        lease: u64,
        /// How it ended, when not by its TTL (`restart`).
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<S>,
        /// The lock's monotonic clock at the end.
        #[serde(skip_serializing_if = "Option::is_none")]
        mono_ns: Option<u64>,
    },
    /// Lock, [`RELEASED`] naming the `client`: the holder released it.
    #[serde(rename = "released")]
    LockReleased {
        /// The holder.
        client: S,
        /// The lease.
        lease: u64,
    },
    /// Lock, [`RENEWED`] naming the `client`: the holder extended it.
    #[serde(rename = "renewed")]
    LockRenewed {
        /// The holder.
        client: S,
        /// The lease.
        lease: u64,
        /// The TTL promised from `mono_ns`.
        #[serde(skip_serializing_if = "Option::is_none")]
        ttl_ms: Option<u64>,
        /// The lock's monotonic clock at the renewal.
        #[serde(skip_serializing_if = "Option::is_none")]
        mono_ns: Option<u64>,
    },
    /// Storage, [`ACCEPTED`]: a write was applied.
    Accepted {
        /// The write's id.
        write: S,
        /// The writer.
        #[serde(skip_serializing_if = "Option::is_none")]
        client: Option<S>,
        /// The token it carried.
        #[serde(skip_serializing_if = "Option::is_none")]
        token: Option<u64>,
        /// The value applied.
        #[serde(skip_serializing_if = "Option::is_none")]
        value: Option<i64>,
        /// The storage key.
        #[serde(skip_serializing_if = "Option::is_none")]
        key: Option<S>,
        /// The condition on the storage's state that let it apply.
        #[serde(skip_serializing_if = "Option::is_none")]
        precondition: Option<S>,
    },
    /// Storage, [`REJECTED`]: a write was refused.
    Rejected {
        /// The write's id.
        write: S,
        /// The writer.
        #[serde(skip_serializing_if = "Option::is_none")]
        client: Option<S>,
        /// The token it carried.
        #[serde(skip_serializing_if = "Option::is_none")]
        token: Option<u64>,
        /// Why.
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<S>,
        /// The largest token the storage had seen.
        #[serde(skip_serializing_if = "Option::is_none")]
        max_token: Option<u64>,
        /// The storage key.
        #[serde(skip_serializing_if = "Option::is_none")]
        key: Option<S>,
    },
}

impl<'a> DomainEvent<&'a str> {
    /// Decodes `event` when its kind is a domain kind (`Ok(None)`: it is
    /// not); a missing or mistyped field is an error.
    pub fn decode(event: &'a Event) -> Result<Option<Self>, DecodeError> {
        Self::decode_from(&event)
    }

    /// Decodes from any field source (a journal event, a deserialized one).
    pub fn decode_from(f: &impl Fields<'a>) -> Result<Option<Self>, DecodeError> {
        use DomainEvent as D;
        Ok(Some(match f.kind() {
            ACQUIRED => D::Acquired {
                lease: f.req("lease")?,
                token: f.opt("token")?,
                ttl_ms: f.opt("ttl_ms")?,
                ends: f.opt("ends")?,
            },
            DENIED => D::Denied,
            READ => D::Read {
                value: f.req("value")?,
                version: f.opt("version")?,
            },
            WROTE => D::Wrote {
                write: f.req("write")?,
                token: f.opt("token")?,
                value: f.opt("value")?,
                op: one_of(f, "op", OPS)?.unwrap_or(Op::Put),
            },
            ACKED => D::Acked {
                write: f.req("write")?,
                ok: f.req("ok")?,
                op: one_of(f, "op", OPS)?,
            },
            // The lock's `released` and `renewed` name the client; the
            // client's own do not.
            RELEASED => match f.opt("client")? {
                Some(client) => D::LockReleased {
                    client,
                    lease: f.req("lease")?,
                },
                None => D::Released {
                    lease: f.req("lease")?,
                },
            },
            RENEWED => match f.opt("client")? {
                Some(client) => D::LockRenewed {
                    client,
                    lease: f.req("lease")?,
                    ttl_ms: f.opt("ttl_ms")?,
                    mono_ns: f.opt("mono_ns")?,
                },
                None => D::Renewed {
                    lease: f.req("lease")?,
                    ttl_ms: f.opt("ttl_ms")?,
                    asked_ago_ns: f.opt("asked_ago_ns")?,
                },
            },
            LOST => D::Lost,
            CHECKED => D::Checked {
                lease: f.opt("lease")?,
                remaining_ms: f.opt("remaining_ms")?,
            },
            LAPSED => D::Lapsed {
                lease: f.opt("lease")?,
                overdue_ms: f.opt("overdue_ms")?,
            },
            FENCED => D::Fenced {
                write: f.req("write")?,
                token: f.opt("token")?,
            },
            GRANTED => D::Granted {
                client: f.req("client")?,
                lease: f.req("lease")?,
                token: f.opt("token")?,
                ttl_ms: f.opt("ttl_ms")?,
                mono_ns: f.opt("mono_ns")?,
            },
            EXPIRED => D::Expired {
                client: f.req("client")?,
                lease: f.req("lease")?,
                reason: f.opt("reason")?,
                mono_ns: f.opt("mono_ns")?,
            },
            ACCEPTED => D::Accepted {
                write: f.req("write")?,
                client: f.opt("client")?,
                token: f.opt("token")?,
                value: f.opt("value")?,
                key: f.opt("key")?,
                precondition: f.opt("precondition")?,
            },
            REJECTED => D::Rejected {
                write: f.req("write")?,
                client: f.opt("client")?,
                token: f.opt("token")?,
                reason: f.opt("reason")?,
                max_token: f.opt("max_token")?,
                key: f.opt("key")?,
            },
            _ => return Ok(None),
        }))
    }
}

impl<S> DomainEvent<S> {
    /// The journal kind this event is.
    pub fn kind(&self) -> &'static str {
        use DomainEvent as D;
        match self {
            D::Acquired { .. } => ACQUIRED,
            D::Denied => DENIED,
            D::Read { .. } => READ,
            D::Wrote { .. } => WROTE,
            D::Acked { .. } => ACKED,
            D::Released { .. } | D::LockReleased { .. } => RELEASED,
            D::Lost => LOST,
            D::Checked { .. } => CHECKED,
            D::Lapsed { .. } => LAPSED,
            D::Renewed { .. } | D::LockRenewed { .. } => RENEWED,
            D::Fenced { .. } => FENCED,
            D::Granted { .. } => GRANTED,
            D::Expired { .. } => EXPIRED,
            D::Accepted { .. } => ACCEPTED,
            D::Rejected { .. } => REJECTED,
        }
    }

    /// The role of the node that writes this event.
    pub fn role(&self) -> Role {
        use DomainEvent as D;
        match self {
            D::Granted { .. }
            | D::Expired { .. }
            | D::LockReleased { .. }
            | D::LockRenewed { .. } => Role::Lock,
            D::Accepted { .. } | D::Rejected { .. } => Role::Storage,
            _ => Role::Client,
        }
    }

    /// The token this event carries, if any.
    pub fn token(&self) -> Option<u64> {
        use DomainEvent as D;
        match *self {
            D::Acquired { token, .. }
            | D::Wrote { token, .. }
            | D::Fenced { token, .. }
            | D::Granted { token, .. }
            | D::Accepted { token, .. }
            | D::Rejected { token, .. } => token,
            _ => None,
        }
    }

    /// For an `acquired`: how many lock-node ends end the grant (at least 1).
    pub fn ends_needed(&self) -> u64 {
        match *self {
            DomainEvent::Acquired { ends, .. } => ends.unwrap_or(1).max(1),
            _ => 1,
        }
    }

    /// The same event with each string passed through `f` (to own a
    /// borrowed event's strings: `e.map(str::to_owned)`).
    pub fn map<T>(self, mut f: impl FnMut(S) -> T) -> DomainEvent<T> {
        use DomainEvent as D;
        match self {
            D::Acquired {
                lease,
                token,
                ttl_ms,
                ends,
            } => D::Acquired {
                lease,
                token,
                ttl_ms,
                ends,
            },
            D::Denied => D::Denied,
            D::Read { value, version } => D::Read { value, version },
            D::Wrote {
                write,
                token,
                value,
                op,
            } => D::Wrote {
                write: f(write),
                token,
                value,
                op,
            },
            D::Acked { write, ok, op } => D::Acked {
                write: f(write),
                ok,
                op,
            },
            D::Released { lease } => D::Released { lease },
            D::Lost => D::Lost,
            D::Checked {
                lease,
                remaining_ms,
            } => D::Checked {
                lease,
                remaining_ms,
            },
            D::Lapsed { lease, overdue_ms } => D::Lapsed { lease, overdue_ms },
            D::Renewed {
                lease,
                ttl_ms,
                asked_ago_ns,
            } => D::Renewed {
                lease,
                ttl_ms,
                asked_ago_ns,
            },
            D::Fenced { write, token } => D::Fenced {
                write: f(write),
                token,
            },
            D::Granted {
                client,
                lease,
                token,
                ttl_ms,
                mono_ns,
            } => D::Granted {
                client: f(client),
                lease,
                token,
                ttl_ms,
                mono_ns,
            },
            D::Expired {
                client,
                lease,
                reason,
                mono_ns,
            } => D::Expired {
                client: f(client),
                lease,
                reason: reason.map(f),
                mono_ns,
            },
            D::LockReleased { client, lease } => D::LockReleased {
                client: f(client),
                lease,
            },
            D::LockRenewed {
                client,
                lease,
                ttl_ms,
                mono_ns,
            } => D::LockRenewed {
                client: f(client),
                lease,
                ttl_ms,
                mono_ns,
            },
            D::Accepted {
                write,
                client,
                token,
                value,
                key,
                precondition,
            } => D::Accepted {
                write: f(write),
                client: client.map(&mut f),
                token,
                value,
                key: key.map(&mut f),
                precondition: precondition.map(&mut f),
            },
            D::Rejected {
                write,
                client,
                token,
                reason,
                max_token,
                key,
            } => D::Rejected {
                write: f(write),
                client: client.map(&mut f),
                token,
                reason: reason.map(&mut f),
                max_token,
                key: key.map(&mut f),
            },
        }
    }
}

impl<'de> serde::Deserialize<'de> for DomainEvent<String> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = RawEvent::deserialize(d)?;
        match DomainEvent::decode_from(&&raw) {
            Ok(Some(e)) => Ok(e.map(str::to_owned)),
            Ok(None) => Err(serde::de::Error::custom(format_args!(
                "`{}` is not a domain event kind",
                raw.kind
            ))),
            Err(e) => Err(serde::de::Error::custom(e)),
        }
    }
}

/// What a node is in a run: what it may journal, and where its lane goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// A client of the lock.
    Client,
    /// A lock node.
    Lock,
    /// A storage node.
    Storage,
}

/// A journal event decoded: the world's, a design's, or a kind neither
/// vocabulary knows (a user design's own events, which readers show by
/// their fields and otherwise leave alone).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Decoded<'a> {
    /// One of the world's kinds.
    World(WorldEvent<&'a str>),
    /// One of the lock domain's kinds.
    Domain(DomainEvent<&'a str>),
    /// Another kind.
    Other,
}

/// Decodes `event` into the world's or the domain's vocabulary: the one
/// decoder every reader goes through.
pub fn decode(event: &Event) -> Result<Decoded<'_>, DecodeError> {
    if let Some(w) = WorldEvent::decode(event)? {
        return Ok(Decoded::World(w));
    }
    Ok(match DomainEvent::decode(event)? {
        Some(d) => Decoded::Domain(d),
        None => Decoded::Other,
    })
}

/// [`decode`], for readers that treat an event that does not decode (a
/// user design's event missing a field) as one of a kind they do not know.
pub fn decoded(event: &Event) -> Decoded<'_> {
    decode(event).unwrap_or(Decoded::Other)
}
