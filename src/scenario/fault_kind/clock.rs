//! `kind = "clock"`: `node`'s clocks get an `offset`, a `rate` or a
//! `jump` (at least one of them).

use sim::fault::{ClockChange, Fault, Trigger};

use super::super::load::node;
use super::super::model::ExploreSpec;
use super::super::reader::{Result, Table};
use super::super::write::{float, signed, string};
use super::{FaultKind, Key};

pub(super) struct Kind;

impl FaultKind for Kind {
    fn name(&self) -> &'static str {
        "clock"
    }

    fn keys(&self) -> &'static [&'static str] {
        &["node", "offset", "rate", "jump"]
    }

    fn read(&self, table: &mut Table<'_>, nodes: &[String]) -> Result<Fault> {
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
        Ok(Fault::Clock(ClockChange {
            node,
            offset_ns: offset,
            rate,
            jump_ns: jump,
        }))
    }

    fn write(&self, fault: &Fault) -> Vec<Key> {
        let c = clock(fault);
        let mut keys = vec![("node", string(&c.node))];
        if let Some(ns) = c.offset_ns {
            keys.push(("offset", signed(ns)));
        }
        if let Some(r) = c.rate {
            keys.push(("rate", float(r)));
        }
        if let Some(ns) = c.jump_ns {
            keys.push(("jump", signed(ns)));
        }
        keys
    }

    fn anchor<'f>(&self, fault: &'f Fault) -> Option<&'f str> {
        Some(&clock(fault).node)
    }

    /// Scales both a jump and an offset, whichever the change has, each in
    /// whole milliseconds toward zero and with no 100 ms floor: unlike
    /// [`Fault::set_magnitude`], which only a pure jump has. Guided
    /// corpora and the seeds they find were drawn with this.
    fn lengthen(&self, fault: &mut Fault, factor: u64) {
        let Fault::Clock(c) = fault else {
            unreachable!("a {} is not a clock change", fault.kind())
        };
        let scaled = |ns: i64| (ns / 1_000_000) * factor as i64 / 100 * 1_000_000;
        c.jump_ns = c.jump_ns.map(scaled);
        c.offset_ns = c.offset_ns.map(scaled);
    }

    /// A forward jump of `node`'s wall clock by `max_jump`.
    fn menu(&self, node: &str, _: &[String], spec: &ExploreSpec) -> Vec<Fault> {
        vec![Fault::Clock(ClockChange {
            node: node.to_owned(),
            offset_ns: None,
            rate: None,
            jump_ns: Some(spec.max_jump.as_nanos() as i64),
        })]
    }

    fn menu_len(&self, _: usize) -> u64 {
        1
    }

    /// Its magnitude is a jump's.
    fn margin_name(&self) -> &'static str {
        "clock_jump"
    }

    fn margin_words(&self, fault: &Fault, _: &Trigger, after: &str) -> String {
        let c = clock(fault);
        format!(
            "a clock jump {} of {{}} on {} {after}",
            self.direction(fault).unwrap_or("forward"),
            c.node
        )
    }

    fn direction(&self, fault: &Fault) -> Option<&'static str> {
        Some(if clock(fault).jump_ns.unwrap_or(0) >= 0 {
            "forward"
        } else {
            "back"
        })
    }
}

fn clock(fault: &Fault) -> &ClockChange {
    match fault {
        Fault::Clock(c) => c,
        other => unreachable!("a {} is not a clock change", other.kind()),
    }
}
