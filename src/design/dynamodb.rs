//! `dynamodb`: the DynamoDB lock client (`awslabs/amazon-dynamodb-lock-client`,
//! `AmazonDynamoDBLockClient`; Go's `cirello.io/dynamolock` and Python's
//! `python-dynamodb-lock` follow it), one lock item in one table.
//!
//! The server is the **table**, and it keeps no clock: the lock item holds
//! its owner, its `leaseDuration` and a `recordVersionNumber` (RVN), a
//! random UUID that the holder's every heartbeat replaces. Expiry is the
//! acquirer's business. A client that reads the item held by someone else
//! notes the RVN and the time **on its own monotonic clock**
//! (`System.nanoTime`), polls again every refresh period (the client's
//! `retry`), starts its wait over whenever the RVN has changed, and once
//! the same RVN has stood for longer than `leaseDuration` it takes the lock
//! over with a put conditional on that RVN (`acquireLock`). The library's
//! README calls this safe against clock skew, as no absolute time is
//! stored; it is not safe against a holder that stops heartbeating and
//! goes on working (a pause longer than the lease), nor against an
//! acquirer whose clock runs fast.
//!
//! Heartbeats are the client's renewals ([`Msg::Renew`], with the `renew`
//! client key): an update conditional on the holder's RVN that writes a new
//! one; refused once someone else has taken the lock over (the library's
//! "Someone else acquired the lock"). A release deletes the item if it is
//! still the releaser's (`deleteLockOnRelease`, the default).
//!
//! The RVN is a UUID: it has no order, so a storage cannot tell an older
//! holder's write from a newer one by it. With `tokens` the item also keeps
//! a counter that each acquisition increments in the same conditional write
//! and hands out as a fencing token: what an application adds to fence its
//! writes (the library has none). The item is durable, as DynamoDB's are:
//! a crash of the table forgets nothing.
//!
//! The table journals a taken-over grant as `expired` with reason
//! `taken_over`, just before the new grant: it was the acquirer's clock, not
//! the table's, that measured the lease, so the table's clock promises
//! nothing about when it ends.

use std::time::Duration;

use sim::{Actor, Context, NodeId};

use crate::design::config::key;
use crate::design::grants::Grants;
use crate::design::lock_client::{LockClient, LockContext, LockEvent, NoTimer, SingleServer};
use crate::protocol::{Msg, Payload};

crate::lock_design! {
    pub struct DynamoDb as DYNAMODB = "dynamodb",
        "DynamoDB lock client: a lock item with a record version number; an acquirer takes it \
         over when the number has not changed for the lease duration on its own clock";
    #[derive(Eq)]
    pub struct DynamoDbConfig {
        ttl: Duration = key::ttl(),
            "the item's leaseDuration: how long an acquirer waits, on its own clock, for the \
             record version number to change before it takes the lock over";
        tokens: bool = key::tokens(false),
            "the item keeps a counter each acquisition increments, handed out as a fencing \
             token (the record version number is a UUID, with no order)";
    }
    server(config, _index) => Box::new(LockTable::new(config.clone()));
    client(_config, lock_nodes) => Box::new(DynamoClient::new(lock_nodes[0].clone()));
}

/// The table's side of the lock client's calls (the data plane's
/// `GetItem` and conditional `PutItem`); heartbeats and releases travel as
/// [`Msg::Renew`] and [`Msg::Release`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DynamoMsg {
    /// Client → table: a consistent read of the lock item.
    GetItem {
        /// Request id (the acquire's), echoed in the answer.
        req: u64,
    },
    /// Table → client: the lock item as it is.
    Item {
        /// The request answered.
        req: u64,
        /// The held item's record version number; `None` when there is no
        /// item (free).
        rvn: Option<u64>,
        /// The item's leaseDuration.
        lease_duration: Duration,
    },
    /// Client → table: write the item as ours, if there is none
    /// (`attribute_not_exists`) or, with `rvn`, if its record version
    /// number is still that one (a takeover). Answered with
    /// [`Msg::Granted`] or, when the condition fails, [`Msg::Denied`].
    Put {
        /// The acquire's request id.
        req: u64,
        /// The record version number the condition requires.
        rvn: Option<u64>,
    },
}

impl Payload for DynamoMsg {
    fn summary(&self) -> String {
        match *self {
            DynamoMsg::GetItem { req } => format!("get item req={req}"),
            DynamoMsg::Item { rvn: None, .. } => "no item".to_string(),
            DynamoMsg::Item { rvn: Some(rvn), .. } => format!("item rvn={}", short(rvn)),
            DynamoMsg::Put { req, rvn: None } => format!("put req={req} if absent"),
            DynamoMsg::Put {
                req,
                rvn: Some(rvn),
            } => {
                format!("put req={req} if rvn={}", short(rvn))
            }
        }
    }
}

/// A record version number as the journal shows it: its first 8 hex
/// digits, as one would quote a UUID.
fn short(rvn: u64) -> String {
    format!("{:08x}", rvn >> 32)
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Holder {
    client: NodeId,
    /// The put that wrote it, so that a second copy gets the same grant.
    req: u64,
    lease: u64,
    rvn: u64,
}

/// The `dynamodb` server: the lock table with its one item.
#[derive(Debug)]
pub struct LockTable {
    config: DynamoDbConfig,
    holder: Option<Holder>,
    grants: Grants,
    /// Acquisitions so far: the lease ids, and the tokens with `tokens`.
    acquisitions: u64,
}

impl LockTable {
    /// A table with these settings.
    pub fn new(config: DynamoDbConfig) -> Self {
        LockTable {
            config,
            holder: None,
            grants: Grants::new(),
            acquisitions: 0,
        }
    }

    fn put(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, req: u64, rvn: Option<u64>) {
        let ttl = self.config.ttl;
        match &self.holder {
            // A second copy of the put that wrote the item: the same grant.
            Some(h) if h.client == from && h.req == req => {
                let lease = h.lease;
                self.grants.repeat(ctx, from, req, lease, ttl);
                return;
            }
            // The condition holds: no item, or the RVN the taker saw.
            None if rvn.is_none() => {}
            Some(h) if rvn == Some(h.rvn) => {
                self.grants
                    .expire_because(ctx, h.client, h.lease, "taken_over");
            }
            _ => return ctx.send(from, Msg::Denied { req }),
        }
        self.acquisitions += 1;
        let lease = self.acquisitions;
        let token = self.config.tokens.then_some(lease);
        self.holder = Some(Holder {
            client: from,
            req,
            lease,
            rvn: ctx.rng().next_u64(),
        });
        self.grants.grant(ctx, from, req, lease, token, ttl);
    }
}

impl Actor<Msg> for LockTable {
    fn on_message(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, msg: Msg) {
        match msg {
            Msg::Design(m) => match m.downcast_ref::<DynamoMsg>() {
                Some(&DynamoMsg::GetItem { req }) => {
                    let item = DynamoMsg::Item {
                        req,
                        rvn: self.holder.as_ref().map(|h| h.rvn),
                        lease_duration: self.config.ttl,
                    };
                    ctx.send(from, Msg::design(item));
                }
                Some(&DynamoMsg::Put { req, rvn }) => self.put(ctx, from, req, rvn),
                _ => {}
            },
            Msg::Renew { lease, req } => {
                let ok = match &mut self.holder {
                    Some(h) if h.client == from && h.lease == lease => {
                        h.rvn = ctx.rng().next_u64();
                        true
                    }
                    _ => false,
                };
                let ttl = self.config.ttl;
                self.grants.renew(ctx, from, lease, req, ok.then_some(ttl));
            }
            Msg::Release { lease } => {
                self.holder
                    .take_if(|h| h.client == from && h.lease == lease);
                self.grants.release(ctx, from, lease).send(ctx);
            }
            _ => {}
        }
    }

    // The item is durable: a crash forgets nothing.
}

/// The lock client's `acquireLock` and heartbeats, against the table: a
/// [`SingleServer`] whose acquire is a read and then, if the item is free
/// or its holder's RVN has stood a lease, a conditional put; the put's
/// answer, the heartbeats (renewals) and the release are `SingleServer`'s.
#[derive(Debug)]
pub struct DynamoClient {
    single: SingleServer,
    /// Whether the awaited acquire's put is out (else its read).
    putting: bool,
    /// The held item's RVN as first read, and when, on our clock: the
    /// library's `lockTryingToBeAcquired` and its lookup time.
    observed: Option<(u64, Duration)>,
}

impl DynamoClient {
    /// Talks to the lock table on the node called `table`.
    pub fn new(table: impl Into<String>) -> Self {
        DynamoClient {
            single: SingleServer::new(table),
            putting: false,
            observed: None,
        }
    }

    /// The item as read for acquire `req`: put at once if there is none;
    /// take it over if its RVN has stood longer than its lease on our
    /// clock; else note it and be denied (the workload polls again).
    fn read(
        &mut self,
        ctx: &mut Context<'_, Msg>,
        req: u64,
        rvn: Option<u64>,
        lease_duration: Duration,
    ) -> LockEvent {
        let now = ctx.now();
        let put = match (rvn, self.observed) {
            (None, _) => Some(None),
            (Some(rvn), Some((seen, at))) if seen == rvn => {
                (now.saturating_sub(at) > lease_duration).then_some(Some(rvn))
            }
            (Some(rvn), _) => {
                self.observed = Some((rvn, now));
                None
            }
        };
        match put {
            Some(rvn) => {
                self.putting = true;
                let table = self.single.lock(ctx);
                ctx.send(table, Msg::design(DynamoMsg::Put { req, rvn }));
                LockEvent::Nothing
            }
            // Held: this acquire is over, with no answer to come.
            None => self.single.lost(),
        }
    }
}

impl LockClient for DynamoClient {
    type Timer = NoTimer;

    fn acquire(&mut self, ctx: &mut LockContext<'_, '_, NoTimer>) {
        self.putting = false;
        self.single
            .acquire_with(ctx, |req| Msg::design(DynamoMsg::GetItem { req }));
    }

    fn release(&mut self, ctx: &mut LockContext<'_, '_, NoTimer>) {
        self.single.release(ctx);
    }

    fn on_message(
        &mut self,
        ctx: &mut LockContext<'_, '_, NoTimer>,
        from: NodeId,
        msg: &Msg,
    ) -> LockEvent {
        match msg.as_design::<DynamoMsg>() {
            Some(&DynamoMsg::Item {
                req,
                rvn,
                lease_duration,
            }) if self.single.is_waiting_for(req) && !self.putting => {
                self.read(ctx, req, rvn, lease_duration)
            }
            Some(_) => LockEvent::Nothing,
            // A put's answer (a grant, or a denial: someone else wrote the
            // item first), a heartbeat's, or a stray.
            None => {
                let event = self.single.on_message(&mut ctx.untimed(), from, msg);
                if matches!(event, LockEvent::Acquired(_)) {
                    self.observed = None;
                }
                event
            }
        }
    }

    fn renew(&mut self, ctx: &mut LockContext<'_, '_, NoTimer>) -> bool {
        self.single.renew(ctx)
    }

    fn on_crash(&mut self) {
        self.single.on_crash();
        self.putting = false;
        self.observed = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim::testing::Harness;
    use sim::TimerId;

    const CLIENT1: NodeId = 1;
    const CLIENT2: NodeId = 2;
    const TTL: Duration = Duration::from_secs(20);

    fn table(tokens: bool) -> (Harness, LockTable) {
        let h = Harness::new(&["lock", "client1", "client2"], 0);
        let config = DynamoDbConfig {
            tokens,
            ..DynamoDbConfig::default()
        };
        (h, LockTable::new(config))
    }

    fn send(h: &mut Harness, t: &mut LockTable, from: NodeId, m: DynamoMsg) -> Msg {
        let s = h.message(t, from, Msg::design(m));
        s.sends[0].1.clone()
    }

    fn rvn_of(msg: &Msg) -> Option<u64> {
        match msg.as_design::<DynamoMsg>() {
            Some(&DynamoMsg::Item { rvn, .. }) => rvn,
            other => panic!("not an item: {other:?}"),
        }
    }

    #[test]
    fn a_put_if_absent_wins_once_and_a_heartbeat_changes_the_rvn() {
        let (mut h, mut t) = table(true);
        let got = send(
            &mut h,
            &mut t,
            CLIENT1,
            DynamoMsg::Put { req: 1, rvn: None },
        );
        assert!(matches!(
            got,
            Msg::Granted {
                lease: 1,
                token: Some(1),
                ..
            }
        ));
        let got = send(
            &mut h,
            &mut t,
            CLIENT2,
            DynamoMsg::Put { req: 1, rvn: None },
        );
        assert_eq!(got, Msg::Denied { req: 1 });
        let before = rvn_of(&send(
            &mut h,
            &mut t,
            CLIENT2,
            DynamoMsg::GetItem { req: 2 },
        ));
        let s = h.message(&mut t, CLIENT1, Msg::Renew { lease: 1, req: 1 });
        assert!(s.event("renewed").is_some());
        let after = rvn_of(&send(
            &mut h,
            &mut t,
            CLIENT2,
            DynamoMsg::GetItem { req: 3 },
        ));
        assert!(before.is_some() && after.is_some() && before != after);
    }

    #[test]
    fn a_takeover_on_the_current_rvn_ends_the_holders_grant_and_counts_on() {
        let (mut h, mut t) = table(true);
        send(
            &mut h,
            &mut t,
            CLIENT1,
            DynamoMsg::Put { req: 1, rvn: None },
        );
        let rvn = rvn_of(&send(
            &mut h,
            &mut t,
            CLIENT2,
            DynamoMsg::GetItem { req: 1 },
        ));
        // A stale RVN fails the condition.
        let stale = rvn.map(|r| r.wrapping_add(1));
        let got = send(
            &mut h,
            &mut t,
            CLIENT2,
            DynamoMsg::Put { req: 1, rvn: stale },
        );
        assert_eq!(got, Msg::Denied { req: 1 });
        let s = h.message(&mut t, CLIENT2, Msg::design(DynamoMsg::Put { req: 2, rvn }));
        let ended = s.event("expired").expect("the old grant ends");
        assert!(format!("{ended:?}").contains("taken_over"), "{ended:?}");
        assert!(matches!(
            s.sends[0].1,
            Msg::Granted {
                lease: 2,
                token: Some(2),
                ..
            }
        ));
        // The old holder's heartbeat and release change nothing.
        let s = h.message(&mut t, CLIENT1, Msg::Renew { lease: 1, req: 1 });
        assert!(matches!(s.sends[0].1, Msg::RenewReply { ok: false, .. }));
        let s = h.message(&mut t, CLIENT1, Msg::Release { lease: 1 });
        assert!(s.event("released").is_none());
        let got = send(
            &mut h,
            &mut t,
            CLIENT1,
            DynamoMsg::Put { req: 2, rvn: None },
        );
        assert_eq!(got, Msg::Denied { req: 2 });
    }

    #[test]
    fn without_tokens_grants_carry_none() {
        let (mut h, mut t) = table(false);
        let got = send(
            &mut h,
            &mut t,
            CLIENT1,
            DynamoMsg::Put { req: 1, rvn: None },
        );
        assert!(matches!(got, Msg::Granted { token: None, .. }));
    }

    fn item(req: u64, rvn: Option<u64>) -> Msg {
        Msg::design(DynamoMsg::Item {
            req,
            rvn,
            lease_duration: TTL,
        })
    }

    /// Hosts the client's protocol: a timer acquires.
    struct Host(DynamoClient, Vec<LockEvent>);

    impl Actor<Msg> for Host {
        fn on_message(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, msg: Msg) {
            let event = self.0.on_message(&mut LockContext::new(ctx), from, &msg);
            self.1.push(event);
        }
        fn on_timer(&mut self, ctx: &mut Context<'_, Msg>, _: TimerId, _: u64) {
            self.0.acquire(&mut LockContext::new(ctx));
        }
    }

    #[test]
    fn the_acquirer_takes_over_only_after_the_same_rvn_stood_a_lease_on_its_clock() {
        const LOCK: NodeId = 1;
        let mut h = Harness::new(&["client2", "lock"], 0);
        let mut host = Host(DynamoClient::new("lock"), Vec::new());
        // One poll: acquire (a read), then the item's answer.
        let poll = |h: &mut Harness, host: &mut Host, rvn: u64| {
            let read = h.timer(host, TimerId(0), 0);
            let req = match read.sends[0].1.as_design::<DynamoMsg>() {
                Some(&DynamoMsg::GetItem { req }) => req,
                other => panic!("not a read: {other:?}"),
            };
            let s = h.message(host, LOCK, item(req, Some(rvn)));
            (host.1.pop().unwrap(), s.sends, req)
        };
        assert_eq!(poll(&mut h, &mut host, 7).0, LockEvent::Denied);
        h.advance(TTL);
        // A heartbeat changed the RVN: the wait starts over.
        assert_eq!(poll(&mut h, &mut host, 8).0, LockEvent::Denied);
        h.advance(TTL);
        assert_eq!(
            poll(&mut h, &mut host, 8).0,
            LockEvent::Denied,
            "not longer yet"
        );
        h.advance(Duration::from_millis(1));
        let (event, sends, req) = poll(&mut h, &mut host, 8);
        assert_eq!(event, LockEvent::Nothing);
        let put = DynamoMsg::Put { req, rvn: Some(8) };
        assert_eq!(sends, vec![(LOCK, Msg::design(put))]);
        let granted = Msg::Granted {
            req,
            lease: 2,
            token: None,
            ttl: TTL,
        };
        h.message(&mut host, LOCK, granted);
        assert!(matches!(host.1.last(), Some(LockEvent::Acquired(_))));
    }
}
