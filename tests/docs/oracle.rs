//! `docs/oracle.md` names what the oracle can say: every verdict, every
//! violation kind and every milestone, each as `` `name` ``.

use fencesim::oracle::milestones::NAMES;
use fencesim::oracle::{Verdict, ViolationKind};

use crate::page;

const FILE: &str = "docs/oracle.md";

/// Every verdict: the match fails to compile when one is added.
fn verdict_name(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Safe | Verdict::Violation | Verdict::Inconclusive | Verdict::Error => {
            verdict.as_str()
        }
    }
}

#[test]
fn the_page_names_every_verdict_violation_kind_and_milestone() {
    let doc = page(FILE);
    // Every kind, as the one list in src/oracle/finding/mod.rs declares them.
    let kinds: Vec<&str> = ViolationKind::ALL.iter().map(|k| k.as_str()).collect();
    let verdicts = [
        Verdict::Safe,
        Verdict::Violation,
        Verdict::Inconclusive,
        Verdict::Error,
    ]
    .map(verdict_name);
    let mut missing = Vec::new();
    for (what, names) in [
        ("violation kind", &kinds[..]),
        ("verdict", &verdicts[..]),
        ("milestone", &NAMES[..]),
    ] {
        for name in names {
            // A definition: a list item that opens with the name.
            if !doc.contains(&format!("- `{name}`")) {
                missing.push(format!("{what} `{name}`"));
            }
        }
    }
    for term in ["strict", "false_rejections", "overlapping_leases"] {
        if !doc.contains(&format!("`{term}")) {
            missing.push(format!("term `{term}`"));
        }
    }
    assert!(
        missing.is_empty(),
        "{FILE} does not define:\n{}",
        missing.join("\n")
    );
}

/// Users read the repository's own pages: the README links each of them,
/// and no page points at the team's design notes, which users do not have.
#[test]
fn the_readme_links_every_page_and_no_page_points_outside() {
    let readme = page("README.md");
    let pages = crate::pages();
    for doc in [
        "format",
        "oracle",
        "cli",
        "tutorial",
        "catalogue",
        "exploring",
    ] {
        assert!(pages.contains(&format!("docs/{doc}.md")), "docs/{doc}.md");
    }
    for doc in pages.iter().filter(|p| p.starts_with("docs/")) {
        let link = format!("]({doc})");
        assert!(readme.contains(&link), "README.md does not link {doc}");
    }
    for file in &pages {
        let text = page(file);
        for elsewhere in ["DESIGN.md", "shared/"] {
            assert!(!text.contains(elsewhere), "{file} points at {elsewhere}");
        }
    }
}
