//! The client side of a lock protocol, as a sans-IO state machine the bundled
//! [`crate::design::client::Client`] drives.
//!
//! A lock service is two halves: the server actor(s) on the lock node(s), and
//! the protocol a client speaks to them (one request to one server; a majority
//! of N servers for Redlock; a session kept alive by heartbeats for ZooKeeper).
//! A lock design provides both (see [`crate::design::LockDesign`]); the client
//! workload (acquire → work → write → release) is the same for all.
//!
//! A protocol's timers are its own type ([`LockClient::Timer`], a
//! [`ProtocolTimer`]): it sets them with [`LockContext::set_timer`] and gets
//! the same value back in [`LockClient::on_timer`]. A design hands the
//! workload its protocol boxed as [`AnyLockClient`], which every
//! `LockClient` is.
//!
//! # Contract
//!
//! A `LockClient` emits none of [`crate::events`]' kinds: the client
//! workload journals `acquired`, `denied`, `lost`, `renewed` and `released`
//! from the [`LockEvent`]s it returns, so every protocol is judged alike.
//! It may journal its own decisions under kinds of its own
//! (`fencesim::sim::emit!("saw_holder", holder = "client2", expires_in_ms = 4_000)`):
//! the oracle reads past them, and the lanes, the sentences and the reports
//! show them on the client's lane as `saw_holder holder=client2
//! expires_in_ms=4000`. It sends
//! only to lock nodes (the client routes every message from a node other
//! than the storage to [`LockClient::on_message`]), reads time only from the
//! [`Context`], and keeps nothing across [`LockClient::on_crash`] that a real
//! process would lose. [`Grant::ttl`] is what the client believes, counted on
//! its own monotonic clock from the moment it learnt of the grant: the
//! `check_lease` and `renew` client variants rely on it.
//!
//! Networks duplicate, delay and reorder messages, so a protocol acts once
//! on each answer it waits for and ignores every other: a second copy of a
//! grant, a denial or a renewal's answer, and answers to requests it gave
//! up or superseded. It never hands back the lease it holds; a grant of any
//! other lease it does not want is released at once.

use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::time::Duration;

use sim::{Context, NodeId, TimerId};

use crate::design::client::{protocol_tag, protocol_timer};
use crate::design::node_named;
use crate::protocol::Msg;

/// A protocol's timers, in its own words: usually an enum with a variant per
/// kind of timer (`Attempt(req)`, `Heartbeat(session)`). The workload sets
/// each one as a sim timer whose tag encodes [`ProtocolTimer::tag`] in its
/// share of the tag space, and decodes it back with
/// [`ProtocolTimer::from_tag`] when it fires; the journal shows the sim tag.
///
/// The two must agree: `from_tag(t.tag())` is `t`. A tag is at most
/// `u64::MAX - 2^32` (the workload's own timers sit below the protocol's).
pub trait ProtocolTimer: Sized + 'static {
    /// This timer as a number.
    fn tag(&self) -> u64;
    /// The timer that [`ProtocolTimer::tag`] turned into `tag`, or `None`
    /// for a number this protocol never sets (the timer is then ignored).
    fn from_tag(tag: u64) -> Option<Self>;
}

/// The timer type of a protocol that sets none ([`SingleServer`], or any
/// protocol that only answers messages): `type Timer = NoTimer;`. It has no
/// values, so no timer can be set through a `LockContext<NoTimer>`.
///
/// Rust has no stable default for an associated type, so a protocol names
/// its timer type even when it has none; one line, and it keeps
/// [`LockClient`] one trait with typed timers, rather than a second trait
/// that timed protocols implement on top.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoTimer {}

impl ProtocolTimer for NoTimer {
    fn tag(&self) -> u64 {
        match *self {}
    }

    fn from_tag(_: u64) -> Option<Self> {
        None
    }
}

/// A protocol whose one kind of timer carries a number (a term, a request
/// id) may use that number as its timer: `type Timer = u64;`.
impl ProtocolTimer for u64 {
    fn tag(&self) -> u64 {
        *self
    }

    fn from_tag(tag: u64) -> Option<Self> {
        Some(tag)
    }
}

/// [`ProtocolTimer`] for the two shapes the bundled protocols' timers take,
/// written once: an enum with one unit variant (its tag is 0), or an enum
/// of two variants that each carry a number (the first's tag is its number,
/// the second's its number plus 2^31).
///
/// ```ignore
/// timer_tags!(EtcdTimer { KeepAlive });
/// timer_tags!(RedlockTimer { Attempt(u64), Extension(u64) });
/// ```
macro_rules! timer_tags {
    ($ty:ident { $only:ident }) => {
        impl $crate::design::lock_client::ProtocolTimer for $ty {
            fn tag(&self) -> u64 {
                0
            }

            fn from_tag(tag: u64) -> Option<Self> {
                (tag == 0).then_some($ty::$only)
            }
        }
    };
    ($ty:ident { $first:ident(u64), $second:ident(u64) }) => {
        impl $crate::design::lock_client::ProtocolTimer for $ty {
            fn tag(&self) -> u64 {
                match *self {
                    $ty::$first(n) => n,
                    $ty::$second(n) => $crate::design::lock_client::SECOND_TIMER + n,
                }
            }

            fn from_tag(tag: u64) -> Option<Self> {
                Some(
                    match tag.checked_sub($crate::design::lock_client::SECOND_TIMER) {
                        Some(n) => $ty::$second(n),
                        None => $ty::$first(tag),
                    },
                )
            }
        }
    };
}
pub(crate) use timer_tags;

/// Where [`timer_tags!`]'s second kind of numbered timer starts.
pub(crate) const SECOND_TIMER: u64 = 1 << 31;

/// The sim tag the workload sets for a protocol's `timer`: what a
/// [`sim::testing::Harness`] step lists, and what to hand back to
/// [`AnyLockClient`]'s `on_timer` when a protocol is hosted by hand.
pub fn timer_tag<T: ProtocolTimer>(timer: &T) -> u64 {
    protocol_tag(timer.tag())
}

/// A protocol's view of its client node: the node's [`Context`] (through
/// `Deref`, for clocks, names and `send`), whose [`LockContext::set_timer`]
/// takes the protocol's own timer type `T`.
pub struct LockContext<'c, 'a, T> {
    ctx: &'c mut Context<'a, Msg>,
    timer: PhantomData<fn(T)>,
}

impl<'c, 'a, T: ProtocolTimer> LockContext<'c, 'a, T> {
    /// The context of a protocol with timers `T`, on the node of `ctx`.
    pub fn new(ctx: &'c mut Context<'a, Msg>) -> Self {
        LockContext {
            ctx,
            timer: PhantomData,
        }
    }

    /// Sets `timer` to fire after `after` on the node's monotonic clock; it
    /// comes back in [`LockClient::on_timer`]. Cancel it with
    /// `cancel_timer` and the id returned, as any timer.
    pub fn set_timer(&mut self, after: Duration, timer: T) -> TimerId {
        self.ctx.set_timer(after, timer_tag(&timer))
    }

    /// The context for a protocol without timers that this one is made of
    /// (etcd's client is a [`SingleServer`] plus a [`KeepAlive`]).
    pub fn untimed(&mut self) -> LockContext<'_, 'a, NoTimer> {
        LockContext::new(self.ctx)
    }
}

impl<'a, T> Deref for LockContext<'_, 'a, T> {
    type Target = Context<'a, Msg>;

    fn deref(&self) -> &Context<'a, Msg> {
        self.ctx
    }
}

impl<T> DerefMut for LockContext<'_, '_, T> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        self.ctx
    }
}

/// What a client holds after acquiring.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grant {
    /// The lease's id (at the lock service).
    pub lease: u64,
    /// The fencing token, when the service hands them out.
    pub token: Option<u64>,
    /// How long the client may believe it holds the lock, on its own clock,
    /// from `asked` if set, else from the moment it learnt of the grant.
    pub ttl: Duration,
    /// When, on the client's monotonic clock, it sent the request this
    /// grant answers, for a `ttl` that is the lock's own and so counts from
    /// when the lock granted: the client counts it from its request, which
    /// came before, and not from the answer, which may come late. `None`
    /// for a `ttl` already cut to what is left (Redlock's validity).
    pub asked: Option<Duration>,
    /// How many lock-node `expired`/`released` events for this lease end the
    /// grant: 1 for a single server; for a majority held on `k` of N nodes,
    /// `k − majority + 1` (the grant ends when no majority holds it). The
    /// client journals it as `acquired`'s `ends` field when above 1.
    pub ends: u64,
}

impl Grant {
    /// A grant from a single lock server.
    pub fn new(lease: u64, token: Option<u64>, ttl: Duration) -> Self {
        Grant {
            lease,
            token,
            ttl,
            asked: None,
            ends: 1,
        }
    }

    /// The same grant, its `ttl` counted from a request sent at `asked`.
    pub fn asked_at(self, asked: Option<Duration>) -> Self {
        Grant { asked, ..self }
    }
}

/// What a protocol step means for the client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LockEvent {
    /// Nothing the workload needs to know.
    Nothing,
    /// The lock is ours.
    Acquired(Grant),
    /// Not now: someone else holds it. The workload retries later.
    Denied,
    /// The service told us we lost the lock (session expired, ownership lost).
    Lost,
    /// The lease was extended (the answer to the latest
    /// [`LockClient::renew`]): the client may believe it for this long from
    /// when it asked. A protocol reports it once per request, and only for
    /// the latest one: the client counts from its latest request.
    Renewed(Duration),
}

/// The client half of a lock protocol. Every call gets a [`LockContext`]:
/// the node's [`Context`], whose timers are the protocol's own
/// [`LockClient::Timer`], named by what they mean rather than by a number.
pub trait LockClient: 'static {
    /// The timers it sets ([`NoTimer`] if none).
    type Timer: ProtocolTimer;
    /// Start acquiring (again). Answers come through `on_message`.
    fn acquire(&mut self, ctx: &mut LockContext<'_, '_, Self::Timer>);
    /// Give up the lock (or an acquisition in progress).
    fn release(&mut self, ctx: &mut LockContext<'_, '_, Self::Timer>);
    /// A message from a lock node.
    fn on_message(
        &mut self,
        ctx: &mut LockContext<'_, '_, Self::Timer>,
        from: NodeId,
        msg: &Msg,
    ) -> LockEvent;
    /// One of this protocol's timers fired.
    fn on_timer(
        &mut self,
        _ctx: &mut LockContext<'_, '_, Self::Timer>,
        _timer: Self::Timer,
    ) -> LockEvent {
        LockEvent::Nothing
    }
    /// Extend the current lease; `false` if the protocol cannot renew (the
    /// client then stops asking). The answer comes back through
    /// `on_message` as [`LockEvent::Renewed`], or [`LockEvent::Lost`] when
    /// the lease was no longer ours; an answer to an earlier request, or a
    /// second copy of one, is ignored.
    fn renew(&mut self, _ctx: &mut LockContext<'_, '_, Self::Timer>) -> bool {
        false
    }
    /// Whether the acquire in progress is queued at the server, which will
    /// say when the lock is ours (ZooKeeper's watch on the predecessor's
    /// znode, etcd's wait for the deletion of the previous revision's key).
    /// While it is, the workload does not give the request up when it times
    /// out: it calls [`LockClient::recheck`] at ever longer intervals
    /// instead, so a waiter keeps its place and costs a handful of messages
    /// however long it waits. A protocol that polls (`Denied`, then ask
    /// again after `retry`) keeps the default.
    fn is_queued(&self) -> bool {
        false
    }
    /// Asks once more about the queued request, under the same request id,
    /// so that a grant lost in the network is answered again; the server
    /// answers a request it has seen without queueing it twice.
    fn recheck(&mut self, _ctx: &mut LockContext<'_, '_, Self::Timer>) {}
    /// The client crashed: forget everything volatile.
    fn on_crash(&mut self) {}
}

/// A [`LockClient`] of any timer type, as a design hands it to the workload
/// (`Box<dyn AnyLockClient>`, from [`crate::design::LockDesign::client`]).
/// Its methods are those of `LockClient` on a plain [`Context`], with
/// `on_timer` taking the sim tag a timer fired with.
///
/// Why a second trait: with an associated timer type, `dyn LockClient`
/// would have to name it (`dyn LockClient<Timer = …>`), so protocols with
/// different timers could not share one box. This trait erases it; its
/// blanket impl makes every `LockClient` one, so a design writes
/// `Box::new(MyClient::new(…))` and nothing more. It is sealed: timers reach
/// a protocol only typed.
pub trait AnyLockClient: sealed::Erased {}

impl<L: LockClient> AnyLockClient for L {}

/// The erased methods, named apart from [`LockClient`]'s so that a type
/// with both traits in scope calls either without ambiguity; the workload
/// calls them through `dyn AnyLockClient`'s own methods.
mod sealed {
    use super::*;

    pub trait Erased: 'static {
        fn erased_acquire(&mut self, ctx: &mut Context<'_, Msg>);
        fn erased_release(&mut self, ctx: &mut Context<'_, Msg>);
        fn erased_on_message(
            &mut self,
            ctx: &mut Context<'_, Msg>,
            from: NodeId,
            msg: &Msg,
        ) -> LockEvent;
        fn erased_on_timer(&mut self, ctx: &mut Context<'_, Msg>, tag: u64) -> LockEvent;
        fn erased_renew(&mut self, ctx: &mut Context<'_, Msg>) -> bool;
        fn erased_is_queued(&self) -> bool;
        fn erased_recheck(&mut self, ctx: &mut Context<'_, Msg>);
        fn erased_on_crash(&mut self);
    }

    impl<L: LockClient> Erased for L {
        fn erased_acquire(&mut self, ctx: &mut Context<'_, Msg>) {
            self.acquire(&mut LockContext::new(ctx));
        }
        fn erased_release(&mut self, ctx: &mut Context<'_, Msg>) {
            self.release(&mut LockContext::new(ctx));
        }
        fn erased_on_message(
            &mut self,
            ctx: &mut Context<'_, Msg>,
            from: NodeId,
            msg: &Msg,
        ) -> LockEvent {
            self.on_message(&mut LockContext::new(ctx), from, msg)
        }
        fn erased_on_timer(&mut self, ctx: &mut Context<'_, Msg>, tag: u64) -> LockEvent {
            match protocol_timer(tag).and_then(L::Timer::from_tag) {
                Some(timer) => self.on_timer(&mut LockContext::new(ctx), timer),
                None => LockEvent::Nothing,
            }
        }
        fn erased_renew(&mut self, ctx: &mut Context<'_, Msg>) -> bool {
            self.renew(&mut LockContext::new(ctx))
        }
        fn erased_is_queued(&self) -> bool {
            self.is_queued()
        }
        fn erased_recheck(&mut self, ctx: &mut Context<'_, Msg>) {
            self.recheck(&mut LockContext::new(ctx));
        }
        fn erased_on_crash(&mut self) {
            self.on_crash();
        }
    }
}

impl dyn AnyLockClient {
    /// [`LockClient::acquire`].
    pub fn acquire(&mut self, ctx: &mut Context<'_, Msg>) {
        self.erased_acquire(ctx);
    }

    /// [`LockClient::release`].
    pub fn release(&mut self, ctx: &mut Context<'_, Msg>) {
        self.erased_release(ctx);
    }

    /// [`LockClient::on_message`].
    pub fn on_message(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, msg: &Msg) -> LockEvent {
        self.erased_on_message(ctx, from, msg)
    }

    /// A timer with sim tag `tag` fired: [`LockClient::on_timer`] if it is
    /// one of the protocol's, else [`LockEvent::Nothing`].
    pub fn on_timer(&mut self, ctx: &mut Context<'_, Msg>, tag: u64) -> LockEvent {
        self.erased_on_timer(ctx, tag)
    }

    /// [`LockClient::renew`].
    pub fn renew(&mut self, ctx: &mut Context<'_, Msg>) -> bool {
        self.erased_renew(ctx)
    }

    /// [`LockClient::is_queued`].
    pub fn is_queued(&self) -> bool {
        self.erased_is_queued()
    }

    /// [`LockClient::recheck`].
    pub fn recheck(&mut self, ctx: &mut Context<'_, Msg>) {
        self.erased_recheck(ctx);
    }

    /// [`LockClient::on_crash`].
    pub fn on_crash(&mut self) {
        self.erased_on_crash();
    }
}

/// One request to one lock server (`lease`, `redis`, and any design whose
/// server answers [`Msg::Acquire`] with [`Msg::Granted`] or [`Msg::Denied`]).
/// Renews with [`Msg::Renew`], expecting a [`Msg::RenewReply`]; a server
/// that ignores `Renew` simply never extends the lease.
///
/// Idempotent against a network that duplicates, delays and reorders: an
/// answer counts only for the request it names while that request is the
/// one awaited, so a second copy of a grant, denial or renewal answer does
/// nothing. A grant of the lease it holds is never handed back; a grant of
/// any other lease (for a request given up, or a server's second answer to
/// a duplicated request) is released at once, which the server ignores if
/// that lease is no longer the client's.
#[derive(Debug)]
pub struct SingleServer {
    lock: String,
    req: u64,
    waiting: Option<u64>,
    lease: Option<u64>,
    /// Renewal requests sent; their own count, so acquire ids stay as they
    /// were without renewals.
    renewals: u64,
    /// The renewal request awaited: only its answer moves the lease.
    renewing: Option<u64>,
    /// When the awaited acquire request was first sent (a resend keeps it).
    asked: Option<Duration>,
}

impl SingleServer {
    /// Talks to the lock node called `lock`.
    pub fn new(lock: impl Into<String>) -> Self {
        SingleServer {
            lock: lock.into(),
            req: 0,
            waiting: None,
            lease: None,
            renewals: 0,
            renewing: None,
            asked: None,
        }
    }

    /// The lock node.
    pub fn lock(&self, ctx: &Context<'_, Msg>) -> NodeId {
        node_named(ctx, &self.lock)
    }

    /// Whether acquire request `req` is the one awaited.
    pub fn is_waiting_for(&self, req: u64) -> bool {
        self.waiting == Some(req)
    }

    /// Whether an acquire request is awaited.
    pub fn is_waiting(&self) -> bool {
        self.waiting.is_some()
    }

    /// Starts an acquire whose request is the design's own message, built
    /// by `request` from the id it goes under, which it returns: a read
    /// before a conditional put, say. The server's [`Msg::Granted`] or
    /// [`Msg::Denied`] naming that id is then handled as an
    /// [`Msg::Acquire`]'s would be; a protocol that decides on its own that
    /// the lock is not free says so with [`SingleServer::lost`].
    pub fn acquire_with(
        &mut self,
        ctx: &mut Context<'_, Msg>,
        request: impl FnOnce(u64) -> Msg,
    ) -> u64 {
        self.req += 1;
        let req = self.req;
        self.waiting = Some(req);
        self.asked = Some(ctx.now());
        let lock = self.lock(ctx);
        ctx.send(lock, request(req));
        req
    }

    /// Sends the awaited acquire request again, under its own id, as an
    /// [`Msg::Acquire`] (a protocol that began with
    /// [`SingleServer::acquire_with`] resends its own message).
    pub fn resend(&mut self, ctx: &mut Context<'_, Msg>) {
        if let Some(req) = self.waiting {
            let lock = self.lock(ctx);
            ctx.send(lock, Msg::Acquire { req });
        }
    }

    /// The lease held, if any.
    pub fn held(&self) -> Option<u64> {
        self.lease
    }

    /// The server says the lease (or the request awaited) is gone without
    /// any answer to come (etcd's closed session): forgets both, and says
    /// what that means for the workload: [`LockEvent::Lost`] for a lease
    /// held, [`LockEvent::Denied`] for an acquire in progress.
    pub fn lost(&mut self) -> LockEvent {
        let (held, waiting) = (self.lease.take(), self.waiting.take());
        self.renewing = None;
        if held.is_some() {
            LockEvent::Lost
        } else if waiting.is_some() {
            LockEvent::Denied
        } else {
            LockEvent::Nothing
        }
    }
}

/// A lease kept alive by a keep-alive message every `every` on the client's
/// own clock, for as long as the client wants it (etcd's
/// `concurrency.Session` keep-alive loop). A capability a protocol adds to
/// its acquire: the etcd client is a [`SingleServer`] with a `KeepAlive`
/// that sends etcd's own keep-alive. Its one timer is the `timer` it was
/// made with, of the protocol's timer type `T`; the protocol hands it to
/// [`KeepAlive::on_timer`] when it fires.
#[derive(Debug)]
pub struct KeepAlive<T> {
    every: Duration,
    /// The keep-alive of a lease, in the protocol's own message type.
    message: fn(u64) -> Msg,
    /// The timer it sets.
    tick: T,
    lease: Option<u64>,
    timer: Option<TimerId>,
}

impl<T: ProtocolTimer + Clone> KeepAlive<T> {
    /// Keeps a lease alive every `every` once started, by sending
    /// `message(lease)`, with timer `timer`.
    pub fn new(every: Duration, message: fn(u64) -> Msg, timer: T) -> Self {
        assert!(!every.is_zero(), "a keep-alive interval must be positive");
        KeepAlive {
            every,
            message,
            tick: timer,
            lease: None,
            timer: None,
        }
    }

    /// The lease kept alive.
    pub fn lease(&self) -> Option<u64> {
        self.lease
    }

    /// Keeps `lease` alive from now on.
    pub fn start(&mut self, ctx: &mut LockContext<'_, '_, T>, lease: u64) {
        self.lease = Some(lease);
        if self.timer.is_none() {
            self.timer = Some(ctx.set_timer(self.every, self.tick.clone()));
        }
    }

    /// Stops: the lease is given up or gone.
    pub fn stop(&mut self, ctx: &mut Context<'_, Msg>) {
        self.lease = None;
        if let Some(t) = self.timer.take() {
            ctx.cancel_timer(t);
        }
    }

    /// The keep-alive timer fired: the lease's keep-alive goes to `lock`.
    pub fn on_timer(&mut self, ctx: &mut LockContext<'_, '_, T>, lock: NodeId) {
        self.timer = None;
        if let Some(lease) = self.lease {
            ctx.send(lock, (self.message)(lease));
            self.timer = Some(ctx.set_timer(self.every, self.tick.clone()));
        }
    }

    /// The client crashed: its timer went with it.
    pub fn on_crash(&mut self) {
        self.lease = None;
        self.timer = None;
    }
}

impl LockClient for SingleServer {
    type Timer = NoTimer;

    fn acquire(&mut self, ctx: &mut LockContext<'_, '_, NoTimer>) {
        self.acquire_with(ctx, |req| Msg::Acquire { req });
    }

    fn release(&mut self, ctx: &mut LockContext<'_, '_, NoTimer>) {
        self.waiting = None;
        self.renewing = None;
        if let Some(lease) = self.lease.take() {
            let lock = self.lock(ctx);
            ctx.send(lock, Msg::Release { lease });
        }
    }

    fn on_message(
        &mut self,
        ctx: &mut LockContext<'_, '_, NoTimer>,
        from: NodeId,
        msg: &Msg,
    ) -> LockEvent {
        match *msg {
            Msg::Granted {
                req,
                lease,
                token,
                ttl,
            } => {
                if self.waiting == Some(req) {
                    self.waiting = None;
                    self.lease = Some(lease);
                    LockEvent::Acquired(Grant::new(lease, token, ttl).asked_at(self.asked))
                } else {
                    if self.lease != Some(lease) {
                        // Not the lease it holds: a grant for a request
                        // given up already, or a second grant for a
                        // duplicated request. Hand it back.
                        ctx.send(from, Msg::Release { lease });
                    }
                    LockEvent::Nothing
                }
            }
            Msg::Denied { req } if self.waiting == Some(req) => {
                self.waiting = None;
                LockEvent::Denied
            }
            Msg::RenewReply {
                lease,
                req,
                ok,
                ttl,
            } if self.lease == Some(lease) && self.renewing == Some(req) => {
                self.renewing = None;
                if ok {
                    LockEvent::Renewed(ttl)
                } else {
                    self.lease = None;
                    LockEvent::Lost
                }
            }
            _ => LockEvent::Nothing,
        }
    }

    fn renew(&mut self, ctx: &mut LockContext<'_, '_, NoTimer>) -> bool {
        let Some(lease) = self.lease else {
            return false;
        };
        self.renewals += 1;
        let req = self.renewals;
        self.renewing = Some(req);
        let lock = self.lock(ctx);
        ctx.send(lock, Msg::Renew { lease, req });
        true
    }

    fn on_crash(&mut self) {
        self.waiting = None;
        self.lease = None;
        self.renewing = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim::testing::Harness;
    use sim::{Actor, TimerId};

    /// Hosts the protocol: timer tag 0 acquires, tag 1 renews.
    struct Host(SingleServer, Vec<LockEvent>);

    impl Actor<Msg> for Host {
        fn on_message(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, msg: Msg) {
            let event = self.0.on_message(&mut LockContext::new(ctx), from, &msg);
            self.1.push(event);
        }
        fn on_timer(&mut self, ctx: &mut Context<'_, Msg>, _: TimerId, tag: u64) {
            let ctx = &mut LockContext::new(ctx);
            match tag {
                0 => self.0.acquire(ctx),
                _ => assert!(self.0.renew(ctx)),
            }
        }
    }

    const LOCK: NodeId = 1;

    /// `timer` comes back as itself from the tag the workload sets.
    fn round_trip<T: ProtocolTimer + PartialEq + std::fmt::Debug>(timer: T) -> u64 {
        let tag = timer_tag(&timer);
        let back = crate::design::client::protocol_timer(tag).and_then(T::from_tag);
        assert_eq!(back, Some(timer));
        tag
    }

    #[test]
    fn the_bundled_protocols_timers_keep_their_sim_tags() {
        use crate::design::epoch::EpochTimer;
        use crate::design::etcd::EtcdTimer;
        use crate::design::postgres::PgTimer;
        use crate::design::redlock::RedlockTimer;
        use crate::design::session::SessionTimer;
        // Journals and trace hashes carry these numbers: a protocol's share
        // of the tag space starts at 2^32, and the second kind of timer of
        // Redlock and `epoch` at 2^31 within it.
        let (base, second) = (1u64 << 32, 1u64 << 31);
        assert_eq!(round_trip(RedlockTimer::Attempt(7)), base + 7);
        assert_eq!(round_trip(RedlockTimer::Extension(7)), base + second + 7);
        assert_eq!(round_trip(EpochTimer::Election(3)), base + 3);
        assert_eq!(round_trip(EpochTimer::Beat(3)), base + second + 3);
        assert_eq!(round_trip(SessionTimer::Heartbeat(4)), base + 4);
        assert_eq!(round_trip(PgTimer::Retransmit), base);
        assert_eq!(round_trip(EtcdTimer::KeepAlive), base);
    }

    /// A protocol with one kind of timer, denied when its tick fires.
    struct Ticker;

    #[derive(Debug, PartialEq)]
    struct Tick(u64);

    impl ProtocolTimer for Tick {
        fn tag(&self) -> u64 {
            self.0
        }
        fn from_tag(tag: u64) -> Option<Self> {
            (tag < 10).then_some(Tick(tag))
        }
    }

    impl LockClient for Ticker {
        type Timer = Tick;
        fn acquire(&mut self, ctx: &mut LockContext<'_, '_, Tick>) {
            ctx.set_timer(Duration::from_secs(1), Tick(3));
        }
        fn release(&mut self, _: &mut LockContext<'_, '_, Tick>) {}
        fn on_message(
            &mut self,
            _: &mut LockContext<'_, '_, Tick>,
            _: NodeId,
            _: &Msg,
        ) -> LockEvent {
            LockEvent::Nothing
        }
        fn on_timer(&mut self, _: &mut LockContext<'_, '_, Tick>, timer: Tick) -> LockEvent {
            assert_eq!(timer, Tick(3));
            LockEvent::Denied
        }
    }

    /// Hosts a boxed protocol as the workload does.
    struct Boxed(Box<dyn AnyLockClient>, Vec<LockEvent>);

    impl Actor<Msg> for Boxed {
        fn on_start(&mut self, ctx: &mut Context<'_, Msg>) {
            self.0.acquire(ctx);
        }
        fn on_message(&mut self, _: &mut Context<'_, Msg>, _: NodeId, _: Msg) {}
        fn on_timer(&mut self, ctx: &mut Context<'_, Msg>, _: TimerId, tag: u64) {
            let event = self.0.on_timer(ctx, tag);
            self.1.push(event);
        }
    }

    #[test]
    fn a_boxed_protocol_gets_its_own_timers_back_typed_and_nothing_else() {
        let mut h = Harness::new(&["client1", "lock"], 0);
        let mut host = Boxed(Box::new(Ticker), Vec::new());
        let s = h.start(&mut host);
        let (id, after, tag) = s.timers[0];
        assert_eq!((after, tag), (Duration::from_secs(1), (1 << 32) + 3));
        h.timer(&mut host, id, tag);
        // The workload's own tags, and a number the protocol never sets.
        h.timer(&mut host, id, 3);
        h.timer(&mut host, id, (1 << 32) + 10);
        assert_eq!(
            host.1,
            [LockEvent::Denied, LockEvent::Nothing, LockEvent::Nothing]
        );
    }

    fn granted(req: u64, lease: u64) -> Msg {
        Msg::Granted {
            req,
            lease,
            token: None,
            ttl: Duration::from_secs(10),
        }
    }

    #[test]
    fn renews_the_lease_it_holds_and_reports_a_refusal_as_lost() {
        let ttl = Duration::from_secs(10);
        let mut h = Harness::new(&["client1", "lock"], 0);
        let mut host = Host(SingleServer::new("lock"), Vec::new());
        h.timer(&mut host, TimerId(0), 0);
        h.message(&mut host, LOCK, granted(1, 4));
        let s = h.timer(&mut host, TimerId(1), 1);
        assert_eq!(s.sends, vec![(LOCK, Msg::Renew { lease: 4, req: 1 })]);
        let ok = Msg::RenewReply {
            lease: 4,
            req: 1,
            ok: true,
            ttl,
        };
        h.message(&mut host, LOCK, ok.clone());
        assert_eq!(host.1.last(), Some(&LockEvent::Renewed(ttl)));
        // A second copy of the answer is not a second renewal.
        h.message(&mut host, LOCK, ok);
        assert_eq!(host.1.last(), Some(&LockEvent::Nothing));
        h.timer(&mut host, TimerId(1), 1);
        let refused = Msg::RenewReply {
            lease: 4,
            req: 2,
            ok: false,
            ttl: Duration::ZERO,
        };
        h.message(&mut host, LOCK, refused);
        assert_eq!(host.1.last(), Some(&LockEvent::Lost));
        // Nothing left to renew.
        assert_eq!(host.0.lease, None);
    }

    #[test]
    fn only_the_answer_to_the_latest_renewal_counts() {
        let mut h = Harness::new(&["client1", "lock"], 0);
        let mut host = Host(SingleServer::new("lock"), Vec::new());
        h.timer(&mut host, TimerId(0), 0);
        h.message(&mut host, LOCK, granted(1, 4));
        h.timer(&mut host, TimerId(1), 1);
        h.timer(&mut host, TimerId(1), 1);
        // The first request's answer comes late: the client counts from its
        // second request, which this answer does not vouch for.
        let late = Msg::RenewReply {
            lease: 4,
            req: 1,
            ok: true,
            ttl: Duration::from_secs(10),
        };
        h.message(&mut host, LOCK, late);
        assert_eq!(host.1.last(), Some(&LockEvent::Nothing));
    }

    #[test]
    fn a_second_copy_of_its_grant_is_ignored_and_other_grants_handed_back() {
        let mut h = Harness::new(&["client1", "lock"], 0);
        let mut host = Host(SingleServer::new("lock"), Vec::new());
        h.timer(&mut host, TimerId(0), 0);
        h.message(&mut host, LOCK, granted(1, 4));
        assert!(matches!(host.1.last(), Some(LockEvent::Acquired(_))));
        // The duplicate of the grant held: nothing sent, nothing reported.
        let s = h.message(&mut host, LOCK, granted(1, 4));
        assert!(s.sends.is_empty(), "{:?}", s.sends);
        assert_eq!(host.1.last(), Some(&LockEvent::Nothing));
        assert_eq!(host.0.lease, Some(4));
        // A grant of another lease it is not waiting for: handed back.
        let s = h.message(&mut host, LOCK, granted(1, 5));
        assert_eq!(s.sends, vec![(LOCK, Msg::Release { lease: 5 })]);
        assert_eq!(host.0.lease, Some(4));
    }
}
