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
        link::KEYS
    }

    fn read(&self, table: &mut Table<'_>, nodes: &[String]) -> Result<Fault> {
        let (from, to, scope) = link::read(table, nodes)?;
        Ok(Fault::Drop(Drop { from, to, scope }))
    }

    fn write(&self, fault: &Fault) -> Vec<Key> {
        let d = dropped(fault);
        link::write(&d.from, &d.to, d.scope)
    }

    fn anchor<'f>(&self, fault: &'f Fault) -> Option<&'f str> {
        Some(&dropped(fault).from)
    }

    fn link(&self, fault: &Fault) -> Option<(Option<String>, String)> {
        let d = dropped(fault);
        Some((Some(d.from.clone()), d.to.clone()))
    }

    fn link_effect(&self, _: Option<String>) -> Option<String> {
        Some("will be lost".to_owned())
    }
}

fn dropped(fault: &Fault) -> &Drop {
    match fault {
        Fault::Drop(d) => d,
        other => unreachable!("a {} is not a drop", other.kind()),
    }
}
