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
//! Run with `cargo run --example custom_lock`; it exits 0 only if every
//! check it prints holds.

use std::time::Duration;

use fencesim::design::catalog::{DesignInfo, KeyKind, KeySpec, Registry, Role};
use fencesim::design::lock_client::{LockClient, SingleServer};
use fencesim::design::LockDesign;
use fencesim::events;
use fencesim::oracle::Verdict;
use fencesim::protocol::Msg;
use fencesim::scenario::Params;
use fencesim::testkit::ScenarioBuilder;
use sim::{Actor, Context, NodeId, TimerId};

/// The catalog entry: what `design = "grace_lease"` takes.
const GRACE_LEASE: DesignInfo = DesignInfo {
    name: "grace_lease",
    role: Role::Lock,
    summary: "TTL lease that waits ttl + grace before re-granting",
    keys: &[
        KeySpec {
            name: "ttl",
            kind: KeyKind::Duration,
            default: Some("\"10s\""),
            doc: "the lease the holder is told",
        },
        KeySpec {
            name: "grace",
            kind: KeyKind::Duration,
            default: Some("\"2s\""),
            doc: "how much longer the server waits before re-granting",
        },
        KeySpec {
            name: "tokens",
            kind: KeyKind::Bool,
            default: Some("true"),
            doc: "hand out fencing tokens",
        },
    ],
};

/// The design as a registry entry: metadata, server, client protocol.
struct GraceLease;

impl LockDesign for GraceLease {
    fn info(&self) -> DesignInfo {
        GRACE_LEASE
    }

    fn server(&self, p: &Params, _index: usize) -> Box<dyn Actor<Msg>> {
        Box::new(GraceServer {
            ttl: p.duration("ttl"),
            grace: p.duration("grace"),
            tokens: p.bool("tokens"),
            holder: None,
            next_lease: 1,
            next_token: 1,
        })
    }

    fn client(&self, _p: &Params, lock_nodes: &[String]) -> Box<dyn LockClient> {
        // Acquire/Granted/Denied/Release: the bundled single-server protocol.
        Box::new(SingleServer::new(lock_nodes[0].clone()))
    }
}

/// The server: a sans-IO state machine. It journals `granted`, `expired`
/// and `released` as `fencesim::events` asks, so the oracle can judge it.
struct GraceServer {
    ttl: Duration,
    grace: Duration,
    tokens: bool,
    /// (client, lease, expiry timer).
    holder: Option<(NodeId, u64, TimerId)>,
    next_lease: u64,
    /// Durable: the counter survives a crash (nothing here crashes it).
    next_token: u64,
}

impl Actor<Msg> for GraceServer {
    fn on_start(&mut self, _ctx: &mut Context<'_, Msg>) {}

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
                let client = ctx.name_of(from);
                sim::emit!(
                    events::GRANTED,
                    client = client,
                    lease = lease,
                    token = token
                );
                let ttl = self.ttl;
                ctx.send(
                    from,
                    Msg::Granted {
                        req,
                        lease,
                        token,
                        ttl,
                    },
                );
            }
            Msg::Acquire { req } => ctx.send(from, Msg::Denied { req }),
            Msg::Release { lease } => {
                if let Some((client, held, timer)) = self.holder {
                    if client == from && held == lease {
                        ctx.cancel_timer(timer);
                        self.holder = None;
                        sim::emit!(events::RELEASED, client = ctx.name_of(from), lease = lease);
                    }
                }
                ctx.send(from, Msg::ReleaseAck { lease });
            }
            _ => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Context<'_, Msg>, id: TimerId, lease: u64) {
        if let Some((client, _, timer)) = self.holder {
            if timer == id {
                self.holder = None;
                sim::emit!(events::EXPIRED, client = ctx.name_of(client), lease = lease);
            }
        }
    }

    fn on_crash(&mut self) {
        self.holder = None;
    }
}

/// Figure 9-6 on `grace_lease`: client1 pauses 15 s right after acquiring.
fn figure_9_6(registry: &Registry, grace: &str, fenced: bool) -> ScenarioBuilder {
    ScenarioBuilder::new(&format!(
        "grace-{grace}-{}",
        if fenced { "fenced" } else { "unfenced" }
    ))
    .registry(registry.clone())
    .lock("grace_lease", |t| {
        t.set("ttl", "10s")
            .set("grace", grace)
            .set("tokens", fenced)
    })
    .storage(if fenced { "fenced" } else { "unchecked" }, |t| t)
    .client("client1", |t| t)
    .client("client2", |t| t.set("start", "11s"))
    .fault("pause", |t| {
        t.set("node", "client1")
            .set("after", "client1:acquired")
            .set("duration", "15s")
    })
}

fn main() {
    let mut registry = Registry::builtin();
    registry.add_lock(GraceLease);
    let seeds = 0..200u64;
    let mut failed = 0;
    let mut check = |what: &str, ok: bool| {
        println!("{} {what}", if ok { "ok  " } else { "FAIL" });
        failed += u32::from(!ok);
    };

    // 1. Figure 9-6 with tokens: the zombie's token-1 write is rejected.
    let fenced = figure_9_6(&registry, "2s", true).expect(|t| {
        t.set("verdict", "safe")
            .set("stale_writes", 0)
            .set("rejected_writes", 1)
    });
    let run = fenced.run(1);
    check(
        "figure 9-6, grace 2s, tokens + fenced storage: the paused client's write is rejected",
        run.expectations_met,
    );

    // 2. The same over 200 seeds: no stale write, ever.
    let stale: u64 = seeds
        .clone()
        .map(|s| fenced.run(s).report.stale_writes)
        .sum();
    check(
        &format!("tokens + fenced storage: no stale write over seeds {seeds:?}"),
        stale == 0,
    );

    // 3. Without fencing, a grace shorter than the pause is not enough.
    let unfenced = figure_9_6(&registry, "2s", false);
    let first_stale = seeds
        .clone()
        .find(|&s| unfenced.run(s).report.verdict == Verdict::Violation);
    check(
        &format!(
            "no tokens, unchecked storage, grace 2s < pause 15s: a stale write gets through \
             (first on seed {})",
            first_stale.map_or("none".to_string(), |s| s.to_string())
        ),
        first_stale.is_some(),
    );

    // 4. A grace longer than the pause hides this one pause, and only it.
    let long_grace = figure_9_6(&registry, "10s", false);
    let violations = seeds
        .clone()
        .filter(|&s| long_grace.run(s).report.verdict == Verdict::Violation)
        .count();
    check(
        &format!(
            "no tokens, grace 10s (lock held 20s) > pause 15s: safe over seeds {seeds:?} \
             ({violations} violations)"
        ),
        violations == 0,
    );

    if failed > 0 {
        eprintln!("{failed} check(s) failed");
        std::process::exit(1);
    }
    println!("all checks hold");
}
