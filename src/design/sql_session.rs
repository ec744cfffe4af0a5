//! A SQL connection's session on a storage node, beside its writes and
//! reads: transactions and PostgreSQL's advisory locks, for clients written
//! as async code ([`crate::process::sql`]), carried as [`SqlCall`]
//! messages in [`Msg::Design`].
//!
//! **Transactions** run on the node's own database. SQLite, the `sql`
//! storage's engine, has one writer at a time: while a connection's
//! transaction is open, every other connection's request that touches the
//! data (its own `BEGIN`, a write, a read) waits, in arrival order, until
//! the transaction commits or rolls back. (PostgreSQL locks rows, not the
//! database, so two transactions on different rows run side by side
//! there: the order in which their effects land is the same either way,
//! but the waits are longer here.) A transaction idle for
//! [`IDLE_IN_TRANSACTION`] is rolled back by the server, as PostgreSQL's
//! `idle_in_transaction_session_timeout` does, and its connection's next
//! call is told so (`25P03`): a client paused or crashed inside a
//! transaction does not stop the storage for good. Only a storage whose
//! policy keeps its own data transactionally (`sql`) opens transactions;
//! the others answer `BEGIN` with an error.
//!
//! Statements inside a transaction are the storage's update statement run
//! with the write's parameters, and reads of a row; they are not journaled
//! as writes (the oracle judges the writes of [`Msg::Write`] only), since
//! a rollback would take an accepted write back.
//!
//! **Advisory locks** are PostgreSQL's, modelled in the node (SQLite has
//! none): a lock on a 64-bit key held by a connection's session
//! (`pg_advisory_lock`, re-entrant: each hold needs its unlock) or by its
//! transaction (`pg_advisory_xact_lock`, released at its commit or
//! rollback). A blocking lock waits, in arrival order, until the key is
//! free; a try answers at once. They live in the server's memory: a crash
//! of the storage ends them all, as PostgreSQL's shared memory does. What
//! is not modelled: the end of a session (a client that crashes keeps its
//! session locks; PostgreSQL would end its session when TCP tells it,
//! which the `postgres` lock design models), and deadlock detection.
//!
//! Each connection sends one request at a time; a copy of its latest
//! request is answered again with the same answer and never run twice.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Duration;

use sim::{Context, NodeId, TimerId};

use crate::protocol::Msg;

/// How long a transaction may stay idle before the server rolls it back.
pub const IDLE_IN_TRANSACTION: Duration = Duration::from_secs(10);

/// A connection's calls and the server's answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SqlCall {
    /// `BEGIN`.
    Begin {
        /// The connection, unique in the run.
        conn: u64,
        /// Request id, echoed in the answer.
        req: u64,
    },
    /// The update statement inside the connection's transaction.
    Execute {
        /// The connection.
        conn: u64,
        /// Request id.
        req: u64,
        /// `:key`.
        key: String,
        /// `:value`.
        value: i64,
        /// `:token`.
        token: Option<u64>,
        /// `:version`.
        version: Option<u64>,
    },
    /// A read of `key`'s row inside the transaction.
    Fetch {
        /// The connection.
        conn: u64,
        /// Request id.
        req: u64,
        /// The key.
        key: String,
    },
    /// `COMMIT`.
    Commit {
        /// The connection.
        conn: u64,
        /// Request id.
        req: u64,
    },
    /// `ROLLBACK`.
    Rollback {
        /// The connection.
        conn: u64,
        /// Request id.
        req: u64,
    },
    /// `pg_advisory_lock` (`wait`) or `pg_try_advisory_lock`, or their
    /// `_xact_` forms (`xact`).
    Lock {
        /// The connection.
        conn: u64,
        /// Request id.
        req: u64,
        /// The lock's key.
        key: i64,
        /// Wait for it (`true`) or answer at once.
        wait: bool,
        /// Held by the transaction rather than the session.
        xact: bool,
    },
    /// `pg_advisory_unlock`.
    Unlock {
        /// The connection.
        conn: u64,
        /// Request id.
        req: u64,
        /// The lock's key.
        key: i64,
    },
    /// The answer to request `req`.
    Reply {
        /// The request answered.
        req: u64,
        /// What it gave, or the database's error.
        answer: Result<SqlAnswer, String>,
    },
}

impl crate::protocol::Payload for SqlCall {}

/// What a call answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SqlAnswer {
    /// Done (`BEGIN`, `COMMIT`, `ROLLBACK`, a blocking lock).
    Done,
    /// The rows the statement changed.
    Rows(u64),
    /// A row's value and version.
    Row(i64, u64),
    /// A try-lock's or an unlock's boolean.
    Bool(bool),
}

/// A connection: the client node and its connection number.
pub type Conn = (NodeId, u64);

impl SqlCall {
    /// The connection and request of a call (`None` for an answer).
    pub fn request(&self) -> Option<(u64, u64)> {
        match *self {
            SqlCall::Begin { conn, req }
            | SqlCall::Execute { conn, req, .. }
            | SqlCall::Fetch { conn, req, .. }
            | SqlCall::Commit { conn, req }
            | SqlCall::Rollback { conn, req }
            | SqlCall::Lock { conn, req, .. }
            | SqlCall::Unlock { conn, req, .. } => Some((conn, req)),
            SqlCall::Reply { .. } => None,
        }
    }
}

#[derive(Debug, Default)]
struct Hold {
    conn: Option<Conn>,
    session: u32,
    xact: u32,
}

/// The open transaction.
#[derive(Debug)]
pub(crate) struct OpenTxn<D> {
    pub(crate) conn: Conn,
    /// The data as it was at `BEGIN`, put back by a rollback.
    pub(crate) before: D,
    pub(crate) timer: TimerId,
}

/// The sessions' state on a storage node, beside its data `D`.
#[derive(Debug)]
pub(crate) struct Sessions<D> {
    pub(crate) txn: Option<OpenTxn<D>>,
    /// Requests that wait for the open transaction's end.
    pub(crate) waiting: VecDeque<(NodeId, Msg)>,
    locks: BTreeMap<i64, Hold>,
    lock_waiters: VecDeque<(Conn, u64, i64, bool)>,
    /// Each connection's latest request and its answer (once given).
    last: BTreeMap<Conn, (u64, Option<Result<SqlAnswer, String>>)>,
    /// Connections whose transaction the server rolled back.
    ended: BTreeSet<Conn>,
}

impl<D> Default for Sessions<D> {
    fn default() -> Self {
        Sessions {
            txn: None,
            waiting: VecDeque::new(),
            locks: BTreeMap::new(),
            lock_waiters: VecDeque::new(),
            last: BTreeMap::new(),
            ended: BTreeSet::new(),
        }
    }
}

/// What the node does with a call, after the sessions looked at it.
pub(crate) enum Step {
    /// Nothing more (answered, ignored or made to wait).
    Done,
    /// Run it on the data: it is the transaction owner's, or may start one.
    Run,
}

impl<D> Sessions<D> {
    /// Answers request `req` of `conn`.
    pub(crate) fn answer(
        &mut self,
        ctx: &mut Context<'_, Msg>,
        conn: Conn,
        req: u64,
        answer: Result<SqlAnswer, String>,
    ) {
        self.last.insert(conn, (req, Some(answer.clone())));
        ctx.send(conn.0, Msg::design(SqlCall::Reply { req, answer }));
    }

    /// Whether `from`'s message must wait for the open transaction.
    pub(crate) fn blocks(&self, from: NodeId, msg: &Msg) -> bool {
        let Some(txn) = &self.txn else { return false };
        match msg {
            Msg::Read { .. } | Msg::Write { .. } => true,
            Msg::Design(m) => match m.downcast_ref::<SqlCall>() {
                Some(
                    call @ (SqlCall::Begin { .. }
                    | SqlCall::Execute { .. }
                    | SqlCall::Fetch { .. }
                    | SqlCall::Commit { .. }),
                ) => call
                    .request()
                    .is_some_and(|(conn, _)| (from, conn) != txn.conn),
                _ => false,
            },
            _ => false,
        }
    }

    /// Looks at `call` first: duplicates, locks, unlocks and the calls of a
    /// connection whose transaction the server ended are dealt with here.
    pub(crate) fn screen(
        &mut self,
        ctx: &mut Context<'_, Msg>,
        from: NodeId,
        call: &SqlCall,
    ) -> Step {
        let Some((c, req)) = call.request() else {
            return Step::Done;
        };
        let conn = (from, c);
        match self.last.get(&conn) {
            Some(&(last, ref answer)) if req <= last => {
                if let (true, Some(answer)) = (req == last, answer.clone()) {
                    ctx.send(from, Msg::design(SqlCall::Reply { req, answer }));
                }
                return Step::Done;
            }
            _ => {}
        }
        self.last.insert(conn, (req, None));
        let in_txn = self.txn.as_ref().is_some_and(|t| t.conn == conn);
        match *call {
            SqlCall::Execute { .. } | SqlCall::Fetch { .. } | SqlCall::Commit { .. } if !in_txn => {
                let why = if self.ended.remove(&conn) {
                    "25P03: terminating connection due to idle-in-transaction timeout"
                } else {
                    "25P01: there is no transaction in progress"
                };
                self.answer(ctx, conn, req, Err(why.to_owned()));
                Step::Done
            }
            SqlCall::Begin { .. } if in_txn => {
                let why = "25001: there is already a transaction in progress";
                self.answer(ctx, conn, req, Err(why.to_owned()));
                Step::Done
            }
            SqlCall::Lock {
                key, wait, xact, ..
            } => {
                if xact && !in_txn {
                    let why = "25P01: pg_advisory_xact_lock outside a transaction";
                    self.answer(ctx, conn, req, Err(why.to_owned()));
                } else if self.take(conn, key, xact) {
                    let answer = if wait {
                        SqlAnswer::Done
                    } else {
                        SqlAnswer::Bool(true)
                    };
                    self.answer(ctx, conn, req, Ok(answer));
                } else if wait {
                    self.lock_waiters.push_back((conn, req, key, xact));
                } else {
                    self.answer(ctx, conn, req, Ok(SqlAnswer::Bool(false)));
                }
                Step::Done
            }
            SqlCall::Unlock { key, .. } => {
                let held = self.locks.get_mut(&key).filter(|h| h.conn == Some(conn));
                let unlocked = match held {
                    Some(hold) if hold.session > 0 => {
                        hold.session -= 1;
                        true
                    }
                    _ => false,
                };
                self.tidy(ctx, key);
                self.answer(ctx, conn, req, Ok(SqlAnswer::Bool(unlocked)));
                Step::Done
            }
            _ => Step::Run,
        }
    }

    /// Takes a hold of `key` for `conn` if it is free or `conn`'s.
    fn take(&mut self, conn: Conn, key: i64, xact: bool) -> bool {
        let hold = self.locks.entry(key).or_default();
        if hold.conn.is_some_and(|c| c != conn) {
            return false;
        }
        hold.conn = Some(conn);
        if xact {
            hold.xact += 1;
        } else {
            hold.session += 1;
        }
        true
    }

    /// Frees `key` if nothing holds it any more, and grants it to the
    /// first connection waiting for it.
    fn tidy(&mut self, ctx: &mut Context<'_, Msg>, key: i64) {
        if self
            .locks
            .get(&key)
            .is_some_and(|h| h.session + h.xact == 0)
        {
            self.locks.remove(&key);
        }
        if self.locks.contains_key(&key) {
            return;
        }
        let Some(i) = self.lock_waiters.iter().position(|w| w.2 == key) else {
            return;
        };
        let (conn, req, key, xact) = self.lock_waiters.remove(i).expect("just found");
        let in_txn = self.txn.as_ref().is_some_and(|t| t.conn == conn);
        if xact && !in_txn {
            // Its transaction ended while it waited.
            let why = "25P03: the transaction ended while the lock was awaited";
            self.answer(ctx, conn, req, Err(why.to_owned()));
            self.tidy(ctx, key);
            return;
        }
        self.take(conn, key, xact);
        self.answer(ctx, conn, req, Ok(SqlAnswer::Done));
    }

    /// The transaction of `conn` ended: its transaction locks are released.
    pub(crate) fn end_transaction(&mut self, ctx: &mut Context<'_, Msg>, conn: Conn) {
        let keys: Vec<i64> = self
            .locks
            .iter_mut()
            .filter(|(_, h)| h.conn == Some(conn))
            .map(|(&key, h)| {
                h.xact = 0;
                key
            })
            .collect();
        // A transaction lock still awaited is refused.
        let stale: Vec<usize> = (0..self.lock_waiters.len())
            .rev()
            .filter(|&i| self.lock_waiters[i].0 == conn && self.lock_waiters[i].3)
            .collect();
        for i in stale {
            let (conn, req, _, _) = self.lock_waiters.remove(i).expect("an index");
            let why = "25P03: the transaction ended while the lock was awaited";
            self.answer(ctx, conn, req, Err(why.to_owned()));
        }
        for key in keys {
            self.tidy(ctx, key);
        }
    }

    /// The server ended `conn`'s transaction (idle too long).
    pub(crate) fn ended_by_server(&mut self, conn: Conn) {
        self.ended.insert(conn);
    }

    /// The node crashed: sessions, locks and waits are gone.
    pub(crate) fn crash(&mut self) {
        self.waiting.clear();
        self.locks.clear();
        self.lock_waiters.clear();
        self.last.clear();
        self.ended.clear();
    }
}
