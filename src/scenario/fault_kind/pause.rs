//! `kind = "pause"`: `node` runs nothing for `duration`.

use sim::fault::{Fault, Pause, Trigger};

use super::super::load::node;
use super::super::model::ExploreSpec;
use super::super::reader::{Result, Table};
use super::super::write::{duration, string};
use super::{FaultKind, Key};

pub(super) struct Kind;

impl FaultKind for Kind {
    fn name(&self) -> &'static str {
        "pause"
    }

    fn keys(&self) -> &'static [&'static str] {
        &["node", "duration"]
    }

    fn read(&self, table: &mut Table<'_>, nodes: &[String]) -> Result<Fault> {
        Ok(Fault::Pause(Pause {
            node: node(&table.require("node")?, nodes)?,
            duration: table
                .require("duration")?
                .positive_duration("a pause's `duration`")?,
        }))
    }

    fn write(&self, fault: &Fault) -> Vec<Key> {
        let p = pause(fault);
        vec![
            ("node", string(&p.node)),
            ("duration", duration(p.duration)),
        ]
    }

    fn anchor<'f>(&self, fault: &'f Fault) -> Option<&'f str> {
        Some(&pause(fault).node)
    }

    /// A pause of `node` as long as `max_pause`: longer than any bundled TTL.
    fn menu(&self, node: &str, _: &[String], spec: &ExploreSpec) -> Vec<Fault> {
        vec![Fault::Pause(Pause {
            node: node.to_owned(),
            duration: spec.max_pause,
        })]
    }

    fn menu_len(&self, _: usize) -> u64 {
        1
    }

    /// "a pause of {} after client1:acquired" when the paused node's own
    /// event triggers it; else the node is named.
    fn margin_words(&self, fault: &Fault, trigger: &Trigger, after: &str) -> String {
        let p = pause(fault);
        match trigger {
            Trigger::After { node, .. } if *node == p.node => format!("a pause of {{}} {after}"),
            _ => format!("a pause of {} of {{}} {after}", p.node),
        }
    }
}

fn pause(fault: &Fault) -> &Pause {
    match fault {
        Fault::Pause(p) => p,
        other => unreachable!("a {} is not a pause", other.kind()),
    }
}
