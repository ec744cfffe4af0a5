//! When each node ran nothing: the stretches from a `pause` or a `crash`
//! to the `resume` or `restart` that ended it, read off the history's node
//! states ([`super::spans::Spans::states`]) for the timeline and the figure.

use super::spans::{NodeState, Spans};

/// A stretch in which a node ran nothing: from a `pause` or a `crash` to
/// the `resume` or `restart` that brought it up again. A pause while paused
/// is the same stretch; a node powered off while paused stays both until
/// it runs again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stop<'a> {
    pub node: &'a str,
    /// Down (crashed or powered off), else paused.
    pub down: bool,
    /// The journal position and true time of its `pause` or `crash`.
    pub from_seq: u64,
    pub from_t_ns: u64,
    /// Those of the event that ended it (`None`: still stopped at the end).
    pub to: Option<(u64, u64)>,
}

impl Stop<'_> {
    /// `paused` or `down`, as the reports say it.
    #[cfg(feature = "report")]
    pub fn what(&self) -> &'static str {
        if self.down {
            "down"
        } else {
            "paused"
        }
    }
}

/// Every stop of the journal whose node states are `spans`' : the ended
/// ones in the order they ended (those ended by one event in the order they
/// began), then the open ones in the order they began.
pub(crate) fn stops<'a>(spans: &Spans<'a>) -> Vec<Stop<'a>> {
    let mut changes: Vec<(&'a str, u64, u64, NodeState)> = spans
        .states
        .iter()
        .flat_map(|(&node, states)| {
            states
                .iter()
                .map(move |s| (node, s.from_seq, s.from_t_ns, s.state))
        })
        .collect();
    changes.sort_unstable_by_key(|&(_, seq, _, _)| seq);
    let mut ended = Vec::new();
    let mut open: Vec<Stop<'a>> = Vec::new();
    for (node, seq, t_ns, state) in changes {
        let stop = |down| Stop {
            node,
            down,
            from_seq: seq,
            from_t_ns: t_ns,
            to: None,
        };
        match state {
            NodeState::Paused(_) => {
                if !open.iter().any(|s| s.node == node && !s.down) {
                    open.push(stop(false));
                }
            }
            NodeState::Down(_) => open.push(stop(true)),
            NodeState::Up => {
                let (up, still): (Vec<Stop<'a>>, Vec<Stop<'a>>) =
                    open.into_iter().partition(|s| s.node == node);
                open = still;
                ended.extend(up.into_iter().map(|s| Stop {
                    to: Some((seq, t_ns)),
                    ..s
                }));
            }
        }
    }
    ended.append(&mut open);
    ended
}

#[cfg(test)]
mod tests {
    use sim::journal::{Event, Journal};

    use crate::oracle::history::History;
    use crate::oracle::Roles;

    fn stops(kinds: &[(&str, &str)]) -> Vec<(String, &'static str, u64, Option<u64>)> {
        let journal = Journal::from_events(
            kinds
                .iter()
                .enumerate()
                .map(|(t, &(node, kind))| Event::new(0, t as u64, node, 0, kind)),
        );
        let roles = Roles::default();
        History::index(&journal, &roles)
            .stops
            .iter()
            .map(|s| {
                (
                    s.node.to_owned(),
                    s.what(),
                    s.from_seq,
                    s.to.map(|(seq, _)| seq),
                )
            })
            .collect()
    }

    #[test]
    fn a_node_powered_off_while_paused_stays_both() {
        let got = stops(&[
            ("a", "pause"),
            ("b", "pause"),
            ("a", "crash"),
            ("b", "resume"),
        ]);
        let want = [
            ("b", "paused", 1, Some(3)),
            ("a", "paused", 0, None),
            ("a", "down", 2, None),
        ];
        assert_eq!(got, want.map(|(n, w, f, t)| (n.to_owned(), w, f, t)));
    }

    #[test]
    fn a_restart_ends_both_and_a_second_pause_is_the_same_stretch() {
        let got = stops(&[
            ("a", "pause"),
            ("a", "crash"),
            ("a", "restart"),
            ("b", "pause"),
            ("b", "pause"),
            ("b", "resume"),
        ]);
        let want = [
            ("a", "paused", 0, Some(2)),
            ("a", "down", 1, Some(2)),
            ("b", "paused", 3, Some(5)),
        ];
        assert_eq!(got, want.map(|(n, w, f, t)| (n.to_owned(), w, f, t)));
    }
}
