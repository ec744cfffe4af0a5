//! In-process stand-ins for a lock service and a fenced storage, for the
//! binary to run against (nothing real is reachable from here). They keep
//! time with the [`Env`] they are given.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use fencesim_env::{Env, Lease, LockError, LockService, Storage, StorageError};

struct LockState {
    /// The lease held, and when it ends.
    holder: Option<(u64, Duration)>,
    next_lease: u64,
    next_token: u64,
}

/// A TTL lease handing out fencing tokens; clone it for each client.
#[derive(Clone)]
pub struct MemoryLock<E> {
    env: E,
    ttl: Duration,
    state: Rc<RefCell<LockState>>,
}

impl<E: Env> MemoryLock<E> {
    /// A lock whose grants last `ttl`, the first with token `first_token`.
    pub fn new(env: E, ttl: Duration, first_token: u64) -> Self {
        MemoryLock {
            env,
            ttl,
            state: Rc::new(RefCell::new(LockState {
                holder: None,
                next_lease: 1,
                next_token: first_token,
            })),
        }
    }
}

impl<E: Env> LockService for MemoryLock<E> {
    async fn acquire(&self) -> Result<Lease, LockError> {
        let now = self.env.now();
        let mut s = self.state.borrow_mut();
        if s.holder.is_some_and(|(_, until)| now < until) {
            return Err(LockError::Held);
        }
        let lease = Lease {
            id: s.next_lease,
            token: Some(s.next_token),
            ttl: self.ttl,
        };
        s.next_lease += 1;
        s.next_token += 1;
        s.holder = Some((lease.id, now + self.ttl));
        Ok(lease)
    }

    async fn keep_alive(&self, lease: &Lease) -> Result<Duration, LockError> {
        let now = self.env.now();
        let mut s = self.state.borrow_mut();
        match s.holder {
            Some((id, until)) if id == lease.id && now < until => {
                s.holder = Some((id, now + self.ttl));
                Ok(self.ttl)
            }
            _ => Err(LockError::Lost),
        }
    }

    async fn release(&self, lease: &Lease) -> Result<(), LockError> {
        let mut s = self.state.borrow_mut();
        if s.holder.is_some_and(|(id, _)| id == lease.id) {
            s.holder = None;
        }
        Ok(())
    }
}

#[derive(Default)]
struct StorageState {
    value: i64,
    version: u64,
    max_token: Option<u64>,
}

/// A one-key storage that refuses a token lower than one it accepted.
#[derive(Clone, Default)]
pub struct MemoryStorage {
    state: Rc<RefCell<StorageState>>,
}

impl MemoryStorage {
    /// The value and how many writes it has applied.
    pub fn contents(&self) -> (i64, u64) {
        let s = self.state.borrow();
        (s.value, s.version)
    }
}

impl Storage for MemoryStorage {
    async fn put(&self, _key: &str, value: i64, token: Option<u64>) -> Result<(), StorageError> {
        let mut s = self.state.borrow_mut();
        if let (Some(token), Some(max)) = (token, s.max_token) {
            if token < max {
                return Err(StorageError::Rejected(format!(
                    "token {token} is older than {max}"
                )));
            }
        }
        s.max_token = s.max_token.max(token);
        s.value = value;
        s.version += 1;
        Ok(())
    }

    async fn get(&self, _key: &str) -> Result<(i64, u64), StorageError> {
        let s = self.state.borrow();
        Ok((s.value, s.version))
    }
}
