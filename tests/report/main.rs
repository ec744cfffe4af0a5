//! The renderers: the lanes, the step sentences, the Markdown with Mermaid,
//! the HTML timeline, the SVG figure, the Perfetto trace and the report
//! index, and the `step` and `report` commands.
//!
//! Each is driven through the library, from hand-built journals (a small
//! story each, like the oracle's tests) and from bundled scenarios; the two
//! commands also through the real binary, as a user runs them.

mod beliefs;
mod crowd;
mod hostile;
mod html;
mod lanes;
mod linear;
mod markdown;
mod perfetto;
mod report;
mod sentences;
mod step;
mod svg;

#[path = "../support/mod.rs"]
mod support;

use fencesim::design::catalog::Registry;
use fencesim::report::lanes::LanesOptions;
use fencesim::report::step::Walk;
use fencesim::runner::{self, ScenarioRun};
use fencesim::scenario::{self, Scenario};

pub use support::{crate_root, fencesim, TempDir};

/// A bundled scenario (`scenarios/NAME.toml`), loaded with its path
/// relative to the crate root, as a user in a checkout names it, and run
/// with its own seed.
pub fn bundled(name: &str) -> (Scenario, ScenarioRun) {
    let text = std::fs::read_to_string(crate_root().join(format!("scenarios/{name}.toml")))
        .expect("bundled scenario");
    let file = format!("scenarios/{name}.toml");
    let s = scenario::load_str(&Registry::builtin(), &file, &text).expect("valid scenario");
    let run = runner::run(&s, s.seed);
    (s, run)
}

/// The walk `fencesim step` takes through a bundled scenario.
pub fn walk(name: &str) -> Walk {
    let (s, run) = bundled(name);
    Walk::new(
        &s.name,
        &run.result.journal,
        &run.report,
        &run.nodes,
        &LanesOptions::default(),
        &format!("fencesim run {} --seed {}", s.file, s.seed),
    )
}
