//! A deterministic world on madsim: named nodes hosting actors, per-node
//! clocks, a network with per-link faults, scheduled and event-triggered
//! faults, and a journal of everything that happened.
//!
//! This crate knows nothing of locks: it runs actors and records events. See
//! [`run()`] for a complete example.
#![deny(missing_docs)]

// build.rs stops the build earlier, saying which cause it is; this is the
// backstop for a build that skips it.
#[cfg(not(madsim))]
compile_error!(
    "fencesim must be built with `--cfg madsim`: a .cargo/config.toml sets it under [build] \
     rustflags, and an environment RUSTFLAGS (or CARGO_BUILD_RUSTFLAGS) replaces that setting: \
     unset it, or add `--cfg madsim` to it."
);

pub mod actor;
pub mod capture;
pub mod clock;
pub mod events;
pub mod fault;
pub mod journal;
pub mod net;
pub mod process;
pub mod run;
pub mod testing;
pub mod world;

pub use actor::{Actor, Context, Message, NodeId, TimerId};
pub use journal::{Event, Journal, Name, Value};
pub use net::{LinkConfig, NetConfig};
pub use run::{
    run, run_fresh, run_here, run_within, run_within_used, Limits, Outcome, RunResult, Wait, Watch,
};
pub use world::WorldBuilder;

/// Event kinds the world itself writes into the journal (see [`events`]).
pub use events::WORLD_EVENTS;

#[doc(hidden)]
pub mod __private {
    pub use tracing;
}
