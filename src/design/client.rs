//! The bundled client: acquire → work → write → release, `rounds` times.
//!
//! With `workload = "write"` the write is blind (a value, no read); with
//! `"increment"` the client reads the key and writes the value plus one, so a
//! zombie's write loses another client's increment; the write is the step
//! after the read (the "modify"), so a pause can fall between them. A denied
//! acquire is
//! retried after `retry`; a request unanswered after `timeout` is given up
//! (an acquire is sent again; an unanswered read or write ends the round).
//! An acquire the lock service has queued
//! ([`LockClient::is_queued`](crate::design::lock_client::LockClient::is_queued):
//! a ZooKeeper znode or an etcd key behind the holder's) is not given up: the
//! client waits for the service to wake it with the grant, and only asks
//! about the same request again after `timeout`, then twice that, four
//! times that, … (a grant lost in the network is answered again).
//!
//! By default the client trusts its grant, like the client of DDIA's figure
//! 9-6. Three variants, each off by default:
//! - `check_lease`: just before writing, it checks on its own monotonic clock
//!   that its lease (acquired at + the grant's ttl, or renewed at + ttl) has
//!   time left: `checked`, then the write one step later; or `lapsed`, and
//!   the round ends without a write. The classic check-then-act: a pause
//!   between the check and the write still lets a zombie write through.
//! - `renew`: keep-alive. Every half ttl while it holds the lock it asks the
//!   protocol to renew
//!   ([`LockClient::renew`](crate::design::lock_client::LockClient::renew));
//!   an extension is journaled as `renewed`, a refusal as `lost` (the round
//!   ends without a write).
//! - `fence_on_acquire`: right after acquiring, a token-only write
//!   ([`Op::Fence`], journaled `fenced`) so the storage learns the new token
//!   before a zombie's delayed write can land; the work starts once the
//!   storage has accepted it (a refusal ends the round). Grants without a
//!   token have nothing to fence with and skip it.
//!
//! An increment's write names the version it read (`precondition =
//! "read"`, the default: S3's `If-Match`, GCS's `ifGenerationMatch`), which
//! a `cas` storage checks and others ignore; with `precondition = "none"` it
//! is a plain write that carries only its grant's token (an object store
//! keeps it as metadata and compares nothing). A blind write reads nothing
//! and names no version either way.

use std::time::Duration;

use sim::{Actor, Context, NodeId, TimerId};

use crate::design::catalog::{KeySpec, ANY_DURATION, INTERVAL};
use crate::design::config::{key, DesignConfig as _};
use crate::design::lock_client::{AnyLockClient, Grant, LockEvent, SingleServer};
use crate::design::node_named;
use crate::design::params::Params;
use crate::events;
use crate::protocol::{Msg, Op};

/// Settings of one client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientConfig {
    /// When it first tries to acquire, on its own clock.
    pub start: Duration,
    /// Acquire → write → release cycles.
    pub rounds: u64,
    /// Time inside the critical section before the write.
    pub work: Duration,
    /// Blind writes or increments.
    pub op: Op,
    /// Wait after a denial before asking again.
    pub retry: Duration,
    /// How long to wait for any answer.
    pub timeout: Duration,
    /// The key written.
    pub key: String,
    /// The storage node's name.
    pub storage: String,
    /// Check the lease on its own clock before writing.
    pub check_lease: bool,
    /// Renew the lease every half ttl while holding it.
    pub renew: bool,
    /// Send a token-only write right after acquiring.
    pub fence_on_acquire: bool,
    /// Make an increment's write conditional on the version it read
    /// (`precondition = "read"`, the default); `false` makes it a plain
    /// write that carries only its token (`"none"`).
    pub conditional: bool,
}

impl ClientConfig {
    /// The key every client writes.
    pub const KEY: &'static str = "x";
    /// The storage node's name in a scenario's world.
    pub const STORAGE: &'static str = "storage";

    /// The settings a `[[clients]]` table's [`CLIENT_KEYS`] describe; it
    /// writes key `x` on node `storage`.
    pub fn from_params(p: &Params) -> Self {
        ClientConfig::from_keys(&ClientKeys::from_params(p))
    }

    /// The settings of a client whose table set `keys`.
    pub fn from_keys(keys: &ClientKeys) -> Self {
        ClientConfig {
            start: keys.start,
            rounds: keys.rounds,
            work: keys.work,
            op: match keys.workload {
                Workload::Increment => Op::Increment,
                Workload::Write => Op::Put,
            },
            retry: keys.retry,
            timeout: keys.timeout,
            key: ClientConfig::KEY.into(),
            storage: ClientConfig::STORAGE.into(),
            check_lease: keys.check_lease,
            renew: keys.renew,
            fence_on_acquire: keys.fence_on_acquire,
            conditional: keys.precondition == Precondition::Read,
        }
    }
}

impl Default for ClientConfig {
    /// The declared defaults of [`CLIENT_KEYS`].
    fn default() -> Self {
        ClientConfig::from_keys(&ClientKeys::default())
    }
}

crate::design_choice! {
    /// What a client's write does.
    pub enum Workload {
        /// `"write"`: a blind put of a new value.
        Write = "write",
        /// `"increment"`: read, add one, write back (lost updates show up here).
        Increment = "increment",
    }
}

crate::design_choice! {
    /// What an increment's write names besides its token.
    pub enum Precondition {
        /// The version it read (If-Match).
        Read = "read",
        /// Nothing: a plain write.
        None = "none",
    }
}

crate::design_config! {
    /// The keys of a `[[clients]]` table besides its required `name`, in
    /// documentation order, as a client's table set them.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct ClientKeys {
        start: Duration = key::duration(ANY_DURATION, Duration::ZERO),
            "when it first tries to acquire, on its own clock";
        rounds: u64 = key::integer(1, 100_000, 1), "acquire → work → write → release cycles";
        work: Duration = key::duration(ANY_DURATION, Duration::from_secs(1)),
            "time in the critical section before the write";
        workload: Workload = Workload::key(Workload::Write),
            "write: a blind write; increment: read, add one, write back";
        retry: Duration = key::duration(INTERVAL, Duration::from_millis(500)),
            "wait after a denial before asking again";
        timeout: Duration = key::duration(INTERVAL, Duration::from_secs(5)),
            "how long to wait for any answer";
        check_lease: bool = key::flag(false),
            "check the lease on its own clock before writing (check-then-act)";
        renew: bool = key::flag(false), "renew the lease every half ttl while holding it (keep-alive)";
        fence_on_acquire: bool = key::flag(false), "send a token-only write right after acquiring";
        precondition: Precondition = Precondition::key(Precondition::Read),
            "read: an increment's write names the version it read (If-Match); \
             none: a plain write carrying only its token";
    }
}

/// The keys of a `[[clients]]` table besides its required `name`, in
/// documentation order: the one list the scenario loader validates against
/// (and takes defaults from) and `fencesim designs` prints.
pub const CLIENT_KEYS: &[KeySpec] = ClientKeys::KEYS;

const TAG_ACQUIRE: u64 = 0;
const TAG_WORK: u64 = 1;
const TAG_TIMEOUT: u64 = 2;
const TAG_RENEW: u64 = 3;
const TAG_WRITE: u64 = 4;
const TAG_MODIFY: u64 = 5;

/// The client's timer tags: its own (`TAG_*`) below this, its lock
/// protocol's at or above it, each a protocol timer's own tag
/// ([`ProtocolTimer::tag`](crate::design::lock_client::ProtocolTimer::tag))
/// plus this. The split lives here and nowhere else.
const PROTOCOL_TAG: u64 = 1 << 32;

/// The sim tag of the protocol timer whose own tag is `tag`.
pub(crate) fn protocol_tag(tag: u64) -> u64 {
    PROTOCOL_TAG
        .checked_add(tag)
        .expect("a protocol timer's tag is at most u64::MAX - 2^32")
}

/// The protocol timer's own tag in sim tag `tag`, or `None` for one of the
/// client's own timers.
pub(crate) fn protocol_timer(tag: u64) -> Option<u64> {
    tag.checked_sub(PROTOCOL_TAG)
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Phase {
    Idle,
    Acquiring,
    Fencing { write: String, grant: Grant },
    Working(Grant),
    Reading { req: u64, grant: Grant },
    Modifying { value: i64, grant: Grant },
    Checked { value: i64, grant: Grant },
    Writing { write: String, grant: Grant },
}

impl Phase {
    /// The grant the client believes it holds in this phase.
    fn grant(&self) -> Option<&Grant> {
        match self {
            Phase::Idle | Phase::Acquiring => None,
            Phase::Fencing { grant, .. }
            | Phase::Working(grant)
            | Phase::Reading { grant, .. }
            | Phase::Modifying { grant, .. }
            | Phase::Checked { grant, .. }
            | Phase::Writing { grant, .. } => Some(grant),
        }
    }
}

/// The bundled lock client.
pub struct Client {
    config: ClientConfig,
    lock: Box<dyn AnyLockClient>,
    phase: Phase,
    timeout: Option<TimerId>,
    /// Until when, on its own monotonic clock, it believes its lease lasts.
    held_until: Option<Duration>,
    /// When the latest renewal was asked for.
    renew_sent_at: Option<Duration>,
    renew_timer: Option<TimerId>,
    /// Completed rounds; kept across a crash so the run ends.
    round: u64,
    /// Rechecks of the queued acquire in progress.
    rechecks: u32,
    /// Requests and writes sent; kept across a crash so ids stay unique.
    requests: u64,
    writes: u64,
    /// The version of the last read, sent with the increment that follows
    /// it (a `cas` storage applies the write only if it still matches).
    read_version: Option<u64>,
}

impl Client {
    /// A client with these settings, speaking to the single lock server
    /// called `lock`.
    pub fn new(config: ClientConfig) -> Self {
        Client::with_protocol(config, Box::new(SingleServer::new("lock")))
    }

    /// A client with these settings, speaking the lock protocol `lock`.
    pub fn with_protocol(config: ClientConfig, lock: Box<dyn AnyLockClient>) -> Self {
        Client {
            config,
            lock,
            phase: Phase::Idle,
            timeout: None,
            held_until: None,
            renew_sent_at: None,
            renew_timer: None,
            round: 0,
            rechecks: 0,
            requests: 0,
            writes: 0,
            read_version: None,
        }
    }

    fn arm_timeout(&mut self, ctx: &mut Context<'_, Msg>) {
        if let Some(t) = self.timeout.take() {
            ctx.cancel_timer(t);
        }
        self.timeout = Some(ctx.set_timer(self.config.timeout, TAG_TIMEOUT));
    }

    fn disarm_timeout(&mut self, ctx: &mut Context<'_, Msg>) {
        if let Some(t) = self.timeout.take() {
            ctx.cancel_timer(t);
        }
    }

    fn acquire(&mut self, ctx: &mut Context<'_, Msg>) {
        self.rechecks = 0;
        self.phase = Phase::Acquiring;
        self.lock.acquire(ctx);
        self.arm_timeout(ctx);
    }

    fn lock_event(&mut self, ctx: &mut Context<'_, Msg>, event: LockEvent) {
        match (event, self.phase.clone()) {
            (LockEvent::Acquired(grant), Phase::Acquiring) => {
                self.disarm_timeout(ctx);
                sim::emit!(
                    events::ACQUIRED,
                    lease = grant.lease,
                    token = grant.token,
                    ttl_ms = grant.ttl.as_millis() as u64,
                    ends = (grant.ends > 1).then_some(grant.ends)
                );
                let from = grant.asked.unwrap_or_else(|| ctx.now());
                self.held_until = Some(from + grant.ttl);
                if self.config.renew {
                    self.renew_timer = Some(ctx.set_timer(grant.ttl / 2, TAG_RENEW));
                }
                match grant.token {
                    Some(token) if self.config.fence_on_acquire => {
                        let write = self.send_write(ctx, Some(token), 0, Op::Fence);
                        sim::emit!(events::FENCED, write = write.as_str(), token = token);
                        self.phase = Phase::Fencing { write, grant };
                        self.arm_timeout(ctx);
                    }
                    _ => self.start_work(ctx, grant),
                }
            }
            (LockEvent::Acquired(_), _) => self.lock.release(ctx),
            (LockEvent::Denied, Phase::Acquiring) => {
                self.disarm_timeout(ctx);
                sim::emit!(events::DENIED);
                self.phase = Phase::Idle;
                ctx.set_timer(self.config.retry, TAG_ACQUIRE);
            }
            (
                LockEvent::Lost,
                Phase::Working(grant)
                | Phase::Fencing { grant, .. }
                | Phase::Reading { grant, .. }
                | Phase::Modifying { grant, .. }
                | Phase::Checked { grant, .. },
            ) => {
                // Told in time: the work is abandoned, nothing is written.
                sim::emit!(events::LOST);
                self.release(ctx, grant);
            }
            (LockEvent::Renewed(ttl), phase) => {
                if let Some(grant) = phase.grant() {
                    let asked = self.renew_sent_at.unwrap_or_else(|| ctx.now());
                    self.held_until = Some(asked + ttl);
                    // How long ago it asked: a reader of the journal can
                    // then place the new end of the lease as the client does.
                    let asked_ago_ns = ctx.now().saturating_sub(asked).as_nanos() as u64;
                    sim::emit!(
                        events::RENEWED,
                        lease = grant.lease,
                        ttl_ms = ttl.as_millis() as u64,
                        asked_ago_ns = asked_ago_ns
                    );
                }
            }
            _ => {}
        }
    }

    /// While acquiring, a request is always timed out: given up when it is
    /// not queued, rechecked when it is (see the timeout's handling).
    fn wait_or_time_out(&mut self, ctx: &mut Context<'_, Msg>) {
        if self.phase == Phase::Acquiring && self.timeout.is_none() {
            self.arm_timeout(ctx);
        }
    }

    fn start_work(&mut self, ctx: &mut Context<'_, Msg>, grant: Grant) {
        self.phase = Phase::Working(grant);
        ctx.set_timer(self.config.work, TAG_WORK);
    }

    /// Sends a write to the storage and returns its id.
    fn send_write(
        &mut self,
        ctx: &mut Context<'_, Msg>,
        token: Option<u64>,
        value: i64,
        op: Op,
    ) -> String {
        self.writes += 1;
        let write = format!("{}/{}", ctx.name(), self.writes);
        let expect_version = match op {
            Op::Increment => self.read_version.take().filter(|_| self.config.conditional),
            Op::Put | Op::Fence => None,
        };
        let msg = Msg::Write {
            write: write.clone(),
            token,
            key: self.config.key.clone(),
            value,
            op,
            expect_version,
        };
        ctx.send(node_named(ctx, &self.config.storage), msg);
        write
    }

    /// The write is due: with `check_lease`, check first.
    fn before_write(&mut self, ctx: &mut Context<'_, Msg>, grant: Grant, value: i64) {
        if !self.config.check_lease {
            return self.write(ctx, grant, value);
        }
        let now = ctx.now();
        let until = self.held_until.unwrap_or(now);
        if now < until {
            let remaining_ms = (until - now).as_millis() as u64;
            sim::emit!(
                events::CHECKED,
                lease = grant.lease,
                remaining_ms = remaining_ms
            );
            // The write is the next step: a pause can fall in between.
            self.phase = Phase::Checked { value, grant };
            ctx.set_timer(Duration::ZERO, TAG_WRITE);
        } else {
            let overdue_ms = (now - until).as_millis() as u64;
            sim::emit!(events::LAPSED, lease = grant.lease, overdue_ms = overdue_ms);
            self.release(ctx, grant);
        }
    }

    fn write(&mut self, ctx: &mut Context<'_, Msg>, grant: Grant, value: i64) {
        let op = self.config.op;
        let write = format!("{}/{}", ctx.name(), self.writes + 1);
        sim::emit!(
            events::WROTE,
            write = write.as_str(),
            token = grant.token,
            value = value,
            op = op.as_str()
        );
        let sent = self.send_write(ctx, grant.token, value, op);
        debug_assert_eq!(sent, write);
        self.phase = Phase::Writing { write, grant };
        self.arm_timeout(ctx);
    }

    fn release(&mut self, ctx: &mut Context<'_, Msg>, grant: Grant) {
        self.disarm_timeout(ctx);
        if let Some(t) = self.renew_timer.take() {
            ctx.cancel_timer(t);
        }
        self.held_until = None;
        self.renew_sent_at = None;
        self.lock.release(ctx);
        sim::emit!(events::RELEASED, lease = grant.lease);
        self.round += 1;
        self.phase = Phase::Idle;
        if self.round < self.config.rounds {
            ctx.set_timer(self.config.retry, TAG_ACQUIRE);
        }
    }

    fn renew(&mut self, ctx: &mut Context<'_, Msg>) {
        self.renew_timer = None;
        let Some(grant) = self.phase.grant() else {
            return;
        };
        let every = grant.ttl / 2;
        if self.lock.renew(ctx) {
            self.renew_sent_at = Some(ctx.now());
            self.renew_timer = Some(ctx.set_timer(every, TAG_RENEW));
        }
    }
}

impl Actor<Msg> for Client {
    fn on_start(&mut self, ctx: &mut Context<'_, Msg>) {
        if self.round < self.config.rounds {
            let wait = self.config.start.saturating_sub(ctx.now());
            ctx.set_timer(wait, TAG_ACQUIRE);
        }
    }

    fn on_message(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, msg: Msg) {
        if ctx.name_of(from) != self.config.storage {
            let event = self.lock.on_message(ctx, from, &msg);
            self.lock_event(ctx, event);
            self.wait_or_time_out(ctx);
            return;
        }
        match (msg, self.phase.clone()) {
            (
                Msg::ReadReply {
                    req,
                    value,
                    version,
                },
                Phase::Reading { req: want, grant },
            ) if req == want => {
                sim::emit!(events::READ, value = value, version = version);
                self.disarm_timeout(ctx);
                self.read_version = Some(version);
                // The write is the next step: a pause can fall in between.
                self.phase = Phase::Modifying {
                    value: value + 1,
                    grant,
                };
                ctx.set_timer(Duration::ZERO, TAG_MODIFY);
            }
            (Msg::WriteReply { write, ok }, Phase::Fencing { write: want, grant })
                if write == want =>
            {
                self.disarm_timeout(ctx);
                let op = Op::Fence.as_str();
                sim::emit!(events::ACKED, write = write.as_str(), ok = ok, op = op);
                if ok {
                    self.start_work(ctx, grant);
                } else {
                    // A newer token is already in: this grant is fenced off.
                    self.release(ctx, grant);
                }
            }
            (Msg::WriteReply { write, ok }, Phase::Writing { write: want, grant })
                if write == want =>
            {
                sim::emit!(
                    events::ACKED,
                    write = write.as_str(),
                    ok = ok,
                    op = self.config.op.as_str()
                );
                self.release(ctx, grant);
            }
            _ => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Context<'_, Msg>, id: TimerId, tag: u64) {
        if protocol_timer(tag).is_some() {
            let event = self.lock.on_timer(ctx, tag);
            self.lock_event(ctx, event);
            self.wait_or_time_out(ctx);
            return;
        }
        match (tag, self.phase.clone()) {
            (TAG_ACQUIRE, Phase::Idle) => self.acquire(ctx),
            (TAG_WORK, Phase::Working(grant)) => match self.config.op {
                Op::Increment => {
                    self.requests += 1;
                    let req = self.requests;
                    let key = self.config.key.clone();
                    ctx.send(
                        node_named(ctx, &self.config.storage),
                        Msg::Read { req, key },
                    );
                    self.phase = Phase::Reading { req, grant };
                    self.arm_timeout(ctx);
                }
                Op::Put | Op::Fence => {
                    let value = self.writes as i64 + 1;
                    self.before_write(ctx, grant, value);
                }
            },
            (TAG_MODIFY, Phase::Modifying { value, grant }) => self.before_write(ctx, grant, value),
            (TAG_WRITE, Phase::Checked { value, grant }) => self.write(ctx, grant, value),
            (TAG_RENEW, _) if self.renew_timer == Some(id) => self.renew(ctx),
            (TAG_TIMEOUT, phase) if self.timeout == Some(id) => {
                self.timeout = None;
                match phase {
                    Phase::Acquiring if self.lock.is_queued() => {
                        // Queued: the place is kept (asking anew would go to
                        // the back of the queue). Ask about the same request,
                        // in case its grant was lost, less and less often.
                        self.lock.recheck(ctx);
                        self.rechecks = (self.rechecks + 1).min(16);
                        let wait = self.config.timeout * (1u32 << self.rechecks);
                        self.timeout = Some(ctx.set_timer(wait, TAG_TIMEOUT));
                    }
                    Phase::Acquiring => {
                        // Unanswered: give the attempt up and ask again.
                        self.lock.release(ctx);
                        self.acquire(ctx);
                    }
                    Phase::Fencing { grant, .. }
                    | Phase::Reading { grant, .. }
                    | Phase::Writing { grant, .. } => self.release(ctx, grant),
                    Phase::Idle
                    | Phase::Working(_)
                    | Phase::Modifying { .. }
                    | Phase::Checked { .. } => {}
                }
            }
            _ => {}
        }
    }

    fn on_crash(&mut self) {
        // The process forgets its grant and whatever it was doing.
        self.phase = Phase::Idle;
        self.timeout = None;
        self.held_until = None;
        self.renew_sent_at = None;
        self.renew_timer = None;
        self.lock.on_crash();
    }

    fn is_done(&self) -> bool {
        self.round >= self.config.rounds
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::design::params::ParamValue;
    use sim::testing::Harness;

    const LOCK: NodeId = 1;
    const STORAGE: NodeId = 2;

    fn harness() -> Harness {
        Harness::new(&["client1", "lock", "storage"], 0)
    }

    #[test]
    fn acquires_works_writes_with_its_token_then_releases() {
        let (mut h, mut c) = (harness(), Client::new(ClientConfig::default()));
        let s = h.start(&mut c);
        let (start, _, tag) = s.timers[0];
        let s = h.timer(&mut c, start, tag);
        assert_eq!(s.sends, vec![(LOCK, Msg::Acquire { req: 1 })]);
        let granted = Msg::Granted {
            req: 1,
            lease: 7,
            token: Some(33),
            ttl: Duration::from_secs(10),
        };
        let s = h.message(&mut c, LOCK, granted);
        assert!(s.event("acquired").is_some());
        let (work, after, tag) = s.timers[0];
        assert_eq!(after, Duration::from_secs(1));
        let s = h.timer(&mut c, work, tag);
        assert!(
            matches!(&s.sends[0], (STORAGE, Msg::Write { token: Some(33), write, .. }) if write == "client1/1")
        );
        let s = h.message(
            &mut c,
            STORAGE,
            Msg::WriteReply {
                write: "client1/1".into(),
                ok: false,
            },
        );
        assert_eq!(s.sends, vec![(LOCK, Msg::Release { lease: 7 })]);
        assert!(c.is_done());
    }

    #[test]
    fn retries_after_a_denial() {
        let (mut h, mut c) = (harness(), Client::new(ClientConfig::default()));
        let s = h.start(&mut c);
        let (start, _, tag) = s.timers[0];
        h.timer(&mut c, start, tag);
        let s = h.message(&mut c, LOCK, Msg::Denied { req: 1 });
        assert!(s.event("denied").is_some());
        let (retry, after, tag) = s.timers[0];
        assert_eq!(after, Duration::from_millis(500));
        let s = h.timer(&mut c, retry, tag);
        assert_eq!(s.sends, vec![(LOCK, Msg::Acquire { req: 2 })]);
    }

    #[test]
    fn increments_read_then_write_the_value_plus_one() {
        let config = ClientConfig {
            op: Op::Increment,
            ..ClientConfig::default()
        };
        let (mut h, mut c) = (harness(), Client::new(config));
        let s = h.start(&mut c);
        h.timer(&mut c, s.timers[0].0, s.timers[0].2);
        let granted = Msg::Granted {
            req: 1,
            lease: 1,
            token: None,
            ttl: Duration::from_secs(10),
        };
        let s = h.message(&mut c, LOCK, granted);
        let s = h.timer(&mut c, s.timers[0].0, s.timers[0].2);
        assert!(matches!(s.sends[0], (STORAGE, Msg::Read { req: 1, .. })));
        let s = h.message(
            &mut c,
            STORAGE,
            Msg::ReadReply {
                req: 1,
                value: 41,
                version: 3,
            },
        );
        assert!(s.sends.is_empty(), "the write is the next step");
        let (modify, _, tag) = s.timers[s.timers.len() - 1];
        let s = h.timer(&mut c, modify, tag);
        assert!(matches!(
            s.sends[0],
            (
                STORAGE,
                Msg::Write {
                    value: 42,
                    op: Op::Increment,
                    ..
                }
            )
        ));
    }

    #[test]
    fn an_increment_names_the_version_it_read_unless_its_precondition_is_none() {
        for (precondition, expected) in [("read", Some(3)), ("none", None)] {
            let params = Params::defaults(CLIENT_KEYS)
                .with("workload", ParamValue::Str("increment".into()))
                .with("precondition", ParamValue::Str(precondition.into()));
            let (mut h, mut c) = (harness(), Client::new(ClientConfig::from_params(&params)));
            let s = acquired(&mut h, &mut c, Some(33));
            h.timer(&mut c, s.timers[0].0, s.timers[0].2);
            let read = Msg::ReadReply {
                req: 1,
                value: 41,
                version: 3,
            };
            let s = h.message(&mut c, STORAGE, read);
            let (modify, _, tag) = s.timers[s.timers.len() - 1];
            let s = h.timer(&mut c, modify, tag);
            // The token goes with the write either way.
            assert!(
                matches!(
                    &s.sends[0],
                    (STORAGE, Msg::Write { token: Some(33), value: 42, expect_version, .. })
                        if *expect_version == expected
                ),
                "{precondition}: {:?}",
                s.sends
            );
        }
    }

    fn granted(token: Option<u64>) -> Msg {
        Msg::Granted {
            req: 1,
            lease: 1,
            token,
            ttl: Duration::from_secs(10),
        }
    }

    /// Starts `c` and hands it a grant; returns the step of the grant.
    fn acquired(h: &mut Harness, c: &mut Client, token: Option<u64>) -> sim::testing::Step<Msg> {
        let s = h.start(c);
        h.timer(c, s.timers[0].0, s.timers[0].2);
        h.message(c, LOCK, granted(token))
    }

    #[test]
    fn check_lease_writes_one_step_after_a_passing_check() {
        let config = ClientConfig {
            check_lease: true,
            ..ClientConfig::default()
        };
        let (mut h, mut c) = (harness(), Client::new(config));
        let s = acquired(&mut h, &mut c, Some(33));
        h.advance(Duration::from_secs(1));
        let s = h.timer(&mut c, s.timers[0].0, s.timers[0].2);
        assert!(s.sends.is_empty(), "the write waits for the next step");
        let checked = s.event("checked").expect("checked");
        assert!(checked.contains(&("remaining_ms".into(), sim::journal::Value::U64(9000))));
        let (write, after, tag) = s.timers[0];
        assert_eq!(after, Duration::ZERO);
        let s = h.timer(&mut c, write, tag);
        assert!(s.event("wrote").is_some());
        assert!(matches!(
            s.sends[0],
            (STORAGE, Msg::Write { op: Op::Put, .. })
        ));
    }

    #[test]
    fn check_lease_gives_the_round_up_when_its_clock_says_the_lease_ran_out() {
        let config = ClientConfig {
            check_lease: true,
            ..ClientConfig::default()
        };
        let (mut h, mut c) = (harness(), Client::new(config));
        let s = acquired(&mut h, &mut c, Some(33));
        h.advance(Duration::from_secs(15));
        let s = h.timer(&mut c, s.timers[0].0, s.timers[0].2);
        assert!(s.event("lapsed").is_some());
        assert!(s.event("wrote").is_none());
        assert_eq!(s.sends, vec![(LOCK, Msg::Release { lease: 1 })]);
        assert!(c.is_done());
    }

    #[test]
    fn fence_on_acquire_sends_a_token_only_write_before_working() {
        let config = ClientConfig {
            fence_on_acquire: true,
            ..ClientConfig::default()
        };
        let (mut h, mut c) = (harness(), Client::new(config));
        let s = acquired(&mut h, &mut c, Some(34));
        assert!(s.event("fenced").is_some());
        assert!(matches!(
            &s.sends[0],
            (STORAGE, Msg::Write { op: Op::Fence, token: Some(34), write, .. }) if write == "client1/1"
        ));
        let ok = Msg::WriteReply {
            write: "client1/1".into(),
            ok: true,
        };
        let s = h.message(&mut c, STORAGE, ok);
        assert!(s.event("acked").is_some());
        // Work starts now (after the timeout's cancellation).
        assert_eq!(s.timers.last().unwrap().1, Duration::from_secs(1));
    }

    #[test]
    fn a_refused_fence_ends_the_round_without_a_write() {
        let config = ClientConfig {
            fence_on_acquire: true,
            ..ClientConfig::default()
        };
        let (mut h, mut c) = (harness(), Client::new(config));
        acquired(&mut h, &mut c, Some(33));
        let refused = Msg::WriteReply {
            write: "client1/1".into(),
            ok: false,
        };
        let s = h.message(&mut c, STORAGE, refused);
        assert_eq!(s.sends, vec![(LOCK, Msg::Release { lease: 1 })]);
        assert!(c.is_done());
    }

    #[test]
    fn without_a_token_there_is_nothing_to_fence_with() {
        let config = ClientConfig {
            fence_on_acquire: true,
            ..ClientConfig::default()
        };
        let (mut h, mut c) = (harness(), Client::new(config));
        let s = acquired(&mut h, &mut c, None);
        assert!(s.sends.is_empty());
        assert!(s.event("fenced").is_none());
    }

    #[test]
    fn renew_asks_every_half_ttl_and_journals_the_extension() {
        let config = ClientConfig {
            renew: true,
            check_lease: true,
            work: Duration::from_secs(30),
            ..ClientConfig::default()
        };
        let (mut h, mut c) = (harness(), Client::new(config));
        let s = acquired(&mut h, &mut c, Some(1));
        let (renew, after, tag) = s.timers[0];
        assert_eq!(after, Duration::from_secs(5));
        let work = s.timers[1];
        h.advance(Duration::from_secs(5));
        let s = h.timer(&mut c, renew, tag);
        assert_eq!(s.sends, vec![(LOCK, Msg::Renew { lease: 1, req: 1 })]);
        let (next_renew, after, tag) = s.timers[0];
        assert_eq!(after, Duration::from_secs(5));
        let reply = Msg::RenewReply {
            lease: 1,
            req: 1,
            ok: true,
            ttl: Duration::from_secs(10),
        };
        let s = h.message(&mut c, LOCK, reply.clone());
        assert!(s.event("renewed").is_some());
        // Believed until 5 s + 10 s: a check at 14 s passes.
        h.advance(Duration::from_secs(9));
        let s = h.timer(&mut c, work.0, work.2);
        assert!(s.event("checked").is_some(), "{:?}", s.events);
        // A second copy of the answer is not a second renewal.
        let s = h.message(&mut c, LOCK, reply);
        assert!(s.event("renewed").is_none());
        // A refused renewal is a lost lock.
        let s = h.timer(&mut c, next_renew, tag);
        assert_eq!(s.sends, vec![(LOCK, Msg::Renew { lease: 1, req: 2 })]);
        let refused = Msg::RenewReply {
            lease: 1,
            req: 2,
            ok: false,
            ttl: Duration::ZERO,
        };
        let s = h.message(&mut c, LOCK, refused);
        assert!(s.event("lost").is_some());
        assert!(c.is_done());
    }
}
