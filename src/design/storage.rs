//! Storage nodes: a key-value store that asks a [`StoragePolicy`] whether to
//! apply each write, and journals the answer (`accepted` / `rejected`) the
//! same way for every policy, so the oracle judges them alike.
//!
//! Policies here: [`Unchecked`], [`Fenced`] (one highest token for the whole
//! store, or one per key with `scope = "key"`) and [`Cas`] (a conditional
//! write on the key's version, like S3 `If-Match`). The `cas` storage with
//! `api = "s3"`, `"gcs"` or `"azure"` is an object store speaking that API,
//! in [`crate::design::object_store`]. The `sql` storage, a real SQLite
//! running the user's statement, is in [`crate::design::sql`].
//!
//! A write with [`Op::Fence`] (a token-only write, `fence_on_acquire`) goes
//! through the policy like any other, so a fenced storage records its token,
//! but it changes no data, and its `accepted` event carries no `value`.

use std::collections::BTreeMap;

use sim::{Actor, Context, NodeId, TimerId};

use crate::design::catalog::DesignInfo;
use crate::design::config::{key, DesignConfig as _};
use crate::design::object_store::{ObjectApi, ObjectStore};
use crate::design::sql_session::{
    OpenTxn, Sessions, SqlAnswer, SqlCall, Step, IDLE_IN_TRANSACTION,
};
use crate::design::StorageDesign;
use crate::events;
use crate::protocol::{Msg, Op};

/// The `unchecked` design as the registry knows it.
#[derive(Clone, Copy, Debug, Default)]
pub struct UncheckedDesign;

impl StorageDesign for UncheckedDesign {
    type Config = ();

    fn info(&self) -> DesignInfo {
        UNCHECKED
    }

    fn server(&self, _: &()) -> Box<dyn Actor<Msg>> {
        Box::new(StorageNode::new(Unchecked))
    }
}

/// The `fenced` design as the registry knows it.
#[derive(Clone, Copy, Debug, Default)]
pub struct FencedDesign;

impl StorageDesign for FencedDesign {
    type Config = FencedConfig;

    fn info(&self) -> DesignInfo {
        FENCED
    }

    fn server(&self, config: &FencedConfig) -> Box<dyn Actor<Msg>> {
        let fenced = match config.scope {
            FenceScope::Key => Fenced::per_key(config.durable),
            FenceScope::Global => Fenced::new(config.durable),
        };
        Box::new(StorageNode::new(fenced))
    }
}

/// The `cas` design as the registry knows it.
#[derive(Clone, Copy, Debug, Default)]
pub struct CasDesign;

impl StorageDesign for CasDesign {
    type Config = CasConfig;

    fn info(&self) -> DesignInfo {
        CAS
    }

    fn server(&self, config: &CasConfig) -> Box<dyn Actor<Msg>> {
        match ObjectApi::from_name(config.api.as_str()) {
            Some(api) => Box::new(StorageNode::new(ObjectStore::new(api))),
            None => Box::new(StorageNode::new(Cas)),
        }
    }
}

/// Storage: no check at all, the baseline that shows why fencing matters.
pub const UNCHECKED: DesignInfo = DesignInfo::storage("unchecked", "accepts every write", &[]);

/// Storage: rejects writes whose token is below the highest seen.
pub const FENCED: DesignInfo = DesignInfo::storage(
    "fenced",
    "rejects a write whose token is lower than the highest it has seen",
    FencedConfig::KEYS,
);

crate::design_choice! {
    /// What one highest token covers in a `fenced` storage.
    pub enum FenceScope {
        /// The whole store.
        Global = "global",
        /// Each key apart.
        Key = "key",
    }
}

crate::design_config! {
    /// Settings of the `fenced` storage.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct FencedConfig {
        durable: bool = key::durable(), "does the highest token survive a crash";
        scope: FenceScope = FenceScope::key(FenceScope::Global),
            "one highest token for the whole store, or one per key";
    }
}

/// Storage: a conditional write on the key's version (S3 If-Match).
pub const CAS: DesignInfo = DesignInfo::storage(
    "cas",
    "applies a write only if the key is still at the version the writer read \
     (S3 If-Match, GCS ifGenerationMatch); blind writes pass",
    CasConfig::KEYS,
);

crate::design_choice! {
    /// Whose conditional writes a `cas` storage speaks.
    pub enum CasApi {
        /// A bare version number.
        Version = "version",
        /// Amazon S3's ETags.
        S3 = "s3",
        /// Google Cloud Storage's generations.
        Gcs = "gcs",
        /// Azure Blob Storage's ETags.
        Azure = "azure",
    }
}

crate::design_config! {
    /// Settings of the `cas` storage.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct CasConfig {
        api: CasApi = CasApi::key(CasApi::Version),
            "version: a bare version number; s3, gcs, azure: that object store's \
             preconditions and answers";
    }
}

/// A write as the storage sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteRequest<'a> {
    /// Write id.
    pub write: &'a str,
    /// The writer's name.
    pub client: &'a str,
    /// The fencing token the write carries, if any.
    pub token: Option<u64>,
    /// The key written.
    pub key: &'a str,
    /// The new value.
    pub value: i64,
    /// Blind write or increment.
    pub op: Op,
    /// The version the writer read, if it sent one (see [`Msg::Write`]).
    pub expect_version: Option<u64>,
    /// The key's version at the storage now: how many writes it has taken.
    pub stored_version: u64,
}

/// A policy's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Apply the write.
    Accept,
    /// Apply the write because the precondition it named held on the
    /// storage's current state, checked atomically with the write (a
    /// compare-and-set on the version it read, a token compared in the row).
    /// Journaled as `accepted` with a `precondition` field, and the oracle
    /// judges such a write by its precondition: it cannot be stale. A write
    /// that named no precondition, or one the storage did not check against
    /// its current state, is a plain [`Decision::Accept`].
    Matched {
        /// What held, in a few words (`version 1`).
        precondition: String,
    },
    /// Refuse it.
    Reject {
        /// Why, in a few words (`token 33 < 34`).
        reason: String,
        /// The highest token seen, when the policy tracks one.
        max_token: Option<u64>,
    },
}

/// Decides which writes a storage applies: the part a storage design varies.
///
/// Contract: [`StorageNode`] hosts a policy and does the rest (reads, data,
/// replies, the `accepted`/`rejected` events), so a policy emits no events
/// and sends nothing. `decide` sees every write in arrival order, including
/// token-only [`Op::Fence`] writes, which should update whatever the policy
/// tracks (a highest token) exactly as a data write would. What the policy
/// keeps across [`StoragePolicy::on_crash`] is what the modelled storage
/// keeps on disk; the data itself is always durable.
pub trait StoragePolicy: 'static {
    /// Whether to apply `write`. Called once per arriving write, in order.
    fn decide(&mut self, write: &WriteRequest<'_>) -> Decision;
    /// The storage crashed: forget what is not durable.
    fn on_crash(&mut self) {}
    /// The value of `key`, for a policy that keeps the data itself (`sql`);
    /// `None` lets the node answer from its own map.
    fn read(&mut self, _key: &str) -> Option<i64> {
        None
    }
    /// Whether the policy keeps its state transactionally: `begin`,
    /// `commit` and `rollback` below do what they say (see
    /// [`crate::design::sql_session`]). Only then does the node open
    /// transactions.
    fn transactions(&self) -> bool {
        false
    }
    /// A transaction begins: what follows may be rolled back.
    fn begin(&mut self) {}
    /// The transaction commits.
    fn commit(&mut self) {}
    /// The transaction rolls back: the policy's state as at `begin`.
    fn rollback(&mut self) {}
}

/// `unchecked`: accepts every write, like a plain database or file share.
#[derive(Clone, Copy, Debug, Default)]
pub struct Unchecked;

impl StoragePolicy for Unchecked {
    fn decide(&mut self, _write: &WriteRequest<'_>) -> Decision {
        Decision::Accept
    }
}

/// `fenced`: rejects a write whose token is lower than the highest token it
/// has accepted (DDIA figure 9-6). Equal tokens pass, so a holder can write
/// more than once; writes without a token have nothing to check and pass.
/// With `durable = false` the highest token lives in memory and a crash
/// forgets it. With `scope = "key"` it keeps one highest token per key (a
/// token seen on one key does not fence writes to another), as a store that
/// keeps the token in each row does.
#[derive(Clone, Debug)]
pub struct Fenced {
    durable: bool,
    per_key: bool,
    /// Highest token accepted, per key (the key `""` when global).
    max_token: BTreeMap<String, u64>,
}

impl Fenced {
    /// A fenced policy with one highest token for the whole store;
    /// `durable`: does it survive a crash.
    pub fn new(durable: bool) -> Self {
        Fenced {
            durable,
            per_key: false,
            max_token: BTreeMap::new(),
        }
    }

    /// A fenced policy with one highest token per key.
    pub fn per_key(durable: bool) -> Self {
        Fenced {
            per_key: true,
            ..Fenced::new(durable)
        }
    }
}

impl StoragePolicy for Fenced {
    fn decide(&mut self, write: &WriteRequest<'_>) -> Decision {
        let scope = if self.per_key { write.key } else { "" };
        let max = self.max_token.get(scope).copied();
        match (write.token, max) {
            (Some(t), Some(max)) if t < max => Decision::Reject {
                reason: format!("token {t} < {max}"),
                max_token: Some(max),
            },
            (Some(t), _) => {
                self.max_token
                    .insert(scope.to_owned(), max.map_or(t, |m| m.max(t)));
                Decision::Accept
            }
            (None, _) => Decision::Accept,
        }
    }

    fn on_crash(&mut self) {
        if !self.durable {
            self.max_token.clear();
        }
    }
}

/// `cas`: a conditional write on the key's version, like S3's `If-Match`
/// on an ETag or GCS's `ifGenerationMatch`: a write that names the version
/// it read is applied only if nobody wrote the key since. It needs no token:
/// a zombie's read-modify-write fails because the next holder's write moved
/// the version on. A blind write (no version) has nothing to compare and is
/// applied, as S3 applies a PUT without `If-Match`. The versions live with
/// the data, which is durable, so a crash forgets nothing. A conditional
/// write that is applied is [`Decision::Matched`]: it was made against the
/// current version, so nothing newer can be lost under it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cas;

impl StoragePolicy for Cas {
    fn decide(&mut self, write: &WriteRequest<'_>) -> Decision {
        match write.expect_version {
            Some(v) if v != write.stored_version => Decision::Reject {
                reason: format!("version {v} != {}", write.stored_version),
                max_token: None,
            },
            Some(v) => Decision::Matched {
                precondition: format!("version {v}"),
            },
            None => Decision::Accept,
        }
    }
}

/// A storage node: durable key-value data guarded by a policy.
pub struct StorageNode<P> {
    policy: P,
    /// Key → (value, version). The data itself is durable.
    data: BTreeMap<String, (i64, u64)>,
    /// SQL sessions: transactions and advisory locks.
    sessions: Sessions<BTreeMap<String, (i64, u64)>>,
}

impl<P: StoragePolicy> StorageNode<P> {
    /// A storage node applying `policy`.
    pub fn new(policy: P) -> Self {
        StorageNode {
            policy,
            data: BTreeMap::new(),
            sessions: Sessions::default(),
        }
    }
}

impl<P: StoragePolicy> StorageNode<P> {
    /// A SQL session's call (see [`crate::design::sql_session`]).
    fn on_sql(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, call: &SqlCall) {
        if let Step::Done = self.sessions.screen(ctx, from, call) {
            return;
        }
        let Some((c, req)) = call.request() else {
            return;
        };
        let conn = (from, c);
        let answer = match call {
            SqlCall::Begin { .. } if !self.policy.transactions() => {
                Err("0A000: this storage runs no transactions (the `sql` design does)".to_owned())
            }
            SqlCall::Begin { .. } => {
                self.policy.begin();
                let timer = ctx.set_timer(IDLE_IN_TRANSACTION, c);
                self.sessions.txn = Some(OpenTxn {
                    conn,
                    before: self.data.clone(),
                    timer,
                });
                Ok(SqlAnswer::Done)
            }
            SqlCall::Execute {
                key,
                value,
                token,
                version,
                ..
            } => {
                self.touch(ctx, c);
                let request = WriteRequest {
                    write: "transaction",
                    client: ctx.name_of(from),
                    token: *token,
                    key,
                    value: *value,
                    op: Op::Put,
                    expect_version: *version,
                    stored_version: self.data.get(key).map_or(0, |e| e.1),
                };
                match self.policy.decide(&request) {
                    Decision::Accept | Decision::Matched { .. } => {
                        let entry = self.data.entry(key.clone()).or_insert((0, 0));
                        *entry = (*value, entry.1 + 1);
                        Ok(SqlAnswer::Rows(1))
                    }
                    Decision::Reject { reason, .. } => match reason.strip_prefix("sql error: ") {
                        Some(error) => Err(error.to_owned()),
                        None => Ok(SqlAnswer::Rows(0)),
                    },
                }
            }
            SqlCall::Fetch { key, .. } => {
                self.touch(ctx, c);
                let (value, version) = self.data.get(key).copied().unwrap_or((0, 0));
                let value = self.policy.read(key).unwrap_or(value);
                Ok(SqlAnswer::Row(value, version))
            }
            SqlCall::Commit { .. } | SqlCall::Rollback { .. } => {
                if let Some(txn) = self.sessions.txn.take_if(|t| t.conn == conn) {
                    ctx.cancel_timer(txn.timer);
                    if matches!(call, SqlCall::Commit { .. }) {
                        self.policy.commit();
                    } else {
                        self.policy.rollback();
                        self.data = txn.before;
                    }
                    self.sessions.answer(ctx, conn, req, Ok(SqlAnswer::Done));
                    self.sessions.end_transaction(ctx, conn);
                    self.drain(ctx);
                    return;
                }
                // A rollback with no transaction: PostgreSQL warns, and
                // does nothing.
                Ok(SqlAnswer::Done)
            }
            SqlCall::Lock { .. } | SqlCall::Unlock { .. } | SqlCall::Reply { .. } => return,
        };
        self.sessions.answer(ctx, conn, req, answer);
    }

    /// The transaction's connection spoke: its idle timer starts again.
    fn touch(&mut self, ctx: &mut Context<'_, Msg>, c: u64) {
        if let Some(txn) = self.sessions.txn.as_mut() {
            ctx.cancel_timer(txn.timer);
            txn.timer = ctx.set_timer(IDLE_IN_TRANSACTION, c);
        }
    }

    /// Runs the requests that waited for a transaction, in arrival order,
    /// until one opens another.
    fn drain(&mut self, ctx: &mut Context<'_, Msg>) {
        let waiting = std::mem::take(&mut self.sessions.waiting);
        for (from, msg) in waiting {
            self.on_message(ctx, from, msg);
        }
    }
}

impl<P: StoragePolicy> Actor<Msg> for StorageNode<P> {
    fn on_message(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, msg: Msg) {
        if self.sessions.blocks(from, &msg) {
            self.sessions.waiting.push_back((from, msg));
            return;
        }
        match msg {
            Msg::Design(ref call) => {
                if let Some(call) = call.downcast_ref::<SqlCall>() {
                    self.on_sql(ctx, from, call);
                }
            }
            Msg::Read { req, key } => {
                let (value, version) = self.data.get(&key).copied().unwrap_or((0, 0));
                let value = self.policy.read(&key).unwrap_or(value);
                ctx.send(
                    from,
                    Msg::ReadReply {
                        req,
                        value,
                        version,
                    },
                );
            }
            Msg::Write {
                write,
                token,
                key,
                value,
                op,
                expect_version,
            } => {
                let client = ctx.name_of(from).to_owned();
                let request = WriteRequest {
                    write: &write,
                    client: &client,
                    token,
                    key: &key,
                    value,
                    op,
                    expect_version,
                    stored_version: self.data.get(&key).map_or(0, |e| e.1),
                };
                let decision = self.policy.decide(&request);
                let ok = match decision {
                    Decision::Accept | Decision::Matched { .. } => {
                        let precondition = match &decision {
                            Decision::Matched { precondition } => Some(precondition.as_str()),
                            _ => None,
                        };
                        // A fence carries a token and no value.
                        let value = (op != Op::Fence).then_some(value);
                        if let Some(value) = value {
                            let entry = self.data.entry(key.clone()).or_insert((0, 0));
                            *entry = (value, entry.1 + 1);
                        }
                        sim::emit!(
                            events::ACCEPTED,
                            write = write.as_str(),
                            client = client.as_str(),
                            token = token,
                            value = value,
                            key = key.as_str(),
                            precondition = precondition
                        );
                        true
                    }
                    Decision::Reject { reason, max_token } => {
                        sim::emit!(
                            events::REJECTED,
                            write = write.as_str(),
                            client = client.as_str(),
                            token = token,
                            reason = reason.as_str(),
                            max_token = max_token,
                            key = key.as_str()
                        );
                        false
                    }
                };
                ctx.send(from, Msg::WriteReply { write, ok });
            }
            _ => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Context<'_, Msg>, id: TimerId, _tag: u64) {
        // The open transaction was idle too long: rolled back.
        if let Some(txn) = self.sessions.txn.take_if(|t| t.timer == id) {
            self.policy.rollback();
            self.data = txn.before;
            self.sessions.ended_by_server(txn.conn);
            self.sessions.end_transaction(ctx, txn.conn);
            self.drain(ctx);
        }
    }

    fn on_crash(&mut self) {
        if let Some(txn) = self.sessions.txn.take() {
            self.policy.rollback();
            self.data = txn.before;
        }
        self.sessions.crash();
        self.policy.on_crash();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim::testing::Harness;

    fn write(write: &str, token: Option<u64>) -> Msg {
        write_to("x", write, token, None)
    }

    fn write_to(key: &str, write: &str, token: Option<u64>, version: Option<u64>) -> Msg {
        Msg::Write {
            write: write.into(),
            token,
            key: key.into(),
            value: 1,
            op: Op::Increment,
            expect_version: version,
        }
    }

    #[test]
    fn fenced_per_key_keeps_a_highest_token_for_each_key() {
        let mut h = Harness::new(&["storage", "client1"], 0);
        let mut global = StorageNode::new(Fenced::new(true));
        let mut per_key = StorageNode::new(Fenced::per_key(true));
        for s in [&mut global as &mut dyn Actor<Msg>, &mut per_key] {
            h.message(s, 1, write_to("a", "w1", Some(34), None));
        }
        let step = h.message(&mut global, 1, write_to("b", "w2", Some(33), None));
        assert_eq!(step.events[0].0, "rejected");
        let step = h.message(&mut per_key, 1, write_to("b", "w2", Some(33), None));
        assert_eq!(step.events[0].0, "accepted");
        let step = h.message(&mut per_key, 1, write_to("a", "w3", Some(33), None));
        assert_eq!(step.events[0].0, "rejected");
    }

    #[test]
    fn cas_applies_a_write_only_at_the_version_it_read() {
        let mut h = Harness::new(&["storage", "client1", "client2"], 0);
        let mut s = StorageNode::new(Cas);
        // Both read version 0; the first write moves it to 1.
        let step = h.message(&mut s, 2, write_to("x", "client2/1", None, Some(0)));
        assert_eq!(step.events[0].0, "accepted");
        let step = h.message(&mut s, 1, write_to("x", "client1/1", None, Some(0)));
        assert_eq!(step.events[0].0, "rejected");
        assert!(matches!(
            step.sends[0],
            (1, Msg::WriteReply { ok: false, .. })
        ));
        let step = h.message(&mut s, 1, write_to("x", "client1/2", None, Some(1)));
        assert_eq!(step.events[0].0, "accepted");
        // A blind write has nothing to compare.
        let step = h.message(&mut s, 1, write("client1/3", None));
        assert_eq!(step.events[0].0, "accepted");
    }

    #[test]
    fn cas_journals_the_precondition_an_applied_write_met() {
        let precondition = |step: &sim::testing::Step<Msg>| {
            step.events[0]
                .1
                .iter()
                .find(|(k, _)| k == "precondition")
                .map(|(_, v)| v.to_string())
        };
        let mut h = Harness::new(&["storage", "client1"], 0);
        let mut s = StorageNode::new(Cas);
        let step = h.message(&mut s, 1, write_to("x", "client1/1", None, Some(0)));
        assert_eq!(step.events[0].0, "accepted");
        assert_eq!(precondition(&step).as_deref(), Some("version 0"));
        // A blind write names none, and a fenced storage checks a token
        // against its highest, not the key's current state: no precondition.
        let step = h.message(&mut s, 1, write("client1/2", None));
        assert_eq!(precondition(&step), None);
        let mut f = StorageNode::new(Fenced::new(true));
        let step = h.message(&mut f, 1, write_to("x", "client1/3", Some(3), Some(0)));
        assert_eq!(step.events[0].0, "accepted");
        assert_eq!(precondition(&step), None);
    }

    #[test]
    fn cas_speaks_the_api_its_key_names() {
        let mut h = Harness::new(&["storage", "client1"], 0);
        for (api, refusal) in [
            ("version", "version 0 != 1"),
            ("s3", "412 PreconditionFailed: If-None-Match: *"),
            ("gcs", "412 conditionNotMet: ifGenerationMatch: 0"),
            ("azure", "409 BlobAlreadyExists: If-None-Match: *"),
        ] {
            let params = CAS
                .defaults()
                .with("api", crate::design::ParamValue::Str(api.into()));
            let mut s = CasDesign.server(&CasConfig::from_params(&params));
            // Two writers that both found no object.
            h.message(s.as_mut(), 1, write_to("x", "a", None, Some(0)));
            let step = h.message(s.as_mut(), 1, write_to("x", "b", None, Some(0)));
            let (kind, fields) = &step.events[0];
            assert_eq!(kind, "rejected", "{api}");
            let reason = fields.iter().find(|(k, _)| k == "reason").unwrap();
            assert!(
                reason.1.to_string().starts_with(refusal),
                "{api}: {reason:?}"
            );
        }
    }

    #[test]
    fn fenced_rejects_lower_tokens_and_accepts_equal_ones() {
        let mut h = Harness::new(&["storage", "client1", "client2"], 0);
        let mut s = StorageNode::new(Fenced::new(true));
        let step = h.message(&mut s, 2, write("client2/1", Some(34)));
        assert_eq!(step.events[0].0, "accepted");
        let step = h.message(&mut s, 2, write("client2/2", Some(34)));
        assert_eq!(step.events[0].0, "accepted");
        let step = h.message(&mut s, 1, write("client1/1", Some(33)));
        assert_eq!(step.events[0].0, "rejected");
        assert_eq!(
            step.sends,
            vec![(
                1,
                Msg::WriteReply {
                    write: "client1/1".into(),
                    ok: false
                }
            )]
        );
    }

    #[test]
    fn a_volatile_fence_forgets_its_highest_token_on_crash() {
        let mut h = Harness::new(&["storage", "client1"], 0);
        let mut s = StorageNode::new(Fenced::new(false));
        h.message(&mut s, 1, write("a", Some(34)));
        s.on_crash();
        let step = h.message(&mut s, 1, write("b", Some(33)));
        assert_eq!(step.events[0].0, "accepted");
    }

    #[test]
    fn a_fence_raises_the_highest_token_and_leaves_the_data_alone() {
        let mut h = Harness::new(&["storage", "client1", "client2"], 0);
        let mut s = StorageNode::new(Fenced::new(true));
        h.message(&mut s, 1, write("client1/1", Some(33)));
        let fence = Msg::Write {
            write: "client2/1".into(),
            token: Some(34),
            key: "x".into(),
            value: 0,
            op: Op::Fence,
            expect_version: None,
        };
        let step = h.message(&mut s, 2, fence);
        let (kind, fields) = &step.events[0];
        assert_eq!(kind, "accepted");
        assert!(fields.iter().all(|(k, _)| k != "value"), "{fields:?}");
        let step = h.message(&mut s, 1, write("client1/2", Some(33)));
        assert_eq!(step.events[0].0, "rejected");
        let read = Msg::Read {
            req: 1,
            key: "x".into(),
        };
        let step = h.message(&mut s, 1, read);
        let reply = Msg::ReadReply {
            req: 1,
            value: 1,
            version: 1,
        };
        assert_eq!(step.sends, vec![(1, reply)]);
    }

    #[test]
    fn unchecked_accepts_anything_and_reads_see_writes() {
        let mut h = Harness::new(&["storage", "client1"], 0);
        let mut s = StorageNode::new(Unchecked);
        h.message(&mut s, 1, write("a", Some(34)));
        h.message(&mut s, 1, write("b", Some(1)));
        let step = h.message(
            &mut s,
            1,
            Msg::Read {
                req: 7,
                key: "x".into(),
            },
        );
        assert_eq!(
            step.sends,
            vec![(
                1,
                Msg::ReadReply {
                    req: 7,
                    value: 1,
                    version: 2
                }
            )]
        );
    }
}
