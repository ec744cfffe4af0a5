//! `redlock`: the Redlock algorithm of the Redis documentation ("Distributed
//! Locks with Redis"), a lock held on a majority of N independent Redis nodes
//! named `lock1` … `lockN`, each a [`RedisLock`] with its key's expiry on its
//! own wall clock.
//!
//! The client ([`RedlockClient`]) notes its monotonic clock, sends `Acquire`
//! to every node at once, and waits for all the answers or for `timeout`
//! (the per-node request timeout; the nodes are asked in parallel, as
//! Redisson's `RedissonRedLock` and several other clients do, so one
//! timeout bounds the whole round). It holds the lock iff a majority granted
//! and the validity time is positive:
//!
//! ```text
//! validity = ttl − elapsed − (ttl × drift_factor + 2 ms)
//! ```
//!
//! and then believes it holds the lock for `validity`; otherwise it releases
//! on every node and reports a denial. A release goes to every node.
//!
//! **Extending** (the `renew` client variant), as the Redis documentation
//! describes it: the client sends every node the compare-and-`PEXPIRE`
//! script ([`Msg::Renew`]) and considers the lock extended only if a
//! majority extended it within the validity time; it then believes it for
//! `ttl − drift` from when it asked. A majority of refusals, or no majority
//! by `timeout`, means the lock is lost.
//!
//! Known failures (Kleppmann, "How to do distributed locking", 2016): the
//! algorithm assumes bounded clock error, network delay and process pauses.
//! A node whose wall clock jumps forward expires its key early, so a second
//! client can win a majority that overlaps the first one's in that node; a
//! client paused after acquiring for longer than the validity comes back
//! still believing it holds the lock; a node restarted without persistence
//! forgets the key (`durable = false`). Redlock has no fencing tokens.
//!
//! **Tokens.** With `tokens = true` every node keeps its own `INCR` counter
//! and the client takes the **maximum of the tokens its majority granted**.
//! This is *not* a fence: the counters are independent, so a later majority
//! can carry a smaller maximum (client A wins lock1–lock3 where lock1's
//! counter stands at 10, client B then wins lock3–lock5 at 4: token 4 after
//! token 10), and a node restarted without persistence counts from
//! `first_token` again. The oracle reports such grants as token regressions.
//!
//! The lease of a Redlock grant is the client's request id, unique per client
//! and attempt, stored as the key's value on every node: the nodes' `granted`,
//! `expired` and `released` events name it, and the client's `acquired`
//! (one per majority acquisition) carries it too.

use std::time::Duration;

use sim::{Actor, Context, NodeId};

use crate::design::catalog::DesignInfo;
use crate::design::config::{key, DesignConfig as _};
use crate::design::lock_client::{AnyLockClient, Grant, LockClient, LockContext, LockEvent};
use crate::design::node_named;
use crate::design::redis::{RedisConfig, RedisLock, Release};
use crate::design::{LockDesign, ParamError};
use crate::protocol::Msg;

/// The clock drift allowance Redlock adds to `ttl × drift_factor`.
pub const DRIFT_ALLOWANCE: Duration = Duration::from_millis(2);

/// The `redlock` design as the registry knows it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Redlock;

impl LockDesign for Redlock {
    type Config = RedlockConfig;

    fn info(&self) -> DesignInfo {
        REDLOCK
    }

    fn server(&self, config: &RedlockConfig, _index: usize) -> Box<dyn Actor<Msg>> {
        Box::new(RedisLock::new(config.node()))
    }

    fn client(&self, config: &RedlockConfig, lock_nodes: &[String]) -> Box<dyn AnyLockClient> {
        Box::new(RedlockClient::new(config.clone(), lock_nodes.to_vec()))
    }

    fn validate(&self, config: &RedlockConfig) -> Result<(), ParamError> {
        if config.quorum > config.nodes {
            return Err(ParamError {
                key: "quorum",
                message: format!(
                    "a quorum of {} cannot be reached with {} nodes",
                    config.quorum, config.nodes
                ),
            });
        }
        Ok(())
    }
}

/// Lock service: Redlock over N independent Redis nodes.
pub const REDLOCK: DesignInfo = DesignInfo::lock(
    "redlock",
    "Redlock: a majority of N Redis nodes, validity = ttl - elapsed - drift",
    RedlockConfig::KEYS,
);

crate::design_config! {
    /// Settings of a Redlock deployment: its nodes and the client's
    /// algorithm.
    #[derive(Clone, Debug, PartialEq)]
    pub struct RedlockConfig {
        nodes: u64 = key::nodes(5), "how many Redis nodes (lock1 … lockN)";
        ttl: Duration = key::ttl(), "the keys' PX, on each node's wall clock";
        timeout: Duration = key::timeout(),
            "how long the client waits for the nodes' answers (Redlock: much less than ttl)";
        drift_factor: f64 = key::drift_factor(), "clock drift allowed per unit of ttl (plus 2 ms)";
        tokens: bool = key::tokens(false),
            "INCR counter per node; the token is the majority's largest (not a fence)";
        durable: bool = key::durable(), "persistence: do each node's key and counter survive a crash";
        quorum: u64 = key::integer(0, 15, 0),
            "how many nodes' grants make an acquisition: 0 is a majority (nodes / 2 + 1); \
             fewer is a misconfiguration two clients can both win";
    }
}

impl RedlockConfig {
    /// The settings of each of its Redis nodes (counters start at 1).
    pub fn node(&self) -> RedisConfig {
        RedisConfig {
            ttl: self.ttl,
            tokens: self.tokens,
            first_token: 1,
            durable: self.durable,
            release: Release::Compare,
        }
    }
}

/// One node's answer to the current attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Answer {
    Pending,
    Granted(Option<u64>),
    Denied,
}

/// An acquisition in progress.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Attempt {
    req: u64,
    /// Monotonic reading when the requests went out.
    start: Duration,
    answers: Vec<Answer>,
}

/// An extension in progress: each node's answer, `None` while pending.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Extension {
    req: u64,
    /// Monotonic reading when the requests went out.
    start: Duration,
    answers: Vec<Option<bool>>,
}

/// Redlock's timers: the deadline of an acquisition or an extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedlockTimer {
    /// Acquisition `req` is decided with the answers it has.
    Attempt(u64),
    /// Extension `req` is decided with the answers it has.
    Extension(u64),
}

crate::design::lock_client::timer_tags!(RedlockTimer { Attempt(u64), Extension(u64) });

/// The client half of Redlock: majority, timeout, validity.
#[derive(Debug)]
pub struct RedlockClient {
    config: RedlockConfig,
    nodes: Vec<String>,
    /// Request ids, kept across a crash so that every attempt's value is new.
    req: u64,
    attempt: Option<Attempt>,
    /// The lease (request id) held.
    held: Option<u64>,
    /// Extension requests sent.
    renewals: u64,
    extension: Option<Extension>,
}

impl RedlockClient {
    /// A client of the Redis nodes called `nodes`.
    pub fn new(config: RedlockConfig, nodes: Vec<String>) -> Self {
        assert!(!nodes.is_empty(), "redlock needs at least one node");
        RedlockClient {
            config,
            nodes,
            req: 0,
            attempt: None,
            held: None,
            renewals: 0,
            extension: None,
        }
    }

    /// How many grants (or extensions) hold the lock: a majority, unless
    /// the deployment's `quorum` says otherwise.
    fn majority(&self) -> usize {
        match self.config.quorum {
            0 => self.nodes.len() / 2 + 1,
            q => q as usize,
        }
    }

    fn node_ids(&self, ctx: &Context<'_, Msg>) -> Vec<NodeId> {
        self.nodes.iter().map(|n| node_named(ctx, n)).collect()
    }

    fn release_all(&self, ctx: &mut Context<'_, Msg>, lease: u64) {
        for id in self.node_ids(ctx) {
            ctx.send(id, Msg::Release { lease });
        }
    }

    /// The validity left after `elapsed`, if any: ttl − elapsed − drift.
    fn validity(&self, elapsed: Duration) -> Option<Duration> {
        let ttl = self.config.ttl;
        // Rounded to the nanosecond once, so the arithmetic below is exact.
        let drift_ns = (ttl.as_nanos() as f64 * self.config.drift_factor).round() as u64;
        let drift = Duration::from_nanos(drift_ns) + DRIFT_ALLOWANCE;
        ttl.checked_sub(elapsed)?
            .checked_sub(drift)
            .filter(|v| !v.is_zero())
    }

    /// Ends the current attempt: acquired on a majority in time, or released
    /// everywhere and denied.
    fn decide(&mut self, ctx: &mut Context<'_, Msg>) -> LockEvent {
        let Some(attempt) = self.attempt.take() else {
            return LockEvent::Nothing;
        };
        let tokens: Vec<Option<u64>> = attempt
            .answers
            .iter()
            .filter_map(|a| match a {
                Answer::Granted(token) => Some(*token),
                _ => None,
            })
            .collect();
        let elapsed = ctx.now().saturating_sub(attempt.start);
        match self.validity(elapsed) {
            Some(ttl) if tokens.len() >= self.majority() => {
                self.held = Some(attempt.req);
                LockEvent::Acquired(Grant {
                    lease: attempt.req,
                    // Not a fence: see the module documentation.
                    token: tokens.iter().flatten().copied().max(),
                    ttl,
                    // The lock is lost once fewer than a majority hold it.
                    asked: None,
                    ends: (tokens.len() - self.majority() + 1) as u64,
                })
            }
            _ => {
                self.release_all(ctx, attempt.req);
                LockEvent::Denied
            }
        }
    }
}

impl RedlockClient {
    /// Ends the current extension if its outcome is known (`timed_out`: it
    /// is, whatever is still pending): extended on a majority within the
    /// validity time, or lost.
    fn decide_extension(&mut self, ctx: &mut Context<'_, Msg>, timed_out: bool) -> LockEvent {
        let Some(extension) = &self.extension else {
            return LockEvent::Nothing;
        };
        let count = |answer| extension.answers.iter().filter(|a| **a == answer).count();
        let (ok, refused) = (count(Some(true)), count(Some(false)));
        let n = self.nodes.len();
        let elapsed = ctx.now().saturating_sub(extension.start);
        let event = if ok >= self.majority() {
            match (self.validity(elapsed), self.validity(Duration::ZERO)) {
                (Some(_), Some(from_request)) => LockEvent::Renewed(from_request),
                _ => LockEvent::Lost,
            }
        } else if timed_out || refused > n - self.majority() {
            LockEvent::Lost
        } else {
            return LockEvent::Nothing;
        };
        self.extension = None;
        event
    }
}

impl LockClient for RedlockClient {
    type Timer = RedlockTimer;

    fn acquire(&mut self, ctx: &mut LockContext<'_, '_, RedlockTimer>) {
        self.req += 1;
        let req = self.req;
        self.attempt = Some(Attempt {
            req,
            start: ctx.now(),
            answers: vec![Answer::Pending; self.nodes.len()],
        });
        for id in self.node_ids(ctx) {
            ctx.send(id, Msg::Acquire { req });
        }
        ctx.set_timer(self.config.timeout, RedlockTimer::Attempt(req));
    }

    fn release(&mut self, ctx: &mut LockContext<'_, '_, RedlockTimer>) {
        self.extension = None;
        let attempt = self.attempt.take().map(|a| a.req);
        if let Some(lease) = self.held.take().or(attempt) {
            self.release_all(ctx, lease);
        }
    }

    fn on_message(
        &mut self,
        ctx: &mut LockContext<'_, '_, RedlockTimer>,
        from: NodeId,
        msg: &Msg,
    ) -> LockEvent {
        let Some(index) = self.nodes.iter().position(|n| n == ctx.name_of(from)) else {
            return LockEvent::Nothing;
        };
        let (req, answer) = match *msg {
            Msg::Granted { req, token, .. } => (req, Answer::Granted(token)),
            Msg::Denied { req } => (req, Answer::Denied),
            Msg::RenewReply { lease, req, ok, .. } => {
                let Some(extension) = self
                    .extension
                    .as_mut()
                    .filter(|e| e.req == req && self.held == Some(lease))
                else {
                    return LockEvent::Nothing;
                };
                // One answer per node: a second copy changes nothing.
                extension.answers[index].get_or_insert(ok);
                return self.decide_extension(ctx, false);
            }
            _ => return LockEvent::Nothing,
        };
        match &mut self.attempt {
            Some(attempt) if attempt.req == req => {
                if attempt.answers[index] == Answer::Pending {
                    attempt.answers[index] = answer;
                }
                if attempt.answers.iter().all(|a| *a != Answer::Pending) {
                    return self.decide(ctx);
                }
            }
            _ => {
                // A grant for an attempt decided already: a node counted as
                // timed out, or one answering a release's overtaken request.
                // Hand it back unless it belongs to the lock we hold.
                if matches!(answer, Answer::Granted(_)) && self.held != Some(req) {
                    ctx.send(from, Msg::Release { lease: req });
                }
            }
        }
        LockEvent::Nothing
    }

    fn on_timer(
        &mut self,
        ctx: &mut LockContext<'_, '_, RedlockTimer>,
        timer: RedlockTimer,
    ) -> LockEvent {
        match (timer, &self.attempt, &self.extension) {
            (RedlockTimer::Attempt(req), Some(attempt), _) if attempt.req == req => {
                self.decide(ctx)
            }
            (RedlockTimer::Extension(req), _, Some(extension)) if extension.req == req => {
                self.decide_extension(ctx, true)
            }
            _ => LockEvent::Nothing,
        }
    }

    fn renew(&mut self, ctx: &mut LockContext<'_, '_, RedlockTimer>) -> bool {
        let Some(lease) = self.held else {
            return false;
        };
        self.renewals += 1;
        let req = self.renewals;
        self.extension = Some(Extension {
            req,
            start: ctx.now(),
            answers: vec![None; self.nodes.len()],
        });
        for id in self.node_ids(ctx) {
            ctx.send(id, Msg::Renew { lease, req });
        }
        ctx.set_timer(self.config.timeout, RedlockTimer::Extension(req));
        true
    }

    fn on_crash(&mut self) {
        self.attempt = None;
        self.held = None;
        self.extension = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::design::lock_client::timer_tag;
    use sim::testing::{Harness, Step};
    use sim::TimerId;

    const NODES: [&str; 5] = ["lock1", "lock2", "lock3", "lock4", "lock5"];

    /// Hosts the client as node 0 (lock1 … lock5 are nodes 1 … 5) and keeps
    /// what each call told the workload. `on_start` runs `command`.
    struct Host {
        client: RedlockClient,
        command: Command,
        events: Vec<LockEvent>,
    }

    #[derive(Clone, Copy)]
    enum Command {
        Acquire,
        Release,
        Renew,
    }

    impl Actor<Msg> for Host {
        fn on_start(&mut self, ctx: &mut Context<'_, Msg>) {
            let client: &mut dyn AnyLockClient = &mut self.client;
            match self.command {
                Command::Acquire => client.acquire(ctx),
                Command::Release => client.release(ctx),
                Command::Renew => assert!(client.renew(ctx)),
            }
        }
        fn on_message(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, msg: Msg) {
            let client: &mut dyn AnyLockClient = &mut self.client;
            let event = client.on_message(ctx, from, &msg);
            self.events.push(event);
        }
        fn on_timer(&mut self, ctx: &mut Context<'_, Msg>, _: TimerId, tag: u64) {
            let client: &mut dyn AnyLockClient = &mut self.client;
            let event = client.on_timer(ctx, tag);
            self.events.push(event);
        }
    }

    impl Host {
        fn run(&mut self, h: &mut Harness, command: Command) -> Step<Msg> {
            self.command = command;
            h.start(self)
        }
        fn last(&self) -> &LockEvent {
            self.events.last().expect("an answer was handled")
        }
    }

    fn setup() -> (Harness, Host) {
        let mut names = vec!["client1"];
        names.extend(NODES);
        let client = RedlockClient::new(
            RedlockConfig::default(),
            NODES.iter().map(|n| n.to_string()).collect(),
        );
        let host = Host {
            client,
            command: Command::Acquire,
            events: Vec::new(),
        };
        (Harness::new(&names, 0), host)
    }

    fn granted(req: u64, token: Option<u64>) -> Msg {
        Msg::Granted {
            req,
            lease: req,
            token,
            ttl: Duration::from_secs(10),
        }
    }

    fn releases(step: &Step<Msg>, lease: u64) -> Vec<NodeId> {
        step.sends
            .iter()
            .filter(|(_, m)| *m == Msg::Release { lease })
            .map(|(to, _)| *to)
            .collect()
    }

    #[test]
    fn asks_every_node_and_sets_the_request_timeout() {
        let (mut h, mut c) = setup();
        let s = c.run(&mut h, Command::Acquire);
        let to: Vec<NodeId> = s.sends.iter().map(|(to, _)| *to).collect();
        assert_eq!(to, [1, 2, 3, 4, 5]);
        assert!(s.sends.iter().all(|(_, m)| *m == Msg::Acquire { req: 1 }));
        assert_eq!(s.timers[0].1, Duration::from_millis(50));
        assert_eq!(s.timers[0].2, timer_tag(&RedlockTimer::Attempt(1)));
    }

    #[test]
    fn a_majority_in_time_acquires_with_the_validity_left() {
        let (mut h, mut c) = setup();
        c.run(&mut h, Command::Acquire);
        h.advance(Duration::from_millis(4));
        for node in 1..=4 {
            h.message(&mut c, node, granted(1, None));
            assert_eq!(*c.last(), LockEvent::Nothing);
        }
        h.message(&mut c, 5, Msg::Denied { req: 1 });
        // 10 s − 4 ms elapsed − (10 s × 0.01 + 2 ms) = 9.894 s
        assert_eq!(
            *c.last(),
            LockEvent::Acquired(Grant {
                lease: 1,
                token: None,
                ttl: Duration::from_millis(9894),
                asked: None,
                ends: 2,
            })
        );
        let s = c.run(&mut h, Command::Release);
        assert_eq!(releases(&s, 1), [1, 2, 3, 4, 5]);
    }

    #[test]
    fn decides_at_the_timeout_with_the_answers_it_has() {
        let (mut h, mut c) = setup();
        let s = c.run(&mut h, Command::Acquire);
        let (timer, after, tag) = s.timers[0];
        for node in 1..=3 {
            h.message(&mut c, node, granted(1, None));
        }
        h.advance(after);
        h.timer(&mut c, timer, tag);
        assert!(matches!(c.last(), LockEvent::Acquired(g) if g.lease == 1));
        // lock4 answers late: the grant belongs to the lock we hold.
        let s = h.message(&mut c, 4, granted(1, None));
        assert!(s.sends.is_empty());
    }

    #[test]
    fn a_quorum_below_a_majority_acquires_on_a_minority() {
        let (mut h, mut c) = setup();
        c.client.config.quorum = 2;
        c.run(&mut h, Command::Acquire);
        for node in [1, 3] {
            h.message(&mut c, node, granted(1, None));
        }
        for node in [2, 4, 5] {
            h.message(&mut c, node, Msg::Denied { req: 1 });
        }
        // 2 of 5 is what this deployment counts as holding the lock.
        assert!(matches!(c.last(), LockEvent::Acquired(g) if g.lease == 1));
    }

    #[test]
    fn a_minority_is_released_everywhere_and_denied() {
        let (mut h, mut c) = setup();
        c.run(&mut h, Command::Acquire);
        h.message(&mut c, 1, granted(1, None));
        h.message(&mut c, 2, granted(1, None));
        h.message(&mut c, 3, Msg::Denied { req: 1 });
        h.message(&mut c, 4, Msg::Denied { req: 1 });
        let s = h.message(&mut c, 5, Msg::Denied { req: 1 });
        assert_eq!(*c.last(), LockEvent::Denied);
        assert_eq!(releases(&s, 1), [1, 2, 3, 4, 5]);
        // The timeout of a decided attempt does nothing.
        h.timer(&mut c, TimerId(0), timer_tag(&RedlockTimer::Attempt(1)));
        assert_eq!(*c.last(), LockEvent::Nothing);
    }

    #[test]
    fn a_majority_that_took_longer_than_the_ttl_is_not_valid() {
        let (mut h, mut c) = setup();
        c.run(&mut h, Command::Acquire);
        // A pause while the answers are in flight: they are handled 15 s on.
        h.advance(Duration::from_secs(15));
        for node in 1..=5 {
            h.message(&mut c, node, granted(1, None));
        }
        assert_eq!(*c.last(), LockEvent::Denied);
    }

    #[test]
    fn the_validity_leaves_room_for_drift() {
        let (_, c) = setup();
        let v = |ms| c.client.validity(Duration::from_millis(ms));
        assert_eq!(v(0), Some(Duration::from_millis(9898)));
        assert_eq!(v(9897), Some(Duration::from_millis(1)));
        assert_eq!(v(9898), None);
        assert_eq!(v(20_000), None);
    }

    #[test]
    fn a_grant_for_an_old_attempt_is_handed_back() {
        let (mut h, mut c) = setup();
        c.run(&mut h, Command::Acquire);
        c.run(&mut h, Command::Release);
        let s = h.message(&mut c, 3, granted(1, None));
        assert_eq!(s.sends, vec![(3, Msg::Release { lease: 1 })]);
        let s = c.run(&mut h, Command::Acquire);
        assert!(s.sends.iter().all(|(_, m)| *m == Msg::Acquire { req: 2 }));
    }

    #[test]
    fn the_token_is_the_largest_of_the_majority_and_no_fence() {
        let (mut h, mut c) = setup();
        c.run(&mut h, Command::Acquire);
        h.message(&mut c, 1, granted(1, Some(10)));
        h.message(&mut c, 2, granted(1, Some(3)));
        h.message(&mut c, 3, granted(1, Some(3)));
        h.message(&mut c, 4, Msg::Denied { req: 1 });
        h.message(&mut c, 5, Msg::Denied { req: 1 });
        assert!(matches!(c.last(), LockEvent::Acquired(g) if g.token == Some(10)));
        c.run(&mut h, Command::Release);
        // Another majority, whose counters stand lower: token 4 after 10.
        c.run(&mut h, Command::Acquire);
        h.message(&mut c, 1, Msg::Denied { req: 2 });
        h.message(&mut c, 2, Msg::Denied { req: 2 });
        h.message(&mut c, 3, granted(2, Some(4)));
        h.message(&mut c, 4, granted(2, Some(1)));
        h.message(&mut c, 5, granted(2, Some(1)));
        assert!(matches!(c.last(), LockEvent::Acquired(g) if g.token == Some(4)));
    }

    fn renew_reply(req: u64, ok: bool) -> Msg {
        let ttl = if ok {
            Duration::from_secs(10)
        } else {
            Duration::ZERO
        };
        Msg::RenewReply {
            lease: 1,
            req,
            ok,
            ttl,
        }
    }

    #[test]
    fn an_extension_counts_once_per_node_and_holds_on_a_majority() {
        let (mut h, mut c) = setup();
        c.run(&mut h, Command::Acquire);
        for node in 1..=5 {
            h.message(&mut c, node, granted(1, None));
        }
        assert!(matches!(c.last(), LockEvent::Acquired(_)));
        let s = c.run(&mut h, Command::Renew);
        assert!(s
            .sends
            .iter()
            .all(|(_, m)| *m == Msg::Renew { lease: 1, req: 1 }));
        assert_eq!(s.sends.len(), 5);
        h.message(&mut c, 1, renew_reply(1, true));
        h.message(&mut c, 2, renew_reply(1, true));
        // lock2's answer twice is still two nodes, not a majority.
        h.message(&mut c, 2, renew_reply(1, true));
        assert_eq!(*c.last(), LockEvent::Nothing);
        h.message(&mut c, 3, renew_reply(1, true));
        // Believed ttl − drift from the request: 10 s − 102 ms.
        assert_eq!(*c.last(), LockEvent::Renewed(Duration::from_millis(9898)));
        // The late answers of the decided extension change nothing.
        h.message(&mut c, 4, renew_reply(1, true));
        assert_eq!(*c.last(), LockEvent::Nothing);
    }

    #[test]
    fn an_extension_refused_by_a_majority_or_unanswered_is_a_lost_lock() {
        let (mut h, mut c) = setup();
        c.run(&mut h, Command::Acquire);
        for node in 1..=5 {
            h.message(&mut c, node, granted(1, None));
        }
        c.run(&mut h, Command::Renew);
        h.message(&mut c, 1, renew_reply(1, true));
        for node in 2..=3 {
            h.message(&mut c, node, renew_reply(1, false));
            assert_eq!(*c.last(), LockEvent::Nothing);
        }
        h.message(&mut c, 4, renew_reply(1, false));
        assert_eq!(*c.last(), LockEvent::Lost);
        // The next extension: two answers, then the timeout.
        let s = c.run(&mut h, Command::Renew);
        let (timer, after, tag) = s.timers[0];
        h.message(&mut c, 1, renew_reply(2, true));
        h.message(&mut c, 2, renew_reply(2, true));
        h.advance(after);
        h.timer(&mut c, timer, tag);
        assert_eq!(*c.last(), LockEvent::Lost);
    }
}
