//! `fencesim audit`: the planted locks of `tests/fixtures/audit/` found at
//! their lines and judged as planted, the decoys ignored, the order
//! deterministic, the JSON as `docs/cli.md` documents it, the exit codes,
//! and what the walk skips.
//!
//! A fixture line that plants a finding says so in a comment:
//! `audit: KIND fenced=yes|no|unknown`. Every other line must give none.

mod cli;
mod fixtures;
mod fuzz;
mod walk;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

/// The crate root: where `scenarios/`, `docs/` and the fixtures are.
pub fn crate_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The fixture tree, as a path relative to the crate root.
pub const FIXTURES: &str = "tests/fixtures/audit";

/// What one run of the binary gave.
#[derive(Debug)]
pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `fencesim ARGS` in `dir`.
pub fn fencesim_in(dir: &Path, args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_fencesim"))
        .args(args)
        .current_dir(dir)
        .env_remove("CARGO")
        .output()
        .expect("the fencesim binary runs");
    let out = Output {
        code: output
            .status
            .code()
            .unwrap_or_else(|| panic!("`fencesim {}` died by a signal", args.join(" "))),
        stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
    };
    for text in [&out.stdout, &out.stderr] {
        assert!(
            !text.contains("panicked"),
            "`fencesim {}` panicked:\n{text}",
            args.join(" ")
        );
    }
    out
}

/// Runs `fencesim ARGS` from the crate root, as a user in a checkout.
pub fn fencesim(args: &[&str]) -> Output {
    fencesim_in(crate_root(), args)
}

/// A fresh directory for one test, removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(test: &str) -> TempDir {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("fencesim-audit-{}-{n}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create the test's temp dir");
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Writes `text` to `name` under the directory (parents created).
    pub fn write(&self, name: &str, text: &[u8]) -> PathBuf {
        let path = self.0.join(name);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("create dirs");
        std::fs::write(&path, text).expect("write");
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
