//! `real-servers <service> <address> errors [PID]`: the production
//! adapters' error cases, as a real server gives them. A conditional
//! write refused (`SET NX` on a held key, a compare script on another
//! value, an older token, an `UPDATE` whose `WHERE` matches no row), a
//! lease the server no longer knows, an error the database raised, and a
//! timeout: the server (process `PID`; for PostgreSQL the backend serving
//! the connection) stopped with SIGSTOP while a call waits, then resumed.

use std::future::Future;

use fencesim_env::etcd::{EtcdClient, EtcdStorage};
use fencesim_env::postgres::{PgLock, PgSql};
use fencesim_env::redis::{RedisLock, RedisStorage};
use fencesim_env::{
    Etcd, EtcdError, Lease, LockError, LockService, Redis, RedisError, Sql, SqlError, SqlUpdate,
    Storage, StorageError,
};

use crate::{postgres, redis_connection, reset, Service, LOCK, TIMEOUT, TTL};

/// Compares what a call gave with what the server should make of it.
struct Checks {
    failed: u32,
}

impl Checks {
    fn check(&mut self, what: &str, ok: bool, got: impl std::fmt::Debug) {
        if ok {
            println!("ok: {what}: {got:?}");
        } else {
            println!("FAILED: {what}: got {got:?}");
            self.failed += 1;
        }
    }
}

/// `call` while the process `pid` is stopped: it must time out.
async fn stalled<T>(pid: i32, call: impl Future<Output = T>) -> Result<T, String> {
    signal(pid, libc::SIGSTOP)?;
    let answer = call.await;
    signal(pid, libc::SIGCONT)?;
    Ok(answer)
}

fn signal(pid: i32, signal: libc::c_int) -> Result<(), String> {
    // SAFETY: kill(2) sends a signal; it touches no memory of ours.
    if unsafe { libc::kill(pid, signal) } == 0 {
        Ok(())
    } else {
        Err(format!("kill {pid}: {}", std::io::Error::last_os_error()))
    }
}

/// Runs the checks of `service`: how many failed.
pub async fn errors(service: Service, address: &str, pid: Option<i32>) -> Result<u32, String> {
    reset(service, address).await?;
    let mut c = Checks { failed: 0 };
    match service {
        Service::Redis => redis(&mut c, address, pid).await?,
        Service::Postgres => postgres_errors(&mut c, address).await?,
        Service::Etcd => etcd(&mut c, address, pid).await?,
    }
    Ok(c.failed)
}

async fn redis(c: &mut Checks, address: &str, pid: Option<i32>) -> Result<(), String> {
    let conn = redis_connection(address).await?;
    let lock = RedisLock::new(conn.clone(), TTL, TIMEOUT);
    let storage = RedisStorage::new(conn, TIMEOUT);
    let first = lock.set_nx_px(LOCK, 1).await;
    c.check(
        "SET NX PX on a free key",
        matches!(first, Ok(Some(_))),
        &first,
    );
    let second = lock.set_nx_px(LOCK, 2).await;
    c.check(
        "SET NX PX on a held key: Ok(None)",
        second == Ok(None),
        &second,
    );
    let other = lock.pexpire_if_eq(LOCK, 2).await;
    c.check(
        "compare-and-PEXPIRE with another value: Ok(false)",
        other == Ok(false),
        &other,
    );
    let _ = storage.put("x", 1, Some(5)).await;
    let older = storage.put("x", 2, Some(4)).await;
    c.check(
        "a write with an older token: refused",
        matches!(&older, Err(StorageError::Rejected(why)) if why == "token 4 is older than 5"),
        &older,
    );
    if let Some(pid) = pid {
        let late = stalled(pid, lock.set_nx_px("another", 3)).await?;
        c.check(
            "a stopped redis-server: Timeout",
            late == Err(RedisError::Timeout),
            &late,
        );
    }
    Ok(())
}

async fn postgres_errors(c: &mut Checks, address: &str) -> Result<(), String> {
    let lock = PgLock::new(postgres(address).await?, LOCK, TTL, TIMEOUT);
    let first = lock.acquire().await;
    c.check("a lease on a free lock", first.is_ok(), &first);
    let second = lock.acquire().await;
    c.check(
        "a lease on a held lock: Held",
        second == Err(LockError::Held),
        &second,
    );
    let stranger = Lease {
        id: 99,
        token: Some(99),
        ttl: TTL,
    };
    let kept = lock.keep_alive(&stranger).await;
    c.check(
        "keep-alive of a lease not held: Lost",
        kept == Err(LockError::Lost),
        &kept,
    );

    let client = postgres(address).await?;
    let backend: i32 = client
        .query_one("SELECT pg_backend_pid()", &[])
        .await
        .map_err(|e| e.to_string())?
        .get(0);
    let db = PgSql::new(client, crate::FENCED_UPDATE, TIMEOUT);
    let _ = db.execute(&SqlUpdate::new("x", 1, Some(5))).await;
    let older = db.execute(&SqlUpdate::new("x", 2, Some(4))).await;
    c.check(
        "an UPDATE with an older token: 0 rows",
        older == Ok(0),
        &older,
    );
    let wrong = PgSql::new(
        postgres(address).await?,
        "UPDATE nowhere SET value = :value WHERE key = :key",
        TIMEOUT,
    );
    let refused = wrong.execute(&SqlUpdate::new("x", 3, None)).await;
    c.check(
        "an UPDATE of a missing table: the database's error and code",
        matches!(&refused, Err(SqlError::Database(why)) if why.starts_with("42P01")),
        &refused,
    );
    let late = stalled(backend, db.execute(&SqlUpdate::new("x", 6, Some(6)))).await?;
    c.check(
        "a stopped PostgreSQL backend: Timeout",
        late == Err(SqlError::Timeout),
        &late,
    );
    Ok(())
}

async fn etcd(c: &mut Checks, address: &str, pid: Option<i32>) -> Result<(), String> {
    let client = etcd_client::Client::connect([address], None)
        .await
        .map_err(|e| format!("etcd at {address}: {e}"))?;
    let etcd = EtcdClient::new(client.clone(), TIMEOUT);
    let storage = EtcdStorage::new(client, TIMEOUT);
    let lease = etcd
        .lease_grant(TTL)
        .await
        .map_err(|e| format!("lease_grant: {e}"))?;
    let revoked = etcd.lease_revoke(lease.id).await;
    c.check("LeaseRevoke", revoked.is_ok(), &revoked);
    let kept = etcd.lease_keep_alive(lease.id).await;
    c.check(
        "keep-alive of a revoked lease: LeaseNotFound",
        kept == Err(EtcdError::LeaseNotFound),
        &kept,
    );
    let locked = etcd.lock(LOCK, lease.id).await;
    c.check(
        "Lock on a revoked lease: LeaseNotFound",
        locked == Err(EtcdError::LeaseNotFound),
        &locked,
    );
    let _ = storage.put("x", 1, Some(5)).await;
    let older = storage.put("x", 2, Some(4)).await;
    c.check(
        "a write with an older token: refused by the transaction",
        matches!(&older, Err(StorageError::Rejected(why)) if why == "token 4 is older than 5"),
        &older,
    );
    if let Some(pid) = pid {
        let late = stalled(pid, etcd.lease_grant(TTL)).await?;
        c.check(
            "a stopped etcd: Timeout",
            late == Err(EtcdError::Timeout),
            &late,
        );
    }
    Ok(())
}
