//! `[[faults]]`: each fault's kind, trigger and kind-specific keys.

use std::time::Duration;

use super::fault_kind::{self, KINDS};
use super::load::node;

use super::model::{FaultSpec, Trigger};
use super::reader::{did_you_mean, Field, Result, Table};

const MAX_FAULTS: usize = 1000;
/// Keys every fault takes: its kind and its trigger.
const TRIGGER_KEYS: &[&str] = &["kind", "at", "after", "delay"];

pub(crate) fn faults(field: &Field<'_>, nodes: &[String]) -> Result<Vec<FaultSpec>> {
    let tables = field.tables("faults")?;
    if let Some(extra) = tables.get(MAX_FAULTS) {
        return Err(extra.error(format!("too many faults: at most {MAX_FAULTS}")));
    }
    tables
        .into_iter()
        .map(|table| fault(table, nodes))
        .collect()
}

/// `[[faults]]` with the trigger keys, then each kind's own keys, for
/// [`super::accepted_keys`].
pub(crate) fn table_keys() -> Vec<(String, Vec<&'static str>)> {
    let mut tables = vec![("[[faults]]".to_owned(), TRIGGER_KEYS.to_vec())];
    for kind in KINDS {
        tables.push((
            format!("[[faults]] of kind `{}`", kind.name()),
            kind.keys().to_vec(),
        ));
    }
    tables
}

fn kind_names() -> Vec<&'static str> {
    KINDS.iter().map(|kind| kind.name()).collect()
}

fn fault(mut table: Table<'_>, nodes: &[String]) -> Result<FaultSpec> {
    let Some(kind_field) = table.get("kind") else {
        let mut any_key = TRIGGER_KEYS.to_vec();
        for key in KINDS.iter().flat_map(|kind| kind.keys()) {
            if !any_key.contains(key) {
                any_key.push(key);
            }
        }
        table.accept(&any_key)?;
        return Err(table.error(format!(
            "missing required key `kind` in {}; kinds: {}",
            table.what,
            kind_names().join(", ")
        )));
    };
    let kind_name = kind_field.str()?;
    let Some(kind) = fault_kind::named(kind_name) else {
        return Err(kind_field.error(format!(
            "unknown fault kind `{kind_name}`{}; kinds: {}",
            did_you_mean(kind_name, &kind_names()),
            kind_names().join(", ")
        )));
    };
    table.what = format!("{} of kind `{kind_name}`", table.what);
    let mut accepted = TRIGGER_KEYS.to_vec();
    accepted.extend_from_slice(kind.keys());
    table.accept(&accepted)?;

    let trigger = trigger(&mut table, nodes)?;
    let fault = kind.read(&mut table, nodes)?;
    let line = table.line();
    table.finish()?;
    Ok(FaultSpec {
        fault,
        trigger,
        line,
    })
}

fn trigger(table: &mut Table<'_>, nodes: &[String]) -> Result<Trigger> {
    let (at, after, delay) = (table.get("at"), table.get("after"), table.get("delay"));
    match (at, after) {
        (Some(_), Some(after)) => Err(after.key_error("a fault takes `at` or `after`, not both")),
        (None, None) => Err(table.error(format!(
            "missing trigger in {}: give `at = \"5s\"` (true time) or `after = \"node:event\"`",
            table.what
        ))),
        (Some(at), None) => {
            match delay {
                Some(delay) => Err(delay
                    .key_error("`delay` applies only to `after`; with `at`, add it to the time")),
                None => Ok(Trigger::At(at.duration()?)),
            }
        }
        (None, Some(after)) => {
            let (node, event, nth) = after_event(&after, nodes)?;
            let delay = delay
                .map(|f| f.duration())
                .transpose()?
                .unwrap_or(Duration::ZERO);
            Ok(Trigger::After {
                node,
                kind: event,
                nth,
                delay,
            })
        }
    }
}

/// `"node:event"` or `"node:event:N"`.
fn after_event(field: &Field<'_>, nodes: &[String]) -> Result<(String, String, u32)> {
    let text = field.str()?;
    let parts: Vec<&str> = text.split(':').collect();
    let (node_name, event, nth) = match parts.as_slice() {
        [node, event] => (*node, *event, None),
        [node, event, nth] => (*node, *event, Some(*nth)),
        _ => {
            return Err(field.error(format!(
                "invalid trigger \"{text}\": expected \"node:event\" or \"node:event:N\", such as \"client1:acquired\""
            )))
        }
    };
    if !nodes.iter().any(|n| n == node_name) {
        let names: Vec<&str> = nodes.iter().map(String::as_str).collect();
        return Err(field.error(format!(
            "unknown node `{node_name}` in `after`{}; known nodes: {}",
            did_you_mean(node_name, &names),
            names.join(", ")
        )));
    }
    let events: Vec<&str> = crate::events::DOMAIN_EVENTS
        .iter()
        .chain(sim::WORLD_EVENTS)
        .copied()
        .collect();
    // An event of fencesim's vocabulary, or one a design or process
    // journals of its own (`emit!`, probes), which the loader cannot list:
    // any other name is taken as such, unless it is a near miss of a known
    // one (a typo). One that never comes leaves the fault unfired, and the
    // run says so (exit 4).
    if !events.contains(&event) {
        let near = did_you_mean(event, &events);
        let word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.';
        if !near.is_empty() || event.is_empty() || !event.chars().all(word) {
            return Err(field.error(format!(
                "unknown event `{event}` in `after`{near}; fencesim's events: {} (a design's \
                 or process's own event is any other name of letters, digits, `_`, `-` and \
                 `.`)",
                events.join(", ")
            )));
        }
    }
    // The world journals these under its own name, never a node's: an
    // `after` on them would wait for ever.
    if matches!(event, sim::events::PARTITION | sim::events::HEAL) {
        return Err(field.error(format!(
            "`{event}` is journaled by the simulated world, not by `{node_name}`: no node logs it, \
             so `after = \"{node_name}:{event}\"` would never fire; trigger on a node's event \
             (such as \"{node_name}:send\") or at a time (`at`)"
        )));
    }
    let nth = match nth {
        None => 1,
        Some(n) => match n.parse::<u32>() {
            Ok(n) if n >= 1 => n,
            _ => {
                return Err(field.error(format!(
                    "invalid occurrence `{n}` in `after`: expected a whole number from 1 (\"{node_name}:{event}:2\" is the second)"
                )))
            }
        },
    };
    Ok((node_name.to_string(), event.to_string(), nth))
}

/// `from` and `to` of a link fault: two different, known nodes.
pub(crate) fn link(table: &mut Table<'_>, nodes: &[String]) -> Result<(String, String)> {
    let from = node(&table.require("from")?, nodes)?;
    let to_field = table.require("to")?;
    let to = node(&to_field, nodes)?;
    if from == to {
        return Err(to_field.error(format!(
            "`from` and `to` are both `{to}`: a link joins two different nodes"
        )));
    }
    Ok((from, to))
}
