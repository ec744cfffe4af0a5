//! The candidate and leader half of `epoch`: it campaigns for a term, counts
//! votes, believes its leader lease on its own clock and heartbeats.

use std::time::Duration;

use sim::{Context, NodeId};

use super::{EpochConfig, EpochMsg};
use crate::design::lock_client::{Grant, LockClient, LockContext, LockEvent};
use crate::design::node_named;
use crate::protocol::Msg;

/// The candidate's timers: an election's deadline, and the leader's next
/// heartbeat.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EpochTimer {
    /// Election `req` is decided with the votes it has.
    Election(u64),
    /// Heartbeat `n` is due; only the latest one scheduled beats.
    Beat(u64),
}

crate::design::lock_client::timer_tags!(EpochTimer { Election(u64), Beat(u64) });

/// One voter's answer to the current election.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Answer {
    Pending,
    Granted(Option<u64>),
    Refused,
}

/// An election in progress.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Election {
    req: u64,
    term: u64,
    /// Monotonic reading when the votes were asked for.
    start: Duration,
    answers: Vec<Answer>,
}

/// A heartbeat in flight: each voter's acknowledgement, `None` while pending.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Beat {
    req: u64,
    /// Monotonic reading when it went out.
    sent: Duration,
    acks: Vec<Option<bool>>,
}

/// The candidate and leader half of `epoch`: terms, majority, leader lease
/// and heartbeats.
#[derive(Debug)]
pub struct EpochClient {
    config: EpochConfig,
    voters: Vec<String>,
    /// The highest term heard of; kept across a crash (Raft persists it),
    /// so every term proposed is new and so is every lease id.
    term: u64,
    /// Election requests, kept across a crash.
    req: u64,
    election: Option<Election>,
    /// The term it leads.
    leading: Option<u64>,
    /// Heartbeats scheduled: the latest one's id.
    beats: u64,
    beat: Option<Beat>,
}

impl EpochClient {
    /// A candidate for the voters called `voters`.
    pub fn new(config: EpochConfig, voters: Vec<String>) -> Self {
        assert!(!voters.is_empty(), "epoch needs at least one voter");
        EpochClient {
            config,
            voters,
            term: 0,
            req: 0,
            election: None,
            leading: None,
            beats: 0,
            beat: None,
        }
    }

    /// The term it leads, if any.
    pub fn leading(&self) -> Option<u64> {
        self.leading
    }

    fn majority(&self) -> usize {
        self.voters.len() / 2 + 1
    }

    fn voter_ids(&self, ctx: &Context<'_, Msg>) -> Vec<NodeId> {
        self.voters.iter().map(|n| node_named(ctx, n)).collect()
    }

    fn release_all(&self, ctx: &mut Context<'_, Msg>, term: u64) {
        for id in self.voter_ids(ctx) {
            ctx.send(id, Msg::Release { lease: term });
        }
    }

    /// Ends the current election: leader with a majority in time, or the
    /// votes given back and denied.
    fn decide(&mut self, ctx: &mut LockContext<'_, '_, EpochTimer>) -> LockEvent {
        let Some(election) = self.election.take() else {
            return LockEvent::Nothing;
        };
        let votes: Vec<Option<u64>> = election
            .answers
            .iter()
            .filter_map(|a| match a {
                Answer::Granted(token) => Some(*token),
                _ => None,
            })
            .collect();
        let elapsed = ctx.now().saturating_sub(election.start);
        match self.config.validity(elapsed) {
            Some(ttl) if votes.len() >= self.majority() => {
                self.leading = Some(election.term);
                self.next_heartbeat(ctx);
                LockEvent::Acquired(Grant {
                    lease: election.term,
                    // Every vote of a term carries the same token: the term.
                    token: votes.iter().flatten().copied().max(),
                    ttl,
                    // Leadership ends when no majority backs it.
                    asked: None,
                    ends: (votes.len() - self.majority() + 1) as u64,
                })
            }
            _ => {
                self.release_all(ctx, election.term);
                LockEvent::Denied
            }
        }
    }

    /// Schedules the next heartbeat; only the latest one scheduled beats.
    fn next_heartbeat(&mut self, ctx: &mut LockContext<'_, '_, EpochTimer>) {
        self.beats += 1;
        ctx.set_timer(
            self.config.heartbeat_interval(),
            EpochTimer::Beat(self.beats),
        );
    }

    fn heartbeat(&mut self, ctx: &mut LockContext<'_, '_, EpochTimer>) {
        let Some(term) = self.leading else {
            return;
        };
        let req = self.beats;
        self.beat = Some(Beat {
            req,
            sent: ctx.now(),
            acks: vec![None; self.voters.len()],
        });
        for id in self.voter_ids(ctx) {
            ctx.send(id, Msg::Renew { lease: term, req });
        }
        self.next_heartbeat(ctx);
    }

    /// A voter's acknowledgement of heartbeat `req`.
    fn acknowledged(
        &mut self,
        ctx: &Context<'_, Msg>,
        index: usize,
        req: u64,
        ok: bool,
    ) -> LockEvent {
        let majority = self.majority();
        let Some(beat) = self.beat.as_mut().filter(|b| b.req == req) else {
            return LockEvent::Nothing;
        };
        if beat.acks[index].is_some() {
            return LockEvent::Nothing;
        }
        beat.acks[index] = Some(ok);
        if !ok {
            // That voter has moved on to a newer term: step down.
            self.beat = None;
            self.leading = None;
            return LockEvent::Lost;
        }
        if beat.acks.iter().filter(|a| **a == Some(true)).count() < majority {
            return LockEvent::Nothing;
        }
        let sent = beat.sent;
        self.beat = None;
        // The lease now runs ttl − drift from when the heartbeat went out;
        // the client counts from now, so hand it what is left of that.
        let elapsed = ctx.now().saturating_sub(sent);
        match self.config.validity(elapsed) {
            Some(left) => LockEvent::Renewed(left),
            None => LockEvent::Nothing,
        }
    }
}

impl LockClient for EpochClient {
    type Timer = EpochTimer;

    fn acquire(&mut self, ctx: &mut LockContext<'_, '_, EpochTimer>) {
        self.req += 1;
        self.term += 1;
        let (req, term) = (self.req, self.term);
        self.election = Some(Election {
            req,
            term,
            start: ctx.now(),
            answers: vec![Answer::Pending; self.voters.len()],
        });
        for id in self.voter_ids(ctx) {
            ctx.send(id, Msg::design(EpochMsg::Vote { req, term }));
        }
        ctx.set_timer(self.config.timeout, EpochTimer::Election(req));
    }

    fn release(&mut self, ctx: &mut LockContext<'_, '_, EpochTimer>) {
        self.beat = None;
        let election = self.election.take().map(|e| e.term);
        if let Some(term) = self.leading.take().or(election) {
            self.release_all(ctx, term);
        }
    }

    fn on_message(
        &mut self,
        ctx: &mut LockContext<'_, '_, EpochTimer>,
        from: NodeId,
        msg: &Msg,
    ) -> LockEvent {
        let Some(index) = self.voters.iter().position(|n| n == ctx.name_of(from)) else {
            return LockEvent::Nothing;
        };
        let (req, answer) = match msg {
            &Msg::Granted {
                req, lease, token, ..
            } => {
                let current = self.election.as_ref().filter(|e| e.term == lease);
                if current.is_none() && self.leading != Some(lease) {
                    // A vote for an election decided already: give it back.
                    ctx.send(from, Msg::Release { lease });
                    return LockEvent::Nothing;
                }
                (req, Answer::Granted(token))
            }
            &Msg::RenewReply { lease, req, ok, .. } if self.leading == Some(lease) => {
                return self.acknowledged(ctx, index, req, ok);
            }
            Msg::Design(_) => match msg.as_design::<EpochMsg>() {
                Some(&EpochMsg::Refused { req, term }) => {
                    self.term = self.term.max(term);
                    (req, Answer::Refused)
                }
                _ => return LockEvent::Nothing,
            },
            _ => return LockEvent::Nothing,
        };
        match &mut self.election {
            Some(election) if election.req == req => {
                if election.answers[index] == Answer::Pending {
                    election.answers[index] = answer;
                }
                if election.answers.iter().all(|a| *a != Answer::Pending) {
                    return self.decide(ctx);
                }
                LockEvent::Nothing
            }
            _ => LockEvent::Nothing,
        }
    }

    fn on_timer(
        &mut self,
        ctx: &mut LockContext<'_, '_, EpochTimer>,
        timer: EpochTimer,
    ) -> LockEvent {
        match (timer, &self.election) {
            (EpochTimer::Beat(n), _) => {
                if n == self.beats {
                    self.heartbeat(ctx);
                }
                LockEvent::Nothing
            }
            (EpochTimer::Election(req), Some(election)) if election.req == req => self.decide(ctx),
            (EpochTimer::Election(_), _) => LockEvent::Nothing,
        }
    }

    /// The leader heartbeats by itself: nothing for the client's `renew`.
    fn renew(&mut self, _ctx: &mut LockContext<'_, '_, EpochTimer>) -> bool {
        false
    }

    fn on_crash(&mut self) {
        self.election = None;
        self.leading = None;
        self.beat = None;
    }
}

#[cfg(test)]
mod tests {
    use super::super::msgs::{granted, refused, vote, TTL};
    use super::*;
    use crate::design::lock_client::{timer_tag, AnyLockClient};
    use sim::testing::{Harness, Step};
    use sim::{Actor, TimerId};

    /// Hosts the candidate as node 0 (lock1 … lock3 are nodes 1 … 3) and
    /// keeps what each call told the workload.
    struct Host {
        client: EpochClient,
        acquire: bool,
        events: Vec<LockEvent>,
    }

    impl Actor<Msg> for Host {
        fn on_start(&mut self, ctx: &mut Context<'_, Msg>) {
            let client: &mut dyn AnyLockClient = &mut self.client;
            if self.acquire {
                client.acquire(ctx);
            } else {
                client.release(ctx);
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
        fn acquire(&mut self, h: &mut Harness) -> Step<Msg> {
            self.acquire = true;
            h.start(self)
        }
        fn last(&self) -> &LockEvent {
            self.events.last().expect("an answer was handled")
        }
    }

    fn candidate() -> (Harness, Host) {
        let voters = ["lock1", "lock2", "lock3"];
        let client = EpochClient::new(
            EpochConfig::default(),
            voters.iter().map(|n| n.to_string()).collect(),
        );
        let host = Host {
            client,
            acquire: true,
            events: Vec::new(),
        };
        (
            Harness::new(&["client1", "lock1", "lock2", "lock3"], 0),
            host,
        )
    }

    /// Elects the candidate for `term` with all three votes after 4 ms;
    /// returns the heartbeat timer it set.
    fn elect(h: &mut Harness, c: &mut Host, term: u64) -> (TimerId, Duration, u64) {
        let s = c.acquire(h);
        assert!(s.sends.iter().all(|(_, m)| *m == vote(term, term)));
        h.advance(Duration::from_millis(4));
        let mut last = None;
        for voter in 1..=3 {
            last = Some(h.message(c, voter, granted(term, term)));
        }
        let beat = last.expect("three votes").timers[0];
        assert_eq!(beat.2, timer_tag(&EpochTimer::Beat(1)));
        beat
    }

    #[test]
    fn a_majority_elects_the_term_and_the_term_is_the_token() {
        let (mut h, mut c) = candidate();
        let (_, every, _) = elect(&mut h, &mut c, 1);
        // 10 s − 4 ms elapsed − 10 s × 0.01 = 9.896 s
        assert_eq!(
            *c.last(),
            LockEvent::Acquired(Grant {
                lease: 1,
                token: Some(1),
                ttl: Duration::from_millis(9896),
                asked: None,
                ends: 2,
            })
        );
        assert_eq!(every, TTL / 3);
        assert_eq!(c.client.leading(), Some(1));
    }

    #[test]
    fn refusals_deny_and_the_next_term_goes_above_the_highest_heard() {
        let (mut h, mut c) = candidate();
        c.acquire(&mut h);
        h.message(&mut c, 1, granted(1, 1));
        h.message(&mut c, 2, refused(1, 5));
        let s = h.message(&mut c, 3, refused(1, 4));
        assert_eq!(*c.last(), LockEvent::Denied);
        // The vote it got is given back.
        assert!(s.sends.iter().all(|(_, m)| *m == Msg::Release { lease: 1 }));
        assert_eq!(s.sends.len(), 3);
        let s = c.acquire(&mut h);
        assert!(s.sends.iter().all(|(_, m)| *m == vote(2, 6)));
    }

    #[test]
    fn a_leader_heartbeats_and_a_refusal_deposes_it() {
        let (mut h, mut c) = candidate();
        let (timer, every, tag) = elect(&mut h, &mut c, 1);
        h.advance(every);
        let s = h.timer(&mut c, timer, tag);
        assert_eq!(s.sends.len(), 3);
        assert!(s
            .sends
            .iter()
            .all(|(_, m)| *m == Msg::Renew { lease: 1, req: 1 }));
        let (next, _, next_tag) = s.timers[0];
        let ok = |req| Msg::RenewReply {
            lease: 1,
            req,
            ok: true,
            ttl: TTL,
        };
        h.advance(Duration::from_millis(2));
        h.message(&mut c, 1, ok(1));
        assert_eq!(*c.last(), LockEvent::Nothing);
        h.message(&mut c, 2, ok(1));
        // ttl − drift from when it went out, counted from now: 9.898 s.
        assert_eq!(*c.last(), LockEvent::Renewed(Duration::from_millis(9898)));
        // The next heartbeat meets a voter that has moved on to a newer term.
        h.timer(&mut c, next, next_tag);
        let no = Msg::RenewReply {
            lease: 1,
            req: 2,
            ok: false,
            ttl: Duration::ZERO,
        };
        h.message(&mut c, 3, no);
        assert_eq!(*c.last(), LockEvent::Lost);
        assert_eq!(c.client.leading(), None);
    }

    #[test]
    fn a_deposed_leader_that_hears_nothing_keeps_leading() {
        let (mut h, mut c) = candidate();
        let (mut timer, every, mut tag) = elect(&mut h, &mut c, 1);
        // Partitioned: its heartbeats go out and nothing comes back, long
        // after the voters' leases have run out.
        for _ in 0..10 {
            h.advance(every);
            let s = h.timer(&mut c, timer, tag);
            assert_eq!(s.sends.len(), 3);
            (timer, _, tag) = s.timers[0];
        }
        assert_eq!(c.client.leading(), Some(1));
        // A late vote for a term it does not lead is handed back.
        let s = h.message(&mut c, 2, granted(7, 7));
        assert_eq!(s.sends, vec![(2, Msg::Release { lease: 7 })]);
    }
}
