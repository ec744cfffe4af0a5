//! Where the timeline's marks go at the page's opening zoom, and the SVG
//! drawn from it: lanes, the time axis, bands, lease bars, messages, events
//! and their labels. The page's script moves the same marks when the reader
//! zooms (every mark carries its true times as `data-t`, or `data-t0` and
//! `data-t1`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use sim::events::WorldEvent as W;
use sim::journal::Event;

use crate::escape::html as esc;
use crate::events::{decoded, Decoded, DomainEvent as D};
use crate::report::axis::{span_text, tick_text, Axis, Cut};
use crate::report::belief::{lease_bars, local_seconds, seconds, LeaseBar};
use crate::report::lanes::{crowd_hidden, crowd_lane_name};
use crate::report::{first_finding_at, node_order, Subject};

/// Where time 0 is (a label centred on it must fit).
const LEFT: f64 = 60.0;
const RIGHT: f64 = 60.0;
/// The height of the time axis above the lanes.
const TOP: f64 = 34.0;
/// The opening scale: at least 4 px per ms, so that a 1–5 ms message is a
/// slanted arrow, and doubled (up to 64) until the run is [`OPENING_WIDTH`]
/// wide; quiet stretches wider than `CUT.cut_px` are cut (see [`Axis`]).
const PX_PER_MS: f64 = 4.0;
const MAX_OPENING_PX_PER_MS: f64 = 64.0;
const OPENING_WIDTH: f64 = 1000.0;
pub(super) const CUT: Cut = Cut {
    cut_px: 160.0,
    break_px: 64.0,
};
const BAR_ROW: f64 = 13.0;
const LABEL_ROW: f64 = 14.0;
const LABEL_ROWS: usize = 3;
/// The least room between two labels in a row, in px.
const LABEL_GAP: f64 = 6.0;

/// Rows of lease bars, per lane of `lanes`, and per bar of `bars` its row on
/// its own lane and, for a true lease, on the holder's lane. A lock's lane
/// holds its grants (one row: a grant ends before the next begins); a
/// client's lane holds its belief (row 0), then one row per lock node that
/// granted it a lease, in lane order, so that redlock's five grants stack,
/// never overlap. The lane a crowd shares holds its clients' bars the same
/// way (they overlap there only where two of them believe at once).
pub(in crate::report) fn bar_rows(
    lanes: &LaneNodes,
    bars: &[LeaseBar],
) -> (Vec<usize>, Vec<(usize, Option<usize>)>) {
    let index = |n: &str| lanes.of(n).unwrap_or(usize::MAX);
    let mut granting: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for b in bars.iter().filter(|b| b.at_lock) {
        let locks = granting.entry(b.client.as_str()).or_default();
        if !locks.contains(&b.node.as_str()) {
            locks.push(b.node.as_str());
        }
    }
    for locks in granting.values_mut() {
        locks.sort_by_key(|l| index(l));
    }
    let mut rows = vec![0usize; lanes.names.len()];
    let mut bar_rows = Vec::with_capacity(bars.len());
    for b in bars {
        let own = index(&b.node);
        if own < rows.len() {
            rows[own] = rows[own].max(1);
        }
        let on_client = if b.at_lock {
            let row = 1 + granting[b.client.as_str()]
                .iter()
                .position(|l| *l == b.node)
                .unwrap_or(0);
            let c = index(&b.client);
            if c < rows.len() {
                rows[c] = rows[c].max(row + 1);
            }
            Some(row)
        } else {
            None
        };
        bar_rows.push((0, on_client));
    }
    (rows, bar_rows)
}

/// The lanes of the timeline and the figure, and which lane each node is
/// drawn on.
pub(in crate::report) struct LaneNodes {
    /// The lanes' names, in order: the nodes, then, for a crowd, the lane
    /// its other clients share (`990 more clients`).
    pub(in crate::report) names: Vec<String>,
    /// node → its lane (a crowd's hidden clients → the shared lane).
    index: BTreeMap<String, usize>,
    /// The lane a crowd's clients share, if any.
    pub(in crate::report) shared: Option<usize>,
}

impl LaneNodes {
    /// The lane `node` is drawn on.
    pub(in crate::report) fn of(&self, node: &str) -> Option<usize> {
        self.index.get(node).copied()
    }

    /// `text`, led by `node`'s name when it is drawn on `lane` and that is
    /// the lane a crowd's clients share (as the terminal lanes lead its
    /// phrases), so that the lane says whose each mark is.
    pub(in crate::report) fn whose(&self, lane: usize, node: &str, text: String) -> String {
        if self.shared == Some(lane) {
            format!("{node}: {text}")
        } else {
            text
        }
    }
}

/// The nodes with a lane, in the lanes' order: `nodes` as given, then any
/// other node of the journal (but the world's own events) as it appears.
/// A crowd follows the terminal lanes' rule ([`crate::report::lanes`]):
/// past [`MAX_LANES`](crate::report::lanes::MAX_LANES) nodes, the lock
/// and storage nodes and the first clients keep their lanes, and the other
/// clients share one.
pub(in crate::report) fn lane_nodes(s: &Subject<'_>) -> LaneNodes {
    let mut nodes = node_order(s);
    let hidden = crowd_hidden(s.journal, &mut nodes);
    let mut names: Vec<String> = nodes.iter().map(|n| (*n).to_owned()).collect();
    let mut index: BTreeMap<String, usize> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.clone(), i))
        .collect();
    let shared = (!hidden.is_empty()).then(|| {
        names.push(crowd_lane_name(hidden.len()));
        names.len() - 1
    });
    if let Some(lane) = shared {
        index.extend(hidden.into_iter().map(|n| (n.to_owned(), lane)));
    }
    LaneNodes {
        names,
        index,
        shared,
    }
}

/// One lane: a node's row of the timeline, lease bars on top, its line,
/// then up to [`LABEL_ROWS`] rows of labels.
struct Lane {
    node: String,
    top: f64,
    /// Rows of lease bars above the line.
    bar_rows: usize,
    height: f64,
}

impl Lane {
    fn line(&self) -> f64 {
        self.top + 8.0 + BAR_ROW * self.bar_rows as f64 + 12.0
    }

    /// The baseline of the first row of labels.
    fn first_label(&self) -> f64 {
        self.line() + 19.0
    }

    fn bar_y(&self, row: usize) -> f64 {
        self.top + 8.0 + BAR_ROW * row as f64
    }
}

/// Where everything goes, at the page's opening zoom.
pub(super) struct Layout {
    lanes: Vec<Lane>,
    /// The time axis at the opening zoom.
    pub(super) axis: Axis,
    /// Per lease bar of [`lease_bars`]: its row on its own lane and, for a
    /// true lease, its row on the holder's lane.
    bars: Vec<LeaseBar>,
    bar_rows: Vec<(usize, Option<usize>)>,
    /// Which lane each node is drawn on.
    nodes: LaneNodes,
    width: f64,
    height: f64,
}

impl Layout {
    pub(super) fn new(s: &Subject<'_>) -> Layout {
        let nodes = lane_nodes(s);
        let bars = lease_bars(s.journal);
        let (rows, bar_rows) = bar_rows(&nodes, &bars);
        let mut lanes = Vec::with_capacity(nodes.names.len());
        let mut top = TOP;
        for (node, bar_rows) in nodes.names.iter().zip(rows) {
            let height = 8.0 + BAR_ROW * bar_rows as f64 + 12.0 + 19.0 + LABEL_ROW * 2.0 + 12.0;
            lanes.push(Lane {
                node: node.clone(),
                top,
                bar_rows,
                height,
            });
            top += height;
        }
        let times = || s.journal.events().iter().map(|e| e.t_ns);
        let mut axis = Axis::new(times(), LEFT, PX_PER_MS, Some(CUT));
        while axis.end() + RIGHT < OPENING_WIDTH && axis.px_per_ms() < MAX_OPENING_PX_PER_MS {
            axis = Axis::new(times(), LEFT, axis.px_per_ms() * 2.0, Some(CUT));
        }
        let width = (axis.end() + RIGHT).max(900.0);
        Layout {
            lanes,
            axis,
            bars,
            bar_rows,
            nodes,
            width,
            height: top + 4.0,
        }
    }

    /// The lane `node` is drawn on (for a crowd's hidden client, the lane
    /// they share), found through an index.
    fn lane(&self, node: &str) -> Option<(usize, &Lane)> {
        let i = self.nodes.of(node)?;
        Some((i, &self.lanes[i]))
    }

    /// The lanes' order: the order of the beliefs table too.
    pub(super) fn order(&self, node: &str) -> usize {
        self.lane(node).map_or(usize::MAX, |(i, _)| i)
    }

    /// The place of the lane a crowd's clients share, in the lanes' order
    /// (after every lane when there is none).
    pub(super) fn shared_order(&self) -> usize {
        self.nodes.shared.unwrap_or(usize::MAX)
    }

    /// The lanes' names, in a column of their own beside the scrolling
    /// timeline, so that they stay in view wherever it is scrolled.
    pub(super) fn names(&self, out: &mut String) {
        write!(
            out,
            "<div id=\"names\" style=\"height:{:.0}px\">",
            self.height
        )
        .unwrap();
        for (i, lane) in self.lanes.iter().enumerate() {
            let class = if i % 2 == 0 { "node even" } else { "node" };
            write!(
                out,
                "<div class=\"{class}\" style=\"top:{:.0}px;height:{:.0}px;line-height:{:.0}px\">{}</div>",
                lane.top,
                lane.height,
                (lane.line() - lane.top) * 2.0,
                esc(&lane.node)
            )
            .unwrap();
        }
        out.push_str("</div>");
    }

    pub(super) fn svg(&self, s: &Subject<'_>, out: &mut String) {
        let events = s.journal.events();
        let (w, h) = (self.width, self.height);
        writeln!(
            out,
            "<svg id=\"svg\" width=\"{w:.0}\" height=\"{h:.0}\" role=\"img\" aria-label=\"timeline\" \
             data-left=\"{LEFT}\" data-top=\"{TOP}\" data-right=\"{RIGHT}\" data-px-per-ms=\"{}\" \
             data-cut-px=\"{}\" data-break-px=\"{}\" data-label-row=\"{LABEL_ROW}\">\
             <defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" \
             markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0L10,5L0,10z\" \
             fill=\"#7a8594\"/></marker></defs>",
            self.axis.px_per_ms(),
            CUT.cut_px,
            CUT.break_px
        )
        .unwrap();
        // Lanes (their names are beside the SVG: see `names`).
        for (i, lane) in self.lanes.iter().enumerate() {
            let class = if i % 2 == 0 { "lane even" } else { "lane" };
            writeln!(
                out,
                "<rect class=\"{class}\" x=\"0\" y=\"{:.0}\" width=\"100%\" height=\"{:.0}\"/>\
                 <line class=\"axis\" x1=\"{LEFT:.0}\" y1=\"{l:.0}\" x2=\"{r:.0}\" y2=\"{l:.0}\"/>",
                lane.top,
                lane.height,
                l = lane.line(),
                r = w - RIGHT,
            )
            .unwrap();
        }
        // The time axis: the cuts, then round ticks where their labels fit.
        out.push_str("<g id=\"ticks\">");
        let end = events.last().map_or(0, |e| e.t_ns);
        let mut taken: Vec<(f64, f64)> = Vec::new();
        for c in self.axis.cuts() {
            let x = (c.x0 + c.x1) / 2.0;
            let text = span_text(c.t1_ns - c.t0_ns);
            writeln!(
                out,
                "<rect class=\"cut\" x=\"{:.1}\" y=\"{TOP:.0}\" width=\"{:.1}\" height=\"{:.0}\"/>\
                 <text class=\"cutlabel\" x=\"{x:.1}\" y=\"22\">// {text}</text>",
                c.x0 + 6.0,
                c.x1 - c.x0 - 12.0,
                h - TOP
            )
            .unwrap();
            taken.push(span_around(x, &format!("// {text}"), 6.0));
        }
        for t in self.axis.ticks(end, 90.0) {
            let x = self.axis.x(t);
            let text = tick_text(t);
            let (a, b) = span_around(x, &text, 6.2);
            let free = taken.iter().all(|&(l, r)| b + 6.0 <= l || a >= r + 6.0);
            write!(
                out,
                "<line class=\"tick\" x1=\"{x:.1}\" y1=\"{TOP:.0}\" x2=\"{x:.1}\" y2=\"{h:.0}\"/>"
            )
            .unwrap();
            if free {
                write!(
                    out,
                    "<text class=\"time\" x=\"{x:.1}\" y=\"22\">{text}</text>"
                )
                .unwrap();
                taken.push((a, b));
            }
            out.push('\n');
        }
        out.push_str("</g>\n");
        // Labels under the lines: placed in rows, first come first served;
        // the page places them again with the browser's own text widths.
        let mut labels = Labels::new(self.lanes.len());
        // Pause and crash bands.
        let bands = crate::report::stopped_stretches(s.journal, end);
        for (n, t0, t1, what) in bands {
            if let Some((li, lane)) = self.lane(n) {
                let (x0, x1) = (self.axis.x(t0), self.axis.x(t1));
                writeln!(
                    out,
                    "<rect class=\"band {what}\" data-t0=\"{t0}\" data-t1=\"{t1}\" x=\"{x0:.1}\" y=\"{:.0}\" \
                     width=\"{:.1}\" height=\"{:.0}\"/>",
                    lane.top + 3.0,
                    (x1 - x0).max(2.0),
                    lane.height - 6.0,
                )
                .unwrap();
                let text = self
                    .nodes
                    .whose(li, n, format!("{what} {}", span_text(t1 - t0)));
                let width = text.chars().count() as f64 * 6.2;
                let row = labels.place(li, x0 + 4.0, x0 + 4.0 + width);
                labels.text(
                    out,
                    lane,
                    li,
                    row,
                    &format!("label bandlabel {what}"),
                    t0,
                    4.0,
                    x0 + 4.0,
                    &text,
                );
            }
        }
        // Lease bars: believed (client lanes) and true (lock lanes, and
        // stacked per lock node on the holder's lane).
        for (bar, &(row, on_client)) in self.bars.iter().zip(&self.bar_rows) {
            let token = bar
                .token
                .map_or(format!("lease {}", bar.lease), |t| format!("token {t}"));
            let short = bar
                .token
                .map_or(format!("{}", bar.lease), |t| format!("{t}"));
            let span = format!(
                "{} → {} ({})",
                seconds(bar.start_t_ns),
                seconds(bar.end_t_ns),
                bar.how
            );
            if bar.at_lock {
                self.bar(
                    out,
                    bar,
                    &bar.node,
                    row,
                    "held",
                    &format!("{} {token}", bar.client),
                    &short,
                    &format!("{} truly holds {token} at {}: {span}", bar.client, bar.node),
                );
                if let Some(row) = on_client {
                    self.bar(
                        out,
                        bar,
                        &bar.client,
                        row,
                        "held",
                        &format!("holds {token} at {}", bar.node),
                        &format!("{short} at {}", bar.node),
                        &format!("{} grants {} {token}: {span}", bar.node, bar.client),
                    );
                }
            } else {
                let until = bar.until_local_ns.map(local_seconds).unwrap_or_default();
                self.bar(
                    out,
                    bar,
                    &bar.node,
                    row,
                    "believed",
                    &format!("believes {token} (until {until} on its clock)"),
                    &format!("believes {short}"),
                    &format!(
                        "{} believes it holds {token} until {until} on its own clock: {span}",
                        bar.client
                    ),
                );
            }
        }
        // Messages.
        // Each message's first send, by id: a map, so that drawing the
        // arrows costs time linear in the journal (times a logarithm).
        let mut sent: BTreeMap<u64, (usize, &str)> = BTreeMap::new();
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
                    let (Some((_, l0)), Some((_, l1))) = (self.lane(from), self.lane(to)) else {
                        continue;
                    };
                    let (y0, y1) = (l0.line(), l1.line());
                    let (t0, t1) = (events[si].t_ns, e.t_ns);
                    let (x0, x1) = (self.axis.x(t0), self.axis.x(t1));
                    if delivered {
                        writeln!(
                            out,
                            "<line class=\"msg\" data-msg=\"{id}\" data-t0=\"{t0}\" data-t1=\"{t1}\" x1=\"{x0:.1}\" \
                             y1=\"{y0:.0}\" x2=\"{x1:.1}\" y2=\"{y1:.0}\" marker-end=\"url(#arrow)\"><title>{}</title></line>",
                            esc(&format!("message {id}: {msg} ({from} → {to})"))
                        )
                        .unwrap();
                    } else {
                        let (xm, ym) = ((x0 + x1) / 2.0, (y0 + y1) / 2.0);
                        writeln!(
                            out,
                            "<line class=\"msg lost\" data-msg=\"{id}\" data-t0=\"{t0}\" data-t1=\"{t1}\" data-lost=\"1\" \
                             x1=\"{x0:.1}\" y1=\"{y0:.0}\" x2=\"{xm:.1}\" y2=\"{ym:.0}\"><title>{}</title></line>\
                             <path class=\"lostmark\" data-t0=\"{t0}\" data-t1=\"{t1}\" data-y=\"{ym:.0}\" \
                             transform=\"translate({xm:.1},{ym:.0})\" d=\"M-4,-4L4,4M-4,4L4,-4\"/>",
                            esc(&format!("message {id}: {msg} ({from} → {to}), lost")),
                        )
                        .unwrap();
                    }
                }
                _ => {}
            }
        }
        // Events.
        let findings = first_finding_at(s.report);
        for (i, e) in events.iter().enumerate() {
            let Some((li, lane)) = self.lane(&e.node) else {
                continue;
            };
            let x = self.axis.x(e.t_ns);
            // An event the oracle points at is marked, whatever its kind.
            let finding = findings.get(&e.seq);
            let tone = if finding.is_some() { "bad" } else { tone(e) };
            let label = match finding {
                Some(kind) => Some(format!("⚠ {kind}")),
                None => label(e),
            }
            .map(|l| self.nodes.whose(li, &e.node, l));
            writeln!(
                out,
                "<circle class=\"ev {}\" data-seq=\"{i}\" data-t=\"{}\" cx=\"{x:.1}\" cy=\"{:.0}\" r=\"{}\"><title>{}</title></circle>",
                tone,
                e.t_ns,
                lane.line(),
                if matches!(W::decode(e), Ok(Some(w)) if w.is_message_end()) { 3 } else { 5 },
                esc(&format!("#{} {} {}: {}", e.seq, seconds(e.t_ns), e.node, crate::report::lanes::describe(e)))
            )
            .unwrap();
            if let Some(label) = label {
                let (a, b) = span_around(x, &label, 6.2);
                let row = labels.place(li, a, b);
                labels.text(
                    out,
                    lane,
                    li,
                    row,
                    &format!("label {tone}"),
                    e.t_ns,
                    0.0,
                    x,
                    &label,
                );
            }
        }
        writeln!(
            out,
            "<rect id=\"future\" x=\"0\" y=\"{TOP:.0}\" width=\"0\" height=\"{:.0}\"/>\
             <line id=\"cursor\" x1=\"0\" y1=\"{:.0}\" x2=\"0\" y2=\"{h:.0}\"/></svg>",
            h - TOP,
            TOP - 6.0
        )
        .unwrap();
    }

    /// One lease bar on `node`'s lane, in bar row `row`.
    #[allow(clippy::too_many_arguments)]
    fn bar(
        &self,
        out: &mut String,
        bar: &LeaseBar,
        node: &str,
        row: usize,
        class: &str,
        label: &str,
        short: &str,
        title: &str,
    ) {
        let Some((li, lane)) = self.lane(node) else {
            return;
        };
        let (label, short) = (
            self.nodes.whose(li, node, label.to_owned()),
            self.nodes.whose(li, node, short.to_owned()),
        );
        let (label, short) = (label.as_str(), short.as_str());
        let (t0, t1) = (bar.start_t_ns, bar.end_t_ns);
        let x0 = self.axis.x(t0);
        let x1 = self.axis.x(t1).max(x0 + 2.0);
        let y = lane.bar_y(row);
        let shown = fitting(label, short, x1 - x0);
        writeln!(
            out,
            "<g class=\"{class}\"><title>{}</title><rect data-t0=\"{t0}\" data-t1=\"{t1}\" x=\"{x0:.1}\" \
             y=\"{y:.0}\" width=\"{:.1}\" height=\"11\" rx=\"3\"/><text data-t0=\"{t0}\" data-t1=\"{t1}\" \
             data-dx=\"4\" data-label=\"{}\" data-short=\"{}\" x=\"{:.1}\" y=\"{:.0}\">{}</text></g>",
            esc(title),
            x1 - x0,
            esc(label),
            esc(short),
            x0 + 4.0,
            y + 9.0,
            esc(&shown)
        )
        .unwrap();
    }
}

/// Rows of labels under each lane's line, filled left to right: a label
/// goes in the first row where it clears the one before it, or is hidden
/// (its event's marker keeps its title, and the step panel says it all).
struct Labels {
    /// Per lane, per row, the right end of its last label.
    ends: Vec<[f64; LABEL_ROWS]>,
}

impl Labels {
    fn new(lanes: usize) -> Labels {
        Labels {
            ends: vec![[f64::MIN; LABEL_ROWS]; lanes],
        }
    }

    fn place(&mut self, lane: usize, left: f64, right: f64) -> Option<usize> {
        let ends = &mut self.ends[lane];
        let row = ends.iter().position(|&end| left >= end + LABEL_GAP)?;
        ends[row] = right;
        Some(row)
    }

    #[allow(clippy::too_many_arguments)]
    fn text(
        &self,
        out: &mut String,
        lane: &Lane,
        lane_index: usize,
        row: Option<usize>,
        class: &str,
        t_ns: u64,
        dx: f64,
        x: f64,
        text: &str,
    ) {
        let y0 = lane.first_label();
        let (class, y) = match row {
            Some(r) => (class.to_owned(), y0 + LABEL_ROW * r as f64),
            None => (format!("{class} hidden"), y0),
        };
        writeln!(
            out,
            "<text class=\"{class}\" data-lane=\"{lane_index}\" data-y=\"{y0:.0}\" data-t=\"{t_ns}\" \
             data-dx=\"{dx}\" x=\"{x:.1}\" y=\"{y:.0}\">{}</text>",
            esc(text)
        )
        .unwrap();
    }
}

/// The estimated extent of `text` centred on `x`, at `px` per char.
fn span_around(x: f64, text: &str, px: f64) -> (f64, f64) {
    let half = text.chars().count() as f64 * px / 2.0;
    (x - half, x + half)
}

/// `label` if it fits in `width` px of bar text, else `short` if that
/// does, else nothing (the bar keeps its title). The page fits them again
/// with the browser's own text widths.
fn fitting(label: &str, short: &str, width: f64) -> String {
    let room = ((width - 8.0) / 5.6).max(0.0) as usize;
    [label, short]
        .into_iter()
        .find(|text| text.chars().count() <= room)
        .unwrap_or("")
        .to_owned()
}

/// A short label under the marker for the events a reader must not miss.
pub(in crate::report) fn label(e: &Event) -> Option<String> {
    let token = |t: Option<u64>| t.map_or(String::new(), |t| format!(" {t}"));
    Some(match decoded(e) {
        Decoded::Domain(d) => match d {
            D::Granted { token: t, .. } => format!("grant{}", token(t)),
            D::Acquired { token: t, .. } => format!("acquired{}", token(t)),
            D::Expired { .. } => "expired".to_owned(),
            D::Wrote { token: t, .. } => format!("write{}", token(t)),
            D::Accepted { token: t, .. } => format!("✓ accepted{}", token(t)),
            D::Rejected { token: t, .. } => format!("✗ REJECTED{}", token(t)),
            _ => return None,
        },
        Decoded::World(w) => match w {
            W::Pause { .. } => "pause".to_owned(),
            W::Resume => "resume".to_owned(),
            W::Crash { by: Some(_) } => "✗ powered off".to_owned(),
            W::Crash { by: None } => "✗ crash".to_owned(),
            W::Restart => "↻ restart".to_owned(),
            W::Clock { .. } => "clock".to_owned(),
            W::Partition { .. } => "✂ partition".to_owned(),
            W::Heal { .. } => "healed".to_owned(),
            _ => return None,
        },
        Decoded::Other => return None,
    })
}

pub(in crate::report) fn tone(e: &Event) -> &'static str {
    match decoded(e) {
        Decoded::Domain(D::Rejected { .. }) | Decoded::World(W::Crash { .. } | W::Drop { .. }) => {
            "bad"
        }
        Decoded::World(
            W::Pause { .. } | W::Resume | W::Clock { .. } | W::Partition { .. } | W::Link { .. },
        )
        | Decoded::Domain(D::Expired { .. } | D::Denied) => "warn",
        Decoded::Domain(D::Acquired { .. } | D::Granted { .. } | D::Accepted { .. }) => "good",
        _ => "plain",
    }
}
