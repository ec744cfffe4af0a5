//! Reading a guided search's corpus file (`explore --guided --corpus FILE`):
//! TOML with one `[[entries]]` table per schedule, whose `faults` are the
//! inline tables of a scenario's `[[faults]]`. Errors point at the file's
//! line and column, as the scenario loader's do.
//!
//! ```toml
//! [[entries]]
//! seed = 12
//! milestones = ["holder_paused_past_lease", "lease_expired_while_held"]
//! faults = [
//!   { kind = "pause", node = "client1", duration = "9.5s", after = "client1:acquired" },
//! ]
//! ```

use super::error::ScenarioError;
use super::reader::{Source, Table};
use super::FaultSpec;

/// One `[[entries]]` table as read: the seed that first ran it, the names
/// of the milestones it reached, its faults.
pub type RawEntry = (u64, Vec<String>, Vec<FaultSpec>);

/// Reads the corpus `text` of `file`; faults may name only `nodes`, and
/// milestones only `names`.
pub fn read(
    file: &str,
    text: &str,
    nodes: &[String],
    names: &[&str],
) -> Result<Vec<RawEntry>, ScenarioError> {
    let src = Source { file, text };
    let doc = src.parse()?;
    let mut root = Table::root(src, &doc);
    root.accept(&["entries"])?;
    let Some(entries) = root.get("entries") else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for mut table in entries.tables("entries")? {
        table.accept(&["seed", "milestones", "faults"])?;
        let seed = table.require("seed")?.u64()?;
        let mut milestones = Vec::new();
        if let Some(field) = table.get("milestones") {
            for m in field.array()? {
                let name = m.str()?;
                if !names.contains(&name) {
                    return Err(m.error(format!(
                        "unknown milestone `{name}`; known: {}",
                        names.join(", ")
                    )));
                }
                milestones.push(name.to_owned());
            }
        }
        let faults = match table.get("faults") {
            Some(field) => super::faults::faults(&field, nodes)?,
            None => Vec::new(),
        };
        table.finish()?;
        out.push((seed, milestones, faults));
    }
    root.finish()?;
    Ok(out)
}
