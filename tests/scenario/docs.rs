//! `docs/format.md`, the reference of the scenario format, kept honest: its
//! examples load with the real loader, it names every key the loader
//! accepts, and its design tables are the catalog's own text.

use fencesim::design::catalog::{DesignInfo, KeySpec, Registry, CLIENT_KEYS};
use fencesim::runner::{self, RunStatus};
use fencesim::scenario::model::{EXPECT_OUTCOMES, FAULT_KINDS};
use fencesim::scenario::{accepted_keys, load_str, Scenario};

const FORMAT: &str = include_str!("../../docs/format.md");
const README: &str = include_str!("../../README.md");
const FILE: &str = "docs/format.md";

/// The ```toml blocks of the page: (line of the opening fence, text).
fn toml_blocks() -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (i, line) in FORMAT.lines().enumerate() {
        let fence = line.trim_start();
        match &mut open {
            None if fence.starts_with("```toml") => open = Some((i + 1, String::new())),
            Some(_) if fence.starts_with("```") => blocks.extend(open.take()),
            Some((_, text)) => {
                text.push_str(line);
                text.push('\n');
            }
            None => {}
        }
    }
    assert!(open.is_none(), "{FILE}: a ```toml block is never closed");
    blocks
}

/// Whether `text` sets `key` at its top level (before any table header).
fn top_level_key(text: &str, key: &str) -> bool {
    text.lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with('['))
        .any(|l| {
            l.strip_prefix(key)
                .is_some_and(|r| r.trim_start().starts_with('='))
        })
}

fn has_header(text: &str, header: &str) -> bool {
    text.lines().any(|l| l.trim().starts_with(header))
}

/// A fragment made a scenario: the parts it leaves out (a name, a lease
/// lock, a fenced storage, clients `client1` and `client2`) added around it;
/// and how many lines were added before it.
fn completed(fragment: &str) -> (String, usize) {
    let mut text = String::new();
    let mut before = 0;
    if !top_level_key(fragment, "name") {
        text.push_str("name = \"example\"\n");
        before = 1;
    }
    text.push_str(fragment);
    if !has_header(fragment, "[lock]") {
        text.push_str("\n[lock]\ndesign = \"lease\"\n");
    }
    if !has_header(fragment, "[storage]") {
        text.push_str("\n[storage]\ndesign = \"fenced\"\n");
    }
    if !has_header(fragment, "[[clients]]") {
        text.push_str("\n[[clients]]\nname = \"client1\"\n[[clients]]\nname = \"client2\"\n");
    }
    (text, before)
}

/// Loads a block whose first line is line `fence + 1` of the page (after
/// `before` added lines), failing with the page's own line and column.
#[track_caller]
fn load_block(fence: usize, text: &str, before: usize) -> Scenario {
    match load_str(&Registry::builtin(), FILE, text) {
        Ok(scenario) => scenario,
        Err(e) => {
            let line = (fence + e.line).saturating_sub(before);
            panic!(
                "{FILE}:{line}:{}: {}\n--- the block as loaded ---\n{text}",
                e.col, e.message
            )
        }
    }
}

#[test]
fn every_whole_scenario_example_loads_and_runs_as_it_says() {
    let whole: Vec<_> = toml_blocks()
        .into_iter()
        .filter(|(_, text)| top_level_key(text, "name"))
        .collect();
    assert!(
        whole.len() >= 3,
        "{FILE} shows whole scenarios: found {}",
        whole.len()
    );
    for (line, text) in whole {
        let scenario = load_block(line, &text, 0);
        // What the page shows a scenario doing, it does.
        let run = runner::run(&scenario, scenario.seed);
        assert_eq!(
            run.status,
            RunStatus::Ok,
            "the scenario at {FILE}:{line}: {:?} {:?}\n{:#?}",
            run.report.verdict,
            run.inconclusive,
            run.expectations
        );
    }
}

#[test]
fn every_fragment_loads_inside_a_minimal_scenario() {
    let blocks = toml_blocks();
    assert!(
        blocks.len() >= 10,
        "{FILE} has {} toml blocks",
        blocks.len()
    );
    for (line, fragment) in blocks {
        let (text, before) = completed(&fragment);
        load_block(line, &text, before);
    }
}

/// The names the page must show as `` `name` ``: every key the loader
/// accepts (design keys included), fault kind, event, outcome and milestone.
#[test]
fn the_page_names_every_key_the_loader_accepts() {
    let mut missing = Vec::new();
    let mut check = |what: &str, name: &str| {
        if !FORMAT.contains(&format!("`{name}`")) {
            missing.push(format!("{what}: `{name}`"));
        }
    };
    let tables = accepted_keys();
    for table in [
        "the top level",
        "[network]",
        "[[network.links]]",
        "[[clients]]",
        "[expect]",
        "[[faults]]",
        "[explore]",
    ] {
        assert!(
            tables.iter().any(|(t, _)| t == table),
            "accepted_keys() lacks {table}"
        );
    }
    for (table, keys) in &tables {
        for key in keys {
            check(table, key);
        }
    }
    for kind in FAULT_KINDS {
        assert!(
            tables
                .iter()
                .any(|(t, _)| *t == format!("[[faults]] of kind `{kind}`")),
            "accepted_keys() lacks the keys of fault kind {kind}"
        );
        check("fault kind", kind);
    }
    for design in Registry::builtin().designs() {
        check("design", design.name);
        for key in design.keys {
            check(
                &format!("[{}] design {}", design.role, design.name),
                key.name,
            );
        }
    }
    for event in fencesim::events::DOMAIN_EVENTS
        .iter()
        .chain(sim::WORLD_EVENTS)
    {
        check("event for `after`", event);
    }
    for outcome in EXPECT_OUTCOMES {
        check("[expect] outcome", outcome);
    }
    for verdict in ["safe", "violation", "inconclusive", "error"] {
        check("verdict", verdict);
    }
    for milestone in fencesim::oracle::milestones::NAMES {
        check("milestone", milestone);
    }
    assert!(
        missing.is_empty(),
        "{FILE} never names:\n{}",
        missing.join("\n")
    );
}

/// A catalog key as a row of the page's tables.
fn row(key: &KeySpec) -> String {
    let default = key
        .default
        .as_ref()
        .map_or("required".to_owned(), |d| format!("`{d}`"));
    let kind = key.kind.to_string().replace('|', "\\|");
    format!("| `{}` | {kind} | {default} | {} |", key.name, key.doc)
}

const HEADER: &str = "| key | type and range | default | meaning |\n|---|---|---|---|\n";

/// The table of a design's keys, exactly as the catalog (and `fencesim
/// designs`) describes them.
fn design_table(design: &DesignInfo) -> String {
    if design.keys.is_empty() {
        return format!("`{}` takes no key besides `design`.", design.name);
    }
    let rows: Vec<String> = design.keys.iter().map(row).collect();
    format!("{HEADER}{}\n", rows.join("\n"))
}

#[test]
fn design_and_client_tables_are_the_catalogs_text() {
    let mut expected = Vec::new();
    for design in Registry::builtin().designs() {
        let summary = format!("`{}`: {}.", design.name, design.summary);
        let table = design_table(design);
        if !FORMAT.contains(&summary) || !FORMAT.contains(&table) {
            expected.push(format!("{summary}\n\n{table}"));
        }
    }
    let clients: Vec<String> = CLIENT_KEYS.iter().map(row).collect();
    let name = "| `name` | string | required | the client's node name: unique, a letter then \
                letters, digits, `_` or `-` |";
    let clients = format!("{HEADER}{name}\n{}\n", clients.join("\n"));
    if !FORMAT.contains(&clients) {
        expected.push(clients);
    }
    assert!(
        expected.is_empty(),
        "{FILE} differs from the catalog; it should read:\n\n{}",
        expected.join("\n\n")
    );
}

/// Users read the repository's own reference: the README links it, and
/// neither points at the team's design notes, which users do not have.
#[test]
fn the_readme_links_the_reference_and_nothing_outside_the_repository() {
    assert!(README.contains("[docs/format.md](docs/format.md)"));
    for (file, text) in [("README.md", README), (FILE, FORMAT)] {
        for elsewhere in ["DESIGN.md", "shared/"] {
            assert!(!text.contains(elsewhere), "{file} points at {elsewhere}");
        }
    }
}
