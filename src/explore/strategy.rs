//! proptest strategies for fault schedules, for property tests of your own
//! designs: every schedule they generate is valid for the scenario (it names
//! only its nodes and passes the loader's rules), and proptest shrinks a
//! failing one toward fewer faults, shorter durations and earlier triggers.
//!
//! They draw through the very generators `fencesim explore` uses
//! ([`super::random::fault`], and each kind's own beside it in
//! `sim::fault`), so a property test and a sweep explore the same
//! distribution. proptest generates the choices (a list of numbers,
//! [`Choices`]); shrinking the numbers toward zero shrinks the faults.
//!
//! ```
//! use fencesim::design::catalog::Registry;
//! use fencesim::explore::strategy;
//! use fencesim::{runner, scenario};
//! use proptest::prelude::*;
//! use proptest::test_runner::{Config, TestRunner};
//!
//! let s = scenario::load_file(&Registry::builtin(), "scenarios/figure-9-6.toml".as_ref()).unwrap();
//! let mut runner = TestRunner::new(Config { cases: 4, ..Config::default() });
//! runner.run(&strategy::schedule(&s), |faults| {
//!     let mut s = s.clone();
//!     s.faults.extend(faults);
//!     prop_assert_eq!(runner::run(&s, 1).report.stale_writes, 0);
//!     Ok(())
//! }).unwrap();
//! ```

use proptest::prelude::*;
use sim::fault::random::Choices;

use super::random::{self, Targets};
use crate::scenario::{ExploreSpec, Fault, FaultSpec, Scenario, Trigger};

/// Numbers per drawn fault: more than one fault and its trigger ever ask for
/// (a choice past the end is the smallest).
const CHOICES_PER_FAULT: usize = 24;

fn choices() -> impl Strategy<Value = Choices> {
    proptest::collection::vec(any::<u64>(), CHOICES_PER_FAULT).prop_map(Choices::new)
}

/// A trigger as [`random::trigger`] draws one for a fault on no particular
/// client: after an event of a client, or at a time within
/// [`random::horizon`].
pub fn trigger(s: &Scenario) -> BoxedStrategy<Trigger> {
    let s = s.clone();
    choices()
        .prop_map(move |mut c| random::trigger(&mut c, &s, None))
        .boxed()
}

/// One fault of the kinds and sizes of `spec`, on the scenario's nodes,
/// without its trigger.
pub fn bare_fault(s: &Scenario, spec: &ExploreSpec) -> BoxedStrategy<Fault> {
    let targets = Targets::new(s, spec);
    let (kinds, sizes) = (spec.kinds.clone(), random::sizes(spec));
    choices()
        .prop_map(move |mut c| Fault::random(&mut c, &kinds, &targets, &sizes))
        .boxed()
}

/// One fault with its trigger, as `explore` draws it ([`random::fault`]).
pub fn fault(s: &Scenario, spec: &ExploreSpec) -> BoxedStrategy<FaultSpec> {
    let targets = Targets::new(s, spec);
    let (s, spec) = (s.clone(), spec.clone());
    choices()
        .prop_map(move |mut c| random::fault(&mut c, &s, &spec, &targets))
        .boxed()
}

/// A seed's schedule as `explore` draws it ([`random::schedule`]): the
/// kinds and nodes it enables ([`random::swarm`]), then `faults = [min,
/// max]` faults of those, from the scenario's `[explore]` table (or its
/// defaults). Shrinking enables fewer kinds and nodes (down to pauses of the
/// first client) and draws fewer, smaller faults.
pub fn schedule(s: &Scenario) -> BoxedStrategy<Vec<FaultSpec>> {
    let spec = s.explore_spec();
    let (min, max) = (spec.faults.0 as usize, spec.faults.1 as usize);
    // One number per kind and per node, and one more for each empty draw.
    let swarm_choices = spec.kinds.len() + s.node_names().len() + 2;
    let s = s.clone();
    (
        proptest::collection::vec(any::<u64>(), swarm_choices).prop_map(Choices::new),
        proptest::collection::vec(choices(), min..=max),
    )
        .prop_map(move |(mut swarm, faults)| {
            let enabled = random::swarm(&mut swarm, &s, &spec);
            let targets = Targets::new(&s, &enabled);
            let mut drawn = Vec::new();
            for mut c in faults {
                let next =
                    random::fault(&mut c, &s, &random::uncovered(&enabled, &drawn), &targets);
                drawn.push(next);
            }
            drawn
        })
        .boxed()
}
