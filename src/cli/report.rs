//! `fencesim report PATH… [--seed N] [--faults random|scenario] --out DIR
//! [--force]`: for every scenario under the paths, `NAME.md`, `NAME.html`,
//! `NAME.svg` (a printable lane diagram), `NAME.trace.json` and
//! `NAME.jsonl`, plus `index.html` and `index.md` linking them, and the
//! manifest `.fencesim-report` listing what it wrote.
//!
//! `NAME` is the scenario's name made a safe file stem
//! ([`files::file_stem`]). A file that exists and is not listed in the
//! manifest (a `README.md`, notes) is never replaced without `--force`, and
//! a link is never followed; every refusal is reported, before anything is
//! written, and makes the exit status 2.
//!
//! Everything written is byte-deterministic: no dates, no environment, the
//! scenario paths as given, and the repro command always spelled
//! `fencesim run FILE --seed N` (with `--faults random` when the reports
//! show the seeds as `explore` ran them).

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::check::collect;
use super::files::{self, file_stem, Replace, INDEX_FILES, MANIFEST};
use super::output::plural;
use super::step::replay_command;
use super::{load, FaultsArg, FaultsChoice, Replay, Status};
use crate::design::catalog::Registry;
use crate::escape;
use crate::explore::sweep::{self, FaultMode, Runs};
use crate::report::step::steps;
use crate::report::{html, markdown, perfetto, svg, Subject};
use crate::scenario::Scenario;

/// One scenario's line in the index.
struct Entry {
    name: String,
    file: String,
    description: String,
    verdict: &'static str,
    expectations: &'static str,
    events: usize,
    seed: u64,
    faults: FaultMode,
}

/// The most events × clients a report renders (20 million: 20 000 events
/// of 1 000 clients, 2 000 000 of 10): its pages follow every client
/// through every event, and a run of 1 000 clients at the event limit
/// would take hundreds of megabytes.
pub const MAX_EVENTS_BY_CLIENTS: u64 = 20_000_000;

/// `fencesim report`'s flags.
#[derive(clap::Args, Debug)]
pub(super) struct ReportArgs {
    /// Scenario files or directories.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Seed for every scenario (default: each scenario's `seed`).
    #[arg(long)]
    seed: Option<u64>,
    /// The directory to write into (created if missing).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Replace existing files even if an earlier `report` did not write
    /// them.
    #[arg(long)]
    force: bool,
    /// `random`: report each seed as `explore` ran it (the scenario's
    /// faults plus the seed's random schedule); `guided`: as a guided
    /// sweep ran it (with `--corpus`); `scenario`: only the
    /// scenario's own faults.
    #[arg(long, value_enum, default_value_t = FaultsArg::Scenario)]
    faults: FaultsArg,
    #[command(flatten)]
    replay: Replay,
}

pub(super) fn report(registry: &Registry, args: ReportArgs, runs: &Runs) -> Status {
    let ReportArgs {
        paths,
        seed,
        out,
        force,
        faults,
        replay,
    } = args;
    let (paths, out) = (&paths[..], out.as_path());
    let choice = FaultsChoice::new(faults, replay);
    let mut files = Vec::new();
    let mut status = Status::Ok;
    for path in paths {
        if let Err(e) = collect(path, &mut files) {
            eprintln!("error: {}: {e}", shown(path));
            status = status.max(Status::Invalid);
        }
    }
    if files.is_empty() {
        eprintln!("error: no scenario files (*.toml) found");
        return Status::Invalid;
    }
    if let Some(link) = files::link_in(out) {
        eprintln!(
            "error: --out {} goes through the symbolic link {}: fencesim does not write \
             through links; give the directory it points to",
            shown(out),
            shown(&link)
        );
        return Status::Invalid;
    }
    // Every scenario is loaded before anything is created: files that are
    // all invalid (or links, or devices) leave no directory behind.
    let mut loaded: Vec<Scenario> = Vec::new();
    for file in &files {
        match load(registry, file) {
            Some(scenario) => loaded.push(choice.scenario(scenario)),
            None => status = status.max(Status::Invalid),
        }
    }
    if loaded.is_empty() {
        eprintln!("error: no valid scenario to report: nothing written");
        return status;
    }
    if let Err(e) = std::fs::create_dir_all(out) {
        eprintln!("error: cannot create {}: {e}", shown(out));
        return Status::Invalid;
    }
    let owned = match files::manifest(out) {
        Ok(owned) => owned,
        Err(e) => {
            eprintln!("error: {e}");
            return Status::Invalid;
        }
    };
    let replace = if force { Replace::Force } else { Replace::Own };
    let may_write = |file_name: &str| {
        files::check_target(&out.join(file_name), replace, |_| owned.contains(file_name))
    };

    // First every scenario and the names of its files: clashes and files
    // the command may not replace are reported before anything is written.
    let mut planned: Vec<(Scenario, String)> = Vec::new();
    let mut taken: BTreeSet<String> = INDEX_FILES.iter().map(|f| f.to_ascii_lowercase()).collect();
    for scenario in loaded {
        let name = file_stem(&scenario.name);
        let names = outputs(&name);
        // Case-insensitively: `Figure.md` and `figure.md` are one file on
        // some file systems.
        if let Some(clash) = names
            .iter()
            .find(|n| taken.contains(&n.to_ascii_lowercase()))
        {
            let other = planned
                .iter()
                .find(|(_, other)| outputs(other).iter().any(|o| o.eq_ignore_ascii_case(clash)))
                .map_or("the index".to_owned(), |(s, _)| escape::terminal(&s.file));
            eprintln!(
                "error: {} and {other} both write {clash}",
                escape::terminal(&scenario.file)
            );
            status = status.max(Status::Invalid);
            continue;
        }
        if let Some(e) = names.iter().find_map(|n| may_write(n).err()) {
            eprintln!("error: {}: {e}", escape::terminal(&scenario.file));
            status = status.max(Status::Invalid);
            continue;
        }
        taken.extend(names.iter().map(|n| n.to_ascii_lowercase()));
        planned.push((scenario, name));
    }
    let index_refused = INDEX_FILES.iter().find_map(|n| may_write(n).err());
    if let Some(e) = &index_refused {
        eprintln!("error: the index: {e}");
        status = status.max(Status::Invalid);
    }

    // The manifest first: whatever is written next is known as ours.
    let mut manifest = owned.clone();
    for (_, name) in &planned {
        manifest.extend(outputs(name));
    }
    if index_refused.is_none() {
        manifest.extend(INDEX_FILES.iter().map(|f| f.to_string()));
    }
    let text = files::manifest_text(&manifest);
    if let Err(e) = files::write(&out.join(MANIFEST), text.as_bytes(), replace, |_| true) {
        eprintln!("error: {e}");
        return Status::Invalid;
    }

    // Each line is printed as its scenario is done, so the name column is
    // as wide as the longest planned name.
    let width = planned
        .iter()
        .map(|(_, name)| name.chars().count())
        .max()
        .unwrap_or(0);
    let mut entries: Vec<Entry> = Vec::new();
    for (scenario, name) in planned {
        let seed = seed.unwrap_or(scenario.seed);
        let Some(faults) = choice.mode(&scenario, runs) else {
            status = status.max(Status::Invalid);
            continue;
        };
        // The run a sweep makes of this seed, random faults and all.
        let (run, _) = sweep::run_seed_with(runs, &scenario, seed, faults.clone());
        // Checked before anything is rendered: the pages follow every
        // client through every event.
        let (events, clients) = (
            run.result.journal.len() as u64,
            scenario.clients.len() as u64,
        );
        if events * clients > MAX_EVENTS_BY_CLIENTS {
            eprintln!(
                "error: {}: its run (seed {seed}) has {events} events and {clients} clients; a \
                 report follows every client through every event, {} in all, more than \
                 {MAX_EVENTS_BY_CLIENTS}: lower its max_events or its clients, or read the \
                 journal with `run --trace FILE`",
                crate::escape::terminal(&scenario.file),
                events * clients
            );
            status = status.max(Status::Invalid);
            continue;
        }
        let repro = replay_command(&scenario.file, seed, &faults) + choice.generic_flag();
        let untested = run.untested();
        let description = described(&scenario, seed, &faults);
        let subject = Subject {
            name: &name,
            description: &description,
            seed,
            journal: &run.result.journal,
            report: &run.report,
            milestones: &run.milestones,
            nodes: &run.nodes,
            repro: &repro,
            untested: &untested,
        };
        let [md, html_file, svg_file, trace, jsonl] = outputs(&name);
        // Explained once for the Markdown and the HTML page.
        let steps = steps(subject.journal, subject.report);
        let outputs = [
            (md, markdown::page_with_steps(&subject, &steps)),
            (html_file, html::page_with_steps(&subject, &steps)),
            (svg_file, svg::figure(&subject)),
            (trace, perfetto::trace(&subject)),
            (jsonl, run.result.journal.to_jsonl()),
        ];
        for (file_name, text) in outputs {
            let own = |_: &Path| owned.contains(&file_name);
            if let Err(e) = files::write(&out.join(&file_name), text.as_bytes(), replace, own) {
                eprintln!("error: {e}");
                return Status::Invalid;
            }
        }
        let run_status: Status = run.status.into();
        status = status.max(run_status);
        println!(
            "{name:<width$}  {:<9}  {}",
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
            faults,
        });
    }
    if index_refused.is_none() {
        let shown_paths: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        // An absolute output directory is this machine's: the index names
        // it DIR, so that the same command gives the same bytes anywhere.
        let out_shown = if out.is_absolute() {
            "DIR".to_owned()
        } else {
            out.display().to_string()
        };
        let command = crate::repro::reproducible_report_command(&shown_paths, seed, &out_shown);
        for (file_name, text) in [
            ("index.md", index_md(&entries, &command)),
            ("index.html", index_html(&entries, &command)),
        ] {
            let own = |_: &Path| owned.contains(file_name);
            if let Err(e) = files::write(&out.join(file_name), text.as_bytes(), replace, own) {
                eprintln!("error: {e}");
                return Status::Invalid;
            }
        }
    }
    println!(
        "wrote {} to {}",
        plural(entries.len(), "scenario"),
        shown(out)
    );
    status
}

/// The scenario's description, and with `--faults random` the random
/// faults the seed added to its story (a reader of the report must not
/// take them for the scenario's own).
fn described(scenario: &Scenario, seed: u64, faults: &FaultMode) -> String {
    if *faults == FaultMode::Scenario {
        return scenario.description.clone();
    }
    let random = faults.schedule(scenario, seed);
    let added = if random.is_empty() {
        "no fault".to_owned()
    } else {
        random
            .iter()
            .map(crate::explore::shrink::words)
            .collect::<Vec<_>>()
            .join("; ")
    };
    format!(
        "{}\n\nThis run is seed {seed} as `explore` ran it: the scenario's faults plus \
         the random ones the seed drew: {added}.",
        scenario.description.trim_end()
    )
    .trim_start()
    .to_owned()
}

/// The five files of the report named `name`.
fn outputs(name: &str) -> [String; 5] {
    ["md", "html", "svg", "trace.json", "jsonl"].map(|ext| format!("{name}.{ext}"))
}

fn shown(path: &Path) -> String {
    escape::terminal(&path.display().to_string())
}

/// The index in Markdown; `command` is what wrote the directory.
fn index_md(entries: &[Entry], command: &str) -> String {
    let mut out = format!(
        "# fencesim reports\n\nGenerated by {}; run it again to regenerate.\n\n\
         | scenario | verdict | expectations | events | timeline | trace | journal | repro |\n\
         |---|---|---|--:|---|---|---|---|\n",
        escape::code_span(command)
    );
    for e in entries {
        writeln!(
            out,
            "| [{}]({n}.md) | {} | {} | {} | [html]({n}.html) | [perfetto]({n}.trace.json) | \
             [jsonl]({n}.jsonl) | {} |",
            escape::markdown(&e.name),
            e.verdict,
            e.expectations,
            e.events,
            // In a table, even a code span needs its `|` escaped (GFM).
            escape::code_span(&replay_command(&e.file, e.seed, &e.faults)).replace('|', "\\|"),
            n = e.name
        )
        .unwrap();
    }
    out
}

/// The index as a page; `command` is what wrote the directory.
fn index_html(entries: &[Entry], command: &str) -> String {
    let mut out = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>fencesim reports</title>\n<style>\
         body{font:15px/1.45 system-ui,sans-serif;margin:24px;color:#1d2330;background:#f7f8fa}\
         table{border-collapse:collapse;background:#fff}td,th{padding:6px 12px;border-bottom:1px solid #e3e6eb;\
         text-align:left;vertical-align:top}.safe{color:#175c2b;font-weight:600}\
         .violation{color:#8d1b12;font-weight:600}.desc{color:#5b6472;font-size:13px;max-width:640px}\
         code{font-size:12px}a{color:#1f5fbf}</style>\n</head>\n<body>\n<h1>fencesim reports</h1>\n\
         <p>One page per bundled scenario: a step-through timeline, Markdown with a sequence diagram, \
         a Perfetto trace and the journal.</p>\n",
    );
    writeln!(
        out,
        "<p>Generated by <code>{}</code>; run it again to regenerate.</p>",
        escape::html(command)
    )
    .unwrap();
    out.push_str(
        "<table>\n<tr><th>scenario</th><th>verdict</th><th>expectations</th><th>events</th>\
         <th>files</th><th>repro</th></tr>\n",
    );
    for e in entries {
        writeln!(
            out,
            "<tr><td><a href=\"{n}.html\">{n}</a><div class=\"desc\">{}</div></td>\
             <td class=\"{v}\">{v}</td><td>{}</td><td>{}</td><td><a href=\"{n}.html\">timeline</a> · \
             <a href=\"{n}.md\">markdown</a> · <a href=\"{n}.trace.json\">perfetto</a> · \
             <a href=\"{n}.jsonl\">jsonl</a></td><td><code>{}</code></td></tr>",
            escape::html(&e.description),
            e.expectations,
            e.events,
            escape::html(&replay_command(&e.file, e.seed, &e.faults)),
            n = escape::html(&e.name),
            v = e.verdict
        )
        .unwrap();
    }
    out.push_str("</table>\n</body>\n</html>\n");
    out
}
