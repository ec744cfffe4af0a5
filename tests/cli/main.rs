//! End-to-end tests of the `fencesim` binary, as a user relies on it: the
//! real executable, run with real files, judged by its exit code, its stdout
//! and its stderr (the README's "Commands" and exit codes).
//!
//! Every test that needs a scenario file of its own writes it into a fresh
//! directory under the system's temp dir ([`TempDir`]), removed afterwards.
//! The binary runs from the crate root, so `scenarios/…` paths work as they do
//! for a user in a checkout.

mod check;
mod designs;
mod inputs;
mod invalid;
mod lanes;
mod new;
mod run;
mod verdicts;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

/// The crate root: where `scenarios/` is.
pub fn crate_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// What one invocation of the binary gave.
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

/// Runs the binary from the crate root.
pub fn fencesim(args: &[&str]) -> Output {
    fencesim_in(crate_root(), args)
}

/// Runs the binary from `dir`, as a user would from a shell: without the
/// `CARGO` variable `cargo test` sets (which switches the repro command to
/// its `cargo run` spelling) and without colour.
pub fn fencesim_in(dir: &Path, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_fencesim"));
    command.env_remove("CARGO");
    spawn(command, dir, args)
}

/// Runs the binary from the crate root as `cargo run` would: with `CARGO`
/// set.
pub fn fencesim_under_cargo(args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_fencesim"));
    command.env("CARGO", "cargo");
    spawn(command, crate_root(), args)
}

fn spawn(mut command: Command, dir: &Path, args: &[&str]) -> Output {
    let output = command
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("the fencesim binary runs");
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

/// A fresh directory for one test's files, removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    /// A directory no other test (nor another run of this suite) uses.
    pub fn new(test: &str) -> TempDir {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("fencesim-cli-{}-{n}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create the test's temp dir");
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Writes `text` to `name` in this directory and returns its path.
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create parent dir");
        }
        std::fs::write(&path, text).expect("write scenario file");
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A path as a `&str` argument (temp dirs are UTF-8 on every CI we run).
pub fn arg(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

/// The bundled figure 9-6 scenario's text.
pub fn figure_9_6() -> String {
    std::fs::read_to_string(crate_root().join("scenarios/figure-9-6.toml"))
        .expect("scenarios/figure-9-6.toml")
}

/// Figure 9-6 with the fencing taken away: the lock hands out no tokens and
/// the storage accepts every write, so client1's write after its pause lands
/// after client2's, a stale write. `expect` is appended verbatim (an
/// `[expect]` table, or nothing).
pub fn unfenced(name: &str, expect: &str) -> String {
    format!(
        r#"name = "{name}"
description = """
Figure 9-6 without fencing: client1 is paused past its lease, client2 takes \
the lock and writes, then client1 wakes up and writes too. Nothing stops it."""
seed = 1
duration = "2m"

[lock]
design = "lease"
ttl = "10s"
tokens = false

[storage]
design = "unchecked"

[network]
latency = ["1ms", "5ms"]

[[clients]]
name = "client1"
start = "0s"
work = "1s"

[[clients]]
name = "client2"
start = "12s"
work = "1s"

[[faults]]
kind = "pause"
node = "client1"
after = "client1:acquired"
duration = "15s"
{expect}"#
    )
}
