//! A seed's trace is the same alone and inside a sweep. `fencesim run
//! --faults random --seed N` runs the seed on a fresh thread; a sweep runs
//! many seeds one after the other on each worker, after whatever ran there
//! before (other seeds, crashed runs). Every trace hash must match.

use std::collections::BTreeMap;

use fencesim::explore::shard::Shard;
use fencesim::explore::sweep::{self, FaultMode, Runs, SweepEvent, SweepOptions};
use fencesim::runner;
use fencesim::scenario::Scenario;

use crate::{bundled_files, load};

/// Seeds per scenario: enough that every worker thread runs hundreds of
/// seeds after others (violations, crashes of the random faults, stalls),
/// few enough for a debug build on two cores.
const SEEDS: u64 = 400;

/// Scenarios of different shapes: the figure; the lease demo, which
/// violates under many seeds; redlock over five lock nodes; the `sql`
/// storage (SQLite in memory); ZooKeeper sessions.
const STEMS: [&str; 5] = [
    "figure-9-6",
    "explore-lease-unfenced",
    "redlock-gc-pause-after-acquisition",
    "etcd-leader-sql",
    "zookeeper-session-expiry",
];

fn scenario(stem: &str) -> Scenario {
    let path = bundled_files()
        .into_iter()
        .find(|p| p.file_stem().is_some_and(|s| s == stem))
        .unwrap_or_else(|| panic!("scenarios/{stem}.toml is bundled"));
    load(&path)
}

/// What a seed's run must give wherever it runs.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    hash: String,
    outcome: String,
    verdict: &'static str,
    events: u64,
}

/// Each seed alone, on a fresh thread of its own.
fn alone(s: &Scenario, seeds: std::ops::Range<u64>) -> BTreeMap<u64, Seen> {
    seeds
        .map(|seed| {
            let (run, report) = sweep::run_seed(s, seed, FaultMode::Random);
            let seen = Seen {
                hash: run.trace_hash(),
                outcome: report.outcome.to_string(),
                verdict: report.verdict.as_str(),
                events: report.events,
            };
            (seed, seen)
        })
        .collect()
}

/// Every seed of a sweep over `jobs` threads.
fn swept(s: &Scenario, seeds: std::ops::Range<u64>, jobs: usize) -> BTreeMap<u64, Seen> {
    let options = SweepOptions {
        seeds,
        jobs,
        shard: Shard::WHOLE,
        faults: FaultMode::Random,
    };
    let runs = Runs {
        // The command line's default budget: the sweep watches every run.
        budget: Some(std::time::Duration::from_secs(60)),
        trace_hashes: true,
        ..Runs::default()
    };
    let mut out = BTreeMap::new();
    let summary = sweep::sweep_streaming(s, &options, &runs, &[], &|| false, &mut |e| {
        if let SweepEvent::Seed(r) = e {
            let seen = Seen {
                hash: r.trace_hash.clone(),
                outcome: r.outcome.to_string(),
                verdict: r.verdict.as_str(),
                events: r.events,
            };
            out.insert(r.seed, seen);
        }
    });
    assert!(summary.is_complete(&options), "the sweep ran every seed");
    out
}

#[track_caller]
fn assert_same_seeds(what: &str, a: &BTreeMap<u64, Seen>, b: &BTreeMap<u64, Seen>) {
    assert_eq!(a.len(), b.len(), "{what}: as many seeds");
    for (seed, seen) in a {
        assert_eq!(Some(seen), b.get(seed), "{what}: seed {seed}");
    }
}

#[test]
fn every_seed_gives_the_same_trace_alone_and_in_sweeps_of_one_and_two_jobs() {
    for stem in STEMS {
        let s = scenario(stem);
        let alone = alone(&s, 0..SEEDS);
        assert!(
            alone.values().all(|seen| seen.hash.len() == 16),
            "{stem}: every run alone has a journal"
        );
        assert_same_seeds(
            &format!("{stem}, --jobs 1"),
            &alone,
            &swept(&s, 0..SEEDS, 1),
        );
        assert_same_seeds(
            &format!("{stem}, --jobs 2"),
            &alone,
            &swept(&s, 0..SEEDS, 2),
        );
    }
}

/// A storage that panics on every write: each run of it crashes.
struct Crash;

impl fencesim::design::storage::StoragePolicy for Crash {
    fn decide(
        &mut self,
        w: &fencesim::design::storage::WriteRequest<'_>,
    ) -> fencesim::design::storage::Decision {
        panic!("crash storage refuses to decide {}", w.write)
    }
}

impl fencesim::design::StorageDesign for Crash {
    type Config = ();

    fn info(&self) -> fencesim::design::catalog::DesignInfo {
        fencesim::design::catalog::DesignInfo::storage("crash", "panics on every write", &[])
    }
    fn server(&self, _: &()) -> Box<dyn sim::Actor<fencesim::protocol::Msg>> {
        Box::new(fencesim::design::storage::StorageNode::new(Crash))
    }
}

#[test]
fn a_crashed_run_ends_only_itself_and_leaves_its_thread_as_it_found_it() {
    let mut registry = fencesim::design::catalog::Registry::builtin();
    registry.add_storage(Crash);
    let path = format!(
        "{}/scenarios/explore-lease-unfenced.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(path).unwrap();
    let crashing = text.replace("design = \"unchecked\"", "design = \"crash\"");
    assert!(
        crashing.contains("\"crash\""),
        "the demo's storage is unchecked"
    );
    let crashing = fencesim::scenario::load_str(&registry, "crash.toml", &crashing).unwrap();
    let normal = scenario("explore-lease-unfenced");
    // One thread: a crash, then a seed of the demo, again and again.
    for seed in 0..40 {
        let crashed = sim::run_here(seed, || runner::world(&crashing));
        match &crashed.outcome {
            sim::Outcome::Crashed { node, message } => {
                assert_eq!(node.as_deref(), Some("storage"), "seed {seed}");
                assert!(
                    message.contains("crash storage refuses to decide"),
                    "seed {seed}: {message}"
                );
            }
            other => panic!("seed {seed}: the crash storage's run ended {other}"),
        }
        let here = sim::run_here(seed, || runner::world(&normal));
        let here = runner::RunConfig::new(seed).judge(&normal, here);
        let fresh = runner::run(&normal, seed);
        crate::assert_same(
            &format!("seed {seed} after a crash on the same thread"),
            &crate::Trace::of(&fresh),
            &crate::Trace::of(&here),
        );
    }
    // In a sweep, each crash is its own seed's, with its seed.
    let options = SweepOptions {
        seeds: 0..20,
        jobs: 2,
        shard: Shard::WHOLE,
        faults: FaultMode::Scenario,
    };
    let summary = sweep::sweep(&crashing, &options, &|_| {});
    assert_eq!((summary.seeds, summary.crashed), (20, 20));
    let seeds: Vec<u64> = summary.failures.iter().map(|f| f.seed).collect();
    assert_eq!(seeds, (0..20).collect::<Vec<_>>());
}
