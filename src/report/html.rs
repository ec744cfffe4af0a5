//! `NAME.html`: one self-contained page (inline CSS, JS and SVG; nothing
//! fetched) with a timeline of the run and controls to step through it.
//!
//! The SVG has a lane per node, time flowing right (each event gets a little
//! room of its own, the rest of the width is shared in proportion to true
//! time); on a client's lane a blue bar shows the lease it **believes** it
//! holds and a green one the lease the lock **truly** grants it; pauses and
//! crashes are bands; messages are arrows from send to delivery (a lost one
//! ends in ✗). A cursor moves through the events with the buttons or the
//! keyboard (→/n next, ←/b back, v next violation, Home, End); each step
//! shows its sentence and who believes what. The journal is embedded as JSON
//! (`<script id="journal" type="application/json">`).
//!
//! The page sets `data-step` on `<body>` and the title to the current step.
//! Opened with `#selftest`, it walks every step through the same handlers as
//! the buttons and writes `selftest ok: …` (or what failed) into
//! `#selftest-result`; script errors are written into the page as
//! `.script-error`. `.ci/run` checks both in headless Chromium.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::json;
use sim::events as world;
use sim::journal::Event;

use super::belief::{lease_bars, local_seconds, seconds, token_text, Beliefs};
use super::step::{steps, verdict_text};
use super::Subject;
use crate::escape::html as esc;
use crate::events;
use crate::oracle::Verdict;

const LEFT: f64 = 120.0;
const RIGHT: f64 = 40.0;
const TOP: f64 = 34.0;
const LANE: f64 = 92.0;
const MIN_GAP: f64 = 13.0;
const TIME_BUDGET: f64 = 560.0;

/// The page.
pub fn page(s: &Subject<'_>) -> String {
    let layout = Layout::new(s);
    let mut out = String::with_capacity(64 * 1024);
    let title = format!("{} — fencesim", s.name);
    write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{CSS}</style>\n</head>\n<body data-step=\"0\">\n",
        esc(&title)
    )
    .unwrap();
    let verdict_class = match s.report.verdict {
        Verdict::Safe => "safe",
        Verdict::Violation => "violation",
        Verdict::Inconclusive => "inconclusive",
        Verdict::Error => "error",
    };
    write!(
        out,
        "<header><h1>{}</h1>\n<p class=\"desc\">{}</p>\n\
         <p><span class=\"verdict {verdict_class}\">{}</span></p>\n\
         <p class=\"meta\">milestones: {}</p>\n{}\
         <p class=\"meta\">seed {} · {} events · repro <code>{}</code> · \
         <a href=\"{name}.md\">Markdown</a> · <a href=\"{name}.trace.json\">Perfetto trace</a> · \
         <a href=\"{name}.jsonl\">journal</a> · <a href=\"index.html\">all scenarios</a></p>\n</header>\n",
        esc(s.name),
        esc(s.description.trim()),
        esc(&verdict_text(s.report)),
        esc(&crate::oracle::Milestones::count(s.journal).reached_text()),
        s.untested
            .iter()
            .map(|line| format!("<p class=\"meta untested\">untested: {}</p>\n", esc(line)))
            .collect::<String>(),
        s.seed,
        s.journal.len(),
        esc(s.repro),
        name = esc(s.name),
    )
    .unwrap();
    for v in &s.report.violations {
        writeln!(
            out,
            "<p class=\"finding\">⚠ <b>{}</b> (event {}): {}</p>",
            v.kind,
            v.seq,
            esc(&v.explanation)
        )
        .unwrap();
    }
    out.push_str(
        "<nav id=\"controls\">\
         <button id=\"first\" title=\"Home\">« first</button>\
         <button id=\"back\" title=\"← or b\">◀ back</button>\
         <button id=\"next\" title=\"→ or n\">next ▶</button>\
         <button id=\"last\" title=\"End\">last »</button>\
         <button id=\"violation\" title=\"v\">next violation ⚠</button>\
         <span id=\"position\"></span></nav>\n\
         <section id=\"now\"><p id=\"phrase\"></p><p id=\"sentence\"></p>\
         <p id=\"findings\"></p><table id=\"beliefs\"></table></section>\n",
    );
    out.push_str("<div id=\"timeline\">");
    layout.svg(s, &mut out);
    out.push_str("</div>\n<p class=\"legend\"><span class=\"key believed\"></span> lease the client believes it holds \
        <span class=\"key held\"></span> lease the lock truly grants it \
        <span class=\"key paused\"></span> paused <span class=\"key down\"></span> down \
        · arrows: messages, ✗ lost · click an event or a row to jump to it</p>\n");
    out.push_str("<table id=\"events\"><thead><tr><th>#</th><th>time</th><th>node</th><th>local clock</th><th>event</th></tr></thead><tbody>\n");
    for e in s.journal.events() {
        writeln!(
            out,
            "<tr data-seq=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            e.seq,
            e.seq,
            seconds(e.t_ns),
            esc(&e.node),
            local_seconds(e.local_ns),
            esc(&super::lanes::describe(e))
        )
        .unwrap();
    }
    out.push_str("</tbody></table>\n<div id=\"selftest-result\"></div>\n");
    out.push_str("<script id=\"journal\" type=\"application/json\">");
    out.push_str(&script_json(&data(s, &layout)));
    out.push_str("</script>\n<script>");
    out.push_str(JS);
    out.push_str("</script>\n</body>\n</html>\n");
    out
}

/// The embedded data: the journal (canonical JSON of every event) and, per
/// step, its cursor position, sentence and beliefs.
fn data(s: &Subject<'_>, layout: &Layout) -> String {
    // Written as it goes, one event and one step at a time: a long journal
    // never has a second copy as a JSON tree.
    let mut out = String::from("{\"journal\":[");
    for (i, e) in s.journal.events().iter().enumerate() {
        if i > 0 {
            out.push_str(",\n");
        }
        e.write_json(&mut out);
    }
    out.push_str("],\n\"steps\":[");
    let mut beliefs = Beliefs::new(s.journal);
    for (i, (step, e)) in steps(s.journal, s.report)
        .into_iter()
        .zip(s.journal.events())
        .enumerate()
    {
        beliefs.apply(e);
        let value = json!({
            "x": layout.x[step.seq as usize].round() as i64,
            "t": seconds(step.t_ns),
            "node": step.node,
            "phrase": step.phrase,
            "sentence": step.sentence,
            "violations": step.violations,
            "beliefs": belief_rows(&beliefs),
            "msg": if e.kind == world::SEND || e.kind == world::DELIVER || e.kind == world::DROP { e.u64(world::field::ID) } else { None },
        });
        if i > 0 {
            out.push(',');
        }
        write!(out, "{value}").unwrap();
    }
    let violations: Vec<u64> = s.report.violations.iter().map(|v| v.seq).collect();
    write!(out, "],\n\"violations\":{}}}", json!(violations)).unwrap();
    out
}

/// `[node, believes, truly]` for every client, then `[lock, "", holder]`.
fn belief_rows(b: &Beliefs) -> Vec<[String; 3]> {
    let mut rows = Vec::new();
    for (client, believed) in b.clients() {
        let believes = match believed {
            Some(x) => format!(
                "lease {}{} until {} on its clock",
                x.lease,
                token_text(x.token),
                local_seconds(x.until_local_ns)
            ),
            None => "nothing".to_owned(),
        };
        let truly: Vec<String> = b
            .locks()
            .filter_map(|(lock, h)| h.filter(|h| h.client == client).map(|h| (lock, h)))
            .map(|(lock, h)| format!("lease {}{} at {lock}", h.lease, token_text(h.token)))
            .collect();
        let mut truly = if truly.is_empty() {
            "nothing".to_owned()
        } else {
            truly.join(", ")
        };
        if b.is_out(client) {
            truly.push_str(" · it is paused or down");
        }
        rows.push([client.to_owned(), believes, truly]);
    }
    for (lock, h) in b.locks() {
        let held = match h {
            Some(h) => format!(
                "granted to {}: lease {}{}",
                h.client,
                h.lease,
                token_text(h.token)
            ),
            None => "free".to_owned(),
        };
        rows.push([lock.to_owned(), String::new(), held]);
    }
    rows
}

/// Where everything goes.
struct Layout {
    nodes: Vec<String>,
    /// x of every event.
    x: Vec<f64>,
    width: f64,
    height: f64,
}

impl Layout {
    fn new(s: &Subject<'_>) -> Layout {
        let mut nodes: Vec<String> = Vec::new();
        for n in s
            .nodes
            .iter()
            .map(String::as_str)
            .chain(s.journal.events().iter().map(|e| e.node.as_str()))
        {
            if !nodes.iter().any(|x| x == n) {
                nodes.push(n.to_owned());
            }
        }
        let events = s.journal.events();
        let span = events.last().map_or(0, |e| e.t_ns).max(1) as f64;
        let mut x = Vec::with_capacity(events.len());
        let mut at = LEFT + 10.0;
        let mut prev = 0u64;
        for (i, e) in events.iter().enumerate() {
            if i > 0 {
                at += MIN_GAP + TIME_BUDGET * (e.t_ns - prev) as f64 / span;
            }
            x.push(at);
            prev = e.t_ns;
        }
        let width = (at + RIGHT + 20.0).max(900.0);
        let height = TOP + LANE * nodes.len() as f64 + 10.0;
        Layout {
            nodes,
            x,
            width,
            height,
        }
    }

    fn lane(&self, node: &str) -> Option<f64> {
        self.nodes
            .iter()
            .position(|n| n == node)
            .map(|i| TOP + LANE * i as f64)
    }

    /// The y of a lane's line.
    fn line(&self, node: &str) -> Option<f64> {
        self.lane(node).map(|y| y + 50.0)
    }

    fn x_at(&self, t_ns: u64, journal: &[Event]) -> f64 {
        // The x of a true time: interpolated between the events around it.
        let i = journal.partition_point(|e| e.t_ns < t_ns);
        match (i.checked_sub(1), journal.get(i)) {
            (_, Some(e)) if e.t_ns == t_ns => self.x[i],
            (Some(p), Some(n)) => {
                let (a, b) = (journal[p].t_ns as f64, n.t_ns as f64);
                self.x[p] + (self.x[i] - self.x[p]) * (t_ns as f64 - a) / (b - a)
            }
            (Some(p), None) => self.x[p],
            (None, _) => LEFT,
        }
    }

    fn svg(&self, s: &Subject<'_>, out: &mut String) {
        let events = s.journal.events();
        let (w, h) = (self.width, self.height);
        writeln!(
            out,
            "<svg id=\"svg\" width=\"{w:.0}\" height=\"{h:.0}\" viewBox=\"0 0 {w:.0} {h:.0}\" role=\"img\" \
             aria-label=\"timeline\"><defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" \
             markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0L10,5L0,10z\" \
             fill=\"#7a8594\"/></marker></defs>"
        )
        .unwrap();
        // Lanes, with their names.
        for (i, n) in self.nodes.iter().enumerate() {
            let y = TOP + LANE * i as f64;
            let class = if i % 2 == 0 { "lane even" } else { "lane" };
            writeln!(
                out,
                "<rect class=\"{class}\" x=\"0\" y=\"{y:.0}\" width=\"{w:.0}\" height=\"{LANE:.0}\"/>\
                 <line class=\"axis\" x1=\"{LEFT:.0}\" y1=\"{l:.0}\" x2=\"{r:.0}\" y2=\"{l:.0}\"/>\
                 <text class=\"node\" x=\"12\" y=\"{ty:.0}\">{}</text>",
                esc(n),
                l = y + 50.0,
                r = w - RIGHT,
                ty = y + 54.0
            )
            .unwrap();
        }
        // Time ticks, where there is room for their labels.
        let end = events.last().map_or(0, |e| e.t_ns);
        let mut last_x = f64::MIN;
        let step_ns = tick_step(end);
        let mut t = 0;
        while t <= end {
            let x = self.x_at(t, events);
            if x - last_x >= 46.0 {
                writeln!(
                    out,
                    "<line class=\"tick\" x1=\"{x:.1}\" y1=\"{TOP:.0}\" x2=\"{x:.1}\" y2=\"{h:.0}\"/>\
                     <text class=\"time\" x=\"{x:.1}\" y=\"22\">{}</text>",
                    short_seconds(t)
                )
                .unwrap();
                last_x = x;
            }
            t += step_ns;
        }
        // Pause and crash bands.
        let mut since: Vec<(String, f64, &str)> = Vec::new();
        let mut bands: Vec<(String, f64, f64, &str)> = Vec::new();
        for (i, e) in events.iter().enumerate() {
            match e.kind.as_str() {
                world::PAUSE => since.push((e.node.clone(), self.x[i], "paused")),
                world::CRASH => since.push((e.node.clone(), self.x[i], "down")),
                world::RESUME | world::RESTART => {
                    if let Some(p) = since.iter().position(|(n, _, _)| *n == e.node) {
                        let (n, x0, what) = since.remove(p);
                        bands.push((n, x0, self.x[i], what));
                    }
                }
                _ => {}
            }
        }
        let last = self.x.last().copied().unwrap_or(LEFT);
        bands.extend(since.into_iter().map(|(n, x0, what)| (n, x0, last, what)));
        for (n, x0, x1, what) in bands {
            if let Some(y) = self.lane(&n) {
                writeln!(
                    out,
                    "<rect class=\"band {what}\" x=\"{x0:.1}\" y=\"{:.0}\" width=\"{:.1}\" height=\"{:.0}\"/>\
                     <text class=\"bandlabel\" x=\"{:.1}\" y=\"{:.0}\">{what}</text>",
                    y + 4.0,
                    (x1 - x0).max(2.0),
                    LANE - 8.0,
                    (x0 + x1) / 2.0,
                    y + LANE - 8.0
                )
                .unwrap();
            }
        }
        // Lease bars: believed (client lanes) and true (lock lanes, and
        // beside the belief on the client's lane).
        for bar in lease_bars(s.journal) {
            let x0 = self.x_at(bar.start_t_ns, events);
            let x1 = self.x_at(bar.end_t_ns, events).max(x0 + 2.0);
            let token = bar
                .token
                .map_or(format!("lease {}", bar.lease), |t| format!("token {t}"));
            let mut draw = |node: &str, dy: f64, class: &str, label: String, title: String| {
                if let Some(y) = self.lane(node) {
                    writeln!(
                        out,
                        "<g class=\"{class}\"><title>{}</title><rect x=\"{x0:.1}\" y=\"{:.0}\" width=\"{:.1}\" \
                         height=\"11\" rx=\"3\"/><text x=\"{:.1}\" y=\"{:.0}\">{}</text></g>",
                        esc(&title),
                        y + dy,
                        x1 - x0,
                        x0 + 4.0,
                        y + dy + 9.0,
                        esc(&fitting(&label, x1 - x0))
                    )
                    .unwrap();
                }
            };
            let span = format!(
                "{} → {} ({})",
                seconds(bar.start_t_ns),
                seconds(bar.end_t_ns),
                bar.how
            );
            if bar.at_lock {
                draw(
                    &bar.node,
                    20.0,
                    "held",
                    format!("{} {token}", bar.client),
                    format!("{} truly holds {token} at {}: {span}", bar.client, bar.node),
                );
                draw(
                    &bar.client,
                    28.0,
                    "held",
                    format!("holds {token} at {}", bar.node),
                    format!("the lock grants {} {token}: {span}", bar.client),
                );
            } else {
                let until = bar.until_local_ns.map(local_seconds).unwrap_or_default();
                draw(
                    &bar.node,
                    14.0,
                    "believed",
                    format!("believes {token} (until {until} on its clock)"),
                    format!(
                        "{} believes it holds {token} until {until} on its own clock: {span}",
                        bar.client
                    ),
                );
            }
        }
        // Messages.
        // Each message's first send, by id: a map, so that drawing the
        // arrows costs time linear in the journal (times a logarithm).
        let mut sent: BTreeMap<u64, usize> = BTreeMap::new();
        for (i, e) in events.iter().enumerate() {
            let Some(id) = e.u64(world::field::ID) else {
                continue;
            };
            match e.kind.as_str() {
                world::SEND => {
                    sent.entry(id).or_insert(i);
                }
                world::DELIVER | world::DROP => {
                    let Some(&si) = sent.get(&id) else {
                        continue;
                    };
                    let from = &events[si].node;
                    let to = if e.kind == world::DELIVER {
                        e.node.as_str()
                    } else {
                        e.str(world::field::TO).unwrap_or("")
                    };
                    let (Some(y0), Some(y1)) = (self.line(from), self.line(to)) else {
                        continue;
                    };
                    let (x0, x1) = (self.x[si], self.x[i]);
                    let msg = events[si].str(world::field::MSG).unwrap_or("");
                    if e.kind == world::DELIVER {
                        writeln!(
                            out,
                            "<line class=\"msg\" data-msg=\"{id}\" x1=\"{x0:.1}\" y1=\"{y0:.0}\" x2=\"{x1:.1}\" \
                             y2=\"{y1:.0}\" marker-end=\"url(#arrow)\"><title>{}</title></line>",
                            esc(&format!("message {id}: {msg} ({from} → {to})"))
                        )
                        .unwrap();
                    } else {
                        let (xm, ym) = ((x0 + x1) / 2.0, (y0 + y1) / 2.0);
                        writeln!(
                            out,
                            "<line class=\"msg lost\" data-msg=\"{id}\" x1=\"{x0:.1}\" y1=\"{y0:.0}\" x2=\"{xm:.1}\" \
                             y2=\"{ym:.0}\"><title>{}</title></line><text class=\"lostmark\" x=\"{xm:.1}\" \
                             y=\"{:.0}\">✗</text>",
                            esc(&format!("message {id}: {msg} ({from} → {to}), lost")),
                            ym + 5.0
                        )
                        .unwrap();
                    }
                }
                _ => {}
            }
        }
        // Events.
        for (i, e) in events.iter().enumerate() {
            let Some(y) = self.line(&e.node) else {
                continue;
            };
            let x = self.x[i];
            // An event the oracle points at is marked, whatever its kind.
            let finding = s.report.violations.iter().find(|v| v.seq == e.seq);
            let tone = if finding.is_some() { "bad" } else { tone(e) };
            let label = match finding {
                Some(v) => Some(format!("⚠ {}", v.kind)),
                None => label(e),
            };
            writeln!(
                out,
                "<circle class=\"ev {}\" data-seq=\"{i}\" cx=\"{x:.1}\" cy=\"{y:.0}\" r=\"{}\"><title>{}</title></circle>",
                tone,
                if e.kind == world::DELIVER || e.kind == world::SEND { 3 } else { 5 },
                esc(&format!("#{} {} {}: {}", e.seq, seconds(e.t_ns), e.node, super::lanes::describe(e)))
            )
            .unwrap();
            if let Some(label) = label {
                let dy = if i % 2 == 0 { 17.0 } else { 29.0 };
                writeln!(
                    out,
                    "<text class=\"label {}\" x=\"{x:.1}\" y=\"{:.0}\">{}</text>",
                    tone,
                    y + dy,
                    esc(&label)
                )
                .unwrap();
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
}

/// `label` if it fits in `width` px of bar text, else its first words that
/// do (bar labels read "believes token 34 (until …)": the token comes first).
fn fitting(label: &str, width: f64) -> String {
    let room = ((width - 8.0) / 5.6).max(0.0) as usize;
    let mut out = String::new();
    for word in label.split(' ') {
        let next = if out.is_empty() {
            word.to_owned()
        } else {
            format!("{out} {word}")
        };
        if next.chars().count() > room {
            break;
        }
        out = next;
    }
    out
}

/// A short label under the marker for the events a reader must not miss.
fn label(e: &Event) -> Option<String> {
    let token = e.u64("token").map_or(String::new(), |t| format!(" {t}"));
    Some(match e.kind.as_str() {
        events::GRANTED => format!("grant{token}"),
        events::ACQUIRED => format!("acquired{token}"),
        events::EXPIRED => "expired".to_owned(),
        events::WROTE => format!("write{token}"),
        events::ACCEPTED => format!("✓ accepted{token}"),
        events::REJECTED => format!("✗ REJECTED{token}"),
        world::PAUSE => "pause".to_owned(),
        world::RESUME => "resume".to_owned(),
        world::CRASH => "✗ crash".to_owned(),
        world::RESTART => "↻ restart".to_owned(),
        world::CLOCK => "clock".to_owned(),
        world::PARTITION => "✂ partition".to_owned(),
        world::HEAL => "healed".to_owned(),
        _ => return None,
    })
}

fn tone(e: &Event) -> &'static str {
    match e.kind.as_str() {
        events::REJECTED | world::CRASH | world::DROP => "bad",
        world::PAUSE
        | world::RESUME
        | world::CLOCK
        | world::PARTITION
        | world::LINK
        | events::EXPIRED
        | events::DENIED => "warn",
        events::ACQUIRED | events::GRANTED | events::ACCEPTED => "good",
        _ => "plain",
    }
}

/// A tick step (1, 2 or 5 × 10^k ms) giving at most about ten ticks.
fn tick_step(end_ns: u64) -> u64 {
    let target = (end_ns / 10).max(1);
    let mut base = 1_000_000u64;
    loop {
        for m in [1, 2, 5] {
            if base * m >= target {
                return base * m;
            }
        }
        base *= 10;
    }
}

fn short_seconds(ns: u64) -> String {
    let ms = ns / 1_000_000;
    if ms % 1000 == 0 {
        format!("{}s", ms / 1000)
    } else {
        format!("{}.{:03}s", ms / 1000, ms % 1000)
            .trim_end_matches('0')
            .to_owned()
    }
}

/// JSON safe inside `<script>`: `<` only occurs in strings, where `\u003c`
/// means the same.
fn script_json(json: &str) -> String {
    json.replace('<', "\\u003c")
}

/// The page's style (inlined: the page fetches nothing).
const CSS: &str = include_str!("timeline.css");

/// The page's script: the step controls and the `#selftest` walk.
const JS: &str = include_str!("timeline.js");
