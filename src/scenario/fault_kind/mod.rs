//! Fault kinds, as a scenario file, a search and a report see them: one
//! [`FaultKind`] per kind, each in its own file, beside its runtime half
//! in `sim::fault`. The loader, the writer and the searches go through
//! [`KINDS`] instead of matching on the kind. The simulator's one list of
//! kinds (`sim::fault_kinds!`) declares each kind's module here, named as
//! its module there, and its `Kind`: a new kind is its simulator file, its
//! file here and its place in `sim/src/fault/mod.rs` (that list, `KINDS`
//! and `WEIGHTS`).
//!
//! ```text
//! fault_kind::named("pause").unwrap().keys() == ["node", "duration"]
//! fault_kind::of(&fault).write(&fault)        == [("node", "\"client1\""), ("duration", "\"15s\"")]
//! ```

mod link;

use std::time::Duration;

use sim::fault::{Fault, Trigger};

use super::model::ExploreSpec;
use super::reader::{Result, Table};

/// A TOML key and its value as a scenario file writes it (`"15s"` quoted).
pub(crate) type Key = (&'static str, String);

/// One kind of fault: its keys in a scenario file, how it is read and
/// written back, where random triggers anchor it, how guided search
/// mutates it, what exhaustive search injects, and how margins name it.
///
/// Each method other than [`FaultKind::name`] and [`FaultKind::keys`] is
/// called only with a [`Fault`] of this kind.
pub(crate) trait FaultKind: Sync {
    /// The kind's name, as scenario files and the journal spell it: the
    /// simulator's own (`sim::fault::Fault::kind`).
    fn name(&self) -> &'static str;

    /// The keys its `[[faults]]` table takes besides the trigger's, in the
    /// order error messages and `accepted_keys` list them.
    fn keys(&self) -> &'static [&'static str];

    /// Reads the fault from its table (the trigger already read), with
    /// the loader's errors.
    fn read(&self, table: &mut Table<'_>, nodes: &[String]) -> Result<Fault>;

    /// Its keys as `read` takes them back, in that order (without `kind`
    /// and the trigger).
    fn write(&self, fault: &Fault) -> Vec<Key>;

    /// The node whose own events best anchor a random trigger for it: the
    /// one it hits, or a link fault's sender. `None`: it anchors on a
    /// server's or a client's event.
    fn anchor<'f>(&self, fault: &'f Fault) -> Option<&'f str>;

    /// Guided search's mutation: makes it last longer or hit harder by
    /// `factor` percent (150 to 200). By default, its magnitude
    /// (`Fault::magnitude`, a whole number of milliseconds, at least
    /// 100 ms before scaling) and one more message, or a longer window, of a
    /// link fault's scope.
    fn lengthen(&self, fault: &mut Fault, factor: u64) {
        if let Some(m) = fault.magnitude() {
            fault.set_magnitude(longer(m, factor));
        }
        if let Some(scope) = fault.scope_mut() {
            link::lengthen(scope, factor);
        }
    }

    /// What exhaustive search injects right after an event of `node`, at
    /// the largest sizes of `spec` (`nodes`: every node of the scenario).
    /// Nothing by default.
    fn menu(&self, node: &str, nodes: &[String], spec: &ExploreSpec) -> Vec<Fault> {
        let _ = (node, nodes, spec);
        Vec::new()
    }

    /// How many faults [`FaultKind::menu`] gives at one event boundary of
    /// a scenario with `nodes` nodes, without building them.
    fn menu_len(&self, nodes: usize) -> u64 {
        let _ = nodes;
        0
    }

    /// How a margin row names its kind (`clock_jump` for a clock change).
    fn margin_name(&self) -> &'static str {
        self.name()
    }

    /// A margin row's words for the fault, `{}` standing for its magnitude
    /// and `after` for its trigger in words (`after client1:acquired`).
    fn margin_words(&self, fault: &Fault, trigger: &Trigger, after: &str) -> String {
        let _ = (fault, trigger);
        format!("a {} of {{}} {after}", self.name())
    }

    /// How a report's sentence ends for the messages a link rule of this
    /// kind was armed on ("will be lost"), `extra` being the journaled
    /// extra latency in words. `None`: the kind arms no link rule.
    fn link_effect(&self, extra: Option<String>) -> Option<String> {
        let _ = extra;
        None
    }

    /// The node a margin row names: every node the fault names, by
    /// default.
    fn margin_node(&self, fault: &Fault) -> String {
        fault.nodes().join(",")
    }

    /// A link fault's sender (`None`: every sender) and receiver, as a
    /// margin row's JSON gives them; `None` for a fault on no link.
    fn link(&self, fault: &Fault) -> Option<(Option<String>, String)> {
        let _ = fault;
        None
    }

    /// A margin row's `direction` (a clock jump's `forward` or `back`).
    fn direction(&self, fault: &Fault) -> Option<&'static str> {
        let _ = fault;
        None
    }
}

/// Declares each kind's module and lists its `Kind` in [`KINDS`].
macro_rules! register {
    ($( $(#[$doc:meta])* $module:ident : $variant:ident($ty:ident) ),* $(,)?) => {
        $( mod $module; )*

        /// Every kind, in the simulator's order of its variants: the order
        /// the loader's messages and the format's reference list them.
        pub(crate) const KINDS: &[&dyn FaultKind] = &[$( &$module::Kind ),*];
    };
}

sim::fault_kinds!(register);

/// The kind named `name`, as scenario files spell it.
pub(crate) fn named(name: &str) -> Option<&'static dyn FaultKind> {
    KINDS.iter().copied().find(|k| k.name() == name)
}

/// The kind of `fault`.
///
/// # Panics
/// If the simulator has a kind that [`KINDS`] lacks (a unit test checks
/// they agree).
pub(crate) fn of(fault: &Fault) -> &'static dyn FaultKind {
    named(fault.kind()).unwrap_or_else(|| panic!("fault kind `{}` has no FaultKind", fault.kind()))
}

/// Half again to twice as long: `t` (at least 100 ms) times `factor`
/// percent, in whole milliseconds.
pub(crate) fn longer(t: Duration, factor: u64) -> Duration {
    Duration::from_millis((t.as_millis() as u64).max(100) * factor / 100)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kind the simulator has and the scenario layer cannot read (or the
    /// other way round) fails here, not in a user's file.
    #[test]
    fn every_kind_of_the_simulator_has_one_fault_kind() {
        let mut ours: Vec<&str> = KINDS.iter().map(|k| k.name()).collect();
        let mut theirs = sim::fault::KINDS.to_vec();
        ours.sort_unstable();
        theirs.sort_unstable();
        assert_eq!(ours, theirs);
    }
}
