//! `kind = "delay"`: messages on a link (`from`, `to`), or to `to` from
//! every sender, held back by `extra`, for `count` messages or a
//! `duration` window.

use sim::fault::{Delay, Fault, Scope, Trigger};

use super::super::load::node;
use super::super::model::ExploreSpec;
use super::super::reader::{Result, Table};
use super::super::write::{duration, string};
use super::{link, FaultKind, Key};

pub(super) struct Kind;

impl FaultKind for Kind {
    fn name(&self) -> &'static str {
        "delay"
    }

    fn keys(&self) -> &'static [&'static str] {
        &["from", "to", "extra", "count", "duration"]
    }

    fn read(&self, table: &mut Table<'_>, nodes: &[String]) -> Result<Fault> {
        let (from, to) = if table.has("from") {
            let (from, to) = link::read_ends(table, nodes)?;
            (Some(from), to)
        } else {
            (None, node(&table.require("to")?, nodes)?)
        };
        let extra = table.require("extra")?.positive_duration("`extra`")?;
        let scope = link::read_scope(table)?;
        Ok(Fault::Delay(Delay {
            from,
            to,
            extra,
            scope,
        }))
    }

    fn write(&self, fault: &Fault) -> Vec<Key> {
        let d = delay(fault);
        let mut keys = match &d.from {
            Some(from) => link::ends(from, &d.to),
            None => vec![("to", string(&d.to))],
        };
        keys.push(("extra", duration(d.extra)));
        keys.push(link::scope(d.scope));
        keys
    }

    /// The sender; a hold of every message to a node has none.
    fn anchor<'f>(&self, fault: &'f Fault) -> Option<&'f str> {
        delay(fault).from.as_deref()
    }

    fn link_effect(&self, extra: Option<String>) -> Option<String> {
        Some(match extra {
            Some(extra) => format!("will be held {extra} longer in the network"),
            None => "will be held longer in the network".to_owned(),
        })
    }

    /// The next message from `node` to each other node, `max_delay` late.
    fn menu(&self, node: &str, nodes: &[String], spec: &ExploreSpec) -> Vec<Fault> {
        nodes
            .iter()
            .filter(|n| *n != node)
            .map(|to| {
                Fault::Delay(Delay {
                    from: Some(node.to_owned()),
                    to: to.clone(),
                    extra: spec.max_delay,
                    scope: Scope::Count(1),
                })
            })
            .collect()
    }

    fn menu_len(&self, nodes: usize) -> u64 {
        nodes.saturating_sub(1) as u64
    }

    /// A delayed link's client: its sender on the write path to the
    /// storage, else its receiver.
    fn margin_node(&self, fault: &Fault) -> String {
        let d = delay(fault);
        match &d.from {
            Some(from) if d.to == "storage" => from.clone(),
            _ => d.to.clone(),
        }
    }

    fn link(&self, fault: &Fault) -> Option<(Option<String>, String)> {
        let d = delay(fault);
        Some((d.from.clone(), d.to.clone()))
    }

    fn margin_words(&self, fault: &Fault, _: &Trigger, after: &str) -> String {
        let d = delay(fault);
        format!(
            "a delay of {{}} on {} → {} {after}",
            d.from.as_deref().unwrap_or("*"),
            d.to
        )
    }
}

fn delay(fault: &Fault) -> &Delay {
    match fault {
        Fault::Delay(d) => d,
        other => unreachable!("a {} is not a delay", other.kind()),
    }
}
