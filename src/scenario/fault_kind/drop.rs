//! `kind = "drop"`: messages on a link (`from`, `to`) lost, for `count`
//! messages or a `duration` window.

use sim::fault::{Drop, Fault};

use super::super::reader::{Result, Table};
use super::{link, FaultKind, Key};

pub(super) struct Kind;

impl FaultKind for Kind {
    fn name(&self) -> &'static str {
        "drop"
    }

    fn keys(&self) -> &'static [&'static str] {
        &["from", "to", "count", "duration"]
    }

    fn read(&self, table: &mut Table<'_>, nodes: &[String]) -> Result<Fault> {
        let (from, to) = link::read_ends(table, nodes)?;
        let scope = link::read_scope(table)?;
        Ok(Fault::Drop(Drop { from, to, scope }))
    }

    fn write(&self, fault: &Fault) -> Vec<Key> {
        let d = dropped(fault);
        let mut keys = link::ends(&d.from, &d.to);
        keys.push(link::scope(d.scope));
        keys
    }

    fn anchor<'f>(&self, fault: &'f Fault) -> Option<&'f str> {
        Some(&dropped(fault).from)
    }
}

fn dropped(fault: &Fault) -> &Drop {
    match fault {
        Fault::Drop(d) => d,
        other => unreachable!("a {} is not a drop", other.kind()),
    }
}
