//! The messages clients, lock services and storages exchange.
//!
//! Every design speaks this protocol, so a user's lock service works with the
//! bundled clients and storages, and the other way round. It is what any
//! lock and storage share: acquire, grant, deny, release and renew with
//! their answers, read and write with theirs. A design with a wire protocol
//! of its own carries its messages in [`Msg::Design`], a [`Payload`] of its
//! own type, without editing fencesim: so do etcd's leases and keep-alives
//! ([`crate::design::etcd::EtcdCall`]) and the session designs' sessions
//! ([`crate::design::session::SessionMsg`]).

use std::any::Any;
use std::fmt::{Debug, Write as _};
use std::time::Duration;

/// How a write changes the stored value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Blind write of a value.
    Put,
    /// Read-modify-write: the value read plus one.
    Increment,
    /// A token-only write of no value (`fence_on_acquire`): the storage
    /// checks and records the token as for any write but leaves the data
    /// alone, so it learns a new holder's token before that holder's first
    /// real write. The oracle does not count it as a data write.
    Fence,
}

impl Op {
    /// `put` or `increment`, as in the journal.
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Put => "put",
            Op::Increment => "increment",
            Op::Fence => "fence",
        }
    }
}

/// One message.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Msg {
    /// Client → lock: may I have the lock? `req` identifies the request.
    Acquire {
        /// Request id, echoed in the answer.
        req: u64,
    },
    /// Lock → client: yes, until `ttl` has passed on the lock's clock.
    Granted {
        /// The request answered.
        req: u64,
        /// The lease's id at this lock.
        lease: u64,
        /// Fencing token, when the lock hands them out.
        token: Option<u64>,
        /// Lease duration.
        ttl: Duration,
    },
    /// Lock → client: no, someone else holds it.
    Denied {
        /// The request answered.
        req: u64,
    },
    /// Client → lock: I give lease `lease` up.
    Release {
        /// The lease released.
        lease: u64,
    },
    /// Lock → client: the release was handled.
    ReleaseAck {
        /// The lease released.
        lease: u64,
    },
    /// Client → storage: read `key`.
    Read {
        /// Request id, echoed in the answer.
        req: u64,
        /// The key read.
        key: String,
    },
    /// Storage → client: the value of a key.
    ReadReply {
        /// The request answered.
        req: u64,
        /// The stored value (0 if never written).
        value: i64,
        /// How many writes the key has taken.
        version: u64,
    },
    /// Client → storage: write `value` to `key` under the sender's grant.
    Write {
        /// Write id, unique in a run (`client1/1`).
        write: String,
        /// The grant's fencing token, if any.
        token: Option<u64>,
        /// The key written.
        key: String,
        /// The new value.
        value: i64,
        /// Blind write or increment.
        op: Op,
        /// The key's version the writer read (an increment passes the
        /// version of its read; a blind write has none). A `cas` storage
        /// applies the write only if the key is still at this version, like
        /// S3's `If-Match` or GCS's `ifGenerationMatch`; other storages
        /// ignore it.
        expect_version: Option<u64>,
    },
    /// Client → lock: extend lease `lease`, which I still hold (the `renew`
    /// client variant). Every bundled lock design answers it with
    /// [`Msg::RenewReply`]: `lease` restarts the TTL, `redis` and each
    /// `redlock` node extend the key's expiry if it still holds the
    /// client's value (`PEXPIRE` in a compare script), `etcd` keeps the
    /// lease alive (`LeaseKeepAliveOnce`), and the session designs
    /// heartbeat the session that holds the lock.
    Renew {
        /// The lease to extend.
        lease: u64,
        /// Request id, echoed in the answer: a client believes an extension
        /// only from when it asked for it, so it must know which request a
        /// (possibly duplicated, possibly late) answer is for.
        req: u64,
    },
    /// Lock → client: the answer to [`Msg::Renew`].
    RenewReply {
        /// The lease the request named.
        lease: u64,
        /// The request answered.
        req: u64,
        /// Whether the lease was still the sender's and has been extended.
        ok: bool,
        /// The lease's new duration from now, on the lock's clock (zero when
        /// refused).
        ttl: Duration,
    },
    /// Storage → client: the write was applied (`ok`) or refused.
    WriteReply {
        /// The write answered.
        write: String,
        /// Whether it was applied.
        ok: bool,
    },
    /// A message of a design's own protocol, which fencesim carries without
    /// knowing its type: see [`Payload`] and [`Msg::design`].
    Design(DesignMsg),
}

impl Msg {
    /// `payload`, a message of a design's own type, as a [`Msg::Design`].
    pub fn design<T: Payload>(payload: T) -> Msg {
        Msg::Design(DesignMsg::new(payload))
    }

    /// The payload of a [`Msg::Design`] if it is a `T`.
    pub fn as_design<T: Payload>(&self) -> Option<&T> {
        match self {
            Msg::Design(m) => m.downcast_ref(),
            _ => None,
        }
    }
}

/// A message type a design brings for its own protocol, carried by
/// [`Msg::Design`]: fencesim sends, delays, drops and duplicates it like any
/// other message, and journals it by its [`Payload::summary`], which every
/// report and `step` show (escaped, as all journal text).
///
/// ```
/// use fencesim::protocol::{Msg, Payload};
///
/// #[derive(Clone, Debug, PartialEq)]
/// enum Ticket {
///     Ask { req: u64 },
///     Busy { req: u64 },
/// }
///
/// impl Payload for Ticket {
///     fn summary(&self) -> String {
///         match self {
///             Ticket::Ask { req } => format!("ticket? req={req}"),
///             Ticket::Busy { req } => format!("busy req={req}"),
///         }
///     }
/// }
///
/// let msg = Msg::design(Ticket::Ask { req: 1 });
/// assert_eq!(msg.as_design::<Ticket>(), Some(&Ticket::Ask { req: 1 }));
/// assert_eq!(sim::Message::summary(&msg), "ticket? req=1");
/// assert_ne!(msg, Msg::design(Ticket::Busy { req: 1 }));
/// ```
pub trait Payload: Any + Clone + Debug + PartialEq + Send {
    /// A short line for the journal and the reports; by default the
    /// message's `Debug` form.
    fn summary(&self) -> String {
        format!("{self:?}")
    }
}

/// What [`DesignMsg`] needs of a [`Payload`], object-safe.
trait DynPayload: Debug + Send {
    fn summary(&self) -> String;
    fn clone_box(&self) -> Box<dyn DynPayload>;
    fn eq_dyn(&self, other: &dyn DynPayload) -> bool;
    fn as_any(&self) -> &dyn Any;
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

impl<T: Payload> DynPayload for T {
    fn summary(&self) -> String {
        Payload::summary(self)
    }
    fn clone_box(&self) -> Box<dyn DynPayload> {
        Box::new(self.clone())
    }
    fn eq_dyn(&self, other: &dyn DynPayload) -> bool {
        other.as_any().downcast_ref::<T>() == Some(self)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

/// A design's own message, of a type fencesim does not know: make one with
/// [`Msg::design`], read it with [`DesignMsg::downcast_ref`] (or
/// [`Msg::as_design`]). Two are equal when they hold equal values of the
/// same type.
#[derive(Debug)]
pub struct DesignMsg(Box<dyn DynPayload>);

impl DesignMsg {
    /// Wraps `payload`.
    pub fn new<T: Payload>(payload: T) -> Self {
        DesignMsg(Box::new(payload))
    }

    /// The payload, if it is a `T`.
    pub fn downcast_ref<T: Payload>(&self) -> Option<&T> {
        self.0.as_any().downcast_ref()
    }

    /// The payload by value, if it is a `T`; else the message back.
    pub fn downcast<T: Payload>(self) -> Result<T, Self> {
        if self.0.as_any().is::<T>() {
            let any = self.0.into_any();
            Ok(*any.downcast::<T>().expect("the type was just checked"))
        } else {
            Err(self)
        }
    }

    /// The payload's [`Payload::summary`].
    pub fn summary(&self) -> String {
        self.0.summary()
    }
}

impl Clone for DesignMsg {
    fn clone(&self) -> Self {
        DesignMsg(self.0.clone_box())
    }
}

impl PartialEq for DesignMsg {
    fn eq(&self, other: &Self) -> bool {
        self.0.eq_dyn(other.0.as_ref())
    }
}

impl sim::Message for Msg {
    fn summary(&self) -> String {
        let mut s = String::new();
        let token = |s: &mut String, t: &Option<u64>| {
            if let Some(t) = t {
                write!(s, " token={t}").unwrap();
            }
        };
        match self {
            Msg::Acquire { req } => write!(s, "acquire req={req}").unwrap(),
            Msg::Granted {
                lease, token: t, ..
            } => {
                write!(s, "grant lease={lease}").unwrap();
                token(&mut s, t);
            }
            Msg::Denied { .. } => s.push_str("deny"),
            Msg::Release { lease } => write!(s, "release lease={lease}").unwrap(),
            Msg::ReleaseAck { lease } => write!(s, "released lease={lease}").unwrap(),
            Msg::Renew { lease, .. } => write!(s, "renew lease={lease}").unwrap(),
            Msg::RenewReply { lease, ok, .. } => {
                let what = if *ok { "renewed" } else { "renew refused" };
                write!(s, "{what} lease={lease}").unwrap()
            }
            Msg::Read { key, .. } => write!(s, "read {key}").unwrap(),
            Msg::ReadReply { value, .. } => write!(s, "value {value}").unwrap(),
            Msg::Write {
                write,
                token: t,
                expect_version,
                ..
            } => {
                write!(s, "write {write}").unwrap();
                token(&mut s, t);
                if let Some(v) = expect_version {
                    write!(s, " if-version={v}").unwrap();
                }
            }
            Msg::WriteReply { write, ok } => {
                write!(s, "{} {write}", if *ok { "ok" } else { "rejected" }).unwrap()
            }
            Msg::Design(m) => s.push_str(&m.summary()),
        }
        s
    }
}
