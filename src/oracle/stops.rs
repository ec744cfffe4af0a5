//! When each node ran nothing: the stretches from a `pause` or a `crash`
//! to the `resume` or `restart` that ended it, as the history indexes them
//! ([`super::history::History::stops`]) for the timeline and the figure.

use sim::journal::Event;

/// A stretch in which a node ran nothing: from a `pause` or a `crash` to
/// the `resume` or `restart` that ended it. Each pause and each crash opens
/// one; a resume or restart ends the node's earliest open one (a node
/// powered off while paused stays both until it runs again).
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

/// The stops of a journal so far.
#[derive(Debug, Default)]
pub(crate) struct Stops<'a> {
    /// Ended, in the order they ended.
    ended: Vec<Stop<'a>>,
    /// Open, in the order they began.
    open: Vec<Stop<'a>>,
}

impl<'a> Stops<'a> {
    /// A node's pause (`down` false) or crash (`down` true).
    pub fn open(&mut self, e: &'a Event, down: bool) {
        self.open.push(Stop {
            node: e.node.as_str(),
            down,
            from_seq: e.seq,
            from_t_ns: e.t_ns,
            to: None,
        });
    }

    /// A node's resume or restart: ends its earliest open stop.
    pub fn close(&mut self, e: &'a Event) {
        if let Some(i) = self.open.iter().position(|s| s.node == e.node) {
            let mut ended = self.open.remove(i);
            ended.to = Some((e.seq, e.t_ns));
            self.ended.push(ended);
        }
    }

    /// Every stop: the ended ones in the order they ended, then the open
    /// ones in the order they began.
    pub fn finish(mut self) -> Vec<Stop<'a>> {
        self.ended.append(&mut self.open);
        self.ended
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_powered_off_while_paused_stays_both() {
        let e = |seq: u64, node: &str| Event::new(seq, seq, node, 0, "x");
        let events = [e(0, "a"), e(1, "b"), e(2, "a"), e(3, "b")];
        let mut stops = Stops::default();
        stops.open(&events[0], false);
        stops.open(&events[1], false);
        stops.open(&events[2], true);
        stops.close(&events[3]);
        let got: Vec<_> = stops
            .finish()
            .iter()
            .map(|s| (s.node, s.what(), s.from_seq, s.to.map(|(seq, _)| seq)))
            .collect();
        assert_eq!(
            got,
            [
                ("b", "paused", 1, Some(3)),
                ("a", "paused", 0, None),
                ("a", "down", 2, None)
            ]
        );
    }
}
