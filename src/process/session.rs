//! The session the simulated ZooKeeper and Hazelcast clients keep with
//! their server: opened with [`SessionMsg::OpenSession`], kept alive by
//! heartbeats from a task of its own, ended when the server answers anything
//! with [`SessionMsg::SessionExpired`] (or when the client closes it), and
//! the routing of the server's answers to the calls that wait for them.
//!
//! Each request of a session has an id from the node's disk, unique in the
//! run across crashes, and the session knows the ids it sent and the leases
//! (znodes, fences) it was answered about. A task of its own takes from the
//! node's mailbox the server's messages about those, and only those, so
//! that two sessions of one process never take each other's answers:
//!
//! - an answer a call waits for goes to that call, once: a later copy of a
//!   final answer (a grant, a denial, a renewal's answer) is a duplicate
//!   and is dropped;
//! - an answer nobody waits for (the call gave up, or was dropped) is a
//!   stray, handed to the client's own handler (which gives back what the
//!   server gave it);
//! - the session's end wakes every call: a call that has not taken its
//!   answer by then gets none, even if the answer came first, so that no
//!   grant is believed from a session the client knows is gone.
//!
//! A release is sent again with each heartbeat, once its timeout has
//! passed, until the server answers it (Curator's guaranteed delete), so a
//! release lost in the network strands no lock while the session lives.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::future::poll_fn;
use std::rc::Rc;
use std::task::{Poll, Waker};
use std::time::Duration;

use fencesim_env::{select, Either, Signal};
use sim::process::Handle;
use sim::NodeId;

use crate::design::session::SessionMsg;
use crate::protocol::Msg;

/// Request ids, on the node's disk: unique in the run across crashes, so a
/// late answer to an earlier incarnation's request is never this one's.
const REQUESTS: &str = "session/requests";

/// How a session ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum End {
    /// The server said it expired.
    Expired,
    /// The client closed it.
    Closed,
}

/// What an awaited answer answers: a request, or a release of a lease.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Key {
    /// [`Msg::Granted`], [`SessionMsg::Queued`], [`Msg::Denied`] or
    /// [`Msg::RenewReply`] for this request id.
    Req(u64),
    /// [`Msg::ReleaseAck`] or [`SessionMsg::LockLost`] for this lease.
    Lease(u64),
}

/// The answers one call waits for.
struct Slot {
    /// The [`Waiter`] it belongs to.
    waiter: u64,
    answers: VecDeque<Msg>,
    waker: Option<Waker>,
}

#[derive(Default)]
struct State {
    end: Option<End>,
    /// Requests sent on this session (its own opening included).
    requests: BTreeSet<u64>,
    /// Requests whose final answer was taken: later copies are duplicates.
    answered: BTreeSet<u64>,
    /// Leases the server told this session about, or it released.
    leases: BTreeSet<u64>,
    waiting: BTreeMap<Key, Slot>,
    waiters: u64,
    /// Releases not answered yet, each with when it may go again.
    releasing: BTreeMap<u64, Duration>,
    /// Calls waiting for `releasing` to empty.
    settling: Vec<Waker>,
}

impl State {
    /// Wakes the calls waiting for the releases, if none is left.
    fn settled(&mut self) -> Vec<Waker> {
        if self.releasing.is_empty() {
            std::mem::take(&mut self.settling)
        } else {
            Vec::new()
        }
    }
}

/// What a client does with an answer nobody waits for.
pub(crate) type Strays = Rc<dyn Fn(&Session, &Msg)>;

struct Inner {
    handle: Handle<Msg>,
    server: NodeId,
    id: u64,
    ttl: Duration,
    timeout: Duration,
    ended: Signal,
    state: RefCell<State>,
    strays: Strays,
}

/// An open session (see the module documentation). Clones share it.
#[derive(Clone)]
pub(crate) struct Session(Rc<Inner>);

impl Session {
    /// Opens a session with `server`: waits at most `timeout` for its
    /// answer (`None` without one; the session the server may have opened
    /// expires there). Once open, a task sends a heartbeat every
    /// `ttl / divisor` of the session timeout the server answered with (the
    /// bundled session client's default period), and another takes the
    /// server's messages; answers nobody waits for go to `strays`.
    pub(crate) async fn open(
        handle: &Handle<Msg>,
        server: NodeId,
        timeout: Duration,
        divisor: u32,
        strays: Strays,
    ) -> Option<Session> {
        let req = handle.disk().next_u64(REQUESTS);
        handle.send(server, Msg::design(SessionMsg::OpenSession { req }));
        let opened = handle.recv_from(server, move |m| {
            matches!(m.as_design(), Some(&SessionMsg::SessionOpened { req: r, .. }) if r == req)
        });
        let Ok((_, opened)) = handle.timeout(timeout, opened).await else {
            return None;
        };
        let Some(&SessionMsg::SessionOpened {
            session: id, ttl, ..
        }) = opened.as_design()
        else {
            return None;
        };
        let state = State {
            requests: BTreeSet::from([req]),
            ..State::default()
        };
        let session = Session(Rc::new(Inner {
            handle: handle.clone(),
            server,
            id,
            ttl,
            timeout,
            ended: Signal::new(),
            state: RefCell::new(state),
            strays,
        }));
        let every = crate::design::session::heartbeat_interval(Duration::ZERO, ttl, divisor);
        drop(handle.spawn(heartbeats(session.clone(), every)));
        drop(handle.spawn(receive(session.clone())));
        Some(session)
    }

    /// The session's id at the server.
    pub(crate) fn id(&self) -> u64 {
        self.0.id
    }

    /// The session timeout the server answered with.
    pub(crate) fn ttl(&self) -> Duration {
        self.0.ttl
    }

    /// How long a call waits for an answer.
    pub(crate) fn timeout(&self) -> Duration {
        self.0.timeout
    }

    /// The process's handle.
    pub(crate) fn handle(&self) -> &Handle<Msg> {
        &self.0.handle
    }

    /// How the session ended, if it has.
    pub(crate) fn end(&self) -> Option<End> {
        self.0.state.borrow().end
    }

    /// Raised when the session ends.
    pub(crate) fn ended(&self) -> &Signal {
        &self.0.ended
    }

    /// A new request id of this session.
    pub(crate) fn new_request(&self) -> u64 {
        let req = self.0.handle.disk().next_u64(REQUESTS);
        self.0.state.borrow_mut().requests.insert(req);
        req
    }

    /// Sends `msg` to the server.
    pub(crate) fn send(&self, msg: Msg) {
        self.0.handle.send(self.0.server, msg);
    }

    /// Waits for the answers to `key` from now on (register before sending
    /// the request).
    pub(crate) fn expect(&self, key: Key) -> Waiter {
        let mut s = self.0.state.borrow_mut();
        s.waiters += 1;
        let waiter = s.waiters;
        s.waiting.insert(
            key,
            Slot {
                waiter,
                answers: VecDeque::new(),
                waker: None,
            },
        );
        Waiter {
            session: self.clone(),
            key,
            waiter,
        }
    }

    /// Releases `lease` (deletes the znode, unlocks the fence) now, and
    /// again with each heartbeat until the server answers.
    pub(crate) fn release(&self, lease: u64) {
        let again = self.0.handle.now() + self.0.timeout;
        {
            let mut s = self.0.state.borrow_mut();
            if s.end.is_some() {
                return;
            }
            s.leases.insert(lease);
            s.releasing.insert(lease, again);
        }
        self.send_release(lease);
    }

    /// Releases `lease` once: a release that must not be repeated (one of
    /// several holds of a reentrant lock).
    pub(crate) fn release_once(&self, lease: u64) {
        if self.end().is_some() {
            return;
        }
        self.0.state.borrow_mut().leases.insert(lease);
        self.send_release(lease);
    }

    /// Releases `lease` with the next heartbeat: for a drop, which must not
    /// reach the handle (in a crash it must do nothing at all).
    pub(crate) fn release_later(&self, lease: u64) {
        if let Ok(mut s) = self.0.state.try_borrow_mut() {
            if s.end.is_none() {
                s.leases.insert(lease);
                s.releasing.insert(lease, Duration::ZERO);
            }
        }
    }

    /// Stops repeating the release of `lease`: it is held again.
    pub(crate) fn cancel_release(&self, lease: u64) {
        let wakers = {
            let mut s = self.0.state.borrow_mut();
            s.releasing.remove(&lease);
            s.settled()
        };
        wakers.into_iter().for_each(Waker::wake);
    }

    /// Waits until the server has answered every release sent on this
    /// session, or the session has ended: a lock call made after an
    /// unlock then cannot overtake it and find the lock still the
    /// caller's.
    pub(crate) async fn releases_answered(&self) {
        poll_fn(|cx| {
            let mut s = self.0.state.borrow_mut();
            if s.end.is_some() || s.releasing.is_empty() {
                Poll::Ready(())
            } else {
                s.settling.push(cx.waker().clone());
                Poll::Pending
            }
        })
        .await
    }

    fn send_release(&self, lease: u64) {
        self.send(Msg::design(SessionMsg::SessionRelease {
            session: self.0.id,
            lease,
        }));
    }

    /// Ends the session on the client's side: the heartbeats stop (the
    /// server expires it a session timeout later) and every call waiting
    /// on it gets no answer.
    pub(crate) fn close(&self) {
        self.finish(End::Closed);
    }

    fn finish(&self, end: End) {
        let wakers: Vec<Waker> = {
            let mut s = self.0.state.borrow_mut();
            if s.end.is_some() {
                return;
            }
            s.end = Some(end);
            s.releasing.clear();
            let mut wakers = s.settled();
            wakers.extend(s.waiting.values_mut().filter_map(|slot| slot.waker.take()));
            wakers
        };
        for w in wakers {
            w.wake();
        }
        self.0.ended.raise();
    }

    /// Whether `msg` from the server is this session's to take.
    fn is_mine(&self, msg: &Msg) -> bool {
        let s = self.0.state.borrow();
        match (msg, msg.as_design::<SessionMsg>()) {
            (_, Some(&SessionMsg::SessionExpired { session })) => session == self.0.id,
            (_, Some(&SessionMsg::SessionOpened { req, .. }))
            | (&Msg::Granted { req, .. }, _)
            | (_, Some(&SessionMsg::Queued { req, .. }))
            | (&Msg::Denied { req }, _)
            | (&Msg::RenewReply { req, .. }, _) => s.requests.contains(&req),
            (&Msg::ReleaseAck { lease }, _) | (_, Some(&SessionMsg::LockLost { lease })) => {
                s.leases.contains(&lease)
            }
            _ => false,
        }
    }

    /// Hands `msg` (this session's) to whoever it is for.
    fn route(&self, msg: Msg) {
        match (&msg, msg.as_design::<SessionMsg>()) {
            (_, Some(SessionMsg::SessionExpired { .. })) => self.finish(End::Expired),
            // A second copy of the opening's answer: the session is open.
            (_, Some(SessionMsg::SessionOpened { .. })) => {}
            (&Msg::Granted { req, lease, .. }, _)
            | (_, Some(&SessionMsg::Queued { req, lease })) => {
                self.0.state.borrow_mut().leases.insert(lease);
                let last = matches!(msg, Msg::Granted { .. });
                self.deliver(req, msg, last);
            }
            (&Msg::Denied { req } | &Msg::RenewReply { req, .. }, _) => {
                self.deliver(req, msg, true)
            }
            (&Msg::ReleaseAck { lease }, _) | (_, Some(&SessionMsg::LockLost { lease })) => {
                let wakers = {
                    let mut s = self.0.state.borrow_mut();
                    s.releasing.remove(&lease);
                    let mut wakers = s.settled();
                    if let Some(slot) = s.waiting.get_mut(&Key::Lease(lease)) {
                        slot.answers.push_back(msg);
                        wakers.extend(slot.waker.take());
                    }
                    wakers
                };
                wakers.into_iter().for_each(Waker::wake);
            }
            _ => {}
        }
    }

    /// An answer to request `req`; `last` when no other answer follows it.
    fn deliver(&self, req: u64, msg: Msg, last: bool) {
        let stray = {
            let mut s = self.0.state.borrow_mut();
            if s.answered.contains(&req) {
                // A copy of an answer already taken.
                return;
            }
            if last {
                s.answered.insert(req);
            }
            match s.waiting.get_mut(&Key::Req(req)) {
                Some(slot) => {
                    slot.answers.push_back(msg);
                    if let Some(w) = slot.waker.take() {
                        w.wake();
                    }
                    None
                }
                None => Some(msg),
            }
        };
        if let Some(msg) = stray {
            (self.0.strays)(self, &msg);
        }
    }
}

/// Sends a heartbeat every `every`, and the releases still unanswered whose
/// time has come, until the session ends.
async fn heartbeats(session: Session, every: Duration) {
    let handle = session.0.handle.clone();
    loop {
        if let Either::Right(()) = select(handle.sleep(every), session.0.ended.raised()).await {
            return;
        }
        session.send(Msg::design(SessionMsg::Heartbeat {
            session: session.0.id,
        }));
        let now = handle.now();
        let due: Vec<u64> = {
            let mut s = session.0.state.borrow_mut();
            let due: Vec<u64> = s
                .releasing
                .iter()
                .filter(|(_, at)| **at <= now)
                .map(|(lease, _)| *lease)
                .collect();
            for lease in &due {
                s.releasing.insert(*lease, now + session.0.timeout);
            }
            due
        };
        for lease in due {
            session.send_release(lease);
        }
    }
}

/// Takes the server's messages about this session until it ends.
async fn receive(session: Session) {
    let (handle, server) = (session.0.handle.clone(), session.0.server);
    loop {
        let mine = session.clone();
        let next = handle.recv_from(server, move |m| mine.is_mine(m));
        match select(next, session.0.ended.raised()).await {
            Either::Left((_, msg)) => session.route(msg),
            Either::Right(()) => return,
        }
    }
}

/// A call's wait for the answers to one [`Key`]; dropping it stops the
/// wait (later answers are strays).
pub(crate) struct Waiter {
    session: Session,
    key: Key,
    waiter: u64,
}

impl Waiter {
    /// The next answer, or `None` once the session has ended.
    pub(crate) async fn next(&self) -> Option<Msg> {
        poll_fn(|cx| {
            let mut s = self.session.0.state.borrow_mut();
            if s.end.is_some() {
                return Poll::Ready(None);
            }
            let Some(slot) = s
                .waiting
                .get_mut(&self.key)
                .filter(|slot| slot.waiter == self.waiter)
            else {
                return Poll::Ready(None);
            };
            match slot.answers.pop_front() {
                Some(msg) => Poll::Ready(Some(msg)),
                None => {
                    slot.waker = Some(cx.waker().clone());
                    Poll::Pending
                }
            }
        })
        .await
    }
}

impl Drop for Waiter {
    fn drop(&mut self) {
        // Only the state's own cell: a drop in a crash must not reach the
        // handle.
        if let Ok(mut s) = self.session.0.state.try_borrow_mut() {
            if s.waiting
                .get(&self.key)
                .is_some_and(|w| w.waiter == self.waiter)
            {
                s.waiting.remove(&self.key);
            }
        }
    }
}
