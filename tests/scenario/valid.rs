//! Files that load, and the model they load into.

use std::path::Path;
use std::time::Duration;

use fencesim::design::catalog::{DesignInfo, KeyKind, KeySpec, Registry, Role};
use fencesim::oracle::Counts;
use fencesim::scenario::*;
use sim::fault::{ClockChange, Crash, Delay, Drop, Duplicate, Partition, Pause};

use super::{load, BASE, FIGURE_9_6};

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

fn ms(ms: u64) -> Duration {
    Duration::from_millis(ms)
}

fn client(name: &str, start: Duration) -> ClientSpec {
    ClientSpec {
        name: name.into(),
        start,
        rounds: 1,
        work: secs(1),
        workload: Workload::Write,
        retry: ms(500),
        timeout: secs(5),
        check_lease: false,
        renew: false,
        fence_on_acquire: false,
        conditional: true,
        process: None,
        process_params: Default::default(),
    }
}

#[test]
fn the_design_example_loads_with_defaults_filled_in() {
    let scenario = load(FIGURE_9_6).unwrap();
    let expected = Scenario {
        file: "t.toml".into(),
        name: "figure-9-6".into(),
        description:
            "Client 1 pauses while holding the lease; its write with token 33 is rejected.".into(),
        seed: 1,
        duration: secs(120),
        max_events: 100_000,
        strict: false,
        lock: DesignSpec {
            design: "lease".into(),
            params: Params::new([
                ("ttl".into(), ParamValue::Duration(secs(10))),
                ("tokens".into(), ParamValue::Bool(true)),
                ("first_token".into(), ParamValue::U64(33)),
                ("durable".into(), ParamValue::Bool(true)),
                ("stonith".into(), ParamValue::Bool(false)),
                (
                    "stonith_restart".into(),
                    ParamValue::Duration(Duration::ZERO),
                ),
                ("renew_rearms".into(), ParamValue::Bool(true)),
            ]),
            resolved: Registry::builtin().resolve(Role::Lock, "lease").unwrap(),
        },
        storage: DesignSpec {
            design: "fenced".into(),
            params: Params::new([
                ("durable".into(), ParamValue::Bool(true)),
                ("scope".into(), ParamValue::Str("global".into())),
            ]),
            resolved: Registry::builtin()
                .resolve(Role::Storage, "fenced")
                .unwrap(),
        },
        network: NetworkSpec {
            latency: (ms(1), ms(5)),
            loss: 0.0,
            duplicate: 0.0,
            links: vec![],
        },
        clients: vec![client("client1", secs(0)), client("client2", secs(12))],
        faults: vec![FaultSpec {
            fault: Fault::Pause(Pause {
                node: "client1".into(),
                duration: secs(15),
            }),
            trigger: Trigger::After {
                node: "client1".into(),
                kind: "acquired".into(),
                nth: 1,
                delay: Duration::ZERO,
            },
            line: 32,
        }],
        expect: Expect {
            verdict: Some(Verdict::Safe),
            counts: Counts {
                stale_writes: Some(0),
                rejected_writes: Some(1),
                ..Counts::default()
            },
            ..Expect::default()
        },
        explore: None,
    };
    assert_eq!(scenario, expected);
    assert_eq!(
        scenario.node_names(),
        ["client1", "client2", "lock", "storage"]
    );
    assert_eq!(scenario.lock.params.duration("ttl"), secs(10));
    assert_eq!(scenario.lock.params.u64("first_token"), 33);
}

#[test]
fn load_file_names_the_scenario_after_its_path() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenario/figure-9-6.toml");
    let scenario = load_file(&Registry::builtin(), &path).unwrap();
    assert_eq!(scenario.file, path.display().to_string());
    assert_eq!(scenario.name, "figure-9-6");
}

#[test]
fn a_minimal_file_gets_every_default() {
    let scenario = load(BASE).unwrap();
    assert_eq!(
        (scenario.seed, scenario.duration, scenario.strict),
        (1, secs(60), false)
    );
    assert_eq!(scenario.description, "");
    assert_eq!(scenario.lock.params.duration("ttl"), secs(10));
    assert!(scenario.lock.params.bool("tokens"));
    assert_eq!(scenario.lock.params.u64("first_token"), 1);
    assert_eq!(scenario.network, NetworkSpec::default());
    assert_eq!(scenario.clients[1], client("client2", secs(0)));
    assert_eq!(
        (scenario.faults.len(), scenario.expect.clone()),
        (0, Expect::default())
    );
}

#[test]
fn every_fault_kind_and_network_key_loads() {
    let text = format!(
        r#"{BASE}[[clients]]
name = "c-3_x"
workload = "increment"
rounds = 3
retry = "1s"
timeout = "2s"
[network]
latency = ["2ms", "2ms"]
loss = 0.01
duplicate = 0
[[network.links]]
from = "client1"
to = "storage"
latency = ["40s", "41s"]
loss = 0.5
[[faults]]
kind = "clock"
node = "lock"
at = "0s"
offset = "-5s"
rate = 2
jump = "+20s"
[[faults]]
kind = "delay"
from = "client1"
to = "storage"
extra = "40s"
after = "client1:wrote:2"
delay = "10ms"
[[faults]]
kind = "drop"
from = "lock"
to = "client2"
at = "1s"
duration = "3s"
[[faults]]
kind = "duplicate"
from = "client2"
to = "storage"
at = "1s"
count = 4
[[faults]]
kind = "partition"
groups = [["client1"], ["lock", "storage"]]
duration = "5s"
one_way = true
at = "2s"
[[faults]]
kind = "crash"
node = "storage"
restart_after = "1s"
after = "storage:accepted"
[[faults]]
kind = "crash"
node = "lock"
after = "lock:send:3"
"#
    );
    let scenario = load(&text).unwrap();
    assert_eq!(scenario.clients[2].workload, Workload::Increment);
    assert_eq!(
        (scenario.clients[2].rounds, scenario.clients[2].retry),
        (3, secs(1))
    );
    assert_eq!(scenario.network.latency, (ms(2), ms(2)));
    assert_eq!(scenario.network.loss, 0.01);
    assert_eq!(
        scenario.network.links,
        [LinkSpec {
            from: "client1".into(),
            to: "storage".into(),
            latency: Some((secs(40), secs(41))),
            loss: Some(0.5),
            duplicate: None,
        }]
    );
    let faults: Vec<Fault> = scenario.faults.iter().map(|f| f.fault.clone()).collect();
    let (from, to) = (String::from("client1"), String::from("storage"));
    assert_eq!(
        faults,
        [
            Fault::Clock(ClockChange {
                node: "lock".into(),
                offset_ns: Some(-5_000_000_000),
                rate: Some(2.0),
                jump_ns: Some(20_000_000_000),
            }),
            Fault::Delay(Delay {
                from: Some(from),
                to,
                extra: secs(40),
                scope: Scope::Count(1),
            }),
            Fault::Drop(Drop {
                from: "lock".into(),
                to: "client2".into(),
                scope: Scope::Window(secs(3)),
            }),
            Fault::Duplicate(Duplicate {
                from: "client2".into(),
                to: "storage".into(),
                scope: Scope::Count(4),
            }),
            Fault::Partition(Partition {
                groups: vec![
                    vec!["client1".into()],
                    vec!["lock".into(), "storage".into()]
                ],
                duration: secs(5),
                one_way: true,
            }),
            Fault::Crash(Crash {
                node: "storage".into(),
                restart_after: Some(secs(1))
            }),
            Fault::Crash(Crash {
                node: "lock".into(),
                restart_after: None
            }),
        ]
    );
    assert_eq!(scenario.faults[0].trigger, Trigger::At(Duration::ZERO));
    assert_eq!(
        scenario.faults[1].trigger,
        Trigger::After {
            node: "client1".into(),
            kind: "wrote".into(),
            nth: 2,
            delay: ms(10)
        }
    );
    assert_eq!(
        scenario.faults[1].line,
        text.lines().position(|l| l == "kind = \"delay\"").unwrap()
    );
}

#[test]
fn inline_tables_load_like_standard_ones() {
    let text = r#"name = "inline"
lock = { design = "lease", ttl = "3s" }
storage = { design = "unchecked" }
clients = [{ name = "a" }, { name = "b", start = "1s" }]
faults = [{ kind = "pause", node = "a", at = "1s", duration = "2s" }]
expect = { verdict = "violation", lost_updates = 0 }
"#;
    let scenario = load(text).unwrap();
    assert_eq!(scenario.lock.params.duration("ttl"), secs(3));
    assert_eq!(scenario.storage.params, Params::default());
    assert_eq!(scenario.node_names(), ["a", "b", "lock", "storage"]);
    assert_eq!(
        scenario.expect.verdict.map(Verdict::as_str),
        Some("violation")
    );
}

/// A user's design with several servers and keys of every kind.
fn user_registry() -> Registry {
    const KEYS: &[KeySpec] = &[
        KeySpec {
            name: "nodes",
            kind: KeyKind::U64 { min: 1, max: 9 },
            default: Some(ParamValue::U64(3)),
            doc: "servers",
        },
        KeySpec {
            name: "drift",
            kind: KeyKind::F64 { min: 0.0, max: 1.0 },
            default: Some(ParamValue::F64(0.01)),
            doc: "",
        },
        KeySpec {
            name: "clock",
            kind: KeyKind::Choice(&["wall", "monotonic"]),
            default: Some(ParamValue::text("wall")),
            doc: "",
        },
        KeySpec {
            name: "quorum",
            kind: KeyKind::U64 { min: 1, max: 9 },
            default: None,
            doc: "majority size",
        },
    ];
    let mut registry = Registry::builtin();
    registry.add(DesignInfo::lock("mylock", "a user's lock", KEYS));
    registry
}

#[test]
fn a_loaded_scenario_carries_the_designs_it_resolved_to() {
    let scenario = load(BASE).unwrap();
    let lock = scenario.lock.resolved.lock().expect("lease is buildable");
    assert_eq!(lock.info().name, "lease");
    assert!(scenario.lock.resolved.storage().is_none());
    let storage = scenario
        .storage
        .resolved
        .storage()
        .expect("fenced is buildable");
    assert_eq!(storage.info().name, "fenced");
    assert_eq!(
        format!("{:?}", scenario.storage.resolved),
        "Storage(\"fenced\")"
    );
}

#[test]
fn a_design_registered_as_metadata_only_loads_but_cannot_run() {
    let text = BASE.replace("design = \"lease\"", "design = \"mylock\"\nquorum = 2");
    let scenario = load_str(&user_registry(), "u.toml", &text).unwrap();
    assert_eq!(
        format!("{:?}", scenario.lock.resolved),
        "Unbuilt(\"mylock\")"
    );
    let run = fencesim::runner::run(&scenario, 1);
    assert_eq!(run.report.verdict, Verdict::Error, "never shown as safe");
    let sim::Outcome::Crashed { message, .. } = &run.result.outcome else {
        panic!("expected a crash, got {:?}", run.result.outcome);
    };
    assert!(
        message.contains("`mylock` was registered as metadata only"),
        "{message}"
    );
}

#[test]
fn a_user_design_with_several_servers_names_them_lock1_to_lock_n() {
    let text = BASE.replace(
        "design = \"lease\"",
        "design = \"mylock\"\nquorum = 2\nclock = \"monotonic\"",
    ) + "[[faults]]\nkind = \"crash\"\nnode = \"lock2\"\nat = \"1s\"\n";
    let scenario = load_str(&user_registry(), "u.toml", &text).unwrap();
    assert_eq!(scenario.lock_nodes(), ["lock1", "lock2", "lock3"]);
    assert_eq!(
        scenario.node_names()[2..],
        ["lock1", "lock2", "lock3", "storage"]
    );
    assert_eq!(scenario.lock.params.f64("drift"), 0.01);
    assert_eq!(scenario.lock.params.str("clock"), "monotonic");
    assert_eq!(scenario.lock.params.u64("quorum"), 2);

    let error = load_str(&user_registry(), "u.toml", &text.replace("lock2", "lock")).unwrap_err();
    assert!(error.message.contains("unknown node `lock`"), "{error}");
    let error = load_str(
        &user_registry(),
        "u.toml",
        &text.replace("quorum = 2\n", ""),
    )
    .unwrap_err();
    assert_eq!(error.location(), "u.toml:2:1");
    assert!(
        error.message.contains("missing required key `quorum`"),
        "{error}"
    );
    let error = load_str(
        &user_registry(),
        "u.toml",
        &text.replace("\"monotonic\"", "\"mono\""),
    )
    .unwrap_err();
    assert!(
        error.message.contains("expected one of: wall, monotonic"),
        "{error}"
    );
}
