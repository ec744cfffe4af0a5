//! Swarm exploration, faults anchored where locks break, and maxima scaled to
//! the scenario's timeouts: what a generic `[explore]` table finds.

use std::collections::BTreeSet;
use std::time::Duration;

use fencesim::design::catalog::Registry;
use fencesim::explore::random::{scenario_for_seed, schedule, swarm};
use fencesim::explore::shard::Shard;
use fencesim::explore::sweep::{sweep, FaultMode, SweepOptions, SweepSummary};
use fencesim::scenario::{load_str, ExploreSpec, Fault, Scenario, Trigger};
use rand::SeedableRng;

use crate::bundled;

fn random_sweep(s: &Scenario, seeds: std::ops::Range<u64>, jobs: usize) -> SweepSummary {
    let options = SweepOptions {
        seeds,
        jobs,
        shard: Shard::WHOLE,
        faults: FaultMode::Random,
    };
    sweep(s, &options, &|_| {})
}

/// A bundled scenario without its scripted faults and `[expect]`, explored
/// with the generic table a new user would write: every kind, one to three
/// faults, no maxima (they scale to the scenario's timeouts).
fn generic(stem: &str) -> Scenario {
    let mut s = bundled(stem);
    s.faults.clear();
    s.expect = Default::default();
    s.explore = None;
    s
}

fn kinds_of(s: &Scenario, seed: u64) -> BTreeSet<&'static str> {
    schedule(s, seed).iter().map(|f| f.fault.kind()).collect()
}

#[test]
fn each_seed_draws_its_faults_from_a_swarm_of_kinds_and_nodes() {
    let s = bundled("explore-lease-unfenced");
    let spec = s.explore_spec();
    assert!(spec.swarm && !spec.kinds_pinned);
    let mut sizes = BTreeSet::new();
    for seed in 0..200 {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let enabled = swarm(&mut rng, &s, &spec);
        assert!(!enabled.kinds.is_empty() && !enabled.nodes.is_empty());
        assert!(enabled.kinds.iter().all(|k| spec.kinds.contains(k)));
        sizes.insert((enabled.kinds.len(), enabled.nodes.len()));
    }
    // Some seeds enable one kind, some all seven; likewise for the nodes.
    assert!(sizes.iter().any(|(k, _)| *k == 1) && sizes.iter().any(|(k, _)| *k == 7));
    assert!(sizes.iter().any(|(_, n)| *n == 1) && sizes.iter().any(|(_, n)| *n >= 4));

    // Three faults a seed: with swarm, many seeds draw all three of one
    // kind; without it, pauses dominate every mix and single-kind seeds of
    // anything else are rare.
    let three = |swarm: bool| {
        let mut s = s.clone();
        s.explore = Some(ExploreSpec {
            faults: (3, 3),
            swarm,
            ..s.explore_spec()
        });
        s
    };
    let single_non_pause = |s: &Scenario| {
        (0..300)
            .filter(|seed| {
                let k = kinds_of(s, *seed);
                k.len() == 1 && !k.contains("pause")
            })
            .count()
    };
    let (with, without) = (
        single_non_pause(&three(true)),
        single_non_pause(&three(false)),
    );
    assert!(with > 3 * without.max(1), "swarm {with}, uniform {without}");
}

#[test]
fn listed_kinds_and_nodes_are_pinned_and_swarm_can_be_turned_off() {
    let text = |extra: &str| {
        format!(
            "name = \"t\"\n[lock]\ndesign = \"lease\"\n[storage]\ndesign = \"fenced\"\n\
             [[clients]]\nname = \"client1\"\n[[clients]]\nname = \"client2\"\n[explore]\n{extra}"
        )
    };
    let load = |extra: &str| load_str(&Registry::builtin(), "t.toml", &text(extra)).unwrap();
    let pinned = load("kinds = [\"crash\", \"drop\"]\nnodes = [\"lock\", \"client2\"]\n");
    let spec = pinned.explore_spec();
    assert!(spec.swarm && spec.kinds_pinned);
    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    for _ in 0..50 {
        assert_eq!(swarm(&mut rng, &pinned, &spec), spec);
    }
    let off = load("swarm = false\n");
    let spec = off.explore_spec();
    assert!(!spec.swarm);
    assert_eq!(swarm(&mut rng, &off, &spec), spec);
    // Over many seeds without swarm, every kind shows up beside a pause.
    let mixed = (0..300).filter(|seed| kinds_of(&off, *seed).len() >= 2);
    assert!(mixed.count() > 100);
    let e = load_str(&Registry::builtin(), "t.toml", &text("swarm = \"no\"\n")).unwrap_err();
    assert_eq!(e.location(), "t.toml:11:9", "{e}");
}

#[test]
fn maxima_scale_with_the_scenarios_timeouts_unless_the_table_sets_them() {
    // A 30 s ZooKeeper session: pauses up to 90 s, so one can outlast it.
    let hbase = generic("hbase-gc-pause");
    let spec = hbase.explore_spec();
    assert_eq!(spec.max_pause, Duration::from_secs(90));
    assert_eq!(spec.max_restart, Duration::from_secs(30));
    let longest = (0..400)
        .flat_map(|seed| schedule(&hbase, seed))
        .filter_map(|f| match f.fault {
            Fault::Pause(p) => Some(p.duration),
            _ => None,
        })
        .max()
        .unwrap();
    assert!(longest > Duration::from_secs(60), "{longest:?}");
    // A 2 s etcd lease: 6 s, and restarts within 2 s.
    let etcd = generic("etcd-11456-lock-after-lease-expired").explore_spec();
    assert_eq!(etcd.max_delay, Duration::from_secs(6));
    assert_eq!(etcd.max_restart, Duration::from_secs(2));
    // A 10 s TTL keeps the former defaults.
    assert_eq!(generic("figure-9-6").explore_spec(), ExploreSpec::default());
    // A value the table gives wins; the others still scale.
    let text =
        "name = \"t\"\n[lock]\ndesign = \"lease\"\nttl = \"20s\"\n[storage]\ndesign = \"fenced\"\n\
                [[clients]]\nname = \"c\"\n[explore]\nmax_pause = \"5s\"\n";
    let s = load_str(&Registry::builtin(), "t.toml", text).unwrap();
    let spec = s.explore.clone().unwrap();
    assert_eq!(spec.max_pause, Duration::from_secs(5));
    assert_eq!(spec.max_delay, Duration::from_secs(60));
}

#[test]
fn random_faults_fire_after_lock_and_storage_events() {
    let s = bundled("explore-lease-unfenced");
    let mut anchors = BTreeSet::new();
    for seed in 0..400 {
        for f in schedule(&s, seed) {
            if let Trigger::After { node, kind, .. } = f.trigger {
                if node == "lock" || node == "storage" {
                    anchors.insert(format!("{node}:{kind}"));
                }
            }
        }
    }
    for anchor in ["lock:granted", "lock:expired", "storage:accepted"] {
        assert!(anchors.contains(anchor), "{anchors:?}");
    }
    // And they fire: some seed's fault anchored on `lock:granted` fired.
    let fired = (0..100).any(|seed| {
        let run = fencesim::runner::run(&scenario_for_seed(&s, seed), seed);
        run.faults
            .iter()
            .any(|f| f.trigger == "after = \"lock:granted\"" && f.fired_at.is_some())
    });
    assert!(fired);
}

#[test]
fn failing_seeds_do_not_depend_on_jobs_and_each_replays_alone() {
    let s = bundled("explore-lease-unfenced");
    let one = random_sweep(&s, 0..150, 1);
    let two = random_sweep(&s, 0..150, 2);
    assert!(!one.failures.is_empty());
    assert_eq!(one.failures, two.failures);
    for f in one.failures.iter().take(5) {
        // `run --faults random --seed N` runs exactly this.
        let alone = fencesim::runner::run(&scenario_for_seed(&s, f.seed), f.seed);
        assert_eq!(alone.trace_hash(), f.trace_hash, "seed {}", f.seed);
    }
}
