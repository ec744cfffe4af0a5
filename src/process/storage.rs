//! A simulated client of the scenario's storage node, as a [`Storage`] a
//! process awaits.

use std::time::Duration;

use fencesim_env::{Env, Probe, Storage, StorageError, WriteOp};
use sim::process::Handle;
use sim::NodeId;

use crate::protocol::{Msg, Op};

/// Writes and reads sent, on the node's disk: write ids (`client1/3`) stay
/// unique in a run across crashes.
const WRITES: &str = "storage/writes";
const READS: &str = "storage/reads";

/// A client of the storage node `storage` that waits at most `timeout` for
/// each answer and journals what it sends and hears (`wrote`, `acked`,
/// `read`) as fencesim's bundled client does. Its writes carry the token
/// they are given; the storage's design decides what it checks.
pub struct SimStorage {
    handle: Handle<Msg>,
    storage: NodeId,
    timeout: Duration,
}

impl SimStorage {
    /// A client of the storage node named `storage`.
    ///
    /// # Panics
    /// If there is no node called `storage`.
    pub fn new(handle: &Handle<Msg>, storage: &str, timeout: Duration) -> SimStorage {
        let node = handle
            .node(storage)
            .unwrap_or_else(|| panic!("no storage node called {storage:?}"));
        SimStorage {
            handle: handle.clone(),
            storage: node,
            timeout,
        }
    }

    /// How many writes this node has sent, over all its incarnations.
    pub fn writes_sent(&self) -> u64 {
        self.handle.disk().get_u64(WRITES).unwrap_or(0)
    }

    /// Sends one write of `op`, naming `expect_version` if given (a
    /// conditional write, see [`Msg::Write`]), and waits for its answer:
    /// `Ok(true)` applied, `Ok(false)` refused, `Err` unanswered in time.
    /// It journals `wrote` (or `fenced`) before sending and `acked` when
    /// answered; the answer taken is the one to this write's id, never a
    /// late or duplicated answer to another. The other storage clients
    /// ([`crate::process::object_store`], [`crate::process::sql`]) send
    /// through it, so their writes are journaled as this client's are and
    /// share its write ids.
    pub(crate) async fn write(
        &self,
        key: &str,
        value: i64,
        token: Option<u64>,
        op: Op,
        expect_version: Option<u64>,
    ) -> Result<bool, StorageError> {
        let write = format!(
            "{}/{}",
            self.handle.name(),
            self.handle.disk().next_u64(WRITES)
        );
        let probe_op = match op {
            Op::Put => WriteOp::Put,
            Op::Increment => WriteOp::Increment,
            Op::Fence => WriteOp::Fence,
        };
        match (op, token) {
            (Op::Fence, Some(token)) => self.handle.probe(Probe::Fenced {
                write: write.clone(),
                token,
            }),
            (Op::Fence, None) => {}
            _ => self.handle.probe(Probe::Wrote {
                write: write.clone(),
                token,
                value,
                op: probe_op,
            }),
        }
        self.handle.send(
            self.storage,
            Msg::Write {
                write: write.clone(),
                token,
                key: key.into(),
                value,
                op,
                expect_version,
            },
        );
        let answer = self.handle.recv_from(
            self.storage,
            move |m| matches!(m, Msg::WriteReply { write: w, .. } if *w == write),
        );
        // The timeout's timer is cancelled after the client says what it
        // heard, as the bundled client does it.
        let mut wait = self.handle.timeout(self.timeout, answer);
        let answered = (&mut wait).await;
        let result = match answered {
            Ok((_, Msg::WriteReply { write, ok })) => {
                self.handle.probe(Probe::Acked {
                    write,
                    ok,
                    op: probe_op,
                });
                Ok(ok)
            }
            _ => Err(StorageError::Unavailable),
        };
        drop(wait);
        result
    }

    /// Reads `key` and waits for the answer to this read (never a late
    /// answer to an earlier one): its value and version, journaled `read`.
    pub(crate) async fn read(&self, key: &str) -> Result<(i64, u64), StorageError> {
        let req = self.handle.disk().next_u64(READS);
        self.handle.send(
            self.storage,
            Msg::Read {
                req,
                key: key.into(),
            },
        );
        let answer = self.handle.recv_from(
            self.storage,
            move |m| matches!(m, Msg::ReadReply { req: r, .. } if *r == req),
        );
        match self.handle.timeout(self.timeout, answer).await {
            Ok((_, Msg::ReadReply { value, version, .. })) => {
                self.handle.probe(Probe::Read { value, version });
                Ok((value, version))
            }
            _ => Err(StorageError::Unavailable),
        }
    }

    /// Sends a token-only write, so that the storage learns `token` before a
    /// zombie's late write can land (`fence_on_acquire`).
    pub async fn fence(&self, token: u64) -> Result<bool, StorageError> {
        self.write(
            crate::design::client::ClientConfig::KEY,
            0,
            Some(token),
            Op::Fence,
            None,
        )
        .await
    }
}

impl Storage for SimStorage {
    async fn put(&self, key: &str, value: i64, token: Option<u64>) -> Result<(), StorageError> {
        match self.write(key, value, token, Op::Put, None).await? {
            true => Ok(()),
            false => Err(StorageError::Rejected(
                "the storage refused the write".into(),
            )),
        }
    }

    async fn get(&self, key: &str) -> Result<(i64, u64), StorageError> {
        self.read(key).await
    }
}
