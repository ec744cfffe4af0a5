//! What the link faults (delay, drop, duplicate) share: `from` and `to`,
//! and a scope of `count` messages or a `duration` window.

use sim::fault::Scope;

use super::super::faults::link as read_link;
use super::super::reader::{Result, Table};
use super::super::write::{duration, string};
use super::{longer, Key};

/// The most messages a `count` names.
const MAX_COUNT: u64 = 1_000_000;

/// The keys of a fault on one link (a drop's, a duplicate's).
pub(super) const KEYS: &[&str] = &["from", "to", "count", "duration"];

/// A fault on one link: its ends and its scope.
pub(super) fn read(table: &mut Table<'_>, nodes: &[String]) -> Result<(String, String, Scope)> {
    let (from, to) = read_ends(table, nodes)?;
    Ok((from, to, read_scope(table)?))
}

/// A fault on one link, as [`read`] takes it back.
pub(super) fn write(from: &str, to: &str, s: Scope) -> Vec<Key> {
    let mut keys = ends(from, to);
    keys.push(scope(s));
    keys
}

/// `from` and `to`: two different, known nodes.
pub(super) fn read_ends(table: &mut Table<'_>, nodes: &[String]) -> Result<(String, String)> {
    read_link(table, nodes)
}

/// `count` or `duration` (a window), never both; neither means the next message.
pub(super) fn read_scope(table: &mut Table<'_>) -> Result<Scope> {
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

/// `from` and `to` as written back.
pub(super) fn ends(from: &str, to: &str) -> Vec<Key> {
    vec![("from", string(from)), ("to", string(to))]
}

/// A link fault's `count` or window `duration`.
pub(super) fn scope(scope: Scope) -> Key {
    match scope {
        Scope::Window(w) => ("duration", duration(w)),
        Scope::Count(n) => ("count", n.to_string()),
    }
}

/// One more message, or a window `factor` percent as long.
pub(super) fn lengthen(scope: &mut Scope, factor: u64) {
    match scope {
        Scope::Count(n) => *n += 1,
        Scope::Window(w) => *w = longer(*w, factor),
    }
}
