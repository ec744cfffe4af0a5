//! `check_and_count` indexes a journal once for both the report and the
//! milestones: on real journals it must say exactly what `check` and
//! `Milestones::count` say on their own.

use fencesim::explore::sweep::{run_seed, FaultMode};
use fencesim::oracle::{check, check_and_count, Milestones, OracleConfig};

use super::explored::bundled;

#[test]
fn one_pass_agrees_with_check_and_count_on_every_bundled_scenario() {
    let (mut violations, mut milestones_reached) = (0, 0);
    for s in bundled() {
        for (seed, mode) in [(0, FaultMode::Scenario), (1, FaultMode::Random)] {
            let (run, _) = run_seed(&s, seed, mode);
            let journal = &run.result.journal;
            for strict in [false, true] {
                let config = OracleConfig {
                    strict,
                    ..OracleConfig::default()
                };
                let (report, milestones) = check_and_count(journal, &config);
                let what = format!("{} seed {seed} strict {strict}", s.file);
                assert_eq!(report, check(journal, &config), "{what}");
                assert_eq!(milestones, Milestones::count(journal), "{what}");
                violations += u64::from(!report.violations.is_empty());
                milestones_reached += u64::from(milestones.reached_text() != "none");
            }
        }
    }
    // The journals exercise both halves.
    assert!(violations > 10 && milestones_reached > 10);
}
