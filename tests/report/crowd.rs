//! A crowd's report: a thousand clients are summed up as `step` sums them
//! up, and every page grows with the events, not events × clients.

use std::fmt::Write as _;

use fencesim::design::catalog::Registry;
use fencesim::report::lanes::{lanes_limited, LanesOptions};
use fencesim::report::step::{steps, Step};
use fencesim::report::{html, markdown, perfetto, svg, Subject};
use fencesim::runner;
use fencesim::scenario;

use crate::{fencesim, TempDir};

/// `n` clients on `design`, all starting at once, each holding the lock
/// 10 ms once (the scenario of `cargo bench --bench crowd`).
fn crowd(design: &str, n: usize) -> String {
    let mut text = format!(
        "name = \"crowd-{design}-{n}\"\n\
         description = \"{n} clients on {design}, each holding the lock 10 ms once.\"\n\
         duration = \"1h\"\nmax_events = 1000000\n\
         [lock]\ndesign = \"{design}\"\n[storage]\ndesign = \"fenced\"\n"
    );
    for i in 1..=n {
        writeln!(text, "[[clients]]\nname = \"client{i}\"\nwork = \"10ms\"").unwrap();
    }
    text
}

/// The embedded data of an HTML page.
fn page_data(page: &str) -> serde_json::Value {
    let open = "<script id=\"journal\" type=\"application/json\">";
    let start = page.find(open).unwrap() + open.len();
    let len = page[start..].find("</script>").unwrap();
    serde_json::from_str(&page[start..start + len]).unwrap()
}

/// The clients a step's beliefs summary names as believing a lease, and
/// the count it gives of the others (`999 other clients hold nothing`).
fn named_by_step(step: &Step) -> (Vec<&str>, usize) {
    let mut believers = Vec::new();
    let mut idle = 0;
    for part in step.beliefs.split(" · ") {
        if let Some((client, _)) = part.split_once(" believes lease ") {
            believers.push(client);
        } else if let Some(count) = part
            .strip_suffix(" hold nothing")
            .and_then(|p| p.split(' ').next())
            .and_then(|n| n.parse().ok())
        {
            idle = count;
        }
    }
    (believers, idle)
}

#[test]
fn a_thousand_clients_report_in_pages_that_grow_with_the_events() {
    let dir = TempDir::new("a_thousand_clients_report_in_pages_that_grow_with_the_events");
    let file = dir.path().join("crowd-zookeeper-1000.toml");
    let text = crowd("zookeeper", 1000);
    std::fs::write(&file, &text).unwrap();
    let file = file.to_str().unwrap();
    let s = scenario::load_str(&Registry::builtin(), file, &text).unwrap();
    let run = runner::run(&s, s.seed);
    assert_eq!(run.report.accepted_writes, 1000);
    let events = run.result.journal.len();
    let repro = format!("fencesim run {file} --seed {}", s.seed);
    let subject = Subject {
        name: &s.name,
        description: &s.description,
        seed: s.seed,
        journal: &run.result.journal,
        report: &run.report,
        milestones: &run.milestones,
        nodes: &run.nodes,
        repro: &repro,
        untested: &[],
    };
    let steps = steps(&run.result.journal, &run.report);
    let page = html::page_with_steps(&subject, &steps);
    let md = markdown::page_with_steps(&subject, &steps);
    let figure = svg::figure(&subject);
    let trace = perfetto::trace(&subject);

    // A beliefs row per client per step made this page 60 KB an event;
    // summed up, a crowd's step costs what a small run's does.
    for (what, bytes, per_event) in [
        ("HTML page", page.len(), 2_000),
        ("Markdown page", md.len(), 1_000),
        ("SVG figure", figure.len(), 400),
        ("Perfetto trace", trace.len(), 800),
    ] {
        assert!(
            bytes <= per_event * events + 100_000,
            "{what}: {bytes} bytes for {events} events"
        );
    }

    // The lanes: the lock, the storage and the first clients each have
    // one; the others share one, named as the terminal lanes name it.
    let shared = "990 more clients";
    let header = lanes_limited(&run.result.journal, &run.nodes, &LanesOptions::default(), 0);
    let header = header.lines().next().unwrap();
    assert!(header.ends_with(shared), "{header}");
    assert!(page.contains(&format!(">{shared}</div>")));
    assert!(page.contains(">client10</div>") && !page.contains(">client11</div>"));
    assert!(figure.contains(&format!(">{shared}</text>")));
    assert!(md.contains(&format!(" as {shared}\n")));
    assert!(!md.contains(" as client11\n"));

    // Every step's beliefs table names whom `step` names, and counts the
    // others as `step` counts them.
    let data = page_data(&page);
    let html_steps = data["steps"].as_array().unwrap();
    assert_eq!(html_steps.len(), events);
    let mut counted = 0;
    for (step, shown) in steps.iter().zip(html_steps) {
        let rows = shown["beliefs"].as_array().unwrap();
        let cell = |r: &serde_json::Value, i: usize| r[i].as_str().unwrap().to_owned();
        let (believers, idle) = named_by_step(step);
        for client in &believers {
            assert!(
                rows.iter()
                    .any(|r| cell(r, 0) == *client && cell(r, 1) != "nothing"),
                "step {}: {client} believes, yet no row says so: {rows:?}",
                step.seq
            );
        }
        let clients: Vec<String> = rows
            .iter()
            .map(|r| cell(r, 0))
            .filter(|n| n.starts_with("client"))
            .collect();
        let others: usize = rows
            .iter()
            .map(|r| cell(r, 0))
            .find_map(|n| {
                n.strip_suffix(" other clients")
                    .and_then(|n| n.parse().ok())
            })
            .or_else(|| {
                rows.iter()
                    .map(|r| cell(r, 0))
                    .find_map(|n| n.strip_suffix(" clients").and_then(|n| n.parse().ok()))
            })
            .unwrap_or(0);
        // Named or counted, every client once.
        assert_eq!(clients.len() + others, 1000, "step {}: {rows:?}", step.seq);
        // A client the table names and `step` counts is one a lock truly
        // grants a lease, or one that is out: never an idle one.
        assert!(
            others <= idle,
            "step {}: {rows:?} · {}",
            step.seq,
            step.beliefs
        );
        assert!(
            rows.len() <= believers.len() + 6,
            "step {}: {rows:?}",
            step.seq
        );
        counted += usize::from(others > 0);
    }
    assert!(counted > events / 2, "the crowd is counted, not listed");
}

#[test]
fn report_finishes_on_a_crowd_and_names_its_shared_lane() {
    let dir = TempDir::new("report_finishes_on_a_crowd_and_names_its_shared_lane");
    let file = dir.path().join("crowd-redis-100.toml");
    std::fs::write(&file, crowd("redis", 100)).unwrap();
    let out = dir.path().join("out");
    let (code, stdout, stderr) = fencesim(&[
        "report",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ])
    .into_parts();
    assert_eq!(code, 0, "{stdout}{stderr}");
    let read = |ext: &str| std::fs::read_to_string(out.join(format!("crowd-redis-100.{ext}")));
    let events = read("jsonl").unwrap().lines().count();
    let page = read("html").unwrap();
    assert!(page.contains(">90 more clients</div>"));
    assert!(
        page.len() <= 2_000 * events + 100_000,
        "{} bytes",
        page.len()
    );
    // The Markdown's lanes show the first and last rows; its step table
    // has every event.
    let md = read("md").unwrap();
    assert!(md.contains("rows not shown; `fencesim step` and `fencesim report` show every event"));
    assert_eq!(
        md.lines()
            .filter(|l| l.starts_with("| ") && l.contains(" | "))
            .count(),
        events + 1,
        "one row per event and the header"
    );
}
