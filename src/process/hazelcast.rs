//! A simulated Hazelcast client whose CP `FencedLock` reads like
//! Hazelcast's (`lock_and_get_fence`, `try_lock_and_get_fence`, `unlock`,
//! `is_locked_by_current_thread`), spoken to the bundled `hazelcast` design
//! over fencesim's network.
//!
//! ```ignore
//! let client = Client::new(&h, "lock", ClientOptions::new());
//! let lock = client.get_lock("job");
//! let fence = lock.lock_and_get_fence().await?;
//! storage.put("x", 1, Some(fence)).await?;
//! lock.unlock().await?; // Err(Error::LockOwnershipLost) if the CP session was lost
//! ```
//!
//! The lock lives in a CP session the client opens on its first lock call
//! and keeps alive from a task of its own, with a heartbeat every fifth of
//! the session TTL the server answered with (the bundled client's default
//! period; a `heartbeat` set in the scenario's `[lock]` table is the
//! bundled client's alone). When the server says the session expired, the
//! lock it held is gone, and, as in Hazelcast, the owner hears of it only
//! on its next lock call, which fails with [`Error::LockOwnershipLost`]
//! (`LockOwnershipLostException`). A lock call that finds no session, or
//! its session gone while it was not holding the lock, opens a new one and
//! tries again, as Hazelcast's proxy does.
//!
//! A lock call sends its invocation again, with the same id, until it is
//! answered (Hazelcast's invocation ids): the server answers a repeated
//! invocation as it answered the first, so a lost answer does not take a
//! second hold. An unlock of the last hold is sent again with each
//! heartbeat until answered, so a lost unlock strands no lock while the
//! session lives, and the next lock call waits for its answer (one that
//! overtook it would find the lock still the caller's, and take a second
//! hold). A grant for an invocation nobody waits for any more (the caller
//! dropped the call) is unlocked at once.
//!
//! What differs from Hazelcast, and why: the server holds one `FencedLock`,
//! so every name is that lock; ownership is the client's, not a thread's
//! (a process's tasks share it); the server has no wait queue, so
//! `lock_and_get_fence` tries again every [`ClientOptions::with_lock_retry`]
//! while another holds the lock (Hazelcast's lock call waits at the
//! server); `is_locked_by_current_thread` asks the server with the model's
//! renewal, which also heartbeats the owner's session; a lock found lost
//! stays the caller's to `unlock` (Hazelcast forgets it at once and answers
//! a later `unlock` with `IllegalMonitorStateException`), so that `unlock`
//! is where the caller gives the lock up, and where the journal says so;
//! `shutdown` stops the heartbeats, as the model has no session close: the
//! server expires the session a TTL later.
//!
//! Like the bundled client, it journals what its caller comes to believe:
//! `acquired` on a lock call that takes the lock (not on a reentrant one),
//! `released` when `unlock` gives up the last hold. Anything else the
//! caller decides (a lock it gives up because `is_locked_by_current_thread`
//! said it is gone) is its own to [`Env::probe`].

use std::cell::{Cell, RefCell};
use std::fmt;
use std::rc::Rc;
use std::time::Duration;

use fencesim_env::{Env, Probe};
use sim::process::Handle;
use sim::NodeId;

use crate::design::session::SessionMsg;
use crate::process::session::{Key, Session, Strays};
use crate::protocol::Msg;

/// The bundled `hazelcast` design's heartbeat period: a fifth of the
/// session TTL.
const HEARTBEATS_PER_TTL: u32 = 5;

/// The fence `try_lock_and_get_fence` answers when another holds the lock
/// (Hazelcast's `FencedLock.INVALID_FENCE`); the server's fences start at 1.
pub const INVALID_FENCE: u64 = 0;

/// What a lock call can fail with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// `LockOwnershipLostException`: the CP session the lock was taken in
    /// is gone, and the lock with it.
    LockOwnershipLost,
    /// `IllegalMonitorStateException`: `unlock` without holding the lock.
    IllegalMonitorState,
    /// No answer within the invocation timeout (`OperationTimeoutException`).
    Timeout,
    /// The client was shut down (`HazelcastClientNotActiveException`).
    ClientNotActive,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Error::LockOwnershipLost => "current thread is not the owner of the lock",
            Error::IllegalMonitorState => "current thread does not hold the lock",
            Error::Timeout => "invocation timed out",
            Error::ClientNotActive => "the client is not active",
        })
    }
}

impl std::error::Error for Error {}

/// The client's settings: `ClientConfig`'s, of which these matter here.
#[derive(Clone, Copy, Debug)]
pub struct ClientOptions {
    timeout: Duration,
    retry: Duration,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            timeout: Duration::from_secs(5),
            retry: Duration::from_millis(500),
        }
    }
}

impl ClientOptions {
    /// An invocation waits 5 s for its answer before it is sent again;
    /// `lock_and_get_fence` tries again every 500 ms.
    pub fn new() -> Self {
        ClientOptions::default()
    }

    /// How long an invocation waits for its answer before it is sent
    /// again (a lock call), or given up (an unlock, an ownership query).
    pub fn with_invocation_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How long `lock_and_get_fence` waits before it tries again while
    /// another holds the lock.
    pub fn with_lock_retry(mut self, retry: Duration) -> Self {
        self.retry = retry;
        self
    }
}

/// The lock as the client holds it.
struct Held {
    /// The CP session it was taken in.
    session: Session,
    fence: u64,
    /// Reentrant holds.
    holds: u32,
    /// A lock call found it gone and said so.
    lost: bool,
}

struct Inner {
    handle: Handle<Msg>,
    server: NodeId,
    options: ClientOptions,
    session: RefCell<Option<Session>>,
    held: Rc<RefCell<Option<Held>>>,
    shut_down: Cell<bool>,
}

/// A client of the Hazelcast node `lock` (the bundled `hazelcast` design).
/// Clones share it, its CP session and its lock.
#[derive(Clone)]
pub struct Client(Rc<Inner>);

impl Client {
    /// A client of the Hazelcast node called `server`. No session is
    /// opened until the first lock call.
    ///
    /// # Panics
    /// If there is no node of that name.
    pub fn new(handle: &Handle<Msg>, server: &str, options: ClientOptions) -> Client {
        let node = handle
            .node(server)
            .unwrap_or_else(|| panic!("no Hazelcast node called {server:?}"));
        Client(Rc::new(Inner {
            handle: handle.clone(),
            server: node,
            options,
            session: RefCell::new(None),
            held: Rc::default(),
            shut_down: Cell::new(false),
        }))
    }

    /// `getCPSubsystem().getLock(name)`: the server's one `FencedLock`.
    pub fn get_lock(&self, name: &str) -> FencedLock {
        FencedLock {
            client: self.clone(),
            name: name.to_owned(),
        }
    }

    /// Shuts the client down: its session's heartbeats stop, and lock
    /// calls fail with [`Error::ClientNotActive`].
    pub fn shutdown(&self) {
        self.0.shut_down.set(true);
        if let Some(session) = self.0.session.borrow_mut().take() {
            session.close();
        }
    }

    /// The CP session, opened if there is none or it has ended.
    async fn session(&self) -> Result<Session, Error> {
        let open = self.0.session.borrow().clone();
        if let Some(session) = open.filter(|s| s.end().is_none()) {
            return Ok(session);
        }
        let held = Rc::downgrade(&self.0.held);
        // A grant nobody waits for: unlocked at once; once only when it is
        // one more hold of the lock the caller holds (a second unlock
        // would take the caller's own hold).
        let strays: Strays = Rc::new(move |session: &Session, msg: &Msg| {
            if let Msg::Granted { lease, .. } = *msg {
                let holding = held.upgrade().is_some_and(|held| {
                    held.borrow()
                        .as_ref()
                        .is_some_and(|h| h.fence == lease && h.session.id() == session.id())
                });
                if holding {
                    session.release_once(lease);
                } else {
                    session.release(lease);
                }
            }
        });
        let (handle, server, timeout) = (&self.0.handle, self.0.server, self.0.options.timeout);
        let session = Session::open(handle, server, timeout, HEARTBEATS_PER_TTL, strays)
            .await
            .ok_or(Error::Timeout)?;
        if self.0.shut_down.get() {
            session.close();
            return Err(Error::ClientNotActive);
        }
        *self.0.session.borrow_mut() = Some(session.clone());
        Ok(session)
    }
}

/// Sends a lock invocation on `session` until it is answered: the answer,
/// or `None` if the session ends first.
async fn invoke(session: &Session) -> Option<Msg> {
    let req = session.new_request();
    let answers = session.expect(Key::Req(req));
    loop {
        session.send(Msg::design(SessionMsg::SessionAcquire {
            session: session.id(),
            req,
        }));
        let handle = session.handle();
        if let Ok(answer) = handle.timeout(session.timeout(), answers.next()).await {
            return answer;
        }
    }
}

/// Hazelcast's CP `FencedLock`, reentrant, with a fence that grows with
/// every new owner.
pub struct FencedLock {
    client: Client,
    name: String,
}

impl FencedLock {
    /// The lock's name.
    pub fn get_name(&self) -> &str {
        &self.name
    }

    fn held(&self) -> std::cell::RefMut<'_, Option<Held>> {
        self.client.0.held.borrow_mut()
    }

    fn mark_lost(&self) {
        if let Some(held) = self.held().as_mut() {
            held.lost = true;
        }
    }

    /// Takes the lock, waiting while another holds it, and returns its
    /// fence; one more hold, with the same fence, if the caller holds it.
    ///
    /// # Panics
    /// If the server hands out no fence (`tokens = false`): a `FencedLock`
    /// always has one.
    pub async fn lock_and_get_fence(&self) -> Result<u64, Error> {
        self.acquire(false).await
    }

    /// Takes the lock if no one else holds it and returns its fence, or
    /// [`INVALID_FENCE`] if another does; one more hold, with the same
    /// fence, if the caller holds it.
    ///
    /// # Panics
    /// As [`FencedLock::lock_and_get_fence`].
    pub async fn try_lock_and_get_fence(&self) -> Result<u64, Error> {
        self.acquire(true).await
    }

    async fn acquire(&self, once: bool) -> Result<u64, Error> {
        let c = &self.client.0;
        loop {
            if c.shut_down.get() {
                return Err(Error::ClientNotActive);
            }
            if let Some(reentered) = self.reenter().await {
                return reentered;
            }
            let session = match self.client.session().await {
                Ok(session) => session,
                Err(e) if once || e == Error::ClientNotActive => return Err(e),
                Err(_) => {
                    c.handle.sleep(c.options.retry).await;
                    continue;
                }
            };
            // An unlock still unanswered goes first (a lock call that
            // overtook it would be taken for a reentrant one).
            session.releases_answered().await;
            match invoke(&session).await {
                Some(Msg::Granted {
                    lease, token, ttl, ..
                }) => {
                    assert!(
                        token.is_some(),
                        "the hazelcast server hands out no fence (tokens = false): \
                         a FencedLock always has one"
                    );
                    session.cancel_release(lease);
                    *self.held() = Some(Held {
                        session,
                        fence: lease,
                        holds: 1,
                        lost: false,
                    });
                    c.handle.probe(Probe::Acquired { lease, token, ttl });
                    return Ok(lease);
                }
                Some(Msg::Denied { .. }) if once => return Ok(INVALID_FENCE),
                Some(Msg::Denied { .. }) => c.handle.sleep(c.options.retry).await,
                // The session ended first: try again in a new one.
                _ => {}
            }
        }
    }

    /// A lock call while holding the lock: one more hold, or the news that
    /// it is lost. `None` when the caller does not hold it.
    async fn reenter(&self) -> Option<Result<u64, Error>> {
        let (session, fence, lost) = {
            let held = self.held();
            let held = held.as_ref()?;
            (held.session.clone(), held.fence, held.lost)
        };
        if lost || session.end().is_some() {
            self.mark_lost();
            return Some(Err(Error::LockOwnershipLost));
        }
        match invoke(&session).await {
            Some(Msg::Granted { lease, .. }) if lease == fence => {
                if let Some(held) = self.held().as_mut() {
                    held.holds += 1;
                }
                Some(Ok(fence))
            }
            // Denied, or the session ended: the lock went with it.
            _ => {
                self.mark_lost();
                Some(Err(Error::LockOwnershipLost))
            }
        }
    }

    /// Gives up one hold; the last one frees the lock, and the caller no
    /// longer holds it whatever the answer. [`Error::LockOwnershipLost`]
    /// if the lock was lost with its session (the caller no longer holds
    /// it either), [`Error::IllegalMonitorState`] if the caller did not
    /// hold it, [`Error::Timeout`] unanswered (an unlock of the last hold
    /// goes again with each heartbeat until answered).
    pub async fn unlock(&self) -> Result<(), Error> {
        let c = &self.client.0;
        let (session, fence, holds, lost) = match self.held().as_ref() {
            None => return Err(Error::IllegalMonitorState),
            Some(h) => (h.session.clone(), h.fence, h.holds, h.lost),
        };
        if lost || session.end().is_some() {
            *self.held() = None;
            c.handle.probe(Probe::Released { lease: fence });
            return Err(Error::LockOwnershipLost);
        }
        let answer = session.expect(Key::Lease(fence));
        if holds > 1 {
            if let Some(held) = self.held().as_mut() {
                held.holds -= 1;
            }
            session.release_once(fence);
        } else {
            *self.held() = None;
            session.release(fence);
            c.handle.probe(Probe::Released { lease: fence });
        }
        match c.handle.timeout(c.options.timeout, answer.next()).await {
            Ok(Some(Msg::ReleaseAck { .. })) => Ok(()),
            Ok(_) => {
                self.mark_lost();
                Err(Error::LockOwnershipLost)
            }
            Err(_) => Err(Error::Timeout),
        }
    }

    /// Whether the caller holds the lock, asked of the server:
    /// [`Error::LockOwnershipLost`] the first time it finds the lock gone
    /// with its session, `false` after that (until the caller unlocks).
    pub async fn is_locked_by_current_thread(&self) -> Result<bool, Error> {
        let c = &self.client.0;
        let (session, fence) = match self.held().as_ref() {
            Some(h) if !h.lost => (h.session.clone(), h.fence),
            _ => return Ok(false),
        };
        if session.end().is_some() {
            self.mark_lost();
            return Err(Error::LockOwnershipLost);
        }
        let req = session.new_request();
        let answer = session.expect(Key::Req(req));
        session.send(Msg::Renew { lease: fence, req });
        match c.handle.timeout(c.options.timeout, answer.next()).await {
            Ok(Some(Msg::RenewReply { ok: true, .. })) => Ok(true),
            Ok(_) => {
                self.mark_lost();
                Err(Error::LockOwnershipLost)
            }
            Err(_) => Err(Error::Timeout),
        }
    }
}
