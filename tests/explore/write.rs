use fencesim::design::catalog::Registry;
use fencesim::scenario::{load_str, to_toml, Scenario};

/// `file` and the faults' `line` say where a model came from, not what it is.
fn normalized(mut s: Scenario) -> Scenario {
    s.file = String::new();
    for f in &mut s.faults {
        f.line = 0;
    }
    s
}

#[test]
fn every_bundled_scenario_round_trips_through_the_writer() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let s = fencesim::scenario::load_file(&Registry::builtin(), &path).unwrap();
        let text = to_toml(&s);
        let again = load_str(&Registry::builtin(), "again.toml", &text)
            .unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display()));
        assert_eq!(normalized(again), normalized(s), "{}", path.display());
        n += 1;
    }
    assert!(n >= 11);
}

#[test]
fn every_kind_and_odd_values_round_trip() {
    let text = r#"
name = "all \"kinds\""
description = "line one\nline two, a tab\t"
seed = 9223372036854775807
duration = "1500ms"
strict = true
[lock]
design = "lease"
ttl = "12345678ns"
[storage]
design = "unchecked"
[network]
latency = ["0s", "7us"]
loss = 0.25
[[network.links]]
from = "a"
to = "storage"
duplicate = 0.5
[[clients]]
name = "a"
workload = "increment"
[[clients]]
name = "b"
[[faults]]
kind = "clock"
node = "a"
offset = "-3s"
rate = 1.5
jump = "+250ms"
at = "0s"
[[faults]]
kind = "delay"
from = "a"
to = "lock"
extra = "2s"
duration = "5s"
after = "a:acquired:3"
delay = "10ms"
[[faults]]
kind = "drop"
from = "b"
to = "a"
count = 4
at = "1s"
[[faults]]
kind = "duplicate"
from = "b"
to = "storage"
after = "b:wrote"
[[faults]]
kind = "partition"
groups = [["a"], ["b", "lock"]]
duration = "3s"
one_way = true
at = "2s"
[[faults]]
kind = "crash"
node = "lock"
at = "3s"
[[faults]]
kind = "crash"
node = "storage"
restart_after = "1s"
at = "4s"
[[faults]]
kind = "pause"
node = "b"
duration = "1s"
at = "5s"
[expect]
verdict = "violation"
lost_updates = 2
[explore]
kinds = ["crash"]
faults = [0, 16]
nodes = ["a", "lock"]
max_restart = "3s"
"#;
    let s = load_str(&Registry::builtin(), "t.toml", text).unwrap();
    let again = load_str(&Registry::builtin(), "t.toml", &to_toml(&s)).unwrap();
    assert_eq!(normalized(again), normalized(s));
}
