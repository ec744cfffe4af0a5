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
