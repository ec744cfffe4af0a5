//! `NAME.svg`: a static lane diagram of the run in the style of DDIA's
//! figure 9-6, to print or put on a slide: one lane per node (time flowing
//! right), the leases as bars (blue: what a client believes it holds; green:
//! what a lock node truly grants), pauses hatched, crashes grey, messages as
//! labelled arrows, the writes with their tokens and the storage's verdict
//! on each (`✓ accepted 34`, `✗ rejected: token 33 < 34`).
//!
//! The time axis is the timeline's ([`super::axis`]): to scale, with quiet
//! stretches cut and labelled with their length, which the caption says;
//! each stretch drawn to scale is marked with the true time it begins.
//! Labels that would overlap another are left out (every event is still
//! drawn). The bytes depend on the journal alone: one SVG file, styled with
//! presentation attributes only (no CSS, no script, nothing fetched), so
//! that slide software and browsers draw it alike.
//!
//! ```
//! use fencesim::oracle::{check_and_count, OracleConfig};
//! use fencesim::report::{svg, Subject};
//! use sim::journal::{Event, Journal};
//!
//! let journal = Journal::from_events([
//!     Event::new(0, 0, "lock", 0, "granted").with("client", "client1").with("lease", 1u64).with("token", 33u64),
//!     Event::new(0, 16_000_000_000, "storage", 16_000_000_000, "rejected")
//!         .with("write", "client1/1").with("token", 33u64).with("max_token", 34u64),
//! ]);
//! let (report, milestones) = check_and_count(&journal, &OracleConfig::default());
//! let nodes = ["client1".to_owned(), "lock".to_owned(), "storage".to_owned()];
//! let figure = svg::figure(&Subject {
//!     name: "figure-9-6",
//!     description: "",
//!     seed: 1,
//!     journal: &journal,
//!     report: &report,
//!     milestones: &milestones,
//!     nodes: &nodes,
//!     repro: "fencesim run figure-9-6.toml --seed 1",
//!     untested: &[],
//! });
//! assert!(figure.starts_with("<?xml") && figure.ends_with("</svg>\n"));
//! assert!(figure.contains("✗ rejected: token 33 &lt; 34"));
//! ```

use std::collections::BTreeMap;
use std::fmt::Write as _;

use sim::events::WorldEvent as W;
use sim::journal::Event;

use super::axis::{span_text, Axis, Cut};
use super::belief::{lease_bars, seconds};
use super::html::{bar_rows, label, lane_nodes, tone};
use super::step::verdict_text;
use super::{first_finding_at, Subject};
use crate::events::DomainEvent;

/// Where time 0 is: the lanes' names go left of it.
const LEFT: f64 = 130.0;
const RIGHT: f64 = 150.0;
/// The title, the verdict and the time axis above the lanes.
const TOP: f64 = 84.0;
const BAR_ROW: f64 = 15.0;
/// Rows of labels under a lane's line.
const LABEL_ROWS: usize = 3;
const LABEL_ROW: f64 = 15.0;
/// The scale the figure starts from, doubled (up to 64 px/ms) until the run
/// is [`WIDTH`] wide.
const PX_PER_MS: f64 = 4.0;
const WIDTH: f64 = 960.0;
const CUT: Cut = Cut {
    cut_px: 200.0,
    break_px: 70.0,
};
/// Estimated width of a char of 12 px text (a little generous: a label
/// the estimate lets through must not overlap in any sans-serif font).
const CHAR_PX: f64 = 7.2;

const FONT: &str = "Helvetica, Arial, sans-serif";
const INK: &str = "#1d2330";
const MUTED: &str = "#5b6472";
const GOOD: &str = "#1f7a3f";
const WARN: &str = "#9a6500";
const BAD: &str = "#b3261e";
const BELIEVED: &str = "#3d7be0";
const HELD: &str = "#2f9e55";

/// The figure.
pub fn figure(s: &Subject<'_>) -> String {
    let nodes = lane_nodes(s);
    let events = s.journal.events();
    let bars = lease_bars(s.journal);
    let (rows, bar_rows) = bar_rows(&nodes, &bars);
    let times = || events.iter().map(|e| e.t_ns);
    let mut axis = Axis::new(times(), LEFT, PX_PER_MS, Some(CUT));
    while axis.end() + RIGHT < WIDTH && axis.px_per_ms() < 64.0 {
        axis = Axis::new(times(), LEFT, axis.px_per_ms() * 2.0, Some(CUT));
    }
    // Lanes: bar rows, then the line, then rows of labels.
    let mut lanes: Vec<(f64, f64)> = Vec::with_capacity(nodes.names.len()); // (top, line)
    let mut y = TOP;
    for bar_rows in &rows {
        let line = y + 10.0 + BAR_ROW * *bar_rows as f64 + 14.0;
        lanes.push((y, line));
        y = line + 18.0 + LABEL_ROW * (LABEL_ROWS as f64 - 1.0) + 16.0;
    }
    let lane = |node: &str| nodes.of(node);
    let end = events.last().map_or(0, |e| e.t_ns);
    let width = (axis.end() + RIGHT).max(WIDTH).ceil();
    let height = (y + 64.0).ceil();

    let mut out = String::with_capacity(16 * 1024);
    let mut texts = Texts::default();
    writeln!(
        out,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" font-family=\"{FONT}\" font-size=\"12\" fill=\"{INK}\">\n\
         <title>{}</title>\n<desc>{}</desc>\n<defs>\
         <marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"8\" markerHeight=\"8\" \
         orient=\"auto\"><path d=\"M0,0L10,5L0,10z\" fill=\"{MUTED}\"/></marker>\
         <pattern id=\"hatch\" width=\"8\" height=\"8\" patternUnits=\"userSpaceOnUse\" \
         patternTransform=\"rotate(45)\"><rect width=\"8\" height=\"8\" fill=\"#fff4dc\"/>\
         <line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"8\" stroke=\"#e0a030\" stroke-width=\"3\"/></pattern>\
         </defs>\n<rect width=\"{width}\" height=\"{height}\" fill=\"#fff\"/>",
        esc(s.name),
        esc(s.description.trim()),
    )
    .unwrap();
    writeln!(
        out,
        "<text x=\"16\" y=\"28\" font-size=\"18\" font-weight=\"bold\">{}</text>\n\
         <text x=\"16\" y=\"48\" fill=\"{MUTED}\">seed {} · {}</text>",
        esc(s.name),
        s.seed,
        esc(&verdict_text(s.report))
    )
    .unwrap();

    // Lanes: a name and a line each.
    for (node, &(_, line)) in nodes.names.iter().zip(&lanes) {
        writeln!(
            out,
            "<text x=\"16\" y=\"{:.1}\" font-size=\"15\" font-weight=\"bold\">{}</text>\
             <line x1=\"{LEFT}\" y1=\"{line:.1}\" x2=\"{:.1}\" y2=\"{line:.1}\" stroke=\"#9aa3b0\" stroke-width=\"1.5\"/>",
            line + 5.0,
            esc(node),
            width - RIGHT + 40.0
        )
        .unwrap();
    }
    // Cuts: a gap in every line, its length above the lanes.
    for c in axis.cuts() {
        let (x0, x1) = (c.x0 + 10.0, c.x1 - 10.0);
        let mid = (c.x0 + c.x1) / 2.0;
        writeln!(
            out,
            "<rect x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#f1f3f6\"/>",
            TOP - 8.0,
            x1 - x0,
            y - TOP + 8.0
        )
        .unwrap();
        for &(_, line) in &lanes {
            writeln!(
                out,
                "<path d=\"M{:.1},{:.1}l6,-12M{:.1},{:.1}l6,-12\" stroke=\"{MUTED}\" stroke-width=\"1.2\"/>",
                x0 - 3.0,
                line + 6.0,
                x1 - 3.0,
                line + 6.0
            )
            .unwrap();
        }
        texts.put(
            Anchor::Middle,
            mid,
            TOP - 20.0,
            &span_text(c.t1_ns - c.t0_ns),
            &format!("fill=\"{MUTED}\" font-style=\"italic\" font-size=\"11\""),
        );
    }
    // The true time where each stretch drawn to scale begins.
    let starts = std::iter::once(0).chain(axis.cuts().iter().map(|c| c.t1_ns));
    for t in starts.filter(|&t| t <= end) {
        texts.put(
            Anchor::Start,
            axis.x(t) + 2.0,
            TOP - 6.0,
            &seconds(t),
            &format!("fill=\"{MUTED}\" font-size=\"11\""),
        );
    }
    // Pauses and crashes.
    let bands = super::stopped_stretches(s.journal, end);
    for (node, t0, t1, what) in bands {
        let Some(i) = lane(node) else { continue };
        let line = lanes[i].1;
        let (x0, x1) = (axis.x(t0), axis.x(t1).max(axis.x(t0) + 2.0));
        let fill = if what == "paused" {
            "url(#hatch)"
        } else {
            "#d5d8de"
        };
        writeln!(
            out,
            "<rect x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"12\" fill=\"{fill}\" stroke=\"{}\"/>",
            line - 6.0,
            x1 - x0,
            if what == "paused" { "#e0a030" } else { MUTED }
        )
        .unwrap();
        let text = if what == "paused" {
            format!("paused {} (stop-the-world)", span_text(t1 - t0))
        } else {
            format!("down {}", span_text(t1 - t0))
        };
        let text = nodes.whose(i, node, text);
        texts.put_in_rows(
            Anchor::Start,
            x0 + 2.0,
            line + 20.0,
            &text,
            &format!("fill=\"{WARN}\" font-style=\"italic\""),
        );
    }
    // Lease bars: their labels whole, short or left out, as fits; message
    // texts keep off them.
    for (bar, &(row, on_client)) in bars.iter().zip(&bar_rows) {
        let token = bar
            .token
            .map_or(format!("lease {}", bar.lease), |t| format!("token {t}"));
        let x0 = axis.x(bar.start_t_ns);
        let x1 = axis.x(bar.end_t_ns).max(x0 + 2.0);
        let mut draw = |node: &str, row: usize, color: &str, labels: [String; 2]| {
            let Some(i) = lane(node) else { return };
            let y = lanes[i].0 + 10.0 + BAR_ROW * row as f64;
            writeln!(
                out,
                "<rect x=\"{x0:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"12\" rx=\"3\" fill=\"{color}\"/>",
                x1 - x0
            )
            .unwrap();
            texts.occupy([x0, y, x1, y + 12.0]);
            let labels = labels.map(|l| nodes.whose(i, node, l));
            let fits = |l: &&String| (l.chars().count() as f64) * 6.4 + 8.0 <= x1 - x0;
            if let Some(label) = labels.iter().find(fits) {
                writeln!(
                    out,
                    "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" font-weight=\"bold\" fill=\"#fff\">{}</text>",
                    x0 + 4.0,
                    y + 9.5,
                    esc(label)
                )
                .unwrap();
            }
        };
        if bar.at_lock {
            draw(
                &bar.node,
                row,
                HELD,
                [
                    format!("{token}: {} holds the lease", bar.client),
                    format!("{token}: {}", bar.client),
                ],
            );
            if let Some(row) = on_client {
                draw(
                    &bar.client,
                    row,
                    HELD,
                    [
                        format!("{} grants it {token}", bar.node),
                        format!("{token} at {}", bar.node),
                    ],
                );
            }
        } else {
            draw(
                &bar.node,
                row,
                BELIEVED,
                [format!("believes it holds {token}"), token.clone()],
            );
        }
    }
    // Messages: an arrow from send to delivery, its text beside it where it
    // fits; a lost one ends in ✗ halfway.
    // Each message's first send: (its event's index, its summary).
    let mut sent: BTreeMap<u64, (usize, &str)> = BTreeMap::new();
    // Placed after the events' labels, which come first.
    let mut message_texts: Vec<(f64, f64, &str)> = Vec::new();
    for (i, e) in events.iter().enumerate() {
        let Ok(Some(w)) = W::decode(e) else { continue };
        match w {
            W::Send { id, msg, .. } => {
                sent.entry(id).or_insert((i, msg));
            }
            W::Deliver { id, .. } | W::Drop { id, .. } => {
                let Some(&(si, msg)) = sent.get(&id) else {
                    continue;
                };
                let from = &events[si].node;
                let delivered = matches!(w, W::Deliver { .. });
                let to = match w {
                    W::Drop { to, .. } => to,
                    _ => e.node.as_str(),
                };
                let (Some(a), Some(b)) = (lane(from), lane(to)) else {
                    continue;
                };
                let (y0, y1) = (lanes[a].1, lanes[b].1);
                let (x0, x1) = (axis.x(events[si].t_ns), axis.x(e.t_ns));
                if delivered {
                    writeln!(
                        out,
                        "<line x1=\"{x0:.1}\" y1=\"{y0:.1}\" x2=\"{x1:.1}\" y2=\"{y1:.1}\" stroke=\"{MUTED}\" \
                         stroke-width=\"1.3\" marker-end=\"url(#arrow)\"/>"
                    )
                    .unwrap();
                } else {
                    let (xm, ym) = ((x0 + x1) / 2.0, (y0 + y1) / 2.0);
                    writeln!(
                        out,
                        "<line x1=\"{x0:.1}\" y1=\"{y0:.1}\" x2=\"{xm:.1}\" y2=\"{ym:.1}\" stroke=\"{BAD}\" \
                         stroke-width=\"1.3\" stroke-dasharray=\"5 3\"/>\
                         <path d=\"M{:.1},{:.1}l10,10M{:.1},{:.1}l10,-10\" stroke=\"{BAD}\" stroke-width=\"2.2\"/>",
                        xm - 5.0,
                        ym - 5.0,
                        xm - 5.0,
                        ym + 5.0
                    )
                    .unwrap();
                }
                // The text a third of the way along, left of a rising
                // arrow's start or right of a falling one's.
                if !msg.is_empty() {
                    let (xt, yt) = (x0 + (x1 - x0) / 3.0, y0 + (y1 - y0) / 3.0);
                    message_texts.push((xt + 6.0, yt + 4.0, msg));
                }
            }
            _ => {}
        }
    }
    // Events: a dot each, a label for those a reader must not miss.
    let findings = first_finding_at(s.report);
    for e in events {
        let Some(i) = lane(&e.node) else { continue };
        let line = lanes[i].1;
        let x = axis.x(e.t_ns);
        let finding = findings.get(&e.seq);
        let tone = if finding.is_some() { "bad" } else { tone(e) };
        let color = match tone {
            "good" => HELD,
            "warn" => "#e08a00",
            "bad" => "#d0352b",
            _ => "#7a8594",
        };
        let r = if matches!(W::decode(e), Ok(Some(w)) if w.is_message_end()) {
            2.5
        } else {
            5.0
        };
        writeln!(
            out,
            "<circle cx=\"{x:.1}\" cy=\"{line:.1}\" r=\"{r}\" fill=\"{color}\" stroke=\"#fff\" stroke-width=\"1.2\"/>"
        )
        .unwrap();
        texts.occupy([x - 6.0, line - 7.0, x + 6.0, line + 7.0]);
        let text = match finding {
            Some(kind) => Some(format!("⚠ {kind}")),
            None => figure_label(e),
        }
        .map(|t| nodes.whose(i, &e.node, t));
        if let Some(text) = text {
            let ink = match tone {
                "good" => GOOD,
                "warn" => WARN,
                "bad" => BAD,
                _ => INK,
            };
            let weight = if tone == "bad" {
                " font-weight=\"bold\""
            } else {
                ""
            };
            texts.put_in_rows(
                Anchor::Middle,
                x,
                line + 20.0,
                &text,
                &format!("fill=\"{ink}\"{weight}"),
            );
        }
    }
    for (x, y, msg) in message_texts {
        texts.put(
            Anchor::Start,
            x,
            y,
            msg,
            &format!("font-size=\"11\" fill=\"{MUTED}\""),
        );
    }
    out.push_str(&texts.out);
    let caption = [
        format!(
            "Time flows right, to scale at 1 px = {} ms, except quiet stretches (shaded, //), \
             cut and labelled with their length; the times above the lanes are true times.",
            trim_float(1.0 / axis.px_per_ms())
        ),
        "Blue: the lease a client believes it holds; green: the lease a lock node truly grants; \
         hatched: paused."
            .to_owned(),
        format!("Drawn by fencesim from a real trace: {}", s.repro),
    ];
    for (i, line) in caption.iter().enumerate() {
        writeln!(
            out,
            "<text x=\"16\" y=\"{:.1}\" font-size=\"11\" fill=\"{MUTED}\">{}</text>",
            height - 46.0 + 16.0 * i as f64,
            esc(line)
        )
        .unwrap();
    }
    out.push_str("</svg>\n");
    out
}

/// The figure's words for an event: the timeline's label, but a rejection
/// says why, as the book's figure does.
fn figure_label(e: &Event) -> Option<String> {
    if let Ok(Some(DomainEvent::Rejected {
        token,
        max_token,
        reason,
        ..
    })) = DomainEvent::decode(e)
    {
        return Some(match (token, max_token) {
            (Some(t), Some(max)) => format!("✗ rejected: token {t} < {max}"),
            (Some(t), None) => format!("✗ rejected: token {t}"),
            _ => match reason {
                Some(reason) => format!("✗ rejected: {reason}"),
                None => "✗ rejected".to_owned(),
            },
        });
    }
    label(e)
}

#[derive(Clone, Copy)]
enum Anchor {
    Start,
    Middle,
}

/// The texts placed so far, to leave out one that would overlap another:
/// boxes estimated from the char count, generously, filed by columns of
/// [`BUCKET_PX`] so that a check looks only at its neighbours.
#[derive(Default)]
struct Texts {
    boxes: BTreeMap<i64, Vec<[f64; 4]>>,
    /// The texts placed, drawn last, over every line and bar.
    out: String,
}

const BUCKET_PX: f64 = 256.0;

impl Texts {
    fn buckets(b: [f64; 4]) -> std::ops::RangeInclusive<i64> {
        ((b[0] - 3.0) / BUCKET_PX).floor() as i64..=((b[2] + 3.0) / BUCKET_PX).floor() as i64
    }

    fn free(&self, b: [f64; 4]) -> bool {
        self.boxes
            .range(Self::buckets(b))
            .flat_map(|(_, boxes)| boxes)
            .all(|o| b[2] + 3.0 <= o[0] || b[0] >= o[2] + 3.0 || b[3] <= o[1] || b[1] >= o[3])
    }

    /// Marks a box no text may overlap.
    fn occupy(&mut self, b: [f64; 4]) {
        for k in Self::buckets(b) {
            self.boxes.entry(k).or_default().push(b);
        }
    }

    fn extent(anchor: Anchor, x: f64, y: f64, text: &str) -> [f64; 4] {
        let w = text.chars().count() as f64 * CHAR_PX;
        let left = match anchor {
            Anchor::Start => x,
            Anchor::Middle => x - w / 2.0,
        };
        [left, y - 11.0, left + w, y + 3.0]
    }

    /// Writes `text` at (x, y) if it overlaps nothing placed yet.
    fn put(&mut self, anchor: Anchor, x: f64, y: f64, text: &str, attrs: &str) {
        let b = Self::extent(anchor, x, y, text);
        if self.free(b) {
            self.write(anchor, x, y, text, attrs, b);
        }
    }

    /// Writes `text` in the first of the lane's label rows (from `y` down)
    /// where it overlaps nothing placed yet.
    fn put_in_rows(&mut self, anchor: Anchor, x: f64, y: f64, text: &str, attrs: &str) {
        for row in 0..LABEL_ROWS {
            let y = y + LABEL_ROW * row as f64;
            let b = Self::extent(anchor, x, y, text);
            if self.free(b) {
                self.write(anchor, x, y, text, attrs, b);
                return;
            }
        }
    }

    fn write(&mut self, anchor: Anchor, x: f64, y: f64, text: &str, attrs: &str, b: [f64; 4]) {
        let anchor = match anchor {
            Anchor::Start => "",
            Anchor::Middle => " text-anchor=\"middle\"",
        };
        writeln!(
            self.out,
            "<text x=\"{x:.1}\" y=\"{y:.1}\"{anchor} {attrs}>{}</text>",
            esc(text)
        )
        .unwrap();
        self.occupy(b);
    }
}

/// Text for XML: `&`, `<`, `>` and `"` escaped, and the characters XML 1.0
/// does not allow at all (C0 controls other than tab and line breaks, lone
/// surrogates cannot occur in a `str`, U+FFFE, U+FFFF) shown as U+FFFD:
/// text from a scenario file must not make the figure unreadable.
fn esc(s: &str) -> String {
    crate::escape::html(s)
        .chars()
        .map(|c| match c {
            '\t' | '\n' | '\r' => c,
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => '\u{fffd}',
            c => c,
        })
        .collect()
}

/// A float with at most 3 decimals, no trailing zeros.
fn trim_float(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}
