//! `NAME.html`: one self-contained page (inline CSS, JS and SVG; nothing
//! fetched) with a timeline of the run and controls to step through it.
//!
//! The SVG has a lane per node, in the lanes' order (the order of the
//! beliefs table too), time flowing right; the lanes' names sit in a column
//! of their own, so that they stay in view when the timeline scrolls. The time axis is **to scale**,
//! except that quiet stretches are cut: it opens at 4 px per ms (or more,
//! up to 64, until the run is about 1 000 px wide), and a stretch without
//! events wider than 160 px is drawn 64 px wide, shaded and labelled with
//! its length (`// 9.994s`); the caption under the
//! controls says the current scale. Zoom with the − and + buttons (keys `-`
//! and `+`), `0` shows the whole run to scale without cuts, `c` toggles the
//! cuts.
//!
//! On a client's lane a blue bar shows the lease it **believes** it holds,
//! and green ones, one row per lock node (redlock's five stack), the leases
//! the lock nodes **truly** grant it; a lock's own lane shows its grants.
//! Pauses and crashes are bands; messages are arrows from send to delivery
//! (a lost one ends in ✗). Labels are placed in up to three rows under
//! each lane's line and hidden where they would overlap (the marker keeps
//! its title). A cursor moves through the events with the buttons or the
//! keyboard (→/n next, ←/b back, v next violation, Home, End); each step
//! scrolls the timeline and the event table to the current event, and
//! shows its sentence and who believes what. The journal is embedded as
//! JSON (`<script id="journal" type="application/json">`).
//!
//! A crowd is drawn as the terminal lanes draw it: past
//! [`MAX_LANES`](super::lanes::MAX_LANES) lanes, the lock and storage nodes
//! and the first clients keep theirs and the other clients share one
//! (`990 more clients`), each label on it led by its client's name; the
//! beliefs table names the clients that believe or truly hold a lease or
//! are paused or down, and counts the others (`999 other clients`), as
//! `fencesim step` does.
//!
//! The page sets `data-step` on `<body>` and the title to the current step.
//! Opened with `#selftest`, it walks every step through the same handlers
//! as the buttons, checking after each one that the cursor and the event's
//! row are inside their scrolled boxes, and at every zoom that no two
//! labels overlap (over the browser's own element boxes); it writes
//! `selftest ok: …` (or what failed) into `#selftest-result`; script errors
//! are written into the page as `.script-error`. `.ci/browser-check.sh`
//! checks both in headless Chromium.

use std::fmt::Write as _;

use sim::events::WorldEvent as W;

use super::belief::{local_seconds, seconds, token_text, Beliefs, Believed};
use super::step::{steps, verdict_text, Step};
use super::Subject;
use crate::escape::html as esc;
use crate::oracle::Verdict;

mod layout;

pub(in crate::report) use layout::{bar_rows, label, lane_nodes, tone};
use layout::{Layout, CUT};

/// The page.
pub fn page(s: &Subject<'_>) -> String {
    page_with_steps(s, &steps(s.journal, s.report))
}

/// The page, with the steps of `s` already explained ([`steps`]), so that
/// `fencesim report` explains a long journal once for all its pages.
pub fn page_with_steps(s: &Subject<'_>, steps: &[Step]) -> String {
    assert_eq!(steps.len(), s.journal.len(), "one step per event");
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
         <a href=\"{name}.jsonl\">journal</a> · <a href=\"{name}.svg\">figure (SVG)</a> · <a href=\"index.html\">all scenarios</a></p>\n</header>\n",
        esc(s.name),
        esc(s.description.trim()),
        esc(&verdict_text(s.report)),
        esc(&s.milestones.reached_text()),
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
         <span class=\"zoom\"><button id=\"zoom-out\" title=\"-\">− zoom out</button>\
         <button id=\"zoom-in\" title=\"+\">+ zoom in</button>\
         <button id=\"zoom-whole\" title=\"0\">whole run to scale</button>\
         <button id=\"zoom-cuts\" title=\"c\" aria-pressed=\"true\">cut quiet stretches</button></span>\
         <span id=\"position\"></span></nav>\n\
         <section id=\"now\"><p id=\"phrase\"></p><p id=\"sentence\"></p>\
         <p id=\"findings\"></p><table id=\"beliefs\"></table></section>\n",
    );
    writeln!(
        out,
        "<p id=\"scale\">{}</p>",
        esc(&scale_text(layout.axis.px_per_ms(), true))
    )
    .unwrap();
    out.push_str("<div id=\"lanes-view\">");
    layout.names(&mut out);
    out.push_str("<div id=\"timeline\">");
    layout.svg(s, &mut out);
    out.push_str("</div></div>\n");
    out.push_str(LEGEND);
    out.push_str("<div id=\"events-box\"><table id=\"events\"><thead><tr><th>#</th><th>time</th><th>node</th><th>local clock</th><th>event</th></tr></thead><tbody>\n");
    // A step's phrase is the event described (`lanes::describe`).
    for (e, step) in s.journal.events().iter().zip(steps) {
        writeln!(
            out,
            "<tr data-seq=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            e.seq,
            e.seq,
            seconds(e.t_ns),
            esc(&e.node),
            local_seconds(e.local_ns),
            esc(&step.phrase)
        )
        .unwrap();
    }
    out.push_str("</tbody></table></div>\n<div id=\"selftest-result\"></div>\n");
    out.push_str("<script id=\"journal\" type=\"application/json\">");
    data(&mut out, s, &layout, steps);
    out.push_str("</script>\n<script>");
    out.push_str(JS);
    out.push_str("</script>\n</body>\n</html>\n");
    out
}

/// The embedded data: the journal (canonical JSON of every event) and, per
/// step, its cursor position, sentence and beliefs; written into `out` as
/// [`script_json`], one event and one step at a time, so that a long
/// journal never has a second copy, as a JSON tree or as text.
fn data(out: &mut String, s: &Subject<'_>, layout: &Layout, steps: &[Step]) {
    let mut chunk = String::new();
    out.push_str("{\"journal\":[");
    for (i, e) in s.journal.events().iter().enumerate() {
        if i > 0 {
            out.push_str(",\n");
        }
        chunk.clear();
        e.write_json(&mut chunk);
        push_script_json(out, &chunk);
    }
    out.push_str("],\n\"steps\":[");
    let mut beliefs = Beliefs::new(s.journal);
    for (i, (step, e)) in steps.iter().zip(s.journal.events()).enumerate() {
        beliefs.apply(e);
        let msg = match W::decode(e) {
            Ok(Some(W::Send { id, .. } | W::Deliver { id, .. } | W::Drop { id, .. })) => Some(id),
            _ => None,
        };
        // The keys in serde_json's order (sorted), as `json!` wrote them.
        chunk.clear();
        chunk.push_str(if i > 0 { ",{" } else { "{" });
        let fields: [(&str, String); 8] = [
            ("beliefs", to_json(&belief_rows(&beliefs, layout))),
            ("msg", to_json(&msg)),
            ("node", to_json(&step.node)),
            ("phrase", to_json(&step.phrase)),
            ("sentence", to_json(&step.sentence)),
            ("t", to_json(&seconds(step.t_ns))),
            ("violations", to_json(&step.violations)),
            ("x", to_json(&(layout.axis.x(e.t_ns).round() as i64))),
        ];
        for (k, (name, value)) in fields.iter().enumerate() {
            if k > 0 {
                chunk.push(',');
            }
            write!(chunk, "\"{name}\":{value}").unwrap();
        }
        chunk.push('}');
        push_script_json(out, &chunk);
    }
    let violations: Vec<u64> = s.report.violations.iter().map(|v| v.seq).collect();
    write!(out, "],\n\"violations\":{}}}", to_json(&violations)).unwrap();
}

/// `value` as compact JSON.
fn to_json<T: serde::Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).expect("report data serializes")
}

/// `[node, believes, truly]` for every client and `[lock, "", holder]` for
/// every lock node, in the lanes' order (a node without a lane last, in
/// order of appearance).
///
/// A crowd (clients sharing a lane) is summed up as `step` sums it up: a
/// row for each client that believes it holds a lease, truly holds one or
/// is paused or down, and one row counting the others (`990 other
/// clients`, holding nothing), so that a step costs the same for a
/// thousand clients as for ten.
fn belief_rows(b: &Beliefs, layout: &Layout) -> Vec<[String; 3]> {
    let view = b.view();
    let crowd = layout.shared_order() != usize::MAX;
    let clients: Vec<(&str, Option<&Believed>)> = if crowd {
        view.notable_clients()
    } else {
        b.clients().collect()
    };
    let mut rows: Vec<(usize, [String; 3])> = Vec::new();
    for &(client, believed) in &clients {
        let believes = match believed {
            Some(x) => format!(
                "lease {}{} until {} on its clock",
                x.lease,
                token_text(x.token),
                local_seconds(x.until_local_ns)
            ),
            None => "nothing".to_owned(),
        };
        let mut held: Vec<(&str, _)> = b
            .locks()
            .filter_map(|(lock, h)| h.filter(|h| h.client == client).map(|h| (lock, h)))
            .collect();
        held.sort_by_key(|(lock, _)| layout.order(lock));
        let truly: Vec<String> = held
            .into_iter()
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
        rows.push((layout.order(client), [client.to_owned(), believes, truly]));
    }
    let others = b.client_count() - clients.len();
    if crowd && others > 0 {
        let who = if clients.is_empty() { "" } else { "other " };
        let s = if others == 1 { "" } else { "s" };
        rows.push((
            layout.shared_order(),
            [
                format!("{others} {who}client{s}"),
                "nothing".to_owned(),
                "nothing".to_owned(),
            ],
        ));
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
        rows.push((layout.order(lock), [lock.to_owned(), String::new(), held]));
    }
    // Stable: rows of nodes without a lane keep their order.
    rows.sort_by_key(|(order, _)| *order);
    rows.into_iter().map(|(_, row)| row).collect()
}

/// Appends JSON made safe inside `<script>`: `<` only occurs in strings,
/// where `\u003c` means the same.
fn push_script_json(out: &mut String, json: &str) {
    let mut rest = json;
    while let Some(at) = rest.find('<') {
        out.push_str(&rest[..at]);
        out.push_str("\\u003c");
        rest = &rest[at + 1..];
    }
    out.push_str(rest);
}

/// What the time axis shows at `px_per_ms`, with or without cuts; the
/// page's script writes the same sentence when the reader zooms.
fn scale_text(px_per_ms: f64, cuts: bool) -> String {
    let ms_per_px = 1.0 / px_per_ms;
    let mut out = format!("time axis to scale: 1 px = {} ms", trim_float(ms_per_px));
    if cuts {
        write!(
            out,
            "; quiet stretches over {} ms are cut (//, labelled with their length)",
            trim_float(CUT.cut_px * ms_per_px)
        )
        .unwrap();
    } else {
        out.push_str("; nothing cut");
    }
    out.push_str(" · zoom: − and + (keys - and +), 0 for the whole run to scale, c to cut or keep quiet stretches");
    out
}

/// A float with at most 3 decimals, no trailing zeros.
fn trim_float(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// What every mark of the timeline means.
const LEGEND: &str = "<div id=\"legend\" class=\"legend\"><b>legend</b>\
<span><i class=\"key believed\"></i>lease the client believes it holds</span>\
<span><i class=\"key held\"></i>lease a lock node truly grants (one row per lock node)</span>\
<span><i class=\"key paused\"></i>paused</span><span><i class=\"key down\"></i>down</span>\
<span><i class=\"key cut\"></i>quiet stretch cut out of the axis</span>\
<span><i class=\"dot good\"></i>grant, acceptance</span><span><i class=\"dot warn\"></i>fault, expiry</span>\
<span><i class=\"dot bad\"></i>rejection, crash, loss, violation</span><span><i class=\"dot plain\"></i>other event</span>\
<span><i class=\"key arrow\"></i>message (✗ lost)</span><span><i class=\"key cursor\"></i>current event</span>\
<span>click an event or a row to jump to it</span></div>\n";

/// The page's style (inlined: the page fetches nothing).
const CSS: &str = include_str!("timeline.css");

/// The page's script: the step controls and the `#selftest` walk.
const JS: &str = include_str!("timeline.js");
