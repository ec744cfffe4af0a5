//! Every relative link of the README and of the docs pages resolves: the
//! file or directory it names exists, and its `#anchor`, on a Markdown page,
//! is the GitHub slug of one of that page's headings (or an
//! `<a id="…">` on it).

use std::collections::BTreeSet;
use std::path::Path;

use crate::{crate_root, page, pages};

/// GitHub's anchor for a heading: its text in lower case, every character
/// that is not a letter, a digit, `-`, `_` or a space dropped, and each
/// space made `-` (`` `run --json` `` is `run---json`).
pub fn slug(heading: &str) -> String {
    let mut out = String::new();
    for c in heading.trim().chars() {
        if c.is_alphanumeric() || c == '-' || c == '_' {
            out.extend(c.to_lowercase());
        } else if c == ' ' {
            out.push('-');
        }
    }
    out
}

/// The lines of `text` outside fenced blocks.
fn prose(text: &str) -> Vec<&str> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push(line);
        }
    }
    out
}

/// The anchors a page defines: its headings' slugs (a repeated heading
/// gets `-1`, `-2`, … as on GitHub) and its `<a id="…">`s.
pub fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in prose(text) {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
            let base = slug(&line[hashes..]);
            let mut anchor = base.clone();
            let mut n = 0;
            while out.contains(&anchor) {
                n += 1;
                anchor = format!("{base}-{n}");
            }
            out.insert(anchor);
        }
        let mut rest = line;
        while let Some(i) = rest.find("<a id=\"") {
            rest = &rest[i + 7..];
            if let Some(end) = rest.find('"') {
                out.insert(rest[..end].to_owned());
            }
        }
    }
    out
}

/// `text` without its inline code spans (which may run over a line break).
fn without_code(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find('`') {
        out.push_str(&rest[..i]);
        let run = rest[i..].chars().take_while(|&c| c == '`').count();
        let after = &rest[i + run..];
        let closing = "`".repeat(run);
        let close = after.match_indices(&closing).find(|(j, _)| {
            !after[j + run..].starts_with('`') && (*j == 0 || !after[..*j].ends_with('`'))
        });
        match close {
            Some((j, _)) => rest = &after[j + run..],
            None => {
                out.push_str(&rest[i..i + run]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The targets of the inline links `[text](target)` in the prose of `text`.
pub fn links(text: &str) -> Vec<String> {
    let prose = without_code(&prose(text).join("\n"));
    let mut out = Vec::new();
    let mut rest = prose.as_str();
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        if let Some(end) = rest.find(')') {
            let target = rest[..end].split_whitespace().next().unwrap_or("");
            out.push(target.to_owned());
            rest = &rest[end..];
        }
    }
    out
}

/// What is wrong with the relative links of `file` (a path from the
/// repository's root) whose text is `text`.
pub fn problems(file: &str, text: &str) -> Vec<String> {
    let dir = Path::new(file).parent().unwrap_or(Path::new(""));
    let mut problems = Vec::new();
    for target in links(text) {
        if target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let (path, anchor) = match target.split_once('#') {
            Some((path, anchor)) => (path, Some(anchor)),
            None => (target.as_str(), None),
        };
        let linked = if path.is_empty() {
            file.to_owned()
        } else {
            dir.join(path).to_string_lossy().into_owned()
        };
        let on_disk = crate_root().join(&linked);
        if target.is_empty() {
            problems.push(format!("{file}: an empty link"));
            continue;
        }
        if !path.is_empty() && !on_disk.exists() {
            problems.push(format!("{file}: `{target}`: no file {linked}"));
            continue;
        }
        let Some(anchor) = anchor else { continue };
        if !linked.ends_with(".md") {
            continue;
        }
        let defined = if path.is_empty() {
            anchors(text)
        } else {
            anchors(&std::fs::read_to_string(&on_disk).unwrap_or_default())
        };
        if !defined.contains(anchor) {
            problems.push(format!(
                "{file}: `{target}`: {linked} has no heading whose anchor is #{anchor}"
            ));
        }
    }
    problems
}

#[test]
fn every_relative_link_of_the_pages_resolves() {
    let pages = pages();
    assert!(pages.len() > 5, "the pages: {pages:?}");
    let mut all = Vec::new();
    let mut checked = 0;
    for file in &pages {
        let text = page(file);
        checked += links(&text).len();
        all.extend(problems(file, &text));
    }
    assert!(checked > 100, "{checked} links checked");
    assert!(all.is_empty(), "broken links:\n{}", all.join("\n"));
}

#[test]
fn slugs_are_github_s() {
    assert_eq!(slug(" `run --json`"), "run---json");
    assert_eq!(
        slug(" Lock and storage: `[lock]`, `[storage]`"),
        "lock-and-storage-lock-storage"
    );
    assert_eq!(slug(" 9. The async stories"), "9-the-async-stories");
    assert_eq!(
        slug(" What a generic `[explore]` table finds"),
        "what-a-generic-explore-table-finds"
    );
    assert_eq!(
        slug(" The `sql` storage's statement"),
        "the-sql-storages-statement"
    );
}

/// The check above can fail: a missing file, a missing heading, and a
/// repeated heading's second anchor.
#[test]
fn a_broken_link_is_found() {
    let text = "# A\n\n## Same\n\n## Same\n\n\
        [ok](#same-1) [ok](../README.md#two-commands) [ok](cli.md#audit-rule-files)\n\
        [bad](nowhere.md) [bad](../README.md#no-such-heading) [bad](#same-2)\n\
        `[not a link](nowhere.md)`\n\n```\n[not a link](nowhere.md)\n```\n";
    let found = problems("docs/fake.md", text);
    assert_eq!(found.len(), 3, "{found:#?}");
    assert!(found[0].contains("no file docs/nowhere.md"), "{found:#?}");
    assert!(found[1].contains("#no-such-heading"), "{found:#?}");
    assert!(found[2].contains("#same-2"), "{found:#?}");
}
