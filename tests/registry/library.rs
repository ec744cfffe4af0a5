//! The library functions the commands use, given the user's registry: a
//! sweep, shrink and the exhaustive search build every world from it.

use fencesim::explore::exhaustive;
use fencesim::explore::shard::Shard;
use fencesim::explore::shrink::shrink_with;
use fencesim::explore::sweep::{run_seed_with, FaultMode, Runs, SweepOptions};
use fencesim::oracle::Verdict;

use crate::{load, registry};

#[test]
fn a_sweep_with_the_user_registry_finds_the_unfenced_grace_lease_breaking() {
    let runs = Runs::with_registry(registry());
    let options = SweepOptions {
        seeds: 0..40,
        jobs: 2,
        shard: Shard::WHOLE,
        faults: FaultMode::Random,
    };
    let unfenced = fencesim::explore::sweep::sweep_streaming(
        &load(false),
        &options,
        &runs,
        &[],
        &|| false,
        &mut |_| {},
    );
    assert_eq!(unfenced.seeds, 40);
    assert!(unfenced.violations > 0, "{:?}", unfenced.first_failing_seed);
    assert_eq!(unfenced.crashed, 0);
    let fenced = fencesim::explore::sweep::sweep_streaming(
        &load(true),
        &options,
        &runs,
        &[],
        &|| false,
        &mut |_| {},
    );
    assert_eq!((fenced.violations, fenced.crashed), (0, 0));
}

#[test]
fn a_seed_runs_the_same_alone_and_through_runs() {
    let runs = Runs::with_registry(registry());
    let scenario = load(false);
    let (_, a) = run_seed_with(&runs, &scenario, 9, FaultMode::Random);
    let (_, b) = run_seed_with(&runs, &scenario, 9, FaultMode::Random);
    assert_eq!(a.verdict, Verdict::Violation);
    assert_eq!(a.trace_hash, b.trace_hash, "same seed, same trace");
}

#[test]
fn shrink_with_the_user_registry_keeps_the_failure() {
    let shrunk = shrink_with(
        &Runs::with_registry(registry()),
        &load(false),
        9,
        FaultMode::Random,
    )
    .expect("seed 9 fails");
    assert!(shrunk.after.len() <= shrunk.before.len());
    assert_eq!(shrunk.run.report.verdict, Verdict::Violation);
}

#[test]
fn the_exhaustive_search_runs_the_user_design() {
    let runs = Runs::with_registry(registry());
    let scenario = load(false);
    let plan = exhaustive::plan_with(&runs, &scenario, scenario.seed, 1, Shard::WHOLE);
    assert_eq!(
        plan.baseline.verdict,
        Verdict::Safe,
        "no fault, no stale write"
    );
    assert!(!plan.menu.is_empty());
    let result = exhaustive::run_plan(
        &runs,
        &scenario,
        scenario.seed,
        &plan,
        2,
        Shard::WHOLE,
        &|_, _| {},
    );
    assert_eq!(result.tried, plan.runs);
    assert!(
        result
            .breaking
            .iter()
            .any(|(_, r)| r.verdict == Verdict::Violation),
        "one injected fault breaks the unfenced grace lease"
    );
    assert!(result.breaking.iter().all(|(_, r)| !r.outcome.is_error()));
}
