//! The bundled client: acquire → work → write → release, `rounds` times.
//!
//! With `workload = "write"` the write is blind (a value, no read); with
//! `"increment"` the client reads the key and writes the value plus one, so a
//! zombie's write loses another client's increment. A denied acquire is
//! retried after `retry`; a request unanswered after `timeout` is given up
//! (an acquire is sent again; an unanswered read or write ends the round).
//! The client never checks its lease before writing: it trusts the grant,
//! like the client of DDIA's figure 9-6.

use std::time::Duration;

use sim::{Actor, Context, NodeId, TimerId};

use crate::design::lock_client::{Grant, LockClient, LockEvent, SingleServer, PROTOCOL_TAG};
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
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            start: Duration::ZERO,
            rounds: 1,
            work: Duration::from_secs(1),
            op: Op::Put,
            retry: Duration::from_millis(500),
            timeout: Duration::from_secs(5),
            key: "x".into(),
            storage: "storage".into(),
        }
    }
}

const TAG_ACQUIRE: u64 = 0;
const TAG_WORK: u64 = 1;
const TAG_TIMEOUT: u64 = 2;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Phase {
    Idle,
    Acquiring,
    Working(Grant),
    Reading { req: u64, grant: Grant },
    Writing { write: String, grant: Grant },
}

/// The bundled lock client.
pub struct Client {
    config: ClientConfig,
    lock: Box<dyn LockClient>,
    phase: Phase,
    timeout: Option<TimerId>,
    /// Completed rounds; kept across a crash so the run ends.
    round: u64,
    /// Requests and writes sent; kept across a crash so ids stay unique.
    requests: u64,
    writes: u64,
}

impl Client {
    /// A client with these settings, speaking to the single lock server
    /// called `lock`.
    pub fn new(config: ClientConfig) -> Self {
        Client::with_protocol(config, Box::new(SingleServer::new("lock")))
    }

    /// A client with these settings, speaking the lock protocol `lock`.
    pub fn with_protocol(config: ClientConfig, lock: Box<dyn LockClient>) -> Self {
        Client {
            config,
            lock,
            phase: Phase::Idle,
            timeout: None,
            round: 0,
            requests: 0,
            writes: 0,
        }
    }

    fn peer(ctx: &Context<'_, Msg>, name: &str) -> NodeId {
        ctx.node(name)
            .unwrap_or_else(|| panic!("client: no node named {name:?}"))
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
                    ttl_ms = grant.ttl.as_millis() as u64
                );
                self.phase = Phase::Working(grant);
                ctx.set_timer(self.config.work, TAG_WORK);
            }
            (LockEvent::Acquired(_), _) => self.lock.release(ctx),
            (LockEvent::Denied, Phase::Acquiring) => {
                self.disarm_timeout(ctx);
                sim::emit!(events::DENIED);
                self.phase = Phase::Idle;
                ctx.set_timer(self.config.retry, TAG_ACQUIRE);
            }
            (LockEvent::Lost, Phase::Working(grant)) => {
                // Told in time: the work is abandoned, nothing is written.
                sim::emit!(events::LOST);
                self.release(ctx, grant);
            }
            _ => {}
        }
    }

    fn write(
        &mut self,
        ctx: &mut Context<'_, Msg>,
        grant: Grant,
        value: i64,
        expect_version: Option<u64>,
    ) {
        self.writes += 1;
        let write = format!("{}/{}", ctx.name(), self.writes);
        let op = self.config.op;
        sim::emit!(
            events::WROTE,
            write = write.as_str(),
            token = grant.token,
            value = value,
            op = op.as_str()
        );
        let msg = Msg::Write {
            write: write.clone(),
            token: grant.token,
            key: self.config.key.clone(),
            value,
            op,
            expect_version,
        };
        ctx.send(Self::peer(ctx, &self.config.storage), msg);
        self.phase = Phase::Writing { write, grant };
        self.arm_timeout(ctx);
    }

    fn release(&mut self, ctx: &mut Context<'_, Msg>, grant: Grant) {
        self.disarm_timeout(ctx);
        self.lock.release(ctx);
        sim::emit!(events::RELEASED, lease = grant.lease);
        self.round += 1;
        self.phase = Phase::Idle;
        if self.round < self.config.rounds {
            ctx.set_timer(self.config.retry, TAG_ACQUIRE);
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
                self.write(ctx, grant, value + 1, Some(version));
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
        if tag >= PROTOCOL_TAG {
            let event = self.lock.on_timer(ctx, tag);
            self.lock_event(ctx, event);
            return;
        }
        match (tag, self.phase.clone()) {
            (TAG_ACQUIRE, Phase::Idle) => self.acquire(ctx),
            (TAG_WORK, Phase::Working(grant)) => match self.config.op {
                Op::Put => {
                    let value = self.writes as i64 + 1;
                    self.write(ctx, grant, value, None);
                }
                Op::Increment => {
                    self.requests += 1;
                    let req = self.requests;
                    let key = self.config.key.clone();
                    ctx.send(
                        Self::peer(ctx, &self.config.storage),
                        Msg::Read { req, key },
                    );
                    self.phase = Phase::Reading { req, grant };
                    self.arm_timeout(ctx);
                }
            },
            (TAG_TIMEOUT, phase) if self.timeout == Some(id) => {
                self.timeout = None;
                match phase {
                    Phase::Acquiring => {
                        // Unanswered: give the attempt up and ask again.
                        self.lock.release(ctx);
                        self.acquire(ctx);
                    }
                    Phase::Reading { grant, .. } | Phase::Writing { grant, .. } => {
                        self.release(ctx, grant)
                    }
                    Phase::Idle | Phase::Working(_) => {}
                }
            }
            _ => {}
        }
    }

    fn on_crash(&mut self) {
        // The process forgets its grant and whatever it was doing.
        self.phase = Phase::Idle;
        self.timeout = None;
        self.lock.on_crash();
    }

    fn is_done(&self) -> bool {
        self.round >= self.config.rounds
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
}
