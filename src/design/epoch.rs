//! `epoch`: leadership as a lock. A client becomes *leader* for a term (an
//! epoch) by winning the votes of a majority of N voters named `lock1` …
//! `lockN`, the way a Raft candidate wins an election (Ongaro & Ousterhout,
//! "In Search of an Understandable Consensus Algorithm", 2014, §5.2), a
//! Kafka controller or a transactional producer gets its epoch (KIP-98),
//! and a Paxos proposer its ballot.
//!
//! How fencesim's roles map:
//! - the **clients** are the would-be leaders: acquiring the lock is
//!   campaigning for a term, holding it is acting as leader, releasing it is
//!   stepping down;
//! - the **lock nodes** are the voters. Each keeps the highest term it has
//!   seen (on disk with `durable`, as Raft persists `currentTerm` and
//!   `votedFor`) and votes at most once per term, only for a term above it,
//!   and only when no leader it backs is live: its vote is a *leader lease*
//!   of `ttl` on the voter's own clock, restarted by each heartbeat. A vote
//!   is a grant of the voter's [`Grants`] ledger, lease id = term;
//! - the **token** is the term (with `tokens`, the default): every voter of a
//!   majority hands out the same one, so it is the leader's epoch. The
//!   `fenced` storage rejecting a token below the highest it has seen is
//!   Kafka's producer-epoch fencing ("zombie fencing": a write from an older
//!   epoch than the latest is refused) or a ZooKeeper `cversion` check.
//!
//! The candidate ([`EpochClient`]) proposes the term after the highest it has
//! heard of, asks every voter at once and waits for all answers or
//! `timeout`. A voter that refuses says which term it is at, so the next
//! attempt goes above it. With a majority in time it is leader and believes
//! its leader lease for `ttl − elapsed − ttl × drift_factor`, on **its own**
//! monotonic clock; otherwise it gives the votes it got back and is denied.
//! While leader it heartbeats every voter every `heartbeat`; a majority of
//! acknowledgements extends its lease to `ttl − drift` from when it sent
//! them, and a refusal (a voter that no longer backs it: it has moved on to
//! a newer term) deposes it at once, as a Raft leader steps down when it
//! hears of a higher term.
//!
//! What this does **not** do, on purpose, because it is where leader
//! election goes wrong: a deposed leader that has not heard of the new term
//! (partitioned, paused) keeps acting as leader. The client's `check_lease`
//! variant is the leader-lease check of Raft §8 and the Raft thesis §6.4.1
//! (a leader serves a read locally while its lease lasts on its clock); it
//! holds only while clocks drift less than `drift_factor` allows, so a
//! leader whose clock runs slow serves stale reads. Only the epoch at the
//! storage stops what such a leader writes.
//!
//! Multi-node order: the oracle orders the leaders' grants by their
//! majority-th vote in the journal. With terms that is the order of the
//! terms, except in a corner the bundled scenarios do not reach: a vote for
//! an older term delayed until after a newer term's majority was complete.
//!
//! With `stonith`, each voter powers off the leader it backed whose lease
//! ran out before it votes for another candidate ([`Grants::with_stonith`]).

use std::time::Duration;

use sim::{Actor, Context, NodeId, TimerId};

use crate::design::catalog::{
    heartbeat, DesignInfo, KeyKind, KeySpec, Role, Value, MAX_DURATION, MIN_INTERVAL, TTL,
};
use crate::design::grants::{Grants, STONITH_KEY};
use crate::design::lock_client::{Grant, LockClient, LockEvent, PROTOCOL_TAG};
use crate::design::node_named;
use crate::design::params::Params;
use crate::design::LockDesign;
use crate::protocol::{Msg, Payload};

/// The `epoch` design as the registry knows it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Epoch;

impl LockDesign for Epoch {
    fn info(&self) -> DesignInfo {
        EPOCH
    }

    fn server(&self, p: &Params, _index: usize) -> Box<dyn Actor<Msg>> {
        Box::new(Voter::new(EpochConfig::from_params(p)))
    }

    fn client(&self, p: &Params, lock_nodes: &[String]) -> Box<dyn LockClient> {
        Box::new(EpochClient::new(
            EpochConfig::from_params(p),
            lock_nodes.to_vec(),
        ))
    }
}

/// Lock service: a leader elected for a term by a majority of voters.
pub const EPOCH: DesignInfo = DesignInfo {
    name: "epoch",
    role: Role::Lock,
    summary: "leader election: a majority of N voters elects a leader for a term (Raft, Kafka epochs); token = term",
    keys: &[
        KeySpec {
            name: "nodes",
            kind: KeyKind::U64 { min: 1, max: 15 },
            default: Some(Value::U64(3)),
            doc: "how many voters (lock1 … lockN)",
        },
        KeySpec {
            name: "ttl",
            kind: TTL,
            default: Some(Value::Duration(Duration::from_secs(10))),
            doc: "leader lease: how long a voter backs a leader without a heartbeat, on the voter's clock",
        },
        KeySpec {
            name: "heartbeat",
            kind: heartbeat("ttl / 3"),
            default: Some(Value::Duration(Duration::ZERO)),
            doc: "the leader's heartbeat interval; 0s means ttl / 3",
        },
        KeySpec {
            name: "timeout",
            kind: KeyKind::DurationIn {
                min: MIN_INTERVAL,
                max: MAX_DURATION,
                zero: None,
                below: Some("ttl"),
            },
            default: Some(Value::Duration(Duration::from_millis(50))),
            doc: "how long a candidate waits for votes before it counts them",
        },
        KeySpec {
            name: "drift_factor",
            kind: KeyKind::F64 { min: 0.0, max: 0.5 },
            default: Some(Value::F64(0.01)),
            doc: "clock drift the leader allows for per unit of ttl when it counts its lease",
        },
        KeySpec {
            name: "tokens",
            kind: KeyKind::Bool,
            default: Some(Value::Bool(true)),
            doc: "hand out the term as the fencing token (the leader's epoch)",
        },
        KeySpec {
            name: "durable",
            kind: KeyKind::Bool,
            default: Some(Value::Bool(true)),
            doc: "does a voter's term survive a crash (Raft persists it; without, it may vote twice in a term)",
        },
        STONITH_KEY,
    ],
};

/// Settings of an `epoch` deployment: its voters and the candidates'
/// algorithm.
#[derive(Clone, Debug, PartialEq)]
pub struct EpochConfig {
    /// How many voters (`lock1` … `lockN`).
    pub nodes: u64,
    /// The leader lease, on each voter's clock.
    pub ttl: Duration,
    /// The leader's heartbeat interval.
    pub heartbeat: Duration,
    /// How long a candidate waits for votes.
    pub timeout: Duration,
    /// The clock drift allowed per unit of `ttl`.
    pub drift_factor: f64,
    /// Whether a vote carries the term as a fencing token.
    pub tokens: bool,
    /// Whether a voter's term survives a crash.
    pub durable: bool,
    /// Whether a voter powers off the leader whose lease ran out before it
    /// votes for another.
    pub stonith: bool,
}

impl EpochConfig {
    /// The settings [`EPOCH`]'s keys describe.
    pub fn from_params(p: &Params) -> Self {
        let ttl = p.duration("ttl");
        let heartbeat = match p.duration("heartbeat") {
            Duration::ZERO => ttl / 3,
            d => d,
        };
        EpochConfig {
            nodes: p.u64("nodes"),
            ttl,
            heartbeat,
            timeout: p.duration("timeout"),
            drift_factor: p.f64("drift_factor"),
            tokens: p.bool("tokens"),
            durable: p.bool("durable"),
            stonith: p.bool("stonith"),
        }
    }

    /// `ttl × drift_factor`, to the nanosecond.
    fn drift(&self) -> Duration {
        let ns = (self.ttl.as_nanos() as f64 * self.drift_factor).round() as u64;
        Duration::from_nanos(ns)
    }

    /// The lease a leader may believe `elapsed` after it asked: `ttl −
    /// elapsed − drift`, if positive.
    pub fn validity(&self, elapsed: Duration) -> Option<Duration> {
        self.ttl
            .checked_sub(elapsed)?
            .checked_sub(self.drift())
            .filter(|v| !v.is_zero())
    }
}

impl Default for EpochConfig {
    /// [`EPOCH`]'s declared defaults.
    fn default() -> Self {
        EpochConfig::from_params(&EPOCH.defaults())
    }
}

/// The election's own messages; heartbeats, votes granted and releases are
/// the common protocol's [`Msg::Renew`], [`Msg::Granted`] and
/// [`Msg::Release`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EpochMsg {
    /// Candidate → voter: vote for me in `term` (Raft's `RequestVote`).
    Vote {
        /// Request id, echoed in the answer.
        req: u64,
        /// The term the candidate proposes.
        term: u64,
    },
    /// Voter → candidate: no vote; the voter is at `term` (a live leader
    /// has its vote, or the proposed term was not above its own).
    Refused {
        /// The request answered.
        req: u64,
        /// The voter's current term.
        term: u64,
    },
}

impl Payload for EpochMsg {
    fn summary(&self) -> String {
        match self {
            EpochMsg::Vote { req, term } => format!("vote? term={term} req={req}"),
            EpochMsg::Refused { req, term } => format!("no vote, at term={term} req={req}"),
        }
    }
}

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
            grants: Grants::with_stonith(config.stonith),
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
    fn on_start(&mut self, _ctx: &mut Context<'_, Msg>) {}

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

/// Timer tags of heartbeats: `BEAT_TAG + heartbeat id` (elections use
/// `PROTOCOL_TAG + request id`, far below).
const BEAT_TAG: u64 = PROTOCOL_TAG + (1 << 31);

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
    fn decide(&mut self, ctx: &mut Context<'_, Msg>) -> LockEvent {
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
    fn next_heartbeat(&mut self, ctx: &mut Context<'_, Msg>) {
        self.beats += 1;
        ctx.set_timer(self.config.heartbeat, BEAT_TAG + self.beats);
    }

    fn heartbeat(&mut self, ctx: &mut Context<'_, Msg>) {
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
    fn acquire(&mut self, ctx: &mut Context<'_, Msg>) {
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
        ctx.set_timer(self.config.timeout, PROTOCOL_TAG + req);
    }

    fn release(&mut self, ctx: &mut Context<'_, Msg>) {
        self.beat = None;
        let election = self.election.take().map(|e| e.term);
        if let Some(term) = self.leading.take().or(election) {
            self.release_all(ctx, term);
        }
    }

    fn on_message(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, msg: &Msg) -> LockEvent {
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

    fn on_timer(&mut self, ctx: &mut Context<'_, Msg>, tag: u64) -> LockEvent {
        if tag >= BEAT_TAG {
            if tag == BEAT_TAG + self.beats {
                self.heartbeat(ctx);
            }
            return LockEvent::Nothing;
        }
        match &self.election {
            Some(election) if PROTOCOL_TAG + election.req == tag => self.decide(ctx),
            _ => LockEvent::Nothing,
        }
    }

    /// The leader heartbeats by itself: nothing for the client's `renew`.
    fn renew(&mut self, _ctx: &mut Context<'_, Msg>) -> bool {
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
    use super::*;
    use sim::testing::{Harness, Step};

    const CLIENT1: NodeId = 1;
    const CLIENT2: NodeId = 2;
    const TTL: Duration = Duration::from_secs(10);

    fn voter_harness() -> Harness {
        Harness::new(&["lock1", "client1", "client2"], 0)
    }

    fn vote(req: u64, term: u64) -> Msg {
        Msg::design(EpochMsg::Vote { req, term })
    }

    fn refused(req: u64, term: u64) -> Msg {
        Msg::design(EpochMsg::Refused { req, term })
    }

    fn granted(req: u64, term: u64) -> Msg {
        Msg::Granted {
            req,
            lease: term,
            token: Some(term),
            ttl: TTL,
        }
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

    /// Hosts the candidate as node 0 (lock1 … lock3 are nodes 1 … 3) and
    /// keeps what each call told the workload.
    struct Host {
        client: EpochClient,
        acquire: bool,
        events: Vec<LockEvent>,
    }

    impl Actor<Msg> for Host {
        fn on_start(&mut self, ctx: &mut Context<'_, Msg>) {
            if self.acquire {
                self.client.acquire(ctx);
            } else {
                self.client.release(ctx);
            }
        }
        fn on_message(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, msg: Msg) {
            let event = self.client.on_message(ctx, from, &msg);
            self.events.push(event);
        }
        fn on_timer(&mut self, ctx: &mut Context<'_, Msg>, _: TimerId, tag: u64) {
            let event = self.client.on_timer(ctx, tag);
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
        assert!(beat.2 >= BEAT_TAG);
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
