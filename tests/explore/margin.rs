//! `fencesim margin`: each threshold is a real flip between two plain runs
//! a millisecond apart, and "no flip" is said only when none was found.

use std::time::Duration;

use fencesim::explore::margin::{self, Finding, ProbeKind, Row};
use fencesim::oracle::Verdict;
use fencesim::runner;
use fencesim::scenario::{Fault, FaultSpec, Scenario, Trigger};
use sim::fault::Pause;

use super::{bundled, figure_without_pause};
use crate::{arg, fencesim, TempDir};

const UNFENCED: &str = "scenarios/figure-9-6-unfenced.toml";

/// The row of the pause of `client` right after `client:acquired`.
fn pause_row<'a>(rows: &'a [Row], client: &str) -> &'a Row {
    rows.iter()
        .find(|r| {
            matches!(&r.probe.fault.fault, Fault::Pause(p) if p.node == client)
                && r.probe.fault.trigger == Trigger::after(client, "acquired")
        })
        .unwrap_or_else(|| panic!("no pause row for {client}: {rows:#?}"))
}

/// `s` with its first fault's (a pause's) duration set to `ms`, run with
/// `seed`: the bisection "by hand".
fn scripted_pause(s: &Scenario, ms: u64, seed: u64) -> Verdict {
    let mut s = s.clone();
    s.faults[0].fault.set_magnitude(Duration::from_millis(ms));
    runner::run(&s, seed).report.verdict
}

fn added_pause(s: &Scenario, node: &str, ms: u64, seed: u64) -> Verdict {
    let mut s = s.clone();
    s.faults.push(FaultSpec {
        fault: Fault::Pause(Pause {
            node: node.to_owned(),
            duration: Duration::from_millis(ms),
        }),
        trigger: Trigger::after(node, "acquired"),
        line: 0,
    });
    runner::run(&s, seed).report.verdict
}

#[test]
fn the_figures_pause_threshold_is_where_two_plain_runs_a_millisecond_apart_differ() {
    let s = bundled("figure-9-6-unfenced");
    let rows = margin::margins(&s, s.seed);
    let row = pause_row(&rows, "client1");
    // The scenario's own pause is bisected, not probed a second time.
    assert_eq!(row.probe.kind, ProbeKind::Scripted(0));
    assert_eq!(
        rows.iter()
            .filter(|r| matches!(&r.probe.fault.fault, Fault::Pause(p) if p.node == "client1"))
            .count(),
        1
    );
    assert_eq!(row.finding, Finding::Flip, "{}", row.text());
    let t = row.threshold.unwrap();
    assert_eq!(scripted_pause(&s, t - 1, s.seed), Verdict::Safe);
    assert_eq!(scripted_pause(&s, t, s.seed), Verdict::Violation);
    // Client2's write lands about 13 s in: the pause must outlast it, well
    // past the 10 s TTL.
    assert!((12_000..14_000).contains(&t), "{t}");
    assert_eq!(
        (row.verdict_below, row.verdict_at),
        (Verdict::Safe, Verdict::Violation)
    );
    assert!(row.monotone);
    assert!(
        row.text().contains("after client1:acquired breaks it"),
        "{}",
        row.text()
    );
    assert!(row.text().contains("ttl 10 s, work 1 s"), "{}", row.text());
}

#[test]
fn an_added_pause_is_bisected_against_the_scenario_as_written() {
    let s = figure_without_pause(false);
    assert_eq!(runner::run(&s, 1).report.verdict, Verdict::Safe);
    let rows = margin::margins(&s, 1);
    let row = pause_row(&rows, "client1");
    assert_eq!(row.probe.kind, ProbeKind::Pause);
    let t = row
        .threshold
        .expect("a long enough pause of client1 breaks it");
    assert_eq!(added_pause(&s, "client1", t - 1, 1), Verdict::Safe);
    assert_eq!(added_pause(&s, "client1", t, 1), Verdict::Violation);
}

#[test]
fn a_scenario_that_fails_as_written_gets_the_magnitude_that_ends_the_violation() {
    let s = bundled("figure-9-6-unfenced");
    let rows = margin::margins(&s, s.seed);
    // Pausing client2 right after it acquires holds its write back past
    // client1's: the stale write is gone.
    let row = pause_row(&rows, "client2");
    assert_eq!(row.finding, Finding::Flip, "{}", row.text());
    let t = row.threshold.unwrap();
    assert_eq!(
        added_pause(&s, "client2", t - 1, s.seed),
        Verdict::Violation
    );
    assert_ne!(added_pause(&s, "client2", t, s.seed), Verdict::Violation);
    assert!(row.text().contains("makes it safe"), "{}", row.text());
}

#[test]
fn no_flip_is_said_only_when_the_largest_magnitude_keeps_the_verdict() {
    let s = bundled("figure-9-6-unfenced");
    let rows = margin::margins(&s, s.seed);
    let quiet: Vec<&Row> = rows
        .iter()
        .filter(|r| r.finding == Finding::NoFlip)
        .collect();
    assert!(!quiet.is_empty());
    for row in quiet {
        assert_eq!(row.threshold, None);
        assert_eq!(row.json()["threshold_ms"], serde_json::Value::Null);
        // The run at the maximum, made by hand, still gives the verdict as
        // written.
        let at_max = row.probe.scenario_at(&s, row.probe.max);
        assert_eq!(
            runner::RunConfig::new(s.seed)
                .scripted(s.faults.len())
                .run(&at_max)
                .report
                .verdict,
            Verdict::Violation
        );
        assert!(row.text().contains("no flip up to"), "{}", row.text());
    }
    // The maximum is scaled to the scenario: three TTLs, within half the
    // run's two minutes.
    assert_eq!(margin::max_magnitude(&s), 30_000);
}

#[test]
fn margins_are_deterministic() {
    let s = bundled("figure-9-6-unfenced");
    assert_eq!(margin::margins(&s, 3), margin::margins(&s, 3));
}

#[test]
fn margin_json_has_one_object_per_row_with_its_threshold() {
    let (code, out, err) = fencesim(&["margin", UNFENCED, "--json"]).into_parts();
    assert_eq!(code, 0, "{err}");
    let rows: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let s = bundled("figure-9-6-unfenced");
    assert_eq!(rows.len(), margin::probes(&s).len());
    for row in &rows {
        for key in [
            "kind",
            "node",
            "threshold_ms",
            "seed",
            "trigger",
            "finding",
            "verdict_below",
        ] {
            assert!(row.get(key).is_some(), "{key} missing: {row}");
        }
        assert_eq!(row["seed"], 1);
    }
    let pause = rows
        .iter()
        .find(|r| r["kind"] == "pause" && r["node"] == "client1")
        .unwrap();
    let t = pause["threshold_ms"].as_u64().unwrap();
    assert_eq!(scripted_pause(&s, t, 1), Verdict::Violation);
    assert_eq!(scripted_pause(&s, t - 1, 1), Verdict::Safe);
    assert_eq!(pause["trigger"], "after client1:acquired");
    assert_eq!(pause["scripted_line"], 33);
    assert_eq!(pause["timeouts"]["ttl_ms"], 10_000);

    let (code, human, _) = fencesim(&["margin", UNFENCED]).into_parts();
    assert_eq!(code, 0);
    assert!(
        human.contains(&format!(
            "a pause of {} after client1:acquired breaks it",
            margin::secs(t)
        )),
        "{human}"
    );
}

#[test]
fn margin_of_a_bad_file_exits_2_naming_the_place() {
    let dir = TempDir::new("margin");
    let path = dir.write("bad.toml", "name = \"x\"\nseed = \"one\"\n");
    let (code, out, err) = fencesim(&["margin", arg(&path)]).into_parts();
    assert_eq!(code, 2, "{out}");
    assert!(err.contains("bad.toml:2:8"), "{err}");
    let (code, _, err) = fencesim(&["margin", UNFENCED, "--seed", "x"]).into_parts();
    assert_eq!(code, 2);
    assert!(err.contains("--seed"), "{err}");
}
