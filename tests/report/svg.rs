//! `NAME.svg`: the printable lane diagram, DDIA's figure 9-6 redrawn from a
//! real trace.

use fencesim::report::{svg, Subject};

use crate::{bundled, crate_root};

fn figure(name: &str) -> String {
    let (s, run) = bundled(name);
    let repro = format!("fencesim run {} --seed {}", s.file, s.seed);
    svg::figure(&Subject {
        name: &s.name,
        description: &s.description,
        seed: s.seed,
        journal: &run.result.journal,
        report: &run.report,
        milestones: &run.milestones,
        nodes: &run.nodes,
        repro: &repro,
        untested: &[],
    })
}

/// Checks that `text` is well-formed XML as far as a figure needs: one
/// declaration, then elements that all close in order, attribute values in
/// double quotes, and no `&` that does not start an entity. Returns the
/// element names in document order.
fn elements(text: &str) -> Vec<String> {
    let body = text
        .strip_prefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
        .expect("XML declaration first");
    let mut open: Vec<String> = Vec::new();
    let mut names = Vec::new();
    let mut rest = body;
    while let Some(at) = rest.find('<') {
        check_text(&rest[..at]);
        let end = rest[at..].find('>').expect("unclosed tag") + at;
        let tag = &rest[at + 1..end];
        rest = &rest[end + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(
                open.pop().as_deref(),
                Some(name),
                "</{name}> closes nothing open"
            );
            continue;
        }
        let self_closing = tag.ends_with('/');
        let tag = tag.trim_end_matches('/');
        let name = tag
            .split_whitespace()
            .next()
            .expect("a tag name")
            .to_owned();
        assert!(
            name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'),
            "{name:?}"
        );
        // Attributes: name="value", values without `<` or a raw `"`.
        let mut attrs = tag[name.len()..].trim();
        while !attrs.is_empty() {
            let eq = attrs
                .find("=\"")
                .unwrap_or_else(|| panic!("bad attribute in <{tag}>"));
            let close = attrs[eq + 2..].find('"').expect("unquoted attribute") + eq + 2;
            check_text(&attrs[eq + 2..close]);
            attrs = attrs[close + 1..].trim_start();
        }
        names.push(name.clone());
        if !self_closing {
            open.push(name);
        }
    }
    check_text(rest.trim());
    assert!(open.is_empty(), "left open: {open:?}");
    assert_eq!(names.first().map(String::as_str), Some("svg"));
    names
}

fn check_text(text: &str) {
    for (i, _) in text.match_indices('&') {
        let entity = &text[i..text[i..].find(';').map_or(text.len(), |e| i + e + 1)];
        assert!(
            ["&amp;", "&lt;", "&gt;", "&quot;"].contains(&entity),
            "raw & in {text:?}"
        );
    }
    assert!(
        !text
            .chars()
            .any(|c| (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r')),
        "a control character XML forbids in {text:?}"
    );
}

/// The `<text>` contents, unescaped.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text ")
        .skip(1)
        .map(|t| {
            let start = t.find('>').unwrap() + 1;
            let end = t.find("</text>").unwrap();
            t[start..end]
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&amp;", "&")
        })
        .collect()
}

#[test]
fn figure_9_6_is_the_books_figure_redrawn_from_the_trace() {
    let svg = figure("figure-9-6");
    let names = elements(&svg);
    assert!(svg.contains("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(svg.ends_with("</svg>\n"));
    for element in ["title", "desc", "line", "rect", "circle", "text", "marker"] {
        assert!(names.iter().any(|n| n == element), "no <{element}>");
    }
    // The scenario's own first token, and the one after it.
    let scenario: toml::Table =
        std::fs::read_to_string(crate_root().join("scenarios/figure-9-6.toml"))
            .unwrap()
            .parse()
            .unwrap();
    let first = scenario["lock"]["first_token"].as_integer().unwrap();
    let (old, new) = (first, first + 1);
    assert_eq!((old, new), (33, 34));
    let texts = texts(&svg);
    let has = |want: &str| texts.iter().any(|t| t == want);
    // Lanes: the clients, the lock and the storage.
    for lane in ["client1", "client2", "lock", "storage"] {
        assert!(has(lane), "no lane {lane}: {texts:?}");
    }
    // The leases: what each client believes, and the grants at the lock.
    assert!(has(&format!("believes it holds token {old}")), "{texts:?}");
    assert!(has(&format!("believes it holds token {new}")), "{texts:?}");
    assert!(
        has(&format!("grant {old}")) && has(&format!("grant {new}")),
        "{texts:?}"
    );
    // The pause, the writes with their tokens, the acceptance and the
    // rejection of the zombie's write.
    assert!(has("paused 15s (stop-the-world)"), "{texts:?}");
    assert!(has(&format!("write client1/1 token={old}")), "{texts:?}");
    assert!(has(&format!("write client2/1 token={new}")), "{texts:?}");
    assert!(has(&format!("✓ accepted {new}")), "{texts:?}");
    assert!(
        has(&format!("✗ rejected: token {old} < {new}")),
        "{texts:?}"
    );
    // The true times where the stretches drawn to scale begin: the start,
    // and client2's first request at 12 s.
    assert!(has("0.000s") && has("12.000s"), "{texts:?}");
    // Its caption says how time is drawn, and how to replay it.
    assert!(texts
        .iter()
        .any(|t| t.starts_with("Time flows right, to scale at 1 px = ")));
    assert!(has(
        "Drawn by fencesim from a real trace: fencesim run scenarios/figure-9-6.toml --seed 1"
    ));
}

#[test]
fn the_figure_is_the_same_bytes_every_time_and_well_formed_for_every_kind_of_run() {
    for name in [
        "figure-9-6",
        "jepsen-etcd-lock",
        "redlock-gc-pause-during-acquisition",
        "partitioned-holder",
        "redis-restart-without-persistence",
    ] {
        let a = figure(name);
        elements(&a);
        assert!(a == figure(name), "{name}: two renderings differ");
    }
}

#[test]
fn text_from_the_scenario_cannot_break_the_figure() {
    let (s, run) = bundled("figure-9-6");
    let hostile = "</desc><script>alert(1)</script> & \u{1b}[2J \u{7}";
    let figure = svg::figure(&Subject {
        name: "a <b>",
        description: hostile,
        seed: s.seed,
        journal: &run.result.journal,
        report: &run.report,
        milestones: &run.milestones,
        nodes: &run.nodes,
        repro: "fencesim run \"x&y\".toml --seed 1",
        untested: &[],
    });
    let names = elements(&figure);
    assert!(
        !names.iter().any(|n| n == "script" || n == "b"),
        "{names:?}"
    );
    assert!(figure.contains("&lt;/desc&gt;&lt;script&gt;"));
}

#[test]
fn an_empty_journal_still_draws_its_lanes() {
    let journal = sim::journal::Journal::from_events([]);
    let (report, milestones) =
        fencesim::oracle::check_and_count(&journal, &fencesim::oracle::OracleConfig::default());
    let nodes = [
        "client1".to_owned(),
        "lock".to_owned(),
        "storage".to_owned(),
    ];
    let subject = Subject {
        name: "empty",
        description: "",
        seed: 0,
        journal: &journal,
        report: &report,
        milestones: &milestones,
        nodes: &nodes,
        repro: "fencesim run empty.toml --seed 0",
        untested: &[],
    };
    let figure = svg::figure(&subject);
    elements(&figure);
    for lane in &nodes {
        assert!(texts(&figure).contains(lane), "{lane}");
    }
    let page = fencesim::report::html::page(&subject);
    assert!(page.contains("<svg id=\"svg\""));
}
