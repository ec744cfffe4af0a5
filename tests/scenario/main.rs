//! The scenario loader as users meet it: files that load into the expected
//! model, and mistakes reported at the right `file:line:col`.

mod anchored;
mod bounds;
mod docs;
mod errors;
mod fuzz;
mod sandbox;
mod valid;

use std::path::{Path, PathBuf};
use std::process::Command;

use fencesim::design::catalog::Registry;
use fencesim::scenario::{load_str, Scenario, ScenarioError};

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

/// Runs the `fencesim` binary: its exit code, stdout and stderr.
fn fencesim(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_fencesim"))
        .args(args)
        .output()
        .expect("fencesim runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A fresh directory under the system's temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(test: &str) -> TempDir {
        let path =
            std::env::temp_dir().join(format!("fencesim-scenario-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("temp dir");
        TempDir(path)
    }

    fn path(&self) -> &Path {
        &self.0
    }

    /// Writes `text` to `name` in the directory and returns its path.
    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, text).expect("write scenario");
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
