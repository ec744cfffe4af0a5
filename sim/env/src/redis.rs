//! Redis on the `redis` crate (feature `redis`): a lock ([`RedisLock`],
//! the [`Redis`] trait) and a storage whose fence is a Lua compare
//! ([`RedisStorage`], the [`Storage`] trait), each over a multiplexed
//! tokio connection.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//! use fencesim_env::redis::{RedisLock, RedisStorage};
//! use fencesim_env::{Redis, Storage};
//!
//! let client = redis::Client::open("redis://127.0.0.1:6379/")?;
//! let conn = client.get_multiplexed_tokio_connection().await?;
//! let timeout = Duration::from_secs(1);
//! let lock = RedisLock::new(conn.clone(), Duration::from_secs(2), timeout);
//! let storage = RedisStorage::new(conn, timeout);
//! let value = lock.random_value();
//! if let Some(set) = lock.set_nx_px("lock", value).await? {
//!     storage.put("x", 1, set.token).await?;
//!     lock.del_if_eq("lock", value).await?;
//! }
//! # Ok(()) }
//! ```

use std::collections::hash_map::RandomState;
use std::future::Future;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redis::Script;

use crate::{Redis, RedisError, RedisSet, Storage, StorageError};

/// `SET NX PX`, then `INCR` of the lock's counter in the same script.
const SET_NX_PX_INCR: &str = r"
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return false
";

const PEXPIRE_IF_EQ: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
";

const DEL_IF_EQ: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
";

/// The fenced write: refused (`{0, stored token}`) when the key's token is
/// larger than the write's, else the value, the token and the version are
/// set (`{1, version}`).
const PUT_IF_TOKEN: &str = r"
local stored = redis.call('GET', KEYS[2])
if stored and tonumber(stored) > tonumber(ARGV[2]) then
  return {0, tonumber(stored)}
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2])
return {1, redis.call('INCR', KEYS[3])}
";

/// The fenced-write script of [`Redis::set_if_token`]: `1` when set, `0`
/// when `KEYS[2]` holds a larger token.
const SET_IF_TOKEN: &str = r"
local stored = redis.call('GET', KEYS[2])
if stored and tonumber(stored) > tonumber(ARGV[2]) then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2])
return 1
";

/// The unfenced write: the value set, the version counted.
const PUT: &str = r"
redis.call('SET', KEYS[1], ARGV[1])
return redis.call('INCR', KEYS[3])
";

fn error(e: redis::RedisError) -> RedisError {
    if e.is_timeout() {
        RedisError::Timeout
    } else if e.is_io_error() || e.is_connection_dropped() || e.is_connection_refusal() {
        RedisError::Connection(e.to_string())
    } else {
        RedisError::Other(e.to_string())
    }
}

async fn within<T>(
    timeout: Duration,
    call: impl Future<Output = redis::RedisResult<T>>,
) -> Result<T, RedisError> {
    match tokio::time::timeout(timeout, call).await {
        Ok(answer) => answer.map_err(error),
        Err(_) => Err(RedisError::Timeout),
    }
}

/// The single-instance Redis lock recipe on one connection: its key's `PX`
/// is `px`, its token counter the key `<key>:token`.
#[derive(Clone)]
pub struct RedisLock {
    conn: MultiplexedConnection,
    px: Duration,
    timeout: Duration,
    random: RandomState,
}

impl RedisLock {
    /// A lock whose key lives `px` after each `SET` or `PEXPIRE`; every
    /// command waits at most `timeout` for its answer.
    pub fn new(conn: MultiplexedConnection, px: Duration, timeout: Duration) -> RedisLock {
        RedisLock {
            conn,
            px,
            timeout,
            random: RandomState::new(),
        }
    }

    fn px_ms(&self) -> u64 {
        u64::try_from(self.px.as_millis())
            .unwrap_or(u64::MAX)
            .max(1)
    }
}

impl Redis for RedisLock {
    fn random_value(&self) -> u64 {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        self.random
            .hash_one(COUNTER.fetch_add(1, Ordering::Relaxed))
    }

    async fn set_nx_px(&self, key: &str, value: u64) -> Result<Option<RedisSet>, RedisError> {
        let mut conn = self.conn.clone();
        let script = Script::new(SET_NX_PX_INCR);
        let mut call = script.prepare_invoke();
        call.key(key)
            .key(format!("{key}:token"))
            .arg(value.to_string())
            .arg(self.px_ms());
        let token: Option<u64> = within(self.timeout, call.invoke_async(&mut conn)).await?;
        Ok(token.map(|token| RedisSet {
            token: Some(token),
            ttl: self.px,
        }))
    }

    async fn pexpire_if_eq(&self, key: &str, value: u64) -> Result<bool, RedisError> {
        let mut conn = self.conn.clone();
        let script = Script::new(PEXPIRE_IF_EQ);
        let mut call = script.prepare_invoke();
        call.key(key).arg(value.to_string()).arg(self.px_ms());
        let set: i64 = within(self.timeout, call.invoke_async(&mut conn)).await?;
        Ok(set == 1)
    }

    async fn del_if_eq(&self, key: &str, value: u64) -> Result<(), RedisError> {
        let mut conn = self.conn.clone();
        let script = Script::new(DEL_IF_EQ);
        let mut call = script.prepare_invoke();
        call.key(key).arg(value.to_string());
        let _: i64 = within(self.timeout, call.invoke_async(&mut conn)).await?;
        Ok(())
    }

    async fn incr_by(&self, key: &str, delta: i64) -> Result<i64, RedisError> {
        let mut conn = self.conn.clone();
        let mut cmd = redis::cmd("INCRBY");
        cmd.arg(key).arg(delta);
        within(self.timeout, cmd.query_async(&mut conn)).await
    }

    async fn get_i64(&self, key: &str) -> Result<Option<i64>, RedisError> {
        let mut conn = self.conn.clone();
        let mut cmd = redis::cmd("GET");
        cmd.arg(key);
        within(self.timeout, cmd.query_async(&mut conn)).await
    }

    async fn set_if_token(&self, key: &str, value: i64, token: u64) -> Result<bool, RedisError> {
        let mut conn = self.conn.clone();
        let script = Script::new(SET_IF_TOKEN);
        let mut call = script.prepare_invoke();
        call.key(key)
            .key(format!("{key}:token"))
            .arg(value)
            .arg(token);
        let set: i64 = within(self.timeout, call.invoke_async(&mut conn)).await?;
        Ok(set == 1)
    }
}

/// A storage on Redis: a key's value at `<key>`, the largest token a write
/// carried at `<key>:token`, its version at `<key>:version`. A write with a
/// token runs a Lua compare that refuses it when the stored token is
/// larger; a write without one is set unchecked.
#[derive(Clone)]
pub struct RedisStorage {
    conn: MultiplexedConnection,
    timeout: Duration,
}

impl RedisStorage {
    /// A storage on `conn`; every command waits at most `timeout`.
    pub fn new(conn: MultiplexedConnection, timeout: Duration) -> RedisStorage {
        RedisStorage { conn, timeout }
    }
}

/// No answer, or no connection, is an unanswered write; an error the
/// server answered with refused it.
fn unavailable(e: RedisError) -> StorageError {
    match e {
        RedisError::Timeout | RedisError::Connection(_) => StorageError::Unavailable,
        RedisError::Other(why) => StorageError::Rejected(why),
    }
}

impl Storage for RedisStorage {
    async fn put(&self, key: &str, value: i64, token: Option<u64>) -> Result<(), StorageError> {
        let mut conn = self.conn.clone();
        let keys = [
            key.to_owned(),
            format!("{key}:token"),
            format!("{key}:version"),
        ];
        match token {
            Some(token) => {
                let script = Script::new(PUT_IF_TOKEN);
                let mut call = script.prepare_invoke();
                call.key(&keys[..]).arg(value).arg(token);
                let (applied, n): (i64, u64) = within(self.timeout, call.invoke_async(&mut conn))
                    .await
                    .map_err(unavailable)?;
                if applied == 1 {
                    Ok(())
                } else {
                    Err(StorageError::Rejected(format!(
                        "token {token} is older than {n}"
                    )))
                }
            }
            None => {
                let script = Script::new(PUT);
                let mut call = script.prepare_invoke();
                call.key(&keys[..]).arg(value);
                let _: u64 = within(self.timeout, call.invoke_async(&mut conn))
                    .await
                    .map_err(unavailable)?;
                Ok(())
            }
        }
    }

    async fn get(&self, key: &str) -> Result<(i64, u64), StorageError> {
        let mut conn = self.conn.clone();
        let mut cmd = redis::cmd("MGET");
        cmd.arg(key).arg(format!("{key}:version"));
        let (value, version): (Option<i64>, Option<u64>) =
            within(self.timeout, cmd.query_async(&mut conn))
                .await
                .map_err(unavailable)?;
        Ok((value.unwrap_or(0), version.unwrap_or(0)))
    }
}
