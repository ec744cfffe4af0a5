//! etcd on the `etcd-client` crate (feature `etcd`): its leases and locks
//! ([`EtcdClient`], the [`Etcd`] trait) and a storage whose fence is an
//! etcd transaction on the lock key's revision ([`EtcdStorage`], the
//! [`Storage`] trait).
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//! use fencesim_env::etcd::{EtcdClient, EtcdStorage};
//! use fencesim_env::{Etcd, Storage};
//!
//! let client = etcd_client::Client::connect(["http://127.0.0.1:2379"], None).await?;
//! let timeout = Duration::from_secs(1);
//! let etcd = EtcdClient::new(client.clone(), timeout);
//! let storage = EtcdStorage::new(client, timeout);
//! let lease = etcd.lease_grant(Duration::from_secs(2)).await?;
//! let lock = etcd.lock("job", lease.id).await?;
//! storage.put("x", 1, Some(lock.revision as u64)).await?;
//! etcd.unlock(&lock).await?;
//! # Ok(()) }
//! ```

use std::future::Future;
use std::time::Duration;

use etcd_client::{
    Client, Compare, CompareOp, KeyValue, LockOptions, PutOptions, Txn, TxnOp, TxnOpResponse,
};

use crate::{
    Etcd, EtcdCompare, EtcdCompareOp, EtcdError, EtcdKeyValue, EtcdLease, EtcdLock, EtcdOp,
    EtcdOpResponse, EtcdTarget, EtcdTxn, EtcdTxnResponse, Storage, StorageError,
};

fn error(e: etcd_client::Error) -> EtcdError {
    match e {
        etcd_client::Error::GRpcStatus(status) => {
            if status.message().contains("requested lease not found") {
                EtcdError::LeaseNotFound
            } else if status.code() == tonic::Code::DeadlineExceeded {
                EtcdError::Timeout
            } else {
                EtcdError::Other(format!("{:?}: {}", status.code(), status.message()))
            }
        }
        // The keep-alive stream's answer for a lease the server has lost.
        etcd_client::Error::LeaseKeepAliveError(why) if why.contains("lease not found") => {
            EtcdError::LeaseNotFound
        }
        e => EtcdError::Other(e.to_string()),
    }
}

async fn within<T>(
    timeout: Duration,
    call: impl Future<Output = Result<T, etcd_client::Error>>,
) -> Result<T, EtcdError> {
    match tokio::time::timeout(timeout, call).await {
        Ok(answer) => answer.map_err(error),
        Err(_) => Err(EtcdError::Timeout),
    }
}

fn compare(c: &EtcdCompare) -> Compare {
    let op = match c.op {
        EtcdCompareOp::Equal => CompareOp::Equal,
        EtcdCompareOp::NotEqual => CompareOp::NotEqual,
        EtcdCompareOp::Greater => CompareOp::Greater,
        EtcdCompareOp::Less => CompareOp::Less,
    };
    let key = c.key.clone();
    match &c.target {
        EtcdTarget::CreateRevision(r) => Compare::create_revision(key, op, *r),
        EtcdTarget::ModRevision(r) => Compare::mod_revision(key, op, *r),
        EtcdTarget::Version(v) => Compare::version(key, op, *v),
        EtcdTarget::Value(v) => Compare::value(key, op, v.clone()),
    }
}

fn operation(op: &EtcdOp) -> TxnOp {
    match op {
        EtcdOp::Put { key, value, lease } => {
            let options = (*lease != 0).then(|| PutOptions::new().with_lease(*lease));
            TxnOp::put(key.clone(), value.clone(), options)
        }
        EtcdOp::Delete { key } => TxnOp::delete(key.clone(), None),
        EtcdOp::Get { key } => TxnOp::get(key.clone(), None),
    }
}

fn key_value(kv: &KeyValue) -> EtcdKeyValue {
    EtcdKeyValue {
        key: kv.key().to_vec(),
        value: kv.value().to_vec(),
        create_revision: kv.create_revision(),
        mod_revision: kv.mod_revision(),
        version: kv.version(),
        lease: kv.lease(),
    }
}

/// An etcd client whose calls wait at most `timeout` for their answer
/// (`lock` excepted: it waits for the lock).
#[derive(Clone)]
pub struct EtcdClient {
    client: Client,
    timeout: Duration,
}

impl EtcdClient {
    /// The [`Etcd`] calls on `client`.
    pub fn new(client: Client, timeout: Duration) -> EtcdClient {
        EtcdClient { client, timeout }
    }
}

impl Etcd for EtcdClient {
    async fn lease_grant(&self, ttl: Duration) -> Result<EtcdLease, EtcdError> {
        let mut client = self.client.clone();
        let ttl = i64::try_from(ttl.as_secs()).unwrap_or(i64::MAX);
        let granted = within(self.timeout, client.lease_grant(ttl, None)).await?;
        Ok(EtcdLease {
            id: granted.id(),
            ttl: Duration::from_secs(granted.ttl().max(0) as u64),
        })
    }

    async fn lease_keep_alive(&self, lease: i64) -> Result<Duration, EtcdError> {
        let mut client = self.client.clone();
        let answer = async move {
            let (mut keeper, mut stream) = client.lease_keep_alive(lease).await?;
            keeper.keep_alive().await?;
            stream.message().await
        };
        match within(self.timeout, answer).await? {
            Some(answer) if answer.ttl() > 0 => Ok(Duration::from_secs(answer.ttl() as u64)),
            Some(_) => Err(EtcdError::LeaseNotFound),
            None => Err(EtcdError::Other(
                "the keep-alive stream ended without an answer".into(),
            )),
        }
    }

    async fn lock(&self, name: &str, lease: i64) -> Result<EtcdLock, EtcdError> {
        let mut client = self.client.clone();
        let locked = client
            .lock(name, Some(LockOptions::new().with_lease(lease)))
            .await
            .map_err(error)?;
        let key = locked.key().to_vec();
        // The fencing token is the key's create revision (the answer's
        // header gives the store's revision, which later writes move).
        let got = within(self.timeout, client.get(key.clone(), None)).await?;
        match got.kvs().first() {
            Some(kv) => Ok(EtcdLock {
                key,
                lease,
                revision: kv.create_revision(),
            }),
            // The key went with its lease before it could be read.
            None => Err(EtcdError::LeaseNotFound),
        }
    }

    async fn unlock(&self, lock: &EtcdLock) -> Result<(), EtcdError> {
        let mut client = self.client.clone();
        within(self.timeout, client.unlock(lock.key.clone())).await?;
        Ok(())
    }

    async fn lease_revoke(&self, lease: i64) -> Result<(), EtcdError> {
        let mut client = self.client.clone();
        within(self.timeout, client.lease_revoke(lease)).await?;
        Ok(())
    }

    async fn txn(&self, txn: &EtcdTxn) -> Result<EtcdTxnResponse, EtcdError> {
        let mut client = self.client.clone();
        let request = Txn::new()
            .when(txn.compares.iter().map(compare).collect::<Vec<_>>())
            .and_then(txn.then.iter().map(operation).collect::<Vec<_>>())
            .or_else(txn.otherwise.iter().map(operation).collect::<Vec<_>>());
        let answer = within(self.timeout, client.txn(request)).await?;
        let revision = answer.header().map_or(0, |h| h.revision());
        let responses = answer
            .op_responses()
            .into_iter()
            .map(|r| match r {
                TxnOpResponse::Put(_) => EtcdOpResponse::Put,
                TxnOpResponse::Delete(d) => EtcdOpResponse::Delete {
                    deleted: d.deleted(),
                },
                TxnOpResponse::Get(g) => EtcdOpResponse::Get(g.kvs().first().map(key_value)),
                // No operation of ours is a nested transaction.
                TxnOpResponse::Txn(_) => EtcdOpResponse::Delete { deleted: 0 },
            })
            .collect();
        Ok(EtcdTxnResponse {
            succeeded: answer.succeeded(),
            revision,
            responses,
        })
    }
}

/// A storage on etcd: a key's value (in decimal) at `<key>`, the largest
/// token a write carried at `<key>/token` (zero-padded to 20 digits, so
/// that etcd's byte comparison orders it as a number). A write with a
/// token is one transaction: if the stored token is greater, it is
/// refused; otherwise the value and the token are put. A write without a
/// token is a plain put. The version is the key's etcd version.
#[derive(Clone)]
pub struct EtcdStorage {
    client: Client,
    timeout: Duration,
}

impl EtcdStorage {
    /// A storage on `client`; every call waits at most `timeout`.
    pub fn new(client: Client, timeout: Duration) -> EtcdStorage {
        EtcdStorage { client, timeout }
    }
}

fn storage_error(e: EtcdError) -> StorageError {
    match e {
        EtcdError::Timeout => StorageError::Unavailable,
        e => StorageError::Rejected(e.to_string()),
    }
}

impl Storage for EtcdStorage {
    async fn put(&self, key: &str, value: i64, token: Option<u64>) -> Result<(), StorageError> {
        let mut client = self.client.clone();
        let Some(token) = token else {
            within(self.timeout, client.put(key, value.to_string(), None))
                .await
                .map_err(storage_error)?;
            return Ok(());
        };
        let token_key = format!("{key}/token");
        let padded = format!("{token:020}");
        // A compare of a missing key's value is false: the first write puts.
        let txn = Txn::new()
            .when([Compare::value(
                token_key.clone(),
                CompareOp::Greater,
                padded.clone(),
            )])
            .and_then([TxnOp::get(token_key.clone(), None)])
            .or_else([
                TxnOp::put(key, value.to_string(), None),
                TxnOp::put(token_key, padded, None),
            ]);
        let answer = within(self.timeout, client.txn(txn))
            .await
            .map_err(storage_error)?;
        if !answer.succeeded() {
            return Ok(());
        }
        let stored = answer.op_responses().into_iter().find_map(|r| match r {
            TxnOpResponse::Get(got) => got
                .kvs()
                .first()
                .and_then(|kv| kv.value_str().ok().and_then(|v| v.parse::<u64>().ok())),
            _ => None,
        });
        Err(StorageError::Rejected(match stored {
            Some(stored) => format!("token {token} is older than {stored}"),
            None => format!("token {token} is older than the stored one"),
        }))
    }

    async fn get(&self, key: &str) -> Result<(i64, u64), StorageError> {
        let mut client = self.client.clone();
        let got = within(self.timeout, client.get(key, None))
            .await
            .map_err(storage_error)?;
        match got.kvs().first() {
            Some(kv) => {
                let value = kv
                    .value_str()
                    .ok()
                    .and_then(|v| v.parse::<i64>().ok())
                    .ok_or_else(|| StorageError::Rejected(format!("{key} holds no integer")))?;
                Ok((value, kv.version().max(0) as u64))
            }
            None => Ok((0, 0)),
        }
    }
}
