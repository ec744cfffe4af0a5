//! The scenario loader as users meet it: files that load into the expected
//! model, and mistakes reported at the right `file:line:col`.

mod anchored;
mod bounds;
mod docs;
mod errors;
mod fuzz;
mod sandbox;
mod valid;

#[path = "../support/mod.rs"]
mod support;

use fencesim::design::catalog::Registry;
use fencesim::scenario::{load_str, Scenario, ScenarioError};
use support::{fencesim, TempDir};

/// The example of the format's contract, verbatim.
const FIGURE_9_6: &str = include_str!("figure-9-6.toml");

/// A minimal valid scenario: clients on lines 6-9, so tests append faults
/// from line 10 on.
const BASE: &str = r#"name = "t"
[lock]
design = "lease"
[storage]
design = "fenced"
[[clients]]
name = "client1"
[[clients]]
name = "client2"
"#;

fn load(text: &str) -> Result<Scenario, ScenarioError> {
    load_str(&Registry::builtin(), "t.toml", text)
}

/// Asserts that `text` fails at `location` (`t.toml:line:col`) with a
/// message containing `needle`, and returns the error.
#[track_caller]
fn assert_error(text: &str, location: &str, needle: &str) -> ScenarioError {
    let error = match load(text) {
        Ok(scenario) => panic!("expected an error at {location}, got {scenario:#?}"),
        Err(error) => error,
    };
    assert_eq!(error.location(), location, "wrong location for: {error}");
    assert!(
        error.message.contains(needle),
        "message lacks {needle:?}: {error}"
    );
    error
}
