//! `NAME.md`: the Mermaid sequence diagram and the page around it.

use fencesim::report::{markdown, Subject};

use crate::bundled;

fn page(name: &str) -> String {
    let (s, run) = bundled(name);
    let repro = format!("fencesim run {} --seed {}", s.file, s.seed);
    markdown::page(&Subject {
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

/// The lines of the page's Mermaid block.
fn mermaid(page: &str) -> Vec<&str> {
    let start = page.find("```mermaid\n").expect("a mermaid block") + "```mermaid\n".len();
    let len = page[start..].find("```").unwrap();
    page[start..start + len].lines().collect()
}

#[test]
fn figure_9_6_diagram_has_the_participants_in_lane_order_and_the_rejection() {
    let page = page("figure-9-6");
    let lines = mermaid(&page);
    assert_eq!(lines[0], "sequenceDiagram");
    assert_eq!(
        lines[1..5],
        [
            "    participant n0 as client1",
            "    participant n1 as client2",
            "    participant n2 as lock",
            "    participant n3 as storage",
        ]
    );
    for expected in [
        "    n0->>n3: write client1/1 token=33",
        "    Note over n3: 16.006s REJECTED client1/1 (token 33 #lt; 34)",
        "    Note over n0: 0.005s ⏸ paused 15.000s",
        "    Note over n2: 10.002s lease 1 of client1 expired",
    ] {
        assert!(
            lines.contains(&expected),
            "missing {expected:?} in\n{}",
            lines.join("\n")
        );
    }
    // Every line after the header is a participant, an arrow or a note.
    for l in &lines[1..] {
        let l = l.trim_start();
        assert!(
            l.starts_with("participant ")
                || l.starts_with("Note over ")
                || l.contains("->>")
                || l.contains("-x"),
            "{l}"
        );
        // Outside entity codes (`#lt;`), a `;` would end the statement.
        let bare = ["#lt;", "#gt;", "#35;", "#59;"]
            .iter()
            .fold(l.to_owned(), |l, entity| l.replace(entity, ""));
        assert!(!bare.contains(';'), "a `;` ends a Mermaid statement: {l}");
    }
    assert!(page.contains("fencesim run scenarios/figure-9-6.toml --seed 1"));
    assert!(page.contains("[step-through timeline](figure-9-6.html)"));
}

#[test]
fn a_violation_is_noted_and_explained() {
    let page = page("figure-9-6-unfenced");
    assert!(mermaid(&page).contains(&"    Note over n3: ⚠ stale_write"));
    assert!(page.contains("- **stale_write** (event 31): storage accepted client1's write"));
}

#[test]
fn lost_messages_are_crossed_arrows() {
    let page = page("lost-release");
    assert!(
        mermaid(&page)
            .iter()
            .any(|l| l.contains("-x") && l.contains("release lease=1 (lost")),
        "{page}"
    );
}

/// What a design journals from the scenario (SQLite's error text, a
/// message, a node name) renders as text: in the findings, the step table
/// and the diagram.
#[test]
fn journalled_text_is_escaped_in_the_findings_table_and_diagram() {
    use fencesim::oracle::{check_and_count, OracleConfig};
    use sim::journal::{Event, Journal};

    let hostile = "near \"x\": syntax error <!-- | # [link](http://e) %%{init: {}}%% ``` \x1b[2J";
    let journal = Journal::from_events([
        Event::new(0, 0, "client1", 0, "send")
            .with("id", 0u64)
            .with("to", "storage")
            .with("msg", hostile),
        Event::new(1, 2, "storage", 2, "deliver")
            .with("id", 0u64)
            .with("from", "client1")
            .with("msg", hostile),
        Event::new(2, 3, "storage", 3, "rejected")
            .with("client", "client1")
            .with("write", "client1/1")
            .with("reason", hostile),
    ]);
    let (report, milestones) = check_and_count(&journal, &OracleConfig::default());
    let nodes = ["client1".to_owned(), "storage".to_owned()];
    let page = markdown::page(&Subject {
        name: "sql",
        description: "",
        seed: 1,
        journal: &journal,
        report: &report,
        milestones: &milestones,
        nodes: &nodes,
        repro: "fencesim run sql.toml --seed 1",
        untested: &[],
    });
    assert_eq!(page.matches("<!--").count(), 1, "only the marker:\n{page}");
    assert!(!page.contains('\x1b'), "{page}");
    let finding = page
        .lines()
        .find(|l| l.starts_with("- storage rejected"))
        .expect("the rejection among the findings");
    assert!(
        finding.contains("&lt;!-- \\| # `[link](http://e)` %%{init: {}}%% \\`\\`\\` \\x1b"),
        "{finding}"
    );
    // The table keeps its five columns on every row.
    for row in page.lines().filter(|l| l.starts_with("| ")) {
        assert_eq!(row.matches(" | ").count(), 4, "{row}");
    }
    // The diagram: one statement per line, no directive, no fence closed.
    let diagram = mermaid(&page);
    let arrow = diagram.iter().find(|l| l.contains("->>")).unwrap();
    for entity in [
        "#lt;!--",
        "#35; [link]",
        "#37;#37;#123;init",
        "#96;#96;#96;",
    ] {
        assert!(arrow.contains(entity), "{entity} in {arrow}");
    }
    assert!(!diagram
        .iter()
        .any(|l| l.contains("%%") || l.contains("```")));
}
