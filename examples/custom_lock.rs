//! A lock design defined outside fencesim, checked through its public API.
//!
//! `grace_lease` is a TTL lease whose server waits `ttl + grace` before it
//! hands the lock to anyone else, while telling the holder only `ttl`: the
//! grace period is meant to cover a holder that is a little late (a short GC
//! pause, a slow clock). Many homegrown lock services do this. It narrows the
//! window in which two clients believe they hold the lock, but a pause longer
//! than the grace still lets a zombie write in: only fencing tokens checked
//! by the storage close it.
//!
//! This binary is the whole `fencesim` command line with `grace_lease`
//! registered beside the bundled designs:
//!
//! ```text
//! cargo run --example custom_lock -- designs
//! cargo run --example custom_lock -- check examples/grace-lease*.toml
//! cargo run --release --example custom_lock -- explore examples/grace-lease.toml
//! cargo run --release --example custom_lock -- explore examples/grace-lease-fenced.toml
//! ```
//!
//! The first `explore` finds seeds where a client paused past `ttl + grace`
//! writes after a newer holder; `shrink` cuts one down; the fenced twin
//! stays safe.

use std::process::ExitCode;
use std::time::Duration;

use fencesim::design::catalog::{DesignInfo, Registry, ANY_DURATION};
use fencesim::design::config::{key, DesignConfig};
use fencesim::design::grants::Grants;
use fencesim::design::lock_client::{AnyLockClient, SingleServer};
use fencesim::design::LockDesign;
use fencesim::protocol::Msg;
use fencesim::sim::{Actor, Context, NodeId, TimerId};

fencesim::design_config! {
    /// The design's settings: each field a key of `[lock]`, with its kind,
    /// default and the line `fencesim designs` prints.
    #[derive(Clone, Debug, PartialEq)]
    pub struct GraceConfig {
        ttl: Duration = key::ttl(), "the lease the holder is told";
        grace: Duration = key::duration(ANY_DURATION, Duration::from_secs(2)),
            "how much longer the server waits before re-granting";
        tokens: bool = key::tokens(true), "hand out fencing tokens";
    }
}

/// The design as a registry entry: metadata, server, client protocol.
struct GraceLease;

impl LockDesign for GraceLease {
    type Config = GraceConfig;

    fn info(&self) -> DesignInfo {
        DesignInfo::lock(
            "grace_lease",
            "TTL lease that waits ttl + grace before re-granting",
            GraceConfig::KEYS,
        )
    }

    fn server(&self, config: &GraceConfig, _index: usize) -> Box<dyn Actor<Msg>> {
        Box::new(GraceServer {
            ttl: config.ttl,
            grace: config.grace,
            tokens: config.tokens,
            holder: None,
            grants: Grants::new(),
            next_lease: 1,
            next_token: 1,
        })
    }

    fn client(&self, _: &GraceConfig, lock_nodes: &[String]) -> Box<dyn AnyLockClient> {
        // Acquire/Granted/Denied/Release: the bundled single-server protocol.
        Box::new(SingleServer::new(lock_nodes[0].clone()))
    }
}

/// The server: a sans-IO state machine. Every grant, release and expiry
/// goes through its [`Grants`] ledger, which journals what the oracle reads
/// (`granted`, `released`, `expired`) with the answer it sends.
struct GraceServer {
    ttl: Duration,
    grace: Duration,
    tokens: bool,
    /// (client, lease, expiry timer).
    holder: Option<(NodeId, u64, TimerId)>,
    grants: Grants,
    next_lease: u64,
    /// Durable: the counter survives a crash (nothing here crashes it).
    next_token: u64,
}

impl Actor<Msg> for GraceServer {
    fn on_start(&mut self, ctx: &mut Context<'_, Msg>) {
        // Grants lost in a crash are journaled as ended once the server is back.
        self.grants.restarted(ctx);
    }

    fn on_message(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, msg: Msg) {
        match msg {
            Msg::Acquire { req } if self.holder.is_none() => {
                let lease = self.next_lease;
                self.next_lease += 1;
                let token = self.tokens.then(|| {
                    self.next_token += 1;
                    self.next_token - 1
                });
                // The lock is held for ttl + grace on the server's clock.
                let timer = ctx.set_timer(self.ttl + self.grace, lease);
                self.holder = Some((from, lease, timer));
                self.grants.grant(ctx, from, req, lease, token, self.ttl);
            }
            Msg::Acquire { req } => ctx.send(from, Msg::Denied { req }),
            Msg::Release { lease } => {
                if let Some((_, _, timer)) = self.holder.take_if(|h| (h.0, h.1) == (from, lease)) {
                    ctx.cancel_timer(timer);
                }
                self.grants.release(ctx, from, lease).send(ctx);
            }
            _ => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Context<'_, Msg>, id: TimerId, lease: u64) {
        if let Some((client, _, _)) = self.holder.take_if(|h| h.2 == id) {
            self.grants.expire(ctx, client, lease);
        }
    }

    fn on_crash(&mut self) {
        self.holder = None;
        self.grants.forget_all();
    }
}

/// The bundled designs and `grace_lease`.
pub fn registry() -> Registry {
    let mut registry = Registry::builtin();
    registry.add_lock(GraceLease);
    registry
}

/// The whole `fencesim` command line, with `grace_lease` beside the bundled
/// designs.
fn main() -> ExitCode {
    fencesim::cli::main_with(registry())
}
