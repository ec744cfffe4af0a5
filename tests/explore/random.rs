use fencesim::design::catalog::Registry;
use fencesim::explore::random::{scenario_for_seed, schedule};
use fencesim::scenario::{load_str, to_toml, Fault, Trigger};

use crate::bundled;

#[test]
fn the_schedule_is_a_pure_function_of_scenario_and_seed() {
    let s = bundled("explore-lease-unfenced");
    for seed in 0..50 {
        assert_eq!(schedule(&s, seed), schedule(&s, seed));
    }
    let distinct: std::collections::BTreeSet<String> = (0..50)
        .map(|seed| format!("{:?}", schedule(&s, seed)))
        .collect();
    assert!(distinct.len() > 40, "seeds should draw different schedules");
    // The same seed reruns to the same trace.
    let a = fencesim::runner::run(&scenario_for_seed(&s, 7), 7);
    let b = fencesim::runner::run(&scenario_for_seed(&s, 7), 7);
    assert_eq!(a.trace_hash(), b.trace_hash());
}

/// The `[[faults]]` tables of `seed`'s random schedule, as `shrink` writes them.
fn written_schedule(s: &fencesim::scenario::Scenario, seed: u64) -> String {
    let mut bare = s.clone();
    bare.faults = schedule(s, seed);
    let text = to_toml(&bare);
    let start = text.find("[[faults]]").expect("a schedule has a fault");
    let end = text.find("[expect]").unwrap_or(text.len());
    text[start..end].trim().to_owned()
}

#[test]
fn recorded_seeds_replay_the_same_schedule() {
    // Seeds that users have written down (in post-mortems, in CI logs) must
    // keep drawing the same faults: these schedules were drawn before each
    // kind's generator moved beside the kind in `sim::fault`, and cover
    // every kind.
    let s = bundled("explore-lease-unfenced");
    let recorded = [
        (0, "[[faults]]\nkind = \"drop\"\nfrom = \"client3\"\nto = \"client2\"\ncount = 1\nafter = \"client1:acked\"\ndelay = \"251ms\""),
        (1, "[[faults]]\nkind = \"pause\"\nnode = \"client2\"\nduration = \"13862ms\"\nat = \"9462ms\"\n\n[[faults]]\nkind = \"clock\"\nnode = \"client1\"\njump = \"-9803ms\"\nafter = \"client1:acquired:2\""),
        (2, "[[faults]]\nkind = \"duplicate\"\nfrom = \"client1\"\nto = \"storage\"\ncount = 1\nat = \"9152ms\""),
        (3, "[[faults]]\nkind = \"delay\"\nfrom = \"storage\"\nto = \"client2\"\nextra = \"1280ms\"\ncount = 1\nat = \"3256ms\"\n\n[[faults]]\nkind = \"partition\"\ngroups = [[\"client1\"], [\"client2\", \"client3\", \"lock\", \"storage\"]]\nduration = \"4535ms\"\none_way = false\nat = \"6979ms\"\n\n[[faults]]\nkind = \"pause\"\nnode = \"client2\"\nduration = \"7656ms\"\nafter = \"client2:acked\"\ndelay = \"408ms\""),
        (7, "[[faults]]\nkind = \"pause\"\nnode = \"client1\"\nduration = \"11558ms\"\nafter = \"client1:acquired\"\ndelay = \"313ms\""),
        (9, "[[faults]]\nkind = \"crash\"\nnode = \"client1\"\nafter = \"client1:acquired\"\n\n[[faults]]\nkind = \"pause\"\nnode = \"client3\"\nduration = \"14821ms\"\nafter = \"client3:acquired\""),
    ];
    for (seed, written) in recorded {
        assert_eq!(written_schedule(&s, seed), written, "seed {seed}");
    }
}

#[test]
fn random_faults_are_valid_and_name_only_the_scenarios_nodes() {
    let s = bundled("explore-lease-unfenced");
    let nodes = s.node_names();
    let mut kinds = std::collections::BTreeSet::new();
    for seed in 0..300 {
        let faults = schedule(&s, seed);
        assert!((1..=3).contains(&faults.len()));
        for f in &faults {
            kinds.insert(f.fault.kind());
            if let Trigger::After { node, .. } = &f.trigger {
                assert!(nodes.contains(node));
            }
            if let Fault::Partition(p) = &f.fault {
                assert_eq!(p.groups.iter().map(Vec::len).sum::<usize>(), nodes.len());
            }
        }
        // Written out and loaded back, the loader accepts every fault.
        let with = scenario_for_seed(&s, seed);
        let text = to_toml(&with);
        let again = load_str(&Registry::builtin(), &s.file, &text)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
        assert_eq!(again.faults.len(), with.faults.len());
    }
    assert_eq!(kinds.len(), 7, "every kind is drawn: {kinds:?}");
}

#[test]
fn the_explore_table_bounds_the_schedule() {
    let text = r#"
name = "t"
[lock]
design = "lease"
[storage]
design = "fenced"
[[clients]]
name = "client1"
[[clients]]
name = "client2"
[explore]
kinds = ["pause"]
faults = [2, 2]
nodes = ["client2"]
max_pause = "1s"
"#;
    let s = load_str(&Registry::builtin(), "t.toml", text).unwrap();
    for seed in 0..100 {
        let faults = schedule(&s, seed);
        assert_eq!(faults.len(), 2);
        for f in faults {
            let Fault::Pause(p) = f.fault else {
                panic!("only pauses: {f:?}")
            };
            assert_eq!(p.node, "client2");
            assert!(p.duration <= std::time::Duration::from_secs(1));
        }
    }
}

#[test]
fn explore_table_mistakes_are_positioned_errors() {
    let base = "name = \"t\"\n[lock]\ndesign = \"lease\"\n[storage]\ndesign = \"fenced\"\n[[clients]]\nname = \"c\"\n[explore]\n";
    let cases = [
        ("kindz = [\"pause\"]", "t.toml:9:1", "unknown key `kindz`"),
        (
            "kinds = [\"paws\"]",
            "t.toml:9:10",
            "unknown fault kind `paws`",
        ),
        ("faults = [3, 1]", "t.toml:9:10", "greater than max"),
        (
            "nodes = [\"nobody\"]",
            "t.toml:9:10",
            "unknown node `nobody`",
        ),
        ("max_pause = \"0s\"", "t.toml:9:13", "max_pause"),
    ];
    for (line, at, message) in cases {
        let e = load_str(&Registry::builtin(), "t.toml", &format!("{base}{line}\n")).unwrap_err();
        assert_eq!(e.location(), at, "{line}: {e}");
        assert!(e.to_string().contains(message), "{line}: {e}");
    }
}
