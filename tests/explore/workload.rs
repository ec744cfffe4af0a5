//! `explore --workloads`: each seed varies its workload, swarmed as faults
//! are, recomputed from the seed by every command that replays it.

use std::collections::BTreeSet;
use std::time::Duration;

use fencesim::explore::generic;
use fencesim::explore::shard::Shard;
use fencesim::explore::sweep::{sweep, FaultMode, SweepOptions};
use fencesim::explore::workload;
use serde_json::Value;

use crate::{bundled, fencesim, TempDir};

const FIGURE: &str = "scenarios/figure-9-6.toml";
const UNFENCED: &str = "scenarios/explore-lease-unfenced.toml";

#[test]
fn a_seed_s_workload_is_its_own_and_the_seeds_cover_every_knob() {
    let s = bundled("figure-9-6");
    let ttl = Duration::from_secs(10);
    assert_eq!(workload::scale(&s), ttl);
    let mut seen = BTreeSet::new();
    for seed in 0..300 {
        let v = workload::vary(&s, seed);
        assert_eq!(
            v,
            workload::vary(&s, seed),
            "seed {seed} varies twice alike"
        );
        assert!(
            !workload::enabled(&v),
            "a varied workload is not varied again"
        );
        assert!(v.duration >= s.duration);
        let names: BTreeSet<&str> = v.clients.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names.len(),
            v.clients.len(),
            "seed {seed}: client names repeat"
        );
        assert!(v.clients.len() >= s.clients.len() && v.clients.len() <= s.clients.len() + 2);
        if v.clients.len() > s.clients.len() {
            seen.insert("clients");
        }
        for (i, c) in v.clients.iter().enumerate() {
            let file = s.clients.get(i);
            if c.work < ttl {
                seen.insert("work shorter than the lease");
            }
            if c.work > ttl {
                seen.insert("work longer than the lease");
            }
            if file.is_some_and(|f| f.renew != c.renew) {
                seen.insert("renew");
            }
            if file.is_some_and(|f| f.check_lease != c.check_lease) {
                seen.insert("check_lease");
            }
            if c.rounds > 1 {
                seen.insert("rounds");
            }
            if file.is_some_and(|f| f.start != c.start) {
                seen.insert("start");
            }
        }
        for link in &v.network.links {
            assert_eq!(link.from, "lock", "answers of the lock only");
            if let Some((min, max)) = link.latency {
                let client = v.clients.iter().find(|c| c.name == link.to).unwrap();
                assert!(
                    min <= max && max <= client.timeout / 4,
                    "seed {seed}: {link:?}"
                );
                seen.insert("slow");
            }
            if link.duplicate.is_some() {
                seen.insert("duplicate");
            }
        }
        // A heartbeating holder past one lease while another client waits:
        // the shape a takeover bug needs, which the file never writes.
        if v.clients.len() >= 2 && v.clients.iter().any(|c| c.renew && c.work > ttl) {
            seen.insert("renewing holder past its lease, others waiting");
        }
    }
    let all = [
        "clients",
        "work shorter than the lease",
        "work longer than the lease",
        "renew",
        "check_lease",
        "rounds",
        "start",
        "slow",
        "duplicate",
        "renewing holder past its lease, others waiting",
    ];
    for knob in all {
        assert!(seen.contains(knob), "no seed of 300 varied {knob}");
    }
}

#[test]
fn a_process_keeps_the_settings_it_refuses() {
    // The leader elector renews on its own schedule and refuses `renew`.
    let s = bundled("leader-elector-async-partitioned");
    for seed in 0..200 {
        let v = workload::vary(&s, seed);
        for c in &v.clients {
            assert!(c.process.is_some());
            assert!(!c.renew, "seed {seed}: {} was given renew", c.name);
        }
    }
}

#[test]
fn a_fenced_design_stays_safe_under_varied_workloads() {
    let s = generic::scenario(&bundled("figure-9-6"));
    let s = workload::turned_on(s);
    let options = SweepOptions {
        seeds: 0..200,
        jobs: 2,
        shard: Shard::WHOLE,
        faults: FaultMode::Random,
    };
    let summary = sweep(&s, &options, &|_| {});
    assert_eq!(summary.failing_seeds, 0, "{:?}", summary.by_kind);
    assert!(
        summary
            .milestones
            .get("stale_write_rejected")
            .copied()
            .unwrap_or(0)
            > 0
    );
}

fn json_lines(out: &str) -> Vec<Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

#[test]
fn a_seed_replays_alone_and_shrinks_with_its_workload() {
    let (code, out, err) = fencesim(&[
        "explore",
        UNFENCED,
        "--generic",
        "--workloads",
        "--seeds",
        "0..40",
        "--json",
    ])
    .into_parts();
    assert_eq!(code, 1, "{err}");
    let lines = json_lines(&out);
    let summary = lines.last().unwrap();
    assert_eq!(summary["workloads"], true);
    let failing: Vec<&Value> = lines.iter().filter(|l| l.get("seed").is_some()).collect();
    assert!(!failing.is_empty());
    let first = failing[0];
    let seed = first["seed"].as_u64().unwrap().to_string();
    let repro = first["repro"].as_str().unwrap();
    assert!(repro.ends_with(" --generic --workloads"), "{repro}");
    // The repro command gives the sweep's trace.
    let (code, run, _) = fencesim(&[
        "run",
        UNFENCED,
        "--seed",
        &seed,
        "--faults",
        "random",
        "--generic",
        "--workloads",
        "--json",
    ])
    .into_parts();
    assert_eq!(code, 1);
    let run: Value = serde_json::from_str(&run).unwrap();
    assert_eq!(run["trace_hash"], first["trace_hash"]);
    // Shrunk, the seed's workload is written out, and it still fails.
    let tmp = TempDir::new("workload-shrink");
    let shrunk = tmp.join("shrunk.toml");
    let (code, _, err) = fencesim(&[
        "shrink",
        UNFENCED,
        "--seed",
        &seed,
        "--generic",
        "--workloads",
        "--out",
        shrunk.to_str().unwrap(),
    ])
    .into_parts();
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&shrunk).unwrap();
    assert!(!text.contains("workloads"), "{text}");
    let varied = workload::vary(
        &generic::scenario(&bundled("explore-lease-unfenced")),
        seed.parse().unwrap(),
    );
    assert_eq!(
        text.matches("[[clients]]").count(),
        varied.clients.len(),
        "{text}"
    );
    let (code, _, _) = fencesim(&["run", shrunk.to_str().unwrap()]).into_parts();
    assert_eq!(code, 1);
}

#[test]
fn a_stopped_sweep_resumes_with_its_workloads() {
    let args = ["--generic", "--workloads", "--seeds", "0..120", "--json"];
    let stopped =
        fencesim(&[&["explore", UNFENCED, "--until", "2"], &args[..]].concat()).into_parts();
    assert_eq!(stopped.0, 1, "{}", stopped.2);
    let tmp = TempDir::new("workload-resume");
    let file = tmp.join("stopped.jsonl");
    std::fs::write(&file, &stopped.1).unwrap();
    let (code, resumed, err) =
        fencesim(&["explore", UNFENCED, "--resume", file.to_str().unwrap()]).into_parts();
    assert_eq!(code, 1, "{err}");
    let (code, whole, _) = fencesim(&[&["explore", UNFENCED], &args[..]].concat()).into_parts();
    assert_eq!(code, 1);
    let (resumed, whole) = (json_lines(&resumed), json_lines(&whole));
    let seeds = |lines: &[Value]| -> Vec<(u64, String)> {
        lines
            .iter()
            .filter_map(|l| Some((l.get("seed")?.as_u64()?, l["trace_hash"].to_string())))
            .collect()
    };
    assert_eq!(seeds(&resumed), seeds(&whole));
    let (a, b) = (resumed.last().unwrap(), whole.last().unwrap());
    for key in ["seeds", "failing_seeds", "by_kind", "outcomes", "workloads"] {
        assert_eq!(a[key], b[key], "{key}");
    }
    assert_eq!(a["workloads"], true);
}

#[test]
fn the_file_can_ask_for_varied_workloads() {
    let tmp = TempDir::new("workload-key");
    let file = tmp.join("varied.toml");
    let text = std::fs::read_to_string(FIGURE).unwrap() + "\n[explore]\nworkloads = true\n";
    std::fs::write(&file, text).unwrap();
    let path = file.to_str().unwrap();
    let (code, out, err) = fencesim(&["explore", path, "--seeds", "0..5", "--json"]).into_parts();
    assert!(code == 0 || code == 1, "{err}");
    assert_eq!(json_lines(&out).last().unwrap()["workloads"], true);
    let loaded = fencesim::scenario::load_file(
        &fencesim::design::catalog::Registry::builtin(),
        file.as_ref(),
    )
    .unwrap();
    assert!(workload::enabled(&loaded));
    // Written out (as shrink and the sweep's workers do), the key stays.
    assert!(fencesim::scenario::to_toml(&loaded).contains("workloads = true"));
}

#[test]
fn a_varied_sweep_counts_the_seeds_that_reproduce_the_mechanism() {
    let (code, out, err) = fencesim(&[
        "explore",
        "scenarios/figure-9-6-unfenced.toml",
        "--generic",
        "--workloads",
        "--seeds",
        "0..60",
        "--json",
    ])
    .into_parts();
    assert_eq!(code, 1, "{err}");
    let lines = json_lines(&out);
    let (summary, rest) = lines.split_last().unwrap();
    assert_eq!(
        summary["mechanism"],
        "stale_writes + holder_paused_past_lease + zombie_write_sent"
    );
    // Each failing seed says whether it is the file's story, and the
    // summary counts those that are.
    let shown: Vec<u64> = rest
        .iter()
        .filter(|l| l.get("seed").is_some())
        .inspect(|l| assert!(l["mechanism"].is_boolean(), "{l}"))
        .filter(|l| l["mechanism"] == true)
        .map(|l| l["seed"].as_u64().unwrap())
        .collect();
    assert!(
        !shown.is_empty(),
        "no varied seed of 60 shows the paused holder's story"
    );
    assert_eq!(summary["mechanism_seeds"], shown.len() as u64);
    assert_eq!(summary["first_mechanism_seed"], shown[0]);
}
