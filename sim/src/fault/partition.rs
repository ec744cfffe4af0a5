//! Partition: nodes in different groups cannot reach each other for a while;
//! nodes named in no group reach everyone. One-way partitions cut only the
//! messages leaving the first group. A message sent across a cut is lost.

use std::time::Duration;

use crate::actor::{Message, NodeId};
use crate::events::{self, field};
use crate::fault::random::{millis, Draw, Sizes, Targets};
use crate::fault::{FollowUp, Kind};
use crate::world::World;

/// Split the network into `groups` for `duration`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    /// Groups of node names; no node in two groups.
    pub groups: Vec<Vec<String>>,
    /// How long the partition lasts.
    pub duration: Duration,
    /// Cut only messages from the first group to the others.
    pub one_way: bool,
}

impl Partition {
    /// A random partition for 100 ms to `max_partition`. Half the time it
    /// cuts a target node off from all the others; else it splits the world
    /// into two sides with a bridge: each other node joins the target
    /// node's side, the other side, or neither (a third of the time each),
    /// and a node on neither side still reaches both (Jepsen's *bridge*:
    /// two sides that cannot talk, each reaching the nodes in between: a
    /// client cut from two Redlock servers, while the others reach
    /// everyone; a client and the lock apart from the storage). One time in
    /// five it is one way: only the first group's messages out are lost.
    pub fn random(d: &mut dyn Draw, t: &dyn Targets, sizes: &Sizes) -> Partition {
        let node = t.node(d);
        let others: Vec<String> = t.all().iter().filter(|n| **n != node).cloned().collect();
        let (mut first, mut rest) = (vec![node], Vec::new());
        if d.chance(0.5) {
            rest.extend(others);
        } else {
            let mut bridge = Vec::new();
            for other in others {
                match d.u32_in(0, 2) {
                    0 => first.push(other),
                    1 => rest.push(other),
                    _ => bridge.push(other),
                }
            }
            // Two groups: a node in between, else of the first, joins the
            // other side.
            if rest.is_empty() {
                rest.push(if bridge.is_empty() {
                    first.remove(1 + d.index(first.len() - 1))
                } else {
                    bridge.remove(d.index(bridge.len()))
                });
            }
        }
        Partition {
            groups: vec![first, rest],
            duration: millis(d, sizes.max_partition),
            one_way: d.chance(0.2),
        }
    }

    /// The directed links this partition cuts, as node-name pairs.
    pub fn cut_pairs(&self) -> Vec<(&str, &str)> {
        let mut pairs = Vec::new();
        for (i, a) in self.groups.iter().enumerate() {
            for (j, b) in self.groups.iter().enumerate() {
                if i == j || (self.one_way && i != 0) {
                    continue;
                }
                for x in a {
                    for y in b {
                        pairs.push((x.as_str(), y.as_str()));
                    }
                }
            }
        }
        pairs
    }

    fn describe(&self) -> String {
        let groups: Vec<String> = self.groups.iter().map(|g| g.join(",")).collect();
        groups.join(if self.one_way { " -/-> " } else { " | " })
    }
}

impl Kind for Partition {
    const NAME: &'static str = "partition";
    /// Its weight in random draws.
    const WEIGHT: u32 = 2;

    fn nodes(&self) -> Vec<&str> {
        self.groups.iter().flatten().map(String::as_str).collect()
    }

    fn draw(d: &mut dyn Draw, t: &dyn Targets, sizes: &Sizes) -> Self {
        Partition::random(d, t, sizes)
    }

    /// Its `duration`.
    fn magnitude(&self) -> Option<Duration> {
        Some(self.duration)
    }

    fn set_magnitude(&mut self, d: Duration) {
        self.duration = d;
    }

    fn apply<M: Message>(&self, w: &mut World<M>) {
        let pairs: Vec<(NodeId, NodeId)> = self
            .cut_pairs()
            .into_iter()
            .map(|(a, b)| (w.node_id(a), w.node_id(b)))
            .collect();
        for &(a, b) in &pairs {
            w.net.cut(a, b, false);
        }
        let groups = self.describe();
        let ms = self.duration.as_millis() as u64;
        w.record(
            None,
            events::PARTITION,
            vec![
                (field::GROUPS, groups.clone().into()),
                (field::DURATION_MS, ms.into()),
            ],
        );
        let until = w.now_ns() + self.duration.as_nanos() as u64;
        w.schedule_follow_up(until, FollowUp::Heal { pairs, groups });
    }
}

pub(crate) fn heal<M: Message>(w: &mut World<M>, pairs: &[(NodeId, NodeId)], groups: &str) {
    for &(a, b) in pairs {
        w.net.cut(a, b, true);
    }
    w.record(None, events::HEAL, vec![(field::GROUPS, groups.into())]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(one_way: bool) -> Partition {
        Partition {
            groups: vec![vec!["a".into()], vec!["b".into(), "c".into()]],
            duration: Duration::from_secs(1),
            one_way,
        }
    }

    #[test]
    fn symmetric_cuts_both_ways() {
        assert_eq!(
            p(false).cut_pairs(),
            vec![("a", "b"), ("a", "c"), ("b", "a"), ("c", "a")]
        );
    }

    #[test]
    fn one_way_cuts_only_from_the_first_group() {
        assert_eq!(p(true).cut_pairs(), vec![("a", "b"), ("a", "c")]);
    }
}
