//! `redis`: a single Redis node used as a lock with `SET key value NX PX ttl`,
//! the pattern of the Redis documentation's `SET` page and of countless
//! batch-job runners; also the node Redlock runs on (see
//! [`crate::design::redlock`]).
//!
//! The key's expiry is a deadline on the node's **wall** clock, as Redis
//! stores an absolute Unix time in milliseconds: a wall clock that jumps
//! forward (NTP, an operator) expires keys early, the failure at the heart of
//! Kleppmann's "How to do distributed locking" (2016). Like Redis, the node
//! notices an expired key in two ways: *lazily*, when a request touches it,
//! and *actively*, in an expire cycle that runs every [`EXPIRE_CYCLE`] (Redis'
//! default `hz 10`) on the monotonic clock while a key exists. It emits
//! `expired` when it notices, so the journal shows the expiry up to 100 ms
//! after the wall-clock deadline, never before.
//!
//! The value stored under the key is the client's request id, unique per
//! client and attempt (Redis clients store a random string): it is the
//! `lease` of the `granted`, `expired`, `released` and `renewed` events, and
//! a release deletes the key only if it still holds that value and that
//! client (the compare-and-delete Lua script). With `release = "del"` it is
//! a plain `DEL`, the mistake the Redis documentation warns about: a client
//! whose key expired frees whoever holds the lock by then, and the lock is
//! granted again while that client's grant is live (a double grant). A renewal ([`Msg::Renew`])
//! is the matching compare-and-`PEXPIRE` script: it sets the key's deadline
//! to `ttl` from now on the wall clock if the key still holds the client's
//! value, and is refused otherwise.
//!
//! With `tokens`, each grant also takes `INCR` on a counter key, starting at
//! `first_token`. With `durable = false` the node runs without persistence: a
//! crash loses the lock key **and** the counter, so a restarted node lets a
//! second client in while the first still believes it holds the lock, and the
//! counter hands out its first token again (Kleppmann 2016). The restarted
//! node reports the lost key as `expired` (with `reason = "restart"`) so the
//! journal shows where the grant ended; a real Redis says nothing. With
//! `durable = true` (AOF with `fsync always`) key, deadline and counter
//! survive a crash.

use std::collections::BTreeMap;
use std::time::Duration;

use sim::{Actor, Context, NodeId, TimerId};

use crate::design::config::key;
use crate::design::grants::Grants;
use crate::design::lock_client::SingleServer;
use crate::protocol::Msg;

/// How often the active expire cycle looks at the key, on the monotonic
/// clock (Redis' default `hz 10`).
pub const EXPIRE_CYCLE: Duration = Duration::from_millis(100);

crate::design_choice! {
    /// How a release deletes the key.
    pub enum Release {
        /// The compare-and-delete script: only the releasing client's key.
        Compare = "compare",
        /// A plain `DEL`, which frees anyone's key.
        Del = "del",
    }
}

crate::lock_design! {
    pub struct Redis as REDIS = "redis",
        "one Redis node: SET NX PX with the key's expiry on the node's wall clock";
    #[derive(Eq)]
    pub struct RedisConfig {
        ttl: Duration = key::ttl(), "the key's PX, on the node's wall clock";
        tokens: bool = key::tokens(false), "take a token from an INCR counter with each grant";
        first_token: u64 = key::first_token(),
            "the counter's first token (tokens stay within a signed 64-bit integer)";
        durable: bool = key::durable(), "persistence: do the key and the counter survive a crash";
        release: Release = Release::key(Release::Compare),
            "compare: delete the key only if it holds the releasing client's value; \
             del: a plain DEL, which frees whoever holds the key (a bug)";
    }
    server(config, _index) => Box::new(RedisLock::new(config.clone()));
    client(_config, lock_nodes) => Box::new(SingleServer::new(lock_nodes[0].clone()));
}

/// The lock key: who set it, with which value, until when.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Key {
    client: NodeId,
    /// The value the client stored: its request id.
    lease: u64,
    /// Wall-clock deadline, nanoseconds.
    deadline_wall_ns: i64,
}

/// Commands on the node's other keys, beside the lock's (carried in
/// [`Msg::Design`]): counters (`INCRBY`), integer reads (`GET`) and the
/// fenced-write script, for clients written as async code
/// ([`crate::process::redis`]). Each request is answered by
/// [`RedisCall::Reply`] with its id; a duplicate is answered again with the
/// first answer, as a real server answers each copy of a command that is
/// not idempotent only if the client resends it (a copy the network made is
/// run once here). These keys survive a crash only with `durable = true`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RedisCall {
    /// `INCRBY key by`.
    IncrBy {
        /// Request id, echoed in the answer.
        req: u64,
        /// The counter.
        key: String,
        /// What to add.
        by: i64,
    },
    /// `GET key`, as an integer.
    Get {
        /// Request id.
        req: u64,
        /// The key.
        key: String,
    },
    /// The fenced-write script: `key` set to `value` and `<key>:token` to
    /// `token` unless `<key>:token` holds a larger token.
    SetIfToken {
        /// Request id.
        req: u64,
        /// The key.
        key: String,
        /// Its new value.
        value: i64,
        /// The writer's token.
        token: u64,
    },
    /// The answer to request `req`: the counter's value (`IncrBy`), the
    /// key's value (`Get`, `None` for a missing key) or `1`/`0` for a set
    /// or refused script.
    Reply {
        /// The request answered.
        req: u64,
        /// Its value.
        value: Option<i64>,
    },
}

impl crate::protocol::Payload for RedisCall {}

/// One Redis node holding one lock key.
#[derive(Debug)]
pub struct RedisLock {
    config: RedisConfig,
    key: Option<Key>,
    /// Its other keys, as integers ([`RedisCall`]).
    values: BTreeMap<String, i64>,
    /// The answers given, by (client, request): a copy is answered again.
    answered: BTreeMap<(NodeId, u64), Option<i64>>,
    /// The next value `INCR` returns.
    next_token: u64,
    /// The pending expire-cycle timer, while a key exists.
    cycle: Option<TimerId>,
    /// A key lost in a crash without persistence, reported on restart.
    lost: Option<Key>,
    /// The grant the key stands for, journaled.
    grants: Grants,
}

impl RedisLock {
    /// A node with these settings and an empty keyspace.
    pub fn new(config: RedisConfig) -> Self {
        RedisLock {
            next_token: config.first_token,
            key: None,
            values: BTreeMap::new(),
            answered: BTreeMap::new(),
            cycle: None,
            lost: None,
            grants: Grants::new(),
            config,
        }
    }

    /// Deletes the key if its wall-clock deadline has passed, and says so.
    fn expire_if_due(&mut self, ctx: &mut Context<'_, Msg>) {
        let Some(key) = &self.key else { return };
        if ctx.wall_ns() < key.deadline_wall_ns {
            return;
        }
        let key = self.key.take().expect("checked above");
        self.grants.expire(ctx, key.client, key.lease);
    }

    /// Keeps the expire cycle running exactly while a key exists.
    fn arm_cycle(&mut self, ctx: &mut Context<'_, Msg>) {
        match (&self.key, self.cycle) {
            (Some(_), None) => self.cycle = Some(ctx.set_timer(EXPIRE_CYCLE, 0)),
            (None, Some(timer)) => {
                ctx.cancel_timer(timer);
                self.cycle = None;
            }
            _ => {}
        }
    }

    /// `SET lock <req> NX PX ttl`, then `INCR counter` if it succeeded.
    fn acquire(&mut self, ctx: &mut Context<'_, Msg>, client: NodeId, req: u64) {
        if self.key.is_some() {
            ctx.send(client, Msg::Denied { req });
            return;
        }
        let ttl = self.config.ttl;
        let ttl_ns = i64::try_from(ttl.as_nanos()).unwrap_or(i64::MAX);
        self.key = Some(Key {
            client,
            lease: req,
            deadline_wall_ns: ctx.wall_ns().saturating_add(ttl_ns),
        });
        let token = self.config.tokens.then(|| {
            self.next_token += 1;
            self.next_token - 1
        });
        self.grants.grant(ctx, client, req, req, token, ttl);
    }

    /// The compare-and-delete script: `DEL` only if the key still holds the
    /// releasing client's value (or, with `release = "del"`, a plain `DEL`).
    fn release(&mut self, ctx: &mut Context<'_, Msg>, client: NodeId, lease: u64) {
        let plain_del = self.config.release == Release::Del;
        self.key
            .take_if(|key| plain_del || (key.client == client && key.lease == lease));
        self.grants.release(ctx, client, lease).send(ctx);
    }
}

impl RedisLock {
    /// The compare-and-`PEXPIRE` script: extend the key by `ttl` from now
    /// only if it still holds the renewing client's value.
    fn renew(&mut self, ctx: &mut Context<'_, Msg>, client: NodeId, lease: u64, req: u64) {
        let ttl = self.config.ttl;
        let ttl_ns = i64::try_from(ttl.as_nanos()).unwrap_or(i64::MAX);
        let deadline_wall_ns = ctx.wall_ns().saturating_add(ttl_ns);
        let ok = match &mut self.key {
            Some(key) if key.client == client && key.lease == lease => {
                key.deadline_wall_ns = deadline_wall_ns;
                true
            }
            _ => false,
        };
        self.grants
            .renew(ctx, client, lease, req, ok.then_some(ttl));
    }
}

impl RedisLock {
    /// A command on the node's other keys.
    fn on_call(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, call: &RedisCall) {
        let req = match *call {
            RedisCall::IncrBy { req, .. }
            | RedisCall::Get { req, .. }
            | RedisCall::SetIfToken { req, .. } => req,
            RedisCall::Reply { .. } => return,
        };
        let value = match self.answered.get(&(from, req)) {
            Some(&value) => value,
            None => {
                let value = match call {
                    RedisCall::IncrBy { key, by, .. } => {
                        let n = self.values.entry(key.clone()).or_insert(0);
                        *n = n.saturating_add(*by);
                        Some(*n)
                    }
                    RedisCall::Get { key, .. } => self.values.get(key).copied(),
                    RedisCall::SetIfToken {
                        key, value, token, ..
                    } => {
                        let token_key = format!("{key}:token");
                        let token = i64::try_from(*token).unwrap_or(i64::MAX);
                        let stored = self.values.get(&token_key).copied();
                        if stored.is_some_and(|stored| stored > token) {
                            Some(0)
                        } else {
                            self.values.insert(key.clone(), *value);
                            self.values.insert(token_key, token);
                            Some(1)
                        }
                    }
                    RedisCall::Reply { .. } => unreachable!("answers are not run"),
                };
                self.answered.insert((from, req), value);
                value
            }
        };
        ctx.send(from, Msg::design(RedisCall::Reply { req, value }));
    }
}

impl Actor<Msg> for RedisLock {
    fn on_start(&mut self, ctx: &mut Context<'_, Msg>) {
        if let Some(key) = self.lost.take() {
            self.grants.expire_on_restart(ctx, key.client, key.lease);
        }
        // A durable key may have run out while the node was down.
        self.expire_if_due(ctx);
        self.arm_cycle(ctx);
    }

    fn on_message(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, msg: Msg) {
        // Lazy expiry: every command on the key first checks its deadline.
        self.expire_if_due(ctx);
        match msg {
            Msg::Acquire { req } => self.acquire(ctx, from, req),
            Msg::Release { lease } => self.release(ctx, from, lease),
            Msg::Renew { lease, req } => self.renew(ctx, from, lease, req),
            Msg::Design(ref call) => {
                if let Some(call) = call.downcast_ref::<RedisCall>() {
                    self.on_call(ctx, from, call);
                }
            }
            _ => {}
        }
        self.arm_cycle(ctx);
    }

    fn on_timer(&mut self, ctx: &mut Context<'_, Msg>, id: TimerId, _tag: u64) {
        if self.cycle != Some(id) {
            return;
        }
        self.cycle = None;
        self.expire_if_due(ctx);
        self.arm_cycle(ctx);
    }

    fn on_crash(&mut self) {
        self.cycle = None;
        self.answered.clear();
        if !self.config.durable {
            self.values.clear();
            // No persistence: the keyspace restarts empty.
            self.lost = self.key.take();
            self.next_token = self.config.first_token;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim::testing::Harness;

    const CLIENT1: NodeId = 1;
    const CLIENT2: NodeId = 2;
    const S: i64 = 1_000_000_000;

    fn harness() -> Harness {
        Harness::new(&["lock", "client1", "client2"], 0)
    }

    fn redis(tokens: bool, durable: bool) -> RedisLock {
        RedisLock::new(RedisConfig {
            tokens,
            durable,
            ..RedisConfig::default()
        })
    }

    fn granted_token(step: &sim::testing::Step<Msg>) -> Option<Option<u64>> {
        match step.sends.first() {
            Some((_, Msg::Granted { token, .. })) => Some(*token),
            _ => None,
        }
    }

    #[test]
    fn set_nx_grants_once_and_stores_the_request_id_as_the_lease() {
        let (mut h, mut r) = (harness(), redis(false, true));
        let s = h.message(&mut r, CLIENT1, Msg::Acquire { req: 7 });
        assert_eq!(
            s.sends,
            vec![(
                CLIENT1,
                Msg::Granted {
                    req: 7,
                    lease: 7,
                    token: None,
                    ttl: Duration::from_secs(10)
                }
            )]
        );
        assert!(s.event("granted").is_some());
        assert_eq!(s.timers[0].1, EXPIRE_CYCLE);
        let s = h.message(&mut r, CLIENT2, Msg::Acquire { req: 1 });
        assert_eq!(s.sends, vec![(CLIENT2, Msg::Denied { req: 1 })]);
    }

    #[test]
    fn the_key_expires_on_the_wall_clock_when_the_cycle_notices() {
        let (mut h, mut r) = (harness(), redis(false, true));
        let s = h.message(&mut r, CLIENT1, Msg::Acquire { req: 1 });
        let (cycle, _, tag) = s.timers[0];
        h.advance(EXPIRE_CYCLE);
        let s = h.timer(&mut r, cycle, tag);
        assert!(s.event("expired").is_none());
        let (cycle, _, tag) = s.timers[0];
        // The wall clock jumps 20 s forward: the key is past its deadline
        // although the monotonic clock says 200 ms.
        h.wall_ns += 20 * S;
        h.mono_ns += EXPIRE_CYCLE.as_nanos() as i64;
        let s = h.timer(&mut r, cycle, tag);
        assert!(s.event("expired").is_some());
        assert!(s.timers.is_empty(), "no cycle without a key");
        let s = h.message(&mut r, CLIENT2, Msg::Acquire { req: 1 });
        assert_eq!(granted_token(&s), Some(None));
    }

    #[test]
    fn a_request_notices_an_expired_key_lazily() {
        let (mut h, mut r) = (harness(), redis(false, true));
        h.message(&mut r, CLIENT1, Msg::Acquire { req: 1 });
        h.wall_ns += 11 * S;
        let s = h.message(&mut r, CLIENT2, Msg::Acquire { req: 1 });
        assert_eq!(s.events[0].0, "expired");
        assert_eq!(s.events[1].0, "granted");
        assert_eq!(granted_token(&s), Some(None));
    }

    #[test]
    fn a_wall_clock_jumping_back_keeps_the_key_longer() {
        let (mut h, mut r) = (harness(), redis(false, true));
        h.message(&mut r, CLIENT1, Msg::Acquire { req: 1 });
        h.advance(Duration::from_secs(11));
        h.wall_ns -= 5 * S;
        let s = h.message(&mut r, CLIENT2, Msg::Acquire { req: 1 });
        assert_eq!(s.sends, vec![(CLIENT2, Msg::Denied { req: 1 })]);
    }

    #[test]
    fn only_the_holder_with_its_value_can_delete_the_key() {
        let (mut h, mut r) = (harness(), redis(false, true));
        h.message(&mut r, CLIENT1, Msg::Acquire { req: 2 });
        let s = h.message(&mut r, CLIENT2, Msg::Release { lease: 2 });
        assert!(s.event("released").is_none());
        let s = h.message(&mut r, CLIENT1, Msg::Release { lease: 1 });
        assert!(s.event("released").is_none());
        let s = h.message(&mut r, CLIENT1, Msg::Release { lease: 2 });
        assert!(s.event("released").is_some());
        assert_eq!(s.sends, vec![(CLIENT1, Msg::ReleaseAck { lease: 2 })]);
        assert_eq!(s.cancelled.len(), 1, "the cycle stops with the key");
    }

    #[test]
    fn a_plain_del_frees_anyones_key_and_the_next_acquire_is_granted() {
        let mut r = RedisLock::new(RedisConfig {
            release: Release::Del,
            ..RedisConfig::default()
        });
        let mut h = harness();
        h.message(&mut r, CLIENT1, Msg::Acquire { req: 2 });
        // client2's release of a lease it never held deletes client1's key.
        let s = h.message(&mut r, CLIENT2, Msg::Release { lease: 7 });
        assert!(s.event("released").is_none(), "the ledger: not client2's");
        let s = h.message(&mut r, CLIENT2, Msg::Acquire { req: 1 });
        assert!(s.event("granted").is_some());
    }

    #[test]
    fn a_renewal_moves_the_holders_deadline_and_nobody_elses() {
        let (mut h, mut r) = (harness(), redis(false, true));
        h.message(&mut r, CLIENT1, Msg::Acquire { req: 3 });
        h.wall_ns += 8 * S;
        let s = h.message(&mut r, CLIENT2, Msg::Renew { lease: 3, req: 1 });
        assert!(matches!(
            s.sends[0],
            (CLIENT2, Msg::RenewReply { ok: false, .. })
        ));
        let s = h.message(&mut r, CLIENT1, Msg::Renew { lease: 3, req: 1 });
        assert!(s.event("renewed").is_some());
        let reply = Msg::RenewReply {
            lease: 3,
            req: 1,
            ok: true,
            ttl: Duration::from_secs(10),
        };
        assert_eq!(s.sends, vec![(CLIENT1, reply)]);
        // 12 s after the grant, 4 s after the renewal: still held.
        h.wall_ns += 4 * S;
        let s = h.message(&mut r, CLIENT2, Msg::Acquire { req: 1 });
        assert_eq!(s.sends, vec![(CLIENT2, Msg::Denied { req: 1 })]);
        h.wall_ns += 6 * S;
        let s = h.message(&mut r, CLIENT1, Msg::Renew { lease: 3, req: 2 });
        assert_eq!(s.events[0].0, "expired");
        assert!(s.event("renewed").is_none(), "too late");
    }

    #[test]
    fn incr_tokens_increase_with_each_grant() {
        let (mut h, mut r) = (harness(), redis(true, true));
        let s = h.message(&mut r, CLIENT1, Msg::Acquire { req: 1 });
        assert_eq!(granted_token(&s), Some(Some(1)));
        h.message(&mut r, CLIENT1, Msg::Release { lease: 1 });
        let s = h.message(&mut r, CLIENT2, Msg::Acquire { req: 1 });
        assert_eq!(granted_token(&s), Some(Some(2)));
    }

    #[test]
    fn without_persistence_a_restart_forgets_the_key_and_the_counter() {
        let (mut h, mut r) = (harness(), redis(true, false));
        h.message(&mut r, CLIENT1, Msg::Acquire { req: 1 });
        r.on_crash();
        let s = h.start(&mut r);
        let expired = s.event("expired").expect("the lost key is reported");
        assert!(expired.contains(&("reason".into(), "restart".into())));
        let s = h.message(&mut r, CLIENT2, Msg::Acquire { req: 1 });
        assert_eq!(granted_token(&s), Some(Some(1)), "INCR starts over");
    }

    #[test]
    fn with_persistence_a_restart_keeps_the_key_and_its_deadline() {
        let (mut h, mut r) = (harness(), redis(true, true));
        h.message(&mut r, CLIENT1, Msg::Acquire { req: 1 });
        r.on_crash();
        h.advance(Duration::from_secs(1));
        let s = h.start(&mut r);
        assert!(s.event("expired").is_none());
        assert_eq!(s.timers.len(), 1, "the expire cycle runs again");
        let s = h.message(&mut r, CLIENT2, Msg::Acquire { req: 1 });
        assert_eq!(s.sends, vec![(CLIENT2, Msg::Denied { req: 1 })]);
        h.advance(Duration::from_secs(10));
        let s = h.message(&mut r, CLIENT2, Msg::Acquire { req: 2 });
        assert_eq!(granted_token(&s), Some(Some(2)));
    }
}
