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
        link::KEYS
    }

    fn read(&self, table: &mut Table<'_>, nodes: &[String]) -> Result<Fault> {
        let (from, to, scope) = link::read(table, nodes)?;
        Ok(Fault::Duplicate(Duplicate { from, to, scope }))
    }

    fn write(&self, fault: &Fault) -> Vec<Key> {
        let d = duplicate(fault);
        link::write(&d.from, &d.to, d.scope)
    }

    fn anchor<'f>(&self, fault: &'f Fault) -> Option<&'f str> {
        Some(&duplicate(fault).from)
    }

    fn link(&self, fault: &Fault) -> Option<(Option<String>, String)> {
        let d = duplicate(fault);
        Some((Some(d.from.clone()), d.to.clone()))
    }

    fn link_effect(&self, _: Option<String>) -> Option<String> {
        Some("will arrive twice".to_owned())
    }
}

fn duplicate(fault: &Fault) -> &Duplicate {
    match fault {
        Fault::Duplicate(d) => d,
        other => unreachable!("a {} is not a duplicate", other.kind()),
    }
}
