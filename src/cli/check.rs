//! `fencesim check [PATH…]`: every scenario under the paths, run twice with
//! its own seed; the two traces must be identical. The first run has a
//! fresh thread, the second a thread that already ran another seed, so a
//! run that depends on what a thread keeps (std's hasher keys, a
//! thread-local) is caught as well as one that reads the host.

use std::path::{Path, PathBuf};

use sim::Outcome;

use super::{load, repro_command, Status};
use crate::design::catalog::Registry;
use crate::escape;
use crate::explore::sweep::Runs;
use crate::runner::ScenarioRun;

/// `fencesim check`'s flags.
#[derive(clap::Args, Debug)]
pub(super) struct CheckArgs {
    /// Scenario files or directories (default: scenarios/).
    paths: Vec<PathBuf>,
}

pub(super) fn check(registry: &Registry, args: CheckArgs, runs: &Runs) -> Status {
    let paths = &args.paths[..];
    let default = [PathBuf::from("scenarios")];
    let paths = if paths.is_empty() {
        &default[..]
    } else {
        paths
    };
    let mut files = Vec::new();
    let mut status = Status::Ok;
    for path in paths {
        if let Err(e) = collect(path, &mut files) {
            eprintln!(
                "error: {}: {e}",
                escape::terminal(&path.display().to_string())
            );
            status = status.max(Status::Invalid);
        }
    }
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    let mut invalid = Vec::new();
    for file in &files {
        let Some(scenario) = load(registry, file) else {
            invalid.push(file.display().to_string());
            continue;
        };
        let first = runs.run(&scenario, scenario.seed);
        let second = runs.config(scenario.seed).used_thread().run(&scenario);
        let deterministic = first.trace_hash() == second.trace_hash();
        let row_status = row_status(&first, deterministic);
        status = status.max(row_status);
        if row_status != Status::Ok {
            failures.push(failure(&scenario.file, &first, deterministic));
        }
        rows.push(Row {
            name: escape::terminal(&scenario.name),
            run: first,
            deterministic,
            status: row_status,
        });
    }
    print!("{}", escape::terminal_lines(&table(&rows, &invalid)));
    for f in &failures {
        println!("{}", escape::terminal_lines(f));
    }
    for file in &invalid {
        println!(
            "INVALID {}: not a valid scenario (its error is on stderr)",
            escape::terminal(file)
        );
    }
    if files.is_empty() && status == Status::Ok {
        eprintln!("error: no scenario files (*.toml) found");
        status = Status::Invalid;
    }
    // An invalid file is the user's to fix first, whatever else happened.
    if !invalid.is_empty() {
        status = Status::Invalid;
    }
    status
}

fn row_status(run: &ScenarioRun, deterministic: bool) -> Status {
    if !deterministic {
        Status::Internal
    } else {
        run.status.into()
    }
}

fn failure(file: &str, run: &ScenarioRun, deterministic: bool) -> String {
    let file = &escape::terminal(file);
    let mut why = Vec::new();
    if !deterministic {
        why.push("non-deterministic: two runs with the same seed gave different traces".to_owned());
    }
    if let Outcome::Crashed { .. } | Outcome::TimedOut { .. } = run.result.outcome {
        why.push(run.result.outcome.to_string());
    }
    for e in run.expectations.iter().filter(|e| !e.met()) {
        why.push(format!(
            "expected {} = {}, got {}",
            e.key, e.expected, e.actual
        ));
    }
    if run.report.verdict == crate::oracle::Verdict::Violation
        && run.status == crate::runner::RunStatus::Failed
        && run.expectations.iter().all(|e| e.met())
    {
        why.push("violation found".to_owned());
    }
    for reason in &run.inconclusive {
        why.push(format!("inconclusive: {reason}"));
    }
    let mark = if deterministic && run.status == crate::runner::RunStatus::Inconclusive {
        "INCONCLUSIVE"
    } else {
        "FAIL"
    };
    format!(
        "{mark} {file}: {}\n  repro: {}",
        why.join("; "),
        repro_command(file, run.result.seed)
    )
}

/// Adds `path` (a file) or every `*.toml` under it (a directory), sorted,
/// passing by hidden entries, `target/`, `Cargo.toml` and `Cargo.lock`.
/// A symbolic link is never followed: one given or found is added as it
/// is, for the loader to refuse, when it is named `*.toml` or points to a
/// directory (or to itself); other entries that are not directories are
/// added when named `*.toml` (the loader refuses a device or a pipe).
pub(super) fn collect(path: &Path, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    // `linkdir/` or `linkdir/.` would walk where the link points: refused
    // as a link is anywhere else.
    if let Some(link) = super::files::link_in(path) {
        if link.as_os_str() != path.as_os_str() {
            return Err(std::io::Error::other(format!(
                "goes through the symbolic link {}: fencesim reads only regular files \
                 and directories, never through a link",
                escape::terminal(&link.display().to_string())
            )));
        }
    }
    walk(path, files)
}

fn walk(path: &Path, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let meta = std::fs::symlink_metadata(path)?;
    if !meta.is_dir() {
        files.push(path.to_owned());
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    entries.sort();
    for entry in entries {
        if not_scenarios(&entry) {
            continue;
        }
        let named_toml = entry.extension().is_some_and(|x| x == "toml");
        let kind = std::fs::symlink_metadata(&entry)?.file_type();
        if kind.is_dir() {
            walk(&entry, files)?;
        } else if named_toml
            || (kind.is_symlink() && std::fs::metadata(&entry).map_or(true, |m| m.is_dir()))
        {
            files.push(entry);
        }
    }
    Ok(())
}

/// What a directory walk passes by: hidden entries (`.git`, `.cargo`), a
/// build's `target/`, and a crate's `Cargo.toml` and `Cargo.lock`, which sit
/// beside scenarios in a design crate and are never scenarios. A path
/// given by name is always read.
fn not_scenarios(entry: &Path) -> bool {
    let name = entry.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.starts_with('.') || matches!(name, "target" | "Cargo.toml" | "Cargo.lock")
}

struct Row {
    name: String,
    run: ScenarioRun,
    deterministic: bool,
    status: Status,
}

/// What the columns count, printed under the table: a reader who meets
/// `regress` or `determ.` for the first time should not need the docs.
const LEGEND: &str = "
stale     writes the storage accepted after it had accepted one under a newer grant
zombie    writes accepted after their grant ended while another client's grant was
          current (a violation only with strict = true)
accepted  writes the storage accepted
rejected  writes the storage refused (a fence, a failed compare-and-set)
regress   grants whose token was not greater than one the same lock node gave before
lost      increments the storage applied that the final value does not show
outcome   how the run ended: completed, stalled, time_limit, event_limit, crashed
          (a panic in a design) or timed_out (the run's wall-clock budget)
determ.   yes when the scenario's two runs with its seed traced alike
result    ok when the scenario's [expect] table held; FAIL, INCONCLUSIVE or ERROR else
";

fn table(rows: &[Row], invalid: &[String]) -> String {
    let header = [
        "scenario", "verdict", "stale", "zombie", "accepted", "rejected", "regress", "lost",
        "outcome", "determ.", "result",
    ];
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let rep = &r.run.report;
            vec![
                r.name.clone(),
                rep.verdict.as_str().to_owned(),
                rep.stale_writes.to_string(),
                rep.zombie_writes.to_string(),
                rep.accepted_writes.to_string(),
                rep.rejected_writes.to_string(),
                rep.token_regressions.to_string(),
                rep.lost_updates.to_string(),
                r.run.result.outcome.as_str().to_owned(),
                if r.deterministic { "yes" } else { "NO" }.to_owned(),
                match r.status {
                    Status::Ok => "ok",
                    Status::Failed => "FAIL",
                    Status::Inconclusive => "INCONCLUSIVE",
                    _ => "ERROR",
                }
                .to_owned(),
            ]
        })
        .chain(invalid.iter().map(|file| {
            let mut row = vec![file.clone()];
            row.resize(header.len() - 1, "-".to_owned());
            row.push("INVALID".to_owned());
            row
        }))
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in &cells {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cols: &[String]| {
        let mut s = String::new();
        for (i, (c, w)) in cols.iter().zip(&widths).enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            if i == 0 {
                s.push_str(&format!("{c:<w$}"));
            } else {
                s.push_str(&format!("{c:>w$}"));
            }
        }
        s.trim_end().to_owned() + "\n"
    };
    let mut out = line(&header.map(String::from));
    for row in &cells {
        out.push_str(&line(row));
    }
    let ok = rows.iter().filter(|r| r.status == Status::Ok).count();
    let inconclusive = rows
        .iter()
        .filter(|r| r.status == Status::Inconclusive)
        .count();
    let mut tail = Vec::new();
    if inconclusive > 0 {
        tail.push(format!("{inconclusive} inconclusive"));
    }
    if !invalid.is_empty() {
        tail.push(format!("{} invalid", invalid.len()));
    }
    let tail = if tail.is_empty() {
        String::new()
    } else {
        format!(" ({})", tail.join(", "))
    };
    let total = rows.len() + invalid.len();
    out.push_str(LEGEND);
    out.push_str(&format!("\n{ok} of {total} scenarios passed{tail}\n"));
    out
}
