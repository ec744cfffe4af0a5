use fencesim::explore::exhaustive::exhaustive;
use fencesim::explore::shard::Shard;
use fencesim::oracle::Verdict;
use fencesim::scenario::{Fault, Trigger};

use crate::figure_without_pause;

#[test]
fn one_injection_breaks_the_unfenced_design_and_none_the_fenced_one() {
    let unfenced = figure_without_pause(false);
    let r = exhaustive(&unfenced, 1, 1, 2, Shard::WHOLE, &|_, _| {});
    assert_eq!(r.baseline.verdict, Verdict::Safe);
    assert_eq!(r.tried as usize, r.menu.len());
    assert!(!r.breaking.is_empty());
    // Figure 9-6 itself is among them: pause client1 right after acquiring.
    assert!(r.breaking.iter().any(|(faults, _)| matches!(
        (&faults[0].fault, &faults[0].trigger),
        (Fault::Pause(p), Trigger::After { node: by, kind: event, nth: 1, .. })
            if p.node == "client1" && by == "client1" && event == "acquired"
    )));
    assert!(r
        .breaking
        .iter()
        .all(|(f, rep)| f.len() == 1 && rep.counters.stale_writes > 0));

    let fenced = figure_without_pause(true);
    let r = exhaustive(&fenced, 1, 1, 2, Shard::WHOLE, &|_, _| {});
    assert!(r.menu.len() > 10);
    assert!(r.breaking.is_empty(), "{:?}", r.breaking.first());
}

#[test]
fn exhaustive_shards_split_the_injections() {
    let s = figure_without_pause(false);
    let whole = exhaustive(&s, 1, 1, 2, Shard::WHOLE, &|_, _| {});
    let a = exhaustive(&s, 1, 1, 1, Shard { index: 0, count: 2 }, &|_, _| {});
    let b = exhaustive(&s, 1, 1, 1, Shard { index: 1, count: 2 }, &|_, _| {});
    assert_eq!(a.tried + b.tried, whole.tried);
    assert_eq!(a.breaking.len() + b.breaking.len(), whole.breaking.len());
}

#[test]
fn injection_sets_are_numbered_without_being_listed() {
    use fencesim::explore::exhaustive::{count, injection};
    for m in [1u64, 2, 3, 7, 40] {
        let pairs: Vec<Vec<usize>> = (0..count(m, 2)).map(|k| injection(k, m, 2)).collect();
        let mut expected = Vec::new();
        for i in 0..m as usize {
            for j in i + 1..m as usize {
                expected.push(vec![i, j]);
            }
        }
        assert_eq!(pairs, expected, "menu of {m}");
        assert_eq!(count(m, 1), m);
    }
    // A menu of 3 000 has about 4.5 million pairs, counted, not built.
    assert_eq!(count(3000, 2), 4_498_500);
    assert_eq!(injection(4_498_499, 3000, 2), [2998, 2999]);
}

#[test]
fn without_an_explore_table_the_menu_uses_maxima_scaled_to_the_scenario() {
    // A 60 s lease: the scaled maxima are three times the longest timeout,
    // as random faults use them; the fixed defaults would never pause a
    // holder past its lease.
    use fencesim::scenario::ExploreSpec;
    let s = fencesim::scenario::load_str(
        &fencesim::design::catalog::Registry::builtin(),
        "long-lease.toml",
        "name = \"long-lease\"\nduration = \"10m\"\n[lock]\ndesign = \"lease\"\nttl = \"60s\"\n\
         [storage]\ndesign = \"unchecked\"\n[[clients]]\nname = \"client1\"\n\
         [[clients]]\nname = \"client2\"\nstart = \"1s\"\n",
    )
    .unwrap();
    let ttl = std::time::Duration::from_secs(60);
    let scaled = ExploreSpec::scaled(&s);
    assert!(scaled.max_pause > ttl, "{scaled:?}");
    let (_, menu) = fencesim::explore::exhaustive::menu(&s, s.seed);
    let pauses: Vec<_> = menu
        .iter()
        .filter_map(|f| match &f.fault {
            Fault::Pause(p) => Some(p.duration),
            _ => None,
        })
        .collect();
    assert!(!pauses.is_empty());
    assert!(pauses.iter().all(|d| *d == scaled.max_pause), "{pauses:?}");
}
