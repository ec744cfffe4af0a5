//! Honest verdicts: a run that judged nothing, a scripted fault that never
//! fired, or a run cut short is never silently SAFE. Each is exit 4 unless
//! `[expect]` says so (`verdict = "inconclusive"`, `unfired_faults = N`,
//! `outcome = "…"`); `check` fails such a scenario the same way.

use crate::{arg, fencesim, figure_9_6, TempDir};

/// Figure 9-6 with its `[[faults]]` and `[expect]` replaced by `rest`.
fn figure_with(name: &str, rest: &str) -> String {
    let text = figure_9_6().replace("name = \"figure-9-6\"", &format!("name = \"{name}\""));
    let cut = text.find("[[faults]]").expect("figure 9-6 has a fault");
    format!("{}{rest}", &text[..cut])
}

/// The storage is down from the start: no write ever reaches it.
const STORAGE_DOWN: &str = "[[faults]]\nkind = \"crash\"\nnode = \"storage\"\nat = \"0s\"\n";

/// The figure's pause, but after an event client1 never logs here (it
/// checks no lease, so it never lapses).
const PAUSE_AFTER_LAPSED: &str = "[[faults]]\nkind = \"pause\"\nnode = \"client1\"\n\
     after = \"client1:lapsed\"\nduration = \"15s\"\n";

#[test]
fn a_run_where_no_write_reached_the_storage_is_inconclusive_not_safe() {
    let dir = TempDir::new("vacuous");
    let file = dir.write("vacuous.toml", figure_with("vacuous", STORAGE_DOWN));
    let out = fencesim(&["run", arg(&file)]);
    out.expect_code(4);
    let verdict = out.line("verdict");
    assert!(verdict.starts_with("INCONCLUSIVE"), "{verdict}");
    assert!(!out.stdout.contains("SAFE"), "{}", out.stdout);

    let json = fencesim(&["run", arg(&file), "--json"]);
    json.expect_code(4);
    let json = json.json();
    assert_eq!(json["verdict"], "inconclusive");
    assert_eq!(json["accepted_writes"], 0);
    assert_eq!(json["rejected_writes"], 0);
    assert_eq!(json["expectations_met"], false);
}

#[test]
fn expect_verdict_inconclusive_makes_it_pass() {
    let dir = TempDir::new("vacuous-expected");
    let text = figure_with(
        "vacuous",
        &format!("{STORAGE_DOWN}\n[expect]\nverdict = \"inconclusive\"\n"),
    );
    let file = dir.write("vacuous.toml", &text);
    let out = fencesim(&["run", arg(&file), "--json"]);
    out.expect_code(0);
    assert_eq!(out.json()["expectations_met"], true);
}

#[test]
fn a_fault_whose_event_never_happens_is_named_and_exits_4() {
    let dir = TempDir::new("unfired");
    let file = dir.write("unfired.toml", figure_with("unfired", PAUSE_AFTER_LAPSED));
    let out = fencesim(&["run", arg(&file)]);
    out.expect_code(4);
    // The human report names it in one sentence (wrapped: joined here).
    let words: Vec<&str> = out.stdout.split_whitespace().collect();
    let text = words.join(" ");
    let unfired = &text[text.find("unfired the").expect("an unfired line")..];
    assert!(
        unfired.contains("pause of client1")
            && unfired.contains("after = \"client1:lapsed\"")
            && unfired.contains("never fired")
            && unfired.contains("client1 never logged `lapsed`"),
        "{unfired}"
    );

    let json = fencesim(&["run", arg(&file), "--json"]);
    json.expect_code(4);
    let json = json.json();
    let unfired = json["unfired_faults"].as_array().expect("a list");
    assert_eq!(unfired.len(), 1, "{unfired:?}");
    assert_eq!(unfired[0]["kind"], "pause");
    assert_eq!(unfired[0]["nodes"], serde_json::json!(["client1"]));
    assert_eq!(unfired[0]["trigger"], "after = \"client1:lapsed\"");
    assert_eq!(json["faults"][0]["fired_at_ms"], serde_json::Value::Null);
    // The run itself judged writes: the verdict is safe, the exit code is not 0.
    assert_eq!(json["verdict"], "safe");
}

#[test]
fn a_fault_after_an_event_its_node_never_emits_exits_4() {
    let dir = TempDir::new("unfired-lock");
    let rest = PAUSE_AFTER_LAPSED.replace("client1:lapsed", "lock:acquired");
    let file = dir.write("lock.toml", figure_with("lock-acquired", &rest));
    let out = fencesim(&["run", arg(&file), "--json"]);
    out.expect_code(4);
    let json = out.json();
    assert_eq!(
        json["unfired_faults"][0]["trigger"],
        "after = \"lock:acquired\""
    );
}

#[test]
fn expect_unfired_faults_says_it_is_intended() {
    let dir = TempDir::new("unfired-expected");
    let text = figure_with(
        "unfired",
        &format!("{PAUSE_AFTER_LAPSED}\n[expect]\nverdict = \"safe\"\nunfired_faults = 1\n"),
    );
    let file = dir.write("unfired.toml", &text);
    fencesim(&["run", arg(&file)]).expect_code(0);
    // A wrong count is a failed expectation.
    let wrong = dir.write(
        "wrong.toml",
        text.replace("unfired_faults = 1", "unfired_faults = 0"),
    );
    let out = fencesim(&["run", arg(&wrong)]);
    out.expect_code(1);
    assert!(
        out.stdout.contains("FAIL unfired_faults = 0 (got 1)"),
        "{}",
        out.stdout
    );
}

#[test]
fn the_bundled_figure_fires_its_pause_and_reaches_its_milestones() {
    let out = fencesim(&["run", "scenarios/figure-9-6.toml", "--json"]);
    out.expect_code(0);
    let json = out.json();
    assert_eq!(json["unfired_faults"], serde_json::json!([]));
    // Every fault says when it fired: client1's pause, right after it
    // acquired (at 5 ms).
    assert_eq!(json["faults"][0]["trigger"], "after = \"client1:acquired\"");
    assert_eq!(json["faults"][0]["fired_at_ms"], 5);
    let m = &json["milestones"];
    assert_eq!(m["holder_paused_past_lease"], 1, "{m}");
    assert_eq!(m["lease_expired_while_held"], 1, "{m}");
    assert_eq!(m["two_believers"], 1, "{m}");
    assert_eq!(m["zombie_write_sent"], 1, "{m}");
    assert_eq!(m["stale_write_rejected"], 1, "{m}");
    assert_eq!(m["stale_write_accepted"], 0, "{m}");
    assert_eq!(
        m.as_object().unwrap().len(),
        fencesim::oracle::milestones::NAMES.len(),
        "every milestone: {m}"
    );
    let human = fencesim(&["run", "scenarios/figure-9-6.toml"]);
    let milestones = human.line("reached");
    assert!(
        milestones.contains("holder_paused_past_lease ×1"),
        "{milestones}"
    );
}

/// Many clients retrying every millisecond: the event limit comes long before
/// the scenario's end.
fn crowd(expect: &str) -> String {
    let mut text = String::from(
        "name = \"crowd\"\ndescription = \"Clients retrying every millisecond.\"\n\
         duration = \"24h\"\nmax_events = 3000\n\n[lock]\ndesign = \"lease\"\nttl = \"10s\"\n\n\
         [storage]\ndesign = \"fenced\"\n",
    );
    for i in 1..=16 {
        text += &format!("\n[[clients]]\nname = \"client{i}\"\nretry = \"1ms\"\n");
    }
    text + expect
}

#[test]
fn a_run_cut_short_by_the_event_limit_says_so_and_exits_4() {
    let dir = TempDir::new("crowd");
    let file = dir.write("crowd.toml", crowd(""));
    let out = fencesim(&["run", arg(&file)]);
    out.expect_code(4);
    let cut = out.line("cut short");
    assert!(cut.starts_with("event_limit"), "{cut}");
    let json = fencesim(&["run", arg(&file), "--json"]);
    json.expect_code(4);
    let json = json.json();
    assert_eq!(json["outcome"], "event_limit");
    assert_eq!(json["cut_short"], true);

    // 0.28 s of a 24 h scenario, and not one write: cut short *and* judged
    // nothing, which are two things [expect] must both say.
    assert_eq!(json["verdict"], "inconclusive");
    assert_eq!(json["accepted_writes"], 0);
    let only_outcome = dir.write(
        "outcome.toml",
        crowd("\n[expect]\noutcome = \"event_limit\"\n"),
    );
    let out = fencesim(&["run", arg(&only_outcome), "--json"]);
    out.expect_code(4);
    assert_eq!(
        out.json()["inconclusive"],
        serde_json::json!(["no write reached the storage: the run judged nothing"])
    );
    let both = dir.write(
        "both.toml",
        crowd("\n[expect]\noutcome = \"event_limit\"\nverdict = \"inconclusive\"\n"),
    );
    fencesim(&["run", arg(&both)]).expect_code(0);
}

#[test]
fn check_fails_an_inconclusive_scenario_and_counts_it() {
    let dir = TempDir::new("check-inconclusive");
    let passing = figure_9_6().replace("name = \"figure-9-6\"", "name = \"passes\"");
    dir.write("a.toml", &passing);
    dir.write("unfired.toml", figure_with("unfired", PAUSE_AFTER_LAPSED));
    let out = fencesim(&["check", arg(dir.path())]);
    out.expect_code(4);
    assert!(
        out.stdout
            .contains("1 of 2 scenarios passed (1 inconclusive)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("unfired.toml: inconclusive: pause of client1")
            && out.stdout.contains("INCONCLUSIVE "),
        "{}",
        out.stdout
    );
}

#[test]
fn step_shows_the_milestones_after_the_verdict() {
    let out = fencesim(&["step", "scenarios/figure-9-6.toml"]);
    out.expect_code(0);
    assert!(
        out.stdout
            .lines()
            .any(|l| l.starts_with("reached  ") && l.contains("zombie_write_sent ×1")),
        "{}",
        out.stdout
    );
}

#[test]
fn a_violation_expected_by_its_counts_alone_still_passes() {
    let dir = TempDir::new("violation-by-counts");
    let file = dir.write(
        "unfenced.toml",
        crate::unfenced("unfenced", "\n[expect]\nstale_writes = 1\n"),
    );
    fencesim(&["run", arg(&file)]).expect_code(0);
    // And a violation nobody expected fails, even beside an unfired fault.
    let both = crate::unfenced("unfenced", &format!("\n{PAUSE_AFTER_LAPSED}"));
    let file = dir.write("both.toml", &both);
    let out = fencesim(&["run", arg(&file), "--json"]);
    out.expect_code(1);
    assert_eq!(out.json()["unfired_faults"][0]["kind"], "pause");
}

#[test]
fn step_and_the_reports_name_a_fault_that_never_fired() {
    let dir = TempDir::new("unfired-reports");
    let file = dir.write("unfired.toml", figure_with("unfired", PAUSE_AFTER_LAPSED));
    let step = fencesim(&["step", arg(&file)]);
    step.expect_code(4);
    let untested = step.line("untested");
    assert!(
        untested.contains("pause of client1") && untested.contains("never fired"),
        "{untested}"
    );
    let out = dir.path().join("out");
    let report = fencesim(&["report", arg(&file), "--out", arg(&out)]);
    report.expect_code(4);
    let md = std::fs::read_to_string(out.join("unfired.md")).unwrap();
    let line = md
        .lines()
        .find(|l| l.starts_with("**Untested:**"))
        .unwrap_or_else(|| panic!("no untested line in\n{md}"));
    assert!(
        line.contains("pause of client1") && line.contains("never fired"),
        "{line}"
    );
    let html = std::fs::read_to_string(out.join("unfired.html")).unwrap();
    assert!(
        html.contains("<p class=\"meta untested\">untested: the pause of client1"),
        "no untested line in the HTML page"
    );
}
