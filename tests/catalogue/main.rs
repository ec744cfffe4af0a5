//! fencesim's own catalogue as a test of the bundled designs: every bundled
//! scenario meets its `[expect]` on its own seed (what `fencesim check`
//! does), and a generic sweep of every scenario that expects safe fails
//! exactly the seeds it failed when the table below was measured. A change
//! to a design that the catalogue can see fails here; it is the test
//! command `cargo mutants` runs on `src/design/` (`.cargo/mutants.toml`).

use std::path::PathBuf;

use fencesim::design::catalog::Registry;
use fencesim::explore::generic;
use fencesim::explore::shard::Shard;
use fencesim::explore::sweep::{sweep, FaultMode, SweepOptions};
use fencesim::oracle::Verdict;
use fencesim::scenario::{self, Scenario};

fn bundled() -> Vec<Scenario> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| scenario::load_file(&Registry::builtin(), p).expect("bundled scenario loads"))
        .collect()
}

fn stem(s: &Scenario) -> String {
    PathBuf::from(&s.file)
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

#[test]
fn every_bundled_scenario_meets_its_expectations() {
    for s in bundled() {
        let run = fencesim::runner::run(&s, s.seed);
        assert!(run.expectations_met, "{}: {:?}", s.file, run.expectations);
    }
}

/// Seeds of `0..GENERIC_SEEDS` a generic sweep of each scenario that
/// expects safe fails (a violation, a crash, or a broken `[expect]
/// always`), as measured with this version's designs and generators.
const GENERIC_SEEDS: u64 = 60;
const FAILING: &[(&str, u64)] = &[
    ("azure-if-none-match", 0),
    ("batch-job-ran-twice-fenced", 0),
    ("cas-fresh-read-after-expiry", 0),
    ("cas-writer-async-if-match", 0),
    ("check-then-write-fenced", 0),
    ("chubby-healthy-contention", 0),
    ("chubby-lock-delay", 1),
    ("chubby-sequencer", 0),
    ("consul-session-pause-fenced", 0),
    ("delayed-write", 0),
    ("duplicated-write", 0),
    ("durable-lock-crash", 0),
    ("dynamodb-heartbeating-holder", 0),
    ("dynamodb-heartbeats-lost-fenced", 0),
    ("dynamodb-lock-pause-fenced", 0),
    ("epoch-healthy-contention", 0),
    ("epoch-partitioned-leader-fenced", 0),
    ("epoch-slow-clock-lease-read-fenced", 0),
    ("etcd-11456-lock-after-lease-expired-fenced", 0),
    ("etcd-healthy-contention", 0),
    ("etcd-leader-sql-strict-less", 0),
    ("etcd-leader-sql", 0),
    ("etcd-mutex-async-fenced", 0),
    ("explore-lease-fenced", 0),
    ("explore-lease-unfenced", 9),
    ("fast-lock-clock", 0),
    ("fence-on-acquire", 0),
    ("figure-9-6-async", 0),
    ("figure-9-6", 0),
    ("gcs-if-generation-match", 0),
    ("hazelcast-fenced-lock-async-fenced", 0),
    ("hazelcast-healthy-contention", 0),
    ("hazelcast-session-lost-fenced", 0),
    ("hbase-gc-pause-fenced", 0),
    ("jepsen-etcd-lock-fenced", 0),
    ("leader-elector-async-duplicated", 0),
    ("leader-elector-async-fenced", 0),
    ("leader-elector-async-partitioned", 0),
    ("lease-healthy-contention", 0),
    ("lost-release", 0),
    ("lost-update-fenced", 0),
    ("partitioned-holder", 0),
    ("postgres-advisory-fenced", 0),
    ("postgres-healthy-contention", 0),
    ("postgres-keepalive-vm-freeze-fenced", 0),
    ("postgres-pooler-transaction-lock", 3),
    ("redis-healthy-contention", 0),
    ("redis-restart-with-persistence", 0),
    ("redis-rounds", 2),
    ("redisson-watchdog-async-fenced", 0),
    ("redlock-clock-jump-fenced", 0),
    ("redlock-contention", 3),
    ("redlock-gc-pause-after-acquisition-fenced", 0),
    ("redlock-gc-pause-during-acquisition", 0),
    ("redlock-healthy-contention", 0),
    ("renewal-check-lease", 1),
    ("renewal-outlived-by-a-pause", 0),
    ("renewal-unfenced-strict", 5),
    ("s3-if-match", 0),
    ("scheduler-duplicate-completion-fenced", 0),
    ("stonith-in-flight-write-fenced", 0),
    ("stonith-paused-holder-fenced", 0),
    ("stonith-paused-holder", 1),
    ("zookeeper-healthy-contention", 0),
    ("zookeeper-lock-crash", 0),
    ("zookeeper-recipe-async-fenced", 0),
    ("zookeeper-s3-preemption-conditional", 0),
    ("zookeeper-session-expiry-fenced", 0),
];

#[test]
fn generic_sweeps_of_the_safe_scenarios_fail_the_seeds_they_failed() {
    let safe: Vec<Scenario> = bundled()
        .into_iter()
        .filter(|s| s.expect.verdict == Some(Verdict::Safe))
        .collect();
    let names: Vec<String> = safe.iter().map(stem).collect();
    let listed: Vec<&str> = FAILING.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names, listed,
        "the table lists every scenario that expects safe"
    );
    let options = SweepOptions {
        seeds: 0..GENERIC_SEEDS,
        jobs: 2,
        shard: Shard::WHOLE,
        faults: FaultMode::Random,
    };
    let mut changed = Vec::new();
    for (s, (name, failing)) in safe.iter().zip(FAILING) {
        let summary = sweep(&generic::scenario(s), &options, &|_| {});
        if summary.failing_seeds != *failing {
            changed.push(format!(
                "{name}: {} failing seeds, not {failing} ({:?} {:?})",
                summary.failing_seeds, summary.by_kind, summary.by_property
            ));
        }
    }
    assert!(changed.is_empty(), "{}", changed.join("\n"));
}
