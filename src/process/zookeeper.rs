//! A simulated ZooKeeper client whose calls read like the `zookeeper-client`
//! crate's (`Client::connect`, `state_watcher`, the lock recipe's
//! `Client::lock` and its `LockClient`), spoken to the bundled `zookeeper`
//! design over fencesim's network.
//!
//! ```ignore
//! let client = Client::connect(&h, "lock", Duration::from_secs(5)).await?;
//! let mut state = client.state_watcher();
//! let lock = client.lock("/locks/job/lock-").await?;
//! // ... work; `state.state()` is `SessionState::Expired` once the server
//! // has said the session is gone ...
//! storage.put("x", 1, lock.czxid()).await?;
//! lock.release().await?;
//! ```
//!
//! `connect` opens a session and keeps it alive from a task of its own,
//! with a heartbeat every third of the session timeout the server answered
//! with (a real client pings at that rate, and it is the bundled client's
//! default period); a `heartbeat` set in the scenario's `[lock]` table is
//! the bundled client's alone. The session ends when the server answers
//! anything with `SessionExpired` (after a pause, a partition, a server
//! restart): every call then fails with [`Error::SessionExpired`], the
//! state watcher says [`SessionState::Expired`], and the caller needs a new
//! client, as with the crate.
//!
//! `lock` is the lock recipe as the server models it: it creates an
//! ephemeral sequential znode under the lock path and waits until it is
//! the lowest. The server plays the watch on the predecessor: it answers
//! the create with `Queued` when another znode is ahead, and with `Granted`
//! when this one becomes the lowest. A create whose answer does not come
//! within the client's timeout is sent again with the same request id, so
//! the server answers for the znode that request made (Curator's protected
//! mode) rather than making another; once queued, the client asks again
//! after the timeout, then twice that, up to eight times, in case the
//! watch's answer was lost. A `LockClient` dropped before `release`
//! deletes nothing; a `lock` future dropped while its znode waits deletes
//! the znode with the next heartbeat; a grant or queue slot for a request
//! nobody waits for any more is deleted at once.
//!
//! What differs from the crate, and why: the server holds one lock path, so
//! the prefix names the znode only in the caller's words (`lock_path` is
//! the prefix and the sequence number); there are no data, ACLs or
//! `LockOptions`; the fencing token is [`LockClient::czxid`], the zxid of
//! the transaction that created the znode (the crate gives it through the
//! znode's `Stat`), and `None` from a server with `tokens = false`;
//! `release` is an explicit async call (the crate deletes the znode in the
//! background when the `LockClient` is dropped, which a simulated process
//! cannot journal); `release` retries its delete with each heartbeat until
//! the server answers it (Curator's guaranteed delete), and `close` stops
//! the heartbeats, as the model has no `closeSession`: the server expires
//! the session a session timeout later.
//!
//! Like the bundled client, it journals what its caller comes to believe:
//! `acquired` when `lock` returns, `released` when `release` gives the
//! lock up. Anything else the caller decides (a lock it gives up because
//! its session expired) is its own to [`Env::probe`].

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::fmt;
use std::rc::Rc;
use std::time::Duration;

use fencesim_env::{Env, Probe};
use sim::process::Handle;

use crate::design::session::SessionMsg;
use crate::process::session::{End, Key, Session, Strays};
use crate::protocol::Msg;

/// The bundled `zookeeper` design's heartbeat period: a third of the
/// session timeout.
const HEARTBEATS_PER_TIMEOUT: u32 = 3;

/// Rechecks of a queued znode double the wait up to this many times.
const MAX_DOUBLINGS: u32 = 3;

/// What a call can fail with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// The server said the session expired: its ephemeral znodes are gone.
    SessionExpired,
    /// The caller closed the client.
    ClientClosed,
    /// No answer within the client's timeout.
    Timeout,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Error::SessionExpired => "session expired",
            Error::ClientClosed => "client closed",
            Error::Timeout => "operation timed out",
        })
    }
}

impl std::error::Error for Error {}

impl From<End> for Error {
    fn from(end: End) -> Error {
        match end {
            End::Expired => Error::SessionExpired,
            End::Closed => Error::ClientClosed,
        }
    }
}

/// The session's state, as the crate's `SessionState` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionState {
    /// The session is open, as far as the client knows.
    SyncConnected,
    /// The server said the session expired.
    Expired,
    /// The caller closed the client.
    Closed,
}

/// A client of the ZooKeeper node `lock` (the bundled `zookeeper` design)
/// with one session. Clones share it.
#[derive(Clone)]
pub struct Client {
    session: Session,
    /// The znodes whose lock the caller holds and has not released.
    held: Rc<RefCell<BTreeSet<u64>>>,
}

impl Client {
    /// Connects to the ZooKeeper node called `server`: opens a session and
    /// starts its heartbeats. Every call waits at most `timeout` for an
    /// answer ([`Error::Timeout`] when opening the session).
    ///
    /// # Panics
    /// If there is no node of that name.
    pub async fn connect(
        handle: &Handle<Msg>,
        server: &str,
        timeout: Duration,
    ) -> Result<Client, Error> {
        let node = handle
            .node(server)
            .unwrap_or_else(|| panic!("no ZooKeeper node called {server:?}"));
        let held: Rc<RefCell<BTreeSet<u64>>> = Rc::default();
        let mine = held.clone();
        // A grant or queue slot nobody waits for: its znode is deleted.
        let strays: Strays = Rc::new(move |session: &Session, msg: &Msg| {
            if let (&Msg::Granted { lease, .. }, _) | (_, Some(&SessionMsg::Queued { lease, .. })) =
                (msg, msg.as_design())
            {
                if !mine.borrow().contains(&lease) {
                    session.release(lease);
                }
            }
        });
        let session = Session::open(handle, node, timeout, HEARTBEATS_PER_TIMEOUT, strays)
            .await
            .ok_or(Error::Timeout)?;
        Ok(Client { session, held })
    }

    /// The session's id.
    pub fn session_id(&self) -> u64 {
        self.session.id()
    }

    /// The session timeout the server answered with.
    pub fn session_timeout(&self) -> Duration {
        self.session.ttl()
    }

    /// The session's state now.
    pub fn state(&self) -> SessionState {
        match self.session.end() {
            None => SessionState::SyncConnected,
            Some(End::Expired) => SessionState::Expired,
            Some(End::Closed) => SessionState::Closed,
        }
    }

    /// A watcher of the session's state.
    pub fn state_watcher(&self) -> StateWatcher {
        StateWatcher {
            client: self.clone(),
        }
    }

    /// Closes the client: the heartbeats stop and every call fails with
    /// [`Error::ClientClosed`]. The server expires the session a session
    /// timeout later.
    pub fn close(&self) {
        self.session.close();
    }

    /// The lock recipe: creates an ephemeral sequential znode named
    /// `prefix` and a sequence number and waits, however long it takes,
    /// until it is the lowest. Fails when the session ends first.
    pub async fn lock(&self, prefix: &str) -> Result<LockClient, Error> {
        let session = &self.session;
        let handle = session.handle().clone();
        if let Some(end) = session.end() {
            return Err(end.into());
        }
        let req = session.new_request();
        let answers = session.expect(Key::Req(req));
        let mut znode = Creating {
            session: session.clone(),
            znode: None,
            done: false,
        };
        let mut doublings = 0;
        loop {
            session.send(Msg::design(SessionMsg::SessionAcquire {
                session: session.id(),
                req,
            }));
            loop {
                let wait = session.timeout() * (1 << doublings);
                match handle.timeout(wait, answers.next()).await {
                    Ok(None) => {
                        return Err(session.end().map_or(Error::SessionExpired, Error::from))
                    }
                    Ok(Some(Msg::Granted {
                        lease, token, ttl, ..
                    })) => {
                        znode.done = true;
                        self.held.borrow_mut().insert(lease);
                        handle.probe(Probe::Acquired { lease, token, ttl });
                        return Ok(LockClient {
                            client: self.clone(),
                            path: format!("{prefix}{lease:010}"),
                            sequence: lease,
                            czxid: token,
                        });
                    }
                    Ok(Some(m)) => {
                        if let Some(&SessionMsg::Queued { lease, .. }) = m.as_design() {
                            znode.znode = Some(lease);
                        }
                    }
                    // No answer: ask about the same request again.
                    Err(_) => break,
                }
            }
            if znode.znode.is_some() {
                doublings = (doublings + 1).min(MAX_DOUBLINGS);
            }
        }
    }
}

/// The znode a `lock` call is creating: if the call is dropped before it
/// holds the lock, the znode is deleted.
struct Creating {
    session: Session,
    znode: Option<u64>,
    done: bool,
}

impl Drop for Creating {
    fn drop(&mut self) {
        if let (false, Some(znode)) = (self.done, self.znode) {
            self.session.release_later(znode);
        }
    }
}

/// The session's state, as the crate's `StateWatcher` gives it.
pub struct StateWatcher {
    client: Client,
}

impl StateWatcher {
    /// The state now.
    pub fn state(&self) -> SessionState {
        self.client.state()
    }

    /// Waits until the session is no longer connected and says how it
    /// ended; at once if it already has.
    pub async fn changed(&mut self) -> SessionState {
        self.client.session.ended().raised().await;
        self.client.state()
    }
}

/// A lock held by the lowest znode under the lock path.
pub struct LockClient {
    client: Client,
    path: String,
    sequence: u64,
    czxid: Option<u64>,
}

impl fmt::Debug for LockClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LockClient")
            .field("path", &self.path)
            .field("czxid", &self.czxid)
            .finish_non_exhaustive()
    }
}

impl LockClient {
    /// The znode's path: the prefix and its sequence number.
    pub fn lock_path(&self) -> &str {
        &self.path
    }

    /// The znode's sequence number (the server's lease id).
    pub fn sequence(&self) -> u64 {
        self.sequence
    }

    /// The zxid of the transaction that created the znode: the fencing
    /// token, larger for every later holder. `None` from a server with
    /// `tokens = false`.
    pub fn czxid(&self) -> Option<u64> {
        self.czxid
    }

    /// The client whose session the znode lives in.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Deletes the znode: the caller gives the lock up, whatever the
    /// answer. Unanswered within the timeout ([`Error::Timeout`]), the
    /// delete goes again with each heartbeat until the server answers; on
    /// a session that has ended there is nothing left to delete
    /// ([`Error::SessionExpired`]).
    pub async fn release(self) -> Result<(), Error> {
        let session = &self.client.session;
        let handle = session.handle().clone();
        self.client.held.borrow_mut().remove(&self.sequence);
        let answer = session.expect(Key::Lease(self.sequence));
        session.release(self.sequence);
        handle.probe(Probe::Released {
            lease: self.sequence,
        });
        if let Some(end) = session.end() {
            return Err(end.into());
        }
        match handle.timeout(session.timeout(), answer.next()).await {
            Ok(Some(_)) => Ok(()),
            Ok(None) => Err(session.end().map_or(Error::SessionExpired, Error::from)),
            Err(_) => Err(Error::Timeout),
        }
    }
}
