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
//!   is a grant of the voter's [`Grants`](crate::design::grants::Grants)
//!   ledger, lease id = term;
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
//! ran out before it votes for another candidate
//! ([`Grants::with_stonith`](crate::design::grants::Grants::with_stonith)).

use std::time::Duration;

use sim::Actor;

use crate::design::catalog::DesignInfo;
use crate::design::config::{key, DesignConfig as _};
use crate::design::lock_client::AnyLockClient;
use crate::design::LockDesign;
use crate::protocol::{Msg, Payload};

mod candidate;
mod voter;

pub use candidate::{EpochClient, EpochTimer};
pub use voter::Voter;

/// The `epoch` design as the registry knows it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Epoch;

impl LockDesign for Epoch {
    type Config = EpochConfig;

    fn info(&self) -> DesignInfo {
        EPOCH
    }

    fn server(&self, config: &EpochConfig, _index: usize) -> Box<dyn Actor<Msg>> {
        Box::new(Voter::new(config.clone()))
    }

    fn client(&self, config: &EpochConfig, lock_nodes: &[String]) -> Box<dyn AnyLockClient> {
        Box::new(EpochClient::new(config.clone(), lock_nodes.to_vec()))
    }
}

/// Lock service: a leader elected for a term by a majority of voters.
pub const EPOCH: DesignInfo = DesignInfo::lock(
    "epoch",
    "leader election: a majority of N voters elects a leader for a term (Raft, Kafka epochs); token = term",
    EpochConfig::KEYS,
);

crate::design_config! {
    /// Settings of an `epoch` deployment: its voters and the candidates'
    /// algorithm.
    #[derive(Clone, Debug, PartialEq)]
    pub struct EpochConfig {
        nodes: u64 = key::nodes(3), "how many voters (lock1 … lockN)";
        ttl: Duration = key::ttl(),
            "leader lease: how long a voter backs a leader without a heartbeat, on the voter's clock";
        heartbeat: Duration = key::heartbeat("ttl / 3"),
            "the leader's heartbeat interval; 0s means ttl / 3";
        timeout: Duration = key::timeout(), "how long a candidate waits for votes before it counts them";
        drift_factor: f64 = key::drift_factor(),
            "clock drift the leader allows for per unit of ttl when it counts its lease";
        tokens: bool = key::tokens(true), "hand out the term as the fencing token (the leader's epoch)";
        durable: bool = key::durable(),
            "does a voter's term survive a crash (Raft persists it; without, it may vote twice in a term)";
        stonith: bool = key::STONITH;
        stonith_restart: Duration = key::STONITH_RESTART;
    }
}

impl EpochConfig {
    /// The leader's heartbeat interval: `heartbeat`, or `ttl / 3` for zero.
    pub fn heartbeat_interval(&self) -> Duration {
        match self.heartbeat {
            Duration::ZERO => self.ttl / 3,
            d => d,
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

/// Messages the unit tests of both halves send.
#[cfg(test)]
mod msgs {
    use std::time::Duration;

    use super::EpochMsg;
    use crate::protocol::Msg;

    pub const TTL: Duration = Duration::from_secs(10);

    pub fn vote(req: u64, term: u64) -> Msg {
        Msg::design(EpochMsg::Vote { req, term })
    }

    pub fn refused(req: u64, term: u64) -> Msg {
        Msg::design(EpochMsg::Refused { req, term })
    }

    pub fn granted(req: u64, term: u64) -> Msg {
        Msg::Granted {
            req,
            lease: term,
            token: Some(term),
            ttl: TTL,
        }
    }
}
