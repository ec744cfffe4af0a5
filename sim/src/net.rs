//! The simulated network: per-link latency, loss and duplication, partitions,
//! and targeted rules ("delay the next message from client1 to storage").
//!
//! madsim's own network has one global latency range and no duplication, so
//! the world routes messages itself, on madsim's time. This module decides a
//! message's fate; the world schedules its delivery.

use std::collections::BTreeMap;
use std::time::Duration;

use rand::{Rng, RngCore};

use crate::actor::NodeId;
use crate::events::reason;

/// Behaviour of one directed link.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkConfig {
    /// Shortest one-way latency.
    pub latency_min: Duration,
    /// Longest one-way latency; latencies are uniform in `[min, max]`.
    pub latency_max: Duration,
    /// Probability that a message is lost, in `[0, 1)`.
    pub loss: f64,
    /// Probability that a message is delivered twice, in `[0, 1)`.
    pub duplicate: f64,
}

impl Default for LinkConfig {
    fn default() -> Self {
        LinkConfig {
            latency_min: Duration::from_millis(1),
            latency_max: Duration::from_millis(5),
            loss: 0.0,
            duplicate: 0.0,
        }
    }
}

/// The network of a world: a default link and per-link overrides by node name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NetConfig {
    /// Every link not overridden.
    pub default: LinkConfig,
    /// Overrides for directed links `(from, to)`.
    pub links: Vec<(String, String, LinkConfig)>,
}

/// What a targeted rule does to the messages it matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RuleAction {
    Delay(Duration),
    Drop,
    Duplicate,
}

impl RuleAction {
    pub(crate) fn name(self) -> &'static str {
        match self {
            RuleAction::Delay(_) => "delay",
            RuleAction::Drop => "drop",
            RuleAction::Duplicate => "duplicate",
        }
    }
}

/// A rule armed on a directed link (or on every link into `to`, with no
/// `from`): it applies to the next `remaining` messages, or to every message
/// until `until_ns`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LinkRule {
    pub id: u64,
    pub from: Option<NodeId>,
    pub to: NodeId,
    pub action: RuleAction,
    pub remaining: Option<u64>,
    pub until_ns: Option<u64>,
}

/// What happens to one message.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Fate {
    /// Lost, for the given reason (`loss`, `partition`, `fault`).
    Dropped(&'static str),
    /// Delivered after each latency (two entries: duplicated).
    Delivered {
        latencies: Vec<Duration>,
        extra: Duration,
    },
}

#[derive(Debug)]
pub(crate) struct Network {
    default: LinkConfig,
    links: BTreeMap<(NodeId, NodeId), LinkConfig>,
    /// Directed cuts with the number of partitions that make them.
    cuts: BTreeMap<(NodeId, NodeId), u32>,
    rules: Vec<LinkRule>,
    next_rule: u64,
}

impl Network {
    pub(crate) fn new(default: LinkConfig, links: BTreeMap<(NodeId, NodeId), LinkConfig>) -> Self {
        Network {
            default,
            links,
            cuts: BTreeMap::new(),
            rules: Vec::new(),
            next_rule: 0,
        }
    }

    /// Cuts (or, with `heal`, restores) the directed link `from → to`.
    pub(crate) fn cut(&mut self, from: NodeId, to: NodeId, heal: bool) {
        let count = self.cuts.entry((from, to)).or_insert(0);
        if heal {
            *count = count.checked_sub(1).expect("heal without a cut");
            if *count == 0 {
                self.cuts.remove(&(from, to));
            }
        } else {
            *count += 1;
        }
    }

    pub(crate) fn is_cut(&self, from: NodeId, to: NodeId) -> bool {
        self.cuts.contains_key(&(from, to))
    }

    /// Arms a rule and returns its id.
    pub(crate) fn arm(
        &mut self,
        from: Option<NodeId>,
        to: NodeId,
        action: RuleAction,
        remaining: Option<u64>,
        until_ns: Option<u64>,
    ) -> u64 {
        let id = self.next_rule;
        self.next_rule += 1;
        self.rules.push(LinkRule {
            id,
            from,
            to,
            action,
            remaining,
            until_ns,
        });
        id
    }

    /// Removes a rule (its window ended); a rule already used up is gone.
    pub(crate) fn disarm(&mut self, id: u64) {
        self.rules.retain(|r| r.id != id);
    }

    /// Decides the fate of a message sent now on `from → to`.
    pub(crate) fn route(
        &mut self,
        from: NodeId,
        to: NodeId,
        now_ns: u64,
        rng: &mut dyn RngCore,
    ) -> Fate {
        if self.is_cut(from, to) {
            return Fate::Dropped(reason::PARTITION);
        }
        let (mut drop, mut extra, mut duplicate) = (false, Duration::ZERO, false);
        for rule in &mut self.rules {
            let live = rule.remaining != Some(0) && rule.until_ns.is_none_or(|u| now_ns < u);
            if rule.from.is_some_and(|f| f != from) || rule.to != to || !live {
                continue;
            }
            if let Some(n) = rule.remaining.as_mut() {
                *n -= 1;
            }
            match rule.action {
                RuleAction::Drop => drop = true,
                RuleAction::Delay(d) => extra += d,
                RuleAction::Duplicate => duplicate = true,
            }
        }
        self.rules.retain(|r| r.remaining != Some(0));
        if drop {
            return Fate::Dropped(reason::FAULT);
        }
        let link = self.links.get(&(from, to)).unwrap_or(&self.default);
        if link.loss > 0.0 && rng.gen_bool(link.loss) {
            return Fate::Dropped(reason::LOSS);
        }
        let copies = if duplicate || (link.duplicate > 0.0 && rng.gen_bool(link.duplicate)) {
            2
        } else {
            1
        };
        let (lo, hi) = (link.latency_min, link.latency_max);
        let latencies = (0..copies)
            .map(|_| if lo >= hi { lo } else { rng.gen_range(lo..=hi) })
            .collect();
        Fate::Delivered { latencies, extra }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn net() -> Network {
        Network::new(LinkConfig::default(), BTreeMap::new())
    }

    #[test]
    fn counted_rules_apply_to_the_next_messages_only() {
        let mut n = net();
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        n.arm(
            Some(0),
            1,
            RuleAction::Delay(Duration::from_secs(20)),
            Some(1),
            None,
        );
        let first = n.route(0, 1, 0, &mut rng);
        let second = n.route(0, 1, 0, &mut rng);
        assert!(matches!(first, Fate::Delivered { extra, .. } if extra == Duration::from_secs(20)));
        assert!(matches!(second, Fate::Delivered { extra, .. } if extra.is_zero()));
    }

    #[test]
    fn rules_match_their_direction_only() {
        let mut n = net();
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        n.arm(Some(0), 1, RuleAction::Drop, Some(1), None);
        assert!(matches!(n.route(1, 0, 0, &mut rng), Fate::Delivered { .. }));
        assert_eq!(n.route(0, 1, 0, &mut rng), Fate::Dropped("fault"));
    }

    #[test]
    fn a_rule_without_a_sender_holds_every_message_to_its_node() {
        let mut n = net();
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        n.arm(
            None,
            2,
            RuleAction::Delay(Duration::from_secs(3)),
            None,
            Some(100),
        );
        for from in [0, 1] {
            let fate = n.route(from, 2, 50, &mut rng);
            assert!(
                matches!(fate, Fate::Delivered { extra, .. } if extra == Duration::from_secs(3))
            );
        }
        assert!(
            matches!(n.route(2, 0, 50, &mut rng), Fate::Delivered { extra, .. } if extra.is_zero())
        );
    }

    #[test]
    fn window_rules_end_at_their_time() {
        let mut n = net();
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        n.arm(Some(0), 1, RuleAction::Drop, None, Some(100));
        assert_eq!(n.route(0, 1, 99, &mut rng), Fate::Dropped("fault"));
        assert_eq!(n.route(0, 1, 99, &mut rng), Fate::Dropped("fault"));
        assert!(matches!(
            n.route(0, 1, 100, &mut rng),
            Fate::Delivered { .. }
        ));
    }

    #[test]
    fn overlapping_partitions_heal_one_at_a_time() {
        let mut n = net();
        n.cut(0, 1, false);
        n.cut(0, 1, false);
        n.cut(0, 1, true);
        assert!(n.is_cut(0, 1));
        n.cut(0, 1, true);
        assert!(!n.is_cut(0, 1));
    }

    #[test]
    fn latency_stays_in_range_and_duplicates_double() {
        let mut n = net();
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        n.arm(Some(0), 1, RuleAction::Duplicate, Some(1), None);
        let Fate::Delivered { latencies, .. } = n.route(0, 1, 0, &mut rng) else {
            panic!("dropped")
        };
        assert_eq!(latencies.len(), 2);
        for _ in 0..100 {
            let Fate::Delivered { latencies, .. } = n.route(0, 1, 0, &mut rng) else {
                panic!("dropped")
            };
            let l = latencies[0];
            assert!(l >= Duration::from_millis(1) && l <= Duration::from_millis(5));
        }
    }
}
