//! Scenario files: TOML in scenario format version 1 (its reference is
//! `docs/format.md` in the repository), loaded into a validated [`Scenario`].
//!
//! Every mistake in a file is a [`ScenarioError`] naming the file, line and
//! column of the offending key or value; the loader never panics on input.
//! Defaults are filled in, so a [`Scenario`] needs no further checking.
//!
//! ```
//! use fencesim::design::catalog::Registry;
//! use fencesim::scenario::{load_str, Trigger};
//!
//! let text = r#"
//! name = "pause-after-acquire"
//! [lock]
//! design = "lease"
//! [storage]
//! design = "fenced"
//! [[clients]]
//! name = "client1"
//! [[faults]]
//! kind = "pause"
//! node = "client1"
//! after = "client1:acquired"
//! duration = "15s"
//! "#;
//! let scenario = load_str(&Registry::builtin(), "example.toml", text).unwrap();
//! assert_eq!(scenario.node_names(), ["client1", "lock", "storage"]);
//! assert!(matches!(scenario.faults[0].trigger, Trigger::After { nth: 1, .. }));
//!
//! let error = load_str(&Registry::builtin(), "bad.toml", "name = 3").unwrap_err();
//! assert_eq!(error.location(), "bad.toml:1:8");
//! ```

use std::path::Path;

use crate::design::catalog::Registry;

pub mod corpus;
pub mod error;
mod explore;
pub(crate) mod fault_kind;
mod faults;
mod file;
mod load;
pub mod model;
mod reader;
pub mod write;

pub use error::ScenarioError;
pub use file::MAX_FILE_BYTES;
pub(crate) use file::{read_regular, Kind as FileKind};
pub(crate) use load::node_name_problem;
pub use model::{
    ClientSpec, DesignSpec, Expect, ExploreSpec, Fault, FaultSpec, LinkSpec, NetworkSpec,
    ParamValue, Params, Scenario, Scope, Trigger, Verdict, Workload,
};
pub use write::to_toml;

/// Reads and validates the scenario file at `path`, checking its designs
/// against `registry`. A file that cannot be read is an error at line 0:
/// a symbolic link, anything but a regular file, and a file larger than
/// [`MAX_FILE_BYTES`] are refused, never followed or read in full. A file
/// that is not UTF-8 is an error at its first bad byte. Errors in a file
/// not named `*.toml` do not show its lines: it may not be a scenario.
pub fn load_file(registry: &Registry, path: &Path) -> Result<Scenario, ScenarioError> {
    let file = path.display().to_string();
    let text = file::read(path, &file)?;
    let named_toml = path.extension().is_some_and(|x| x == "toml");
    load_str(registry, &file, &text).map_err(|e| if named_toml { e } else { e.without_source() })
}

/// Validates the scenario `text`; `file` names it in errors and in
/// [`Scenario::file`].
pub fn load_str(registry: &Registry, file: &str, text: &str) -> Result<Scenario, ScenarioError> {
    load::scenario(registry, reader::Source { file, text })
}

/// The keys the loader accepts in each table of a scenario file, with the
/// table as error messages name it: `the top level`, `[network]`,
/// `[[network.links]]`, `[[clients]]`, `[expect]`, `[[faults]]` (the
/// trigger keys every fault takes), one entry per fault kind for its own
/// keys (``[[faults]] of kind `pause` ``, …) and `[explore]`. `[lock]` and `[storage]` take `design`
/// and their design's keys, listed by the [`Registry`].
///
/// ```
/// let tables = fencesim::scenario::accepted_keys();
/// let expect = tables.iter().find(|(table, _)| table == "[expect]").unwrap();
/// assert!(expect.1.contains(&"stale_writes"));
/// ```
pub fn accepted_keys() -> Vec<(String, Vec<&'static str>)> {
    let mut tables = load::table_keys();
    tables.extend(faults::table_keys());
    tables.push(("[explore]".to_owned(), explore::EXPLORE_KEYS.to_vec()));
    tables
}
