//! The leaders the `real-servers` binary runs against etcd, Redis and
//! PostgreSQL (`lead_etcd`, `lead_redis`, `lead_sql`), explored in
//! fencesim over the simulated clients of the same traits: each
//! `scenarios/*-zombie.toml` with its scripted pause (the fenced leader's
//! late write refused, the unfenced one's a stale write), the unfenced
//! leaders' stale write found by a sweep of random faults, and the fenced
//! ones safe over 10 000 seeds (ignored: `.ci/run` runs it).

use std::path::Path;
use std::rc::Rc;
use std::time::Duration;

use async_lock_client::{lead_etcd, lead_redis, lead_sql, Fence, Leadership};
use fencesim::design::catalog::Registry;
use fencesim::design::client::ClientConfig;
use fencesim::explore::generic;
use fencesim::explore::shard::Shard;
use fencesim::explore::sweep::{sweep, FaultMode, SweepOptions};
use fencesim::oracle::Verdict;
use fencesim::process::{etcd, redis, sql, Process, SimLock, SimStorage};
use fencesim::protocol::Msg;
use fencesim::runner;
use fencesim::scenario::{load_str, Scenario};

fn leadership(config: &ClientConfig, fence: Fence) -> Leadership {
    Leadership {
        key: config.key.clone(),
        writes: u32::try_from(config.rounds).unwrap_or(u32::MAX),
        first_value: 1,
        work: config.work,
        retry: config.retry,
        fence,
    }
}

fn etcd_leader(fence: Fence) -> impl Fn(&ClientConfig, &[String]) -> Process<Msg> + Send + Sync {
    move |config, locks| {
        let (config, lock) = (config.clone(), locks[0].clone());
        Process::new(move |h| {
            let (config, lock) = (config.clone(), lock.clone());
            async move {
                h.sleep(config.start).await;
                let options = etcd::ConnectOptions::new().with_timeout(config.timeout);
                let client = etcd::Client::connect(&h, &lock, options);
                let storage = SimStorage::new(&h, &config.storage, config.timeout);
                // A lease of the server's TTL (0 seconds asks for it).
                let (ttl, wait) = (Duration::ZERO, Duration::from_secs(10));
                let leader = leadership(&config, fence);
                lead_etcd(&h, client, "lock", ttl, wait, &storage, &leader).await;
            }
        })
    }
}

fn redis_leader(fence: Fence) -> impl Fn(&ClientConfig, &[String]) -> Process<Msg> + Send + Sync {
    move |config, locks| {
        let (config, lock) = (config.clone(), locks[0].clone());
        Process::new(move |h| {
            let (config, lock) = (config.clone(), lock.clone());
            async move {
                h.sleep(config.start).await;
                let client = redis::Client::connect(&h, &lock, config.timeout);
                let storage = SimStorage::new(&h, &config.storage, config.timeout);
                let leader = leadership(&config, fence);
                lead_redis(&h, client, "lock", &storage, &leader).await;
            }
        })
    }
}

fn sql_leader(fence: Fence) -> impl Fn(&ClientConfig, &[String]) -> Process<Msg> + Send + Sync {
    move |config, locks| {
        let (config, lock) = (config.clone(), locks[0].clone());
        Process::new(move |h| {
            let (config, lock) = (config.clone(), lock.clone());
            async move {
                h.sleep(config.start).await;
                let lock = Rc::new(SimLock::new(&h, &lock, config.timeout));
                let db = sql::Pool::connect(&h, &config.storage, config.timeout);
                lead_sql(&h, &lock, db, &leadership(&config, fence)).await;
            }
        })
    }
}

fn registry() -> Registry {
    let mut registry = Registry::builtin();
    registry.add_process("etcd-leader", "lead_etcd", etcd_leader(Fence::Token));
    registry.add_process(
        "etcd-leader-unfenced",
        "lead_etcd",
        etcd_leader(Fence::None),
    );
    registry.add_process("redis-leader", "lead_redis", redis_leader(Fence::Token));
    registry.add_process(
        "redis-leader-unfenced",
        "lead_redis",
        redis_leader(Fence::None),
    );
    registry.add_process("sql-leader", "lead_sql", sql_leader(Fence::Token));
    registry.add_process("sql-leader-unfenced", "lead_sql", sql_leader(Fence::None));
    registry
}

/// The SQL database's statement without the fence.
const UNFENCED_UPDATE: &str = "UPDATE kv SET value = :value WHERE key = :key";

/// `scenarios/<service>-zombie.toml`, fenced or not: without the fence its
/// clients write no token (and the SQL statement checks none).
fn scenario(service: &str, fence: Fence) -> Scenario {
    let file = format!("scenarios/{service}-zombie.toml");
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(&file);
    let mut text = std::fs::read_to_string(&path).expect("the scenario is there");
    if fence == Fence::None {
        let leader = format!("process = \"{service}-leader\"");
        text = text.replace(&leader, &format!("process = \"{service}-leader-unfenced\""));
        let fenced = "UPDATE kv SET value = :value, lock_token = :token WHERE key = :key AND lock_token <= :token";
        text = text.replace(fenced, UNFENCED_UPDATE);
    }
    load_str(&registry(), &file, &text).unwrap_or_else(|e| panic!("{file}: {e}"))
}

const SERVICES: [&str; 3] = ["etcd", "redis", "sql"];

fn options(seeds: u64) -> SweepOptions {
    SweepOptions {
        seeds: 0..seeds,
        jobs: 2,
        shard: Shard::WHOLE,
        faults: FaultMode::Random,
    }
}

#[test]
fn the_zombie_write_is_refused_with_the_fence_and_lands_without_it() {
    for service in SERVICES {
        let s = scenario(service, Fence::Token);
        let run = runner::run(&s, s.seed);
        let journal = run.result.journal.to_jsonl();
        assert_eq!(run.report.verdict, Verdict::Safe, "{service}: {journal}");
        // The pause did what the story says: client1's lease ran out while
        // it held it, and its late write was refused; its first write and
        // client2's two were applied.
        assert!(run.milestones.lease_expired_while_held > 0, "{service}");
        assert_eq!(
            (
                run.report.counters.accepted_writes,
                run.report.counters.rejected_writes
            ),
            (3, 1),
            "{service}: {journal}"
        );

        let s = scenario(service, Fence::None);
        let run = runner::run(&s, s.seed);
        let journal = run.result.journal.to_jsonl();
        assert_eq!(
            run.report.verdict,
            Verdict::Violation,
            "{service}: {journal}"
        );
        assert_eq!(run.report.counters.stale_writes, 1, "{service}: {journal}");
        assert_eq!(
            run.report.counters.accepted_writes, 4,
            "{service}: {journal}"
        );
    }
}

#[test]
fn random_faults_find_the_unfenced_leaders_stale_write() {
    for service in SERVICES {
        let s = generic::scenario(&scenario(service, Fence::None));
        let summary = sweep(&s, &options(300), &|_| {});
        assert_eq!(summary.crashed + summary.timed_out, 0, "{service}");
        assert!(
            summary.by_kind.get("stale_write").copied().unwrap_or(0) > 0,
            "{service}: no stale write in 300 random-fault seeds: {:?}",
            summary.by_kind
        );
    }
}

fn fenced_leaders_are_safe(seeds: u64) {
    for service in SERVICES {
        let s = generic::scenario(&scenario(service, Fence::Token));
        let summary = sweep(&s, &options(seeds), &|_| {});
        assert_eq!(
            (summary.failing_seeds, summary.crashed, summary.timed_out),
            (0, 0, 0),
            "{service}: first failing seed {:?}, {:?}",
            summary.first_failing_seed,
            summary.by_kind
        );
        // Judged, not vacuous: late writes reached the fence and were
        // turned away.
        assert!(
            summary
                .milestones
                .get("stale_write_rejected")
                .copied()
                .unwrap_or(0)
                > 0,
            "{service}: {:?}",
            summary.milestones
        );
    }
}

#[test]
fn the_fenced_leaders_are_safe_under_300_random_fault_seeds() {
    fenced_leaders_are_safe(300);
}

#[test]
#[ignore = "10 000 seeds per service: run by .ci/run"]
fn the_fenced_leaders_are_safe_under_10_000_random_fault_seeds() {
    fenced_leaders_are_safe(10_000);
}
