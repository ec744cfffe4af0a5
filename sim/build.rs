//! Fails the build at once, before madsim and everything above it compile,
//! when `--cfg madsim` is missing, saying which of the two usual causes it is.
//!
//! madsim swaps in its deterministic runtime only under `--cfg madsim`, which
//! comes from a `.cargo/config.toml` (`[build] rustflags`). Without it the
//! crates would build the real runtime and fail minutes later with errors
//! that say nothing of the cause. Cargo hands a build script the flags it
//! will pass to rustc (CARGO_ENCODED_RUSTFLAGS) but not where they came
//! from: no flags at all means no configuration set any (a crate without a
//! `.cargo/config.toml`); flags without `--cfg madsim` mean something set
//! flags of its own, which replace the configuration's (cargo takes the
//! first of CARGO_ENCODED_RUSTFLAGS, RUSTFLAGS, and the build.rustflags
//! settings, and never merges them).
use std::process::ExitCode;

const CONFIG: &str =
    "[build]\n  rustflags = [\"--cfg\", \"madsim\"]\n  rustdocflags = [\"--cfg\", \"madsim\"]";

fn main() -> ExitCode {
    // Changed flags rebuild everything, this script included.
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var_os("CARGO_CFG_MADSIM").is_some() {
        return ExitCode::SUCCESS;
    }
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    if flags.is_empty() {
        eprintln!(
            "error: fencesim must be built with `--cfg madsim`, and no rustflags are set.\n\
             A crate that uses fencesim needs a .cargo/config.toml beside its Cargo.toml with:\n\n  \
             {CONFIG}\n\n\
             (`fencesim new PATH` writes a crate that has one.)"
        );
    } else {
        let shown = flags.replace('\x1f', " ");
        eprintln!(
            "error: fencesim must be built with `--cfg madsim`, and the rustflags in use are `{shown}`.\n\
             Flags from an environment RUSTFLAGS (or CARGO_BUILD_RUSTFLAGS, or a target's rustflags)\n\
             replace those of .cargo/config.toml instead of adding to them: unset that variable,\n\
             or add `--cfg madsim` to it."
        );
    }
    ExitCode::FAILURE
}
