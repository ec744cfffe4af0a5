//! `fencesim report PATH… [--seed N] --out DIR`: for every scenario under the
//! paths, `NAME.md`, `NAME.html`, `NAME.trace.json` and `NAME.jsonl`, plus
//! `index.html` and `index.md` linking them.
//!
//! Everything written is byte-deterministic: no dates, no environment, the
//! scenario paths as given, and the repro command always spelled
//! `fencesim run FILE --seed N`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use sim::Outcome;

use super::check::collect;
use super::{load, reproducible_command, Status};
use crate::design::catalog::Registry;
use crate::report::{html, markdown, perfetto, Subject};
use crate::runner;

/// One scenario's line in the index.
struct Entry {
    name: String,
    file: String,
    description: String,
    verdict: &'static str,
    expectations: &'static str,
    events: usize,
    seed: u64,
}

pub(super) fn report(
    registry: &Registry,
    paths: &[PathBuf],
    seed: Option<u64>,
    out: &Path,
) -> Status {
    let mut files = Vec::new();
    let mut status = Status::Ok;
    for path in paths {
        if let Err(e) = collect(path, &mut files) {
            eprintln!("error: {}: {e}", path.display());
            status = status.max(Status::Invalid);
        }
    }
    if files.is_empty() {
        eprintln!("error: no scenario files (*.toml) found");
        return Status::Invalid;
    }
    if let Err(e) = std::fs::create_dir_all(out) {
        eprintln!("error: cannot create {}: {e}", out.display());
        return Status::Invalid;
    }
    let mut entries: Vec<Entry> = Vec::new();
    for file in &files {
        let Some(scenario) = load(registry, file) else {
            status = status.max(Status::Invalid);
            continue;
        };
        let name = file_name(&scenario.name);
        if let Some(other) = entries.iter().find(|e| e.name == name) {
            eprintln!(
                "error: {} and {} both write reports named {name}",
                other.file, scenario.file
            );
            status = status.max(Status::Invalid);
            continue;
        }
        let seed = seed.unwrap_or(scenario.seed);
        let run = runner::run(&scenario, seed);
        let repro = reproducible_command(&scenario.file, seed);
        let subject = Subject {
            name: &name,
            description: &scenario.description,
            seed,
            journal: &run.result.journal,
            report: &run.report,
            nodes: &run.nodes,
            repro: &repro,
        };
        let outputs = [
            (format!("{name}.md"), markdown::page(&subject)),
            (format!("{name}.html"), html::page(&subject)),
            (format!("{name}.trace.json"), perfetto::trace(&subject)),
            (format!("{name}.jsonl"), run.result.journal.to_jsonl()),
        ];
        for (file_name, text) in outputs {
            let path = out.join(&file_name);
            if let Err(e) = std::fs::write(&path, text) {
                eprintln!("error: cannot write {}: {e}", path.display());
                return Status::Invalid;
            }
        }
        let run_status = match (&run.result.outcome, run.expectations_met) {
            (Outcome::Crashed { .. } | Outcome::TimedOut { .. }, _) => Status::Internal,
            (_, true) => Status::Ok,
            (_, false) => Status::Failed,
        };
        status = status.max(run_status);
        println!(
            "{name:<28} {:<9} {}",
            run.report.verdict.as_str(),
            if run.expectations_met {
                "expectations met"
            } else {
                "EXPECTATIONS FAILED"
            }
        );
        entries.push(Entry {
            name,
            file: scenario.file.clone(),
            description: scenario.description.clone(),
            verdict: run.report.verdict.as_str(),
            expectations: if run.expectations_met {
                "met"
            } else {
                "FAILED"
            },
            events: run.result.journal.len(),
            seed,
        });
    }
    for (file_name, text) in [
        ("index.md", index_md(&entries)),
        ("index.html", index_html(&entries)),
    ] {
        let path = out.join(file_name);
        if let Err(e) = std::fs::write(&path, text) {
            eprintln!("error: cannot write {}: {e}", path.display());
            return Status::Invalid;
        }
    }
    println!("wrote {} scenarios to {}", entries.len(), out.display());
    status
}

/// A scenario name as a file name: anything but letters, digits, `.`, `_`
/// and `-` becomes `_`.
fn file_name(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with('.') {
        format!("_{s}")
    } else {
        s
    }
}

fn index_md(entries: &[Entry]) -> String {
    let mut out = String::from(
        "# fencesim reports\n\nGenerated by `fencesim report`; regenerate with \
         `cargo run --release -- report scenarios --out reports`.\n\n\
         | scenario | verdict | expectations | events | timeline | trace | journal | repro |\n\
         |---|---|---|--:|---|---|---|---|\n",
    );
    for e in entries {
        writeln!(
            out,
            "| [{n}]({n}.md) | {} | {} | {} | [html]({n}.html) | [perfetto]({n}.trace.json) | \
             [jsonl]({n}.jsonl) | `{}` |",
            e.verdict,
            e.expectations,
            e.events,
            reproducible_command(&e.file, e.seed),
            n = e.name
        )
        .unwrap();
    }
    out
}

fn index_html(entries: &[Entry]) -> String {
    let mut out = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>fencesim reports</title>\n<style>\
         body{font:15px/1.45 system-ui,sans-serif;margin:24px;color:#1d2330;background:#f7f8fa}\
         table{border-collapse:collapse;background:#fff}td,th{padding:6px 12px;border-bottom:1px solid #e3e6eb;\
         text-align:left;vertical-align:top}.safe{color:#175c2b;font-weight:600}\
         .violation{color:#8d1b12;font-weight:600}.desc{color:#5b6472;font-size:13px;max-width:640px}\
         code{font-size:12px}a{color:#1f5fbf}</style>\n</head>\n<body>\n<h1>fencesim reports</h1>\n\
         <p>One page per bundled scenario: a step-through timeline, Markdown with a sequence diagram, \
         a Perfetto trace and the journal. Regenerate with \
         <code>cargo run --release -- report scenarios --out reports</code>.</p>\n\
         <table>\n<tr><th>scenario</th><th>verdict</th><th>expectations</th><th>events</th>\
         <th>files</th><th>repro</th></tr>\n",
    );
    for e in entries {
        writeln!(
            out,
            "<tr><td><a href=\"{n}.html\">{n}</a><div class=\"desc\">{}</div></td>\
             <td class=\"{v}\">{v}</td><td>{}</td><td>{}</td><td><a href=\"{n}.html\">timeline</a> · \
             <a href=\"{n}.md\">markdown</a> · <a href=\"{n}.trace.json\">perfetto</a> · \
             <a href=\"{n}.jsonl\">jsonl</a></td><td><code>{}</code></td></tr>",
            esc(&e.description),
            e.expectations,
            e.events,
            esc(&reproducible_command(&e.file, e.seed)),
            n = esc(&e.name),
            v = e.verdict
        )
        .unwrap();
    }
    out.push_str("</table>\n</body>\n</html>\n");
    out
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
