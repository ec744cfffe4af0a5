//! `kind = "crash"`: `node` crashes, and restarts after `restart_after`
//! when given.

use sim::fault::{Crash, Fault, Trigger};

use super::super::load::node;
use super::super::model::ExploreSpec;
use super::super::reader::{Result, Table};
use super::super::write::{duration, string};
use super::{FaultKind, Key};

pub(super) struct Kind;

impl FaultKind for Kind {
    fn name(&self) -> &'static str {
        "crash"
    }

    fn keys(&self) -> &'static [&'static str] {
        &["node", "restart_after"]
    }

    fn read(&self, table: &mut Table<'_>, nodes: &[String]) -> Result<Fault> {
        Ok(Fault::Crash(Crash {
            node: node(&table.require("node")?, nodes)?,
            restart_after: table
                .get("restart_after")
                .map(|f| f.duration())
                .transpose()?,
        }))
    }

    fn write(&self, fault: &Fault) -> Vec<Key> {
        let c = crash(fault);
        let mut keys = vec![("node", string(&c.node))];
        if let Some(d) = c.restart_after {
            keys.push(("restart_after", duration(d)));
        }
        keys
    }

    fn anchor<'f>(&self, fault: &'f Fault) -> Option<&'f str> {
        Some(&crash(fault).node)
    }

    /// A crash of `node`, restarting after `max_restart`.
    fn menu(&self, node: &str, _: &[String], spec: &ExploreSpec) -> Vec<Fault> {
        vec![Fault::Crash(Crash {
            node: node.to_owned(),
            restart_after: Some(spec.max_restart),
        })]
    }

    fn menu_len(&self, _: usize) -> u64 {
        1
    }

    fn margin_words(&self, fault: &Fault, _: &Trigger, after: &str) -> String {
        format!("a crash of {} down for {{}} {after}", crash(fault).node)
    }
}

fn crash(fault: &Fault) -> &Crash {
    match fault {
        Fault::Crash(c) => c,
        other => unreachable!("a {} is not a crash", other.kind()),
    }
}
