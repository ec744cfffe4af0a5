//! `kind = "partition"`: `groups` of nodes that cannot reach each other
//! for `duration`, both ways or `one_way`.

use sim::fault::{Fault, Partition, Trigger};

use super::super::load::node;
use super::super::reader::{Field, Result, Table};
use super::super::write::{duration, strings};
use super::{FaultKind, Key};

pub(super) struct Kind;

impl FaultKind for Kind {
    fn name(&self) -> &'static str {
        "partition"
    }

    fn keys(&self) -> &'static [&'static str] {
        &["groups", "duration", "one_way"]
    }

    fn read(&self, table: &mut Table<'_>, nodes: &[String]) -> Result<Fault> {
        Ok(Fault::Partition(Partition {
            groups: groups(&table.require("groups")?, nodes)?,
            duration: table
                .require("duration")?
                .positive_duration("a partition's `duration`")?,
            one_way: table
                .get("one_way")
                .map(|f| f.bool())
                .transpose()?
                .unwrap_or(false),
        }))
    }

    fn write(&self, fault: &Fault) -> Vec<Key> {
        let p = partition(fault);
        let groups: Vec<String> = p.groups.iter().map(|g| strings(g)).collect();
        vec![
            ("groups", format!("[{}]", groups.join(", "))),
            ("duration", duration(p.duration)),
            ("one_way", p.one_way.to_string()),
        ]
    }

    /// None: it cuts several nodes at once.
    fn anchor<'f>(&self, _: &'f Fault) -> Option<&'f str> {
        None
    }

    fn margin_words(&self, _: &Fault, _: &Trigger, after: &str) -> String {
        format!("a partition lasting {{}} {after}")
    }
}

fn partition(fault: &Fault) -> &Partition {
    match fault {
        Fault::Partition(p) => p,
        other => unreachable!("a {} is not a partition", other.kind()),
    }
}

/// At least two groups of known nodes, none empty, no node in two.
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
