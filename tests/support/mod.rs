//! What every test binary shares: the crate root, a temporary directory
//! removed on drop, and one way to run the `fencesim` binary as a user runs
//! it, with one answer type ([`Output`]).
//!
//! Each binary includes it with `#[path = "../support/mod.rs"] mod support;`.
//!
//! ```ignore
//! let dir = TempDir::new("bad-seed");
//! let file = dir.write("s.toml", "name = \"x\"\nseed = \"one\"\n");
//! let out = fencesim(&["run", arg(&file)]);
//! assert_eq!(out.code(), 2, "{}", out.stderr_str());
//! ```

// Each binary uses a part of this module; the rest would warn there.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

/// The crate root: where `scenarios/`, `examples/`, `docs/` and the test
/// fixtures are, and where the binary runs unless told otherwise.
pub fn crate_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A path as a `&str` argument (temp dirs are UTF-8 on every CI we run).
pub fn arg(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

/// A fresh directory for one test's files, removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    /// A directory no other test (nor another run of the suite, nor another
    /// test binary) uses: named after the binary, the process, a counter
    /// and `test`.
    pub fn new(test: &str) -> TempDir {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!(
            "fencesim-{}-{}-{n}-{test}",
            env!("CARGO_CRATE_NAME"),
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create the test's temp dir");
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// `name` in this directory (not created).
    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// `name` in this directory, as a command-line argument.
    pub fn arg(&self, name: &str) -> String {
        self.join(name).display().to_string()
    }

    /// Writes `text` to `name` in this directory (parents created) and
    /// returns its path.
    pub fn write(&self, name: &str, text: impl AsRef<[u8]>) -> PathBuf {
        let path = self.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create parent dir");
        }
        std::fs::write(&path, text).expect("write the test's file");
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What one run of the binary gave.
#[derive(Debug)]
pub struct Output {
    /// The command line, for failure messages.
    pub args: Vec<String>,
    /// Exit code (a death by signal fails the test at once).
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    /// What `output` of the command run with `args` gave. Panics on a death
    /// by signal and on output that is not UTF-8: the binary escapes what it
    /// prints.
    #[track_caller]
    pub fn new(args: &[&str], output: std::process::Output) -> Output {
        Output {
            args: args.iter().map(|a| a.to_string()).collect(),
            code: output
                .status
                .code()
                .unwrap_or_else(|| panic!("`fencesim {}` died by a signal", args.join(" "))),
            stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
            stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
        }
    }

    pub fn code(&self) -> i32 {
        self.code
    }

    /// Exit code 0.
    pub fn success(&self) -> bool {
        self.code == 0
    }

    pub fn stdout_str(&self) -> &str {
        &self.stdout
    }

    pub fn stderr_str(&self) -> &str {
        &self.stderr
    }

    /// (exit code, stdout, stderr), for a test that reads all three.
    pub fn into_parts(self) -> (i32, String, String) {
        (self.code, self.stdout, self.stderr)
    }

    /// Asserts the exit code, showing everything the binary printed if not.
    /// Also asserts that nothing panicked: a panic is never a valid answer.
    #[track_caller]
    pub fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(
            self.code,
            code,
            "`fencesim {}` exited with {} instead of {code}\n--- stdout\n{}\n--- stderr\n{}",
            self.args.join(" "),
            self.code,
            self.stdout,
            self.stderr
        );
        self.expect_no_panic()
    }

    /// Asserts that neither stream mentions a panic.
    #[track_caller]
    pub fn expect_no_panic(&self) -> &Self {
        for (name, text) in [("stdout", &self.stdout), ("stderr", &self.stderr)] {
            assert!(
                !text.contains("panicked"),
                "`fencesim {}` panicked ({name}):\n{text}",
                self.args.join(" ")
            );
        }
        self
    }

    /// The one JSON object on stdout: exactly one value, and an object.
    #[track_caller]
    pub fn json(&self) -> serde_json::Map<String, serde_json::Value> {
        let values: Vec<serde_json::Value> = serde_json::Deserializer::from_str(&self.stdout)
            .into_iter()
            .collect::<Result<_, _>>()
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout));
        assert_eq!(
            values.len(),
            1,
            "expected exactly one JSON value on stdout:\n{}",
            self.stdout
        );
        match values.into_iter().next() {
            Some(serde_json::Value::Object(map)) => map,
            other => panic!("expected a JSON object on stdout, got {other:?}"),
        }
    }

    /// The text after `label` on the first line that starts with it (the
    /// human report's `verdict`, `trace`, `repro` lines).
    #[track_caller]
    pub fn line(&self, label: &str) -> &str {
        self.stdout
            .lines()
            .find_map(|l| l.strip_prefix(label))
            .map(str::trim)
            .unwrap_or_else(|| panic!("no line starting with {label:?} in:\n{}", self.stdout))
    }
}

/// The binary, to run in `dir` as a user runs it from a shell: without the
/// `CARGO` variable `cargo test` sets (which switches repro commands to
/// their `cargo run` spelling), without colour, and with no terminal size
/// from the environment (as when piped). Arguments, streams and more
/// variables are the caller's to add.
pub fn command(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_fencesim"));
    command
        .current_dir(dir)
        .env_remove("CARGO")
        .env_remove("COLUMNS")
        .env_remove("LINES")
        .env("NO_COLOR", "1");
    command
}

/// Runs `command` (from [`command`], or a shell around the binary) with
/// `args` added, to the end.
#[track_caller]
pub fn run(mut command: Command, args: &[&str]) -> Output {
    let output = command.args(args).output().expect("the command runs");
    Output::new(args, output)
}

/// Runs `fencesim ARGS` from the crate root, as a user in a checkout.
#[track_caller]
pub fn fencesim(args: &[&str]) -> Output {
    fencesim_in(crate_root(), args)
}

/// Runs `fencesim ARGS` in `dir`.
#[track_caller]
pub fn fencesim_in(dir: &Path, args: &[&str]) -> Output {
    run(command(dir), args)
}
