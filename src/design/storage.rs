//! Storage nodes: a key-value store that asks a [`StoragePolicy`] whether to
//! apply each write, and journals the answer (`accepted` / `rejected`) the
//! same way for every policy, so the oracle judges them alike.
//!
//! A write with [`Op::Fence`] (a token-only write, `fence_on_acquire`) goes
//! through the policy like any other, so a fenced storage records its token,
//! but it changes no data, and its `accepted` event carries no `value`.

use std::collections::BTreeMap;

use sim::{Actor, Context, NodeId, TimerId};

use crate::design::catalog::{self, DesignInfo};
use crate::design::StorageDesign;
use crate::events;
use crate::protocol::{Msg, Op};
use crate::scenario::Params;

/// The `unchecked` design as the registry knows it.
#[derive(Clone, Copy, Debug, Default)]
pub struct UncheckedDesign;

impl StorageDesign for UncheckedDesign {
    fn info(&self) -> DesignInfo {
        catalog::UNCHECKED
    }

    fn server(&self, _params: &Params) -> Box<dyn Actor<Msg>> {
        Box::new(StorageNode::new(Unchecked))
    }
}

/// The `fenced` design as the registry knows it.
#[derive(Clone, Copy, Debug, Default)]
pub struct FencedDesign;

impl StorageDesign for FencedDesign {
    fn info(&self) -> DesignInfo {
        catalog::FENCED
    }

    fn server(&self, params: &Params) -> Box<dyn Actor<Msg>> {
        Box::new(StorageNode::new(Fenced::new(params.bool("durable"))))
    }
}

/// A write as the storage sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteRequest<'a> {
    /// Write id.
    pub write: &'a str,
    /// The writer's name.
    pub client: &'a str,
    /// The fencing token the write carries, if any.
    pub token: Option<u64>,
    /// The key written.
    pub key: &'a str,
    /// The new value.
    pub value: i64,
    /// Blind write or increment.
    pub op: Op,
}

/// A policy's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Apply the write.
    Accept,
    /// Refuse it.
    Reject {
        /// Why, in a few words (`token 33 < 34`).
        reason: String,
        /// The highest token seen, when the policy tracks one.
        max_token: Option<u64>,
    },
}

/// Decides which writes a storage applies: the part a storage design varies.
///
/// Contract: [`StorageNode`] hosts a policy and does the rest (reads, data,
/// replies, the `accepted`/`rejected` events), so a policy emits no events
/// and sends nothing. `decide` sees every write in arrival order, including
/// token-only [`Op::Fence`] writes, which should update whatever the policy
/// tracks (a highest token) exactly as a data write would. What the policy
/// keeps across [`StoragePolicy::on_crash`] is what the modelled storage
/// keeps on disk; the data itself is always durable.
pub trait StoragePolicy: 'static {
    /// Whether to apply `write`. Called once per arriving write, in order.
    fn decide(&mut self, write: &WriteRequest<'_>) -> Decision;
    /// The storage crashed: forget what is not durable.
    fn on_crash(&mut self) {}
}

/// `unchecked`: accepts every write, like a plain database or file share.
#[derive(Clone, Copy, Debug, Default)]
pub struct Unchecked;

impl StoragePolicy for Unchecked {
    fn decide(&mut self, _write: &WriteRequest<'_>) -> Decision {
        Decision::Accept
    }
}

/// `fenced`: rejects a write whose token is lower than the highest token it
/// has accepted (DDIA figure 9-6). Equal tokens pass, so a holder can write
/// more than once; writes without a token have nothing to check and pass.
/// With `durable = false` the highest token lives in memory and a crash
/// forgets it.
#[derive(Clone, Debug)]
pub struct Fenced {
    durable: bool,
    max_token: Option<u64>,
}

impl Fenced {
    /// A fenced policy; `durable`: does the highest token survive a crash.
    pub fn new(durable: bool) -> Self {
        Fenced {
            durable,
            max_token: None,
        }
    }
}

impl StoragePolicy for Fenced {
    fn decide(&mut self, write: &WriteRequest<'_>) -> Decision {
        match (write.token, self.max_token) {
            (Some(t), Some(max)) if t < max => Decision::Reject {
                reason: format!("token {t} < {max}"),
                max_token: Some(max),
            },
            (Some(t), _) => {
                self.max_token = Some(self.max_token.map_or(t, |m| m.max(t)));
                Decision::Accept
            }
            (None, _) => Decision::Accept,
        }
    }

    fn on_crash(&mut self) {
        if !self.durable {
            self.max_token = None;
        }
    }
}

/// A storage node: durable key-value data guarded by a policy.
pub struct StorageNode<P> {
    policy: P,
    /// Key → (value, version). The data itself is durable.
    data: BTreeMap<String, (i64, u64)>,
}

impl<P: StoragePolicy> StorageNode<P> {
    /// A storage node applying `policy`.
    pub fn new(policy: P) -> Self {
        StorageNode {
            policy,
            data: BTreeMap::new(),
        }
    }
}

impl<P: StoragePolicy> Actor<Msg> for StorageNode<P> {
    fn on_start(&mut self, _ctx: &mut Context<'_, Msg>) {}

    fn on_message(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, msg: Msg) {
        match msg {
            Msg::Read { req, key } => {
                let (value, version) = self.data.get(&key).copied().unwrap_or((0, 0));
                ctx.send(
                    from,
                    Msg::ReadReply {
                        req,
                        value,
                        version,
                    },
                );
            }
            Msg::Write {
                write,
                token,
                key,
                value,
                op,
            } => {
                let client = ctx.name_of(from).to_owned();
                let request = WriteRequest {
                    write: &write,
                    client: &client,
                    token,
                    key: &key,
                    value,
                    op,
                };
                let ok = match self.policy.decide(&request) {
                    Decision::Accept => {
                        // A fence carries a token and no value.
                        let value = (op != Op::Fence).then_some(value);
                        if let Some(value) = value {
                            let entry = self.data.entry(key.clone()).or_insert((0, 0));
                            *entry = (value, entry.1 + 1);
                        }
                        sim::emit!(
                            events::ACCEPTED,
                            write = write.as_str(),
                            client = client.as_str(),
                            token = token,
                            value = value,
                            key = key.as_str()
                        );
                        true
                    }
                    Decision::Reject { reason, max_token } => {
                        sim::emit!(
                            events::REJECTED,
                            write = write.as_str(),
                            client = client.as_str(),
                            token = token,
                            reason = reason.as_str(),
                            max_token = max_token,
                            key = key.as_str()
                        );
                        false
                    }
                };
                ctx.send(from, Msg::WriteReply { write, ok });
            }
            _ => {}
        }
    }

    fn on_timer(&mut self, _ctx: &mut Context<'_, Msg>, _id: TimerId, _tag: u64) {}

    fn on_crash(&mut self) {
        self.policy.on_crash();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim::testing::Harness;

    fn write(write: &str, token: Option<u64>) -> Msg {
        Msg::Write {
            write: write.into(),
            token,
            key: "x".into(),
            value: 1,
            op: Op::Put,
        }
    }

    #[test]
    fn fenced_rejects_lower_tokens_and_accepts_equal_ones() {
        let mut h = Harness::new(&["storage", "client1", "client2"], 0);
        let mut s = StorageNode::new(Fenced::new(true));
        let step = h.message(&mut s, 2, write("client2/1", Some(34)));
        assert_eq!(step.events[0].0, "accepted");
        let step = h.message(&mut s, 2, write("client2/2", Some(34)));
        assert_eq!(step.events[0].0, "accepted");
        let step = h.message(&mut s, 1, write("client1/1", Some(33)));
        assert_eq!(step.events[0].0, "rejected");
        assert_eq!(
            step.sends,
            vec![(
                1,
                Msg::WriteReply {
                    write: "client1/1".into(),
                    ok: false
                }
            )]
        );
    }

    #[test]
    fn a_volatile_fence_forgets_its_highest_token_on_crash() {
        let mut h = Harness::new(&["storage", "client1"], 0);
        let mut s = StorageNode::new(Fenced::new(false));
        h.message(&mut s, 1, write("a", Some(34)));
        s.on_crash();
        let step = h.message(&mut s, 1, write("b", Some(33)));
        assert_eq!(step.events[0].0, "accepted");
    }

    #[test]
    fn a_fence_raises_the_highest_token_and_leaves_the_data_alone() {
        let mut h = Harness::new(&["storage", "client1", "client2"], 0);
        let mut s = StorageNode::new(Fenced::new(true));
        h.message(&mut s, 1, write("client1/1", Some(33)));
        let fence = Msg::Write {
            write: "client2/1".into(),
            token: Some(34),
            key: "x".into(),
            value: 0,
            op: Op::Fence,
        };
        let step = h.message(&mut s, 2, fence);
        let (kind, fields) = &step.events[0];
        assert_eq!(kind, "accepted");
        assert!(fields.iter().all(|(k, _)| k != "value"), "{fields:?}");
        let step = h.message(&mut s, 1, write("client1/2", Some(33)));
        assert_eq!(step.events[0].0, "rejected");
        let read = Msg::Read {
            req: 1,
            key: "x".into(),
        };
        let step = h.message(&mut s, 1, read);
        let reply = Msg::ReadReply {
            req: 1,
            value: 1,
            version: 1,
        };
        assert_eq!(step.sends, vec![(1, reply)]);
    }

    #[test]
    fn unchecked_accepts_anything_and_reads_see_writes() {
        let mut h = Harness::new(&["storage", "client1"], 0);
        let mut s = StorageNode::new(Unchecked);
        h.message(&mut s, 1, write("a", Some(34)));
        h.message(&mut s, 1, write("b", Some(1)));
        let step = h.message(
            &mut s,
            1,
            Msg::Read {
                req: 7,
                key: "x".into(),
            },
        );
        assert_eq!(
            step.sends,
            vec![(
                1,
                Msg::ReadReply {
                    req: 7,
                    value: 1,
                    version: 2
                }
            )]
        );
    }
}
