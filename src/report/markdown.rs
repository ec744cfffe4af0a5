//! `NAME.md`: a run as Markdown, with a Mermaid `sequenceDiagram` that
//! GitHub and most Markdown viewers draw.
//!
//! Participants come in lane order; a message is an arrow at its delivery
//! (`->>`), or a crossed arrow where the network lost it (`-x`); pauses,
//! expiries, grants, rejections, crashes and faults are `Note over` their
//! node, each with its true time.
//!
//! ```
//! use fencesim::oracle::{check, OracleConfig};
//! use fencesim::report::{markdown, Subject};
//! use sim::journal::{Event, Journal};
//!
//! let journal = Journal::from_events([
//!     Event::new(0, 0, "client1", 0, "send").with("id", 0u64).with("to", "lock").with("msg", "acquire"),
//!     Event::new(0, 2, "lock", 2, "deliver").with("id", 0u64).with("from", "client1").with("msg", "acquire"),
//! ]);
//! let report = check(&journal, &OracleConfig::default());
//! let nodes = ["client1".to_owned(), "lock".to_owned()];
//! let md = markdown::mermaid(&Subject {
//!     name: "tiny", description: "", seed: 1, journal: &journal, report: &report,
//!     nodes: &nodes, repro: "fencesim run tiny.toml --seed 1",
//! });
//! assert!(md.contains("participant n0 as client1\n"));
//! assert!(md.contains("n0->>n1: acquire\n"));
//! ```

use std::collections::BTreeSet;
use std::fmt::Write as _;

use sim::journal::Event;

use super::belief::seconds;
use super::lanes::{describe, lanes, LanesOptions};
use super::step::{steps, verdict_text};
use super::Subject;
use crate::events;

/// The whole page: title, description, verdict, diagram, findings, steps,
/// lanes, links and the repro command.
pub fn page(s: &Subject<'_>) -> String {
    let mut out = String::new();
    let name = s.name;
    writeln!(out, "# {name}\n").unwrap();
    if !s.description.is_empty() {
        writeln!(out, "{}\n", s.description.trim()).unwrap();
    }
    writeln!(
        out,
        "**Verdict:** {} · seed {} · {} events\n",
        verdict_text(s.report),
        s.seed,
        s.journal.len()
    )
    .unwrap();
    writeln!(
        out,
        "Also: [step-through timeline]({name}.html) · [Perfetto trace]({name}.trace.json) \
         (open in ui.perfetto.dev) · [journal]({name}.jsonl)\n"
    )
    .unwrap();
    writeln!(
        out,
        "**Milestones** (the dangerous situations this run reached): {}\n",
        crate::oracle::Milestones::count(s.journal).reached_text()
    )
    .unwrap();
    writeln!(out, "## Sequence\n\n```mermaid\n{}```\n", mermaid(s)).unwrap();
    writeln!(out, "## What the oracle found\n").unwrap();
    if s.report.violations.is_empty() {
        writeln!(out, "No violation.").unwrap();
    }
    for v in &s.report.violations {
        writeln!(out, "- **{}** (event {}): {}", v.kind, v.seq, v.explanation).unwrap();
    }
    for e in s
        .journal
        .events()
        .iter()
        .filter(|e| e.kind == events::REJECTED)
    {
        writeln!(
            out,
            "- {} rejected {}'s write {} at {}: {}.",
            e.node,
            e.str("client").unwrap_or("?"),
            e.str("write").unwrap_or("?"),
            seconds(e.t_ns),
            e.str("reason").unwrap_or("refused")
        )
        .unwrap();
    }
    writeln!(out, "\n## Step by step\n").unwrap();
    writeln!(out, "| # | time | node | event | what it means |").unwrap();
    writeln!(out, "|--:|--:|---|---|---|").unwrap();
    for step in steps(s.journal, s.report) {
        let mut meaning = step.sentence.clone();
        for v in &step.violations {
            write!(meaning, " ⚠ {v}").unwrap();
        }
        writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            step.seq,
            seconds(step.t_ns),
            cell(&step.node),
            cell(&step.phrase),
            cell(&meaning)
        )
        .unwrap();
    }
    let options = LanesOptions {
        width: 30,
        ..LanesOptions::default()
    };
    writeln!(
        out,
        "\n## Lanes\n\n```text\n{}```\n",
        lanes(s.journal, s.nodes, &options)
    )
    .unwrap();
    writeln!(out, "## Reproduce\n\n```sh\n{}\n```", s.repro).unwrap();
    out
}

/// The Mermaid `sequenceDiagram` (without the code fence).
pub fn mermaid(s: &Subject<'_>) -> String {
    let mut out = String::from("sequenceDiagram\n");
    let mut ids: Vec<&str> = Vec::new();
    for n in s.nodes {
        if !ids.contains(&n.as_str()) {
            ids.push(n);
        }
    }
    for e in s.journal.events() {
        if e.node != "world" && !ids.contains(&e.node.as_str()) {
            ids.push(&e.node);
        }
    }
    let id = |node: &str| ids.iter().position(|n| *n == node).map(|i| format!("n{i}"));
    for (i, n) in ids.iter().enumerate() {
        writeln!(out, "    participant n{i} as {}", text(n)).unwrap();
    }
    let all = match ids.len() {
        0 => None,
        1 => Some("n0".to_owned()),
        n => Some(format!("n0,n{}", n - 1)),
    };
    let mut ended: BTreeSet<u64> = BTreeSet::new();
    let mut sends: Vec<&Event> = Vec::new();
    for e in s.journal.events() {
        let msg_id = e.u64("id");
        let line = match e.kind.as_str() {
            "send" => {
                sends.push(e);
                None
            }
            "deliver" => {
                let copy = msg_id.is_some_and(|m| !ended.insert(m));
                match (id(e.str("from").unwrap_or("")), id(&e.node)) {
                    (Some(from), Some(to)) => Some(format!(
                        "{from}->>{to}: {}{}",
                        text(e.str("msg").unwrap_or("")),
                        if copy { " (duplicate)" } else { "" }
                    )),
                    _ => None,
                }
            }
            "drop" => {
                if let Some(m) = msg_id {
                    ended.insert(m);
                }
                let msg = e
                    .str("msg")
                    .or_else(|| {
                        sends
                            .iter()
                            .find(|x| x.u64("id") == msg_id)
                            .and_then(|x| x.str("msg"))
                    })
                    .unwrap_or("message");
                match (id(&e.node), id(e.str("to").unwrap_or(""))) {
                    (Some(from), Some(to)) => Some(format!(
                        "{from}-x{to}: {} (lost{})",
                        text(msg),
                        e.str("reason").map_or(String::new(), |r| format!(": {r}"))
                    )),
                    _ => None,
                }
            }
            "pause"
            | "resume"
            | "crash"
            | "restart"
            | "clock"
            | "link"
            | events::GRANTED
            | events::ACQUIRED
            | events::EXPIRED
            | events::ACCEPTED
            | events::REJECTED => id(&e.node)
                .map(|n| format!("Note over {n}: {} {}", seconds(e.t_ns), text(&describe(e)))),
            "partition" | "heal" => all
                .as_ref()
                .map(|n| format!("Note over {n}: {} {}", seconds(e.t_ns), text(&describe(e)))),
            _ => None,
        };
        if let Some(line) = line {
            writeln!(out, "    {line}").unwrap();
        }
        for v in s.report.violations.iter().filter(|v| v.seq == e.seq) {
            if let Some(n) = id(&e.node) {
                writeln!(out, "    Note over {n}: ⚠ {}", v.kind).unwrap();
            }
        }
    }
    for e in sends {
        if e.u64("id").is_some_and(|m| !ended.contains(&m)) {
            if let (Some(from), Some(to)) = (id(&e.node), id(e.str("to").unwrap_or(""))) {
                writeln!(
                    out,
                    "    {from}-x{to}: {} (never delivered)",
                    text(e.str("msg").unwrap_or(""))
                )
                .unwrap();
            }
        }
    }
    out
}

/// Text safe inside a Mermaid line: `;` and `#` end or escape a statement,
/// `<` and `>` may be read as markup.
fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '#' => out.push_str("#35;"),
            ';' => out.push_str("#59;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Text safe inside a Markdown table cell.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('<', "&lt;")
}
