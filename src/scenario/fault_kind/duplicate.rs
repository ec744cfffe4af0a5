//! `kind = "duplicate"`: messages on a link (`from`, `to`) delivered
//! twice, for `count` messages or a `duration` window.

use sim::fault::{Duplicate, Fault};

use super::super::reader::{Result, Table};
use super::{link, FaultKind, Key};

pub(super) struct Kind;

impl FaultKind for Kind {
    fn name(&self) -> &'static str {
        "duplicate"
    }

    fn keys(&self) -> &'static [&'static str] {
        &["from", "to", "count", "duration"]
    }

    fn read(&self, table: &mut Table<'_>, nodes: &[String]) -> Result<Fault> {
        let (from, to) = link::read_ends(table, nodes)?;
        let scope = link::read_scope(table)?;
        Ok(Fault::Duplicate(Duplicate { from, to, scope }))
    }

    fn write(&self, fault: &Fault) -> Vec<Key> {
        let d = duplicate(fault);
        let mut keys = link::ends(&d.from, &d.to);
        keys.push(link::scope(d.scope));
        keys
    }

    fn anchor<'f>(&self, fault: &'f Fault) -> Option<&'f str> {
        Some(&duplicate(fault).from)
    }
}

fn duplicate(fault: &Fault) -> &Duplicate {
    match fault {
        Fault::Duplicate(d) => d,
        other => unreachable!("a {} is not a duplicate", other.kind()),
    }
}
