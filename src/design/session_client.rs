//! The client protocol the session designs share: acquire and release
//! within a session kept alive by [`ClientSession`], with retried requests
//! and releases so that a lost message strands no lock.

use std::time::Duration;

use sim::{Context, NodeId};

use crate::design::lock_client::{Grant, LockClient, LockContext, LockEvent};
use crate::design::session::{ClientSession, SessionEvent, SessionMsg, SessionTimer};
use crate::protocol::Msg;

/// When a client learns that the lock it held is gone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossNotice {
    /// As soon as the server says its session expired (ZooKeeper's
    /// `Expired` state, Chubby's session loss): the lock went with it.
    OnSessionExpiry,
    /// Only when its next lock call is answered with
    /// [`SessionMsg::LockLost`] (Hazelcast's `LockOwnershipLostException`).
    OnNextLockCall,
}

/// The client protocol of the session designs: open a session, keep it
/// alive, acquire within it ([`SessionMsg::SessionAcquire`]), release
/// ([`SessionMsg::SessionRelease`]).
///
/// A request given up unanswered (the workload timed out) is sent again with
/// the **same** request id when the workload next acquires, so the server
/// answers it again instead of acting twice (Hazelcast's invocation UIDs,
/// Curator's protected mode): an answer lost in the network strands no lock.
/// A grant or queue slot for a request given up that arrives later is
/// released at once. When the session expires while acquiring, a new one is
/// opened and the request sent again. A release is sent again with each
/// heartbeat until the server answers it, so a lost release strands no lock
/// either. A renewal is a [`Msg::Renew`] of the lease held, which the
/// server answers by heartbeating the session that holds it; only the
/// answer to the latest renewal counts, once.
#[derive(Debug)]
pub struct SessionLockClient {
    session: ClientSession,
    notice: LossNotice,
    req: u64,
    /// The acquire request in progress.
    waiting: Option<u64>,
    /// An acquire request given up before any answer: the next acquire
    /// sends it again.
    unanswered: Option<u64>,
    /// (session, lease) of a queued request (ZooKeeper's znode).
    queued: Option<(u64, u64)>,
    /// (session, lease) held.
    held: Option<(u64, u64)>,
    /// Releases not answered yet: (session, lease), oldest first, at most
    /// [`MAX_UNACKED_RELEASES`].
    releasing: Vec<(u64, u64)>,
    /// Renewal requests sent.
    renewals: u64,
    /// The renewal awaited: only its answer moves the lease.
    renewing: Option<u64>,
}

/// Releases a client keeps sending until answered; older ones are dropped.
pub const MAX_UNACKED_RELEASES: usize = 8;

impl SessionLockClient {
    /// The client a session design hands each scenario client: it talks to
    /// the first lock node and heartbeats every `heartbeat`, or every
    /// `ttl / divisor` when `heartbeat` is zero (the designs' `"0s"`
    /// default; see [`heartbeat_interval`](crate::design::session::heartbeat_interval)).
    pub fn for_design(
        lock_nodes: &[String],
        heartbeat: Duration,
        ttl: Duration,
        divisor: u32,
        notice: LossNotice,
    ) -> Box<dyn crate::design::lock_client::AnyLockClient> {
        let heartbeat = crate::design::session::heartbeat_interval(heartbeat, ttl, divisor);
        Box::new(SessionLockClient::new(
            lock_nodes[0].clone(),
            heartbeat,
            notice,
        ))
    }

    /// Talks to the lock node `lock`, heartbeating every `heartbeat`.
    pub fn new(lock: impl Into<String>, heartbeat: Duration, notice: LossNotice) -> Self {
        SessionLockClient {
            session: ClientSession::new(lock, heartbeat),
            notice,
            req: 0,
            waiting: None,
            unanswered: None,
            queued: None,
            held: None,
            releasing: Vec::new(),
            renewals: 0,
            renewing: None,
        }
    }

    /// The open session's id, if any.
    pub fn session(&self) -> Option<u64> {
        self.session.id()
    }

    /// Sends the acquire in progress, unless releases are still unanswered:
    /// like a synchronous unlock before the next lock, it waits for them, so
    /// that it cannot arrive first and find the lock still its own.
    fn send_acquire(&mut self, ctx: &mut Context<'_, Msg>, session: u64) {
        if let Some(req) = self.waiting {
            if self.releasing.is_empty() {
                let lock = self.session.lock(ctx);
                ctx.send(
                    lock,
                    Msg::design(SessionMsg::SessionAcquire { session, req }),
                );
            }
        }
    }

    /// A release was answered: a deferred acquire may go now.
    fn release_answered(&mut self, ctx: &mut Context<'_, Msg>, lease: u64) {
        let before = self.releasing.len();
        self.releasing.retain(|&(_, l)| l != lease);
        if before > 0 && self.releasing.is_empty() {
            if let Some(session) = self.session.id() {
                self.send_acquire(ctx, session);
            }
        }
    }

    fn send_release(&mut self, ctx: &mut Context<'_, Msg>, session: u64, lease: u64) {
        if !self.releasing.contains(&(session, lease)) {
            if self.releasing.len() == MAX_UNACKED_RELEASES {
                self.releasing.remove(0);
            }
            self.releasing.push((session, lease));
        }
        let lock = self.session.lock(ctx);
        ctx.send(
            lock,
            Msg::design(SessionMsg::SessionRelease { session, lease }),
        );
    }

    /// A grant or queue slot for a request given up: hand it back.
    fn give_back(&mut self, ctx: &mut Context<'_, Msg>, lease: u64) {
        if self.held.is_some_and(|(_, held)| held == lease) {
            // The same grant answered twice (a retried request): keep it.
            return;
        }
        if let Some(session) = self.session.id() {
            self.send_release(ctx, session, lease);
        }
    }
}

impl LockClient for SessionLockClient {
    type Timer = SessionTimer;

    fn acquire(&mut self, ctx: &mut LockContext<'_, '_, SessionTimer>) {
        let req = self.unanswered.take().unwrap_or_else(|| {
            self.req += 1;
            self.req
        });
        self.waiting = Some(req);
        if let Some(session) = self.session.open(ctx) {
            self.send_acquire(ctx, session);
        }
    }

    fn release(&mut self, ctx: &mut LockContext<'_, '_, SessionTimer>) {
        self.renewing = None;
        if let Some(req) = self.waiting.take() {
            if self.queued.is_none() {
                self.unanswered = Some(req);
            }
        }
        self.session.abandon_opening();
        for (session, lease) in [self.queued.take(), self.held.take()].into_iter().flatten() {
            self.send_release(ctx, session, lease);
        }
    }

    fn on_message(
        &mut self,
        ctx: &mut LockContext<'_, '_, SessionTimer>,
        _from: NodeId,
        msg: &Msg,
    ) -> LockEvent {
        let open_before = self.session.id();
        match self.session.on_message(ctx, msg) {
            SessionEvent::Opened(session) => {
                self.send_acquire(ctx, session);
                return LockEvent::Nothing;
            }
            SessionEvent::Expired(session) => {
                // Whatever the session held is gone: nothing left to release.
                let before = self.releasing.len();
                self.releasing.retain(|&(s, _)| s != session);
                if let Some(open) = self.session.id() {
                    if before > 0 && self.releasing.is_empty() {
                        self.send_acquire(ctx, open);
                    }
                }
                if self.queued.is_some_and(|(s, _)| s == session) {
                    self.queued = None;
                }
                if open_before == Some(session) {
                    // Requests sent on the dead session are void: the next
                    // session asks under a new id, so that an answer sent
                    // before the expiry and delivered after it (a grant of
                    // a znode already gone) is handed back, not believed.
                    self.unanswered = None;
                    if self.waiting.is_some() {
                        self.req += 1;
                        self.waiting = Some(self.req);
                    }
                }
                if self.waiting.is_some() && self.session.id().is_none() {
                    self.session.open(ctx);
                }
                let held_there = self.held.is_some_and(|(s, _)| s == session);
                if held_there && self.notice == LossNotice::OnSessionExpiry {
                    self.held = None;
                    return LockEvent::Lost;
                }
                return LockEvent::Nothing;
            }
            SessionEvent::None => {}
        }
        match (msg, msg.as_design::<SessionMsg>()) {
            (_, Some(&SessionMsg::Queued { req, lease })) => match self.session.id() {
                Some(session) if self.waiting == Some(req) => {
                    self.queued = Some((session, lease));
                }
                _ => self.give_back(ctx, lease),
            },
            (
                &Msg::Granted {
                    req,
                    lease,
                    token,
                    ttl,
                },
                _,
            ) => match self.session.id() {
                Some(session) if self.waiting == Some(req) => {
                    self.waiting = None;
                    self.queued = None;
                    self.held = Some((session, lease));
                    return LockEvent::Acquired(Grant::new(lease, token, ttl));
                }
                _ => self.give_back(ctx, lease),
            },
            (&Msg::Denied { req }, _) if self.waiting == Some(req) => {
                self.waiting = None;
                return LockEvent::Denied;
            }
            (&Msg::ReleaseAck { lease }, _) => self.release_answered(ctx, lease),
            (
                &Msg::RenewReply {
                    lease,
                    req,
                    ok,
                    ttl,
                },
                _,
            ) if self.held.is_some_and(|(_, held)| held == lease) && self.renewing == Some(req) => {
                self.renewing = None;
                if ok {
                    return LockEvent::Renewed(ttl);
                }
                // The session that held the lock is gone, and the lock with it.
                self.held = None;
                return LockEvent::Lost;
            }
            (_, Some(&SessionMsg::LockLost { lease })) => match self.held {
                // Ownership lost: of the lease held, or of the one just
                // released (its release was the "next lock call").
                Some((_, held)) if held != lease => {}
                _ => {
                    self.release_answered(ctx, lease);
                    self.held = None;
                    return LockEvent::Lost;
                }
            },
            _ => {}
        }
        LockEvent::Nothing
    }

    fn on_timer(
        &mut self,
        ctx: &mut LockContext<'_, '_, SessionTimer>,
        timer: SessionTimer,
    ) -> LockEvent {
        if self.session.on_timer(ctx, timer) {
            // A heartbeat went out: so do the releases still unanswered.
            for (session, lease) in self.releasing.clone() {
                self.send_release(ctx, session, lease);
            }
        }
        LockEvent::Nothing
    }

    /// The lock lives as long as the session: the server heartbeats the
    /// session that holds the lease, and says so.
    fn renew(&mut self, ctx: &mut LockContext<'_, '_, SessionTimer>) -> bool {
        // Asked even when the session that took the lease is known to be
        // gone (Hazelcast hears of the loss on its next lock call): the
        // server's refusal is the answer.
        let Some((_, lease)) = self.held else {
            return false;
        };
        self.renewals += 1;
        let req = self.renewals;
        self.renewing = Some(req);
        let lock = self.session.lock(ctx);
        ctx.send(lock, Msg::Renew { lease, req });
        true
    }

    /// Queued once the server answered [`SessionMsg::Queued`] on the open
    /// session: its grant comes when the znode ahead of it goes.
    fn is_queued(&self) -> bool {
        self.waiting.is_some() && self.queued.is_some()
    }

    fn recheck(&mut self, ctx: &mut LockContext<'_, '_, SessionTimer>) {
        if let Some(session) = self.session.id() {
            if self.queued.is_some_and(|(s, _)| s == session) {
                self.send_acquire(ctx, session);
            }
        }
    }

    fn on_crash(&mut self) {
        self.session.on_crash();
        self.waiting = None;
        self.unanswered = None;
        self.releasing.clear();
        self.queued = None;
        self.held = None;
        self.renewing = None;
    }
}

/// Driving a [`LockClient`] by hand in unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use std::time::Duration;

    use sim::testing::{Harness, Step};
    use sim::{Actor, Context, NodeId, TimerId};

    use crate::design::lock_client::{
        timer_tag, AnyLockClient, LockClient, LockEvent, ProtocolTimer,
    };
    use crate::design::session::SessionMsg;
    use crate::protocol::Msg;

    enum Call {
        Acquire,
        Release,
        Renew,
    }

    /// The server's [`Msg::Granted`].
    pub(crate) fn granted_msg(req: u64, lease: u64, token: Option<u64>, ttl: Duration) -> Msg {
        Msg::Granted {
            req,
            lease,
            token,
            ttl,
        }
    }

    /// Hosts a lock client as an actor: calls go in through `on_start`.
    pub(crate) struct Host {
        lock: Box<dyn AnyLockClient>,
        call: Option<Call>,
        event: LockEvent,
        renewed: bool,
    }

    impl Host {
        pub(crate) fn new(lock: impl LockClient) -> Self {
            Host {
                lock: Box::new(lock),
                call: None,
                event: LockEvent::Nothing,
                renewed: false,
            }
        }

        /// `protocol` as `client1` beside node `lock` (node 1), acquiring,
        /// its session `session` (of `ttl`) just opened.
        pub(crate) fn opened(
            protocol: impl LockClient,
            session: u64,
            ttl: Duration,
        ) -> (Harness, Host) {
            let mut h = Harness::new(&["client1", "lock"], 0);
            let mut c = Host::new(protocol);
            c.acquire(&mut h);
            let opened = Msg::design(SessionMsg::SessionOpened {
                req: 1,
                session,
                ttl,
            });
            c.message(&mut h, 1, opened);
            (h, c)
        }

        fn call(&mut self, h: &mut Harness, call: Call) -> Step<Msg> {
            self.call = Some(call);
            h.start(self)
        }

        pub(crate) fn acquire(&mut self, h: &mut Harness) -> Vec<(NodeId, Msg)> {
            self.call(h, Call::Acquire).sends
        }

        pub(crate) fn release(&mut self, h: &mut Harness) -> Vec<(NodeId, Msg)> {
            self.call(h, Call::Release).sends
        }

        pub(crate) fn renew(&mut self, h: &mut Harness) -> bool {
            self.call(h, Call::Renew);
            self.renewed
        }

        /// A message from `from`: what the protocol reported, and sent.
        pub(crate) fn message(
            &mut self,
            h: &mut Harness,
            from: NodeId,
            msg: Msg,
        ) -> (LockEvent, Vec<(NodeId, Msg)>) {
            let step = h.message(self, from, msg);
            (self.event.clone(), step.sends)
        }

        /// The protocol's `timer` fires.
        pub(crate) fn timer(
            &mut self,
            h: &mut Harness,
            timer: impl ProtocolTimer,
        ) -> (LockEvent, Step<Msg>) {
            let step = h.timer(self, TimerId(u64::MAX), timer_tag(&timer));
            (self.event.clone(), step)
        }
    }

    impl Actor<Msg> for Host {
        fn on_start(&mut self, ctx: &mut Context<'_, Msg>) {
            match self.call.take() {
                Some(Call::Acquire) => self.lock.acquire(ctx),
                Some(Call::Release) => self.lock.release(ctx),
                Some(Call::Renew) => self.renewed = self.lock.renew(ctx),
                None => {}
            }
        }
        fn on_message(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, msg: Msg) {
            self.event = self.lock.on_message(ctx, from, &msg);
        }
        fn on_timer(&mut self, ctx: &mut Context<'_, Msg>, _: TimerId, tag: u64) {
            self.event = self.lock.on_timer(ctx, tag);
        }
    }
}
