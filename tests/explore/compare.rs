//! `fencesim compare`: one workload over every lock design, the same seeds.

use std::time::Duration;

use fencesim::design::catalog::{Registry, Role};
use fencesim::explore::compare;
use fencesim::explore::sweep::{self, SweepOptions};
use fencesim::scenario::ParamValue;

use super::bundled;
use crate::{arg, fencesim, TempDir};

const UNFENCED: &str = "scenarios/figure-9-6-unfenced.toml";

/// Whether lock design `name` takes a `ttl` (`postgres` does not).
fn info_has_ttl(registry: &Registry, name: &str) -> bool {
    registry.get(Role::Lock, name).unwrap().key("ttl").is_some()
}

fn json_rows(out: &str) -> Vec<serde_json::Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn compare_lists_every_lock_design_with_the_same_seeds() {
    let (code, out, err) =
        fencesim(&["compare", UNFENCED, "--seeds", "0..50", "--json"]).into_parts();
    assert_eq!(code, 0, "{err}");
    let rows = json_rows(&out);
    let names: Vec<&str> = rows.iter().map(|r| r["design"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "lease",
            "redis",
            "redlock",
            "etcd",
            "zookeeper",
            "chubby",
            "hazelcast",
            "postgres",
            "epoch",
            "dynamodb"
        ]
    );
    assert_eq!(names, Registry::builtin().names(Role::Lock));
    for row in &rows {
        assert_eq!(row["error"], serde_json::Value::Null, "{row}");
        assert_eq!(row["seeds"], 50, "{row}");
        // The scenario's ttl, for every design that takes one.
        let (ttl_ms, ttl) = if row["design"] == "postgres" {
            (serde_json::Value::Null, serde_json::Value::Null)
        } else {
            (10_000.into(), "10s".into())
        };
        assert_eq!(row["ttl_ms"], ttl_ms, "{row}");
        assert_eq!(row["lock_kept"]["ttl"], ttl, "{row}");
        assert_eq!(row["lock_kept"]["tokens"], false, "{row}");
        for key in [
            "failing_seeds",
            "first_failing_seed",
            "violation_kinds",
            "milestones",
            "milestones_reached",
            "main_pause_ms",
        ] {
            assert!(row.get(key).is_some(), "{key} missing: {row}");
        }
    }
    // The lease row is the scenario as written, up to the keys it leaves at
    // their defaults (tokens and a counter, which an unchecked storage
    // ignores): the same failing seeds as a plain sweep of the file.
    let s = bundled("figure-9-6-unfenced");
    let options = SweepOptions {
        seeds: 0..50,
        jobs: 2,
        ..SweepOptions::default()
    };
    let plain = sweep::sweep(&s, &options, &|_| {});
    assert_eq!(rows[0]["failing_seeds"], plain.failing_seeds);
    assert_eq!(
        rows[0]["first_failing_seed"],
        plain.first_failing_seed.unwrap()
    );
    assert_eq!(rows[0]["main_pause_finding"], "flip");

    let (code, table, _) =
        fencesim(&["compare", UNFENCED, "--seeds", "0..50", "--markdown"]).into_parts();
    assert_eq!(code, 0);
    let body: Vec<&str> = table.lines().filter(|l| l.starts_with("| ")).collect();
    assert_eq!(
        body.len(),
        1 + Registry::builtin().names(Role::Lock).len(),
        "{table}"
    );
    assert!(body[0].contains("| design | failing seeds | first failing seed |"));
    assert!(body[1].starts_with("| lease | "), "{table}");

    // On the terminal, the same rows in aligned columns.
    let (code, text, _) = fencesim(&["compare", UNFENCED, "--seeds", "0..50"]).into_parts();
    assert_eq!(code, 0);
    let lines: Vec<&str> = text.lines().skip(2).collect();
    assert_eq!(lines.len(), body.len(), "{text}");
    assert!(lines[0].starts_with("design  "), "{text}");
    let column = lines[0].find("failing seeds").unwrap();
    assert_eq!(&lines[1][column..column + 8], "29 of 50", "{text}");
}

/// A design the user named `k8s_lease` reads as written on the terminal
/// (no Markdown escapes), and escaped only in the Markdown table.
#[test]
fn the_terminal_table_shows_names_as_written() {
    use fencesim::design::catalog::DesignInfo;
    use fencesim::design::lock_client::AnyLockClient;
    use fencesim::design::LockDesign;
    use fencesim::protocol::Msg;

    struct Renamed;
    impl LockDesign for Renamed {
        type Config = fencesim::design::lease::LeaseConfig;
        fn info(&self) -> DesignInfo {
            DesignInfo {
                name: "k8s_lease",
                ..fencesim::design::lease::Lease.info()
            }
        }
        fn server(&self, c: &Self::Config, index: usize) -> Box<dyn fencesim::sim::Actor<Msg>> {
            fencesim::design::lease::Lease.server(c, index)
        }
        fn client(&self, c: &Self::Config, nodes: &[String]) -> Box<dyn AnyLockClient> {
            fencesim::design::lease::Lease.client(c, nodes)
        }
    }
    let mut registry = Registry::builtin();
    registry.add_lock(Renamed);
    let s = bundled("figure-9-6-unfenced");
    let sweep = SweepOptions {
        seeds: 0..5,
        ..SweepOptions::default()
    };
    let rows = compare::compare(&registry, &s, &["k8s_lease"], &sweep);
    let text = compare::text(&rows);
    assert!(
        text.lines().nth(1).unwrap().starts_with("k8s_lease  "),
        "{text}"
    );
    assert!(!text.contains('\\'), "{text}");
    assert!(compare::markdown(&rows).contains("| k8s\\_lease |"));
}

#[test]
fn each_design_runs_with_the_scenarios_lock_settings_it_understands() {
    let registry = Registry::builtin();
    // figure-9-6-unfenced: a lease with `ttl = "10s"` and `tokens = false`.
    let s = bundled("figure-9-6-unfenced");
    let ttl = ParamValue::Duration(Duration::from_secs(10));
    for name in registry.names(Role::Lock) {
        let (swapped, kept) = compare::with_lock(&registry, &s, name).unwrap();
        assert_eq!(swapped.lock.design, name);
        assert_eq!(swapped.lock.resolved.info().name, name);
        let info = registry.get(Role::Lock, name).unwrap();
        // Every design here has `tokens`, and all but `postgres` a `ttl`:
        // the scenario's values are kept, so no design hands out tokens the
        // scenario turned off.
        let kept_ttl = kept.contains(&("ttl".to_owned(), ttl.clone()));
        assert_eq!(kept_ttl, info_has_ttl(&registry, name), "{name}");
        assert!(
            kept.contains(&("tokens".to_owned(), ParamValue::Bool(false))),
            "{name}"
        );
        for (key, value) in info.defaults().iter() {
            let expected = match kept.iter().find(|(k, _)| k == key) {
                Some((_, kept)) => {
                    assert_eq!(s.lock.params.get(key), Some(kept), "{name}: {key}");
                    kept
                }
                None => value,
            };
            assert_eq!(
                swapped.lock.params.get(key),
                Some(expected),
                "{name}: {key}"
            );
        }
        // Everything but the lock is the scenario's.
        assert_eq!(swapped.clients, s.clients);
        assert_eq!(swapped.storage, s.storage);
        assert_eq!(swapped.faults.len(), s.faults.len());
        assert_eq!(swapped.faults[0].fault, s.faults[0].fault);
    }
}

#[test]
fn a_setting_that_breaks_a_designs_rules_is_left_out_and_the_rest_kept() {
    let registry = Registry::builtin();
    // A 50 ms ttl: redlock's default `timeout` (50 ms) must stay below it,
    // so redlock runs with its own ttl but keeps `tokens = false`.
    let mut s = bundled("figure-9-6-unfenced");
    s.lock.params = s
        .lock
        .params
        .clone()
        .with("ttl", ParamValue::Duration(Duration::from_millis(50)));
    let (swapped, kept) = compare::with_lock(&registry, &s, "redlock").unwrap();
    assert!(kept.iter().all(|(k, _)| k != "ttl"), "{kept:?}");
    assert!(kept.contains(&("tokens".to_owned(), ParamValue::Bool(false))));
    assert_eq!(
        swapped.lock.params.get("ttl"),
        Some(&ParamValue::Duration(Duration::from_secs(10)))
    );
    let (_, kept) = compare::with_lock(&registry, &s, "lease").unwrap();
    assert!(kept.contains(&(
        "ttl".to_owned(),
        ParamValue::Duration(Duration::from_millis(50))
    )));
}

#[test]
fn compare_is_the_same_with_any_jobs() {
    let args = |jobs| {
        let (code, out, _) = fencesim(&[
            "compare",
            UNFENCED,
            "--seeds",
            "0..20",
            "--designs",
            "lease,etcd",
            "--jobs",
            jobs,
            "--json",
        ])
        .into_parts();
        assert_eq!(code, 0);
        out
    };
    let one = args("1");
    assert_eq!(json_rows(&one).len(), 2);
    assert_eq!(one, args("2"));
}

#[test]
fn compare_uses_the_registry_it_is_given() {
    let path = format!("{}/{UNFENCED}", env!("CARGO_MANIFEST_DIR"));
    let mut registry = Registry::empty();
    registry.add_lock(fencesim::design::lease::Lease);
    registry.add_storage(fencesim::design::storage::UncheckedDesign);
    let run = |registry: &Registry, design: &str| {
        fencesim::cli::run_args(
            registry,
            [
                "fencesim",
                "compare",
                &path,
                "--seeds",
                "0..2",
                "--designs",
                design,
                "--json",
            ],
        )
    };
    assert_eq!(run(&registry, "lease"), fencesim::cli::Status::Ok);
    // A design the registry does not hold is bad input, named with the
    // designs it does hold.
    assert_eq!(run(&registry, "zookeeper"), fencesim::cli::Status::Invalid);
    let (code, _, err) =
        fencesim(&["compare", UNFENCED, "--designs", "lease,zookeper"]).into_parts();
    assert_eq!(code, 2);
    assert!(err.contains("unknown lock design `zookeper`"), "{err}");
    assert!(err.contains("known lock designs: lease, redis"), "{err}");
}

#[test]
fn compare_of_a_bad_file_exits_2_naming_the_place() {
    let (code, _, err) = fencesim(&["compare", "scenarios/no-such-file.toml"]).into_parts();
    assert_eq!(code, 2);
    assert!(err.contains("no-such-file.toml"), "{err}");
    let (code, _, err) = fencesim(&["compare", UNFENCED, "--seeds", "5..x"]).into_parts();
    assert_eq!(code, 2);
    assert!(err.contains("invalid seed range"), "{err}");
}

#[test]
fn a_design_that_cannot_run_the_scenario_is_a_row_that_says_why() {
    // The scenario crashes `lock`; redlock's nodes are lock1 … lock5.
    let (code, out, err) = fencesim(&[
        "compare",
        "scenarios/redis-restart-without-persistence.toml",
        "--seeds",
        "0..3",
        "--designs",
        "redlock,redis",
        "--json",
    ])
    .into_parts();
    assert_eq!(code, 0, "{err}");
    let rows = json_rows(&out);
    assert_eq!(rows.len(), 2);
    let error = rows[0]["error"].as_str().expect("redlock cannot run it");
    assert!(error.contains("unknown node `lock`"), "{error}");
    assert_eq!(rows[0]["seeds"], 0);
    assert_eq!(rows[1]["design"], "redis");
    assert_eq!(rows[1]["error"], serde_json::Value::Null);
    assert_eq!(rows[1]["seeds"], 3);
}

#[test]
fn compare_exits_3_when_seeds_crashed_and_says_how_many() {
    // A statement fine for the load-time trial's key and endless for the
    // clients' key "x": every seed's first write crashes the storage.
    let text = r#"name = "every-seed-crashes"
description = "A SQL statement that runs away on every real write."
duration = "1m"
[lock]
design = "lease"
[storage]
design = "sql"
update = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10 OR :key <> 'key') UPDATE kv SET value = (SELECT max(x) FROM c) WHERE key = :key"
[[clients]]
name = "client1"
[explore]
faults = [0, 0]
"#;
    let dir = TempDir::new("compare-crash");
    let file = dir.write("every-seed-crashes.toml", text);
    let file_arg = arg(&file);
    let args = [
        "compare",
        file_arg,
        "--designs",
        "lease,redis",
        "--seeds",
        "0..3",
    ];
    let (code, out, err) = fencesim(&args).into_parts();
    assert_eq!(code, 3, "{out}{err}");
    assert!(out.contains("\nlease   3 of 3 (3 crashed)  "), "{out}");
    assert!(
        err.contains("crashed or timed out under lease (3 of 3), redis (3 of 3)"),
        "{err}"
    );
    let (code, out, _) = fencesim(&[&args[..], &["--json"]].concat()).into_parts();
    assert_eq!(code, 3);
    for row in json_rows(&out) {
        assert_eq!(row["crashed"], 3, "{row}");
        assert_eq!(row["timed_out"], 0, "{row}");
    }
}
