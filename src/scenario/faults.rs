//! `[[faults]]`: each fault's kind, trigger and kind-specific keys.

use std::time::Duration;

use super::load::node;
use sim::fault::{ClockChange, Crash, Delay, Drop, Duplicate, Fault, Partition, Pause, Scope};

use super::model::{FaultSpec, Trigger};
use super::reader::{did_you_mean, Field, Result, Table};

const MAX_FAULTS: usize = 1000;
const MAX_COUNT: u64 = 1_000_000;
/// Keys every fault takes: its kind and its trigger.
const TRIGGER_KEYS: &[&str] = &["kind", "at", "after", "delay"];
/// Each kind of [`sim::fault::KINDS`] and the keys it takes besides
/// [`TRIGGER_KEYS`], in the order error messages list them.
const KINDS: &[(&str, &[&str])] = &[
    ("pause", &["node", "duration"]),
    ("clock", &["node", "offset", "rate", "jump"]),
    ("delay", &["from", "to", "extra", "count", "duration"]),
    ("drop", &["from", "to", "count", "duration"]),
    ("duplicate", &["from", "to", "count", "duration"]),
    ("partition", &["groups", "duration", "one_way"]),
    ("crash", &["node", "restart_after"]),
];

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
    for (kind, keys) in KINDS {
        tables.push((format!("[[faults]] of kind `{kind}`"), keys.to_vec()));
    }
    tables
}

fn kind_names() -> Vec<&'static str> {
    KINDS.iter().map(|(name, _)| *name).collect()
}

fn fault(mut table: Table<'_>, nodes: &[String]) -> Result<FaultSpec> {
    let Some(kind_field) = table.get("kind") else {
        let mut any_key = TRIGGER_KEYS.to_vec();
        for key in KINDS.iter().flat_map(|(_, keys)| keys.iter()) {
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
    let Some((kind_name, keys)) = KINDS.iter().find(|(name, _)| *name == kind_name) else {
        return Err(kind_field.error(format!(
            "unknown fault kind `{kind_name}`{}; kinds: {}",
            did_you_mean(kind_name, &kind_names()),
            kind_names().join(", ")
        )));
    };
    table.what = format!("{} of kind `{kind_name}`", table.what);
    let mut accepted = TRIGGER_KEYS.to_vec();
    accepted.extend_from_slice(keys);
    table.accept(&accepted)?;

    let trigger = trigger(&mut table, nodes)?;
    let fault = match *kind_name {
        "pause" => Fault::Pause(Pause {
            node: node(&table.require("node")?, nodes)?,
            duration: table
                .require("duration")?
                .positive_duration("a pause's `duration`")?,
        }),
        "clock" => Fault::Clock(clock(&mut table, nodes)?),
        "delay" => {
            let (from, to) = if table.has("from") {
                let (from, to) = link(&mut table, nodes)?;
                (Some(from), to)
            } else {
                (None, node(&table.require("to")?, nodes)?)
            };
            let extra = table.require("extra")?.positive_duration("`extra`")?;
            let scope = scope(&mut table)?;
            Fault::Delay(Delay {
                from,
                to,
                extra,
                scope,
            })
        }
        "drop" => {
            let (from, to) = link(&mut table, nodes)?;
            let scope = scope(&mut table)?;
            Fault::Drop(Drop { from, to, scope })
        }
        "duplicate" => {
            let (from, to) = link(&mut table, nodes)?;
            let scope = scope(&mut table)?;
            Fault::Duplicate(Duplicate { from, to, scope })
        }
        "partition" => Fault::Partition(Partition {
            groups: groups(&table.require("groups")?, nodes)?,
            duration: table
                .require("duration")?
                .positive_duration("a partition's `duration`")?,
            one_way: table
                .get("one_way")
                .map(|f| f.bool())
                .transpose()?
                .unwrap_or(false),
        }),
        "crash" => Fault::Crash(Crash {
            node: node(&table.require("node")?, nodes)?,
            restart_after: table
                .get("restart_after")
                .map(|f| f.duration())
                .transpose()?,
        }),
        other => unreachable!("fault kind `{other}` is in KINDS but has no reader"),
    };
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
    if !events.contains(&event) {
        return Err(field.error(format!(
            "unknown event `{event}` in `after`{}; events: {}",
            did_you_mean(event, &events),
            events.join(", ")
        )));
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

fn clock(table: &mut Table<'_>, nodes: &[String]) -> Result<ClockChange> {
    let node = node(&table.require("node")?, nodes)?;
    let offset = table
        .get("offset")
        .map(|f| f.signed_duration())
        .transpose()?;
    let jump = table.get("jump").map(|f| f.signed_duration()).transpose()?;
    let rate = match table.get("rate") {
        None => None,
        Some(field) => {
            let rate = field.f64()?;
            if !(rate > 0.0 && rate <= 100.0) {
                return Err(field.error(format!("`rate` must be in (0, 100], found {rate}")));
            }
            Some(rate)
        }
    };
    if offset.is_none() && rate.is_none() && jump.is_none() {
        return Err(table.error(format!(
            "{} needs at least one of `offset`, `rate` or `jump`",
            table.what
        )));
    }
    Ok(ClockChange {
        node,
        offset_ns: offset,
        rate,
        jump_ns: jump,
    })
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

/// `count` or `duration` (a window), never both; neither means the next message.
fn scope(table: &mut Table<'_>) -> Result<Scope> {
    match (table.get("count"), table.get("duration")) {
        (Some(_), Some(window)) => Err(window.key_error(
            "`count` and `duration` cannot both be given: the fault applies to the next `count` \
             messages or to every message in a `duration` window",
        )),
        (Some(count), None) => Ok(Scope::Count(count.u64_in(1, MAX_COUNT)?)),
        (None, Some(window)) => Ok(Scope::Window(
            window.positive_duration("the window `duration`")?,
        )),
        (None, None) => Ok(Scope::default()),
    }
}

fn groups(field: &Field<'_>, nodes: &[String]) -> Result<Vec<Vec<String>>> {
    let group_fields = field.array()?;
    if group_fields.len() < 2 {
        return Err(field.error(format!(
            "a partition needs at least 2 groups, found {}: groups = [[\"client1\"], [\"lock\", \"storage\"]]",
            group_fields.len()
        )));
    }
    let mut groups: Vec<Vec<String>> = Vec::new();
    for group_field in &group_fields {
        let members = group_field.array()?;
        if members.is_empty() {
            return Err(group_field.error("a partition group must name at least one node"));
        }
        let mut group = Vec::new();
        for member in &members {
            let name = node(member, nodes)?;
            if groups.iter().chain([&group]).any(|g| g.contains(&name)) {
                return Err(member.error(format!("node `{name}` is in two partition groups")));
            }
            group.push(name);
        }
        groups.push(group);
    }
    Ok(groups)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kind the simulator has and the loader cannot read (or the other way
    /// round) fails here, not in a user's file.
    #[test]
    fn the_loader_reads_every_kind_of_the_simulator() {
        let mut ours = kind_names();
        let mut theirs = sim::fault::KINDS.to_vec();
        ours.sort_unstable();
        theirs.sort_unstable();
        assert_eq!(ours, theirs);
    }
}
