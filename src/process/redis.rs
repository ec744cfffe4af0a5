//! A simulated client of one Redis node used as a lock (the bundled `redis`
//! design), whose calls read like the lock recipe's commands: `SET key value
//! NX PX`, and the compare-and-delete and compare-and-`PEXPIRE` scripts that
//! touch the key only while it holds the caller's value.
//!
//! ```ignore
//! let redis = Client::connect(&h, "lock", Duration::from_millis(500));
//! let value = redis.random_value();
//! if let Some(set) = redis.set_nx_px("lock", value).await? {
//!     // ... the watchdog calls redis.pexpire_if_eq("lock", value) ...
//!     storage.put("x", 1, set.token).await?;
//!     redis.del_if_eq("lock", value).await?;
//! }
//! ```
//!
//! What differs from a real client, and why: the node holds one lock key,
//! so the key's name is only read back in the journal's words; the value is
//! a `u64` the client makes unique (a real client stores a random string);
//! `PX` is the scenario's `[lock] ttl`; and with `tokens = true` the node
//! runs `INCR` on its counter in the same step as a successful `SET`, whose
//! answer carries the token.
//!
//! It journals what its caller comes to believe, as the bundled client
//! does: `acquired` when a `SET` succeeds, `renewed` when a compare-and-
//! `PEXPIRE` does, `released` when the caller deletes its key.

use std::fmt;
use std::time::Duration;

use fencesim_env::{Env, Probe, RedisError, RedisSet};

use crate::design::redis::RedisCall;
use sim::process::Handle;
use sim::NodeId;

use crate::protocol::Msg;

/// Request ids and lock values, on the node's disk: unique in the run
/// across the node's crashes.
const REQUESTS: &str = "redis/requests";

/// What a command can fail with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// No answer within the client's timeout (the crate's `IoError` on a
    /// response timeout).
    Timeout,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("response timed out")
    }
}

impl std::error::Error for Error {}

/// A successful `SET NX PX`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Set {
    /// The value `INCR` gave with it (`tokens = true`), the fencing token.
    pub token: Option<u64>,
    /// The key's `PX`.
    pub ttl: Duration,
}

/// A client of the Redis node called `server`.
#[derive(Clone)]
pub struct Client {
    handle: Handle<Msg>,
    server: NodeId,
    timeout: Duration,
}

impl Client {
    /// Connects to the node called `server`; every command waits at most
    /// `timeout` for its answer.
    ///
    /// # Panics
    /// If there is no node of that name.
    pub fn connect(handle: &Handle<Msg>, server: &str, timeout: Duration) -> Client {
        let node = handle
            .node(server)
            .unwrap_or_else(|| panic!("no Redis node called {server:?}"));
        Client {
            handle: handle.clone(),
            server: node,
            timeout,
        }
    }

    /// A value for the lock key that no other `SET` of the run uses (what a
    /// real client makes with a random string).
    pub fn random_value(&self) -> u64 {
        self.handle.disk().next_u64(REQUESTS)
    }

    async fn answer(&self, wanted: impl FnMut(&Msg) -> bool + Unpin) -> Result<Msg, Error> {
        let recv = self.handle.recv_from(self.server, wanted);
        match self.handle.timeout(self.timeout, recv).await {
            Ok((_, msg)) => Ok(msg),
            Err(_) => Err(Error::Timeout),
        }
    }

    /// `SET key value NX PX ttl`: `Some` if the key was free and now holds
    /// `value`, `None` if another value holds it.
    pub async fn set_nx_px(&self, _key: &str, value: u64) -> Result<Option<Set>, Error> {
        self.handle.send(self.server, Msg::Acquire { req: value });
        let msg = self
            .answer(move |m| {
                matches!(m, Msg::Granted { req, .. } | Msg::Denied { req } if *req == value)
            })
            .await?;
        match msg {
            Msg::Granted {
                lease, token, ttl, ..
            } => {
                self.handle.probe(Probe::Acquired { lease, token, ttl });
                Ok(Some(Set { token, ttl }))
            }
            _ => Ok(None),
        }
    }

    /// The compare-and-`PEXPIRE` script: gives the key its full `PX` again
    /// from now if it still holds `value`. Whether it did.
    pub async fn pexpire_if_eq(&self, _key: &str, value: u64) -> Result<bool, Error> {
        let req = self.handle.disk().next_u64(REQUESTS);
        let asked = self.handle.now();
        self.handle
            .send(self.server, Msg::Renew { lease: value, req });
        let msg = self
            .answer(move |m| matches!(m, Msg::RenewReply { req: r, .. } if *r == req))
            .await?;
        match msg {
            Msg::RenewReply { ok: true, ttl, .. } => {
                self.handle.probe(Probe::Renewed {
                    lease: value,
                    ttl,
                    asked_ago: self.handle.now().saturating_sub(asked),
                });
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// The compare-and-delete script: deletes the key if it still holds
    /// `value`. The caller gives the lock up whatever the answer.
    pub async fn del_if_eq(&self, _key: &str, value: u64) -> Result<(), Error> {
        self.handle.send(self.server, Msg::Release { lease: value });
        self.handle.probe(Probe::Released { lease: value });
        self.answer(move |m| matches!(m, Msg::ReleaseAck { lease } if *lease == value))
            .await
            .map(|_| ())
    }

    /// Sends `call` (made for a fresh request id) and waits for its answer.
    async fn command(&self, call: impl FnOnce(u64) -> RedisCall) -> Result<Option<i64>, Error> {
        let req = self.handle.disk().next_u64(REQUESTS);
        self.handle.send(self.server, Msg::design(call(req)));
        let msg = self
            .answer(move |m| {
                matches!(m.as_design(), Some(RedisCall::Reply { req: r, .. }) if *r == req)
            })
            .await?;
        match msg.as_design() {
            Some(&RedisCall::Reply { value, .. }) => Ok(value),
            _ => unreachable!("only the command's answer is taken"),
        }
    }

    /// `INCRBY key by`: the counter's new value.
    pub async fn incr_by(&self, key: &str, by: i64) -> Result<i64, Error> {
        let key = key.to_owned();
        let value = self
            .command(|req| RedisCall::IncrBy { req, key, by })
            .await?;
        Ok(value.unwrap_or(0))
    }

    /// `GET key` as an integer.
    pub async fn get_i64(&self, key: &str) -> Result<Option<i64>, Error> {
        let key = key.to_owned();
        self.command(|req| RedisCall::Get { req, key }).await
    }

    /// The fenced-write script: whether it set `key` (`false`: `<key>:token`
    /// holds a larger token).
    pub async fn set_if_token(&self, key: &str, value: i64, token: u64) -> Result<bool, Error> {
        let key = key.to_owned();
        let set = self
            .command(|req| RedisCall::SetIfToken {
                req,
                key,
                value,
                token,
            })
            .await?;
        Ok(set == Some(1))
    }
}

/// The seam's [`fencesim_env::Redis`]: the same commands, so a function
/// generic over it runs here and against a real Redis
/// (`fencesim_env::redis::RedisLock`).
impl fencesim_env::Redis for Client {
    fn random_value(&self) -> u64 {
        Client::random_value(self)
    }

    async fn set_nx_px(&self, key: &str, value: u64) -> Result<Option<RedisSet>, RedisError> {
        let set = Client::set_nx_px(self, key, value)
            .await
            .map_err(|Error::Timeout| RedisError::Timeout)?;
        Ok(set.map(|set| RedisSet {
            token: set.token,
            ttl: set.ttl,
        }))
    }

    async fn pexpire_if_eq(&self, key: &str, value: u64) -> Result<bool, RedisError> {
        Client::pexpire_if_eq(self, key, value)
            .await
            .map_err(|Error::Timeout| RedisError::Timeout)
    }

    async fn del_if_eq(&self, key: &str, value: u64) -> Result<(), RedisError> {
        Client::del_if_eq(self, key, value)
            .await
            .map_err(|Error::Timeout| RedisError::Timeout)
    }

    async fn incr_by(&self, key: &str, delta: i64) -> Result<i64, RedisError> {
        Client::incr_by(self, key, delta)
            .await
            .map_err(|Error::Timeout| RedisError::Timeout)
    }

    async fn get_i64(&self, key: &str) -> Result<Option<i64>, RedisError> {
        Client::get_i64(self, key)
            .await
            .map_err(|Error::Timeout| RedisError::Timeout)
    }

    async fn set_if_token(&self, key: &str, value: i64, token: u64) -> Result<bool, RedisError> {
        Client::set_if_token(self, key, value, token)
            .await
            .map_err(|Error::Timeout| RedisError::Timeout)
    }
}
