//! The seam's wider operations, each checked by one generic function that
//! runs against fencesim's simulated clients (`tests/operations.rs`) and
//! against real servers (`real-servers <service> <address> operations`):
//! SQL transactions and advisory locks, Redis counters and the fenced-write
//! script, etcd's keys, leases and transactions with compares. Each
//! returns the lines it checked (`ok: …`), or the first that did not hold.

use std::time::Duration;

use fencesim_env::{
    Etcd, EtcdCompare, EtcdCompareOp, EtcdError, EtcdOp, EtcdOpResponse, EtcdTxn, Redis, Sql,
    SqlTransaction, SqlUpdate,
};

/// What the checks saw, line by line.
#[derive(Default)]
pub struct Seen {
    /// One line per check that held.
    pub lines: Vec<String>,
}

impl Seen {
    fn check(&mut self, what: &str, ok: bool, got: impl std::fmt::Debug) -> Result<(), String> {
        if ok {
            self.lines.push(format!("ok: {what}: {got:?}"));
            Ok(())
        } else {
            Err(format!("FAILED: {what}: got {got:?}"))
        }
    }
}

fn text<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// Transactions and advisory locks on two connections `a` and `b` of one
/// database whose update statement is fenced (`AND lock_token <=
/// :token`), on the row `key` (fresh) and the lock `lock`.
pub async fn sql_operations<D: Sql>(a: &D, b: &D, key: &str, lock: i64) -> Result<Seen, String> {
    let mut s = Seen::default();
    let (before, _) = a.fetch_value(key).await.map_err(text)?;
    // A rolled-back transaction leaves nothing.
    let tx = a.begin().await.map_err(text)?;
    let n = tx
        .execute(&SqlUpdate::new(key, 5, Some(10)))
        .await
        .map_err(text)?;
    s.check("an UPDATE inside a transaction changes its row", n == 1, n)?;
    let inside = tx.fetch_value(key).await.map_err(text)?;
    s.check("the transaction reads its own write", inside.0 == 5, inside)?;
    tx.rollback().await.map_err(text)?;
    let after = a.fetch_value(key).await.map_err(text)?;
    s.check("a rollback undoes it", after.0 == before, after)?;
    // A committed one stays.
    let tx = a.begin().await.map_err(text)?;
    tx.execute(&SqlUpdate::new(key, 6, Some(10)))
        .await
        .map_err(text)?;
    tx.commit().await.map_err(text)?;
    let after = b.fetch_value(key).await.map_err(text)?;
    s.check(
        "a commit applies it, seen by another connection",
        after.0 == 6,
        after,
    )?;
    // The fence inside a transaction.
    let tx = a.begin().await.map_err(text)?;
    let n = tx
        .execute(&SqlUpdate::new(key, 7, Some(9)))
        .await
        .map_err(text)?;
    s.check(
        "an older token changes no row inside a transaction",
        n == 0,
        n,
    )?;
    tx.commit().await.map_err(text)?;
    let after = b.fetch_value(key).await.map_err(text)?;
    s.check("the row keeps the newer token's value", after.0 == 6, after)?;
    // Session locks: one session at a time, re-entrant.
    let got = a.try_advisory_lock(lock).await.map_err(text)?;
    s.check("pg_try_advisory_lock on a free lock", got, got)?;
    let got = b.try_advisory_lock(lock).await.map_err(text)?;
    s.check("pg_try_advisory_lock held by another session", !got, got)?;
    a.advisory_lock(lock).await.map_err(text)?;
    s.check(
        "pg_advisory_lock again in the same session (re-entrant)",
        true,
        (),
    )?;
    let first = a.advisory_unlock(lock).await.map_err(text)?;
    let second = a.advisory_unlock(lock).await.map_err(text)?;
    let third = a.advisory_unlock(lock).await.map_err(text)?;
    s.check(
        "two holds need two unlocks; a third unlocks nothing",
        first && second && !third,
        (first, second, third),
    )?;
    b.advisory_lock(lock).await.map_err(text)?;
    s.check(
        "pg_advisory_lock of the freed lock by the other session",
        true,
        (),
    )?;
    let got = b.advisory_unlock(lock).await.map_err(text)?;
    s.check("pg_advisory_unlock by its holder", got, got)?;
    // Transaction locks: released by the commit.
    let tx = a.begin().await.map_err(text)?;
    let got = tx.try_advisory_xact_lock(lock).await.map_err(text)?;
    s.check("pg_try_advisory_xact_lock inside a transaction", got, got)?;
    tx.advisory_xact_lock(lock).await.map_err(text)?;
    let got = b.try_advisory_lock(lock).await.map_err(text)?;
    s.check(
        "another session cannot take a transaction's lock",
        !got,
        got,
    )?;
    tx.commit().await.map_err(text)?;
    let got = b.try_advisory_lock(lock).await.map_err(text)?;
    s.check("the commit released it", got, got)?;
    let unlocked = b.advisory_unlock(lock).await.map_err(text)?;
    s.check("and the other session unlocks it", unlocked, unlocked)?;
    let got = a.advisory_unlock(lock).await.map_err(text)?;
    s.check(
        "a transaction lock is not the session's to unlock",
        !got,
        got,
    )?;
    Ok(s)
}

/// Counters and the fenced-write script on keys under `prefix` (fresh).
pub async fn redis_operations<R: Redis>(redis: &R, prefix: &str) -> Result<Seen, String> {
    let mut s = Seen::default();
    let counter = format!("{prefix}:counter");
    let first = redis.incr(&counter).await.map_err(text)?;
    let second = redis.incr(&counter).await.map_err(text)?;
    s.check(
        "INCR counts from 0, one by one",
        (first, second) == (1, 2),
        (first, second),
    )?;
    let n = redis.incr_by(&counter, 40).await.map_err(text)?;
    s.check("INCRBY adds", n == 42, n)?;
    let got = redis.get_i64(&counter).await.map_err(text)?;
    s.check("GET reads the counter", got == Some(42), got)?;
    let missing = redis
        .get_i64(&format!("{prefix}:none"))
        .await
        .map_err(text)?;
    s.check("GET of a missing key", missing.is_none(), missing)?;
    let key = format!("{prefix}:x");
    let set = redis.set_if_token(&key, 1, 34).await.map_err(text)?;
    s.check("the fenced write with the first token", set, set)?;
    let set = redis.set_if_token(&key, 2, 33).await.map_err(text)?;
    s.check("the fenced write refuses an older token", !set, set)?;
    let set = redis.set_if_token(&key, 3, 34).await.map_err(text)?;
    s.check("and takes the same token again", set, set)?;
    let got = redis.get_i64(&key).await.map_err(text)?;
    s.check("the value is the last accepted", got == Some(3), got)?;
    Ok(s)
}

/// Keys, leases and transactions on keys under `prefix` (fresh), with the
/// lock `<prefix>-lock`: a fenced write on the lock key's revision, the
/// guarded delete, compares on mod revision and value, a put on an unknown
/// lease, and keys going with their lease.
pub async fn etcd_operations<C: Etcd>(etcd: &C, prefix: &str) -> Result<Seen, String> {
    let mut s = Seen::default();
    let lease = etcd
        .lease_grant(Duration::from_secs(10))
        .await
        .map_err(text)?;
    let lock = etcd
        .lock(&format!("{prefix}-lock"), lease.id)
        .await
        .map_err(text)?;
    let data = format!("{prefix}/data").into_bytes();
    let holds =
        || EtcdCompare::create_revision(lock.key.clone(), EtcdCompareOp::Equal, lock.revision);
    // The fenced write: applied while the lock key is the one granted.
    let fenced = EtcdTxn::new()
        .when([holds()])
        .and_then([EtcdOp::put(data.clone(), "1")]);
    let answer = etcd.txn(&fenced).await.map_err(text)?;
    s.check(
        "a put guarded by the lock key's create revision",
        answer.succeeded,
        answer.succeeded,
    )?;
    let kv = etcd.get(&data).await.map_err(text)?;
    let ok = kv.as_ref().is_some_and(|kv| {
        kv.value == b"1" && kv.version == 1 && kv.create_revision == kv.mod_revision
    });
    s.check(
        "get gives the value and its revisions",
        ok,
        kv.as_ref().map(|kv| kv.version),
    )?;
    let kv = kv.expect("just checked");
    s.check(
        "the write's revision is above the lock's",
        kv.mod_revision > lock.revision,
        (kv.mod_revision, lock.revision),
    )?;
    // Compare on mod revision: a second writer with a stale read loses.
    let cas = |rev| {
        EtcdTxn::new()
            .when([EtcdCompare::mod_revision(
                data.clone(),
                EtcdCompareOp::Equal,
                rev,
            )])
            .and_then([EtcdOp::put(data.clone(), "2")])
            .or_else([EtcdOp::get(data.clone())])
    };
    let answer = etcd.txn(&cas(kv.mod_revision)).await.map_err(text)?;
    s.check(
        "a put on the mod revision read",
        answer.succeeded,
        answer.revision,
    )?;
    let answer = etcd.txn(&cas(kv.mod_revision)).await.map_err(text)?;
    let current = match answer.responses.first() {
        Some(EtcdOpResponse::Get(Some(kv))) => Some(kv.value.clone()),
        _ => None,
    };
    s.check(
        "the same put on a stale mod revision is refused, its else branch reads",
        !answer.succeeded && current.as_deref() == Some(&b"2"[..]),
        (answer.succeeded, current.map(String::from_utf8)),
    )?;
    // A key on the lease; a put on a lease that does not exist.
    let leased = format!("{prefix}/leased").into_bytes();
    etcd.put(&leased, b"on the lease", Some(lease.id))
        .await
        .map_err(text)?;
    let kv = etcd.get(&leased).await.map_err(text)?;
    let on = kv.as_ref().map(|kv| kv.lease);
    s.check("a put on the lease", on == Some(lease.id), on)?;
    let unknown = etcd.put(&leased, b"x", Some(0x7eee_eeee)).await;
    s.check(
        "a put on an unknown lease",
        unknown == Err(EtcdError::LeaseNotFound),
        &unknown,
    )?;
    // The value compare, and a delete.
    let answer = etcd
        .txn(
            &EtcdTxn::new()
                .when([EtcdCompare::value(data.clone(), EtcdCompareOp::Equal, "2")])
                .and_then([EtcdOp::delete(data.clone())]),
        )
        .await
        .map_err(text)?;
    s.check(
        "a delete guarded by the value",
        answer.succeeded && answer.responses == [EtcdOpResponse::Delete { deleted: 1 }],
        &answer.responses,
    )?;
    let deleted = etcd.delete(&data).await.map_err(text)?;
    s.check(
        "a delete of a missing key deletes nothing",
        deleted == 0,
        deleted,
    )?;
    // The guarded delete of the lock key: unlocks, and fences what follows.
    let unlock = EtcdTxn::new()
        .when([holds()])
        .and_then([EtcdOp::delete(lock.key.clone())]);
    let answer = etcd.txn(&unlock).await.map_err(text)?;
    s.check(
        "the guarded delete of the lock key",
        answer.succeeded,
        &answer.responses,
    )?;
    let answer = etcd.txn(&fenced).await.map_err(text)?;
    s.check(
        "the fenced write after it is refused",
        !answer.succeeded,
        answer.succeeded,
    )?;
    // The lease's keys go with it.
    etcd.lease_revoke(lease.id).await.map_err(text)?;
    let kv = etcd.get(&leased).await.map_err(text)?;
    s.check(
        "a revoked lease's key is gone",
        kv.is_none(),
        kv.map(|kv| kv.lease),
    )?;
    Ok(s)
}
