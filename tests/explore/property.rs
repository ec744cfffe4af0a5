//! The fenced lease design never accepts a stale write, whatever the fault
//! schedule: proptest draws schedules with `fencesim::explore::strategy` and
//! keeps failures in `tests/explore/proptest-regressions/` (committed).

use fencesim::explore::strategy;
use fencesim::runner;
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};

use crate::bundled;

fn config() -> Config {
    Config {
        cases: 48,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/explore/proptest-regressions/property.txt"
        )))),
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn the_fenced_lease_never_accepts_a_stale_write(
        faults in strategy::schedule(&bundled("explore-lease-fenced")),
        seed in 0u64..1_000_000,
    ) {
        let mut s = bundled("explore-lease-fenced");
        s.faults.extend(faults);
        let run = runner::run(&s, seed);
        prop_assert_eq!(run.report.stale_writes, 0, "{:?}", run.report.violations);
        prop_assert_eq!(run.report.token_regressions, 0);
        prop_assert!(!matches!(run.result.outcome, sim::Outcome::Crashed { .. }), "{}", run.result.outcome);
    }
}

#[test]
fn the_strategies_find_the_unfenced_bug() {
    // The same strategies against the unfenced twin must find a stale write:
    // otherwise the property above would prove nothing.
    let s = bundled("explore-lease-unfenced");
    let mut tr = proptest::test_runner::TestRunner::new(Config {
        cases: 200,
        failure_persistence: None,
        rng_algorithm: proptest::test_runner::RngAlgorithm::ChaCha,
        ..Config::default()
    });
    let result = tr.run(&strategy::schedule(&s), |faults| {
        let mut s = s.clone();
        s.faults.extend(faults);
        prop_assert_eq!(runner::run(&s, 1).report.stale_writes, 0);
        Ok(())
    });
    let Err(proptest::test_runner::TestError::Fail(_, minimal)) = result else {
        panic!("no stale write found: {result:?}");
    };
    assert!(
        minimal.len() <= 3,
        "proptest shrinks the schedule: {minimal:?}"
    );
}

#[test]
fn the_strategies_draw_what_explore_draws() {
    // One generator per kind serves both: the strategies' schedules (a
    // swarm of kinds and nodes, then faults of those) hit clients as often,
    // and trigger on `acked` and on the lock's events too, as `explore`'s do.
    use proptest::strategy::{Strategy, ValueTree};
    let s = bundled("explore-lease-unfenced");
    let strategy = strategy::schedule(&s);
    let mut tr = proptest::test_runner::TestRunner::deterministic();
    let drawn: Vec<_> = (0..300)
        .flat_map(|_| strategy.new_tree(&mut tr).unwrap().current())
        .collect();
    let sweep: Vec<_> = (0..300)
        .flat_map(|seed| fencesim::explore::random::schedule(&s, seed))
        .collect();
    let clients: Vec<String> = s.clients.iter().map(|c| c.name.clone()).collect();
    let share_on_clients = |faults: &[fencesim::scenario::FaultSpec]| {
        let pauses: Vec<&str> = faults
            .iter()
            .filter_map(|f| match &f.fault {
                fencesim::scenario::Fault::Pause(p) => Some(p.node.as_str()),
                _ => None,
            })
            .collect();
        let on_clients = pauses.iter().filter(|n| clients.iter().any(|c| c == *n));
        on_clients.count() as f64 / pauses.len() as f64
    };
    let (ours, theirs) = (share_on_clients(&drawn), share_on_clients(&sweep));
    assert!((ours - theirs).abs() < 0.1, "{ours} vs {theirs}");
    assert!(ours > 0.5, "clients more often than servers: {ours}");
    for event in ["acked", "granted"] {
        assert!(drawn.iter().any(|f| matches!(
            &f.trigger,
            fencesim::scenario::Trigger::After { kind, .. } if kind == event
        )));
    }
}
