//! `lease`: a single lock server handing out TTL leases, the lock service of
//! DDIA's figure 9-6 (Kleppmann & Riccomini, *Designing Data-Intensive
//! Applications*, ch. 9).
//!
//! A lease expires after `ttl` on the **lock's** monotonic clock, whatever the
//! holder is doing; with `tokens`, each grant carries a fencing token from a
//! counter starting at `first_token`. With `durable = false` the counter lives
//! in memory only and starts again at `first_token` after a crash, so tokens
//! go back: the oracle reports that as a token regression. The holder may
//! extend its lease with [`Msg::Renew`] (keep-alive): the lock restarts the
//! TTL and answers [`Msg::RenewReply`]; a lease that has already ended is
//! refused, which tells the client it lost the lock. With
//! `renew_rearms = false` a renewal moves the end it promises but leaves the
//! first expiry timer armed, a bug a fenced storage hides: the lock ends the
//! lease at its first end, before the end the renewal promised (an early
//! expiry), and grants it to the next client while the holder still believes
//! in it.
//!
//! With `stonith = true` the lock powers off a holder whose lease ran out
//! before it grants the lock to anyone else (Pacemaker's fencing, a cloud
//! API's instance stop; see [`Grants::with_stonith`]): a paused holder never
//! wakes up to write, but a write it sent before it died is still in the
//! network.

use std::time::Duration;

use sim::{Actor, Context, NodeId, TimerId};

use crate::design::config::key;
use crate::design::grants::Grants;
use crate::design::lock_client::SingleServer;
use crate::protocol::Msg;

crate::lock_design! {
    pub struct Lease as LEASE = "lease",
        "single server TTL lease, optionally handing out fencing tokens";
    #[derive(Eq)]
    pub struct LeaseConfig {
        ttl: Duration = key::ttl(), "how long a grant lasts on the lock's clock";
        tokens: bool = key::tokens(true), "hand out fencing tokens with each grant";
        first_token: u64 = key::first_token(),
            "the token of the first grant (tokens stay within a signed 64-bit integer)";
        durable: bool = key::durable(), "does the token counter survive a crash";
        stonith: bool = key::STONITH;
        stonith_restart: Duration = key::STONITH_RESTART;
        renew_rearms: bool = key::flag(true),
            "a renewal re-arms the expiry timer; false leaves the first one armed, \
             so the lease ends before the end the renewal promised (a bug)";
    }
    server(config, _index) => Box::new(LeaseLock::new(config.clone()));
    client(_config, lock_nodes) => Box::new(SingleServer::new(lock_nodes[0].clone()));
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Holder {
    client: NodeId,
    /// The request it answered, so that a second copy gets the same grant.
    req: u64,
    lease: u64,
    timer: TimerId,
}

/// The `lease` lock service.
#[derive(Debug)]
pub struct LeaseLock {
    config: LeaseConfig,
    holder: Option<Holder>,
    grants: Grants,
    next_token: u64,
    next_lease: u64,
}

impl LeaseLock {
    /// A lock service with these settings.
    pub fn new(config: LeaseConfig) -> Self {
        LeaseLock {
            next_token: config.first_token,
            next_lease: 1,
            holder: None,
            grants: Grants::with_stonith(config.stonith).restarting_after(config.stonith_restart),
            config,
        }
    }

    fn grant(&mut self, ctx: &mut Context<'_, Msg>, client: NodeId, req: u64) {
        let lease = self.next_lease;
        self.next_lease += 1;
        let token = self.config.tokens.then(|| {
            self.next_token += 1;
            self.next_token - 1
        });
        let timer = ctx.set_timer(self.config.ttl, lease);
        self.holder = Some(Holder {
            client,
            req,
            lease,
            timer,
        });
        self.grants
            .grant(ctx, client, req, lease, token, self.config.ttl);
    }
}

impl Actor<Msg> for LeaseLock {
    fn on_start(&mut self, ctx: &mut Context<'_, Msg>) {
        // Grants lost in a crash are journaled as ended once the server is back.
        self.grants.restarted(ctx);
    }

    fn on_message(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, msg: Msg) {
        match msg {
            Msg::Acquire { req } => match &self.holder {
                None => self.grant(ctx, from, req),
                // A second copy of the holder's request (a retransmission,
                // a duplicate): the same answer, not a new grant.
                Some(h) if h.client == from && h.req == req => {
                    let (lease, ttl) = (h.lease, self.config.ttl);
                    self.grants.repeat(ctx, from, req, lease, ttl);
                }
                Some(_) => ctx.send(from, Msg::Denied { req }),
            },
            Msg::Release { lease } => {
                if let Some(h) = self
                    .holder
                    .take_if(|h| h.client == from && h.lease == lease)
                {
                    ctx.cancel_timer(h.timer);
                }
                self.grants.release(ctx, from, lease).send(ctx);
            }
            Msg::Renew { lease, req } => {
                let ttl = self.config.ttl;
                let ok = match &mut self.holder {
                    Some(h) if h.client == from && h.lease == lease => {
                        if self.config.renew_rearms {
                            ctx.cancel_timer(h.timer);
                            h.timer = ctx.set_timer(ttl, lease);
                        }
                        true
                    }
                    _ => false,
                };
                self.grants.renew(ctx, from, lease, req, ok.then_some(ttl));
            }
            _ => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Context<'_, Msg>, id: TimerId, lease: u64) {
        if let Some(h) = self.holder.take_if(|h| h.timer == id) {
            self.grants.expire(ctx, h.client, lease);
        }
    }

    fn on_crash(&mut self) {
        // Leases live in memory: a crash forgets who held the lock.
        self.holder = None;
        self.grants.forget_all();
        if !self.config.durable {
            self.next_token = self.config.first_token;
            self.next_lease = 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim::testing::Harness;

    const CLIENT1: NodeId = 1;
    const CLIENT2: NodeId = 2;

    fn harness() -> Harness {
        Harness::new(&["lock", "client1", "client2"], 0)
    }

    fn lock() -> LeaseLock {
        LeaseLock::new(LeaseConfig {
            first_token: 33,
            ..LeaseConfig::default()
        })
    }

    #[test]
    fn grants_increasing_tokens_and_denies_while_held() {
        let (mut h, mut l) = (harness(), lock());
        let s = h.message(&mut l, CLIENT1, Msg::Acquire { req: 1 });
        assert!(matches!(
            s.sends[0],
            (
                CLIENT1,
                Msg::Granted {
                    token: Some(33),
                    ..
                }
            )
        ));
        assert_eq!(s.timers[0].1, Duration::from_secs(10));
        let s = h.message(&mut l, CLIENT2, Msg::Acquire { req: 1 });
        assert_eq!(s.sends, vec![(CLIENT2, Msg::Denied { req: 1 })]);
        let timer = TimerId(0);
        let s = h.timer(&mut l, timer, 1);
        assert_eq!(s.events[0].0, "expired");
        let s = h.message(&mut l, CLIENT2, Msg::Acquire { req: 2 });
        assert!(matches!(
            s.sends[0],
            (
                CLIENT2,
                Msg::Granted {
                    token: Some(34),
                    ..
                }
            )
        ));
    }

    #[test]
    fn a_stale_release_does_not_free_the_next_holders_lease() {
        let (mut h, mut l) = (harness(), lock());
        h.message(&mut l, CLIENT1, Msg::Acquire { req: 1 });
        h.timer(&mut l, TimerId(0), 1);
        h.message(&mut l, CLIENT2, Msg::Acquire { req: 1 });
        let s = h.message(&mut l, CLIENT1, Msg::Release { lease: 1 });
        assert!(s.event("released").is_none());
        let s = h.message(&mut l, CLIENT1, Msg::Acquire { req: 2 });
        assert!(matches!(s.sends[0], (CLIENT1, Msg::Denied { .. })));
    }

    #[test]
    fn a_second_copy_of_the_holders_request_gets_the_same_grant() {
        let (mut h, mut l) = (harness(), lock());
        let first = h.message(&mut l, CLIENT1, Msg::Acquire { req: 1 });
        let again = h.message(&mut l, CLIENT1, Msg::Acquire { req: 1 });
        assert_eq!(again.sends, first.sends);
        assert!(
            again.events.is_empty(),
            "no second grant: {:?}",
            again.events
        );
        // A new request of the holder's is a request like any other.
        let s = h.message(&mut l, CLIENT1, Msg::Acquire { req: 2 });
        assert_eq!(s.sends, vec![(CLIENT1, Msg::Denied { req: 2 })]);
    }

    #[test]
    fn a_volatile_counter_starts_over_after_a_crash() {
        let (mut h, mut l) = (
            harness(),
            LeaseLock::new(LeaseConfig {
                durable: false,
                ..LeaseConfig::default()
            }),
        );
        h.message(&mut l, CLIENT1, Msg::Acquire { req: 1 });
        l.on_crash();
        let s = h.message(&mut l, CLIENT2, Msg::Acquire { req: 1 });
        assert!(matches!(
            s.sends[0],
            (CLIENT2, Msg::Granted { token: Some(1), .. })
        ));
    }

    #[test]
    fn a_grant_lost_in_a_crash_is_journaled_as_expired_when_the_lock_is_back() {
        let (mut h, mut l) = (harness(), lock());
        h.message(&mut l, CLIENT1, Msg::Acquire { req: 1 });
        l.on_crash();
        let s = h.start(&mut l);
        assert_eq!(s.events.len(), 1);
        let fields = s.event("expired").expect("the lost grant is journaled");
        let field = |name: &str| {
            fields
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.to_string())
        };
        assert_eq!(field("client").as_deref(), Some("client1"));
        assert_eq!(field("lease").as_deref(), Some("1"));
        assert_eq!(field("reason").as_deref(), Some("restart"));
        // Once: a second start has nothing more to say.
        assert!(h.start(&mut l).events.is_empty());
    }

    #[test]
    fn without_renew_rearms_the_first_timer_ends_a_renewed_lease() {
        let mut l = LeaseLock::new(LeaseConfig {
            renew_rearms: false,
            ..LeaseConfig::default()
        });
        let mut h = harness();
        h.message(&mut l, CLIENT1, Msg::Acquire { req: 1 });
        let s = h.message(&mut l, CLIENT1, Msg::Renew { lease: 1, req: 1 });
        // The renewal promises a new end but moves no timer.
        assert!(s.event("renewed").is_some());
        assert!(s.cancelled.is_empty() && s.timers.is_empty());
        assert_eq!(h.timer(&mut l, TimerId(0), 1).events[0].0, "expired");
    }

    #[test]
    fn a_renewal_restarts_the_ttl_and_a_late_one_is_refused() {
        let (mut h, mut l) = (harness(), lock());
        h.message(&mut l, CLIENT1, Msg::Acquire { req: 1 });
        let s = h.message(&mut l, CLIENT1, Msg::Renew { lease: 1, req: 1 });
        assert!(s.event("renewed").is_some());
        assert_eq!(s.cancelled, vec![TimerId(0)]);
        assert_eq!(s.timers, vec![(TimerId(1), Duration::from_secs(10), 1)]);
        let reply = Msg::RenewReply {
            lease: 1,
            req: 1,
            ok: true,
            ttl: Duration::from_secs(10),
        };
        assert_eq!(s.sends, vec![(CLIENT1, reply)]);
        // The old timer no longer ends the lease; the new one does.
        assert!(h.timer(&mut l, TimerId(0), 1).events.is_empty());
        assert_eq!(h.timer(&mut l, TimerId(1), 1).events[0].0, "expired");
        let s = h.message(&mut l, CLIENT1, Msg::Renew { lease: 1, req: 2 });
        assert!(s.event("renewed").is_none());
        assert!(matches!(
            s.sends[0],
            (CLIENT1, Msg::RenewReply { ok: false, .. })
        ));
    }

    #[test]
    fn without_tokens_grants_carry_none() {
        let (mut h, mut l) = (
            harness(),
            LeaseLock::new(LeaseConfig {
                tokens: false,
                ..LeaseConfig::default()
            }),
        );
        let s = h.message(&mut l, CLIENT1, Msg::Acquire { req: 1 });
        assert!(matches!(
            s.sends[0],
            (CLIENT1, Msg::Granted { token: None, .. })
        ));
    }

    #[test]
    fn with_stonith_a_lapsed_holder_is_powered_off_before_the_next_grant() {
        let (mut h, mut l) = (
            harness(),
            LeaseLock::new(LeaseConfig {
                stonith: true,
                ..LeaseConfig::default()
            }),
        );
        h.message(&mut l, CLIENT1, Msg::Acquire { req: 1 });
        h.timer(&mut l, TimerId(0), 1);
        let s = h.message(&mut l, CLIENT2, Msg::Acquire { req: 1 });
        assert_eq!(s.power_offs, vec![(CLIENT1, None)]);
        assert!(s.event("granted").is_some());
        // Powered off once: the next grant after a release shoots nobody.
        let s = h.message(&mut l, CLIENT2, Msg::Release { lease: 2 });
        assert!(s.event("released").is_some());
        let s = h.message(&mut l, CLIENT1, Msg::Acquire { req: 2 });
        assert!(s.power_offs.is_empty());
    }

    #[test]
    fn with_stonith_a_released_lease_or_the_same_client_shoots_nobody() {
        let (mut h, mut l) = (
            harness(),
            LeaseLock::new(LeaseConfig {
                stonith: true,
                ..LeaseConfig::default()
            }),
        );
        h.message(&mut l, CLIENT1, Msg::Acquire { req: 1 });
        h.message(&mut l, CLIENT1, Msg::Release { lease: 1 });
        let s = h.message(&mut l, CLIENT2, Msg::Acquire { req: 1 });
        assert!(s.power_offs.is_empty());
        // client2's lease runs out and client2 itself asks again.
        h.timer(&mut l, TimerId(1), 2);
        let s = h.message(&mut l, CLIENT2, Msg::Acquire { req: 2 });
        assert!(s.power_offs.is_empty());
        assert!(s.event("granted").is_some());
    }

    #[test]
    fn with_stonith_restart_the_powered_off_holder_comes_back() {
        let config = LeaseConfig {
            stonith: true,
            stonith_restart: Duration::from_secs(30),
            ..LeaseConfig::default()
        };
        let (mut h, mut l) = (harness(), LeaseLock::new(config));
        h.message(&mut l, CLIENT1, Msg::Acquire { req: 1 });
        h.timer(&mut l, TimerId(0), 1);
        let s = h.message(&mut l, CLIENT2, Msg::Acquire { req: 1 });
        assert_eq!(s.power_offs, vec![(CLIENT1, Some(Duration::from_secs(30)))]);
    }
}
