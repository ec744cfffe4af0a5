//! One pass over the journal into the small indexes every checker reads:
//! grants, writes (with the grant each was made under), lease ends at the
//! lock, storage outcomes and acknowledgements.
//!
//! Everything borrows from the journal, so indexing allocates only the
//! vectors and maps themselves.

use std::collections::BTreeMap;

use sim::journal::{Event, Journal};

use crate::events::{
    ACCEPTED, ACKED, ACQUIRED, EXPIRED, FENCED, GRANTED, REJECTED, RELEASED, WROTE,
};

/// How a grant ended at the lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct End {
    /// Journal position of the lock's `expired` or `released` event.
    pub seq: u64,
    /// True time of that event.
    pub t_ns: u64,
    /// Whether the lease expired (else: the lock saw it released).
    pub expired: bool,
}

/// A client's `acquired` event. Its index in [`History::grants`] is its age:
/// a higher index is a newer grant.
#[derive(Clone, Debug)]
pub(crate) struct Grant<'a> {
    pub seq: u64,
    pub t_ns: u64,
    pub client: &'a str,
    pub token: Option<u64>,
    /// The lock's `expired`/`released` that ended this grant (the first, or
    /// with `ends` = n on `acquired`, the n-th).
    pub end: Option<End>,
    /// Lock-node ends needed, and seen so far.
    ends_needed: u64,
    ends_seen: u64,
    /// Journal position of the client's next `released` or `acquired`: where
    /// the client stopped believing it holds this grant (`None`: never did).
    pub believed_until: Option<u64>,
}

/// A client's `wrote` event.
#[derive(Clone, Debug)]
pub(crate) struct Write<'a> {
    pub client: &'a str,
    /// Index into [`History::grants`]; `None` when the client wrote before
    /// any grant of its own.
    pub grant: Option<usize>,
    /// The token the write carried (falls back to its grant's token).
    pub token: Option<u64>,
    pub increment: bool,
    /// The storage key, from the first `accepted` event of this write.
    pub key: Option<&'a str>,
}

/// A storage `accepted` or `rejected` event.
#[derive(Clone, Debug)]
pub(crate) struct Outcome<'a> {
    pub seq: u64,
    pub t_ns: u64,
    /// The storage node.
    pub node: &'a str,
    pub accepted: bool,
    pub write_id: &'a str,
    /// The writer, from the write's `wrote` event, else the storage's `client` field.
    pub client: &'a str,
    pub key: &'a str,
    pub value: Option<i64>,
    /// The grant the write was made under (`None`: unknown write, or no grant).
    pub grant: Option<usize>,
    /// For an acceptance: index into [`History::outcomes`] of the acceptance,
    /// at the same storage node and earlier, whose grant is the newest.
    pub newest_prior: Option<usize>,
}

/// A lock node's `granted` event carrying a token: what the lock handed out.
#[derive(Clone, Debug)]
pub(crate) struct Issued<'a> {
    pub seq: u64,
    pub t_ns: u64,
    /// The lock node.
    pub node: &'a str,
    pub client: &'a str,
    pub token: u64,
}

/// A client's `acked` event.
#[derive(Clone, Debug)]
pub(crate) struct Ack<'a> {
    pub seq: u64,
    pub t_ns: u64,
    pub write_id: &'a str,
    pub ok: bool,
    /// The ack's `op` is `increment` (`None`: the ack names no op).
    pub increment: Option<bool>,
}

/// The indexes of one journal.
#[derive(Debug, Default)]
pub(crate) struct History<'a> {
    pub grants: Vec<Grant<'a>>,
    /// Tokens as the lock nodes handed them out, in journal order.
    pub issued: Vec<Issued<'a>>,
    pub writes: BTreeMap<&'a str, Write<'a>>,
    pub outcomes: Vec<Outcome<'a>>,
    pub acks: Vec<Ack<'a>>,
    /// Whether any `wrote` event has `op = "increment"`.
    pub has_increments: bool,
    /// Token-only writes (`fenced` events, or `wrote` with `op = "fence"`):
    /// not data writes, so their storage outcomes are left out of every check.
    pub fences: std::collections::BTreeSet<&'a str>,
}

impl<'a> History<'a> {
    /// The write `write_id`, if a `wrote` event announced it.
    pub fn write(&self, write_id: &str) -> Option<&Write<'a>> {
        self.writes.get(write_id)
    }

    /// The grant that superseded grant `index`, if it came strictly before `seq`.
    pub fn newer_grant_before(&self, index: usize, seq: u64) -> Option<&Grant<'a>> {
        self.grants.get(index + 1).filter(|g| g.seq < seq)
    }

    /// How grant `index` ended at the lock, if it did strictly before `seq`.
    pub fn ended_before(&self, index: usize, seq: u64) -> Option<End> {
        self.grants[index].end.filter(|e| e.seq < seq)
    }

    /// Indexes `journal` in one pass.
    pub fn index(journal: &'a Journal) -> Self {
        let mut indexer = Indexer::default();
        for event in journal.events() {
            indexer.event(event);
        }
        indexer.history
    }
}

#[derive(Default)]
struct Indexer<'a> {
    history: History<'a>,
    /// Each client's latest grant.
    latest_grant: BTreeMap<&'a str, usize>,
    /// Each (client, lease)'s latest grant, to match lock-side ends.
    by_lease: BTreeMap<(&'a str, u64), usize>,
    /// Lock-side ends seen before any grant of that (client, lease): a grant
    /// message that arrived after its lease had run out. The grant, when the
    /// client does acquire, is over from the start.
    early_ends: BTreeMap<(&'a str, u64), Vec<End>>,
    /// Per storage node, the acceptance with the newest grant so far.
    newest_accepted: BTreeMap<&'a str, usize>,
}

impl<'a> Indexer<'a> {
    fn event(&mut self, e: &'a Event) {
        match e.kind.as_str() {
            ACQUIRED => self.acquired(e),
            WROTE if e.str("op") == Some("fence") => self.fenced(e),
            WROTE => self.wrote(e),
            FENCED => self.fenced(e),
            ACKED => self.acked(e),
            // The lock's `released` names the client; the client's own does not.
            RELEASED if e.get("client").is_some() => self.ended(e, false),
            RELEASED => self.client_released(e),
            EXPIRED => self.ended(e, true),
            GRANTED => self.issued(e),
            ACCEPTED => self.outcome(e, true),
            REJECTED => self.outcome(e, false),
            _ => {}
        }
    }

    fn acquired(&mut self, e: &'a Event) {
        let client = e.node.as_str();
        let index = self.history.grants.len();
        self.stop_believing(client, e.seq);
        let lease = e.u64("lease");
        let ends_needed = e.u64("ends").unwrap_or(1).max(1);
        let early = lease
            .and_then(|l| self.early_ends.remove(&(client, l)))
            .unwrap_or_default();
        self.history.grants.push(Grant {
            seq: e.seq,
            t_ns: e.t_ns,
            client,
            token: e.u64("token"),
            end: early.get(ends_needed as usize - 1).copied(),
            ends_needed,
            ends_seen: early.len() as u64,
            believed_until: None,
        });
        self.latest_grant.insert(client, index);
        if let Some(l) = lease {
            self.by_lease.insert((client, l), index);
        }
    }

    fn issued(&mut self, e: &'a Event) {
        if let (Some(client), Some(token)) = (e.str("client"), e.u64("token")) {
            self.history.issued.push(Issued {
                seq: e.seq,
                t_ns: e.t_ns,
                node: e.node.as_str(),
                client,
                token,
            });
        }
    }

    fn client_released(&mut self, e: &'a Event) {
        self.stop_believing(e.node.as_str(), e.seq);
    }

    fn stop_believing(&mut self, client: &str, seq: u64) {
        if let Some(&i) = self.latest_grant.get(client) {
            let grant = &mut self.history.grants[i];
            if grant.believed_until.is_none() {
                grant.believed_until = Some(seq);
            }
        }
    }

    fn ended(&mut self, e: &'a Event, expired: bool) {
        let (Some(client), Some(lease)) = (e.str("client"), e.u64("lease")) else {
            return;
        };
        let end = End {
            seq: e.seq,
            t_ns: e.t_ns,
            expired,
        };
        match self.by_lease.get(&(client, lease)) {
            // With several lock nodes (redlock) each reports its own end; the
            // grant ends with the `ends_needed`-th.
            Some(&i) => {
                let grant = &mut self.history.grants[i];
                grant.ends_seen += 1;
                if grant.ends_seen == grant.ends_needed {
                    grant.end.get_or_insert(end);
                }
            }
            None => {
                self.early_ends
                    .entry((client, lease))
                    .or_default()
                    .push(end);
            }
        }
    }

    fn wrote(&mut self, e: &'a Event) {
        let Some(id) = e.str("write") else { return };
        let client = e.node.as_str();
        let grant = self.latest_grant.get(client).copied();
        let increment = e.str("op") == Some("increment");
        self.history.has_increments |= increment;
        let token = e
            .u64("token")
            .or_else(|| grant.and_then(|g| self.history.grants[g].token));
        self.history.writes.insert(
            id,
            Write {
                client,
                grant,
                token,
                increment,
                key: None,
            },
        );
    }

    fn fenced(&mut self, e: &'a Event) {
        if let Some(id) = e.str("write") {
            self.history.fences.insert(id);
        }
    }

    fn acked(&mut self, e: &'a Event) {
        let Some(write_id) = e.str("write") else {
            return;
        };
        self.history.acks.push(Ack {
            seq: e.seq,
            t_ns: e.t_ns,
            write_id,
            ok: e.bool("ok") == Some(true),
            increment: e.str("op").map(|op| op == "increment"),
        });
    }

    fn outcome(&mut self, e: &'a Event, accepted: bool) {
        let write_id = e.str("write").unwrap_or("");
        if self.history.fences.contains(write_id) {
            return;
        }
        let key = e.str("key").unwrap_or("");
        let node = e.node.as_str();
        let write = self.history.writes.get_mut(write_id);
        let (client, grant) = match write {
            Some(w) => {
                if accepted {
                    w.key.get_or_insert(key);
                }
                (w.client, w.grant)
            }
            None => (e.str("client").unwrap_or("?"), None),
        };
        let index = self.history.outcomes.len();
        let newest_prior = if accepted {
            self.newest_accepted.get(node).copied()
        } else {
            None
        };
        self.history.outcomes.push(Outcome {
            seq: e.seq,
            t_ns: e.t_ns,
            node,
            accepted,
            write_id,
            client,
            key,
            value: e.i64("value"),
            grant,
            newest_prior,
        });
        if let (true, Some(g)) = (accepted, grant) {
            let newer = match newest_prior.and_then(|p| self.history.outcomes[p].grant) {
                Some(prior) => g > prior,
                None => true,
            };
            if newer {
                self.newest_accepted.insert(node, index);
            }
        }
    }
}
