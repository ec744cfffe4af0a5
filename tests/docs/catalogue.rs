//! The catalogue of bundled scenarios (`docs/catalogue.md`) is the
//! directory: every file
//! of `scenarios/` has one row, every row names a file, and the verdict a
//! row states is the one the file's `[expect]` holds it to (which `check`
//! verifies on every run).

use std::collections::BTreeMap;

use fencesim::design::catalog::Registry;
use fencesim::scenario::load_file;

use crate::{crate_root, page};

const FILE: &str = "docs/catalogue.md";

/// The rows of the table under `## The catalogue`: file → verdict.
fn rows(text: &str) -> BTreeMap<String, String> {
    let start = text
        .find("\n## The catalogue\n")
        .unwrap_or_else(|| panic!("{FILE} has a `## The catalogue` section"));
    let section = &text[start + 1..];
    let end = section[1..].find("\n#").map_or(section.len(), |i| i + 1);
    let mut rows = BTreeMap::new();
    for line in section[..end].lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (Some(file), Some(verdict)) = (cells.get(1), cells.get(3)) else {
            continue;
        };
        let Some(file) = file.strip_prefix('`').and_then(|f| f.strip_suffix('`')) else {
            continue;
        };
        let previous = rows.insert(file.to_owned(), (*verdict).to_owned());
        assert!(previous.is_none(), "{FILE} lists {file} twice");
    }
    rows
}

#[test]
fn the_catalogue_lists_every_bundled_scenario_with_its_expected_verdict() {
    let rows = rows(&page(FILE));
    let mut problems = Vec::new();
    let mut files = Vec::new();
    for entry in std::fs::read_dir(crate_root().join("scenarios")).expect("scenarios/") {
        let path = entry.expect("dir entry").path();
        if path.extension().is_some_and(|e| e == "toml") {
            files.push(path);
        }
    }
    files.sort();
    assert!(files.len() >= 10, "scenarios/ holds {} files", files.len());
    for path in &files {
        let name = path.file_name().and_then(|n| n.to_str()).expect("UTF-8");
        let scenario = load_file(&Registry::builtin(), path)
            .unwrap_or_else(|e| panic!("a bundled scenario loads: {e}"));
        let expected = scenario.expect.verdict.map_or("(none)", |v| v.as_str());
        match rows.get(name) {
            None => problems.push(format!("{name} has no row")),
            Some(verdict) if verdict != expected => problems.push(format!(
                "{name}: the row says {verdict}, its [expect] says {expected}"
            )),
            Some(_) => {}
        }
    }
    for file in rows.keys() {
        if !crate_root().join("scenarios").join(file).is_file() {
            problems.push(format!("the row {file} names no file of scenarios/"));
        }
    }
    assert!(
        problems.is_empty(),
        "{FILE}'s table of bundled scenarios:\n{}",
        problems.join("\n")
    );
}
