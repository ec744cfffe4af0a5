//! Reports: renderings of a run's journal for people.
//!
//! Renderers read the journal and nothing else (not the designs, not log
//! text), so a user's own design renders like a bundled one.
//!
//! - [`lanes`]: terminal lanes in the style of DDIA's figure 9-6, one column
//!   per node, time flowing down.
//!
//! ```
//! use fencesim::report::{describe, lanes, LanesOptions};
//! use sim::journal::{Event, Journal};
//!
//! let rejected = Event::new(0, 16_012_000_000, "storage", 16_012_000_000, "rejected")
//!     .with("write", "client1/1")
//!     .with("token", 33u64)
//!     .with("max_token", 34u64);
//! assert_eq!(describe(&rejected), "REJECTED client1/1 (token 33 < 34)");
//! let out = lanes(
//!     &Journal::from_events([rejected]),
//!     &["storage".to_owned()],
//!     &LanesOptions::default(),
//! );
//! assert_eq!(out.lines().nth(2), Some("16.012s  REJECTED client1/1 (tok…"));
//! ```

pub mod lanes;

pub use lanes::{describe, lanes, LanesOptions};
