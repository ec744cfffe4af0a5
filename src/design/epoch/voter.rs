//! One voter of `epoch`: the highest term it has seen and the leader it
//! backs, with that leader's lease on the voter's clock.

use sim::{Actor, Context, NodeId, TimerId};

use super::{EpochConfig, EpochMsg};
use crate::design::grants::Grants;
use crate::protocol::Msg;

/// The leader a voter backs.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Backed {
    client: NodeId,
    /// The vote request it answered, so that a second copy gets the same.
    req: u64,
    term: u64,
    /// The leader lease, on the voter's clock.
    timer: TimerId,
}

/// One voter: the highest term it has seen, and the leader it backs.
#[derive(Debug)]
pub struct Voter {
    config: EpochConfig,
    term: u64,
    backed: Option<Backed>,
    grants: Grants,
}

impl Voter {
    /// A voter with these settings, at term 0.
    pub fn new(config: EpochConfig) -> Self {
        Voter {
            term: 0,
            backed: None,
            grants: Grants::with_stonith(config.stonith).restarting_after(config.stonith_restart),
            config,
        }
    }

    /// The highest term this voter has seen.
    pub fn term(&self) -> u64 {
        self.term
    }

    fn vote(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, req: u64, term: u64) {
        let ttl = self.config.ttl;
        match &self.backed {
            // A second copy of the request it voted for: the same answer.
            Some(b) if b.client == from && b.req == req && b.term == term => {
                self.grants.repeat(ctx, from, req, term, ttl);
            }
            // Its leader's lease is live, or the term is not new: no vote.
            Some(_) => self.refuse(ctx, from, req),
            None if term <= self.term => self.refuse(ctx, from, req),
            None => {
                self.term = term;
                let timer = ctx.set_timer(ttl, term);
                self.backed = Some(Backed {
                    client: from,
                    req,
                    term,
                    timer,
                });
                let token = self.config.tokens.then_some(term);
                self.grants.grant(ctx, from, req, term, token, ttl);
            }
        }
    }

    fn refuse(&self, ctx: &mut Context<'_, Msg>, to: NodeId, req: u64) {
        let term = self.term;
        ctx.send(to, Msg::design(EpochMsg::Refused { req, term }));
    }
}

impl Actor<Msg> for Voter {
    fn on_start(&mut self, ctx: &mut Context<'_, Msg>) {
        // Votes lost in a crash are journaled as ended once the voter is back.
        self.grants.restarted(ctx);
    }

    fn on_message(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, msg: Msg) {
        match msg {
            Msg::Design(_) => {
                if let Some(&EpochMsg::Vote { req, term }) = msg.as_design::<EpochMsg>() {
                    self.vote(ctx, from, req, term);
                }
            }
            // A heartbeat: the leader lease starts again, if it is still
            // this leader's.
            Msg::Renew { lease, req } => {
                let ttl = self.config.ttl;
                let ok = match &mut self.backed {
                    Some(b) if b.client == from && b.term == lease => {
                        ctx.cancel_timer(b.timer);
                        b.timer = ctx.set_timer(ttl, lease);
                        true
                    }
                    _ => false,
                };
                self.grants.renew(ctx, from, lease, req, ok.then_some(ttl));
            }
            // Stepping down, or a lost election's vote given back.
            Msg::Release { lease } => {
                if let Some(b) = self.backed.take_if(|b| b.client == from && b.term == lease) {
                    ctx.cancel_timer(b.timer);
                }
                self.grants.release(ctx, from, lease).send(ctx);
            }
            _ => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Context<'_, Msg>, id: TimerId, term: u64) {
        if let Some(b) = self.backed.take_if(|b| b.timer == id) {
            self.grants.expire(ctx, b.client, term);
        }
    }

    fn on_crash(&mut self) {
        // The leader lease lives in memory; the term on disk if durable.
        self.backed = None;
        self.grants.forget_all();
        if !self.config.durable {
            self.term = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::msgs::{granted, refused, vote, TTL};
    use super::*;
    use sim::testing::Harness;

    const CLIENT1: NodeId = 1;
    const CLIENT2: NodeId = 2;

    fn voter_harness() -> Harness {
        Harness::new(&["lock1", "client1", "client2"], 0)
    }

    #[test]
    fn a_voter_votes_once_per_term_and_only_above_its_term() {
        let (mut h, mut v) = (voter_harness(), Voter::new(EpochConfig::default()));
        let s = h.message(&mut v, CLIENT1, vote(1, 1));
        assert_eq!(s.sends, vec![(CLIENT1, granted(1, 1))]);
        assert_eq!(s.timers[0].1, TTL);
        // A live leader has its vote: a higher term is refused, with its own.
        let s = h.message(&mut v, CLIENT2, vote(1, 2));
        assert_eq!(s.sends, vec![(CLIENT2, refused(1, 1))]);
        assert_eq!(v.term(), 1);
        // The leader lease runs out on the voter's clock.
        let s = h.timer(&mut v, TimerId(0), 1);
        assert!(s.event("expired").is_some());
        // A term not above its own is refused, even with no leader.
        let s = h.message(&mut v, CLIENT2, vote(2, 1));
        assert_eq!(s.sends, vec![(CLIENT2, refused(2, 1))]);
        let s = h.message(&mut v, CLIENT2, vote(3, 2));
        assert_eq!(s.sends, vec![(CLIENT2, granted(3, 2))]);
        assert_eq!(v.term(), 2);
        // A second copy of the request it voted for: the same vote, no event.
        let s = h.message(&mut v, CLIENT2, vote(3, 2));
        assert_eq!(s.sends, vec![(CLIENT2, granted(3, 2))]);
        assert!(s.events.is_empty());
    }

    #[test]
    fn heartbeats_keep_the_lease_and_a_deposed_leaders_are_refused() {
        let (mut h, mut v) = (voter_harness(), Voter::new(EpochConfig::default()));
        h.message(&mut v, CLIENT1, vote(1, 1));
        let s = h.message(&mut v, CLIENT1, Msg::Renew { lease: 1, req: 1 });
        assert!(s.event("renewed").is_some());
        assert_eq!(s.cancelled, vec![TimerId(0)]);
        assert!(h.timer(&mut v, TimerId(0), 1).events.is_empty());
        h.timer(&mut v, TimerId(1), 1);
        h.message(&mut v, CLIENT2, vote(1, 2));
        // client1 still thinks it leads term 1: its heartbeat is refused.
        let s = h.message(&mut v, CLIENT1, Msg::Renew { lease: 1, req: 2 });
        assert!(s.event("renewed").is_none());
        assert!(matches!(
            s.sends[0],
            (CLIENT1, Msg::RenewReply { ok: false, .. })
        ));
    }

    #[test]
    fn a_voter_that_forgets_its_term_can_vote_twice_in_one() {
        let config = EpochConfig {
            durable: false,
            ..EpochConfig::default()
        };
        let (mut h, mut v) = (voter_harness(), Voter::new(config));
        h.message(&mut v, CLIENT1, vote(1, 3));
        v.on_crash();
        let s = h.message(&mut v, CLIENT2, vote(1, 3));
        assert_eq!(s.sends, vec![(CLIENT2, granted(1, 3))]);
        // Durable (the default), the term survives and the vote is refused.
        let (mut h, mut v) = (voter_harness(), Voter::new(EpochConfig::default()));
        h.message(&mut v, CLIENT1, vote(1, 3));
        v.on_crash();
        let s = h.message(&mut v, CLIENT2, vote(1, 3));
        assert_eq!(s.sends, vec![(CLIENT2, refused(1, 3))]);
    }

    #[test]
    fn with_stonith_a_voter_powers_off_the_leader_it_stopped_backing() {
        let config = EpochConfig {
            stonith: true,
            ..EpochConfig::default()
        };
        let (mut h, mut v) = (voter_harness(), Voter::new(config));
        h.message(&mut v, CLIENT1, vote(1, 1));
        h.timer(&mut v, TimerId(0), 1);
        let s = h.message(&mut v, CLIENT2, vote(1, 2));
        assert_eq!(s.power_offs, vec![(CLIENT1, None)]);
        assert!(s.event("granted").is_some());
    }
}
