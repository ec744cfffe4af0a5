//! Fails the build at once, before madsim and everything above it compile,
//! when `--cfg madsim` is missing, saying which of the two usual causes it is;
//! and, before this crate compiles, when madsim is crates.io's rather than
//! the checkout's patched one (`sim/madsim`), saying how to name it.
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
        return patched_madsim();
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

/// The patched madsim says so through its `links` metadata (see
/// sim/madsim/build.rs). cargo applies a `[patch]` only from the root
/// manifest of a workspace, so a crate outside this one that depends on
/// fencesim by path links crates.io's madsim unless it names the patch too:
/// this crate would then fail to compile on the clock hook it installs.
fn patched_madsim() -> ExitCode {
    println!("cargo:rerun-if-env-changed=DEP_MADSIM_CLOCK_HOOK");
    if std::env::var_os("DEP_MADSIM_CLOCK_HOOK").is_some() {
        return ExitCode::SUCCESS;
    }
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let madsim = std::path::Path::new(&manifest_dir).join("madsim");
    let path = toml_string(&madsim.to_string_lossy());
    eprintln!(
        "error: fencesim needs its own madsim ({path}, see PATCH.md there), and this build\n\
         links madsim from crates.io. cargo applies a [patch] only from the workspace's root\n\
         Cargo.toml: add to it\n\n  \
         [patch.crates-io]\n  madsim = {{ path = {path} }}\n\n\
         (`fencesim new PATH` writes a crate that has it.)"
    );
    ExitCode::FAILURE
}

/// `s` as a TOML basic string.
fn toml_string(s: &str) -> String {
    let escaped = s.replace('\\', "\\\\").replace('"', "\\\"");
    format!("\"{escaped}\"")
}
