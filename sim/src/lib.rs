//! A deterministic world on madsim: named nodes hosting actors, per-node
//! clocks, a network with per-link faults, scheduled and event-triggered
//! faults, and a journal of everything that happened.
//!
//! This crate knows nothing of locks: it runs actors and records events.
#![deny(missing_docs)]

#[cfg(not(madsim))]
compile_error!(
    "fencesim must be built with `--cfg madsim`. The repository's .cargo/config.toml sets it \
     under [build] rustflags, but an environment RUSTFLAGS (or CARGO_BUILD_RUSTFLAGS) replaces \
     that setting: unset it, or add `--cfg madsim` to it."
);

pub mod journal;

/// Event kinds the world itself writes into the journal.
pub const WORLD_EVENTS: &[&str] = &[
    "send", "deliver", "drop", "duplicate", "pause", "resume", "clock", "crash", "restart",
    "partition", "heal", "link",
];
