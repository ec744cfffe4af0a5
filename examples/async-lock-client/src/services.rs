//! The lock client's lock and storage on the services of the seam: a
//! mutex on [`Etcd`] (a lease and a lock key, the key's revision as the
//! token), a mutex on [`Redis`] (`SET NX PX` with the counter's token), a
//! storage on [`Sql`] (the application's `UPDATE`). Each is generic over
//! the trait, so the same code runs on fencesim's simulated clients and on
//! the production adapters of `fencesim-env`.

use std::cell::RefCell;
use std::time::Duration;

use fencesim_env::{
    select, Either, Env, Etcd, EtcdError, EtcdLock, Lease, LockError, LockService, Redis,
    RedisError, Sql, SqlError, SqlUpdate, Storage, StorageError,
};

/// etcd's lock recipe as a [`LockService`]: a lease of `ttl`, `Lock` on it
/// (waited for at most `wait`, the lease kept alive meanwhile, as etcd's
/// `concurrency.Session` does; then the lease is revoked and the lock
/// reported held), keep-alives on the lease, `Unlock` and `LeaseRevoke` to
/// give it up. The token is the lock key's create
/// revision. One holder at a time per value.
pub struct EtcdMutex<E, C> {
    env: E,
    etcd: C,
    name: String,
    ttl: Duration,
    wait: Duration,
    held: RefCell<Option<EtcdLock>>,
}

impl<E: Env, C: Etcd> EtcdMutex<E, C> {
    /// The lock `name` on `etcd`, held on leases of `ttl`.
    pub fn new(env: E, etcd: C, name: &str, ttl: Duration, wait: Duration) -> Self {
        EtcdMutex {
            env,
            etcd,
            name: name.to_owned(),
            ttl,
            wait,
            held: RefCell::new(None),
        }
    }
}

fn etcd_error(e: EtcdError) -> LockError {
    match e {
        EtcdError::LeaseNotFound => LockError::Lost,
        EtcdError::Timeout | EtcdError::Other(_) => LockError::Unavailable,
    }
}

impl<E: Env, C: Etcd> LockService for EtcdMutex<E, C> {
    async fn acquire(&self) -> Result<Lease, LockError> {
        // The seam counts a lease's TTL from when it was asked for; etcd
        // counts it from the lease's latest refresh, which the wait below
        // moves on: the TTL handed back is stretched by as much.
        let asked = self.env.now();
        let refreshed = std::cell::Cell::new(asked);
        let lease = self.etcd.lease_grant(self.ttl).await.map_err(etcd_error)?;
        // While `Lock` waits, the lease is kept alive; the wait ends if the
        // server says the lease is gone.
        let keep = async {
            loop {
                self.env.sleep(lease.ttl / 3).await;
                let at = self.env.now();
                match self.etcd.lease_keep_alive(lease.id).await {
                    Ok(_) => refreshed.set(at),
                    Err(EtcdError::LeaseNotFound) => return,
                    Err(_) => {}
                }
            }
        };
        let locked = select(self.etcd.lock(&self.name, lease.id), keep);
        match self.env.timeout(self.wait, locked).await {
            Ok(Either::Right(())) => Err(LockError::Lost),
            Ok(Either::Left(Ok(lock))) => {
                let granted = Lease {
                    id: lease.id as u64,
                    token: (lock.revision > 0).then_some(lock.revision as u64),
                    ttl: lease.ttl + (refreshed.get() - asked),
                };
                *self.held.borrow_mut() = Some(lock);
                Ok(granted)
            }
            Ok(Either::Left(Err(e))) => {
                let _ = self.etcd.lease_revoke(lease.id).await;
                Err(etcd_error(e))
            }
            Err(_) => {
                let _ = self.etcd.lease_revoke(lease.id).await;
                Err(LockError::Held)
            }
        }
    }

    async fn keep_alive(&self, lease: &Lease) -> Result<Duration, LockError> {
        self.etcd
            .lease_keep_alive(lease.id as i64)
            .await
            .map_err(etcd_error)
    }

    async fn release(&self, lease: &Lease) -> Result<(), LockError> {
        let lock = self.held.borrow_mut().take();
        if let Some(lock) = lock {
            let _ = self.etcd.unlock(&lock).await;
        }
        self.etcd
            .lease_revoke(lease.id as i64)
            .await
            .map_err(etcd_error)
    }
}

/// The single-instance Redis lock as a [`LockService`]: `SET key value NX
/// PX` with a fresh value, the compare-and-`PEXPIRE` script to keep it,
/// the compare-and-`DEL` script to give it up. The lease's id is its value,
/// its token the counter's.
pub struct RedisMutex<R> {
    redis: R,
    key: String,
}

impl<R: Redis> RedisMutex<R> {
    /// The lock on `key` of `redis`.
    pub fn new(redis: R, key: &str) -> Self {
        RedisMutex {
            redis,
            key: key.to_owned(),
        }
    }
}

fn redis_error(_: RedisError) -> LockError {
    LockError::Unavailable
}

impl<R: Redis> LockService for RedisMutex<R> {
    async fn acquire(&self) -> Result<Lease, LockError> {
        let value = self.redis.random_value();
        match self.redis.set_nx_px(&self.key, value).await {
            Ok(Some(set)) => Ok(Lease {
                id: value,
                token: set.token,
                ttl: set.ttl,
            }),
            Ok(None) => Err(LockError::Held),
            Err(e) => Err(redis_error(e)),
        }
    }

    async fn keep_alive(&self, lease: &Lease) -> Result<Duration, LockError> {
        match self.redis.pexpire_if_eq(&self.key, lease.id).await {
            Ok(true) => Ok(lease.ttl),
            Ok(false) => Err(LockError::Lost),
            Err(e) => Err(redis_error(e)),
        }
    }

    async fn release(&self, lease: &Lease) -> Result<(), LockError> {
        self.redis
            .del_if_eq(&self.key, lease.id)
            .await
            .map_err(redis_error)
    }
}

/// A [`Storage`] on a SQL database: each write runs its update statement
/// with the key, the value and the token bound; a statement that changes no
/// row refused the write.
pub struct SqlTable<D> {
    db: D,
}

impl<D: Sql> SqlTable<D> {
    /// The storage on `db`.
    pub fn new(db: D) -> Self {
        SqlTable { db }
    }
}

fn sql_error(e: SqlError) -> StorageError {
    match e {
        SqlError::Timeout => StorageError::Unavailable,
        SqlError::Database(why) => StorageError::Rejected(why),
    }
}

impl<D: Sql> Storage for SqlTable<D> {
    async fn put(&self, key: &str, value: i64, token: Option<u64>) -> Result<(), StorageError> {
        match self.db.execute(&SqlUpdate::new(key, value, token)).await {
            Ok(0) => Err(StorageError::Rejected(match token {
                Some(token) => format!("the update changed no row (token {token})"),
                None => "the update changed no row".to_owned(),
            })),
            Ok(_) => Ok(()),
            Err(e) => Err(sql_error(e)),
        }
    }

    async fn get(&self, key: &str) -> Result<(i64, u64), StorageError> {
        self.db.fetch_value(key).await.map_err(sql_error)
    }
}
