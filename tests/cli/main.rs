//! End-to-end tests of the `fencesim` binary, as a user relies on it: the
//! real executable, run with real files, judged by its exit code, its stdout
//! and its stderr (docs/cli.md's commands and exit codes).
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
mod processes;
mod run;
mod verdicts;

#[path = "../support/mod.rs"]
mod support;

pub use support::{arg, crate_root, fencesim, fencesim_in, Output, TempDir};

/// Runs the binary from the crate root as `cargo run` would: with `CARGO`
/// set.
pub fn fencesim_under_cargo(args: &[&str]) -> Output {
    let mut command = support::command(crate_root());
    command.env("CARGO", "cargo");
    support::run(command, args)
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
