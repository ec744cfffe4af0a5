//! The lock domain's event vocabulary: what designs write into the journal.
//!
//! The oracle and the renderers read these events and nothing else, so a
//! design (bundled or user-written) that emits them is checked like any other.
//! Every event is a [`sim::journal::Event`] whose `node` is the emitting node
//! and whose `kind` is one of the constants below, with the fields listed.
//! Fields marked *optional* are absent when they do not apply (for example
//! `token` when the lock hands out no tokens).
//!
//! Client events (`node` = the client's name):
//! - [`ACQUIRED`] `lease: u64`, `token: u64` *optional*, `ttl_ms: u64`,
//!   `ends: u64` *optional*: the client now believes it holds the lock. This
//!   is a **grant**; the oracle orders grants by the lock's order (the token,
//!   else the lock's `granted` event for the lease), not by when clients
//!   heard of them. `ends` (default 1) is how many lock-node `expired` or
//!   `released` events for this lease end it: with several lock nodes
//!   (Redlock), the grant ends when no majority holds it any more, and it
//!   was made at its majority-th `granted`.
//! - [`DENIED`]: the lock said no; the client will retry.
//! - [`READ`] `value: i64`, `version: u64` *optional*: a read answered.
//! - [`WROTE`] `write: str`, `token: u64` *optional*, `value: i64`, `op: str`
//!   (`put` or `increment`): the client sent write `write` under its current
//!   grant. Write ids are unique in a run (`client1/1`, `client1/2`, …).
//! - [`ACKED`] `write: str`, `ok: bool`, `op: str`: the storage answered.
//! - [`RELEASED`] `lease: u64`: the client gave the lock up (it no longer
//!   believes it holds it).
//! - [`LOST`]: the lock service told the client it lost the lock (a session
//!   expired); it gives up the round without writing.
//! - [`CHECKED`] `lease: u64`, `remaining_ms: u64`: (`check_lease`) the
//!   client's own clock says its lease has this long left; it writes next.
//! - [`LAPSED`] `lease: u64`, `overdue_ms: u64`: (`check_lease`) the
//!   client's own clock says its lease ran out; it gives up the round
//!   without writing.
//! - [`RENEWED`] `lease: u64`, `ttl_ms: u64`, `asked_ago_ns: u64`
//!   *optional*: (`renew`) the lock extended the lease; the client believes
//!   it for `ttl_ms` from when it asked, `asked_ago_ns` before this event on
//!   its own clock (absent: it asked just now).
//! - [`FENCED`] `write: str`, `token: u64`: (`fence_on_acquire`) the client
//!   sent a token-only write (op `fence`), which is not a data write: the
//!   oracle leaves it, and the storage's answer to it, out of every count.
//!   Its answer is journaled as an [`ACKED`] with `op = "fence"`.
//!
//! Lock service events (`node` = `lock` or `lock1` … `lockN`):
//! - [`GRANTED`] `client: str`, `lease: u64`, `token: u64` *optional*,
//!   `ttl_ms: u64` *optional*, `mono_ns: u64` *optional*: `ttl_ms` is the
//!   TTL the grant promised, from `mono_ns`, the lock's monotonic clock at
//!   the grant (absent for a lock whose grants live as long as a session).
//! - [`EXPIRED`] `client: str`, `lease: u64`, `reason: str` *optional*,
//!   `mono_ns: u64` *optional*: the lease ran out on the lock's clock
//!   (`reason`: it ended otherwise, such as `restart`).
//! - [`RELEASED`] `client: str`, `lease: u64`: the holder released it.
//! - [`RENEWED`] `client: str`, `lease: u64`, `ttl_ms: u64` *optional*,
//!   `mono_ns: u64` *optional*: the holder extended it, for `ttl_ms` from
//!   `mono_ns`.
//!
//! Storage events (`node` = `storage`):
//! - [`ACCEPTED`] `write: str`, `client: str`, `token: u64` *optional*,
//!   `value: i64`, `key: str`, `precondition: str` *optional*: present when
//!   the storage applied the write because a condition it named held on the
//!   storage's current state (`cas`: `version 1`); the oracle never counts
//!   such a write as stale.
//! - [`REJECTED`] `write: str`, `client: str`, `token: u64` *optional*,
//!   `reason: str`, `max_token: u64` *optional*, `key: str`.

/// Client: the lock was granted to it.
pub const ACQUIRED: &str = "acquired";
/// Client: the lock refused it.
pub const DENIED: &str = "denied";
/// Client: a read was answered.
pub const READ: &str = "read";
/// Client: a write was sent.
pub const WROTE: &str = "wrote";
/// Client: the storage answered a write.
pub const ACKED: &str = "acked";
/// Client: the lock service told it that it lost the lock (a session
/// expired, ownership lost), before it wrote.
pub const LOST: &str = "lost";
/// Client: its lease check passed, on its own clock (`check_lease`).
pub const CHECKED: &str = "checked";
/// Client: its lease check failed, on its own clock; no write this round.
pub const LAPSED: &str = "lapsed";
/// Client or lock: a lease was extended (`renew`).
pub const RENEWED: &str = "renewed";
/// Client: a token-only write was sent (`fence_on_acquire`).
pub const FENCED: &str = "fenced";
/// Client or lock: the lock was released.
pub const RELEASED: &str = "released";
/// Lock: a lease was granted.
pub const GRANTED: &str = "granted";
/// Lock: a lease expired.
pub const EXPIRED: &str = "expired";
/// Storage: a write was applied.
pub const ACCEPTED: &str = "accepted";
/// Storage: a write was refused.
pub const REJECTED: &str = "rejected";

/// Event kinds that a design emits (the world adds its own: see
/// [`sim::WORLD_EVENTS`]). `after = "node:kind"` triggers may name any of them.
pub const DOMAIN_EVENTS: &[&str] = &[
    ACQUIRED, DENIED, LOST, READ, WROTE, ACKED, RELEASED, GRANTED, EXPIRED, ACCEPTED, REJECTED,
    CHECKED, LAPSED, RENEWED, FENCED,
];
