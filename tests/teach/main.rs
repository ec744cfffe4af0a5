//! Tests of the teaching renderers: `fencesim step` (piped and interactive),
//! and `fencesim report` (Markdown with Mermaid, the HTML timeline, the
//! Perfetto trace, the index, byte-determinism).
//!
//! Renderers are driven through the library on bundled scenarios; the two
//! commands also through the real binary, as a user runs them.

mod crowd;
mod hostile;
mod html;
mod markdown;
mod perfetto;
mod report;
mod sentences;
mod step;
mod svg;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use fencesim::design::catalog::Registry;
use fencesim::report::lanes::LanesOptions;
use fencesim::report::step::Walk;
use fencesim::runner::{self, ScenarioRun};
use fencesim::scenario::{self, Scenario};

/// The crate root: where `scenarios/` is.
pub fn crate_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

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

/// Runs the binary from the crate root; returns (exit code, stdout, stderr).
pub fn fencesim(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_fencesim"))
        .args(args)
        .current_dir(crate_root())
        .env_remove("CARGO")
        .output()
        .expect("run fencesim");
    (
        out.status.code().expect("exited"),
        String::from_utf8(out.stdout).expect("utf-8 stdout"),
        String::from_utf8(out.stderr).expect("utf-8 stderr"),
    )
}

/// A fresh directory under the system temp dir, removed on drop.
pub struct TempDir(PathBuf);

impl Default for TempDir {
    fn default() -> TempDir {
        TempDir::new()
    }
}

impl TempDir {
    pub fn new() -> TempDir {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "fencesim-teach-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&path).expect("create temp dir");
        TempDir(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
