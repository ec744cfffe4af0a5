//! `NAME.md`: a run as Markdown, with a Mermaid `sequenceDiagram` that
//! GitHub and most Markdown viewers draw.
//!
//! Participants come in lane order; a message is an arrow at its delivery
//! (`->>`), or a crossed arrow where the network lost it (`-x`); pauses,
//! expiries, grants, rejections, crashes and faults are `Note over` their
//! node, each with its true time. A crowd's clients past the terminal
//! lanes' room share one participant (`990 more clients`), and every arrow
//! and note of theirs is led by the client's name.
//!
//! ```
//! use fencesim::oracle::{check_and_count, OracleConfig};
//! use fencesim::report::{markdown, Subject};
//! use sim::journal::{Event, Journal};
//!
//! let journal = Journal::from_events([
//!     Event::new(0, 0, "client1", 0, "send").with("id", 0u64).with("to", "lock").with("msg", "acquire"),
//!     Event::new(0, 2, "lock", 2, "deliver").with("id", 0u64).with("from", "client1").with("msg", "acquire"),
//! ]);
//! let (report, milestones) = check_and_count(&journal, &OracleConfig::default());
//! let nodes = ["client1".to_owned(), "lock".to_owned()];
//! let md = markdown::mermaid(&Subject {
//!     name: "tiny", description: "", seed: 1, journal: &journal, report: &report,
//!     milestones: &milestones,
//!     nodes: &nodes, repro: "fencesim run tiny.toml --seed 1",
//!     untested: &[],
//! });
//! assert!(md.contains("participant n0 as client1\n"));
//! assert!(md.contains("n0->>n1: acquire\n"));
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use sim::events::{self as world, WorldEvent as W};

use super::belief::seconds;
use super::lanes::{crowd_hidden, crowd_lane_name, describe, lanes_limited, LanesOptions};
use super::step::{steps, verdict_text, Step};
use super::{node_order, Subject};
use crate::escape;
use crate::events::{decoded, Decoded, DomainEvent};

/// The line fencesim writes right before the page's diagram: what CI looks
/// for to render the diagram fencesim wrote (text from the scenario cannot
/// contain it: its Markdown escape turns every `<` into `&lt;`).
pub const SEQUENCE_MARKER: &str = "<!-- fencesim:sequence -->";

/// The whole page: title, verdict, description, diagram, findings, steps,
/// lanes, links and the repro command.
///
/// The verdict opens the title and comes before any text from the
/// scenario, and that text is escaped for Markdown: a name cannot head the
/// page with another verdict, and a description cannot hide the verdict in
/// a comment or forge one with headings, emphasis, links or raw HTML.
pub fn page(s: &Subject<'_>) -> String {
    page_with_steps(s, &steps(s.journal, s.report))
}

/// The most rows of the page's lanes: past that, the first and last
/// halves and a line saying how many were left out (the step table above
/// them has every event), so that a long journal's lanes do not outweigh
/// everything else on the page.
pub const MAX_LANE_ROWS: usize = 1_000;

/// [`page`], with the steps of `s` already explained ([`steps`]), so that
/// `fencesim report` explains a long journal once for all its pages.
pub fn page_with_steps(s: &Subject<'_>, steps: &[Step]) -> String {
    let mut out = String::new();
    let name = s.name;
    // The verdict opens the title: a name cannot put a heading that reads
    // as another verdict above the real one.
    writeln!(
        out,
        "# {} · {}\n",
        s.report.verdict.as_str().to_ascii_uppercase(),
        escape::markdown(name)
    )
    .unwrap();
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
        "**Milestones** (the dangerous situations this run reached): {}\n",
        s.milestones.reached_text()
    )
    .unwrap();
    for line in s.untested {
        writeln!(out, "**Untested:** {}\n", escape::markdown(line)).unwrap();
    }
    if !s.description.trim().is_empty() {
        writeln!(out, "{}\n", escape::markdown(s.description)).unwrap();
    }
    let file = href(name);
    writeln!(
        out,
        "Also: [step-through timeline]({file}.html) · [Perfetto trace]({file}.trace.json) \
         (open in ui.perfetto.dev) · [journal]({file}.jsonl)\n"
    )
    .unwrap();
    writeln!(
        out,
        "## Sequence\n\n{SEQUENCE_MARKER}\n{}",
        escape::fence("mermaid", &mermaid(s))
    )
    .unwrap();
    writeln!(out, "## What the oracle found\n").unwrap();
    if s.report.violations.is_empty() {
        writeln!(out, "No violation.").unwrap();
    }
    for v in &s.report.violations {
        writeln!(
            out,
            "- **{}** (event {}): {}",
            v.kind,
            v.seq,
            escape::markdown(&v.explanation)
        )
        .unwrap();
    }
    for e in s.journal.events() {
        let Decoded::Domain(DomainEvent::Rejected {
            write,
            client,
            reason,
            ..
        }) = decoded(e)
        else {
            continue;
        };
        let line = format!(
            "{} rejected {}'s write {write} at {}: {}.",
            e.node,
            client.unwrap_or("?"),
            seconds(e.t_ns),
            reason.unwrap_or("refused")
        );
        writeln!(out, "- {}", escape::markdown(&line)).unwrap();
    }
    writeln!(out, "\n## Step by step\n").unwrap();
    writeln!(out, "| # | time | node | event | what it means |").unwrap();
    writeln!(out, "|--:|--:|---|---|---|").unwrap();
    for step in steps {
        let mut meaning = step.sentence.clone();
        for v in &step.violations {
            write!(meaning, " ⚠ {v}").unwrap();
        }
        writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            step.seq,
            seconds(step.t_ns),
            escape::markdown(&step.node),
            escape::markdown(&step.phrase),
            escape::markdown(&meaning)
        )
        .unwrap();
    }
    let options = LanesOptions {
        width: 30,
        ..LanesOptions::default()
    };
    writeln!(
        out,
        "\n## Lanes\n\n{}",
        escape::fence(
            "text",
            &lanes_limited(s.journal, s.nodes, &options, MAX_LANE_ROWS)
        )
    )
    .unwrap();
    write!(
        out,
        "## Reproduce\n\n{}",
        escape::fence("sh", &format!("{}\n", escape::terminal(s.repro)))
    )
    .unwrap();
    out
}

/// A file name as a link target: anything but ASCII letters, digits, `.`,
/// `_` and `-` percent-encoded.
fn href(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b"._-".contains(&b) {
            out.push(b as char);
        } else {
            write!(out, "%{b:02X}").unwrap();
        }
    }
    out
}

/// The Mermaid `sequenceDiagram` (without the code fence).
pub fn mermaid(s: &Subject<'_>) -> String {
    let mut out = String::from("sequenceDiagram\n");
    // The world's own events are no participant's (a scenario's node is
    // never named `world`: the loader refuses it).
    let mut ids: Vec<&str> = node_order(s)
        .into_iter()
        .filter(|n| *n != world::WORLD)
        .collect();
    // A crowd is drawn as the lanes draw it: the lock and storage nodes
    // and the first clients as participants, the other clients as one
    // (`990 more clients`), each of its arrows and notes led by the
    // client's name.
    let hidden = crowd_hidden(s.journal, &mut ids);
    let crowd = crowd_lane_name(hidden.len());
    if !hidden.is_empty() {
        ids.push(&crowd);
    }
    // Lookups by map, not by scanning: the diagram costs time linear in
    // the journal (times a logarithm).
    let mut index: BTreeMap<&str, usize> = ids.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let shared = ids.len().wrapping_sub(1);
    index.extend(hidden.iter().map(|n| (*n, shared)));
    let id = |node: &str| index.get(node).map(|i| format!("n{i}"));
    // `text`, led by the name of whichever end of it is in the crowd.
    let whose = |nodes: [&str; 2], text: String| match nodes.iter().find(|n| hidden.contains(*n)) {
        Some(n) => format!("{n}: {text}"),
        None => text,
    };
    let mut findings: BTreeMap<u64, Vec<&str>> = BTreeMap::new();
    for v in &s.report.violations {
        findings.entry(v.seq).or_default().push(v.kind.as_str());
    }
    for (i, n) in ids.iter().enumerate() {
        writeln!(out, "    participant n{i} as {}", escape::mermaid(n)).unwrap();
    }
    let all = match ids.len() {
        0 => None,
        1 => Some("n0".to_owned()),
        n => Some(format!("n0,n{}", n - 1)),
    };
    let mut ended: BTreeSet<u64> = BTreeSet::new();
    // Each message sent: (sender, id, receiver, summary).
    let mut sends: Vec<(&str, u64, &str, &str)> = Vec::new();
    let mut first_send: BTreeMap<u64, &str> = BTreeMap::new();
    for e in s.journal.events() {
        let note = || {
            id(&e.node).map(|n| {
                format!(
                    "Note over {n}: {} {}",
                    seconds(e.t_ns),
                    escape::mermaid(&whose([&e.node, &e.node], describe(e)))
                )
            })
        };
        let line = match decoded(e) {
            Decoded::World(W::Send { id: m, to, msg }) => {
                sends.push((e.node.as_str(), m, to, msg));
                first_send.entry(m).or_insert(msg);
                None
            }
            Decoded::World(W::Deliver { id: m, from, msg }) => {
                let copy = !ended.insert(m);
                match (id(from), id(&e.node)) {
                    (Some(from_id), Some(to)) => Some(format!(
                        "{from_id}->>{to}: {}{}",
                        escape::mermaid(&whose([from, &e.node], msg.to_owned())),
                        if copy { " (duplicate)" } else { "" }
                    )),
                    _ => None,
                }
            }
            Decoded::World(W::Drop {
                id: m,
                to: receiver,
                msg,
                reason,
            }) => {
                ended.insert(m);
                let msg = msg
                    .or_else(|| first_send.get(&m).copied())
                    .unwrap_or("message");
                match (id(&e.node), id(receiver)) {
                    (Some(from), Some(to)) => {
                        let reason = reason.map_or(String::new(), |r| format!(": {r}"));
                        Some(format!(
                            "{from}-x{to}: {}",
                            escape::mermaid(&whose(
                                [&e.node, receiver],
                                format!("{msg} (lost{reason})")
                            ))
                        ))
                    }
                    _ => None,
                }
            }
            Decoded::World(
                W::Pause { .. }
                | W::Resume
                | W::Crash { .. }
                | W::Restart
                | W::Clock { .. }
                | W::Link { .. },
            )
            | Decoded::Domain(
                DomainEvent::Granted { .. }
                | DomainEvent::Acquired { .. }
                | DomainEvent::Expired { .. }
                | DomainEvent::Accepted { .. }
                | DomainEvent::Rejected { .. },
            ) => note(),
            Decoded::World(W::Partition { .. } | W::Heal { .. }) => all.as_ref().map(|n| {
                format!(
                    "Note over {n}: {} {}",
                    seconds(e.t_ns),
                    escape::mermaid(&describe(e))
                )
            }),
            _ => None,
        };
        if let Some(line) = line {
            writeln!(out, "    {line}").unwrap();
        }
        for kind in findings.get(&e.seq).into_iter().flatten() {
            if let Some(n) = id(&e.node) {
                let text = whose([&e.node, &e.node], format!("⚠ {kind}"));
                writeln!(out, "    Note over {n}: {}", escape::mermaid(&text)).unwrap();
            }
        }
    }
    for (sender, m, receiver, msg) in sends {
        if !ended.contains(&m) {
            if let (Some(from), Some(to)) = (id(sender), id(receiver)) {
                writeln!(
                    out,
                    "    {from}-x{to}: {} (never delivered)",
                    escape::mermaid(&whose([sender, receiver], msg.to_owned()))
                )
                .unwrap();
            }
        }
    }
    out
}
