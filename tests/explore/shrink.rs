use fencesim::design::catalog::Registry;
use fencesim::explore::shrink::shrink;
use fencesim::explore::sweep::FaultMode;
use fencesim::oracle::Verdict;
use fencesim::scenario::{load_str, to_toml};

use crate::bundled;

#[test]
fn a_shrunk_failure_loads_back_still_fails_and_has_at_most_three_faults() {
    let s = bundled("explore-lease-unfenced");
    for seed in [7, 10] {
        let shrunk = shrink(&s, seed, FaultMode::Random).expect("the seed violates");
        assert!(shrunk.after.len() <= 3, "{:?}", shrunk.after);
        assert!(shrunk.after.len() <= shrunk.before.len());
        let text = to_toml(&shrunk.scenario);
        let loaded = load_str(&Registry::builtin(), "shrunk.toml", &text).unwrap();
        assert_eq!(loaded.seed, seed);
        assert!(loaded.expect.verdict.is_none());
        let run = fencesim::runner::run(&loaded, loaded.seed);
        assert_eq!(run.report.verdict, Verdict::Violation, "{text}");
        assert!(!run.expectations_met, "run exits 1 on it");
    }
}

#[test]
fn a_safe_seed_cannot_be_shrunk() {
    let s = bundled("explore-lease-unfenced");
    assert!(shrink(&s, 0, FaultMode::Random).is_err());
}
