//! `fencesim audit`: the planted locks of `tests/fixtures/audit/` found at
//! their lines and judged as planted, the decoys ignored, the order
//! deterministic, the JSON as `docs/cli.md` documents it, the exit codes,
//! and what the walk skips.
//!
//! A fixture line that plants a finding says so in a comment:
//! `audit: KIND fenced=yes|no|unknown`. Every other line must give none.

mod catalogue;
mod cli;
mod fixtures;
mod fuzz;
mod precision;
mod rules;
mod sarif;
mod scope;
mod tokens;
mod unseen;
mod walk;

#[path = "../support/mod.rs"]
mod support;

use std::path::Path;

pub use support::{crate_root, Output, TempDir};

/// The fixture tree, as a path relative to the crate root.
pub const FIXTURES: &str = "tests/fixtures/audit";

/// Runs `fencesim ARGS` in `dir`. A panic fails the test: the walk meets
/// every kind of file, and none may crash it.
pub fn fencesim_in(dir: &Path, args: &[&str]) -> Output {
    let out = support::fencesim_in(dir, args);
    out.expect_no_panic();
    out
}

/// Runs `fencesim ARGS` from the crate root, as a user in a checkout.
pub fn fencesim(args: &[&str]) -> Output {
    fencesim_in(crate_root(), args)
}
