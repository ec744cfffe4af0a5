//! `docs/format.md`'s design and client tables are `fencesim designs
//! --markdown`'s output, section by section: a key added, renamed or
//! redocumented in a design's config shows here until the page is
//! regenerated.

use std::collections::BTreeSet;

use crate::{crate_root, fencesim_in, page};

const FILE: &str = "docs/format.md";

/// `designs --markdown`'s sections: each design's (from its `####` heading
/// to the next heading) and the client table (from its header row).
fn sections(markdown: &str) -> Vec<String> {
    let mut sections = Vec::new();
    for part in markdown.split("\n#### ").skip(1) {
        let end = part.find("\n### ").unwrap_or(part.len());
        sections.push(format!("#### {}", &part[..end]).trim_end().to_owned() + "\n");
    }
    let clients = markdown
        .split("### Client keys\n\n")
        .nth(1)
        .expect("the output has the client keys");
    let end = clients.find("\n### ").unwrap_or(clients.len());
    sections.push(clients[..end + 1].to_owned());
    sections
}

#[test]
fn the_design_tables_are_what_designs_markdown_prints() {
    let out = fencesim_in(crate_root(), &["designs", "--markdown"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let format = page(FILE);
    let sections = sections(&out.stdout);
    let stale: Vec<&String> = sections.iter().filter(|s| !format.contains(*s)).collect();
    assert!(
        stale.is_empty(),
        "{FILE} differs from `fencesim designs --markdown`; regenerate these sections:\n\n{}",
        stale
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    // And the page documents no design the catalog lacks.
    let designs = out.stdout.split("\n### Client keys").next().unwrap_or("");
    let listed: BTreeSet<&str> = designs
        .lines()
        .filter_map(|l| l.strip_prefix("#### "))
        .collect();
    let on_page: BTreeSet<&str> = format
        .split("\n### Lock designs\n")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("the page has its lock designs")
        .lines()
        .filter_map(|l| l.strip_prefix("#### "))
        .collect();
    assert_eq!(on_page, listed, "{FILE}'s designs are the catalog's");
}
